//! Runs checked input [`Op`]s with XTest on a screen's connection: no child
//! process, no fixed sleeps. Events of one action are sent in one burst and
//! confirmed by one round trip; only the waits the caller asked for (`wait`,
//! `hold`, drag steps) pass time, and they pass without the connection lock,
//! so screenshots go on meanwhile.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use holm_proto::guest::{Button, Settle};
use holm_proto::keys::{Chord, sym};
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{self, ConnectionExt as _, KeyButMask};
use x11rb::protocol::xtest;

use super::keyboard::{self, KeyPress, Resolved};
use super::{Conn, ScreenConn, XError};
use crate::input::{Op, Pos};

/// Why a run of actions stopped early.
#[derive(Debug)]
pub struct Stopped {
    /// How many actions ran completely.
    pub performed: usize,
    /// What went wrong.
    pub error: XError,
}

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
/// settling.
fn confirm(c: &mut Conn) -> Result<(), XError> {
    c.sync()?;
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

/// Resolves every keysym of `syms` to keycodes (re-pointing spares as needed,
/// and sending those changes), waiting without the lock when spares are
/// still settling.
fn resolve_all(screen: &ScreenConn, syms: &[u32]) -> Result<Vec<KeyPress>, XError> {
    loop {
        let outcome = screen.with(false, |c| {
            let now = Instant::now();
            let kb = keyboard::keyboard(c)?;
            let mut out = Vec::with_capacity(syms.len());
            for &s in syms {
                match kb.resolve(s, now) {
                    Resolved::Press(p) => out.push(p),
                    Resolved::WaitUntil(t) => {
                        keyboard::send_remaps(c)?;
                        confirm(c)?;
                        return Ok(Err(t));
                    }
                    Resolved::NoSpare => return Err(no_spare(s)),
                }
            }
            keyboard::send_remaps(c)?;
            Ok(Ok(out))
        })?;
        match outcome {
            Ok(presses) => return Ok(presses),
            Err(until) => sleep_until(until),
        }
    }
}

fn no_spare(keysym: u32) -> XError {
    XError::Unsupported(format!(
        "keysym 0x{keysym:x} is on no key, and no spare keycode is free to map it (release keys held with key_down)"
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
    let presses = resolve_all(screen, &syms)?;
    let Some((key, mods)) = presses.split_last() else { return Ok(Vec::new()) };
    let mut codes: Vec<u8> = mods.iter().map(|p| p.code).collect();
    if key.shift && !chord.modifiers.iter().any(|m| matches!(*m, 0xffe1 | 0xffe2)) {
        let shift = resolve_all(screen, &[sym::SHIFT_L])?;
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
    let presses = resolve_all(screen, modifiers)?;
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
    // any action runs, so actions are never half-sent and then repeated.
    screen
        .with(true, |c| {
            require_xtest(c)?;
            c.sync()
        })
        .map_err(|error| Stopped { performed: 0, error })?;
    for (i, op) in ops.iter().enumerate() {
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
            if let Some(p) = at {
                screen.with(false, |c| motion(c, *p))?;
            }
            with_modifiers(screen, modifiers, || {
                screen.with(false, |c| {
                    for _ in 0..*count {
                        button(c, n, true)?;
                        button(c, n, false)?;
                    }
                    confirm(c)
                })
            })
        }
        Op::Button { at, button: b, down } => screen.with(false, |c| {
            if let Some(p) = at {
                motion(c, *p)?;
            }
            button(c, button_number(*b), *down)?;
            confirm(c)
        }),
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
/// level 2), spare keycodes otherwise. Text is sent in bursts: a burst ends
/// when a keysym needs a spare that is still settling, then one round trip
/// confirms it and typing goes on once the spare may be re-pointed. Caps Lock,
/// if on, is switched off for the typing and back on after.
fn type_text(screen: &ScreenConn, syms: &[u32]) -> Result<(), XError> {
    if syms.is_empty() {
        return Ok(());
    }
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
    let typed = type_bursts(screen, syms);
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

fn type_bursts(screen: &ScreenConn, syms: &[u32]) -> Result<(), XError> {
    let mut pos = 0;
    while pos < syms.len() {
        let wait = screen.with(false, |c| {
            let now = Instant::now();
            let shift = keyboard::keyboard(c)?.find(sym::SHIFT_L);
            let mut presses = Vec::new();
            let mut wait = None;
            {
                let kb = keyboard::keyboard(c)?;
                for &s in &syms[pos..] {
                    match kb.resolve(s, now) {
                        Resolved::Press(p) => {
                            kb.used(p.code);
                            presses.push(p);
                        }
                        Resolved::WaitUntil(t) => {
                            wait = Some(t);
                            break;
                        }
                        Resolved::NoSpare => return Err(no_spare(s)),
                    }
                }
            }
            // Re-pointings go first: the server applies them before the
            // key events that follow on the same connection.
            keyboard::send_remaps(c)?;
            for p in &presses {
                let shift = if p.shift { shift.map(|s| s.code) } else { None };
                if let Some(s) = shift {
                    key(c, s, true)?;
                }
                key(c, p.code, true)?;
                key(c, p.code, false)?;
                if let Some(s) = shift {
                    key(c, s, false)?;
                }
            }
            confirm(c)?;
            Ok((presses.len(), wait))
        })?;
        pos += wait.0;
        if let Some(t) = wait.1 {
            sleep_until(t);
        }
    }
    Ok(())
}

/// Waits until the screen's pixels stay the same for `quiet_ms`, at most
/// `timeout_ms`. Polls the frame hash (an in-place MIT-SHM capture and an
/// xxh3, about a millisecond each at 1280x800).
pub fn settle(screen: &ScreenConn, s: Settle) -> Result<bool, XError> {
    let start = Instant::now();
    let deadline = start + Duration::from_millis(u64::from(s.timeout_ms));
    let quiet = Duration::from_millis(u64::from(s.quiet_ms));
    let interval = (quiet / 4).clamp(Duration::from_millis(5), Duration::from_millis(25));
    let mut last = screen.with(true, super::capture::screen_hash)?;
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
        let h = screen.with(true, super::capture::screen_hash)?;
        if h != last {
            last = h;
            since = Instant::now();
        }
    }
}
