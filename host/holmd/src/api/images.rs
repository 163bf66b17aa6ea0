//! Building images, making the base, and the app catalogue.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use holm::runtime::Runtime;
use holm_http::{Error, StrictJson};
use holm_proto::guest::Page;
use holm_proto::host::{AppInfo, BuildEvent, BuildImage, ImageInfo};
use holm_proto::{ApiError, Issue};
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::AppState;
use crate::service::runtime_error;

fn pick(state: &AppState, name: Option<&str>) -> Result<Arc<dyn Runtime>, Error> {
    let name = name.unwrap_or_else(|| state.service.default_runtime());
    Ok(Arc::clone(&state.service.runtime(name)?.runtime))
}

/// Streams `events` as NDJSON.
fn ndjson(rx: mpsc::UnboundedReceiver<BuildEvent>) -> Response {
    let stream = UnboundedReceiverStream::new(rx).map(|event| {
        let mut line = serde_json::to_vec(&event).unwrap_or_default();
        line.push(b'\n');
        Ok::<_, std::convert::Infallible>(line)
    });
    ([(header::CONTENT_TYPE, "application/x-ndjson")], Body::from_stream(stream)).into_response()
}

pub(super) async fn build(
    State(state): State<AppState>,
    StrictJson(req): StrictJson<BuildImage>,
) -> Result<Response, Error> {
    let runtime = pick(&state, req.runtime.as_deref())?;
    let request = holm::image::ImageRequest::checked(&req.apps, &req.packages).map_err(|e| {
        let field = e.field().trim_start_matches("spec.").to_owned();
        ApiError::invalid_fields(vec![Issue { path: field, problem: e.to_string() }])
    })?;
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut built = false;
        let progress_tx = tx.clone();
        let mut progress = |message: String| {
            built = true;
            let _ = progress_tx.send(BuildEvent::Progress { message });
        };
        let result = runtime.prepare_image(&request, &mut progress).await;
        let event = match result {
            Ok(image) => BuildEvent::Done { image, cached: !built },
            Err(e) => BuildEvent::Error { error: runtime_error(e) },
        };
        let _ = tx.send(event);
    });
    Ok(ndjson(rx))
}

pub(super) async fn base(
    State(state): State<AppState>,
    StrictJson(req): StrictJson<BuildImage>,
) -> Result<Response, Error> {
    let runtime = pick(&state, req.runtime.as_deref())?;
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let progress_tx = tx.clone();
        let mut progress = |message: String| {
            let _ = progress_tx.send(BuildEvent::Progress { message });
        };
        let event = match runtime.make_base(&mut progress).await {
            Ok(()) => BuildEvent::Done { image: holm::image::BASE_IMAGE.to_owned(), cached: false },
            Err(e) => BuildEvent::Error { error: runtime_error(e) },
        };
        let _ = tx.send(event);
    });
    Ok(ndjson(rx))
}

pub(super) async fn list(State(state): State<AppState>) -> Result<Json<Page<ImageInfo>>, Error> {
    let mut all = Vec::new();
    for name in state.service.runtime_names() {
        let runtime = pick(&state, Some(&name))?;
        all.extend(runtime.images().await.map_err(runtime_error)?);
    }
    Ok(Json(Page::all(all)))
}

pub(super) async fn apps() -> Json<Page<AppInfo>> {
    Json(Page::all(holm::image::catalogue()))
}
