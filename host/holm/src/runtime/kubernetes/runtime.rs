//! [`KubernetesRuntime`]: the [`Runtime`] contract on a cluster's API, in
//! plain-pods mode. The client is made at the first call (kube-rs needs a
//! Tokio runtime to make one), from the settings' kubeconfig and context,
//! or as `kube::Config::infer` finds one (`KUBECONFIG`, `~/.kube/config`,
//! then the in-cluster service account).

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::{StreamExt, TryStreamExt};
use holm_proto::host::{Can, Environment, Place};
use k8s_openapi::api::core::v1::{Namespace, Pod, Secret, Service};
use kube::api::{Api, DeleteParams, ListParams, PostParams, WatchEvent, WatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use tokio::sync::OnceCell;

use super::{KubeSettings, object_name, objects};
use crate::image::{ImageRequest, Progress};
use crate::runtime::docker::DockerRuntime;
use crate::runtime::{
    Endpoint, ImageSource, LABEL_BOX, LABEL_RUNTIME, Machine, MachineSpec, MachineState, Result,
    Runtime, RuntimeError,
};

/// How long `create` waits for a pod to run (an image pull included)
/// before it removes the box and fails.
const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// A `kubernetes` runtime: boxes as Pods in one namespace.
pub struct KubernetesRuntime {
    name: String,
    settings: KubeSettings,
    builder: DockerRuntime,
    client: OnceCell<kube::Client>,
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
        Self { name: name.to_owned(), settings, builder, client: OnceCell::new() }
    }

    fn unavailable(&self, reason: impl std::fmt::Display) -> RuntimeError {
        RuntimeError::Unavailable { runtime: self.name.clone(), reason: reason.to_string() }
    }

    fn api_error(&self, what: &str, e: kube::Error) -> RuntimeError {
        match e {
            kube::Error::Api(s) => RuntimeError::Engine(format!(
                "kubernetes refused to {what}: {} ({}, {})",
                s.message, s.reason, s.code
            )),
            other => self.unavailable(format!("the API did not answer ({what}): {other}")),
        }
    }

    async fn client(&self) -> Result<kube::Client> {
        let s = &self.settings;
        let client = self
            .client
            .get_or_try_init(|| async {
                let options =
                    KubeConfigOptions { context: s.context.clone(), ..Default::default() };
                let config = match &s.kubeconfig {
                    Some(path) => {
                        let file = Kubeconfig::read_from(path).map_err(|e| {
                            self.unavailable(format!("kubeconfig {}: {e}", path.display()))
                        })?;
                        kube::Config::from_custom_kubeconfig(file, &options)
                            .await
                            .map_err(|e| self.unavailable(format!("kubeconfig: {e}")))?
                    }
                    None if s.context.is_some() => kube::Config::from_kubeconfig(&options)
                        .await
                        .map_err(|e| self.unavailable(format!("kubeconfig: {e}")))?,
                    None => kube::Config::infer()
                        .await
                        .map_err(|e| self.unavailable(format!("no cluster found: {e}")))?,
                };
                kube::Client::try_from(config).map_err(|e| self.unavailable(e))
            })
            .await?;
        Ok(client.clone())
    }

    async fn api<K>(&self) -> Result<Api<K>>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        Ok(Api::namespaced(self.client().await?, &self.settings.namespace))
    }

    fn label_selector(&self) -> String {
        format!("{LABEL_BOX},{LABEL_RUNTIME}={}", self.name)
    }

    /// Waits on a watch of the pod until it runs, or fails with why it
    /// cannot (an image that does not pull, an environment that does not
    /// resolve, a container that ended).
    async fn wait_running(&self, name: &str) -> Result<Pod> {
        let pods: Api<Pod> = self.api().await?;
        let params = WatchParams::default().fields(&format!("metadata.name={name}"));
        let mut events =
            pods.watch(&params, "0").await.map_err(|e| self.api_error("watch", e))?.boxed();
        let wait = async {
            while let Some(event) =
                events.try_next().await.map_err(|e| self.api_error("watch", e))?
            {
                match event {
                    WatchEvent::Added(pod) | WatchEvent::Modified(pod) => {
                        if let Some(done) = running_or_failed(&pod) {
                            return done.map(|()| pod).map_err(RuntimeError::Engine);
                        }
                    }
                    WatchEvent::Deleted(_) => {
                        return Err(RuntimeError::Engine(format!("pod {name} was deleted")));
                    }
                    WatchEvent::Bookmark(_) => {}
                    WatchEvent::Error(e) => {
                        return Err(RuntimeError::Engine(format!("watch: {}", e.message)));
                    }
                }
            }
            Err(RuntimeError::Engine(format!("the watch of pod {name} ended before it ran")))
        };
        tokio::time::timeout(RUN_TIMEOUT, wait).await.unwrap_or_else(|_| {
            Err(RuntimeError::Engine(format!(
                "pod {name} did not run in {} seconds",
                RUN_TIMEOUT.as_secs()
            )))
        })
    }

    /// Waits on a watch until the pod `name` is gone (a pod is deleted
    /// gracefully: answered at once, gone once its containers are).
    async fn wait_gone(&self, pods: &Api<Pod>, name: &str) -> Result<()> {
        let Some(pod) = pods.get_opt(name).await.map_err(|e| self.api_error("read a pod", e))?
        else {
            return Ok(());
        };
        let version = pod.metadata.resource_version.unwrap_or_default();
        let params = WatchParams::default().fields(&format!("metadata.name={name}"));
        let mut events =
            pods.watch(&params, &version).await.map_err(|e| self.api_error("watch", e))?.boxed();
        let wait = async {
            while let Some(event) =
                events.try_next().await.map_err(|e| self.api_error("watch", e))?
            {
                if let WatchEvent::Deleted(_) = event {
                    return Ok(());
                }
            }
            Err(RuntimeError::Engine(format!("the watch of pod {name} ended before it went")))
        };
        tokio::time::timeout(RUN_TIMEOUT, wait).await.unwrap_or_else(|_| {
            Err(RuntimeError::Engine(format!(
                "pod {name} did not go in {} s",
                RUN_TIMEOUT.as_secs()
            )))
        })
    }

    async fn create_objects(&self, spec: &MachineSpec) -> Result<Pod> {
        let post = PostParams::default();
        let secrets: Api<Secret> = self.api().await?;
        let secret = objects::secret(spec, &self.name)?;
        secrets.create(&post, &secret).await.map_err(|e| self.api_error("create a secret", e))?;
        let pods: Api<Pod> = self.api().await?;
        let pod = objects::pod(spec, &self.name, &self.settings)?;
        pods.create(&post, &pod).await.map_err(|e| self.api_error("create a pod", e))?;
        let services: Api<Service> = self.api().await?;
        let service = objects::service(spec, &self.name)?;
        services
            .create(&post, &service)
            .await
            .map_err(|e| self.api_error("create a service", e))?;
        self.wait_running(&object_name(&spec.box_id)).await
    }
}

/// `Some(Ok)` once the pod runs, `Some(Err)` when it will not, `None`
/// while it may yet.
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
                | "ImagePullBackOff"
                | "InvalidImageName"
                | "CreateContainerConfigError"
                | "CrashLoopBackOff"
        ) {
            return Some(Err(format!("the box's pod cannot run: {reason}: {message}")));
        }
    }
    None
}

/// The machine a pod is.
fn machine(pod: Pod, ports: &[u16]) -> Machine {
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
fn pod_ports(pod: &Pod) -> Vec<u16> {
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
        Can {
            pause: false,
            stop: false,
            fork: false,
            browser_profile: false,
            screens: 6,
            wayland: self.settings.runtime_class.is_none(),
            resources: true,
        }
    }

    async fn ping(&self) -> Result<()> {
        let namespaces: Api<Namespace> = Api::all(self.client().await?);
        match namespaces.get_opt(&self.settings.namespace).await {
            Ok(Some(_)) => Ok(()),
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
        self.builder.prepare_image(request, progress).await
    }

    async fn create(&self, spec: &MachineSpec) -> Result<Machine> {
        match self.create_objects(spec).await {
            Ok(pod) => Ok(machine(pod, &spec.ports)),
            Err(e) => {
                // Nothing of a box that did not start is left behind.
                let _ = self.remove(&object_name(&spec.box_id)).await;
                Err(e)
            }
        }
    }

    async fn inspect(&self, id: &str) -> Result<Machine> {
        let pods: Api<Pod> = self.api().await?;
        match pods.get_opt(id).await.map_err(|e| self.api_error("read a pod", e))? {
            Some(pod) => Ok(to_machine(pod)),
            None => Err(RuntimeError::NotFound(id.to_owned())),
        }
    }

    async fn remove(&self, id: &str) -> Result<()> {
        let dp = DeleteParams::default();
        let gone = |r: std::result::Result<_, kube::Error>, what: &str| match r {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.is_not_found() => Ok(()),
            Err(e) => Err(self.api_error(what, e)),
        };
        let pods: Api<Pod> = self.api().await?;
        gone(pods.delete(id, &dp).await.map(drop), "delete a pod")?;
        self.wait_gone(&pods, id).await?;
        let services: Api<Service> = self.api().await?;
        gone(services.delete(id, &dp).await.map(drop), "delete a service")?;
        let secrets: Api<Secret> = self.api().await?;
        gone(secrets.delete(id, &dp).await.map(drop), "delete a secret")
    }

    async fn list(&self) -> Result<Vec<Machine>> {
        let pods: Api<Pod> = self.api().await?;
        let params = ListParams::default().labels(&self.label_selector());
        let list = pods.list(&params).await.map_err(|e| self.api_error("list pods", e))?;
        Ok(list.items.into_iter().map(to_machine).collect())
    }

    async fn find(&self, box_id: &str) -> Result<Option<Machine>> {
        let pods: Api<Pod> = self.api().await?;
        let selector = format!("{LABEL_BOX}={box_id},{LABEL_RUNTIME}={}", self.name);
        let params = ListParams::default().labels(&selector);
        let list = pods.list(&params).await.map_err(|e| self.api_error("list pods", e))?;
        Ok(list.items.into_iter().next().map(to_machine))
    }
}
