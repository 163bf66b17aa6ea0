//! The runtime contract: what holm needs from a place that runs boxes.
//!
//! It is deliberately small, because the guest inside the box does all the
//! desktop work: run this image with this entrypoint and environment, publish
//! these ports on loopback, report where they landed, stop, remove, list by
//! label; and pause, resume, fork where the engine can ([`Runtime::can`]).

pub mod docker;
pub mod docker_context;

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;

use async_trait::async_trait;
use holm_proto::host::{Can, Environment, Place};

use crate::image::{ImageRequest, Progress};

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
/// The environment variable that carries the box secret to the guest.
pub const ENV_SECRET: &str = "HOLM_BOX_SECRET";

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
    /// Ports inside the box to publish on the host's loopback.
    pub ports: Vec<u16>,
    /// Memory limit in bytes.
    pub memory_bytes: Option<u64>,
    /// CPU limit in billionths of a CPU.
    pub nano_cpus: Option<u64>,
    /// A browser profile to keep at [`PROFILE_DIR`], on storage that
    /// outlives the machine (a named volume on Docker). Only when
    /// [`Runtime::can`] says `browser_profile`.
    pub profile: Option<String>,
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
            .field("profile", &self.profile)
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
    /// Where each published port landed on the host.
    pub ports: BTreeMap<u16, SocketAddr>,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
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
}

/// A runtime result.
pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;

/// A place that runs boxes.
#[async_trait]
pub trait Runtime: Send + Sync + fmt::Debug + 'static {
    /// The name boxes use to pick it.
    fn name(&self) -> &str;
    /// The engine or vendor behind it, such as `docker`.
    fn provider(&self) -> &str;
    /// Host or remote.
    fn place(&self) -> Place;
    /// Container, microVM, VM or unknown.
    fn environment(&self) -> Environment;
    /// What it can do.
    fn can(&self) -> Can;
    /// Checks that the engine answers.
    async fn ping(&self) -> Result<()>;
    /// Makes the box image for `request` available, building it if needed,
    /// and answers its reference. Progress lines go to `progress`.
    async fn prepare_image(
        &self,
        request: &ImageRequest,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<String>;
    /// Creates and starts a machine.
    async fn create(&self, spec: &MachineSpec) -> Result<Machine>;
    /// Reports a machine.
    async fn inspect(&self, id: &str) -> Result<Machine>;
    /// Removes a machine and what it holds. Removing a missing machine is not an error.
    async fn remove(&self, id: &str) -> Result<()>;
    /// Every machine of holm's on this runtime, found by label.
    async fn list(&self) -> Result<Vec<Machine>>;
    /// The images holm built on this runtime.
    async fn images(&self) -> Result<Vec<holm_proto::host::ImageInfo>> {
        Ok(Vec::new())
    }
    /// Makes the air-gapped base image if it is missing.
    async fn make_base(&self, _progress: &mut (dyn FnMut(Progress) + Send)) -> Result<()> {
        Err(self.unsupported("make a base image"))
    }
    /// Stops a machine, keeping its files.
    async fn stop(&self, id: &str) -> Result<()> {
        Err(self.unsupported(&format!("stop {id}")))
    }
    /// Starts a stopped machine; its ports may land elsewhere.
    async fn start(&self, id: &str) -> Result<Machine> {
        Err(self.unsupported(&format!("start {id}")))
    }
    /// Pauses a machine, keeping its memory.
    async fn pause(&self, id: &str) -> Result<()> {
        Err(self.unsupported(&format!("pause {id}")))
    }
    /// Resumes a paused machine.
    async fn resume(&self, id: &str) -> Result<()> {
        Err(self.unsupported(&format!("resume {id}")))
    }
    /// Copies a machine's files into an image that a new machine for
    /// `new_box_id` can be made from, and answers the image's reference. The
    /// copy never carries the original's secret.
    async fn fork(&self, id: &str, new_box_id: &str) -> Result<String> {
        let _ = new_box_id;
        Err(self.unsupported(&format!("fork {id}")))
    }
    /// The machine of `box_id`, found by its label, if there is one.
    async fn find(&self, box_id: &str) -> Result<Option<Machine>> {
        Ok(self.list().await?.into_iter().find(|m| m.box_id.as_deref() == Some(box_id)))
    }
    /// The box secret a machine was made with, read back from the runtime,
    /// so a server that lost its records can take the box back. `None` when
    /// the runtime cannot tell.
    async fn box_secret(&self, id: &str) -> Result<Option<String>> {
        let _ = id;
        Ok(None)
    }
    /// The error for something this runtime cannot do.
    fn unsupported(&self, what: &str) -> RuntimeError {
        RuntimeError::Unsupported { runtime: self.name().to_owned(), what: what.to_owned() }
    }
}
