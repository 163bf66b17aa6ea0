//! Who held control of a box, in its traces.
//!
//! A person takes control through a takeover URL, and gives it back with
//! the page's button or by leaving; the guest sees each change and keeps
//! the last few as control events (`GET /v1/viewers/events`, numbered from 1
//! each time the guest starts, its "boot"). For each running box with
//! viewers, one task asks its guest for the events after the last one
//! traced, waiting up to [`POLL_SECS`] for one, and queues each as a trace
//! (method `CONTROL`, the screen's viewer as its path, the event with the
//! grant's id and label, never a token). The last event traced is kept in
//! the box record (`control_seen`), written at once, so a restarted server
//! neither loses nor repeats one (a crash between the trace's write, within
//! a second, and the record's may repeat one). The task ends when the box
//! leaves `running`; the background loop starts it again when it runs.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use holm_client::BoxClient;
use holm_proto::host::{BoxState, Trace};
use holm_proto::viewer::ControlEvents;

use super::Service;
use super::state::Entry;
use crate::store::ControlSeen;

/// How long one ask waits for an event.
const POLL_SECS: u64 = 30;

/// How long to wait after a guest did not answer.
const RETRY: Duration = Duration::from_secs(5);

impl Service {
    /// Starts a control watcher for each running box with viewers that has
    /// none (called each second by the background loop).
    pub(super) fn watch_control(self: &Arc<Self>) {
        let entries: Vec<Arc<Entry>> = self
            .boxes
            .filter(|r| r.state == BoxState::Running && r.viewer.is_some() && r.guest.is_some());
        for entry in entries {
            if entry.control_watched.swap(true, Ordering::SeqCst) {
                continue;
            }
            let service = Arc::clone(self);
            tokio::spawn(async move {
                service.follow_control(&entry).await;
                entry.control_watched.store(false, Ordering::SeqCst);
            });
        }
    }

    /// Traces the box's control events until it leaves `running`.
    async fn follow_control(&self, entry: &Entry) {
        let mut state = entry.subscribe();
        loop {
            let r = entry.record();
            let Some(endpoint) = r.guest.clone().filter(|_| r.state == BoxState::Running) else {
                return;
            };
            let guest = BoxClient::at(&endpoint, &r.secret);
            let seen = r.control_seen.clone();
            let after = seen.as_ref().map_or(0, |s| s.seq);
            let ask = tokio::time::timeout(
                Duration::from_secs(POLL_SECS + 10),
                guest.control_events(after, POLL_SECS),
            );
            let answer = tokio::select! {
                a = ask => a,
                _ = state.wait_for(|s| *s != BoxState::Running) => return,
            };
            match answer {
                Ok(Ok(events)) => self.trace_control(entry, seen, after, events).await,
                Ok(Err(e)) => {
                    tracing::debug!(box_id = %r.id, error = %e, "cannot read the control events");
                    tokio::time::sleep(RETRY).await;
                }
                Err(_) => tokio::time::sleep(RETRY).await,
            }
        }
    }

    /// Traces `events`, the answer to an ask for those after `after` of
    /// the boot in `seen`.
    async fn trace_control(
        &self,
        entry: &Entry,
        seen: Option<ControlSeen>,
        after: u64,
        events: ControlEvents,
    ) {
        let same_boot = seen.as_ref().is_some_and(|s| s.boot == events.boot);
        if !same_boot && after > 0 {
            // The guest started again: its numbers did too. Ask again from
            // its first event.
            entry.update(|r| r.control_seen = Some(ControlSeen { boot: events.boot, seq: 0 }));
            return;
        }
        let id = entry.id();
        let mut last = after;
        for event in events.events.into_iter().filter(|e| e.seq > after) {
            last = last.max(event.seq);
            self.trace(Trace {
                id: self.trace_id(),
                box_id: id.clone(),
                at: event.at.clone(),
                method: "CONTROL".into(),
                path: format!("/v1/boxes/{id}/viewer/{}", event.screen),
                query: Vec::new(),
                status: 200,
                code: None,
                duration_ms: 0,
                request_id: String::new(),
                action: Some(crate::timeline::classify::control(&event)),
                control: Some(event),
                ..Trace::default()
            });
        }
        let now = Some(ControlSeen { boot: events.boot, seq: last });
        if now != seen {
            entry.update(|r| r.control_seen = now);
            self.save(entry).await;
        }
    }
}
