//! The Chromium bridge: its own secret per box, set on the guest once the
//! desktop is ready and replaced when a server takes the box back.

use std::time::Duration;

use holm_client::BoxClient;
use holm_proto::host::BridgeAccess;
use holm_proto::{ApiError, ErrorCode};

use super::Service;
use super::errors::{Error, Part};
use super::state::{Entry, require_running};

impl Service {
    /// Gives the box's bridge its secret: the record's, or a new one when
    /// `rotate` is set or the record has none. The record keeps the secret
    /// even when the guest does not take it: the next bridge request sets
    /// it again. Answers whether the guest has it now (or the box has no
    /// bridge): a claim from a warm pool that cannot end the pooled
    /// bridge's tickets goes cold instead.
    pub(super) async fn arm_bridge(&self, entry: &Entry, guest: &BoxClient, rotate: bool) -> bool {
        let r = entry.record();
        let secret = match r.bridge_secret.filter(|_| !rotate) {
            Some(s) => s,
            None => {
                let s = holm::ids::new_secret();
                entry.update(|r| r.bridge_secret = Some(s.clone()));
                s
            }
        };
        if r.spec.browser == Some(false) || entry.record().bridge.is_none() {
            return true;
        }
        match tokio::time::timeout(Duration::from_secs(5), guest.set_bridge_secret(&secret)).await {
            Ok(Ok(())) => {
                tracing::debug!(box_id = %r.id, "the bridge has its secret");
                true
            }
            Ok(Err(e)) => {
                tracing::warn!(box_id = %r.id, error = %e, "cannot set the bridge's secret");
                false
            }
            Err(_) => {
                tracing::warn!(box_id = %r.id, "the guest did not take the bridge's secret in time");
                false
            }
        }
    }

    /// How to reach a running box's Chromium from the server's host: the
    /// bridge's address, the header with the bridge's secret, and a fresh
    /// ticket. Asking counts as activity for the idle timeout (traffic on the
    /// bridge itself does not pass through the server). With `rotate`, the
    /// bridge gets a new secret first, which ends every connection and
    /// ticket made with the old one.
    pub async fn bridge(
        &self,
        id: &str,
        ttl_secs: Option<u32>,
        rotate: bool,
    ) -> Result<BridgeAccess, Error> {
        let entry = self.get(id)?;
        let record = entry.record();
        require_running(&record)?;
        if record.spec.browser == Some(false) {
            return Err(Error::NoBrowser { id: id.to_owned() });
        }
        let (Some(guest), Some(bridge)) = (&record.guest, &record.bridge) else {
            return Err(ApiError::new(
                ErrorCode::Unsupported,
                format!("box {id} has no published bridge port"),
            )
            .with_hint("boxes made before the bridge existed have none; make a new box")
            .into());
        };
        let secret = match record.bridge_secret.as_ref().filter(|_| !rotate) {
            Some(s) => s.clone(),
            None => {
                let s = holm::ids::new_secret();
                entry.update(|r| r.bridge_secret = Some(s.clone()));
                self.save(&entry).await;
                s
            }
        };
        self.touch(&entry);
        let guest = BoxClient::at(guest, &record.secret);
        holm_client::bridge_access(&guest, bridge, &secret, ttl_secs).await.map_err(|e| match e {
            holm_client::ClientError::Api(e) => e.into(),
            other => {
                tracing::warn!(box_id = %id, error = %other, "the box's bridge did not answer");
                Error::GuestDown { id: id.to_owned(), part: Part::Bridge, late: false }
            }
        })
    }
}
