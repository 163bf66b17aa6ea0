//! `/mcp` on the `holmd` binary as the deploy guide runs it: behind a proxy
//! that sends `Host: boxes.example.com` (`HOLM_PUBLIC_URL`), and stopping
//! cleanly on SIGINT while an MCP host holds a stream open.

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use holm_testkit::e2e_enabled;
use serde_json::{Value, json};

const TOKEN: &str = "mcp-binary-test-token-0123456789";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_answers_the_public_name_and_a_stream_does_not_hold_the_stop() {
    if !e2e_enabled().await {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_holmd"))
        .env("HOLM_SERVER_ADDR", format!("127.0.0.1:{port}"))
        .env("HOLM_SERVER_TOKEN", TOKEN)
        .env("HOLM_STATE_DIR", dir.path())
        .env("HOLM_PUBLIC_URL", "https://boxes.example.com")
        .stdin(Stdio::null())
        .spawn()
        .expect("start holmd");
    let url = format!("http://127.0.0.1:{port}");
    let http = holm_client::client_builder().no_proxy().build().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while http.get(format!("{url}/v1/health")).send().await.is_err() {
        assert!(Instant::now() < deadline, "holmd did not answer");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let post = |host: &str, body: Value, session: Option<&str>| {
        let mut rb = http
            .post(format!("{url}/mcp"))
            .bearer_auth(TOKEN)
            .header("host", host)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(&body);
        if let Some(s) = session {
            rb = rb.header("mcp-session-id", s);
        }
        rb.send()
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "proxy-test", "version": "1"}}});

    // A name the server does not have: refused, in holm's error shape.
    let r = post("other.example", initialize.clone(), None).await.unwrap();
    assert_eq!(r.status(), 403);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "forbidden", "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("Host"), "{body}");
    assert!(body["error"]["request_id"].as_str().unwrap().starts_with("req_"));

    // The public name, as the proxy sends it: a session.
    let r = post("boxes.example.com", initialize, None).await.unwrap();
    assert_eq!(r.status(), 200);
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = r.bytes().await;
    let r = post(
        "boxes.example.com",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(&session),
    )
    .await
    .unwrap();
    assert!(r.status().is_success(), "{}", r.status());

    // The host's standing stream for server messages, held open.
    let stream = http
        .get(format!("{url}/mcp"))
        .bearer_auth(TOKEN)
        .header("host", "boxes.example.com")
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);

    // SIGINT: holmd stops (and cuts the stream) rather than wait on it.
    // SAFETY: kill sends a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "holmd did not stop with an MCP stream open");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "{status}");
    drop(stream);
}
