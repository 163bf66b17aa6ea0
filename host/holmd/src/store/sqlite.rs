//! The `sqlite` backend: one database file (`HOLM_SQLITE_PATH`, default
//! `holm.db` in the state directory), in WAL mode with `synchronous=FULL`,
//! so a write is on disk when it returns and `kill -9` loses nothing that
//! was answered. Each row holds its item as JSON beside the columns it is
//! found by, so records can gain fields without a migration.

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use holm_proto::host::Trace;
use rusqlite::{Connection, OptionalExtension, params};

use super::{BoxRecord, IdempotencyRecord, Result, RuntimeRecord, Store, StoreError};

const BACKEND: &str = "sqlite";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS boxes (
    id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runtimes (name TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS traces (
    box_id TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (box_id, id));
CREATE TABLE IF NOT EXISTS shots (
    box_id TEXT NOT NULL, id TEXT NOT NULL, image BLOB NOT NULL, PRIMARY KEY (box_id, id));
CREATE TABLE IF NOT EXISTS idempotency (
    key_hash TEXT PRIMARY KEY, created_at INTEGER NOT NULL, body TEXT NOT NULL);
";

/// Records in a SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
}

fn db(e: rusqlite::Error) -> StoreError {
    StoreError::backend(BACKEND, e)
}

fn to_json(v: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(v).map_err(|e| StoreError::backend(BACKEND, e))
}

fn from_json<T: serde::de::DeserializeOwned>(what: &'static str, s: &str) -> Result<T> {
    serde_json::from_str(s).map_err(|e| StoreError::Corrupt { what, message: e.to_string() })
}

fn secs(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl SqliteStore {
    /// Opens (and makes, owner-only) the database at `path`.
    pub async fn open(path: &Path) -> Result<Self> {
        let path = path.to_owned();
        let conn = tokio::task::spawn_blocking(move || -> Result<Connection> {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| {
                    StoreError::Config(format!("cannot make {}: {e}", parent.display()))
                })?;
            }
            // Made owner-only before SQLite opens it: records hold secrets.
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(&path)
                .map_err(|e| StoreError::Config(format!("cannot open {}: {e}", path.display())))?;
            let conn = Connection::open(&path).map_err(db)?;
            conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(db)?;
            conn.pragma_update(None, "journal_mode", "WAL").map_err(db)?;
            conn.pragma_update(None, "synchronous", "FULL").map_err(db)?;
            conn.execute_batch(SCHEMA).map_err(db)?;
            Ok(conn)
        })
        .await
        .map_err(|e| StoreError::backend(BACKEND, e))??;
        Ok(Self { conn: Arc::new(Mutex::new(conn)) })
    }

    async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            let mut conn = conn.lock().unwrap_or_else(|e| e.into_inner());
            f(&mut conn)
        })
        .await
        .map_err(|e| StoreError::backend(BACKEND, e))?
    }
}

#[async_trait]
impl Store for SqliteStore {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    async fn put_box(&self, record: &BoxRecord) -> Result<()> {
        let (id, created, body) = (record.id.clone(), secs(record.created_at), to_json(record)?);
        self.with(move |c| {
            // Never out of `removed` (`super::may_replace`), in the statement.
            let written = c
                .execute(
                    "INSERT INTO boxes (id, created_at, body) VALUES (?1, ?2, ?3)
                     ON CONFLICT (id) DO UPDATE SET created_at = excluded.created_at, body = excluded.body
                     WHERE json_extract(boxes.body, '$.state') IS NOT 'removed'
                        OR json_extract(excluded.body, '$.state') = 'removed'",
                    params![id, created, body],
                )
                .map_err(db)?;
            if written == 0 {
                return Err(StoreError::Removed { id });
            }
            Ok(())
        })
        .await
    }

    async fn get_box(&self, id: &str) -> Result<Option<BoxRecord>> {
        let id = id.to_owned();
        self.with(move |c| {
            let body: Option<String> = c
                .query_row("SELECT body FROM boxes WHERE id = ?1", params![id], |r| r.get(0))
                .optional()
                .map_err(db)?;
            body.map(|b| from_json("box record", &b)).transpose()
        })
        .await
    }

    async fn boxes(&self) -> Result<Vec<BoxRecord>> {
        let mut all = self
            .with(|c| {
                let mut stmt =
                    c.prepare("SELECT body FROM boxes ORDER BY created_at, id").map_err(db)?;
                let rows = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(db)?;
                let mut out = Vec::new();
                for body in rows {
                    match from_json::<BoxRecord>("box record", &body.map_err(db)?) {
                        Ok(r) => out.push(r),
                        Err(e) => tracing::warn!(error = %e, "skipping an unreadable record"),
                    }
                }
                Ok(out)
            })
            .await?;
        super::sort_boxes(&mut all);
        Ok(all)
    }

    async fn delete_box(&self, id: &str) -> Result<()> {
        let id = id.to_owned();
        self.with(move |c| {
            let tx = c.transaction().map_err(db)?;
            tx.execute("DELETE FROM traces WHERE box_id = ?1", params![id]).map_err(db)?;
            tx.execute("DELETE FROM shots WHERE box_id = ?1", params![id]).map_err(db)?;
            tx.execute("DELETE FROM boxes WHERE id = ?1", params![id]).map_err(db)?;
            tx.commit().map_err(db)
        })
        .await
    }

    async fn put_runtime(&self, record: &RuntimeRecord) -> Result<()> {
        let (name, body) = (record.name.clone(), to_json(record)?);
        self.with(move |c| {
            c.execute(
                "INSERT INTO runtimes (name, body) VALUES (?1, ?2)
                 ON CONFLICT (name) DO UPDATE SET body = excluded.body",
                params![name, body],
            )
            .map_err(db)?;
            Ok(())
        })
        .await
    }

    async fn runtimes(&self) -> Result<Vec<RuntimeRecord>> {
        self.with(|c| {
            let mut stmt = c.prepare("SELECT body FROM runtimes ORDER BY name").map_err(db)?;
            let rows = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(db)?;
            rows.map(|b| from_json("remote runtime", &b.map_err(db)?)).collect()
        })
        .await
    }

    async fn delete_runtime(&self, name: &str) -> Result<()> {
        let name = name.to_owned();
        self.with(move |c| {
            c.execute("DELETE FROM runtimes WHERE name = ?1", params![name]).map_err(db)?;
            Ok(())
        })
        .await
    }

    async fn append_traces(&self, traces: &[Trace]) -> Result<()> {
        let rows: Vec<(String, String, String)> = traces
            .iter()
            .map(|t| Ok((t.box_id.clone(), t.id.clone(), to_json(t)?)))
            .collect::<Result<_>>()?;
        self.with(move |c| {
            let tx = c.transaction().map_err(db)?;
            {
                let mut stmt = tx
                    .prepare(
                        "INSERT INTO traces (box_id, id, body) VALUES (?1, ?2, ?3)
                         ON CONFLICT DO NOTHING",
                    )
                    .map_err(db)?;
                for (box_id, id, body) in rows {
                    stmt.execute(params![box_id, id, body]).map_err(db)?;
                }
            }
            tx.commit().map_err(db)
        })
        .await
    }

    async fn traces(&self, box_id: &str, after: Option<&str>, limit: usize) -> Result<Vec<Trace>> {
        let (box_id, after) = (box_id.to_owned(), after.unwrap_or("").to_owned());
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.with(move |c| {
            let mut stmt = c
                .prepare(
                    "SELECT body FROM traces WHERE box_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
                )
                .map_err(db)?;
            let rows = stmt
                .query_map(params![box_id, after, limit], |r| r.get::<_, String>(0))
                .map_err(db)?;
            rows.map(|b| from_json("trace", &b.map_err(db)?)).collect()
        })
        .await
    }

    async fn put_shot(&self, box_id: &str, id: &str, image: &[u8]) -> Result<()> {
        let (box_id, id, image) = (box_id.to_owned(), id.to_owned(), image.to_vec());
        self.with(move |c| {
            c.execute(
                "INSERT INTO shots (box_id, id, image) VALUES (?1, ?2, ?3)
                 ON CONFLICT (box_id, id) DO UPDATE SET image = excluded.image",
                params![box_id, id, image],
            )
            .map(drop)
            .map_err(db)
        })
        .await
    }

    async fn shot(&self, box_id: &str, id: &str) -> Result<Option<Vec<u8>>> {
        let (box_id, id) = (box_id.to_owned(), id.to_owned());
        self.with(move |c| {
            c.query_row(
                "SELECT image FROM shots WHERE box_id = ?1 AND id = ?2",
                params![box_id, id],
                |r| r.get::<_, Vec<u8>>(0),
            )
            .optional()
            .map_err(db)
        })
        .await
    }

    async fn shots(&self, box_id: &str) -> Result<Vec<(String, u64)>> {
        let box_id = box_id.to_owned();
        self.with(move |c| {
            let mut stmt = c
                .prepare("SELECT id, length(image) FROM shots WHERE box_id = ?1 ORDER BY id")
                .map_err(db)?;
            let rows = stmt
                .query_map(params![box_id], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?.unsigned_abs()))
                })
                .map_err(db)?;
            rows.map(|r| r.map_err(db)).collect()
        })
        .await
    }

    async fn delete_shot(&self, box_id: &str, id: &str) -> Result<()> {
        let (box_id, id) = (box_id.to_owned(), id.to_owned());
        self.with(move |c| {
            c.execute("DELETE FROM shots WHERE box_id = ?1 AND id = ?2", params![box_id, id])
                .map(drop)
                .map_err(db)
        })
        .await
    }

    async fn get_idempotency(&self, key_hash: &str) -> Result<Option<IdempotencyRecord>> {
        let key = key_hash.to_owned();
        self.with(move |c| {
            let body: Option<String> = c
                .query_row("SELECT body FROM idempotency WHERE key_hash = ?1", params![key], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(db)?;
            body.map(|b| from_json("idempotency key", &b)).transpose()
        })
        .await
    }

    async fn put_idempotency(&self, record: &IdempotencyRecord) -> Result<()> {
        let (key, created, body) =
            (record.key_hash.clone(), secs(record.created_at), to_json(record)?);
        self.with(move |c| {
            c.execute(
                "INSERT INTO idempotency (key_hash, created_at, body) VALUES (?1, ?2, ?3)
                 ON CONFLICT (key_hash) DO UPDATE SET created_at = excluded.created_at, body = excluded.body",
                params![key, created, body],
            )
            .map_err(db)?;
            Ok(())
        })
        .await
    }

    async fn purge_idempotency(&self, before: u64) -> Result<usize> {
        let before = secs(before);
        self.with(move |c| {
            c.execute("DELETE FROM idempotency WHERE created_at < ?1", params![before]).map_err(db)
        })
        .await
    }

    async fn flush(&self) -> Result<()> {
        // Moves the WAL into the main file, so the file alone is a backup.
        self.with(|c| c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").map_err(db)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_sqlite_store_conforms_and_keeps_what_it_wrote_across_an_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/holm.db");
        let store = SqliteStore::open(&path).await.unwrap();
        crate::store::conformance::run(&store).await;
        let r = crate::store::conformance::record("box_keep", 5);
        store.put_box(&r).await.unwrap();
        drop(store);
        let again = SqliteStore::open(&path).await.unwrap();
        assert_eq!(again.boxes().await.unwrap(), vec![r]);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
