//! The Chromium bridge on port 9223: Chromium's DevTools, for clients outside
//! the box (Playwright, Puppeteer), behind a credential.
//!
//! - `GET|PUT /json/...` is proxied to screen 0's Chromium on loopback, with
//!   every WebSocket address in the answer rewritten to the bridge's own
//!   (from the request's `Host`), so a client connects back through it.
//! - A WebSocket upgrade (`/devtools/browser/<id>`, `/devtools/page/<id>`) is
//!   proxied byte for byte once both sides have switched protocols: no frame is
//!   parsed, so the bridge adds one loopback hop and nothing else. `Origin` is
//!   not passed on (Chromium 111+ refuses unknown origins), and `Host` is
//!   loopback (Chromium refuses other hosts).
//!
//! Every request needs the bridge's own secret (`Authorization: Bearer`),
//! which holmd sets with `PUT /v1/bridge/secret` on the guest API and which is
//! not the box secret, or a ticket in the path: `/t/<ticket>/json/version`.
//! A ticket lives a short time (60 s by default) and opens one WebSocket
//! connection; `/json` answers under it keep the prefix in their addresses.
//! A ticket is only for that: it reads `/json/version`, `/json/list` and
//! `/json/protocol` and opens its connection, but cannot open, activate or
//! close a tab (`PUT /json/new`, `/json/activate`, `/json/close`), which
//! need the secret.
//! Without a secret set, everything is refused. Setting a new secret restarts
//! the bridge: open connections close and tickets are forgotten.
//!
//! Tickets and secrets never reach a log: paths are logged with the ticket
//! replaced.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use holm_proto::guest::{BRIDGE_PORT, BridgeStatus, TICKET_PREFIX, Ticket};
use holm_proto::{ApiError, ErrorCode};
use http_body_util::Empty;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use subtle::ConstantTimeEq;
use tokio_util::sync::CancellationToken;

use crate::cdp;
use holm_http::error::Error;

/// A ticket's lifetime unless asked otherwise.
pub const DEFAULT_TICKET_SECS: u32 = 60;
/// The longest ticket lifetime.
pub const MAX_TICKET_SECS: u32 = 300;
/// The shortest secret accepted.
pub const MIN_SECRET_LEN: usize = 32;

/// Checks a secret set through the API (the bridge's, or the box's own):
/// at least [`MIN_SECRET_LEN`] characters, without spaces or control
/// characters.
pub fn check_secret(secret: &str) -> Result<(), ApiError> {
    if secret.len() < MIN_SECRET_LEN || secret.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(ApiError::invalid_fields(vec![holm_proto::Issue {
            path: "secret".into(),
            problem: format!(
                "must be at least {MIN_SECRET_LEN} characters, without spaces or control characters"
            ),
        }]));
    }
    Ok(())
}
/// Tickets held at most; the oldest go first.
const MAX_TICKETS: usize = 1024;

/// The bridge's credentials and connections.
pub struct Bridge {
    devtools_port: u16,
    browser: bool,
    inner: Mutex<Inner>,
    connections: Arc<AtomicU32>,
}

struct Inner {
    secret: Option<String>,
    /// Cancelled when the secret changes: every connection opened before ends.
    generation: CancellationToken,
    tickets: HashMap<String, Instant>,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge")
            .field("devtools_port", &self.devtools_port)
            .field("browser", &self.browser)
            .finish_non_exhaustive()
    }
}

/// How a request proved itself.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Credential {
    Bearer,
    /// The path prefix to keep in rewritten addresses, `/t/<ticket>`.
    Ticket(String),
}

impl Bridge {
    /// A bridge to the DevTools server on loopback `devtools_port`; `browser`
    /// says whether the box runs one at all.
    pub fn new(devtools_port: u16, browser: bool) -> Arc<Self> {
        Arc::new(Self {
            devtools_port,
            browser,
            inner: Mutex::new(Inner {
                secret: None,
                generation: CancellationToken::new(),
                tickets: HashMap::new(),
            }),
            connections: Arc::new(AtomicU32::new(0)),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets the secret. A different one restarts the bridge (closes every
    /// connection, forgets every ticket) and answers true; the same one
    /// changes nothing.
    pub fn set_secret(&self, secret: &str) -> Result<bool, ApiError> {
        check_secret(secret)?;
        let mut inner = self.lock();
        if inner
            .secret
            .as_deref()
            .is_some_and(|s| bool::from(s.as_bytes().ct_eq(secret.as_bytes())))
        {
            return Ok(false);
        }
        inner.secret = Some(secret.to_owned());
        inner.generation.cancel();
        inner.generation = CancellationToken::new();
        inner.tickets.clear();
        drop(inner);
        tracing::info!("the bridge has a new secret; earlier connections and tickets are ended");
        Ok(true)
    }

    /// Issues a ticket that opens one connection within `ttl_secs`.
    pub fn issue_ticket(&self, ttl_secs: Option<u32>) -> Result<Ticket, ApiError> {
        let ttl = ttl_secs.unwrap_or(DEFAULT_TICKET_SECS);
        if !(1..=MAX_TICKET_SECS).contains(&ttl) {
            return Err(ApiError::invalid_fields(vec![holm_proto::Issue {
                path: "ttl_secs".into(),
                problem: format!("must be 1 to {MAX_TICKET_SECS}, not {ttl}"),
            }]));
        }
        self.issue_ticket_at(Instant::now(), Duration::from_secs(u64::from(ttl)))
            .map(|ticket| Ticket { ticket, expires_in_secs: ttl })
    }

    fn issue_ticket_at(&self, now: Instant, ttl: Duration) -> Result<String, ApiError> {
        let mut inner = self.lock();
        if inner.secret.is_none() {
            return Err(ApiError::new(ErrorCode::Conflict, "the bridge has no secret yet")
                .with_hint("set one first with PUT /v1/bridge/secret"));
        }
        inner.tickets.retain(|_, expires| *expires > now);
        if inner.tickets.len() >= MAX_TICKETS
            && let Some(oldest) =
                inner.tickets.iter().min_by_key(|(_, e)| **e).map(|(t, _)| t.clone())
        {
            inner.tickets.remove(&oldest);
        }
        let mut bytes = [0u8; 24];
        holm_http::random_bytes(&mut bytes);
        let ticket: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        inner.tickets.insert(ticket.clone(), now + ttl);
        Ok(ticket)
    }

    /// Checks a ticket; `consume` uses it up (a WebSocket connection).
    fn check_ticket_at(&self, ticket: &str, consume: bool, now: Instant) -> Result<(), Error> {
        let mut inner = self.lock();
        let valid = inner.tickets.get(ticket).is_some_and(|expires| *expires > now);
        if !valid {
            inner.tickets.remove(ticket);
            return Err(ApiError::new(
                ErrorCode::Unauthorized,
                "the bridge ticket is unknown, used or expired",
            )
            .with_hint("ask for a new one: POST /v1/boxes/{id}/bridge on holmd")
            .into());
        }
        if consume {
            inner.tickets.remove(ticket);
        }
        Ok(())
    }

    /// The bridge's state, without its secret.
    pub fn status(&self) -> BridgeStatus {
        let now = Instant::now();
        let inner = self.lock();
        BridgeStatus {
            port: BRIDGE_PORT,
            secret_set: inner.secret.is_some(),
            browser: self.browser,
            connections: self.connections.load(Ordering::Relaxed),
            tickets: u32::try_from(inner.tickets.values().filter(|e| **e > now).count())
                .unwrap_or(u32::MAX),
        }
    }

    /// Ends every connection (at shutdown).
    pub fn close_all(&self) {
        self.lock().generation.cancel();
    }

    fn authenticate(
        &self,
        req: &Request,
        ticket: Option<&str>,
        upgrade: bool,
    ) -> Result<Credential, Error> {
        if let Some(ticket) = ticket {
            self.check_ticket_at(ticket, upgrade, Instant::now())?;
            return Ok(Credential::Ticket(format!("{TICKET_PREFIX}{ticket}")));
        }
        let secret = self.lock().secret.clone();
        let Some(secret) = secret else {
            return Err(ApiError::new(ErrorCode::Unauthorized, "the bridge has no secret yet")
                .with_hint(
                    "holmd sets it when the box starts; ask holmd: POST /v1/boxes/{id}/bridge",
                )
                .into());
        };
        holm_http::check_bearer(req, secret.as_bytes(), "the bridge secret")?;
        Ok(Credential::Bearer)
    }

    /// The bridge's router.
    pub fn router(self: &Arc<Self>) -> Router {
        Router::new()
            .fallback(proxy)
            .with_state(Arc::clone(self))
            .layer(middleware::from_fn(holm_http::request_id))
    }
}

/// Splits `/t/<ticket>/rest` into the ticket and `/rest`.
fn split_ticket(path: &str) -> (Option<&str>, &str) {
    match path.strip_prefix(TICKET_PREFIX) {
        Some(after) => match after.find('/') {
            Some(i) => (Some(&after[..i]), &after[i..]),
            None => (Some(after), "/"),
        },
        None => (None, path),
    }
}

/// The path as it may be logged: a ticket is replaced.
fn loggable(path: &str) -> String {
    match split_ticket(path) {
        (Some(_), rest) => format!("{TICKET_PREFIX}<ticket>{rest}"),
        (None, rest) => rest.to_owned(),
    }
}

fn is_websocket(req: &Request) -> bool {
    req.headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// The `host[:port]` a client reached the bridge at, when it is sane.
fn public_host(headers: &HeaderMap) -> String {
    let sane = |h: &str| {
        !h.is_empty()
            && h.len() <= 255
            && h.bytes().all(|b| b.is_ascii_alphanumeric() || b".-:[]_".contains(&b))
    };
    headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .filter(|h| sane(h))
        .map_or_else(|| format!("127.0.0.1:{BRIDGE_PORT}"), str::to_owned)
}

/// Rewrites every DevTools address in `value` from Chromium's loopback
/// `upstream_port` to `public` (`host[:port]`) plus `prefix` (a ticket path or
/// nothing). `secure` makes `ws://` addresses `wss://` (behind a TLS tunnel).
pub fn rewrite(value: &mut Value, upstream_port: u16, public: &str, prefix: &str, secure: bool) {
    match value {
        Value::String(s) => {
            let mut out = s.clone();
            for host in ["127.0.0.1", "localhost", "[::1]"] {
                let from = format!("{host}:{upstream_port}/");
                if !out.contains(&from) {
                    continue;
                }
                if secure {
                    out = out.replace(&format!("ws://{from}"), &format!("wss://{public}{prefix}/"));
                }
                out = out.replace(&from, &format!("{public}{prefix}/"));
            }
            *s = out;
        }
        Value::Array(items) => {
            items.iter_mut().for_each(|v| rewrite(v, upstream_port, public, prefix, secure));
        }
        Value::Object(map) => {
            map.values_mut().for_each(|v| rewrite(v, upstream_port, public, prefix, secure));
        }
        _ => {}
    }
}

async fn proxy(State(bridge): State<Arc<Bridge>>, req: Request) -> Result<Response, Error> {
    let path = req.uri().path().to_owned();
    let (ticket, rest) = split_ticket(&path);
    let upgrade = is_websocket(&req);
    let credential = bridge.authenticate(&req, ticket, upgrade);
    tracing::debug!(method = %req.method(), path = %loggable(&path), upgrade, ok = credential.is_ok(), "bridge request");
    let credential = credential?;
    if !bridge.browser {
        return Err(ApiError::new(ErrorCode::NotReady, "this box runs no browser")
            .with_hint("create the box with the browser on")
            .into());
    }
    let mut target = rest.to_owned();
    if let Some(q) = req.uri().query() {
        target.push('?');
        target.push_str(q);
    }
    if upgrade {
        return websocket(&bridge, req, &target).await;
    }
    if rest == "/json" || rest.starts_with("/json/") {
        let prefix = match credential {
            Credential::Ticket(p) => {
                ticket_may_read(req.method(), rest)?;
                p
            }
            Credential::Bearer => String::new(),
        };
        let method = req.method().clone();
        let headers = req.headers().clone();
        drop(req);
        return json(&bridge, &method, &headers, &target, &prefix).await;
    }
    Err(ApiError::new(ErrorCode::RouteNotFound, format!("the bridge has no route for {}", loggable(&path)))
        .with_hint("the bridge serves /json/version, /json/list, /json/new, /json/activate/ID, /json/close/ID, /json/protocol and DevTools WebSockets")
        .into())
}

/// What a ticket may do besides its one connection: read.
fn ticket_may_read(method: &Method, rest: &str) -> Result<(), Error> {
    // Playwright asks for `/json/version/`.
    let reads = (method == Method::GET || method == Method::HEAD)
        && matches!(
            rest.trim_end_matches('/'),
            "/json" | "/json/version" | "/json/list" | "/json/protocol"
        );
    if reads {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorCode::Forbidden,
        format!("a bridge ticket cannot {method} {rest}: it reads /json/version, /json/list and /json/protocol and opens one connection"),
    )
    .with_hint("opening, activating or closing tabs needs the bridge secret (Authorization: Bearer)")
    .into())
}

fn browser_down(e: impl std::fmt::Display) -> Error {
    tracing::info!(error = %e, "the browser's DevTools did not answer");
    ApiError::new(ErrorCode::NotReady, "the browser is not answering")
        .with_hint("it may be starting or restarting; GET /health on the guest shows it")
        .into()
}

/// Proxies one `/json` request and rewrites the addresses in its answer.
async fn json(
    bridge: &Bridge,
    method: &Method,
    request_headers: &HeaderMap,
    target: &str,
    prefix: &str,
) -> Result<Response, Error> {
    let method = match *method {
        Method::GET | Method::HEAD => Method::GET,
        Method::PUT => Method::PUT,
        ref other => return Err(holm_http::method_not_allowed(other, "/json")),
    };
    let (status, headers, body) =
        cdp::devtools_http(bridge.devtools_port, method, target).await.map_err(browser_down)?;
    let secure = request_headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("https"));
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    // The protocol description is large and holds no addresses.
    let body = if is_json && !target.starts_with("/json/protocol") {
        match serde_json::from_slice::<Value>(&body) {
            Ok(mut v) => {
                rewrite(
                    &mut v,
                    bridge.devtools_port,
                    &public_host(request_headers),
                    prefix,
                    secure,
                );
                Bytes::from(serde_json::to_vec_pretty(&v).map_err(Error::internal)?)
            }
            Err(_) => body,
        }
    } else {
        body
    };
    let mut response = (status, body).into_response();
    if let Some(ct) = headers.get(header::CONTENT_TYPE) {
        response.headers_mut().insert(header::CONTENT_TYPE, ct.clone());
    }
    Ok(response)
}

/// Counts a proxied connection while it lives.
struct Open(Arc<AtomicU32>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Proxies a WebSocket connection: the upgrade is made with Chromium first,
/// then answered to the client with Chromium's headers, then bytes flow.
async fn websocket(bridge: &Bridge, mut req: Request, target: &str) -> Result<Response, Error> {
    let client_upgrade = hyper::upgrade::on(&mut req);
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", bridge.devtools_port))
        .await
        .map_err(browser_down)?;
    let _ = tcp.set_nodelay(true);
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await.map_err(browser_down)?;
    tokio::spawn(conn.with_upgrades());
    let mut upstream = http::Request::builder()
        .method(Method::GET)
        .uri(target)
        .header(header::HOST, format!("127.0.0.1:{}", bridge.devtools_port))
        .header(header::UPGRADE, "websocket")
        .header(header::CONNECTION, "Upgrade");
    for name in [
        header::SEC_WEBSOCKET_KEY,
        header::SEC_WEBSOCKET_VERSION,
        header::SEC_WEBSOCKET_EXTENSIONS,
        header::SEC_WEBSOCKET_PROTOCOL,
    ] {
        if let Some(v) = req.headers().get(&name) {
            upstream = upstream.header(name, v);
        }
    }
    let upstream = upstream.body(Empty::<Bytes>::new()).map_err(Error::internal)?;
    let answer = tokio::time::timeout(Duration::from_secs(10), sender.send_request(upstream))
        .await
        .map_err(|_| browser_down("the upgrade timed out"))?
        .map_err(browser_down)?;
    if answer.status() != StatusCode::SWITCHING_PROTOCOLS {
        let status = answer.status();
        return Err(if status == StatusCode::NOT_FOUND || status == StatusCode::BAD_REQUEST {
            ApiError::new(ErrorCode::NotFound, "there is no DevTools target at this address")
                .with_hint("GET /json/list through the bridge lists the targets")
                .into()
        } else {
            browser_down(format!("the upgrade answered {status}"))
        });
    }
    let mut response = Response::builder().status(StatusCode::SWITCHING_PROTOCOLS);
    for name in [
        header::UPGRADE,
        header::CONNECTION,
        header::SEC_WEBSOCKET_ACCEPT,
        header::SEC_WEBSOCKET_EXTENSIONS,
        header::SEC_WEBSOCKET_PROTOCOL,
    ] {
        if let Some(v) = answer.headers().get(&name) {
            response = response.header(name, v.clone());
        }
    }
    let chromium_upgrade = hyper::upgrade::on(answer);
    let generation = bridge.lock().generation.clone();
    bridge.connections.fetch_add(1, Ordering::Relaxed);
    let open = Open(Arc::clone(&bridge.connections));
    tokio::spawn(async move {
        let _open = open;
        let (client, chromium) = match tokio::join!(client_upgrade, chromium_upgrade) {
            (Ok(c), Ok(b)) => (c, b),
            (c, b) => {
                tracing::debug!(
                    client = c.is_ok(),
                    chromium = b.is_ok(),
                    "a bridge upgrade failed"
                );
                return;
            }
        };
        let mut client = TokioIo::new(client);
        let mut chromium = TokioIo::new(chromium);
        tokio::select! {
            () = generation.cancelled() => {}
            _ = tokio::io::copy_bidirectional(&mut client, &mut chromium) => {}
        }
    });
    response.body(Body::empty()).map_err(Error::internal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use serde_json::json;

    #[test]
    fn a_ticket_reads_and_does_nothing_else() {
        for (m, p) in [
            (Method::GET, "/json/version/"),
            (Method::GET, "/json/version"),
            (Method::GET, "/json/list"),
            (Method::GET, "/json"),
            (Method::HEAD, "/json/protocol"),
        ] {
            assert!(ticket_may_read(&m, p).is_ok(), "{m} {p}");
        }
        for (m, p) in [
            (Method::PUT, "/json/new?about:blank"),
            (Method::PUT, "/json/new"),
            (Method::GET, "/json/new"),
            (Method::GET, "/json/close/ABC"),
            (Method::PUT, "/json/activate/ABC"),
            (Method::PUT, "/json/version"),
        ] {
            let e = ticket_may_read(&m, p).unwrap_err();
            assert_eq!(e.0.code, ErrorCode::Forbidden, "{m} {p}");
        }
    }

    #[test]
    fn addresses_are_rewritten_to_the_bridge_and_keep_the_ticket() {
        let mut v = json!([{
            "description": "",
            "devtoolsFrontendUrl": "/devtools/inspector.html?ws=127.0.0.1:9300/devtools/page/AB12",
            "id": "AB12",
            "title": "about:blank",
            "type": "page",
            "url": "about:blank",
            "webSocketDebuggerUrl": "ws://127.0.0.1:9300/devtools/page/AB12"
        }]);
        rewrite(&mut v, 9300, "127.0.0.1:49154", "/t/tk", false);
        assert_eq!(v[0]["webSocketDebuggerUrl"], "ws://127.0.0.1:49154/t/tk/devtools/page/AB12");
        assert_eq!(
            v[0]["devtoolsFrontendUrl"],
            "/devtools/inspector.html?ws=127.0.0.1:49154/t/tk/devtools/page/AB12"
        );
        // Other strings and the page's own address stay.
        assert_eq!(v[0]["url"], "about:blank");

        let mut v = json!({"webSocketDebuggerUrl": "ws://localhost:9300/devtools/browser/x",
                           "Browser": "Chrome/156", "other": 9300});
        rewrite(&mut v, 9300, "box.example:443", "", true);
        assert_eq!(v["webSocketDebuggerUrl"], "wss://box.example:443/devtools/browser/x");
        assert_eq!(v["Browser"], "Chrome/156");
        assert_eq!(v["other"], 9300);

        // A page on another port of loopback is not the DevTools server.
        let mut v = json!({"url": "http://127.0.0.1:8000/", "x": "ws://127.0.0.1:93001/"});
        rewrite(&mut v, 9300, "h:1", "", false);
        assert_eq!(v, json!({"url": "http://127.0.0.1:8000/", "x": "ws://127.0.0.1:93001/"}));
    }

    #[test]
    fn ticket_paths_split_and_never_log() {
        assert_eq!(split_ticket("/t/abc/json/version/"), (Some("abc"), "/json/version/"));
        assert_eq!(split_ticket("/t/abc"), (Some("abc"), "/"));
        assert_eq!(split_ticket("/json/list"), (None, "/json/list"));
        assert_eq!(loggable("/t/s3cr3t/devtools/browser/x"), "/t/<ticket>/devtools/browser/x");
        assert!(!loggable("/t/s3cr3t").contains("s3cr3t"));
    }

    #[test]
    fn the_host_header_is_used_only_when_sane() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:49154"));
        assert_eq!(public_host(&h), "127.0.0.1:49154");
        h.insert(header::HOST, HeaderValue::from_static("evil/\"x"));
        assert_eq!(public_host(&h), "127.0.0.1:9223");
    }

    #[test]
    fn tickets_open_one_connection_and_expire() {
        let b = Bridge::new(9300, true);
        let now = Instant::now();
        // No ticket without a secret.
        let e = b.issue_ticket_at(now, Duration::from_secs(60)).unwrap_err();
        assert_eq!(e.code, ErrorCode::Conflict);
        assert!(b.set_secret("short").is_err());
        assert!(b.set_secret(&"s".repeat(32)).unwrap());
        assert!(!b.set_secret(&"s".repeat(32)).unwrap(), "the same secret changes nothing");

        let t = b.issue_ticket_at(now, Duration::from_secs(60)).unwrap();
        assert!(!t.contains(&"s".repeat(32)));
        // Reads before the connection are free; the connection uses it up.
        b.check_ticket_at(&t, false, now).unwrap();
        b.check_ticket_at(&t, false, now).unwrap();
        b.check_ticket_at(&t, true, now).unwrap();
        assert!(b.check_ticket_at(&t, false, now).is_err());
        assert!(b.check_ticket_at(&t, true, now).is_err());

        // An unused ticket stops working at its expiry.
        let t = b.issue_ticket_at(now, Duration::from_secs(60)).unwrap();
        b.check_ticket_at(&t, false, now + Duration::from_secs(59)).unwrap();
        assert!(b.check_ticket_at(&t, true, now + Duration::from_secs(60)).is_err());
        assert!(b.check_ticket_at("not-a-ticket", false, now).is_err());

        // A new secret forgets every ticket.
        let t = b.issue_ticket_at(now, Duration::from_secs(60)).unwrap();
        assert!(b.set_secret(&"n".repeat(40)).unwrap());
        assert!(b.check_ticket_at(&t, false, now).is_err());
        assert!(b.issue_ticket(Some(0)).is_err());
        assert!(b.issue_ticket(Some(MAX_TICKET_SECS + 1)).is_err());
        assert_eq!(b.issue_ticket(None).unwrap().expires_in_secs, DEFAULT_TICKET_SECS);
    }

    #[test]
    fn a_new_secret_ends_earlier_connections() {
        let b = Bridge::new(9300, true);
        b.set_secret(&"a".repeat(32)).unwrap();
        let first = b.lock().generation.clone();
        b.set_secret(&"a".repeat(32)).unwrap();
        assert!(!first.is_cancelled());
        b.set_secret(&"b".repeat(32)).unwrap();
        assert!(first.is_cancelled());
        assert!(!b.lock().generation.is_cancelled());
    }
}
