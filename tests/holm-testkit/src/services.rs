//! Real storage servers for the store tests, each its own process on a
//! loopback port, made fresh for one test and ended when dropped:
//!
//! - [`Postgres`]: Debian's PostgreSQL (`initdb` and `postgres` from the
//!   `postgresql` package, which `.ci/setup` installs), in a temporary
//!   directory, trusting loopback connections; run as the `postgres` user
//!   when the tests run as root, since PostgreSQL refuses root.
//! - [`S3`]: moto's S3 server (`moto_server`, from PyPI, which `.ci/setup`
//!   installs into `/opt/holm-ci/s3`), a separate Python process that speaks
//!   the S3 REST API.
//!
//! Where a program is missing, a test is skipped with a message, except
//! under `CI` or `HOLM_E2E`, where it fails: CI never skips silently.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn required() -> bool {
    std::env::var_os("CI").is_some() || std::env::var_os("HOLM_E2E").is_some()
}

fn skip<T>(what: &str) -> Option<T> {
    assert!(!required(), "{what} (run .ci/setup, which installs it)");
    eprintln!("skipping: {what}; run .ci/setup to install it");
    None
}

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn wait_for_port(port: u16, child: &mut Child, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited before it listened: {status}");
        }
        assert!(Instant::now() < deadline, "{what} did not listen on port {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|p| p.join(name)).find(|p| p.is_file()))
}

/// A PostgreSQL server of its own.
#[derive(Debug)]
pub struct Postgres {
    /// `postgres://holm@127.0.0.1:PORT/postgres`.
    pub url: String,
    child: Child,
    dir: PathBuf,
}

fn postgres_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HOLM_TEST_POSTGRES_BIN") {
        return Some(PathBuf::from(p));
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("bin"))
        .filter(|p| p.join("postgres").is_file() && p.join("initdb").is_file())
        .collect();
    found.sort();
    found.pop()
}

/// The uid and gid of the `postgres` user, when we are root.
fn postgres_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid takes nothing and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.first() == Some(&"postgres") && f.len() > 3)
            .then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))
            .flatten()
    })
}

fn as_postgres(bin: &Path, user: Option<(u32, u32)>) -> Command {
    match user {
        Some((uid, gid)) => {
            let mut c = Command::new("setpriv");
            c.arg(format!("--reuid={uid}"))
                .arg(format!("--regid={gid}"))
                .arg("--clear-groups")
                .arg(bin);
            c
        }
        None => Command::new(bin),
    }
}

impl Postgres {
    /// Starts a fresh server, or `None` (outside CI) when PostgreSQL is not
    /// installed.
    pub fn start() -> Option<Self> {
        let Some(bin) = postgres_bin() else {
            return skip("PostgreSQL's server programs are not installed");
        };
        let user = postgres_user();
        if std::env::var_os("HOLM_TEST_POSTGRES_BIN").is_none()
            && user.is_none()
            // SAFETY: as above.
            && unsafe { libc::geteuid() } == 0
        {
            return skip("the postgres user does not exist");
        }
        let dir = std::env::temp_dir().join(format!("holm-pg-{}", holm::ids::new_secret()));
        std::fs::create_dir_all(&dir).unwrap();
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).unwrap();
        }
        let data = dir.join("data");
        let out = as_postgres(&bin.join("initdb"), user)
            .args(["-D"])
            .arg(&data)
            .args(["-U", "holm", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"])
            .stdout(Stdio::null())
            .output()
            .expect("run initdb");
        assert!(out.status.success(), "initdb: {}", String::from_utf8_lossy(&out.stderr));
        let port = free_port();
        let mut child = as_postgres(&bin.join("postgres"), user)
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-k"])
            .arg(&dir)
            .args(["-c", "listen_addresses=127.0.0.1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start postgres");
        wait_for_port(port, &mut child, "postgres");
        // It listens before it takes connections: wait until it answers.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = Command::new(bin.join("pg_isready"))
                .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "holm", "-d", "postgres"])
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                break;
            }
            assert!(Instant::now() < deadline, "postgres did not take connections");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Self { url: format!("postgres://holm@127.0.0.1:{port}/postgres"), child, dir })
    }

    /// The store configuration for it.
    pub fn store(&self) -> holmd::store::StoreConfig {
        holmd::store::StoreConfig::Postgres { url: self.url.clone() }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// An S3-compatible server of its own (moto).
#[derive(Debug)]
pub struct S3 {
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
    child: Child,
}

fn moto_server() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HOLM_TEST_MOTO_SERVER") {
        return Some(PathBuf::from(p));
    }
    let ci = PathBuf::from("/opt/holm-ci/s3/bin/moto_server");
    if ci.is_file() {
        return Some(ci);
    }
    which("moto_server")
}

impl S3 {
    /// Starts a fresh server, or `None` (outside CI) when moto is not
    /// installed.
    pub fn start() -> Option<Self> {
        let Some(bin) = moto_server() else {
            return skip("moto_server (pip install 'moto[s3]' flask flask-cors) is not installed");
        };
        let port = free_port();
        let mut child = Command::new(bin)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start moto_server");
        wait_for_port(port, &mut child, "moto_server");
        Some(Self { endpoint: format!("http://127.0.0.1:{port}"), child })
    }

    /// The store configuration for a new bucket on it.
    pub fn store(&self) -> holmd::store::StoreConfig {
        let bucket = format!("holm-{}", &holm::ids::new_secret()[..12]);
        holmd::store::StoreConfig::S3(holmd::store::s3::S3Config {
            endpoint: self.endpoint.clone(),
            bucket,
            region: "us-east-1".into(),
            prefix: "test/".into(),
            path_style: true,
            access_key_id: "holm-test".into(),
            secret_access_key: "holm-test-secret".into(),
            session_token: None,
        })
    }
}

impl Drop for S3 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
