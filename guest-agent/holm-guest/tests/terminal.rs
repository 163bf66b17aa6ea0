//! The terminal, against the real guest binary over a real WebSocket: a
//! login shell on a real pty (its size, a resize, UTF-8 both ways, Ctrl-C,
//! the exit status), a full-screen program (vi writing a file, top), and
//! refusals: before the upgrade in the one error shape, after it as `error`
//! frames that change nothing; a client that goes away hangs the terminal up.

mod common;

use std::time::Duration;

use common::{Guest, Options, eventually};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

const WAIT: Duration = Duration::from_secs(30);

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A terminal: the socket, and everything it printed so far.
struct Term {
    ws: Ws,
    out: Vec<u8>,
    events: Vec<Value>,
}

impl Term {
    async fn open(g: &Guest, query: &str) -> (Self, Value) {
        let url = format!("{}/v1/terminal?{query}", g.url.replace("http://", "ws://"));
        let mut req = url.into_client_request().unwrap();
        req.headers_mut().insert("authorization", format!("Bearer {}", g.secret).parse().unwrap());
        let (ws, response) = tokio_tungstenite::connect_async(req).await.expect("a WebSocket");
        assert_eq!(response.status(), 101);
        let mut t = Self { ws, out: Vec::new(), events: Vec::new() };
        let ready = t.event().await;
        assert_eq!(ready["type"], "ready", "{ready}");
        (t, ready)
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.ws.send(Message::binary(bytes.to_vec())).await.unwrap();
    }

    async fn control(&mut self, v: &str) {
        self.ws.send(Message::text(v.to_owned())).await.unwrap();
    }

    /// Reads one frame, keeping output and events. `None` at the end.
    async fn read(&mut self) -> Option<()> {
        let m = tokio::time::timeout(WAIT, self.ws.next())
            .await
            .unwrap_or_else(|_| panic!("no frame in {WAIT:?}; so far: {}", self.text()));
        match m?.ok()? {
            Message::Binary(b) => self.out.extend_from_slice(&b),
            Message::Text(t) => self.events.push(serde_json::from_str(t.as_str()).unwrap()),
            Message::Close(_) => return None,
            _ => {}
        }
        Some(())
    }

    async fn event(&mut self) -> Value {
        let seen = self.events.len();
        while self.events.len() == seen {
            self.read().await.expect("an event before the end");
        }
        self.events[seen].clone()
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.out).into_owned()
    }

    /// Reads until the output (after `from`) contains `want`.
    async fn until(&mut self, from: usize, want: &str) {
        while !String::from_utf8_lossy(&self.out[from..]).contains(want) {
            assert!(self.read().await.is_some(), "ended before {want:?}: {}", self.text());
        }
    }

    /// Types a line and reads until its answer shows.
    async fn run(&mut self, line: &str, want: &str) {
        let from = self.out.len();
        self.send(format!("{line}\r").as_bytes()).await;
        self.until(from, want).await;
    }

    /// Reads to the end and answers the exit event.
    async fn exit(&mut self) -> Value {
        while self.read().await.is_some() {}
        self.events.iter().rev().find(|e| e["type"] == "exit").cloned().expect("an exit event")
    }
}

fn guest_opts() -> Options {
    Options::default()
}

#[tokio::test]
async fn a_login_shell_has_its_size_utf8_ctrl_c_and_exit_status() {
    let g = Guest::start(guest_opts()).await;
    let (mut t, ready) = Term::open(&g, "cols=100&rows=30").await;
    assert_eq!((ready["cols"].as_u64(), ready["rows"].as_u64()), (Some(100), Some(30)));
    assert!(ready["pid"].as_u64().unwrap() > 1);
    // tty prints after stty: once its line is in, so is the size.
    t.run("stty size; tty", "/dev/pts/").await;
    assert!(t.text().contains("30 100"), "{}", t.text());

    // A resize reaches the pty (and its programs, with SIGWINCH).
    t.control(r#"{"type":"resize","cols":120,"rows":40}"#).await;
    t.run("stty size", "40 120").await;

    // UTF-8 both ways: typed bytes reach the program as they are, and the
    // program's bytes come back as they are.
    t.run("echo héllo | od -An -tx1", "68 c3 a9 6c 6c 6f 0a").await;
    t.run(r"printf '\xe2\x82\xac%s\n' done", "€done").await;

    // Ctrl-C goes to the program in the foreground.
    let from = t.out.len();
    t.send(b"sleep 100\r").await;
    t.until(from, "sleep 100").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    t.send(b"\x03").await;
    t.run("echo rc=$?", "rc=130").await;

    // A bad text frame is refused with an error frame; nothing changes.
    t.control("not json").await;
    let e = t.event().await;
    assert_eq!(e["type"], "error", "{e}");
    assert_eq!(e["error"]["code"], "invalid_request", "{e}");
    t.control(r#"{"type":"resize","cols":0,"rows":5000}"#).await;
    let e = t.event().await;
    let paths: Vec<&str> = e["error"]["details"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["cols", "rows"], "{e}");
    t.run("stty size", "40 120").await;

    t.send(b"exit 7\r").await;
    let exit = t.exit().await;
    assert_eq!(exit, json!({"type": "exit", "exit_code": 7}));
}

#[tokio::test]
async fn full_screen_programs_work_vi_writes_a_file_and_top_draws() {
    common::require_programs(&["vi", "top"]);
    let g = Guest::start(guest_opts()).await;
    let file = g.home.join("note.txt");
    let q = format!("cols=80&rows=24&command=vi+{}", file.display());
    let (mut t, _) = Term::open(&g, &q).await;
    // vi draws its empty buffer: a column of ~.
    t.until(0, "~").await;
    t.send("ihéllo wörld\x1b".as_bytes()).await;
    t.send(b":wq\r").await;
    let exit = t.exit().await;
    assert_eq!(exit["exit_code"], 0, "{exit}; {}", t.text());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "héllo wörld\n");

    let (mut t, _) = Term::open(&g, "cols=100&rows=30&command=top+-n+1").await;
    let exit = t.exit().await;
    assert_eq!(exit["exit_code"], 0, "{exit}");
    assert!(t.text().contains("load average"), "{}", t.text());
}

#[tokio::test]
async fn bad_requests_are_refused_before_the_upgrade_and_a_hangup_ends_the_program() {
    let g = Guest::start(guest_opts()).await;
    // Not a WebSocket.
    let r = g.get("/v1/terminal").send().await.unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_request");
    assert!(body["error"]["request_id"].is_string());
    // A bad query or working directory, each named, before anything starts.
    let upgrade = |q: &str| {
        g.get(&format!("/v1/terminal?{q}"))
            .header("connection", "Upgrade")
            .header("upgrade", "websocket")
            .header("sec-websocket-version", "13")
            .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
    };
    let r = upgrade("cols=0&rows=5000&shell=zsh").send().await.unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    let issues = body["error"]["details"]["issues"].to_string();
    assert!(issues.contains("shell"), "{body}");
    let r = upgrade("cols=0&rows=5000").send().await.unwrap();
    let body: Value = r.json().await.unwrap();
    let issues = body["error"]["details"]["issues"].to_string();
    assert!(issues.contains("\"cols\"") && issues.contains("\"rows\""), "{body}");
    let r = upgrade("cwd=/nonexistent/dir").send().await.unwrap();
    assert_eq!(r.status(), 404);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "file_not_found", "{body}");
    // Without the secret.
    let r = g
        .http
        .get(format!("{}/v1/terminal", g.url))
        .header("connection", "Upgrade")
        .header("upgrade", "websocket")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    // A client that goes away hangs the terminal up: its program ends.
    let (t, ready) = Term::open(&g, "command=sleep+1000").await;
    let pid = ready["pid"].as_i64().unwrap() as i32;
    // SAFETY: kill with signal 0 only checks that the process exists.
    assert_eq!(unsafe { libc::kill(pid, 0) }, 0);
    drop(t);
    eventually(WAIT, "the hung-up program to end", || async {
        // SAFETY: as above.
        (unsafe { libc::kill(pid, 0) } != 0).then_some(())
    })
    .await;
}
