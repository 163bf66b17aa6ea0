//! A click gives the keyboard to the window it lands on, before the next
//! action runs.
//!
//! On X11 the window manager moves the focus, and it does so after it has
//! read the button press from its own connection: the server has the press
//! (our round trip confirms that) well before the manager acts on it, and on
//! a busy machine long before. Keys typed meanwhile would go to the window
//! that had the focus. So after a press on a managed window that does not
//! have the keyboard, and that takes it (its `WM_HINTS` input flag, or
//! `WM_TAKE_FOCUS`), the action waits until the focus moves: into that
//! window, or anywhere else (the window's app may hand it to a dialog), at
//! most [`WAIT`]. A press on a window that already has the keyboard, on the
//! root or a panel, or with no EWMH window manager running, waits for
//! nothing. On Wayland the compositor moves the focus itself, in order with
//! the input, so nothing is needed there.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use x11rb::protocol::xproto::{Atom, AtomEnum, ConnectionExt as _, Window as Xid};

use super::{Conn, ScreenConn, XError, windows};

/// The longest an action waits for the window manager to move the focus.
pub const WAIT: Duration = Duration::from_secs(3);

/// How often the focus is read while waiting (a round trip each).
const POLL: Duration = Duration::from_millis(5);

/// The focus now: a window, `PointerRoot` (1) or `None` (0).
pub fn now(c: &Conn) -> Result<Xid, XError> {
    Ok(c.c.get_input_focus()?.reply()?.focus)
}

/// After a press whose confirming round trip is done, `before` being the
/// focus before it: waits until the focus has moved when the press landed
/// on a managed window that takes the keyboard and does not have it.
pub fn follow(screen: &ScreenConn, before: Xid) -> Result<(), XError> {
    let Some(window) = screen.with(false, |c| awaited(c, before))? else { return Ok(()) };
    tracing::debug!(window, "waiting for the window manager to focus the clicked window");
    let deadline = Instant::now() + WAIT;
    loop {
        std::thread::sleep(POLL);
        let moved = screen
            .with(false, |c| Ok(now(c)? != before || windows::has_input_focus(c, window)?))?;
        if moved {
            return Ok(());
        }
        if Instant::now() >= deadline {
            tracing::debug!(window, "the focus did not move after a click");
            return Ok(());
        }
    }
}

/// The managed window under the pointer whose focus the press should
/// bring, if it has not come yet.
fn awaited(c: &Conn, before: Xid) -> Result<Option<Xid>, XError> {
    if now(c)? != before {
        return Ok(None);
    }
    let top = c.c.query_pointer(c.root)?.reply()?.child;
    // The common case, a click in the focused window, ends here.
    if top == x11rb::NONE || windows::has_input_focus(c, top)? {
        return Ok(None);
    }
    let managed: HashSet<Xid> = windows::client_list(c)?.into_iter().collect();
    let Some(window) = client_in(c, top, &managed)? else { return Ok(None) };
    if !takes_focus(c, window)? {
        return Ok(None);
    }
    Ok(Some(window))
}

/// The managed window that is `top` or inside it (a manager's frame holds
/// its client a few levels down).
fn client_in(c: &Conn, top: Xid, managed: &HashSet<Xid>) -> Result<Option<Xid>, XError> {
    let mut level = vec![top];
    for _ in 0..4 {
        let mut next = Vec::new();
        for w in level {
            if managed.contains(&w) {
                return Ok(Some(w));
            }
            // A window may close meanwhile: it has no client then.
            if let Ok(tree) = c.c.query_tree(w)?.reply() {
                next.extend(tree.children);
            }
        }
        if next.is_empty() || next.len() > 64 {
            break;
        }
        level = next;
    }
    Ok(None)
}

/// Whether a window manager gives `w` the keyboard on a click: ICCCM's
/// input flag is unset or true, or the window asks for `WM_TAKE_FOCUS`.
fn takes_focus(c: &Conn, w: Xid) -> Result<bool, XError> {
    let hints =
        c.c.get_property(false, w, AtomEnum::WM_HINTS, AtomEnum::WM_HINTS, 0, 2)?.reply()?;
    let hints: Vec<u32> = hints.value32().map(Iterator::collect).unwrap_or_default();
    let input = match hints.as_slice() {
        [flags, input, ..] if flags & 1 == 1 => *input != 0,
        _ => true,
    };
    if input {
        return Ok(true);
    }
    let protocols = c.c.intern_atom(false, b"WM_PROTOCOLS")?.reply()?.atom;
    let take = c.c.intern_atom(false, b"WM_TAKE_FOCUS")?.reply()?.atom;
    let list = c.c.get_property(false, w, protocols, AtomEnum::ATOM, 0, 64)?.reply()?;
    let list: Vec<Atom> = list.value32().map(Iterator::collect).unwrap_or_default();
    Ok(list.contains(&take))
}
