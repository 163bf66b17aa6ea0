//! A stand-in of Modal: its gRPC API (`modal.client.ModalClient`, the
//! calls holm and Modal's Python client make for apps, images, sandboxes,
//! tunnels and commands) and a sandbox's command router
//! (`modal.task_command_router.TaskCommandRouter`), both served by tonic
//! on one loopback port from the same `modal_proto` subset holm speaks
//! (`holm-modal-proto`).
//!
//! From Modal's published protos and its Python client (`modal` 1.6.4):
//! every call needs `x-modal-token-id` and `x-modal-token-secret`
//! (`UNAUTHENTICATED` otherwise); the router needs `authorization: Bearer`
//! with the JWT `TaskGetCommandRouterAccess` gave. Images are built from
//! their Dockerfile lines with their build context (a mount whose large
//! files came through blob storage, and small inline files: [`blobs`]),
//! kept by their recipe
//! (a second `ImageGetOrCreate` with the same lines gets the same `im-`
//! id), and their result comes only through `ImageJoinStreaming`.
//! Sandboxes have no task until their container runs, tunnels answer a
//! `TIMEOUT` result until then, tags filter `SandboxList` (paged by
//! `before_timestamp`), `timeout_secs` above 24 hours is refused
//! (`INVALID_ARGUMENT`), a sandbox ends at its timeout by the stand-in's
//! [`Clock`](crate::Clock), and a terminated or unknown sandbox answers
//! `NOT_FOUND` where Modal does. The client type `CLIENT_TYPE_LIBMODAL` (7),
//! which Modal's protos call obsolete, is refused (`FAILED_PRECONDITION`),
//! and so is an image without a builder version. Injected faults answer the gRPC code of
//! their HTTP status (503 is `UNAVAILABLE`, 429 `RESOURCE_EXHAUSTED`,
//! 500 `INTERNAL`); a fault's path is `/modal.client.ModalClient/<Rpc>`.
//!
//! Every gRPC call is recorded with its contract trace (`traced`: its
//! metadata's names and its message's set fields, never a value).
//!
//! Each sandbox is a container on the local Docker engine running its
//! entrypoint (holm's: the guest), each open port reached through a
//! loopback tunnel of its own (a Modal tunnel is a public host and port).

mod api;
mod blobs;
mod router;
mod traced;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use crate::common::{Controls, random_id, token};
use crate::engine::Engine;

/// Modal's longest sandbox lifetime.
pub const MAX_TIMEOUT_SECS: u32 = 24 * 3600;
/// The image builder version the stand-in reports, in an environment's
/// settings only: `ClientHello`'s field is "deprecated, no longer used in
/// client", and the stand-in leaves it empty.
pub const BUILDER_VERSION: &str = "2025.06";

#[derive(Debug, Clone)]
pub(crate) enum Build {
    Building,
    Ready,
    Failed(String),
}

#[derive(Debug, Clone)]
pub(crate) struct Image {
    pub id: String,
    pub tag: String,
    pub build: Build,
    pub logs: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Sandbox {
    pub id: String,
    pub app_id: String,
    pub tags: BTreeMap<String, String>,
    pub task_id: Option<String>,
    pub container: Option<String>,
    pub tunnels: BTreeMap<u16, SocketAddr>,
    pub created_at: f64,
    pub ends_at: u64,
    /// Its `idle_timeout_secs` (kept, not applied: the stand-in does not
    /// watch a sandbox's activity).
    pub idle_timeout_secs: Option<u32>,
    /// The environment it was given (from its Secrets).
    pub env: BTreeMap<String, String>,
    /// Modal's `GenericStatus` once it ended.
    pub result: Option<i32>,
    pub exception: String,
}

#[derive(Debug, Default)]
pub(crate) struct Exec {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub code: Option<i32>,
}

#[derive(Debug, Default)]
pub(crate) struct Inner {
    pub apps: HashMap<String, String>,
    pub images: HashMap<String, Image>,
    pub sandboxes: HashMap<String, Sandbox>,
    pub execs: HashMap<(String, String), Arc<Mutex<Exec>>>,
    pub jwts: HashMap<String, String>,
    pub blobs: HashMap<String, blobs::Blob>,
    /// Files put in mounts, by SHA-256 (hex).
    pub files: HashMap<String, Vec<u8>>,
    pub mounts: HashMap<String, blobs::MountFiles>,
    /// Each Secret's environment.
    pub secrets: HashMap<String, BTreeMap<String, String>>,
}

/// The stand-in's state.
#[derive(Debug)]
pub(crate) struct State {
    pub engine: Engine,
    pub controls: Controls,
    pub token_id: String,
    pub url: String,
    /// Where blob uploads go (`http://127.0.0.1:PORT`).
    pub blob_url: std::sync::OnceLock<String>,
    pub inner: Mutex<Inner>,
    pub tasks: crate::common::Tasks,
    pub changed: tokio::sync::Notify,
}

impl State {
    pub fn spawn(&self, task: tokio::task::JoinHandle<()>) {
        self.tasks.add([task]);
    }
}

/// A Modal id: `prefix-` and 22 letters and digits, as Modal's are.
pub(crate) fn modal_id(prefix: &str) -> String {
    format!("{prefix}-{}", random_id(22))
}

/// The Modal stand-in on a loopback port (`MODAL_SERVER_URL`).
#[derive(Debug)]
pub struct ModalStandin {
    /// The server's URL, `http://127.0.0.1:PORT`.
    pub server_url: String,
    /// The token ID it accepts (`ak-...`); the secret is `controls.key`.
    pub token_id: String,
    /// The secret, keys, clock, failures and calls a test controls.
    pub controls: Controls,
    state: Arc<State>,
}

crate::common::standin_parts!(ModalStandin, State, Inner);

impl ModalStandin {
    /// Starts a stand-in with one token pair.
    pub async fn start() -> Self {
        let owner = format!("modal-{}", random_id(10));
        let (listener, url) = crate::common::listen().await;
        let controls = Controls::new("as-");
        let state = Arc::new(State {
            engine: Engine::connect(&owner),
            controls: controls.clone(),
            token_id: format!("ak-{}", token()),
            url: url.clone(),
            blob_url: std::sync::OnceLock::new(),
            inner: Mutex::default(),
            tasks: crate::common::Tasks::default(),
            changed: tokio::sync::Notify::new(),
        });
        let _ = state.blob_url.set(blobs::serve(Arc::clone(&state)).await);
        let server = tonic::transport::Server::builder()
            .layer(traced::TraceLayer)
            .add_service(
                holm_modal_proto::api::modal_client_server::ModalClientServer::new(api::Api(
                    Arc::clone(&state),
                ))
                .max_decoding_message_size(100 * 1024 * 1024),
            )
            .add_service(
                holm_modal_proto::router::task_command_router_server::TaskCommandRouterServer::new(
                    router::Router(Arc::clone(&state)),
                ),
            );
        let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
        let serve = tokio::spawn(async move {
            let _ = server.serve_with_incoming(incoming).await;
        });
        let reaper_state = Arc::clone(&state);
        let reaper = tokio::spawn(async move {
            loop {
                api::reap_once(&reaper_state).await;
                tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            }
        });
        state.spawn(serve);
        state.spawn(reaper);
        Self { server_url: url, token_id: state.token_id.clone(), controls, state }
    }

    /// The ids of the sandboxes that have not ended.
    pub fn sandbox_ids(&self) -> Vec<String> {
        self.state
            .lock()
            .sandboxes
            .values()
            .filter(|s| s.result.is_none())
            .map(|s| s.id.clone())
            .collect()
    }

    /// Whether sandbox `id` exists and has not ended.
    pub fn has_sandbox(&self, id: &str) -> bool {
        self.state.lock().sandboxes.get(id).is_some_and(|s| s.result.is_none())
    }

    /// A sandbox's tags.
    pub fn tags(&self, id: &str) -> Option<BTreeMap<String, String>> {
        self.state.lock().sandboxes.get(id).map(|s| s.tags.clone())
    }

    /// When a sandbox ends, in the stand-in's seconds since the epoch.
    pub fn ends_at(&self, id: &str) -> Option<u64> {
        self.state.lock().sandboxes.get(id).map(|s| s.ends_at)
    }

    /// A sandbox's environment, as its container got it.
    pub fn env(&self, id: &str) -> Option<BTreeMap<String, String>> {
        self.state.lock().sandboxes.get(id).map(|s| s.env.clone())
    }

    /// A sandbox's idle timeout.
    pub fn idle_timeout_secs(&self, id: &str) -> Option<u32> {
        self.state.lock().sandboxes.get(id).and_then(|s| s.idle_timeout_secs)
    }

    /// The ids of the images made.
    pub fn image_ids(&self) -> Vec<String> {
        self.state.lock().images.values().map(|i| i.id.clone()).collect()
    }

    /// Ends what is due now (as the reaper does each quarter second).
    pub async fn reap_now(&self) {
        api::reap_once(&self.state).await;
    }
}
