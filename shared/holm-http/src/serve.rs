//! Serving a router on a listener with the limits a server on a shared host
//! needs, which `axum::serve` does not set: a client that connects and sends
//! nothing, or a header a byte a minute, or a body that stalls, holds a
//! connection and its memory forever there.
//!
//! - **Header read**: the request head must arrive within
//!   [`Limits::header_read`] from the moment the server waits for it, which
//!   on a kept-alive connection is right after the last answer: so the same
//!   timeout ends **idle** connections.
//! - **Body idle**: a request body that sends nothing for
//!   [`Limits::body_idle`] is ended (its handler sees an error).
//! - **Connections**: at most [`Limits::max_connections`] at once, upgraded
//!   ones (WebSockets: a viewer's stream, a terminal, the bridge) counted
//!   until they close, since the permit lives in the connection's socket;
//!   beyond that the server stops accepting until one ends (the kernel's
//!   backlog holds the rest), and says so once in the log.
//!
//! Once a connection is upgraded (a WebSocket), the timeouts no longer
//! apply: its two ends pump bytes until either closes. A graceful stop
//! waits for the connections that are not upgraded (upgraded ones are the
//! caller's to end).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use bytes::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tower::ServiceExt;

/// The limits of one listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long a request head (and an idle kept-alive connection) may take.
    pub header_read: Duration,
    /// How long a request body may send nothing.
    pub body_idle: Duration,
    /// The most connections open at once.
    pub max_connections: usize,
}

impl Limits {
    /// The limits of a server: 30 s for a head or an idle connection, 60 s
    /// for a stalled body, and `max_connections`.
    pub const fn with_connections(max_connections: usize) -> Self {
        Self {
            header_read: Duration::from_secs(30),
            body_idle: Duration::from_secs(60),
            max_connections,
        }
    }
}

/// Serves `app` on `listener` until `shutdown` resolves; then stops
/// accepting, lets each open request finish (upgraded connections are the
/// caller's to end), and returns once every connection has closed.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    // Held by each connection's task until hyper lets the connection go
    // (at its end, or when it is upgraded): what a graceful stop waits for.
    let serving = Arc::new(Semaphore::new(u32::MAX as usize));
    let (stop_tx, stop_rx) = watch::channel(false);
    // When the limit was last said in the log, in seconds since the start.
    let said_at = AtomicU64::new(0);
    let started = std::time::Instant::now();
    tokio::pin!(shutdown);
    loop {
        let permit = if let Ok(p) = Arc::clone(&permits).try_acquire_owned() {
            p
        } else {
            // Said at most once a minute: a flood must not flood the log too.
            let now = started.elapsed().as_secs() + 60;
            if now >= said_at.load(Ordering::Relaxed) + 60 {
                said_at.store(now, Ordering::Relaxed);
                tracing::warn!(
                    max_connections = limits.max_connections,
                    "the connection limit is reached; new connections wait"
                );
            }
            tokio::select! {
                p = Arc::clone(&permits).acquire_owned() => p.map_err(std::io::Error::other)?,
                () = &mut shutdown => break,
            }
        };
        let (stream, _peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(e) => {
                    // Out of descriptors, or a connection reset before it
                    // was accepted: wait a moment rather than spin.
                    tracing::debug!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        crate::no_delay_stream(&stream);
        // The limit's permit goes with the socket, so an upgraded connection
        // holds it until it closes.
        let stream = crate::tracked::Tracked::new(stream, permit);
        let Ok(held) = Arc::clone(&serving).try_acquire_owned() else { break };
        let app = app.clone();
        let body_idle = limits.body_idle;
        let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let req = req.map(|b| Body::new(IdleBody::new(b, body_idle)));
            let app = app.clone();
            async move { Ok::<_, Infallible>(app.oneshot(req).await.unwrap_or_else(|e| match e {})) }
        });
        let mut stop = stop_rx.clone();
        let header_read = limits.header_read;
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(header_read);
            let conn = builder.serve_connection(TokioIo::new(stream), service).with_upgrades();
            tokio::pin!(conn);
            let mut stopping = false;
            loop {
                tokio::select! {
                    r = conn.as_mut() => {
                        if let Err(e) = r {
                            tracing::debug!(error = %e, "a connection ended with an error");
                        }
                        break;
                    }
                    r = stop.wait_for(|s| *s), if !stopping => {
                        stopping = true;
                        if r.is_ok() {
                            conn.as_mut().graceful_shutdown();
                        }
                    }
                }
            }
            drop(held);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    // Every connection's task holds a permit until hyper lets it go.
    let _ = serving.acquire_many(u32::MAX).await;
    Ok(())
}

/// A request body that fails when it sends nothing for a while.
struct IdleBody {
    inner: Incoming,
    idle: Duration,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl IdleBody {
    fn new(inner: Incoming, idle: Duration) -> Self {
        Self { inner, idle, timer: None }
    }
}

/// The error of a body that stalled.
#[derive(Debug)]
struct BodyIdle(Duration);

impl std::fmt::Display for BodyIdle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the request body sent nothing for {:?}", self.0)
    }
}

impl std::error::Error for BodyIdle {}

impl hyper::body::Body for IdleBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(r) => {
                this.timer = None;
                Poll::Ready(r.map(|f| f.map_err(Into::into)))
            }
            Poll::Pending => {
                let idle = this.idle;
                let timer = this.timer.get_or_insert_with(|| Box::pin(tokio::time::sleep(idle)));
                match timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyIdle(idle))))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
