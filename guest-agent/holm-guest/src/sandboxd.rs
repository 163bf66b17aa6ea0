//! agent-sandbox's in-box REST contract, served beside holm's own API so
//! that agent-sandbox's clients can use a holm box: KEP-539.2 "sandboxd",
//! as its `packages/sandboxd/spec/filesystem/v1/filesystem.yaml` gives it
//! (`GET|HEAD|PUT|DELETE /v1/files/{path}`, `GET /v1/health`,
//! `GET /v1/metadata`), on its own port, when `HOLM_SANDBOXD_ADDR` is set.
//!
//! Where holm differs from sandboxd, and why (docs/design/doors.md):
//! - **Every route but `/v1/health` takes the box secret** as a bearer.
//!   sandboxd relies on the pod's isolation alone; a holm box is untrusted
//!   and every port holm opens is behind a credential.
//! - **Errors are sandboxd's `{code, message}`** (`NOT_FOUND`,
//!   `PERMISSION_DENIED`, `INVALID_ARGUMENT`, `CONFLICT`, `UNAUTHENTICATED`,
//!   `UNAVAILABLE`, `INTERNAL`), not holm's error shape: its clients read
//!   that one.
//! - **Files follow holm's file rules**: reads, atomic writes and removals
//!   are [`crate::files`]'s, so a symbolic link a desktop user planted is
//!   not followed where holm's own API would not follow it. The root is
//!   `HOLM_SANDBOXD_ROOT` (`/`, as sandboxd's default); a path that leaves
//!   it, by `..` or through a link, is 403 `PERMISSION_DENIED`.
//! - **`/v1/health`** is 200 once the desktop is ready, 503 `UNAVAILABLE`
//!   before; **`/v1/metadata`** answers the guest's variables that start
//!   with `SANDBOX_`, leaving out any whose name holds `TOKEN`, `SECRET`,
//!   `PASSWORD`, `CREDENTIAL` or `KEY` (sandboxd's own rule).
//! - sandboxd's gRPC process service (`:9090`) is not served: commands are
//!   holm's own API.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path as UrlPath, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use holm_proto::ErrorCode;
use serde::{Deserialize, Serialize};

use crate::api::BoxSecret;
use crate::supervisor::Supervisor;

/// The prefix of the variables `/v1/metadata` answers.
const METADATA_PREFIX: &str = "SANDBOX_";
/// Names holding one of these are never answered by `/v1/metadata`.
const SENSITIVE: [&str; 5] = ["TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "KEY"];

/// What the routes share.
#[derive(Clone, Debug)]
pub struct Sandboxd {
    root: PathBuf,
    secret: Arc<BoxSecret>,
    supervisor: Arc<Supervisor>,
    started: Instant,
    metadata: Arc<BTreeMap<String, String>>,
}

impl Sandboxd {
    /// The contract over `root`, behind `secret`, ready when `supervisor`'s
    /// desktop is; `/v1/metadata` answers from `env`.
    pub fn new(
        root: PathBuf,
        secret: Arc<BoxSecret>,
        supervisor: Arc<Supervisor>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Self {
        let metadata = env
            .into_iter()
            .filter(|(k, _)| k.starts_with(METADATA_PREFIX))
            .filter(|(k, _)| !SENSITIVE.iter().any(|s| k.to_ascii_uppercase().contains(s)))
            .collect();
        Self { root, secret, supervisor, started: Instant::now(), metadata: Arc::new(metadata) }
    }

    /// The routes.
    pub fn router(self) -> Router {
        let secret = Arc::clone(&self.secret);
        Router::new()
            .route("/v1/files/", get(read).put(write).delete(remove))
            .route("/v1/files/{*path}", get(read).put(write).delete(remove))
            .route("/v1/metadata", get(metadata))
            .route("/v1/health", get(health))
            .fallback(|| async { fail(StatusCode::NOT_FOUND, "NOT_FOUND", "no such route") })
            .with_state(self)
            .layer(middleware::from_fn(move |req: Request, next: Next| {
                let digest = secret.current();
                async move {
                    if req.uri().path() == "/v1/health"
                        || holm_http::check_bearer_digest(&req, &digest, "the box secret").is_ok()
                    {
                        return next.run(req).await;
                    }
                    fail(
                        StatusCode::UNAUTHORIZED,
                        "UNAUTHENTICATED",
                        "send the box secret as Authorization: Bearer",
                    )
                }
            }))
    }
}

/// sandboxd's error body.
#[derive(Serialize)]
struct Fail<'a> {
    code: &'a str,
    message: &'a str,
}

fn fail(status: StatusCode, code: &str, message: &str) -> Response {
    (status, axum::Json(Fail { code, message })).into_response()
}

/// A holm file error in sandboxd's words.
fn from_holm(e: &holm_http::Error) -> Response {
    let (status, code) = match e.0.code {
        ErrorCode::FileNotFound | ErrorCode::NotFound => (StatusCode::NOT_FOUND, "NOT_FOUND"),
        ErrorCode::PermissionDenied | ErrorCode::Forbidden => {
            (StatusCode::FORBIDDEN, "PERMISSION_DENIED")
        }
        ErrorCode::DirectoryNotEmpty => (StatusCode::CONFLICT, "CONFLICT"),
        ErrorCode::InvalidRequest
        | ErrorCode::IsADirectory
        | ErrorCode::NotADirectory
        | ErrorCode::AlreadyExists => (StatusCode::BAD_REQUEST, "INVALID_ARGUMENT"),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL"),
    };
    fail(status, code, &e.0.message)
}

/// A refusal before anything is touched: its status, code and message.
#[derive(Debug)]
struct Refusal(StatusCode, &'static str, String);

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        fail(self.0, self.1, &self.2)
    }
}

fn escapes() -> Refusal {
    let why = "path traversal outside sandbox root is forbidden";
    Refusal(StatusCode::FORBIDDEN, "PERMISSION_DENIED", why.to_owned())
}

/// The path `rel` names under `root`, or 403 when it leaves the root by
/// `..` or, for the part that exists, through a symbolic link.
fn resolve(root: &Path, rel: &str) -> Result<PathBuf, Refusal> {
    let mut path = root.to_path_buf();
    for part in Path::new(rel).components() {
        match part {
            Component::Normal(p) => path.push(p),
            Component::CurDir | Component::RootDir => {}
            Component::ParentDir if path != root => {
                path.pop();
            }
            Component::ParentDir | Component::Prefix(_) => return Err(escapes()),
        }
    }
    let real_root = std::fs::canonicalize(root).map_err(|e| {
        Refusal(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", format!("the root: {e}"))
    })?;
    // The deepest part that exists, with its links resolved, must stay in.
    let existing = path.ancestors().find_map(|a| std::fs::canonicalize(a).ok());
    match existing {
        Some(real) if real.starts_with(&real_root) => Ok(path),
        _ => Err(escapes()),
    }
}

/// The `{*path}` of a route, or the root's empty one.
fn rel(path: Option<UrlPath<String>>) -> String {
    path.map(|UrlPath(p)| p).unwrap_or_default()
}

/// One entry of a `DirectoryListing`.
#[derive(Serialize)]
struct FileEntry {
    name: String,
    size: u64,
    #[serde(rename = "type")]
    kind: &'static str,
    modified_at: String,
    mode: String,
}

/// `GET /v1/files/{path}`: a file's bytes, or a directory's listing.
async fn read(State(s): State<Sandboxd>, path: Option<UrlPath<String>>) -> Response {
    let rel = rel(path);
    let target = match resolve(&s.root, &rel) {
        Ok(t) => t,
        Err(r) => return r.into_response(),
    };
    let meta = match tokio::fs::metadata(&target).await {
        Ok(m) => m,
        Err(e) => return from_holm(&holm_http::Error::io(&rel, &e)),
    };
    if meta.is_dir() {
        let listing = tokio::task::spawn_blocking(move || listing(&target)).await;
        return match listing {
            Ok(Ok(entries)) => {
                let path = format!("/{}", rel.trim_start_matches('/'));
                axum::Json(serde_json::json!({ "path": path, "entries": entries })).into_response()
            }
            Ok(Err(e)) => from_holm(&holm_http::Error::io(&rel, &e)),
            Err(e) => fail(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", &e.to_string()),
        };
    }
    let reading = match crate::files::open(&target, &rel).await {
        Ok(r) => r,
        Err(e) => return from_holm(&e),
    };
    reading.response()
}

/// A directory's entries by name; a link counts as what it points to, and
/// a broken one is left out (the wire knows only files and directories).
fn listing(dir: &Path) -> std::io::Result<Vec<FileEntry>> {
    use std::os::unix::fs::PermissionsExt;
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let Ok(meta) = std::fs::metadata(entry.path()) else { continue };
        let modified = meta
            .modified()
            .map_or_else(|_| String::new(), |t| humantime::format_rfc3339_seconds(t).to_string());
        entries.push(FileEntry {
            name: entry.file_name().to_string_lossy().into_owned(),
            size: meta.len(),
            kind: if meta.is_dir() { "directory" } else { "file" },
            modified_at: modified,
            mode: format!("{:04o}", meta.permissions().mode() & 0o777),
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

#[derive(Deserialize)]
struct WriteQuery {
    mode: Option<String>,
}

/// `PUT /v1/files/{path}`: the body (raw bytes) written atomically, its
/// directories made; `mode` as `0644`.
async fn write(
    State(s): State<Sandboxd>,
    path: Option<UrlPath<String>>,
    query: Result<Query<WriteQuery>, QueryRejection>,
    req: Request,
) -> Response {
    let rel = rel(path);
    let query = match query {
        Ok(Query(q)) => q,
        Err(e) => return fail(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", &e.body_text()),
    };
    let mode = match query.mode {
        None => 0o644,
        Some(m) => match parse_mode(&m) {
            Some(m) => m,
            None => {
                let why = format!("mode {m:?} must match ^0[0-7]{{3}}$");
                return fail(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", &why);
            }
        },
    };
    let kind = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    if kind.is_some_and(|k| k.starts_with("multipart/")) {
        let why = "send the file's bytes as application/octet-stream; multipart bodies are not taken here";
        return fail(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", why);
    }
    let target = match resolve(&s.root, &rel) {
        Ok(t) => t,
        Err(r) => return r.into_response(),
    };
    if rel.is_empty()
        || rel.ends_with('/')
        || tokio::fs::metadata(&target).await.is_ok_and(|m| m.is_dir())
    {
        return fail(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", "target path is a directory");
    }
    if let Some(parent) = target.parent()
        && let Err(e) = crate::files::mkdir(parent, &rel, true).await
    {
        return from_holm(&e);
    }
    let body = req.into_body().into_data_stream();
    match crate::files::write(&target, &rel, Some(mode), body).await {
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => from_holm(&e),
    }
}

/// `0644`-style permission bits: `0` and three octal digits.
fn parse_mode(m: &str) -> Option<u32> {
    let digits = m.strip_prefix('0').filter(|d| d.len() == 3)?;
    if !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return None;
    }
    u32::from_str_radix(digits, 8).ok()
}

#[derive(Deserialize)]
struct RemoveQuery {
    recursive: Option<bool>,
}

/// `DELETE /v1/files/{path}`: a file, or a directory (with everything in
/// it when `recursive=true`; otherwise only an empty one, or 409).
async fn remove(
    State(s): State<Sandboxd>,
    path: Option<UrlPath<String>>,
    query: Result<Query<RemoveQuery>, QueryRejection>,
) -> Response {
    let rel = rel(path);
    let recursive = match query {
        Ok(Query(q)) => q.recursive.unwrap_or(false),
        Err(e) => return fail(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", &e.body_text()),
    };
    let target = match resolve(&s.root, &rel) {
        Ok(t) => t,
        Err(r) => return r.into_response(),
    };
    if target == s.root {
        return fail(StatusCode::CONFLICT, "CONFLICT", "the sandbox root is not removed");
    }
    match crate::files::remove(&target, &rel, recursive).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => from_holm(&e),
    }
}

/// `GET /v1/health`: 200 once the desktop is ready, 503 before.
async fn health(State(s): State<Sandboxd>) -> Response {
    if s.supervisor.health() != holm_proto::guest::HealthStatus::Ready {
        return fail(StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE", "the desktop is not ready");
    }
    let uptime = s.started.elapsed().as_secs();
    axum::Json(serde_json::json!({ "status": "ok", "uptime_seconds": uptime })).into_response()
}

/// `GET /v1/metadata`: the orchestrator's `SANDBOX_` variables.
async fn metadata(State(s): State<Sandboxd>) -> Response {
    axum::Json(serde_json::json!({ "env": *s.metadata })).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_a_zero_and_three_octal_digits() {
        assert_eq!(parse_mode("0644"), Some(0o644));
        assert_eq!(parse_mode("0755"), Some(0o755));
        for bad in ["644", "0648", "00644", "0x64", "", "0"] {
            assert_eq!(parse_mode(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_path_that_leaves_the_root_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("out")).unwrap();
        assert_eq!(resolve(&root, "a/../a/new.txt").unwrap(), root.join("a/new.txt"));
        for bad in ["../x", "a/../../x", "out/passwd", "out/new/deeper"] {
            assert_eq!(resolve(&root, bad).unwrap_err().0, StatusCode::FORBIDDEN, "{bad}");
        }
    }
}
