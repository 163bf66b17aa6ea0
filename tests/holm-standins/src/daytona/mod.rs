//! A stand-in of Daytona: its REST API under `/api` (snapshots,
//! sandboxes, auto-stop and auto-delete, labels, preview URLs), its toolbox
//! (`files/upload`, `files/download`, `process/execute`) and its preview
//! proxy.
//!
//! From Daytona's API (v0.190.0: the NestJS controllers and DTOs, the
//! exception filter's `{path, timestamp, statusCode, error, message}`), its
//! proxy (`X-Daytona-Preview-Token`, `DAYTONA_SANDBOX_AUTH_KEY`, a bearer
//! API key; a 307 to the login otherwise; the preview warning page for
//! browsers without `X-Daytona-Skip-Preview-Warning`), its toolbox's
//! swagger, and its Python SDK 0.190.0, and the API as its Python SDK
//! 0.226.1 carries it (`daytona_api_client`: `Sandbox` requires a boolean
//! `kvm`, `SandboxListItem` a boolean `networkBlockAll`, resources are
//! integers; `CreateSandbox.kvm` is for linux-vm snapshots only):
//! `Authorization: Bearer <key>`;
//! JSON bodies of at most 100 KB (Express's default, which Daytona keeps;
//! 413 otherwise); a snapshot (not the general one) unused for
//! [`DEACTIVATE_AFTER_SECS`] on the stand-in's clock goes `inactive`, a
//! sandbox cannot be made from it, and only `POST /snapshots/{id}/activate`
//! brings it back, as Daytona's snapshot manager and service do;
//! the sandbox list is eventually consistent: a new sandbox is listed
//! only [`Controls::list_lag_ms`](crate::Controls) after it was made (0 by
//! default), as Daytona's list may lag; a fault may be answered after its
//! request was handled (a create that made the sandbox and answered 503);
//! a snapshot is built in its `regionId` (the organization's default
//! region when none is given), and a sandbox made from it in another
//! `target` is refused (400, "not available in region");
//! snapshots `pending` → `building` → `active` or
//! `build_failed` with `errorReason`; sandboxes `creating` → `started`,
//! stopped after `autoStopInterval` minutes without activity (API, toolbox
//! or preview traffic) and deleted `autoDeleteInterval` minutes after (0:
//! at once), by the stand-in's [`Clock`]; `labels` filters (JSON) and
//! cursors on the list; pause refused (422) for container sandboxes.
//!
//! Each snapshot is a Docker build of its Dockerfile; each sandbox a
//! container with the sandbox's environment whose first process waits, as
//! Daytona's daemon does (the image's own entrypoint is not started by the
//! stand-in); each previewed port gets a loopback port of its own (a
//! preview URL's host names the port and sandbox at Daytona).

mod api;
mod preview;
mod snapshots;
mod toolbox;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use crate::common::{Controls, random_id};
use crate::engine::Engine;

/// The routes the stand-in serves that Daytona's current API no longer
/// lists, each with what replaces it: method, route (`{}` for an id, as
/// the stand-in's call log has it), replacement. The toolbox's single-file
/// upload of the 0.190 daemon is not in `daytona_toolbox_api_client`
/// 0.226.1, whose SDK uploads every file with `files/bulk-upload`.
pub const DEPRECATED: &[(&str, &str, &str)] =
    &[("POST", "/toolbox/{}/files/upload", "POST /toolbox/{sandboxId}/files/bulk-upload")];

/// What replaces the route of `call`, when Daytona's current API no
/// longer lists it.
pub fn deprecated(call: &crate::Call) -> Option<&'static str> {
    crate::common::replaced(DEPRECATED, call)
}

/// The ports of a sandbox the stand-in publishes.
pub const PORTS: &[u16] = &[8765, 9223, 6080];
/// The snapshot a sandbox gets when it names none.
pub const DEFAULT_SNAPSHOT: &str = "daytona-small";
/// The organization's default region.
pub const DEFAULT_REGION: &str = "us";
/// Daytona's default time unused after which a snapshot that is not
/// general goes `inactive` (`snapshot_deactivation_timeout_minutes`: 14
/// days, `snapshot.manager.ts`).
pub const DEACTIVATE_AFTER_SECS: u64 = 14 * 24 * 3600;
/// The most bytes of a JSON body the API reads (Express's default `100kb`).
pub const BODY_LIMIT: usize = 100 * 1024;

#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    pub id: String,
    pub name: String,
    pub state: String,
    pub image: Option<String>,
    pub error: Option<String>,
    pub cpu: u64,
    pub memory: u64,
    pub disk: u64,
    pub created: u64,
    pub updated: u64,
    /// When a sandbox was last made from it (or it was made or activated).
    pub last_used: u64,
    /// The region it was built in (`regionId`; the organization's default,
    /// [`DEFAULT_REGION`], when none was given).
    pub region: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Sandbox {
    pub id: String,
    pub name: String,
    pub snapshot: String,
    pub container: Option<String>,
    pub ports: HashMap<u16, u16>,
    pub state: String,
    pub labels: BTreeMap<String, String>,
    pub env: BTreeMap<String, String>,
    pub public: bool,
    pub auto_stop: i64,
    pub auto_delete: i64,
    pub last_activity: u64,
    /// When it was made, for the list's lag.
    pub made_at: std::time::Instant,
    pub stopped_at: Option<u64>,
    pub created: u64,
    pub updated: u64,
    pub auth_token: String,
    pub cpu: u64,
    pub memory: u64,
    pub disk: u64,
    pub error: Option<String>,
    /// The loopback address of each previewed port.
    pub previews: HashMap<u16, SocketAddr>,
    /// The region it runs in (`target`).
    pub target: String,
}

#[derive(Debug, Default)]
pub(crate) struct Inner {
    pub snapshots: HashMap<String, Snapshot>,
    pub sandboxes: HashMap<String, Sandbox>,
    pub destroyed: Vec<String>,
}

/// The stand-in's state.
#[derive(Debug)]
pub(crate) struct State {
    pub engine: Engine,
    pub controls: Controls,
    pub base: String,
    pub organization: String,
    /// Seconds unused after which a snapshot goes `inactive` (Daytona's
    /// `snapshot_deactivation_timeout_minutes`, 14 days by default).
    pub deactivate_after: std::sync::atomic::AtomicU64,
    pub inner: Mutex<Inner>,
    pub tasks: crate::common::Tasks,
}

impl State {
    /// The sandbox named by id or name (not destroyed).
    pub fn find(&self, id_or_name: &str) -> Option<Sandbox> {
        let inner = self.lock();
        inner
            .sandboxes
            .get(id_or_name)
            .or_else(|| inner.sandboxes.values().find(|s| s.name == id_or_name))
            .cloned()
    }

    /// Records activity on a sandbox (API, toolbox or preview traffic).
    pub fn touch(&self, id: &str) {
        let now = self.clock.now();
        if let Some(s) = self.lock().sandboxes.get_mut(id) {
            s.last_activity = now;
        }
    }
}

/// The Daytona stand-in, on a loopback port (the API under `/api`, the
/// toolbox under `/toolbox`), with a port of its own per previewed port.
#[derive(Debug)]
pub struct DaytonaStandin {
    /// The API's URL (`DAYTONA_API_URL`), ending in `/api`.
    pub api_url: String,
    /// The key, keys, clock, failures and calls a test controls.
    pub controls: Controls,
    state: Arc<State>,
}

crate::common::standin_parts!(DaytonaStandin, State, Inner);

impl DaytonaStandin {
    /// Starts a stand-in with one key and the default snapshot (the local
    /// `debian:bookworm-slim`).
    pub async fn start() -> Self {
        let owner = format!("daytona-{}", random_id(10));
        let (listener, base) = crate::common::listen().await;
        let controls = Controls::new("dtn_");
        let state = Arc::new(State {
            engine: Engine::connect(&owner),
            controls: controls.clone(),
            base: base.clone(),
            organization: format!("{}-{}", random_id(8), random_id(12)),
            deactivate_after: std::sync::atomic::AtomicU64::new(DEACTIVATE_AFTER_SECS),
            inner: Mutex::default(),
            tasks: crate::common::Tasks::default(),
        });
        snapshots::seed_default_snapshot(&state);
        let app = api::router(Arc::clone(&state));
        let api_task = crate::common::serve(listener, app);
        let reaper_state = Arc::clone(&state);
        let reaper = tokio::spawn(async move { api::reap(reaper_state).await });
        state.tasks.add([api_task, reaper]);
        Self { api_url: format!("{base}/api"), controls, state }
    }

    /// The ids of the sandboxes that are not destroyed.
    pub fn sandbox_ids(&self) -> Vec<String> {
        self.state.lock().sandboxes.keys().cloned().collect()
    }

    /// Whether sandbox `id` exists (not destroyed).
    pub fn has_sandbox(&self, id: &str) -> bool {
        self.state.lock().sandboxes.contains_key(id)
    }

    /// A sandbox's state.
    pub fn sandbox_state(&self, id: &str) -> Option<String> {
        self.state.lock().sandboxes.get(id).map(|s| s.state.clone())
    }

    /// A sandbox's labels.
    pub fn labels(&self, id: &str) -> Option<BTreeMap<String, String>> {
        self.state.lock().sandboxes.get(id).map(|s| s.labels.clone())
    }

    /// A sandbox's auto-stop interval, in minutes.
    pub fn auto_stop(&self, id: &str) -> Option<i64> {
        self.state.lock().sandboxes.get(id).map(|s| s.auto_stop)
    }

    /// The names of the snapshots.
    pub fn snapshot_names(&self) -> Vec<String> {
        self.state.lock().snapshots.values().map(|s| s.name.clone()).collect()
    }

    /// A snapshot's state, by id or name.
    pub fn snapshot_state(&self, id_or_name: &str) -> Option<String> {
        snapshots::find_snapshot(&self.state, id_or_name).map(|s| s.state)
    }

    /// Sets how long a snapshot may go unused before it is `inactive`.
    pub fn set_snapshot_deactivation(&self, secs: u64) {
        self.state.deactivate_after.store(secs, std::sync::atomic::Ordering::Relaxed);
    }

    /// The sandboxes destroyed so far.
    pub fn destroyed(&self) -> Vec<String> {
        self.state.lock().destroyed.clone()
    }

    /// Stops and deletes what is due now (as the reaper does each quarter
    /// second).
    pub async fn reap_now(&self) {
        api::reap_once(&self.state).await;
    }
}
