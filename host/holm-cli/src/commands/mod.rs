//! The commands: the command line (`Cli`, `Command`) and its dispatch. Each
//! group of commands is one file here, holding its commands (`Commands`,
//! flattened into `Command`: each variant's doc comment is its help line),
//! their arguments and their handlers, so a new command in a group touches
//! that file alone; a new group is its file, its `mod` line and its variant
//! here. What several groups share (output, progress, `--sensitive`, exit
//! codes) is outside this folder.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use holm_client::Client;

mod accessibility;
mod agent;
mod bench;
mod boxes;
mod browser;
mod desk;
mod desktop;
mod exec;
mod files;
mod images;
mod mcp;
mod procs;
mod record;
mod runtimes;
mod shell;
#[cfg(test)]
mod tests;
mod timeline;
mod view;

/// Boxes: Linux desktops for AI agents.
#[derive(Debug, Parser)]
#[command(name = "holm", version, about)]
pub struct Cli {
    /// Print results and errors as JSON.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    command: Command,
}

/// Every group's commands, in the order `holm --help` lists them.
#[derive(Debug, Subcommand)]
enum Command {
    #[command(flatten)]
    Boxes(boxes::Commands),
    #[command(flatten)]
    Timeline(timeline::Commands),
    #[command(flatten)]
    Desktop(desktop::Commands),
    #[command(flatten)]
    Exec(exec::Commands),
    #[command(flatten)]
    Shell(shell::Commands),
    #[command(flatten)]
    Files(files::Commands),
    #[command(flatten)]
    Procs(procs::Commands),
    #[command(flatten)]
    Desk(desk::Commands),
    #[command(flatten)]
    Accessibility(accessibility::Commands),
    #[command(flatten)]
    Record(record::Commands),
    #[command(flatten)]
    Runtimes(runtimes::Commands),
    #[command(flatten)]
    Images(images::Commands),
    #[command(flatten)]
    Mcp(mcp::Commands),
    #[command(flatten)]
    Browser(browser::Commands),
    #[command(flatten)]
    Agent(agent::Commands),
    #[command(flatten)]
    View(view::Commands),
    #[command(flatten)]
    Bench(bench::Commands),
}

/// Runs a parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let json = cli.json;
    let client = Client::from_env();
    let c = &client;
    match cli.command {
        Command::Boxes(cmd) => cmd.run(c, json).await,
        Command::Timeline(cmd) => cmd.run(c, json).await,
        Command::Desktop(cmd) => cmd.run(c, json).await,
        Command::Exec(cmd) => cmd.run(c, json).await,
        Command::Shell(cmd) => cmd.run(c, json).await,
        Command::Files(cmd) => cmd.run(c, json).await,
        Command::Procs(cmd) => cmd.run(c, json).await,
        Command::Desk(cmd) => cmd.run(c, json).await,
        Command::Accessibility(cmd) => cmd.run(c, json).await,
        Command::Record(cmd) => cmd.run(c, json).await,
        Command::Runtimes(cmd) => cmd.run(c, json).await,
        Command::Images(cmd) => cmd.run(c, json).await,
        Command::Mcp(cmd) => cmd.run(c, json).await,
        Command::Browser(cmd) => cmd.run(c, json).await,
        Command::Agent(cmd) => cmd.run(c, json).await,
        Command::View(cmd) => cmd.run(c, json).await,
        Command::Bench(cmd) => cmd.run(c, json).await,
    }
}
