//! A spare connection to each screen's VNC server, opened before a viewer
//! needs it, so a viewer's stream starts without x11vnc's own wait for a
//! new client.
//!
//! x11vnc takes a new connection late: with no client connected its loop
//! sleeps 200 ms between looks at its listening socket, and once it has
//! accepted, LibVNCServer (built with WebSockets) waits 100 ms for the
//! client to speak first (an HTTP `GET` would make it a WebSocket) before it
//! sends its `ProtocolVersion`. Measured in a box, a plain RFB client read
//! that version 210 ms after its connect (p50; 157-232 ms). A spare
//! connection has paid that already: it is connected and has read the
//! server's version, and the viewer that takes it is sent those 12 bytes
//! as if just read, then the stream flows as before.
//!
//! A spare is made a moment after a viewer opens a stream (one for each
//! screen and source address; not at once, nor when the page asks for its
//! session, because x11vnc's 100 ms wait for a new client stops its one
//! loop, and would hold up the handshake of the stream being opened), and
//! kept at most [`MAX_AGE`]:
//! while one waits, x11vnc's loop runs at its polling interval instead of
//! sleeping (about 1.5% of a CPU, measured), so a box nobody watches pays
//! nothing once its last spare is dropped. So a viewer opened again within
//! a minute of the last starts warm; the first viewer of a box, or one
//! after a quiet minute, pays x11vnc's wait.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::time::Instant;

/// How long a spare waits for a viewer before it is closed.
pub const MAX_AGE: Duration = Duration::from_secs(60);

/// How long the VNC server may take to send its version to a spare.
const BANNER: Duration = Duration::from_secs(5);

/// A connection to a VNC server that has read the server's version.
#[derive(Debug)]
pub struct Warm {
    /// The connection.
    pub stream: TcpStream,
    /// The server's `ProtocolVersion` (12 bytes), already read.
    pub banner: [u8; 12],
    made: Instant,
}

/// Which spare: the screen, and the address the connection comes from.
type Key = (u8, IpAddr);

#[derive(Debug, Default)]
struct Inner {
    ready: HashMap<Key, Warm>,
    filling: std::collections::HashSet<Key>,
}

/// The spares, one for each screen and source address at most.
#[derive(Debug, Default)]
pub struct Spares {
    inner: Mutex<Inner>,
}

impl Spares {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The spare for `key`, if one is ready, young enough and still open.
    pub fn take(&self, screen: u8, source: IpAddr) -> Option<Warm> {
        let warm = self.lock().ready.remove(&(screen, source))?;
        if warm.made.elapsed() >= MAX_AGE {
            return None;
        }
        // Nothing is due from the server before the client's version: a
        // read that does not block means it closed (or broke the protocol).
        let mut probe = [0u8; 1];
        match warm.stream.try_read(&mut probe) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Some(warm),
            _ => None,
        }
    }

    /// Makes a spare for `(screen, source)` in the background, once
    /// `ready` (the VNC server is up) answers, unless one is ready or being
    /// made; drops it after [`MAX_AGE`] unless a viewer took it.
    pub fn fill<F>(self: &Arc<Self>, screen: u8, source: IpAddr, port: u16, ready: F)
    where
        F: std::future::Future<Output = bool> + Send + 'static,
    {
        let key = (screen, source);
        {
            let mut inner = self.lock();
            if inner.ready.contains_key(&key) || !inner.filling.insert(key) {
                return;
            }
        }
        let spares = Arc::clone(self);
        tokio::spawn(async move {
            let made = if ready.await { make(source, port).await.ok() } else { None };
            let Some(warm) = made else {
                spares.lock().filling.remove(&key);
                return;
            };
            let at = warm.made;
            {
                let mut inner = spares.lock();
                inner.filling.remove(&key);
                inner.ready.insert(key, warm);
            }
            tokio::time::sleep(MAX_AGE).await;
            let mut inner = spares.lock();
            if inner.ready.get(&key).is_some_and(|w| w.made == at) {
                inner.ready.remove(&key);
            }
        });
    }
}

/// Connects to the VNC server on loopback `port` from `source`.
pub async fn connect(source: IpAddr, port: u16) -> std::io::Result<TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind((source, 0).into())?;
    let stream = tokio::time::timeout(
        Duration::from_secs(5),
        socket.connect((std::net::Ipv4Addr::LOCALHOST, port).into()),
    )
    .await
    .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out"))??;
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// A connection that has read the server's version.
async fn make(source: IpAddr, port: u16) -> std::io::Result<Warm> {
    let mut stream = connect(source, port).await?;
    let made = Instant::now();
    let mut banner = [0u8; 12];
    tokio::time::timeout(BANNER, stream.read_exact(&mut banner))
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "no RFB version"))??;
    if !banner.starts_with(b"RFB ") {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "not an RFB server"));
    }
    Ok(Warm { stream, banner, made })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

    async fn server() -> (TcpListener, u16) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        (l, port)
    }

    async fn wait_ready(spares: &Spares, key: Key) -> Warm {
        loop {
            if let Some(w) = spares.take(key.0, key.1) {
                return w;
            }
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    #[tokio::test]
    async fn a_spare_has_read_the_version_and_is_taken_once() {
        let (l, port) = server().await;
        tokio::spawn(async move {
            let (mut s, _) = l.accept().await.unwrap();
            s.write_all(b"RFB 003.008\n").await.unwrap();
            let mut rest = Vec::new();
            let _ = s.read_to_end(&mut rest).await;
        });
        let spares = Arc::new(Spares::default());
        let local: IpAddr = std::net::Ipv4Addr::LOCALHOST.into();
        spares.fill(0, local, port, async { true });
        let warm = wait_ready(&spares, (0, local)).await;
        assert_eq!(&warm.banner, b"RFB 003.008\n");
        assert!(spares.take(0, local).is_none(), "a spare is handed out once");
    }

    #[tokio::test]
    async fn a_spare_the_server_closed_is_not_handed_out() {
        let (l, port) = server().await;
        let (closed_tx, closed_rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let (mut s, _) = l.accept().await.unwrap();
            s.write_all(b"RFB 003.008\n").await.unwrap();
            drop(s);
            let _ = closed_tx.send(());
        });
        let spares = Arc::new(Spares::default());
        let local: IpAddr = std::net::Ipv4Addr::LOCALHOST.into();
        spares.fill(0, local, port, async { true });
        closed_rx.await.unwrap();
        // Wait until the spare is ready, then until its peer's close shows.
        loop {
            let ready = spares.lock().ready.contains_key(&(0, local));
            if ready {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let mut readable = false;
        for _ in 0..200 {
            readable = {
                let inner = spares.lock();
                let w = inner.ready.get(&(0, local)).unwrap();
                w.stream.try_read(&mut [0u8; 1]).is_ok()
            };
            if readable {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(readable, "the close reached the spare");
        assert!(spares.take(0, local).is_none(), "a closed spare is dropped");
    }

    #[tokio::test]
    async fn no_spare_is_made_while_the_server_is_not_up() {
        let spares = Arc::new(Spares::default());
        let local: IpAddr = std::net::Ipv4Addr::LOCALHOST.into();
        spares.fill(0, local, 1, async { false });
        // The fill gives up (the server never came up): nothing is ready,
        // and a later fill may try again.
        while !spares.lock().filling.is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(spares.take(0, local).is_none());
    }
}
