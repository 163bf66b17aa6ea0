//! The viewers' settings and the handoff, on the guest API (box secret):
//! holmd sets the viewer key, asks a person for help for the agent, waits
//! for the handback, and reads control events into the box's traces.

use std::time::Duration;

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use holm_proto::viewer::{
    AskForHelp, ControlEvents, EventsQuery, HandoffState, HandoffStatus, HandoffWait,
    MAX_HANDOFF_WAIT_SECS, ViewerConfig, ViewersStatus,
};
use holm_proto::{ApiError, Issue};

use holm_proto::contract;

use super::AppState;
use super::extract::{StrictJson, StrictQuery};
use super::table::Routes;
use crate::api::Error;

pub(super) fn routes() -> Routes {
    Routes::default()
        .on(&contract::VIEWERS.route, status)
        .on(&contract::VIEWER_CONFIG.route, configure)
        .on(&contract::VIEWER_EVENTS.route, events)
        .on(&contract::ASK_FOR_HELP.route, ask)
        .on(&contract::WITHDRAW_HELP.route, withdraw)
        .on(&contract::HANDOFF.route, handoff)
}

async fn status(State(state): State<AppState>) -> Json<ViewersStatus> {
    Json(state.viewers.status())
}

async fn configure(
    State(state): State<AppState>,
    StrictJson(config): StrictJson<ViewerConfig>,
) -> Result<StatusCode, Error> {
    state.viewers.configure(config)?;
    Ok(StatusCode::NO_CONTENT)
}

async fn events(
    State(state): State<AppState>,
    StrictQuery(q): StrictQuery<EventsQuery>,
) -> Result<Json<ControlEvents>, Error> {
    let timeout = q.timeout_secs.unwrap_or(0);
    if timeout > 60 {
        return Err(ApiError::invalid_fields(vec![Issue {
            path: "timeout_secs".into(),
            problem: format!("at most 60, not {timeout}"),
        }])
        .into());
    }
    Ok(Json(state.viewers.events(q.after.unwrap_or(0), Duration::from_secs(timeout)).await))
}

async fn ask(
    State(state): State<AppState>,
    StrictJson(req): StrictJson<AskForHelp>,
) -> Result<Json<HandoffStatus>, Error> {
    if req.expires_after_secs.is_some() {
        return Err(ApiError::invalid_fields(vec![Issue {
            path: "expires_after_secs".into(),
            problem: "is holmd's (the takeover URL's lifetime); the guest takes reason and screen"
                .into(),
        }])
        .into());
    }
    Ok(Json(state.viewers.ask_for_help(&req.reason, req.screen)?))
}

async fn withdraw(State(state): State<AppState>) -> Json<HandoffStatus> {
    Json(state.viewers.withdraw_help())
}

/// Checks a handoff wait: `handed_back` (or none) only, at most 900 seconds.
pub fn check_wait(q: &HandoffWait) -> Result<(Option<HandoffState>, Duration), ApiError> {
    let mut issues = Vec::new();
    if let Some(s) = q.wait_for
        && !matches!(s, HandoffState::HandedBack)
    {
        issues.push(Issue {
            path: "wait_for".into(),
            problem: format!("only handed_back can be waited for, not {s}"),
        });
    }
    let timeout = q.timeout_secs.unwrap_or(60);
    if timeout > MAX_HANDOFF_WAIT_SECS {
        issues.push(Issue {
            path: "timeout_secs".into(),
            problem: format!("at most {MAX_HANDOFF_WAIT_SECS}, not {timeout}"),
        });
    }
    if !issues.is_empty() {
        return Err(ApiError::invalid_fields(issues));
    }
    Ok((q.wait_for, Duration::from_secs(timeout)))
}

async fn handoff(
    State(state): State<AppState>,
    StrictQuery(q): StrictQuery<HandoffWait>,
) -> Result<Json<HandoffStatus>, Error> {
    let (wait_for, timeout) = check_wait(&q)?;
    Ok(Json(match wait_for {
        Some(s) => state.viewers.wait_handoff(s, timeout).await,
        None => state.viewers.handoff(),
    }))
}

/// Whether a route acts on the screens as a person would (input,
/// accessibility actions, clipboard writes, and page actions): refused
/// while a person is in control. Commands, the terminal and the bridge are
/// not gated (docs/security.md says so).
pub fn acts_on_screen(method: &Method, path: &str) -> bool {
    // Clicking or setting a value through the accessibility tree, and
    // replacing what the person would paste.
    if (method == Method::POST && path == "/v1/accessibility/act")
        || (method == Method::PUT && path == "/v1/clipboard")
    {
        return true;
    }
    if method == Method::POST
        && path.strip_prefix("/v1/screens/").is_some_and(|rest| rest.ends_with("/input"))
    {
        return true;
    }
    // Focusing, moving, resizing or closing a window.
    if method == Method::POST && path.starts_with("/v1/windows/") {
        return true;
    }
    let Some(rest) = path.strip_prefix("/v1/browser/") else { return false };
    match *method {
        Method::POST => rest != "wait",
        Method::DELETE => rest.starts_with("tabs/"),
        _ => false,
    }
}

/// Middleware: refuses the agent's input while a person is in control.
pub(super) async fn refuse_while_person(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    if acts_on_screen(req.method(), req.uri().path())
        && let Err(e) = state.viewers.agent_may_act()
    {
        return Error::from(e).into_response();
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_and_page_actions_act_on_the_screen_and_looking_does_not() {
        assert!(acts_on_screen(&Method::POST, "/v1/screens/0/input"));
        assert!(acts_on_screen(&Method::POST, "/v1/browser/click"));
        assert!(acts_on_screen(&Method::POST, "/v1/browser/navigate"));
        assert!(acts_on_screen(&Method::POST, "/v1/browser/tabs"));
        assert!(acts_on_screen(&Method::DELETE, "/v1/browser/tabs/AB"));
        assert!(acts_on_screen(&Method::POST, "/v1/browser/state"));
        assert!(!acts_on_screen(&Method::POST, "/v1/browser/wait"));
        assert!(acts_on_screen(&Method::POST, "/v1/windows/12"));
        assert!(!acts_on_screen(&Method::GET, "/v1/windows"));
        assert!(!acts_on_screen(&Method::GET, "/v1/screens/0/screenshot"));
        assert!(!acts_on_screen(&Method::GET, "/v1/browser/state"));
        assert!(!acts_on_screen(&Method::POST, "/v1/commands/run"));
        assert!(!acts_on_screen(&Method::PUT, "/v1/files/content"));
        assert!(acts_on_screen(&Method::POST, "/v1/accessibility/act"));
        assert!(acts_on_screen(&Method::PUT, "/v1/clipboard"));
        assert!(!acts_on_screen(&Method::GET, "/v1/clipboard"));
        assert!(!acts_on_screen(&Method::GET, "/v1/accessibility/tree"));
    }
}
