//! agent-sandbox's in-box REST contract (KEP-539.2 "sandboxd", its
//! `filesystem.yaml` v1) as its clients call it, on a real guest: files
//! written, read, listed, probed and removed under the sandbox root; a path
//! out of the root refused; health and metadata; the box secret required,
//! and every refusal in sandboxd's `{code, message}`, changing nothing.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use common::{Guest, Options, eventually};
use reqwest::StatusCode;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The status and sandboxd's error code of a refusal.
async fn refusal(r: reqwest::Response) -> (StatusCode, String) {
    let status = r.status();
    let v: Value = r.json().await.expect("a JSON error body");
    assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
    assert_eq!(v.as_object().unwrap().len(), 2, "only code and message: {v}");
    (status, v["code"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn agent_sandbox_clients_use_a_holm_box_through_the_sandboxd_contract() {
    let root = tempfile::tempdir().unwrap();
    let workspace = root.path().join("workspace");
    std::fs::create_dir(&workspace).unwrap();
    std::os::unix::fs::symlink("/etc", workspace.join("etc-link")).unwrap();
    let port = free_port();
    let env = vec![
        ("HOLM_SANDBOXD_ADDR", format!("127.0.0.1:{port}")),
        ("HOLM_SANDBOXD_ROOT", root.path().display().to_string()),
        ("SANDBOX_ID", "sb-7".to_owned()),
        ("SANDBOX_API_TOKEN", "must-not-show".to_owned()),
        ("OTHER_SETTING", "not-sandbox".to_owned()),
    ];
    let g = Guest::start(Options { env, ..Options::default() }).await;
    let base = format!("http://127.0.0.1:{port}/v1");
    let http = reqwest::Client::new();
    let files = |p: &str| format!("{base}/files/{p}");

    // Health answers without a credential, once the desktop is ready.
    let health: Value = eventually(WAIT, "sandboxd's health to say ok", || async {
        let r = http.get(format!("{base}/health")).send().await.ok()?;
        (r.status() == StatusCode::OK).then_some(())?;
        r.json().await.ok()
    })
    .await;
    assert_eq!(health["status"], "ok");
    assert!(health["uptime_seconds"].is_u64(), "{health}");

    // Without the box secret: refused, nothing written.
    let r = http.put(files("workspace/a.txt")).body("x").send().await.unwrap();
    assert_eq!(refusal(r).await, (StatusCode::UNAUTHORIZED, "UNAUTHENTICATED".into()));
    let r = http.get(format!("{base}/metadata")).bearer_auth("wrong-secret-0123456789");
    assert_eq!(refusal(r.send().await.unwrap()).await.0, StatusCode::UNAUTHORIZED);
    assert!(!workspace.join("a.txt").exists());

    // A write makes the directories on the way, with the mode asked.
    let data: Vec<u8> = (0..=255u8).cycle().take(200_000).collect();
    let r = http
        .put(files("workspace/src/main.py?mode=0755"))
        .bearer_auth(&g.secret)
        .header("content-type", "application/octet-stream")
        .body(data.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    let written = workspace.join("src/main.py");
    assert_eq!(std::fs::read(&written).unwrap(), data);
    assert_eq!(std::fs::metadata(&written).unwrap().permissions().mode() & 0o777, 0o755);

    // Read back byte for byte; HEAD says whether a path exists.
    let r = http.get(files("workspace/src/main.py")).bearer_auth(&g.secret).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["content-type"], "application/octet-stream");
    assert_eq!(r.bytes().await.unwrap().as_ref(), data.as_slice());
    let head = |p: &str| http.head(files(p)).bearer_auth(&g.secret).send();
    assert_eq!(head("workspace/src/main.py").await.unwrap().status(), StatusCode::OK);
    assert_eq!(head("workspace/none.py").await.unwrap().status(), StatusCode::NOT_FOUND);

    // A directory answers its listing: a link counts as what it points to.
    let r = http.get(files("workspace")).bearer_auth(&g.secret).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let listing: Value = r.json().await.unwrap();
    assert_eq!(listing["path"], "/workspace");
    let entries = listing["entries"].as_array().unwrap();
    let names: Vec<&str> = entries.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["etc-link", "src"]);
    for e in entries {
        assert_eq!(e["type"], "directory", "{e}");
        assert!(e["size"].is_u64(), "{e}");
        let at = e["modified_at"].as_str().unwrap();
        assert!(humantime::parse_rfc3339(at).is_ok(), "{at}");
        assert!(e["mode"].as_str().unwrap().starts_with('0'), "{e}");
    }
    let r = http.get(files("workspace/src")).bearer_auth(&g.secret).send().await.unwrap();
    let src: Value = r.json().await.unwrap();
    assert_eq!(
        (&src["entries"][0]["name"], &src["entries"][0]["type"], &src["entries"][0]["size"]),
        (&json!("main.py"), &json!("file"), &json!(200_000))
    );
    assert_eq!(src["entries"][0]["mode"], "0755");

    // Out of the root, by `..` or through a link: refused, nothing written.
    for path in ["workspace/..%2F..%2Fescaped.txt", "workspace/etc-link/holm-sandboxd-test"] {
        let r = http.put(files(path)).bearer_auth(&g.secret).body("no").send().await.unwrap();
        assert_eq!(refusal(r).await, (StatusCode::FORBIDDEN, "PERMISSION_DENIED".into()), "{path}");
    }
    let r = http.get(files("workspace/etc-link/hostname")).bearer_auth(&g.secret).send().await;
    assert_eq!(refusal(r.unwrap()).await.1, "PERMISSION_DENIED");
    assert!(!root.path().parent().unwrap().join("escaped.txt").exists());
    assert!(!std::path::Path::new("/etc/holm-sandboxd-test").exists());

    // A bad mode is refused and writes nothing.
    let r = http.put(files("workspace/b.txt?mode=644")).bearer_auth(&g.secret).body("b");
    assert_eq!(
        refusal(r.send().await.unwrap()).await,
        (StatusCode::BAD_REQUEST, "INVALID_ARGUMENT".into())
    );
    assert!(!workspace.join("b.txt").exists());

    // A directory with something in it goes only with recursive=true.
    let delete = |p: &str| http.delete(files(p)).bearer_auth(&g.secret).send();
    assert_eq!(refusal(delete("workspace/src").await.unwrap()).await.1, "CONFLICT");
    assert!(written.exists());
    let r = delete("workspace/src?recursive=true").await.unwrap();
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert!(!workspace.join("src").exists());
    assert_eq!(refusal(delete("workspace/src").await.unwrap()).await.1, "NOT_FOUND");

    // Metadata: the orchestrator's SANDBOX_ variables, never a credential.
    let r = http.get(format!("{base}/metadata")).bearer_auth(&g.secret).send().await.unwrap();
    let metadata: Value = r.json().await.unwrap();
    assert_eq!(metadata, json!({ "env": { "SANDBOX_ID": "sb-7" } }));
}
