//! The X11 desktop, in process: one persistent connection per screen for
//! screenshots ([`capture`]) and XTest input ([`input`], [`keyboard`]).
//!
//! Each screen has one x11rb connection, made on first use and kept behind a
//! mutex. When its X server goes away (the supervisor restarts a dead Xvfb),
//! the next use notices the broken connection, drops it with everything tied
//! to it (the shared-memory segment, the keyboard map, the spare keycodes),
//! connects again and retries once. All of this is blocking work: callers run
//! it with `spawn_blocking`.

pub mod capture;
mod clipboard;
pub mod components;
mod damage;
mod desktop;
mod focus;
pub mod input;
pub mod keyboard;
pub mod probe;
mod windows;

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

use x11rb::connection::{Connection as _, RequestConnection as _};
use x11rb::errors::{ConnectionError, ReplyError, ReplyOrIdError};
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    ChangeWindowAttributesAux, ConnectionExt as _, EventMask, ImageOrder, Mapping, Window,
};
use x11rb::protocol::{shm, xfixes, xtest};
use x11rb::rust_connection::RustConnection;

use self::capture::Segment;
use self::keyboard::Keyboard;

/// What went wrong talking to an X server: the desktop's one error type.
pub use crate::display::DisplayError as XError;

impl From<ConnectionError> for XError {
    fn from(e: ConnectionError) -> Self {
        Self::Gone(format!("X connection: {e}"))
    }
}

impl From<ReplyError> for XError {
    fn from(e: ReplyError) -> Self {
        match e {
            ReplyError::ConnectionError(e) => e.into(),
            ReplyError::X11Error(e) => Self::Failed(format!("X error: {e:?}")),
        }
    }
}

impl From<ReplyOrIdError> for XError {
    fn from(e: ReplyOrIdError) -> Self {
        match e {
            ReplyOrIdError::ConnectionError(e) => e.into(),
            ReplyOrIdError::X11Error(e) => Self::Failed(format!("X error: {e:?}")),
            ReplyOrIdError::IdsExhausted => Self::Gone("X connection: ids exhausted".into()),
        }
    }
}

/// A live connection to one screen's X server and what hangs off it.
pub struct Conn {
    /// The connection.
    pub c: RustConnection,
    /// The root window.
    pub root: Window,
    /// The screen's current width.
    pub width: u16,
    /// The screen's current height.
    pub height: u16,
    /// The MIT-SHM segment, when the server offers MIT-SHM 1.2 (fd passing).
    shm: Option<Option<Segment>>,
    /// Whether XFixes (for the pointer image) is there.
    xfixes: bool,
    /// Whether XTest is there.
    xtest: bool,
    /// The keyboard map, loaded on the first key event.
    keyboard: Option<Keyboard>,
    /// Keyboard-mapping changes we made whose `MappingNotify` has not come
    /// back yet: `(first keycode, count)`.
    own_mapping_changes: VecDeque<(u8, u8)>,
    /// Where the pointer was when the last input action was confirmed (its
    /// confirming round trip asks for it), until the next action starts.
    pub(crate) confirmed_pointer: Option<(i32, i32)>,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("root", &self.root)
            .field("width", &self.width)
            .field("height", &self.height)
            .field("shm", &self.shm.is_some())
            .finish()
    }
}

impl Conn {
    /// Connects to `display` and learns what the server can do.
    fn open(display: &str) -> Result<Self, XError> {
        let (c, screen_num) = x11rb::connect(Some(display))
            .map_err(|e| XError::Gone(format!("cannot connect to X display {display}: {e}")))?;
        let setup = c.setup();
        let screen = &setup.roots[screen_num];
        let root = screen.root;
        let (width, height) = (screen.width_in_pixels, screen.height_in_pixels);
        // Only 32-bit little-endian XRGB is handled, which is what Xvfb with
        // depth 24 gives; anything else is refused rather than mangled.
        let depth24_bpp =
            setup.pixmap_formats.iter().find(|f| f.depth == 24).map(|f| f.bits_per_pixel);
        if screen.root_depth != 24
            || depth24_bpp != Some(32)
            || setup.image_byte_order != ImageOrder::LSB_FIRST
        {
            return Err(XError::Unsupported(format!(
                "X display {display} has depth {} ({depth24_bpp:?} bits per pixel); only depth 24 at 32 bits per pixel, little-endian, is supported",
                screen.root_depth
            )));
        }
        // Root size changes (RandR) arrive as ConfigureNotify on the root.
        c.change_window_attributes(
            root,
            &ChangeWindowAttributesAux::new().event_mask(EventMask::STRUCTURE_NOTIFY),
        )?;
        let has = |name: &'static str| -> Result<bool, XError> {
            Ok(c.extension_information(name)?.is_some())
        };
        let shm = if has(shm::X11_EXTENSION_NAME)? {
            let v = shm::query_version(&c)?.reply()?;
            // attach_fd needs MIT-SHM 1.2.
            ((v.major_version, v.minor_version) >= (1, 2)).then_some(None)
        } else {
            None
        };
        let xfixes = if has(xfixes::X11_EXTENSION_NAME)? {
            // XFixes must be told our version before any other request.
            xfixes::query_version(&c, 4, 0)?.reply()?;
            true
        } else {
            false
        };
        let xtest = has(xtest::X11_EXTENSION_NAME)?;
        let name = display;
        tracing::debug!(
            display = name,
            width,
            height,
            shm = shm.is_some(),
            xfixes,
            xtest,
            "X connection"
        );
        Ok(Self {
            c,
            root,
            width,
            height,
            shm,
            xfixes,
            xtest,
            keyboard: None,
            own_mapping_changes: VecDeque::new(),
            confirmed_pointer: None,
        })
    }

    /// Reads the events that queued up: size changes of the root, and
    /// keyboard-mapping changes made by other clients (ours are expected).
    fn drain_events(&mut self) -> Result<(), XError> {
        while let Some(event) = self.c.poll_for_event()? {
            match event {
                Event::ConfigureNotify(e)
                    if e.window == self.root
                        && (e.width, e.height) != (self.width, self.height) =>
                {
                    tracing::info!(width = e.width, height = e.height, "screen size changed");
                    self.width = e.width;
                    self.height = e.height;
                }
                Event::MappingNotify(e) if e.request == Mapping::KEYBOARD => {
                    let ours = (e.first_keycode, e.count);
                    if self.own_mapping_changes.front() == Some(&ours) {
                        self.own_mapping_changes.pop_front();
                    } else if let Some(kb) = &mut self.keyboard {
                        kb.stale = true;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// One round trip: every request sent before it has been processed.
    pub fn sync(&self) -> Result<(), XError> {
        self.c.get_input_focus()?.reply()?;
        Ok(())
    }
}

/// One screen: its display name and its connection.
#[derive(Debug)]
pub struct ScreenConn {
    display: String,
    conn: Mutex<Option<Conn>>,
    /// Serializes input requests on this screen, so two requests' actions
    /// never interleave.
    pub input_lock: Mutex<()>,
    /// The damage watch, once opened: `Some(None)` when the server has no
    /// DAMAGE extension.
    watch: Mutex<Option<Option<damage::Watch>>>,
}

impl ScreenConn {
    /// A screen whose X server is `display`; nothing connects yet.
    pub fn new(display: String) -> Self {
        Self {
            display,
            conn: Mutex::new(None),
            input_lock: Mutex::new(()),
            watch: Mutex::new(None),
        }
    }

    /// The display name, such as `:1`.
    pub fn display(&self) -> &str {
        &self.display
    }

    fn lock(&self) -> MutexGuard<'_, Option<Conn>> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the connection, connecting first when there is none.
    /// When the connection turns out to be broken, connects again and runs
    /// `f` once more if `retry` (only for work that is safe to repeat).
    pub fn with<T>(
        &self,
        retry: bool,
        mut f: impl FnMut(&mut Conn) -> Result<T, XError>,
    ) -> Result<T, XError> {
        let mut guard = self.lock();
        for attempt in 0..2 {
            if guard.is_none() {
                *guard = Some(Conn::open(&self.display)?);
            }
            let Some(conn) = guard.as_mut() else { continue };
            let result = conn.drain_events().and_then(|()| f(conn));
            match result {
                Err(XError::Gone(why)) => {
                    tracing::info!(display = %self.display, why, "X connection lost; reconnecting");
                    *guard = None;
                    if !retry || attempt == 1 {
                        return Err(XError::Gone(why));
                    }
                }
                other => return other,
            }
        }
        Err(XError::Gone(format!("X display {} is not answering", self.display)))
    }

    /// Waits until the screen stops changing: on the server's damage
    /// reports ([`damage`]), or by hashing captures when it has none. A
    /// broken watch is dropped (opened again next time) and this settle
    /// hashes.
    pub fn settle(&self, s: holm_proto::guest::Settle) -> Result<bool, XError> {
        let mut watch = self.watch.lock().unwrap_or_else(|e| e.into_inner());
        if watch.is_none() {
            match damage::Watch::open(&self.display) {
                Ok(w) => *watch = Some(w),
                Err(e) => tracing::info!(display = %self.display, error = %e, "no damage watch"),
            }
        }
        if let Some(Some(w)) = watch.as_ref() {
            match w.settle(s) {
                Err(XError::Gone(why)) => {
                    tracing::info!(display = %self.display, why, "damage watch lost");
                    *watch = None;
                }
                other => return other,
            }
        }
        drop(watch);
        crate::display::settle_with(s, || self.with(true, capture::screen_hash))
    }

    /// The screen's size now.
    pub fn size(&self) -> Result<(u32, u32), XError> {
        self.with(true, |c| Ok((u32::from(c.width), u32::from(c.height))))
    }

    /// The pointer position in screen pixels.
    pub fn pointer(&self) -> Result<(i32, i32), XError> {
        self.with(true, |c| {
            let r = c.c.query_pointer(c.root)?.reply()?;
            Ok((i32::from(r.root_x), i32::from(r.root_y)))
        })
    }

    /// The pointer position right after input ran: the one its last
    /// action's confirming round trip answered, without another round trip,
    /// or asked now when the last action had none (such as a wait).
    pub fn pointer_after_input(&self) -> Result<(i32, i32), XError> {
        self.with(true, |c| {
            if let Some(p) = c.confirmed_pointer.take() {
                return Ok(p);
            }
            let r = c.c.query_pointer(c.root)?.reply()?;
            Ok((i32::from(r.root_x), i32::from(r.root_y)))
        })
    }
}

/// Every screen of the box.
#[derive(Debug)]
pub struct X11 {
    screens: Vec<ScreenConn>,
}

impl X11 {
    /// One [`ScreenConn`] per display name; nothing connects yet.
    pub fn new(displays: Vec<String>) -> Self {
        Self { screens: displays.into_iter().map(ScreenConn::new).collect() }
    }

    /// Screen `index`, if there is one.
    pub fn screen(&self, index: u8) -> Option<&ScreenConn> {
        self.screens.get(usize::from(index))
    }

    /// How many screens there are.
    pub fn len(&self) -> usize {
        self.screens.len()
    }

    /// Whether there are no screens.
    pub fn is_empty(&self) -> bool {
        self.screens.is_empty()
    }
}
