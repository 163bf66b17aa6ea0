//! A host runtime that holm names but cannot run boxes on here: `nerdctl`
//! and `smolvm` (this build has no adapter for them yet, and says whether
//! their programs answer), or microsandbox without its `msb`. It is listed
//! with `state: unavailable` and the reason, and a box on it is refused
//! before anything starts.

use async_trait::async_trait;
use holm_proto::host::{Can, Environment, Place};

use super::{ImageSource, Machine, MachineSpec, Result, Runtime, RuntimeError};
use crate::image::{ImageRequest, Progress};

/// A runtime that answers only why it cannot run boxes.
#[derive(Debug, Clone)]
pub struct AbsentRuntime {
    name: String,
    provider: &'static str,
    reason: String,
}

/// The host runtimes this build names without an adapter, with the program
/// each needs and what it would be.
pub const ABSENT: &[(&str, &str)] = &[("nerdctl", "nerdctl"), ("smolvm", "smolvm")];

impl AbsentRuntime {
    /// `provider`'s runtime named `name`: `program` is where its program
    /// was found, if it was.
    pub fn new(name: &str, provider: &'static str, program: Option<&std::path::Path>) -> Self {
        let reason = match program {
            Some(p) => format!(
                "{} answers, but this build of holm has no {provider} adapter yet: use docker or podman",
                p.display()
            ),
            None => format!(
                "{provider} is not installed: no `{provider}` on the PATH (and this build of holm has no {provider} adapter yet)"
            ),
        };
        Self::with_reason(name, provider, reason)
    }

    /// `provider`'s runtime named `name`, unavailable for `reason`.
    pub fn with_reason(name: &str, provider: &'static str, reason: String) -> Self {
        Self { name: name.to_owned(), provider, reason }
    }

    /// Why it cannot run boxes.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    fn absent(&self) -> RuntimeError {
        RuntimeError::Unavailable { runtime: self.name.clone(), reason: self.reason.clone() }
    }
}

/// `program` on the `PATH`, when it is there.
pub fn on_path(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file())
}

#[async_trait]
impl Runtime for AbsentRuntime {
    fn name(&self) -> &str {
        &self.name
    }

    fn provider(&self) -> &str {
        self.provider
    }

    fn place(&self) -> Place {
        Place::Host
    }

    fn environment(&self) -> Environment {
        if self.provider == "nerdctl" { Environment::Container } else { Environment::Microvm }
    }

    fn can(&self) -> Can {
        // The runtimes guide's lifecycle table.
        let container = self.provider == "nerdctl";
        Can {
            pause: container,
            stop: true,
            fork: container,
            browser_profile: container,
            screens: 6,
            wayland: false,
            resources: true,
        }
    }

    async fn ping(&self) -> Result<()> {
        Err(self.absent())
    }

    fn image_source(&self) -> ImageSource {
        if self.provider == "nerdctl" {
            ImageSource::Engine
        } else {
            ImageSource::HostEngine { build_with: "docker".into() }
        }
    }

    async fn prepare_image(
        &self,
        _request: &ImageRequest,
        _progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<String> {
        Err(self.absent())
    }

    async fn create(&self, _spec: &MachineSpec) -> Result<Machine> {
        Err(self.absent())
    }

    async fn inspect(&self, _id: &str) -> Result<Machine> {
        Err(self.absent())
    }

    async fn remove(&self, _id: &str) -> Result<()> {
        Err(self.absent())
    }

    async fn list(&self) -> Result<Vec<Machine>> {
        Err(self.absent())
    }
}
