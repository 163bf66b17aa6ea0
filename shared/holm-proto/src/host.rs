//! The server API: what `holmd` serves under `/v1`.
//!
//! Box routes under `/v1/boxes/{id}/…` forward to the box's guest and answer
//! the guest's types ([`crate::guest`]).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::guest::{Profile, Screen};
use crate::viewer::{HumanControl, ScreenViewers, ViewerPolicy};

wire_names!(Place { Host => "host", Remote => "remote" });
wire_names!(Environment {
    Container => "container",
    Microvm => "microvm",
    Vm => "vm",
    Unknown => "unknown",
});
wire_names!(RuntimeState { Available => "available", Unavailable => "unavailable" });
wire_names!(Ready { Browser => "browser", Desktop => "desktop" });
wire_names!(BoxState {
    Creating => "creating",
    Starting => "starting",
    Running => "running",
    Paused => "paused",
    Stopped => "stopped",
    Unreachable => "unreachable",
    Failed => "failed",
    Removed => "removed",
    Pooled => "pooled",
});

/// `GET /v1/health`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerHealth {
    /// Always `ok` when the server answers.
    pub status: String,
    /// The server's version.
    pub version: String,
}

/// Where a runtime runs its boxes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// On the server's own machine.
    Host,
    /// At a cloud vendor.
    Remote,
}

/// What a box is isolated by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Environment {
    /// Shares the host kernel, in its own namespaces.
    Container,
    /// Has its own kernel.
    Microvm,
    /// A full virtual machine.
    Vm,
    /// The provider does not say.
    Unknown,
}

/// Whether a runtime can take boxes now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeState {
    /// It answers.
    Available,
    /// It does not; `reason` says why.
    Unavailable,
}

/// What a runtime can do. A request it cannot do is refused before a box starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Can {
    /// Pause a box with its memory kept.
    pub pause: bool,
    /// Stop a box with its files kept, and start it again.
    pub stop: bool,
    /// Copy a box into a new one.
    pub fork: bool,
    /// Keep a browser profile on a named volume.
    pub browser_profile: bool,
    /// The most screens a box may have.
    pub screens: u8,
    /// Run Wayland boxes.
    pub wayland: bool,
    /// Set memory and CPUs per box.
    pub resources: bool,
}

/// A runtime, as `GET /v1/runtimes` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeInfo {
    /// The name boxes use to pick it.
    pub name: String,
    /// The engine or vendor behind it, such as `docker` or `e2b`.
    pub provider: String,
    /// Host or remote.
    pub place: Place,
    /// Container, microVM, VM or unknown.
    pub environment: Environment,
    /// Whether it takes boxes now.
    pub state: RuntimeState,
    /// Why it is unavailable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether a box that names no runtime goes here.
    pub default: bool,
    /// What it can do.
    pub can: Can,
    /// The lifetime of a box that asks for none, in seconds.
    pub lifetime_secs: u64,
    /// The longest lifetime a box may ask for, in seconds.
    pub max_lifetime_secs: u64,
    /// The names of the secrets it holds, never their values.
    #[serde(default)]
    pub secrets: Vec<String>,
    /// A remote runtime's settings that are not secret, as given.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub fields: serde_json::Map<String, serde_json::Value>,
    /// A remote runtime's key version: 1 when it was added, one more each
    /// time its key is replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_version: Option<u64>,
}

/// `POST /v1/runtimes`: adds a remote runtime, a cloud vendor account with a
/// name. Only vendors: the API cannot name a host program, socket or engine.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AddRuntime {
    /// The name boxes use to pick it: 1 to 40 lowercase letters, digits,
    /// `-` or `_`.
    pub name: String,
    /// The vendor: `e2b`, `vercel`, `daytona`, `modal` or `runtime-cloud`.
    pub provider: String,
    /// Its settings that are not secret, such as `team_id` or
    /// `max_lifetime_secs`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, serde_json::Value>,
    /// The vendor's key. Encrypted before it is stored, never returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
}

/// `PUT /v1/runtimes/{name}`: adds a remote runtime or replaces one whole
/// (a missing `api_key` keeps the stored key when the vendor is the same).
#[derive(Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReplaceRuntime {
    /// The vendor.
    pub provider: String,
    /// Its settings that are not secret.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, serde_json::Value>,
    /// The vendor's key. Encrypted before it is stored, never returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
}

/// `PATCH /v1/runtimes/{name}`: changes some settings of a remote runtime,
/// or replaces its key.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChangeRuntime {
    /// Settings to set; `null` removes one.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, serde_json::Value>,
    /// A new key. Encrypted before it is stored, never returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
}

macro_rules! debug_without_key {
    ($t:ty, $($f:ident),*) => {
        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($t))
                    $(.field(stringify!($f), &self.$f))*
                    .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
                    .finish()
            }
        }
    };
}
debug_without_key!(AddRuntime, name, provider, fields);
debug_without_key!(ReplaceRuntime, provider, fields);
debug_without_key!(ChangeRuntime, fields);

/// What a box is: its desktop and what is installed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BoxSpec {
    /// A name of your own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// How many screens, 1 to 6 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screens: Option<u8>,
    /// The size of every screen, such as `1280x800` (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_size: Option<String>,
    /// The display server (default `x11`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<Profile>,
    /// Apps from the catalogue, such as `vscode` or `gimp`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub apps: Vec<String>,
    /// Debian packages to install.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<String>,
    /// Run Chromium on each screen (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<bool>,
    /// Labels of your own, up to 32.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Keep Chromium's user data (screen 0) in this named browser profile,
    /// which later boxes with the same profile reuse. 1 to 63 lowercase
    /// letters, digits, `-`, `_` or `.`, starting with a letter or digit.
    /// Only on runtimes whose `can.browser_profile`; one live box per profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// How people reach the box's viewers (default: through the server,
    /// with a token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<ViewerPolicy>,
    /// When the box answers `running`: `browser` (the default: once every
    /// component, Chromium too, is up) or `desktop` (once the display and
    /// the window manager answer; page tools answer `not_ready` with a
    /// retry hint until Chromium is up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<Ready>,
    /// Record every screen for the box's whole life (default false): one
    /// recording a screen from its start, stopped when the box stops, the
    /// files kept by the server when the box is removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<bool>,
}

/// When a new box counts as usable.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Ready {
    /// Every component answers, Chromium too.
    #[default]
    Browser,
    /// The desktop answers (display, window manager, VNC); Chromium may
    /// still be starting.
    Desktop,
}

/// Where a box runs and for how long.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Placement {
    /// The runtime (default: the server's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// Memory, such as `4g` or `512m`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// CPUs, such as `2` or `0.5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<f64>,
    /// The most the box may write to its own disk (its files outside
    /// volumes), such as `10g` or `512m`: 32m to 1t, default 10g. The
    /// server measures a running box's use every few seconds and stops a
    /// box past it (`stopped`, with a reason that begins `disk_limit`).
    /// Docker and podman only; a vendor's box has the vendor's disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<String>,
    /// The box is removed this many seconds after it is created (at least 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_after_secs: Option<u64>,
    /// The box is removed when no command came through the server for this
    /// many seconds (at least 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_secs: Option<u64>,
    /// The most processes and threads the box may have (64 to 4194304;
    /// default: the runtime's, 4096 unless its table says otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids_limit: Option<u32>,
}

/// `POST /v1/boxes`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CreateBox {
    /// What the box is.
    #[serde(default)]
    pub spec: BoxSpec,
    /// Where it runs.
    #[serde(default)]
    pub placement: Placement,
}

/// How the reason of a box the server stopped because it wrote past its
/// `placement.disk` begins.
pub const DISK_LIMIT: &str = "disk_limit";

/// Where a box is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BoxState {
    /// Its image is being prepared or its machine made.
    Creating,
    /// Its machine runs; the desktop is coming up.
    Starting,
    /// The desktop answers.
    Running,
    /// Paused with its memory kept.
    Paused,
    /// Stopped with its files kept.
    Stopped,
    /// The server cannot reach it through its runtime; `reason` says why.
    Unreachable,
    /// It could not be made; `reason` says why.
    Failed,
    /// It is gone.
    Removed,
    /// Started and ready in a warm pool, waiting for a create that matches;
    /// shown only with `all`, never to agents.
    Pooled,
}

impl BoxState {
    /// Whether the box can still change state (not failed or removed).
    pub fn is_live(self) -> bool {
        !matches!(self, Self::Failed | Self::Removed)
    }
}

/// A box, as the server shows it. Its secret is never shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BoxInfo {
    /// The box's id, such as `box_7hq3k2m9x4`.
    pub id: String,
    /// Its runtime.
    pub runtime: String,
    /// Where it is in its life.
    pub state: BoxState,
    /// Why it is `failed` or `unreachable`, why the server stopped it
    /// (beginning with `disk_limit` when it wrote past `placement.disk`),
    /// or why it was removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What it is.
    pub spec: BoxSpec,
    /// The image it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Its screens, once known.
    #[serde(default)]
    pub screens: Vec<Screen>,
    /// When it was created, in RFC 3339.
    pub created_at: String,
    /// When the server removes it, in RFC 3339.
    pub expires_at: String,
    /// The idle timeout, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_secs: Option<u64>,
    /// The Chromium bridge (DevTools) on the server's host, such as
    /// `http://127.0.0.1:49154`, once the box runs a browser. It needs a
    /// credential: `POST /v1/boxes/{id}/bridge` gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bridge_url: Option<String>,
    /// The box this one was forked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<String>,
    /// Each screen's viewer URLs (watch only, and takeover), while the box
    /// runs; only `GET /v1/boxes/{id}` shows them. They carry credentials.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub viewers: Vec<ScreenViewers>,
    /// The person in control through a takeover URL, while one is: the
    /// agent's input is refused until they hand it back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub human_in_control: Option<HumanControl>,
    /// Set on a create (or fork) answered again for a repeated
    /// `Idempotency-Key`: nothing new was made.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}

/// The query of `GET /v1/boxes`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListBoxes {
    /// Where the previous page ended.
    #[serde(default)]
    pub cursor: Option<String>,
    /// 1 to 100 (default 50).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Only boxes in this state.
    #[serde(default)]
    pub state: Option<BoxState>,
    /// Also the boxes a warm pool holds (`pooled`, and those being made for
    /// a pool), which are otherwise never listed.
    #[serde(default)]
    pub all: Option<bool>,
}

/// The query of `POST /v1/boxes` and `GET /v1/boxes/{id}`: wait on the server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WaitQuery {
    /// Answer once the box is in this state (or has failed).
    #[serde(default)]
    pub wait_for: Option<BoxState>,
    /// The longest wait, in seconds (default 120, at most 900).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// `POST /v1/boxes/{id}/extend`: more time before the box's lifetime ends.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExtendBox {
    /// Seconds added to the box's lifetime (at least 60). The lifetime never
    /// passes its runtime's maximum, counted from the box's creation.
    pub by_secs: u64,
}

/// `POST /v1/boxes/{id}/fork`: a new box with a copy of this box's files,
/// on the same runtime.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ForkBox {
    /// A name of your own for the copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The copy's lifetime in seconds (default: the runtime's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_after_secs: Option<u64>,
    /// The copy's idle timeout in seconds (default: the original's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_secs: Option<u64>,
}

/// One request through the server to a box, as `GET /v1/boxes/{id}/traces`
/// shows it. It never holds a body, a secret or a query value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Trace {
    /// Sorts in the order the requests came; pass the last as `cursor`.
    pub id: String,
    /// The box.
    pub box_id: String,
    /// When the request came, in RFC 3339 with milliseconds.
    pub at: String,
    /// The HTTP method.
    pub method: String,
    /// The path, without its query.
    pub path: String,
    /// The names of the query parameters (their values are not kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub query: Vec<String>,
    /// The status answered.
    pub status: u16,
    /// The error code, when the server refused or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Milliseconds until the answer's head was sent (streams go on after).
    pub duration_ms: u64,
    /// The request id (empty for a control event).
    pub request_id: String,
    /// A change of who holds control, as the box's guest saw it: the trace
    /// then has method `CONTROL` and the screen's viewer as its path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<crate::viewer::ControlEvent>,
    /// What the request did, when it was an action (a timeline step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<crate::timeline::StepAction>,
    /// The image the request answered, when the server kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<crate::timeline::Shot>,
    /// For a screenshot taken on its own: the step it came after (the
    /// last action, when no screenshot had followed it yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// The query of `GET /v1/boxes/{id}/traces`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TracesQuery {
    /// Where the previous page ended.
    #[serde(default)]
    pub cursor: Option<String>,
    /// 1 to 1000 (default 100).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `POST /v1/images/build`, also the body of `holm image build`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BuildImage {
    /// The runtime whose engine builds the image (default: the default runtime).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// Apps from the catalogue.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub apps: Vec<String>,
    /// Debian packages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<String>,
    /// The display profile (default `x11`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<Profile>,
}

/// `POST /v1/images/prune`, also the body of `holm image prune`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PruneImages {
    /// The runtime whose engine is pruned (default: every runtime).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// Also remove unused images made for this holm version (by default
    /// only those made for other versions go).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all: bool,
    /// Say what would be removed, and remove nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

/// An image `POST /v1/images/prune` removed (or would remove).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PrunedImage {
    /// Its tag, or its id when it has none.
    pub image: String,
    /// The runtime whose engine held it.
    pub runtime: String,
    /// Its size in bytes, shared layers counted.
    pub size: u64,
}

/// One line of an image build's NDJSON progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BuildEvent {
    /// A line of build output.
    Progress {
        /// The text.
        message: String,
    },
    /// The image is ready; the last event.
    Done {
        /// The image's tag.
        image: String,
        /// Whether it existed already, so nothing was built.
        cached: bool,
    },
    /// The build failed; the last event.
    Error {
        /// What went wrong.
        error: crate::error::ApiError,
    },
}

/// An image holm built, as `holm image ls` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImageInfo {
    /// The tag, such as `holm-box:1f2e3d4c5b6a7980`.
    pub image: String,
    /// The runtime whose engine has it.
    pub runtime: String,
    /// Its apps.
    pub apps: Vec<String>,
    /// Its packages.
    pub packages: Vec<String>,
    /// Its display profile.
    #[serde(default)]
    pub display: Profile,
    /// Its size in bytes.
    pub size: u64,
    /// When it was built, in RFC 3339.
    pub created_at: Option<String>,
}

/// An app of the catalogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppInfo {
    /// The name to pass to `--app`.
    pub name: String,
    /// What it is.
    pub description: String,
    /// It comes from a third-party repository that must be reachable at build time.
    pub third_party: bool,
    /// It needs X11: in a Wayland box it runs through Xwayland.
    #[serde(default)]
    pub x11: bool,
}

/// `POST /v1/boxes/{id}/bridge`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BridgeRequest {
    /// The ticket's lifetime in seconds (default 60, 1 to 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_secs: Option<u32>,
    /// Make a new bridge secret first: every connection opened with the old
    /// one ends, and its tickets stop working.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rotate: bool,
}

/// How to reach a box's Chromium (DevTools) from the host: the answer of
/// `POST /v1/boxes/{id}/bridge`. It holds credentials: do not log it.
///
/// With headers: `chromium.connectOverCDP(http_url, { headers })` in
/// Playwright, or `puppeteer.connect({ browserWSEndpoint: ws_url, headers })`.
/// Without: `connectOverCDP(ticket_url)` before `expires_at`.
#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BridgeAccess {
    /// The bridge's HTTP address, such as `http://127.0.0.1:49154`.
    pub http_url: String,
    /// The browser's WebSocket address through the bridge.
    pub ws_url: String,
    /// The headers every request to `http_url` and `ws_url` needs:
    /// `Authorization: Bearer <bridge secret>`. The bridge secret is not the
    /// box secret; it changes when a restarted server takes the box back.
    pub headers: BTreeMap<String, String>,
    /// `http_url` with a one-connection ticket in its path, for clients that
    /// cannot send headers.
    pub ticket_url: String,
    /// The browser's WebSocket address with the ticket.
    pub ticket_ws_url: String,
    /// When the ticket can no longer open a connection, in RFC 3339.
    pub expires_at: String,
}

impl std::fmt::Debug for BridgeAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BridgeAccess")
            .field("http_url", &self.http_url)
            .field("headers", &"<hidden>")
            .field("ticket_url", &"<hidden>")
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What users see of a state is the word the API writes.
    fn shown_as_on_the_wire<T: Serialize + std::fmt::Display + Copy>(all: &[T]) {
        for v in all {
            assert_eq!(serde_json::to_value(v).unwrap(), serde_json::json!(v.to_string()));
        }
    }

    #[test]
    fn states_display_their_wire_names() {
        shown_as_on_the_wire(BoxState::ALL);
        shown_as_on_the_wire(RuntimeState::ALL);
        shown_as_on_the_wire(Place::ALL);
        shown_as_on_the_wire(Environment::ALL);
        shown_as_on_the_wire(Ready::ALL);
        shown_as_on_the_wire(crate::guest::ElementState::ALL);
        shown_as_on_the_wire(crate::viewer::ReturnedBy::ALL);
        shown_as_on_the_wire(crate::viewer::ControlEventKind::ALL);
        assert_eq!(format!("box is {}", BoxState::Running), "box is running");
    }
}
