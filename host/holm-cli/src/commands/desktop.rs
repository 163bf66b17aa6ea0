//! The desktop from the command line: screenshots and input (`holm
//! screenshot`, `click`, `move`, `drag`, `scroll`, `type`, `key`, `cursor`).

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use holm_client::{BoxClient, Client};
use holm_proto::guest::{
    Action, Button, ImageFormat, InputRequest, Point, Region, ScreenshotOptions,
};

use crate::args::SensitiveArg;
use crate::output;

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// Save a screenshot (FILE `-` writes to standard output).
    Screenshot(ScreenshotArgs),
    /// Click at a point.
    Click(ClickArgs),
    /// Move the pointer.
    Move(MoveArgs),
    /// Drag along points: X1 Y1 X2 Y2 [X3 Y3 ...].
    Drag(DragArgs),
    /// Turn the wheel: --dy down (negative: up), --dx right (negative: left).
    Scroll(ScrollArgs),
    /// Type text (`-` reads it from standard input).
    Type(TypeArgs),
    /// Press a key or chord, such as `ctrl+shift+t`.
    Key(KeyArgs),
    /// Where the pointer is.
    Cursor(CursorArgs),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::Screenshot(a) => screenshot(c, a, json).await,
            Self::Click(a) => click(c, a, json).await,
            Self::Move(a) => move_pointer(c, a, json).await,
            Self::Drag(a) => drag(c, a, json).await,
            Self::Scroll(a) => scroll(c, a, json).await,
            Self::Type(a) => type_text(c, a, json).await,
            Self::Key(a) => key(c, a, json).await,
            Self::Cursor(a) => cursor(c, a, json).await,
        }
    }
}

#[derive(Debug, Args)]
pub(super) struct ScreenArg {
    /// The screen, from 0.
    #[arg(long, default_value_t = 0)]
    screen: u8,
}

#[derive(Debug, Args)]
pub(super) struct ScreenshotArgs {
    /// The box id.
    r#box: String,
    /// Where to write the image; `-` for standard output.
    file: String,
    #[command(flatten)]
    screen: ScreenArg,
    /// png, jpeg or webp (default: from the file's extension, else png).
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// JPEG quality, 1 to 100.
    #[arg(long)]
    quality: Option<u8>,
    /// Only this part: x,y,width,height.
    #[arg(long)]
    region: Option<Region>,
    /// Downscale to at most this width.
    #[arg(long)]
    max_width: Option<u32>,
    /// Downscale to at most this height.
    #[arg(long)]
    max_height: Option<u32>,
    /// Draw the pointer.
    #[arg(long)]
    cursor: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FormatArg {
    Png,
    Jpeg,
    Webp,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ButtonArg {
    Left,
    Middle,
    Right,
}

impl From<ButtonArg> for Button {
    fn from(b: ButtonArg) -> Self {
        match b {
            ButtonArg::Left => Self::Left,
            ButtonArg::Middle => Self::Middle,
            ButtonArg::Right => Self::Right,
        }
    }
}

#[derive(Debug, Args)]
pub(super) struct ClickArgs {
    /// The box id.
    r#box: String,
    /// Horizontal position.
    x: i32,
    /// Vertical position.
    y: i32,
    /// The button.
    #[arg(long, value_enum, default_value_t = ButtonArg::Left)]
    button: ButtonArg,
    /// 2 for a double click, 3 for a triple click.
    #[arg(long, default_value_t = 1)]
    count: u8,
    /// Keys held during the click, comma-separated, such as ctrl,shift.
    #[arg(long, value_delimiter = ',')]
    modifiers: Vec<String>,
    #[command(flatten)]
    screen: ScreenArg,
}

/// `holm move`.
#[derive(Debug, Args)]
pub(super) struct MoveArgs {
    /// The box id.
    r#box: String,
    /// Horizontal position.
    x: i32,
    /// Vertical position.
    y: i32,
    #[command(flatten)]
    screen: ScreenArg,
}

/// `holm drag`.
#[derive(Debug, Args)]
pub(super) struct DragArgs {
    /// The box id.
    r#box: String,
    /// The points, at least two.
    #[arg(required = true, num_args = 4.., allow_negative_numbers = true)]
    pub(super) coords: Vec<i32>,
    /// The button.
    #[arg(long, value_enum, default_value_t = ButtonArg::Left)]
    button: ButtonArg,
    #[command(flatten)]
    screen: ScreenArg,
}

/// `holm scroll`.
#[derive(Debug, Args)]
pub(super) struct ScrollArgs {
    /// The box id.
    r#box: String,
    /// Vertical clicks.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    dy: i32,
    /// Horizontal clicks.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    dx: i32,
    /// Where (default: where the pointer is).
    #[arg(long)]
    x: Option<i32>,
    /// Where (default: where the pointer is).
    #[arg(long)]
    y: Option<i32>,
    #[command(flatten)]
    screen: ScreenArg,
}

/// `holm type`.
#[derive(Debug, Args)]
pub(super) struct TypeArgs {
    /// The box id.
    r#box: String,
    /// The text; `\n` is Return and `\t` is Tab.
    text: String,
    #[command(flatten)]
    screen: ScreenArg,
    #[command(flatten)]
    pub(super) secret: SensitiveArg,
}

/// `holm key`.
#[derive(Debug, Args)]
pub(super) struct KeyArgs {
    /// The box id.
    r#box: String,
    /// The key or chord.
    chord: String,
    /// How many times.
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    #[command(flatten)]
    screen: ScreenArg,
}

/// `holm cursor`.
#[derive(Debug, Args)]
pub(super) struct CursorArgs {
    /// The box id.
    r#box: String,
    #[command(flatten)]
    screen: ScreenArg,
}

pub(super) async fn screenshot(
    client: &Client,
    a: ScreenshotArgs,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let format = a.format.map_or_else(
        || match a.file.rsplit('.').next().map(str::to_ascii_lowercase).as_deref() {
            Some("jpg" | "jpeg") => ImageFormat::Jpeg,
            Some("webp") => ImageFormat::Webp,
            _ => ImageFormat::Png,
        },
        |f| match f {
            FormatArg::Png => ImageFormat::Png,
            FormatArg::Jpeg => ImageFormat::Jpeg,
            FormatArg::Webp => ImageFormat::Webp,
        },
    );
    let options = ScreenshotOptions {
        format: Some(format),
        quality: a.quality,
        region: a.region,
        max_width: a.max_width,
        max_height: a.max_height,
        scale: None,
        cursor: a.cursor.then_some(true),
    };
    let shot = client.boxed(&a.r#box).screenshot(a.screen.screen, &options).await?;
    if a.file == "-" {
        std::io::stdout().write_all(&shot.bytes).context("write standard output")?;
    } else {
        std::fs::write(&a.file, &shot.bytes).with_context(|| format!("write {}", a.file))?;
        if json {
            output::json(&shot.meta);
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn input(
    b: &BoxClient,
    screen: u8,
    actions: Vec<Action>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    send_input(b, screen, &InputRequest { actions, ..InputRequest::default() }, json).await
}

/// Sends one input request; prints its result with `--json`.
async fn send_input(
    b: &BoxClient,
    screen: u8,
    request: &InputRequest,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let result = b.input(screen, request).await?;
    if json {
        output::json(&result);
    }
    Ok(ExitCode::SUCCESS)
}

/// `holm click`.
pub(super) async fn click(client: &Client, a: ClickArgs, json: bool) -> anyhow::Result<ExitCode> {
    let action = Action::Click {
        x: Some(a.x),
        y: Some(a.y),
        button: a.button.into(),
        count: a.count,
        modifiers: a.modifiers,
    };
    input(&client.boxed(&a.r#box), a.screen.screen, vec![action], json).await
}

/// `holm move`.
pub(super) async fn move_pointer(
    client: &Client,
    a: MoveArgs,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let action = Action::Move { x: a.x, y: a.y };
    input(&client.boxed(&a.r#box), a.screen.screen, vec![action], json).await
}

/// `holm drag`: along pairs of coordinates.
pub(super) async fn drag(client: &Client, a: DragArgs, json: bool) -> anyhow::Result<ExitCode> {
    if !a.coords.len().is_multiple_of(2) {
        bail!("drag takes pairs of coordinates: X1 Y1 X2 Y2 ...");
    }
    let path = a.coords.chunks(2).map(|c| Point { x: c[0], y: c[1] }).collect();
    let action = Action::Drag { path, button: a.button.into(), modifiers: vec![], step_ms: 0 };
    input(&client.boxed(&a.r#box), a.screen.screen, vec![action], json).await
}

/// `holm scroll`.
pub(super) async fn scroll(client: &Client, a: ScrollArgs, json: bool) -> anyhow::Result<ExitCode> {
    let action = Action::Scroll { x: a.x, y: a.y, dx: a.dx, dy: a.dy, modifiers: vec![] };
    input(&client.boxed(&a.r#box), a.screen.screen, vec![action], json).await
}

/// `holm type`: the text, or standard input for `-`.
pub(super) async fn type_text(
    client: &Client,
    a: TypeArgs,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let text = if a.text == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .context("read standard input")?;
        s
    } else {
        a.text
    };
    let request = InputRequest {
        actions: vec![Action::Type { text }],
        sensitive: a.secret.sensitive,
        ..InputRequest::default()
    };
    send_input(&client.boxed(&a.r#box), a.screen.screen, &request, json).await
}

/// `holm key`.
pub(super) async fn key(client: &Client, a: KeyArgs, json: bool) -> anyhow::Result<ExitCode> {
    let action = Action::Key { key: a.chord, repeat: a.repeat };
    input(&client.boxed(&a.r#box), a.screen.screen, vec![action], json).await
}

/// `holm cursor`: where the pointer is.
pub(super) async fn cursor(client: &Client, a: CursorArgs, json: bool) -> anyhow::Result<ExitCode> {
    let c = client.boxed(&a.r#box).cursor(a.screen.screen).await?;
    if json {
        output::json(&c);
    } else {
        output::line(&format!("{} {}", c.x, c.y));
    }
    Ok(ExitCode::SUCCESS)
}
