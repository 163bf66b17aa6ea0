//! A store shared by replicas (`HOLM_SHARED_STORE=1`): several holmd
//! processes on one PostgreSQL (or S3) store serve one fleet of boxes.
//!
//! Each replica still holds the boxes in memory, as a lone server does; the
//! store is the truth between them, and each replica catches up with it:
//!
//! - before serving a request to box `id` ([`Service::hold`]), it reads the
//!   box's record and takes it when it is new to it or newer than its own
//!   (a higher `rev`), so a box made through another replica is served at
//!   once, and one stopped or removed there is seen as such;
//! - before answering a list, and each second before expiry, it reads every
//!   record the same way ([`Service::sync_fleet`]);
//! - a wait for a state ([`Service::wait`]) ends once the copy it answers
//!   is written, so the replica asked next answers the same;
//! - a write of its own that the store refuses because the box is removed
//!   there ([`crate::store::StoreError::Removed`]) makes it take the removal
//!   ([`Service::took_removal`]), so a stale copy never brings a box back.
//!
//! What is not shared (docs/design/server.md names each): operation locks
//! (two replicas changing one box at once may both act; the later write
//! of the same `rev` wins), idempotency turns, warm pools (off on a
//! shared store), the box limit's lock, and the making of a box: a replica
//! that starts does not carry on another's unfinished creates.

use std::sync::Arc;

use holm_proto::host::BoxState;

use super::Service;
use super::state::Entry;
use crate::store::BoxRecord;

impl Service {
    /// Whether other replicas share this server's store.
    pub fn shared_store(&self) -> bool {
        self.shared_store
    }

    /// On a shared store, reads box `id`'s record and takes it when this
    /// replica does not hold the box or holds an older copy; then the
    /// request to it is served as ever. Nothing on a store of its own.
    pub async fn hold(&self, id: &str) {
        if !self.shared_store || !holm::ids::is_box_id(id) {
            return;
        }
        match self.store.get_box(id).await {
            Ok(Some(stored)) => {
                self.take_stored(stored);
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(box_id = %id, error = %e, "cannot read the box's record"),
        }
    }

    /// On a shared store, reads every record and takes each this replica
    /// does not hold, or holds an older copy of.
    pub async fn sync_fleet(&self) {
        if !self.shared_store {
            return;
        }
        match self.store.boxes().await {
            Ok(all) => {
                for stored in all {
                    self.take_stored(stored);
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot read the shared store's records"),
        }
    }

    /// Takes a record read from the shared store: a box this replica does
    /// not hold is held from now on, as written (never a warm pool's: pools
    /// are each replica's own); a held one takes the stored copy when it is
    /// removed there, or newer (a higher `rev`), keeping the later of the
    /// two last commands. Answers the box held.
    pub(super) fn take_stored(&self, stored: BoxRecord) -> Option<Arc<Entry>> {
        let Some(held) = self.boxes.get(&stored.id) else {
            if stored.pool.is_some() {
                return None;
            }
            return Some(self.boxes.insert_new(Entry::new(stored)));
        };
        // Never in the middle of this replica's own write of the box: the
        // next read takes the copy.
        if let Ok(_not_writing) = held.write.try_lock() {
            let mine = held.record();
            let removed = stored.state == BoxState::Removed && mine.state != BoxState::Removed;
            if removed || stored.rev > mine.rev {
                if removed {
                    tracing::info!(box_id = %stored.id, reason = ?stored.reason, "the box was removed through another replica");
                }
                let last = mine.last_activity;
                held.take(BoxRecord { last_activity: stored.last_activity.max(last), ..stored });
            }
        }
        Some(held)
    }

    /// After the store refused a write because the box is removed there:
    /// takes the stored removal, so this replica answers the box as
    /// removed and never writes it again.
    pub(super) async fn took_removal(&self, entry: &Entry) {
        let id = entry.id();
        match self.store.get_box(&id).await {
            Ok(Some(stored)) if stored.state == BoxState::Removed => {
                tracing::info!(box_id = %id, reason = ?stored.reason, "the box was removed through another replica");
                entry.take(stored);
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(box_id = %id, error = %e, "cannot read the box's record"),
        }
    }

    /// Whether the recovery scan must leave alone a machine of box `id`,
    /// which this replica did not hold. On a shared store the record is
    /// read again first: another replica may have recorded the box since
    /// this one read the records (a box is recorded before its machine is
    /// made), and then it is held from now on and judged as any held box.
    /// Left alone: a warm pool's box (pools are each replica's own), or
    /// any box when the store cannot say.
    pub(super) async fn leave_alone(&self, id: &str) -> bool {
        if !self.shared_store {
            return false;
        }
        match self.store.get_box(id).await {
            Ok(Some(stored)) => self.take_stored(stored).is_none(),
            Ok(None) => false,
            Err(e) => {
                tracing::warn!(box_id = %id, error = %e, "cannot read the box's record; its machine is left as it is");
                true
            }
        }
    }

    /// Whether this replica carries on making box `r` at start: on a store
    /// of its own, yes (the last server stopped); on a shared one, no: the
    /// replica making it may be running.
    pub(super) fn carries_on_making(&self, r: &BoxRecord) -> bool {
        !self.shared_store || !matches!(r.state, BoxState::Creating | BoxState::Starting)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::service::{Limits, Parts, RemoteSetup};
    use crate::store::conformance::record;
    use crate::store::{Store, local::LocalStore};

    /// A replica on `store`, offering no runtime.
    fn replica(store: &Arc<dyn Store>) -> Arc<Service> {
        Service::from_parts(Parts {
            runtimes: BTreeMap::new(),
            default_runtime: "docker".into(),
            store: Arc::clone(store),
            clock: Arc::new(crate::clock::SystemClock),
            server_name: "fleet".into(),
            remote_setup: RemoteSetup::default(),
            limits: Limits::default(),
            shared_store: true,
        })
    }

    fn removed(mut r: BoxRecord, why: &str) -> BoxRecord {
        r.state = BoxState::Removed;
        r.reason = Some(why.into());
        r.rev += 1;
        r
    }

    #[tokio::test]
    async fn a_replica_holding_an_older_copy_takes_the_removal_and_never_writes_the_box_back() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(LocalStore::open(dir.path()).unwrap());
        let (a, b) = (replica(&store), replica(&store));
        let r = record("box_fleet1", 1000);
        store.put_box(&r).await.unwrap();
        // Both hold the box as it was written.
        a.hold(&r.id).await;
        b.hold(&r.id).await;
        let on_a = a.get(&r.id).unwrap();
        assert_eq!(b.get(&r.id).unwrap().record(), r, "a box is held as written");
        // Removed through B; A, not asked since, moves its copy and writes.
        let gone = removed(b.get(&r.id).unwrap().record(), "removed by request");
        store.put_box(&gone).await.unwrap();
        on_a.update(|r| r.last_activity += 5);
        a.save(&on_a).await;
        assert_eq!(on_a.record().state, BoxState::Removed, "A took the removal");
        assert_eq!(on_a.record().reason.as_deref(), Some("removed by request"));
        assert_eq!(store.get_box(&r.id).await.unwrap(), Some(gone), "the store's copy stays");
    }

    #[tokio::test]
    async fn a_stored_copy_is_taken_when_newer_or_removed_and_pools_stay_each_replicas_own() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(LocalStore::open(dir.path()).unwrap());
        let a = replica(&store);
        let mut r = record("box_fleet2", 1000);
        r.rev = 3;
        let held = a.take_stored(r.clone()).expect("a new box is held");
        // An older copy (a slow replica's) is not taken.
        let older = BoxRecord { state: BoxState::Stopped, rev: 2, ..r.clone() };
        a.take_stored(older);
        assert_eq!(held.record().state, BoxState::Running);
        // A newer one is, keeping the later last command.
        held.update(|r| r.last_activity = 5000);
        let newer = BoxRecord { state: BoxState::Paused, rev: 9, ..r.clone() };
        a.take_stored(newer);
        assert_eq!((held.record().state, held.record().last_activity), (BoxState::Paused, 5000));
        // A removal is taken whatever its rev.
        a.take_stored(BoxRecord { state: BoxState::Removed, rev: 0, ..r.clone() });
        assert_eq!(held.record().state, BoxState::Removed);
        // A warm pool's box of another replica is never held.
        let pooled = BoxRecord { pool: Some("p".into()), ..record("box_fleet3", 1000) };
        assert!(a.take_stored(pooled).is_none());
        assert!(!a.has("box_fleet3"));
        // The scan leaves such a machine alone, and judges a box it did not
        // hold by its record (held from now on); with no record, as ever.
        let pooled = BoxRecord { pool: Some("p".into()), ..record("box_fleet3", 1000) };
        store.put_box(&pooled).await.unwrap();
        assert!(a.leave_alone("box_fleet3").await);
        store.put_box(&record("box_fleet4", 1000)).await.unwrap();
        assert!(!a.leave_alone("box_fleet4").await);
        assert!(a.has("box_fleet4"), "a box recorded since the start is held");
        assert!(!a.leave_alone("box_fleet5").await);
    }
}
