//! The desktop from the command line: screenshots and input.

use super::*;

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
pub(super) enum FormatArg {
    Png,
    Jpeg,
    Webp,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(super) enum ButtonArg {
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

pub(super) async fn input(
    b: &BoxClient,
    screen: u8,
    actions: Vec<Action>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    send_input(b, screen, &InputRequest { actions, ..InputRequest::default() }, json).await
}

/// Sends one input request; prints its result with `--json`.
pub(super) async fn send_input(
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
