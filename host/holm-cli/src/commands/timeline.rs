//! `holm timeline`: what was done to a box, as a table, JSON, one HTML page
//! or a dataset directory.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use holm_client::Client;
use holm_proto::timeline::{DatasetLine, ExportFormat, Step};

use crate::output;

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// What was done to a box, step by step, with the screenshot after each:
    /// a table, --json, one HTML page (--html FILE) or a dataset (--dataset DIR).
    Timeline(TimelineArgs),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::Timeline(a) => timeline(c, a, json).await,
        }
    }
}

/// `holm timeline BOX`.
#[derive(Debug, Args)]
pub struct TimelineArgs {
    /// The box id.
    r#box: String,
    /// Write the timeline as one self-contained HTML page to FILE (open it
    /// in a browser to play the steps back).
    #[arg(long, value_name = "FILE", conflicts_with = "dataset")]
    html: Option<PathBuf>,
    /// Write the timeline as a dataset into DIR: steps.jsonl (one JSON line
    /// per step) and screenshots/ (the file each line names).
    #[arg(long, value_name = "DIR")]
    dataset: Option<PathBuf>,
}

pub(super) async fn timeline(
    client: &Client,
    a: TimelineArgs,
    json: bool,
) -> anyhow::Result<ExitCode> {
    if let Some(file) = &a.html {
        let page = client.export_timeline(&a.r#box, ExportFormat::Html).await?;
        std::fs::write(file, &page).with_context(|| format!("cannot write {}", file.display()))?;
        done(json, "html", file, None);
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(dir) = &a.dataset {
        let steps = dataset(client, &a.r#box, dir).await?;
        done(json, "dataset", dir, Some(steps));
        return Ok(ExitCode::SUCCESS);
    }
    let steps = client.whole_timeline(&a.r#box).await?;
    if json {
        output::json(&steps);
    } else {
        output::table(&["AT", "KIND", "ACTION", "STATUS", "SCREENSHOT", "REQUEST"], &rows(&steps));
    }
    Ok(ExitCode::SUCCESS)
}

fn done(json: bool, what: &str, path: &Path, steps: Option<usize>) {
    if json {
        output::json(&serde_json::json!({ "written": what, "path": path, "steps": steps }));
    } else {
        match steps {
            Some(n) => output::line(&format!("{n} steps written to {}", path.display())),
            None => output::line(&format!("written to {}", path.display())),
        }
    }
}

fn rows(steps: &[Step]) -> Vec<Vec<String>> {
    steps
        .iter()
        .map(|s| {
            let params = serde_json::to_string(&s.action.params).unwrap_or_default();
            let params: String = params.chars().take(60).collect();
            let status = match &s.code {
                Some(code) => format!("{} {code}", s.status),
                None => s.status.to_string(),
            };
            let shot = s.screenshot.as_ref().map_or(String::new(), |sh| {
                if sh.kept { sh.file.clone() } else { format!("{} (dropped)", sh.file) }
            });
            vec![
                s.at.clone(),
                s.action.kind.to_string(),
                format!("{} {}", s.action.name, if params == "{}" { "" } else { &params }),
                status,
                shot,
                s.request_id.clone(),
            ]
        })
        .collect()
}

/// Writes `steps.jsonl` and `screenshots/` into `dir`; answers the number
/// of steps.
async fn dataset(client: &Client, r#box: &str, dir: &Path) -> anyhow::Result<usize> {
    let lines = client.export_timeline(r#box, ExportFormat::Jsonl).await?;
    let shots = dir.join("screenshots");
    std::fs::create_dir_all(&shots).with_context(|| format!("cannot make {}", shots.display()))?;
    let text = String::from_utf8(lines).context("the server's JSONL is not UTF-8")?;
    let mut n = 0;
    for line in text.lines().filter(|l| !l.is_empty()) {
        let step: DatasetLine = serde_json::from_str(line).context("a step the server wrote")?;
        n += 1;
        let Some(file) = step.screenshot else { continue };
        let name = file.strip_prefix("screenshots/").unwrap_or(&file);
        let id = name.split('.').next().unwrap_or(name);
        let image = client.timeline_screenshot(r#box, id).await?;
        let path = shots.join(name);
        std::fs::write(&path, image).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let path = dir.join("steps.jsonl");
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(n)
}
