//! The runtime of every engine that speaks the Docker Engine API, on
//! bollard: Docker itself, and podman's Docker-compatible service
//! ([`super::podman`] finds it). One implementation serves both, so what
//! changes how boxes are made (container settings, hardening) changes both;
//! [`Engine`] holds the few places where podman answers differently.
//!
//! Docker is found the way the docker CLI finds it: `DOCKER_HOST`, else
//! the local socket. Every box is a container named `holm-<box id>`, labelled
//! [`LABEL_BOX`], with its guest port published on 127.0.0.1 at a port the
//! engine chooses. Requests are sent unversioned, so both Debian's engine 20.10
//! (API 1.41) and engines that refuse clients below 1.44 answer.
//!
//! **Every box is confined by default** ([`Hardening`]): at most 4096
//! processes and threads, 4 GiB of memory and 2 CPUs unless its placement
//! or its runtime's table says otherwise, `no-new-privileges`, only the
//! capabilities the desktop needs ([`KEPT_CAPABILITIES`]), Docker's own
//! seccomp profile, and on Docker one of holm's networks
//! ([`super::firewall`]): no box reaches another, nor the host's addresses
//! or link-local ones (cloud metadata), unless its runtime's table says
//! `host_access = true`. podman's boxes get the same limits, capabilities
//! and `no-new-privileges`, on podman's default network.
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
use bollard::models::{
    ContainerConfig, ContainerCreateBody, ContainerStateStatusEnum, HostConfig, PortBinding,
    PortMap,
};
use bollard::models::{NetworkCreateRequest, VolumeCreateRequest};
use bollard::query_parameters::{
    CommitContainerOptionsBuilder, CreateContainerOptionsBuilder, InspectContainerOptions,
    InspectNetworkOptions, ListContainersOptionsBuilder, RemoveContainerOptionsBuilder,
    RemoveImageOptionsBuilder, StopContainerOptionsBuilder,
};
use holm_proto::host::{Can, Environment, Place};

use super::{
    ENV_SECRET_SHA256, Endpoint, ImageSource, LABEL_BOX, LABEL_CREATED, LABEL_EXPIRES,
    LABEL_FORKED_FROM, LABEL_IDLE, LABEL_PROFILE, LABEL_RUNTIME, LABEL_SERVER, LABEL_SPEC, Machine,
    MachineSpec, MachineState, PROFILE_DIR, Result, Runtime, RuntimeError, firewall,
};
use crate::image::{ImageRequest, Progress};

/// The engine behind the Docker Engine API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// Docker's `dockerd`.
    Docker,
    /// podman's service (`podman system service`), rootful or rootless.
    Podman {
        /// Whether the service runs as a user rather than root.
        rootless: bool,
        /// Whether the host's cgroups are v2 only, which a rootless podman
        /// needs for memory and CPU limits and for pause.
        cgroup2: bool,
    },
}

impl Engine {
    /// The engine's name, which is the runtime's provider.
    pub fn name(self) -> &'static str {
        match self {
            Self::Docker => "docker",
            Self::Podman { .. } => "podman",
        }
    }
}

/// Boxes as containers on an engine that speaks the Docker Engine API.
#[derive(Debug, Clone)]
pub struct DockerRuntime {
    name: String,
    docker: Docker,
    engine: Engine,
    /// Where the engine listens, for messages.
    address: String,
    /// How to start the engine, said when it does not answer.
    start_hint: Option<String>,
    /// The OCI runtime for each box, such as `runsc`.
    isolation: Option<String>,
    /// How boxes are confined.
    hardening: Hardening,
}

/// The capabilities a box keeps, of the ones Docker gives by default: the
/// guest (root) hands files to the desktop user and back (`CHOWN`,
/// `DAC_OVERRIDE`, `FOWNER`, `FSETID`), drops to that user (`SETUID`,
/// `SETGID`), signals its processes (`KILL`), and programs in the box may
/// serve on low ports (`NET_BIND_SERVICE`). Dropped: `MKNOD`, `NET_RAW`
/// (forged packets on the box's network), `SETFCAP`, `SETPCAP`,
/// `SYS_CHROOT`, `AUDIT_WRITE`.
pub const KEPT_CAPABILITIES: &[&str] =
    &["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "NET_BIND_SERVICE"];
/// A box's memory unless its placement or runtime says otherwise.
pub const DEFAULT_MEMORY_BYTES: u64 = 4 << 30;
/// A box's CPUs unless its placement or runtime says otherwise, in
/// billionths.
pub const DEFAULT_NANO_CPUS: u64 = 2_000_000_000;
/// A box's processes and threads unless its placement or runtime says
/// otherwise: a desktop with Chromium on six screens runs under a thousand.
pub const DEFAULT_PIDS_LIMIT: u32 = 4096;
/// How a runtime's boxes are confined, from its table in the runtimes file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hardening {
    /// The most processes and threads of a box whose placement names none.
    pub pids_limit: u32,
    /// Boxes may reach the host's addresses and link-local ones.
    pub host_access: bool,
    /// Set-user-id programs gain nothing (`no-new-privileges`).
    pub no_new_privileges: bool,
    /// Capabilities beyond [`KEPT_CAPABILITIES`].
    pub cap_add: Vec<String>,
    /// A seccomp profile (its JSON) or `unconfined`; `None` is the engine's.
    pub seccomp: Option<String>,
}

impl Default for Hardening {
    fn default() -> Self {
        Self {
            pids_limit: DEFAULT_PIDS_LIMIT,
            host_access: false,
            no_new_privileges: true,
            cap_add: Vec::new(),
            seccomp: None,
        }
    }
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
        use super::docker_context::{EngineAddress, resolve};
        let unavailable =
            |reason: String| RuntimeError::Unavailable { runtime: name.to_owned(), reason };
        let endpoint = resolve(context).map_err(|e| unavailable(e.to_string()))?;
        let docker = match endpoint {
            EngineAddress::Defaults => Docker::connect_with_defaults(),
            EngineAddress::Unix(path) => {
                Docker::connect_with_unix(&path, 120, bollard::API_DEFAULT_VERSION)
            }
            EngineAddress::Http(url) => {
                Docker::connect_with_http(&url, 120, bollard::API_DEFAULT_VERSION)
            }
        }
        .map_err(|e| unavailable(format!("cannot connect to the Docker engine: {e}")))?;
        Ok(Self {
            name: name.to_owned(),
            docker,
            engine: Engine::Docker,
            address: "the Docker engine".to_owned(),
            start_hint: None,
            isolation: None,
            hardening: Hardening::default(),
        })
    }

    /// A runtime on `engine`'s Docker-compatible API at `docker`; `address`
    /// names where it listens and `start_hint` how to start it, in
    /// messages. [`super::podman::connect`] uses it.
    pub fn on_engine(
        name: &str,
        docker: Docker,
        engine: Engine,
        address: String,
        start_hint: Option<String>,
    ) -> Self {
        Self {
            name: name.to_owned(),
            docker,
            engine,
            address,
            start_hint,
            isolation: None,
            hardening: Hardening::default(),
        }
    }

    /// The engine behind the API.
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// The OCI runtime each box runs on, when the runtimes file set one.
    pub fn isolation(&self) -> Option<&str> {
        self.isolation.as_deref()
    }

    /// The OCI runtime the engine runs a container on when none is asked
    /// for (`GET /info`'s `DefaultRuntime`).
    pub async fn default_oci_runtime(&self) -> Result<Option<String>> {
        let info = self.docker.info().await.map_err(|e| self.engine_error(e))?;
        Ok(info.default_runtime)
    }

    /// The OCI runtimes the engine has (`GET /info`'s `Runtimes`), to check
    /// an `isolation` against before any box asks for it.
    pub async fn oci_runtimes(&self) -> Result<Vec<String>> {
        let info = self.docker.info().await.map_err(|e| self.engine_error(e))?;
        let mut names: Vec<String> = info.runtimes.unwrap_or_default().into_keys().collect();
        names.sort();
        Ok(names)
    }

    /// Confines boxes as `hardening` says.
    #[must_use]
    pub fn with_hardening(mut self, hardening: Hardening) -> Self {
        self.hardening = hardening;
        self
    }

    /// Makes the network boxes join, and on [`firewall::BOXES`] the
    /// firewall rules that keep them from the host, unless they exist.
    /// `None` on podman: its boxes join podman's default network (holm's
    /// networks are Docker bridges with `enable_icc=false`, which podman's
    /// network backends do not offer; docs/security.md says what that
    /// leaves open).
    async fn network(&self) -> Result<Option<&'static str>> {
        if self.engine != Engine::Docker {
            return Ok(None);
        }
        let name = if self.hardening.host_access { firewall::HOST_ACCESS } else { firewall::BOXES };
        if self.docker.inspect_network(name, None::<InspectNetworkOptions>).await.is_err() {
            let request = NetworkCreateRequest {
                name: name.to_owned(),
                driver: Some("bridge".to_owned()),
                options: Some(HashMap::from([
                    ("com.docker.network.bridge.name".to_owned(), name.to_owned()),
                    ("com.docker.network.bridge.enable_icc".to_owned(), "false".to_owned()),
                ])),
                labels: Some(HashMap::from([("holm.network".to_owned(), "1".to_owned())])),
                ..NetworkCreateRequest::default()
            };
            match self.docker.create_network(request).await {
                Ok(_) => tracing::info!(network = name, "made holm's box network"),
                // Another server made it meanwhile.
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 409, ..
                }) => {}
                Err(e) => return Err(self.engine_error(e)),
            }
        }
        if !self.hardening.host_access {
            let guarded = tokio::task::spawn_blocking(firewall::ensure)
                .await
                .map_err(|e| RuntimeError::Engine(e.to_string()))?;
            guarded.map_err(|e| RuntimeError::Unavailable {
                runtime: self.name.clone(),
                reason: format!(
                    "cannot keep boxes from the host's addresses ({e}): run holmd as root or with \
                     CAP_NET_ADMIN, or set host_access = true in this runtime's table of the \
                     runtimes file"
                ),
            })?;
        }
        Ok(Some(name))
    }

    /// The confinement part of a box's host configuration.
    fn confine(&self, spec: &MachineSpec, host: &mut HostConfig) {
        let h = &self.hardening;
        // A rootless podman on cgroup v1 limits nothing (`can` says so).
        if can(self.engine).resources {
            host.memory = i64::try_from(spec.memory_bytes.unwrap_or(DEFAULT_MEMORY_BYTES)).ok();
            host.nano_cpus = i64::try_from(spec.nano_cpus.unwrap_or(DEFAULT_NANO_CPUS)).ok();
            host.pids_limit = Some(i64::from(spec.pids_limit.unwrap_or(h.pids_limit)));
        }
        host.log_config = Some(super::disk::log_config(self.engine));
        host.cap_drop = Some(vec!["ALL".to_owned()]);
        let mut caps: Vec<String> = KEPT_CAPABILITIES.iter().map(|c| (*c).to_owned()).collect();
        if self.engine != Engine::Docker {
            // podman's seccomp profile lets the desktop user make a user
            // namespace, so Chromium runs its own sandbox, which chroots:
            // without SYS_CHROOT it aborts at start.
            caps.push("SYS_CHROOT".to_owned());
        }
        caps.extend(h.cap_add.iter().cloned());
        host.cap_add = Some(caps);
        let mut security = Vec::new();
        if h.no_new_privileges {
            security.push("no-new-privileges:true".to_owned());
        }
        if let Some(profile) = &h.seccomp {
            security.push(format!("seccomp={profile}"));
        }
        host.security_opt = (!security.is_empty()).then_some(security);
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

    pub(super) fn engine_error(&self, e: bollard::errors::Error) -> RuntimeError {
        match e {
            bollard::errors::Error::DockerResponseServerError { status_code: 404, message } => {
                RuntimeError::NotFound(message)
            }
            bollard::errors::Error::DockerResponseServerError { message, .. } => {
                RuntimeError::Engine(message)
            }
            other if is_connect_error(&other) => self.not_answering(&other),
            other => RuntimeError::Engine(other.to_string()),
        }
    }
}

impl DockerRuntime {
    fn not_answering(&self, e: &bollard::errors::Error) -> RuntimeError {
        let hint =
            self.start_hint.as_deref().map(|h| format!("; start it with {h}")).unwrap_or_default();
        RuntimeError::Unavailable {
            runtime: self.name.clone(),
            reason: format!("{} does not answer: {e}{hint}", self.address),
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

/// What boxes on `engine` can do, whatever their OCI runtime.
///
/// A rootless podman on cgroup v1 cannot limit memory or CPUs, nor freeze
/// a container for pause (it has no cgroup of its own there). Wayland runs
/// under gVisor's `runsc` too (sway's headless backend draws in memory;
/// the shared box suite runs there on both profiles).
pub fn can(engine: Engine) -> Can {
    let cgroups = match engine {
        Engine::Docker | Engine::Podman { rootless: false, .. } => true,
        Engine::Podman { rootless: true, cgroup2 } => cgroup2,
    };
    Can {
        pause: cgroups,
        stop: true,
        fork: true,
        browser_profile: true,
        screens: 6,
        wayland: true,
        resources: cgroups,
    }
}

/// An image reference as the engine answers it, in the form holm names
/// images: podman qualifies short names (`localhost/holm-box:…`,
/// `docker.io/library/holm-fork:…`), Docker does not.
pub fn short_image_name(name: &str) -> &str {
    name.strip_prefix("localhost/")
        .or_else(|| name.strip_prefix("docker.io/library/"))
        .unwrap_or(name)
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

/// The instructions a fork's commit applies: the secret emptied, holm's
/// labels emptied, and the image marked as a fork (not `1`: `holm image ls`
/// lists only the images holm built).
fn fork_changes() -> String {
    let mut lines = vec![format!("ENV {ENV_SECRET_SHA256}=")];
    for label in [
        LABEL_BOX,
        LABEL_RUNTIME,
        LABEL_SPEC,
        LABEL_CREATED,
        LABEL_SERVER,
        LABEL_EXPIRES,
        LABEL_IDLE,
        LABEL_FORKED_FROM,
    ] {
        lines.push(format!("LABEL {label}=\"\""));
    }
    lines.push(format!("LABEL {}=fork", crate::image::LABEL_IMAGE));
    lines.join("\n")
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
            self.docker.list_containers(Some(options)).await.map_err(|e| self.engine_error(e))?;
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
        self.docker.create_volume(request).await.map_err(|e| self.engine_error(e))?;
        Ok(volume)
    }
}

#[async_trait]
impl Runtime for DockerRuntime {
    fn name(&self) -> &str {
        &self.name
    }

    fn provider(&self) -> &str {
        self.engine.name()
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
        can(self.engine)
    }

    async fn ping(&self) -> Result<()> {
        self.docker.ping().await.map(drop).map_err(|e| self.not_answering(&e))
    }

    fn image_source(&self) -> ImageSource {
        ImageSource::Engine
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
                display: i.display,
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

    async fn prune_images(
        &self,
        policy: &crate::image::Prune,
    ) -> Result<Vec<crate::image::Pruned>> {
        Ok(crate::image::prune(&self.docker, policy).await?)
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
                    host_ip: Some(
                        if spec.public_ports.contains(port) { "0.0.0.0" } else { "127.0.0.1" }
                            .into(),
                    ),
                    host_port: Some(String::new()),
                }]),
            );
            exposed.push(key);
        }
        let network = self.network().await?;
        let mut host_config = HostConfig {
            port_bindings: Some(port_bindings),
            network_mode: network.map(str::to_owned),
            runtime: self.isolation.clone(),
            // Chromium needs more shared memory than Docker's 64 MiB default.
            shm_size: Some(512 * 1024 * 1024),
            binds: (!binds.is_empty()).then_some(binds),
            ..HostConfig::default()
        };
        self.confine(spec, &mut host_config);
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
                    .map_err(|e| self.engine_error(e))?
            }
            Err(e) => return Err(self.engine_error(e)),
        };
        if let Err(e) = self.docker.start_container(&created.id, None).await {
            let _ = self.remove(&created.id).await;
            return Err(self.engine_error(e));
        }
        self.inspect(&created.id).await
    }

    async fn guest_ended(&self, id: &str) -> Option<String> {
        super::ended::in_container(&self.docker, id).await
    }

    async fn inspect(&self, id: &str) -> Result<Machine> {
        let c = self
            .docker
            .inspect_container(id, None::<InspectContainerOptions>)
            .await
            .map_err(|e| self.engine_error(e))?;
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
        let mut endpoints = BTreeMap::new();
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
                let addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), host_port);
                endpoints.insert(inner, Endpoint::loopback(addr));
            }
        }
        let labels: BTreeMap<String, String> =
            c.config.and_then(|cfg| cfg.labels).unwrap_or_default().into_iter().collect();
        Ok(Machine {
            id: c.id.unwrap_or_else(|| id.to_owned()),
            box_id: labels.get(LABEL_BOX).cloned(),
            state,
            endpoints,
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
        let image = config
            .and_then(|c| c.image.as_deref())
            .filter(|i| short_image_name(i).starts_with(FORK_REPO))
            .map(str::to_owned);
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
            Err(e) => Err(self.engine_error(e)),
        }
    }

    async fn list(&self) -> Result<Vec<Machine>> {
        let filters = HashMap::from([("label".to_owned(), vec![LABEL_BOX.to_owned()])]);
        let options = ListContainersOptionsBuilder::default().all(true).filters(&filters).build();
        let list =
            self.docker.list_containers(Some(options)).await.map_err(|e| self.engine_error(e))?;
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
        self.docker.stop_container(id, Some(options)).await.map_err(|e| self.engine_error(e))
    }

    async fn stop_now(&self, id: &str) -> Result<()> {
        let options = StopContainerOptionsBuilder::default().t(0).build();
        self.docker.stop_container(id, Some(options)).await.map_err(|e| self.engine_error(e))
    }

    async fn start(&self, id: &str) -> Result<Machine> {
        self.docker.start_container(id, None).await.map_err(|e| self.engine_error(e))?;
        self.inspect(id).await
    }

    async fn pause(&self, id: &str) -> Result<()> {
        self.docker.pause_container(id).await.map_err(|e| self.engine_error(e))
    }

    async fn resume(&self, id: &str) -> Result<()> {
        self.docker.unpause_container(id).await.map_err(|e| self.engine_error(e))
    }

    async fn fork(&self, id: &str, new_box_id: &str) -> Result<String> {
        // A commit pauses a running container while it copies, so the files
        // are consistent. The engine keeps the container's settings in the
        // image: each one that must not carry over is overridden, the secret
        // above all, so the image never holds it. The overrides go as
        // Dockerfile instructions (`changes`), one a line, which Docker and
        // podman both apply; podman ignores a commit's config body.
        let changes = fork_changes();
        let options = CommitContainerOptionsBuilder::default()
            .container(id)
            .repo(FORK_REPO)
            .tag(new_box_id)
            .pause(true)
            .changes(&changes)
            .build();
        self.docker
            .commit_container(options, ContainerConfig::default())
            .await
            .map_err(|e| self.engine_error(e))?;
        Ok(format!("{FORK_REPO}:{new_box_id}"))
    }

    async fn disk_used(&self, id: &str) -> Result<Option<u64>> {
        self.writable_layer(id).await.map(Some)
    }

    async fn find(&self, box_id: &str) -> Result<Option<Machine>> {
        match self.inspect(&container_name(box_id)).await {
            Ok(m) if m.box_id.as_deref() == Some(box_id) => Ok(Some(m)),
            Ok(_) | Err(RuntimeError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wayland_is_offered_on_every_engine() {
        assert!(can(Engine::Docker).wayland);
        assert!(can(Engine::Podman { rootless: false, cgroup2: false }).wayland);
        assert!(can(Engine::Podman { rootless: true, cgroup2: false }).wayland);
    }
}
