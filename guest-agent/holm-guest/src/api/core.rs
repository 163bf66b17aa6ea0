//! Health and info.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::get;
use holm_proto::guest::{Health, Info, PROTO_VERSION, Page, Screen};

use super::AppState;

pub(super) fn routes() -> Router<AppState> {
    Router::new().route("/v1/info", get(info)).route("/v1/screens", get(screens))
}

/// `GET /health`: the state of each component, without a credential.
pub(super) async fn health(State(state): State<AppState>) -> Json<Health> {
    Json(Health {
        status: state.supervisor.health(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        proto: PROTO_VERSION,
        profile: state.config.profile,
        uptime_ms: u64::try_from(state.started.elapsed().as_millis()).unwrap_or(u64::MAX),
        components: state.supervisor.statuses(),
    })
}

async fn info(State(state): State<AppState>) -> Json<Info> {
    Json(Info {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        proto: PROTO_VERSION,
        profile: state.config.profile,
        screens: screen_list(&state),
        capabilities: crate::CAPABILITIES.iter().map(|s| (*s).to_owned()).collect(),
    })
}

async fn screens(State(state): State<AppState>) -> Json<Page<Screen>> {
    Json(Page::all(screen_list(&state)))
}

pub(super) fn screen_list(state: &AppState) -> Vec<Screen> {
    state
        .config
        .screens
        .iter()
        .enumerate()
        .map(|(i, size)| {
            let index = u8::try_from(i).unwrap_or(u8::MAX);
            Screen {
                index,
                width: size.width,
                height: size.height,
                display: state.config.display(index),
                ready: state.supervisor.display_ready(index),
            }
        })
        .collect()
}
