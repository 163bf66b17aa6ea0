//! `holm`: the command line of holm.
//!
//! It talks to holmd at `HOLM_SERVER_URL` (default `http://127.0.0.1:8080`)
//! with `HOLM_SERVER_TOKEN`. Every command takes `--json`. Errors go to
//! standard error in the one error shape, and the exit status is non-zero.
//! The commands are one tree, [`commands`]: one file per group, each with
//! its arguments and handlers. `holm mcp --stdio` serves MCP on standard
//! input and output; `holm bench` runs the separate `holm-bench` program, so
//! this client links no server code.

mod args;
mod commands;
mod process;
mod progress;
#[cfg(test)]
mod reference;

use holm_cli::output;

use std::process::ExitCode;

use clap::Parser;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = commands::Cli::parse();
    let json = cli.json;
    match commands::run(cli).await {
        Ok(code) => code,
        Err(e) => {
            output::error(&e, json);
            ExitCode::FAILURE
        }
    }
}
