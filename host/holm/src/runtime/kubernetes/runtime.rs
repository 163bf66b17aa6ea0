//! [`KubernetesRuntime`]: the [`Runtime`] contract on a cluster's API, in
//! plain-pods mode. The client ([`KubeClient`]) is made at the first call
//! (a kubeconfig that does not load is then an error of that call, and
//! the next call tries again), from the settings' kubeconfig and context,
//! else `KUBECONFIG`, `~/.kube/config`, then the in-cluster service
//! account ([`config::load`]).

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use holm_proto::host::{Can, Environment, Place};
use serde_json::Value;
use tokio::sync::OnceCell;

use super::client::{
    ApiError, EXTENSIONS_API, KubeClient, PODS, Resource, SANDBOX_CLAIMS, SECRETS, SERVICES,
};
use super::objects::{self, Pod};
use super::watch::WatchEvent;
use super::{KubeSettings, Mode, config, object_name};
use crate::image::{ImageRequest, Progress};
use crate::runtime::docker::DockerRuntime;
use crate::runtime::{
    Endpoint, ImageSource, LABEL_BOX, LABEL_RUNTIME, Machine, MachineSpec, MachineState, Result,
    Runtime, RuntimeError,
};

/// How long `create` waits for a pod to run (an image pull included)
/// before it removes the box and fails.
pub(super) const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// A `kubernetes` runtime: boxes as Pods in one namespace.
pub struct KubernetesRuntime {
    name: String,
    settings: KubeSettings,
    builder: DockerRuntime,
    client: OnceCell<KubeClient>,
    /// The mode in use: the settings', or what the cluster has ([`Mode::Auto`]).
    mode: OnceCell<Mode>,
}

impl std::fmt::Debug for KubernetesRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubernetesRuntime")
            .field("name", &self.name)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl KubernetesRuntime {
    /// A runtime named `name` on the cluster `settings` reach, whose box
    /// images `builder` builds (the cluster must be able to pull them: on
    /// the stand-in, the local engine's images; docs/runtimes.md).
    pub fn new(name: &str, settings: KubeSettings, builder: DockerRuntime) -> Self {
        Self {
            name: name.to_owned(),
            settings,
            builder,
            client: OnceCell::new(),
            mode: OnceCell::new(),
        }
    }

    pub(super) fn name_str(&self) -> &str {
        &self.name
    }

    pub(super) fn settings(&self) -> &KubeSettings {
        &self.settings
    }

    /// Plain pods or agent-sandbox: the settings' mode, or, for
    /// [`Mode::Auto`], agent-sandbox when the cluster serves its claims.
    async fn mode(&self) -> Result<Mode> {
        self.mode
            .get_or_try_init(|| async {
                match self.settings.mode {
                    Mode::Auto => {
                        let served = self.client().await?.serves(EXTENSIONS_API).await;
                        let served =
                            served.map_err(|e| self.api_error("ask for agent-sandbox", e))?;
                        Ok(if served { Mode::AgentSandbox } else { Mode::Pods })
                    }
                    other => Ok(other),
                }
            })
            .await
            .copied()
    }

    fn unavailable(&self, reason: impl std::fmt::Display) -> RuntimeError {
        RuntimeError::Unavailable { runtime: self.name.clone(), reason: reason.to_string() }
    }

    pub(super) fn api_error(&self, what: &str, e: ApiError) -> RuntimeError {
        match e {
            ApiError::Api(s) => RuntimeError::Engine(format!(
                "kubernetes refused to {what}: {} ({}, {})",
                s.message, s.reason, s.code
            )),
            other => self.unavailable(format!("the API did not answer ({what}): {other}")),
        }
    }

    pub(super) async fn client(&self) -> Result<&KubeClient> {
        let s = &self.settings;
        self.client
            .get_or_try_init(|| async {
                let path = s.kubeconfig.as_deref();
                let config = config::load(path, s.context.as_deref())
                    .map_err(|e| self.unavailable(format!("kubeconfig: {e}")))?;
                KubeClient::new(&config).map_err(|e| self.unavailable(e))
            })
            .await
    }

    pub(super) fn namespace(&self) -> &str {
        &self.settings.namespace
    }

    fn label_selector(&self) -> String {
        format!("{LABEL_BOX},{LABEL_RUNTIME}={}", self.name)
    }

    /// Waits on a watch of the pod until it runs, or fails with why it
    /// cannot (an image that does not pull, an environment that does not
    /// resolve, a container that ended).
    pub(super) async fn wait_running(&self, name: &str) -> Result<Pod> {
        let wait = self.watch_pod(name, "0".to_owned(), |seen| match seen {
            Some(pod) => {
                running_or_failed(&pod).map(|done| done.map(|()| pod).map_err(RuntimeError::Engine))
            }
            None => Some(Err(RuntimeError::Engine(format!("pod {name} was deleted")))),
        });
        tokio::time::timeout(RUN_TIMEOUT, wait).await.unwrap_or_else(|_| {
            Err(RuntimeError::Engine(format!(
                "pod {name} did not run in {} seconds",
                RUN_TIMEOUT.as_secs()
            )))
        })
    }

    /// Waits on a watch until the pod `name` is gone (a pod is deleted
    /// gracefully: answered at once, gone once its containers are).
    pub(super) async fn wait_gone(&self, name: &str) -> Result<()> {
        let client = self.client().await?;
        let found = client.get(self.namespace(), PODS, name).await;
        let Some(pod) = found.map_err(|e| self.api_error("read a pod", e))? else {
            return Ok(());
        };
        let version = Pod::from_value(pod)?.metadata.resource_version.unwrap_or_default();
        let wait = self.watch_pod(name, version, |seen| seen.is_none().then_some(Ok(())));
        tokio::time::timeout(RUN_TIMEOUT, wait).await.unwrap_or_else(|_| {
            Err(RuntimeError::Engine(format!(
                "pod {name} did not go in {} s",
                RUN_TIMEOUT.as_secs()
            )))
        })
    }

    /// Watches the pod `name` from `version`, telling `on` each state seen
    /// (none: the pod is gone) until it answers ([`Self::watch_object`]).
    async fn watch_pod<T>(
        &self,
        name: &str,
        version: String,
        mut on: impl FnMut(Option<Pod>) -> Option<Result<T>>,
    ) -> Result<T> {
        let mut bad = None;
        let done = self
            .watch_object(PODS, name, version, |seen| match seen.map(Pod::from_value).transpose() {
                Ok(pod) => on(pod),
                Err(e) => {
                    bad = Some(e);
                    Some(Err(RuntimeError::Engine(String::new())))
                }
            })
            .await;
        match bad {
            Some(e) => Err(e),
            None => done,
        }
    }

    /// Watches the object `name` of `resource` from `version`, telling `on`
    /// each state seen (none: the object is gone) until it answers. A watch
    /// the server ends (after `timeoutSeconds`) is opened again from the
    /// last version seen, unless it brought no event at all (not even a
    /// bookmark), which fails; one whose version is too old (`410 Gone`)
    /// goes on from the object read again (a relist).
    pub(super) async fn watch_object<T>(
        &self,
        resource: Resource,
        name: &str,
        mut version: String,
        mut on: impl FnMut(Option<Value>) -> Option<Result<T>>,
    ) -> Result<T> {
        let client = self.client().await?;
        let ns = self.namespace();
        let what = resource.plural;
        loop {
            let opened = client.watch(ns, resource, name, &version).await;
            let mut events = opened.map_err(|e| self.api_error("watch", e))?;
            let mut any = false;
            while let Some(event) = events.next().await.map_err(|e| self.api_error("watch", e))? {
                any = true;
                let seen = match event {
                    WatchEvent::Added(o) | WatchEvent::Modified(o) => Some(o),
                    WatchEvent::Deleted(_) => None,
                    WatchEvent::Bookmark(o) => {
                        version = resource_version(&o).unwrap_or(version);
                        continue;
                    }
                    WatchEvent::Error(s) if s.code == 410 => {
                        let got = client.get(ns, resource, name).await;
                        got.map_err(|e| self.api_error("read an object", e))?
                    }
                    WatchEvent::Error(s) => {
                        return Err(RuntimeError::Engine(format!("watch: {}", s.message)));
                    }
                };
                if let Some(v) = &seen {
                    version = resource_version(v).unwrap_or(version);
                }
                if let Some(done) = on(seen) {
                    return done;
                }
            }
            if !any {
                return Err(RuntimeError::Engine(format!(
                    "the watch of {what} {name} ended with no event"
                )));
            }
        }
    }

    async fn create_objects(&self, spec: &MachineSpec) -> Result<Pod> {
        let client = self.client().await?;
        let ns = self.namespace();
        let secret = objects::secret(spec, &self.name);
        let made = client.create(ns, SECRETS, &secret).await;
        made.map_err(|e| self.api_error("create a secret", e))?;
        let pod = objects::pod(spec, &self.name, &self.settings);
        let made = client.create(ns, PODS, &pod).await;
        made.map_err(|e| self.api_error("create a pod", e))?;
        let service = objects::service(spec, &self.name);
        let made = client.create(ns, SERVICES, &service).await;
        made.map_err(|e| self.api_error("create a service", e))?;
        self.wait_running(&object_name(&spec.box_id)).await
    }

    /// The boxes whose labels match `selector`: pods, or claims.
    async fn list_boxes(&self, selector: &str) -> Result<Vec<Machine>> {
        let client = self.client().await?;
        if self.mode().await? == Mode::AgentSandbox {
            let listed = client.list(self.namespace(), SANDBOX_CLAIMS, selector).await;
            let claims = listed.map_err(|e| self.api_error("list SandboxClaims", e))?;
            let mut machines = Vec::with_capacity(claims.len());
            for claim in &claims {
                machines.push(self.claim_to_machine(claim).await?);
            }
            return Ok(machines);
        }
        let listed = client.list(self.namespace(), PODS, selector).await;
        let items = listed.map_err(|e| self.api_error("list pods", e))?;
        items.into_iter().map(|v| Pod::from_value(v).map(to_machine)).collect()
    }
}

/// An object's `metadata.resourceVersion`.
fn resource_version(object: &Value) -> Option<String> {
    object["metadata"]["resourceVersion"].as_str().map(str::to_owned)
}

/// `Some(Ok)` once the pod runs, `Some(Err)` when it will not, `None`
/// while it may yet. A container the kubelet could not create or start
/// (`CreateContainerError`, `RunContainerError`: a port already held, a
/// runtime refusal) counts as will not: the kubelet retries it with a
/// growing back-off, but what made it fail rarely goes, and a create that
/// says why at once beats one that waits out [`RUN_TIMEOUT`].
fn running_or_failed(pod: &Pod) -> Option<std::result::Result<(), String>> {
    let status = pod.status.as_ref()?;
    match status.phase.as_deref() {
        Some("Running") if status.pod_ip.is_some() => return Some(Ok(())),
        Some(phase @ ("Succeeded" | "Failed")) => {
            return Some(Err(format!("the box's pod ended ({phase})")));
        }
        _ => {}
    }
    let waiting = status.container_statuses.iter().flatten().filter_map(|c| {
        let w = c.state.as_ref()?.waiting.as_ref()?;
        Some((w.reason.clone().unwrap_or_default(), w.message.clone().unwrap_or_default()))
    });
    for (reason, message) in waiting {
        if matches!(
            reason.as_str(),
            "ErrImagePull"
                | "ErrImageNeverPull"
                | "ImagePullBackOff"
                | "InvalidImageName"
                | "CreateContainerConfigError"
                | "CreateContainerError"
                | "RunContainerError"
                | "CrashLoopBackOff"
        ) {
            return Some(Err(format!("the box's pod cannot run: {reason}: {message}")));
        }
    }
    None
}

/// The machine a pod is.
pub(super) fn machine(pod: Pod, ports: &[u16]) -> Machine {
    let meta = pod.metadata;
    let mut labels: BTreeMap<String, String> = meta.annotations.unwrap_or_default();
    labels.extend(meta.labels.unwrap_or_default());
    let status = pod.status.unwrap_or_default();
    let state = if meta.deletion_timestamp.is_some() {
        MachineState::Gone
    } else {
        match status.phase.as_deref() {
            Some("Running") => MachineState::Running,
            Some("Succeeded" | "Failed") => MachineState::Gone,
            _ => MachineState::Created,
        }
    };
    let mut endpoints = BTreeMap::new();
    if let (MachineState::Running, Some(ip)) = (state, status.pod_ip.as_deref()) {
        let host = if ip.contains(':') { format!("[{ip}]") } else { ip.to_owned() };
        for port in ports {
            if let Ok(e) = Endpoint::new(&format!("http://{host}:{port}")) {
                endpoints.insert(*port, e);
            }
        }
    }
    Machine {
        id: meta.name.unwrap_or_default(),
        box_id: labels.get(LABEL_BOX).cloned(),
        state,
        endpoints,
        labels,
    }
}

/// The ports of a pod's first container.
pub(super) fn pod_ports(pod: &Pod) -> Vec<u16> {
    let containers = pod.spec.as_ref().map(|s| s.containers.as_slice()).unwrap_or_default();
    containers
        .first()
        .and_then(|c| c.ports.as_ref())
        .map(|ps| ps.iter().filter_map(|p| u16::try_from(p.container_port).ok()).collect())
        .unwrap_or_default()
}

fn to_machine(pod: Pod) -> Machine {
    let ports = pod_ports(&pod);
    machine(pod, &ports)
}

#[async_trait]
impl Runtime for KubernetesRuntime {
    fn name(&self) -> &str {
        &self.name
    }

    fn provider(&self) -> &str {
        crate::runtime::kind::KUBERNETES.name
    }

    fn place(&self) -> Place {
        Place::Remote
    }

    fn environment(&self) -> Environment {
        match self.settings.runtime_class.as_deref() {
            Some(c) if c.contains("kata") => Environment::Microvm,
            _ => Environment::Container,
        }
    }

    fn can(&self) -> Can {
        // Stop and start: agent-sandbox's `Suspended`, which keeps only a
        // box's volumes (ping resolves an `auto` mode first).
        let claims = self.mode.get().copied().unwrap_or(self.settings.mode) == Mode::AgentSandbox;
        Can {
            pause: false,
            stop: claims && self.settings.volume_size.is_some(),
            fork: false,
            browser_profile: false,
            screens: 6,
            wayland: self.settings.runtime_class.is_none(),
            resources: true,
        }
    }

    async fn ping(&self) -> Result<()> {
        let client = self.client().await?;
        if self.settings.mode == Mode::AgentSandbox {
            let served = client.serves(EXTENSIONS_API).await;
            if !served.map_err(|e| self.unavailable(format!("the API did not answer: {e}")))? {
                return Err(self.unavailable(format!(
                    "mode agent-sandbox, but the cluster does not serve {EXTENSIONS_API}: install \
                     kubernetes-sigs/agent-sandbox's extensions, or use mode pods"
                )));
            }
        }
        match client.namespace(self.namespace()).await {
            // `can` then knows the mode in use.
            Ok(Some(_)) => match self.mode().await {
                Err(e @ RuntimeError::Unavailable { .. }) => Err(e),
                Err(e) => Err(self.unavailable(e)),
                Ok(_) => Ok(()),
            },
            Ok(None) => {
                Err(self
                    .unavailable(format!("namespace {} does not exist", self.settings.namespace)))
            }
            Err(e) => Err(self.unavailable(format!("the API did not answer: {e}"))),
        }
    }

    fn image_source(&self) -> ImageSource {
        ImageSource::HostEngine { build_with: self.builder.provider().to_owned() }
    }

    async fn prepare_image(
        &self,
        request: &ImageRequest,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<String> {
        let images = &self.settings.images;
        if images.is_empty() {
            return self.builder.prepare_image(request, progress).await;
        }
        if !request.apps.is_empty() || !request.packages.is_empty() {
            return Err(self.unsupported(
                "boxes with apps or packages: it runs the prebuilt images its table names \
                 (`images`), and builds none",
            ));
        }
        images.get(&request.display).cloned().ok_or_else(|| {
            self.unsupported(&format!(
                "{} boxes: its `images` name none for that display profile",
                request.display
            ))
        })
    }

    async fn create(&self, spec: &MachineSpec) -> Result<Machine> {
        let made = match self.mode().await? {
            Mode::AgentSandbox => self.claim_box(spec).await,
            _ => self.create_objects(spec).await.map(|pod| machine(pod, &spec.ports)),
        };
        if made.is_err() {
            // Nothing of a box that did not start is left behind.
            let _ = self.remove(&object_name(&spec.box_id)).await;
        }
        made
    }

    async fn inspect(&self, id: &str) -> Result<Machine> {
        let claims = self.mode().await? == Mode::AgentSandbox;
        let resource = if claims { SANDBOX_CLAIMS } else { PODS };
        let got = self.client().await?.get(self.namespace(), resource, id).await;
        match got.map_err(|e| self.api_error("read a box", e))? {
            Some(claim) if claims => self.claim_to_machine(&claim).await,
            Some(pod) => Ok(to_machine(Pod::from_value(pod)?)),
            None => Err(RuntimeError::NotFound(id.to_owned())),
        }
    }

    async fn remove(&self, id: &str) -> Result<()> {
        if self.mode().await? == Mode::AgentSandbox {
            return self.remove_claim(id).await;
        }
        let client = self.client().await?;
        let ns = self.namespace();
        let gone = |r: std::result::Result<(), ApiError>, what: &str| match r {
            Err(e) if !e.is_not_found() => Err(self.api_error(what, e)),
            _ => Ok(()),
        };
        gone(client.delete(ns, PODS, id).await, "delete a pod")?;
        self.wait_gone(id).await?;
        gone(client.delete(ns, SERVICES, id).await, "delete a service")?;
        gone(client.delete(ns, SECRETS, id).await, "delete a secret")
    }

    async fn list(&self) -> Result<Vec<Machine>> {
        self.list_boxes(&self.label_selector()).await
    }

    async fn stop(&self, id: &str) -> Result<()> {
        if !self.can().stop {
            return Err(self.unsupported(&format!("stop {id}")));
        }
        self.suspend_claim(id).await
    }

    async fn start(&self, id: &str) -> Result<Machine> {
        if !self.can().stop {
            return Err(self.unsupported(&format!("start {id}")));
        }
        self.resume_claim(id).await
    }

    async fn find(&self, box_id: &str) -> Result<Option<Machine>> {
        let selector = format!("{LABEL_BOX}={box_id},{LABEL_RUNTIME}={}", self.name);
        Ok(self.list_boxes(&selector).await?.into_iter().next())
    }
}

#[cfg(test)]
#[path = "runtime_tests.rs"]
mod tests;
