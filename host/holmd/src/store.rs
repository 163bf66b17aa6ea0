//! Box records on disk: one JSON file per box under `<state dir>/boxes/`,
//! written atomically (temporary file, fsync, rename, fsync of the directory)
//! so a crash or `kill -9` never leaves a half-written record. Files are
//! readable by the owner only, because a record holds the box secret.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use holm_proto::guest::Screen;
use holm_proto::host::{BoxInfo, BoxSpec, BoxState, Placement};
use serde::{Deserialize, Serialize};

/// What the server keeps about a box. Not a wire type: it holds the secret.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct BoxRecord {
    /// The box id.
    pub id: String,
    /// The runtime it is on.
    pub runtime: String,
    /// The runtime's id for its machine, once made.
    pub machine_id: Option<String>,
    /// The guest's URL on loopback, once known.
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
    /// Seconds since the epoch.
    pub expires_at: u64,
    /// Seconds without a command before removal.
    pub idle_timeout_secs: Option<u64>,
    /// Seconds since the epoch of the last command through the server.
    pub last_activity: u64,
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
        let expires_at = match self.idle_timeout_secs {
            Some(idle) => self.expires_at.min(self.last_activity + idle),
            None => self.expires_at,
        };
        BoxInfo {
            id: self.id.clone(),
            runtime: self.runtime.clone(),
            state: self.state,
            reason: self.reason.clone(),
            spec: self.spec.clone(),
            image: self.image.clone(),
            screens: self.screens.clone(),
            created_at: rfc3339(self.created_at),
            expires_at: rfc3339(expires_at),
            idle_timeout_secs: self.idle_timeout_secs,
            // A box without a browser has a bridge that only says so.
            bridge_url: self.bridge_url.clone().filter(|_| self.spec.browser != Some(false)),
        }
    }

    /// When the server removes the box, and why.
    pub fn deadline(&self) -> (u64, String) {
        let lifetime = (
            self.expires_at,
            format!("its lifetime of {} seconds ended", self.expires_at - self.created_at),
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

/// Where records are kept.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// Opens (and makes) the store under `state_dir`.
    pub fn open(state_dir: &Path) -> std::io::Result<Self> {
        let dir = state_dir.join("boxes");
        std::fs::create_dir_all(&dir)?;
        Ok(Self { dir })
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// Writes a record atomically.
    pub fn put(&self, record: &BoxRecord) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(record).map_err(std::io::Error::other)?;
        let tmp = self.dir.join(format!(".{}.json.tmp", record.id));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, self.path(&record.id))?;
        std::fs::File::open(&self.dir)?.sync_all()
    }

    /// Deletes a record.
    pub fn delete(&self, id: &str) -> std::io::Result<()> {
        match std::fs::remove_file(self.path(id)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Every record. A file that cannot be read is skipped with a warning,
    /// never deleted.
    pub fn load(&self) -> std::io::Result<Vec<BoxRecord>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&self.dir)? {
            let path = entry?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            match std::fs::read(&path).map(|b| serde_json::from_slice::<BoxRecord>(&b)) {
                Ok(Ok(r)) => out.push(r),
                Ok(Err(e)) => {
                    tracing::warn!(path = %path.display(), error = %e, "skipping an unreadable box record")
                }
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "skipping an unreadable box record")
                }
            }
        }
        out.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str) -> BoxRecord {
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
            bridge_url: None,
            bridge_secret: Some("br1dge".into()),
        }
    }

    #[test]
    fn records_round_trip_and_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store.put(&record("box_a")).unwrap();
        let mut r = record("box_b");
        r.state = BoxState::Running;
        store.put(&r).unwrap();
        let loaded = store.load().unwrap();
        assert_eq!(loaded.len(), 2);
        assert_eq!(loaded[1], r);
        use std::os::unix::fs::PermissionsExt;
        let mode =
            std::fs::metadata(dir.path().join("boxes/box_a.json")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        store.delete("box_a").unwrap();
        store.delete("box_a").unwrap();
        assert_eq!(store.load().unwrap().len(), 1);
    }

    #[test]
    fn a_corrupt_record_is_skipped_not_lost() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        std::fs::write(dir.path().join("boxes/box_x.json"), b"{not json").unwrap();
        assert!(store.load().unwrap().is_empty());
        assert!(dir.path().join("boxes/box_x.json").exists());
    }

    #[test]
    fn the_deadline_is_the_earlier_of_lifetime_and_idle() {
        let mut r = record("box_a");
        assert_eq!(r.deadline().0, 3700);
        r.idle_timeout_secs = Some(600);
        r.last_activity = 1000;
        let (at, why) = r.deadline();
        assert_eq!(at, 1600);
        assert!(why.contains("idle"));
        assert!(r.info().expires_at.starts_with("1970-01-01T00:26:40"));
    }

    #[test]
    fn debug_hides_the_secret() {
        let shown = format!("{:?}", record("box_a"));
        assert!(!shown.contains("s3cret") && !shown.contains("br1dge"));
        let info = serde_json::to_string(&record("box_a").info()).unwrap();
        assert!(!info.contains("s3cret") && !info.contains("br1dge"));
    }

    #[test]
    fn records_from_before_the_bridge_still_load() {
        let mut v = serde_json::to_value(record("box_old")).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("bridge_url");
        o.remove("bridge_secret");
        let r: BoxRecord = serde_json::from_value(v).unwrap();
        assert_eq!((r.bridge_url, r.bridge_secret), (None, None));
    }
}
