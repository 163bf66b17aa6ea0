//! Who may watch and who holds the box: the viewer key and revocations,
//! the open connections, the person in control, the agent's request for
//! help, and the log of control events holmd turns into traces.
//!
//! A takeover connection takes control with its first input message (a
//! pointer moved over the screen is enough): from then on the box is
//! `human_in_control` and the agent's input is refused, until the person
//! hands back (the page's button), their URL is revoked or expires, or their
//! last takeover connection has been closed for the grace period.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use holm_http::viewer_token::{self, Claims, TokenError};
use holm_proto::viewer::{
    ControlEvent, ControlEventKind, ControlEvents, Handback, HandoffState, HandoffStatus,
    HelpRequest, HumanControl, ReturnedBy, ViewerConfig, ViewerConnection, ViewerMode,
    ViewersStatus,
};
use holm_proto::{ApiError, ErrorCode, Issue};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Control events kept for holmd to read.
const MAX_EVENTS: usize = 256;

/// The grant id of connections to a box whose policy needs no token.
pub const OPEN_GRANT: &str = "open";

/// The viewers of one box.
pub struct Viewers {
    screens: u8,
    grace: Duration,
    boot: String,
    inner: Mutex<Inner>,
    /// Bumped on every change a wait may care about.
    changed: watch::Sender<u64>,
}

impl std::fmt::Debug for Viewers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Viewers")
            .field("screens", &self.screens)
            .field("grace", &self.grace)
            .finish_non_exhaustive()
    }
}

struct Config {
    key: String,
    box_id: String,
    title: String,
    open: bool,
    revoked: HashSet<String>,
    labels: BTreeMap<String, String>,
}

#[derive(Default)]
struct Grant {
    /// Cancelled when the grant is revoked: its connections end.
    cancel: CancellationToken,
    /// Handed back: its input is dropped until it takes control again.
    released: bool,
    /// Its open connections.
    open: usize,
    /// Bumped each time its last connection closes, so a grace timer knows
    /// whether it is still the latest.
    closings: u64,
}

struct Open {
    grant: String,
    screen: u8,
    mode: ViewerMode,
    since: String,
    counters: Arc<Counters>,
}

#[derive(Default)]
struct Inner {
    config: Option<Config>,
    /// Cancelled when the key changes: every connection ends.
    generation: CancellationToken,
    grants: HashMap<String, Grant>,
    connections: BTreeMap<u64, Open>,
    next_connection: u64,
    control: Option<HumanControl>,
    help: Option<HelpRequest>,
    handed_back: Option<Handback>,
    events: VecDeque<ControlEvent>,
    seq: u64,
}

/// Byte and message counts of one connection.
#[derive(Debug, Default)]
pub struct Counters {
    /// Bytes to the viewer.
    pub bytes_out: AtomicU64,
    /// Bytes from the viewer.
    pub bytes_in: AtomicU64,
    /// Input messages dropped.
    pub dropped: AtomicU64,
}

/// One open viewer connection: closes its record when dropped.
pub struct Connection {
    viewers: Arc<Viewers>,
    id: u64,
    /// What its token allows.
    pub claims: Claims,
    /// Ends when the grant is revoked or the key changes.
    pub ended: CancellationToken,
    /// Its counters.
    pub counters: Arc<Counters>,
    expired: bool,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").field("id", &self.id).field("claims", &self.claims).finish()
    }
}

fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

fn unauthorized(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::Unauthorized, message)
        .with_hint("ask for a new viewer URL: holm view BOX, or GET /v1/boxes/{id} on holmd")
}

impl Viewers {
    /// The viewers of a box with `screens` screens; a person who closes
    /// every takeover connection keeps control for `grace`.
    pub fn new(screens: u8, grace: Duration) -> Arc<Self> {
        let mut boot = [0u8; 6];
        holm_http::random_bytes(&mut boot);
        Arc::new(Self {
            screens,
            grace,
            boot: boot.iter().map(|b| format!("{b:02x}")).collect(),
            inner: Mutex::new(Inner::default()),
            changed: watch::channel(0).0,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn notify(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Sets the key, the box's name and the revoked grants. A new key ends
    /// every connection and returns control to the agent.
    pub fn configure(&self, config: ViewerConfig) -> Result<(), ApiError> {
        let mut issues = Vec::new();
        if !viewer_token::is_key(&config.key) {
            issues.push(Issue { path: "key".into(), problem: "must be 64 hex digits".into() });
        }
        if config.box_id.is_empty() || config.box_id.len() > 64 {
            issues.push(Issue {
                path: "box_id".into(),
                problem: "must be 1 to 64 characters".into(),
            });
        }
        if config.title.chars().count() > 200 {
            issues.push(Issue { path: "title".into(), problem: "at most 200 characters".into() });
        }
        for (i, g) in config.revoked.iter().enumerate() {
            if !viewer_token::is_grant_id(g) {
                issues.push(Issue {
                    path: format!("revoked[{i}]"),
                    problem: "not a grant id".into(),
                });
            }
        }
        if !issues.is_empty() {
            return Err(ApiError::invalid_fields(issues));
        }
        let mut inner = self.lock();
        let same_key = inner.config.as_ref().is_some_and(|c| {
            use subtle::ConstantTimeEq;
            bool::from(c.key.as_bytes().ct_eq(config.key.as_bytes())) && c.box_id == config.box_id
        });
        if !same_key {
            inner.generation.cancel();
            inner.generation = CancellationToken::new();
            inner.grants.clear();
            self.end_control(&mut inner, ReturnedBy::Reset);
            if inner.config.is_some() {
                tracing::info!("the viewers have a new key; earlier connections are ended");
            }
        }
        let mut revoked: HashSet<String> = config.revoked.into_iter().collect();
        if same_key && let Some(c) = &inner.config {
            revoked.extend(c.revoked.iter().cloned()); // as long as the key lasts
        }
        for g in &revoked {
            if let Some(grant) = inner.grants.get(g) {
                grant.cancel.cancel();
            }
            if inner.control.as_ref().is_some_and(|c| &c.grant == g) {
                self.end_control(&mut inner, ReturnedBy::Revoked);
            }
        }
        inner.config = Some(Config {
            key: config.key,
            box_id: config.box_id,
            title: config.title,
            open: config.open,
            revoked,
            labels: config.labels,
        });
        drop(inner);
        self.notify();
        Ok(())
    }

    /// Checks a token (or, on a box whose policy needs none, its absence)
    /// for `screen` in `mode`.
    pub fn authorize(
        &self,
        token: Option<&str>,
        screen: u8,
        mode: ViewerMode,
    ) -> Result<Claims, ApiError> {
        let inner = self.lock();
        let Some(config) = &inner.config else {
            return Err(ApiError::new(ErrorCode::NotReady, "the box's viewers are not set up yet")
                .with_hint("holmd sets them up when the desktop is ready; try again in a moment"));
        };
        if screen >= self.screens {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("screen {screen} does not exist: the box has {} (0-based)", self.screens),
            ));
        }
        let claims = match token {
            None if config.open => {
                return Ok(Claims { grant: OPEN_GRANT.into(), screen, mode, expires: u64::MAX });
            }
            None => return Err(unauthorized("a viewer token is needed")),
            Some(t) => {
                viewer_token::verify(&config.key, &config.box_id, t, viewer_token::now_secs())
                    .map_err(|e| match e {
                        TokenError::Expired => unauthorized(e.to_string()),
                        _ => unauthorized(e.to_string()),
                    })?
            }
        };
        if config.revoked.contains(&claims.grant) {
            return Err(unauthorized("this viewer URL was revoked"));
        }
        if claims.screen != screen || claims.mode != mode {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                format!(
                    "this token is for screen {} ({}), not screen {screen} ({mode})",
                    claims.screen, claims.mode
                ),
            )
            .with_hint("open the URL the token came with"));
        }
        Ok(claims)
    }

    /// Records an open connection for `claims`.
    pub fn open(self: &Arc<Self>, claims: Claims) -> Connection {
        let mut inner = self.lock();
        let generation = inner.generation.clone();
        let grant = inner.grants.entry(claims.grant.clone()).or_default();
        grant.open += 1;
        let ended = CancellationToken::new();
        let (g, cancel) = (generation.clone(), grant.cancel.clone());
        let e = ended.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = g.cancelled() => e.cancel(),
                () = cancel.cancelled() => e.cancel(),
                () = e.cancelled() => {}
            }
        });
        inner.next_connection += 1;
        let id = inner.next_connection;
        let counters = Arc::new(Counters::default());
        inner.connections.insert(
            id,
            Open {
                grant: claims.grant.clone(),
                screen: claims.screen,
                mode: claims.mode,
                since: now_rfc3339(),
                counters: Arc::clone(&counters),
            },
        );
        drop(inner);
        Connection { viewers: Arc::clone(self), id, claims, ended, counters, expired: false }
    }

    fn close(self: &Arc<Self>, id: u64, expired: bool) {
        let mut inner = self.lock();
        let Some(open) = inner.connections.remove(&id) else { return };
        let Some(grant) = inner.grants.get_mut(&open.grant) else { return };
        grant.open = grant.open.saturating_sub(1);
        if grant.open > 0 || inner.control.as_ref().is_none_or(|c| c.grant != open.grant) {
            return;
        }
        if expired {
            self.end_control(&mut inner, ReturnedBy::Expired);
            drop(inner);
            self.notify();
            return;
        }
        let grant = inner.grants.get_mut(&open.grant).expect("looked up above");
        grant.closings += 1;
        let closing = grant.closings;
        drop(inner);
        // The person keeps control for the grace period: a reload or a
        // dropped connection that comes back does not hand it over.
        let me = Arc::clone(self);
        let grace = self.grace;
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            let mut inner = me.lock();
            let still_gone =
                inner.grants.get(&open.grant).is_some_and(|g| g.open == 0 && g.closings == closing);
            if still_gone && inner.control.as_ref().is_some_and(|c| c.grant == open.grant) {
                me.end_control(&mut inner, ReturnedBy::Disconnected);
                drop(inner);
                me.notify();
            }
        });
    }

    /// Whether an input message of `connection` passes; its first one takes
    /// control. Watch-only connections never pass.
    pub fn admit_input(&self, connection: &Connection) -> bool {
        if connection.claims.mode != ViewerMode::Control {
            return false;
        }
        let mut inner = self.lock();
        let released = inner.grants.get(&connection.claims.grant).is_none_or(|g| g.released);
        if released {
            return false;
        }
        if inner.control.is_none() {
            self.take_control(&mut inner, &connection.claims);
            drop(inner);
            self.notify();
        }
        true
    }

    /// The page's hand-back button (`release`) or its take-control button
    /// (`take`), for a takeover grant.
    pub fn set_released(&self, claims: &Claims, released: bool) {
        let mut inner = self.lock();
        let grant = inner.grants.entry(claims.grant.clone()).or_default();
        grant.released = released;
        if released {
            if inner.control.is_some() {
                self.end_control(&mut inner, ReturnedBy::Released);
            }
        } else if inner.control.is_none() {
            self.take_control(&mut inner, claims);
        }
        drop(inner);
        self.notify();
    }

    /// Whether a grant handed control back.
    pub fn released(&self, grant: &str) -> bool {
        self.lock().grants.get(grant).is_some_and(|g| g.released)
    }

    fn take_control(&self, inner: &mut Inner, claims: &Claims) {
        let label = inner.config.as_ref().and_then(|c| c.labels.get(&claims.grant).cloned());
        let control = HumanControl {
            since: now_rfc3339(),
            screen: claims.screen,
            grant: claims.grant.clone(),
            label: label.clone(),
        };
        tracing::info!(screen = claims.screen, grant = %claims.grant, "a person took control");
        Self::event(inner, ControlEventKind::Taken, claims.screen, |e| {
            e.grant = Some(claims.grant.clone());
            e.label = label;
        });
        inner.control = Some(control);
    }

    fn end_control(&self, inner: &mut Inner, by: ReturnedBy) {
        let Some(control) = inner.control.take() else { return };
        tracing::info!(screen = control.screen, grant = %control.grant, ?by, "control is back with the agent");
        let at = now_rfc3339();
        Self::event(inner, ControlEventKind::Returned, control.screen, |e| {
            e.grant = Some(control.grant.clone());
            e.label.clone_from(&control.label);
            e.by = Some(by);
        });
        inner.help = None;
        inner.handed_back = Some(Handback { at, by });
    }

    fn event(
        inner: &mut Inner,
        kind: ControlEventKind,
        screen: u8,
        fill: impl FnOnce(&mut ControlEvent),
    ) {
        inner.seq += 1;
        let mut e = ControlEvent {
            seq: inner.seq,
            at: now_rfc3339(),
            kind,
            screen,
            grant: None,
            label: None,
            by: None,
            reason: None,
        };
        fill(&mut e);
        if inner.events.len() >= MAX_EVENTS {
            inner.events.pop_front();
        }
        inner.events.push_back(e);
    }

    /// The agent asks a person for help on `screen`, with `reason` shown in
    /// the pages.
    pub fn ask_for_help(&self, reason: &str, screen: u8) -> Result<HandoffStatus, ApiError> {
        let mut issues = Vec::new();
        let reason = reason.trim();
        if reason.is_empty() || reason.chars().count() > 500 {
            issues.push(Issue {
                path: "reason".into(),
                problem: "must be 1 to 500 characters".into(),
            });
        }
        if screen >= self.screens {
            issues.push(Issue {
                path: "screen".into(),
                problem: format!(
                    "screen {screen} does not exist: the box has {} (0-based)",
                    self.screens
                ),
            });
        }
        if !issues.is_empty() {
            return Err(ApiError::invalid_fields(issues));
        }
        let mut inner = self.lock();
        inner.help = Some(HelpRequest { reason: reason.to_owned(), screen, since: now_rfc3339() });
        inner.handed_back = None;
        Self::event(&mut inner, ControlEventKind::HelpRequested, screen, |e| {
            e.reason = Some(reason.to_owned());
        });
        let status = Self::status_of(&inner);
        drop(inner);
        self.notify();
        Ok(status)
    }

    /// The agent no longer waits for help.
    pub fn withdraw_help(&self) -> HandoffStatus {
        let mut inner = self.lock();
        if let Some(help) = inner.help.take() {
            Self::event(&mut inner, ControlEventKind::HelpWithdrawn, help.screen, |_| {});
        }
        let status = Self::status_of(&inner);
        drop(inner);
        self.notify();
        status
    }

    fn status_of(inner: &Inner) -> HandoffStatus {
        let state = if inner.control.is_some() {
            HandoffState::HumanInControl
        } else if inner.help.is_some() {
            HandoffState::Waiting
        } else if inner.handed_back.is_some() {
            HandoffState::HandedBack
        } else {
            HandoffState::None
        };
        HandoffStatus {
            state,
            help: inner.help.clone(),
            control: inner.control.clone(),
            handed_back: inner.handed_back.clone(),
        }
    }

    /// Where the handoff is.
    pub fn handoff(&self) -> HandoffStatus {
        Self::status_of(&self.lock())
    }

    /// The person in control, if one is.
    pub fn control(&self) -> Option<HumanControl> {
        self.lock().control.clone()
    }

    /// Refuses the agent's input while a person is in control, saying since
    /// when and how to wait.
    pub fn agent_may_act(&self) -> Result<(), ApiError> {
        let Some(c) = self.control() else { return Ok(()) };
        let who =
            c.label.as_deref().map_or_else(|| "a person".to_owned(), |l| format!("a person ({l})"));
        Err(ApiError::new(
            ErrorCode::HumanInControl,
            format!(
                "{who} is in control of this box since {} (screen {}, through a takeover URL): the agent's input waits until they hand back",
                c.since, c.screen
            ),
        )
        .with_hint(
            "wait for the handback: GET /v1/boxes/{id}/handoff?wait_for=handed_back on holmd (MCP: wait_for_handback); screenshots keep working meanwhile",
        )
        .with_details(serde_json::json!({ "since": c.since, "screen": c.screen, "grant": c.grant })))
    }

    /// Waits up to `timeout` until the handoff is in `state` (for
    /// `handed_back`: no person in control and no request waiting), and
    /// answers it as it is then.
    pub async fn wait_handoff(&self, state: HandoffState, timeout: Duration) -> HandoffStatus {
        let done = |s: &HandoffStatus| match state {
            HandoffState::HandedBack | HandoffState::None => {
                matches!(s.state, HandoffState::HandedBack | HandoffState::None)
            }
            other => s.state == other,
        };
        let mut rx = self.changed.subscribe();
        let _ = tokio::time::timeout(timeout, async {
            loop {
                if done(&self.handoff()) {
                    return;
                }
                if rx.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
        self.handoff()
    }

    /// The control events after `after`, waiting up to `timeout` for one.
    pub async fn events(&self, after: u64, timeout: Duration) -> ControlEvents {
        let mut rx = self.changed.subscribe();
        let collect = |inner: &Inner| -> Vec<ControlEvent> {
            // A reader from before a restart (after > seq) gets everything.
            let after = if after > inner.seq { 0 } else { after };
            inner.events.iter().filter(|e| e.seq > after).cloned().collect()
        };
        let _ = tokio::time::timeout(timeout, async {
            loop {
                if !collect(&self.lock()).is_empty() || rx.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
        ControlEvents { boot: self.boot.clone(), events: collect(&self.lock()) }
    }

    /// The viewers' state.
    pub fn status(&self) -> ViewersStatus {
        let inner = self.lock();
        ViewersStatus {
            configured: inner.config.is_some(),
            connections: inner
                .connections
                .values()
                .map(|o| ViewerConnection {
                    grant: o.grant.clone(),
                    screen: o.screen,
                    mode: o.mode,
                    since: o.since.clone(),
                    bytes_out: o.counters.bytes_out.load(Ordering::Relaxed),
                    bytes_in: o.counters.bytes_in.load(Ordering::Relaxed),
                    dropped: o.counters.dropped.load(Ordering::Relaxed),
                })
                .collect(),
            handoff: Self::status_of(&inner),
            last_event: inner.seq,
        }
    }

    /// The box's id and the name the pages show.
    pub fn title(&self) -> Option<(String, String)> {
        self.lock().config.as_ref().map(|c| (c.box_id.clone(), c.title.clone()))
    }

    /// Ends every connection (at shutdown).
    pub fn close_all(&self) {
        self.lock().generation.cancel();
    }
}

impl Connection {
    /// Ends the connection's record. `expired` when its token ran out: a
    /// person in control then hands back at once.
    pub fn finish(mut self, expired: bool) {
        self.expired = expired;
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.ended.cancel();
        let viewers = Arc::clone(&self.viewers);
        viewers.close(self.id, self.expired);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(key: &str) -> ViewerConfig {
        ViewerConfig {
            key: key.into(),
            box_id: "box_a".into(),
            title: "a".into(),
            revoked: Vec::new(),
            labels: BTreeMap::new(),
            open: false,
        }
    }

    fn token(key: &str, screen: u8, mode: ViewerMode, grant: &str) -> String {
        viewer_token::mint(
            key,
            "box_a",
            &Claims { grant: grant.into(), screen, mode, expires: viewer_token::now_secs() + 60 },
        )
    }

    #[tokio::test]
    async fn a_person_takes_control_with_input_and_hands_back() {
        let v = Viewers::new(2, Duration::from_millis(50));
        let key = viewer_token::new_key();
        assert_eq!(
            v.authorize(Some("x"), 0, ViewerMode::View).unwrap_err().code,
            ErrorCode::NotReady
        );
        v.configure(config(&key)).unwrap();
        let t = token(&key, 1, ViewerMode::Control, "vg_01");
        let claims = v.authorize(Some(&t), 1, ViewerMode::Control).unwrap();
        assert_eq!(
            v.authorize(Some(&t), 0, ViewerMode::Control).unwrap_err().code,
            ErrorCode::Forbidden
        );
        assert_eq!(
            v.authorize(Some(&t), 1, ViewerMode::View).unwrap_err().code,
            ErrorCode::Forbidden
        );
        assert_eq!(
            v.authorize(None, 1, ViewerMode::View).unwrap_err().code,
            ErrorCode::Unauthorized
        );

        let watcher = v.open(
            v.authorize(Some(&token(&key, 1, ViewerMode::View, "vg_02")), 1, ViewerMode::View)
                .unwrap(),
        );
        assert!(!v.admit_input(&watcher), "watch only never passes");
        assert!(v.control().is_none());

        let c = v.open(claims.clone());
        assert!(v.admit_input(&c));
        assert_eq!(v.control().unwrap().grant, "vg_01");
        assert_eq!(v.handoff().state, HandoffState::HumanInControl);
        v.set_released(&claims, true);
        assert!(v.control().is_none());
        assert!(!v.admit_input(&c), "handed back: input is dropped");
        assert_eq!(v.handoff().handed_back.unwrap().by, ReturnedBy::Released);
        v.set_released(&claims, false);
        assert_eq!(v.control().unwrap().grant, "vg_01", "taking again is at once");

        // Closing the last takeover connection hands back after the grace.
        drop(c);
        assert!(v.control().is_some(), "kept during the grace period");
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert!(v.control().is_none());
        assert_eq!(v.handoff().handed_back.unwrap().by, ReturnedBy::Disconnected);
        let kinds: Vec<_> =
            v.events(0, Duration::ZERO).await.events.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                ControlEventKind::Taken,
                ControlEventKind::Returned,
                ControlEventKind::Taken,
                ControlEventKind::Returned
            ]
        );
        drop(watcher);
    }

    #[tokio::test]
    async fn a_reconnect_within_the_grace_keeps_control() {
        let v = Viewers::new(1, Duration::from_millis(100));
        let key = viewer_token::new_key();
        v.configure(config(&key)).unwrap();
        let claims = v
            .authorize(Some(&token(&key, 0, ViewerMode::Control, "vg_01")), 0, ViewerMode::Control)
            .unwrap();
        let c = v.open(claims.clone());
        assert!(v.admit_input(&c));
        drop(c);
        tokio::time::sleep(Duration::from_millis(30)).await;
        let again = v.open(claims);
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert!(v.control().is_some());
        again.finish(true);
        assert_eq!(
            v.handoff().handed_back.unwrap().by,
            ReturnedBy::Expired,
            "an expired URL hands back at once"
        );
    }

    #[tokio::test]
    async fn revocation_and_a_new_key_end_connections_and_control() {
        let v = Viewers::new(1, Duration::from_secs(10));
        let key = viewer_token::new_key();
        v.configure(config(&key)).unwrap();
        let t = token(&key, 0, ViewerMode::Control, "vg_01");
        let c = v.open(v.authorize(Some(&t), 0, ViewerMode::Control).unwrap());
        assert!(v.admit_input(&c));
        let mut revoked = config(&key);
        revoked.revoked = vec!["vg_01".into()];
        v.configure(revoked).unwrap();
        tokio::time::timeout(Duration::from_secs(1), c.ended.cancelled()).await.unwrap();
        assert_eq!(v.handoff().handed_back.unwrap().by, ReturnedBy::Revoked);
        assert_eq!(
            v.authorize(Some(&t), 0, ViewerMode::Control).unwrap_err().code,
            ErrorCode::Unauthorized
        );
        v.configure(config(&key)).unwrap(); // the same key, without vg_01
        assert!(v.authorize(Some(&t), 0, ViewerMode::Control).is_err(), "still revoked");

        let t2 = token(&key, 0, ViewerMode::View, "vg_02");
        let w = v.open(v.authorize(Some(&t2), 0, ViewerMode::View).unwrap());
        v.configure(config(&viewer_token::new_key())).unwrap();
        tokio::time::timeout(Duration::from_secs(1), w.ended.cancelled()).await.unwrap();
        assert!(
            v.authorize(Some(&t2), 0, ViewerMode::View).is_err(),
            "a new key: earlier URLs are worthless"
        );
        // An open box takes no token at all.
        v.configure(ViewerConfig { open: true, ..config(&key) }).unwrap();
        assert_eq!(v.authorize(None, 0, ViewerMode::Control).unwrap().grant, OPEN_GRANT);
    }

    #[tokio::test]
    async fn help_waits_until_handed_back() {
        let v = Viewers::new(1, Duration::from_secs(10));
        let key = viewer_token::new_key();
        v.configure(config(&key)).unwrap();
        assert!(v.ask_for_help("", 0).is_err());
        assert!(v.ask_for_help("why", 3).is_err());
        assert_eq!(v.ask_for_help("log in, please", 0).unwrap().state, HandoffState::Waiting);
        let waited = v.wait_handoff(HandoffState::HandedBack, Duration::from_millis(20)).await;
        assert_eq!(waited.state, HandoffState::Waiting, "a wait that times out answers the state");
        let claims = v
            .authorize(Some(&token(&key, 0, ViewerMode::Control, "vg_01")), 0, ViewerMode::Control)
            .unwrap();
        let c = v.open(claims.clone());
        assert!(v.admit_input(&c));
        let v2 = Arc::clone(&v);
        let waiter = tokio::spawn(async move {
            v2.wait_handoff(HandoffState::HandedBack, Duration::from_secs(5)).await
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        v.set_released(&claims, true);
        let done = waiter.await.unwrap();
        assert_eq!(done.state, HandoffState::HandedBack);
        assert!(done.help.is_none(), "help given is no longer asked for");
        let events = v.events(0, Duration::ZERO).await.events;
        assert_eq!(events[0].kind, ControlEventKind::HelpRequested);
        assert_eq!(events[0].reason.as_deref(), Some("log in, please"));
        assert_eq!(
            v.events(events.last().unwrap().seq, Duration::from_millis(10)).await.events,
            vec![]
        );
    }
}
