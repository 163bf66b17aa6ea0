//! Vercel's API as the stand-in answers it: the gate every request passes
//! (request id, injected failures, the token and the team), the error
//! shape, the sandboxes and their sessions' lives.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, Request, State as AxState};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Map, Value, json};

use super::{
    DEFAULT_IMAGE, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, Sandbox, Session, State, ops, registry,
};
use crate::common::{Call, random_id};
use crate::engine::RunSpec;

pub(super) type S = AxState<Arc<State>>;

/// The most tags a sandbox keeps.
const MAX_TAGS: usize = 5;
/// The most ports the API takes; exactly this many answers 500.
const MAX_PORTS: usize = 15;
/// The most vCPUs (the Pro plan's).
const MAX_VCPUS: u64 = 8;
/// Memory per vCPU, in MB.
pub(super) const MEMORY_PER_VCPU: u64 = 2048;

/// Vercel's error shape.
pub(super) fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = json!({ "error": { "code": code, "message": message.into() } });
    (status, axum::Json(body)).into_response()
}

pub(super) fn bad_request(message: impl Into<String>) -> Response {
    error(StatusCode::BAD_REQUEST, "bad_request", message)
}

pub(super) fn not_found(what: &str, id: &str) -> Response {
    error(StatusCode::NOT_FOUND, "not_found", format!("{what} {id} was not found"))
}

/// A JSON object body, or the refusal of it.
pub(super) fn object(body: &Bytes) -> Result<Map<String, Value>, Response> {
    if body.is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(bad_request("The body must be a JSON object")),
    }
}

/// The pairs of a query, repeated keys kept.
pub(super) fn query(raw: Option<&str>) -> Vec<(String, String)> {
    raw.map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect()).unwrap_or_default()
}

fn param(raw: Option<&str>, key: &str) -> Option<String> {
    query(raw).into_iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// The image a sandbox names none of.
pub(crate) const UNIVERSAL: &str = "vercel/sandbox/universal:latest";

/// The engine's image for an image reference: the stand-in's default for
/// Vercel's, or one pushed to the registry.
async fn image_for(state: &State, reference: &str) -> Result<String, Response> {
    if reference == UNIVERSAL {
        return Ok(DEFAULT_IMAGE.to_owned());
    }
    registry::local_image(state, reference).await
}

/// The routes, behind the gate.
pub(crate) fn router(state: Arc<State>) -> Router {
    let sessions = "/v2/sandboxes/sessions/{sid}";
    let api = Router::new()
        .route("/v2/teams/{id}", get(team))
        .route("/v9/projects/{id}", get(project))
        .route("/v1/vcr/repository/{repo}/tags/{tag}", get(registry::tag_status))
        .route("/v3/sandboxes", post(create))
        .route("/v2/sandboxes", post(create).get(list))
        .route("/v2/sandboxes/{name}", get(read).patch(update).delete(delete))
        .route(sessions, get(ops::session))
        .route(&format!("{sessions}/cmd"), post(ops::command))
        .route(&format!("{sessions}/cmd/{{cid}}"), get(ops::get_command))
        .route(&format!("{sessions}/cmd/{{cid}}/logs"), get(ops::logs))
        .route(&format!("{sessions}/cmd/{{cid}}/kill"), post(ops::kill))
        .route(&format!("{sessions}/fs/write"), post(ops::write))
        .route(&format!("{sessions}/fs/read"), post(ops::read))
        .route(&format!("{sessions}/fs/mkdir"), post(ops::mkdir))
        .route(&format!("{sessions}/extend-timeout"), post(ops::extend))
        .route(&format!("{sessions}/stop"), post(ops::stop));
    Router::new()
        .nest("/api", api)
        .fallback(|| async {
            error(StatusCode::NOT_FOUND, "not_found", "The page could not be found")
        })
        .layer(axum::extract::DefaultBodyLimit::max(256 << 20))
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&state), gate))
        .with_state(state)
}

fn bearer(req: &Request) -> Option<String> {
    req.headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned)
}

async fn gate(AxState(state): S, req: Request, next: Next) -> Response {
    let (req, trace) = crate::trace::observe(req).await;
    let id = format!("iad1::{}-{}", random_id(5), random_id(12));
    let method = req.method().as_str().to_owned();
    let path = req.uri().path().to_owned();
    let after = state.faults.take_after(&method, &path);
    let mut response = admit(&state, req, next).await;
    if let Some(f) = after {
        let status = StatusCode::from_u16(f.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        response = error(status, "internal_server_error", "An unexpected error occurred");
    }
    if let Ok(v) = HeaderValue::from_str(&id) {
        response.headers_mut().insert("x-vercel-id", v);
    }
    state.calls.push(Call { method, path, status: response.status().as_u16(), trace: Some(trace) });
    response
}

async fn admit(state: &State, req: Request, next: Next) -> Response {
    if let Some(f) = state.faults.take(req.method().as_str(), req.uri().path()) {
        let status = StatusCode::from_u16(f.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut r = match f.status {
            429 => error(status, "too_many_requests", "Rate limit exceeded"),
            _ => error(status, "internal_server_error", "An unexpected error occurred"),
        };
        if let Some(secs) = f.retry_after {
            r.headers_mut().insert("retry-after", HeaderValue::from(secs));
        }
        return r;
    }
    if !bearer(&req).is_some_and(|k| state.keys.accepts(&k)) {
        let body = json!({ "error": { "code": "forbidden", "message": "Not authorized", "invalidToken": true } });
        return (StatusCode::FORBIDDEN, axum::Json(body)).into_response();
    }
    if param(req.uri().query(), "teamId").as_deref() != Some(state.team_id.as_str()) {
        return error(
            StatusCode::FORBIDDEN,
            "forbidden",
            "You don't have permission to access this team",
        );
    }
    next.run(req).await
}

async fn team(AxState(state): S, Path(id): Path<String>) -> Response {
    if id != state.team_id {
        return not_found("Team", &id);
    }
    let plan = state.plan.lock().unwrap_or_else(|e| e.into_inner()).clone();
    axum::Json(json!({
        "id": state.team_id,
        "slug": state.team_slug,
        "name": state.team_slug,
        "billing": { "plan": plan },
    }))
    .into_response()
}

async fn project(AxState(state): S, Path(id): Path<String>) -> Response {
    if id != state.project_id && id != state.project_slug {
        return not_found("Project", &id);
    }
    axum::Json(
        json!({ "id": state.project_id, "name": state.project_slug, "accountId": state.team_id }),
    )
    .into_response()
}

/// The project a call names (`projectId` in the body or query, `project`
/// on lists), or the refusal of another.
fn project_of(state: &State, given: Option<&str>) -> Result<String, Response> {
    match given {
        Some(p) if p == state.project_id || p == state.project_slug => Ok(state.project_id.clone()),
        Some(p) => Err(not_found("Project", p)),
        None => Err(bad_request("projectId is required")),
    }
}

/// An object without its null fields: the API leaves out what is not set
/// (the SDK's validators take a missing optional field, not a null).
fn set_only(mut v: Value) -> Value {
    if let Value::Object(m) = &mut v {
        m.retain(|_, v| !v.is_null());
    }
    v
}

pub(super) fn session_json(x: &Session) -> Value {
    set_only(json!({
        "id": x.id,
        "memory": x.vcpus * MEMORY_PER_VCPU,
        "vcpus": x.vcpus,
        "region": "iad1",
        "timeout": x.timeout_ms,
        "status": x.status,
        "requestedAt": x.requested_ms,
        "startedAt": x.started_ms,
        "stoppedAt": x.stopped_ms,
        "createdAt": x.requested_ms,
        "updatedAt": x.stopped_ms.or(x.started_ms).unwrap_or(x.requested_ms),
        "cwd": "/vercel/sandbox",
    }))
}

pub(super) fn sandbox_json(s: &Sandbox, x: Option<&Session>) -> Value {
    set_only(json!({
        "name": s.name,
        "persistent": s.persistent,
        "region": "iad1",
        "vcpus": s.vcpus,
        "memory": s.vcpus * MEMORY_PER_VCPU,
        "image": s.image,
        "timeout": s.timeout_ms,
        "createdAt": s.created_ms,
        "updatedAt": s.updated_ms,
        "expiresAt": x.map(|x| x.started_ms.unwrap_or(x.requested_ms) + x.timeout_ms),
        "currentSessionId": s.session,
        "status": x.map_or("stopped", |x| x.status.as_str()),
        "cwd": "/vercel/sandbox",
        "tags": s.tags,
    }))
}

pub(super) fn routes_json(x: &Session) -> Value {
    let routes: Vec<Value> = x
        .routes
        .iter()
        .map(|(port, addr)| {
            json!({ "url": format!("http://{addr}"), "subdomain": format!("{}-{port}", x.id.to_lowercase().replace('_', "-")), "port": port })
        })
        .collect();
    Value::Array(routes)
}

/// `{sandbox, session, routes}` of a sandbox.
pub(super) fn full(state: &State, name: &str, resumed: Option<bool>) -> Response {
    let inner = state.lock();
    let Some(s) = inner.sandboxes.get(name) else { return not_found("Sandbox", name) };
    let Some(x) = inner.sessions.get(&s.session) else { return not_found("Sandbox", name) };
    let mut body = json!({
        "sandbox": sandbox_json(s, Some(x)),
        "session": session_json(x),
        "routes": routes_json(x),
    });
    if let Some(r) = resumed {
        body["resumed"] = Value::Bool(r);
    }
    axum::Json(body).into_response()
}

fn string_map(v: Option<&Value>, what: &str) -> Result<BTreeMap<String, String>, Response> {
    match v {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(m)) if m.values().all(Value::is_string) => {
            Ok(m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned())).collect())
        }
        Some(_) => Err(bad_request(format!("{what} must be an object of strings"))),
    }
}

/// The ports of a create or update: each 1024 to 65535; more than 15
/// refused, and exactly 15 the 500 Vercel answers.
fn ports(v: Option<&Value>) -> Result<Vec<u16>, Response> {
    let list = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(bad_request("ports must be an array of numbers")),
    };
    if list.len() > MAX_PORTS {
        return Err(bad_request(format!("At most {MAX_PORTS} ports can be exposed")));
    }
    if list.len() == MAX_PORTS {
        return Err(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_server_error",
            "An unexpected error occurred",
        ));
    }
    let mut out = Vec::new();
    for p in list {
        match p.as_u64().filter(|p| (1024..=65535).contains(p)) {
            Some(p) => out.push(p as u16),
            None => return Err(bad_request(format!("Port {p} is not between 1024 and 65535"))),
        }
    }
    Ok(out)
}

fn timeout_ms(state: &State, v: Option<&Value>) -> Result<Option<u64>, Response> {
    let hobby = *state.plan.lock().unwrap_or_else(|e| e.into_inner()) == "hobby";
    let max = if hobby { super::HOBBY_MAX_TIMEOUT_MS } else { MAX_TIMEOUT_MS };
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(t) => match t.as_u64().filter(|t| (1..=max).contains(t)) {
            Some(t) => Ok(Some(t)),
            None if hobby => Err(bad_request(format!(
                "timeout must be from 1 to {max} ms on the Hobby plan (45 minutes)"
            ))),
            None => Err(bad_request(format!("timeout must be from 1 to {max} ms"))),
        },
    }
}

fn vcpus(v: Option<&Value>) -> Result<Option<u64>, Response> {
    let Some(r) = v.filter(|r| !r.is_null()) else { return Ok(None) };
    match r.get("vcpus") {
        None | Some(Value::Null) => Ok(None),
        Some(n) => {
            match n.as_u64().filter(|n| *n == 1 || (n % 2 == 0 && (2..=MAX_VCPUS).contains(n))) {
                Some(n) => Ok(Some(n)),
                None => Err(bad_request(format!(
                    "resources.vcpus must be 1 or an even number up to {MAX_VCPUS}"
                ))),
            }
        }
    }
}

async fn create(AxState(state): S, body: Bytes) -> Response {
    let body = match object(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let checked = (|| {
        project_of(&state, body.get("projectId").and_then(Value::as_str))?;
        if body.get("runtime").is_some_and(|v| !v.is_null())
            && body.get("image").is_some_and(|v| !v.is_null())
        {
            return Err(bad_request("runtime and image cannot be used together"));
        }
        if body.get("source").is_some_and(|v| !v.is_null()) {
            return Err(bad_request("The stand-in makes sandboxes from images only, not sources"));
        }
        let tags = string_map(body.get("tags"), "tags")?;
        if tags.len() > MAX_TAGS {
            return Err(bad_request(format!("At most {MAX_TAGS} tags are allowed")));
        }
        let env = string_map(body.get("env"), "env")?;
        let ports = ports(body.get("ports"))?;
        let timeout = timeout_ms(&state, body.get("timeout"))?.unwrap_or(DEFAULT_TIMEOUT_MS);
        let vcpus = vcpus(body.get("resources"))?.unwrap_or(2);
        Ok((tags, env, ports, timeout, vcpus))
    })();
    let (tags, env, ports, timeout, vcpus) = match checked {
        Ok(c) => c,
        Err(r) => return r,
    };
    let name = match body.get("name") {
        None | Some(Value::Null) => format!("sbx_{}", random_id(24)),
        Some(Value::String(n))
            if !n.is_empty()
                && n.len() <= 128
                && n.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) =>
        {
            n.clone()
        }
        Some(_) => return bad_request("name must be 1 to 128 letters, digits, '-', '_' or '.'"),
    };
    let image = body.get("image").and_then(Value::as_str).unwrap_or(UNIVERSAL).to_owned();
    let tag = match image_for(&state, &image).await {
        Ok(t) => t,
        Err(r) => return r,
    };
    let now = state.now_ms();
    let sid = format!("sbx_{}", random_id(24));
    {
        let mut inner = state.lock();
        if let Some(old) = inner.sandboxes.get(&name) {
            let live = inner.sessions.get(&old.session).is_some_and(|x| x.status != "stopped");
            if live || old.persistent {
                return error(
                    StatusCode::CONFLICT,
                    "sandbox_exists",
                    format!("A sandbox named {name} already exists in this project"),
                );
            }
        }
        let sandbox = Sandbox {
            name: name.clone(),
            image,
            ports,
            vcpus,
            timeout_ms: timeout,
            env,
            tags,
            persistent: body.get("persistent").and_then(Value::as_bool).unwrap_or(true),
            session: sid.clone(),
            created_ms: now,
            updated_ms: now,
            made_at: std::time::Instant::now(),
        };
        inner.sessions.insert(sid.clone(), new_session(&sandbox, &sid, now));
        inner.sandboxes.insert(name.clone(), sandbox);
    }
    // Create answers once the sandbox is ready (Vercel's changelog,
    // "sandbox-create-waits-until-ready").
    start_session(Arc::clone(&state), sid, tag).await;
    full(&state, &name, None)
}

fn new_session(s: &Sandbox, sid: &str, now: u64) -> Session {
    Session {
        id: sid.to_owned(),
        sandbox: s.name.clone(),
        status: "pending".into(),
        vcpus: s.vcpus,
        timeout_ms: s.timeout_ms,
        requested_ms: now,
        started_ms: None,
        stopped_ms: None,
        container: None,
        ports: Default::default(),
        routes: Default::default(),
        commands: Default::default(),
    }
}

/// Makes a session's container (its first process waits, as Vercel's own
/// init does) and a route for each port.
async fn start_session(state: Arc<State>, sid: String, image: String) {
    let Some((s, _)) = ({
        let inner = state.lock();
        inner
            .sessions
            .get(&sid)
            .and_then(|x| inner.sandboxes.get(&x.sandbox))
            .cloned()
            .map(|s| (s, ()))
    }) else {
        return;
    };
    let spec = RunSpec {
        name: format!("standin-vercel-{}", sid.to_lowercase()),
        image,
        entrypoint: Some(vec!["sleep".into(), "infinity".into()]),
        env: s.env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        ports: s.ports.clone(),
        memory_mib: Some(s.vcpus * MEMORY_PER_VCPU),
        cpus: Some(s.vcpus),
        // The tags, so a test finds the container of a sandbox by them.
        labels: s.tags.clone(),
        ..RunSpec::default()
    };
    match state.engine.run(&spec).await {
        Ok((container, host_ports)) => {
            let mut routes = BTreeMap::new();
            for &port in &s.ports {
                let (addr, task) = ops::route(Arc::clone(&state), sid.clone(), port).await;
                state.spawn(task);
                routes.insert(port, addr);
            }
            let now = state.now_ms();
            let kept = match state.lock().sessions.get_mut(&sid) {
                Some(x) if x.status == "pending" => {
                    x.container = Some(container.clone());
                    x.ports = host_ports;
                    x.routes = routes;
                    x.status = "running".into();
                    x.started_ms = Some(now);
                    true
                }
                _ => false,
            };
            if !kept {
                let _ = state.engine.remove(&container).await;
            }
        }
        Err(e) => {
            tracing::warn!(session = %sid, error = %e, "the Vercel stand-in cannot start a sandbox");
            if let Some(x) = state.lock().sessions.get_mut(&sid) {
                x.status = "failed".into();
                x.stopped_ms = Some(state.now_ms());
            }
        }
    }
}

async fn read(AxState(state): S, Path(name): Path<String>, RawQuery(raw): RawQuery) -> Response {
    if let Err(r) = project_of(&state, param(raw.as_deref(), "projectId").as_deref()) {
        return r;
    }
    if param(raw.as_deref(), "resume").as_deref() != Some("true") {
        return full(&state, &name, None);
    }
    // Resume: a stopped persistent sandbox gets a new session.
    let resumed = {
        let mut inner = state.lock();
        let Some(s) = inner.sandboxes.get(&name).cloned() else {
            return not_found("Sandbox", &name);
        };
        let stopped = inner.sessions.get(&s.session).is_none_or(|x| x.status == "stopped");
        if !stopped {
            None
        } else if !s.persistent {
            return error(
                StatusCode::GONE,
                "sandbox_stopped",
                "The sandbox is stopped and is not persistent",
            );
        } else {
            let sid = format!("sbx_{}", random_id(24));
            let now = state.now_ms();
            inner.sessions.insert(sid.clone(), new_session(&s, &sid, now));
            if let Some(x) = inner.sandboxes.get_mut(&name) {
                x.session = sid.clone();
                x.updated_ms = now;
            }
            Some((sid, s.image.clone()))
        }
    };
    match resumed {
        None => full(&state, &name, Some(false)),
        Some((sid, image)) => {
            match image_for(&state, &image).await {
                Ok(tag) => start_session(Arc::clone(&state), sid, tag).await,
                Err(r) => return r,
            }
            full(&state, &name, Some(true))
        }
    }
}

async fn list(AxState(state): S, RawQuery(raw): RawQuery) -> Response {
    let q = query(raw.as_deref());
    let get = |k: &str| q.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    if let Err(r) = project_of(&state, get("project").as_deref()) {
        return r;
    }
    let mut wanted = Vec::new();
    for (_, v) in q.iter().filter(|(k, _)| k == "tags") {
        match v.split_once(':') {
            Some((k, v)) => wanted.push((k.to_owned(), v.to_owned())),
            None => return bad_request(format!("tags filter {v:?} is not key:value")),
        }
    }
    let limit = match get("limit").map(|l| l.parse::<usize>()) {
        None => 50,
        Some(Ok(n)) if (1..=100).contains(&n) => n,
        Some(_) => return bad_request("limit must be from 1 to 100"),
    };
    let start = match get("cursor").map(|c| c.parse::<usize>()) {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(_)) => return bad_request("cursor is not one this API gave"),
    };
    let prefix = get("namePrefix").unwrap_or_default();
    let lag = std::time::Duration::from_millis(
        state.list_lag_ms.load(std::sync::atomic::Ordering::Relaxed),
    );
    let inner = state.lock();
    let all: Vec<Value> = inner
        .sandboxes
        .values()
        .filter(|s| s.name.starts_with(&prefix))
        .filter(|s| s.made_at.elapsed() >= lag)
        .filter(|s| wanted.iter().all(|(k, v)| s.tags.get(k) == Some(v)))
        .map(|s| sandbox_json(s, inner.sessions.get(&s.session)))
        .collect();
    let page: Vec<Value> = all.iter().skip(start).take(limit).cloned().collect();
    let next = (start + limit < all.len()).then(|| (start + limit).to_string());
    axum::Json(json!({ "sandboxes": page, "pagination": { "count": page.len(), "next": next } }))
        .into_response()
}

async fn update(
    AxState(state): S,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
    body: Bytes,
) -> Response {
    if let Err(r) = project_of(&state, param(raw.as_deref(), "projectId").as_deref()) {
        return r;
    }
    let body = match object(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let checked = (|| {
        let tags = body.get("tags").map(|t| string_map(Some(t), "tags")).transpose()?;
        if tags.as_ref().is_some_and(|t| t.len() > MAX_TAGS) {
            return Err(bad_request(format!("At most {MAX_TAGS} tags are allowed")));
        }
        let ports = body.get("ports").map(|p| ports(Some(p))).transpose()?;
        Ok((tags, ports, timeout_ms(&state, body.get("timeout"))?, vcpus(body.get("resources"))?))
    })();
    let (tags, ports, timeout, vcpus) = match checked {
        Ok(c) => c,
        Err(r) => return r,
    };
    {
        let mut inner = state.lock();
        let now = state.now_ms();
        let Some(s) = inner.sandboxes.get_mut(&name) else { return not_found("Sandbox", &name) };
        if let Some(t) = tags {
            s.tags = t;
        }
        if let Some(p) = ports {
            s.ports = p;
        }
        if let Some(t) = timeout {
            s.timeout_ms = t;
        }
        if let Some(v) = vcpus {
            s.vcpus = v;
        }
        if let Some(p) = body.get("persistent").and_then(Value::as_bool) {
            s.persistent = p;
        }
        s.updated_ms = now;
    }
    let inner = state.lock();
    let Some(s) = inner.sandboxes.get(&name) else { return not_found("Sandbox", &name) };
    let x = inner.sessions.get(&s.session);
    axum::Json(json!({
        "sandbox": sandbox_json(s, x),
        "routes": x.map_or(Value::Array(Vec::new()), routes_json),
    }))
    .into_response()
}

async fn delete(AxState(state): S, Path(name): Path<String>, RawQuery(raw): RawQuery) -> Response {
    if let Err(r) = project_of(&state, param(raw.as_deref(), "projectId").as_deref()) {
        return r;
    }
    let Some(s) = state.lock().sandboxes.get(&name).cloned() else {
        return not_found("Sandbox", &name);
    };
    stop_session(&state, &s.session).await;
    let inner = &mut *state.lock();
    let Some(s) = inner.sandboxes.remove(&name) else { return not_found("Sandbox", &name) };
    let x = inner.sessions.get(&s.session);
    axum::Json(json!({ "sandbox": sandbox_json(&s, x) })).into_response()
}

/// Stops a session: `stopping` while its container goes, then `stopped`.
pub(super) async fn stop_session(state: &State, sid: &str) {
    let container = {
        let mut inner = state.lock();
        let Some(x) = inner.sessions.get_mut(sid) else { return };
        if x.status == "stopped" || x.status == "failed" {
            return;
        }
        x.status = "stopping".into();
        x.container.take()
    };
    if let Some(c) = container {
        let _ = state.engine.remove(&c).await;
    }
    let now = state.now_ms();
    if let Some(x) = state.lock().sessions.get_mut(sid) {
        x.status = "stopped".into();
        x.stopped_ms = Some(now);
        x.routes.clear();
    }
}

/// Stops the sessions whose timeout has passed.
pub(crate) async fn reap_once(state: &State) {
    let now = state.now_ms();
    let due: Vec<String> = state
        .lock()
        .sessions
        .values()
        .filter(|x| x.status == "running")
        .filter(|x| x.started_ms.unwrap_or(x.requested_ms) + x.timeout_ms <= now)
        .map(|x| x.id.clone())
        .collect();
    for sid in due {
        tracing::info!(session = %sid, "the Vercel stand-in ends a session at its timeout");
        stop_session(state, &sid).await;
    }
}

pub(crate) async fn reap(state: Arc<State>) {
    loop {
        reap_once(&state).await;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
