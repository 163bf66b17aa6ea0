//! The accessibility tree: what the apps of a screen tell assistive
//! technologies (AT-SPI) about their windows, and actions on its nodes.
//!
//! - `GET /v1/accessibility`: a [`TreeQuery`]; answers a [`Tree`].
//! - `POST /v1/accessibility/act`: a [`NodeAction`]; answers [`NodeActed`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The levels below a root a tree has by default.
pub const DEFAULT_DEPTH: u32 = 32;

/// The most levels a tree may be asked for.
pub const MAX_DEPTH: u32 = 128;

/// The nodes a tree has at most by default.
pub const DEFAULT_NODES: u32 = 500;

/// The most nodes a tree may be asked for.
pub const MAX_NODES: u32 = 5000;

/// The most characters of a node's value (text) given.
pub const MAX_VALUE_CHARS: usize = 2000;

/// The query of `GET /v1/accessibility`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TreeQuery {
    /// The screen (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<u8>,
    /// The whole screen: every window of every app on it (default: only the
    /// window that has the keyboard focus).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all: Option<bool>,
    /// At most this many levels below each window (default 32, at most 128).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// At most this many nodes in all (default 500, at most 5000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_nodes: Option<u32>,
}

/// A rectangle in the screen's pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Rect {
    /// Its left edge.
    pub x: i32,
    /// Its top edge.
    pub y: i32,
    /// Its width.
    pub width: u32,
    /// Its height.
    pub height: u32,
}

/// One node of the tree: a window, a button, a link, a text field...
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Node {
    /// Its id, for `POST /v1/accessibility/act`: the app's bus name and the
    /// node's object path (`:1.4/org/a11y/atspi/accessible/168`), valid
    /// while the app keeps the node.
    pub id: String,
    /// Its role, as AT-SPI names it: `push button`, `link`, `entry`,
    /// `frame`, `label`...
    pub role: String,
    /// Its accessible name (a button's label, a link's text); may be empty.
    pub name: String,
    /// Its value: an editable text's contents (the first 2000 characters) or
    /// a range's current number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Its states, as AT-SPI names them: `focused`, `focusable`, `enabled`,
    /// `checked`, `editable`, `selected`... (`showing` and `visible` hold for
    /// every node listed and are left out).
    pub states: Vec<String>,
    /// Where it is on the screen, when the app says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<Rect>,
    /// The actions it offers (`click`, `press`, `jump`, `activate`...);
    /// `click` does the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<String>,
    /// Its children that show on the screen, in the app's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Node>,
    /// Whether children of it were left out, to keep within the depth or
    /// the count asked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

/// `GET /v1/accessibility`: the tree of the focused window, or of every
/// window of the screen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tree {
    /// The screen.
    pub screen: u8,
    /// The focused window (its id in `GET /v1/windows`), when the tree is
    /// only its; `null` for the whole screen, or when no window has the
    /// focus.
    pub window: Option<u64>,
    /// The roots: the focused window, or each app's windows on the screen.
    pub nodes: Vec<Node>,
    /// How many nodes the tree has.
    pub count: u32,
    /// Whether nodes were left out to keep within the depth or the count
    /// (the nodes whose children were left out say `cut`).
    pub truncated: bool,
}

/// What to do to a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodeVerb {
    /// Click it: its first action (AT-SPI `DoAction`), or, when it has none
    /// or `pointer` is set, a click of the pointer at its rectangle's centre.
    Click,
    /// Set its value: an editable text's contents, or a range's number;
    /// otherwise (or with `pointer`) click its centre, select all and type.
    SetValue,
}

/// `POST /v1/accessibility/act`: an action on a node, found by its id, or
/// by role and name on the screen (the first in the tree's order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NodeAction {
    /// What to do.
    pub action: NodeVerb,
    /// The node's id from a listing. With `role` or `name`, the node must
    /// still have them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Its role, such as `push button`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Its name, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The value, for `set_value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The screen to look on and click on (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<u8>,
    /// Use the pointer and the keyboard at the node's rectangle, not the
    /// app's own action (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<bool>,
    /// The request carries a secret: no record keeps its text, not even
    /// its length (holmd's timeline and its exports, logs); a command's
    /// argv and environment are recorded as `[sensitive]`; an image it
    /// answers is not kept. Default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sensitive: bool,
}

/// How an action on a node was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActedVia {
    /// The app's own action (AT-SPI `DoAction`).
    Action,
    /// The app's editable text (AT-SPI `SetTextContents`).
    Text,
    /// The app's range value (AT-SPI `Value.CurrentValue`).
    Value,
    /// The pointer (and for a value, the keyboard) at the node's centre.
    Pointer,
}

/// What an action on a node did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NodeActed {
    /// The node, as it was found (without its children).
    pub node: Node,
    /// How it was done.
    pub via: ActedVia,
    /// Where the pointer clicked, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<[i32; 2]>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_read_as_written() {
        let a: NodeAction =
            serde_json::from_str(r#"{"action":"click","role":"push button","name":"OK"}"#).unwrap();
        assert_eq!(a.action, NodeVerb::Click);
        assert_eq!(a.name.as_deref(), Some("OK"));
        assert!(serde_json::from_str::<NodeAction>(r#"{"action":"fly"}"#).is_err());
    }
}
