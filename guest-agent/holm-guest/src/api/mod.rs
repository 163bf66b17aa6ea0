//! The guest's HTTP API.
//!
//! [`app`] builds the router; tests drive it over a real socket. Every route
//! but `GET /health` is behind the bearer check. The Chromium bridge on port
//! 9223 is a server of its own ([`crate::bridge`]); its credentials are set
//! here. Every response carries
//! `x-request-id`, and every error has the one shape of [`holm_proto::error`].

mod browser;
mod commands;
mod core;
pub mod error;
pub mod extract;
mod files;
mod processes;
mod screens;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};

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
    /// Commands and background processes.
    pub processes: Arc<crate::exec::Processes>,
    /// The X connections of the screens.
    pub x11: Arc<crate::x11::X11>,
    /// The Chromium bridge's credentials.
    pub bridge: Arc<crate::bridge::Bridge>,
    /// Screen 0's browser, for the page tools.
    pub browser: Arc<crate::browser::Browser>,
}

pub use holm_http::RequestId;

/// Builds the whole router.
pub fn app(state: AppState) -> Router {
    let secret: Arc<[u8]> = state.config.secret.as_bytes().into();
    Router::new()
        .route("/health", axum::routing::get(core::health))
        .merge(core::routes())
        .merge(commands::routes())
        .merge(processes::routes())
        .merge(files::routes())
        .merge(screens::routes())
        .merge(browser::routes())
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
                holm_http::require_bearer(&secret, "the box secret", req, next).await
            }
        }))
        .layer(middleware::from_fn(holm_http::request_id))
}

async fn route_not_found(req: Request) -> Error {
    holm_http::route_not_found(req.method(), req.uri().path())
}

async fn method_not_allowed(req: Request) -> Error {
    holm_http::method_not_allowed(req.method(), req.uri().path())
}
