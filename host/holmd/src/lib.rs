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
use crate::service::{Offered, Service};

/// Makes the service for `config`: finds the runtimes, opens the store, and
/// takes back the boxes an earlier server recorded.
pub async fn service(config: &ServerConfig) -> anyhow::Result<Arc<Service>> {
    let mut runtimes = BTreeMap::new();
    let wanted = |name: &str| config.runtimes.as_ref().is_none_or(|r| r.iter().any(|n| n == name));
    if wanted("docker") {
        let docker = DockerRuntime::connect("docker")?;
        runtimes.insert(
            "docker".to_owned(),
            Offered { runtime: Arc::new(docker), lifetimes: Lifetimes::default() },
        );
    }
    if let Some(list) = &config.runtimes {
        let unknown: Vec<&String> =
            list.iter().filter(|n| !runtimes.contains_key(n.as_str())).collect();
        if !unknown.is_empty() {
            anyhow::bail!(
                "HOLM_SERVER_RUNTIMES names runtimes this server does not have: {unknown:?}; it has: docker"
            );
        }
    }
    let default = runtimes.keys().next().cloned().unwrap_or_else(|| "docker".to_owned());
    let store = store::open(&config.storage)
        .await
        .map_err(|e| anyhow::anyhow!("cannot open the {} store: {e}", config.storage.backend()))?;
    let service = Service::new(
        runtimes,
        default,
        store,
        Arc::new(clock::SystemClock),
        config.server_name.clone(),
    );
    let found = service.recover().await?;
    tracing::info!(
        records = found.records,
        taken_back = found.taken_back,
        resumed = found.resumed,
        adopted = found.adopted,
        orphans_removed = found.orphans_removed,
        "took back the boxes"
    );
    Ok(service)
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
