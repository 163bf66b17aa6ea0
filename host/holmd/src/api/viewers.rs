//! Viewer URLs and the handoff (behind the server token), and the viewers
//! themselves through holmd (behind each URL's own token, which the guest
//! checks): under `/v1/boxes/{id}/viewer/`, holmd serves the page and its
//! assets from its own binary, and passes the session, control and RFB
//! stream routes to the guest's viewer port (headers by allowlist both
//! ways, answers only as JSON or as a WebSocket's bytes), so a person
//! watches through the server (and the proxy before it) with no box port
//! opened, and nothing the box serves runs on holmd's origin.

use std::time::Duration;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use holm_http::{Error, RequestId, StrictJson, StrictQuery};
use holm_proto::guest::Page;
use holm_proto::viewer::{AskForHelp, CreateViewer, Handoff, HandoffWait, ViewerAuth, ViewerGrant};
use holm_proto::{ApiError, ErrorCode};

use super::AppState;
use super::box_path::BoxPath;
use crate::service::state::require_running;
use crate::service::{self, Part};
use crate::store::BoxRecord;

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

/// What a path under `/v1/boxes/{id}/viewer/` is. holmd serves the page and
/// its assets itself (the bytes [`holm_http::viewer_page`] embeds) and
/// passes only three routes to the box's viewer port: nothing the box
/// answers reaches a script context on holmd's origin.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Route {
    /// `{screen}/{view|takeover}`: the page.
    Page,
    /// `assets/...`, `novnc/...`: a script or a style.
    Asset(String),
    /// `{screen}/{mode}/session`, `.../control`: JSON, passed to the guest at
    /// this (canonical) path.
    Json(String),
    /// `{screen}/{mode}/rfb`: the RFB stream, a WebSocket passed as bytes.
    Stream(String),
}

impl Route {
    fn parse(rest: &str) -> Option<Route> {
        if holm_http::viewer_page::asset(rest).is_some() {
            return Some(Route::Asset(rest.to_owned()));
        }
        let parts: Vec<&str> = rest.split('/').collect();
        let (screen, mode, tail) = match parts.as_slice() {
            [screen, mode] => (screen, mode, None),
            [screen, mode, tail] => (screen, mode, Some(*tail)),
            _ => return None,
        };
        if screen.is_empty() || !screen.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let screen = screen.parse::<u8>().ok()?;
        let mode = ["view", "takeover"].into_iter().find(|m| m == mode)?;
        let at = |tail: &str| format!("/{screen}/{mode}/{tail}");
        match tail {
            None => Some(Route::Page),
            Some(t @ ("session" | "control")) => Some(Route::Json(at(t))),
            Some("rfb") => Some(Route::Stream(at("rfb"))),
            Some(_) => None,
        }
    }

    /// Whether `method` is this route's.
    fn takes(&self, method: &Method) -> bool {
        match self {
            Route::Page | Route::Asset(_) => matches!(*method, Method::GET | Method::HEAD),
            Route::Json(path) if path.ends_with("/control") => *method == Method::POST,
            Route::Json(_) | Route::Stream(_) => *method == Method::GET,
        }
    }
}

/// The request headers the JSON routes pass to the guest: the body's type,
/// and the URL's token (`Authorization`) when the box's viewers need one.
/// Cookies, a proxy's credentials and everything else stay at holmd.
const JSON_REQUEST: &[HeaderName] = &[header::CONTENT_TYPE, header::ACCEPT];

/// The headers of `from` a JSON route passes to the guest.
fn json_request_headers(from: &HeaderMap, viewer_token: bool) -> HeaderMap {
    let mut out = HeaderMap::new();
    let names = JSON_REQUEST.iter().chain(viewer_token.then_some(&header::AUTHORIZATION));
    for name in names {
        if let Some(v) = from.get(name) {
            out.insert(name.clone(), v.clone());
        }
    }
    out
}

/// A box whose policy needs no viewer token (`policy.auth: none`, for tools
/// on the server's host) is not open through holmd: its viewer routes ask
/// for the server token, when the server has one, and pass it on to no box.
fn open_box_check(state: &AppState, record: &BoxRecord, req: &Request) -> Result<bool, Error> {
    let open = record.spec.policy.as_ref().is_some_and(|p| p.auth == ViewerAuth::None);
    if let (true, Some(token)) = (open, &state.server_token) {
        holm_http::check_bearer(req, token, "the server token").map_err(|e| {
            e.hint("this box's viewers need no viewer token (policy.auth: none), so through holmd they need the server token as Authorization: Bearer")
        })?;
    }
    Ok(!open)
}

/// The largest body of a control request, and of the guest's JSON answer.
const MAX_REQUEST: usize = 4 * 1024;
const MAX_ANSWER: usize = 64 * 1024;

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

/// `ANY /v1/boxes/{id}/viewer/{*rest}`: the page and its assets from holmd
/// itself; the session, control and stream routes from the guest's viewer
/// port, through the endpoint the runtime answered for it (at a vendor, its
/// proxy, over TLS, with its headers). The server token is not asked for:
/// the guest checks the URL's own token on the routes it answers.
pub(super) async fn proxy(
    State(state): State<AppState>,
    Path((id, rest)): Path<(String, String)>,
    req: Request,
) -> Result<Response, Error> {
    let entry = state.service.get(&id)?;
    let route = Route::parse(&rest)
        .ok_or_else(|| holm_http::route_not_found(req.method(), req.uri().path()).hint(
            "a viewer page is /v1/boxes/{id}/viewer/SCREEN/view or .../takeover, with its token after #",
        ))?;
    if !route.takes(req.method()) {
        return Err(holm_http::method_not_allowed(req.method(), req.uri().path()));
    }
    let request_id = req.extensions().get::<RequestId>().map(|r| r.0.clone()).unwrap_or_default();
    match route {
        Route::Page => Ok(holm_http::viewer_page::page_response()),
        Route::Asset(path) => holm_http::viewer_page::asset_response(&path)
            .ok_or_else(ApiError::internal)
            .map_err(Error::from),
        Route::Stream(path) => {
            open_box_check(&state, &entry.record(), &req)?;
            if !super::upgrade::is_websocket(req.headers()) {
                return Err(ApiError::new(
                    ErrorCode::InvalidRequest,
                    "the RFB stream is a WebSocket",
                )
                .with_hint("connect with Upgrade: websocket")
                .into());
            }
            let to = (super::upgrade::Upstream::Viewer, path.as_str());
            super::upgrade::forward(&state, entry, to, false, &request_id, req).await
        }
        Route::Json(path) => {
            forward_json(&state, &id, &entry.record(), &path, &request_id, req).await
        }
    }
}

/// Passes a session or control request to the guest, and answers what it
/// answered only if it is JSON (bounded), with holmd's own headers.
async fn forward_json(
    state: &AppState,
    id: &str,
    record: &BoxRecord,
    path: &str,
    request_id: &str,
    req: Request,
) -> Result<Response, Error> {
    let viewer_token = open_box_check(state, record, &req)?;
    require_running(record)?;
    let endpoint = record.viewer.as_ref().ok_or_else(|| no_viewer_port(id))?;
    let rb = state.http(endpoint).request(req.method().clone(), endpoint.join(path));
    let rb = rb.headers(json_request_headers(req.headers(), viewer_token));
    let mut rb = endpoint.apply(rb).header("x-request-id", request_id);
    if req.method() == Method::POST {
        let body = axum::body::to_bytes(req.into_body(), MAX_REQUEST).await.map_err(|_| {
            Error::from(ApiError::invalid(format!(
                "a control request is at most {MAX_REQUEST} bytes"
            )))
        })?;
        rb = rb.body(body);
    }
    let answer = tokio::time::timeout(Duration::from_secs(15), rb.send())
        .await
        .map_err(|_| viewer_down(id, "no answer in time"))?
        .map_err(|e| viewer_down(id, e.without_url()))?;
    let status = answer.status().as_u16();
    let body = read_bounded(answer, MAX_ANSWER).await.map_err(|e| viewer_down(id, e))?;
    if serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_err() {
        return Err(viewer_down(id, "its answer is not JSON"));
    }
    json_answer(status, body).map_err(|e| viewer_down(id, e))
}

/// A guest's JSON answer as holmd passes it on: its status and body, with
/// holmd's own headers only (no `Set-Cookie`, no type the box chose).
fn json_answer(status: u16, body: Vec<u8>) -> Result<Response, axum::http::Error> {
    let mut response = Response::builder().status(status).body(Body::from(body))?;
    holm_http::viewer_page::secure_headers(&mut response);
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(holm_http::viewer_page::STATIC_CSP),
    );
    Ok(response)
}

/// A response's body, refused past `max` bytes.
async fn read_bounded(mut answer: reqwest::Response, max: usize) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = answer.chunk().await.map_err(|e| e.without_url().to_string())? {
        if body.len() + chunk.len() > max {
            return Err(format!("its answer is over {max} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_three_routes_reach_the_box() {
        assert_eq!(Route::parse("0/view"), Some(Route::Page));
        assert_eq!(Route::parse("2/takeover"), Some(Route::Page));
        assert_eq!(Route::parse("0/view/session"), Some(Route::Json("/0/view/session".into())));
        assert_eq!(
            Route::parse("1/takeover/control"),
            Some(Route::Json("/1/takeover/control".into()))
        );
        assert_eq!(Route::parse("0/view/rfb"), Some(Route::Stream("/0/view/rfb".into())));
        assert_eq!(Route::parse("assets/app.js"), Some(Route::Asset("assets/app.js".into())));
        assert_eq!(
            Route::parse("novnc/core/rfb.js"),
            Some(Route::Asset("novnc/core/rfb.js".into()))
        );
        for other in [
            "novnc/core/nothing.js",
            "novnc/app/ui.js",
            "assets/../0/view",
            "0/view/",
            "0/view/x",
            "+0/view/session",
            "256/view",
            "0/control",
            "0/view/session/x",
            "",
        ] {
            assert_eq!(Route::parse(other), None, "{other}");
        }
        assert!(Route::Page.takes(&Method::GET));
        assert!(!Route::Json("/0/takeover/control".into()).takes(&Method::GET));
        assert!(Route::Json("/0/takeover/control".into()).takes(&Method::POST));
        assert!(!Route::Json("/0/view/session".into()).takes(&Method::POST));
    }

    #[test]
    fn headers_pass_by_allowlist_both_ways() {
        let mut h = HeaderMap::new();
        for (name, value) in [
            ("cookie", "sso=PROBE-COOKIE"),
            ("authorization", "Bearer vg_x.y"),
            ("proxy-authorization", "Basic cHJvYmU6cHJvYmU="),
            ("x-forwarded-user", "alice"),
            ("content-type", "application/json"),
            ("accept", "application/json"),
        ] {
            h.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
        }
        let passed = json_request_headers(&h, true);
        let mut names: Vec<&str> = passed.keys().map(HeaderName::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["accept", "authorization", "content-type"]);
        let open = json_request_headers(&h, false);
        assert!(open.get(header::AUTHORIZATION).is_none(), "no token goes to an open box");

        let r = json_answer(401, b"{}".to_vec()).unwrap();
        let mut names: Vec<&str> = r.headers().keys().map(HeaderName::as_str).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "cache-control",
                "content-security-policy",
                "content-type",
                "referrer-policy",
                "x-content-type-options"
            ]
        );
        assert_eq!(r.status(), 401);
    }
}
