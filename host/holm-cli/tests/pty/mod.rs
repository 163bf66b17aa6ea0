//! A real pty on this side: runs a command as the leader of a new session
//! whose controlling terminal is the pty, reads what it prints, types into
//! it, and changes its window size (the kernel sends `SIGWINCH`), as a
//! person's terminal would.

use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::pty::OpenptFlags;
use rustix::termios::{LocalModes, Winsize};

const WAIT: Duration = Duration::from_secs(60);

/// A command on a pty.
pub struct Pty {
    master: std::fs::File,
    child: Child,
    out: Arc<Mutex<Vec<u8>>>,
}

impl Pty {
    /// Starts `cmd` on a new pty of `cols` x `rows`.
    pub fn spawn(cmd: Command, cols: u16, rows: u16) -> Self {
        Self::spawn_with(cmd, cols, rows, None)
    }

    /// Starts `cmd` on a new pty of `cols` x `rows`, with its standard
    /// output to `stdout` instead when given (as `holm new > id.txt` in a
    /// person's terminal).
    pub fn spawn_with(mut cmd: Command, cols: u16, rows: u16, stdout: Option<Stdio>) -> Self {
        let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
        let master = rustix::pty::openpt(flags).unwrap();
        rustix::pty::grantpt(&master).unwrap();
        rustix::pty::unlockpt(&master).unwrap();
        let peer: OwnedFd = rustix::pty::ioctl_tiocgptpeer(&master, flags).unwrap();
        set_size(&master, cols, rows);
        let out = stdout.unwrap_or_else(|| Stdio::from(peer.try_clone().unwrap()));
        cmd.stdin(Stdio::from(peer.try_clone().unwrap())).stdout(out).stderr(Stdio::from(peer));
        // SAFETY: between fork and exec only async-signal-safe system calls
        // run (setsid, and an ioctl on descriptor 0, the pty's peer).
        unsafe {
            cmd.pre_exec(|| {
                rustix::process::setsid()?;
                rustix::process::ioctl_tiocsctty(BorrowedFd::borrow_raw(0))?;
                Ok(())
            });
        }
        let child = cmd.spawn().expect("start the command on the pty");
        drop(cmd);
        let master = std::fs::File::from(master);
        let out = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().unwrap();
        let sink = Arc::clone(&out);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            // EIO once nothing holds the peer any more.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Self { master, child, out }
    }

    /// Everything it printed so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.out.lock().unwrap()).into_owned()
    }

    fn len(&self) -> usize {
        self.out.lock().unwrap().len()
    }

    fn wait_from(&self, from: usize, want: &str) {
        assert!(
            self.printed_within(from, want, WAIT),
            "no {want:?} in {WAIT:?}; it printed: {}",
            self.text()
        );
    }

    /// Whether `want` shows after `from` within `limit`.
    fn printed_within(&self, from: usize, want: &str, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            let seen = String::from_utf8_lossy(&self.out.lock().unwrap()[from..]).into_owned();
            if seen.contains(want) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types a line again, each time its answer is done, until `want` shows
    /// after one: for what reaches the box in its own time (a new window
    /// size). `done` is what every answer ends with (the prompt).
    pub fn run_until(&mut self, line: &str, want: &str, done: &str) {
        let deadline = Instant::now() + WAIT;
        loop {
            let from = self.len();
            self.write(format!("{line}\r").as_bytes());
            self.wait_from(from, done);
            if self.printed_within(from, want, Duration::ZERO) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "no {want:?} in {WAIT:?}; it printed: {}",
                self.text()
            );
        }
    }

    /// Waits until it printed `want`.
    pub fn wait_for(&self, want: &str) {
        self.wait_from(0, want);
    }

    /// Types bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).unwrap();
    }

    /// Types a line and waits until `want` shows after it.
    pub fn run(&mut self, line: &str, want: &str) {
        let from = self.len();
        self.write(format!("{line}\r").as_bytes());
        self.wait_from(from, want);
    }

    /// Changes the window's size: the command gets `SIGWINCH`.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        set_size(&self.master, cols, rows);
    }

    /// Waits for the command to end: its exit code.
    pub fn wait(&mut self) -> Option<i32> {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "it did not end; it printed: {}", self.text());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the pty is in its usual (cooked, echoing) mode.
    pub fn cooked(&self) -> bool {
        let t = rustix::termios::tcgetattr(&self.master).unwrap();
        t.local_modes.contains(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG)
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn set_size(fd: impl AsFd, cols: u16, rows: u16) {
    let size = Winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
    rustix::termios::tcsetwinsize(fd, size).unwrap();
}
