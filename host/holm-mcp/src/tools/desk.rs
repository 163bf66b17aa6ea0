//! The tools for windows and the clipboard: `list_windows`, `window`,
//! `get_clipboard` and `set_clipboard`. Window rectangles are in screen
//! pixels (not screenshot pixels), as the box's windows are placed.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use holm_proto::ApiError;
use holm_proto::desk::{ClipboardSet, WindowAction};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::args;
use crate::errors::from_client;
use crate::progress::Reporter;
use crate::server::HolmMcp;
use crate::tools::{Annotations, Answer, Effect, Tool, json_result, to_value};

/// `list_windows` and `get_clipboard`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DeskArgs {
    /// The box's id.
    pub box_id: String,
}

/// `window`: one action a call; the fields an action does not take are
/// refused, checked by [`args::parse_action`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct WindowArgs {
    /// The box's id.
    pub box_id: String,
    /// The window's id, as list_windows answers it.
    pub window: u64,
    /// What to do: focus, move {x,y}, resize {width,height} or close.
    pub action: WindowVerb,
    /// move: the left edge, in screen pixels.
    #[serde(default)]
    pub x: Option<i32>,
    /// move: the top edge, in screen pixels.
    #[serde(default)]
    pub y: Option<i32>,
    /// resize: the width in pixels.
    #[serde(default)]
    pub width: Option<u32>,
    /// resize: the height in pixels.
    #[serde(default)]
    pub height: Option<u32>,
}

/// What `window` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WindowVerb {
    /// Raise it and give it the keyboard focus.
    Focus,
    /// Move its top-left corner.
    Move,
    /// Give it a size.
    Resize,
    /// Ask it to close.
    Close,
}

impl args::OneAction for WindowVerb {
    fn as_str(self) -> &'static str {
        match self {
            Self::Focus => "focus",
            Self::Move => "move",
            Self::Resize => "resize",
            Self::Close => "close",
        }
    }

    fn fields(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Self::Focus | Self::Close => (&["window"], &[]),
            Self::Move => (&["window", "x", "y"], &[]),
            Self::Resize => (&["window", "width", "height"], &[]),
        }
    }
}

impl WindowArgs {
    fn action(&self) -> WindowAction {
        match self.action {
            WindowVerb::Focus => WindowAction::Focus,
            WindowVerb::Close => WindowAction::Close,
            WindowVerb::Move => {
                WindowAction::Move { x: self.x.unwrap_or_default(), y: self.y.unwrap_or_default() }
            }
            WindowVerb::Resize => WindowAction::Resize {
                width: self.width.unwrap_or_default(),
                height: self.height.unwrap_or_default(),
            },
        }
    }
}

/// `set_clipboard`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SetClipboardArgs {
    /// The box's id.
    pub box_id: String,
    /// Text to put on the clipboard.
    #[serde(default)]
    pub text: Option<String>,
    /// A PNG image, base64, to put on the clipboard.
    #[serde(default)]
    pub png_base64: Option<String>,
    /// Keep the text out of every record (what one logs in with, say):
    /// holmd keeps it nowhere, not even its length (default false).
    #[serde(default)]
    pub sensitive: bool,
}

/// This group's tools, in the order `tools/list` answers them.
pub(crate) const TOOLS: &[&dyn super::DynTool] =
    &[&ListWindows, &Window, &GetClipboard, &SetClipboard];

/// `list_windows`.
#[derive(Debug)]
pub(crate) struct ListWindows;

impl Tool for ListWindows {
    const NAME: &'static str = "list_windows";
    const DESCRIPTION: &'static str = "List the windows of a box's screens: id, screen, title, \
        app, pid, rectangle (x, y, width, height in screen pixels, not screenshot pixels) and \
        focused.";
    const ANNOTATIONS: Annotations =
        Annotations { title: "List windows", effect: Effect::ReadOnly, open_world: false };
    type Args = DeskArgs;

    async fn call(mcp: &HolmMcp, a: DeskArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let list = mcp.client.boxed(&a.box_id).windows().await.map_err(from_client)?;
        let summary = match list.iter().find(|w| w.focused) {
            Some(w) => format!("{} window(s); {} ({}) has the focus", list.len(), w.id, w.title),
            None => format!("{} window(s); none has the focus", list.len()),
        };
        Ok(json_result(Some(summary), json!({ "windows": list })))
    }
}

/// `window`.
#[derive(Debug)]
pub(crate) struct Window;

impl Tool for Window {
    const NAME: &'static str = "window";
    const DESCRIPTION: &'static str = "Act on one window, one action a call (field action): focus \
        (raise it and give it the keyboard); move {x,y} (its top-left corner, in screen pixels); \
        resize {width,height} (pixels); close (as its close button does). Answers applied (the \
        change showed within a few seconds) and the window as it is after (null once closed). An \
        unknown window id is not_found.";
    const ANNOTATIONS: Annotations = Annotations {
        title: "Act on a window",
        effect: Effect::Destructive { idempotent: false },
        open_world: false,
    };
    type Args = WindowArgs;

    fn parse(arguments: Option<JsonObject>) -> Result<WindowArgs, ApiError> {
        args::parse_action::<WindowArgs, WindowVerb>(arguments)
    }

    async fn call(mcp: &HolmMcp, a: WindowArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let acted =
            mcp.client.boxed(&a.box_id).window(a.window, a.action()).await.map_err(from_client)?;
        let summary = match (&acted.window, acted.applied) {
            (None, _) => "the window is closed".to_owned(),
            (Some(_), true) => "done".to_owned(),
            (Some(_), false) => "asked, but the change did not show yet".to_owned(),
        };
        Ok(json_result(Some(summary), to_value(&acted)))
    }
}

/// `get_clipboard`.
#[derive(Debug)]
pub(crate) struct GetClipboard;

impl Tool for GetClipboard {
    const NAME: &'static str = "get_clipboard";
    const DESCRIPTION: &'static str = "Read a box's clipboard: its types, its text, and its image \
        (answered as an image when it holds a PNG).";
    const ANNOTATIONS: Annotations =
        Annotations { title: "Read the clipboard", effect: Effect::ReadOnly, open_world: false };
    type Args = DeskArgs;

    async fn call(mcp: &HolmMcp, a: DeskArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let clip = mcp.client.boxed(&a.box_id).clipboard().await.map_err(from_client)?;
        let mut content = Vec::new();
        let described = json!({ "types": clip.types, "text": clip.text, "has_image": clip.png_base64.is_some() });
        content.push(ContentBlock::text(described.to_string()));
        if let Some(png) = &clip.png_base64 {
            content.push(ContentBlock::image(png.clone(), holm_proto::desk::PNG_MIME));
        }
        let mut result = CallToolResult::success(content);
        result.structured_content = Some(described);
        Ok(result)
    }
}

/// `set_clipboard`.
#[derive(Debug)]
pub(crate) struct SetClipboard;

impl Tool for SetClipboard {
    const NAME: &'static str = "set_clipboard";
    const DESCRIPTION: &'static str = "Put text, a PNG image (png_base64), or both on a box's \
        clipboard, for apps to paste (ctrl+v). An image that is not a PNG is refused and changes \
        nothing.";
    const ANNOTATIONS: Annotations = Annotations {
        title: "Set the clipboard",
        effect: Effect::Destructive { idempotent: true },
        open_world: false,
    };
    type Args = SetClipboardArgs;

    async fn call(mcp: &HolmMcp, a: SetClipboardArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let set = ClipboardSet { text: a.text, png_base64: a.png_base64, sensitive: a.sensitive };
        let clip = mcp.client.boxed(&a.box_id).set_clipboard(&set).await.map_err(from_client)?;
        let bytes = clip.png_base64.as_deref().and_then(|b| BASE64.decode(b).ok()).map(|b| b.len());
        Ok(json_result(
            Some("the clipboard holds it until an app in the box copies something else".into()),
            json!({ "types": clip.types, "text_chars": clip.text.map(|t| t.chars().count()), "image_bytes": bytes }),
        ))
    }
}
