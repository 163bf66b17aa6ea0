//! The guest's configuration, read once from the environment at start.
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `HOLM_BOX_SECRET_SHA256` | (this or the next) | the SHA-256 (hex) of the bearer secret every route but `/health` needs: what holm gives a box, so the secret itself is in no container's configuration, and so in no image a fork commits |
//! | `HOLM_BOX_SECRET` | (or the one above) | the bearer secret itself (at least 16 characters), for a guest started by hand |
//! | `HOLM_DESKTOP_USER` | unset: the guest's own user | the user the desktop (display, window manager, VNC, Chromium) runs as, such as `holm` in the box image; the guest drops to it for each component it starts |
//! | `HOLM_PROFILE` | `x11` | the display profile |
//! | `HOLM_SCREENS` | `1` | how many screens, 1 to 6 |
//! | `HOLM_SCREEN_SIZES` | `1280x800` | one size for all screens, or one per screen, comma-separated |
//! | `HOLM_GUEST_ADDR` | `0.0.0.0:8765` | where the API listens |
//! | `HOLM_BRIDGE_ADDR` | `0.0.0.0:9223` | where the Chromium bridge listens |
//! | `HOLM_VIEWER_ADDR` | `0.0.0.0:6080` | where the viewers (pages and RFB over WebSocket) listen |
//! | `HOLM_SANDBOXD_ADDR` | unset: not served | where agent-sandbox's in-box REST contract (sandboxd's `/v1/files`, `/v1/health`, `/v1/metadata`) listens, such as `0.0.0.0:8080` in an agent-sandbox template; behind the box secret |
//! | `HOLM_SANDBOXD_ROOT` | `/` | the directory sandboxd's paths are relative to |
//! | `HOLM_VIEWER_GRACE_SECS` | `10` | a person whose takeover connections all closed keeps control this long |
//! | `HOLM_VIEWER_HOLD_SECS` | `60` | X11: the guest's held client stays on a screen's x11vnc this long after its last viewer left (1 to 3600; [`crate::viewer::keeper`]) |
//! | `HOLM_DISPLAY_BASE` | `1` | screen `i` is X display `:BASE+i` |
//! | `HOLM_VNC_PORT_BASE` | `5900` | screen `i`'s x11vnc listens on loopback port `BASE+i` |
//! | `HOLM_DEVTOOLS_PORT_BASE` | `9300` | screen `i`'s Chromium DevTools listens on loopback port `BASE+i` |
//! | `HOLM_CHROMIUM` | `on` | `off` runs no browser |
//! | `HOLM_CHROMIUM_BIN` | found on `PATH` | the browser program |
//! | `HOLM_CHROMIUM_PROFILE` | `$HOLM_STATE_DIR/chromium-0` | screen 0's user data directory (a kept browser profile is mounted here) |
//! | `HOLM_VNC` | `demand` | `demand` starts each screen's VNC server when the first viewer of that screen asks for it, so a box is usable without it; `on` starts it with the desktop, and the box is ready once it answers; `off` runs none |
//! | `HOLM_HOME` | `$HOME` or `/root` | the home directory of the desktop and of commands |
//! | `HOLM_STATE_DIR` | `.holm` in the desktop user's home, else in `$HOLM_HOME` | browser profiles and component logs |
//! | `HOLM_WAYLAND_DIR` | `/tmp/holm-wayland-$HOLM_DISPLAY_BASE` | Wayland: sway's sockets and configuration (its `XDG_RUNTIME_DIR`) |
//! | `HOLM_WAYLAND_UID` | `65534` | Wayland: the user (and group) sway runs as when the guest is root and no `HOLM_DESKTOP_USER` is set; sway refuses root |

use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;

use holm_proto::guest::{BRIDGE_PORT, DEFAULT_GUEST_PORT, Profile};
use holm_proto::viewer::VIEWER_PORT;

/// The most screens a box may have.
pub const MAX_SCREENS: u8 = 6;

/// A screen size in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

impl std::str::FromStr for Size {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (w, h) =
            s.trim().split_once(['x', 'X']).ok_or_else(|| format!("{s:?} is not WIDTHxHEIGHT"))?;
        let parse =
            |v: &str| v.trim().parse::<u32>().map_err(|_| format!("{s:?} is not WIDTHxHEIGHT"));
        let size = Self { width: parse(w)?, height: parse(h)? };
        if !(64..=7680).contains(&size.width) || !(64..=4320).contains(&size.height) {
            return Err(format!("{s:?} is outside 64x64 to 7680x4320"));
        }
        Ok(size)
    }
}

/// A user the desktop runs as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesktopUser {
    /// Its name.
    pub name: String,
    /// Its user id.
    pub uid: u32,
    /// Its group id.
    pub gid: u32,
    /// Its home directory.
    pub home: PathBuf,
}

impl DesktopUser {
    /// Finds `name` in a `passwd` file's text.
    pub fn from_passwd(passwd: &str, name: &str) -> Option<Self> {
        passwd.lines().find_map(|line| {
            let f: Vec<&str> = line.split(':').collect();
            if f.len() < 7 || f[0] != name {
                return None;
            }
            Some(Self {
                name: name.to_owned(),
                uid: f[2].parse().ok()?,
                gid: f[3].parse().ok()?,
                home: PathBuf::from(f[5]),
            })
        })
    }
}

/// The guest's whole configuration.
#[derive(Clone)]
pub struct Config {
    /// The SHA-256 of the bearer secret. Never logged: `Debug` hides it.
    pub secret_sha256: [u8; 32],
    /// The user the desktop runs as; `None` runs it as the guest's own.
    pub desktop_user: Option<DesktopUser>,
    /// Whether Chromium's own sandbox can run here (found at start: it
    /// needs user namespaces, which the box's seccomp profile may refuse).
    pub chromium_sandbox: bool,
    /// The display profile.
    pub profile: Profile,
    /// One size per screen.
    pub screens: Vec<Size>,
    /// Where the API listens.
    pub addr: SocketAddr,
    /// Where the Chromium bridge listens.
    pub bridge_addr: SocketAddr,
    /// Where the viewers listen.
    pub viewer_addr: SocketAddr,
    /// Where agent-sandbox's in-box contract listens, if anywhere.
    pub sandboxd_addr: Option<SocketAddr>,
    /// The directory sandboxd's paths are relative to.
    pub sandboxd_root: PathBuf,
    /// How long a person keeps control after their last takeover connection closed.
    pub viewer_grace: std::time::Duration,
    /// How long the held VNC client stays after a screen's last viewer left.
    pub viewer_hold: std::time::Duration,
    /// Screen `i` is display `:display_base + i`.
    pub display_base: u16,
    /// Screen `i`'s VNC port is `vnc_port_base + i`.
    pub vnc_port_base: u16,
    /// Screen `i`'s DevTools port is `devtools_port_base + i`.
    pub devtools_port_base: u16,
    /// The browser program, or `None` for no browser.
    pub chromium: Option<PathBuf>,
    /// Whether to run a VNC server per screen.
    pub vnc: bool,
    /// Whether the VNC servers start only when a viewer asks (`HOLM_VNC=demand`).
    pub vnc_on_demand: bool,
    /// The home directory.
    pub home: PathBuf,
    /// Where browser profiles and component logs go.
    pub state_dir: PathBuf,
    /// Screen 0's user data directory.
    pub chromium_profile: PathBuf,
    /// Wayland: sway's runtime directory.
    pub wayland_dir: PathBuf,
    /// Wayland: the user and group sway runs as when the guest is root.
    pub wayland_uid: u32,
    /// Whether every screen is recorded for the box's whole life
    /// (`HOLM_RECORD`, off by default).
    pub record: bool,
    /// The recordings' size limits (`HOLM_RECORDING_MAX_BYTES`,
    /// `HOLM_RECORDINGS_MAX_BYTES`; at most, and by default, the
    /// protocol's).
    pub recording_limits: RecordingLimits,
}

/// `HOLM_RECORD` and the recordings' size limits.
fn recording(get: &impl Fn(&str) -> Option<String>) -> Result<(bool, RecordingLimits), String> {
    use holm_proto::recording::{MAX_RECORDING_BYTES, MAX_RECORDINGS_BYTES};
    let record = match get("HOLM_RECORD").as_deref() {
        None | Some("off" | "0" | "false") => false,
        Some("on" | "1" | "true") => true,
        Some(v) => return Err(format!("HOLM_RECORD={v:?}: expected on or off")),
    };
    let bytes = |key: &str, most: u64| -> Result<u64, String> {
        match get(key) {
            None => Ok(most),
            Some(v) => {
                v.parse::<u64>().ok().filter(|n| (1..=most).contains(n)).ok_or_else(|| {
                    format!("{key}={v:?}: expected a number of bytes from 1 to {most}")
                })
            }
        }
    };
    let limits = RecordingLimits {
        per_recording: bytes("HOLM_RECORDING_MAX_BYTES", MAX_RECORDING_BYTES)?,
        total: bytes("HOLM_RECORDINGS_MAX_BYTES", MAX_RECORDINGS_BYTES)?,
    };
    Ok((record, limits))
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("secret_sha256", &"<hidden>")
            .field("desktop_user", &self.desktop_user)
            .field("chromium_sandbox", &self.chromium_sandbox)
            .field("profile", &self.profile)
            .field("screens", &self.screens)
            .field("addr", &self.addr)
            .field("bridge_addr", &self.bridge_addr)
            .field("viewer_addr", &self.viewer_addr)
            .field("sandboxd_addr", &self.sandboxd_addr)
            .field("sandboxd_root", &self.sandboxd_root)
            .field("viewer_grace", &self.viewer_grace)
            .field("viewer_hold", &self.viewer_hold)
            .field("display_base", &self.display_base)
            .field("vnc_port_base", &self.vnc_port_base)
            .field("devtools_port_base", &self.devtools_port_base)
            .field("chromium", &self.chromium)
            .field("vnc", &self.vnc)
            .field("vnc_on_demand", &self.vnc_on_demand)
            .field("home", &self.home)
            .field("state_dir", &self.state_dir)
            .field("chromium_profile", &self.chromium_profile)
            .field("wayland_dir", &self.wayland_dir)
            .field("wayland_uid", &self.wayland_uid)
            .finish()
    }
}

/// The name of screen `index`'s output.
pub fn wayland_output(index: u8) -> String {
    format!("HEADLESS-{}", u16::from(index) + 1)
}

/// The size limits of recordings.
#[derive(Debug, Clone, Copy)]
pub struct RecordingLimits {
    /// The most bytes of one file.
    pub per_recording: u64,
    /// The most bytes of all files.
    pub total: u64,
}

impl Config {
    /// Reads the configuration from the process environment.
    pub fn from_env() -> Result<Self, String> {
        Self::from_vars(std::env::vars().collect())
    }

    /// Reads the configuration from a set of variables.
    pub fn from_vars(vars: HashMap<String, String>) -> Result<Self, String> {
        let get = |k: &str| vars.get(k).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let secret_sha256 = secret_digest(&vars)?;
        let profile = match get("HOLM_PROFILE").as_deref() {
            None | Some("x11") => Profile::X11,
            Some("wayland") => Profile::Wayland,
            Some(other) => return Err(format!("HOLM_PROFILE={other:?}: expected x11 or wayland")),
        };
        let count: u8 = match get("HOLM_SCREENS") {
            None => 1,
            Some(v) => {
                v.parse().map_err(|_| format!("HOLM_SCREENS={v:?}: expected 1 to {MAX_SCREENS}"))?
            }
        };
        if !(1..=MAX_SCREENS).contains(&count) {
            return Err(format!("HOLM_SCREENS={count}: expected 1 to {MAX_SCREENS}"));
        }
        let sizes: Vec<Size> = match get("HOLM_SCREEN_SIZES") {
            None => vec![Size { width: 1280, height: 800 }],
            Some(v) => v
                .split(',')
                .map(|s| s.parse::<Size>().map_err(|e| format!("HOLM_SCREEN_SIZES: {e}")))
                .collect::<Result<_, _>>()?,
        };
        let screens = match sizes.len() {
            1 => vec![sizes[0]; usize::from(count)],
            n if n == usize::from(count) => sizes,
            n => {
                return Err(format!(
                    "HOLM_SCREEN_SIZES has {n} sizes for {count} screens: give one, or one per screen"
                ));
            }
        };
        let addr = match get("HOLM_GUEST_ADDR") {
            None => SocketAddr::from(([0, 0, 0, 0], DEFAULT_GUEST_PORT)),
            Some(v) => {
                v.parse().map_err(|_| format!("HOLM_GUEST_ADDR={v:?}: expected HOST:PORT"))?
            }
        };
        let bridge_addr = match get("HOLM_BRIDGE_ADDR") {
            None => SocketAddr::from(([0, 0, 0, 0], BRIDGE_PORT)),
            Some(v) => {
                v.parse().map_err(|_| format!("HOLM_BRIDGE_ADDR={v:?}: expected HOST:PORT"))?
            }
        };
        let viewer_addr = match get("HOLM_VIEWER_ADDR") {
            None => SocketAddr::from(([0, 0, 0, 0], VIEWER_PORT)),
            Some(v) => {
                v.parse().map_err(|_| format!("HOLM_VIEWER_ADDR={v:?}: expected HOST:PORT"))?
            }
        };
        let sandboxd_addr = match get("HOLM_SANDBOXD_ADDR") {
            None => None,
            Some(v) => Some(
                v.parse().map_err(|_| format!("HOLM_SANDBOXD_ADDR={v:?}: expected HOST:PORT"))?,
            ),
        };
        let sandboxd_root = PathBuf::from(get("HOLM_SANDBOXD_ROOT").unwrap_or_else(|| "/".into()));
        if !sandboxd_root.is_absolute() {
            return Err(format!("HOLM_SANDBOXD_ROOT={sandboxd_root:?}: expected an absolute path"));
        }
        let viewer_grace = match get("HOLM_VIEWER_GRACE_SECS") {
            None => std::time::Duration::from_secs(10),
            Some(v) => v
                .parse::<u64>()
                .ok()
                .filter(|s| *s <= 3600)
                .map(std::time::Duration::from_secs)
                .ok_or_else(|| format!("HOLM_VIEWER_GRACE_SECS={v:?}: expected 0 to 3600"))?,
        };
        let viewer_hold = match get("HOLM_VIEWER_HOLD_SECS") {
            None => std::time::Duration::from_secs(60),
            Some(v) => v
                .parse::<u64>()
                .ok()
                .filter(|s| (1..=3600).contains(s))
                .map(std::time::Duration::from_secs)
                .ok_or_else(|| format!("HOLM_VIEWER_HOLD_SECS={v:?}: expected 1 to 3600"))?,
        };
        let port = |key: &str, default: u16| -> Result<u16, String> {
            match get(key) {
                None => Ok(default),
                Some(v) => v.parse().map_err(|_| format!("{key}={v:?}: expected a port number")),
            }
        };
        let display_base = port("HOLM_DISPLAY_BASE", 1)?;
        let vnc_port_base = port("HOLM_VNC_PORT_BASE", 5900)?;
        let devtools_port_base = port("HOLM_DEVTOOLS_PORT_BASE", 9300)?;
        let switch = |key: &str| -> Result<bool, String> {
            match get(key).as_deref() {
                None | Some("on" | "1" | "true") => Ok(true),
                Some("off" | "0" | "false") => Ok(false),
                Some(v) => Err(format!("{key}={v:?}: expected on or off")),
            }
        };
        let chromium = if switch("HOLM_CHROMIUM")? {
            match get("HOLM_CHROMIUM_BIN") {
                Some(p) => Some(PathBuf::from(p)),
                None => find_on_path(
                    vars.get("PATH").map_or("/usr/local/bin:/usr/bin:/bin", String::as_str),
                    &["chromium", "chromium-browser", "google-chrome"],
                ),
            }
        } else {
            None
        };
        let (vnc, vnc_on_demand) = match get("HOLM_VNC").as_deref() {
            None | Some("demand") => (true, true),
            Some("on" | "1" | "true") => (true, false),
            Some("off" | "0" | "false") => (false, false),
            Some(v) => return Err(format!("HOLM_VNC={v:?}: expected demand, on or off")),
        };
        let home = PathBuf::from(
            get("HOLM_HOME").or_else(|| get("HOME")).unwrap_or_else(|| "/root".into()),
        );
        let desktop_user = match get("HOLM_DESKTOP_USER") {
            None => None,
            Some(name) => {
                let passwd = std::fs::read_to_string(
                    get("HOLM_PASSWD_FILE").unwrap_or_else(|| "/etc/passwd".to_owned()),
                )
                .map_err(|e| format!("HOLM_DESKTOP_USER={name:?}: cannot read the users: {e}"))?;
                Some(DesktopUser::from_passwd(&passwd, &name).ok_or_else(|| {
                    format!("HOLM_DESKTOP_USER={name:?}: no such user in the box")
                })?)
            }
        };
        let desktop_home = desktop_user.as_ref().map_or(&home, |u| &u.home);
        let state_dir =
            get("HOLM_STATE_DIR").map_or_else(|| desktop_home.join(".holm"), PathBuf::from);
        let chromium_profile = get("HOLM_CHROMIUM_PROFILE")
            .map_or_else(|| state_dir.join("chromium-0"), PathBuf::from);
        let wayland_dir = get("HOLM_WAYLAND_DIR").map_or_else(
            || PathBuf::from(format!("/tmp/holm-wayland-{display_base}")),
            PathBuf::from,
        );
        let wayland_uid = match get("HOLM_WAYLAND_UID") {
            None => 65534,
            Some(v) => v.parse::<u32>().ok().filter(|u| *u != 0).ok_or_else(|| {
                format!("HOLM_WAYLAND_UID={v:?}: expected a user id other than 0")
            })?,
        };
        let (record, recording_limits) = recording(&get)?;
        Ok(Self {
            secret_sha256,
            desktop_user,
            chromium_sandbox: false,
            profile,
            screens,
            addr,
            bridge_addr,
            viewer_addr,
            sandboxd_addr,
            sandboxd_root,
            viewer_grace,
            viewer_hold,
            display_base,
            vnc_port_base,
            devtools_port_base,
            chromium,
            vnc,
            vnc_on_demand,
            home,
            state_dir,
            chromium_profile,
            wayland_dir,
            wayland_uid,
            record,
            recording_limits,
        })
    }

    /// Where recordings are kept.
    pub fn recordings_dir(&self) -> PathBuf {
        self.state_dir.join("recordings")
    }

    /// The X display name of screen `index`, such as `:1`.
    pub fn display(&self, index: u8) -> String {
        format!(":{}", self.display_base + u16::from(index))
    }

    /// How screen `index` is named inside the box: its X display (`:1`), or
    /// its Wayland output (`HEADLESS-1`).
    pub fn screen_name(&self, index: u8) -> String {
        match self.profile {
            Profile::X11 => self.display(index),
            Profile::Wayland => wayland_output(index),
        }
    }

    /// The loopback VNC port of screen `index`.
    pub fn vnc_port(&self, index: u8) -> u16 {
        self.vnc_port_base + u16::from(index)
    }

    /// The loopback DevTools port of screen `index`.
    pub fn devtools_port(&self, index: u8) -> u16 {
        self.devtools_port_base + u16::from(index)
    }
}

/// The digest of the box secret: `HOLM_BOX_SECRET_SHA256` as given, or the
/// SHA-256 of `HOLM_BOX_SECRET`.
fn secret_digest(vars: &HashMap<String, String>) -> Result<[u8; 32], String> {
    if let Some(hex) =
        vars.get("HOLM_BOX_SECRET_SHA256").map(|v| v.trim()).filter(|v| !v.is_empty())
    {
        return parse_digest(hex)
            .ok_or_else(|| "HOLM_BOX_SECRET_SHA256 must be 64 hexadecimal digits".to_owned());
    }
    let secret = vars.get("HOLM_BOX_SECRET").cloned().unwrap_or_default();
    if secret.len() < 16 {
        return Err(
            "HOLM_BOX_SECRET_SHA256, or HOLM_BOX_SECRET with at least 16 characters, must be set"
                .into(),
        );
    }
    use sha2::Digest;
    Ok(sha2::Sha256::digest(secret.as_bytes()).into())
}

/// A SHA-256 written as 64 hexadecimal digits, or none if `hex` is not one.
pub fn parse_digest(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// Finds the first of `names` on a `PATH`-style list of directories.
pub fn find_on_path(path: &str, names: &[&str]) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    names.iter().find_map(|name| {
        path.split(':').filter(|d| !d.is_empty()).map(|d| PathBuf::from(d).join(name)).find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        let mut v: HashMap<String, String> =
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        v.entry("HOLM_BOX_SECRET".into()).or_insert_with(|| "0123456789abcdef".into());
        v
    }

    #[test]
    fn defaults() {
        let c = Config::from_vars(vars(&[("HOLM_CHROMIUM", "off")])).unwrap();
        assert_eq!(c.screens, vec![Size { width: 1280, height: 800 }]);
        assert_eq!(c.addr.port(), DEFAULT_GUEST_PORT);
        assert_eq!(c.display(0), ":1");
        assert_eq!(c.vnc_port(1), 5901);
        assert!(c.chromium.is_none());
        assert!(c.vnc && c.vnc_on_demand, "VNC servers start when a viewer asks");
        assert_eq!(c.bridge_addr.port(), BRIDGE_PORT);
        assert_eq!(c.chromium_profile, c.state_dir.join("chromium-0"));
        let c = Config::from_vars(vars(&[("HOLM_CHROMIUM_PROFILE", "/holm/profile")])).unwrap();
        assert_eq!(c.chromium_profile, PathBuf::from("/holm/profile"));
    }

    #[test]
    fn vnc_starts_on_demand_with_the_desktop_or_never() {
        let vnc = |v: &str| {
            let c = Config::from_vars(vars(&[("HOLM_VNC", v)]))?;
            Ok::<_, String>((c.vnc, c.vnc_on_demand))
        };
        assert_eq!(vnc("demand"), Ok((true, true)));
        assert_eq!(vnc("on"), Ok((true, false)));
        assert_eq!(vnc("off"), Ok((false, false)));
        let e = vnc("lazy").unwrap_err();
        assert!(e.contains("HOLM_VNC") && e.contains("demand, on or off"), "{e}");
    }

    #[test]
    fn sizes_one_for_all_or_one_each() {
        let c = Config::from_vars(vars(&[("HOLM_SCREENS", "3"), ("HOLM_SCREEN_SIZES", "800x600")]))
            .unwrap();
        assert_eq!(c.screens.len(), 3);
        let c = Config::from_vars(vars(&[
            ("HOLM_SCREENS", "2"),
            ("HOLM_SCREEN_SIZES", "800x600,1920x1080"),
        ]))
        .unwrap();
        assert_eq!(c.screens[1], Size { width: 1920, height: 1080 });
        let e = Config::from_vars(vars(&[
            ("HOLM_SCREENS", "3"),
            ("HOLM_SCREEN_SIZES", "800x600,1920x1080"),
        ]))
        .unwrap_err();
        assert!(e.contains("2 sizes for 3 screens"), "{e}");
    }

    #[test]
    fn refusals_name_the_variable() {
        for (k, v) in [
            ("HOLM_SCREENS", "7"),
            ("HOLM_SCREENS", "0"),
            ("HOLM_SCREEN_SIZES", "big"),
            ("HOLM_PROFILE", "mir"),
            ("HOLM_GUEST_ADDR", "nowhere"),
            ("HOLM_BRIDGE_ADDR", "nowhere"),
            ("HOLM_VIEWER_ADDR", "nowhere"),
            ("HOLM_VIEWER_GRACE_SECS", "forever"),
            ("HOLM_VIEWER_HOLD_SECS", "0"),
            ("HOLM_VNC", "maybe"),
            ("HOLM_WAYLAND_UID", "0"),
        ] {
            let e = Config::from_vars(vars(&[(k, v)])).unwrap_err();
            assert!(e.contains(k), "{e}");
        }
    }

    #[test]
    fn secret_is_required_and_hidden() {
        let mut v = vars(&[]);
        v.insert("HOLM_BOX_SECRET".into(), "short".into());
        assert!(Config::from_vars(v).unwrap_err().contains("HOLM_BOX_SECRET"));
        let c = Config::from_vars(vars(&[])).unwrap();
        assert!(!format!("{c:?}").contains("0123456789abcdef"));
    }

    #[test]
    fn the_secret_may_come_as_its_digest_only() {
        let digest = holm_http::sha256_hex("0123456789abcdef");
        let mut v = vars(&[]);
        v.remove("HOLM_BOX_SECRET");
        v.insert("HOLM_BOX_SECRET_SHA256".into(), digest.clone());
        let from_digest = Config::from_vars(v).unwrap().secret_sha256;
        assert_eq!(from_digest, Config::from_vars(vars(&[])).unwrap().secret_sha256);
        let mut v = vars(&[]);
        v.insert("HOLM_BOX_SECRET_SHA256".into(), "zz".repeat(32));
        assert!(Config::from_vars(v).unwrap_err().contains("HOLM_BOX_SECRET_SHA256"));
    }

    #[test]
    fn the_desktop_user_is_read_from_the_users() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\nholm:x:1000:1000::/home/holm:/bin/bash\n";
        let u = DesktopUser::from_passwd(passwd, "holm").unwrap();
        assert_eq!((u.uid, u.gid, u.home.to_str().unwrap()), (1000, 1000, "/home/holm"));
        assert!(DesktopUser::from_passwd(passwd, "nobody").is_none());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("passwd");
        std::fs::write(&file, passwd).unwrap();
        let c = Config::from_vars(vars(&[
            ("HOLM_DESKTOP_USER", "holm"),
            ("HOLM_PASSWD_FILE", file.to_str().unwrap()),
        ]))
        .unwrap();
        assert_eq!(c.desktop_user.unwrap().uid, 1000);
        assert_eq!(c.state_dir, PathBuf::from("/home/holm/.holm"));
        let e = Config::from_vars(vars(&[
            ("HOLM_DESKTOP_USER", "ghost"),
            ("HOLM_PASSWD_FILE", file.to_str().unwrap()),
        ]))
        .unwrap_err();
        assert!(e.contains("HOLM_DESKTOP_USER"), "{e}");
    }
}
