//! The runtime contract: what holm needs from a place that runs boxes.
//!
//! It is deliberately small, because the guest inside the box does all the
//! desktop work. A runtime says who it is ([`Runtime::name`],
//! [`Runtime::provider`], [`Runtime::place`], [`Runtime::environment`]),
//! what it can do ([`Runtime::can`], [`Runtime::lifetimes`]), how it gets
//! its images ([`Runtime::image_source`], [`Runtime::prepare_image`]), and
//! runs machines: this image with the guest as entrypoint and this
//! environment, these ports made reachable. **How the host reaches a port is
//! the runtime's answer** ([`Machine::endpoints`]: a loopback port, or a
//! vendor's proxy URL with the headers it needs and how WebSockets pass), so
//! holmd, the bridge and [`crate::Computer`] reach every runtime's guest the
//! same way. Stop, start, pause, resume and fork are answered where
//! [`Runtime::can`] says so. ARCHITECTURE.md ("The runtime contract") says
//! what a new runtime implements and where it is registered.

pub mod absent;
#[cfg(feature = "daytona")]
pub mod daytona;
pub mod disk;
pub mod docker;
pub mod docker_context;
#[cfg(feature = "e2b")]
pub mod e2b;
pub mod ended;
pub mod firewall;
pub mod kind;
pub mod kubernetes;
pub mod microsandbox;
#[cfg(feature = "modal")]
pub mod modal;
pub mod podman;
pub mod remote;
#[cfg(feature = "runtime-cloud")]
pub mod runtime_cloud;
#[cfg(feature = "vercel")]
pub mod vercel;

use std::collections::BTreeMap;
use std::fmt;
use std::time::SystemTime;

use async_trait::async_trait;
pub use holm_client::{Endpoint, EndpointError, WebSockets};
use holm_proto::guest::{BRIDGE_PORT, DEFAULT_GUEST_PORT};
use holm_proto::host::{Can, Environment, Place};

use crate::image::{ImageRequest, Progress};
use crate::spec::{Lifetimes, Resolved};

/// The label every holm box carries, with the box id as its value.
pub const LABEL_BOX: &str = "holm.box";
/// The label naming the runtime a box was created on.
pub const LABEL_RUNTIME: &str = "holm.runtime";
/// The label carrying the box's spec (JSON; never a secret).
pub const LABEL_SPEC: &str = "holm.spec";
/// The label carrying the box's creation time (RFC 3339).
pub const LABEL_CREATED: &str = "holm.created";
/// The label naming the browser profile a box keeps (see [`MachineSpec::profile`]).
pub const LABEL_PROFILE: &str = "holm.profile";
/// Where a kept browser profile is mounted in the box: screen 0's Chromium
/// user data directory (the guest's `HOLM_CHROMIUM_PROFILE`).
pub const PROFILE_DIR: &str = "/holm/profile";
/// The label naming the server that made the box (`HOLM_SERVER_NAME`), so a
/// server takes back only its own boxes from an engine others share.
pub const LABEL_SERVER: &str = "holm.server";
/// The label carrying the end of the box's lifetime when it was made
/// (RFC 3339), so a server that lost its records still ends it on time.
pub const LABEL_EXPIRES: &str = "holm.expires";
/// The label carrying the box's idle timeout in seconds, when it has one.
pub const LABEL_IDLE: &str = "holm.idle_timeout_secs";
/// The label naming the box a forked box was copied from.
pub const LABEL_FORKED_FROM: &str = "holm.forked_from";
/// The environment variable that carries the SHA-256 of the box secret to
/// the guest. The secret itself is never in a machine's configuration: a
/// fork's image (`docker commit`) keeps the configuration of the container
/// it was made from, and the engine shows it to whoever inspects either.
pub const ENV_SECRET_SHA256: &str = "HOLM_BOX_SECRET_SHA256";

/// The container engines a name selects with their defaults, for the
/// library and the CLI (holmd reads the runtimes file as well): the kinds
/// driven as [`kind::Driver::Engine`].
pub fn container_engines() -> Vec<&'static str> {
    kind::KINDS
        .iter()
        .filter(|k| matches!(k.driver, kind::Driver::Engine))
        .map(|k| k.name)
        .collect()
}

/// The container engine `name` (one of [`container_engines`]) with its
/// defaults, or `None` for any other name. Nothing is sent until the first
/// call.
pub fn container_engine(name: &str) -> Option<Result<docker::DockerRuntime>> {
    match name {
        "docker" => Some(docker::DockerRuntime::connect("docker")),
        "podman" => Some(podman::connect("podman")),
        _ => None,
    }
}

/// What to run.
#[derive(Clone, PartialEq, Eq)]
pub struct MachineSpec {
    /// The box this machine is.
    pub box_id: String,
    /// The image, prepared with [`Runtime::prepare_image`].
    pub image: String,
    /// The environment of the entrypoint. May hold the box secret: never log it.
    pub env: Vec<(String, String)>,
    /// Labels; [`LABEL_BOX`] is added by the runtime.
    pub labels: BTreeMap<String, String>,
    /// Ports inside the box the host must reach; the runtime answers an
    /// endpoint for each ([`Machine::endpoints`]).
    pub ports: Vec<u16>,
    /// Those of [`MachineSpec::ports`] a host engine publishes on every
    /// interface rather than on loopback (the viewer port of a box whose
    /// viewer policy says `bind: any`). A vendor's runtime reaches every
    /// port through its own proxy and ignores this.
    pub public_ports: Vec<u16>,
    /// Memory limit in bytes.
    pub memory_bytes: Option<u64>,
    /// CPU limit in billionths of a CPU.
    pub nano_cpus: Option<u64>,
    /// The most processes and threads (the runtime's default when `None`).
    pub pids_limit: Option<u32>,
    /// A browser profile to keep at [`PROFILE_DIR`], on storage that
    /// outlives the machine (a named volume on Docker). Only when
    /// [`Runtime::can`] says `browser_profile`.
    pub profile: Option<String>,
    /// When the box ends: a runtime that ends machines itself (a cloud
    /// vendor's timeout) makes the machine with this deadline, so no server
    /// has to be up to end it. `None`: the runtime's default lifetime.
    /// With an idle timeout it is the earlier of the lifetime's end and the
    /// idle timeout from now.
    pub deadline: Option<SystemTime>,
    /// The box's idle timeout, for a runtime whose vendor ends an idle
    /// machine itself but cannot move a deadline (Modal's
    /// `idle_timeout_secs`); `None`: none.
    pub idle_timeout_secs: Option<u64>,
    /// The end of the box's lifetime, ignoring the idle timeout: such a
    /// runtime's hard deadline. `None`: [`MachineSpec::deadline`].
    pub expires_at: Option<SystemTime>,
}

impl fmt::Debug for MachineSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The environment holds the box secret, so only its names are shown.
        let env: Vec<&str> = self.env.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("MachineSpec")
            .field("box_id", &self.box_id)
            .field("image", &self.image)
            .field("env", &env)
            .field("labels", &self.labels)
            .field("ports", &self.ports)
            .field("memory_bytes", &self.memory_bytes)
            .field("nano_cpus", &self.nano_cpus)
            .field("pids_limit", &self.pids_limit)
            .field("profile", &self.profile)
            .field("deadline", &self.deadline)
            .finish()
    }
}

/// Where a machine is in its life, as the runtime sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MachineState {
    /// Made, not started.
    Created,
    /// Running.
    Running,
    /// Paused with memory kept.
    Paused,
    /// Stopped with files kept.
    Stopped,
    /// Gone, or ending.
    Gone,
}

/// A machine, as the runtime reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// The runtime's id for it (a container id on Docker).
    pub id: String,
    /// The box it is, from its label.
    pub box_id: Option<String>,
    /// Its state.
    pub state: MachineState,
    /// How the host reaches each port of [`MachineSpec::ports`] while the
    /// machine runs: a loopback port on a host engine, a vendor's proxy URL
    /// with its headers. A start may move them.
    pub endpoints: BTreeMap<u16, Endpoint>,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
}

impl Machine {
    /// How the guest's API is reached.
    pub fn guest(&self) -> Option<&Endpoint> {
        self.endpoints.get(&DEFAULT_GUEST_PORT)
    }

    /// How the Chromium bridge is reached.
    pub fn bridge(&self) -> Option<&Endpoint> {
        self.endpoints.get(&BRIDGE_PORT)
    }

    /// How the viewers (pages and RFB over WebSocket) are reached.
    pub fn viewer(&self) -> Option<&Endpoint> {
        self.endpoints.get(&holm_proto::viewer::VIEWER_PORT)
    }
}

/// How long boxes may live on a runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LifetimeLimits {
    /// The lifetimes a server offers unless its runtimes file sets them.
    pub offered: Lifetimes,
    /// The longest a box can live at all, where the runtime ends boxes
    /// itself (a vendor's maximum sandbox life): no setting may go above it.
    pub hard_max_secs: Option<u64>,
}

/// Where a runtime's box images come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageSource {
    /// Built from the bundled Dockerfile on the engine that runs the boxes,
    /// and run from there (docker; podman and nerdctl alike). Such a runtime
    /// also makes the air-gapped base ([`Runtime::make_base`]).
    Engine,
    /// Built on a host engine (the runtimes file's `build_with`) and handed
    /// to the runtime once (smolvm, microsandbox).
    HostEngine {
        /// The engine that builds.
        build_with: String,
    },
    /// Built by the vendor from the bundled Dockerfile and the files sent
    /// to it (an E2B template, Vercel's registry, Daytona, Modal).
    Vendor,
}

/// What a runtime call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The engine cannot be reached.
    #[error("{runtime} is not available: {reason}")]
    Unavailable {
        /// The runtime.
        runtime: String,
        /// Why.
        reason: String,
    },
    /// The machine does not exist.
    #[error("machine {0} does not exist")]
    NotFound(String),
    /// The runtime cannot do this.
    #[error("the {runtime} runtime cannot {what}")]
    Unsupported {
        /// The runtime.
        runtime: String,
        /// What was asked.
        what: String,
    },
    /// Something the request needs is in use, such as a browser profile
    /// that another box keeps.
    #[error("{0}")]
    Conflict(String),
    /// Preparing the image failed.
    #[error(transparent)]
    Image(#[from] crate::image::ImageError),
    /// The engine refused or failed.
    #[error("{0}")]
    Engine(String),
    /// A cloud vendor refused or failed, after the tries its call allows.
    #[error("runtime {runtime}: {error}")]
    Vendor {
        /// The runtime.
        runtime: String,
        /// What the vendor said: status, its code and message, its request
        /// id; never the key.
        error: remote::VendorError,
    },
}

/// A runtime result.
pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;

/// A place that runs boxes. Every runtime runs the same box image (x86_64
/// Linux, the static guest as entrypoint); [`Runtime::can`] says which
/// display profiles and lifecycle changes it takes.
#[async_trait]
pub trait Runtime: Send + Sync + fmt::Debug + 'static {
    // ---- Who it is -------------------------------------------------------

    /// The name boxes use to pick it.
    fn name(&self) -> &str;
    /// The engine or vendor behind it, such as `docker`.
    fn provider(&self) -> &str;
    /// Host or remote.
    fn place(&self) -> Place;
    /// Container, microVM, VM or unknown.
    fn environment(&self) -> Environment;

    // ---- What it can do --------------------------------------------------

    /// What it can do: a request it cannot do is refused before anything
    /// starts.
    fn can(&self) -> Can;
    /// How long its boxes may live: one hour unless asked, at most a day,
    /// and no hard limit, unless the runtime says otherwise.
    fn lifetimes(&self) -> LifetimeLimits {
        LifetimeLimits::default()
    }
    /// Checks that the engine answers.
    async fn ping(&self) -> Result<()>;
    /// Checks a box against rules of the runtime that [`Runtime::can`] does
    /// not say (a vendor's rules for memory and CPUs), before anything
    /// starts; each problem names its field.
    fn check(&self, resolved: &Resolved) -> std::result::Result<(), Vec<holm_proto::Issue>> {
        let _ = resolved;
        Ok(())
    }

    // ---- Images ----------------------------------------------------------

    /// Where its box images come from.
    fn image_source(&self) -> ImageSource;
    /// Makes the box image for `request` available, building it if needed,
    /// and answers the reference [`Runtime::create`] runs. Progress lines go
    /// to `progress`.
    async fn prepare_image(
        &self,
        request: &ImageRequest,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<String>;
    /// [`Runtime::prepare_image`] for one box: a runtime whose vendor sets
    /// memory and CPUs at the image (an E2B template, a Daytona snapshot)
    /// makes one image per set of apps, packages and resources.
    async fn prepare_image_for(
        &self,
        request: &ImageRequest,
        resolved: &Resolved,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<String> {
        let _ = resolved;
        self.prepare_image(request, progress).await
    }
    /// The images holm built on this runtime.
    async fn images(&self) -> Result<Vec<holm_proto::host::ImageInfo>> {
        Ok(Vec::new())
    }
    /// Removes box images no box uses, as `policy` says (see
    /// [`crate::image::prune`]), and answers them.
    async fn prune_images(
        &self,
        policy: &crate::image::Prune,
    ) -> Result<Vec<crate::image::Pruned>> {
        let _ = policy;
        Ok(Vec::new())
    }
    /// Makes the air-gapped base image if it is missing ([`ImageSource::Engine`]).
    async fn make_base(&self, _progress: &mut (dyn FnMut(Progress) + Send)) -> Result<()> {
        Err(self.unsupported("make a base image"))
    }

    // ---- Machines --------------------------------------------------------

    /// Creates and starts a machine, and answers it with an endpoint for
    /// each of the spec's ports.
    async fn create(&self, spec: &MachineSpec) -> Result<Machine>;
    /// Reports a machine, with its endpoints while it runs.
    async fn inspect(&self, id: &str) -> Result<Machine>;
    /// Removes a machine and what it holds. Removing a missing machine is not an error.
    async fn remove(&self, id: &str) -> Result<()>;
    /// Every machine of holm's on this runtime, found by label.
    async fn list(&self) -> Result<Vec<Machine>>;
    /// The machine of `box_id`, found by its label, if there is one.
    async fn find(&self, box_id: &str) -> Result<Option<Machine>> {
        Ok(self.list().await?.into_iter().find(|m| m.box_id.as_deref() == Some(box_id)))
    }

    /// How many bytes a running machine has written to its own disk (its
    /// files outside volumes), or `None` where the runtime cannot say (a
    /// cloud vendor's disk is the vendor's). holmd stops a box past its
    /// `placement.disk` ([`crate::spec::disk_limit`]).
    async fn disk_used(&self, id: &str) -> Result<Option<u64>> {
        let _ = id;
        Ok(None)
    }

    /// Why a machine's guest is no longer running, where the runtime can
    /// tell it ended; `None` while it runs, or where the runtime cannot
    /// tell. A start asks it while it waits for the desktop, so a guest
    /// that ended fails the box at once, saying why. The default: the guest
    /// is the machine's first process, so a machine that stopped or went
    /// means it ended (a runtime that starts the guest apart, such as
    /// Runtime Cloud, reads its process instead).
    async fn guest_ended(&self, id: &str) -> Option<String> {
        match self.inspect(id).await.ok()?.state {
            MachineState::Stopped | MachineState::Gone => Some(
                "its machine stopped: the guest, its first process, ended (its output is in \
                 the machine's log)"
                    .to_owned(),
            ),
            _ => None,
        }
    }

    /// Moves the deadline at which the runtime ends the machine, where it
    /// ends machines itself (a cloud vendor); on a host runtime the server
    /// ends boxes, and this does nothing.
    async fn set_deadline(&self, id: &str, deadline: SystemTime) -> Result<()> {
        let _ = (id, deadline);
        Ok(())
    }

    // ---- Changes, where `can` says -----------------------------------------

    /// Stops a machine, keeping its files (`can.stop`).
    async fn stop(&self, id: &str) -> Result<()> {
        Err(self.unsupported(&format!("stop {id}")))
    }
    /// Stops a machine at once, its processes killed rather than asked to
    /// end, keeping its files (`can.stop`): for a machine that must not
    /// write one more second (past its disk limit).
    async fn stop_now(&self, id: &str) -> Result<()> {
        self.stop(id).await
    }
    /// Starts a stopped machine; its endpoints may move (`can.stop`).
    async fn start(&self, id: &str) -> Result<Machine> {
        Err(self.unsupported(&format!("start {id}")))
    }
    /// Pauses a machine, keeping its memory (`can.pause`).
    async fn pause(&self, id: &str) -> Result<()> {
        Err(self.unsupported(&format!("pause {id}")))
    }
    /// Resumes a paused machine (`can.pause`).
    async fn resume(&self, id: &str) -> Result<()> {
        Err(self.unsupported(&format!("resume {id}")))
    }
    /// Copies a machine's files into an image that a new machine for
    /// `new_box_id` can be made from, and answers the image's reference. The
    /// copy never carries the original's secret (`can.fork`).
    async fn fork(&self, id: &str, new_box_id: &str) -> Result<String> {
        let _ = new_box_id;
        Err(self.unsupported(&format!("fork {id}")))
    }

    /// The error for something this runtime cannot do.
    fn unsupported(&self, what: &str) -> RuntimeError {
        RuntimeError::Unsupported { runtime: self.name().to_owned(), what: what.to_owned() }
    }
}
