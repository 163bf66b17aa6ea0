//! The tools on the boxes as a whole: `list_runtimes`, `list_boxes` and
//! `remove_box` (a box's life, from launch to fork, is in `lifecycle`).

use holm_proto::ApiError;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::args::{self, NoArgs};
use crate::errors::from_client;
use crate::progress::Reporter;
use crate::server::HolmMcp;
use crate::tools::{Annotations, Answer, Effect, Tool, json_result, to_value};

/// The box tools, in the order `tools/list` answers them (making and
/// changing a box are in [`super::lifecycle`]).
pub(crate) const TOOLS: &[&dyn super::DynTool] = &[
    &ListRuntimes,
    &super::lifecycle::LaunchBox,
    &ListBoxes,
    &super::lifecycle::BoxLife,
    &RemoveBox,
];

/// `list_runtimes`.
#[derive(Debug)]
pub(crate) struct ListRuntimes;

impl Tool for ListRuntimes {
    const NAME: &'static str = "list_runtimes";
    const DESCRIPTION: &'static str = "List the runtimes this server can put boxes on: name, \
        provider, state, whether it is the default, what it can do (`can`: screens, pause, stop, \
        fork, browser_profile), and its default and longest box lifetime in seconds. Pass a name \
        to launch_box as `runtime`. Runtimes are configured on the server; no tool adds one.";
    const ANNOTATIONS: Annotations =
        Annotations { title: "List runtimes", effect: Effect::ReadOnly, open_world: false };
    type Args = NoArgs;

    fn parse(arguments: Option<JsonObject>) -> Result<NoArgs, ApiError> {
        args::no_args(arguments)
    }

    async fn call(mcp: &HolmMcp, _: NoArgs, _: Option<&Reporter>) -> Answer {
        let runtimes = mcp.client.runtimes().await.map_err(from_client)?;
        Ok(json_result(None, json!({ "runtimes": runtimes })))
    }
}

/// `list_boxes`.
#[derive(Debug)]
pub(crate) struct ListBoxes;

impl Tool for ListBoxes {
    const NAME: &'static str = "list_boxes";
    const DESCRIPTION: &'static str = "List the boxes that are not removed: id, runtime, state \
        (creating, starting, running, stopped, failed...), screens (pixels), created_at and \
        expires_at (RFC 3339).";
    const ANNOTATIONS: Annotations =
        Annotations { title: "List boxes", effect: Effect::ReadOnly, open_world: false };
    type Args = NoArgs;

    fn parse(arguments: Option<JsonObject>) -> Result<NoArgs, ApiError> {
        args::no_args(arguments)
    }

    async fn call(mcp: &HolmMcp, _: NoArgs, _: Option<&Reporter>) -> Answer {
        let boxes = mcp.client.all_boxes().await.map_err(from_client)?;
        let summary = match boxes.len() {
            0 => "no boxes; launch_box starts one".to_owned(),
            1 => "1 box".to_owned(),
            n => format!("{n} boxes"),
        };
        Ok(json_result(Some(summary), json!({ "boxes": boxes })))
    }
}

/// `remove_box`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BoxArgs {
    /// The box's id, such as "box_7hq3k2m9x4ab".
    pub box_id: String,
}

/// `remove_box`.
#[derive(Debug)]
pub(crate) struct RemoveBox;

impl Tool for RemoveBox {
    const NAME: &'static str = "remove_box";
    const DESCRIPTION: &'static str = "Remove a box: its desktop, processes and files are gone \
        for good. Removing a box that is already removed answers it again.";
    const ANNOTATIONS: Annotations = Annotations {
        title: "Remove a box",
        effect: Effect::Destructive { idempotent: true },
        open_world: false,
    };
    type Args = BoxArgs;

    async fn call(mcp: &HolmMcp, a: BoxArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let info = mcp.client.remove_box(&a.box_id).await.map_err(from_client)?;
        Ok(json_result(Some(format!("box {} is removed", info.id)), to_value(&info)))
    }
}
