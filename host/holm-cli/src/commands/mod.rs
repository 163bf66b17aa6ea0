//! The commands: the command line (`Cli`, `Command`) and its dispatch. Each
//! group of commands is one file here, holding its arguments and its
//! handlers; what several groups share (output, progress, `--sensitive`,
//! exit codes) is outside this folder.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use holm_client::Client;

mod accessibility;
mod agent;
mod bench;
mod boxes;
mod browser;
mod desk;
mod desktop;
mod exec;
mod files;
mod images;
mod mcp;
mod procs;
mod record;
mod runtimes;
mod shell;
#[cfg(test)]
mod tests;
mod timeline;
mod view;

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
    New(boxes::NewArgs),
    /// List the boxes, or with BOX:/PATH a directory in a box.
    Ls(files::LsArgs),
    /// Show one box.
    Get(boxes::BoxArgs),
    /// Remove boxes (BOX...), or files in a box (BOX:/PATH... [-r]).
    Rm(files::RmArgs),
    /// Stop boxes, keeping their files.
    Stop(boxes::StopArgs),
    /// Start a stopped box: a new desktop on new ports.
    Start(boxes::StartArgs),
    /// Pause a box, keeping its memory.
    Pause(boxes::BoxArgs),
    /// Resume a paused box where it was.
    Resume(boxes::BoxArgs),
    /// Fork a box: a new box with a copy of its files. Prints the new id.
    Fork(boxes::ForkArgs),
    /// Move the end of a box's lifetime later.
    Extend(boxes::ExtendArgs),
    /// The requests through the server to a box, oldest first.
    Traces(boxes::BoxArgs),
    /// What was done to a box, step by step, with the screenshot after each:
    /// a table, --json, one HTML page (--html FILE) or a dataset (--dataset DIR).
    Timeline(timeline::TimelineArgs),
    /// Save a screenshot (FILE `-` writes to standard output).
    Screenshot(desktop::ScreenshotArgs),
    /// Click at a point.
    Click(desktop::ClickArgs),
    /// Move the pointer.
    Move(desktop::MoveArgs),
    /// Drag along points: X1 Y1 X2 Y2 [X3 Y3 ...].
    Drag(desktop::DragArgs),
    /// Turn the wheel: --dy down (negative: up), --dx right (negative: left).
    Scroll(desktop::ScrollArgs),
    /// Type text (`-` reads it from standard input).
    Type(desktop::TypeArgs),
    /// Press a key or chord, such as `ctrl+shift+t`.
    Key(desktop::KeyArgs),
    /// Where the pointer is.
    Cursor(desktop::CursorArgs),
    /// Run a command in a box, stream its output, and exit with its code.
    Exec(exec::ExecArgs),
    /// Copy a file to or from a box: `holm cp FILE BOX:PATH` or `holm cp BOX:PATH FILE`.
    Cp(files::CpArgs),
    /// A terminal in a box attached to yours, like `docker exec -it`: a login
    /// shell, or the command after `--`. Exits with its code.
    Shell(shell::ShellArgs),
    /// Write files in a box (BOX:/PATH...) to standard output.
    Cat(files::CatArgs),
    /// Make directories in a box (BOX:/PATH...), with their parents.
    Mkdir(files::MkdirArgs),
    /// Move or rename a path within a box: BOX:/FROM BOX:/TO.
    Mv(files::MvArgs),
    /// The background processes of a box, running and recently ended.
    Ps(procs::PsArgs),
    /// Start a background process in a box and print its id.
    Spawn(procs::SpawnArgs),
    /// A background process's output; --follow to its end (then exit with its code).
    Logs(procs::LogsArgs),
    /// Send a signal to a background process (TERM by default).
    Kill(procs::KillArgs),
    /// Copy standard input to a background process's standard input.
    Write(procs::WriteArgs),
    /// The windows of a box: id, screen, focus, rectangle, app and title.
    Windows(desk::WindowsArgs),
    /// Focus, move, resize or close a window of a box.
    Window(desk::WindowArgs),
    /// Get or set a box's clipboard: text, a PNG image, or both.
    Clipboard(desk::ClipboardArgs),
    /// The accessibility tree of a box's focused window (--all: the screen);
    /// click a node or set its value.
    Accessibility(accessibility::AccessibilityArgs),
    /// Start or stop recording a screen of a box to a video (MP4).
    Record(record::RecordArgs),
    /// A box's recordings: list them, fetch a file, remove one.
    #[command(subcommand)]
    Recording(record::RecordingCmd),
    /// Runtimes.
    #[command(subcommand)]
    Runtime(runtimes::RuntimeCmd),
    /// Box images.
    #[command(subcommand)]
    Image(images::ImageCmd),
    /// The app catalogue for `--app`.
    Apps,
    /// Serve MCP on standard input and output (`holm mcp --stdio`), for an
    /// MCP host that starts a local process.
    Mcp(mcp::McpArgs),
    /// How to connect Playwright or Puppeteer to a box's Chromium (prints credentials).
    Bridge(browser::BridgeArgs),
    /// How to reach a box's guest API straight from this host, to debug it (prints a
    /// short-lived credential for that box only); `--curl [PATH]` prints a ready curl line,
    /// `--revoke` revokes every such credential of the box.
    Agent(agent::AgentArgs),
    /// A screen's viewer URL (watch only) or takeover URL (`--takeover`); `--open` opens it,
    /// `--revoke GRANT` revokes one, `--list` lists them.
    View(view::ViewArgs),
    /// Ask a person for help (`--ask REASON` prints a takeover URL), and wait until they hand back (`--wait SECS`).
    Handoff(view::HandoffArgs),
    /// Page tools on a box's Chromium: tabs, goto, click, type, fill, press, wait, eval, screenshot, text, html.
    Page(browser::PageArgs),
    /// Save a box's browser login (cookies and web storage), or load one into a box.
    #[command(subcommand)]
    State(browser::StateCmd),
    /// Measure holm against the exec-driven way on real boxes on Docker:
    /// runs the `holm-bench` program (beside `holm`, or `HOLM_BENCH_BIN`)
    /// with these arguments; `holm bench --help` shows them.
    #[command(disable_help_flag = true)]
    Bench(bench::BenchArgs),
}

/// Runs a parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let json = cli.json;
    let client = Client::from_env();
    let c = &client;
    match cli.command {
        Command::New(a) => boxes::new(c, a, json).await,
        Command::Ls(files::LsArgs { target: Some(target), depth, .. }) => {
            files::ls_files(c, &target, depth, json).await
        }
        Command::Ls(a) => boxes::ls(c, a.all, json).await,
        Command::Get(a) => boxes::get(c, a).await,
        Command::Rm(a) => files::rm(c, a, json).await,
        Command::Stop(a) => boxes::stop(c, a, json).await,
        Command::Start(a) => boxes::start(c, a, json).await,
        Command::Pause(a) => boxes::pause(c, a, json).await,
        Command::Resume(a) => boxes::resume(c, a, json).await,
        Command::Fork(a) => boxes::fork(c, a, json).await,
        Command::Extend(a) => boxes::extend(c, a, json).await,
        Command::Traces(a) => boxes::traces(c, a, json).await,
        Command::Timeline(a) => timeline::timeline(c, a, json).await,
        Command::Screenshot(a) => desktop::screenshot(c, a, json).await,
        Command::Click(a) => desktop::click(c, a, json).await,
        Command::Move(a) => desktop::move_pointer(c, a, json).await,
        Command::Drag(a) => desktop::drag(c, a, json).await,
        Command::Scroll(a) => desktop::scroll(c, a, json).await,
        Command::Type(a) => desktop::type_text(c, a, json).await,
        Command::Key(a) => desktop::key(c, a, json).await,
        Command::Cursor(a) => desktop::cursor(c, a, json).await,
        Command::Exec(a) => exec::exec(c, a, json).await,
        Command::Cp(a) => files::cp(c, a, json).await,
        Command::Shell(a) => shell::run(c, a).await,
        Command::Cat(a) => files::cat(c, a).await,
        Command::Mkdir(a) => files::mkdir(c, a, json).await,
        Command::Mv(a) => files::mv(c, a, json).await,
        Command::Ps(a) => procs::ps(c, a, json).await,
        Command::Spawn(a) => procs::spawn(c, a, json).await,
        Command::Logs(a) => procs::logs(c, a, json).await,
        Command::Kill(a) => procs::kill(c, a, json).await,
        Command::Write(a) => procs::write(c, a, json).await,
        Command::Windows(a) => desk::windows(c, a, json).await,
        Command::Window(a) => desk::window(c, a, json).await,
        Command::Clipboard(a) => desk::clipboard(c, a, json).await,
        Command::Accessibility(a) => accessibility::run(c, a, json).await,
        Command::Record(a) => record::record(c, a, json).await,
        Command::Recording(cmd) => record::recording(c, cmd, json).await,
        Command::Runtime(cmd) => runtimes::runtime(c, cmd, json).await,
        Command::Image(cmd) => images::image(c, cmd, json).await,
        Command::Apps => boxes::apps(c, json).await,
        Command::Mcp(a) => mcp::run(client, a).await,
        Command::Bridge(a) => browser::bridge(c, a, json).await,
        Command::Agent(a) => agent::agent(c, a, json).await,
        Command::View(a) => view::view(c, a, json).await,
        Command::Handoff(a) => view::handoff(c, a, json).await,
        Command::Page(a) => browser::page(c, a, json).await,
        Command::State(cmd) => browser::state(c, cmd, json).await,
        Command::Bench(a) => bench::run(&a.args, json),
    }
}
