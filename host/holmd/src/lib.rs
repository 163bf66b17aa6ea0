//! `holmd`: the holm server.
//!
//! It offers boxes over REST under `/v1` ([`api`]) and over MCP at `/mcp`
//! (`holm_mcp`, a frontend over the REST API, mounted by [`serve_with`]), on
//! the runtimes it finds at start, keeping its records in a [`store`]. The
//! domain ([`service`]) knows nothing of HTTP, and reads time through a
//! [`clock`].

pub mod api;
pub mod clock;
pub mod config;
mod mcp;
pub mod registry;
pub mod runtimes_file;
pub mod service;
pub mod store;
pub mod traces;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use axum::serve::ListenerExt;
use holm::runtime::docker::DockerRuntime;
use holm::spec::Lifetimes;
use tokio::net::TcpListener;

use crate::config::ServerConfig;
use crate::runtimes_file::{FileError, RuntimeTable, RuntimesFile};
use crate::service::{Offered, RemoteSetup, Service, lifetimes_with};

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
    let wanted = |name: &str| config.runtimes.as_ref().is_none_or(|r| r.iter().any(|n| n == name));
    let mut runtimes = BTreeMap::new();
    // Discovery: each host runtime whose engine answers; one named in
    // HOLM_SERVER_RUNTIMES is offered even when it does not answer now.
    let docker_table = file.runtimes.get("docker");
    if wanted("docker") && docker_table.and_then(|t| t.enabled) != Some(false) {
        let offered = docker_offered("docker", docker_table, &file_err)?;
        match offered.runtime.ping().await {
            Ok(()) => {
                runtimes.insert("docker".to_owned(), offered);
            }
            Err(e) if config.runtimes.is_some() => {
                tracing::warn!(error = %e, "docker does not answer now; offered because HOLM_SERVER_RUNTIMES names it");
                runtimes.insert("docker".to_owned(), offered);
            }
            Err(e) => tracing::info!(error = %e, "docker does not answer; not offered"),
        }
    }
    // Runtimes the file adds on an engine.
    for t in file.runtimes.values().filter(|t| t.adds) {
        if t.enabled == Some(false) || !wanted(&t.name) {
            continue;
        }
        match t.kind.as_str() {
            "docker" => {
                runtimes.insert(t.name.clone(), docker_offered(&t.name, Some(t), &file_err)?);
            }
            other => {
                return Err(file_err(
                    Some(&t.name),
                    Some("provider"),
                    format!("{other} has no adapter in this build yet; use docker"),
                ));
            }
        }
    }
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
    let file_lifetimes = file
        .runtimes
        .values()
        .filter(|t| runtimes_file::REMOTE_KINDS.contains(&t.kind.as_str()))
        .map(|t| (t.name.clone(), (t.lifetime, t.max_lifetime)))
        .collect();
    let setup = RemoteSetup { secret_key, env: config.sandboxes.clone(), file_lifetimes };
    let store = store::open(&config.storage)
        .await
        .map_err(|e| anyhow::anyhow!("cannot open the {} store: {e}", config.storage.backend()))?;
    let service = Service::with_remotes(
        runtimes,
        default,
        store,
        Arc::new(clock::SystemClock),
        config.server_name.clone(),
        setup,
    );
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

/// Makes the error for a table and a field of the runtimes file.
type FileErr<'a> = &'a dyn Fn(Option<&str>, Option<&str>, String) -> anyhow::Error;

/// A Docker runtime named `name`, with the settings of its table.
fn docker_offered(
    name: &str,
    table: Option<&RuntimeTable>,
    file_err: FileErr<'_>,
) -> anyhow::Result<Offered> {
    let context = table.and_then(|t| t.context.as_deref());
    let docker = DockerRuntime::connect_context(name, context).map_err(|e| match context {
        Some(_) => {
            let why = match e {
                holm::runtime::RuntimeError::Unavailable { reason, .. } => reason,
                other => other.to_string(),
            };
            file_err(Some(name), Some("context"), why)
        }
        None => anyhow::Error::new(e),
    })?;
    let docker = docker.with_isolation(table.and_then(|t| t.isolation.clone()));
    let mut offered = Offered::new(Arc::new(docker), Lifetimes::default());
    if let Some(t) = table {
        offered.lifetimes = lifetimes_with(Lifetimes::default(), t.lifetime, t.max_lifetime);
        offered.memory_bytes = t.memory;
        offered.nano_cpus = t.cpus.map(|c| (c * 1e9).round() as u64);
    }
    Ok(offered)
}

/// How long a stopping server waits for open requests (streams, followed
/// output, long waits) before it stops anyway.
const DRAIN: std::time::Duration = std::time::Duration::from_secs(10);

/// Serves the API on `listener` until `shutdown` resolves, then writes
/// everything the service holds in memory to the store. Boxes keep running.
pub async fn serve(
    listener: TcpListener,
    service: Arc<Service>,
    token: Option<String>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, service, ServeOptions { token, public_url: None }, shutdown).await
}

/// What [`serve_with`] needs besides the service.
#[derive(Clone, Default)]
pub struct ServeOptions {
    /// The bearer token every route but the public ones needs. Never logged.
    pub token: Option<String>,
    /// `HOLM_PUBLIC_URL`: the address clients use behind a proxy.
    pub public_url: Option<String>,
}

impl std::fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeOptions")
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("public_url", &self.public_url)
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
    let app = api::app_with(Arc::clone(&service), options.token, mcp);
    let (stopping_tx, mut stopping) = tokio::sync::watch::channel(false);
    let graceful = async move {
        shutdown.await;
        stop.cancel();
        let _ = stopping_tx.send(true);
    };
    let server =
        axum::serve(listener.tap_io(holm_http::no_delay), app).with_graceful_shutdown(graceful);
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
