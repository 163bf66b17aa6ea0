//! Passing requests on to a port of a sandbox, WebSocket upgrades
//! included, as a vendor's proxy does; and serving such a proxy on a
//! loopback port.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

/// A response body.
pub type Body = BoxBody<Bytes, hyper::Error>;

/// A response with `body` and `content_type`.
pub fn respond(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let body = Full::new(body.into()).map_err(|n: Infallible| match n {}).boxed();
    let mut r = Response::new(body);
    *r.status_mut() = status;
    if let Ok(v) = content_type.parse() {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    r
}

/// A JSON response.
pub fn json(status: StatusCode, value: &serde_json::Value) -> Response<Body> {
    respond(
        status,
        "application/json; charset=utf-8",
        serde_json::to_vec(value).unwrap_or_default(),
    )
}

/// Passes `req` on to `target` and answers what it answers; after a 101
/// the two connections are joined byte for byte. `None` when nothing
/// listens at `target`.
pub async fn forward(mut req: Request<Incoming>, target: SocketAddr) -> Option<Response<Body>> {
    let client_upgrade = hyper::upgrade::on(&mut req);
    let tcp = tokio::net::TcpStream::connect(target).await.ok()?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await.ok()?;
    tokio::spawn(conn.with_upgrades());
    let mut answer = sender.send_request(req).await.ok()?;
    if answer.status() == StatusCode::SWITCHING_PROTOCOLS {
        let box_upgrade = hyper::upgrade::on(&mut answer);
        tokio::spawn(async move {
            if let (Ok(client), Ok(boxed)) = (client_upgrade.await, box_upgrade.await) {
                let (mut client, mut boxed) = (TokioIo::new(client), TokioIo::new(boxed));
                let _ = tokio::io::copy_bidirectional(&mut client, &mut boxed).await;
            }
        });
    }
    Some(answer.map(BodyExt::boxed))
}

/// Serves `handle` on a new loopback port, HTTP/1 with upgrades, until the
/// returned task is aborted.
pub async fn serve<F, Fut>(handle: F) -> (SocketAddr, tokio::task::JoinHandle<()>)
where
    F: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<Body>> + Send + 'static,
{
    let listener =
        tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
    let addr = listener.local_addr().expect("the port's address");
    let handle = Arc::new(handle);
    let task = tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else { continue };
            let handle = Arc::clone(&handle);
            let service = hyper::service::service_fn(move |req| {
                let handle = Arc::clone(&handle);
                async move { Ok::<_, Infallible>(handle(req).await) }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service)
                    .with_upgrades()
                    .await;
            });
        }
    });
    (addr, task)
}
