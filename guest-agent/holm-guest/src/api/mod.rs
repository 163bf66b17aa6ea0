//! The guest's HTTP API.
//!
//! [`app`] builds the router; tests drive it over a real socket. Every route
//! but `GET /health` is behind the bearer check. Every response carries
//! `x-request-id`, and every error has the one shape of [`holm_proto::error`].

mod core;
pub mod error;
pub mod extract;
mod screens;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use holm_proto::{ApiError, ErrorCode};
use subtle::ConstantTimeEq;

use crate::config::Config;
use crate::supervisor::Supervisor;

pub use self::error::Error;

/// Everything a handler can reach.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The configuration read at start.
    pub config: Arc<Config>,
    /// The desktop's components.
    pub supervisor: Arc<Supervisor>,
    /// When the guest started.
    pub started: Instant,
    /// The X connections of the screens.
    pub x11: Arc<crate::x11::X11>,
}

/// The id of the request being served.
#[derive(Clone, Debug)]
pub struct RequestId(pub String);

/// Builds the whole router.
pub fn app(state: AppState) -> Router {
    let secret: Arc<[u8]> = state.config.secret.as_bytes().into();
    Router::new()
        .route("/health", axum::routing::get(core::health))
        .merge(core::routes())
        .merge(screens::routes())
        .fallback(route_not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
        .layer(middleware::from_fn(move |req: Request, next: Next| {
            let secret = Arc::clone(&secret);
            async move {
                // Only the health check answers without the secret; an
                // unknown route is refused like a known one.
                if req.uri().path() == "/health" {
                    return next.run(req).await;
                }
                require_secret(&secret, req, next).await
            }
        }))
        .layer(middleware::from_fn(request_id))
}

async fn route_not_found(req: Request) -> Error {
    ApiError::new(
        ErrorCode::RouteNotFound,
        format!("no route for {} {}", req.method(), req.uri().path()),
    )
    .with_hint("see the guest API in the holm documentation")
    .into()
}

async fn method_not_allowed(req: Request) -> Error {
    ApiError::new(
        ErrorCode::MethodNotAllowed,
        format!("{} is not allowed on {}", req.method(), req.uri().path()),
    )
    .into()
}

/// Refuses a request without `Authorization: Bearer <secret>`. The compare is
/// constant-time, so the secret cannot be guessed a byte at a time.
async fn require_secret(secret: &[u8], req: Request, next: Next) -> Response {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::as_bytes);
    match given {
        Some(given) if bool::from(given.ct_eq(secret)) => next.run(req).await,
        Some(_) => Error::from(
            ApiError::new(ErrorCode::Unauthorized, "the bearer secret is wrong")
                .with_hint("send the box's secret as Authorization: Bearer <secret>"),
        )
        .into_response(),
        None => Error::from(
            ApiError::new(
                ErrorCode::Unauthorized,
                "this route needs Authorization: Bearer <box secret>",
            )
            .with_hint("holm shows a box's secret to whoever created it"),
        )
        .into_response(),
    }
}

/// Gives every request an id (taken from `x-request-id` when it is sane, so
/// holmd's id carries through), puts it on the response, and writes it into
/// error bodies.
async fn request_id(mut req: Request, next: Next) -> Response {
    let id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            !v.is_empty()
                && v.len() <= 64
                && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
        .map_or_else(new_request_id, str::to_owned);
    req.extensions_mut().insert(RequestId(id.clone()));
    let mut response = next.run(req).await;
    if let Some(err) = response.extensions_mut().remove::<ApiError>() {
        let status = response.status();
        response = error::body(err.with_request_id(id.clone()), status);
    }
    if let Ok(v) = HeaderValue::from_str(&id) {
        response.headers_mut().insert("x-request-id", v);
    }
    response
}

/// A new request id, such as `req_5f2c9a0e1b7d4c3a`.
pub fn new_request_id() -> String {
    let mut bytes = [0u8; 8];
    getrandom(&mut bytes);
    let mut s = String::from("req_");
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

fn getrandom(buf: &mut [u8]) {
    // SAFETY: getrandom writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if usize::try_from(n).ok() != Some(buf.len()) {
        // Extremely unlikely; fall back to the clock so ids still differ.
        let t =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (t.as_nanos() >> (i * 8)) as u8;
        }
    }
}
