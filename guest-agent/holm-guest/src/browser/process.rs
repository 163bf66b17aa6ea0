//! Chromium as a supervised component: how it is started on a screen, with
//! its profile, DevTools on loopback and the accessibility bus, for both
//! display profiles (each adds how it reaches its display).

use std::path::PathBuf;
use std::process::Command;

use crate::supervisor::{ComponentSpec, Probe};

/// Chromium on screen `screen`, with DevTools on loopback `port`; the
/// display backend adds how it reaches its display.
///
/// The window is only asked to start maximized: the window manager then
/// fits it to its work area (fluxbox's keeps its toolbar free; sway tiles).
/// A given size and position (`--window-size` of the whole screen at 0,0)
/// made fluxbox put the frame so that the tab strip sat 19 pixels above the
/// top of the screen.
pub fn chromium(
    screen: u8,
    bin: PathBuf,
    profile: PathBuf,
    port: u16,
    home: PathBuf,
    sandbox: bool,
    bus: PathBuf,
) -> ComponentSpec {
    ComponentSpec {
        name: "chromium",
        screen,
        command: Box::new(move || {
            // Chromium refuses a profile whose lock names a live process on
            // this host name; the lock left by an earlier run (a restart, or a
            // kept profile from a box that is gone, on a host also named
            // `holm`) may name one. Only this supervisor runs a browser on
            // this profile, so the lock is stale by construction.
            for name in ["SingletonLock", "SingletonSocket", "SingletonCookie"] {
                let _ = std::fs::remove_file(profile.join(name));
            }
            // With the session bus and accessibility on, Chromium gives
            // its tree (its window and the page's) to AT-SPI.
            crate::a11y::bus::wait(&bus);
            let mut cmd = Command::new(&bin);
            cmd.env("HOME", &home)
                .env("DBUS_SESSION_BUS_ADDRESS", crate::a11y::bus::address(&bus))
                .env("ACCESSIBILITY_ENABLED", "1")
                .arg("--force-renderer-accessibility")
                .arg(format!("--user-data-dir={}", profile.display()))
                .arg("--remote-debugging-address=127.0.0.1")
                .arg(format!("--remote-debugging-port={port}"))
                .args([
                    "--start-maximized",
                    // `--test-type` hides the bar that `--no-sandbox` would
                    // show, which would shift coordinates.
                    "--test-type",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-first-run",
                    "--no-default-browser-check",
                    "--disable-dev-shm-usage",
                    "--disable-gpu",
                    "--password-store=basic",
                    "--hide-crash-restore-bubble",
                    "--noerrdialogs",
                    // Memory, by measurement (docs/design/guest.md, "Chromium's
                    // memory flags"): the network service in the browser's
                    // process, and no spare renderer kept ready for the next
                    // site: 152.8 against 131.0 MiB of anonymous memory in an
                    // idle box.
                    "--enable-features=NetworkServiceInProcess2",
                    "--disable-features=Translate,MediaRouter,SpareRendererForSitePerProcess",
                    "about:blank",
                ]);
            // Chromium's own sandbox when the box allows it (see
            // `probe_sandbox`); else the box is the sandbox. Chromium reads
            // switches after its URL too.
            if !sandbox {
                cmd.arg("--no-sandbox");
            }
            cmd
        }),
        probe: Probe::Http { port, path: "/json/version" },
        needs_display: true,
        provides: Vec::new(),
        on_demand: false,
    }
}
