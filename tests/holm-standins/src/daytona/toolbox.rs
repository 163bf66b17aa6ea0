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

/// The `file` field of a `multipart/form-data` body.
fn file_field(headers: &HeaderMap, body: &[u8]) -> Option<Vec<u8>> {
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
    for part in parts {
        let part = part.strip_prefix(b"\r\n").unwrap_or(part);
        let split = part.windows(4).position(|w| w == b"\r\n\r\n")?;
        let head = String::from_utf8_lossy(&part[..split]);
        if head.lines().any(|l| {
            l.to_ascii_lowercase().starts_with("content-disposition") && l.contains("name=\"file\"")
        }) {
            let data = &part[split + 4..];
            return Some(data.strip_suffix(b"\r\n").unwrap_or(data).to_vec());
        }
    }
    None
}

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
