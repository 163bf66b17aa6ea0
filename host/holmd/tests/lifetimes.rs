//! Lifetimes, the state machine, idempotency, traces and recovery, through
//! the real REST API of a real service, with time on a [`ManualClock`] and a
//! runtime that keeps its machines in memory (its guest is a small HTTP
//! server on loopback, reached as a vendor's is: through an endpoint whose
//! header the guest requires on every request). So each rule is tested exactly and at once, without
//! waiting for a deadline; `tests/lifecycle.rs` and the e2e tests run the
//! same things on Docker.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

use async_trait::async_trait;
use axum::Json;
use axum::response::IntoResponse;
use axum::routing::get;
use holm::image::{ImageRequest, Progress};
use holm::runtime::{
    ENV_SECRET_SHA256, Endpoint, ImageSource, LABEL_BOX, LifetimeLimits, Machine, MachineSpec,
    MachineState, Result as RtResult, Runtime, RuntimeError,
};
use holm::spec::Lifetimes;
use holm_client::Client;
use holm_proto::ErrorCode;
use holm_proto::host::{BoxSpec, BoxState, Can, CreateBox, Environment, ForkBox, Place, Placement};
use holmd::clock::{Clock, ManualClock};
use holmd::service::{Offered, Service};
use holmd::store::{self, StoreConfig};

/// The header the fake runtime's endpoints carry and its guest requires, as
/// E2B's proxy requires its traffic token.
const PROXY_HEADER: &str = "x-vendor-token";
const PROXY_TOKEN: &str = "t0ken-of-the-vendor";

/// A runtime whose machines are entries in a map, all answered by one guest.
#[derive(Debug)]
struct Fake {
    can: Can,
    guest: SocketAddr,
    machines: Mutex<BTreeMap<String, Machine>>,
    secrets: Mutex<BTreeMap<String, String>>,
    calls: Mutex<Vec<String>>,
    /// When set, the next machine made answers this address for its guest,
    /// a port that takes connections and never answers (a machine hung in
    /// its own start), until it is started again.
    silent: Mutex<Option<SocketAddr>>,
}

impl Fake {
    fn new(can: Can, guest: SocketAddr) -> Arc<Self> {
        Arc::new(Self {
            can,
            guest,
            machines: Mutex::default(),
            secrets: Mutex::default(),
            calls: Mutex::default(),
            silent: Mutex::default(),
        })
    }

    /// How the guest is reached: loopback, with the vendor's header.
    fn endpoint(&self) -> Endpoint {
        Endpoint::loopback(self.guest).with_header(PROXY_HEADER, PROXY_TOKEN).unwrap()
    }

    fn call(&self, c: String) {
        self.calls.lock().unwrap().push(c);
    }

    fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }

    fn set(&self, id: &str, state: MachineState) -> RtResult<Machine> {
        let mut machines = self.machines.lock().unwrap();
        let m = machines.get_mut(id).ok_or_else(|| RuntimeError::NotFound(id.into()))?;
        m.state = state;
        Ok(m.clone())
    }
}

#[async_trait]
impl Runtime for Fake {
    fn name(&self) -> &str {
        "fake"
    }
    fn provider(&self) -> &str {
        "fake"
    }
    fn place(&self) -> Place {
        Place::Host
    }
    fn environment(&self) -> Environment {
        Environment::Container
    }
    fn can(&self) -> Can {
        self.can
    }
    fn lifetimes(&self) -> LifetimeLimits {
        LifetimeLimits {
            offered: Lifetimes { default_secs: 3600, max_secs: 7200 },
            hard_max_secs: Some(7200),
        }
    }
    fn image_source(&self) -> ImageSource {
        ImageSource::Vendor
    }
    async fn ping(&self) -> RtResult<()> {
        Ok(())
    }
    async fn prepare_image(
        &self,
        _: &ImageRequest,
        _: &mut (dyn FnMut(Progress) + Send),
    ) -> RtResult<String> {
        Ok("fake:image".into())
    }
    async fn create(&self, spec: &MachineSpec) -> RtResult<Machine> {
        self.call(format!("create {} {}", spec.box_id, spec.image));
        let id = format!("m-{}", spec.box_id);
        let mut labels = spec.labels.clone();
        labels.insert(LABEL_BOX.into(), spec.box_id.clone());
        let endpoint = match self.silent.lock().unwrap().take() {
            Some(silent) => Endpoint::loopback(silent),
            None => self.endpoint(),
        };
        let m = Machine {
            id: id.clone(),
            box_id: Some(spec.box_id.clone()),
            state: MachineState::Running,
            endpoints: [(holm_proto::guest::DEFAULT_GUEST_PORT, endpoint)].into(),
            labels,
        };
        let secret = spec.env.iter().find(|(k, _)| k == ENV_SECRET_SHA256).map(|(_, v)| v.clone());
        self.secrets.lock().unwrap().insert(id.clone(), secret.unwrap_or_default());
        self.machines.lock().unwrap().insert(id, m.clone());
        Ok(m)
    }
    async fn inspect(&self, id: &str) -> RtResult<Machine> {
        self.machines
            .lock()
            .unwrap()
            .get(id)
            .cloned()
            .ok_or_else(|| RuntimeError::NotFound(id.into()))
    }
    async fn remove(&self, id: &str) -> RtResult<()> {
        self.call(format!("remove {id}"));
        self.machines.lock().unwrap().remove(id);
        Ok(())
    }
    async fn list(&self) -> RtResult<Vec<Machine>> {
        Ok(self.machines.lock().unwrap().values().cloned().collect())
    }
    async fn stop(&self, id: &str) -> RtResult<()> {
        self.call(format!("stop {id}"));
        self.set(id, MachineState::Stopped).map(drop)
    }
    async fn start(&self, id: &str) -> RtResult<Machine> {
        self.call(format!("start {id}"));
        self.set(id, MachineState::Running)?;
        // A start is a new machine process, on the guest that answers.
        let mut machines = self.machines.lock().unwrap();
        let m = machines.get_mut(id).ok_or_else(|| RuntimeError::NotFound(id.into()))?;
        m.endpoints.insert(holm_proto::guest::DEFAULT_GUEST_PORT, self.endpoint());
        Ok(m.clone())
    }
    async fn pause(&self, id: &str) -> RtResult<()> {
        self.call(format!("pause {id}"));
        self.set(id, MachineState::Paused).map(drop)
    }
    async fn resume(&self, id: &str) -> RtResult<()> {
        self.call(format!("resume {id}"));
        self.set(id, MachineState::Running).map(drop)
    }
    async fn fork(&self, id: &str, new_box_id: &str) -> RtResult<String> {
        self.call(format!("fork {id}"));
        Ok(format!("fake-fork:{new_box_id}"))
    }
}

/// The guest all fake machines share: ready at once; `files/content` (a
/// stream) and `browser/text` (not one) hang.
async fn fake_guest(hanging: Arc<AtomicUsize>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new()
        .route(
            "/health",
            get(|| async {
                Json(serde_json::json!({
                    "status": "ready", "version": "fake", "proto": 1, "profile": "x11",
                    "uptime_ms": 0, "components": []
                }))
            }),
        )
        .route(
            "/v1/screens",
            get(|| async { Json(serde_json::json!({ "data": [], "next_cursor": null })) }),
        )
        .route(
            "/v1/files/content",
            get(move || {
                let hanging = Arc::clone(&hanging);
                async move {
                    hanging.fetch_add(1, Ordering::SeqCst);
                    std::future::pending::<()>().await;
                }
            }),
        )
        .route("/v1/browser/text", get(std::future::pending::<()>))
        .fallback(|| async { Json(serde_json::json!({})) })
        .layer(axum::middleware::from_fn(
            |req: axum::extract::Request, next: axum::middleware::Next| async move {
                let token = req.headers().get(PROXY_HEADER).and_then(|v| v.to_str().ok());
                if token != Some(PROXY_TOKEN) {
                    let body = Json(serde_json::json!({ "message": "missing traffic token" }));
                    return (axum::http::StatusCode::FORBIDDEN, body).into_response();
                }
                next.run(req).await
            },
        ));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

const ALL: Can = Can {
    pause: true,
    stop: true,
    fork: true,
    browser_profile: false,
    screens: 6,
    wayland: false,
    resources: true,
};
const NONE: Can = Can {
    pause: false,
    stop: false,
    fork: false,
    browser_profile: false,
    screens: 6,
    wayland: false,
    resources: true,
};

struct Harness {
    client: Client,
    url: String,
    service: Arc<Service>,
    fake: Arc<Fake>,
    clock: Arc<ManualClock>,
    dir: Arc<tempfile::TempDir>,
    hanging: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Harness {
    async fn new(can: Can) -> Self {
        let hanging = Arc::new(AtomicUsize::new(0));
        let guest = fake_guest(Arc::clone(&hanging)).await;
        let fake = Fake::new(can, guest);
        let clock = Arc::new(ManualClock::new(UNIX_EPOCH + Duration::from_secs(1_800_000_000)));
        let dir = Arc::new(tempfile::tempdir().unwrap());
        Self::serve(fake, clock, dir, hanging, true).await
    }

    /// A new service over the same store and runtime: a server restart.
    async fn restart(self, with_runtime: bool) -> Self {
        self.task.abort();
        Self::serve(self.fake, self.clock, self.dir, self.hanging, with_runtime).await
    }

    /// Stops the server, loses its box records, and starts another.
    async fn restart_losing_the_store(mut self) -> Self {
        self.task.abort();
        let _ = (&mut self.task).await;
        // A write the stopped server began on a blocking thread may still
        // land in the directory while it is removed: try again then.
        let boxes = self.dir.path().join("boxes");
        for attempt in 0.. {
            match std::fs::remove_dir_all(&boxes) {
                Ok(()) => break,
                Err(e) if attempt < 50 => {
                    eprintln!("removing the store again: {e}");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => panic!("cannot remove the store: {e}"),
            }
        }
        std::fs::create_dir_all(&boxes).unwrap();
        Self::serve(self.fake, self.clock, self.dir, self.hanging, true).await
    }

    async fn serve(
        fake: Arc<Fake>,
        clock: Arc<ManualClock>,
        dir: Arc<tempfile::TempDir>,
        hanging: Arc<AtomicUsize>,
        with_runtime: bool,
    ) -> Self {
        let store = store::open(&StoreConfig::Local { dir: dir.path().to_owned() }).await.unwrap();
        let mut runtimes = BTreeMap::new();
        if with_runtime {
            // The lifetimes are the runtime's own.
            runtimes.insert("fake".to_owned(), Offered::new(Arc::clone(&fake) as Arc<dyn Runtime>));
        }
        // A server key, as a deployed server has: with it a server that
        // lost its records works out its boxes' secrets again.
        let remote_setup = holmd::service::RemoteSetup {
            secret_key: Some(
                holmd::registry::SecretKey::from_secret(&"k".repeat(40), "test").unwrap(),
            ),
            ..holmd::service::RemoteSetup::default()
        };
        let service = Service::from_parts(holmd::service::Parts {
            runtimes,
            default_runtime: "fake".into(),
            store,
            clock: Arc::clone(&clock) as Arc<dyn Clock>,
            server_name: "test".into(),
            remote_setup,
            shared_store: false,
            limits: holmd::service::Limits {
                max_boxes: 8,
                // Small enough for a test to pass with three images.
                timelines_kept_bytes: 1000,
                // The fake guest answers at once; a silent one is given up
                // on quickly.
                first_answer: Duration::from_secs(3),
                ..holmd::service::Limits::default()
            },
        });
        service.recover().await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let app = holmd::api::app(Arc::clone(&service), None);
        let task = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { client: Client::new(&url, None), url, service, fake, clock, dir, hanging, task }
    }

    async fn running(&self, placement: Placement) -> String {
        let request = CreateBox { placement, ..CreateBox::default() };
        let info = self.client.create_box(&request, Some(10)).await.unwrap();
        assert_eq!(info.state, BoxState::Running, "{info:?}");
        info.id
    }

    fn at(&self, secs_from_now: u64) -> String {
        holmd::store::rfc3339(self.clock.now_secs() + secs_from_now)
    }

    async fn raw(&self, method: reqwest::Method, path: &str) -> reqwest::Response {
        reqwest::Client::new().request(method, format!("{}{path}", self.url)).send().await.unwrap()
    }
}

fn code(e: &holm_client::ClientError) -> Option<ErrorCode> {
    e.api().map(|a| a.code)
}

/// A port that takes every connection and never answers.
async fn silent_port() -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    (addr, task)
}

#[tokio::test]
async fn a_new_box_whose_guest_never_answers_is_restarted_once_and_runs() {
    let h = Harness::new(ALL).await;
    // A guest that answers: its machine is never restarted.
    let quick = h.running(Placement::default()).await;
    assert!(!h.fake.calls().iter().any(|c| c.starts_with("stop ")), "{:?}", h.fake.calls());

    let (silent, task) = silent_port().await;
    *h.fake.silent.lock().unwrap() = Some(silent);
    let id = h.running(Placement::default()).await;
    task.abort();
    let machine = format!("m-{id}");
    let calls = h.fake.calls();
    let restarts: Vec<&String> =
        calls.iter().filter(|c| c.ends_with(&machine) && !c.starts_with("create")).collect();
    assert_eq!(restarts, [&format!("stop {machine}"), &format!("start {machine}")], "{calls:?}");
    // It answers on its new endpoint, through holmd.
    let guest = h.client.boxed(&id);
    guest.screens().await.expect("the restarted box's guest answers");
    assert_ne!(quick, id);
}

#[tokio::test]
async fn lifetimes_under_a_minute_or_over_the_maximum_are_refused_with_the_numbers() {
    let h = Harness::new(ALL).await;
    let refuse = |placement: Placement| {
        let client = h.client.clone();
        async move {
            let request = CreateBox { placement, ..CreateBox::default() };
            client.create_box(&request, None).await.unwrap_err().api().cloned().unwrap()
        }
    };
    let e = refuse(Placement { expires_after_secs: Some(59), ..Placement::default() }).await;
    assert_eq!(e.code, ErrorCode::InvalidRequest);
    assert_eq!(e.details.as_ref().unwrap()["issues"][0]["path"], "placement.expires_after_secs");
    let e = refuse(Placement { idle_timeout_secs: Some(30), ..Placement::default() }).await;
    assert_eq!(e.details.as_ref().unwrap()["issues"][0]["path"], "placement.idle_timeout_secs");
    let e = refuse(Placement { expires_after_secs: Some(10_000), ..Placement::default() }).await;
    let problem = e.details.as_ref().unwrap()["issues"][0]["problem"].as_str().unwrap().to_owned();
    assert!(problem.contains("10000") && problem.contains("7200"), "{problem}");
    assert!(h.fake.calls().is_empty(), "nothing was made");
    assert!(h.client.all_boxes().await.unwrap().is_empty());

    // With no lifetime asked for, the runtime's default: one hour.
    let id = h.running(Placement::default()).await;
    assert_eq!(h.client.get_box(&id, None).await.unwrap().expires_at, h.at(3600));
}

#[tokio::test]
async fn at_its_deadline_a_box_is_removed_and_its_record_says_why() {
    let h = Harness::new(ALL).await;
    let id = h.running(Placement { expires_after_secs: Some(120), ..Placement::default() }).await;
    h.clock.advance(Duration::from_secs(119));
    assert_eq!(h.service.expire_due().await, 0);
    assert_eq!(h.client.get_box(&id, None).await.unwrap().state, BoxState::Running);
    h.clock.advance(Duration::from_secs(1));
    assert_eq!(h.service.expire_due().await, 1);
    let info = h.client.get_box(&id, None).await.unwrap();
    assert_eq!(info.state, BoxState::Removed);
    assert!(info.reason.as_deref().unwrap().contains("lifetime of 120 seconds"), "{info:?}");
    assert!(h.fake.calls().contains(&format!("remove m-{id}")));
    // The reason survives a restart.
    let h = h.restart(true).await;
    let info = h.client.get_box(&id, None).await.unwrap();
    assert!(info.reason.as_deref().unwrap().starts_with("expired:"), "{info:?}");
}

#[tokio::test]
async fn commands_move_an_idle_deadline_and_watching_does_not() {
    let h = Harness::new(ALL).await;
    let id = h.running(Placement { idle_timeout_secs: Some(120), ..Placement::default() }).await;
    assert_eq!(h.client.get_box(&id, None).await.unwrap().expires_at, h.at(120));
    h.clock.advance(Duration::from_secs(100));
    // Watching: a screenshot, the cursor, the screens, the info.
    for path in ["screens/0/screenshot", "screens/0/cursor", "screens", "info"] {
        let r = h.raw(reqwest::Method::GET, &format!("/v1/boxes/{id}/{path}")).await;
        assert!(r.status().is_success(), "{path}: {}", r.status());
    }
    assert_eq!(
        h.client.get_box(&id, None).await.unwrap().expires_at,
        h.at(20),
        "watching moved it"
    );
    // A command moves it.
    let r = h.raw(reqwest::Method::POST, &format!("/v1/boxes/{id}/commands/run")).await;
    assert!(r.status().is_success());
    assert_eq!(h.client.get_box(&id, None).await.unwrap().expires_at, h.at(120));
    h.clock.advance(Duration::from_secs(119));
    assert_eq!(h.service.expire_due().await, 0);
    h.clock.advance(Duration::from_secs(1));
    assert_eq!(h.service.expire_due().await, 1);
    let info = h.client.get_box(&id, None).await.unwrap();
    assert!(info.reason.unwrap().contains("idle timeout of 120 seconds"));
}

/// The fake guest speaks protocol generation 1: holmd refuses it a route
/// of generation 2 (the page's history) in the one error shape, naming
/// both, before the guest sees it (which would answer a bare 404), and
/// still forwards its generation-1 routes.
#[tokio::test]
async fn a_route_newer_than_the_boxs_guest_is_refused_before_it_reaches_the_guest() {
    let h = Harness::new(ALL).await;
    let id = h.running(Placement::default()).await;
    let e = h.client.boxed(&id).page_back(None).await.unwrap_err();
    let api = e.api().expect("an API error");
    assert_eq!(api.code, ErrorCode::Unsupported, "{api}");
    assert!(api.message.contains("speaks protocol 1"), "{api}");
    assert!(api.message.contains("/v1/browser/back arrived in protocol 2"), "{api}");
    let r = h.raw(reqwest::Method::GET, &format!("/v1/boxes/{id}/info")).await;
    assert!(r.status().is_success(), "{}", r.status());
}

#[tokio::test]
async fn extend_moves_the_deadline_but_never_past_the_maximum() {
    let h = Harness::new(ALL).await;
    let id = h.running(Placement::default()).await;
    let info = h.client.extend_box(&id, 600).await.unwrap();
    assert_eq!(info.expires_at, h.at(4200));
    let e = h.client.extend_box(&id, 4000).await.unwrap_err();
    let api = e.api().unwrap();
    let problem = api.details.as_ref().unwrap()["issues"][0]["problem"].as_str().unwrap();
    assert!(problem.contains("7200") && problem.contains("at most 3000 more"), "{problem}");
    assert_eq!(
        code(&h.client.extend_box(&id, 30).await.unwrap_err()),
        Some(ErrorCode::InvalidRequest)
    );
    assert_eq!(
        h.client.get_box(&id, None).await.unwrap().expires_at,
        h.at(4200),
        "refusals changed nothing"
    );
    // Up to the maximum exactly.
    assert_eq!(h.client.extend_box(&id, 3000).await.unwrap().expires_at, h.at(7200));
}

#[tokio::test]
async fn a_box_is_removed_at_its_deadline_while_a_request_to_it_runs() {
    let h = Harness::new(ALL).await;
    let id = h.running(Placement { expires_after_secs: Some(60), ..Placement::default() }).await;
    let client = h.client.boxed(&id);
    let request = tokio::spawn(async move { client.read_file("/slow").await });
    holm_testkit::eventually(Duration::from_secs(10), "the request to reach the guest", || {
        let n = h.hanging.load(Ordering::SeqCst);
        async move { (n > 0).then_some(()) }
    })
    .await;
    h.clock.advance(Duration::from_secs(60));
    // Removal does not wait for the request.
    assert_eq!(h.service.expire_due().await, 1);
    assert_eq!(h.client.get_box(&id, None).await.unwrap().state, BoxState::Removed);
    let e = request.await.unwrap().unwrap_err();
    let api = e.api().expect("the error shape");
    assert_eq!(api.code, ErrorCode::NotRunning);
    assert!(api.hint.as_deref().unwrap().contains("expired"), "{api:?}");
}

#[tokio::test]
async fn a_runtime_that_cannot_is_refused_before_anything_changes() {
    let h = Harness::new(NONE).await;
    let id = h.running(Placement::default()).await;
    let before = h.fake.calls();
    for e in [
        h.client.stop_box(&id).await.unwrap_err(),
        h.client.start_box(&id, None).await.unwrap_err(),
        h.client.pause_box(&id).await.unwrap_err(),
        h.client.resume_box(&id).await.unwrap_err(),
        h.client.fork_box(&id, &ForkBox::default(), None, None).await.unwrap_err(),
    ] {
        let api = e.api().unwrap();
        assert_eq!(api.code, ErrorCode::Unsupported, "{api:?}");
        assert!(api.message.contains("the fake runtime cannot"), "{api:?}");
    }
    // The MCP `box` tool: the same refusal as REST, as a tool result.
    let mcp = holm_mcp::HolmMcp::new(h.client.clone());
    for action in ["stop", "start", "pause", "resume", "fork"] {
        let args = serde_json::json!({"box_id": id, "action": action});
        let r = mcp.call("box", args.as_object().cloned()).await.unwrap();
        assert_eq!(r.is_error, Some(true), "{action}: {r:?}");
        let body = r.structured_content.unwrap();
        assert_eq!(body["error"]["code"], "unsupported", "{action}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("the fake runtime cannot"), "{action}: {body}");
    }
    // A Wayland box on a runtime that cannot run one: refused before any
    // machine, naming the field.
    let wayland = CreateBox {
        spec: BoxSpec { display: Some(holm_proto::guest::Profile::Wayland), ..BoxSpec::default() },
        ..CreateBox::default()
    };
    let api = h.client.create_box(&wayland, None).await.unwrap_err().api().cloned().unwrap();
    assert_eq!(api.code, ErrorCode::InvalidRequest, "{api:?}");
    let issue = &api.details.as_ref().unwrap()["issues"][0];
    assert_eq!(issue["path"], "spec.display", "{api:?}");
    assert!(issue["problem"].as_str().unwrap().contains("cannot run Wayland"), "{api:?}");
    assert_eq!(h.fake.calls(), before, "the runtime was asked nothing");
    assert_eq!(h.client.get_box(&id, None).await.unwrap().state, BoxState::Running);
    assert_eq!(h.client.all_boxes().await.unwrap().len(), 1, "no fork was made");
}

#[tokio::test]
async fn the_state_machine_running_paused_stopped_and_forked() {
    let h = Harness::new(ALL).await;
    let id = h.running(Placement::default()).await;
    let m = format!("m-{id}");

    assert_eq!(h.client.pause_box(&id).await.unwrap().state, BoxState::Paused);
    assert_eq!(
        h.client.pause_box(&id).await.unwrap().state,
        BoxState::Paused,
        "pausing twice is fine"
    );
    let e = h.client.boxed(&id).exec(&["true"]).await.unwrap_err();
    assert_eq!(code(&e), Some(ErrorCode::NotRunning), "a paused box takes no commands");
    assert_eq!(code(&h.client.stop_box(&id).await.unwrap_err()), Some(ErrorCode::Conflict));
    assert_eq!(code(&h.client.start_box(&id, None).await.unwrap_err()), Some(ErrorCode::Conflict));
    assert_eq!(h.client.resume_box(&id).await.unwrap().state, BoxState::Running);

    assert_eq!(h.client.stop_box(&id).await.unwrap().state, BoxState::Stopped);
    assert_eq!(code(&h.client.pause_box(&id).await.unwrap_err()), Some(ErrorCode::Conflict));
    let info = h.client.start_box(&id, Some(10)).await.unwrap();
    assert_eq!(info.state, BoxState::Running);

    let fork = h
        .client
        .fork_box(&id, &ForkBox { name: Some("copy".into()), ..ForkBox::default() }, None, Some(10))
        .await
        .unwrap();
    assert_eq!(fork.state, BoxState::Running, "{fork:?}");
    assert_eq!(fork.forked_from.as_deref(), Some(id.as_str()));
    assert_eq!(fork.spec.name.as_deref(), Some("copy"));
    assert_ne!(fork.id, id);
    let calls = h.fake.calls();
    let want = [
        format!("pause {m}"),
        format!("resume {m}"),
        format!("stop {m}"),
        format!("start {m}"),
        format!("fork {m}"),
        format!("create {} fake-fork:{}", fork.id, fork.id),
    ];
    let seen: Vec<&String> =
        calls.iter().filter(|c| !c.starts_with(&format!("create {id}"))).collect();
    assert_eq!(seen, want.iter().collect::<Vec<_>>());

    // Removed is the end: nothing changes it.
    h.client.remove_box(&id).await.unwrap();
    assert_eq!(code(&h.client.start_box(&id, None).await.unwrap_err()), Some(ErrorCode::Conflict));
    assert_eq!(code(&h.client.extend_box(&id, 60).await.unwrap_err()), Some(ErrorCode::Conflict));
}

#[tokio::test]
async fn an_idempotency_key_answers_the_first_box_again_also_after_a_restart() {
    async fn post(url: &str, key: &str, body: serde_json::Value) -> reqwest::Response {
        reqwest::Client::new()
            .post(format!("{url}/v1/boxes"))
            .header("Idempotency-Key", key)
            .json(&body)
            .send()
            .await
            .unwrap()
    }
    let h = Harness::new(ALL).await;
    let a = serde_json::json!({"spec": {"screens": 2}});
    // Same request, other spacing and order of fields: the same body.
    let a_again = serde_json::json!({"placement": {}, "spec": {"screens": 2}});
    let first = post(&h.url, "key-1", a.clone()).await;
    assert_eq!(first.status(), 201);
    assert!(first.headers().get("idempotency-replayed").is_none());
    let first: serde_json::Value = first.json().await.unwrap();
    assert!(first.get("replayed").is_none());

    let again = post(&h.url, "key-1", a_again).await;
    assert_eq!(again.status(), 201);
    assert_eq!(again.headers()["idempotency-replayed"], "true");
    let again: serde_json::Value = again.json().await.unwrap();
    assert_eq!(again["id"], first["id"]);
    assert_eq!(again["replayed"], true);

    let other = post(&h.url, "key-1", serde_json::json!({"spec": {"screens": 3}})).await;
    assert_eq!(other.status(), 422);
    let other: serde_json::Value = other.json().await.unwrap();
    assert_eq!(other["error"]["code"], "idempotency_key_reused");
    assert_eq!(other["error"]["details"]["box_id"], first["id"]);
    assert_eq!(h.client.all_boxes().await.unwrap().len(), 1, "one box for one key");

    let h = h.restart(true).await;
    let after: serde_json::Value = post(&h.url, "key-1", a.clone()).await.json().await.unwrap();
    assert_eq!(after["id"], first["id"], "the key survives a restart");
    assert_eq!(after["replayed"], true);

    // Kept for 24 hours; then the key is new work.
    h.clock.advance(Duration::from_secs(24 * 3600));
    let later: serde_json::Value = post(&h.url, "key-1", a).await.json().await.unwrap();
    assert_ne!(later["id"], first["id"]);
    assert!(later.get("replayed").is_none());
}

#[tokio::test]
async fn traces_record_each_command_without_values_and_continue_across_restarts() {
    let h = Harness::new(ALL).await;
    let id = h.running(Placement::default()).await;
    let r = h
        .raw(reqwest::Method::POST, &format!("/v1/boxes/{id}/commands/run?token=hunter2secret"))
        .await;
    assert!(r.status().is_success());
    let r = h.raw(reqwest::Method::POST, &format!("/v1/boxes/{id}/files/mkdir")).await;
    assert!(r.status().is_success());
    // Reading the box or its traces leaves none; an unknown box none either.
    h.client.get_box(&id, None).await.unwrap();
    let _ = h.raw(reqwest::Method::GET, "/v1/boxes/box_nope/info").await;

    let traces = h.client.all_traces(&id).await.unwrap();
    let what: Vec<(String, String)> =
        traces.iter().map(|t| (t.method.clone(), t.path.clone())).collect();
    assert_eq!(
        what,
        [
            ("POST".to_owned(), "/v1/boxes".to_owned()),
            ("POST".to_owned(), format!("/v1/boxes/{id}/commands/run")),
            ("POST".to_owned(), format!("/v1/boxes/{id}/files/mkdir")),
        ]
    );
    assert_eq!(traces[0].status, 201);
    assert_eq!(traces[1].query, ["token"]);
    assert!(traces.iter().all(|t| t.request_id.starts_with("req_")));
    let all = serde_json::to_string(&traces).unwrap();
    assert!(!all.contains("hunter2secret"), "a query value reached a trace");

    // A refusal is traced with its code.
    h.client.pause_box(&id).await.unwrap();
    let _ = h.raw(reqwest::Method::POST, &format!("/v1/boxes/{id}/commands/run")).await;

    // A clean stop writes the traces still queued; time passes.
    h.service.close().await;
    h.clock.advance(Duration::from_secs(5));
    let h = h.restart(true).await;
    h.client.resume_box(&id).await.unwrap();
    let traces = h.client.all_traces(&id).await.unwrap();
    assert_eq!(traces.len(), 6, "{traces:#?}");
    assert_eq!(traces[4].code.as_deref(), Some("not_running"));
    assert_eq!(traces[4].status, 409);
    assert_eq!(traces[5].path, format!("/v1/boxes/{id}/resume"));
    assert!(traces.windows(2).all(|w| w[0].id < w[1].id), "in order across the restart");
    // Paged.
    let page = h.client.traces(&id, None, Some(4)).await.unwrap();
    assert_eq!(page.data.len(), 4);
    let rest = h.client.traces(&id, page.next_cursor.as_deref(), Some(4)).await.unwrap();
    assert_eq!(rest.data, traces[4..]);
    assert_eq!(rest.next_cursor, None);
}

#[tokio::test]
async fn a_box_whose_runtime_is_missing_is_unreachable_and_its_record_stays() {
    let h = Harness::new(ALL).await;
    let id = h.running(Placement::default()).await;
    let h = h.restart(false).await;
    let info = h.client.get_box(&id, None).await.unwrap();
    assert_eq!(info.state, BoxState::Unreachable);
    assert!(info.reason.as_deref().unwrap().contains("\"fake\" is not offered"), "{info:?}");
    let h = h.restart(true).await;
    assert_eq!(
        h.client.get_box(&id, None).await.unwrap().state,
        BoxState::Running,
        "back with its runtime"
    );
}

#[tokio::test]
async fn a_box_the_store_lost_is_found_by_its_labels() {
    let h = Harness::new(ALL).await;
    let id = h
        .running(Placement {
            expires_after_secs: Some(600),
            idle_timeout_secs: Some(300),
            ..Placement::default()
        })
        .await;
    h.client.boxed(&id).exec(&["true"]).await.ok();
    let expires = h.client.get_box(&id, None).await.unwrap().expires_at;
    // A machine another server labelled, on the same runtime.
    let mut other = h.fake.inspect(&format!("m-{id}")).await.unwrap();
    other.id = "m-box_other".into();
    other.box_id = Some("box_other".into());
    other.labels.insert(holm::runtime::LABEL_SERVER.into(), "another-server".into());
    other.labels.insert(LABEL_BOX.into(), "box_other".into());
    h.fake.machines.lock().unwrap().insert(other.id.clone(), other);
    let h = h.restart_losing_the_store().await;
    let info = h.client.get_box(&id, None).await.expect("found by its labels");
    assert_eq!(info.state, BoxState::Running);
    assert_eq!(info.idle_timeout_secs, Some(300));
    assert!(info.expires_at <= expires, "{} > {expires}", info.expires_at);
    // It is driven with its own secret, worked out again from the server key;
    // the machine holds only the secret's digest.
    let digest = h.fake.secrets.lock().unwrap().get(&format!("m-{id}")).cloned().unwrap();
    assert_eq!(digest.len(), 64, "the machine was given a digest, not the secret");
    let r = h.raw(reqwest::Method::POST, &format!("/v1/boxes/{id}/commands/run")).await;
    assert!(r.status().is_success());
    // The machine another server labelled is left alone.
    assert_eq!(h.client.all_boxes().await.unwrap().len(), 1);
    assert!(h.fake.inspect("m-box_other").await.is_ok());
}

#[tokio::test]
async fn numbers_near_the_integer_limit_are_refused_and_no_record_stops_expiry() {
    let h = Harness::new(ALL).await;
    let huge = u64::MAX;
    // Asked for: refused with both numbers, nothing made.
    for placement in [
        Placement { idle_timeout_secs: Some(huge), ..Placement::default() },
        Placement { expires_after_secs: Some(huge), ..Placement::default() },
    ] {
        let request = CreateBox { placement, ..CreateBox::default() };
        let e = h.client.create_box(&request, None).await.unwrap_err();
        let api = e.api().cloned().unwrap();
        assert_eq!(api.code, ErrorCode::InvalidRequest);
        let problem = api.details.unwrap()["issues"][0]["problem"].as_str().unwrap().to_owned();
        assert!(problem.contains(&huge.to_string()) && problem.contains("7200"), "{problem}");
    }
    assert!(h.fake.calls().is_empty(), "nothing was made");
    let id = h.running(Placement::default()).await;
    let before = h.client.get_box(&id, None).await.unwrap().expires_at;
    let e = h.client.extend_box(&id, huge).await.unwrap_err();
    let problem = e.api().unwrap().details.as_ref().unwrap()["issues"][0]["problem"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(problem.contains(&huge.to_string()) && problem.contains("7200"), "{problem}");
    assert_eq!(h.client.get_box(&id, None).await.unwrap().expires_at, before);

    // A record no check made (an older server's, a hand in the store) with
    // numbers at the limit: the expiry of every other box goes on.
    let short = h.running(Placement { expires_after_secs: Some(60), ..Placement::default() }).await;
    let path = h.dir.path().join(format!("boxes/{id}.json"));
    let mut record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    record["expires_at"] = huge.into();
    record["idle_timeout_secs"] = huge.into();
    record["last_activity"] = huge.into();
    std::fs::write(&path, serde_json::to_vec(&record).unwrap()).unwrap();
    let h = h.restart(true).await;
    h.clock.advance(Duration::from_secs(60));
    assert_eq!(h.service.expire_due().await, 1);
    assert_eq!(h.client.get_box(&short, None).await.unwrap().state, BoxState::Removed);
    assert_eq!(h.client.get_box(&id, None).await.unwrap().state, BoxState::Running);
    // Its deadline is shown at the last time RFC 3339 can write, not wrapped.
    let shown = h.client.get_box(&id, None).await.unwrap();
    assert_eq!(shown.expires_at, "9999-12-31T23:59:59Z");
}

#[tokio::test]
async fn a_forwarded_request_that_is_not_a_stream_ends_at_the_forward_timeout() {
    let h = Harness::new(ALL).await;
    let id = h.running(Placement::default()).await;
    let options = holmd::api::AppOptions {
        forward_timeout: Duration::from_secs(1),
        ..holmd::api::AppOptions::loopback(None)
    };
    let app = holmd::api::app_with(Arc::clone(&h.service), options, axum::Router::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let client = Client::new(&url, None);
    let e = tokio::time::timeout(Duration::from_secs(30), client.boxed(&id).page_text(None))
        .await
        .expect("the forward timeout ended the request")
        .unwrap_err();
    let api = e.api().expect("the error shape");
    assert_eq!(api.code, ErrorCode::Timeout, "{api:?}");
    assert!(api.message.contains("within 1 seconds"), "{api:?}");
    assert_eq!(h.client.get_box(&id, None).await.unwrap().state, BoxState::Running);
}

#[tokio::test]
async fn a_server_makes_at_most_its_limit_of_boxes_and_builds() {
    let h = Harness::new(ALL).await;
    // The harness's limit is 8 live boxes.
    let mut ids = Vec::new();
    for _ in 0..8 {
        ids.push(h.running(Placement::default()).await);
    }
    let e = h.client.create_box(&CreateBox::default(), None).await.unwrap_err();
    let api = e.api().cloned().unwrap();
    assert_eq!(api.code, ErrorCode::LimitReached, "{api:?}");
    assert_eq!(api.details.as_ref().unwrap()["limit"], 8);
    assert!(api.hint.as_deref().unwrap().contains("HOLM_MAX_BOXES"), "{api:?}");
    assert_eq!(h.client.all_boxes().await.unwrap().len(), 8, "nothing was made");
    // A removed box frees its place.
    h.client.remove_box(&ids[0]).await.unwrap();
    h.running(Placement::default()).await;

    // Builds: two at once by default; a third asked for is refused.
    let (_one, _two) = (h.service.build_permit().unwrap(), h.service.build_permit().unwrap());
    let r = reqwest::Client::new()
        .post(format!("{}/v1/images/build", h.url))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "limit_reached", "{body}");
    assert!(body["error"]["hint"].as_str().unwrap().contains("HOLM_MAX_BUILDS"), "{body}");
}

#[tokio::test]
async fn the_records_of_removed_boxes_are_pruned_after_the_retention() {
    let h = Harness::new(ALL).await;
    let gone = h.running(Placement::default()).await;
    let kept = h.running(Placement::default()).await;
    h.client.remove_box(&gone).await.unwrap();
    h.clock.advance(Duration::from_secs(7 * 86_400 - 1));
    assert_eq!(h.service.prune_records().await, 0, "kept for the retention period");
    assert_eq!(h.client.get_box(&gone, None).await.unwrap().state, BoxState::Removed);
    h.clock.advance(Duration::from_secs(1));
    assert_eq!(h.service.prune_records().await, 1);
    let e = h.client.get_box(&gone, None).await.unwrap_err();
    assert_eq!(code(&e), Some(ErrorCode::NotFound));
    assert!(!h.dir.path().join(format!("boxes/{gone}.json")).exists(), "deleted from the store");
    // A live box is never pruned, however old.
    assert_eq!(h.client.get_box(&kept, None).await.unwrap().state, BoxState::Running);
}

/// A box asking for more memory than a box may have is refused in the one
/// error shape, naming the field and the bound, and nothing is made.
#[tokio::test]
async fn memory_above_the_bound_is_refused() {
    let h = Harness::new(ALL).await;
    let placement = Placement { memory: Some("128g".into()), ..Placement::default() };
    let request = CreateBox { placement, ..CreateBox::default() };
    let e = h.client.create_box(&request, Some(10)).await.unwrap_err();
    let api = e.api().cloned().unwrap();
    assert_eq!(api.code, ErrorCode::InvalidRequest, "{api:?}");
    assert!(api.message.contains("placement.memory"), "{api:?}");
    assert!(api.message.contains("64g"), "{api:?}");
    assert!(h.client.all_boxes().await.unwrap().is_empty(), "nothing was made");
}

/// The screenshots of removed boxes' timelines are bound in total
/// (`HOLM_TIMELINES_KEPT`, 1000 bytes here): past it the boxes that ended
/// longest ago lose their records, timelines included; live boxes never.
#[tokio::test]
async fn the_timelines_of_removed_boxes_are_bound_in_total() {
    let h = Harness::new(ALL).await;
    let store = h.service.store();
    let mut gone = Vec::new();
    for _ in 0..3 {
        let id = h.running(Placement::default()).await;
        store.put_shot(&id, "t1", &[7u8; 400]).await.unwrap();
        h.client.remove_box(&id).await.unwrap();
        h.clock.advance(Duration::from_secs(60));
        gone.push(id);
    }
    let live = h.running(Placement::default()).await;
    store.put_shot(&live, "t1", &[7u8; 4000]).await.unwrap();
    // 1200 bytes in removed boxes' timelines: the oldest box goes.
    assert_eq!(h.service.prune_timelines().await, 1);
    let e = h.client.get_box(&gone[0], None).await.unwrap_err();
    assert_eq!(code(&e), Some(ErrorCode::NotFound));
    assert!(store.shots(&gone[0]).await.unwrap().is_empty(), "its timeline is gone");
    for id in &gone[1..] {
        assert_eq!(h.client.get_box(id, None).await.unwrap().state, BoxState::Removed);
        assert_eq!(store.shots(id).await.unwrap().len(), 1, "{id} keeps its timeline");
    }
    // Within the bound now: nothing more goes, and the live box is kept.
    assert_eq!(h.service.prune_timelines().await, 0);
    assert_eq!(h.client.get_box(&live, None).await.unwrap().state, BoxState::Running);
    assert_eq!(store.shots(&live).await.unwrap().len(), 1);
}

#[tokio::test]
async fn the_guest_is_reached_at_the_endpoint_its_runtime_answered() {
    let h = Harness::new(ALL).await;
    // Running means the server asked the guest's health and screens with
    // the endpoint's header.
    let id = h.running(Placement::default()).await;
    let info = h.raw(reqwest::Method::GET, &format!("/v1/boxes/{id}/info")).await;
    assert!(info.status().is_success(), "forwarded with the endpoint's header: {info:?}");
    // The header is what lets a request through: the guest refuses one
    // without it.
    let bare = reqwest::get(format!("http://{}/v1/info", h.fake.guest)).await.unwrap();
    assert_eq!(bare.status(), reqwest::StatusCode::FORBIDDEN);
    // The endpoint, header and all, is kept in the record, and no response
    // shows the header's value.
    let record = h.service.get(&id).unwrap().record();
    assert_eq!(record.guest, Some(h.fake.endpoint()));
    let shown = h.raw(reqwest::Method::GET, &format!("/v1/boxes/{id}")).await.text().await.unwrap();
    assert!(!shown.contains(PROXY_TOKEN), "{shown}");
    // A server that starts again reaches it the same way.
    let h = h.restart(true).await;
    let info = h.raw(reqwest::Method::GET, &format!("/v1/boxes/{id}/info")).await;
    assert!(info.status().is_success(), "{info:?}");
}

#[tokio::test]
async fn a_runtimes_own_lifetime_limit_is_the_most_a_server_may_offer() {
    let h = Harness::new(ALL).await;
    let runtime = || Offered::new(Arc::clone(&h.fake) as Arc<dyn Runtime>);
    assert_eq!(runtime().lifetimes, Lifetimes { default_secs: 3600, max_secs: 7200 });
    let (field, problem) = runtime().with_lifetimes(None, Some(86_400)).unwrap_err();
    assert_eq!(field, "max_lifetime");
    assert!(problem.contains("86400") && problem.contains("at most 7200"), "{problem}");
    let (field, _) = runtime().with_lifetimes(Some(9000), None).unwrap_err();
    assert_eq!(field, "lifetime", "a default above the limit would raise the maximum");
    let lower = runtime().with_lifetimes(Some(600), Some(1800)).unwrap();
    assert_eq!(lower.lifetimes, Lifetimes { default_secs: 600, max_secs: 1800 });
}

#[tokio::test]
async fn a_vendor_that_builds_its_own_images_is_asked_for_no_base_image() {
    let h = Harness::new(ALL).await;
    let r = reqwest::Client::new()
        .post(format!("{}/v1/images/base", h.url))
        .json(&serde_json::json!({ "runtime": "fake" }))
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unsupported", "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("vendor builds its images"));
    assert!(h.fake.calls().is_empty());
}
