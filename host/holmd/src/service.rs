//! The boxes a server holds, and what can happen to them. No HTTP here: the
//! REST routes (and later MCP) are frontends over [`Service`].

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use holm::launch::{self, Launched};
use holm::runtime::{MachineState, Runtime, RuntimeError};
use holm::spec::{self, Lifetimes};
use holm_client::BoxClient;
use holm_proto::guest::Page;
use holm_proto::host::{
    BoxInfo, BoxState, BridgeAccess, CreateBox, ListBoxes, RuntimeInfo, RuntimeState,
};
use holm_proto::{ApiError, ErrorCode, Issue};
use tokio::sync::watch;

use crate::store::{BoxRecord, Store};

/// Seconds since the epoch.
pub fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// One box held by the server.
#[derive(Debug)]
pub struct Entry {
    record: Mutex<BoxRecord>,
    changed: watch::Sender<BoxState>,
}

impl Entry {
    fn new(record: BoxRecord) -> Arc<Self> {
        let (changed, _) = watch::channel(record.state);
        Arc::new(Self { record: Mutex::new(record), changed })
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

    fn update(&self, f: impl FnOnce(&mut BoxRecord)) -> BoxRecord {
        let mut r = self.record.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut r);
        let copy = r.clone();
        drop(r);
        self.changed.send_replace(copy.state);
        copy
    }
}

/// A runtime the server offers, with its lifetimes.
#[derive(Debug, Clone)]
pub struct Offered {
    /// The runtime.
    pub runtime: Arc<dyn Runtime>,
    /// Its lifetimes.
    pub lifetimes: Lifetimes,
}

/// The server's boxes and runtimes.
#[derive(Debug)]
pub struct Service {
    runtimes: BTreeMap<String, Offered>,
    default_runtime: String,
    boxes: RwLock<BTreeMap<String, Arc<Entry>>>,
    store: Store,
}

/// How long `wait_for` may wait at most.
pub const MAX_WAIT_SECS: u64 = 900;

impl Service {
    /// A service over `runtimes`, keeping records in `store`.
    pub fn new(
        runtimes: BTreeMap<String, Offered>,
        default_runtime: String,
        store: Store,
    ) -> Arc<Self> {
        Arc::new(Self { runtimes, default_runtime, boxes: RwLock::new(BTreeMap::new()), store })
    }

    /// The names of the runtimes offered.
    pub fn runtime_names(&self) -> Vec<String> {
        self.runtimes.keys().cloned().collect()
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
        })
    }

    /// Every runtime.
    pub async fn runtime_infos(&self) -> Vec<RuntimeInfo> {
        let mut out = Vec::new();
        for name in self.runtimes.keys() {
            if let Ok(info) = self.runtime_info(name).await {
                out.push(info);
            }
        }
        out
    }

    /// Checks a request and starts making the box. The box is returned in
    /// `creating`; [`Service::wait`] waits for it to run.
    pub fn create(self: &Arc<Self>, request: CreateBox) -> Result<Arc<Entry>, ApiError> {
        let name =
            request.placement.runtime.clone().unwrap_or_else(|| self.default_runtime.clone());
        let offered = self.runtime(&name)?.clone();
        let resolved = spec::resolve(
            &request.spec,
            &request.placement,
            &offered.runtime.can(),
            offered.lifetimes,
        )
        .map_err(ApiError::invalid_fields)?;
        holm::image::ImageRequest::new(
            resolved.apps.iter().cloned(),
            resolved.packages.iter().cloned(),
        )
        .map_err(|e| {
            let path = format!("spec.{}", e.field().unwrap_or("apps"));
            ApiError::invalid_fields(vec![Issue { path, problem: e.to_string() }])
        })?;
        let created = now();
        let record = BoxRecord {
            id: holm::ids::new_box_id(),
            runtime: name,
            machine_id: None,
            guest_url: None,
            secret: holm::ids::new_secret(),
            spec: request.spec.clone(),
            placement: request.placement.clone(),
            state: BoxState::Creating,
            reason: None,
            image: None,
            screens: Vec::new(),
            created_at: created,
            expires_at: created + resolved.lifetime_secs,
            idle_timeout_secs: resolved.idle_timeout_secs,
            last_activity: created,
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
        self.persist(&record);
        let service = Arc::clone(self);
        let task_entry = Arc::clone(&entry);
        tokio::spawn(async move { service.bring_up(task_entry, offered.runtime, resolved).await });
        Ok(entry)
    }

    async fn bring_up(
        self: Arc<Self>,
        entry: Arc<Entry>,
        runtime: Arc<dyn Runtime>,
        resolved: spec::Resolved,
    ) {
        let record = entry.record();
        let spec_label = serde_json::to_string(&record.spec).unwrap_or_default();
        let id = record.id.clone();
        let mut progress = |p: holm::image::Progress| tracing::info!(box_id = %id, "image: {p:?}");
        let launched = launch::launch(
            &*runtime,
            &record.id,
            &resolved,
            &spec_label,
            &record.secret,
            &mut progress,
        )
        .await;
        let launched: Launched = match launched {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(box_id = %record.id, error = %e, "box failed to launch");
                let r = entry.update(|r| {
                    if r.state != BoxState::Removed {
                        r.state = BoxState::Failed;
                        r.reason = Some(e.to_string());
                    }
                });
                self.persist(&r);
                return;
            }
        };
        let removed = {
            let r = entry.update(|r| {
                r.machine_id = Some(launched.machine.id.clone());
                r.guest_url = Some(launched.guest_url.clone());
                r.bridge_url.clone_from(&launched.bridge_url);
                r.image = Some(launched.image.clone());
                if r.state == BoxState::Creating {
                    r.state = BoxState::Starting;
                }
            });
            self.persist(&r);
            r.state == BoxState::Removed
        };
        if removed {
            // Removed while it was being made: take the machine down too.
            let _ = runtime.remove(&launched.machine.id).await;
            return;
        }
        let guest = BoxClient::guest(&launched.guest_url, &launched.secret);
        match launch::wait_ready(&guest, Duration::from_secs(120)).await {
            Ok(_) => {
                if let Some(secret) = &record.bridge_secret
                    && let Err(e) = guest.set_bridge_secret(secret).await
                {
                    tracing::warn!(box_id = %record.id, error = %e, "cannot set the bridge's secret");
                }
                let screens = guest.screens().await.unwrap_or_default();
                let r = entry.update(|r| {
                    if r.state == BoxState::Starting {
                        r.state = BoxState::Running;
                        r.screens = screens;
                    }
                });
                self.persist(&r);
                tracing::info!(box_id = %r.id, "box is running");
            }
            Err(e) => {
                tracing::warn!(box_id = %record.id, error = %e, "box did not become ready");
                let _ = runtime.remove(&launched.machine.id).await;
                let r = entry.update(|r| {
                    if r.state != BoxState::Removed {
                        r.state = BoxState::Failed;
                        r.reason = Some(e.to_string());
                    }
                });
                self.persist(&r);
            }
        }
    }

    fn persist(&self, record: &BoxRecord) {
        if let Err(e) = self.store.put(record) {
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

    /// Removes a box: its machine goes, its record stays as `removed`.
    pub async fn remove(&self, id: &str, reason: &str) -> Result<BoxInfo, ApiError> {
        let entry = self.get(id)?;
        let record = entry.record();
        if record.state == BoxState::Removed {
            return Ok(record.info());
        }
        if let Some(machine) = &record.machine_id {
            let offered = self.runtime(&record.runtime)?;
            offered.runtime.remove(machine).await.map_err(runtime_error)?;
        }
        let r = entry.update(|r| {
            r.state = BoxState::Removed;
            r.reason = Some(reason.to_owned());
        });
        self.persist(&r);
        tracing::info!(box_id = %id, reason, "box removed");
        Ok(r.info())
    }

    /// Records a command through the server, which moves an idle deadline.
    pub fn touch(&self, entry: &Entry) {
        let t = now();
        let mut r = entry.record.lock().unwrap_or_else(|e| e.into_inner());
        if r.idle_timeout_secs.is_some() && r.last_activity != t {
            r.last_activity = t;
            let copy = r.clone();
            drop(r);
            self.persist(&copy);
        }
    }

    /// Removes each box whose deadline has passed. Returns how many went.
    pub async fn expire(&self, at: u64) -> usize {
        let due: Vec<(String, String)> = {
            let boxes = self.boxes.read().unwrap_or_else(|e| e.into_inner());
            boxes
                .values()
                .map(|e| e.record())
                .filter(|r| r.state.is_live())
                .filter_map(|r| {
                    let (deadline, why) = r.deadline();
                    (deadline <= at).then(|| (r.id.clone(), why))
                })
                .collect()
        };
        let mut n = 0;
        for (id, why) in due {
            match self.remove(&id, &format!("expired: {why}")).await {
                Ok(_) => n += 1,
                Err(e) => tracing::warn!(box_id = %id, error = %e, "cannot remove an expired box"),
            }
        }
        n
    }

    /// Takes back the boxes in the store: each record's machine is asked for
    /// through its runtime. Boxes keep running while the server is down.
    pub async fn recover(self: &Arc<Self>) -> std::io::Result<usize> {
        let records = self.store.load()?;
        let mut n = 0;
        for mut record in records {
            if record.state.is_live() {
                match (self.runtimes.get(&record.runtime), &record.machine_id) {
                    (None, _) => {
                        record.state = BoxState::Unreachable;
                        record.reason = Some(format!(
                            "its runtime {:?} is not offered by this server",
                            record.runtime
                        ));
                    }
                    (Some(offered), Some(machine)) => {
                        match offered.runtime.inspect(machine).await {
                            Ok(m) if m.state == MachineState::Running => {
                                if let Some(addr) =
                                    m.ports.get(&holm_proto::guest::DEFAULT_GUEST_PORT)
                                {
                                    record.guest_url = Some(format!("http://{addr}"));
                                }
                                record.state = BoxState::Running;
                                record.reason = None;
                                rotate_bridge_secret(&mut record, &m).await;
                            }
                            Ok(m) if m.state == MachineState::Paused => {
                                record.state = BoxState::Paused
                            }
                            Ok(m) if m.state == MachineState::Stopped => {
                                record.state = BoxState::Stopped
                            }
                            Ok(_) | Err(RuntimeError::NotFound(_)) => {
                                record.state = BoxState::Removed;
                                record.reason =
                                    Some("its machine was gone when the server started".into());
                            }
                            Err(e) => {
                                record.state = BoxState::Unreachable;
                                record.reason = Some(e.to_string());
                            }
                        }
                    }
                    (Some(_), None) => {
                        record.state = BoxState::Failed;
                        record.reason = Some("the server stopped before the box was made".into());
                    }
                }
                self.persist(&record);
            }
            n += 1;
            let entry = Entry::new(record);
            self.boxes.write().unwrap_or_else(|e| e.into_inner()).insert(entry.id(), entry);
        }
        Ok(n)
    }

    /// How to reach a running box's Chromium from the server's host: the
    /// bridge's address, the header with the bridge's secret, and a fresh
    /// ticket. Asking counts as activity for the idle timeout (traffic on the
    /// bridge itself does not pass through the server).
    pub async fn bridge(&self, id: &str, ttl_secs: Option<u32>) -> Result<BridgeAccess, ApiError> {
        let entry = self.get(id)?;
        let mut record = entry.record();
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
                let name = serde_json::to_value(other)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                return Err(ApiError::new(ErrorCode::NotRunning, format!("box {id} is {name}"))
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
                record = entry.update(|r| r.bridge_secret = Some(s.clone()));
                self.persist(&record);
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

    /// Runs the deadline check once a second until the process ends.
    pub fn spawn_expiry(self: &Arc<Self>) {
        let service = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tick.tick().await;
                service.expire(now()).await;
            }
        });
    }
}

/// Gives a box taken back by a restarted server a new bridge secret, so a
/// secret handed out before the restart stops working. The bridge's address
/// is taken from the machine again (ports may have moved).
async fn rotate_bridge_secret(record: &mut BoxRecord, machine: &holm::runtime::Machine) {
    record.bridge_url =
        machine.ports.get(&holm_proto::guest::BRIDGE_PORT).map(|a| format!("http://{a}"));
    let Some(guest_url) = record.guest_url.clone() else { return };
    let secret = holm::ids::new_secret();
    record.bridge_secret = Some(secret.clone());
    if record.spec.browser == Some(false) || record.bridge_url.is_none() {
        return;
    }
    let guest = BoxClient::guest(&guest_url, &record.secret);
    match tokio::time::timeout(Duration::from_secs(5), guest.set_bridge_secret(&secret)).await {
        Ok(Ok(())) => tracing::info!(box_id = %record.id, "the bridge has a new secret"),
        // The record has the new secret; the next bridge request sets it.
        Ok(Err(e)) => {
            tracing::warn!(box_id = %record.id, error = %e, "cannot set the bridge's new secret")
        }
        Err(_) => {
            tracing::warn!(box_id = %record.id, "the guest did not take the bridge's new secret in time")
        }
    }
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
