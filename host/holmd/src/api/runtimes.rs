//! Health, the OpenAPI document, and runtimes.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use holm_http::{Error, StrictJson};
use holm_proto::guest::Page;
use holm_proto::host::{AddRuntime, ChangeRuntime, ReplaceRuntime, RuntimeInfo, ServerHealth};

use super::AppState;

pub(super) async fn health() -> Json<ServerHealth> {
    Json(ServerHealth { status: "ok".into(), version: env!("CARGO_PKG_VERSION").into() })
}

pub(super) async fn openapi(State(state): State<AppState>) -> Json<serde_json::Value> {
    Json((*state.openapi).clone())
}

pub(super) async fn list(State(state): State<AppState>) -> Json<Page<RuntimeInfo>> {
    Json(Page::all(state.service.runtime_infos().await))
}

pub(super) async fn get(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<RuntimeInfo>, Error> {
    Ok(Json(state.service.runtime_info(&name).await?))
}

pub(super) async fn add(
    State(state): State<AppState>,
    StrictJson(request): StrictJson<AddRuntime>,
) -> Result<(StatusCode, Json<RuntimeInfo>), Error> {
    Ok((StatusCode::CREATED, Json(state.service.add_runtime(request).await?)))
}

pub(super) async fn replace(
    State(state): State<AppState>,
    Path(name): Path<String>,
    StrictJson(request): StrictJson<ReplaceRuntime>,
) -> Result<(StatusCode, Json<RuntimeInfo>), Error> {
    let (info, added) = state.service.replace_runtime(&name, request).await?;
    Ok((if added { StatusCode::CREATED } else { StatusCode::OK }, Json(info)))
}

pub(super) async fn change(
    State(state): State<AppState>,
    Path(name): Path<String>,
    StrictJson(request): StrictJson<ChangeRuntime>,
) -> Result<Json<RuntimeInfo>, Error> {
    Ok(Json(state.service.change_runtime(&name, request).await?))
}

pub(super) async fn remove(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<RuntimeInfo>, Error> {
    Ok(Json(state.service.remove_runtime(&name).await?))
}
