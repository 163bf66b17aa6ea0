//! The viewer port: every screen's page, its assets, and its RFB stream over
//! WebSocket, carried by the guest itself (no websockify).
//!
//! | path | what |
//! |---|---|
//! | `GET /{screen}/view`, `GET /{screen}/takeover` | the page (the token is in the URL's fragment, which no server sees) |
//! | `GET /{screen}/{view,takeover}/session` | what the page shows: the box, the screen, the handoff (token as `Authorization: Bearer`) |
//! | `POST /{screen}/takeover/control` | hand control back, or take it again |
//! | `GET /{screen}/{view,takeover}/rfb` | the RFB stream: a WebSocket whose subprotocols are `holm-rfb.v1` and `holm-token.<token>` (or the token as a bearer header) |
//! | `GET /assets/...`, `GET /novnc/...` | the page's script and style, and noVNC: the bytes [`holm_http::viewer_page`] embeds, never files from the box's disk |
//!
//! A watch-only connection's input messages are dropped here, where the
//! stream is served, whatever the page sends.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::{SinkExt, StreamExt};
use holm_http::StrictJson;
use holm_http::viewer_token::Claims;
use holm_proto::viewer::{
    ControlAction, ControlRequest, RFB_PROTOCOL, TOKEN_PROTOCOL_PREFIX, ViewerMode, ViewerSession,
};
use holm_proto::{ApiError, ErrorCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};

use super::rfb::{ClientStream, Kind};
use super::state::{Connection, Viewers};
use super::watch::{ServerStream, watch_encodings};
use holm_http::error::Error;

/// What the viewer port's handlers reach.
#[derive(Clone, Debug)]
pub struct ViewerState {
    /// The grants, connections and handoff.
    pub viewers: Arc<Viewers>,
    /// Screen `i`'s VNC server listens on loopback `vnc_port_base + i`.
    pub vnc_port_base: u16,
    /// The address VNC connections of watch-only viewers come from.
    pub view_source: std::net::IpAddr,
    /// Starts a screen's VNC server when its first viewer asks.
    pub supervisor: Arc<crate::supervisor::Supervisor>,
    /// On X11 (x11vnc): the held client per watched screen, and every
    /// stream's connection sends its version at once ([`super::keeper`]).
    pub keeper: Option<Arc<super::keeper::Keeper>>,
}

/// How long a viewer's stream waits for its screen's VNC server to start.
const VNC_START: Duration = Duration::from_secs(30);

/// The viewer port's router.
pub fn router(state: ViewerState) -> Router {
    Router::new()
        .route("/{screen}/{mode}", get(page))
        .route("/{screen}/{mode}/session", get(session))
        .route("/{screen}/{mode}/control", post(control))
        .route("/{screen}/{mode}/rfb", get(rfb))
        .route("/assets/{*path}", get(asset))
        .route("/novnc/{*path}", get(asset))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
        .layer(middleware::from_fn(holm_http::request_id))
}

async fn not_found(req: Request) -> Error {
    holm_http::route_not_found(req.method(), req.uri().path())
        .hint("a viewer page is /SCREEN/view or /SCREEN/takeover, with its token after #")
}

async fn method_not_allowed(req: Request) -> Error {
    holm_http::method_not_allowed(req.method(), req.uri().path())
}

/// Reads `/{screen}/{view|takeover}`.
fn place(screen: &str, mode: &str) -> Result<(u8, ViewerMode), Error> {
    let mode = match mode {
        "view" => ViewerMode::View,
        "takeover" => ViewerMode::Control,
        other => {
            return Err(ApiError::new(
                ErrorCode::RouteNotFound,
                format!("{other:?} is not a viewer: use view or takeover"),
            )
            .into());
        }
    };
    let screen = screen.parse::<u8>().map_err(|_| {
        Error::from(ApiError::new(
            ErrorCode::NotFound,
            format!("{screen:?} is not a screen number (0-based)"),
        ))
    })?;
    Ok((screen, mode))
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
}

fn secure_headers(response: &mut Response) {
    holm_http::viewer_page::secure_headers(response);
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(holm_http::viewer_page::STATIC_CSP),
    );
}

async fn page(UrlPath((screen, mode)): UrlPath<(String, String)>) -> Result<Response, Error> {
    place(&screen, &mode)?;
    Ok(holm_http::viewer_page::page_response())
}

/// `GET /assets/...` and `GET /novnc/...`: what the guest binary carries.
async fn asset(req: Request) -> Result<Response, Error> {
    let path = req.uri().path().trim_start_matches('/');
    holm_http::viewer_page::asset_response(path).ok_or_else(|| {
        Error::from(ApiError::new(ErrorCode::NotFound, format!("no viewer asset {path:?}")))
    })
}

fn session_of(state: &ViewerState, claims: &Claims) -> ViewerSession {
    let (box_id, title) = state.viewers.title().unwrap_or_default();
    let expires_at = if claims.expires == u64::MAX {
        String::new()
    } else {
        humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(claims.expires))
            .to_string()
    };
    ViewerSession {
        title,
        box_id,
        screen: claims.screen,
        mode: claims.mode,
        grant: claims.grant.clone(),
        expires_at,
        released: state.viewers.released(&claims.grant),
        handoff: state.viewers.handoff(),
    }
}

async fn session(
    State(state): State<ViewerState>,
    UrlPath((screen, mode)): UrlPath<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, Error> {
    let (screen, mode) = place(&screen, &mode)?;
    let claims = state.viewers.authorize(bearer(&headers), screen, mode)?;
    // The page asks for its session first, and for its stream a moment
    // later: the VNC server starts now, so the stream finds it up.
    state.supervisor.demand(screen);
    let mut r = axum::Json(session_of(&state, &claims)).into_response();
    secure_headers(&mut r);
    Ok(r)
}

async fn control(
    State(state): State<ViewerState>,
    UrlPath((screen, mode)): UrlPath<(String, String)>,
    headers: HeaderMap,
    StrictJson(req): StrictJson<ControlRequest>,
) -> Result<Response, Error> {
    let (screen, mode) = place(&screen, &mode)?;
    if mode != ViewerMode::Control {
        return Err(ApiError::new(ErrorCode::Forbidden, "a watch-only viewer cannot take control")
            .with_hint("open the takeover URL")
            .into());
    }
    let claims = state.viewers.authorize(bearer(&headers), screen, mode)?;
    state.viewers.set_released(&claims, req.action == ControlAction::Release);
    let mut r = axum::Json(session_of(&state, &claims)).into_response();
    secure_headers(&mut r);
    Ok(r)
}

/// The subprotocols offered, in order.
fn protocols(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect()
}

async fn rfb(
    State(state): State<ViewerState>,
    UrlPath((screen, mode)): UrlPath<(String, String)>,
    mut req: Request,
) -> Result<Response, Error> {
    let (screen, mode) = place(&screen, &mode)?;
    let headers = req.headers();
    let upgrade = headers
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let key = headers.get(header::SEC_WEBSOCKET_KEY).map(|k| k.as_bytes().to_vec());
    let (true, Some(key)) = (upgrade, key) else {
        return Err(ApiError::new(ErrorCode::InvalidRequest, "the RFB stream is a WebSocket")
            .with_hint("connect with Upgrade: websocket")
            .into());
    };
    let offered = protocols(headers);
    let token = offered
        .iter()
        .find_map(|p| p.strip_prefix(TOKEN_PROTOCOL_PREFIX))
        .map(str::to_owned)
        .or_else(|| bearer(headers).map(str::to_owned));
    let claims = state.viewers.authorize(token.as_deref(), screen, mode)?;
    let port = state.vnc_port_base + u16::from(screen);
    let source = if mode == ViewerMode::View {
        state.view_source
    } else {
        std::net::Ipv4Addr::LOCALHOST.into()
    };
    if !state.supervisor.wait_demanded(screen, VNC_START).await {
        tracing::info!(screen, "the screen's VNC server did not start in time");
    }
    let hold = match &state.keeper {
        Some(keeper) => Some(keeper.hold(screen, state.view_source, port).await),
        None => None,
    };
    let early = hold.is_some();
    let vnc = connect_vnc(source, port, early).await.map_err(|e| {
        tracing::info!(screen, error = %e, "the screen's VNC server did not answer");
        Error::from(
            ApiError::new(
                ErrorCode::NotReady,
                format!("the VNC server of screen {screen} is not answering"),
            )
            .with_hint("it may be starting or restarting; GET /health on the guest shows it"),
        )
    })?;
    let chosen = [RFB_PROTOCOL, "binary"].into_iter().find(|p| offered.iter().any(|o| o == p));
    let client = hyper::upgrade::on(&mut req);
    let connection = state.viewers.open(claims);
    tracing::debug!(screen, %mode, grant = %connection.claims.grant, "viewer connected");
    tokio::spawn(async move {
        match client.await {
            Ok(upgraded) => {
                let config = WebSocketConfig::default().max_message_size(Some(8 << 20));
                let ws = WebSocketStream::from_raw_socket(
                    TokioIo::new(upgraded),
                    Role::Server,
                    Some(config),
                )
                .await;
                pump(&state.viewers, connection, ws, (vnc, early)).await;
                drop(hold);
            }
            Err(e) => tracing::debug!(error = %e, "a viewer's upgrade failed"),
        }
    });
    let mut response = Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::UPGRADE, "websocket")
        .header(header::CONNECTION, "Upgrade")
        .header(
            header::SEC_WEBSOCKET_ACCEPT,
            tokio_tungstenite::tungstenite::handshake::derive_accept_key(&key),
        );
    if let Some(p) = chosen {
        response = response.header(header::SEC_WEBSOCKET_PROTOCOL, p);
    }
    response.body(Body::empty()).map_err(Error::internal)
}

/// Connects to a screen's VNC server from `source`; with `early`, sends the
/// client's version at once ([`super::keeper::VERSION`]).
pub(super) async fn connect_vnc(
    source: std::net::IpAddr,
    port: u16,
    early: bool,
) -> std::io::Result<tokio::net::TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind((source, 0).into())?;
    let stream = tokio::time::timeout(
        Duration::from_secs(5),
        socket.connect((std::net::Ipv4Addr::LOCALHOST, port).into()),
    )
    .await
    .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out"))??;
    let _ = stream.set_nodelay(true);
    if early {
        let mut stream = stream;
        stream.write_all(super::keeper::VERSION).await?;
        return Ok(stream);
    }
    Ok(stream)
}

/// Why a connection ended, as its close frame says.
fn close(code: CloseCode, reason: &str) -> Message {
    Message::Close(Some(CloseFrame { code, reason: reason.to_owned().into() }))
}

/// Carries bytes between the viewer's WebSocket and the VNC server, passing
/// each client message through the RFB reader. With `early` the guest sent
/// the client's version when it connected: the viewer's own is checked
/// against it and not passed on.
async fn pump<S>(
    viewers: &Viewers,
    connection: Connection,
    ws: WebSocketStream<S>,
    (vnc, early): (tokio::net::TcpStream, bool),
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use std::sync::atomic::Ordering::Relaxed;
    let (mut sink, mut stream) = ws.split();
    let (mut vnc_read, mut vnc_write) = vnc.into_split();
    let mut client = ClientStream::new();
    // A watcher gets the server's stream without the box's clipboard.
    let mut watcher = (connection.claims.mode != ViewerMode::Control).then(ServerStream::new);
    let mut sent_version = early;
    if let (true, Some(w)) = (early, watcher.as_mut()) {
        w.client_sent(super::keeper::VERSION);
    }
    // With `early` the server goes on past its version before the viewer
    // answered it; a viewer (noVNC) reads the next step only after its
    // answer, so what comes after the version waits here until then: how
    // much of the version is still to pass, and what waits.
    let mut held_back: Option<(usize, Vec<u8>)> = early.then(|| (12, Vec::new()));
    let mut buf = vec![0u8; 64 * 1024];
    let expires = connection.claims.expires.saturating_sub(holm_http::viewer_token::now_secs());
    let expiry = tokio::time::sleep(Duration::from_secs(expires.min(366 * 86_400)));
    tokio::pin!(expiry);
    let counters = std::sync::Arc::clone(&connection.counters);
    let ended = connection.ended.clone();
    let mut expired = false;
    loop {
        tokio::select! {
            () = ended.cancelled() => {
                let _ = sink.send(close(CloseCode::Policy, "this viewer URL was revoked, or the box has a new desktop")).await;
                break;
            }
            () = &mut expiry => {
                expired = true;
                let _ = sink.send(close(CloseCode::Policy, "this viewer URL has expired")).await;
                break;
            }
            read = vnc_read.read(&mut buf) => {
                let n = match read { Ok(0) | Err(_) => break, Ok(n) => n };
                counters.bytes_out.fetch_add(n as u64, Relaxed);
                let out = match watcher.as_mut().map(|w| w.feed(&buf[..n])) {
                    None => buf[..n].to_vec(),
                    Some(Ok(out)) => out,
                    Some(Err(e)) => {
                        tracing::info!(error = %e, "a watcher's stream was ended");
                        let _ = sink.send(close(CloseCode::Protocol, &e.0)).await;
                        break;
                    }
                };
                let out = match held_back.as_mut() {
                    None => out,
                    Some((version_left, waiting)) => {
                        let n = (*version_left).min(out.len());
                        *version_left -= n;
                        waiting.extend_from_slice(&out[n..]);
                        out[..n].to_vec()
                    }
                };
                if !out.is_empty() && sink.send(Message::binary(out)).await.is_err() {
                    break;
                }
            }
            message = stream.next() => {
                let data = match message {
                    Some(Ok(Message::Binary(data))) => data,
                    Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
                    Some(Ok(Message::Text(_))) => {
                        let _ = sink.send(close(CloseCode::Unsupported, "the RFB stream is binary")).await;
                        break;
                    }
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                };
                counters.bytes_in.fetch_add(data.len() as u64, Relaxed);
                let messages = match client.feed(&data) {
                    Ok(m) => m,
                    Err(e) => {
                        tracing::info!(error = %e, "a viewer's stream was refused");
                        let _ = sink.send(close(CloseCode::Protocol, &e.0)).await;
                        break;
                    }
                };
                let mut out = Vec::with_capacity(data.len());
                let mut messages = messages.into_iter().peekable();
                if sent_version && messages.peek().is_some() {
                    sent_version = false;
                    let version = messages.next().map(|m| m.bytes).unwrap_or_default();
                    if version != super::keeper::VERSION {
                        let why = "this stream speaks RFB 3.8: answer the server's version with it";
                        tracing::info!(version = %String::from_utf8_lossy(&version), "a viewer's stream was refused");
                        let _ = sink.send(close(CloseCode::Protocol, why)).await;
                        break;
                    }
                    let waiting = held_back.take().map(|(_, w)| w).unwrap_or_default();
                    if !waiting.is_empty() && sink.send(Message::binary(waiting)).await.is_err() {
                        break;
                    }
                }
                for m in messages {
                    if m.kind == Kind::Input && !viewers.admit_input(&connection) {
                        counters.dropped.fetch_add(1, Relaxed);
                        continue;
                    }
                    match watcher.as_mut() {
                        Some(w) => {
                            w.client_sent(&m.bytes);
                            out.extend(watch_encodings(&m.bytes));
                        }
                        None => out.extend_from_slice(&m.bytes),
                    }
                }
                if !out.is_empty() && vnc_write.write_all(&out).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = sink.close().await;
    tracing::debug!(grant = %connection.claims.grant, expired, "viewer disconnected");
    connection.finish(expired);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_name_a_screen_and_a_mode() {
        assert_eq!(place("0", "view").unwrap(), (0, ViewerMode::View));
        assert_eq!(place("2", "takeover").unwrap(), (2, ViewerMode::Control));
        assert!(place("x", "view").is_err());
        assert!(place("0", "control").is_err());
    }
}
