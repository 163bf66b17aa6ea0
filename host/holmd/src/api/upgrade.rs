//! Forwarding a WebSocket to a box's guest: the one path for every upgrade
//! holmd passes on (the terminal and other guest routes; the viewers' RFB
//! streams on the viewer port).
//!
//! The upgrade is made with the guest first, at the endpoint its runtime
//! answered (with that endpoint's headers, so a vendor's proxy passes it,
//! and the box secret), with the client's `Sec-WebSocket-*` headers. A
//! refusal (a bad query, a box not running) is answered as it is, in the
//! one error shape. Once the guest switches protocols, the client's
//! connection is switched with the guest's `Sec-WebSocket-Accept` and the
//! bytes flow both ways as they are: no frame is parsed. The connection
//! ends when either side closes it or the box leaves `running`. Bytes from
//! the client move an idle deadline (at most every few seconds) when the
//! route is a command.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use holm_http::Error;
use holm_proto::host::BoxState;
use hyper_util::rt::TokioIo;

use super::AppState;
use super::viewers::no_viewer_port;
use crate::service::state::{Entry, require_running};
use crate::service::{self, Part};

/// The client's headers a WebSocket upgrade passes to the guest.
const UPGRADE_REQUEST: &[header::HeaderName] = &[
    header::SEC_WEBSOCKET_KEY,
    header::SEC_WEBSOCKET_VERSION,
    header::SEC_WEBSOCKET_PROTOCOL,
    header::SEC_WEBSOCKET_EXTENSIONS,
];

/// The guest's headers a switch passes back to the client.
const UPGRADE_RESPONSE: &[header::HeaderName] = &[
    header::SEC_WEBSOCKET_ACCEPT,
    header::SEC_WEBSOCKET_PROTOCOL,
    header::SEC_WEBSOCKET_EXTENSIONS,
];

/// How often client traffic may move the idle deadline.
const TOUCH_EVERY: Duration = Duration::from_secs(5);

/// Whether a request asks for a WebSocket.
pub fn is_websocket(headers: &HeaderMap) -> bool {
    let has = |name: header::HeaderName, want: &str| {
        headers.get_all(name).iter().any(|v| {
            v.to_str().is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(want)))
        })
    };
    has(header::UPGRADE, "websocket") && has(header::CONNECTION, "upgrade")
}

/// Which of a box's listeners an upgrade goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Upstream {
    /// The guest's API, with the box secret.
    Guest,
    /// The viewer port, where the URL's own token is checked: never with
    /// the box secret, which would let any URL act as the server.
    Viewer,
}

/// Forwards the WebSocket `req` to the route at `path` (with the request's
/// query) of `upstream` in the box `entry`, which must be running.
pub(super) async fn forward(
    state: &AppState,
    entry: Arc<Entry>,
    (upstream, path): (Upstream, &str),
    command: bool,
    request_id: &str,
    mut req: Request,
) -> Result<Response, Error> {
    let record = entry.record();
    require_running(&record)?;
    let id = record.id.clone();
    let endpoint = match upstream {
        Upstream::Guest => record
            .guest
            .as_ref()
            .ok_or_else(|| Error::internal(format!("running box {id} has no guest address")))?,
        Upstream::Viewer => record.viewer.as_ref().ok_or_else(|| no_viewer_port(&id))?,
    };
    if command {
        state.service.touch(&entry);
    }
    let mut url = endpoint.join(path);
    if let Some(q) = req.uri().query() {
        url.push('?');
        url.push_str(q);
    }
    let mut rb = endpoint.apply(state.http(endpoint).get(&url));
    if upstream == Upstream::Guest {
        rb = rb.bearer_auth(&record.secret);
    }
    let mut rb = rb
        .header("x-request-id", request_id)
        .header(header::CONNECTION, "Upgrade")
        .header(header::UPGRADE, "websocket");
    for name in UPGRADE_REQUEST {
        if let Some(v) = req.headers().get(name) {
            rb = rb.header(name, v);
        }
    }
    let client_side = hyper::upgrade::on(&mut req);
    let answer = rb.send().await.map_err(|e| {
        tracing::warn!(box_id = %id, error = %e.without_url(), "the guest did not answer an upgrade");
        Error::from(service::Error::GuestDown { id: id.clone(), part: Part::Agent, late: false })
    })?;
    if answer.status() != reqwest::StatusCode::SWITCHING_PROTOCOLS {
        // The guest's refusal, in the one error shape: passed on as JSON
        // only (a box does not choose what type holmd answers), bounded.
        let status = answer.status().as_u16();
        let body = answer.bytes().await.unwrap_or_default();
        if body.len() > 64 * 1024 || serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_err()
        {
            tracing::debug!(box_id = %id, status, "a refused upgrade's answer is not JSON");
            return Err(service::Error::GuestDown { id, part: Part::Agent, late: false }.into());
        }
        let mut out =
            Response::builder().status(status).body(Body::from(body)).map_err(Error::internal)?;
        holm_http::viewer_page::secure_headers(&mut out);
        out.headers_mut()
            .insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
        return Ok(out);
    }
    let mut out = Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::CONNECTION, "Upgrade")
        .header(header::UPGRADE, "websocket");
    for name in UPGRADE_RESPONSE {
        if let Some(v) = answer.headers().get(name) {
            out = out.header(name, v.clone());
        }
    }
    let service = Arc::clone(&state.service);
    tokio::spawn(async move {
        let (client, guest) = match tokio::join!(client_side, answer.upgrade()) {
            (Ok(c), Ok(g)) => (c, g),
            (c, g) => {
                tracing::debug!(box_id = %id, client = c.is_ok(), guest = g.is_ok(), "an upgrade failed");
                return;
            }
        };
        let sent = Arc::new(AtomicU64::new(0));
        // Counts the bytes read from the client.
        let mut client = holm_http::tracked::Tracked::new(TokioIo::new(client), Arc::clone(&sent));
        let mut guest = guest;
        let mut state_rx = entry.subscribe();
        let left = async move {
            let _ = state_rx.wait_for(|s| *s != BoxState::Running).await;
        };
        let touches = async {
            let mut seen = 0;
            loop {
                tokio::time::sleep(TOUCH_EVERY).await;
                let now = sent.load(Ordering::Relaxed);
                if command && now != seen {
                    service.touch(&entry);
                }
                seen = now;
            }
        };
        tokio::select! {
            _ = tokio::io::copy_bidirectional(&mut client, &mut guest) => {}
            () = left => tracing::debug!(box_id = %id, "the box left running: its WebSocket ends"),
            () = touches => {}
        }
    });
    out.body(Body::empty()).map_err(Error::internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn websocket_requests_are_told_apart() {
        let mut h = HeaderMap::new();
        assert!(!is_websocket(&h));
        h.insert(header::UPGRADE, "WebSocket".parse().unwrap());
        h.insert(header::CONNECTION, "keep-alive, Upgrade".parse().unwrap());
        assert!(is_websocket(&h));
        h.insert(header::UPGRADE, "h2c".parse().unwrap());
        assert!(!is_websocket(&h));
    }
}
