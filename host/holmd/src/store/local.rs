//! The `local` backend: files under the state directory.
//!
//! ```text
//! boxes/<box id>.json            one record per box
//! runtimes/<hex of name>.json    one remote runtime per file
//! idempotency/<key hash>.json    one key per file
//! traces/<box id>.jsonl          a box's traces, one JSON line each
//! shots/<box id>/<trace id>.img  a box's timeline images
//! ```
//!
//! Every file but the trace logs is written atomically: a temporary file in
//! the same directory, fsync, rename, fsync of the directory. So a crash or
//! `kill -9` leaves either the old file or the new one, never half of one.
//! Trace logs are appended and fsynced per batch; a line cut short by a
//! crash is skipped when read, and the next batch starts on a new line.
//! Files are readable by the owner only, because box records hold secrets.

use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use holm_proto::host::Trace;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{BoxRecord, IdempotencyRecord, Result, RuntimeRecord, Store, StoreError};

const BACKEND: &str = "local";

/// Records as files under a directory.
#[derive(Debug, Clone)]
pub struct LocalStore {
    dir: PathBuf,
}

fn io(e: std::io::Error) -> StoreError {
    StoreError::backend(BACKEND, e)
}

impl LocalStore {
    /// Opens (and makes, owner-only) the store under `dir`.
    pub fn open(dir: &Path) -> Result<Self> {
        for sub in ["boxes", "runtimes", "idempotency", "traces"] {
            std::fs::create_dir_all(dir.join(sub)).map_err(|e| {
                StoreError::Config(format!("cannot make {}: {e}", dir.join(sub).display()))
            })?;
        }
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        Ok(Self { dir: dir.to_owned() })
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Path) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let dir = self.dir.clone();
        tokio::task::spawn_blocking(move || f(&dir))
            .await
            .map_err(|e| StoreError::backend(BACKEND, e))?
    }
}

/// A file name for an id: box ids and hashes as they are, anything else hex.
fn safe(id: &str) -> Result<&str> {
    if !id.is_empty()
        && id.len() <= 128
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Ok(id)
    } else {
        Err(StoreError::backend(BACKEND, format!("{id:?} cannot name a file")))
    }
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

/// Writes `value` to `dir/name` atomically, owner-only.
fn write_atomic(dir: &Path, name: &str, value: &impl Serialize) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| StoreError::backend(BACKEND, e))?;
    write_bytes_atomic(dir, name, &bytes)
}

/// Writes `bytes` to `dir/name` atomically, owner-only.
fn write_bytes_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(io)?;
    f.write_all(bytes).map_err(io)?;
    f.sync_all().map_err(io)?;
    drop(f);
    std::fs::rename(&tmp, dir.join(name)).map_err(io)?;
    std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(io)
}

fn read_json<T: DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| StoreError::Corrupt {
            what: "record",
            message: format!("{}: {e}", path.display()),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(e)),
    }
}

/// Every `*.json` in `dir`; unreadable ones are skipped with a warning.
fn read_all<T: DeserializeOwned>(dir: &Path) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        match read_json::<T>(&path) {
            Ok(Some(r)) => out.push(r),
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "skipping an unreadable record"),
        }
    }
    Ok(out)
}

fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(e)),
        _ => Ok(()),
    }
}

#[async_trait]
impl Store for LocalStore {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    async fn put_box(&self, record: &BoxRecord) -> Result<()> {
        let name = format!("{}.json", safe(&record.id)?);
        let record = record.clone();
        self.blocking(move |dir| {
            let boxes = dir.join("boxes");
            // One process writes a local store; the service writes one box
            // at a time, so the look and the write do not race.
            if !super::may_replace(read_json(&boxes.join(&name))?.as_ref(), &record) {
                return Err(StoreError::Removed { id: record.id });
            }
            write_atomic(&boxes, &name, &record)
        })
        .await
    }

    async fn get_box(&self, id: &str) -> Result<Option<BoxRecord>> {
        let name = format!("{}.json", safe(id)?);
        self.blocking(move |dir| read_json(&dir.join("boxes").join(name))).await
    }

    async fn boxes(&self) -> Result<Vec<BoxRecord>> {
        let mut all = self.blocking(|dir| read_all::<BoxRecord>(&dir.join("boxes"))).await?;
        super::sort_boxes(&mut all);
        Ok(all)
    }

    async fn delete_box(&self, id: &str) -> Result<()> {
        let id = safe(id)?.to_owned();
        self.blocking(move |dir| {
            remove(&dir.join("traces").join(format!("{id}.jsonl")))?;
            match std::fs::remove_dir_all(dir.join("shots").join(&id)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
                _ => {}
            }
            remove(&dir.join("boxes").join(format!("{id}.json")))
        })
        .await
    }

    async fn put_runtime(&self, record: &RuntimeRecord) -> Result<()> {
        let name = format!("{}.json", hex(&record.name));
        let record = record.clone();
        self.blocking(move |dir| write_atomic(&dir.join("runtimes"), &name, &record)).await
    }

    async fn runtimes(&self) -> Result<Vec<RuntimeRecord>> {
        let mut all = self.blocking(|dir| read_all::<RuntimeRecord>(&dir.join("runtimes"))).await?;
        all.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(all)
    }

    async fn delete_runtime(&self, name: &str) -> Result<()> {
        let name = format!("{}.json", hex(name));
        self.blocking(move |dir| remove(&dir.join("runtimes").join(name))).await
    }

    async fn append_traces(&self, traces: &[Trace]) -> Result<()> {
        let mut by_box: std::collections::BTreeMap<String, Vec<u8>> = Default::default();
        for t in traces {
            let buf = by_box.entry(safe(&t.box_id)?.to_owned()).or_default();
            serde_json::to_writer(&mut *buf, t).map_err(|e| StoreError::backend(BACKEND, e))?;
            buf.push(b'\n');
        }
        self.blocking(move |dir| {
            for (id, lines) in by_box {
                let path = dir.join("traces").join(format!("{id}.jsonl"));
                let mut f = std::fs::OpenOptions::new()
                    .read(true)
                    .append(true)
                    .create(true)
                    .mode(0o600)
                    .open(&path)
                    .map_err(io)?;
                // A crash may have cut the last line short: start on a new one.
                let len = f.metadata().map_err(io)?.len();
                if len > 0 {
                    let mut last = [0u8];
                    f.seek(SeekFrom::Start(len - 1)).map_err(io)?;
                    f.read_exact(&mut last).map_err(io)?;
                    if last[0] != b'\n' {
                        f.write_all(b"\n").map_err(io)?;
                    }
                }
                f.write_all(&lines).map_err(io)?;
                f.sync_data().map_err(io)?;
            }
            Ok(())
        })
        .await
    }

    async fn traces(&self, box_id: &str, after: Option<&str>, limit: usize) -> Result<Vec<Trace>> {
        let path = format!("{}.jsonl", safe(box_id)?);
        let after = after.map(str::to_owned);
        self.blocking(move |dir| {
            let text = match std::fs::read_to_string(dir.join("traces").join(path)) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
                Err(e) => return Err(io(e)),
            };
            Ok(text
                .lines()
                .filter_map(|l| serde_json::from_str::<Trace>(l).ok())
                .filter(|t| after.as_deref().is_none_or(|a| t.id.as_str() > a))
                .take(limit)
                .collect())
        })
        .await
    }

    async fn put_shot(&self, box_id: &str, id: &str, image: &[u8]) -> Result<()> {
        let (box_id, name, image) =
            (safe(box_id)?.to_owned(), format!("{}.img", safe(id)?), image.to_vec());
        self.blocking(move |dir| {
            let dir = dir.join("shots").join(box_id);
            std::fs::create_dir_all(&dir).map_err(io)?;
            write_bytes_atomic(&dir, &name, &image)
        })
        .await
    }

    async fn shot(&self, box_id: &str, id: &str) -> Result<Option<Vec<u8>>> {
        let path = format!("shots/{}/{}.img", safe(box_id)?, safe(id)?);
        self.blocking(move |dir| match std::fs::read(dir.join(path)) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(e)),
        })
        .await
    }

    async fn shots(&self, box_id: &str) -> Result<Vec<(String, u64)>> {
        let box_id = safe(box_id)?.to_owned();
        self.blocking(move |dir| {
            let entries = match std::fs::read_dir(dir.join("shots").join(box_id)) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
                Err(e) => return Err(io(e)),
            };
            let mut out = Vec::new();
            for entry in entries {
                let entry = entry.map_err(io)?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if let Some(id) = name.strip_suffix(".img").filter(|_| !name.starts_with('.')) {
                    out.push((id.to_owned(), entry.metadata().map_err(io)?.len()));
                }
            }
            out.sort();
            Ok(out)
        })
        .await
    }

    async fn delete_shot(&self, box_id: &str, id: &str) -> Result<()> {
        let path = format!("shots/{}/{}.img", safe(box_id)?, safe(id)?);
        self.blocking(move |dir| remove(&dir.join(path))).await
    }

    async fn get_idempotency(&self, key_hash: &str) -> Result<Option<IdempotencyRecord>> {
        let name = format!("{}.json", safe(key_hash)?);
        self.blocking(move |dir| read_json(&dir.join("idempotency").join(name))).await
    }

    async fn put_idempotency(&self, record: &IdempotencyRecord) -> Result<()> {
        let name = format!("{}.json", safe(&record.key_hash)?);
        let record = record.clone();
        self.blocking(move |dir| write_atomic(&dir.join("idempotency"), &name, &record)).await
    }

    async fn purge_idempotency(&self, before: u64) -> Result<usize> {
        self.blocking(move |dir| {
            let dir = dir.join("idempotency");
            let mut n = 0;
            for entry in std::fs::read_dir(&dir).map_err(io)? {
                let path = entry.map_err(io)?.path();
                if path.extension().and_then(|e| e.to_str()) != Some("json") {
                    continue;
                }
                if let Ok(Some(r)) = read_json::<IdempotencyRecord>(&path)
                    && r.created_at < before
                {
                    remove(&path)?;
                    n += 1;
                }
            }
            Ok(n)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_local_store_conforms() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalStore::open(dir.path()).unwrap();
        crate::store::conformance::run(&store).await;
    }

    #[tokio::test]
    async fn records_are_private_and_a_corrupt_one_is_skipped_not_lost() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalStore::open(dir.path()).unwrap();
        let r = crate::store::conformance::record("box_a", 1);
        store.put_box(&r).await.unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode =
            std::fs::metadata(dir.path().join("boxes/box_a.json")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::write(dir.path().join("boxes/box_x.json"), b"{not json").unwrap();
        assert_eq!(store.boxes().await.unwrap(), vec![r]);
        assert!(dir.path().join("boxes/box_x.json").exists());
    }

    #[tokio::test]
    async fn a_trace_line_cut_short_by_a_crash_is_skipped_and_the_next_starts_anew() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalStore::open(dir.path()).unwrap();
        let t = |id: &str| crate::store::conformance::trace("box_a", id);
        store.append_traces(&[t("00000000000000000001")]).await.unwrap();
        let path = dir.path().join("traces/box_a.jsonl");
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"id\":\"0000").unwrap();
        drop(f);
        store.append_traces(&[t("00000000000000000003")]).await.unwrap();
        let ids: Vec<String> =
            store.traces("box_a", None, 10).await.unwrap().into_iter().map(|t| t.id).collect();
        assert_eq!(ids, ["00000000000000000001", "00000000000000000003"]);
    }
}
