//! [`VendorError`]: a cloud vendor's refusal or failure, as holm reports it.
//!
//! It keeps what a person needs to follow the failure up with the vendor —
//! the HTTP status, the vendor's own error code and message, and the
//! vendor's request id — and never the key: the message is scrubbed of it
//! before it is kept, whatever the vendor echoed.

use std::fmt;
use std::time::Duration;

/// A call to a cloud vendor that failed: its [`Detail`], boxed so results
/// stay small.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VendorError(Box<Detail>);

/// What is known of a vendor's failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detail {
    /// The vendor, such as `e2b`.
    pub vendor: &'static str,
    /// What holm asked the vendor to do, such as "create a sandbox".
    pub what: String,
    /// The HTTP status, or `None` when no answer came (the vendor could not
    /// be reached, or the connection broke).
    pub status: Option<u16>,
    /// The vendor's own error code, when it gives one (E2B's `error_code`,
    /// Daytona's `error`).
    pub code: Option<String>,
    /// The vendor's message, scrubbed of the key.
    pub message: String,
    /// The vendor's id of the request, for its support.
    pub request_id: Option<String>,
    /// How long the vendor asked to wait before another try (`Retry-After`).
    pub retry_after: Option<Duration>,
}

/// What a caller is willing to have repeated after a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// The call does the same thing however often it is made (a read, a
    /// delete, setting a timeout): repeat it after 429, 5xx and broken
    /// connections.
    Idempotent,
    /// The call makes something (a sandbox): repeat it only where the vendor
    /// surely did nothing (429, or a connection that never opened). After a
    /// 5xx the caller looks for what the call may have made first.
    NotTwice,
    /// One try: a question whose answer is wanted now (is the vendor up?).
    Never,
}

impl std::ops::Deref for VendorError {
    type Target = Detail;

    fn deref(&self) -> &Detail {
        &self.0
    }
}

impl std::ops::DerefMut for VendorError {
    fn deref_mut(&mut self) -> &mut Detail {
        &mut self.0
    }
}

impl From<Detail> for VendorError {
    fn from(d: Detail) -> Self {
        Self(Box::new(d))
    }
}

impl VendorError {
    /// With the vendor's HTTP status.
    #[must_use]
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// With the vendor's request id.
    #[must_use]
    pub fn with_request_id(mut self, id: Option<String>) -> Self {
        self.request_id = id;
        self
    }

    /// An error for a call that got no answer.
    pub fn transport(vendor: &'static str, what: &str, e: &reqwest::Error) -> Self {
        // reqwest's message can carry the URL; ours hold no credential, but
        // a query string could, so only the kind of failure is kept.
        let kind = if e.is_connect() {
            "cannot connect"
        } else if e.is_timeout() {
            "timed out"
        } else if e.is_body() || e.is_decode() {
            "the answer broke off"
        } else {
            "the request failed"
        };
        Detail {
            vendor,
            what: what.to_owned(),
            status: None,
            code: None,
            message: format!("{kind}{}", source_kind(e)),
            request_id: None,
            retry_after: None,
        }
        .into()
    }

    /// An error made by holm about a vendor's answer (one it cannot read).
    pub fn answer(vendor: &'static str, what: &str, message: impl Into<String>) -> Self {
        Detail {
            vendor,
            what: what.to_owned(),
            status: None,
            code: None,
            message: message.into(),
            request_id: None,
            retry_after: None,
        }
        .into()
    }

    /// Whether the connection never opened, so nothing reached the vendor.
    fn never_sent(&self) -> bool {
        self.status.is_none() && self.message.starts_with("cannot connect")
    }

    /// Whether this call may be made again, by `retry`.
    pub fn retryable(&self, retry: Retry) -> bool {
        match (self.status, retry) {
            (_, Retry::Never) => false,
            (Some(429), _) => true,
            (_, Retry::NotTwice) => self.never_sent(),
            (Some(s), Retry::Idempotent) => s >= 500,
            (None, Retry::Idempotent) => true,
        }
    }

    /// The vendor says the thing asked about does not exist.
    pub fn is_not_found(&self) -> bool {
        self.status == Some(404)
    }

    /// The vendor refused the key.
    pub fn is_auth(&self) -> bool {
        matches!(self.status, Some(401 | 403))
    }

    /// The vendor refused because of the state of the thing (409).
    pub fn is_conflict(&self) -> bool {
        self.status == Some(409)
    }

    /// Replaces every occurrence of `secret` in the message and code.
    pub fn scrub(mut self, secret: &str) -> Self {
        if secret.len() >= 4 {
            self.message = self.message.replace(secret, "<redacted>");
            self.code = self.code.take().map(|c| c.replace(secret, "<redacted>"));
        }
        self
    }
}

/// The innermost cause's kind, for transport errors, without URLs.
fn source_kind(e: &reqwest::Error) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    let mut last = None;
    while let Some(s) = source {
        last = Some(s);
        source = s.source();
    }
    match last {
        Some(s) => {
            let text = s.to_string();
            if text.contains("://") { String::new() } else { format!(": {text}") }
        }
        None => String::new(),
    }
}

impl fmt::Display for VendorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: cannot {}: ", self.vendor, self.what)?;
        match self.status {
            Some(status) => write!(f, "{status} {}", self.message)?,
            None => write!(f, "{}", self.message)?,
        }
        if let Some(code) = &self.code {
            write!(f, " ({code})")?;
        }
        if let Some(id) = &self.request_id {
            write!(f, " [vendor request id {id}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for VendorError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(status: Option<u16>, message: &str) -> VendorError {
        Detail {
            vendor: "e2b",
            what: "create a sandbox".into(),
            status,
            code: Some("sandbox_create_failed".into()),
            message: message.into(),
            request_id: Some("req-1".into()),
            retry_after: None,
        }
        .into()
    }

    #[test]
    fn retries_follow_what_the_call_allows() {
        assert!(err(Some(429), "slow down").retryable(Retry::NotTwice));
        assert!(err(Some(429), "slow down").retryable(Retry::Idempotent));
        assert!(err(Some(503), "down").retryable(Retry::Idempotent));
        assert!(!err(Some(500), "maybe made").retryable(Retry::NotTwice));
        assert!(!err(Some(400), "bad").retryable(Retry::Idempotent));
        assert!(err(None, "cannot connect").retryable(Retry::NotTwice));
        assert!(!err(None, "the answer broke off").retryable(Retry::NotTwice));
        assert!(err(None, "timed out").retryable(Retry::Idempotent));
    }

    #[test]
    fn the_key_never_stays_in_a_message() {
        let e = err(Some(401), "Invalid API key e2b_0123456789 for team").scrub("e2b_0123456789");
        assert!(!e.to_string().contains("e2b_0123456789"), "{e}");
        assert!(e.to_string().contains("<redacted>"), "{e}");
        let shown = e.to_string();
        assert_eq!(
            shown,
            "e2b: cannot create a sandbox: 401 Invalid API key <redacted> for team (sandbox_create_failed) [vendor request id req-1]"
        );
    }
}
