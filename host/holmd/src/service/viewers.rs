//! Viewers: each screen's viewer and takeover URLs and their grants, the
//! viewer key the guest checks tokens with, and the handoff between an
//! agent and a person.
//!
//! A grant is kept in the box's record (never its token, which is signed
//! again on demand with the record's viewer key) until it expires, revoked
//! or not: the guest is told the revoked ones on every push (a new grant
//! with a label, a revocation, a restart of holmd), so a revoked URL stays
//! dead until it would have expired. Each new desktop (a new
//! box, a started box) gets a new key, so earlier URLs stop working. Grant
//! times are real seconds since the epoch, as the guest checks them.

use std::time::Duration;

use holm_client::{BoxClient, ClientError};
use holm_http::viewer_token::{self, Claims};
use holm_proto::viewer::{
    AskForHelp, CreateViewer, DEFAULT_GRANT_SECS, Handoff, HandoffState, HandoffStatus,
    MAX_GRANT_SECS, MAX_HANDOFF_WAIT_SECS, ScreenViewers, ViewerAuth, ViewerBind, ViewerConfig,
    ViewerGrant, ViewerMode,
};
use holm_proto::{ApiError, ErrorCode, Issue};

use super::Service;
use super::errors::{Error, Part};
use super::state::{Entry, require_running};
use crate::store::{BoxRecord, Grant, rfc3339};

/// The longest label of a grant.
const MAX_LABEL: usize = 80;
/// The longest reason of a request for help.
const MAX_REASON: usize = 500;
/// A shown pair with less than this left is made again.
const SHOWN_MIN_LEFT_SECS: u64 = 300;
/// How long past its expiry a revoked grant is still sent to the guest as
/// revoked (a guest's clock may be behind holmd's).
const REVOKED_MARGIN_SECS: u64 = 600;
/// How long a guest may take to answer a viewer call (waits add their own).
const GUEST_TIMEOUT: Duration = Duration::from_secs(5);

fn guest_error(id: &str, e: ClientError) -> Error {
    match e {
        ClientError::Api(e) => e.into(),
        other => {
            tracing::warn!(box_id = %id, error = %other, "the box's viewers did not answer");
            Error::GuestDown { id: id.to_owned(), part: Part::Guest, late: false }
        }
    }
}

fn late(id: &str) -> Error {
    Error::GuestDown { id: id.to_owned(), part: Part::Guest, late: true }
}

/// The page of a grant, and its token after `#` unless the policy needs none.
pub fn grant_url(r: &BoxRecord, g: &Grant, base: &str) -> String {
    let mode = match g.mode {
        ViewerMode::View => "view",
        ViewerMode::Control => "takeover",
    };
    let policy = r.spec.policy.clone().unwrap_or_default();
    let published =
        r.viewer.as_ref().and_then(|e| url::Url::parse(e.url()).ok()).and_then(|u| u.port());
    let page = match (policy.bind, policy.advertise.as_deref(), published) {
        (ViewerBind::Any, Some(host), Some(port)) => {
            format!("http://{host}:{port}/{}/{mode}", g.screen)
        }
        _ => format!("{}/v1/boxes/{}/viewer/{}/{mode}", base.trim_end_matches('/'), r.id, g.screen),
    };
    match (&r.viewer_key, policy.auth) {
        (Some(key), ViewerAuth::Token) => {
            let claims = Claims {
                grant: g.id.clone(),
                screen: g.screen,
                mode: g.mode,
                expires: g.expires_at,
            };
            format!("{page}#token={}", viewer_token::mint(key, &r.id, &claims))
        }
        _ => page,
    }
}

fn grant_info(r: &BoxRecord, g: &Grant, base: &str) -> ViewerGrant {
    ViewerGrant {
        id: g.id.clone(),
        screen: g.screen,
        mode: g.mode,
        url: grant_url(r, g, base),
        label: g.label.clone(),
        created_at: rfc3339(g.created_at),
        expires_at: rfc3339(g.expires_at),
        revoked_at: g.revoked_at.map(rfc3339),
    }
}

fn new_grant(screen: u8, mode: ViewerMode, secs: u64, label: Option<String>, shown: bool) -> Grant {
    let now = viewer_token::now_secs();
    Grant {
        id: viewer_token::new_grant_id(),
        screen,
        mode,
        label,
        created_at: now,
        expires_at: now + secs,
        revoked_at: None,
        shown,
    }
}

/// Checks a screen, a lifetime and a label against a box, naming each
/// wrong field in `issues`; answers the lifetime.
fn check_grant(
    r: &BoxRecord,
    screen: u8,
    secs: Option<u64>,
    label: Option<&str>,
    issues: &mut Vec<Issue>,
) -> u64 {
    let screens = r.screens.len();
    if usize::from(screen) >= screens.max(1) {
        issues.push(Issue {
            path: "screen".into(),
            problem: format!(
                "box {} has {screens} screen(s), numbered from 0: there is no screen {screen}",
                r.id
            ),
        });
    }
    let secs = secs.unwrap_or(DEFAULT_GRANT_SECS);
    if !(1..=MAX_GRANT_SECS).contains(&secs) {
        issues.push(Issue {
            path: "expires_after_secs".into(),
            problem: format!("must be 1 to {MAX_GRANT_SECS}, not {secs}"),
        });
    }
    if let Some(l) = label
        && (l.is_empty() || l.chars().count() > MAX_LABEL || l.chars().any(char::is_control))
    {
        issues.push(Issue {
            path: "label".into(),
            problem: format!("must be 1 to {MAX_LABEL} characters, none a control character"),
        });
    }
    secs
}

fn checked<T>(value: T, issues: Vec<Issue>) -> Result<T, Error> {
    if issues.is_empty() { Ok(value) } else { Err(ApiError::invalid_fields(issues).into()) }
}

/// The box runs and has a viewer port.
fn require_viewers(r: &BoxRecord) -> Result<(), Error> {
    require_running(r)?;
    if r.viewer.is_none() || r.viewer_key.is_none() {
        return Err(ApiError::new(
            ErrorCode::Unsupported,
            format!("box {} has no published viewer port", r.id),
        )
        .with_hint("boxes made before viewers existed have none; make a new box")
        .into());
    }
    Ok(())
}

impl Service {
    /// Gives the guest the box's viewer key (a new one, dropping every
    /// grant, when `rotate` is set or the record has none), its title and its
    /// revoked grants. A failure is logged: viewers are refused until the
    /// next change sets it again.
    pub(super) async fn arm_viewers(&self, entry: &Entry, guest: &BoxClient, rotate: bool) {
        if rotate || entry.record().viewer_key.is_none() {
            entry.update(|r| {
                r.viewer_key = Some(viewer_token::new_key());
                r.viewer_grants.clear();
            });
        }
        if entry.record().viewer.is_none() {
            return;
        }
        if let Err(e) = self.push_viewer_config(entry, guest).await {
            tracing::warn!(box_id = %entry.record().id, error = %e, "cannot set the viewers' key");
        }
    }

    async fn push_viewer_config(&self, entry: &Entry, guest: &BoxClient) -> Result<(), Error> {
        let now = viewer_token::now_secs();
        // Expired grants open nothing anyway: they are forgotten. A revoked
        // one is kept a while longer, for a guest whose clock is behind.
        entry.update(|r| {
            r.viewer_grants.retain(|g| {
                let margin = if g.revoked_at.is_some() { REVOKED_MARGIN_SECS } else { 0 };
                g.expires_at + margin > now
            });
        });
        let r = entry.record();
        let Some(key) = r.viewer_key.clone() else { return Ok(()) };
        let config = ViewerConfig {
            key,
            box_id: r.id.clone(),
            title: r.spec.name.clone().unwrap_or_else(|| r.id.clone()),
            revoked: r
                .viewer_grants
                .iter()
                .filter(|g| g.revoked_at.is_some())
                .map(|g| g.id.clone())
                .collect(),
            labels: r
                .viewer_grants
                .iter()
                .filter_map(|g| Some((g.id.clone(), g.label.clone()?)))
                .collect(),
            open: r.spec.policy.as_ref().is_some_and(|p| p.auth == ViewerAuth::None),
        };
        match tokio::time::timeout(GUEST_TIMEOUT, guest.set_viewer_config(&config)).await {
            Ok(r) => r.map_err(|e| guest_error(&config.box_id, e)),
            Err(_) => Err(late(&config.box_id)),
        }
    }

    fn guest_of(r: &BoxRecord) -> Result<BoxClient, Error> {
        let endpoint = r.guest.as_ref().ok_or_else(ApiError::internal)?;
        Ok(BoxClient::at(endpoint, &r.secret))
    }

    /// Each screen's pair of URLs `GET /v1/boxes/{id}` shows, made (or made
    /// again, near their expiry) on demand. Empty unless the box runs with
    /// a viewer port.
    pub async fn screen_viewers(&self, entry: &Entry, base: &str) -> Vec<ScreenViewers> {
        let r = entry.record();
        if require_viewers(&r).is_err() {
            return Vec::new();
        }
        let now = viewer_token::now_secs();
        let fresh = |g: &&Grant, screen: u8, mode: ViewerMode| {
            g.shown
                && g.screen == screen
                && g.mode == mode
                && g.revoked_at.is_none()
                && g.expires_at >= now + SHOWN_MIN_LEFT_SECS
        };
        let screens = u8::try_from(r.screens.len().max(1)).unwrap_or(1);
        let mut made = false;
        for screen in 0..screens {
            for mode in [ViewerMode::View, ViewerMode::Control] {
                if r.viewer_grants.iter().any(|g| fresh(&g, screen, mode)) {
                    continue;
                }
                made = true;
                entry.update(|r| {
                    // The grant shown before stays in the record until it
                    // expires: revoked, it stays revoked (the guest is told
                    // on every push); valid, it stays listed and revocable.
                    for g in r.viewer_grants.iter_mut() {
                        if g.shown && g.screen == screen && g.mode == mode {
                            g.shown = false;
                        }
                    }
                    r.viewer_grants.push(new_grant(screen, mode, DEFAULT_GRANT_SECS, None, true));
                });
            }
        }
        if made {
            self.save(entry).await;
        }
        let r = entry.record();
        (0..screens)
            .filter_map(|screen| {
                let pick = |mode| r.viewer_grants.iter().find(|g| fresh(g, screen, mode));
                let (view, control) = (pick(ViewerMode::View)?, pick(ViewerMode::Control)?);
                Some(ScreenViewers {
                    screen,
                    view_url: grant_url(&r, view, base),
                    takeover_url: grant_url(&r, control, base),
                    expires_at: rfc3339(view.expires_at.min(control.expires_at)),
                })
            })
            .collect()
    }

    /// The person in control of a running box, as its guest says (nothing
    /// when the guest does not answer at once).
    pub async fn human_in_control(
        &self,
        entry: &Entry,
    ) -> Option<holm_proto::viewer::HumanControl> {
        let r = entry.record();
        require_viewers(&r).ok()?;
        let guest = Self::guest_of(&r).ok()?;
        let status = tokio::time::timeout(Duration::from_secs(2), guest.guest_handoff(None))
            .await
            .ok()?
            .ok()?;
        status.control
    }

    /// A new viewer URL.
    pub async fn create_viewer(
        &self,
        id: &str,
        request: &CreateViewer,
        base: &str,
    ) -> Result<ViewerGrant, Error> {
        let entry = self.get(id)?;
        let r = entry.record();
        let mut issues = Vec::new();
        let secs = check_grant(
            &r,
            request.screen,
            request.expires_after_secs,
            request.label.as_deref(),
            &mut issues,
        );
        let secs = checked(secs, issues)?;
        require_viewers(&r)?;
        let mode = request.mode.unwrap_or(ViewerMode::View);
        let grant = new_grant(request.screen, mode, secs, request.label.clone(), false);
        entry.update(|r| r.viewer_grants.push(grant.clone()));
        if grant.label.is_some() {
            // The guest names the person in its control events.
            self.push_viewer_config(&entry, &Self::guest_of(&r)?).await?;
        }
        self.save(&entry).await;
        Ok(grant_info(&entry.record(), &grant, base))
    }

    /// The grants of the box's current desktop, newest first.
    pub fn viewers(&self, id: &str, base: &str) -> Result<Vec<ViewerGrant>, Error> {
        let r = self.get(id)?.record();
        let now = viewer_token::now_secs();
        let mut out: Vec<ViewerGrant> = r
            .viewer_grants
            .iter()
            .filter(|g| g.expires_at > now)
            .rev()
            .map(|g| grant_info(&r, g, base))
            .collect();
        out.sort_by(|a, b| b.created_at.cmp(&a.created_at));
        Ok(out)
    }

    /// Revokes a grant: its URL opens nothing, and its open connections close.
    pub async fn revoke_viewer(
        &self,
        id: &str,
        grant: &str,
        base: &str,
    ) -> Result<ViewerGrant, Error> {
        let entry = self.get(id)?;
        let now = viewer_token::now_secs();
        let known =
            entry.record().viewer_grants.iter().any(|g| g.id == grant && g.expires_at > now);
        if !known {
            return Err(ApiError::new(ErrorCode::NotFound, format!("box {id} has no viewer grant {grant:?}"))
                .with_hint(format!(
                    "GET /v1/boxes/{id}/viewers lists them; a started box has new ones, and expired ones are gone"
                )).into());
        }
        entry.update(|r| {
            for g in r.viewer_grants.iter_mut().filter(|g| g.id == grant) {
                g.revoked_at.get_or_insert(now);
            }
        });
        self.save(&entry).await;
        let r = entry.record();
        if require_viewers(&r).is_ok() {
            self.push_viewer_config(&entry, &Self::guest_of(&r)?).await?;
        }
        let g = r
            .viewer_grants
            .iter()
            .find(|g| g.id == grant)
            .cloned()
            .ok_or_else(ApiError::internal)?;
        Ok(grant_info(&r, &g, base))
    }

    /// Asks a person for help: a new takeover URL for the screen, and the
    /// reason shown in its page.
    pub async fn ask_for_help(
        &self,
        id: &str,
        request: &AskForHelp,
        base: &str,
    ) -> Result<Handoff, Error> {
        let entry = self.get(id)?;
        let r = entry.record();
        let mut issues = Vec::new();
        if !(1..=MAX_REASON).contains(&request.reason.trim().chars().count()) {
            issues.push(Issue {
                path: "reason".into(),
                problem: format!("must be 1 to {MAX_REASON} characters: it is shown to the person"),
            });
        }
        let secs = check_grant(&r, request.screen, request.expires_after_secs, None, &mut issues);
        let secs = checked(secs, issues)?;
        require_viewers(&r)?;
        let guest = Self::guest_of(&r)?;
        let grant = new_grant(request.screen, ViewerMode::Control, secs, None, false);
        entry.update(|r| r.viewer_grants.push(grant.clone()));
        self.save(&entry).await;
        let status = match tokio::time::timeout(
            GUEST_TIMEOUT,
            guest.guest_ask_for_help(&request.reason, request.screen),
        )
        .await
        {
            Ok(s) => s.map_err(|e| guest_error(id, e))?,
            Err(_) => return Err(late(id)),
        };
        let r = entry.record();
        Ok(Handoff {
            box_id: id.to_owned(),
            status,
            takeover_url: Some(grant_url(&r, &grant, base)),
            expires_at: Some(rfc3339(grant.expires_at)),
        })
    }

    /// The handoff; with `wait_secs`, answers once control is handed back
    /// (or at the end of the wait, as it is then).
    pub async fn handoff(
        &self,
        id: &str,
        wait: Option<(HandoffState, u64)>,
    ) -> Result<Handoff, Error> {
        if let Some((_, secs)) = wait
            && secs > MAX_HANDOFF_WAIT_SECS
        {
            return Err(ApiError::invalid_fields(vec![Issue {
                path: "timeout_secs".into(),
                problem: format!("must be at most {MAX_HANDOFF_WAIT_SECS}, not {secs}"),
            }])
            .into());
        }
        let entry = self.get(id)?;
        let r = entry.record();
        require_viewers(&r)?;
        let guest = Self::guest_of(&r)?;
        let limit = GUEST_TIMEOUT + Duration::from_secs(wait.map_or(0, |(_, s)| s));
        let status: HandoffStatus =
            match tokio::time::timeout(limit, guest.guest_handoff(wait)).await {
                Ok(s) => s.map_err(|e| guest_error(id, e))?,
                Err(_) => return Err(late(id)),
            };
        Ok(Handoff { box_id: id.to_owned(), status, takeover_url: None, expires_at: None })
    }
}
