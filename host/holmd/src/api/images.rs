//! Building images, making the base, and the app catalogue.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use holm::image::Progress;
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
    let request = holm::image::ImageRequest::new(req.apps, req.packages).map_err(|e| {
        let path = e.field().unwrap_or("apps").to_owned();
        ApiError::invalid_fields(vec![Issue { path, problem: e.to_string() }])
    })?;
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut cached = false;
        let progress_tx = tx.clone();
        let mut progress = |p: Progress| match p {
            Progress::Reused { .. } => cached = true,
            other => {
                if let Some(message) = progress_message(other) {
                    let _ = progress_tx.send(BuildEvent::Progress { message });
                }
            }
        };
        let result = runtime.prepare_image(&request, &mut progress).await;
        let event = match result {
            Ok(image) => BuildEvent::Done { image, cached },
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
        let mut progress = |p: Progress| {
            if let Some(message) = progress_message(p) {
                let _ = progress_tx.send(BuildEvent::Progress { message });
            }
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
    Json(Page::all(
        holm::image::catalog()
            .apps()
            .map(|a| AppInfo {
                name: a.name.clone(),
                description: a.description.clone(),
                third_party: a.needs_third_party_repository(),
            })
            .collect(),
    ))
}

/// The line a progress report shows, if any.
pub(crate) fn progress_message(p: Progress) -> Option<String> {
    match p {
        Progress::Status(m) | Progress::Output(m) => Some(m),
        Progress::Built { tag } => Some(format!("built {tag}")),
        Progress::Reused { tag } => Some(format!("{tag} exists; nothing to build")),
        _ => None,
    }
}
