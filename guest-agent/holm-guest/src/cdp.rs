//! A thin Chrome DevTools Protocol client: one WebSocket connection to one
//! target (the browser, or one page), commands with ids, and events.
//!
//! Only the fields holm reads are ever looked at, always from a
//! `serde_json::Value`, so a message of a kind this client has never heard of
//! (a new event, a new field, a new domain) is ignored instead of breaking the
//! session: typed CDP bindings fail on schema drift between Chromium versions.
//! Events reach only the callers that subscribed ([`Cdp::events`]) before
//! sending the command they wait on; nobody buffers them otherwise.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_util::sync::CancellationToken;

/// How long a command waits for its answer unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest message accepted: full-page screenshots come back as one
/// base64 string.
const MAX_MESSAGE: usize = 512 << 20;

/// What a CDP call can fail with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CdpError {
    /// The connection could not be made.
    Connect(String),
    /// The connection closed before the answer came.
    Closed,
    /// No answer in time.
    Timeout {
        /// The command.
        method: String,
    },
    /// Chromium answered with an error.
    Protocol {
        /// The command.
        method: String,
        /// CDP's error code, such as -32000.
        code: i64,
        /// CDP's message.
        message: String,
    },
}

impl std::fmt::Display for CdpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Connect(e) => write!(f, "cannot connect to DevTools: {e}"),
            Self::Closed => f.write_str("the DevTools connection closed"),
            Self::Timeout { method } => write!(f, "{method} did not answer in time"),
            Self::Protocol { method, code, message } => {
                write!(f, "{method} failed: {message} ({code})")
            }
        }
    }
}

impl std::error::Error for CdpError {}

/// An event from the target, such as `Page.lifecycleEvent`.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The event's name.
    pub method: String,
    /// Its parameters (`null` when it has none).
    pub params: Value,
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, (i64, String)>>>>>;

/// One DevTools connection.
#[derive(Debug)]
pub struct Cdp {
    out: mpsc::UnboundedSender<Message>,
    pending: Pending,
    events: broadcast::Sender<Arc<Event>>,
    next_id: AtomicU64,
    closed: CancellationToken,
}

impl Cdp {
    /// Connects to a DevTools WebSocket URL, such as
    /// `ws://127.0.0.1:9300/devtools/page/<id>`.
    pub async fn connect(url: &str) -> Result<Arc<Self>, CdpError> {
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        // tungstenite sends no Origin header, which Chromium (111+) accepts
        // without `--remote-allow-origins`.
        let (ws, _) = tokio::time::timeout(
            Duration::from_secs(10),
            tokio_tungstenite::connect_async_with_config(url, Some(config), true),
        )
        .await
        .map_err(|_| CdpError::Connect("timed out".into()))?
        .map_err(|e| CdpError::Connect(e.to_string()))?;
        let (mut sink, mut stream) = ws.split();
        let (out, mut rx) = mpsc::unbounded_channel::<Message>();
        let pending: Pending = Arc::default();
        let (events, _) = broadcast::channel(1024);
        let closed = CancellationToken::new();
        let cdp = Arc::new(Self {
            out,
            pending: Arc::clone(&pending),
            events: events.clone(),
            next_id: AtomicU64::new(1),
            closed: closed.clone(),
        });
        let writer_closed = closed.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = writer_closed.cancelled() => break,
                    m = rx.recv() => match m {
                        Some(m) => if sink.send(m).await.is_err() { break },
                        None => break,
                    },
                }
            }
            writer_closed.cancel();
            let _ = sink.close().await;
        });
        tokio::spawn(async move {
            loop {
                let next = tokio::select! {
                    () = closed.cancelled() => break,
                    next = stream.next() => next,
                };
                match next {
                    Some(Ok(Message::Text(text))) => dispatch(text.as_bytes(), &pending, &events),
                    // Pings are answered by tungstenite; nothing else is CDP.
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                    Some(Ok(_)) => {}
                }
            }
            closed.cancel();
            // Whoever still waits learns the connection is gone.
            pending.lock().unwrap_or_else(|e| e.into_inner()).clear();
        });
        Ok(cdp)
    }

    /// Sends a command and waits up to [`DEFAULT_TIMEOUT`] for its result.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, CdpError> {
        self.call_timeout(method, params, DEFAULT_TIMEOUT).await
    }

    /// Sends a command and waits up to `timeout` for its result.
    pub async fn call_timeout(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, CdpError> {
        if self.closed.is_cancelled() {
            return Err(CdpError::Closed);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).insert(id, tx);
        let message = json!({ "id": id, "method": method, "params": params }).to_string();
        if self.out.send(Message::Text(message.into())).is_err() {
            self.forget(id);
            return Err(CdpError::Closed);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err((code, message)))) => {
                Err(CdpError::Protocol { method: method.to_owned(), code, message })
            }
            Ok(Err(_)) => Err(CdpError::Closed),
            Err(_) => {
                self.forget(id);
                Err(CdpError::Timeout { method: method.to_owned() })
            }
        }
    }

    fn forget(&self, id: u64) {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
    }

    /// Events from now on. Subscribe before sending the command whose events
    /// you wait for.
    pub fn events(&self) -> broadcast::Receiver<Arc<Event>> {
        self.events.subscribe()
    }

    /// Whether the connection has closed.
    pub fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    /// Closes the connection.
    pub fn close(&self) {
        self.closed.cancel();
    }
}

impl Drop for Cdp {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

/// Routes one incoming message: an answer to its caller, an event to the
/// subscribers. Anything else, or anything that is not JSON, is dropped.
fn dispatch(text: &[u8], pending: &Pending, events: &broadcast::Sender<Arc<Event>>) {
    let Ok(v) = serde_json::from_slice::<Value>(text) else {
        tracing::debug!("ignoring a DevTools message that is not JSON");
        return;
    };
    if let Some(id) = v.get("id").and_then(Value::as_u64) {
        let Some(tx) = pending.lock().unwrap_or_else(|e| e.into_inner()).remove(&id) else {
            return;
        };
        let answer = match v.get("error") {
            Some(err) => Err((
                err.get("code").and_then(Value::as_i64).unwrap_or(0),
                err.get("message").and_then(Value::as_str).unwrap_or("unknown error").to_owned(),
            )),
            None => Ok(v.get("result").cloned().unwrap_or(Value::Null)),
        };
        let _ = tx.send(answer);
    } else if let Some(method) = v.get("method").and_then(Value::as_str) {
        // No subscriber is the usual case: the send fails and the event goes.
        let _ = events.send(Arc::new(Event {
            method: method.to_owned(),
            params: v.get("params").cloned().unwrap_or(Value::Null),
        }));
    }
}

/// Sends one HTTP/1.1 request to Chromium's DevTools server on loopback and
/// answers the status and body. `Host` is loopback, which Chromium requires
/// (it refuses other hosts against DNS rebinding).
pub async fn devtools_http(
    port: u16,
    method: http::Method,
    path_and_query: &str,
) -> Result<(http::StatusCode, http::HeaderMap, Bytes), CdpError> {
    let attempt = async {
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .map_err(|e| CdpError::Connect(e.to_string()))?;
        let _ = tcp.set_nodelay(true);
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
                .await
                .map_err(|e| CdpError::Connect(e.to_string()))?;
        tokio::spawn(conn);
        let request = http::Request::builder()
            .method(method)
            .uri(path_and_query)
            .header(http::header::HOST, format!("127.0.0.1:{port}"))
            .body(Full::new(Bytes::new()))
            .map_err(|e| CdpError::Connect(e.to_string()))?;
        let response =
            sender.send_request(request).await.map_err(|e| CdpError::Connect(e.to_string()))?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| CdpError::Connect(e.to_string()))?
            .to_bytes();
        Ok((status, headers, body))
    };
    tokio::time::timeout(Duration::from_secs(10), attempt)
        .await
        .map_err(|_| CdpError::Timeout { method: format!("GET {path_and_query}") })?
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    /// A fake DevTools target: answers each command after sending things a
    /// client has never heard of.
    async fn fake_target() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
            while let Some(Ok(Message::Text(t))) = ws.next().await {
                let v: Value = serde_json::from_str(&t).unwrap();
                let id = v["id"].as_u64().unwrap();
                for noise in [
                    json!({"method": "Brand.newEvent", "params": {"x": [1, 2, {"y": null}]}}),
                    json!({"something": "else entirely"}),
                    json!({"id": 999_999, "result": {}}),
                    json!([1, 2, 3]),
                ] {
                    ws.send(Message::Text(noise.to_string().into())).await.unwrap();
                }
                ws.send(Message::Text("not json at all".into())).await.unwrap();
                ws.send(Message::Binary(vec![0, 1, 2].into())).await.unwrap();
                let answer = match v["method"].as_str().unwrap() {
                    "Fail.please" => {
                        json!({"id": id, "error": {"code": -32000, "message": "no such thing"}})
                    }
                    "Silent.please" => continue,
                    "Close.please" => break,
                    m => json!({"id": id, "result": {"echo": m, "params": v["params"]}}),
                };
                ws.send(Message::Text(answer.to_string().into())).await.unwrap();
            }
        });
        format!("ws://{addr}")
    }

    #[tokio::test]
    async fn unknown_messages_are_ignored_and_answers_still_arrive() {
        let cdp = Cdp::connect(&fake_target().await).await.unwrap();
        let mut events = cdp.events();
        let r = cdp.call("Browser.getVersion", json!({"a": 1})).await.unwrap();
        assert_eq!(r, json!({"echo": "Browser.getVersion", "params": {"a": 1}}));
        // The unknown event reached the subscriber, and nothing else did.
        let e = events.try_recv().unwrap();
        assert_eq!(e.method, "Brand.newEvent");
        assert!(events.try_recv().is_err());
        // The session goes on after all that.
        let r = cdp.call("Runtime.evaluate", json!({})).await.unwrap();
        assert_eq!(r["echo"], "Runtime.evaluate");
    }

    #[tokio::test]
    async fn errors_timeouts_and_closing_are_told_apart() {
        let cdp = Cdp::connect(&fake_target().await).await.unwrap();
        let e = cdp.call("Fail.please", json!({})).await.unwrap_err();
        assert_eq!(
            e,
            CdpError::Protocol {
                method: "Fail.please".into(),
                code: -32000,
                message: "no such thing".into()
            }
        );
        let e = cdp
            .call_timeout("Silent.please", json!({}), Duration::from_millis(50))
            .await
            .unwrap_err();
        assert_eq!(e, CdpError::Timeout { method: "Silent.please".into() });
        // The timed-out command left nothing behind, and the session goes on.
        assert!(cdp.pending.lock().unwrap().is_empty());
        cdp.call("Still.there", json!({})).await.unwrap();
        let e = cdp.call("Close.please", json!({})).await.unwrap_err();
        assert_eq!(e, CdpError::Closed);
        assert!(cdp.is_closed());
        assert_eq!(cdp.call("After.close", json!({})).await.unwrap_err(), CdpError::Closed);
    }

    #[test]
    fn answers_without_a_caller_and_odd_shapes_are_dropped() {
        let pending: Pending = Arc::default();
        let (events, mut rx) = broadcast::channel(4);
        for m in [&b"{\"id\": 5, \"result\": 1}"[..], b"{\"method\": 3}", b"null", b"{"] {
            dispatch(m, &pending, &events);
        }
        assert!(rx.try_recv().is_err());
        let (tx, mut answer) = oneshot::channel();
        pending.lock().unwrap().insert(7, tx);
        dispatch(
            br#"{"id": 7, "sessionId": "x", "result": {"ok": true}, "extra": 1}"#,
            &pending,
            &events,
        );
        assert_eq!(answer.try_recv().unwrap(), Ok(json!({"ok": true})));
    }
}
