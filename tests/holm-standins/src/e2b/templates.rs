//! E2B's template builds, as the stand-in answers them: `POST
//! /v3/templates`, the file context's upload link and the upload itself,
//! the build run from its steps as a Docker build, and its status.

use std::io::Read as _;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State as AxState};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::api::{error, parse};
use super::{BASE_TEMPLATE, Build, State, Status, Template};
use crate::common::{Clock, random_id, token};

type S = AxState<Arc<State>>;

/// The `base` template: the local Debian image, as every team has a base.
pub(crate) fn seed_base_template(state: &State) {
    let now = state.clock.now();
    let mut inner = state.lock();
    inner.builds.insert(
        "base-build".into(),
        Build {
            id: "base-build".into(),
            template_id: BASE_TEMPLATE.into(),
            status: Status::Ready,
            cpu: 2,
            memory_mb: 512,
            image: Some("debian:bookworm-slim".into()),
            logs: Vec::new(),
            reason: None,
            created: now,
            updated: now,
        },
    );
    inner.templates.insert(
        BASE_TEMPLATE.into(),
        Template {
            id: BASE_TEMPLATE.into(),
            names: vec![BASE_TEMPLATE.into()],
            created: now,
            updated: now,
            builds: vec!["base-build".into()],
            spawn_count: 0,
            last_spawned: None,
        },
    );
    inner.aliases.insert(BASE_TEMPLATE.into(), BASE_TEMPLATE.into());
}

/// CPUs and memory as E2B's team limits check them.
fn check_resources(cpu: Option<&Value>, memory: Option<&Value>) -> Result<(u64, u64), Response> {
    let bad = |m: &str| error(StatusCode::BAD_REQUEST, m);
    let cpu = match cpu {
        None => 2,
        Some(v) => {
            let c = v.as_u64().ok_or_else(|| bad("CPU count must be at least 1"))?;
            if c < 1 {
                return Err(bad("CPU count must be at least 1"));
            }
            if c > 32 {
                return Err(bad("CPU count must be at most 32"));
            }
            if c != 1 && c % 2 != 0 {
                return Err(bad("CPU count must be 1 or an even number"));
            }
            if c > 8 {
                return Err(bad(
                    "CPU count can't be higher than 8 (if you need to increase this limit, please contact support)",
                ));
            }
            c
        }
    };
    let memory = match memory {
        None => 512,
        Some(v) => {
            let m = v.as_u64().ok_or_else(|| bad("Memory must be at least 128 MiB"))?;
            if m < 128 {
                return Err(bad("Memory must be at least 128 MiB"));
            }
            if m % 2 != 0 {
                return Err(bad("Memory must be divisible by 2"));
            }
            if m > 8192 {
                return Err(bad(
                    "Memory can't be higher than 8192 MiB (if you need to increase this limit, please contact support)",
                ));
            }
            m
        }
    };
    Ok((cpu, memory))
}

pub(super) async fn create_template(AxState(state): S, body: Bytes) -> Response {
    let body = match parse(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let Some(name) =
        body.get("name").and_then(Value::as_str).filter(|n| !n.is_empty() && n.len() <= 128)
    else {
        return error(StatusCode::BAD_REQUEST, "name is required");
    };
    let (cpu, memory_mb) = match check_resources(body.get("cpuCount"), body.get("memoryMB")) {
        Ok(r) => r,
        Err(r) => return r,
    };
    let now = state.clock.now();
    let mut inner = state.lock();
    let template_id = match inner.aliases.get(name) {
        Some(id) => id.clone(),
        None => {
            let id = random_id(20);
            inner.templates.insert(
                id.clone(),
                Template {
                    id: id.clone(),
                    names: vec![name.to_owned()],
                    created: now,
                    updated: now,
                    builds: Vec::new(),
                    spawn_count: 0,
                    last_spawned: None,
                },
            );
            inner.aliases.insert(name.to_owned(), id.clone());
            id
        }
    };
    let build_id = format!("{}-{}-{}-{}", random_id(8), random_id(4), random_id(4), random_id(12));
    inner.builds.insert(
        build_id.clone(),
        Build {
            id: build_id.clone(),
            template_id: template_id.clone(),
            status: Status::Waiting,
            cpu,
            memory_mb,
            image: None,
            logs: Vec::new(),
            reason: None,
            created: now,
            updated: now,
        },
    );
    if let Some(t) = inner.templates.get_mut(&template_id) {
        t.builds.push(build_id.clone());
        t.updated = now;
    }
    (
        StatusCode::ACCEPTED,
        axum::Json(json!({
            "templateID": template_id,
            "buildID": build_id,
            "public": false,
            "names": [name],
            "tags": [],
            "aliases": [name],
        })),
    )
        .into_response()
}

pub(super) async fn alias(AxState(state): S, Path(alias): Path<String>) -> Response {
    match state.lock().aliases.get(&alias) {
        Some(id) => axum::Json(json!({ "templateID": id, "public": false })).into_response(),
        None => error(StatusCode::NOT_FOUND, format!("template '{alias}' not found")),
    }
}

pub(super) async fn template(AxState(state): S, Path(tid): Path<String>) -> Response {
    let inner = state.lock();
    let Some(t) = inner.templates.get(&tid) else {
        return error(StatusCode::NOT_FOUND, format!("template '{tid}' not found"));
    };
    let builds: Vec<Value> = t
        .builds
        .iter()
        .filter_map(|b| inner.builds.get(b))
        .map(|b| {
            json!({
                "buildID": b.id,
                "status": b.status.as_str(),
                "createdAt": Clock::rfc3339(b.created),
                "updatedAt": Clock::rfc3339(b.updated),
                "cpuCount": b.cpu,
                "memoryMB": b.memory_mb,
            })
        })
        .collect();
    axum::Json(json!({
        "templateID": t.id,
        "public": false,
        "aliases": t.names,
        "names": t.names,
        "createdAt": Clock::rfc3339(t.created),
        "updatedAt": Clock::rfc3339(t.updated),
        "lastSpawnedAt": t.last_spawned.map(Clock::rfc3339),
        "spawnCount": t.spawn_count,
        "builds": builds,
    }))
    .into_response()
}

pub(super) async fn upload_link(
    AxState(state): S,
    Path((tid, hash)): Path<(String, String)>,
) -> Response {
    let mut inner = state.lock();
    if !inner.templates.contains_key(&tid) {
        return error(StatusCode::NOT_FOUND, format!("template '{tid}' not found"));
    }
    if inner.files.contains_key(&hash) {
        return (StatusCode::CREATED, axum::Json(json!({ "present": true }))).into_response();
    }
    let t = token();
    inner.uploads.insert(t.clone(), hash);
    let url = format!("{}/_upload/{t}", state.api_url);
    (StatusCode::CREATED, axum::Json(json!({ "present": false, "url": url }))).into_response()
}

/// The signed upload URL: no key, its token in the path; the exact length
/// must be sent (chunked bodies are refused, as the storage E2B uses does).
pub(super) async fn upload(
    AxState(state): S,
    Path(t): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let chunked = headers
        .get("transfer-encoding")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked || !headers.contains_key("content-length") {
        return (
            StatusCode::NOT_IMPLEMENTED,
            "A header you provided implies functionality that is not implemented",
        )
            .into_response();
    }
    let mut inner = state.lock();
    let Some(hash) = inner.uploads.remove(&t) else {
        return (StatusCode::FORBIDDEN, "Invalid signature").into_response();
    };
    inner.files.insert(hash, body.to_vec());
    StatusCode::OK.into_response()
}

pub(super) async fn start_build(
    AxState(state): S,
    Path((tid, bid)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    let body = match parse(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    {
        let mut inner = state.lock();
        let Some(b) = inner.builds.get_mut(&bid).filter(|b| b.template_id == tid) else {
            return error(StatusCode::NOT_FOUND, format!("build '{bid}' not found"));
        };
        if b.status != Status::Waiting {
            return error(StatusCode::BAD_REQUEST, format!("build '{bid}' has started already"));
        }
        b.status = Status::Building;
    }
    let task_state = Arc::clone(&state);
    tokio::spawn(async move { run_build(task_state, bid, body).await });
    StatusCode::ACCEPTED.into_response()
}

/// `KEY=value` for a Dockerfile `ENV`, quoted when it must be.
fn env_pair(k: &str, v: &str) -> String {
    if v.chars().any(|c| c.is_whitespace() || c == '"' || c == '\\') {
        format!("{k}={}", serde_json::to_string(v).unwrap_or_default())
    } else {
        format!("{k}={v}")
    }
}

/// The files of an uploaded context: path, bytes, mode.
fn unpack(targz: &[u8]) -> Result<Vec<(String, Vec<u8>, u32)>, String> {
    let mut out = Vec::new();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(targz));
    for entry in archive.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().map_err(|e| e.to_string())?.to_string_lossy().into_owned();
        let mode = entry.header().mode().unwrap_or(0o644);
        let mut data = Vec::new();
        entry.read_to_end(&mut data).map_err(|e| e.to_string())?;
        out.push((path, data, mode));
    }
    Ok(out)
}

/// Turns the steps into a Dockerfile and builds it. `USER` and `WORKDIR`
/// that change nothing are left out, as E2B's builder does not make a layer
/// of them either.
async fn run_build(state: Arc<State>, bid: String, body: Value) {
    let result = build_image(&state, &bid, &body).await;
    let now = state.clock.now();
    let mut inner = state.lock();
    if let Some(b) = inner.builds.get_mut(&bid) {
        b.updated = now;
        match result {
            Ok((image, logs)) => {
                b.status = Status::Ready;
                b.image = Some(image);
                b.logs = logs;
            }
            Err((message, step, logs)) => {
                b.status = Status::Error;
                b.reason = Some((message, step));
                b.logs = logs;
            }
        }
    }
}

type BuildResult = Result<(String, Vec<String>), (String, Option<String>, Vec<String>)>;

async fn build_image(state: &State, _bid: &str, body: &Value) -> BuildResult {
    let fail = |m: String, step: Option<usize>| (m, step.map(|s| s.to_string()), Vec::new());
    let Some(from) = body.get("fromImage").and_then(Value::as_str) else {
        return Err(fail(
            "fromImage is required (the stand-in builds no fromTemplate)".into(),
            None,
        ));
    };
    let mut dockerfile = format!("FROM {from}\n");
    let (mut user, mut workdir) = ("root".to_owned(), "/".to_owned());
    let mut files = Vec::new();
    let mut hashes = Vec::new();
    let steps = body.get("steps").and_then(Value::as_array).cloned().unwrap_or_default();
    for (i, step) in steps.iter().enumerate() {
        let kind = step.get("type").and_then(Value::as_str).unwrap_or("");
        let args: Vec<String> = step
            .get("args")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        match kind {
            "USER" if args.first().is_some_and(|u| u != &user) => {
                user.clone_from(&args[0]);
                dockerfile.push_str(&format!("USER {user}\n"));
            }
            "WORKDIR" if args.first().is_some_and(|w| w != &workdir) => {
                workdir.clone_from(&args[0]);
                dockerfile.push_str(&format!("WORKDIR {workdir}\n"));
            }
            "USER" | "WORKDIR" => {}
            "ENV" => {
                let pairs: Vec<String> = args
                    .chunks(2)
                    .filter(|c| c.len() == 2)
                    .map(|c| env_pair(&c[0], &c[1]))
                    .collect();
                dockerfile.push_str(&format!("ENV {}\n", pairs.join(" ")));
            }
            "RUN" => {
                let Some(cmd) = args.first() else {
                    return Err(fail("RUN without a command".into(), Some(i)));
                };
                dockerfile.push_str(&format!("RUN {cmd}\n"));
            }
            "COPY" => {
                let (Some(src), Some(dest)) = (args.first(), args.get(1)) else {
                    return Err(fail("COPY needs a source and a destination".into(), Some(i)));
                };
                let Some(hash) = step.get("filesHash").and_then(Value::as_str) else {
                    return Err(fail("COPY without filesHash".into(), Some(i)));
                };
                let Some(targz) = state.lock().files.get(hash).cloned() else {
                    return Err(fail(
                        format!("the files of step {i} ({hash}) were not uploaded"),
                        Some(i),
                    ));
                };
                let unpacked = unpack(&targz).map_err(|e| {
                    fail(format!("the upload of step {i} is not a tar.gz: {e}"), Some(i))
                })?;
                files.extend(unpacked);
                hashes.push(hash.to_owned());
                dockerfile.push_str(&format!("COPY {src} {dest}\n"));
            }
            other => return Err(fail(format!("unknown step type {other:?}"), Some(i))),
        }
    }
    let mut h = Sha256::new();
    h.update(dockerfile.as_bytes());
    for hash in &hashes {
        h.update(hash.as_bytes());
    }
    let tag = format!("holm-standin-e2b:{}", &hex::encode(h.finalize())[..16]);
    let mut logs = vec![format!("Building the template from {from}")];
    if state.engine.image_exists(&tag).await {
        logs.push("Cached: the build's layers exist".into());
        return Ok((tag, logs));
    }
    match state.engine.build(&dockerfile, &files, &tag, &mut logs).await {
        Ok(()) => Ok((tag, logs)),
        Err(e) => {
            let step = logs.iter().rev().find(|l| l.starts_with("Step ")).cloned();
            Err((e, step, logs))
        }
    }
}

#[derive(serde::Deserialize)]
pub(super) struct StatusQuery {
    #[serde(rename = "logsOffset")]
    logs_offset: Option<usize>,
    limit: Option<usize>,
}

pub(super) async fn build_status(
    AxState(state): S,
    Path((tid, bid)): Path<(String, String)>,
    Query(q): Query<StatusQuery>,
) -> Response {
    let inner = state.lock();
    let Some(b) = inner.builds.get(&bid).filter(|b| b.template_id == tid) else {
        return error(StatusCode::NOT_FOUND, format!("build '{bid}' not found"));
    };
    let limit = q.limit.unwrap_or(100);
    if limit > 100 {
        return error(StatusCode::BAD_REQUEST, "limit must be at most 100");
    }
    let now = Clock::rfc3339(state.clock.now());
    let entries: Vec<Value> = b
        .logs
        .iter()
        .skip(q.logs_offset.unwrap_or(0))
        .take(limit)
        .map(|m| json!({ "timestamp": now, "level": "info", "message": m }))
        .collect();
    let mut out = json!({
        "templateID": tid,
        "buildID": bid,
        "status": b.status.as_str(),
        "logs": [],
        "logEntries": entries,
    });
    if let Some((message, step)) = &b.reason {
        out["reason"] = json!({ "message": message, "step": step });
    }
    axum::Json(out).into_response()
}
