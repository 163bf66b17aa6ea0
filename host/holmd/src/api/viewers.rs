//! Viewer URLs and the handoff (behind the server token), and the viewers
//! themselves through holmd (behind each URL's own token, which the guest
//! checks): `/v1/boxes/{id}/viewer/...` is the guest's viewer port, pages,
//! assets and the RFB stream's WebSocket upgrade alike, so a person watches
//! through the server (and the proxy before it) with no box port opened.

use std::time::Duration;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderName, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use holm_http::{Error, RequestId, StrictJson, StrictQuery};
use holm_proto::guest::Page;
use holm_proto::viewer::{AskForHelp, CreateViewer, Handoff, HandoffWait, ViewerGrant};
use holm_proto::{ApiError, ErrorCode};

use super::AppState;
use super::box_path::BoxPath;
use crate::service::state::require_running;
use crate::service::{self, Part};

/// Where the caller reached the server: `HOLM_PUBLIC_URL`, else the
/// request's `Host`.
pub(super) fn base_url(state: &AppState, headers: &HeaderMap) -> String {
    if let Some(u) = &state.public_url {
        return u.clone();
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1");
    format!("http://{host}")
}

pub(super) async fn create(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
    headers: HeaderMap,
    StrictJson(request): StrictJson<CreateViewer>,
) -> Result<Response, Error> {
    let grant = state.service.create_viewer(&id, &request, &base_url(&state, &headers)).await?;
    Ok((StatusCode::CREATED, Json(grant)).into_response())
}

pub(super) async fn list(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
    headers: HeaderMap,
) -> Result<Json<Page<ViewerGrant>>, Error> {
    let data = state.service.viewers(&id, &base_url(&state, &headers))?;
    Ok(Json(Page { data, next_cursor: None }))
}

pub(super) async fn revoke(
    State(state): State<AppState>,
    Path((id, grant)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Json<ViewerGrant>, Error> {
    Ok(Json(state.service.revoke_viewer(&id, &grant, &base_url(&state, &headers)).await?))
}

pub(super) async fn ask(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
    headers: HeaderMap,
    StrictJson(request): StrictJson<AskForHelp>,
) -> Result<Json<Handoff>, Error> {
    Ok(Json(state.service.ask_for_help(&id, &request, &base_url(&state, &headers)).await?))
}

pub(super) async fn handoff(
    State(state): State<AppState>,
    BoxPath(id): BoxPath,
    StrictQuery(wait): StrictQuery<HandoffWait>,
) -> Result<Json<Handoff>, Error> {
    let wait = match (wait.wait_for, wait.timeout_secs) {
        (Some(state), secs) => Some((state, secs.unwrap_or(60))),
        (None, Some(_)) => {
            return Err(ApiError::invalid("timeout_secs: only with wait_for")
                .with_hint("add wait_for=handed_back")
                .into());
        }
        (None, None) => None,
    };
    Ok(Json(state.service.handoff(&id, wait).await?))
}

// ---------------------------------------------------------------------------
// The viewers through holmd

/// Headers that belong to one hop and are never passed on.
const HOP: &[HeaderName] = &[
    header::CONNECTION,
    header::HOST,
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
];

fn passed(name: &HeaderName) -> bool {
    !HOP.contains(name) && name.as_str() != "keep-alive"
}

fn viewer_down(id: &str, e: impl std::fmt::Display) -> Error {
    tracing::debug!(box_id = %id, error = %e, "the box's viewer port did not answer");
    service::Error::GuestDown { id: id.to_owned(), part: Part::Viewers, late: false }.into()
}

/// A box whose runtime answered no viewer endpoint.
pub(super) fn no_viewer_port(id: &str) -> Error {
    ApiError::new(ErrorCode::Unsupported, format!("box {id} has no published viewer port"))
        .with_hint("boxes made before viewers existed have none; make a new box")
        .into()
}

/// `ANY /v1/boxes/{id}/viewer/{*rest}`: the guest's viewer port at `/{rest}`,
/// through the endpoint the runtime answered for it (at a vendor, its
/// proxy, over TLS, with its headers). The server token is not asked for:
/// the guest checks the URL's own token on every route but the page and its
/// scripts. WebSocket upgrades take the one upgrade path.
pub(super) async fn proxy(
    State(state): State<AppState>,
    Path((id, rest)): Path<(String, String)>,
    req: Request,
) -> Result<Response, Error> {
    let entry = state.service.get(&id)?;
    let request_id = req.extensions().get::<RequestId>().map(|r| r.0.clone()).unwrap_or_default();
    let path = format!("/{rest}");
    if super::upgrade::is_websocket(req.headers()) {
        let to = (super::upgrade::Upstream::Viewer, path.as_str());
        return super::upgrade::forward(&state, entry, to, false, &request_id, req).await;
    }
    let record = entry.record();
    require_running(&record)?;
    let endpoint = record.viewer.as_ref().ok_or_else(|| no_viewer_port(&id))?;
    let query = req.uri().query().map(|q| format!("?{q}")).unwrap_or_default();
    let mut rb = state.http.request(req.method().clone(), endpoint.join(&format!("{path}{query}")));
    for (name, value) in req.headers().iter().filter(|(n, _)| passed(n)) {
        rb = rb.header(name, value);
    }
    let rb = endpoint.apply(rb).header("x-request-id", &request_id);
    let rb = if matches!(*req.method(), Method::GET | Method::HEAD) {
        rb
    } else {
        rb.body(reqwest::Body::wrap_stream(req.into_body().into_data_stream()))
    };
    let answer = tokio::time::timeout(Duration::from_secs(15), rb.send())
        .await
        .map_err(|_| viewer_down(&id, "no answer in time"))?
        .map_err(|e| viewer_down(&id, e.without_url()))?;
    let mut response = Response::builder().status(answer.status().as_u16());
    for (name, value) in answer.headers().iter().filter(|(n, _)| passed(n)) {
        response = response.header(name, value);
    }
    response.body(Body::from_stream(answer.bytes_stream())).map_err(|e| viewer_down(&id, e))
}
