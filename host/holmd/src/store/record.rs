//! The box record: what the server keeps about a box. Not a wire type: it
//! holds the box secret, so it never leaves the server, and its `Debug`
//! hides the secret.

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
    /// The guest's URL on loopback, while it runs.
    pub guest_url: Option<String>,
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
    /// The Chromium bridge's URL on loopback, once known.
    #[serde(default)]
    pub bridge_url: Option<String>,
    /// The bridge's own secret (not the box secret); a new one each time a
    /// server takes the box back.
    #[serde(default)]
    pub bridge_secret: Option<String>,
}

impl std::fmt::Debug for BoxRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxRecord")
            .field("id", &self.id)
            .field("runtime", &self.runtime)
            .field("state", &self.state)
            .field("secret", &"<hidden>")
            .finish_non_exhaustive()
    }
}

/// Formats seconds since the epoch as RFC 3339.
pub fn rfc3339(secs: u64) -> String {
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
            replayed: false,
            // A box without a browser has a bridge that only says so.
            bridge_url: self.bridge_url.clone().filter(|_| self.spec.browser != Some(false)),
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
        match self.idle_timeout_secs {
            Some(idle) if self.last_activity + idle < self.expires_at => (
                self.last_activity + idle,
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
            guest_url: None,
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
            bridge_url: None,
            bridge_secret: Some("br1dge".into()),
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
        for field in ["forked_from", "bridge_url", "bridge_secret"] {
            o.remove(field);
        }
        let r: BoxRecord = serde_json::from_value(v).unwrap();
        assert_eq!((r.forked_from, r.bridge_url, r.bridge_secret), (None, None, None));
    }
}
