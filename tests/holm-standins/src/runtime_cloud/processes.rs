//! A Runtime Cloud sandbox's background processes, as the stand-in answers
//! them: `POST /v1/sandboxes/{id}/processes` starts one and answers at once,
//! `GET …/processes` lists them, `GET …/processes/{processId}` reads one.
//!
//! The documentation gives the routes and the Python SDK's reads
//! (`process["id"]`, `["state"]`, `["command"]`); where it is silent the
//! stand-in chooses, and says so: a process is `{id, state: running |
//! exited, command, exitCode, startedAt, endedAt}` (`exitCode` and
//! `endedAt` null while it runs), a start answers 201, the body is the exec
//! body's `command` or `argv`, `env` and `cwd` (a `pty` or `stdin` is
//! refused: the stand-in runs neither), and the list is one `{data,
//! nextCursor}` page. A process runs in the sandbox's container (`docker
//! exec`) until it ends or the sandbox stops; its output is not kept.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::api::{S, invalid, not_found, object, unknown};
use super::ops::{Command, command, running};
use super::{Process, USER};
use crate::common::{Clock, random_id};

fn process_json(p: &Process) -> Value {
    json!({
        "id": p.id,
        "state": p.state,
        "command": p.command,
        "exitCode": p.exit_code,
        "startedAt": Clock::rfc3339(p.started),
        "endedAt": p.ended.map(Clock::rfc3339),
    })
}

/// `POST /v1/sandboxes/{id}/processes`.
pub(super) async fn start(AxState(state): S, Path(id): Path<String>, body: Bytes) -> Response {
    let body = match object(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let mut issues = unknown(&body, &["command", "argv", "cwd", "env", "stdin", "pty"]);
    if body.get("pty").is_some() {
        issues.push(("pty".into(), "the stand-in does not run processes in a terminal".into()));
    }
    let Some(Command { argv, env, cwd, shown }) = command(&body, &mut issues) else {
        return invalid(issues);
    };
    let Some(s) = state.sandbox(&id) else { return not_found("sandbox", &id) };
    let container = match running(&state, &s).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let p = Process {
        id: format!("proc_{}", random_id(16)),
        sandbox: id,
        command: shown,
        state: "running".into(),
        exit_code: None,
        started: state.clock.now(),
        ended: None,
    };
    state.lock().processes.insert(p.id.clone(), p.clone());
    let (st, pid) = (Arc::clone(&state), p.id.clone());
    let task = tokio::spawn(async move {
        let code = match st.engine.exec(&container, argv, env, Some(USER), cwd.as_deref()).await {
            Ok((code, _, _)) => code,
            Err(e) => {
                tracing::warn!(error = %e, "a Runtime Cloud stand-in process ended with no code");
                -1
            }
        };
        let now = st.clock.now();
        if let Some(p) = st.lock().processes.get_mut(&pid) {
            p.state = "exited".into();
            p.exit_code = Some(code);
            p.ended = Some(now);
        }
    });
    state.tasks.add([task]);
    (StatusCode::CREATED, axum::Json(process_json(&p))).into_response()
}

/// `GET /v1/sandboxes/{id}/processes`.
pub(super) async fn list(AxState(state): S, Path(id): Path<String>) -> Response {
    if state.sandbox(&id).is_none() {
        return not_found("sandbox", &id);
    }
    let inner = state.lock();
    let mut mine: Vec<&Process> = inner.processes.values().filter(|p| p.sandbox == id).collect();
    mine.sort_by_key(|p| (p.started, p.id.clone()));
    let data: Vec<Value> = mine.into_iter().map(process_json).collect();
    axum::Json(json!({ "data": data, "nextCursor": null })).into_response()
}

/// `GET /v1/sandboxes/{id}/processes/{processId}`.
pub(super) async fn read(AxState(state): S, Path((id, pid)): Path<(String, String)>) -> Response {
    if state.sandbox(&id).is_none() {
        return not_found("sandbox", &id);
    }
    match state.lock().processes.get(&pid).filter(|p| p.sandbox == id) {
        Some(p) => axum::Json(process_json(p)).into_response(),
        None => not_found("process", &pid),
    }
}
