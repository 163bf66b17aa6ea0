//! Where a call's progress goes: [`Reporter`], handed to a tool when the
//! client asked for progress with a progress token (`launch_box` and a
//! fork report their stages).

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};

/// Where a call's progress goes: the client that asked for it with a
/// progress token.
#[derive(Clone)]
pub struct Reporter {
    peer: Peer<RoleServer>,
    token: ProgressToken,
}

impl std::fmt::Debug for Reporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reporter").field("token", &self.token).finish_non_exhaustive()
    }
}

/// The steps a bringing up reports: one per stage, and the box running.
pub(crate) const STEPS: f64 = 5.0;

impl Reporter {
    /// A reporter to `peer` for the call that gave `token`.
    pub fn new(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        Self { peer, token }
    }

    /// Sends `progress` of [`STEPS`], with what is happening.
    pub(crate) async fn send(&self, progress: f64, message: String) {
        let param = ProgressNotificationParam::new(self.token.clone(), progress)
            .with_total(STEPS)
            .with_message(message);
        if let Err(e) = self.peer.notify_progress(param).await {
            tracing::debug!(error = %e, "a progress notification was not sent");
        }
    }
}
