//! Debugging a box at its agent: a short-lived credential, made by the
//! box's own guest, that opens that guest's API straight from the host.
//! holmd keeps no copy: it asks the guest for one (with the box secret),
//! answers it once, and asks the guest to forget them all on revocation.

use std::time::Duration;

use holm_client::{BoxClient, ClientError};
use holm_proto::ApiError;
use holm_proto::agent::{AgentAccess, check_ttl};

use super::Service;
use super::errors::{Error, Part};
use super::state::require_running;

/// How long the guest may take to answer.
const GUEST_TIMEOUT: Duration = Duration::from_secs(5);

fn guest_error(id: &str, e: ClientError) -> Error {
    match e {
        ClientError::Api(e) => e.into(),
        other => {
            // The error names the guest's URL and what failed, never a header.
            tracing::warn!(box_id = %id, error = %other, "the box's guest did not answer");
            Error::GuestDown { id: id.to_owned(), part: Part::Guest, late: false }
        }
    }
}

fn late(id: &str) -> Error {
    Error::GuestDown { id: id.to_owned(), part: Part::Guest, late: true }
}

impl Service {
    /// How to reach a running box's guest from the server's host, with a
    /// new credential for `ttl_secs`. Asking counts as activity for the
    /// idle timeout (traffic straight to the guest does not pass through
    /// the server).
    pub async fn agent(&self, id: &str, ttl_secs: Option<u32>) -> Result<AgentAccess, Error> {
        check_ttl(ttl_secs)?;
        let entry = self.get(id)?;
        let record = entry.record();
        require_running(&record)?;
        let endpoint = record.guest.as_ref().ok_or_else(ApiError::internal)?;
        let guest = BoxClient::at(endpoint, &record.secret);
        self.touch(&entry);
        let made = holm_client::agent_access(id, &guest, endpoint, ttl_secs);
        match tokio::time::timeout(GUEST_TIMEOUT, made).await {
            Ok(access) => {
                let access = access.map_err(|e| guest_error(id, e))?;
                tracing::info!(box_id = %id, expires_at = %access.expires_at, "an agent credential was made");
                Ok(access)
            }
            Err(_) => Err(late(id)),
        }
    }

    /// Revokes every agent credential of a running box: its guest refuses
    /// them from now on. A stopped box's guest is gone, and its credentials
    /// with it.
    pub async fn revoke_agent(&self, id: &str) -> Result<(), Error> {
        let entry = self.get(id)?;
        let record = entry.record();
        require_running(&record)?;
        let endpoint = record.guest.as_ref().ok_or_else(ApiError::internal)?;
        let guest = BoxClient::at(endpoint, &record.secret);
        match tokio::time::timeout(GUEST_TIMEOUT, guest.revoke_agent_tokens()).await {
            Ok(r) => r.map_err(|e| guest_error(id, e))?,
            Err(_) => return Err(late(id)),
        }
        tracing::info!(box_id = %id, "the box's agent credentials were revoked");
        Ok(())
    }
}
