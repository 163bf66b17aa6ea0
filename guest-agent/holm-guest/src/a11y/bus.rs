//! The box's D-Bus session bus, which AT-SPI needs.
//!
//! The guest supervises one `dbus-daemon` (component `dbus`) with a
//! configuration of its own, listening on `session` in a directory of the
//! desktop user's (`/tmp/holm-bus-{HOLM_DISPLAY_BASE}`, mode 0700); any user
//! may connect, so the guest (root) reaches the bus of the desktop user's
//! apps. at-spi2-core's `at-spi-bus-launcher` is started by the bus's
//! activation when the first app asks `org.a11y.Bus` for the accessibility
//! bus, which it starts in turn (its socket in the same directory, the
//! daemon's `XDG_RUNTIME_DIR`); the registry (`at-spi2-registryd`) is
//! started by that bus's activation. Chromium and every command get
//! `DBUS_SESSION_BUS_ADDRESS`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::supervisor::{ComponentSpec, Probe};

/// The directory of the bus's socket and configuration.
pub fn dir(config: &Config) -> PathBuf {
    PathBuf::from(format!("/tmp/holm-bus-{}", config.display_base))
}

/// The session bus's socket.
pub fn socket(config: &Config) -> PathBuf {
    dir(config).join("session")
}

/// The session bus's address, as `DBUS_SESSION_BUS_ADDRESS` gives it.
pub fn address(socket: &Path) -> String {
    format!("unix:path={}", socket.display())
}

/// The variables that put a program on the box's session bus.
pub fn env(config: &Config) -> Vec<(String, String)> {
    vec![("DBUS_SESSION_BUS_ADDRESS".to_owned(), address(&socket(config)))]
}

/// The bus's configuration: a session bus on `socket` that any user may
/// use, with the session's service directories (`org.a11y.Bus` among them).
fn bus_config(socket: &Path) -> String {
    format!(
        r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<!-- Written by holm-guest: the box's session bus, for AT-SPI. -->
<busconfig>
  <type>session</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <standard_session_servicedirs/>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#,
        socket.display()
    )
}

/// Makes the bus's directory (the desktop user's, 0700) and writes its
/// configuration; removes a socket an earlier run left.
fn prepare(dir: &Path, owner: Option<(u32, u32)>) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::lchown(dir, Some(uid), Some(gid))?;
    }
    let socket = dir.join("session");
    let _ = std::fs::remove_file(&socket);
    let conf = dir.join("session.conf");
    std::fs::write(&conf, bus_config(&socket))?;
    Ok(conf)
}

/// The `dbus` component: the session bus, started before the desktop.
pub fn spec(config: &Config) -> ComponentSpec {
    let dir = dir(config);
    let owner = config.desktop_user.as_ref().map(|u| (u.uid, u.gid));
    let display = (config.profile == holm_proto::guest::Profile::X11).then(|| config.display(0));
    let socket = socket(config);
    ComponentSpec {
        name: "dbus",
        screen: 0,
        command: Box::new(move || {
            let conf = prepare(&dir, owner).unwrap_or_else(|e| {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot prepare the session bus");
                dir.join("session.conf")
            });
            let mut cmd = Command::new("dbus-daemon");
            cmd.arg(format!("--config-file={}", conf.display()))
                .args(["--nofork", "--nopidfile", "--nosyslog"])
                // What the services it starts get: the accessibility bus
                // goes in the same directory, and on X11 the launcher
                // names it on screen 0's root window too.
                .env("XDG_RUNTIME_DIR", &dir);
            if let Some(d) = &display {
                cmd.env("DISPLAY", d);
            }
            cmd
        }),
        probe: Probe::Custom(Arc::new(move || {
            std::os::unix::net::UnixStream::connect(&socket).is_ok()
        })),
        needs_display: false,
        provides: Vec::new(),
        on_demand: false,
    }
}

/// Waits (at most 2 s) until the bus on `socket` answers, so that a browser
/// started with the desktop finds it; the bus starts in milliseconds, before
/// the display is up, so this rarely waits.
pub fn wait(socket: &Path) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while std::os::unix::net::UnixStream::connect(socket).is_err() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}
