//! The state machine of a box, in one place.
//!
//! ```text
//! creating ─launched─> starting ─ready─> running ─pause─> paused
//!     │                  │  ▲              │  ▲  <─resume─┘
//!     └──failed──────────┤  └────start───┐ │  │
//!                        │               │ stop (also from starting, unreachable)
//!                        └─lost─> unreachable      stopped ──┘
//! any ──remove──> removed
//!
//! a warm pool's box (hidden from agents until claimed):
//! creating ─launched─> starting ─pooled─> pooled ─claim─> starting ─ready─> running
//!                                            ▲              │ (new secrets given)
//!                                            └──pooled──────┘ (the create did not use it)
//! ```
//!
//! A request is checked against the state first ([`Admits::admit`]): it
//! goes on, is answered as it is (the box is already where it would go), or
//! is refused with `conflict`. Once the runtime has done its part, the state
//! moves only from the states the request was checked in ([`Move`], through
//! [`Entry::transition`]), so a box removed meanwhile is never brought back.
//! Removal and recovery set the state outright ([`Entry::update`]): removal
//! from any state, recovery to what the runtime reports.

use std::sync::{Arc, Mutex};

use holm_proto::host::{BoxInfo, BoxState};
use tokio::sync::watch;

use super::errors::Error;
use crate::store::BoxRecord;

/// A move of a box's state: from any of `from`, to `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Move {
    pub from: &'static [BoxState],
    pub to: BoxState,
}

use BoxState::{Creating, Failed, Paused, Pooled, Running, Starting, Stopped, Unreachable};

impl Move {
    /// The machine was made; its desktop is coming up.
    pub const LAUNCHED: Self = Self { from: &[Creating], to: Starting };
    /// The desktop answered.
    pub const READY: Self = Self { from: &[Starting], to: Running };
    /// The box could not be made.
    pub const FAILED: Self = Self { from: &[Creating, Starting], to: Failed };
    /// A box that ran before did not answer in time after a start.
    pub const LOST: Self = Self { from: &[Starting], to: Unreachable };
    /// Stopped, files kept.
    pub const STOP: Self = Self { from: &[Running, Starting, Unreachable], to: Stopped };
    /// Started again: a new desktop is coming up.
    pub const START: Self = Self { from: &[Stopped], to: Starting };
    /// Paused, memory kept.
    pub const PAUSE: Self = Self { from: &[Running], to: Paused };
    /// Resumed where it was.
    pub const RESUME: Self = Self { from: &[Paused], to: Running };
    /// A warm pool's box answered: it waits in its pool (or goes back to it
    /// when the create that took it did not use it).
    pub const POOLED: Self = Self { from: &[Starting], to: Pooled };
    /// A create took a pooled box: it gets its owner's secrets, then runs.
    pub const CLAIM: Self = Self { from: &[Pooled], to: Starting };

    /// Every move, for the checks below.
    #[cfg(test)]
    const ALL: [Self; 10] = [
        Self::POOLED,
        Self::CLAIM,
        Self::LAUNCHED,
        Self::READY,
        Self::FAILED,
        Self::LOST,
        Self::STOP,
        Self::START,
        Self::PAUSE,
        Self::RESUME,
    ];
}

/// A request that changes a box, as its state sees it: the wire's
/// [`BoxRequest`], so a refusal names it in its details.
pub(super) use holm_proto::BoxRequest as Request;

/// What the state says to a request it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Admit {
    /// Go on.
    Go,
    /// The box is already where the request would take it: answer it as it is.
    Already,
}

/// The state machine's word on a request.
pub(super) trait Admits {
    /// Checks the request against box `id`'s state.
    fn admit(self, id: &str, state: BoxState) -> Result<Admit, Error>;

    /// The move the request makes once the runtime has done its part.
    #[cfg(test)]
    fn moves(self) -> Option<Move>;
}

impl Admits for Request {
    fn admit(self, id: &str, state: BoxState) -> Result<Admit, Error> {
        use Request as R;
        let refuse = |what| Err(Error::Refused { id: id.to_owned(), state, request: self, what });
        match (self, state) {
            (_, Pooled) => refuse("it waits in a warm pool"),
            (R::Stop, Running | Starting | Unreachable)
            | (R::Start, Stopped)
            | (R::Pause, Running)
            | (R::Resume, Paused)
            | (R::Fork, Running | Paused | Stopped) => Ok(Admit::Go),
            (R::Extend, s) if s.is_live() => Ok(Admit::Go),
            (R::Stop, Stopped)
            | (R::Start, Running | Starting)
            | (R::Pause, Paused)
            | (R::Resume, Running) => Ok(Admit::Already),
            (R::Stop, Paused) => refuse("stop needs a running box"),
            (R::Stop, _) => refuse("it cannot be stopped"),
            (R::Start, _) => refuse("start needs a stopped box"),
            (R::Pause, _) => refuse("pause needs a running box"),
            (R::Resume, _) => refuse("resume needs a paused box"),
            (R::Fork, _) => refuse("fork needs a running, paused or stopped box"),
            (R::Extend, _) => refuse("it cannot be extended"),
        }
    }

    #[cfg(test)]
    fn moves(self) -> Option<Move> {
        match self {
            Self::Stop => Some(Move::STOP),
            Self::Start => Some(Move::START),
            Self::Pause => Some(Move::PAUSE),
            Self::Resume => Some(Move::RESUME),
            Self::Fork | Self::Extend => None,
        }
    }
}

/// Checks that a box runs, for a request that goes to its guest.
pub fn require_running(record: &BoxRecord) -> Result<(), Error> {
    let id = record.id.clone();
    match record.state {
        Running => Ok(()),
        Creating | Starting => Err(Error::Starting { id }),
        Unreachable => Err(Error::Unreachable { id, reason: record.reason.clone() }),
        state => Err(Error::NotRunning { id, state, reason: record.reason.clone() }),
    }
}

/// One box held by the server.
#[derive(Debug)]
pub struct Entry {
    record: Mutex<BoxRecord>,
    changed: watch::Sender<BoxState>,
    /// The newest `rev` of the record known to be in the store (written
    /// by this server, or read from it).
    written: watch::Sender<u64>,
    /// Serializes the changes the runtime makes to this box.
    pub(super) op: tokio::sync::Mutex<()>,
    /// Serializes writes of this record, each of the newest copy.
    pub(super) write: tokio::sync::Mutex<()>,
    /// The stages of its latest bringing up.
    pub(super) progress: super::progress::ProgressLog,
    /// Whether a task follows its guest's control events (`service::control`).
    pub(super) control_watched: std::sync::atomic::AtomicBool,
}

impl Entry {
    pub(super) fn new(record: BoxRecord) -> Arc<Self> {
        let (changed, _) = watch::channel(record.state);
        let (written, _) = watch::channel(record.rev);
        Arc::new(Self {
            record: Mutex::new(record),
            changed,
            written,
            op: tokio::sync::Mutex::new(()),
            write: tokio::sync::Mutex::new(()),
            progress: super::progress::ProgressLog::default(),
            control_watched: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// A copy of the record.
    pub fn record(&self) -> BoxRecord {
        self.record.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The box as the API shows it.
    pub fn info(&self) -> BoxInfo {
        self.record.lock().unwrap_or_else(|e| e.into_inner()).info()
    }

    /// The box's id.
    pub fn id(&self) -> String {
        self.record.lock().unwrap_or_else(|e| e.into_inner()).id.clone()
    }

    /// Watches the box's state.
    pub fn subscribe(&self) -> watch::Receiver<BoxState> {
        self.changed.subscribe()
    }

    /// Changes the record whatever its state; a change moves its `rev` one
    /// on, so the copy differs from every copy written before it.
    pub(super) fn update(&self, f: impl FnOnce(&mut BoxRecord)) -> BoxRecord {
        let mut r = self.record.lock().unwrap_or_else(|e| e.into_inner());
        let before = r.clone();
        f(&mut r);
        if *r != before {
            r.rev = before.rev.max(r.rev).saturating_add(1);
        }
        let copy = r.clone();
        drop(r);
        self.changed.send_replace(copy.state);
        copy
    }

    /// Takes a copy read from the store in place of the record: it is
    /// written as it is, so its `rev` stays.
    pub(super) fn take(&self, stored: BoxRecord) {
        let (rev, state) = (stored.rev, stored.state);
        *self.record.lock().unwrap_or_else(|e| e.into_inner()) = stored;
        self.was_written(rev);
        self.changed.send_replace(state);
    }

    /// Notes that the copy of `rev` is in the store.
    pub(super) fn was_written(&self, rev: u64) {
        self.written.send_if_modified(|w| {
            let newer = rev > *w;
            *w = (*w).max(rev);
            newer
        });
    }

    /// Waits until the copy the record is now is in the store (or a newer
    /// one is): an answer given after it holds for every replica.
    pub(super) async fn until_written(&self) {
        let rev = self.record.lock().unwrap_or_else(|e| e.into_inner()).rev;
        let _ = self.written.subscribe().wait_for(|w| *w >= rev).await;
    }

    /// Makes `step` (and `f`'s other changes) only while the box is in one
    /// of its `from` states; answers whether it did.
    pub(super) fn transition(&self, step: Move, f: impl FnOnce(&mut BoxRecord)) -> bool {
        let mut applied = false;
        self.update(|r| {
            if step.from.contains(&r.state) {
                f(r);
                r.state = step.to;
                applied = true;
            }
        });
        applied
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVERY: [BoxState; 9] = [
        Creating,
        Starting,
        Running,
        Paused,
        Stopped,
        Unreachable,
        Failed,
        BoxState::Removed,
        Pooled,
    ];
    const REQUESTS: [Request; 6] = [
        Request::Stop,
        Request::Start,
        Request::Pause,
        Request::Resume,
        Request::Fork,
        Request::Extend,
    ];

    #[test]
    fn no_move_brings_back_an_ended_box() {
        for step in Move::ALL {
            for ended in [BoxState::Removed, Failed] {
                assert!(!step.from.contains(&ended), "{step:?} leaves {ended:?}");
            }
            assert_ne!(step.to, BoxState::Removed, "{step:?}: only removal removes");
        }
    }

    #[test]
    fn a_request_moves_only_from_the_states_it_admits() {
        for request in REQUESTS {
            let Some(step) = request.moves() else { continue };
            for state in EVERY {
                let admitted = matches!(request.admit("box_x", state), Ok(Admit::Go));
                assert_eq!(
                    admitted,
                    step.from.contains(&state),
                    "{request:?} in {state:?}: admitted {admitted}, but {step:?}"
                );
            }
        }
    }

    #[test]
    fn an_ended_or_pooled_box_admits_no_request() {
        for request in REQUESTS {
            for ended in [BoxState::Removed, Failed, Pooled] {
                let e = request.admit("box_x", ended).unwrap_err();
                assert!(matches!(e, Error::Refused { .. }), "{request:?} in {ended:?}");
            }
        }
    }

    #[test]
    fn a_transition_is_refused_outside_its_states() {
        let entry = Entry::new(BoxRecord {
            id: "box_x".into(),
            runtime: "docker".into(),
            machine_id: None,
            guest: None,
            secret: String::new(),
            spec: Default::default(),
            placement: Default::default(),
            state: BoxState::Removed,
            reason: None,
            image: None,
            screens: Vec::new(),
            created_at: 0,
            expires_at: 0,
            idle_timeout_secs: None,
            last_activity: 0,
            forked_from: None,
            bridge: None,
            bridge_secret: None,
            viewer: None,
            viewer_key: None,
            viewer_grants: Vec::new(),
            control_seen: None,
            pool: None,
            guest_proto: None,
            ended_at: None,
            rev: 0,
        });
        assert!(!entry.transition(Move::READY, |r| r.reason = Some("no".into())));
        assert_eq!((entry.record().state, entry.record().reason), (BoxState::Removed, None));
        entry.update(|r| r.state = Starting);
        assert!(entry.transition(Move::READY, |_| {}));
        assert_eq!(entry.record().state, Running);
    }
}
