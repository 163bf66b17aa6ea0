//! holmd's REST API under `/v1`.
//!
//! Every route is declared once in [`routes`], which both serves it and
//! documents it in `/v1/openapi.json`. Every route but the public ones needs
//! `Authorization: Bearer <HOLM_SERVER_TOKEN>` when a token is set. Every
//! response carries `x-request-id`; every error has the one shape. Every
//! request to a box (but reading its record, its traces or its timeline)
//! leaves a trace.

mod box_path;
mod boxes;
pub mod doc;
pub mod forward;
mod images;
mod runtimes;
mod timeline;
mod upgrade;
mod viewers;

use std::sync::Arc;

use std::time::Instant;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::Response;
use holm_client::Endpoint;
use holm_client::address::Addresses;
use holm_http::{Error, RequestId};
use holm_proto::ApiError;
use holm_proto::guest::Page;
use holm_proto::host::{
    AddRuntime, AppInfo, BoxInfo, BridgeAccess, BridgeRequest, BuildEvent, BuildImage,
    ChangeRuntime, CreateBox, ExtendBox, ForkBox, ImageInfo, ListBoxes, PruneImages, PrunedImage,
    ReplaceRuntime, RuntimeInfo, ServerHealth, Trace, TracesQuery, WaitQuery,
};
use holm_proto::progress::{BoxEvent, ProgressQuery};
use holm_proto::timeline::{DatasetLine, ExportQuery, Step, TimelineQuery};
use holm_proto::viewer::{AskForHelp, CreateViewer, Handoff, HandoffWait, ViewerGrant};

use self::doc::{Api, Op};
use crate::service::Service;

/// What every handler can reach.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The boxes and runtimes.
    pub service: Arc<Service>,
    /// The HTTP client that forwards to guests (pooled connections).
    pub http: reqwest::Client,
    /// The same for public-only endpoints (a cloud vendor's): it connects
    /// only to public addresses, checked on each connection.
    pub http_public: reqwest::Client,
    /// The OpenAPI document, made once.
    pub openapi: Arc<serde_json::Value>,
    /// How long a forwarded request that is not a stream may take, whole.
    pub forward_timeout: std::time::Duration,
    /// `HOLM_PUBLIC_URL`: the address viewer URLs name, behind a proxy.
    pub public_url: Option<String>,
    /// The server token, when there is one: the viewer routes of a box whose
    /// policy needs no viewer token ask for it.
    pub server_token: Option<Arc<[u8]>>,
}

/// What [`app_with`] needs besides the service.
#[derive(Debug, Clone)]
pub struct AppOptions {
    /// The bearer token every route but the public ones needs, when set.
    pub token: Option<String>,
    /// The web edge every route passes first ([`holm_http::edge`]).
    pub edge: Arc<holm_http::Edge>,
    /// How long a forwarded request that is not a stream may take, whole.
    pub forward_timeout: std::time::Duration,
    /// `HOLM_PUBLIC_URL`: the address viewer URLs name, behind a proxy
    /// (else the address each caller used).
    pub public_url: Option<String>,
}

impl AppOptions {
    /// A loopback server's options with `token`.
    pub fn loopback(token: Option<String>) -> Self {
        Self {
            token,
            edge: Arc::new(holm_http::Edge::new(([127, 0, 0, 1], 0).into(), None)),
            forward_timeout: forward::DEFAULT_TIMEOUT,
            public_url: None,
        }
    }
}

/// Every route, served and documented.
pub fn routes() -> Api<AppState> {
    use self::{boxes as b, forward as f, images as i, runtimes as r, timeline as t, viewers as v};
    Api::default()
        .get("/v1/health", r::health, Op::json::<ServerHealth>("server", "The server answers").public())
        .get("/v1/openapi.json", r::openapi, Op::json::<serde_json::Value>("server", "This document").public())
        .get("/v1/runtimes", r::list, Op::json::<Page<RuntimeInfo>>("runtimes", "The runtimes and what each can do"))
        .get("/v1/runtimes/{name}", r::get, Op::json::<RuntimeInfo>("runtimes", "One runtime"))
        .post(
            "/v1/runtimes",
            r::add,
            Op::json::<RuntimeInfo>(
                "runtimes",
                "Add a remote runtime (a cloud vendor account); its key is encrypted before it is stored and never returned",
            )
            .body::<AddRuntime>()
            .status(201),
        )
        .put(
            "/v1/runtimes/{name}",
            r::replace,
            Op::json::<RuntimeInfo>("runtimes", "Add or replace a remote runtime whole").body::<ReplaceRuntime>(),
        )
        .patch(
            "/v1/runtimes/{name}",
            r::change,
            Op::json::<RuntimeInfo>("runtimes", "Change some fields of a remote runtime, or replace its key").body::<ChangeRuntime>(),
        )
        .delete("/v1/runtimes/{name}", r::remove, Op::json::<RuntimeInfo>("runtimes", "Remove a remote runtime that no box is on"))
        .post(
            "/v1/boxes",
            b::create,
            Op::json::<BoxInfo>(
                "boxes",
                "Create a box; with wait_for=running, answer once it runs. With an Idempotency-Key, \
                 the same key and body answer the first box again (Idempotency-Replayed: true, \
                 \"replayed\": true) for 24 hours; another body with the key is refused (422)",
            )
                .body::<CreateBox>()
                .query::<WaitQuery>()
                .status(201),
        )
        .get("/v1/boxes", b::list, Op::json::<Page<BoxInfo>>("boxes", "The boxes, a page at a time").query::<ListBoxes>())
        .get(
            "/v1/boxes/{id}",
            b::get,
            Op::json::<BoxInfo>("boxes", "One box; with wait_for, answer once it is in that state").query::<WaitQuery>(),
        )
        .delete("/v1/boxes/{id}", b::remove, Op::json::<BoxInfo>("boxes", "Remove a box"))
        .post("/v1/boxes/{id}/stop", b::stop, Op::json::<BoxInfo>("lifecycle", "Stop a box, keeping its files"))
        .post(
            "/v1/boxes/{id}/start",
            b::start,
            Op::json::<BoxInfo>("lifecycle", "Start a stopped box: a new desktop on new ports; with wait_for=running, answer once it runs")
                .query::<WaitQuery>(),
        )
        .post("/v1/boxes/{id}/pause", b::pause, Op::json::<BoxInfo>("lifecycle", "Pause a box, keeping its memory"))
        .post("/v1/boxes/{id}/resume", b::resume, Op::json::<BoxInfo>("lifecycle", "Resume a paused box where it was"))
        .post(
            "/v1/boxes/{id}/fork",
            b::fork,
            Op::json::<BoxInfo>("lifecycle", "A new box with a copy of this box's files, on the same runtime; takes an Idempotency-Key")
                .body::<ForkBox>()
                .query::<WaitQuery>()
                .status(201),
        )
        .post(
            "/v1/boxes/{id}/extend",
            b::extend,
            Op::json::<BoxInfo>("lifecycle", "Move the end of a box's lifetime later, up to its runtime's maximum").body::<ExtendBox>(),
        )
        .get(
            "/v1/boxes/{id}/progress",
            b::progress,
            Op::ndjson::<BoxEvent>(
                "boxes",
                "The stages of the box's latest making or start (image with its build lines, container, \
                 desktop, browser), then each as it comes, until it runs, fails or timeout_secs pass; \
                 the last line is the box. Reading it leaves no trace",
            )
            .query::<ProgressQuery>(),
        )
        .get(
            "/v1/boxes/{id}/traces",
            b::traces,
            Op::json::<Page<Trace>>("boxes", "The requests through the server to a box, oldest first, a page at a time")
                .query::<TracesQuery>(),
        )
        .get(
            "/v1/boxes/{id}/timeline",
            t::list,
            Op::json::<Page<Step>>(
                "timeline",
                "What was done to a box, a step a page at a time, oldest first: each action through the \
                 server (input, commands, page tools, file writes, who held control, lifecycle) with its \
                 time, request id and the screenshot after it; never a secret or a file's content",
            )
            .query::<TimelineQuery>(),
        )
        .get(
            "/v1/boxes/{id}/timeline/export",
            t::export,
            Op::html_or_ndjson::<DatasetLine>(
                "timeline",
                "The whole timeline as one self-contained HTML page that plays it back (screenshots \
                 inline), or as JSONL, one line per step naming its screenshot's file \
                 (screenshots/<id>.png, from the route below)",
            )
            .query::<ExportQuery>(),
        )
        .get(
            "/v1/boxes/{id}/timeline/screenshots/{shot}",
            t::screenshot,
            Op::image("timeline", "One screenshot the timeline keeps, by its id"),
        )
        .post(
            "/v1/boxes/{id}/viewers",
            v::create,
            Op::json::<ViewerGrant>(
                "viewers",
                "A new viewer URL for one screen: watch only (mode view) or takeover (mode control), \
                 with its own token (after # in the URL), expiring after expires_after_secs (default 3600)",
            )
            .body::<CreateViewer>()
            .status(201),
        )
        .get("/v1/boxes/{id}/viewers", v::list, Op::json::<Page<ViewerGrant>>("viewers", "The viewer URLs of the box's current desktop"))
        .delete(
            "/v1/boxes/{id}/viewers/{grant}",
            v::revoke,
            Op::json::<ViewerGrant>("viewers", "Revoke a viewer URL: it opens nothing more, and its open connections close"),
        )
        .post(
            "/v1/boxes/{id}/handoff",
            v::ask,
            Op::json::<Handoff>(
                "viewers",
                "Ask a person for help: answers a takeover URL whose page shows the reason; the agent's \
                 input is refused while the person is in control",
            )
            .body::<AskForHelp>(),
        )
        .get(
            "/v1/boxes/{id}/handoff",
            v::handoff,
            Op::json::<Handoff>(
                "viewers",
                "The handoff between agent and person; with wait_for=handed_back, answer once the person hands back \
                 (or at timeout_secs, at most 900, as it is then)",
            )
            .query::<HandoffWait>(),
        )
        .post(
            "/v1/boxes/{id}/bridge",
            b::bridge,
            Op::json::<BridgeAccess>(
                "browser",
                "How to reach the box's Chromium (DevTools) from the server's host: the bridge's URL, \
                 the Authorization header with the bridge's own secret, and a ticket URL that opens one \
                 connection without headers before expires_at",
            )
            .body::<BridgeRequest>(),
        )
        .get("/v1/images", i::list, Op::json::<Page<ImageInfo>>("images", "The images holm built"))
        .post(
            "/v1/images/build",
            i::build,
            Op::ndjson::<BuildEvent>("images", "Build a box image and stream the build").body::<BuildImage>(),
        )
        .post(
            "/v1/images/base",
            i::base,
            Op::ndjson::<BuildEvent>("images", "Make the air-gapped base image if it is missing").body::<BuildImage>(),
        )
        .post(
            "/v1/images/prune",
            i::prune,
            Op::json::<Page<PrunedImage>>(
                "images",
                "Remove box images no box uses: those made for other holm versions, or with all, \
                 every unused one; dry_run says what would go",
            )
            .body::<PruneImages>(),
        )
        .get("/v1/apps", i::apps, Op::json::<Page<AppInfo>>("images", "The app catalogue"))
        .post(
            "/v1/boxes/{id}/agent",
            b::agent,
            Op::json::<holm_proto::agent::AgentAccess>(
                "debug",
                "How to reach the box's guest API straight from the server's host: its URL, and an \
                 Authorization header with a new credential that opens only this box's guest, is not \
                 the box secret, cannot manage credentials, and expires after ttl_secs (default 300, \
                 at most 3600). The one response that carries a secret, with the bridge's",
            )
            .body::<holm_proto::agent::AgentRequest>(),
        )
        .delete(
            "/v1/boxes/{id}/agent",
            b::revoke_agent,
            Op::empty("debug", "Revoke every agent credential of the box: its guest refuses them from now on"),
        )
        .forwarded(f::forward)
}

impl AppState {
    /// The client that reaches `endpoint`: the public-only one for an
    /// endpoint that may be at public addresses only.
    pub fn http(&self, endpoint: &Endpoint) -> &reqwest::Client {
        match endpoint.addresses() {
            Addresses::Any => &self.http,
            Addresses::Public => &self.http_public,
        }
    }
}

/// Builds the whole router for `service` on loopback, with `token` required
/// when set.
pub fn app(service: Arc<Service>, token: Option<String>) -> Router {
    app_with(service, AppOptions::loopback(token), Router::new())
}

/// [`app`] with `extra` routes (MCP at `/mcp`, and any later frontend)
/// served behind the same web edge, token and request ids: every route of
/// holmd passes through here, so a new one needs nothing of its own to be
/// checked. The viewer routes pass the edge too, but not the token: the
/// guest checks each viewer URL's own token.
pub fn app_with(service: Arc<Service>, options: AppOptions, extra: Router) -> Router {
    let (router, ops) = routes().into_parts();
    let public_paths: Arc<Vec<String>> =
        Arc::new(ops.iter().filter(|o| o.op.public).map(|o| o.path.clone()).collect());
    let openapi = Arc::new(doc::openapi(&ops, env!("CARGO_PKG_VERSION")));
    let token: Option<Arc<[u8]>> = options.token.map(|t| t.as_bytes().into());
    let state = AppState {
        service,
        http: forward::client(Addresses::Any),
        http_public: forward::client(Addresses::Public),
        openapi,
        forward_timeout: options.forward_timeout,
        public_url: options.public_url,
        server_token: token.clone(),
    };
    // Not behind the server token and not traced: the guest checks each
    // viewer URL's own token, so a URL can be handed to a person (a box
    // whose policy needs no viewer token asks for the server token there).
    let viewer = Router::new()
        .route("/v1/boxes/{id}/viewer/{*rest}", axum::routing::any(viewers::proxy))
        .with_state(state.clone());
    let edge = options.edge;
    let routes = Router::new()
        .merge(router)
        .fallback(route_not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state.clone())
        // Inside the token check: a request without the token leaves no trace.
        .layer(middleware::from_fn_with_state(state, trace))
        .merge(extra)
        .layer(middleware::from_fn(move |req: Request, next: Next| {
            let token = token.clone();
            let public_paths = Arc::clone(&public_paths);
            async move {
                match token {
                    Some(t) if !public_paths.iter().any(|p| p == req.uri().path()) => {
                        holm_http::require_bearer(&t, "the server token", req, next).await
                    }
                    _ => next.run(req).await,
                }
            }
        }))
        .merge(viewer);
    // The edge before the token: a page's request is refused as what it is.
    edge.layer(routes).layer(middleware::from_fn(holm_http::request_id))
}

/// Names the box a response is about, for its trace, when the path does not.
#[derive(Debug, Clone)]
pub struct TraceBox(pub String);

/// The box a request's path is about, when its trace is kept: every route
/// under `/v1/boxes/{id}` but reading the record, the traces, the timeline
/// or the progress.
fn traced_box(method: &Method, path: &str) -> Option<String> {
    let rest = path.strip_prefix("/v1/boxes/")?;
    let (id, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let reading = (tail.is_empty() && method == Method::GET)
        || tail == "traces"
        || tail == "progress"
        || tail == "timeline"
        || tail.starts_with("timeline/");
    if reading || id.is_empty() {
        return None;
    }
    Some(id.to_owned())
}

/// The names of a query's parameters, never their values (a value could be
/// a path, a command's input or a token).
fn query_names(query: Option<&str>) -> Vec<String> {
    query
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.split('=').next())
        .filter(|k| !k.is_empty())
        .take(16)
        .map(|k| k.chars().take(64).collect())
        .collect()
}

/// Middleware: queues a trace of each request to a box, with its action
/// and the image it answered for the timeline ([`crate::timeline`]).
async fn trace(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let raw_query = req.uri().query().map(str::to_owned);
    let query = query_names(raw_query.as_deref());
    let from_path = traced_box(&method, &path);
    let request_id = req.extensions().get::<RequestId>().map(|r| r.0.clone()).unwrap_or_default();
    let at = state.service.clock().now();
    let started = Instant::now();
    let (req, seen) = if from_path.is_some() {
        crate::timeline::capture::observe(req).await
    } else {
        (req, crate::timeline::capture::Seen::default())
    };
    let response = next.run(req).await;
    let box_id = response.extensions().get::<TraceBox>().map(|t| t.0.clone()).or(from_path);
    let Some(box_id) = box_id.filter(|id| state.service.has(id)) else { return response };
    let code = response.extensions().get::<ApiError>().map(|e| e.code.as_str().to_owned());
    let id = state.service.trace_id();
    let action = seen.action(method.as_str(), &path, raw_query.as_deref());
    let (response, screenshot) = crate::timeline::capture::keep_image(
        state.service.shots(),
        &box_id,
        &id,
        action.as_ref(),
        response,
    );
    state.service.trace(Trace {
        id,
        box_id,
        at: crate::traces::rfc3339_millis(at),
        method: method.to_string(),
        path,
        query,
        status: response.status().as_u16(),
        code,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        request_id,
        action,
        screenshot,
        ..Trace::default()
    });
    response
}

async fn route_not_found(req: Request) -> Error {
    holm_http::route_not_found(req.method(), req.uri().path())
}

async fn method_not_allowed(req: Request) -> Error {
    holm_http::method_not_allowed(req.method(), req.uri().path())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_name_the_box_and_never_a_query_value() {
        assert_eq!(
            traced_box(&Method::POST, "/v1/boxes/box_a/commands/run").as_deref(),
            Some("box_a")
        );
        assert_eq!(traced_box(&Method::DELETE, "/v1/boxes/box_a").as_deref(), Some("box_a"));
        assert_eq!(traced_box(&Method::GET, "/v1/boxes/box_a"), None);
        assert_eq!(traced_box(&Method::GET, "/v1/boxes/box_a/traces"), None);
        assert_eq!(traced_box(&Method::GET, "/v1/boxes/box_a/progress"), None);
        assert_eq!(traced_box(&Method::GET, "/v1/boxes/box_a/timeline"), None);
        assert_eq!(traced_box(&Method::GET, "/v1/boxes/box_a/timeline/export"), None);
        assert_eq!(traced_box(&Method::POST, "/v1/boxes"), None);
        assert_eq!(
            query_names(Some("path=/root/secret.txt&follow=true&token=abc")),
            ["path", "follow", "token"]
        );
        assert!(query_names(None).is_empty());
    }
}
