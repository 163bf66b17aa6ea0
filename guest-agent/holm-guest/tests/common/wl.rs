//! A Wayland client of the test's own: a layer-shell surface at a fixed
//! place on one screen's output, above everything, painted with the
//! rectangles the test asks for, that reports the pointer's buttons, motion
//! and wheel and the keyboard's modifiers as the compositor delivered them.
//!
//! It is the Wayland counterpart of the X11 tests' override-redirect window:
//! no window manager policy places it, so the test knows its pixels.

use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::{
    wl_buffer, wl_compositor, wl_keyboard, wl_output, wl_pointer, wl_registry, wl_seat, wl_shm,
    wl_shm_pool, wl_surface,
};
use wayland_client::{Connection, Dispatch, QueueHandle, WEnum};
use wayland_protocols_wlr::layer_shell::v1::client::{zwlr_layer_shell_v1, zwlr_layer_surface_v1};

/// What the surface saw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Seen {
    /// A button went down: its evdev code, where (surface pixels), and the
    /// keyboard's depressed modifiers then.
    Press { code: u32, x: f64, y: f64, mods: u32 },
    /// The pointer entered or moved: where.
    Motion { x: f64, y: f64 },
    /// A wheel click: axis (0 vertical, 1 horizontal) and direction.
    Wheel { axis: u32, discrete: i32, x: f64, y: f64 },
}

#[derive(Default)]
struct State {
    configured: Option<u32>,
    closed: bool,
    pointer: (f64, f64),
    mods: u32,
    wheel: Vec<(u32, i32)>,
    seen: Vec<Seen>,
}

/// A painted layer surface; it goes away when dropped.
#[derive(Debug)]
pub struct Surface {
    seen: Mutex<mpsc::Receiver<Seen>>,
    mods: Arc<AtomicU32>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Surface {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Surface {
    /// Opens a surface of `w`x`h` at `(x, y)` of screen `screen` (the
    /// compositor's outputs in order), filled with `background` and the
    /// `(x, y, w, h, rgb)` rectangles; with `keyboard`, it takes the
    /// keyboard focus. Returns once it is on the screen.
    pub fn open(
        socket: &Path,
        screen: usize,
        (x, y, w, h): (i32, i32, u32, u32),
        background: u32,
        rects: &[(u32, u32, u32, u32, u32)],
        keyboard: bool,
    ) -> Self {
        let conn = Connection::from_socket(UnixStream::connect(socket).expect("connect to sway"))
            .expect("a Wayland connection");
        let (globals, mut queue) = registry_queue_init::<State>(&conn).expect("globals");
        let qh = queue.handle();
        let compositor: wl_compositor::WlCompositor = globals.bind(&qh, 4..=4, ()).unwrap();
        let shm: wl_shm::WlShm = globals.bind(&qh, 1..=1, ()).unwrap();
        let layers: zwlr_layer_shell_v1::ZwlrLayerShellV1 = globals.bind(&qh, 1..=4, ()).unwrap();
        let seat: wl_seat::WlSeat = globals.bind(&qh, 5..=7, ()).unwrap();
        let outputs: Vec<u32> = globals.contents().with_list(|l| {
            l.iter().filter(|g| g.interface == "wl_output").map(|g| g.name).collect()
        });
        let output: wl_output::WlOutput = globals.registry().bind(outputs[screen], 1, &qh, ());
        let _pointer = seat.get_pointer(&qh, ());
        let _keyboard = seat.get_keyboard(&qh, ());
        let surface = compositor.create_surface(&qh, ());
        let layer = layers.get_layer_surface(
            &surface,
            Some(&output),
            zwlr_layer_shell_v1::Layer::Overlay,
            "holm-test".into(),
            &qh,
            (),
        );
        layer.set_size(w, h);
        layer.set_anchor(zwlr_layer_surface_v1::Anchor::Top | zwlr_layer_surface_v1::Anchor::Left);
        layer.set_margin(y, 0, 0, x);
        layer.set_exclusive_zone(-1);
        layer.set_keyboard_interactivity(if keyboard {
            zwlr_layer_surface_v1::KeyboardInteractivity::Exclusive
        } else {
            zwlr_layer_surface_v1::KeyboardInteractivity::None
        });
        surface.commit();
        let mut state = State::default();
        let deadline = Instant::now() + Duration::from_secs(10);
        while state.configured.is_none() {
            assert!(Instant::now() < deadline, "the layer surface was never configured");
            queue.blocking_dispatch(&mut state).unwrap();
        }
        // The pixels: XRGB8888, little-endian, so each is 0x00RRGGBB.
        let mut pixels = vec![background; (w * h) as usize];
        for &(rx, ry, rw, rh, rgb) in rects {
            for yy in ry..ry + rh {
                for xx in rx..rx + rw {
                    pixels[(yy * w + xx) as usize] = rgb;
                }
            }
        }
        let bytes: Vec<u8> = pixels.iter().flat_map(|p| p.to_le_bytes()).collect();
        let fd = rustix::fs::memfd_create("holm-test", rustix::fs::MemfdFlags::CLOEXEC).unwrap();
        let mut file = std::fs::File::from(fd);
        std::io::Write::write_all(&mut file, &bytes).unwrap();
        let pool = shm.create_pool(file.as_fd(), bytes.len() as i32, &qh, ());
        let buffer = pool.create_buffer(
            0,
            w as i32,
            h as i32,
            (w * 4) as i32,
            wl_shm::Format::Xrgb8888,
            &qh,
            (),
        );
        surface.attach(Some(&buffer), 0, 0);
        surface.damage_buffer(0, 0, w as i32, h as i32);
        surface.commit();
        queue.roundtrip(&mut state).unwrap();

        let (tx, rx) = mpsc::channel();
        let mods = Arc::new(AtomicU32::new(state.mods));
        let mods_seen = Arc::clone(&mods);
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            // Everything the surface needs stays alive with this thread.
            let _keep = (file, pool, buffer, layer, surface, output, seat, compositor, shm, layers);
            while !stopping.load(Ordering::SeqCst) && !state.closed {
                if queue.dispatch_pending(&mut state).is_err() {
                    return;
                }
                for s in state.seen.drain(..) {
                    let _ = tx.send(s);
                }
                mods_seen.store(state.mods, Ordering::SeqCst);
                let _ = conn.flush();
                let Some(guard) = conn.prepare_read() else { continue };
                let mut pfd = libc::pollfd {
                    fd: guard.connection_fd().as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one pollfd on this stack.
                if unsafe { libc::poll(&raw mut pfd, 1, 50) } > 0 && guard.read().is_err() {
                    return;
                }
            }
        });
        Self { seen: Mutex::new(rx), mods, stop, thread: Some(thread) }
    }

    /// The keyboard's depressed modifiers, as the surface last heard them.
    pub fn mods(&self) -> u32 {
        self.mods.load(Ordering::SeqCst)
    }

    /// The next event, waiting up to `timeout`.
    pub fn next(&self, timeout: Duration) -> Option<Seen> {
        self.seen.lock().unwrap().recv_timeout(timeout).ok()
    }

    /// The next event that `pick` accepts (others are dropped), or panics
    /// naming `what` after `timeout`.
    pub fn wait_for<T>(
        &self,
        timeout: Duration,
        what: &str,
        mut pick: impl FnMut(Seen) -> Option<T>,
    ) -> T {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "timed out after {timeout:?} waiting for {what}");
            if let Some(v) = self.next(left).and_then(&mut pick) {
                return v;
            }
        }
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
    }
}

impl Dispatch<zwlr_layer_surface_v1::ZwlrLayerSurfaceV1, ()> for State {
    fn event(
        state: &mut Self,
        layer: &zwlr_layer_surface_v1::ZwlrLayerSurfaceV1,
        event: zwlr_layer_surface_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            zwlr_layer_surface_v1::Event::Configure { serial, .. } => {
                layer.ack_configure(serial);
                state.configured = Some(serial);
            }
            zwlr_layer_surface_v1::Event::Closed => state.closed = true,
            _ => {}
        }
    }
}

impl Dispatch<wl_pointer::WlPointer, ()> for State {
    fn event(
        state: &mut Self,
        _: &wl_pointer::WlPointer,
        event: wl_pointer::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            wl_pointer::Event::Enter { surface_x, surface_y, .. }
            | wl_pointer::Event::Motion { surface_x, surface_y, .. } => {
                state.pointer = (surface_x, surface_y);
                state.seen.push(Seen::Motion { x: surface_x, y: surface_y });
            }
            wl_pointer::Event::Button {
                button,
                state: WEnum::Value(wl_pointer::ButtonState::Pressed),
                ..
            } => {
                let (x, y) = state.pointer;
                state.seen.push(Seen::Press { code: button, x, y, mods: state.mods });
            }
            wl_pointer::Event::AxisDiscrete { axis, discrete } => {
                let axis = match axis {
                    WEnum::Value(a) => a as u32,
                    WEnum::Unknown(a) => a,
                };
                state.wheel.push((axis, discrete));
            }
            wl_pointer::Event::Frame => {
                let (x, y) = state.pointer;
                for (axis, discrete) in state.wheel.drain(..) {
                    state.seen.push(Seen::Wheel { axis, discrete, x, y });
                }
            }
            _ => {}
        }
    }
}

impl Dispatch<wl_keyboard::WlKeyboard, ()> for State {
    fn event(
        state: &mut Self,
        _: &wl_keyboard::WlKeyboard,
        event: wl_keyboard::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let wl_keyboard::Event::Modifiers { mods_depressed, .. } = event {
            state.mods = mods_depressed;
        }
    }
}

wayland_client::delegate_noop!(State: ignore wl_seat::WlSeat);
wayland_client::delegate_noop!(State: ignore wl_output::WlOutput);
wayland_client::delegate_noop!(State: ignore wl_shm::WlShm);
wayland_client::delegate_noop!(State: ignore wl_buffer::WlBuffer);
wayland_client::delegate_noop!(State: ignore wl_surface::WlSurface);
wayland_client::delegate_noop!(State: wl_shm_pool::WlShmPool);
wayland_client::delegate_noop!(State: wl_compositor::WlCompositor);
wayland_client::delegate_noop!(State: zwlr_layer_shell_v1::ZwlrLayerShellV1);

/// The `mods_depressed` bits of Shift and Control.
pub const SHIFT: u32 = 1 << 0;
/// Control's bit.
pub const CONTROL: u32 = 1 << 2;
