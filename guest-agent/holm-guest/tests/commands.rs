//! Commands and background processes, against the real guest binary: run and
//! wait, streams, timeouts that kill whole process groups, stdin, signals,
//! and output logs read from cursors.

mod common;

use std::time::Duration;

use common::{Guest, Options, eventually};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

async fn guest() -> Guest {
    Guest::start(Options::default()).await
}

/// POSTs JSON and answers the status and the body.
async fn post(g: &Guest, path: &str, body: Value) -> (u16, Value) {
    let r = g.post(path).json(&body).send().await.unwrap();
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    (status, if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap() })
}

async fn get(g: &Guest, path: &str) -> (u16, Value) {
    let r = g.get(path).send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

async fn run(g: &Guest, body: Value) -> Value {
    let (status, v) = post(g, "/v1/commands/run", body).await;
    assert_eq!(status, 200, "{v}");
    v
}

/// Whether a process exists (the guest reaps its orphans, so an ended one
/// disappears).
fn alive(pid: i64) -> bool {
    // SAFETY: kill with signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as i32, 0) == 0 }
}

async fn gone(pid: i64) {
    eventually(WAIT, &format!("pid {pid} to end"), || async { (!alive(pid)).then_some(()) }).await;
}

/// Reads NDJSON lines from a streamed response as they arrive.
struct NdJson {
    response: reqwest::Response,
    buf: Vec<u8>,
}

impl NdJson {
    fn new(response: reqwest::Response) -> Self {
        Self { response, buf: Vec::new() }
    }

    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(at) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=at).collect();
                return Some(serde_json::from_slice(&line[..line.len() - 1]).unwrap());
            }
            let chunk = tokio::time::timeout(WAIT, self.response.chunk())
                .await
                .expect("the stream went quiet")
                .unwrap();
            match chunk {
                Some(bytes) => self.buf.extend_from_slice(&bytes),
                None => {
                    assert!(self.buf.is_empty(), "a partial last line");
                    return None;
                }
            }
        }
    }

    async fn all(mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(v) = self.next().await {
            out.push(v);
        }
        out
    }
}

fn texts(events: &[Value], kind: &str) -> String {
    events.iter().filter(|e| e["type"] == kind).map(|e| e["data"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn run_answers_exit_code_stdout_and_stderr() {
    let g = guest().await;
    let r = run(&g, json!({"command": "echo out; echo err >&2; exit 3"})).await;
    assert_eq!(r["exit_code"], 3);
    assert_eq!(r["signal"], Value::Null);
    assert_eq!(r["stdout"], "out\n");
    assert_eq!(r["stderr"], "err\n");
    assert_eq!(r["timed_out"], false);
    assert_eq!(r["truncated"], false);
    assert!(r["duration_ms"].is_u64());
    // argv runs without a shell: nothing is split or expanded.
    let r = run(&g, json!({"argv": ["printf", "%s|", "a b", "$HOME", "*"]})).await;
    assert_eq!(r["stdout"], "a b|$HOME|*|");
    assert_eq!(r["exit_code"], 0);
    // Output is UTF-8; bytes that are not become U+FFFD.
    let r = run(&g, json!({"command": "printf 'caf\\xc3\\xa9 \\xff!'"})).await;
    assert_eq!(r["stdout"], "café \u{FFFD}!");
}

#[tokio::test]
async fn stdin_env_and_cwd() {
    let g = guest().await;
    let r = run(&g, json!({"argv": ["cat"], "stdin": "hello\nwörld"})).await;
    assert_eq!(r["stdout"], "hello\nwörld");
    // Without stdin, input is empty rather than left open.
    let r = run(&g, json!({"argv": ["cat"]})).await;
    assert_eq!(r["stdout"], "");
    assert_eq!(r["exit_code"], 0);

    let r = run(&g, json!({"command": "printf '%s|%s' \"$HOLM_X\" \"$PATH\"", "env": {"HOLM_X": "v 1", "PATH": "/usr/bin:/bin"}})).await;
    assert_eq!(r["stdout"], "v 1|/usr/bin:/bin");

    // The base environment: home, display of screen 0, a UTF-8 locale; not
    // the guest's own variables, which hold the secret.
    let r = run(&g, json!({"argv": ["env"]})).await;
    let env = r["stdout"].as_str().unwrap();
    let home = g.home.to_str().unwrap();
    assert!(env.lines().any(|l| l == format!("HOME={home}")), "{env}");
    assert!(env.lines().any(|l| l == format!("DISPLAY={}", g.display(0))), "{env}");
    assert!(env.lines().any(|l| l == "LANG=C.UTF-8"), "{env}");
    assert!(env.lines().any(|l| l.starts_with("PATH=/")), "{env}");
    assert!(env.lines().any(|l| l.starts_with("USER=")), "{env}");
    assert!(!env.contains("HOLM_BOX_SECRET") && !env.contains(&g.secret), "{env}");

    // The default working directory is home; a relative cwd is under home.
    std::fs::create_dir(g.home.join("sub dir")).unwrap();
    let r = run(&g, json!({"argv": ["pwd"]})).await;
    assert_eq!(r["stdout"], format!("{home}\n"));
    let r = run(&g, json!({"argv": ["pwd"], "cwd": "sub dir"})).await;
    assert_eq!(r["stdout"], format!("{home}/sub dir\n"));
    let r = run(&g, json!({"argv": ["pwd"], "cwd": "/tmp"})).await;
    assert_eq!(r["stdout"], "/tmp\n");

    // A working directory that does not exist is named.
    let missing = format!("{home}/no-such-dir");
    let (status, v) = post(&g, "/v1/commands/run", json!({"argv": ["pwd"], "cwd": missing})).await;
    assert_eq!(status, 404, "{v}");
    assert_eq!(v["error"]["code"], "file_not_found");
    assert!(v["error"]["message"].as_str().unwrap().contains(&missing), "{v}");
    let (status, v) =
        post(&g, "/v1/commands/run", json!({"argv": ["pwd"], "cwd": "/etc/hostname"})).await;
    assert_eq!(status, 409, "{v}");
    assert_eq!(v["error"]["code"], "not_a_directory");
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group() {
    let g = guest().await;
    let r = run(&g, json!({"command": "sleep 300 & echo $!; sleep 300", "timeout_ms": 300})).await;
    assert_eq!(r["timed_out"], true, "{r}");
    assert_eq!(r["exit_code"], Value::Null);
    assert_eq!(r["signal"], "SIGKILL");
    // The output written before the timeout is kept.
    let grandchild: i64 = r["stdout"].as_str().unwrap().trim().parse().unwrap();
    gone(grandchild).await;
}

#[tokio::test]
async fn output_past_the_limit_is_dropped_while_the_command_runs_on() {
    let g = guest().await;
    let r = run(
        &g,
        json!({"command": "head -c 3000000 /dev/zero | tr '\\0' a; echo done >&2", "output_limit": 1000}),
    )
    .await;
    assert_eq!(r["stdout"], "a".repeat(1000));
    assert_eq!(r["truncated"], true);
    // Had the pipe been closed at the limit, `tr` would have died of SIGPIPE.
    assert_eq!(r["exit_code"], 0);
    assert_eq!(r["stderr"], "done\n");
}

#[tokio::test]
async fn a_background_grandchild_does_not_hold_the_command_open() {
    let g = guest().await;
    // The grandchild keeps stdout open; the command still ends with its shell.
    let r = run(&g, json!({"command": "sleep 300 & echo $!"})).await;
    assert_eq!(r["exit_code"], 0);
    assert_eq!(r["timed_out"], false);
    let grandchild: i64 = r["stdout"].as_str().unwrap().trim().parse().unwrap();
    assert!(alive(grandchild), "a normal end leaves background children alone");
    // SAFETY: kill takes plain integers.
    unsafe { libc::kill(grandchild as i32, libc::SIGKILL) };
}

#[tokio::test]
async fn a_missing_program_is_file_not_found_naming_it() {
    let g = guest().await;
    for route in ["/v1/commands/run", "/v1/commands/stream"] {
        let (status, v) = post(&g, route, json!({"argv": ["holm-no-such-program", "x"]})).await;
        assert_eq!(status, 404, "{route}: {v}");
        assert_eq!(v["error"]["code"], "file_not_found");
        assert!(v["error"]["message"].as_str().unwrap().contains("holm-no-such-program"), "{v}");
    }
    let (status, v) = post(&g, "/v1/processes", json!({"argv": ["/nonexistent/prog"]})).await;
    assert_eq!(status, 404, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("/nonexistent/prog"), "{v}");
}

#[tokio::test]
async fn bad_requests_name_every_wrong_field() {
    let g = guest().await;
    let cases = [
        (json!({"argv": ["ls"], "command": "ls"}), vec!["command"]),
        (json!({}), vec!["argv"]),
        (json!({"argv": []}), vec!["argv"]),
        (json!({"argv": ["true"], "env": {"A=B": "x", "OK": "y"}}), vec!["env.A=B"]),
        (json!({"argv": ["true"], "timeout_ms": 86_400_001}), vec!["timeout_ms"]),
        (json!({"argv": ["true"], "colour": 1, "shel": true}), vec!["colour", "shel"]),
        (json!({"argv": "ls"}), vec!["argv"]),
    ];
    for (body, fields) in cases {
        for route in ["/v1/commands/run", "/v1/commands/stream"] {
            let (status, v) = post(&g, route, body.clone()).await;
            assert_eq!(status, 400, "{route} {body}: {v}");
            assert_eq!(v["error"]["code"], "invalid_request");
            let paths: Vec<&str> = v["error"]["details"]["issues"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["path"].as_str().unwrap())
                .collect();
            assert_eq!(paths, fields, "{route} {body}: {v}");
        }
    }
    let (status, v) =
        post(&g, "/v1/processes", json!({"command": "true", "tagg": "x", "stdin": ""})).await;
    assert_eq!(status, 400, "{v}");
    let paths: Vec<&str> = v["error"]["details"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["stdin", "tagg"]);
    let r = g.get("/v1/processes?tags=x&stat=running").send().await.unwrap();
    assert_eq!(r.status(), 400);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["details"]["issues"].as_array().unwrap().len(), 2, "{v}");
}

#[tokio::test]
async fn every_command_route_needs_the_secret() {
    let g = guest().await;
    for (method, path) in [
        (reqwest::Method::POST, "/v1/commands/run"),
        (reqwest::Method::POST, "/v1/commands/stream"),
        (reqwest::Method::POST, "/v1/processes"),
        (reqwest::Method::GET, "/v1/processes"),
        (reqwest::Method::GET, "/v1/processes/p_1/output"),
        (reqwest::Method::POST, "/v1/processes/p_1/stdin"),
        (reqwest::Method::DELETE, "/v1/processes/p_1"),
    ] {
        let r = g
            .http
            .request(method.clone(), format!("{}{path}", g.url))
            .json(&json!({"argv": ["touch", g.home.join("ran").to_str().unwrap()]}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "{method} {path}");
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["error"]["code"], "unauthorized");
    }
    assert!(!g.home.join("ran").exists(), "nothing ran without the secret");
}

#[tokio::test]
async fn a_stream_sends_events_in_order_as_they_happen() {
    let g = guest().await;
    let r = g
        .post("/v1/commands/stream")
        .json(&json!({"command": "echo first; echo warn >&2; while [ ! -e go ]; do sleep 0.02; done; echo second"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/x-ndjson");
    let mut stream = NdJson::new(r);
    let start = stream.next().await.unwrap();
    assert_eq!(start["type"], "start");
    assert!(start["pid"].as_u64().unwrap() > 1);
    // "first" and "warn" arrive while the command is still waiting for the
    // file: the stream is not held back until the end.
    let mut early = Vec::new();
    while texts(&early, "stdout") != "first\n" || texts(&early, "stderr") != "warn\n" {
        let e = stream.next().await.unwrap();
        assert!(e["type"] == "stdout" || e["type"] == "stderr", "{e}");
        early.push(e);
    }
    std::fs::write(g.home.join("go"), "").unwrap();
    let rest = stream.all().await;
    let exit = rest.last().unwrap();
    assert_eq!(exit["type"], "exit", "{rest:?}");
    assert_eq!(exit["exit_code"], 0);
    assert_eq!(exit["timed_out"], false);
    assert_eq!(texts(&rest[..rest.len() - 1], "stdout"), "second\n");
    assert_eq!(rest.iter().filter(|e| e["type"] == "exit").count(), 1);
}

#[tokio::test]
async fn a_stream_times_out_with_an_exit_event() {
    let g = guest().await;
    let r = g
        .post("/v1/commands/stream")
        .json(&json!({"command": "echo x; sleep 300", "timeout_ms": 300, "stdin": "ignored"}))
        .send()
        .await
        .unwrap();
    let events = NdJson::new(r).all().await;
    assert_eq!(events[0]["type"], "start");
    assert_eq!(texts(&events, "stdout"), "x\n");
    let exit = events.last().unwrap();
    assert_eq!(exit["type"], "exit");
    assert_eq!(exit["timed_out"], true);
    assert_eq!(exit["signal"], "SIGKILL");
}

#[tokio::test]
async fn a_client_that_goes_away_takes_its_stream_command_with_it() {
    let g = guest().await;
    let r = g
        .post("/v1/commands/stream")
        .json(&json!({"command": "sleep 300 & echo $!; wait"}))
        .send()
        .await
        .unwrap();
    let mut stream = NdJson::new(r);
    let shell = stream.next().await.unwrap()["pid"].as_i64().unwrap();
    let line = stream.next().await.unwrap();
    let grandchild: i64 = line["data"].as_str().unwrap().trim().parse().unwrap();
    assert!(alive(shell) && alive(grandchild));
    drop(stream);
    gone(shell).await;
    gone(grandchild).await;
}

// ---------------------------------------------------------------------------
// Background processes

async fn start(g: &Guest, body: Value) -> Value {
    let (status, v) = post(g, "/v1/processes", body).await;
    assert_eq!(status, 201, "{v}");
    v
}

/// Reads a process's whole output with pages, from `cursor` until it is done.
async fn read_all(g: &Guest, id: &str, mut cursor: u64) -> Vec<Value> {
    let mut events = Vec::new();
    loop {
        let (status, page) =
            get(g, &format!("/v1/processes/{id}/output?cursor={cursor}&wait_ms=5000")).await;
        assert_eq!(status, 200, "{page}");
        for e in page["data"].as_array().unwrap() {
            events.push(e.clone());
        }
        cursor = page["next_cursor"].as_u64().unwrap();
        if page["done"] == true {
            return events;
        }
    }
}

async fn follow(g: &Guest, id: &str, cursor: u64) -> NdJson {
    let r = g
        .get(&format!("/v1/processes/{id}/output?follow=true&cursor={cursor}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/x-ndjson");
    NdJson::new(r)
}

fn expected_seq(from: u32, to: u32) -> String {
    (from..=to).map(|i| format!("{i}\n")).collect()
}

#[tokio::test]
async fn process_output_is_read_from_cursors_and_a_reconnect_misses_nothing() {
    let g = guest().await;
    let p = start(
        &g,
        json!({"command": "seq 1 20000; while [ ! -e go ]; do sleep 0.02; done; seq 20001 40000", "tag": "seq"}),
    )
    .await;
    let id = p["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("p_"), "{p}");
    assert_eq!(p["state"], "running");
    assert_eq!(p["tag"], "seq");

    // Follow, take one event, and go away mid-stream.
    let mut stream = follow(&g, &id, 0).await;
    let first = stream.next().await.unwrap();
    assert_eq!(first["cursor"], 1);
    drop(stream);
    std::fs::write(g.home.join("go"), "").unwrap();
    // Reconnect with the last cursor seen and read to the end.
    let rest = follow(&g, &id, 1).await.all().await;
    let mut all = vec![first];
    all.extend(rest);
    let cursors: Vec<u64> = all.iter().map(|e| e["cursor"].as_u64().unwrap()).collect();
    assert_eq!(
        cursors,
        (1..=cursors.len() as u64).collect::<Vec<_>>(),
        "no event is missed or repeated"
    );
    assert_eq!(texts(&all, "stdout"), expected_seq(1, 40000));
    let exit = all.last().unwrap();
    assert_eq!(exit["type"], "exit");
    assert_eq!(exit["exit_code"], 0);

    // Pages read the same events, and a page from the middle carries on.
    let paged = read_all(&g, &id, 0).await;
    assert_eq!(paged, all);
    let from_middle = read_all(&g, &id, 3).await;
    assert_eq!(from_middle, all[3..]);
    // Once done, following ends at once, and a cursor from the future is refused.
    let last = exit["cursor"].as_u64().unwrap();
    assert!(follow(&g, &id, last).await.all().await.is_empty());
    let (status, v) = get(&g, &format!("/v1/processes/{id}/output?cursor={}", last + 5)).await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["error"]["details"]["issues"][0]["path"], "cursor");
    let (_, info) = get(&g, &format!("/v1/processes/{id}")).await;
    assert_eq!(info["state"], "exited");
    assert_eq!(info["exit_code"], 0);
    assert_eq!(info["next_cursor"], last);
}

#[tokio::test]
async fn a_long_poll_answers_the_first_event_when_it_comes() {
    let g = guest().await;
    let p =
        start(&g, json!({"command": "while [ ! -e go ]; do sleep 0.02; done; echo late"})).await;
    let id = p["id"].as_str().unwrap().to_owned();
    let (_, page) = get(&g, &format!("/v1/processes/{id}/output")).await;
    assert_eq!(page["data"], json!([]));
    assert_eq!(page["done"], false);
    let url = format!("/v1/processes/{id}/output?cursor=0&wait_ms=30000");
    let poll = g.get(&url).send();
    let home = g.home.clone();
    let (r, ()) = tokio::join!(poll, async move {
        std::fs::write(home.join("go"), "").unwrap();
    });
    let page: Value = r.unwrap().json().await.unwrap();
    let data = page["data"].as_array().unwrap();
    assert!(!data.is_empty(), "{page}");
    assert_eq!(data[0]["type"], "stdout");
    assert_eq!(data[0]["data"], "late\n");
}

#[tokio::test]
async fn stdin_is_written_in_order_and_eof_closes_it() {
    let g = guest().await;
    let p = start(&g, json!({"argv": ["cat"]})).await;
    let id = p["id"].as_str().unwrap().to_owned();
    let r = g.post(&format!("/v1/processes/{id}/stdin")).body("hello ").send().await.unwrap();
    assert_eq!(r.status(), 204);
    let r =
        g.post(&format!("/v1/processes/{id}/stdin?eof=true")).body("wörld\n").send().await.unwrap();
    assert_eq!(r.status(), 204);
    let events = follow(&g, &id, 0).await.all().await;
    assert_eq!(texts(&events, "stdout"), "hello wörld\n");
    assert_eq!(events.last().unwrap()["exit_code"], 0, "cat saw the end of its input");
    let r = g.post(&format!("/v1/processes/{id}/stdin")).body("more").send().await.unwrap();
    assert_eq!(r.status(), 409);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], "conflict");

    // Closing without writing, and writing after the close, on a process that
    // keeps running.
    let p = start(&g, json!({"command": "cat; echo closed; sleep 300"})).await;
    let id = p["id"].as_str().unwrap().to_owned();
    let r = g.post(&format!("/v1/processes/{id}/stdin?eof=true")).send().await.unwrap();
    assert_eq!(r.status(), 204);
    let r = g.post(&format!("/v1/processes/{id}/stdin")).body("x").send().await.unwrap();
    assert_eq!(r.status(), 409);
    let v: Value = r.json().await.unwrap();
    assert!(v["error"]["message"].as_str().unwrap().contains("closed"), "{v}");
    let mut stream = follow(&g, &id, 0).await;
    assert_eq!(stream.next().await.unwrap()["data"], "closed\n");
}

#[tokio::test]
async fn signals_by_name_and_number_reach_the_process_group() {
    let g = guest().await;
    let p = start(&g, json!({"argv": ["sleep", "300"]})).await;
    let id = p["id"].as_str().unwrap().to_owned();
    let (status, v) =
        post(&g, &format!("/v1/processes/{id}/signal"), json!({"signal": "TERM"})).await;
    assert_eq!(status, 204, "{v}");
    let info = eventually(WAIT, "the process to end", || async {
        let (_, info) = get(&g, &format!("/v1/processes/{id}")).await;
        (info["state"] == "exited").then_some(info)
    })
    .await;
    assert_eq!(info["signal"], "SIGTERM");
    assert_eq!(info["exit_code"], Value::Null);
    let (status, v) =
        post(&g, &format!("/v1/processes/{id}/signal"), json!({"signal": "TERM"})).await;
    assert_eq!(status, 409, "{v}");

    // A trap sees the signal; the exit code is its own.
    let p = start(&g, json!({"command": "trap 'echo got USR1; exit 7' USR1; echo ready; while true; do sleep 0.05; done"})).await;
    let id = p["id"].as_str().unwrap().to_owned();
    let mut stream = follow(&g, &id, 0).await;
    assert_eq!(stream.next().await.unwrap()["data"], "ready\n");
    let (status, _) =
        post(&g, &format!("/v1/processes/{id}/signal"), json!({"signal": "SIGUSR1"})).await;
    assert_eq!(status, 204);
    let events = stream.all().await;
    assert_eq!(texts(&events, "stdout"), "got USR1\n");
    assert_eq!(events.last().unwrap()["exit_code"], 7);

    // By number, to the whole group: the grandchild ends too.
    let p = start(&g, json!({"command": "sleep 300 & echo $!; wait"})).await;
    let id = p["id"].as_str().unwrap().to_owned();
    let mut stream = follow(&g, &id, 0).await;
    let grandchild: i64 =
        stream.next().await.unwrap()["data"].as_str().unwrap().trim().parse().unwrap();
    let (status, _) = post(&g, &format!("/v1/processes/{id}/signal"), json!({"signal": 9})).await;
    assert_eq!(status, 204);
    assert_eq!(stream.all().await.last().unwrap()["signal"], "SIGKILL");
    gone(grandchild).await;

    let (status, v) =
        post(&g, &format!("/v1/processes/{id}/signal"), json!({"signal": "NOPE"})).await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["error"]["details"]["issues"][0]["path"], "signal");
}

#[tokio::test]
async fn processes_are_listed_found_and_deleted() {
    let g = guest().await;
    let a = start(&g, json!({"argv": ["sleep", "300"], "tag": "web"})).await;
    let b = start(&g, json!({"command": "echo hi"})).await;
    let (a_id, b_id) = (a["id"].as_str().unwrap().to_owned(), b["id"].as_str().unwrap().to_owned());
    assert_ne!(a_id, b_id);
    assert_eq!(a["command"], "sleep 300");
    assert!(a["started_at"].as_str().unwrap().ends_with('Z'));
    read_all(&g, &b_id, 0).await;

    let (_, list) = get(&g, "/v1/processes").await;
    let ids: Vec<&str> =
        list["data"].as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [a_id.as_str(), b_id.as_str()], "running and recently ended, oldest first");
    assert_eq!(list["next_cursor"], Value::Null);
    let (_, list) = get(&g, "/v1/processes?tag=web").await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
    assert_eq!(list["data"][0]["id"], a_id);
    let (_, list) = get(&g, "/v1/processes?state=exited").await;
    assert_eq!(list["data"][0]["id"], b_id);
    assert_eq!(list["data"].as_array().unwrap().len(), 1);

    let (status, one) = get(&g, &format!("/v1/processes/{a_id}")).await;
    assert_eq!(status, 200);
    assert_eq!(one["pid"], a["pid"]);
    assert_eq!(one["state"], "running");
    for unknown in ["p_999", "nope"] {
        let (status, v) = get(&g, &format!("/v1/processes/{unknown}")).await;
        assert_eq!(status, 404, "{v}");
        assert_eq!(v["error"]["code"], "not_found");
        assert!(v["error"]["message"].as_str().unwrap().contains(unknown));
    }

    // Deleting a running process kills it and forgets it.
    let r = g.req(reqwest::Method::DELETE, &format!("/v1/processes/{a_id}")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let last: Value = r.json().await.unwrap();
    assert_eq!(last["state"], "exited");
    assert_eq!(last["signal"], "SIGKILL");
    gone(a["pid"].as_i64().unwrap()).await;
    let (status, _) = get(&g, &format!("/v1/processes/{a_id}")).await;
    assert_eq!(status, 404);
    let (_, list) = get(&g, "/v1/processes").await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
    let r = g.req(reqwest::Method::DELETE, &format!("/v1/processes/{a_id}")).send().await.unwrap();
    assert_eq!(r.status(), 404);
}

#[tokio::test]
async fn a_flood_of_output_drops_the_oldest_and_says_how_much() {
    let g = guest().await;
    let p =
        start(&g, json!({"command": "head -c 12000000 /dev/zero | tr '\\0' x; echo end"})).await;
    let id = p["id"].as_str().unwrap().to_owned();
    // Read only once it has ended, so this reader surely fell behind.
    eventually(WAIT, "the process to end", || async {
        let (_, info) = get(&g, &format!("/v1/processes/{id}")).await;
        (info["state"] == "exited").then_some(())
    })
    .await;
    let events = read_all(&g, &id, 0).await;
    assert_eq!(events[0]["type"], "gap", "{}", events[0]);
    let missed = events[0]["missed"].as_u64().unwrap();
    assert!(missed > 0);
    assert_eq!(events[0]["cursor"], missed, "the gap's cursor continues the count");
    assert_eq!(events[1]["cursor"], missed + 1);
    let kept = texts(&events, "stdout");
    assert!(kept.len() < 12_000_000 && kept.len() > 4_000_000, "{}", kept.len());
    assert!(kept.ends_with("xend\n"));
    assert!(kept.bytes().take(kept.len() - 4).all(|b| b == b'x'));
    assert_eq!(events.last().unwrap()["type"], "exit");
}

/// Whether a process has ended: gone, or a zombie its parent has not yet
/// collected.
fn ended(pid: i64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        }
    }
}

#[tokio::test]
async fn shutdown_ends_every_command_and_process() {
    let g = guest().await;
    let guest_pid: i64 = run(&g, json!({"command": "echo $PPID"})).await["stdout"]
        .as_str()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let p = start(&g, json!({"command": "sleep 300 & echo $!; wait"})).await;
    let id = p["id"].as_str().unwrap().to_owned();
    let mut output = follow(&g, &id, 0).await;
    let grandchild: i64 =
        output.next().await.unwrap()["data"].as_str().unwrap().trim().parse().unwrap();
    // A stream in flight, with a timeout longer than this test waits.
    let r = g
        .post("/v1/commands/stream")
        .json(&json!({"argv": ["sleep", "300"]}))
        .send()
        .await
        .unwrap();
    let mut stream = NdJson::new(r);
    let streamed = stream.next().await.unwrap()["pid"].as_i64().unwrap();

    // SAFETY: kill takes plain integers.
    assert_eq!(unsafe { libc::kill(guest_pid as i32, libc::SIGTERM) }, 0);
    // The guest ends: nothing it runs holds its graceful shutdown open.
    eventually(WAIT, "the guest to end", || async { ended(guest_pid).then_some(()) }).await;
    for pid in [p["pid"].as_i64().unwrap(), grandchild, streamed] {
        gone(pid).await;
    }
    // Both streams were ended properly, each with its last event.
    assert_eq!(output.all().await.last().unwrap()["type"], "exit");
    assert_eq!(stream.all().await.last().unwrap()["type"], "exit");
}

#[tokio::test]
async fn a_grandchild_flooding_the_pipe_does_not_keep_the_command_running() {
    let g = guest().await;
    // `yes` writes into the inherited pipe as fast as it can, before the
    // shell ends and after.
    let r = run(
        &g,
        json!({"command": "yes flood & echo $! >&2; sleep 1", "output_limit": 100, "timeout_ms": 20000}),
    )
    .await;
    let flooder: i64 = r["stderr"].as_str().unwrap().trim().parse().unwrap();
    // SAFETY: kill takes plain integers.
    unsafe { libc::kill(flooder as i32, libc::SIGKILL) };
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(r["timed_out"], false, "the command ended with its shell");
}
