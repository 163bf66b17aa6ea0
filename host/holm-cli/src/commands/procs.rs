//! Background processes in a box: `holm ps`, `holm spawn`, `holm logs`,
//! `holm kill` and `holm write`.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use futures_util::StreamExt;
use holm_client::{BoxClient, Client};
use holm_proto::guest::{OutputEvent, OutputKind, ProcessInfo, ProcessStart};

use crate::args::SensitiveArg;
use crate::output;
use crate::process::{exit_code, parse_env};

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// The background processes of a box, running and recently ended.
    Ps(PsArgs),
    /// Start a background process in a box and print its id.
    Spawn(SpawnArgs),
    /// A background process's output; --follow to its end (then exit with its code).
    Logs(LogsArgs),
    /// Send a signal to a background process (TERM by default).
    Kill(KillArgs),
    /// Copy standard input to a background process's standard input.
    Write(WriteArgs),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::Ps(a) => ps(c, a, json).await,
            Self::Spawn(a) => spawn(c, a, json).await,
            Self::Logs(a) => logs(c, a, json).await,
            Self::Kill(a) => kill(c, a, json).await,
            Self::Write(a) => write(c, a, json).await,
        }
    }
}

/// `holm ps BOX`.
#[derive(Debug, Args)]
pub struct PsArgs {
    /// The box id.
    r#box: String,
}

/// `holm spawn BOX -- CMD...`.
#[derive(Debug, Args)]
pub struct SpawnArgs {
    /// The box id.
    r#box: String,
    /// The working directory (default: the home directory).
    #[arg(long)]
    cwd: Option<String>,
    /// A variable, KEY=VALUE (repeat for more).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// A name of your own to find the process by.
    #[arg(long)]
    tag: Option<String>,
    #[command(flatten)]
    secret: SensitiveArg,
    /// The command and its arguments, after `--`.
    #[arg(required = true, last = true)]
    argv: Vec<String>,
}

/// `holm logs BOX PID`.
#[derive(Debug, Args)]
pub struct LogsArgs {
    /// The box id.
    r#box: String,
    /// The process id, as `holm spawn` printed it (`p_1`).
    pid: String,
    /// Keep printing until the process ends, then exit with its code.
    #[arg(long, short = 'f')]
    follow: bool,
    /// Start after this event (default: from the first one still kept).
    #[arg(long, default_value_t = 0)]
    cursor: u64,
}

/// `holm kill BOX PID`.
#[derive(Debug, Args)]
pub struct KillArgs {
    /// The box id.
    r#box: String,
    /// The process id (`p_1`).
    pid: String,
    /// The signal: a name such as TERM, KILL, INT, HUP (with or without
    /// SIG) or a number.
    #[arg(long, short = 's', default_value = "TERM")]
    signal: String,
}

/// `holm write BOX PID`: standard input to the process's standard input.
#[derive(Debug, Args)]
pub struct WriteArgs {
    /// The box id.
    r#box: String,
    /// The process id (`p_1`).
    pid: String,
    /// Close the process's standard input afterwards (it reads end of file).
    #[arg(long)]
    eof: bool,
}

/// `holm ps`: the box's background processes, running and recently ended.
pub async fn ps(client: &Client, a: PsArgs, json: bool) -> anyhow::Result<ExitCode> {
    let list = client.boxed(&a.r#box).processes().await?;
    if json {
        output::json(&list);
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|p| {
            vec![
                p.id.clone(),
                p.pid.to_string(),
                ended(p),
                p.tag.clone().unwrap_or_default(),
                p.started_at.clone(),
                p.command.clone(),
            ]
        })
        .collect();
    output::table(&["ID", "PID", "STATE", "TAG", "STARTED", "COMMAND"], &rows);
    Ok(ExitCode::SUCCESS)
}

/// `running`, `exited 3` or `killed SIGTERM`.
fn ended(p: &ProcessInfo) -> String {
    match (p.state, p.exit_code, &p.signal) {
        (holm_proto::guest::ProcessState::Running, ..) => "running".into(),
        (_, Some(code), _) => format!("exited {code}"),
        (_, None, Some(signal)) => format!("killed {signal}"),
        (_, None, None) => "exited".into(),
    }
}

/// `holm spawn`: starts a background process and prints its id.
pub async fn spawn(client: &Client, a: SpawnArgs, json: bool) -> anyhow::Result<ExitCode> {
    let request = ProcessStart {
        argv: Some(a.argv),
        command: None,
        cwd: a.cwd,
        env: parse_env(&a.env)?,
        tag: a.tag,
        sensitive: a.secret.sensitive,
    };
    let info = client.boxed(&a.r#box).start_process(&request).await?;
    if json {
        output::json(&info);
    } else {
        output::line(&info.id);
    }
    Ok(ExitCode::SUCCESS)
}

/// `holm logs`: a process's output so far, or followed to its end.
pub async fn logs(client: &Client, a: LogsArgs, json: bool) -> anyhow::Result<ExitCode> {
    let b = client.boxed(&a.r#box);
    if a.follow {
        let mut events = std::pin::pin!(b.follow(&a.pid, a.cursor).await?);
        while let Some(event) = events.next().await {
            let event = event?;
            if let Some(code) = print_event(&event, json)? {
                return Ok(code);
            }
        }
        // The stream ended without an exit event: ask how it ended.
        return Ok(process_code(&b.process(&a.pid).await?));
    }
    let mut cursor = a.cursor;
    loop {
        let page = b.output(&a.pid, cursor, 0).await?;
        for event in &page.data {
            print_event(event, json)?;
        }
        if page.done || page.data.is_empty() || page.next_cursor == cursor {
            return Ok(ExitCode::SUCCESS);
        }
        cursor = page.next_cursor;
    }
}

/// Prints one event: output to the stream it came from, or with `--json`
/// the event as one line. Answers the process's exit code at its end.
fn print_event(event: &OutputEvent, json: bool) -> anyhow::Result<Option<ExitCode>> {
    if json {
        output::json_line(event);
    }
    match &event.kind {
        OutputKind::Stdout { data } if !json => {
            let mut out = std::io::stdout();
            out.write_all(data.as_bytes()).context("write standard output")?;
            out.flush().context("write standard output")?;
        }
        OutputKind::Stderr { data } if !json => {
            let mut err = std::io::stderr();
            let _ = err.write_all(data.as_bytes());
            let _ = err.flush();
        }
        OutputKind::Gap { missed } if !json => {
            output::note(&format!("[{missed} events were dropped before this point]"));
        }
        OutputKind::Exit { exit_code: code, signal } => {
            return Ok(Some(exit_code(*code, signal.as_deref(), false)));
        }
        _ => {}
    }
    Ok(None)
}

/// The exit code of an ended process, as `holm exec` would exit.
fn process_code(p: &ProcessInfo) -> ExitCode {
    exit_code(p.exit_code, p.signal.as_deref(), false)
}

/// `holm kill`: sends a signal (TERM by default).
pub async fn kill(client: &Client, a: KillArgs, json: bool) -> anyhow::Result<ExitCode> {
    let b = client.boxed(&a.r#box);
    b.signal(&a.pid, &a.signal).await?;
    if json {
        output::json(&b.process(&a.pid).await?);
    }
    Ok(ExitCode::SUCCESS)
}

/// `holm write`: copies standard input to the process's standard input as
/// it comes, and closes it with `--eof`.
pub async fn write(client: &Client, a: WriteArgs, json: bool) -> anyhow::Result<ExitCode> {
    let b: BoxClient = client.boxed(&a.r#box);
    let stdin = tokio_util::io::ReaderStream::new(tokio::io::stdin());
    b.write_stdin(&a.pid, reqwest::Body::wrap_stream(stdin), a.eof).await?;
    if json {
        output::json(&b.process(&a.pid).await?);
    }
    Ok(ExitCode::SUCCESS)
}
