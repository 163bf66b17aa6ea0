//! MCP over Streamable HTTP at holmd's `/mcp`, end to end, with real MCP
//! clients that no one at holm wrote (the official TypeScript SDKs), real
//! boxes on the real Docker engine, and the deploy guide's host
//! configuration: `URL: .../mcp`, `Authorization: Bearer <token>`.

use holm_testkit::mcp::{McpClient, Sdk, Transport, check_tools, drive_a_box, image, text};
use holm_testkit::{TestServer, e2e_enabled};
use serde_json::json;

/// The README's URL form of the host configuration, as (path, header).
fn readme_http_config() -> (String, String) {
    let readme = include_str!("../../../README.md");
    let start = readme.find("<!-- mcp-http-config -->").expect("the README marks the URL form");
    let block = &readme[start..];
    let body_start = block.find("```").expect("a block") + 3;
    let body_end = block[body_start..].find("```").expect("the block ends") + body_start;
    let field = |name: &str| {
        block[body_start..body_end]
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .map(|v| v.trim().to_owned())
            .unwrap_or_else(|| panic!("the README's URL form has {name}"))
    };
    assert_eq!(field("Transport"), "Streamable HTTP");
    let url = field("URL");
    let path = url.strip_prefix("https://boxes.example.com").expect("the guide's host").to_owned();
    (path, field("Authorization"))
}

/// The README's URL form, pointed at `server`.
fn http(server: &TestServer, token: Option<&str>) -> Transport {
    let (path, authorization) = readme_http_config();
    assert_eq!(path, "/mcp");
    assert_eq!(authorization, "Bearer <token>", "the client sends Authorization: Bearer <token>");
    Transport::Http { url: format!("{}{path}", server.url), token: token.map(str::to_owned) }
}

// The server runs in this process while the test awaits the client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_11_25_host_drives_a_box_over_http() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let mut mcp = McpClient::connect(&http(&server, Some(&server.token)), Sdk::V1)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    assert_eq!(mcp.connected["protocolVersion"], "2025-11-25", "{}", mcp.connected);
    assert!(mcp.connected["sessionId"].is_string(), "2025-11-25 hosts get a session");
    assert_eq!(mcp.connected["serverInfo"]["name"], "holm");
    assert!(mcp.connected["instructions"].as_str().is_some_and(|i| i.contains("launch_box")));
    let errors = mcp.schema_errors().await;
    assert_eq!(errors, json!({}), "every input schema compiles as JSON Schema 2020-12");
    drive_a_box(&mut mcp, &server).await;
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_07_28_host_is_served_statelessly() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let mut mcp = McpClient::connect(&http(&server, Some(&server.token)), Sdk::V2)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    assert_eq!(mcp.connected["protocolVersion"], "2026-07-28", "{}", mcp.connected);
    assert!(mcp.connected["sessionId"].is_null(), "no session on 2026-07-28");
    check_tools(&mcp.list_tools().await);
    assert_eq!(mcp.schema_errors().await, json!({}));
    let launched = mcp.call("launch_box", json!({"ttl_minutes": 5, "wait_secs": 300})).await;
    let id = launched["structuredContent"]["id"].as_str().unwrap().to_owned();
    let shot = mcp.call("screenshot", json!({"box_id": id})).await;
    assert_eq!(image(&shot).0, 1280, "a screen models take is not scaled: {}", text(&shot));
    assert!(text(&shot).contains("scale 1 "), "{}", text(&shot));
    let acted = mcp
        .call("desktop", json!({"box_id": id, "actions": [{"type": "click", "x": 640, "y": 400}]}))
        .await;
    assert_eq!(image(&acted).0, 1280);
    let r = mcp.call("exec", json!({"box_id": id, "argv": ["uname", "-s"]})).await;
    assert_eq!(r["structuredContent"]["stdout"], "Linux\n");
    let r = mcp.refused("exec", json!({"box_id": id})).await;
    assert!(text(&r).contains("argv"), "{}", text(&r));
    mcp.call("remove_box", json!({"box_id": id})).await;
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_without_the_token_is_refused_before_mcp() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "curl-like", "version": "1"}}});
    let http_client = holm_client::client_builder().no_proxy().build().unwrap();
    let post = |token: Option<&str>| {
        let mut rb = http_client
            .post(format!("{}/mcp", server.url))
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(t) = token {
            rb = rb.bearer_auth(t);
        }
        rb
    };

    // No token, or a wrong one: 401 in holm's error shape, before MCP.
    for token in [None, Some("not-the-token-at-all")] {
        let r = post(token).send().await.unwrap();
        assert_eq!(r.status(), 401, "{token:?}");
        assert!(r.headers().get("mcp-session-id").is_none());
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "unauthorized");
        assert!(body["error"]["request_id"].as_str().unwrap().starts_with("req_"));
    }
    // The SDK without the token does not get in either.
    for sdk in [Sdk::V1, Sdk::V2] {
        let refused = McpClient::connect(&http(&server, None), sdk).await;
        let error = refused.err().unwrap_or_else(|| panic!("{sdk:?} connected without the token"));
        let said = error.to_string();
        assert!(said.contains("401") || said.contains("nauthorized"), "{sdk:?}: {error}");
    }

    // With the token: in. A page of another site is refused (Origin), and so
    // is a request for a host name this server does not have (DNS rebinding).
    let r = post(Some(&server.token)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("mcp-session-id").is_some());
    let r =
        post(Some(&server.token)).header("origin", "https://evil.example").send().await.unwrap();
    assert_eq!(r.status(), 403);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "forbidden", "holm's error shape: {body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("Origin"), "{body}");
    let r =
        post(Some(&server.token)).header("origin", "http://localhost:5173").send().await.unwrap();
    assert_eq!(r.status(), 200, "a local page (such as an MCP inspector) is allowed");
    let r = post(Some(&server.token)).header("host", "evil.example").send().await.unwrap();
    assert_eq!(r.status(), 403);
}
