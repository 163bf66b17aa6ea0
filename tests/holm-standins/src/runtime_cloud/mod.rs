//! A stand-in of Runtime Cloud: its HTTPS API 0.2.0 as its documentation
//! states it (the seeds' "HTTPS API reference", the SDK pages, "Diagnose a
//! sandbox integration"): sandboxes (create, list, read with `waitFor`,
//! `:stop`, `:pause`, `:wake`, `:extend`), `:exec`, background processes,
//! file content, previews
//! and their private-token proxy, and custom images from a Dockerfile.
//!
//! The contract kept: the key as `Authorization: Bearer` (401
//! `unauthorized`); `x-request-id` on every response; one error shape,
//! `{"error": {code, status, message, hint, details, requestId}}`, a 5xx
//! with a fixed message only; unknown fields refused, every wrong field
//! named in `details.issues`; `Idempotency-Key` on a change remembered
//! for 24 hours (the same body answers the first result again with
//! `"replayed": true` and `Idempotency-Replayed: true`; another body 422
//! `idempotency_key_reused`); `Prefer: wait=N` (at most 120) answering once
//! the sandbox settled; `waitFor` and `timeoutSeconds` on a read; lists as
//! `{data, nextCursor}` pages, `limit` 1 to 100; the lease
//! (`timeoutSeconds` at most 3600, `onLeaseEnd` pause or stop, `:extend`
//! at most an hour ahead), ended by the stand-in's [`Clock`]; states
//! `starting` → `running` ⇄ `paused`, → `stopping` → `stopped` (with
//! `stopReason`); 409 `not_running`, `sandbox_paused`, `sandbox_stopped`;
//! 429 `rate_limited` with `Retry-After`; the trial's limits (`funding:
//! "trial"`: at most 2 vCPU, 4 GiB, 10 GiB of disk, three at once);
//! `snapshot` answering 503 `fork_unavailable`.
//!
//! Where the documentation is silent, the stand-in chooses, and says so:
//! a create answers 201, a sandbox's lease end is `expiresAt`; an image is
//! `{id, kind, name, state: queued|building|ready|failed, error}`; a
//! preview is made with `{port, visibility}` and answers `{port,
//! visibility, url, token, urlWithToken}` (a port shared already answers
//! its preview again without its token, as a read does: the strict case of
//! what the documentation leaves open, so a client that lost the token must
//! rotate it); cursors are opaque. Each sandbox is a container
//! on the local engine whose first process waits, as the microVM's own
//! agent does; commands and processes run as uid 1000, as Runtime Cloud's
//! `runtime` user does (an image without that user or `sudo` cannot become
//! root); each preview gets a loopback port of its own.

mod api;
mod images;
mod ops;
mod processes;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use crate::common::{Controls, random_id};
use crate::engine::Engine;

/// The ports of a sandbox the stand-in can preview.
pub const PORTS: &[u16] = &[8765, 9223, 6080];
/// The image of a sandbox that names none (the stand-in's stand-in for
/// Runtime Cloud's Ubuntu image).
pub const DEFAULT_IMAGE: &str = "debian:bookworm-slim";
/// Who commands and processes run as: Runtime Cloud's `runtime` user
/// (uid 1000), whatever the image's user is ("Who you are").
pub const USER: &str = "1000";
/// The longest lease, in seconds.
pub const MAX_LEASE_SECS: u64 = 3600;

#[derive(Debug, Clone)]
pub(crate) struct Preview {
    pub visibility: String,
    pub token: String,
    pub addr: SocketAddr,
    pub created: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct Sandbox {
    pub id: String,
    pub name: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub state: String,
    pub funding: String,
    pub vcpu: u64,
    pub memory_mib: u64,
    pub disk_mib: u64,
    pub cpu: String,
    pub cpu_floor: u64,
    pub timeout_secs: u64,
    pub on_lease_end: String,
    pub pausable: bool,
    pub image: Option<String>,
    pub expires_at: u64,
    pub created: u64,
    pub stop_reason: Option<String>,
    pub container: Option<String>,
    pub ports: HashMap<u16, u16>,
    pub previews: HashMap<u16, Preview>,
}

/// A sandbox's background process.
#[derive(Debug, Clone)]
pub(crate) struct Process {
    pub id: String,
    pub sandbox: String,
    pub command: String,
    pub state: String,
    pub exit_code: Option<i64>,
    pub started: u64,
    pub ended: Option<u64>,
}

#[derive(Debug, Clone)]
pub(crate) struct Image {
    pub id: String,
    pub name: Option<String>,
    pub source: String,
    pub state: String,
    pub error: Option<String>,
    pub tag: String,
    pub logs: Vec<String>,
    pub created: u64,
}

/// A change's remembered answer, by its idempotency key.
#[derive(Debug, Clone)]
pub(crate) struct Remembered {
    pub fingerprint: String,
    pub status: u16,
    pub body: Vec<u8>,
    pub at: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Inner {
    pub sandboxes: HashMap<String, Sandbox>,
    pub images: HashMap<String, Image>,
    pub processes: HashMap<String, Process>,
    pub idempotency: HashMap<String, Remembered>,
    /// The order things were made in, for pages.
    pub order: Vec<String>,
}

/// The stand-in's state.
#[derive(Debug)]
pub(crate) struct State {
    pub engine: Engine,
    pub controls: Controls,
    pub org: String,
    /// How many of the next image builds fail (a test's transient failure).
    pub failing_builds: std::sync::atomic::AtomicU32,
    pub inner: Mutex<Inner>,
    pub tasks: crate::common::Tasks,
}

impl State {
    pub fn sandbox(&self, id: &str) -> Option<Sandbox> {
        self.lock().sandboxes.get(id).cloned()
    }
}

/// The Runtime Cloud stand-in, on a loopback port, with a port of its own
/// per preview.
#[derive(Debug)]
pub struct RuntimeCloudStandin {
    /// The API origin (`RUNTIME_API_URL`).
    pub api_url: String,
    /// The key, keys, clock, failures and calls a test controls.
    pub controls: Controls,
    state: Arc<State>,
}

crate::common::standin_parts!(RuntimeCloudStandin, State, Inner);

impl RuntimeCloudStandin {
    /// Starts a stand-in with one key (`rt_` and 32 hex digits).
    pub async fn start() -> Self {
        let owner = format!("runtime-cloud-{}", random_id(10));
        let (listener, api_url) = crate::common::listen().await;
        let controls = Controls::new("rt_");
        let state = Arc::new(State {
            engine: Engine::connect(&owner),
            controls: controls.clone(),
            org: format!("org_{}", random_id(12)),
            failing_builds: std::sync::atomic::AtomicU32::new(0),
            inner: Mutex::default(),
            tasks: crate::common::Tasks::default(),
        });
        let app = api::router(Arc::clone(&state));
        let api_task = crate::common::serve(listener, app);
        let reaper_state = Arc::clone(&state);
        let reaper = tokio::spawn(async move { api::reap(reaper_state).await });
        state.tasks.add([api_task, reaper]);
        Self { api_url, controls, state }
    }

    /// Makes the next `n` image builds fail, as a transient failure would.
    pub fn fail_next_image_builds(&self, n: u32) {
        self.state.failing_builds.store(n, std::sync::atomic::Ordering::SeqCst);
    }

    /// The ids of the sandboxes that are not stopped.
    pub fn sandbox_ids(&self) -> Vec<String> {
        let inner = self.state.lock();
        inner.sandboxes.values().filter(|s| s.state != "stopped").map(|s| s.id.clone()).collect()
    }

    /// Whether sandbox `id` exists and is not stopped.
    pub fn has_sandbox(&self, id: &str) -> bool {
        self.state.lock().sandboxes.get(id).is_some_and(|s| s.state != "stopped")
    }

    /// A sandbox's state.
    pub fn sandbox_state(&self, id: &str) -> Option<String> {
        self.state.lock().sandboxes.get(id).map(|s| s.state.clone())
    }

    /// A sandbox's lease end, in seconds since the epoch of its clock.
    pub fn expires_at(&self, id: &str) -> Option<u64> {
        self.state.lock().sandboxes.get(id).map(|s| s.expires_at)
    }

    /// The names of the images.
    pub fn image_names(&self) -> Vec<String> {
        self.state.lock().images.values().filter_map(|i| i.name.clone()).collect()
    }

    /// Ends the leases that are due now (as the reaper does each quarter
    /// second).
    pub async fn reap_now(&self) {
        api::reap_once(&self.state).await;
    }
}
