//! A box's recordings outlive it: when a running box is removed, the server
//! stops its running recordings, fetches every file into its state
//! directory (`<HOLM_STATE_DIR>/recordings/<box id>/`, with `index.json`,
//! the box's listing), and answers `GET /v1/boxes/{id}/recordings` and
//! `.../recordings/{file}` from there once the box is gone.
//!
//! The kept files are bound by `HOLM_RECORDINGS_KEPT` (default 20 GiB,
//! [`super::Limits::recordings_bytes`]): after each box's files are kept,
//! whole boxes' recordings are dropped oldest first until the total fits,
//! and a box's files that alone would pass it are not fetched. Fetching is
//! bound in time ([`FETCH_TIME`]): a box whose guest does not answer is
//! removed all the same, its recordings lost (logged).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use futures_util::StreamExt;
use holm_client::BoxClient;
use holm_proto::recording::{Recording, RecordingState};
use holm_proto::{ApiError, ErrorCode};
use tokio::io::AsyncWriteExt;

use super::Service;
use super::errors::Error;
use super::state::Entry;

/// How long a removal may spend fetching a box's recordings.
pub const FETCH_TIME: Duration = Duration::from_secs(120);

/// The listing of a box's kept recordings, beside its files.
const INDEX: &str = "index.json";

/// Where a server keeps removed boxes' recordings, and how much.
#[derive(Debug, Clone)]
struct Archive {
    /// `<state dir>/recordings`.
    dir: PathBuf,
    /// The most bytes kept.
    max_bytes: u64,
}

/// The recordings of removed boxes. Owns the archive, set once
/// ([`Recordings::keep_in`]) and read without a lock after; it holds no
/// lock while a box's files are fetched.
#[derive(Debug)]
pub(super) struct Recordings {
    /// The most bytes kept ([`super::Limits::recordings_bytes`]).
    max_bytes: u64,
    /// Where removed boxes' recordings are kept, once set.
    archive: OnceLock<Archive>,
}

impl Recordings {
    /// Recordings kept up to `max_bytes`, once a directory is set.
    pub(super) fn new(max_bytes: u64) -> Self {
        Self { max_bytes, archive: OnceLock::new() }
    }

    /// Keeps removed boxes' recordings in `dir`; a second call changes
    /// nothing.
    pub(super) fn keep_in(&self, dir: PathBuf) {
        let _ = self.archive.set(Archive { dir, max_bytes: self.max_bytes });
    }

    /// Fetches a running box's recordings into the archive before it is
    /// removed; failures are logged, never stop the removal.
    pub(super) async fn keep_box(&self, entry: &Entry) {
        let Some(archive) = self.archive.get() else { return };
        let record = entry.record();
        let Some(guest) = record.guest.as_ref() else { return };
        let client = BoxClient::at(guest, &record.secret);
        let id = record.id.to_string();
        let dir = archive.dir.join(&id);
        let work = keep(&client, &dir, archive.max_bytes);
        match tokio::time::timeout(FETCH_TIME, work).await {
            Ok(Ok(0)) => {}
            Ok(Ok(n)) => {
                tracing::info!(box_id = %id, files = n, "kept the box's recordings");
                prune(&archive.dir, archive.max_bytes, &id).await;
            }
            Ok(Err(e)) => {
                tracing::warn!(box_id = %id, error = %e, "could not keep the box's recordings")
            }
            Err(_) => tracing::warn!(box_id = %id, "keeping the box's recordings took too long"),
        }
    }

    /// The kept recordings of a removed box, when the server has them.
    pub(super) fn kept(&self, id: &str) -> Option<Vec<Recording>> {
        let dir = self.archive.get()?.dir.join(id);
        serde_json::from_slice(&std::fs::read(dir.join(INDEX)).ok()?).ok()
    }

    /// The path of a removed box's kept recording `file`.
    pub(super) fn kept_file(&self, id: &str, file: &str) -> Result<PathBuf, Error> {
        let listed = self.kept(id).unwrap_or_default();
        let Some(r) = listed.iter().find(|r| r.file == file) else {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("box {id} left no recording {file:?}"),
            )
            .with_hint(format!("GET /v1/boxes/{id}/recordings lists what the server kept"))
            .into());
        };
        Ok(self.archive.get().map(|a| a.dir.join(id).join(&r.file)).unwrap_or_default())
    }
}

impl Service {
    /// Keeps removed boxes' recordings in `dir`, at most `max_bytes` of them.
    pub fn keep_recordings(&self, dir: PathBuf) {
        self.recordings.keep_in(dir);
    }

    /// The kept recordings of a removed box, when the server has them.
    pub fn kept_recordings(&self, id: &str) -> Option<Vec<Recording>> {
        self.recordings.kept(id)
    }

    /// The path of a removed box's kept recording `file`.
    pub fn kept_recording(&self, id: &str, file: &str) -> Result<PathBuf, Error> {
        self.recordings.kept_file(id, file)
    }
}

/// Stops the box's running recordings, fetches each file that fits, and
/// writes the listing of what was kept. Answers how many files were kept.
async fn keep(client: &BoxClient, dir: &Path, max_bytes: u64) -> anyhow::Result<usize> {
    let listed = client.recordings().await?;
    for r in listed.iter().filter(|r| r.state == RecordingState::Recording) {
        let _ = client.stop_recording(r.screen).await;
    }
    let listed = client.recordings().await?;
    if listed.is_empty() {
        return Ok(0);
    }
    tokio::fs::create_dir_all(dir).await?;
    let mut kept = Vec::new();
    let mut total = 0u64;
    for r in listed {
        total += r.bytes;
        if total > max_bytes || !safe_name(&r.file) {
            tracing::warn!(file = %r.file, "a recording is not kept: past the server's limit");
            continue;
        }
        let tmp = dir.join(format!(".{}.part", r.file));
        let mut out = tokio::fs::File::create(&tmp).await?;
        let mut stream = std::pin::pin!(client.recording_stream(&r.file).await?);
        while let Some(chunk) = stream.next().await {
            out.write_all(&chunk?).await?;
        }
        out.flush().await?;
        tokio::fs::rename(&tmp, dir.join(&r.file)).await?;
        kept.push(r);
    }
    tokio::fs::write(dir.join(INDEX), serde_json::to_vec_pretty(&kept)?).await?;
    Ok(kept.len())
}

/// A file name a guest may answer: no separator, no dot segment.
fn safe_name(file: &str) -> bool {
    !file.is_empty()
        && !file.starts_with('.')
        && file.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Drops whole boxes' recordings, oldest first, until the total fits in
/// `max_bytes`; never the box just kept (`newest`).
async fn prune(dir: &Path, max_bytes: u64, newest: &str) {
    let dir = dir.to_owned();
    let newest = newest.to_owned();
    let _ = tokio::task::spawn_blocking(move || {
        let mut boxes: Vec<(std::time::SystemTime, u64, PathBuf)> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|d| d.file_name() != newest.as_str())
            .filter_map(|d| {
                let when = d.metadata().ok()?.modified().ok()?;
                Some((when, dir_bytes(&d.path()), d.path()))
            })
            .collect();
        boxes.sort();
        let mut total: u64 = dir_bytes(&dir.join(&newest)) + boxes.iter().map(|b| b.1).sum::<u64>();
        for (_, bytes, path) in boxes {
            if total <= max_bytes {
                break;
            }
            tracing::info!(dir = %path.display(), bytes, "dropped old recordings: past the server's limit");
            let _ = std::fs::remove_dir_all(&path);
            total -= bytes;
        }
    })
    .await;
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|d| d.metadata().ok())
        .map(|m| m.len())
        .sum()
}
