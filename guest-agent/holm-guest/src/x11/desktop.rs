//! The X11 backend behind the desktop interface: each screen its own X
//! server and connection.

use std::sync::MutexGuard;

use holm_proto::guest::{Region, Settle};

use super::{X11, XError, capture};
use crate::display::{Captured, Desktop, Stopped};
use crate::input::Op;

impl X11 {
    fn on(&self, index: u8) -> Result<&super::ScreenConn, XError> {
        self.screen(index).ok_or_else(|| XError::Failed(format!("there is no screen {index}")))
    }
}

impl Desktop for X11 {
    fn server_name(&self) -> &'static str {
        "X server"
    }

    fn len(&self) -> usize {
        X11::len(self)
    }

    fn input_turn(&self, index: u8) -> Option<MutexGuard<'_, ()>> {
        self.screen(index).map(|s| s.input_lock.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn size(&self, index: u8) -> Result<(u32, u32), XError> {
        self.on(index)?.size()
    }

    fn pointer(&self, index: u8) -> Result<(i32, i32), XError> {
        self.on(index)?.pointer()
    }

    fn pointer_after_input(&self, index: u8) -> Result<(i32, i32), XError> {
        self.on(index)?.pointer_after_input()
    }

    fn capture(&self, index: u8, region: Region, with_cursor: bool) -> Result<Captured, XError> {
        let c = self.on(index)?.with(true, |c| capture::capture(c, region, with_cursor))?;
        Ok(Captured { frame: c.frame, pointer: Some(c.pointer), cursor: c.cursor })
    }

    fn frame_hash(&self, index: u8) -> Result<u64, XError> {
        self.on(index)?.with(true, capture::screen_hash)
    }

    fn run(&self, index: u8, ops: &[Op]) -> Result<(), Stopped> {
        let screen = self.on(index).map_err(|error| Stopped { performed: 0, error })?;
        super::input::run(screen, ops)
    }

    fn settle(&self, index: u8, s: Settle) -> Result<bool, XError> {
        super::input::settle(self.on(index)?, s)
    }
}

impl crate::display::Windows for X11 {
    fn windows(&self) -> Result<Vec<holm_proto::desk::Window>, XError> {
        let mut all = Vec::new();
        for index in 0..u8::try_from(self.len()).unwrap_or(u8::MAX) {
            all.extend(self.on(index)?.with(true, |c| super::windows::list(c, index))?);
        }
        Ok(all)
    }

    fn act(
        &self,
        window: &holm_proto::desk::Window,
        action: &holm_proto::desk::WindowAction,
    ) -> Result<(), XError> {
        let (screen, xid) = super::windows::split_id(window.id);
        use holm_proto::desk::WindowAction::{Move, Resize};
        let on = self.on(screen)?;
        // A resize keeps the contents' corner where it is.
        let (x, y) = match *action {
            Move { x, y } => (x, y),
            _ => (window.x, window.y),
        };
        let with_place = |size: Option<(u32, u32)>| {
            move |c: &mut super::Conn| super::windows::move_resize(c, xid, (x, y), size)
        };
        match *action {
            Move { .. } => on.with(false, with_place(None))?,
            Resize { width, height } => on.with(false, with_place(Some((width, height))))?,
            _ => return on.with(false, |c| super::windows::act(c, xid, action)),
        }
        // A window manager may place the frame, not the contents, where
        // asked (fluxbox does, whatever the gravity): once the window has
        // moved, a second request makes up the difference.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        loop {
            let now = on.with(true, |c| super::windows::list(c, screen))?;
            let Some(w) = now.iter().find(|w| w.id == window.id) else { return Ok(()) };
            let moved = (w.x, w.y) != (window.x, window.y)
                || matches!(*action, Resize { width, height } if (w.width, w.height) == (width, height));
            if (w.x, w.y) == (x, y) || std::time::Instant::now() >= deadline {
                return Ok(());
            }
            if moved {
                let again = (2 * x - w.x, 2 * y - w.y);
                return on.with(false, |c| super::windows::move_resize(c, xid, again, None));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    fn clipboard(&self) -> Result<crate::display::Clip, XError> {
        super::clipboard::read(self.on(0)?.display())
    }

    fn set_clipboard(&self, clip: crate::display::Clip) -> Result<(), XError> {
        super::clipboard::own(self.on(0)?.display(), clip)
    }
}
