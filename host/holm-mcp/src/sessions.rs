//! MCP sessions, at most [`MAX_SESSIONS`] at once.
//!
//! A 2025-11-25 host holds a session (`Mcp-Session-Id`) for as long as it
//! uses it, and it ends an hour after its last request. A client that opens
//! sessions and forgets them would otherwise hold one worker each for that
//! hour. [`Capped`] is rmcp's in-memory session manager with a bound: when a
//! new session would pass it, the session **least recently used** (the one
//! whose last request is oldest) is closed first, so a new host always gets
//! a session and a busy one keeps its own. A host whose session was closed
//! gets a 404 on its next request and starts a new session, as it does
//! after the idle timeout.

use std::collections::HashMap;
use std::sync::Mutex;

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::server_side_http::ServerSseMessage;
use rmcp::transport::streamable_http_server::SessionId;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};

/// The most MCP sessions holmd keeps at once.
pub const MAX_SESSIONS: usize = 256;

/// rmcp's local session manager, keeping at most `max` sessions.
#[derive(Debug)]
pub struct Capped {
    inner: LocalSessionManager,
    max: usize,
    /// Each session's last use, as a tick of `clock`.
    used: Mutex<(u64, HashMap<SessionId, u64>)>,
}

impl Capped {
    /// `inner` with at most `max` sessions (at least one).
    pub fn new(inner: LocalSessionManager, max: usize) -> Self {
        Self { inner, max: max.max(1), used: Mutex::default() }
    }

    fn touch(&self, id: &SessionId) {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        used.0 += 1;
        let tick = used.0;
        if let Some(t) = used.1.get_mut(id) {
            *t = tick;
        }
    }

    /// The sessions to close so that one more fits: the least recently
    /// used first.
    fn over(&self) -> Vec<SessionId> {
        let used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        let n = (used.1.len() + 1).saturating_sub(self.max);
        let mut by_age: Vec<(&SessionId, &u64)> = used.1.iter().collect();
        by_age.sort_by_key(|(_, t)| **t);
        by_age.into_iter().take(n).map(|(id, _)| id.clone()).collect()
    }
}

impl SessionManager for Capped {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        for old in self.over() {
            tracing::info!(
                max = self.max,
                "MCP sessions are at their limit; closing the least recently used"
            );
            self.close_session(&old).await?;
        }
        let (id, transport) = self.inner.create_session().await?;
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        used.0 += 1;
        let tick = used.0;
        used.1.insert(id.clone(), tick);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.used.lock().unwrap_or_else(|e| e.into_inner()).1.remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past the bound, the least recently used session is closed to make
    /// room, and the others are kept.
    #[tokio::test]
    async fn a_session_past_the_bound_closes_the_least_recently_used() {
        let m = Capped::new(LocalSessionManager::default(), 2);
        let (a, _ta) = m.create_session().await.unwrap();
        let (b, _tb) = m.create_session().await.unwrap();
        // `a` is used after `b`: `b` is now the least recently used.
        let ping: ClientJsonRpcMessage = serde_json::from_value(serde_json::json!(
            {"jsonrpc": "2.0", "method": "notifications/initialized"}
        ))
        .unwrap();
        let _ = m.accept_message(&a, ping).await;
        let (c, _tc) = m.create_session().await.unwrap();
        assert!(m.has_session(&a).await.unwrap(), "the recently used session is kept");
        assert!(!m.has_session(&b).await.unwrap(), "the least recently used is closed");
        assert!(m.has_session(&c).await.unwrap(), "the new session is made");
        assert_eq!(m.inner.sessions.read().await.len(), 2);
        // Once more: `a` is now the oldest use.
        let (d, _td) = m.create_session().await.unwrap();
        assert!(!m.has_session(&a).await.unwrap());
        assert!(m.has_session(&c).await.unwrap() && m.has_session(&d).await.unwrap());
        assert_eq!(m.inner.sessions.read().await.len(), 2);
    }
}
