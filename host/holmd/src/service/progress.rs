//! Progress of bringing a box up: each box keeps the stages and build lines
//! of its latest making or start, so a client that asks later (the CLI just
//! after its create, MCP's `launch_box`) sees them all, then follows them as
//! they come until the box runs, fails, or the wait ends.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::Stream;
use holm_proto::host::BoxState;
use holm_proto::progress::{BoxEvent, Stage};
use tokio::sync::watch;

use super::Service;
use super::state::Entry;

/// How many events a box keeps; older build lines go first (a stage is
/// never dropped while there is a build line to drop).
const KEEP: usize = 400;

/// The events of one box's latest bringing up, numbered from 1.
#[derive(Debug)]
pub struct ProgressLog {
    events: Mutex<Log>,
    newest: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct Log {
    /// Events with their numbers, oldest first.
    kept: VecDeque<(u64, BoxEvent)>,
    next: u64,
}

impl Default for ProgressLog {
    fn default() -> Self {
        Self { events: Mutex::default(), newest: watch::channel(0).0 }
    }
}

impl ProgressLog {
    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.events.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets the last bringing up: a new one begins.
    pub fn restart(&self) {
        let mut log = self.lock();
        log.kept.clear();
        let newest = log.next;
        drop(log);
        self.newest.send_replace(newest);
    }

    /// Adds an event.
    pub fn push(&self, event: BoxEvent) {
        let mut log = self.lock();
        log.next += 1;
        let n = log.next;
        log.kept.push_back((n, event));
        if log.kept.len() > KEEP {
            let drop_at =
                log.kept.iter().position(|(_, e)| matches!(e, BoxEvent::Build { .. })).unwrap_or(0);
            log.kept.remove(drop_at);
        }
        drop(log);
        self.newest.send_replace(n);
    }

    /// A stage began.
    pub fn stage(&self, stage: Stage, message: impl Into<String>) {
        self.push(BoxEvent::Stage { stage, message: message.into() });
    }

    /// The events after number `after`, and the newest number.
    fn after(&self, after: u64) -> (Vec<BoxEvent>, u64) {
        let log = self.lock();
        let events = log.kept.iter().filter(|(n, _)| *n > after).map(|(_, e)| e.clone()).collect();
        (events, log.next)
    }
}

/// Whether a box is still being brought up.
fn on_its_way(state: BoxState) -> bool {
    matches!(state, BoxState::Creating | BoxState::Starting)
}

impl Service {
    /// The progress of box `entry`'s bringing up: what it has done so far,
    /// then each event as it comes, until it runs, fails, or `timeout`
    /// passes; the last event is the box as it is then.
    pub fn progress(
        self: &Arc<Self>,
        entry: Arc<Entry>,
        timeout: Duration,
    ) -> impl Stream<Item = BoxEvent> + Send + 'static {
        let deadline = tokio::time::Instant::now() + timeout;
        let newest = entry.progress.newest.subscribe();
        let state = entry.subscribe();
        let start = (entry, newest, state, 0u64, VecDeque::<BoxEvent>::new(), false);
        futures_util::stream::unfold(
            start,
            move |(entry, mut newest, mut state, mut seen, mut queue, mut done)| async move {
                loop {
                    if let Some(e) = queue.pop_front() {
                        return Some((e, (entry, newest, state, seen, queue, done)));
                    }
                    if done {
                        return None;
                    }
                    let (events, last) = entry.progress.after(seen);
                    seen = last;
                    queue.extend(events);
                    if !queue.is_empty() {
                        continue;
                    }
                    let ended = !on_its_way(*state.borrow_and_update());
                    if ended || tokio::time::Instant::now() >= deadline {
                        queue.push_back(BoxEvent::Box { info: Box::new(entry.info()) });
                        done = true;
                        continue;
                    }
                    tokio::select! {
                        _ = newest.changed() => {}
                        _ = state.changed() => {}
                        () = tokio::time::sleep_until(deadline) => {}
                    }
                }
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_log_drops_build_lines_before_stages() {
        let log = ProgressLog::default();
        log.stage(Stage::Image, "image");
        for i in 0..(KEEP + 10) {
            log.push(BoxEvent::build(format!("line {i}")));
        }
        log.stage(Stage::Container, "container");
        let (events, newest) = log.after(0);
        assert_eq!(events.len(), KEEP);
        assert_eq!(newest, KEEP as u64 + 12);
        assert!(matches!(&events[0], BoxEvent::Stage { stage: Stage::Image, .. }));
        assert!(matches!(events.last(), Some(BoxEvent::Stage { stage: Stage::Container, .. })));
        log.restart();
        assert!(log.after(0).0.is_empty());
        log.stage(Stage::Desktop, "again");
        assert_eq!(log.after(newest).0.len(), 1);
    }
}
