//! The `holmd` binary in a test, as an operator runs it: its environment,
//! its log (standard output and error) in a file, a server name of its own;
//! when dropped it is stopped, its secrets are looked for in its log, its
//! store and its boxes' container logs (`holm_testkit::leaks`), and every
//! box it made is removed, whatever the test did.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The environment that points holmd at `storage`.
pub fn store_env(storage: &holmd::store::StoreConfig) -> Vec<(String, String)> {
    use holmd::store::StoreConfig;
    let mut env = vec![("HOLM_STORAGE_BACKEND".to_owned(), storage.backend().to_owned())];
    match storage {
        StoreConfig::Local { dir } => {
            env.push(("HOLM_STATE_DIR".into(), dir.display().to_string()))
        }
        StoreConfig::Sqlite { path } => {
            env.push(("HOLM_SQLITE_PATH".into(), path.display().to_string()));
        }
        StoreConfig::Postgres { url } => env.push(("HOLM_DATABASE_URL".into(), url.clone())),
        StoreConfig::S3(c) => {
            env.extend([
                ("HOLM_S3_ENDPOINT".into(), c.endpoint.clone()),
                ("HOLM_S3_BUCKET".into(), c.bucket.clone()),
                ("HOLM_S3_PREFIX".into(), c.prefix.clone()),
                ("HOLM_S3_ACCESS_KEY_ID".into(), c.access_key_id.clone()),
                ("HOLM_S3_SECRET_ACCESS_KEY".into(), c.secret_access_key.clone()),
            ]);
        }
    }
    env
}

/// A running holmd.
pub struct Holmd {
    child: Child,
    /// Its URL, on a free loopback port.
    pub url: String,
    /// The file its standard output and error go to.
    pub log: PathBuf,
    /// Its server name (`HOLM_SERVER_NAME`), which labels its boxes.
    pub name: String,
    /// The environment it was started with.
    env: Vec<(String, String)>,
}

impl Holmd {
    /// Starts holmd with `env` (on top of a free loopback address and a
    /// server name of its own), writing its output to `dir/holmd.log`, and
    /// waits for it to answer.
    pub async fn start(dir: &Path, env: &[(&str, &str)]) -> Self {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let log = dir.join("holmd.log");
        let out = std::fs::File::create(&log).unwrap();
        let mut c = Command::new(env!("CARGO_BIN_EXE_holmd"));
        let name = holm_testkit::unique_server_name();
        c.env("HOLM_SERVER_ADDR", format!("127.0.0.1:{port}"))
            .env("HOLM_SERVER_NAME", &name)
            .env_remove("HOLM_SERVER_CONFIG")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out);
        for (k, v) in env {
            c.env(k, v);
        }
        let child = c.spawn().expect("start holmd");
        let env = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let holmd = Self { child, url: format!("http://127.0.0.1:{port}"), log, name, env };
        let http = holm_client::client_builder().no_proxy().build().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while http.get(format!("{}/v1/health", holmd.url)).send().await.is_err() {
            assert!(Instant::now() < deadline, "holmd did not answer: {}", holmd.log_text());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        holmd
    }

    /// What it has written so far.
    pub fn log_text(&self) -> String {
        String::from_utf8_lossy(&std::fs::read(&self.log).unwrap_or_default()).into_owned()
    }

    /// Whether the process is still running (it has not crashed).
    pub fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Stops it with SIGINT, as the unit does, and answers its exit status.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        // SAFETY: kill takes plain integers.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "holmd did not stop on SIGINT");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Holmd {
    /// What the scan when it ends looks for and where: the token and
    /// server key of its environment and every secret of the box records
    /// in its store, in its log and its store's files but the box records.
    fn scan(&self) -> holm_testkit::leaks::Scan {
        let mut scan = holm_testkit::leaks::Scan::default();
        let env = |k: &str| self.env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        if let Some(token) = env("HOLM_SERVER_TOKEN") {
            scan.secret("the server token", token);
        }
        if let Some(key) = env("HOLM_SERVER_SECRET_KEY") {
            scan.secret("the server key", key);
        }
        if let Some(state) = env("HOLM_STATE_DIR").map(PathBuf::from) {
            for entry in std::fs::read_dir(state.join("boxes")).into_iter().flatten().flatten() {
                let record = std::fs::read(entry.path()).ok();
                if let Some(r) = record.and_then(|b| serde_json::from_slice(&b).ok()) {
                    scan.record(&r);
                }
            }
            scan.store_dir(&state);
        }
        scan.file_from(&self.log, 0);
        scan
    }
}

impl Drop for Holmd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Look for its secrets in what it wrote (not when the test already
        // failed: a second panic would abort the process).
        let mut scan = (!std::thread::panicking()).then(|| self.scan());
        let name = self.name.clone();
        let scanned = std::thread::spawn(move || {
            if let Some(scan) = &mut scan {
                scan.container_logs(&name);
            }
            if let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() {
                rt.block_on(holm_testkit::remove_server_boxes(&name));
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

/// The ids of the boxes whose containers on Docker are labelled with the
/// server name `name`, sorted, one per container.
#[allow(dead_code)] // Not every test binary that includes this module looks.
pub async fn labelled_boxes(name: &str) -> Vec<String> {
    use holm::runtime::Runtime;
    let docker = holm::runtime::docker::DockerRuntime::connect("docker").unwrap();
    let mut ids: Vec<String> = docker
        .list()
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.labels.get(holm::runtime::LABEL_SERVER).map(String::as_str) == Some(name))
        .filter_map(|m| m.box_id)
        .collect();
    ids.sort();
    ids
}
