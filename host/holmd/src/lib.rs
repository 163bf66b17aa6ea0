//! `holmd`: the holm server.
//!
//! It offers boxes over REST under `/v1` ([`api`]), on the runtimes it finds
//! at start, keeping box records in a state directory ([`store`]). The domain
//! ([`service`]) knows nothing of HTTP.

pub mod api;
pub mod config;
pub mod runtimes_file;
pub mod service;
pub mod store;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

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
    let store = store::Store::open(&config.state_dir).map_err(|e| {
        anyhow::anyhow!("cannot open the state directory {}: {e}", config.state_dir.display())
    })?;
    let service = Service::new(runtimes, default, store);
    let n = service.recover().await?;
    if n > 0 {
        tracing::info!(boxes = n, "took back recorded boxes");
    }
    Ok(service)
}

/// Serves the API on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: TcpListener,
    service: Arc<Service>,
    token: Option<String>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    service.spawn_expiry();
    let app = api::app(service, token);
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await
}
