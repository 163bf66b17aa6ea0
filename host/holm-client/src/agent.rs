//! Debugging a box at its agent, on [`BoxClient`]: a short-lived credential
//! that opens the box's guest API straight from the host.
//!
//! Through holmd these are `POST|DELETE /v1/boxes/{id}/agent`; straight
//! against a guest, `POST|DELETE /v1/agent/tokens`.

use std::time::{Duration, SystemTime};

use holm_proto::agent::{AgentAccess, AgentRequest, AgentToken};
use holm_proto::contract::{self, server};

use crate::boxes::BoxClient;
use crate::endpoint::Endpoint;
use crate::error::Result;

impl BoxClient {
    /// How to reach the box's guest from the server's host, with a new
    /// credential that lives `ttl_secs` (default 300, at most 3600)
    /// (through holmd).
    pub async fn agent(&self, ttl_secs: Option<u32>) -> Result<AgentAccess> {
        self.call_own(&server::AGENT, &[], &(), &AgentRequest { ttl_secs }).await
    }

    /// Revokes every agent credential of the box (through holmd).
    pub async fn revoke_agent(&self) -> Result<()> {
        self.call_own(&server::REVOKE_AGENT, &[], &(), &()).await
    }

    /// Makes an agent credential (straight against a guest only).
    pub async fn agent_token(&self, ttl_secs: Option<u32>) -> Result<AgentToken> {
        self.call(&contract::AGENT_TOKEN, &[], &AgentRequest { ttl_secs }).await
    }

    /// Revokes every agent credential (straight against a guest only).
    pub async fn revoke_agent_tokens(&self) -> Result<()> {
        self.call(&contract::REVOKE_AGENT_TOKENS, &[], &()).await
    }
}

/// Makes an [`AgentAccess`] for box `box_id`: a credential from its guest,
/// and the guest's endpoint as the host reaches it. The headers are the
/// endpoint's (a vendor proxy's token) and the credential's `Authorization`.
pub async fn agent_access(
    box_id: &str,
    guest: &BoxClient,
    endpoint: &Endpoint,
    ttl_secs: Option<u32>,
) -> Result<AgentAccess> {
    let token = guest.agent_token(ttl_secs).await?;
    let expires = SystemTime::now() + Duration::from_secs(u64::from(token.expires_in_secs));
    let mut headers: std::collections::BTreeMap<String, String> =
        endpoint.headers().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
    headers.insert("Authorization".to_owned(), format!("Bearer {}", token.token));
    Ok(AgentAccess {
        box_id: box_id.to_owned(),
        url: endpoint.url().to_owned(),
        openapi_url: endpoint.join(contract::OPENAPI.route.path),
        headers,
        expires_at: humantime::format_rfc3339_seconds(expires).to_string(),
    })
}
