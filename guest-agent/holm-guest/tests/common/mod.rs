//! A real guest for integration tests: the `holm-guest` binary, started with
//! its own X display numbers (or Wayland directory) and ports so tests run
//! side by side, and killed (with its whole desktop) when the handle drops.
//!
//! The tests need the real Xvfb, fluxbox and x11vnc, or sway and wayvnc;
//! when one is missing they fail with a message that says what to install.
//! They never skip. A desktop behaviour is written once, as a function of
//! the [`Profile`], and [`profiles!`] runs it on both.

#![allow(dead_code, unreachable_pub)]
// The test process is not the guest: it starts the guest binary and waits on
// it like any parent. The one-reaper rule (clippy.toml) binds the guest only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

pub mod desk;
#[path = "../../../../tests/holm-testkit/src/load.rs"]
pub mod load;
#[path = "../../../../tests/holm-testkit/src/rfb.rs"]
pub mod rfb;
pub mod wl;

pub use holm_proto::guest::Profile;

/// Runs each named `async fn(Profile)` as a test on X11 (`x11::NAME`) and on
/// Wayland (`wayland::NAME`): one suite, both display profiles.
#[macro_export]
macro_rules! profiles {
    ($($name:ident),+ $(,)?) => {
        mod x11 {
            $(#[tokio::test]
            async fn $name() {
                super::$name($crate::common::Profile::X11).await
            })+
        }
        mod wayland {
            $(#[tokio::test]
            async fn $name() {
                super::$name($crate::common::Profile::Wayland).await
            })+
        }
    };
}

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What to start.
#[derive(Debug, Clone)]
pub struct Options {
    /// X11 or Wayland.
    pub profile: Profile,
    /// Screens, 1 to 6.
    pub screens: u8,
    /// `HOLM_SCREEN_SIZES`.
    pub sizes: String,
    /// Run Chromium.
    pub chromium: bool,
    /// `HOLM_VNC`: `off`, `on` (with the desktop) or `demand` (when a
    /// viewer asks, the product's default).
    pub vnc: &'static str,
    /// More environment for the guest.
    pub env: Vec<(&'static str, String)>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            profile: Profile::X11,
            screens: 1,
            sizes: "1280x800".into(),
            chromium: false,
            vnc: "off",
            env: Vec::new(),
        }
    }
}

/// A running guest.
#[derive(Debug)]
pub struct Guest {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The bearer secret.
    pub secret: String,
    /// An HTTP client.
    pub http: reqwest::Client,
    /// The X display of screen `i` is `:display_base + i`.
    pub display_base: u16,
    /// The first VNC port.
    pub vnc_port_base: u16,
    /// The first DevTools port.
    pub devtools_port_base: u16,
    /// The Chromium bridge, `http://127.0.0.1:PORT`.
    pub bridge_url: String,
    /// The viewers, `http://127.0.0.1:PORT`.
    pub viewer_url: String,
    /// The guest's home directory, a temporary directory.
    pub home: PathBuf,
    /// The display profile.
    pub profile: Profile,
    /// Wayland: sway's runtime directory.
    pub wayland_dir: PathBuf,
    child: Child,
    _dir: tempfile::TempDir,
}

/// Fails the test unless every program is installed.
pub fn require_programs(programs: &[&str]) {
    let path = std::env::var("PATH").unwrap_or_default();
    let missing: Vec<&&str> = programs
        .iter()
        .filter(|p| !path.split(':').any(|d| Path::new(d).join(p).is_file()))
        .collect();
    assert!(
        missing.is_empty(),
        "these tests need {missing:?}; on Debian: apt-get install xvfb fluxbox x11vnc xterm sway wayvnc foot chromium (or run .ci/run)"
    );
}

/// An HTTP client. In a workspace build, reqwest's TLS features are unified
/// with the host crates', which bring no crypto provider of their own, so one
/// is installed here (the tests only speak plain HTTP on loopback).
pub fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// Ports for one guest, all distinct and free when chosen: each chosen
/// port stays bound until every one is chosen, so two picks never answer
/// the same port (a VNC server whose port was taken would fall back to IPv6
/// alone, and a viewer would reach another test's screen).
struct Ports(Vec<TcpListener>);

impl Ports {
    fn new() -> Self {
        Self(Vec::new())
    }

    fn one(&mut self) -> u16 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        self.0.push(l);
        port
    }

    /// `base..base+n`.
    fn range(&mut self, n: u16) -> u16 {
        loop {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            let base = l.local_addr().unwrap().port();
            if base >= 65000 {
                continue;
            }
            let rest: Option<Vec<TcpListener>> =
                (1..n).map(|i| TcpListener::bind(("127.0.0.1", base + i)).ok()).collect();
            if let Some(rest) = rest {
                self.0.push(l);
                self.0.extend(rest);
                return base;
            }
        }
    }
}

/// A display base with `n` free display numbers after it.
fn free_display_base(n: u16) -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    // Spread test processes apart by pid, tests within one process by a counter.
    let start = 100 + (std::process::id() % 400) as u16 * 8;
    loop {
        let base = start + NEXT.fetch_add(n, Ordering::SeqCst) % 4000;
        let free = (0..n).all(|i| {
            let d = base + i;
            !Path::new(&format!("/tmp/.X{d}-lock")).exists()
                && !Path::new(&format!("/tmp/.X11-unix/X{d}")).exists()
        });
        if free {
            return base;
        }
    }
}

impl Guest {
    /// Starts a guest and waits until its screens answer.
    pub async fn start(opts: Options) -> Self {
        let mut programs = match opts.profile {
            Profile::X11 => vec!["Xvfb", "fluxbox"],
            Profile::Wayland => vec!["sway"],
        };
        if opts.vnc != "off" {
            programs.push(match opts.profile {
                Profile::X11 => "x11vnc",
                Profile::Wayland => "wayvnc",
            });
        }
        if opts.chromium {
            programs.push("chromium");
        }
        require_programs(&programs);
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_path_buf();
        let mut ports = Ports::new();
        let port = ports.one();
        let display_base = free_display_base(u16::from(opts.screens));
        let vnc_port_base = ports.range(u16::from(opts.screens));
        let devtools_port_base = ports.range(u16::from(opts.screens));
        let bridge_port = ports.one();
        let viewer_port = ports.one();
        drop(ports);
        let secret = format!("test-secret-{}-{}", std::process::id(), port);
        let onoff = |b: bool| if b { "on" } else { "off" };
        // Outside the home directory, which sway's user cannot enter.
        let wayland_dir = PathBuf::from(format!("/tmp/holm-wl-test-{}-{port}", std::process::id()));
        let log = std::fs::File::create(home.join("guest.log")).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_holm-guest"))
            .env("HOLM_BOX_SECRET", &secret)
            .env("HOLM_GUEST_ADDR", format!("127.0.0.1:{port}"))
            .env("HOLM_BRIDGE_ADDR", format!("127.0.0.1:{bridge_port}"))
            .env("HOLM_VIEWER_ADDR", format!("127.0.0.1:{viewer_port}"))
            .env("HOLM_VIEWER_GRACE_SECS", "2")
            .env("HOLM_SCREENS", opts.screens.to_string())
            .env("HOLM_SCREEN_SIZES", &opts.sizes)
            .env("HOLM_DISPLAY_BASE", display_base.to_string())
            .env("HOLM_VNC_PORT_BASE", vnc_port_base.to_string())
            .env("HOLM_DEVTOOLS_PORT_BASE", devtools_port_base.to_string())
            .env("HOLM_CHROMIUM", onoff(opts.chromium))
            .env("HOLM_VNC", opts.vnc)
            .env("HOLM_HOME", &home)
            .env("HOLM_PROFILE", opts.profile.to_string())
            .env("HOLM_WAYLAND_DIR", &wayland_dir)
            .env("RUST_LOG", "holm_guest=debug")
            .envs(opts.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start holm-guest");
        let guest = Self {
            url: format!("http://127.0.0.1:{port}"),
            secret,
            http: http_client(),
            display_base,
            vnc_port_base,
            devtools_port_base,
            bridge_url: format!("http://127.0.0.1:{bridge_port}"),
            viewer_url: format!("http://127.0.0.1:{viewer_port}"),
            home,
            profile: opts.profile,
            wayland_dir,
            child,
            _dir: dir,
        };
        // The desktop is its display server and window manager: input sent
        // while fluxbox still starts can be lost (a wheel click 35 ms after
        // the test's window mapped never reached it, one run in ten after a
        // test that restarted its X server), so no test acts before both.
        let desktop = guest.desktop_components();
        guest
            .wait_until(Duration::from_secs(30), |h| {
                h["components"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|c| desktop.iter().any(|d| c["name"] == *d))
                    .all(|c| c["state"] == "ready")
            })
            .await;
        guest
    }

    /// The components a screen's desktop is made of: the display server and
    /// the window manager (sway is both).
    pub fn desktop_components(&self) -> &'static [&'static str] {
        match self.profile {
            Profile::X11 => &["xvfb", "fluxbox"],
            Profile::Wayland => &["sway"],
        }
    }

    /// The component that is the display server: `xvfb` or `sway`.
    pub fn display_server(&self) -> &'static str {
        match self.profile {
            Profile::X11 => "xvfb",
            Profile::Wayland => "sway",
        }
    }

    /// Wayland: the compositor's socket.
    pub fn wayland_socket(&self) -> PathBuf {
        self.wayland_dir.join("wayland-1")
    }

    /// How screen `i` is named in the box: `:N` or `HEADLESS-N`.
    pub fn screen_name(&self, i: u8) -> String {
        match self.profile {
            Profile::X11 => self.display(i),
            Profile::Wayland => format!("HEADLESS-{}", i + 1),
        }
    }

    /// Polls `/health` until `pred` holds, or panics with the guest's log.
    pub async fn wait_until(
        &self,
        timeout: Duration,
        pred: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let deadline = Instant::now() + timeout;
        let mut last = serde_json::Value::Null;
        while Instant::now() < deadline {
            if let Ok(r) = self.http.get(format!("{}/health", self.url)).send().await
                && let Ok(h) = r.json::<serde_json::Value>().await
            {
                if pred(&h) {
                    return h;
                }
                last = h;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!(
            "guest did not reach the state in {timeout:?}; last health: {last}\nlog:\n{}",
            self.log()
        );
    }

    /// The guest's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The guest's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.home.join("guest.log")).unwrap_or_default()
    }

    /// The X display name of screen `i`.
    pub fn display(&self, i: u8) -> String {
        format!(":{}", self.display_base + u16::from(i))
    }

    /// A request with the secret.
    pub fn req(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http.request(method, format!("{}{path}", self.url)).bearer_auth(&self.secret)
    }

    /// GET with the secret.
    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.req(reqwest::Method::GET, path)
    }

    /// POST with the secret.
    pub fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.req(reqwest::Method::POST, path)
    }

    /// PUT with the secret.
    pub fn put(&self, path: &str) -> reqwest::RequestBuilder {
        self.req(reqwest::Method::PUT, path)
    }

    /// Starts an X client on screen `i` (outside the guest) that ends with the test.
    pub fn x_client(&self, i: u8, program: &str, args: &[&str]) -> XClient {
        require_programs(&[program]);
        let child = Command::new(program)
            .args(args)
            .env("DISPLAY", self.display(i))
            .env("HOME", &self.home)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {program}: {e}"));
        XClient(child)
    }
}

impl Guest {
    /// Stops the guest as a container engine would (SIGTERM), and waits
    /// (10 s, Docker's grace) before killing it. Answers whether it ended by
    /// itself. Its home directory stays until the handle drops.
    pub fn terminate(&mut self) -> bool {
        // SAFETY: kill takes plain integers.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        false
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        // SIGTERM lets the guest stop its desktop; then make sure.
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            self.terminate();
        }
        let _ = std::fs::remove_dir_all(&self.wayland_dir);
    }
}

/// An X client started by a test; killed on drop.
#[derive(Debug)]
pub struct XClient(pub Child);

impl Drop for XClient {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Polls `f` until it returns `Some`, or panics after `timeout`.
pub async fn eventually<T, F, Fut>(timeout: Duration, what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out after {timeout:?} waiting for {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// A tiny web server on loopback that answers each path from a fixed table
/// (HTML), and 404 otherwise; it ends with the test.
#[derive(Debug)]
pub struct Site {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Site {
    /// Serves `pages` (path, HTML).
    pub async fn start(pages: &[(&str, &str)]) -> Self {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let pages: std::collections::HashMap<String, String> =
            pages.iter().map(|(p, h)| ((*p).to_owned(), (*h).to_owned())).collect();
        let pages = std::sync::Arc::new(pages);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut tcp, _)) = listener.accept().await else { return };
                let pages = std::sync::Arc::clone(&pages);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                        match tcp.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&buf);
                    let path = head.split_whitespace().nth(1).unwrap_or("/");
                    let path = path.split('?').next().unwrap_or("/");
                    let (status, body) = match pages.get(path) {
                        Some(b) => ("200 OK", b.clone()),
                        None => ("404 Not Found", "<title>404</title>".to_owned()),
                    };
                    let response = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = tcp.write_all(response.as_bytes()).await;
                });
            }
        });
        Self { url, task }
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        self.task.abort();
    }
}
