//! Reading the tree: breadth first, each level's nodes asked concurrently,
//! keeping only the nodes that show (and never asking for the children of
//! one that does not), within a depth and a count.

use futures_util::StreamExt as _;
use holm_proto::accessibility::{MAX_VALUE_CHARS, Node, Rect};
use holm_proto::desk::Window;
use zbus::zvariant::OwnedObjectPath;

use super::{A11yError, NodeRef, call, call_error, pid_of, property};

/// AT-SPI's state names, by bit (`AtspiStateType`).
const STATES: [&str; 44] = [
    "invalid",
    "active",
    "armed",
    "busy",
    "checked",
    "collapsed",
    "defunct",
    "editable",
    "enabled",
    "expandable",
    "expanded",
    "focusable",
    "focused",
    "has_tooltip",
    "horizontal",
    "iconified",
    "modal",
    "multi_line",
    "multiselectable",
    "opaque",
    "pressed",
    "resizable",
    "selectable",
    "selected",
    "sensitive",
    "showing",
    "single_line",
    "stale",
    "transient",
    "vertical",
    "visible",
    "manages_descendants",
    "indeterminate",
    "required",
    "truncated",
    "animated",
    "invalid_entry",
    "supports_autocompletion",
    "selectable_text",
    "is_default",
    "visited",
    "checkable",
    "has_popup",
    "read_only",
];

const ACTIVE: u32 = 1;
const EDITABLE: u32 = 7;
const SHOWING: u32 = 25;
const VISIBLE: u32 = 30;

/// How many nodes are asked about at once.
const CONCURRENT: usize = 32;

/// What one node says of itself.
#[derive(Debug, Clone)]
pub struct Info {
    /// Where it is on the bus.
    pub at: NodeRef,
    /// The node as the API gives it (no children yet).
    pub node: Node,
    /// Its AT-SPI interfaces, without the `org.a11y.atspi.` prefix.
    pub interfaces: Vec<String>,
    /// Its children on the bus.
    pub children: Vec<NodeRef>,
    states: u64,
}

impl Info {
    /// Whether state `bit` holds.
    pub fn has(&self, bit: u32) -> bool {
        self.states & (1 << bit) != 0
    }

    /// Whether it shows on the screen.
    pub fn showing(&self) -> bool {
        self.has(SHOWING)
    }

    /// Whether it offers interface `name` (such as `Action`).
    pub fn offers(&self, name: &str) -> bool {
        self.interfaces.iter().any(|i| i == name)
    }
}

fn state_names(bits: u64) -> Vec<String> {
    (0..64u32)
        .filter(|b| bits & (1 << b) != 0 && *b != SHOWING && *b != VISIBLE)
        .map(|b| STATES.get(b as usize).map_or_else(|| format!("state_{b}"), |s| (*s).to_owned()))
        .collect()
}

/// Asks `at` what it is: role, name, states, interfaces and children, then,
/// when it shows (or `always`), its rectangle, actions and value.
pub async fn info(conn: &zbus::Connection, at: &NodeRef, always: bool) -> Result<Info, A11yError> {
    const ACC: &str = "org.a11y.atspi.Accessible";
    let err = |e: zbus::Error| call_error(at, &e);
    let (role, name, states, interfaces, children) = tokio::join!(
        call::<_, String>(conn, at, ACC, "GetRoleName", &()),
        property(conn, at, ACC, "Name"),
        call::<_, Vec<u32>>(conn, at, ACC, "GetState", &()),
        call::<_, Vec<String>>(conn, at, ACC, "GetInterfaces", &()),
        call::<_, Vec<(String, OwnedObjectPath)>>(conn, at, ACC, "GetChildren", &()),
    );
    let words = states.map_err(err)?;
    let states = words
        .iter()
        .take(2)
        .enumerate()
        .fold(0u64, |acc, (i, w)| acc | (u64::from(*w) << (32 * i)));
    let interfaces: Vec<String> = interfaces
        .map_err(err)?
        .into_iter()
        .map(|i| i.trim_start_matches("org.a11y.atspi.").to_owned())
        .collect();
    let children =
        children.map_err(err)?.into_iter().map(|(dest, path)| NodeRef { dest, path }).collect();
    let node = Node {
        id: at.id(),
        role: role.map_err(err)?,
        name: String::try_from(name.map_err(err)?).unwrap_or_default(),
        value: None,
        states: state_names(states),
        rect: None,
        actions: Vec::new(),
        children: Vec::new(),
        cut: false,
    };
    let mut info = Info { at: at.clone(), node, interfaces, children, states };
    if always || info.showing() {
        details(conn, &mut info).await;
    }
    Ok(info)
}

/// Fills in the rectangle, the actions and the value of a node that shows.
/// What the app will not say is left out.
async fn details(conn: &zbus::Connection, info: &mut Info) {
    let at = &info.at;
    let extents = async {
        if !info.offers("Component") {
            return None;
        }
        // 0: ATSPI_COORD_TYPE_SCREEN.
        let r = call::<_, (i32, i32, i32, i32)>(
            conn,
            at,
            "org.a11y.atspi.Component",
            "GetExtents",
            &(0u32,),
        );
        let (x, y, w, h) = r.await.ok()?;
        (w >= 0 && h >= 0).then(|| Rect { x, y, width: w.unsigned_abs(), height: h.unsigned_abs() })
    };
    let actions = async {
        if !info.offers("Action") {
            return Vec::new();
        }
        let r = call::<_, Vec<(String, String, String)>>(
            conn,
            at,
            "org.a11y.atspi.Action",
            "GetActions",
            &(),
        );
        r.await.map(|a| a.into_iter().map(|(name, _, _)| name).collect()).unwrap_or_default()
    };
    let value = async {
        if info.offers("Value") {
            let v = property(conn, at, "org.a11y.atspi.Value", "CurrentValue").await.ok()?;
            return f64::try_from(v).ok().map(|v| v.to_string());
        }
        if info.offers("Text") && info.has(EDITABLE) {
            let end = i32::try_from(MAX_VALUE_CHARS).unwrap_or(i32::MAX);
            let span = (0i32, end);
            return call::<_, String>(conn, at, "org.a11y.atspi.Text", "GetText", &span).await.ok();
        }
        None
    };
    let (rect, actions, value) = tokio::join!(extents, actions, value);
    info.node.rect = rect;
    info.node.actions = actions;
    info.node.value = value;
}

/// The bounds of a walk.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Levels below each root.
    pub depth: u32,
    /// Nodes in all.
    pub nodes: u32,
}

/// A tree read: its roots and whether something was left out.
#[derive(Debug)]
pub struct Walked {
    /// The roots, with their children.
    pub roots: Vec<Node>,
    /// How many nodes in all.
    pub count: u32,
    /// Whether nodes were left out.
    pub truncated: bool,
}

struct Slot {
    node: Node,
    children: Vec<usize>,
}

/// Reads the trees under `roots` (already asked), breadth first.
pub async fn walk(conn: &zbus::Connection, roots: Vec<Info>, bounds: Bounds) -> Walked {
    let mut slots: Vec<Slot> = Vec::new();
    let mut truncated = false;
    // (slot of the parent, what to ask next) for the next level.
    let mut level: Vec<(usize, NodeRef)> = Vec::new();
    let mut top = Vec::new();
    for info in roots {
        if slots.len() >= bounds.nodes as usize {
            truncated = true;
            break;
        }
        top.push(slots.len());
        level.extend(children_of(&mut slots, info, 0, bounds, &mut truncated));
    }
    let mut depth = 1;
    while !level.is_empty() {
        let asked: Vec<(usize, Result<Info, A11yError>)> = futures_util::stream::iter(level)
            .map(|(parent, at)| async move { (parent, info(conn, &at, false).await) })
            .buffered(CONCURRENT)
            .collect()
            .await;
        level = Vec::new();
        for (parent, got) in asked {
            // A node that went away meanwhile, or that does not show, is
            // left out with its children.
            let Ok(info) = got else { continue };
            if !info.showing() {
                continue;
            }
            if slots.len() >= bounds.nodes as usize {
                truncated = true;
                slots[parent].node.cut = true;
                continue;
            }
            let me = slots.len();
            slots[parent].children.push(me);
            level.extend(children_of(&mut slots, info, depth, bounds, &mut truncated));
        }
        depth += 1;
    }
    let count = u32::try_from(slots.len()).unwrap_or(u32::MAX);
    let roots = top.into_iter().map(|i| assemble(&mut slots, i)).collect();
    Walked { roots, count, truncated }
}

/// Puts `info` in a new slot at `depth`; answers its children to ask, or
/// none (marking it cut) when they would be too deep.
fn children_of(
    slots: &mut Vec<Slot>,
    info: Info,
    depth: u32,
    bounds: Bounds,
    truncated: &mut bool,
) -> Vec<(usize, NodeRef)> {
    let me = slots.len();
    let mut node = info.node;
    let next: Vec<(usize, NodeRef)> = if depth < bounds.depth {
        info.children.into_iter().map(|c| (me, c)).collect()
    } else {
        if !info.children.is_empty() {
            node.cut = true;
            *truncated = true;
        }
        Vec::new()
    };
    slots.push(Slot { node, children: Vec::new() });
    next
}

fn assemble(slots: &mut [Slot], i: usize) -> Node {
    let children = std::mem::take(&mut slots[i].children);
    let mut node = std::mem::replace(&mut slots[i].node, empty_node());
    node.children = children.into_iter().map(|c| assemble(slots, c)).collect();
    node
}

fn empty_node() -> Node {
    Node {
        id: String::new(),
        role: String::new(),
        name: String::new(),
        value: None,
        states: Vec::new(),
        rect: None,
        actions: Vec::new(),
        children: Vec::new(),
        cut: false,
    }
}

/// The apps on the bus with their processes.
pub async fn apps(conn: &zbus::Connection) -> Result<Vec<(NodeRef, Option<u32>)>, A11yError> {
    let root = NodeRef::root();
    let children: Vec<(String, OwnedObjectPath)> =
        call(conn, &root, "org.a11y.atspi.Accessible", "GetChildren", &()).await.map_err(|e| {
            A11yError::Gone(format!("the accessibility registry is not answering: {e}"))
        })?;
    let mut out = Vec::new();
    for (dest, path) in children {
        let pid = pid_of(conn, &dest).await;
        out.push((NodeRef { dest, path }, pid));
    }
    Ok(out)
}

/// The windows (top-level nodes) of the apps whose process has a window
/// on `screen`; with `focused`, only the window that has the focus (by its
/// app's process, then its `active` state, its title, or the first that
/// shows).
pub async fn roots(
    conn: &zbus::Connection,
    windows: &[Window],
    screen: u8,
    focused: bool,
) -> Result<(Vec<Info>, Option<u64>), A11yError> {
    let on_screen: Vec<&Window> = windows.iter().filter(|w| w.screen == screen).collect();
    let focus = on_screen.iter().find(|w| w.focused).copied();
    if focused && focus.is_none() {
        return Ok((Vec::new(), None));
    }
    let mut tops = Vec::new();
    for (app, pid) in apps(conn).await? {
        let wanted = match focus.filter(|_| focused) {
            Some(w) => w.pid.is_none() || w.pid == pid,
            None => pid.is_some() && on_screen.iter().any(|w| w.pid == pid),
        };
        if !wanted {
            continue;
        }
        let Ok(app) = info(conn, &app, true).await else { continue };
        for child in app.children {
            if let Ok(top) = info(conn, &child, false).await {
                tops.push(top);
            }
        }
    }
    let Some(w) = focus.filter(|_| focused) else {
        return Ok((tops.into_iter().filter(Info::showing).collect(), None));
    };
    let pick = tops
        .iter()
        .position(|t| t.has(ACTIVE) && t.showing())
        .or_else(|| tops.iter().position(|t| t.node.name == w.title))
        .or_else(|| tops.iter().position(Info::showing));
    let chosen = pick.map(|i| tops.swap_remove(i));
    Ok((chosen.into_iter().collect(), Some(w.id)))
}

/// The first node in the tree's order (depth first) that `is` picks.
pub fn find<'a>(nodes: &'a [Node], is: &dyn Fn(&Node) -> bool) -> Option<&'a Node> {
    for n in nodes {
        if is(n) {
            return Some(n);
        }
        if let Some(found) = find(&n.children, is) {
            return Some(found);
        }
    }
    None
}
