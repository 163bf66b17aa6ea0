//! Extractors that parse strictly: unknown fields and parameters are refused,
//! each one named, in the one error shape.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use bytes::Bytes;
use holm_proto::{ApiError, strict};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::error::Error;

/// A JSON body parsed with [`strict::from_slice`].
#[derive(Debug)]
pub struct StrictJson<T>(pub T);

impl<T, S> FromRequest<S> for StrictJson<T>
where
    T: DeserializeOwned + JsonSchema + 'static,
    S: Send + Sync,
{
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Error> {
        let kind = req.headers().get(axum::http::header::CONTENT_TYPE).map(crate::edge::media_type);
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            // Too large, or a body that broke off or stalled.
            let code = if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                holm_proto::ErrorCode::PayloadTooLarge
            } else {
                holm_proto::ErrorCode::InvalidRequest
            };
            Error(ApiError::new(code, format!("cannot read the body: {e}")))
        })?;
        // A JSON body says so: a page may send any other type without asking
        // first. An empty body carries nothing to refuse.
        if !bytes.is_empty() && kind.as_deref() != Some("application/json") {
            return Err(Error(crate::edge::unsupported_media_type(&format!(
                "a JSON body needs Content-Type: application/json, not {}",
                kind.as_deref().unwrap_or("none")
            ))));
        }
        strict::from_slice(&bytes)
            .map(StrictJson)
            .map_err(|issues| Error(ApiError::invalid_fields(issues)))
    }
}

/// A query string parsed with [`strict::from_query`].
#[derive(Debug)]
pub struct StrictQuery<T>(pub T);

impl<T, S> FromRequestParts<S> for StrictQuery<T>
where
    T: DeserializeOwned + JsonSchema + 'static,
    S: Send + Sync,
{
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Error> {
        let query = parts.uri.query().unwrap_or("");
        strict::from_query(query)
            .map(StrictQuery)
            .map_err(|issues| Error(ApiError::invalid_fields(issues)))
    }
}
