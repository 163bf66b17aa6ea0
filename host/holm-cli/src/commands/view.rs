//! `holm view` (a screen's viewer or takeover URL) and `holm handoff`
//! (ask a person for help, and wait until they hand back).

use std::process::ExitCode;

use clap::Args;
use holm_client::Client;
use holm_proto::viewer::{AskForHelp, CreateViewer, Handoff, ViewerMode};

use crate::output;

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// A screen's viewer URL (watch only) or takeover URL (`--takeover`); `--open` opens it,
    /// `--revoke GRANT` revokes one, `--list` lists them.
    View(ViewArgs),
    /// Ask a person for help (`--ask REASON` prints a takeover URL), and wait until they hand back (`--wait SECS`).
    Handoff(HandoffArgs),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::View(a) => view(c, a, json).await,
            Self::Handoff(a) => handoff(c, a, json).await,
        }
    }
}

/// `holm view BOX [--screen N] [--takeover] [--open]`.
#[derive(Debug, Args)]
pub struct ViewArgs {
    /// The box id.
    r#box: String,
    /// The screen, from 0.
    #[arg(long, default_value_t = 0)]
    screen: u8,
    /// A takeover URL (mouse, keyboard and clipboard) rather than watch only.
    #[arg(long)]
    takeover: bool,
    /// Open the URL in a browser (`$BROWSER`, else xdg-open or open).
    #[arg(long)]
    open: bool,
    /// Seconds until the URL stops working (1 to 86400).
    #[arg(long, default_value_t = 3600)]
    expires: u64,
    /// Who the URL is for, named in the box's control events.
    #[arg(long)]
    label: Option<String>,
    /// Revoke this grant (`vg_...`) instead: its URL stops working and its
    /// connections close.
    #[arg(long, value_name = "GRANT", conflicts_with_all = ["takeover", "open", "label", "list"])]
    revoke: Option<String>,
    /// List the box's viewer grants instead.
    #[arg(long, conflicts_with_all = ["takeover", "open", "label"])]
    list: bool,
}

/// `holm handoff BOX [--ask REASON] [--wait SECS]`.
#[derive(Debug, Args)]
pub struct HandoffArgs {
    /// The box id.
    r#box: String,
    /// Ask a person for help: prints a takeover URL whose page shows this reason.
    #[arg(long, value_name = "REASON")]
    ask: Option<String>,
    /// The screen the person is asked to take.
    #[arg(long, default_value_t = 0)]
    screen: u8,
    /// Wait up to this many seconds (at most 900) until the person hands back.
    #[arg(long, value_name = "SECS")]
    wait: Option<u64>,
}

/// Opens `url` in the person's browser.
fn open(url: &str) -> anyhow::Result<()> {
    let program = std::env::var("BROWSER").ok().filter(|b| !b.is_empty()).unwrap_or_else(|| {
        if cfg!(target_os = "macos") { "open".into() } else { "xdg-open".into() }
    });
    std::process::Command::new(&program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot run {program} to open the URL: {e}"))?;
    Ok(())
}

/// `holm view ...`.
pub async fn view(client: &Client, a: ViewArgs, json: bool) -> anyhow::Result<ExitCode> {
    if let Some(grant) = &a.revoke {
        let g = client.revoke_viewer(&a.r#box, grant).await?;
        if json {
            output::json(&g);
        } else {
            output::line(&format!("revoked {}", g.id));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if a.list {
        let grants = client.viewers(&a.r#box).await?;
        if json {
            output::json(&grants);
        } else {
            for g in grants {
                let state = if g.revoked_at.is_some() { "revoked" } else { "active" };
                output::line(&format!(
                    "{}\t{}\t{}\t{}\t{}",
                    g.id,
                    g.screen,
                    g.mode.as_str(),
                    state,
                    g.expires_at
                ));
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let request = CreateViewer {
        screen: a.screen,
        mode: Some(if a.takeover { ViewerMode::Control } else { ViewerMode::View }),
        expires_after_secs: Some(a.expires),
        label: a.label,
    };
    let grant = client.create_viewer(&a.r#box, &request).await?;
    if json {
        output::json(&grant);
    } else {
        output::line(&grant.url);
    }
    if a.open {
        open(&grant.url)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_handoff(h: &Handoff, json: bool) {
    if json {
        output::json(h);
        return;
    }
    output::line(&format!("state       {}", h.status.state));
    if let Some(c) = &h.status.control {
        output::line(&format!("in control  since {} on screen {}", c.since, c.screen));
    }
    if let Some(url) = &h.takeover_url {
        output::line(&format!("takeover    {url}"));
    }
}

/// `holm handoff ...`.
pub async fn handoff(client: &Client, a: HandoffArgs, json: bool) -> anyhow::Result<ExitCode> {
    if let Some(reason) = a.ask {
        let request = AskForHelp { reason, screen: a.screen, expires_after_secs: None };
        let asked = client.ask_for_help(&a.r#box, &request).await?;
        print_handoff(&asked, json);
        if a.wait.is_none() {
            return Ok(ExitCode::SUCCESS);
        }
    }
    let h = client.handoff(&a.r#box, a.wait).await?;
    print_handoff(&h, json);
    Ok(ExitCode::SUCCESS)
}
