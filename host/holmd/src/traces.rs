//! Traces: one line per request through the server to a box (time, method
//! and path, the names of its query parameters, status, error code,
//! duration, request id), never a body, a secret or a query value.
//!
//! Requests only queue a trace in memory ([`Tracer::push`]); the service
//! writes the queue to the store once a second and when it stops, so a
//! command never waits on the store for its trace. `kill -9` can lose the
//! last second of traces; a clean stop (SIGINT or SIGTERM) loses none.

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use holm_proto::host::Trace;

/// The most traces held while the store cannot take them; beyond, the
/// oldest are dropped (with a warning) rather than growing without bound.
const MAX_PENDING: usize = 100_000;

/// Trace ids and the queue of traces not yet stored.
#[derive(Debug, Default)]
pub struct Tracer {
    pending: Mutex<Vec<Trace>>,
    last_id: Mutex<u64>,
}

impl Tracer {
    /// A new id that sorts after every earlier one, also across restarts:
    /// microseconds since the epoch, bumped when two come in the same one,
    /// as 20 digits so that string order is number order.
    pub fn next_id(&self, now: SystemTime) -> String {
        let micros = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros());
        let micros = u64::try_from(micros).unwrap_or(u64::MAX);
        let mut last = self.last_id.lock().unwrap_or_else(|e| e.into_inner());
        *last = micros.max(*last + 1);
        format!("{:020}", *last)
    }

    /// Queues a trace.
    pub fn push(&self, trace: Trace) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if pending.len() >= MAX_PENDING {
            tracing::warn!("the store has not taken traces for a while; dropping the oldest");
            pending.remove(0);
        }
        pending.push(trace);
    }

    /// Takes the queue.
    pub fn take(&self) -> Vec<Trace> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Puts back traces the store did not take, before newer ones.
    pub fn put_back(&self, mut traces: Vec<Trace>) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        traces.append(&mut pending);
        let over = traces.len().saturating_sub(MAX_PENDING);
        traces.drain(..over);
        *pending = traces;
    }
}

/// Formats a time as RFC 3339 with milliseconds.
pub fn rfc3339_millis(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn ids_grow_and_sort_as_strings() {
        let t = Tracer::default();
        let at = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let a = t.next_id(at);
        let b = t.next_id(at);
        let c = t.next_id(at - Duration::from_secs(5));
        assert!(a < b && b < c, "{a} {b} {c}");
        assert_eq!(a.len(), 20);
        let later = Tracer::default().next_id(at + Duration::from_secs(1));
        assert!(later > c, "a restarted server's ids sort after the earlier ones");
    }

    #[test]
    fn traces_put_back_stay_first() {
        let t = Tracer::default();
        let tr = |id: &str| crate::store::conformance::trace("box_a", id);
        t.push(tr("1"));
        let taken = t.take();
        t.push(tr("2"));
        t.put_back(taken);
        let ids: Vec<String> = t.take().into_iter().map(|t| t.id).collect();
        assert_eq!(ids, ["1", "2"]);
    }
}
