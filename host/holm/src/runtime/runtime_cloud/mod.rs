//! The Runtime Cloud runtime (`runtime-cloud`): boxes as Runtime Cloud
//! sandboxes (Firecracker microVMs), over its HTTPS API (`/v1`, the key as
//! `Authorization: Bearer`, API version 0.2.0).
//!
//! - **Every change carries an `Idempotency-Key`**, made once per call and
//!   sent again on each retry of it, so a retried create never makes two
//!   sandboxes and a retried command never runs twice (the API answers the
//!   first result again, `Idempotency-Replayed: true`).
//! - **Waiting** is the API's: `Prefer: wait=N` on a change answers once the
//!   sandbox has settled, and `GET /v1/sandboxes/{id}?waitFor=running`
//!   waits for a state without polling.
//! - **Images** come from the images API: the bundled Dockerfile, without
//!   the guest (a Dockerfile build takes at most 1 MiB of files, and the
//!   guest is 12 MB), as a single-stage `dockerfile` source named by its
//!   content (`holm-<hash>`), found again by that name in the list's
//!   cursor pages, and built once. The image's entrypoint is not the
//!   sandbox's first process (the microVM's own agent is), so the guest is
//!   delivered and started at boot: gzipped through
//!   `PUT /v1/sandboxes/{id}/files/content`, put in place with `:exec`, and
//!   started as a background process (`POST /v1/sandboxes/{id}/processes`,
//!   the documented way to run a server that outlives the call), as root
//!   through `sudo` where the sandbox's user (`runtime`) is not, its output
//!   in `/tmp/holm-guest.log`. While a box starts, its guest's process is
//!   read (`GET …/processes/{processId}`): one that ended fails the start at
//!   once, with its exit code and its log's end.
//! - **The deadline is the lease** (`timeoutSeconds`, `onLeaseEnd: "stop"`).
//!   A lease is at most an hour ahead, so a box that lives longer has its
//!   lease renewed with `:extend` by this process ([`leases`]) up to its
//!   deadline: with no server up, the sandbox stops at most an hour later.
//!   A stopped sandbox is gone (Runtime Cloud keeps only a persistent one's
//!   disk), so removing a box stops its sandbox.
//! - **Ports** are private previews: `POST /v1/sandboxes/{id}/previews`
//!   answers each port's HTTPS address and token, sent as
//!   `x-runtime-preview-token`; viewers go through holmd.
//! - **Pause** keeps memory (`:pause`, `:wake` with the next lease).

mod leases;

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use reqwest::{Method, RequestBuilder};
use serde::Deserialize;
use serde_json::json;

use super::remote::{
    Addresses, Auth, GUEST_LOG, GUEST_PATH, Key, NewSandbox, RUNTIME_CLOUD, Recipe, Rest, Retry,
    Sandbox, VResult, Vendor, VendorError, VendorFacts, plain_message,
};
use super::{Endpoint, LABEL_RUNTIME, MachineState};
use crate::image::Progress;
use leases::Leases;

/// Runtime Cloud's API origin, as its SDKs default to.
pub const DEFAULT_API_URL: &str = "https://api.withruntime.com";
/// The header of a private preview's token.
pub const PREVIEW_TOKEN_HEADER: &str = "x-runtime-preview-token";
/// The longest lease the API gives, in seconds (`timeoutSeconds`).
pub const MAX_LEASE_SECS: u64 = 3600;
/// The longest `Prefer: wait` the API honours, in seconds.
const MAX_WAIT_SECS: u64 = 120;
/// Where the guest is uploaded before it is unpacked.
const GUEST_UPLOAD: &str = "/tmp/holm-guest.gz";
/// The disk of each sandbox, in MiB (the desktop image is about 3 GiB).
pub const DISK_MIB: u64 = 10 * 1024;
/// The longest an image build or a sandbox start is waited for.
const BUILD_TIMEOUT: Duration = Duration::from_secs(3600);
const START_TIMEOUT: Duration = Duration::from_secs(600);
const POLL: Duration = Duration::from_secs(1);

/// A Runtime Cloud account's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// The API origin (`RUNTIME_API_URL`); default [`DEFAULT_API_URL`].
    pub api_url: Option<String>,
    /// Which addresses its API and the endpoints it answers may be at:
    /// public only unless allowed ([`holm_client::address`]).
    pub addresses: Addresses,
}

/// The Runtime Cloud adapter.
pub struct RuntimeCloud {
    rest: Rest,
    options: Options,
    /// Each sandbox port's preview URL and token.
    previews: Mutex<HashMap<(String, u16), Preview>>,
    /// The deadlines leases are renewed toward.
    leases: Arc<Leases>,
    /// Each sandbox's guest process, as this process started it.
    guests: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for RuntimeCloud {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeCloud")
            .field("api", &self.rest.base())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// Runtime Cloud's one error shape:
/// `{"error": {code, status, message, hint, details, requestId}}`; the
/// message is kept with the hint, which says what to do.
fn error_body(status: u16, body: &[u8]) -> (Option<String>, String) {
    #[derive(Deserialize)]
    struct Outer {
        error: Inner,
    }
    #[derive(Deserialize)]
    struct Inner {
        code: Option<String>,
        message: Option<String>,
        hint: Option<String>,
    }
    match serde_json::from_slice::<Outer>(body) {
        Ok(Outer { error: Inner { code, message: Some(m), hint } }) => {
            let text = match hint.filter(|h| !h.is_empty()) {
                Some(h) => format!("{m} ({h})"),
                None => m,
            };
            (code, text)
        }
        _ => (None, plain_message(status, body)),
    }
}

#[derive(Debug, Clone, Deserialize)]
struct Preview {
    url: String,
    token: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Image {
    id: String,
    name: Option<String>,
    state: String,
    error: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Detail {
    id: String,
    state: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    expires_at: Option<String>,
    stop_reason: Option<String>,
}

/// A background process, as holm reads it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Process {
    id: String,
    state: String,
    exit_code: Option<i64>,
}

/// A command's answer (`:exec`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Executed {
    exit_code: Option<i64>,
    #[serde(default)]
    stdout: String,
    #[serde(default)]
    stderr: String,
    #[serde(default)]
    timed_out: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page<T> {
    data: Vec<T>,
    next_cursor: Option<String>,
}

/// A Runtime Cloud state in holm's terms. A stopped sandbox is gone: only
/// a persistent one could start again, and holm makes none.
fn state_of(state: &str) -> MachineState {
    match state {
        "running" => MachineState::Running,
        "paused" | "pausing" | "waking" => MachineState::Paused,
        "stopped" | "stopping" | "failed" => MachineState::Gone,
        _ => MachineState::Created,
    }
}

/// Seconds since the epoch of an RFC 3339 time.
fn epoch_of(rfc3339: &str) -> Option<u64> {
    humantime::parse_rfc3339_weak(rfc3339)
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs())
}

/// The layer a Runtime Cloud image adds to the bundled Dockerfile: the
/// sandbox's user, `runtime` (uid 1000, home `/workspace`), and `sudo`
/// without a password, as Runtime Cloud's own image has them ("Who you
/// are": commands run as `runtime`, and `sudo` keeps the proxy's
/// environment). holm's image has neither, and the guest must start as
/// root ([`as_root`]).
const RUNTIME_USER: &str = "\
# Runtime Cloud runs commands as `runtime` (uid 1000) with passwordless sudo.
RUN set -eux; apt-get update; \\
    apt-get install -y --no-install-recommends sudo; \\
    apt-get clean; rm -rf /var/lib/apt/lists/*; \\
    getent passwd 1000 >/dev/null || useradd -u 1000 -m -d /workspace -s /bin/sh runtime; \\
    echo '#1000 ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/runtime; chmod 0440 /etc/sudoers.d/runtime
";

/// A new idempotency key, sent with each try of one change.
fn idempotency_key() -> String {
    format!("holm-{}", crate::ids::new_secret())
}

/// The command that runs `script` as root: directly where the sandbox's
/// user is root, through `sudo` where it is not (Runtime Cloud's `runtime`
/// user has it without a password).
fn as_root(script: &str) -> Vec<String> {
    let quoted = format!("'{}'", script.replace('\'', "'\\''"));
    let line = format!(
        "if [ \"$(id -u)\" = 0 ]; then exec /bin/sh -c {quoted}; else exec sudo -n -E /bin/sh -c {quoted}; fi"
    );
    vec!["/bin/sh".into(), "-c".into(), line]
}

/// A change: `method` on `path`, with `key` as its idempotency key (the
/// same on every try of one change).
fn change(rest: &Rest, method: Method, path: &str, key: &str) -> RequestBuilder {
    rest.request(method, path).header("idempotency-key", key)
}

impl RuntimeCloud {
    /// Runs `script` as root with `:exec`, and fails with its output
    /// unless it ends with 0 within a minute.
    async fn run_as_root(&self, id: &str, what: &str, script: &str) -> VResult<()> {
        let key = idempotency_key();
        let body = json!({ "argv": as_root(script), "timeoutMs": 60_000 });
        let done: Executed = self
            .rest
            .json(what, Retry::Idempotent, |r| {
                change(r, Method::POST, &format!("/v1/sandboxes/{id}:exec"), &key).json(&body)
            })
            .await?;
        match (done.exit_code.unwrap_or(-1), done.timed_out) {
            (0, false) => Ok(()),
            (code, timed_out) => Err(VendorError::answer(
                "runtime-cloud",
                what,
                format!(
                    "exit code {code}{}: {} {}",
                    if timed_out { " (timed out)" } else { "" },
                    done.stdout.trim(),
                    done.stderr.trim()
                ),
            )),
        }
    }

    /// An account with `key`.
    pub fn new(key: &str, options: Options) -> Result<Self, String> {
        let api = options.api_url.clone().unwrap_or_else(|| DEFAULT_API_URL.to_owned());
        reqwest::Url::parse(&api).map_err(|e| format!("api_url {api:?} is not a URL: {e}"))?;
        let addresses = options.addresses;
        let rest =
            Rest::new("runtime-cloud", &api, Key::new(key), Auth::Bearer, error_body, addresses);
        Ok(Self {
            rest,
            options,
            previews: Mutex::default(),
            leases: Arc::default(),
            guests: Mutex::default(),
        })
    }

    /// An account from `RUNTIME_API_KEY` and `RUNTIME_API_URL`.
    pub fn from_env() -> Result<Self, String> {
        let key = std::env::var("RUNTIME_API_KEY")
            .map_err(|_| "RUNTIME_API_KEY is not set".to_owned())?;
        let url = std::env::var("RUNTIME_API_URL").ok().filter(|v| !v.is_empty());
        Self::new(&key, Options { api_url: url, addresses: super::remote::addresses_from_env() })
    }

    fn sandbox(&self, d: Detail) -> Sandbox {
        let ends_at = d.expires_at.as_deref().and_then(epoch_of);
        if let Some(end) = d.labels.get(super::LABEL_EXPIRES).and_then(|v| epoch_of(v)) {
            self.leases.at_least(&d.id, end);
        }
        Sandbox { state: state_of(&d.state), labels: d.labels, ends_at, id: d.id }
    }

    async fn detail(&self, id: &str, wait_for: Option<&str>) -> VResult<Detail> {
        self.rest
            .json("read a sandbox", Retry::Idempotent, |r| {
                let rb = r.request(Method::GET, &format!("/v1/sandboxes/{id}"));
                match wait_for {
                    Some(state) => rb
                        .query(&[("waitFor", state), ("timeoutSeconds", "60")])
                        .timeout(Duration::from_secs(90)),
                    None => rb,
                }
            })
            .await
    }

    /// The image named `name`, if there is one, from the list's pages.
    async fn find_image(&self, name: &str) -> VResult<Option<Image>> {
        let mut cursor: Option<String> = None;
        loop {
            let page: Page<Image> = self
                .rest
                .json("list images", Retry::Idempotent, |r| {
                    let mut q = vec![("limit", "100".to_owned())];
                    if let Some(c) = &cursor {
                        q.push(("cursor", c.clone()));
                    }
                    r.request(Method::GET, "/v1/images").query(&q)
                })
                .await?;
            let mut found: Vec<Image> =
                page.data.into_iter().filter(|i| i.name.as_deref() == Some(name)).collect();
            // A failed build is passed over for one that is not.
            found.sort_by_key(|i| i.state == "failed");
            if let Some(i) = found.into_iter().next() {
                return Ok(Some(i));
            }
            match page.next_cursor.filter(|c| !c.is_empty()) {
                Some(c) => cursor = Some(c),
                None => return Ok(None),
            }
        }
    }

    /// Waits until an image is ready.
    async fn wait_image(
        &self,
        mut image: Image,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> VResult<String> {
        let started = Instant::now();
        let mut last = String::new();
        loop {
            if image.state != last {
                progress(Progress::Status(format!(
                    "Runtime Cloud image {}: {}",
                    image.id, image.state
                )));
                last.clone_from(&image.state);
            }
            match image.state.as_str() {
                "ready" => return Ok(image.id),
                "failed" => {
                    let why = match image.error {
                        Some(serde_json::Value::String(s)) => s,
                        Some(serde_json::Value::Object(o)) => o
                            .get("message")
                            .and_then(|m| m.as_str())
                            .unwrap_or("its build failed")
                            .to_owned(),
                        _ => "its build failed".to_owned(),
                    };
                    return Err(VendorError::answer("runtime-cloud", "build the image", why));
                }
                _ if started.elapsed() > BUILD_TIMEOUT => {
                    return Err(VendorError::answer(
                        "runtime-cloud",
                        "build the image",
                        "the build took longer than an hour",
                    ));
                }
                _ => tokio::time::sleep(POLL).await,
            }
            let id = image.id.clone();
            image = self
                .rest
                .json("read an image", Retry::Idempotent, |r| {
                    r.request(Method::GET, &format!("/v1/images/{id}"))
                })
                .await?;
        }
    }

    async fn preview(&self, id: &str, port: u16) -> VResult<Preview> {
        let cache = (id.to_owned(), port);
        if let Some(p) = self.previews.lock().unwrap_or_else(|e| e.into_inner()).get(&cache) {
            return Ok(p.clone());
        }
        // A preview made before (by this server before a restart) is
        // found, and its token renewed: a read does not answer the token,
        // and the documentation leaves open what a second share answers.
        let path = format!("/v1/sandboxes/{id}/previews/{port}");
        let found: VResult<Preview> = self
            .rest
            .json("read a preview", Retry::Idempotent, |r| r.request(Method::GET, &path))
            .await;
        let key = idempotency_key();
        let p: Preview = match found {
            Ok(p) if p.token.is_some() => p,
            Ok(_) => {
                self.rest
                    .json("renew a preview's token", Retry::Idempotent, |r| {
                        change(r, Method::POST, &format!("{path}:rotate"), &key)
                    })
                    .await?
            }
            Err(e) if e.status == Some(404) => {
                self.rest
                    .json("share a port", Retry::Idempotent, |r| {
                        change(r, Method::POST, &format!("/v1/sandboxes/{id}/previews"), &key)
                            .json(&json!({ "port": port, "visibility": "private" }))
                    })
                    .await?
            }
            Err(e) => return Err(e),
        };
        self.previews.lock().unwrap_or_else(|e| e.into_inner()).insert(cache, p.clone());
        Ok(p)
    }
}

/// The guest, gzipped once per process, for the upload.
fn guest_gz() -> &'static [u8] {
    static GZ: OnceLock<Vec<u8>> = OnceLock::new();
    GZ.get_or_init(|| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(crate::image::GUEST_BINARY).expect("a gzip in memory");
        gz.finish().expect("a gzip in memory")
    })
}

#[async_trait]
impl Vendor for RuntimeCloud {
    fn facts(&self) -> &'static VendorFacts {
        &RUNTIME_CLOUD
    }

    fn addresses(&self) -> Addresses {
        self.rest.addresses()
    }

    fn key(&self) -> &Key {
        self.rest.key()
    }

    async fn ping(&self) -> VResult<()> {
        self.rest.ping("/v1/sandboxes").await
    }

    async fn image(
        &self,
        recipe: &Recipe,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> VResult<String> {
        let dockerfile = format!("{}{RUNTIME_USER}", recipe.dockerfile_without_guest());
        let name = recipe.name_for(&[dockerfile.as_bytes()]);
        // The key is the image's name, so a retried call builds once; a
        // build again after a failed one needs a key of its own, or Runtime
        // Cloud replays the failed build's answer for 24 hours.
        let mut key = format!("holm-image-{name}");
        if let Some(found) = self.find_image(&name).await? {
            if found.state == "ready" {
                progress(Progress::Reused { tag: found.id.clone() });
                return Ok(found.id);
            }
            if found.state != "failed" {
                let id = self.wait_image(found, progress).await?;
                progress(Progress::Built { tag: id.clone() });
                return Ok(id);
            }
            progress(Progress::Status(format!("image {name} failed before; building it again")));
            key = format!("holm-image-{name}-after-{}", found.id);
        }
        progress(Progress::Status(format!(
            "building Runtime Cloud image {name}; the first box waits for it"
        )));
        let body = json!({ "name": name, "dockerfile": dockerfile });
        let image: Image = self
            .rest
            .json("build an image", Retry::Idempotent, |r| {
                change(r, Method::POST, "/v1/images", &key).json(&body)
            })
            .await?;
        let id = self.wait_image(image, progress).await?;
        progress(Progress::Built { tag: id.clone() });
        Ok(id)
    }

    async fn create(&self, new: &NewSandbox) -> VResult<Sandbox> {
        let body = json!({
            "name": new.box_id,
            "labels": new.labels,
            "image": new.image,
            "vcpu": new.resources.cpus,
            "memoryMiB": new.resources.memory_mib,
            "diskMiB": DISK_MIB,
            "timeoutSeconds": new.deadline_secs.clamp(1, MAX_LEASE_SECS),
            "onLeaseEnd": "stop",
        });
        // One key per box: a try after a failure answers the first result.
        let key = format!("holm-create-{}", new.box_id);
        let created: Detail = self
            .rest
            .json("create a sandbox", Retry::NotTwice, |r| {
                change(r, Method::POST, "/v1/sandboxes", &key)
                    .header("prefer", format!("wait={MAX_WAIT_SECS}"))
                    .timeout(Duration::from_secs(MAX_WAIT_SECS + 30))
                    .json(&body)
            })
            .await?;
        let id = created.id.clone();
        self.leases.set(&id, leases::now() + new.deadline_secs);
        let started = Instant::now();
        let mut d = created;
        loop {
            match d.state.as_str() {
                "running" => {
                    self.leases.start(&self.rest);
                    return Ok(self.sandbox(d));
                }
                "stopped" | "stopping" | "failed" => {
                    let reason = d.stop_reason.unwrap_or_else(|| "it stopped".into());
                    return Err(VendorError::answer(
                        "runtime-cloud",
                        "start a sandbox",
                        format!("it stopped before it was ready: {reason}"),
                    ));
                }
                _ if started.elapsed() > START_TIMEOUT => {
                    let _ = self.delete(&id).await;
                    return Err(VendorError::answer(
                        "runtime-cloud",
                        "start a sandbox",
                        "it did not start in ten minutes",
                    ));
                }
                _ => {}
            }
            d = self.detail(&id, Some("running")).await?;
        }
    }

    async fn boot(&self, sandbox: &Sandbox, new: &NewSandbox) -> VResult<()> {
        let id = &sandbox.id;
        self.rest
            .send("upload the guest", Retry::Idempotent, |r| {
                r.request(Method::PUT, &format!("/v1/sandboxes/{id}/files/content"))
                    .query(&[("path", GUEST_UPLOAD)])
                    .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
                    .body(guest_gz())
            })
            .await?;
        let prepare = format!(
            "gunzip -c {GUEST_UPLOAD} > {g}.new && chmod 0755 {g}.new && mv {g}.new {g} && rm -f {GUEST_UPLOAD}",
            g = GUEST_PATH
        );
        self.run_as_root(id, "put the guest in place", &prepare).await?;
        let env: BTreeMap<&str, &str> =
            new.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let key = idempotency_key();
        let body = json!({
            "argv": as_root(&format!("exec {GUEST_PATH} </dev/null >{GUEST_LOG} 2>&1")),
            "env": env,
            "cwd": "/",
        });
        let started: Process = self
            .rest
            .json("start the guest", Retry::Idempotent, |r| {
                change(r, Method::POST, &format!("/v1/sandboxes/{id}/processes"), &key).json(&body)
            })
            .await?;
        self.guests.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), started.id);
        Ok(())
    }

    async fn guest_ended(&self, id: &str) -> VResult<Option<String>> {
        let Some(pid) = self.guests.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned()
        else {
            return Ok(None);
        };
        let p: Process = self
            .rest
            .json("read the guest's process", Retry::Idempotent, |r| {
                r.request(Method::GET, &format!("/v1/sandboxes/{id}/processes/{pid}"))
            })
            .await?;
        if p.state == "running" {
            return Ok(None);
        }
        // The log's end says why; a sandbox that cannot answer it still
        // has the exit code said.
        let log = match self
            .rest
            .send("read the guest's log", Retry::Idempotent, |r| {
                r.request(Method::GET, &format!("/v1/sandboxes/{id}/files/content"))
                    .query(&[("path", GUEST_LOG)])
            })
            .await
        {
            Ok(r) => r.bytes().await.map(|b| super::ended::log_tail(&b)).unwrap_or_default(),
            Err(e) => format!("(its log could not be read: {e})"),
        };
        let code =
            p.exit_code.map_or_else(|| "no exit code".to_owned(), |c| format!("exit code {c}"));
        Ok(Some(format!("the guest ended ({code}): {log}")))
    }

    async fn get(&self, id: &str) -> VResult<Sandbox> {
        let d = self.detail(id, None).await?;
        Ok(self.sandbox(d))
    }

    async fn list(&self, runtime: &str) -> VResult<Vec<Sandbox>> {
        let label = format!("{LABEL_RUNTIME}:{runtime}");
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page: Page<Detail> = self
                .rest
                .json("list sandboxes", Retry::Idempotent, |r| {
                    let mut q = vec![("label", label.clone()), ("limit", "100".to_owned())];
                    if let Some(c) = &cursor {
                        q.push(("cursor", c.clone()));
                    }
                    r.request(Method::GET, "/v1/sandboxes").query(&q)
                })
                .await?;
            for d in page.data {
                let s = self.sandbox(d);
                if s.state != MachineState::Gone {
                    out.push(s);
                }
            }
            match page.next_cursor.filter(|c| !c.is_empty()) {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        if !out.is_empty() {
            self.leases.start(&self.rest);
        }
        Ok(out)
    }

    async fn set_deadline(&self, id: &str, secs: u64) -> VResult<()> {
        self.leases.set(id, leases::now() + secs);
        leases::renew(&self.rest, id, secs).await?;
        self.leases.start(&self.rest);
        Ok(())
    }

    async fn pause(&self, id: &str) -> VResult<()> {
        let key = idempotency_key();
        self.rest
            .send("pause a sandbox", Retry::Idempotent, |r| {
                change(r, Method::POST, &format!("/v1/sandboxes/{id}:pause"), &key)
                    .header("prefer", "wait=60")
                    .timeout(Duration::from_secs(90))
            })
            .await
            .map(drop)
    }

    async fn resume(&self, id: &str, secs: u64) -> VResult<()> {
        self.leases.set(id, leases::now() + secs);
        let key = idempotency_key();
        let lease = secs.clamp(1, MAX_LEASE_SECS);
        self.rest
            .send("wake a sandbox", Retry::Idempotent, |r| {
                change(r, Method::POST, &format!("/v1/sandboxes/{id}:wake"), &key)
                    .header("prefer", "wait=60")
                    .timeout(Duration::from_secs(90))
                    .json(&json!({ "timeoutSeconds": lease }))
            })
            .await
            .map(drop)
    }

    async fn delete(&self, id: &str) -> VResult<()> {
        self.leases.forget(id);
        self.previews.lock().unwrap_or_else(|e| e.into_inner()).retain(|(sid, _), _| sid != id);
        let key = idempotency_key();
        match self
            .rest
            .send("stop a sandbox", Retry::Idempotent, |r| {
                change(r, Method::POST, &format!("/v1/sandboxes/{id}:stop"), &key)
                    .header("prefer", "wait=60")
                    .timeout(Duration::from_secs(90))
            })
            .await
        {
            Ok(_) => Ok(()),
            // Stopped already: what was asked is so.
            Err(e) if e.code.as_deref() == Some("sandbox_stopped") => Ok(()),
            Err(e) => Err(e),
        }
    }

    async fn endpoints(
        &self,
        sandbox: &Sandbox,
        ports: &[u16],
    ) -> VResult<BTreeMap<u16, Endpoint>> {
        let mut out = BTreeMap::new();
        for &port in ports {
            let p = self.preview(&sandbox.id, port).await?;
            let bad = |e: crate::runtime::EndpointError| {
                VendorError::answer("runtime-cloud", "reach a sandbox port", e.to_string())
            };
            let mut e = Endpoint::new(&p.url).map_err(bad)?;
            if let Some(token) = &p.token {
                e = e.with_header(PREVIEW_TOKEN_HEADER, token).map_err(bad)?;
            }
            out.insert(port, e);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_the_one_error_shape() {
        let (code, m) = error_body(
            409,
            br#"{"error":{"code":"trial_busy","status":409,"message":"The trial runs 3 sandboxes at once.","hint":"Stop one.","details":{},"requestId":"req_1"}}"#,
        );
        assert_eq!(code.as_deref(), Some("trial_busy"));
        assert_eq!(m, "The trial runs 3 sandboxes at once. (Stop one.)");
        let (code, m) = error_body(502, b"<html>bad gateway</html>");
        assert_eq!((code, m.as_str()), (None, "Bad Gateway"));
    }

    #[test]
    fn states_map_as_holm_needs() {
        assert_eq!(state_of("running"), MachineState::Running);
        assert_eq!(state_of("starting"), MachineState::Created);
        assert_eq!(state_of("paused"), MachineState::Paused);
        assert_eq!(state_of("stopped"), MachineState::Gone);
        assert_eq!(epoch_of("1970-01-01T00:01:00Z"), Some(60));
    }

    #[test]
    fn the_guest_starts_as_root_with_or_without_sudo() {
        let argv = as_root("echo 'hi'");
        assert_eq!(argv[..2], ["/bin/sh", "-c"]);
        assert!(argv[2].contains("exec /bin/sh -c 'echo '\\''hi'\\'''"), "{}", argv[2]);
        assert!(argv[2].contains("sudo -n -E"), "{}", argv[2]);
    }
}
