//! Inside a Runtime Cloud sandbox, as the stand-in answers it: `:exec`,
//! file content, and previews with their private-token proxy.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::api::{S, error, invalid, not_found, not_running, object, query, unknown};
use super::{PORTS, Preview, Sandbox, State, USER};
use crate::common::token;
use crate::forward::{self, Body};

/// The longest `timeoutMs` of a command: 24 hours.
const MAX_TIMEOUT_MS: u64 = 24 * 3600 * 1000;

/// How long a command on a starting sandbox waits for it.
const NOT_READY_WAIT: Duration = Duration::from_secs(30);

/// The running sandbox's container, waiting up to 30 seconds for one that
/// is starting.
pub(super) async fn running(state: &State, s: &Sandbox) -> Result<String, Response> {
    let until = tokio::time::Instant::now() + NOT_READY_WAIT;
    let mut s = s.clone();
    while s.state == "starting" && tokio::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(100)).await;
        s = state.sandbox(&s.id).ok_or_else(|| not_found("sandbox", &s.id))?;
    }
    match (&s.state[..], &s.container) {
        ("running", Some(c)) => Ok(c.clone()),
        _ => Err(not_running(&s)),
    }
}

/// What a command or a process runs, as the exec body and the processes
/// body give it: `command` (under `bash -c`) or `argv`, `env`, `cwd`.
pub(super) struct Command {
    pub argv: Vec<String>,
    pub env: Vec<String>,
    pub cwd: Option<String>,
    /// How the command was given, as a process answers it.
    pub shown: String,
}

/// Reads a command from `body`, adding to `issues` what is wrong with it
/// (`None` when something is).
pub(super) fn command(
    body: &Map<String, Value>,
    issues: &mut Vec<(String, String)>,
) -> Option<Command> {
    let argv: Option<Vec<String>> = match (body.get("command"), body.get("argv")) {
        (Some(Value::String(c)), None) if !c.trim().is_empty() => {
            Some(vec!["bash".into(), "-c".into(), c.clone()])
        }
        (None, Some(Value::Array(a))) if !a.is_empty() && a.iter().all(Value::is_string) => {
            Some(a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        }
        (Some(_), Some(_)) => {
            issues.push(("command".into(), "give command or argv, not both".into()));
            None
        }
        (None, None) => {
            issues.push(("command".into(), "command or argv is required".into()));
            None
        }
        (Some(_), None) => {
            issues.push(("command".into(), "must be a non-empty string".into()));
            None
        }
        (None, Some(_)) => {
            issues.push(("argv".into(), "must be a non-empty array of strings".into()));
            None
        }
    };
    let env: Vec<String> = match body.get("env") {
        None => Vec::new(),
        Some(Value::Object(m)) if m.values().all(Value::is_string) => {
            m.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or(""))).collect()
        }
        Some(_) => {
            issues.push(("env".into(), "must be an object of strings".into()));
            Vec::new()
        }
    };
    if body.get("stdin").is_some() {
        issues.push(("stdin".into(), "the stand-in does not feed standard input".into()));
    }
    let cwd = body.get("cwd").and_then(Value::as_str).map(str::to_owned);
    let shown = match body.get("command") {
        Some(Value::String(c)) => c.clone(),
        _ => argv.as_ref().map(|a| a.join(" ")).unwrap_or_default(),
    };
    argv.filter(|_| issues.is_empty()).map(|argv| Command { argv, env, cwd, shown })
}

pub(super) async fn exec(state: &State, s: &Sandbox, body: &Map<String, Value>) -> Response {
    let mut issues =
        unknown(body, &["command", "argv", "cwd", "env", "stdin", "timeoutMs", "stream"]);
    let timeout_ms = match body.get("timeoutMs") {
        None => 60_000,
        Some(v) => match v.as_u64().filter(|n| (1..=MAX_TIMEOUT_MS).contains(n)) {
            Some(n) => n,
            None => {
                issues.push(("timeoutMs".into(), format!("must be from 1 to {MAX_TIMEOUT_MS}")));
                60_000
            }
        },
    };
    if body.get("stream").and_then(Value::as_bool) == Some(true) {
        issues.push(("stream".into(), "the stand-in answers commands whole, not as NDJSON".into()));
    }
    let Some(Command { argv: cmd, env, cwd, .. }) = command(body, &mut issues) else {
        return invalid(issues);
    };
    let container = match running(state, s).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let run = state.engine.exec(&container, cmd, env, Some(USER), cwd.as_deref());
    match tokio::time::timeout(Duration::from_millis(timeout_ms), run).await {
        Ok(Ok((code, stdout, stderr))) => axum::Json(json!({
            "exitCode": code,
            "stdout": String::from_utf8_lossy(&stdout),
            "stderr": String::from_utf8_lossy(&stderr),
            "timedOut": false,
        }))
        .into_response(),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "the Runtime Cloud stand-in cannot run a command");
            error(
                StatusCode::SERVICE_UNAVAILABLE,
                "guest_busy",
                "The sandbox did not take the command.",
                "Retry after Retry-After with the same key.",
                None,
            )
        }
        Err(_) => axum::Json(json!({
            "exitCode": 124,
            "stdout": "",
            "stderr": "",
            "timedOut": true,
        }))
        .into_response(),
    }
}

fn path_of(raw: Option<&str>) -> Result<String, Response> {
    match query(raw).into_iter().find(|(k, _)| k == "path").map(|(_, v)| v) {
        Some(p) if p.starts_with('/') => Ok(p),
        _ => Err(invalid(vec![("path".into(), "must be an absolute path".into())])),
    }
}

pub(super) async fn write_file(
    AxState(state): S,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
    body: Bytes,
) -> Response {
    let path = match path_of(raw.as_deref()) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let Some(s) = state.sandbox(&id) else { return not_found("sandbox", &id) };
    let container = match running(&state, &s).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let parent = path.rsplit_once('/').map(|(d, _)| d).filter(|d| !d.is_empty()).unwrap_or("/");
    let made = state
        .engine
        .exec(&container, vec!["mkdir".into(), "-p".into(), parent.into()], vec![], None, None)
        .await;
    if !matches!(made, Ok((0, _, _))) {
        return error(
            StatusCode::CONFLICT,
            "not_a_directory",
            format!("{parent} is not a directory."),
            "Check the path.",
            Some(json!({ "path": path })),
        );
    }
    match state.engine.put_file(&container, &path, &body, 0o644).await {
        Ok(()) => axum::Json(json!({ "path": path, "size": body.len() })).into_response(),
        Err(_) => error(
            StatusCode::CONFLICT,
            "is_a_directory",
            format!("{path} is a directory."),
            "Write to a file path.",
            Some(json!({ "path": path })),
        ),
    }
}

pub(super) async fn read_file(
    AxState(state): S,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Response {
    let path = match path_of(raw.as_deref()) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let Some(s) = state.sandbox(&id) else { return not_found("sandbox", &id) };
    let container = match running(&state, &s).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    match state.engine.get_file(&container, &path).await {
        Ok(Some(bytes)) => {
            (StatusCode::OK, [("content-type", "application/octet-stream")], bytes).into_response()
        }
        _ => error(
            StatusCode::NOT_FOUND,
            "file_not_found",
            format!("{path} does not exist."),
            "Check the path; paths are absolute.",
            Some(json!({ "path": path })),
        ),
    }
}

fn preview_json(id: &str, port: u16, p: &Preview, with_token: bool) -> Value {
    let url = format!("http://{}", p.addr);
    let mut v = json!({
        "sandboxId": id,
        "port": port,
        "visibility": p.visibility,
        "url": url,
        "createdAt": crate::common::Clock::rfc3339(p.created),
    });
    if with_token && p.visibility == "private" {
        v["token"] = json!(p.token);
        v["urlWithToken"] = json!(format!("{url}/?runtime_preview_token={}", p.token));
    }
    v
}

pub(super) async fn share(AxState(state): S, Path(id): Path<String>, body: Bytes) -> Response {
    let body = match object(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let mut issues = unknown(&body, &["port", "visibility"]);
    let port = body.get("port").and_then(Value::as_u64).and_then(|p| u16::try_from(p).ok());
    if port.is_none_or(|p| p == 0) {
        issues.push(("port".into(), "must be a port from 1 to 65535".into()));
    }
    let visibility = match body.get("visibility") {
        None => "private".to_owned(),
        Some(Value::String(v)) if v == "private" || v == "public" => v.clone(),
        Some(_) => {
            issues.push(("visibility".into(), "must be private or public".into()));
            String::new()
        }
    };
    let Some(port) = port.filter(|_| issues.is_empty()) else { return invalid(issues) };
    let Some(s) = state.sandbox(&id) else { return not_found("sandbox", &id) };
    if s.state != "running" && s.state != "paused" {
        return not_running(&s);
    }
    // A port shared already answers its preview again, without the token
    // (as a read does): only the one who made it, or a rotation, holds one.
    if let Some(p) = s.previews.get(&port) {
        return axum::Json(preview_json(&id, port, p, false)).into_response();
    }
    let (sid, st) = (s.id.clone(), Arc::clone(&state));
    let (addr, task) =
        forward::serve(move |req| proxy(Arc::clone(&st), sid.clone(), port, req)).await;
    state.tasks.add([task]);
    let p = Preview { visibility, token: token(), addr, created: state.clock.now() };
    let answer = preview_json(&id, port, &p, true);
    if let Some(x) = state.lock().sandboxes.get_mut(&id) {
        x.previews.insert(port, p);
    }
    (StatusCode::CREATED, axum::Json(answer)).into_response()
}

pub(super) async fn previews(AxState(state): S, Path(id): Path<String>) -> Response {
    let Some(s) = state.sandbox(&id) else { return not_found("sandbox", &id) };
    let mut ports: Vec<&u16> = s.previews.keys().collect();
    ports.sort();
    let data: Vec<Value> =
        ports.into_iter().map(|p| preview_json(&id, *p, &s.previews[p], false)).collect();
    super::api::page(data, 0, 100)
}

pub(super) async fn preview(
    AxState(state): S,
    Path((id, port)): Path<(String, String)>,
) -> Response {
    let Some(s) = state.sandbox(&id) else { return not_found("sandbox", &id) };
    match port.parse::<u16>().ok().and_then(|p| s.previews.get(&p).map(|x| (p, x))) {
        Some((p, x)) => axum::Json(preview_json(&id, p, x, false)).into_response(),
        None => not_found("preview", &port),
    }
}

/// `POST …/previews/{port}:rotate`: a new token; every earlier one is
/// refused.
pub(super) async fn rotate(
    AxState(state): S,
    Path((id, action)): Path<(String, String)>,
) -> Response {
    let Some(port) = action.strip_suffix(":rotate").and_then(|p| p.parse::<u16>().ok()) else {
        return error(
            StatusCode::NOT_FOUND,
            "route_not_found",
            "No such route.",
            "Use …/previews/{port}:rotate.",
            None,
        );
    };
    let mut inner = state.lock();
    let Some(p) = inner.sandboxes.get_mut(&id).and_then(|s| s.previews.get_mut(&port)) else {
        return not_found("preview", &port.to_string());
    };
    p.token = token();
    let answer = preview_json(&id, port, p, true);
    drop(inner);
    axum::Json(answer).into_response()
}

/// The preview proxy for one port of one sandbox: a private preview wants
/// its token in `x-runtime-preview-token` (or the link's
/// `runtime_preview_token`), which does not reach the sandbox.
async fn proxy(
    state: Arc<State>,
    id: String,
    port: u16,
    mut req: hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<Body> {
    let refuse = |status: hyper::StatusCode, code: &str, message: &str| {
        forward::json(
            status,
            &json!({ "error": { "code": code, "status": status.as_u16(), "message": message,
                "hint": "Send the preview's token as x-runtime-preview-token.",
                "requestId": format!("req_{}", crate::common::random_id(19)) } }),
        )
    };
    let Some(s) = state.sandbox(&id) else {
        return refuse(hyper::StatusCode::NOT_FOUND, "not_found", "No such preview.");
    };
    let Some(p) = s.previews.get(&port) else {
        return refuse(hyper::StatusCode::NOT_FOUND, "not_found", "No such preview.");
    };
    let header = req.headers().get("x-runtime-preview-token").and_then(|v| v.to_str().ok())
        == Some(p.token.as_str());
    let q: Vec<(String, String)> = query(req.uri().query());
    let link = q.iter().any(|(k, v)| k == "runtime_preview_token" && v == &p.token);
    if p.visibility == "private" && !(header || link) {
        return refuse(hyper::StatusCode::UNAUTHORIZED, "unauthorized", "This preview is private.");
    }
    req.headers_mut().remove("x-runtime-preview-token");
    if link {
        let rest: Vec<(String, String)> =
            q.into_iter().filter(|(k, _)| k != "runtime_preview_token").collect();
        let qs = form_urlencoded::Serializer::new(String::new()).extend_pairs(rest).finish();
        let path = req.uri().path().to_owned();
        if let Ok(uri) = (if qs.is_empty() { path } else { format!("{path}?{qs}") }).parse() {
            *req.uri_mut() = uri;
        }
    }
    if s.state != "running" {
        return refuse(hyper::StatusCode::CONFLICT, "not_running", "The sandbox is not running.");
    }
    let bad_gateway =
        || refuse(hyper::StatusCode::BAD_GATEWAY, "bad_gateway", "Nothing answers on that port.");
    let Some(host_port) = s.ports.get(&port).filter(|_| PORTS.contains(&port)) else {
        return bad_gateway();
    };
    match forward::forward(req, SocketAddr::from(([127, 0, 0, 1], *host_port))).await {
        Some(r) => r,
        None => bad_gateway(),
    }
}
