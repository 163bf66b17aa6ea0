//! The guest's configuration, read once from the environment at start.
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `HOLM_BOX_SECRET` | (required) | the bearer secret every route but `/health` needs |
//! | `HOLM_PROFILE` | `x11` | the display profile |
//! | `HOLM_SCREENS` | `1` | how many screens, 1 to 6 |
//! | `HOLM_SCREEN_SIZES` | `1280x800` | one size for all screens, or one per screen, comma-separated |
//! | `HOLM_GUEST_ADDR` | `0.0.0.0:8765` | where the API listens |
//! | `HOLM_BRIDGE_ADDR` | `0.0.0.0:9223` | where the Chromium bridge listens |
//! | `HOLM_DISPLAY_BASE` | `1` | screen `i` is X display `:BASE+i` |
//! | `HOLM_VNC_PORT_BASE` | `5900` | screen `i`'s x11vnc listens on loopback port `BASE+i` |
//! | `HOLM_DEVTOOLS_PORT_BASE` | `9300` | screen `i`'s Chromium DevTools listens on loopback port `BASE+i` |
//! | `HOLM_CHROMIUM` | `on` | `off` runs no browser |
//! | `HOLM_CHROMIUM_BIN` | found on `PATH` | the browser program |
//! | `HOLM_CHROMIUM_PROFILE` | `$HOLM_STATE_DIR/chromium-0` | screen 0's user data directory (a kept browser profile is mounted here) |
//! | `HOLM_VNC` | `on` | `off` runs no x11vnc |
//! | `HOLM_HOME` | `$HOME` or `/root` | the home directory of the desktop and of commands |
//! | `HOLM_STATE_DIR` | `$HOLM_HOME/.holm` | browser profiles and component logs |

use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;

use holm_proto::guest::{BRIDGE_PORT, DEFAULT_GUEST_PORT, Profile};

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

/// The guest's whole configuration.
#[derive(Clone)]
pub struct Config {
    /// The bearer secret. Never logged: `Debug` hides it.
    pub secret: String,
    /// The display profile.
    pub profile: Profile,
    /// One size per screen.
    pub screens: Vec<Size>,
    /// Where the API listens.
    pub addr: SocketAddr,
    /// Where the Chromium bridge listens.
    pub bridge_addr: SocketAddr,
    /// Screen `i` is display `:display_base + i`.
    pub display_base: u16,
    /// Screen `i`'s VNC port is `vnc_port_base + i`.
    pub vnc_port_base: u16,
    /// Screen `i`'s DevTools port is `devtools_port_base + i`.
    pub devtools_port_base: u16,
    /// The browser program, or `None` for no browser.
    pub chromium: Option<PathBuf>,
    /// Whether to run x11vnc.
    pub vnc: bool,
    /// The home directory.
    pub home: PathBuf,
    /// Where browser profiles and component logs go.
    pub state_dir: PathBuf,
    /// Screen 0's user data directory.
    pub chromium_profile: PathBuf,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("secret", &"<hidden>")
            .field("profile", &self.profile)
            .field("screens", &self.screens)
            .field("addr", &self.addr)
            .field("bridge_addr", &self.bridge_addr)
            .field("display_base", &self.display_base)
            .field("vnc_port_base", &self.vnc_port_base)
            .field("devtools_port_base", &self.devtools_port_base)
            .field("chromium", &self.chromium)
            .field("vnc", &self.vnc)
            .field("home", &self.home)
            .field("state_dir", &self.state_dir)
            .field("chromium_profile", &self.chromium_profile)
            .finish()
    }
}

impl Config {
    /// Reads the configuration from the process environment.
    pub fn from_env() -> Result<Self, String> {
        Self::from_vars(std::env::vars().collect())
    }

    /// Reads the configuration from a set of variables.
    pub fn from_vars(vars: HashMap<String, String>) -> Result<Self, String> {
        let get = |k: &str| vars.get(k).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let secret = vars.get("HOLM_BOX_SECRET").cloned().unwrap_or_default();
        if secret.len() < 16 {
            return Err("HOLM_BOX_SECRET must be set to a secret of at least 16 characters".into());
        }
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
        let vnc = switch("HOLM_VNC")?;
        let home = PathBuf::from(
            get("HOLM_HOME").or_else(|| get("HOME")).unwrap_or_else(|| "/root".into()),
        );
        let state_dir = get("HOLM_STATE_DIR").map_or_else(|| home.join(".holm"), PathBuf::from);
        let chromium_profile = get("HOLM_CHROMIUM_PROFILE")
            .map_or_else(|| state_dir.join("chromium-0"), PathBuf::from);
        Ok(Self {
            secret,
            profile,
            screens,
            addr,
            bridge_addr,
            display_base,
            vnc_port_base,
            devtools_port_base,
            chromium,
            vnc,
            home,
            state_dir,
            chromium_profile,
        })
    }

    /// The X display name of screen `index`, such as `:1`.
    pub fn display(&self, index: u8) -> String {
        format!(":{}", self.display_base + u16::from(index))
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
        assert_eq!(c.bridge_addr.port(), BRIDGE_PORT);
        assert_eq!(c.chromium_profile, c.state_dir.join("chromium-0"));
        let c = Config::from_vars(vars(&[("HOLM_CHROMIUM_PROFILE", "/holm/profile")])).unwrap();
        assert_eq!(c.chromium_profile, PathBuf::from("/holm/profile"));
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
            ("HOLM_VNC", "maybe"),
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
}
