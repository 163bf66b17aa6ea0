//! The holmd the benchmark measures: the real server, in this process, on a
//! runtime and threads of its own (as if it were its own process), on a
//! loopback port with a token and a state directory of its own.
//!
//! Running it in process lets the benchmark read each box's guest URL and
//! secret from the server's records, to measure the same box straight
//! against its guest. Every box it makes is removed at the end, and, should
//! the benchmark stop early, when this value is dropped.

use std::sync::{Arc, Mutex};

use anyhow::Context;
use holm::runtime::Runtime;
use holm::runtime::docker::DockerRuntime;
use holm_client::{BoxClient, Client};
use holmd::service::Service;

/// A running holmd.
pub struct Server {
    /// A client of it, with its token.
    pub client: Client,
    url: String,
    token: String,
    server_name: String,
    service: Arc<Service>,
    made: Mutex<Vec<String>>,
    every: Mutex<Vec<String>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("client", &self.client).finish_non_exhaustive()
    }
}

impl Server {
    /// Starts holmd on 127.0.0.1 and a port the system chooses, with the
    /// docker runtime and `more` (which `runtimes_file` may add).
    pub fn start(more: &[String], runtimes_file: &str) -> anyhow::Result<Self> {
        let dir =
            tempfile::tempdir().context("make a state directory for the benchmark's holmd")?;
        let file = dir.path().join("runtimes.toml");
        std::fs::write(&file, runtimes_file).context("write the benchmark's runtimes file")?;
        let runtimes = std::iter::once("docker".to_owned())
            .chain(more.iter().cloned())
            .collect::<Vec<_>>()
            .join(",");
        let token = holm::ids::new_secret();
        let state_dir = dir.path().join("state");
        // Its own server name, so no other holmd on this engine takes its
        // boxes back, and no runtimes file or vendor from the environment.
        let server_name = format!("holm-bench-{}", &token[..12]);
        let config = holmd::config::ServerConfig::from_lookup(|key| match key {
            "HOLM_SERVER_ADDR" => Some("127.0.0.1:0".to_owned()),
            "HOLM_SERVER_TOKEN" => Some(token.clone()),
            "HOLM_STATE_DIR" => Some(state_dir.display().to_string()),
            "HOLM_SERVER_RUNTIMES" => Some(runtimes.clone()),
            "HOLM_SERVER_CONFIG" => Some(file.display().to_string()),
            "HOLM_SERVER_NAME" => Some(server_name.clone()),
            _ => None,
        })
        .map_err(|e| anyhow::anyhow!("the benchmark's holmd configuration: {e}"))?;
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("holmd".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_multi_thread()
                    .thread_name("holmd-worker")
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(anyhow::anyhow!("start holmd's runtime: {e}")));
                        return;
                    }
                };
                rt.block_on(async move {
                    let started = async {
                        let service = holmd::service(&config).await?;
                        let listener = tokio::net::TcpListener::bind(config.addr).await?;
                        let url = format!("http://{}", listener.local_addr()?);
                        anyhow::Ok((service, listener, url))
                    };
                    let (service, listener, url) = match started.await {
                        Ok(s) => s,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok((Arc::clone(&service), url)));
                    let shutdown = async move {
                        let _ = stopped.await;
                    };
                    if let Err(e) = holmd::serve(listener, service, config.token, shutdown).await {
                        tracing::error!(error = %e, "holmd stopped");
                    }
                });
            })
            .context("start holmd's thread")?;
        let (service, url) =
            ready_rx.recv().context("holmd's thread ended before it listened")??;
        Ok(Self {
            client: Client::direct(&url, Some(&token)),
            server_name,
            url,
            token,
            service,
            made: Mutex::new(Vec::new()),
            every: Mutex::new(Vec::new()),
            stop: Some(stop),
            thread: Some(thread),
            _dir: dir,
        })
    }

    /// Another client of it, with a connection pool of its own.
    pub fn another_client(&self) -> Client {
        Client::direct(&self.url, Some(&self.token))
    }

    /// Notes a box this benchmark made, so it is removed at the end.
    pub fn made(&self, id: &str) {
        self.made.lock().unwrap_or_else(|e| e.into_inner()).push(id.to_owned());
        self.every.lock().unwrap_or_else(|e| e.into_inner()).push(id.to_owned());
    }

    /// Every box this benchmark made, removed or not.
    pub fn every_box(&self) -> Vec<String> {
        self.every.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// A client of box `id` through holmd.
    pub fn through_holmd(&self, id: &str) -> BoxClient {
        self.client.boxed(id)
    }

    /// A client straight against box `id`'s guest, with the secret from
    /// the server's record; `None` until the box's machine runs.
    pub fn straight(&self, id: &str) -> Option<BoxClient> {
        let record = self.service.get(id).ok()?.record();
        Some(BoxClient::at(record.guest.as_ref()?, &record.secret))
    }

    /// Viewer URL `view` (holmd's) of box `id`, straight to the guest's
    /// viewer port instead: the same screen, mode and token.
    pub fn straight_viewer(&self, id: &str, view: &str) -> Option<String> {
        let record = self.service.get(id).ok()?.record();
        let port = record.viewer.as_ref()?.url().trim_end_matches('/').to_owned();
        let place = view.split_once("/viewer/")?.1;
        Some(format!("{port}/{place}"))
    }

    /// Where box `id` is: its state, and whether its guest URL is known.
    pub fn state(&self, id: &str) -> Option<(holm_proto::host::BoxState, bool)> {
        let record = self.service.get(id).ok()?.record();
        Some((record.state, record.guest.is_some()))
    }

    /// Removes box `id` through the API.
    pub async fn remove(&self, id: &str) -> anyhow::Result<()> {
        self.client.remove_box(id).await.with_context(|| format!("remove box {id}"))?;
        self.made.lock().unwrap_or_else(|e| e.into_inner()).retain(|m| m != id);
        Ok(())
    }

    /// Removes the boxes made since `every_box` answered `before` (a phase
    /// that stopped early leaves them; the rest are still in use).
    pub async fn remove_since(&self, before: usize) {
        let since: Vec<String> = self.every_box().into_iter().skip(before).collect();
        let removals = since.iter().filter(|id| self.still_has(id)).map(|id| self.remove(id));
        for r in futures_util::future::join_all(removals).await {
            if let Err(e) = r {
                eprintln!("bench: {e:#}");
            }
        }
    }

    fn still_has(&self, id: &str) -> bool {
        self.made.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|m| m == id)
    }

    /// Removes every box this benchmark made and still has.
    pub async fn remove_all(&self) {
        let ids = self.made.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let removals = ids.iter().map(|id| self.remove(id));
        for r in futures_util::future::join_all(removals).await {
            if let Err(e) = r {
                eprintln!("bench: {e:#}");
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        // Boxes still listed here were left by a benchmark that stopped early,
        // and a warm pool's boxes are never the API's to remove: take their
        // containers down on the engine, by name and by this server's label.
        let ids = std::mem::take(&mut *self.made.lock().unwrap_or_else(|e| e.into_inner()));
        let name = self.server_name.clone();
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                return;
            };
            rt.block_on(async {
                let engines =
                    [DockerRuntime::connect("docker"), holm::runtime::podman::connect("podman")];
                for engine in engines.into_iter().flatten() {
                    for id in &ids {
                        let _ = engine.remove(&holm::runtime::docker::container_name(id)).await;
                    }
                    for m in engine.list().await.unwrap_or_default() {
                        if m.labels.get(holm::runtime::LABEL_SERVER) == Some(&name) {
                            let _ = engine.remove(&m.id).await;
                        }
                    }
                }
            });
        })
        .join();
    }
}
