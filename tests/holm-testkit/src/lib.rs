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
//!   with a token, its own store and its own server name; on drop it removes
//!   every box labelled with its name.
//! - [`services`]: real PostgreSQL and S3 servers for the store tests.
//! - [`node_clients`]: the Node.js clients no one at holm wrote (the
//!   official MCP TypeScript SDKs and `playwright-core`, which only connects
//!   and downloads no browser), installed once with `npm ci` into
//!   `tests/holm-e2e/node`.
//! - [`SERVE_PL`]: a static web server for pages inside a box, so browser
//!   tests need no outside web.
//! - [`mcp`]: a real MCP client and the scenario every MCP transport runs.

pub mod services;

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
    init_tracing();
    true
}

fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("holm=info,holmd=info")),
        )
        .with_test_writer()
        .try_init();
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

/// Makes sure the default box image exists on the local engine (making the
/// base image first if needed) and answers its tag.
pub async fn ensure_image() -> String {
    let _lock = FileLock::acquire(".holm_e2e_image.lock");
    let rt = DockerRuntime::connect("docker").expect("docker");
    let mut progress = |p: holm::image::Progress| eprintln!("[image] {p:?}");
    rt.make_base(&mut progress).await.expect("make the base image");
    let request = holm::image::ImageRequest::default();
    rt.prepare_image(&request, &mut progress).await.expect("build the box image")
}

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
        let dir = tempfile::tempdir().expect("tempdir");
        let token = format!("test-token-{}", holm::ids::new_secret());
        let state_dir = dir.path().join("state");
        let mut config = holmd::config::ServerConfig {
            addr: ([127, 0, 0, 1], 0).into(),
            token: Some(token.clone()),
            state_dir: state_dir.clone(),
            runtimes: Some(vec!["docker".into()]),
            public_url: None,
            storage: holmd::store::StoreConfig::Local { dir: state_dir.clone() },
            server_name: unique_server_name(),
            config_file: None,
            secret_key: None,
            secret_file: None,
            sandboxes: Vec::new(),
        };
        change(&mut config);
        let (url, service, task) = serve(&config, &token).await;
        let client = Client::new(&url, Some(&token));
        Self { client, url, token, state_dir, config, service, _dir: dir, task }
    }

    /// Stops this server as a crash would (its task ends; nothing is
    /// flushed) and starts another with the same configuration, on a new
    /// port. The boxes stay.
    pub async fn restart(&mut self) {
        self.task.abort();
        let _ = (&mut self.task).await;
        let (url, service, task) = serve(&self.config, &self.token).await;
        self.client = Client::new(&url, Some(&self.token));
        self.url = url;
        self.service = service;
        self.task = task;
    }
}

async fn serve(
    config: &holmd::config::ServerConfig,
    token: &str,
) -> (String, std::sync::Arc<holmd::service::Service>, tokio::task::JoinHandle<()>) {
    let service = holmd::service(config).await.expect("start the service");
    let listener = tokio::net::TcpListener::bind(config.addr).await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let task_token = token.to_owned();
    let task_service = std::sync::Arc::clone(&service);
    let task = tokio::spawn(async move {
        let _ =
            holmd::serve(listener, task_service, Some(task_token), std::future::pending()).await;
    });
    (url, service, task)
}

/// Removes every container labelled with `server_name`.
pub async fn remove_server_boxes(server_name: &str) {
    let Ok(docker) = DockerRuntime::connect("docker") else { return };
    let Ok(machines) = docker.list().await else { return };
    for m in machines {
        if m.labels.get(holm::runtime::LABEL_SERVER).map(String::as_str) == Some(server_name) {
            let _ = docker.remove(&m.id).await;
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
        // Remove every box this server made, whatever the test did.
        let name = self.config.server_name.clone();
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                return;
            };
            rt.block_on(remove_server_boxes(&name));
        })
        .join();
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
