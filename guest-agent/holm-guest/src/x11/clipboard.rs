//! The X11 clipboard (the `CLIPBOARD` selection) of screen 0's X server.
//!
//! Setting it: the guest becomes the selection's owner with a small
//! window of its own on a connection of its own, and a thread answers every
//! `SelectionRequest` (`TARGETS`, the text types `UTF8_STRING`, `STRING`,
//! `TEXT`, `text/plain;charset=utf-8` and `text/plain`, and `image/png`)
//! until another client takes the selection (`SelectionClear`). Data is
//! written in one property (BIG-REQUESTS lets one request carry the largest
//! clipboard image), never incrementally.
//!
//! Reading it: `ConvertSelection` to a window of the guest's, `TARGETS`
//! first, then the text and the PNG when offered; an owner that answers
//! incrementally (`INCR`) is read chunk by chunk.

use std::time::{Duration, Instant};

use x11rb::connection::Connection as _;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConnectionExt as _, CreateWindowAux, EventMask, PropMode, Property,
    SelectionNotifyEvent, SelectionRequestEvent, Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use super::XError;
use crate::display::Clip;

/// How long the owner of the selection has to answer.
const ANSWER_WITHIN: Duration = Duration::from_secs(3);

/// The text targets, first the one read.
const TEXT_TARGETS: [&str; 5] =
    ["UTF8_STRING", "text/plain;charset=utf-8", "STRING", "TEXT", "text/plain"];

/// Targets that describe the selection rather than hold it.
const META_TARGETS: [&str; 5] = ["TARGETS", "TIMESTAMP", "MULTIPLE", "SAVE_TARGETS", "DELETE"];

struct Session {
    c: RustConnection,
    win: Window,
    clipboard: Atom,
}

impl Session {
    fn open(display: &str) -> Result<Self, XError> {
        let (c, n) = x11rb::connect(Some(display))
            .map_err(|e| XError::Gone(format!("cannot connect to X display {display}: {e}")))?;
        let root = c.setup().roots[n].root;
        let win = c.generate_id()?;
        c.create_window(
            0,
            win,
            root,
            -10,
            -10,
            1,
            1,
            0,
            WindowClass::INPUT_ONLY,
            0,
            &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
        )?;
        let clipboard = atom(&c, "CLIPBOARD")?;
        Ok(Self { c, win, clipboard })
    }
}

fn atom(c: &RustConnection, name: &str) -> Result<Atom, XError> {
    Ok(c.intern_atom(false, name.as_bytes())?.reply()?.atom)
}

fn atom_name(c: &RustConnection, a: Atom) -> Result<String, XError> {
    Ok(String::from_utf8_lossy(&c.get_atom_name(a)?.reply()?.name).into_owned())
}

/// Makes the guest the clipboard's owner with `clip`, answering requests
/// on a thread of its own until another client takes it.
pub fn own(display: &str, clip: Clip) -> Result<(), XError> {
    let s = Session::open(display)?;
    let mut targets = Vec::new();
    for t in clip.offered().iter().map(String::as_str).chain(["TARGETS", "TIMESTAMP"]) {
        targets.push((atom(&s.c, t)?, t.to_owned()));
    }
    s.c.set_selection_owner(s.win, s.clipboard, x11rb::CURRENT_TIME)?;
    let owner = s.c.get_selection_owner(s.clipboard)?.reply()?.owner;
    if owner != s.win {
        return Err(XError::Failed(
            "the X server did not make the guest the clipboard's owner".into(),
        ));
    }
    std::thread::Builder::new()
        .name("x11-clipboard".into())
        .spawn(move || {
            if let Err(e) = serve(&s, &clip, &targets) {
                tracing::info!(error = %e, "the clipboard's owner stopped");
            }
        })
        .map_err(|e| XError::Failed(format!("clipboard thread: {e}")))?;
    Ok(())
}

fn serve(s: &Session, clip: &Clip, targets: &[(Atom, String)]) -> Result<(), XError> {
    loop {
        match s.c.wait_for_event()? {
            Event::SelectionRequest(e) if e.selection == s.clipboard => {
                answer(s, clip, targets, &e)?
            }
            Event::SelectionClear(e) if e.selection == s.clipboard => {
                tracing::debug!("another client took the clipboard");
                return Ok(());
            }
            _ => {}
        }
    }
}

fn answer(
    s: &Session,
    clip: &Clip,
    targets: &[(Atom, String)],
    e: &SelectionRequestEvent,
) -> Result<(), XError> {
    // An obsolete requestor names no property: the target is used.
    let property = if e.property == x11rb::NONE { e.target } else { e.property };
    let name = targets.iter().find(|(a, _)| *a == e.target).map(|(_, n)| n.as_str());
    let written = match name {
        Some("TARGETS") => {
            let atoms: Vec<Atom> = targets.iter().map(|(a, _)| *a).collect();
            s.c.change_property32(
                PropMode::REPLACE,
                e.requestor,
                property,
                AtomEnum::ATOM,
                &atoms,
            )?;
            true
        }
        Some("TIMESTAMP") => {
            s.c.change_property32(
                PropMode::REPLACE,
                e.requestor,
                property,
                AtomEnum::INTEGER,
                &[0],
            )?;
            true
        }
        Some("image/png") => match &clip.png {
            Some(png) => {
                s.c.change_property8(PropMode::REPLACE, e.requestor, property, e.target, png)?;
                true
            }
            None => false,
        },
        Some(_) => match &clip.text {
            Some(text) => {
                s.c.change_property8(
                    PropMode::REPLACE,
                    e.requestor,
                    property,
                    e.target,
                    text.as_bytes(),
                )?;
                true
            }
            None => false,
        },
        None => false,
    };
    let notify = SelectionNotifyEvent {
        response_type: x11rb::protocol::xproto::SELECTION_NOTIFY_EVENT,
        sequence: 0,
        time: e.time,
        requestor: e.requestor,
        selection: e.selection,
        target: e.target,
        property: if written { property } else { x11rb::NONE },
    };
    s.c.send_event(false, e.requestor, EventMask::NO_EVENT, notify)?;
    s.c.flush()?;
    Ok(())
}

/// The clipboard of `display` as its owner gives it.
///
/// A read that fails while the clipboard changes hands (a copy made in the
/// middle of it: the old owner stops answering once the new one takes
/// over) is done again with the new owner, up to three times; a failure
/// with the same owner before and after is the answer.
pub fn read(display: &str) -> Result<Clip, XError> {
    let s = Session::open(display)?;
    let mut attempt = 0;
    loop {
        let before = s.c.get_selection_owner(s.clipboard)?.reply()?.owner;
        let failed = match read_from(&s, before) {
            Ok(clip) => return Ok(clip),
            Err(e) => e,
        };
        let after = s.c.get_selection_owner(s.clipboard)?.reply()?.owner;
        attempt += 1;
        if after == before || attempt == 3 {
            return Err(failed);
        }
        tracing::debug!(error = %failed, "the clipboard changed hands while read; reading again");
    }
}

/// One read of the clipboard owned by `owner`.
fn read_from(s: &Session, owner: Window) -> Result<Clip, XError> {
    if owner == x11rb::NONE {
        return Ok(Clip::default());
    }
    let targets_atom = atom(&s.c, "TARGETS")?;
    let Some(raw) = convert(s, targets_atom)? else {
        return Ok(Clip::default());
    };
    let mut offered = Vec::new();
    for chunk in raw.chunks_exact(4) {
        let a = u32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        let name = atom_name(&s.c, a)?;
        if !META_TARGETS.contains(&name.as_str()) {
            offered.push((a, name));
        }
    }
    let find = |n: &str| offered.iter().find(|(_, name)| name == n).map(|(a, _)| *a);
    let mut clip =
        Clip { types: offered.iter().map(|(_, n)| n.clone()).collect(), ..Clip::default() };
    if let Some(target) = TEXT_TARGETS.iter().find_map(|t| find(t).map(|a| (a, *t))) {
        clip.text = convert(s, target.0)?.map(|bytes| match target.1 {
            // STRING is Latin-1.
            "STRING" => bytes.iter().map(|b| char::from(*b)).collect(),
            _ => String::from_utf8_lossy(&bytes).into_owned(),
        });
    }
    if let Some(png) = find("image/png") {
        clip.png = convert(s, png)?;
    }
    Ok(clip)
}

/// Asks the owner for `target` and reads the answer; `None` when it refused.
fn convert(s: &Session, target: Atom) -> Result<Option<Vec<u8>>, XError> {
    let prop = atom(&s.c, "HOLM_CLIPBOARD")?;
    s.c.convert_selection(s.win, s.clipboard, target, prop, x11rb::CURRENT_TIME)?;
    s.c.flush()?;
    let deadline = Instant::now() + ANSWER_WITHIN;
    let notify =
        wait(s, deadline, |e| matches!(e, Event::SelectionNotify(n) if n.requestor == s.win))?;
    let Event::SelectionNotify(n) = notify else { unreachable!("wait answers what it matched") };
    if n.property == x11rb::NONE {
        return Ok(None);
    }
    let reply = s.c.get_property(true, s.win, prop, AtomEnum::ANY, 0, u32::MAX / 4)?.reply()?;
    let incr = atom(&s.c, "INCR")?;
    if reply.type_ != incr {
        return Ok(Some(reply.value));
    }
    // Incremental: each new value of the property is the next chunk; an
    // empty one ends it.
    let mut data = Vec::new();
    loop {
        let deadline = Instant::now() + ANSWER_WITHIN;
        wait(
            s,
            deadline,
            |e| matches!(e, Event::PropertyNotify(p) if p.atom == prop && p.state == Property::NEW_VALUE),
        )?;
        let chunk = s.c.get_property(true, s.win, prop, AtomEnum::ANY, 0, u32::MAX / 4)?.reply()?;
        if chunk.value.is_empty() {
            return Ok(Some(data));
        }
        data.extend_from_slice(&chunk.value);
    }
}

fn wait(s: &Session, deadline: Instant, want: impl Fn(&Event) -> bool) -> Result<Event, XError> {
    loop {
        while let Some(e) = s.c.poll_for_event()? {
            if want(&e) {
                return Ok(e);
            }
        }
        if Instant::now() >= deadline {
            return Err(XError::Failed(format!(
                "the clipboard's owner did not answer within {} s",
                ANSWER_WITHIN.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
