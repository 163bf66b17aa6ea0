//! The same key grammar, for a web page: what the page `press` action sends
//! through Chromium's DevTools (`Input.dispatchKeyEvent`).
//!
//! A page does not get keysyms: it gets DOM keyboard events (`key`, `code`,
//! the legacy `keyCode`, and the text typed). So a chord is parsed by
//! [`super::parse_chord`], the one grammar of [`super::KEYS`], and each key
//! is then mapped to its DOM names here. DOM names such as `ArrowDown`,
//! `PageUp`, `Control` and `Meta` are names of the table already (case, `_`
//! and `-` are ignored), so Playwright's key names work as they are.
//!
//! Two differences, because a page receives characters rather than key
//! presses on a layout:
//!
//! - A **single character** is sent as written: `A` types `A` in a page,
//!   while on the desktop `A` names the key that types `a`.
//! - A page has no **AltGr** modifier: `altgr+…` is sent as Control+Alt, as
//!   Windows does.
//!
//! A keysym written as `0x…` with no DOM key is refused
//! ([`super::ChordProblem::NotInPages`]).

use super::{ChordError, ChordProblem, keysym_char, parse_chord_as_written};

/// A key as a web page receives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageKey {
    /// The DOM `key`, such as `Enter`, `ArrowDown` or `a`.
    pub key: String,
    /// The DOM `code`, such as `KeyA`; empty when the key has none.
    pub code: String,
    /// The legacy `keyCode` (the Windows virtual key); 0 when it has none.
    pub key_code: u16,
    /// The text the key types, if any.
    pub text: Option<String>,
}

/// A chord for a page: the modifiers held, then the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageChord {
    /// DevTools' modifier bits: Alt 1, Control 2, Meta 4, Shift 8.
    pub modifiers: u8,
    /// The key.
    pub key: PageKey,
}

/// Alt, Control, Meta and Shift in DevTools' modifier bits.
const ALT: u8 = 1;
const CONTROL: u8 = 2;
const META: u8 = 4;
const SHIFT: u8 = 8;

/// Every named key of [`super::KEYS`] as a page knows it: keysym, DOM
/// `key`, DOM `code`, `keyCode`, text. Function keys and the keypad's
/// digits are worked out in [`named`].
const DOM: &[(u32, &str, &str, u16, Option<&str>)] = &[
    // Modifiers, pressed as keys.
    (0xffe3, "Control", "ControlLeft", 17, None),
    (0xffe4, "Control", "ControlRight", 17, None),
    (0xffe1, "Shift", "ShiftLeft", 16, None),
    (0xffe2, "Shift", "ShiftRight", 16, None),
    (0xffe9, "Alt", "AltLeft", 18, None),
    (0xffea, "Alt", "AltRight", 18, None),
    (0xffeb, "Meta", "MetaLeft", 91, None),
    (0xffec, "Meta", "MetaRight", 92, None),
    (0xfe03, "AltGraph", "AltRight", 225, None),
    // Editing and navigation.
    (0xff0d, "Enter", "Enter", 13, Some("\r")),
    (0xff1b, "Escape", "Escape", 27, None),
    (0xff08, "Backspace", "Backspace", 8, None),
    (0xff09, "Tab", "Tab", 9, None),
    (0x0020, " ", "Space", 32, Some(" ")),
    (0xffff, "Delete", "Delete", 46, None),
    (0xff63, "Insert", "Insert", 45, None),
    (0xff50, "Home", "Home", 36, None),
    (0xff57, "End", "End", 35, None),
    (0xff55, "PageUp", "PageUp", 33, None),
    (0xff56, "PageDown", "PageDown", 34, None),
    (0xff52, "ArrowUp", "ArrowUp", 38, None),
    (0xff54, "ArrowDown", "ArrowDown", 40, None),
    (0xff51, "ArrowLeft", "ArrowLeft", 37, None),
    (0xff53, "ArrowRight", "ArrowRight", 39, None),
    // Locks and system keys; System Request shares Print Screen's key.
    (0xffe5, "CapsLock", "CapsLock", 20, None),
    (0xff7f, "NumLock", "NumLock", 144, None),
    (0xff14, "ScrollLock", "ScrollLock", 145, None),
    (0xff61, "PrintScreen", "PrintScreen", 44, None),
    (0xff15, "PrintScreen", "PrintScreen", 44, None),
    (0xff13, "Pause", "Pause", 19, None),
    (0xff67, "ContextMenu", "ContextMenu", 93, None),
    // Keypad, but its digits.
    (0xff8d, "Enter", "NumpadEnter", 13, Some("\r")),
    (0xffab, "+", "NumpadAdd", 107, Some("+")),
    (0xffad, "-", "NumpadSubtract", 109, Some("-")),
    (0xffaa, "*", "NumpadMultiply", 106, Some("*")),
    (0xffaf, "/", "NumpadDivide", 111, Some("/")),
    (0xffae, ".", "NumpadDecimal", 110, Some(".")),
    // Media and browser keys.
    (0x1008_ff13, "AudioVolumeUp", "AudioVolumeUp", 175, None),
    (0x1008_ff11, "AudioVolumeDown", "AudioVolumeDown", 174, None),
    (0x1008_ff12, "AudioVolumeMute", "AudioVolumeMute", 173, None),
    (0x1008_ff14, "MediaPlayPause", "MediaPlayPause", 179, None),
    (0x1008_ff15, "MediaStop", "MediaStop", 178, None),
    (0x1008_ff16, "MediaTrackPrevious", "MediaTrackPrevious", 177, None),
    (0x1008_ff17, "MediaTrackNext", "MediaTrackNext", 176, None),
    (0x1008_ff26, "BrowserBack", "BrowserBack", 166, None),
    (0x1008_ff27, "BrowserForward", "BrowserForward", 167, None),
    (0x1008_ff29, "BrowserRefresh", "BrowserRefresh", 168, None),
];

/// A named key (not a character) as a page knows it.
fn named(keysym: u32) -> Option<PageKey> {
    let key = |k: &str, code: &str, key_code: u16, text: Option<&str>| PageKey {
        key: k.to_owned(),
        code: code.to_owned(),
        key_code,
        text: text.map(str::to_owned),
    };
    if let Some((_, k, code, key_code, text)) = DOM.iter().find(|d| d.0 == keysym) {
        return Some(key(k, code, *key_code, *text));
    }
    // F1 to F24 are 0xffbe.. in keysyms, keyCode 112.. in DOM.
    if let Some(n) = keysym.checked_sub(0xffbd).filter(|n| (1..=24).contains(n)) {
        let f = format!("F{n}");
        return Some(key(&f, &f, 111 + n as u16, None));
    }
    // The keypad's digits are 0xffb0.. in keysyms, keyCode 96.. in DOM.
    if let Some(n) = keysym.checked_sub(0xffb0).filter(|n| *n <= 9) {
        let d = n.to_string();
        return Some(key(&d, &format!("Numpad{n}"), 96 + n as u16, Some(&d)));
    }
    None
}

/// A character as a page knows it: letters and digits with their US key's
/// code, others with the character alone.
fn character(c: char) -> PageKey {
    let upper = c.to_ascii_uppercase();
    let (code, key_code) = if c.is_ascii_alphabetic() {
        (format!("Key{upper}"), upper as u16)
    } else if c.is_ascii_digit() {
        (format!("Digit{c}"), c as u16)
    } else {
        (String::new(), 0)
    };
    PageKey { key: c.to_string(), code, key_code, text: Some(c.to_string()) }
}

/// The DevTools modifier bit of a modifier keysym.
fn modifier_bits(keysym: u32) -> u8 {
    match keysym {
        0xffe3 | 0xffe4 => CONTROL,
        0xffe1 | 0xffe2 => SHIFT,
        0xffe9 | 0xffea => ALT,
        0xffeb | 0xffec => META,
        // AltGr: Control+Alt, as on Windows.
        0xfe03 => CONTROL | ALT,
        _ => 0,
    }
}

/// Parses a chord for a page: the grammar of [`super::parse_chord`], the
/// keys as DOM events.
pub fn parse_page_chord(chord: &str) -> Result<PageChord, ChordError> {
    let (parsed, written) = parse_chord_as_written(chord)?;
    let modifiers = parsed.modifiers.iter().fold(0, |bits, k| bits | modifier_bits(*k));
    let mut chars = written.chars();
    let key = match (chars.next(), chars.next()) {
        (Some(c), None) => character(c),
        _ => match named(parsed.key).or_else(|| keysym_char(parsed.key).map(character)) {
            Some(k) => k,
            None => {
                return Err(ChordError {
                    chord: chord.to_owned(),
                    part: written.to_owned(),
                    problem: ChordProblem::NotInPages,
                });
            }
        },
    };
    Ok(PageChord { modifiers, key })
}

#[cfg(test)]
mod tests {
    use super::super::KEYS;
    use super::*;

    fn key(chord: &str) -> PageKey {
        parse_page_chord(chord).unwrap().key
    }

    #[test]
    fn page_chords_are_dom_events() {
        let c = parse_page_chord("Control+a").unwrap();
        assert_eq!(c.modifiers, CONTROL);
        let a =
            PageKey { key: "a".into(), code: "KeyA".into(), key_code: 65, text: Some("a".into()) };
        assert_eq!(c.key, a);
        let c = parse_page_chord("shift+Enter").unwrap();
        assert_eq!((c.modifiers, c.key.key.as_str()), (SHIFT, "Enter"));
        assert_eq!(parse_page_chord("ctrl+alt+shift+meta+x").unwrap().modifiers, 15);
        assert_eq!(key("Shift++").key, "+");
        assert_eq!(key("+").key, "+");
        assert_eq!(key("F5").key_code, 116);
        assert_eq!(key("F24").key_code, 135);
        assert_eq!(key("Space").key, " ");
        assert_eq!(key("é").text.as_deref(), Some("é"));
        assert_eq!(
            key("kp_7"),
            PageKey {
                key: "7".into(),
                code: "Numpad7".into(),
                key_code: 103,
                text: Some("7".into())
            }
        );
        // A character is sent as written; a named key by its DOM name.
        assert_eq!(key("A").text.as_deref(), Some("A"));
        assert_eq!(key("plus").key, "+");
        assert_eq!(key("0x1008ff12").key, "AudioVolumeMute");
        let e = parse_page_chord("Hyper+a").unwrap_err();
        assert_eq!(e.part, "Hyper");
        assert!(parse_page_chord("NoSuchKey").is_err());
        let e = parse_page_chord("0xfe50").unwrap_err();
        assert_eq!(e.problem, ChordProblem::NotInPages);
        assert!(e.to_string().contains("desktop"), "{e}");
    }

    /// Playwright's and the DOM's names for keys are names of the one table.
    #[test]
    fn dom_names_are_table_names() {
        for (name, dom) in [
            ("ArrowDown", "ArrowDown"),
            ("ArrowLeft", "ArrowLeft"),
            ("PageUp", "PageUp"),
            ("PageDown", "PageDown"),
            ("Escape", "Escape"),
            ("Backspace", "Backspace"),
            ("Delete", "Delete"),
            ("Insert", "Insert"),
            ("Home", "Home"),
            ("End", "End"),
            ("Tab", "Tab"),
            ("Enter", "Enter"),
            ("Control", "Control"),
            ("Meta", "Meta"),
            ("CapsLock", "CapsLock"),
            ("ContextMenu", "ContextMenu"),
        ] {
            assert_eq!(key(name).key, dom, "{name}");
        }
    }

    /// Every key name `docs/keys.md` lists is a key on the desktop and in a
    /// page, alone and after a modifier.
    #[test]
    fn every_documented_name_works_on_the_desktop_and_in_pages() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/keys.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let mut names = 0;
        for row in doc.lines().filter(|l| l.starts_with("| `")) {
            let cell = row.split('|').nth(1).unwrap();
            for name in cell.split(',').map(|n| n.trim().trim_matches('`')) {
                names += 1;
                let def = KEYS.iter().find(|k| k.names.contains(&name)).unwrap();
                for chord in [name.to_owned(), format!("ctrl+{name}")] {
                    let desktop = super::super::parse_chord(&chord).unwrap();
                    assert_eq!(desktop.key, def.keysym, "{chord}");
                    let page = parse_page_chord(&chord).unwrap_or_else(|e| panic!("{e}"));
                    assert!(!page.key.key.is_empty(), "{chord}");
                }
                if def.modifier {
                    assert_ne!(modifier_bits(def.keysym), 0, "{name}");
                }
            }
        }
        assert_eq!(names, KEYS.iter().map(|k| k.names.len()).sum::<usize>());
    }
}
