//! `holm`: the command line of holm.
//!
//! It talks to holmd at `HOLM_SERVER_URL` (default `http://127.0.0.1:8080`)
//! with `HOLM_SERVER_TOKEN`. Every command takes `--json`. Errors go to
//! standard error in the one error shape, and the exit status is non-zero.
//! `holm mcp --stdio` serves MCP on standard input and output ([`mcp`]);
//! `holm bench` runs the separate `holm-bench` program ([`bench`]), so this
//! client links no server code.

mod accessibility;
mod agent;
mod bench;
mod browser;
mod cmd;
mod desk;
mod files;
mod mcp;
mod procs;
mod progress;
mod record;
mod shell;
mod view;

use holm_cli::output;

use std::process::ExitCode;

use clap::Parser;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = cmd::Cli::parse();
    let json = cli.json;
    match cmd::run(cli).await {
        Ok(code) => code,
        Err(e) => {
            output::error(&e, json);
            ExitCode::FAILURE
        }
    }
}
