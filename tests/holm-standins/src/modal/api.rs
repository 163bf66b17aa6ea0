//! `modal.client.ModalClient`, as the stand-in answers it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use holm_modal_proto::api::{
    self, generic_result::GenericStatus, modal_client_server::ModalClient,
};
use sha2::Digest as _;
use tonic::{Request, Response, Status};

use super::{BUILDER_VERSION, Build, Image, MAX_TIMEOUT_SECS, Sandbox, State, modal_id};
use crate::common::Call;
use crate::engine::RunSpec;
use crate::forward;

/// The service.
#[derive(Debug)]
pub(crate) struct Api(pub Arc<State>);

type R<T> = Result<Response<T>, Status>;

/// The gRPC status an injected HTTP status stands for.
pub(crate) fn fault_status(status: u16) -> Status {
    let message = format!("injected failure {status}");
    match status {
        429 => Status::resource_exhausted(message),
        503 | 502 => Status::unavailable(message),
        504 => Status::deadline_exceeded(message),
        401 => Status::unauthenticated(message),
        404 => Status::not_found(message),
        400 => Status::invalid_argument(message),
        _ => Status::internal(message),
    }
}

fn http_of(code: tonic::Code) -> u16 {
    match code {
        tonic::Code::Ok => 200,
        tonic::Code::Unauthenticated => 401,
        tonic::Code::NotFound => 404,
        tonic::Code::InvalidArgument => 400,
        tonic::Code::AlreadyExists => 409,
        tonic::Code::ResourceExhausted => 429,
        tonic::Code::Unavailable => 503,
        _ => 500,
    }
}

fn result(status: GenericStatus, exception: &str) -> api::GenericResult {
    api::GenericResult {
        status: status as i32,
        exception: exception.to_owned(),
        ..api::GenericResult::default()
    }
}

fn now_f64(state: &State) -> f64 {
    let sub = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .subsec_micros();
    state.clock.now() as f64 + f64::from(sub) / 1e6
}

impl Api {
    /// Checks the token pair, answers an injected fault, and records the call.
    fn admit<T>(&self, rpc: &str, r: &Request<T>) -> Result<(), Status> {
        let path = format!("/modal.client.ModalClient/{rpc}");
        let m = r.metadata();
        let get = |k: &str| m.get(k).and_then(|v| v.to_str().ok()).unwrap_or_default();
        let refused = if get("x-modal-client-type") == "7" {
            Some(Status::failed_precondition(
                "client type 7 (CLIENT_TYPE_LIBMODAL) is obsolete: update the client",
            ))
        } else if get("x-modal-token-id") != self.0.token_id
            || !self.0.keys.accepts(get("x-modal-token-secret"))
        {
            Some(Status::unauthenticated("Token missing or invalid. Run `modal token new`."))
        } else {
            self.0.faults.take("POST", &path).map(|f| fault_status(f.status))
        };
        let status = refused.as_ref().map_or(200, |s| http_of(s.code()));
        let trace = r.extensions().get::<crate::trace::Trace>().cloned();
        self.0.calls.push(Call { method: "POST".into(), path, status, trace });
        refused.map_or(Ok(()), Err)
    }

    /// Makes a sandbox (V1 and V2 alike); its id.
    fn create(&self, m: api::SandboxCreateRequest) -> Result<String, Status> {
        if !self.0.lock().apps.values().any(|a| *a == m.app_id) {
            return Err(Status::not_found(format!("App {} not found", m.app_id)));
        }
        let d = m.definition.ok_or_else(|| Status::invalid_argument("definition is required"))?;
        let timeout = if d.timeout_secs == 0 { 300 } else { d.timeout_secs };
        if timeout > MAX_TIMEOUT_SECS {
            return Err(Status::invalid_argument(format!(
                "timeout must be at most {MAX_TIMEOUT_SECS} seconds (24 hours), got {timeout}"
            )));
        }
        let tag = {
            let inner = self.0.lock();
            inner
                .images
                .values()
                .find(|i| i.id == d.image_id)
                .map(|i| (i.tag.clone(), i.build.clone()))
        };
        let tag = match tag {
            Some((t, Build::Ready)) => t,
            Some(_) => {
                return Err(Status::failed_precondition(format!(
                    "Image {} is not built",
                    d.image_id
                )));
            }
            None => return Err(Status::not_found(format!("Image {} not found", d.image_id))),
        };
        let id = modal_id("sb");
        let ports: Vec<u16> = match &d.open_ports_oneof {
            Some(api::sandbox::OpenPortsOneof::OpenPorts(p)) => {
                p.ports.iter().filter_map(|p| u16::try_from(p.port).ok()).collect()
            }
            None => Vec::new(),
        };
        let tags: BTreeMap<String, String> =
            m.tags.into_iter().map(|t| (t.tag_name, t.tag_value)).collect();
        let resources = d.resources.unwrap_or_default();
        // Only Secrets: Modal's clients never set `environment_variables`.
        let env = super::blobs::environment(&self.0, &d.secret_ids)?;
        if d.environment_variables.is_some_and(|e| !e.contents.is_empty()) {
            tracing::warn!("the Modal stand-in does not read environment_variables");
        }
        let entrypoint = if d.entrypoint_args.is_empty() {
            vec!["sleep".to_owned(), "infinity".to_owned()]
        } else {
            d.entrypoint_args
        };
        let spec = RunSpec {
            name: format!("holm-standin-modal-{}", id.to_lowercase()),
            image: tag,
            entrypoint: Some(entrypoint),
            env: env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            ports: ports.clone(),
            memory_mib: (resources.memory_mb > 0).then_some(u64::from(resources.memory_mb)),
            cpus: (resources.milli_cpu > 0).then(|| u64::from(resources.milli_cpu.div_ceil(1000))),
            labels: tags.clone(),
            ..RunSpec::default()
        };
        let now = now_f64(&self.0);
        self.0.lock().sandboxes.insert(
            id.clone(),
            Sandbox {
                id: id.clone(),
                app_id: m.app_id,
                tags,
                task_id: None,
                container: None,
                tunnels: BTreeMap::new(),
                created_at: now,
                ends_at: self.0.clock.now() + u64::from(timeout),
                idle_timeout_secs: d.idle_timeout_secs,
                env,
                result: None,
                exception: String::new(),
            },
        );
        start(Arc::clone(&self.0), id.clone(), spec, ports);
        Ok(id)
    }

    fn sandbox(&self, id: &str) -> Result<Sandbox, Status> {
        self.0
            .lock()
            .sandboxes
            .get(id)
            .cloned()
            .ok_or_else(|| Status::not_found(format!("Sandbox {id} not found")))
    }
}

fn tunnel_data(s: &Sandbox) -> Vec<api::TunnelData> {
    s.tunnels
        .iter()
        .map(|(&port, addr)| api::TunnelData {
            host: addr.ip().to_string(),
            port: u32::from(addr.port()),
            container_port: u32::from(port),
            ..Default::default()
        })
        .collect()
}

/// Builds an image in the background, keeping its result and log.
fn build(state: Arc<State>, key: String, commands: Vec<String>, files: super::blobs::MountFiles) {
    let task_state = Arc::clone(&state);
    let task = tokio::spawn(async move {
        let state = task_state;
        let tag = state.lock().images.get(&key).map(|i| i.tag.clone()).unwrap_or_default();
        let dockerfile = commands.join("\n") + "\n";
        let mut log = Vec::new();
        let done = state.engine.build(&dockerfile, &files, &tag, &mut log).await;
        if let Some(i) = state.lock().images.get_mut(&key) {
            i.logs = log;
            i.build = match done {
                Ok(()) => Build::Ready,
                Err(e) => Build::Failed(e),
            };
        }
        state.changed.notify_waiters();
    });
    state.spawn(task);
}

/// Starts a sandbox's container and its tunnels, then gives it a task.
fn start(state: Arc<State>, id: String, spec: RunSpec, ports: Vec<u16>) {
    let task_state = Arc::clone(&state);
    let task = tokio::spawn(async move {
        let state = task_state;
        let ran = state.engine.run(&spec).await;
        let (container, host_ports) = match ran {
            Ok(x) => x,
            Err(e) => {
                if let Some(s) = state.lock().sandboxes.get_mut(&id) {
                    s.result = Some(GenericStatus::InitFailure as i32);
                    s.exception = e;
                }
                state.changed.notify_waiters();
                return;
            }
        };
        let mut tunnels = BTreeMap::new();
        for port in ports {
            let Some(&host) = host_ports.get(&port) else { continue };
            let target = std::net::SocketAddr::from(([127, 0, 0, 1], host));
            let (addr, t) = forward::serve(move |req| async move {
                match forward::forward(req, target).await {
                    Some(r) => r,
                    None => forward::respond(
                        hyper::StatusCode::BAD_GATEWAY,
                        "text/plain",
                        "the sandbox does not listen on the port",
                    ),
                }
            })
            .await;
            state.spawn(t);
            tunnels.insert(port, addr);
        }
        let gone = {
            let mut inner = state.lock();
            match inner.sandboxes.get_mut(&id) {
                Some(s) if s.result.is_none() => {
                    s.container = Some(container.clone());
                    s.tunnels = tunnels;
                    s.task_id = Some(modal_id("ta"));
                    false
                }
                _ => true,
            }
        };
        if gone {
            let _ = state.engine.remove(&container).await;
        }
        state.changed.notify_waiters();
    });
    state.spawn(task);
}

/// Ends sandboxes whose timeout has passed.
pub(crate) async fn reap_once(state: &State) {
    let now = state.clock.now();
    let due: Vec<(String, Option<String>)> = {
        let mut inner = state.lock();
        inner
            .sandboxes
            .values_mut()
            .filter(|s| s.result.is_none() && now >= s.ends_at)
            .map(|s| {
                s.result = Some(GenericStatus::Timeout as i32);
                (s.id.clone(), s.container.take())
            })
            .collect()
    };
    for (id, container) in due {
        tracing::info!(sandbox = %id, "the Modal stand-in ends a sandbox at its timeout");
        if let Some(c) = container {
            let _ = state.engine.remove(&c).await;
        }
    }
}

/// Waits until `ready` holds or `secs` pass; whether it held.
async fn wait_for(state: &State, secs: f32, ready: impl Fn(&State) -> bool) -> bool {
    let until = Instant::now() + Duration::from_secs_f32(secs.clamp(0.0, 60.0));
    loop {
        if ready(state) {
            return true;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let _ =
            tokio::time::timeout(left.min(Duration::from_millis(250)), state.changed.notified())
                .await;
    }
}

type JoinStream =
    tokio_stream::wrappers::ReceiverStream<Result<api::ImageJoinStreamingResponse, Status>>;

#[tonic::async_trait]
impl ModalClient for Api {
    async fn client_hello(&self, r: Request<()>) -> R<api::ClientHelloResponse> {
        self.admit("ClientHello", &r)?;
        Ok(Response::new(api::ClientHelloResponse::default()))
    }

    async fn auth_token_get(
        &self,
        r: Request<api::AuthTokenGetRequest>,
    ) -> R<api::AuthTokenGetResponse> {
        self.admit("AuthTokenGet", &r)?;
        Ok(Response::new(api::AuthTokenGetResponse { token: super::router::jwt(&self.0, "auth") }))
    }

    async fn app_get_or_create(
        &self,
        r: Request<api::AppGetOrCreateRequest>,
    ) -> R<api::AppGetOrCreateResponse> {
        self.admit("AppGetOrCreate", &r)?;
        let m = r.into_inner();
        if m.app_name.is_empty() {
            return Err(Status::invalid_argument("App name is required"));
        }
        let mut inner = self.0.lock();
        let key = format!("{}/{}", m.environment_name, m.app_name);
        let id = match inner.apps.get(&key) {
            Some(id) => id.clone(),
            None if m.object_creation_type == api::ObjectCreationType::CreateIfMissing as i32 => {
                let id = modal_id("ap");
                inner.apps.insert(key, id.clone());
                id
            }
            None => return Err(Status::not_found(format!("App '{}' not found", m.app_name))),
        };
        Ok(Response::new(api::AppGetOrCreateResponse { app_id: id, ..Default::default() }))
    }

    async fn environment_get_or_create(
        &self,
        r: Request<api::EnvironmentGetOrCreateRequest>,
    ) -> R<api::EnvironmentGetOrCreateResponse> {
        self.admit("EnvironmentGetOrCreate", &r)?;
        let name = r.into_inner().deployment_name;
        Ok(Response::new(api::EnvironmentGetOrCreateResponse {
            environment_id: "en-standin".into(),
            metadata: Some(api::EnvironmentMetadata {
                name: if name.is_empty() { "main".into() } else { name },
                settings: Some(api::EnvironmentSettings {
                    image_builder_version: BUILDER_VERSION.into(),
                    webhook_suffix: "modal.run".into(),
                    ..Default::default()
                }),
                ..Default::default()
            }),
        }))
    }

    async fn secret_get_or_create(
        &self,
        r: Request<api::SecretGetOrCreateRequest>,
    ) -> R<api::SecretGetOrCreateResponse> {
        self.admit("SecretGetOrCreate", &r)?;
        let secret_id = super::blobs::secret(&self.0, r.into_inner());
        Ok(Response::new(api::SecretGetOrCreateResponse { secret_id, ..Default::default() }))
    }

    async fn blob_create(&self, r: Request<api::BlobCreateRequest>) -> R<api::BlobCreateResponse> {
        self.admit("BlobCreate", &r)?;
        Ok(Response::new(super::blobs::create(&self.0, r.get_ref())))
    }

    async fn mount_put_file(
        &self,
        r: Request<api::MountPutFileRequest>,
    ) -> R<api::MountPutFileResponse> {
        self.admit("MountPutFile", &r)?;
        let exists = super::blobs::put(&self.0, r.into_inner())?;
        Ok(Response::new(api::MountPutFileResponse { exists }))
    }

    async fn mount_batched_check_existence(
        &self,
        r: Request<api::MountBatchedCheckExistenceRequest>,
    ) -> R<api::MountBatchedCheckExistenceResponse> {
        self.admit("MountBatchedCheckExistence", &r)?;
        let missing_sha256_hex_hashes = super::blobs::missing(&self.0, r.into_inner());
        Ok(Response::new(api::MountBatchedCheckExistenceResponse { missing_sha256_hex_hashes }))
    }

    async fn mount_get_or_create(
        &self,
        r: Request<api::MountGetOrCreateRequest>,
    ) -> R<api::MountGetOrCreateResponse> {
        self.admit("MountGetOrCreate", &r)?;
        let mount_id = super::blobs::mount(&self.0, r.into_inner())?;
        Ok(Response::new(api::MountGetOrCreateResponse { mount_id, ..Default::default() }))
    }

    async fn image_get_or_create(
        &self,
        r: Request<api::ImageGetOrCreateRequest>,
    ) -> R<api::ImageGetOrCreateResponse> {
        self.admit("ImageGetOrCreate", &r)?;
        let m = r.into_inner();
        let mut image = m.image.ok_or_else(|| Status::invalid_argument("image is required"))?;
        if m.builder_version.is_empty() {
            return Err(Status::invalid_argument("builder_version is required"));
        }
        let files = super::blobs::context(&self.0, &mut image)?;
        super::blobs::from_bases(&self.0, &mut image)?;
        if image.dockerfile_commands.first().is_none_or(|c| !c.starts_with("FROM ")) {
            return Err(Status::invalid_argument("The first Dockerfile command must be FROM"));
        }
        let mut h = sha2::Sha256::new();
        for c in &image.dockerfile_commands {
            h.update((c.len() as u64).to_le_bytes());
            h.update(c.as_bytes());
        }
        for (name, data, mode) in &files {
            h.update(name.as_bytes());
            h.update(mode.to_le_bytes());
            h.update(sha2::Sha256::digest(data));
        }
        let key = hex::encode(h.finalize());
        let found = self.0.lock().images.get(&key).cloned();
        if let Some(i) = found {
            let done = match &i.build {
                Build::Building => None,
                Build::Ready => Some(result(GenericStatus::Success, "")),
                Build::Failed(e) => Some(result(GenericStatus::Failure, e)),
            };
            return Ok(Response::new(api::ImageGetOrCreateResponse {
                image_id: i.id,
                result: done,
                ..Default::default()
            }));
        }
        let id = modal_id("im");
        let tag = format!("holm-standin-modal:{}", id.to_lowercase());
        self.0.lock().images.insert(
            key.clone(),
            Image { id: id.clone(), tag, build: Build::Building, logs: Vec::new() },
        );
        build(Arc::clone(&self.0), key, image.dockerfile_commands, files);
        Ok(Response::new(api::ImageGetOrCreateResponse { image_id: id, ..Default::default() }))
    }

    type ImageJoinStreamingStream = JoinStream;

    async fn image_join_streaming(
        &self,
        r: Request<api::ImageJoinStreamingRequest>,
    ) -> R<JoinStream> {
        self.admit("ImageJoinStreaming", &r)?;
        let m = r.into_inner();
        let image_id = m.image_id.clone();
        let find = move |s: &State| s.lock().images.values().find(|i| i.id == image_id).cloned();
        if find(&self.0).is_none() {
            return Err(Status::not_found(format!("Image {} not found", m.image_id)));
        }
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let state = Arc::clone(&self.0);
        tokio::spawn(async move {
            let finished = {
                let find = find.clone();
                move |s: &State| find(s).is_some_and(|i| !matches!(i.build, Build::Building))
            };
            let done = wait_for(&state, m.timeout.max(1.0), finished).await;
            let Some(i) = find(&state) else { return };
            let first = m.last_entry_id.parse::<usize>().unwrap_or(0);
            let logs: Vec<api::TaskLogs> = i
                .logs
                .iter()
                .skip(first)
                .map(|l| api::TaskLogs { data: format!("{l}\n"), ..Default::default() })
                .collect();
            let result = match (&i.build, done) {
                (Build::Ready, true) => Some(result(GenericStatus::Success, "")),
                (Build::Failed(e), true) => Some(result(GenericStatus::Failure, e)),
                _ => None,
            };
            let _ = tx
                .send(Ok(api::ImageJoinStreamingResponse {
                    eof: result.is_some(),
                    result,
                    task_logs: logs,
                    entry_id: i.logs.len().to_string(),
                    ..Default::default()
                }))
                .await;
        });
        Ok(Response::new(tokio_stream::wrappers::ReceiverStream::new(rx)))
    }

    async fn sandbox_create(
        &self,
        r: Request<api::SandboxCreateRequest>,
    ) -> R<api::SandboxCreateResponse> {
        self.admit("SandboxCreate", &r)?;
        let id = self.create(r.into_inner())?;
        Ok(Response::new(api::SandboxCreateResponse { sandbox_id: id, ..Default::default() }))
    }

    async fn sandbox_create_v2(
        &self,
        r: Request<api::SandboxCreateV2Request>,
    ) -> R<api::SandboxCreateV2Response> {
        self.admit("SandboxCreateV2", &r)?;
        let m = r.into_inner();
        let mut definition = m.definition;
        if let Some(d) = definition.as_mut() {
            d.secret_ids.extend(super::blobs::sources(
                &self.0,
                m.ephemeral_secrets,
                m.secret_sources,
            ));
        }
        let id = self.create(api::SandboxCreateRequest {
            app_id: m.app_id,
            definition,
            environment_name: String::new(),
            tags: m.tags,
        })?;
        // V2 answers once the sandbox is scheduled, with its task, its
        // command router and its tunnels.
        let sid = id.clone();
        let has = move |s: &State| {
            s.lock().sandboxes.get(&sid).is_some_and(|x| x.task_id.is_some() || x.result.is_some())
        };
        wait_for(&self.0, 60.0, has).await;
        let s = self.sandbox(&id)?;
        let task = s.task_id.clone().ok_or_else(|| {
            Status::internal(format!("Sandbox {id} failed to start: {}", s.exception))
        })?;
        Ok(Response::new(api::SandboxCreateV2Response {
            sandbox_id: id,
            tunnels: tunnel_data(&s),
            command_router_access: Some(api::CommandRouterAccess {
                jwt: super::router::jwt(&self.0, &task),
                url: self.0.url.clone(),
            }),
            task_id: task,
            ..Default::default()
        }))
    }

    async fn sandbox_get_task_id_v2(
        &self,
        r: Request<api::SandboxGetTaskIdRequest>,
    ) -> R<api::SandboxGetTaskIdResponse> {
        self.sandbox_get_task_id(r).await
    }

    async fn sandbox_get_tunnels_v2(
        &self,
        r: Request<api::SandboxGetTunnelsRequest>,
    ) -> R<api::SandboxGetTunnelsResponse> {
        self.sandbox_get_tunnels(r).await
    }

    async fn sandbox_list_v2(
        &self,
        r: Request<api::SandboxListRequest>,
    ) -> R<api::SandboxListResponse> {
        self.sandbox_list(r).await
    }

    async fn sandbox_tags_get_v2(
        &self,
        r: Request<api::SandboxTagsGetRequest>,
    ) -> R<api::SandboxTagsGetResponse> {
        self.sandbox_tags_get(r).await
    }

    async fn sandbox_wait_v2(
        &self,
        r: Request<api::SandboxWaitRequest>,
    ) -> R<api::SandboxWaitResponse> {
        self.sandbox_wait(r).await
    }

    async fn sandbox_terminate_v2(
        &self,
        r: Request<api::SandboxTerminateRequest>,
    ) -> R<api::SandboxTerminateResponse> {
        self.sandbox_terminate(r).await
    }

    async fn sandbox_get_task_id(
        &self,
        r: Request<api::SandboxGetTaskIdRequest>,
    ) -> R<api::SandboxGetTaskIdResponse> {
        self.admit("SandboxGetTaskId", &r)?;
        let m = r.into_inner();
        self.sandbox(&m.sandbox_id)?;
        let id = m.sandbox_id.clone();
        let has = move |s: &State| {
            s.lock().sandboxes.get(&id).is_some_and(|x| x.task_id.is_some() || x.result.is_some())
        };
        wait_for(&self.0, m.timeout.unwrap_or(0.0), has).await;
        let s = self.sandbox(&m.sandbox_id)?;
        Ok(Response::new(api::SandboxGetTaskIdResponse {
            task_id: s.task_id,
            task_result: s.result.map(|st| api::GenericResult {
                status: st,
                exception: s.exception,
                ..Default::default()
            }),
        }))
    }

    async fn sandbox_get_tunnels(
        &self,
        r: Request<api::SandboxGetTunnelsRequest>,
    ) -> R<api::SandboxGetTunnelsResponse> {
        self.admit("SandboxGetTunnels", &r)?;
        let m = r.into_inner();
        self.sandbox(&m.sandbox_id)?;
        let id = m.sandbox_id.clone();
        let ready = move |s: &State| {
            s.lock().sandboxes.get(&id).is_some_and(|x| x.task_id.is_some() || x.result.is_some())
        };
        wait_for(&self.0, m.timeout, ready).await;
        let s = self.sandbox(&m.sandbox_id)?;
        let out = match (s.result, &s.task_id) {
            (Some(st), _) => api::SandboxGetTunnelsResponse {
                result: Some(api::GenericResult { status: st, ..Default::default() }),
                tunnels: Vec::new(),
            },
            (None, None) => api::SandboxGetTunnelsResponse {
                result: Some(result(GenericStatus::Timeout, "")),
                tunnels: Vec::new(),
            },
            (None, Some(_)) => api::SandboxGetTunnelsResponse {
                result: Some(result(GenericStatus::Success, "")),
                tunnels: tunnel_data(&s),
            },
        };
        Ok(Response::new(out))
    }

    async fn task_get_command_router_access(
        &self,
        r: Request<api::TaskGetCommandRouterAccessRequest>,
    ) -> R<api::TaskGetCommandRouterAccessResponse> {
        self.admit("TaskGetCommandRouterAccess", &r)?;
        let task = r.into_inner().task_id;
        let known = self.0.lock().sandboxes.values().any(|s| s.task_id.as_deref() == Some(&task));
        if !known {
            return Err(Status::not_found(format!("Task {task} not found")));
        }
        Ok(Response::new(api::TaskGetCommandRouterAccessResponse {
            jwt: super::router::jwt(&self.0, &task),
            url: self.0.url.clone(),
        }))
    }

    async fn sandbox_get_command_router_access(
        &self,
        r: Request<api::SandboxGetCommandRouterAccessRequest>,
    ) -> R<api::SandboxGetCommandRouterAccessResponse> {
        self.admit("SandboxGetCommandRouterAccess", &r)?;
        use api::sandbox_get_command_router_access_request::Target;
        let task = match r.into_inner().target {
            Some(Target::TaskId(t)) => Some(t),
            Some(Target::SandboxId(s)) => self.sandbox(&s)?.task_id,
            None => None,
        }
        .ok_or_else(|| Status::failed_precondition("The sandbox has no task yet"))?;
        Ok(Response::new(api::SandboxGetCommandRouterAccessResponse {
            jwt: super::router::jwt(&self.0, &task),
            url: self.0.url.clone(),
            worker_ipv4_address: "127.0.0.1".into(),
        }))
    }

    async fn sandbox_list(
        &self,
        r: Request<api::SandboxListRequest>,
    ) -> R<api::SandboxListResponse> {
        self.admit("SandboxList", &r)?;
        let m = r.into_inner();
        const PAGE: usize = 100;
        let mut all: Vec<Sandbox> = self
            .0
            .lock()
            .sandboxes
            .values()
            .filter(|s| m.app_id.is_empty() || s.app_id == m.app_id)
            .filter(|s| m.include_finished || s.result.is_none())
            .filter(|s| m.tags.iter().all(|t| s.tags.get(&t.tag_name) == Some(&t.tag_value)))
            .filter(|s| m.before_timestamp == 0.0 || s.created_at < m.before_timestamp)
            .cloned()
            .collect();
        all.sort_by(|a, b| b.created_at.total_cmp(&a.created_at));
        all.truncate(PAGE);
        Ok(Response::new(api::SandboxListResponse {
            sandboxes: all
                .into_iter()
                .map(|s| api::SandboxInfo {
                    task_info: Some(api::TaskInfo {
                        id: s.task_id.clone().unwrap_or_default(),
                        result: s
                            .result
                            .map(|st| api::GenericResult { status: st, ..Default::default() }),
                        sandbox_id: s.id.clone(),
                        ..Default::default()
                    }),
                    created_at: s.created_at,
                    app_id: s.app_id,
                    tags: s
                        .tags
                        .into_iter()
                        .map(|(k, v)| api::SandboxTag { tag_name: k, tag_value: v })
                        .collect(),
                    id: s.id,
                    ..Default::default()
                })
                .collect(),
        }))
    }

    async fn sandbox_tags_get(
        &self,
        r: Request<api::SandboxTagsGetRequest>,
    ) -> R<api::SandboxTagsGetResponse> {
        self.admit("SandboxTagsGet", &r)?;
        let s = self.sandbox(&r.into_inner().sandbox_id)?;
        Ok(Response::new(api::SandboxTagsGetResponse {
            tags: s
                .tags
                .into_iter()
                .map(|(k, v)| api::SandboxTag { tag_name: k, tag_value: v })
                .collect(),
        }))
    }

    async fn sandbox_wait(
        &self,
        r: Request<api::SandboxWaitRequest>,
    ) -> R<api::SandboxWaitResponse> {
        self.admit("SandboxWait", &r)?;
        let m = r.into_inner();
        self.sandbox(&m.sandbox_id)?;
        let id = m.sandbox_id.clone();
        let ended =
            move |s: &State| s.lock().sandboxes.get(&id).is_some_and(|x| x.result.is_some());
        wait_for(&self.0, m.timeout, ended).await;
        let s = self.sandbox(&m.sandbox_id)?;
        Ok(Response::new(api::SandboxWaitResponse {
            result: s.result.map(|st| api::GenericResult {
                status: st,
                exception: s.exception,
                ..Default::default()
            }),
            ..Default::default()
        }))
    }

    async fn sandbox_terminate(
        &self,
        r: Request<api::SandboxTerminateRequest>,
    ) -> R<api::SandboxTerminateResponse> {
        self.admit("SandboxTerminate", &r)?;
        let id = r.into_inner().sandbox_id;
        let (existing, container) = {
            let mut inner = self.0.lock();
            let s = inner
                .sandboxes
                .get_mut(&id)
                .ok_or_else(|| Status::not_found(format!("Sandbox {id} not found")))?;
            let existing =
                s.result.map(|st| api::GenericResult { status: st, ..Default::default() });
            if s.result.is_none() {
                s.result = Some(GenericStatus::Terminated as i32);
            }
            (existing, s.container.take())
        };
        if let Some(c) = container {
            let _ = self.0.engine.remove(&c).await;
        }
        self.0.changed.notify_waiters();
        Ok(Response::new(api::SandboxTerminateResponse { existing_result: existing }))
    }
}
