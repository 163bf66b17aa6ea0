//! Modal's gRPC API as the Modal runtime calls it: the only place that
//! names a Modal message (from `holm-modal-proto`, Modal's published
//! `modal_proto` subset). Modal says the API is not public, so a change at
//! Modal is a change here and nowhere else.
//!
//! Every call carries the token pair as Modal's own clients send it
//! (`x-modal-token-id`, `x-modal-token-secret`, with `x-modal-client-type`
//! and `x-modal-client-version`); the secret is read from the runtime's
//! [`Key`] at each call, so a replaced key takes effect at once. A failed
//! call is a [`VendorError`] whose status is the HTTP status the gRPC code
//! stands for (`UNAVAILABLE` is 503, `UNAUTHENTICATED` 401, `NOT_FOUND`
//! 404, ...), whose code is the gRPC code's name, and whose message never
//! holds the secret. Calls that may be repeated are, with backoff, after
//! `UNAVAILABLE`, `RESOURCE_EXHAUSTED`, `INTERNAL`, `UNKNOWN` and
//! `DEADLINE_EXCEEDED`, as Modal's clients retry them.

use std::collections::BTreeMap;
use std::time::Duration;

use holm_modal_proto::api::{self, modal_client_client::ModalClientClient};
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};

use super::super::remote::{Addresses, Backoff, Detail, Key, Retry, VResult, VendorError};

/// Modal's client type for its client (`CLIENT_TYPE_CLIENT`), with the
/// version of the `modal` package whose protos holm speaks: the one type
/// with which Modal's own client sends the token pair. (`CLIENT_TYPE_LIBMODAL`,
/// 7, is an obsolete type: "before modal-js v0.3.15 / modal-go v0.0.15".)
const CLIENT_TYPE: &str = "1";
/// The smallest file Modal's client sends through blob storage rather than
/// inline in a gRPC message (`LARGE_FILE_LIMIT`, `_utils/blob_utils.py`).
pub const LARGE_FILE: usize = 4 * 1024 * 1024;
/// The largest message either way (Modal's clients allow 100 MB).
const MAX_MESSAGE: usize = 100 * 1024 * 1024;

/// A sandbox as Modal lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// `sb-...`.
    pub id: String,
    /// Its tags.
    pub tags: BTreeMap<String, String>,
    /// Whether it has ended (its task has a result).
    pub finished: bool,
    /// When it was made, in seconds since the epoch.
    pub created_at: f64,
}

/// A port's tunnel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tunnel {
    /// The port in the sandbox.
    pub container_port: u16,
    /// The public host.
    pub host: String,
    /// Its port.
    pub port: u16,
}

/// How an image build ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Built {
    /// Built: the image can be used.
    Ready,
    /// Failed, with Modal's reason.
    Failed(String),
}

/// What a sandbox is made of.
#[derive(Debug, Clone)]
pub struct SandboxDefinition {
    /// The command it runs (the guest).
    pub entrypoint: Vec<String>,
    /// `im-...`.
    pub image_id: String,
    /// The Secrets it gets its environment from (Modal's clients send a
    /// sandbox's environment as an ephemeral Secret: [`ModalApi::secret`]).
    pub secret_ids: Vec<String>,
    /// Memory in MiB.
    pub memory_mib: u32,
    /// CPUs in thousandths.
    pub milli_cpu: u32,
    /// Seconds until Modal ends it.
    pub timeout_secs: u32,
    /// Seconds without activity after which Modal ends it.
    pub idle_timeout_secs: Option<u32>,
    /// The ports that get a tunnel.
    pub ports: Vec<u16>,
    /// Its tags.
    pub tags: BTreeMap<String, String>,
}

/// Modal's API for one account.
#[derive(Clone)]
pub struct ModalApi {
    client: ModalClientClient<Channel>,
    token_id: String,
    secret: Key,
    backoff: Backoff,
    /// For blob uploads: reaches only the runtime's addresses.
    http: reqwest::Client,
    addresses: Addresses,
}

impl std::fmt::Debug for ModalApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModalApi").field("token_id", &self.token_id).finish_non_exhaustive()
    }
}

/// The HTTP status a gRPC code stands for (as gRPC's own HTTP mapping).
fn http_status(code: tonic::Code) -> u16 {
    use tonic::Code as C;
    match code {
        C::Ok => 200,
        C::InvalidArgument | C::FailedPrecondition | C::OutOfRange => 400,
        C::Unauthenticated => 401,
        C::PermissionDenied => 403,
        C::NotFound => 404,
        C::AlreadyExists | C::Aborted => 409,
        C::ResourceExhausted => 429,
        C::Cancelled => 499,
        C::Unimplemented => 501,
        C::Unavailable => 503,
        C::DeadlineExceeded => 504,
        C::Unknown | C::Internal | C::DataLoss => 500,
    }
}

/// The name of a gRPC code, as Modal's clients print it.
fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code as C;
    match code {
        C::Ok => "OK",
        C::Cancelled => "CANCELLED",
        C::Unknown => "UNKNOWN",
        C::InvalidArgument => "INVALID_ARGUMENT",
        C::DeadlineExceeded => "DEADLINE_EXCEEDED",
        C::NotFound => "NOT_FOUND",
        C::AlreadyExists => "ALREADY_EXISTS",
        C::PermissionDenied => "PERMISSION_DENIED",
        C::ResourceExhausted => "RESOURCE_EXHAUSTED",
        C::FailedPrecondition => "FAILED_PRECONDITION",
        C::Aborted => "ABORTED",
        C::OutOfRange => "OUT_OF_RANGE",
        C::Unimplemented => "UNIMPLEMENTED",
        C::Internal => "INTERNAL",
        C::Unavailable => "UNAVAILABLE",
        C::DataLoss => "DATA_LOSS",
        C::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// A failed call as a [`VendorError`]. A status that is no answer of
/// Modal's (the connection failed) has no HTTP status, so it counts as
/// never answered.
pub fn vendor_error(what: &str, status: &tonic::Status, secret: &str) -> VendorError {
    // An address the runtime may not reach, refused by the channel's
    // resolver (`channel`): its reason, not tonic's "dns error".
    let refused = std::iter::successors(std::error::Error::source(status), |e| e.source())
        .filter_map(|e| e.downcast_ref::<std::io::Error>())
        .find(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
        .map(ToString::to_string);
    let transport = refused.is_some()
        || status.code() == tonic::Code::Unavailable
            && status.metadata().is_empty()
            && (status.message().contains("transport") || status.message().contains("connect"));
    let message = if let Some(why) = refused {
        why
    } else if transport {
        "cannot connect".to_owned()
    } else if status.message().is_empty() {
        code_name(status.code()).to_lowercase().replace('_', " ")
    } else {
        status.message().to_owned()
    };
    let request_id =
        status.metadata().get("x-request-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    VendorError::from(Detail {
        vendor: "modal",
        what: what.to_owned(),
        status: (!transport).then(|| http_status(status.code())),
        code: Some(code_name(status.code()).to_owned()),
        message,
        request_id,
        retry_after: None,
    })
    .scrub(secret)
}

/// Whether a call may be made again after `e`, by `retry`.
fn retryable(e: &VendorError, retry: Retry) -> bool {
    match retry {
        Retry::Never => false,
        Retry::NotTwice => e.status == Some(429) || e.status.is_none(),
        Retry::Idempotent => e.status.is_none() || matches!(e.status, Some(429 | 500 | 503 | 504)),
    }
}

fn tags(list: Vec<api::SandboxTag>) -> BTreeMap<String, String> {
    list.into_iter().map(|t| (t.tag_name, t.tag_value)).collect()
}

fn finished(result: Option<&api::GenericResult>) -> bool {
    result.is_some_and(|r| r.status != api::generic_result::GenericStatus::Unspecified as i32)
}

impl ModalApi {
    /// The API at `server_url` (`https://api.modal.com`, or a stand-in's
    /// `http://127.0.0.1:PORT`), with the token pair.
    pub fn new(
        server_url: &str,
        token_id: &str,
        secret: Key,
        addresses: Addresses,
    ) -> Result<Self, String> {
        let mut endpoint = Endpoint::from_shared(server_url.to_owned())
            .map_err(|e| format!("server_url {server_url:?} is not a URL: {e}"))?
            .connect_timeout(Duration::from_secs(15))
            .timeout(Duration::from_secs(120))
            .tcp_keepalive(Some(Duration::from_secs(30)))
            // holm names itself, as its HTTP clients do (tonic adds its own
            // name after it).
            .user_agent(holm_client::USER_AGENT)
            .map_err(|e| format!("a user agent: {e}"))?;
        if server_url.starts_with("https://") {
            endpoint = endpoint
                .tls_config(ClientTlsConfig::new().with_native_roots())
                .map_err(|e| format!("TLS for {server_url}: {e}"))?;
        }
        let channel = super::channel::open(&endpoint, addresses);
        let client = ModalClientClient::new(channel)
            .max_decoding_message_size(MAX_MESSAGE)
            .max_encoding_message_size(MAX_MESSAGE);
        let http = holm_client::address::client_builder(addresses)
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(15))
            .timeout(Duration::from_secs(600))
            .build()
            .map_err(|e| format!("an HTTP client: {e}"))?;
        Ok(Self {
            client,
            token_id: token_id.to_owned(),
            secret,
            backoff: Backoff::default(),
            http,
            addresses,
        })
    }

    /// The secret's key, replaced in place on rotation.
    pub fn key(&self) -> &Key {
        &self.secret
    }

    fn request<T>(&self, message: T) -> Result<tonic::Request<T>, String> {
        let mut r = tonic::Request::new(message);
        let m = r.metadata_mut();
        let value = |v: &str| {
            MetadataValue::try_from(v).map_err(|_| "the token has characters gRPC cannot send")
        };
        m.insert("x-modal-token-id", value(&self.token_id)?);
        m.insert("x-modal-token-secret", value(&self.secret.get())?);
        m.insert("x-modal-client-type", value(CLIENT_TYPE)?);
        m.insert("x-modal-client-version", value(holm_modal_proto::MODAL_VERSION)?);
        Ok(r)
    }

    /// Makes one call, again after failures `retry` allows, with backoff.
    async fn call<T, R, F, Fut>(&self, what: &str, retry: Retry, message: T, f: F) -> VResult<R>
    where
        T: Clone,
        F: Fn(ModalClientClient<Channel>, tonic::Request<T>) -> Fut,
        Fut: std::future::Future<Output = Result<tonic::Response<R>, tonic::Status>>,
    {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let request =
                self.request(message.clone()).map_err(|m| VendorError::answer("modal", what, m))?;
            let e = match f(self.client.clone(), request).await {
                Ok(r) => return Ok(r.into_inner()),
                Err(status) => vendor_error(what, &status, &self.secret.get()),
            };
            if attempt >= self.backoff.attempts || !retryable(&e, retry) {
                return Err(e);
            }
            tracing::debug!(vendor = "modal", what, error = %e, attempt, "trying again");
            tokio::time::sleep(self.backoff.wait(attempt)).await;
        }
    }

    /// `ClientHello`: Modal answers and takes the token.
    pub async fn hello(&self) -> VResult<()> {
        self.call("say hello", Retry::Never, (), |mut c, r| async move { c.client_hello(r).await })
            .await
            .map(drop)
    }

    /// The image builder version of `environment` (the workspace's default
    /// when empty), from `EnvironmentGetOrCreate`'s settings, where Modal's
    /// client reads it (`_resolve_image_builder_version`, `_image.py`):
    /// `ClientHello`'s field is "deprecated, no longer used in client".
    pub async fn builder_version(&self, environment: &str) -> VResult<String> {
        let m = api::EnvironmentGetOrCreateRequest {
            deployment_name: environment.to_owned(),
            object_creation_type: api::ObjectCreationType::Unspecified as i32,
        };
        let r = self
            .call("read the environment", Retry::Idempotent, m, |mut c, r| async move {
                c.environment_get_or_create(r).await
            })
            .await?;
        let v = r
            .metadata
            .and_then(|m| m.settings)
            .map(|s| s.image_builder_version)
            .unwrap_or_default();
        if v.is_empty() {
            return Err(VendorError::answer(
                "modal",
                "read the environment",
                "it names no image builder version",
            ));
        }
        Ok(v)
    }

    /// `SecretGetOrCreate`: an anonymous Secret owned by `app_id` holding
    /// `env`, as Modal's client sends a sandbox's environment
    /// (`Secret.from_dict`, `_load_from_env_dict`, `secret.py`); its id.
    pub async fn secret(
        &self,
        app_id: &str,
        environment: &str,
        env: &BTreeMap<String, String>,
    ) -> VResult<String> {
        let m = api::SecretGetOrCreateRequest {
            object_creation_type: api::ObjectCreationType::AnonymousOwnedByApp as i32,
            env_dict: env.clone().into_iter().collect(),
            app_id: app_id.to_owned(),
            environment_name: environment.to_owned(),
            ..api::SecretGetOrCreateRequest::default()
        };
        let r = self
            .call("keep the environment as a secret", Retry::NotTwice, m, |mut c, r| async move {
                c.secret_get_or_create(r).await
            })
            .await?;
        Ok(r.secret_id)
    }

    /// `AppGetOrCreate`: the app boxes go in.
    pub async fn app(&self, name: &str, environment: &str) -> VResult<String> {
        let m = api::AppGetOrCreateRequest {
            app_name: name.to_owned(),
            environment_name: environment.to_owned(),
            object_creation_type: api::ObjectCreationType::CreateIfMissing as i32,
        };
        let r = self
            .call("find or make the app", Retry::Idempotent, m, |mut c, r| async move {
                c.app_get_or_create(r).await
            })
            .await?;
        Ok(r.app_id)
    }

    /// `ImageGetOrCreate`: the image of `commands` with the mount
    /// `context_mount_id` ([`ModalApi::context_mount`]) as its build
    /// context; its id, and how its build ended when it has.
    pub async fn image(
        &self,
        app_id: &str,
        commands: Vec<String>,
        context_mount_id: String,
        builder_version: &str,
    ) -> VResult<(String, Option<Built>)> {
        let m = api::ImageGetOrCreateRequest {
            app_id: app_id.to_owned(),
            builder_version: builder_version.to_owned(),
            // The workspace's own images, as Modal's client asks for them
            // (`_Image._from_args`'s `_namespace`).
            namespace: api::DeploymentNamespace::Workspace as i32,
            image: Some(api::Image {
                dockerfile_commands: commands,
                context_mount_id,
                ..api::Image::default()
            }),
            ..api::ImageGetOrCreateRequest::default()
        };
        let r = self
            .call("make an image", Retry::Idempotent, m, |mut c, r| async move {
                c.image_get_or_create(r).await
            })
            .await?;
        Ok((r.image_id, r.result.as_ref().and_then(built)))
    }

    /// A build context of `files` (name, bytes, mode) as Modal's client
    /// makes one (`_create_context_mount`, `mount.py`): each file put by
    /// its SHA-256 (`MountPutFile`), inline when under [`LARGE_FILE`],
    /// else through blob storage; then `MountGetOrCreate` owned by the app,
    /// with each file at `/<name>`. The mount's id.
    pub async fn context_mount(
        &self,
        app_id: &str,
        files: &[(String, Vec<u8>, u32)],
    ) -> VResult<String> {
        use sha2::Digest as _;
        let mut listed = Vec::new();
        for (name, data, mode) in files {
            let sha256_hex = hex::encode(sha2::Sha256::digest(data));
            let data = if data.len() >= LARGE_FILE {
                api::mount_put_file_request::DataOneof::DataBlobId(self.blob(data).await?)
            } else {
                api::mount_put_file_request::DataOneof::Data(data.clone())
            };
            let m =
                api::MountPutFileRequest { sha256_hex: sha256_hex.clone(), data_oneof: Some(data) };
            let r = self
                .call("upload a build file", Retry::Idempotent, m, |mut c, r| async move {
                    c.mount_put_file(r).await
                })
                .await?;
            if !r.exists {
                return Err(VendorError::answer(
                    "modal",
                    "upload a build file",
                    format!("Modal does not have {name} after it was put"),
                ));
            }
            listed.push(api::MountFile {
                filename: format!("/{name}"),
                sha256_hex,
                size: None,
                mode: Some(*mode),
            });
        }
        let m = api::MountGetOrCreateRequest {
            object_creation_type: api::ObjectCreationType::AnonymousOwnedByApp as i32,
            app_id: app_id.to_owned(),
            files: listed,
            ..api::MountGetOrCreateRequest::default()
        };
        let r = self
            .call("make the build context", Retry::Idempotent, m, |mut c, r| async move {
                c.mount_get_or_create(r).await
            })
            .await?;
        Ok(r.mount_id)
    }

    /// `BlobCreate`, then a `PUT` of `data` to the first upload URL that
    /// takes it, as Modal's client uploads a file of [`LARGE_FILE`] or more
    /// (`_blob_upload`, `_utils/blob_utils.py`); the blob's id. A multipart
    /// upload (which Modal asks for files of 1 GiB and more) is refused.
    async fn blob(&self, data: &[u8]) -> VResult<String> {
        use base64::Engine as _;
        use md5::Digest as _;
        use sha2::Digest as _;
        let b64 = base64::engine::general_purpose::STANDARD;
        let md5 = b64.encode(md5::Md5::digest(data));
        let m = api::BlobCreateRequest {
            content_md5: md5.clone(),
            content_sha256_base64: b64.encode(sha2::Sha256::digest(data)),
            content_length: i64::try_from(data.len()).unwrap_or(i64::MAX),
        };
        let r =
            self.call("make a blob", Retry::Idempotent, m, |mut c, r| async move {
                c.blob_create(r).await
            })
            .await?;
        use api::blob_create_response::{UploadTypeOneof, UploadTypesOneof};
        let targets: Vec<(String, String)> = match (r.upload_types_oneof, r.upload_type_oneof) {
            (Some(UploadTypesOneof::UploadUrls(l)), _) => {
                l.items.into_iter().zip(r.blob_ids).map(|(u, b)| (b, u)).collect()
            }
            (None, Some(UploadTypeOneof::UploadUrl(u))) => vec![(r.blob_id, u)],
            _ => {
                return Err(VendorError::answer(
                    "modal",
                    "make a blob",
                    "Modal asked for a multipart upload, which holm does not make",
                ));
            }
        };
        let mut last = VendorError::answer("modal", "upload a blob", "Modal gave no upload URL");
        for (blob_id, url) in targets {
            match self.put(&url, data, &md5).await {
                Ok(()) => return Ok(blob_id),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// One `PUT` to an upload URL, with `Content-MD5` where Modal's client
    /// sends it (S3 and R2 hosts, `use_md5`).
    async fn put(&self, url: &str, data: &[u8], md5: &str) -> VResult<()> {
        let what = "upload a blob";
        holm_client::address::check_url(url, self.addresses)
            .map_err(|e| VendorError::answer("modal", what, e))?;
        let host = reqwest::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .unwrap_or_default();
        let mut req = self
            .http
            .put(url)
            .header("Content-Type", "application/octet-stream")
            .body(data.to_vec());
        if host.ends_with(".amazonaws.com") || host.ends_with(".r2.cloudflarestorage.com") {
            req = req.header("Content-MD5", md5);
        }
        let r = req.send().await.map_err(|e| {
            VendorError::answer("modal", what, format!("cannot reach the upload URL: {e}"))
        })?;
        if !r.status().is_success() {
            return Err(VendorError::answer(
                "modal",
                what,
                format!("the upload URL answered {}", r.status()),
            )
            .with_status(r.status().as_u16()));
        }
        Ok(())
    }

    /// `ImageJoinStreaming` until the build ends, each log line to `log`.
    pub async fn join_image(
        &self,
        image_id: &str,
        log: &mut (dyn FnMut(&str) + Send),
    ) -> VResult<Built> {
        let mut last_entry_id = String::new();
        let mut broken = 0;
        loop {
            let m = api::ImageJoinStreamingRequest {
                image_id: image_id.to_owned(),
                timeout: 55.0,
                last_entry_id: last_entry_id.clone(),
                include_logs_for_finished: true,
            };
            let stream = self
                .call("wait for an image build", Retry::Idempotent, m, |mut c, r| async move {
                    c.image_join_streaming(r).await
                })
                .await;
            let mut stream = match stream {
                Ok(s) => s,
                Err(e) => return Err(e),
            };
            loop {
                match stream.message().await {
                    Ok(Some(item)) => {
                        if !item.entry_id.is_empty() {
                            last_entry_id = item.entry_id;
                        }
                        for l in &item.task_logs {
                            for line in l.data.lines().filter(|l| !l.trim().is_empty()) {
                                log(line);
                            }
                        }
                        if let Some(done) = item.result.as_ref().and_then(built) {
                            return Ok(done);
                        }
                        if item.eof {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(status) => {
                        let e =
                            vendor_error("wait for an image build", &status, &self.secret.get());
                        broken += 1;
                        if broken >= self.backoff.attempts || !retryable(&e, Retry::Idempotent) {
                            return Err(e);
                        }
                        tokio::time::sleep(self.backoff.wait(broken)).await;
                        break;
                    }
                }
            }
        }
    }

    /// `SandboxCreate`: the sandbox's id.
    pub async fn create(&self, app_id: &str, d: &SandboxDefinition) -> VResult<String> {
        let m = api::SandboxCreateRequest {
            app_id: app_id.to_owned(),
            environment_name: String::new(),
            tags: d
                .tags
                .iter()
                .map(|(k, v)| api::SandboxTag { tag_name: k.clone(), tag_value: v.clone() })
                .collect(),
            definition: Some(api::Sandbox {
                entrypoint_args: d.entrypoint.clone(),
                image_id: d.image_id.clone(),
                resources: Some(api::Resources {
                    memory_mb: d.memory_mib,
                    milli_cpu: d.milli_cpu,
                    ..api::Resources::default()
                }),
                timeout_secs: d.timeout_secs,
                idle_timeout_secs: d.idle_timeout_secs,
                secret_ids: d.secret_ids.clone(),
                open_ports_oneof: Some(api::sandbox::OpenPortsOneof::OpenPorts(api::PortSpecs {
                    ports: d
                        .ports
                        .iter()
                        .map(|&p| api::PortSpec { port: u32::from(p), ..api::PortSpec::default() })
                        .collect(),
                })),
                network_access: Some(api::NetworkAccess {
                    network_access_type: api::network_access::NetworkAccessType::Open as i32,
                    ..api::NetworkAccess::default()
                }),
                ..api::Sandbox::default()
            }),
        };
        let r = self
            .call("create a sandbox", Retry::NotTwice, m, |mut c, r| async move {
                c.sandbox_create(r).await
            })
            .await?;
        Ok(r.sandbox_id)
    }

    /// `SandboxGetTaskId`: the sandbox's task once it is scheduled
    /// (`None` until then), and whether it has ended.
    pub async fn task(
        &self,
        sandbox_id: &str,
        timeout_secs: f32,
    ) -> VResult<(Option<String>, bool)> {
        let m = api::SandboxGetTaskIdRequest {
            sandbox_id: sandbox_id.to_owned(),
            timeout: Some(timeout_secs),
            wait_until_ready: false,
        };
        let r = self
            .call("find a sandbox's task", Retry::Idempotent, m, |mut c, r| async move {
                c.sandbox_get_task_id(r).await
            })
            .await?;
        Ok((r.task_id.filter(|t| !t.is_empty()), finished(r.task_result.as_ref())))
    }

    /// `SandboxGetTunnels`: the ports' tunnels, or `None` while they are
    /// not ready (Modal's `TIMEOUT` result).
    pub async fn tunnels(
        &self,
        sandbox_id: &str,
        timeout_secs: f32,
    ) -> VResult<Option<Vec<Tunnel>>> {
        let m = api::SandboxGetTunnelsRequest {
            sandbox_id: sandbox_id.to_owned(),
            timeout: timeout_secs,
        };
        let r = self
            .call("read a sandbox's tunnels", Retry::Idempotent, m, |mut c, r| async move {
                c.sandbox_get_tunnels(r).await
            })
            .await?;
        use api::generic_result::GenericStatus as S;
        match r.result.map(|g| g.status) {
            Some(s) if s == S::Timeout as i32 => Ok(None),
            Some(s) if s != S::Success as i32 && s != S::Unspecified as i32 => Err(
                VendorError::answer("modal", "read a sandbox's tunnels", "the sandbox has ended"),
            ),
            _ => Ok(Some(
                r.tunnels
                    .into_iter()
                    .filter_map(|t| {
                        Some(Tunnel {
                            container_port: u16::try_from(t.container_port).ok()?,
                            host: t.host,
                            port: u16::try_from(t.port).ok()?,
                        })
                    })
                    .collect(),
            )),
        }
    }

    /// `SandboxTagsGet`: a sandbox's tags (404 when Modal has no such sandbox).
    pub async fn tags(&self, sandbox_id: &str) -> VResult<BTreeMap<String, String>> {
        let m = api::SandboxTagsGetRequest { sandbox_id: sandbox_id.to_owned() };
        let r = self
            .call("read a sandbox's tags", Retry::Idempotent, m, |mut c, r| async move {
                c.sandbox_tags_get(r).await
            })
            .await?;
        Ok(tags(r.tags))
    }

    /// `SandboxWait` with no wait: whether the sandbox has ended.
    pub async fn ended(&self, sandbox_id: &str) -> VResult<bool> {
        let m = api::SandboxWaitRequest { sandbox_id: sandbox_id.to_owned(), timeout: 0.0 };
        let r = self
            .call("read a sandbox's state", Retry::Idempotent, m, |mut c, r| async move {
                c.sandbox_wait(r).await
            })
            .await?;
        Ok(finished(r.result.as_ref()))
    }

    /// `SandboxList`, every page: the running sandboxes of `app_id` that
    /// have the tag `name=value`.
    pub async fn list(&self, app_id: &str, name: &str, value: &str) -> VResult<Vec<Listed>> {
        let mut out: Vec<Listed> = Vec::new();
        let mut before = 0.0;
        loop {
            let m = api::SandboxListRequest {
                app_id: app_id.to_owned(),
                before_timestamp: before,
                environment_name: String::new(),
                include_finished: false,
                tags: vec![api::SandboxTag {
                    tag_name: name.to_owned(),
                    tag_value: value.to_owned(),
                }],
            };
            let r = self
                .call("list sandboxes", Retry::Idempotent, m, |mut c, r| async move {
                    c.sandbox_list(r).await
                })
                .await?;
            if r.sandboxes.is_empty() {
                return Ok(out);
            }
            for s in r.sandboxes {
                before = if before == 0.0 { s.created_at } else { before.min(s.created_at) };
                if out.iter().any(|o| o.id == s.id) {
                    continue;
                }
                out.push(Listed {
                    finished: finished(s.task_info.as_ref().and_then(|t| t.result.as_ref())),
                    tags: tags(s.tags),
                    created_at: s.created_at,
                    id: s.id,
                });
            }
        }
    }

    /// `SandboxTerminate`.
    pub async fn terminate(&self, sandbox_id: &str) -> VResult<()> {
        let m = api::SandboxTerminateRequest { sandbox_id: sandbox_id.to_owned() };
        self.call("end a sandbox", Retry::Idempotent, m, |mut c, r| async move {
            c.sandbox_terminate(r).await
        })
        .await
        .map(drop)
    }
}

fn built(r: &api::GenericResult) -> Option<Built> {
    use api::generic_result::GenericStatus as S;
    match S::try_from(r.status).unwrap_or(S::Unspecified) {
        S::Unspecified => None,
        S::Success => Some(Built::Ready),
        other => Some(Built::Failed(if r.exception.is_empty() {
            format!("the build ended in {}", other.as_str_name())
        } else {
            r.exception.clone()
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_codes_become_http_statuses_and_the_secret_goes() {
        let s = tonic::Status::unauthenticated("Invalid token secret as-very-secret-1");
        let e = vendor_error("create a sandbox", &s, "as-very-secret-1");
        assert_eq!(e.status, Some(401));
        assert!(e.is_auth());
        assert_eq!(e.code.as_deref(), Some("UNAUTHENTICATED"));
        assert!(!e.to_string().contains("as-very-secret-1"), "{e}");
        let e = vendor_error("x", &tonic::Status::not_found("no such sandbox"), "s");
        assert!(e.is_not_found());
        let e = vendor_error("x", &tonic::Status::unavailable("try later"), "s");
        assert_eq!(e.status, Some(503));
        assert!(retryable(&e, Retry::Idempotent) && !retryable(&e, Retry::NotTwice));
        let e = vendor_error("x", &tonic::Status::invalid_argument("bad"), "s");
        assert!(!retryable(&e, Retry::Idempotent));
    }
}
