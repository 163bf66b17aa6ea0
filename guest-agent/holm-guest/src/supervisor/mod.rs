//! Starts the desktop's components and keeps them running.
//!
//! Per screen: Xvfb, then fluxbox, x11vnc and Chromium once Xvfb answers
//! (their recipes are in [`crate::x11::components`], [`crate::wayland::sway`]
//! and [`crate::browser::process`]; [`crate::compose`] chooses them; this
//! module knows no display). Each component runs in a loop: start, probe
//! until ready, wait for the end, back off, start again. A component
//! that dies takes nobody else down; the ones that lose their X server end on
//! their own and come back with it. A component that runs but is not ready
//! within its start deadline ([`START_DEADLINE`], doubled after each such
//! miss) is killed and started again: a process can hang in its start (an
//! x11vnc spinning under gVisor and never listening), and nothing else would
//! ever end it.

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

use crate::config::{Config, DesktopUser};
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

/// How a component shows it is ready.
#[derive(Clone)]
pub enum Probe {
    /// The X display accepts a connection.
    XDisplay(String),
    /// A TCP port on loopback answers with this banner prefix, after the
    /// probe sent `hello` (which may be empty).
    Tcp { port: u16, banner: &'static [u8], hello: &'static [u8] },
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
    /// Started only once [`Supervisor::demand`] asks for its screen (a VNC
    /// server under `HOLM_VNC=demand`); [`ComponentState::Idle`] until then.
    pub on_demand: bool,
}

impl std::fmt::Debug for ComponentSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComponentSpec")
            .field("name", &self.name)
            .field("screen", &self.screen)
            .finish()
    }
}

/// How long a started component may take to become ready before it is
/// killed and started again. Doubled after each start that missed it (and
/// back to this once one is ready), so a component that is only slow on a
/// loaded machine gets there on a later start rather than never.
pub const START_DEADLINE: Duration = Duration::from_secs(90);

/// The most recent lines a component wrote, kept for diagnosis.
const LOG_LINES: usize = 40;

struct Component {
    spec: ComponentSpec,
    status: Mutex<ComponentStatus>,
    /// Its state, as `status` holds it, for those who wait on a change.
    state: watch::Sender<ComponentState>,
    /// Whether it was asked for (always, unless `spec.on_demand`).
    demanded: watch::Sender<bool>,
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
    /// Starts every component. Returns at once; they start in the background.
    pub fn start(specs: Vec<ComponentSpec>, screens: u8) -> Arc<Self> {
        Self::start_with(specs, screens, START_DEADLINE)
    }

    /// [`Supervisor::start`] with a start deadline of `deadline` (tests use
    /// a short one).
    pub fn start_with(specs: Vec<ComponentSpec>, screens: u8, deadline: Duration) -> Arc<Self> {
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
                let state =
                    if spec.on_demand { ComponentState::Idle } else { ComponentState::Starting };
                let status = ComponentStatus {
                    name: spec.name.to_owned(),
                    screen: spec.screen,
                    state,
                    pid: None,
                    restarts: 0,
                    last_exit: None,
                    ready_ms: None,
                };
                Arc::new(Component {
                    demanded: watch::Sender::new(!spec.on_demand),
                    state: watch::Sender::new(state),
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
            tokio::spawn(async move { run(c, display, senders, cancel, draining, deadline).await });
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
        if statuses.iter().all(|s| s.state.settled()) {
            HealthStatus::Ready
        } else if statuses.iter().any(|s| s.state == ComponentState::Restarting || s.restarts > 0) {
            HealthStatus::Degraded
        } else {
            HealthStatus::Starting
        }
    }

    /// Starts the components of screen `screen` that wait to be asked for
    /// (its VNC server under `HOLM_VNC=demand`); nothing if they were.
    pub fn demand(&self, screen: u8) {
        for c in self.components.iter().filter(|c| c.spec.on_demand && c.spec.screen == screen) {
            if !*c.demanded.borrow() {
                tracing::info!(component = c.spec.name, screen, "asked for; starting it");
            }
            c.demanded.send_replace(true);
        }
    }

    /// [`Supervisor::demand`]s screen `screen`'s components that wait to be
    /// asked for, and waits until every one is ready, up to `timeout`.
    /// False when one was not ready in time.
    pub async fn wait_demanded(&self, screen: u8, timeout: Duration) -> bool {
        self.demand(screen);
        let wanted = self.components.iter().filter(|c| c.spec.on_demand && c.spec.screen == screen);
        let all = futures_util::future::join_all(wanted.map(|c| {
            let mut state = c.state.subscribe();
            async move { state.wait_for(|s| *s == ComponentState::Ready).await.is_ok() }
        }));
        tokio::time::timeout(timeout, all).await.is_ok_and(|r| r.into_iter().all(|ok| ok))
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
    first_deadline: Duration,
) {
    let name = c.spec.name;
    let screen = c.spec.screen;
    let mut backoff = Duration::from_millis(200);
    let mut deadline = first_deadline;
    let mut demanded = c.demanded.subscribe();
    tokio::select! {
        _ = cancel.cancelled() => return,
        r = demanded.wait_for(|asked| *asked) => if r.is_err() { return },
    }
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
        let late = tokio::time::sleep(deadline);
        tokio::pin!(late);
        let starting =
            || c.status.lock().unwrap_or_else(|e| e.into_inner()).state == ComponentState::Starting;
        let status = loop {
            tokio::select! {
                status = &mut exit => break status.map_or_else(|_| "ended".to_owned(), proc::describe_exit),
                () = &mut late, if starting() => {
                    let secs = deadline.as_secs();
                    tracing::warn!(component = name, screen, pid, secs, "not ready in its start deadline; killing it");
                    let _ = proc::kill_group(pid, libc::SIGKILL);
                    let _ = tokio::time::timeout(Duration::from_secs(5), &mut exit).await;
                    deadline = deadline.saturating_mul(2);
                    break format!("not ready in {secs} s; killed");
                }
                () = &mut probe, if starting() => {
                    deadline = first_deadline;
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
        let why = status;
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
    let mut status = c.status.lock().unwrap_or_else(|e| e.into_inner());
    f(&mut status);
    c.state.send_if_modified(|state| std::mem::replace(state, status.state) != status.state);
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
        Probe::Tcp { port, banner, hello } => tcp_banner(port, banner, hello).await,
        Probe::Http { port, path } => http_ok(port, path).await,
        Probe::Custom(check) => tokio::task::spawn_blocking(move || check()).await.unwrap_or(false),
        Probe::Both(a, b) => check(&a).await && check(&b).await,
    }
}

async fn tcp_banner(port: u16, banner: &[u8], hello: &[u8]) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(Ok(mut stream)) = tokio::time::timeout(
        Duration::from_secs(1),
        tokio::net::TcpStream::connect(("127.0.0.1", port)),
    )
    .await
    else {
        return false;
    };
    if !hello.is_empty() && stream.write_all(hello).await.is_err() {
        return false;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A component whose first start hangs (runs, never ready) is killed at
    /// its start deadline and started again; the next start, slower than
    /// the first deadline but within the doubled one, becomes ready.
    #[tokio::test]
    async fn a_component_not_ready_in_its_deadline_is_killed_and_started_again() {
        proc::init_reaper().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_owned();
        let ready = d.join("ready");
        let script = "if [ -e first ]; then sleep 1.5; touch ready; exec sleep 600; fi; \
                      touch first; exec sleep 600";
        let spec = ComponentSpec {
            name: "hangs-first",
            screen: 0,
            command: Box::new(move || {
                let mut cmd = Command::new("sh");
                cmd.args(["-c", script]).current_dir(&d);
                cmd
            }),
            probe: Probe::Custom(Arc::new(move || ready.exists())),
            needs_display: false,
            provides: Vec::new(),
            on_demand: false,
        };
        let sup = Supervisor::start_with(vec![spec], 1, Duration::from_secs(1));
        let first = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                if let Some(pid) = sup.statuses()[0].pid {
                    return pid;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("never started");
        let status = tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                let s = sup.statuses().remove(0);
                if s.state == ComponentState::Ready {
                    return s;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the component never became ready");
        assert!(status.restarts >= 1, "{status:?}");
        let why = status.last_exit.clone().unwrap_or_default();
        assert!(why.starts_with("not ready in ") && why.ends_with(" s; killed"), "{status:?}");
        // The hung first start is gone, reaped: its group has no process.
        assert!(dir.path().join("first").exists());
        assert_ne!(status.pid, Some(first), "{status:?}");
        // SAFETY: kill with signal 0 only asks whether the group exists.
        assert_ne!(unsafe { libc::kill(-(first as libc::pid_t), 0) }, 0, "the first start lives");
        sup.shutdown(Duration::from_secs(2)).await;
    }

    /// A component that waits to be asked for is idle, not started, and
    /// does not hold the box's health back; asked for, it starts and
    /// becomes ready, and asking again changes nothing.
    #[tokio::test]
    async fn a_component_on_demand_starts_only_when_asked_for() {
        proc::init_reaper().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let spec = |name: &'static str, on_demand: bool| {
            let d = dir.path().to_owned();
            let mark = d.join(name);
            ComponentSpec {
                name,
                screen: 0,
                command: Box::new(move || {
                    let mut cmd = Command::new("sh");
                    cmd.args(["-c", &format!("touch {name}; exec sleep 600")]).current_dir(&d);
                    cmd
                }),
                probe: Probe::Custom(Arc::new(move || mark.exists())),
                needs_display: false,
                provides: Vec::new(),
                on_demand,
            }
        };
        let sup = Supervisor::start(vec![spec("always", false), spec("asked", true)], 1);
        let mut always = sup.components[0].state.subscribe();
        tokio::time::timeout(
            Duration::from_secs(30),
            always.wait_for(|s| *s == ComponentState::Ready),
        )
        .await
        .expect("the first component never became ready")
        .unwrap();
        let asked = sup.statuses().remove(1);
        assert_eq!((asked.state, asked.pid), (ComponentState::Idle, None), "{asked:?}");
        assert!(!dir.path().join("asked").exists(), "started before it was asked for");
        assert_eq!(sup.health(), HealthStatus::Ready, "an idle component holds nothing back");
        assert!(sup.wait_demanded(0, Duration::from_secs(30)).await, "never ready once asked");
        let asked = sup.statuses().remove(1);
        assert_eq!(asked.state, ComponentState::Ready, "{asked:?}");
        let pid = asked.pid.expect("a process");
        assert!(sup.wait_demanded(0, Duration::from_secs(30)).await);
        assert_eq!(sup.statuses()[1].pid, Some(pid), "asked again, started again");
        sup.shutdown(Duration::from_secs(2)).await;
    }
}
