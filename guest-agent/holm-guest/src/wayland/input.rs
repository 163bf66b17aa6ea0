//! Input through one persistent connection: a virtual pointer per screen,
//! each bound to its output (so absolute motion is in that screen's pixels),
//! and one virtual keyboard for the seat, whose keymap the guest writes
//! ([`super::keymap`]).
//!
//! The devices live as long as the compositor does. That matters twice:
//! clients bind their pointer and keyboard only while a device exists, and a
//! keyboard that has gone away leaves new clients without a keymap (Chromium
//! then crashes at start), so the guest's keyboard claims the seat at start
//! and again before each browser start ([`InputSession::claim_seat`]).
//!
//! A virtual keyboard's key events do not change the compositor's modifier
//! state; only its `modifiers` requests do. So every modifier key is sent as
//! a key event (clients see Shift or Control pressed) and as the modifier
//! mask it sets, and the level of each typed character (Shift, AltGr) is set
//! by mask alone.

use std::collections::HashSet;
use std::io::Write as _;
use std::os::fd::AsFd;
use std::path::Path;
use std::time::Instant;

use holm_proto::guest::Button;
use holm_proto::keys::Chord;
use wayland_client::protocol::{wl_keyboard, wl_pointer, wl_seat};
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::{
    zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1,
    zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1,
};
use wayland_protocols_wlr::virtual_pointer::v1::client::{
    zwlr_virtual_pointer_manager_v1::ZwlrVirtualPointerManagerV1,
    zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1,
};

use super::client::Client;
use super::keymap::{self, Keys, Press, Resolved};
use crate::display::DisplayError;
use crate::input::Pos;

/// Evdev codes of the pointer buttons.
fn button_code(b: Button) -> u32 {
    match b {
        Button::Left => 0x110,
        Button::Right => 0x111,
        Button::Middle => 0x112,
        Button::Back => 0x113,
        Button::Forward => 0x114,
    }
}

/// The seat's virtual devices and the keyboard's state.
#[derive(Debug)]
pub struct InputSession {
    client: Client,
    /// One per screen, bound to the screen's output.
    pointers: Vec<ZwlrVirtualPointerV1>,
    /// Each screen's size, the extent of its pointer's absolute motion.
    sizes: Vec<(u32, u32)>,
    keyboard: ZwpVirtualKeyboardV1,
    keys: Keys,
    /// Modifiers held by the keys that are down.
    depressed: u32,
    /// Locked modifiers (Caps Lock, Num Lock), as this keyboard set them.
    locked: u32,
    /// Keys that are down, by evdev code, with the modifier each sets.
    down: Vec<(u32, u32)>,
    epoch: Instant,
}

impl InputSession {
    /// Connects, makes the devices, uploads the keymap and claims the seat.
    pub fn connect(socket: &Path, outputs: &[String]) -> Result<Self, DisplayError> {
        let client = Client::connect(socket)?;
        let seat: wl_seat::WlSeat = client.bind(1..=1)?;
        let pointer_manager: ZwlrVirtualPointerManagerV1 = client.bind(2..=2)?;
        let keyboard_manager: ZwpVirtualKeyboardManagerV1 = client.bind(1..=1)?;
        let mut pointers = Vec::with_capacity(outputs.len());
        let mut sizes = Vec::with_capacity(outputs.len());
        for name in outputs {
            let o = client.state.output(name).ok_or_else(|| {
                DisplayError::Gone(format!("the compositor has no output {name} yet"))
            })?;
            let (w, h) = if o.logical.0 > 0 { o.logical } else { o.mode };
            sizes
                .push((u32::try_from(w).unwrap_or(1).max(1), u32::try_from(h).unwrap_or(1).max(1)));
            let wl = o.wl.clone();
            pointers.push(pointer_manager.create_virtual_pointer_with_output(
                Some(&seat),
                Some(&wl),
                &client.qh,
                (),
            ));
        }
        let keyboard = keyboard_manager.create_virtual_keyboard(&seat, &client.qh, ());
        let mut session = Self {
            client,
            pointers,
            sizes,
            keyboard,
            keys: Keys::new(),
            depressed: 0,
            locked: 0,
            down: Vec::new(),
            epoch: Instant::now(),
        };
        session.upload_keymap()?;
        session.claim_seat()?;
        Ok(session)
    }

    fn now_ms(&self) -> u32 {
        u32::try_from(self.epoch.elapsed().as_millis() % u128::from(u32::MAX)).unwrap_or(0)
    }

    /// Makes this keyboard the seat's: a modifier change is enough (the
    /// compositor takes the keyboard that last changed), and changes nothing
    /// for clients once it is undone.
    pub fn claim_seat(&mut self) -> Result<(), DisplayError> {
        let other = if self.depressed & keymap::SHIFT == 0 { keymap::SHIFT } else { 0 };
        self.keyboard.modifiers(self.depressed ^ other, 0, self.locked, 0);
        self.keyboard.modifiers(self.depressed, 0, self.locked, 0);
        self.roundtrip()
    }

    /// Sends the keymap as it is now.
    fn upload_keymap(&mut self) -> Result<(), DisplayError> {
        use rustix::fs::{MemfdFlags, memfd_create};
        let text = self.keys.text();
        let fail = |e: &dyn std::fmt::Display| DisplayError::Failed(format!("keymap memfd: {e}"));
        let fd = memfd_create("holm-keymap", MemfdFlags::CLOEXEC).map_err(|e| fail(&e))?;
        let mut file = std::fs::File::from(fd);
        file.write_all(text.as_bytes()).map_err(|e| fail(&e))?;
        let size = u32::try_from(text.len()).map_err(|e| fail(&e))?;
        self.keyboard.keymap(wl_keyboard::KeymapFormat::XkbV1 as u32, file.as_fd(), size);
        self.keys.dirty = false;
        // The compositor read the keymap when it handled the request.
        self.client.flush()
    }

    /// One round trip, after which every event sent has been handled by the
    /// compositor (and sent on to clients); used slots start settling.
    pub fn roundtrip(&mut self) -> Result<(), DisplayError> {
        self.client.roundtrip()?;
        self.keys.confirmed(Instant::now());
        Ok(())
    }

    /// Sends what is queued, without waiting for the compositor.
    pub fn flush(&self) -> Result<(), DisplayError> {
        self.client.flush()
    }

    /// The keys that are down for a chord's keysyms (with the Shift its key
    /// needed), in the order they were pressed.
    pub fn keys_down_for(&self, syms: &[u32]) -> Vec<(u32, u32)> {
        let mut codes = Vec::new();
        for p in syms.iter().filter_map(|s| self.keys.find(*s)) {
            codes.push(p.code);
            if p.mods & keymap::SHIFT != 0 {
                codes.push(keymap::SHIFT_KEY);
            }
            if p.mods & keymap::MOD5 != 0 {
                codes.push(keymap::ALTGR_KEY);
            }
        }
        self.down.iter().filter(|(c, _)| codes.contains(c)).copied().collect()
    }

    /// The size of screen `index`, as its pointer maps it.
    pub fn size(&self, index: u8) -> Option<(u32, u32)> {
        self.sizes.get(usize::from(index)).copied()
    }

    fn pointer(&self, index: u8) -> Result<&ZwlrVirtualPointerV1, DisplayError> {
        self.pointers
            .get(usize::from(index))
            .ok_or_else(|| DisplayError::Failed(format!("no pointer for screen {index}")))
    }

    /// Moves screen `index`'s pointer to `p`.
    pub fn motion(&mut self, index: u8, p: Pos) -> Result<(), DisplayError> {
        let (w, h) = self.size(index).unwrap_or((1, 1));
        let t = self.now_ms();
        let pointer = self.pointer(index)?;
        pointer.motion_absolute(t, u32::from(p.x), u32::from(p.y), w, h);
        pointer.frame();
        Ok(())
    }

    /// Presses or releases a button.
    pub fn button(&mut self, index: u8, b: Button, down: bool) -> Result<(), DisplayError> {
        let t = self.now_ms();
        let pointer = self.pointer(index)?;
        let state =
            if down { wl_pointer::ButtonState::Pressed } else { wl_pointer::ButtonState::Released };
        pointer.button(t, button_code(b), state);
        pointer.frame();
        Ok(())
    }

    /// Turns the wheel: one frame per click, down and right positive.
    pub fn scroll(&mut self, index: u8, dx: i32, dy: i32) -> Result<(), DisplayError> {
        let t = self.now_ms();
        let pointer = self.pointer(index)?;
        for (axis, n) in
            [(wl_pointer::Axis::VerticalScroll, dy), (wl_pointer::Axis::HorizontalScroll, dx)]
        {
            for _ in 0..n.unsigned_abs() {
                let step = n.signum();
                pointer.axis_source(wl_pointer::AxisSource::Wheel);
                pointer.axis_discrete(t, axis, 15.0 * f64::from(step), step);
                pointer.frame();
            }
        }
        Ok(())
    }

    fn send_mods(&self, depressed: u32, locked: u32) {
        self.keyboard.modifiers(depressed, 0, locked, 0);
    }

    fn key_event(&self, code: u32, down: bool) {
        let state =
            if down { wl_keyboard::KeyState::Pressed } else { wl_keyboard::KeyState::Released };
        self.keyboard.key(self.now_ms(), code, state as u32);
    }

    /// Resolves keysyms, re-pointing slots (and uploading the keymap) as
    /// needed. `Err(Ok(t))`: a slot is settling until `t`; try again then.
    fn resolve_all(
        &mut self,
        syms: &[u32],
        settle: bool,
    ) -> Result<Result<Vec<Press>, Instant>, DisplayError> {
        let now = Instant::now();
        let mut out = Vec::with_capacity(syms.len());
        for &s in syms {
            match self.keys.resolve(s, now, settle) {
                Resolved::Press(p) => {
                    self.keys.used(p);
                    out.push(p);
                }
                Resolved::WaitUntil(t) => {
                    self.roundtrip()?;
                    return Ok(Err(t));
                }
                Resolved::NoSlot => return Err(no_slot(s)),
            }
        }
        if self.keys.dirty {
            self.upload_keymap()?;
        }
        Ok(Ok(out))
    }

    /// Presses the keys of a chord (modifiers in order, Shift or AltGr when
    /// its key needs a level, the key). Answers what to release, in order.
    /// `Ok(Err(t))`: a slot is settling until `t`; try again then.
    pub fn chord_down(
        &mut self,
        chord: &Chord,
        settle: bool,
    ) -> Result<Result<Vec<(u32, u32)>, Instant>, DisplayError> {
        let syms: Vec<u32> = chord.press_order().collect();
        let presses = match self.resolve_all(&syms, settle)? {
            Ok(p) => p,
            Err(t) => return Ok(Err(t)),
        };
        let Some((key, mods)) = presses.split_last() else { return Ok(Ok(Vec::new())) };
        let mut pressed = Vec::new();
        for p in mods {
            let mask = keymap::modifier_mask(p.code).unwrap_or(0);
            pressed.push((p.code, mask | p.mods));
        }
        let chord_has_shift = chord.modifiers.iter().any(|m| matches!(*m, 0xffe1 | 0xffe2));
        let level = if chord_has_shift { key.mods & !keymap::SHIFT } else { key.mods };
        // The level's modifiers go down before the key, as keys of their own
        // (Shift_L; AltGr on the code xkeyboard-config gives it), so the key
        // is decoded at its level.
        if level & keymap::SHIFT != 0 {
            pressed.push((keymap::SHIFT_KEY, keymap::SHIFT));
        }
        if level & keymap::MOD5 != 0 {
            pressed.push((keymap::ALTGR_KEY, keymap::MOD5));
        }
        pressed.push((key.code, keymap::modifier_mask(key.code).unwrap_or(0)));
        let mut seen = HashSet::new();
        pressed.retain(|(code, _)| seen.insert(*code));
        for &(code, mask) in &pressed {
            self.press(code, mask);
        }
        Ok(Ok(pressed))
    }

    /// Presses one key and adds what it holds to the modifiers.
    pub fn press(&mut self, code: u32, mask: u32) {
        self.key_event(code, true);
        if code == 58 {
            self.locked ^= keymap::LOCK;
        }
        if code == 69 {
            self.locked ^= keymap::MOD2;
        }
        self.down.push((code, mask));
        self.depressed = self.down.iter().fold(0, |m, (_, k)| m | k);
        self.send_mods(self.depressed, self.locked);
    }

    /// Releases keys in the reverse of the order given (the order they were
    /// pressed in).
    pub fn release_reversed(&mut self, keys: &[(u32, u32)]) {
        for &(code, _) in keys.iter().rev() {
            self.key_event(code, false);
            if let Some(i) = self.down.iter().position(|(c, _)| *c == code) {
                self.down.remove(i);
            }
            self.depressed = self.down.iter().fold(0, |m, (_, k)| m | k);
            self.send_mods(self.depressed, self.locked);
        }
    }

    /// Marks the slots on a held chord's keys as held (or released), so
    /// they are not re-pointed while down.
    pub fn set_held(&mut self, keys: &[(u32, u32)], held: bool) {
        for &(code, _) in keys {
            self.keys.set_held(code, held);
        }
    }

    /// Types as many of `syms` as fit before a slot must settle, exactly:
    /// each character's level is set by modifiers alone, with Caps Lock off.
    /// Answers how many were typed, and when to go on if not all were.
    pub fn type_burst(
        &mut self,
        syms: &[u32],
        settle: bool,
    ) -> Result<(usize, Option<Instant>), DisplayError> {
        let now = Instant::now();
        let mut presses = Vec::new();
        let mut wait = None;
        for &s in syms {
            match self.keys.resolve(s, now, settle) {
                Resolved::Press(p) => {
                    self.keys.used(p);
                    presses.push(p);
                }
                Resolved::WaitUntil(t) => {
                    wait = Some(t);
                    break;
                }
                Resolved::NoSlot => return Err(no_slot(s)),
            }
        }
        if self.keys.dirty {
            self.upload_keymap()?;
        }
        let locked = self.locked & !keymap::LOCK;
        let mut mods = self.depressed;
        if locked != self.locked {
            self.send_mods(mods, locked);
        }
        for p in &presses {
            let want = self.depressed | p.mods;
            if want != mods {
                self.send_mods(want, locked);
                mods = want;
            }
            self.key_event(p.code, true);
            self.key_event(p.code, false);
        }
        if mods != self.depressed || locked != self.locked {
            self.send_mods(self.depressed, self.locked);
        }
        self.roundtrip()?;
        Ok((presses.len(), wait))
    }
}

fn no_slot(keysym: u32) -> DisplayError {
    DisplayError::Unsupported(format!(
        "keysym 0x{keysym:x} is on no key, and every spare key level is held down (release keys held with key_down)"
    ))
}
