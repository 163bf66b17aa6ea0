//! The registry of remote runtimes through the real REST API of a real
//! holmd: add, set, replace, remove; keys sealed at rest and never in a
//! response or a log line (every log line of this test process is captured
//! and scanned); refusal without a server key; `unavailable` after the
//! server key changes; a box on a vendor without an adapter refused before
//! anything starts; `HOLM_SERVER_SANDBOXES`.
//!
//! No box starts and no host runtime is offered, so Docker is not needed.

use std::io::Write;
use std::sync::{Arc, Mutex};

use holm_proto::ErrorCode;
use holm_proto::host::{
    AddRuntime, ChangeRuntime, CreateBox, Place, Placement, ReplaceRuntime, RuntimeState,
};
use holm_testkit::TestServer;
use serde_json::{Value, json};

const KEY_1: &str = "e2b_first_key_0f9a8b7c6d5e4f3a2b1c";
const KEY_2: &str = "e2b_second_key_aa11bb22cc33dd44ee55";
const KEY_3: &str = "vercel_token_zz99yy88xx77ww66vv55";
const ENV_KEY: &str = "e2b_env_key_1234567890abcdefabcdef";
const SERVER_KEY_A: &str = "server-key-a-0123456789abcdef0123456789abcdef";
const SERVER_KEY_B: &str = "server-key-b-fedcba9876543210fedcba9876543210";

/// Every log line of this process.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

fn capture_logs() -> Logs {
    let logs = Logs::default();
    let writer = logs.clone();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("trace"))
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .init();
    logs
}

/// A raw call, answering the status and the body as text.
async fn call(server: &TestServer, method: &str, path: &str, body: Option<Value>) -> (u16, String) {
    let http = reqwest::Client::new();
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut rb = http.request(method, format!("{}{path}", server.url)).bearer_auth(&server.token);
    if let Some(b) = body {
        rb = rb.json(&b);
    }
    let r = rb.send().await.expect("the server answers");
    (r.status().as_u16(), r.text().await.unwrap())
}

fn no_key_in(text: &str, what: &str) {
    for key in [KEY_1, KEY_2, KEY_3, ENV_KEY, SERVER_KEY_A, SERVER_KEY_B] {
        assert!(!text.contains(key), "a key is in {what}: {text}");
    }
}

/// The runtimes `vercel` and `modal` point at a closed loopback port (the
/// runtimes file sets a vendor's endpoints on the runtime named after it,
/// and allows that private address): nothing here reaches a vendor, and
/// they are unavailable.
const CLOSED_VENDORS: &str = "[runtimes.vercel]\napi_url = \"http://127.0.0.1:1/api\"\nregistry_url = \"http://127.0.0.1:1\"\nallow_private_addresses = true\n\
     [runtimes.modal]\nserver_url = \"http://127.0.0.1:1\"\nallow_private_addresses = true\n";

async fn start(secret_key: Option<&str>) -> TestServer {
    let secret_key = secret_key.map(str::to_owned);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("runtimes.toml");
    std::fs::write(&file, CLOSED_VENDORS).unwrap();
    let mut server = TestServer::start_without_image(move |c| {
        c.runtimes = Some(Vec::new());
        c.secret_key = secret_key;
        c.config_file = Some(file);
    })
    .await;
    server.keep(dir);
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_keeps_keys_sealed_and_never_shows_them() {
    let logs = capture_logs();
    let mut server = start(Some(SERVER_KEY_A)).await;
    let client = server.client.clone();
    let mut responses = String::new();

    // Add, with the key in the body only.
    // Vercel at a closed loopback port: nothing here reaches a vendor.
    let add = AddRuntime {
        name: "vercel".into(),
        provider: "vercel".into(),
        fields: [
            ("team_id".to_owned(), json!("team_holm")),
            ("project_id".to_owned(), json!("prj_holm")),
        ]
        .into(),
        api_key: Some(KEY_1.into()),
    };
    let info = client.add_runtime(&add).await.expect("add");
    responses += &serde_json::to_string(&info).unwrap();
    assert_eq!(info.name, "vercel");
    assert_eq!(info.place, Place::Remote);
    assert_eq!(info.state, RuntimeState::Unavailable);
    assert!(info.reason.as_deref().unwrap().contains("cannot connect"), "{info:?}");
    assert_eq!(info.secrets, ["api_key"]);
    assert_eq!(info.key_version, Some(1));
    assert!(!info.can.pause && !info.can.stop && !info.can.browser_profile, "{:?}", info.can);
    assert!(!format!("{add:?}").contains(KEY_1), "Debug hides the key");

    // Listed and shown, without the key.
    for path in ["/v1/runtimes", "/v1/runtimes/vercel"] {
        let (status, body) = call(&server, "GET", path, None).await;
        assert_eq!(status, 200, "{body}");
        assert!(
            body.contains("\"vercel\"") && body.contains("\"secrets\":[\"api_key\"]"),
            "{body}"
        );
        responses += &body;
    }

    // The images are listed beside it (a remote runtime that does not
    // answer has none).
    let (status, body) = call(&server, "GET", "/v1/images", None).await;
    assert_eq!(status, 200, "{body}");

    // Sealed at rest: the store's file holds no key.
    let stored = std::fs::read_dir(server.state_dir.join("runtimes"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect::<String>();
    assert!(stored.contains("\"vercel\"") && stored.contains("c20p2:"), "{stored}");
    no_key_in(&stored, "the store");

    // A box on it is refused before anything starts.
    let create = CreateBox {
        placement: Placement { runtime: Some("vercel".into()), ..Placement::default() },
        ..CreateBox::default()
    };
    let e = client.create_box(&create, None).await.unwrap_err().to_api_error();
    assert_eq!(e.code, ErrorCode::Unavailable, "{e:?}");
    assert!(e.message.contains("cannot connect"), "{e:?}");
    assert!(e.request_id.is_some());
    assert!(client.list_boxes(None, None).await.unwrap().data.is_empty());

    // Refusals, each naming what is wrong.
    let refusals: &[(Value, u16, &str)] = &[
        (json!({"name": "eng", "provider": "docker", "api_key": "x"}), 400, "is a host engine"),
        (
            json!({"name": "eng", "provider": "e2b", "api_key": "x", "fields": {"program": "/bin/sh"}}),
            400,
            "e2b takes no field \\\"program\\\"",
        ),
        (
            json!({"name": "eng", "provider": "e2b", "api_key": "x", "fields": {"socket": "/var/run/docker.sock"}}),
            400,
            "fields.socket",
        ),
        (
            json!({"name": "eng", "provider": "e2b", "api_key": "x", "fields": {"api_url": "https://127.0.0.1:8443"}}),
            400,
            "not a public address",
        ),
        (
            json!({"name": "eng", "provider": "e2b", "api_key": "x", "fields": {"api_url": "https://localhost"}}),
            400,
            "not a public address",
        ),
        (
            json!({"name": "eng", "provider": "e2b", "api_key": "x", "fields": {"api_url": "https://10.0.0.1"}}),
            400,
            "not a public address",
        ),
        (
            json!({"name": "eng", "provider": "daytona", "api_key": "x", "fields": {"api_url": "http://api.example.com"}}),
            400,
            "must use https",
        ),
        (json!({"name": "eng", "provider": "vercel", "api_key": "x"}), 400, "fields.team_id"),
        (json!({"name": "eng", "provider": "e2b"}), 400, "the vendor's key is needed"),
        (json!({"name": "docker", "provider": "e2b", "api_key": "x"}), 403, "is a host runtime"),
        (json!({"name": "vercel", "provider": "e2b", "api_key": "x"}), 409, "already"),
        (
            json!({"name": "Bad Name", "provider": "e2b", "api_key": "x"}),
            400,
            "is not a runtime name",
        ),
        (
            json!({"name": "eng", "provider": "e2b", "api_key": "x", "engine": "docker"}),
            400,
            "engine",
        ),
    ];
    for (body, status, want) in refusals {
        let (got, text) = call(&server, "POST", "/v1/runtimes", Some(body.clone())).await;
        assert_eq!(got, *status, "{body}: {text}");
        assert!(text.contains(want), "{body}: want {want:?} in {text}");
        assert!(text.contains("\"request_id\""), "{text}");
    }
    assert_eq!(client.runtimes().await.unwrap().len(), 1, "no refusal added anything");

    // Set a field; then replace the key: the next key version.
    let set = ChangeRuntime {
        fields: [("max_lifetime_secs".to_owned(), json!(86400))].into(),
        api_key: None,
    };
    let info = client.change_runtime("vercel", &set).await.unwrap();
    assert_eq!((info.max_lifetime_secs, info.key_version), (86400, Some(1)));
    assert_eq!(info.fields["team_id"], json!("team_holm"), "other fields stay");
    let rotate = ChangeRuntime { api_key: Some(KEY_2.into()), ..ChangeRuntime::default() };
    let info = client.change_runtime("vercel", &rotate).await.unwrap();
    assert_eq!(info.key_version, Some(2));
    responses += &serde_json::to_string(&info).unwrap();
    let (status, text) = call(
        &server,
        "PATCH",
        "/v1/runtimes/vercel",
        Some(json!({"fields": {"lifetime_secs": 5}})),
    )
    .await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("fields.lifetime_secs") && text.contains("at least 60"), "{text}");
    let (status, text) =
        call(&server, "PATCH", "/v1/runtimes/nowhere", Some(json!({"fields": {}}))).await;
    assert_eq!(status, 404, "{text}");

    // The stored key never goes to a new address: changing an endpoint
    // without the key again is refused, and changes nothing (the review's
    // M4 probe points api_url at a request catcher).
    let before = client.runtime("vercel").await.unwrap();
    for field in ["api_url", "registry_url"] {
        let body = json!({"fields": {field: "https://catcher.example.com"}});
        let (status, text) = call(&server, "PATCH", "/v1/runtimes/vercel", Some(body)).await;
        assert_eq!(status, 400, "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["error"]["code"], "invalid_request", "{text}");
        assert!(v["error"]["request_id"].is_string(), "{text}");
        assert!(text.contains("api_key") && text.contains(&format!("changing {field}")), "{text}");
    }
    let put = json!({"provider": "vercel", "fields": {"team_id": "team_holm",
        "project_id": "prj_holm", "api_url": "https://catcher.example.com"}});
    let (status, text) = call(&server, "PUT", "/v1/runtimes/vercel", Some(put)).await;
    assert_eq!(status, 400, "PUT keeps the key only for the same endpoints: {text}");
    let after = client.runtime("vercel").await.unwrap();
    assert_eq!(
        (after.fields, after.key_version, after.provider),
        (before.fields, before.key_version, before.provider),
        "a refused change changes nothing"
    );

    // PUT adds a whole runtime, and replaces it keeping its key.
    let put = ReplaceRuntime {
        provider: "modal".into(),
        fields: [("token_id".to_owned(), json!("ak-holm-1"))].into(),
        api_key: Some(KEY_3.into()),
    };
    let info = client.replace_runtime("modal", &put).await.unwrap();
    assert_eq!((info.provider.as_str(), info.key_version), ("modal", Some(1)));
    let put2 = ReplaceRuntime {
        fields: [("token_id".to_owned(), json!("ak-holm-2"))].into(),
        api_key: None,
        ..put.clone()
    };
    let info = client.replace_runtime("modal", &put2).await.unwrap();
    assert_eq!(info.fields["token_id"], json!("ak-holm-2"));
    assert_eq!(info.key_version, Some(1), "the stored key is kept");
    responses += &serde_json::to_string(&info).unwrap();

    // Restarted with another server key: the stored keys cannot be
    // decrypted, and the runtimes say so.
    server.config.secret_key = Some(SERVER_KEY_B.into());
    server.restart().await;
    let info = server.client.runtime("vercel").await.unwrap();
    assert_eq!(info.state, RuntimeState::Unavailable);
    let reason = info.reason.clone().unwrap();
    assert!(reason.contains("cannot be decrypted with this server's key"), "{reason}");
    responses += &serde_json::to_string(&info).unwrap();
    // Setting the key again under the new server key mends it.
    let info = server.client.change_runtime("vercel", &rotate).await.unwrap();
    assert!(info.reason.unwrap().contains("cannot connect"), "mended");
    assert_eq!(info.key_version, Some(3));

    // Without a server key: a stored key cannot be read, and none is stored.
    server.config.secret_key = None;
    server.restart().await;
    let info = server.client.runtime("vercel").await.unwrap();
    assert!(info.reason.unwrap().contains("has no key to decrypt"), "without a server key");
    let (status, text) = call(
        &server,
        "POST",
        "/v1/runtimes",
        Some(json!({"name": "other", "provider": "e2b", "api_key": KEY_1})),
    )
    .await;
    assert_eq!(status, 403, "{text}");
    assert!(
        text.contains("no key to encrypt vendor keys") && text.contains("HOLM_SERVER_SECRET_KEY"),
        "{text}"
    );
    responses += &text;

    // Remove: gone from the list and the store.
    let removed = server.client.remove_runtime("vercel").await.unwrap();
    assert_eq!(removed.name, "vercel");
    let e = server.client.runtime("vercel").await.unwrap_err().to_api_error();
    assert_eq!(e.code, ErrorCode::UnknownRuntime);
    assert_eq!(e.details.unwrap()["known"], json!(["modal"]));
    server.client.remove_runtime("modal").await.unwrap();
    server.restart().await;
    assert!(server.client.runtimes().await.unwrap().is_empty());

    // HOLM_SERVER_SANDBOXES: a runtime named after the vendor, with its key
    // from the vendor's variable; not changed through the API.
    server.config.secret_key = Some(SERVER_KEY_A.into());
    // Its endpoint is a closed loopback port: the test reaches no vendor.
    server.config.sandboxes = holmd::registry::env_sandboxes("e2b", &|k| match k {
        "E2B_API_KEY" => Some(ENV_KEY.to_owned()),
        "E2B_API_URL" | "E2B_SANDBOX_URL" => Some("http://127.0.0.1:9".to_owned()),
        _ => None,
    })
    .unwrap();
    server.restart().await;
    let info = server.client.runtime("e2b").await.unwrap();
    assert_eq!((info.provider.as_str(), info.place), ("e2b", Place::Remote));
    assert_eq!(info.secrets, ["api_key"]);
    responses += &serde_json::to_string(&info).unwrap();
    let (status, text) = call(&server, "DELETE", "/v1/runtimes/e2b", None).await;
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("HOLM_SERVER_SANDBOXES"), "{text}");

    // No key in any response or log line.
    no_key_in(&responses, "a response");
    let logs = logs.text();
    assert!(logs.contains("added a remote runtime"), "the logs were captured: {logs}");
    assert!(
        logs.contains("replaced a remote runtime") && logs.contains("removed a remote runtime")
    );
    no_key_in(&logs, "the logs");
}
