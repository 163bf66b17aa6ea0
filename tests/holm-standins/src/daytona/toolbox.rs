//! Daytona's toolbox (`{toolboxProxyUrl}/{sandboxId}/...`): the calls holm
//! makes of it. Each is activity on the sandbox.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, Query, State as AxState};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{Sandbox, State};

type S = AxState<Arc<State>>;

/// The toolbox's error (its gin handlers' shape).
fn error(status: StatusCode, message: &str) -> Response {
    let body = json!({
        "statusCode": status.as_u16(),
        "message": message,
        "code": status.canonical_reason().unwrap_or("ERROR").to_ascii_uppercase().replace(' ', "_"),
    });
    (status, axum::Json(body)).into_response()
}

fn started(state: &State, id: &str) -> Result<(Sandbox, String), Response> {
    let Some(s) = state.find(id) else {
        return Err(error(StatusCode::NOT_FOUND, "sandbox not found"));
    };
    match (&s.container, s.state.as_str()) {
        (Some(c), "started") => {
            state.touch(&s.id);
            let c = c.clone();
            Ok((s, c))
        }
        _ => Err(error(StatusCode::BAD_REQUEST, "Is the Sandbox started?")),
    }
}

/// The parts of a `multipart/form-data` body: each one's field name and
/// data, in order.
fn form_parts(headers: &HeaderMap, body: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let ct = headers.get("content-type")?.to_str().ok()?;
    let boundary =
        ct.split(';').find_map(|p| p.trim().strip_prefix("boundary="))?.trim_matches('"');
    let delimiter = format!("--{boundary}");
    let d = delimiter.as_bytes();
    let mut parts = Vec::new();
    let mut start = None;
    let mut i = 0;
    while i + d.len() <= body.len() {
        if &body[i..i + d.len()] == d {
            if let Some(s) = start {
                parts.push(&body[s..i]);
            }
            start = Some(i + d.len());
            i += d.len();
        } else {
            i += 1;
        }
    }
    let mut fields = Vec::new();
    for part in parts {
        let part = part.strip_prefix(b"\r\n").unwrap_or(part);
        let split = part.windows(4).position(|w| w == b"\r\n\r\n")?;
        let head = String::from_utf8_lossy(&part[..split]);
        let name = head.lines().find_map(|l| {
            if !l.to_ascii_lowercase().starts_with("content-disposition") {
                return None;
            }
            let rest = &l[l.find("name=\"")? + 6..];
            Some(rest[..rest.find('"')?].to_owned())
        })?;
        let data = &part[split + 4..];
        fields.push((name, data.strip_suffix(b"\r\n").unwrap_or(data).to_vec()));
    }
    Some(fields)
}

/// The `file` field of a `multipart/form-data` body.
fn file_field(headers: &HeaderMap, body: &[u8]) -> Option<Vec<u8>> {
    form_parts(headers, body)?.into_iter().find(|(n, _)| n == "file").map(|(_, d)| d)
}

/// `POST /files/bulk-upload`, as the daemon's `UploadFiles` reads it (and
/// Daytona's SDKs upload every file): `files[i].path` before each
/// `files[i].file`; 200 `{files: [{path, bytes}]}`, else 400 `{errors}`.
pub(super) async fn bulk_upload(
    AxState(state): S,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (_, container) = match started(&state, &id) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let bad = |errors: Vec<String>| {
        (StatusCode::BAD_REQUEST, axum::Json(json!({ "errors": errors }))).into_response()
    };
    let Some(parts) = form_parts(&headers, &body) else {
        return bad(vec!["invalid multipart form".into()]);
    };
    let index = |name: &str| {
        name.split_once('[').and_then(|(_, r)| r.split_once(']')).map(|(i, _)| i.to_owned())
    };
    let mut dests = BTreeMap::new();
    let (mut files, mut errors) = (Vec::new(), Vec::new());
    for (name, data) in parts {
        let idx = index(&name).unwrap_or_default();
        if name.ends_with(".path") {
            let dest = String::from_utf8_lossy(&data).trim().to_owned();
            if dest.is_empty() {
                errors.push(format!("path[{idx}]: empty path"));
            } else {
                dests.insert(idx, dest);
            }
        } else if name.ends_with(".file") {
            let Some(dest) = dests.get(&idx) else {
                errors.push(format!("file[{idx}]: missing .path metadata"));
                continue;
            };
            match state.engine.put_file(&container, dest, &data, 0o644).await {
                Ok(()) => files.push(json!({ "path": dest, "bytes": data.len() })),
                Err(e) => errors.push(format!("{dest}: create: {e}")),
            }
        }
    }
    if !errors.is_empty() {
        return bad(errors);
    }
    axum::Json(json!({ "files": files })).into_response()
}

/// `POST /files/upload` (`path` in the query, the form's `file`), as
/// Daytona's daemon 0.190 served it; its toolbox spec of 0.226.1 lists
/// `/files/upload-v2` and `/files/bulk-upload` instead.
pub(super) async fn upload(
    AxState(state): S,
    Path(id): Path<String>,
    Query(q): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (_, container) = match started(&state, &id) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let Some(path) = q.get("path") else {
        return error(StatusCode::BAD_REQUEST, "path is required");
    };
    let Some(data) = file_field(&headers, &body) else {
        return error(StatusCode::BAD_REQUEST, "the form has no file field");
    };
    match state.engine.put_file(&container, path, &data, 0o644).await {
        Ok(()) => axum::Json(json!({ "message": "File uploaded successfully" })).into_response(),
        Err(e) => error(StatusCode::BAD_REQUEST, &e),
    }
}

pub(super) async fn download(
    AxState(state): S,
    Path(id): Path<String>,
    Query(q): Query<BTreeMap<String, String>>,
) -> Response {
    let (_, container) = match started(&state, &id) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let Some(path) = q.get("path") else {
        return error(StatusCode::BAD_REQUEST, "path is required");
    };
    match state.engine.get_file(&container, path).await {
        Ok(Some(bytes)) => ([("content-type", "application/octet-stream")], bytes).into_response(),
        Ok(None) => error(StatusCode::NOT_FOUND, "file not found"),
        Err(e) => error(StatusCode::BAD_REQUEST, &e),
    }
}

/// Runs a shell command: stdout and stderr combined; 408 after `timeout`
/// seconds (none: no limit).
pub(super) async fn execute(AxState(state): S, Path(id): Path<String>, body: Bytes) -> Response {
    let (sandbox, container) = match started(&state, &id) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let Ok(req) = serde_json::from_slice::<Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, "invalid request body");
    };
    let Some(command) = req.get("command").and_then(Value::as_str).filter(|c| !c.trim().is_empty())
    else {
        return error(StatusCode::BAD_REQUEST, "command cannot be empty or whitespace-only");
    };
    let mut env = sandbox.env.clone();
    for (k, v) in req.get("envs").and_then(Value::as_object).into_iter().flatten() {
        if let Some(v) = v.as_str() {
            env.insert(k.clone(), v.to_owned());
        }
    }
    let env: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let cwd = req.get("cwd").and_then(Value::as_str);
    let run = state.engine.exec(
        &container,
        vec!["/bin/sh".into(), "-c".into(), command.to_owned()],
        env,
        None,
        cwd,
    );
    let timeout = req.get("timeout").and_then(Value::as_u64).filter(|t| *t > 0);
    let result = match timeout {
        Some(t) => match tokio::time::timeout(Duration::from_secs(t), run).await {
            Ok(r) => r,
            Err(_) => return error(StatusCode::REQUEST_TIMEOUT, "command execution timeout"),
        },
        None => run.await,
    };
    match result {
        Ok((code, mut stdout, stderr)) => {
            stdout.extend_from_slice(&stderr);
            axum::Json(json!({ "exitCode": code, "result": String::from_utf8_lossy(&stdout) }))
                .into_response()
        }
        Err(e) => axum::Json(json!({ "exitCode": -1, "result": e })).into_response(),
    }
}
