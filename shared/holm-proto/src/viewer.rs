//! The viewers: a web page per screen that shows it live (watch only) or
//! hands it to a person (takeover), its tokens, the viewer policy, and the
//! handoff between an agent and a person.
//!
//! The guest serves the pages and the RFB stream over WebSocket on
//! [`VIEWER_PORT`]; each connection presents a token that names one box, one
//! screen and one mode until an expiry, signed with the box's viewer key
//! (`holm_http::viewer_token`). holmd keeps the key and the grants, and
//! forwards viewers' connections to the guest.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The guest's viewer port: pages, assets and the RFB stream of every screen.
pub const VIEWER_PORT: u16 = 6080;

/// The WebSocket subprotocol a viewer asks for; the guest answers it.
pub const RFB_PROTOCOL: &str = "holm-rfb.v1";

/// The prefix of the second subprotocol, which carries the viewer's token
/// (so the token is never in a URL a server or proxy logs).
pub const TOKEN_PROTOCOL_PREFIX: &str = "holm-token.";

/// A token's lifetime unless asked otherwise: one hour.
pub const DEFAULT_GRANT_SECS: u64 = 3600;

/// The longest token lifetime: a day.
pub const MAX_GRANT_SECS: u64 = 86_400;

/// The longest server-side wait for a handback.
pub const MAX_HANDOFF_WAIT_SECS: u64 = 900;

/// What a viewer may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ViewerMode {
    /// Watch only: every input message is dropped where the stream is served.
    View,
    /// Mouse, keyboard and clipboard: a person takes control.
    Control,
}

impl ViewerMode {
    /// The mode as written on the wire and in tokens.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::View => "view",
            Self::Control => "control",
        }
    }
}

impl fmt::Display for ViewerMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

// ---------------------------------------------------------------------------
// The viewer policy (a box's spec)

/// Whether a viewer needs a token.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ViewerAuth {
    /// Each URL carries its own token (the default).
    #[default]
    Token,
    /// No token: only with `bind: loopback`, for tools on the server's host.
    None,
}

/// Where the box's viewer port is published.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ViewerBind {
    /// On the host's loopback address; people watch through holmd (the default).
    #[default]
    Loopback,
    /// On every interface of the host, with a token required; the URLs name
    /// `advertise` as their host.
    Any,
}

/// `spec.policy`: how people reach a box's viewers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ViewerPolicy {
    /// `token` (default) or `none` (only with `bind: loopback`).
    #[serde(default)]
    pub auth: ViewerAuth,
    /// `loopback` (default) or `any`.
    #[serde(default)]
    pub bind: ViewerBind,
    /// The host name or address the URLs use with `bind: any`, such as
    /// `boxes.example.com`: no scheme, port or path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advertise: Option<String>,
}

// ---------------------------------------------------------------------------
// The server's side: grants and URLs

/// `POST /v1/boxes/{id}/viewers`: a new viewer URL.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CreateViewer {
    /// The screen, 0-based (default 0).
    #[serde(default)]
    pub screen: u8,
    /// `view` (default) or `control`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ViewerMode>,
    /// Seconds until the URL stops working (default 3600, 1 to 86400).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_after_secs: Option<u64>,
    /// Who it is for, shown in the box's traces when they take control
    /// (up to 80 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// One viewer URL and what it allows. The URL carries the credential: hand
/// it only to the person it is for.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ViewerGrant {
    /// The grant's id, such as `vg_3f9c0a1b2c4d`.
    pub id: String,
    /// The screen.
    pub screen: u8,
    /// `view` or `control`.
    pub mode: ViewerMode,
    /// The page to open in a browser; its token is after `#`.
    pub url: String,
    /// Who it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// When it was made, in RFC 3339.
    pub created_at: String,
    /// When it stops working, in RFC 3339.
    pub expires_at: String,
    /// When it was revoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
}

impl fmt::Debug for ViewerGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ViewerGrant")
            .field("id", &self.id)
            .field("screen", &self.screen)
            .field("mode", &self.mode)
            .field("url", &"<hidden>")
            .field("expires_at", &self.expires_at)
            .field("revoked_at", &self.revoked_at)
            .finish_non_exhaustive()
    }
}

/// A screen's viewer URLs, as `GET /v1/boxes/{id}` shows them.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ScreenViewers {
    /// The screen.
    pub screen: u8,
    /// Watch only.
    pub view_url: String,
    /// Mouse, keyboard and clipboard.
    pub takeover_url: String,
    /// When both stop working, in RFC 3339.
    pub expires_at: String,
}

impl fmt::Debug for ScreenViewers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScreenViewers")
            .field("screen", &self.screen)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

// ---------------------------------------------------------------------------
// Control and handoff

/// A person in control of the box through a takeover URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HumanControl {
    /// Since when, in RFC 3339.
    pub since: String,
    /// The screen they took.
    pub screen: u8,
    /// The grant whose URL they use.
    pub grant: String,
    /// Who the grant is for, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// An agent's request for a person's help.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HelpRequest {
    /// Why, shown in the viewer page.
    pub reason: String,
    /// The screen the person is asked to take.
    pub screen: u8,
    /// Since when, in RFC 3339.
    pub since: String,
}

/// Where a handoff between the agent and a person is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HandoffState {
    /// Nobody asked for help and no person is in control.
    None,
    /// The agent asked for help; no person has taken control yet.
    Waiting,
    /// A person is in control: the agent's input is refused.
    HumanInControl,
    /// A person took control and handed it back.
    HandedBack,
}

impl HandoffState {
    /// The state as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Waiting => "waiting",
            Self::HumanInControl => "human_in_control",
            Self::HandedBack => "handed_back",
        }
    }
}

impl fmt::Display for HandoffState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How control came back to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReturnedBy {
    /// The person pressed the page's hand-back button.
    Released,
    /// The person's takeover connections closed and stayed closed for the
    /// grace period.
    Disconnected,
    /// Their URL was revoked.
    Revoked,
    /// Their URL expired.
    Expired,
    /// The box's viewer key changed (a new desktop, or a reset).
    Reset,
}

wire_names!(ReturnedBy {
    Released => "released",
    Disconnected => "disconnected",
    Revoked => "revoked",
    Expired => "expired",
    Reset => "reset",
});

/// A handback: when and how control came back to the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Handback {
    /// When, in RFC 3339.
    pub at: String,
    /// How.
    pub by: ReturnedBy,
}

/// The handoff as the guest sees it: `GET /v1/viewers/handoff` on the guest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HandoffStatus {
    /// Where it is.
    pub state: HandoffState,
    /// The agent's request, while it waits or a person helps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<HelpRequest>,
    /// The person in control.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<HumanControl>,
    /// The last handback, since the last request for help.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handed_back: Option<Handback>,
}

/// `POST /v1/boxes/{id}/handoff` (and the guest's `PUT /v1/viewers/help`):
/// ask a person for help.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AskForHelp {
    /// Why, shown in the viewer page: 1 to 500 characters.
    pub reason: String,
    /// The screen to take (default 0).
    #[serde(default)]
    pub screen: u8,
    /// Seconds the takeover URL works (default 3600, 1 to 86400). Not on the
    /// guest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_after_secs: Option<u64>,
}

/// The answer of the server's handoff routes: where the handoff is, and the
/// takeover URL to send a person.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Handoff {
    /// The box.
    pub box_id: String,
    /// The handoff as the box sees it.
    #[serde(flatten)]
    pub status: HandoffStatus,
    /// The page a person opens to take control, with the reason shown
    /// (answered when help is asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub takeover_url: Option<String>,
    /// When that URL stops working.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

impl fmt::Debug for Handoff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handoff")
            .field("box_id", &self.box_id)
            .field("status", &self.status)
            .field("takeover_url", &self.takeover_url.as_ref().map(|_| "<hidden>"))
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// The query of the handoff waits: answer once it is in that state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HandoffWait {
    /// `handed_back`: answer once no person is in control and no request
    /// waits (handed back, or withdrawn).
    #[serde(default)]
    pub wait_for: Option<HandoffState>,
    /// The longest wait, in seconds (default 60, at most 900). At the end
    /// the handoff is answered as it is.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

// ---------------------------------------------------------------------------
// The guest's side

/// `PUT /v1/viewers/config` on the guest: the viewer key that signs this
/// box's tokens, the box's name for the pages, and the revoked grants. A new
/// key closes every viewer connection; the same key changes only the rest.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ViewerConfig {
    /// 64 hex digits. Never logged.
    pub key: String,
    /// The box's id, which every token names.
    pub box_id: String,
    /// A name to show in the pages (the box's name or id).
    pub title: String,
    /// Grants that no longer open anything; their connections are closed.
    #[serde(default)]
    pub revoked: Vec<String>,
    /// Who each grant is for, by grant id (shown in control events).
    #[serde(default)]
    pub labels: std::collections::BTreeMap<String, String>,
    /// The box's policy needs no token (`auth: none`): connections without
    /// one may watch and take over any screen.
    #[serde(default)]
    pub open: bool,
}

impl fmt::Debug for ViewerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ViewerConfig")
            .field("key", &"<hidden>")
            .field("box_id", &self.box_id)
            .field("title", &self.title)
            .field("revoked", &self.revoked)
            .field("open", &self.open)
            .finish_non_exhaustive()
    }
}

/// One open viewer connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ViewerConnection {
    /// The grant it opened with.
    pub grant: String,
    /// The screen.
    pub screen: u8,
    /// `view` or `control`.
    pub mode: ViewerMode,
    /// Since when, in RFC 3339.
    pub since: String,
    /// Bytes sent to the viewer.
    pub bytes_out: u64,
    /// Bytes received from the viewer (input included, dropped or not).
    pub bytes_in: u64,
    /// Input messages dropped (watch only, or handed back).
    pub dropped: u64,
}

/// `GET /v1/viewers` on the guest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ViewersStatus {
    /// Whether a key is set (without one, every viewer is refused).
    pub configured: bool,
    /// The open connections.
    pub connections: Vec<ViewerConnection>,
    /// The handoff.
    pub handoff: HandoffStatus,
    /// The sequence number of the last control event.
    pub last_event: u64,
}

/// What happened to control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ControlEventKind {
    /// The agent asked for help.
    HelpRequested,
    /// The agent withdrew its request.
    HelpWithdrawn,
    /// A person took control.
    Taken,
    /// Control came back to the agent.
    Returned,
}

wire_names!(ControlEventKind {
    HelpRequested => "help_requested",
    HelpWithdrawn => "help_withdrawn",
    Taken => "taken",
    Returned => "returned",
});

/// One change of who holds the box, in order: holmd records them in the
/// box's traces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ControlEvent {
    /// 1, 2, 3, … since the guest started.
    pub seq: u64,
    /// When, in RFC 3339 with milliseconds.
    pub at: String,
    /// What.
    pub kind: ControlEventKind,
    /// The screen.
    pub screen: u8,
    /// The grant of the person, for taken and returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<String>,
    /// Who the grant is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// How control came back, for returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<ReturnedBy>,
    /// The reason given, for help_requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The query of `GET /v1/viewers/events` on the guest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EventsQuery {
    /// Answer the events after this sequence number (default 0).
    #[serde(default)]
    pub after: Option<u64>,
    /// Wait up to this many seconds for one (default 0, at most 60).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// `GET /v1/viewers/events` on the guest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ControlEvents {
    /// Changes each time the guest starts: sequence numbers start again.
    pub boot: String,
    /// The events after the one asked for, oldest first (the guest keeps
    /// the last 256).
    pub events: Vec<ControlEvent>,
}

/// What a viewer page learns about itself: `GET /session` on the viewer
/// port, with the page's token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ViewerSession {
    /// The box's name or id.
    pub title: String,
    /// The box's id.
    pub box_id: String,
    /// The screen.
    pub screen: u8,
    /// `view` or `control`.
    pub mode: ViewerMode,
    /// The grant the page's URL belongs to.
    pub grant: String,
    /// When the token stops working, in RFC 3339 (empty when it never does).
    pub expires_at: String,
    /// Whether this grant handed control back (its input is dropped until it
    /// takes control again).
    pub released: bool,
    /// The handoff.
    pub handoff: HandoffStatus,
}

/// `POST /control` on the viewer port, with a takeover token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ControlAction {
    /// Hand control back to the agent: this URL's input is dropped until it
    /// takes control again.
    Release,
    /// Take control again after handing it back.
    Take,
}

/// The body of `POST /control` on the viewer port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ControlRequest {
    /// Release or take.
    pub action: ControlAction,
}
