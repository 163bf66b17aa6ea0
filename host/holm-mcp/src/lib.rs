//! holm's MCP server: every box capability as a tool.
//!
//! It is a frontend over holmd's REST API through [`holm_client::Client`], so
//! MCP adds no second implementation of anything: a tool checks its
//! arguments, makes the REST calls, and turns the answer (or the error) into
//! a tool result. Two transports serve the same [`HolmMcp`]:
//!
//! - **Streamable HTTP** ([`http_service`]): holmd mounts it at `/mcp`, behind
//!   its bearer token, with a client pointed at its own loopback address.
//!   Hosts on the 2025-11-25 protocol get sessions; hosts on 2026-07-28 are
//!   served statelessly.
//! - **stdio** ([`serve_stdio`]): `holm mcp --stdio`, with a client from
//!   `HOLM_SERVER_URL` and `HOLM_SERVER_TOKEN`. Only MCP goes to standard
//!   output.
//!
//! Each tool is a `Tool` in the file of its group under [`tools`] (its
//! arguments, description, annotations and handler together), and
//! `tools::TOOLS` lists them all; [`args`] parses arguments strictly; a call's
//! progress goes to `progress`; the screenshot scale and the coordinate
//! mapping are in [`scale`]; failures become tool results in [`errors`]; the
//! live screen for MCP Apps hosts is in [`live`].

pub mod args;
pub mod errors;
mod http;
pub mod live;
mod progress;
pub mod reference;
pub mod scale;
mod server;
mod sessions;
pub mod tools;

pub use http::{HttpOptions, McpService, allowed_hosts, allowed_origins, http_service};
pub use server::HolmMcp;

/// Serves MCP on standard input and output until the client closes them.
///
/// Nothing else may write to standard output meanwhile: logs go to standard
/// error.
pub async fn serve_stdio(client: holm_client::Client) -> std::io::Result<()> {
    use rmcp::ServiceExt;
    let running = HolmMcp::new(client)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| std::io::Error::other(format!("MCP on stdio did not start: {e}")))?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
