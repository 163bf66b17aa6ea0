//! Forwarding a box's routes to its guest: `/v1/boxes/{id}/REST` goes to the
//! guest's `/v1/REST` with the box secret, the same method, query and body,
//! and the caller's request id. Bodies stream both ways.

use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, Method, header};
use axum::response::Response;
use futures_util::TryStreamExt;
use holm_http::{Error, RequestId};
use holm_proto::host::BoxState;
use holm_proto::{ApiError, ErrorCode};

use super::AppState;

/// Bodies up to this size are read whole and sent with a length, which is
/// faster for the small JSON bodies of input and commands.
const SMALL_BODY: usize = 64 * 1024;

/// The client that forwards to guests: pooled, no proxy, no timeout of its
/// own (commands and streams may run long).
pub(super) fn client() -> reqwest::Client {
    holm_client::client_builder()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_idle_timeout(Duration::from_secs(90))
        .connect_timeout(Duration::from_secs(5))
        .build()
        .expect("a TLS provider is installed")
}

/// Request headers passed to the guest.
const FORWARD_REQUEST: &[HeaderName] =
    &[header::CONTENT_TYPE, header::ACCEPT, header::IF_NONE_MATCH];

/// Response headers passed back.
fn keep_response_header(name: &HeaderName) -> bool {
    name == header::CONTENT_TYPE
        || name == header::CONTENT_LENGTH
        || name == header::ETAG
        || name == header::CACHE_CONTROL
        || name.as_str().starts_with("x-holm-")
}

/// Whether a request only watches the box: watching does not move an idle
/// deadline, commands do.
fn only_watches(method: &Method, rest: &str) -> bool {
    method == Method::GET
        && (rest == "/info"
            || rest.starts_with("/browser/")
            || rest == "/screens"
            || (rest.starts_with("/screens/")
                && (rest.ends_with("/screenshot")
                    || rest.ends_with("/cursor")
                    || rest.matches('/').count() == 2)))
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
    let entry = state.service.get(id)?;
    let record = entry.record();
    match record.state {
        BoxState::Running => {}
        BoxState::Creating | BoxState::Starting => {
            return Err(ApiError::new(ErrorCode::NotReady, format!("box {id} is still starting"))
                .with_hint(format!("wait with GET /v1/boxes/{id}?wait_for=running"))
                .into());
        }
        BoxState::Unreachable => {
            return Err(ApiError::new(
                ErrorCode::GuestUnreachable,
                format!(
                    "box {id} is unreachable: {}",
                    record.reason.as_deref().unwrap_or("no reason known")
                ),
            )
            .into());
        }
        other => {
            let state_name =
                serde_json::to_value(other).ok().and_then(|v| v.as_str().map(str::to_owned));
            let mut e = ApiError::new(
                ErrorCode::NotRunning,
                format!("box {id} is {}", state_name.as_deref().unwrap_or("not running")),
            )
            .with_details(serde_json::json!({ "box_id": id, "state": other }));
            if let Some(reason) = &record.reason {
                e = e.with_hint(reason.clone());
            }
            return Err(e.into());
        }
    }
    let Some(guest_url) = record.guest_url.as_deref() else {
        return Err(Error::internal(format!("running box {id} has no guest address")));
    };
    if !only_watches(req.method(), &rest) {
        state.service.touch(&entry);
    }
    let request_id = req.extensions().get::<RequestId>().map(|r| r.0.clone()).unwrap_or_default();
    let mut url = format!("{guest_url}/v1{rest}");
    if let Some(q) = req.uri().query() {
        url.push('?');
        url.push_str(q);
    }
    let method = req.method().clone();
    let headers = req.headers().clone();
    let mut rb = state
        .http
        .request(method, &url)
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
    let response = tokio::select! {
        r = rb.send() => r.map_err(|e| {
            tracing::warn!(box_id = %id, error = %e, "the guest did not answer");
            Error::from(
                ApiError::new(
                    ErrorCode::GuestUnreachable,
                    format!("the agent in box {id} did not answer"),
                )
                .with_hint("the box may be stopping; GET the box to see its state"),
            )
        })?,
        () = left => {
            let now = entry.record();
            let mut e = ApiError::new(
                ErrorCode::NotRunning,
                format!("box {id} left running while the request ran: it is {}", serde_json::to_value(now.state).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()),
            )
            .with_details(serde_json::json!({ "box_id": id, "state": now.state }));
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
    out.body(Body::from_stream(stream)).map_err(Error::internal)
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
}
