//! The tools on a box's life: `launch_box`, and `box` (stop, start, pause,
//! resume, fork, extend). Each is one REST call (or two), so each is
//! checked against the runtime's `can` and the box's state by holmd, and a
//! refusal is REST's own (`unsupported`, `conflict`), as a tool result.

use futures_util::StreamExt;
use holm_proto::host::{BoxInfo, BoxState, CreateBox, ForkBox};
use holm_proto::progress::{BoxEvent, Stage};
use holm_proto::{ApiError, ErrorCode, Issue};
use rmcp::model::{CallToolResult, JsonObject};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::args::{self, OneAction, invalid};
use crate::errors::from_client;
use crate::progress::{Reporter, STEPS};
use crate::server::HolmMcp;
use crate::tools::{Annotations, Answer, Effect, Tool, json_result, to_value};

/// `launch_box`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LaunchBoxArgs {
    /// The runtime, as list_runtimes names it (default: the server's default).
    #[serde(default)]
    pub runtime: Option<String>,
    /// Remove the box this many minutes after it starts (default: the
    /// runtime's lifetime, usually 60).
    #[serde(default)]
    pub ttl_minutes: Option<u64>,
    /// Remove the box when no tool acted on it for this many minutes.
    /// Screenshots and cursor reads do not count as acting.
    #[serde(default)]
    pub idle_minutes: Option<u64>,
    /// How many screens, 1 to 6 (default 1).
    #[serde(default)]
    pub screens: Option<u8>,
    /// The size of every screen in pixels, WIDTHxHEIGHT (default 1280x800).
    #[serde(default)]
    pub screen_size: Option<String>,
    /// The display server: "x11" (default) or "wayland" (headless sway). The
    /// tools are the same; on Wayland the cursor tool cannot say where the
    /// pointer is after a person moved it, until you move it again.
    #[serde(default)]
    pub display: Option<holm_proto::guest::Profile>,
    /// Apps from the server's catalogue, such as "vscode".
    #[serde(default)]
    pub apps: Vec<String>,
    /// Debian packages to install, such as "jq".
    #[serde(default)]
    pub packages: Vec<String>,
    /// Keep Chromium's profile under this name, so a later box with the same
    /// profile finds its logins. Only runtimes that can keep a browser profile
    /// accept it.
    #[serde(default)]
    pub profile: Option<String>,
    /// Wait at most this many seconds for the desktop (default 50, at most
    /// 900). A box still starting then is answered as it is.
    #[serde(default)]
    pub wait_secs: Option<u64>,
}

/// `launch_box`.
#[derive(Debug)]
pub(crate) struct LaunchBox;

impl Tool for LaunchBox {
    const NAME: &'static str = "launch_box";
    const DESCRIPTION: &'static str = "Start a new box: a Linux desktop with a window manager and \
        Chromium on each screen (X11, or Wayland with display \"wayland\"). Answers once its \
        desktop runs (or after wait_secs) with its id (box_...), state, screens (pixels) and \
        expires_at (RFC 3339). The first box with a new set of apps and packages waits for an \
        image build (minutes); a call that asks for progress gets MCP progress notifications for \
        its stages (image with its build steps, container, desktop, browser). Remove it with \
        remove_box when done.";
    const ANNOTATIONS: Annotations =
        Annotations { title: "Launch a box", effect: Effect::Additive, open_world: true };
    type Args = LaunchBoxArgs;

    async fn call(mcp: &HolmMcp, a: LaunchBoxArgs, progress: Option<&Reporter>) -> Answer {
        let wait = wait_secs(a.wait_secs)?;
        let request = create_request(&a)?;
        // With a reporter, the create answers at once and the stages are
        // followed; without one, holmd waits.
        let info = mcp
            .client
            .create_box(&request, progress.is_none().then_some(wait))
            .await
            .map_err(|e| rest_fields(from_client(e)))?;
        let info = match progress {
            Some(r) => follow(mcp, info, wait, r).await?,
            None => info,
        };
        made_result(info, wait, "launch_box")
    }
}

/// What a `box` call does to a box's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BoxAction {
    /// Stop the box: its files are kept, its processes end.
    Stop,
    /// Start a stopped box: a new desktop with the same files.
    Start,
    /// Pause a running box: its memory is kept; it takes no commands.
    Pause,
    /// Resume a paused box where it was.
    Resume,
    /// A new box with a copy of this box's files (not its memory).
    Fork,
    /// Move the end of the box's lifetime later by minutes.
    Extend,
}

impl BoxAction {
    /// Every action, in the order the description lists them.
    #[cfg(test)]
    pub const ALL: &[Self] =
        &[Self::Stop, Self::Start, Self::Pause, Self::Resume, Self::Fork, Self::Extend];
}

impl OneAction for BoxAction {
    fn as_str(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Start => "start",
            Self::Pause => "pause",
            Self::Resume => "resume",
            Self::Fork => "fork",
            Self::Extend => "extend",
        }
    }

    fn fields(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Self::Stop | Self::Pause | Self::Resume => (&[], &[]),
            Self::Start => (&[], &["wait_secs"]),
            Self::Fork => (&[], &["name", "ttl_minutes", "idle_minutes", "wait_secs"]),
            Self::Extend => (&["minutes"], &[]),
        }
    }
}

/// `box`: one change to a box's life. Which fields an action takes is
/// checked by [`args::parse_action`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BoxLifeArgs {
    /// The box's id.
    pub box_id: String,
    /// What to do: stop, start {wait_secs}, pause, resume, fork {name,
    /// ttl_minutes, idle_minutes, wait_secs}, extend {minutes}.
    pub action: BoxAction,
    /// extend: how many minutes to add to the box's lifetime (never past the
    /// runtime's longest lifetime, counted from the box's creation).
    #[serde(default)]
    pub minutes: Option<u64>,
    /// fork: a name of your own for the copy.
    #[serde(default)]
    pub name: Option<String>,
    /// fork: remove the copy this many minutes after it starts (default: the
    /// runtime's lifetime, usually 60).
    #[serde(default)]
    pub ttl_minutes: Option<u64>,
    /// fork: remove the copy when no tool acted on it for this many minutes
    /// (default: the original's).
    #[serde(default)]
    pub idle_minutes: Option<u64>,
    /// start, fork: wait at most this many seconds for the desktop (default
    /// 50, at most 900). A box still starting then is answered as it is.
    #[serde(default)]
    pub wait_secs: Option<u64>,
}

/// `box`: one change to a box's life.
#[derive(Debug)]
pub(crate) struct BoxLife;

impl Tool for BoxLife {
    const NAME: &'static str = "box";
    const DESCRIPTION: &'static str = "Change a box's life, one action a call (field action): \
        stop (its files are kept, its processes end); start a stopped box (a new desktop with the \
        same files; answers once it runs or after wait_secs); pause (its memory is kept; it takes \
        no commands); resume a paused box where it was; fork {name,ttl_minutes,idle_minutes} (a \
        new box on the same runtime with a copy of the files, not the memory; answers the new \
        box); extend {minutes} (move expires_at later, never past the runtime's longest \
        lifetime). list_runtimes says what each runtime can do (`can`): an action it cannot do is \
        refused as unsupported, and one the box's state does not allow as conflict, before \
        anything changes. Answers the box (or the fork) as it is after.";
    const ANNOTATIONS: Annotations = Annotations {
        title: "Change a box's life",
        effect: Effect::Destructive { idempotent: false },
        open_world: true,
    };
    type Args = BoxLifeArgs;

    fn parse(arguments: Option<JsonObject>) -> Result<BoxLifeArgs, ApiError> {
        args::parse_action::<BoxLifeArgs, BoxAction>(arguments)
    }

    async fn call(mcp: &HolmMcp, a: BoxLifeArgs, progress: Option<&Reporter>) -> Answer {
        box_life(mcp, a, progress).await
    }
}

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

/// Reports a box's stages until it runs, fails or `wait` passes, and
/// answers it as it is then.
async fn follow(
    mcp: &HolmMcp,
    info: BoxInfo,
    wait: u64,
    r: &Reporter,
) -> Result<BoxInfo, ApiError> {
    let events = mcp.client.progress(&info.id, wait).await.map_err(from_client)?;
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
    mcp.client.get_box(&info.id, None).await.map_err(from_client)
}

/// `box`: one change to a box's life.
async fn box_life(mcp: &HolmMcp, a: BoxLifeArgs, reporter: Option<&Reporter>) -> Answer {
    args::check_box_id(&a.box_id)?;
    let id = a.box_id.as_str();
    let c = &mcp.client;
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
                Some(r) => follow(mcp, info, wait, r).await?,
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

/// A box's screens in a few words.
fn screens_text(screens: &[holm_proto::guest::Screen]) -> String {
    match screens {
        [] => "its screens not yet known".to_owned(),
        [one] => format!("1 screen ({}x{})", one.width, one.height),
        many => format!(
            "{} screens ({})",
            many.len(),
            many.iter()
                .map(|s| format!("{}: {}x{}", s.index, s.width, s.height))
                .collect::<Vec<_>>()
                .join(", ")
        ),
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
    use holm_proto::host::{BoxInfo, CreateBox};
    use holm_proto::{ApiError, ErrorCode, Issue};
    use serde_json::json;

    use super::{BoxAction, BoxLifeArgs, LaunchBoxArgs, create_request, made_result, rest_fields};
    use crate::args::testing::{obj, paths, problems};
    use crate::args::{OneAction, parse_action};
    use crate::tools::to_value;

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

    #[test]
    fn each_box_action_takes_its_own_fields_and_is_refused_others_each_named() {
        let parse = |v: serde_json::Value| parse_action::<BoxLifeArgs, BoxAction>(obj(v));
        for ok in [
            json!({"box_id": "box_a", "action": "stop"}),
            json!({"box_id": "box_a", "action": "start", "wait_secs": 10}),
            json!({"box_id": "box_a", "action": "pause"}),
            json!({"box_id": "box_a", "action": "resume", "minutes": null}),
            json!({"box_id": "box_a", "action": "fork", "name": "copy", "ttl_minutes": 5, "idle_minutes": 2}),
            json!({"box_id": "box_a", "action": "extend", "minutes": 30}),
        ] {
            let a = parse(ok.clone()).unwrap_or_else(|e| panic!("{ok}: {e}"));
            assert_eq!(json!(a.action.as_str()), ok["action"]);
        }
        let err =
            parse(json!({"box_id": "box_a", "action": "pause", "minutes": 3, "wait_secs": 1}))
                .unwrap_err();
        assert_eq!(paths(&err), ["minutes", "wait_secs"]);
        assert!(problems(&err).contains("pause does not take minutes"), "{err:?}");
        let err = parse(json!({"box_id": "box_a", "action": "extend", "name": "x"})).unwrap_err();
        assert_eq!(paths(&err), ["name", "minutes"]);
        assert!(problems(&err).contains("extend needs minutes"), "{err:?}");
        let err = parse(json!({"box_id": "box_a", "action": "reboot", "colour": 1})).unwrap_err();
        let p = paths(&err);
        assert!(p.contains(&"action".to_owned()) && p.contains(&"colour".to_owned()), "{p:?}");
    }
}
