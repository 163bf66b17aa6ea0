//! The guest API: what `holm-guest` serves inside every box.
//!
//! Every route but `GET /health` needs `Authorization: Bearer <box secret>`.
//! holmd forwards its box routes to these, body for body.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

mod bridge;
mod commands;
mod files;
mod input;
mod page;

pub use bridge::*;
pub use commands::*;
pub use files::*;
pub use input::*;
pub use page::*;

/// The version of the guest protocol this build speaks: the guest reports
/// it in `/health` and `/v1/info`. A host sends a field only when the
/// guest's version supports it, and calls a route only of a guest whose
/// version has it. See docs/VERSIONING.md for what changes it; generation 2
/// brought the page's history (`/v1/browser/back`, `forward`, `reload`).
pub const PROTO_VERSION: u32 = 2;

/// The oldest guest protocol this build's server still drives: a box made
/// by an older server whose guest speaks an older protocol is taken back
/// only from this version on.
pub const PROTO_OLDEST: u32 = 1;

/// Whether a server of this build can drive a guest that speaks `proto`;
/// if not, why, in words for the box's reason.
pub fn proto_supported(proto: u32) -> Result<(), String> {
    if (PROTO_OLDEST..=PROTO_VERSION).contains(&proto) {
        return Ok(());
    }
    let which = if proto > PROTO_VERSION { "newer" } else { "older" };
    Err(format!(
        "its guest speaks protocol {proto}, {which} than this server's {PROTO_OLDEST} to \
         {PROTO_VERSION}: a server of the box's own version can still drive it; this one \
         can only remove it"
    ))
}

/// The field of an action's body that marks it sensitive (typing, filling,
/// setting a value, a clipboard write, a command or process): its text is
/// then kept in no record, and a command's argv in none but as
/// [`SENSITIVE_SHOWN`].
pub const SENSITIVE: &str = "sensitive";

/// What records show in place of a sensitive command's argv or command
/// line.
pub const SENSITIVE_SHOWN: &str = "[sensitive]";

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
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
    Default,
)]
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
    /// Not started until something asks for it: a VNC server until the
    /// first viewer of its screen (see `HOLM_VNC`).
    Idle,
}

impl ComponentState {
    /// Whether a box waits no longer for a component in this state: it is
    /// up, switched off, or started only when asked for.
    pub fn settled(self) -> bool {
        matches!(self, Self::Ready | Self::Disabled | Self::Idle)
    }
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
