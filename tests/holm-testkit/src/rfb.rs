//! A small RFB client over WebSocket, as a viewer page is, but written
//! without noVNC: it speaks the protocol straight (RFC 6143), so a test can
//! send input the page would never send and read frames pixel for pixel.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

const WAIT: Duration = Duration::from_secs(20);

/// An RFB session through a viewer WebSocket.
#[derive(Debug)]
pub struct Rfb {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    buf: Vec<u8>,
    /// The framebuffer's width.
    pub width: u16,
    /// The framebuffer's height.
    pub height: u16,
    /// The clipboard texts the box sent (ServerCutText) while
    /// [`Rfb::frame`] read, in order.
    pub cut_texts: Vec<String>,
}

/// Why a connection was refused before any stream: the HTTP status and the
/// error body.
#[derive(Debug)]
pub struct Refusal {
    /// The status.
    pub status: u16,
    /// The body (the one error shape).
    pub body: serde_json::Value,
}

/// Opens the WebSocket at `url` (`ws://.../SCREEN/MODE/rfb`) with `token` as
/// a subprotocol, and does the RFB handshake.
pub async fn connect(url: &str, token: Option<&str>) -> Result<Rfb, Refusal> {
    let mut req = url.into_client_request().unwrap();
    let mut protocols = vec!["holm-rfb.v1".to_owned()];
    if let Some(t) = token {
        protocols.push(format!("holm-token.{t}"));
    }
    req.headers_mut().insert("sec-websocket-protocol", protocols.join(", ").parse().unwrap());
    let (ws, response) = match tokio_tungstenite::connect_async(req).await {
        Ok(ok) => ok,
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => {
            let status = r.status().as_u16();
            let body = r
                .body()
                .as_ref()
                .and_then(|b| serde_json::from_slice(b).ok())
                .unwrap_or(serde_json::Value::Null);
            return Err(Refusal { status, body });
        }
        Err(e) => panic!("cannot connect to {url}: {e}"),
    };
    assert_eq!(
        response.headers().get("sec-websocket-protocol").and_then(|v| v.to_str().ok()),
        Some("holm-rfb.v1")
    );
    let mut rfb = Rfb { ws, buf: Vec::new(), width: 0, height: 0, cut_texts: Vec::new() };
    rfb.handshake().await;
    Ok(rfb)
}

impl Rfb {
    async fn fill(&mut self, n: usize) {
        while self.buf.len() < n {
            let m = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("the server to send more")
                .expect("the stream to stay open")
                .expect("a WebSocket message");
            match m {
                Message::Binary(b) => self.buf.extend_from_slice(&b),
                Message::Close(c) => panic!("the viewer closed the stream: {c:?}"),
                _ => {}
            }
        }
    }

    async fn take(&mut self, n: usize) -> Vec<u8> {
        self.fill(n).await;
        self.buf.drain(..n).collect()
    }

    async fn send(&mut self, bytes: Vec<u8>) {
        self.ws.send(Message::binary(bytes)).await.unwrap();
    }

    async fn handshake(&mut self) {
        let version = self.take(12).await;
        assert!(version.starts_with(b"RFB 003."), "{version:?}");
        self.send(b"RFB 003.008\n".to_vec()).await;
        let n = self.take(1).await[0];
        let types = self.take(usize::from(n)).await;
        assert!(types.contains(&1), "the VNC server offers no None security: {types:?}");
        self.send(vec![1]).await;
        let result = self.take(4).await;
        assert_eq!(result, [0, 0, 0, 0], "security result");
        self.send(vec![1]).await;
        let init = self.take(24).await;
        self.width = u16::from_be_bytes([init[0], init[1]]);
        self.height = u16::from_be_bytes([init[2], init[3]]);
        let name_len = u32::from_be_bytes([init[20], init[21], init[22], init[23]]) as usize;
        self.take(name_len).await;
        // 32 bits a pixel, little-endian, true colour: red at 16, green at
        // 8, blue at 0; raw encoding only.
        let mut format =
            vec![0u8, 0, 0, 0, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0];
        format.truncate(20);
        self.send(format).await;
        self.send(vec![2, 0, 0, 1, 0, 0, 0, 0]).await;
    }

    /// Presses and releases each keysym in turn.
    pub async fn keys(&mut self, keysyms: &[u32]) {
        for &k in keysyms {
            for down in [1u8, 0] {
                let mut m = vec![4, down, 0, 0];
                m.extend(k.to_be_bytes());
                self.send(m).await;
            }
        }
    }

    /// Types ASCII text (letters, digits, space; a newline is Return) as
    /// keysyms.
    pub async fn type_ascii(&mut self, text: &str) {
        let syms: Vec<u32> =
            text.chars().map(|c| if c == '\n' { 0xff0d } else { c as u32 }).collect();
        self.keys(&syms).await;
    }

    /// Moves the pointer to `(x, y)` and clicks the left button there.
    pub async fn click(&mut self, x: u16, y: u16) {
        for mask in [0u8, 1, 0] {
            let mut m = vec![5, mask];
            m.extend(x.to_be_bytes());
            m.extend(y.to_be_bytes());
            self.send(m).await;
        }
    }

    /// Sets the box's clipboard to `text` (ClientCutText, Latin-1).
    pub async fn cut_text(&mut self, text: &str) {
        let mut m = vec![6, 0, 0, 0];
        m.extend(u32::try_from(text.len()).unwrap().to_be_bytes());
        m.extend(text.as_bytes());
        self.send(m).await;
    }

    /// Asks for the whole screen and reads it: `width * height` pixels as
    /// RGB triples. Server messages other than the update are skipped; the
    /// clipboard texts among them are kept in [`Rfb::cut_texts`].
    pub async fn frame(&mut self) -> Vec<u8> {
        let (w, h) = (self.width, self.height);
        let mut req = vec![3, 0, 0, 0, 0, 0];
        req.extend(w.to_be_bytes());
        req.extend(h.to_be_bytes());
        self.send(req).await;
        let mut rgb = vec![0u8; usize::from(w) * usize::from(h) * 3];
        let mut covered = 0usize;
        while covered < usize::from(w) * usize::from(h) {
            let kind = self.take(1).await[0];
            match kind {
                0 => {
                    let head = self.take(3).await;
                    let rects = u16::from_be_bytes([head[1], head[2]]);
                    for _ in 0..rects {
                        let r = self.take(12).await;
                        let be = |i: usize| u16::from_be_bytes([r[i], r[i + 1]]);
                        let (x, y, rw, rh) = (be(0), be(2), be(4), be(6));
                        let encoding = i32::from_be_bytes([r[8], r[9], r[10], r[11]]);
                        assert_eq!(encoding, 0, "only raw was asked for");
                        let pixels = self.take(usize::from(rw) * usize::from(rh) * 4).await;
                        for row in 0..usize::from(rh) {
                            for col in 0..usize::from(rw) {
                                let p = &pixels[(row * usize::from(rw) + col) * 4..][..4];
                                let at = ((usize::from(y) + row) * usize::from(w)
                                    + usize::from(x)
                                    + col)
                                    * 3;
                                rgb[at..at + 3].copy_from_slice(&[p[2], p[1], p[0]]);
                            }
                        }
                        covered += usize::from(rw) * usize::from(rh);
                    }
                }
                2 => {}
                3 => {
                    let head = self.take(7).await;
                    let n = u32::from_be_bytes([head[3], head[4], head[5], head[6]]);
                    let text = self.take(n as usize).await;
                    self.cut_texts.push(String::from_utf8_lossy(&text).into_owned());
                }
                other => panic!("server message {other} was not expected"),
            }
        }
        rgb
    }

    /// Reads server messages for `wait` and answers the clipboard texts the
    /// box sent (ServerCutText), skipping frames.
    pub async fn clipboard_within(&mut self, wait: Duration) -> Vec<String> {
        let mut texts = Vec::new();
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            while self.buf.is_empty() {
                match tokio::time::timeout_at(deadline, self.ws.next()).await {
                    Err(_) => return texts,
                    Ok(Some(Ok(Message::Binary(b)))) => self.buf.extend_from_slice(&b),
                    Ok(Some(Ok(_))) => {}
                    Ok(_) => return texts,
                }
            }
            match self.buf[0] {
                3 => {
                    let head = self.take(8).await;
                    let n = u32::from_be_bytes([head[4], head[5], head[6], head[7]]);
                    let text = self.take(n as usize).await;
                    texts.push(String::from_utf8_lossy(&text).into_owned());
                }
                2 => {
                    self.take(1).await;
                }
                other => panic!("server message {other} was not expected while idle"),
            }
        }
    }

    /// Waits for the server to close the stream; answers the close reason.
    pub async fn closed(&mut self) -> String {
        loop {
            match tokio::time::timeout(WAIT, self.ws.next()).await.expect("the stream to close") {
                Some(Ok(Message::Close(c))) => {
                    return c.map(|c| c.reason.to_string()).unwrap_or_default();
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return String::new(),
            }
        }
    }
}

/// A viewer page URL's stream and token: `(ws://.../rfb, token)`.
#[must_use]
pub fn stream_of(page_url: &str) -> (String, Option<String>) {
    let (page, fragment) = page_url.split_once('#').map_or((page_url, None), |(p, f)| (p, Some(f)));
    let token = fragment.and_then(|f| f.strip_prefix("token=")).map(str::to_owned);
    (format!("{}/rfb", page.replacen("http://", "ws://", 1)), token)
}

/// Opens the stream of a viewer page URL, with the URL's own token.
pub async fn open(page_url: &str) -> Result<Rfb, Refusal> {
    let (url, token) = stream_of(page_url);
    connect(&url, token.as_deref()).await
}

/// How many of an RGB `frame`'s pixels are those of the PNG `png` (of the
/// same size).
#[must_use]
pub fn matching_pixels(frame: &[u8], png: &[u8]) -> usize {
    let mut reader = png::Decoder::new(std::io::Cursor::new(png)).read_info().unwrap();
    let mut image = vec![0u8; reader.output_buffer_size().unwrap()];
    let channels = reader.next_frame(&mut image).unwrap().color_type.samples();
    (0..frame.len() / 3)
        .filter(|i| frame[i * 3..i * 3 + 3] == image[i * channels..i * channels + 3])
        .count()
}
