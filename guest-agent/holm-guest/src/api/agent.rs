//! Agent credentials: short-lived bearer tokens that open this guest's API
//! to a person debugging the box from the host (`holm agent BOX`), without
//! the box secret.
//!
//! holmd asks for one with the box secret (`POST /v1/agent/tokens`) and
//! revokes them all with `DELETE /v1/agent/tokens`. The guest keeps only the
//! SHA-256 of each token and its expiry, in memory: a restarted guest (a
//! started box, a fork) knows none. A token is random, made here, so no
//! other box's guest takes it. It opens every route but those that manage
//! credentials ([`is_credential_route`]), and never reaches a log.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use holm_proto::agent::{AGENT_TOKEN_PREFIX, AgentRequest, AgentToken, check_ttl};
use holm_proto::{ApiError, ErrorCode};
use sha2::{Digest, Sha256};

/// Tokens held at most; past this the one expiring first goes.
const MAX_TOKENS: usize = 256;

/// Whether `route` is one an agent credential cannot call: it manages the
/// box's credentials, so a debugging credential could otherwise outlive
/// itself or lock the server out. The contract tags them `credentials`.
pub fn is_credential_route(route: &holm_proto::contract::GuestRoute) -> bool {
    route.op.tag == "credentials"
}

/// What a token check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// A live token.
    Valid,
    /// Not a token this guest made, or one revoked or expired.
    Unknown,
}

/// The live tokens, by the SHA-256 of each.
#[derive(Default)]
pub struct AgentTokens(Mutex<HashMap<[u8; 32], Instant>>);

impl std::fmt::Debug for AgentTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentTokens(<hidden>)")
    }
}

impl AgentTokens {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Instant>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes a token that opens the API for `ttl_secs` (see [`check_ttl`]).
    pub fn issue(&self, request: &AgentRequest) -> Result<AgentToken, ApiError> {
        let ttl = check_ttl(request.ttl_secs)?;
        let token = self.issue_at(Instant::now(), Duration::from_secs(u64::from(ttl)));
        tracing::info!(ttl_secs = ttl, "an agent credential was issued");
        Ok(AgentToken { token, expires_in_secs: ttl })
    }

    fn issue_at(&self, now: Instant, ttl: Duration) -> String {
        let mut bytes = [0u8; 24];
        holm_http::random_bytes(&mut bytes);
        let token: String = std::iter::once(AGENT_TOKEN_PREFIX.to_owned())
            .chain(bytes.iter().map(|b| format!("{b:02x}")))
            .collect();
        let mut tokens = self.lock();
        tokens.retain(|_, expires| *expires > now);
        if tokens.len() >= MAX_TOKENS
            && let Some(first) = tokens.iter().min_by_key(|(_, e)| **e).map(|(d, _)| *d)
        {
            tokens.remove(&first);
        }
        tokens.insert(Sha256::digest(token.as_bytes()).into(), now + ttl);
        token
    }

    /// Revokes every token; answers how many were live.
    pub fn revoke_all(&self) -> usize {
        let now = Instant::now();
        let mut tokens = self.lock();
        let live = tokens.values().filter(|e| **e > now).count();
        tokens.clear();
        drop(tokens);
        tracing::info!(revoked = live, "every agent credential was revoked");
        live
    }

    /// Checks a bearer value.
    pub fn check(&self, given: &[u8]) -> Check {
        self.check_at(given, Instant::now())
    }

    fn check_at(&self, given: &[u8], now: Instant) -> Check {
        if !given.starts_with(AGENT_TOKEN_PREFIX.as_bytes()) {
            return Check::Unknown;
        }
        // Looked up by digest: the time a lookup takes tells nothing about
        // a token.
        let digest: [u8; 32] = Sha256::digest(given).into();
        let mut tokens = self.lock();
        match tokens.get(&digest) {
            Some(expires) if *expires > now => Check::Valid,
            Some(_) => {
                tokens.remove(&digest);
                Check::Unknown
            }
            None => Check::Unknown,
        }
    }
}

/// The refusal of an agent credential this guest does not take.
pub fn unknown_credential() -> ApiError {
    ApiError::new(ErrorCode::Unauthorized, "the agent credential is unknown, revoked or expired")
        .with_hint("ask for a new one: holm agent BOX (POST /v1/boxes/{id}/agent on the server)")
}

/// The refusal of an agent credential on a route that manages credentials.
pub fn credential_route_refused(path: &str) -> ApiError {
    ApiError::new(
        ErrorCode::Forbidden,
        format!("an agent credential cannot call {path}: it manages the box's credentials"),
    )
    .with_hint("only the server, with the box secret, can")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_opens_until_it_expires_or_is_revoked() {
        let tokens = AgentTokens::default();
        let t0 = Instant::now();
        let a = tokens.issue_at(t0, Duration::from_secs(10));
        let b = tokens.issue_at(t0, Duration::from_secs(100));
        assert!(a.starts_with(AGENT_TOKEN_PREFIX) && a.len() == AGENT_TOKEN_PREFIX.len() + 48);
        assert_ne!(a, b);
        assert_eq!(tokens.check_at(a.as_bytes(), t0), Check::Valid);
        assert_eq!(tokens.check_at(a.as_bytes(), t0 + Duration::from_secs(10)), Check::Unknown);
        // Once seen expired, it stays refused.
        assert_eq!(tokens.check_at(a.as_bytes(), t0), Check::Unknown);
        assert_eq!(tokens.check_at(b.as_bytes(), t0 + Duration::from_secs(99)), Check::Valid);
        assert_eq!(tokens.revoke_all(), 1);
        assert_eq!(tokens.check_at(b.as_bytes(), t0), Check::Unknown);
    }

    #[test]
    fn only_a_token_made_here_opens() {
        let here = AgentTokens::default();
        let there = AgentTokens::default();
        let now = Instant::now();
        let theirs = there.issue_at(now, Duration::from_secs(60));
        assert_eq!(here.check_at(theirs.as_bytes(), now), Check::Unknown);
        let ours = here.issue_at(now, Duration::from_secs(60));
        let mut forged = ours.clone().into_bytes();
        let last = forged.len() - 1;
        forged[last] = if forged[last] == b'0' { b'1' } else { b'0' };
        for bad in [&forged[..], b"", AGENT_TOKEN_PREFIX.as_bytes(), &ours.as_bytes()[1..]] {
            assert_eq!(here.check_at(bad, now), Check::Unknown);
        }
    }

    #[test]
    fn tokens_are_capped() {
        let tokens = AgentTokens::default();
        let now = Instant::now();
        let first = tokens.issue_at(now, Duration::from_secs(1));
        for _ in 0..MAX_TOKENS {
            tokens.issue_at(now, Duration::from_secs(60));
        }
        assert_eq!(tokens.lock().len(), MAX_TOKENS);
        assert_eq!(tokens.check_at(first.as_bytes(), now), Check::Unknown);
    }
}
