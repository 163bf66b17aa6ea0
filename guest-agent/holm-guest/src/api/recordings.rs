//! Recordings ([`crate::record`]): start, stop, list, download, remove.
//!
//! Bad input (a frame rate out of range, a screen the box lacks, a screen
//! already recorded, a stop where nothing runs, an unknown file) is refused
//! in the one error shape and changes nothing.

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use holm_proto::contract;
use holm_proto::guest::Page;
use holm_proto::recording::{Recording, RecordingStart, RecordingStop, StopReason, VIDEO_MIME};
use tokio_util::io::ReaderStream;

use super::AppState;
use super::error::Error;
use super::extract::StrictJson;
use super::table::Routes;

pub(super) fn routes() -> Routes {
    Routes::default()
        .on(&contract::RECORD.route, start)
        .on(&contract::STOP_RECORDING.route, stop)
        .on(&contract::RECORDINGS.route, list)
        .on(&contract::RECORDING_FILE, download)
        .on(&contract::REMOVE_RECORDING.route, remove)
}

async fn start(
    State(state): State<AppState>,
    StrictJson(req): StrictJson<RecordingStart>,
) -> Result<Json<Recording>, Error> {
    Ok(Json(state.recorder.start(req).await?))
}

async fn stop(
    State(state): State<AppState>,
    StrictJson(req): StrictJson<RecordingStop>,
) -> Result<Json<Recording>, Error> {
    Ok(Json(state.recorder.stop(req.screen, StopReason::Requested).await?))
}

async fn list(State(state): State<AppState>) -> Json<Page<Recording>> {
    Json(Page::all(state.recorder.list()))
}

async fn download(
    State(state): State<AppState>,
    Path(file): Path<String>,
) -> Result<Response, Error> {
    let (path, running) = state.recorder.file(&file)?;
    let f = tokio::fs::File::open(&path).await.map_err(Error::internal)?;
    let len = f.metadata().await.map_err(Error::internal)?.len();
    // A running recording's file grows: what is there now is sent, without
    // a length that would no longer hold.
    let reader = tokio::io::AsyncReadExt::take(f, len);
    let mut response =
        Body::from_stream(ReaderStream::with_capacity(reader, 64 * 1024)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(VIDEO_MIME));
    if !running {
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    }
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{file}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(response)
}

async fn remove(
    State(state): State<AppState>,
    Path(file): Path<String>,
) -> Result<StatusCode, Error> {
    state.recorder.remove(&file)?;
    Ok(StatusCode::NO_CONTENT)
}
