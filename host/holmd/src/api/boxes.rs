//! Creating, listing, getting and removing boxes, and their bridge's credentials.

use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use holm_http::{Error, StrictJson, StrictQuery};
use holm_proto::guest::Page;
use holm_proto::host::{BoxInfo, BridgeAccess, BridgeRequest, CreateBox, ListBoxes, WaitQuery};
use holm_proto::{ApiError, Issue};

use super::AppState;
use crate::service::MAX_WAIT_SECS;

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

pub(super) async fn create(
    State(state): State<AppState>,
    StrictQuery(wait): StrictQuery<WaitQuery>,
    StrictJson(request): StrictJson<CreateBox>,
) -> Result<(StatusCode, Json<BoxInfo>), Error> {
    let timeout = wait_timeout(&wait)?;
    let entry = state.service.create(request)?;
    let info = match wait.wait_for {
        Some(target) => state.service.wait(&entry, target, timeout).await,
        None => entry.info(),
    };
    Ok((StatusCode::CREATED, Json(info)))
}

pub(super) async fn list(
    State(state): State<AppState>,
    StrictQuery(query): StrictQuery<ListBoxes>,
) -> Result<Json<Page<BoxInfo>>, Error> {
    Ok(Json(state.service.list(&query)?))
}

pub(super) async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
    StrictQuery(wait): StrictQuery<WaitQuery>,
) -> Result<Json<BoxInfo>, Error> {
    let timeout = wait_timeout(&wait)?;
    let entry = state.service.get(&id)?;
    Ok(Json(match wait.wait_for {
        Some(target) => state.service.wait(&entry, target, timeout).await,
        None => entry.info(),
    }))
}

pub(super) async fn remove(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<BoxInfo>, Error> {
    Ok(Json(state.service.remove(&id, "removed by request").await?))
}

pub(super) async fn bridge(
    State(state): State<AppState>,
    Path(id): Path<String>,
    StrictJson(request): StrictJson<BridgeRequest>,
) -> Result<Json<BridgeAccess>, Error> {
    Ok(Json(state.service.bridge(&id, request.ttl_secs).await?))
}
