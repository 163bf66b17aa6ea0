//! The guest API's and the bridge's listener limits, against a real guest:
//! a client that sends half a request head is cut off at the header-read
//! timeout (30 s) on both, and connections beyond the API's limit wait for
//! a free place.

mod common;

use std::time::Duration;

use common::{Guest, Options};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn addr(url: &str) -> String {
    url.trim_start_matches("http://").to_owned()
}

/// Sends half a head and waits for the server to close the connection.
async fn cut_off(addr: String) -> bool {
    let mut s = TcpStream::connect(&addr).await.unwrap();
    s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n").await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), s.read_to_end(&mut buf)).await.is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_heads_are_cut_off_and_connections_are_limited() {
    let g = Guest::start(Options::default()).await;
    let (api, bridge) = (addr(&g.url), addr(&g.bridge_url));
    let (a, b) = tokio::join!(cut_off(api.clone()), cut_off(bridge));
    assert!(a, "the guest API kept a connection whose head never ended");
    assert!(b, "the bridge kept a connection whose head never ended");

    // Every place taken by a connection that sends nothing yet.
    let mut held = Vec::new();
    for _ in 0..holm_guest::API_CONNECTIONS {
        held.push(TcpStream::connect(&api).await.unwrap());
    }
    let one_more = {
        let api = api.clone();
        tokio::spawn(async move {
            let mut s = TcpStream::connect(&api).await.unwrap();
            s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                .await
                .unwrap();
            let mut out = Vec::new();
            s.read_to_end(&mut out).await.unwrap();
            String::from_utf8_lossy(&out).into_owned()
        })
    };
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!one_more.is_finished(), "a connection beyond the limit was served");
    drop(held.pop());
    let answer = tokio::time::timeout(Duration::from_secs(20), one_more).await.unwrap().unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
