//! Sway: its configuration, its IPC, and the Wayland desktop's components.
//!
//! One headless sway serves every screen: screen `i` is its output
//! `HEADLESS-{i+1}` (the headless backend makes `WLR_HEADLESS_OUTPUTS` of
//! them at start), placed side by side from left to right, each at its size
//! and at [`super::REFRESH_HZ`]. Per screen, a wayvnc serves the output on
//! a loopback port and a Chromium (a native Wayland client) is assigned to
//! it. Sway refuses to run as root, so the guest starts it as an
//! unprivileged user when it is root itself.

use std::io::{Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use crate::config::{Config, Size};
use crate::display::DisplayError;
use crate::supervisor::{ComponentSpec, Probe};

pub use crate::config::wayland_output as output_name;

/// Where the Wayland desktop keeps its sockets and configuration.
#[derive(Debug, Clone)]
pub struct Paths {
    /// `XDG_RUNTIME_DIR` of the desktop: sway's sockets and configuration.
    pub dir: PathBuf,
    /// The user sway runs as (`None`: as the guest).
    pub user: Option<(u32, u32)>,
}

impl Paths {
    /// The paths for `config`.
    pub fn new(config: &Config) -> Self {
        // The desktop's user when there is one (every component then runs
        // as it, see `supervisor::as_user`), else `HOLM_WAYLAND_UID` for
        // sway alone.
        let user = match &config.desktop_user {
            Some(u) => Some((u.uid, u.gid)),
            None => rustix::process::geteuid()
                .is_root()
                .then_some((config.wayland_uid, config.wayland_uid)),
        };
        Self { dir: config.wayland_dir.clone(), user }
    }

    /// Sway's IPC socket.
    pub fn ipc(&self) -> PathBuf {
        self.dir.join("sway-ipc.sock")
    }

    /// The compositor's Wayland socket.
    pub fn socket(&self) -> PathBuf {
        self.dir.join(SOCKET_NAME)
    }

    /// Sway's configuration file.
    pub fn config_file(&self) -> PathBuf {
        self.dir.join("sway.conf")
    }
}

/// The Wayland socket's name. Sway takes the first free of `wayland-1`,
/// `wayland-2`, …; the directory is the desktop's own, so it is the first.
pub const SOCKET_NAME: &str = "wayland-1";

/// Sway's configuration for `screens`.
pub fn config_text(screens: &[Size], refresh_hz: u32, xwayland: bool) -> String {
    let mut out = String::from(
        "# Written by holm-guest at each start.\n\
         default_border none\n\
         default_floating_border none\n\
         focus_follows_mouse no\n\
         mouse_warping none\n\
         focus_on_window_activation focus\n",
    );
    out.push_str(if xwayland { "xwayland enable\n" } else { "xwayland disable\n" });
    let mut x = 0u32;
    for (i, size) in screens.iter().enumerate() {
        let index = u8::try_from(i).unwrap_or(u8::MAX);
        let name = output_name(index);
        out.push_str(&format!(
            "output {name} mode --custom {}x{}@{refresh_hz}Hz position {x} 0\n",
            size.width, size.height
        ));
        out.push_str(&format!("workspace {} output {name}\n", i + 1));
        out.push_str(&format!(
            "assign [app_id=\"^{}$\"] workspace {}\n",
            browser_app_id(index),
            i + 1
        ));
        x += size.width;
    }
    out
}

/// The `app_id` of screen `index`'s Chromium, by which sway places it.
pub fn browser_app_id(index: u8) -> String {
    format!("holm-chromium-{index}")
}

/// Makes the desktop's directory (owned by the desktop's user, mode 0700),
/// removes what an earlier run left there, and writes sway's configuration.
pub fn prepare(paths: &Paths, config_text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&paths.dir)?;
    for entry in std::fs::read_dir(&paths.dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("wayland-") || name.starts_with("sway") || name.starts_with("wayvnc") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    std::fs::write(paths.config_file(), config_text)?;
    std::fs::set_permissions(paths.config_file(), std::fs::Permissions::from_mode(0o600))?;
    if let Some((uid, gid)) = paths.user {
        let own = |p: &Path| {
            rustix::fs::chown(
                p,
                Some(rustix::fs::Uid::from_raw(uid)),
                Some(rustix::fs::Gid::from_raw(gid)),
            )
        };
        own(&paths.dir).map_err(std::io::Error::from)?;
        own(&paths.config_file()).map_err(std::io::Error::from)?;
    }
    std::fs::set_permissions(&paths.dir, std::fs::Permissions::from_mode(0o700))
}

/// The variables every client of the desktop needs (and `swaymsg`).
pub fn client_env(paths: &Paths) -> Vec<(String, String)> {
    vec![
        ("XDG_RUNTIME_DIR".into(), paths.dir.to_string_lossy().into_owned()),
        ("WAYLAND_DISPLAY".into(), SOCKET_NAME.into()),
        ("XDG_SESSION_TYPE".into(), "wayland".into()),
        ("SWAYSOCK".into(), paths.ipc().to_string_lossy().into_owned()),
    ]
}

/// The components of a Wayland desktop: sway (for every screen), then per
/// screen wayvnc and Chromium once sway is ready. `ready` is sway's probe:
/// it answers once the guest's own input devices are made.
pub fn specs(
    config: &Config,
    paths: &Paths,
    ready: Arc<dyn Fn() -> bool + Send + Sync>,
    before_browser: Arc<dyn Fn() + Send + Sync>,
) -> Vec<ComponentSpec> {
    let screens = u8::try_from(config.screens.len()).unwrap_or(1);
    let mut specs = vec![sway(paths, screens, ready)];
    for i in 0..screens {
        if config.vnc {
            let mut vnc = wayvnc(paths, i, config.vnc_port(i), config.home.clone());
            vnc.on_demand = config.vnc_on_demand;
            specs.push(vnc);
        }
        if let Some(bin) = &config.chromium {
            let profile = if i == 0 {
                config.chromium_profile.clone()
            } else {
                config.state_dir.join(format!("chromium-{i}"))
            };
            let mut spec = crate::browser::process::chromium(
                i,
                bin.clone(),
                profile,
                config.devtools_port(i),
                config.home.clone(),
                config.chromium_sandbox,
                crate::a11y::bus::socket(config),
            );
            let env = client_env(paths);
            let build = spec.command;
            let app_id = browser_app_id(i);
            // Ready once DevTools answers and its window is on the screen:
            // a window mapped later would take the focus from whatever the
            // agent opened after `ready`.
            let (ipc, id) = (paths.ipc(), app_id.clone());
            let shown = Probe::Custom(Arc::new(move || {
                Ipc::connect(&ipc).and_then(|mut c| c.has_app_id(&id)).unwrap_or(false)
            }));
            spec.probe = Probe::Both(Box::new(spec.probe), Box::new(shown));
            let before = Arc::clone(&before_browser);
            spec.command = Box::new(move || {
                before();
                let mut cmd = build();
                cmd.env_remove("DISPLAY")
                    .envs(env.iter().map(|(k, v)| (k, v)))
                    .args(["--ozone-platform=wayland", &format!("--class={app_id}")]);
                cmd
            });
            specs.push(spec);
        }
    }
    specs
}

fn sway(paths: &Paths, screens: u8, ready: Arc<dyn Fn() -> bool + Send + Sync>) -> ComponentSpec {
    let p = paths.clone();
    ComponentSpec {
        name: "sway",
        screen: 0,
        command: Box::new(move || {
            let mut cmd = Command::new("sway");
            cmd.env_clear()
                .env("PATH", std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()))
                .env("HOME", &p.dir)
                .env("LANG", "C.UTF-8")
                .env("XDG_RUNTIME_DIR", &p.dir)
                .env("SWAYSOCK", p.ipc())
                .env("WLR_BACKENDS", "headless")
                .env("WLR_RENDERER", "pixman")
                .env("WLR_LIBINPUT_NO_DEVICES", "1")
                .env("WLR_HEADLESS_OUTPUTS", screens.to_string())
                .arg("-c")
                .arg(p.config_file());
            if let Some((uid, gid)) = p.user {
                use std::os::unix::process::CommandExt;
                cmd.uid(uid).gid(gid);
            }
            cmd
        }),
        probe: Probe::Custom(ready),
        needs_display: false,
        provides: (0..screens).collect(),
        on_demand: false,
    }
}

fn wayvnc(paths: &Paths, screen: u8, port: u16, home: PathBuf) -> ComponentSpec {
    let env = client_env(paths);
    ComponentSpec {
        name: "wayvnc",
        screen,
        command: Box::new(move || {
            let mut cmd = Command::new("wayvnc");
            cmd.env("HOME", &home).envs(env.iter().map(|(k, v)| (k, v))).args([
                "-o",
                &output_name(screen),
                "127.0.0.1",
                &port.to_string(),
            ]);
            cmd
        }),
        probe: Probe::Tcp { port, banner: b"RFB ", hello: b"" },
        needs_display: true,
        provides: Vec::new(),
        on_demand: false,
    }
}

/// A connection to sway's IPC (the i3 protocol).
#[derive(Debug)]
pub struct Ipc(UnixStream);

const RUN_COMMAND: u32 = 0;
const GET_WORKSPACES: u32 = 1;
const GET_TREE: u32 = 4;

impl Ipc {
    /// Connects to the socket at `path`.
    pub fn connect(path: &Path) -> Result<Self, DisplayError> {
        let s = UnixStream::connect(path)
            .map_err(|e| DisplayError::Gone(format!("sway IPC {}: {e}", path.display())))?;
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        Ok(Self(s))
    }

    /// Sends one message and reads its answer.
    pub fn call(&mut self, kind: u32, payload: &str) -> Result<serde_json::Value, DisplayError> {
        let io = |e: std::io::Error| DisplayError::Gone(format!("sway IPC: {e}"));
        let mut msg = Vec::with_capacity(14 + payload.len());
        msg.extend_from_slice(b"i3-ipc");
        msg.extend_from_slice(&u32::try_from(payload.len()).unwrap_or(0).to_le_bytes());
        msg.extend_from_slice(&kind.to_le_bytes());
        msg.extend_from_slice(payload.as_bytes());
        self.0.write_all(&msg).map_err(io)?;
        let mut head = [0u8; 14];
        self.0.read_exact(&mut head).map_err(io)?;
        let len = u32::from_le_bytes([head[6], head[7], head[8], head[9]]) as usize;
        let mut body = vec![0u8; len];
        self.0.read_exact(&mut body).map_err(io)?;
        serde_json::from_slice(&body).map_err(|e| DisplayError::Failed(format!("sway IPC: {e}")))
    }

    /// Runs a sway command; fails with sway's error when it refused.
    pub fn command(&mut self, command: &str) -> Result<(), DisplayError> {
        let answer = self.call(RUN_COMMAND, command)?;
        match answer.as_array().and_then(|a| a.iter().find(|r| r["success"] != true)) {
            None => Ok(()),
            Some(r) => {
                Err(DisplayError::Failed(format!("sway refused {command:?}: {}", r["error"])))
            }
        }
    }

    /// Whether a window with this `app_id` is in the layout (tiled or
    /// floating, on any workspace).
    pub fn has_app_id(&mut self, app_id: &str) -> Result<bool, DisplayError> {
        fn walk(node: &serde_json::Value, app_id: &str) -> bool {
            node["app_id"] == app_id
                || ["nodes", "floating_nodes"]
                    .iter()
                    .any(|k| node[*k].as_array().is_some_and(|n| n.iter().any(|c| walk(c, app_id))))
        }
        Ok(walk(&self.call(GET_TREE, "")?, app_id))
    }

    /// The output whose workspace has the keyboard focus.
    pub fn focused_output(&mut self) -> Result<Option<String>, DisplayError> {
        let workspaces = self.call(GET_WORKSPACES, "")?;
        Ok(workspaces.as_array().and_then(|list| {
            list.iter()
                .find(|w| w["focused"] == true)
                .and_then(|w| w["output"].as_str().map(str::to_owned))
        }))
    }
}
