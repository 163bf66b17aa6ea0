//! The Chromium bridge: its secret, tickets and status.

use super::*;

// ---------------------------------------------------------------------------
// The Chromium bridge

/// The port the guest's Chromium bridge listens on inside a box.
pub const BRIDGE_PORT: u16 = 9223;

/// The path prefix of a bridge URL that carries a ticket: `/t/<ticket>/json/version`.
pub const TICKET_PREFIX: &str = "/t/";

/// `PUT /v1/secret`: the box secret every later request needs. Asked with
/// the current secret; once answered, the old one is refused. The server
/// sets it when it hands a pooled box to its new owner, so nothing issued
/// before the claim works after it. Never forwarded from the server's API.
///
/// Exactly one of the two is given: the secret, or only its SHA-256 (what a
/// runtime that never holds the secret itself sends, such as the
/// `kubernetes` runtime giving a claimed agent-sandbox its box's secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BoxSecret {
    /// At least 32 characters. Never logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<crate::Secret>,
    /// The secret's SHA-256, as 64 hexadecimal digits. Never logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_sha256: Option<crate::Secret>,
}

/// `PUT /v1/bridge/secret`: the secret the bridge on port 9223 asks for.
///
/// A new secret restarts the bridge: every connection opened with the old one
/// is closed and every ticket is forgotten. The same secret again changes
/// nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BridgeSecret {
    /// At least 32 characters. Never logged.
    pub secret: crate::Secret,
}

/// `POST /v1/bridge/tickets`: a short-lived ticket for a client that cannot
/// send headers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TicketRequest {
    /// How long the ticket opens a connection, in seconds (default 60, 1 to 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_secs: Option<u32>,
}

/// A bridge ticket. It goes in the URL path, `/t/<ticket>/json/version`; the
/// `/json` answers under it keep the prefix in their WebSocket URLs. It opens
/// one WebSocket connection, within its lifetime; that connection then lives
/// on. It is random, never the secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Ticket {
    /// The ticket.
    pub ticket: String,
    /// Seconds from now until it can no longer open a connection.
    pub expires_in_secs: u32,
}

impl fmt::Debug for Ticket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ticket")
            .field("ticket", &"<hidden>")
            .field("expires_in_secs", &self.expires_in_secs)
            .finish()
    }
}

/// `GET /v1/bridge`: the bridge's state, without its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BridgeStatus {
    /// The port inside the box.
    pub port: u16,
    /// Whether a secret is set; without one the bridge refuses everything.
    pub secret_set: bool,
    /// Whether this box runs a browser.
    pub browser: bool,
    /// WebSocket connections open through the bridge now.
    pub connections: u32,
    /// Tickets issued that can still open a connection.
    pub tickets: u32,
}
