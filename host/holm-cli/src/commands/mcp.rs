//! `holm mcp --stdio`: holm's MCP server on standard input and output, for an
//! MCP host that starts a local process. It forwards every tool to the holmd
//! at `HOLM_SERVER_URL` with `HOLM_SERVER_TOKEN`, like every other command.
//!
//! Standard output carries MCP and nothing else: logs go to standard error,
//! where hosts keep them.

use std::process::ExitCode;

use clap::Args;
use holm_client::Client;

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// Serve MCP on standard input and output (`holm mcp --stdio`), for an
    /// MCP host that starts a local process.
    Mcp(McpArgs),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, _json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::Mcp(a) => run(c.clone(), a).await,
        }
    }
}

/// The arguments of `holm mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Speak MCP on standard input and output. (holmd itself serves MCP over
    /// Streamable HTTP at /mcp.)
    #[arg(long, required = true)]
    stdio: bool,
}

/// Serves MCP on stdio until the host closes it.
pub async fn run(client: Client, args: McpArgs) -> anyhow::Result<ExitCode> {
    debug_assert!(args.stdio, "clap requires --stdio");
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(
            |_| tracing_subscriber::EnvFilter::new("holm=info,holm_mcp=info,rmcp=warn"),
        ))
        .try_init();
    // Say early, in the host's log, when the server is out of reach or the
    // token is wrong; tools would say it too, one call at a time. In the
    // background, so a server that does not answer cannot hold the start.
    let probe = client.clone();
    tokio::spawn(async move {
        match probe.runtimes().await {
            Ok(r) => tracing::info!(server = %probe.url(), runtimes = r.len(), "holmd answers"),
            Err(e) => {
                tracing::warn!(server = %probe.url(), error = %e, "holmd does not answer as it should")
            }
        }
    });
    holm_mcp::serve_stdio(client).await?;
    Ok(ExitCode::SUCCESS)
}
