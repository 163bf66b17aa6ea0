//! Deadlines: the idle clock that commands move, and the removal of boxes
//! whose deadline has passed.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use super::Service;
use super::lifecycle::epoch;
use super::state::Entry;

/// How much later than a box's idle deadline its vendor is told to end it,
/// so that commands, which move the deadline every second, tell the vendor
/// at most once in half this time. The server itself ends the box on time.
const VENDOR_SLACK_SECS: u64 = 60;

/// What the idle clock keeps beside the boxes' records: the boxes whose
/// idle deadline moved and is not yet written, the deadline each box's
/// runtime was last told, and the expired boxes whose removal failed.
///
/// Each set sits behind its own lock, held for one read or change of it
/// and never across an await; no two are held at once, and none is taken
/// while the boxes' map is locked.
#[derive(Debug, Default)]
pub(super) struct Expiry {
    /// Boxes whose last command moved their idle deadline, not yet written.
    moved: Mutex<BTreeSet<String>>,
    /// The deadline each box's runtime was last told (runtimes that end
    /// machines themselves), in seconds since the epoch.
    vendor_deadlines: Mutex<HashMap<String, u64>>,
    /// Expired boxes whose removal failed, so the warning is said once.
    failed: Mutex<BTreeSet<String>>,
}

impl Expiry {
    /// Notes that box `id`'s idle deadline moved.
    fn moved(&self, id: String) {
        self.moved.lock().unwrap_or_else(|e| e.into_inner()).insert(id);
    }

    /// The boxes whose idle deadline moved since the last call, forgotten.
    pub(super) fn take_moved(&self) -> BTreeSet<String> {
        std::mem::take(&mut *self.moved.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Remembers the deadline a box's runtime was last told.
    fn deadline_sent(&self, id: &str, deadline: u64) {
        self.vendor_deadlines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.to_owned(), deadline);
    }

    /// The deadline box `id`'s runtime was last told.
    fn sent(&self, id: &str) -> Option<u64> {
        self.vendor_deadlines.lock().unwrap_or_else(|e| e.into_inner()).get(id).copied()
    }

    /// Notes that an expired box's removal failed; answers whether it is
    /// the first time (the warning is said once).
    fn removal_failed(&self, id: &str) -> bool {
        self.failed.lock().unwrap_or_else(|e| e.into_inner()).insert(id.to_owned())
    }

    /// Forgets a failed removal: the box went.
    fn removed(&self, id: &str) {
        self.failed.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
    }
}

impl Service {
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
            self.expiry.moved(entry.id());
        }
    }

    /// Remembers the deadline a box's runtime was last told.
    pub(super) fn deadline_sent(&self, id: &str, deadline: u64) {
        self.expiry.deadline_sent(id, deadline);
    }

    /// Tells the runtimes of boxes whose idle deadline moved (commands
    /// came) the new deadline, where it has moved past half the slack the
    /// runtime was given. On a host runtime this does nothing.
    pub(super) async fn push_deadlines(&self, ids: &[String]) {
        for id in ids {
            let Ok(entry) = self.get(id) else { continue };
            let r = entry.record();
            let (Some(machine), true) = (r.machine_id.as_ref(), r.state.is_live()) else {
                continue;
            };
            let deadline = r.deadline().0;
            let sent = self.expiry.sent(id);
            if sent.is_some_and(|s| deadline + VENDOR_SLACK_SECS / 2 <= s) {
                continue;
            }
            let Ok(offered) = self.runtime(&r.runtime) else { continue };
            let target = (deadline + VENDOR_SLACK_SECS).min(r.expires_at);
            match offered.runtime.set_deadline(machine, epoch(target)).await {
                Ok(()) => self.deadline_sent(id, target),
                Err(e) => {
                    tracing::warn!(box_id = %id, error = %e, "cannot move the box's deadline at its runtime; retrying")
                }
            }
        }
    }

    /// Removes each box whose deadline has passed, and records why. Answers
    /// how many went.
    pub async fn expire_due(&self) -> usize {
        let now = self.clock.now_secs();
        let due: Vec<(String, String)> = self
            .boxes
            .records()
            .into_iter()
            .filter(|r| r.state.is_live())
            // Without its runtime the box cannot be removed; it stays
            // unreachable until a server that has the runtime ends it.
            .filter(|r| self.takes(&r.runtime))
            .filter_map(|r| {
                let (deadline, why) = r.deadline();
                (deadline <= now).then(|| (r.id.clone(), why))
            })
            .collect();
        let mut n = 0;
        for (id, why) in due {
            let Some(entry) = self.any_box(&id) else { continue };
            match self.remove_entry(&entry, &format!("expired: {why}")).await {
                Ok(_) => {
                    n += 1;
                    self.expiry.removed(&id);
                }
                Err(e) => {
                    // Tried again each second; said once.
                    if self.expiry.removal_failed(&id) {
                        tracing::warn!(box_id = %id, error = %e, "cannot remove an expired box; retrying");
                    }
                }
            }
        }
        n
    }
}
