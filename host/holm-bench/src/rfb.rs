//! The bench's own viewer: RFB (RFC 6143) over the viewer WebSocket, as a
//! viewer page speaks it, with only what the viewer rows need — the
//! handshake, update requests, raw rectangles kept in a framebuffer (to see
//! a change) and ZRLE rectangles counted but not decoded (for bandwidth).
//!
//! It is not the test kit's client (`holm-testkit::rfb`): a program does not
//! link test code, and this one returns errors where that one panics.

use std::time::Duration;

use anyhow::{Context, bail};
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long one message may take once it has begun, or the server to answer.
const WAIT: Duration = Duration::from_secs(20);

/// Raw pixels: decoded into the framebuffer.
pub const RAW: i32 = 0;
/// ZRLE: compressed, as a real viewer asks; counted, not decoded.
pub const ZRLE: i32 = 16;

/// One RFB session through a viewer URL.
pub struct Rfb {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    buf: Vec<u8>,
    /// The framebuffer's width.
    pub width: u16,
    /// The framebuffer's height.
    pub height: u16,
    /// Bytes received so far (WebSocket payloads).
    pub bytes_in: u64,
    /// 4 bytes a pixel, as the raw rectangles left it.
    pub fb: Vec<u8>,
    /// Whether an update request is waiting for its answer.
    pending: bool,
    /// From the open until the WebSocket upgrade was answered.
    pub upgraded_in: Duration,
    /// From the open until the server's ServerInit was read.
    pub init_in: Duration,
}

/// A viewer page URL's stream and token: `(ws://.../rfb, token)`.
pub fn stream_of(page_url: &str) -> (String, Option<String>) {
    let (page, fragment) = page_url.split_once('#').map_or((page_url, None), |(p, f)| (p, Some(f)));
    let token = fragment.and_then(|f| f.strip_prefix("token=")).map(str::to_owned);
    let ws = page.replacen("https://", "wss://", 1).replacen("http://", "ws://", 1);
    (format!("{}/rfb", ws.trim_end_matches('/')), token)
}

/// Opens the stream of viewer page `page_url` with the URL's token and does
/// the handshake, asking for `encoding` only.
pub async fn open(page_url: &str, encoding: i32) -> anyhow::Result<Rfb> {
    let t = Instant::now();
    let (url, token) = stream_of(page_url);
    let mut req = url.as_str().into_client_request().context("the viewer's stream URL")?;
    let mut protocols = vec![holm_proto::viewer::RFB_PROTOCOL.to_owned()];
    if let Some(t) = token {
        protocols.push(format!("{}{t}", holm_proto::viewer::TOKEN_PROTOCOL_PREFIX));
    }
    req.headers_mut().insert("sec-websocket-protocol", protocols.join(", ").parse()?);
    let (ws, _) = tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(req))
        .await
        .context("the viewer's stream did not answer in 20 s")?
        .context("open the viewer's stream")?;
    let mut rfb = Rfb {
        ws,
        buf: Vec::new(),
        width: 0,
        height: 0,
        bytes_in: 0,
        fb: Vec::new(),
        pending: false,
        upgraded_in: t.elapsed(),
        init_in: Duration::ZERO,
    };
    rfb.handshake(encoding, t).await?;
    Ok(rfb)
}

impl Rfb {
    async fn fill(&mut self, n: usize) -> anyhow::Result<()> {
        while self.buf.len() < n {
            let m = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .context("the viewer's stream went quiet mid-message")?
                .context("the viewer's stream closed")??;
            match m {
                Message::Binary(b) => {
                    self.bytes_in += b.len() as u64;
                    self.buf.extend_from_slice(&b);
                }
                Message::Close(c) => bail!("the viewer closed the stream: {c:?}"),
                _ => {}
            }
        }
        Ok(())
    }

    async fn take(&mut self, n: usize) -> anyhow::Result<Vec<u8>> {
        self.fill(n).await?;
        Ok(self.buf.drain(..n).collect())
    }

    async fn send(&mut self, bytes: Vec<u8>) -> anyhow::Result<()> {
        self.ws.send(Message::binary(bytes)).await.context("write to the viewer's stream")
    }

    async fn handshake(&mut self, encoding: i32, t: Instant) -> anyhow::Result<()> {
        let version = self.take(12).await?;
        if !version.starts_with(b"RFB 003.") {
            bail!("not an RFB server: {version:?}");
        }
        self.send(b"RFB 003.008\n".to_vec()).await?;
        let n = self.take(1).await?[0];
        let types = self.take(usize::from(n)).await?;
        if !types.contains(&1) {
            bail!("the viewer's VNC server offers no None security (behind the token): {types:?}");
        }
        self.send(vec![1]).await?;
        if self.take(4).await? != [0, 0, 0, 0] {
            bail!("the viewer's security handshake failed");
        }
        self.send(vec![1]).await?; // shared
        let init = self.take(24).await?;
        self.width = u16::from_be_bytes([init[0], init[1]]);
        self.height = u16::from_be_bytes([init[2], init[3]]);
        let name_len = u32::from_be_bytes([init[20], init[21], init[22], init[23]]) as usize;
        self.take(name_len).await?;
        self.init_in = t.elapsed();
        self.fb = vec![0; usize::from(self.width) * usize::from(self.height) * 4];
        // 32 bits a pixel, little-endian true colour (red at 16, green 8, blue 0).
        self.send(vec![0, 0, 0, 0, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0])
            .await?;
        let mut set = vec![2, 0, 0, 1];
        set.extend(encoding.to_be_bytes());
        self.send(set).await
    }

    /// Asks for the whole screen: all of it, or (incremental) what changed.
    pub async fn request(&mut self, incremental: bool) -> anyhow::Result<()> {
        let mut req = vec![3, u8::from(incremental), 0, 0, 0, 0];
        req.extend(self.width.to_be_bytes());
        req.extend(self.height.to_be_bytes());
        self.pending = true;
        self.send(req).await
    }

    /// The next FramebufferUpdate (asking for an incremental one if none is
    /// asked for yet): the pixels it covered, or `None` when nothing began
    /// to arrive by `deadline` (the request stays asked for). Other server
    /// messages are skipped.
    pub async fn update(&mut self, deadline: Instant) -> anyhow::Result<Option<u64>> {
        if !self.pending {
            self.request(true).await?;
        }
        loop {
            while self.buf.is_empty() {
                match tokio::time::timeout_at(deadline, self.ws.next()).await {
                    Err(_) => return Ok(None),
                    Ok(Some(Ok(Message::Binary(b)))) => {
                        self.bytes_in += b.len() as u64;
                        self.buf.extend_from_slice(&b);
                    }
                    Ok(Some(Ok(Message::Close(c)))) => bail!("the viewer closed the stream: {c:?}"),
                    Ok(Some(Ok(_))) => {}
                    Ok(Some(Err(e))) => return Err(e).context("read the viewer's stream"),
                    Ok(None) => bail!("the viewer's stream closed"),
                }
            }
            match self.take(1).await?[0] {
                0 => {
                    let covered = self.rectangles().await?;
                    self.pending = false;
                    return Ok(Some(covered));
                }
                2 => {} // bell
                3 => {
                    let head = self.take(7).await?;
                    let n = u32::from_be_bytes([head[3], head[4], head[5], head[6]]);
                    self.take(n as usize).await?;
                }
                other => bail!("server message {other} was not expected"),
            }
        }
    }

    /// Reads one update's rectangles; answers the pixels they cover.
    async fn rectangles(&mut self) -> anyhow::Result<u64> {
        let head = self.take(3).await?;
        let rects = u16::from_be_bytes([head[1], head[2]]);
        let mut covered = 0u64;
        for _ in 0..rects {
            let r = self.take(12).await?;
            let be = |i: usize| usize::from(u16::from_be_bytes([r[i], r[i + 1]]));
            let (x, y, w, h) = (be(0), be(2), be(4), be(6));
            match i32::from_be_bytes([r[8], r[9], r[10], r[11]]) {
                RAW => {
                    let pixels = self.take(w * h * 4).await?;
                    let width = usize::from(self.width);
                    for row in 0..h {
                        let at = ((y + row) * width + x) * 4;
                        let line = &pixels[row * w * 4..(row + 1) * w * 4];
                        if let Some(dst) = self.fb.get_mut(at..at + w * 4) {
                            dst.copy_from_slice(line);
                        }
                    }
                }
                ZRLE => {
                    let len = self.take(4).await?;
                    let n = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
                    self.take(n).await?;
                }
                other => bail!("encoding {other} was not asked for"),
            }
            covered += (w * h) as u64;
        }
        Ok(covered)
    }

    /// Reads updates until one shows the whole screen has been sent since
    /// this was called (after a full request).
    pub async fn full_frame(&mut self) -> anyhow::Result<()> {
        self.request(false).await?;
        let all = u64::from(self.width) * u64::from(self.height);
        let mut covered = 0;
        while covered < all {
            let deadline = Instant::now() + WAIT;
            covered += self.update(deadline).await?.context("no frame in 20 s")?;
        }
        Ok(())
    }

    /// Reads updates until none comes for `quiet` (at most `max`).
    pub async fn drain(&mut self, quiet: Duration, max: Duration) -> anyhow::Result<()> {
        let end = Instant::now() + max;
        while Instant::now() < end {
            if self.update(Instant::now() + quiet).await?.is_none() {
                break;
            }
        }
        Ok(())
    }
}
