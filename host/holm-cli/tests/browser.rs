//! The browser commands with the real `holm` binary against a real holmd and
//! real boxes: `holm page`, `holm state save|load` and `holm bridge`.

use std::process::{Command, Output};

use holm_testkit::{TestServer, e2e_enabled};

fn holm(server: &TestServer, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_holm"))
        .args(args)
        .env("HOLM_SERVER_URL", &server.url)
        .env("HOLM_SERVER_TOKEN", &server.token)
        .output()
        .expect("run holm")
}

/// Runs `holm` and answers its standard output, failing on a non-zero exit.
fn ok(server: &TestServer, args: &[&str]) -> String {
    let o = holm(server, args);
    assert!(o.status.success(), "holm {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const PAGE: &str = "data:text/html,<title>CLI page</title><input id=q><button id=b \
    onclick=\"document.title='clicked '+document.getElementById('q').value\">b</button>";

// The server runs in this process while `holm` blocks this thread: the
// server needs a thread of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_state_and_bridge_commands_work() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let id = ok(&server, &["new", "--ttl", "10"]).trim().to_owned();

    let goto = ok(&server, &["page", &id, "goto", PAGE]);
    assert!(goto.starts_with("CLI page\t"), "{goto}");
    ok(&server, &["page", &id, "fill", "#q", "from the cli"]);
    ok(&server, &["page", &id, "click", "#b"]);
    assert_eq!(
        ok(&server, &["page", &id, "eval", "document.title"]).trim(),
        "\"clicked from the cli\""
    );
    assert_eq!(ok(&server, &["page", &id, "eval", "1/0"]).trim(), "Infinity");
    let html = ok(&server, &["page", &id, "html"]);
    assert!(html.contains("<button id=\"b\""), "{html}");

    // A page error is reported in the one error shape, with a failing exit.
    let o = holm(&server, &["--json", "page", &id, "eval", "throw new Error('cli boom')"]);
    assert!(!o.status.success());
    let err: serde_json::Value = serde_json::from_slice(&o.stderr).expect("a JSON error");
    assert_eq!(err["error"]["code"], "page_error");

    // Tabs: open one, see it current, close it.
    let tab = ok(&server, &["page", &id, "open", "data:text/html,<title>Second</title>"]);
    let tab = tab.trim();
    let tabs = ok(&server, &["page", &id, "tabs"]);
    assert!(tabs.lines().any(|l| l.starts_with(tab) && l.contains('*')), "{tabs}");
    ok(&server, &["page", &id, "close", tab]);
    assert!(!ok(&server, &["page", &id, "tabs"]).contains(tab));

    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("page.png");
    ok(&server, &["page", &id, "screenshot", png.to_str().unwrap()]);
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));

    // State saves to an owner-only file and loads back.
    let file = dir.path().join("state.json");
    ok(&server, &["state", "save", &id, file.to_str().unwrap()]);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    let loaded = ok(&server, &["--json", "state", "load", &id, file.to_str().unwrap()]);
    let loaded: serde_json::Value = serde_json::from_str(&loaded).unwrap();
    assert!(loaded["cookies"].is_u64(), "{loaded}");

    // The bridge, as JSON, with a header and a ticket URL.
    let bridge = ok(&server, &["--json", "bridge", &id, "--ttl", "30"]);
    let bridge: serde_json::Value = serde_json::from_str(&bridge).unwrap();
    assert!(bridge["http_url"].as_str().unwrap().starts_with("http://127.0.0.1:"));
    assert!(bridge["headers"]["Authorization"].as_str().unwrap().starts_with("Bearer "));
    assert!(bridge["ticket_url"].as_str().unwrap().contains("/t/"));
    ok(&server, &["rm", &id]);
}

/// `holm new --wayland` gives a box whose desktop is headless sway, driven
/// with the same commands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_with_wayland_gives_a_sway_desktop() {
    if !e2e_enabled().await {
        return;
    }
    holm_testkit::ensure_image_of(holm_testkit::Profile::Wayland).await;
    let server = TestServer::start().await;
    let id = ok(&server, &["new", "--wayland", "--ttl", "10", "--no-browser"]).trim().to_owned();
    let info: serde_json::Value =
        serde_json::from_str(&ok(&server, &["--json", "get", &id])).expect("JSON");
    assert_eq!(info["spec"]["display"], "wayland", "{info}");
    assert_eq!(info["screens"][0]["display"], "HEADLESS-1", "{info}");
    ok(&server, &["click", &id, "10", "20"]);
    let version = ok(&server, &["exec", &id, "--", "swaymsg", "-t", "get_version"]);
    assert!(version.contains("\"variant\": \"sway\""), "{version}");
    ok(&server, &["rm", &id]);
}
