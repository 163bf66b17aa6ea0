//! WebSockets count in a listener's connection limit (review L5): a
//! WebSocket holds its place from its upgrade until it closes, so one
//! viewer-link holder cannot open streams past the limit.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use axum::routing::get;
use futures_util::StreamExt;
use holm_http::serve::{Limits, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::{WebSocketStream, client_async};

/// A WebSocket that reads until the client closes it, as holmd's viewer
/// stream and terminal do.
async fn ws(mut req: Request) -> Response {
    let key = req.headers()["sec-websocket-key"].as_bytes().to_vec();
    let upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        let io = hyper_util::rt::TokioIo::new(upgrade.await.unwrap());
        let mut ws = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
        while let Some(Ok(_)) = ws.next().await {}
    });
    Response::builder()
        .status(101)
        .header("connection", "upgrade")
        .header("upgrade", "websocket")
        .header("sec-websocket-accept", derive_accept_key(&key))
        .body(Body::empty())
        .unwrap()
}

async fn health(addr: std::net::SocketAddr) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).await.unwrap();
    answer
}

#[tokio::test]
async fn websockets_beyond_the_limit_wait_until_one_closes() {
    let app = Router::new().route("/ws", get(ws)).route("/health", get(|| async { "ok" }));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let limits = Limits::with_connections(2);
    tokio::spawn(serve(listener, app, limits, std::future::pending()));

    // Two WebSockets, each past its upgrade: both places are held.
    let mut open = Vec::new();
    for _ in 0..2 {
        let tcp = TcpStream::connect(addr).await.unwrap();
        let (ws, answer) = client_async(format!("ws://{addr}/ws"), tcp).await.unwrap();
        assert_eq!(answer.status(), 101);
        open.push(ws);
    }
    // A third connection (a third WebSocket's, or any) is not served.
    let third = tokio::spawn(health(addr));
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!third.is_finished(), "served beyond the limit of two while two WebSockets are open");
    // One WebSocket closes: its place is free, and the third is served.
    let mut first = open.remove(0);
    first.close(None).await.unwrap();
    while first.next().await.is_some() {}
    drop(first);
    let answer = tokio::time::timeout(Duration::from_secs(10), third).await.unwrap().unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
