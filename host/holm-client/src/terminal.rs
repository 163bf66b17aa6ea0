//! [`Terminal`]: a real pty in a box over a WebSocket, through holmd or
//! straight at the guest's endpoint (with the endpoint's headers, so a
//! vendor's proxy passes it as any other request).
//!
//! Bytes go both ways as they are; [`TerminalOutput::Exit`] is the last
//! thing read. Writing to a terminal whose program has ended, or whose
//! connection is gone, is refused with `conflict` in the one error shape.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use holm_proto::terminal::{TerminalEvent, TerminalInput, TerminalQuery, check_size};
use holm_proto::{ApiError, ErrorCode};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::client::generate_key;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

use crate::boxes::BoxClient;
use crate::error::{ClientError, Result, check, transport};

type Ws = WebSocketStream<reqwest::Upgraded>;

/// What a terminal printed, or how it ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TerminalOutput {
    /// Bytes the terminal printed, as they are.
    Data(Bytes),
    /// A text frame this client sent was refused; nothing changed.
    Refused(ApiError),
    /// The program ended; nothing follows.
    Exit {
        /// Its exit code; `None` when a signal ended it.
        exit_code: Option<i32>,
        /// The signal that ended it.
        signal: Option<String>,
    },
}

/// An open terminal in a box.
#[derive(Debug)]
pub struct Terminal {
    /// The process id of its program in the box.
    pub pid: u32,
    /// Its size when it opened.
    pub cols: u16,
    /// Its size when it opened.
    pub rows: u16,
    writer: TerminalWriter,
    reader: TerminalReader,
}

/// The half of a [`Terminal`] that types and resizes.
#[derive(Debug)]
pub struct TerminalWriter {
    sink: SplitSink<Ws, Message>,
    closed: Arc<AtomicBool>,
    url: String,
}

/// The half of a [`Terminal`] that reads what it prints.
#[derive(Debug)]
pub struct TerminalReader {
    stream: SplitStream<Ws>,
    closed: Arc<AtomicBool>,
    url: String,
}

impl BoxClient {
    /// Opens a terminal: `query` says its size, command (default: a login
    /// shell) and working directory.
    pub async fn terminal(&self, query: &TerminalQuery) -> Result<Terminal> {
        let issues = check_size(
            query.cols.unwrap_or(holm_proto::terminal::DEFAULT_COLS),
            query.rows.unwrap_or(holm_proto::terminal::DEFAULT_ROWS),
        );
        if !issues.is_empty() {
            return Err(ClientError::Api(ApiError::invalid_fields(issues)));
        }
        let (url, rb) = self.open(&holm_proto::contract::TERMINAL, &[])?;
        let key = generate_key();
        let rb = rb
            .query(query)
            .header(reqwest::header::CONNECTION, "Upgrade")
            .header(reqwest::header::UPGRADE, "websocket")
            .header(reqwest::header::SEC_WEBSOCKET_VERSION, "13")
            .header(reqwest::header::SEC_WEBSOCKET_KEY, &key);
        let response = rb.send().await.map_err(transport(&url))?;
        if response.status() != reqwest::StatusCode::SWITCHING_PROTOCOLS {
            // An answer in the one error shape; any other non-101 is a
            // protocol error.
            check(&url, response).await?;
            return Err(protocol(&url, "the server did not switch to a WebSocket"));
        }
        let accept = response
            .headers()
            .get(reqwest::header::SEC_WEBSOCKET_ACCEPT)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if accept.as_deref() != Some(derive_accept_key(key.as_bytes()).as_str()) {
            return Err(protocol(&url, "the WebSocket answer has a wrong Sec-WebSocket-Accept"));
        }
        let upgraded = response.upgrade().await.map_err(transport(&url))?;
        let ws = WebSocketStream::from_raw_socket(upgraded, Role::Client, None).await;
        let (sink, mut stream) = ws.split();
        // The first frame says the terminal runs.
        let (pid, cols, rows) = loop {
            match stream.next().await {
                Some(Ok(Message::Text(t))) => match serde_json::from_str(t.as_str()) {
                    Ok(TerminalEvent::Ready { pid, cols, rows }) => break (pid, cols, rows),
                    _ => return Err(protocol(&url, "the terminal's first frame is not ready")),
                },
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                _ => return Err(protocol(&url, "the terminal closed before it was ready")),
            }
        };
        let closed = Arc::new(AtomicBool::new(false));
        Ok(Terminal {
            pid,
            cols,
            rows,
            writer: TerminalWriter { sink, closed: Arc::clone(&closed), url: url.clone() },
            reader: TerminalReader { stream, closed, url },
        })
    }
}

fn protocol(url: &str, message: &str) -> ClientError {
    ClientError::Protocol { url: url.to_owned(), message: message.to_owned() }
}

impl Terminal {
    /// The two halves, to read and write at once.
    pub fn split(self) -> (TerminalWriter, TerminalReader) {
        (self.writer, self.reader)
    }

    /// Types bytes into the terminal.
    pub async fn write(&mut self, data: impl Into<Bytes>) -> Result<()> {
        self.writer.write(data).await
    }

    /// Changes its size; its programs get `SIGWINCH`.
    pub async fn resize(&mut self, cols: u16, rows: u16) -> Result<()> {
        self.writer.resize(cols, rows).await
    }

    /// What it printed next, or how it ended; `None` after the end.
    pub async fn next(&mut self) -> Option<Result<TerminalOutput>> {
        self.reader.next().await
    }

    /// Reads until the program ends: everything it printed, and its exit.
    pub async fn wait(self) -> Result<(Vec<u8>, TerminalOutput)> {
        let (_writer, mut reader) = self.split();
        let mut out = Vec::new();
        while let Some(item) = reader.next().await {
            match item? {
                TerminalOutput::Data(d) => out.extend_from_slice(&d),
                TerminalOutput::Refused(_) => {}
                exit @ TerminalOutput::Exit { .. } => return Ok((out, exit)),
            }
        }
        Err(protocol(&reader.url, "the terminal closed without saying how its program ended"))
    }
}

impl TerminalWriter {
    fn refuse_closed(&self) -> Result<()> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(closed_error());
        }
        Ok(())
    }

    async fn send(&mut self, message: Message) -> Result<()> {
        self.refuse_closed()?;
        self.sink.send(message).await.map_err(|_| {
            self.closed.store(true, Ordering::SeqCst);
            closed_error()
        })
    }

    /// Types bytes into the terminal.
    pub async fn write(&mut self, data: impl Into<Bytes>) -> Result<()> {
        self.send(Message::binary(data.into())).await
    }

    /// Changes its size; its programs get `SIGWINCH`. A size out of range is
    /// refused here, as the box would refuse it.
    pub async fn resize(&mut self, cols: u16, rows: u16) -> Result<()> {
        let issues = check_size(cols, rows);
        if !issues.is_empty() {
            return Err(ClientError::Api(ApiError::invalid_fields(issues)));
        }
        let text = serde_json::to_string(&TerminalInput::Resize { cols, rows })
            .map_err(|e| protocol(&self.url, &e.to_string()))?;
        self.send(Message::text(text)).await
    }

    /// Closes the connection: the box hangs the terminal up (`SIGHUP`).
    pub async fn close(mut self) {
        let _ = self.sink.close().await;
    }
}

fn closed_error() -> ClientError {
    ClientError::Api(
        ApiError::new(
            ErrorCode::Conflict,
            "the terminal has closed: its program ended or its connection is gone",
        )
        .with_hint("open another terminal"),
    )
}

impl TerminalReader {
    /// What it printed next, or how it ended; `None` after the end.
    pub async fn next(&mut self) -> Option<Result<TerminalOutput>> {
        loop {
            let frame = match self.stream.next().await {
                Some(Ok(m)) => m,
                Some(Err(e)) => {
                    self.closed.store(true, Ordering::SeqCst);
                    return Some(Err(protocol(&self.url, &e.to_string())));
                }
                None => {
                    self.closed.store(true, Ordering::SeqCst);
                    return None;
                }
            };
            match frame {
                Message::Binary(b) => return Some(Ok(TerminalOutput::Data(b))),
                Message::Text(t) => match serde_json::from_str::<TerminalEvent>(t.as_str()) {
                    Ok(TerminalEvent::Exit { exit_code, signal }) => {
                        self.closed.store(true, Ordering::SeqCst);
                        return Some(Ok(TerminalOutput::Exit { exit_code, signal }));
                    }
                    Ok(TerminalEvent::Error { error }) => {
                        return Some(Ok(TerminalOutput::Refused(error)));
                    }
                    Ok(TerminalEvent::Ready { .. }) => {}
                    Err(e) => return Some(Err(protocol(&self.url, &e.to_string()))),
                },
                Message::Close(_) => {
                    self.closed.store(true, Ordering::SeqCst);
                    return None;
                }
                _ => {}
            }
        }
    }
}
