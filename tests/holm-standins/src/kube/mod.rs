//! A stand-in of the Kubernetes API server, for the part holm's
//! `kubernetes` runtime uses, over plain HTTP on loopback.
//!
//! From the Kubernetes API conventions and the API server's behaviour as
//! its official clients (kubectl 1.37, the Python client 37) read it:
//! discovery (`/version`, `/api`, `/api/v1`, `/apis`, `/apis/{g}/{v}`, the
//! OpenAPI v3 index whose writes take `fieldValidation`); namespaced Pods,
//! Services, Secrets, ConfigMaps and `networking.k8s.io/v1`
//! NetworkPolicies, and Namespaces (`default`, `kube-system`,
//! `kube-public`, `kube-node-lease` exist); agent-sandbox's custom
//! resources (`agents.x-k8s.io/v1beta1` Sandbox, reconciled by
//! [`sandboxes`]; `extensions.agents.x-k8s.io/v1beta1` SandboxTemplate,
//! SandboxWarmPool and SandboxClaim, reconciled by [`pools`]); create, get, list with label
//! and field selectors, replace, patch (merge, strategic merge, JSON
//! patch), delete (a Pod gracefully), deletecollection; one
//! `resourceVersion` counter, a stale one on a write answered 409
//! `Conflict`; `?watch=1` from any version; each kind's defaults and
//! `Invalid` checks; server-side field validation (`fieldValidation`
//! `Strict`, `Warn`, `Ignore`); every refusal a `Status` object
//! ([`status`]). Over plain HTTP no credentials are sent (client-go sends
//! a bearer token only over TLS), so nobody is authenticated.
//!
//! Each Pod is a container on the local Docker engine ([`pods`]), reached
//! at `status.podIP`, a loopback address of its own. Services are stored
//! with a cluster IP but route nothing; NetworkPolicies are stored and
//! enforce nothing; no built-in controller, scheduler, admission plugin,
//! RBAC or server-side apply is run (see docs/kubernetes-standin.md).

mod api;
mod kinds;
mod objects;
mod patch;
pub mod pods;
pub mod pools;
pub mod sandboxes;
mod schema;
mod selector;
mod status;
mod store;
mod table;
mod watch;
mod write;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::common::{Controls, random_id};
use crate::engine::Engine;

/// The namespaces every cluster has.
pub const NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

#[derive(Debug)]
pub(crate) struct Inner {
    pub store: store::Store,
    /// Each running pod's container, by namespace and name.
    pub containers: HashMap<(String, String), String>,
    services_made: u32,
}

/// The pod addresses of every stand-in in this process: one sequence,
/// from a random start, so two stand-ins side by side (tests run in
/// parallel) never give two pods one address and one port (the second
/// container would fail to publish it).
static POD_ADDRESSES: std::sync::OnceLock<std::sync::atomic::AtomicU32> =
    std::sync::OnceLock::new();

/// The `n`th pod address: `127.N.X.Y`, `N` from 64 to 253, `Y` from 2
/// to 251 (no network or broadcast look-alikes).
fn pod_address(n: u32) -> String {
    const PER_NET: u32 = 256 * 250;
    let (net, x, y) = (64 + (n / PER_NET) % 190, (n / 250) % 256, n % 250 + 2);
    format!("127.{net}.{x}.{y}")
}

/// Every stand-in of this process, for a test that knows a box only by
/// a label ([`labelled_pod`]); a stand-in dropped is skipped.
static RUNNING: Mutex<Vec<std::sync::Weak<State>>> = Mutex::new(Vec::new());

/// A pod some stand-in of this process runs, and its Docker container
/// while it runs.
#[derive(Debug, Clone)]
pub struct FoundPod {
    /// The pod as stored.
    pub pod: Value,
    /// The Docker container running it.
    pub container: Option<String>,
}

/// The pod of the box whose label `key` is `value`, on any stand-in of
/// this process: the pod so labelled, or the pod of the Sandbox that the
/// `SandboxClaim` so labelled holds (a pool's pods carry no box's label).
pub fn labelled_pod(key: &str, value: &str) -> Option<FoundPod> {
    let running: Vec<Arc<State>> = {
        let all = RUNNING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        all.iter().filter_map(std::sync::Weak::upgrade).collect()
    };
    let pods = kinds::find("", "v1", "pods").expect("pods are served");
    let claims = kinds::find("extensions.agents.x-k8s.io", "v1beta1", "sandboxclaims")
        .expect("claims are served");
    let has = |o: &Value| o["metadata"]["labels"][key] == value;
    running.iter().find_map(|state| {
        let inner = state.lock();
        let named = |o: &Value| -> Option<(String, String)> {
            let m = &o["metadata"];
            Some((m["namespace"].as_str()?.to_owned(), m["name"].as_str()?.to_owned()))
        };
        let (ns, name): (String, String) =
            match inner.store.list(pods, None).iter().find(|o| has(o)) {
                Some(pod) => named(pod)?,
                None => {
                    let claim = inner.store.list(claims, None).into_iter().find(|o| has(o))?;
                    let ns = claim["metadata"]["namespace"].as_str()?.to_owned();
                    (ns, claim["status"]["sandbox"]["name"].as_str()?.to_owned())
                }
            };
        let pod = inner.store.get(&(pods, ns.clone(), name.clone()))?.clone();
        Some(FoundPod { pod, container: inner.containers.get(&(ns, name)).cloned() })
    })
}

impl Inner {
    /// The next pod's address, one no other pod of this process has had
    /// (until the sequence wraps, after some twelve million).
    pub fn next_pod_ip(&mut self) -> String {
        let next = POD_ADDRESSES.get_or_init(|| {
            let start = u32::from_str_radix(&crate::common::token()[..8], 16).unwrap_or(0);
            std::sync::atomic::AtomicU32::new(start)
        });
        pod_address(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }

    /// The next Service's cluster IP, from `10.96.0.0/12`.
    pub fn next_cluster_ip(&mut self) -> String {
        self.services_made += 1;
        let n = self.services_made;
        format!("10.96.{}.{}", n / 250, n % 250 + 2)
    }
}

/// The stand-in's state, shared by its API and its pods' tasks.
#[derive(Debug)]
pub(crate) struct State {
    pub engine: Engine,
    pub controls: Controls,
    /// `host:port` of the API.
    pub server: String,
    pub inner: Mutex<Inner>,
    pub tasks: crate::common::Tasks,
    changes: tokio::sync::watch::Sender<u64>,
}

impl State {
    /// Tells the watches the store changed.
    pub fn changed(&self) {
        let rv = self.lock().store.rv();
        self.changes.send_replace(rv);
    }

    /// A receiver told of every change from now on.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }
}

/// The Kubernetes API stand-in, on one loopback port.
#[derive(Debug)]
pub struct KubeStandin {
    /// The API server's URL (`http://127.0.0.1:PORT`).
    pub url: String,
    /// The calls it answered (its keys are unused: see above).
    pub controls: Controls,
    state: Arc<State>,
}

crate::common::standin_parts!(KubeStandin, State, Inner);

impl KubeStandin {
    /// Starts a stand-in with the usual namespaces.
    pub async fn start() -> Self {
        let owner = format!("kube-{}", random_id(10));
        let (listener, url) = crate::common::listen().await;
        let controls = Controls::new("");
        let inner = Inner {
            store: store::Store::starting_at(1000),
            containers: HashMap::new(),
            services_made: 0,
        };
        let state = Arc::new(State {
            engine: Engine::connect(&owner),
            controls: controls.clone(),
            server: url.trim_start_matches("http://").to_owned(),
            inner: Mutex::new(inner),
            tasks: crate::common::Tasks::default(),
            changes: tokio::sync::watch::channel(0).0,
        });
        {
            let ns = kinds::find("", "v1", "namespaces").expect("namespaces are served");
            let mut inner = state.lock();
            for name in NAMESPACES {
                let mut o = json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name } });
                let mut none = String::new;
                let fresh = objects::Fresh {
                    now: crate::common::Clock::rfc3339(crate::common::Clock::default().now()),
                    uid: crate::common::token(),
                    next_ip: &mut none,
                };
                objects::create(ns, &mut o, name, fresh).expect("a namespace");
                inner.store.put(&(ns, String::new(), (*name).to_owned()), o);
            }
        }
        let task = crate::common::serve(listener, api::router(Arc::clone(&state)));
        state.tasks.add([task]);
        sandboxes::spawn(&state);
        let mut running = RUNNING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        running.retain(|s| s.strong_count() > 0);
        running.push(Arc::downgrade(&state));
        Self { url, controls, state }
    }

    /// Writes a kubeconfig for this stand-in (cluster, an anonymous
    /// user, context `standin` with namespace `default`) into `dir` and
    /// answers its path, for `KUBECONFIG`.
    pub fn write_kubeconfig(&self, dir: &Path) -> PathBuf {
        let config = json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{ "name": "standin", "cluster": { "server": self.url } }],
            "users": [{ "name": "standin", "user": {} }],
            "contexts": [{ "name": "standin", "context": {
                "cluster": "standin", "user": "standin", "namespace": "default"
            } }],
            "current-context": "standin",
            "preferences": {}
        });
        let path = dir.join("kubeconfig");
        std::fs::write(&path, config.to_string()).expect("write the kubeconfig");
        path
    }

    /// The stored object `resource` (plural, e.g. `pods` or
    /// `networkpolicies.networking.k8s.io`) `ns/name`.
    pub fn object(&self, resource: &str, ns: &str, name: &str) -> Option<Value> {
        let kind = kinds::KINDS.iter().find(|k| k.qualified() == resource)?;
        self.state.lock().store.get(&(kind, ns.to_owned(), name.to_owned())).cloned()
    }

    /// The Docker container of the pod `ns/name`, while it runs.
    pub fn pod_container(&self, ns: &str, name: &str) -> Option<String> {
        self.state.lock().containers.get(&(ns.to_owned(), name.to_owned())).cloned()
    }

    /// The containers of this stand-in's pods on the engine.
    pub fn engine(&self) -> &Engine {
        &self.state.engine
    }
}

#[cfg(test)]
mod tests {
    use super::pod_address;

    #[test]
    fn pod_addresses_are_loopback_and_none_repeats_until_the_sequence_wraps() {
        let per_net = 256 * 250;
        let mut seen = std::collections::HashSet::new();
        for n in (0..3 * per_net).chain(189 * per_net..190 * per_net) {
            let a: std::net::Ipv4Addr = pod_address(n).parse().expect("an address");
            assert!(a.is_loopback() && a.octets()[1] >= 64 && (2..=251).contains(&a.octets()[3]));
            assert!(seen.insert(a), "{a} given twice");
        }
        assert_eq!(pod_address(190 * per_net), pod_address(0), "wraps after 190 nets");
        assert_eq!(
            pod_address(u32::MAX).parse::<std::net::Ipv4Addr>().map(|a| a.is_loopback()),
            Ok(true)
        );
    }
}
