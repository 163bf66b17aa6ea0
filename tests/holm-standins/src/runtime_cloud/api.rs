//! Runtime Cloud's API as the stand-in answers it: the gate every request
//! passes (request id, injected failures, the key, idempotency), the error
//! shape, and the sandboxes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, RawQuery, Request, State as AxState};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Map, Value, json};
use sha2::Digest as _;

use super::{
    DEFAULT_IMAGE, MAX_LEASE_SECS, PORTS, Remembered, Sandbox, State, images, ops, processes,
};
use crate::common::{Call, Clock, random_id, token};
use crate::engine::RunSpec;

pub(super) type S = AxState<Arc<State>>;

/// How long an idempotency key is remembered.
const IDEMPOTENCY_SECS: u64 = 24 * 3600;
/// The longest `Prefer: wait` and `timeoutSeconds` of a read.
const MAX_WAIT_SECS: u64 = 120;
/// How many trial sandboxes run or are paused at once.
const TRIAL_CONCURRENT: usize = 3;

tokio::task_local! {
    static REQUEST_ID: String;
}

/// The id of the request being answered.
fn request_id() -> String {
    REQUEST_ID.try_with(Clone::clone).unwrap_or_else(|_| format!("req_{}", random_id(19)))
}

/// The one error shape.
pub(super) fn error(
    status: StatusCode,
    code: &str,
    message: impl Into<String>,
    hint: &str,
    details: Option<Value>,
) -> Response {
    let mut e = json!({
        "code": code,
        "status": status.as_u16(),
        "message": message.into(),
        "hint": hint,
        "requestId": request_id(),
    });
    if let Some(d) = details {
        e["details"] = d;
    }
    (status, axum::Json(json!({ "error": e }))).into_response()
}

pub(super) fn not_found(what: &str, id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("No {what} {id} in this account."),
        "Check the id.",
        None,
    )
}

/// 400 `invalid_request` naming every wrong field.
pub(super) fn invalid(issues: Vec<(String, String)>) -> Response {
    let list: Vec<Value> = issues.iter().map(|(p, m)| json!({ "path": p, "message": m })).collect();
    let names: Vec<&str> = issues.iter().map(|(p, _)| p.as_str()).collect();
    error(
        StatusCode::BAD_REQUEST,
        "invalid_request",
        format!("The request has invalid fields: {}.", names.join(", ")),
        "Fix the named fields; unknown fields are refused.",
        Some(json!({ "issues": list })),
    )
}

/// A JSON object body, or the refusal of it.
pub(super) fn object(body: &Bytes) -> Result<Map<String, Value>, Response> {
    if body.is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(invalid(vec![("body".into(), "must be a JSON object".into())])),
    }
}

/// Names each field of `body` not in `known`.
pub(super) fn unknown(body: &Map<String, Value>, known: &[&str]) -> Vec<(String, String)> {
    body.keys()
        .filter(|k| !known.contains(&k.as_str()))
        .map(|k| (k.clone(), "is not a field of this request".to_owned()))
        .collect()
}

/// The pairs of a query, repeated keys kept.
pub(super) fn query(raw: Option<&str>) -> Vec<(String, String)> {
    raw.map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect()).unwrap_or_default()
}

/// The routes, behind the gate.
pub(crate) fn router(state: Arc<State>) -> Router {
    let v1 = Router::new()
        .route("/sandboxes", post(create).get(list))
        .route("/sandboxes/{id}", get(read).post(verb))
        .route("/sandboxes/{id}/processes", post(processes::start).get(processes::list))
        .route("/sandboxes/{id}/processes/{processId}", get(processes::read))
        .route("/sandboxes/{id}/files/content", get(ops::read_file).put(ops::write_file))
        .route("/sandboxes/{id}/previews", post(ops::share).get(ops::previews))
        .route("/sandboxes/{id}/previews/{port}", get(ops::preview).post(ops::rotate))
        .route("/images", post(images::create).get(images::list))
        .route("/images/{id}", get(images::read).post(images::delete))
        .route("/images/{id}/logs", get(images::logs))
        .route("/me", get(me))
        .route("/resources", axum::routing::any(removed))
        .route("/resources/{*rest}", axum::routing::any(removed));
    Router::new()
        .nest("/v1", v1)
        .fallback(|| async {
            error(
                StatusCode::NOT_FOUND,
                "route_not_found",
                "No such route.",
                "See the OpenAPI document at /v1/openapi.json.",
                None,
            )
        })
        .layer(axum::extract::DefaultBodyLimit::max(256 << 20))
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&state), gate))
        .with_state(state)
}

/// The 0.1.0 routes, removed on 22 September 2026.
async fn removed() -> Response {
    error(
        StatusCode::GONE,
        "upgrade_required",
        "The 0.1.0 routes under /v1/resources were removed.",
        "Move to API 0.2.0: see the migration guide.",
        Some(json!({ "replacement": "/v1/sandboxes" })),
    )
}

async fn me(AxState(state): S, headers: HeaderMap) -> Response {
    let key = bearer(&headers).unwrap_or_default();
    let credential = hex::encode(&sha2::Sha256::digest(key.as_bytes())[..8]);
    axum::Json(json!({
        "orgId": state.org,
        "principalId": format!("prn_{}", &credential[..8]),
        "credentialId": format!("key_{credential}"),
    }))
    .into_response()
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned)
}

async fn gate(AxState(state): S, req: Request, next: Next) -> Response {
    let (req, trace) = crate::trace::observe(req).await;
    let id = format!("req_{}", random_id(19));
    let method = req.method().as_str().to_owned();
    let path = req.uri().path().to_owned();
    let mut response = REQUEST_ID.scope(id.clone(), admit(&state, req, next)).await;
    if let Ok(v) = HeaderValue::from_str(&id) {
        response.headers_mut().insert("x-request-id", v);
    }
    state.calls.push(Call { method, path, status: response.status().as_u16(), trace: Some(trace) });
    response
}

async fn admit(state: &State, req: Request, next: Next) -> Response {
    let method = req.method().clone();
    if let Some(f) = state.faults.take(method.as_str(), req.uri().path()) {
        let status = StatusCode::from_u16(f.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut r = match f.status {
            429 => error(
                status,
                "rate_limited",
                "Too many requests for this key.",
                "Wait Retry-After, then retry with the same key.",
                None,
            ),
            503 => error(
                status,
                "busy",
                "The service is busy.",
                "Retry after Retry-After with the same idempotency key.",
                None,
            ),
            _ => error(
                status,
                "internal",
                "Something went wrong on our side.",
                "Retry with the same idempotency key, and quote the request id if it persists.",
                None,
            ),
        };
        if let Some(secs) = f.retry_after {
            r.headers_mut().insert("retry-after", HeaderValue::from(secs));
        }
        return r;
    }
    if !bearer(req.headers()).is_some_and(|k| state.keys.accepts(&k)) {
        return error(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "The API key is missing, wrong or revoked.",
            "Check the key (RUNTIME_API_KEY).",
            None,
        );
    }
    let key = req.headers().get("idempotency-key").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let change = matches!(method, Method::POST | Method::PUT | Method::DELETE | Method::PATCH);
    let Some(key) = key.filter(|_| change) else { return next.run(req).await };
    let (parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 256 << 20).await else {
        return invalid(vec![("body".into(), "could not be read".into())]);
    };
    let mut h = sha2::Sha256::new();
    for part in [parts.method.as_str().as_bytes(), parts.uri.to_string().as_bytes(), &bytes] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    let fingerprint = hex::encode(h.finalize());
    let now = state.clock.now();
    let remembered = {
        let mut inner = state.lock();
        inner.idempotency.retain(|_, r| now < r.at + IDEMPOTENCY_SECS);
        inner.idempotency.get(&key).cloned()
    };
    if let Some(r) = remembered {
        if r.fingerprint != fingerprint {
            return error(
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency_key_reused",
                "This idempotency key was used before with a different request.",
                "Same key, same body; or a new key for new work.",
                None,
            );
        }
        let mut body = r.body.clone();
        if let Ok(Value::Object(mut m)) = serde_json::from_slice::<Value>(&body) {
            m.insert("replayed".into(), Value::Bool(true));
            body = serde_json::to_vec(&m).unwrap_or(body);
        }
        let mut resp = (
            StatusCode::from_u16(r.status).unwrap_or(StatusCode::OK),
            [("content-type", "application/json")],
            body,
        )
            .into_response();
        resp.headers_mut().insert("idempotency-replayed", HeaderValue::from_static("true"));
        return resp;
    }
    let resp = next.run(Request::from_parts(parts, Body::from(bytes))).await;
    if !resp.status().is_success() {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let bytes = axum::body::to_bytes(body, 64 << 20).await.unwrap_or_default();
    state.lock().idempotency.insert(
        key,
        Remembered { fingerprint, status: parts.status.as_u16(), body: bytes.to_vec(), at: now },
    );
    Response::from_parts(parts, Body::from(bytes))
}

/// `Prefer: wait=N`, at most 120 seconds.
pub(super) fn prefer_wait(headers: &HeaderMap) -> Option<u64> {
    let v = headers.get("prefer")?.to_str().ok()?;
    v.split(',')
        .filter_map(|p| p.trim().strip_prefix("wait="))
        .find_map(|n| n.trim().parse::<u64>().ok())
        .map(|n| n.min(MAX_WAIT_SECS))
}

pub(super) fn sandbox_json(s: &Sandbox) -> Value {
    json!({
        "id": s.id,
        "kind": "sandbox",
        "name": s.name,
        "labels": s.labels,
        "state": s.state,
        "region": "us-east-vin",
        "funding": s.funding,
        "vcpu": s.vcpu,
        "memoryMiB": s.memory_mib,
        "diskMiB": s.disk_mib,
        "cpu": s.cpu,
        "cpuFloorMillis": s.cpu_floor,
        "timeoutSeconds": s.timeout_secs,
        "onLeaseEnd": s.on_lease_end,
        "pausable": s.pausable,
        "image": s.image,
        "expiresAt": Clock::rfc3339(s.expires_at),
        "createdAt": Clock::rfc3339(s.created),
        "stopReason": s.stop_reason,
    })
}

const CREATE_FIELDS: &[&str] = &[
    "name",
    "labels",
    "funding",
    "region",
    "vcpu",
    "memoryMiB",
    "diskMiB",
    "cpu",
    "cpuFloorMillis",
    "timeoutSeconds",
    "onLeaseEnd",
    "pausable",
    "network",
    "maxCostMicros",
    "image",
    "volumes",
    "snapshot",
];

fn int(
    body: &Map<String, Value>,
    k: &str,
    min: u64,
    max: u64,
    issues: &mut Vec<(String, String)>,
) -> Option<u64> {
    let v = body.get(k)?;
    match v.as_u64().filter(|n| (min..=max).contains(n)) {
        Some(n) => Some(n),
        None => {
            issues.push((k.into(), format!("must be a whole number from {min} to {max}")));
            None
        }
    }
}

fn one_of(
    body: &Map<String, Value>,
    k: &str,
    allowed: &[&str],
    issues: &mut Vec<(String, String)>,
) -> Option<String> {
    let v = body.get(k)?;
    match v.as_str().filter(|s| allowed.contains(s)) {
        Some(s) => Some(s.to_owned()),
        None => {
            issues.push((k.into(), format!("must be one of {}", allowed.join(", "))));
            None
        }
    }
}

async fn create(AxState(state): S, headers: HeaderMap, body: Bytes) -> Response {
    let body = match object(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let mut issues = unknown(&body, CREATE_FIELDS);
    let vcpu = int(&body, "vcpu", 1, 16, &mut issues).unwrap_or(2);
    let memory_mib = int(&body, "memoryMiB", 512, 65536, &mut issues).unwrap_or(4096);
    let disk_mib = int(&body, "diskMiB", 3072, 262_144, &mut issues).unwrap_or(4096);
    let timeout_secs = int(&body, "timeoutSeconds", 1, MAX_LEASE_SECS, &mut issues).unwrap_or(1800);
    let cpu_floor = int(&body, "cpuFloorMillis", 1, 16_000, &mut issues).unwrap_or(50);
    let on_lease_end = one_of(&body, "onLeaseEnd", &["pause", "stop"], &mut issues)
        .unwrap_or_else(|| "pause".into());
    let cpu = one_of(&body, "cpu", &["shared", "reserved"], &mut issues)
        .unwrap_or_else(|| "shared".into());
    let funding =
        one_of(&body, "funding", &["trial", "paid"], &mut issues).unwrap_or_else(|| "paid".into());
    let name = match body.get("name") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() && s.len() <= 128 => Some(s.clone()),
        Some(_) => {
            issues.push(("name".into(), "must be a string of 1 to 128 characters".into()));
            None
        }
    };
    let labels: BTreeMap<String, String> = match body.get("labels") {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(m)) if m.len() <= 32 && m.values().all(Value::is_string) => {
            m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned())).collect()
        }
        Some(_) => {
            issues.push(("labels".into(), "must be up to 32 string values".into()));
            BTreeMap::new()
        }
    };
    if body.get("pausable").is_some_and(|v| !v.is_boolean()) {
        issues.push(("pausable".into(), "must be true or false".into()));
    }
    if body.get("region").is_some_and(|r| r.as_str() != Some("us-east-vin")) {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_region",
            "That region is not available to this account.",
            "Use a region listed for your account, or omit it.",
            Some(json!({ "available": ["us-east-vin"] })),
        );
    }
    if !issues.is_empty() {
        return invalid(issues);
    }
    if body.get("snapshot").is_some_and(|v| !v.is_null()) {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "fork_unavailable",
            "Forks and snapshots are paused while we fix an issue.",
            "Create without a snapshot; retrying will not help.",
            None,
        );
    }
    let image = match body.get("image").and_then(Value::as_str) {
        None => None,
        Some(id) => match state.lock().images.get(id) {
            Some(i) if i.state == "ready" => Some((i.id.clone(), i.tag.clone())),
            Some(_) => {
                return invalid(vec![("image".into(), format!("image {id} is not ready"))]);
            }
            None => return not_found("image", id),
        },
    };
    if funding == "trial" {
        if vcpu > 2 || memory_mib > 4096 || disk_mib > 10240 {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_trial",
                "A trial sandbox is at most 2 vCPU, 4 GiB of memory and 10 GiB of disk.",
                "Omit the size fields for the default.",
                None,
            );
        }
        let busy: Vec<String> = state
            .lock()
            .sandboxes
            .values()
            .filter(|s| s.funding == "trial" && s.state != "stopped")
            .map(|s| s.id.clone())
            .collect();
        if busy.len() >= TRIAL_CONCURRENT {
            return error(
                StatusCode::CONFLICT,
                "trial_busy",
                format!(
                    "The trial runs {TRIAL_CONCURRENT} sandboxes at once; {} are running or paused.",
                    busy.len()
                ),
                "Stop one (runtime sandbox stop <id>), or pass funding: \"paid\" to use prepaid credit.",
                Some(json!({ "sandboxIds": busy, "concurrent": TRIAL_CONCURRENT })),
            );
        }
    }
    let now = state.clock.now();
    let id = uuid();
    let sandbox = Sandbox {
        id: id.clone(),
        name,
        labels,
        state: "starting".into(),
        funding,
        vcpu,
        memory_mib,
        disk_mib,
        cpu,
        cpu_floor,
        timeout_secs,
        on_lease_end,
        pausable: body.get("pausable").and_then(Value::as_bool).unwrap_or(true),
        image: image.as_ref().map(|(id, _)| id.clone()),
        expires_at: now + timeout_secs,
        created: now,
        stop_reason: None,
        container: None,
        ports: Default::default(),
        previews: Default::default(),
    };
    {
        let mut inner = state.lock();
        inner.sandboxes.insert(id.clone(), sandbox);
        inner.order.push(id.clone());
    }
    let tag = image.map_or_else(|| DEFAULT_IMAGE.to_owned(), |(_, tag)| tag);
    let task_state = Arc::clone(&state);
    let task_id = id.clone();
    let boot = tokio::spawn(async move { run_sandbox(task_state, task_id, tag).await });
    if let Some(secs) = prefer_wait(&headers) {
        let _ = tokio::time::timeout(Duration::from_secs(secs), boot).await;
    }
    match state.sandbox(&id) {
        Some(s) => (StatusCode::CREATED, axum::Json(sandbox_json(&s))).into_response(),
        None => not_found("sandbox", &id),
    }
}

/// An id as the API's: a random UUID (version 4).
fn uuid() -> String {
    let t = token();
    format!("{}-{}-4{}-8{}-{}", &t[..8], &t[8..12], &t[13..16], &t[17..20], &t[20..32])
}

/// Makes a sandbox's container; its first process stands for the microVM's
/// own agent.
async fn run_sandbox(state: Arc<State>, id: String, image: String) {
    let Some(s) = state.sandbox(&id) else { return };
    let spec = RunSpec {
        name: format!("standin-runtime-cloud-{id}"),
        image,
        entrypoint: Some(vec!["sleep".into(), "infinity".into()]),
        env: Vec::new(),
        ports: PORTS.to_vec(),
        memory_mib: Some(s.memory_mib),
        cpus: Some(s.vcpu),
        labels: s.labels.clone(),
        ..RunSpec::default()
    };
    match state.engine.run(&spec).await {
        Ok((container, ports)) => {
            let kept = match state.lock().sandboxes.get_mut(&id) {
                Some(s) if s.state == "starting" => {
                    s.container = Some(container.clone());
                    s.ports = ports;
                    s.state = "running".into();
                    true
                }
                _ => false,
            };
            // Stopped while it was being made.
            if !kept {
                let _ = state.engine.remove(&container).await;
            }
        }
        Err(e) => {
            tracing::warn!(sandbox = %id, error = %e, "the Runtime Cloud stand-in cannot start a sandbox");
            if let Some(s) = state.lock().sandboxes.get_mut(&id) {
                s.state = "stopped".into();
                s.stop_reason = Some("start_failed".into());
            }
        }
    }
}

async fn list(AxState(state): S, RawQuery(raw): RawQuery) -> Response {
    let q = query(raw.as_deref());
    let mut issues = Vec::new();
    let mut labels = Vec::new();
    let mut states = Vec::new();
    let (mut name, mut include_stopped, mut limit, mut cursor) = (None, false, 100usize, 0usize);
    for (k, v) in &q {
        match k.as_str() {
            "label" => match v.split_once(':') {
                Some((lk, lv)) => labels.push((lk.to_owned(), lv.to_owned())),
                None => issues.push(("label".into(), "must be key:value".into())),
            },
            "state" => states.extend(v.split(',').map(str::to_owned)),
            "name" => name = Some(v.clone()),
            "includeStopped" => include_stopped = v == "true",
            "limit" => match v.parse::<usize>() {
                Ok(n) if (1..=100).contains(&n) => limit = n,
                _ => issues.push(("limit".into(), "must be from 1 to 100".into())),
            },
            "cursor" => match decode_cursor(v) {
                Some(c) => cursor = c,
                None => issues.push(("cursor".into(), "is not a cursor this list gave".into())),
            },
            other => issues.push((other.to_owned(), "is not a parameter of this list".into())),
        }
    }
    if !issues.is_empty() {
        return invalid(issues);
    }
    let inner = state.lock();
    let all: Vec<&Sandbox> = inner
        .order
        .iter()
        .filter_map(|id| inner.sandboxes.get(id))
        .filter(|s| include_stopped || s.state != "stopped")
        .filter(|s| states.is_empty() || states.contains(&s.state))
        .filter(|s| name.as_ref().is_none_or(|n| s.name.as_ref() == Some(n)))
        .filter(|s| labels.iter().all(|(k, v)| s.labels.get(k) == Some(v)))
        .collect();
    page(all.iter().map(|s| sandbox_json(s)).collect(), cursor, limit)
}

/// One page of `all` from `start`.
pub(super) fn page(all: Vec<Value>, start: usize, limit: usize) -> Response {
    let end = (start + limit).min(all.len());
    let data: Vec<Value> = all.get(start..end).map(<[Value]>::to_vec).unwrap_or_default();
    let next = (end < all.len()).then(|| encode_cursor(end));
    axum::Json(json!({ "data": data, "nextCursor": next })).into_response()
}

fn encode_cursor(n: usize) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("o:{n}"))
}

pub(super) fn decode_cursor(c: &str) -> Option<usize> {
    use base64::Engine as _;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(c).ok()?;
    String::from_utf8(raw).ok()?.strip_prefix("o:")?.parse().ok()
}

async fn read(AxState(state): S, Path(id): Path<String>, RawQuery(raw): RawQuery) -> Response {
    let q = query(raw.as_deref());
    let wait_for = q.iter().find(|(k, _)| k == "waitFor").map(|(_, v)| v.clone());
    let timeout = match q.iter().find(|(k, _)| k == "timeoutSeconds").map(|(_, v)| v.parse::<u64>())
    {
        None => 60,
        Some(Ok(n)) if n <= MAX_WAIT_SECS => n,
        Some(_) => return invalid(vec![("timeoutSeconds".into(), "must be from 0 to 120".into())]),
    };
    let Some(mut s) = state.sandbox(&id) else { return not_found("sandbox", &id) };
    if let Some(want) = wait_for {
        let until = tokio::time::Instant::now() + Duration::from_secs(timeout);
        while s.state != want && s.state != "stopped" && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(100)).await;
            match state.sandbox(&id) {
                Some(now) => s = now,
                None => break,
            }
        }
    }
    axum::Json(sandbox_json(&s)).into_response()
}

/// `POST /v1/sandboxes/{id}:<verb>`.
async fn verb(
    AxState(state): S,
    Path(action): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some((id, verb)) = action.split_once(':') else {
        return error(
            StatusCode::NOT_FOUND,
            "route_not_found",
            "No such route.",
            "Use POST /v1/sandboxes/{id}:<verb>.",
            None,
        );
    };
    let body = match object(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let Some(s) = state.sandbox(id) else { return not_found("sandbox", id) };
    match verb {
        "exec" => ops::exec(&state, &s, &body).await,
        "stop" => stop(&state, &s, &body, &headers).await,
        "pause" => pause(&state, &s, &body).await,
        "wake" => wake(&state, &s, &body).await,
        "extend" => extend(&state, &s, &body),
        "fork" | "snapshot" => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "fork_unavailable",
            "Forks and snapshots are paused while we fix an issue.",
            "Retrying will not help.",
            None,
        ),
        _ => error(
            StatusCode::NOT_FOUND,
            "route_not_found",
            format!("No verb :{verb} on a sandbox."),
            "See the API reference.",
            None,
        ),
    }
}

/// The refusal of a change to a sandbox that is not running.
pub(super) fn not_running(s: &Sandbox) -> Response {
    let (code, hint) = match s.state.as_str() {
        "paused" => ("sandbox_paused", "Wake it first (POST /v1/sandboxes/{id}:wake)."),
        "stopped" | "stopping" => ("sandbox_stopped", "Create a new sandbox."),
        "starting" => ("sandbox_not_ready", "Wait for running (GET ?waitFor=running)."),
        _ => ("not_running", "Resolve its state, then retry."),
    };
    error(StatusCode::CONFLICT, code, format!("Sandbox {} is {}.", s.id, s.state), hint, None)
}

fn current(state: &State, id: &str) -> Response {
    match state.sandbox(id) {
        Some(s) => axum::Json(sandbox_json(&s)).into_response(),
        None => not_found("sandbox", id),
    }
}

fn set_state(state: &State, id: &str, to: &str, reason: Option<&str>) {
    if let Some(s) = state.lock().sandboxes.get_mut(id) {
        s.state = to.into();
        if let Some(r) = reason {
            s.stop_reason = Some(r.into());
        }
    }
}

/// Stops a sandbox: its container goes (a stopped sandbox keeps nothing
/// that is not persistent).
pub(super) async fn stop_sandbox(state: &State, id: &str, reason: &str) {
    set_state(state, id, "stopping", Some(reason));
    let container = state.lock().sandboxes.get_mut(id).and_then(|s| {
        s.previews.clear();
        s.container.take()
    });
    if let Some(c) = container {
        let _ = state.engine.remove(&c).await;
    }
    set_state(state, id, "stopped", None);
}

async fn stop(
    state: &Arc<State>,
    s: &Sandbox,
    body: &Map<String, Value>,
    headers: &HeaderMap,
) -> Response {
    let issues = unknown(body, &[]);
    if !issues.is_empty() {
        return invalid(issues);
    }
    if s.state == "stopped" || s.state == "stopping" {
        return not_running(s);
    }
    set_state(state, &s.id, "stopping", Some("requested"));
    let (st, id) = (Arc::clone(state), s.id.clone());
    let done = tokio::spawn(async move { stop_sandbox(&st, &id, "requested").await });
    if let Some(secs) = prefer_wait(headers) {
        let _ = tokio::time::timeout(Duration::from_secs(secs), done).await;
    }
    current(state, &s.id)
}

async fn pause(state: &State, s: &Sandbox, body: &Map<String, Value>) -> Response {
    let issues = unknown(body, &[]);
    if !issues.is_empty() {
        return invalid(issues);
    }
    if s.state == "paused" || s.state != "running" || !s.pausable {
        return not_running(s);
    }
    if let Some(c) = &s.container
        && let Err(e) = state.engine.pause(c).await
    {
        tracing::warn!(error = %e, "the Runtime Cloud stand-in cannot pause a container");
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "host_unavailable",
            "The host cannot pause the sandbox now.",
            "Retry after Retry-After with the same key.",
            None,
        );
    }
    set_state(state, &s.id, "paused", None);
    current(state, &s.id)
}

async fn wake(state: &State, s: &Sandbox, body: &Map<String, Value>) -> Response {
    let mut issues = unknown(body, &["timeoutSeconds"]);
    let secs =
        int(body, "timeoutSeconds", 1, MAX_LEASE_SECS, &mut issues).unwrap_or(s.timeout_secs);
    if !issues.is_empty() {
        return invalid(issues);
    }
    if s.state != "paused" {
        return not_running(s);
    }
    if let Some(c) = &s.container {
        let _ = state.engine.unpause(c).await;
    }
    let now = state.clock.now();
    if let Some(x) = state.lock().sandboxes.get_mut(&s.id) {
        x.state = "running".into();
        x.expires_at = now + secs;
    }
    current(state, &s.id)
}

fn extend(state: &State, s: &Sandbox, body: &Map<String, Value>) -> Response {
    let mut issues = unknown(body, &["seconds"]);
    let Some(secs) = int(body, "seconds", 1, MAX_LEASE_SECS, &mut issues) else {
        if issues.is_empty() {
            issues.push(("seconds".into(), "is required".into()));
        }
        return invalid(issues);
    };
    if !issues.is_empty() {
        return invalid(issues);
    }
    if s.state != "running" && s.state != "paused" {
        return not_running(s);
    }
    let now = state.clock.now();
    // A lease ends at most an hour ahead (a few seconds allowed for the
    // request's own way here).
    if s.expires_at + secs > now + MAX_LEASE_SECS + 5 {
        return invalid(vec![(
            "seconds".into(),
            format!(
                "makes the lease end more than an hour ahead; at most {} more",
                (now + MAX_LEASE_SECS).saturating_sub(s.expires_at)
            ),
        )]);
    }
    if let Some(x) = state.lock().sandboxes.get_mut(&s.id) {
        x.expires_at += secs;
    }
    current(state, &s.id)
}

/// Ends the leases that are due: each sandbox pauses or stops, as its
/// `onLeaseEnd` says.
pub(crate) async fn reap_once(state: &State) {
    let now = state.clock.now();
    let due: Vec<Sandbox> = state
        .lock()
        .sandboxes
        .values()
        .filter(|s| s.state == "running" && s.expires_at <= now)
        .cloned()
        .collect();
    for s in due {
        tracing::info!(sandbox = %s.id, on_lease_end = %s.on_lease_end, "the Runtime Cloud stand-in ends a sandbox's lease");
        if s.on_lease_end == "pause" && s.pausable {
            if let Some(c) = &s.container {
                let _ = state.engine.pause(c).await;
            }
            set_state(state, &s.id, "paused", None);
        } else {
            stop_sandbox(state, &s.id, "lease_ended").await;
        }
    }
}

pub(crate) async fn reap(state: Arc<State>) {
    loop {
        reap_once(&state).await;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
