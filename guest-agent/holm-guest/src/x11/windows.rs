//! The windows of an X11 screen, through the window manager's EWMH hints:
//! `_NET_CLIENT_LIST` lists them, `_NET_ACTIVE_WINDOW` says which has the
//! focus, and the window manager is asked (client messages to the root, as
//! a pager does) to activate, move, resize or close one.
//!
//! A window's rectangle is its client window's, in root coordinates: the
//! contents without the manager's frame. Moves and resizes are asked with
//! static gravity, so the contents' corner lands where asked.

use holm_proto::desk::{Window, WindowAction};
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ClientMessageEvent, ConnectionExt as _, EventMask, Window as Xid,
};

use super::{Conn, XError};

/// The atoms this module asks for.
struct Atoms {
    client_list: Atom,
    active: Atom,
    name: Atom,
    utf8: Atom,
    pid: Atom,
    close: Atom,
    moveresize: Atom,
}

fn atoms(c: &Conn) -> Result<Atoms, XError> {
    let names: [&[u8]; 7] = [
        b"_NET_CLIENT_LIST",
        b"_NET_ACTIVE_WINDOW",
        b"_NET_WM_NAME",
        b"UTF8_STRING",
        b"_NET_WM_PID",
        b"_NET_CLOSE_WINDOW",
        b"_NET_MOVERESIZE_WINDOW",
    ];
    let cookies = names.iter().map(|n| c.c.intern_atom(false, n)).collect::<Result<Vec<_>, _>>()?;
    let mut a = Vec::with_capacity(names.len());
    for cookie in cookies {
        a.push(cookie.reply()?.atom);
    }
    Ok(Atoms {
        client_list: a[0],
        active: a[1],
        name: a[2],
        utf8: a[3],
        pid: a[4],
        close: a[5],
        moveresize: a[6],
    })
}

/// The id a window has on the wire: the screen in the high 32 bits.
pub fn wire_id(screen: u8, xid: Xid) -> u64 {
    (u64::from(screen) << 32) | u64::from(xid)
}

/// The screen and XID of a wire id.
pub fn split_id(id: u64) -> (u8, Xid) {
    (u8::try_from(id >> 32).unwrap_or(u8::MAX), (id & 0xffff_ffff) as Xid)
}

fn prop32(c: &Conn, w: Xid, prop: Atom, ty: impl Into<Atom>) -> Result<Vec<u32>, XError> {
    let r = c.c.get_property(false, w, prop, ty, 0, 4096)?.reply()?;
    Ok(r.value32().map(Iterator::collect).unwrap_or_default())
}

fn text(c: &Conn, w: Xid, prop: Atom, ty: impl Into<Atom>) -> Result<Vec<u8>, XError> {
    Ok(c.c.get_property(false, w, prop, ty, 0, 16384)?.reply()?.value)
}

/// The windows the window manager lists (`_NET_CLIENT_LIST`); none when
/// no EWMH window manager runs.
pub(super) fn client_list(c: &Conn) -> Result<Vec<Xid>, XError> {
    prop32(c, c.root, atoms(c)?.client_list, AtomEnum::WINDOW)
}

/// Every window the window manager lists on this screen, in its order.
pub fn list(c: &Conn, screen: u8) -> Result<Vec<Window>, XError> {
    let a = atoms(c)?;
    let clients = prop32(c, c.root, a.client_list, AtomEnum::WINDOW)?;
    let active = prop32(c, c.root, a.active, AtomEnum::WINDOW)?.first().copied().unwrap_or(0);
    let active = if has_input_focus(c, active)? { active } else { x11rb::NONE };
    let mut out = Vec::with_capacity(clients.len());
    for w in clients {
        // A window may close while it is being read: it is left out.
        match describe(c, &a, screen, w, active) {
            Ok(Some(win)) => out.push(win),
            Ok(None) => {}
            Err(XError::Failed(why)) => tracing::debug!(window = w, why, "window left out"),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Whether the keyboard's focus is in window `w` (itself or a window
/// inside it). The window manager's `_NET_ACTIVE_WINDOW` alone can run
/// ahead of the focus, or behind it: only both together mean that typed
/// keys go to `w`.
pub(super) fn has_input_focus(c: &Conn, w: Xid) -> Result<bool, XError> {
    if w == x11rb::NONE {
        return Ok(false);
    }
    let mut at = c.c.get_input_focus()?.reply()?.focus;
    // Up the tree from the focus; a handful of levels at most.
    for _ in 0..16 {
        if at == w {
            return Ok(true);
        }
        if at == x11rb::NONE
            || at == c.root
            || at == u32::from(x11rb::protocol::xproto::InputFocus::POINTER_ROOT)
        {
            return Ok(false);
        }
        match c.c.query_tree(at)?.reply() {
            Ok(tree) => at = tree.parent,
            // The window went away meanwhile.
            Err(_) => return Ok(false),
        }
    }
    Ok(false)
}

fn describe(
    c: &Conn,
    a: &Atoms,
    screen: u8,
    w: Xid,
    active: Xid,
) -> Result<Option<Window>, XError> {
    let geometry = c.c.get_geometry(w)?.reply()?;
    let at = c.c.translate_coordinates(w, c.root, 0, 0)?.reply()?;
    let mut title = text(c, w, a.name, a.utf8)?;
    if title.is_empty() {
        title = text(c, w, AtomEnum::WM_NAME.into(), AtomEnum::STRING)?;
    }
    let class = text(c, w, AtomEnum::WM_CLASS.into(), AtomEnum::STRING)?;
    // WM_CLASS is "instance\0class\0": the class names the app.
    let mut parts = class.split(|b| *b == 0).filter(|p| !p.is_empty());
    let (instance, class) = (parts.next(), parts.next());
    let app = String::from_utf8_lossy(class.or(instance).unwrap_or_default()).into_owned();
    let pid = prop32(c, w, a.pid, AtomEnum::CARDINAL)?.first().copied();
    Ok(Some(Window {
        id: wire_id(screen, w),
        screen,
        title: String::from_utf8_lossy(&title).into_owned(),
        app,
        pid,
        x: i32::from(at.dst_x),
        y: i32::from(at.dst_y),
        width: u32::from(geometry.width),
        height: u32::from(geometry.height),
        focused: w == active,
    }))
}

/// Asks the window manager to put window `w`'s contents at `at`, with
/// `size` when given.
pub fn move_resize(
    c: &Conn,
    w: Xid,
    at: (i32, i32),
    size: Option<(u32, u32)>,
) -> Result<(), XError> {
    let (width, height) = size.unwrap_or((0, 0));
    let sized = if size.is_some() { 1 << 10 | 1 << 11 } else { 0 };
    let flags = STATIC | 1 << 8 | 1 << 9 | sized | PAGER << 12;
    send(c, w, atoms(c)?.moveresize, [flags, at.0 as u32, at.1 as u32, width, height])
}

/// Source indication 2: a pager, which window managers obey at once.
const PAGER: u32 = 2;

/// Static gravity (10): the position is the contents' corner.
const STATIC: u32 = 10;

/// Asks the window manager to do `action` to window `w`.
pub fn act(c: &Conn, w: Xid, action: &WindowAction) -> Result<(), XError> {
    let a = atoms(c)?;
    let (kind, data) = match *action {
        WindowAction::Focus => (a.active, [PAGER, x11rb::CURRENT_TIME, 0, 0, 0]),
        WindowAction::Close => (a.close, [x11rb::CURRENT_TIME, PAGER, 0, 0, 0]),
        WindowAction::Move { x, y } => {
            (a.moveresize, [STATIC | 1 << 8 | 1 << 9 | PAGER << 12, x as u32, y as u32, 0, 0])
        }
        WindowAction::Resize { width, height } => {
            (a.moveresize, [STATIC | 1 << 10 | 1 << 11 | PAGER << 12, 0, 0, width, height])
        }
    };
    send(c, w, kind, data)
}

fn send(c: &Conn, w: Xid, kind: Atom, data: [u32; 5]) -> Result<(), XError> {
    let event = ClientMessageEvent::new(32, w, kind, data);
    c.c.send_event(
        false,
        c.root,
        EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
        event,
    )?;
    c.c.flush()?;
    // One round trip: the window manager has the request.
    c.c.get_input_focus()?.reply()?;
    Ok(())
}
