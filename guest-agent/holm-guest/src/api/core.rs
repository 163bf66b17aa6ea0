//! Health and info.

use axum::Json;
use axum::extract::State;
use holm_proto::guest::{Health, Info, PROTO_VERSION, Page, Screen};

use holm_proto::contract;

use super::AppState;
use super::table::Routes;

pub(super) fn routes() -> Routes {
    Routes::default()
        .on(&contract::HEALTH.route, health)
        .on(&contract::INFO.route, info)
        .on(&contract::SCREENS.route, screens)
}

/// `GET /health`: the state of each component, without a credential.
async fn health(State(state): State<AppState>) -> Json<Health> {
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
        capabilities: crate::capabilities(state.config.profile),
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
                display: state.config.screen_name(index),
                ready: state.supervisor.display_ready(index),
            }
        })
        .collect()
}
