//! A box's timeline: its steps a page at a time, its export as one HTML
//! page or JSONL, and the screenshots it keeps.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use holm_http::{Error, StrictQuery};
use holm_proto::guest::Page;
use holm_proto::timeline::{ExportQuery, Step, TimelineQuery};

use super::AppState;
use super::box_path::BoxPath;

pub(super) async fn list(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
    StrictQuery(query): StrictQuery<TimelineQuery>,
) -> Result<Json<Page<Step>>, Error> {
    let limit = query.limit.unwrap_or(100);
    Ok(Json(state.service.timeline(&id, query.cursor.as_deref(), limit).await?))
}

pub(super) async fn export(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
    StrictQuery(query): StrictQuery<ExportQuery>,
) -> Result<Response, Error> {
    let export = state.service.export_timeline(&id, query.format).await?;
    Ok(([(header::CONTENT_TYPE, export.media_type)], export.body).into_response())
}

pub(super) async fn screenshot(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
    Path((_, shot)): Path<(String, String)>,
) -> Result<Response, Error> {
    let image = state.service.timeline_shot(&id, &shot).await?;
    let media_type = match image.get(..4) {
        Some([0xff, 0xd8, ..]) => "image/jpeg",
        Some(b"RIFF") => "image/webp",
        _ => "image/png",
    };
    Ok(([(header::CONTENT_TYPE, media_type)], image).into_response())
}
