//! Every route of the guest, once: its method and path, what it takes and
//! answers, whether it only watches the box or is a stream, and how holmd
//! reaches it. The guest's router is built from this table, holmd forwards
//! and documents the routes marked [`Holmd::Forward`] from it, and a test on
//! each side fails when a route is missing.

use super::Method::{Delete, Post, Put};
use super::{Call, Method, Op, Params, Step};
use crate::accessibility::{NodeActed, NodeAction, Tree, TreeQuery};
use crate::agent::{AgentRequest, AgentToken};
use crate::desk::{Clipboard, ClipboardSet, Window, WindowActed, WindowAction};
use crate::guest::{
    BoxSecret, BridgeSecret, BridgeStatus, ClickRequest, CommandEvent, CommandRequest,
    CommandResult, CursorPosition, EvaluateRequest, EvaluateResult, FileInfo, FileStat,
    FillRequest, Health, Info, InputRequest, InputResult, ListQuery, LoadStateResult, MkdirRequest,
    NavigateRequest, OpenTab, OutputEvent, OutputPage, OutputQuery, Page, PageContent, PageResult,
    PageScreenshotOptions, PathQuery, PressRequest, ProcessInfo, ProcessStart, RemoveRequest,
    RenameRequest, Screen, ScreenshotOptions, SignalRequest, StdinQuery, StorageState, Tab,
    TabQuery, Ticket, TicketRequest, TypeRequest, WaitRequest, WriteQuery,
};
use crate::recording::{Recording, RecordingStart, RecordingStop};
use crate::terminal::{TerminalEvent, TerminalQuery};
use crate::timeline::StepKind;
use crate::viewer::{
    AskForHelp, ControlEvents, EventsQuery, HandoffStatus, HandoffWait, ViewerConfig, ViewersStatus,
};

/// How holmd reaches a guest route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holmd {
    /// Forwarded as it is: `/v1/boxes/{id}/REST` to the guest's `/v1/REST`.
    Forward,
    /// Answered by a route of holmd's own, which calls it (the route named).
    Own(&'static str),
    /// Not reachable through holmd, for the reason given (the server's
    /// alone, or the guest's own, reached straight with `holm agent`).
    Internal(&'static str),
}

/// One route of the guest.
#[derive(Debug, Clone, Copy)]
pub struct GuestRoute {
    /// Its method.
    pub method: Method,
    /// Its path in the guest, with `{name}` parameters.
    pub path: &'static str,
    /// What it takes and answers.
    pub op: Op,
    /// How holmd reaches it.
    pub holmd: Holmd,
    /// Whether it only watches the box: watching does not move an idle
    /// deadline; everything else does.
    pub watches: bool,
    /// Whether it is a stream (a command's events, a followed output, a
    /// command waited for, a file's contents, a terminal), which holmd's
    /// forward timeout does not bound.
    pub stream: bool,
    /// The guest protocol generation it arrived in
    /// ([`crate::guest::PROTO_VERSION`] then): holmd refuses it for a box
    /// whose guest speaks an older one.
    pub since: u32,
    /// What it is on the box's timeline; `None` for a read, which stays in
    /// the traces only.
    pub step: Option<Step>,
}

impl GuestRoute {
    /// A route that holmd forwards, moves the idle deadline and is no stream.
    pub const fn new(method: Method, path: &'static str, op: Op) -> Self {
        Self {
            method,
            path,
            op,
            holmd: Holmd::Forward,
            watches: false,
            stream: false,
            since: 1,
            step: None,
        }
    }

    /// Arrived in guest protocol generation `generation`.
    #[must_use]
    pub const fn since(mut self, generation: u32) -> Self {
        self.since = generation;
        self
    }

    /// Is `step` on the box's timeline.
    #[must_use]
    pub const fn step(mut self, step: Step) -> Self {
        self.step = Some(step);
        self
    }

    /// Whether a guest that speaks protocol `proto` serves it.
    pub const fn served_by(&self, proto: u32) -> bool {
        proto >= self.since
    }

    /// Only watches the box.
    #[must_use]
    pub const fn watches(mut self) -> Self {
        self.watches = true;
        self
    }

    /// Is a stream.
    #[must_use]
    pub const fn stream(mut self) -> Self {
        self.stream = true;
        self
    }

    /// Is answered by holmd's route `route`.
    #[must_use]
    pub const fn own(mut self, route: &'static str) -> Self {
        self.holmd = Holmd::Own(route);
        self
    }

    /// Is the server's alone, for the reason given.
    #[must_use]
    pub const fn internal(mut self, why: &'static str) -> Self {
        self.holmd = Holmd::Internal(why);
        self
    }

    /// Its path through holmd, `/v1/boxes/{id}` and the rest of its own,
    /// when holmd forwards it.
    pub fn forwarded_path(&self) -> Option<String> {
        (self.holmd == Holmd::Forward)
            .then(|| format!("/v1/boxes/{{id}}{}", self.path.trim_start_matches("/v1")))
    }

    /// The route `method` `path` (a concrete path) names, if any.
    pub fn find(method: Method, path: &str) -> Option<&'static GuestRoute> {
        GUEST_ROUTES.iter().find(|r| r.method == method && super::path_matches(r.path, path))
    }
}

/// A page tool's step, named `name`, its parameters the body's.
const fn page(name: &'static str) -> Step {
    Step::new(StepKind::Page, name, Params::Body)
}

const fn get(path: &'static str, op: Op) -> GuestRoute {
    GuestRoute::new(Method::Get, path, op)
}

const fn post(path: &'static str, op: Op) -> GuestRoute {
    GuestRoute::new(Method::Post, path, op)
}

const fn put(path: &'static str, op: Op) -> GuestRoute {
    GuestRoute::new(Method::Put, path, op)
}

/// `GET /health`: the desktop's readiness, without a credential.
pub const HEALTH: Call<(), Health> = Call::get(
    "/health",
    "health",
    "Whether each component of the desktop is ready; needs no credential",
)
.internal("holmd reads it to know a box is ready")
.public()
.watches();

/// `GET /v1/info`.
pub const INFO: Call<(), Info> =
    Call::get("/v1/info", "desktop", "The guest's version, screens and capabilities").watches();

/// `GET /v1/screens`.
pub const SCREENS: Call<(), Page<Screen>> =
    Call::get("/v1/screens", "desktop", "The box's screens").watches();

/// `GET /v1/screens/{screen}`.
pub const SCREEN: Call<(), Screen> =
    Call::get("/v1/screens/{screen}", "desktop", "One screen").watches();

/// `GET /v1/screens/{screen}/cursor`.
pub const CURSOR: Call<(), CursorPosition> =
    Call::get("/v1/screens/{screen}/cursor", "desktop", "Where the pointer is").watches();

/// `POST /v1/commands/run`: waits for the command, so it is a stream.
pub const RUN: Call<CommandRequest, CommandResult> =
    Call::post("/v1/commands/run", "commands", "Run a command and wait for it")
        .stream()
        .step(Step::new(StepKind::Command, "run", Params::Command));

/// `POST /v1/processes`.
pub const SPAWN: Call<ProcessStart, ProcessInfo> = Call::post(
    "/v1/processes",
    "processes",
    "Start a background process",
)
.step(Step::new(StepKind::Command, "spawn", Params::Command));

/// `GET /v1/processes`.
pub const PROCESSES: Call<(), Page<ProcessInfo>> =
    Call::get("/v1/processes", "processes", "The background processes");

/// `GET /v1/processes/{process}`.
pub const PROCESS: Call<(), ProcessInfo> =
    Call::get("/v1/processes/{process}", "processes", "One background process");

/// `POST /v1/files/mkdir`.
pub const MKDIR: Call<MkdirRequest, FileInfo> = Call::post(
    "/v1/files/mkdir",
    "files",
    "Make a directory",
)
.step(Step::new(StepKind::File, "mkdir", Params::Body));

/// `POST /v1/files/rename`.
pub const RENAME: Call<RenameRequest, FileInfo> = Call::post(
    "/v1/files/rename",
    "files",
    "Rename a path",
)
.step(Step::new(StepKind::File, "rename", Params::Body));

/// `GET /v1/browser/tabs`.
pub const TABS: Call<(), Page<Tab>> =
    Call::get("/v1/browser/tabs", "browser", "The browser's tabs").watches();

/// `POST /v1/browser/tabs`.
pub const OPEN_TAB: Call<OpenTab, Tab> = Call::post(
    "/v1/browser/tabs",
    "browser",
    "Open a tab, make it current, and wait for its page to load",
)
.step(Step::new(StepKind::Page, "open_tab", Params::Body));

/// `POST /v1/browser/navigate`.
pub const NAVIGATE: Call<NavigateRequest, PageResult> = Call::post(
    "/v1/browser/navigate",
    "browser",
    "Load a URL and wait for load, DOMContentLoaded or commit",
)
.step(page("navigate"));

/// A move through a tab's history, of generation 2: `POST` with the tab in
/// the query, answering where the tab is once that page has loaded; the
/// SDKs' method `sdk` as it is.
const fn history(
    path: &'static str,
    summary: &'static str,
    step: &'static str,
    sdk: &'static str,
) -> Call<(), PageResult, TabQuery> {
    let op = Op::json::<PageResult>("browser", summary).query::<TabQuery>().sdk(sdk);
    Call::of(post(path, op)).since(2).step(Step::new(StepKind::Page, step, Params::Query))
}

/// `POST /v1/browser/back`.
pub const BACK: Call<(), PageResult, TabQuery> = history(
    "/v1/browser/back",
    "Go back one page in a tab's history and wait for it to load",
    "back",
    "page_back",
);

/// `POST /v1/browser/forward`.
pub const FORWARD: Call<(), PageResult, TabQuery> = history(
    "/v1/browser/forward",
    "Go forward one page in a tab's history and wait for it to load",
    "forward",
    "page_forward",
);

/// `POST /v1/browser/reload`.
pub const RELOAD: Call<(), PageResult, TabQuery> = history(
    "/v1/browser/reload",
    "Load a tab's page again and wait for it to load",
    "reload",
    "page_reload",
);

/// `POST /v1/browser/click`.
pub const CLICK: Call<ClickRequest, PageResult> = Call::post(
    "/v1/browser/click",
    "browser",
    "Click the first visible element that matches a CSS selector, with real mouse events",
)
.step(page("click"));

/// `POST /v1/browser/type`.
pub const TYPE: Call<TypeRequest, PageResult> = Call::post(
    "/v1/browser/type",
    "browser",
    "Type text as key presses, into the element that matches or where the focus is",
)
.step(page("type"));

/// `POST /v1/browser/fill`.
pub const FILL: Call<FillRequest, PageResult> = Call::post(
    "/v1/browser/fill",
    "browser",
    "Set a field's value at once, firing input and change",
)
.step(page("fill"));

/// `POST /v1/browser/press`.
pub const PRESS: Call<PressRequest, PageResult> =
    Call::post("/v1/browser/press", "browser", "Press a key or chord such as Enter or Control+a")
        .step(page("press"));

/// `POST /v1/browser/wait`.
pub const WAIT: Call<WaitRequest, PageResult> = Call::post(
    "/v1/browser/wait",
    "browser",
    "Wait (bounded) until an element is visible, attached, hidden or detached",
)
.step(page("wait"));

/// `POST /v1/browser/evaluate`.
pub const EVALUATE: Call<EvaluateRequest, EvaluateResult> = Call::post(
    "/v1/browser/evaluate",
    "browser",
    "Evaluate a JavaScript expression; an exception is a page_error",
)
.step(page("evaluate"));

/// `GET /v1/browser/text`.
pub const PAGE_TEXT: Call<(), PageContent, TabQuery> =
    Call::get("/v1/browser/text", "browser", "The text a person sees in a tab")
        .query::<TabQuery>()
        .watches();

/// `GET /v1/browser/html`.
pub const PAGE_HTML: Call<(), PageContent, TabQuery> =
    Call::get("/v1/browser/html", "browser", "The HTML of a tab").query::<TabQuery>().watches();

/// `GET /v1/browser/state`.
pub const SAVE_STATE: Call<(), StorageState> = Call::get(
    "/v1/browser/state",
    "browser",
    "save_state: the cookies and the local and session storage of every origin open in a tab",
)
.watches();

/// `POST /v1/browser/state`.
pub const LOAD_STATE: Call<StorageState, LoadStateResult> = Call::post(
    "/v1/browser/state",
    "browser",
    "load_state: put cookies and storage (from any box) into this box's browser",
)
.step(Step::new(StepKind::Page, "load_state", Params::BodySize));

/// `GET /v1/bridge`: holmd asks it when it hands out the bridge.
pub const BRIDGE: Call<(), BridgeStatus> =
    Call::get("/v1/bridge", "browser", "Whether the Chromium bridge is armed, and its port")
        .own("POST /v1/boxes/{id}/bridge");

/// `POST /v1/bridge/tickets`.
pub const BRIDGE_TICKET: Call<TicketRequest, Ticket> = Call::post(
    "/v1/bridge/tickets",
    "credentials",
    "A ticket URL that opens one bridge connection without headers, until it expires",
)
.own("POST /v1/boxes/{id}/bridge");

/// `GET /v1/viewers`.
pub const VIEWERS: Call<(), ViewersStatus> =
    Call::get("/v1/viewers", "viewers", "The viewers' state: who is connected, who holds control")
        .own("GET /v1/boxes/{id}/viewers");

/// `GET /v1/viewers/events`.
pub const VIEWER_EVENTS: Call<(), ControlEvents, EventsQuery> = Call::get(
    "/v1/viewers/events",
    "viewers",
    "Who held control of the box through a takeover URL, and when: each take and each handback",
)
.query::<EventsQuery>();

/// `PUT /v1/viewers/help`.
pub const ASK_FOR_HELP: Call<AskForHelp, HandoffStatus> =
    Call::put("/v1/viewers/help", "viewers", "Ask a person for help; the agent's input waits")
        .own("POST /v1/boxes/{id}/handoff");

/// `GET /v1/viewers/handoff`.
pub const HANDOFF: Call<(), HandoffStatus, HandoffWait> = Call::get(
    "/v1/viewers/handoff",
    "viewers",
    "The handoff between agent and person; with wait_for=handed_back, answer once the person hands back",
)
.query::<HandoffWait>()
.own("GET /v1/boxes/{id}/handoff");

/// `GET /v1/windows`.
pub const WINDOWS: Call<(), Page<Window>> = Call::get(
    "/v1/windows",
    "windows",
    "The top-level windows of every screen: title, app, rectangle, and which has the focus",
)
.watches();

/// `POST /v1/windows/{window}`.
pub const WINDOW: Call<WindowAction, WindowActed> = Call::post(
    "/v1/windows/{window}",
    "windows",
    "Focus, move, resize or close a window, and wait (bounded) until the change shows",
)
.step(Step::new(StepKind::Window, "window", Params::Body));

/// `GET /v1/clipboard`.
pub const CLIPBOARD: Call<(), Clipboard> = Call::get(
    "/v1/clipboard",
    "clipboard",
    "The clipboard's types, its text and its PNG image (base64), as the apps see it",
)
.watches();

/// `PUT /v1/clipboard`.
pub const SET_CLIPBOARD: Call<ClipboardSet, Clipboard> = Call::put(
    "/v1/clipboard",
    "clipboard",
    "Put text, a PNG image (base64), or both on the clipboard; the guest owns it until an app copies",
)
.step(Step::new(StepKind::Window, "clipboard", Params::TextChars));

/// `GET /v1/accessibility`.
pub const ACCESSIBILITY: Call<(), Tree, TreeQuery> = Call::get(
    "/v1/accessibility",
    "accessibility",
    "The accessibility tree (AT-SPI) of the focused window or of the whole screen: role, name, value, states and screen rectangle of each node, bounded in depth and count",
)
.query::<TreeQuery>()
.watches();

/// `POST /v1/accessibility/act`.
pub const ACCESSIBILITY_ACT: Call<NodeAction, NodeActed> = Call::post(
    "/v1/accessibility/act",
    "accessibility",
    "Click a node or set its value, found by id or by role and name: the app's own action, else the pointer and keyboard at its rectangle",
);

/// `POST /v1/recordings`.
pub const RECORD: Call<RecordingStart, Recording> = Call::post(
    "/v1/recordings",
    "recordings",
    "Start recording a screen to a video (H.264 in fragmented MP4) kept in the box",
);

/// `POST /v1/recordings/stop`.
pub const STOP_RECORDING: Call<RecordingStop, Recording> = Call::post(
    "/v1/recordings/stop",
    "recordings",
    "Stop a screen's running recording; answers it once its file is complete",
);

/// `GET /v1/recordings`.
pub const RECORDINGS: Call<(), Page<Recording>> = Call::get(
    "/v1/recordings",
    "recordings",
    "The box's recordings, oldest first: file, screen, state, started_at, ended_at and bytes",
)
.watches();

/// `GET /v1/recordings/{file}`: a video, streamed (holmd answers it from
/// what it kept once the box is removed).
pub const RECORDING_FILE: GuestRoute = get(
    "/v1/recordings/{file}",
    Op::video(
        "recordings",
        "A recording's file (video/mp4), streamed; a running one as written so far",
    ),
)
.watches()
.stream();

/// `PUT /v1/secret`: the server's alone.
pub const SECRET: Call<BoxSecret, ()> = Call::told(
    Put,
    "/v1/secret",
    "credentials",
    "Replace the box secret (box secret only); the old one is refused from then on",
)
.internal("the box secret is the server's to set");

/// `POST /v1/agent/tokens`.
pub const AGENT_TOKEN: Call<AgentRequest, AgentToken> = Call::post(
    "/v1/agent/tokens",
    "credentials",
    "A new agent credential, for debugging from the host (box secret only): it opens \
     every route but those that manage credentials, until ttl_secs (default 300, at most 3600)",
)
.own("POST /v1/boxes/{id}/agent");

/// `DELETE /v1/agent/tokens`.
pub const REVOKE_AGENT_TOKENS: Call<(), ()> = Call::bare(
    Delete,
    "/v1/agent/tokens",
    "credentials",
    "Revoke every agent credential (box secret only)",
)
.own("DELETE /v1/boxes/{id}/agent");

/// `GET /v1/openapi.json`: the guest's own document.
pub const OPENAPI: Call<(), serde_json::Value> =
    Call::get("/v1/openapi.json", "guest", "This document; needs no credential")
        .public()
        .internal("the guest's own document, read straight (holm agent); holmd serves its own")
        .watches();

/// `GET /v1/screens/{screen}/screenshot`: a raw image.
pub const SCREENSHOT: GuestRoute = get(
    "/v1/screens/{screen}/screenshot",
    Op::image(
        "desktop",
        "A screenshot: the raw image, described by x-holm-* headers; If-None-Match answers 304 for an unchanged frame",
    )
    .query::<ScreenshotOptions>(),
)
.watches()
.step(Step::new(StepKind::Screenshot, "screen", Params::Query));

/// `POST /v1/screens/{screen}/input`: JSON, or the image after the
/// actions when the body asks for a screenshot.
pub const INPUT: GuestRoute = post(
    "/v1/screens/{screen}/input",
    Op::json_or_image::<InputResult>(
        "desktop",
        "Input actions in order; with screenshot, answer the image after them",
    )
    .body::<InputRequest>(),
)
.step(Step::new(StepKind::Input, "input", Params::Input));

/// `POST /v1/commands/stream`: NDJSON events.
pub const COMMAND_STREAM: GuestRoute = post(
    "/v1/commands/stream",
    Op::ndjson::<CommandEvent>("commands", "Run a command and stream its events")
        .body::<CommandRequest>(),
)
.stream()
.step(Step::new(StepKind::Command, "stream", Params::Command));

/// `DELETE /v1/processes/{process}`.
pub const KILL: Call<(), ()> = Call::bare(
    Delete,
    "/v1/processes/{process}",
    "processes",
    "Kill a background process if it runs, and forget it",
)
.step(Step::new(StepKind::Command, "kill", Params::Path));

/// `GET /v1/processes/{process}/output`: a JSON page, or NDJSON when
/// following.
pub const OUTPUT: GuestRoute = get(
    "/v1/processes/{process}/output",
    Op::json_or_ndjson::<OutputPage, OutputEvent>(
        "processes",
        "Output events after a cursor; follow=true streams",
    )
    .query::<OutputQuery>(),
)
.stream();

/// `POST /v1/processes/{process}/stdin`: a raw body.
pub const STDIN: GuestRoute = post(
    "/v1/processes/{process}/stdin",
    Op::empty("processes", "Write the raw body to standard input; eof=true closes it")
        .query::<StdinQuery>()
        .raw_body(),
)
.stream()
.step(Step::new(StepKind::Command, "stdin", Params::Path));

/// `POST /v1/processes/{process}/signal`.
pub const SIGNAL: Call<SignalRequest, ()> =
    Call::told(Post, "/v1/processes/{process}/signal", "processes", "Send a signal")
        .step(Step::new(StepKind::Command, "signal", Params::Body));

/// `GET /v1/files/content`: raw bytes, streamed.
pub const READ_FILE: GuestRoute =
    get("/v1/files/content", Op::bytes("files", "Read a file").query::<PathQuery>()).stream();

/// `PUT /v1/files/content`: a raw body, streamed.
pub const WRITE_FILE: GuestRoute = put(
    "/v1/files/content",
    Op::json::<FileInfo>("files", "Write a file atomically, making parents")
        .query::<WriteQuery>()
        .raw_body(),
)
.stream()
.step(Step::new(StepKind::File, "write", Params::Query));

/// `GET /v1/files/list`.
pub const LIST: Call<(), Page<FileInfo>, ListQuery> =
    Call::get("/v1/files/list", "files", "List a directory").query::<ListQuery>();

/// `GET /v1/files/stat`.
pub const STAT: Call<(), FileStat, PathQuery> =
    Call::get("/v1/files/stat", "files", "Describe a path").query::<PathQuery>();

/// `POST /v1/files/remove`.
pub const REMOVE: Call<RemoveRequest, ()> =
    Call::told(Post, "/v1/files/remove", "files", "Remove a path").step(Step::new(
        StepKind::File,
        "remove",
        Params::Body,
    ));

/// `PUT /v1/bridge/secret`: the server's alone.
pub const BRIDGE_SECRET: Call<BridgeSecret, ()> =
    Call::told(Put, "/v1/bridge/secret", "credentials", "Replace the bridge's secret")
        .internal("the bridge's secret is the server's to set");

/// `DELETE /v1/browser/tabs/{tab}`.
pub const CLOSE_TAB: Call<(), ()> =
    Call::bare(Delete, "/v1/browser/tabs/{tab}", "browser", "Close a tab").step(Step::new(
        StepKind::Page,
        "close_tab",
        Params::Path,
    ));

/// `POST /v1/browser/tabs/{tab}/activate`.
pub const ACTIVATE_TAB: Call<(), ()> = Call::bare(
    Post,
    "/v1/browser/tabs/{tab}/activate",
    "browser",
    "Bring a tab to the front and make it current",
)
.step(Step::new(StepKind::Page, "activate_tab", Params::Path));

/// `GET /v1/browser/screenshot`: a raw image.
pub const PAGE_SCREENSHOT: GuestRoute = get(
    "/v1/browser/screenshot",
    Op::image(
        "browser",
        "A screenshot of a tab (viewport or full page): the raw PNG or JPEG with x-holm-width and x-holm-height",
    )
    .query::<PageScreenshotOptions>(),
)
.watches()
.step(Step::new(StepKind::Screenshot, "page", Params::Query));

/// `GET /v1/terminal`: a WebSocket.
pub const TERMINAL: GuestRoute = get(
    "/v1/terminal",
    Op::websocket::<TerminalEvent>(
        "terminal",
        "A terminal: a real pty in the box over a WebSocket (Upgrade: websocket). Binary frames \
         carry its bytes both ways; text frames are JSON: {\"type\":\"resize\",\"cols\",\"rows\"} \
         from the client, ready (first), error and exit (last) from the server",
    )
    .query::<TerminalQuery>(),
)
.stream()
.step(Step::new(StepKind::Command, "terminal", Params::Path));

/// `PUT /v1/viewers/config`: the server's alone.
pub const VIEWER_CONFIG: Call<ViewerConfig, ()> =
    Call::told(Put, "/v1/viewers/config", "credentials", "Set the viewers' key and grants")
        .internal("the viewers' key and grants are the server's to set");

/// `DELETE /v1/viewers/help`.
pub const WITHDRAW_HELP: Call<(), HandoffStatus> =
    Call::delete("/v1/viewers/help", "viewers", "Withdraw a request for help")
        .own("DELETE /v1/boxes/{id}/handoff");

/// `DELETE /v1/recordings/{file}`.
pub const REMOVE_RECORDING: Call<(), ()> = Call::bare(
    Delete,
    "/v1/recordings/{file}",
    "recordings",
    "Remove a recording that is not running, and its file",
);

/// Every route of the guest.
pub static GUEST_ROUTES: &[GuestRoute] = &[
    HEALTH.route,
    SECRET.route,
    AGENT_TOKEN.route,
    REVOKE_AGENT_TOKENS.route,
    OPENAPI.route,
    INFO.route,
    SCREENS.route,
    SCREEN.route,
    CURSOR.route,
    SCREENSHOT,
    INPUT,
    RUN.route,
    COMMAND_STREAM,
    SPAWN.route,
    PROCESSES.route,
    PROCESS.route,
    KILL.route,
    OUTPUT,
    STDIN,
    SIGNAL.route,
    READ_FILE,
    WRITE_FILE,
    LIST.route,
    STAT.route,
    MKDIR.route,
    REMOVE.route,
    RENAME.route,
    BRIDGE.route,
    BRIDGE_SECRET.route,
    BRIDGE_TICKET.route,
    TABS.route,
    OPEN_TAB.route,
    CLOSE_TAB.route,
    ACTIVATE_TAB.route,
    NAVIGATE.route,
    BACK.route,
    FORWARD.route,
    RELOAD.route,
    CLICK.route,
    TYPE.route,
    FILL.route,
    PRESS.route,
    WAIT.route,
    EVALUATE.route,
    PAGE_SCREENSHOT,
    PAGE_TEXT.route,
    PAGE_HTML.route,
    SAVE_STATE.route,
    LOAD_STATE.route,
    TERMINAL,
    VIEWERS.route,
    VIEWER_CONFIG.route,
    VIEWER_EVENTS.route,
    ASK_FOR_HELP.route,
    WITHDRAW_HELP.route,
    HANDOFF.route,
    WINDOWS.route,
    WINDOW.route,
    CLIPBOARD.route,
    SET_CLIPBOARD.route,
    ACCESSIBILITY.route,
    ACCESSIBILITY_ACT.route,
    RECORD.route,
    STOP_RECORDING.route,
    RECORDINGS.route,
    RECORDING_FILE,
    REMOVE_RECORDING.route,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_route_is_declared_once() {
        let mut seen = std::collections::BTreeSet::new();
        for r in GUEST_ROUTES {
            assert!(seen.insert((r.method, r.path)), "{} {} twice", r.method, r.path);
        }
    }

    #[test]
    fn every_route_arrived_in_a_generation_this_guest_speaks() {
        for r in GUEST_ROUTES {
            assert!(
                (1..=crate::guest::PROTO_VERSION).contains(&r.since),
                "{} {} arrived in {}",
                r.method,
                r.path,
                r.since
            );
            assert!(r.served_by(crate::guest::PROTO_VERSION));
        }
        let later = INFO.route.since(2);
        assert!(!later.served_by(1) && later.served_by(2));
    }

    #[test]
    fn a_concrete_path_finds_its_route() {
        let r = GuestRoute::find(Method::Get, "/v1/processes/p_1/output").unwrap();
        assert_eq!(r.path, "/v1/processes/{process}/output");
        assert!(r.stream && !r.watches);
        assert!(GuestRoute::find(Method::Get, "/v1/processes//output").is_none());
        assert!(GuestRoute::find(Method::Patch, "/v1/info").is_none());
        let forwarded = GuestRoute::find(Method::Get, "/v1/screens/0").unwrap();
        assert_eq!(forwarded.forwarded_path().unwrap(), "/v1/boxes/{id}/screens/{screen}");
        assert!(HEALTH.route.forwarded_path().is_none());
    }
}
