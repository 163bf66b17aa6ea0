//! Inside a Vercel session, as the stand-in answers it: commands (NDJSON),
//! files (a gzipped tar unpacked at `x-cwd`; reads), the timeout, a stop,
//! and each port's public route.

use std::collections::HashMap;
use std::io::Read as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State as AxState};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::api::{
    S, bad_request, error, not_found, object, query, routes_json, sandbox_json, session_json,
    stop_session,
};
use super::{Command, MAX_TIMEOUT_MS, Session, State};
use crate::common::random_id;
use crate::forward::{self, Body};

/// The working directory of a command or path that names none.
const CWD: &str = "/vercel/sandbox";
const NDJSON: &str = "application/x-ndjson";

/// The session, running: else 404, 410 `sandbox_stopped`, or 422
/// `sandbox_stopping`.
fn running(state: &State, sid: &str) -> Result<(Session, String), Response> {
    let Some(x) = state.lock().sessions.get(sid).cloned() else {
        return Err(not_found("Session", sid));
    };
    match (x.status.as_str(), &x.container) {
        ("running", Some(c)) => {
            let c = c.clone();
            Ok((x, c))
        }
        ("stopping", _) => Err(error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "sandbox_stopping",
            "The sandbox is stopping",
        )),
        ("snapshotting", _) => Err(error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "sandbox_snapshotting",
            "The sandbox is being snapshotted",
        )),
        ("pending", _) => Err(error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "sandbox_pending",
            "The sandbox is starting",
        )),
        _ => Err(error(StatusCode::GONE, "sandbox_stopped", "The sandbox is stopped")),
    }
}

pub(super) async fn session(AxState(state): S, Path(sid): Path<String>) -> Response {
    let Some(x) = state.lock().sessions.get(&sid).cloned() else {
        return not_found("Session", &sid);
    };
    axum::Json(json!({ "session": session_json(&x), "routes": routes_json(&x) })).into_response()
}

fn command_json(c: &Command, sid: &str) -> Value {
    json!({
        "id": c.id,
        "name": c.name,
        "args": c.args,
        "cwd": c.cwd,
        "sessionId": sid,
        "exitCode": c.exit_code,
        "startedAt": c.started,
    })
}

fn ndjson(lines: &[Value]) -> Response {
    let mut body = String::new();
    for l in lines {
        body.push_str(&l.to_string());
        body.push('\n');
    }
    ([("content-type", NDJSON)], body).into_response()
}

fn pid_file(cid: &str) -> String {
    format!("/tmp/.vercel-cmd-{cid}.pid")
}

pub(super) async fn command(AxState(state): S, Path(sid): Path<String>, body: Bytes) -> Response {
    let body = match object(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let Some(name) = body.get("command").and_then(Value::as_str).filter(|c| !c.is_empty()) else {
        return bad_request("command is required");
    };
    let args: Vec<String> = match body.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => {
            a.iter().filter_map(Value::as_str).map(str::to_owned).collect()
        }
        Some(_) => return bad_request("args must be an array of strings"),
    };
    let env: Vec<String> = match body.get("env") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(m)) if m.values().all(Value::is_string) => {
            m.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or(""))).collect()
        }
        Some(_) => return bad_request("env must be an object of strings"),
    };
    let timeout = match body.get("timeout") {
        None | Some(Value::Null) => None,
        Some(t) => match t.as_u64().filter(|t| *t > 0) {
            Some(t) => Some(Duration::from_millis(t)),
            None => return bad_request("timeout must be a positive number of ms"),
        },
    };
    let (x, container) = match running(&state, &sid) {
        Ok(r) => r,
        Err(r) => return r,
    };
    let cwd = body.get("cwd").and_then(Value::as_str).unwrap_or(CWD).to_owned();
    let sudo = body.get("sudo").and_then(Value::as_bool).unwrap_or(false);
    // Vercel documents `sudo` for its managed images only, which ship sudo
    // (`images/ubuntu/Dockerfile`, `!env_reset`). In an image of the user's
    // the stand-in runs the command through that image's own `sudo`, so
    // an image without one fails as it may at Vercel.
    let managed =
        state.lock().sandboxes.get(&x.sandbox).is_none_or(|s| s.image == super::api::UNIVERSAL);
    let cid = format!("cmd_{}", random_id(24));
    let c = Command {
        id: cid.clone(),
        name: name.to_owned(),
        args: args.clone(),
        cwd: cwd.clone(),
        exit_code: None,
        started: state.now_ms(),
        output: Vec::new(),
    };
    let first = command_json(&c, &sid);
    if let Some(s) = state.lock().sessions.get_mut(&x.id) {
        s.commands.insert(cid.clone(), c);
    }
    // The shell notes the command's pid for `kill`, then becomes it.
    let mut cmd = vec![
        "/bin/sh".to_owned(),
        "-c".to_owned(),
        format!("echo $$ > {}; exec \"$@\"", pid_file(&cid)),
        "sh".to_owned(),
        name.to_owned(),
    ];
    cmd.extend(args);
    if sudo && !managed {
        let through = "command -v sudo >/dev/null || { echo 'sudo: command not found' >&2; \
                       exit 127; }; exec sudo -n -E \"$@\"";
        cmd.splice(
            0..0,
            ["/bin/sh".to_owned(), "-c".to_owned(), through.to_owned(), "sh".to_owned()],
        );
    }
    let task_state = Arc::clone(&state);
    let (task_sid, task_cid) = (sid.clone(), cid.clone());
    let run = async move {
        let _ = task_state
            .engine
            .exec(
                &container,
                vec!["mkdir".into(), "-p".into(), cwd.clone()],
                Vec::new(),
                Some("root"),
                None,
            )
            .await;
        let user = (sudo && managed).then_some("root");
        let exec = task_state.engine.exec(&container, cmd, env, user, Some(&cwd));
        let (code, out, err) = match timeout {
            Some(t) => match tokio::time::timeout(t, exec).await {
                Ok(r) => r,
                Err(_) => Ok((124, Vec::new(), b"timed out".to_vec())),
            },
            None => exec.await,
        }
        .unwrap_or_else(|e| (-1, Vec::new(), e.into_bytes()));
        if let Some(c) = task_state
            .lock()
            .sessions
            .get_mut(&task_sid)
            .and_then(|s| s.commands.get_mut(&task_cid))
        {
            c.exit_code = Some(code);
            for (stream, data) in [("stdout", out), ("stderr", err)] {
                if !data.is_empty() {
                    c.output.push((stream.to_owned(), String::from_utf8_lossy(&data).into_owned()));
                }
            }
        }
    };
    if body.get("wait").and_then(Value::as_bool) != Some(true) {
        state.spawn(tokio::spawn(run));
        return axum::Json(json!({ "command": first })).into_response();
    }
    run.await;
    let Some(done) = state.lock().sessions.get(&sid).and_then(|s| s.commands.get(&cid)).cloned()
    else {
        return error(StatusCode::GONE, "sandbox_stopped", "The sandbox is stopped");
    };
    let mut lines = vec![json!({ "command": first })];
    if body.get("logs").and_then(Value::as_bool) == Some(true) {
        lines.extend(done.output.iter().map(|(s, d)| json!({ "stream": s, "data": d })));
    }
    lines.push(json!({ "command": command_json(&done, &sid) }));
    ndjson(&lines)
}

fn find_command(state: &State, sid: &str, cid: &str) -> Result<Command, Response> {
    let inner = state.lock();
    let Some(x) = inner.sessions.get(sid) else { return Err(not_found("Session", sid)) };
    x.commands.get(cid).cloned().ok_or_else(|| not_found("Command", cid))
}

/// The command once it has an exit code.
async fn finished(state: &State, sid: &str, cid: &str) -> Result<Command, Response> {
    loop {
        let c = find_command(state, sid, cid)?;
        if c.exit_code.is_some() {
            return Ok(c);
        }
        if state.lock().sessions.get(sid).is_none_or(|x| x.status != "running") {
            return Err(error(StatusCode::GONE, "sandbox_stopped", "The sandbox is stopped"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub(super) async fn get_command(
    AxState(state): S,
    Path((sid, cid)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
) -> Response {
    let wait = query(raw.as_deref()).iter().any(|(k, v)| k == "wait" && v == "true");
    let c =
        if wait { finished(&state, &sid, &cid).await } else { find_command(&state, &sid, &cid) };
    match c {
        Ok(c) => axum::Json(json!({ "command": command_json(&c, &sid) })).into_response(),
        Err(r) => r,
    }
}

pub(super) async fn logs(AxState(state): S, Path((sid, cid)): Path<(String, String)>) -> Response {
    match finished(&state, &sid, &cid).await {
        Ok(c) => {
            let lines: Vec<Value> =
                c.output.iter().map(|(s, d)| json!({ "stream": s, "data": d })).collect();
            ndjson(&lines)
        }
        Err(r) => r,
    }
}

pub(super) async fn kill(
    AxState(state): S,
    Path((sid, cid)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    let body = match object(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let signal = match body.get("signal") {
        None | Some(Value::Null) => "TERM".to_owned(),
        Some(Value::String(s)) => s.trim_start_matches("SIG").to_owned(),
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return bad_request("signal must be a name or a number"),
    };
    let (_, container) = match running(&state, &sid) {
        Ok(r) => r,
        Err(r) => return r,
    };
    let c = match find_command(&state, &sid, &cid) {
        Ok(c) => c,
        Err(r) => return r,
    };
    if c.exit_code.is_none() {
        let script = format!("kill -s {signal} $(cat {})", pid_file(&cid));
        let _ = state
            .engine
            .exec(
                &container,
                vec!["/bin/sh".into(), "-c".into(), script],
                Vec::new(),
                Some("root"),
                None,
            )
            .await;
    }
    axum::Json(json!({ "command": command_json(&c, &sid) })).into_response()
}

/// An absolute path: `path`, or `path` under `cwd`.
fn absolute(path: &str, cwd: Option<&str>) -> String {
    if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("{}/{path}", cwd.unwrap_or(CWD).trim_end_matches('/'))
    }
}

pub(super) async fn write(
    AxState(state): S,
    Path(sid): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("");
    if content_type != "application/gzip" {
        return bad_request("The body must be a gzipped tar (content-type: application/gzip)");
    }
    let cwd = headers.get("x-cwd").and_then(|v| v.to_str().ok()).unwrap_or(CWD).to_owned();
    let (_, container) = match running(&state, &sid) {
        Ok(r) => r,
        Err(r) => return r,
    };
    let mut tar = Vec::new();
    if flate2::read::GzDecoder::new(&body[..]).read_to_end(&mut tar).is_err() {
        return bad_request("The body is not gzip");
    }
    // Each entry's directories first, as tar's own unpacking makes them.
    let mut dirs = vec![cwd.clone()];
    let mut archive = tar::Archive::new(&tar[..]);
    let Ok(entries) = archive.entries() else { return bad_request("The body is not a tar") };
    for entry in entries {
        let Ok(entry) = entry else { return bad_request("The body is not a tar") };
        let Ok(path) = entry.path() else { return bad_request("A tar entry has no path") };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            dirs.push(absolute(&parent.to_string_lossy(), Some(&cwd)));
        }
    }
    let mut mkdir = vec!["mkdir".to_owned(), "-p".to_owned()];
    mkdir.extend(dirs);
    let _ = state.engine.exec(&container, mkdir, Vec::new(), Some("root"), None).await;
    match state.engine.put_tar(&container, &cwd, tar).await {
        Ok(()) => axum::Json(json!({})).into_response(),
        Err(e) => bad_request(format!("Could not write the files: {e}")),
    }
}

/// The absolute `path` (against `cwd`) a file call's body names, and the
/// container of its sandbox, which must be running.
fn path_in_running(state: &State, sid: &str, body: &Bytes) -> Result<(String, String), Response> {
    let body = object(body)?;
    let Some(path) = body.get("path").and_then(Value::as_str) else {
        return Err(bad_request("path is required"));
    };
    let path = absolute(path, body.get("cwd").and_then(Value::as_str));
    let (_, container) = running(state, sid)?;
    Ok((path, container))
}

pub(super) async fn read(AxState(state): S, Path(sid): Path<String>, body: Bytes) -> Response {
    let (path, container) = match path_in_running(&state, &sid, &body) {
        Ok(r) => r,
        Err(r) => return r,
    };
    match state.engine.get_file(&container, &path).await {
        Ok(Some(data)) => ([("content-type", "application/octet-stream")], data).into_response(),
        Ok(None) => {
            error(StatusCode::NOT_FOUND, "file_not_found", format!("{path} does not exist"))
        }
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal_server_error", e),
    }
}

pub(super) async fn mkdir(AxState(state): S, Path(sid): Path<String>, body: Bytes) -> Response {
    let (path, container) = match path_in_running(&state, &sid, &body) {
        Ok(r) => r,
        Err(r) => return r,
    };
    match state
        .engine
        .exec(&container, vec!["mkdir".into(), path.clone()], Vec::new(), None, None)
        .await
    {
        Ok((0, _, _)) => axum::Json(json!({})).into_response(),
        Ok((_, _, err)) => bad_request(String::from_utf8_lossy(&err).trim().to_owned()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal_server_error", e),
    }
}

pub(super) async fn extend(AxState(state): S, Path(sid): Path<String>, body: Bytes) -> Response {
    let body = match object(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let Some(duration) = body.get("duration").and_then(Value::as_u64).filter(|d| *d > 0) else {
        return bad_request("duration must be a positive number of ms");
    };
    if let Err(r) = running(&state, &sid) {
        return r;
    }
    let mut inner = state.lock();
    let Some(x) = inner.sessions.get_mut(&sid) else { return not_found("Session", &sid) };
    if x.timeout_ms + duration > MAX_TIMEOUT_MS {
        return bad_request(format!(
            "The sandbox's timeout can be at most {MAX_TIMEOUT_MS} ms; it is {} ms",
            x.timeout_ms
        ));
    }
    x.timeout_ms += duration;
    axum::Json(json!({ "session": session_json(x) })).into_response()
}

pub(super) async fn stop(AxState(state): S, Path(sid): Path<String>) -> Response {
    if !state.lock().sessions.contains_key(&sid) {
        return not_found("Session", &sid);
    }
    stop_session(&state, &sid).await;
    let inner = state.lock();
    let Some(x) = inner.sessions.get(&sid) else { return not_found("Session", &sid) };
    let mut answer = json!({ "session": session_json(x) });
    if let Some(s) = inner.sandboxes.get(&x.sandbox) {
        answer["sandbox"] = sandbox_json(s, Some(x));
    }
    axum::Json(answer).into_response()
}

/// A port's public route: a loopback port of its own, passing everything
/// on to the session's port, with no credential of its own.
pub(super) async fn route(
    state: Arc<State>,
    sid: String,
    port: u16,
) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    forward::serve(move |req| {
        let state = Arc::clone(&state);
        let sid = sid.clone();
        async move { pass(state, sid, port, req).await }
    })
    .await
}

async fn pass(
    state: Arc<State>,
    sid: String,
    port: u16,
    req: hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<Body> {
    let host: Option<(String, HashMap<u16, u16>)> =
        state.lock().sessions.get(&sid).map(|x| (x.status.clone(), x.ports.clone()));
    let page = |status: hyper::StatusCode, text: &str| {
        forward::respond(status, "text/plain", text.to_owned())
    };
    match host {
        Some((status, ports)) if status == "running" => match ports.get(&port) {
            Some(p) => {
                forward::forward(req, SocketAddr::from(([127, 0, 0, 1], *p))).await.unwrap_or_else(
                    || page(hyper::StatusCode::BAD_GATEWAY, "The sandbox's port is not open"),
                )
            }
            None => page(hyper::StatusCode::BAD_GATEWAY, "The sandbox's port is not open"),
        },
        _ => page(hyper::StatusCode::GONE, "The sandbox is stopped"),
    }
}
