//! Input: buttons, actions, settling, and what an input request answers.

use super::*;

// ---------------------------------------------------------------------------
// Input

/// A mouse button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum Button {
    /// The primary button.
    #[default]
    Left,
    /// The wheel button.
    Middle,
    /// The secondary button.
    Right,
    /// The "back" side button.
    Back,
    /// The "forward" side button.
    Forward,
}

/// One input action. Coordinates are screen pixels unless the request gives a
/// `coordinate_space`; when `x` and `y` are left out, the action happens where
/// the pointer is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Action {
    /// Move the pointer.
    Move {
        /// Horizontal position.
        x: i32,
        /// Vertical position.
        y: i32,
    },
    /// Click: press and release, `count` times (2 is a double click).
    Click {
        /// Where; the pointer's position when left out.
        #[serde(default)]
        x: Option<i32>,
        /// Where; the pointer's position when left out.
        #[serde(default)]
        y: Option<i32>,
        /// Which button (default left).
        #[serde(default)]
        button: Button,
        /// 1 to 3 (default 1).
        #[serde(default = "one")]
        count: u8,
        /// Keys held during the click, such as `["ctrl"]` or `["shift","alt"]`.
        #[serde(default)]
        modifiers: Vec<String>,
    },
    /// Press a button and keep it down.
    MouseDown {
        /// Where; the pointer's position when left out.
        #[serde(default)]
        x: Option<i32>,
        /// Where; the pointer's position when left out.
        #[serde(default)]
        y: Option<i32>,
        /// Which button (default left).
        #[serde(default)]
        button: Button,
    },
    /// Release a button.
    MouseUp {
        /// Where; the pointer's position when left out.
        #[serde(default)]
        x: Option<i32>,
        /// Where; the pointer's position when left out.
        #[serde(default)]
        y: Option<i32>,
        /// Which button (default left).
        #[serde(default)]
        button: Button,
    },
    /// Press at the first point, move through the others, release at the last.
    Drag {
        /// At least two points.
        path: Vec<Point>,
        /// Which button (default left).
        #[serde(default)]
        button: Button,
        /// Keys held during the drag.
        #[serde(default)]
        modifiers: Vec<String>,
        /// How long to stay at each point, in milliseconds (default 0).
        #[serde(default)]
        step_ms: u32,
    },
    /// Turn the wheel: `dy` clicks down (negative: up), `dx` clicks right
    /// (negative: left).
    Scroll {
        /// Where; the pointer's position when left out.
        #[serde(default)]
        x: Option<i32>,
        /// Where; the pointer's position when left out.
        #[serde(default)]
        y: Option<i32>,
        /// Horizontal clicks.
        #[serde(default)]
        dx: i32,
        /// Vertical clicks.
        #[serde(default)]
        dy: i32,
        /// Keys held while scrolling.
        #[serde(default)]
        modifiers: Vec<String>,
    },
    /// Type text: any Unicode, whatever the keyboard layout. `\n` is Return
    /// and `\t` is Tab.
    Type {
        /// The text.
        text: String,
    },
    /// Press a key or a chord such as `ctrl+shift+t`, and release it.
    Key {
        /// The chord; key names are in the key table, case-insensitive.
        key: String,
        /// How many times (default 1).
        #[serde(default = "one_u32")]
        repeat: u32,
    },
    /// Press a key or chord and keep it down.
    KeyDown {
        /// The key or chord.
        key: String,
    },
    /// Release a key or chord.
    KeyUp {
        /// The key or chord.
        key: String,
    },
    /// Hold a key or chord down for a time, then release it.
    Hold {
        /// The key or chord.
        key: String,
        /// How long, in milliseconds (at most 60000).
        duration_ms: u32,
    },
    /// Do nothing for a time.
    Wait {
        /// How long, in milliseconds (at most 60000).
        ms: u32,
    },
}

fn one() -> u8 {
    1
}

fn one_u32() -> u32 {
    1
}

/// Coordinates taken from a downscaled or cropped screenshot. The guest maps
/// each point to the screen: `screen = origin + point / scale`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CoordinateSpace {
    /// The screenshot's `scale`.
    pub scale: f64,
    /// The left edge of the screenshot's region (default 0).
    #[serde(default)]
    pub x: u32,
    /// The top edge of the screenshot's region (default 0).
    #[serde(default)]
    pub y: u32,
}

/// Wait after the actions until the screen stops changing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Settle {
    /// The longest wait, in milliseconds (default 2000, at most 30000).
    #[serde(default = "settle_timeout")]
    pub timeout_ms: u32,
    /// How long the screen must stay unchanged, in milliseconds (default 100).
    #[serde(default = "settle_quiet")]
    pub quiet_ms: u32,
}

impl Default for Settle {
    fn default() -> Self {
        Self { timeout_ms: settle_timeout(), quiet_ms: settle_quiet() }
    }
}

fn settle_timeout() -> u32 {
    2000
}

fn settle_quiet() -> u32 {
    100
}

/// `POST /v1/screens/{screen}/input`: actions run in order.
///
/// With `screenshot`, the response body is the image taken after the actions
/// (and after settling), with the screenshot headers; otherwise it is an
/// [`InputResult`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InputRequest {
    /// The actions, at least one.
    pub actions: Vec<Action>,
    /// Map coordinates from a screenshot's space to the screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordinate_space: Option<CoordinateSpace>,
    /// After the actions, wait until the screen stops changing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<Settle>,
    /// After the actions (and settling), answer with this screenshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<ScreenshotOptions>,
    /// The request carries a secret: no record keeps its text, not even
    /// its length (holmd's timeline and its exports, logs); a command's
    /// argv and environment are recorded as `[sensitive]`; an image it
    /// answers is not kept. Default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sensitive: bool,
}

/// The answer to input without a screenshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InputResult {
    /// How many actions ran.
    pub performed: usize,
    /// The pointer after the actions, in screen pixels; `null` when the
    /// display server cannot say (on Wayland, after another device may have
    /// moved the pointer and before the agent moves it again).
    #[serde(default)]
    pub cursor: Option<Point>,
    /// With `settle`: whether the screen stopped changing in time.
    #[serde(default)]
    pub settled: Option<bool>,
}
