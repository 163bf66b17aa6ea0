//! The terminal: `GET /v1/terminal` with `Upgrade: websocket`.
//!
//! Everything that can be refused is refused before the upgrade, as an HTTP
//! answer in the one error shape: a request that is not a WebSocket, a bad
//! query, a program that cannot start. Then the answer is `101` and the
//! session runs on the upgraded connection ([`crate::exec::terminal`]).

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use holm_proto::terminal::TerminalQuery;
use holm_proto::{ApiError, ErrorCode};
use hyper_util::rt::TokioIo;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::AppState;
use super::error::Error;
use super::extract::StrictQuery;

/// The `Sec-WebSocket-Key` of a WebSocket upgrade request, or why it is not
/// one.
pub fn websocket_key(headers: &HeaderMap) -> Result<String, Error> {
    let has = |name: header::HeaderName, want: &str| {
        headers.get_all(name).iter().any(|v| {
            v.to_str().is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(want)))
        })
    };
    let version = headers.get(header::SEC_WEBSOCKET_VERSION).and_then(|v| v.to_str().ok());
    let key = headers.get(header::SEC_WEBSOCKET_KEY).and_then(|v| v.to_str().ok());
    match key {
        Some(key)
            if has(header::UPGRADE, "websocket")
                && has(header::CONNECTION, "upgrade")
                && version == Some("13") =>
        {
            Ok(key.to_owned())
        }
        _ => Err(ApiError::new(
            ErrorCode::InvalidRequest,
            "this route is a WebSocket: open it with Upgrade: websocket (version 13)",
        )
        .with_hint("use a WebSocket client, `holm shell BOX`, or BoxClient::terminal")
        .into()),
    }
}

pub(super) async fn open(
    State(state): State<AppState>,
    StrictQuery(query): StrictQuery<TerminalQuery>,
    mut req: Request,
) -> Result<Response, Error> {
    let key = websocket_key(req.headers())?;
    let session = state.processes.open_terminal(&query).await?;
    let upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        match upgrade.await {
            Ok(io) => {
                let ws =
                    WebSocketStream::from_raw_socket(TokioIo::new(io), Role::Server, None).await;
                crate::exec::terminal::serve(ws, session).await;
            }
            Err(e) => {
                tracing::debug!(error = %e, "a terminal upgrade failed");
                // Dropping the session hangs nothing up by itself: end it.
                session.abandon();
            }
        }
    });
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::UPGRADE, "websocket")
        .header(header::CONNECTION, "Upgrade")
        .header(header::SEC_WEBSOCKET_ACCEPT, derive_accept_key(key.as_bytes()))
        .body(Body::empty())
        .map_err(Error::internal)
}
