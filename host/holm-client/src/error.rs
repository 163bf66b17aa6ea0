//! The client's error: the server's error shape, or a transport failure.

use holm_proto::ApiError;

/// What a client call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server answered with an error in the one shape.
    #[error("{0}")]
    Api(ApiError),
    /// The server could not be reached, or the connection broke.
    #[error("cannot reach {url}: {source}")]
    Transport {
        /// The address that was called (never carries a secret).
        url: String,
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// The answer was not what the API promises.
    #[error("unexpected answer from {url}: {message}")]
    Protocol {
        /// The address that was called.
        url: String,
        /// What was wrong with the answer.
        message: String,
    },
}

impl ClientError {
    /// The failure in the one error shape. A server's own error is kept as
    /// it is; a failure to reach the server is `unavailable` with a hint; a
    /// malformed answer is `internal` (its detail stays in the message).
    pub fn to_api_error(&self) -> ApiError {
        match self {
            Self::Api(api) => api.clone(),
            Self::Transport { url, source } => ApiError::new(
                holm_proto::ErrorCode::Unavailable,
                format!("cannot reach holmd at {}: {source}", server_of(url)),
            )
            .with_hint("check that holmd runs and that HOLM_SERVER_URL points at it"),
            Self::Protocol { .. } => {
                ApiError::new(holm_proto::ErrorCode::Internal, self.to_string())
            }
        }
    }

    /// The API error, when the server answered with one.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Self::Api(e) => Some(e),
            _ => None,
        }
    }
}

/// A client result.
pub type Result<T, E = ClientError> = std::result::Result<T, E>;

/// Turns a response into `Ok(response)` when it succeeded, or the error it carries.
pub(crate) async fn check(url: &str, response: reqwest::Response) -> Result<reqwest::Response> {
    let status = response.status();
    if status.is_success() || status == reqwest::StatusCode::NOT_MODIFIED {
        return Ok(response);
    }
    let request_id =
        response.headers().get("x-request-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let bytes = response
        .bytes()
        .await
        .map_err(|source| ClientError::Transport { url: url.to_owned(), source })?;
    match serde_json::from_slice::<holm_proto::ErrorBody>(&bytes) {
        Ok(body) => Err(ClientError::Api(body.error)),
        Err(_) => {
            let mut e = ApiError::new(
                match status.as_u16() {
                    401 => holm_proto::ErrorCode::Unauthorized,
                    404 => holm_proto::ErrorCode::NotFound,
                    502 => holm_proto::ErrorCode::GuestUnreachable,
                    503 => holm_proto::ErrorCode::Unavailable,
                    _ => holm_proto::ErrorCode::Internal,
                },
                format!("{url} answered {status}"),
            );
            e.request_id = request_id;
            Err(ClientError::Api(e))
        }
    }
}

pub(crate) fn transport(url: &str) -> impl FnOnce(reqwest::Error) -> ClientError + '_ {
    move |source| ClientError::Transport { url: url.to_owned(), source }
}

/// The server part of a URL: what comes before `/v1`.
fn server_of(url: &str) -> &str {
    url.find("/v1").map_or(url, |i| &url[..i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_is_named_without_the_path() {
        assert_eq!(server_of("http://127.0.0.1:8080/v1/boxes/box_a"), "http://127.0.0.1:8080");
        assert_eq!(server_of("http://h"), "http://h");
    }
}
