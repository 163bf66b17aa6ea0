//! Building images, making the base, and the app catalogue.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use holm::image::Progress;
use holm::runtime::{ImageSource, Runtime};
use holm_http::{Error, StrictJson};
use holm_proto::guest::Page;
use holm_proto::host::{AppInfo, BuildEvent, BuildImage, ImageInfo, PruneImages, PrunedImage};
use holm_proto::{ApiError, ErrorCode, Issue};
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
    let display = req.display.unwrap_or_default();
    if display == holm_proto::guest::Profile::Wayland && !runtime.can().wayland {
        return Err(Error(ApiError::invalid_fields(vec![Issue {
            path: "display".into(),
            problem: format!("runtime {:?} cannot run Wayland boxes; use x11", runtime.name()),
        }])));
    }
    let request = holm::image::ImageRequest::new(req.apps, req.packages)
        .map_err(|e| {
            let path = e.field().unwrap_or("apps").to_owned();
            ApiError::invalid_fields(vec![Issue { path, problem: e.to_string() }])
        })?
        .with_display(display);
    // Taken once the request is known good: a refusal changes nothing.
    let permit = state.service.build_permit()?;
    let service = Arc::clone(&state.service);
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut cached = false;
        let progress_tx = tx.clone();
        let mut progress = |p: Progress| match p {
            Progress::Reused { .. } => cached = true,
            other => {
                let _ = progress_tx.send(BuildEvent::Progress { message: other.into_line() });
            }
        };
        let result = runtime.prepare_image(&request, &mut progress).await;
        drop(permit);
        let event = match result {
            Ok(image) => {
                if !cached {
                    service.prune_past_size(&runtime).await;
                }
                BuildEvent::Done { image, cached }
            }
            Err(e) => BuildEvent::Error { error: runtime_error(e) },
        };
        let _ = tx.send(event);
    });
    Ok(ndjson(rx))
}

pub(super) async fn prune(
    State(state): State<AppState>,
    StrictJson(req): StrictJson<PruneImages>,
) -> Result<Json<Page<PrunedImage>>, Error> {
    let names = match &req.runtime {
        Some(name) => vec![name.clone()],
        None => state.service.runtime_names(),
    };
    let policy = holm::image::Prune { all: req.all, dry_run: req.dry_run, ..Default::default() };
    let mut out = Vec::new();
    for name in names {
        let runtime = pick(&state, Some(&name))?;
        let pruned = runtime.prune_images(&policy).await.map_err(runtime_error)?;
        out.extend(pruned.into_iter().map(|p| PrunedImage {
            image: p.image,
            runtime: name.clone(),
            size: p.size,
        }));
    }
    Ok(Json(Page::all(out)))
}

pub(super) async fn base(
    State(state): State<AppState>,
    StrictJson(req): StrictJson<BuildImage>,
) -> Result<Response, Error> {
    let runtime = pick(&state, req.runtime.as_deref())?;
    if runtime.image_source() == ImageSource::Vendor {
        return Err(ApiError::new(
            ErrorCode::Unsupported,
            format!(
                "the {} runtime's vendor builds its images from its own base; there is no base image to make here",
                runtime.name()
            ),
        )
        .into());
    }
    let permit = state.service.build_permit()?;
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let _permit = permit;
        let progress_tx = tx.clone();
        let mut progress = |p: Progress| {
            let _ = progress_tx.send(BuildEvent::Progress { message: p.into_line() });
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
        // A remote runtime that takes no boxes (no key, no adapter) has no
        // images to show.
        let Ok(runtime) = pick(&state, Some(&name)) else { continue };
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
                x11: a.x11,
            })
            .collect(),
    ))
}
