//! Commands and background processes inside the box.
//!
//! A command is checked into a [`Spec`], started with [`start`] (through
//! [`crate::proc::spawn`], so the one reaper owns `waitpid`), and its output is
//! moved by [`pump`] into a [`Sink`]: a buffer for run-and-wait, a channel for
//! a stream, or a process's event log ([`processes`]).
//!
//! Every command is its own process group. A timeout, a cancelled request and
//! a signal all go to the group, so grandchildren end with their parent.
//!
//! When the command's own process has ended, whatever it wrote is already in
//! the pipes, so [`pump`] takes what is buffered there and stops: a
//! grandchild that was left running in the background and still holds the
//! pipes does not keep the command open. Those pipes are then read and thrown
//! away until they close, so such a grandchild does not die of `SIGPIPE`.

pub mod decode;
pub mod log;
pub mod processes;
pub mod terminal;

use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use holm_proto::guest::{CommandEvent, CommandRequest, CommandResult, SENSITIVE_SHOWN};
use holm_proto::{ApiError, ErrorCode, Issue};
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use self::decode::OutputStream;
use crate::config::Config;
use crate::proc;
use holm_http::error::Error;

pub use self::processes::Processes;

/// The timeout of a command when the request gives none.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;
/// The longest timeout a command may have: a day.
pub const MAX_TIMEOUT_MS: u64 = 86_400_000;
/// How much of each of stdout and stderr run-and-wait keeps by default.
pub const DEFAULT_OUTPUT_LIMIT: u64 = 1 << 20;
/// The most of each stream a request may ask to keep. Run-and-wait holds the
/// output in memory and answers it in one body; more belongs in a stream.
pub const MAX_OUTPUT_LIMIT: u64 = 16 << 20;
/// The longest `tag` of a background process.
pub const MAX_TAG_LEN: usize = 128;

/// How much one read from a pipe takes at most.
const CHUNK: usize = 64 * 1024;
/// How much is taken from a pipe after the command ended. A grandchild that
/// keeps writing must not keep the command from ending.
const DRAIN_MAX: usize = 4 << 20;

/// `PATH` when the guest itself has none.
const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The environment every command starts from. The guest's own environment is
/// not passed on: it holds the box secret.
#[derive(Debug, Clone)]
pub struct BaseEnv {
    /// The home directory, also the default working directory.
    pub home: PathBuf,
    vars: Vec<(String, String)>,
}

impl BaseEnv {
    /// `HOME`, `PATH`, `LANG`, `USER`, `LOGNAME`, `SHELL` and the `DISPLAY` of
    /// screen 0, so GUI programs appear on the desktop.
    pub fn new(config: &Config) -> Self {
        let from_guest =
            |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty() && !v.contains('\0'));
        let user = from_guest("USER").unwrap_or_else(current_user);
        let mut vars = vec![
            ("HOME".to_owned(), config.home.to_string_lossy().into_owned()),
            ("PATH".to_owned(), from_guest("PATH").unwrap_or_else(|| DEFAULT_PATH.to_owned())),
            ("LANG".to_owned(), "C.UTF-8".to_owned()),
            ("USER".to_owned(), user.clone()),
            ("LOGNAME".to_owned(), user),
            ("SHELL".to_owned(), "/bin/bash".to_owned()),
        ];
        vars.extend(desktop_env(config));
        vars.extend(crate::a11y::bus::env(config));
        if let Some(tz) = from_guest("TZ") {
            vars.push(("TZ".to_owned(), tz));
        }
        Self { home: config.home.clone(), vars }
    }
}

/// The variables that put a GUI program on screen 0: `DISPLAY` on X11; on
/// Wayland the compositor's socket, toolkit hints, and `DISPLAY` of
/// Xwayland (started on the first X11 client) when the image has it.
fn desktop_env(config: &Config) -> Vec<(String, String)> {
    match config.profile {
        holm_proto::guest::Profile::X11 => vec![("DISPLAY".to_owned(), config.display(0))],
        holm_proto::guest::Profile::Wayland => {
            let paths = crate::wayland::sway::Paths::new(config);
            let mut vars = crate::wayland::sway::client_env(&paths);
            vars.extend(
                [
                    ("MOZ_ENABLE_WAYLAND", "1"),
                    ("QT_QPA_PLATFORM", "wayland;xcb"),
                    ("ELECTRON_OZONE_PLATFORM_HINT", "auto"),
                ]
                .map(|(k, v)| (k.to_owned(), v.to_owned())),
            );
            if crate::wayland::xwayland_available() {
                vars.push(("DISPLAY".to_owned(), crate::wayland::XWAYLAND_DISPLAY.to_owned()));
            }
            vars
        }
    }
}

/// The name of the effective user, from `/etc/passwd`: `getpwuid` is not
/// usable in a static binary.
fn current_user() -> String {
    let uid = rustix::process::geteuid().as_raw();
    std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|passwd| {
            passwd.lines().find_map(|line| {
                let mut fields = line.split(':');
                let name = fields.next()?;
                let id: u32 = fields.nth(1)?.parse().ok()?;
                (id == uid).then(|| name.to_owned())
            })
        })
        .unwrap_or_else(|| if uid == 0 { "root".to_owned() } else { uid.to_string() })
}

/// A command that passed its checks.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The program: `argv[0]`, or `bash`.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// What runs, as a command line for people.
    pub shown: String,
    /// The working directory, absolute.
    pub cwd: PathBuf,
    /// Variables added to the base environment.
    pub env: BTreeMap<String, String>,
    /// Whether the request was marked sensitive: then `shown` is
    /// [`holm_proto::guest::SENSITIVE_SHOWN`] and no log names the program.
    pub sensitive: bool,
}

/// The fields that say what to run, as `CommandRequest` and `ProcessStart`
/// both have them.
#[derive(Debug, Clone, Copy)]
pub struct What<'a> {
    /// `argv`.
    pub argv: Option<&'a [String]>,
    /// `command`.
    pub command: Option<&'a str>,
    /// `cwd`.
    pub cwd: Option<&'a str>,
    /// `env`.
    pub env: &'a BTreeMap<String, String>,
    /// `sensitive`.
    pub sensitive: bool,
}

impl Spec {
    /// Checks what to run. Every problem is added to `issues`, each naming its
    /// field; the spec is answered only when there was none.
    pub fn check(what: What<'_>, home: &Path, issues: &mut Vec<Issue>) -> Option<Self> {
        let before = issues.len();
        let mut issue = |path: String, problem: &str| {
            issues.push(Issue { path, problem: problem.to_owned() });
        };
        let (program, args, shown) = match (what.argv, what.command) {
            (Some(_), Some(_)) => {
                issue(
                    "command".into(),
                    "give either argv (a program and its arguments, no shell) or command (run with bash -c), not both",
                );
                (String::new(), Vec::new(), String::new())
            }
            (None, None) => {
                issue(
                    "argv".into(),
                    "is required unless command is given: give argv (a program and its arguments, no shell) or command (run with bash -c)",
                );
                (String::new(), Vec::new(), String::new())
            }
            (Some(argv), None) => {
                match argv.first() {
                    None => issue("argv".into(), "must name a program: it is empty"),
                    Some(p) if p.is_empty() => issue("argv[0]".into(), "is empty"),
                    Some(_) => {}
                }
                for (i, a) in argv.iter().enumerate() {
                    if a.contains('\0') {
                        issue(format!("argv[{i}]"), "contains a NUL byte");
                    }
                }
                let program = argv.first().cloned().unwrap_or_default();
                let args = argv.iter().skip(1).cloned().collect();
                (program, args, shell_join(argv))
            }
            (None, Some(command)) => {
                if command.trim().is_empty() {
                    issue("command".into(), "is empty");
                }
                if command.contains('\0') {
                    issue("command".into(), "contains a NUL byte");
                }
                ("bash".to_owned(), vec!["-c".to_owned(), command.to_owned()], command.to_owned())
            }
        };
        let cwd = match what.cwd {
            None => home.to_path_buf(),
            Some("") => {
                issue("cwd".into(), "is empty; leave it out to use the home directory");
                PathBuf::new()
            }
            Some(c) if c.contains('\0') => {
                issue("cwd".into(), "contains a NUL byte");
                PathBuf::new()
            }
            // A relative directory is taken from the home directory.
            Some(c) => home.join(c),
        };
        for (name, value) in what.env {
            let path = format!("env.{name}");
            if name.is_empty() {
                issue("env".into(), "a variable name is empty");
            } else if name.contains('=') {
                issue(path, "a variable name cannot contain '='");
            } else if name.contains('\0') {
                issue(path, "a variable name cannot contain a NUL byte");
            } else if value.contains('\0') {
                // The value itself is never repeated back.
                issue(path, "the value contains a NUL byte");
            }
        }
        // A sensitive command is shown (in the process list) as a marker only.
        let shown = if what.sensitive { SENSITIVE_SHOWN.to_owned() } else { shown };
        (issues.len() == before).then(|| Self {
            program,
            args,
            shown,
            cwd,
            env: what.env.clone(),
            sensitive: what.sensitive,
        })
    }

    /// Checks that the working directory exists and is a directory.
    pub async fn check_cwd(&self) -> Result<(), Error> {
        let shown = self.cwd.to_string_lossy();
        match tokio::fs::metadata(&self.cwd).await {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => Err(ApiError::new(
                ErrorCode::NotADirectory,
                format!("cwd {shown} is not a directory"),
            )
            .with_details(serde_json::json!({ "path": shown }))
            .into()),
            Err(e) => {
                let mut err = Error::io(&shown, &e);
                err.0.message = format!("cwd {}", err.0.message);
                if err.0.code == ErrorCode::FileNotFound {
                    err.0.hint = Some(
                        "make the directory first (POST /v1/files/mkdir), or leave cwd out to use the home directory"
                            .to_owned(),
                    );
                }
                Err(err)
            }
        }
    }
}

/// Joins arguments into one command line, quoting those a shell would split.
pub fn shell_join(argv: &[String]) -> String {
    holm_proto::terminal::command_line(argv)
}

/// The limits of a run-and-wait or streamed command, checked.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// When to kill the command.
    pub timeout: Duration,
    /// How much of each stream to keep; `None` keeps all.
    pub output_limit: Option<u64>,
}

impl Limits {
    /// Checks `timeout_ms` and `output_limit`. `default_limit` applies when
    /// the request gives no `output_limit`.
    pub fn check(
        req: &CommandRequest,
        default_limit: Option<u64>,
        issues: &mut Vec<Issue>,
    ) -> Self {
        let timeout_ms = req.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if timeout_ms == 0 || timeout_ms > MAX_TIMEOUT_MS {
            issues.push(Issue {
                path: "timeout_ms".into(),
                problem: format!("must be 1 to {MAX_TIMEOUT_MS} (a day), not {timeout_ms}"),
            });
        }
        if let Some(limit) = req.output_limit.filter(|l| *l > MAX_OUTPUT_LIMIT) {
            issues.push(Issue {
                path: "output_limit".into(),
                problem: format!(
                    "must be at most {MAX_OUTPUT_LIMIT} bytes, not {limit}; stream the command (POST /v1/commands/stream) or start it as a process for more"
                ),
            });
        }
        Self {
            timeout: Duration::from_millis(timeout_ms.clamp(1, MAX_TIMEOUT_MS)),
            output_limit: req.output_limit.or(default_limit),
        }
    }
}

/// Checks a run or stream request: what to run and its limits.
pub fn check_request(
    req: &CommandRequest,
    home: &Path,
    default_limit: Option<u64>,
) -> Result<(Spec, Limits), Error> {
    let mut issues = Vec::new();
    let what = What {
        argv: req.argv.as_deref(),
        command: req.command.as_deref(),
        cwd: req.cwd.as_deref(),
        env: &req.env,
        sensitive: req.sensitive,
    };
    let spec = Spec::check(what, home, &mut issues);
    let limits = Limits::check(req, default_limit, &mut issues);
    match spec {
        Some(spec) if issues.is_empty() => Ok((spec, limits)),
        _ => Err(ApiError::invalid_fields(issues).into()),
    }
}

/// A started command: its input, if piped, and the rest.
#[derive(Debug)]
pub struct Started {
    /// Standard input, when it was asked for.
    pub stdin: Option<pipe::Sender>,
    /// Its output and its end.
    pub output: Piped,
}

/// What [`pump`] needs of a started command.
#[derive(Debug)]
pub struct Piped {
    /// The process id, also its process group id.
    pub pid: u32,
    /// Standard output.
    pub stdout: pipe::Receiver,
    /// Standard error.
    pub stderr: pipe::Receiver,
    /// Resolves when the process has ended and been reaped.
    pub exit: oneshot::Receiver<ExitStatus>,
    /// When it started.
    pub at: Instant,
}

/// Starts `spec` in its own process group, with piped output and, when
/// `stdin` is set, piped input (otherwise `/dev/null`).
pub fn start(spec: &Spec, base: &BaseEnv, stdin: bool) -> Result<Started, Error> {
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(base.vars.iter().map(|(k, v)| (k, v)))
        .envs(&spec.env)
        .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let spawned = proc::spawn(&mut cmd).map_err(|e| spawn_error(&spec.program, &e))?;
    let at = Instant::now();
    let pid = spawned.pid;
    let mut child = spawned.child;
    let pipes = (|| -> io::Result<_> {
        let stdin = match child.stdin.take() {
            Some(s) => Some(pipe::Sender::from_owned_fd(OwnedFd::from(s))?),
            None => None,
        };
        let stdout = child.stdout.take().ok_or_else(|| io::Error::other("no stdout pipe"))?;
        let stderr = child.stderr.take().ok_or_else(|| io::Error::other("no stderr pipe"))?;
        Ok((
            stdin,
            pipe::Receiver::from_owned_fd(OwnedFd::from(stdout))?,
            pipe::Receiver::from_owned_fd(OwnedFd::from(stderr))?,
        ))
    })();
    match pipes {
        Ok((stdin, stdout, stderr)) => {
            let program = if spec.sensitive { SENSITIVE_SHOWN } else { spec.program.as_str() };
            tracing::debug!(pid, program, "command started");
            Ok(Started { stdin, output: Piped { pid, stdout, stderr, exit: spawned.exit, at } })
        }
        Err(e) => {
            // The process runs but cannot be talked to: end it.
            let _ = proc::kill_group(pid, libc::SIGKILL);
            Err(Error::internal(format!("pipes of pid {pid}: {e}")))
        }
    }
}

/// Maps a failure to start a program to an error that names the program.
pub(crate) fn spawn_error(program: &str, e: &io::Error) -> Error {
    let details = serde_json::json!({ "program": program, "reason": e.to_string() });
    let err = match e.kind() {
        io::ErrorKind::NotFound => {
            let where_ = if program.contains('/') { "" } else { " on PATH" };
            ApiError::new(
                ErrorCode::FileNotFound,
                format!(
                    "program {program:?} was not found{where_} (or its #! interpreter is missing)"
                ),
            )
            .with_hint("check the name, give an absolute path, or install the program in the box")
        }
        io::ErrorKind::PermissionDenied => ApiError::new(
            ErrorCode::PermissionDenied,
            format!("program {program:?} cannot be run: permission denied (is it executable?)"),
        ),
        _ if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::ENOMEM)) => {
            ApiError::new(ErrorCode::Unavailable, format!("cannot start {program:?} now: {e}"))
                .with_hint("the box is out of processes or memory; end some and try again")
        }
        _ => ApiError::new(ErrorCode::InvalidRequest, format!("cannot start {program:?}: {e}")),
    };
    err.with_details(details).into()
}

/// Which output stream a piece of text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Where [`pump`] puts output.
pub trait Sink: Send {
    /// Takes some text. Answers `false` when nobody wants more: the command
    /// is then killed.
    fn output(&mut self, which: Which, text: String) -> impl Future<Output = bool> + Send;
}

/// How a pumped command ended.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    /// Its status; `None` only if the reaper lost it.
    pub status: Option<ExitStatus>,
    /// It ran past its deadline and was killed.
    pub timed_out: bool,
    /// Some output was dropped because of the limit.
    pub truncated: bool,
    /// How long it ran.
    pub duration: Duration,
}

impl Outcome {
    /// The exit code, and the name of the signal that ended it.
    pub fn code_and_signal(&self) -> (Option<i32>, Option<String>) {
        match self.status {
            Some(s) => (s.code(), s.signal().map(proc::signal_name)),
            None => (None, None),
        }
    }

    /// How long it ran, in milliseconds.
    pub fn duration_ms(&self) -> u64 {
        u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX)
    }
}

/// Kills a process group if dropped while armed: a request that goes away
/// takes its command with it.
#[derive(Debug)]
struct KillOnDrop(Option<u32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            let _ = proc::kill_group(pid, libc::SIGKILL);
        }
    }
}

/// The kill switch of one pumped command: the deadline, cancellation, and
/// whether it was already pulled.
struct Control<'a> {
    pid: u32,
    cancel: &'a CancellationToken,
    deadline: Option<Instant>,
    killed: bool,
    timed_out: bool,
}

impl Control<'_> {
    fn kill(&mut self, timed_out: bool) {
        if !self.killed {
            let _ = proc::kill_group(self.pid, libc::SIGKILL);
            self.killed = true;
            self.timed_out = timed_out;
        }
    }

    /// When the timer fires; far away when there is no deadline (the timer
    /// branch is then disabled anyway).
    fn until(&self) -> Instant {
        self.deadline.unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400 * 365))
    }

    fn timer_armed(&self) -> bool {
        self.deadline.is_some() && !self.killed
    }

    /// Awaits a delivery to the sink while still keeping the deadline and
    /// watching for cancellation: a reader that is slow must not stretch a
    /// command past its timeout.
    async fn deliver(&mut self, delivery: impl Future<Output = bool>) {
        tokio::pin!(delivery);
        loop {
            tokio::select! {
                biased;
                wanted = &mut delivery => {
                    if !wanted {
                        self.kill(false);
                    }
                    return;
                }
                () = self.cancel.cancelled(), if !self.killed => self.kill(false),
                () = tokio::time::sleep_until(self.until()), if self.timer_armed() => self.kill(true),
            }
        }
    }
}

/// Moves a started command's output into `sink` until the command ends; kills
/// its group at `deadline` or when `cancel` fires (or when this future is
/// dropped). `limit` bounds each stream.
pub async fn pump<S: Sink>(
    piped: Piped,
    sink: &mut S,
    deadline: Option<Instant>,
    limit: Option<u64>,
    cancel: &CancellationToken,
) -> Outcome {
    let Piped { pid, mut stdout, mut stderr, mut exit, at: started } = piped;
    let mut guard = KillOnDrop(Some(pid));
    let mut ctl = Control { pid, cancel, deadline, killed: false, timed_out: false };
    let mut out = OutputStream::new(limit);
    let mut err = OutputStream::new(limit);
    let mut out_buf = vec![0u8; CHUNK];
    let mut err_buf = vec![0u8; CHUNK];
    let (mut out_open, mut err_open) = (true, true);
    // The end comes before the pipes: once the process is reaped, everything
    // it wrote is in the pipes and the drain below takes it, while a
    // grandchild that floods the inherited pipes cannot keep this loop from
    // seeing the end.
    let status = loop {
        tokio::select! {
            biased;
            () = cancel.cancelled(), if !ctl.killed => ctl.kill(false),
            () = tokio::time::sleep_until(ctl.until()), if ctl.timer_armed() => ctl.kill(true),
            status = &mut exit => break status.ok(),
            r = stdout.read(&mut out_buf), if out_open => match r {
                Ok(n) if n > 0 => {
                    let text = out.push(&out_buf[..n]);
                    if !text.is_empty() {
                        ctl.deliver(sink.output(Which::Stdout, text)).await;
                    }
                }
                _ => out_open = false,
            },
            r = stderr.read(&mut err_buf), if err_open => match r {
                Ok(n) if n > 0 => {
                    let text = err.push(&err_buf[..n]);
                    if !text.is_empty() {
                        ctl.deliver(sink.output(Which::Stderr, text)).await;
                    }
                }
                _ => err_open = false,
            },
        }
    };
    // The process is gone; what remains in its group is left alone.
    guard.0 = None;
    let duration = started.elapsed();
    for (which, rx, stream, open, buf) in [
        (Which::Stdout, stdout, &mut out, out_open, &mut out_buf),
        (Which::Stderr, stderr, &mut err, err_open, &mut err_buf),
    ] {
        let mut eof = !open;
        if open {
            let mut taken = 0;
            while taken < DRAIN_MAX {
                match rustix::io::read(&rx, &mut buf[..]) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(n) => {
                        taken += n;
                        let text = stream.push(&buf[..n]);
                        if !text.is_empty() {
                            sink.output(which, text).await;
                        }
                    }
                    Err(rustix::io::Errno::INTR) => {}
                    // Empty for now (or broken): what the process wrote is read.
                    Err(_) => break,
                }
            }
        }
        let tail = stream.finish();
        if !tail.is_empty() {
            sink.output(which, tail).await;
        }
        if !eof {
            tokio::spawn(discard(rx));
        }
    }
    Outcome {
        status,
        timed_out: ctl.timed_out,
        truncated: out.truncated || err.truncated,
        duration,
    }
}

/// Reads a pipe until it closes and throws the bytes away, so whoever still
/// writes to it is not killed by `SIGPIPE`.
async fn discard(mut rx: pipe::Receiver) {
    let mut buf = vec![0u8; 16 * 1024];
    while matches!(rx.read(&mut buf).await, Ok(n) if n > 0) {}
}

/// Writes `data` to a command's standard input, then closes it. A command
/// that ends (or closes its input) without reading it all is not an error.
pub fn feed_stdin(stdin: pipe::Sender, data: String) {
    use tokio::io::AsyncWriteExt;
    tokio::spawn(async move {
        let mut stdin = stdin;
        let _ = stdin.write_all(data.as_bytes()).await;
        // Dropping the sender closes the pipe: end of input.
    });
}

/// Collects run-and-wait output.
#[derive(Debug, Default)]
pub struct Collect {
    /// Standard output so far.
    pub stdout: String,
    /// Standard error so far.
    pub stderr: String,
}

impl Sink for Collect {
    async fn output(&mut self, which: Which, text: String) -> bool {
        match which {
            Which::Stdout => self.stdout.push_str(&text),
            Which::Stderr => self.stderr.push_str(&text),
        }
        true
    }
}

/// Sends streamed output as events. Nobody listening ends the command.
#[derive(Debug)]
pub struct Events(pub tokio::sync::mpsc::Sender<CommandEvent>);

impl Sink for Events {
    async fn output(&mut self, which: Which, data: String) -> bool {
        let event = match which {
            Which::Stdout => CommandEvent::Stdout { data },
            Which::Stderr => CommandEvent::Stderr { data },
        };
        self.0.send(event).await.is_ok()
    }
}

/// Runs a checked command to its end and answers its result.
pub async fn run(
    spec: &Spec,
    limits: Limits,
    stdin: Option<String>,
    processes: &Processes,
) -> Result<CommandResult, Error> {
    spec.check_cwd().await?;
    let (started, _live) = processes.start_command(spec, stdin.is_some())?;
    if let (Some(pipe), Some(text)) = (started.stdin, stdin) {
        feed_stdin(pipe, text);
    }
    let mut collect = Collect::default();
    let deadline = started.output.at + limits.timeout;
    let outcome = pump(
        started.output,
        &mut collect,
        Some(deadline),
        limits.output_limit,
        &CancellationToken::new(),
    )
    .await;
    if outcome.status.is_none() {
        return Err(Error::internal(format!("the exit status of {} was lost", spec.program)));
    }
    let (exit_code, signal) = outcome.code_and_signal();
    Ok(CommandResult {
        exit_code,
        signal,
        stdout: collect.stdout,
        stderr: collect.stderr,
        timed_out: outcome.timed_out,
        truncated: outcome.truncated,
        duration_ms: outcome.duration_ms(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(what: What<'_>) -> Result<Spec, Vec<String>> {
        let mut issues = Vec::new();
        Spec::check(what, Path::new("/home/u"), &mut issues)
            .ok_or_else(|| issues.into_iter().map(|i| i.path).collect())
    }

    fn argv(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_sensitive_command_is_shown_as_the_marker_only() {
        let env = BTreeMap::new();
        let a = vec!["mysql".to_owned(), "-pS3CRET-ARGV".to_owned()];
        let mut issues = Vec::new();
        let what = What { argv: Some(&a), command: None, cwd: None, env: &env, sensitive: true };
        let spec = Spec::check(what, Path::new("/root"), &mut issues).unwrap();
        assert_eq!(spec.shown, SENSITIVE_SHOWN);
        assert_eq!((spec.program.as_str(), spec.args.as_slice()), ("mysql", &a[1..]), "it runs");
        let what = What { sensitive: false, ..what };
        let spec = Spec::check(what, Path::new("/root"), &mut issues).unwrap();
        assert!(spec.shown.contains("mysql"), "{}", spec.shown);
    }

    #[test]
    fn exactly_one_of_argv_and_command() {
        let env = BTreeMap::new();
        let a = argv(&["ls"]);
        let both =
            What { argv: Some(&a), command: Some("ls"), cwd: None, env: &env, sensitive: false };
        assert_eq!(check(both).unwrap_err(), ["command"]);
        let neither = What { argv: None, command: None, cwd: None, env: &env, sensitive: false };
        assert_eq!(check(neither).unwrap_err(), ["argv"]);
        let spec = check(What {
            argv: None,
            command: Some("echo hi"),
            cwd: None,
            env: &env,
            sensitive: false,
        })
        .unwrap();
        assert_eq!(spec.program, "bash");
        assert_eq!(spec.args, ["-c", "echo hi"]);
        assert_eq!(spec.cwd, Path::new("/home/u"));
    }

    #[test]
    fn empty_argv_and_nul_bytes_are_named() {
        let env = BTreeMap::new();
        let empty: Vec<String> = Vec::new();
        assert_eq!(
            check(What {
                argv: Some(&empty),
                command: None,
                cwd: None,
                env: &env,
                sensitive: false
            })
            .unwrap_err(),
            ["argv"]
        );
        let a = argv(&["", "x\0y"]);
        assert_eq!(
            check(What { argv: Some(&a), command: None, cwd: None, env: &env, sensitive: false })
                .unwrap_err(),
            ["argv[0]", "argv[1]"]
        );
    }

    #[test]
    fn bad_env_names_are_each_named_and_values_never_shown() {
        let mut env = BTreeMap::new();
        env.insert("GOOD".to_owned(), "1".to_owned());
        env.insert("A=B".to_owned(), "1".to_owned());
        env.insert("NUL\0".to_owned(), "1".to_owned());
        env.insert("SECRETVAL".to_owned(), "hunter2\0".to_owned());
        let a = argv(&["true"]);
        let mut issues = Vec::new();
        let spec = Spec::check(
            What { argv: Some(&a), command: None, cwd: None, env: &env, sensitive: false },
            Path::new("/"),
            &mut issues,
        );
        assert!(spec.is_none());
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["env.A=B", "env.NUL\0", "env.SECRETVAL"]);
        assert!(issues.iter().all(|i| !i.problem.contains("hunter2")));
    }

    #[test]
    fn relative_cwd_is_taken_from_home() {
        let env = BTreeMap::new();
        let a = argv(&["true"]);
        let spec = check(What {
            argv: Some(&a),
            command: None,
            cwd: Some("work/x"),
            env: &env,
            sensitive: false,
        })
        .unwrap();
        assert_eq!(spec.cwd, Path::new("/home/u/work/x"));
        let spec = check(What {
            argv: Some(&a),
            command: None,
            cwd: Some("/tmp"),
            env: &env,
            sensitive: false,
        })
        .unwrap();
        assert_eq!(spec.cwd, Path::new("/tmp"));
        assert_eq!(
            check(What {
                argv: Some(&a),
                command: None,
                cwd: Some(""),
                env: &env,
                sensitive: false
            })
            .unwrap_err(),
            ["cwd"]
        );
    }

    #[test]
    fn limits_are_checked_and_defaulted() {
        let mut issues = Vec::new();
        let req = CommandRequest::default();
        let l = Limits::check(&req, Some(DEFAULT_OUTPUT_LIMIT), &mut issues);
        assert!(issues.is_empty());
        assert_eq!(l.timeout, Duration::from_millis(DEFAULT_TIMEOUT_MS));
        assert_eq!(l.output_limit, Some(DEFAULT_OUTPUT_LIMIT));
        let req = CommandRequest {
            timeout_ms: Some(MAX_TIMEOUT_MS + 1),
            output_limit: Some(MAX_OUTPUT_LIMIT + 1),
            ..CommandRequest::default()
        };
        Limits::check(&req, None, &mut issues);
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["timeout_ms", "output_limit"]);
        let mut issues = Vec::new();
        let req = CommandRequest { timeout_ms: Some(0), ..CommandRequest::default() };
        Limits::check(&req, None, &mut issues);
        assert_eq!(issues[0].path, "timeout_ms");
    }

    #[test]
    fn one_answer_names_every_wrong_field() {
        let req = CommandRequest {
            argv: Some(Vec::new()),
            env: [("X=Y".to_owned(), String::new())].into(),
            timeout_ms: Some(0),
            ..CommandRequest::default()
        };
        let err = check_request(&req, Path::new("/"), None).unwrap_err();
        let issues = err.0.details.unwrap()["issues"].clone();
        let paths: Vec<&str> =
            issues.as_array().unwrap().iter().map(|i| i["path"].as_str().unwrap()).collect();
        assert_eq!(paths, ["argv", "env.X=Y", "timeout_ms"]);
    }

    #[test]
    fn shell_join_quotes_what_a_shell_would_split() {
        assert_eq!(shell_join(&argv(&["ls", "-la", "/tmp"])), "ls -la /tmp");
        assert_eq!(shell_join(&argv(&["echo", "a b", "it's", ""])), r"echo 'a b' 'it'\''s' ''");
    }
}
