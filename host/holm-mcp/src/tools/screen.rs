//! The tools on a box's screen: `screenshot`, `desktop` (mouse and
//! keyboard, then a screenshot) and `cursor`. Points are screenshot pixels
//! unless a call says otherwise; the mapping is in [`crate::scale`].

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use holm_client::{BoxClient, Screenshot as Shot};
use holm_proto::ApiError;
use holm_proto::guest::{
    Action, CoordinateSpace, ImageFormat, InputRequest, Screen, ScreenshotOptions, Settle,
};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::args::{self, invalid};
use crate::errors::from_client;
use crate::progress::Reporter;
use crate::scale::{scale_for, to_image};
use crate::server::HolmMcp;
use crate::tools::{Annotations, Answer, Effect, Tool, json_result, schema};

/// What `screenshot` and `desktop` say of the screenshots' size.
macro_rules! screen_coordinates {
    () => {
        "Every screenshot of a screen has the same size: the screen downscaled, when it is \
         larger than 1568 pixels on its long edge or 1.15 megapixels, by a scale that depends \
         only on the screen's size. Points read off a screenshot are what desktop takes."
    };
}

/// An image format for screenshots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShotFormat {
    /// Lossless; sharp text.
    #[default]
    Png,
    /// Lossy and smaller.
    Jpeg,
}

/// `screenshot`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ScreenshotArgs {
    /// The box's id.
    pub box_id: String,
    /// The screen, from 0 (default 0).
    #[serde(default)]
    pub screen: u8,
    /// "png" (default) or "jpeg".
    #[serde(default)]
    pub format: ShotFormat,
    /// Draw the mouse pointer into the image (default false).
    #[serde(default)]
    pub cursor: bool,
}

/// This group's tools, in the order `tools/list` answers them.
pub(crate) const TOOLS: &[&dyn super::DynTool] = &[&Screenshot, &Desktop, &Cursor];

/// `screenshot`.
#[derive(Debug)]
pub(crate) struct Screenshot;

impl Tool for Screenshot {
    const NAME: &'static str = "screenshot";
    const DESCRIPTION: &'static str = concat!(
        "Take a screenshot of one screen of a box. Answers the image and a line with its \
         size, the screen's size, the scale (image pixels per screen pixel) and the \
         pointer's position in image pixels. ",
        screen_coordinates!()
    );
    const ANNOTATIONS: Annotations =
        Annotations { title: "Screenshot", effect: Effect::ReadOnly, open_world: false };
    type Args = ScreenshotArgs;

    fn meta() -> Option<MetaObject> {
        // MCP Apps hosts show the box's screen live beside the result.
        Some(crate::live::tool_meta())
    }

    async fn call(mcp: &HolmMcp, a: ScreenshotArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let b = mcp.client.boxed(&a.box_id);
        let (screen, scale) = screen(&b, a.screen).await?;
        let options = shot_options(a.format, scale, a.cursor);
        let shot = b.screenshot(a.screen, &options).await.map_err(from_client)?;
        Ok(image_result(&shot, &screen, scale, None))
    }
}

/// Which coordinates a `desktop` call gives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Coordinates {
    /// Pixels of this screen's screenshots (what `screenshot` shows).
    #[default]
    Screenshot,
    /// Pixels of the screen itself.
    Screen,
}

/// `desktop`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DesktopArgs {
    /// The box's id.
    pub box_id: String,
    /// The screen, from 0 (default 0).
    #[serde(default)]
    pub screen: u8,
    /// The actions, run in order; all are checked before any runs.
    pub actions: Vec<Action>,
    /// What x and y mean: "screenshot" pixels (default) or "screen" pixels.
    #[serde(default)]
    pub coordinates: Coordinates,
    /// Answer with a screenshot taken after the actions (default true).
    #[serde(default = "yes")]
    pub screenshot: bool,
    /// Before that screenshot, wait until the screen stops changing, at most
    /// 2 seconds (default true).
    #[serde(default = "yes")]
    pub settle: bool,
    /// Keep the typed text out of every record (what one logs in with,
    /// say): holmd keeps it nowhere, not even its length (default false).
    #[serde(default)]
    pub sensitive: bool,
}

fn yes() -> bool {
    true
}

/// `desktop`.
#[derive(Debug)]
pub(crate) struct Desktop;

impl Tool for Desktop {
    const NAME: &'static str = "desktop";
    const DESCRIPTION: &'static str = concat!(
        "Use a box's screen like a person: run mouse and keyboard actions in order, then \
         (by default) wait for the screen to settle and answer a screenshot. x and y are \
         screenshot pixels (as screenshot shows them) unless coordinates is \"screen\"; \
         when x and y are left out, an action happens where the pointer is. Actions \
         (field `type`): move {x,y}; click {x,y,button,count,modifiers} (count 2 is a \
         double click); mouse_down, mouse_up {x,y,button}; drag {path:[{x,y},...]}; \
         scroll {x,y,dy,dx} (dy > 0 scrolls down, in wheel clicks); type {text} (any \
         Unicode, whatever the keyboard layout; \\n is Enter); key {key,repeat} (a \
         key or a chord joined with +, such as \"ctrl+l\", \"enter\", \"alt+f4\"; \
         names: ctrl, shift, alt, super, enter, escape, backspace, tab, space, delete, \
         home, end, page_up, page_down, up, down, left, right, f1-f12, or one \
         character); key_down, key_up {key}; hold {key,duration_ms}; wait {ms}. \
         Every action is checked first: one bad action refuses the call and none runs. ",
        screen_coordinates!()
    );
    const ANNOTATIONS: Annotations = Annotations {
        title: "Use the desktop",
        effect: Effect::Destructive { idempotent: false },
        open_world: true,
    };
    type Args = DesktopArgs;

    fn input_schema() -> Arc<JsonObject> {
        desktop_schema()
    }

    fn meta() -> Option<MetaObject> {
        Some(crate::live::tool_meta())
    }

    async fn call(mcp: &HolmMcp, a: DesktopArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        if a.actions.is_empty() {
            return Err(invalid("actions", "give at least one action".to_owned()));
        }
        let b = mcp.client.boxed(&a.box_id);
        let (screen, scale) = screen(&b, a.screen).await?;
        let mut request =
            InputRequest { actions: a.actions, sensitive: a.sensitive, ..InputRequest::default() };
        let count = request.actions.len();
        // The guest maps every point through this space: screen = point / scale.
        if a.coordinates == Coordinates::Screenshot && scale < 1.0 {
            request.coordinate_space = Some(CoordinateSpace { scale, x: 0, y: 0 });
        }
        if a.screenshot {
            if a.settle {
                request.settle = Some(Settle::default());
            }
            request.screenshot = Some(shot_options(ShotFormat::Png, scale, false));
            let shot = b.act_and_see(a.screen, &request).await.map_err(from_client)?;
            let done = match shot.settled {
                Some(true) => format!("ran {count} action(s); the screen settled"),
                Some(false) => {
                    format!("ran {count} action(s); the screen was still changing after 2 s")
                }
                None => format!("ran {count} action(s)"),
            };
            return Ok(image_result(&shot, &screen, scale, Some(done)));
        }
        let result = b.input(a.screen, &request).await.map_err(from_client)?;
        // On Wayland the pointer's position is unknown after another
        // device moved it: the cursor is then null.
        let cursor = result.cursor.map(|c| {
            let (x, y) = to_image(c.x, c.y, scale);
            json!({ "x": x, "y": y })
        });
        Ok(json_result(
            Some(format!("ran {} action(s)", result.performed)),
            json!({
                "performed": result.performed,
                "cursor": cursor,
                "screen_cursor": result.cursor,
                "scale": scale,
            }),
        ))
    }
}

/// `desktop`'s schema. Its actions are the guest's own `Action` type, whose
/// description speaks of the REST request's `coordinate_space`; here it
/// says what a model needs instead.
fn desktop_schema() -> Arc<rmcp::model::JsonObject> {
    let mut schema = (*schema::<DesktopArgs>()).clone();
    if let Some(action) =
        schema.get_mut("$defs").and_then(|d| d.get_mut("Action")).and_then(|a| a.as_object_mut())
    {
        action.insert(
            "description".into(),
            "One action, chosen by `type`. x and y are in the pixels `coordinates` names \
             (screenshot pixels by default); when they are left out, the action happens where \
             the pointer is."
                .into(),
        );
    }
    Arc::new(schema)
}

/// `cursor`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CursorArgs {
    /// The box's id.
    pub box_id: String,
    /// The screen, from 0 (default 0).
    #[serde(default)]
    pub screen: u8,
}

/// `cursor`.
#[derive(Debug)]
pub(crate) struct Cursor;

impl Tool for Cursor {
    const NAME: &'static str = "cursor";
    const DESCRIPTION: &'static str = "Where the mouse pointer is on a screen of a box: x and y \
        in screenshot pixels (what desktop takes), and screen_x and screen_y in screen pixels.";
    const ANNOTATIONS: Annotations =
        Annotations { title: "Pointer position", effect: Effect::ReadOnly, open_world: false };
    type Args = CursorArgs;

    async fn call(mcp: &HolmMcp, a: CursorArgs, _: Option<&Reporter>) -> Answer {
        args::check_box_id(&a.box_id)?;
        let b = mcp.client.boxed(&a.box_id);
        let (_, scale) = screen(&b, a.screen).await?;
        let c = b.cursor(a.screen).await.map_err(from_client)?;
        let (x, y) = to_image(c.x, c.y, scale);
        Ok(json_result(
            None,
            json!({ "screen": c.screen, "x": x, "y": y, "screen_x": c.x, "screen_y": c.y, "scale": scale }),
        ))
    }
}

/// The screen `index` of a box, and the scale of its screenshots.
async fn screen(b: &BoxClient, index: u8) -> Result<(Screen, f64), ApiError> {
    let screens = b.screens().await.map_err(from_client)?;
    let count = screens.len();
    let screen = screens.into_iter().find(|s| s.index == index).ok_or_else(|| {
        invalid(
            "screen",
            format!(
                "the box has {count} screen{}, numbered from 0; there is no screen {index}",
                if count == 1 { "" } else { "s" }
            ),
        )
    })?;
    let scale = scale_for(screen.width, screen.height);
    Ok((screen, scale))
}

fn shot_options(format: ShotFormat, scale: f64, cursor: bool) -> ScreenshotOptions {
    ScreenshotOptions {
        format: Some(match format {
            ShotFormat::Png => ImageFormat::Png,
            ShotFormat::Jpeg => ImageFormat::Jpeg,
        }),
        scale: (scale < 1.0).then_some(scale),
        cursor: cursor.then_some(true),
        ..ScreenshotOptions::default()
    }
}

/// A screenshot as an image block and a line that says its size, the screen's
/// size, the scale and where the pointer is.
fn image_result(
    shot: &Shot,
    screen: &Screen,
    scale: f64,
    before: Option<String>,
) -> CallToolResult {
    let m = &shot.meta;
    let mut line = String::new();
    if let Some(b) = before {
        line.push_str(&b);
        line.push_str(". ");
    }
    line.push_str(&format!(
        "Screenshot of screen {}: image {}x{} pixels of a {}x{} screen, scale {} (screen pixels = image pixels / scale).",
        screen.index, m.width, m.height, screen.width, screen.height, scale
    ));
    if let Some((x, y)) = shot.cursor {
        let (ix, iy) = to_image(x, y, scale);
        line.push_str(&format!(" The pointer is at ({ix}, {iy}) in image pixels."));
    }
    line.push_str(" Give desktop image pixels.");
    CallToolResult::success(vec![
        ContentBlock::image(BASE64.encode(&shot.bytes), m.format.mime()),
        ContentBlock::text(line),
    ])
}
