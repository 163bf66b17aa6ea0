//! holmd's REST API under `/v1`.
//!
//! Every route is declared once, as a record in
//! [`holm_proto::contract`] ([`server::SERVER_ROUTES`] and the guest's
//! forwarded routes); [`routes`] serves each record with its handler and
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
use axum::extract::{FromRequestParts, MatchedPath, RawPathParams, Request, State};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::Response;
use holm_client::Endpoint;
use holm_client::address::Addresses;
use holm_http::{Error, RequestId};
use holm_proto::ApiError;
use holm_proto::contract::server;
use holm_proto::host::Trace;

use self::doc::{Api, Record};
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
    /// The record of each route, which tracing is handed.
    pub routes: Arc<doc::Records>,
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

/// Every route, served and documented: each of holmd's own by its record
/// ([`server::SERVER_ROUTES`]), then the guest's that holmd forwards.
pub fn routes() -> Api<AppState> {
    use self::{boxes as b, forward as f, images as i, runtimes as r, timeline as t, viewers as v};
    Api::default()
        .serve(server::HEALTH.route, r::health)
        .serve(server::OPENAPI.route, r::openapi)
        .serve(server::RUNTIMES.route, r::list)
        .serve(server::RUNTIME.route, r::get)
        .serve(server::ADD_RUNTIME.route, r::add)
        .serve(server::REPLACE_RUNTIME.route, r::replace)
        .serve(server::CHANGE_RUNTIME.route, r::change)
        .serve(server::REMOVE_RUNTIME.route, r::remove)
        .serve(server::CREATE_BOX.route, b::create)
        .serve(server::BOXES.route, b::list)
        .serve(server::BOX.route, b::get)
        .serve(server::REMOVE_BOX.route, b::remove)
        .serve(server::STOP_BOX.route, b::stop)
        .serve(server::START_BOX.route, b::start)
        .serve(server::PAUSE_BOX.route, b::pause)
        .serve(server::RESUME_BOX.route, b::resume)
        .serve(server::FORK_BOX.route, b::fork)
        .serve(server::EXTEND_BOX.route, b::extend)
        .serve(server::PROGRESS.route, b::progress)
        .serve(server::TRACES.route, b::traces)
        .serve(server::TIMELINE.route, t::list)
        .serve(server::TIMELINE_EXPORT.route, t::export)
        .serve(server::TIMELINE_SCREENSHOT.route, t::screenshot)
        .serve(server::CREATE_VIEWER.route, v::create)
        .serve(server::VIEWERS.route, v::list)
        .serve(server::REVOKE_VIEWER.route, v::revoke)
        .serve(server::ASK_FOR_HELP.route, v::ask)
        .serve(server::HANDOFF.route, v::handoff)
        .serve(server::BRIDGE.route, b::bridge)
        .serve(server::IMAGES.route, i::list)
        .serve(server::BUILD_IMAGE.route, i::build)
        .serve(server::BASE_IMAGE.route, i::base)
        .serve(server::PRUNE_IMAGES.route, i::prune)
        .serve(server::APPS.route, i::apps)
        .serve(server::AGENT.route, b::agent)
        .serve(server::REVOKE_AGENT.route, b::revoke_agent)
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
    let api = routes();
    let records = Arc::new(api.records());
    let (router, ops) = api.into_parts();
    let public_paths: Arc<Vec<String>> =
        Arc::new(ops.iter().filter(|o| o.op.public).map(|o| o.path.clone()).collect());
    let openapi = Arc::new(doc::openapi(&ops, env!("CARGO_PKG_VERSION")));
    let token: Option<Arc<[u8]>> = options.token.map(|t| t.as_bytes().into());
    let state = AppState {
        service,
        http: forward::client(Addresses::Any),
        http_public: forward::client(Addresses::Public),
        openapi,
        routes: records,
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

/// The box a request's trace is kept on: the `{id}` the router captured
/// (`captured`) for a route whose record is traced ([`Record::traced`]);
/// for a request no route took (an unknown route or method of a box), the
/// box its path names ([`unrouted_box`]), the one case with no record to
/// read.
fn traced_box(
    record: Option<Record>,
    captured: Option<&str>,
    method: &Method,
    path: &str,
) -> Option<String> {
    match record {
        Some(r) if r.traced() => captured.map(str::to_owned),
        Some(_) => None,
        None => unrouted_box(method, path),
    }
}

/// Whether `record` is holmd's own route `route`.
fn is_own(record: Record, route: &server::ServerRoute) -> bool {
    matches!(record, Record::Own(r) if r.method == route.method && r.path == route.path)
}

/// The `{id}` the router captured for the route a request matched, if
/// the route has one.
async fn captured_id(req: Request) -> (Request, Option<String>) {
    let (mut parts, body) = req.into_parts();
    let id = RawPathParams::from_request_parts(&mut parts, &())
        .await
        .ok()
        .and_then(|p| p.iter().find(|(name, _)| *name == "id").map(|(_, v)| v.to_owned()));
    (Request::from_parts(parts, body), id)
}

/// The box a request that no route took names: every path under
/// `/v1/boxes/{id}` but those of reading the record, the traces, the
/// timeline or the progress.
fn unrouted_box(method: &Method, path: &str) -> Option<String> {
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
    let record =
        req.extensions().get::<MatchedPath>().and_then(|m| state.routes.of(&method, m.as_str()));
    let (req, captured) = captured_id(req).await;
    let from_path = traced_box(record, captured.as_deref(), &method, &path);
    let request_id = req.extensions().get::<RequestId>().map(|r| r.0.clone()).unwrap_or_default();
    let at = state.service.clock().now();
    let started = Instant::now();
    let (req, seen) = match record.filter(|_| from_path.is_some()) {
        Some(r) => crate::timeline::capture::observe(req, r.step(), r.raw_body()).await,
        None => (req, crate::timeline::capture::Seen::default()),
    };
    // On a shared store, what other replicas wrote is read first.
    match captured.or_else(|| from_path.clone()) {
        Some(id) => state.service.hold(&id).await,
        None if record.is_some_and(|r| is_own(r, &server::BOXES.route)) => {
            state.service.sync_fleet().await;
        }
        None => {}
    }
    let response = next.run(req).await;
    let box_id = response.extensions().get::<TraceBox>().map(|t| t.0.clone()).or(from_path);
    let Some(box_id) = box_id.filter(|id| state.service.has(id)) else { return response };
    let code = response.extensions().get::<ApiError>().map(|e| e.code.as_str().to_owned());
    let id = state.service.trace_id();
    let action = seen.action(raw_query.as_deref());
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

    /// The box a request to `method` `path` is traced on, its record found
    /// as the router would (`matched` is its route).
    fn traced(method: Method, matched: &str, path: &str) -> Option<String> {
        let records = routes().records();
        let captured = matched
            .contains("{id}")
            .then(|| path.strip_prefix("/v1/boxes/").and_then(|r| r.split('/').next()))
            .flatten();
        traced_box(records.of(&method, matched), captured, &method, path)
    }

    #[test]
    fn traces_name_the_box_and_never_a_query_value() {
        let run =
            traced(Method::POST, "/v1/boxes/{id}/commands/run", "/v1/boxes/box_a/commands/run");
        assert_eq!(run.as_deref(), Some("box_a"));
        let remove = traced(Method::DELETE, "/v1/boxes/{id}", "/v1/boxes/box_a");
        assert_eq!(remove.as_deref(), Some("box_a"));
        assert_eq!(traced(Method::GET, "/v1/boxes/{id}", "/v1/boxes/box_a"), None);
        assert_eq!(traced(Method::GET, "/v1/boxes/{id}/traces", "/v1/boxes/box_a/traces"), None);
        assert_eq!(
            traced(Method::GET, "/v1/boxes/{id}/progress", "/v1/boxes/box_a/progress"),
            None
        );
        assert_eq!(
            traced(Method::GET, "/v1/boxes/{id}/timeline", "/v1/boxes/box_a/timeline"),
            None
        );
        let export = "/v1/boxes/{id}/timeline/export";
        assert_eq!(traced(Method::GET, export, "/v1/boxes/box_a/timeline/export"), None);
        assert_eq!(traced(Method::POST, "/v1/boxes", "/v1/boxes"), None);
        let unknown = traced_box(None, None, &Method::GET, "/v1/boxes/box_a/nothing");
        assert_eq!(unknown.as_deref(), Some("box_a"));
        assert_eq!(traced_box(None, None, &Method::GET, "/v1/boxes/box_a/timeline/x"), None);
        assert_eq!(
            query_names(Some("path=/root/secret.txt&follow=true&token=abc")),
            ["path", "follow", "token"]
        );
        assert!(query_names(None).is_empty());
    }
}
