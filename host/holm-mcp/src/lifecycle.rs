//! The tools on a box's life: `launch_box`, and `box` (stop, start, pause,
//! resume, fork, extend). Each is one REST call (or two), so each is
//! checked against the runtime's `can` and the box's state by holmd, and a
//! refusal is REST's own (`unsupported`, `conflict`), as a tool result.

use futures_util::StreamExt;
use holm_proto::host::{BoxInfo, BoxState, CreateBox, ForkBox};
use holm_proto::progress::{BoxEvent, Stage};
use holm_proto::{ApiError, ErrorCode, Issue};
use rmcp::model::{CallToolResult, ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};

use crate::args::{BoxAction, BoxLifeArgs, LaunchBoxArgs, OneAction};
use crate::errors::from_client;
use crate::server::{HolmMcp, invalid, json_result, screens_text, to_value};

/// How long `launch_box` (and `box` start and fork) wait for the desktop by
/// default: under the 60 s a typical MCP client waits for any answer.
pub(crate) const LAUNCH_WAIT_SECS: u64 = 50;
/// The longest wait (holmd's own limit).
pub(crate) const MAX_LAUNCH_WAIT_SECS: u64 = 900;

/// `wait_secs`, checked.
fn wait_secs(given: Option<u64>) -> Result<u64, ApiError> {
    let wait = given.unwrap_or(LAUNCH_WAIT_SECS);
    if wait > MAX_LAUNCH_WAIT_SECS {
        return Err(invalid(
            "wait_secs",
            format!("must be at most {MAX_LAUNCH_WAIT_SECS}, not {wait}"),
        ));
    }
    Ok(wait)
}

/// Minutes as seconds, or the field named when it overflows.
fn minutes_to_secs(field: &str, value: Option<u64>, issues: &mut Vec<Issue>) -> Option<u64> {
    value.and_then(|m| {
        let secs = m.checked_mul(60);
        if secs.is_none() {
            issues.push(Issue { path: field.to_owned(), problem: format!("{m} is too large") });
        }
        secs
    })
}

/// Where a call's progress goes: the client that asked for it with a
/// progress token.
#[derive(Clone)]
pub struct Reporter {
    peer: Peer<RoleServer>,
    token: ProgressToken,
}

impl std::fmt::Debug for Reporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reporter").field("token", &self.token).finish_non_exhaustive()
    }
}

/// The steps a bringing up reports: one per stage, and the box running.
const STEPS: f64 = 5.0;

impl Reporter {
    /// A reporter to `peer` for the call that gave `token`.
    pub fn new(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        Self { peer, token }
    }

    async fn send(&self, progress: f64, message: String) {
        let param = ProgressNotificationParam::new(self.token.clone(), progress)
            .with_total(STEPS)
            .with_message(message);
        if let Err(e) = self.peer.notify_progress(param).await {
            tracing::debug!(error = %e, "a progress notification was not sent");
        }
    }
}

impl HolmMcp {
    pub(crate) async fn launch_box(
        &self,
        a: LaunchBoxArgs,
        reporter: Option<&Reporter>,
    ) -> Result<CallToolResult, ApiError> {
        let wait = wait_secs(a.wait_secs)?;
        let request = create_request(&a)?;
        // With a reporter, the create answers at once and the stages are
        // followed; without one, holmd waits.
        let info = self
            .client
            .create_box(&request, reporter.is_none().then_some(wait))
            .await
            .map_err(|e| rest_fields(from_client(e)))?;
        let info = match reporter {
            Some(r) => self.follow(info, wait, r).await?,
            None => info,
        };
        made_result(info, wait, "launch_box")
    }

    /// Reports a box's stages until it runs, fails or `wait` passes, and
    /// answers it as it is then.
    async fn follow(&self, info: BoxInfo, wait: u64, r: &Reporter) -> Result<BoxInfo, ApiError> {
        let events = self.client.progress(&info.id, wait).await.map_err(from_client)?;
        let mut events = std::pin::pin!(events);
        let mut done = 0.0_f64;
        let mut stage = Stage::Image;
        while let Some(event) = events.next().await {
            let (progress, message) = match event.map_err(from_client)? {
                BoxEvent::Stage { stage: s, message } => {
                    stage = s;
                    (s.index() as f64 + 1.0, format!("{s}: {message}"))
                }
                BoxEvent::Build { message, step: Some(step), steps: Some(steps) } => {
                    let within = f64::from(step) / f64::from(steps.max(1)) * 0.9;
                    (stage.index() as f64 + 1.0 + within, format!("{stage}: {message}"))
                }
                // Lines between steps are not progress.
                BoxEvent::Build { .. } => continue,
                BoxEvent::Box { info } => {
                    if info.state == BoxState::Running {
                        r.send(STEPS, format!("box {} is running", info.id)).await;
                    }
                    return Ok(*info);
                }
            };
            if progress > done {
                done = progress;
                r.send(progress, message).await;
            }
        }
        // The stream ended early: the box as it is.
        self.client.get_box(&info.id, None).await.map_err(from_client)
    }

    /// `box`: one change to a box's life.
    pub(crate) async fn box_life(
        &self,
        a: BoxLifeArgs,
        reporter: Option<&Reporter>,
    ) -> Result<CallToolResult, ApiError> {
        crate::args::check_box_id(&a.box_id)?;
        let id = a.box_id.as_str();
        let c = &self.client;
        let info = match a.action {
            BoxAction::Stop => c.stop_box(id).await,
            BoxAction::Pause => c.pause_box(id).await,
            BoxAction::Resume => c.resume_box(id).await,
            BoxAction::Start => {
                let wait = wait_secs(a.wait_secs)?;
                let info = c.start_box(id, Some(wait)).await.map_err(from_client)?;
                return made_result(info, wait, "box start");
            }
            BoxAction::Fork => {
                let wait = wait_secs(a.wait_secs)?;
                let mut issues = Vec::new();
                let request = ForkBox {
                    name: a.name.clone(),
                    expires_after_secs: minutes_to_secs("ttl_minutes", a.ttl_minutes, &mut issues),
                    idle_timeout_secs: minutes_to_secs("idle_minutes", a.idle_minutes, &mut issues),
                };
                if !issues.is_empty() {
                    return Err(ApiError::invalid_fields(issues));
                }
                let info = c
                    .fork_box(id, &request, None, reporter.is_none().then_some(wait))
                    .await
                    .map_err(|e| rest_fields(from_client(e)))?;
                let info = match reporter {
                    Some(r) => self.follow(info, wait, r).await?,
                    None => info,
                };
                return made_result(info, wait, "the fork");
            }
            BoxAction::Extend => {
                let mut issues = Vec::new();
                let by = minutes_to_secs("minutes", a.minutes, &mut issues);
                let Some(by) = by.filter(|_| issues.is_empty()) else {
                    return Err(ApiError::invalid_fields(issues));
                };
                let info = c.extend_box(id, by).await.map_err(|e| rest_fields(from_client(e)))?;
                let summary = format!("box {} now expires at {}", info.id, info.expires_at);
                return Ok(json_result(Some(summary), to_value(&info)));
            }
        };
        let info = info.map_err(from_client)?;
        let summary = format!("box {} is {} ({} asked)", info.id, info.state, a.action.as_str());
        Ok(json_result(Some(summary), to_value(&info)))
    }
}

/// The answer for a box that was made or started: running, still on its
/// way after `wait` seconds (a result, with its state), or failed (an
/// error, with the reason).
fn made_result(info: BoxInfo, wait: u64, what: &str) -> Result<CallToolResult, ApiError> {
    match info.state {
        BoxState::Running => {
            let summary = format!(
                "box {} is running on {} with {}; use its id with the other tools",
                info.id,
                info.runtime,
                screens_text(&info.screens)
            );
            Ok(json_result(Some(summary), to_value(&info)))
        }
        BoxState::Creating | BoxState::Starting => {
            let summary = format!(
                "box {} is still {} after {wait} s (the first box of a new image waits for \
                 its build); list_boxes shows when it is running, and tools on it answer \
                 not_ready until then",
                info.id, info.state
            );
            Ok(json_result(Some(summary), to_value(&info)))
        }
        other => Err(ApiError::new(
            ErrorCode::Unavailable,
            format!(
                "box {} is {}: {}",
                info.id,
                other,
                info.reason.as_deref().unwrap_or("no reason was given")
            ),
        )
        .with_hint(format!(
            "{what} again; if it fails the same way, the reason says what to change"
        ))
        .with_details(json!({ "box": info }))),
    }
}

/// The REST request for `launch_box`, parsed by the REST type's own strict
/// parser, so a field REST does not take is refused here exactly as REST
/// would refuse it.
fn create_request(a: &LaunchBoxArgs) -> Result<CreateBox, ApiError> {
    let mut issues = Vec::new();
    let expires = minutes_to_secs("ttl_minutes", a.ttl_minutes, &mut issues);
    let idle = minutes_to_secs("idle_minutes", a.idle_minutes, &mut issues);
    if !issues.is_empty() {
        return Err(ApiError::invalid_fields(issues));
    }
    let mut spec = serde_json::Map::new();
    let mut placement = serde_json::Map::new();
    let put = |map: &mut serde_json::Map<String, Value>, key: &str, value: Value| {
        if !value.is_null() && value != json!([]) {
            map.insert(key.to_owned(), value);
        }
    };
    put(&mut spec, "screens", json!(a.screens));
    put(&mut spec, "screen_size", json!(a.screen_size));
    put(&mut spec, "display", json!(a.display));
    put(&mut spec, "apps", json!(a.apps));
    put(&mut spec, "packages", json!(a.packages));
    put(&mut spec, "profile", json!(a.profile));
    put(&mut placement, "runtime", json!(a.runtime));
    put(&mut placement, "expires_after_secs", json!(expires));
    put(&mut placement, "idle_timeout_secs", json!(idle));
    let body = json!({ "spec": spec, "placement": placement });
    holm_proto::strict::from_value::<CreateBox>(body)
        .map_err(|issues| rest_fields(ApiError::invalid_fields(issues)))
}

/// Names REST's fields as the tools call them, in a refusal of a create, a
/// fork or an extend.
fn rest_fields(e: ApiError) -> ApiError {
    let Some(issues) = e.details.as_ref().and_then(|d| d.get("issues")).cloned() else {
        return e;
    };
    let Ok(issues) = serde_json::from_value::<Vec<Issue>>(issues) else { return e };
    let renamed: Vec<Issue> = issues
        .into_iter()
        .map(|i| {
            let bare = i
                .path
                .strip_prefix("spec.")
                .or_else(|| i.path.strip_prefix("placement."))
                .unwrap_or(&i.path);
            let (path, note) = match bare {
                "expires_after_secs" => {
                    ("ttl_minutes".to_owned(), " (ttl_minutes is sent as seconds, times 60)")
                }
                "idle_timeout_secs" => {
                    ("idle_minutes".to_owned(), " (idle_minutes is sent as seconds, times 60)")
                }
                "by_secs" => ("minutes".to_owned(), " (minutes is sent as seconds, times 60)"),
                p => (p.to_owned(), ""),
            };
            Issue { path, problem: format!("{}{note}", i.problem) }
        })
        .collect();
    let mut out = ApiError::invalid_fields(renamed);
    out.code = e.code;
    out.request_id = e.request_id;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_arguments_become_the_rest_request() {
        let a = LaunchBoxArgs {
            runtime: Some("docker".into()),
            ttl_minutes: Some(10),
            idle_minutes: Some(5),
            screens: Some(2),
            screen_size: Some("1920x1080".into()),
            apps: vec!["vscode".into()],
            packages: vec!["jq".into()],
            ..LaunchBoxArgs::default()
        };
        let r = create_request(&a).unwrap();
        assert_eq!(r.placement.runtime.as_deref(), Some("docker"));
        assert_eq!(r.placement.expires_after_secs, Some(600));
        assert_eq!(r.placement.idle_timeout_secs, Some(300));
        assert_eq!(r.spec.screens, Some(2));
        assert_eq!(r.spec.screen_size.as_deref(), Some("1920x1080"));
        assert_eq!(r.spec.apps, ["vscode"]);
        assert_eq!(r.spec.packages, ["jq"]);
        let r = create_request(&LaunchBoxArgs::default()).unwrap();
        assert_eq!(r, CreateBox::default());
    }

    #[test]
    fn the_display_goes_to_rest() {
        let a = LaunchBoxArgs {
            display: Some(holm_proto::guest::Profile::Wayland),
            ..LaunchBoxArgs::default()
        };
        let r = create_request(&a).unwrap();
        assert_eq!(r.spec.display, Some(holm_proto::guest::Profile::Wayland));
        let e: Result<LaunchBoxArgs, _> =
            serde_json::from_value(serde_json::json!({"display": "mir"}));
        assert!(e.is_err());
    }

    #[test]
    fn a_profile_goes_to_rest() {
        let a = LaunchBoxArgs { profile: Some("work".into()), ..LaunchBoxArgs::default() };
        let r = create_request(&a).unwrap();
        assert_eq!(to_value(&r)["spec"]["profile"], "work");
    }

    #[test]
    fn rest_refusals_name_the_tools_fields() {
        let e = ApiError::invalid_fields(vec![
            Issue {
                path: "placement.expires_after_secs".into(),
                problem: "must be at least 60 seconds, not 0".into(),
            },
            Issue {
                path: "spec.screens".into(),
                problem: "must be 1 to 6 on this runtime, not 9".into(),
            },
            Issue { path: "placement.runtime".into(), problem: "unknown".into() },
            Issue { path: "by_secs".into(), problem: "too far".into() },
        ])
        .with_request_id("req_1");
        let e = rest_fields(e);
        let t = e.describe();
        assert!(t.contains("\n  ttl_minutes: must be at least 60 seconds, not 0 (ttl_minutes is sent as seconds"), "{t}");
        assert!(t.contains("\n  screens: must be 1 to 6"), "{t}");
        assert!(t.contains("\n  runtime: unknown"), "{t}");
        assert!(t.contains("\n  minutes: too far (minutes is sent as seconds"), "{t}");
        assert!(t.contains("request_id: req_1"), "{t}");
        assert!(e.message.contains("ttl_minutes"), "{}", e.message);
    }

    #[test]
    fn a_box_that_did_not_come_up_is_an_error_with_its_reason() {
        let info: BoxInfo = serde_json::from_value(json!({
            "id": "box_a", "runtime": "docker", "state": "failed", "reason": "no image",
            "spec": {}, "screens": [], "created_at": "x", "expires_at": "y"
        }))
        .unwrap_or_else(|e| panic!("a BoxInfo: {e}"));
        let e = made_result(info, 5, "the fork").unwrap_err();
        assert_eq!(e.code, ErrorCode::Unavailable);
        assert!(e.message.contains("failed: no image"), "{}", e.message);
        assert!(e.hint.unwrap().starts_with("the fork again"));
    }
}
