//! Background processes: `/v1/processes` and `/v1/processes/{id}/...`.

use std::time::Duration;

use axum::Json;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use holm_proto::guest::{
    OutputQuery, Page, ProcessInfo, ProcessListQuery, ProcessStart, SignalName, SignalRequest,
    StdinQuery,
};
use holm_proto::{ApiError, Issue};

use holm_proto::contract;

use super::AppState;
use super::commands::ndjson;
use super::error::Error;
use super::extract::{StrictJson, StrictQuery};
use super::table::Routes;
use crate::exec::processes::MAX_WAIT_MS;
use crate::proc;

pub(super) fn routes() -> Routes {
    Routes::default()
        .on(&contract::SPAWN.route, start)
        .on(&contract::PROCESSES.route, list)
        .on(&contract::PROCESS.route, one)
        .on(&contract::KILL.route, remove)
        .on(&contract::OUTPUT, output)
        // Standard input is streamed into the pipe, so it needs no size limit.
        .on_with(&contract::STDIN, stdin, |m| m.layer(DefaultBodyLimit::disable()))
        .on(&contract::SIGNAL.route, signal)
}

async fn start(
    State(state): State<AppState>,
    StrictJson(req): StrictJson<ProcessStart>,
) -> Result<(StatusCode, Json<ProcessInfo>), Error> {
    Ok((StatusCode::CREATED, Json(state.processes.start(&req).await?)))
}

async fn list(
    State(state): State<AppState>,
    StrictQuery(query): StrictQuery<ProcessListQuery>,
) -> Json<Page<ProcessInfo>> {
    Json(Page::all(state.processes.list(&query)))
}

async fn one(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ProcessInfo>, Error> {
    Ok(Json(state.processes.get(&id)?.info()))
}

async fn remove(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ProcessInfo>, Error> {
    Ok(Json(state.processes.remove(&id).await?))
}

async fn output(
    State(state): State<AppState>,
    Path(id): Path<String>,
    StrictQuery(query): StrictQuery<OutputQuery>,
) -> Result<Response, Error> {
    let cursor = query.cursor.unwrap_or(0);
    let invalid = |path: &str, problem: String| -> Error {
        ApiError::invalid_fields(vec![Issue { path: path.to_owned(), problem }]).into()
    };
    if query.follow == Some(true) {
        if query.wait_ms.is_some() {
            return Err(invalid(
                "wait_ms",
                "applies only without follow=true; a follow stream waits by itself".into(),
            ));
        }
        let p = state.processes.get(&id)?;
        return Ok(ndjson(p.follow(cursor)?));
    }
    let wait_ms = query.wait_ms.unwrap_or(0);
    if wait_ms > MAX_WAIT_MS {
        return Err(invalid("wait_ms", format!("must be at most {MAX_WAIT_MS}, not {wait_ms}")));
    }
    let p = state.processes.get(&id)?;
    Ok(Json(p.output(cursor, Duration::from_millis(wait_ms)).await?).into_response())
}

async fn stdin(
    State(state): State<AppState>,
    Path(id): Path<String>,
    StrictQuery(query): StrictQuery<StdinQuery>,
    body: Body,
) -> Result<StatusCode, Error> {
    let p = state.processes.get(&id)?;
    p.write_stdin(body.into_data_stream(), query.eof.unwrap_or(false)).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn signal(
    State(state): State<AppState>,
    Path(id): Path<String>,
    StrictJson(req): StrictJson<SignalRequest>,
) -> Result<StatusCode, Error> {
    let signal = signal_number(&req.signal)?;
    state.processes.get(&id)?.signal(signal)?;
    Ok(StatusCode::NO_CONTENT)
}

/// The number of a signal given by name (`TERM`, `SIGTERM`) or number.
fn signal_number(signal: &SignalName) -> Result<i32, Error> {
    let n = match signal {
        SignalName::Name(name) => {
            proc::signal_number(name).or_else(|| name.trim().parse::<i32>().ok())
        }
        SignalName::Number(n) => Some(*n),
    };
    n.filter(|n| (1..=64).contains(n)).ok_or_else(|| {
        let given = match signal {
            SignalName::Name(s) => format!("{s:?}"),
            SignalName::Number(n) => n.to_string(),
        };
        ApiError::invalid_fields(vec![Issue {
            path: "signal".into(),
            problem: format!(
                "{given} is not a signal; use a name such as TERM, KILL, INT, HUP, QUIT, USR1, USR2, STOP, CONT (with or without SIG), or a number from 1 to 64"
            ),
        }])
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_by_name_or_number() {
        let n = |s: SignalName| signal_number(&s).map_err(|e| e.0.code);
        assert_eq!(n(SignalName::Name("TERM".into())), Ok(libc::SIGTERM));
        assert_eq!(n(SignalName::Name("sigkill".into())), Ok(libc::SIGKILL));
        assert_eq!(n(SignalName::Name("10".into())), Ok(10));
        assert_eq!(n(SignalName::Number(2)), Ok(libc::SIGINT));
        for bad in [SignalName::Name("NOPE".into()), SignalName::Number(0), SignalName::Number(65)]
        {
            assert_eq!(n(bad), Err(holm_proto::ErrorCode::InvalidRequest));
        }
    }
}
