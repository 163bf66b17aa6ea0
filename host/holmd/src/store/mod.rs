//! Where holmd keeps what must outlive it: box records, remote runtimes,
//! traces (with the timeline's screenshots) and idempotency keys, behind one [`Store`] trait with four
//! backends, chosen by `HOLM_STORAGE_BACKEND`:
//!
//! - [`local`]: files under `HOLM_STATE_DIR` (the default), each written
//!   atomically;
//! - [`sqlite`]: one SQLite database file;
//! - [`postgres`]: a PostgreSQL database;
//! - [`s3`]: objects in an S3-compatible bucket.
//!
//! Every backend passes the same conformance suite ([`conformance`]). The
//! service writes a box record before it answers for it, so an answered
//! box is never lost; traces are written in batches ([`crate::traces`]).

pub mod local;
pub mod postgres;
mod record;
pub mod s3;
pub mod sqlite;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use holm_proto::host::Trace;
use serde::{Deserialize, Serialize};

pub use self::record::{BoxRecord, ControlSeen, Grant, rfc3339};

/// What a store call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store cannot be reached or refused the operation.
    #[error("the {backend} store failed: {message}")]
    Backend {
        /// Which backend.
        backend: &'static str,
        /// What went wrong (never a credential).
        message: String,
    },
    /// A stored item could not be read back.
    #[error("a stored {what} cannot be read: {message}")]
    Corrupt {
        /// What kind of item.
        what: &'static str,
        /// Why.
        message: String,
    },
    /// The configuration is wrong.
    #[error("{0}")]
    Config(String),
    /// A write would have moved a removed box's record out of `removed`:
    /// removal is terminal in the store, so a server holding an older copy
    /// (another replica's, on a shared store) never brings the box back.
    #[error("box {id} is removed in the store; its record stays removed")]
    Removed {
        /// The box.
        id: String,
    },
}

impl StoreError {
    pub(crate) fn backend(backend: &'static str, e: impl fmt::Display) -> Self {
        Self::Backend { backend, message: e.to_string() }
    }
}

/// A store result.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A remote runtime (a vendor account with a name) as the server keeps it.
/// Its secrets are sealed (encrypted) by the server before they get here;
/// the store never sees a key in the clear.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeRecord {
    /// The name boxes use to pick it; unique.
    pub name: String,
    /// The vendor, such as `e2b`.
    pub provider: String,
    /// Its settings that are not secret, as given.
    #[serde(default)]
    pub fields: serde_json::Map<String, serde_json::Value>,
    /// Each secret's name and its sealed value.
    #[serde(default)]
    pub sealed: std::collections::BTreeMap<String, String>,
    /// Seconds since the epoch.
    pub created_at: u64,
    /// Seconds since the epoch.
    pub updated_at: u64,
    /// 1 when the key was first stored, one more each time it is replaced,
    /// so each box can record which key it runs with.
    #[serde(default)]
    pub key_version: u64,
}

impl fmt::Debug for RuntimeRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuntimeRecord")
            .field("name", &self.name)
            .field("provider", &self.provider)
            .field("fields", &self.fields)
            .field("sealed", &self.sealed.keys().collect::<Vec<_>>())
            .field("key_version", &self.key_version)
            .finish_non_exhaustive()
    }
}

/// What an `Idempotency-Key` made, kept for [`IDEMPOTENCY_RETENTION_SECS`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdempotencyRecord {
    /// The SHA-256 of the key, hex: the key itself is not kept.
    pub key_hash: String,
    /// The SHA-256 of the route and the parsed body, hex.
    pub fingerprint: String,
    /// The box the request made.
    pub box_id: String,
    /// Seconds since the epoch when the key was first used.
    pub created_at: u64,
}

/// How long an idempotency key is remembered: 24 hours from its first use.
pub const IDEMPOTENCY_RETENTION_SECS: u64 = 24 * 3600;

/// Where holmd keeps its records. Every method may be called concurrently.
#[async_trait]
pub trait Store: Send + Sync + fmt::Debug {
    /// The backend's name, such as `local`.
    fn backend(&self) -> &'static str;

    /// Writes a box record, replacing the one with its id. Durable when it
    /// returns. A stored record in `removed` is replaced only by one in
    /// `removed`: any other write of it is refused with
    /// [`StoreError::Removed`] and changes nothing ([`may_replace`]).
    async fn put_box(&self, record: &BoxRecord) -> Result<()>;
    /// One box record.
    async fn get_box(&self, id: &str) -> Result<Option<BoxRecord>>;
    /// Every box record, oldest first. One that cannot be read is skipped
    /// with a warning, never deleted.
    async fn boxes(&self) -> Result<Vec<BoxRecord>>;
    /// Deletes a box record, its traces and its timeline's images. Deleting a missing one is not an
    /// error.
    async fn delete_box(&self, id: &str) -> Result<()>;

    /// Writes a remote runtime, replacing the one with its name.
    async fn put_runtime(&self, record: &RuntimeRecord) -> Result<()>;
    /// Every remote runtime, by name.
    async fn runtimes(&self) -> Result<Vec<RuntimeRecord>>;
    /// Deletes a remote runtime. Deleting a missing one is not an error.
    async fn delete_runtime(&self, name: &str) -> Result<()>;

    /// Appends traces. Their ids are unique and increase.
    async fn append_traces(&self, traces: &[Trace]) -> Result<()>;
    /// A box's traces with an id after `after`, oldest first, at most `limit`.
    async fn traces(&self, box_id: &str, after: Option<&str>, limit: usize) -> Result<Vec<Trace>>;

    /// Keeps one image of a box's timeline under `id` (a trace id).
    /// Durable when it returns.
    async fn put_shot(&self, box_id: &str, id: &str, image: &[u8]) -> Result<()>;
    /// One image of a box's timeline.
    async fn shot(&self, box_id: &str, id: &str) -> Result<Option<Vec<u8>>>;
    /// A box's timeline images as (id, size in bytes), oldest first.
    async fn shots(&self, box_id: &str) -> Result<Vec<(String, u64)>>;
    /// Forgets one image of a box's timeline; a missing one is not an error.
    async fn delete_shot(&self, box_id: &str, id: &str) -> Result<()>;

    /// The record of an idempotency key, by the key's hash.
    async fn get_idempotency(&self, key_hash: &str) -> Result<Option<IdempotencyRecord>>;
    /// Writes the record of an idempotency key. Durable when it returns.
    async fn put_idempotency(&self, record: &IdempotencyRecord) -> Result<()>;
    /// Forgets keys first used before `before` (seconds since the epoch).
    /// Answers how many went.
    async fn purge_idempotency(&self, before: u64) -> Result<usize>;

    /// Makes everything written so far durable, before the server stops.
    async fn flush(&self) -> Result<()> {
        Ok(())
    }
}

/// Which backend, with its settings, from the environment.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreConfig {
    /// Files under a directory.
    Local {
        /// The directory.
        dir: std::path::PathBuf,
    },
    /// A SQLite database file.
    Sqlite {
        /// The file.
        path: std::path::PathBuf,
    },
    /// A PostgreSQL database.
    Postgres {
        /// `postgres://user:password@host:port/db`. Never logged.
        url: String,
    },
    /// An S3-compatible bucket.
    S3(s3::S3Config),
}

impl fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Local { dir } => f.debug_struct("Local").field("dir", dir).finish(),
            Self::Sqlite { path } => f.debug_struct("Sqlite").field("path", path).finish(),
            // The URL may hold a password.
            Self::Postgres { .. } => f.debug_struct("Postgres").finish_non_exhaustive(),
            Self::S3(c) => c.fmt(f),
        }
    }
}

impl StoreConfig {
    /// The backend's name.
    pub fn backend(&self) -> &'static str {
        match self {
            Self::Local { .. } => "local",
            Self::Sqlite { .. } => "sqlite",
            Self::Postgres { .. } => "postgres",
            Self::S3(_) => "s3",
        }
    }

    /// Where, for the log: never a credential.
    pub fn describe(&self) -> String {
        match self {
            Self::Local { dir } => dir.display().to_string(),
            Self::Sqlite { path } => path.display().to_string(),
            Self::Postgres { url } => postgres::redact(url),
            Self::S3(c) => c.describe(),
        }
    }
}

/// Opens (and prepares) the store `config` names.
pub async fn open(config: &StoreConfig) -> Result<Arc<dyn Store>> {
    Ok(match config {
        StoreConfig::Local { dir } => Arc::new(local::LocalStore::open(dir)?),
        StoreConfig::Sqlite { path } => Arc::new(sqlite::SqliteStore::open(path).await?),
        StoreConfig::Postgres { url } => Arc::new(postgres::PostgresStore::connect(url).await?),
        StoreConfig::S3(c) => Arc::new(s3::S3Store::open(c.clone()).await?),
    })
}

/// The SHA-256 of `bytes`, hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `new` may replace the stored record `old`: never out of
/// `removed`, the terminal state. Each backend checks it in its write
/// (PostgreSQL and SQLite in the statement itself).
pub(crate) fn may_replace(old: Option<&BoxRecord>, new: &BoxRecord) -> bool {
    old.is_none_or(|o| {
        o.state != holm_proto::host::BoxState::Removed
            || new.state == holm_proto::host::BoxState::Removed
    })
}

/// Orders records the way [`Store::boxes`] answers them.
pub(crate) fn sort_boxes(records: &mut [BoxRecord]) {
    records.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
}

pub mod conformance;
