//! Settling on damage: a connection of its own per screen that watches the
//! root window with the DAMAGE extension, so "the screen stopped changing"
//! is learnt from the X server's reports instead of capturing and hashing
//! the whole screen every few milliseconds.
//!
//! The watch uses `ReportLevel::NON_EMPTY`: the server reports once when
//! the damaged region stops being empty, and the watcher subtracts it again
//! after each report, so every later change reports anew. A settle starts by
//! clearing what the actions before it damaged (they are done; what they
//! cause next is what counts), then waits until no report came for the quiet
//! window. A server without DAMAGE settles by hashing, as before.

use std::os::fd::AsFd as _;
use std::time::{Duration, Instant};

use holm_proto::guest::Settle;
use x11rb::connection::{Connection as _, RequestConnection as _};
use x11rb::protocol::Event;
use x11rb::protocol::damage::{self, ConnectionExt as _, ReportLevel};
use x11rb::protocol::xproto::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use super::XError;

/// A connection watching one screen's root window for damage.
pub struct Watch {
    c: RustConnection,
    damage: damage::Damage,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch").field("damage", &self.damage).finish()
    }
}

impl Watch {
    /// Connects to `display` and starts watching its root window. `None`
    /// when the server has no DAMAGE extension.
    pub fn open(display: &str) -> Result<Option<Self>, XError> {
        let (c, screen) = x11rb::connect(Some(display))
            .map_err(|e| XError::Gone(format!("cannot connect to X display {display}: {e}")))?;
        if c.extension_information(damage::X11_EXTENSION_NAME)?.is_none() {
            return Ok(None);
        }
        c.damage_query_version(1, 1)?.reply()?;
        let root = c.setup().roots[screen].root;
        let id = c.generate_id()?;
        c.damage_create(id, root, ReportLevel::NON_EMPTY)?;
        c.get_input_focus()?.reply()?;
        Ok(Some(Self { c, damage: id }))
    }

    /// Forgets damage reported so far: subtracts the region and drops the
    /// reports already received.
    fn clear(&self) -> Result<(), XError> {
        self.c.damage_subtract(self.damage, x11rb::NONE, x11rb::NONE)?;
        // A round trip: every report sent before the subtraction is read.
        self.c.get_input_focus()?.reply()?;
        while self.c.poll_for_event()?.is_some() {}
        Ok(())
    }

    /// Reads what has arrived; answers whether the screen was damaged, and
    /// subtracts the damage so the next change reports again.
    fn damaged(&self) -> Result<bool, XError> {
        let mut damaged = false;
        while let Some(e) = self.c.poll_for_event()? {
            if matches!(e, Event::DamageNotify(_)) {
                damaged = true;
            }
        }
        if damaged {
            self.c.damage_subtract(self.damage, x11rb::NONE, x11rb::NONE)?;
            self.c.flush()?;
        }
        Ok(damaged)
    }

    /// Waits until the socket has something to read, or `timeout` passed.
    fn wait(&self, timeout: Duration) -> Result<(), XError> {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let fd = self.c.stream().as_fd();
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        let t = Timespec::try_from(timeout).unwrap_or(Timespec { tv_sec: 0, tv_nsec: 0 });
        match poll(&mut fds, Some(&t)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
            Err(e) => Err(XError::Gone(format!("X connection: poll: {e}"))),
        }
    }

    /// Waits until no damage was reported for `quiet_ms`, at most
    /// `timeout_ms`; answers whether the screen settled.
    pub fn settle(&self, s: Settle) -> Result<bool, XError> {
        let deadline = Instant::now() + Duration::from_millis(u64::from(s.timeout_ms));
        let quiet = Duration::from_millis(u64::from(s.quiet_ms));
        self.clear()?;
        let mut since = Instant::now();
        loop {
            if self.damaged()? {
                since = Instant::now();
            }
            let now = Instant::now();
            let quiet_at = since + quiet;
            if now >= quiet_at {
                return Ok(true);
            }
            if now >= deadline {
                return Ok(false);
            }
            self.wait(quiet_at.min(deadline) - now)?;
        }
    }
}
