//! Debugging a box at its agent: a short-lived credential that opens one
//! box's guest API straight from the host, without the server in between.
//!
//! holmd asks the guest for a credential (`POST /v1/agent/tokens`, with the
//! box secret) and answers it as an [`AgentAccess`]
//! (`POST /v1/boxes/{id}/agent`). The credential is random, made and known
//! only by that box's guest (which keeps its SHA-256, never the credential),
//! so no other box takes it; it is never the box secret; it expires; and
//! `DELETE /v1/boxes/{id}/agent` (the guest's `DELETE /v1/agent/tokens`)
//! revokes every one of the box's. It opens every guest route except those
//! that manage credentials: the box secret, the bridge's secret and tickets,
//! the viewers' key, and agent credentials themselves.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{ApiError, Issue};

/// A credential's lifetime unless asked otherwise: five minutes.
pub const DEFAULT_AGENT_TTL_SECS: u32 = 300;
/// The longest lifetime of a credential: an hour.
pub const MAX_AGENT_TTL_SECS: u32 = 3600;
/// What every agent credential starts with.
pub const AGENT_TOKEN_PREFIX: &str = "hag_";

/// `POST /v1/agent/tokens` on the guest, `POST /v1/boxes/{id}/agent` on the
/// server: a new credential.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgentRequest {
    /// How long the credential opens the guest, in seconds (default 300, 1 to 3600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_secs: Option<u32>,
}

/// A credential made by a guest.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgentToken {
    /// `hag_` and 48 hex digits: send it as `Authorization: Bearer <token>`.
    pub token: String,
    /// Seconds from now until the guest refuses it.
    pub expires_in_secs: u32,
}

impl fmt::Debug for AgentToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentToken")
            .field("token", &"<hidden>")
            .field("expires_in_secs", &self.expires_in_secs)
            .finish()
    }
}

/// How to reach a box's guest API straight from the server's host: the
/// answer of `POST /v1/boxes/{id}/agent`. It holds a credential: do not log
/// it. `curl -H "Authorization: Bearer …" {url}/v1/info`.
#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentAccess {
    /// The box's id.
    pub box_id: String,
    /// The guest API's address, such as `http://127.0.0.1:49153`.
    pub url: String,
    /// The guest's own OpenAPI document, `{url}/v1/openapi.json`.
    pub openapi_url: String,
    /// The headers every request to `url` needs: `Authorization: Bearer
    /// <credential>` (and a runtime's proxy header, if it has one). The
    /// credential opens this box's guest only, and is not the box secret.
    pub headers: BTreeMap<String, String>,
    /// When the guest stops taking the credential, in RFC 3339.
    pub expires_at: String,
}

impl fmt::Debug for AgentAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentAccess")
            .field("box_id", &self.box_id)
            .field("url", &self.url)
            .field("headers", &"<hidden>")
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// The lifetime asked for (default [`DEFAULT_AGENT_TTL_SECS`], 1 to
/// [`MAX_AGENT_TTL_SECS`]), or the one error shape naming `ttl_secs`.
pub fn check_ttl(ttl_secs: Option<u32>) -> Result<u32, ApiError> {
    let ttl = ttl_secs.unwrap_or(DEFAULT_AGENT_TTL_SECS);
    if !(1..=MAX_AGENT_TTL_SECS).contains(&ttl) {
        return Err(ApiError::invalid_fields(vec![Issue {
            path: "ttl_secs".into(),
            problem: format!("must be 1 to {MAX_AGENT_TTL_SECS} seconds, not {ttl}"),
        }]));
    }
    Ok(ttl)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn ttl_is_bounded() {
        assert_eq!(check_ttl(None), Ok(DEFAULT_AGENT_TTL_SECS));
        assert_eq!(check_ttl(Some(1)), Ok(1));
        assert_eq!(check_ttl(Some(MAX_AGENT_TTL_SECS)), Ok(MAX_AGENT_TTL_SECS));
        for bad in [0, MAX_AGENT_TTL_SECS + 1, u32::MAX] {
            let e = check_ttl(Some(bad)).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidRequest);
            assert!(e.message.starts_with("ttl_secs"), "{}", e.message);
        }
    }

    #[test]
    fn debug_hides_the_credential() {
        let token = AgentToken { token: "hag_secret".into(), expires_in_secs: 5 };
        let access = AgentAccess {
            box_id: "box_a".into(),
            url: "http://127.0.0.1:1".into(),
            openapi_url: "http://127.0.0.1:1/v1/openapi.json".into(),
            headers: [("Authorization".to_owned(), "Bearer hag_secret".to_owned())].into(),
            expires_at: "2026-01-01T00:00:00Z".into(),
        };
        for shown in [format!("{token:?}"), format!("{access:?}")] {
            assert!(!shown.contains("hag_secret"), "{shown}");
        }
    }
}
