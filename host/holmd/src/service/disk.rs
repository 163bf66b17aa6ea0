//! The disk watch: every [`super::Limits::disk_check`], each running box's
//! disk use is asked of its runtime ([`holm::runtime::Runtime::disk_used`])
//! and a box past its `placement.disk` ([`holm::spec::disk_limit`], 10 GiB
//! unless asked) is stopped, its files kept, with a reason that begins
//! [`DISK_LIMIT`]. Runtimes that cannot say (cloud vendors) are not
//! measured. A box can pass its limit by what it writes between two
//! measurements; docs/security.md says so.

use std::sync::Arc;

use holm::spec;
use holm_proto::host::{BoxState, DISK_LIMIT};

use super::Service;
use super::state::Entry;

/// A size in MiB, for a reason a person reads.
fn mib(bytes: u64) -> String {
    let m = bytes as f64 / f64::from(1 << 20);
    if m >= 10.0 { format!("{m:.0} MiB") } else { format!("{m:.1} MiB") }
}

/// The reason of a box stopped at its disk limit.
pub(super) fn disk_limit_reason(used: u64, limit: u64, asked: Option<&str>) -> String {
    let limit = match asked {
        Some(a) => format!("its placement.disk of {a} ({})", mib(limit)),
        None => format!("the default placement.disk of 10g ({})", mib(limit)),
    };
    format!(
        "{DISK_LIMIT}: the box wrote {} to its disk, past {limit}; its files are kept until it is \
         removed, and it is stopped again if it starts past its limit",
        mib(used)
    )
}

impl Service {
    /// Measures each running box's disk once and stops those past their
    /// limit. A runtime that fails to answer for a box is logged and asked
    /// again at the next round.
    pub(super) async fn watch_disk(&self) {
        let watched: Vec<Arc<Entry>> = self.boxes.filter(|r| {
            matches!(r.state, BoxState::Running | BoxState::Starting)
                && r.machine_id.is_some()
                && self.takes(&r.runtime)
        });
        for entry in watched {
            let r = entry.record();
            let (Some(machine), Ok(offered)) = (r.machine_id.as_ref(), self.runtime(&r.runtime))
            else {
                continue;
            };
            let limit = spec::disk_limit(&r.placement).unwrap_or(spec::DEFAULT_DISK_BYTES);
            let used = match offered.runtime.disk_used(machine).await {
                Ok(Some(used)) => used,
                Ok(None) => continue,
                Err(e) => {
                    tracing::debug!(box_id = %r.id, error = %e, "cannot measure the box's disk");
                    continue;
                }
            };
            if used <= limit {
                continue;
            }
            let reason = disk_limit_reason(used, limit, r.placement.disk.as_deref());
            tracing::warn!(box_id = %r.id, used, limit, "the box wrote past its disk limit; stopping it");
            if let Err(e) = self.stop_with(&r.id, Some(reason)).await {
                tracing::warn!(box_id = %r.id, error = %e, "cannot stop the box past its disk limit");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_begins_with_the_code_and_says_both_sizes() {
        let r = disk_limit_reason(70 << 20, 64 << 20, Some("64m"));
        assert!(r.starts_with("disk_limit: "), "{r}");
        assert!(r.contains("70 MiB") && r.contains("placement.disk of 64m (64 MiB)"), "{r}");
        let r = disk_limit_reason(11 << 30, spec::DEFAULT_DISK_BYTES, None);
        assert!(r.contains("11264 MiB") && r.contains("default placement.disk of 10g"), "{r}");
    }
}
