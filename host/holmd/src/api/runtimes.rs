//! Health, the OpenAPI document, and runtimes.

use axum::Json;
use axum::extract::{Path, State};
use holm_http::Error;
use holm_proto::guest::Page;
use holm_proto::host::{RuntimeInfo, ServerHealth};

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
