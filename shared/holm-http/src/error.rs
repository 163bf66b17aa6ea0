//! The guest's error type: an [`ApiError`] that knows how to be a response.

use std::io;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use holm_proto::{ApiError, ErrorCode, NextStep};

/// A handler error. Its body is written by the request-id middleware, which
/// knows the request id.
#[derive(Debug)]
pub struct Error(pub ApiError);

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        Self(e)
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let mut err = self.0;
        if err.hint.is_none() {
            err = err.worded_by(rest_hint);
        }
        let status =
            StatusCode::from_u16(err.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if status.is_server_error() && err.code == ErrorCode::Internal {
            tracing::error!(message = %err.message, "internal error");
        }
        let mut response = status.into_response();
        response.extensions_mut().insert(err);
        response
    }
}

/// The next step of an error with typed details, in REST's terms: the
/// routes (the CLI and MCP word the same steps as their commands and tools).
/// An error whose maker gave a hint keeps it.
pub fn rest_hint(step: NextStep<'_>) -> Option<String> {
    Some(match step {
        NextStep::ListBoxes => "GET /v1/boxes lists the boxes".to_owned(),
        NextStep::ShowBox { box_id } => format!("GET /v1/boxes/{box_id} shows its state"),
        NextStep::CheckBox { box_id } => {
            format!("the box may be stopping; GET /v1/boxes/{box_id} shows its state")
        }
        NextStep::WaitUntilRunning { box_id } => {
            format!("wait with GET /v1/boxes/{box_id}?wait_for=running")
        }
        NextStep::ResumeFirst { box_id } => {
            format!("resume it first: POST /v1/boxes/{box_id}/resume")
        }
        NextStep::CreateBox => "create a new box: POST /v1/boxes".to_owned(),
        NextStep::ClaimByCreate => {
            "create a box (POST /v1/boxes): a matching create claims it".to_owned()
        }
        NextStep::CreateBoxWithBrowser => {
            "create the box with the browser on (spec.browser, POST /v1/boxes)".to_owned()
        }
        NextStep::RetrySoon => {
            "it may be starting or restarting; retry in a moment (GET /health shows it)".to_owned()
        }
        NextStep::ListTabs => "GET /v1/browser/tabs lists the tabs".to_owned(),
        NextStep::ShowRuntime { runtime } => {
            format!("GET /v1/runtimes/{runtime} says what it can do")
        }
        NextStep::AddRuntime => {
            "POST /v1/runtimes adds one; GET /v1/runtimes lists them".to_owned()
        }
        NextStep::ChangeRuntime { runtime } => format!("PATCH /v1/runtimes/{runtime} changes it"),
    })
}

/// Writes an error body. A 5xx `internal` error never carries detail. A
/// `not_ready` error says when to try again in `Retry-After` (see
/// [`retry_after_secs`]), which clients honour.
pub fn body(err: ApiError, status: StatusCode) -> Response {
    let err = if err.code == ErrorCode::Internal {
        let id = err.request_id.clone();
        let mut fixed = ApiError::internal();
        fixed.request_id = id;
        fixed
    } else {
        err
    };
    let retry = retry_after_secs(&err);
    let mut response = (status, Json(err.into_body())).into_response();
    if let Some(secs) = retry {
        response.headers_mut().insert(axum::http::header::RETRY_AFTER, secs.into());
    }
    response
}

/// The whole seconds after which a `not_ready` error's request may be tried
/// again: its `retry_after_ms` rounded up when its details say, else 1 (a
/// box, screen or browser coming up takes about that). None for any other
/// error.
pub fn retry_after_secs(err: &ApiError) -> Option<u64> {
    if err.code != ErrorCode::NotReady {
        return None;
    }
    let ms = err.details.as_ref().and_then(|d| d.get("retry_after_ms")).and_then(|v| v.as_u64());
    Some(ms.map_or(1, |ms| ms.div_ceil(1000).max(1)))
}

impl Error {
    /// Adds a hint: what the caller can do next.
    #[must_use]
    pub fn hint(mut self, hint: &str) -> Self {
        self.0.hint = Some(hint.to_owned());
        self
    }

    /// An internal error. What went wrong is logged, not answered.
    pub fn internal(what: impl std::fmt::Display) -> Self {
        tracing::error!(error = %what, "internal error");
        Self(ApiError::internal())
    }

    /// Maps an IO error on `path` to a file error that names the path.
    pub fn io(path: &str, e: &io::Error) -> Self {
        let (code, what) = match e.kind() {
            io::ErrorKind::NotFound => (ErrorCode::FileNotFound, "does not exist"),
            io::ErrorKind::PermissionDenied => (ErrorCode::PermissionDenied, "permission denied"),
            io::ErrorKind::AlreadyExists => (ErrorCode::AlreadyExists, "already exists"),
            io::ErrorKind::IsADirectory => (ErrorCode::IsADirectory, "is a directory"),
            io::ErrorKind::NotADirectory => {
                (ErrorCode::NotADirectory, "a part of the path is not a directory")
            }
            io::ErrorKind::DirectoryNotEmpty => {
                (ErrorCode::DirectoryNotEmpty, "the directory is not empty")
            }
            io::ErrorKind::ReadOnlyFilesystem => {
                (ErrorCode::PermissionDenied, "the file system is read-only")
            }
            io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => {
                (ErrorCode::PayloadTooLarge, "no space is left on the device")
            }
            io::ErrorKind::FileTooLarge => (ErrorCode::PayloadTooLarge, "the file is too large"),
            io::ErrorKind::InvalidFilename => {
                (ErrorCode::InvalidRequest, "the name is too long or not allowed")
            }
            _ if e.raw_os_error() == Some(libc::ELOOP) => {
                (ErrorCode::InvalidRequest, "too many levels of symbolic links")
            }
            _ => return Self::internal(format!("{path}: {e}")),
        };
        Self(
            ApiError::new(code, format!("{path}: {what}"))
                .with_details(serde_json::json!({ "path": path, "reason": e.to_string() })),
        )
    }
}

#[cfg(test)]
mod tests {
    use holm_proto::ErrorDetails;

    use super::*;

    fn answered(e: ApiError) -> ApiError {
        Error(e).into_response().extensions().get::<ApiError>().cloned().unwrap()
    }

    #[test]
    fn a_typed_error_is_answered_with_its_step_in_routes() {
        let e = ApiError::new(ErrorCode::NotFound, "there is no box \"box_x\"")
            .with_kind(ErrorDetails::NoSuchBox { box_id: "box_x".into() });
        let got = answered(e);
        assert_eq!(got.hint.as_deref(), Some("GET /v1/boxes lists the boxes"));
        assert_eq!(got.details.unwrap()["box_id"], "box_x");
        let e = ApiError::new(ErrorCode::NotFound, "there is no tab \"t\"")
            .with_kind(ErrorDetails::NoSuchTab { tab: "t".into(), tabs: None });
        assert_eq!(answered(e).hint.as_deref(), Some("GET /v1/browser/tabs lists the tabs"));
    }

    #[test]
    fn not_ready_says_when_to_try_again_and_nothing_else_does() {
        let starting = ApiError::new(ErrorCode::NotReady, "box box_a is starting")
            .with_kind(ErrorDetails::BoxStarting { box_id: "box_a".into() });
        let response = body(starting, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()["retry-after"], "1");
        let browser = ApiError::new(ErrorCode::NotReady, "the browser is starting")
            .with_kind(ErrorDetails::BrowserStarting { retry_after_ms: 2500 });
        assert_eq!(retry_after_secs(&browser), Some(3));
        let soon = ApiError::new(ErrorCode::NotReady, "x")
            .with_kind(ErrorDetails::BrowserStarting { retry_after_ms: 250 });
        assert_eq!(retry_after_secs(&soon), Some(1));
        let other = ApiError::new(ErrorCode::Unavailable, "down");
        let response = body(other, StatusCode::SERVICE_UNAVAILABLE);
        assert!(response.headers().get("retry-after").is_none());
    }

    #[test]
    fn a_hint_its_maker_gave_is_kept() {
        let e = ApiError::new(ErrorCode::NotRunning, "box box_x is stopped")
            .with_kind(ErrorDetails::NoSuchBox { box_id: "box_x".into() })
            .with_hint("stopped by its owner");
        assert_eq!(answered(e).hint.as_deref(), Some("stopped by its owner"));
        let plain = ApiError::new(ErrorCode::Conflict, "x");
        assert_eq!(answered(plain).hint, None);
    }
}
