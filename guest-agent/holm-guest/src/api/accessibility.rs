//! The accessibility tree and actions on its nodes.
//!
//! - `GET /v1/accessibility`: the tree of the focused window of a screen,
//!   or of the whole screen, read from AT-SPI ([`crate::a11y`]).
//! - `POST /v1/accessibility/act`: click a node or set its value, found by
//!   id or by role and name: the app's own action first, else (or with
//!   `pointer`) the pointer and keyboard at its rectangle.
//!
//! Bad bounds, an unknown screen or an unknown node are refused in the one
//! error shape before anything is done. On Wayland both answer
//! `unsupported`: apps there do not know where their windows are, so no
//! rectangle would be in screen coordinates.

use axum::Json;
use axum::extract::State;
use holm_proto::accessibility::{
    ActedVia, DEFAULT_DEPTH, DEFAULT_NODES, MAX_DEPTH, MAX_NODES, Node, NodeActed, NodeAction,
    NodeVerb, Tree, TreeQuery,
};
use holm_proto::contract;
use holm_proto::guest::{InputRequest, Profile};
use holm_proto::{ApiError, ErrorCode, Issue};

use super::AppState;
use super::error::Error;
use super::extract::{StrictJson, StrictQuery};
use super::table::Routes;
use crate::a11y::tree::{self, Bounds, Info};
use crate::a11y::{A11yError, NodeRef, act};
use crate::display::DisplayError;

pub(super) fn routes() -> Routes {
    Routes::default()
        .on(&contract::ACCESSIBILITY.route, get_tree)
        .on(&contract::ACCESSIBILITY_ACT.route, act_on)
}

fn invalid(path: &str, problem: impl Into<String>) -> Error {
    Error(ApiError::invalid_fields(vec![Issue { path: path.to_owned(), problem: problem.into() }]))
}

fn a11y_error(e: A11yError) -> Error {
    match e {
        A11yError::NotFound(m) => Error(
            ApiError::new(ErrorCode::NotFound, m)
                .with_hint("GET /v1/accessibility lists the nodes and their ids"),
        ),
        A11yError::Gone(m) => Error(ApiError::new(ErrorCode::NotReady, m)),
        A11yError::Failed(m) => Error::internal(m),
    }
}

fn bound(name: &str, asked: Option<u32>, default: u32, max: u32) -> Result<u32, Error> {
    match asked {
        None => Ok(default),
        Some(v) if (1..=max).contains(&v) => Ok(v),
        Some(v) => Err(invalid(name, format!("must be 1 to {max}, not {v}"))),
    }
}

/// Refuses on Wayland, where no app knows where its windows are.
fn x11_only(state: &AppState) -> Result<(), Error> {
    if state.config.profile == Profile::X11 {
        return Ok(());
    }
    Err(Error(
        ApiError::new(
            ErrorCode::Unsupported,
            "the accessibility tree is only read on the x11 profile: Wayland apps do not know \
             where their windows are, so no node's rectangle would be in screen coordinates",
        )
        .with_hint("create the box with the x11 profile"),
    ))
}

async fn screen(state: &AppState, asked: Option<u8>) -> Result<u8, Error> {
    super::screens::ready(state, &asked.unwrap_or(0).to_string()).await
}

async fn windows(state: &AppState) -> Result<Vec<holm_proto::desk::Window>, Error> {
    let desktop = std::sync::Arc::clone(&state.desktop);
    let server = desktop.server_name();
    tokio::task::spawn_blocking(move || desktop.windows()).await.map_err(Error::internal)?.map_err(
        |e| match e {
            DisplayError::Gone(_) => {
                Error(ApiError::new(ErrorCode::NotReady, format!("the {server} is not answering")))
            }
            DisplayError::Unsupported(m) => Error(ApiError::new(ErrorCode::Unsupported, m)),
            DisplayError::Failed(m) => Error::internal(m),
        },
    )
}

/// Reads the tree of `screen` (the focused window, or all), resetting the
/// connection when the bus broke.
async fn read(state: &AppState, screen: u8, all: bool, bounds: Bounds) -> Result<Tree, Error> {
    let windows = windows(state).await?;
    let conn = state.a11y.conn().await.map_err(a11y_error)?;
    let roots = match tree::roots(&conn, &windows, screen, !all).await {
        Ok(r) => r,
        Err(e) => {
            state.a11y.reset().await;
            return Err(a11y_error(e));
        }
    };
    let (roots, window) = roots;
    let walked = tree::walk(&conn, roots, bounds).await;
    Ok(Tree {
        screen,
        window,
        nodes: walked.roots,
        count: walked.count,
        truncated: walked.truncated,
    })
}

async fn get_tree(
    State(state): State<AppState>,
    StrictQuery(q): StrictQuery<TreeQuery>,
) -> Result<Json<Tree>, Error> {
    let depth = bound("depth", q.depth, DEFAULT_DEPTH, MAX_DEPTH)?;
    let nodes = bound("max_nodes", q.max_nodes, DEFAULT_NODES, MAX_NODES)?;
    let screen = screen(&state, q.screen).await?;
    x11_only(&state)?;
    let all = q.all.unwrap_or(false);
    Ok(Json(read(&state, screen, all, Bounds { depth, nodes }).await?))
}

/// Checks an action's fields before anything is looked up.
fn check(a: &NodeAction) -> Result<(), Error> {
    if a.node.is_none() && a.role.is_none() && a.name.is_none() {
        return Err(invalid("node", "give the node's id, or its role and name"));
    }
    match (a.action, &a.value) {
        (NodeVerb::SetValue, None) => Err(invalid("value", "set_value needs a value")),
        (NodeVerb::Click, Some(_)) => Err(invalid("value", "click takes no value")),
        _ => Ok(()),
    }
}

/// The node the action names: by id (which must still have the role and
/// name given), or the first on the screen with the role and name.
async fn resolve(state: &AppState, a: &NodeAction, screen: u8) -> Result<Info, Error> {
    let conn = state.a11y.conn().await.map_err(a11y_error)?;
    let matches = |n: &Node| {
        a.role.as_ref().is_none_or(|r| *r == n.role) && a.name.as_ref().is_none_or(|m| *m == n.name)
    };
    let unknown = |what: String| a11y_error(A11yError::NotFound(what));
    let at = match &a.node {
        Some(id) => {
            NodeRef::parse(id).ok_or_else(|| unknown(format!("there is no node {id:?}")))?
        }
        None => {
            let bounds = Bounds { depth: MAX_DEPTH, nodes: MAX_NODES };
            let tree = read(state, screen, true, bounds).await?;
            let found = tree::find(&tree.nodes, &matches).ok_or_else(|| {
                unknown(format!(
                    "no node on screen {screen} has the role {:?} and the name {:?}",
                    a.role.as_deref().unwrap_or("(any)"),
                    a.name.as_deref().unwrap_or("(any)")
                ))
            })?;
            NodeRef::parse(&found.id).ok_or_else(|| unknown(found.id.clone()))?
        }
    };
    let info = tree::info(&conn, &at, true).await.map_err(a11y_error)?;
    if !matches(&info.node) {
        return Err(unknown(format!(
            "node {:?} is a {:?} named {:?}, not the one asked",
            info.node.id, info.node.role, info.node.name
        )));
    }
    Ok(info)
}

async fn act_on(
    State(state): State<AppState>,
    StrictJson(a): StrictJson<NodeAction>,
) -> Result<Json<NodeActed>, Error> {
    check(&a)?;
    let screen = screen(&state, a.screen).await?;
    x11_only(&state)?;
    let info = resolve(&state, &a, screen).await?;
    let conn = state.a11y.conn().await.map_err(a11y_error)?;
    let pointer = a.pointer.unwrap_or(false);
    let via = match (a.action, a.value.as_deref()) {
        (NodeVerb::Click, _) if !pointer && !info.node.actions.is_empty() => {
            act::first_action(&conn, &info).await.map_err(a11y_error)?.then_some(ActedVia::Action)
        }
        (NodeVerb::SetValue, Some(v)) if !pointer && info.offers("EditableText") => {
            act::set_text(&conn, &info, v).await.map_err(a11y_error)?.then_some(ActedVia::Text)
        }
        (NodeVerb::SetValue, Some(v)) if !pointer && info.offers("Value") => {
            let n = v.trim().parse::<f64>().map_err(|_| invalid("value", "must be a number"))?;
            act::set_number(&conn, &info, n).await.map_err(a11y_error)?;
            Some(ActedVia::Value)
        }
        _ => None,
    };
    if let Some(via) = via {
        return Ok(Json(NodeActed { node: info.node, via, point: None }));
    }
    let point = by_pointer(&state, screen, &info.node, a.value.as_deref()).await?;
    Ok(Json(NodeActed { node: info.node, via: ActedVia::Pointer, point: Some(point) }))
}

/// Clicks the centre of the node's rectangle, and for a value selects all
/// and types it, through the guest's input.
async fn by_pointer(
    state: &AppState,
    screen: u8,
    node: &Node,
    value: Option<&str>,
) -> Result<[i32; 2], Error> {
    let Some(r) = node.rect.filter(|r| r.width > 0 && r.height > 0) else {
        return Err(Error(ApiError::new(
            ErrorCode::Unsupported,
            format!("node {:?} has no action and no rectangle on the screen", node.id),
        )));
    };
    let (x, y) = (r.x + (r.width / 2) as i32, r.y + (r.height / 2) as i32);
    let mut actions = vec![serde_json::json!({"type": "click", "x": x, "y": y})];
    if let Some(v) = value {
        actions.push(serde_json::json!({"type": "key", "key": "ctrl+a"}));
        actions.push(serde_json::json!({"type": "type", "text": v}));
    }
    let req: InputRequest = serde_json::from_value(serde_json::json!({ "actions": actions }))
        .map_err(Error::internal)?;
    let desktop = std::sync::Arc::clone(&state.desktop);
    tokio::task::spawn_blocking(move || {
        let _turn = desktop.input_turn(screen);
        let (w, h) = desktop.size(screen).map_err(|e| Error::internal(e.to_string()))?;
        let checked = crate::input::check(&req, w, h).map_err(|issues| {
            Error(ApiError::new(
                ErrorCode::Unsupported,
                format!("the node's centre cannot be clicked: {}", issues[0].problem),
            ))
        })?;
        desktop.run(screen, &checked.ops).map_err(|s| Error::internal(s.error.to_string()))
    })
    .await
    .map_err(Error::internal)??;
    Ok([x, y])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_are_checked_before_anything() {
        let base = NodeAction {
            action: NodeVerb::Click,
            node: None,
            role: None,
            name: None,
            value: None,
            screen: None,
            pointer: None,
            sensitive: false,
        };
        assert!(check(&base).is_err());
        let named = NodeAction { name: Some("OK".into()), ..base.clone() };
        assert!(check(&named).is_ok());
        let valued = NodeAction { value: Some("x".into()), ..named.clone() };
        assert!(check(&valued).is_err());
        let set = NodeAction { action: NodeVerb::SetValue, ..named };
        assert!(check(&set).is_err());
        assert!(bound("depth", Some(0), 1, 5).is_err());
        assert_eq!(bound("depth", None, 3, 5).unwrap(), 3);
    }
}
