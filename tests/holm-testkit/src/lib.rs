//! The end-to-end harness.
//!
//! - [`e2e_enabled`]: the gate. Without `HOLM_E2E` or `CI`, end-to-end tests
//!   print a message and return. With either, a Docker engine that does not
//!   answer **fails** the test: CI never skips silently. When the tests run,
//!   `target/.holm_e2e_cookie` is written as proof.
//! - [`ensure_image`]: the box image, built once for all test processes (a
//!   file lock serialises them), with the air-gapped base made first when
//!   `debian:bookworm-slim` is missing.
//! - [`TestServer`]: a real holmd in the test process on a loopback port,
//!   with a token, its own store and its own server name; on drop it looks
//!   for its secrets in what it and its boxes wrote ([`leaks`]) and removes
//!   every box labelled with its name.
//! - [`services`]: real PostgreSQL and S3 servers for the store tests.
//! - [`node_clients`]: the Node.js clients no one at holm wrote (the
//!   official MCP TypeScript SDKs and `playwright-core`, which only connects
//!   and downloads no browser), installed once with `npm ci` into
//!   `tests/holm-e2e/node`.
//! - [`SERVE_PL`]: a static web server for pages inside a box, so browser
//!   tests need no outside web.
//! - [`mcp`]: a real MCP client and the scenario every MCP transport runs.
//! - [`gate`]: a runtime whose boxes are reached through a proxy that wants
//!   a header, as a cloud vendor's are.
//! - [`cloud`]: boxes at cloud vendors, against the vendors' stand-ins.
//! - [`matrix`]: one suite, many runtimes and display profiles: a scenario
//!   written once, a test of it per runtime and profile ([`suite!`]).
//! - [`load`]: busy loops on every CPU, for tests that must hold on a
//!   saturated machine.
//! - [`workspace`]: what each crate links, from `cargo metadata`.

pub mod cloud;
pub mod desk;
pub mod gate;
pub mod kube;
pub mod leaks;
pub mod live;
pub mod load;
pub mod matrix;
pub mod rfb;
pub mod services;
pub mod twisted;
pub mod workspace;

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use holm::runtime::Runtime;
use holm::runtime::docker::DockerRuntime;
use holm_client::Client;

pub mod mcp;

/// Whether end-to-end tests should run. Panics when they should run but
/// Docker does not answer.
pub async fn e2e_enabled() -> bool {
    let wanted = std::env::var_os("HOLM_E2E").is_some() || std::env::var_os("CI").is_some();
    if std::env::var_os("HOLM_SKIP_E2E").is_some() && std::env::var_os("CI").is_none() {
        eprintln!("skipping e2e: HOLM_SKIP_E2E is set");
        return false;
    }
    if !wanted {
        eprintln!("skipping e2e: set HOLM_E2E=1 to run the end-to-end tests against Docker");
        return false;
    }
    let rt = DockerRuntime::connect("docker")
        .unwrap_or_else(|e| panic!("end-to-end tests need Docker: {e}"));
    if let Err(e) = rt.ping().await {
        panic!(
            "end-to-end tests need a Docker engine that answers (start dockerd, or run .ci/run): {e}"
        );
    }
    let _ = std::fs::write(target_dir().join(".holm_e2e_cookie"), b"e2e ran\n");
    leaks::init_tracing();
    true
}

/// The workspace's `target` directory.
pub fn target_dir() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = manifest
        .parent()
        .and_then(|p| p.parent())
        .map_or_else(|| PathBuf::from("target"), |w| w.join("target"));
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// An exclusive lock on a file, held until dropped; it orders test processes.
struct FileLock(File);

impl FileLock {
    fn acquire(name: &str) -> Self {
        let file = File::create(target_dir().join(name)).expect("create a lock file in target/");
        // SAFETY: flock takes a valid open descriptor and an integer flag.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        assert_eq!(rc, 0, "flock: {}", std::io::Error::last_os_error());
        Self(file)
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // SAFETY: as above; unlocking a held lock.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Makes sure the default box image exists on the local Docker engine
/// (making the base image first if needed) and answers its tag.
pub async fn ensure_image() -> String {
    ensure_image_of(Profile::X11).await
}

/// Makes sure the plain box image of the `display` profile exists on the
/// local Docker engine, built once for all test processes, and answers its
/// tag.
pub async fn ensure_image_of(display: Profile) -> String {
    matrix::ensure_image_on(matrix::Engine::Docker, display).await
}

pub use holm_proto::guest::Profile;

/// A holmd in the test process.
#[derive(Debug)]
pub struct TestServer {
    /// A client with the right token.
    pub client: Client,
    /// The server's URL.
    pub url: String,
    /// The token.
    pub token: String,
    /// The state directory.
    pub state_dir: PathBuf,
    /// The configuration it runs with.
    pub config: holmd::config::ServerConfig,
    /// The service, to look inside.
    pub service: std::sync::Arc<holmd::service::Service>,
    /// The one runtime it offers instead of discovering them, when it was
    /// started with [`TestServer::start_on`].
    runtime: Option<std::sync::Arc<dyn holm::runtime::Runtime>>,
    /// What lives as long as the server (a runtimes file's directory).
    kept: Vec<Box<dyn std::any::Any + Send>>,
    /// Secrets it was given that it does not keep in its records (vendor
    /// keys), for the scan when it ends.
    remembered: Vec<(String, String)>,
    /// The process's log file and where this server's part of it starts.
    log_from: Option<(PathBuf, u64)>,
    _dir: tempfile::TempDir,
    task: tokio::task::JoinHandle<()>,
}

/// A server name no other test uses, so each server takes back only its
/// own boxes from the shared engine.
pub fn unique_server_name() -> String {
    format!("test-{}", &holm::ids::new_secret()[..16])
}

impl TestServer {
    /// Starts a server with the docker runtime and the local store, after
    /// making sure the image exists.
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// Starts a server, with its configuration changed by `change` first.
    pub async fn start_with(change: impl FnOnce(&mut holmd::config::ServerConfig)) -> Self {
        ensure_image().await;
        Self::start_without_image(change).await
    }

    /// Starts a server without building the box image first: for tests that
    /// start no box.
    pub async fn start_without_image(
        change: impl FnOnce(&mut holmd::config::ServerConfig),
    ) -> Self {
        Self::start_inner(change, None).await
    }

    /// Starts a server whose one runtime, and so its default, is `runtime`,
    /// after making sure the image exists.
    pub async fn start_on(runtime: std::sync::Arc<dyn holm::runtime::Runtime>) -> Self {
        ensure_image().await;
        Self::start_inner(|_| {}, Some(runtime)).await
    }

    async fn start_inner(
        change: impl FnOnce(&mut holmd::config::ServerConfig),
        runtime: Option<std::sync::Arc<dyn holm::runtime::Runtime>>,
    ) -> Self {
        leaks::init_tracing();
        let log_from = leaks::log_offset();
        let dir = tempfile::tempdir().expect("tempdir");
        let token = format!("test-token-{}", holm::ids::new_secret());
        let state_dir = dir.path().join("state");
        let mut config = holmd::config::ServerConfig {
            addr: ([127, 0, 0, 1], 0).into(),
            token: Some(token.clone()),
            exposure: holmd::config::Exposure::Token,
            state_dir: state_dir.clone(),
            runtimes: Some(vec!["docker".into()]),
            public_url: None,
            storage: holmd::store::StoreConfig::Local { dir: state_dir.clone() },
            shared_store: false,
            server_name: unique_server_name(),
            config_file: None,
            secret_key: None,
            secret_file: None,
            sandboxes: Vec::new(),
            limits: holmd::service::Limits::default(),
        };
        change(&mut config);
        let (url, service, task) = serve(&config, &token, runtime.clone()).await;
        let client = Client::new(&url, Some(&token));
        Self {
            client,
            url,
            token,
            state_dir,
            config,
            service,
            runtime,
            kept: Vec::new(),
            remembered: Vec::new(),
            log_from,
            _dir: dir,
            task,
        }
    }

    /// Keeps `thing` (a directory, a stand-in) alive as long as the server.
    pub fn keep(&mut self, thing: impl std::any::Any + Send) {
        self.kept.push(Box::new(thing));
    }

    /// Has the scan when the server ends look for `value` too, called
    /// `kind` in a finding: a secret the server was given but keeps only
    /// sealed (a vendor key).
    pub fn remember(&mut self, kind: &str, value: &str) {
        self.remembered.push((kind.to_owned(), value.to_owned()));
    }

    /// What the scan when it ends looks for and where: its token, server
    /// key, remembered secrets and every secret of its box records (viewer
    /// URLs' tokens too), in its part of the process's log, its store's
    /// files but the box records, and its boxes' container logs.
    fn scan(&self) -> leaks::Scan {
        let mut scan = leaks::Scan::default();
        scan.secret("the server token", &self.token);
        if let Some(key) = &self.config.secret_key {
            scan.secret("the server key", key);
        }
        for (kind, value) in &self.remembered {
            scan.secret(kind.as_str(), value);
        }
        for r in self.service.records() {
            scan.record(&r);
            for grant in self.service.viewers(&r.id, &self.url).unwrap_or_default() {
                if let Some((_, token)) = grant.url.split_once("#token=") {
                    scan.secret(format!("a viewer token of {}", r.id), token);
                }
            }
        }
        if let Some((path, from)) = &self.log_from {
            scan.file_from(path, *from);
        }
        if let holmd::store::StoreConfig::Local { dir } = &self.config.storage {
            scan.store_dir(dir);
        }
        scan
    }

    /// Stops this server as a crash would (its task ends; nothing is
    /// flushed). The boxes stay; [`TestServer::start_again`] starts another.
    pub async fn stop(&mut self) {
        self.task.abort();
        let _ = (&mut self.task).await;
    }

    /// Starts a server with the same configuration, on a new port, after
    /// [`TestServer::stop`].
    pub async fn start_again(&mut self) {
        let (url, service, task) = serve(&self.config, &self.token, self.runtime.clone()).await;
        self.client = Client::new(&url, Some(&self.token));
        self.url = url;
        self.service = service;
        self.task = task;
    }

    /// Stops this server as a crash would (its task ends; nothing is
    /// flushed) and starts another with the same configuration, on a new
    /// port. The boxes stay.
    pub async fn restart(&mut self) {
        self.stop().await;
        self.start_again().await;
    }
}

async fn serve(
    config: &holmd::config::ServerConfig,
    token: &str,
    runtime: Option<std::sync::Arc<dyn holm::runtime::Runtime>>,
) -> (String, std::sync::Arc<holmd::service::Service>, tokio::task::JoinHandle<()>) {
    let service = match runtime {
        None => holmd::service(config).await.expect("start the service"),
        Some(runtime) => {
            let name = runtime.name().to_owned();
            let service = holmd::service::Service::from_parts(holmd::service::Parts {
                runtimes: [(name.clone(), holmd::service::Offered::new(runtime))].into(),
                default_runtime: name,
                store: holmd::store::open(&config.storage).await.expect("open the store"),
                clock: std::sync::Arc::new(holmd::clock::SystemClock),
                server_name: config.server_name.clone(),
                remote_setup: holmd::service::RemoteSetup::default(),
                limits: config.limits,
                shared_store: config.shared_store,
            });
            service.keep_recordings(config.state_dir.join("recordings"));
            service.recover().await.expect("take back the boxes");
            service
        }
    };
    let listener = tokio::net::TcpListener::bind(config.addr).await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let options = holmd::ServeOptions {
        token: Some(token.to_owned()),
        public_url: config.public_url.clone(),
        ..holmd::ServeOptions::default()
    };
    let task_service = std::sync::Arc::clone(&service);
    let task = tokio::spawn(async move {
        let _ = holmd::serve_with(listener, task_service, options, std::future::pending()).await;
    });
    (url, service, task)
}

/// Removes every container labelled with `server_name`, on Docker and on
/// podman (where its service answers).
pub async fn remove_server_boxes(server_name: &str) {
    let engines = [DockerRuntime::connect("docker"), holm::runtime::podman::connect("podman")];
    for engine in engines.into_iter().flatten() {
        let Ok(machines) = engine.list().await else { continue };
        for m in machines {
            if m.labels.get(holm::runtime::LABEL_SERVER).map(String::as_str) == Some(server_name) {
                let _ = engine.remove(&m.id).await;
            }
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
        // Look for its secrets in what it wrote (not when the test already
        // failed: a second panic would abort the process).
        let checking = !std::thread::panicking();
        let mut scan = if checking { Some(self.scan()) } else { None };
        // Remove every box this server made, whatever the test did, after
        // reading their logs.
        let name = self.config.server_name.clone();
        let scanned = std::thread::spawn(move || {
            if let Some(scan) = &mut scan {
                scan.container_logs(&name);
            }
            if let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() {
                rt.block_on(remove_server_boxes(&name));
            }
            let found = scan.map(|s| s.findings()).unwrap_or_default();
            assert!(found.is_empty(), "secrets leaked:\n{}", found.join("\n"));
        })
        .join();
        if let Err(panic) = scanned {
            std::panic::resume_unwind(panic);
        }
    }
}

/// Polls `f` until it returns `Some`, or panics after `timeout` naming `what`.
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
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A static file server for pages inside a box, in Perl (which every Debian
/// image has), so browser tests reach no outside web: `perl serve.pl PORT
/// ROOT` serves ROOT on 127.0.0.1:PORT, one process per connection (Chromium
/// opens speculative connections that send nothing).
pub const SERVE_PL: &str = r#"
use strict; use IO::Socket::INET;
$SIG{CHLD} = 'IGNORE';
my ($port, $root) = @ARGV;
my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Listen => 32, ReuseAddr => 1) or die "listen: $!";
while (1) {
  my $c = $s->accept or next;
  if (fork() == 0) {
    my $line = <$c> // exit 0;
    while (my $h = <$c>) { last if $h =~ /^\r?\n$/ }
    my ($path) = $line =~ m{^[A-Z]+ (/[^ ?#]*)};
    $path = '/index.html' if !defined $path || $path eq '/';
    my $file = "$root$path";
    if ($path !~ /\.\./ && open(my $fh, '<', $file)) {
      local $/; my $body = <$fh>;
      print $c "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: " . length($body) . "\r\nConnection: close\r\n\r\n$body";
    } else {
      print $c "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    }
    close $c; exit 0;
  }
  close $c;
}
"#;

/// Whether a container for `box_id` exists on the local engine.
pub async fn container_exists(box_id: &str) -> bool {
    let docker = DockerRuntime::connect("docker").expect("docker");
    docker.inspect(&holm::runtime::docker::container_name(box_id)).await.is_ok()
}

/// The directory of the end-to-end tests' Node.js clients
/// (`tests/holm-e2e/node`), with their packages installed once for all test
/// processes; fails the test, saying what to install, when Node.js 20 or
/// later or npm is missing.
pub fn node_clients() -> PathBuf {
    mcp::node_dir()
}

#[cfg(test)]
mod load_tests {
    use std::time::{Duration, Instant};

    use super::load::Load;

    #[test]
    fn busy_loops_run_until_dropped_and_end_by_themselves_at_their_limit() {
        let load = Load::start(2, Duration::from_secs(60));
        assert_eq!(load.loops(), 2);
        assert!(!load.ended());
        drop(load);

        let load = Load::start(1, Duration::from_millis(1));
        let deadline = Instant::now() + Duration::from_secs(30);
        while !load.ended() {
            assert!(Instant::now() < deadline, "a busy loop outlived its limit");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
