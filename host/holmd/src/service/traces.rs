//! The traces of requests to boxes: queued on the request's path, written
//! each second.

use holm_proto::guest::Page;
use holm_proto::host::Trace;
use holm_proto::{ApiError, Issue};

use super::Service;
use super::errors::Error;
use super::errors::store_error;

impl Service {
    /// A new trace id.
    pub fn trace_id(&self) -> String {
        self.timeline.next_id(self.clock.now())
    }

    /// Queues a trace, linked to the action before it when it is a
    /// screenshot ([`crate::timeline::Shots::link`]); it is written within
    /// a second.
    pub fn trace(&self, trace: Trace) {
        self.timeline.push(trace);
    }

    /// The timeline's images waiting for the store.
    pub fn shots(&self) -> &std::sync::Arc<crate::timeline::Shots> {
        self.timeline.shots()
    }

    /// Writes queued traces and moved idle deadlines to the store. Traces
    /// and images are written one flush at a time: a flush that finds their
    /// queues empty waits while another still writes what it took from
    /// them, or a read right after an action would miss its trace or see
    /// its image not yet kept (a vendor's deadline, which can be slow, is
    /// moved after, outside that turn).
    pub async fn flush(&self) {
        self.timeline.write().await;
        let dirty = self.expiry.take_moved();
        for id in &dirty {
            // On a shared store, another replica's newer copy first: only
            // the idle deadline moved here.
            self.hold(id).await;
            if let Ok(entry) = self.get(id) {
                self.save(&entry).await;
            }
        }
        let dirty: Vec<String> = dirty.into_iter().collect();
        self.push_deadlines(&dirty).await;
    }

    /// One page of a box's traces, oldest first.
    pub async fn traces(
        &self,
        id: &str,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Trace>, Error> {
        self.get(id)?;
        check_page(cursor, limit)?;
        self.flush().await;
        let mut data =
            self.store.traces(id, cursor, limit as usize + 1).await.map_err(|e| store_error(&e))?;
        let more = data.len() > limit as usize;
        data.truncate(limit as usize);
        let next_cursor = if more { data.last().map(|t| t.id.clone()) } else { None };
        Ok(Page { data, next_cursor })
    }
}

/// Refuses a page's `limit` out of 1 to 1000 and a `cursor` this server
/// did not give (trace ids are digits).
pub(super) fn check_page(cursor: Option<&str>, limit: u32) -> Result<(), Error> {
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::invalid_fields(vec![Issue {
            path: "limit".into(),
            problem: format!("must be 1 to 1000, not {limit}"),
        }])
        .into());
    }
    if cursor.is_some_and(|c| c.is_empty() || !c.bytes().all(|b| b.is_ascii_digit())) {
        return Err(ApiError::invalid_fields(vec![Issue {
            path: "cursor".into(),
            problem: "is not a cursor this server gave".into(),
        }])
        .into());
    }
    Ok(())
}
