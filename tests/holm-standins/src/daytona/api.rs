//! Daytona's REST API and preview proxy, as the stand-in answers them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State as AxState};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::{BODY_LIMIT, DEFAULT_SNAPSHOT, PORTS, Sandbox, State, preview, snapshots};
use crate::common::{Call, Clock, random_id, ray, token};
use crate::engine::RunSpec;

type S = AxState<Arc<State>>;

/// Daytona's error envelope, as its exception filter writes it.
pub(super) fn error(status: StatusCode, path: &str, message: impl Into<String>) -> Response {
    let body = json!({
        "path": path,
        "timestamp": Clock::rfc3339(crate::common::Clock::default().now()),
        "statusCode": status.as_u16(),
        "error": status.canonical_reason().unwrap_or("Error"),
        "message": message.into(),
    });
    (status, axum::Json(body)).into_response()
}

pub(super) fn not_found(what: &str, id: &str) -> Response {
    error(StatusCode::NOT_FOUND, "", format!("{what} with ID or name {id} not found"))
}

pub(super) fn parse(body: &Bytes) -> Result<Value, Response> {
    if body.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_slice(body)
        .map_err(|_| error(StatusCode::BAD_REQUEST, "", "Invalid JSON in request body"))
}

/// The routes, behind the call log, injected failures, the body limit and
/// the key.
pub(crate) fn router(state: Arc<State>) -> Router {
    let api = Router::new()
        .route("/snapshots", post(snapshots::create_snapshot))
        .route("/snapshots/{id}", get(snapshots::get_snapshot).delete(snapshots::delete_snapshot))
        .route("/snapshots/{id}/activate", post(snapshots::activate_snapshot))
        .route("/sandbox", post(create).get(list))
        .route("/sandbox/{id}", get(detail).delete(destroy))
        .route("/sandbox/{id}/start", post(start))
        .route("/sandbox/{id}/stop", post(stop))
        .route("/sandbox/{id}/pause", post(pause))
        .route("/sandbox/{id}/autostop/{minutes}", post(autostop))
        .route("/sandbox/{id}/autodelete/{minutes}", post(autodelete))
        .route("/sandbox/{id}/last-activity", post(last_activity))
        .route("/sandbox/{id}/ports/{port}/preview-url", get(preview::preview_url));
    let toolbox = Router::new()
        .route("/{id}/files/upload", post(super::toolbox::upload))
        .route("/{id}/files/bulk-upload", post(super::toolbox::bulk_upload))
        .route("/{id}/files/download", get(super::toolbox::download))
        .route("/{id}/process/execute", post(super::toolbox::execute))
        .layer(DefaultBodyLimit::max(256 << 20));
    Router::new()
        .nest("/api", api)
        .nest("/toolbox", toolbox)
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&state), gate))
        .with_state(state)
}

/// Express's answer to a body over its limit (before Nest sees the request).
fn too_large() -> Response {
    let html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Error</title>\n</head>\n<body>\n<pre>Payload Too Large</pre>\n</body>\n</html>\n";
    (StatusCode::PAYLOAD_TOO_LARGE, [("content-type", "text/html; charset=utf-8")], html)
        .into_response()
}

async fn gate(AxState(state): S, req: Request, next: Next) -> Response {
    let (req, trace) = crate::trace::observe(req).await;
    let method = req.method().as_str().to_owned();
    let path = req.uri().path().to_owned();
    let length = req
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    let json_body = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json"));
    let after = state.faults.take_after(&method, &path);
    let mut response = if let Some(f) = state.faults.take(&method, &path) {
        let status = StatusCode::from_u16(f.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let message = if f.status == 429 {
            "ThrottlerException: Too Many Requests"
        } else {
            "An unexpected error occurred."
        };
        let mut r = error(status, &path, message);
        if let Some(secs) = f.retry_after {
            r.headers_mut().insert("retry-after", HeaderValue::from(secs));
        }
        r
    } else if path.starts_with("/api/") && json_body && length > BODY_LIMIT {
        too_large()
    } else {
        let key = req
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        if state.keys.accepts(key) {
            next.run(req).await
        } else {
            error(StatusCode::UNAUTHORIZED, &path, "Unauthorized")
        }
    };
    if let Some(f) = after {
        let status = StatusCode::from_u16(f.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        response = error(status, &path, "An unexpected error occurred.");
    }
    if let Ok(v) = HeaderValue::from_str(&ray()) {
        response.headers_mut().insert("cf-ray", v);
    }
    state.calls.push(Call { method, path, status: response.status().as_u16(), trace: Some(trace) });
    response
}

fn sandbox_dto(s: &Sandbox, state: &State) -> Value {
    json!({
        "id": s.id,
        "organizationId": state.organization,
        "name": s.name,
        "snapshot": s.snapshot,
        "user": "daytona",
        "env": s.env,
        "labels": s.labels,
        "public": s.public,
        "networkBlockAll": false,
        // The container sandboxes the stand-in makes expose no KVM.
        "kvm": false,
        "target": s.target,
        "cpu": s.cpu,
        "gpu": 0,
        "memory": s.memory,
        "disk": s.disk,
        "state": s.state,
        "desiredState": match s.state.as_str() { "stopped" | "stopping" => "stopped", "destroyed" | "destroying" => "destroyed", _ => "started" },
        "errorReason": s.error,
        "backupState": Value::Null,
        "autoStopInterval": s.auto_stop,
        "autoArchiveInterval": 10080,
        "autoDeleteInterval": s.auto_delete,
        "volumes": [],
        "createdAt": Clock::rfc3339(s.created),
        "updatedAt": Clock::rfc3339(s.updated),
        "lastActivityAt": Clock::rfc3339(s.last_activity),
        "daemonVersion": "0.190.0",
        "runnerId": "standin-runner",
        "toolboxProxyUrl": format!("{}/toolbox", state.base),
    })
}

fn set_state(state: &State, id: &str, st: &str) {
    let now = state.clock.now();
    if let Some(s) = state.lock().sandboxes.get_mut(id) {
        s.state = st.into();
        s.updated = now;
        if st == "stopped" {
            s.stopped_at = Some(now);
        }
    }
}

async fn create(AxState(state): S, body: Bytes) -> Response {
    let path = "/api/sandbox";
    let body = match parse(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let snapshot_name =
        body.get("snapshot").and_then(Value::as_str).unwrap_or(DEFAULT_SNAPSHOT).to_owned();
    if body.get("buildInfo").is_some() {
        return error(
            StatusCode::BAD_REQUEST,
            path,
            "the stand-in builds images as snapshots only (POST /snapshots)",
        );
    }
    match body.get("kvm") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => {
            return error(
                StatusCode::BAD_REQUEST,
                path,
                "KVM is available for linux-vm snapshots only",
            );
        }
        Some(_) => return error(StatusCode::BAD_REQUEST, path, "kvm must be a boolean value"),
    }
    if ["cpu", "memory", "disk"].iter().any(|k| body.get(*k).is_some_and(|v| !v.is_null())) {
        return error(
            StatusCode::BAD_REQUEST,
            path,
            "Cannot specify Sandbox resources when using a snapshot",
        );
    }
    let Some(snapshot) = snapshots::find_snapshot(&state, &snapshot_name) else {
        return not_found("Snapshot", &snapshot_name);
    };
    if snapshot.state != "active" {
        return error(
            StatusCode::BAD_REQUEST,
            path,
            format!("Snapshot {snapshot_name} is {}", snapshot.state),
        );
    }
    let target =
        body.get("target").and_then(Value::as_str).unwrap_or(super::DEFAULT_REGION).to_owned();
    if snapshot.id != "default" && snapshot.region != target {
        return error(
            StatusCode::BAD_REQUEST,
            path,
            format!("Snapshot {snapshot_name} is not available in region {target}"),
        );
    }
    snapshots::used(&state, &snapshot.id);
    let id = format!("{}-{}-{}-{}", random_id(8), random_id(4), random_id(4), random_id(12));
    let name = body.get("name").and_then(Value::as_str).unwrap_or(&id).to_owned();
    if state.find(&name).is_some() {
        return error(
            StatusCode::CONFLICT,
            path,
            format!("Sandbox with name {name} already exists"),
        );
    }
    let strings = |v: Option<&Value>| -> BTreeMap<String, String> {
        v.and_then(Value::as_object)
            .map(|m| {
                m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect()
            })
            .unwrap_or_default()
    };
    let int = |k: &str, default: i64| body.get(k).and_then(Value::as_i64).unwrap_or(default);
    let now = state.clock.now();
    let sandbox = Sandbox {
        id: id.clone(),
        name,
        snapshot: snapshot.name.clone(),
        container: None,
        ports: Default::default(),
        state: "creating".into(),
        labels: strings(body.get("labels")),
        env: strings(body.get("env")),
        public: body.get("public").and_then(Value::as_bool).unwrap_or(false),
        auto_stop: int("autoStopInterval", 15),
        auto_delete: int("autoDeleteInterval", -1),
        last_activity: now,
        made_at: std::time::Instant::now(),
        stopped_at: None,
        created: now,
        updated: now,
        auth_token: token(),
        cpu: snapshot.cpu,
        memory: snapshot.memory,
        disk: snapshot.disk,
        error: None,
        previews: Default::default(),
        target,
    };
    let dto = sandbox_dto(&sandbox, &state);
    state.lock().sandboxes.insert(id.clone(), sandbox);
    let task_state = Arc::clone(&state);
    let image = snapshot.image.clone().unwrap_or_default();
    tokio::spawn(async move { run_sandbox(task_state, id, image).await });
    (StatusCode::OK, axum::Json(dto)).into_response()
}

/// Makes a sandbox's container; the first process stands for Daytona's
/// daemon.
async fn run_sandbox(state: Arc<State>, id: String, image: String) {
    let Some(s) = state.find(&id) else { return };
    set_state(&state, &id, "starting");
    let spec = RunSpec {
        name: format!("standin-daytona-{id}"),
        image,
        entrypoint: Some(vec!["sleep".into(), "infinity".into()]),
        env: s.env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        ports: PORTS.to_vec(),
        memory_mib: Some(s.memory * 1024),
        cpus: Some(s.cpu),
        labels: s.labels.clone(),
        ..RunSpec::default()
    };
    match state.engine.run(&spec).await {
        Ok((container, ports)) => {
            let now = state.clock.now();
            let kept = match state.lock().sandboxes.get_mut(&id) {
                Some(s) => {
                    s.container = Some(container.clone());
                    s.ports = ports;
                    s.state = "started".into();
                    s.last_activity = now;
                    true
                }
                None => false,
            };
            // Deleted while it was being made.
            if !kept {
                let _ = state.engine.remove(&container).await;
            }
        }
        Err(e) => {
            if let Some(s) = state.lock().sandboxes.get_mut(&id) {
                s.state = "error".into();
                s.error = Some(e);
            }
        }
    }
}

async fn detail(AxState(state): S, Path(id): Path<String>) -> Response {
    match state.find(&id) {
        Some(s) => axum::Json(sandbox_dto(&s, &state)).into_response(),
        None => not_found("Sandbox", &id),
    }
}

fn list_item(s: &Sandbox, state: &State) -> Value {
    let mut v = sandbox_dto(s, state);
    if let Some(m) = v.as_object_mut() {
        // `SandboxListItem` (0.226) keeps `networkBlockAll` and drops `kvm`.
        for k in ["env", "kvm", "volumes", "autoArchiveInterval"] {
            m.remove(k);
        }
    }
    v
}

async fn list(AxState(state): S, Query(q): Query<BTreeMap<String, String>>) -> Response {
    let path = "/api/sandbox";
    let labels: BTreeMap<String, String> = match q.get("labels") {
        None => BTreeMap::new(),
        Some(text) => match serde_json::from_str(text) {
            Ok(l) => l,
            Err(_) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    path,
                    "labels must be a JSON object of strings",
                );
            }
        },
    };
    let limit: usize = match q.get("limit").map(|l| l.parse::<usize>()) {
        None => 100,
        Some(Ok(l)) if (1..=200).contains(&l) => l,
        Some(_) => {
            return error(StatusCode::BAD_REQUEST, path, "limit must not be greater than 200");
        }
    };
    let start: usize = q.get("cursor").and_then(|c| c.parse().ok()).unwrap_or(0);
    let lag = std::time::Duration::from_millis(
        state.list_lag_ms.load(std::sync::atomic::Ordering::Relaxed),
    );
    let mut all: Vec<Sandbox> = state
        .lock()
        .sandboxes
        .values()
        .filter(|s| labels.iter().all(|(k, v)| s.labels.get(k) == Some(v)))
        .filter(|s| s.made_at.elapsed() >= lag)
        .cloned()
        .collect();
    all.sort_by(|a, b| (b.created, &b.id).cmp(&(a.created, &a.id)));
    let items: Vec<Value> =
        all.iter().skip(start).take(limit).map(|s| list_item(s, &state)).collect();
    let next = (start + limit < all.len()).then(|| (start + limit).to_string());
    axum::Json(json!({ "items": items, "nextCursor": next })).into_response()
}

/// Stops a sandbox; one whose auto-delete is 0 is deleted at once.
pub(crate) async fn stop_sandbox(state: &State, id: &str) {
    let Some(s) = state.find(id) else { return };
    set_state(state, id, "stopping");
    if let Some(c) = &s.container {
        let _ = state.engine.stop(c).await;
    }
    set_state(state, id, "stopped");
    if s.auto_delete == 0 {
        destroy_sandbox(state, id).await;
    }
}

pub(crate) async fn destroy_sandbox(state: &State, id: &str) {
    let removed = state.lock().sandboxes.remove(id);
    if let Some(s) = removed {
        if let Some(c) = &s.container {
            let _ = state.engine.remove(c).await;
        }
        state.lock().destroyed.push(s.id);
    }
}

async fn stop(AxState(state): S, Path(id): Path<String>) -> Response {
    let Some(s) = state.find(&id) else { return not_found("Sandbox", &id) };
    if s.state == "started" {
        stop_sandbox(&state, &s.id).await;
    }
    match state.find(&s.id) {
        Some(s) => axum::Json(sandbox_dto(&s, &state)).into_response(),
        None => {
            let mut gone = s;
            gone.state = "destroyed".into();
            axum::Json(sandbox_dto(&gone, &state)).into_response()
        }
    }
}

async fn start(AxState(state): S, Path(id): Path<String>) -> Response {
    let Some(s) = state.find(&id) else { return not_found("Sandbox", &id) };
    match s.state.as_str() {
        "started" => {}
        "stopped" => {
            set_state(&state, &s.id, "starting");
            let container = s.container.clone().unwrap_or_default();
            let started = state.engine.start(&container).await;
            let ports = state.engine.host_ports(&container).await.unwrap_or_default();
            let now = state.clock.now();
            if let Some(x) = state.lock().sandboxes.get_mut(&s.id) {
                x.ports = ports;
                x.previews.clear();
                x.last_activity = now;
                x.stopped_at = None;
                x.state = if started.is_ok() { "started" } else { "error" }.into();
                x.error = started.err();
            }
        }
        other => {
            return error(
                StatusCode::BAD_REQUEST,
                "",
                format!("Sandbox is not in a valid state to be started: {other}"),
            );
        }
    }
    state.touch(&s.id);
    match state.find(&s.id) {
        Some(s) => axum::Json(sandbox_dto(&s, &state)).into_response(),
        None => not_found("Sandbox", &id),
    }
}

async fn pause(AxState(state): S, Path(id): Path<String>) -> Response {
    let Some(_s) = state.find(&id) else { return not_found("Sandbox", &id) };
    error(
        StatusCode::UNPROCESSABLE_ENTITY,
        "",
        "Pause is only supported for linux-vm and windows sandboxes",
    )
}

async fn destroy(AxState(state): S, Path(id): Path<String>) -> Response {
    let Some(mut s) = state.find(&id) else { return not_found("Sandbox", &id) };
    destroy_sandbox(&state, &s.id).await;
    s.state = "destroying".into();
    axum::Json(sandbox_dto(&s, &state)).into_response()
}

async fn autostop(AxState(state): S, Path((id, minutes)): Path<(String, String)>) -> Response {
    let Ok(m) =
        minutes.parse::<i64>().map_err(drop).and_then(|m| if m >= 0 { Ok(m) } else { Err(()) })
    else {
        return error(
            StatusCode::BAD_REQUEST,
            "",
            "Auto-stop interval must be a non-negative integer",
        );
    };
    let Some(s) = state.find(&id) else { return not_found("Sandbox", &id) };
    if let Some(x) = state.lock().sandboxes.get_mut(&s.id) {
        x.auto_stop = m;
    }
    state.touch(&s.id);
    current(&state, &s.id)
}

/// The sandbox as it is now, as Daytona answers a change.
fn current(state: &State, id: &str) -> Response {
    match state.find(id) {
        Some(s) => axum::Json(sandbox_dto(&s, state)).into_response(),
        None => not_found("Sandbox", id),
    }
}

async fn autodelete(AxState(state): S, Path((id, minutes)): Path<(String, String)>) -> Response {
    let Ok(m) = minutes.parse::<i64>() else {
        return error(StatusCode::BAD_REQUEST, "", "Auto-delete interval must be an integer");
    };
    let Some(s) = state.find(&id) else { return not_found("Sandbox", &id) };
    if let Some(x) = state.lock().sandboxes.get_mut(&s.id) {
        x.auto_delete = m;
    }
    current(&state, &s.id)
}

async fn last_activity(AxState(state): S, Path(id): Path<String>) -> Response {
    let Some(s) = state.find(&id) else { return not_found("Sandbox", &id) };
    state.touch(&s.id);
    StatusCode::CREATED.into_response()
}

/// Stops sandboxes idle past their auto-stop, and deletes stopped ones past
/// their auto-delete.
pub(crate) async fn reap_once(state: &State) {
    let now = state.clock.now();
    let (to_stop, to_delete): (Vec<String>, Vec<String>) = {
        let inner = state.lock();
        let stop = inner
            .sandboxes
            .values()
            .filter(|s| {
                s.state == "started"
                    && s.auto_stop > 0
                    && now >= s.last_activity + s.auto_stop as u64 * 60
            })
            .map(|s| s.id.clone())
            .collect();
        let delete = inner
            .sandboxes
            .values()
            .filter(|s| {
                s.state == "stopped"
                    && s.auto_delete >= 0
                    && s.stopped_at.is_some_and(|at| now >= at + s.auto_delete as u64 * 60)
            })
            .map(|s| s.id.clone())
            .collect();
        (stop, delete)
    };
    for id in to_stop {
        tracing::info!(sandbox = %id, "the Daytona stand-in auto-stops an idle sandbox");
        stop_sandbox(state, &id).await;
    }
    for id in to_delete {
        destroy_sandbox(state, &id).await;
    }
}

pub(crate) async fn reap(state: Arc<State>) {
    loop {
        reap_once(&state).await;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
