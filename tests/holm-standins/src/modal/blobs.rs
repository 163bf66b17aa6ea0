//! Modal's blob storage, mounts and secrets, as the stand-in keeps them.
//!
//! As Modal's client (`modal` 1.6.4) uses them: a file of 4 MiB or more
//! ([`LARGE_FILE`], `LARGE_FILE_LIMIT` in `_utils/blob_utils.py`) goes
//! through blob storage (`BlobCreate`, then a `PUT` of the bytes to the
//! upload URL it answers) and is put in a mount by its blob id
//! (`MountPutFile`); a smaller one goes inline. A build context is a
//! mount (`MountGetOrCreate`) named by `Image.context_mount_id`. The
//! stand-in refuses inline bytes of 4 MiB or more, in `MountPutFile` and in
//! `ImageGetOrCreate.context_files`: no Modal client sends them, and
//! Modal's server need not take them. A Secret keeps its `env_dict`, and
//! a V1 sandbox gets its environment only from the Secrets its definition
//! names (`secret_ids`), as Modal's clients send it, and a V2 sandbox
//! from those and the ones it sends inline (`secret_sources`); the definition's
//! `environment_variables`, which no Modal client sets, is not read. An
//! image built on another (`base_images`, `FROM base`) is built from that
//! image's own tag.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use holm_modal_proto::api;
use http_body_util::BodyExt as _;
use hyper::StatusCode;
use sha2::Digest as _;
use tonic::Status;

use super::{State, modal_id};
use crate::forward;

/// The smallest file Modal's client sends through blob storage.
pub const LARGE_FILE: usize = 4 * 1024 * 1024;

/// A blob: its declared SHA-256 (base64), and its bytes once uploaded.
#[derive(Debug, Clone)]
pub(crate) struct Blob {
    pub sha256_base64: String,
    pub data: Option<Vec<u8>>,
}

/// A mount's files: name (as given, `/holm-guest`), bytes, mode.
pub(crate) type MountFiles = Vec<(String, Vec<u8>, u32)>;

/// Serves the upload URLs `BlobCreate` answers: `PUT /blobs/<id>`.
pub(crate) async fn serve(state: Arc<State>) -> String {
    let owner = Arc::clone(&state);
    let (addr, task) = forward::serve(move |req| {
        let state = Arc::clone(&state);
        async move {
            let path = req.uri().path().to_owned();
            let method = req.method().clone();
            let Some(id) = path.strip_prefix("/blobs/").map(str::to_owned) else {
                return forward::respond(StatusCode::NOT_FOUND, "text/plain", "no such blob");
            };
            if method != hyper::Method::PUT {
                return forward::respond(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "PUT only");
            }
            let body = match req.into_body().collect().await {
                Ok(b) => b.to_bytes().to_vec(),
                Err(_) => {
                    return forward::respond(StatusCode::BAD_REQUEST, "text/plain", "bad body");
                }
            };
            let digest =
                base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(&body));
            let mut inner = state.lock();
            let Some(blob) = inner.blobs.get_mut(&id) else {
                return forward::respond(StatusCode::NOT_FOUND, "text/plain", "no such blob");
            };
            if blob.sha256_base64 != digest {
                return forward::respond(
                    StatusCode::BAD_REQUEST,
                    "text/plain",
                    "the body's SHA-256 is not the one BlobCreate was given",
                );
            }
            // S3's answer to a single-part PUT: its ETag is the quoted MD5
            // of the bytes, which Modal's client checks (`_upload_to_s3_url`).
            let etag = format!("\"{}\"", hex::encode(<md5::Md5 as md5::Digest>::digest(&body)));
            blob.data = Some(body);
            let mut ok = forward::respond(StatusCode::OK, "text/plain", "");
            if let Ok(v) = etag.parse() {
                ok.headers_mut().insert(hyper::header::ETAG, v);
            }
            ok
        }
    })
    .await;
    owner.spawn(task);
    format!("http://{addr}")
}

/// `BlobCreate`: a blob id and the one URL to `PUT` it to.
pub(crate) fn create(state: &State, m: &api::BlobCreateRequest) -> api::BlobCreateResponse {
    let id = modal_id("bl");
    state
        .lock()
        .blobs
        .insert(id.clone(), Blob { sha256_base64: m.content_sha256_base64.clone(), data: None });
    let url = format!("{}/blobs/{id}", state.blob_url.get().map_or("", String::as_str));
    api::BlobCreateResponse {
        blob_ids: vec![id],
        upload_types_oneof: Some(api::blob_create_response::UploadTypesOneof::UploadUrls(
            api::UploadUrlList { items: vec![url] },
        )),
        ..Default::default()
    }
}

/// `MountBatchedCheckExistence`: the hashes of no file kept, which Modal's
/// client then puts (`MountPutFile`).
pub(crate) fn missing(state: &State, m: api::MountBatchedCheckExistenceRequest) -> Vec<String> {
    let inner = state.lock();
    m.sha256_hex_hashes.into_iter().filter(|h| !inner.files.contains_key(h)).collect()
}

/// `MountPutFile`: keeps a file by its SHA-256; whether it is kept.
pub(crate) fn put(state: &State, m: api::MountPutFileRequest) -> Result<bool, Status> {
    use api::mount_put_file_request::DataOneof;
    let mut inner = state.lock();
    let data = match m.data_oneof {
        None => return Ok(inner.files.contains_key(&m.sha256_hex)),
        Some(DataOneof::Data(d)) if d.len() >= LARGE_FILE => {
            return Err(Status::invalid_argument(format!(
                "a file of {} bytes must go through blob storage, not inline",
                d.len()
            )));
        }
        Some(DataOneof::Data(d)) => d,
        Some(DataOneof::DataBlobId(id)) => inner
            .blobs
            .get(&id)
            .and_then(|b| b.data.clone())
            .ok_or_else(|| Status::not_found(format!("Blob {id} not found or not uploaded")))?,
    };
    if hex::encode(sha2::Sha256::digest(&data)) != m.sha256_hex {
        return Err(Status::invalid_argument("the file's SHA-256 is not sha256_hex"));
    }
    inner.files.insert(m.sha256_hex, data);
    Ok(true)
}

/// `MountGetOrCreate`: a mount of files already put; its id.
pub(crate) fn mount(state: &State, m: api::MountGetOrCreateRequest) -> Result<String, Status> {
    let mut inner = state.lock();
    let mut files = Vec::new();
    for f in m.files {
        let data = inner.files.get(&f.sha256_hex).cloned().ok_or_else(|| {
            Status::failed_precondition(format!("File {} was not put", f.filename))
        })?;
        files.push((f.filename, data, f.mode.unwrap_or(0o644)));
    }
    let id = modal_id("mo");
    inner.mounts.insert(id.clone(), files);
    Ok(id)
}

/// Puts each base image's own tag in the `FROM` lines that name it by its
/// `docker_tag` (Modal's client builds on an image as `FROM base`, with
/// `base_images` saying which image `base` is); a base must be built.
pub(crate) fn from_bases(state: &State, image: &mut api::Image) -> Result<(), Status> {
    let mut tags = BTreeMap::new();
    {
        let inner = state.lock();
        for b in &image.base_images {
            let base = inner.images.values().find(|i| i.id == b.image_id);
            let tag = match base {
                Some(i) if matches!(i.build, super::Build::Ready) => i.tag.clone(),
                Some(_) => {
                    return Err(Status::failed_precondition(format!(
                        "Image {} is not built",
                        b.image_id
                    )));
                }
                None => return Err(Status::not_found(format!("Image {} not found", b.image_id))),
            };
            tags.insert(b.docker_tag.clone(), tag);
        }
    }
    for c in &mut image.dockerfile_commands {
        let Some(rest) = c.strip_prefix("FROM ") else { continue };
        let (name, after) = rest.split_once(' ').unwrap_or((rest, ""));
        if let Some(tag) = tags.get(name) {
            *c = format!("FROM {tag} {after}").trim_end().to_owned();
        }
    }
    Ok(())
}

/// The build context of an image: its mount's files and its inline files
/// (none of 4 MiB or more), as (name relative to the context, bytes, mode).
pub(crate) fn context(state: &State, image: &mut api::Image) -> Result<MountFiles, Status> {
    let mut out = Vec::new();
    for f in std::mem::take(&mut image.context_files) {
        if f.data.len() >= LARGE_FILE {
            return Err(Status::invalid_argument(format!(
                "context file {} is {} bytes: files of 4 MiB or more go in a context mount \
                 through blob storage",
                f.filename,
                f.data.len()
            )));
        }
        out.push((f.filename.trim_start_matches('/').to_owned(), f.data, 0o755));
    }
    if !image.context_mount_id.is_empty() {
        let files = state.lock().mounts.get(&image.context_mount_id).cloned().ok_or_else(|| {
            Status::not_found(format!("Mount {} not found", image.context_mount_id))
        })?;
        out.extend(files.into_iter().map(|(n, d, m)| (n.trim_start_matches('/').to_owned(), d, m)));
    }
    Ok(out)
}

/// `SecretGetOrCreate`: keeps the Secret's environment; its id.
pub(crate) fn secret(state: &State, m: api::SecretGetOrCreateRequest) -> String {
    let id = modal_id("st");
    state.lock().secrets.insert(id.clone(), m.env_dict.into_iter().collect());
    id
}

/// A V2 sandbox's Secrets, as `SandboxCreateV2` sends them: its
/// `ephemeral_secrets`, then each of its `secret_sources` (a Secret by id,
/// or an environment inline, as Modal's client sends `env=`), each inline
/// environment kept as a Secret of its own.
pub(crate) fn sources(
    state: &State,
    ephemeral: Option<api::StringMap>,
    sources: Vec<api::SecretSource>,
) -> Vec<String> {
    use api::secret_source::Source;
    let mut inline = |env: api::StringMap| {
        let id = modal_id("st");
        state.lock().secrets.insert(id.clone(), env.contents.into_iter().collect());
        id
    };
    let mut ids: Vec<String> = ephemeral.into_iter().map(&mut inline).collect();
    for s in sources {
        match s.source {
            Some(Source::SecretId(id)) => ids.push(id),
            Some(Source::Env(env)) => ids.push(inline(env)),
            None => {}
        }
    }
    ids
}

/// A sandbox's environment: the Secrets' it names, later ones winning.
pub(crate) fn environment(
    state: &State,
    secret_ids: &[String],
) -> Result<BTreeMap<String, String>, Status> {
    let inner = state.lock();
    let mut env = BTreeMap::new();
    for id in secret_ids {
        let s = inner
            .secrets
            .get(id)
            .ok_or_else(|| Status::not_found(format!("Secret {id} not found")))?;
        env.extend(s.clone());
    }
    Ok(env)
}
