//! The recipes of an X11 desktop's components: how Xvfb, fluxbox and x11vnc
//! are started on each screen and how each is known to be ready (Chromium's
//! is [`crate::browser::process`]). The engine that runs them (start,
//! probe, deadline, restart) is [`crate::supervisor`]; the Wayland recipes
//! are in `wayland::sway`.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use crate::browser::process::chromium;
use crate::config::{Config, Size};
use crate::supervisor::{ComponentSpec, Probe};

/// The components of an X11 desktop for `config`.
pub fn x11_specs(config: &Config) -> Vec<ComponentSpec> {
    let mut specs = Vec::new();
    for (i, size) in config.screens.iter().enumerate() {
        let screen = u8::try_from(i).expect("at most 6 screens");
        let display = config.display(screen);
        let home = config.home.clone();
        specs.push(xvfb(screen, &display, *size));
        // Fluxbox reads its overlay from the home it runs with: the
        // desktop user's when there is one (see `prepare_desktop`).
        let desktop_home = config.desktop_user.as_ref().map_or(&home, |u| &u.home).clone();
        specs.push(fluxbox(screen, &display, desktop_home));
        if config.vnc {
            let mut vnc = x11vnc(screen, &display, config.vnc_port(screen), home.clone());
            vnc.on_demand = config.vnc_on_demand;
            specs.push(vnc);
        }
        if let Some(bin) = &config.chromium {
            let profile = if screen == 0 {
                config.chromium_profile.clone()
            } else {
                config.state_dir.join(format!("chromium-{screen}"))
            };
            let mut spec = chromium(
                screen,
                bin.clone(),
                profile,
                config.devtools_port(screen),
                home,
                config.chromium_sandbox,
                crate::a11y::bus::socket(config),
            );
            let build = spec.command;
            let d = display.clone();
            spec.command = Box::new(move || {
                let mut cmd = build();
                cmd.env("DISPLAY", &d);
                cmd
            });
            // Ready once DevTools answers and its window is on the
            // screen: a window mapped later would take the focus from
            // whatever the agent opened after `ready`.
            let d = display.clone();
            let shown = Probe::Custom(Arc::new(move || super::probe::browser_shown(&d)));
            spec.probe = Probe::Both(Box::new(spec.probe), Box::new(shown));
            specs.push(spec);
        }
    }
    specs
}

fn xvfb(screen: u8, display: &str, size: Size) -> ComponentSpec {
    let d = display.to_owned();
    ComponentSpec {
        name: "xvfb",
        screen,
        command: Box::new(move || {
            let mut cmd = Command::new("Xvfb");
            cmd.arg(&d)
                .args(["-screen", "0", &format!("{}x{}x24", size.width, size.height)])
                .args(["-nolisten", "tcp", "-noreset", "-ac", "-dpi", "96"]);
            cmd
        }),
        probe: Probe::XDisplay(display.to_owned()),
        needs_display: false,
        provides: vec![screen],
        on_demand: false,
    }
}

/// What fluxbox's style overlay says when the home has none: draw no
/// wallpaper. Fluxbox's default style runs `fbsetbg`, which fails on Xvfb and
/// opens an `xmessage` error window; fluxbox focuses that window whenever it
/// appears (seconds after start on a busy machine), and every key typed after
/// goes to it instead of the window that had the focus.
const FLUXBOX_OVERLAY: &str = "! Written by holm-guest: no wallpaper. fbsetbg fails on Xvfb, and its error\n! window would take the keyboard focus.\nbackground: none\n";

/// What fluxbox remembers of windows when the home has no `apps` file:
/// Chromium's windows are maximized inside the work area. Chromium asks
/// for that itself (`--start-maximized`), but it may ask before fluxbox
/// runs (both start once Xvfb answers); fluxbox then applies this rule to
/// the window it adopts. (A Chromium that found no window manager at its
/// start also keeps fluxbox's title bar: tidy all the same.)
const FLUXBOX_APPS: &str = "# Written by holm-guest: Chromium's windows fill the work area.\n[app] (class=Chromium)\n  [Maximized]\t{yes}\n[end]\n";

/// Writes fluxbox's `overlay` and `apps` in `~/.fluxbox` where there are
/// none; fluxbox copies its other files there itself and keeps ones that
/// exist. Written as root in the desktop user's directory: a link there (at
/// a file's name or at `.fluxbox`) is never followed ([`crate::nofollow`]).
pub(crate) fn fluxbox_overlay(home: &std::path::Path) {
    let dir = home.join(".fluxbox");
    if let Err(e) = std::fs::create_dir_all(&dir) {
        tracing::warn!(dir = %dir.display(), error = %e, "cannot make fluxbox's directory");
        return;
    }
    for (name, text) in [("overlay", FLUXBOX_OVERLAY), ("apps", FLUXBOX_APPS)] {
        match crate::nofollow::create_with(&dir, name, text.as_bytes(), 0o644) {
            Ok(()) => {}
            // Something is there already (a file, or a link left alone).
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => tracing::warn!(error = %e, "cannot write fluxbox's {name}"),
        }
    }
}

fn fluxbox(screen: u8, display: &str, home: PathBuf) -> ComponentSpec {
    let d = display.to_owned();
    let wm = display.to_owned();
    ComponentSpec {
        name: "fluxbox",
        screen,
        command: Box::new(move || {
            fluxbox_overlay(&home);
            let mut cmd = Command::new("fluxbox");
            cmd.env("DISPLAY", &d).env("HOME", &home);
            cmd
        }),
        probe: Probe::Custom(Arc::new(move || super::probe::wm_present(&wm))),
        needs_display: true,
        provides: Vec::new(),
        on_demand: false,
    }
}

fn x11vnc(screen: u8, display: &str, port: u16, home: PathBuf) -> ComponentSpec {
    let d = display.to_owned();
    ComponentSpec {
        name: "x11vnc",
        screen,
        command: Box::new(move || {
            let mut cmd = Command::new("x11vnc");
            // x11vnc waits up to 45 s after a client connects before it
            // makes its window for selections (and its cursor tracking),
            // in case a display manager is still running: the box has none,
            // and without this the clipboard is dead for a viewer's first
            // seconds.
            cmd.env("HOME", &home).env("X11VNC_AVOID_WINDOWS", "never");
            cmd.args(["-display", &d, "-rfbport", &port.to_string()])
                .args(["-localhost", "-forever", "-shared", "-nopw", "-quiet", "-noxrecord"])
                // Updates as soon as they are seen, the screen polled every
                // 5 ms, and no longer naps when it has been idle: a key's echo
                // reached a viewer in 6.8 ms (p50) against 91 ms with the
                // defaults (-defer 20 -wait 20, naps), for about 1.7% of a CPU
                // with one idle viewer (0.4% with the defaults); no cost while
                // nobody watches (x11vnc then sleeps). docs/benchmarks.md's
                // viewer rows have the measurement.
                .args(["-defer", "0", "-wait", "5", "-nonap", "-sb", "0"]);
            cmd
        }),
        // The version first, as a viewer's connection sends it: x11vnc
        // waits 100 ms for a client that says nothing
        // (crate::viewer::keeper).
        probe: Probe::Tcp { port, banner: b"RFB ", hello: crate::viewer::keeper::VERSION },
        needs_display: true,
        provides: Vec::new(),
        on_demand: false,
    }
}
