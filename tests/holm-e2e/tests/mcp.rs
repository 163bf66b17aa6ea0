//! MCP over Streamable HTTP at holmd's `/mcp`, end to end, with real MCP
//! clients that no one at holm wrote (the official TypeScript SDKs), real
//! boxes on the real Docker engine, and the deploy guide's host
//! configuration: `URL: .../mcp`, `Authorization: Bearer <token>`.

use holm_testkit::mcp::{McpClient, Sdk, Transport, check_tools, drive_a_box, image, text};
use holm_testkit::{TestServer, e2e_enabled};
use serde_json::json;

/// docs/mcp.md's URL form of the host configuration, as (path, header).
fn guide_http_config() -> (String, String) {
    let guide = include_str!("../../../docs/mcp.md");
    let start = guide.find("<!-- mcp-http-config -->").expect("docs/mcp.md marks the URL form");
    let block = &guide[start..];
    let body_start = block.find("```").expect("a block") + 3;
    let body_end = block[body_start..].find("```").expect("the block ends") + body_start;
    let field = |name: &str| {
        block[body_start..body_end]
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .map(|v| v.trim().to_owned())
            .unwrap_or_else(|| panic!("docs/mcp.md's URL form has {name}"))
    };
    assert_eq!(field("Transport"), "Streamable HTTP");
    let url = field("URL");
    let path = url.strip_prefix("https://boxes.example.com").expect("the guide's host").to_owned();
    (path, field("Authorization"))
}

/// docs/mcp.md's URL form, pointed at `server`.
fn http(server: &TestServer, token: Option<&str>) -> Transport {
    Transport::Http {
        url: format!("{}{}", server.url, guide_path()),
        token: token.map(str::to_owned),
    }
}

/// The path of docs/mcp.md's URL form, its header checked.
fn guide_path() -> String {
    let (path, authorization) = guide_http_config();
    assert_eq!(path, "/mcp");
    assert_eq!(authorization, "Bearer <token>", "the client sends Authorization: Bearer <token>");
    path
}

/// The URL form the end-to-end tests run is in docs/mcp.md, in the form they
/// read, on every run (with or without `HOLM_E2E`).
#[test]
fn docs_mcp_md_holds_the_url_form_the_tests_run() {
    assert_eq!(guide_path(), "/mcp");
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

/// `launch_box` takes the display: a Wayland box is driven with the same
/// tools, and the cursor tool answers where the agent put the pointer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launch_box_with_display_wayland_gives_a_wayland_box() {
    if !e2e_enabled().await {
        return;
    }
    holm_testkit::ensure_image_of(holm_testkit::Profile::Wayland).await;
    let server = TestServer::start().await;
    let mut mcp = McpClient::connect(&http(&server, Some(&server.token)), Sdk::V2)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    let launched = mcp
        .call("launch_box", json!({"display": "wayland", "ttl_minutes": 5, "wait_secs": 300}))
        .await;
    assert_eq!(launched["structuredContent"]["state"], "running", "{}", text(&launched));
    let id = launched["structuredContent"]["id"].as_str().unwrap().to_owned();
    let info = server.client.get_box(&id, None).await.unwrap();
    assert_eq!(info.spec.display, Some(holm_testkit::Profile::Wayland));
    let guest = server.client.boxed(&id).info().await.unwrap();
    assert_eq!(guest.profile, holm_testkit::Profile::Wayland);
    let shot = mcp.call("screenshot", json!({"box_id": id})).await;
    assert_eq!(image(&shot).0, 1280, "{}", text(&shot));
    mcp.call("desktop", json!({"box_id": id, "actions": [{"type": "move", "x": 321, "y": 123}]}))
        .await;
    let cursor = mcp.call("cursor", json!({"box_id": id})).await;
    let c = &cursor["structuredContent"];
    assert_eq!((c["screen_x"].as_i64(), c["screen_y"].as_i64()), (Some(321), Some(123)), "{c}");
    let r = mcp.refused("launch_box", json!({"display": "mir"})).await;
    assert!(text(&r).contains("display"), "{}", text(&r));
    mcp.call("remove_box", json!({"box_id": id})).await;
    mcp.close().await;
}

/// The `box` tool changes a real box's life (pause, resume, extend, stop,
/// start, fork), each answer the box as it is after; a change the box's
/// state does not allow and bad arguments are refused in the one error
/// shape, changing nothing; `launch_box` with a progress token reports the
/// box's stages as MCP progress notifications.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_changes_a_boxs_life_and_follows_its_launch() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let mut mcp = McpClient::connect(&http(&server, Some(&server.token)), Sdk::V1)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    let (launched, progress) =
        mcp.call_with_progress("launch_box", json!({"ttl_minutes": 10, "wait_secs": 300})).await;
    let info = &launched["structuredContent"];
    assert_eq!(info["state"], "running", "{}", text(&launched));
    let id = info["id"].as_str().unwrap().to_owned();
    let messages: Vec<&str> = progress.iter().filter_map(|p| p["message"].as_str()).collect();
    for stage in ["container", "desktop", "browser"] {
        assert!(messages.iter().any(|m| m.contains(stage)), "{stage} in {messages:?}");
    }
    let steps: Vec<f64> = progress.iter().filter_map(|p| p["progress"].as_f64()).collect();
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "progress only grows: {steps:?}");

    let life = async |mcp: &mut McpClient, args: serde_json::Value| {
        let mut all = json!({"box_id": id});
        all.as_object_mut().unwrap().extend(args.as_object().unwrap().clone());
        mcp.call("box", all).await["structuredContent"].clone()
    };
    assert_eq!(life(&mut mcp, json!({"action": "pause"})).await["state"], "paused");
    let r = mcp.refused("exec", json!({"box_id": id, "command": "true"})).await;
    assert!(text(&r).starts_with("error[not_running]"), "{}", text(&r));
    // A change the state does not allow: REST's conflict, nothing changed.
    let r = mcp.refused("box", json!({"box_id": id, "action": "stop"})).await;
    assert!(text(&r).starts_with("error[conflict]") && text(&r).contains("resume"), "{}", text(&r));
    let state = server.client.get_box(&id, None).await.unwrap().state;
    assert_eq!(state, holm_proto::host::BoxState::Paused, "nothing changed");
    assert_eq!(life(&mut mcp, json!({"action": "resume"})).await["state"], "running");
    let before = server.client.get_box(&id, None).await.unwrap().expires_at;
    let extended = life(&mut mcp, json!({"action": "extend", "minutes": 5})).await;
    assert!(extended["expires_at"].as_str().unwrap() > before.as_str(), "{extended}");

    // Bad arguments: refused, nothing changed.
    let r = mcp.refused("box", json!({"box_id": id, "action": "explode"})).await;
    assert!(text(&r).starts_with("error[invalid_request]"), "{}", text(&r));
    let r = mcp.refused("box", json!({"box_id": id, "action": "extend"})).await;
    assert!(text(&r).contains("minutes"), "{}", text(&r));
    let r = mcp.refused("box", json!({"box_id": id, "action": "pause", "minutes": 3})).await;
    assert!(text(&r).contains("minutes"), "{}", text(&r));
    let r = mcp.refused("box", json!({"box_id": "box_doesnotexist", "action": "stop"})).await;
    assert!(text(&r).starts_with("error[not_found]"), "{}", text(&r));
    let state = server.client.get_box(&id, None).await.unwrap().state;
    assert_eq!(state, holm_proto::host::BoxState::Running, "nothing changed");

    // Files survive a stop and a start, and go to a fork.
    mcp.call("write_file", json!({"box_id": id, "path": "/root/kept.txt", "content": "kept"}))
        .await;
    assert_eq!(life(&mut mcp, json!({"action": "stop"})).await["state"], "stopped");
    let started = life(&mut mcp, json!({"action": "start", "wait_secs": 300})).await;
    assert_eq!(started["state"], "running", "{started}");
    let read = mcp.call("read_file", json!({"box_id": id, "path": "/root/kept.txt"})).await;
    assert!(text(&read).contains("kept"), "{}", text(&read));
    let (forked, fork_progress) = mcp
        .call_with_progress(
            "box",
            json!({"box_id": id, "action": "fork", "ttl_minutes": 5, "wait_secs": 300}),
        )
        .await;
    let fork = &forked["structuredContent"];
    assert_eq!(fork["state"], "running", "{}", text(&forked));
    assert!(!fork_progress.is_empty(), "a fork reports its progress too");
    let fork_id = fork["id"].as_str().unwrap().to_owned();
    assert_ne!(fork_id, id);
    let read = mcp.call("read_file", json!({"box_id": fork_id, "path": "/root/kept.txt"})).await;
    assert!(text(&read).contains("kept"), "{}", text(&read));
    mcp.call("remove_box", json!({"box_id": fork_id})).await;
    mcp.call("remove_box", json!({"box_id": id})).await;
    mcp.close().await;
}
