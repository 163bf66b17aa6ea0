//! The one error shape that every holm surface answers with: the guest, holmd,
//! the CLI's `--json` output and MCP tool results.
//!
//! ```json
//! {"error": {"code": "file_not_found", "message": "...", "hint": "...",
//!            "details": {...}, "request_id": "req_..."}}
//! ```

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod details;

pub use self::details::{BoxRequest, ErrorDetails, NextStep};

/// The body of every error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorBody {
    /// The error itself.
    pub error: ApiError,
}

/// An error as it travels on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ApiError {
    /// A stable, machine-readable code.
    pub code: ErrorCode,
    /// What went wrong, for a person.
    pub message: String,
    /// What to do next, when there is something useful to say.
    #[serde(default)]
    pub hint: Option<String>,
    /// Structured facts about the error, such as the fields that were wrong.
    /// With a `kind` (such as `no_such_box` or `box_refused`), they are that
    /// kind's fields, and `hint` is the next step in REST's terms.
    #[serde(default)]
    pub details: Option<serde_json::Value>,
    /// The id of the request, as in the `x-request-id` header.
    #[serde(default)]
    pub request_id: Option<String>,
}

/// Stable error codes. Each maps to one HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// The request is malformed; `details.issues` names each wrong field.
    InvalidRequest,
    /// No credential, or a wrong one.
    Unauthorized,
    /// The credential is right but the action is not allowed.
    Forbidden,
    /// The resource does not exist.
    NotFound,
    /// No route has this method and path.
    RouteNotFound,
    /// The route exists, but not with this method.
    MethodNotAllowed,
    /// A path in the box does not exist.
    FileNotFound,
    /// A directory was found where a file was needed.
    IsADirectory,
    /// A file was found where a directory was needed.
    NotADirectory,
    /// The box refused access to a path.
    PermissionDenied,
    /// The target already exists.
    AlreadyExists,
    /// A directory that should be removed is not empty.
    DirectoryNotEmpty,
    /// The resource is in a state that does not allow the request.
    Conflict,
    /// The box is not running.
    NotRunning,
    /// The request body is larger than allowed.
    PayloadTooLarge,
    /// The body's `Content-Type` is missing or not what the route takes
    /// (`application/json` for a JSON body).
    UnsupportedMediaType,
    /// A limit of the server is reached, such as its most live boxes or
    /// concurrent image builds; `details` gives the limit.
    LimitReached,
    /// An idempotency key was reused with a different body.
    IdempotencyKeyReused,
    /// The page refused: a script threw, or a navigation failed;
    /// `details` says what the page said.
    PageError,
    /// The runtime named does not exist on this server.
    UnknownRuntime,
    /// The runtime or the box cannot do this.
    Unsupported,
    /// A component needed for the request is not ready yet.
    NotReady,
    /// The request took longer than allowed.
    Timeout,
    /// A person controls the box through a takeover URL: the agent's input
    /// waits until they hand it back.
    HumanInControl,
    /// The box's agent could not be reached.
    GuestUnreachable,
    /// A dependency such as the container engine failed.
    Unavailable,
    /// Something failed inside the server. The message never carries detail.
    Internal,
}

impl ErrorCode {
    /// The HTTP status this code is answered with.
    pub fn status(self) -> u16 {
        match self {
            Self::InvalidRequest | Self::UnknownRuntime | Self::Unsupported => 400,
            Self::Unauthorized => 401,
            Self::Forbidden | Self::PermissionDenied => 403,
            Self::NotFound | Self::RouteNotFound | Self::FileNotFound => 404,
            Self::IsADirectory
            | Self::NotADirectory
            | Self::AlreadyExists
            | Self::DirectoryNotEmpty
            | Self::Conflict
            | Self::NotRunning
            | Self::HumanInControl => 409,
            Self::MethodNotAllowed => 405,
            Self::PayloadTooLarge => 413,
            Self::UnsupportedMediaType => 415,
            Self::LimitReached => 429,
            Self::IdempotencyKeyReused | Self::PageError => 422,
            Self::Internal => 500,
            Self::GuestUnreachable => 502,
            Self::NotReady | Self::Unavailable => 503,
            Self::Timeout => 504,
        }
    }

    /// The code as it is written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::Unauthorized => "unauthorized",
            Self::Forbidden => "forbidden",
            Self::NotFound => "not_found",
            Self::RouteNotFound => "route_not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::FileNotFound => "file_not_found",
            Self::IsADirectory => "is_a_directory",
            Self::NotADirectory => "not_a_directory",
            Self::PermissionDenied => "permission_denied",
            Self::AlreadyExists => "already_exists",
            Self::DirectoryNotEmpty => "directory_not_empty",
            Self::Conflict => "conflict",
            Self::NotRunning => "not_running",
            Self::PayloadTooLarge => "payload_too_large",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::LimitReached => "limit_reached",
            Self::IdempotencyKeyReused => "idempotency_key_reused",
            Self::PageError => "page_error",
            Self::UnknownRuntime => "unknown_runtime",
            Self::Unsupported => "unsupported",
            Self::NotReady => "not_ready",
            Self::Timeout => "timeout",
            Self::HumanInControl => "human_in_control",
            Self::GuestUnreachable => "guest_unreachable",
            Self::Unavailable => "unavailable",
            Self::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem with one field of a request, listed under `details.issues`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Issue {
    /// Where the problem is, such as `actions[2].button` or `spec.colour`.
    pub path: String,
    /// What is wrong there.
    pub problem: String,
}

impl ApiError {
    /// An error with a code and a message, and nothing else yet.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), hint: None, details: None, request_id: None }
    }

    /// Adds a hint: what the caller can do next.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Adds structured details.
    #[must_use]
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    /// Sets the request id.
    #[must_use]
    pub fn with_request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    /// `invalid_request` with a message.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidRequest, message)
    }

    /// `invalid_request` that names each wrong field under `details.issues`.
    pub fn invalid_fields(issues: Vec<Issue>) -> Self {
        let message = match issues.as_slice() {
            [one] => format!("{}: {}", one.path, one.problem),
            many => format!(
                "{} fields are wrong: {}",
                many.len(),
                many.iter().map(|i| i.path.as_str()).collect::<Vec<_>>().join(", ")
            ),
        };
        Self::invalid(message)
            .with_hint("fix the fields named in details.issues and send the request again")
            .with_details(serde_json::json!({ "issues": issues }))
    }

    /// `internal`, with a fixed message: a 5xx never carries internal detail.
    pub fn internal() -> Self {
        Self::new(ErrorCode::Internal, "an internal error occurred")
            .with_hint("try again; if it persists, report the request id")
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> u16 {
        self.code.status()
    }

    /// Wraps the error in its body.
    pub fn into_body(self) -> ErrorBody {
        ErrorBody { error: self }
    }

    /// The error as a person or a model reads it, the one text rendering
    /// (the CLI prints it, MCP answers it): `error[code]: message`, one
    /// line per wrong field, the hint, and the request id.
    pub fn describe(&self) -> String {
        let mut out = format!("error[{}]: {}", self.code, self.message);
        let issues = self.details.as_ref().and_then(|d| d.get("issues"));
        for issue in issues.and_then(|i| i.as_array()).into_iter().flatten() {
            let field = |name: &str| issue.get(name).and_then(|v| v.as_str()).unwrap_or("");
            out.push_str(&format!("\n  {}: {}", field("path"), field("problem")));
        }
        if let Some(hint) = &self.hint {
            out.push_str(&format!("\nhint: {hint}"));
        }
        if let Some(id) = &self.request_id {
            out.push_str(&format!("\nrequest_id: {id}"));
        }
        out
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, " (hint: {hint})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_body_has_the_one_shape() {
        let err = ApiError::new(ErrorCode::FileNotFound, "no such file: /x")
            .with_hint("check the path")
            .with_request_id("req_1");
        let v = serde_json::to_value(err.into_body()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"error": {
                "code": "file_not_found", "message": "no such file: /x",
                "hint": "check the path", "details": null, "request_id": "req_1"
            }})
        );
    }

    #[test]
    fn code_strings_match_serde() {
        for code in [
            ErrorCode::InvalidRequest,
            ErrorCode::IsADirectory,
            ErrorCode::IdempotencyKeyReused,
            ErrorCode::GuestUnreachable,
            ErrorCode::DirectoryNotEmpty,
            ErrorCode::PageError,
        ] {
            let s = serde_json::to_value(code).unwrap();
            assert_eq!(s, serde_json::Value::String(code.as_str().to_owned()));
        }
    }

    #[test]
    fn statuses_follow_the_table() {
        assert_eq!(ErrorCode::InvalidRequest.status(), 400);
        assert_eq!(ErrorCode::Unauthorized.status(), 401);
        assert_eq!(ErrorCode::FileNotFound.status(), 404);
        assert_eq!(ErrorCode::IsADirectory.status(), 409);
        assert_eq!(ErrorCode::Internal.status(), 500);
    }

    #[test]
    fn invalid_fields_names_every_field() {
        let err = ApiError::invalid_fields(vec![
            Issue { path: "a".into(), problem: "unknown field".into() },
            Issue { path: "b.c".into(), problem: "unknown field".into() },
        ]);
        assert!(err.message.contains("a, b.c"), "{}", err.message);
        assert_eq!(err.details.unwrap()["issues"].as_array().unwrap().len(), 2);
    }
}
