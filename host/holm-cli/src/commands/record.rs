//! Recordings of a box's screens: `holm record BOX start|stop` and
//! `holm recording ls|get|rm BOX`.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use futures_util::StreamExt;
use holm_client::Client;
use holm_proto::recording::{Recording, RecordingStart};

use crate::output;

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// Start or stop recording a screen of a box to a video (MP4).
    Record(RecordArgs),
    /// A box's recordings: list them, fetch a file, remove one.
    #[command(subcommand)]
    Recording(RecordingCmd),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::Record(a) => record(c, a, json).await,
            Self::Recording(cmd) => recording(c, cmd, json).await,
        }
    }
}

/// `holm record BOX start|stop`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The box id.
    r#box: String,
    /// Start or stop.
    #[command(subcommand)]
    cmd: RecordCmd,
}

/// Start or stop a screen's recording.
#[derive(Debug, Subcommand)]
pub enum RecordCmd {
    /// Start recording a screen; prints the recording's file.
    Start {
        /// The screen.
        #[arg(long, default_value_t = 0)]
        screen: u8,
        /// Frames a second, 1 to 30 (default 10).
        #[arg(long)]
        fps: Option<u8>,
    },
    /// Stop a screen's running recording once its file is complete.
    Stop {
        /// The screen.
        #[arg(long, default_value_t = 0)]
        screen: u8,
    },
}

/// `holm recording ls|get|rm`.
#[derive(Debug, Subcommand)]
pub enum RecordingCmd {
    /// A box's recordings: file, screen, state, start, end and size.
    Ls {
        /// The box id.
        r#box: String,
    },
    /// Write a recording's file (MP4) to PATH (default: its name, here).
    Get {
        /// The box id.
        r#box: String,
        /// The recording's file, as `holm recording ls` lists it.
        file: String,
        /// Where to write it; `-` for standard output.
        #[arg(short = 'o', long = "output", value_name = "PATH")]
        output: Option<String>,
    },
    /// Remove a recording that is not running, and its file.
    Rm {
        /// The box id.
        r#box: String,
        /// The recording's file.
        file: String,
    },
}

fn print_one(r: &Recording, json: bool) {
    if json {
        output::json(r);
    } else {
        output::line(&r.file);
    }
}

/// `holm record`: start or stop a recording.
pub async fn record(client: &Client, a: RecordArgs, json: bool) -> anyhow::Result<ExitCode> {
    let b = client.boxed(&a.r#box);
    let rec = match a.cmd {
        RecordCmd::Start { screen, fps } => {
            b.start_recording(&RecordingStart { screen, fps }).await?
        }
        RecordCmd::Stop { screen } => b.stop_recording(screen).await?,
    };
    print_one(&rec, json);
    Ok(ExitCode::SUCCESS)
}

/// `holm recording`: list, fetch or remove recordings.
pub async fn recording(client: &Client, cmd: RecordingCmd, json: bool) -> anyhow::Result<ExitCode> {
    match cmd {
        RecordingCmd::Ls { r#box } => {
            let list = client.boxed(&r#box).recordings().await?;
            if json {
                output::json(&list);
                return Ok(ExitCode::SUCCESS);
            }
            let rows: Vec<Vec<String>> = list
                .iter()
                .map(|r| {
                    vec![
                        r.file.clone(),
                        r.screen.to_string(),
                        r.state.to_string(),
                        r.started_at.clone(),
                        r.ended_at.clone().unwrap_or_default(),
                        r.stopped_by.map(|s| s.to_string()).unwrap_or_default(),
                        r.bytes.to_string(),
                    ]
                })
                .collect();
            output::table(
                &["FILE", "SCREEN", "STATE", "STARTED", "ENDED", "STOPPED BY", "BYTES"],
                &rows,
            );
        }
        RecordingCmd::Get { r#box, file, output: dst } => {
            let mut stream = std::pin::pin!(client.boxed(&r#box).recording_stream(&file).await?);
            let dst = dst.unwrap_or_else(|| file.clone());
            let mut out: Box<dyn std::io::Write> = if dst == "-" {
                Box::new(std::io::stdout())
            } else {
                Box::new(std::fs::File::create(&dst).with_context(|| format!("create {dst}"))?)
            };
            while let Some(chunk) = stream.next().await {
                out.write_all(&chunk?).with_context(|| format!("write {dst}"))?;
            }
            out.flush().with_context(|| format!("write {dst}"))?;
            if dst != "-" && !json {
                output::line(&dst);
            }
        }
        RecordingCmd::Rm { r#box, file } => client.boxed(&r#box).remove_recording(&file).await?,
    }
    Ok(ExitCode::SUCCESS)
}
