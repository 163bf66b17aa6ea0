//! The live screen for MCP Apps hosts (SEP-1865, `io.modelcontextprotocol/ui`):
//! a `ui://` resource whose view shows a box's screen live through holmd.
//!
//! `screenshot` and `desktop` name it in their `_meta.ui.resourceUri`, so a
//! host with the extension shows the view beside their results. The view
//! hears the tool's input (the box and screen), asks `view_screen` (through
//! the host) for a watch-only URL, and draws the stream with the live
//! screen's module (noVNC), which holmd serves from its own binary at the
//! viewer origin written into the view: nothing the view runs comes from a
//! box. Hosts without the extension get the tools' usual results.

use rmcp::model::{MetaObject, Resource, ResourceContents};
use serde_json::{Value, json};

/// The resource's URI.
pub const LIVE_URI: &str = "ui://holm/live-screen";
/// MCP Apps' HTML type.
pub const MIME: &str = "text/html;profile=mcp-app";

const HTML: &str = include_str!("live.html");
/// Where the view's text names holmd's address.
const ORIGIN_SLOT: &str = "\"@holm:viewer-origin@\"";

/// The view, with holmd's address as a script string (escaped so that no
/// address can end the script).
fn html(origin: &str) -> String {
    let quoted = serde_json::to_string(origin.trim_end_matches('/'))
        .unwrap_or_else(|_| "\"\"".into())
        .replace('<', "\\u003c");
    HTML.replacen(ORIGIN_SLOT, &quoted, 1)
}

fn meta(value: Value) -> MetaObject {
    match value {
        Value::Object(map) => MetaObject(map),
        _ => MetaObject::default(),
    }
}

/// The `_meta` of the resource: the view reaches `origin` (holmd, as
/// viewers are reached) for scripts and for the stream's WebSocket.
fn ui_meta(origin: &str) -> MetaObject {
    let origin = origin.trim_end_matches('/');
    let ws = origin.replacen("https://", "wss://", 1).replacen("http://", "ws://", 1);
    meta(json!({
        "ui": {
            "csp": { "connectDomains": [origin, ws], "resourceDomains": [origin] },
            "prefersBorder": true
        }
    }))
}

/// The `_meta` a tool carries to point to the view.
pub fn tool_meta() -> MetaObject {
    meta(json!({ "ui": { "resourceUri": LIVE_URI } }))
}

/// The resource as `resources/list` answers it.
pub fn resource(origin: &str) -> Resource {
    Resource::new(LIVE_URI, "live-screen")
        .with_title("A box's screen, live")
        .with_description(
            "The screen of the box a screenshot or desktop call used, live through holmd (watch only).",
        )
        .with_mime_type(MIME)
        .with_meta(ui_meta(origin))
}

/// The resource's contents, for `resources/read`.
pub fn contents(origin: &str) -> ResourceContents {
    ResourceContents::TextResourceContents {
        uri: LIVE_URI.into(),
        mime_type: Some(MIME.into()),
        text: html(origin),
        meta: Some(ui_meta(origin)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_imports_its_module_from_holmd_only() {
        let text = html("http://holmd.example:8080/");
        assert!(text.contains("const HOLMD = \"http://holmd.example:8080\";"), "{text}");
        assert!(!text.contains("@holm:viewer-origin@"));
        assert!(text.contains("import(HOLMD + '/v1/boxes/'"));
        let hostile = html("http://x/</script><script>alert(1)</script>");
        assert!(!hostile.contains("</script><script>"), "{hostile}");
    }
}
