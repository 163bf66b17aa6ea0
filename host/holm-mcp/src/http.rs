//! MCP over Streamable HTTP: the tower service holmd mounts at `/mcp`.
//!
//! - **Both protocols.** `legacy_session_mode` keeps sessions
//!   (`Mcp-Session-Id`) for hosts on 2025-11-25, which most deployed hosts
//!   speak; requests on 2026-07-28 are served statelessly whatever the mode.
//! - **`Host` and `Origin` are checked** against DNS rebinding and cross-site
//!   calls: loopback names, the address holmd is bound to, and the host of
//!   `HOLM_PUBLIC_URL` (where a proxy sends its clients). Bound to every
//!   address (`0.0.0.0`), holmd cannot know the names clients use, so the
//!   `Host` check is off then; the bearer token, which holmd requires on such
//!   a bind and which a browser never adds by itself, is the guard. A request
//!   with no `Origin` (every non-browser host) passes.
//! - **Sessions are bounded** ([`crate::sessions`]): at most
//!   [`MAX_SESSIONS`], the least recently used closed to make room.
//! - The service stops its sessions and streams when `shutdown` is
//!   cancelled, so holmd's graceful shutdown is not held open by a client's
//!   SSE stream.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use holm_client::Client;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::HolmMcp;
use crate::sessions::{Capped, MAX_SESSIONS};

/// The MCP service over Streamable HTTP.
pub type McpService = StreamableHttpService<HolmMcp, Capped>;

/// The largest request body: a `write_file` of a few MiB in base64 fits.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// A 2025-11-25 session ends after this long without a request; the host
/// then starts a new one. Sessions hold nothing but the host's handshake.
const SESSION_IDLE: Duration = Duration::from_secs(60 * 60);

/// What the HTTP service needs to know about where it is served.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The address holmd is bound to.
    pub bind: SocketAddr,
    /// `HOLM_PUBLIC_URL`: the address clients use behind a proxy.
    pub public_url: Option<String>,
    /// Cancelled when the server shuts down.
    pub shutdown: CancellationToken,
}

/// The `Host` values accepted, or an empty list for any (see the module
/// docs). Entries without a port match any port. The same as holmd's web
/// edge ([`holm_http::Edge`]), which checks every route before this one.
pub fn allowed_hosts(bind: SocketAddr, public_url: Option<&str>) -> Vec<String> {
    holm_http::Edge::new(bind, public_url).hosts()
}

/// The `Origin` values accepted: pages served from loopback (any port), from
/// the bound address, and from `HOLM_PUBLIC_URL`.
pub fn allowed_origins(bind: SocketAddr, public_url: Option<&str>) -> Vec<String> {
    holm_http::Edge::new(bind, public_url).origins().to_vec()
}

/// The MCP service for holmd's `/mcp`, calling holmd's REST API through
/// `client`.
pub fn http_service(client: Client, options: &HttpOptions) -> McpService {
    let hosts = allowed_hosts(options.bind, options.public_url.as_deref());
    let origins = allowed_origins(options.bind, options.public_url.as_deref());
    if hosts.is_empty() {
        tracing::info!(
            "MCP accepts any Host header: holmd is bound to every address, behind its token"
        );
    }
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(true)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY)
        .with_cancellation_token(options.shutdown.clone());
    config = if hosts.is_empty() {
        config.disable_allowed_hosts()
    } else {
        config.with_allowed_hosts(hosts)
    };
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(SESSION_IDLE);
    let server = match options.public_url.as_deref() {
        Some(url) => HolmMcp::new(client).with_viewer_origin(url),
        None => HolmMcp::new(client),
    };
    let sessions = Capped::new(sessions, MAX_SESSIONS);
    StreamableHttpService::new(move || Ok(server.clone()), Arc::new(sessions), config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn loopback_binds_take_loopback_names() {
        let h = allowed_hosts(addr("127.0.0.1:8080"), None);
        assert_eq!(h, ["127.0.0.1", "::1", "localhost"]);
        let o = allowed_origins(addr("127.0.0.1:8080"), None);
        assert!(o.contains(&"http://localhost:*".to_owned()));
        assert!(o.contains(&"http://127.0.0.1:*".to_owned()));
    }

    #[test]
    fn the_public_url_and_the_bound_address_are_allowed() {
        let h = allowed_hosts(addr("10.0.0.5:8080"), Some("https://boxes.example.com"));
        assert!(h.contains(&"boxes.example.com".to_owned()), "{h:?}");
        assert!(h.contains(&"10.0.0.5".to_owned()), "{h:?}");
        assert!(h.contains(&"localhost".to_owned()), "{h:?}");
        let o = allowed_origins(addr("10.0.0.5:8080"), Some("https://boxes.example.com"));
        assert!(o.contains(&"https://boxes.example.com:443".to_owned()), "{o:?}");
        assert!(o.contains(&"http://10.0.0.5:8080".to_owned()), "{o:?}");
        let o = allowed_origins(addr("127.0.0.1:8080"), Some("http://boxes.lan:8443/"));
        assert!(o.contains(&"http://boxes.lan:8443".to_owned()), "{o:?}");
        let h = allowed_hosts(addr("[fd00::5]:8080"), Some("http://[fd00::5]:8080"));
        assert!(h.contains(&"fd00::5".to_owned()), "{h:?}");
    }

    #[test]
    fn an_unspecified_bind_checks_no_host() {
        assert!(allowed_hosts(addr("0.0.0.0:8080"), Some("https://boxes.example.com")).is_empty());
        assert!(allowed_hosts(addr("[::]:8080"), None).is_empty());
        // Origins are still checked.
        let o = allowed_origins(addr("0.0.0.0:8080"), Some("https://boxes.example.com"));
        assert!(o.iter().any(|o| o.starts_with("https://boxes.example.com")));
    }

    #[test]
    fn a_bad_public_url_adds_nothing() {
        let h = allowed_hosts(addr("127.0.0.1:8080"), Some("not a url"));
        assert_eq!(h.len(), 3);
    }
}
