//! The guest's error type: an [`ApiError`] that knows how to be a response.

use std::io;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use holm_proto::{ApiError, ErrorCode};

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
        let status =
            StatusCode::from_u16(self.0.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if status.is_server_error() && self.0.code == ErrorCode::Internal {
            tracing::error!(message = %self.0.message, "internal error");
        }
        let mut response = status.into_response();
        response.extensions_mut().insert(self.0);
        response
    }
}

/// Writes an error body. A 5xx `internal` error never carries detail.
pub fn body(err: ApiError, status: StatusCode) -> Response {
    let err = if err.code == ErrorCode::Internal {
        let id = err.request_id.clone();
        let mut fixed = ApiError::internal();
        fixed.request_id = id;
        fixed
    } else {
        err
    };
    (status, Json(err.into_body())).into_response()
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
