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

mod boxes;
mod desktop;
mod exec;
mod images;
#[cfg(test)]
mod reference;
mod runtimes;
mod timeline;

use boxes::*;
use desktop::*;
use exec::*;
pub(crate) use exec::{exit_code, parse_env};
use images::*;
use runtimes::*;
use timeline::{TimelineArgs, timeline};

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
    /// List the boxes, or with BOX:/PATH a directory in a box.
    Ls(crate::files::LsArgs),
    /// Show one box.
    Get {
        /// The box id.
        r#box: String,
    },
    /// Remove boxes (BOX...), or files in a box (BOX:/PATH... [-r]).
    Rm(crate::files::RmArgs),
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
    /// What was done to a box, step by step, with the screenshot after each:
    /// a table, --json, one HTML page (--html FILE) or a dataset (--dataset DIR).
    Timeline(TimelineArgs),
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
        #[command(flatten)]
        secret: SensitiveArg,
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
    /// A terminal in a box attached to yours, like `docker exec -it`: a login
    /// shell, or the command after `--`. Exits with its code.
    Shell(crate::shell::ShellArgs),
    /// Write files in a box (BOX:/PATH...) to standard output.
    Cat(crate::files::CatArgs),
    /// Make directories in a box (BOX:/PATH...), with their parents.
    Mkdir(crate::files::MkdirArgs),
    /// Move or rename a path within a box: BOX:/FROM BOX:/TO.
    Mv(crate::files::MvArgs),
    /// The background processes of a box, running and recently ended.
    Ps(crate::procs::PsArgs),
    /// Start a background process in a box and print its id.
    Spawn(crate::procs::SpawnArgs),
    /// A background process's output; --follow to its end (then exit with its code).
    Logs(crate::procs::LogsArgs),
    /// Send a signal to a background process (TERM by default).
    Kill(crate::procs::KillArgs),
    /// Copy standard input to a background process's standard input.
    Write(crate::procs::WriteArgs),
    /// The windows of a box: id, screen, focus, rectangle, app and title.
    Windows(crate::desk::WindowsArgs),
    /// Focus, move, resize or close a window of a box.
    Window(crate::desk::WindowArgs),
    /// Get or set a box's clipboard: text, a PNG image, or both.
    Clipboard(crate::desk::ClipboardArgs),
    /// The accessibility tree of a box's focused window (--all: the screen);
    /// click a node or set its value.
    Accessibility(crate::accessibility::AccessibilityArgs),
    /// Start or stop recording a screen of a box to a video (MP4).
    Record(crate::record::RecordArgs),
    /// A box's recordings: list them, fetch a file, remove one.
    #[command(subcommand)]
    Recording(crate::record::RecordingCmd),
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
    /// How to reach a box's guest API straight from this host, to debug it (prints a
    /// short-lived credential for that box only); `--curl [PATH]` prints a ready curl line,
    /// `--revoke` revokes every such credential of the box.
    Agent(crate::agent::AgentArgs),
    /// A screen's viewer URL (watch only) or takeover URL (`--takeover`); `--open` opens it,
    /// `--revoke GRANT` revokes one, `--list` lists them.
    View(crate::view::ViewArgs),
    /// Ask a person for help (`--ask REASON` prints a takeover URL), and wait until they hand back (`--wait SECS`).
    Handoff(crate::view::HandoffArgs),
    /// Page tools on a box's Chromium: tabs, goto, click, type, fill, press, wait, eval, screenshot, text, html.
    Page(crate::browser::PageArgs),
    /// Save a box's browser login (cookies and web storage), or load one into a box.
    #[command(subcommand)]
    State(crate::browser::StateCmd),
    /// Measure holm against the exec-driven way on real boxes on Docker:
    /// runs the `holm-bench` program (beside `holm`, or `HOLM_BENCH_BIN`)
    /// with these arguments; `holm bench --help` shows them.
    #[command(disable_help_flag = true)]
    Bench {
        /// The benchmark's arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// `--sensitive`, declared once for every command that sends a secret
/// (typing, filling, setting a value, the clipboard, a command).
#[derive(Debug, Args, Clone, Copy)]
pub(crate) struct SensitiveArg {
    /// The text is a secret: holmd keeps it in no record (its timeline and
    /// exports, logs) and not even its length; a command's argv and
    /// environment are recorded as `[sensitive]`.
    #[arg(long)]
    pub(crate) sensitive: bool,
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
    /// The most processes and threads the box may have (default 4096).
    #[arg(long)]
    pids: Option<u32>,
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
    /// Answer once the desktop is usable, before Chromium is up (page tools
    /// answer `not_ready` until it is).
    #[arg(long)]
    ready_desktop: bool,
    /// Record every screen for the box's whole life (`holm recording ls`
    /// lists the files, also after the box is removed).
    #[arg(long)]
    record: bool,
    /// A Wayland desktop (headless sway) instead of X11.
    #[arg(long)]
    wayland: bool,
    /// Memory, such as 4g.
    #[arg(long)]
    memory: Option<String>,
    /// CPUs, such as 2.
    #[arg(long)]
    cpus: Option<f64>,
    /// The most the box may write to its disk, such as 2g (default 10g);
    /// past it the server stops the box.
    #[arg(long)]
    disk: Option<String>,
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

/// Runs a parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let json = cli.json;
    let client = Client::from_env();
    match cli.command {
        Command::New(a) => new(&client, a, json).await,
        Command::Ls(crate::files::LsArgs { target: Some(target), depth, .. }) => {
            crate::files::ls_files(&client, &target, depth, json).await
        }
        Command::Ls(a) => ls_boxes(&client, a.all, json).await,
        Command::Get { r#box } => {
            let info = client.get_box(&r#box, None).await?;
            output::json(&info);
            Ok(ExitCode::SUCCESS)
        }
        Command::Rm(a) => crate::files::rm(&client, a, json).await,
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
            fork(
                &client,
                &r#box,
                ForkBox {
                    name,
                    expires_after_secs: ttl.map(|m| m.saturating_mul(60)),
                    idle_timeout_secs: idle.map(|m| m.saturating_mul(60)),
                },
                wait,
                json,
            )
            .await
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
        Command::Traces { r#box } => traces(&client, &r#box, json).await,
        Command::Timeline(a) => timeline(&client, a, json).await,
        Command::Screenshot(a) => screenshot(&client, a, json).await,
        Command::Click(a) => click(&client, a, json).await,
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
        Command::Type { r#box, text, screen, secret } => {
            let text = if text == "-" {
                let mut s = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                    .context("read standard input")?;
                s
            } else {
                text
            };
            let request = InputRequest {
                actions: vec![Action::Type { text }],
                sensitive: secret.sensitive,
                ..InputRequest::default()
            };
            send_input(&client.boxed(&r#box), screen.screen, &request, json).await
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
        Command::Cp { src, dst } => crate::files::cp(&client, &src, &dst, json).await,
        Command::Shell(a) => crate::shell::run(&client, a).await,
        Command::Cat(a) => crate::files::cat(&client, a).await,
        Command::Mkdir(a) => crate::files::mkdir(&client, a, json).await,
        Command::Mv(a) => crate::files::mv(&client, a, json).await,
        Command::Ps(a) => crate::procs::ps(&client, a, json).await,
        Command::Spawn(a) => crate::procs::spawn(&client, a, json).await,
        Command::Logs(a) => crate::procs::logs(&client, a, json).await,
        Command::Kill(a) => crate::procs::kill(&client, a, json).await,
        Command::Write(a) => crate::procs::write(&client, a, json).await,
        Command::Windows(a) => crate::desk::windows(&client, a, json).await,
        Command::Window(a) => crate::desk::window(&client, a, json).await,
        Command::Clipboard(a) => crate::desk::clipboard(&client, a, json).await,
        Command::Accessibility(a) => crate::accessibility::run(&client, a, json).await,
        Command::Record(a) => crate::record::record(&client, a, json).await,
        Command::Recording(c) => crate::record::recording(&client, c, json).await,
        Command::Runtime(cmd) => runtime(&client, cmd, json).await,
        Command::Image(cmd) => image(&client, cmd, json).await,
        Command::Mcp(a) => crate::mcp::run(client, a).await,
        Command::Bridge(a) => crate::browser::bridge(&client, a, json).await,
        Command::Agent(a) => crate::agent::agent(&client, a, json).await,
        Command::View(a) => crate::view::view(&client, a, json).await,
        Command::Handoff(a) => crate::view::handoff(&client, a, json).await,
        Command::Page(a) => crate::browser::page(&client, a, json).await,
        Command::State(cmd) => crate::browser::state(&client, cmd, json).await,
        Command::Bench { args } => crate::bench::run(&args, json),
        Command::Apps => apps(&client, json).await,
    }
}

#[cfg(test)]
mod tests {
    /// docs/cli.md's command reference is the command line's own
    /// definition (`HOLM_UPDATE_SNAPSHOTS=1` writes it).
    #[test]
    fn docs_cli_md_reference_is_the_command_line() {
        use clap::CommandFactory;
        let doc = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md");
        let reference = super::reference::markdown(&mut Cli::command());
        holm_proto::docgen::check_section(&doc, "reference", &reference, "holm-cli").unwrap();
    }

    use super::*;

    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(exit_code(Some(3), None, false), ExitCode::from(3));
        assert_eq!(exit_code(None, Some("SIGKILL"), false), ExitCode::from(137));
        assert_eq!(exit_code(Some(0), None, true), ExitCode::from(124));
    }

    #[test]
    fn sensitive_is_one_flag_on_each_command_that_sends_a_secret() {
        let parse = |line: &[&str]| Cli::try_parse_from(line).unwrap_or_else(|e| panic!("{e}"));
        let cli = parse(&["holm", "type", "box_a", "pw", "--sensitive"]);
        assert!(matches!(
            cli.command,
            Command::Type { secret: SensitiveArg { sensitive: true }, .. }
        ));
        let cli = parse(&["holm", "type", "box_a", "pw"]);
        assert!(matches!(
            cli.command,
            Command::Type { secret: SensitiveArg { sensitive: false }, .. }
        ));
        let cli = parse(&["holm", "exec", "box_a", "--sensitive", "--", "mysql", "-ppw"]);
        assert!(matches!(
            cli.command,
            Command::Exec(ExecArgs { secret: SensitiveArg { sensitive: true }, .. })
        ));
        for line in [
            &["holm", "spawn", "box_a", "--sensitive", "--", "sleep", "1"][..],
            &["holm", "page", "box_a", "type", "#pw", "pw", "--sensitive"],
            &["holm", "page", "box_a", "fill", "#pw", "pw", "--sensitive"],
            &["holm", "clipboard", "box_a", "set", "pw", "--sensitive"],
        ] {
            parse(line);
        }
        assert!(Cli::try_parse_from(["holm", "key", "box_a", "a", "--sensitive"]).is_err());
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
            &["holm", "view", "box_a", "--screen", "1", "--takeover", "--open"],
            &["holm", "view", "box_a", "--revoke", "vg_0123456789ab"],
            &["holm", "handoff", "box_a", "--ask", "solve the captcha", "--wait", "600"],
            &["holm", "new", "--profile", "work"],
            &["holm", "ls", "box_a:/root", "--depth", "2"],
            &["holm", "rm", "-r", "box_a:/tmp/d"],
            &["holm", "mv", "-f", "box_a:/a", "box_a:/b"],
            &["holm", "spawn", "box_a", "--tag", "web", "--", "python3", "-m", "http.server"],
            &["holm", "logs", "box_a", "p_1", "-f"],
            &["holm", "kill", "box_a", "p_1", "--signal", "KILL"],
            &["holm", "write", "box_a", "p_1", "--eof"],
            &["holm", "shell", "box_a"],
            &["holm", "shell", "box_a", "--cwd", "/tmp", "--", "vi", "x"],
            &["holm", "windows", "box_a"],
            &["holm", "window", "box_a", "4194306", "focus"],
            &["holm", "window", "box_a", "4194306", "move", "-10", "20"],
            &["holm", "window", "box_a", "4194306", "resize", "640", "400"],
            &["holm", "window", "box_a", "4194306", "close"],
            &["holm", "clipboard", "box_a", "get", "--image", "c.png"],
            &["holm", "clipboard", "box_a", "set", "-"],
            &["holm", "clipboard", "box_a", "set", "text", "--image", "c.png"],
        ] {
            Cli::try_parse_from(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        }
    }
}
