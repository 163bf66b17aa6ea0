//! An MCP tool call's arguments never reach holmd's log. rmcp logs every
//! request it receives, arguments included, at `debug`; holmd caps rmcp's
//! targets at `info` whatever `RUST_LOG` says (docs/security.md). The
//! `holmd` binary at `RUST_LOG=trace` answers a tool call whose argument
//! carries a marker, and its whole output is searched for the marker.

mod common;

use common::Holmd;
use holm_testkit::e2e_enabled;
use serde_json::{Value, json};

const TOKEN: &str = "mcp-log-test-token-5c2e9a0b7d4f1e3a";
const MARKER: &str = "typed-MARKER-9f3c1a7e-never-logged";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_calls_arguments_stay_out_of_the_log_at_rust_log_trace() {
    if !e2e_enabled().await {
        return;
    }
    // Every crate at trace, and rmcp's request logger named outright: a
    // more specific directive does not lift the cap either.
    for rust_log in ["trace", "trace,rmcp::service=trace"] {
        tool_call_with_the_marker(rust_log).await;
    }
}

/// Runs holmd at `rust_log`, makes a tool call carrying the marker, and
/// searches holmd's output for it.
async fn tool_call_with_the_marker(rust_log: &str) {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let holmd = Holmd::start(
        dir.path(),
        &[
            ("HOLM_SERVER_TOKEN", TOKEN),
            ("HOLM_STATE_DIR", state.to_str().unwrap()),
            ("RUST_LOG", rust_log),
        ],
    )
    .await;
    let http = holm_client::client_builder().no_proxy().build().unwrap();
    let post = |body: Value, session: Option<&str>| {
        let mut rb = http
            .post(format!("{}/mcp", holmd.url))
            .bearer_auth(TOKEN)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(&body);
        if let Some(s) = session {
            rb = rb.header("mcp-session-id", s);
        }
        rb.send()
    };
    let r = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "log-test", "version": "1"}}}),
        None,
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = r.bytes().await;
    let r = post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), Some(&session))
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());

    // A tool call carrying the marker as typed text; its answer (an error:
    // the box does not exist) comes after rmcp has logged the request.
    let r = post(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "type", "arguments": {"box_id": "box_absent", "text": MARKER}}}),
        Some(&session),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    let answer = String::from_utf8_lossy(&r.bytes().await.unwrap()).into_owned();
    assert!(answer.contains("\"id\":2"), "the call was answered: {answer}");

    let log = holmd.log_text();
    // The log is as verbose as RUST_LOG asks elsewhere: the silence below
    // is the cap on rmcp, not a quiet logger.
    assert!(log.contains("TRACE") || log.contains("DEBUG"), "{log}");
    assert!(
        !log.contains(MARKER),
        "RUST_LOG={rust_log}: the tool call's argument is in holmd's log:\n{log}"
    );
}
