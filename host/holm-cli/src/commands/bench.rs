//! `holm bench`: runs `holm-bench`, the benchmark, which is a program of
//! its own because it carries a whole server (holmd's library: stores,
//! sealing) that this client must not link.
//!
//! `holm-bench` is looked for in `HOLM_BENCH_BIN`, then beside this `holm`
//! (where `cargo build` and an install put it), then on the `PATH`. It
//! replaces this process, so its output, Ctrl-C and exit status are its own.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use holm_proto::{ApiError, ErrorCode};

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// Measure holm against the exec-driven way on real boxes on Docker:
    /// runs the `holm-bench` program (beside `holm`, or `HOLM_BENCH_BIN`)
    /// with these arguments; `holm bench --help` shows them.
    #[command(disable_help_flag = true)]
    Bench(BenchArgs),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(
        self,
        _c: &holm_client::Client,
        json: bool,
    ) -> anyhow::Result<ExitCode> {
        match self {
            Self::Bench(a) => run(&a.args, json),
        }
    }
}

/// `holm bench`'s arguments: all of them are the benchmark's.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The benchmark's arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// The benchmark's program.
const PROGRAM: &str = "holm-bench";

/// Where `holm-bench` is.
fn program() -> PathBuf {
    if let Some(p) = std::env::var_os("HOLM_BENCH_BIN").filter(|p| !p.is_empty()) {
        return p.into();
    }
    let beside = std::env::current_exe().ok().and_then(|e| Some(e.parent()?.join(PROGRAM)));
    beside.filter(|p| p.is_file()).unwrap_or_else(|| PROGRAM.into())
}

/// Runs `holm-bench` with `args` (and `--json`), in place of this process.
pub fn run(args: &[String], json: bool) -> anyhow::Result<ExitCode> {
    let program = program();
    let mut cmd = std::process::Command::new(&program);
    if json {
        cmd.arg("--json");
    }
    let e = cmd.args(args).exec();
    let refused = ApiError::new(
        ErrorCode::Unavailable,
        format!("holm bench runs {}, which could not be started: {e}", program.display()),
    )
    .with_hint(
        "build it with `cargo build --release -p holm-bench` and put it beside holm, or set HOLM_BENCH_BIN",
    );
    Err(refused.into())
}
