//! Warm pools: a runtime may keep boxes of a given specification started
//! and ready (`pool` in the runtimes file), so that a create that matches
//! answers as soon as the box has its owner's secrets.
//!
//! A pooled box is a box like any other, with a record (its `pool` set), a
//! machine labelled with this server, and the state machine's own states:
//! `creating → starting → pooled`, and at a claim `pooled → starting →
//! running`. While its record names a pool, it is never shown to agents:
//! [`Service::get`] does not find it and lists skip it unless asked for
//! `all`.
//!
//! At a claim the box gets a new box secret (`PUT /v1/secret`, asked with
//! the old one, which the guest refuses from then on; the guest keeps only
//! the new one's digest). With a server key, both secrets are derived from
//! it: the pooled one from the id and a `pooled` context, the claimed one
//! exactly as a cold box's, so a server that loses its records can take a
//! claimed box back. Then, at once: a new bridge secret (which restarts the
//! bridge, ending every ticket and connection; a guest that does not take
//! it sends the create to a cold box), a new viewer key, and the record's
//! write with the create's spec, labels, placement and lifetime, counted
//! from the claim. The create is answered once all three are done. The
//! guest calls go over the client that saw the pooled box's desktop come
//! up, kept while it waits ([`Pools`]), so a claim makes no HTTP client
//! and finds a connection to the guest open; and it asks the engine
//! nothing. Its id stays the one it was made with (its machine is labelled
//! with it); nobody saw it before the claim. The pool refills in the
//! background, within the server's box limit (`HOLM_MAX_BOXES`, lowered by
//! the runtimes file's `max_boxes`).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use holm::spec::Resolved;
use holm_client::BoxClient;
use holm_proto::host::{BoxSpec, BoxState, Placement};
use holm_proto::viewer::ViewerBind;

use super::Service;
use super::errors::Error;
use super::errors::store_error;
use super::runtimes::{Offered, Planned};
use super::state::{Entry, Move};
use crate::store::BoxRecord;

/// How long a pooled box's guest may take to accept its new secret before
/// the create falls back to a cold box.
const CLAIM_TIMEOUT: Duration = Duration::from_secs(5);

/// One warm pool of a runtime: `size` boxes of `spec`.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolSpec {
    /// What its boxes are: screens, size, display, browser, apps, packages.
    pub spec: BoxSpec,
    /// How many boxes it keeps ready.
    pub size: u32,
}

/// What a create must match to take a box from a pool: everything that
/// shapes the machine and its desktop. Name, labels and lifetimes are the
/// create's own, set at the claim.
pub(super) fn pool_key(runtime: &str, r: &Resolved) -> String {
    format!(
        "{runtime}:{}x{}x{}:{:?}:browser={}:apps={}:packages={}:memory={:?}:cpus={:?}",
        r.screens,
        r.size.0,
        r.size.1,
        r.display,
        r.browser,
        r.apps.join(","),
        r.packages.join(","),
        r.memory_bytes,
        r.nano_cpus,
    )
}

/// The warm pools' own state: whether a refill runs, and each waiting
/// box's guest client. The pooled boxes themselves are boxes like any
/// other (in the boxes' map, marked by their record's `pool`), and the
/// pools wanted are the runtimes'.
///
/// Holds two locks: `refilling`, tried (never waited for) at the start of a
/// refill and held across its awaits, so refills run one at a time; and
/// `clients`, a plain mutex held for one map operation, never across an
/// await.
#[derive(Debug, Default)]
pub(super) struct Pools {
    /// Held while the warm pools are refilled.
    refilling: tokio::sync::Mutex<()>,
    /// Each waiting box's guest client, with the pooled secret: the one
    /// that saw its desktop come up, so its HTTP client is made and a
    /// connection to its guest open before a claim needs them.
    clients: std::sync::Mutex<HashMap<String, BoxClient>>,
}

impl Pools {
    /// The turn to refill the pools, unless a refill runs.
    fn refill_turn(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        self.refilling.try_lock().ok()
    }

    /// Keeps box `id`'s guest client while it waits in its pool.
    pub(super) fn keep_client(&self, id: &str, client: BoxClient) {
        self.clients.lock().unwrap_or_else(|e| e.into_inner()).insert(id.to_owned(), client);
    }

    /// Box `id`'s guest client, taken out for its claim.
    fn take_client(&self, id: &str) -> Option<BoxClient> {
        self.clients.lock().unwrap_or_else(|e| e.into_inner()).remove(id)
    }

    /// Drops the clients of boxes no longer waiting (`waiting` says).
    fn forget_clients(&self, waiting: impl Fn(&str) -> bool) {
        self.clients.lock().unwrap_or_else(|e| e.into_inner()).retain(|id, _| waiting(id));
    }
}

impl Service {
    /// The pooled box a create could take, moved out of `pooled` so no
    /// other create takes it too. A fork, a box with a browser profile and
    /// one whose viewers bind to every interface and a recorded box never
    /// take one.
    pub(super) fn take_pooled(&self, plan: &Planned) -> Option<Arc<Entry>> {
        // A recorded box records from its start, which a pooled box did not.
        if plan.forked_from.is_some() || plan.resolved.profile.is_some() || plan.resolved.record {
            return None;
        }
        // A pooled box's viewer port was published on loopback when it was
        // made; a policy that publishes it on every interface needs its own.
        let publishes = plan.spec.policy.as_ref().is_some_and(|p| p.bind == ViewerBind::Any);
        if publishes {
            return None;
        }
        if plan.offered.pools.iter().all(|p| p.size == 0) {
            return None;
        }
        let key = pool_key(&plan.runtime, &plan.resolved);
        self.boxes.find(|e| {
            let r = e.record();
            r.pool.as_deref() == Some(&key)
                && r.state == BoxState::Pooled
                && e.transition(Move::CLAIM, |_| {})
        })
    }

    /// Puts a taken box back in its pool, when its create did not use it.
    pub(super) fn put_back(&self, entry: &Entry) {
        entry.transition(Move::POOLED, |_| {});
    }

    /// Makes a create with a taken pooled box (`taken`), or a cold box when
    /// there is none or its guest does not take the new secret. The
    /// idempotency key, if any, is kept under the id the box ends with.
    pub(super) async fn create_from_pool(
        self: &Arc<Self>,
        taken: Option<Arc<Entry>>,
        plan: Planned,
        key: Option<&str>,
        fingerprint: String,
    ) -> Result<(Arc<Entry>, bool), Error> {
        let used = AtomicBool::new(false);
        let fresh = taken.as_ref().map(|e| e.id());
        let (used_ref, taken_ref) = (&used, taken.as_ref());
        let result = self
            .idempotent(key, fingerprint, fresh, move |id| async move {
                if let Some(entry) = taken_ref.filter(|e| e.id() == id) {
                    used_ref.store(true, Ordering::SeqCst);
                    match self.claim(entry, &plan).await {
                        Some(done) => return done,
                        None => self.discard(entry).await,
                    }
                }
                // The create asked the engine only when it took no box.
                if taken_ref.is_some() {
                    super::create::answers(&plan).await?;
                }
                self.insert_new(id, plan).await
            })
            .await;
        if let Some(entry) = taken.filter(|_| !used.load(Ordering::SeqCst)) {
            self.put_back(&entry);
        }
        self.spawn_refill();
        result
    }

    /// Gives a taken box its owner's secrets, spec and lifetime, and marks
    /// it running. `None`: its guest did not take the new box or bridge
    /// secret, and a cold box should be made instead.
    ///
    /// Two rounds to the guest: the new box secret (asked with the pooled
    /// one, which the guest refuses from then on), then, at once and with
    /// the new secret, the new bridge secret, the new viewer key and the
    /// record's write. The answer waits for all of them.
    async fn claim(
        self: &Arc<Self>,
        entry: &Arc<Entry>,
        plan: &Planned,
    ) -> Option<Result<Arc<Entry>, Error>> {
        let r = entry.record();
        let endpoint = r.guest.clone()?;
        // The secret a cold box of this id gets; the guest keeps only its
        // digest, and the server can work it out again from its key.
        let secret = self.new_box_secret(&r.id);
        let old =
            self.pools.take_client(&r.id).unwrap_or_else(|| BoxClient::at(&endpoint, &r.secret));
        match tokio::time::timeout(CLAIM_TIMEOUT, old.set_box_secret(&secret)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(box_id = %r.id, error = %e, "a pooled box refused its new secret");
                return None;
            }
            Err(_) => {
                tracing::warn!(box_id = %r.id, "a pooled box did not take its new secret in time");
                return None;
            }
        }
        // The same connection, with the new secret.
        let guest = old.with_secret(&secret);
        let now = self.clock.now_secs();
        // A new owner: a new bridge secret (its setting ends every ticket
        // and bridge connection) and a new viewer key (no grant made while
        // it waited opens it), and the claimed spec's name as the viewers'
        // title; its lifetime counts from the claim.
        let claimed = entry.transition(Move::READY, |r| {
            r.secret.clone_from(&secret);
            r.bridge_secret = Some(holm::ids::new_secret());
            r.viewer_key = Some(holm_http::viewer_token::new_key());
            r.viewer_grants.clear();
            r.pool = None;
            r.reason = None;
            r.spec = plan.spec.clone();
            r.placement = plan.placement.clone();
            r.created_at = now;
            r.expires_at = now.saturating_add(plan.resolved.lifetime_secs);
            r.idle_timeout_secs = plan.resolved.idle_timeout_secs;
            r.last_activity = now;
        });
        if !claimed {
            return None;
        }
        // Written before it is answered: an answered box is never lost.
        let record = entry.record();
        let write = async {
            let _one_writer = entry.write.lock().await;
            self.store.put_box(&record).await
        };
        let (bridged, (), written) = tokio::join!(
            self.arm_bridge(entry, &guest, false),
            self.arm_viewers(entry, &guest, false),
            write,
        );
        if !bridged {
            // Its pooled bridge's tickets may still work: never answered.
            return None;
        }
        if let Err(e) = written {
            return Some(Err(store_error(&e).into()));
        }
        entry.was_written(record.rev);
        tracing::info!(box_id = %record.id, "claimed a pooled box");
        Some(Ok(Arc::clone(entry)))
    }

    /// Ends a pooled box that could not be claimed: its machine, its record
    /// and its place in the server, so its id can be made anew.
    async fn discard(&self, entry: &Entry) {
        let r = entry.record();
        if let (Some(machine), Ok(offered)) = (&r.machine_id, self.runtime(&r.runtime))
            && let Err(e) = offered.runtime.remove(machine).await
        {
            tracing::warn!(box_id = %r.id, error = %e, "cannot remove a pooled box");
        }
        entry.update(|r| r.state = BoxState::Removed);
        self.boxes.remove(&r.id);
        if let Err(e) = self.store.delete_box(&r.id).await {
            tracing::warn!(box_id = %r.id, error = %e, "cannot delete a pooled box's record");
        }
    }

    /// Refills the pools in the background.
    pub(super) fn spawn_refill(self: &Arc<Self>) {
        let service = Arc::clone(self);
        tokio::spawn(async move { service.refill_pools().await });
    }

    /// Starts the boxes each pool lacks, within the server's box limit, and
    /// removes pooled boxes no pool wants any more. One refill at a time.
    pub async fn refill_pools(self: &Arc<Self>) {
        // Pools are each server's own; on a store other replicas share, two
        // could claim one pooled box, so none is kept (docs/deploy.md).
        if self.shared_store() {
            return;
        }
        let Some(_one) = self.pools.refill_turn() else { return };
        self.pools.forget_clients(|id| {
            self.boxes.get(id).is_some_and(|e| e.record().state == BoxState::Pooled)
        });
        for (name, offered) in self.runtimes.host() {
            for pool in &offered.pools {
                let Ok(resolved) = offered.resolve(&pool.spec, &Placement::default()) else {
                    continue;
                };
                let key = pool_key(name, &resolved);
                let have =
                    self.boxes.count(|r| r.pool.as_deref() == Some(&key) && r.state.is_live());
                let lacking = (pool.size as usize).saturating_sub(have);
                for _ in 0..lacking.min(self.boxes.room()) {
                    self.insert_pooled(name, offered, pool, &resolved, &key).await;
                }
            }
        }
        self.drop_unwanted_pooled().await;
    }

    /// Removes one waiting pooled box to make room for a create that
    /// cannot use it; answers whether one went. Pools never hold a create
    /// back at the server's limit.
    pub(super) async fn evict_pooled(&self) -> bool {
        let waiting: Vec<Arc<Entry>> =
            self.boxes.filter(|r| r.pool.is_some() && r.state == BoxState::Pooled);
        for entry in waiting {
            if entry.record().state == BoxState::Pooled
                && self.remove_entry(&entry, "made room for a create").await.is_ok()
            {
                return true;
            }
        }
        false
    }

    /// Records a new box for a pool and starts bringing it up. It lives at
    /// most the runtime's longest lifetime, then the pool makes another.
    async fn insert_pooled(
        self: &Arc<Self>,
        runtime: &str,
        offered: &Offered,
        pool: &PoolSpec,
        resolved: &Resolved,
        key: &str,
    ) {
        let created = self.clock.now_secs();
        let id = holm::ids::new_box_id();
        let record = BoxRecord {
            secret: self.pooled_box_secret(&id),
            id,
            runtime: runtime.to_owned(),
            machine_id: None,
            guest: None,
            spec: pool.spec.clone(),
            placement: Placement { runtime: Some(runtime.to_owned()), ..Placement::default() },
            state: BoxState::Creating,
            reason: None,
            image: None,
            screens: Vec::new(),
            created_at: created,
            expires_at: created.saturating_add(offered.lifetimes.max_secs),
            idle_timeout_secs: None,
            last_activity: created,
            forked_from: None,
            bridge: None,
            bridge_secret: Some(holm::ids::new_secret()),
            viewer: None,
            viewer_key: None,
            viewer_grants: Vec::new(),
            control_seen: None,
            pool: Some(key.to_owned()),
            guest_proto: None,
            ended_at: None,
            rev: 0,
        };
        let mut resolved = resolved.clone();
        resolved.lifetime_secs = offered.lifetimes.max_secs;
        if let Err(e) = self.launch_recorded(record, Arc::clone(&offered.runtime), resolved).await {
            tracing::warn!(runtime, error = %holm_proto::ApiError::from(e).message, "cannot start a box for a warm pool");
        }
    }

    /// Removes pooled boxes (waiting ones) beyond what their pool wants now,
    /// such as after the runtimes file shrank a pool and the server started
    /// again.
    async fn drop_unwanted_pooled(&self) {
        let mut wanted = std::collections::BTreeMap::<String, usize>::new();
        for (name, offered) in self.runtimes.host() {
            for pool in &offered.pools {
                if let Ok(r) = offered.resolve(&pool.spec, &Placement::default()) {
                    *wanted.entry(pool_key(name, &r)).or_default() += pool.size as usize;
                }
            }
        }
        let pooled: Vec<Arc<Entry>> = self.boxes.filter(|r| r.pool.is_some());
        let mut kept = std::collections::BTreeMap::<String, usize>::new();
        for entry in pooled {
            let r = entry.record();
            let Some(key) = r.pool.clone().filter(|_| r.state.is_live()) else { continue };
            let n = kept.entry(key.clone()).or_default();
            *n += 1;
            if *n > wanted.get(&key).copied().unwrap_or(0) && r.state == BoxState::Pooled {
                let _ = self.remove_entry(&entry, "its warm pool no longer wants it").await;
            }
        }
    }
}
