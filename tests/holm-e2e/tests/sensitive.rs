//! Sensitive actions end to end (issue 26, item 4), on the real engine and
//! image: through holmd, with `"sensitive": true`, text typed into a
//! terminal (with the screenshot after it asked for), a command whose argv
//! and environment hold secrets, a background process whose argv holds
//! one, and a clipboard write. The box really gets every secret (the
//! terminal's file, the command's files and the clipboard read back hold
//! them), and the timeline keeps no text nor its length: the typing step
//! has its action's type only and no image, the commands' argv is
//! `[sensitive]` with no environment names, the clipboard step says only
//! that it was sensitive, and the process list shows `[sensitive]`. No
//! secret is in the timeline, its HTML and JSONL exports, nor (the server's
//! scan when it ends: `holm_testkit::leaks`) holmd's log, the store or the
//! box's container log.
//!
//! The same for typing through MCP: the `desktop` tool with `sensitive:
//! true`, called by the official MCP SDK over holmd's `/mcp`, types into a
//! terminal (which writes it to a file read back) and leaves the text in no
//! record, with the same scans.

use std::time::Duration;

use holm_proto::guest::SENSITIVE_SHOWN;
use holm_proto::host::{BoxSpec, BoxState, CreateBox};
use holm_proto::timeline::{ExportFormat, Step, StepKind};
use holm_testkit::matrix::Target;
use holm_testkit::mcp::{McpClient, Sdk, Transport};
use holm_testkit::{TestServer, desk, eventually};
use serde_json::{Value, json};

holm_testkit::suite!(sensitive_actions_leave_no_text_in_any_record: docker [x11]);
holm_testkit::suite!(sensitive_typing_through_mcp_leaves_no_text: docker [x11]);

const TYPED: &str = "hunter2-SENSITIVE";
const IN_ARGV: &str = "argv-SENSITIVE-3f9a1c";
const IN_ENV: &str = "env-SENSITIVE-77b2e0";
const SPAWNED: &str = "spawn-SENSITIVE-0c4e9b";
const CLIPPED: &str = "clip-SENSITIVE-5d21aa";
const MCP_TYPED: &str = "hunter2-MCP-SENSITIVE";
const SECRETS: [&str; 6] = [TYPED, IN_ARGV, IN_ENV, SPAWNED, CLIPPED, MCP_TYPED];

/// Sends a JSON body to holmd with the request id `rid`; answers the status.
async fn send(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    rid: &str,
    body: Value,
) -> u16 {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .request(method, format!("{}{path}", server.url))
        .bearer_auth(&server.token)
        .header("x-request-id", rid)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("send")
        .status()
        .as_u16()
}

/// Waits until the file at `path` in the box holds `want` (the secret is
/// never in the description a timeout prints).
async fn holds(b: &holm_client::BoxClient, path: &str, want: &str) {
    eventually(Duration::from_secs(60), &format!("{path} to hold the secret"), || async {
        let bytes = b.read_file(path).await.ok()?;
        (bytes == want.as_bytes()).then_some(())
    })
    .await;
}

fn no_secret(what: &str, text: &str) {
    for s in SECRETS {
        assert!(!text.contains(s), "{what} holds a sensitive text");
    }
    assert!(!text.contains("_chars"), "{what} keeps a sensitive text's length");
}

/// The sensitive actions, each of which the box really got.
async fn act(server: &TestServer, target: &Target, id: &str) {
    let b = server.client.boxed(id);
    let base = format!("/v1/boxes/{id}");
    let file = "/tmp/typed.txt";
    let (x, y) = desk::terminal_writing_to(&b, target.display, "sens", "60x8+400+300", file).await;
    let click = json!({"actions": [{"type": "click", "x": x, "y": y}]});
    assert_eq!(
        send(server, reqwest::Method::POST, &format!("{base}/screens/0/input"), "s-click", click)
            .await,
        200
    );
    let typing = json!({
        "actions": [{"type": "type", "text": format!("{TYPED}\n")}],
        "sensitive": true,
        "screenshot": {},
    });
    let input = format!("{base}/screens/0/input");
    assert_eq!(send(server, reqwest::Method::POST, &input, "s-type", typing).await, 200);
    holds(&b, file, &format!("{TYPED}\n")).await;

    let script = r#"printf '%s' "$1" > /tmp/argv.txt; printf '%s' "$PW" > /tmp/env.txt"#;
    let run = json!({
        "argv": ["sh", "-c", script, "sh", IN_ARGV],
        "env": {"PW": IN_ENV},
        "sensitive": true,
    });
    assert_eq!(
        send(server, reqwest::Method::POST, &format!("{base}/commands/run"), "s-run", run).await,
        200
    );
    holds(&b, "/tmp/argv.txt", IN_ARGV).await;
    holds(&b, "/tmp/env.txt", IN_ENV).await;

    let spawn = json!({"argv": ["sh", "-c", "sleep 600", SPAWNED], "sensitive": true});
    assert_eq!(
        send(server, reqwest::Method::POST, &format!("{base}/processes"), "s-spawn", spawn).await,
        201,
        "a process is made"
    );
    let listed = b.processes().await.expect("the processes");
    let shown: Vec<&str> = listed.iter().map(|p| p.command.as_str()).collect();
    assert!(shown.contains(&SENSITIVE_SHOWN), "{shown:?}");
    no_secret("the process list", &format!("{shown:?}"));

    let clip = json!({"text": CLIPPED, "sensitive": true});
    assert_eq!(
        send(server, reqwest::Method::PUT, &format!("{base}/clipboard"), "s-clip", clip).await,
        200
    );
    let got = b.clipboard().await.expect("the clipboard");
    assert!(got.text.as_deref() == Some(CLIPPED), "the clipboard holds what was put");
}

/// Each sensitive step keeps its kind and nothing of its text.
fn check_steps(steps: &[Step]) {
    let step = |rid: &str| steps.iter().find(|s| s.request_id == rid).expect(rid);
    let typed = step("s-type");
    assert_eq!((typed.action.kind, typed.action.name.as_str()), (StepKind::Input, "type"));
    assert_eq!(typed.action.params["actions"], json!([{"type": "type"}]), "{typed:?}");
    assert_eq!(typed.action.params["sensitive"], json!(true));
    assert!(typed.screenshot.is_none(), "the image answered is not kept: {typed:?}");
    for rid in ["s-run", "s-spawn"] {
        let s = step(rid);
        assert_eq!(s.action.kind, StepKind::Command);
        assert_eq!(s.action.params["argv"], json!([SENSITIVE_SHOWN]), "{s:?}");
        assert!(!s.action.params.contains_key("env_names"), "{s:?}");
    }
    let clip = step("s-clip");
    assert_eq!(clip.action.params, json!({"sensitive": true}).as_object().unwrap().clone());
    // The click before it was not sensitive, and keeps what it was.
    assert_eq!(step("s-click").action.params.get("sensitive"), None);
    no_secret("the timeline", &serde_json::to_string(steps).unwrap());
}

/// A server whose scan when it ends looks for every secret, and a running
/// box on it.
async fn server_and_box(target: &Target) -> (TestServer, String) {
    let mut server = target.server().await;
    for (i, s) in SECRETS.iter().enumerate() {
        server.remember(&format!("sensitive text {i}"), s);
    }
    let request = CreateBox {
        spec: BoxSpec { display: Some(target.display), ..BoxSpec::default() },
        ..CreateBox::default()
    };
    let info = server.client.create_box(&request, Some(600)).await.expect("create a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    (server, info.id)
}

/// No secret in the box's timeline exports (the server's scan when it ends
/// reads its log, store and the box's container log).
async fn exports_hold_no_secret(server: &TestServer, id: &str) {
    for format in [ExportFormat::Jsonl, ExportFormat::Html] {
        let bytes = server.client.export_timeline(id, format).await.expect("an export");
        no_secret(&format!("the {format:?} export"), &String::from_utf8_lossy(&bytes));
    }
}

async fn sensitive_actions_leave_no_text_in_any_record(target: Target) {
    let (server, id) = server_and_box(&target).await;
    act(&server, &target, &id).await;

    let steps = server.client.whole_timeline(&id).await.expect("the timeline");
    check_steps(&steps);
    exports_hold_no_secret(&server, &id).await;
    // The box stays: the server's scan reads its container log when the
    // server ends, then removes it.
}

async fn sensitive_typing_through_mcp_leaves_no_text(target: Target) {
    let (server, id) = server_and_box(&target).await;
    let b = server.client.boxed(&id);
    let file = "/tmp/mcp-typed.txt";
    let (x, y) = desk::terminal_writing_to(&b, target.display, "mcp", "60x8+400+300", file).await;
    b.click(0, x, y).await.expect("click the terminal");
    let transport =
        Transport::Http { url: format!("{}/mcp", server.url), token: Some(server.token.clone()) };
    let mut mcp = McpClient::connect(&transport, Sdk::V1).await.expect("connect");
    let typing = serde_json::json!({
        "box_id": id,
        "sensitive": true,
        "screenshot": false,
        "actions": [{"type": "type", "text": format!("{MCP_TYPED}\n")}],
    });
    let acted = mcp.call("desktop", typing).await;
    no_secret("the tool's result", &acted.to_string());
    holds(&b, file, &format!("{MCP_TYPED}\n")).await;
    mcp.close().await;

    let steps = server.client.whole_timeline(&id).await.expect("the timeline");
    let typed = steps
        .iter()
        .find(|s| s.action.kind == StepKind::Input && s.action.name == "type")
        .expect("the typing's step");
    assert_eq!(typed.action.params["actions"], json!([{"type": "type"}]), "{typed:?}");
    assert_eq!(typed.action.params["sensitive"], json!(true), "{typed:?}");
    no_secret("the timeline", &serde_json::to_string(&steps).unwrap());
    exports_hold_no_secret(&server, &id).await;
}
