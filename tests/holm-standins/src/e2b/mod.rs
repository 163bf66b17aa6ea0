//! A stand-in of E2B: its REST API (templates, sandboxes), envd in each
//! sandbox (the calls holm and the SDKs make), and its proxy, which routes
//! by `E2b-Sandbox-Id` and `E2b-Sandbox-Port` (as E2B's does for IP hosts
//! and its shared `sandbox.` host) and wants each sandbox's traffic token.
//!
//! From E2B's OpenAPI (`spec/openapi.yml`), its infra (handlers, limits,
//! proxy templates) and its Python SDK 2.45.1, and E2B's OpenAPI as its
//! SDKs 2.63.0 (Python) and 2.51.0 (TypeScript) carry it (generated
//! clients: `post_v2_sandboxes.py`, `post_v_2_sandboxes_sandbox_id_connect.py`,
//! `dist/index.d.ts`): `X-API-Key` (401 `{code, message}` otherwise);
//! templates built by `POST /v3/templates`, file
//! uploads (`present` false then true; chunked uploads refused with 501),
//! `POST /v2/templates/{id}/builds/{build}` and the build's status;
//! sandboxes made by `POST /v2/sandboxes` (`NewSandboxV2`: always secured,
//! `timeout` default 300 s) or the deprecated `POST /sandboxes`
//! (`NewSandbox`: `secure`, `timeout` default 15 s), at most 24 hours (else
//! 400 with E2B's message), with `metadata`, `envVars` and
//! `network.allowPublicTraffic`; 429 at the concurrency limit; pause (409
//! when paused already), connect (`POST /v2/sandboxes/{id}/connect`, its
//! body optional, or the deprecated `/sandboxes/{id}/connect`; 200
//! running, 201 resumed), timeout,
//! delete (404 when gone); `GET /v2/sandboxes` with the double-encoded
//! metadata filter, `state` and `X-Next-Token`. A sandbox ends at its end
//! time by the stand-in's [`Clock`]; a paused one does not end. The
//! routes E2B's spec marks deprecated are served, and named by
//! [`deprecated`].
//!
//! Each template build is a Docker build of the steps; each sandbox a
//! container whose first process waits (envd is E2B's first process; the
//! template's entrypoint is not run), its ports on loopback. The list
//! (`/v2/sandboxes`) may lag a create by [`Controls::list_lag_ms`](crate::Controls),
//! and a fault may be answered after its request was handled.

mod api;
mod proxy;
mod templates;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::common::{Controls, random_id};
use crate::engine::Engine;

/// The ports of a sandbox the stand-in publishes: the guest's, the
/// bridge's and the viewers' (the real proxy serves any port the sandbox
/// listens on).
pub const PORTS: &[u16] = &[8765, 9223, 6080];
/// envd's port.
pub const ENVD_PORT: u16 = 49983;
/// E2B's longest sandbox life for the stand-in's team, in hours (Pro).
pub const MAX_HOURS: u64 = 24;
/// The template every team has, from which the SDKs create by default.
pub const BASE_TEMPLATE: &str = "base";

/// The routes the stand-in serves that E2B's OpenAPI marks deprecated
/// (as E2B's SDK 2.51.0 carries it, `dist/index.d.ts`), each with the one
/// that replaces it: method, route (`{}` for an id), replacement.
pub const DEPRECATED: &[(&str, &str, &str)] = &[
    ("POST", "/sandboxes", "POST /v2/sandboxes"),
    ("GET", "/sandboxes", "GET /v2/sandboxes"),
    ("POST", "/sandboxes/{}/connect", "POST /v2/sandboxes/{sandboxID}/connect"),
    ("POST", "/sandboxes/{}/resume", "POST /v2/sandboxes/{sandboxID}/connect"),
];

/// What replaces the route of `call`, when E2B's spec marks it deprecated.
pub fn deprecated(call: &crate::Call) -> Option<&'static str> {
    crate::common::replaced(DEPRECATED, call)
}

/// A template build's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Waiting,
    Building,
    Ready,
    Error,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Self::Waiting => "waiting",
            Self::Building => "building",
            Self::Ready => "ready",
            Self::Error => "error",
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Template {
    pub id: String,
    pub names: Vec<String>,
    pub created: u64,
    pub updated: u64,
    pub builds: Vec<String>,
    pub spawn_count: u64,
    pub last_spawned: Option<u64>,
}

#[derive(Debug, Clone)]
pub(crate) struct Build {
    pub id: String,
    pub template_id: String,
    pub status: Status,
    pub cpu: u64,
    pub memory_mb: u64,
    /// The Docker image the build made.
    pub image: Option<String>,
    pub logs: Vec<String>,
    pub reason: Option<(String, Option<String>)>,
    pub created: u64,
    pub updated: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct Sandbox {
    pub id: String,
    pub template_id: String,
    pub alias: Option<String>,
    pub container: String,
    pub ports: HashMap<u16, u16>,
    pub paused: bool,
    pub started_at: u64,
    pub end_at: u64,
    pub metadata: BTreeMap<String, String>,
    pub env_vars: BTreeMap<String, String>,
    pub envd_token: String,
    pub traffic_token: Option<String>,
    pub cpu: u64,
    pub memory_mb: u64,
    /// When it was made, for the list's lag.
    pub made_at: std::time::Instant,
}

#[derive(Debug, Default)]
pub(crate) struct Inner {
    pub templates: HashMap<String, Template>,
    pub aliases: HashMap<String, String>,
    pub builds: HashMap<String, Build>,
    /// Uploaded build contexts (tar.gz), by files hash.
    pub files: HashMap<String, Vec<u8>>,
    /// Upload URLs' tokens, to the files hash each is for.
    pub uploads: HashMap<String, String>,
    pub sandboxes: HashMap<String, Sandbox>,
}

/// The stand-in's state, shared by its API, proxy and reaper.
#[derive(Debug)]
pub(crate) struct State {
    pub engine: Engine,
    pub controls: Controls,
    pub api_url: String,
    pub inner: Mutex<Inner>,
    pub max_concurrency: AtomicUsize,
    pub tasks: crate::common::Tasks,
}

/// The E2B stand-in, on two loopback ports: the API and the proxy.
#[derive(Debug)]
pub struct E2bStandin {
    /// The API's base URL (`E2B_API_URL`).
    pub api_url: String,
    /// The proxy's URL, routed by headers (`E2B_SANDBOX_URL`).
    pub sandbox_url: String,
    /// The key, keys, clock, failures and calls a test controls.
    pub controls: Controls,
    state: Arc<State>,
}

crate::common::standin_parts!(E2bStandin, State, Inner);

impl E2bStandin {
    /// Starts a stand-in with one key, the `base` template (the local
    /// `debian:bookworm-slim`), and room for 20 sandboxes at once.
    pub async fn start() -> Self {
        let owner = format!("e2b-{}", random_id(10));
        let (listener, api_url) = crate::common::listen().await;
        let controls = Controls::new("e2b_");
        let state = Arc::new(State {
            engine: Engine::connect(&owner),
            controls: controls.clone(),
            api_url: api_url.clone(),
            inner: Mutex::default(),
            max_concurrency: AtomicUsize::new(20),
            tasks: crate::common::Tasks::default(),
        });
        templates::seed_base_template(&state);
        let app = api::router(Arc::clone(&state));
        let api_task = crate::common::serve(listener, app);
        let proxy_state = Arc::clone(&state);
        let (proxy_addr, proxy_task) =
            crate::forward::serve(move |req| proxy::handle(Arc::clone(&proxy_state), req)).await;
        let reaper_state = Arc::clone(&state);
        let reaper = tokio::spawn(async move { api::reap(reaper_state).await });
        state.tasks.add([api_task, proxy_task, reaper]);
        Self { api_url, sandbox_url: format!("http://{proxy_addr}"), controls, state }
    }

    /// At most `n` sandboxes at once; the next gets 429.
    pub fn set_max_concurrency(&self, n: usize) {
        self.state.max_concurrency.store(n, Ordering::SeqCst);
    }

    /// The ids of the sandboxes that exist (running or paused).
    pub fn sandbox_ids(&self) -> Vec<String> {
        self.state.lock().sandboxes.keys().cloned().collect()
    }

    /// Whether sandbox `id` exists.
    pub fn has_sandbox(&self, id: &str) -> bool {
        self.state.lock().sandboxes.contains_key(id)
    }

    /// Whether sandbox `id` is paused.
    pub fn is_paused(&self, id: &str) -> Option<bool> {
        self.state.lock().sandboxes.get(id).map(|s| s.paused)
    }

    /// The metadata of sandbox `id`.
    pub fn metadata(&self, id: &str) -> Option<BTreeMap<String, String>> {
        self.state.lock().sandboxes.get(id).map(|s| s.metadata.clone())
    }

    /// Seconds until sandbox `id` ends, by the stand-in's clock.
    pub fn seconds_left(&self, id: &str) -> Option<u64> {
        let now = self.state.clock.now();
        self.state.lock().sandboxes.get(id).map(|s| s.end_at.saturating_sub(now))
    }

    /// The names of the templates.
    pub fn template_names(&self) -> Vec<String> {
        self.state.lock().aliases.keys().cloned().collect()
    }

    /// The ids of the builds that ran (the `base` template's excepted).
    pub fn builds(&self) -> usize {
        self.state.lock().builds.values().filter(|b| b.template_id != BASE_TEMPLATE).count()
    }

    /// Ends every sandbox whose time has come now (as the reaper does each
    /// quarter second).
    pub async fn reap_now(&self) {
        api::reap_once(&self.state).await;
    }
}

#[cfg(test)]
mod tests {
    use super::deprecated;
    use crate::Call;

    fn call(method: &str, path: &str) -> Call {
        Call { method: method.into(), path: path.into(), status: 200, trace: None }
    }

    #[test]
    fn the_deprecated_routes_are_matched_segment_by_segment() {
        assert_eq!(deprecated(&call("POST", "/sandboxes")), Some("POST /v2/sandboxes"));
        assert_eq!(
            deprecated(&call("POST", "/sandboxes/abc/connect")),
            Some("POST /v2/sandboxes/{sandboxID}/connect")
        );
        assert_eq!(deprecated(&call("POST", "/v2/sandboxes")), None);
        assert_eq!(deprecated(&call("POST", "/v2/sandboxes/abc/connect")), None);
        assert_eq!(deprecated(&call("GET", "/v2/sandboxes")), None);
        assert_eq!(deprecated(&call("POST", "/sandboxes/abc/timeout")), None);
        assert_eq!(deprecated(&call("GET", "/sandboxes/abc")), None);
    }
}
