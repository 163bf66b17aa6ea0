//! The web edge: one check in front of every route a server has.
//!
//! A browser is the client holm must distrust most: a page the user opens
//! can send requests to `127.0.0.1`, and a page whose name it makes resolve
//! to `127.0.0.1` (DNS rebinding) can even read the answers. So before any
//! route, and before the bearer check, [`check`] refuses:
//!
//! - a **dot segment** in the path (`.` or `..`, also percent-encoded): no
//!   route has one, and a forwarded path must reach exactly the route that
//!   was checked;
//! - a **`Host`** that is not a loopback name, the bound address or the host
//!   of the public URL (a rebinding page sends its own name). Bound to every
//!   address (`0.0.0.0`) the server cannot know the names clients use, so
//!   any `Host` passes; such a server requires its token, which a browser
//!   never adds by itself;
//! - an **`Origin`** that is not a page of loopback, of the bound address or
//!   of the public URL (`Origin: null` included). Clients that are not
//!   browsers send none and pass;
//! - a **body** whose `Content-Type` is missing or one a page may send
//!   without asking first (`text/plain`, `application/x-www-form-urlencoded`,
//!   `multipart/form-data`). JSON bodies must say `application/json`
//!   ([`crate::StrictJson`] checks that too), raw bodies
//!   `application/octet-stream`.
//!
//! Every refusal is the one error shape. Servers mount it with
//! [`Edge::layer`] around their whole router, so a route added later (a
//! viewer's WebSocket, say) passes through it without doing anything.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use holm_proto::{ApiError, ErrorCode};

/// Which `Host` and `Origin` values a server accepts.
#[derive(Debug, Clone)]
pub struct Edge {
    /// Host names accepted (lowercase, IPv6 without brackets), or `None` for
    /// any: see the module docs.
    hosts: Option<Vec<String>>,
    /// Origins accepted: `scheme://host:port`, or `scheme://host:*` for any
    /// port.
    origins: Vec<String>,
}

impl Edge {
    /// The edge of a server bound to `bind`, reached as `public_url` behind
    /// a proxy.
    pub fn new(bind: SocketAddr, public_url: Option<&str>) -> Self {
        let hosts = (!bind.ip().is_unspecified()).then(|| allowed_hosts(bind, public_url));
        Self { hosts, origins: allowed_origins(bind, public_url) }
    }

    /// The host names accepted, or an empty list for any.
    pub fn hosts(&self) -> Vec<String> {
        self.hosts.clone().unwrap_or_default()
    }

    /// The origins accepted, `*` standing for any port.
    pub fn origins(&self) -> &[String] {
        &self.origins
    }

    /// Checks a request's path and headers; see the module docs.
    pub fn check(&self, method: &Method, path: &str, headers: &HeaderMap) -> Result<(), ApiError> {
        if has_dot_segment(path) {
            return Err(ApiError::invalid(format!(
                "the path {:?} has a dot segment (. or ..), which no route has",
                truncate(path)
            ))
            .with_hint("send the path as it is, without . or .. segments"));
        }
        if let Some(hosts) = &self.hosts
            && let Some(host) = headers.get(header::HOST)
        {
            let name = host.to_str().ok().and_then(host_name);
            if !name.is_some_and(|n| hosts.contains(&n)) {
                return Err(ApiError::new(
                    ErrorCode::Forbidden,
                    format!("the Host header {:?} is not a name of this server", lossy(host)),
                )
                .with_hint(
                    "use a loopback name or the address the server listens on; behind a proxy, \
                     set HOLM_PUBLIC_URL to the address clients use",
                ));
            }
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let ok = origin.to_str().ok().is_some_and(|o| origin_allowed(&self.origins, o));
            if !ok {
                return Err(ApiError::new(
                    ErrorCode::Forbidden,
                    format!("the Origin {:?} is not a page of this server", lossy(origin)),
                )
                .with_hint(
                    "only pages served from loopback, the server's own address or HOLM_PUBLIC_URL \
                     may call this server; other clients send no Origin",
                ));
            }
        }
        if method != Method::GET && method != Method::HEAD && has_body(headers) {
            let kind = headers.get(header::CONTENT_TYPE).map(media_type);
            match kind.as_deref() {
                None | Some("") => {
                    return Err(unsupported_media_type("the body has no Content-Type"));
                }
                Some(
                    t
                    @ ("text/plain" | "application/x-www-form-urlencoded" | "multipart/form-data"),
                ) => {
                    return Err(unsupported_media_type(&format!(
                        "a body of Content-Type {t} is refused: any web page may send one"
                    )));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Middleware body: refuses what [`Edge::check`] refuses, in the one
    /// error shape, before the route runs.
    pub async fn run(self: Arc<Self>, req: Request, next: Next) -> Response {
        match self.check(req.method(), req.uri().path(), req.headers()) {
            Ok(()) => next.run(req).await,
            Err(e) => crate::Error::from(e).into_response(),
        }
    }

    /// Wraps `router` so every route in it passes [`Edge::check`] first.
    pub fn layer<S: Clone + Send + Sync + 'static>(
        self: &Arc<Self>,
        router: axum::Router<S>,
    ) -> axum::Router<S> {
        let edge = Arc::clone(self);
        router.layer(axum::middleware::from_fn(move |req: Request, next: Next| {
            Arc::clone(&edge).run(req, next)
        }))
    }
}

/// The error for a body of the wrong kind.
pub fn unsupported_media_type(message: &str) -> ApiError {
    ApiError::new(ErrorCode::UnsupportedMediaType, message.to_owned()).with_hint(
        "send JSON bodies with Content-Type: application/json and raw bodies (file contents, \
         standard input) with Content-Type: application/octet-stream",
    )
}

/// The media type of a `Content-Type` value, lowercase, without parameters.
pub fn media_type(value: &axum::http::HeaderValue) -> String {
    String::from_utf8_lossy(value.as_bytes())
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Whether a request carries a body: a length above zero, or chunks.
fn has_body(headers: &HeaderMap) -> bool {
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0")
}

/// Whether a path has a `.` or `..` segment, also percent-encoded.
pub fn has_dot_segment(path: &str) -> bool {
    path.split('/').any(|seg| {
        let lower = seg.to_ascii_lowercase();
        let decoded = lower.replace("%2e", ".");
        decoded == "." || decoded == ".."
    })
}

/// The name part of a `Host` value (`name`, `name:port`, `[v6]:port`),
/// lowercase, IPv6 without brackets.
fn host_name(host: &str) -> Option<String> {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split_once(']')?.0
    } else {
        match host.rsplit_once(':') {
            Some((n, port)) if port.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => host,
        }
    };
    (!name.is_empty()).then(|| name.trim_end_matches('.').to_ascii_lowercase())
}

fn lossy(v: &axum::http::HeaderValue) -> String {
    truncate(&String::from_utf8_lossy(v.as_bytes()))
}

fn truncate(s: &str) -> String {
    s.chars().take(100).collect()
}

/// The `Host` names accepted: loopback names, the bound address and the
/// host of `public_url`.
pub fn allowed_hosts(bind: SocketAddr, public_url: Option<&str>) -> Vec<String> {
    let mut hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
    if !bind.ip().is_unspecified() {
        hosts.push(bind.ip().to_string());
    }
    if let Some(host) = public_host(public_url) {
        hosts.push(host);
    }
    hosts.sort();
    hosts.dedup();
    hosts
}

fn public_host(public_url: Option<&str>) -> Option<String> {
    let url = url::Url::parse(public_url?).ok()?;
    Some(url.host_str()?.trim_matches(['[', ']']).to_ascii_lowercase())
}

/// The `Origin` values accepted: pages served from loopback (any port), from
/// the bound address, and from `public_url`.
pub fn allowed_origins(bind: SocketAddr, public_url: Option<&str>) -> Vec<String> {
    let mut origins = vec![
        "http://localhost:*".to_owned(),
        "http://127.0.0.1:*".to_owned(),
        "http://[::1]:*".to_owned(),
        "https://localhost:*".to_owned(),
    ];
    if !bind.ip().is_unspecified() && !bind.ip().is_loopback() {
        let host = match bind.ip() {
            IpAddr::V4(ip) => ip.to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
        };
        origins.push(format!("http://{host}:{}", bind.port()));
    }
    if let Some(u) = public_url.and_then(|u| url::Url::parse(u).ok()) {
        let origin = u.origin().ascii_serialization();
        if origin != "null" {
            // `Url::origin` leaves out a default port; the check wants one.
            let port = u.port_or_known_default().map_or_else(String::new, |p| format!(":{p}"));
            let with_port = if u.port().is_some() { origin } else { format!("{origin}{port}") };
            origins.push(with_port);
        }
    }
    origins
}

/// Whether `origin` matches one of `allowed` (`*` as any port).
fn origin_allowed(allowed: &[String], origin: &str) -> bool {
    let Ok(url) = url::Url::parse(origin) else { return false };
    let Some(host) = url.host_str() else { return false };
    let Some(port) = url.port_or_known_default() else { return false };
    let full = format!("{}://{}:{port}", url.scheme(), host.to_ascii_lowercase());
    let any_port = format!("{}://{}:*", url.scheme(), host.to_ascii_lowercase());
    allowed.iter().any(|a| *a == full || *a == any_port)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    fn code(edge: &Edge, method: Method, path: &str, pairs: &[(&str, &str)]) -> Option<ErrorCode> {
        edge.check(&method, path, &headers(pairs)).err().map(|e| e.code)
    }

    #[test]
    fn loopback_binds_take_loopback_names_only() {
        let e = Edge::new(addr("127.0.0.1:8080"), None);
        assert_eq!(e.hosts(), ["127.0.0.1", "::1", "localhost"]);
        assert_eq!(code(&e, Method::GET, "/v1/boxes", &[("host", "127.0.0.1:8080")]), None);
        assert_eq!(code(&e, Method::GET, "/v1/boxes", &[("host", "LOCALHOST")]), None);
        assert_eq!(code(&e, Method::GET, "/v1/boxes", &[("host", "[::1]:8080")]), None);
        assert_eq!(
            code(&e, Method::GET, "/v1/boxes", &[("host", "attacker.example:8080")]),
            Some(ErrorCode::Forbidden)
        );
        assert_eq!(
            code(&e, Method::GET, "/v1/boxes", &[("host", "127.0.0.1.attacker.example")]),
            Some(ErrorCode::Forbidden)
        );
    }

    #[test]
    fn the_public_url_and_the_bound_address_are_allowed() {
        let e = Edge::new(addr("10.0.0.5:8080"), Some("https://Boxes.example.com"));
        for h in ["boxes.example.com", "10.0.0.5:8080", "localhost:1"] {
            assert_eq!(code(&e, Method::GET, "/", &[("host", h)]), None, "{h}");
        }
        assert!(e.origins().contains(&"https://boxes.example.com:443".to_owned()));
        assert!(e.origins().contains(&"http://10.0.0.5:8080".to_owned()));
        assert_eq!(code(&e, Method::GET, "/", &[("origin", "https://boxes.example.com")]), None);
        let e = Edge::new(addr("[fd00::5]:8080"), Some("http://[fd00::5]:8080"));
        assert!(e.hosts().contains(&"fd00::5".to_owned()));
    }

    #[test]
    fn an_unspecified_bind_checks_no_host_but_origins() {
        let e = Edge::new(addr("0.0.0.0:8080"), Some("https://boxes.example.com"));
        assert!(e.hosts().is_empty());
        assert_eq!(code(&e, Method::GET, "/", &[("host", "anything.example")]), None);
        assert_eq!(
            code(&e, Method::GET, "/", &[("origin", "https://evil.example")]),
            Some(ErrorCode::Forbidden)
        );
    }

    #[test]
    fn cross_origin_pages_are_refused_and_loopback_pages_pass() {
        let e = Edge::new(addr("127.0.0.1:8080"), None);
        for o in ["http://127.0.0.1:3000", "http://localhost:8080", "http://[::1]:1"] {
            assert_eq!(code(&e, Method::POST, "/v1/boxes", &[("origin", o)]), None, "{o}");
        }
        for o in ["https://evil.example", "null", "http://127.0.0.1.evil.example", "file://"] {
            assert_eq!(
                code(&e, Method::POST, "/v1/boxes", &[("origin", o)]),
                Some(ErrorCode::Forbidden),
                "{o}"
            );
        }
    }

    #[test]
    fn bodies_a_page_may_send_unasked_are_refused() {
        let e = Edge::new(addr("127.0.0.1:8080"), None);
        let post = |pairs: &[(&str, &str)]| code(&e, Method::POST, "/v1/boxes", pairs);
        assert_eq!(post(&[("content-length", "2")]), Some(ErrorCode::UnsupportedMediaType));
        for t in [
            "text/plain",
            "TEXT/PLAIN; charset=utf-8",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
        ] {
            assert_eq!(
                post(&[("content-length", "2"), ("content-type", t)]),
                Some(ErrorCode::UnsupportedMediaType),
                "{t}"
            );
        }
        assert_eq!(
            post(&[("transfer-encoding", "chunked"), ("content-type", "text/plain")]),
            Some(ErrorCode::UnsupportedMediaType)
        );
        assert_eq!(post(&[("content-length", "2"), ("content-type", "application/json")]), None);
        assert_eq!(
            post(&[("content-length", "2"), ("content-type", "application/octet-stream")]),
            None
        );
        // No body: nothing to check.
        assert_eq!(post(&[("content-length", "0")]), None);
        assert_eq!(post(&[]), None);
    }

    #[test]
    fn dot_segments_are_refused_however_written() {
        let e = Edge::new(addr("127.0.0.1:8080"), None);
        for p in [
            "/v1/boxes/b/processes/../commands/run",
            "/v1/boxes/b/./info",
            "/v1/boxes/b/%2e%2e/x",
            "/v1/boxes/b/%2E./x",
            "/v1/boxes/b/.%2e",
            "/..",
        ] {
            assert_eq!(code(&e, Method::GET, p, &[]), Some(ErrorCode::InvalidRequest), "{p}");
        }
        for p in ["/v1/boxes/b/files/list", "/v1/boxes/b/...", "/v1/a..b", "/v1/.hidden"] {
            assert_eq!(code(&e, Method::GET, p, &[]), None, "{p}");
        }
    }
}
