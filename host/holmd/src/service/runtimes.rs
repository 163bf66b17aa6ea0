//! The host runtimes the server offers, and checking a box against one.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use holm::runtime::Runtime;
use holm::spec::{self, Lifetimes};
use holm_proto::host::{BoxSpec, Can, Placement, RuntimeInfo, RuntimeState};
use holm_proto::{ApiError, Issue};

use super::Service;
use super::errors::Error;
use super::remotes::{Remote, RemoteSetup};
use crate::store::BoxRecord;

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
    /// The warm pools it keeps (none by default).
    pub pools: Vec<super::PoolSpec>,
}

impl Offered {
    /// `runtime` with the lifetimes it offers itself, and no default memory
    /// or CPUs.
    pub fn new(runtime: Arc<dyn Runtime>) -> Self {
        let lifetimes = runtime.lifetimes().offered;
        Self { runtime, lifetimes, memory_bytes: None, nano_cpus: None, pools: Vec::new() }
    }

    /// Sets the default lifetime, the maximum, or both (the runtimes file's
    /// `lifetime` and `max_lifetime`). A maximum above the runtime's own hard
    /// limit is refused, naming the field that asked for it.
    pub fn with_lifetimes(
        mut self,
        default: Option<u64>,
        max: Option<u64>,
    ) -> Result<Self, (&'static str, String)> {
        let lifetimes = lifetimes_with(self.lifetimes, default, max);
        if let Some(hard) = self.runtime.lifetimes().hard_max_secs
            && lifetimes.max_secs > hard
        {
            let field = if max.is_some() { "max_lifetime" } else { "lifetime" };
            return Err((
                field,
                format!(
                    "a lifetime of {} seconds is more than the {} runtime allows: its boxes live at most {hard} seconds",
                    lifetimes.max_secs,
                    self.runtime.name()
                ),
            ));
        }
        self.lifetimes = lifetimes;
        Ok(self)
    }

    /// Checks a spec and placement on this runtime, with its defaults.
    pub(super) fn resolve(
        &self,
        spec: &BoxSpec,
        placement: &Placement,
    ) -> Result<spec::Resolved, Vec<Issue>> {
        let mut r = spec::resolve(spec, placement, &self.runtime.can(), self.lifetimes)?;
        // The runtime's own rules (a vendor's memory and CPUs), before
        // anything starts.
        self.runtime.check(&r)?;
        if self.runtime.can().resources {
            r.memory_bytes = r.memory_bytes.or(self.memory_bytes);
            r.nano_cpus = r.nano_cpus.or(self.nano_cpus);
        }
        Ok(r)
    }
}

impl Offered {
    /// Checks a warm pool's spec on this runtime, as a create's would be.
    pub fn check_pool(&self, pool: &super::PoolSpec) -> Result<(), String> {
        let r = self.resolve(&pool.spec, &Placement::default()).map_err(|issues| {
            issues
                .iter()
                .map(|i| format!("{}: {}", i.path, i.problem))
                .collect::<Vec<_>>()
                .join("; ")
        })?;
        holm::image::ImageRequest::new(r.apps.iter().cloned(), r.packages.iter().cloned())
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

/// Lifetimes with a default and a maximum set: a default above the old
/// maximum raises it, a maximum below the old default lowers it.
pub fn lifetimes_with(base: Lifetimes, default: Option<u64>, max: Option<u64>) -> Lifetimes {
    let max_secs = max.unwrap_or_else(|| base.max_secs.max(default.unwrap_or(0)));
    let default_secs = default.unwrap_or_else(|| base.default_secs.min(max_secs));
    Lifetimes { default_secs, max_secs }
}

/// A box checked against its runtime, ready to be made.
#[derive(Debug, Clone)]
pub(super) struct Planned {
    /// The runtime's name.
    pub runtime: String,
    pub offered: Offered,
    pub spec: BoxSpec,
    pub placement: Placement,
    pub resolved: spec::Resolved,
    /// The box whose files the new box copies.
    pub forked_from: Option<String>,
}

/// The runtimes the server offers: the host runtimes and the default's
/// name (both fixed when the server starts), and the remote runtimes (the
/// vendor accounts, [`super::remotes`]) with what sets them up.
///
/// Locks, in the order they nest: `registry` (a tokio mutex, held across a
/// whole change of a remote runtime, its store write included), then
/// `remotes` (a read-write lock held for one read or one change, never
/// across an await).
#[derive(Debug)]
pub(super) struct Runtimes {
    /// The host runtimes, by name.
    host: BTreeMap<String, Offered>,
    /// The runtime of a box that names none.
    default: String,
    /// The remote runtimes, by name.
    remotes: RwLock<BTreeMap<String, Remote>>,
    /// Remote runtimes' keys and sources.
    setup: RemoteSetup,
    /// Serializes changes to remote runtimes.
    registry: tokio::sync::Mutex<()>,
}

impl Runtimes {
    /// The host runtimes `host`, `default` the runtime of boxes that name
    /// none, and no remote runtime yet.
    pub(super) fn new(
        host: BTreeMap<String, Offered>,
        default: String,
        setup: RemoteSetup,
    ) -> Self {
        Self {
            host,
            default,
            remotes: RwLock::new(BTreeMap::new()),
            setup,
            registry: tokio::sync::Mutex::new(()),
        }
    }

    /// The host runtimes, by name.
    pub(super) fn host(&self) -> &BTreeMap<String, Offered> {
        &self.host
    }

    /// Whether `name` is a host runtime.
    pub(super) fn is_host(&self, name: &str) -> bool {
        self.host.contains_key(name)
    }

    /// The default runtime's name.
    pub(super) fn default_name(&self) -> &str {
        &self.default
    }

    /// What sets remote runtimes up: the server key, the environment's
    /// runtimes, the runtimes file's lifetimes and endpoints.
    pub(super) fn setup(&self) -> &RemoteSetup {
        &self.setup
    }

    /// The remote runtimes, read.
    pub(super) fn remotes(&self) -> RwLockReadGuard<'_, BTreeMap<String, Remote>> {
        self.remotes.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The remote runtimes, to change; under [`Runtimes::registry_turn`]
    /// (or while the server starts).
    pub(super) fn remotes_mut(&self) -> RwLockWriteGuard<'_, BTreeMap<String, Remote>> {
        self.remotes.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The turn to change remote runtimes: one change at a time.
    pub(super) async fn registry_turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.registry.lock().await
    }

    /// A remote runtime by name, as held now.
    pub(super) fn remote(&self, name: &str) -> Option<Remote> {
        self.remotes().get(name).cloned()
    }

    /// The names of the runtimes offered, host and remote.
    pub(super) fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.host.keys().cloned().collect();
        names.extend(self.remotes().keys().cloned());
        names.sort();
        names
    }

    /// A runtime that takes boxes, by name: a host runtime, or a remote one
    /// whose key opened and whose vendor this build has.
    pub(super) fn get(&self, name: &str) -> Result<Offered, Error> {
        if let Some(offered) = self.host.get(name) {
            return Ok(offered.clone());
        }
        match self.remote(name) {
            Some(remote) => remote.offered().ok_or_else(|| self.remote_refusal(&remote).into()),
            None => Err(self.unknown(name)),
        }
    }

    /// The refusal of a runtime name the server does not know.
    pub(super) fn unknown(&self, name: &str) -> Error {
        Error::UnknownRuntime { name: name.to_owned(), known: self.names() }
    }

    /// Whether the server reaches boxes on the runtime `name` now.
    pub(super) fn takes(&self, name: &str) -> bool {
        self.host.contains_key(name) || self.remote(name).is_some_and(|r| r.offered().is_some())
    }

    /// Every runtime that takes boxes, host and remote, by name.
    pub(super) fn all_offered(&self) -> Vec<(String, Offered)> {
        let mut out: Vec<(String, Offered)> =
            self.host.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let remotes = self.remotes();
        out.extend(remotes.iter().filter_map(|(k, r)| Some((k.clone(), r.offered()?))));
        out
    }
}

impl Service {
    /// The names of the runtimes offered, host and remote.
    pub fn runtime_names(&self) -> Vec<String> {
        self.runtimes.names()
    }

    pub(super) fn unknown_runtime(&self, name: &str) -> Error {
        self.runtimes.unknown(name)
    }

    /// A runtime that takes boxes, by name: a host runtime, or a remote one
    /// whose key opened and whose vendor this build has.
    pub fn runtime(&self, name: &str) -> Result<Offered, Error> {
        self.runtimes.get(name)
    }

    /// Whether the server reaches boxes on the runtime `name` now.
    pub(super) fn takes(&self, name: &str) -> bool {
        self.runtimes.takes(name)
    }

    /// Every runtime that takes boxes, host and remote, by name.
    pub(super) fn all_offered(&self) -> Vec<(String, Offered)> {
        self.runtimes.all_offered()
    }

    /// The default runtime's name.
    pub fn default_runtime(&self) -> &str {
        self.runtimes.default_name()
    }

    /// Describes a runtime, asking its engine whether it answers.
    pub async fn runtime_info(&self, name: &str) -> Result<RuntimeInfo, Error> {
        if !self.runtimes.is_host(name)
            && let Some(remote) = self.runtimes.remote(name)
        {
            let state = Runtimes::remote_state(&remote).await;
            return Ok(self.runtimes.remote_info(&remote, state));
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
            default: name == self.runtimes.default_name(),
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
        for name in self.runtimes.host().keys() {
            if let Ok(info) = self.runtime_info(name).await {
                out.push(info);
            }
        }
        let remotes: Vec<_> = self.runtimes.remotes().values().cloned().collect();
        for remote in remotes {
            let state = Runtimes::remote_state(&remote).await;
            out.push(self.runtimes.remote_info(&remote, state));
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Checks a box against the runtime its placement names (or the
    /// default), before anything is made.
    pub(super) fn plan(&self, spec: BoxSpec, placement: Placement) -> Result<Planned, Error> {
        let name =
            placement.runtime.clone().unwrap_or_else(|| self.runtimes.default_name().to_owned());
        let offered = self.runtime(&name)?;
        let resolved = offered.resolve(&spec, &placement).map_err(ApiError::invalid_fields)?;
        holm::image::ImageRequest::new(
            resolved.apps.iter().cloned(),
            resolved.packages.iter().cloned(),
        )
        .map(|r| r.with_display(resolved.display))
        .map_err(|e| {
            let path = format!("spec.{}", e.field().unwrap_or("apps"));
            ApiError::invalid_fields(vec![Issue { path, problem: e.to_string() }])
        })?;
        Ok(Planned { runtime: name, offered, spec, placement, resolved, forked_from: None })
    }

    /// The runtime of a box, after checking that it can do `what`. Checked
    /// before anything changes.
    pub(super) fn able(
        &self,
        record: &BoxRecord,
        can: impl Fn(&Can) -> bool,
        what: &'static str,
    ) -> Result<Arc<dyn Runtime>, Error> {
        let offered = self.runtime(&record.runtime)?;
        if !can(&offered.runtime.can()) {
            return Err(Error::RuntimeCannot {
                runtime: record.runtime.clone(),
                what,
                can: offered.runtime.can(),
            });
        }
        Ok(Arc::clone(&offered.runtime))
    }
}
