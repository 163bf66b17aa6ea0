//! The boxes a server holds, by id: every box, pooled and ended ones too,
//! each an [`Entry`] that moves through the state machine
//! ([`super::state`]). The map admits a new box only within the server's
//! box limit, checked under the same lock that inserts it.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use holm_proto::{ApiError, ErrorCode};

use super::errors::Error;
use super::state::Entry;
use crate::store::BoxRecord;

/// The boxes the server holds, and the turn to record a box under an
/// idempotency key.
///
/// Locks, in the order they nest: `idempotency` (a tokio mutex, held across
/// the key's lookup, the key's write and the new box's insert), then
/// `entries` (a read-write lock held for one look or one change, never
/// across an await; a filter run under it may read the runtimes'
/// `remotes`, never the other way round), then each [`Entry`]'s own lock.
#[derive(Debug)]
pub(super) struct Boxes {
    /// Every box the server holds, by id.
    entries: RwLock<BTreeMap<String, Arc<Entry>>>,
    /// The most live boxes (not removed or failed), pooled ones counted.
    max_live: usize,
    /// Held while an idempotency key is looked up and its box recorded.
    idempotency: tokio::sync::Mutex<()>,
}

impl Boxes {
    /// No boxes yet; at most `max_live` live at once.
    pub(super) fn new(max_live: usize) -> Self {
        Self {
            entries: RwLock::new(BTreeMap::new()),
            max_live,
            idempotency: tokio::sync::Mutex::new(()),
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, BTreeMap<String, Arc<Entry>>> {
        self.entries.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, BTreeMap<String, Arc<Entry>>> {
        self.entries.write().unwrap_or_else(|e| e.into_inner())
    }

    /// A box by id, a pooled one too.
    pub(super) fn get(&self, id: &str) -> Option<Arc<Entry>> {
        self.read().get(id).cloned()
    }

    /// Whether the server holds a box with this id.
    pub(super) fn contains(&self, id: &str) -> bool {
        self.read().contains_key(id)
    }

    /// Every box's record.
    pub(super) fn records(&self) -> Vec<BoxRecord> {
        self.read().values().map(|e| e.record()).collect()
    }

    /// The boxes whose record satisfies `f`, in id order.
    pub(super) fn filter(&self, f: impl Fn(&BoxRecord) -> bool) -> Vec<Arc<Entry>> {
        self.read().values().filter(|e| f(&e.record())).cloned().collect()
    }

    /// The first box, in id order, for which `f` answers true; `f` may
    /// move the box's state (it runs under the map's read lock).
    pub(super) fn find(&self, f: impl FnMut(&&Arc<Entry>) -> bool) -> Option<Arc<Entry>> {
        self.read().values().find(f).cloned()
    }

    /// How many boxes' records satisfy `f`.
    pub(super) fn count(&self, f: impl Fn(&BoxRecord) -> bool) -> usize {
        self.read().values().filter(|e| f(&e.record())).count()
    }

    /// How many more boxes the box limit allows.
    pub(super) fn room(&self) -> usize {
        self.max_live.saturating_sub(self.count(|r| r.state.is_live()))
    }

    /// The refusal of a box beyond the server's box limit.
    pub(super) fn at_limit(&self) -> ApiError {
        self.limit_reached(self.count(|r| r.state.is_live()))
    }

    fn limit_reached(&self, live: usize) -> ApiError {
        let max = self.max_live;
        ApiError::new(
            ErrorCode::LimitReached,
            format!("this server has {live} boxes, its most ({max}); no more are made"),
        )
        .with_hint(
            "remove boxes you no longer need, or raise HOLM_MAX_BOXES (and the runtimes file's \
             max_boxes, if it sets one); boxes waiting in warm pools count",
        )
        .with_details(serde_json::json!({ "limit": max, "live": live }))
    }

    /// Inserts a new box when the server has room for it and `check`
    /// (given every box's record) lets it in: checked and inserted under
    /// one lock, so two requests cannot both pass.
    pub(super) fn admit(
        &self,
        entry: Arc<Entry>,
        check: impl FnOnce(&[BoxRecord]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut entries = self.write();
        let records: Vec<BoxRecord> = entries.values().map(|e| e.record()).collect();
        let live = records.iter().filter(|r| r.state.is_live()).count();
        if live >= self.max_live {
            return Err(self.limit_reached(live).into());
        }
        check(&records)?;
        entries.insert(entry.id(), entry);
        Ok(())
    }

    /// Inserts a box taken back (recovery), without the box limit.
    pub(super) fn insert(&self, entry: Arc<Entry>) {
        self.write().insert(entry.id(), entry);
    }

    /// Inserts a box read from a shared store unless one with its id is
    /// held already; answers the box held.
    pub(super) fn insert_new(&self, entry: Arc<Entry>) -> Arc<Entry> {
        Arc::clone(self.write().entry(entry.id()).or_insert(entry))
    }

    /// Inserts the boxes read from the store (recovery) at once, without
    /// the box limit.
    pub(super) fn insert_all(&self, all: &[Arc<Entry>]) {
        let mut entries = self.write();
        for entry in all {
            entries.insert(entry.id(), Arc::clone(entry));
        }
    }

    /// Forgets a box.
    pub(super) fn remove(&self, id: &str) {
        self.write().remove(id);
    }

    /// The turn to look up an idempotency key and record its box: one at
    /// a time.
    pub(super) async fn idempotency_turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.idempotency.lock().await
    }
}
