//! Which keycode gives a keysym, and spare keycodes for keysyms no key gives.
//!
//! A keysym that the layout has at level 1 or 2 of some key is typed with
//! that key (with Shift for level 2). Any other keysym (`ж` on a US layout,
//! `中`, F13 on Xvfb) gets one of the **spare keycodes**, the keycodes with no
//! keysym at all, remapped to `[keysym, keysym]` so Shift and Caps Lock do
//! not change it.
//!
//! Remapping races with clients: a client decodes a key event with the
//! mapping it has when it gets to the event, and it refreshes its mapping as
//! soon as it reads the `MappingNotify`, which may be before it decoded key
//! events that were sent earlier. So a keycode is never re-pointed while
//! events that used it may still be undecoded:
//!
//! - each distinct keysym gets its own spare keycode, and keeps it (a keysym
//!   typed again reuses its keycode without any remapping);
//! - when every spare is taken, the least recently used one is recycled, but
//!   only once a server round trip has followed its last use (the server has
//!   sent the events) and [`SETTLE`] has passed since (the clients have had
//!   time to read them);
//! - a keycode held down by `key_down` is never recycled.
//!
//! The settle is a bound on how far behind a client may be, not a proof: a
//! client stalled for longer than [`SETTLE`] while a text with more distinct
//! missing keysyms than there are spares (19 on Xvfb) is typed can still
//! decode a recycled keycode with its new keysym. No general way exists to
//! learn when another client has decoded its events (xterm, for one, does not
//! answer `_NET_WM_PING`). So the cost is time, paid only by such texts: each
//! further 19 distinct missing characters wait up to a second. Texts within
//! the spare count (and any text typed again) never recycle and never wait.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use x11rb::protocol::xproto::ConnectionExt as _;

use super::{Conn, XError};

/// How long after a spare keycode's last use (confirmed by a round trip) it
/// may be re-pointed to another keysym. Clients stall for hundreds of
/// milliseconds on first use of a character (xterm loading its locale
/// converters, a browser its fallback fonts), and events queued behind such a
/// stall are decoded late; 200 ms was measured to be too short for xterm.
pub const SETTLE: Duration = Duration::from_millis(1000);

/// A keycode with no keysyms of its own, lent to keysyms the layout lacks.
#[derive(Debug, Clone)]
struct Spare {
    code: u8,
    /// The keysym it is mapped to now.
    sym: Option<u32>,
    /// When a round trip last confirmed that events using it were sent.
    last_used: Option<Instant>,
    /// Events using it were sent after the last round trip.
    in_flight: bool,
    /// Pressed by `key_down` and not released.
    held: bool,
}

/// How to press a keysym.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyPress {
    /// The keycode.
    pub code: u8,
    /// Whether Shift must be held for it.
    pub shift: bool,
}

/// The outcome of resolving a keysym.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolved {
    /// Press this (a spare may just have been re-pointed; see
    /// [`Keyboard::take_remaps`]).
    Press(KeyPress),
    /// Every spare is in use or still settling: try again at this time.
    WaitUntil(Instant),
    /// No spare keycode can ever be had (none exist, or all are held).
    NoSpare,
}

/// The keyboard map as this connection knows it.
#[derive(Debug, Clone)]
pub struct Keyboard {
    min: u8,
    per: usize,
    syms: Vec<u32>,
    lookup: HashMap<u32, KeyPress>,
    spares: Vec<Spare>,
    /// Spare re-pointings not yet sent to the server: `(keycode, keysym)`.
    remaps: Vec<(u8, u32)>,
    /// Another client changed the mapping: reload before the next use.
    pub stale: bool,
}

impl Keyboard {
    /// Loads the server's keyboard mapping.
    pub fn load(conn: &Conn) -> Result<Self, XError> {
        let setup = x11rb::connection::Connection::setup(&conn.c);
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let reply = conn.c.get_keyboard_mapping(min, max - min + 1)?.reply()?;
        let mut kb = Self {
            min,
            per: usize::from(reply.keysyms_per_keycode).max(1),
            syms: reply.keysyms,
            lookup: HashMap::new(),
            spares: Vec::new(),
            remaps: Vec::new(),
            stale: false,
        };
        kb.spares = kb
            .codes()
            .filter(|&code| kb.row(code).iter().all(|&s| s == 0))
            .map(|code| Spare { code, sym: None, last_used: None, in_flight: false, held: false })
            .collect();
        kb.rebuild_lookup();
        Ok(kb)
    }

    /// Reloads after another client changed the mapping, keeping the spares
    /// that still hold what we put there.
    pub fn reload(&mut self, conn: &Conn) -> Result<(), XError> {
        let fresh = Self::load(conn)?;
        let mut spares = std::mem::take(&mut self.spares);
        spares.retain(|s| {
            let row = fresh.row(s.code);
            match s.sym {
                None => row.iter().all(|&k| k == 0),
                Some(sym) => row.iter().all(|&k| k == sym || k == 0) && row.first() == Some(&sym),
            }
        });
        *self = Self { spares, ..fresh };
        self.rebuild_lookup();
        Ok(())
    }

    fn codes(&self) -> impl Iterator<Item = u8> + use<> {
        let count = self.syms.len() / self.per;
        let min = self.min;
        (0..count).filter_map(move |i| u8::try_from(usize::from(min) + i).ok())
    }

    fn row(&self, code: u8) -> &[u32] {
        let i = usize::from(code - self.min) * self.per;
        self.syms.get(i..i + self.per).unwrap_or(&[])
    }

    /// Level 1 of any key wins over level 2 of another; lower keycodes win
    /// among equals. Our spares are found like any other key.
    fn rebuild_lookup(&mut self) {
        let mut lookup = HashMap::new();
        for (column, shift) in [(0, false), (1, true)] {
            for code in self.codes() {
                if let Some(&sym) = self.row(code).get(column)
                    && sym != 0
                {
                    lookup.entry(sym).or_insert(KeyPress { code, shift });
                }
            }
        }
        self.lookup = lookup;
    }

    /// The keycode of `sym`, when some key has it at level 1 or 2.
    pub fn find(&self, sym: u32) -> Option<KeyPress> {
        self.lookup.get(&sym).copied()
    }

    /// How to press `sym`: its key, or a spare re-pointed to it. A re-pointed
    /// spare is queued in [`Self::take_remaps`], which must be sent before any
    /// event that uses it.
    pub fn resolve(&mut self, sym: u32, now: Instant) -> Resolved {
        if let Some(p) = self.find(sym) {
            return Resolved::Press(p);
        }
        // Candidates: not held, not used since the last round trip; the
        // never-used first, then the least recently used.
        let candidate = self
            .spares
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.held && !s.in_flight)
            .min_by_key(|(_, s)| (s.sym.is_some(), s.last_used));
        let Some((i, spare)) = candidate else {
            return if self.spares.iter().any(|s| !s.held) {
                // All free spares were used in events not yet confirmed by a
                // round trip: the caller confirms, then tries again.
                Resolved::WaitUntil(now)
            } else {
                Resolved::NoSpare
            };
        };
        if let Some(last) = spare.last_used
            && spare.sym.is_some()
        {
            let ready = last + SETTLE;
            if ready > now {
                return Resolved::WaitUntil(ready);
            }
        }
        let code = spare.code;
        if let Some(old) = self.spares[i].sym
            && self.lookup.get(&old).is_some_and(|p| p.code == code)
        {
            self.lookup.remove(&old);
        }
        self.spares[i].sym = Some(sym);
        let i_row = usize::from(code - self.min) * self.per;
        for (j, slot) in self.syms[i_row..i_row + self.per].iter_mut().enumerate() {
            *slot = if j < 2 { sym } else { 0 };
        }
        self.lookup.insert(sym, KeyPress { code, shift: false });
        self.remaps.push((code, sym));
        Resolved::Press(KeyPress { code, shift: false })
    }

    /// The spare re-pointings to send, in order.
    pub fn take_remaps(&mut self) -> Vec<(u8, u32)> {
        std::mem::take(&mut self.remaps)
    }

    /// Notes that an event using `code` is about to be sent.
    pub fn used(&mut self, code: u8) {
        if let Some(s) = self.spares.iter_mut().find(|s| s.code == code) {
            s.in_flight = true;
        }
    }

    /// Notes that a round trip has confirmed every event sent so far.
    pub fn confirmed(&mut self, at: Instant) {
        for s in &mut self.spares {
            if s.in_flight {
                s.in_flight = false;
                s.last_used = Some(at);
            }
        }
    }

    /// Marks `code` as held down (or released).
    pub fn set_held(&mut self, code: u8, held: bool) {
        if let Some(s) = self.spares.iter_mut().find(|s| s.code == code) {
            s.held = held;
        }
    }

    /// How many spare keycodes there are.
    pub fn spare_count(&self) -> usize {
        self.spares.len()
    }
}

/// Sends the queued spare re-pointings, each as its own
/// `ChangeKeyboardMapping` (keycodes in between are left alone), and notes
/// the `MappingNotify` each will cause so it is not taken for someone else's.
pub fn send_remaps(conn: &mut Conn) -> Result<(), XError> {
    let Some(kb) = conn.keyboard.as_mut() else { return Ok(()) };
    let remaps = kb.take_remaps();
    for (code, sym) in remaps {
        conn.c.change_keyboard_mapping(1, code, 2, &[sym, sym])?;
        conn.own_mapping_changes.push_back((code, 1));
    }
    Ok(())
}

/// The connection's keyboard map, loaded (or reloaded) as needed.
pub fn keyboard(conn: &mut Conn) -> Result<&mut Keyboard, XError> {
    match &mut conn.keyboard {
        None => conn.keyboard = Some(Keyboard::load(conn)?),
        Some(kb) if kb.stale => {
            let mut kb = kb.clone();
            kb.reload(conn)?;
            conn.keyboard = Some(kb);
        }
        Some(_) => {}
    }
    conn.keyboard.as_mut().ok_or_else(|| XError::Failed("no keyboard map".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A map with keycodes 8..=13, 2 keysyms each: 8 and 11 and 13 are spare.
    fn kb() -> Keyboard {
        let syms = vec![
            0, 0, // 8
            0x61, 0x41, // 9: a A
            0x31, 0x21, // 10: 1 !
            0, 0, // 11
            0xffe1, 0, // 12: Shift_L
            0, 0, // 13
        ];
        let mut kb = Keyboard {
            min: 8,
            per: 2,
            syms,
            lookup: HashMap::new(),
            spares: Vec::new(),
            remaps: Vec::new(),
            stale: false,
        };
        kb.spares = [8u8, 11, 13]
            .iter()
            .map(|&code| Spare { code, sym: None, last_used: None, in_flight: false, held: false })
            .collect();
        kb.rebuild_lookup();
        kb
    }

    #[test]
    fn layout_keys_with_shift_for_level_two() {
        let mut k = kb();
        let now = Instant::now();
        assert_eq!(k.resolve(0x61, now), Resolved::Press(KeyPress { code: 9, shift: false }));
        assert_eq!(k.resolve(0x41, now), Resolved::Press(KeyPress { code: 9, shift: true }));
        assert_eq!(k.resolve(0x21, now), Resolved::Press(KeyPress { code: 10, shift: true }));
        assert!(k.take_remaps().is_empty());
    }

    #[test]
    fn distinct_keysyms_get_distinct_spares_and_keep_them() {
        let mut k = kb();
        let now = Instant::now();
        let zhe = 0x0100_0436;
        let Resolved::Press(p1) = k.resolve(zhe, now) else { panic!() };
        k.used(p1.code);
        let Resolved::Press(p2) = k.resolve(0xe9, now) else { panic!() };
        assert_ne!(p1.code, p2.code);
        // The same keysym again: same keycode, no new remapping.
        assert_eq!(k.resolve(zhe, now), Resolved::Press(p1));
        assert_eq!(k.take_remaps(), vec![(p1.code, zhe), (p2.code, 0xe9)]);
    }

    #[test]
    fn recycling_waits_for_a_round_trip_and_the_settle() {
        let mut k = kb();
        let t0 = Instant::now();
        for sym in [0x100, 0x101, 0x102] {
            let Resolved::Press(p) = k.resolve(sym + 0x0100_0000, t0) else { panic!() };
            k.used(p.code);
        }
        // All three spares carry events not yet confirmed by a round trip.
        assert_eq!(k.resolve(0x0100_0200, t0), Resolved::WaitUntil(t0));
        k.confirmed(t0);
        // Confirmed, but not settled yet.
        assert_eq!(k.resolve(0x0100_0200, t0), Resolved::WaitUntil(t0 + SETTLE));
        // Settled: the least recently used spare is re-pointed.
        let Resolved::Press(p) = k.resolve(0x0100_0200, t0 + SETTLE) else { panic!() };
        assert_eq!(p.code, 8);
        assert_eq!(k.find(0x0100_0100), None);
        assert_eq!(k.find(0x0100_0200), Some(KeyPress { code: 8, shift: false }));
    }

    #[test]
    fn held_spares_are_never_recycled() {
        let mut k = kb();
        let t0 = Instant::now();
        for (i, sym) in [0x0100_0100, 0x0100_0101, 0x0100_0102].into_iter().enumerate() {
            let Resolved::Press(p) = k.resolve(sym, t0) else { panic!() };
            k.set_held(p.code, true);
            assert_eq!(usize::from(p.code), [8, 11, 13][i]);
        }
        k.confirmed(t0);
        assert_eq!(k.resolve(0x0100_0300, t0 + SETTLE * 10), Resolved::NoSpare);
        k.set_held(11, false);
        let Resolved::Press(p) = k.resolve(0x0100_0300, t0 + SETTLE * 10) else { panic!() };
        assert_eq!(p.code, 11);
    }
}
