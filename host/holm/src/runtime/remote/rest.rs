//! [`Rest`]: a vendor's HTTP API as every REST vendor adapter calls it — the
//! key in the vendor's header, retries with backoff on 429 and 5xx that
//! honour `Retry-After`, and every failure made a [`VendorError`] with the
//! vendor's request id and without the key. The client connects only to
//! public addresses unless the runtime allows private ones
//! ([`holm_client::address`]): checked on each connection for a name, and
//! before each request for an address written in its URL.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use holm_client::address::{self, Addresses};
use reqwest::{Method, RequestBuilder, Response};

use super::error::{Retry, VendorError};

/// A vendor's API key, shared by everything that calls the vendor for one
/// runtime, and replaced in place when the runtime's key changes (so
/// running boxes go on with the new key). Its `Debug` hides it.
#[derive(Clone)]
pub struct Key(Arc<RwLock<String>>);

impl Key {
    /// A key.
    pub fn new(key: &str) -> Self {
        Self(Arc::new(RwLock::new(key.to_owned())))
    }

    /// The key now. Never log it.
    pub fn get(&self) -> String {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Replaces the key for every later call.
    pub fn set(&self, key: &str) {
        key.clone_into(&mut self.0.write().unwrap_or_else(|e| e.into_inner()));
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(<hidden>)")
    }
}

/// How a vendor takes its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// In a header of its own, such as E2B's `X-API-Key`.
    Header(&'static str),
    /// As `Authorization: Bearer <key>`, as Daytona.
    Bearer,
}

/// Reads a vendor's error body: its code and message.
pub type ErrorBody = fn(status: u16, body: &[u8]) -> (Option<String>, String);

/// How often and how long to wait before trying again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// Tries in all, the first included.
    pub attempts: u32,
    /// The wait after the first failure; doubled after each one.
    pub first: Duration,
    /// The longest wait between two tries.
    pub max: Duration,
    /// The longest `Retry-After` obeyed; a vendor asking for more gets this.
    pub max_retry_after: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            attempts: 5,
            first: Duration::from_millis(250),
            max: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl Backoff {
    /// The wait after failure number `n` (1-based), with up to a quarter of
    /// jitter so many clients do not come back at once.
    pub fn wait(&self, n: u32) -> Duration {
        let exp = self.first.saturating_mul(1 << n.saturating_sub(1).min(16)).min(self.max);
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).expect("the kernel's random source is readable");
        let jitter = u64::from_le_bytes(bytes) % (exp.as_millis() as u64 / 4 + 1);
        exp + Duration::from_millis(jitter)
    }
}

/// The headers vendors put their request id in, first found wins.
const REQUEST_ID_HEADERS: &[&str] = &[
    "x-request-id",
    "request-id",
    "x-vercel-id",
    "x-amzn-requestid",
    "x-correlation-id",
    "cf-ray",
];

/// One vendor's HTTP API.
#[derive(Debug, Clone)]
pub struct Rest {
    vendor: &'static str,
    base: String,
    key: Key,
    auth: Auth,
    errors: ErrorBody,
    backoff: Backoff,
    addresses: Addresses,
    client: reqwest::Client,
}

impl Rest {
    /// The API at `base` (no trailing slash needed), with `key` sent as
    /// `auth`, errors read by `errors`, reaching only `addresses`.
    pub fn new(
        vendor: &'static str,
        base: &str,
        key: Key,
        auth: Auth,
        errors: ErrorBody,
        addresses: Addresses,
    ) -> Self {
        // No redirect is followed: a vendor's API answers where it is
        // asked, and a redirect would take the key (in a custom header
        // that reqwest keeps across hosts) to another address.
        let client = address::client_builder(addresses)
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(15))
            .timeout(Duration::from_secs(120))
            .pool_idle_timeout(Duration::from_secs(60))
            .build()
            .expect("a TLS provider is installed");
        Self {
            vendor,
            base: base.trim_end_matches('/').to_owned(),
            key,
            auth,
            errors,
            backoff: Backoff::default(),
            addresses,
            client,
        }
    }

    /// Uses `backoff` instead of the default.
    #[must_use]
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// The API's base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The key, shared with whatever else this runtime calls.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// The HTTP client, for calls outside the API (an upload URL, a proxy).
    /// It checks the addresses a name resolves to; a URL the vendor hands
    /// back goes through [`Rest::check_url`] too, for an address written
    /// in it.
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Which addresses this API and what it hands back may be at.
    pub fn addresses(&self) -> Addresses {
        self.addresses
    }

    /// Refuses `url` when it names an address this runtime may not reach
    /// (a name is checked on each connection).
    pub fn check_url(&self, what: &str, url: &str) -> Result<(), VendorError> {
        address::check_url(url, self.addresses)
            .map_err(|m| VendorError::answer(self.vendor, what, m))
    }

    /// A request to `path` under the base, with the key.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let rb = self.client.request(method, format!("{}{path}", self.base));
        self.authorize(rb)
    }

    /// Adds the key to a request (for a vendor URL outside the base, such
    /// as Daytona's toolbox).
    pub fn authorize(&self, rb: RequestBuilder) -> RequestBuilder {
        let key = self.key.get();
        match self.auth {
            Auth::Header(name) => rb.header(name, key),
            Auth::Bearer => rb.bearer_auth(key),
        }
    }

    /// Sends the request `build` makes (again for each try), answering a
    /// success (2xx) or the vendor's error after the tries `retry` allows.
    /// `what` names the call in errors and logs ("create a sandbox").
    pub async fn send(
        &self,
        what: &str,
        retry: Retry,
        build: impl Fn(&Self) -> RequestBuilder,
    ) -> Result<Response, VendorError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let request = build(self).build();
            if let Ok(r) = &request {
                self.check_url(what, r.url().as_str())?;
            }
            let sent = match request {
                Ok(r) => self.client.execute(r).await,
                Err(e) => Err(e),
            };
            let err = match sent {
                Ok(r) if r.status().is_success() => return Ok(r),
                Ok(r) => self.error(what, r).await,
                Err(e) => VendorError::transport(self.vendor, what, &e),
            };
            if attempt >= self.backoff.attempts || !err.retryable(retry) {
                return Err(err);
            }
            let wait = match err.retry_after {
                Some(after) => after.min(self.backoff.max_retry_after),
                None => self.backoff.wait(attempt),
            };
            tracing::info!(
                vendor = self.vendor,
                what,
                status = ?err.status,
                attempt,
                wait_ms = wait.as_millis() as u64,
                "the vendor failed; trying again"
            );
            tokio::time::sleep(wait).await;
        }
    }

    /// Whether the vendor answers and takes the key: one GET of `path`
    /// (a list of one), no retries, answered within ten seconds.
    pub async fn ping(&self, path: &str) -> Result<(), VendorError> {
        self.send("list sandboxes", Retry::Never, |r| {
            r.request(Method::GET, path).query(&[("limit", "1")]).timeout(Duration::from_secs(10))
        })
        .await
        .map(drop)
    }

    /// Sends and reads a JSON answer.
    pub async fn json<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        retry: Retry,
        build: impl Fn(&Self) -> RequestBuilder,
    ) -> Result<T, VendorError> {
        let r = self.send(what, retry, build).await?;
        let request_id = request_id(&r);
        let bytes = r.bytes().await.map_err(|e| VendorError::transport(self.vendor, what, &e))?;
        serde_json::from_slice(&bytes).map_err(|e| {
            VendorError::answer(
                self.vendor,
                what,
                format!("its answer is not what holm reads: {e}"),
            )
            .with_request_id(request_id)
        })
    }

    /// The vendor's error for a non-2xx answer.
    async fn error(&self, what: &str, r: Response) -> VendorError {
        let status = r.status().as_u16();
        let request_id = request_id(&r);
        let retry_after = r
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let body = r.bytes().await.unwrap_or_default();
        let (code, message) = (self.errors)(status, &body);
        VendorError::from(super::error::Detail {
            vendor: self.vendor,
            what: what.to_owned(),
            status: Some(status),
            code,
            message,
            request_id,
            retry_after,
        })
        .scrub(&self.key.get())
    }
}

/// The vendor's request id of an answer, if it gives one.
pub fn request_id(r: &Response) -> Option<String> {
    REQUEST_ID_HEADERS
        .iter()
        .find_map(|h| r.headers().get(*h))
        .and_then(|v| v.to_str().ok())
        .map(|v| v.chars().take(128).collect())
}

/// `Retry-After`: seconds, or an HTTP date.
pub fn parse_retry_after(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(std::time::SystemTime::now()).unwrap_or_default())
}

/// A message from an error body that is not the vendor's JSON: its first
/// line, at most 300 characters, or the status's reason.
pub fn plain_message(status: u16, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    if line.is_empty() || line.starts_with('<') {
        return reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("error")
            .to_owned();
    }
    line.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_takes_seconds_and_dates() {
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        let later = std::time::SystemTime::now() + Duration::from_secs(120);
        let d = parse_retry_after(&httpdate::fmt_http_date(later)).unwrap();
        assert!(d > Duration::from_secs(100) && d <= Duration::from_secs(120), "{d:?}");
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn backoff_doubles_up_to_its_maximum() {
        let b = Backoff::default();
        assert!(b.wait(1) >= Duration::from_millis(250) && b.wait(1) <= Duration::from_millis(313));
        assert!(b.wait(3) >= Duration::from_secs(1));
        assert!(b.wait(12) <= Duration::from_secs(10));
    }

    #[test]
    fn a_key_is_shared_replaced_and_never_shown() {
        let k = Key::new("secret-one");
        let same = k.clone();
        k.set("secret-two");
        assert_eq!(same.get(), "secret-two");
        assert_eq!(format!("{k:?}"), "Key(<hidden>)");
    }

    /// A vendor API that answers a redirect to another address: the call
    /// fails with the 302, and the other address is never reached (with
    /// the key).
    #[tokio::test]
    async fn redirects_are_not_followed() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let elsewhere = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        elsewhere.set_nonblocking(true).unwrap();
        let target = format!("http://{}/steal", elsewhere.local_addr().unwrap());
        let api = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", api.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let (mut s, _) = api.accept().await.unwrap();
            let mut buf = vec![0u8; 4096];
            let _ = s.read(&mut buf).await.unwrap();
            let answer = format!(
                "HTTP/1.1 302 Found\r\nLocation: {target}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            s.write_all(answer.as_bytes()).await.unwrap();
        });
        let plain: ErrorBody = |status, body| (None, plain_message(status, body));
        let rest = Rest::new(
            "test",
            &base,
            Key::new("redirect-key"),
            Auth::Header("X-API-Key"),
            plain,
            Addresses::Any,
        );
        let e = rest.ping("/sandboxes").await.unwrap_err();
        assert_eq!(e.status, Some(302), "{e:?}");
        server.await.unwrap();
        let reached = elsewhere.accept();
        assert!(
            reached.as_ref().is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock),
            "the redirect was followed: {reached:?}"
        );
    }

    /// A vendor API at a name that resolves to loopback, or at a loopback
    /// address, is refused before the key is sent, with the reason, unless
    /// the runtime allows private addresses; then it is reached.
    #[tokio::test]
    async fn an_api_at_a_private_address_is_refused_unless_allowed() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let api = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = api.local_addr().unwrap().port();
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            loop {
                let (mut s, _) = api.accept().await.unwrap();
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut buf = vec![0u8; 4096];
                let _ = s.read(&mut buf).await;
                let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n[]";
                let _ = s.write_all(ok.as_bytes()).await;
            }
        });
        let plain: ErrorBody = |status, body| (None, plain_message(status, body));
        let rest = |base: &str, addresses| {
            Rest::new("test", base, Key::new("private-key"), Auth::Bearer, plain, addresses)
                .with_backoff(Backoff { attempts: 1, ..Backoff::default() })
        };
        for base in [format!("http://localhost:{port}"), format!("http://127.0.0.1:{port}")] {
            let e = rest(&base, Addresses::Public).ping("/sandboxes").await.unwrap_err();
            let text = e.to_string();
            assert!(text.contains("is not a public address"), "{base}: {text}");
            assert!(text.contains("allow_private_addresses"), "{base}: {text}");
            assert!(!text.contains("private-key"), "{text}");
        }
        assert_eq!(
            accepted.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "a refused API was reached"
        );
        rest(&format!("http://localhost:{port}"), Addresses::Any).ping("/sandboxes").await.unwrap();
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn plain_messages_are_short_and_never_html() {
        assert_eq!(plain_message(502, b"<html>bad</html>"), "Bad Gateway");
        assert_eq!(plain_message(500, b"\n  boom \nmore"), "boom");
    }
}
