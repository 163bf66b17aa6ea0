//! E2B's REST API, as the stand-in answers it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State as AxState};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde_json::{Value, json};

use super::{Build, MAX_HOURS, PORTS, Sandbox, State, Status, Template, templates};
use crate::common::{Call, Clock, random_id, ray, token};
use crate::engine::RunSpec;

type S = AxState<Arc<State>>;

/// E2B's error body.
pub(super) fn error(status: StatusCode, message: impl Into<String>) -> Response {
    let body = json!({ "code": status.as_u16(), "message": message.into() });
    (status, axum::Json(body)).into_response()
}

fn not_found(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!("Sandbox {id:?} doesn't exist or you don't have access to it"),
    )
}

pub(super) fn parse(body: &Bytes) -> Result<Value, Response> {
    if body.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_slice(body)
        .map_err(|e| error(StatusCode::BAD_REQUEST, format!("Error when parsing request: {e}")))
}

/// The routes, behind the call log, injected failures and the key.
pub(crate) fn router(state: Arc<State>) -> Router {
    Router::new()
        .route("/health", get(|| async { "Health check successful" }))
        .route("/v3/templates", post(templates::create_template))
        .route("/templates/aliases/{alias}", get(templates::alias))
        .route("/templates/{tid}", get(templates::template))
        .route("/templates/{tid}/files/{hash}", get(templates::upload_link))
        .route("/v2/templates/{tid}/builds/{bid}", post(templates::start_build))
        .route("/templates/{tid}/builds/{bid}/status", get(templates::build_status))
        .route("/_upload/{token}", put(templates::upload).layer(DefaultBodyLimit::max(256 << 20)))
        .route("/sandboxes", post(create_v1).get(list_running))
        .route("/v2/sandboxes", post(create_v2).get(list))
        .route("/sandboxes/{id}", get(detail).delete(kill))
        .route("/sandboxes/{id}/timeout", post(set_timeout))
        .route("/sandboxes/{id}/pause", post(pause))
        .route("/sandboxes/{id}/connect", post(connect))
        .route("/v2/sandboxes/{id}/connect", post(connect_v2))
        .route("/sandboxes/{id}/resume", post(resume))
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&state), gate))
        .with_state(state)
}

/// Logs the call, answers an injected failure, checks the key, and adds
/// the request id a CDN would.
async fn gate(AxState(state): S, req: Request, next: Next) -> Response {
    let (req, trace) = crate::trace::observe(req).await;
    let method = req.method().as_str().to_owned();
    let path = req.uri().path().to_owned();
    let after = state.faults.take_after(&method, &path);
    let mut response = if let Some(f) = state.faults.take(&method, &path) {
        let status = StatusCode::from_u16(f.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let message = match f.status {
            429 => "Rate limit exceeded".to_owned(),
            s if s >= 500 => "Internal server error".to_owned(),
            _ => "injected failure".to_owned(),
        };
        let mut r = error(status, message);
        if let Some(secs) = f.retry_after {
            r.headers_mut().insert("retry-after", HeaderValue::from(secs));
        }
        r
    } else if path == "/health" || path.starts_with("/_upload/") {
        next.run(req).await
    } else {
        let key = req.headers().get("x-api-key").and_then(|v| v.to_str().ok()).unwrap_or("");
        if state.keys.accepts(key) {
            next.run(req).await
        } else {
            error(
                StatusCode::UNAUTHORIZED,
                "Invalid API key, please visit https://e2b.dev/docs/api-key for more information.",
            )
        }
    };
    if let Some(f) = after {
        let status = StatusCode::from_u16(f.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        response = error(status, "Internal server error");
    }
    if let Ok(v) = HeaderValue::from_str(&ray()) {
        response.headers_mut().insert("cf-ray", v);
    }
    state.calls.push(Call { method, path, status: response.status().as_u16(), trace: Some(trace) });
    response
}

/// The ready build of a template named by id or alias.
fn ready_build(inner: &super::Inner, name: &str) -> Result<(Template, Build), Response> {
    let id = inner.aliases.get(name).cloned().unwrap_or_else(|| name.to_owned());
    let Some(t) = inner.templates.get(&id) else {
        return Err(error(StatusCode::NOT_FOUND, format!("template '{name}' not found")));
    };
    let build = t
        .builds
        .iter()
        .rev()
        .filter_map(|b| inner.builds.get(b))
        .find(|b| b.status == Status::Ready);
    match build {
        Some(b) => Ok((t.clone(), b.clone())),
        None => {
            Err(error(StatusCode::BAD_REQUEST, format!("template '{name}' has no ready build")))
        }
    }
}

fn timeout_of(body: &Value, default: u64) -> Result<u64, Response> {
    match body.get("timeout") {
        None => Ok(default),
        Some(v) => {
            let t = v
                .as_i64()
                .ok_or_else(|| error(StatusCode::BAD_REQUEST, "timeout must be an integer"))?;
            if t <= 0 {
                return Err(error(StatusCode::BAD_REQUEST, "Timeout must be greater than 0"));
            }
            if t as u64 > MAX_HOURS * 3600 {
                return Err(error(
                    StatusCode::BAD_REQUEST,
                    format!("Timeout cannot be greater than {MAX_HOURS} hours"),
                ));
            }
            Ok(t as u64)
        }
    }
}

/// The `timeout` a body must carry (`SandboxTimeoutRequest`,
/// `ConnectSandbox`).
fn required_timeout(body: &Bytes) -> Result<u64, Response> {
    let body = parse(body)?;
    if body.get("timeout").is_none() {
        return Err(error(StatusCode::BAD_REQUEST, "timeout is required"));
    }
    timeout_of(&body, 15)
}

fn strings(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect())
        .unwrap_or_default()
}

/// E2B's `Sandbox`: what create and connect answer.
fn created(s: &Sandbox) -> Value {
    json!({
        "templateID": s.template_id,
        "sandboxID": s.id,
        "alias": s.alias,
        "clientID": "6532622b",
        "envdVersion": "0.4.1",
        "envdAccessToken": s.envd_token,
        "trafficAccessToken": s.traffic_token,
        "domain": Value::Null,
    })
}

fn listed(s: &Sandbox) -> Value {
    json!({
        "templateID": s.template_id,
        "alias": s.alias,
        "sandboxID": s.id,
        "clientID": "6532622b",
        "startedAt": Clock::rfc3339(s.started_at),
        "endAt": Clock::rfc3339(s.end_at),
        "cpuCount": s.cpu,
        "memoryMB": s.memory_mb,
        "diskSizeMB": 10240,
        "metadata": s.metadata,
        "state": if s.paused { "paused" } else { "running" },
        "envdVersion": "0.4.1",
    })
}

/// The deprecated create (`NewSandbox`, with `secure`).
async fn create_v1(AxState(state): S, body: Bytes) -> Response {
    match parse(&body) {
        Ok(b) => create(&state, b, 15).await,
        Err(r) => r,
    }
}

/// The create E2B's SDKs use since 2.6x (`NewSandboxV2`): the same body
/// without `secure`, since all communication with the sandbox is secured
/// (envd always wants its access token), and a `timeout` of 300 seconds
/// when none is given.
async fn create_v2(AxState(state): S, body: Bytes) -> Response {
    match parse(&body) {
        Ok(b) => create(&state, b, 300).await,
        Err(r) => r,
    }
}

/// Makes a sandbox from a create's body; `default_timeout` when it names
/// none.
async fn create(state: &State, body: Value, default_timeout: u64) -> Response {
    let Some(name) = body.get("templateID").and_then(Value::as_str) else {
        return error(StatusCode::BAD_REQUEST, "templateID is required");
    };
    let timeout = match timeout_of(&body, default_timeout) {
        Ok(t) => t,
        Err(r) => return r,
    };
    let (template, build) = {
        let inner = state.lock();
        let running = inner.sandboxes.values().filter(|s| !s.paused).count();
        let max = state.max_concurrency.load(Ordering::SeqCst);
        if running >= max {
            return error(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "you have reached the maximum number of concurrent E2B sandboxes ({max}). If you need more, please visit 'https://e2b.dev/docs/billing'"
                ),
            );
        }
        match ready_build(&inner, name) {
            Ok(tb) => tb,
            Err(r) => return r,
        }
    };
    let public =
        body.pointer("/network/allowPublicTraffic").and_then(Value::as_bool).unwrap_or(true);
    let id = random_id(20);
    let spec = RunSpec {
        name: format!("standin-e2b-{id}"),
        image: build.image.clone().unwrap_or_default(),
        // envd is E2B's first process; the template's entrypoint is not run.
        entrypoint: Some(vec!["sleep".into(), "infinity".into()]),
        env: Vec::new(),
        ports: PORTS.to_vec(),
        memory_mib: Some(build.memory_mb),
        cpus: Some(build.cpu),
        labels: strings(body.get("metadata")),
        ..RunSpec::default()
    };
    let (container, ports) = match state.engine.run(&spec).await {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Failed to create sandbox: {e}"),
            );
        }
    };
    let now = state.clock.now();
    let sandbox = Sandbox {
        id: id.clone(),
        template_id: template.id.clone(),
        alias: template.names.first().cloned(),
        container,
        ports,
        paused: false,
        started_at: now,
        end_at: now + timeout,
        metadata: strings(body.get("metadata")),
        env_vars: strings(body.get("envVars")),
        envd_token: token(),
        traffic_token: (!public).then(token),
        cpu: build.cpu,
        memory_mb: build.memory_mb,
        made_at: std::time::Instant::now(),
    };
    let answer = created(&sandbox);
    let mut inner = state.lock();
    if let Some(t) = inner.templates.get_mut(&template.id) {
        t.spawn_count += 1;
        t.last_spawned = Some(now);
    }
    inner.sandboxes.insert(id, sandbox);
    (StatusCode::CREATED, axum::Json(answer)).into_response()
}

async fn detail(AxState(state): S, Path(id): Path<String>) -> Response {
    let inner = state.lock();
    let Some(s) = inner.sandboxes.get(&id) else { return not_found(&id) };
    let mut v = listed(s);
    v["envdAccessToken"] = json!(s.envd_token);
    v["domain"] = Value::Null;
    axum::Json(v).into_response()
}

/// The deprecated list: running sandboxes.
async fn list_running(AxState(state): S, Query(q): Query<BTreeMap<String, String>>) -> Response {
    let filter = match metadata_filter(q.get("metadata")) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let inner = state.lock();
    let out: Vec<Value> = inner
        .sandboxes
        .values()
        .filter(|s| !s.paused && filter.iter().all(|(k, v)| s.metadata.get(k) == Some(v)))
        .map(listed)
        .collect();
    axum::Json(out).into_response()
}

/// `metadata`, as the query gives it once decoded: `k=v&k2=v2`, each side
/// encoded again.
fn metadata_filter(raw: Option<&String>) -> Result<Vec<(String, String)>, Response> {
    let Some(raw) = raw else { return Ok(Vec::new()) };
    let pairs: Vec<(String, String)> =
        form_urlencoded::parse(raw.as_bytes()).into_owned().collect();
    if pairs.iter().any(|(k, _)| k.is_empty()) {
        return Err(error(StatusCode::BAD_REQUEST, "Error when parsing metadata"));
    }
    Ok(pairs)
}

async fn list(AxState(state): S, Query(q): Query<BTreeMap<String, String>>) -> Response {
    let filter = match metadata_filter(q.get("metadata")) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let states: Vec<String> = q
        .get("state")
        .map(|s| s.split(',').map(|x| x.trim().to_owned()).filter(|x| !x.is_empty()).collect())
        .unwrap_or_else(|| vec!["running".into(), "paused".into()]);
    if let Some(bad) = states.iter().find(|s| *s != "running" && *s != "paused") {
        return error(StatusCode::BAD_REQUEST, format!("invalid state {bad:?}"));
    }
    let limit: usize = match q.get("limit").map(|l| l.parse::<usize>()) {
        None => 100,
        Some(Ok(l)) if (1..=100).contains(&l) => l,
        Some(_) => return error(StatusCode::BAD_REQUEST, "limit must be between 1 and 100"),
    };
    let start: usize = match q.get("nextToken") {
        None => 0,
        Some(t) => match t.parse() {
            Ok(n) => n,
            Err(_) => return error(StatusCode::BAD_REQUEST, "invalid next token"),
        },
    };
    let lag = std::time::Duration::from_millis(
        state.list_lag_ms.load(std::sync::atomic::Ordering::Relaxed),
    );
    let inner = state.lock();
    let mut all: Vec<&Sandbox> = inner
        .sandboxes
        .values()
        .filter(|s| s.made_at.elapsed() >= lag)
        .filter(|s| states.iter().any(|st| (st == "paused") == s.paused))
        .filter(|s| filter.iter().all(|(k, v)| s.metadata.get(k) == Some(v)))
        .collect();
    all.sort_by(|a, b| (b.started_at, &b.id).cmp(&(a.started_at, &a.id)));
    let page: Vec<Value> = all.iter().skip(start).take(limit).map(|s| listed(s)).collect();
    let mut r = axum::Json(page).into_response();
    if start + limit < all.len()
        && let Ok(v) = HeaderValue::from_str(&(start + limit).to_string())
    {
        r.headers_mut().insert("x-next-token", v);
    }
    r
}

async fn kill(AxState(state): S, Path(id): Path<String>) -> Response {
    let removed = state.lock().sandboxes.remove(&id);
    match removed {
        Some(s) => {
            let _ = state.engine.remove(&s.container).await;
            StatusCode::NO_CONTENT.into_response()
        }
        None => not_found(&id),
    }
}

async fn set_timeout(AxState(state): S, Path(id): Path<String>, body: Bytes) -> Response {
    let timeout = match required_timeout(&body) {
        Ok(t) => t,
        Err(r) => return r,
    };
    let now = state.clock.now();
    let mut inner = state.lock();
    match inner.sandboxes.get_mut(&id).filter(|s| !s.paused) {
        Some(s) => {
            s.end_at = now + timeout;
            StatusCode::NO_CONTENT.into_response()
        }
        None => not_found(&id),
    }
}

async fn pause(AxState(state): S, Path(id): Path<String>) -> Response {
    let container = {
        let inner = state.lock();
        match inner.sandboxes.get(&id) {
            None => return not_found(&id),
            Some(s) if s.paused => {
                return error(
                    StatusCode::CONFLICT,
                    format!("Error pausing sandbox - sandbox '{id}' is already paused"),
                );
            }
            Some(s) => s.container.clone(),
        }
    };
    if let Err(e) = state.engine.pause(&container).await {
        return error(StatusCode::INTERNAL_SERVER_ERROR, format!("Error pausing sandbox: {e}"));
    }
    if let Some(s) = state.lock().sandboxes.get_mut(&id) {
        s.paused = true;
    }
    StatusCode::NO_CONTENT.into_response()
}

/// Resumes a paused sandbox to end `timeout` from now; answers whether it
/// was paused.
async fn wake(
    state: &State,
    id: &str,
    timeout: u64,
    only_extend: bool,
) -> Result<(bool, Value), Response> {
    let (paused, container) = {
        let inner = state.lock();
        let Some(s) = inner.sandboxes.get(id) else { return Err(not_found(id)) };
        (s.paused, s.container.clone())
    };
    if paused && let Err(e) = state.engine.unpause(&container).await {
        return Err(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("Error resuming sandbox: {e}"),
        ));
    }
    let now = state.clock.now();
    let mut inner = state.lock();
    let Some(s) = inner.sandboxes.get_mut(id) else { return Err(not_found(id)) };
    s.paused = false;
    let end = now + timeout;
    s.end_at = if only_extend && !paused { s.end_at.max(end) } else { end };
    Ok((paused, created(s)))
}

/// The deprecated connect (`ConnectSandbox`: `timeout` required).
async fn connect(AxState(state): S, Path(id): Path<String>, body: Bytes) -> Response {
    let timeout = match required_timeout(&body) {
        Ok(t) => t,
        Err(r) => return r,
    };
    match wake(&state, &id, timeout, true).await {
        Ok((true, v)) => (StatusCode::CREATED, axum::Json(v)).into_response(),
        Ok((false, v)) => (StatusCode::OK, axum::Json(v)).into_response(),
        Err(r) => r,
    }
}

/// The current connect (`ConnectSandboxV2`): the body is optional and its
/// `timeout` defaults to 300 seconds; `memory: false` (a cold boot from the
/// disk alone) is refused, as E2B refuses it where the capability is not
/// enabled.
async fn connect_v2(AxState(state): S, Path(id): Path<String>, body: Bytes) -> Response {
    let body = match parse(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    match body.get("memory") {
        None | Some(Value::Bool(true)) => {}
        Some(Value::Bool(false)) => {
            return error(
                StatusCode::BAD_REQUEST,
                "resuming without memory is not enabled for this team",
            );
        }
        Some(_) => return error(StatusCode::BAD_REQUEST, "memory must be a boolean"),
    }
    let timeout = match timeout_of(&body, 300) {
        Ok(t) => t,
        Err(r) => return r,
    };
    match wake(&state, &id, timeout, true).await {
        Ok((true, v)) => (StatusCode::CREATED, axum::Json(v)).into_response(),
        Ok((false, v)) => (StatusCode::OK, axum::Json(v)).into_response(),
        Err(r) => r,
    }
}

/// The deprecated resume: refused for a running sandbox.
async fn resume(AxState(state): S, Path(id): Path<String>, body: Bytes) -> Response {
    let body = match parse(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let timeout = match timeout_of(&body, 15) {
        Ok(t) => t,
        Err(r) => return r,
    };
    if state.lock().sandboxes.get(&id).is_some_and(|s| !s.paused) {
        return error(StatusCode::CONFLICT, format!("Sandbox {id} is already running"));
    }
    match wake(&state, &id, timeout, false).await {
        Ok((_, v)) => (StatusCode::CREATED, axum::Json(v)).into_response(),
        Err(r) => r,
    }
}

/// Ends every running sandbox whose end time has passed.
pub(crate) async fn reap_once(state: &State) {
    let now = state.clock.now();
    let due: Vec<Sandbox> = {
        let mut inner = state.lock();
        let ids: Vec<String> = inner
            .sandboxes
            .values()
            .filter(|s| !s.paused && s.end_at <= now)
            .map(|s| s.id.clone())
            .collect();
        ids.iter().filter_map(|id| inner.sandboxes.remove(id)).collect()
    };
    for s in due {
        tracing::info!(sandbox = %s.id, "the E2B stand-in ends a sandbox at its end time");
        let _ = state.engine.remove(&s.container).await;
    }
}

/// Ends sandboxes at their end time, four times a second.
pub(crate) async fn reap(state: Arc<State>) {
    loop {
        reap_once(&state).await;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
