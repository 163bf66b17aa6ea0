//! `holm-guest`: the agent inside every holm box.
//!
//! It is the box's entrypoint. It reads its [`config::Config`] once, starts
//! and supervises the desktop ([`supervisor`]), and serves the guest API
//! ([`api`]): screens, screenshots, input, commands, processes and files, all
//! done in process against the display server.

pub mod api;
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
];

/// Runs the guest until SIGTERM or SIGINT: supervises the desktop and serves
/// the API on `config.addr`.
pub async fn run(config: config::Config) -> std::io::Result<()> {
    proc::init_reaper()?;
    let listener = TcpListener::bind(config.addr).await?;
    tracing::info!(addr = %listener.local_addr()?, profile = %config.profile, screens = config.screens.len(), "holm-guest listening");
    let screens = u8::try_from(config.screens.len()).unwrap_or(1);
    supervisor::clear_stale_locks(&config);
    let supervisor =
        supervisor::Supervisor::start(supervisor::Supervisor::x11_specs(&config), screens);
    let processes = exec::Processes::new(exec::BaseEnv::new(&config));
    let x11 = Arc::new(x11::X11::new((0..screens).map(|i| config.display(i)).collect()));
    let state = api::AppState {
        config: Arc::new(config),
        supervisor: Arc::clone(&supervisor),
        started: Instant::now(),
        processes: Arc::clone(&processes),
        x11,
    };
    let app = api::app(state);
    // Commands are ended as soon as the signal comes: a running command or a
    // followed process would otherwise hold the graceful shutdown open.
    let stop = async move {
        holm_http::shutdown_signal().await;
        processes.shutdown(Duration::from_secs(2)).await;
    };
    axum::serve(listener, app).with_graceful_shutdown(stop).await?;
    tracing::info!("shutting down the desktop");
    supervisor.shutdown(Duration::from_secs(3)).await;
    Ok(())
}
