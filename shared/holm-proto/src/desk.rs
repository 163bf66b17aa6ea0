//! Windows and the clipboard: the desktop's top-level windows, what can be
//! done to one, and the clipboard's text and image.
//!
//! - `GET /v1/windows`: a page of [`Window`].
//! - `POST /v1/windows/{window}`: a [`WindowAction`]; answers [`WindowActed`].
//! - `GET /v1/clipboard`: the [`Clipboard`] as it is.
//! - `PUT /v1/clipboard`: a [`ClipboardSet`]; answers the [`Clipboard`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The most bytes a clipboard image may have (decoded PNG bytes).
pub const MAX_CLIPBOARD_IMAGE: usize = 16 << 20;

/// The most bytes clipboard text may have.
pub const MAX_CLIPBOARD_TEXT: usize = 4 << 20;

/// One top-level window of the desktop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Window {
    /// Its id, for `POST /v1/windows/{window}`: on X11 the screen in the
    /// high 32 bits and the client window's XID in the low; on Wayland
    /// sway's container id. Valid while the window lives.
    pub id: u64,
    /// The screen it is on.
    pub screen: u8,
    /// Its title.
    pub title: String,
    /// The app it belongs to: the X11 `WM_CLASS` class, or the Wayland
    /// `app_id` (an Xwayland window's class).
    pub app: String,
    /// The process that owns it, when the server knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Its left edge in the screen's pixels (the window's contents, without
    /// the window manager's frame).
    pub x: i32,
    /// Its top edge in the screen's pixels.
    pub y: i32,
    /// Its width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
    /// Whether it has the keyboard focus.
    pub focused: bool,
}

/// `POST /v1/windows/{window}`: what to do to a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum WindowAction {
    /// Raise it and give it the keyboard focus.
    Focus,
    /// Move its top-left corner (its contents') to `x`, `y` of its screen.
    /// On Wayland a tiled window becomes floating first.
    Move {
        /// The left edge, in the screen's pixels.
        x: i32,
        /// The top edge, in the screen's pixels.
        y: i32,
    },
    /// Give its contents this size. On Wayland a tiled window becomes
    /// floating first.
    Resize {
        /// The width in pixels, 1 to 16384.
        width: u32,
        /// The height in pixels, 1 to 16384.
        height: u32,
    },
    /// Ask it to close, as its close button does (the app may ask first).
    Close,
}

/// The largest width or height a resize takes.
pub const MAX_WINDOW_SIDE: u32 = 16384;

/// What a window action did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WindowActed {
    /// Whether the change was seen within the wait (a few seconds): the
    /// window focused, at the place or size asked (as near as its size
    /// hints allow), or gone after a close.
    pub applied: bool,
    /// The window as it is after the action; `null` once it has closed.
    pub window: Option<Window>,
}

/// `GET /v1/clipboard` and the answer of `PUT /v1/clipboard`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Clipboard {
    /// The types the clipboard's owner offers (MIME types such as
    /// `text/plain;charset=utf-8` and `image/png`); empty when it has none.
    pub types: Vec<String>,
    /// Its text, when it offers text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its image as PNG, base64 (standard alphabet), when it offers `image/png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub png_base64: Option<String>,
}

/// `PUT /v1/clipboard`: what to put on the clipboard. At least one of the
/// two; with both, the clipboard offers both and each app takes the type it
/// wants.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClipboardSet {
    /// Text (UTF-8), at most 4 MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A PNG image, base64 (standard alphabet), at most 16 MiB decoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub png_base64: Option<String>,
    /// The request carries a secret: no record keeps its text, not even
    /// its length (holmd's timeline and its exports, logs); a command's
    /// argv and environment are recorded as `[sensitive]`; an image it
    /// answers is not kept. Default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sensitive: bool,
}

/// The MIME type of clipboard text.
pub const TEXT_MIME: &str = "text/plain;charset=utf-8";

/// The MIME type of a clipboard image.
pub const PNG_MIME: &str = "image/png";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_read_as_written() {
        let a: WindowAction = serde_json::from_str(r#"{"action":"move","x":5,"y":-3}"#).unwrap();
        assert_eq!(a, WindowAction::Move { x: 5, y: -3 });
        let a: WindowAction = serde_json::from_str(r#"{"action":"close"}"#).unwrap();
        assert_eq!(a, WindowAction::Close);
        assert!(serde_json::from_str::<WindowAction>(r#"{"action":"resize","width":4}"#).is_err());
        assert!(serde_json::from_str::<WindowAction>(r#"{"action":"fly"}"#).is_err());
    }
}
