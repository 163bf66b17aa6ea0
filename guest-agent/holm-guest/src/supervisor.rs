//! Starts the desktop's components and keeps them running.
//!
//! Per screen: Xvfb, then fluxbox, x11vnc and Chromium once Xvfb answers. Each
//! component runs in a loop: start, probe until ready, wait for the end, back
//! off, start again. A component that dies takes nobody else down; the ones
//! that lose their X server end on their own and come back with it.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use holm_proto::guest::{ComponentState, ComponentStatus, HealthStatus};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, DesktopUser, Size};
use crate::proc;

/// The argument that makes `holm-guest` only try to make a user namespace
/// (see [`probe_sandbox`]).
pub const PROBE_SANDBOX: &str = "--probe-sandbox";

/// Runs every component of `specs` as `user`: its ids (no other groups),
/// its `HOME`, `USER` and `LOGNAME`. The guest stays root to do its own
/// work (capture, input, files, commands) and supervise; what faces the
/// web (Chromium) and the display never runs as root.
pub fn as_user(specs: Vec<ComponentSpec>, user: Option<&DesktopUser>) -> Vec<ComponentSpec> {
    let Some(user) = user else { return specs };
    specs
        .into_iter()
        .map(|mut spec| {
            let build = spec.command;
            let user = user.clone();
            spec.command = Box::new(move || {
                let mut cmd = build();
                run_as(&mut cmd, &user);
                cmd
            });
            spec
        })
        .collect()
}

/// Makes `cmd` run as `user`.
pub fn run_as(cmd: &mut Command, user: &DesktopUser) {
    use std::os::unix::process::CommandExt;
    // Started by root, `uid` also clears the supplementary groups.
    cmd.uid(user.uid)
        .gid(user.gid)
        .env("HOME", &user.home)
        .env("USER", &user.name)
        .env("LOGNAME", &user.name);
}

/// Whether Chromium's own sandbox can run for `user`: it needs a user
/// namespace, which a container's seccomp profile (Docker's default among
/// them) may refuse. Tried in a child of our own, as that user.
pub async fn probe_sandbox(user: &DesktopUser) -> bool {
    let Ok(exe) = std::env::current_exe() else { return false };
    let mut cmd = Command::new(exe);
    cmd.arg(PROBE_SANDBOX).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    run_as(&mut cmd, user);
    let Ok(spawned) = proc::spawn(&mut cmd) else { return false };
    drop(spawned.child);
    matches!(
        tokio::time::timeout(Duration::from_secs(10), spawned.exit).await,
        Ok(Ok(status)) if status.success()
    )
}

/// Makes the places the desktop writes belong to `user`: the X socket
/// directory (shared, sticky, as X expects), the state directory, and a
/// kept browser profile (a volume another box may have filled).
pub fn prepare_desktop(config: &Config) {
    use std::os::unix::fs::PermissionsExt;
    let x11 = std::path::Path::new("/tmp/.X11-unix");
    if std::fs::create_dir_all(x11).is_ok() {
        let _ = std::fs::set_permissions(x11, std::fs::Permissions::from_mode(0o1777));
    }
    let Some(user) = &config.desktop_user else { return };
    let mut dirs = vec![config.state_dir.clone(), config.chromium_profile.clone()];
    if config.profile == holm_proto::guest::Profile::X11 {
        // Fluxbox's overlay is written here as root, so its directory is
        // given to the user below, where fluxbox writes its other files.
        fluxbox_overlay(&user.home);
        dirs.push(user.home.join(".fluxbox"));
    }
    for dir in &dirs {
        if let Err(e) = std::fs::create_dir_all(dir) {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot make a directory of the desktop");
        }
        chown_tree(dir, user.uid, user.gid);
    }
}

/// Gives `path` and everything under it to `uid:gid`, without following
/// links; a tree that already belongs to them is left at its top.
fn chown_tree(path: &std::path::Path, uid: u32, gid: u32) {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else { return };
    if meta.uid() == uid && meta.gid() == gid {
        return;
    }
    if let Err(e) = std::os::unix::fs::lchown(path, Some(uid), Some(gid)) {
        tracing::warn!(path = %path.display(), error = %e, "cannot give a path to the desktop user");
        return;
    }
    if meta.is_dir()
        && let Ok(entries) = std::fs::read_dir(path)
    {
        for entry in entries.flatten() {
            chown_tree(&entry.path(), uid, gid);
        }
    }
}

/// How a component shows it is ready.
#[derive(Clone)]
pub enum Probe {
    /// The X display accepts a connection.
    XDisplay(String),
    /// A window manager has announced itself on the display (EWMH).
    WindowManager(String),
    /// A TCP port on loopback answers with this banner prefix.
    Tcp { port: u16, banner: &'static [u8] },
    /// An HTTP GET on loopback answers 200.
    Http { port: u16, path: &'static str },
    /// A check of the display backend's own (blocking; run off the runtime).
    Custom(Arc<dyn Fn() -> bool + Send + Sync>),
    /// Both probes succeed, the first checked first.
    Both(Box<Probe>, Box<Probe>),
}

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::XDisplay(d) => f.debug_tuple("XDisplay").field(d).finish(),
            Self::WindowManager(d) => f.debug_tuple("WindowManager").field(d).finish(),
            Self::Tcp { port, .. } => f.debug_struct("Tcp").field("port", port).finish(),
            Self::Http { port, path } => {
                f.debug_struct("Http").field("port", port).field("path", path).finish()
            }
            Self::Custom(_) => f.write_str("Custom"),
            Self::Both(a, b) => f.debug_tuple("Both").field(a).field(b).finish(),
        }
    }
}

/// What to run for one component.
pub struct ComponentSpec {
    /// Such as `xvfb`.
    pub name: &'static str,
    /// The screen it serves.
    pub screen: u8,
    /// Builds the command for each start.
    pub command: Box<dyn Fn() -> Command + Send + Sync>,
    /// How to tell it is ready.
    pub probe: Probe,
    /// Wait for this screen's display server before starting.
    pub needs_display: bool,
    /// The screens whose display server this is: they are ready while it is.
    pub provides: Vec<u8>,
}

impl std::fmt::Debug for ComponentSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComponentSpec")
            .field("name", &self.name)
            .field("screen", &self.screen)
            .finish()
    }
}

/// The most recent lines a component wrote, kept for diagnosis.
const LOG_LINES: usize = 40;

struct Component {
    spec: ComponentSpec,
    status: Mutex<ComponentStatus>,
    log: Mutex<VecDeque<String>>,
}

/// The running set of components.
pub struct Supervisor {
    components: Vec<Arc<Component>>,
    displays: Vec<watch::Receiver<bool>>,
    cancel: CancellationToken,
    /// Set when the guest stops: a component that ends is not started again.
    draining: Arc<AtomicBool>,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor").field("components", &self.components.len()).finish()
    }
}

/// Removes what an earlier run of the desktop left in the box's files: X
/// display locks and sockets, and Chromium's profile locks. A box that was
/// stopped and started again, or forked, keeps its files, and with them
/// these; but PIDs start again from 1, so a lock's PID can name a live,
/// unrelated process and Xvfb or Chromium would refuse to start. Only done
/// when the guest is PID 1: then nothing it did not start runs beside it, so
/// every such lock is stale.
pub fn clear_stale_locks(config: &Config) {
    if std::process::id() != 1 {
        return;
    }
    let mut paths = Vec::new();
    for i in 0..config.screens.len() {
        let screen = u8::try_from(i).unwrap_or(u8::MAX);
        let number = config.display(screen).trim_start_matches(':').to_owned();
        paths.push(PathBuf::from(format!("/tmp/.X{number}-lock")));
        paths.push(PathBuf::from(format!("/tmp/.X11-unix/X{number}")));
        let profile = config.state_dir.join(format!("chromium-{screen}"));
        for name in ["SingletonLock", "SingletonSocket", "SingletonCookie"] {
            paths.push(profile.join(name));
        }
    }
    for path in paths {
        // `symlink_metadata`: Chromium's locks are dangling symlinks.
        if std::fs::symlink_metadata(&path).is_ok() {
            match std::fs::remove_file(&path) {
                Ok(()) => tracing::info!(path = %path.display(), "removed a stale lock"),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "cannot remove a stale lock")
                }
            }
        }
    }
}

impl Supervisor {
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
                specs.push(x11vnc(screen, &display, config.vnc_port(screen), home.clone()));
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
                let shown = Probe::Custom(Arc::new(move || crate::x11::probe::browser_shown(&d)));
                spec.probe = Probe::Both(Box::new(spec.probe), Box::new(shown));
                specs.push(spec);
            }
        }
        specs
    }

    /// Starts every component. Returns at once; they start in the background.
    pub fn start(specs: Vec<ComponentSpec>, screens: u8) -> Arc<Self> {
        let cancel = CancellationToken::new();
        let draining = Arc::new(AtomicBool::new(false));
        let mut senders = Vec::new();
        let mut displays = Vec::new();
        for _ in 0..screens {
            let (tx, rx) = watch::channel(false);
            senders.push(tx);
            displays.push(rx);
        }
        let senders = Arc::new(senders);
        let components: Vec<Arc<Component>> = specs
            .into_iter()
            .map(|spec| {
                let status = ComponentStatus {
                    name: spec.name.to_owned(),
                    screen: spec.screen,
                    state: ComponentState::Starting,
                    pid: None,
                    restarts: 0,
                    last_exit: None,
                    ready_ms: None,
                };
                Arc::new(Component {
                    spec,
                    status: Mutex::new(status),
                    log: Mutex::new(VecDeque::new()),
                })
            })
            .collect();
        for c in &components {
            let c = Arc::clone(c);
            let cancel = cancel.clone();
            let senders = Arc::clone(&senders);
            let display = displays[usize::from(c.spec.screen)].clone();
            let draining = Arc::clone(&draining);
            tokio::spawn(async move { run(c, display, senders, cancel, draining).await });
        }
        Arc::new(Self { components, displays, cancel, draining })
    }

    /// Each component's status.
    pub fn statuses(&self) -> Vec<ComponentStatus> {
        self.components
            .iter()
            .map(|c| c.status.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .collect()
    }

    /// The overall state.
    pub fn health(&self) -> HealthStatus {
        let statuses = self.statuses();
        if statuses
            .iter()
            .all(|s| matches!(s.state, ComponentState::Ready | ComponentState::Disabled))
        {
            HealthStatus::Ready
        } else if statuses.iter().any(|s| s.state == ComponentState::Restarting || s.restarts > 0) {
            HealthStatus::Degraded
        } else {
            HealthStatus::Starting
        }
    }

    /// Whether screen `index`'s display server answers.
    pub fn display_ready(&self, index: u8) -> bool {
        self.displays.get(usize::from(index)).is_some_and(|rx| *rx.borrow())
    }

    /// Waits until screen `index`'s display server answers, up to `timeout`.
    pub async fn wait_display(&self, index: u8, timeout: Duration) -> bool {
        let Some(rx) = self.displays.get(usize::from(index)) else { return false };
        let mut rx = rx.clone();
        tokio::time::timeout(timeout, rx.wait_for(|ready| *ready)).await.is_ok_and(|r| r.is_ok())
    }

    /// The last lines a component wrote.
    pub fn log(&self, name: &str, screen: u8) -> Option<Vec<String>> {
        self.components
            .iter()
            .find(|c| c.spec.name == name && c.spec.screen == screen)
            .map(|c| c.log.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned().collect())
    }

    /// From now on a component that ends stays ended, so one can be stopped
    /// its own way (Chromium through DevTools) before [`Supervisor::shutdown`].
    pub fn drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// Waits until component `name` of `screen` has no process, at most `timeout`.
    pub async fn wait_ended(&self, name: &str, screen: u8, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let running = self
                .statuses()
                .iter()
                .any(|s| s.name == name && s.screen == screen && s.pid.is_some());
            if !running {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops every component: SIGTERM, then SIGKILL after `grace`.
    pub async fn shutdown(&self, grace: Duration) {
        self.cancel.cancel();
        let pids: Vec<u32> = self.statuses().iter().filter_map(|s| s.pid).collect();
        for pid in &pids {
            let _ = proc::kill_group(*pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline && self.statuses().iter().any(|s| s.pid.is_some()) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for s in self.statuses() {
            if let Some(pid) = s.pid {
                let _ = proc::kill_group(pid, libc::SIGKILL);
            }
        }
    }
}

async fn run(
    c: Arc<Component>,
    mut display: watch::Receiver<bool>,
    senders: Arc<Vec<watch::Sender<bool>>>,
    cancel: CancellationToken,
    draining: Arc<AtomicBool>,
) {
    let name = c.spec.name;
    let screen = c.spec.screen;
    let mut backoff = Duration::from_millis(200);
    loop {
        if c.spec.needs_display {
            tokio::select! {
                _ = cancel.cancelled() => return,
                r = display.wait_for(|ready| *ready) => if r.is_err() { return },
            }
        }
        let started = Instant::now();
        let mut cmd = (c.spec.command)();
        cmd.stdin(Stdio::null());
        let spawned = match std::io::pipe() {
            Ok((reader, writer)) => {
                let writer2 = writer.try_clone();
                cmd.stdout(writer);
                if let Ok(w) = writer2 {
                    cmd.stderr(w);
                }
                let result = proc::spawn(&mut cmd);
                // Drop our copies of the write end (held inside `cmd`).
                drop(cmd);
                result.map(|s| (s, reader))
            }
            Err(e) => Err(e),
        };
        let (spawned, reader) = match spawned {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(component = name, screen, error = %e, "cannot start");
                set(&c, |s| {
                    s.state = ComponentState::Restarting;
                    s.last_exit = Some(format!("cannot start: {e}"));
                });
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    () = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(5));
                continue;
            }
        };
        let pid = spawned.pid;
        tracing::info!(component = name, screen, pid, "started");
        set(&c, |s| {
            s.state = ComponentState::Starting;
            s.pid = Some(pid);
        });
        tokio::spawn(collect_log(Arc::clone(&c), reader));

        let mut exit = spawned.exit;
        let probe = probe_until_ready(c.spec.probe.clone());
        tokio::pin!(probe);
        let status = loop {
            tokio::select! {
                status = &mut exit => break status.ok(),
                () = &mut probe, if c.status.lock().unwrap_or_else(|e| e.into_inner()).state == ComponentState::Starting => {
                    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                    tracing::info!(component = name, screen, ready_ms = ms, "ready");
                    set(&c, |s| {
                        s.state = ComponentState::Ready;
                        s.ready_ms = Some(ms);
                    });
                    for &s in &c.spec.provides {
                        let _ = senders[usize::from(s)].send(true);
                    }
                }
                _ = cancel.cancelled() => {
                    let _ = proc::kill_group(pid, libc::SIGTERM);
                    let status = tokio::time::timeout(Duration::from_secs(2), &mut exit).await;
                    if status.is_err() {
                        let _ = proc::kill_group(pid, libc::SIGKILL);
                    }
                    set(&c, |s| s.pid = None);
                    return;
                }
            }
        };
        drop(spawned.child);
        for &s in &c.spec.provides {
            let _ = senders[usize::from(s)].send(false);
        }
        let why = status.map_or_else(|| "ended".to_owned(), proc::describe_exit);
        if draining.load(Ordering::SeqCst) {
            tracing::info!(component = name, screen, pid, why, "ended while stopping");
            let _ = proc::kill_group(pid, libc::SIGKILL);
            set(&c, |s| s.pid = None);
            return;
        }
        tracing::warn!(component = name, screen, pid, why, "ended; restarting");
        // Whatever it started in its group goes with it.
        let _ = proc::kill_group(pid, libc::SIGKILL);
        set(&c, |s| {
            s.state = ComponentState::Restarting;
            s.pid = None;
            s.restarts += 1;
            s.last_exit = Some(why.clone());
        });
        if started.elapsed() > Duration::from_secs(30) {
            backoff = Duration::from_millis(200);
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            () = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

fn set(c: &Component, f: impl FnOnce(&mut ComponentStatus)) {
    f(&mut c.status.lock().unwrap_or_else(|e| e.into_inner()));
}

async fn collect_log(c: Arc<Component>, reader: std::io::PipeReader) {
    let fd: std::os::fd::OwnedFd = reader.into();
    let Ok(rx) = tokio::net::unix::pipe::Receiver::from_owned_fd(fd) else { return };
    let mut lines = BufReader::new(rx).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(component = c.spec.name, screen = c.spec.screen, "{line}");
        let mut log = c.log.lock().unwrap_or_else(|e| e.into_inner());
        if log.len() == LOG_LINES {
            log.pop_front();
        }
        log.push_back(line);
    }
}

/// Resolves once the probe succeeds. Polls with a short, growing interval.
async fn probe_until_ready(probe: Probe) {
    let mut interval = Duration::from_millis(5);
    loop {
        if check(&probe).await {
            return;
        }
        tokio::time::sleep(interval).await;
        interval = (interval * 2).min(Duration::from_millis(100));
    }
}

fn check(probe: &Probe) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send + '_>> {
    Box::pin(check_one(probe))
}

async fn check_one(probe: &Probe) -> bool {
    match probe.clone() {
        Probe::XDisplay(display) => {
            tokio::task::spawn_blocking(move || x11rb::connect(Some(&display)).is_ok())
                .await
                .unwrap_or(false)
        }
        Probe::WindowManager(display) => {
            tokio::task::spawn_blocking(move || crate::x11::probe::wm_present(&display))
                .await
                .unwrap_or(false)
        }
        Probe::Tcp { port, banner } => tcp_banner(port, banner).await,
        Probe::Http { port, path } => http_ok(port, path).await,
        Probe::Custom(check) => tokio::task::spawn_blocking(move || check()).await.unwrap_or(false),
        Probe::Both(a, b) => check(&a).await && check(&b).await,
    }
}

async fn tcp_banner(port: u16, banner: &[u8]) -> bool {
    use tokio::io::AsyncReadExt;
    let Ok(Ok(mut stream)) = tokio::time::timeout(
        Duration::from_secs(1),
        tokio::net::TcpStream::connect(("127.0.0.1", port)),
    )
    .await
    else {
        return false;
    };
    let mut buf = vec![0u8; banner.len()];
    matches!(
        tokio::time::timeout(Duration::from_secs(1), stream.read_exact(&mut buf)).await,
        Ok(Ok(_))
    ) && buf == banner
}

async fn http_ok(port: u16, path: &str) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let attempt = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.ok()?;
        // Chromium closes HTTP/1.0 connections without answering.
        let req =
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
        stream.write_all(req.as_bytes()).await.ok()?;
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).await.ok()?;
        Some(head.starts_with(b"HTTP/1.") && &head[9..12] == b"200")
    };
    matches!(tokio::time::timeout(Duration::from_secs(1), attempt).await, Ok(Some(true)))
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
fn fluxbox_overlay(home: &std::path::Path) {
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
    ComponentSpec {
        name: "fluxbox",
        screen,
        command: Box::new(move || {
            fluxbox_overlay(&home);
            let mut cmd = Command::new("fluxbox");
            cmd.env("DISPLAY", &d).env("HOME", &home);
            cmd
        }),
        probe: Probe::WindowManager(display.to_owned()),
        needs_display: true,
        provides: Vec::new(),
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
            cmd.args(["-display", &d, "-rfbport", &port.to_string()]).args([
                "-localhost",
                "-forever",
                "-shared",
                "-nopw",
                "-quiet",
                "-noxrecord",
            ]);
            cmd
        }),
        probe: Probe::Tcp { port, banner: b"RFB " },
        needs_display: true,
        provides: Vec::new(),
    }
}

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
                    "--disable-features=Translate,MediaRouter",
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
    }
}
