//! Creating, listing, getting, changing and removing boxes, their traces,
//! and the credentials of their bridge and their agent.

use std::time::Duration;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use holm_http::{Error, StrictJson, StrictQuery};
use holm_proto::guest::Page;
use holm_proto::host::{
    BoxInfo, BridgeAccess, BridgeRequest, CreateBox, ExtendBox, ForkBox, ListBoxes, Trace,
    TracesQuery, WaitQuery,
};
use holm_proto::progress::ProgressQuery;
use holm_proto::{ApiError, Issue};

use super::box_path::BoxPath;
use super::{AppState, TraceBox};
use crate::service::{Entry, MAX_WAIT_SECS};

/// The header that makes a create safe to retry.
pub(super) const IDEMPOTENCY_KEY: &str = "idempotency-key";
/// The header on an answer given again for a repeated key.
pub(super) const IDEMPOTENCY_REPLAYED: &str = "idempotency-replayed";

fn wait_timeout(q: &WaitQuery) -> Result<Duration, Error> {
    let secs = q.timeout_secs.unwrap_or(120);
    if secs > MAX_WAIT_SECS {
        return Err(ApiError::invalid_fields(vec![Issue {
            path: "timeout_secs".into(),
            problem: format!("must be at most {MAX_WAIT_SECS}, not {secs}"),
        }])
        .into());
    }
    Ok(Duration::from_secs(secs))
}

fn idempotency_key(headers: &HeaderMap) -> Result<Option<&str>, Error> {
    match headers.get(IDEMPOTENCY_KEY) {
        None => Ok(None),
        Some(v) => v.to_str().map(Some).map_err(|_| {
            ApiError::invalid_fields(vec![Issue {
                path: "Idempotency-Key".into(),
                problem: "must be visible ASCII".into(),
            }])
            .into()
        }),
    }
}

async fn waited(state: &AppState, entry: &Entry, wait: &WaitQuery) -> Result<BoxInfo, Error> {
    let timeout = wait_timeout(wait)?;
    Ok(match wait.wait_for {
        Some(target) => state.service.wait(entry, target, timeout).await,
        None => entry.info(),
    })
}

/// A made (or replayed) box: 201, marked replayed in the body and a header,
/// and named for the trace.
fn made(mut info: BoxInfo, replayed: bool) -> Response {
    info.replayed = replayed;
    let id = info.id.clone();
    let mut response = (StatusCode::CREATED, Json(info)).into_response();
    if replayed {
        response.headers_mut().insert(IDEMPOTENCY_REPLAYED, HeaderValue::from_static("true"));
    }
    response.extensions_mut().insert(TraceBox(id));
    response
}

pub(super) async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    StrictQuery(wait): StrictQuery<WaitQuery>,
    StrictJson(request): StrictJson<CreateBox>,
) -> Result<Response, Error> {
    wait_timeout(&wait)?;
    let key = idempotency_key(&headers)?;
    let (entry, replayed) = state.service.create(request, key).await?;
    Ok(made(waited(&state, &entry, &wait).await?, replayed))
}

/// `GET /v1/boxes/{id}/progress`: the stages of the box's latest bringing
/// up, then each as it comes, as NDJSON; the last line is the box.
pub(super) async fn progress(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
    StrictQuery(q): StrictQuery<ProgressQuery>,
) -> Result<Response, Error> {
    let secs = q.timeout_secs.unwrap_or(MAX_WAIT_SECS);
    if secs > MAX_WAIT_SECS {
        return Err(ApiError::invalid_fields(vec![Issue {
            path: "timeout_secs".into(),
            problem: format!("must be at most {MAX_WAIT_SECS}, not {secs}"),
        }])
        .into());
    }
    let entry = state.service.get(&id)?;
    let stream = state.service.progress(entry, Duration::from_secs(secs)).map(|event| {
        let mut line = serde_json::to_vec(&event).unwrap_or_default();
        line.push(b'\n');
        Ok::<_, std::convert::Infallible>(line)
    });
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], Body::from_stream(stream))
        .into_response())
}

pub(super) async fn list(
    State(state): State<AppState>,
    StrictQuery(query): StrictQuery<ListBoxes>,
) -> Result<Json<Page<BoxInfo>>, Error> {
    Ok(Json(state.service.list(&query)?))
}

/// One box; a running box shows each screen's viewer and takeover URLs,
/// and the person in control when one is.
pub(super) async fn get(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
    headers: HeaderMap,
    StrictQuery(wait): StrictQuery<WaitQuery>,
) -> Result<Json<BoxInfo>, Error> {
    let entry = state.service.get(&id)?;
    let mut info = waited(&state, &entry, &wait).await?;
    if info.state == holm_proto::host::BoxState::Running {
        info.viewers =
            state.service.screen_viewers(&entry, &super::viewers::base_url(&state, &headers)).await;
        info.human_in_control = state.service.human_in_control(&entry).await;
    }
    Ok(Json(info))
}

pub(super) async fn remove(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
) -> Result<Json<BoxInfo>, Error> {
    Ok(Json(state.service.remove(&id, "removed by request").await?))
}

pub(super) async fn bridge(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
    StrictJson(request): StrictJson<BridgeRequest>,
) -> Result<Json<BridgeAccess>, Error> {
    Ok(Json(state.service.bridge(&id, request.ttl_secs, request.rotate).await?))
}

pub(super) async fn agent(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
    StrictJson(request): StrictJson<holm_proto::agent::AgentRequest>,
) -> Result<Json<holm_proto::agent::AgentAccess>, Error> {
    Ok(Json(state.service.agent(&id, request.ttl_secs).await?))
}

pub(super) async fn revoke_agent(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
) -> Result<StatusCode, Error> {
    state.service.revoke_agent(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub(super) async fn stop(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
) -> Result<Json<BoxInfo>, Error> {
    Ok(Json(state.service.stop(&id).await?))
}

pub(super) async fn start(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
    StrictQuery(wait): StrictQuery<WaitQuery>,
) -> Result<Json<BoxInfo>, Error> {
    wait_timeout(&wait)?;
    let entry = state.service.start(&id).await?;
    Ok(Json(waited(&state, &entry, &wait).await?))
}

pub(super) async fn pause(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
) -> Result<Json<BoxInfo>, Error> {
    Ok(Json(state.service.pause(&id).await?))
}

pub(super) async fn resume(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
) -> Result<Json<BoxInfo>, Error> {
    Ok(Json(state.service.resume(&id).await?))
}

pub(super) async fn fork(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
    headers: HeaderMap,
    StrictQuery(wait): StrictQuery<WaitQuery>,
    StrictJson(request): StrictJson<ForkBox>,
) -> Result<Response, Error> {
    wait_timeout(&wait)?;
    let key = idempotency_key(&headers)?;
    let (entry, replayed) = state.service.fork(&id, request, key).await?;
    let mut response = made(waited(&state, &entry, &wait).await?, replayed);
    // The trace goes with the box forked from, where the command was sent.
    response.extensions_mut().insert(TraceBox(id.into()));
    Ok(response)
}

pub(super) async fn extend(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
    StrictJson(request): StrictJson<ExtendBox>,
) -> Result<Json<BoxInfo>, Error> {
    Ok(Json(state.service.extend(&id, request.by_secs).await?))
}

pub(super) async fn traces(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
    StrictQuery(query): StrictQuery<TracesQuery>,
) -> Result<Json<Page<Trace>>, Error> {
    let limit = query.limit.unwrap_or(100);
    Ok(Json(state.service.traces(&id, query.cursor.as_deref(), limit).await?))
}
