//! `holm-guest`: the agent inside every holm box.
//!
//! It is the box's entrypoint. It reads its [`config::Config`] once, starts
//! and supervises the desktop ([`supervisor`]), and serves the guest API
//! ([`api`]): screens, screenshots, input, commands, processes and files, all
//! done in process against the display server, and page tools over DevTools
//! ([`browser`], [`cdp`]). It also serves the Chromium bridge ([`bridge`]) on
//! its own port, for DevTools clients outside the box.

pub mod api;
pub mod bridge;
pub mod browser;
pub mod cdp;
pub mod config;
pub mod exec;
pub mod files;
pub mod image;
pub mod input;
pub mod proc;
pub mod supervisor;
pub mod x11;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::serve::ListenerExt;
use tokio::net::TcpListener;

/// What this guest can do, as reported by `GET /v1/info`.
pub const CAPABILITIES: &[&str] = &[
    "commands.run",
    "commands.stream",
    "processes",
    "files",
    "screenshot.png",
    "screenshot.jpeg",
    "screenshot.webp",
    "screenshot.region",
    "screenshot.scale",
    "screenshot.cursor",
    "screenshot.etag",
    "input.xtest",
    "input.settle",
    "input.unicode",
    "input.coordinate_space",
    "bridge",
    "browser.tabs",
    "browser.page",
    "browser.evaluate",
    "browser.screenshot",
    "browser.state",
];

/// Runs the guest until SIGTERM or SIGINT: supervises the desktop and serves
/// the API on `config.addr`.
pub async fn run(config: config::Config) -> std::io::Result<()> {
    proc::init_reaper()?;
    let listener = TcpListener::bind(config.addr).await?;
    let bridge_listener = TcpListener::bind(config.bridge_addr).await?;
    tracing::info!(addr = %listener.local_addr()?, bridge = %bridge_listener.local_addr()?, profile = %config.profile, screens = config.screens.len(), "holm-guest listening");
    let screens = u8::try_from(config.screens.len()).unwrap_or(1);
    supervisor::clear_stale_locks(&config);
    let supervisor =
        supervisor::Supervisor::start(supervisor::Supervisor::x11_specs(&config), screens);
    let processes = exec::Processes::new(exec::BaseEnv::new(&config));
    let x11 = Arc::new(x11::X11::new((0..screens).map(|i| config.display(i)).collect()));
    let bridge = bridge::Bridge::new(config.devtools_port(0), config.chromium.is_some());
    let browser = browser::Browser::new(config.devtools_port(0), config.chromium.is_some());
    let state = api::AppState {
        config: Arc::new(config),
        supervisor: Arc::clone(&supervisor),
        started: Instant::now(),
        processes: Arc::clone(&processes),
        x11,
        bridge: Arc::clone(&bridge),
        browser: Arc::clone(&browser),
    };
    let app = api::app(state);
    // The bridge is ended at once on the signal: its WebSocket connections
    // would otherwise hold a graceful shutdown open.
    let bridge_stop = tokio_util::sync::CancellationToken::new();
    let bridge_server = axum::serve(bridge_listener.tap_io(holm_http::no_delay), bridge.router())
        .with_graceful_shutdown(bridge_stop.clone().cancelled_owned());
    let bridge_task = tokio::spawn(async move {
        if let Err(e) = bridge_server.await {
            tracing::error!(error = %e, "the bridge stopped");
        }
    });
    // Commands are ended as soon as the signal comes: a running command or a
    // followed process would otherwise hold the graceful shutdown open.
    let stopping_bridge = Arc::clone(&bridge);
    let stopping = bridge_stop.clone();
    let stopping_supervisor = Arc::clone(&supervisor);
    let stop = async move {
        holm_http::shutdown_signal().await;
        stopping_bridge.close_all();
        stopping.cancel();
        // Chromium is closed through DevTools so it writes a kept profile's
        // cookies out; the supervisor must not start it again meanwhile.
        let close_browser = async {
            stopping_supervisor.drain();
            if browser.close_gracefully().await {
                stopping_supervisor.wait_ended("chromium", 0, Duration::from_secs(5)).await;
            }
        };
        tokio::join!(processes.shutdown(Duration::from_secs(2)), close_browser);
    };
    let served =
        axum::serve(listener.tap_io(holm_http::no_delay), app).with_graceful_shutdown(stop).await;
    bridge.close_all();
    bridge_stop.cancel();
    let _ = bridge_task.await;
    served?;
    tracing::info!("shutting down the desktop");
    supervisor.shutdown(Duration::from_secs(3)).await;
    Ok(())
}
