//! The `s3` backend: objects in an S3-compatible bucket (AWS S3, MinIO,
//! Ceph, R2, ...), signed with SigV4 (`rusty-s3`, which only signs: the
//! requests go over the server's own HTTP client).
//!
//! ```text
//! <prefix>boxes/<box id>.json
//! <prefix>runtimes/<hex of name>.json
//! <prefix>idempotency/<key hash>.json
//! <prefix>traces/<box id>/<first trace id>.jsonl   one object per batch
//! <prefix>shots/<box id>/<trace id>.img            one timeline image each
//! ```
//!
//! A PUT is durable when S3 answers it, and replaces an object whole, so a
//! crash never leaves half a record. Trace ids sort as strings and grow, so
//! a box's batches list in order and a page reads only the batches it needs.
//! The bucket is made at start when it does not exist.

use std::time::Duration;

use async_trait::async_trait;
use futures_util::{StreamExt, TryStreamExt};
use holm_proto::host::Trace;
use rusty_s3::actions::{ListObjectsV2, ListObjectsV2Response};
use rusty_s3::{Bucket, Credentials, S3Action, UrlStyle};

use super::{BoxRecord, IdempotencyRecord, Result, RuntimeRecord, Store, StoreError};

const BACKEND: &str = "s3";
/// How long a signed request stays valid.
const SIGNED_FOR: Duration = Duration::from_secs(120);

/// Where the bucket is and how to sign for it, from the environment.
#[derive(Clone, PartialEq, Eq)]
pub struct S3Config {
    /// `HOLM_S3_ENDPOINT`, such as `https://s3.eu-west-1.amazonaws.com` or
    /// `http://127.0.0.1:9000` (default: AWS for the region).
    pub endpoint: String,
    /// `HOLM_S3_BUCKET`.
    pub bucket: String,
    /// `HOLM_S3_REGION` (default `us-east-1`).
    pub region: String,
    /// `HOLM_S3_PREFIX`: put every object under this (default none).
    pub prefix: String,
    /// `HOLM_S3_PATH_STYLE`: `true` for `endpoint/bucket/key` URLs (the
    /// default with a custom endpoint), `false` for `bucket.endpoint/key`.
    pub path_style: bool,
    /// `HOLM_S3_ACCESS_KEY_ID`, else `AWS_ACCESS_KEY_ID`.
    pub access_key_id: String,
    /// `HOLM_S3_SECRET_ACCESS_KEY`, else `AWS_SECRET_ACCESS_KEY`. Never logged.
    pub secret_access_key: String,
    /// `HOLM_S3_SESSION_TOKEN`, else `AWS_SESSION_TOKEN`. Never logged.
    pub session_token: Option<String>,
}

impl std::fmt::Debug for S3Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Config")
            .field("endpoint", &self.endpoint)
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("prefix", &self.prefix)
            .field("path_style", &self.path_style)
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

impl S3Config {
    /// Where, for the log.
    pub fn describe(&self) -> String {
        format!("{}/{}/{}", self.endpoint.trim_end_matches('/'), self.bucket, self.prefix)
    }

    /// Reads the `HOLM_S3_*` variables through `get`.
    pub fn from_lookup(get: &dyn Fn(&str) -> Option<String>) -> Result<Self, String> {
        let bucket = get(crate::vars::S3_BUCKET)
            .ok_or("HOLM_STORAGE_BACKEND=s3 needs HOLM_S3_BUCKET, the bucket's name")?;
        let region = get(crate::vars::S3_REGION).unwrap_or_else(|| "us-east-1".to_owned());
        let custom = get(crate::vars::S3_ENDPOINT);
        let path_style = match get(crate::vars::S3_PATH_STYLE).as_deref() {
            None => custom.is_some(),
            Some("true" | "1") => true,
            Some("false" | "0") => false,
            Some(v) => return Err(format!("HOLM_S3_PATH_STYLE={v:?} is not true or false")),
        };
        let endpoint = custom.unwrap_or_else(|| format!("https://s3.{region}.amazonaws.com"));
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(format!("HOLM_S3_ENDPOINT={endpoint:?} is not an http(s) URL"));
        }
        let access_key_id = get(crate::vars::S3_ACCESS_KEY_ID)
            .or_else(|| get("AWS_ACCESS_KEY_ID"))
            .ok_or("HOLM_STORAGE_BACKEND=s3 needs HOLM_S3_ACCESS_KEY_ID (or AWS_ACCESS_KEY_ID)")?;
        let secret_access_key =
            get(crate::vars::S3_SECRET_ACCESS_KEY).or_else(|| get("AWS_SECRET_ACCESS_KEY")).ok_or(
                "HOLM_STORAGE_BACKEND=s3 needs HOLM_S3_SECRET_ACCESS_KEY (or AWS_SECRET_ACCESS_KEY)",
            )?;
        let session_token = get(crate::vars::S3_SESSION_TOKEN).or_else(|| get("AWS_SESSION_TOKEN"));
        let mut prefix = get(crate::vars::S3_PREFIX).unwrap_or_default();
        if !prefix.is_empty() && !prefix.ends_with('/') {
            prefix.push('/');
        }
        Ok(Self {
            endpoint,
            bucket,
            region,
            prefix,
            path_style,
            access_key_id,
            secret_access_key,
            session_token,
        })
    }
}

/// Records in an S3 bucket.
#[derive(Debug)]
pub struct S3Store {
    bucket: Bucket,
    credentials: Credentials,
    prefix: String,
    http: reqwest::Client,
}

fn s3(e: impl std::fmt::Display) -> StoreError {
    StoreError::backend(BACKEND, e)
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

/// Reads S3's error code out of its XML answer, for the message.
fn error_code(body: &str) -> String {
    let code = |tag: &str| {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        body.split_once(&open).and_then(|(_, r)| r.split_once(&close)).map(|(v, _)| v.to_owned())
    };
    match (code("Code"), code("Message")) {
        (Some(c), Some(m)) => format!("{c}: {m}"),
        (Some(c), None) => c,
        _ => "no error code".to_owned(),
    }
}

impl S3Store {
    /// Connects, and makes the bucket if it does not exist.
    pub async fn open(config: S3Config) -> Result<Self> {
        let endpoint = config
            .endpoint
            .parse()
            .map_err(|e| StoreError::Config(format!("HOLM_S3_ENDPOINT is not a URL: {e}")))?;
        let style = if config.path_style { UrlStyle::Path } else { UrlStyle::VirtualHost };
        let bucket = Bucket::new(endpoint, style, config.bucket.clone(), config.region.clone())
            .map_err(|e| StoreError::Config(format!("the S3 bucket settings are wrong: {e}")))?;
        let credentials = match config.session_token.clone() {
            Some(t) => Credentials::new_with_token(
                config.access_key_id.clone(),
                config.secret_access_key.clone(),
                t,
            ),
            None => {
                Credentials::new(config.access_key_id.clone(), config.secret_access_key.clone())
            }
        };
        let http = holm_client::client_builder()
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| StoreError::Config(format!("cannot make an HTTP client: {e}")))?;
        let store = Self { bucket, credentials, prefix: config.prefix.clone(), http };
        let head = store.bucket.head_bucket(Some(&store.credentials)).sign(SIGNED_FOR);
        let r = store.http.head(head).send().await.map_err(|e| {
            StoreError::Config(format!("cannot reach S3 at {}: {e}", config.describe()))
        })?;
        match r.status().as_u16() {
            200..=299 => {}
            404 => {
                tracing::info!(bucket = %config.bucket, "making the S3 bucket");
                let url = store.bucket.create_bucket(&store.credentials).sign(SIGNED_FOR);
                // Always a body, if empty: some servers want a length.
                let body = if config.region == "us-east-1" {
                    String::new()
                } else {
                    format!(
                        "<CreateBucketConfiguration><LocationConstraint>{}</LocationConstraint></CreateBucketConfiguration>",
                        config.region
                    )
                };
                let rb = store
                    .http
                    .put(url)
                    .header(reqwest::header::CONTENT_LENGTH, body.len())
                    .body(body);
                store.check(rb.send().await.map_err(s3)?).await.map_err(|e| {
                    StoreError::Config(format!("cannot make the bucket {}: {e}", config.bucket))
                })?;
            }
            s => {
                return Err(StoreError::Config(format!(
                    "S3 refused the bucket {} with status {s}: check HOLM_S3_* and the credentials",
                    config.bucket
                )));
            }
        }
        Ok(store)
    }

    async fn check(&self, r: reqwest::Response) -> Result<reqwest::Response> {
        if r.status().is_success() {
            return Ok(r);
        }
        let status = r.status().as_u16();
        let body = r.text().await.unwrap_or_default();
        Err(s3(format!("status {status}, {}", error_code(&body))))
    }

    fn key(&self, rest: &str) -> String {
        format!("{}{rest}", self.prefix)
    }

    async fn put(&self, key: &str, body: Vec<u8>) -> Result<()> {
        let url = self.bucket.put_object(Some(&self.credentials), key).sign(SIGNED_FOR);
        self.check(self.http.put(url).body(body).send().await.map_err(s3)?).await?;
        Ok(())
    }

    async fn get(&self, key: &str) -> Result<Option<bytes::Bytes>> {
        let url = self.bucket.get_object(Some(&self.credentials), key).sign(SIGNED_FOR);
        let r = self.http.get(url).send().await.map_err(s3)?;
        if r.status().as_u16() == 404 {
            return Ok(None);
        }
        Ok(Some(self.check(r).await?.bytes().await.map_err(s3)?))
    }

    async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        what: &'static str,
        key: &str,
    ) -> Result<Option<T>> {
        match self.get(key).await? {
            None => Ok(None),
            Some(b) => serde_json::from_slice(&b)
                .map(Some)
                .map_err(|e| StoreError::Corrupt { what, message: format!("{key}: {e}") }),
        }
    }

    async fn delete(&self, key: &str) -> Result<()> {
        let url = self.bucket.delete_object(Some(&self.credentials), key).sign(SIGNED_FOR);
        let r = self.http.delete(url).send().await.map_err(s3)?;
        if r.status().as_u16() == 404 {
            return Ok(());
        }
        self.check(r).await?;
        Ok(())
    }

    /// Every object under `prefix`, in key order: (key, size in bytes).
    async fn list(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut action = ListObjectsV2::new(&self.bucket, Some(&self.credentials));
            action.with_prefix(prefix);
            if let Some(t) = &token {
                action.with_continuation_token(t.clone());
            }
            let url = action.sign(SIGNED_FOR);
            let text = self
                .check(self.http.get(url).send().await.map_err(s3)?)
                .await?
                .text()
                .await
                .map_err(s3)?;
            let page: ListObjectsV2Response = ListObjectsV2::parse_response(&text)
                .map_err(|e| s3(format!("cannot read a listing: {e}")))?;
            out.extend(page.contents.into_iter().map(|c| (c.key, c.size)));
            match page.next_continuation_token {
                Some(t) => token = Some(t),
                None => break,
            }
        }
        out.sort();
        Ok(out)
    }

    /// Reads every JSON object under `prefix`, a few at a time; unreadable
    /// ones are skipped with a warning.
    async fn get_all<T: serde::de::DeserializeOwned>(
        &self,
        what: &'static str,
        prefix: &str,
    ) -> Result<Vec<T>> {
        let keys = self.list(prefix).await?;
        let items: Vec<Result<Option<T>>> = futures_util::stream::iter(keys)
            .map(|(k, _)| async move { self.get_json::<T>(what, &k).await })
            .buffered(16)
            .collect()
            .await;
        let mut out = Vec::new();
        for item in items {
            match item {
                Ok(Some(v)) => out.push(v),
                Ok(None) => {}
                Err(e @ StoreError::Corrupt { .. }) => {
                    tracing::warn!(error = %e, "skipping an unreadable record");
                }
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}

#[async_trait]
impl Store for S3Store {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    async fn put_box(&self, record: &BoxRecord) -> Result<()> {
        let body = serde_json::to_vec(record).map_err(s3)?;
        let key = self.key(&format!("boxes/{}.json", record.id));
        // Read, then write: S3 replaces objects whole, with no condition on
        // their content, so two servers writing one box at once may race
        // (docs/deploy.md says so); one server never does.
        let stored: Option<BoxRecord> = match self.get_json("box record", &key).await {
            Ok(r) => r,
            // An unreadable record is replaced, as before this check.
            Err(StoreError::Corrupt { .. }) => None,
            Err(e) => return Err(e),
        };
        if !super::may_replace(stored.as_ref(), record) {
            return Err(StoreError::Removed { id: record.id.clone() });
        }
        self.put(&key, body).await
    }

    async fn get_box(&self, id: &str) -> Result<Option<BoxRecord>> {
        self.get_json("box record", &self.key(&format!("boxes/{id}.json"))).await
    }

    async fn boxes(&self) -> Result<Vec<BoxRecord>> {
        let mut all: Vec<BoxRecord> = self.get_all("box record", &self.key("boxes/")).await?;
        super::sort_boxes(&mut all);
        Ok(all)
    }

    async fn delete_box(&self, id: &str) -> Result<()> {
        // Traces and images first: a crash in between leaves a record,
        // never orphans.
        for what in ["traces", "shots"] {
            for (key, _) in self.list(&self.key(&format!("{what}/{id}/"))).await? {
                self.delete(&key).await?;
            }
        }
        self.delete(&self.key(&format!("boxes/{id}.json"))).await
    }

    async fn put_runtime(&self, record: &RuntimeRecord) -> Result<()> {
        let body = serde_json::to_vec(record).map_err(s3)?;
        self.put(&self.key(&format!("runtimes/{}.json", hex(&record.name))), body).await
    }

    async fn runtimes(&self) -> Result<Vec<RuntimeRecord>> {
        let mut all: Vec<RuntimeRecord> =
            self.get_all("remote runtime", &self.key("runtimes/")).await?;
        all.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(all)
    }

    async fn delete_runtime(&self, name: &str) -> Result<()> {
        self.delete(&self.key(&format!("runtimes/{}.json", hex(name)))).await
    }

    async fn append_traces(&self, traces: &[Trace]) -> Result<()> {
        let mut by_box: std::collections::BTreeMap<String, Vec<&Trace>> = Default::default();
        for t in traces {
            by_box.entry(t.box_id.clone()).or_default().push(t);
        }
        // One object per box per batch, named by its first (smallest) id.
        let mut objects = Vec::new();
        for (box_id, mut batch) in by_box {
            batch.sort_by(|a, b| a.id.cmp(&b.id));
            let mut body = Vec::new();
            for t in &batch {
                serde_json::to_writer(&mut body, t).map_err(s3)?;
                body.push(b'\n');
            }
            objects.push((self.key(&format!("traces/{box_id}/{}.jsonl", batch[0].id)), body));
        }
        futures_util::stream::iter(objects)
            .map(|(key, body)| async move { self.put(&key, body).await })
            .buffer_unordered(8)
            .try_collect::<Vec<()>>()
            .await?;
        Ok(())
    }

    async fn traces(&self, box_id: &str, after: Option<&str>, limit: usize) -> Result<Vec<Trace>> {
        let prefix = self.key(&format!("traces/{box_id}/"));
        let keys: Vec<String> = self.list(&prefix).await?.into_iter().map(|(k, _)| k).collect();
        let first_id = |k: &str| {
            k.strip_prefix(&prefix).and_then(|n| n.strip_suffix(".jsonl")).unwrap_or("").to_owned()
        };
        // A batch holds ids from its first up to the next batch's first.
        let start = match after {
            None => 0,
            Some(a) => keys.iter().rposition(|k| first_id(k).as_str() <= a).unwrap_or(0),
        };
        let mut out = Vec::new();
        for key in &keys[start..] {
            let Some(body) = self.get(key).await? else { continue };
            for line in body.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                match serde_json::from_slice::<Trace>(line) {
                    Ok(t) if after.is_none_or(|a| t.id.as_str() > a) => out.push(t),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(key, error = %e, "skipping an unreadable trace"),
                }
            }
            if out.len() >= limit {
                break;
            }
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out.truncate(limit);
        Ok(out)
    }

    async fn put_shot(&self, box_id: &str, id: &str, image: &[u8]) -> Result<()> {
        self.put(&self.key(&format!("shots/{box_id}/{id}.img")), image.to_vec()).await
    }

    async fn shot(&self, box_id: &str, id: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.get(&self.key(&format!("shots/{box_id}/{id}.img"))).await?.map(|b| b.to_vec()))
    }

    async fn shots(&self, box_id: &str) -> Result<Vec<(String, u64)>> {
        let prefix = self.key(&format!("shots/{box_id}/"));
        Ok(self
            .list(&prefix)
            .await?
            .into_iter()
            .filter_map(|(k, size)| {
                let id = k.strip_prefix(&prefix)?.strip_suffix(".img")?;
                Some((id.to_owned(), size))
            })
            .collect())
    }

    async fn delete_shot(&self, box_id: &str, id: &str) -> Result<()> {
        self.delete(&self.key(&format!("shots/{box_id}/{id}.img"))).await
    }

    async fn get_idempotency(&self, key_hash: &str) -> Result<Option<IdempotencyRecord>> {
        self.get_json("idempotency key", &self.key(&format!("idempotency/{key_hash}.json"))).await
    }

    async fn put_idempotency(&self, record: &IdempotencyRecord) -> Result<()> {
        let body = serde_json::to_vec(record).map_err(s3)?;
        self.put(&self.key(&format!("idempotency/{}.json", record.key_hash)), body).await
    }

    async fn purge_idempotency(&self, before: u64) -> Result<usize> {
        // Each record holds its first use; read it rather than trusting the
        // object's time, which a copy or a restore would change.
        let mut n = 0;
        for (key, _) in self.list(&self.key("idempotency/")).await? {
            if let Ok(Some(r)) = self.get_json::<IdempotencyRecord>("idempotency key", &key).await
                && r.created_at < before
            {
                self.delete(&key).await?;
                n += 1;
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pairs: &[(&str, &str)]) -> Result<S3Config, String> {
        let map: std::collections::HashMap<String, String> =
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        S3Config::from_lookup(&|k| map.get(k).cloned())
    }

    #[test]
    fn settings_come_from_the_environment_and_never_show_the_secret() {
        let c = cfg(&[
            ("HOLM_S3_BUCKET", "holm"),
            ("HOLM_S3_ENDPOINT", "http://127.0.0.1:9000"),
            ("HOLM_S3_PREFIX", "prod"),
            ("AWS_ACCESS_KEY_ID", "AKIA1"),
            ("AWS_SECRET_ACCESS_KEY", "very-secret"),
        ])
        .unwrap();
        assert!(c.path_style);
        assert_eq!(c.prefix, "prod/");
        assert_eq!(c.region, "us-east-1");
        assert!(!format!("{c:?}").contains("very-secret"));
        let aws = cfg(&[
            ("HOLM_S3_BUCKET", "holm"),
            ("HOLM_S3_REGION", "eu-west-1"),
            ("HOLM_S3_ACCESS_KEY_ID", "k"),
            ("HOLM_S3_SECRET_ACCESS_KEY", "s"),
        ])
        .unwrap();
        assert_eq!(aws.endpoint, "https://s3.eu-west-1.amazonaws.com");
        assert!(!aws.path_style);
        assert!(cfg(&[("HOLM_S3_BUCKET", "b")]).unwrap_err().contains("HOLM_S3_ACCESS_KEY_ID"));
        assert!(cfg(&[]).unwrap_err().contains("HOLM_S3_BUCKET"));
    }

    #[test]
    fn s3_errors_are_read_out_of_their_xml() {
        let body = "<Error><Code>AccessDenied</Code><Message>nope</Message></Error>";
        assert_eq!(error_code(body), "AccessDenied: nope");
    }
}
