//! `holm agent BOX` from the real binary against a real holmd and real
//! boxes on Docker: the printed `curl` lines work (the guest's info, a
//! screenshot, a command), the guest serves its OpenAPI document without a
//! credential, the credential opens only its own box's guest and no route
//! that manages credentials, it is refused once revoked or expired, and bad
//! input gets the one error shape and changes nothing.

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use holm_testkit::{TestServer, e2e_enabled};
use serde_json::Value;

fn holm(server: &TestServer, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_holm"))
        .args(args)
        .env("HOLM_SERVER_URL", &server.url)
        .env("HOLM_SERVER_TOKEN", &server.token)
        .stdin(Stdio::null())
        .output()
        .expect("run holm")
}

fn ok(server: &TestServer, args: &[&str]) -> String {
    let o = holm(server, args);
    assert!(o.status.success(), "holm {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json(server: &TestServer, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(server, &all)).expect("JSON")
}

fn refused(server: &TestServer, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let o = holm(server, &all);
    assert_eq!(o.status.code(), Some(1), "holm {args:?} should fail with 1");
    let err: Value = serde_json::from_slice(&o.stderr)
        .unwrap_or_else(|_| panic!("a JSON error: {}", String::from_utf8_lossy(&o.stderr)));
    assert!(err["error"]["message"].is_string() && err["error"]["hint"].is_string(), "{err}");
    err
}

/// Runs a shell line (a printed `curl` line, maybe with more words).
fn sh(line: &str) -> Output {
    Command::new("sh").args(["-c", line]).stdin(Stdio::null()).output().expect("run sh")
}

fn sh_ok(line: &str) -> Vec<u8> {
    let o = sh(line);
    assert!(
        o.status.success(),
        "{line}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// A request with `token` to `url`: the status and the body.
fn call(method: &str, url: &str, token: &str, body: Option<&str>) -> (u16, Value) {
    let mut c = Command::new("curl");
    c.args(["-sS", "-X", method, "-w", "\n%{http_code}", "-H"])
        .arg(format!("Authorization: Bearer {token}"));
    if let Some(b) = body {
        c.args(["-H", "Content-Type: application/json", "--data", b]);
    }
    let o = c.arg(url).stdin(Stdio::null()).output().expect("run curl");
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let (body, status) = text.rsplit_once('\n').expect("a status line");
    (status.trim().parse().expect("a status"), serde_json::from_str(body).unwrap_or(Value::Null))
}

fn token(access: &Value) -> String {
    let auth = access["headers"]["Authorization"].as_str().expect("an Authorization header");
    auth.strip_prefix("Bearer ").expect("a bearer credential").to_owned()
}

// The server runs in this process while `holm` blocks this thread: the
// server needs a thread of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_box_is_debugged_at_its_agent_with_a_credential_for_it_alone() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let a = ok(&server, &["new", "--ttl", "10", "--no-browser"]).trim().to_owned();
    let b = ok(&server, &["new", "--ttl", "10", "--no-browser"]).trim().to_owned();

    let line = printed(&server, &a);
    let (ta, tb) = scope(&server, &a, &b);
    bad_input(&server, &a, &ta);
    let ts = revoked_and_expired(&server, &a, &b, (&ta, &tb), &line).await;
    for id in [&a, &b] {
        no_credential_in_the_log(id, &[&ta, &tb, &ts]);
    }
    ok(&server, &["rm", &a, &b]);
}

/// The plain form, the printed `curl` lines (info, a screenshot, a
/// command) and the guest's OpenAPI document; answers the command's line.
fn printed(server: &TestServer, a: &str) -> String {
    // The plain form: the guest's URL on loopback, its document, the header.
    let shown = ok(server, &["agent", a]);
    let field = |name: &str| {
        shown
            .lines()
            .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_owned()))
            .unwrap_or_else(|| panic!("{name} in {shown}"))
    };
    assert!(field("url").starts_with("http://127.0.0.1:"), "{shown}");
    assert!(field("header").starts_with("Authorization: Bearer hag_"), "{shown}");
    assert!(field("expires_at").ends_with('Z'), "{shown}");

    // The printed curl lines work: the guest's info, a screenshot, a command.
    let line = ok(server, &["agent", a, "--curl"]);
    assert!(line.starts_with("curl ") && line.lines().count() == 1, "{line}");
    let info: Value = serde_json::from_slice(&sh_ok(&line)).expect("the guest's info");
    assert_eq!(info["screens"][0]["index"], 0, "{info}");
    let with = json(server, &["agent", a, "--curl", "/v1/screens/0/screenshot"]);
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shot.png");
    sh_ok(&format!("{} -o {}", with["curl"].as_str().unwrap(), shot.display()));
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG: {} bytes", png.len());
    let line = ok(
        server,
        &[
            "agent",
            a,
            "--curl",
            "/v1/commands/run",
            "--data",
            r#"{"command":"echo \"it's\" $((6*7))"}"#,
        ],
    );
    let ran: Value = serde_json::from_slice(&sh_ok(&line)).expect("a command's result");
    assert_eq!((ran["exit_code"].as_i64(), ran["stdout"].as_str()), (Some(0), Some("it's 42\n")));

    // The guest describes itself, without a credential.
    let access_a = json(server, &["agent", a]);
    let doc: Value = serde_json::from_slice(&sh_ok(&format!(
        "curl -sS --fail-with-body '{}'",
        access_a["openapi_url"].as_str().unwrap()
    )))
    .expect("the guest's OpenAPI document");
    assert_eq!(doc["openapi"], "3.1.0");
    for path in [
        "/health",
        "/v1/info",
        "/v1/commands/run",
        "/v1/screens/{screen}/screenshot",
        "/v1/agent/tokens",
    ] {
        assert!(doc["paths"][path].is_object(), "{path} is documented");
    }

    line
}

/// The credential opens its box only, and no route that manages
/// credentials; answers both boxes' credentials.
fn scope(server: &TestServer, a: &str, b: &str) -> (String, String) {
    let access_a = json(server, &["agent", a]);
    // The credential opens its box only, and no route that manages credentials.
    let access_b = json(server, &["agent", b]);
    let (ta, tb) = (token(&access_a), token(&access_b));
    let (url_a, url_b) = (access_a["url"].as_str().unwrap(), access_b["url"].as_str().unwrap());
    assert_ne!(url_a, url_b);
    assert_eq!(call("GET", &format!("{url_a}/v1/info"), &ta, None).0, 200);
    let (status, err) = call("GET", &format!("{url_b}/v1/info"), &ta, None);
    assert_eq!((status, err["error"]["code"].as_str()), (401, Some("unauthorized")), "{err}");
    for (method, path, body) in [
        ("PUT", "/v1/secret", r#"{"secret":"0123456789abcdef0123456789abcdef"}"#),
        ("POST", "/v1/agent/tokens", "{}"),
        ("DELETE", "/v1/agent/tokens", "{}"),
        ("PUT", "/v1/bridge/secret", r#"{"secret":"0123456789abcdef0123456789abcdef"}"#),
    ] {
        let (status, err) = call(method, &format!("{url_a}{path}"), &ta, Some(body));
        assert_eq!(
            (status, err["error"]["code"].as_str()),
            (403, Some("forbidden")),
            "{method} {path}: {err}"
        );
    }
    assert_eq!(json(server, &["get", a])["state"], "running", "the server still reaches the box");

    (ta, tb)
}

/// Bad input: the one error shape, and nothing changes.
fn bad_input(server: &TestServer, a: &str, ta: &str) {
    let url_a = json(server, &["agent", a])["url"].as_str().unwrap().to_owned();
    // Bad input: the one error shape, and nothing changes.
    let err = refused(server, &["agent", "box_nosuchbox"]);
    assert_eq!(err["error"]["code"], "not_found", "{err}");
    assert!(err["error"]["request_id"].is_string(), "{err}");
    for ttl in ["0", "3601"] {
        let err = refused(server, &["agent", a, "--ttl", ttl]);
        assert_eq!(err["error"]["code"], "invalid_request", "{err}");
        assert_eq!(err["error"]["details"]["issues"][0]["path"], "ttl_secs", "{err}");
    }
    let err = refused(server, &["agent", a, "--curl", "v1/info"]);
    assert_eq!(err["error"]["code"], "invalid_request", "{err}");
    assert_eq!(
        call("GET", &format!("{url_a}/v1/info"), ta, None).0,
        200,
        "the credential still opens"
    );
}

/// Revoked, then expired: refused; answers the expired credential.
async fn revoked_and_expired(
    server: &TestServer,
    a: &str,
    b: &str,
    (ta, tb): (&str, &str),
    line: &str,
) -> String {
    let url_of = |id: &str| json(server, &["agent", id])["url"].as_str().unwrap().to_owned();
    let (url_a, url_b) = (url_of(a), url_of(b));
    // Revoked: refused from then on, on that box only.
    let revoked = json(server, &["agent", a, "--revoke"]);
    assert_eq!(revoked["revoked"], true);
    let (status, err) = call("GET", &format!("{url_a}/v1/info"), ta, None);
    assert_eq!((status, err["error"]["code"].as_str()), (401, Some("unauthorized")), "{err}");
    assert_eq!(call("GET", &format!("{url_b}/v1/info"), tb, None).0, 200, "b's is b's own");
    let o = sh(line);
    assert!(!o.status.success(), "a revoked credential's curl line fails");

    // Expired: refused once its lifetime is over (waited for, not timed).
    let short = json(server, &["agent", b, "--ttl", "1"]);
    let ts = token(&short);
    let mut refused_after_expiry = false;
    for _ in 0..60 {
        let (status, err) = call("GET", &format!("{url_b}/v1/info"), &ts, None);
        if status == 401 {
            assert!(err["error"]["message"].as_str().unwrap().contains("expired"), "{err}");
            refused_after_expiry = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(refused_after_expiry, "a credential with ttl 1 is refused once it expires");

    ts
}

/// No credential reaches the guest's log.
fn no_credential_in_the_log(id: &str, credentials: &[&str]) {
    let logs = Command::new("docker").args(["logs", &format!("holm-{id}")]).output().unwrap();
    assert!(logs.status.success(), "docker logs holm-{id}");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&logs.stdout),
        String::from_utf8_lossy(&logs.stderr)
    );
    assert!(text.contains("an agent credential was issued"), "the guest logs the event");
    for t in credentials {
        assert!(!text.contains(t), "a credential in {id}'s log");
    }
}
