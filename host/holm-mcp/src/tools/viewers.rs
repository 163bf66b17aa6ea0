//! The tools that bring a person in: `view_screen` (a link to watch or take
//! over a screen), `ask_for_help` (a takeover link with a reason) and
//! `wait_for_handback`.

use holm_proto::viewer::{AskForHelp as HelpRequest, CreateViewer, ViewerMode};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::args::{self, invalid};
use crate::errors::from_client;
use crate::progress::Reporter;
use crate::server::HolmMcp;
use crate::tools::lifecycle::{LAUNCH_WAIT_SECS, MAX_LAUNCH_WAIT_SECS};
use crate::tools::{Annotations, Answer, Effect, Tool, json_result, to_value};

/// `view_screen`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ViewScreenArgs {
    /// The box's id.
    pub box_id: String,
    /// The screen, from 0 (default 0).
    #[serde(default)]
    pub screen: u8,
    /// A takeover link (mouse, keyboard and clipboard) rather than watch only (default false).
    #[serde(default)]
    pub takeover: bool,
}

/// This group's tools, in the order `tools/list` answers them.
pub(crate) const TOOLS: &[&dyn super::DynTool] = &[&ViewScreen, &AskForHelp, &WaitForHandback];

/// `view_screen`.
#[derive(Debug)]
pub(crate) struct ViewScreen;

impl Tool for ViewScreen {
    const NAME: &'static str = "view_screen";
    const DESCRIPTION: &'static str = "A link a person opens in a plain browser to watch one \
        screen of a box live (or, with takeover, to use its mouse, keyboard and clipboard). Give \
        it only to the person it is for: it works on its own for an hour. While a person uses a \
        takeover link, your desktop and page actions are refused (human_in_control) until they \
        hand back.";
    const ANNOTATIONS: Annotations =
        Annotations { title: "Viewer link", effect: Effect::Additive, open_world: false };
    type Args = ViewScreenArgs;

    async fn call(mcp: &HolmMcp, a: ViewScreenArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let mode = if a.takeover { ViewerMode::Control } else { ViewerMode::View };
        let request =
            CreateViewer { screen: a.screen, mode: Some(mode), ..CreateViewer::default() };
        let g = mcp.client.create_viewer(&a.box_id, &request).await.map_err(from_client)?;
        let what = if a.takeover { "takeover" } else { "watch-only" };
        Ok(json_result(
            Some(format!(
                "a {what} link to screen {} of box {}, until {}",
                g.screen, a.box_id, g.expires_at
            )),
            json!({ "url": g.url, "screen": g.screen, "mode": g.mode, "expires_at": g.expires_at }),
        ))
    }
}

/// `ask_for_help`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AskForHelpArgs {
    /// The box's id.
    pub box_id: String,
    /// Why a person is needed, shown to them on the takeover page (1 to 500 characters).
    pub reason: String,
    /// The screen the person should take, from 0 (default 0).
    #[serde(default)]
    pub screen: u8,
}

/// `ask_for_help`.
#[derive(Debug)]
pub(crate) struct AskForHelp;

impl Tool for AskForHelp {
    const NAME: &'static str = "ask_for_help";
    const DESCRIPTION: &'static str = "Ask a person for help with a box (a captcha, a login, a \
        decision): answers a takeover link whose page shows your reason. Send it to the person; \
        then call wait_for_handback. While they are in control your desktop and page actions are \
        refused; screenshot keeps working.";
    const ANNOTATIONS: Annotations =
        Annotations { title: "Ask a person for help", effect: Effect::Additive, open_world: false };
    type Args = AskForHelpArgs;

    async fn call(mcp: &HolmMcp, a: AskForHelpArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let request = HelpRequest { reason: a.reason, screen: a.screen, expires_after_secs: None };
        let h = mcp.client.ask_for_help(&a.box_id, &request).await.map_err(from_client)?;
        Ok(json_result(
            Some("send the takeover_url to a person, then call wait_for_handback".into()),
            json!({ "state": h.status.state, "takeover_url": h.takeover_url, "expires_at": h.expires_at }),
        ))
    }
}

/// `wait_for_handback`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct WaitForHandbackArgs {
    /// The box's id.
    pub box_id: String,
    /// The longest wait in seconds, 1 to 900 (default 50).
    #[serde(default)]
    pub wait_secs: Option<u64>,
}

/// `wait_for_handback`.
#[derive(Debug)]
pub(crate) struct WaitForHandback;

impl Tool for WaitForHandback {
    const NAME: &'static str = "wait_for_handback";
    const DESCRIPTION: &'static str = "Wait (at most wait_secs) until no person is in control of \
        a box and no request for help waits. Answers state: handed_back (with how: released or \
        disconnected), waiting (nobody took control yet), human_in_control (still working) or \
        none.";
    const ANNOTATIONS: Annotations =
        Annotations { title: "Wait for a person", effect: Effect::ReadOnly, open_world: false };
    type Args = WaitForHandbackArgs;

    async fn call(mcp: &HolmMcp, a: WaitForHandbackArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let secs = a.wait_secs.unwrap_or(LAUNCH_WAIT_SECS);
        if !(1..=MAX_LAUNCH_WAIT_SECS).contains(&secs) {
            return Err(invalid(
                "wait_secs",
                format!("must be 1 to {MAX_LAUNCH_WAIT_SECS}, not {secs}"),
            ));
        }
        let h = mcp.client.handoff(&a.box_id, Some(secs)).await.map_err(from_client)?;
        Ok(json_result(Some(format!("the handoff is {}", h.status.state)), to_value(&h.status)))
    }
}
