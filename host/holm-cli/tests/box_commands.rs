//! Processes, files and the terminal from the real `holm` binary against a
//! real holmd and a real box: `holm ps|spawn|logs|kill|write`, `holm
//! ls|cat|mkdir|mv|rm|cp` with `BOX:/PATH`, and `holm shell` on a real pty
//! on this side (raw mode, the window's size and its changes, Ctrl-C, UTF-8,
//! a full-screen program, the exit status), each refusal in the one error
//! shape with nothing changed.

mod pty;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use holm_testkit::{TestServer, e2e_enabled};
use serde_json::Value;

fn holm_cmd(server: &TestServer, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_holm"));
    c.args(args).env("HOLM_SERVER_URL", &server.url).env("HOLM_SERVER_TOKEN", &server.token);
    c
}

fn holm(server: &TestServer, args: &[&str]) -> Output {
    holm_cmd(server, args).stdin(Stdio::null()).output().expect("run holm")
}

/// Runs `holm` and answers its standard output, failing on a non-zero exit.
fn ok(server: &TestServer, args: &[&str]) -> String {
    let o = holm(server, args);
    assert!(o.status.success(), "holm {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs `holm --json ...` that must fail: its exit code and error body.
fn refused(server: &TestServer, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let o = holm(server, &all);
    assert!(!o.status.success(), "holm {args:?} should fail");
    let err: Value = serde_json::from_slice(&o.stderr)
        .unwrap_or_else(|_| panic!("a JSON error: {}", String::from_utf8_lossy(&o.stderr)));
    assert!(err["error"]["message"].is_string(), "{err}");
    (o.status.code().unwrap_or(-1), err)
}

fn json(server: &TestServer, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(server, &all)).expect("JSON")
}

// The server runs in this process while `holm` blocks this thread: the
// server needs a thread of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_files_and_the_terminal_from_the_cli() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let id = new_on_a_terminal(&server);
    files(&server, &id);
    processes(&server, &id);
    shell(&server, &id);
    terminal_library(&server, &id).await;
    ok(&server, &["rm", &id]);
}

/// `holm new` in a person's terminal: standard error shows the box's stages
/// as they pass, standard output (here a file) gets the id alone. With
/// `--json`, or when standard error is not a terminal, nothing is shown.
fn new_on_a_terminal(server: &TestServer) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("id.txt");
    let file = std::fs::File::create(&out).unwrap();
    let cmd = holm_cmd(server, &["new", "--ttl", "10", "--no-browser"]);
    let mut t = pty::Pty::spawn_with(cmd, 100, 30, Some(Stdio::from(file)));
    assert_eq!(t.wait(), Some(0), "{}", t.text());
    let id = std::fs::read_to_string(&out).unwrap();
    assert!(id.starts_with("box_") && id.ends_with('\n') && id.lines().count() == 1, "{id:?}");
    let shown = t.text();
    for stage in ["container", "desktop"] {
        assert!(
            shown.lines().any(|l| l.contains('✓') && l.contains(stage)),
            "{stage} is ticked off: {shown:?}"
        );
    }
    assert!(!shown.contains("box_"), "the id goes to standard output only: {shown:?}");
    // Not a terminal: standard error stays quiet.
    let o = holm(server, &["new", "--ttl", "5", "--no-browser"]);
    assert!(o.status.success());
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    ok(server, &["rm", String::from_utf8_lossy(&o.stdout).trim()]);
    id.trim().to_owned()
}

fn files(server: &TestServer, id: &str) {
    let at = |p: &str| format!("{id}:{p}");
    assert_eq!(ok(server, &["mkdir", &at("/tmp/doors/sub")]).trim(), "/tmp/doors/sub");
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("a.txt");
    std::fs::write(&local, "héllo wörld\n").unwrap();
    ok(server, &["cp", local.to_str().unwrap(), &at("/tmp/doors/a.txt")]);
    assert_eq!(ok(server, &["cat", &at("/tmp/doors/a.txt")]), "héllo wörld\n");

    let listing = ok(server, &["ls", &at("/tmp/doors")]);
    assert!(listing.starts_with("TYPE"), "{listing}");
    assert!(listing.lines().any(|l| l.starts_with("file") && l.ends_with("/tmp/doors/a.txt")));
    assert!(listing.lines().any(|l| l.starts_with("dir") && l.ends_with("/tmp/doors/sub")));
    let entries = json(server, &["ls", &at("/tmp/doors")]);
    let names: Vec<&str> =
        entries.as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"a.txt") && names.contains(&"sub"), "{entries}");

    let moved = json(server, &["mv", &at("/tmp/doors/a.txt"), &at("/tmp/doors/b.txt")]);
    assert_eq!(moved[0]["path"], "/tmp/doors/b.txt");
    let (code, err) = refused(server, &["cat", &at("/tmp/doors/a.txt")]);
    assert_eq!((code, err["error"]["code"].as_str()), (1, Some("file_not_found")), "{err}");

    // Bad input: the one error shape, exit 1, nothing changed.
    let (code, err) = refused(server, &["ls", &at("tmp/doors")]);
    assert_eq!((code, err["error"]["code"].as_str()), (1, Some("invalid_request")), "{err}");
    let (_, err) = refused(server, &["ls", id]);
    assert!(err["error"]["hint"].as_str().unwrap().contains(&format!("{id}:/root")), "{err}");
    let (_, err) = refused(server, &["rm", &at("/tmp/doors/b.txt"), id]);
    assert_eq!(err["error"]["code"], "invalid_request", "{err}");
    assert_eq!(ok(server, &["cat", &at("/tmp/doors/b.txt")]), "héllo wörld\n", "the file is kept");
    assert_eq!(json(server, &["get", id])["state"], "running", "the box is kept");
    let (_, err) = refused(server, &["rm", &at("/tmp/doors")]);
    assert_eq!(err["error"]["code"], "directory_not_empty", "{err}");
    let (_, err) = refused(server, &["mv", &at("/tmp/doors/b.txt"), "box_other:/tmp/x"]);
    assert_eq!(err["error"]["code"], "invalid_request", "{err}");

    assert_eq!(ok(server, &["rm", &at("/tmp/doors/b.txt")]).trim(), at("/tmp/doors/b.txt"));
    ok(server, &["rm", "-r", &at("/tmp/doors")]);
    let (_, err) = refused(server, &["ls", &at("/tmp/doors")]);
    assert_eq!(err["error"]["code"], "file_not_found", "{err}");
}

fn processes(server: &TestServer, id: &str) {
    let script = "echo out; echo err >&2; read line; echo \"got $line\"; exit 3";
    let pid = ok(server, &["spawn", id, "--tag", "doors", "--", "sh", "-c", script]);
    let pid = pid.trim();
    assert!(pid.starts_with("p_"), "{pid}");
    let ps = ok(server, &["ps", id]);
    assert!(
        ps.lines().any(|l| l.starts_with(pid) && l.contains("running") && l.contains("doors")),
        "{ps}"
    );

    // Standard input, as it comes, then closed.
    let mut w =
        holm_cmd(server, &["write", id, pid, "--eof"]).stdin(Stdio::piped()).spawn().unwrap();
    w.stdin.take().unwrap().write_all(b"hello\n").unwrap();
    assert!(w.wait().unwrap().success());

    // Followed to its end, `holm logs` exits with the process's code.
    let o = holm(server, &["logs", id, pid, "--follow"]);
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "out\ngot hello\n");
    assert_eq!(String::from_utf8_lossy(&o.stderr), "err\n");
    let lines = ok(server, &["--json", "logs", id, pid]);
    let events: Vec<Value> = lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events.last().unwrap()["type"], "exit", "{lines}");
    assert_eq!(events.last().unwrap()["exit_code"], 3);
    let listed = json(server, &["ps", id]);
    let p = listed.as_array().unwrap().iter().find(|p| p["id"] == pid).unwrap();
    assert_eq!((p["state"].as_str(), p["exit_code"].as_i64()), (Some("exited"), Some(3)));

    // A signal by name; a name that is not a signal changes nothing.
    let sleeper = ok(server, &["spawn", id, "--", "sleep", "600"]);
    let sleeper = sleeper.trim();
    let (code, err) = refused(server, &["kill", id, sleeper, "--signal", "NOPE"]);
    assert_eq!((code, err["error"]["code"].as_str()), (1, Some("invalid_request")), "{err}");
    assert!(
        ok(server, &["ps", id]).lines().any(|l| l.starts_with(sleeper) && l.contains("running"))
    );
    let killed = json(server, &["kill", id, sleeper, "--signal", "KILL"]);
    assert_eq!(killed["id"], sleeper);
    let o = holm(server, &["logs", id, sleeper, "-f"]);
    assert_eq!(o.status.code(), Some(137), "128 + SIGKILL");

    // An unknown process.
    for args in [&["logs", id, "p_999"][..], &["kill", id, "p_999"], &["write", id, "p_999"]] {
        let (code, err) = refused(server, args);
        assert_eq!(
            (code, err["error"]["code"].as_str()),
            (1, Some("not_found")),
            "{args:?}: {err}"
        );
    }
}

fn shell(server: &TestServer, id: &str) {
    // A login shell on this side's pty, 100x30.
    let mut t = pty::Pty::spawn(holm_cmd(server, &["shell", id]), 100, 30);
    t.wait_for("# ");
    t.run("stty size", "30 100");
    // A change of this window's size reaches the box (SIGWINCH).
    t.resize(120, 40);
    t.run_until("stty size", "40 120", "# ");
    // Typed UTF-8 reaches the box's programs byte for byte.
    t.run("echo héllo | od -An -tx1", "68 c3 a9 6c 6c 6f 0a");
    // Ctrl-C goes to the box, not to holm.
    // It is sent once the shell printed, so with `sleep` about to start or
    // running: either way the shell's status is 130.
    t.run("echo started-$((40+2)); sleep 100", "started-42");
    t.write(b"\x03");
    t.run("echo rc=$?", "rc=130");
    t.write(b"exit 5\r");
    assert_eq!(t.wait(), Some(5), "holm shell exits with the shell's code: {}", t.text());
    assert!(t.cooked(), "the terminal is back in its own mode");

    // A full-screen program, and a command's bytes as they are.
    let mut t = pty::Pty::spawn(holm_cmd(server, &["shell", id, "--", "top", "-n", "1"]), 100, 30);
    assert_eq!(t.wait(), Some(0), "{}", t.text());
    // What it printed may still be on its way from the pty.
    t.wait_for("load average");
    let mut t = pty::Pty::spawn(
        holm_cmd(server, &["shell", id, "--cwd", "/tmp", "--", "printf", r"\xe2\x82\xac%s:", "ok"]),
        80,
        24,
    );
    assert_eq!(t.wait(), Some(0));
    t.wait_for("€ok:");

    // Standard input from a pipe: typed as it comes, its end is Ctrl-D.
    let mut c = holm_cmd(server, &["shell", id]);
    let mut child = c.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"echo piped-$((6*7)); exit 3\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stdout).contains("piped-42"));

    // A bad working directory is refused before anything starts.
    let (code, err) = refused(server, &["shell", id, "--cwd", "/nonexistent"]);
    assert_eq!((code, err["error"]["code"].as_str()), (1, Some("file_not_found")), "{err}");
}

/// The library's terminal: a closed one refuses input in the one error
/// shape.
async fn terminal_library(server: &TestServer, id: &str) {
    use holm_client::TerminalOutput;
    use holm_proto::terminal::TerminalQuery;
    let b = server.client.boxed(id);
    let q = TerminalQuery { command: Some("exit 4".into()), ..TerminalQuery::default() };
    let t = b.terminal(&q).await.unwrap();
    let (mut writer, mut reader) = t.split();
    let mut end = None;
    while let Some(out) = reader.next().await {
        if let TerminalOutput::Exit { exit_code, .. } = out.unwrap() {
            end = exit_code;
        }
    }
    assert_eq!(end, Some(4));
    let e = writer.write(&b"ls\r"[..]).await.unwrap_err();
    assert_eq!(e.api().map(|a| a.code), Some(holm_proto::ErrorCode::Conflict));
    let e = writer.resize(100, 30).await.unwrap_err();
    assert_eq!(e.api().map(|a| a.code), Some(holm_proto::ErrorCode::Conflict));
    let e =
        b.terminal(&TerminalQuery { cols: Some(0), ..TerminalQuery::default() }).await.unwrap_err();
    assert_eq!(e.api().map(|a| a.code), Some(holm_proto::ErrorCode::InvalidRequest));
}
