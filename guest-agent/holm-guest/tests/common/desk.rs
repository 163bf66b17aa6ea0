//! The desktop as a test sees it, whatever the profile: a window of the
//! test's own at a fixed place that reports the input it gets (an
//! override-redirect X window, or a Wayland layer surface), and a terminal
//! that writes what it is typed into a file (xterm, or foot).

use std::path::Path;
use std::time::Duration;

use x11rb::connection::Connection as _;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    ConfigureWindowAux, ConnectionExt as _, CreateWindowAux, EventMask, InputFocus, KeyButMask,
    MapState, StackMode, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use super::{Guest, Profile, XClient, eventually, wl};

const WAIT: Duration = Duration::from_secs(20);

/// A button press (or wheel click, as X11 numbers them: 4 up, 5 down,
/// 6 left, 7 right) on the test's window, in its pixels, with the keyboard's
/// Control and Shift as the window saw them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Press {
    /// 1 left, 2 middle, 3 right, 4 to 7 the wheel.
    pub button: u8,
    /// Window pixels.
    pub x: i32,
    /// Window pixels.
    pub y: i32,
    /// Control was down.
    pub ctrl: bool,
    /// Shift was down.
    pub shift: bool,
}

/// A window of the test's own, above everything.
#[derive(Debug)]
pub enum Window {
    /// An override-redirect X window on the screen's own X server.
    X(Box<RustConnection>, x11rb::protocol::xproto::Window),
    /// A layer surface on the screen's output.
    Wl(wl::Surface),
}

impl Window {
    /// Opens a window at `(x, y)` of `w`x`h` on screen `screen`, filled with
    /// `background` and the `(x, y, w, h, rgb)` rectangles, that hears the
    /// pointer (and on Wayland takes the keyboard, to hear its modifiers).
    /// Returns once it is mapped.
    pub async fn open(
        g: &Guest,
        screen: u8,
        (x, y, w, h): (i32, i32, u32, u32),
        background: u32,
        rects: &[(u32, u32, u32, u32, u32)],
    ) -> Self {
        match g.profile {
            Profile::X11 => {
                let c = x11rb::connect(Some(&g.display(screen))).expect("connect to X").0;
                let id = x_window(&c, (x, y, w, h), background, rects);
                eventually(WAIT, "the window to be viewable", || async {
                    let attrs = c.get_window_attributes(id).unwrap().reply().unwrap();
                    (attrs.map_state == MapState::VIEWABLE).then_some(())
                })
                .await;
                Self::X(Box::new(c), id)
            }
            Profile::Wayland => {
                let socket = g.wayland_socket();
                let rects = rects.to_vec();
                let surface = tokio::task::spawn_blocking(move || {
                    wl::Surface::open(
                        &socket,
                        usize::from(screen),
                        (x, y, w, h),
                        background,
                        &rects,
                        true,
                    )
                })
                .await
                .unwrap();
                Self::Wl(surface)
            }
        }
    }

    /// The next button press or wheel click.
    pub async fn next_press(&self) -> Press {
        match self {
            Self::X(c, _) => {
                eventually(WAIT, "a ButtonPress", || async {
                    while let Some(e) = c.poll_for_event().unwrap() {
                        if let Event::ButtonPress(e) = e {
                            return Some(Press {
                                button: e.detail,
                                x: i32::from(e.event_x),
                                y: i32::from(e.event_y),
                                ctrl: e.state.contains(KeyButMask::CONTROL),
                                shift: e.state.contains(KeyButMask::SHIFT),
                            });
                        }
                    }
                    None
                })
                .await
            }
            Self::Wl(s) => s.wait_for(WAIT, "a button or a wheel click", |seen| {
                let mods = |m: u32| (m & wl::CONTROL != 0, m & wl::SHIFT != 0);
                match seen {
                    wl::Seen::Press { code, x, y, mods: m } => {
                        let (ctrl, shift) = mods(m);
                        let button = match code {
                            0x110 => 1,
                            0x112 => 2,
                            0x111 => 3,
                            0x113 => 8,
                            0x114 => 9,
                            _ => 0,
                        };
                        Some(Press {
                            button,
                            x: x.round() as i32,
                            y: y.round() as i32,
                            ctrl,
                            shift,
                        })
                    }
                    wl::Seen::Wheel { axis, discrete, x, y } => {
                        let button = match (axis, discrete.signum()) {
                            (0, -1) => 4,
                            (0, 1) => 5,
                            (1, -1) => 6,
                            _ => 7,
                        };
                        Some(Press {
                            button,
                            x: x.round() as i32,
                            y: y.round() as i32,
                            ctrl: false,
                            shift: false,
                        })
                    }
                    wl::Seen::Motion { .. } => None,
                }
            }),
        }
    }

    /// Waits until Control and Shift are up as the window hears them, and
    /// panics if they stay down. X11: the server, asked once, has the
    /// release once the guest answered; Wayland: the compositor sends it as
    /// a modifiers event after the press.
    pub async fn modifiers_released(&self) {
        match self {
            Self::X(c, id) => {
                let mask = c.query_pointer(*id).unwrap().reply().unwrap().mask;
                assert!(
                    !mask.intersects(KeyButMask::CONTROL | KeyButMask::SHIFT),
                    "a modifier is still held after the click"
                );
            }
            Self::Wl(s) => {
                eventually(WAIT, "the modifiers released after the click", || async {
                    (s.mods() & (wl::CONTROL | wl::SHIFT) == 0).then_some(())
                })
                .await;
            }
        }
    }

    /// Where the pointer is over the window, as the window last heard it
    /// (X11: asks the server).
    pub async fn pointer_seen(&self) -> (i32, i32) {
        match self {
            Self::X(c, id) => {
                let p = c.query_pointer(*id).unwrap().reply().unwrap();
                (i32::from(p.win_x), i32::from(p.win_y))
            }
            Self::Wl(s) => s.wait_for(WAIT, "the pointer over the window", |seen| match seen {
                wl::Seen::Motion { x, y } => Some((x.round() as i32, y.round() as i32)),
                _ => None,
            }),
        }
    }

    /// Takes the window away.
    pub fn close(self) {
        if let Self::X(c, id) = &self {
            c.destroy_window(*id).unwrap();
            c.sync().unwrap();
        }
    }
}

fn x_window(
    c: &RustConnection,
    (x, y, w, h): (i32, i32, u32, u32),
    background: u32,
    children: &[(u32, u32, u32, u32, u32)],
) -> x11rb::protocol::xproto::Window {
    let screen = &c.setup().roots[0];
    let id = c.generate_id().unwrap();
    let events = EventMask::BUTTON_PRESS | EventMask::BUTTON_RELEASE | EventMask::POINTER_MOTION;
    c.create_window(
        0,
        id,
        screen.root,
        x as i16,
        y as i16,
        w as u16,
        h as u16,
        0,
        WindowClass::INPUT_OUTPUT,
        0,
        &CreateWindowAux::new()
            .override_redirect(1)
            .background_pixel(background)
            .event_mask(events),
    )
    .unwrap();
    for &(cx, cy, cw, ch, rgb) in children {
        let child = c.generate_id().unwrap();
        c.create_window(
            0,
            child,
            id,
            cx as i16,
            cy as i16,
            cw as u16,
            ch as u16,
            0,
            WindowClass::INPUT_OUTPUT,
            0,
            &CreateWindowAux::new().background_pixel(rgb),
        )
        .unwrap();
        c.map_window(child).unwrap();
    }
    c.map_window(id).unwrap();
    c.configure_window(id, &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE)).unwrap();
    c.sync().unwrap();
    id
}

/// A terminal on screen 0 running `cat` into `out`, with the keyboard focus.
#[derive(Debug)]
pub struct Terminal {
    _child: XClient,
    /// Its title (X11) or app id (Wayland).
    name: String,
    /// Its window, on X11.
    window: Option<x11rb::protocol::xproto::Window>,
}

impl Terminal {
    /// Starts it (xterm on X11, foot on Wayland), waits until it runs its
    /// shell, and gives it the keyboard focus directly, so no window
    /// manager policy is involved.
    pub async fn open(g: &Guest, out: &Path) -> Self {
        let script = format!("stty -echo; exec cat > '{}'", out.display());
        let name = format!("holm-typing-{}", std::process::id());
        let mut cmd = match g.profile {
            Profile::X11 => {
                super::require_programs(&["xterm"]);
                let mut cmd = std::process::Command::new("xterm");
                cmd.args([
                    "-u8",
                    "-title",
                    &name,
                    "-geometry",
                    "100x20+0+0",
                    "-e",
                    "sh",
                    "-c",
                    &script,
                ])
                .env("DISPLAY", g.display(0));
                cmd
            }
            Profile::Wayland => {
                super::require_programs(&["foot"]);
                let mut cmd = std::process::Command::new("foot");
                cmd.args(["--app-id", &name, "--", "sh", "-c", &script])
                    .env("XDG_RUNTIME_DIR", &g.wayland_dir)
                    .env("WAYLAND_DISPLAY", "wayland-1");
                cmd
            }
        };
        let child = cmd
            .env("LANG", "C.UTF-8")
            .env("LC_ALL", "C.UTF-8")
            .env("HOME", &g.home)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start the terminal");
        let mut terminal = Self { _child: XClient(child), name: name.clone(), window: None };
        eventually(WAIT, "the terminal's shell to open the file", || async {
            out.exists().then_some(())
        })
        .await;
        match g.profile {
            Profile::X11 => {
                let c = x11rb::connect(Some(&g.display(0))).unwrap().0;
                let root = c.setup().roots[0].root;
                let w =
                    eventually(WAIT, "the xterm window", || async { find_window(&c, root, &name) })
                        .await;
                eventually(WAIT, "xterm to have the focus", || async {
                    c.set_input_focus(InputFocus::POINTER_ROOT, w, x11rb::CURRENT_TIME).unwrap();
                    c.sync().unwrap();
                    let focus = c.get_input_focus().unwrap().reply().unwrap().focus;
                    (focus == w).then_some(())
                })
                .await;
                terminal.window = Some(w);
            }
            Profile::Wayland => {
                eventually(WAIT, "foot to have the focus", || async {
                    let mut ipc = holm_guest::wayland::sway::Ipc::connect(
                        &g.wayland_dir.join("sway-ipc.sock"),
                    )
                    .ok()?;
                    ipc.command(&format!("[app_id=\"^{name}$\"] focus")).ok()
                })
                .await;
            }
        }
        terminal
    }

    /// Ends it and waits until its window is gone, so the layout it leaves
    /// (on Wayland, the windows it shared the screen with, grown back) is
    /// the one the test acts on next.
    pub async fn close(self, g: &Guest) {
        let Self { _child, name, window } = self;
        drop(_child);
        match window {
            Some(_) => {
                let c = x11rb::connect(Some(&g.display(0))).unwrap().0;
                let root = c.setup().roots[0].root;
                eventually(WAIT, "the xterm window to go", || async {
                    find_window(&c, root, &name).is_none().then_some(())
                })
                .await;
            }
            None => {
                let ipc = g.wayland_dir.join("sway-ipc.sock");
                eventually(WAIT, "foot's window to go", || async {
                    let mut ipc = holm_guest::wayland::sway::Ipc::connect(&ipc).ok()?;
                    (!ipc.has_app_id(&name).ok()?).then_some(())
                })
                .await;
            }
        }
    }

    /// Whether it has the keyboard focus now.
    pub fn has_focus(&self, g: &Guest) -> bool {
        match self.window {
            Some(w) => {
                let c = x11rb::connect(Some(&g.display(0))).unwrap().0;
                c.get_input_focus().unwrap().reply().unwrap().focus == w
            }
            None => {
                let mut ipc =
                    holm_guest::wayland::sway::Ipc::connect(&g.wayland_dir.join("sway-ipc.sock"))
                        .expect("sway's IPC socket");
                // GET_TREE: the focused node is the terminal's.
                let tree = ipc.call(4, "").expect("sway's tree");
                focused_app_id(&tree).as_deref() == Some(self.name.as_str())
            }
        }
    }
}

/// Finds a top-level window (or a descendant) whose WM_NAME is `title`.
fn find_window(
    c: &RustConnection,
    root: x11rb::protocol::xproto::Window,
    title: &str,
) -> Option<x11rb::protocol::xproto::Window> {
    use x11rb::protocol::xproto::AtomEnum;
    let tree = c.query_tree(root).ok()?.reply().ok()?;
    for &w in &tree.children {
        let name = c
            .get_property(false, w, AtomEnum::WM_NAME, AtomEnum::STRING, 0, 256)
            .ok()?
            .reply()
            .ok()?;
        if name.value == title.as_bytes() {
            return Some(w);
        }
        if let Some(found) = find_window(c, w, title) {
            return Some(found);
        }
    }
    None
}

/// The app id of the focused node of a sway tree.
fn focused_app_id(node: &serde_json::Value) -> Option<String> {
    if node["focused"] == true {
        return node["app_id"].as_str().map(str::to_owned);
    }
    ["nodes", "floating_nodes"]
        .iter()
        .filter_map(|k| node[k].as_array())
        .flatten()
        .find_map(focused_app_id)
}
