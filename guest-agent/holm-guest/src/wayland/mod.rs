//! The Wayland desktop, in process: a headless sway with one output per
//! screen, driven through wlr-screencopy ([`capture`]) and a virtual pointer
//! per screen and one virtual keyboard ([`input`], [`keymap`]), behind the
//! same [`Desktop`] interface as X11.
//!
//! Each screen has its own capture connection, and input has one more, each
//! made on first use and kept behind a mutex. When sway goes away (the
//! supervisor restarts it), the next use notices the broken connection,
//! connects again and retries once where that is safe, as on X11.
//!
//! **The pointer's position cannot be read back on Wayland**: the virtual
//! pointer protocol has no events, and no client may ask where the pointer
//! is. The guest answers the position it last set on each screen, and
//! `Unsupported` once another device may have moved it: while a VNC viewer
//! is connected to a screen (wayvnc moves the pointer with its own virtual
//! pointer), or after sway restarted, until the agent moves it again.

mod actions;
pub mod capture;
pub mod client;
mod clipboard;
pub mod input;
pub mod keymap;
pub mod sway;
mod windows;

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use holm_proto::guest::Region;

use self::capture::Capturer;
use self::input::InputSession;
use self::sway::Paths;
use crate::config::Config;
use crate::display::{Captured, Desktop, DisplayError, Stopped};
use crate::input::{Op, Pos};

/// The outputs' refresh rate. wlroots copies a screen on the output's next
/// frame, so a capture waits up to one period: 4.2 ms at 240 Hz against
/// 16.7 ms at 60 Hz (measured: 4.4 ms and 16.7 ms median), for about 1% of
/// a CPU per idle output instead of 0.2%.
pub const REFRESH_HZ: u32 = 240;

/// The X display Xwayland takes in a box: the first free one, and nothing
/// else in the box runs an X server.
pub const XWAYLAND_DISPLAY: &str = ":0";

/// Whether the image has Xwayland, for apps that need X11 (sway starts it
/// on the first X11 client).
pub fn xwayland_available() -> bool {
    crate::config::find_on_path(
        &std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into()),
        &["Xwayland"],
    )
    .is_some()
}

/// Whether an Xwayland server runs now (its clients decode keys late).
fn xwayland_running() -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else { return true };
    dir.filter_map(Result::ok).any(|e| {
        std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim_end() == "Xwayland")
    })
}

/// Where the agent last put the pointer, per screen.
#[derive(Debug, Default)]
struct Pointer {
    /// Per screen: the last position set there, while nothing else moved it.
    at: Vec<Option<Pos>>,
    /// The screen the pointer is on, when known.
    on: Option<u8>,
}

/// The Wayland desktop.
#[derive(Debug)]
pub struct Wayland {
    paths: Paths,
    outputs: Vec<String>,
    capture: Vec<Mutex<Option<Capturer>>>,
    input: Mutex<Option<InputSession>>,
    turns: Vec<Mutex<()>>,
    pointer: Mutex<Pointer>,
    vnc_ports: Vec<u16>,
}

impl Wayland {
    /// The desktop for `config`; nothing connects yet.
    pub fn new(config: &Config) -> Arc<Self> {
        let n = config.screens.len();
        let index = |i: usize| u8::try_from(i).unwrap_or(u8::MAX);
        let desktop = Arc::new(Self {
            paths: Paths::new(config),
            outputs: (0..n).map(|i| sway::output_name(index(i))).collect(),
            capture: (0..n).map(|_| Mutex::new(None)).collect(),
            input: Mutex::new(None),
            turns: (0..n).map(|_| Mutex::new(())).collect(),
            pointer: Mutex::new(Pointer { at: vec![None; n], on: None }),
            vnc_ports: if config.vnc {
                (0..n).map(|i| config.vnc_port(index(i))).collect()
            } else {
                Vec::new()
            },
        });
        watch_viewers(Arc::downgrade(&desktop));
        desktop
    }

    /// Writes sway's configuration into a fresh runtime directory.
    pub fn prepare(&self, config: &Config) -> std::io::Result<()> {
        let text = sway::config_text(&config.screens, REFRESH_HZ, xwayland_available());
        sway::prepare(&self.paths, &text)
    }

    /// The components to supervise: sway, and per screen wayvnc and Chromium.
    pub fn specs(self: &Arc<Self>, config: &Config) -> Vec<crate::supervisor::ComponentSpec> {
        let ready = Arc::clone(self);
        let claim = Arc::clone(self);
        sway::specs(
            config,
            &self.paths,
            Arc::new(move || ready.compositor_ready()),
            Arc::new(move || claim.claim_keyboard()),
        )
    }

    /// Sway's readiness: its socket answers with every output, and the
    /// guest's input devices are made on it (so no client ever starts
    /// without a keyboard on the seat). A new sway means a pointer nobody
    /// has placed.
    fn compositor_ready(&self) -> bool {
        if !self.paths.socket().exists() {
            return false;
        }
        match InputSession::connect(&self.paths.socket(), &self.outputs) {
            Ok(session) => {
                *lock(&self.input) = Some(session);
                self.forget_pointer();
                true
            }
            Err(e) => {
                tracing::debug!(error = %e, "sway not ready yet");
                false
            }
        }
    }

    /// Makes the guest's keyboard the seat's before a browser starts: a
    /// client that starts while the seat's keyboard is gone gets no keymap,
    /// and Chromium crashes on that.
    fn claim_keyboard(&self) {
        if let Err(e) = self.with_input(true, InputSession::claim_seat) {
            tracing::warn!(error = %e, "cannot claim the seat's keyboard");
        }
    }

    fn forget_pointer(&self) {
        let mut p = lock(&self.pointer);
        p.at.iter_mut().for_each(|a| *a = None);
        p.on = None;
    }

    /// Runs `f` on the input session, connecting first when there is none;
    /// when the connection turns out broken, connects again and runs `f`
    /// once more if `retry`.
    fn with_input<T>(
        &self,
        retry: bool,
        mut f: impl FnMut(&mut InputSession) -> Result<T, DisplayError>,
    ) -> Result<T, DisplayError> {
        let mut guard = lock(&self.input);
        for attempt in 0..2 {
            if guard.is_none() {
                *guard = Some(InputSession::connect(&self.paths.socket(), &self.outputs)?);
                self.forget_pointer();
            }
            let Some(session) = guard.as_mut() else { continue };
            match f(session) {
                Err(DisplayError::Gone(why)) => {
                    tracing::info!(why, "Wayland input connection lost; reconnecting");
                    *guard = None;
                    if !retry || attempt == 1 {
                        return Err(DisplayError::Gone(why));
                    }
                }
                other => return other,
            }
        }
        Err(DisplayError::Gone("the compositor is not answering".into()))
    }

    /// Runs `f` on screen `index`'s capture connection, as [`Self::with_input`]
    /// with a retry (capturing is safe to repeat).
    fn with_capture<T>(
        &self,
        index: u8,
        mut f: impl FnMut(&mut Capturer) -> Result<T, DisplayError>,
    ) -> Result<T, DisplayError> {
        let slot = self
            .capture
            .get(usize::from(index))
            .ok_or_else(|| DisplayError::Failed(format!("there is no screen {index}")))?;
        let mut guard = lock(slot);
        for attempt in 0..2 {
            if guard.is_none() {
                *guard = Some(Capturer::connect(
                    &self.paths.socket(),
                    &self.outputs[usize::from(index)],
                )?);
            }
            let Some(c) = guard.as_mut() else { continue };
            match f(c) {
                Err(DisplayError::Gone(why)) => {
                    tracing::info!(
                        screen = index,
                        why,
                        "Wayland capture connection lost; reconnecting"
                    );
                    *guard = None;
                    if attempt == 1 {
                        return Err(DisplayError::Gone(why));
                    }
                }
                other => return other,
            }
        }
        Err(DisplayError::Gone("the compositor is not answering".into()))
    }

    /// The position the agent last set on screen `index`, unless another
    /// device may have moved the pointer since.
    fn known_pointer(&self, index: u8) -> Option<Pos> {
        if self.viewers_connected() {
            self.forget_pointer();
        }
        lock(&self.pointer).at.get(usize::from(index)).copied().flatten()
    }

    fn viewers_connected(&self) -> bool {
        !self.vnc_ports.is_empty() && established_to(&self.vnc_ports)
    }

    /// Makes screen `index`'s output the one with the keyboard focus, when
    /// there are several: the seat has one keyboard focus for all screens.
    fn focus_screen(&self, index: u8) -> Result<(), DisplayError> {
        if self.outputs.len() < 2 {
            return Ok(());
        }
        let name = &self.outputs[usize::from(index)];
        let mut ipc = sway::Ipc::connect(&self.paths.ipc())?;
        if ipc.focused_output()?.as_deref() != Some(name.as_str()) {
            ipc.command(&format!("focus output {name}"))?;
        }
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// 127.0.0.2 as `/proc/net/tcp` writes it: where the guest's watch-only
/// viewers connect from; they cannot move the pointer.
const WATCH_ONLY_PEER: &str = "0200007F";

/// Whether a TCP connection to one of `ports` on this machine is
/// established (a VNC viewer that may send input is connected), from
/// `/proc/net/tcp{,6}`.
fn established_to(ports: &[u16]) -> bool {
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|file| {
        std::fs::read_to_string(file).is_ok_and(|table| {
            table.lines().skip(1).any(|line| {
                let mut fields = line.split_whitespace();
                let local = fields.nth(1).unwrap_or("");
                let remote = fields.next().unwrap_or("");
                let state = fields.next().unwrap_or("");
                let port = local.rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok());
                let watch_only = remote.split(':').next() == Some(WATCH_ONLY_PEER);
                state == "01" && !watch_only && port.is_some_and(|p| ports.contains(&p))
            })
        })
    })
}

/// Watches for VNC viewers in the background, so a viewer that came and
/// went between two calls is not missed.
fn watch_viewers(desktop: Weak<Wayland>) {
    let spawned = std::thread::Builder::new().name("holm-vnc-watch".into()).spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let Some(d) = desktop.upgrade() else { return };
            if d.viewers_connected() {
                d.forget_pointer();
            }
        }
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot watch for VNC viewers");
    }
}

impl Desktop for Wayland {
    fn server_name(&self) -> &'static str {
        "Wayland compositor"
    }

    fn len(&self) -> usize {
        self.outputs.len()
    }

    fn input_turn(&self, index: u8) -> Option<MutexGuard<'_, ()>> {
        self.turns.get(usize::from(index)).map(lock)
    }

    fn size(&self, index: u8) -> Result<(u32, u32), DisplayError> {
        self.with_capture(index, Capturer::size)
    }

    fn pointer(&self, index: u8) -> Result<(i32, i32), DisplayError> {
        let _ = self.size(index)?;
        self.known_pointer(index).map(|p| (i32::from(p.x), i32::from(p.y))).ok_or_else(|| {
            DisplayError::Unsupported(format!(
                "the pointer's position on screen {index} is not known: on Wayland it cannot be read back, and another device (such as a VNC viewer) may have moved it, or the agent has not placed it on this screen; it is known again once the agent moves it"
            ))
        })
    }

    fn capture(
        &self,
        index: u8,
        region: Region,
        with_cursor: bool,
    ) -> Result<Captured, DisplayError> {
        let frame = self.with_capture(index, |c| c.capture(region, with_cursor))?;
        let pointer = self.known_pointer(index).map(|p| (i32::from(p.x), i32::from(p.y)));
        // The compositor draws the pointer into the frame itself.
        Ok(Captured { frame, pointer, cursor: None })
    }

    fn frame_hash(&self, index: u8) -> Result<u64, DisplayError> {
        self.with_capture(index, Capturer::frame_hash)
    }

    /// On the compositor's damage (copies with damage, [`Capturer::settle`]),
    /// or by hashing frames when its screencopy is older than version 3.
    fn settle(&self, index: u8, s: holm_proto::guest::Settle) -> Result<bool, DisplayError> {
        match self.with_capture(index, |c| c.settle(s))? {
            Some(settled) => Ok(settled),
            None => crate::display::settle_with(s, || self.frame_hash(index)),
        }
    }

    fn run(&self, index: u8, ops: &[Op]) -> Result<(), Stopped> {
        actions::run(self, index, ops)
    }
}

impl crate::display::Windows for Wayland {
    fn windows(&self) -> Result<Vec<holm_proto::desk::Window>, DisplayError> {
        let mut ipc = sway::Ipc::connect(&self.paths.ipc())?;
        windows::list(&mut ipc, u8::try_from(self.outputs.len()).unwrap_or(u8::MAX))
    }

    fn act(
        &self,
        window: &holm_proto::desk::Window,
        action: &holm_proto::desk::WindowAction,
    ) -> Result<(), DisplayError> {
        sway::Ipc::connect(&self.paths.ipc())?.command(&windows::command(window, action))
    }

    fn clipboard(&self) -> Result<crate::display::Clip, DisplayError> {
        clipboard::read(&self.paths.socket())
    }

    fn set_clipboard(&self, clip: crate::display::Clip) -> Result<(), DisplayError> {
        clipboard::own(&self.paths.socket(), clip)
    }
}
