//! holmd's REST API under `/v1`.
//!
//! Every route is declared once in [`routes`], which both serves it and
//! documents it in `/v1/openapi.json`. Every route but the public ones needs
//! `Authorization: Bearer <HOLM_SERVER_TOKEN>` when a token is set. Every
//! response carries `x-request-id`; every error has the one shape. Every
//! request to a box (but reading its record or its traces) leaves a trace.

mod boxes;
pub mod doc;
mod forward;
mod images;
mod runtimes;

use std::sync::Arc;

use std::time::Instant;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::Response;
use holm_http::{Error, RequestId};
use holm_proto::ApiError;
use holm_proto::guest::{
    ClickRequest, CommandEvent, CommandRequest, CommandResult, CursorPosition, EvaluateRequest,
    EvaluateResult, FileInfo, FileStat, FillRequest, Info, InputRequest, InputResult, ListQuery,
    LoadStateResult, MkdirRequest, NavigateRequest, OpenTab, OutputEvent, OutputPage, OutputQuery,
    Page, PageContent, PageResult, PageScreenshotOptions, PathQuery, PressRequest, ProcessInfo,
    ProcessStart, RemoveRequest, RenameRequest, Screen, ScreenshotOptions, SignalRequest,
    StdinQuery, StorageState, Tab, TabQuery, TypeRequest, WaitRequest, WriteQuery,
};
use holm_proto::host::{
    AddRuntime, AppInfo, BoxInfo, BridgeAccess, BridgeRequest, BuildEvent, BuildImage,
    ChangeRuntime, CreateBox, ExtendBox, ForkBox, ImageInfo, ListBoxes, ReplaceRuntime,
    RuntimeInfo, ServerHealth, Trace, TracesQuery, WaitQuery,
};

use self::doc::{Api, Op};
use crate::service::Service;

/// What every handler can reach.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The boxes and runtimes.
    pub service: Arc<Service>,
    /// The HTTP client that forwards to guests (pooled connections).
    pub http: reqwest::Client,
    /// The OpenAPI document, made once.
    pub openapi: Arc<serde_json::Value>,
}

/// Every route, served and documented.
pub fn routes() -> Api<AppState> {
    use self::{boxes as b, forward as f, images as i, runtimes as r};
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
            "/v1/boxes/{id}/traces",
            b::traces,
            Op::json::<Page<Trace>>("boxes", "The requests through the server to a box, oldest first, a page at a time")
                .query::<TracesQuery>(),
        )
        .get("/v1/boxes/{id}/info", f::forward, Op::json::<Info>("desktop", "The guest's version, screens and capabilities"))
        .get("/v1/boxes/{id}/screens", f::forward, Op::json::<Page<Screen>>("desktop", "The box's screens"))
        .get("/v1/boxes/{id}/screens/{screen}", f::forward, Op::json::<Screen>("desktop", "One screen"))
        .get(
            "/v1/boxes/{id}/screens/{screen}/cursor",
            f::forward,
            Op::json::<CursorPosition>("desktop", "Where the pointer is"),
        )
        .get(
            "/v1/boxes/{id}/screens/{screen}/screenshot",
            f::forward,
            Op::image("desktop", "A screenshot: the raw image, described by x-holm-* headers; If-None-Match answers 304 for an unchanged frame")
                .query::<ScreenshotOptions>(),
        )
        .post(
            "/v1/boxes/{id}/screens/{screen}/input",
            f::forward,
            Op::json_or_image::<InputResult>("desktop", "Input actions in order; with screenshot, answer the image after them")
                .body::<InputRequest>(),
        )
        .post(
            "/v1/boxes/{id}/commands/run",
            f::forward,
            Op::json::<CommandResult>("commands", "Run a command and wait for it").body::<CommandRequest>(),
        )
        .post(
            "/v1/boxes/{id}/commands/stream",
            f::forward,
            Op::ndjson::<CommandEvent>("commands", "Run a command and stream its events").body::<CommandRequest>(),
        )
        .post(
            "/v1/boxes/{id}/processes",
            f::forward,
            Op::json::<ProcessInfo>("processes", "Start a background process").body::<ProcessStart>(),
        )
        .get("/v1/boxes/{id}/processes", f::forward, Op::json::<Page<ProcessInfo>>("processes", "The background processes"))
        .get("/v1/boxes/{id}/processes/{process}", f::forward, Op::json::<ProcessInfo>("processes", "One background process"))
        .delete(
            "/v1/boxes/{id}/processes/{process}",
            f::forward,
            Op::empty("processes", "Kill a background process if it runs, and forget it"),
        )
        .get(
            "/v1/boxes/{id}/processes/{process}/output",
            f::forward,
            Op::json_or_ndjson::<OutputPage, OutputEvent>("processes", "Output events after a cursor; follow=true streams")
                .query::<OutputQuery>(),
        )
        .post(
            "/v1/boxes/{id}/processes/{process}/stdin",
            f::forward,
            Op::empty("processes", "Write the raw body to standard input; eof=true closes it")
                .query::<StdinQuery>()
                .raw_body(),
        )
        .post(
            "/v1/boxes/{id}/processes/{process}/signal",
            f::forward,
            Op::empty("processes", "Send a signal").body::<SignalRequest>(),
        )
        .get("/v1/boxes/{id}/files/content", f::forward, Op::bytes("files", "Read a file").query::<PathQuery>())
        .put(
            "/v1/boxes/{id}/files/content",
            f::forward,
            Op::json::<FileInfo>("files", "Write a file atomically, making parents").query::<WriteQuery>().raw_body(),
        )
        .get("/v1/boxes/{id}/files/list", f::forward, Op::json::<Page<FileInfo>>("files", "List a directory").query::<ListQuery>())
        .get("/v1/boxes/{id}/files/stat", f::forward, Op::json::<FileStat>("files", "Describe a path").query::<PathQuery>())
        .post("/v1/boxes/{id}/files/mkdir", f::forward, Op::json::<FileInfo>("files", "Make a directory").body::<MkdirRequest>())
        .post("/v1/boxes/{id}/files/remove", f::forward, Op::empty("files", "Remove a path").body::<RemoveRequest>())
        .post("/v1/boxes/{id}/files/rename", f::forward, Op::json::<FileInfo>("files", "Rename a path").body::<RenameRequest>())
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
        .get("/v1/boxes/{id}/browser/tabs", f::forward, Op::json::<Page<Tab>>("browser", "The browser's tabs"))
        .post(
            "/v1/boxes/{id}/browser/tabs",
            f::forward,
            Op::json::<Tab>("browser", "Open a tab, make it current, and wait for its page to load").body::<OpenTab>(),
        )
        .delete("/v1/boxes/{id}/browser/tabs/{tab}", f::forward, Op::empty("browser", "Close a tab"))
        .post(
            "/v1/boxes/{id}/browser/tabs/{tab}/activate",
            f::forward,
            Op::empty("browser", "Bring a tab to the front and make it current"),
        )
        .post(
            "/v1/boxes/{id}/browser/navigate",
            f::forward,
            Op::json::<PageResult>("browser", "Load a URL and wait for load, DOMContentLoaded or commit")
                .body::<NavigateRequest>(),
        )
        .post(
            "/v1/boxes/{id}/browser/click",
            f::forward,
            Op::json::<PageResult>("browser", "Click the first visible element that matches a CSS selector, with real mouse events")
                .body::<ClickRequest>(),
        )
        .post(
            "/v1/boxes/{id}/browser/type",
            f::forward,
            Op::json::<PageResult>("browser", "Type text as key presses, into the element that matches or where the focus is")
                .body::<TypeRequest>(),
        )
        .post(
            "/v1/boxes/{id}/browser/fill",
            f::forward,
            Op::json::<PageResult>("browser", "Set a field's value at once, firing input and change").body::<FillRequest>(),
        )
        .post(
            "/v1/boxes/{id}/browser/press",
            f::forward,
            Op::json::<PageResult>("browser", "Press a key or chord such as Enter or Control+a").body::<PressRequest>(),
        )
        .post(
            "/v1/boxes/{id}/browser/wait",
            f::forward,
            Op::json::<PageResult>("browser", "Wait (bounded) until an element is visible, attached, hidden or detached")
                .body::<WaitRequest>(),
        )
        .post(
            "/v1/boxes/{id}/browser/evaluate",
            f::forward,
            Op::json::<EvaluateResult>("browser", "Evaluate a JavaScript expression; an exception is a page_error")
                .body::<EvaluateRequest>(),
        )
        .get(
            "/v1/boxes/{id}/browser/screenshot",
            f::forward,
            Op::image("browser", "A screenshot of a tab (viewport or full page): the raw PNG or JPEG with x-holm-width and x-holm-height")
                .query::<PageScreenshotOptions>(),
        )
        .get(
            "/v1/boxes/{id}/browser/text",
            f::forward,
            Op::json::<PageContent>("browser", "The text a person sees in a tab").query::<TabQuery>(),
        )
        .get(
            "/v1/boxes/{id}/browser/html",
            f::forward,
            Op::json::<PageContent>("browser", "The HTML of a tab").query::<TabQuery>(),
        )
        .get(
            "/v1/boxes/{id}/browser/state",
            f::forward,
            Op::json::<StorageState>("browser", "save_state: the cookies and the local and session storage of every origin open in a tab"),
        )
        .post(
            "/v1/boxes/{id}/browser/state",
            f::forward,
            Op::json::<LoadStateResult>("browser", "load_state: put cookies and storage (from any box) into this box's browser")
                .body::<StorageState>(),
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
        .get("/v1/apps", i::apps, Op::json::<Page<AppInfo>>("images", "The app catalogue"))
}

/// Builds the whole router for `service`, with `token` required when set.
pub fn app(service: Arc<Service>, token: Option<String>) -> Router {
    app_with(service, token, Router::new())
}

/// [`app`] with `extra` routes (MCP at `/mcp`) served behind the same token
/// and request ids.
pub fn app_with(service: Arc<Service>, token: Option<String>, extra: Router) -> Router {
    let (router, ops) = routes().into_parts();
    let public_paths: Arc<Vec<&'static str>> =
        Arc::new(ops.iter().filter(|o| o.is_public()).map(|o| o.path()).collect());
    let openapi = Arc::new(doc::openapi(&ops, env!("CARGO_PKG_VERSION")));
    let state = AppState { service, http: forward::client(), openapi };
    let token: Option<Arc<[u8]>> = token.map(|t| t.as_bytes().into());
    Router::new()
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
                    Some(t) if !public_paths.contains(&req.uri().path()) => {
                        holm_http::require_bearer(&t, "the server token", req, next).await
                    }
                    _ => next.run(req).await,
                }
            }
        }))
        .layer(middleware::from_fn(holm_http::request_id))
}

/// Names the box a response is about, for its trace, when the path does not.
#[derive(Debug, Clone)]
pub struct TraceBox(pub String);

/// The box a request's path is about, when its trace is kept: every route
/// under `/v1/boxes/{id}` but reading the record and reading the traces.
fn traced_box(method: &Method, path: &str) -> Option<String> {
    let rest = path.strip_prefix("/v1/boxes/")?;
    let (id, tail) = rest.split_once('/').unwrap_or((rest, ""));
    if (tail.is_empty() && method == Method::GET) || tail == "traces" || id.is_empty() {
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

/// Middleware: queues a trace of each request to a box.
async fn trace(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let query = query_names(req.uri().query());
    let from_path = traced_box(&method, &path);
    let request_id = req.extensions().get::<RequestId>().map(|r| r.0.clone()).unwrap_or_default();
    let at = state.service.clock().now();
    let started = Instant::now();
    let response = next.run(req).await;
    let box_id = response.extensions().get::<TraceBox>().map(|t| t.0.clone()).or(from_path);
    if let Some(box_id) = box_id.filter(|id| state.service.has(id)) {
        let code = response.extensions().get::<ApiError>().map(|e| e.code.as_str().to_owned());
        state.service.trace(Trace {
            id: state.service.trace_id(),
            box_id,
            at: crate::traces::rfc3339_millis(at),
            method: method.to_string(),
            path,
            query,
            status: response.status().as_u16(),
            code,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            request_id,
        });
    }
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
        assert_eq!(traced_box(&Method::POST, "/v1/boxes"), None);
        assert_eq!(
            query_names(Some("path=/root/secret.txt&follow=true&token=abc")),
            ["path", "follow", "token"]
        );
        assert!(query_names(None).is_empty());
    }
}
