//! The boxes a server holds, and what can happen to them. No HTTP here: the
//! REST routes (and later MCP) are frontends over [`Service`].
//!
//! A box moves through: creating → starting → running ⇄ paused; running →
//! stopped → (start) starting → running; any → removed. `failed` ends a box
//! that could not be made; `unreachable` marks one the server cannot reach
//! through its runtime (its record stays). Each change that the runtime
//! makes is checked against the runtime's `can` first, so a request the
//! runtime cannot do changes nothing; and changes to one box are serialized.
//!
//! Every box has a deadline (its lifetime, and with an idle timeout, the
//! last command plus it), read through a [`Clock`]. At the deadline the box
//! is removed, even while requests to it run, and its record says why.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, UNIX_EPOCH};

use holm::launch::{self, Extra, Launched};
use holm::runtime::{
    LABEL_CREATED, LABEL_EXPIRES, LABEL_FORKED_FROM, LABEL_IDLE, LABEL_RUNTIME, LABEL_SERVER,
    LABEL_SPEC, Machine, MachineState, Runtime, RuntimeError,
};
use holm::spec::{self, Lifetimes};
use holm_client::BoxClient;
use holm_proto::guest::Page;
use holm_proto::host::{
    AddRuntime, BoxInfo, BoxSpec, BoxState, BridgeAccess, Can, ChangeRuntime, CreateBox, ForkBox,
    ListBoxes, Place, Placement, ReplaceRuntime, RuntimeInfo, RuntimeState, Trace,
};
use holm_proto::{ApiError, ErrorCode, Issue};
use tokio::sync::watch;

use crate::clock::Clock;
use crate::registry::{self, EnvSandbox, SecretKey};
use crate::store::{
    BoxRecord, IDEMPOTENCY_RETENTION_SECS, IdempotencyRecord, RuntimeRecord, Store, StoreError,
    rfc3339, sha256_hex,
};
use crate::traces::Tracer;

/// The server name of a server that sets none; boxes without a server label
/// (made before servers had names) belong to it.
pub const DEFAULT_SERVER_NAME: &str = "holmd";

/// How long a new desktop may take to answer.
const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// One box held by the server.
#[derive(Debug)]
pub struct Entry {
    record: Mutex<BoxRecord>,
    changed: watch::Sender<BoxState>,
    /// Serializes the changes the runtime makes to this box.
    op: tokio::sync::Mutex<()>,
    /// Serializes writes of this record, each of the newest copy.
    write: tokio::sync::Mutex<()>,
}

impl Entry {
    fn new(record: BoxRecord) -> Arc<Self> {
        let (changed, _) = watch::channel(record.state);
        Arc::new(Self {
            record: Mutex::new(record),
            changed,
            op: tokio::sync::Mutex::new(()),
            write: tokio::sync::Mutex::new(()),
        })
    }

    /// A copy of the record.
    pub fn record(&self) -> BoxRecord {
        self.record.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The box as the API shows it.
    pub fn info(&self) -> BoxInfo {
        self.record.lock().unwrap_or_else(|e| e.into_inner()).info()
    }

    /// The box's id.
    pub fn id(&self) -> String {
        self.record.lock().unwrap_or_else(|e| e.into_inner()).id.clone()
    }

    /// Watches the box's state.
    pub fn subscribe(&self) -> watch::Receiver<BoxState> {
        self.changed.subscribe()
    }

    fn update(&self, f: impl FnOnce(&mut BoxRecord)) -> BoxRecord {
        let mut r = self.record.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut r);
        let copy = r.clone();
        drop(r);
        self.changed.send_replace(copy.state);
        copy
    }

    /// Applies `f` only while the box is in one of `from`; answers whether it
    /// did. A box removed meanwhile is never brought back.
    fn transition(&self, from: &[BoxState], f: impl FnOnce(&mut BoxRecord)) -> bool {
        let mut applied = false;
        self.update(|r| {
            if from.contains(&r.state) {
                f(r);
                applied = true;
            }
        });
        applied
    }
}

/// A runtime the server offers, with its lifetimes.
#[derive(Debug, Clone)]
pub struct Offered {
    /// The runtime.
    pub runtime: Arc<dyn Runtime>,
    /// Its lifetimes.
    pub lifetimes: Lifetimes,
    /// The memory of a box whose placement gives none, in bytes.
    pub memory_bytes: Option<u64>,
    /// The CPUs of a box whose placement gives none, in billionths.
    pub nano_cpus: Option<u64>,
}

impl Offered {
    /// `runtime` with `lifetimes` and no default memory or CPUs.
    pub fn new(runtime: Arc<dyn Runtime>, lifetimes: Lifetimes) -> Self {
        Self { runtime, lifetimes, memory_bytes: None, nano_cpus: None }
    }

    /// Checks a spec and placement on this runtime, with its defaults.
    fn resolve(&self, spec: &BoxSpec, placement: &Placement) -> Result<spec::Resolved, Vec<Issue>> {
        let mut r = spec::resolve(spec, placement, &self.runtime.can(), self.lifetimes)?;
        if self.runtime.can().resources {
            r.memory_bytes = r.memory_bytes.or(self.memory_bytes);
            r.nano_cpus = r.nano_cpus.or(self.nano_cpus);
        }
        Ok(r)
    }
}

/// Lifetimes with a default and a maximum set: a default above the old
/// maximum raises it, a maximum below the old default lowers it.
pub fn lifetimes_with(base: Lifetimes, default: Option<u64>, max: Option<u64>) -> Lifetimes {
    let max_secs = max.unwrap_or_else(|| base.max_secs.max(default.unwrap_or(0)));
    let default_secs = default.unwrap_or_else(|| base.default_secs.min(max_secs));
    Lifetimes { default_secs, max_secs }
}

/// A remote runtime the server holds.
#[derive(Debug, Clone)]
struct Remote {
    record: RuntimeRecord,
    /// From `HOLM_SERVER_SANDBOXES`: not stored, not changed through the API.
    from_env: bool,
    /// Why its key cannot be used, when it cannot.
    key_problem: Option<String>,
    lifetimes: Lifetimes,
}

/// What the service needs for remote runtimes besides the store.
#[derive(Debug, Default, Clone)]
pub struct RemoteSetup {
    /// The key that seals vendor keys; without it no key is stored.
    pub secret_key: Option<SecretKey>,
    /// Runtimes from `HOLM_SERVER_SANDBOXES`.
    pub env: Vec<EnvSandbox>,
    /// Lifetimes the runtimes file sets, by runtime name.
    pub file_lifetimes: BTreeMap<String, (Option<u64>, Option<u64>)>,
}

/// What happens when a desktop does not answer in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnTimeout {
    /// A new box: remove its machine, and the box has failed.
    Fail,
    /// A box that ran before: keep it, marked unreachable.
    Unreachable,
}

/// What a start found, for the log.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Recovered {
    /// Records read.
    pub records: usize,
    /// Boxes found running, paused or stopped through their runtime.
    pub taken_back: usize,
    /// Boxes whose making is carried on.
    pub resumed: usize,
    /// Labelled boxes the store did not have, now recorded.
    pub adopted: usize,
    /// Machines of removed or failed boxes, removed.
    pub orphans_removed: usize,
}

/// The server's boxes and runtimes.
#[derive(Debug)]
pub struct Service {
    runtimes: BTreeMap<String, Offered>,
    default_runtime: String,
    remotes: RwLock<BTreeMap<String, Remote>>,
    remote_setup: RemoteSetup,
    /// Serializes changes to remote runtimes.
    registry: tokio::sync::Mutex<()>,
    server_name: String,
    boxes: RwLock<BTreeMap<String, Arc<Entry>>>,
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    tracer: Tracer,
    /// Held while an idempotency key is looked up and its box recorded.
    idempotency: tokio::sync::Mutex<()>,
    /// Boxes whose last command moved but is not yet written.
    dirty: Mutex<BTreeSet<String>>,
    /// Expired boxes whose removal failed, so the warning is said once.
    expiry_failed: Mutex<BTreeSet<String>>,
}

/// How long `wait_for` may wait at most.
pub const MAX_WAIT_SECS: u64 = 900;

fn store_error(e: &StoreError) -> ApiError {
    tracing::error!(error = %e, "the store failed");
    ApiError::new(ErrorCode::Unavailable, "the server cannot write its records now")
        .with_hint("retry with the same Idempotency-Key; the server's log says what failed")
}

fn state_name(s: BoxState) -> String {
    serde_json::to_value(s).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// The refusal of a change the box's state does not allow.
fn conflict(id: &str, state: BoxState, what: &str, hint: &str) -> ApiError {
    ApiError::new(ErrorCode::Conflict, format!("box {id} is {}; {what}", state_name(state)))
        .with_hint(hint.to_owned())
        .with_details(serde_json::json!({ "box_id": id, "state": state }))
}

impl Service {
    /// A service over `runtimes`, keeping records in `store`, reading time
    /// from `clock`, and labelling its boxes with `server_name`.
    pub fn new(
        runtimes: BTreeMap<String, Offered>,
        default_runtime: String,
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        server_name: String,
    ) -> Arc<Self> {
        Self::with_remotes(
            runtimes,
            default_runtime,
            store,
            clock,
            server_name,
            RemoteSetup::default(),
        )
    }

    /// [`Service::new`], with remote runtimes set up by `remote_setup`;
    /// [`Service::load_remotes`] reads the stored ones.
    pub fn with_remotes(
        runtimes: BTreeMap<String, Offered>,
        default_runtime: String,
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        server_name: String,
        remote_setup: RemoteSetup,
    ) -> Arc<Self> {
        Arc::new(Self {
            runtimes,
            default_runtime,
            remotes: RwLock::new(BTreeMap::new()),
            remote_setup,
            registry: tokio::sync::Mutex::new(()),
            server_name,
            boxes: RwLock::new(BTreeMap::new()),
            store,
            clock,
            tracer: Tracer::default(),
            idempotency: tokio::sync::Mutex::new(()),
            dirty: Mutex::new(BTreeSet::new()),
            expiry_failed: Mutex::new(BTreeSet::new()),
        })
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The names of the runtimes offered, host and remote.
    pub fn runtime_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.runtimes.keys().cloned().collect();
        names.extend(self.remotes_read().keys().cloned());
        names.sort();
        names
    }

    fn remotes_read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Remote>> {
        self.remotes.read().unwrap_or_else(|e| e.into_inner())
    }

    fn remotes_write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Remote>> {
        self.remotes.write().unwrap_or_else(|e| e.into_inner())
    }

    fn unknown_runtime(&self, name: &str) -> ApiError {
        let known = self.runtime_names();
        ApiError::new(ErrorCode::UnknownRuntime, format!("there is no runtime named {name:?}"))
            .with_hint(format!("use one of: {}", known.join(", ")))
            .with_details(serde_json::json!({ "runtime": name, "known": known }))
    }

    /// A runtime by name.
    pub fn runtime(&self, name: &str) -> Result<&Offered, ApiError> {
        self.runtimes.get(name).ok_or_else(|| self.unknown_runtime(name))
    }

    /// The default runtime's name.
    pub fn default_runtime(&self) -> &str {
        &self.default_runtime
    }

    /// Describes a runtime, asking its engine whether it answers.
    pub async fn runtime_info(&self, name: &str) -> Result<RuntimeInfo, ApiError> {
        if !self.runtimes.contains_key(name)
            && let Some(remote) = self.remotes_read().get(name)
        {
            return Ok(self.remote_info(remote));
        }
        let offered = self.runtime(name)?;
        let rt = &offered.runtime;
        let (state, reason) = match rt.ping().await {
            Ok(()) => (RuntimeState::Available, None),
            Err(e) => (RuntimeState::Unavailable, Some(e.to_string())),
        };
        Ok(RuntimeInfo {
            name: name.to_owned(),
            provider: rt.provider().to_owned(),
            place: rt.place(),
            environment: rt.environment(),
            state,
            reason,
            default: name == self.default_runtime,
            can: rt.can(),
            lifetime_secs: offered.lifetimes.default_secs,
            max_lifetime_secs: offered.lifetimes.max_secs,
            secrets: Vec::new(),
            fields: serde_json::Map::new(),
            key_version: None,
        })
    }

    /// Every runtime, by name.
    pub async fn runtime_infos(&self) -> Vec<RuntimeInfo> {
        let mut out = Vec::new();
        for name in self.runtimes.keys() {
            if let Ok(info) = self.runtime_info(name).await {
                out.push(info);
            }
        }
        let remotes: Vec<RuntimeInfo> =
            self.remotes_read().values().map(|r| self.remote_info(r)).collect();
        out.extend(remotes);
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    // ---- Making boxes ------------------------------------------------------

    fn resolve(
        &self,
        spec: &BoxSpec,
        placement: &Placement,
    ) -> Result<(Offered, String, spec::Resolved), ApiError> {
        let name = placement.runtime.clone().unwrap_or_else(|| self.default_runtime.clone());
        if !self.runtimes.contains_key(&name)
            && let Some(remote) = self.remotes_read().get(&name)
        {
            return Err(self.remote_refusal(remote));
        }
        let offered = self.runtime(&name)?.clone();
        let resolved = offered.resolve(spec, placement).map_err(ApiError::invalid_fields)?;
        holm::image::ImageRequest::new(
            resolved.apps.iter().cloned(),
            resolved.packages.iter().cloned(),
        )
        .map_err(|e| {
            let path = format!("spec.{}", e.field().unwrap_or("apps"));
            ApiError::invalid_fields(vec![Issue { path, problem: e.to_string() }])
        })?;
        Ok((offered, name, resolved))
    }

    /// Checks a request and starts making the box. The box is recorded (and
    /// the record written) before this returns, in `creating`;
    /// [`Service::wait`] waits for it to run. With an idempotency key, a
    /// repeated request answers the first box again (`true`: replayed).
    pub async fn create(
        self: &Arc<Self>,
        request: CreateBox,
        idempotency_key: Option<&str>,
    ) -> Result<(Arc<Entry>, bool), ApiError> {
        let (offered, runtime, resolved) = self.resolve(&request.spec, &request.placement)?;
        let fingerprint = fingerprint("POST /v1/boxes", &request);
        self.idempotent(idempotency_key, fingerprint, |id| {
            self.insert_new(id, runtime, request.spec, request.placement, offered, resolved, None)
        })
        .await
    }

    /// Runs `make` with a new box id, or with an idempotency key, answers
    /// what the key made before. The key is written before the box, so a
    /// crash between the two is finished by the retry, with the same id.
    async fn idempotent<Fut>(
        &self,
        key: Option<&str>,
        fingerprint: String,
        make: impl FnOnce(String) -> Fut,
    ) -> Result<(Arc<Entry>, bool), ApiError>
    where
        Fut: Future<Output = Result<Arc<Entry>, ApiError>>,
    {
        let Some(key) = key else {
            return Ok((make(holm::ids::new_box_id()).await?, false));
        };
        if key.is_empty() || key.len() > 255 || !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ApiError::invalid_fields(vec![Issue {
                path: "Idempotency-Key".into(),
                problem: "must be 1 to 255 visible ASCII characters".into(),
            }]));
        }
        let key_hash = sha256_hex(key.as_bytes());
        let _one_at_a_time = self.idempotency.lock().await;
        let now = self.clock.now_secs();
        let known = self.store.get_idempotency(&key_hash).await.map_err(|e| store_error(&e))?;
        match known {
            Some(k) if k.created_at + IDEMPOTENCY_RETENTION_SECS > now => {
                if k.fingerprint != fingerprint {
                    return Err(ApiError::new(
                        ErrorCode::IdempotencyKeyReused,
                        format!(
                            "this Idempotency-Key was used at {} with another body",
                            rfc3339(k.created_at)
                        ),
                    )
                    .with_hint("send the same body again, or use a new key for new work")
                    .with_details(serde_json::json!({
                        "first_used_at": rfc3339(k.created_at),
                        "box_id": k.box_id,
                    })));
                }
                match self.get(&k.box_id) {
                    Ok(entry) => Ok((entry, true)),
                    // The server stopped after it kept the key and before it
                    // recorded the box: make it now, with the same id.
                    Err(_) => Ok((make(k.box_id).await?, true)),
                }
            }
            _ => {
                let id = holm::ids::new_box_id();
                let record = IdempotencyRecord {
                    key_hash,
                    fingerprint,
                    box_id: id.clone(),
                    created_at: now,
                };
                self.store.put_idempotency(&record).await.map_err(|e| store_error(&e))?;
                Ok((make(id).await?, false))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn insert_new(
        self: &Arc<Self>,
        id: String,
        runtime: String,
        spec: BoxSpec,
        placement: Placement,
        offered: Offered,
        resolved: spec::Resolved,
        forked_from: Option<String>,
    ) -> Result<Arc<Entry>, ApiError> {
        let created = self.clock.now_secs();
        let record = BoxRecord {
            id,
            runtime,
            machine_id: None,
            guest_url: None,
            secret: holm::ids::new_secret(),
            spec,
            placement,
            state: BoxState::Creating,
            reason: None,
            image: None,
            screens: Vec::new(),
            created_at: created,
            expires_at: created + resolved.lifetime_secs,
            idle_timeout_secs: resolved.idle_timeout_secs,
            last_activity: created,
            forked_from,
            bridge_url: None,
            bridge_secret: Some(holm::ids::new_secret()),
        };
        let entry = Entry::new(record.clone());
        {
            // Checked and taken under one lock, so two requests cannot both
            // get a profile.
            let mut boxes = self.boxes.write().unwrap_or_else(|e| e.into_inner());
            if let Some(profile) = &record.spec.profile
                && let Some(holder) = boxes.values().map(|e| e.record()).find(|r| {
                    r.state.is_live()
                        && r.runtime == record.runtime
                        && r.spec.profile.as_ref() == Some(profile)
                })
            {
                return Err(ApiError::new(
                    ErrorCode::Conflict,
                    format!("the browser profile {profile:?} is in use by box {}", holder.id),
                )
                .with_hint("one box at a time may keep a profile; remove that box first, or use another profile")
                .with_details(serde_json::json!({ "profile": profile, "box_id": holder.id })));
            }
            boxes.insert(entry.id(), Arc::clone(&entry));
        }
        // Written before it is answered: an answered box is never lost.
        if let Err(e) = self.store.put_box(&record).await {
            self.boxes.write().unwrap_or_else(|e| e.into_inner()).remove(&record.id);
            return Err(store_error(&e));
        }
        let service = Arc::clone(self);
        let task_entry = Arc::clone(&entry);
        tokio::spawn(async move { service.bring_up(task_entry, offered.runtime, resolved).await });
        Ok(entry)
    }

    /// The labels a box's machine carries: never a secret.
    fn labels(&self, r: &BoxRecord) -> BTreeMap<String, String> {
        let mut labels = BTreeMap::from([
            (LABEL_SERVER.to_owned(), self.server_name.clone()),
            (LABEL_EXPIRES.to_owned(), rfc3339(r.expires_at)),
        ]);
        if let Some(idle) = r.idle_timeout_secs {
            labels.insert(LABEL_IDLE.to_owned(), idle.to_string());
        }
        if let Some(from) = &r.forked_from {
            labels.insert(LABEL_FORKED_FROM.to_owned(), from.clone());
        }
        labels
    }

    async fn fail(&self, entry: &Arc<Entry>, reason: String) {
        let failed = entry.transition(&[BoxState::Creating, BoxState::Starting], |r| {
            r.state = BoxState::Failed;
            r.reason = Some(reason.clone());
        });
        if failed {
            tracing::warn!(box_id = %entry.id(), reason, "box failed");
            self.save(entry).await;
        }
    }

    async fn bring_up(
        self: Arc<Self>,
        entry: Arc<Entry>,
        runtime: Arc<dyn Runtime>,
        resolved: spec::Resolved,
    ) {
        let record = entry.record();
        let mut extra = Extra {
            labels: self.labels(&record),
            image: None,
            created: Some(UNIX_EPOCH + Duration::from_secs(record.created_at)),
        };
        if let Some(from) = &record.forked_from {
            let Ok(source) = self.get(from) else {
                return self
                    .fail(&entry, format!("the box {from} it was forked from is gone"))
                    .await;
            };
            // The source's own changes wait while its files are copied.
            let _op = source.op.lock().await;
            let Some(machine) =
                source.record().machine_id.filter(|_| source.record().state.is_live())
            else {
                return self
                    .fail(&entry, format!("the box {from} it was forked from is gone"))
                    .await;
            };
            match runtime.fork(&machine, &record.id).await {
                Ok(image) => extra.image = Some(image),
                Err(e) => return self.fail(&entry, format!("cannot copy box {from}: {e}")).await,
            }
        }
        let spec_label = serde_json::to_string(&record.spec).unwrap_or_default();
        let id = record.id.clone();
        let mut progress = |p: holm::image::Progress| tracing::info!(box_id = %id, "image: {p:?}");
        let launched = launch::launch_with(
            &*runtime,
            &record.id,
            &resolved,
            &spec_label,
            &record.secret,
            &extra,
            &mut progress,
        )
        .await;
        let launched: Launched = match launched {
            Ok(l) => l,
            Err(e) => {
                if let Some(image) = &extra.image {
                    tracing::debug!(image, "the fork's image stays until its box is removed");
                }
                return self.fail(&entry, e.to_string()).await;
            }
        };
        let started = entry.transition(&[BoxState::Creating], |r| {
            r.machine_id = Some(launched.machine.id.clone());
            r.guest_url = Some(launched.guest_url.clone());
            r.bridge_url.clone_from(&launched.bridge_url);
            r.image = Some(launched.image.clone());
            r.state = BoxState::Starting;
        });
        if !started {
            // Removed while it was being made: take the machine down too.
            let _ = runtime.remove(&launched.machine.id).await;
            return;
        }
        self.save(&entry).await;
        self.await_desktop(&entry, &runtime, OnTimeout::Fail).await;
    }

    /// Waits for the desktop of a box in `starting`, then marks it running.
    async fn await_desktop(&self, entry: &Arc<Entry>, runtime: &Arc<dyn Runtime>, on: OnTimeout) {
        let r = entry.record();
        let (Some(url), Some(machine)) = (r.guest_url.clone(), r.machine_id.clone()) else {
            return;
        };
        let guest = BoxClient::guest(&url, &r.secret);
        match launch::wait_ready(&guest, READY_TIMEOUT).await {
            Ok(_) => {
                // A new desktop (a new box, a started or a taken-back one)
                // has a bridge with no secret until it is given one.
                self.arm_bridge(entry, &guest, false).await;
                let screens = guest.screens().await.unwrap_or_default();
                if entry.transition(&[BoxState::Starting], |r| {
                    r.state = BoxState::Running;
                    r.reason = None;
                    r.screens = screens;
                }) {
                    self.save(entry).await;
                    tracing::info!(box_id = %r.id, "box is running");
                }
            }
            Err(e) => match on {
                OnTimeout::Fail => {
                    if entry.record().state == BoxState::Starting {
                        let _ = runtime.remove(&machine).await;
                    }
                    self.fail(entry, e.to_string()).await;
                }
                OnTimeout::Unreachable => {
                    if entry.transition(&[BoxState::Starting], |r| {
                        r.state = BoxState::Unreachable;
                        r.reason = Some(e.to_string());
                    }) {
                        self.save(entry).await;
                    }
                }
            },
        }
    }

    /// Writes the newest copy of a box's record. A failure is logged: the
    /// box goes on, and the next write carries the change.
    async fn save(&self, entry: &Entry) {
        let _one_writer = entry.write.lock().await;
        let record = entry.record();
        if let Err(e) = self.store.put_box(&record).await {
            tracing::error!(box_id = %record.id, error = %e, "cannot write the box record");
        }
    }

    /// A box by id.
    pub fn get(&self, id: &str) -> Result<Arc<Entry>, ApiError> {
        self.boxes.read().unwrap_or_else(|e| e.into_inner()).get(id).cloned().ok_or_else(|| {
            ApiError::new(ErrorCode::NotFound, format!("there is no box {id:?}"))
                .with_hint("GET /v1/boxes lists the boxes")
                .with_details(serde_json::json!({ "box_id": id }))
        })
    }

    /// Whether the server holds a box with this id.
    pub fn has(&self, id: &str) -> bool {
        self.boxes.read().unwrap_or_else(|e| e.into_inner()).contains_key(id)
    }

    /// Waits until the box is in `target` (or can no longer get there), at
    /// most `timeout`.
    pub async fn wait(&self, entry: &Entry, target: BoxState, timeout: Duration) -> BoxInfo {
        let mut rx = entry.changed.subscribe();
        let done = |s: &BoxState| {
            *s == target
                || !s.is_live()
                || (target == BoxState::Running && *s == BoxState::Unreachable)
        };
        let _ = tokio::time::timeout(timeout, rx.wait_for(done)).await;
        entry.info()
    }

    /// One page of boxes that are not removed, oldest first.
    pub fn list(&self, query: &ListBoxes) -> Result<Page<BoxInfo>, ApiError> {
        let limit = query.limit.unwrap_or(50);
        if !(1..=100).contains(&limit) {
            return Err(ApiError::invalid_fields(vec![Issue {
                path: "limit".into(),
                problem: format!("must be 1 to 100, not {limit}"),
            }]));
        }
        let boxes = self.boxes.read().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<BoxRecord> = boxes.values().map(|e| e.record()).collect();
        drop(boxes);
        all.retain(|r| r.state != BoxState::Removed && query.state.is_none_or(|s| s == r.state));
        all.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        let start = match &query.cursor {
            None => 0,
            Some(c) => {
                let (secs, id) = decode_cursor(c).ok_or_else(|| {
                    ApiError::invalid_fields(vec![Issue {
                        path: "cursor".into(),
                        problem: "is not a cursor this server gave".into(),
                    }])
                })?;
                all.iter()
                    .position(|r| (r.created_at, r.id.as_str()) > (secs, id.as_str()))
                    .unwrap_or(all.len())
            }
        };
        let page: Vec<&BoxRecord> = all[start..].iter().take(limit as usize).collect();
        let next_cursor = if start + page.len() < all.len() {
            page.last().map(|r| encode_cursor(r.created_at, &r.id))
        } else {
            None
        };
        Ok(Page { data: page.iter().map(|r| r.info()).collect(), next_cursor })
    }

    // ---- Changing boxes ----------------------------------------------------

    /// The runtime of a box, after checking that it can do `what`. Checked
    /// before anything changes.
    fn able(
        &self,
        record: &BoxRecord,
        can: impl Fn(&Can) -> bool,
        what: &str,
    ) -> Result<Arc<dyn Runtime>, ApiError> {
        let offered = self.runtime(&record.runtime)?;
        if !can(&offered.runtime.can()) {
            return Err(ApiError::new(
                ErrorCode::Unsupported,
                format!("the {} runtime cannot {what} a box", record.runtime),
            )
            .with_hint(format!("GET /v1/runtimes/{} says what it can do", record.runtime))
            .with_details(
                serde_json::json!({ "runtime": record.runtime, "can": offered.runtime.can() }),
            ));
        }
        Ok(Arc::clone(&offered.runtime))
    }

    /// Stops a running box, keeping its files. Stopping a stopped box is
    /// not an error.
    pub async fn stop(&self, id: &str) -> Result<BoxInfo, ApiError> {
        let entry = self.get(id)?;
        let runtime = self.able(&entry.record(), |c| c.stop, "stop")?;
        let _op = entry.op.lock().await;
        let r = entry.record();
        match r.state {
            BoxState::Running | BoxState::Starting | BoxState::Unreachable => {}
            BoxState::Stopped => return Ok(r.info()),
            BoxState::Paused => {
                return Err(conflict(id, r.state, "stop needs a running box", "resume it first"));
            }
            s => return Err(conflict(id, s, "it cannot be stopped", "GET the box to see why")),
        }
        let Some(machine) = r.machine_id else {
            return Err(conflict(id, r.state, "it has no machine yet", "wait until it runs"));
        };
        runtime.stop(&machine).await.map_err(runtime_error)?;
        let now = self.clock.now_secs();
        entry.transition(&[BoxState::Running, BoxState::Starting, BoxState::Unreachable], |r| {
            r.state = BoxState::Stopped;
            r.reason = None;
            r.guest_url = None;
            r.bridge_url = None;
            r.last_activity = now;
        });
        self.save(&entry).await;
        tracing::info!(box_id = %id, "box stopped");
        Ok(entry.info())
    }

    /// Starts a stopped box: a new desktop, on new ports. The box is
    /// `starting` when this returns; [`Service::wait`] waits for it to run.
    pub async fn start(self: &Arc<Self>, id: &str) -> Result<Arc<Entry>, ApiError> {
        let entry = self.get(id)?;
        let runtime = self.able(&entry.record(), |c| c.stop, "start")?;
        let _op = entry.op.lock().await;
        let r = entry.record();
        match r.state {
            BoxState::Stopped => {}
            BoxState::Running | BoxState::Starting => return Ok(Arc::clone(&entry)),
            s => {
                return Err(conflict(
                    id,
                    s,
                    "start needs a stopped box",
                    "GET the box to see its state",
                ));
            }
        }
        let Some(machine) = r.machine_id else {
            return Err(Error::no_machine(id));
        };
        let m = runtime.start(&machine).await.map_err(runtime_error)?;
        let Some(addr) = m.ports.get(&holm_proto::guest::DEFAULT_GUEST_PORT) else {
            return Err(ApiError::new(
                ErrorCode::Unavailable,
                format!("box {id} started, but its guest port was not published"),
            ));
        };
        let now = self.clock.now_secs();
        entry.transition(&[BoxState::Stopped], |r| {
            r.state = BoxState::Starting;
            r.guest_url = Some(format!("http://{addr}"));
            r.bridge_url = bridge_url_of(&m);
            r.last_activity = now;
        });
        self.save(&entry).await;
        let service = Arc::clone(self);
        let task_entry = Arc::clone(&entry);
        tokio::spawn(async move {
            service.await_desktop(&task_entry, &runtime, OnTimeout::Unreachable).await;
        });
        drop(_op);
        Ok(entry)
    }

    /// Pauses a running box, keeping its memory. Pausing a paused box is not
    /// an error.
    pub async fn pause(&self, id: &str) -> Result<BoxInfo, ApiError> {
        self.pause_or_resume(id, true).await
    }

    /// Resumes a paused box: its processes go on where they were.
    pub async fn resume(&self, id: &str) -> Result<BoxInfo, ApiError> {
        self.pause_or_resume(id, false).await
    }

    async fn pause_or_resume(&self, id: &str, pause: bool) -> Result<BoxInfo, ApiError> {
        let entry = self.get(id)?;
        let what = if pause { "pause" } else { "resume" };
        let runtime = self.able(&entry.record(), |c| c.pause, what)?;
        let _op = entry.op.lock().await;
        let r = entry.record();
        let (from, to) = if pause {
            (BoxState::Running, BoxState::Paused)
        } else {
            (BoxState::Paused, BoxState::Running)
        };
        if r.state == to {
            return Ok(r.info());
        }
        if r.state != from {
            let need =
                if pause { "pause needs a running box" } else { "resume needs a paused box" };
            return Err(conflict(id, r.state, need, "GET the box to see its state"));
        }
        let machine = r.machine_id.ok_or_else(|| Error::no_machine(id))?;
        if pause {
            runtime.pause(&machine).await.map_err(runtime_error)?;
        } else {
            runtime.resume(&machine).await.map_err(runtime_error)?;
        }
        let now = self.clock.now_secs();
        entry.transition(&[from], |r| {
            r.state = to;
            r.last_activity = now;
        });
        self.save(&entry).await;
        tracing::info!(box_id = %id, "box {what}d");
        Ok(entry.info())
    }

    /// Makes a new box with a copy of this box's files, on the same runtime.
    /// The copy is `creating` when this returns.
    pub async fn fork(
        self: &Arc<Self>,
        id: &str,
        request: ForkBox,
        idempotency_key: Option<&str>,
    ) -> Result<(Arc<Entry>, bool), ApiError> {
        let source = self.get(id)?;
        let src = source.record();
        self.able(&src, |c| c.fork, "fork")?;
        if !matches!(src.state, BoxState::Running | BoxState::Paused | BoxState::Stopped) {
            return Err(conflict(
                id,
                src.state,
                "fork needs a running, paused or stopped box",
                "wait until it runs",
            ));
        }
        // A browser profile belongs to one box at a time: the copy starts
        // with the copied files and no kept profile.
        let spec = BoxSpec { name: request.name.clone(), profile: None, ..src.spec.clone() };
        let placement = Placement {
            runtime: Some(src.runtime.clone()),
            memory: src.placement.memory.clone(),
            cpus: src.placement.cpus,
            expires_after_secs: request.expires_after_secs,
            idle_timeout_secs: request.idle_timeout_secs.or(src.idle_timeout_secs),
        };
        let (offered, runtime, resolved) = self.resolve(&spec, &placement)?;
        let fingerprint = fingerprint(&format!("POST /v1/boxes/{id}/fork"), &request);
        let from = id.to_owned();
        self.idempotent(idempotency_key, fingerprint, |new_id| {
            self.insert_new(new_id, runtime, spec, placement, offered, resolved, Some(from))
        })
        .await
    }

    /// Moves the end of a box's lifetime later, never past its runtime's
    /// maximum lifetime counted from the box's creation.
    pub async fn extend(&self, id: &str, by_secs: u64) -> Result<BoxInfo, ApiError> {
        let entry = self.get(id)?;
        let r = entry.record();
        if !r.state.is_live() {
            return Err(conflict(id, r.state, "it cannot be extended", "create a new box"));
        }
        if by_secs < spec::MIN_LIFETIME_SECS {
            return Err(ApiError::invalid_fields(vec![Issue {
                path: "by_secs".into(),
                problem: format!(
                    "must be at least {} seconds, not {by_secs}",
                    spec::MIN_LIFETIME_SECS
                ),
            }]));
        }
        let max = self.runtime(&r.runtime)?.lifetimes.max_secs;
        let now = self.clock.now_secs();
        let mut refused = None;
        entry.update(|r| {
            let lifetime = r.expires_at.saturating_sub(r.created_at);
            let wanted = lifetime + by_secs;
            if wanted > max {
                refused = Some(ApiError::invalid_fields(vec![Issue {
                    path: "by_secs".into(),
                    problem: format!(
                        "{by_secs} more seconds makes a lifetime of {wanted} seconds, above this \
                         runtime's maximum lifetime of {max} seconds; at most {} more",
                        max.saturating_sub(lifetime)
                    ),
                }]));
                return;
            }
            r.expires_at += by_secs;
            r.last_activity = now;
        });
        if let Some(e) = refused {
            return Err(e);
        }
        self.save(&entry).await;
        Ok(entry.info())
    }

    /// Removes a box: its machine goes, its record stays as `removed` with
    /// `reason`. Removing a removed box answers it again.
    pub async fn remove(&self, id: &str, reason: &str) -> Result<BoxInfo, ApiError> {
        let entry = self.get(id)?;
        let _op = entry.op.lock().await;
        let record = entry.record();
        if record.state == BoxState::Removed {
            return Ok(record.info());
        }
        if let Some(machine) = &record.machine_id {
            let offered = self.runtime(&record.runtime)?;
            offered.runtime.remove(machine).await.map_err(runtime_error)?;
        }
        entry.update(|r| {
            r.state = BoxState::Removed;
            r.reason = Some(reason.to_owned());
            r.guest_url = None;
        });
        self.save(&entry).await;
        tracing::info!(box_id = %id, reason, "box removed");
        Ok(entry.info())
    }

    /// Records a command through the server, which moves an idle deadline.
    /// The record is written within a second, not on the command's path.
    pub fn touch(&self, entry: &Entry) {
        let now = self.clock.now_secs();
        let mut moved = false;
        entry.update(|r| {
            if r.idle_timeout_secs.is_some() && r.last_activity < now {
                r.last_activity = now;
                moved = true;
            }
        });
        if moved {
            self.dirty.lock().unwrap_or_else(|e| e.into_inner()).insert(entry.id());
        }
    }

    /// Removes each box whose deadline has passed, and records why. Answers
    /// how many went.
    pub async fn expire_due(&self) -> usize {
        let now = self.clock.now_secs();
        let due: Vec<(String, String)> = {
            let boxes = self.boxes.read().unwrap_or_else(|e| e.into_inner());
            boxes
                .values()
                .map(|e| e.record())
                .filter(|r| r.state.is_live())
                // Without its runtime the box cannot be removed; it stays
                // unreachable until a server that has the runtime ends it.
                .filter(|r| self.runtimes.contains_key(&r.runtime))
                .filter_map(|r| {
                    let (deadline, why) = r.deadline();
                    (deadline <= now).then(|| (r.id.clone(), why))
                })
                .collect()
        };
        let mut n = 0;
        for (id, why) in due {
            match self.remove(&id, &format!("expired: {why}")).await {
                Ok(_) => {
                    n += 1;
                    self.expiry_failed.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
                }
                Err(e) => {
                    // Tried again each second; said once.
                    let first = self
                        .expiry_failed
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(id.clone());
                    if first {
                        tracing::warn!(box_id = %id, error = %e, "cannot remove an expired box; retrying");
                    }
                }
            }
        }
        n
    }

    // ---- Traces ------------------------------------------------------------

    /// A new trace id.
    pub fn trace_id(&self) -> String {
        self.tracer.next_id(self.clock.now())
    }

    /// Queues a trace; it is written within a second.
    pub fn trace(&self, trace: Trace) {
        self.tracer.push(trace);
    }

    /// Writes queued traces and moved idle deadlines to the store.
    pub async fn flush(&self) {
        let traces = self.tracer.take();
        if !traces.is_empty()
            && let Err(e) = self.store.append_traces(&traces).await
        {
            tracing::warn!(error = %e, n = traces.len(), "cannot write traces; will retry");
            self.tracer.put_back(traces);
        }
        let dirty = std::mem::take(&mut *self.dirty.lock().unwrap_or_else(|e| e.into_inner()));
        for id in dirty {
            if let Ok(entry) = self.get(&id) {
                self.save(&entry).await;
            }
        }
    }

    /// One page of a box's traces, oldest first.
    pub async fn traces(
        &self,
        id: &str,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Trace>, ApiError> {
        self.get(id)?;
        if !(1..=1000).contains(&limit) {
            return Err(ApiError::invalid_fields(vec![Issue {
                path: "limit".into(),
                problem: format!("must be 1 to 1000, not {limit}"),
            }]));
        }
        if cursor.is_some_and(|c| c.is_empty() || !c.bytes().all(|b| b.is_ascii_digit())) {
            return Err(ApiError::invalid_fields(vec![Issue {
                path: "cursor".into(),
                problem: "is not a cursor this server gave".into(),
            }]));
        }
        self.flush().await;
        let mut data =
            self.store.traces(id, cursor, limit as usize + 1).await.map_err(|e| store_error(&e))?;
        let more = data.len() > limit as usize;
        data.truncate(limit as usize);
        let next_cursor = if more { data.last().map(|t| t.id.clone()) } else { None };
        Ok(Page { data, next_cursor })
    }

    // ---- Start and stop of the server --------------------------------------

    /// Takes back the boxes in the store, each through the runtime in its
    /// record, then scans every runtime for boxes this server labelled that
    /// the store does not have. Boxes keep running while the server is down.
    pub async fn recover(self: &Arc<Self>) -> Result<Recovered, StoreError> {
        let records = self.store.boxes().await?;
        let mut summary = Recovered { records: records.len(), ..Recovered::default() };
        let entries: Vec<Arc<Entry>> = {
            let mut boxes = self.boxes.write().unwrap_or_else(|e| e.into_inner());
            records
                .into_iter()
                .map(|r| {
                    let entry = Entry::new(r);
                    boxes.insert(entry.id(), Arc::clone(&entry));
                    entry
                })
                .collect()
        };
        for entry in entries {
            if entry.record().state.is_live() {
                match self.take_back(&entry).await {
                    TakeBack::Found => summary.taken_back += 1,
                    TakeBack::Resumed => summary.resumed += 1,
                    TakeBack::Other => {}
                }
            }
        }
        for (name, offered) in &self.runtimes {
            let machines = match offered.runtime.list().await {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(runtime = %name, error = %e, "cannot scan the runtime for boxes");
                    continue;
                }
            };
            for m in machines {
                match self.scanned(name, offered, m).await {
                    Scanned::Adopted => summary.adopted += 1,
                    Scanned::OrphanRemoved => summary.orphans_removed += 1,
                    Scanned::Known | Scanned::NotOurs => {}
                }
            }
        }
        Ok(summary)
    }

    /// Takes back one recorded box through its runtime.
    async fn take_back(self: &Arc<Self>, entry: &Arc<Entry>) -> TakeBack {
        let r = entry.record();
        let Some(offered) = self.runtimes.get(&r.runtime).cloned() else {
            entry.update(|r| {
                r.state = BoxState::Unreachable;
                r.reason =
                    Some(format!("its runtime {:?} is not offered by this server", r.runtime));
            });
            self.save(entry).await;
            return TakeBack::Other;
        };
        let runtime = Arc::clone(&offered.runtime);
        let found = match &r.machine_id {
            Some(m) => match runtime.inspect(m).await {
                Ok(m) => Ok(Some(m)),
                Err(RuntimeError::NotFound(_)) => Ok(None),
                Err(e) => Err(e),
            },
            // The server stopped before it recorded the machine: the runtime
            // may have made it anyway.
            None => runtime.find(&r.id).await,
        };
        let machine = match found {
            Ok(m) => m,
            Err(e) => {
                entry.update(|r| {
                    r.state = BoxState::Unreachable;
                    r.reason = Some(e.to_string());
                });
                self.save(entry).await;
                return TakeBack::Other;
            }
        };
        let making = matches!(r.state, BoxState::Creating | BoxState::Starting);
        let machine = match machine {
            // Made but never started: a crash between the two. Make it anew.
            Some(m) if m.state == MachineState::Created && making => {
                let _ = runtime.remove(&m.id).await;
                None
            }
            other => other,
        };
        let Some(m) = machine.filter(|m| m.state != MachineState::Gone) else {
            if making {
                return self.resume_making(entry, &offered).await;
            }
            entry.update(|r| {
                r.state = BoxState::Removed;
                r.reason = Some("its machine was gone when the server started".into());
                r.guest_url = None;
            });
            self.save(entry).await;
            return TakeBack::Other;
        };
        let guest_url =
            m.ports.get(&holm_proto::guest::DEFAULT_GUEST_PORT).map(|a| format!("http://{a}"));
        let now = self.clock.now_secs();
        entry.update(|r| {
            r.machine_id = Some(m.id.clone());
            // Ports may have moved; a paused box's bridge is read again here
            // and armed when it runs.
            r.bridge_url = bridge_url_of(&m);
            r.reason = None;
            // Downtime is not idleness: the idle clock starts again.
            r.last_activity = r.last_activity.max(now);
            match m.state {
                MachineState::Running if making => {
                    r.state = BoxState::Starting;
                    r.guest_url = guest_url;
                }
                MachineState::Running => {
                    r.state = BoxState::Running;
                    r.guest_url = guest_url;
                }
                MachineState::Paused => r.state = BoxState::Paused,
                _ => {
                    r.state = BoxState::Stopped;
                    r.guest_url = None;
                }
            }
        });
        if entry.record().state == BoxState::Running
            && let Some(url) = entry.record().guest_url
        {
            // A secret handed out before the restart stops working.
            let guest = BoxClient::guest(&url, &entry.record().secret);
            self.arm_bridge(entry, &guest, true).await;
        }
        self.save(entry).await;
        if entry.record().state == BoxState::Starting {
            let service = Arc::clone(self);
            let entry = Arc::clone(entry);
            tokio::spawn(async move {
                service.await_desktop(&entry, &runtime, OnTimeout::Fail).await;
            });
            return TakeBack::Resumed;
        }
        TakeBack::Found
    }

    /// Carries on making a box the last server did not finish.
    async fn resume_making(self: &Arc<Self>, entry: &Arc<Entry>, offered: &Offered) -> TakeBack {
        let r = entry.record();
        match offered.resolve(&r.spec, &r.placement) {
            Ok(resolved) => {
                entry.update(|r| {
                    r.state = BoxState::Creating;
                    r.machine_id = None;
                    r.guest_url = None;
                });
                self.save(entry).await;
                tracing::info!(box_id = %r.id, "carrying on making a box");
                let service = Arc::clone(self);
                let (entry, runtime) = (Arc::clone(entry), Arc::clone(&offered.runtime));
                tokio::spawn(async move { service.bring_up(entry, runtime, resolved).await });
                TakeBack::Resumed
            }
            Err(issues) => {
                let why: Vec<String> =
                    issues.iter().map(|i| format!("{}: {}", i.path, i.problem)).collect();
                self.fail(entry, format!("its runtime no longer accepts it: {}", why.join("; ")))
                    .await;
                TakeBack::Other
            }
        }
    }

    /// Handles one machine a runtime listed at start.
    async fn scanned(&self, runtime_name: &str, offered: &Offered, m: Machine) -> Scanned {
        let ours = match m.labels.get(LABEL_SERVER) {
            Some(s) => s == &self.server_name,
            None => self.server_name == DEFAULT_SERVER_NAME,
        };
        let Some(id) = m.box_id.clone().filter(|id| holm::ids::is_box_id(id)) else {
            return Scanned::NotOurs;
        };
        if !ours {
            return Scanned::NotOurs;
        }
        // Two runtimes on one engine list the same machines: each box is its
        // own runtime's, by its label.
        if m.labels
            .get(LABEL_RUNTIME)
            .is_some_and(|r| r != runtime_name && self.runtimes.contains_key(r))
        {
            return Scanned::NotOurs;
        }
        if let Ok(entry) = self.get(&id) {
            let r = entry.record();
            if r.state.is_live() || r.machine_id.as_deref().is_some_and(|mid| mid != m.id) {
                return Scanned::Known;
            }
            // The record says the box is gone, yet its machine is there.
            tracing::info!(box_id = %id, "removing the machine of a removed box");
            return match offered.runtime.remove(&m.id).await {
                Ok(()) => Scanned::OrphanRemoved,
                Err(e) => {
                    tracing::warn!(box_id = %id, error = %e, "cannot remove an orphan machine");
                    Scanned::Known
                }
            };
        }
        if m.state == MachineState::Created || m.state == MachineState::Gone {
            // Never started, and no record to say what it was for.
            let _ = offered.runtime.remove(&m.id).await;
            return Scanned::OrphanRemoved;
        }
        let secret = match offered.runtime.box_secret(&m.id).await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(box_id = %id, error = %e, "cannot read a labelled box's secret");
                None
            }
        };
        let label = |k: &str| m.labels.get(k).filter(|v| !v.is_empty()).cloned();
        let time = |k: &str| {
            label(k)
                .and_then(|v| humantime::parse_rfc3339_weak(&v).ok())
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_secs())
        };
        let now = self.clock.now_secs();
        let created_at = time(LABEL_CREATED).unwrap_or(now);
        let expires_at = time(LABEL_EXPIRES).unwrap_or(created_at + offered.lifetimes.default_secs);
        let idle = label(LABEL_IDLE).and_then(|v| v.parse::<u64>().ok());
        let spec: BoxSpec =
            label(LABEL_SPEC).and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default();
        let (state, reason) = match (&secret, m.state) {
            (None, _) => (
                BoxState::Unreachable,
                Some("the server lost its record, and cannot read the box's secret".to_owned()),
            ),
            (Some(_), MachineState::Running) => (BoxState::Running, None),
            (Some(_), MachineState::Paused) => (BoxState::Paused, None),
            (Some(_), _) => (BoxState::Stopped, None),
        };
        let guest_url = (state == BoxState::Running)
            .then(|| {
                m.ports.get(&holm_proto::guest::DEFAULT_GUEST_PORT).map(|a| format!("http://{a}"))
            })
            .flatten();
        let record = BoxRecord {
            id: id.clone(),
            runtime: runtime_name.to_owned(),
            machine_id: Some(m.id.clone()),
            guest_url,
            secret: secret.unwrap_or_default(),
            spec,
            placement: Placement {
                runtime: Some(runtime_name.to_owned()),
                idle_timeout_secs: idle,
                ..Placement::default()
            },
            state,
            reason,
            image: None,
            screens: Vec::new(),
            created_at,
            expires_at,
            idle_timeout_secs: idle,
            last_activity: now,
            forked_from: label(LABEL_FORKED_FROM),
            bridge_url: bridge_url_of(&m),
            bridge_secret: None,
        };
        let entry = Entry::new(record);
        if let Some(url) = entry.record().guest_url {
            let guest = BoxClient::guest(&url, &entry.record().secret);
            self.arm_bridge(&entry, &guest, true).await;
        }
        self.save(&entry).await;
        self.boxes.write().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), entry);
        tracing::info!(box_id = %id, runtime = runtime_name, "took back a labelled box the store did not have");
        Scanned::Adopted
    }

    // ---- The Chromium bridge -----------------------------------------------

    /// Gives the box's bridge its secret: the record's, or a new one when
    /// `rotate` is set or the record has none. The record keeps the secret
    /// even when the guest does not take it: the next bridge request sets
    /// it again.
    async fn arm_bridge(&self, entry: &Entry, guest: &BoxClient, rotate: bool) {
        let r = entry.record();
        let secret = match r.bridge_secret.filter(|_| !rotate) {
            Some(s) => s,
            None => {
                let s = holm::ids::new_secret();
                entry.update(|r| r.bridge_secret = Some(s.clone()));
                s
            }
        };
        if r.spec.browser == Some(false) || entry.record().bridge_url.is_none() {
            return;
        }
        match tokio::time::timeout(Duration::from_secs(5), guest.set_bridge_secret(&secret)).await {
            Ok(Ok(())) => tracing::debug!(box_id = %r.id, "the bridge has its secret"),
            Ok(Err(e)) => {
                tracing::warn!(box_id = %r.id, error = %e, "cannot set the bridge's secret");
            }
            Err(_) => {
                tracing::warn!(box_id = %r.id, "the guest did not take the bridge's secret in time");
            }
        }
    }

    /// How to reach a running box's Chromium from the server's host: the
    /// bridge's address, the header with the bridge's secret, and a fresh
    /// ticket. Asking counts as activity for the idle timeout (traffic on the
    /// bridge itself does not pass through the server).
    pub async fn bridge(&self, id: &str, ttl_secs: Option<u32>) -> Result<BridgeAccess, ApiError> {
        let entry = self.get(id)?;
        let record = entry.record();
        match record.state {
            BoxState::Running => {}
            BoxState::Creating | BoxState::Starting => {
                return Err(ApiError::new(
                    ErrorCode::NotReady,
                    format!("box {id} is still starting"),
                )
                .with_hint(format!("wait with GET /v1/boxes/{id}?wait_for=running")));
            }
            other => {
                return Err(ApiError::new(
                    ErrorCode::NotRunning,
                    format!("box {id} is {}", state_name(other)),
                )
                .with_details(serde_json::json!({ "box_id": id, "state": other })));
            }
        }
        if record.spec.browser == Some(false) {
            return Err(ApiError::new(ErrorCode::NotReady, format!("box {id} runs no browser")));
        }
        let (Some(guest_url), Some(bridge_url)) =
            (record.guest_url.clone(), record.bridge_url.clone())
        else {
            return Err(ApiError::new(
                ErrorCode::Unsupported,
                format!("box {id} has no published bridge port"),
            )
            .with_hint("boxes made before the bridge existed have none; make a new box"));
        };
        let secret = match &record.bridge_secret {
            Some(s) => s.clone(),
            None => {
                let s = holm::ids::new_secret();
                entry.update(|r| r.bridge_secret = Some(s.clone()));
                self.save(&entry).await;
                s
            }
        };
        self.touch(&entry);
        let guest = BoxClient::guest(&guest_url, &record.secret);
        holm_client::bridge_access(&guest, &bridge_url, &secret, ttl_secs).await.map_err(
            |e| match e {
                holm_client::ClientError::Api(e) => e,
                other => {
                    tracing::warn!(box_id = %id, error = %other, "the box's bridge did not answer");
                    ApiError::new(
                        ErrorCode::GuestUnreachable,
                        format!("the bridge of box {id} did not answer"),
                    )
                    .with_hint("the box may be stopping; GET the box to see its state")
                }
            },
        )
    }

    /// Runs the deadline check and the writer once a second, and forgets old
    /// idempotency keys every hour, until the process ends.
    pub fn spawn_background(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let service = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut n: u64 = 0;
            loop {
                tick.tick().await;
                service.expire_due().await;
                service.flush().await;
                if n.is_multiple_of(3600) {
                    service.purge_idempotency().await;
                }
                n += 1;
            }
        })
    }

    async fn purge_idempotency(&self) {
        let before = self.clock.now_secs().saturating_sub(IDEMPOTENCY_RETENTION_SECS);
        match self.store.purge_idempotency(before).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(keys = n, "forgot idempotency keys older than a day"),
            Err(e) => tracing::warn!(error = %e, "cannot forget old idempotency keys"),
        }
    }

    /// Writes everything still held in memory, before the server stops.
    pub async fn close(&self) {
        self.flush().await;
        if let Err(e) = self.store.flush().await {
            tracing::error!(error = %e, "cannot flush the store");
        }
    }
}

enum TakeBack {
    Found,
    Resumed,
    Other,
}

enum Scanned {
    Known,
    NotOurs,
    Adopted,
    OrphanRemoved,
}

/// Shorthand errors.
struct Error;

impl Error {
    fn no_machine(id: &str) -> ApiError {
        ApiError::new(ErrorCode::Conflict, format!("box {id} has no machine yet"))
            .with_hint("wait until it runs")
    }
}

/// The SHA-256 of a route and a parsed body: the same request, however its
/// JSON was spaced or ordered, has the same fingerprint.
pub fn fingerprint(route: &str, body: &impl serde::Serialize) -> String {
    let mut bytes = route.as_bytes().to_vec();
    bytes.push(b'\n');
    bytes.extend(serde_json::to_vec(body).unwrap_or_default());
    sha256_hex(&bytes)
}

/// The bridge's address on the server's host, from a machine's ports.
fn bridge_url_of(m: &Machine) -> Option<String> {
    m.ports.get(&holm_proto::guest::BRIDGE_PORT).map(|a| format!("http://{a}"))
}

/// Maps a runtime error to the one error shape.
pub fn runtime_error(e: RuntimeError) -> ApiError {
    match e {
        RuntimeError::NotFound(m) => ApiError::new(ErrorCode::NotFound, m),
        RuntimeError::Conflict(m) => ApiError::new(ErrorCode::Conflict, m),
        RuntimeError::Unsupported { .. } => ApiError::new(ErrorCode::Unsupported, e.to_string()),
        RuntimeError::Unavailable { .. } => ApiError::new(ErrorCode::Unavailable, e.to_string())
            .with_hint("check that the runtime's engine runs, such as `docker info`"),
        RuntimeError::Image(_) | RuntimeError::Engine(_) => {
            ApiError::new(ErrorCode::Unavailable, e.to_string())
        }
    }
}

fn encode_cursor(secs: u64, id: &str) -> String {
    format!("{secs}.{id}")
}

fn decode_cursor(c: &str) -> Option<(u64, String)> {
    let (secs, id) = c.split_once('.')?;
    Some((secs.parse().ok()?, id.to_owned()))
}

/// What a write of a remote runtime does to its key.
enum KeyChange {
    /// Keep the stored key.
    Keep,
    /// Store this key (sealed) as the next version.
    New(String),
}

impl Service {
    // ---- Remote runtimes -------------------------------------------------------

    /// Reads the stored remote runtimes and adds those from
    /// `HOLM_SERVER_SANDBOXES`. A stored key that cannot be decrypted leaves
    /// its runtime unavailable, with the reason.
    pub async fn load_remotes(&self) -> Result<usize, StoreError> {
        let stored = self.store.runtimes().await?;
        let mut remotes = BTreeMap::new();
        for record in stored {
            if self.runtimes.contains_key(&record.name) {
                tracing::warn!(runtime = %record.name, "a stored remote runtime has a host runtime's name; the host runtime wins");
                continue;
            }
            let remote = self.remote_from(record, false);
            if let Some(problem) = &remote.key_problem {
                tracing::warn!(runtime = %remote.record.name, reason = %problem, "a remote runtime is unavailable");
            }
            remotes.insert(remote.record.name.clone(), remote);
        }
        for env in &self.remote_setup.env {
            let record = RuntimeRecord {
                name: env.provider.clone(),
                provider: env.provider.clone(),
                fields: env.fields.clone().into_iter().collect(),
                sealed: BTreeMap::new(),
                created_at: self.clock.now_secs(),
                updated_at: self.clock.now_secs(),
                key_version: 1,
            };
            if remotes.contains_key(&record.name) {
                tracing::warn!(runtime = %record.name, "HOLM_SERVER_SANDBOXES names a runtime the store has too; the environment's wins");
            }
            remotes.insert(record.name.clone(), self.remote_from(record, true));
        }
        let n = remotes.len();
        *self.remotes_write() = remotes;
        Ok(n)
    }

    fn remote_from(&self, record: RuntimeRecord, from_env: bool) -> Remote {
        let key_problem = if from_env {
            None
        } else if record.sealed.is_empty() {
            Some(format!(
                "it has no {}; set one with `holm runtime set {} --api-key`",
                registry::API_KEY,
                record.name
            ))
        } else {
            match &self.remote_setup.secret_key {
                None => Some(format!(
                    "the server has no key to decrypt its stored {} with: set HOLM_SERVER_SECRET_KEY or HOLM_SERVER_SECRET_FILE as when it was stored",
                    registry::API_KEY
                )),
                Some(key) => record
                    .sealed
                    .iter()
                    .find_map(|(secret, sealed)| key.open(&record.name, secret, sealed).err()),
            }
        };
        let base = match self.remote_setup.file_lifetimes.get(&record.name) {
            Some((l, m)) => lifetimes_with(Lifetimes::default(), *l, *m),
            None => Lifetimes::default(),
        };
        let secs = |k: &str| record.fields.get(k).and_then(serde_json::Value::as_u64);
        let lifetimes = lifetimes_with(base, secs("lifetime_secs"), secs("max_lifetime_secs"));
        Remote { record, from_env, key_problem, lifetimes }
    }

    fn remote_reason(remote: &Remote) -> String {
        remote.key_problem.clone().unwrap_or_else(|| registry::no_adapter(&remote.record.provider))
    }

    fn remote_info(&self, remote: &Remote) -> RuntimeInfo {
        let r = &remote.record;
        let vendor = registry::vendor(&r.provider);
        let secrets: Vec<String> = if remote.from_env {
            vec![registry::API_KEY.to_owned()]
        } else {
            r.sealed.keys().cloned().collect()
        };
        RuntimeInfo {
            name: r.name.clone(),
            provider: r.provider.clone(),
            place: Place::Remote,
            environment: vendor.map_or(holm_proto::host::Environment::Unknown, |v| v.environment),
            state: RuntimeState::Unavailable,
            reason: Some(Self::remote_reason(remote)),
            default: r.name == self.default_runtime,
            can: vendor.map(|v| v.can).unwrap_or_default(),
            lifetime_secs: remote.lifetimes.default_secs,
            max_lifetime_secs: remote.lifetimes.max_secs,
            secrets,
            fields: r.fields.clone(),
            key_version: Some(r.key_version),
        }
    }

    /// The refusal of a box on a remote runtime, before anything starts.
    fn remote_refusal(&self, remote: &Remote) -> ApiError {
        let hosts: Vec<&String> = self.runtimes.keys().collect();
        ApiError::new(
            ErrorCode::Unsupported,
            format!(
                "runtime {} ({}) cannot take boxes: {}",
                remote.record.name,
                remote.record.provider,
                Self::remote_reason(remote)
            ),
        )
        .with_hint(format!(
            "use a host runtime: {}",
            hosts.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        ))
        .with_details(serde_json::json!({ "runtime": remote.record.name, "state": "unavailable" }))
    }

    /// Why `name` cannot be added or changed through the API, when it cannot.
    fn not_through_api(&self, name: &str) -> Option<ApiError> {
        if self.runtimes.contains_key(name) || crate::runtimes_file::HOST_KINDS.contains(&name) {
            return Some(
                ApiError::new(
                    ErrorCode::Forbidden,
                    format!(
                        "{name} is a host runtime; the API adds and changes only remote vendors"
                    ),
                )
                .with_hint("the runtimes file (HOLM_SERVER_CONFIG) configures host runtimes"),
            );
        }
        if self.remotes_read().get(name).is_some_and(|r| r.from_env) {
            return Some(
                ApiError::new(
                    ErrorCode::Forbidden,
                    format!("{name} comes from HOLM_SERVER_SANDBOXES and the vendor's variables"),
                )
                .with_hint("change the server's environment and restart it, or add a runtime with another name"),
            );
        }
        None
    }

    fn check_key(&self, key: Option<&str>, issues: &mut Vec<Issue>) -> Option<String> {
        match key {
            Some(k) if !k.trim().is_empty() => Some(k.trim().to_owned()),
            Some(_) => {
                issues.push(Issue { path: "api_key".into(), problem: "is empty".into() });
                None
            }
            None => None,
        }
    }

    fn sealer(&self) -> Result<&SecretKey, ApiError> {
        self.remote_setup.secret_key.as_ref().ok_or_else(|| {
            ApiError::new(
                ErrorCode::Forbidden,
                "the server has no key to encrypt vendor keys with, so it stores none",
            )
            .with_hint("set HOLM_SERVER_SECRET_KEY (openssl rand -hex 32) or HOLM_SERVER_SECRET_FILE, and restart the server")
        })
    }

    /// Checks and writes a remote runtime, sealing a new key.
    async fn write_remote(
        &self,
        name: &str,
        provider: &str,
        fields: &BTreeMap<String, serde_json::Value>,
        key: KeyChange,
        existing: Option<RuntimeRecord>,
    ) -> Result<RuntimeInfo, ApiError> {
        let mut issues = Vec::new();
        if let Err(problem) = registry::check_name(name) {
            issues.push(Issue { path: "name".into(), problem });
        }
        let vendor = registry::vendor(provider);
        let mut checked = serde_json::Map::new();
        match vendor {
            None => {
                let problem = if crate::runtimes_file::HOST_KINDS.contains(&provider) {
                    format!(
                        "{provider:?} is a host engine; the API adds only remote vendors: {}",
                        registry::vendor_names().join(", ")
                    )
                } else {
                    format!(
                        "{provider:?} is no vendor; use one of: {}",
                        registry::vendor_names().join(", ")
                    )
                };
                issues.push(Issue { path: "provider".into(), problem });
            }
            Some(v) => match registry::check_fields(v, fields, true) {
                Ok(f) => checked = f,
                Err(mut more) => issues.append(&mut more),
            },
        }
        let keep = matches!(key, KeyChange::Keep);
        if keep && existing.as_ref().is_none_or(|e| e.sealed.is_empty() || e.provider != provider) {
            issues.push(Issue {
                path: "api_key".into(),
                problem: "the vendor's key is needed: `holm runtime add` reads it from standard input (--api-key) or a variable (--api-key-env)".into(),
            });
        }
        if !issues.is_empty() {
            return Err(ApiError::invalid_fields(issues));
        }
        let now = self.clock.now_secs();
        let mut record = RuntimeRecord {
            name: name.to_owned(),
            provider: provider.to_owned(),
            fields: checked,
            sealed: BTreeMap::new(),
            created_at: existing.as_ref().map_or(now, |e| e.created_at),
            updated_at: now,
            key_version: existing.as_ref().map_or(0, |e| e.key_version),
        };
        match key {
            KeyChange::Keep => {
                record.sealed = existing.map(|e| e.sealed).unwrap_or_default();
            }
            KeyChange::New(plain) => {
                let sealer = self.sealer()?;
                record.sealed.insert(
                    registry::API_KEY.to_owned(),
                    sealer.seal(name, registry::API_KEY, &plain),
                );
                record.key_version += 1;
            }
        }
        self.store.put_runtime(&record).await.map_err(|e| store_error(&e))?;
        let remote = self.remote_from(record, false);
        let info = self.remote_info(&remote);
        self.remotes_write().insert(name.to_owned(), remote);
        Ok(info)
    }

    fn stored_remote(&self, name: &str) -> Result<RuntimeRecord, ApiError> {
        if let Some(e) = self.not_through_api(name) {
            return Err(e);
        }
        self.remotes_read().get(name).map(|r| r.record.clone()).ok_or_else(|| {
            ApiError::new(ErrorCode::NotFound, format!("there is no remote runtime named {name:?}"))
                .with_hint("POST /v1/runtimes adds one; GET /v1/runtimes lists them")
        })
    }

    /// `POST /v1/runtimes`: adds a remote runtime.
    pub async fn add_runtime(&self, request: AddRuntime) -> Result<RuntimeInfo, ApiError> {
        let _guard = self.registry.lock().await;
        if let Some(e) = self.not_through_api(&request.name) {
            return Err(e);
        }
        if self.remotes_read().contains_key(&request.name) {
            return Err(ApiError::new(
                ErrorCode::AlreadyExists,
                format!("there is a runtime named {:?} already", request.name),
            )
            .with_hint("PATCH /v1/runtimes/{name} (holm runtime set) changes it"));
        }
        let mut issues = Vec::new();
        let key = self.check_key(request.api_key.as_deref(), &mut issues);
        if !issues.is_empty() {
            return Err(ApiError::invalid_fields(issues));
        }
        let key = key.map_or(KeyChange::Keep, KeyChange::New);
        let info =
            self.write_remote(&request.name, &request.provider, &request.fields, key, None).await?;
        tracing::info!(runtime = %info.name, provider = %info.provider, "added a remote runtime");
        Ok(info)
    }

    /// `PUT /v1/runtimes/{name}`: adds or replaces a remote runtime whole.
    /// Answers whether it was added.
    pub async fn replace_runtime(
        &self,
        name: &str,
        request: ReplaceRuntime,
    ) -> Result<(RuntimeInfo, bool), ApiError> {
        let _guard = self.registry.lock().await;
        if let Some(e) = self.not_through_api(name) {
            return Err(e);
        }
        let existing = self.remotes_read().get(name).map(|r| r.record.clone());
        let added = existing.is_none();
        let mut issues = Vec::new();
        let key = self.check_key(request.api_key.as_deref(), &mut issues);
        if !issues.is_empty() {
            return Err(ApiError::invalid_fields(issues));
        }
        let key = key.map_or(KeyChange::Keep, KeyChange::New);
        let info =
            self.write_remote(name, &request.provider, &request.fields, key, existing).await?;
        tracing::info!(runtime = %name, provider = %info.provider, key_version = ?info.key_version, "replaced a remote runtime");
        Ok((info, added))
    }

    /// `PATCH /v1/runtimes/{name}`: changes some fields (`null` removes one)
    /// or replaces the key. A new key is the runtime's next key version,
    /// which its running boxes take.
    pub async fn change_runtime(
        &self,
        name: &str,
        request: ChangeRuntime,
    ) -> Result<RuntimeInfo, ApiError> {
        let _guard = self.registry.lock().await;
        let existing = self.stored_remote(name)?;
        let mut fields: BTreeMap<String, serde_json::Value> =
            existing.fields.clone().into_iter().collect();
        for (k, v) in request.fields {
            if v.is_null() {
                fields.remove(&k);
            } else {
                fields.insert(k, v);
            }
        }
        let mut issues = Vec::new();
        let key = self.check_key(request.api_key.as_deref(), &mut issues);
        if !issues.is_empty() {
            return Err(ApiError::invalid_fields(issues));
        }
        let key = key.map_or(KeyChange::Keep, KeyChange::New);
        let provider = existing.provider.clone();
        let info = self.write_remote(name, &provider, &fields, key, Some(existing)).await?;
        tracing::info!(runtime = %name, key_version = ?info.key_version, "changed a remote runtime");
        Ok(info)
    }

    /// `DELETE /v1/runtimes/{name}`: removes a remote runtime that no live
    /// box is on.
    pub async fn remove_runtime(&self, name: &str) -> Result<RuntimeInfo, ApiError> {
        let _guard = self.registry.lock().await;
        self.stored_remote(name)?;
        let on_it: Vec<String> = self
            .boxes
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(|e| e.record())
            .filter(|r| r.runtime == name && r.state.is_live())
            .map(|r| r.id)
            .collect();
        if !on_it.is_empty() {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("{} boxes are on runtime {name}", on_it.len()),
            )
            .with_hint("remove them first")
            .with_details(serde_json::json!({ "box_ids": on_it })));
        }
        self.store.delete_runtime(name).await.map_err(|e| store_error(&e))?;
        let removed = self.remotes_write().remove(name);
        tracing::info!(runtime = %name, "removed a remote runtime");
        removed.map(|r| self.remote_info(&r)).ok_or_else(|| self.unknown_runtime(name))
    }
}
