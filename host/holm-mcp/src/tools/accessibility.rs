//! The tools for the accessibility tree: `accessibility_tree` and
//! `accessibility_act`. Node rectangles are in screen pixels (not
//! screenshot pixels).

use holm_proto::accessibility::{NodeAction, NodeVerb, TreeQuery};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::args;
use crate::errors::from_client;
use crate::progress::Reporter;
use crate::server::HolmMcp;
use crate::tools::{Annotations, Answer, Effect, Tool, json_result, to_value};

/// `accessibility_tree`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TreeArgs {
    /// The box's id.
    pub box_id: String,
    /// The screen (default 0).
    #[serde(default)]
    pub screen: Option<u8>,
    /// The whole screen, not only the focused window (default false).
    #[serde(default)]
    pub all: Option<bool>,
    /// At most this many levels below each window (default 32, at most 128).
    #[serde(default)]
    pub depth: Option<u32>,
    /// At most this many nodes (default 500, at most 5000).
    #[serde(default)]
    pub max_nodes: Option<u32>,
}

/// `accessibility_act`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ActArgs {
    /// The box's id.
    pub box_id: String,
    /// click, or set_value (with value).
    pub action: NodeVerb,
    /// The node's id, as accessibility_tree answers it.
    #[serde(default)]
    pub node: Option<String>,
    /// The node's role, such as "push button" (with name, instead of node).
    #[serde(default)]
    pub role: Option<String>,
    /// The node's name, exactly.
    #[serde(default)]
    pub name: Option<String>,
    /// set_value: the text or number.
    #[serde(default)]
    pub value: Option<String>,
    /// set_value: keep the value out of every record (what one logs in
    /// with, say): holmd keeps it nowhere, not even its length (default
    /// false).
    #[serde(default)]
    pub sensitive: bool,
    /// The screen (default 0).
    #[serde(default)]
    pub screen: Option<u8>,
    /// Use the pointer and keyboard at the node, not the app's own action.
    #[serde(default)]
    pub pointer: Option<bool>,
}

/// This group's tools, in the order `tools/list` answers them.
pub(crate) const TOOLS: &[&dyn super::DynTool] = &[&AccessibilityTree, &AccessibilityAct];

/// `accessibility_tree`.
#[derive(Debug)]
pub(crate) struct AccessibilityTree;

impl Tool for AccessibilityTree {
    const NAME: &'static str = "accessibility_tree";
    const DESCRIPTION: &'static str = "Read the accessibility tree (AT-SPI) of a box's focused \
        window, or of the whole screen (all): each node's id, role, name, value, states and rect \
        (screen pixels, not screenshot pixels), its children that show; bounded by depth and \
        max_nodes (truncated says when cut). X11 boxes only (Wayland answers unsupported).";
    const ANNOTATIONS: Annotations =
        Annotations { title: "Accessibility tree", effect: Effect::ReadOnly, open_world: false };
    type Args = TreeArgs;

    async fn call(mcp: &HolmMcp, a: TreeArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let q = TreeQuery { screen: a.screen, all: a.all, depth: a.depth, max_nodes: a.max_nodes };
        let tree = mcp.client.boxed(&a.box_id).accessibility(&q).await.map_err(from_client)?;
        let summary = format!(
            "{} node(s){}",
            tree.count,
            if tree.truncated { "; more were left out (depth, max_nodes)" } else { "" }
        );
        Ok(json_result(Some(summary), to_value(&tree)))
    }
}

/// `accessibility_act`.
#[derive(Debug)]
pub(crate) struct AccessibilityAct;

impl Tool for AccessibilityAct {
    const NAME: &'static str = "accessibility_act";
    const DESCRIPTION: &'static str = "Click a node of the accessibility tree or set its value, \
        found by node id or by role and name (the first on the screen): the app's own action (or \
        its editable text or range), else, or with pointer, a click at the node's centre (and for \
        a value, select all and type). An unknown node is not_found and nothing is done.";
    const ANNOTATIONS: Annotations = Annotations {
        title: "Act on a node",
        effect: Effect::Destructive { idempotent: false },
        open_world: false,
    };
    type Args = ActArgs;

    async fn call(mcp: &HolmMcp, a: ActArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let act = NodeAction {
            action: a.action,
            node: a.node,
            role: a.role,
            name: a.name,
            value: a.value,
            screen: a.screen,
            pointer: a.pointer,
            sensitive: a.sensitive,
        };
        let acted =
            mcp.client.boxed(&a.box_id).accessibility_act(&act).await.map_err(from_client)?;
        let summary = format!("done on {} {:?}", acted.node.role, acted.node.name);
        Ok(json_result(Some(summary), to_value(&acted)))
    }
}
