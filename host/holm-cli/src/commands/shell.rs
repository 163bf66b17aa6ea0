//! `holm shell BOX [--cwd D] [-- CMD...]`: the user's terminal attached to a
//! terminal in the box, like `docker exec -it`.
//!
//! When standard input is a terminal it is put in raw mode (restored on
//! every way out), so every key, Ctrl-C included, goes to the box; a change
//! of the window's size (`SIGWINCH`) resizes the box's terminal. When it is
//! not a terminal (a pipe), its bytes are typed as they come and its end is
//! typed as Ctrl-D. The command exits with the program's own code (128 + the
//! signal when a signal ended it).

use std::io::Write;
use std::os::fd::AsFd;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use holm_client::{Client, TerminalOutput};
use holm_proto::terminal::{TerminalQuery, command_line};
use rustix::termios::{OptionalActions, Termios};

use crate::process::exit_code;

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// A terminal in a box attached to yours, like `docker exec -it`: a login
    /// shell, or the command after `--`. Exits with its code.
    Shell(ShellArgs),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, _json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::Shell(a) => run(c, a).await,
        }
    }
}

/// `holm shell`.
#[derive(Debug, Args)]
pub struct ShellArgs {
    /// The box id.
    r#box: String,
    /// The working directory (default: the home directory).
    #[arg(long)]
    cwd: Option<String>,
    /// The program and its arguments, after `--` (default: a login shell).
    #[arg(last = true)]
    argv: Vec<String>,
}

/// Puts a terminal in raw mode and back as it was when dropped.
struct Raw {
    saved: Termios,
}

impl Raw {
    fn enter(fd: impl AsFd) -> anyhow::Result<Self> {
        let saved = rustix::termios::tcgetattr(&fd).context("read the terminal's mode")?;
        let mut raw = saved.clone();
        raw.make_raw();
        rustix::termios::tcsetattr(&fd, OptionalActions::Now, &raw)
            .context("put the terminal in raw mode")?;
        Ok(Self { saved })
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = rustix::termios::tcsetattr(std::io::stdin(), OptionalActions::Now, &self.saved);
    }
}

/// The window's size, from whichever of standard output, error or input is
/// a terminal.
fn window_size() -> Option<(u16, u16)> {
    let from = |fd: std::os::fd::BorrowedFd<'_>| {
        rustix::termios::tcgetwinsize(fd)
            .ok()
            .filter(|w| w.ws_col > 0 && w.ws_row > 0)
            .map(|w| (w.ws_col, w.ws_row))
    };
    from(std::io::stdout().as_fd())
        .or_else(|| from(std::io::stderr().as_fd()))
        .or_else(|| from(std::io::stdin().as_fd()))
}

/// Standard input as it comes, read on a thread of its own: a read of a
/// terminal cannot be cancelled, and the process must be able to exit while
/// one waits (tokio's stdin would hold the runtime's shutdown until a key).
fn read_stdin() -> tokio::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    std::thread::spawn(move || {
        use std::io::Read;
        let mut buf = vec![0u8; 16 * 1024];
        let mut stdin = std::io::stdin().lock();
        loop {
            match stdin.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    if tx.blocking_send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    });
    rx
}

/// Runs `holm shell`.
pub async fn run(client: &Client, a: ShellArgs) -> anyhow::Result<ExitCode> {
    let interactive = rustix::termios::isatty(std::io::stdin());
    let size = window_size();
    let query = TerminalQuery {
        cols: size.map(|s| s.0),
        rows: size.map(|s| s.1),
        command: (!a.argv.is_empty()).then(|| command_line(&a.argv)),
        cwd: a.cwd,
        term: std::env::var("TERM").ok().filter(|t| !t.is_empty() && t != "dumb"),
    };
    let terminal = client.boxed(&a.r#box).terminal(&query).await?;
    // Raw only once the terminal is open: an error above prints normally.
    let raw = if interactive { Some(Raw::enter(std::io::stdin())?) } else { None };
    let (mut writer, mut reader) = terminal.split();
    let mut winch = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change())
        .context("watch the window's size")?;
    let mut stdin = read_stdin();
    let mut stdin_open = true;
    let mut stdout = std::io::stdout();
    let outcome = loop {
        tokio::select! {
            out = reader.next() => match out {
                Some(Ok(TerminalOutput::Data(d))) => {
                    stdout.write_all(&d).context("write standard output")?;
                    stdout.flush().context("write standard output")?;
                }
                Some(Ok(TerminalOutput::Refused(e))) => break Err(anyhow::Error::from(e)),
                Some(Ok(TerminalOutput::Exit { exit_code: code, signal })) => {
                    break Ok(exit_code(code, signal.as_deref(), false));
                }
                Some(Err(e)) => break Err(e.into()),
                None => break Err(anyhow::anyhow!("the terminal's connection closed before its program ended")),
            },
            chunk = stdin.recv(), if stdin_open => match chunk {
                None => {
                    stdin_open = false;
                    // The end of a pipe is Ctrl-D at the terminal.
                    if !interactive {
                        let _ = writer.write(&b"\x04"[..]).await;
                    }
                }
                Some(data) => {
                    if let Err(e) = writer.write(data).await {
                        break Err(e.into());
                    }
                }
            },
            _ = winch.recv() => {
                if let Some((cols, rows)) = window_size() {
                    let _ = writer.resize(cols, rows).await;
                }
            }
        }
    };
    drop(raw);
    writer.close().await;
    outcome
}
