//! What a box on a host engine (Docker, podman) may write to the host's
//! disk: its container log, rotated ([`log_config`]), and its own files,
//! measured ([`DockerRuntime::writable_layer`]) so that holmd can stop a
//! box past its `placement.disk` ([`crate::spec::disk_limit`]).
//!
//! The engine is not asked to enforce a size: overlay2 does only on xfs
//! mounted with project quotas (`storage_opt size=`), which few hosts have,
//! and a box refused at create on the others would be worse than one
//! watched. docs/security.md says what the watch does and does not bound.

use bollard::query_parameters::InspectContainerOptions;

use super::Result;
use super::docker::{DockerRuntime, Engine};

/// A box's container log rotates at this size (`max-size`)...
pub const LOG_MAX_SIZE: &str = "10m";
/// ... keeping this many files on Docker (`max-file`); podman keeps one,
/// which it truncates.
pub const LOG_MAX_FILES: &str = "3";

/// A box's container log, bounded: what a box writes to its standard
/// output (anything running as root in it can write to `/proc/1/fd/1`)
/// never grows past `max-size` (times `max-file` on Docker). podman takes
/// `max-size` only.
pub fn log_config(engine: Engine) -> bollard::models::HostConfigLogConfig {
    let mut options =
        std::collections::HashMap::from([("max-size".to_owned(), LOG_MAX_SIZE.to_owned())]);
    if engine == Engine::Docker {
        options.insert("max-file".to_owned(), LOG_MAX_FILES.to_owned());
    }
    bollard::models::HostConfigLogConfig {
        typ: Some("json-file".to_owned()),
        config: Some(options),
    }
}

impl DockerRuntime {
    /// The bytes a container has written to its writable layer: the
    /// engine's `SizeRw` (`GET /containers/{id}/json?size=true`, which
    /// Docker and podman's compatible API both answer). A container the
    /// engine gives no size for counts as zero.
    pub async fn writable_layer(&self, id: &str) -> Result<u64> {
        let c = self
            .docker()
            .inspect_container(id, Some(InspectContainerOptions { size: true }))
            .await
            .map_err(|e| self.engine_error(e))?;
        Ok(c.size_rw.map_or(0, |n| u64::try_from(n).unwrap_or(0)))
    }
}
