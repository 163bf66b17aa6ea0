//! The timeline: each trace of an action carries the action
//! ([`classify`]), and a screenshot's image is kept with the traces.
//!
//! On the request's path nothing waits on the store: a small JSON body is
//! read (forwarding reads it whole anyway), a raw body is counted as it
//! streams, and an image answered is copied as it streams to the caller
//! and queued ([`Shots::queue`]). The service writes queued images with the
//! traces, once a second, and keeps each box under its bounds (count and
//! bytes, oldest dropped first).
//!
//! "The screenshot after" an action is linked when its trace is queued: a
//! box's last action without an image of its own waits
//! ([`Shots::link`]); the next screenshot taken on its own names it in
//! `after`, and the timeline folds that screenshot into the action's step.

pub mod capture;
pub mod classify;
pub mod export;
pub mod recording;
pub mod redact;

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use holm_proto::host::Trace;
use holm_proto::timeline::StepKind;

/// The most bytes of images waiting for the store, for the whole server;
/// beyond, the oldest are dropped (with one warning per write) rather than
/// held. About a second of the fastest screenshot loop (a thousand 1280x800
/// PNGs of ~30 KiB): the queue is written each second, so a store slower
/// than the screenshots drops images at any bound, and a larger one only
/// holds more memory first (256 MiB was most of holmd's memory after a
/// screenshot burst; docs/design/server.md, "holmd's memory").
const MAX_PENDING_BYTES: usize = 32 << 20;

/// An image waiting for the store.
#[derive(Debug)]
pub struct Pending {
    /// The box.
    pub box_id: String,
    /// The trace id of the request that answered it.
    pub id: String,
    /// The image.
    pub image: Bytes,
}

/// Images waiting for the store, the action each box's next screenshot
/// comes after, and what each box keeps.
#[derive(Debug, Default)]
pub struct Shots {
    pending: Mutex<VecDeque<Pending>>,
    /// Images dropped from `pending` since the last take.
    dropped: AtomicUsize,
    awaiting: Mutex<HashMap<String, String>>,
    /// Per box, its kept images (id, bytes), oldest first; loaded from the
    /// store the first time the box keeps one after a start.
    pub(crate) kept: tokio::sync::Mutex<HashMap<String, VecDeque<(String, u64)>>>,
}

impl Shots {
    /// Queues an image; it is written within a second.
    pub fn queue(&self, p: Pending) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.push_back(p);
        let mut total: usize = pending.iter().map(|p| p.image.len()).sum();
        while total > MAX_PENDING_BYTES {
            let Some(old) = pending.pop_front() else { break };
            self.dropped.fetch_add(1, Ordering::Relaxed);
            total -= old.image.len();
        }
    }

    /// Takes the queue (and warns once if images were dropped from it).
    pub fn take(&self) -> Vec<Pending> {
        let dropped = self.dropped.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            tracing::warn!(
                dropped,
                "the store has not taken screenshots as fast as they came; dropped the oldest"
            );
        }
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).drain(..).collect()
    }

    /// Links `trace` to the action before it: a screenshot with its image
    /// comes after the box's last action still waiting for one; an action
    /// on the desktop (input, a command, a page tool, a file, a window)
    /// waits for one unless its own answer was an image.
    pub fn link(&self, trace: &mut Trace) {
        let Some(action) = &trace.action else { return };
        let mut awaiting = self.awaiting.lock().unwrap_or_else(|e| e.into_inner());
        match action.kind {
            StepKind::Screenshot if trace.screenshot.is_some() => {
                trace.after = awaiting.remove(&trace.box_id);
            }
            StepKind::Input
            | StepKind::Command
            | StepKind::Page
            | StepKind::File
            | StepKind::Window => {
                if trace.screenshot.is_some() {
                    awaiting.remove(&trace.box_id);
                } else {
                    awaiting.insert(trace.box_id.clone(), trace.id.clone());
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use holm_proto::timeline::{Shot, StepAction};

    fn step(id: &str, kind: StepKind, image: bool) -> Trace {
        Trace {
            id: id.into(),
            box_id: "box_a".into(),
            action: Some(StepAction { kind, name: "x".into(), params: Default::default() }),
            screenshot: image.then(|| Shot {
                id: id.into(),
                media_type: "image/png".into(),
                bytes: 1,
            }),
            ..Trace::default()
        }
    }

    #[test]
    fn a_screenshot_comes_after_the_last_action_waiting_for_one() {
        let s = Shots::default();
        let after = |t: Trace| {
            let mut t = t;
            s.link(&mut t);
            t.after
        };
        assert_eq!(after(step("1", StepKind::Screenshot, true)), None, "nothing before it");
        assert_eq!(after(step("2", StepKind::Input, false)), None);
        assert_eq!(after(step("3", StepKind::Control, false)), None, "control does not wait");
        assert_eq!(after(step("4", StepKind::Screenshot, false)), None, "a 304 takes nothing");
        assert_eq!(after(step("5", StepKind::Screenshot, true)).as_deref(), Some("2"));
        assert_eq!(after(step("6", StepKind::Screenshot, true)), None, "only the first after it");
        assert_eq!(after(step("7", StepKind::Input, true)), None);
        assert_eq!(after(step("8", StepKind::Screenshot, true)), None, "7 had its own image");
    }

    #[test]
    fn waiting_images_are_bounded_oldest_first() {
        let s = Shots::default();
        let big = Bytes::from(vec![0u8; MAX_PENDING_BYTES / 2 + 1]);
        for id in ["1", "2", "3"] {
            s.queue(Pending { box_id: "box_a".into(), id: id.into(), image: big.clone() });
        }
        assert_eq!(s.dropped.load(Ordering::Relaxed), 2, "counted for the one warning");
        let ids: Vec<String> = s.take().into_iter().map(|p| p.id).collect();
        assert_eq!(ids, ["3"]);
    }
}
