//! The virtual keyboard's keymap: written here, whole, so the guest knows
//! exactly which key and level gives each keysym.
//!
//! The base is a US layout (letters, digits and punctuation at levels 1 and
//! 2, Shift for level 2), the editing, function, keypad, modifier and media
//! keys of the key table, and `ISO_Level3_Shift` (AltGr, `Mod5`) on the
//! evdev code 84 that xkeyboard-config uses for it. A keysym the base lacks
//! (`é`, `ж`, `中`, F-keys past F24, any hexadecimal keysym) gets a **slot**:
//! level 3 or 4 of one of the 26 letter keys (AltGr, AltGr+Shift), so a
//! keymap carries 52 of them beside all of ASCII.
//!
//! Only letter keys carry slots: Chromium was measured dropping characters
//! put on `Escape`, `minus`, `equal` and `BackSpace` (it decodes the key's
//! code as the key it is on a US keyboard before the character), and letter
//! keys were measured delivering every character.
//!
//! A new keymap is uploaded when a slot is pointed at a new keysym. On
//! Wayland the keymap travels to each client on the same connection, ahead
//! of the key events that use it, so a native client always decodes a key
//! with the keymap it was typed with. Clients of Xwayland learn of a new
//! keymap through the X server's `MappingNotify` and may decode late, as on
//! X11; so a slot that was used is re-pointed only after [`SETTLE`] when an
//! Xwayland server runs, and at once otherwise (see [`Keys::resolve`]).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// How long after its last confirmed use a slot waits before it may carry
/// another keysym, while X11 clients (through Xwayland) may be decoding.
pub const SETTLE: Duration = Duration::from_millis(1000);

/// The Shift modifier's mask.
pub const SHIFT: u32 = 1 << 0;
/// The Lock (Caps Lock) modifier's mask.
pub const LOCK: u32 = 1 << 1;
/// The Control modifier's mask.
pub const CONTROL: u32 = 1 << 2;
/// `Mod1`, Alt.
pub const MOD1: u32 = 1 << 3;
/// `Mod2`, Num Lock.
pub const MOD2: u32 = 1 << 4;
/// `Mod4`, Super.
pub const MOD4: u32 = 1 << 6;
/// `Mod5`, AltGr (the third level).
pub const MOD5: u32 = 1 << 7;

/// One key of the base keymap: its evdev code, its XKB type and its keysyms
/// by level (as XKB names and values).
struct BaseKey {
    code: u32,
    kind: &'static str,
    syms: &'static [(&'static str, u32)],
}

macro_rules! k {
    ($code:expr, $kind:literal, [$(($n:literal, $v:expr)),+]) => {
        BaseKey { code: $code, kind: $kind, syms: &[$(($n, $v)),+] }
    };
}

/// The base keymap. Evdev codes are the Linux input codes; the keymap's
/// keycodes are these plus 8.
const BASE: &[BaseKey] = &[
    k!(1, "ONE_LEVEL", [("Escape", 0xff1b)]),
    k!(2, "TWO_LEVEL", [("1", 0x31), ("exclam", 0x21)]),
    k!(3, "TWO_LEVEL", [("2", 0x32), ("at", 0x40)]),
    k!(4, "TWO_LEVEL", [("3", 0x33), ("numbersign", 0x23)]),
    k!(5, "TWO_LEVEL", [("4", 0x34), ("dollar", 0x24)]),
    k!(6, "TWO_LEVEL", [("5", 0x35), ("percent", 0x25)]),
    k!(7, "TWO_LEVEL", [("6", 0x36), ("asciicircum", 0x5e)]),
    k!(8, "TWO_LEVEL", [("7", 0x37), ("ampersand", 0x26)]),
    k!(9, "TWO_LEVEL", [("8", 0x38), ("asterisk", 0x2a)]),
    k!(10, "TWO_LEVEL", [("9", 0x39), ("parenleft", 0x28)]),
    k!(11, "TWO_LEVEL", [("0", 0x30), ("parenright", 0x29)]),
    k!(12, "TWO_LEVEL", [("minus", 0x2d), ("underscore", 0x5f)]),
    k!(13, "TWO_LEVEL", [("equal", 0x3d), ("plus", 0x2b)]),
    k!(14, "ONE_LEVEL", [("BackSpace", 0xff08)]),
    k!(15, "ONE_LEVEL", [("Tab", 0xff09)]),
    k!(26, "TWO_LEVEL", [("bracketleft", 0x5b), ("braceleft", 0x7b)]),
    k!(27, "TWO_LEVEL", [("bracketright", 0x5d), ("braceright", 0x7d)]),
    k!(28, "ONE_LEVEL", [("Return", 0xff0d)]),
    k!(29, "ONE_LEVEL", [("Control_L", 0xffe3)]),
    k!(39, "TWO_LEVEL", [("semicolon", 0x3b), ("colon", 0x3a)]),
    k!(40, "TWO_LEVEL", [("apostrophe", 0x27), ("quotedbl", 0x22)]),
    k!(41, "TWO_LEVEL", [("grave", 0x60), ("asciitilde", 0x7e)]),
    k!(42, "ONE_LEVEL", [("Shift_L", 0xffe1)]),
    k!(43, "TWO_LEVEL", [("backslash", 0x5c), ("bar", 0x7c)]),
    k!(51, "TWO_LEVEL", [("comma", 0x2c), ("less", 0x3c)]),
    k!(52, "TWO_LEVEL", [("period", 0x2e), ("greater", 0x3e)]),
    k!(53, "TWO_LEVEL", [("slash", 0x2f), ("question", 0x3f)]),
    k!(54, "ONE_LEVEL", [("Shift_R", 0xffe2)]),
    k!(55, "ONE_LEVEL", [("KP_Multiply", 0xffaa)]),
    k!(56, "ONE_LEVEL", [("Alt_L", 0xffe9)]),
    k!(57, "ONE_LEVEL", [("space", 0x20)]),
    k!(58, "ONE_LEVEL", [("Caps_Lock", 0xffe5)]),
    k!(59, "ONE_LEVEL", [("F1", 0xffbe)]),
    k!(60, "ONE_LEVEL", [("F2", 0xffbf)]),
    k!(61, "ONE_LEVEL", [("F3", 0xffc0)]),
    k!(62, "ONE_LEVEL", [("F4", 0xffc1)]),
    k!(63, "ONE_LEVEL", [("F5", 0xffc2)]),
    k!(64, "ONE_LEVEL", [("F6", 0xffc3)]),
    k!(65, "ONE_LEVEL", [("F7", 0xffc4)]),
    k!(66, "ONE_LEVEL", [("F8", 0xffc5)]),
    k!(67, "ONE_LEVEL", [("F9", 0xffc6)]),
    k!(68, "ONE_LEVEL", [("F10", 0xffc7)]),
    k!(69, "ONE_LEVEL", [("Num_Lock", 0xff7f)]),
    k!(70, "ONE_LEVEL", [("Scroll_Lock", 0xff14)]),
    k!(71, "ONE_LEVEL", [("KP_7", 0xffb7)]),
    k!(72, "ONE_LEVEL", [("KP_8", 0xffb8)]),
    k!(73, "ONE_LEVEL", [("KP_9", 0xffb9)]),
    k!(74, "ONE_LEVEL", [("KP_Subtract", 0xffad)]),
    k!(75, "ONE_LEVEL", [("KP_4", 0xffb4)]),
    k!(76, "ONE_LEVEL", [("KP_5", 0xffb5)]),
    k!(77, "ONE_LEVEL", [("KP_6", 0xffb6)]),
    k!(78, "ONE_LEVEL", [("KP_Add", 0xffab)]),
    k!(79, "ONE_LEVEL", [("KP_1", 0xffb1)]),
    k!(80, "ONE_LEVEL", [("KP_2", 0xffb2)]),
    k!(81, "ONE_LEVEL", [("KP_3", 0xffb3)]),
    k!(82, "ONE_LEVEL", [("KP_0", 0xffb0)]),
    k!(83, "ONE_LEVEL", [("KP_Decimal", 0xffae)]),
    k!(84, "ONE_LEVEL", [("ISO_Level3_Shift", 0xfe03)]),
    k!(87, "ONE_LEVEL", [("F11", 0xffc8)]),
    k!(88, "ONE_LEVEL", [("F12", 0xffc9)]),
    k!(96, "ONE_LEVEL", [("KP_Enter", 0xff8d)]),
    k!(97, "ONE_LEVEL", [("Control_R", 0xffe4)]),
    k!(98, "ONE_LEVEL", [("KP_Divide", 0xffaf)]),
    k!(99, "ONE_LEVEL", [("Print", 0xff61)]),
    k!(100, "ONE_LEVEL", [("Alt_R", 0xffea)]),
    k!(102, "ONE_LEVEL", [("Home", 0xff50)]),
    k!(103, "ONE_LEVEL", [("Up", 0xff52)]),
    k!(104, "ONE_LEVEL", [("Prior", 0xff55)]),
    k!(105, "ONE_LEVEL", [("Left", 0xff51)]),
    k!(106, "ONE_LEVEL", [("Right", 0xff53)]),
    k!(107, "ONE_LEVEL", [("End", 0xff57)]),
    k!(108, "ONE_LEVEL", [("Down", 0xff54)]),
    k!(109, "ONE_LEVEL", [("Next", 0xff56)]),
    k!(110, "ONE_LEVEL", [("Insert", 0xff63)]),
    k!(111, "ONE_LEVEL", [("Delete", 0xffff)]),
    k!(113, "ONE_LEVEL", [("XF86AudioMute", 0x1008_ff12)]),
    k!(114, "ONE_LEVEL", [("XF86AudioLowerVolume", 0x1008_ff11)]),
    k!(115, "ONE_LEVEL", [("XF86AudioRaiseVolume", 0x1008_ff13)]),
    k!(119, "ONE_LEVEL", [("Pause", 0xff13)]),
    k!(125, "ONE_LEVEL", [("Super_L", 0xffeb)]),
    k!(126, "ONE_LEVEL", [("Super_R", 0xffec)]),
    k!(127, "ONE_LEVEL", [("Menu", 0xff67)]),
    k!(158, "ONE_LEVEL", [("XF86Back", 0x1008_ff26)]),
    k!(159, "ONE_LEVEL", [("XF86Forward", 0x1008_ff27)]),
    k!(163, "ONE_LEVEL", [("XF86AudioNext", 0x1008_ff17)]),
    k!(164, "ONE_LEVEL", [("XF86AudioPlay", 0x1008_ff14)]),
    k!(165, "ONE_LEVEL", [("XF86AudioPrev", 0x1008_ff16)]),
    k!(166, "ONE_LEVEL", [("XF86AudioStop", 0x1008_ff15)]),
    k!(173, "ONE_LEVEL", [("XF86Refresh", 0x1008_ff29)]),
    k!(183, "ONE_LEVEL", [("F13", 0xffca)]),
    k!(184, "ONE_LEVEL", [("F14", 0xffcb)]),
    k!(185, "ONE_LEVEL", [("F15", 0xffcc)]),
    k!(186, "ONE_LEVEL", [("F16", 0xffcd)]),
    k!(187, "ONE_LEVEL", [("F17", 0xffce)]),
    k!(188, "ONE_LEVEL", [("F18", 0xffcf)]),
    k!(189, "ONE_LEVEL", [("F19", 0xffd0)]),
    k!(190, "ONE_LEVEL", [("F20", 0xffd1)]),
    k!(191, "ONE_LEVEL", [("F21", 0xffd2)]),
    k!(192, "ONE_LEVEL", [("F22", 0xffd3)]),
    k!(193, "ONE_LEVEL", [("F23", 0xffd4)]),
    k!(194, "ONE_LEVEL", [("F24", 0xffd5)]),
];

/// The letter keys, in order, with their letter: they carry the slots.
const LETTERS: [(u32, u8); 26] = [
    (30, b'a'),
    (48, b'b'),
    (46, b'c'),
    (32, b'd'),
    (18, b'e'),
    (33, b'f'),
    (34, b'g'),
    (35, b'h'),
    (23, b'i'),
    (36, b'j'),
    (37, b'k'),
    (38, b'l'),
    (50, b'm'),
    (49, b'n'),
    (24, b'o'),
    (25, b'p'),
    (16, b'q'),
    (19, b'r'),
    (31, b's'),
    (20, b't'),
    (22, b'u'),
    (47, b'v'),
    (17, b'w'),
    (45, b'x'),
    (21, b'y'),
    (44, b'z'),
];

/// The modifier map: which real modifier each modifier key sets.
const MODIFIER_KEYS: &[(u32, u32)] = &[
    (42, SHIFT),
    (54, SHIFT),
    (58, LOCK),
    (29, CONTROL),
    (97, CONTROL),
    (56, MOD1),
    (100, MOD1),
    (69, MOD2),
    (125, MOD4),
    (126, MOD4),
    (84, MOD5),
];

/// The real modifier a modifier key's code sets, if it is one.
pub fn modifier_mask(code: u32) -> Option<u32> {
    MODIFIER_KEYS.iter().find(|(c, _)| *c == code).map(|(_, m)| *m)
}

/// How to press a keysym: an evdev code, and the modifiers its level needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Press {
    /// The evdev code.
    pub code: u32,
    /// The modifiers that select the level: none, Shift, Mod5 or both.
    pub mods: u32,
}

/// The outcome of resolving a keysym.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolved {
    /// Press this (a slot may just have been re-pointed: upload the keymap
    /// before the key).
    Press(Press),
    /// Every slot is in use or still settling: try again at this time.
    WaitUntil(Instant),
    /// No slot can ever be had (all are held down).
    NoSlot,
}

/// Level 3 or 4 of a letter key, lent to keysyms the base lacks.
#[derive(Debug, Clone)]
struct Slot {
    /// Index into [`LETTERS`].
    letter: usize,
    /// Level 4 (AltGr+Shift) rather than 3.
    shifted: bool,
    sym: Option<u32>,
    /// When a round trip last confirmed that events using it were sent.
    last_used: Option<Instant>,
    /// Events using it were sent after the last round trip.
    in_flight: bool,
    /// Pressed by `key_down` and not released.
    held: bool,
}

impl Slot {
    fn press(&self) -> Press {
        Press { code: LETTERS[self.letter].0, mods: MOD5 | if self.shifted { SHIFT } else { 0 } }
    }
}

/// The keymap this keyboard has, and where each keysym is.
#[derive(Debug, Clone)]
pub struct Keys {
    base: HashMap<u32, Press>,
    slots: Vec<Slot>,
    /// A slot changed since the keymap was last uploaded.
    pub dirty: bool,
}

impl Default for Keys {
    fn default() -> Self {
        Self::new()
    }
}

impl Keys {
    /// The base keymap with every slot free.
    pub fn new() -> Self {
        let mut base = HashMap::new();
        for key in BASE {
            for (level, (_, sym)) in key.syms.iter().enumerate() {
                let mods = if level == 1 { SHIFT } else { 0 };
                base.entry(*sym).or_insert(Press { code: key.code, mods });
            }
        }
        for (code, letter) in LETTERS {
            base.insert(u32::from(letter), Press { code, mods: 0 });
            base.insert(u32::from(letter.to_ascii_uppercase()), Press { code, mods: SHIFT });
        }
        let slots = (0..LETTERS.len())
            .flat_map(|letter| [false, true].map(|shifted| (letter, shifted)))
            .map(|(letter, shifted)| Slot {
                letter,
                shifted,
                sym: None,
                last_used: None,
                in_flight: false,
                held: false,
            })
            .collect();
        Self { base, slots, dirty: true }
    }

    /// How many slots there are.
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// Where `sym` is now, without changing anything.
    pub fn find(&self, sym: u32) -> Option<Press> {
        self.base
            .get(&sym)
            .copied()
            .or_else(|| self.slots.iter().find(|s| s.sym == Some(sym)).map(Slot::press))
    }

    /// How to press `sym`: its base key, its slot, or a slot re-pointed to it
    /// (which sets [`Self::dirty`]). A used slot is re-pointed once a round
    /// trip has followed its last use and, when `settle` (an Xwayland server
    /// runs), [`SETTLE`] has passed since.
    pub fn resolve(&mut self, sym: u32, now: Instant, settle: bool) -> Resolved {
        if let Some(p) = self.find(sym) {
            return Resolved::Press(p);
        }
        let candidate = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.held && !s.in_flight)
            .min_by_key(|(_, s)| (s.sym.is_some(), s.last_used));
        let Some((i, slot)) = candidate else {
            return if self.slots.iter().any(|s| !s.held) {
                Resolved::WaitUntil(now)
            } else {
                Resolved::NoSlot
            };
        };
        if settle
            && slot.sym.is_some()
            && let Some(ready) = slot.last_used.map(|t| t + SETTLE)
            && ready > now
        {
            return Resolved::WaitUntil(ready);
        }
        self.slots[i].sym = Some(sym);
        self.dirty = true;
        Resolved::Press(self.slots[i].press())
    }

    /// Notes that an event using `press` is about to be sent.
    pub fn used(&mut self, press: Press) {
        if let Some(s) = self.slot_of(press) {
            s.in_flight = true;
        }
    }

    /// Notes that a round trip has confirmed every event sent so far.
    pub fn confirmed(&mut self, at: Instant) {
        for s in &mut self.slots {
            if s.in_flight {
                s.in_flight = false;
                s.last_used = Some(at);
            }
        }
    }

    /// Marks the slots on key `code` (if it is a letter key) as held down,
    /// or released: both its levels, whichever the held keysym is on.
    pub fn set_held(&mut self, code: u32, held: bool) {
        for s in self.slots.iter_mut().filter(|s| LETTERS[s.letter].0 == code) {
            s.held = held;
        }
    }

    fn slot_of(&mut self, press: Press) -> Option<&mut Slot> {
        if press.mods & MOD5 == 0 {
            return None;
        }
        let shifted = press.mods & SHIFT != 0;
        self.slots.iter_mut().find(|s| LETTERS[s.letter].0 == press.code && s.shifted == shifted)
    }

    /// The keymap, as XKB text, NUL-terminated as the protocol wants it.
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(16 * 1024);
        out.push_str(
            "xkb_keymap {\n  xkb_keycodes \"holm\" {\n    minimum = 8;\n    maximum = 255;\n",
        );
        let codes = BASE.iter().map(|k| k.code).chain(LETTERS.iter().map(|(c, _)| *c));
        for code in codes {
            let _ = writeln!(out, "    <K{code}> = {};", code + 8);
        }
        out.push_str("  };\n  xkb_types \"holm\" { include \"complete\" };\n");
        out.push_str("  xkb_compat \"holm\" { include \"complete\" };\n");
        out.push_str("  xkb_symbols \"holm\" {\n");
        for key in BASE {
            let names: Vec<&str> = key.syms.iter().map(|(n, _)| *n).collect();
            let _ = writeln!(
                out,
                "    key <K{}> {{ type = \"{}\", symbols[Group1] = [ {} ] }};",
                key.code,
                key.kind,
                names.join(", ")
            );
        }
        for (i, (code, letter)) in LETTERS.iter().enumerate() {
            let lower = char::from(*letter);
            let upper = lower.to_ascii_uppercase();
            let at = |shifted: bool| {
                self.slots
                    .iter()
                    .find(|s| s.letter == i && s.shifted == shifted)
                    .and_then(|s| s.sym)
                    .map_or_else(|| "NoSymbol".to_owned(), |k| format!("0x{k:08x}"))
            };
            let _ = writeln!(
                out,
                "    key <K{code}> {{ type = \"FOUR_LEVEL_SEMIALPHABETIC\", symbols[Group1] = [ {lower}, {upper}, {}, {} ] }};",
                at(false),
                at(true)
            );
        }
        for (mask, name) in [
            (SHIFT, "Shift"),
            (LOCK, "Lock"),
            (CONTROL, "Control"),
            (MOD1, "Mod1"),
            (MOD2, "Mod2"),
            (MOD4, "Mod4"),
            (MOD5, "Mod5"),
        ] {
            let keys: Vec<String> = MODIFIER_KEYS
                .iter()
                .filter(|(_, m)| *m == mask)
                .map(|(c, _)| format!("<K{c}>"))
                .collect();
            let _ = writeln!(out, "    modifier_map {name} {{ {} }};", keys.join(", "));
        }
        out.push_str("  };\n};\n\0");
        out
    }
}

/// The evdev code of Shift_L, for chords whose key needs Shift.
pub const SHIFT_KEY: u32 = 42;
/// The evdev code of `ISO_Level3_Shift` (AltGr), for chords whose key is on
/// level 3 or 4.
pub const ALTGR_KEY: u32 = 84;

#[cfg(test)]
mod tests {
    use holm_proto::keys::sym;

    use super::*;

    #[test]
    fn every_table_key_but_sys_req_is_in_the_base() {
        let keys = Keys::new();
        let missing: Vec<&str> = holm_proto::keys::KEYS
            .iter()
            .filter(|k| keys.find(k.keysym).is_none())
            .map(|k| k.names[0])
            .collect();
        assert_eq!(missing, ["sys_req"]);
        for c in (0x20u8..0x7f).map(char::from) {
            let sym = holm_proto::keys::char_keysym(c).unwrap();
            assert!(keys.find(sym).is_some(), "{c:?} is not in the base keymap");
        }
    }

    #[test]
    fn letters_and_shifted_characters_have_their_level() {
        let keys = Keys::new();
        assert_eq!(keys.find(u32::from(b'a')), Some(Press { code: 30, mods: 0 }));
        assert_eq!(keys.find(u32::from(b'A')), Some(Press { code: 30, mods: SHIFT }));
        assert_eq!(keys.find(u32::from(b'!')), Some(Press { code: 2, mods: SHIFT }));
        assert_eq!(keys.find(sym::RETURN), Some(Press { code: 28, mods: 0 }));
    }

    #[test]
    fn missing_keysyms_get_letter_slots_and_keep_them() {
        let mut keys = Keys::new();
        keys.dirty = false;
        let now = Instant::now();
        let Resolved::Press(e) = keys.resolve(0xe9, now, false) else { panic!() };
        assert_eq!(e, Press { code: 30, mods: MOD5 });
        assert!(keys.dirty);
        keys.dirty = false;
        let Resolved::Press(zhe) = keys.resolve(0x0100_0436, now, false) else { panic!() };
        assert_eq!(zhe, Press { code: 30, mods: MOD5 | SHIFT });
        assert_eq!(keys.resolve(0xe9, now, false), Resolved::Press(e));
        assert!(keys.dirty);
        let text = keys.text();
        assert!(text.contains("[ a, A, 0x000000e9, 0x01000436 ]"), "{text}");
        assert!(text.ends_with('\0'));
    }

    #[test]
    fn slots_are_recycled_after_a_round_trip_and_the_settle_only_with_xwayland() {
        let mut keys = Keys::new();
        let t0 = Instant::now();
        let n = keys.slot_count();
        for i in 0..n {
            let Resolved::Press(p) = keys.resolve(0x0100_0400 + i as u32, t0, true) else {
                panic!()
            };
            keys.used(p);
        }
        assert_eq!(keys.resolve(0x0100_0500, t0, true), Resolved::WaitUntil(t0));
        keys.confirmed(t0);
        assert_eq!(keys.resolve(0x0100_0500, t0, true), Resolved::WaitUntil(t0 + SETTLE));
        let Resolved::Press(p) = keys.resolve(0x0100_0500, t0, false) else { panic!() };
        assert_eq!(p, Press { code: 30, mods: MOD5 });
        assert_eq!(keys.find(0x0100_0400), None);
    }

    #[test]
    fn held_slots_are_never_recycled() {
        let mut keys = Keys::new();
        let t0 = Instant::now();
        // Holding a key holds both its levels: 26 held keys hold every slot.
        for i in 0..LETTERS.len() {
            let Resolved::Press(p) = keys.resolve(0x0100_0400 + i as u32, t0, false) else {
                panic!("slot {i}")
            };
            keys.set_held(p.code, true);
        }
        keys.confirmed(t0);
        assert_eq!(keys.resolve(0x0100_0600, t0 + SETTLE * 2, true), Resolved::NoSlot);
        keys.set_held(LETTERS[3].0, false);
        let Resolved::Press(p) = keys.resolve(0x0100_0600, t0 + SETTLE * 2, true) else { panic!() };
        assert_eq!(p.code, LETTERS[3].0);
    }
}
