//! The windows of the Wayland desktop, through sway's IPC: `GET_TREE`
//! lists them (every view, tiled or floating, with the output it is on),
//! and `RUN_COMMAND` with `[con_id=N]` focuses, moves, resizes or kills one.
//!
//! Sway places only floating windows freely, so a move or a resize makes a
//! tiled window floating first. A window's rectangle is its view's
//! (`rect` plus `window_rect`), relative to its output, that is, in its
//! screen's pixels.

use holm_proto::desk::{Window, WindowAction};
use serde_json::Value;

use super::sway::{self, Ipc};
use crate::display::DisplayError;

const GET_TREE: u32 = 4;

/// Every view in sway's tree, on the outputs that are screens.
pub fn list(ipc: &mut Ipc, screens: u8) -> Result<Vec<Window>, DisplayError> {
    let tree = ipc.call(GET_TREE, "")?;
    let mut out = Vec::new();
    for output in children(&tree) {
        let name = output["name"].as_str().unwrap_or_default();
        let Some(screen) = (0..screens).find(|i| sway::output_name(*i) == name) else { continue };
        let origin = (int(&output["rect"]["x"]), int(&output["rect"]["y"]));
        walk(output, screen, origin, &mut out);
    }
    Ok(out)
}

fn children(node: &Value) -> impl Iterator<Item = &Value> {
    ["nodes", "floating_nodes"]
        .into_iter()
        .flat_map(move |k| node[k].as_array().into_iter().flatten())
}

fn int(v: &Value) -> i32 {
    v.as_i64().and_then(|n| i32::try_from(n).ok()).unwrap_or(0)
}

fn walk(node: &Value, screen: u8, origin: (i32, i32), out: &mut Vec<Window>) {
    // A view has a process; containers and workspaces do not.
    if let (Some(id), Some(pid)) = (node["id"].as_u64(), node["pid"].as_u64()) {
        let (rect, view) = (&node["rect"], &node["window_rect"]);
        let app = node["app_id"]
            .as_str()
            .or_else(|| node["window_properties"]["class"].as_str())
            .unwrap_or_default();
        out.push(Window {
            id,
            screen,
            title: node["name"].as_str().unwrap_or_default().to_owned(),
            app: app.to_owned(),
            pid: u32::try_from(pid).ok(),
            x: int(&rect["x"]) + int(&view["x"]) - origin.0,
            y: int(&rect["y"]) + int(&view["y"]) - origin.1,
            width: u32::try_from(int(&view["width"])).unwrap_or(0),
            height: u32::try_from(int(&view["height"])).unwrap_or(0),
            focused: node["focused"] == true,
        });
    }
    for child in children(node) {
        walk(child, screen, origin, out);
    }
}

/// The sway command that does `action` to `window`. A resize keeps the
/// window's corner where it is listed (sway would move it).
pub fn command(window: &Window, action: &WindowAction) -> String {
    let (id, x, y) = (window.id, window.x, window.y);
    let what = match *action {
        WindowAction::Focus => "focus".to_owned(),
        WindowAction::Move { x, y } => format!("floating enable, move position {x} px {y} px"),
        WindowAction::Resize { width, height } => {
            format!(
                "floating enable, resize set width {width} px height {height} px, move position {x} px {y} px"
            )
        }
        WindowAction::Close => "kill".to_owned(),
    };
    format!("[con_id={id}] {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_are_listed_relative_to_their_output() {
        let tree = serde_json::json!({
            "nodes": [
                {"type": "output", "name": "__i3", "rect": {"x": 0, "y": 0}, "nodes": []},
                {"type": "output", "name": "HEADLESS-2", "rect": {"x": 1280, "y": 0},
                 "nodes": [{"type": "workspace", "nodes": [], "floating_nodes": [
                    {"id": 7, "pid": 42, "app_id": "foot", "name": "t", "focused": true,
                     "rect": {"x": 1380, "y": 50, "width": 300, "height": 200},
                     "window_rect": {"x": 0, "y": 0, "width": 300, "height": 200}}]}]}
            ]
        });
        let mut out = Vec::new();
        for output in children(&tree) {
            if output["name"] == "HEADLESS-2" {
                walk(output, 1, (1280, 0), &mut out);
            }
        }
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].x, out[0].y, out[0].width, out[0].screen), (100, 50, 300, 1));
        assert!(out[0].focused);
        assert_eq!(command(&out[0], &WindowAction::Close), "[con_id=7] kill");
    }
}
