//! The boxes a server holds, and what can happen to them. No HTTP here: the
//! REST routes (and MCP over them) are frontends over [`Service`].
//!
//! The parts, by concern:
//! - [`state`]: the state machine (which request each state admits, and
//!   every move), and [`Entry`], the one box that moves through it;
//! - `boxes`: the boxes held, by id, within the box limit;
//! - `runtimes`: the host runtimes offered, and checking a box against one;
//! - `create`: making boxes (create, fork) and bringing them up;
//! - `lifecycle`: stop, start, pause, resume, extend, remove;
//! - `progress`: the stages of a box's latest bringing up, followed;
//! - `idempotency`: keys written before their box;
//! - `expiry`: the idle clock and removal at the deadline;
//! - `disk`: the watch that stops a box past its `placement.disk`;
//! - `traces`: the trace queue and its reading;
//! - `recovery`: taking boxes back when a server starts;
//! - `bridge`: the Chromium bridge's secret and access;
//! - `remotes`: the registry of remote runtimes;
//! - `viewers`: viewer and takeover URLs, the viewer key, and the handoff.
//! - `pool`: warm pools, their claims and refills;
//! - `fleet`: catching up with replicas that share the store.
//!
//! [`Service`] composes components that own their state, each a struct with
//! private fields in the file of its concern, whose doc says which locks it
//! holds and in which order: `Boxes`, `Runtimes` (with `remotes`),
//! `Expiry`, `Timeline`, `Pools`, `Builds` (in `limits`), `Recordings`.
//! `Service` itself keeps the shared handles (store, clock), the server's
//! name and [`Limits`], and the operations that cross components.
//!
//! Every box has a deadline (its lifetime, and with an idle timeout, the
//! last command plus it), read through a [`Clock`]. At the deadline the box
//! is removed, even while requests to it run, and its record says why.

mod agent;
mod boxes;
mod bridge;
mod control;
mod create;
mod disk;
mod errors;
mod expiry;
mod fleet;
mod idempotency;
mod lifecycle;
mod limits;
mod pool;
mod progress;
mod recordings;
mod recovery;
mod remotes;
mod runtimes;
pub mod state;
mod timeline;
mod traces;
mod viewers;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use holm_proto::guest::Page;
use holm_proto::host::{BoxInfo, BoxState, ListBoxes};
use holm_proto::{ApiError, Issue};

use self::boxes::Boxes;
pub use self::errors::{Error, Part, runtime_error};
use self::expiry::Expiry;
pub use self::idempotency::fingerprint;
use self::limits::Builds;
pub use self::limits::Limits;
pub use self::pool::PoolSpec;
use self::pool::Pools;
use self::recordings::Recordings;
pub use self::recovery::Recovered;
pub use self::remotes::RemoteSetup;
use self::runtimes::Runtimes;
pub use self::runtimes::{Offered, lifetimes_with};
pub use self::state::Entry;
use self::timeline::Timeline;
use crate::clock::Clock;
use crate::store::{BoxRecord, Store, StoreError};

/// The server name of a server that sets none; boxes without a server label
/// (made before servers had names) belong to it.
pub const DEFAULT_SERVER_NAME: &str = "holmd";

/// How often boxes a runtime did not answer for are tried again, in seconds.
const RETAKE_EVERY_SECS: u64 = 30;

/// How long `wait_for` may wait at most.
pub const MAX_WAIT_SECS: u64 = 900;

/// The server's boxes and runtimes: the components, composed, and the
/// operations that cross them (create, remove, recover, flush, …).
///
/// Locks nest in one order: a component's turn (the idempotency turn, the
/// registry, the timeline's write, the refill) before the boxes' map, the
/// boxes' map before the remote runtimes, both before an [`Entry`]'s own.
#[derive(Debug)]
pub struct Service {
    /// The runtimes offered, host and remote.
    runtimes: Runtimes,
    /// The label of this server's boxes: read by create and recovery.
    server_name: String,
    /// The boxes, by id.
    boxes: Boxes,
    /// Where records are kept: shared, as nearly every concern writes.
    store: Arc<dyn Store>,
    /// Where time comes from.
    clock: Arc<dyn Clock>,
    /// The traces and screenshots waiting for the store.
    timeline: Timeline,
    /// The idle clock's moved deadlines, what runtimes were told, and
    /// failed removals.
    expiry: Expiry,
    /// What this server takes on (its most live boxes, pooled ones
    /// counted, among them).
    limits: Limits,
    /// The image builds that may run at once.
    builds: Builds,
    /// The warm pools' refill.
    pools: Pools,
    /// Removed boxes' recordings.
    recordings: Recordings,
    /// Whether other replicas share the store (`HOLM_SHARED_STORE`).
    shared_store: bool,
}

/// What a service is made of.
#[derive(Debug)]
pub struct Parts {
    /// The host runtimes, by name.
    pub runtimes: BTreeMap<String, Offered>,
    /// The runtime of a box that names none.
    pub default_runtime: String,
    /// Where records are kept.
    pub store: Arc<dyn Store>,
    /// Where time comes from.
    pub clock: Arc<dyn Clock>,
    /// The label of this server's boxes (`HOLM_SERVER_NAME`).
    pub server_name: String,
    /// Remote runtimes' keys and sources.
    pub remote_setup: RemoteSetup,
    /// What the server takes on. Its `max_boxes` is the one box limit:
    /// `HOLM_MAX_BOXES`, lowered by the runtimes file's `max_boxes` (see
    /// [`Limits::with_file_max_boxes`]).
    pub limits: Limits,
    /// Whether other replicas share the store (`HOLM_SHARED_STORE`; see
    /// `service::fleet`).
    pub shared_store: bool,
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
        Self::from_parts(Parts {
            runtimes,
            default_runtime,
            store,
            clock,
            server_name,
            remote_setup: RemoteSetup::default(),
            limits: Limits::default(),
            shared_store: false,
        })
    }

    /// A service of `parts`, with remote runtimes set up by its
    /// `remote_setup`; [`Service::load_remotes`] reads the stored ones.
    pub fn from_parts(parts: Parts) -> Arc<Self> {
        let timeline = Timeline::new(Arc::clone(&parts.store), &parts.limits);
        Arc::new(Self {
            runtimes: Runtimes::new(parts.runtimes, parts.default_runtime, parts.remote_setup),
            server_name: parts.server_name,
            boxes: Boxes::new(parts.limits.max_boxes),
            store: parts.store,
            clock: parts.clock,
            timeline,
            expiry: Expiry::default(),
            builds: Builds::new(parts.limits.max_builds),
            limits: parts.limits,
            pools: Pools::default(),
            recordings: Recordings::new(parts.limits.recordings_bytes),
            shared_store: parts.shared_store,
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

    /// Writes the newest copy of a box's record. A failure is logged: the
    /// box goes on, and the next write carries the change. A write the
    /// store refuses because the box is removed there (through another
    /// replica) takes the removal.
    async fn save(&self, entry: &Entry) {
        let _one_writer = entry.write.lock().await;
        let record = entry.record();
        match self.store.put_box(&record).await {
            Ok(()) => entry.was_written(record.rev),
            Err(StoreError::Removed { .. }) => self.took_removal(entry).await,
            Err(e) => {
                tracing::error!(box_id = %record.id, error = %e, "cannot write the box record");
            }
        }
    }

    /// A box by id; never one a warm pool holds.
    pub fn get(&self, id: &str) -> Result<Arc<Entry>, Error> {
        self.any_box(id).filter(|e| e.record().pool.is_none()).ok_or_else(|| no_such_box(id, ""))
    }

    /// A box by id, a pooled one too.
    fn any_box(&self, id: &str) -> Option<Arc<Entry>> {
        self.boxes.get(id)
    }

    /// Whether the server holds a box with this id.
    pub fn has(&self, id: &str) -> bool {
        self.boxes.contains(id)
    }

    /// Every record the server holds, pooled and ended boxes' too, secrets
    /// and all: for the test kit, which looks for each secret in the logs.
    pub fn records(&self) -> Vec<crate::store::BoxRecord> {
        self.boxes.records()
    }

    /// Waits until the box is in `target` (or can no longer get there), at
    /// most `timeout`. On a shared store, until that copy is written too,
    /// so another replica asked next answers it the same.
    pub async fn wait(&self, entry: &Entry, target: BoxState, timeout: Duration) -> BoxInfo {
        let mut rx = entry.subscribe();
        let done = |s: &BoxState| wait_is_over(target, *s);
        let waited = async {
            let _ = rx.wait_for(done).await;
            if self.shared_store {
                entry.until_written().await;
            }
        };
        let _ = tokio::time::timeout(timeout, waited).await;
        entry.info()
    }

    /// One page of boxes that are not removed, oldest first.
    pub fn list(&self, query: &ListBoxes) -> Result<Page<BoxInfo>, Error> {
        let limit = query.limit.unwrap_or(50);
        if !(1..=100).contains(&limit) {
            return Err(ApiError::invalid_fields(vec![Issue {
                path: "limit".into(),
                problem: format!("must be 1 to 100, not {limit}"),
            }])
            .into());
        }
        let mut all: Vec<BoxRecord> = self.boxes.records();
        let pooled_too = query.all == Some(true);
        all.retain(|r| {
            r.state != BoxState::Removed
                && query.state.is_none_or(|s| s == r.state)
                && (pooled_too || r.pool.is_none())
        });
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

    /// Runs the deadline check, the writer, the warm pools' refill and the
    /// control watchers' start once a second, and forgets old idempotency keys every hour, until the
    /// process ends. Beside it, at its own pace (a measurement can take a
    /// while), the disk watch ([`Limits::disk_check`]).
    pub fn spawn_background(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let service = Arc::clone(self);
        let disk = Arc::clone(self);
        let disk_watch = async move {
            let mut tick =
                tokio::time::interval(disk.limits.disk_check.max(Duration::from_millis(100)));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let round = std::panic::AssertUnwindSafe(disk.watch_disk());
                if futures_util::FutureExt::catch_unwind(round).await.is_err() {
                    tracing::error!("a round of the disk watch failed; the next goes on");
                }
            }
        };
        let rounds = async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut n: u64 = 0;
            loop {
                tick.tick().await;
                // One round that panics (a bug, a record no check foresaw)
                // is logged; the next second's round runs as ever, so no
                // single record can stop expiry for every box.
                let round = async {
                    service.sync_fleet().await;
                    service.expire_due().await;
                    service.flush().await;
                    service.spawn_refill();
                    service.watch_control();
                    if n.is_multiple_of(3600) {
                        service.purge_idempotency().await;
                        service.prune_records().await;
                        service.prune_timelines().await;
                    }
                    if n > 0 && n.is_multiple_of(RETAKE_EVERY_SECS) {
                        service.retake_unreachable().await;
                    }
                };
                if let Err(panic) =
                    futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(round)).await
                {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    tracing::error!(panic = %what, "a round of expiry failed; the next goes on");
                }
                n = n.wrapping_add(1);
            }
        };
        tokio::spawn(async move {
            tokio::join!(rounds, disk_watch);
        })
    }

    /// A new box's secret: derived from the server key when there is one
    /// (so a server that loses its records can take the box back), else
    /// random.
    pub(crate) fn new_box_secret(&self, id: &str) -> String {
        self.derived_box_secret(id).unwrap_or_else(holm::ids::new_secret)
    }

    /// The secret a box waiting in a warm pool has until a create claims
    /// it: derived apart from the one it is given at the claim
    /// ([`Self::new_box_secret`]), so whatever held the first stops working.
    pub(crate) fn pooled_box_secret(&self, id: &str) -> String {
        self.derived_box_secret(&format!("{id}\0pooled")).unwrap_or_else(holm::ids::new_secret)
    }

    /// The secret the server key gives box `id`, if the server has a key.
    pub(crate) fn derived_box_secret(&self, id: &str) -> Option<String> {
        let key = self.runtimes.setup().secret_key.as_ref()?;
        Some(holm::ids::derived_secret(&key.box_key(), id))
    }

    /// Writes everything still held in memory, before the server stops.
    pub async fn close(&self) {
        self.flush().await;
        if let Err(e) = self.store.flush().await {
            tracing::error!(error = %e, "cannot flush the store");
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

/// The refusal of an id that names no box; `why` adds to the message.
pub fn no_such_box(id: &str, why: &'static str) -> Error {
    Error::NoSuchBox { id: id.to_owned(), why }
}

/// Whether a wait for `target` is over with the box in `state`: it is
/// there, it can change no more (failed, removed), it is unreachable while
/// `running` is awaited, or `target` is a state it can never come back to
/// (`creating` and `pooled` are only ever before a box is first handed
/// out), so waiting would only wait out the whole timeout.
fn wait_is_over(target: BoxState, state: BoxState) -> bool {
    state == target
        || !state.is_live()
        || (target == BoxState::Running && state == BoxState::Unreachable)
        || (target == BoxState::Creating && state != BoxState::Creating)
        || (target == BoxState::Pooled
            && !matches!(state, BoxState::Creating | BoxState::Starting | BoxState::Pooled))
}

#[cfg(test)]
mod wait_tests {
    use super::*;

    #[test]
    fn a_wait_for_a_state_the_box_cannot_reach_again_is_over_at_once() {
        use BoxState as S;
        assert!(wait_is_over(S::Running, S::Running));
        assert!(!wait_is_over(S::Running, S::Starting));
        assert!(wait_is_over(S::Running, S::Unreachable));
        assert!(wait_is_over(S::Stopped, S::Removed));
        // A running box never creates again, nor goes back to its pool.
        assert!(wait_is_over(S::Creating, S::Running));
        assert!(wait_is_over(S::Pooled, S::Stopped));
        assert!(!wait_is_over(S::Pooled, S::Creating));
        // A pool's box starts on its way to its pool.
        assert!(!wait_is_over(S::Pooled, S::Starting));
        // But it may stop, or start again.
        assert!(!wait_is_over(S::Stopped, S::Running));
        assert!(!wait_is_over(S::Starting, S::Stopped));
    }
}
