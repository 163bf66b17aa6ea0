//! Forwarding a box's routes to its guest: `/v1/boxes/{id}/REST` goes to the
//! guest's `/v1/REST`, at the endpoint its runtime answered (with that
//! endpoint's headers), with the box secret, the same method, query and
//! body, and the caller's request id. Bodies stream both ways.
//!
//! A request that is not a stream ([`is_stream`]) must be answered whole
//! within the forward timeout ([`DEFAULT_TIMEOUT`], ten minutes): a guest
//! that hangs cannot hold a request forever. Streams (a command's events, a
//! followed output, a command waited for, which may run a day, and file
//! contents of any size) have no overall limit; they end when the client
//! goes, when the box leaves `running`, or at the guest's own limits. The
//! edge refused dot segments before any route ran, so the guest's route is
//! the one that was checked here.

use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, Method, header};
use axum::response::Response;
use futures_util::TryStreamExt;
use holm_client::address::Addresses;
use holm_http::{Error, RequestId};
use holm_proto::contract::GuestRoute;
use holm_proto::host::BoxState;
use holm_proto::{ApiError, ErrorCode, ErrorDetails};

use super::AppState;
use crate::service::state::require_running;
use crate::service::{self, Part};

/// Bodies up to this size are read whole and sent with a length, which is
/// faster for the small JSON bodies of input and commands.
const SMALL_BODY: usize = 64 * 1024;

/// How long a forwarded request that is not a stream may take, whole.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The client that forwards to guests: pooled, no proxy, no timeout of its
/// own (commands and streams may run long; see [`DEFAULT_TIMEOUT`]). An idle
/// connection is let go well before the guest's own idle limit (30 s) ends
/// it, so a request never lands on a connection the guest is closing.
pub(super) fn client(addresses: Addresses) -> reqwest::Client {
    holm_client::address::client_builder(addresses)
        .no_proxy()
        .tcp_nodelay(true)
        .pool_idle_timeout(Duration::from_secs(15))
        .connect_timeout(Duration::from_secs(5))
        .build()
        .expect("a TLS provider is installed")
}

/// Request headers passed to the guest.
const FORWARD_REQUEST: &[HeaderName] =
    &[header::CONTENT_TYPE, header::ACCEPT, header::IF_NONE_MATCH];

/// Response headers passed back (`Retry-After`: when a guest's `not_ready`
/// may be tried again).
fn keep_response_header(name: &HeaderName) -> bool {
    name == header::CONTENT_TYPE
        || name == header::CONTENT_LENGTH
        || name == header::ETAG
        || name == header::CACHE_CONTROL
        || name == header::RETRY_AFTER
        || name.as_str().starts_with("x-holm-")
}

/// The guest route a forwarded request is, by its method and its path
/// after `/v1/boxes/{id}` (the router matched a forwarded route, so there
/// is one unless the method is one the contract does not name).
fn guest_route(method: &Method, rest: &str) -> Option<&'static GuestRoute> {
    let method = holm_proto::contract::Method::parse(method.as_str())?;
    GuestRoute::find(method, &format!("/v1{rest}"))
}

/// Whether a request only watches the box: watching does not move an idle
/// deadline, commands do (the contract says which routes watch).
fn only_watches(method: &Method, rest: &str) -> bool {
    guest_route(method, rest).is_some_and(|r| r.watches)
}

/// Whether a request is a stream, which the forward timeout does not bound
/// (the contract says which routes are).
fn is_stream(method: &Method, rest: &str) -> bool {
    guest_route(method, rest).is_some_and(|r| r.stream)
}

pub(super) async fn forward(
    State(state): State<AppState>,
    req: Request,
) -> Result<Response, Error> {
    let path = req.uri().path().to_owned();
    // The route matched /v1/boxes/{id}/..., so both parts are there.
    let tail = path.strip_prefix("/v1/boxes/").unwrap_or_default();
    let (id, rest) = tail.split_once('/').map_or((tail, ""), |(id, rest)| (id, rest));
    let rest = format!("/{rest}");
    if rest == "/secret" {
        // The box secret is the server's alone: it sets it, never a caller.
        return Err(holm_http::route_not_found(req.method(), &path));
    }
    let id = super::box_path::parse(id)?;
    if req.method() == Method::GET
        && let Some(kept) = kept_recordings(&state, &id, &rest).await?
    {
        return Ok(kept);
    }
    let entry = state.service.get(&id)?;
    let record = entry.record();
    require_running(&record)?;
    let Some(guest) = record.guest.as_ref() else {
        return Err(Error::internal(format!("running box {id} has no guest address")));
    };
    if !only_watches(req.method(), &rest) {
        state.service.touch(&entry);
    }
    let request_id = req.extensions().get::<RequestId>().map(|r| r.0.clone()).unwrap_or_default();
    if super::upgrade::is_websocket(req.headers()) {
        let command = !only_watches(req.method(), &rest);
        return super::upgrade::forward(
            &state,
            entry,
            (super::upgrade::Upstream::Guest, &format!("/v1{rest}")),
            command,
            &request_id,
            req,
        )
        .await;
    }
    let mut url = guest.join(&format!("/v1{rest}"));
    if let Some(q) = req.uri().query() {
        url.push('?');
        url.push_str(q);
    }
    let method = req.method().clone();
    let deadline =
        (!is_stream(&method, &rest)).then(|| tokio::time::Instant::now() + state.forward_timeout);
    let headers = req.headers().clone();
    // Through the endpoint the runtime answered: its headers (a vendor
    // proxy's token), then the guest's own credential.
    let mut rb = guest
        .apply(state.http(guest).request(method, &url))
        .bearer_auth(&record.secret)
        .header("x-request-id", &request_id);
    for name in FORWARD_REQUEST {
        if let Some(v) = headers.get(name) {
            rb = rb.header(name, v);
        }
    }
    let length = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let body = req.into_body();
    rb = match length {
        Some(0) => rb,
        Some(n) if n <= SMALL_BODY => {
            let bytes = axum::body::to_bytes(body, SMALL_BODY).await.map_err(|e| {
                Error::from(ApiError::invalid(format!("cannot read the body: {e}")))
            })?;
            rb.body(bytes)
        }
        _ => rb.body(reqwest::Body::wrap_stream(body.into_data_stream())),
    };
    // A box removed (at its deadline, say), stopped or paused while the
    // request runs ends the request: removal never waits for a request.
    let mut state_rx = entry.subscribe();
    let left = async move {
        let _ = state_rx.wait_for(|s| *s != BoxState::Running).await;
    };
    let timed_out = || {
        Error::from(
            ApiError::new(
                ErrorCode::Timeout,
                format!(
                    "the agent in box {id} did not answer within {} seconds",
                    state.forward_timeout.as_secs()
                ),
            )
            .with_hint("a request that is not a stream must be answered whole in that time"),
        )
    };
    let until_deadline = async move {
        match deadline {
            Some(d) => tokio::time::sleep_until(d).await,
            None => std::future::pending().await,
        }
    };
    let response = tokio::select! {
        () = until_deadline => return Err(timed_out()),
        r = rb.send() => r.map_err(|e| {
            tracing::warn!(box_id = %id, error = %e.without_url(), "the guest did not answer");
            Error::from(service::Error::GuestDown { id: id.to_string(), part: Part::Agent, late: false })
        })?,
        () = left => {
            let now = entry.record();
            let mut e = ApiError::new(
                ErrorCode::NotRunning,
                format!("box {id} left running while the request ran: it is {}", now.state),
            )
            .with_kind(ErrorDetails::BoxNotRunning { box_id: id.to_string(), state: now.state });
            if let Some(reason) = now.reason {
                e = e.with_hint(reason);
            }
            return Err(e.into());
        }
    };
    let mut out = Response::builder().status(response.status().as_u16());
    let headers_out: &mut HeaderMap = out.headers_mut().expect("a fresh builder has headers");
    for (name, value) in response.headers() {
        if keep_response_header(name) {
            headers_out.insert(name.clone(), value.clone());
        }
    }
    let stream = response.bytes_stream().map_err(std::io::Error::other);
    let body = match deadline {
        None => Body::from_stream(stream),
        Some(d) => Body::from_stream(until(stream, d)),
    };
    out.body(body).map_err(Error::internal)
}

/// A removed box's recordings, from what the server kept when it was
/// removed: its listing at `/recordings`, a file at `/recordings/{file}`.
/// `None` while the box is not removed, or for any other route.
async fn kept_recordings(
    state: &AppState,
    id: &str,
    rest: &str,
) -> Result<Option<Response>, Error> {
    let Some(tail) = rest.strip_prefix("/recordings") else { return Ok(None) };
    let removed = match state.service.get(id) {
        Ok(entry) => entry.record().state == BoxState::Removed,
        Err(_) => true,
    };
    let Some(listed) = removed.then(|| state.service.kept_recordings(id)).flatten() else {
        return Ok(None);
    };
    if tail.is_empty() {
        let page = holm_proto::guest::Page::all(listed);
        return Ok(Some(axum::response::IntoResponse::into_response(axum::Json(page))));
    }
    let file = tail.trim_start_matches('/');
    let path = state.service.kept_recording(id, file).map_err(Error::from)?;
    let f = tokio::fs::File::open(&path).await.map_err(Error::internal)?;
    let len = f.metadata().await.map_err(Error::internal)?.len();
    let body = Body::from_stream(tokio_util::io::ReaderStream::new(f));
    let out = Response::builder()
        .header(header::CONTENT_TYPE, holm_proto::recording::VIDEO_MIME)
        .header(header::CONTENT_LENGTH, len)
        .body(body)
        .map_err(Error::internal)?;
    Ok(Some(out))
}

/// `stream`, ended with an error at `deadline`: an answer that is not a
/// stream must be whole by then.
fn until<S>(
    stream: S,
    deadline: tokio::time::Instant,
) -> impl futures_util::Stream<Item = Result<bytes::Bytes, std::io::Error>>
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, std::io::Error>> + Send + Unpin,
{
    futures_util::stream::unfold(Some(stream), move |s| async move {
        let mut s = s?;
        tokio::select! {
            item = futures_util::StreamExt::next(&mut s) => item.map(|i| (i, Some(s))),
            () = tokio::time::sleep_until(deadline) => Some((
                Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "the forward timeout passed")),
                None,
            )),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watching_is_not_activity() {
        assert!(only_watches(&Method::GET, "/screens/0/screenshot"));
        assert!(only_watches(&Method::GET, "/screens/0/cursor"));
        assert!(only_watches(&Method::GET, "/screens/0"));
        assert!(only_watches(&Method::GET, "/info"));
        assert!(!only_watches(&Method::POST, "/screens/0/input"));
        assert!(!only_watches(&Method::POST, "/commands/run"));
        assert!(!only_watches(&Method::GET, "/files/content"));
        assert!(only_watches(&Method::GET, "/browser/screenshot"));
        assert!(!only_watches(&Method::POST, "/browser/click"));
    }

    #[test]
    fn streams_are_not_bounded_and_the_rest_is() {
        assert!(is_stream(&Method::POST, "/commands/stream"));
        assert!(is_stream(&Method::POST, "/commands/run"));
        assert!(is_stream(&Method::GET, "/processes/p_1/output"));
        assert!(is_stream(&Method::POST, "/processes/p_1/stdin"));
        assert!(is_stream(&Method::PUT, "/files/content"));
        assert!(is_stream(&Method::GET, "/files/content"));
        assert!(!is_stream(&Method::POST, "/screens/0/input"));
        assert!(!is_stream(&Method::GET, "/screens/0/screenshot"));
        assert!(!is_stream(&Method::POST, "/browser/navigate"));
        assert!(!is_stream(&Method::GET, "/processes/p_1"));
        assert!(!is_stream(&Method::POST, "/processes/p_1/signal"));
    }
}
