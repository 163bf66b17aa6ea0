//! Vercel Container Registry as the stand-in answers it: the Docker
//! Registry v2 calls a push and a pull make (the version check, blobs by
//! digest with chunked uploads, manifests by tag or digest), behind Basic
//! auth with the team id as the user and a token as the password, under
//! `<team-slug>/<project-slug>/`; and VCR's tag status in the API
//! (`preparing`, then `ready`, `unoptimized` for an image that is not
//! linux/amd64, or none for an image index).

use std::io::{Read as _, Write as _};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, RawQuery, Request, State as AxState};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use base64::Engine as _;
use futures_util::StreamExt;
use serde_json::{Value, json};
use sha2::Digest as _;

use super::api::{S, error};
use super::{Pushed, State};
use crate::common::{Call, random_id};

/// How long VCR takes to prepare a pushed image.
const PREPARING: Duration = Duration::from_millis(500);

const INDEX_TYPES: &[&str] = &[
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
];

/// The registry's error shape.
fn refuse(status: StatusCode, code: &str, message: &str) -> Response {
    let body = json!({ "errors": [{ "code": code, "message": message, "detail": null }] });
    let mut r = (status, axum::Json(body)).into_response();
    if status == StatusCode::UNAUTHORIZED {
        r.headers_mut().insert(
            "www-authenticate",
            axum::http::HeaderValue::from_static("Basic realm=\"vcr.vercel.com\""),
        );
    }
    r
}

pub(crate) fn router(state: Arc<State>) -> Router {
    Router::new()
        .route("/v2/", get(version))
        .route("/v2/{*rest}", any(dispatch))
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&state), gate))
        .with_state(state)
}

async fn gate(AxState(state): S, req: Request, next: axum::middleware::Next) -> Response {
    let method = req.method().as_str().to_owned();
    let path = req.uri().path().to_owned();
    let authorized = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.split_once(':').map(|(u, p)| (u.to_owned(), p.to_owned())))
        .is_some_and(|(user, password)| user == state.team_id && state.keys.accepts(&password));
    let response = if authorized {
        next.run(req).await
    } else {
        refuse(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", "authentication required")
    };
    state.calls.push(Call { method, path, status: response.status().as_u16(), trace: None });
    response
}

async fn version() -> Response {
    ([("docker-distribution-api-version", "registry/2.0")], axum::Json(json!({}))).into_response()
}

fn blob_path(state: &State, digest: &str) -> Option<std::path::PathBuf> {
    let hex = digest.strip_prefix("sha256:")?;
    (hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit())).then(|| state.blobs.join(hex))
}

fn upload_path(state: &State, uuid: &str) -> std::path::PathBuf {
    state.uploads.path().join(uuid)
}

/// `<name>/blobs/…`, `<name>/manifests/…`, split where the name ends.
fn split(rest: &str) -> Option<(&str, &str, &str)> {
    for kind in ["/blobs/uploads/", "/blobs/uploads", "/blobs/", "/manifests/"] {
        if let Some(i) = rest.find(kind) {
            let name = &rest[..i];
            let tail = &rest[i + kind.len()..];
            return Some((name, kind.trim_matches('/'), tail));
        }
    }
    None
}

async fn dispatch(
    AxState(state): S,
    Path(rest): Path<String>,
    RawQuery(raw): RawQuery,
    method: Method,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let Some((name, kind, tail)) = split(&rest) else {
        return refuse(StatusCode::NOT_FOUND, "NAME_UNKNOWN", "no such repository");
    };
    let scope = format!("{}/{}/", state.team_slug, state.project_slug);
    if !name.starts_with(&scope) || name.len() == scope.len() {
        return refuse(StatusCode::FORBIDDEN, "DENIED", "the token cannot reach this repository");
    }
    let q = super::api::query(raw.as_deref());
    let digest_q = q.iter().find(|(k, _)| k == "digest").map(|(_, v)| v.clone());
    match (kind, method) {
        ("blobs/uploads", Method::POST) => start_upload(&state, name),
        ("blobs/uploads", Method::PATCH) => append(&state, name, tail, body).await,
        ("blobs/uploads", Method::PUT) => finish(&state, name, tail, digest_q, body).await,
        ("blobs", Method::HEAD | Method::GET) => blob(&state, tail).await,
        ("manifests", Method::PUT) => put_manifest(&state, name, tail, &headers, body).await,
        ("manifests", Method::HEAD | Method::GET) => get_manifest(&state, name, tail),
        _ => refuse(StatusCode::METHOD_NOT_ALLOWED, "UNSUPPORTED", "not supported"),
    }
}

fn start_upload(state: &State, name: &str) -> Response {
    let uuid = random_id(32);
    if std::fs::File::create(upload_path(state, &uuid)).is_err() {
        return refuse(StatusCode::INTERNAL_SERVER_ERROR, "UNKNOWN", "cannot store the upload");
    }
    (
        StatusCode::ACCEPTED,
        [
            ("location", format!("/v2/{name}/blobs/uploads/{uuid}")),
            ("docker-upload-uuid", uuid),
            ("range", "0-0".to_owned()),
            ("content-length", "0".to_owned()),
        ],
    )
        .into_response()
}

/// Appends a body to an upload; its size after.
async fn write_body(state: &State, uuid: &str, body: Body) -> Result<u64, Response> {
    let path = upload_path(state, uuid);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .map_err(|_| refuse(StatusCode::NOT_FOUND, "BLOB_UPLOAD_UNKNOWN", "no such upload"))?;
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| {
            refuse(StatusCode::BAD_REQUEST, "BLOB_UPLOAD_INVALID", "the body broke off")
        })?;
        file.write_all(&chunk)
            .map_err(|_| refuse(StatusCode::INTERNAL_SERVER_ERROR, "UNKNOWN", "cannot store"))?;
    }
    Ok(file.metadata().map(|m| m.len()).unwrap_or(0))
}

async fn append(state: &State, name: &str, uuid: &str, body: Body) -> Response {
    match write_body(state, uuid, body).await {
        Ok(size) => (
            StatusCode::ACCEPTED,
            [
                ("location", format!("/v2/{name}/blobs/uploads/{uuid}")),
                ("docker-upload-uuid", uuid.to_owned()),
                ("range", format!("0-{}", size.saturating_sub(1))),
                ("content-length", "0".to_owned()),
            ],
        )
            .into_response(),
        Err(r) => r,
    }
}

fn sha256_of(path: &std::path::Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(format!("sha256:{}", hex::encode(h.finalize())))
}

async fn finish(
    state: &State,
    name: &str,
    uuid: &str,
    digest: Option<String>,
    body: Body,
) -> Response {
    if let Err(r) = write_body(state, uuid, body).await {
        return r;
    }
    let Some(digest) = digest else {
        return refuse(StatusCode::BAD_REQUEST, "DIGEST_INVALID", "digest is required");
    };
    let Some(target) = blob_path(state, &digest) else {
        return refuse(StatusCode::BAD_REQUEST, "DIGEST_INVALID", "not a sha256 digest");
    };
    let upload = upload_path(state, uuid);
    let upload_for_hash = upload.clone();
    let actual = tokio::task::spawn_blocking(move || sha256_of(&upload_for_hash)).await;
    match actual {
        Ok(Ok(d)) if d == digest => {}
        _ => {
            let _ = std::fs::remove_file(&upload);
            return refuse(
                StatusCode::BAD_REQUEST,
                "DIGEST_INVALID",
                "the content does not match the digest",
            );
        }
    }
    if std::fs::rename(&upload, &target).is_err() {
        return refuse(StatusCode::INTERNAL_SERVER_ERROR, "UNKNOWN", "cannot store the blob");
    }
    (
        StatusCode::CREATED,
        [
            ("location", format!("/v2/{name}/blobs/{digest}")),
            ("docker-content-digest", digest.clone()),
            ("content-length", "0".to_owned()),
        ],
    )
        .into_response()
}

async fn blob(state: &State, digest: &str) -> Response {
    let Some(path) = blob_path(state, digest).filter(|p| p.exists()) else {
        return refuse(StatusCode::NOT_FOUND, "BLOB_UNKNOWN", "blob unknown to registry");
    };
    let Ok(file) = tokio::fs::File::open(&path).await else {
        return refuse(StatusCode::NOT_FOUND, "BLOB_UNKNOWN", "blob unknown to registry");
    };
    let size = file.metadata().await.map(|m| m.len()).unwrap_or(0);
    let stream = tokio_util_stream(file);
    (
        [
            ("content-type", "application/octet-stream".to_owned()),
            ("content-length", size.to_string()),
            ("docker-content-digest", digest.to_owned()),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

/// A file as a stream of chunks.
fn tokio_util_stream(
    file: tokio::fs::File,
) -> impl futures_util::Stream<Item = std::io::Result<bytes::Bytes>> {
    futures_util::stream::unfold(file, |mut file| async move {
        use tokio::io::AsyncReadExt as _;
        let mut buf = vec![0u8; 1 << 20];
        match file.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok(bytes::Bytes::from(buf)), file))
            }
            Err(e) => Some((Err(e), file)),
        }
    })
}

async fn put_manifest(
    state: &Arc<State>,
    name: &str,
    reference: &str,
    headers: &HeaderMap,
    body: Body,
) -> Response {
    let Ok(bytes) = axum::body::to_bytes(body, 4 << 20).await else {
        return refuse(StatusCode::BAD_REQUEST, "MANIFEST_INVALID", "the manifest is too large");
    };
    let Ok(manifest) = serde_json::from_slice::<Value>(&bytes) else {
        return refuse(StatusCode::BAD_REQUEST, "MANIFEST_INVALID", "the manifest is not JSON");
    };
    let media_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| manifest["mediaType"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let index = INDEX_TYPES.contains(&media_type.as_str());
    let config = manifest["config"]["digest"].as_str().unwrap_or_default().to_owned();
    if !index {
        let mut needed: Vec<&str> = vec![config.as_str()];
        if let Some(layers) = manifest["layers"].as_array() {
            needed.extend(layers.iter().filter_map(|l| l["digest"].as_str()));
        }
        if needed.iter().any(|d| blob_path(state, d).is_none_or(|p| !p.exists())) {
            return refuse(
                StatusCode::BAD_REQUEST,
                "MANIFEST_BLOB_UNKNOWN",
                "a blob of the manifest is unknown",
            );
        }
    }
    let digest = format!("sha256:{}", hex::encode(sha2::Sha256::digest(&bytes)));
    let now = state.now_ms();
    {
        let mut inner = state.lock();
        inner.manifests.insert(format!("{name}@{digest}"), (media_type.clone(), bytes.to_vec()));
        if !reference.starts_with("sha256:") {
            inner.manifests.insert(format!("{name}:{reference}"), (media_type, bytes.to_vec()));
            inner.tags.insert(
                format!("{name}:{reference}"),
                Pushed {
                    manifest_digest: digest.clone(),
                    config_digest: config.clone(),
                    status: if index { String::new() } else { "preparing".into() },
                    pushed_ms: now,
                },
            );
        }
    }
    if !index && !reference.starts_with("sha256:") {
        let key = format!("{name}:{reference}");
        let prepared = prepare(state, &config);
        let task_state = Arc::clone(state);
        state.spawn(tokio::spawn(async move {
            tokio::time::sleep(PREPARING).await;
            if let Some(p) = task_state.lock().tags.get_mut(&key) {
                p.status = prepared.into();
            }
        }));
    }
    (
        StatusCode::CREATED,
        [
            ("location", format!("/v2/{name}/manifests/{digest}")),
            ("docker-content-digest", digest),
            ("content-length", "0".to_owned()),
        ],
    )
        .into_response()
}

/// `ready` for a linux/amd64 image, `unoptimized` for any other.
fn prepare(state: &State, config: &str) -> &'static str {
    let platform = blob_path(state, config)
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .map(|c| (c["os"].as_str() == Some("linux"), c["architecture"].as_str() == Some("amd64")));
    if platform == Some((true, true)) { "ready" } else { "unoptimized" }
}

fn get_manifest(state: &State, name: &str, reference: &str) -> Response {
    let sep = if reference.starts_with("sha256:") { "@" } else { ":" };
    let found = state.lock().manifests.get(&format!("{name}{sep}{reference}")).cloned();
    match found {
        Some((media_type, bytes)) => {
            let digest = format!("sha256:{}", hex::encode(sha2::Sha256::digest(&bytes)));
            (
                [
                    ("content-type", media_type),
                    ("docker-content-digest", digest),
                    ("content-length", bytes.len().to_string()),
                ],
                bytes,
            )
                .into_response()
        }
        None => refuse(StatusCode::NOT_FOUND, "MANIFEST_UNKNOWN", "manifest unknown"),
    }
}

/// `GET /v1/vcr/repository/{repo}/tags/{tag}?projectId=`.
pub(super) async fn tag_status(
    AxState(state): S,
    Path((repo, tag)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
) -> Response {
    let q = super::api::query(raw.as_deref());
    let project = q.iter().find(|(k, _)| k == "projectId").map(|(_, v)| v.clone());
    if project.as_deref() != Some(state.project_id.as_str()) {
        return error(StatusCode::BAD_REQUEST, "bad_request", "projectId is required");
    }
    let key = format!("{}/{}/{repo}:{tag}", state.team_slug, state.project_slug);
    let Some(p) = state.lock().tags.get(&key).cloned() else {
        return error(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("Tag {repo}:{tag} was not found"),
        );
    };
    let status = (!p.status.is_empty()).then_some(p.status.clone());
    axum::Json(json!({ "tag": {
        "imageId": p.config_digest,
        "manifestDigest": p.manifest_digest,
        "kind": if status.is_some() { "image" } else { "index" },
        "status": status,
        "createdAt": p.pushed_ms,
    } }))
    .into_response()
}

/// The engine's image for `repo:tag` pushed to this project: the engine's
/// image whose id is the pushed config's digest (the same content), pulled
/// from this registry when the engine lacks it.
pub(super) async fn local_image(state: &State, reference: &str) -> Result<String, Response> {
    let not_found = || {
        error(
            StatusCode::NOT_FOUND,
            "image_not_found",
            format!("Image {reference} was not found in this project's registry"),
        )
    };
    let (repo, tag) = reference.rsplit_once(':').ok_or_else(not_found)?;
    let full = format!("{}/{}/{repo}", state.team_slug, state.project_slug);
    let pushed = state.lock().tags.get(&format!("{full}:{tag}")).cloned().ok_or_else(not_found)?;
    if pushed.status != "ready" {
        return Err(error(
            StatusCode::BAD_REQUEST,
            "image_not_ready",
            format!(
                "Image {reference} is {} and cannot be used yet",
                if pushed.status.is_empty() { "an image index" } else { &pushed.status }
            ),
        ));
    }
    if !state.engine.image_exists(&pushed.config_digest).await {
        let remote = format!("{}/{full}:{tag}", state.registry_host);
        state
            .engine
            .pull(&remote, &state.team_id, &state.controls.key)
            .await
            .map_err(|e| error(StatusCode::INTERNAL_SERVER_ERROR, "internal_server_error", e))?;
    }
    Ok(pushed.config_digest)
}
