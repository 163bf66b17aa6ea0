//! No secret reaches a log or a trace. The `holmd` binary at its most
//! verbose (`RUST_LOG=trace`, every crate) goes through a session that
//! uses every kind of secret holm has: the token (and a wrong one), the
//! server key, a vendor key, a box's secret, its bridge's secret before and
//! after rotation, bridge tickets (used, in their URL), an agent credential
//! (used and revoked), a viewer's token
//! (used, on the stream), `/mcp`, and a secret in the query of a forward
//! that fails (the box cut off its network). Then holmd's whole output, the
//! guest's (the box container's log), the box's traces as the API shows
//! them and every file of the store but the box's own record are searched
//! for each secret.

mod common;

use common::Holmd;
use holm_client::Client;
use holm_proto::viewer::{CreateViewer, ViewerMode};
use holm_testkit::{e2e_enabled, ensure_image, rfb};
use serde_json::json;

const TOKEN: &str = "scan-token-7d1c0e9f5a3b2c4d6e8f0a1b";
const WRONG_TOKEN: &str = "scan-wrong-token-51f0c3a9e7d2b6a4c8e0";
const SERVER_KEY: &str = "scan-server-key-0f1e2d3c4b5a69788796a5b4c3d2e1f0";
const VENDOR_KEY: &str = "scan-vendor-key-a9b8c7d6e5f4a3b2c1d0";

/// `(what, value)` for every secret `text` holds.
fn found<'a>(text: &str, secrets: &'a [(String, String)]) -> Vec<&'a str> {
    secrets.iter().filter(|(_, v)| text.contains(v.as_str())).map(|(w, _)| w.as_str()).collect()
}

/// The store's files, but the box records (`boxes/*.json`, which keep the
/// box secret by design: docs/security.md), as one text.
fn store_text(dir: &std::path::Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            text += &store_text(&path);
        } else if !(path.parent().is_some_and(|p| p.ends_with("boxes"))
            && path.extension().is_some_and(|e| e == "json"))
        {
            text += &String::from_utf8_lossy(&std::fs::read(&path).unwrap());
        }
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_a_log_or_a_trace() {
    if !e2e_enabled().await {
        return;
    }
    ensure_image().await;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // The Vercel runtime added below is pointed at a closed loopback port
    // (allowed): its key is used (a ping) without reaching a vendor.
    let runtimes = dir.path().join("runtimes.toml");
    std::fs::write(
        &runtimes,
        "[runtimes.vercel]\napi_url = \"http://127.0.0.1:1/api\"\nregistry_url = \"http://127.0.0.1:1\"\nallow_private_addresses = true\n",
    )
    .unwrap();
    let mut holmd = Holmd::start(
        dir.path(),
        &[
            ("HOLM_SERVER_CONFIG", runtimes.to_str().unwrap()),
            ("HOLM_SERVER_TOKEN", TOKEN),
            ("HOLM_SERVER_SECRET_KEY", SERVER_KEY),
            ("HOLM_STATE_DIR", state.to_str().unwrap()),
            ("HOLM_SERVER_RUNTIMES", "docker"),
            ("RUST_LOG", "trace"),
        ],
    )
    .await;
    let http = holm_client::client_builder().no_proxy().build().unwrap();
    let client = Client::new(&holmd.url, Some(TOKEN));
    let mut secrets: Vec<(String, String)> = [
        ("the token", TOKEN),
        ("a wrong token", WRONG_TOKEN),
        ("the server key", SERVER_KEY),
        ("a vendor key", VENDOR_KEY),
    ]
    .into_iter()
    .map(|(w, v)| (w.to_owned(), v.to_owned()))
    .collect();

    // A wrong token, in the header.
    let r = http.get(format!("{}/v1/boxes", holmd.url)).bearer_auth(WRONG_TOKEN).send().await;
    assert_eq!(r.unwrap().status(), 401);
    // A vendor key, sealed under the server key.
    let r = http
        .post(format!("{}/v1/runtimes", holmd.url))
        .bearer_auth(TOKEN)
        .json(&json!({"name": "vercel", "provider": "vercel",
            "fields": {"team_id": "team_holm", "project_id": "prj_holm"},
            "api_key": VENDOR_KEY}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());

    // A box, and its secret from its record.
    let info = client.create_box(&Default::default(), Some(600)).await.expect("a box");
    let id = info.id.clone();
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(state.join(format!("boxes/{id}.json"))).unwrap())
            .unwrap();
    let box_secret = record["secret"].as_str().expect("the record's secret").to_owned();
    secrets.push(("the box secret".into(), box_secret));
    let b = client.boxed(&id);
    let r = b.exec(&["echo", "hello"]).await.expect("exec");
    assert_eq!(r.stdout, "hello\n");

    // The bridge: its secret and a ticket, used; rotated, and used again.
    for rotate in [false, true] {
        let access =
            if rotate { b.rotate_bridge(Some(60)).await } else { b.bridge(Some(60)).await };
        let access = access.expect("bridge access");
        let auth = access.headers["Authorization"].trim_start_matches("Bearer ").to_owned();
        let ticket = access.ticket_url.rsplit('/').find(|s| !s.is_empty()).unwrap().to_owned();
        secrets.push((format!("a bridge secret (rotated: {rotate})"), auth.clone()));
        secrets.push((format!("a bridge ticket (rotated: {rotate})"), ticket));
        let r = http
            .get(format!("{}/json/version", access.http_url))
            .bearer_auth(&auth)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "the bridge secret opens the bridge");
        let r = http.get(format!("{}/json/version", access.ticket_url)).send().await.unwrap();
        assert_eq!(r.status(), 200, "the ticket opens the bridge");
    }

    // An agent credential, used on the guest, then revoked.
    let access = b.agent(Some(60)).await.expect("agent access");
    let credential = access.headers["Authorization"].trim_start_matches("Bearer ").to_owned();
    secrets.push(("an agent credential".into(), credential.clone()));
    let r =
        http.get(format!("{}/v1/info", access.url)).bearer_auth(&credential).send().await.unwrap();
    assert_eq!(r.status(), 200, "the agent credential opens the guest");
    b.revoke_agent().await.expect("revoke");
    let r =
        http.get(format!("{}/v1/info", access.url)).bearer_auth(&credential).send().await.unwrap();
    assert_eq!(r.status(), 401, "a revoked agent credential is refused");

    // A viewer URL, its token used on the stream.
    let grant = client
        .create_viewer(&id, &CreateViewer { mode: Some(ViewerMode::Control), ..Default::default() })
        .await
        .expect("a viewer");
    let (_, viewer_token) = grant.url.split_once("#token=").expect("the token after #");
    secrets.push(("a viewer token".into(), viewer_token.to_owned()));
    drop(rfb::open(&grant.url).await.expect("the viewer's stream"));

    // /mcp, with the token.
    let r = http
        .post(format!("{}/mcp", holmd.url))
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "scan", "version": "1"}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());

    // A forward that fails: its error is logged without the URL, whose
    // query may hold a secret (the review's L9). The box leaves its
    // network, so the guest cannot answer.
    let query_secret = "query-secret-probe-6b1e0c9d2a";
    secrets.push(("a query value".into(), query_secret.to_owned()));
    let out = std::process::Command::new("docker")
        .args(["network", "disconnect", holm::runtime::firewall::BOXES])
        .arg(holm::runtime::docker::container_name(&id))
        .output()
        .expect("docker network disconnect");
    assert!(out.status.success(), "{out:?}");
    let r = http
        .get(format!("{}/v1/boxes/{id}/files/content?path=/{query_secret}", holmd.url))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_server_error(), "the guest is cut off: {}", r.status());
    let log = holmd.log_text();
    assert!(log.contains("the guest did not answer"), "the failed forward is logged");

    // What the guest wrote, the traces, then the box goes and holmd stops
    // (writing its store).
    let guest = std::process::Command::new("docker")
        .args(["logs", &format!("holm-{id}")])
        .output()
        .expect("docker logs");
    let guest_log = String::from_utf8_lossy(&guest.stdout).into_owned()
        + &String::from_utf8_lossy(&guest.stderr);
    let traces = serde_json::to_string(&client.all_traces(&id).await.expect("traces")).unwrap();
    client.remove_box(&id).await.expect("remove");
    assert!(holmd.stop().success(), "holmd stops cleanly");
    let log = holmd.log_text();

    // The scan means something: each text is there and holds the session.
    assert!(log.contains("TRACE") && log.contains("holmd is listening"), "{log}");
    assert!(log.contains(&id) && log.lines().count() > 100, "{}", log.lines().count());
    assert!(guest_log.lines().count() > 5, "the guest's log: {guest_log}");
    assert!(
        traces.contains("/bridge") && traces.contains("/agent") && traces.contains("/commands/run"),
        "{traces}"
    );
    assert_eq!(secrets.len(), 12, "every secret of the session is looked for");
    for (what, value) in &secrets {
        assert!(value.len() >= 16, "{what} is too short to search for: {value:?}");
    }
    let store = store_text(&state);
    assert!(store.contains(&id), "the store has the box's traces");
    for (what, text) in [
        ("holmd's log", &log),
        ("the guest's log", &guest_log),
        ("the traces", &traces),
        ("the store", &store),
    ] {
        let leaked = found(text, &secrets);
        assert!(leaked.is_empty(), "{what} holds {leaked:?}");
    }
}
