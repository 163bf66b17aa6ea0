//! A real MCP client for end-to-end tests, and the scenario every transport
//! runs through it.
//!
//! [`McpClient`] drives `tests/holm-e2e/node/mcp-driver.mjs`, which connects
//! one of the official TypeScript SDKs (from npm; no one at holm wrote them)
//! to holm's MCP server, over Streamable HTTP or over stdio, and answers one
//! JSON line per request. [`node_dir`] installs the SDKs with `npm ci` once.
//! [`drive_a_box`] is the scenario: launch a box, see it, click and type,
//! run a command, move files, use a page served inside the box and move its
//! login with save_state and load_state, be refused, remove the box, and
//! check that no result carries a secret.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::{FileLock, TestServer};

/// Which SDK, on which protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sdk {
    /// `@modelcontextprotocol/sdk` 1.x: protocol 2025-11-25, sessions over HTTP.
    V1,
    /// `@modelcontextprotocol/client` 2.x pinned to 2026-07-28: stateless.
    V2,
}

/// Where the client finds the server.
#[derive(Debug, Clone)]
pub enum Transport {
    /// Streamable HTTP at `url`, with `Authorization: Bearer token` when given.
    Http {
        /// Such as `http://127.0.0.1:PORT/mcp`.
        url: String,
        /// The bearer token.
        token: Option<String>,
    },
    /// A process the SDK starts and talks to on its standard streams.
    Stdio {
        /// The program.
        command: PathBuf,
        /// Its arguments.
        args: Vec<String>,
        /// Its whole environment (the SDK adds PATH, HOME and the like).
        env: Vec<(String, String)>,
    },
}

/// The directory of the Node.js client, with its packages installed (once,
/// with `npm ci`, for all test processes). Panics with what to install when
/// Node.js 20 or later or npm is missing.
pub fn node_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../holm-e2e/node");
    let version =
        std::process::Command::new("node").arg("--version").output().unwrap_or_else(|e| {
            panic!("the MCP tests need Node.js 20 or later (node: {e}); .ci/setup installs it")
        });
    let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    let major: u32 =
        version.trim_start_matches('v').split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0);
    assert!(major >= 20, "the MCP tests need Node.js 20 or later, not {version:?}");
    let _lock = FileLock::acquire(".holm_e2e_npm.lock");
    let installed = dir.join("node_modules/.package-lock.json");
    let fresh = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if fresh(&installed).is_none() || fresh(&installed) < fresh(&dir.join("package-lock.json")) {
        let out = std::process::Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir)
            .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
            .output()
            .unwrap_or_else(|e| panic!("the MCP tests need npm ({e}); .ci/setup installs it"));
        assert!(
            out.status.success(),
            "npm ci in {} failed:\n{}{}",
            dir.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    dir
}

/// One MCP client session, in a Node.js process.
#[derive(Debug)]
pub struct McpClient {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    /// What the connection said: `sdk`, `protocolVersion`, `sessionId`,
    /// `serverInfo`, `instructions`.
    pub connected: Value,
    /// Every answer read, as JSON text, for the secret check.
    pub transcript: Vec<String>,
}

/// How long one answer may take before the test gives up (a safety net for
/// a hung client, not a timing assertion).
const ANSWER_WITHIN: Duration = Duration::from_secs(600);

impl McpClient {
    /// Connects; `Err` holds the client's error when it could not.
    pub async fn connect(transport: &Transport, sdk: Sdk) -> Result<Self, Value> {
        let dir = node_dir();
        let mut cmd = Command::new("node");
        cmd.arg(dir.join("mcp-driver.mjs"))
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .env_remove("MCP_TOKEN");
        let kind = match transport {
            Transport::Http { url, token } => {
                cmd.env("MCP_URL", url);
                if let Some(t) = token {
                    cmd.env("MCP_TOKEN", t);
                }
                "http"
            }
            Transport::Stdio { command, args, env } => {
                let env: serde_json::Map<String, Value> =
                    env.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
                cmd.env("MCP_COMMAND", command)
                    .env("MCP_ARGS", serde_json::to_string(args).expect("args"))
                    .env("MCP_ENV", Value::Object(env).to_string());
                "stdio"
            }
        };
        cmd.arg(kind).arg(match sdk {
            Sdk::V1 => "v1",
            Sdk::V2 => "v2",
        });
        let mut child = cmd.spawn().expect("start node");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut client =
            Self { child, stdin, stdout, connected: Value::Null, transcript: Vec::new() };
        let first = client.read("connect").await;
        if first["ok"] != true {
            return Err(first["error"].clone());
        }
        client.connected = first["result"].clone();
        Ok(client)
    }

    async fn read(&mut self, what: &str) -> Value {
        let line = tokio::time::timeout(ANSWER_WITHIN, self.stdout.next_line())
            .await
            .unwrap_or_else(|_| panic!("the MCP client did not answer {what}"))
            .expect("read the MCP client")
            .unwrap_or_else(|| panic!("the MCP client ended before answering {what}"));
        self.transcript.push(line.clone());
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {line}"))
    }

    async fn ask(&mut self, request: Value) -> Value {
        let mut line = request.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.expect("write to the MCP client");
        self.stdin.flush().await.expect("flush");
        self.read(&request["op"].to_string()).await
    }

    /// `tools/list`.
    pub async fn list_tools(&mut self) -> Vec<Value> {
        let a = self.ask(json!({"op": "list_tools"})).await;
        assert_eq!(a["ok"], true, "tools/list: {a}");
        a["result"]["tools"].as_array().expect("tools").clone()
    }

    /// `resources/list`.
    pub async fn list_resources(&mut self) -> Vec<Value> {
        let a = self.ask(json!({"op": "list_resources"})).await;
        assert_eq!(a["ok"], true, "resources/list: {a}");
        a["result"]["resources"].as_array().expect("resources").clone()
    }

    /// `resources/read`: the contents.
    pub async fn read_resource(&mut self, uri: &str) -> Vec<Value> {
        let a = self.ask(json!({"op": "read_resource", "uri": uri})).await;
        assert_eq!(a["ok"], true, "resources/read {uri}: {a}");
        a["result"]["contents"].as_array().expect("contents").clone()
    }

    /// Compiles every tool's input schema with a strict JSON Schema 2020-12
    /// validator (ajv); answers the errors by tool.
    pub async fn schema_errors(&mut self) -> Value {
        let a = self.ask(json!({"op": "validate_schemas"})).await;
        assert_eq!(a["ok"], true, "validate_schemas: {a}");
        a["result"]["errors"].clone()
    }

    /// `tools/call`: the whole answer, `{"ok": true, "result": ...}` or
    /// `{"ok": false, "error": ...}` for a protocol error.
    pub async fn call_raw(&mut self, name: &str, arguments: Value) -> Value {
        self.ask(json!({"op": "call", "name": name, "arguments": arguments})).await
    }

    /// `tools/call` asking for progress notifications, that must succeed:
    /// the `CallToolResult` and the notifications, in order.
    pub async fn call_with_progress(
        &mut self,
        name: &str,
        arguments: Value,
    ) -> (Value, Vec<Value>) {
        let request = json!({"op": "call", "name": name, "arguments": arguments, "progress": true});
        let a = self.ask(request).await;
        assert_eq!(a["ok"], true, "{name} {arguments}: {a}");
        let r = a["result"].clone();
        assert_ne!(r["isError"], true, "{name} {arguments}: {}", text(&r));
        (r, a["progress"].as_array().cloned().unwrap_or_default())
    }

    /// `tools/call` that must succeed: the `CallToolResult`.
    pub async fn call(&mut self, name: &str, arguments: Value) -> Value {
        let a = self.call_raw(name, arguments.clone()).await;
        assert_eq!(a["ok"], true, "{name} {arguments}: {a}");
        let r = a["result"].clone();
        assert_ne!(r["isError"], true, "{name} {arguments}: {}", text(&r));
        r
    }

    /// `tools/call` that the tool must refuse: the `CallToolResult`.
    pub async fn refused(&mut self, name: &str, arguments: Value) -> Value {
        let a = self.call_raw(name, arguments.clone()).await;
        assert_eq!(a["ok"], true, "a refusal is a tool result, not a protocol error: {a}");
        let r = a["result"].clone();
        assert_eq!(r["isError"], true, "{name} {arguments} is refused: {r}");
        r
    }

    /// Closes the session and waits for the client to end.
    pub async fn close(mut self) {
        let a = self.ask(json!({"op": "close"})).await;
        assert_eq!(a["ok"], true, "close: {a}");
        let status = tokio::time::timeout(ANSWER_WITHIN, self.child.wait())
            .await
            .expect("the MCP client ends")
            .expect("wait for node");
        assert!(status.success(), "the MCP client ended with {status}");
    }
}

/// Calls `f` until it answers `Some`, for at most 30 seconds (the desktop
/// needs a moment to show a window or take keys; there is no fixed sleep).
async fn poll<T>(what: &str, mut f: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The text blocks of a tool result, joined.
pub fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|c| c.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

/// The image of a tool result, decoded: (width, height, distinct colours).
pub fn image(result: &Value) -> (u32, u32, usize) {
    let block = result["content"]
        .as_array()
        .and_then(|c| c.iter().find(|b| b["type"] == "image"))
        .unwrap_or_else(|| panic!("an image block in {}", text(result)));
    assert_eq!(block["mimeType"], "image/png");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(block["data"].as_str().expect("data"))
        .expect("base64 image data");
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes.as_slice()));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let frame = reader.next_frame(&mut buf).expect("a frame");
    buf.truncate(frame.buffer_size());
    let bpp = frame.color_type.samples();
    let colours: std::collections::HashSet<&[u8]> = buf.chunks(bpp).collect();
    (frame.width, frame.height, colours.len())
}

/// The live screen for MCP Apps hosts: the `ui://` resource, named by
/// `screenshot` and `desktop`, whose CSP lets it reach holmd; `view_screen`
/// answers a URL whose stream shows the box; asking for help answers a
/// takeover URL and a bounded wait answers that nobody came yet.
async fn live_screen(mcp: &mut McpClient, server: &TestServer, id: &str) {
    let tools = mcp.list_tools().await;
    for name in ["screenshot", "desktop"] {
        let t = tools.iter().find(|t| t["name"] == name).expect("listed");
        assert_eq!(t["_meta"]["ui"]["resourceUri"], holm_mcp::live::LIVE_URI, "{t}");
    }
    let resources = mcp.list_resources().await;
    let r = resources
        .iter()
        .find(|r| r["uri"] == holm_mcp::live::LIVE_URI)
        .expect("the live screen is listed");
    assert_eq!(r["mimeType"], holm_mcp::live::MIME);
    let contents = mcp.read_resource(holm_mcp::live::LIVE_URI).await;
    assert_eq!(contents[0]["mimeType"], holm_mcp::live::MIME);
    let view = contents[0]["text"].as_str().unwrap();
    assert!(view.contains("view_screen"), "{}", contents[0]);
    // The view imports its module from holmd's own address, not a URL's.
    let holmd = format!("const HOLMD = \"{}\";", server.url.trim_end_matches('/'));
    assert!(view.contains(&holmd), "{view}");
    let connect = contents[0]["_meta"]["ui"]["csp"]["connectDomains"].to_string();
    assert!(connect.contains(&server.url), "the view may reach holmd: {connect}");

    let viewed = mcp.call("view_screen", json!({"box_id": id})).await;
    let url = viewed["structuredContent"]["url"].as_str().expect("a URL").to_owned();
    assert!(
        url.starts_with(&format!("{}/v1/boxes/{id}/viewer/0/view#token=", server.url)),
        "{url}"
    );
    let (page, token) = url.split_once("#token=").unwrap();
    let stream = format!("{}/rfb", page.replacen("http://", "ws://", 1));
    let mut rfb =
        crate::rfb::connect(&stream, Some(token)).await.expect("the live screen's stream");
    assert_eq!((rfb.width, rfb.height), (1920, 1080));
    rfb.frame().await;

    let asked = mcp.call("ask_for_help", json!({"box_id": id, "reason": "a captcha"})).await;
    assert_eq!(asked["structuredContent"]["state"], "waiting", "{}", text(&asked));
    assert!(
        asked["structuredContent"]["takeover_url"]
            .as_str()
            .unwrap()
            .contains("/viewer/0/takeover#token=")
    );
    let waited = mcp.call("wait_for_handback", json!({"box_id": id, "wait_secs": 1})).await;
    assert_eq!(waited["structuredContent"]["state"], "waiting", "{}", text(&waited));
    let bad = mcp.refused("ask_for_help", json!({"box_id": id, "reason": ""})).await;
    assert!(text(&bad).contains("reason"), "{}", text(&bad));
}

/// Checks the tool list: every tool holm-mcp declares is listed, and no
/// tool adds a runtime or speaks of a secret.
pub fn check_tools(tools: &[Value]) {
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for want in holm_mcp::tools::all() {
        let want = want.name.as_ref();
        assert!(names.contains(&want), "{want} is listed: {names:?}");
    }
    for t in tools {
        let name = t["name"].as_str().unwrap_or_default();
        // Nothing adds (or sets, or removes) a runtime: a vendor key given
        // to an agent would pass through its context.
        assert!(
            !name.contains("runtime") || name == "list_runtimes",
            "{name}: no tool but list_runtimes touches runtimes"
        );
        let all = t.to_string().to_lowercase();
        for word in ["secret", "token", "api_key", "password", "credential"] {
            assert!(!all.contains(word), "{name} speaks of {word}: {t}");
        }
        assert!(t["inputSchema"]["type"] == "object", "{name}");
        assert!(t["annotations"]["readOnlyHint"].is_boolean(), "{name} has annotations");
    }
}

/// Every secret the server holds for `box_id`: each string under a key that
/// names a secret in the box's record (the box secret, and any later one
/// such as the bridge's), and the server's token.
pub fn secrets_of(server: &TestServer, box_id: &str) -> Vec<String> {
    let record = std::fs::read_to_string(server.state_dir.join(format!("boxes/{box_id}.json")))
        .expect("the box's record");
    let record: Value = serde_json::from_str(&record).expect("a JSON record");
    let mut out = vec![server.token.clone()];
    fn walk(v: &Value, secretish: bool, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    walk(v, secretish || k.contains("secret") || k.contains("token"), out);
                }
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, secretish, out)),
            Value::String(s) if secretish && s.len() >= 16 => out.push(s.clone()),
            _ => {}
        }
    }
    walk(&record, false, &mut out);
    assert!(out.len() >= 2, "the record holds the box secret: {record}");
    out
}

/// The scenario every transport runs: launch a box with a screen larger
/// than models take, see it, click and type through the scaled coordinates,
/// run a command, move files, be refused, check that nothing answered a
/// secret, and remove the box.
pub async fn drive_a_box(mcp: &mut McpClient, server: &TestServer) {
    let tools = mcp.list_tools().await;
    check_tools(&tools);

    let runtimes = mcp.call("list_runtimes", json!({})).await;
    assert!(
        runtimes["structuredContent"]["runtimes"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r["name"] == "docker")),
        "{}",
        text(&runtimes)
    );

    // A 1920x1080 screen is larger than models take: screenshots are scaled.
    let launched = mcp
        .call(
            "launch_box",
            json!({"ttl_minutes": 10, "screen_size": "1920x1080", "wait_secs": 300}),
        )
        .await;
    let info = &launched["structuredContent"];
    assert_eq!(info["state"], "running", "{}", text(&launched));
    let id = info["id"].as_str().expect("the box id").to_owned();
    assert!(crate::container_exists(&id).await);
    let listed = mcp.call("list_boxes", json!({})).await;
    assert!(
        listed["structuredContent"]["boxes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["id"] == id.as_str())
    );

    // The screenshot: an image of the predicted size, and a line saying it.
    let scale = holm_mcp::scale::scale_for(1920, 1080);
    let (iw, ih) = holm_mcp::scale::image_size(1920, 1080, scale);
    assert!(scale < 1.0 && iw <= 1568 && u64::from(iw) * u64::from(ih) <= 1_150_000);
    let shot = mcp.call("screenshot", json!({"box_id": id})).await;
    let (w, h, colours) = image(&shot);
    assert_eq!((w, h), (iw, ih), "the screenshot is scaled to what models take");
    assert!(colours > 10, "the desktop is not blank: {colours} colours");
    let line = text(&shot);
    assert!(
        line.contains(&format!("image {iw}x{ih} pixels of a 1920x1080 screen, scale {scale}")),
        "{line}"
    );

    live_screen(mcp, server, &id).await;

    // A terminal that writes what it is typed into a file.
    let started = mcp
        .call(
            "exec",
            json!({"box_id": id, "command":
                "xterm -name mcpterm -geometry 60x8+400+300 -en UTF-8 -e sh -c 'stty -echo; exec cat > /tmp/typed.txt' &",
                "env": {"LANG": "C.UTF-8"}}),
        )
        .await;
    assert_eq!(started["structuredContent"]["exit_code"], 0, "{}", text(&started));
    let geometry = poll("the xterm window", async || {
        let r = mcp
            .call(
                "exec",
                json!({"box_id": id, "command":
                "xdotool search --onlyvisible --classname mcpterm getwindowgeometry --shell"}),
            )
            .await;
        let out = r["structuredContent"]["stdout"].as_str().unwrap_or_default().to_owned();
        (r["structuredContent"]["exit_code"] == 0 && out.contains("WIDTH=")).then_some(out)
    })
    .await;
    let field = |name: &str| -> i32 {
        geometry
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} in {geometry}"))
    };
    let (cx, cy) = (field("X") + field("WIDTH") / 2, field("Y") + field("HEIGHT") / 2);
    // The window's middle, in screenshot pixels: what a model reads off the image.
    let (ix, iy) = holm_mcp::scale::to_image(cx, cy, scale);

    // Click there and type, in one call, and see the screen after.
    let typed = "héllo mcp ß €\n";
    let acted = mcp
        .call(
            "desktop",
            json!({"box_id": id, "actions": [
                {"type": "click", "x": ix, "y": iy},
                {"type": "type", "text": typed}
            ]}),
        )
        .await;
    assert_eq!(image(&acted).0, iw, "the screenshot after the actions is scaled the same");
    assert!(text(&acted).contains("ran 2 action(s)"), "{}", text(&acted));
    // The click landed where the model pointed: the pointer is at the
    // screen point the image point maps to.
    let cursor = mcp.call("cursor", json!({"box_id": id})).await;
    let c = &cursor["structuredContent"];
    let (sx, sy) = holm_mcp::scale::to_screen(ix, iy, scale);
    assert_eq!(
        (c["screen_x"].as_i64(), c["screen_y"].as_i64()),
        (Some(sx.into()), Some(sy.into())),
        "{c}"
    );
    assert!((c["x"].as_i64().unwrap() - i64::from(ix)).abs() <= 1, "{c}");
    assert!(
        (sx - cx).abs() <= 2 && (sy - cy).abs() <= 2,
        "({sx},{sy}) is the window's middle ({cx},{cy})"
    );
    let arrived = poll("the typed text in /tmp/typed.txt", async || {
        let a = mcp.call_raw("read_file", json!({"box_id": id, "path": "/tmp/typed.txt"})).await;
        let t = a["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        (t == typed).then_some(t)
    })
    .await;
    assert_eq!(arrived, typed);

    // A key chord and act without a screenshot: the answer is JSON.
    let keyed = mcp
        .call("desktop", json!({"box_id": id, "screenshot": false, "actions": [{"type": "key", "key": "ctrl+u"}]}))
        .await;
    assert_eq!(keyed["structuredContent"]["performed"], 1, "{}", text(&keyed));

    // A command: exit code and output; a failing one is a result, not an error.
    let r =
        mcp.call("exec", json!({"box_id": id, "command": "echo out; echo err >&2; exit 3"})).await;
    let s = &r["structuredContent"];
    assert_eq!(
        (s["exit_code"].as_i64(), s["stdout"].as_str(), s["stderr"].as_str()),
        (Some(3), Some("out\n"), Some("err\n"))
    );
    let r = mcp
        .call("exec", json!({"box_id": id, "argv": ["printf", "%s", "a b"], "cwd": "/tmp"}))
        .await;
    assert_eq!(r["structuredContent"]["stdout"], "a b");

    // Files: text and binary round trips, and a listing.
    let w = mcp
        .call(
            "write_file",
            json!({"box_id": id, "path": "/tmp/mcp/notes.txt", "content": "über\n"}),
        )
        .await;
    assert_eq!(w["structuredContent"]["size"], 6);
    let r = mcp.call("read_file", json!({"box_id": id, "path": "/tmp/mcp/notes.txt"})).await;
    assert_eq!(r["content"][0]["text"], "über\n");
    let bin: Vec<u8> = (0..=255u8).collect();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&bin);
    mcp.call(
        "write_file",
        json!({"box_id": id, "path": "/tmp/mcp/bin", "content": b64, "encoding": "base64"}),
    )
    .await;
    let r = mcp
        .call("read_file", json!({"box_id": id, "path": "/tmp/mcp/bin", "encoding": "base64"}))
        .await;
    assert_eq!(r["content"][0]["text"], b64.as_str());
    let r = mcp
        .call(
            "read_file",
            json!({"box_id": id, "path": "/tmp/mcp/bin", "max_bytes": 10, "encoding": "base64"}),
        )
        .await;
    assert!(text(&r).contains("\"truncated\":true"), "{}", text(&r));
    let refused = mcp.refused("read_file", json!({"box_id": id, "path": "/tmp/mcp/bin"})).await;
    assert!(text(&refused).contains("base64"), "{}", text(&refused));
    let l = mcp.call("list_files", json!({"box_id": id, "path": "/tmp/mcp"})).await;
    let mut names: Vec<&str> = l["structuredContent"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["bin", "notes.txt"]);

    drive_the_browser(mcp, &id).await;

    // Refusals are tool results with the code, the hint and a request id.
    let r = mcp
        .refused(
            "desktop",
            json!({"box_id": id, "actions": [{"type": "key", "key": "ctrl+shft+t"}]}),
        )
        .await;
    let t = text(&r);
    assert!(
        t.starts_with("error[invalid_request]")
            && t.contains("shft")
            && t.contains("request_id: req_"),
        "{t}"
    );
    let r = mcp.refused("launch_box", json!({"runtime": "vmware"})).await;
    let t = text(&r);
    assert!(
        t.starts_with("error[unknown_runtime]") && t.contains("docker") && t.contains("hint: "),
        "{t}"
    );
    let r = mcp.refused("screenshot", json!({"box_id": id, "screen": 3})).await;
    assert!(text(&r).contains("screen"), "{}", text(&r));
    let r = mcp.refused("remove_box", json!({"box_id": "box_doesnotexist"})).await;
    let t = text(&r);
    assert!(t.starts_with("error[not_found]") && t.contains("list_boxes"), "{t}");
    let r = mcp.refused("exec", json!({"box_id": id, "comand": "ls", "timeout": 5})).await;
    assert_eq!(
        r["structuredContent"]["error"]["details"]["issues"].as_array().map(Vec::len),
        Some(2),
        "{}",
        text(&r)
    );
    let unknown = mcp.call_raw("add_runtime", json!({"name": "cloud"})).await;
    assert_eq!(unknown["ok"], false, "an unknown tool is a protocol error: {unknown}");

    // Nothing says a secret: not the box's environment, not its PID 1, not
    // any answer of this session (save_state's cookies and storage included).
    mcp.call("exec", json!({"box_id": id, "command": "env; cat /proc/1/environ | tr '\\0' '\\n'"}))
        .await;
    mcp.call("read_file", json!({"box_id": id, "path": "/proc/1/environ", "encoding": "base64"}))
        .await;
    let secrets = secrets_of(server, &id);

    // Remove it.
    let removed = mcp.call("remove_box", json!({"box_id": id})).await;
    assert_eq!(removed["structuredContent"]["state"], "removed");
    assert!(!crate::container_exists(&id).await);
    let again = mcp.call("remove_box", json!({"box_id": id})).await;
    assert_eq!(again["structuredContent"]["state"], "removed", "removing twice is the same");
    let gone = mcp.refused("exec", json!({"box_id": id, "command": "true"})).await;
    assert!(text(&gone).starts_with("error[not_running]"), "{}", text(&gone));

    for line in &mcp.transcript {
        for secret in &secrets {
            assert!(
                !line.contains(secret.as_str()),
                "an answer carries a secret: {}",
                &line[..line.len().min(300)]
            );
        }
        // The base64 of /proc/1/environ is checked decoded too.
        let v: Value = serde_json::from_str(line).unwrap_or(Value::Null);
        for block in v["result"]["content"].as_array().into_iter().flatten() {
            if let Some(decoded) = block["text"]
                .as_str()
                .and_then(|t| base64::engine::general_purpose::STANDARD.decode(t).ok())
            {
                let decoded = String::from_utf8_lossy(&decoded);
                for secret in &secrets {
                    assert!(
                        !decoded.contains(secret.as_str()),
                        "a decoded answer carries a secret"
                    );
                }
            }
        }
    }
}

/// The site the browser part of the scenario serves inside the box: a page
/// with a button whose clicks show, which logs in (a cookie and local
/// storage) when it loads, and a page that only shows what the browser holds.
const SITE: &[(&str, &str)] = &[
    (
        "index.html",
        r#"<!doctype html>
<html><head><title>MCP page</title></head><body>
<h1>Served from inside the box</h1>
<button id="go" onclick="document.getElementById('out').textContent = 'clicked ' + (++window.clicks)">Go</button>
<p id="out">not yet</p>
<script>
  window.clicks = 0;
  document.cookie = 'session=s3ss10n; max-age=86400; path=/';
  localStorage.setItem('user', 'alice');
</script>
</body></html>"#,
    ),
    (
        "check.html",
        r#"<!doctype html><title>Check</title><p id="who"></p><script>
  document.getElementById('who').textContent = 'user=' + localStorage.getItem('user') + ' cookie=' + document.cookie;
</script>"#,
    ),
];

/// The page tools and browser state over MCP, on a site served inside the
/// box (no outside web): open it, read it, click by selector and see the
/// effect, take its screenshot, use tabs, and carry its login out with
/// save_state and back in with load_state.
async fn drive_the_browser(mcp: &mut McpClient, id: &str) {
    let origin = "http://127.0.0.1:8000";
    mcp.call(
        "write_file",
        json!({"box_id": id, "path": "/tmp/site/serve.pl", "content": crate::SERVE_PL}),
    )
    .await;
    for (name, html) in SITE {
        mcp.call(
            "write_file",
            json!({"box_id": id, "path": format!("/tmp/site/{name}"), "content": html}),
        )
        .await;
    }
    let started = mcp
        .call(
            "exec",
            json!({"box_id": id, "command": "perl /tmp/site/serve.pl 8000 /tmp/site >/dev/null 2>&1 &"}),
        )
        .await;
    assert_eq!(started["structuredContent"]["exit_code"], 0, "{}", text(&started));
    poll("the site in the box", async || {
        let r = mcp
            .call(
                "exec",
                json!({"box_id": id, "argv": ["perl", "-MIO::Socket::INET", "-e",
                    "IO::Socket::INET->new('127.0.0.1:8000') or exit 1"]}),
            )
            .await;
        (r["structuredContent"]["exit_code"] == 0).then_some(())
    })
    .await;

    // Open it and read it.
    let opened = mcp
        .call("page", json!({"box_id": id, "action": "navigate", "url": format!("{origin}/")}))
        .await;
    let page = &opened["structuredContent"];
    assert_eq!(page["title"], "MCP page", "{}", text(&opened));
    assert_eq!(page["url"], format!("{origin}/"));
    let tab = page["tab"].as_str().expect("the tab's id").to_owned();
    let tabs = mcp.call("list_tabs", json!({"box_id": id})).await;
    let listed = tabs["structuredContent"]["tabs"].as_array().expect("tabs").clone();
    assert!(
        listed.iter().any(|t| t["id"] == tab.as_str() && t["current"] == true),
        "{}",
        text(&tabs)
    );
    let read = mcp.call("page_text", json!({"box_id": id})).await;
    let content = read["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        content.contains("Served from inside the box") && content.contains("not yet"),
        "{content}"
    );
    assert!(text(&read).contains("\"truncated\":false"), "{}", text(&read));
    let cut = mcp.call("page_text", json!({"box_id": id, "max_bytes": 6})).await;
    assert_eq!(cut["content"][0]["text"], "Served");
    assert!(text(&cut).contains("\"truncated\":true"), "{}", text(&cut));
    let html = mcp.call("page_html", json!({"box_id": id, "tab": tab})).await;
    assert!(text(&html).contains(r#"<button id="go""#), "{}", text(&html));

    // Click the button by its selector; the page saw it.
    let clicked =
        mcp.call("page", json!({"box_id": id, "action": "click", "selector": "#go"})).await;
    assert!(text(&clicked).starts_with("clicked #go"), "{}", text(&clicked));
    let seen = mcp
        .call(
            "page",
            json!({"box_id": id, "action": "evaluate",
                   "expression": "document.getElementById('out').textContent"}),
        )
        .await;
    assert_eq!(seen["structuredContent"]["value"], "clicked 1", "{}", text(&seen));
    let seen = mcp
        .call("page", json!({"box_id": id, "action": "evaluate", "expression": "window.clicks"}))
        .await;
    assert_eq!(seen["structuredContent"]["value"], 1);
    assert_eq!(seen["structuredContent"]["type"], "number");

    // What the page refuses is a tool result with its code.
    let r = mcp
        .refused(
            "page",
            json!({"box_id": id, "action": "click", "selector": "#never", "timeout_ms": 200}),
        )
        .await;
    assert!(text(&r).starts_with("error[not_found]"), "{}", text(&r));
    let r = mcp
        .refused("page", json!({"box_id": id, "action": "evaluate", "expression": "nope.nope"}))
        .await;
    let t = text(&r);
    assert!(t.starts_with("error[page_error]") && t.contains("nope is not defined"), "{t}");
    let r = mcp.refused("page", json!({"box_id": id, "action": "fill", "selector": "#go"})).await;
    assert!(text(&r).contains("fill needs value"), "{}", text(&r));

    // Its screenshot: an image block that decodes, of the size it says.
    let shot = mcp.call("page_screenshot", json!({"box_id": id})).await;
    let (w, h, colours) = image(&shot);
    assert!(w >= 400 && h >= 200, "{w}x{h}");
    assert!(colours > 5, "the page is drawn: {colours} colours");
    assert!(text(&shot).contains(&format!("image {w}x{h} pixels")), "{}", text(&shot));

    // Tabs: open one, bring the first back, close the new one.
    let two = mcp
        .call(
            "page",
            json!({"box_id": id, "action": "open_tab", "url": format!("{origin}/check.html")}),
        )
        .await;
    let two_id = two["structuredContent"]["id"].as_str().expect("the new tab").to_owned();
    assert_eq!(two["structuredContent"]["title"], "Check");
    mcp.call("page", json!({"box_id": id, "action": "activate_tab", "tab": tab})).await;
    let current = mcp.call("page_text", json!({"box_id": id})).await;
    assert!(text(&current).contains("\"title\":\"MCP page\""), "{}", text(&current));
    mcp.call("page", json!({"box_id": id, "action": "close_tab", "tab": two_id})).await;
    let tabs = mcp.call("list_tabs", json!({"box_id": id})).await;
    assert!(
        !tabs["structuredContent"]["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == two_id.as_str()),
        "{}",
        text(&tabs)
    );
    let r = mcp.refused("page", json!({"box_id": id, "action": "close_tab", "tab": two_id})).await;
    let t = text(&r);
    assert!(t.starts_with("error[not_found]") && t.contains("list_tabs"), "{t}");

    // The login the page made, saved...
    let saved = mcp.call("save_state", json!({"box_id": id})).await;
    let state = saved["structuredContent"].clone();
    assert!(
        state["cookies"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "session" && c["value"] == "s3ss10n"),
        "{state}"
    );
    let cookies = state["cookies"].as_array().unwrap().len();
    let origins = state["origins"].as_array().unwrap().len();
    assert!(
        state["origins"].as_array().unwrap().iter().any(|o| o["origin"] == origin
            && o["local_storage"]
                .as_array()
                .unwrap()
                .iter()
                .any(|i| i["name"] == "user" && i["value"] == "alice")),
        "{state}"
    );
    // ...then gone from the browser...
    mcp.call(
        "page",
        json!({"box_id": id, "action": "evaluate",
               "expression": "document.cookie = 'session=; max-age=0; path=/'; localStorage.clear(); 1"}),
    )
    .await;
    let check = format!("{origin}/check.html");
    let who = open_and_read(mcp, id, &check).await;
    assert!(who.contains("user=null") && !who.contains("s3ss10n"), "{who}");
    // ...and back with load_state.
    let loaded = mcp.call("load_state", json!({"box_id": id, "state": state})).await;
    let done = &loaded["structuredContent"];
    assert_eq!(done["cookies"].as_u64(), Some(cookies as u64), "{done}");
    assert_eq!(done["origins"].as_u64(), Some(origins as u64), "{done}");
    let who = open_and_read(mcp, id, &check).await;
    assert!(who.contains("user=alice") && who.contains("session=s3ss10n"), "{who}");
}

/// Loads `url` in the current tab and answers the text it shows.
async fn open_and_read(mcp: &mut McpClient, id: &str, url: &str) -> String {
    mcp.call("page", json!({"box_id": id, "action": "navigate", "url": url})).await;
    let r = mcp.call("page_text", json!({"box_id": id})).await;
    r["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}
