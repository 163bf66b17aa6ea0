//! A held connection to each X11 screen's VNC server while it is watched,
//! so a viewer's stream opens at once.
//!
//! x11vnc with no client looks at its listening socket once every 200 ms
//! (its loop sleeps in between), so a viewer connecting to an unwatched
//! screen waited up to 200 ms before x11vnc even read it; with one client
//! connected its loop runs every `-wait` (5 ms). The keeper holds one
//! client of its own per screen, from the screen's first stream until no
//! stream has been open for `HOLM_VIEWER_HOLD_SECS` (60 s): a client that
//! has done the whole handshake (a client still in its handshake stops
//! x11vnc sending the clipboard to anyone), asks for no pixels, and reads
//! and drops what x11vnc sends it (the clipboard, bells). A viewer's own connection is
//! made only once the held client is in, so no clipboard change is lost
//! to it.
//!
//! Each connection this guest makes also sends its protocol version at
//! once ([`VERSION`]): x11vnc (LibVNCServer built with WebSockets) waits
//! up to 100 ms after an accept for the client to speak first, to tell a
//! WebSocket from RFB, and an RFB client speaks second.
//!
//! The cost: x11vnc polls the screen while it has a client, about 1.7% of
//! a CPU, for at most that long after the last viewer left. Wayland's
//! wayvnc waits on events, not on a timer, and has no keeper.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The RFB version every connection this guest makes to a VNC server
/// announces before it reads the server's (the one x11vnc speaks, and the
/// one noVNC answers with).
pub const VERSION: &[u8; 12] = b"RFB 003.008\n";

/// How long the held client's handshake may take.
const HANDSHAKE: Duration = Duration::from_secs(3);

/// The held clients, one slot per screen.
#[derive(Debug)]
pub struct Keeper {
    slots: Vec<tokio::sync::Mutex<Option<Arc<Held>>>>,
    idle: Duration,
}

/// One held client's shared state.
#[derive(Debug)]
struct Held {
    /// Streams of the screen open now, or [`GONE`] once the held
    /// connection has ended (set in one step with the count's last look, so
    /// a stream never counts itself on a client that is going).
    streams: AtomicUsize,
    /// When the last stream closed.
    last_left: std::sync::Mutex<Instant>,
}

/// [`Held::streams`] of a held client that has ended.
const GONE: usize = usize::MAX;

impl Held {
    /// Counts a stream in, unless the held client has ended.
    fn join(&self) -> bool {
        let up = |n: usize| (n != GONE).then(|| n + 1);
        self.streams.fetch_update(Ordering::SeqCst, Ordering::SeqCst, up).is_ok()
    }
}

/// A stream's share of its screen's held client: dropping it counts the
/// stream closed.
#[derive(Debug)]
pub struct Hold(Option<Arc<Held>>);

impl Drop for Hold {
    fn drop(&mut self) {
        if let Some(held) = &self.0 {
            *held.last_left.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
                Instant::now();
            let down = |n: usize| (n != GONE && n > 0).then(|| n - 1);
            let _ = held.streams.fetch_update(Ordering::SeqCst, Ordering::SeqCst, down);
        }
    }
}

impl Keeper {
    /// A keeper for `screens` screens whose held clients stay `idle` after
    /// their last stream.
    pub fn new(screens: u8, idle: Duration) -> Arc<Self> {
        let slots = (0..screens).map(|_| tokio::sync::Mutex::new(None)).collect();
        Arc::new(Self { slots, idle })
    }

    /// Makes sure screen `screen`'s VNC server (on loopback `port`, reached
    /// from `source`) has the held client, connecting it if it has none,
    /// and counts a stream open until the answer is dropped. A held client
    /// that cannot be made is logged and left out: the stream still opens,
    /// only slower.
    pub async fn hold(&self, screen: u8, source: std::net::IpAddr, port: u16) -> Hold {
        let Some(slot) = self.slots.get(usize::from(screen)) else { return Hold(None) };
        let mut slot = slot.lock().await;
        if let Some(held) = slot.as_ref().filter(|h| h.join()) {
            return Hold(Some(Arc::clone(held)));
        }
        let vnc = match tokio::time::timeout(HANDSHAKE, handshake(source, port)).await {
            Ok(Ok(vnc)) => vnc,
            Ok(Err(e)) => {
                tracing::info!(screen, error = %e, "no held VNC client");
                return Hold(None);
            }
            Err(_) => {
                tracing::info!(screen, "no held VNC client: the handshake timed out");
                return Hold(None);
            }
        };
        let held = Arc::new(Held {
            streams: AtomicUsize::new(1),
            last_left: std::sync::Mutex::new(Instant::now()),
        });
        tokio::spawn(keep(vnc, Arc::clone(&held), self.idle));
        *slot = Some(Arc::clone(&held));
        Hold(Some(held))
    }
}

/// Connects to the VNC server and does the whole RFB 3.8 handshake as a
/// shared client without a password: every byte the client sends is known
/// before the server speaks, so all of it goes at once.
async fn handshake(source: std::net::IpAddr, port: u16) -> std::io::Result<tokio::net::TcpStream> {
    let mut vnc = super::server::connect_vnc(source, port, false).await?;
    // The version, security type None (1), ClientInit shared (1).
    let mut hello = VERSION.to_vec();
    hello.extend_from_slice(&[1, 1]);
    vnc.write_all(&hello).await?;
    let mut version = [0u8; 12];
    vnc.read_exact(&mut version).await?;
    let bad = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
    if &version != VERSION {
        return Err(bad(format!("the server speaks {:?}", String::from_utf8_lossy(&version))));
    }
    let count = vnc.read_u8().await?;
    let mut types = vec![0u8; usize::from(count)];
    vnc.read_exact(&mut types).await?;
    if !types.contains(&1) {
        return Err(bad(format!("the server offers no security type None: {types:?}")));
    }
    if vnc.read_u32().await? != 0 {
        return Err(bad("the server refused security type None".into()));
    }
    // ServerInit: width, height, pixel format (16 bytes), then the name.
    let mut init = [0u8; 24];
    vnc.read_exact(&mut init).await?;
    let name_len = u32::from_be_bytes([init[20], init[21], init[22], init[23]]);
    let mut name = vec![0u8; usize::try_from(name_len.min(4096)).unwrap_or(4096)];
    vnc.read_exact(&mut name).await?;
    Ok(vnc)
}

/// Holds the connection, dropping what the server sends, until the server
/// closes it or no stream has been open for `idle`.
async fn keep(mut vnc: tokio::net::TcpStream, held: Arc<Held>, idle: Duration) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut tick = tokio::time::interval(Duration::from_secs(1).min(idle));
    loop {
        tokio::select! {
            read = vnc.read(&mut buf) => {
                if matches!(read, Ok(0) | Err(_)) {
                    held.streams.store(GONE, Ordering::SeqCst);
                    return;
                }
            }
            _ = tick.tick() => {
                let left = *held.last_left.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let unwatched = || held.streams.compare_exchange(0, GONE, Ordering::SeqCst, Ordering::SeqCst).is_ok();
                if left.elapsed() >= idle && unwatched() {
                    return;
                }
            }
        }
    }
}
