//! A runtime whose boxes are reached as a cloud vendor's are: through a
//! proxy that wants a header.
//!
//! [`Gate`] stands for a vendor's port proxy (E2B's, which refuses every
//! request without the sandbox's traffic token with a 403): on a loopback
//! port of its own, it forwards each HTTP request and WebSocket upgrade to
//! one port of a box, and refuses any request without its header. [`Gated`]
//! is the Docker runtime behind such gates: each endpoint Docker answers is
//! replaced by its gate's, with the header. Nothing in holmd, the bridge or
//! `Computer` knows of it, which is the point: they reach the guest through
//! whatever endpoint the runtime answers.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use holm::image::{ImageRequest, Progress};
use holm::runtime::docker::DockerRuntime;
use holm::runtime::{
    Endpoint, ImageSource, Machine, MachineSpec, Result as RtResult, Runtime, RuntimeError,
};
use holm_proto::host::{Can, Environment, Place};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};

/// The header a gate wants.
pub const GATE_HEADER: &str = "x-gate-token";

use holm_standins::forward::{self, Body};

/// A proxy in front of one port of a box that wants [`GATE_HEADER`].
#[derive(Debug)]
pub struct Gate {
    addr: SocketAddr,
    refused: Arc<Mutex<u64>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Gate {
    /// Starts a gate to `target` that wants `token`.
    pub async fn start(target: SocketAddr, token: String) -> Self {
        let refused = Arc::new(Mutex::new(0));
        let counter = Arc::clone(&refused);
        let (addr, task) =
            forward::serve(move |req| pass(req, target, token.clone(), Arc::clone(&counter))).await;
        Self { addr, refused, task }
    }

    /// The gate's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many requests it refused.
    pub fn refused(&self) -> u64 {
        *self.refused.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Forwards one request, or refuses it without the header.
async fn pass(
    req: Request<Incoming>,
    target: SocketAddr,
    token: String,
    refused: Arc<Mutex<u64>>,
) -> Response<Body> {
    if req.headers().get(GATE_HEADER).and_then(|v| v.to_str().ok()) != Some(token.as_str()) {
        *refused.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        let body = r#"{"message":"the gate's token is missing"}"#;
        return forward::respond(StatusCode::FORBIDDEN, "application/json", body);
    }
    match forward::forward(req, target).await {
        Some(answer) => answer,
        None => forward::respond(
            StatusCode::BAD_GATEWAY,
            "application/json",
            r#"{"message":"port is not open"}"#,
        ),
    }
}

/// The Docker runtime with a [`Gate`] before each port it publishes.
#[derive(Debug)]
pub struct Gated {
    docker: DockerRuntime,
    token: String,
    gates: tokio::sync::Mutex<BTreeMap<SocketAddr, Gate>>,
}

impl Gated {
    /// The local engine behind gates that want `token`.
    pub fn new(token: &str) -> Self {
        Self {
            docker: DockerRuntime::connect("gated").expect("docker"),
            token: token.to_owned(),
            gates: tokio::sync::Mutex::default(),
        }
    }

    /// How many requests the gates refused.
    pub async fn refused(&self) -> u64 {
        self.gates.lock().await.values().map(Gate::refused).sum()
    }

    /// `m` with each loopback endpoint replaced by its gate's.
    async fn behind_gates(&self, mut m: Machine) -> RtResult<Machine> {
        let mut gates = self.gates.lock().await;
        for endpoint in m.endpoints.values_mut() {
            let target: SocketAddr =
                endpoint.url().trim_start_matches("http://").parse().map_err(|_| {
                    RuntimeError::Engine(format!("not a loopback endpoint: {endpoint:?}"))
                })?;
            let gate = match gates.entry(target) {
                std::collections::btree_map::Entry::Occupied(e) => e.get().addr(),
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(Gate::start(target, self.token.clone()).await).addr()
                }
            };
            *endpoint = Endpoint::new(&format!("http://{gate}"))
                .and_then(|e| e.with_header(GATE_HEADER, &self.token))
                .map_err(|e| RuntimeError::Engine(e.to_string()))?;
        }
        Ok(m)
    }
}

#[async_trait]
impl Runtime for Gated {
    fn name(&self) -> &str {
        "gated"
    }
    fn provider(&self) -> &str {
        "docker"
    }
    fn place(&self) -> Place {
        Place::Host
    }
    fn environment(&self) -> Environment {
        self.docker.environment()
    }
    fn can(&self) -> Can {
        self.docker.can()
    }
    async fn ping(&self) -> RtResult<()> {
        self.docker.ping().await
    }
    fn image_source(&self) -> ImageSource {
        self.docker.image_source()
    }
    async fn prepare_image(
        &self,
        request: &ImageRequest,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> RtResult<String> {
        self.docker.prepare_image(request, progress).await
    }
    async fn create(&self, spec: &MachineSpec) -> RtResult<Machine> {
        let m = self.docker.create(spec).await?;
        self.behind_gates(m).await
    }
    async fn inspect(&self, id: &str) -> RtResult<Machine> {
        let m = self.docker.inspect(id).await?;
        self.behind_gates(m).await
    }
    async fn remove(&self, id: &str) -> RtResult<()> {
        self.docker.remove(id).await
    }
    async fn list(&self) -> RtResult<Vec<Machine>> {
        let mut out = Vec::new();
        for m in self.docker.list().await? {
            // Only this runtime's boxes are behind gates.
            let ours = m.labels.get(holm::runtime::LABEL_RUNTIME).map(String::as_str);
            out.push(if ours == Some(self.name()) { self.behind_gates(m).await? } else { m });
        }
        Ok(out)
    }
    async fn start(&self, id: &str) -> RtResult<Machine> {
        let m = self.docker.start(id).await?;
        self.behind_gates(m).await
    }
    async fn stop(&self, id: &str) -> RtResult<()> {
        self.docker.stop(id).await
    }
    async fn prune_images(
        &self,
        policy: &holm::image::Prune,
    ) -> RtResult<Vec<holm::image::Pruned>> {
        self.docker.prune_images(policy).await
    }
}
