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
use holm::runtime::{Endpoint, Machine, Result as RtResult, RuntimeError};

use crate::twisted::{Twist, Twisted};
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
/// The gates of a [`Gated`] runtime, one per box port.
#[derive(Debug)]
pub struct Gates {
    token: String,
    gates: tokio::sync::Mutex<BTreeMap<SocketAddr, Gate>>,
}

/// The local engine behind gates: each endpoint Docker answers is replaced
/// by its gate's, with the header.
pub type Gated = Twisted<Gates>;

impl Twisted<Gates> {
    /// The local engine behind gates that want `token`.
    pub fn new(token: &str) -> Self {
        Self::with(Gates { token: token.to_owned(), gates: tokio::sync::Mutex::default() })
    }

    /// How many requests the gates refused.
    pub async fn refused(&self) -> u64 {
        self.twist.gates.lock().await.values().map(Gate::refused).sum()
    }
}

#[async_trait]
impl Twist for Gates {
    fn name(&self) -> &'static str {
        "gated"
    }

    /// `m` with each loopback endpoint replaced by its gate's.
    async fn machine(&self, mut m: Machine) -> RtResult<Machine> {
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
