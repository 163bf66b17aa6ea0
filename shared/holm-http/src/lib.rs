//! The HTTP edge that `holm-guest` and `holmd` share: one error response,
//! strict extractors, request ids and the bearer check, so both servers
//! answer in exactly the same shape.
//!
//! Wire types stay in `holm-proto`; this crate only turns them into axum
//! responses and requests.

pub mod edge;
pub mod error;
pub mod extract;
pub mod serve;
pub mod tracked;
pub mod viewer_page;
pub mod viewer_token;

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use holm_proto::{ApiError, ErrorCode};
use subtle::ConstantTimeEq;

pub use edge::Edge;
pub use error::Error;
pub use extract::{StrictJson, StrictQuery};

/// The id of the request being served, in the request's extensions.
#[derive(Clone, Debug)]
pub struct RequestId(pub String);

/// Middleware: gives every request an id (taken from `x-request-id` when it is
/// sane, so an id carries through holmd to the guest), puts it on the
/// response, and writes it into error bodies.
pub async fn request_id(mut req: Request, next: Next) -> Response {
    let id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| is_sane_id(v))
        .map_or_else(new_request_id, str::to_owned);
    req.extensions_mut().insert(RequestId(id.clone()));
    let mut response = next.run(req).await;
    if let Some(err) = response.extensions_mut().remove::<ApiError>() {
        let status = response.status();
        response = error::body(err.with_request_id(id.clone()), status);
    }
    if let Ok(v) = HeaderValue::from_str(&id) {
        response.headers_mut().insert("x-request-id", v);
    }
    response
}

fn is_sane_id(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 64
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A new request id, such as `req_5f2c9a0e1b7d4c3a`.
pub fn new_request_id() -> String {
    let mut bytes = [0u8; 8];
    random_bytes(&mut bytes);
    let mut s = String::from("req_");
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Fills `buf` from the kernel's random source.
pub fn random_bytes(buf: &mut [u8]) {
    let mut filled = 0;
    while filled < buf.len() {
        let rest = &mut buf[filled..];
        // SAFETY: getrandom writes at most `rest.len()` bytes into `rest`.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        match usize::try_from(n) {
            Ok(n) if n > 0 => filled += n,
            _ => {
                let e = std::io::Error::last_os_error();
                assert!(e.kind() == std::io::ErrorKind::Interrupted, "getrandom failed: {e}");
            }
        }
    }
}

/// Checks `Authorization: Bearer <secret>` in constant time. `what` names the
/// credential in the refusal, such as "the box secret".
pub fn check_bearer(req: &Request, secret: &[u8], what: &str) -> Result<(), Error> {
    check_with(req, what, |given| bool::from(given.ct_eq(secret)))
}

/// [`check_bearer`] against the SHA-256 of the secret: a server that knows
/// only the digest (the guest, which is never given the box secret itself)
/// hashes what it is sent and compares the digests in constant time.
pub fn check_bearer_digest(req: &Request, digest: &[u8; 32], what: &str) -> Result<(), Error> {
    use sha2::Digest;
    check_with(req, what, |given| bool::from(sha2::Sha256::digest(given).ct_eq(digest)))
}

/// The value of a request's `Authorization: Bearer`, if it has one.
pub fn bearer(req: &Request) -> Option<&[u8]> {
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::as_bytes)
}

fn check_with(req: &Request, what: &str, matches: impl FnOnce(&[u8]) -> bool) -> Result<(), Error> {
    let given = bearer(req);
    let hint = || format!("send {what} as Authorization: Bearer <token>");
    match given {
        Some(given) if matches(given) => Ok(()),
        Some(_) => Err(ApiError::new(ErrorCode::Unauthorized, format!("{what} is wrong"))
            .with_hint(hint())
            .into()),
        None => Err(ApiError::new(ErrorCode::Unauthorized, format!("this route needs {what}"))
            .with_hint(hint())
            .into()),
    }
}

/// The SHA-256 of a secret, in lowercase hex: what a guest is given in
/// place of the box secret.
pub fn sha256_hex(secret: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Middleware body: refuses a request without the bearer secret.
pub async fn require_bearer(secret: &[u8], what: &str, req: Request, next: Next) -> Response {
    match check_bearer(&req, secret, what) {
        Ok(()) => next.run(req).await,
        Err(e) => e.into_response(),
    }
}

/// Turns off Nagle's algorithm on an accepted connection. Answers are often a
/// head and a small streamed body: without this, the second write waits for
/// the peer's delayed ACK (tens of milliseconds).
pub fn no_delay(stream: &mut tokio::net::TcpStream) {
    no_delay_stream(stream);
}

/// [`no_delay`] on a shared reference.
pub fn no_delay_stream(stream: &tokio::net::TcpStream) {
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!(error = %e, "cannot set TCP_NODELAY");
    }
}

/// Resolves on SIGTERM or SIGINT: both servers stop cleanly on either.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) =
        (signal(SignalKind::terminate()), signal(SignalKind::interrupt()))
    else {
        std::future::pending::<()>().await;
        return;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

/// The answer for a path no route has.
pub fn route_not_found(method: &axum::http::Method, path: &str) -> Error {
    ApiError::new(ErrorCode::RouteNotFound, format!("no route for {method} {path}"))
        .with_hint("GET /v1/openapi.json on holmd lists every route")
        .into()
}

/// The answer for a route that exists, with another method.
pub fn method_not_allowed(method: &axum::http::Method, path: &str) -> Error {
    ApiError::new(ErrorCode::MethodNotAllowed, format!("{method} is not allowed on {path}"))
        .with_hint("the Allow header names the methods this path takes")
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_unique_and_sane() {
        let a = new_request_id();
        let b = new_request_id();
        assert_ne!(a, b);
        assert!(is_sane_id(&a));
        assert!(!is_sane_id("has space"));
        assert!(!is_sane_id(&"x".repeat(65)));
    }
}
