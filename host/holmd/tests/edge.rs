//! holmd's web edge and its listener's limits, against a real holmd on a
//! loopback port, spoken to with raw HTTP as a browser or a slow client
//! would: what a page may send (a rebinding `Host`, a foreign `Origin`, a
//! `text/plain` body, dot segments) is refused in the one error shape before
//! any route or token check, on REST and on `/mcp`; a client that sends a
//! head slowly, or a body that stalls, is cut off; connections beyond the
//! limit wait.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use holm_http::serve::Limits;
use holmd::clock::SystemClock;
use holmd::service::Service;
use holmd::store::{self, StoreConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TOKEN: &str = "edge-test-token-0123456789";

struct Server {
    addr: std::net::SocketAddr,
    service: Arc<Service>,
    _dir: tempfile::TempDir,
}

async fn start(limits: Limits, public_url: Option<&str>) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let store = store::open(&StoreConfig::Local { dir: dir.path().to_owned() }).await.unwrap();
    let service = Service::new(
        BTreeMap::new(),
        "docker".into(),
        store,
        Arc::new(SystemClock),
        "edge-test".into(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let options = holmd::ServeOptions {
        token: Some(TOKEN.into()),
        public_url: public_url.map(str::to_owned),
        limits,
        ..holmd::ServeOptions::default()
    };
    let task_service = Arc::clone(&service);
    tokio::spawn(async move {
        holmd::serve_with(listener, task_service, options, std::future::pending()).await.unwrap();
    });
    Server { addr, service, _dir: dir }
}

/// Sends `request` whole on a new connection and reads the answer to the end.
async fn raw(addr: std::net::SocketAddr, request: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut out))
        .await
        .expect("an answer")
        .unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or(String::new(), |(_, b)| b.to_owned());
    (status, body)
}

fn request(method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut r = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        r += &format!("{k}: {v}\r\n");
    }
    if !body.is_empty() {
        r += &format!("Content-Length: {}\r\n", body.len());
    }
    r += "\r\n";
    r + body
}

fn error_code(body: &str) -> String {
    let json = body.lines().find(|l| l.starts_with('{')).unwrap_or(body);
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    assert!(
        v["error"]["request_id"].as_str().is_some_and(|r| r.starts_with("req_")),
        "the one error shape: {body}"
    );
    v["error"]["code"].as_str().unwrap_or_default().to_owned()
}

const BEARER: &str = "Bearer edge-test-token-0123456789";

#[tokio::test]
async fn pages_are_refused_on_every_route_before_the_token_is_looked_at() {
    let server = start(Limits::with_connections(64), Some("https://boxes.example.com")).await;
    let host = format!("127.0.0.1:{}", server.addr.port());
    let create = r#"{"spec":{"browser":false}}"#;
    let cases: Vec<(String, u16, &str)> = vec![
        // A page whose name rebinds to 127.0.0.1 sends its own name.
        (
            request(
                "GET",
                "/v1/boxes",
                &[("Host", "attacker.example:8080"), ("Authorization", BEARER)],
                "",
            ),
            403,
            "forbidden",
        ),
        (request("GET", "/v1/health", &[("Host", "attacker.example")], ""), 403, "forbidden"),
        (
            request(
                "POST",
                "/mcp",
                &[
                    ("Host", "attacker.example"),
                    ("Authorization", BEARER),
                    ("Content-Type", "application/json"),
                ],
                "{}",
            ),
            403,
            "forbidden",
        ),
        // A page of another site, even with the token somehow.
        (
            request(
                "POST",
                "/v1/boxes",
                &[
                    ("Host", &host),
                    ("Origin", "https://evil.example"),
                    ("Authorization", BEARER),
                    ("Content-Type", "application/json"),
                ],
                create,
            ),
            403,
            "forbidden",
        ),
        (
            request(
                "GET",
                "/v1/runtimes",
                &[("Host", &host), ("Origin", "null"), ("Authorization", BEARER)],
                "",
            ),
            403,
            "forbidden",
        ),
        (
            request(
                "POST",
                "/mcp",
                &[
                    ("Host", &host),
                    ("Origin", "https://evil.example"),
                    ("Authorization", BEARER),
                    ("Content-Type", "application/json"),
                ],
                "{}",
            ),
            403,
            "forbidden",
        ),
        // A body any page may send without asking first.
        (
            request(
                "POST",
                "/v1/boxes",
                &[("Host", &host), ("Authorization", BEARER), ("Content-Type", "text/plain")],
                create,
            ),
            415,
            "unsupported_media_type",
        ),
        (
            request(
                "POST",
                "/v1/images/build",
                &[
                    ("Host", &host),
                    ("Authorization", BEARER),
                    ("Content-Type", "application/x-www-form-urlencoded"),
                ],
                "{}",
            ),
            415,
            "unsupported_media_type",
        ),
        (
            request("POST", "/v1/boxes", &[("Host", &host), ("Authorization", BEARER)], create),
            415,
            "unsupported_media_type",
        ),
        // JSON that does not say so, to a JSON route.
        (
            request(
                "POST",
                "/v1/boxes",
                &[
                    ("Host", &host),
                    ("Authorization", BEARER),
                    ("Content-Type", "application/octet-stream"),
                ],
                create,
            ),
            415,
            "unsupported_media_type",
        ),
        // Dot segments, however written.
        (
            request(
                "GET",
                "/v1/boxes/box_a/../../v1/runtimes",
                &[("Host", &host), ("Authorization", BEARER)],
                "",
            ),
            400,
            "invalid_request",
        ),
        (
            request(
                "GET",
                "/v1/boxes/box_a/%2e%2e/info",
                &[("Host", &host), ("Authorization", BEARER)],
                "",
            ),
            400,
            "invalid_request",
        ),
    ];
    for (req, status, code) in &cases {
        let (got, body) = raw(server.addr, req).await;
        assert_eq!((got, error_code(&body).as_str()), (*status, *code), "{req}\n{body}");
    }
    assert!(server.service.list(&Default::default()).unwrap().data.is_empty(), "no box was made");

    // What clients send passes: loopback, the public name, a page of the
    // server's own origin, no Origin at all.
    for (h, origin) in [
        (host.as_str(), None),
        ("localhost", Some("http://localhost:3000")),
        ("boxes.example.com", Some("https://boxes.example.com")),
    ] {
        let mut headers = vec![("Host", h), ("Authorization", BEARER)];
        if let Some(o) = origin {
            headers.push(("Origin", o));
        }
        let (status, body) = raw(server.addr, &request("GET", "/v1/runtimes", &headers, "")).await;
        assert_eq!(status, 200, "{h} {origin:?}: {body}");
    }
}

#[tokio::test]
async fn a_slow_head_or_a_stalled_body_is_cut_off() {
    let limits = Limits {
        header_read: Duration::from_secs(1),
        body_idle: Duration::from_secs(1),
        max_connections: 64,
    };
    let server = start(limits, None).await;
    // Half a head, then nothing: the server closes the connection.
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    s.write_all(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n").await.unwrap();
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(15), s.read_to_end(&mut buf)).await;
    assert!(read.is_ok(), "the server kept a connection whose head never ended");
    // A kept-alive connection that sends nothing more is closed too.
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    s.write_all(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.unwrap();
    let read = tokio::time::timeout(Duration::from_secs(15), s.read_to_end(&mut buf)).await;
    assert!(read.is_ok(), "the server kept an idle connection open");
    assert!(String::from_utf8_lossy(&buf).contains("200 OK"));
    // A body that stops: the request ends with an error, not a hang.
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /v1/boxes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {BEARER}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"spec\":"
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(15), s.read_to_end(&mut out)).await;
    assert!(read.is_ok(), "the server waited forever for a stalled body");
    let text = String::from_utf8_lossy(&out);
    assert!(text.is_empty() || text.starts_with("HTTP/1.1 4"), "{text}");
}

#[tokio::test]
async fn connections_beyond_the_limit_wait_for_a_free_one() {
    let limits = Limits { max_connections: 2, ..Limits::with_connections(2) };
    let server = start(limits, None).await;
    let health = "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    // Two kept-alive connections hold both places.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut s = TcpStream::connect(server.addr).await.unwrap();
        s.write_all(health.as_bytes()).await.unwrap();
        let mut buf = [0u8; 12];
        s.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf[9..12], b"200");
        held.push(s);
    }
    let addr = server.addr;
    let third = tokio::spawn(async move {
        raw(addr, &request("GET", "/v1/health", &[("Host", "127.0.0.1")], "")).await
    });
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!third.is_finished(), "a third connection was served beyond the limit of two");
    drop(held.pop());
    let (status, _) = tokio::time::timeout(Duration::from_secs(10), third).await.unwrap().unwrap();
    assert_eq!(status, 200, "served once a place was free");
}

/// A value for each path parameter of the document.
fn fill(path: &str) -> String {
    path.replace("{id}", "box_abcdefghjk")
        .replace("{name}", "docker")
        .replace("{screen}", "0")
        .replace("{process}", "proc_1")
        .replace("{tab}", "tab_1")
}

#[tokio::test]
async fn every_documented_route_refuses_without_the_token_with_a_wrong_one_and_from_a_page() {
    let server = start(Limits::with_connections(64), None).await;
    let host = format!("127.0.0.1:{}", server.addr.port());
    let (status, doc) =
        raw(server.addr, &request("GET", "/v1/openapi.json", &[("Host", &host)], "")).await;
    assert_eq!(status, 200);
    let doc: serde_json::Value = serde_json::from_str(&doc).unwrap();
    let mut routes: Vec<(String, String, bool)> = Vec::new();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            let public = op["security"] == serde_json::json!([]);
            routes.push((method.to_uppercase(), fill(path), public));
        }
    }
    assert!(routes.len() > 50, "the document lists every route: {}", routes.len());
    // MCP is not REST and not in the document, and is guarded the same way.
    routes.push(("POST".into(), "/mcp".into(), false));
    let public: Vec<&str> = routes.iter().filter(|r| r.2).map(|r| r.1.as_str()).collect();
    assert_eq!(public, ["/v1/health", "/v1/openapi.json"], "only these answer without a token");
    for (method, path, public) in &routes {
        let body = if method == "GET" || method == "DELETE" { "" } else { "{}" };
        let kind = [("Content-Type", "application/json")];
        let with = |extra: &[(&'static str, &'static str)]| {
            let mut h: Vec<(&str, &str)> = vec![("Host", host.as_str())];
            if !body.is_empty() {
                h.extend_from_slice(&kind);
            }
            h.extend_from_slice(extra);
            request(method, path, &h, body)
        };
        if !public {
            let (status, said) = raw(server.addr, &with(&[])).await;
            assert_eq!(
                (status, error_code(&said).as_str()),
                (401, "unauthorized"),
                "{method} {path} without a token"
            );
            let (status, said) =
                raw(server.addr, &with(&[("Authorization", "Bearer wrong-token-0123456789")]))
                    .await;
            assert_eq!(
                (status, error_code(&said).as_str()),
                (401, "unauthorized"),
                "{method} {path} with a wrong token"
            );
        }
        let (status, said) = raw(
            server.addr,
            &with(&[("Authorization", BEARER), ("Origin", "https://evil.example")]),
        )
        .await;
        assert_eq!(
            (status, error_code(&said).as_str()),
            (403, "forbidden"),
            "{method} {path} from a page"
        );
    }
}
