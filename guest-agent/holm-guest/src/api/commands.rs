//! `POST /v1/commands/run` (run and wait) and `POST /v1/commands/stream`
//! (the same, answered as NDJSON events while it runs).

use std::convert::Infallible;

use axum::Json;
use axum::body::Body;
use axum::extract::{Extension, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use holm_proto::ApiError;
use holm_proto::guest::{CommandEvent, CommandRequest, CommandResult};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;

use holm_proto::contract;

use super::error::Error;
use super::extract::StrictJson;
use super::table::Routes;
use super::{AppState, RequestId};
use crate::exec;

pub(super) fn routes() -> Routes {
    Routes::default().on(&contract::RUN.route, run).on(&contract::COMMAND_STREAM, stream)
}

async fn run(
    State(state): State<AppState>,
    StrictJson(req): StrictJson<CommandRequest>,
) -> Result<Json<CommandResult>, Error> {
    let (spec, limits) =
        exec::check_request(&req, state.processes.home(), Some(exec::DEFAULT_OUTPUT_LIMIT))?;
    exec::run(&spec, limits, req.stdin, &state.processes).await.map(Json)
}

/// Starts the command before answering, so a command that cannot start is an
/// ordinary error response; from then on everything is an event.
async fn stream(
    State(state): State<AppState>,
    request_id: Option<Extension<RequestId>>,
    StrictJson(req): StrictJson<CommandRequest>,
) -> Result<Response, Error> {
    let request_id = request_id.map(|Extension(RequestId(id))| id);
    // A stream holds nothing, so it keeps all output unless asked otherwise.
    let (spec, limits) = exec::check_request(&req, state.processes.home(), None)?;
    spec.check_cwd().await?;
    let (started, live) = state.processes.start_command(&spec, req.stdin.is_some())?;
    if let (Some(pipe), Some(text)) = (started.stdin, req.stdin) {
        exec::feed_stdin(pipe, text);
    }
    let (tx, rx) = tokio::sync::mpsc::channel(32);
    let pid = started.output.pid;
    // The channel is new and empty: the first event always fits.
    let _ = tx.try_send(CommandEvent::Start { pid });
    let cancel = CancellationToken::new();
    let pump_cancel = cancel.clone();
    tokio::spawn(async move {
        let _live = live;
        let deadline = started.output.at + limits.timeout;
        let mut sink = exec::Events(tx.clone());
        let outcome = exec::pump(
            started.output,
            &mut sink,
            Some(deadline),
            limits.output_limit,
            &pump_cancel,
        )
        .await;
        if outcome.status.is_none() {
            // The reaper lost the status: say so rather than invent an exit.
            tracing::error!(pid, "the exit status of a streamed command was lost");
            let mut error = ApiError::internal();
            error.request_id = request_id;
            let _ = tx.send(CommandEvent::Error { error }).await;
            return;
        }
        let (exit_code, signal) = outcome.code_and_signal();
        let _ = tx
            .send(CommandEvent::Exit {
                exit_code,
                signal,
                timed_out: outcome.timed_out,
                truncated: outcome.truncated,
                duration_ms: outcome.duration_ms(),
            })
            .await;
    });
    // When the client goes away, the body is dropped with this guard, which
    // cancels the pump, which kills the process group.
    let guard = cancel.drop_guard();
    let lines = ReceiverStream::new(rx).map(move |event| {
        let _keep = &guard;
        Ok::<_, Infallible>(line(&event))
    });
    Ok(ndjson(lines))
}

/// One NDJSON line.
pub(super) fn line<T: serde::Serialize>(value: &T) -> Bytes {
    // Serializing these plain types cannot fail; an empty line would be
    // skipped by readers anyway.
    let mut v = serde_json::to_vec(value).unwrap_or_default();
    v.push(b'\n');
    Bytes::from(v)
}

/// A streamed NDJSON response. Each line is sent as soon as it exists.
pub(super) fn ndjson<S>(lines: S) -> Response
where
    S: Stream<Item = Result<Bytes, Infallible>> + Send + 'static,
{
    let mut response = Body::from_stream(lines).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Proxies such as nginx would otherwise hold the lines back.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}
