//! Terminals: a program on a real pty, served over a WebSocket.
//!
//! [`Processes::open_terminal`] checks the request, opens a pty (master and
//! peer, both close-on-exec so no other child inherits them), sets its size,
//! and starts the program as the leader of a new session whose controlling
//! terminal is the peer ([`crate::proc::spawn_session`], so the one reaper
//! owns its exit). [`serve`] then moves bytes: binary frames in to the
//! master, the master's output out as binary frames, `resize` text frames to
//! the pty's window size (the kernel sends `SIGWINCH`), and at the end the
//! exit status. A client that goes away hangs the terminal up: `SIGHUP` to
//! its session, then `SIGKILL` if it is still there after a grace.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use holm_proto::terminal::{
    DEFAULT_COLS, DEFAULT_ROWS, DEFAULT_TERM, TerminalEvent, TerminalInput, TerminalQuery,
    check_size,
};
use holm_proto::{ApiError, Issue};
use rustix::pty::OpenptFlags;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::oneshot;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use super::processes::{Live, TerminalSlot};
use super::{Processes, Spec, What};
use crate::proc;
use holm_http::error::Error;

/// The most terminals open at once in one box.
pub const MAX_TERMINALS: usize = 32;
/// How long a hung-up terminal's program has to end before it is killed.
const HANGUP_GRACE: Duration = Duration::from_secs(5);
/// After the program ended, output still arriving is taken until the pty is
/// quiet this long (a background program may hold it open).
const QUIET_AFTER_EXIT: Duration = Duration::from_millis(100);
/// And at most this much of it.
const DRAIN_MAX: usize = 4 << 20;
/// How much one read from the pty takes at most.
const CHUNK: usize = 64 * 1024;

/// An open terminal: its program runs on the pty.
#[derive(Debug)]
pub struct Session {
    /// The program's process id, also its session and process group.
    pub pid: u32,
    /// Its size.
    pub cols: u16,
    /// Its size.
    pub rows: u16,
    master: AsyncFd<OwnedFd>,
    exit: oneshot::Receiver<ExitStatus>,
    live: (Live, TerminalSlot),
}

impl Session {
    /// Ends a session that no client will serve, as a hang-up does.
    pub fn abandon(self) {
        let Self { pid, master, exit, live, .. } = self;
        hang_up(pid, master, exit, live);
    }
}

impl Processes {
    /// Checks a terminal request and starts its program on a new pty.
    pub async fn open_terminal(&self, q: &TerminalQuery) -> Result<Session, Error> {
        let cols = q.cols.unwrap_or(DEFAULT_COLS);
        let rows = q.rows.unwrap_or(DEFAULT_ROWS);
        let mut issues = check_size(cols, rows);
        let term = q.term.as_deref().unwrap_or(DEFAULT_TERM);
        if term.is_empty() || term.len() > 64 || !term.bytes().all(|b| b.is_ascii_graphic()) {
            issues.push(Issue {
                path: "term".into(),
                problem: "must be 1 to 64 visible ASCII characters, such as xterm-256color".into(),
            });
        }
        let login = ["bash".to_owned(), "-l".to_owned()];
        let env = std::collections::BTreeMap::from([("TERM".to_owned(), term.to_owned())]);
        let what = What {
            argv: q.command.is_none().then_some(&login[..]),
            command: q.command.as_deref(),
            cwd: q.cwd.as_deref(),
            env: &env,
            sensitive: false,
        };
        let spec = Spec::check(what, self.home(), &mut issues);
        let spec = match spec {
            Some(spec) if issues.is_empty() => spec,
            _ => return Err(ApiError::invalid_fields(issues).into()),
        };
        spec.check_cwd().await?;
        let slot = self.terminal_slot(MAX_TERMINALS)?;
        self.refuse_when_shutting_down()?;
        let (master, peer) =
            open_pty(cols, rows).map_err(|e| Error::internal(format!("cannot open a pty: {e}")))?;
        let spawned = self.spawn_on(&spec, &peer)?;
        // Only the program holds the peer now: when it and its children
        // close it, reading the master ends.
        drop(peer);
        let (pid, exit) = (spawned.pid, spawned.exit);
        let live = (self.register_live(pid), slot);
        // SAFETY: `master` is an `OwnedFd`: it stays open and names the same
        // file description until the `AsyncFd` that owns it is dropped.
        let master = unsafe { AsyncFd::register(master) }
            .map_err(|e| Error::internal(format!("cannot watch the pty: {}", e.into_parts().1)))?;
        tracing::debug!(pid, cols, rows, "terminal opened");
        Ok(Session { pid, cols, rows, master, exit, live })
    }

    /// Starts `spec` with the pty's peer as its standard input, output and
    /// error and controlling terminal. The peer is dropped with the command,
    /// so the guest keeps only the master.
    fn spawn_on(&self, spec: &Spec, peer: &OwnedFd) -> Result<proc::Spawned, Error> {
        let stdio = || -> io::Result<Stdio> { Ok(Stdio::from(peer.try_clone()?)) };
        let io = (|| Ok::<_, io::Error>((stdio()?, stdio()?, stdio()?)))()
            .map_err(|e| Error::internal(format!("pty descriptors: {e}")))?;
        let mut cmd = Command::new(&spec.program);
        cmd.args(&spec.args)
            .current_dir(&spec.cwd)
            .env_clear()
            .envs(self.base().vars.iter().map(|(k, v)| (k, v)))
            .envs(&spec.env)
            .stdin(io.0)
            .stdout(io.1)
            .stderr(io.2);
        proc::spawn_session(&mut cmd).map_err(|e| super::spawn_error(&spec.program, &e))
    }
}

/// Opens a pty of `cols` x `rows`: the master (non-blocking) and its peer.
fn open_pty(cols: u16, rows: u16) -> io::Result<(OwnedFd, OwnedFd)> {
    let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
    let master = rustix::pty::openpt(flags)?;
    rustix::pty::grantpt(&master)?;
    rustix::pty::unlockpt(&master)?;
    let peer = rustix::pty::ioctl_tiocgptpeer(&master, flags)?;
    set_size(&master, cols, rows)?;
    rustix::fs::fcntl_setfl(&master, rustix::fs::OFlags::NONBLOCK)?;
    Ok((master, peer))
}

fn set_size(fd: impl AsFd, cols: u16, rows: u16) -> io::Result<()> {
    let size = rustix::termios::Winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
    Ok(rustix::termios::tcsetwinsize(fd, size)?)
}

/// What one turn of the loop saw.
enum Turn {
    /// Output from the pty.
    Output(usize),
    /// The pty has no peer open any more, or failed.
    Closed,
    /// The program ended.
    Exited(Option<ExitStatus>),
    /// A frame from the client.
    Frame(Message),
    /// Some of the pending input was written.
    Wrote(usize),
    /// The client went away.
    Gone,
}

/// Serves a session on an upgraded WebSocket until its program ends or the
/// client goes away.
pub async fn serve<S>(ws: WebSocketStream<S>, session: Session)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Session { pid, cols, rows, master, mut exit, live } = session;
    let (mut tx, mut rx) = ws.split();
    let send_event =
        |e: &TerminalEvent| Message::text(serde_json::to_string(e).unwrap_or_default());
    if tx.send(send_event(&TerminalEvent::Ready { pid, cols, rows })).await.is_err() {
        return hang_up(pid, master, exit, live);
    }
    let mut buf = vec![0u8; CHUNK];
    let mut pending: Vec<u8> = Vec::new();
    let mut status: Option<Option<ExitStatus>> = None;
    let mut open = true;
    let mut drained = 0usize;
    loop {
        let quiet = tokio::time::sleep(QUIET_AFTER_EXIT);
        let turn = tokio::select! {
            biased;
            s = &mut exit, if status.is_none() => Turn::Exited(s.ok()),
            r = read(&master, &mut buf), if open => match r {
                Ok(0) | Err(_) => Turn::Closed,
                Ok(n) => Turn::Output(n),
            },
            w = write(&master, &pending), if !pending.is_empty() && open && status.is_none() => {
                match w {
                    Ok(n) => Turn::Wrote(n),
                    Err(_) => Turn::Closed,
                }
            }
            m = rx.next(), if status.is_none() => match m {
                Some(Ok(m)) => Turn::Frame(m),
                _ => Turn::Gone,
            },
            () = quiet, if status.is_some() => Turn::Closed,
        };
        match turn {
            Turn::Output(n) => {
                if status.is_some() {
                    drained += n;
                    if drained > DRAIN_MAX {
                        open = false;
                    }
                }
                if tx.send(Message::binary(buf[..n].to_vec())).await.is_err() {
                    if status.is_none() {
                        return hang_up(pid, master, exit, live);
                    }
                    return;
                }
            }
            Turn::Wrote(n) => {
                pending.drain(..n);
            }
            Turn::Exited(s) => status = Some(s),
            Turn::Closed => {
                open = false;
            }
            Turn::Gone => return hang_up(pid, master, exit, live),
            Turn::Frame(Message::Binary(data)) => pending.extend_from_slice(&data),
            Turn::Frame(Message::Text(text)) => {
                if let Err(e) = control(&master, text.as_str()) {
                    let _ = tx.send(send_event(&TerminalEvent::Error { error: e })).await;
                }
            }
            Turn::Frame(Message::Close(_)) => return hang_up(pid, master, exit, live),
            Turn::Frame(_) => {}
        }
        if !open {
            // Everything its programs wrote has been read: wait for the
            // program's status if it has not come yet.
            let status = match status {
                Some(s) => s,
                None => (&mut exit).await.ok(),
            };
            let (exit_code, signal) = status.map_or((None, None), |s| {
                use std::os::unix::process::ExitStatusExt;
                (s.code(), s.signal().map(proc::signal_name))
            });
            tracing::debug!(pid, ?exit_code, ?signal, "terminal ended");
            let _ = tx.send(send_event(&TerminalEvent::Exit { exit_code, signal })).await;
            let _ = tx.close().await;
            drop(live);
            return;
        }
    }
}

/// Applies a text frame; a refused one changes nothing.
fn control(master: &AsyncFd<OwnedFd>, text: &str) -> Result<(), ApiError> {
    let input: TerminalInput = holm_proto::strict::from_slice(text.as_bytes()).map_err(|issues| {
        ApiError::invalid_fields(issues).with_hint(
            r#"a text frame is {"type":"resize","cols":N,"rows":N}; terminal bytes go in binary frames"#,
        )
    })?;
    match input {
        TerminalInput::Resize { cols, rows } => {
            let issues = check_size(cols, rows);
            if !issues.is_empty() {
                return Err(ApiError::invalid_fields(issues));
            }
            set_size(master, cols, rows).map_err(|e| ApiError::invalid(format!("resize: {e}")))
        }
    }
}

/// Reads what the pty has, waiting until it has something.
async fn read(master: &AsyncFd<OwnedFd>, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        let mut guard = master.readable().await?;
        match guard.try_io(|fd| Ok(rustix::io::read(fd.get_ref(), &mut *buf)?)) {
            Ok(r) => return r,
            Err(_would_block) => {}
        }
    }
}

/// Writes some of `data` to the pty, waiting until it takes some.
async fn write(master: &AsyncFd<OwnedFd>, data: &[u8]) -> io::Result<usize> {
    loop {
        let mut guard = master.writable().await?;
        match guard.try_io(|fd| Ok(rustix::io::write(fd.get_ref(), data)?)) {
            Ok(r) => return r,
            Err(_would_block) => {}
        }
    }
}

/// The client went away: hang the terminal up as closing a terminal does
/// (`SIGHUP` to its session; closing the master hangs up the pty), and kill
/// what is left after a grace.
fn hang_up(
    pid: u32,
    master: AsyncFd<OwnedFd>,
    exit: oneshot::Receiver<ExitStatus>,
    live: (Live, TerminalSlot),
) {
    let _ = proc::kill_group(pid, libc::SIGHUP);
    let _ = proc::kill_group(pid, libc::SIGCONT);
    drop(master);
    tokio::spawn(async move {
        if tokio::time::timeout(HANGUP_GRACE, exit).await.is_err() {
            let _ = proc::kill_group(pid, libc::SIGKILL);
        }
        tracing::debug!(pid, "terminal hung up");
        drop(live);
    });
}
