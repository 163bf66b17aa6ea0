//! `holm-guest`: the agent inside every holm box.
//!
//! It is the box's entrypoint. It reads its [`config::Config`] once, starts
//! and supervises the desktop ([`supervisor`]), and serves the guest API
//! ([`api`]): screens, screenshots, input, commands, processes and files, all
//! done in process against the display server, and page tools over DevTools
//! ([`browser`], [`cdp`]). It also serves the Chromium bridge ([`bridge`]) on
//! its own port, for DevTools clients outside the box.

pub mod a11y;
pub mod api;
pub mod bridge;
pub mod browser;
pub mod cdp;
pub mod compose;
pub mod config;
pub mod display;
pub mod exec;
pub mod files;
pub mod image;
pub mod input;
pub mod nofollow;
pub mod proc;
pub mod record;
pub mod sandboxd;
pub mod shm;
pub mod supervisor;
pub mod viewer;
pub mod wayland;
pub mod x11;

use std::sync::Arc;
use std::time::{Duration, Instant};

use holm_http::serve::Limits;
use tokio::net::TcpListener;

/// The most connections the guest API holds open at once.
pub const API_CONNECTIONS: usize = 256;
/// The most connections the bridge holds open at once, WebSockets not
/// counted once upgraded.
pub const BRIDGE_CONNECTIONS: usize = 128;
/// The most connections the viewer server (noVNC's page and its
/// WebSockets) holds open at once, WebSockets not counted once upgraded.
pub const VIEWER_CONNECTIONS: usize = 128;
/// The most connections agent-sandbox's sandboxd contract holds open at once.
pub const SANDBOXD_CONNECTIONS: usize = 64;

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
    "input.settle",
    "input.unicode",
    "input.coordinate_space",
    "bridge",
    "browser.tabs",
    "browser.page",
    "browser.evaluate",
    "browser.screenshot",
    "browser.state",
    "viewers",
    "handoff",
    "windows",
    "clipboard",
    "recordings",
];

/// What this guest can do on `profile`: [`CAPABILITIES`], how input is
/// made (`input.xtest` on X11, `input.virtual` for Wayland's virtual pointer
/// and keyboard), and on X11 the accessibility tree (`accessibility`).
pub fn capabilities(profile: holm_proto::guest::Profile) -> Vec<String> {
    let own: &[&str] = match profile {
        holm_proto::guest::Profile::X11 => &["input.xtest", "accessibility"],
        holm_proto::guest::Profile::Wayland => &["input.virtual"],
    };
    CAPABILITIES.iter().chain(own).map(|c| (*c).to_owned()).collect()
}

/// Runs the guest until SIGTERM or SIGINT: supervises the desktop and serves
/// the API on `config.addr`.
pub async fn run(mut config: config::Config) -> std::io::Result<()> {
    proc::init_reaper()?;
    if let Some(user) = &config.desktop_user {
        config.chromium_sandbox = supervisor::probe_sandbox(user).await;
        tracing::info!(
            user = %user.name,
            chromium_sandbox = config.chromium_sandbox,
            "the desktop runs as an unprivileged user"
        );
    }
    let listener = TcpListener::bind(config.addr).await?;
    let bridge_listener = TcpListener::bind(config.bridge_addr).await?;
    let viewer_listener = TcpListener::bind(config.viewer_addr).await?;
    tracing::info!(addr = %listener.local_addr()?, bridge = %bridge_listener.local_addr()?, viewers = %viewer_listener.local_addr()?, profile = %config.profile, screens = config.screens.len(), "holm-guest listening");
    let screens = u8::try_from(config.screens.len()).unwrap_or(1);
    supervisor::clear_stale_locks(&config);
    compose::prepare(&config);
    let (desktop, mut specs) = compose::desktop(&config)?;
    specs.push(a11y::bus::spec(&config));
    let specs = supervisor::as_user(specs, config.desktop_user.as_ref());
    let supervisor = supervisor::Supervisor::start(specs, screens);
    let processes = exec::Processes::new(exec::BaseEnv::new(&config));
    let bridge = bridge::Bridge::new(config.devtools_port(0), config.chromium.is_some());
    let browser = browser::Browser::new(config.devtools_port(0), config.chromium.is_some());
    let viewers = viewer::Viewers::new(screens, config.viewer_grace);
    let viewer_app = viewer::server::router(viewer::server::ViewerState {
        viewers: Arc::clone(&viewers),
        vnc_port_base: config.vnc_port_base,
        view_source: view_source(config.profile),
        supervisor: Arc::clone(&supervisor),
        keeper: (config.profile == holm_proto::guest::Profile::X11)
            .then(|| viewer::keeper::Keeper::new(screens, config.viewer_hold)),
    });
    let a11y = Arc::new(a11y::A11y::new(a11y::bus::socket(&config)));
    let recorder = record::Recorder::new(
        config.recordings_dir(),
        config.recording_limits,
        Arc::clone(&desktop),
    );
    if config.record {
        tokio::spawn(Arc::clone(&recorder).record_all(Arc::clone(&supervisor)));
    }
    let state = api::AppState {
        recorder: Arc::clone(&recorder),
        config: Arc::new(config),
        supervisor: Arc::clone(&supervisor),
        started: Instant::now(),
        processes: Arc::clone(&processes),
        desktop,
        bridge: Arc::clone(&bridge),
        browser: Arc::clone(&browser),
        viewers: Arc::clone(&viewers),
        a11y,
        encoded: Arc::default(),
    };
    let secret = Arc::new(api::BoxSecret::new(state.config.secret_sha256));
    let sandboxd = match state.config.sandboxd_addr {
        Some(addr) => {
            let listener = TcpListener::bind(addr).await?;
            tracing::info!(addr = %listener.local_addr()?, "agent-sandbox's sandboxd contract listening");
            let routes = sandboxd::Sandboxd::new(
                state.config.sandboxd_root.clone(),
                Arc::clone(&secret),
                Arc::clone(&supervisor),
                std::env::vars(),
            )
            .router();
            Some((listener, routes))
        }
        None => None,
    };
    let app = api::app(state, secret);
    // The bridge is ended at once on the signal: its WebSocket connections
    // would otherwise hold a graceful shutdown open.
    let bridge_stop = tokio_util::sync::CancellationToken::new();
    let bridge_server = holm_http::serve::serve(
        bridge_listener,
        bridge.router(),
        Limits::with_connections(BRIDGE_CONNECTIONS),
        bridge_stop.clone().cancelled_owned(),
    );
    let bridge_task = tokio::spawn(async move {
        if let Err(e) = bridge_server.await {
            tracing::error!(error = %e, "the bridge stopped");
        }
    });
    // The viewers end with the bridge, for the same reason.
    let viewer_server = holm_http::serve::serve(
        viewer_listener,
        viewer_app,
        Limits::with_connections(VIEWER_CONNECTIONS),
        bridge_stop.clone().cancelled_owned(),
    );
    let viewer_task = tokio::spawn(async move {
        if let Err(e) = viewer_server.await {
            tracing::error!(error = %e, "the viewers stopped");
        }
    });
    // agent-sandbox's contract, when asked for, ends with the bridge too.
    let sandboxd_task = sandboxd.map(|(listener, routes)| {
        let server = holm_http::serve::serve(
            listener,
            routes,
            Limits::with_connections(SANDBOXD_CONNECTIONS),
            bridge_stop.clone().cancelled_owned(),
        );
        tokio::spawn(async move {
            if let Err(e) = server.await {
                tracing::error!(error = %e, "the sandboxd contract stopped");
            }
        })
    });
    // Commands are ended as soon as the signal comes: a running command or a
    // followed process would otherwise hold the graceful shutdown open.
    let stopping_bridge = Arc::clone(&bridge);
    let stopping_viewers = Arc::clone(&viewers);
    let stopping = bridge_stop.clone();
    let stopping_supervisor = Arc::clone(&supervisor);
    let stop = async move {
        holm_http::shutdown_signal().await;
        stopping_bridge.close_all();
        stopping_viewers.close_all();
        stopping.cancel();
        // Chromium is closed through DevTools so it writes a kept profile's
        // cookies out; the supervisor must not start it again meanwhile.
        let close_browser = async {
            stopping_supervisor.drain();
            if browser.close_gracefully().await {
                stopping_supervisor.wait_ended("chromium", 0, Duration::from_secs(5)).await;
            }
        };
        // Recordings finish their files while the display still runs.
        tokio::join!(
            processes.shutdown(Duration::from_secs(2)),
            close_browser,
            recorder.stop_all()
        );
    };
    let served =
        holm_http::serve::serve(listener, app, Limits::with_connections(API_CONNECTIONS), stop)
            .await;
    bridge.close_all();
    viewers.close_all();
    bridge_stop.cancel();
    let _ = bridge_task.await;
    let _ = viewer_task.await;
    if let Some(task) = sandboxd_task {
        let _ = task.await;
    }
    served?;
    tracing::info!("shutting down the desktop");
    supervisor.shutdown(Duration::from_secs(3)).await;
    Ok(())
}

/// Where watch-only viewers' VNC connections come from. On Wayland the
/// pointer cannot be read back, and the guest forgets where it put it while
/// a VNC client is connected (one might move it); a watch-only viewer cannot,
/// so its connections come from 127.0.0.2, which that check passes over.
/// x11vnc (`-localhost`) takes connections from 127.0.0.1 only, and on X11
/// the pointer is read back anyway.
fn view_source(profile: holm_proto::guest::Profile) -> std::net::IpAddr {
    match profile {
        holm_proto::guest::Profile::X11 => std::net::Ipv4Addr::LOCALHOST.into(),
        holm_proto::guest::Profile::Wayland => std::net::Ipv4Addr::new(127, 0, 0, 2).into(),
    }
}
