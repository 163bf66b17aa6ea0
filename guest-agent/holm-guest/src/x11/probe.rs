//! Readiness checks the supervisor runs against an X display: each opens
//! its own short connection, asks, and answers `false` on any failure.

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt, MapState, Window};
use x11rb::rust_connection::RustConnection;

/// A window manager has announced itself on `display` (EWMH's
/// `_NET_SUPPORTING_WM_CHECK` on the root window).
pub fn wm_present(display: &str) -> bool {
    let Ok((conn, screen)) = x11rb::connect(Some(display)) else { return false };
    let root = conn.setup().roots[screen].root;
    let Ok(Ok(reply)) = conn.intern_atom(true, b"_NET_SUPPORTING_WM_CHECK").map(|c| c.reply())
    else {
        return false;
    };
    let atom = reply.atom;
    if atom == 0 {
        return false;
    }
    let Ok(cookie) = conn.get_property(false, root, atom, AtomEnum::WINDOW, 0, 1) else {
        return false;
    };
    cookie.reply().is_ok_and(|r| r.value_len > 0)
}

/// Chromium has a viewable window on `display`: a top-level window, or the
/// client inside a window manager's frame, whose `WM_CLASS` names it
/// (`Chromium`, `chromium (PROFILE)` with a profile of its own, or Chrome).
pub fn browser_shown(display: &str) -> bool {
    let Ok((conn, screen)) = x11rb::connect(Some(display)) else { return false };
    let root = conn.setup().roots[screen].root;
    let Ok(Ok(top)) = conn.query_tree(root).map(|c| c.reply()) else { return false };
    top.children.iter().any(|&w| {
        is_browser(&conn, w)
            || conn
                .query_tree(w)
                .ok()
                .and_then(|c| c.reply().ok())
                .is_some_and(|t| t.children.iter().any(|&c| is_browser(&conn, c)))
    })
}

fn is_browser(conn: &RustConnection, w: Window) -> bool {
    let viewable = conn
        .get_window_attributes(w)
        .ok()
        .and_then(|c| c.reply().ok())
        .is_some_and(|a| a.map_state == MapState::VIEWABLE);
    if !viewable {
        return false;
    }
    let Ok(Ok(class)) = conn
        .get_property(false, w, AtomEnum::WM_CLASS, AtomEnum::STRING, 0, 256)
        .map(|c| c.reply())
    else {
        return false;
    };
    String::from_utf8_lossy(&class.value).to_ascii_lowercase().contains("chrom")
}
