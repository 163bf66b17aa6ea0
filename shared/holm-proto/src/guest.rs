//! The guest API: what `holm-guest` serves inside every box.
//!
//! Every route but `GET /health` needs `Authorization: Bearer <box secret>`.
//! holmd forwards its box routes to these, body for body.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// The version of the guest protocol. A host sends a field only when the
/// guest's version supports it.
pub const PROTO_VERSION: u32 = 1;

/// The port the guest API listens on inside a box.
pub const DEFAULT_GUEST_PORT: u16 = 8765;

/// A list, one page of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "PageOf{T}")]
pub struct Page<T> {
    /// The items.
    pub data: Vec<T>,
    /// Pass back as `cursor` for the next page; `null` ends the list.
    pub next_cursor: Option<String>,
}

impl<T> Page<T> {
    /// A page that holds the whole list.
    pub fn all(data: Vec<T>) -> Self {
        Self { data, next_cursor: None }
    }
}

// ---------------------------------------------------------------------------
// Health and info

/// The display server a box runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// Xvfb, fluxbox and x11vnc.
    #[default]
    X11,
    /// Headless sway and wayvnc.
    Wayland,
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::X11 => "x11",
            Self::Wayland => "wayland",
        })
    }
}

/// `GET /health`: answered without a credential.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Health {
    /// `ready` when every component is ready.
    pub status: HealthStatus,
    /// The guest's version.
    pub version: String,
    /// The guest protocol version.
    pub proto: u32,
    /// The display profile.
    pub profile: Profile,
    /// Milliseconds since the guest started.
    pub uptime_ms: u64,
    /// Each supervised component.
    pub components: Vec<ComponentStatus>,
}

/// The overall state of a box's desktop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    /// Every component is ready.
    Ready,
    /// Some component is still starting.
    Starting,
    /// Some component failed and is being restarted.
    Degraded,
}

/// One supervised process, such as `xvfb` on screen 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComponentStatus {
    /// `xvfb`, `fluxbox`, `x11vnc` or `chromium`.
    pub name: String,
    /// The screen it serves.
    pub screen: u8,
    /// Where it is in its life.
    pub state: ComponentState,
    /// The process id, while it runs.
    pub pid: Option<u32>,
    /// How many times it was restarted.
    pub restarts: u32,
    /// Why it last ended, such as `exit status 1` or `signal 9`.
    pub last_exit: Option<String>,
    /// Milliseconds it took to become ready the last time it started.
    pub ready_ms: Option<u64>,
}

/// Where a component is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ComponentState {
    /// Started, not yet answering.
    Starting,
    /// Answering.
    Ready,
    /// Ended; it will be started again after a backoff.
    Restarting,
    /// Switched off in the configuration.
    Disabled,
}

/// `GET /v1/info`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Info {
    /// The guest's version.
    pub version: String,
    /// The guest protocol version.
    pub proto: u32,
    /// The display profile.
    pub profile: Profile,
    /// The screens.
    pub screens: Vec<Screen>,
    /// What this guest can do, such as `screenshot.webp` or `input.settle`.
    pub capabilities: Vec<String>,
}

// ---------------------------------------------------------------------------
// Screens

/// One screen of a box.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Screen {
    /// 0 for the first screen.
    pub index: u8,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The display name inside the box, such as `:1`.
    pub display: String,
    /// Whether its display server answers.
    pub ready: bool,
}

/// `GET /v1/screens/{screen}/cursor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CursorPosition {
    /// The screen.
    pub screen: u8,
    /// Horizontal position in screen pixels.
    pub x: i32,
    /// Vertical position in screen pixels.
    pub y: i32,
}

/// A point in screen pixels; `0` is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Point {
    /// Horizontal position.
    pub x: i32,
    /// Vertical position.
    pub y: i32,
}

/// A rectangle of a screen.
///
/// In a query string it is written `x,y,width,height`; in JSON either that
/// string or an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Region {
    /// Left edge.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Width, at least 1.
    pub width: u32,
    /// Height, at least 1.
    pub height: u32,
}

impl FromStr for Region {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        let [x, y, w, h] = parts.as_slice() else {
            return Err(format!("region must be x,y,width,height, not {s:?}"));
        };
        let num =
            |v: &str| v.parse::<u32>().map_err(|_| format!("region: {v:?} is not a whole number"));
        Ok(Self { x: num(x)?, y: num(y)?, width: num(w)?, height: num(h)? })
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{},{}", self.x, self.y, self.width, self.height)
    }
}

impl<'de> Deserialize<'de> for Region {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Text(String),
            Object { x: u32, y: u32, width: u32, height: u32 },
        }
        match Form::deserialize(d)? {
            Form::Text(s) => s.parse().map_err(serde::de::Error::custom),
            Form::Object { x, y, width, height } => Ok(Self { x, y, width, height }),
        }
    }
}

/// An image format for screenshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum ImageFormat {
    /// Lossless, the default.
    #[default]
    Png,
    /// Lossy, smallest and fastest to encode; `quality` 1 to 100.
    Jpeg,
    /// Lossless WebP.
    Webp,
}

impl ImageFormat {
    /// The MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Webp => "image/webp",
        }
    }

    /// The usual file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Jpeg => "jpg",
            Self::Webp => "webp",
        }
    }
}

/// How to take a screenshot: the query of
/// `GET /v1/screens/{screen}/screenshot`, or `screenshot` in an input request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScreenshotOptions {
    /// `png` (default), `jpeg` or `webp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<ImageFormat>,
    /// JPEG quality, 1 to 100 (default 80).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<u8>,
    /// Only this part of the screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<Region>,
    /// Downscale so the image is at most this wide (never upscales).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_width: Option<u32>,
    /// Downscale so the image is at most this tall (never upscales).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_height: Option<u32>,
    /// Scale by this factor, above 0 and at most 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// Draw the mouse pointer into the image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<bool>,
}

/// Response headers that describe a screenshot whose body is the raw image.
pub mod headers {
    /// Image width in pixels.
    pub const WIDTH: &str = "x-holm-width";
    /// Image height in pixels.
    pub const HEIGHT: &str = "x-holm-height";
    /// Image pixels per screen pixel (1 when not downscaled).
    pub const SCALE: &str = "x-holm-scale";
    /// The part of the screen the image covers, `x,y,width,height`.
    pub const REGION: &str = "x-holm-region";
    /// The pointer position in screen pixels, `x,y`.
    pub const CURSOR: &str = "x-holm-cursor";
    /// After input with `settle`: whether the screen stopped changing in time.
    pub const SETTLED: &str = "x-holm-settled";
    /// The request id, on every response.
    pub const REQUEST_ID: &str = "x-request-id";
}

/// What a screenshot's headers say about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScreenshotMeta {
    /// The image format.
    pub format: ImageFormat,
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Image pixels per screen pixel. Divide an image coordinate by it, and
    /// add the region's origin, to get a screen coordinate.
    pub scale: f64,
    /// The part of the screen the image covers.
    pub region: Region,
    /// A hash of the captured pixels; the `ETag`. An unchanged frame has the
    /// same one, and `If-None-Match` with it answers 304 without encoding.
    pub frame: String,
}

impl ScreenshotMeta {
    /// Maps a point in this image to screen pixels.
    pub fn to_screen(&self, x: f64, y: f64) -> Point {
        let sx = f64::from(self.region.x) + x / self.scale;
        let sy = f64::from(self.region.y) + y / self.scale;
        Point { x: sx.round() as i32, y: sy.round() as i32 }
    }
}

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
}

/// The answer to input without a screenshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InputResult {
    /// How many actions ran.
    pub performed: usize,
    /// The pointer after the actions, in screen pixels.
    pub cursor: Point,
    /// With `settle`: whether the screen stopped changing in time.
    #[serde(default)]
    pub settled: Option<bool>,
}

// ---------------------------------------------------------------------------
// Commands

/// What to run: `argv` without a shell, or `command` under `bash -c`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommandRequest {
    /// The program and its arguments, run without a shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    /// A command line, run with `bash -c`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The working directory (default: the home directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Variables added to the environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Text written to standard input, which is then closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// Kill the command after this many milliseconds (default 60000, at most
    /// 86400000). A timeout is a result with `timed_out`, not an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Keep at most this many bytes of each of stdout and stderr (default
    /// 1048576); the rest is dropped and `truncated` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_limit: Option<u64>,
}

/// `POST /v1/commands/run`: how a command ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommandResult {
    /// The exit code; `null` when a signal ended the command.
    pub exit_code: Option<i32>,
    /// The signal that ended the command, such as `SIGKILL`.
    #[serde(default)]
    pub signal: Option<String>,
    /// Standard output (invalid UTF-8 replaced).
    pub stdout: String,
    /// Standard error (invalid UTF-8 replaced).
    pub stderr: String,
    /// The command ran past its timeout and was killed.
    pub timed_out: bool,
    /// Output past `output_limit` was dropped.
    pub truncated: bool,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
}

/// One line of `POST /v1/commands/stream` (NDJSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CommandEvent {
    /// The command started.
    Start {
        /// Its process id.
        pid: u32,
    },
    /// Some standard output.
    Stdout {
        /// The text.
        data: String,
    },
    /// Some standard error.
    Stderr {
        /// The text.
        data: String,
    },
    /// The command ended; always the last event.
    Exit {
        /// The exit code; `null` when a signal ended it.
        exit_code: Option<i32>,
        /// The signal that ended it.
        #[serde(default)]
        signal: Option<String>,
        /// It ran past its timeout and was killed.
        timed_out: bool,
        /// Output past `output_limit` was dropped (only when the request
        /// gave one: a stream keeps everything by default).
        #[serde(default)]
        truncated: bool,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
    },
    /// The stream failed; always the last event.
    Error {
        /// What went wrong.
        error: crate::error::ApiError,
    },
}

// ---------------------------------------------------------------------------
// Background processes

/// `POST /v1/processes`: start a process in the background.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessStart {
    /// The program and its arguments, run without a shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    /// A command line, run with `bash -c`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The working directory (default: the home directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Variables added to the environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// A name of your own to find the process by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

/// The query of `GET /v1/processes`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessListQuery {
    /// Only the processes started with this tag.
    #[serde(default)]
    pub tag: Option<String>,
    /// Only the processes in this state.
    #[serde(default)]
    pub state: Option<ProcessState>,
}

/// Whether a background process still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProcessState {
    /// It runs.
    Running,
    /// It ended.
    Exited,
}

/// A background process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessInfo {
    /// The guest's id for it, such as `p_3`.
    pub id: String,
    /// The process id.
    pub pid: u32,
    /// The tag given at start.
    pub tag: Option<String>,
    /// What runs, as a command line for people.
    pub command: String,
    /// Whether it still runs.
    pub state: ProcessState,
    /// The exit code, once it ended with one.
    pub exit_code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<String>,
    /// When it started, in RFC 3339.
    pub started_at: String,
    /// The cursor after its newest output event.
    pub next_cursor: u64,
}

/// The query of `GET /v1/processes/{id}/output`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OutputQuery {
    /// Answer events after this cursor (default 0: from the start).
    #[serde(default)]
    pub cursor: Option<u64>,
    /// Stream events as NDJSON until the process ends.
    #[serde(default)]
    pub follow: Option<bool>,
    /// Without `follow`: wait up to this many milliseconds for a first event.
    #[serde(default)]
    pub wait_ms: Option<u64>,
}

/// One output event of a background process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OutputEvent {
    /// Pass this back as `cursor` to read what follows this event.
    pub cursor: u64,
    /// What happened.
    #[serde(flatten)]
    pub kind: OutputKind,
}

/// What an output event carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputKind {
    /// Standard output.
    Stdout {
        /// The text.
        data: String,
    },
    /// Standard error.
    Stderr {
        /// The text.
        data: String,
    },
    /// Older events were dropped to bound memory; this many are gone.
    Gap {
        /// How many events were dropped.
        missed: u64,
    },
    /// The process ended; the last event.
    Exit {
        /// The exit code.
        exit_code: Option<i32>,
        /// The signal that ended it.
        #[serde(default)]
        signal: Option<String>,
    },
}

/// `GET /v1/processes/{id}/output` without `follow`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OutputPage {
    /// The events after the cursor.
    pub data: Vec<OutputEvent>,
    /// Pass back as `cursor` to continue.
    pub next_cursor: u64,
    /// The process ended and every event has been read.
    pub done: bool,
}

/// The query of `POST /v1/processes/{id}/stdin`, whose body is the raw bytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StdinQuery {
    /// Close standard input after writing.
    #[serde(default)]
    pub eof: Option<bool>,
}

/// `POST /v1/processes/{id}/signal`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SignalRequest {
    /// `SIGTERM`, `TERM`, `KILL`, `INT`, `HUP`, `USR1`, ... or a number.
    pub signal: SignalName,
}

/// A signal by name or number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SignalName {
    /// By name, with or without `SIG`.
    Name(String),
    /// By number.
    Number(i32),
}

// ---------------------------------------------------------------------------
// Files

/// The query of the file routes that name one path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PathQuery {
    /// An absolute path in the box.
    pub path: String,
}

/// The query of `PUT /v1/files/content`, whose body is the raw bytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WriteQuery {
    /// An absolute path in the box; missing parents are made.
    pub path: String,
    /// Permission bits in octal, such as `755` (default 644 for a new file).
    #[serde(default)]
    pub mode: Option<String>,
}

/// The query of `GET /v1/files/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListQuery {
    /// An absolute path to a directory.
    pub path: String,
    /// How many levels to descend (default 1, at most 32).
    #[serde(default)]
    pub depth: Option<u32>,
    /// At most this many entries (default and most 10000); `next_cursor`
    /// continues.
    #[serde(default)]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// What kind of entry a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileType {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
    /// A socket, device or pipe.
    Other,
}

/// An entry in the box's file system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileInfo {
    /// The absolute path.
    pub path: String,
    /// The last part of the path.
    pub name: String,
    /// What kind of entry it is.
    #[serde(rename = "type")]
    pub kind: FileType,
    /// Size in bytes.
    pub size: u64,
    /// Permission bits in octal, such as `644`.
    pub mode: String,
    /// Last modification, in RFC 3339.
    pub modified: Option<String>,
    /// Where a symbolic link points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symlink_target: Option<String>,
}

/// `GET /v1/files/stat`: the entry, or `exists: false`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileStat {
    /// Whether the path exists.
    pub exists: bool,
    /// The entry, when it exists.
    #[serde(default, skip_serializing_if = "Option::is_none", flatten)]
    pub info: Option<FileInfo>,
}

/// `POST /v1/files/mkdir`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MkdirRequest {
    /// An absolute path.
    pub path: String,
    /// Make missing parents too, and accept an existing directory (default true).
    #[serde(default = "yes")]
    pub parents: bool,
}

/// `POST /v1/files/remove`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RemoveRequest {
    /// An absolute path.
    pub path: String,
    /// Remove a directory and everything in it (default false).
    #[serde(default)]
    pub recursive: bool,
}

/// `POST /v1/files/rename`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RenameRequest {
    /// The absolute path to move.
    pub from: String,
    /// The absolute path to move it to.
    pub to: String,
    /// Replace `to` if it exists (default false).
    #[serde(default)]
    pub overwrite: bool,
}

fn yes() -> bool {
    true
}

// ---------------------------------------------------------------------------
// The Chromium bridge

/// The port the guest's Chromium bridge listens on inside a box.
pub const BRIDGE_PORT: u16 = 9223;

/// The path prefix of a bridge URL that carries a ticket: `/t/<ticket>/json/version`.
pub const TICKET_PREFIX: &str = "/t/";

/// `PUT /v1/bridge/secret`: the secret the bridge on port 9223 asks for.
///
/// A new secret restarts the bridge: every connection opened with the old one
/// is closed and every ticket is forgotten. The same secret again changes
/// nothing.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BridgeSecret {
    /// At least 32 characters. Never logged.
    pub secret: String,
}

impl fmt::Debug for BridgeSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BridgeSecret").field("secret", &"<hidden>").finish()
    }
}

/// `POST /v1/bridge/tickets`: a short-lived ticket for a client that cannot
/// send headers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TicketRequest {
    /// How long the ticket opens a connection, in seconds (default 60, 1 to 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_secs: Option<u32>,
}

/// A bridge ticket. It goes in the URL path, `/t/<ticket>/json/version`; the
/// `/json` answers under it keep the prefix in their WebSocket URLs. It opens
/// one WebSocket connection, within its lifetime; that connection then lives
/// on. It is random, never the secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Ticket {
    /// The ticket.
    pub ticket: String,
    /// Seconds from now until it can no longer open a connection.
    pub expires_in_secs: u32,
}

impl fmt::Debug for Ticket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ticket")
            .field("ticket", &"<hidden>")
            .field("expires_in_secs", &self.expires_in_secs)
            .finish()
    }
}

/// `GET /v1/bridge`: the bridge's state, without its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BridgeStatus {
    /// The port inside the box.
    pub port: u16,
    /// Whether a secret is set; without one the bridge refuses everything.
    pub secret_set: bool,
    /// Whether this box runs a browser.
    pub browser: bool,
    /// WebSocket connections open through the bridge now.
    pub connections: u32,
    /// Tickets issued that can still open a connection.
    pub tickets: u32,
}

// ---------------------------------------------------------------------------
// Page tools

/// A tab of the box's browser (screen 0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Tab {
    /// The DevTools target id; pass it as `tab`.
    pub id: String,
    /// Its address.
    pub url: String,
    /// Its title.
    pub title: String,
    /// Whether page tools act on it when no `tab` is given.
    pub current: bool,
}

/// `POST /v1/browser/tabs`: open a tab.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OpenTab {
    /// Where it goes (default `about:blank`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Wait for this point of its loading (default `load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_until: Option<WaitUntil>,
    /// The longest wait, in milliseconds (default 30000, at most 120000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// How far a navigation must get before the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum WaitUntil {
    /// The `load` event: the page and its resources.
    #[default]
    Load,
    /// `DOMContentLoaded`: the document is parsed.
    DomContentLoaded,
    /// Answer once the navigation has started.
    Commit,
}

/// The query of the page routes that only read: which tab.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TabQuery {
    /// The tab (default: the current tab).
    #[serde(default)]
    pub tab: Option<String>,
}

/// `POST /v1/browser/navigate`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NavigateRequest {
    /// The address, such as `http://127.0.0.1:8000/` or a `data:` URL.
    pub url: String,
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// Wait for this point of loading (default `load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_until: Option<WaitUntil>,
    /// The longest wait, in milliseconds (default 30000, at most 120000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// Where a tab is after a page tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PageResult {
    /// The tab.
    pub tab: String,
    /// Its address now.
    pub url: String,
    /// Its title now.
    pub title: String,
}

/// `POST /v1/browser/click`: click the first element that matches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClickRequest {
    /// A CSS selector.
    pub selector: String,
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// Which button (default left).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub button: Option<Button>,
    /// 1 to 3 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u8>,
    /// Wait this long for the element to be visible, in milliseconds
    /// (default 5000, at most 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// `POST /v1/browser/type`: type text as key presses, into the element that
/// matches (focused first) or wherever the focus is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TypeRequest {
    /// The text; `\n` presses Enter and `\t` Tab.
    pub text: String,
    /// A CSS selector to focus first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// Wait this long for the element, in milliseconds (default 5000, at most 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// `POST /v1/browser/fill`: set an input's, text area's or editable element's
/// value at once, firing `input` and `change`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FillRequest {
    /// A CSS selector.
    pub selector: String,
    /// The new value.
    pub value: String,
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// Wait this long for the element, in milliseconds (default 5000, at most 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// `POST /v1/browser/press`: press a key, such as `Enter`, `ArrowDown`, `a`
/// or `Control+a`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PressRequest {
    /// The key; modifiers (`Control`, `Shift`, `Alt`, `Meta`) joined with `+`.
    pub key: String,
    /// A CSS selector to focus first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// Wait this long for the element, in milliseconds (default 5000, at most 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// What an element must be for a wait to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum ElementState {
    /// In the document and drawn with a size.
    #[default]
    Visible,
    /// In the document.
    Attached,
    /// Not drawn, or not in the document.
    Hidden,
    /// Not in the document.
    Detached,
}

/// `POST /v1/browser/wait`: wait until an element is in a state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WaitRequest {
    /// A CSS selector.
    pub selector: String,
    /// The state to wait for (default `visible`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ElementState>,
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// The longest wait, in milliseconds (default 5000, at most 60000). Not
    /// reaching the state in time is a `timeout` error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// `POST /v1/browser/evaluate`: run a JavaScript expression in the page.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvaluateRequest {
    /// The expression, such as `document.title` or `fetch('/x').then(r => r.status)`.
    pub expression: String,
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// Wait for a promise's value (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub await_promise: Option<bool>,
    /// The longest run, in milliseconds (default 30000, at most 120000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// The value of an evaluated expression. An exception thrown by the page is a
/// `page_error`, with the exception in `details`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvaluateResult {
    /// The value as JSON; `null` for `undefined` and for values JSON cannot
    /// hold (see `unserializable`).
    pub value: serde_json::Value,
    /// The JavaScript type, such as `number`, `string`, `object` or `undefined`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `NaN`, `Infinity`, `-Infinity`, `-0` or a BigInt such as `12n`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unserializable: Option<String>,
}

/// The image formats of a page screenshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum PageImageFormat {
    /// Lossless, the default.
    #[default]
    Png,
    /// Lossy; `quality` 1 to 100.
    Jpeg,
}

/// The query of `GET /v1/browser/screenshot`, whose answer is the raw image
/// with `x-holm-width` and `x-holm-height`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PageScreenshotOptions {
    /// The tab (default: the current tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// `png` (default) or `jpeg`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<PageImageFormat>,
    /// JPEG quality, 1 to 100 (default 80).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<u8>,
    /// The whole page, not only what the window shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_page: Option<bool>,
}

/// `GET /v1/browser/text` and `GET /v1/browser/html`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PageContent {
    /// The tab.
    pub tab: String,
    /// Its address.
    pub url: String,
    /// Its title.
    pub title: String,
    /// The text a person sees (`innerText` of the body), or the HTML of the
    /// document.
    pub content: String,
}

// ---------------------------------------------------------------------------
// Browser state

/// A cookie, as `save_state` reads it and `load_state` sets it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Cookie {
    /// Its name.
    pub name: String,
    /// Its value.
    pub value: String,
    /// The domain, such as `.example.com` or `127.0.0.1`.
    pub domain: String,
    /// The path.
    pub path: String,
    /// When it expires, in seconds since the epoch; `-1` for a session cookie.
    pub expires: f64,
    /// Hidden from scripts.
    pub http_only: bool,
    /// Sent over HTTPS only.
    pub secure: bool,
    /// `Strict`, `Lax` or `None`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_site: Option<SameSite>,
}

/// A cookie's `SameSite`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SameSite {
    /// Same site only.
    Strict,
    /// Same site, and top-level navigations.
    Lax,
    /// Every request (needs `secure`).
    None,
}

/// One item of a storage area.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StorageItem {
    /// The key.
    pub name: String,
    /// The value.
    pub value: String,
}

/// The web storage of one origin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OriginState {
    /// The origin, such as `http://127.0.0.1:8000`.
    pub origin: String,
    /// Its `localStorage`.
    #[serde(default)]
    pub local_storage: Vec<StorageItem>,
    /// Its `sessionStorage` (per tab: `load_state` leaves a tab open on the
    /// origin to hold it).
    #[serde(default)]
    pub session_storage: Vec<StorageItem>,
}

/// `GET /v1/browser/state` (save) and `POST /v1/browser/state` (load): the
/// browser's cookies, and the local and session storage of every origin open
/// in a tab. Like Playwright's storage state, in snake_case.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StorageState {
    /// Every cookie of the browser.
    #[serde(default)]
    pub cookies: Vec<Cookie>,
    /// The storage of each origin open in a tab when it was saved.
    #[serde(default)]
    pub origins: Vec<OriginState>,
}

/// What `load_state` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LoadStateResult {
    /// Cookies set.
    pub cookies: usize,
    /// Origins whose storage was set.
    pub origins: usize,
    /// Tabs left open to hold session storage.
    pub tabs_opened: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strict;

    #[test]
    fn region_reads_both_forms() {
        let r: Region = serde_json::from_str(r#""1,2,30,40""#).unwrap();
        assert_eq!(r, Region { x: 1, y: 2, width: 30, height: 40 });
        let r: Region = serde_json::from_str(r#"{"x":1,"y":2,"width":30,"height":40}"#).unwrap();
        assert_eq!(r.to_string(), "1,2,30,40");
        assert!("1,2,3".parse::<Region>().is_err());
        assert!("1,2,3,x".parse::<Region>().is_err());
    }

    #[test]
    fn screenshot_query_parses_strictly() {
        let q: ScreenshotOptions =
            strict::from_query("format=jpeg&quality=70&region=0,0,10,10&max_width=640&cursor=true")
                .unwrap();
        assert_eq!(q.format, Some(ImageFormat::Jpeg));
        assert_eq!(q.region, Some(Region { x: 0, y: 0, width: 10, height: 10 }));
        assert_eq!(q.cursor, Some(true));
        let err = strict::from_query::<ScreenshotOptions>("format=gif").unwrap_err();
        assert_eq!(err[0].path, "format");
    }

    #[test]
    fn input_request_defaults_and_strictness() {
        let r: InputRequest = strict::from_slice(
            br#"{"actions":[{"type":"click","x":0,"y":0},{"type":"key","key":"ctrl+c"},{"type":"type","text":"hi\n"}]}"#,
        )
        .unwrap();
        assert_eq!(
            r.actions[0],
            Action::Click {
                x: Some(0),
                y: Some(0),
                button: Button::Left,
                count: 1,
                modifiers: vec![]
            }
        );
        assert_eq!(r.actions[1], Action::Key { key: "ctrl+c".into(), repeat: 1 });
        let err = strict::from_slice::<InputRequest>(
            br#"{"actions":[{"type":"click","x":1,"y":1,"buton":"left"}],"setle":{}}"#,
        )
        .unwrap_err();
        let paths: Vec<&str> = err.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, vec!["actions[0].buton", "setle"]);
    }

    #[test]
    fn meta_maps_image_points_to_the_screen() {
        let meta = ScreenshotMeta {
            format: ImageFormat::Png,
            width: 640,
            height: 400,
            scale: 0.5,
            region: Region { x: 100, y: 50, width: 1280, height: 800 },
            frame: String::new(),
        };
        assert_eq!(meta.to_screen(10.0, 20.0), Point { x: 120, y: 90 });
    }

    #[test]
    fn output_event_is_flat() {
        let e = OutputEvent { cursor: 3, kind: OutputKind::Stdout { data: "x".into() } };
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"cursor":3,"type":"stdout","data":"x"})
        );
    }

    #[test]
    fn stat_of_a_missing_path_is_exists_false() {
        let s = FileStat { exists: false, info: None };
        assert_eq!(serde_json::to_value(&s).unwrap(), serde_json::json!({"exists": false}));
    }
}
