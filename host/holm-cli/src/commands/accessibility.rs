//! The accessibility tree of a box: `holm accessibility BOX` prints it, and
//! `holm accessibility BOX click|set` acts on a node.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use holm_client::Client;
use holm_proto::accessibility::{Node, NodeAction, NodeVerb, TreeQuery};

use crate::output;

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// The accessibility tree of a box's focused window (--all: the screen);
    /// click a node or set its value.
    Accessibility(AccessibilityArgs),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::Accessibility(a) => run(c, a, json).await,
        }
    }
}

/// `holm accessibility BOX [click|set ...]`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AccessibilityArgs {
    /// The box id.
    r#box: String,
    /// The screen (default 0).
    #[arg(long)]
    screen: Option<u8>,
    /// The whole screen, not only the focused window.
    #[arg(long)]
    all: bool,
    /// At most this many levels below each window (default 32).
    #[arg(long)]
    depth: Option<u32>,
    /// At most this many nodes (default 500).
    #[arg(long)]
    max_nodes: Option<u32>,
    /// Act on a node.
    #[command(subcommand)]
    cmd: Option<NodeCmd>,
}

/// Which node: its id, or its role and name.
#[derive(Debug, Args)]
pub struct Which {
    /// The node's id, as listed.
    #[arg(long)]
    node: Option<String>,
    /// Its role, such as `push button`.
    #[arg(long)]
    role: Option<String>,
    /// Its name, exactly.
    #[arg(long)]
    name: Option<String>,
    /// The screen to look on (default 0).
    #[arg(long)]
    screen: Option<u8>,
    /// Use the pointer (and keyboard) at the node, not the app's action.
    #[arg(long)]
    pointer: bool,
}

/// What to do to a node.
#[derive(Debug, Subcommand)]
pub enum NodeCmd {
    /// Click it: its first action, else the pointer at its centre.
    Click(Which),
    /// Set its value (text or number); else click it, select all and type.
    Set {
        #[command(flatten)]
        which: Which,
        /// The value.
        value: String,
        #[command(flatten)]
        secret: crate::args::SensitiveArg,
    },
}

fn action(verb: NodeVerb, w: Which, value: Option<String>, sensitive: bool) -> NodeAction {
    NodeAction {
        action: verb,
        node: w.node,
        role: w.role,
        name: w.name,
        value,
        screen: w.screen,
        pointer: w.pointer.then_some(true),
        sensitive,
    }
}

/// One node as a line: role, name, value, rectangle, states, id.
fn line(n: &Node, depth: usize) -> String {
    let mut s = format!("{}{} {:?}", "  ".repeat(depth), n.role, n.name);
    if let Some(v) = &n.value {
        s.push_str(&format!(" = {v:?}"));
    }
    if let Some(r) = n.rect {
        s.push_str(&format!(" {},{} {}x{}", r.x, r.y, r.width, r.height));
    }
    if !n.states.is_empty() {
        s.push_str(&format!(" [{}]", n.states.join(" ")));
    }
    s.push_str(&format!(" {}", n.id));
    if n.cut {
        s.push_str(" …");
    }
    s
}

fn print(nodes: &[Node], depth: usize) {
    for n in nodes {
        output::line(&line(n, depth));
        print(&n.children, depth + 1);
    }
}

/// `holm accessibility`: print the tree, or act on a node.
pub async fn run(client: &Client, a: AccessibilityArgs, json: bool) -> anyhow::Result<ExitCode> {
    let b = client.boxed(&a.r#box);
    let act = match a.cmd {
        Some(NodeCmd::Click(w)) => action(NodeVerb::Click, w, None, false),
        Some(NodeCmd::Set { which, value, secret }) => {
            action(NodeVerb::SetValue, which, Some(value), secret.sensitive)
        }
        None => {
            let q = TreeQuery {
                screen: a.screen,
                all: a.all.then_some(true),
                depth: a.depth,
                max_nodes: a.max_nodes,
            };
            let tree = b.accessibility(&q).await?;
            if json {
                output::json(&tree);
            } else {
                print(&tree.nodes, 0);
                if tree.truncated {
                    output::note(&format!(
                        "{} nodes; more were left out (--depth, --max-nodes)",
                        tree.count
                    ));
                }
            }
            return Ok(ExitCode::SUCCESS);
        }
    };
    let acted = b.accessibility_act(&act).await?;
    if json {
        output::json(&acted);
    } else {
        let how = match acted.point {
            Some([x, y]) => format!("by the pointer at {x},{y}"),
            None => {
                format!("by the app ({})", serde_json::to_value(acted.via)?.as_str().unwrap_or(""))
            }
        };
        output::line(&format!("{} {:?} {how}", acted.node.role, acted.node.name));
    }
    Ok(ExitCode::SUCCESS)
}
