//! [`Endpoint`]: how one service of a box (its guest API, its Chromium
//! bridge) is reached from the host, as its runtime says.
//!
//! A runtime answers an endpoint for each port of a box it makes reachable:
//! a host engine a loopback port (`http://127.0.0.1:49153`); a cloud vendor
//! its proxy (`https://8765-<id>.e2b.app` with E2B's traffic token as a
//! header, a Daytona preview URL with its token, a Modal tunnel). Everything
//! that talks to a box — holmd's forwarding, the bridge's access, a
//! [`crate::BoxClient`] and so `Computer::builder()` — goes through the
//! endpoint, so a new runtime changes none of them.
//!
//! `Authorization` is never an endpoint header: it carries the guest's own
//! credential (the box or bridge secret), end to end through the proxy.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::address::Addresses;

/// Headers a runtime cannot ask for: the guest's own credential, and those
/// the HTTP client sets itself.
const RESERVED: &[&str] = &[
    "authorization",
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
    "connection",
    "upgrade",
];

/// How a WebSocket reaches the service through an endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WebSockets {
    /// An upgrade passes like any request: at `ws://` (for `http://`) or
    /// `wss://` (for `https://`) of the same address, with the same headers.
    /// A client that cannot send headers passes only when there are none.
    #[default]
    Upgrade,
    /// As [`WebSockets::Upgrade`]; a client that cannot send headers (a
    /// browser, a ticket URL) gives the proxy's credential as this query
    /// parameter instead, as Daytona's `DAYTONA_SANDBOX_AUTH_KEY`.
    QueryParam {
        /// The parameter's name.
        name: String,
        /// Its value: a secret.
        value: holm_proto::Secret,
    },
    /// As [`WebSockets::Upgrade`]; a client that cannot send headers uses
    /// this base URL instead, where the vendor routes by host name and
    /// wants no credential (E2B's `https://<port>-<id>.<domain>` when a
    /// runtime opened its ports with `public_traffic`).
    Direct {
        /// The base URL, without credentials.
        url: String,
    },
}

/// A runtime's endpoint that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("endpoint {url:?}: {problem}")]
pub struct EndpointError {
    /// The URL given, without credentials.
    pub url: String,
    /// What is wrong.
    pub problem: String,
}

/// How one service of a box is reached from the host. Its `Debug` hides
/// header and query values, which are credentials.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Repr", into = "Repr")]
pub struct Endpoint {
    url: String,
    headers: BTreeMap<String, String>,
    websockets: WebSockets,
    /// Only public addresses may be connected to ([`Endpoint::public_only`]).
    public_only: bool,
}

/// The stored form. A plain string is an endpoint with no headers, as
/// records written before endpoints had headers hold it.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Repr {
    Url(String),
    Full {
        url: String,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        headers: BTreeMap<String, String>,
        #[serde(default)]
        websockets: WebSockets,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        public_only: bool,
    },
}

impl TryFrom<Repr> for Endpoint {
    type Error = EndpointError;

    fn try_from(r: Repr) -> Result<Self, EndpointError> {
        match r {
            Repr::Url(url) => Self::new(&url),
            Repr::Full { url, headers, websockets, public_only } => {
                let mut e = Self::new(&url)?;
                for (name, value) in headers {
                    e = e.with_header(&name, &value)?;
                }
                let e = e.with_websockets(websockets);
                if public_only { e.public_only() } else { Ok(e) }
            }
        }
    }
}

impl From<Endpoint> for Repr {
    fn from(e: Endpoint) -> Self {
        Repr::Full {
            url: e.url,
            headers: e.headers,
            websockets: e.websockets,
            public_only: e.public_only,
        }
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<&str> = self.headers.keys().map(String::as_str).collect();
        f.debug_struct("Endpoint")
            .field("url", &self.url)
            .field("headers", &headers)
            .field("websockets", &self.websockets)
            .field("public_only", &self.public_only)
            .finish()
    }
}

impl Endpoint {
    /// An endpoint at `url` (`http` or `https`, with no credentials, query
    /// or fragment; a path is a prefix), with no headers.
    pub fn new(url: &str) -> Result<Self, EndpointError> {
        let err = |problem: &str| EndpointError { url: url.to_owned(), problem: problem.into() };
        let parsed = url::Url::parse(url).map_err(|e| err(&e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(err("the scheme must be http or https"));
        }
        if parsed.host().is_none() {
            return Err(err("it has no host"));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(err("credentials go in headers, never in the URL"));
        }
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(err("it must have no query or fragment"));
        }
        Ok(Self {
            url: url.trim_end_matches('/').to_owned(),
            headers: BTreeMap::new(),
            websockets: WebSockets::Upgrade,
            public_only: false,
        })
    }

    /// A port on this host's loopback, as a host engine publishes it.
    pub fn loopback(addr: std::net::SocketAddr) -> Self {
        Self {
            url: format!("http://{addr}"),
            headers: BTreeMap::new(),
            websockets: WebSockets::Upgrade,
            public_only: false,
        }
    }

    /// The same endpoint, reached only at public addresses: refused now
    /// when its URL (or its direct URL) names an address that is not
    /// public, and checked on every connection for a name
    /// ([`crate::address`]). A cloud vendor's endpoints are marked so
    /// unless its runtime allows private addresses.
    pub fn public_only(mut self) -> Result<Self, EndpointError> {
        let check = |url: &str| {
            crate::address::check_url(url, Addresses::Public)
                .map_err(|problem| EndpointError { url: url.to_owned(), problem })
        };
        check(&self.url)?;
        if let WebSockets::Direct { url } = &self.websockets {
            check(url)?;
        }
        self.public_only = true;
        Ok(self)
    }

    /// Which addresses a client may connect to for this endpoint.
    pub fn addresses(&self) -> Addresses {
        if self.public_only { Addresses::Public } else { Addresses::Any }
    }

    /// Adds a header every request and upgrade must carry, such as a
    /// vendor proxy's token. `Authorization`, `Host` and the headers the
    /// HTTP client sets itself are refused.
    pub fn with_header(mut self, name: &str, value: &str) -> Result<Self, EndpointError> {
        let err = |problem: String| EndpointError { url: self.url.clone(), problem };
        let lower = name.to_ascii_lowercase();
        if RESERVED.contains(&lower.as_str()) {
            return Err(err(format!(
                "{name} cannot be an endpoint header: holm sets it (Authorization carries the guest's own secret)"
            )));
        }
        reqwest::header::HeaderName::from_bytes(lower.as_bytes())
            .map_err(|_| err(format!("{name:?} is not a header name")))?;
        reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| err(format!("the value of {name} is not a header value")))?;
        self.headers.insert(lower, value.to_owned());
        Ok(self)
    }

    /// Says how WebSockets pass.
    #[must_use]
    pub fn with_websockets(mut self, websockets: WebSockets) -> Self {
        self.websockets = websockets;
        self
    }

    /// The base URL, without a trailing slash. Holds no credential: it may
    /// be shown and logged.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The URL of `path` (which starts with `/`) under the endpoint.
    pub fn join(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    /// The WebSocket URL of `path`: `ws://` for `http://`, `wss://` for
    /// `https://`. An upgrade carries [`Endpoint::headers`] too.
    pub fn ws_url(&self, path: &str) -> String {
        let url = self.join(path);
        match url.strip_prefix("https://") {
            Some(rest) => format!("wss://{rest}"),
            None => format!("ws://{}", url.trim_start_matches("http://")),
        }
    }

    /// The headers every request and upgrade carries. Their values are
    /// credentials: never log them.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// How WebSockets pass.
    pub fn websockets(&self) -> &WebSockets {
        &self.websockets
    }

    /// `url` (one under this endpoint, `http(s)://` or `ws(s)://`) as a
    /// client that cannot send headers (a browser, Playwright's
    /// `connectOverCDP(url)`) must use it, or `None` when the endpoint's
    /// proxy takes its credential only as a header: such a client must go
    /// through holmd.
    pub fn headerless(&self, url: &str) -> Option<String> {
        if self.headers.is_empty() {
            return Some(url.to_owned());
        }
        match &self.websockets {
            WebSockets::Upgrade => None,
            WebSockets::QueryParam { name, value } => {
                let mut url = url::Url::parse(url).ok()?;
                url.query_pairs_mut().append_pair(name, value.expose());
                Some(url.into())
            }
            WebSockets::Direct { url: direct } => {
                let direct = Self::new(direct).ok()?;
                if let Some(rest) = url.strip_prefix(&self.url) {
                    Some(direct.join(rest))
                } else {
                    url.strip_prefix(&self.ws_url("")).map(|rest| direct.ws_url(rest))
                }
            }
        }
    }

    /// Adds the endpoint's headers to a request.
    pub fn apply(&self, mut rb: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        for (name, value) in &self.headers {
            rb = rb.header(name, value);
        }
        rb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_is_an_http_base_without_credentials() {
        let e = Endpoint::new("https://8765-abc.e2b.app/").unwrap();
        assert_eq!(e.url(), "https://8765-abc.e2b.app");
        assert_eq!(e.join("/v1/info"), "https://8765-abc.e2b.app/v1/info");
        assert_eq!(e.ws_url("/devtools"), "wss://8765-abc.e2b.app/devtools");
        let l = Endpoint::loopback("127.0.0.1:49153".parse().unwrap());
        assert_eq!(l.ws_url("/x"), "ws://127.0.0.1:49153/x");
        for bad in
            ["ftp://h", "https://user:pw@h", "https://h/?token=x", "not a url", "https://h/#f"]
        {
            assert!(Endpoint::new(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_guest_credential_is_never_an_endpoint_header() {
        let e = Endpoint::new("https://h").unwrap();
        for reserved in ["Authorization", "host", "Content-Length", "Upgrade"] {
            let err = e.clone().with_header(reserved, "x").unwrap_err();
            assert!(err.problem.contains("cannot be an endpoint header"), "{err}");
        }
        assert!(e.clone().with_header("bad name", "x").is_err());
        assert!(e.clone().with_header("x-token", "a\nb").is_err());
    }

    #[test]
    fn debug_hides_credentials() {
        let e = Endpoint::new("https://h")
            .unwrap()
            .with_header("e2b-traffic-access-token", "s3cret-traffic")
            .unwrap()
            .with_websockets(WebSockets::QueryParam { name: "k".into(), value: "s3cret-q".into() });
        let shown = format!("{e:?}");
        assert!(shown.contains("e2b-traffic-access-token"), "{shown}");
        assert!(!shown.contains("s3cret"), "{shown}");
    }

    #[test]
    fn a_client_without_headers_passes_only_where_the_proxy_takes_a_query() {
        let open = Endpoint::new("https://p.vercel.run").unwrap();
        let url = open.join("/t/tk");
        assert_eq!(open.headerless(&url).as_deref(), Some("https://p.vercel.run/t/tk"));
        let gated = open.clone().with_header("x-daytona-preview-token", "tok").unwrap();
        assert_eq!(gated.headerless(&url), None);
        let query = gated.with_websockets(WebSockets::QueryParam {
            name: "DAYTONA_SANDBOX_AUTH_KEY".into(),
            value: "tok".into(),
        });
        assert_eq!(
            query.headerless(&url).as_deref(),
            Some("https://p.vercel.run/t/tk?DAYTONA_SANDBOX_AUTH_KEY=tok")
        );
        assert_eq!(
            query.headerless(&query.ws_url("/t/tk/devtools")).as_deref(),
            Some("wss://p.vercel.run/t/tk/devtools?DAYTONA_SANDBOX_AUTH_KEY=tok")
        );
    }

    #[test]
    fn a_client_without_headers_uses_the_direct_url_where_there_is_one() {
        let e = Endpoint::new("https://sandbox.e2b.app")
            .unwrap()
            .with_header("e2b-sandbox-id", "sbx")
            .unwrap()
            .with_websockets(WebSockets::Direct { url: "https://9223-sbx.e2b.app".into() });
        assert_eq!(
            e.headerless(&e.join("/t/tk/json/version")).as_deref(),
            Some("https://9223-sbx.e2b.app/t/tk/json/version")
        );
        assert_eq!(
            e.headerless(&e.ws_url("/t/tk/devtools/browser/x")).as_deref(),
            Some("wss://9223-sbx.e2b.app/t/tk/devtools/browser/x")
        );
        assert_eq!(e.headerless("https://elsewhere/x"), None);
    }

    #[test]
    fn stored_endpoints_round_trip_and_old_urls_still_read() {
        let e = Endpoint::new("https://h").unwrap().with_header("x-t", "v").unwrap();
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(serde_json::from_str::<Endpoint>(&json).unwrap(), e);
        let old: Endpoint = serde_json::from_str("\"http://127.0.0.1:1\"").unwrap();
        assert_eq!(old, Endpoint::loopback("127.0.0.1:1".parse().unwrap()));
        // A stored endpoint is checked again as it is read.
        let bad = r#"{"url":"https://h","headers":{"authorization":"x"}}"#;
        assert!(serde_json::from_str::<Endpoint>(bad).is_err());
    }

    #[test]
    fn a_public_only_endpoint_refuses_private_addresses_and_stays_marked() {
        for bad in ["http://127.0.0.1:6080", "http://169.254.169.254", "http://[fd00:ec2::254]"] {
            let e = Endpoint::new(bad).unwrap();
            assert_eq!(e.addresses(), Addresses::Any);
            let err = e.public_only().unwrap_err();
            assert!(err.problem.contains("not a public address"), "{err}");
        }
        let direct = Endpoint::new("https://sandbox.e2b.app")
            .unwrap()
            .with_websockets(WebSockets::Direct { url: "http://10.0.0.1".into() });
        assert!(direct.public_only().is_err());
        let e = Endpoint::new("https://8765-abc.e2b.app").unwrap().public_only().unwrap();
        assert_eq!(e.addresses(), Addresses::Public);
        let back: Endpoint = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
        assert_eq!(back.addresses(), Addresses::Public);
        // A stored public-only endpoint at a private address is refused as
        // it is read.
        let stored = r#"{"url":"http://127.0.0.1:1","public_only":true}"#;
        assert!(serde_json::from_str::<Endpoint>(stored).is_err());
    }
}
