//! The commands.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use futures_util::StreamExt;
use holm_client::{BoxClient, Client};
use holm_proto::guest::{
    Action, Button, CommandEvent, CommandRequest, ImageFormat, InputRequest, Point, Region,
    ScreenshotOptions,
};
use holm_proto::host::{BoxSpec, BuildEvent, BuildImage, CreateBox, ForkBox, Placement};

use crate::output;

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

#[derive(Debug, Subcommand)]
enum Command {
    /// Create a box and print its id once its desktop answers.
    New(NewArgs),
    /// List the boxes.
    Ls,
    /// Show one box.
    Get {
        /// The box id.
        r#box: String,
    },
    /// Remove boxes.
    Rm {
        /// The box ids.
        #[arg(required = true)]
        boxes: Vec<String>,
    },
    /// Stop boxes, keeping their files.
    Stop {
        /// The box ids.
        #[arg(required = true)]
        boxes: Vec<String>,
    },
    /// Start a stopped box: a new desktop on new ports.
    Start {
        /// The box id.
        r#box: String,
        /// Wait at most this many seconds for the desktop.
        #[arg(long, default_value_t = 300)]
        wait: u64,
    },
    /// Pause a box, keeping its memory.
    Pause {
        /// The box id.
        r#box: String,
    },
    /// Resume a paused box where it was.
    Resume {
        /// The box id.
        r#box: String,
    },
    /// Fork a box: a new box with a copy of its files. Prints the new id.
    Fork {
        /// The box id.
        r#box: String,
        /// Remove the copy after this many minutes (default: the runtime's).
        #[arg(long, value_name = "MINUTES")]
        ttl: Option<u64>,
        /// Remove the copy when no command came for this many minutes
        /// (default: the original's).
        #[arg(long, value_name = "MINUTES")]
        idle: Option<u64>,
        /// A name of your own for the copy.
        #[arg(long)]
        name: Option<String>,
        /// Wait at most this many seconds for the copy's desktop.
        #[arg(long, default_value_t = 600)]
        wait: u64,
    },
    /// Move the end of a box's lifetime later.
    Extend {
        /// The box id.
        r#box: String,
        /// How many minutes more.
        #[arg(long, value_name = "N")]
        minutes: u64,
    },
    /// The requests through the server to a box, oldest first.
    Traces {
        /// The box id.
        r#box: String,
    },
    /// Save a screenshot (FILE `-` writes to standard output).
    Screenshot(ScreenshotArgs),
    /// Click at a point.
    Click(ClickArgs),
    /// Move the pointer.
    Move {
        /// The box id.
        r#box: String,
        /// Horizontal position.
        x: i32,
        /// Vertical position.
        y: i32,
        #[command(flatten)]
        screen: ScreenArg,
    },
    /// Drag along points: X1 Y1 X2 Y2 [X3 Y3 ...].
    Drag {
        /// The box id.
        r#box: String,
        /// The points, at least two.
        #[arg(required = true, num_args = 4.., allow_negative_numbers = true)]
        coords: Vec<i32>,
        /// The button.
        #[arg(long, value_enum, default_value_t = ButtonArg::Left)]
        button: ButtonArg,
        #[command(flatten)]
        screen: ScreenArg,
    },
    /// Turn the wheel: --dy down (negative: up), --dx right (negative: left).
    Scroll {
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
    },
    /// Type text (`-` reads it from standard input).
    Type {
        /// The box id.
        r#box: String,
        /// The text; `\n` is Return and `\t` is Tab.
        text: String,
        #[command(flatten)]
        screen: ScreenArg,
    },
    /// Press a key or chord, such as `ctrl+shift+t`.
    Key {
        /// The box id.
        r#box: String,
        /// The key or chord.
        chord: String,
        /// How many times.
        #[arg(long, default_value_t = 1)]
        repeat: u32,
        #[command(flatten)]
        screen: ScreenArg,
    },
    /// Where the pointer is.
    Cursor {
        /// The box id.
        r#box: String,
        #[command(flatten)]
        screen: ScreenArg,
    },
    /// Run a command in a box, stream its output, and exit with its code.
    Exec(ExecArgs),
    /// Copy a file to or from a box: `holm cp FILE BOX:PATH` or `holm cp BOX:PATH FILE`.
    Cp {
        /// Where from.
        src: String,
        /// Where to.
        dst: String,
    },
    /// Runtimes.
    #[command(subcommand)]
    Runtime(RuntimeCmd),
    /// Box images.
    #[command(subcommand)]
    Image(ImageCmd),
    /// The app catalogue for `--app`.
    Apps,
    /// Serve MCP on standard input and output (`holm mcp --stdio`), for an
    /// MCP host that starts a local process.
    Mcp(crate::mcp::McpArgs),
    /// How to connect Playwright or Puppeteer to a box's Chromium (prints credentials).
    Bridge(crate::browser::BridgeArgs),
    /// Page tools on a box's Chromium: tabs, goto, click, type, fill, press, wait, eval, screenshot, text, html.
    Page(crate::browser::PageArgs),
    /// Save a box's browser login (cookies and web storage), or load one into a box.
    #[command(subcommand)]
    State(crate::browser::StateCmd),
    /// Measure holm against the exec-driven way on real boxes on Docker (its
    /// own holmd in this process; prints tables and writes a JSON report).
    Bench(crate::bench::BenchArgs),
}

#[derive(Debug, Args)]
struct ScreenArg {
    /// The screen, from 0.
    #[arg(long, default_value_t = 0)]
    screen: u8,
}

#[derive(Debug, Args)]
struct NewArgs {
    /// The runtime (default: the server's default).
    #[arg(long)]
    runtime: Option<String>,
    /// Remove the box after this many minutes (default 60).
    #[arg(long, value_name = "MINUTES")]
    ttl: Option<u64>,
    /// Remove the box when no command came for this many minutes.
    #[arg(long, value_name = "MINUTES")]
    idle: Option<u64>,
    /// How many screens, 1 to 6.
    #[arg(long)]
    screens: Option<u8>,
    /// The size of every screen, such as 1920x1080.
    #[arg(long)]
    size: Option<String>,
    /// An app from the catalogue (repeat for more).
    #[arg(long = "app")]
    apps: Vec<String>,
    /// A Debian package (repeat for more).
    #[arg(long = "package")]
    packages: Vec<String>,
    /// Run no browser.
    #[arg(long)]
    no_browser: bool,
    /// Memory, such as 4g.
    #[arg(long)]
    memory: Option<String>,
    /// CPUs, such as 2.
    #[arg(long)]
    cpus: Option<f64>,
    /// A name of your own.
    #[arg(long)]
    name: Option<String>,
    /// Keep Chromium's user data in this named browser profile, which later
    /// boxes with the same profile reuse (one live box per profile).
    #[arg(long)]
    profile: Option<String>,
    /// Wait at most this many seconds for the desktop (the first box of a new
    /// image also waits for its build).
    #[arg(long, default_value_t = 900)]
    wait: u64,
    /// Makes the create safe to retry: the same key and options answer the
    /// same box for 24 hours.
    #[arg(long, value_name = "KEY")]
    idempotency_key: Option<String>,
}

#[derive(Debug, Args)]
struct ScreenshotArgs {
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
struct ClickArgs {
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

#[derive(Debug, Args)]
struct ExecArgs {
    /// The box id.
    r#box: String,
    /// The working directory.
    #[arg(long)]
    cwd: Option<String>,
    /// A variable, KEY=VALUE (repeat for more).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// Kill the command after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
    /// The command and its arguments, after `--`.
    #[arg(required = true, last = true)]
    argv: Vec<String>,
}

#[derive(Debug, Subcommand)]
enum RuntimeCmd {
    /// List the runtimes and what each can do.
    Ls,
    /// Show one runtime.
    Get {
        /// Its name.
        name: String,
    },
    /// Add a remote runtime: a cloud vendor account with a name. The key is
    /// read from standard input (--api-key) or a variable (--api-key-env),
    /// never from the command line.
    Add {
        /// Its name.
        name: String,
        /// The vendor: e2b, vercel, daytona, modal or runtime-cloud.
        #[arg(long)]
        provider: String,
        /// A setting, KEY=VALUE, such as team_id=team_... (repeat for more).
        #[arg(long = "field", value_name = "KEY=VALUE")]
        fields: Vec<String>,
        #[command(flatten)]
        key: KeyArgs,
    },
    /// Change a remote runtime's settings, or replace its key.
    Set {
        /// Its name.
        name: String,
        /// A setting to set, KEY=VALUE (repeat for more).
        #[arg(long = "field", value_name = "KEY=VALUE")]
        fields: Vec<String>,
        /// A setting to remove (repeat for more).
        #[arg(long = "unset", value_name = "KEY")]
        unset: Vec<String>,
        #[command(flatten)]
        key: KeyArgs,
    },
    /// Remove a remote runtime.
    Rm {
        /// Its name.
        name: String,
    },
}

/// Where a vendor key comes from: never the command line.
#[derive(Debug, Args)]
struct KeyArgs {
    /// Read the key from standard input.
    #[arg(long, conflicts_with = "api_key_env")]
    api_key: bool,
    /// Read the key from this environment variable.
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
}

impl KeyArgs {
    /// The key, when one is asked for.
    fn read(&self) -> anyhow::Result<Option<String>> {
        if let Some(var) = &self.api_key_env {
            let key = std::env::var(var).with_context(|| format!("{var} is not set"))?;
            if key.trim().is_empty() {
                bail!("{var} is empty");
            }
            return Ok(Some(key.trim().to_owned()));
        }
        if self.api_key {
            use std::io::Read as _;
            let mut key = String::new();
            std::io::stdin()
                .read_to_string(&mut key)
                .context("read the key from standard input")?;
            if key.trim().is_empty() {
                bail!(
                    "no key on standard input: printf '%s' \"$KEY\" | holm runtime add ... --api-key"
                );
            }
            return Ok(Some(key.trim().to_owned()));
        }
        Ok(None)
    }
}

/// Parses KEY=VALUE settings: `true`/`false` and whole numbers as such,
/// anything else as text.
fn parse_fields(
    fields: &[String],
) -> anyhow::Result<std::collections::BTreeMap<String, serde_json::Value>> {
    let mut out = std::collections::BTreeMap::new();
    for f in fields {
        let Some((k, v)) = f.split_once('=') else {
            bail!("--field {f:?} is not KEY=VALUE");
        };
        let value = match v {
            "true" => serde_json::Value::Bool(true),
            "false" => serde_json::Value::Bool(false),
            _ => v
                .parse::<u64>()
                .map_or_else(|_| serde_json::Value::from(v), serde_json::Value::from),
        };
        out.insert(k.trim().to_owned(), value);
    }
    Ok(out)
}

#[derive(Debug, Subcommand)]
enum ImageCmd {
    /// Build a box image (each set of apps and packages is its own image).
    Build {
        /// The runtime whose engine builds it (default: the default runtime).
        runtime: Option<String>,
        /// An app from the catalogue (repeat for more).
        #[arg(long = "app")]
        apps: Vec<String>,
        /// A Debian package (repeat for more).
        #[arg(long = "package")]
        packages: Vec<String>,
        /// Build on the local Docker engine, without a server.
        #[arg(long)]
        local: bool,
    },
    /// List the images holm built.
    Ls {
        /// Ask the local Docker engine, without a server.
        #[arg(long)]
        local: bool,
    },
    /// Make the base image (debian:bookworm-slim) with debootstrap if it is
    /// missing and cannot be pulled.
    Base {
        /// The runtime whose engine gets it (default: the default runtime).
        runtime: Option<String>,
        /// Use the local Docker engine, without a server.
        #[arg(long)]
        local: bool,
    },
}

/// Runs a parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let json = cli.json;
    let client = Client::from_env();
    match cli.command {
        Command::New(a) => new(&client, a, json).await,
        Command::Ls => {
            let boxes = client.all_boxes().await?;
            if json {
                output::json(&boxes);
            } else {
                let rows: Vec<Vec<String>> = boxes
                    .iter()
                    .map(|b| {
                        vec![
                            b.id.clone(),
                            b.runtime.clone(),
                            state_name(&b.state),
                            b.created_at.clone(),
                            b.expires_at.clone(),
                        ]
                    })
                    .collect();
                output::table(&["ID", "RUNTIME", "STATE", "CREATED", "EXPIRES"], &rows);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Get { r#box } => {
            let info = client.get_box(&r#box, None).await?;
            output::json(&info);
            Ok(ExitCode::SUCCESS)
        }
        Command::Rm { boxes } => {
            let mut removed = Vec::new();
            for id in &boxes {
                removed.push(client.remove_box(id).await?);
            }
            if json {
                output::json(&removed);
            } else {
                for b in removed {
                    output::line(&b.id);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Stop { boxes } => {
            let mut stopped = Vec::new();
            for id in &boxes {
                stopped.push(client.stop_box(id).await?);
            }
            print_boxes(&stopped, json);
            Ok(ExitCode::SUCCESS)
        }
        Command::Start { r#box, wait } => {
            let info = client.start_box(&r#box, Some(wait)).await?;
            running_or_error(&info, json)
        }
        Command::Pause { r#box } => {
            print_boxes(&[client.pause_box(&r#box).await?], json);
            Ok(ExitCode::SUCCESS)
        }
        Command::Resume { r#box } => {
            print_boxes(&[client.resume_box(&r#box).await?], json);
            Ok(ExitCode::SUCCESS)
        }
        Command::Fork { r#box, ttl, idle, name, wait } => {
            let request = ForkBox {
                name,
                expires_after_secs: ttl.map(|m| m.saturating_mul(60)),
                idle_timeout_secs: idle.map(|m| m.saturating_mul(60)),
            };
            let info = client.fork_box(&r#box, &request, None, Some(wait)).await?;
            running_or_error(&info, json)
        }
        Command::Extend { r#box, minutes } => {
            let info = client.extend_box(&r#box, minutes.saturating_mul(60)).await?;
            if json {
                output::json(&info);
            } else {
                output::line(&format!("{} expires at {}", info.id, info.expires_at));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Traces { r#box } => {
            let traces = client.all_traces(&r#box).await?;
            if json {
                output::json(&traces);
            } else {
                let rows: Vec<Vec<String>> = traces
                    .iter()
                    .map(|t| {
                        let path = if t.query.is_empty() {
                            t.path.clone()
                        } else {
                            format!("{}?{}", t.path, t.query.join("&"))
                        };
                        vec![
                            t.at.clone(),
                            t.method.clone(),
                            path,
                            t.status.to_string(),
                            t.code.clone().unwrap_or_default(),
                            format!("{} ms", t.duration_ms),
                        ]
                    })
                    .collect();
                output::table(&["AT", "METHOD", "PATH", "STATUS", "CODE", "DURATION"], &rows);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Screenshot(a) => screenshot(&client, a, json).await,
        Command::Click(a) => {
            let action = Action::Click {
                x: Some(a.x),
                y: Some(a.y),
                button: a.button.into(),
                count: a.count,
                modifiers: a.modifiers,
            };
            input(&client.boxed(&a.r#box), a.screen.screen, vec![action], json).await
        }
        Command::Move { r#box, x, y, screen } => {
            input(&client.boxed(&r#box), screen.screen, vec![Action::Move { x, y }], json).await
        }
        Command::Drag { r#box, coords, button, screen } => {
            if coords.len() % 2 != 0 {
                bail!("drag takes pairs of coordinates: X1 Y1 X2 Y2 ...");
            }
            let path = coords.chunks(2).map(|c| Point { x: c[0], y: c[1] }).collect();
            let action =
                Action::Drag { path, button: button.into(), modifiers: vec![], step_ms: 0 };
            input(&client.boxed(&r#box), screen.screen, vec![action], json).await
        }
        Command::Scroll { r#box, dy, dx, x, y, screen } => {
            let action = Action::Scroll { x, y, dx, dy, modifiers: vec![] };
            input(&client.boxed(&r#box), screen.screen, vec![action], json).await
        }
        Command::Type { r#box, text, screen } => {
            let text = if text == "-" {
                let mut s = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                    .context("read standard input")?;
                s
            } else {
                text
            };
            input(&client.boxed(&r#box), screen.screen, vec![Action::Type { text }], json).await
        }
        Command::Key { r#box, chord, repeat, screen } => {
            input(
                &client.boxed(&r#box),
                screen.screen,
                vec![Action::Key { key: chord, repeat }],
                json,
            )
            .await
        }
        Command::Cursor { r#box, screen } => {
            let c = client.boxed(&r#box).cursor(screen.screen).await?;
            if json {
                output::json(&c);
            } else {
                output::line(&format!("{} {}", c.x, c.y));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Exec(a) => exec(&client, a, json).await,
        Command::Cp { src, dst } => cp(&client, &src, &dst, json).await,
        Command::Runtime(RuntimeCmd::Ls) => {
            let list = client.runtimes().await?;
            if json {
                output::json(&list);
            } else {
                let rows: Vec<Vec<String>> = list
                    .iter()
                    .map(|r| {
                        let mut can = Vec::new();
                        for (on, name) in [
                            (r.can.pause, "pause"),
                            (r.can.stop, "stop"),
                            (r.can.fork, "fork"),
                            (r.can.browser_profile, "browser_profile"),
                            (r.can.wayland, "wayland"),
                        ] {
                            if on {
                                can.push(name);
                            }
                        }
                        vec![
                            format!("{}{}", r.name, if r.default { " (default)" } else { "" }),
                            serde_plain(&r.place),
                            serde_plain(&r.environment),
                            serde_plain(&r.state),
                            can.join(","),
                        ]
                    })
                    .collect();
                output::table(&["NAME", "PLACE", "ENVIRONMENT", "STATE", "CAN"], &rows);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Runtime(RuntimeCmd::Get { name }) => {
            output::json(&client.runtime(&name).await?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Runtime(RuntimeCmd::Add { name, provider, fields, key }) => {
            let api_key = key.read()?;
            if api_key.is_none() {
                bail!(
                    "a vendor runtime needs its key: give --api-key (from standard input) or --api-key-env VAR"
                );
            }
            let request = holm_proto::host::AddRuntime {
                name,
                provider,
                fields: parse_fields(&fields)?,
                api_key,
            };
            print_runtime(&client.add_runtime(&request).await?, json);
            Ok(ExitCode::SUCCESS)
        }
        Command::Runtime(RuntimeCmd::Set { name, fields, unset, key }) => {
            let mut fields = parse_fields(&fields)?;
            fields.extend(unset.into_iter().map(|k| (k, serde_json::Value::Null)));
            let request = holm_proto::host::ChangeRuntime { fields, api_key: key.read()? };
            print_runtime(&client.change_runtime(&name, &request).await?, json);
            Ok(ExitCode::SUCCESS)
        }
        Command::Runtime(RuntimeCmd::Rm { name }) => {
            let removed = client.remove_runtime(&name).await?;
            if json {
                output::json(&removed);
            } else {
                output::line(&format!("removed {}", removed.name));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Image(cmd) => image(&client, cmd, json).await,
        Command::Mcp(a) => crate::mcp::run(client, a).await,
        Command::Bridge(a) => crate::browser::bridge(&client, a, json).await,
        Command::Page(a) => crate::browser::page(&client, a, json).await,
        Command::State(cmd) => crate::browser::state(&client, cmd, json).await,
        Command::Bench(args) => crate::bench::run(args, json).await,
        Command::Apps => {
            let apps = client.apps().await?;
            if json {
                output::json(&apps);
            } else {
                let rows: Vec<Vec<String>> = apps
                    .iter()
                    .map(|a| {
                        vec![
                            a.name.clone(),
                            a.description.clone(),
                            if a.third_party { "yes" } else { "" }.to_owned(),
                        ]
                    })
                    .collect();
                output::table(&["APP", "DESCRIPTION", "THIRD-PARTY REPOSITORY"], &rows);
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// One runtime: its JSON with `--json`, else a line.
fn print_runtime(r: &holm_proto::host::RuntimeInfo, json: bool) {
    if json {
        output::json(r);
    } else {
        output::line(&format!(
            "{} {} {}{}",
            r.name,
            r.provider,
            serde_plain(&r.state),
            r.reason.as_deref().map(|w| format!(" ({w})")).unwrap_or_default()
        ));
    }
}

fn serde_plain<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

fn state_name(s: &holm_proto::host::BoxState) -> String {
    serde_plain(s)
}

async fn new(client: &Client, a: NewArgs, json: bool) -> anyhow::Result<ExitCode> {
    let request = CreateBox {
        spec: BoxSpec {
            name: a.name,
            screens: a.screens,
            screen_size: a.size,
            display: None,
            apps: a.apps,
            packages: a.packages,
            browser: a.no_browser.then_some(false),
            labels: Default::default(),
            profile: a.profile,
        },
        placement: Placement {
            runtime: a.runtime,
            memory: a.memory,
            cpus: a.cpus,
            expires_after_secs: a.ttl.map(|m| m.saturating_mul(60)),
            idle_timeout_secs: a.idle.map(|m| m.saturating_mul(60)),
        },
    };
    let info = match &a.idempotency_key {
        Some(key) => client.create_box_idempotent(&request, key, Some(a.wait)).await?,
        None => client.create_box(&request, Some(a.wait)).await?,
    };
    running_or_error(&info, json)
}

fn print_boxes(boxes: &[holm_proto::host::BoxInfo], json: bool) {
    if json {
        output::json(&boxes);
    } else {
        for b in boxes {
            output::line(&format!("{} {}", b.id, state_name(&b.state)));
        }
    }
}

/// Prints the id of a running box, or fails with its state and reason.
fn running_or_error(info: &holm_proto::host::BoxInfo, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        output::json(info);
    }
    match info.state {
        holm_proto::host::BoxState::Running => {
            if !json {
                output::line(&info.id);
            }
            Ok(ExitCode::SUCCESS)
        }
        other => {
            let reason = info.reason.clone().unwrap_or_else(|| "it did not start in time".into());
            Err(holm_proto::ApiError::new(
                holm_proto::ErrorCode::Unavailable,
                format!("box {} is {}: {reason}", info.id, state_name(&other)),
            )
            .with_hint(format!("see `holm get {}`", info.id))
            .into())
        }
    }
}

async fn screenshot(client: &Client, a: ScreenshotArgs, json: bool) -> anyhow::Result<ExitCode> {
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
    let result = b.input(screen, &InputRequest { actions, ..InputRequest::default() }).await?;
    if json {
        output::json(&result);
    }
    Ok(ExitCode::SUCCESS)
}

async fn exec(client: &Client, a: ExecArgs, json: bool) -> anyhow::Result<ExitCode> {
    let mut env = std::collections::BTreeMap::new();
    for kv in &a.env {
        let (k, v) =
            kv.split_once('=').with_context(|| format!("--env {kv:?} is not KEY=VALUE"))?;
        env.insert(k.to_owned(), v.to_owned());
    }
    let request = CommandRequest {
        argv: Some(a.argv),
        cwd: a.cwd,
        env,
        timeout_ms: a.timeout.map(|s| s.saturating_mul(1000)),
        ..CommandRequest::default()
    };
    let b = client.boxed(&a.r#box);
    if json {
        let result = b.run(&request).await?;
        output::json(&result);
        return Ok(exit_code(result.exit_code, result.signal.as_deref(), result.timed_out));
    }
    let mut events = std::pin::pin!(b.stream(&request).await?);
    let mut stdout = std::io::stdout();
    let mut stderr = std::io::stderr();
    while let Some(event) = events.next().await {
        match event? {
            CommandEvent::Start { .. } => {}
            CommandEvent::Stdout { data } => {
                let _ = stdout.write_all(data.as_bytes());
                let _ = stdout.flush();
            }
            CommandEvent::Stderr { data } => {
                let _ = stderr.write_all(data.as_bytes());
                let _ = stderr.flush();
            }
            CommandEvent::Exit { exit_code: code, signal, timed_out, .. } => {
                return Ok(exit_code(code, signal.as_deref(), timed_out));
            }
            CommandEvent::Error { error } => return Err(error.into()),
        }
    }
    bail!("the command's stream ended before it exited")
}

/// The shell's convention: the code, or 128 + the signal, or 124 for a timeout.
fn exit_code(code: Option<i32>, signal: Option<&str>, timed_out: bool) -> ExitCode {
    if timed_out {
        return ExitCode::from(124);
    }
    match code {
        Some(c) => ExitCode::from(u8::try_from(c & 0xff).unwrap_or(1)),
        None => {
            let n = signal.and_then(signal_number).unwrap_or(0);
            ExitCode::from(u8::try_from(128 + n).unwrap_or(1))
        }
    }
}

fn signal_number(name: &str) -> Option<i32> {
    Some(match name.trim_start_matches("SIG") {
        "HUP" => 1,
        "INT" => 2,
        "QUIT" => 3,
        "ABRT" => 6,
        "KILL" => 9,
        "SEGV" => 11,
        "PIPE" => 13,
        "TERM" => 15,
        _ => return None,
    })
}

/// Splits `BOX:PATH`; a local path has no `box_` prefix before a colon.
fn remote(spec: &str) -> Option<(&str, &str)> {
    let (b, p) = spec.split_once(':')?;
    (b.starts_with("box_") && p.starts_with('/')).then_some((b, p))
}

async fn cp(client: &Client, src: &str, dst: &str, json: bool) -> anyhow::Result<ExitCode> {
    match (remote(src), remote(dst)) {
        (None, Some((b, path))) => {
            let file = tokio::fs::File::open(src).await.with_context(|| format!("open {src}"))?;
            let body = reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::new(file));
            let info = client.boxed(b).write_file(path, body, None).await?;
            if json {
                output::json(&info);
            }
        }
        (Some((b, path)), None) => {
            let mut stream = std::pin::pin!(client.boxed(b).read_file_stream(path).await?);
            let mut out: Box<dyn Write> = if dst == "-" {
                Box::new(std::io::stdout())
            } else {
                Box::new(std::fs::File::create(dst).with_context(|| format!("create {dst}"))?)
            };
            while let Some(chunk) = stream.next().await {
                out.write_all(&chunk?).with_context(|| format!("write {dst}"))?;
            }
            out.flush()?;
        }
        (Some(_), Some(_)) => bail!(
            "copy between boxes through a local file: holm cp BOX:PATH FILE, then holm cp FILE BOX:PATH"
        ),
        (None, None) => {
            bail!("one side must be BOX:/absolute/path, such as box_abc:/root/notes.txt")
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn image(client: &Client, cmd: ImageCmd, json: bool) -> anyhow::Result<ExitCode> {
    match cmd {
        ImageCmd::Build { runtime, apps, packages, local: false } => {
            let request = BuildImage { runtime, apps, packages };
            follow_build(client.build_image(&request).await?, json).await
        }
        ImageCmd::Base { runtime, local: false } => {
            follow_build(client.make_base(runtime.as_deref()).await?, json).await
        }
        ImageCmd::Ls { local: false } => {
            print_images(&client.images().await?, json);
            Ok(ExitCode::SUCCESS)
        }
        ImageCmd::Build { apps, packages, local: true, .. } => {
            let rt = holm::runtime::docker::DockerRuntime::connect("docker")?;
            let request = holm::image::ImageRequest::new(apps, packages)?;
            let mut progress = |p: holm::image::Progress| progress_line(p, json);
            let tag = holm::runtime::Runtime::prepare_image(&rt, &request, &mut progress).await?;
            if json {
                output::json(&serde_json::json!({ "image": tag }));
            } else {
                output::line(&tag);
            }
            Ok(ExitCode::SUCCESS)
        }
        ImageCmd::Base { local: true, .. } => {
            let rt = holm::runtime::docker::DockerRuntime::connect("docker")?;
            let mut progress = |p: holm::image::Progress| progress_line(p, json);
            holm::runtime::Runtime::make_base(&rt, &mut progress).await?;
            output::line(holm::image::BASE_IMAGE);
            Ok(ExitCode::SUCCESS)
        }
        ImageCmd::Ls { local: true } => {
            let rt = holm::runtime::docker::DockerRuntime::connect("docker")?;
            print_images(&holm::runtime::Runtime::images(&rt).await?, json);
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn progress_line(p: holm::image::Progress, json: bool) {
    use holm::image::Progress;
    let line = match p {
        Progress::Status(m) | Progress::Output(m) => m,
        Progress::Built { tag } => format!("built {tag}"),
        Progress::Reused { tag } => format!("{tag} exists; nothing to build"),
        _ => return,
    };
    eprintln_progress(&line, json);
}

#[allow(clippy::print_stderr)]
fn eprintln_progress(line: &str, json: bool) {
    if json {
        eprintln!("{}", serde_json::json!({ "type": "progress", "message": line }));
    } else {
        eprintln!("{line}");
    }
}

async fn follow_build(
    stream: impl futures_util::Stream<Item = holm_client::Result<BuildEvent>>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let mut stream = std::pin::pin!(stream);
    while let Some(event) = stream.next().await {
        match event? {
            BuildEvent::Progress { message } => eprintln_progress(&message, json),
            BuildEvent::Done { image, cached } => {
                if json {
                    output::json(&serde_json::json!({ "image": image, "cached": cached }));
                } else {
                    output::line(&image);
                }
                return Ok(ExitCode::SUCCESS);
            }
            BuildEvent::Error { error } => return Err(error.into()),
        }
    }
    bail!("the build's stream ended without a result")
}

fn print_images(images: &[holm_proto::host::ImageInfo], json: bool) {
    if json {
        output::json(&images);
        return;
    }
    let rows: Vec<Vec<String>> = images
        .iter()
        .map(|i| {
            vec![
                i.image.clone(),
                i.runtime.clone(),
                i.apps.join(","),
                i.packages.join(","),
                format!("{} MB", i.size / 1_000_000),
                i.created_at.clone().unwrap_or_default(),
            ]
        })
        .collect();
    output::table(&["IMAGE", "RUNTIME", "APPS", "PACKAGES", "SIZE", "CREATED"], &rows);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_paths() {
        assert_eq!(remote("box_ab12:/root/x"), Some(("box_ab12", "/root/x")));
        assert_eq!(remote("./local:file"), None);
        assert_eq!(remote("box_ab12:relative"), None);
        assert_eq!(remote("/tmp/x"), None);
    }

    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(exit_code(Some(3), None, false), ExitCode::from(3));
        assert_eq!(exit_code(None, Some("SIGKILL"), false), ExitCode::from(137));
        assert_eq!(exit_code(Some(0), None, true), ExitCode::from(124));
    }

    #[test]
    fn the_command_line_parses() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let cli = Cli::try_parse_from(["holm", "exec", "box_a", "--", "ls", "-la"]).unwrap();
        assert!(
            matches!(cli.command, Command::Exec(ExecArgs { ref argv, .. }) if argv == &["ls", "-la"])
        );
        let cli = Cli::try_parse_from(["holm", "--json", "new", "--ttl", "10"]).unwrap();
        assert!(cli.json);
        let cli = Cli::try_parse_from(["holm", "extend", "box_a", "--minutes", "30"]).unwrap();
        assert!(matches!(cli.command, Command::Extend { minutes: 30, .. }));
        let cli = Cli::try_parse_from(["holm", "fork", "box_a", "--ttl", "10"]).unwrap();
        assert!(matches!(cli.command, Command::Fork { ttl: Some(10), .. }));
        let cli = Cli::try_parse_from(["holm", "drag", "box_a", "0", "0", "10", "-5"]).unwrap();
        assert!(
            matches!(cli.command, Command::Drag { ref coords, .. } if coords == &[0, 0, 10, -5])
        );
        for line in [
            &["holm", "page", "box_a", "click", "#go"][..],
            &[
                "holm",
                "page",
                "box_a",
                "--tab",
                "T1",
                "goto",
                "http://127.0.0.1:8000/",
                "--wait",
                "dom-content-loaded",
            ],
            &["holm", "page", "box_a", "eval", "document.title", "--tab", "T1"],
            &["holm", "page", "box_a", "screenshot", "p.png", "--full-page"],
            &["holm", "state", "save", "box_a", "login.json"],
            &["holm", "bridge", "box_a", "--ttl", "30"],
            &["holm", "new", "--profile", "work"],
        ] {
            Cli::try_parse_from(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        }
    }
}
