//! `holm exec`: a command in a box, its output and its exit code.

use std::io::Write;
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use futures_util::StreamExt;
use holm_client::Client;
use holm_proto::guest::{CommandEvent, CommandRequest};

use crate::args::SensitiveArg;
use crate::output;
use crate::process::{exit_code, parse_env};

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// Run a command in a box, stream its output, and exit with its code.
    Exec(ExecArgs),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::Exec(a) => exec(c, a, json).await,
        }
    }
}

#[derive(Debug, Args)]
pub(super) struct ExecArgs {
    /// The box id.
    r#box: String,
    /// The working directory.
    #[arg(long)]
    cwd: Option<String>,
    /// A variable, KEY=VALUE (repeat for more).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// Kill the command after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
    #[command(flatten)]
    pub(super) secret: SensitiveArg,
    /// The command and its arguments, after `--`.
    #[arg(required = true, last = true)]
    pub(super) argv: Vec<String>,
}

pub(super) async fn exec(client: &Client, a: ExecArgs, json: bool) -> anyhow::Result<ExitCode> {
    let request = CommandRequest {
        argv: Some(a.argv),
        cwd: a.cwd,
        env: parse_env(&a.env)?,
        timeout_ms: a.timeout.map(|s| s.saturating_mul(1000)),
        sensitive: a.secret.sensitive,
        ..CommandRequest::default()
    };
    let b = client.boxed(&a.r#box);
    if json {
        let result = b.run(&request).await?;
        output::json(&result);
        return Ok(exit_code(result.exit_code, result.signal.as_deref(), result.timed_out));
    }
    let mut events = std::pin::pin!(b.stream(&request).await?);
    let mut stdout = std::io::stdout();
    let mut stderr = std::io::stderr();
    while let Some(event) = events.next().await {
        match event? {
            CommandEvent::Start { .. } => {}
            CommandEvent::Stdout { data } => {
                let _ = stdout.write_all(data.as_bytes());
                let _ = stdout.flush();
            }
            CommandEvent::Stderr { data } => {
                let _ = stderr.write_all(data.as_bytes());
                let _ = stderr.flush();
            }
            CommandEvent::Exit { exit_code: code, signal, timed_out, .. } => {
                return Ok(exit_code(code, signal.as_deref(), timed_out));
            }
            CommandEvent::Error { error } => return Err(error.into()),
        }
    }
    bail!("the command's stream ended before it exited")
}
