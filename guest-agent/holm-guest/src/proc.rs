//! Starting child processes and reaping them.
//!
//! The guest may be PID 1, and it is a child subreaper otherwise, so orphaned
//! grandchildren land on it and must be reaped. One reaper calls
//! `waitpid(-1)` and hands each exit status to whoever started that process.
//! Nothing else in the guest may wait on a child: every process is started
//! through [`spawn`], never through `tokio::process` or `Child::wait`.
//!
//! Spawning holds a read lock that the reaper needs as a write lock, so the
//! reaper never takes a child's status while `std` is still inside `spawn`
//! (which itself waits on a child whose `exec` failed).

use std::collections::HashMap;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::{Mutex, OnceLock, RwLock};
use std::time::Duration;

use tokio::sync::oneshot;

struct Reaper {
    /// Held for reading while spawning, for writing while reaping.
    spawning: RwLock<()>,
    /// Whoever waits for each pid.
    waiters: Mutex<HashMap<u32, oneshot::Sender<ExitStatus>>>,
}

fn reaper() -> &'static Reaper {
    static REAPER: OnceLock<Reaper> = OnceLock::new();
    REAPER.get_or_init(|| Reaper { spawning: RwLock::new(()), waiters: Mutex::new(HashMap::new()) })
}

/// Becomes a child subreaper (when not PID 1) and starts reaping on SIGCHLD.
/// Call once, inside the tokio runtime, before starting any process.
pub fn init_reaper() -> io::Result<()> {
    if std::process::id() != 1 {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes an integer flag and
        // touches no memory of ours.
        let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    let mut sigchld = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child())?;
    tokio::spawn(async move {
        loop {
            // A signal can be coalesced or missed; sweep once a second anyway.
            let _ = tokio::time::timeout(Duration::from_secs(1), sigchld.recv()).await;
            reap_all();
        }
    });
    Ok(())
}

/// Reaps every child that has ended and hands out the statuses.
#[allow(
    clippy::disallowed_methods,
    reason = "the one reaper: the guest's clippy.toml refuses waitpid everywhere else"
)]
fn reap_all() {
    let r = reaper();
    let _guard = r.spawning.write().unwrap_or_else(|e| e.into_inner());
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: waitpid writes only to `status`, which lives on this stack.
        let pid = unsafe { libc::waitpid(-1, &raw mut status, libc::WNOHANG) };
        if pid <= 0 {
            break;
        }
        let Ok(pid) = u32::try_from(pid) else { continue };
        let waiter = r.waiters.lock().unwrap_or_else(|e| e.into_inner()).remove(&pid);
        if let Some(tx) = waiter {
            let _ = tx.send(ExitStatus::from_raw(status));
        }
        // Otherwise an orphan that was re-parented to us: reaping is all it needs.
    }
}

/// A started process: its pipes are in `child`, its end comes through `exit`.
#[derive(Debug)]
pub struct Spawned {
    /// The process id; also its process group id.
    pub pid: u32,
    /// The handle, for its pipes. Never wait on it.
    pub child: Child,
    /// Resolves when the process has ended and been reaped.
    pub exit: oneshot::Receiver<ExitStatus>,
}

/// Starts `cmd` in a new process group and registers it with the reaper.
pub fn spawn(cmd: &mut Command) -> io::Result<Spawned> {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    register(cmd)
}

/// Starts `cmd` as the leader of a new session whose controlling terminal
/// is its standard input (the pty's other end, for a terminal), and
/// registers it with the reaper. Its session is also its process group, so
/// [`kill_group`] reaches the programs it runs in the foreground.
pub fn spawn_session(cmd: &mut Command) -> io::Result<Spawned> {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only async-signal-safe system calls run
    // (setsid and an ioctl on descriptor 0); nothing allocates or locks.
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::setsid().map_err(io::Error::from)?;
            let stdin = std::os::fd::BorrowedFd::borrow_raw(0);
            rustix::process::ioctl_tiocsctty(stdin).map_err(io::Error::from)
        });
    }
    register(cmd)
}

/// Spawns `cmd` and hands its exit status to the caller through the reaper.
fn register(cmd: &mut Command) -> io::Result<Spawned> {
    let r = reaper();
    let _guard = r.spawning.read().unwrap_or_else(|e| e.into_inner());
    let child = cmd.spawn()?;
    let pid = child.id();
    let (tx, exit) = oneshot::channel();
    r.waiters.lock().unwrap_or_else(|e| e.into_inner()).insert(pid, tx);
    Ok(Spawned { pid, child, exit })
}

/// Sends `signal` to the process group `pgid`.
pub fn kill_group(pgid: u32, signal: libc::c_int) -> io::Result<()> {
    let pgid =
        libc::pid_t::try_from(pgid).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: kill takes plain integers.
    if unsafe { libc::kill(-pgid, signal) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sends `signal` to the single process `pid`.
pub fn kill_one(pid: u32, signal: libc::c_int) -> io::Result<()> {
    let pid =
        libc::pid_t::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: kill takes plain integers.
    if unsafe { libc::kill(pid, signal) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The name of a signal number, such as `SIGKILL`.
pub fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGCHLD => "SIGCHLD",
        libc::SIGCONT => "SIGCONT",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGTSTP => "SIGTSTP",
        libc::SIGWINCH => "SIGWINCH",
        _ => return format!("SIG{signal}"),
    };
    name.to_owned()
}

/// The number of a signal named `TERM`, `SIGTERM` or `sigterm`.
pub fn signal_number(name: &str) -> Option<i32> {
    let upper = name.trim().to_ascii_uppercase();
    let bare = upper.strip_prefix("SIG").unwrap_or(&upper);
    Some(match bare {
        "HUP" => libc::SIGHUP,
        "INT" => libc::SIGINT,
        "QUIT" => libc::SIGQUIT,
        "ABRT" => libc::SIGABRT,
        "KILL" => libc::SIGKILL,
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        "PIPE" => libc::SIGPIPE,
        "ALRM" => libc::SIGALRM,
        "TERM" => libc::SIGTERM,
        "CONT" => libc::SIGCONT,
        "STOP" => libc::SIGSTOP,
        "TSTP" => libc::SIGTSTP,
        "WINCH" => libc::SIGWINCH,
        _ => return None,
    })
}

/// Describes how a process ended, such as `exit status 1` or `signal SIGKILL`.
pub fn describe_exit(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("signal {}", signal_name(sig)),
        _ => "ended".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_names_round_trip() {
        for n in [libc::SIGTERM, libc::SIGKILL, libc::SIGINT, libc::SIGUSR1] {
            assert_eq!(signal_number(&signal_name(n)), Some(n));
        }
        assert_eq!(signal_number("term"), Some(libc::SIGTERM));
        assert_eq!(signal_number("SIGNOPE"), None);
    }

    #[tokio::test]
    async fn spawned_process_exit_is_reaped_and_reported() {
        init_reaper().unwrap();
        let s = spawn(Command::new("sh").args(["-c", "exit 7"])).unwrap();
        let status = tokio::time::timeout(Duration::from_secs(10), s.exit).await.unwrap().unwrap();
        assert_eq!(status.code(), Some(7));
        let s = spawn(Command::new("sleep").arg("30")).unwrap();
        kill_group(s.pid, libc::SIGKILL).unwrap();
        let status = tokio::time::timeout(Duration::from_secs(10), s.exit).await.unwrap().unwrap();
        assert_eq!(describe_exit(status), "signal SIGKILL");
    }

    #[tokio::test]
    async fn a_missing_program_is_an_error_not_a_panic() {
        init_reaper().unwrap();
        let err = spawn(&mut Command::new("/nonexistent/holm-test-program")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    /// The one-reaper rule is enforced by the guest's `clippy.toml`: it
    /// refuses every way to wait on a child, and only the reaper is allowed
    /// to, in this file.
    #[test]
    fn clippy_enforces_the_one_reaper() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let toml = std::fs::read_to_string(dir.join("clippy.toml")).unwrap();
        for path in [
            "std::process::Child::wait\"",
            "std::process::Child::try_wait\"",
            "std::process::Child::wait_with_output\"",
            "std::process::Command::output\"",
            "std::process::Command::status\"",
            "libc::waitpid\"",
            "tokio::process::Command\"",
            "tokio::process::Child\"",
        ] {
            assert!(toml.contains(&format!("path = \"{path}")), "clippy.toml lacks {path}");
        }
        let mut allowed = Vec::new();
        let mut dirs = vec![dir.join("src")];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    let n = text.matches(concat!("clippy::", "disallowed_")).count();
                    allowed.extend(std::iter::repeat_n(p.file_name().unwrap().to_owned(), n));
                }
            }
        }
        assert_eq!(allowed, ["proc.rs"], "only the reaper may wait on children");
    }
}
