//! The docker runtime, on bollard.
//!
//! The engine is found the way the docker CLI finds it: `DOCKER_HOST`, else
//! the local socket. Every box is a container named `holm-<box id>`, labelled
//! [`LABEL_BOX`], with its guest port published on 127.0.0.1 at a port the
//! engine chooses. Requests are sent unversioned, so both Debian's engine 20.10
//! (API 1.41) and engines that refuse clients below 1.44 answer.
//!
//! A browser profile is a named volume, `holm-profile-<name>`, labelled
//! [`LABEL_PROFILE`], mounted at [`PROFILE_DIR`]; removing the box leaves it
//! for the next box with the same profile. One container at a time may hold
//! a profile. A box with a profile is stopped (SIGTERM, so Chromium writes
//! its cookies out) before it is removed.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use async_trait::async_trait;
use bollard::Docker;
use bollard::models::VolumeCreateRequest;
use bollard::models::{
    ContainerConfig, ContainerCreateBody, ContainerStateStatusEnum, HostConfig, PortBinding,
    PortMap,
};
use bollard::query_parameters::{
    CommitContainerOptionsBuilder, CreateContainerOptionsBuilder, InspectContainerOptions,
    ListContainersOptionsBuilder, RemoveContainerOptionsBuilder, RemoveImageOptionsBuilder,
    StopContainerOptionsBuilder,
};
use holm_proto::host::{Can, Environment, Place};

use super::{
    ENV_SECRET, LABEL_BOX, LABEL_CREATED, LABEL_EXPIRES, LABEL_FORKED_FROM, LABEL_IDLE,
    LABEL_PROFILE, LABEL_RUNTIME, LABEL_SERVER, LABEL_SPEC, Machine, MachineSpec, MachineState,
    PROFILE_DIR, Result, Runtime, RuntimeError,
};
use crate::image::{ImageRequest, Progress};

/// Boxes as Docker containers.
#[derive(Debug, Clone)]
pub struct DockerRuntime {
    name: String,
    docker: Docker,
    /// The OCI runtime for each box, such as `runsc`.
    isolation: Option<String>,
}

impl DockerRuntime {
    /// Connects to the engine the docker CLI would use (`DOCKER_HOST`,
    /// `DOCKER_CONTEXT`, the current context, the local socket). Nothing is
    /// sent until the first call.
    pub fn connect(name: &str) -> Result<Self> {
        Self::connect_context(name, None)
    }

    /// Connects to the engine of a Docker context (see [`super::docker_context`]).
    pub fn connect_context(name: &str, context: Option<&str>) -> Result<Self> {
        use super::docker_context::{Endpoint, resolve};
        let unavailable =
            |reason: String| RuntimeError::Unavailable { runtime: name.to_owned(), reason };
        let endpoint = resolve(context).map_err(|e| unavailable(e.to_string()))?;
        let docker = match endpoint {
            Endpoint::Defaults => Docker::connect_with_defaults(),
            Endpoint::Unix(path) => {
                Docker::connect_with_unix(&path, 120, bollard::API_DEFAULT_VERSION)
            }
            Endpoint::Http(url) => {
                Docker::connect_with_http(&url, 120, bollard::API_DEFAULT_VERSION)
            }
        }
        .map_err(|e| unavailable(format!("cannot connect to the Docker engine: {e}")))?;
        Ok(Self { name: name.to_owned(), docker, isolation: None })
    }

    /// Runs every box under this OCI runtime (such as `runsc` for gVisor).
    #[must_use]
    pub fn with_isolation(mut self, isolation: Option<String>) -> Self {
        self.isolation = isolation;
        self
    }

    /// The bollard client, for image work on the same engine.
    pub fn docker(&self) -> &Docker {
        &self.docker
    }

    fn engine(&self, e: bollard::errors::Error) -> RuntimeError {
        match e {
            bollard::errors::Error::DockerResponseServerError { status_code: 404, message } => {
                RuntimeError::NotFound(message)
            }
            bollard::errors::Error::DockerResponseServerError { message, .. } => {
                RuntimeError::Engine(message)
            }
            other if is_connect_error(&other) => RuntimeError::Unavailable {
                runtime: self.name.clone(),
                reason: format!("the Docker engine does not answer: {other}"),
            },
            other => RuntimeError::Engine(other.to_string()),
        }
    }
}

fn is_connect_error(e: &bollard::errors::Error) -> bool {
    use bollard::errors::Error as E;
    matches!(
        e,
        E::HyperResponseError { .. }
            | E::IOError { .. }
            | E::SocketNotFoundError(_)
            | E::RequestTimeoutError
    )
}

/// The container name of a box.
pub fn container_name(box_id: &str) -> String {
    format!("holm-{box_id}")
}

/// The image repository of forks: `holm-fork:<new box id>`, removed with
/// the box made from it.
pub const FORK_REPO: &str = "holm-fork";

/// The volume that keeps browser profile `name`.
pub fn profile_volume(name: &str) -> String {
    format!("holm-profile-{name}")
}

impl DockerRuntime {
    /// Makes the profile's volume (labelled, so it can be found) unless it
    /// exists, after checking that no container of another box holds the
    /// profile (a leftover of the same box is replaced on create).
    async fn claim_profile(&self, name: &str, box_id: &str) -> Result<String> {
        let filters =
            HashMap::from([("label".to_owned(), vec![format!("{LABEL_PROFILE}={name}")])]);
        let options = ListContainersOptionsBuilder::default().all(true).filters(&filters).build();
        let holders =
            self.docker.list_containers(Some(options)).await.map_err(|e| self.engine(e))?;
        let others = holders.iter().filter(|c| {
            c.labels.as_ref().and_then(|l| l.get(LABEL_BOX)).map(String::as_str) != Some(box_id)
        });
        if let Some(holder) = others.into_iter().next() {
            let who = holder
                .labels
                .as_ref()
                .and_then(|l| l.get(LABEL_BOX).cloned())
                .unwrap_or_else(|| holder.id.clone().unwrap_or_default());
            return Err(RuntimeError::Conflict(format!(
                "the browser profile {name:?} is in use by box {who}; one box at a time may keep a profile"
            )));
        }
        let volume = profile_volume(name);
        let request = VolumeCreateRequest {
            name: Some(volume.clone()),
            labels: Some(HashMap::from([(LABEL_PROFILE.to_owned(), name.to_owned())])),
            ..VolumeCreateRequest::default()
        };
        // Creating a volume that exists answers the existing one.
        self.docker.create_volume(request).await.map_err(|e| self.engine(e))?;
        Ok(volume)
    }
}

#[async_trait]
impl Runtime for DockerRuntime {
    fn name(&self) -> &str {
        &self.name
    }

    fn provider(&self) -> &str {
        "docker"
    }

    fn place(&self) -> Place {
        Place::Host
    }

    fn environment(&self) -> Environment {
        // runc shares the host kernel; gVisor and Kata are told by `isolation`.
        match self.isolation.as_deref() {
            Some(i) if i.contains("kata") => Environment::Microvm,
            _ => Environment::Container,
        }
    }

    fn can(&self) -> Can {
        Can {
            pause: true,
            stop: true,
            fork: true,
            browser_profile: true,
            screens: 6,
            wayland: false,
            resources: true,
        }
    }

    async fn ping(&self) -> Result<()> {
        self.docker.ping().await.map(drop).map_err(|e| RuntimeError::Unavailable {
            runtime: self.name.clone(),
            reason: format!("the Docker engine does not answer: {e}"),
        })
    }

    async fn prepare_image(
        &self,
        request: &ImageRequest,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<String> {
        Ok(crate::image::ensure_image(&self.docker, request, progress).await?)
    }

    async fn images(&self) -> Result<Vec<holm_proto::host::ImageInfo>> {
        let list = crate::image::list_images(&self.docker).await?;
        Ok(list
            .into_iter()
            .map(|i| holm_proto::host::ImageInfo {
                image: i.tag.unwrap_or(i.id),
                runtime: self.name.clone(),
                apps: i.apps,
                packages: i.packages,
                size: i.size,
                created_at: u64::try_from(i.created).ok().map(|secs| {
                    humantime::format_rfc3339_seconds(
                        std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs),
                    )
                    .to_string()
                }),
            })
            .collect())
    }

    async fn make_base(&self, progress: &mut (dyn FnMut(Progress) + Send)) -> Result<()> {
        crate::image::ensure_base(&self.docker, progress).await?;
        Ok(())
    }

    async fn create(&self, spec: &MachineSpec) -> Result<Machine> {
        let mut labels: HashMap<String, String> = spec.labels.clone().into_iter().collect();
        labels.insert(LABEL_BOX.to_owned(), spec.box_id.clone());
        let mut binds = Vec::new();
        if let Some(profile) = &spec.profile {
            let volume = self.claim_profile(profile, &spec.box_id).await?;
            binds.push(format!("{volume}:{PROFILE_DIR}"));
            labels.insert(LABEL_PROFILE.to_owned(), profile.clone());
        }
        let mut port_bindings = PortMap::new();
        let mut exposed = Vec::new();
        for port in &spec.ports {
            let key = format!("{port}/tcp");
            // An empty host port lets the engine choose a free one.
            port_bindings.insert(
                key.clone(),
                Some(vec![PortBinding {
                    host_ip: Some("127.0.0.1".into()),
                    host_port: Some(String::new()),
                }]),
            );
            exposed.push(key);
        }
        let host_config = HostConfig {
            port_bindings: Some(port_bindings),
            memory: spec.memory_bytes.and_then(|m| i64::try_from(m).ok()),
            nano_cpus: spec.nano_cpus.and_then(|c| i64::try_from(c).ok()),
            runtime: self.isolation.clone(),
            // Chromium needs more shared memory than Docker's 64 MiB default.
            shm_size: Some(512 * 1024 * 1024),
            binds: (!binds.is_empty()).then_some(binds),
            ..HostConfig::default()
        };
        #[allow(deprecated)]
        let body = ContainerCreateBody {
            image: Some(spec.image.clone()),
            env: Some(spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect()),
            labels: Some(labels),
            exposed_ports: Some(exposed),
            host_config: Some(host_config),
            hostname: Some("holm".into()),
            ..ContainerCreateBody::default()
        };
        let name = container_name(&spec.box_id);
        let options = CreateContainerOptionsBuilder::default().name(&name).build();
        let created = match self.docker.create_container(Some(options.clone()), body.clone()).await
        {
            Ok(c) => c,
            // The name is the box's: a container that holds it is a leftover
            // of an earlier try at this same box, such as one the engine
            // finished after the server that asked for it was killed.
            // Replace it.
            Err(bollard::errors::Error::DockerResponseServerError { status_code: 409, .. }) => {
                tracing::info!(box_id = %spec.box_id, "replacing a leftover container of this box");
                self.remove(&name).await?;
                self.docker
                    .create_container(Some(options), body)
                    .await
                    .map_err(|e| self.engine(e))?
            }
            Err(e) => return Err(self.engine(e)),
        };
        if let Err(e) = self.docker.start_container(&created.id, None).await {
            let _ = self.remove(&created.id).await;
            return Err(self.engine(e));
        }
        self.inspect(&created.id).await
    }

    async fn inspect(&self, id: &str) -> Result<Machine> {
        let c = self
            .docker
            .inspect_container(id, None::<InspectContainerOptions>)
            .await
            .map_err(|e| self.engine(e))?;
        let state = match c.state.as_ref().and_then(|s| s.status) {
            Some(ContainerStateStatusEnum::CREATED) => MachineState::Created,
            Some(ContainerStateStatusEnum::RUNNING | ContainerStateStatusEnum::RESTARTING) => {
                MachineState::Running
            }
            Some(ContainerStateStatusEnum::PAUSED) => MachineState::Paused,
            Some(ContainerStateStatusEnum::EXITED | ContainerStateStatusEnum::STOPPING) => {
                MachineState::Stopped
            }
            _ => MachineState::Gone,
        };
        let mut ports = BTreeMap::new();
        if let Some(map) = c.network_settings.as_ref().and_then(|n| n.ports.as_ref()) {
            for (key, bindings) in map {
                let Some(inner) = key.strip_suffix("/tcp").and_then(|p| p.parse::<u16>().ok())
                else {
                    continue;
                };
                let Some(binding) = bindings.as_ref().and_then(|b| b.first()) else { continue };
                let Some(host_port) =
                    binding.host_port.as_deref().and_then(|p| p.parse::<u16>().ok())
                else {
                    continue;
                };
                // Always reach boxes on loopback, whatever the engine reports.
                ports.insert(inner, SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), host_port));
            }
        }
        let labels: BTreeMap<String, String> =
            c.config.and_then(|cfg| cfg.labels).unwrap_or_default().into_iter().collect();
        Ok(Machine {
            id: c.id.unwrap_or_else(|| id.to_owned()),
            box_id: labels.get(LABEL_BOX).cloned(),
            state,
            ports,
            labels,
        })
    }

    async fn remove(&self, id: &str) -> Result<()> {
        // One look at the container serves both questions below.
        let inspected =
            self.docker.inspect_container(id, None::<InspectContainerOptions>).await.ok();
        let config = inspected.as_ref().and_then(|c| c.config.as_ref());
        let state = inspected.as_ref().and_then(|c| c.state.as_ref());
        let running = state.is_some_and(|s| s.running == Some(true) && s.paused != Some(true));
        // A kept profile must be written out: Chromium saves its cookies on a
        // clean exit, which SIGKILL (a forced remove) would not give it.
        if running
            && config.and_then(|c| c.labels.as_ref()).is_some_and(|l| l.contains_key(LABEL_PROFILE))
        {
            let options = StopContainerOptionsBuilder::default().t(10).build();
            if let Err(e) = self.docker.stop_container(id, Some(options)).await {
                tracing::warn!(container = id, error = %e, "cannot stop a box with a profile before removing it");
            }
        }
        // A fork's image goes with it: nothing else uses it.
        let image = config.and_then(|c| c.image.clone()).filter(|i| i.starts_with(FORK_REPO));
        let options = RemoveContainerOptionsBuilder::default().force(true).v(true).build();
        let removed = self.docker.remove_container(id, Some(options)).await;
        if let Some(image) = image
            && removed.is_ok()
        {
            // A fork of this fork still holds its layers; untagging is enough.
            let options = RemoveImageOptionsBuilder::default().noprune(false).build();
            if let Err(e) = self.docker.remove_image(&image, Some(options), None).await {
                tracing::debug!(image, error = %e, "the fork's image stays");
            }
        }
        match removed {
            Ok(()) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. }) => {
                Ok(())
            }
            // A removal already under way.
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 409,
                message,
            }) if message.contains("already in progress") => Ok(()),
            Err(e) => Err(self.engine(e)),
        }
    }

    async fn list(&self) -> Result<Vec<Machine>> {
        let filters = HashMap::from([("label".to_owned(), vec![LABEL_BOX.to_owned()])]);
        let options = ListContainersOptionsBuilder::default().all(true).filters(&filters).build();
        let list = self.docker.list_containers(Some(options)).await.map_err(|e| self.engine(e))?;
        let mut out = Vec::new();
        for c in list {
            let Some(id) = c.id else { continue };
            match self.inspect(&id).await {
                Ok(m) => out.push(m),
                Err(RuntimeError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    async fn stop(&self, id: &str) -> Result<()> {
        let options = StopContainerOptionsBuilder::default().t(10).build();
        self.docker.stop_container(id, Some(options)).await.map_err(|e| self.engine(e))
    }

    async fn start(&self, id: &str) -> Result<Machine> {
        self.docker.start_container(id, None).await.map_err(|e| self.engine(e))?;
        self.inspect(id).await
    }

    async fn pause(&self, id: &str) -> Result<()> {
        self.docker.pause_container(id).await.map_err(|e| self.engine(e))
    }

    async fn resume(&self, id: &str) -> Result<()> {
        self.docker.unpause_container(id).await.map_err(|e| self.engine(e))
    }

    async fn fork(&self, id: &str, new_box_id: &str) -> Result<String> {
        // `docker commit` pauses a running container while it copies, so the
        // files are consistent. The engine merges the container's settings
        // into the image's: each one that must not carry over is overridden
        // here, the secret above all, so the image never holds it.
        let env = vec![format!("{ENV_SECRET}=")];
        let labels: HashMap<String, String> = [
            LABEL_BOX,
            LABEL_RUNTIME,
            LABEL_SPEC,
            LABEL_CREATED,
            LABEL_SERVER,
            LABEL_EXPIRES,
            LABEL_IDLE,
            LABEL_FORKED_FROM,
        ]
        .iter()
        .map(|k| ((*k).to_owned(), String::new()))
        // Not `1`: `holm image ls` lists only the images holm built.
        .chain([(crate::image::LABEL_IMAGE.to_owned(), "fork".to_owned())])
        .collect();
        let config = ContainerConfig { env: Some(env), labels: Some(labels), ..Default::default() };
        let options = CommitContainerOptionsBuilder::default()
            .container(id)
            .repo(FORK_REPO)
            .tag(new_box_id)
            .pause(true)
            .build();
        self.docker.commit_container(options, config).await.map_err(|e| self.engine(e))?;
        Ok(format!("{FORK_REPO}:{new_box_id}"))
    }

    async fn find(&self, box_id: &str) -> Result<Option<Machine>> {
        match self.inspect(&container_name(box_id)).await {
            Ok(m) if m.box_id.as_deref() == Some(box_id) => Ok(Some(m)),
            Ok(_) | Err(RuntimeError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn box_secret(&self, id: &str) -> Result<Option<String>> {
        let c = self
            .docker
            .inspect_container(id, None::<InspectContainerOptions>)
            .await
            .map_err(|e| self.engine(e))?;
        let prefix = format!("{ENV_SECRET}=");
        Ok(c.config
            .and_then(|c| c.env)
            .unwrap_or_default()
            .into_iter()
            .find_map(|v| v.strip_prefix(&prefix).map(str::to_owned))
            .filter(|s| !s.is_empty()))
    }
}
