//! Windows and the clipboard of a box: `holm windows`, `holm window` and
//! `holm clipboard`.

use std::io::{Read as _, Write as _};
use std::process::ExitCode;

use anyhow::{Context, bail};
use base64::Engine as _;
use clap::{Args, Subcommand};
use holm_client::Client;
use holm_proto::desk::{ClipboardSet, WindowAction};

use crate::output;

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// The windows of a box: id, screen, focus, rectangle, app and title.
    Windows(WindowsArgs),
    /// Focus, move, resize or close a window of a box.
    Window(WindowArgs),
    /// Get or set a box's clipboard: text, a PNG image, or both.
    Clipboard(ClipboardArgs),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::Windows(a) => windows(c, a, json).await,
            Self::Window(a) => window(c, a, json).await,
            Self::Clipboard(a) => clipboard(c, a, json).await,
        }
    }
}

/// `holm windows BOX`.
#[derive(Debug, Args)]
pub struct WindowsArgs {
    /// The box id.
    r#box: String,
}

/// `holm window BOX ID ACTION`.
#[derive(Debug, Args)]
pub struct WindowArgs {
    /// The box id.
    r#box: String,
    /// The window's id, as `holm windows` lists it.
    id: u64,
    /// What to do.
    #[command(subcommand)]
    action: WindowCmd,
}

/// What to do to a window.
#[derive(Debug, Subcommand)]
pub enum WindowCmd {
    /// Raise it and give it the keyboard focus.
    Focus,
    /// Move its top-left corner to X Y of its screen.
    Move {
        /// The left edge.
        #[arg(allow_negative_numbers = true)]
        x: i32,
        /// The top edge.
        #[arg(allow_negative_numbers = true)]
        y: i32,
    },
    /// Give it this size, in pixels.
    Resize {
        /// The width.
        width: u32,
        /// The height.
        height: u32,
    },
    /// Ask it to close.
    Close,
}

/// `holm clipboard BOX get|set`.
#[derive(Debug, Args)]
pub struct ClipboardArgs {
    /// The box id.
    r#box: String,
    /// Get or set.
    #[command(subcommand)]
    cmd: ClipboardCmd,
}

/// Get or set the clipboard.
#[derive(Debug, Subcommand)]
pub enum ClipboardCmd {
    /// Print the clipboard's text (with --image, write its PNG image to FILE).
    Get {
        /// Write the clipboard's PNG image to this file.
        #[arg(long, value_name = "FILE")]
        image: Option<String>,
    },
    /// Put text (`-` reads standard input), a PNG image, or both on the clipboard.
    Set {
        /// The text, or `-` for standard input.
        text: Option<String>,
        /// A PNG file to put on the clipboard.
        #[arg(long, value_name = "FILE.png")]
        image: Option<String>,
        #[command(flatten)]
        secret: crate::args::SensitiveArg,
    },
}

/// `holm windows`: the box's windows.
pub async fn windows(client: &Client, a: WindowsArgs, json: bool) -> anyhow::Result<ExitCode> {
    let list = client.boxed(&a.r#box).windows().await?;
    if json {
        output::json(&list);
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|w| {
            vec![
                w.id.to_string(),
                w.screen.to_string(),
                if w.focused { "*".into() } else { String::new() },
                format!("{},{} {}x{}", w.x, w.y, w.width, w.height),
                w.app.clone(),
                w.title.clone(),
            ]
        })
        .collect();
    output::table(&["ID", "SCREEN", "FOCUS", "RECT", "APP", "TITLE"], &rows);
    Ok(ExitCode::SUCCESS)
}

/// `holm window`: focus, move, resize or close a window.
pub async fn window(client: &Client, a: WindowArgs, json: bool) -> anyhow::Result<ExitCode> {
    let action = match a.action {
        WindowCmd::Focus => WindowAction::Focus,
        WindowCmd::Move { x, y } => WindowAction::Move { x, y },
        WindowCmd::Resize { width, height } => WindowAction::Resize { width, height },
        WindowCmd::Close => WindowAction::Close,
    };
    let acted = client.boxed(&a.r#box).window(a.id, action).await?;
    if json {
        output::json(&acted);
    } else {
        match (&acted.window, acted.applied) {
            (None, _) => output::line("closed"),
            (Some(w), applied) => output::line(&format!(
                "{} {},{} {}x{}{}{}",
                w.id,
                w.x,
                w.y,
                w.width,
                w.height,
                if w.focused { " focused" } else { "" },
                if applied { "" } else { " (not applied yet)" }
            )),
        }
    }
    Ok(if acted.applied { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `holm clipboard`.
pub async fn clipboard(client: &Client, a: ClipboardArgs, json: bool) -> anyhow::Result<ExitCode> {
    let b = client.boxed(&a.r#box);
    let b64 = base64::engine::general_purpose::STANDARD;
    match a.cmd {
        ClipboardCmd::Get { image } => {
            let clip = b.clipboard().await?;
            if let Some(path) = image {
                let Some(png) = &clip.png_base64 else { bail!("the clipboard holds no image") };
                let bytes = b64.decode(png).context("the image's base64")?;
                std::fs::write(&path, bytes).with_context(|| format!("write {path}"))?;
            }
            if json {
                output::json(&clip);
            } else if let Some(text) = &clip.text {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())?;
                out.flush()?;
            }
        }
        ClipboardCmd::Set { text, image, secret } => {
            let text = match text.as_deref() {
                Some("-") => {
                    let mut s = String::new();
                    std::io::stdin().read_to_string(&mut s).context("read standard input")?;
                    Some(s)
                }
                _ => text,
            };
            let png_base64 = match image {
                Some(path) => {
                    Some(b64.encode(std::fs::read(&path).with_context(|| format!("read {path}"))?))
                }
                None => None,
            };
            if text.is_none() && png_base64.is_none() {
                bail!("give the text (or - for standard input), --image FILE.png, or both");
            }
            let sensitive = secret.sensitive;
            let clip = b.set_clipboard(&ClipboardSet { text, png_base64, sensitive }).await?;
            if json {
                output::json(&clip);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
