//! Background processes: started, listed, read, written, signalled and
//! forgotten through the API, each with its own event log.
//!
//! [`Processes`] is also the guest's register of every command it runs
//! (run-and-wait and streams too), so that shutdown can end them all.
//!
//! Ended processes stay listed for [`ENDED_TTL`], and at most [`MAX_ENDED`] of
//! them (the oldest ended go first), so their output can still be read.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::convert::Infallible;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use holm_proto::guest::{
    OutputEvent, OutputKind, OutputPage, ProcessInfo, ProcessListQuery, ProcessStart, ProcessState,
};
use holm_proto::{ApiError, ErrorCode, Issue};
use tokio::io::AsyncWriteExt;
use tokio::net::unix::pipe;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::log::EventLog;
use super::{BaseEnv, MAX_TAG_LEN, Sink, Spec, Started, What, Which};
use crate::proc;
use holm_http::error::Error;

/// How much output one process keeps, about.
pub const MAX_LOG_BYTES: usize = 8 << 20;
/// How many ended processes stay listed.
pub const MAX_ENDED: usize = 32;
/// How long an ended process stays listed.
pub const ENDED_TTL: Duration = Duration::from_secs(3600);
/// How much text one page of output holds, about.
pub const PAGE_BYTES: usize = 1 << 20;
/// The longest `wait_ms` of an output read.
pub const MAX_WAIT_MS: u64 = 60_000;

/// The guest's commands and background processes.
#[derive(Debug)]
pub struct Processes {
    base: BaseEnv,
    table: Mutex<Table>,
    /// Process groups of run-and-wait and streamed commands that still run.
    live: Arc<Mutex<HashSet<u32>>>,
    /// How many terminals are open.
    terminals: Arc<AtomicUsize>,
    shutting_down: AtomicBool,
}

#[derive(Debug, Default)]
struct Table {
    next: u64,
    procs: BTreeMap<u64, Arc<Proc>>,
}

/// Keeps a command's process group in the register while it runs.
#[derive(Debug)]
pub struct Live {
    pid: u32,
    set: Arc<Mutex<HashSet<u32>>>,
}

impl Drop for Live {
    fn drop(&mut self) {
        self.set.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.pid);
    }
}

/// One of the open terminals, counted while it lives.
#[derive(Debug)]
pub struct TerminalSlot(Arc<AtomicUsize>);

impl Drop for TerminalSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Processes {
    /// An empty register whose commands start from `base`.
    pub fn new(base: BaseEnv) -> Arc<Self> {
        Arc::new(Self {
            base,
            table: Mutex::default(),
            live: Arc::default(),
            terminals: Arc::default(),
            shutting_down: AtomicBool::new(false),
        })
    }

    /// The home directory: the default working directory.
    pub fn home(&self) -> &Path {
        &self.base.home
    }

    /// The environment commands start from.
    pub(super) fn base(&self) -> &BaseEnv {
        &self.base
    }

    /// Counts one more terminal, or refuses when `max` are open.
    pub(super) fn terminal_slot(&self, max: usize) -> Result<TerminalSlot, Error> {
        let slot = TerminalSlot(Arc::clone(&self.terminals));
        if self.terminals.fetch_add(1, Ordering::SeqCst) >= max {
            drop(slot);
            return Err(ApiError::new(
                ErrorCode::Unavailable,
                format!("{max} terminals are open in this box already"),
            )
            .with_hint("close one (exit its shell) and try again")
            .into());
        }
        Ok(slot)
    }

    /// Keeps `pid`'s process group in the register (ended at shutdown)
    /// while the answer lives.
    pub(super) fn register_live(&self, pid: u32) -> Live {
        self.live.lock().unwrap_or_else(|e| e.into_inner()).insert(pid);
        Live { pid, set: Arc::clone(&self.live) }
    }

    pub(super) fn refuse_when_shutting_down(&self) -> Result<(), Error> {
        if self.shutting_down.load(Ordering::SeqCst) {
            return Err(ApiError::new(ErrorCode::Unavailable, "the guest is shutting down").into());
        }
        Ok(())
    }

    /// Starts a run-and-wait or streamed command and registers it until the
    /// returned [`Live`] drops.
    pub fn start_command(&self, spec: &Spec, stdin: bool) -> Result<(Started, Live), Error> {
        self.refuse_when_shutting_down()?;
        let started = super::start(spec, &self.base, stdin)?;
        let live = self.register_live(started.output.pid);
        Ok((started, live))
    }

    /// Checks and starts a background process.
    pub async fn start(&self, req: &ProcessStart) -> Result<ProcessInfo, Error> {
        let mut issues = Vec::new();
        let what = What {
            argv: req.argv.as_deref(),
            command: req.command.as_deref(),
            cwd: req.cwd.as_deref(),
            env: &req.env,
            sensitive: req.sensitive,
        };
        let spec = Spec::check(what, self.home(), &mut issues);
        if let Some(tag) = &req.tag
            && (tag.is_empty() || tag.chars().count() > MAX_TAG_LEN)
        {
            issues.push(Issue {
                path: "tag".into(),
                problem: format!("must be 1 to {MAX_TAG_LEN} characters"),
            });
        }
        let spec = match spec {
            Some(spec) if issues.is_empty() => spec,
            _ => return Err(ApiError::invalid_fields(issues).into()),
        };
        spec.check_cwd().await?;
        self.refuse_when_shutting_down()?;
        let started = super::start(&spec, &self.base, true)?;
        let (newest, _) = watch::channel(0);
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        table.next += 1;
        let num = table.next;
        let p = Arc::new(Proc {
            num,
            id: format!("p_{num}"),
            pid: started.output.pid,
            tag: req.tag.clone(),
            command: spec.shown.clone(),
            started_at: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            state: Mutex::new(ProcState {
                log: EventLog::new(MAX_LOG_BYTES),
                exit: None,
                ended_at: None,
            }),
            newest,
            stdin: tokio::sync::Mutex::new(started.stdin),
        });
        table.procs.insert(num, Arc::clone(&p));
        prune(&mut table);
        drop(table);
        let info = p.info();
        tokio::spawn(async move {
            let mut sink = LogSink(Arc::clone(&p));
            let outcome =
                super::pump(started.output, &mut sink, None, None, &CancellationToken::new()).await;
            let (exit_code, signal) = outcome.code_and_signal();
            p.finish(exit_code, signal);
        });
        Ok(info)
    }

    /// The processes, oldest first, that match `query`.
    pub fn list(&self, query: &ProcessListQuery) -> Vec<ProcessInfo> {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        prune(&mut table);
        table
            .procs
            .values()
            .map(|p| p.info())
            .filter(|i| query.tag.as_ref().is_none_or(|t| i.tag.as_ref() == Some(t)))
            .filter(|i| query.state.is_none_or(|s| i.state == s))
            .collect()
    }

    /// The process with id `id`, such as `p_3`.
    pub fn get(&self, id: &str) -> Result<Arc<Proc>, Error> {
        let num = id.strip_prefix("p_").and_then(|n| n.parse::<u64>().ok());
        let table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        num.and_then(|n| table.procs.get(&n).cloned()).ok_or_else(|| not_found(id))
    }

    /// Kills the process if it runs and forgets it. Answers how it ended.
    pub async fn remove(&self, id: &str) -> Result<ProcessInfo, Error> {
        let p = self.get(id)?;
        self.table.lock().unwrap_or_else(|e| e.into_inner()).procs.remove(&p.num);
        if p.running() {
            let _ = proc::kill_group(p.pid, libc::SIGKILL);
            // The end is recorded as soon as the reaper reports it; wait for
            // that so the answer says how it ended.
            let mut rx = p.newest.subscribe();
            let _ = tokio::time::timeout(Duration::from_secs(5), async {
                while p.running() {
                    if rx.changed().await.is_err() {
                        break;
                    }
                }
            })
            .await;
        }
        Ok(p.info())
    }

    /// Ends every command and process: `SIGTERM` to each group, `SIGKILL`
    /// to those still there after `grace`. New commands are refused from
    /// now on.
    pub async fn shutdown(&self, grace: Duration) {
        self.shutting_down.store(true, Ordering::SeqCst);
        let running = || -> Vec<u32> {
            let mut pids: Vec<u32> = self
                .table
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .procs
                .values()
                .filter(|p| p.running())
                .map(|p| p.pid)
                .collect();
            pids.extend(self.live.lock().unwrap_or_else(|e| e.into_inner()).iter().copied());
            pids
        };
        let pids = running();
        if pids.is_empty() {
            return;
        }
        tracing::info!(count = pids.len(), "ending commands and processes");
        for pid in &pids {
            let _ = proc::kill_group(*pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline && !running().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for pid in running() {
            let _ = proc::kill_group(pid, libc::SIGKILL);
        }
    }
}

fn not_found(id: &str) -> Error {
    ApiError::new(ErrorCode::NotFound, format!("no process {id:?}"))
        .with_hint(format!(
            "GET /v1/processes lists them; an ended process is kept for {} minutes, and at most {MAX_ENDED} of them",
            ENDED_TTL.as_secs() / 60
        ))
        .with_details(serde_json::json!({ "id": id }))
        .into()
}

/// Forgets ended processes that are too old or too many.
fn prune(table: &mut Table) {
    let now = Instant::now();
    let mut ended: Vec<(Instant, u64)> =
        table.procs.values().filter_map(|p| p.ended_at().map(|t| (t, p.num))).collect();
    ended.sort_unstable();
    let excess = ended.len().saturating_sub(MAX_ENDED);
    for (i, (at, num)) in ended.into_iter().enumerate() {
        if i < excess || now.duration_since(at) > ENDED_TTL {
            table.procs.remove(&num);
        }
    }
}

/// One background process.
#[derive(Debug)]
pub struct Proc {
    num: u64,
    /// Such as `p_3`.
    pub id: String,
    /// The process id, also its process group id.
    pub pid: u32,
    tag: Option<String>,
    command: String,
    started_at: String,
    state: Mutex<ProcState>,
    /// The newest cursor; readers wait on it.
    newest: watch::Sender<u64>,
    /// Standard input; `None` once closed.
    stdin: tokio::sync::Mutex<Option<pipe::Sender>>,
}

#[derive(Debug)]
struct ProcState {
    log: EventLog,
    exit: Option<(Option<i32>, Option<String>)>,
    ended_at: Option<Instant>,
}

impl Proc {
    fn lock(&self) -> std::sync::MutexGuard<'_, ProcState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether it still runs. It counts as ended only once all its output is
    /// in the log.
    pub fn running(&self) -> bool {
        self.lock().exit.is_none()
    }

    fn ended_at(&self) -> Option<Instant> {
        self.lock().ended_at
    }

    /// What the API says about it.
    pub fn info(&self) -> ProcessInfo {
        let state = self.lock();
        let (exit_code, signal) = state.exit.clone().unwrap_or((None, None));
        ProcessInfo {
            id: self.id.clone(),
            pid: self.pid,
            tag: self.tag.clone(),
            command: self.command.clone(),
            state: if state.exit.is_some() { ProcessState::Exited } else { ProcessState::Running },
            exit_code,
            signal,
            started_at: self.started_at.clone(),
            next_cursor: state.log.newest(),
        }
    }

    fn push(&self, kind: OutputKind) {
        let cursor = self.lock().log.push(kind);
        self.newest.send_replace(cursor);
    }

    fn finish(&self, exit_code: Option<i32>, signal: Option<String>) {
        let cursor = {
            let mut state = self.lock();
            let cursor = state.log.push(OutputKind::Exit { exit_code, signal: signal.clone() });
            state.exit = Some((exit_code, signal));
            state.ended_at = Some(Instant::now());
            cursor
        };
        self.newest.send_replace(cursor);
    }

    /// The events after `cursor`, one page of them.
    fn read(&self, cursor: u64) -> Result<(Vec<OutputEvent>, u64, bool), Error> {
        let state = self.lock();
        let events = state.log.read(cursor, PAGE_BYTES).map_err(|ahead| {
            Error::from(ApiError::invalid_fields(vec![Issue {
                path: "cursor".into(),
                problem: format!(
                    "{} is past the newest event of {}, {}",
                    ahead.cursor, self.id, ahead.newest
                ),
            }]))
        })?;
        let next = events.last().map_or(cursor, |e| e.cursor);
        let done = state.exit.is_some() && next == state.log.newest();
        Ok((events, next, done))
    }

    /// The events after `cursor`; when there are none yet and it still
    /// runs, waits up to `wait` for the first.
    pub async fn output(&self, cursor: u64, wait: Duration) -> Result<OutputPage, Error> {
        let (mut data, mut next_cursor, mut done) = self.read(cursor)?;
        if data.is_empty() && !done && !wait.is_zero() {
            let mut rx = self.newest.subscribe();
            // `wait_for` looks at the current value first: an event that came
            // between the read above and here is not missed.
            let _ = tokio::time::timeout(wait, rx.wait_for(|n| *n > cursor)).await;
            (data, next_cursor, done) = self.read(cursor)?;
        }
        Ok(OutputPage { data, next_cursor, done })
    }

    /// The events after `cursor` as NDJSON lines, as they come, until the
    /// `exit` event.
    pub fn follow(
        self: Arc<Self>,
        cursor: u64,
    ) -> Result<impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static, Error> {
        // Refuse a bad cursor now, while an error can still be an answer.
        self.read(cursor)?;
        let rx = self.newest.subscribe();
        let state = (self, rx, cursor, VecDeque::<OutputEvent>::new(), false);
        Ok(futures_util::stream::unfold(
            state,
            |(p, mut rx, mut cursor, mut queue, mut done)| async move {
                loop {
                    if let Some(event) = queue.pop_front() {
                        cursor = event.cursor;
                        done |= matches!(event.kind, OutputKind::Exit { .. });
                        let mut line = serde_json::to_vec(&event).unwrap_or_default();
                        line.push(b'\n');
                        return Some((Ok(Bytes::from(line)), (p, rx, cursor, queue, done)));
                    }
                    if done {
                        return None;
                    }
                    let Ok((events, _, finished)) = p.read(cursor) else { return None };
                    if events.is_empty() {
                        if finished {
                            return None;
                        }
                        if rx.wait_for(|n| *n > cursor).await.is_err() {
                            return None;
                        }
                    }
                    queue.extend(events);
                }
            },
        ))
    }

    /// Writes a body to its standard input, in order, and closes the input
    /// afterwards when `eof` is set.
    pub async fn write_stdin<S, E>(&self, mut body: S, eof: bool) -> Result<(), Error>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin,
        E: std::fmt::Display,
    {
        // One writer at a time, so two requests never interleave their bytes.
        let mut stdin = self.stdin.lock().await;
        if !self.running() {
            return Err(self.conflict("has ended; its standard input is gone"));
        }
        let Some(pipe) = stdin.as_mut() else {
            return Err(self.conflict("had its standard input closed (eof) already"));
        };
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| {
                Error::from(ApiError::invalid(format!("cannot read the request body: {e}")))
            })?;
            if let Err(e) = pipe.write_all(&chunk).await {
                return Err(if e.kind() == std::io::ErrorKind::BrokenPipe {
                    self.conflict("no longer reads its standard input (it closed it or ended)")
                } else {
                    Error::internal(format!("stdin of {}: {e}", self.id))
                });
            }
        }
        if eof {
            // Dropping the sender closes the pipe: the process reads EOF.
            *stdin = None;
        }
        Ok(())
    }

    /// Sends `signal` to its process group.
    pub fn signal(&self, signal: i32) -> Result<(), Error> {
        if !self.running() {
            return Err(self.conflict("has ended; there is nothing to signal"));
        }
        proc::kill_group(self.pid, signal).map_err(|e| {
            if e.raw_os_error() == Some(libc::ESRCH) {
                self.conflict("has ended; there is nothing to signal")
            } else {
                Error::internal(format!("signal {signal} to {}: {e}", self.id))
            }
        })
    }

    fn conflict(&self, what: &str) -> Error {
        ApiError::new(ErrorCode::Conflict, format!("process {} {what}", self.id))
            .with_details(serde_json::json!({ "id": self.id }))
            .into()
    }
}

/// Puts a process's output into its log.
struct LogSink(Arc<Proc>);

impl Sink for LogSink {
    async fn output(&mut self, which: Which, data: String) -> bool {
        self.0.push(match which {
            Which::Stdout => OutputKind::Stdout { data },
            Which::Stderr => OutputKind::Stderr { data },
        });
        true
    }
}
