//! Which keycode gives a keysym, and a pool of keycodes lent to keysyms no
//! key gives.
//!
//! A keysym that the layout has at level 1 or 2 of some key is typed with
//! that key (with Shift for level 2). Any other keysym (`ж` on a US layout,
//! `中`, F13 on Xvfb) is put on a keycode of the **pool**, four to a keycode:
//! two in the first group (the second typed with Shift) and two in the
//! second, typed with the layout's `Mode_switch` key held (XKB clients see
//! group 2, core clients the modifier `Mode_switch` is on; both decode the
//! third and fourth keysym). The pool is the keycodes in [`NO_KEY_CODE`]
//! that have no keysym or only vendor keysyms, are no modifier and that no
//! other client has grabbed: 55 on Xvfb, so one action can type 220
//! distinct characters the layout lacks.
//!
//! Re-pointing a keycode races with clients: Xlib marks its keymap stale
//! when it *reads* a `MappingNotify` from the socket, so key events it read
//! earlier but has not decoded yet are decoded with the new keysyms, however
//! long ago they were sent. So a keycode is never re-pointed while events
//! that used it may still be undecoded:
//!
//! - all the keycodes one action needs are mapped before its first key
//!   event, and none changes until the action has ended ([`Keyboard::plan`]);
//! - a keysym typed again keeps its keycode (no remapping at all);
//! - fresh keycodes go first; a keycode used before is re-pointed only when
//!   the pool has no fresh one left, least recently used first, and only
//!   [`SETTLE`] after a round trip confirmed its last use;
//! - a keycode held down by `key_down` is never re-pointed.
//!
//! An action needing more distinct missing keysyms than the pool holds is
//! refused before any of its keys is sent, rather than recycling keycodes
//! mid-text, which no client can be relied on to decode.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use x11rb::connection::Connection as _;
use x11rb::errors::ReplyError;
use x11rb::protocol::ErrorKind;
use x11rb::protocol::xproto::{ConnectionExt as _, GrabMode, ModMask};

use super::{Conn, XError};

/// How long after its last use (confirmed by a round trip) a keycode of the
/// pool may be re-pointed to another keysym. Only reached once an action
/// needs a keycode and the pool has no fresh one left; then it bounds how
/// far behind a client may decode (xterm on a saturated machine was measured
/// more than a second behind).
pub const SETTLE: Duration = Duration::from_secs(3);

/// The keycodes that may be lent (X keycodes of Xvfb's evdev set): keys
/// that have no `KeyboardEvent.code` in Chromium (the box's browser gave an
/// empty `code` for each, and its key table has none; keys with a code may
/// be commands: `BrowserBack` navigates, `Copy`, `Paste` and `BrowserSearch`
/// act, whatever keysym the key carries), and the four Japanese character
/// keys (`Lang5`, `IntlRo`, `International6`, `IntlYen`).
pub const NO_KEY_CODE: [u8; 55] = [
    8, 93, 97, 103, 120, 132, 147, 149, 153, 154, 155, 156, 157, 159, 161, 162, 165, 168, 170, 178,
    183, 184, 185, 186, 208, 210, 211, 212, 213, 219, 220, 221, 222, 223, 224, 226, 227, 228, 229,
    230, 234, 236, 237, 238, 244, 245, 246, 247, 248, 249, 250, 251, 253, 254, 255,
];

/// Vendor keysyms (`XF86AudioMute`, `XF86Launch5`, ...): no text contains
/// them, so a keycode that has only these may be borrowed. The `XF86_Switch_VT`
/// family (`0x1008FE01`..) has server actions and is left alone.
const VENDOR: std::ops::RangeInclusive<u32> = 0x1008_FF00..=0x1008_FFFF;

/// The `Mode_switch` keysym: held, it selects the second group.
const MODE_SWITCH: u32 = 0xff7e;

/// The most unchanged keycodes one request rewrites to join two runs.
const MAX_GAP: usize = 8;

/// Keysyms of one keycode of the pool: group 1 levels 1 and 2, group 2
/// levels 1 and 2 (0: nothing).
pub type Row = [u32; 4];

/// A keycode of the pool.
#[derive(Debug, Clone)]
struct Slot {
    code: u8,
    /// What it gives now.
    syms: Row,
    /// We have mapped it (it no longer holds the keysyms it started with).
    ours: bool,
    /// No other client had a passive grab on it when we took it.
    checked: bool,
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
    /// Whether `Mode_switch` must be held for it (the second group).
    pub group2: bool,
}

impl KeyPress {
    fn at(code: u8, column: usize) -> Self {
        Self { code, shift: column % 2 == 1, group2: column >= 2 }
    }
}

/// How to press one action's keysyms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Keycodes of the pool to map first. Those not yet
    /// [`Keyboard::checked`] must be checked for other clients' grabs first.
    pub remap: Vec<(u8, Row)>,
    /// One press per keysym asked for, in order.
    pub presses: Vec<KeyPress>,
}

/// What a set of keysyms needs before it can be pressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planned {
    /// Map the plan's keycodes, then press.
    Ready(Plan),
    /// Keycodes are needed that were used too recently: plan again then.
    WaitUntil(Instant),
    /// More distinct keysyms are missing than the pool can hold at once.
    TooMany {
        /// Keysyms of the action on no key.
        missing: usize,
        /// How many the pool can take now.
        room: usize,
    },
}

/// Whether a keycode's row gives `want` and nothing else (servers repeat
/// the first group in the second group's columns when there is none).
fn holds(row: &[u32], want: Row) -> bool {
    let at = |i: usize| row.get(i).copied().unwrap_or(0);
    let first = at(0) == want[0] && at(1) == want[1];
    let second = if want[2] == 0 && want[3] == 0 {
        (at(2), at(3)) == (0, 0) || (at(2), at(3)) == (want[0], want[1])
    } else {
        at(2) == want[2] && at(3) == want[3]
    };
    first && second && row.iter().skip(4).all(|s| *s == 0 || want.contains(s))
}

/// The keyboard map as this connection knows it.
#[derive(Debug, Clone)]
pub struct Keyboard {
    min: u8,
    per: usize,
    syms: Vec<u32>,
    lookup: HashMap<u32, KeyPress>,
    pool: Vec<Slot>,
    /// The layout's `Mode_switch` key, when it has one in the modifier map:
    /// then each keycode of the pool takes four keysyms, else two.
    mode_switch: Option<u8>,
    /// Pool keycodes re-pointed and not yet sent to the server.
    remaps: Vec<u8>,
    /// Another client changed the mapping: reload before the next use.
    pub stale: bool,
}

impl Keyboard {
    /// Loads the server's keyboard mapping and modifier map.
    pub fn load(conn: &Conn) -> Result<Self, XError> {
        let setup = x11rb::connection::Connection::setup(&conn.c);
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let reply = conn.c.get_keyboard_mapping(min, max - min + 1)?.reply()?;
        let modifiers: HashSet<u8> =
            conn.c.get_modifier_mapping()?.reply()?.keycodes.into_iter().collect();
        let per = usize::from(reply.keysyms_per_keycode);
        Ok(Self::new(min, per, reply.keysyms, &modifiers, &NO_KEY_CODE))
    }

    fn new(min: u8, per: usize, syms: Vec<u32>, modifiers: &HashSet<u8>, lendable: &[u8]) -> Self {
        let mut kb = Self {
            min,
            per: per.max(1),
            syms,
            lookup: HashMap::new(),
            pool: Vec::new(),
            mode_switch: None,
            remaps: Vec::new(),
            stale: false,
        };
        kb.mode_switch =
            kb.codes().find(|c| modifiers.contains(c) && kb.row(*c).first() == Some(&MODE_SWITCH));
        kb.pool = kb
            .codes()
            .filter(|code| lendable.contains(code) && !modifiers.contains(code))
            .filter(|&code| kb.row(code).iter().all(|s| *s == 0 || VENDOR.contains(s)))
            .map(|code| Slot {
                code,
                syms: kb.row_of(code),
                ours: false,
                checked: false,
                last_used: None,
                in_flight: false,
                held: false,
            })
            .collect();
        kb.rebuild_lookup();
        kb
    }

    /// Reloads after another client changed the mapping, keeping what we
    /// know of the pool's keycodes that still hold what they held.
    pub fn reload(&mut self, conn: &Conn) -> Result<(), XError> {
        let mut fresh = Self::load(conn)?;
        let mut pool = Vec::new();
        for code in fresh.codes() {
            let old = self.pool.iter().find(|s| s.code == code);
            match (old, fresh.pool.iter().find(|s| s.code == code)) {
                (Some(o), _) if holds(fresh.row(code), o.syms) => pool.push(o.clone()),
                (_, Some(s)) => pool.push(s.clone()),
                _ => {}
            }
        }
        fresh.pool = pool;
        fresh.rebuild_lookup();
        *self = fresh;
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

    /// The first four keysyms of a keycode, the second group empty when the
    /// server merely repeats the first.
    fn row_of(&self, code: u8) -> Row {
        let row = self.row(code);
        let at = |i: usize| row.get(i).copied().unwrap_or(0);
        let mut out = [at(0), at(1), at(2), at(3)];
        if (out[2], out[3]) == (out[0], out[1]) {
            (out[2], out[3]) = (0, 0);
        }
        out
    }

    /// How many keysyms a keycode of the pool takes.
    fn width(&self) -> usize {
        if self.mode_switch.is_some() { 4 } else { 2 }
    }

    /// Level 1 of any key wins over level 2 of another; keys of the layout
    /// win over the pool's; lower keycodes win among equals. Only the pool's
    /// keycodes are pressed in the second group.
    fn rebuild_lookup(&mut self) {
        let mut lookup = HashMap::new();
        for column in [0, 1] {
            for code in self.codes().filter(|c| !self.pool.iter().any(|s| s.code == *c)) {
                if let Some(&sym) = self.row(code).get(column)
                    && sym != 0
                {
                    lookup.entry(sym).or_insert(KeyPress::at(code, column));
                }
            }
        }
        for column in 0..self.width() {
            for slot in &self.pool {
                let sym = slot.syms[column];
                if sym != 0 {
                    lookup.entry(sym).or_insert(KeyPress::at(slot.code, column));
                }
            }
        }
        self.lookup = lookup;
    }

    /// The key of `sym`, when some key has it.
    pub fn find(&self, sym: u32) -> Option<KeyPress> {
        self.lookup.get(&sym).copied()
    }

    /// The layout's `Mode_switch` key, for keysyms in the second group.
    pub fn mode_switch(&self) -> Option<u8> {
        self.mode_switch
    }

    /// What `syms` (one action's keysyms) need before they can be pressed:
    /// the keysyms on no key go onto keycodes of the pool that this action
    /// does not use, fresh ones first, then the least recently used ones
    /// that have settled. Text fills each keycode; a chord (`solo`) wants
    /// each of its keysyms alone on its keycode, on both levels of the first
    /// group, so that Shift in the chord cannot change it.
    pub fn plan(&self, syms: &[u32], solo: bool, now: Instant) -> Planned {
        let pressable = |p: &KeyPress, sym: u32| {
            !solo
                || self
                    .pool
                    .iter()
                    .find(|s| s.code == p.code)
                    .is_none_or(|s| s.syms == [sym, sym, 0, 0])
        };
        let mut seen = HashSet::new();
        let mut found = HashMap::new();
        let mut missing = Vec::new();
        for &sym in syms {
            if !seen.insert(sym) {
                continue;
            }
            match self.find(sym).filter(|p| pressable(p, sym)) {
                Some(p) => {
                    found.insert(sym, p);
                }
                None => missing.push(sym),
            }
        }
        let used: HashSet<u8> = found.values().map(|p| p.code).collect();
        let mut free: Vec<&Slot> = self
            .pool
            .iter()
            .filter(|s| !s.held && !s.in_flight && !used.contains(&s.code))
            .collect();
        // Fresh keycodes first (in keycode order, so neighbours are mapped
        // with one request), then the least recently used.
        free.sort_by_key(|s| (s.ours, s.last_used, s.code));
        let width = self.width();
        let rows: Vec<Row> = if solo {
            missing.iter().map(|&s| [s, s, 0, 0]).collect()
        } else {
            missing
                .chunks(width)
                .map(|c| {
                    let at = |i: usize| c.get(i).copied().unwrap_or(0);
                    // A lone keysym in a group fills both its levels.
                    [
                        at(0),
                        if c.len() > 1 { at(1) } else { at(0) },
                        at(2),
                        if c.len() > 3 { at(3) } else { at(2) },
                    ]
                })
                .collect()
        };
        if free.len() < rows.len() {
            return Planned::TooMany { missing: missing.len(), room: free.len() * width };
        }
        let chosen = &free[..rows.len()];
        if let Some(ready) = chosen
            .iter()
            .filter(|s| s.ours)
            .filter_map(|s| s.last_used.map(|t| t + SETTLE))
            .max()
            .filter(|t| *t > now)
        {
            return Planned::WaitUntil(ready);
        }
        let remap: Vec<(u8, Row)> = chosen.iter().map(|s| s.code).zip(rows).collect();
        for &(code, row) in &remap {
            for (column, &sym) in row.iter().enumerate() {
                if sym != 0 {
                    found.entry(sym).or_insert(KeyPress::at(code, column));
                }
            }
        }
        let presses = syms.iter().filter_map(|s| found.get(s).copied()).collect();
        Planned::Ready(Plan { remap, presses })
    }

    /// Which keycodes of `plan` still need checking for other clients' grabs.
    pub fn unchecked(&self, plan: &Plan) -> Vec<u8> {
        plan.remap
            .iter()
            .map(|(code, _)| *code)
            .filter(|code| self.pool.iter().any(|s| s.code == *code && !s.checked))
            .collect()
    }

    /// Notes the outcome of checking `codes`: the `grabbed` ones leave the
    /// pool for good (a key another client grabbed would never reach the
    /// focused window), the others are checked.
    pub fn checked(&mut self, codes: &[u8], grabbed: &[u8]) {
        self.pool.retain(|s| !grabbed.contains(&s.code));
        for s in &mut self.pool {
            if codes.contains(&s.code) {
                s.checked = true;
            }
        }
        self.rebuild_lookup();
    }

    /// Maps the keycodes of a plan (in our copy; [`send_remaps`] sends them).
    pub fn apply(&mut self, plan: &Plan) {
        for &(code, row) in &plan.remap {
            let i = usize::from(code - self.min) * self.per;
            let end = (i + self.per).min(self.syms.len());
            for (j, slot) in self.syms[i.min(end)..end].iter_mut().enumerate() {
                *slot = row.get(j).copied().unwrap_or(0);
            }
            if let Some(s) = self.pool.iter_mut().find(|s| s.code == code) {
                s.syms = row;
                s.ours = true;
            }
            self.remaps.push(code);
        }
        if !plan.remap.is_empty() {
            self.rebuild_lookup();
        }
    }

    /// The re-pointed keycodes to send, as requests: runs of neighbouring
    /// keycodes `(first, rows)`. A keycode of the pool between two
    /// re-pointed ones joins the run when rewriting it changes nothing.
    pub fn take_remaps(&mut self) -> Vec<(u8, Vec<Row>)> {
        let mut codes = std::mem::take(&mut self.remaps);
        codes.sort_unstable();
        codes.dedup();
        let as_is =
            |c: u8| self.pool.iter().any(|s| s.code == c) && holds(self.row(c), self.row_of(c));
        let mut runs: Vec<(u8, Vec<Row>)> = Vec::new();
        for code in codes {
            if let Some((first, rows)) = runs.last_mut() {
                let next = usize::from(*first) + rows.len();
                let gap: Vec<u8> =
                    (next..usize::from(code)).filter_map(|c| u8::try_from(c).ok()).collect();
                if gap.len() <= MAX_GAP && gap.iter().all(|&c| as_is(c)) {
                    rows.extend(gap.iter().map(|&c| self.row_of(c)));
                    rows.push(self.row_of(code));
                    continue;
                }
            }
            runs.push((code, vec![self.row_of(code)]));
        }
        runs
    }

    /// Notes that an event using `code` is about to be sent.
    pub fn used(&mut self, code: u8) {
        if let Some(s) = self.pool.iter_mut().find(|s| s.code == code) {
            s.in_flight = true;
        }
    }

    /// Notes that a round trip has confirmed every event sent so far.
    pub fn confirmed(&mut self, at: Instant) {
        for s in &mut self.pool {
            if s.in_flight {
                s.in_flight = false;
                s.last_used = Some(at);
            }
        }
    }

    /// Whether events were sent that no round trip has confirmed yet.
    pub fn in_flight(&self) -> bool {
        self.pool.iter().any(|s| s.in_flight)
    }

    /// Marks `code` as held down (or released).
    pub fn set_held(&mut self, code: u8, held: bool) {
        if let Some(s) = self.pool.iter_mut().find(|s| s.code == code) {
            s.held = held;
        }
    }

    /// How many keycodes the pool has.
    pub fn pool_size(&self) -> usize {
        self.pool.len()
    }
}

/// Which of `codes` another client holds a passive grab on, on the root
/// window (where window managers and hot-key programs grab): a `GrabKey` of
/// any modifiers fails with `Access` when any combination is taken. Ours are
/// released at once.
pub fn grabbed_by_others(conn: &Conn, codes: &[u8]) -> Result<Vec<u8>, XError> {
    let cookies = codes
        .iter()
        .map(|&code| {
            conn.c
                .grab_key(true, conn.root, ModMask::ANY, code, GrabMode::ASYNC, GrabMode::ASYNC)
                .map(|cookie| (code, cookie))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut grabbed = Vec::new();
    for (code, cookie) in cookies {
        match cookie.check() {
            Ok(()) => {
                conn.c.ungrab_key(code, conn.root, ModMask::ANY)?;
            }
            Err(ReplyError::X11Error(e)) if e.error_kind == ErrorKind::Access => grabbed.push(code),
            Err(e) => return Err(e.into()),
        }
    }
    conn.c.flush()?;
    Ok(grabbed)
}

/// Sends the queued re-pointings, one `ChangeKeyboardMapping` per run of
/// neighbouring keycodes, and notes the `MappingNotify` each will cause so
/// it is not taken for someone else's.
pub fn send_remaps(conn: &mut Conn) -> Result<(), XError> {
    let Some(kb) = conn.keyboard.as_mut() else { return Ok(()) };
    let width = kb.width();
    for (first, rows) in kb.take_remaps() {
        let count =
            u8::try_from(rows.len()).map_err(|_| XError::Failed("too many keycodes".into()))?;
        let flat: Vec<u32> = rows.iter().flat_map(|r| r[..width].iter().copied()).collect();
        let per = u8::try_from(width).unwrap_or(2);
        conn.c.change_keyboard_mapping(count, first, per, &flat)?;
        conn.own_mapping_changes.push_back((first, count));
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

    const ZHE: u32 = 0x0100_0436;
    const ZHONG: u32 = 0x0100_4E2D;
    const E_ACUTE: u32 = 0xe9;
    const EURO: u32 = 0x0100_20AC;
    const MUTE: u32 = 0x1008_FF12;
    const SHIFT: u32 = 0xffe1;

    /// Keycodes 8..=19, four keysyms each (the second group repeats the
    /// first, as servers report it). The pool is 8, 11, 13, 14, 17: empty,
    /// or vendor keysyms only, and lendable; 15 is lendable but a modifier,
    /// 19 is empty but not lendable, 18 is `Mode_switch`.
    fn keymap(mode_switch: bool) -> Keyboard {
        let two = |a: u32, b: u32| [a, b, a, b];
        let rows = [
            two(0, 0),                                              // 8
            two(0x61, 0x41),                                        // 9: a A
            two(0x31, 0x21),                                        // 10: 1 !
            two(0, 0),                                              // 11
            two(SHIFT, 0),                                          // 12
            two(MUTE, 0),                                           // 13
            two(0, 0),                                              // 14
            two(0, 0),                                              // 15: a modifier
            two(0xffbd, 0),                                         // 16: KP_Equal
            two(0x1008_FF2C, 0x1008_FF15),                          // 17: XF86Eject XF86AudioStop
            two(if mode_switch { MODE_SWITCH } else { 0xffe9 }, 0), // 18
            two(0, 0),                                              // 19
        ];
        let syms = rows.iter().flatten().copied().collect();
        Keyboard::new(8, 4, syms, &[12, 15, 18].into_iter().collect(), &[8, 11, 13, 14, 15, 17])
    }

    fn kb() -> Keyboard {
        keymap(true)
    }

    fn ready(p: Planned) -> Plan {
        match p {
            Planned::Ready(plan) => plan,
            other => panic!("not ready: {other:?}"),
        }
    }

    fn press(code: u8, shift: bool, group2: bool) -> KeyPress {
        KeyPress { code, shift, group2 }
    }

    /// Plans, applies and confirms `syms` as one action typed at `at`.
    fn typed(k: &mut Keyboard, syms: &[u32], at: Instant) -> Plan {
        let plan = ready(k.plan(syms, false, at));
        k.checked(&k.unchecked(&plan), &[]);
        k.apply(&plan);
        for p in &plan.presses {
            k.used(p.code);
        }
        k.confirmed(at);
        plan
    }

    #[test]
    fn the_pool_is_lendable_empty_and_vendor_keycodes_but_no_modifier() {
        let k = kb();
        let codes: Vec<u8> = k.pool.iter().map(|s| s.code).collect();
        assert_eq!(codes, [8, 11, 13, 14, 17]);
        assert_eq!(k.mode_switch(), Some(18));
        // A vendor keysym is pressed on its own key until the key is lent.
        assert_eq!(k.find(MUTE), Some(press(13, false, false)));
    }

    #[test]
    fn layout_keys_with_shift_for_level_two_need_no_mapping() {
        let k = kb();
        let plan = ready(k.plan(&[0x61, 0x41, 0x21], false, Instant::now()));
        assert!(plan.remap.is_empty());
        assert_eq!(
            plan.presses,
            [press(9, false, false), press(9, true, false), press(10, true, false)]
        );
    }

    #[test]
    fn missing_keysyms_fill_fresh_keycodes_four_at_a_time_in_order() {
        let mut k = kb();
        let now = Instant::now();
        let text = [ZHE, 0x61, ZHONG, ZHE, E_ACUTE, EURO, 0x0100_03C8];
        let plan = typed(&mut k, &text, now);
        assert_eq!(
            plan.remap,
            [(8, [ZHE, ZHONG, E_ACUTE, EURO]), (11, [0x0100_03C8, 0x0100_03C8, 0, 0])]
        );
        assert_eq!(
            plan.presses,
            [
                press(8, false, false),
                press(9, false, false),
                press(8, true, false),
                press(8, false, false),
                press(8, false, true),
                press(8, true, true),
                press(11, false, false)
            ]
        );
        assert_eq!(
            k.take_remaps(),
            [(8, vec![[ZHE, ZHONG, E_ACUTE, EURO]]), (11, vec![[0x0100_03C8, 0x0100_03C8, 0, 0]])]
        );
        // Typed again, at once: the same keys, nothing mapped.
        assert_eq!(ready(k.plan(&text, false, now)).presses, plan.presses);
        assert!(ready(k.plan(&text, false, now)).remap.is_empty());
    }

    #[test]
    fn without_a_mode_switch_key_a_keycode_takes_two() {
        let k = keymap(false);
        assert_eq!(k.mode_switch(), None);
        let plan = ready(k.plan(&[ZHE, ZHONG, EURO], false, Instant::now()));
        assert_eq!(plan.remap, [(8, [ZHE, ZHONG, 0, 0]), (11, [EURO, EURO, 0, 0])]);
        assert_eq!(
            k.plan(&[0; 0], false, Instant::now()),
            Planned::Ready(Plan { remap: vec![], presses: vec![] })
        );
        let many: Vec<u32> = (0..11).map(|i| 0x0100_0400 + i).collect();
        assert_eq!(
            k.plan(&many, false, Instant::now()),
            Planned::TooMany { missing: 11, room: 10 }
        );
    }

    #[test]
    fn a_chord_gets_its_keysym_alone_on_a_keycode() {
        let mut k = kb();
        let now = Instant::now();
        typed(&mut k, &[ZHE, ZHONG], now);
        // ж shares keycode 8 with 中: with Shift, 8 gives 中, so a chord
        // gets ж on a keycode of its own.
        let plan = ready(k.plan(&[SHIFT, ZHE], true, now));
        assert_eq!(plan.remap, [(11, [ZHE, ZHE, 0, 0])]);
        assert_eq!(plan.presses, [press(12, false, false), press(11, false, false)]);
    }

    #[test]
    fn used_keycodes_are_re_pointed_only_when_no_fresh_one_is_left_and_after_the_settle() {
        let mut k = kb();
        let t0 = Instant::now();
        // Five keycodes, twenty keysyms: the pool is full.
        let first: Vec<u32> = (0..20).map(|i| 0x0100_0400 + i).collect();
        let plan = typed(&mut k, &first, t0);
        assert_eq!(plan.remap.iter().map(|r| r.0).collect::<Vec<_>>(), [8, 11, 13, 14, 17]);
        assert_eq!(k.find(MUTE), None, "13 was lent");
        // One more keysym: a used keycode is needed, not before the settle.
        let t1 = t0 + Duration::from_millis(10);
        assert_eq!(k.plan(&[EURO], false, t1), Planned::WaitUntil(t0 + SETTLE));
        let plan = ready(k.plan(&[EURO], false, t0 + SETTLE));
        assert_eq!(plan.remap, [(8, [EURO, EURO, 0, 0])]);
        // Keycodes the action itself uses are never re-pointed for it.
        let mixed = [first[0], first[4], first[8], first[12], first[16], EURO];
        assert_eq!(k.plan(&mixed, false, t0 + SETTLE), Planned::TooMany { missing: 1, room: 0 });
    }

    #[test]
    fn an_action_needing_more_than_the_pool_is_refused_before_anything_is_mapped() {
        let k = kb();
        let text: Vec<u32> = (0..21).map(|i| 0x0100_0400 + i).collect();
        assert_eq!(
            k.plan(&text, false, Instant::now()),
            Planned::TooMany { missing: 21, room: 20 }
        );
    }

    #[test]
    fn held_keycodes_are_never_re_pointed() {
        let mut k = kb();
        let t0 = Instant::now();
        let plan = ready(k.plan(&[ZHE], true, t0));
        k.apply(&plan);
        k.set_held(8, true);
        k.used(8);
        k.confirmed(t0);
        let others: Vec<u32> = (0..16).map(|i| 0x0100_0500 + i).collect();
        typed(&mut k, &others, t0);
        let plan = ready(k.plan(&[EURO], false, t0 + SETTLE * 10));
        assert_eq!(plan.remap, [(11, [EURO, EURO, 0, 0])]);
        let all: Vec<u32> = others.iter().copied().chain([EURO]).collect();
        assert_eq!(k.plan(&all, false, t0), Planned::TooMany { missing: 1, room: 0 });
    }

    #[test]
    fn grabbed_keycodes_leave_the_pool() {
        let mut k = kb();
        let plan = ready(k.plan(&[ZHE], false, Instant::now()));
        assert_eq!(k.unchecked(&plan), [8]);
        k.checked(&[8], &[8]);
        let plan = ready(k.plan(&[ZHE], false, Instant::now()));
        assert_eq!(plan.remap, [(11, [ZHE, ZHE, 0, 0])]);
        assert_eq!(k.pool_size(), 4);
    }

    #[test]
    fn neighbouring_keycodes_are_mapped_with_one_request() {
        // 8, 9 (a vendor keysym), 10 and 12 are the pool; 11 is a layout key.
        let syms = vec![0, 0, MUTE, 0, 0, 0, 0x61, 0x41, 0, 0];
        let lendable = [8, 9, 10, 11, 12];
        let mut k = Keyboard::new(8, 2, syms, &HashSet::new(), &lendable);
        let remap = |r: Vec<(u8, Row)>| Plan { remap: r, presses: vec![] };
        // 8 and 10, with 9 between: one request, rewriting 9 as it is.
        k.apply(&remap(vec![(8, [ZHE, ZHONG, 0, 0]), (10, [EURO, EURO, 0, 0])]));
        assert_eq!(
            k.take_remaps(),
            [(8, vec![[ZHE, ZHONG, 0, 0], [MUTE, 0, 0, 0], [EURO, EURO, 0, 0]])]
        );
        // 10 and 12: 11 is no keycode of the pool, so it is never rewritten.
        k.apply(&remap(vec![(10, [E_ACUTE, E_ACUTE, 0, 0]), (12, [ZHE, ZHE, 0, 0])]));
        assert_eq!(
            k.take_remaps(),
            [(10, vec![[E_ACUTE, E_ACUTE, 0, 0]]), (12, vec![[ZHE, ZHE, 0, 0]])]
        );
    }

    #[test]
    fn a_row_holds_what_was_put_there_even_when_the_server_repeats_the_first_group() {
        assert!(holds(&[ZHE, ZHE, ZHE, ZHE, 0, 0], [ZHE, ZHE, 0, 0]));
        assert!(holds(&[ZHE, ZHONG, EURO, E_ACUTE, 0], [ZHE, ZHONG, EURO, E_ACUTE]));
        assert!(!holds(&[ZHE, ZHONG, EURO, 0], [ZHE, ZHONG, EURO, E_ACUTE]));
        assert!(!holds(&[ZHE, 0x61], [ZHE, ZHE, 0, 0]));
    }
}
