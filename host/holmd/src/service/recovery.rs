//! Recovery: at start, each recorded box is taken back through the runtime
//! in its record, then every runtime is scanned for boxes this server
//! labelled that the store lost. Boxes keep running while the server is down.

use std::sync::Arc;
use std::time::UNIX_EPOCH;

use holm::runtime::{
    LABEL_CREATED, LABEL_EXPIRES, LABEL_FORKED_FROM, LABEL_IDLE, LABEL_RUNTIME, LABEL_SERVER,
    LABEL_SPEC, Machine, MachineState, Runtime, RuntimeError,
};
use holm_client::BoxClient;
use holm_proto::host::{BoxSpec, BoxState, Placement};

use super::create::OnTimeout;
use super::runtimes::Offered;
use super::state::Entry;
use super::{DEFAULT_SERVER_NAME, Service};
use crate::store::{BoxRecord, StoreError};

/// How the reason of a box its runtime did not answer for begins; such a
/// box is tried again every half minute.
const RUNTIME_DOWN: &str = "its runtime does not answer: ";

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

impl Service {
    /// Takes back the boxes in the store, each through the runtime in its
    /// record, then scans every runtime for boxes this server labelled that
    /// the store does not have. Boxes keep running while the server is down.
    pub async fn recover(self: &Arc<Self>) -> Result<Recovered, StoreError> {
        let records = self.store.boxes().await?;
        let mut summary = Recovered { records: records.len(), ..Recovered::default() };
        let entries: Vec<Arc<Entry>> = records.into_iter().map(Entry::new).collect();
        self.boxes.insert_all(&entries);
        for entry in entries {
            let r = entry.record();
            if r.state.is_live() && self.carries_on_making(&r) {
                match self.take_back(&entry).await {
                    TakeBack::Found => summary.taken_back += 1,
                    TakeBack::Resumed => summary.resumed += 1,
                    TakeBack::Other => {}
                }
            }
        }
        for (name, offered) in &self.all_offered() {
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

    /// Tries again each box that is unreachable because its runtime did not
    /// answer (a vendor's outage): a runtime that answers now takes it back.
    pub async fn retake_unreachable(self: &Arc<Self>) {
        let waiting: Vec<Arc<Entry>> = self.boxes.filter(|r| {
            r.state == BoxState::Unreachable
                && r.reason.as_deref().is_some_and(|w| w.starts_with(RUNTIME_DOWN))
        });
        for entry in waiting {
            let _op = entry.op.lock().await;
            if entry.record().state == BoxState::Unreachable {
                let _ = self.take_back(&entry).await;
                if entry.record().state != BoxState::Unreachable {
                    tracing::info!(box_id = %entry.id(), state = ?entry.record().state, "its runtime answers again; took the box back");
                }
            }
        }
    }

    /// Takes back one recorded box through its runtime.
    async fn take_back(self: &Arc<Self>, entry: &Arc<Entry>) -> TakeBack {
        let r = entry.record();
        let offered = match self.runtime(&r.runtime) {
            Ok(o) => o,
            Err(e) if self.runtimes.remote(&r.runtime).is_some() => {
                let why = format!("{RUNTIME_DOWN}{}", holm_proto::ApiError::from(e).message);
                return self.unreachable(entry, why).await;
            }
            Err(_) => {
                let why = format!("its runtime {:?} is not offered by this server", r.runtime);
                return self.unreachable(entry, why).await;
            }
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
            Err(e) => return self.unreachable(entry, format!("{RUNTIME_DOWN}{e}")).await,
        };
        if r.pool.is_some() {
            return self.take_back_pooled(entry, machine, runtime).await;
        }
        let making = matches!(r.state, BoxState::Creating | BoxState::Starting);
        let machine = match machine {
            // Made but never started: a crash between the two. Make it anew.
            Some(m) if m.state == MachineState::Created && making => {
                let _ = runtime.remove(&m.id).await;
                None
            }
            other => other,
        };
        let now = self.clock.now_secs();
        let Some(m) = machine.filter(|m| m.state != MachineState::Gone) else {
            if making {
                return self.resume_making(entry, &offered).await;
            }
            entry.update(|r| {
                r.state = BoxState::Removed;
                r.reason = Some("its machine was gone when the server started".into());
                r.ended_at = Some(now);
                r.guest = None;
            });
            self.save(entry).await;
            return TakeBack::Other;
        };
        self.found(entry, &m, making, runtime).await
    }

    /// Takes back a warm pool's box: one that waited in its pool waits
    /// again once its desktop answers; one being made or claimed when the
    /// server stopped is removed (its pool makes another).
    async fn take_back_pooled(
        self: &Arc<Self>,
        entry: &Arc<Entry>,
        machine: Option<Machine>,
        runtime: Arc<dyn Runtime>,
    ) -> TakeBack {
        let r = entry.record();
        let running = machine.as_ref().filter(|m| m.state == MachineState::Running);
        if let (BoxState::Pooled, Some(m)) = (r.state, running) {
            entry.update(|r| {
                r.state = BoxState::Starting;
                r.guest = m.guest().cloned();
                r.bridge = m.bridge().cloned();
            });
            self.save(entry).await;
            let service = Arc::clone(self);
            let entry = Arc::clone(entry);
            tokio::spawn(async move {
                service.await_desktop(&entry, &runtime, OnTimeout::Fail).await;
            });
            return TakeBack::Resumed;
        }
        if let Some(m) = &machine {
            let _ = runtime.remove(&m.id).await;
        }
        entry.update(|r| {
            r.state = BoxState::Removed;
            r.reason = Some("a warm pool's box the server was making when it stopped".into());
            r.guest = None;
        });
        self.save(entry).await;
        TakeBack::Other
    }

    /// Marks a box the server cannot reach through its runtime, keeping it.
    async fn unreachable(&self, entry: &Entry, why: String) -> TakeBack {
        entry.update(|r| {
            r.state = BoxState::Unreachable;
            r.reason = Some(why);
        });
        self.save(entry).await;
        TakeBack::Other
    }

    /// Takes back a box whose machine the runtime reported, in the state the
    /// machine is in, at the endpoints the runtime answered now.
    async fn found(
        self: &Arc<Self>,
        entry: &Arc<Entry>,
        m: &Machine,
        making: bool,
        runtime: Arc<dyn Runtime>,
    ) -> TakeBack {
        // Downtime is not idleness: the idle clock starts again. Not on a
        // shared store, whose other replicas served the box meanwhile.
        let restart_idle = if self.shared_store() { 0 } else { self.clock.now_secs() };
        entry.update(|r| {
            r.machine_id = Some(m.id.clone());
            // Endpoints may have moved; a paused box's bridge is read again
            // here and armed when it runs.
            r.bridge = m.bridge().cloned();
            r.viewer = m.viewer().cloned();
            r.reason = None;
            r.last_activity = r.last_activity.max(restart_idle);
            (r.state, r.guest) = match m.state {
                MachineState::Running if making => (BoxState::Starting, m.guest().cloned()),
                MachineState::Running => (BoxState::Running, m.guest().cloned()),
                MachineState::Paused => (BoxState::Paused, r.guest.take()),
                _ => (BoxState::Stopped, None),
            };
        });
        let r = entry.record();
        if r.state == BoxState::Running
            && let Some(endpoint) = &r.guest
        {
            let guest = BoxClient::at(endpoint, &r.secret);
            // A box that outlived the server it was made by may have a
            // guest of another protocol: drive it only if this server can.
            if let Ok(health) = guest.health().await {
                if let Err(why) = holm_proto::guest::proto_supported(health.proto) {
                    tracing::warn!(box_id = %r.id, proto = health.proto, "{why}");
                    return self.unreachable(entry, why).await;
                }
                entry.update(|r| r.guest_proto = Some(health.proto));
            }
            // A secret handed out before the restart stops working; not on
            // a shared store, where the other replicas still serve it.
            self.arm_bridge(entry, &guest, !self.shared_store()).await;
            // The same desktop: its viewer URLs keep working.
            self.arm_viewers(entry, &guest, false).await;
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
                    r.guest = None;
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
        if m.labels.get(LABEL_RUNTIME).is_some_and(|r| r != runtime_name && self.takes(r)) {
            return Scanned::NotOurs;
        }
        if self.any_box(&id).is_none() && self.leave_alone(&id).await {
            return Scanned::Known;
        }
        if let Some(entry) = self.any_box(&id) {
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
        self.adopt(runtime_name, offered, &m, id).await
    }

    /// Records again a box this server labelled that the store lost, from
    /// its labels and the secret the server key gives it. No box holds its
    /// secret (only its digest), so it is worked out again, and checked.
    async fn adopt(
        &self,
        runtime_name: &str,
        offered: &Offered,
        m: &Machine,
        id: String,
    ) -> Scanned {
        let secret = match (self.derived_box_secret(&id), m.state, m.guest()) {
            (Some(s), MachineState::Running, Some(endpoint)) => {
                match BoxClient::at(endpoint, &s).screens().await {
                    Ok(_) => Some(s),
                    Err(e) => {
                        tracing::warn!(box_id = %id, error = %e, "a labelled box does not take the secret this server's key gives");
                        None
                    }
                }
            }
            (s, _, _) => s,
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
        let expires_at = time(LABEL_EXPIRES)
            .unwrap_or_else(|| created_at.saturating_add(offered.lifetimes.default_secs));
        let idle = label(LABEL_IDLE).and_then(|v| v.parse::<u64>().ok());
        let spec: BoxSpec =
            label(LABEL_SPEC).and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default();
        let (state, reason) = match (&secret, m.state) {
            (None, _) => (
                BoxState::Unreachable,
                Some(
                    "the server lost its record, and its key (HOLM_SERVER_SECRET_FILE or \
                     HOLM_SERVER_SECRET_KEY) does not give the box's secret; remove the box"
                        .to_owned(),
                ),
            ),
            (Some(_), MachineState::Running) => (BoxState::Running, None),
            (Some(_), MachineState::Paused) => (BoxState::Paused, None),
            (Some(_), _) => (BoxState::Stopped, None),
        };
        let record = BoxRecord {
            id: id.clone(),
            runtime: runtime_name.to_owned(),
            machine_id: Some(m.id.clone()),
            guest: m.guest().filter(|_| state == BoxState::Running).cloned(),
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
            bridge: m.bridge().cloned(),
            bridge_secret: None,
            viewer: m.viewer().cloned(),
            viewer_key: None,
            viewer_grants: Vec::new(),
            control_seen: None,
            pool: None,
            guest_proto: None,
            ended_at: None,
            rev: 0,
        };
        let entry = Entry::new(record);
        if let Some(endpoint) = &entry.record().guest {
            let guest = BoxClient::at(endpoint, &entry.record().secret);
            self.arm_bridge(&entry, &guest, true).await;
            self.arm_viewers(&entry, &guest, true).await;
        }
        self.save(&entry).await;
        self.boxes.insert(entry);
        tracing::info!(box_id = %id, runtime = runtime_name, "took back a labelled box the store did not have");
        Scanned::Adopted
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
