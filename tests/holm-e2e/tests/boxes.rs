//! Refusals through holmd, end to end: what a box does is the shared suite
//! (`core.rs`), run on every runtime.

use holm_proto::ErrorCode;
use holm_proto::host::{CreateBox, Placement};
use holm_testkit::{TestServer, e2e_enabled};

#[tokio::test]
async fn refusals_come_in_the_error_shape_and_change_nothing() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;

    // No token: refused, for every route but health.
    let anon = holm_client::Client::new(&server.url, None);
    anon.health().await.expect("health needs no token");
    let e = anon.create_box(&CreateBox::default(), None).await.unwrap_err();
    let api = e.api().expect("the error shape");
    assert_eq!(api.code, ErrorCode::Unauthorized);
    assert!(api.request_id.as_deref().is_some_and(|id| id.starts_with("req_")));
    let wrong = holm_client::Client::new(&server.url, Some("not-the-token-at-all"));
    assert_eq!(
        wrong.runtimes().await.unwrap_err().api().map(|e| e.code),
        Some(ErrorCode::Unauthorized)
    );

    // An unknown runtime: refused with the names the server has.
    let request = CreateBox {
        placement: Placement { runtime: Some("vmware".into()), ..Placement::default() },
        ..CreateBox::default()
    };
    let e = server.client.create_box(&request, None).await.unwrap_err();
    let api = e.api().expect("the error shape");
    assert_eq!(api.code, ErrorCode::UnknownRuntime);
    assert_eq!(api.details.as_ref().unwrap()["known"], serde_json::json!(["docker"]));
    assert!(api.hint.as_deref().unwrap().contains("docker"));

    // Unknown fields: each named.
    let http = holm_client::client_builder().build().unwrap();
    let r = http
        .post(format!("{}/v1/boxes", server.url))
        .bearer_auth(&server.token)
        .json(&serde_json::json!({"spec": {"screenz": 2}, "placement": {"ttl": 5}, "extra": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: serde_json::Value = r.json().await.unwrap();
    let paths: Vec<&str> = body["error"]["details"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["extra", "placement.ttl", "spec.screenz"]);

    // Nothing was created by any of it.
    assert!(server.client.all_boxes().await.unwrap().is_empty());
}
