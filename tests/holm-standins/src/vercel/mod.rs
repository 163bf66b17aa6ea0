//! A stand-in of Vercel Sandbox: its REST API as `@vercel/sandbox` 3.1.0
//! calls it (`packages/vercel-sandbox/src/api-client`, whose validators
//! give every answer's shape), and Vercel Container Registry (the Docker
//! Registry v2 push and pull, and VCR's tag status).
//!
//! The contract kept: `Authorization: Bearer` and `teamId` on every call
//! (401 `unauthorized`, 403 `forbidden` for another team); `x-vercel-id` on
//! every answer; errors as `{"error": {code, message}}`; `POST
//! /v3/sandboxes` answering once the session runs, with `routes` (more
//! than 15 ports 400, exactly 15 the 500 Vercel answers, vercel/sandbox#292;
//! ports 1024 to 65535; `vcpus` 1 or even up to 8, memory 2048 MB each;
//! `timeout` at most 24 hours; at most 5 tags; `runtime` with `image` 400);
//! sessions `pending` → `running` → `stopping` → `stopped`, and after a
//! stop the session's calls 410 `sandbox_stopped` (422 `sandbox_stopping`
//! while it stops); `GET ?resume=true` making a new session of a
//! persistent sandbox; lists by `tags=k:v` with a cursor; commands as
//! `application/x-ndjson` (the command, its output lines, the command with
//! its exit code); `fs/write` as a gzipped tar unpacked at `x-cwd`;
//! `fs/read` 404 for a missing file; `extend-timeout` within 24 hours;
//! the session's timeout ending it by the stand-in's [`Clock`]. VCR: Basic
//! auth with the team id as the user and a token as the password, blobs
//! checked against their digests, and a pushed tag `preparing` then
//! `ready`.
//!
//! Where the contract is silent, the stand-in chooses, and says so: names
//! are unique in a project (409 `sandbox_exists`); the default image
//! (`vercel/sandbox/universal`) is [`DEFAULT_IMAGE`]; each route is a
//! loopback port of its own, public as Vercel's are; a sandbox of a pushed
//! image runs the engine's image whose id is the pushed config's digest
//! (the same content), pulled from the stand-in's registry when the engine
//! lacks it. Each sandbox is a container whose first process waits, as
//! Vercel's own init does; commands run as the image's user, or root with
//! `sudo` in the managed image, and through the image's own `sudo` in an
//! image of the user's (which fails where the image has none). The list
//! may lag a create by [`Controls::list_lag_ms`](crate::Controls), and a
//! fault may be answered after its request was handled.

mod api;
mod ops;
mod registry;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use crate::common::{Controls, random_id};
use crate::engine::Engine;

/// The image of a sandbox that names none (the stand-in's stand-in for
/// `vercel/sandbox/universal:latest`).
pub const DEFAULT_IMAGE: &str = "debian:bookworm-slim";
/// The longest a session lives, in milliseconds.
pub const MAX_TIMEOUT_MS: u64 = 24 * 3600 * 1000;
/// The longest sandbox timeout on the Hobby plan, in milliseconds (45
/// minutes, `@vercel/sandbox`'s README; Pro and Enterprise: 24 hours).
pub const HOBBY_MAX_TIMEOUT_MS: u64 = 45 * 60 * 1000;
/// The default timeout, in milliseconds (five minutes).
pub const DEFAULT_TIMEOUT_MS: u64 = 5 * 60 * 1000;

#[derive(Debug, Clone)]
pub(crate) struct Command {
    pub id: String,
    pub name: String,
    pub args: Vec<String>,
    pub cwd: String,
    pub exit_code: Option<i64>,
    pub started: u64,
    pub output: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub id: String,
    pub sandbox: String,
    pub status: String,
    pub vcpus: u64,
    pub timeout_ms: u64,
    pub requested_ms: u64,
    pub started_ms: Option<u64>,
    pub stopped_ms: Option<u64>,
    pub container: Option<String>,
    pub ports: HashMap<u16, u16>,
    pub routes: BTreeMap<u16, SocketAddr>,
    pub commands: HashMap<String, Command>,
}

#[derive(Debug, Clone)]
pub(crate) struct Sandbox {
    pub name: String,
    pub image: String,
    pub ports: Vec<u16>,
    pub vcpus: u64,
    pub timeout_ms: u64,
    pub env: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
    pub persistent: bool,
    pub session: String,
    pub created_ms: u64,
    pub updated_ms: u64,
    /// When it was made, for the list's lag.
    pub made_at: std::time::Instant,
}

/// A tag pushed to the registry.
#[derive(Debug, Clone)]
pub(crate) struct Pushed {
    pub manifest_digest: String,
    pub config_digest: String,
    pub status: String,
    pub pushed_ms: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Inner {
    pub sandboxes: BTreeMap<String, Sandbox>,
    pub sessions: HashMap<String, Session>,
    /// Pushed tags by `team/project/repo:tag`.
    pub tags: HashMap<String, Pushed>,
    /// Manifests by `repo@digest`, with their media type.
    pub manifests: HashMap<String, (String, Vec<u8>)>,
}

/// The stand-in's state.
#[derive(Debug)]
pub(crate) struct State {
    pub engine: Engine,
    pub controls: Controls,
    pub team_id: String,
    pub team_slug: String,
    /// The team's plan (`billing.plan`): `pro` unless a test sets
    /// `hobby`, whose sandboxes live at most [`HOBBY_MAX_TIMEOUT_MS`].
    pub plan: Mutex<String>,
    pub project_id: String,
    pub project_slug: String,
    pub registry_host: String,
    /// Where blobs are kept, by digest: one directory every stand-in shares
    /// (content-addressed, each blob checked against its digest when
    /// written), so a test process pushing the box image again uploads
    /// only what changed, as a registry holding its layers already would.
    pub blobs: std::path::PathBuf,
    /// Where this stand-in's uploads are put together.
    pub uploads: tempfile::TempDir,
    pub inner: Mutex<Inner>,
    pub tasks: crate::common::Tasks,
}

impl State {
    pub fn spawn(&self, task: tokio::task::JoinHandle<()>) {
        self.tasks.add([task]);
    }

    /// Milliseconds since the epoch, by the vendor's clock.
    pub fn now_ms(&self) -> u64 {
        let real = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as u64;
        let offset = self.clock.now().saturating_sub(real / 1000);
        real + offset * 1000
    }
}

/// The Vercel stand-in: its API on one loopback port, its registry on
/// another, and each route on one of its own.
#[derive(Debug)]
pub struct VercelStandin {
    /// The API base (`…/api`, as `https://vercel.com/api`).
    pub api_url: String,
    /// The registry (`http://127.0.0.1:…`, as `https://vcr.vercel.com`).
    pub registry_url: String,
    /// The team the token belongs to.
    pub team_id: String,
    /// The project.
    pub project_id: String,
    /// The token, tokens, clock, failures and calls a test controls.
    pub controls: Controls,
    state: Arc<State>,
}

crate::common::standin_parts!(VercelStandin, State, Inner);

/// The blob store every Vercel stand-in on this machine shares.
fn shared_blobs() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join("holm-standin-vcr-blobs");
    std::fs::create_dir_all(&dir).expect("a directory for the registry's blobs");
    dir
}

impl VercelStandin {
    /// Starts a stand-in with one token (24 characters, as Vercel's access
    /// tokens).
    pub async fn start() -> Self {
        let owner = format!("vercel-{}", random_id(10));
        let (api, origin) = crate::common::listen().await;
        let api_url = format!("{origin}/api");
        let (registry, registry_url) = crate::common::listen().await;
        let registry_host = registry_url.trim_start_matches("http://").to_owned();
        let mut controls = Controls::new("");
        controls.keys.revoke(&controls.key);
        controls.key = random_id(24);
        controls.keys.add(&controls.key);
        let state = Arc::new(State {
            engine: Engine::connect(&owner),
            controls: controls.clone(),
            team_id: format!("team_{}", random_id(24)),
            team_slug: format!("holm-{}", random_id(6)),
            plan: Mutex::new("pro".into()),
            project_id: format!("prj_{}", random_id(28)),
            project_slug: "boxes".into(),
            registry_host: registry_host.clone(),
            blobs: shared_blobs(),
            uploads: tempfile::tempdir().expect("a directory for the registry's uploads"),
            inner: Mutex::default(),
            tasks: crate::common::Tasks::default(),
        });
        let api_task = crate::common::serve(api, api::router(Arc::clone(&state)));
        let vcr_task = crate::common::serve(registry, registry::router(Arc::clone(&state)));
        let reaper_state = Arc::clone(&state);
        let reaper = tokio::spawn(async move { api::reap(reaper_state).await });
        state.tasks.add([api_task, vcr_task, reaper]);
        Self {
            api_url,
            registry_url,
            team_id: state.team_id.clone(),
            project_id: state.project_id.clone(),
            controls,
            state,
        }
    }

    /// The names of the sandboxes whose session is not stopped.
    pub fn sandbox_names(&self) -> Vec<String> {
        let inner = self.state.lock();
        inner
            .sandboxes
            .values()
            .filter(|s| inner.sessions.get(&s.session).is_some_and(|x| x.status != "stopped"))
            .map(|s| s.name.clone())
            .collect()
    }

    /// Whether sandbox `name` exists and its session is not stopped.
    pub fn has_sandbox(&self, name: &str) -> bool {
        self.sandbox_names().iter().any(|n| n == name)
    }

    /// A sandbox's tags.
    pub fn tags(&self, name: &str) -> Option<BTreeMap<String, String>> {
        self.state.lock().sandboxes.get(name).map(|s| s.tags.clone())
    }

    /// When a sandbox's session ends, in seconds since the epoch of its
    /// clock.
    pub fn ends_at(&self, name: &str) -> Option<u64> {
        let inner = self.state.lock();
        let s = inner.sandboxes.get(name)?;
        let x = inner.sessions.get(&s.session)?;
        Some((x.started_ms.unwrap_or(x.requested_ms) + x.timeout_ms) / 1000)
    }

    /// A sandbox's current session.
    pub fn session_of(&self, name: &str) -> Option<String> {
        self.state.lock().sandboxes.get(name).map(|s| s.session.clone())
    }

    /// Puts the team on `plan` (`hobby` or `pro`): Hobby refuses a
    /// sandbox timeout above 45 minutes.
    pub fn set_plan(&self, plan: &str) {
        *self.state.plan.lock().unwrap_or_else(|e| e.into_inner()) = plan.to_owned();
    }

    /// The tags pushed to the registry (`team/project/repo:tag`).
    pub fn pushed(&self) -> Vec<String> {
        self.state.lock().tags.keys().cloned().collect()
    }

    /// Ends the sessions that are due now (as the reaper does each quarter
    /// second).
    pub async fn reap_now(&self) {
        api::reap_once(&self.state).await;
    }
}
