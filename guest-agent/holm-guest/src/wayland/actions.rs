//! Runs checked input [`Op`]s on the Wayland desktop: the events of one
//! action go out in one burst and are confirmed by one round trip; only the
//! waits the caller asked for (`wait`, `hold`, drag steps) pass time, and
//! they pass without the connection's lock, so screenshots go on meanwhile.

use std::time::Instant;

use holm_proto::keys::Chord;

use super::input::InputSession;
use super::{Wayland, lock, xwayland_running};
use crate::display::{DisplayError, Stopped};
use crate::input::{Op, Pos};

/// Runs the ops in order. On error, says how many ran.
pub fn run(w: &Wayland, index: u8, ops: &[Op]) -> Result<(), Stopped> {
    // A broken connection (sway restarted) is replaced here, before any
    // action runs, so actions are never half-sent and then repeated.
    w.with_input(true, InputSession::roundtrip).map_err(|error| Stopped { performed: 0, error })?;
    if ops.iter().any(uses_keyboard) {
        w.focus_screen(index).map_err(|error| Stopped { performed: 0, error })?;
    }
    let mut ctx = Ctx { w, index, settle: None };
    for (i, op) in ops.iter().enumerate() {
        ctx.op(op).map_err(|error| Stopped { performed: i, error })?;
    }
    Ok(())
}

fn uses_keyboard(op: &Op) -> bool {
    match op {
        Op::Type(_) | Op::Key { .. } | Op::KeyDown(_) | Op::KeyUp(_) | Op::Hold { .. } => true,
        Op::Click { modifiers, .. } | Op::Drag { modifiers, .. } | Op::Scroll { modifiers, .. } => {
            !modifiers.is_empty()
        }
        Op::Move(_) | Op::Button { .. } | Op::Wait(_) => false,
    }
}

struct Ctx<'a> {
    w: &'a Wayland,
    index: u8,
    /// Whether re-pointed keymap slots must settle (an Xwayland server
    /// runs), learned once per request when first needed.
    settle: Option<bool>,
}

fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}

impl Ctx<'_> {
    fn input<T>(
        &self,
        f: impl FnMut(&mut InputSession) -> Result<T, DisplayError>,
    ) -> Result<T, DisplayError> {
        self.w.with_input(false, f)
    }

    fn settle(&mut self) -> bool {
        *self.settle.get_or_insert_with(xwayland_running)
    }

    /// Moves the pointer to `p` on this screen and remembers it.
    fn move_to(&self, s: &mut InputSession, p: Pos) -> Result<(), DisplayError> {
        s.motion(self.index, p)?;
        let mut pointer = lock(&self.w.pointer);
        if let Some(at) = pointer.at.get_mut(usize::from(self.index)) {
            *at = Some(p);
        }
        pointer.on = Some(self.index);
        Ok(())
    }

    /// Puts the pointer at `at`, or, for an action without coordinates, back
    /// where the agent left it on this screen when it is on another one.
    fn place(&self, s: &mut InputSession, at: Option<Pos>) -> Result<(), DisplayError> {
        if let Some(p) = at {
            return self.move_to(s, p);
        }
        let (on, here) = {
            let pointer = lock(&self.w.pointer);
            (pointer.on, pointer.at.get(usize::from(self.index)).copied().flatten())
        };
        match here {
            Some(p) if on != Some(self.index) => self.move_to(s, p),
            _ => Ok(()),
        }
    }

    /// Presses a chord's keys, waiting without the lock while a slot settles.
    fn chord_down(&mut self, chord: &Chord) -> Result<Vec<(u32, u32)>, DisplayError> {
        let settle = self.settle();
        loop {
            match self.input(|s| s.chord_down(chord, settle))? {
                Ok(keys) => return Ok(keys),
                Err(t) => sleep_until(t),
            }
        }
    }

    /// Presses modifiers, runs `body`, and releases the modifiers in reverse
    /// order whatever `body` did.
    fn with_modifiers(
        &mut self,
        modifiers: &[u32],
        body: impl FnOnce(&mut Self) -> Result<(), DisplayError>,
    ) -> Result<(), DisplayError> {
        if modifiers.is_empty() {
            return body(self);
        }
        let chord = Chord {
            modifiers: modifiers[..modifiers.len() - 1].to_vec(),
            key: modifiers[modifiers.len() - 1],
        };
        let keys = self.chord_down(&chord)?;
        let result = body(self);
        let released = self.input(|s| {
            s.release_reversed(&keys);
            s.roundtrip()
        });
        result.and(released)
    }

    fn op(&mut self, op: &Op) -> Result<(), DisplayError> {
        let index = self.index;
        match op {
            Op::Move(p) => self.input(|s| {
                self.move_to(s, *p)?;
                s.roundtrip()
            }),
            Op::Click { at, button, count, modifiers } => {
                self.input(|s| self.place(s, *at))?;
                self.with_modifiers(modifiers, |c| {
                    for i in 0..*count {
                        if i > 0 {
                            std::thread::sleep(crate::input::MULTI_CLICK_GAP);
                        }
                        c.input(|s| {
                            s.button(index, *button, true)?;
                            s.button(index, *button, false)?;
                            s.roundtrip()
                        })?;
                    }
                    Ok(())
                })
            }
            Op::Button { at, button, down } => self.input(|s| {
                self.place(s, *at)?;
                s.button(index, *button, *down)?;
                s.roundtrip()
            }),
            Op::Drag { path, button, modifiers, step } => {
                let Some((first, rest)) = path.split_first() else { return Ok(()) };
                self.input(|s| self.move_to(s, *first))?;
                self.with_modifiers(modifiers, |c| {
                    c.input(|s| {
                        s.button(index, *button, true)?;
                        s.roundtrip()
                    })?;
                    let moved = (|| {
                        for p in rest {
                            if !step.is_zero() {
                                std::thread::sleep(*step);
                            }
                            c.input(|s| {
                                c.move_to(s, *p)?;
                                if step.is_zero() { s.flush() } else { s.roundtrip() }
                            })?;
                        }
                        Ok(())
                    })();
                    if !step.is_zero() {
                        std::thread::sleep(*step);
                    }
                    // The button comes up even when a move failed.
                    let released = c.input(|s| {
                        s.button(index, *button, false)?;
                        s.roundtrip()
                    });
                    moved.and(released)
                })
            }
            Op::Scroll { at, dx, dy, modifiers } => {
                self.input(|s| self.place(s, *at))?;
                self.with_modifiers(modifiers, |c| {
                    c.input(|s| {
                        s.scroll(index, *dx, *dy)?;
                        s.roundtrip()
                    })
                })
            }
            Op::Type(syms) => self.type_text(syms),
            Op::Key { chord, repeat } => {
                for _ in 0..*repeat {
                    let keys = self.chord_down(chord)?;
                    self.input(|s| {
                        s.release_reversed(&keys);
                        Ok(())
                    })?;
                }
                self.input(InputSession::roundtrip)
            }
            Op::KeyDown(chord) => {
                let keys = self.chord_down(chord)?;
                self.input(|s| {
                    s.set_held(&keys, true);
                    s.roundtrip()
                })
            }
            Op::KeyUp(chord) => {
                let keys = self.chord_keys(chord)?;
                self.release_held(&keys)
            }
            Op::Hold { chord, duration } => {
                let keys = self.chord_down(chord)?;
                self.input(|s| {
                    s.set_held(&keys, true);
                    s.roundtrip()
                })?;
                std::thread::sleep(*duration);
                self.release_held(&keys)
            }
            Op::Wait(d) => {
                std::thread::sleep(*d);
                Ok(())
            }
        }
    }

    /// Releases held keys in the reverse of their order, and frees their slots.
    fn release_held(&self, keys: &[(u32, u32)]) -> Result<(), DisplayError> {
        self.input(|s| {
            s.release_reversed(keys);
            s.set_held(keys, false);
            s.roundtrip()
        })
    }

    /// The keys a chord pressed, to release them: those of its keysyms that
    /// are down now.
    fn chord_keys(&mut self, chord: &Chord) -> Result<Vec<(u32, u32)>, DisplayError> {
        let syms: Vec<u32> = chord.press_order().collect();
        self.input(|s| Ok(s.keys_down_for(&syms)))
    }

    /// Types keysyms exactly, in bursts: a burst ends when a slot must
    /// settle, and typing goes on once it may be re-pointed.
    fn type_text(&mut self, syms: &[u32]) -> Result<(), DisplayError> {
        let settle = self.settle();
        let mut pos = 0;
        while pos < syms.len() {
            let (typed, wait) = self.input(|s| s.type_burst(&syms[pos..], settle))?;
            pos += typed;
            if let Some(t) = wait {
                sleep_until(t);
            }
        }
        Ok(())
    }
}
