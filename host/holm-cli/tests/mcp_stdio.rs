//! `holm mcp --stdio`, the deploy guide's "MCP host that starts a local
//! process": docs/mcp.md's host configuration, run by a real MCP client (the
//! official TypeScript SDKs) against a real holmd and real boxes; and the
//! rule that nothing but MCP reaches standard output.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use holm_testkit::mcp::{McpClient, Sdk, Transport, check_tools, drive_a_box};
use holm_testkit::{TestServer, e2e_enabled};
use serde_json::{Value, json};

/// docs/mcp.md's `mcpServers` entry for holm, as a host would read it.
fn guide_config() -> Value {
    let guide = include_str!("../../../docs/mcp.md");
    let start =
        guide.find("<!-- mcp-stdio-config -->").expect("docs/mcp.md marks the stdio configuration");
    let block = &guide[start..];
    let json_start = block.find("```json").expect("a json block") + "```json".len();
    let json_end = block[json_start..].find("```").expect("the block ends") + json_start;
    let config: Value =
        serde_json::from_str(&block[json_start..json_end]).expect("docs/mcp.md's JSON parses");
    config["mcpServers"]["holm"].clone()
}

/// docs/mcp.md's configuration, pointed at `server` with this build's `holm`.
fn transport_from_guide(server: &TestServer) -> Transport {
    guide_transport(&server.url, &server.token)
}

/// docs/mcp.md's configuration, with the guide's URL and token replaced by
/// `url` and `token`, and this build's `holm` as the command.
fn guide_transport(url: &str, token: &str) -> Transport {
    let config = guide_config();
    assert_eq!(config["command"], "holm");
    let args: Vec<String> =
        config["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_owned()).collect();
    assert_eq!(args, ["mcp", "--stdio"]);
    let env: Vec<(String, String)> = config["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let value = match (k.as_str(), v.as_str().unwrap()) {
                ("HOLM_SERVER_URL", "https://boxes.example.com") => url.to_owned(),
                ("HOLM_SERVER_TOKEN", "<token>") => token.to_owned(),
                (k, v) => panic!("docs/mcp.md sets {k}={v}, which the test does not know"),
            };
            (k.clone(), value)
        })
        .collect();
    assert_eq!(env.len(), 2, "HOLM_SERVER_URL and HOLM_SERVER_TOKEN");
    Transport::Stdio { command: env!("CARGO_BIN_EXE_holm").into(), args, env }
}

/// The configuration the end-to-end test runs is in docs/mcp.md, in the form
/// the test reads, on every run (with or without `HOLM_E2E`).
#[test]
fn docs_mcp_md_holds_the_stdio_configuration_the_tests_run() {
    let Transport::Stdio { env, .. } = guide_transport("http://127.0.0.1:1", "t") else {
        panic!("a stdio transport");
    };
    assert!(env.contains(&("HOLM_SERVER_URL".to_owned(), "http://127.0.0.1:1".to_owned())));
}

// The server runs in this process while the test awaits the client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_starts_holm_mcp_drives_a_box() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let transport = transport_from_guide(&server);
    let mut mcp =
        McpClient::connect(&transport, Sdk::V1).await.unwrap_or_else(|e| panic!("connect: {e}"));
    assert_eq!(mcp.connected["serverInfo"]["name"], "holm");
    assert_eq!(mcp.schema_errors().await, json!({}));
    drive_a_box(&mut mcp, &server).await;
    mcp.close().await;

    // A 2026-07-28 client over stdio too.
    let mut mcp =
        McpClient::connect(&transport, Sdk::V2).await.unwrap_or_else(|e| panic!("connect: {e}"));
    assert_eq!(mcp.connected["protocolVersion"], "2026-07-28", "{}", mcp.connected);
    check_tools(&mcp.list_tools().await);
    let r = mcp.call("list_runtimes", json!({})).await;
    assert_eq!(r["structuredContent"]["runtimes"][0]["name"], "docker");
    mcp.close().await;
}

#[test]
fn holm_mcp_writes_only_mcp_to_standard_output() {
    // No holmd is needed to speak MCP; tool calls then fail as tool results.
    // A port that was just free: nothing answers there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_holm"))
        .args(["mcp", "--stdio"])
        .env("HOLM_SERVER_URL", &url)
        .env("HOLM_SERVER_TOKEN", "a-token-that-must-never-be-printed")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start holm mcp --stdio");
    let mut stdin = child.stdin.take().unwrap();
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "list_boxes", "arguments": {}}}),
    ];
    for r in &requests {
        writeln!(stdin, "{r}").unwrap();
    }
    stdin.flush().unwrap();
    // Read until the last answer, then close standard input: the server ends.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answers: Vec<Value> = Vec::new();
    while !answers.iter().any(|a| a["id"] == 3) {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "holm mcp ended early");
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("standard output carries only MCP, not {line:?}: {e}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        answers.push(v);
    }
    drop(stdin);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    for line in rest.lines() {
        let v: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not MCP: {line:?}: {e}"));
        assert_eq!(v["jsonrpc"], "2.0");
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "holm mcp ends cleanly when the host closes: {status}");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();

    let init = answers.iter().find(|a| a["id"] == 1).unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "holm");
    let tools = answers.iter().find(|a| a["id"] == 2).unwrap();
    check_tools(tools["result"]["tools"].as_array().unwrap());
    let call = answers.iter().find(|a| a["id"] == 3).unwrap();
    assert_eq!(call["result"]["isError"], true);
    let text = call["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("error[unavailable]: cannot reach holmd at {url}")),
        "{text}"
    );
    // Logs went to standard error; the token went nowhere.
    assert!(stderr.contains("tool call failed"), "{stderr}");
    assert!(!stderr.contains("a-token-that-must-never-be-printed"));
    assert!(!text.contains("a-token-that-must-never-be-printed"));
}

#[test]
fn holm_mcp_needs_stdio() {
    let out = Command::new(env!("CARGO_BIN_EXE_holm")).arg("mcp").output().unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--stdio"));
}
