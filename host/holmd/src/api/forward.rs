//! Forwarding a box's routes to its guest: `/v1/boxes/{id}/REST` goes to the
//! guest's `/v1/REST`, at the endpoint its runtime answered (with that
//! endpoint's headers), with the box secret, the same method, query and
//! body, and the caller's request id. Bodies stream both ways.
//!
//! holmd registers this handler once per forwarded guest route, handed that
//! route's record ([`GuestRoute`]): whether a request only watches the box
//! and whether it is a stream are the record's facts.
//!
//! A request that is not a stream ([`GuestRoute::stream`]) must be answered whole
//! within the forward timeout ([`DEFAULT_TIMEOUT`], ten minutes): a guest
//! that hangs cannot hold a request forever. Streams (a command's events, a
//! followed output, a command waited for, which may run a day, and file
//! contents of any size) have no overall limit; they end when the client
//! goes, when the box leaves `running`, or at the guest's own limits. The
//! edge refused dot segments before any route ran, so the guest's route is
//! the one that was checked here.

use std::time::Duration;

use axum::Extension;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, header};
use axum::response::Response;
use futures_util::TryStreamExt;
use holm_client::address::Addresses;
use holm_http::{Error, RequestId};
use holm_proto::contract::{self, GuestRoute};
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

/// Forwards a request of `route`, the guest route it was registered with
/// ([`super::doc::Api::forwarded`]): whether it watches and whether it is
/// a stream are the record's facts, not read from the path.
pub(super) async fn forward(
    State(state): State<AppState>,
    Extension(route): Extension<&'static GuestRoute>,
    req: Request,
) -> Result<Response, Error> {
    // The guest's path is the caller's with `/v1/boxes/{id}` taken out,
    // byte for byte (its parameters as the caller encoded them).
    let (id, rest) = split(req.uri().path());
    let id = super::box_path::parse(id)?;
    if let Some(kept) = kept_recordings(&state, &id, route, &rest).await? {
        return Ok(kept);
    }
    let entry = state.service.get(&id)?;
    let record = entry.record();
    require_running(&record)?;
    if let Some(refusal) = too_old(&id, route, record.guest_proto) {
        return Err(refusal.into());
    }
    let Some(guest) = record.guest.as_ref() else {
        return Err(Error::internal(format!("running box {id} has no guest address")));
    };
    if !route.watches {
        state.service.touch(&entry);
    }
    let request_id = req.extensions().get::<RequestId>().map(|r| r.0.clone()).unwrap_or_default();
    if super::upgrade::is_websocket(req.headers()) {
        return super::upgrade::forward(
            &state,
            entry,
            (super::upgrade::Upstream::Guest, &rest),
            !route.watches,
            &request_id,
            req,
        )
        .await;
    }
    let mut url = guest.join(&rest);
    if let Some(q) = req.uri().query() {
        url.push('?');
        url.push_str(q);
    }
    let method = req.method().clone();
    let deadline = (!route.stream).then(|| tokio::time::Instant::now() + state.forward_timeout);
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

/// The refusal of `route` for box `id`, whose guest speaks protocol
/// `proto` (as recorded on create or take-back): `None` when the guest
/// serves the route, or its protocol is not recorded.
fn too_old(id: &str, route: &GuestRoute, proto: Option<u32>) -> Option<ApiError> {
    let proto = proto.filter(|p| !route.served_by(*p))?;
    Some(
        ApiError::new(
            ErrorCode::Unsupported,
            format!(
                "the guest of box {id} speaks protocol {proto}; {} {} arrived in protocol {}",
                route.method, route.path, route.since
            ),
        )
        .with_hint("a new box runs this server's guest, which serves it"),
    )
}

/// A forwarded request's `path` as its box id and the guest's path: `/v1`
/// and what follows `/v1/boxes/{id}`, as the caller encoded it.
fn split(path: &str) -> (&str, String) {
    let tail = path.strip_prefix("/v1/boxes/").unwrap_or_default();
    let (id, rest) = tail.find('/').map_or((tail, ""), |i| (&tail[..i], &tail[i..]));
    (id, format!("/v1{rest}"))
}

/// A removed box's recordings, from what the server kept when it was
/// removed: its listing ([`contract::RECORDINGS`]), a file
/// ([`contract::RECORDING_FILE`]). `None` while the box is not removed, or
/// for any other route.
async fn kept_recordings(
    state: &AppState,
    id: &str,
    route: &GuestRoute,
    guest_path: &str,
) -> Result<Option<Response>, Error> {
    let listing = same(route, &contract::RECORDINGS.route);
    if !listing && !same(route, &contract::RECORDING_FILE) {
        return Ok(None);
    }
    let removed = match state.service.get(id) {
        Ok(entry) => entry.record().state == BoxState::Removed,
        Err(_) => true,
    };
    let Some(listed) = removed.then(|| state.service.kept_recordings(id)).flatten() else {
        return Ok(None);
    };
    if listing {
        let page = holm_proto::guest::Page::all(listed);
        return Ok(Some(axum::response::IntoResponse::into_response(axum::Json(page))));
    }
    // The route's last parameter, `{file}`.
    let file = guest_path.rsplit('/').next().unwrap_or_default();
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

/// Whether `a` and `b` are the same route.
fn same(a: &GuestRoute, b: &GuestRoute) -> bool {
    a.method == b.method && a.path == b.path
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

    fn route(method: contract::Method, rest: &str) -> &'static GuestRoute {
        GuestRoute::find(method, &format!("/v1{rest}")).unwrap()
    }

    #[test]
    fn watching_is_not_activity() {
        use contract::Method::{Get, Post};
        assert!(route(Get, "/screens/0/screenshot").watches);
        assert!(route(Get, "/screens/0/cursor").watches);
        assert!(route(Get, "/screens/0").watches);
        assert!(route(Get, "/info").watches);
        assert!(!route(Post, "/screens/0/input").watches);
        assert!(!route(Post, "/commands/run").watches);
        assert!(!route(Get, "/files/content").watches);
        assert!(route(Get, "/browser/screenshot").watches);
        assert!(!route(Post, "/browser/click").watches);
    }

    #[test]
    fn streams_are_not_bounded_and_the_rest_is() {
        use contract::Method::{Get, Post, Put};
        assert!(route(Post, "/commands/stream").stream);
        assert!(route(Post, "/commands/run").stream);
        assert!(route(Get, "/processes/p_1/output").stream);
        assert!(route(Post, "/processes/p_1/stdin").stream);
        assert!(route(Put, "/files/content").stream);
        assert!(route(Get, "/files/content").stream);
        assert!(!route(Post, "/screens/0/input").stream);
        assert!(!route(Get, "/screens/0/screenshot").stream);
        assert!(!route(Post, "/browser/navigate").stream);
        assert!(!route(Get, "/processes/p_1").stream);
        assert!(!route(Post, "/processes/p_1/signal").stream);
    }

    #[test]
    fn a_route_newer_than_the_boxs_guest_is_refused_in_the_one_shape() {
        let newer = contract::INFO.route.since(2);
        let e = too_old("box_a", &newer, Some(1)).unwrap();
        assert_eq!(e.code, ErrorCode::Unsupported);
        assert!(
            e.message.contains("protocol 1") && e.message.contains("/v1/info"),
            "{}",
            e.message
        );
        assert!(too_old("box_a", &newer, Some(2)).is_none());
        assert!(too_old("box_a", &newer, None).is_none());
        assert!(too_old("box_a", &contract::INFO.route, Some(1)).is_none());
    }

    #[test]
    fn the_guest_path_is_the_callers_after_the_box() {
        let (id, rest) = split("/v1/boxes/box_a/screens/0/input");
        assert_eq!((id, rest.as_str()), ("box_a", "/v1/screens/0/input"));
        let (_, rest) = split("/v1/boxes/box_a/recordings/a%20b");
        assert_eq!(rest, "/v1/recordings/a%20b");
    }
}
