//! Checking an input request before anything is done, and turning it into
//! [`Op`]s in screen pixels with parsed key chords.
//!
//! Every action is checked first (coordinates inside the screen, counts,
//! durations, key names), so a request with one bad action changes nothing.
//! Nothing here knows about X11; the Wayland profile runs the same [`Op`]s.

use std::time::Duration;

use holm_proto::Issue;
use holm_proto::guest::{Action, Button, CoordinateSpace, InputRequest, Point, Settle};
use holm_proto::keys::{self, Chord};

/// The longest `wait`, `hold` or drag step, in milliseconds.
pub const MAX_DURATION_MS: u32 = 60_000;
/// The longest settle timeout, in milliseconds.
pub const MAX_SETTLE_MS: u32 = 30_000;
/// The most actions in one request.
pub const MAX_ACTIONS: usize = 1000;
/// The most wheel clicks in one direction of one scroll.
pub const MAX_SCROLL: i32 = 1000;
/// The most repeats of one key.
pub const MAX_REPEAT: u32 = 1000;
/// The most points in one drag.
pub const MAX_PATH: usize = 10_000;
/// The most characters in one `type`.
pub const MAX_TEXT: usize = 100_000;
/// The pause between the clicks of a double or triple click. Apps take two
/// presses stamped in the same millisecond for one event delivered twice
/// (Chromium counts them as two single clicks, so no `dblclick`), so the
/// clicks of one `count` must be apart; 15 ms is far inside every
/// double-click time (xdotool's `--repeat` waits 10 ms).
pub const MULTI_CLICK_GAP: Duration = Duration::from_millis(15);

/// A point on the screen, in screen pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    /// Horizontal.
    pub x: u16,
    /// Vertical.
    pub y: u16,
}

/// One checked action.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Move the pointer.
    Move(Pos),
    /// Click `count` times, holding `modifiers`.
    Click {
        /// Where, or where the pointer is.
        at: Option<Pos>,
        /// Which button.
        button: Button,
        /// 1 to 3.
        count: u8,
        /// Modifier keysyms.
        modifiers: Vec<u32>,
    },
    /// Press or release a button.
    Button {
        /// Where, or where the pointer is.
        at: Option<Pos>,
        /// Which button.
        button: Button,
        /// Press (true) or release.
        down: bool,
    },
    /// Press at the first point, move through the rest, release.
    Drag {
        /// At least two points.
        path: Vec<Pos>,
        /// Which button.
        button: Button,
        /// Modifier keysyms.
        modifiers: Vec<u32>,
        /// The pause at each point.
        step: Duration,
    },
    /// Turn the wheel.
    Scroll {
        /// Where, or where the pointer is.
        at: Option<Pos>,
        /// Clicks right (negative: left).
        dx: i32,
        /// Clicks down (negative: up).
        dy: i32,
        /// Modifier keysyms.
        modifiers: Vec<u32>,
    },
    /// Type these keysyms, one per character.
    Type(Vec<u32>),
    /// Press and release a chord `repeat` times.
    Key {
        /// The chord.
        chord: Chord,
        /// How many times.
        repeat: u32,
    },
    /// Press a chord and keep it down.
    KeyDown(Chord),
    /// Release a chord.
    KeyUp(Chord),
    /// Press a chord, wait, release.
    Hold {
        /// The chord.
        chord: Chord,
        /// How long.
        duration: Duration,
    },
    /// Wait.
    Wait(Duration),
}

/// Everything an input request asks for, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The actions.
    pub ops: Vec<Op>,
    /// The settle, if asked for.
    pub settle: Option<Settle>,
}

/// Maps points from screenshot coordinates (or screen coordinates, when there
/// is no coordinate space) to the screen, refusing points outside it.
#[derive(Debug, Clone, Copy)]
pub struct Mapper {
    space: Option<CoordinateSpace>,
    width: u32,
    height: u32,
}

impl Mapper {
    /// A mapper for a screen of `width` x `height`.
    pub fn new(space: Option<CoordinateSpace>, width: u32, height: u32) -> Self {
        Self { space, width, height }
    }

    /// `screen = origin + point / scale`, rounded to the nearest pixel. The
    /// error names the screen size (and the mapped point, when it differs).
    pub fn map(&self, x: i32, y: i32) -> Result<Pos, String> {
        let (sx, sy) = match self.space {
            None => (i64::from(x), i64::from(y)),
            Some(s) => (
                // A tiny scale makes a huge point: saturate, never wrap.
                i64::from(s.x).saturating_add((f64::from(x) / s.scale).round() as i64),
                i64::from(s.y).saturating_add((f64::from(y) / s.scale).round() as i64),
            ),
        };
        let inside =
            (0..i64::from(self.width)).contains(&sx) && (0..i64::from(self.height)).contains(&sy);
        match (u16::try_from(sx), u16::try_from(sy)) {
            (Ok(px), Ok(py)) if inside => Ok(Pos { x: px, y: py }),
            _ => {
                let mapped = if self.space.is_some() {
                    format!(" (({sx}, {sy}) on the screen, through coordinate_space)")
                } else {
                    String::new()
                };
                Err(format!(
                    "({x}, {y}){mapped} is outside the screen, which is {}x{} (x 0 to {}, y 0 to {})",
                    self.width,
                    self.height,
                    self.width.saturating_sub(1),
                    self.height.saturating_sub(1)
                ))
            }
        }
    }
}

/// Checks an input request against a screen of `width` x `height`.
pub fn check(req: &InputRequest, width: u32, height: u32) -> Result<Checked, Vec<Issue>> {
    let mut issues = Vec::new();
    let mut bad = |path: String, problem: String| issues.push(Issue { path, problem });
    if let Some(space) = &req.coordinate_space
        && !(space.scale.is_finite() && space.scale > 0.0 && space.scale <= 1.0)
    {
        bad(
            "coordinate_space.scale".into(),
            format!("{} is not above 0 and at most 1 (a screenshot's x-holm-scale)", space.scale),
        );
    }
    if let Some(s) = &req.settle {
        if s.timeout_ms > MAX_SETTLE_MS {
            bad("settle.timeout_ms".into(), format!("{} is above {MAX_SETTLE_MS}", s.timeout_ms));
        }
        if s.quiet_ms > s.timeout_ms.min(MAX_SETTLE_MS) {
            bad(
                "settle.quiet_ms".into(),
                format!(
                    "{} is above timeout_ms ({}): it could never settle",
                    s.quiet_ms, s.timeout_ms
                ),
            );
        }
    }
    if req.actions.is_empty() {
        bad("actions".into(), "give at least one action".into());
    }
    if req.actions.len() > MAX_ACTIONS {
        bad("actions".into(), format!("{} actions; at most {MAX_ACTIONS}", req.actions.len()));
    }
    // With a bad coordinate space, points cannot be checked: report it alone.
    let space_ok = req.coordinate_space.is_none_or(|s| s.scale.is_finite() && s.scale > 0.0);
    let mapper = Mapper::new(req.coordinate_space.filter(|_| space_ok), width, height);
    let mut ops = Vec::with_capacity(req.actions.len());
    for (i, action) in req.actions.iter().enumerate() {
        match check_action(action, &mapper) {
            Ok(op) => ops.push(op),
            Err(mut more) => {
                for issue in &mut more {
                    issue.path = format!("actions[{i}]{}", issue.path);
                }
                issues.extend(more);
            }
        }
    }
    if issues.is_empty() { Ok(Checked { ops, settle: req.settle }) } else { Err(issues) }
}

fn check_action(action: &Action, mapper: &Mapper) -> Result<Op, Vec<Issue>> {
    let mut issues = Vec::new();
    let mut bad = |path: &str, problem: String| issues.push(Issue { path: path.into(), problem });
    let at = |x: Option<i32>, y: Option<i32>, bad: &mut dyn FnMut(&str, String)| match (x, y) {
        (None, None) => None,
        (Some(x), Some(y)) => match mapper.map(x, y) {
            Ok(p) => Some(p),
            Err(e) => {
                bad(if x < 0 || mapper.map(x, 0).is_err() { ".x" } else { ".y" }, e);
                None
            }
        },
        (Some(_), None) => {
            bad(".y", "is required with x".into());
            None
        }
        (None, Some(_)) => {
            bad(".x", "is required with y".into());
            None
        }
    };
    let op = match action {
        Action::Move { x, y } => at(Some(*x), Some(*y), &mut bad).map(Op::Move),
        Action::Click { x, y, button, count, modifiers } => {
            let at = at(*x, *y, &mut bad);
            if !(1..=3).contains(count) {
                bad(".count", format!("{count} is outside 1 to 3"));
            }
            let modifiers = check_modifiers(modifiers, &mut bad);
            Some(Op::Click { at, button: *button, count: *count, modifiers })
        }
        Action::MouseDown { x, y, button } => {
            Some(Op::Button { at: at(*x, *y, &mut bad), button: *button, down: true })
        }
        Action::MouseUp { x, y, button } => {
            Some(Op::Button { at: at(*x, *y, &mut bad), button: *button, down: false })
        }
        Action::Drag { path, button, modifiers, step_ms } => {
            if path.len() < 2 {
                bad(".path", format!("has {} points; a drag needs at least 2", path.len()));
            }
            if path.len() > MAX_PATH {
                bad(".path", format!("has {} points; at most {MAX_PATH}", path.len()));
            }
            let mut points = Vec::with_capacity(path.len());
            for (j, Point { x, y }) in path.iter().enumerate() {
                match mapper.map(*x, *y) {
                    Ok(p) => points.push(p),
                    Err(e) => bad(&format!(".path[{j}]"), e),
                }
            }
            duration(".step_ms", *step_ms, &mut bad);
            let modifiers = check_modifiers(modifiers, &mut bad);
            Some(Op::Drag {
                path: points,
                button: *button,
                modifiers,
                step: Duration::from_millis(u64::from(*step_ms)),
            })
        }
        Action::Scroll { x, y, dx, dy, modifiers } => {
            let at = at(*x, *y, &mut bad);
            for (field, v) in [(".dx", dx), (".dy", dy)] {
                if v.unsigned_abs() > MAX_SCROLL.unsigned_abs() {
                    bad(field, format!("{v} clicks; at most {MAX_SCROLL} either way"));
                }
            }
            let modifiers = check_modifiers(modifiers, &mut bad);
            Some(Op::Scroll { at, dx: *dx, dy: *dy, modifiers })
        }
        Action::Type { text } => {
            if text.chars().count() > MAX_TEXT {
                bad(".text", format!("is longer than {MAX_TEXT} characters; send it in parts"));
                None
            } else {
                match keys::text_keysyms(text) {
                    Ok(syms) => Some(Op::Type(syms)),
                    Err(e) => {
                        bad(".text", e.to_string());
                        None
                    }
                }
            }
        }
        Action::Key { key, repeat } => {
            if !(1..=MAX_REPEAT).contains(repeat) {
                bad(".repeat", format!("{repeat} is outside 1 to {MAX_REPEAT}"));
            }
            chord(key, &mut bad).map(|chord| Op::Key { chord, repeat: *repeat })
        }
        Action::KeyDown { key } => chord(key, &mut bad).map(Op::KeyDown),
        Action::KeyUp { key } => chord(key, &mut bad).map(Op::KeyUp),
        Action::Hold { key, duration_ms } => {
            let d = duration(".duration_ms", *duration_ms, &mut bad);
            chord(key, &mut bad).map(|chord| Op::Hold { chord, duration: d })
        }
        Action::Wait { ms } => Some(Op::Wait(duration(".ms", *ms, &mut bad))),
    };
    match op {
        Some(op) if issues.is_empty() => Ok(op),
        _ => Err(issues),
    }
}

fn duration(field: &str, ms: u32, bad: &mut dyn FnMut(&str, String)) -> Duration {
    if ms > MAX_DURATION_MS {
        bad(field, format!("{ms} ms is above {MAX_DURATION_MS}"));
    }
    Duration::from_millis(u64::from(ms))
}

fn chord(key: &str, bad: &mut dyn FnMut(&str, String)) -> Option<Chord> {
    match keys::parse_chord(key) {
        Ok(c) => Some(c),
        Err(e) => {
            bad(".key", e.to_string());
            None
        }
    }
}

fn check_modifiers(names: &[String], bad: &mut dyn FnMut(&str, String)) -> Vec<u32> {
    let mut out = Vec::new();
    for (j, name) in names.iter().enumerate() {
        match keys::keysym(name.trim()) {
            Some(k) if keys::is_modifier(k) => {
                if !out.contains(&k) {
                    out.push(k);
                }
            }
            Some(_) => bad(
                &format!(".modifiers[{j}]"),
                format!("{name:?} is not a modifier (ctrl, shift, alt, super, altgr)"),
            ),
            None => bad(&format!(".modifiers[{j}]"), format!("unknown key {name:?}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(json: &str) -> InputRequest {
        holm_proto::strict::from_slice(json.as_bytes()).unwrap()
    }

    fn paths(json: &str) -> Vec<String> {
        check(&req(json), 1280, 800).unwrap_err().into_iter().map(|i| i.path).collect()
    }

    #[test]
    fn accepts_good_actions_with_zero_coordinates() {
        let c = check(
            &req(r#"{"actions":[
                {"type":"move","x":0,"y":0},
                {"type":"click","x":1279,"y":799,"button":"right","count":3,"modifiers":["ctrl","Shift"]},
                {"type":"drag","path":[{"x":0,"y":0},{"x":5,"y":5}],"step_ms":10},
                {"type":"scroll","dy":-3},
                {"type":"type","text":"hé\n"},
                {"type":"key","key":"ctrl+shift+t","repeat":2},
                {"type":"hold","key":"shift","duration_ms":60000},
                {"type":"wait","ms":0}
            ],"settle":{"timeout_ms":30000,"quiet_ms":100}}"#),
            1280,
            800,
        )
        .unwrap();
        assert_eq!(c.ops[0], Op::Move(Pos { x: 0, y: 0 }));
        assert_eq!(
            c.ops[1],
            Op::Click {
                at: Some(Pos { x: 1279, y: 799 }),
                button: Button::Right,
                count: 3,
                modifiers: vec![0xffe3, 0xffe1]
            }
        );
        assert_eq!(c.ops[4], Op::Type(vec![0x68, 0xe9, 0xff0d]));
        assert_eq!(c.ops.len(), 8);
    }

    #[test]
    fn refuses_each_bad_field_by_path() {
        let cases: &[(&str, &[&str])] = &[
            (r#"{"actions":[]}"#, &["actions"]),
            (r#"{"actions":[{"type":"move","x":1280,"y":0}]}"#, &["actions[0].x"]),
            (r#"{"actions":[{"type":"move","x":0,"y":800}]}"#, &["actions[0].y"]),
            (r#"{"actions":[{"type":"move","x":-1,"y":0}]}"#, &["actions[0].x"]),
            (r#"{"actions":[{"type":"click","x":5}]}"#, &["actions[0].y"]),
            (r#"{"actions":[{"type":"click","count":4}]}"#, &["actions[0].count"]),
            (r#"{"actions":[{"type":"click","count":0}]}"#, &["actions[0].count"]),
            (
                r#"{"actions":[{"type":"click","modifiers":["ctrl","x"]}]}"#,
                &["actions[0].modifiers[1]"],
            ),
            (
                r#"{"actions":[{"type":"click","modifiers":["shft"]}]}"#,
                &["actions[0].modifiers[0]"],
            ),
            (r#"{"actions":[{"type":"drag","path":[{"x":1,"y":1}]}]}"#, &["actions[0].path"]),
            (
                r#"{"actions":[{"type":"drag","path":[{"x":1,"y":1},{"x":9999,"y":1}],"step_ms":60001}]}"#,
                &["actions[0].path[1]", "actions[0].step_ms"],
            ),
            (r#"{"actions":[{"type":"scroll","dy":1001}]}"#, &["actions[0].dy"]),
            (r#"{"actions":[{"type":"type","text":"a\u0007"}]}"#, &["actions[0].text"]),
            (r#"{"actions":[{"type":"key","key":"ctrl+shft+t"}]}"#, &["actions[0].key"]),
            (r#"{"actions":[{"type":"key","key":"a","repeat":0}]}"#, &["actions[0].repeat"]),
            (
                r#"{"actions":[{"type":"hold","key":"a","duration_ms":60001}]}"#,
                &["actions[0].duration_ms"],
            ),
            (r#"{"actions":[{"type":"wait","ms":70000}]}"#, &["actions[0].ms"]),
            (
                r#"{"actions":[{"type":"wait","ms":1}],"settle":{"timeout_ms":30001}}"#,
                &["settle.timeout_ms"],
            ),
            (
                r#"{"actions":[{"type":"wait","ms":1}],"settle":{"timeout_ms":50,"quiet_ms":100}}"#,
                &["settle.quiet_ms"],
            ),
            (
                r#"{"actions":[{"type":"move","x":1,"y":1}],"coordinate_space":{"scale":2}}"#,
                &["coordinate_space.scale"],
            ),
            (
                r#"{"actions":[{"type":"wait","ms":1},{"type":"move","x":5000,"y":1},{"type":"key","key":"nope"}]}"#,
                &["actions[1].x", "actions[2].key"],
            ),
        ];
        for (json, want) in cases {
            assert_eq!(paths(json), *want, "{json}");
        }
    }

    #[test]
    fn out_of_screen_names_the_screen_size() {
        let err =
            check(&req(r#"{"actions":[{"type":"move","x":1300,"y":10}]}"#), 1280, 800).unwrap_err();
        assert!(err[0].problem.contains("1280x800"), "{}", err[0].problem);
        let err = check(&req(r#"{"actions":[{"type":"key","key":"ctrl+shft+t"}]}"#), 1280, 800)
            .unwrap_err();
        assert!(err[0].problem.contains(r#"unknown key "shft""#), "{}", err[0].problem);
    }

    #[test]
    fn coordinate_space_maps_screenshot_points() {
        let space = |scale, x, y| Some(CoordinateSpace { scale, x, y });
        let m = Mapper::new(space(0.5, 100, 50), 1280, 800);
        assert_eq!(m.map(10, 20), Ok(Pos { x: 120, y: 90 }));
        assert_eq!(m.map(0, 0), Ok(Pos { x: 100, y: 50 }));
        let m = Mapper::new(space(0.25, 0, 0), 1280, 800);
        assert_eq!(m.map(319, 199), Ok(Pos { x: 1276, y: 796 }));
        let err = m.map(320, 0).unwrap_err();
        assert!(err.contains("(1280, 0) on the screen"), "{err}");
        let m = Mapper::new(space(1.0 / 3.0, 0, 0), 1280, 800);
        assert_eq!(m.map(1, 1), Ok(Pos { x: 3, y: 3 }));
        let m = Mapper::new(None, 1280, 800);
        assert_eq!(m.map(1279, 799), Ok(Pos { x: 1279, y: 799 }));
        assert!(m.map(1280, 799).is_err());
    }
}
