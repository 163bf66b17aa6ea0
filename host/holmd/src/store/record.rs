//! The box record: what the server keeps about a box. Not a wire type: it
//! holds the box secret, so it never leaves the server, and its `Debug`
//! hides the secret.

use holm::runtime::Endpoint;
use holm_proto::guest::Screen;
use holm_proto::host::{BoxInfo, BoxSpec, BoxState, Placement};
use serde::{Deserialize, Serialize};

/// What the server keeps about a box.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct BoxRecord {
    /// The box id.
    pub id: String,
    /// The runtime it is on.
    pub runtime: String,
    /// The runtime's id for its machine, once made.
    pub machine_id: Option<String>,
    /// How the guest is reached while it runs, as its runtime answered
    /// (`guest_url`, a plain URL, in records of earlier servers).
    #[serde(default, alias = "guest_url")]
    pub guest: Option<Endpoint>,
    /// The box secret.
    pub secret: String,
    /// What it is.
    pub spec: BoxSpec,
    /// Where it runs (without secrets).
    pub placement: Placement,
    /// Where it is in its life.
    pub state: BoxState,
    /// Why it failed, is unreachable, or was removed.
    pub reason: Option<String>,
    /// Its image.
    pub image: Option<String>,
    /// Its screens.
    pub screens: Vec<Screen>,
    /// Seconds since the epoch.
    pub created_at: u64,
    /// Seconds since the epoch: the end of its lifetime.
    pub expires_at: u64,
    /// Seconds without a command before removal.
    pub idle_timeout_secs: Option<u64>,
    /// Seconds since the epoch of the last command through the server.
    pub last_activity: u64,
    /// The box it was forked from.
    #[serde(default)]
    pub forked_from: Option<String>,
    /// How the Chromium bridge is reached, once known (`bridge_url` in
    /// records of earlier servers).
    #[serde(default, alias = "bridge_url")]
    pub bridge: Option<Endpoint>,
    /// The bridge's own secret (not the box secret); a new one each time a
    /// server takes the box back.
    #[serde(default)]
    pub bridge_secret: Option<String>,
    /// How the viewers are reached while the box runs.
    #[serde(default)]
    pub viewer: Option<Endpoint>,
    /// The key that signs this desktop's viewer tokens: a new one for each
    /// new desktop, so a started box's earlier URLs stop working. Never
    /// leaves the server but to the box's guest.
    #[serde(default)]
    pub viewer_key: Option<String>,
    /// This desktop's viewer grants.
    #[serde(default)]
    pub viewer_grants: Vec<Grant>,
    /// The last control event of the box's guest that went into its
    /// traces, so none is traced twice (see `service::control`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_seen: Option<ControlSeen>,
    /// The warm pool that holds the box, until a create claims it: a box
    /// with a pool is never shown to agents (see `service::pool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
    /// The guest protocol its guest spoke when this server last made or
    /// took back its desktop (see docs/VERSIONING.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_proto: Option<u32>,
    /// When the box was removed or failed, in seconds since the epoch; its
    /// record is pruned a retention period later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<u64>,
    /// How many times the record changed: one more at each change, so a
    /// server sharing its store with others (`HOLM_SHARED_STORE`) takes a
    /// stored copy newer than its own (see `service::fleet`).
    #[serde(default)]
    pub rev: u64,
}

/// One viewer URL's grant: what its token opens, until when. The token is
/// signed with the record's viewer key and made again on demand, so it is
/// never stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// `vg_` and 12 hex digits.
    pub id: String,
    /// The screen.
    pub screen: u8,
    /// Watch only, or takeover.
    pub mode: holm_proto::viewer::ViewerMode,
    /// Who it is for.
    #[serde(default)]
    pub label: Option<String>,
    /// Seconds since the epoch.
    pub created_at: u64,
    /// Seconds since the epoch.
    pub expires_at: u64,
    /// Seconds since the epoch.
    #[serde(default)]
    pub revoked_at: Option<u64>,
    /// One of the pair `GET /v1/boxes/{id}` shows for each screen.
    #[serde(default)]
    pub shown: bool,
}

impl std::fmt::Debug for BoxRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxRecord")
            .field("id", &self.id)
            .field("runtime", &self.runtime)
            .field("state", &self.state)
            .field("secret", &"<hidden>")
            .field("viewer_key", &self.viewer_key.as_ref().map(|_| "<hidden>"))
            .finish_non_exhaustive()
    }
}

/// The last second RFC 3339 can write: 9999-12-31T23:59:59Z.
const LAST_RFC3339_SECS: u64 = 253_402_300_799;

/// Formats seconds since the epoch as RFC 3339; a time past the year 9999
/// (only a record no check made can hold one) is shown as its last second.
pub fn rfc3339(secs: u64) -> String {
    let secs = secs.min(LAST_RFC3339_SECS);
    humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
        .to_string()
}

impl BoxRecord {
    /// The box as the API shows it: everything but the secret.
    pub fn info(&self) -> BoxInfo {
        BoxInfo {
            id: self.id.clone(),
            runtime: self.runtime.clone(),
            state: self.state,
            reason: self.reason.clone(),
            spec: self.spec.clone(),
            image: self.image.clone(),
            screens: self.screens.clone(),
            created_at: rfc3339(self.created_at),
            expires_at: rfc3339(self.deadline().0),
            idle_timeout_secs: self.idle_timeout_secs,
            forked_from: self.forked_from.clone(),
            viewers: Vec::new(),
            human_in_control: None,
            replayed: false,
            // A box without a browser has a bridge that only says so.
            bridge_url: self
                .bridge
                .as_ref()
                .map(|b| b.url().to_owned())
                .filter(|_| self.spec.browser != Some(false)),
        }
    }

    /// When the server removes the box, and why: the earlier of the end of
    /// its lifetime and, with an idle timeout, the last command plus it.
    pub fn deadline(&self) -> (u64, String) {
        let lifetime = (
            self.expires_at,
            format!(
                "its lifetime of {} seconds ended",
                self.expires_at.saturating_sub(self.created_at)
            ),
        );
        // Saturating: a record written by anyone (an older server, a hand in
        // the store) must not stop the expiry of every box.
        match self.idle_timeout_secs {
            Some(idle) if self.last_activity.saturating_add(idle) < self.expires_at => (
                self.last_activity.saturating_add(idle),
                format!("no command came for its idle timeout of {idle} seconds"),
            ),
            _ => lifetime,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn record(id: &str) -> BoxRecord {
        BoxRecord {
            id: id.into(),
            runtime: "docker".into(),
            machine_id: None,
            guest: None,
            secret: "s3cret".into(),
            spec: BoxSpec::default(),
            placement: Placement::default(),
            state: BoxState::Creating,
            reason: None,
            image: None,
            screens: vec![],
            created_at: 100,
            expires_at: 3700,
            idle_timeout_secs: None,
            last_activity: 100,
            forked_from: None,
            bridge: None,
            bridge_secret: Some("br1dge".into()),
            viewer: None,
            viewer_key: None,
            viewer_grants: Vec::new(),
            control_seen: None,
            pool: None,
            guest_proto: None,
            ended_at: None,
            rev: 0,
        }
    }

    #[test]
    fn the_deadline_is_the_earlier_of_lifetime_and_idle() {
        let mut r = record("box_a");
        assert_eq!(r.deadline().0, 3700);
        assert!(r.deadline().1.contains("lifetime of 3600 seconds"));
        r.idle_timeout_secs = Some(600);
        r.last_activity = 1000;
        let (at, why) = r.deadline();
        assert_eq!(at, 1600);
        assert!(why.contains("idle"));
        assert!(r.info().expires_at.starts_with("1970-01-01T00:26:40"));
        // Near the end of the lifetime, the lifetime wins.
        r.last_activity = 3500;
        assert_eq!(r.deadline().0, 3700);
    }

    #[test]
    fn debug_hides_the_secret() {
        let shown = format!("{:?}", record("box_a"));
        assert!(!shown.contains("s3cret") && !shown.contains("br1dge"));
        let info = serde_json::to_string(&record("box_a").info()).unwrap();
        assert!(!info.contains("s3cret") && !info.contains("br1dge"));
    }

    #[test]
    fn a_record_without_newer_fields_still_reads() {
        let mut v = serde_json::to_value(record("box_a")).unwrap();
        let o = v.as_object_mut().unwrap();
        for field in ["forked_from", "bridge", "bridge_secret"] {
            o.remove(field);
        }
        let r: BoxRecord = serde_json::from_value(v).unwrap();
        assert_eq!((r.forked_from, r.bridge, r.bridge_secret), (None, None, None));
    }

    #[test]
    fn a_record_of_an_earlier_server_reads_its_plain_urls_as_endpoints() {
        let mut v = serde_json::to_value(record("box_a")).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("guest");
        o.remove("bridge");
        o.insert("guest_url".into(), "http://127.0.0.1:49153".into());
        o.insert("bridge_url".into(), "http://127.0.0.1:49154".into());
        let r: BoxRecord = serde_json::from_value(v).unwrap();
        assert_eq!(r.guest, Some(Endpoint::loopback("127.0.0.1:49153".parse().unwrap())));
        assert_eq!(r.info().bridge_url.as_deref(), Some("http://127.0.0.1:49154"));
    }
}

/// Where the traces of a guest's control events stand: its boot (which
/// changes with each start of the guest, when numbers start again) and the
/// last sequence number traced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlSeen {
    /// The guest's boot.
    pub boot: String,
    /// The last event traced.
    pub seq: u64,
}
