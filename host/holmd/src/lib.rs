//! `holmd`: the holm server.
//!
//! It offers boxes over REST under `/v1` ([`api`]) and over MCP at `/mcp`
//! (`holm_mcp`, a frontend over the REST API, mounted by [`serve_with`]), on
//! the runtimes it finds at start, keeping its records in a [`store`]. The
//! domain ([`service`]) knows nothing of HTTP, and reads time through a
//! [`clock`].

pub mod allocator;
pub mod api;
pub mod clock;
pub mod config;
mod discovery;
mod mcp;
pub mod registry;
pub mod runtimes_file;
pub mod service;
pub mod store;
pub mod timeline;
pub mod traces;
pub mod vars;

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::config::ServerConfig;
use crate::runtimes_file::{FileError, RuntimesFile};
use crate::service::{Parts, RemoteSetup, Service};

/// Makes the service for `config`: reads the runtimes file, finds the
/// runtimes, opens the store, reads the remote runtimes, and takes back the
/// boxes an earlier server recorded. A mistake in the file stops it here,
/// with the file, the table and the field.
pub async fn service(config: &ServerConfig) -> anyhow::Result<Arc<Service>> {
    let path = config.config_file.clone().unwrap_or_default();
    let file = match &config.config_file {
        Some(p) => runtimes_file::read(p).map_err(anyhow::Error::new)?,
        None => RuntimesFile::default(),
    };
    let file_err = |table: Option<&str>, field: Option<&str>, message: String| {
        anyhow::Error::new(FileError {
            file: path.clone(),
            table: table.map(|t| format!("runtimes.{t}")),
            field: field.map(str::to_owned),
            message,
        })
    };
    let runtimes = discovery::host_runtimes(&file, config.runtimes.as_deref(), &file_err).await?;
    if let Some(list) = &config.runtimes {
        let unknown: Vec<&String> =
            list.iter().filter(|n| !runtimes.contains_key(n.as_str())).collect();
        if !unknown.is_empty() {
            let has: Vec<&String> = runtimes.keys().collect();
            anyhow::bail!(
                "HOLM_SERVER_RUNTIMES names runtimes this server does not have: {unknown:?}; it has: {has:?}"
            );
        }
    }
    let env_names: Vec<&str> = config.sandboxes.iter().map(|s| s.provider.as_str()).collect();
    let default = match &file.default {
        Some(d) if runtimes.contains_key(d) || env_names.contains(&d.as_str()) => d.clone(),
        Some(d) => {
            let mut has: Vec<&str> = runtimes.keys().map(String::as_str).collect();
            has.extend(&env_names);
            return Err(file_err(
                None,
                Some("default"),
                format!("{d:?} is not a runtime this server offers; it offers: {}", has.join(", ")),
            ));
        }
        None if runtimes.contains_key("docker") => "docker".to_owned(),
        None => runtimes.keys().next().cloned().unwrap_or_else(|| "docker".to_owned()),
    };
    let secret_key = registry::SecretKey::from_config(
        config.secret_key.as_deref(),
        config.secret_file.as_deref(),
    )
    .map_err(anyhow::Error::msg)?;
    let remote_tables = || {
        file.runtimes
            .values()
            .filter(|t| holm::runtime::kind::kind(&t.kind).is_some_and(|k| k.is_vendor()))
    };
    let file_lifetimes =
        remote_tables().map(|t| (t.name.clone(), (t.lifetime, t.max_lifetime))).collect();
    let file_fields = remote_tables()
        .filter(|t| !t.endpoints.is_empty() || t.allow_private_addresses.is_some())
        .map(|t| {
            let mut fields: serde_json::Map<String, serde_json::Value> = t
                .endpoints
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                .collect();
            if let Some(allow) = t.allow_private_addresses {
                let field = holm::runtime::remote::ALLOW_PRIVATE_FIELD;
                fields.insert(field.to_owned(), allow.into());
            }
            (t.name.clone(), fields)
        })
        .collect();
    let setup =
        RemoteSetup { secret_key, env: config.sandboxes.clone(), file_lifetimes, file_fields };
    let store = store::open(&config.storage)
        .await
        .map_err(|e| anyhow::anyhow!("cannot open the {} store: {e}", config.storage.backend()))?;
    let service = Service::from_parts(Parts {
        runtimes,
        default_runtime: default,
        store,
        clock: Arc::new(clock::SystemClock),
        server_name: config.server_name.clone(),
        remote_setup: setup,
        limits: config.limits.with_file_max_boxes(file.max_boxes),
        shared_store: config.shared_store,
    });
    service.keep_recordings(config.state_dir.join("recordings"));
    let remotes = service.load_remotes().await?;
    let found = service.recover().await?;
    tracing::info!(
        records = found.records,
        taken_back = found.taken_back,
        resumed = found.resumed,
        adopted = found.adopted,
        orphans_removed = found.orphans_removed,
        remote_runtimes = remotes,
        "took back the boxes"
    );
    Ok(service)
}

/// How long a stopping server waits for open requests (streams, followed
/// output, long waits) before it stops anyway.
const DRAIN: std::time::Duration = std::time::Duration::from_secs(10);

/// The most connections holmd holds open at once.
pub const MAX_CONNECTIONS: usize = 512;

/// Serves the API on `listener` until `shutdown` resolves, then writes
/// everything the service holds in memory to the store. Boxes keep running.
pub async fn serve(
    listener: TcpListener,
    service: Arc<Service>,
    token: Option<String>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, service, ServeOptions { token, ..ServeOptions::default() }, shutdown).await
}

/// What [`serve_with`] needs besides the service.
#[derive(Clone)]
pub struct ServeOptions {
    /// The bearer token every route but the public ones needs. Never logged.
    pub token: Option<String>,
    /// `HOLM_PUBLIC_URL`: the address clients use behind a proxy.
    pub public_url: Option<String>,
    /// The header-read, idle and connection limits of the listener.
    pub limits: holm_http::serve::Limits,
    /// How long a forwarded request that is not a stream may take, whole.
    pub forward_timeout: std::time::Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            token: None,
            public_url: None,
            limits: holm_http::serve::Limits::with_connections(MAX_CONNECTIONS),
            forward_timeout: api::forward::DEFAULT_TIMEOUT,
        }
    }
}

impl std::fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeOptions")
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("public_url", &self.public_url)
            .field("limits", &self.limits)
            .field("forward_timeout", &self.forward_timeout)
            .finish()
    }
}

/// Serves REST under `/v1` and MCP at `/mcp` on `listener` until `shutdown`
/// resolves.
pub async fn serve_with(
    listener: TcpListener,
    service: Arc<Service>,
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // Ends with this future, also when it is dropped rather than finished.
    let _background = AbortOnDrop(service.spawn_background());
    let bind = listener.local_addr()?;
    // MCP's sessions and streams end with the server, or an open SSE stream
    // would hold the graceful shutdown forever.
    let stop = tokio_util::sync::CancellationToken::new();
    let mcp = mcp::routes(bind, options.public_url.clone(), options.token.as_deref(), stop.clone());
    let app_options = api::AppOptions {
        token: options.token,
        edge: Arc::new(holm_http::Edge::new(bind, options.public_url.as_deref())),
        forward_timeout: options.forward_timeout,
        public_url: options.public_url.clone(),
    };
    let app = api::app_with(Arc::clone(&service), app_options, mcp);
    let (stopping_tx, mut stopping) = tokio::sync::watch::channel(false);
    let graceful = async move {
        shutdown.await;
        stop.cancel();
        let _ = stopping_tx.send(true);
    };
    let server = holm_http::serve::serve(listener, app, options.limits, graceful);
    let result = tokio::select! {
        r = server => r,
        () = async {
            let _ = stopping.wait_for(|s| *s).await;
            tokio::time::sleep(DRAIN).await;
        } => {
            tracing::warn!("requests were still open {DRAIN:?} after the signal; stopping anyway");
            Ok(())
        }
    };
    service.close().await;
    result
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
