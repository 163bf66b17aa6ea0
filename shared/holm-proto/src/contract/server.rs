//! Every route of holmd's own, once: its method and path, what it takes
//! (query, body) and answers, and whether it needs the server token. holmd
//! registers each handler with its record ([`SERVER_ROUTES`] is the list a
//! test holds holmd's router to), documents it from the record, and
//! `holm-client`'s `Client` calls it through one generic call that takes
//! the typed record ([`ServerCall`]): no path is spelled twice.
//!
//! The guest's routes that holmd forwards are not here; they are in
//! [`super::GUEST_ROUTES`].

use std::marker::PhantomData;

use schemars::JsonSchema;

use super::Method::{Delete, Get, Patch, Post, Put};
use super::{Method, Op, Params, Step};
use crate::agent::{AgentAccess, AgentRequest};
use crate::guest::Page;
use crate::host::{
    AddRuntime, AppInfo, BoxInfo, BridgeAccess, BridgeRequest, BuildEvent, BuildImage,
    ChangeRuntime, CreateBox, ExtendBox, ForkBox, ImageInfo, ListBoxes, PruneImages, PrunedImage,
    ReplaceRuntime, RuntimeInfo, ServerHealth, Trace, TracesQuery, WaitQuery,
};
use crate::progress::{BoxEvent, ProgressQuery};
use crate::timeline::{DatasetLine, ExportQuery, Step as TimelineStep, StepKind, TimelineQuery};
use crate::viewer::{AskForHelp, CreateViewer, Handoff, HandoffWait, ViewerGrant};

/// One route of holmd's own.
#[derive(Debug, Clone, Copy)]
pub struct ServerRoute {
    /// Its method.
    pub method: Method,
    /// Its path, with `{name}` parameters.
    pub path: &'static str,
    /// What it takes and answers, and whether it needs the server token
    /// ([`Op::public`]).
    pub op: Op,
    /// Whether it only reads what the server keeps of a box (its record,
    /// progress, traces, timeline), so a request of it leaves no trace.
    pub untraced: bool,
    /// What it is on the box's timeline; `None` for a read or a route of
    /// no box.
    pub step: Option<Step>,
}

/// A typed route of holmd: its query is the fields of `Q` (`()` for
/// none), its body `Req` (`()` for none) and its answer `Resp` (JSON; for
/// an NDJSON route the type of a line; `()` for an empty, image or raw
/// answer). The record is made from these types, so what holmd documents
/// and what the client sends and reads agree.
#[derive(Debug)]
pub struct ServerCall<Q, Req, Resp> {
    /// The route.
    pub route: ServerRoute,
    types: PhantomData<fn(Q, Req) -> Resp>,
}

impl<Q, Req, Resp> ServerCall<Q, Req, Resp> {
    /// The route `method` `path`, documented as `op`.
    pub const fn new(method: Method, path: &'static str, op: Op) -> Self {
        Self {
            route: ServerRoute { method, path, op, untraced: false, step: None },
            types: PhantomData,
        }
    }

    /// Only reads what the server keeps of a box: leaves no trace.
    #[must_use]
    pub const fn untraced(mut self) -> Self {
        self.route.untraced = true;
        self
    }

    /// Answers with this status on success.
    #[must_use]
    pub const fn status(mut self, status: u16) -> Self {
        self.route.op = self.route.op.status(status);
        self
    }

    /// Is `step` on the box's timeline.
    #[must_use]
    pub const fn step(mut self, step: Step) -> Self {
        self.route.step = Some(step);
        self
    }

    /// Needs no credential.
    #[must_use]
    pub const fn public(mut self) -> Self {
        self.route.op = self.route.op.public();
        self
    }
}

impl<Q, Req, Resp: JsonSchema> ServerCall<Q, Req, Resp> {
    /// A route answering JSON `Resp`.
    pub const fn json(
        method: Method,
        path: &'static str,
        tag: &'static str,
        summary: &'static str,
    ) -> Self {
        Self::new(method, path, Op::json::<Resp>(tag, summary))
    }
}

impl<Q: JsonSchema, Req, Resp> ServerCall<Q, Req, Resp> {
    /// Takes query parameters, the fields of `Q`.
    #[must_use]
    pub const fn query(mut self) -> Self {
        self.route.op = self.route.op.query::<Q>();
        self
    }
}

impl<Q, Req: JsonSchema, Resp> ServerCall<Q, Req, Resp> {
    /// Takes a JSON body of type `Req`.
    #[must_use]
    pub const fn body(mut self) -> Self {
        self.route.op = self.route.op.body::<Req>();
        self
    }
}

/// `GET /v1/health`.
pub const HEALTH: ServerCall<(), (), ServerHealth> =
    ServerCall::json(Get, "/v1/health", "server", "The server answers").public();

/// `GET /v1/openapi.json`.
pub const OPENAPI: ServerCall<(), (), serde_json::Value> =
    ServerCall::json(Get, "/v1/openapi.json", "server", "This document").public();

/// `GET /v1/runtimes`.
pub const RUNTIMES: ServerCall<(), (), Page<RuntimeInfo>> =
    ServerCall::json(Get, "/v1/runtimes", "runtimes", "The runtimes and what each can do");

/// `GET /v1/runtimes/{name}`.
pub const RUNTIME: ServerCall<(), (), RuntimeInfo> =
    ServerCall::json(Get, "/v1/runtimes/{name}", "runtimes", "One runtime");

/// `POST /v1/runtimes`.
pub const ADD_RUNTIME: ServerCall<(), AddRuntime, RuntimeInfo> = ServerCall::json(
    Post,
    "/v1/runtimes",
    "runtimes",
    "Add a remote runtime (a cloud vendor account); its key is encrypted before it is stored and never returned",
)
.body()
.status(201);

/// `PUT /v1/runtimes/{name}`.
pub const REPLACE_RUNTIME: ServerCall<(), ReplaceRuntime, RuntimeInfo> = ServerCall::json(
    Put,
    "/v1/runtimes/{name}",
    "runtimes",
    "Add or replace a remote runtime whole",
)
.body();

/// `PATCH /v1/runtimes/{name}`.
pub const CHANGE_RUNTIME: ServerCall<(), ChangeRuntime, RuntimeInfo> = ServerCall::json(
    Patch,
    "/v1/runtimes/{name}",
    "runtimes",
    "Change some fields of a remote runtime, or replace its key",
)
.body();

/// `DELETE /v1/runtimes/{name}`.
pub const REMOVE_RUNTIME: ServerCall<(), (), RuntimeInfo> = ServerCall::json(
    Delete,
    "/v1/runtimes/{name}",
    "runtimes",
    "Remove a remote runtime that no box is on",
);

/// `POST /v1/boxes`: takes an `Idempotency-Key` header.
pub const CREATE_BOX: ServerCall<WaitQuery, CreateBox, BoxInfo> = ServerCall::json(
    Post,
    "/v1/boxes",
    "boxes",
    "Create a box; with wait_for=running, answer once it runs. With an Idempotency-Key, \
     the same key and body answer the first box again (Idempotency-Replayed: true, \
     \"replayed\": true) for 24 hours; another body with the key is refused (422)",
)
.body()
.query()
.status(201);

/// `GET /v1/boxes`.
pub const BOXES: ServerCall<ListBoxes, (), Page<BoxInfo>> =
    ServerCall::json(Get, "/v1/boxes", "boxes", "The boxes, a page at a time").query();

/// `GET /v1/boxes/{id}`.
pub const BOX: ServerCall<WaitQuery, (), BoxInfo> = ServerCall::json(
    Get,
    "/v1/boxes/{id}",
    "boxes",
    "One box; with wait_for, answer once it is in that state",
)
.query()
.untraced();

/// `DELETE /v1/boxes/{id}`.
pub const REMOVE_BOX: ServerCall<(), (), BoxInfo> =
    ServerCall::json(Delete, "/v1/boxes/{id}", "boxes", "Remove a box").step(Step::new(
        StepKind::Lifecycle,
        "remove",
        Params::Path,
    ));

/// `POST /v1/boxes/{id}/stop`.
pub const STOP_BOX: ServerCall<(), (), BoxInfo> =
    ServerCall::json(Post, "/v1/boxes/{id}/stop", "lifecycle", "Stop a box, keeping its files")
        .step(Step::new(StepKind::Lifecycle, "stop", Params::Body));

/// `POST /v1/boxes/{id}/start`.
pub const START_BOX: ServerCall<WaitQuery, (), BoxInfo> = ServerCall::json(
    Post,
    "/v1/boxes/{id}/start",
    "lifecycle",
    "Start a stopped box: a new desktop on new ports; with wait_for=running, answer once it runs",
)
.query()
.step(Step::new(StepKind::Lifecycle, "start", Params::Body));

/// `POST /v1/boxes/{id}/pause`.
pub const PAUSE_BOX: ServerCall<(), (), BoxInfo> =
    ServerCall::json(Post, "/v1/boxes/{id}/pause", "lifecycle", "Pause a box, keeping its memory")
        .step(Step::new(StepKind::Lifecycle, "pause", Params::Body));

/// `POST /v1/boxes/{id}/resume`.
pub const RESUME_BOX: ServerCall<(), (), BoxInfo> = ServerCall::json(
    Post,
    "/v1/boxes/{id}/resume",
    "lifecycle",
    "Resume a paused box where it was",
)
.step(Step::new(StepKind::Lifecycle, "resume", Params::Body));

/// `POST /v1/boxes/{id}/fork`: takes an `Idempotency-Key` header.
pub const FORK_BOX: ServerCall<WaitQuery, ForkBox, BoxInfo> = ServerCall::json(
    Post,
    "/v1/boxes/{id}/fork",
    "lifecycle",
    "A new box with a copy of this box's files, on the same runtime; takes an Idempotency-Key",
)
.body()
.query()
.status(201)
.step(Step::new(StepKind::Lifecycle, "fork", Params::Body));

/// `POST /v1/boxes/{id}/extend`.
pub const EXTEND_BOX: ServerCall<(), ExtendBox, BoxInfo> = ServerCall::json(
    Post,
    "/v1/boxes/{id}/extend",
    "lifecycle",
    "Move the end of a box's lifetime later, up to its runtime's maximum",
)
.body()
.step(Step::new(StepKind::Lifecycle, "extend", Params::Body));

/// `GET /v1/boxes/{id}/progress`: NDJSON, one [`BoxEvent`] a line.
pub const PROGRESS: ServerCall<ProgressQuery, (), BoxEvent> = ServerCall::new(
    Get,
    "/v1/boxes/{id}/progress",
    Op::ndjson::<BoxEvent>(
        "boxes",
        "The stages of the box's latest making or start (image with its build lines, container, \
         desktop, browser), then each as it comes, until it runs, fails or timeout_secs pass; \
         the last line is the box. Reading it leaves no trace",
    ),
)
.query()
.untraced();

/// `GET /v1/boxes/{id}/traces`.
pub const TRACES: ServerCall<TracesQuery, (), Page<Trace>> = ServerCall::json(
    Get,
    "/v1/boxes/{id}/traces",
    "boxes",
    "The requests through the server to a box, oldest first, a page at a time",
)
.query()
.untraced();

/// `GET /v1/boxes/{id}/timeline`.
pub const TIMELINE: ServerCall<TimelineQuery, (), Page<TimelineStep>> = ServerCall::json(
    Get,
    "/v1/boxes/{id}/timeline",
    "timeline",
    "What was done to a box, a step a page at a time, oldest first: each action through the \
     server (input, commands, page tools, file writes, who held control, lifecycle) with its \
     time, request id and the screenshot after it; never a secret or a file's content",
)
.query()
.untraced();

/// `GET /v1/boxes/{id}/timeline/export`: an HTML page or JSONL, one
/// [`DatasetLine`] a line.
pub const TIMELINE_EXPORT: ServerCall<ExportQuery, (), DatasetLine> = ServerCall::new(
    Get,
    "/v1/boxes/{id}/timeline/export",
    Op::html_or_ndjson::<DatasetLine>(
        "timeline",
        "The whole timeline as one self-contained HTML page that plays it back (screenshots \
         inline), or as JSONL, one line per step naming its screenshot's file \
         (screenshots/<id>.png, from the route below)",
    ),
)
.query()
.untraced();

/// `GET /v1/boxes/{id}/timeline/screenshots/{shot}`: a raw image.
pub const TIMELINE_SCREENSHOT: ServerCall<(), (), ()> = ServerCall::new(
    Get,
    "/v1/boxes/{id}/timeline/screenshots/{shot}",
    Op::image("timeline", "One screenshot the timeline keeps, by its id"),
)
.untraced();

/// `POST /v1/boxes/{id}/viewers`.
pub const CREATE_VIEWER: ServerCall<(), CreateViewer, ViewerGrant> = ServerCall::json(
    Post,
    "/v1/boxes/{id}/viewers",
    "viewers",
    "A new viewer URL for one screen: watch only (mode view) or takeover (mode control), \
     with its own token (after # in the URL), expiring after expires_after_secs (default 3600)",
)
.body()
.status(201)
.step(Step::new(StepKind::Control, "viewer_created", Params::Body));

/// `GET /v1/boxes/{id}/viewers`.
pub const VIEWERS: ServerCall<(), (), Page<ViewerGrant>> = ServerCall::json(
    Get,
    "/v1/boxes/{id}/viewers",
    "viewers",
    "The viewer URLs of the box's current desktop",
);

/// `DELETE /v1/boxes/{id}/viewers/{grant}`.
pub const REVOKE_VIEWER: ServerCall<(), (), ViewerGrant> = ServerCall::json(
    Delete,
    "/v1/boxes/{id}/viewers/{grant}",
    "viewers",
    "Revoke a viewer URL: it opens nothing more, and its open connections close",
)
.step(Step::new(StepKind::Control, "viewer_revoked", Params::Path));

/// `POST /v1/boxes/{id}/handoff`.
pub const ASK_FOR_HELP: ServerCall<(), AskForHelp, Handoff> = ServerCall::json(
    Post,
    "/v1/boxes/{id}/handoff",
    "viewers",
    "Ask a person for help: answers a takeover URL whose page shows the reason; the agent's \
     input is refused while the person is in control",
)
.body()
.step(Step::new(StepKind::Control, "ask_for_help", Params::Body));

/// `GET /v1/boxes/{id}/handoff`.
pub const HANDOFF: ServerCall<HandoffWait, (), Handoff> = ServerCall::json(
    Get,
    "/v1/boxes/{id}/handoff",
    "viewers",
    "The handoff between agent and person; with wait_for=handed_back, answer once the person hands back \
     (or at timeout_secs, at most 900, as it is then)",
)
.query();

/// `POST /v1/boxes/{id}/bridge`.
pub const BRIDGE: ServerCall<(), BridgeRequest, BridgeAccess> = ServerCall::json(
    Post,
    "/v1/boxes/{id}/bridge",
    "browser",
    "How to reach the box's Chromium (DevTools) from the server's host: the bridge's URL, \
     the Authorization header with the bridge's own secret, and a ticket URL that opens one \
     connection without headers before expires_at",
)
.body();

/// `GET /v1/images`.
pub const IMAGES: ServerCall<(), (), Page<ImageInfo>> =
    ServerCall::json(Get, "/v1/images", "images", "The images holm built");

/// `POST /v1/images/build`: NDJSON, one [`BuildEvent`] a line.
pub const BUILD_IMAGE: ServerCall<(), BuildImage, BuildEvent> = ServerCall::new(
    Post,
    "/v1/images/build",
    Op::ndjson::<BuildEvent>("images", "Build a box image and stream the build"),
)
.body();

/// `POST /v1/images/base`: NDJSON, one [`BuildEvent`] a line.
pub const BASE_IMAGE: ServerCall<(), BuildImage, BuildEvent> = ServerCall::new(
    Post,
    "/v1/images/base",
    Op::ndjson::<BuildEvent>("images", "Make the air-gapped base image if it is missing"),
)
.body();

/// `POST /v1/images/prune`.
pub const PRUNE_IMAGES: ServerCall<(), PruneImages, Page<PrunedImage>> = ServerCall::json(
    Post,
    "/v1/images/prune",
    "images",
    "Remove box images no box uses: those made for other holm versions, or with all, \
     every unused one; dry_run says what would go",
)
.body();

/// `GET /v1/apps`.
pub const APPS: ServerCall<(), (), Page<AppInfo>> =
    ServerCall::json(Get, "/v1/apps", "images", "The app catalogue");

/// `POST /v1/boxes/{id}/agent`.
pub const AGENT: ServerCall<(), AgentRequest, AgentAccess> = ServerCall::json(
    Post,
    "/v1/boxes/{id}/agent",
    "debug",
    "How to reach the box's guest API straight from the server's host: its URL, and an \
     Authorization header with a new credential that opens only this box's guest, is not \
     the box secret, cannot manage credentials, and expires after ttl_secs (default 300, \
     at most 3600). The one response that carries a secret, with the bridge's",
)
.body();

/// `DELETE /v1/boxes/{id}/agent`.
pub const REVOKE_AGENT: ServerCall<(), (), ()> = ServerCall::new(
    Delete,
    "/v1/boxes/{id}/agent",
    Op::empty(
        "debug",
        "Revoke every agent credential of the box: its guest refuses them from now on",
    ),
);

/// Every route of holmd's own, in the order it registers them.
pub static SERVER_ROUTES: &[ServerRoute] = &[
    HEALTH.route,
    OPENAPI.route,
    RUNTIMES.route,
    RUNTIME.route,
    ADD_RUNTIME.route,
    REPLACE_RUNTIME.route,
    CHANGE_RUNTIME.route,
    REMOVE_RUNTIME.route,
    CREATE_BOX.route,
    BOXES.route,
    BOX.route,
    REMOVE_BOX.route,
    STOP_BOX.route,
    START_BOX.route,
    PAUSE_BOX.route,
    RESUME_BOX.route,
    FORK_BOX.route,
    EXTEND_BOX.route,
    PROGRESS.route,
    TRACES.route,
    TIMELINE.route,
    TIMELINE_EXPORT.route,
    TIMELINE_SCREENSHOT.route,
    CREATE_VIEWER.route,
    VIEWERS.route,
    REVOKE_VIEWER.route,
    ASK_FOR_HELP.route,
    HANDOFF.route,
    BRIDGE.route,
    IMAGES.route,
    BUILD_IMAGE.route,
    BASE_IMAGE.route,
    PRUNE_IMAGES.route,
    APPS.route,
    AGENT.route,
    REVOKE_AGENT.route,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_route_is_declared_once_and_only_health_and_the_document_are_public() {
        let mut seen = std::collections::BTreeSet::new();
        for r in SERVER_ROUTES {
            assert!(seen.insert((r.method, r.path)), "{} {} twice", r.method, r.path);
            assert!(r.path.starts_with("/v1/"), "{} {}", r.method, r.path);
            let public = r.path == "/v1/health" || r.path == "/v1/openapi.json";
            assert_eq!(r.op.public, public, "{} {}", r.method, r.path);
        }
    }

    #[test]
    fn no_server_route_is_also_a_forwarded_guest_route() {
        for r in SERVER_ROUTES {
            let twice = super::super::GUEST_ROUTES
                .iter()
                .any(|g| g.method == r.method && g.forwarded_path().as_deref() == Some(r.path));
            assert!(!twice, "{} {} is served twice", r.method, r.path);
        }
    }
}
