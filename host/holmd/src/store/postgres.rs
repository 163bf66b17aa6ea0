//! The `postgres` backend: a PostgreSQL database at `HOLM_DATABASE_URL`
//! (`postgres://user:password@host:5432/db`, or the `key=value` form). The
//! tables are made when missing. Each row holds its item as JSON beside the
//! columns it is found by, so records can gain fields without a migration.
//! A write is committed when it returns. A dropped connection is made again
//! on the next call.
//!
//! The connection is not encrypted: reach the database on loopback or a
//! private network (or through a local TLS tunnel).

use std::sync::Arc;

use async_trait::async_trait;
use holm_proto::host::Trace;
use tokio::sync::Mutex;
use tokio_postgres::{Client, NoTls};

use super::{BoxRecord, IdempotencyRecord, Result, RuntimeRecord, Store, StoreError};

const BACKEND: &str = "postgres";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS holm_boxes (
    id TEXT PRIMARY KEY, created_at BIGINT NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS holm_runtimes (name TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS holm_traces (
    box_id TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (box_id, id));
CREATE TABLE IF NOT EXISTS holm_shots (
    box_id TEXT NOT NULL, id TEXT NOT NULL, image BYTEA NOT NULL, PRIMARY KEY (box_id, id));
CREATE TABLE IF NOT EXISTS holm_idempotency (
    key_hash TEXT PRIMARY KEY, created_at BIGINT NOT NULL, body TEXT NOT NULL);
";

/// Records in PostgreSQL.
pub struct PostgresStore {
    url: String,
    client: Mutex<Arc<Client>>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").field("url", &redact(&self.url)).finish_non_exhaustive()
    }
}

/// `url` without its password, for logs.
pub fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        let (authority, tail) = rest.split_once('/').map_or((rest, ""), |(a, t)| (a, t));
        let authority = match authority.rsplit_once('@') {
            Some((userinfo, host)) => {
                let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
                format!("{user}@{host}")
            }
            None => authority.to_owned(),
        };
        let tail = tail.split_once('?').map_or(tail, |(t, _)| t);
        format!("{scheme}://{authority}/{tail}")
    } else {
        url.split_whitespace()
            .filter(|kv| !kv.to_ascii_lowercase().starts_with("password="))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn db(e: tokio_postgres::Error) -> StoreError {
    // The error of a failed connect can quote the configuration; keep the
    // message to what the server or the socket said.
    StoreError::backend(
        BACKEND,
        e.as_db_error().map_or_else(|| e.to_string(), |d| d.message().to_owned()),
    )
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

async fn connect(url: &str) -> Result<Client> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.map_err(|e| {
        StoreError::Config(format!("cannot connect to PostgreSQL at {}: {}", redact(url), e))
    })?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::warn!(error = %e, "the PostgreSQL connection ended");
        }
    });
    Ok(client)
}

impl PostgresStore {
    /// Connects and makes the tables when missing.
    pub async fn connect(url: &str) -> Result<Self> {
        let client = connect(url).await?;
        client.batch_execute(SCHEMA).await.map_err(db)?;
        Ok(Self { url: url.to_owned(), client: Mutex::new(Arc::new(client)) })
    }

    /// The client, connected again if the connection dropped.
    async fn client(&self) -> Result<Arc<Client>> {
        let mut guard = self.client.lock().await;
        if guard.is_closed() {
            tracing::info!("connecting to PostgreSQL again");
            *guard = Arc::new(connect(&self.url).await?);
        }
        Ok(Arc::clone(&guard))
    }
}

#[async_trait]
impl Store for PostgresStore {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    async fn put_box(&self, record: &BoxRecord) -> Result<()> {
        let body = to_json(record)?;
        // Never out of `removed` (`super::may_replace`), in the statement:
        // one row lock, so two replicas writing at once cannot both pass.
        let written = self
            .client()
            .await?
            .execute(
                "INSERT INTO holm_boxes (id, created_at, body) VALUES ($1, $2, $3)
                 ON CONFLICT (id) DO UPDATE SET created_at = EXCLUDED.created_at, body = EXCLUDED.body
                 WHERE (holm_boxes.body::jsonb ->> 'state') IS DISTINCT FROM 'removed'
                    OR (EXCLUDED.body::jsonb ->> 'state') = 'removed'",
                &[&record.id, &secs(record.created_at), &body],
            )
            .await
            .map_err(db)?;
        if written == 0 {
            return Err(StoreError::Removed { id: record.id.clone() });
        }
        Ok(())
    }

    async fn get_box(&self, id: &str) -> Result<Option<BoxRecord>> {
        let row = self
            .client()
            .await?
            .query_opt("SELECT body FROM holm_boxes WHERE id = $1", &[&id])
            .await
            .map_err(db)?;
        row.map(|r| from_json("box record", r.get::<_, &str>(0))).transpose()
    }

    async fn boxes(&self) -> Result<Vec<BoxRecord>> {
        let rows = self
            .client()
            .await?
            .query("SELECT body FROM holm_boxes ORDER BY created_at, id", &[])
            .await
            .map_err(db)?;
        let mut out = Vec::new();
        for row in rows {
            match from_json::<BoxRecord>("box record", row.get::<_, &str>(0)) {
                Ok(r) => out.push(r),
                Err(e) => tracing::warn!(error = %e, "skipping an unreadable record"),
            }
        }
        super::sort_boxes(&mut out);
        Ok(out)
    }

    async fn delete_box(&self, id: &str) -> Result<()> {
        // One statement, so the record, its traces and images go together.
        self.client()
            .await?
            .execute(
                "WITH t AS (DELETE FROM holm_traces WHERE box_id = $1),
                      s AS (DELETE FROM holm_shots WHERE box_id = $1)
                 DELETE FROM holm_boxes WHERE id = $1",
                &[&id],
            )
            .await
            .map_err(db)?;
        Ok(())
    }

    async fn put_runtime(&self, record: &RuntimeRecord) -> Result<()> {
        let body = to_json(record)?;
        self.client()
            .await?
            .execute(
                "INSERT INTO holm_runtimes (name, body) VALUES ($1, $2)
                 ON CONFLICT (name) DO UPDATE SET body = EXCLUDED.body",
                &[&record.name, &body],
            )
            .await
            .map_err(db)?;
        Ok(())
    }

    async fn runtimes(&self) -> Result<Vec<RuntimeRecord>> {
        let rows = self
            .client()
            .await?
            .query("SELECT body FROM holm_runtimes ORDER BY name", &[])
            .await
            .map_err(db)?;
        rows.iter().map(|r| from_json("remote runtime", r.get::<_, &str>(0))).collect()
    }

    async fn delete_runtime(&self, name: &str) -> Result<()> {
        self.client()
            .await?
            .execute("DELETE FROM holm_runtimes WHERE name = $1", &[&name])
            .await
            .map_err(db)?;
        Ok(())
    }

    async fn append_traces(&self, traces: &[Trace]) -> Result<()> {
        if traces.is_empty() {
            return Ok(());
        }
        let box_ids: Vec<&str> = traces.iter().map(|t| t.box_id.as_str()).collect();
        let ids: Vec<&str> = traces.iter().map(|t| t.id.as_str()).collect();
        let bodies: Vec<String> = traces.iter().map(to_json).collect::<Result<_>>()?;
        // One round trip for the whole batch.
        self.client()
            .await?
            .execute(
                "INSERT INTO holm_traces (box_id, id, body)
                 SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[])
                 ON CONFLICT DO NOTHING",
                &[&box_ids, &ids, &bodies],
            )
            .await
            .map_err(db)?;
        Ok(())
    }

    async fn traces(&self, box_id: &str, after: Option<&str>, limit: usize) -> Result<Vec<Trace>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .client()
            .await?
            .query(
                "SELECT body FROM holm_traces WHERE box_id = $1 AND id > $2 ORDER BY id LIMIT $3",
                &[&box_id, &after.unwrap_or(""), &limit],
            )
            .await
            .map_err(db)?;
        rows.iter().map(|r| from_json("trace", r.get::<_, &str>(0))).collect()
    }

    async fn put_shot(&self, box_id: &str, id: &str, image: &[u8]) -> Result<()> {
        self.client()
            .await?
            .execute(
                "INSERT INTO holm_shots (box_id, id, image) VALUES ($1, $2, $3)
                 ON CONFLICT (box_id, id) DO UPDATE SET image = EXCLUDED.image",
                &[&box_id, &id, &image],
            )
            .await
            .map_err(db)?;
        Ok(())
    }

    async fn shot(&self, box_id: &str, id: &str) -> Result<Option<Vec<u8>>> {
        let row = self
            .client()
            .await?
            .query_opt(
                "SELECT image FROM holm_shots WHERE box_id = $1 AND id = $2",
                &[&box_id, &id],
            )
            .await
            .map_err(db)?;
        Ok(row.map(|r| r.get::<_, Vec<u8>>(0)))
    }

    async fn shots(&self, box_id: &str) -> Result<Vec<(String, u64)>> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT id, octet_length(image)::BIGINT FROM holm_shots WHERE box_id = $1 ORDER BY id",
                &[&box_id],
            )
            .await
            .map_err(db)?;
        Ok(rows
            .iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1).unsigned_abs()))
            .collect())
    }

    async fn delete_shot(&self, box_id: &str, id: &str) -> Result<()> {
        self.client()
            .await?
            .execute("DELETE FROM holm_shots WHERE box_id = $1 AND id = $2", &[&box_id, &id])
            .await
            .map_err(db)?;
        Ok(())
    }

    async fn get_idempotency(&self, key_hash: &str) -> Result<Option<IdempotencyRecord>> {
        let row = self
            .client()
            .await?
            .query_opt("SELECT body FROM holm_idempotency WHERE key_hash = $1", &[&key_hash])
            .await
            .map_err(db)?;
        row.map(|r| from_json("idempotency key", r.get::<_, &str>(0))).transpose()
    }

    async fn put_idempotency(&self, record: &IdempotencyRecord) -> Result<()> {
        let body = to_json(record)?;
        self.client()
            .await?
            .execute(
                "INSERT INTO holm_idempotency (key_hash, created_at, body) VALUES ($1, $2, $3)
                 ON CONFLICT (key_hash) DO UPDATE SET created_at = EXCLUDED.created_at, body = EXCLUDED.body",
                &[&record.key_hash, &secs(record.created_at), &body],
            )
            .await
            .map_err(db)?;
        Ok(())
    }

    async fn purge_idempotency(&self, before: u64) -> Result<usize> {
        let n = self
            .client()
            .await?
            .execute("DELETE FROM holm_idempotency WHERE created_at < $1", &[&secs(before)])
            .await
            .map_err(db)?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn passwords_never_reach_a_log() {
        assert_eq!(
            redact("postgres://holm:hunter2@db.internal:5432/holm?sslmode=disable"),
            "postgres://holm@db.internal:5432/holm"
        );
        assert_eq!(redact("host=/tmp user=holm password=hunter2"), "host=/tmp user=holm");
    }
}
