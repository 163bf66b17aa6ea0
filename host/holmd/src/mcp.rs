//! `/mcp`: holm's MCP server (`holm_mcp`) over this server's own REST API.
//!
//! It calls holmd on the address it is bound to (loopback when bound to
//! every address) with holmd's own token, so an MCP call passes the same
//! checks, limits and logs as any REST client's. The router sits behind
//! holmd's token middleware ([`crate::api::app_with`]), so a request without
//! the token is refused before any MCP.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use axum::Router;
use axum::extract::Request;
use axum::http::header::CONTENT_TYPE;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use holm_proto::{ApiError, ErrorCode};
use tokio_util::sync::CancellationToken;

/// The `/mcp` routes.
pub(crate) fn routes(
    bind: SocketAddr,
    public_url: Option<String>,
    token: Option<&str>,
    stop: CancellationToken,
) -> Router {
    let ip = match bind.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => Ipv4Addr::LOCALHOST.into(),
        IpAddr::V6(ip) if ip.is_unspecified() => Ipv6Addr::LOCALHOST.into(),
        ip => ip,
    };
    let client =
        holm_client::Client::direct(&format!("http://{}", SocketAddr::new(ip, bind.port())), token);
    let options = holm_mcp::HttpOptions { bind, public_url, shutdown: stop };
    Router::new()
        .nest_service("/mcp", holm_mcp::http_service(client, &options))
        .layer(middleware::from_fn(error_shape))
}

/// The MCP transport answers some refusals (a `Host` or `Origin` it does not
/// allow, a missing session, a wrong `Accept`) in plain text; they get holm's
/// one error shape here, with the transport's words as the message. JSON-RPC
/// answers and event streams pass untouched.
async fn error_shape(req: Request, next: Next) -> Response {
    let response = next.run(req).await;
    let status = response.status();
    let plain = !response.headers().get(CONTENT_TYPE).is_some_and(|v| {
        let v = v.as_bytes();
        v.starts_with(b"application/json") || v.starts_with(b"text/event-stream")
    });
    if !(status.is_client_error() || status.is_server_error()) || !plain {
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, 16 * 1024).await.unwrap_or_default();
    let said = String::from_utf8_lossy(&bytes).trim().to_owned();
    let code = match status.as_u16() {
        400 | 406 | 415 | 422 => ErrorCode::InvalidRequest,
        401 => ErrorCode::Unauthorized,
        403 => ErrorCode::Forbidden,
        404 => ErrorCode::NotFound,
        405 => ErrorCode::MethodNotAllowed,
        413 => ErrorCode::PayloadTooLarge,
        503 => ErrorCode::Unavailable,
        _ => ErrorCode::Internal,
    };
    let message = if said.is_empty() { format!("MCP answered {status}") } else { said };
    let mut error = ApiError::new(code, message);
    error = match code {
        ErrorCode::Forbidden => error.with_hint(
            "MCP accepts the host names of loopback, of the address holmd listens on and of \
             HOLM_PUBLIC_URL, and pages served from them",
        ),
        ErrorCode::NotFound => error.with_hint("the MCP session ended; initialize a new one"),
        _ => error,
    };
    // The request-id middleware writes the body, with the request's id, and
    // keeps the status, which stays the transport's (such as 406 or 415).
    let mut out = holm_http::Error::from(error).into_response();
    *out.status_mut() = parts.status;
    out
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::StatusCode;
    use axum::routing::get;
    use tower::ServiceExt;

    use super::*;

    fn app() -> Router {
        Router::new()
            .route(
                "/plain",
                get(|| async {
                    (StatusCode::FORBIDDEN, "Forbidden: Origin header is not allowed")
                }),
            )
            .route(
                "/json",
                get(|| async {
                    (
                        StatusCode::BAD_REQUEST,
                        [(CONTENT_TYPE, "application/json")],
                        r#"{"jsonrpc":"2.0"}"#,
                    )
                }),
            )
            .route("/ok", get(|| async { "fine" }))
            .layer(middleware::from_fn(error_shape))
            .layer(middleware::from_fn(holm_http::request_id))
    }

    async fn call(path: &str) -> (StatusCode, String) {
        let r = app().oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
        let status = r.status();
        let body = axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn plain_refusals_get_the_one_error_shape() {
        let (status, body) = call("/plain").await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["error"]["code"], "forbidden");
        assert_eq!(v["error"]["message"], "Forbidden: Origin header is not allowed");
        assert!(v["error"]["hint"].as_str().unwrap().contains("HOLM_PUBLIC_URL"));
        assert!(v["error"]["request_id"].as_str().unwrap().starts_with("req_"));
    }

    #[tokio::test]
    async fn json_rpc_answers_and_successes_pass_untouched() {
        assert_eq!(
            call("/json").await,
            (StatusCode::BAD_REQUEST, r#"{"jsonrpc":"2.0"}"#.to_owned())
        );
        assert_eq!(call("/ok").await, (StatusCode::OK, "fine".to_owned()));
    }
}
