//! Key names, chords and text: how the guest API names keys.
//!
//! A key is named by one of the names in [`KEYS`] (case-insensitive; `_`,
//! `-` and spaces inside a name are ignored, so `Page_Up`, `page-up` and
//! `pageup` are the same key), by a single character (`a`, `7`, `é`, `;`),
//! or by an X keysym written in hexadecimal (`0x1008ff12`). Every name maps
//! to an XKB keysym; the values are the same on X11 and Wayland.
//!
//! A **chord** is keys joined with `+`, such as `ctrl+shift+t`. Every part but
//! the last must be a modifier (`ctrl`, `shift`, `alt`, `super`, `altgr` and
//! their aliases); the last part is the key, and may itself be a modifier
//! (`ctrl+shift` presses both). The modifiers are pressed in order, then the
//! key; they are released in reverse order. The `+` key is written `plus`, or
//! as the last part of a chord (`ctrl++`). Spaces around parts are ignored.
//!
//! A **single letter** names the key, not the character: `A` and `a` are the
//! same key, so `ctrl+A` is `ctrl+a`, not `ctrl+shift+a`. Ask for the capital
//! with `shift+a`, or use the `type` action. Other single characters stand for
//! themselves: `!` presses whatever key gives `!` on the layout (with Shift
//! when it needs it), and a character that no key gives is mapped to a spare
//! key first.
//!
//! **Text** (the `type` action) is typed character by character, exactly,
//! whatever the keyboard layout: `\n` (and `\r\n`, and a lone `\r`) is Return,
//! `\t` is Tab; any other control character is refused. See [`text_keysyms`].
//!
//! Errors name the part that is wrong: `"ctrl+shft+t": unknown key "shft"
//! (did you mean "shift"?)`.
//!
//! [`KEYS`] is the one table of names; [`markdown_table`] renders it for the
//! documentation.

use std::fmt;

pub mod page;

/// One row of the key table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyDef {
    /// The names of the key; the first is the one the documentation uses.
    pub names: &'static [&'static str],
    /// The XKB keysym.
    pub keysym: u32,
    /// What the key is.
    pub description: &'static str,
    /// Whether the key is a modifier that may come before `+` in a chord.
    pub modifier: bool,
}

macro_rules! key {
    ([$($n:literal),+], $sym:expr, $desc:literal) => {
        KeyDef { names: &[$($n),+], keysym: $sym, description: $desc, modifier: false }
    };
    (mod [$($n:literal),+], $sym:expr, $desc:literal) => {
        KeyDef { names: &[$($n),+], keysym: $sym, description: $desc, modifier: true }
    };
}

/// Keysym values used by the guest outside the table.
pub mod sym {
    /// `Return`.
    pub const RETURN: u32 = 0xff0d;
    /// `Tab`.
    pub const TAB: u32 = 0xff09;
    /// `Shift_L`.
    pub const SHIFT_L: u32 = 0xffe1;
    /// `Control_L`.
    pub const CONTROL_L: u32 = 0xffe3;
    /// `Caps_Lock`.
    pub const CAPS_LOCK: u32 = 0xffe5;
    /// `Alt_L`.
    pub const ALT_L: u32 = 0xffe9;
    /// `Super_L`.
    pub const SUPER_L: u32 = 0xffeb;
    /// The offset of Unicode keysyms: `0x01000000 + codepoint`.
    pub const UNICODE_OFFSET: u32 = 0x0100_0000;
}

/// The key table: every key name the guest knows, with its keysym.
pub const KEYS: &[KeyDef] = &[
    // Modifiers.
    key!(mod ["ctrl", "control", "ctrl_l", "control_l"], 0xffe3, "Control (left)"),
    key!(mod ["ctrl_r", "control_r"], 0xffe4, "Control (right)"),
    key!(mod ["shift", "shift_l"], 0xffe1, "Shift (left)"),
    key!(mod ["shift_r"], 0xffe2, "Shift (right)"),
    key!(mod ["alt", "option", "opt", "alt_l"], 0xffe9, "Alt (left)"),
    key!(mod ["alt_r"], 0xffea, "Alt (right)"),
    key!(mod ["super", "meta", "win", "windows", "cmd", "command", "super_l"], 0xffeb, "Super, the Windows or Command key (left)"),
    key!(mod ["super_r", "win_r"], 0xffec, "Super (right)"),
    key!(mod ["altgr", "iso_level3_shift"], 0xfe03, "AltGr, the third-level chooser"),
    // Editing and navigation.
    key!(["enter", "return"], 0xff0d, "Return"),
    key!(["escape", "esc"], 0xff1b, "Escape"),
    key!(["backspace", "bksp"], 0xff08, "Backspace"),
    key!(["tab"], 0xff09, "Tab"),
    key!(["space", "spacebar"], 0x0020, "Space bar"),
    key!(["delete", "del"], 0xffff, "Delete (forward)"),
    key!(["insert", "ins"], 0xff63, "Insert"),
    key!(["home"], 0xff50, "Home"),
    key!(["end"], 0xff57, "End"),
    key!(["page_up", "pgup", "prior"], 0xff55, "Page Up"),
    key!(["page_down", "pgdn", "next"], 0xff56, "Page Down"),
    key!(["up", "arrow_up"], 0xff52, "Up arrow"),
    key!(["down", "arrow_down"], 0xff54, "Down arrow"),
    key!(["left", "arrow_left"], 0xff51, "Left arrow"),
    key!(["right", "arrow_right"], 0xff53, "Right arrow"),
    // Locks and system keys.
    key!(["caps_lock", "caps"], 0xffe5, "Caps Lock"),
    key!(["num_lock"], 0xff7f, "Num Lock"),
    key!(["scroll_lock"], 0xff14, "Scroll Lock"),
    key!(["print", "print_screen", "prtsc", "prtscr"], 0xff61, "Print Screen"),
    key!(["pause", "break"], 0xff13, "Pause"),
    key!(["sys_req"], 0xff15, "System Request"),
    key!(["menu", "context_menu", "apps"], 0xff67, "Menu (context menu key)"),
    // Function keys.
    key!(["f1"], 0xffbe, "F1"),
    key!(["f2"], 0xffbf, "F2"),
    key!(["f3"], 0xffc0, "F3"),
    key!(["f4"], 0xffc1, "F4"),
    key!(["f5"], 0xffc2, "F5"),
    key!(["f6"], 0xffc3, "F6"),
    key!(["f7"], 0xffc4, "F7"),
    key!(["f8"], 0xffc5, "F8"),
    key!(["f9"], 0xffc6, "F9"),
    key!(["f10"], 0xffc7, "F10"),
    key!(["f11"], 0xffc8, "F11"),
    key!(["f12"], 0xffc9, "F12"),
    key!(["f13"], 0xffca, "F13"),
    key!(["f14"], 0xffcb, "F14"),
    key!(["f15"], 0xffcc, "F15"),
    key!(["f16"], 0xffcd, "F16"),
    key!(["f17"], 0xffce, "F17"),
    key!(["f18"], 0xffcf, "F18"),
    key!(["f19"], 0xffd0, "F19"),
    key!(["f20"], 0xffd1, "F20"),
    key!(["f21"], 0xffd2, "F21"),
    key!(["f22"], 0xffd3, "F22"),
    key!(["f23"], 0xffd4, "F23"),
    key!(["f24"], 0xffd5, "F24"),
    // Keypad.
    key!(["kp_0"], 0xffb0, "Keypad 0"),
    key!(["kp_1"], 0xffb1, "Keypad 1"),
    key!(["kp_2"], 0xffb2, "Keypad 2"),
    key!(["kp_3"], 0xffb3, "Keypad 3"),
    key!(["kp_4"], 0xffb4, "Keypad 4"),
    key!(["kp_5"], 0xffb5, "Keypad 5"),
    key!(["kp_6"], 0xffb6, "Keypad 6"),
    key!(["kp_7"], 0xffb7, "Keypad 7"),
    key!(["kp_8"], 0xffb8, "Keypad 8"),
    key!(["kp_9"], 0xffb9, "Keypad 9"),
    key!(["kp_enter"], 0xff8d, "Keypad Enter"),
    key!(["kp_add", "kp_plus"], 0xffab, "Keypad +"),
    key!(["kp_subtract", "kp_minus"], 0xffad, "Keypad -"),
    key!(["kp_multiply"], 0xffaa, "Keypad *"),
    key!(["kp_divide"], 0xffaf, "Keypad /"),
    key!(["kp_decimal"], 0xffae, "Keypad decimal point"),
    // Characters that are awkward to write in a chord.
    key!(["plus"], 0x002b, "+"),
    key!(["minus", "hyphen", "dash"], 0x002d, "-"),
    key!(["equal", "equals"], 0x003d, "="),
    key!(["comma"], 0x002c, ","),
    key!(["period", "dot"], 0x002e, "."),
    key!(["slash"], 0x002f, "/"),
    key!(["backslash"], 0x005c, "\\"),
    key!(["semicolon"], 0x003b, ";"),
    key!(["colon"], 0x003a, ":"),
    key!(["apostrophe", "quote"], 0x0027, "'"),
    key!(["quotedbl", "double_quote"], 0x0022, "\""),
    key!(["grave", "backtick", "backquote"], 0x0060, "`"),
    key!(["tilde", "asciitilde"], 0x007e, "~"),
    key!(["bracketleft", "left_bracket"], 0x005b, "["),
    key!(["bracketright", "right_bracket"], 0x005d, "]"),
    key!(["braceleft", "left_brace"], 0x007b, "{"),
    key!(["braceright", "right_brace"], 0x007d, "}"),
    key!(["parenleft", "left_paren"], 0x0028, "("),
    key!(["parenright", "right_paren"], 0x0029, ")"),
    key!(["less", "less_than"], 0x003c, "<"),
    key!(["greater", "greater_than"], 0x003e, ">"),
    key!(["question", "question_mark"], 0x003f, "?"),
    key!(["exclam", "exclamation", "bang"], 0x0021, "!"),
    key!(["at"], 0x0040, "@"),
    key!(["numbersign", "hash", "pound"], 0x0023, "#"),
    key!(["dollar"], 0x0024, "$"),
    key!(["percent"], 0x0025, "%"),
    key!(["caret", "asciicircum"], 0x005e, "^"),
    key!(["ampersand"], 0x0026, "&"),
    key!(["asterisk", "star"], 0x002a, "*"),
    key!(["underscore"], 0x005f, "_"),
    key!(["bar", "pipe"], 0x007c, "|"),
    // Media and browser keys.
    key!(["volume_up", "audio_raise_volume"], 0x1008_ff13, "Volume up"),
    key!(["volume_down", "audio_lower_volume"], 0x1008_ff11, "Volume down"),
    key!(["volume_mute", "mute", "audio_mute"], 0x1008_ff12, "Mute"),
    key!(["media_play_pause", "play_pause", "audio_play"], 0x1008_ff14, "Play/pause"),
    key!(["media_stop", "audio_stop"], 0x1008_ff15, "Stop"),
    key!(["media_previous", "audio_prev"], 0x1008_ff16, "Previous track"),
    key!(["media_next", "audio_next"], 0x1008_ff17, "Next track"),
    key!(["browser_back"], 0x1008_ff26, "Browser back"),
    key!(["browser_forward"], 0x1008_ff27, "Browser forward"),
    key!(["browser_refresh"], 0x1008_ff29, "Browser refresh"),
];

/// A key name with case, `_`, `-` and spaces removed.
fn normalize(name: &str) -> String {
    name.chars().filter(|c| !matches!(c, '_' | '-' | ' ')).flat_map(char::to_lowercase).collect()
}

fn find(name: &str) -> Option<&'static KeyDef> {
    let wanted = normalize(name);
    if wanted.is_empty() {
        return None;
    }
    KEYS.iter().find(|k| k.names.iter().any(|n| normalize(n) == wanted))
}

/// The keysym of a character typed as text: Latin-1 characters are their own
/// keysym, others are `0x01000000 + codepoint`. `\n` and `\r` are Return and
/// `\t` is Tab; other control characters have none.
pub fn char_keysym(c: char) -> Option<u32> {
    let cp = u32::from(c);
    match c {
        '\n' | '\r' => Some(sym::RETURN),
        '\t' => Some(sym::TAB),
        _ if c.is_control() => None,
        _ if (0x20..=0x7e).contains(&cp) || (0xa0..=0xff).contains(&cp) => Some(cp),
        _ => Some(sym::UNICODE_OFFSET + cp),
    }
}

/// The character a keysym stands for, when it stands for one (the inverse of
/// [`char_keysym`] for printable characters).
pub fn keysym_char(keysym: u32) -> Option<char> {
    match keysym {
        0x20..=0x7e | 0xa0..=0xff => char::from_u32(keysym),
        k if k > sym::UNICODE_OFFSET => char::from_u32(k - sym::UNICODE_OFFSET),
        _ => None,
    }
}

/// A character of a text that cannot be typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UntypableChar {
    /// Its index in the text, in characters.
    pub index: usize,
    /// The character.
    pub ch: char,
}

impl fmt::Display for UntypableChar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "character {} (U+{:04X}) cannot be typed; only \\n, \\r and \\t of the control characters can",
            self.index,
            u32::from(self.ch)
        )
    }
}

/// The keysyms that type `text`, one per character; `\r\n` is one Return.
pub fn text_keysyms(text: &str) -> Result<Vec<u32>, UntypableChar> {
    let mut out = Vec::with_capacity(text.len());
    let mut after_cr = false;
    for (index, ch) in text.chars().enumerate() {
        if ch == '\n' && after_cr {
            after_cr = false;
            continue;
        }
        after_cr = ch == '\r';
        out.push(char_keysym(ch).ok_or(UntypableChar { index, ch })?);
    }
    Ok(out)
}

/// Looks up one key: a name of [`KEYS`], a single character, or `0x` and a
/// keysym in hexadecimal. Letters name their key (lowercase).
pub fn keysym(name: &str) -> Option<u32> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        let mut lower = c.to_lowercase();
        let c = match (lower.next(), lower.next()) {
            (Some(l), None) => l,
            _ => c,
        };
        return char_keysym(c).filter(|_| !c.is_control());
    }
    if let Some(k) = find(name) {
        return Some(k.keysym);
    }
    let hex = name.strip_prefix("0x").or_else(|| name.strip_prefix("0X"))?;
    u32::from_str_radix(hex, 16).ok().filter(|k| (1..=0x1fff_ffff).contains(k))
}

/// Whether a keysym is one of the modifiers of the table.
pub fn is_modifier(keysym: u32) -> bool {
    KEYS.iter().any(|k| k.modifier && k.keysym == keysym)
}

/// A parsed chord: modifiers to hold, then one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chord {
    /// The modifiers' keysyms, in the order written, without repeats.
    pub modifiers: Vec<u32>,
    /// The key's keysym.
    pub key: u32,
}

impl Chord {
    /// Every keysym of the chord in press order: modifiers, then the key.
    pub fn press_order(&self) -> impl Iterator<Item = u32> + '_ {
        self.modifiers.iter().copied().chain(std::iter::once(self.key))
    }
}

/// Why a chord was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChordError {
    /// The chord as given.
    pub chord: String,
    /// The part that is wrong.
    pub part: String,
    /// What is wrong with it.
    pub problem: ChordProblem,
}

/// What is wrong with a part of a chord.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChordProblem {
    /// The chord is empty, or has an empty part (`ctrl++c`).
    Empty,
    /// No key has this name; maybe a close name.
    Unknown {
        /// A known name close to the one given.
        suggestion: Option<&'static str>,
    },
    /// A part before the last is not a modifier.
    NotAModifier,
    /// A keysym written as `0x…` that has no key a web page knows (the
    /// page `press` action only; see [`page`]).
    NotInPages,
}

impl fmt::Display for ChordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.problem {
            ChordProblem::Empty if self.chord.trim().is_empty() => f.write_str("no key given"),
            ChordProblem::Empty => write!(f, "{:?}: a key name is empty", self.chord),
            ChordProblem::Unknown { suggestion } => {
                write!(f, "{:?}: unknown key {:?}", self.chord, self.part)?;
                if let Some(s) = suggestion {
                    write!(f, " (did you mean {s:?}?)")?;
                }
                Ok(())
            }
            ChordProblem::NotAModifier => write!(
                f,
                "{:?}: {:?} is not a modifier; only the last key of a chord may be another key",
                self.chord, self.part
            ),
            ChordProblem::NotInPages => write!(
                f,
                "{:?}: {:?} is no key a web page knows; press it on the desktop instead",
                self.chord, self.part
            ),
        }
    }
}

impl std::error::Error for ChordError {}

/// Parses a chord such as `ctrl+shift+t`, `super`, `ctrl++` or `F5`.
pub fn parse_chord(chord: &str) -> Result<Chord, ChordError> {
    parse_chord_as_written(chord).map(|(c, _)| c)
}

/// [`parse_chord`], with the key part as written (`A` stays `A`).
fn parse_chord_as_written(chord: &str) -> Result<(Chord, &str), ChordError> {
    let err = |part: &str, problem| ChordError {
        chord: chord.to_owned(),
        part: part.to_owned(),
        problem,
    };
    // `+` as the key: the whole chord, or a chord ending in `++`.
    let (head, plus_key) = if chord.trim() == "+" {
        ("", true)
    } else if let Some(h) = chord.trim_end().strip_suffix("++") {
        (h, true)
    } else {
        (chord, false)
    };
    let mut parts: Vec<&str> =
        if head.is_empty() && plus_key { Vec::new() } else { head.split('+').collect() };
    if plus_key {
        parts.push("+");
    }
    let mut modifiers = Vec::new();
    let last = parts.len().saturating_sub(1);
    for (i, raw) in parts.iter().enumerate() {
        // A single space is the space key; otherwise spaces around a part are ignored.
        let part = if *raw == " " { raw } else { raw.trim() };
        if part.is_empty() {
            return Err(err(part, ChordProblem::Empty));
        }
        let Some(k) = keysym(part) else {
            return Err(err(part, ChordProblem::Unknown { suggestion: suggest(part) }));
        };
        if i == last {
            return Ok((Chord { modifiers, key: k }, part));
        }
        if !is_modifier(k) {
            return Err(err(part, ChordProblem::NotAModifier));
        }
        if !modifiers.contains(&k) {
            modifiers.push(k);
        }
    }
    Err(err("", ChordProblem::Empty))
}

/// The known name closest to `name`, when one is close enough to be a typo.
fn suggest(name: &str) -> Option<&'static str> {
    let wanted = normalize(name);
    let mut best: Option<(usize, &'static str)> = None;
    for k in KEYS {
        for n in k.names {
            let d = edit_distance(&wanted, &normalize(n));
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, k.names[0]));
            }
        }
    }
    let limit = if wanted.chars().count() <= 4 { 1 } else { 2 };
    best.filter(|(d, _)| *d <= limit).map(|(_, n)| n)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb { prev } else { 1 + prev.min(row[j]).min(row[j + 1]) };
            prev = cur;
        }
    }
    row[b.len()]
}

/// The key table as Markdown, for the documentation.
pub fn markdown_table() -> String {
    let mut out = String::from("| names | keysym | key |\n|---|---|---|\n");
    for k in KEYS {
        let names: Vec<String> = k.names.iter().map(|n| format!("`{n}`")).collect();
        let kind = if k.modifier { " (modifier)" } else { "" };
        let desc = k.description.replace('|', "\\|").replace('`', "\\`");
        out.push_str(&format!("| {} | `0x{:04x}` | {desc}{kind} |\n", names.join(", "), k.keysym));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_keysyms() {
        let cases: &[(&str, u32)] = &[
            ("ctrl", 0xffe3),
            ("Control", 0xffe3),
            ("CTRL_L", 0xffe3),
            ("alt", 0xffe9),
            ("option", 0xffe9),
            ("shift", 0xffe1),
            ("super", 0xffeb),
            ("meta", 0xffeb),
            ("win", 0xffeb),
            ("cmd", 0xffeb),
            ("enter", 0xff0d),
            ("Return", 0xff0d),
            ("esc", 0xff1b),
            ("Escape", 0xff1b),
            ("BackSpace", 0xff08),
            ("tab", 0xff09),
            ("space", 0x20),
            (" ", 0x20),
            ("delete", 0xffff),
            ("del", 0xffff),
            ("insert", 0xff63),
            ("home", 0xff50),
            ("end", 0xff57),
            ("pageup", 0xff55),
            ("PgUp", 0xff55),
            ("Page_Up", 0xff55),
            ("page-down", 0xff56),
            ("pgdn", 0xff56),
            ("up", 0xff52),
            ("ArrowDown", 0xff54),
            ("left", 0xff51),
            ("right", 0xff53),
            ("f1", 0xffbe),
            ("F12", 0xffc9),
            ("f24", 0xffd5),
            ("capslock", 0xffe5),
            ("NumLock", 0xff7f),
            ("printscreen", 0xff61),
            ("print", 0xff61),
            ("menu", 0xff67),
            ("plus", 0x2b),
            ("minus", 0x2d),
            ("kp_enter", 0xff8d),
            ("KP_Enter", 0xff8d),
            ("a", 0x61),
            ("A", 0x61),
            ("7", 0x37),
            ("!", 0x21),
            ("-", 0x2d),
            ("é", 0xe9),
            ("É", 0xe9),
            ("ж", 0x0100_0436),
            ("€", 0x0100_20ac),
            ("0x1008ff12", 0x1008_ff12),
        ];
        for (name, want) in cases {
            assert_eq!(keysym(name), Some(*want), "{name:?}");
        }
        for bad in ["shft", "", "f25", "0x", "0xzz", "0x0", "\u{7}", "ctrl_x"] {
            assert_eq!(keysym(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn chords_parse() {
        let c = |m: &[u32], k: u32| Chord { modifiers: m.to_vec(), key: k };
        let cases: &[(&str, Chord)] = &[
            ("ctrl+shift+t", c(&[0xffe3, 0xffe1], 0x74)),
            ("Ctrl+Shift+T", c(&[0xffe3, 0xffe1], 0x74)),
            ("ctrl + c", c(&[0xffe3], 0x63)),
            ("ctrl+A", c(&[0xffe3], 0x61)),
            ("alt+f4", c(&[0xffe9], 0xffc1)),
            ("super", c(&[], 0xffeb)),
            ("ctrl+shift", c(&[0xffe3], 0xffe1)),
            ("ctrl+ctrl+c", c(&[0xffe3], 0x63)),
            ("+", c(&[], 0x2b)),
            ("ctrl++", c(&[0xffe3], 0x2b)),
            ("ctrl+plus", c(&[0xffe3], 0x2b)),
            ("ctrl+minus", c(&[0xffe3], 0x2d)),
            ("ctrl+-", c(&[0xffe3], 0x2d)),
            ("Return", c(&[], 0xff0d)),
            ("altgr+e", c(&[0xfe03], 0x65)),
            (" ", c(&[], 0x20)),
        ];
        for (chord, want) in cases {
            assert_eq!(parse_chord(chord).as_ref(), Ok(want), "{chord:?}");
        }
    }

    #[test]
    fn chord_errors_name_the_bad_part() {
        let cases: &[(&str, &str)] = &[
            ("ctrl+shft+t", r#""ctrl+shft+t": unknown key "shft" (did you mean "shift"?)"#),
            ("ctrl+nope", r#""ctrl+nope": unknown key "nope""#),
            (
                "a+b",
                r#""a+b": "a" is not a modifier; only the last key of a chord may be another key"#,
            ),
            ("ctrl+", r#""ctrl+": a key name is empty"#),
            ("ctrl++c", r#""ctrl++c": a key name is empty"#),
            ("", "no key given"),
            ("escpe", r#""escpe": unknown key "escpe" (did you mean "escape"?)"#),
        ];
        for (chord, want) in cases {
            assert_eq!(parse_chord(chord).unwrap_err().to_string(), *want, "{chord:?}");
        }
        assert_eq!(parse_chord("ctrl+shft+t").unwrap_err().part, "shft");
    }

    #[test]
    fn text_maps_exactly() {
        assert_eq!(text_keysyms("aZ é\n\t").unwrap(), vec![0x61, 0x5a, 0x20, 0xe9, 0xff0d, 0xff09]);
        assert_eq!(text_keysyms("a\r\nb\rc").unwrap(), vec![0x61, 0xff0d, 0x62, 0xff0d, 0x63]);
        assert_eq!(text_keysyms("中€").unwrap(), vec![0x0100_4e2d, 0x0100_20ac]);
        assert_eq!(text_keysyms("😀").unwrap(), vec![0x0101_f600]);
        assert_eq!(text_keysyms("ab\u{8}").unwrap_err(), UntypableChar { index: 2, ch: '\u{8}' });
        for c in ['a', 'é', 'ж', '中', '€', '😀', '~'] {
            assert_eq!(keysym_char(char_keysym(c).unwrap()), Some(c));
        }
        assert_eq!(keysym_char(0xff0d), None);
    }

    #[test]
    fn table_is_consistent() {
        let mut seen = std::collections::HashSet::new();
        for k in KEYS {
            assert!(!k.names.is_empty());
            for n in k.names {
                assert!(seen.insert(normalize(n)), "{n} is in the table twice");
                assert_eq!(find(n).map(|d| d.keysym), Some(k.keysym), "{n}");
            }
        }
        let md = markdown_table();
        assert!(md.contains("| `ctrl`, `control`"), "{md}");
        assert_eq!(md.lines().count(), KEYS.len() + 2);
    }
}

#[cfg(test)]
mod docs {
    /// `docs/keys.md`'s table is generated from [`super::KEYS`]; this test
    /// keeps it current (`HOLM_UPDATE_SNAPSHOTS=1` writes it).
    #[test]
    fn docs_keys_md_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/keys.md");
        crate::docgen::check_section(&path, "keys", &super::markdown_table(), "holm-proto")
            .unwrap();
    }
}
