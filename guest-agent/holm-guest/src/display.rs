//! The one internal interface of the desktop, whatever its display server:
//! [`Desktop`], implemented by the X11 backend ([`crate::x11`]) and the
//! Wayland backend ([`crate::wayland`]).
//!
//! The routes ([`crate::api`]) know only this trait. Every method blocks
//! (callers run it on the blocking pool) and answers a [`DisplayError`],
//! which the routes turn into the one error shape.

use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use holm_proto::guest::{Region, Settle};

use crate::image::{CursorImage, Frame};
use crate::input::Op;

/// What went wrong talking to a display server.
#[derive(Debug)]
pub enum DisplayError {
    /// The server cannot be reached, or the connection broke: it is not up,
    /// or it is restarting.
    Gone(String),
    /// The server refused a request, or answered something unusable.
    Failed(String),
    /// The request cannot be done on this server (such as a missing XTest,
    /// or the pointer's position on Wayland after another device moved it).
    Unsupported(String),
}

impl std::fmt::Display for DisplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Gone(m) | Self::Failed(m) | Self::Unsupported(m) => f.write_str(m),
        }
    }
}

/// A capture: the pixels, where the pointer is, and its image when asked for.
#[derive(Debug)]
pub struct Captured {
    /// The pixels of the region.
    pub frame: Frame,
    /// The pointer position in screen pixels, when it is known.
    pub pointer: Option<(i32, i32)>,
    /// The pointer image to draw, when asked for and the server gives it
    /// apart from the pixels.
    pub cursor: Option<CursorImage>,
}

/// Why a run of actions stopped early.
#[derive(Debug)]
pub struct Stopped {
    /// How many actions ran completely.
    pub performed: usize,
    /// What went wrong.
    pub error: DisplayError,
}

/// A desktop of one or more screens, driven in process.
pub trait Desktop: Windows + Send + Sync + std::fmt::Debug {
    /// How the routes name the display server in errors, such as `X server`.
    fn server_name(&self) -> &'static str;

    /// How many screens there are.
    fn len(&self) -> usize;

    /// Whether there are no screens.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Serializes input requests on screen `index`, so two requests' actions
    /// never interleave. `None` when there is no such screen.
    fn input_turn(&self, index: u8) -> Option<MutexGuard<'_, ()>>;

    /// The screen's size now.
    fn size(&self, index: u8) -> Result<(u32, u32), DisplayError>;

    /// The pointer position in screen pixels.
    fn pointer(&self, index: u8) -> Result<(i32, i32), DisplayError>;

    /// The pointer position right after [`Desktop::run`], which a display
    /// server may have answered while confirming the input.
    fn pointer_after_input(&self, index: u8) -> Result<(i32, i32), DisplayError> {
        self.pointer(index)
    }

    /// Captures `region` of the screen, with the pointer position, and the
    /// pointer image when `with_cursor`.
    fn capture(
        &self,
        index: u8,
        region: Region,
        with_cursor: bool,
    ) -> Result<Captured, DisplayError>;

    /// A hash of the whole screen's pixels, for settling.
    fn frame_hash(&self, index: u8) -> Result<u64, DisplayError>;

    /// Runs checked actions in order. On error, says how many ran.
    fn run(&self, index: u8, ops: &[Op]) -> Result<(), Stopped>;

    /// Waits until the screen's pixels stay the same for `quiet_ms`, at most
    /// `timeout_ms`; answers whether they did.
    fn settle(&self, index: u8, s: Settle) -> Result<bool, DisplayError> {
        settle_with(s, || self.frame_hash(index))
    }
}

/// Polls `hash` until it stays the same for `quiet_ms`, at most
/// `timeout_ms`; answers whether it did.
pub fn settle_with(
    s: Settle,
    mut hash: impl FnMut() -> Result<u64, DisplayError>,
) -> Result<bool, DisplayError> {
    let start = Instant::now();
    let deadline = start + Duration::from_millis(u64::from(s.timeout_ms));
    let quiet = Duration::from_millis(u64::from(s.quiet_ms));
    let interval = (quiet / 4).clamp(Duration::from_millis(5), Duration::from_millis(25));
    let mut last = hash()?;
    let mut since = Instant::now();
    loop {
        let now = Instant::now();
        if now.duration_since(since) >= quiet {
            return Ok(true);
        }
        if now >= deadline {
            return Ok(false);
        }
        std::thread::sleep(interval.min(deadline - now).min(quiet - now.duration_since(since)));
        let h = hash()?;
        if h != last {
            last = h;
            since = Instant::now();
        }
    }
}

/// The clipboard's contents, as the guest reads or sets them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Clip {
    /// The MIME types offered.
    pub types: Vec<String>,
    /// The text, when text is offered.
    pub text: Option<String>,
    /// The PNG bytes, when `image/png` is offered.
    pub png: Option<Vec<u8>>,
}

impl Clip {
    /// The MIME types a clip of this text and image offers, in order of
    /// preference.
    pub fn offered(&self) -> Vec<String> {
        let mut types = Vec::new();
        if self.png.is_some() {
            types.push(holm_proto::desk::PNG_MIME.to_owned());
        }
        if self.text.is_some() {
            for t in [holm_proto::desk::TEXT_MIME, "text/plain", "UTF8_STRING", "STRING", "TEXT"] {
                types.push(t.to_owned());
            }
        }
        types
    }
}

/// Windows and the clipboard: the part of a desktop that reaches the apps'
/// windows and selections. Every method blocks.
pub trait Windows: Send + Sync + std::fmt::Debug {
    /// Every top-level window of every screen.
    fn windows(&self) -> Result<Vec<holm_proto::desk::Window>, DisplayError>;

    /// Asks the window manager to act on `window` (one just listed). Does
    /// not wait for the change.
    fn act(
        &self,
        window: &holm_proto::desk::Window,
        action: &holm_proto::desk::WindowAction,
    ) -> Result<(), DisplayError>;

    /// The clipboard as the apps see it.
    fn clipboard(&self) -> Result<Clip, DisplayError>;

    /// Owns the clipboard with `clip` until an app copies something else.
    fn set_clipboard(&self, clip: Clip) -> Result<(), DisplayError>;
}
