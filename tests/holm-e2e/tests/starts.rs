//! Fast starts on Docker, end to end.
//!
//! Warm pools: a pool of one box with Chromium, made by a server whose
//! runtimes file asks for it. A matching create claims the pooled box: the
//! box and bridge secrets it had stop working, its lifetime starts at the
//! claim, its labels are the create's, its viewers get a new key and its
//! name, the pool refills, a create whose viewers bind to every interface
//! takes no pooled box, and a restarted server takes the pooled box back.
//! A pool works on each container runtime (Docker, podman, gVisor): it
//! fills, a matching create claims its box, the secrets it had stop
//! working, and it refills.
//!
//! `ready: desktop`: the box runs once the desktop answers, and page tools
//! answer `not_ready` with a retry hint until Chromium is up (held back by
//! the test until it says so: [`HeldBrowser`]).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use holm::runtime::Endpoint;
use holm_client::BoxClient;
use holm_proto::ErrorCode;
use holm_proto::host::{BoxInfo, BoxSpec, BoxState, CreateBox, Placement};
use holm_proto::viewer::{ViewerBind, ViewerPolicy};
use holm_testkit::matrix::Target;
use holm_testkit::twisted::{HeldBrowser, RELEASE_BROWSER, Twisted};
use holm_testkit::{TestServer, e2e_enabled, eventually};

/// The pool's spec, and what a matching create asks for.
const POOL: &str = "[runtimes.docker]\n[[runtimes.docker.pool]]\nsize = 1\nscreens = 1\n";

/// The boxes a warm pool holds, as `holm ls --all` lists them.
async fn pooled(server: &TestServer) -> Vec<BoxInfo> {
    let all = server.client.every_box(true).await.expect("list with all");
    all.into_iter().filter(|b| b.state == BoxState::Pooled).collect()
}

async fn one_pooled(server: &TestServer, not: Option<&str>) -> BoxInfo {
    eventually(Duration::from_secs(300), "a box waiting in the pool", || async {
        pooled(server).await.into_iter().find(|b| Some(b.id.as_str()) != not)
    })
    .await
}

/// A stored record's field, read the way only the server can.
fn record_of(server: &TestServer, id: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(server.state_dir.join(format!("boxes/{id}.json")))
        .expect("the pooled box's record");
    serde_json::from_str(&text).expect("a record")
}

async fn bridge_status(bridge: &Endpoint, secret: &str) -> reqwest::StatusCode {
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let url = bridge.join("/json/version");
    http.get(url).bearer_auth(secret).send().await.expect("the bridge answers").status()
}

#[tokio::test]
async fn a_matching_create_claims_a_pooled_box_with_fresh_secrets_and_the_pool_refills() {
    if !e2e_enabled().await {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("runtimes.toml");
    std::fs::write(&file, POOL).unwrap();
    let mut server = TestServer::start_with(|c| c.config_file = Some(file.clone())).await;

    // The pool fills, and agents never see its box.
    let waiting = one_pooled(&server, None).await;
    assert!(server.client.all_boxes().await.unwrap().is_empty(), "agents see no pooled box");
    let e = server.client.get_box(&waiting.id, None).await.unwrap_err();
    assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::NotFound), "{e}");

    // What anyone could have held before the claim.
    let record = record_of(&server, &waiting.id);
    let endpoint: Endpoint = serde_json::from_value(record["guest"].clone()).unwrap();
    let bridge: Endpoint = serde_json::from_value(record["bridge"].clone()).unwrap();
    let old_secret = record["secret"].as_str().unwrap().to_owned();
    let old_bridge = record["bridge_secret"].as_str().unwrap().to_owned();
    let old = BoxClient::at(&endpoint, &old_secret);
    old.info().await.expect("the old secret works before the claim");
    let before = eventually(Duration::from_secs(120), "the pooled bridge", || async {
        Some(bridge_status(&bridge, &old_bridge).await).filter(|s| s.is_success())
    })
    .await;
    assert!(before.is_success());

    // The claim comes later than the pooled box was made.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let asked = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    let request = CreateBox {
        spec: BoxSpec {
            name: Some("claimed".into()),
            labels: BTreeMap::from([("team".into(), "perf".into())]),
            ..BoxSpec::default()
        },
        placement: Placement { expires_after_secs: Some(600), ..Placement::default() },
    };
    let claimed = server.client.create_box(&request, Some(60)).await.expect("create");
    assert_eq!(claimed.id, waiting.id, "the create took the pooled box");
    assert_eq!(claimed.state, BoxState::Running);
    assert_eq!(claimed.spec.labels.get("team").map(String::as_str), Some("perf"));
    assert_eq!(claimed.spec.name.as_deref(), Some("claimed"));

    // Its lifetime starts at the claim.
    let now = record_of(&server, &claimed.id);
    let created = now["created_at"].as_u64().unwrap();
    assert!(created >= asked, "created {created}, asked at {asked}");
    assert_eq!(now["expires_at"].as_u64().unwrap() - created, 600);
    assert!(created > record["created_at"].as_u64().unwrap(), "a new clock at the claim");
    assert!(now.get("pool").is_none(), "no longer in a pool: {now}");
    assert_ne!(now["viewer_key"], record["viewer_key"], "a new viewer key at the claim");

    // Nothing issued before the claim works after it.
    let e = old.info().await.unwrap_err();
    assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::Unauthorized), "{e}");
    assert_eq!(bridge_status(&bridge, &old_bridge).await, reqwest::StatusCode::UNAUTHORIZED);
    // What the owner gets works.
    let b = server.client.boxed(&claimed.id);
    let out = b.exec(&["echo", "mine"]).await.expect("exec through the server");
    assert_eq!(out.stdout.trim(), "mine");
    let access = b.bridge(None).await.expect("bridge access");
    let header = access.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("authorization"));
    let new_bridge = header.expect("the bridge header").1.trim_start_matches("Bearer ").to_owned();
    assert_ne!(new_bridge, old_bridge);
    assert!(bridge_status(&bridge, &new_bridge).await.is_success());
    // Its viewers show the owner's name.
    let view = &server.client.get_box(&claimed.id, None).await.unwrap().viewers[0].view_url;
    let session = holm_testkit::desk::viewer_session(view).await;
    assert_eq!(session["title"], "claimed", "{session}");
    // The box secret is the server's: no caller sets it through the server.
    let put = reqwest::Client::new()
        .put(format!("{}/v1/boxes/{}/secret", server.url, claimed.id))
        .bearer_auth(&server.token)
        .json(&serde_json::json!({ "secret": "x".repeat(40) }))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), reqwest::StatusCode::NOT_FOUND);

    // The pool refills; a create whose viewers bind to every interface
    // takes no pooled box (the pooled box's port is on loopback).
    let refilled = one_pooled(&server, Some(&claimed.id)).await;
    let any = CreateBox {
        spec: BoxSpec {
            policy: Some(ViewerPolicy {
                bind: ViewerBind::Any,
                advertise: Some("127.0.0.1".into()),
                ..ViewerPolicy::default()
            }),
            ..BoxSpec::default()
        },
        placement: Placement { expires_after_secs: Some(600), ..Placement::default() },
    };
    let own = server.client.create_box(&any, Some(120)).await.expect("create with bind: any");
    assert_ne!(own.id, refilled.id, "a box of its own");
    server.client.remove_box(&own.id).await.expect("remove");
    // A restarted server takes the pooled box back.
    server.restart().await;
    let back = eventually(Duration::from_secs(120), "the pooled box taken back", || async {
        pooled(&server).await.into_iter().find(|b| b.id == refilled.id)
    })
    .await;
    assert_eq!(back.state, BoxState::Pooled);
    let again = server.client.get_box(&claimed.id, None).await.unwrap();
    assert_eq!(again.state, BoxState::Running);
    assert_eq!(server.client.every_box(true).await.unwrap().len(), 2, "nothing made twice");
}

holm_testkit::suite!(
    a_pool_fills_on_each_runtime_and_its_claimed_box_has_fresh_secrets:
    docker [x11], podman [x11], docker_runsc [x11],
);

async fn a_pool_fills_on_each_runtime_and_its_claimed_box_has_fresh_secrets(target: Target) {
    // The target's runtime, with a pool of one box of the default spec.
    let name = target.runtime_name();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pooled.toml");
    let text = format!("{}[[runtimes.{name}.pool]]\nsize = 1\n", target.runtimes_file());
    std::fs::write(&file, text).unwrap();
    let server = target.server_with(|c| c.config_file = Some(file.clone())).await;

    // The pool fills on this runtime, and agents never see its box.
    let waiting = one_pooled(&server, None).await;
    assert_eq!(waiting.runtime, name, "pooled on the target's runtime");
    assert!(server.client.all_boxes().await.unwrap().is_empty(), "agents see no pooled box");
    let record = record_of(&server, &waiting.id);
    let endpoint: Endpoint = serde_json::from_value(record["guest"].clone()).unwrap();
    let bridge: Endpoint = serde_json::from_value(record["bridge"].clone()).unwrap();
    let old_secret = record["secret"].as_str().unwrap().to_owned();
    let old_bridge = record["bridge_secret"].as_str().unwrap().to_owned();
    let old = BoxClient::at(&endpoint, &old_secret);
    old.info().await.expect("the pooled secret works before the claim");
    eventually(Duration::from_secs(120), "the pooled bridge", || async {
        Some(bridge_status(&bridge, &old_bridge).await).filter(|s| s.is_success())
    })
    .await;

    // A matching create on the runtime claims it.
    let request = target.request(
        BoxSpec { name: Some("claimed".into()), ..BoxSpec::default() },
        Placement { expires_after_secs: Some(600), ..Placement::default() },
    );
    let claimed = server.client.create_box(&request, Some(60)).await.expect("create");
    assert_eq!(claimed.id, waiting.id, "the create took the pooled box");
    assert_eq!(claimed.state, BoxState::Running, "{claimed:?}");
    assert_eq!(claimed.runtime, name);

    // Nothing issued before the claim works after it; the owner's does.
    let e = old.info().await.unwrap_err();
    assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::Unauthorized), "{e}");
    assert_eq!(bridge_status(&bridge, &old_bridge).await, reqwest::StatusCode::UNAUTHORIZED);
    let b = server.client.boxed(&claimed.id);
    let out = b.exec(&["echo", "mine"]).await.expect("exec through the server");
    assert_eq!(out.stdout.trim(), "mine");
    let access = b.bridge(None).await.expect("bridge access");
    let header = access.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("authorization"));
    let new_bridge = header.expect("the bridge header").1.trim_start_matches("Bearer ").to_owned();
    assert!(bridge_status(&bridge, &new_bridge).await.is_success());

    // The pool refills on the same runtime.
    let refilled = one_pooled(&server, Some(&claimed.id)).await;
    assert_eq!(refilled.runtime, name);
    server.client.remove_box(&claimed.id).await.expect("remove");
}

#[tokio::test]
async fn ready_desktop_runs_before_chromium_and_page_tools_say_not_ready_until_it_is_up() {
    if !e2e_enabled().await {
        return;
    }
    // Chromium in this runtime's boxes waits for the test's word: the
    // moment between the desktop answering and Chromium being up lasts until
    // the test ends it, so page tools are seen refusing every time.
    let server = TestServer::start_on(Arc::new(Twisted::with(HeldBrowser))).await;
    let request = CreateBox {
        spec: BoxSpec { ready: Some(holm_proto::host::Ready::Desktop), ..BoxSpec::default() },
        placement: Placement::default(),
    };
    let info = server.client.create_box(&request, Some(300)).await.expect("create");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    let b = server.client.boxed(&info.id);
    // The desktop is usable at once, with Chromium not yet started.
    let shot = b.screenshot(0, &Default::default()).await.expect("a screenshot at running");
    assert!(!shot.bytes.is_empty());
    // Page tools answer not_ready, with a hint to retry, while Chromium is
    // held back...
    for _ in 0..3 {
        let e = b.tabs().await.expect_err("page tools before Chromium is up");
        let api = e.api().unwrap_or_else(|| panic!("an API error, not {e}"));
        assert_eq!(api.code, ErrorCode::NotReady, "{api:?}");
        assert!(api.hint.as_deref().is_some_and(|h| h.contains("retry")), "{api:?}");
    }
    // ...and work once it is up.
    b.write_file(RELEASE_BROWSER, "go", None).await.expect("release Chromium");
    let tabs = eventually(Duration::from_secs(120), "Chromium up once released", || async {
        match b.tabs().await {
            Ok(tabs) => Some(tabs),
            Err(e) => {
                let api = e.api().unwrap_or_else(|| panic!("an API error, not {e}"));
                assert_eq!(api.code, ErrorCode::NotReady, "{api:?}");
                None
            }
        }
    })
    .await;
    assert!(!tabs.is_empty());
    server.client.remove_box(&info.id).await.unwrap();
}
