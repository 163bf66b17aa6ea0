//! One connection to the compositor: its globals, its outputs (named and
//! placed through xdg-output), and dispatching with a deadline.
//!
//! Built on `wayland-client` with its pure-Rust backend, so the static guest
//! links no C library. Each connection has one event queue and one
//! [`State`]; the capture and input sessions each own a connection, so a
//! screenshot never waits behind a drag.

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use wayland_client::globals::{GlobalList, GlobalListContents, registry_queue_init};
use wayland_client::protocol::{wl_buffer, wl_output, wl_registry, wl_seat, wl_shm, wl_shm_pool};
use wayland_client::{Connection, Dispatch, DispatchError, EventQueue, Proxy, QueueHandle};
use wayland_protocols::xdg::xdg_output::zv1::client::{zxdg_output_manager_v1, zxdg_output_v1};
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::{
    zwp_virtual_keyboard_manager_v1, zwp_virtual_keyboard_v1,
};
use wayland_protocols_wlr::screencopy::v1::client::{
    zwlr_screencopy_frame_v1, zwlr_screencopy_manager_v1,
};
use wayland_protocols_wlr::virtual_pointer::v1::client::{
    zwlr_virtual_pointer_manager_v1, zwlr_virtual_pointer_v1,
};

use crate::display::DisplayError;

/// How long one exchange with the compositor may take before it counts as
/// not answering.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// One output as the compositor describes it.
#[derive(Debug, Clone)]
pub struct Output {
    /// The protocol object.
    pub wl: wl_output::WlOutput,
    /// Its name, such as `HEADLESS-1` (from xdg-output).
    pub name: Option<String>,
    /// Its place in the layout, in logical pixels (from xdg-output).
    pub position: (i32, i32),
    /// Its size in logical pixels (from xdg-output).
    pub logical: (i32, i32),
    /// Its current mode in pixels.
    pub mode: (i32, i32),
}

/// What a screencopy frame has said so far.
#[derive(Debug, Default, Clone, Copy)]
pub struct FrameEvents {
    /// The wl_shm buffer it wants: format, width, height, stride.
    pub buffer: Option<(u32, u32, u32, u32)>,
    /// Every buffer type has been announced (version 3).
    pub buffer_done: bool,
    /// Its flags (bit 0: y-inverted).
    pub flags: u32,
    /// The copy is done.
    pub ready: bool,
    /// The copy failed.
    pub failed: bool,
}

/// Everything the connection's events update.
#[derive(Debug, Default)]
pub struct State {
    /// The outputs, in the order the compositor announced them.
    pub outputs: Vec<Output>,
    /// The frame being captured.
    pub frame: FrameEvents,
}

impl State {
    /// The output named `name`.
    pub fn output(&self, name: &str) -> Option<&Output> {
        self.outputs.iter().find(|o| o.name.as_deref() == Some(name))
    }
}

/// A connection with its queue, state and globals.
#[derive(Debug)]
pub struct Client {
    /// The connection.
    pub conn: Connection,
    /// Its one event queue.
    pub queue: EventQueue<State>,
    /// What the events said.
    pub state: State,
    /// The globals, to bind from.
    pub globals: GlobalList,
    /// The queue's handle.
    pub qh: QueueHandle<State>,
}

/// Turns a dispatch failure into the desktop's error: a broken or refused
/// connection means the compositor is gone (or restarting).
pub fn gone(e: impl std::fmt::Display) -> DisplayError {
    DisplayError::Gone(format!("Wayland connection: {e}"))
}

impl Client {
    /// Connects to the compositor's socket and learns its outputs.
    pub fn connect(socket: &Path) -> Result<Self, DisplayError> {
        let stream = UnixStream::connect(socket).map_err(|e| {
            DisplayError::Gone(format!("cannot connect to {}: {e}", socket.display()))
        })?;
        let conn = Connection::from_socket(stream).map_err(gone)?;
        let (globals, queue) = registry_queue_init::<State>(&conn).map_err(gone)?;
        let qh = queue.handle();
        let mut client = Self { conn, queue, state: State::default(), globals, qh };
        client.learn_outputs()?;
        Ok(client)
    }

    /// Binds a global that must be there, naming it when it is not.
    pub fn bind<I>(&self, version: std::ops::RangeInclusive<u32>) -> Result<I, DisplayError>
    where
        I: Proxy + 'static,
        State: Dispatch<I, ()>,
    {
        self.globals.bind::<I, State, ()>(&self.qh, version, ()).map_err(|e| {
            DisplayError::Unsupported(format!(
                "the compositor has no usable {}: {e}",
                I::interface().name
            ))
        })
    }

    fn learn_outputs(&mut self) -> Result<(), DisplayError> {
        let manager: zxdg_output_manager_v1::ZxdgOutputManagerV1 = self.bind(2..=3)?;
        let outputs: Vec<(u32, u32)> = self.globals.contents().with_list(|list| {
            list.iter()
                .filter(|g| g.interface == wl_output::WlOutput::interface().name)
                .map(|g| (g.name, g.version))
                .collect()
        });
        for (i, (name, version)) in outputs.into_iter().enumerate() {
            let wl: wl_output::WlOutput =
                self.globals.registry().bind(name, version.min(3), &self.qh, i);
            manager.get_xdg_output(&wl, &self.qh, i);
            self.state.outputs.push(Output {
                wl,
                name: None,
                position: (0, 0),
                logical: (0, 0),
                mode: (0, 0),
            });
        }
        self.roundtrip()?;
        manager.destroy();
        Ok(())
    }

    /// One round trip: every request sent before it has been processed, and
    /// every event it caused has been dispatched.
    pub fn roundtrip(&mut self) -> Result<(), DisplayError> {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        self.conn.display().sync(&self.qh, std::sync::Arc::clone(&done));
        self.dispatch_until(Instant::now() + ANSWER_WITHIN, |_| {
            done.load(std::sync::atomic::Ordering::SeqCst)
        })
    }

    /// Sends what is queued.
    pub fn flush(&self) -> Result<(), DisplayError> {
        self.conn.flush().map_err(gone)
    }

    /// Dispatches events until `done` holds, failing at `deadline`.
    pub fn dispatch_until(
        &mut self,
        deadline: Instant,
        done: impl FnMut(&State) -> bool,
    ) -> Result<(), DisplayError> {
        if self.dispatch_within(deadline, done)? {
            Ok(())
        } else {
            Err(DisplayError::Gone("the compositor did not answer in time".to_owned()))
        }
    }

    /// Dispatches events until `done` holds (`true`) or `deadline` passed
    /// (`false`).
    pub fn dispatch_within(
        &mut self,
        deadline: Instant,
        mut done: impl FnMut(&State) -> bool,
    ) -> Result<bool, DisplayError> {
        loop {
            self.queue.dispatch_pending(&mut self.state).map_err(dispatch_error)?;
            if done(&self.state) {
                return Ok(true);
            }
            self.flush()?;
            let now = Instant::now();
            if now >= deadline {
                return Ok(false);
            }
            let Some(guard) = self.conn.prepare_read() else { continue };
            let mut pfd = libc::pollfd {
                fd: guard.connection_fd().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = i32::try_from((deadline - now).as_millis().max(1)).unwrap_or(i32::MAX);
            // SAFETY: one pollfd on our stack, valid for the call.
            let rc = unsafe { libc::poll(&raw mut pfd, 1, ms) };
            if rc > 0 {
                match guard.read() {
                    Ok(_) => {}
                    Err(wayland_client::backend::WaylandError::Io(e))
                        if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(gone(e)),
                }
            }
        }
    }
}

fn dispatch_error(e: DispatchError) -> DisplayError {
    match e {
        DispatchError::Backend(e) => gone(e),
        DispatchError::BadMessage { .. } => DisplayError::Failed(format!("Wayland: {e}")),
    }
}

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for State {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        // Outputs are only added by the compositor's own configuration at
        // start; a new connection is made when the compositor restarts.
    }
}

impl Dispatch<wl_output::WlOutput, usize> for State {
    fn event(
        state: &mut Self,
        _: &wl_output::WlOutput,
        event: wl_output::Event,
        index: &usize,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let wl_output::Event::Mode { flags, width, height, .. } = event
            && flags.into_result().is_ok_and(|f| f.contains(wl_output::Mode::Current))
            && let Some(o) = state.outputs.get_mut(*index)
        {
            o.mode = (width, height);
        }
    }
}

impl Dispatch<zxdg_output_v1::ZxdgOutputV1, usize> for State {
    fn event(
        state: &mut Self,
        _: &zxdg_output_v1::ZxdgOutputV1,
        event: zxdg_output_v1::Event,
        index: &usize,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        let Some(o) = state.outputs.get_mut(*index) else { return };
        match event {
            zxdg_output_v1::Event::LogicalPosition { x, y } => o.position = (x, y),
            zxdg_output_v1::Event::LogicalSize { width, height } => o.logical = (width, height),
            zxdg_output_v1::Event::Name { name } => o.name = Some(name),
            _ => {}
        }
    }
}

impl Dispatch<zwlr_screencopy_frame_v1::ZwlrScreencopyFrameV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &zwlr_screencopy_frame_v1::ZwlrScreencopyFrameV1,
        event: zwlr_screencopy_frame_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zwlr_screencopy_frame_v1::Event;
        let f = &mut state.frame;
        match event {
            Event::Buffer { format, width, height, stride } => {
                let format = match format {
                    wayland_client::WEnum::Value(v) => v as u32,
                    wayland_client::WEnum::Unknown(v) => v,
                };
                f.buffer = Some((format, width, height, stride));
            }
            Event::BufferDone => f.buffer_done = true,
            Event::Flags { flags } => {
                f.flags = match flags {
                    wayland_client::WEnum::Value(v) => v.bits(),
                    wayland_client::WEnum::Unknown(v) => v,
                };
            }
            Event::Ready { .. } => f.ready = true,
            Event::Failed => f.failed = true,
            _ => {}
        }
    }
}

impl
    Dispatch<
        wayland_client::protocol::wl_callback::WlCallback,
        std::sync::Arc<std::sync::atomic::AtomicBool>,
    > for State
{
    fn event(
        _: &mut Self,
        _: &wayland_client::protocol::wl_callback::WlCallback,
        _: wayland_client::protocol::wl_callback::Event,
        done: &std::sync::Arc<std::sync::atomic::AtomicBool>,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        done.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

wayland_client::delegate_noop!(State: ignore wl_shm::WlShm);
wayland_client::delegate_noop!(State: ignore wl_buffer::WlBuffer);
wayland_client::delegate_noop!(State: ignore wl_seat::WlSeat);
wayland_client::delegate_noop!(State: wl_shm_pool::WlShmPool);
wayland_client::delegate_noop!(State: zxdg_output_manager_v1::ZxdgOutputManagerV1);
wayland_client::delegate_noop!(State: zwlr_screencopy_manager_v1::ZwlrScreencopyManagerV1);
wayland_client::delegate_noop!(State: zwlr_virtual_pointer_manager_v1::ZwlrVirtualPointerManagerV1);
wayland_client::delegate_noop!(State: zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1);
wayland_client::delegate_noop!(State: zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1);
wayland_client::delegate_noop!(State: zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1);
