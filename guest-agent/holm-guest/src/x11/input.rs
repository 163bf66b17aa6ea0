//! Runs checked input [`Op`]s with XTest on a screen's connection: no child
//! process, no fixed sleeps. Events of one action are sent in one burst and
//! confirmed by one round trip; only the waits the caller asked for (`wait`,
//! `hold`, drag steps) pass time, and they pass without the connection lock,
//! so screenshots go on meanwhile.

use std::collections::HashSet;
use std::time::Instant;

use holm_proto::guest::{Button, Settle};
use holm_proto::keys::{Chord, sym};
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{self, ConnectionExt as _, KeyButMask};
use x11rb::protocol::xtest;

use super::focus;
use super::keyboard::{self, KeyPress, Planned};
use super::{Conn, ScreenConn, XError};
use crate::input::{Op, Pos};

pub use crate::display::Stopped;

fn fake(c: &Conn, kind: u8, detail: u8, x: i16, y: i16) -> Result<(), XError> {
    xtest::fake_input(&c.c, kind, detail, x11rb::CURRENT_TIME, c.root, x, y, 0)?;
    Ok(())
}

fn motion(c: &Conn, p: Pos) -> Result<(), XError> {
    let x = i16::try_from(p.x).map_err(|_| XError::Failed("x out of range".into()))?;
    let y = i16::try_from(p.y).map_err(|_| XError::Failed("y out of range".into()))?;
    fake(c, xproto::MOTION_NOTIFY_EVENT, 0, x, y)
}

fn button_number(b: Button) -> u8 {
    match b {
        Button::Left => 1,
        Button::Middle => 2,
        Button::Right => 3,
        Button::Back => 8,
        Button::Forward => 9,
    }
}

fn button(c: &Conn, number: u8, down: bool) -> Result<(), XError> {
    let kind = if down { xproto::BUTTON_PRESS_EVENT } else { xproto::BUTTON_RELEASE_EVENT };
    fake(c, kind, number, 0, 0)
}

fn key(c: &Conn, code: u8, down: bool) -> Result<(), XError> {
    let kind = if down { xproto::KEY_PRESS_EVENT } else { xproto::KEY_RELEASE_EVENT };
    fake(c, kind, code, 0, 0)
}

/// Ends a burst: one round trip, after which the server has processed (and
/// sent to clients) every event, and spare keycodes used in it may start
/// settling. The round trip asks where the pointer is (any request with a
/// reply confirms those before it), so the answer to the input needs no
/// round trip of its own.
fn confirm(c: &mut Conn) -> Result<(), XError> {
    let r = c.c.query_pointer(c.root)?.reply()?;
    c.confirmed_pointer = Some((i32::from(r.root_x), i32::from(r.root_y)));
    if let Some(kb) = c.keyboard.as_mut() {
        kb.confirmed(Instant::now());
    }
    Ok(())
}

fn require_xtest(c: &Conn) -> Result<(), XError> {
    if c.xtest {
        Ok(())
    } else {
        Err(XError::Unsupported("the X server has no XTest extension".into()))
    }
}

/// Makes every keysym of `syms` (one action's) pressable, mapping keycodes
/// of the pool as needed and sending those changes before anything else;
/// waits without the lock while keycodes settle. One press per keysym.
fn resolve_all(screen: &ScreenConn, syms: &[u32], solo: bool) -> Result<Vec<KeyPress>, XError> {
    loop {
        let outcome = screen.with(false, |c| {
            if keyboard::keyboard(c)?.in_flight() {
                confirm(c)?;
            }
            let now = Instant::now();
            let plan = match keyboard::keyboard(c)?.plan(syms, solo, now) {
                Planned::Ready(plan) => plan,
                Planned::WaitUntil(t) => return Ok(Err(t)),
                Planned::TooMany { missing, room } => return Err(too_many(missing, room)),
            };
            let unchecked = keyboard::keyboard(c)?.unchecked(&plan);
            if !unchecked.is_empty() {
                let grabbed = keyboard::grabbed_by_others(c, &unchecked)?;
                keyboard::keyboard(c)?.checked(&unchecked, &grabbed);
                if !grabbed.is_empty() {
                    // Plan again without them.
                    return Ok(Err(now));
                }
            }
            keyboard::keyboard(c)?.apply(&plan);
            keyboard::send_remaps(c)?;
            Ok(Ok(plan.presses))
        })?;
        match outcome {
            Ok(presses) => return Ok(presses),
            Err(until) => sleep_until(until),
        }
    }
}

fn too_many(missing: usize, room: usize) -> XError {
    XError::Unsupported(format!(
        "this action needs {missing} distinct characters that are on no key of the keyboard, and at most {room} can have a key at once on this screen; type the text in several type actions (or release keys held with key_down)"
    ))
}

fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}

/// The keycodes to press for a chord, in order: modifiers, Shift when the key
/// needs it and no Shift is in the chord, the key.
fn chord_codes(screen: &ScreenConn, chord: &Chord) -> Result<Vec<u8>, XError> {
    let syms: Vec<u32> = chord.press_order().collect();
    let presses = resolve_all(screen, &syms, true)?;
    let Some((key, mods)) = presses.split_last() else { return Ok(Vec::new()) };
    let mut codes: Vec<u8> = mods.iter().map(|p| p.code).collect();
    if key.shift && !chord.modifiers.iter().any(|m| matches!(*m, 0xffe1 | 0xffe2)) {
        let shift = resolve_all(screen, &[sym::SHIFT_L], true)?;
        codes.extend(shift.iter().map(|p| p.code));
    }
    codes.push(key.code);
    let mut seen = HashSet::new();
    codes.retain(|c| seen.insert(*c));
    Ok(codes)
}

/// Presses modifiers, runs `body`, and releases the modifiers in reverse
/// order whatever `body` did.
fn with_modifiers(
    screen: &ScreenConn,
    modifiers: &[u32],
    body: impl FnOnce() -> Result<(), XError>,
) -> Result<(), XError> {
    if modifiers.is_empty() {
        return body();
    }
    let presses = resolve_all(screen, modifiers, true)?;
    let codes: Vec<u8> = presses.iter().map(|p| p.code).collect();
    screen.with(false, |c| {
        for &code in &codes {
            if let Some(kb) = c.keyboard.as_mut() {
                kb.used(code);
            }
            key(c, code, true)?;
        }
        Ok(())
    })?;
    let result = body();
    let released = screen.with(false, |c| {
        for &code in codes.iter().rev() {
            key(c, code, false)?;
        }
        confirm(c)
    });
    result.and(released)
}

/// Runs the ops in order. On error, says how many ran.
pub fn run(screen: &ScreenConn, ops: &[Op]) -> Result<(), Stopped> {
    // A broken connection (the X server restarted) is replaced here, before
    // any action runs, so actions are never half-sent and then repeated. No
    // round trip is needed for that: a server that went away closed the
    // socket, and `with` reads the queued events first, which meets the
    // end of the stream. A confirmed pointer from an earlier request is
    // forgotten.
    screen
        .with(true, |c| {
            c.confirmed_pointer = None;
            require_xtest(c)
        })
        .map_err(|error| Stopped { performed: 0, error })?;
    for (i, op) in ops.iter().enumerate() {
        if matches!(op, Op::Wait(_)) {
            // Time passes without a confirming round trip: the pointer may
            // be moved meanwhile (a person on a viewer), so it is asked after.
            let _ = screen.with(false, |c| {
                c.confirmed_pointer = None;
                Ok(())
            });
        }
        run_op(screen, op).map_err(|error| Stopped { performed: i, error })?;
    }
    Ok(())
}

fn run_op(screen: &ScreenConn, op: &Op) -> Result<(), XError> {
    match op {
        Op::Move(p) => screen.with(false, |c| {
            motion(c, *p)?;
            confirm(c)
        }),
        Op::Click { at, button: b, count, modifiers } => {
            let n = button_number(*b);
            let before = screen.with(false, |c| {
                if let Some(p) = at {
                    motion(c, *p)?;
                }
                focus::now(c)
            })?;
            let clicked = with_modifiers(screen, modifiers, || {
                for i in 0..*count {
                    if i > 0 {
                        std::thread::sleep(crate::input::MULTI_CLICK_GAP);
                    }
                    screen.with(false, |c| {
                        button(c, n, true)?;
                        button(c, n, false)?;
                        confirm(c)
                    })?;
                }
                Ok(())
            });
            clicked.and_then(|()| focus::follow(screen, before))
        }
        Op::Button { at, button: b, down } => {
            let before = screen.with(false, |c| {
                if let Some(p) = at {
                    motion(c, *p)?;
                }
                let before = focus::now(c)?;
                button(c, button_number(*b), *down)?;
                confirm(c)?;
                Ok(before)
            })?;
            if *down { focus::follow(screen, before) } else { Ok(()) }
        }
        Op::Drag { path, button: b, modifiers, step } => {
            let n = button_number(*b);
            let Some((first, rest)) = path.split_first() else { return Ok(()) };
            screen.with(false, |c| motion(c, *first))?;
            with_modifiers(screen, modifiers, || {
                screen.with(false, |c| {
                    button(c, n, true)?;
                    confirm(c)
                })?;
                let moved = (|| {
                    for p in rest {
                        if !step.is_zero() {
                            std::thread::sleep(*step);
                        }
                        screen.with(false, |c| {
                            motion(c, *p)?;
                            if step.is_zero() {
                                c.c.flush().map_err(XError::from)
                            } else {
                                confirm(c)
                            }
                        })?;
                    }
                    Ok(())
                })();
                if !step.is_zero() {
                    std::thread::sleep(*step);
                }
                // The button comes up even when a move failed.
                let released = screen.with(false, |c| {
                    button(c, n, false)?;
                    confirm(c)
                });
                moved.and(released)
            })
        }
        Op::Scroll { at, dx, dy, modifiers } => {
            if let Some(p) = at {
                screen.with(false, |c| motion(c, *p))?;
            }
            with_modifiers(screen, modifiers, || {
                screen.with(false, |c| {
                    let vertical = if *dy < 0 { 4 } else { 5 };
                    let horizontal = if *dx < 0 { 6 } else { 7 };
                    for (n, times) in
                        [(vertical, dy.unsigned_abs()), (horizontal, dx.unsigned_abs())]
                    {
                        for _ in 0..times {
                            button(c, n, true)?;
                            button(c, n, false)?;
                        }
                    }
                    confirm(c)
                })
            })
        }
        Op::Type(syms) => type_text(screen, syms),
        Op::Key { chord, repeat } => {
            let codes = chord_codes(screen, chord)?;
            screen.with(false, |c| {
                mark_used(c, &codes);
                for _ in 0..*repeat {
                    for &code in &codes {
                        key(c, code, true)?;
                    }
                    for &code in codes.iter().rev() {
                        key(c, code, false)?;
                    }
                }
                confirm(c)
            })
        }
        Op::KeyDown(chord) => {
            let codes = chord_codes(screen, chord)?;
            screen.with(false, |c| {
                mark_used(c, &codes);
                set_held(c, &codes, true);
                for &code in &codes {
                    key(c, code, true)?;
                }
                confirm(c)
            })
        }
        Op::KeyUp(chord) => {
            let codes = chord_codes(screen, chord)?;
            screen.with(false, |c| {
                mark_used(c, &codes);
                for &code in codes.iter().rev() {
                    key(c, code, false)?;
                }
                set_held(c, &codes, false);
                confirm(c)
            })
        }
        Op::Hold { chord, duration } => {
            let codes = chord_codes(screen, chord)?;
            screen.with(false, |c| {
                mark_used(c, &codes);
                set_held(c, &codes, true);
                for &code in &codes {
                    key(c, code, true)?;
                }
                confirm(c)
            })?;
            std::thread::sleep(*duration);
            screen.with(false, |c| {
                for &code in codes.iter().rev() {
                    key(c, code, false)?;
                }
                set_held(c, &codes, false);
                confirm(c)
            })
        }
        Op::Wait(d) => {
            std::thread::sleep(*d);
            Ok(())
        }
    }
}

fn mark_used(c: &mut Conn, codes: &[u8]) {
    if let Some(kb) = c.keyboard.as_mut() {
        for &code in codes {
            kb.used(code);
        }
    }
}

fn set_held(c: &mut Conn, codes: &[u8], held: bool) {
    if let Some(kb) = c.keyboard.as_mut() {
        for &code in codes {
            kb.set_held(code, held);
        }
    }
}

/// Types keysyms exactly: keys of the layout where they exist (with Shift for
/// level 2), keycodes of the pool otherwise, all mapped before the first key
/// event and unchanged until the last, then sent in one burst confirmed by
/// one round trip. Caps Lock, if on, is switched off for the typing and back
/// on after.
fn type_text(screen: &ScreenConn, syms: &[u32]) -> Result<(), XError> {
    if syms.is_empty() {
        return Ok(());
    }
    let presses = resolve_all(screen, syms, false)?;
    let (shift, mode) = screen.with(false, |c| {
        let kb = keyboard::keyboard(c)?;
        Ok((kb.find(sym::SHIFT_L).map(|p| p.code), kb.mode_switch()))
    })?;
    let shift = match shift {
        None if presses.iter().any(|p| p.shift) => {
            return Err(XError::Unsupported("the keyboard has no Shift key".into()));
        }
        s => s,
    };
    let mode = match mode {
        None if presses.iter().any(|p| p.group2) => {
            return Err(XError::Failed(
                "a keysym was put in a group the keyboard cannot reach".into(),
            ));
        }
        m => m,
    };
    let caps = screen.with(false, |c| {
        let mask = c.c.query_pointer(c.root)?.reply()?.mask;
        if !mask.contains(KeyButMask::LOCK) {
            return Ok(None);
        }
        let Some(p) = keyboard::keyboard(c)?.find(sym::CAPS_LOCK) else { return Ok(None) };
        key(c, p.code, true)?;
        key(c, p.code, false)?;
        Ok(Some(p.code))
    })?;
    let typed = screen.with(false, |c| {
        let codes: Vec<u8> = presses.iter().map(|p| p.code).collect();
        mark_used(c, &codes);
        for p in &presses {
            let held: Vec<u8> = [(p.group2, mode), (p.shift, shift)]
                .into_iter()
                .filter_map(|(needed, code)| code.filter(|_| needed))
                .collect();
            for &m in &held {
                key(c, m, true)?;
            }
            key(c, p.code, true)?;
            key(c, p.code, false)?;
            for &m in held.iter().rev() {
                key(c, m, false)?;
            }
        }
        confirm(c)
    });
    let restored = match caps {
        Some(code) => screen.with(false, |c| {
            key(c, code, true)?;
            key(c, code, false)?;
            confirm(c)
        }),
        None => Ok(()),
    };
    typed.and(restored)
}

/// Waits until the screen's pixels stay the same for `quiet_ms`, at most
/// `timeout_ms`. Polls the frame hash (an in-place MIT-SHM capture and an
/// xxh3, about a millisecond each at 1280x800).
pub fn settle(screen: &ScreenConn, s: Settle) -> Result<bool, XError> {
    screen.settle(s)
}
