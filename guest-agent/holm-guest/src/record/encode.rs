//! One recording's work: a thread that captures the screen at the frame
//! rate with the desktop's own capture (X11 shared memory, Wayland
//! screencopy: one path for both profiles), draws the pointer, and writes
//! the raw frames to a supervised `ffmpeg`, which encodes H.264 into
//! fragmented MP4.
//!
//! The video keeps wall-clock time: frame `n` shows the screen at
//! `started_at + n / fps`. When a capture or the encoder falls behind, the
//! last frame is written again for each frame time missed, so a recording
//! of a minute is a minute long however busy the box was.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use holm_proto::guest::Region;
use holm_proto::recording::StopReason;

use crate::display::{Desktop, DisplayError};
use crate::image::{self, Frame};

/// How long the encoder has to finish its file after its input closes.
const FINISH: Duration = Duration::from_secs(10);

/// The most frame times made up for at once after a stall (two seconds'
/// worth at the highest rate), so a long stall costs a bounded burst.
const MAX_CATCH_UP: u64 = 60;

/// How often the file's size is checked against the limits.
const SIZE_CHECK: Duration = Duration::from_millis(500);

/// What the thread is given.
pub(super) struct Job {
    pub desktop: Arc<dyn Desktop>,
    pub screen: u8,
    pub fps: u8,
    pub path: PathBuf,
    /// The first frame, taken when the recording started.
    pub first: Frame,
    /// When the first frame was taken.
    pub start: Instant,
    /// The encoder, already running.
    pub encoder: Encoder,
    /// The stop request, with its reason.
    pub stop: Receiver<StopReason>,
    /// Whether the size limits are reached, given the file's size now.
    pub over_limit: Box<dyn Fn(u64) -> bool + Send>,
}

/// How a recording ended.
pub(super) struct Ended {
    pub reason: StopReason,
    pub error: Option<String>,
}

/// A running `ffmpeg` reading raw frames on its standard input.
pub(super) struct Encoder {
    spawned: crate::proc::Spawned,
    stdin: std::process::ChildStdin,
    stderr: std::thread::JoinHandle<String>,
}

/// The video's frame size for a screen's: libx264's 4:2:0 needs even sides,
/// so an odd side gets one black column or row.
pub(super) fn video_size(width: u32, height: u32) -> (u32, u32) {
    (width + (width & 1), height + (height & 1))
}

impl Encoder {
    /// Starts `ffmpeg` writing `path` from `width` x `height` BGRX frames at
    /// `fps`. The file is made here, new, with no link followed (the
    /// directory is the desktop user's: [`crate::nofollow`]), and handed to
    /// ffmpeg, which runs as root, as its standard output: it writes to
    /// `/dev/fd/1`, the file already open, never looking up `path`.
    pub(super) fn start(path: &Path, width: u32, height: u32, fps: u8) -> Result<Self, String> {
        let (dir, name) = (path.parent().unwrap_or(Path::new("/")), path.file_name());
        let name = name.map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let file = crate::nofollow::create(dir, &name, 0o644)
            .map_err(|e| format!("cannot make the recording's file: {e}"))?;
        let (vw, vh) = video_size(width, height);
        let mut cmd = Command::new("ffmpeg");
        cmd.args(["-hide_banner", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "bgr0"])
            .args(["-video_size", &format!("{width}x{height}"), "-framerate", &fps.to_string()])
            .args(["-i", "pipe:0", "-vf", &format!("pad={vw}:{vh}")])
            .args(["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"])
            .args(["-threads", "1", "-g", &(u32::from(fps) * 2).to_string()])
            .args(["-movflags", "frag_keyframe+empty_moov+default_base_moof", "-f", "mp4", "-y"])
            .arg("/dev/fd/1")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()))
            .stdin(Stdio::piped())
            .stdout(Stdio::from(file))
            .stderr(Stdio::piped());
        let mut spawned = crate::proc::spawn(&mut cmd).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                "ffmpeg is not installed in this box (the box image has it)".to_owned()
            }
            _ => format!("could not start ffmpeg: {e}"),
        })?;
        let stdin = spawned.child.stdin.take().ok_or("ffmpeg has no standard input")?;
        let mut err = spawned.child.stderr.take().ok_or("ffmpeg has no standard error")?;
        let stderr = std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = std::io::Read::read_to_end(&mut err, &mut text);
            // The last lines say why it stopped.
            let cut = text.len().saturating_sub(2000);
            String::from_utf8_lossy(&text[cut..]).trim().to_owned()
        });
        Ok(Self { spawned, stdin, stderr })
    }

    /// Closes the input, waits (bounded) for the file to be finished, and
    /// answers what the encoder said when it failed.
    fn finish(self) -> Option<String> {
        let Self { spawned, stdin, stderr } = self;
        drop(stdin);
        let pid = spawned.pid;
        let mut exit = spawned.exit;
        let deadline = Instant::now() + FINISH;
        let status = loop {
            match exit.try_recv() {
                Ok(status) => break Some(status),
                Err(_) if Instant::now() >= deadline => {
                    let _ = crate::proc::kill_group(pid, libc::SIGKILL);
                    break None;
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        let said = stderr.join().unwrap_or_default();
        match status {
            Some(s) if s.success() => None,
            Some(s) => Some(format!("ffmpeg {}: {said}", crate::proc::describe_exit(s))),
            None => Some(format!("ffmpeg did not finish within {FINISH:?}; it was killed")),
        }
    }
}

/// Captures screen `screen` whole, with the pointer drawn in.
pub(super) fn capture(desktop: &dyn Desktop, screen: u8) -> Result<Frame, DisplayError> {
    let (width, height) = desktop.size(screen)?;
    let region = Region { x: 0, y: 0, width, height };
    let captured = desktop.capture(screen, region, true)?;
    let mut frame = captured.frame;
    if let Some(cursor) = &captured.cursor {
        image::draw_cursor(&mut frame, (0, 0), cursor);
    }
    Ok(frame)
}

/// Records until asked to stop, the limits are reached, the screen changes
/// size, or the encoder or the capture fails; then finishes the file.
pub(super) fn run(mut job: Job) -> Ended {
    let (reason, mut error) = frames(&mut job);
    let said = job.encoder.finish();
    if reason == StopReason::Failed || said.is_some() {
        error = error.or(said);
        return Ended { reason: StopReason::Failed, error };
    }
    Ended { reason, error }
}

fn frames(job: &mut Job) -> (StopReason, Option<String>) {
    let period = Duration::from_secs(1) / u32::from(job.fps);
    let (width, height) = (job.first.width, job.first.height);
    let mut last = std::mem::replace(&mut job.first, Frame { width, height, data: Vec::new() });
    let mut written: u64 = 0;
    let mut checked = Instant::now();
    loop {
        // Every frame time up to now gets a frame: the newest capture, and
        // the one before it again for times a stall missed.
        let due = (job.start.elapsed().as_nanos() / period.as_nanos()) as u64 + 1;
        let behind = due.saturating_sub(written);
        if behind > MAX_CATCH_UP {
            written = due - MAX_CATCH_UP;
        }
        while written < due {
            if let Err(e) = job.encoder.stdin.write_all(&last.data) {
                return (StopReason::Failed, Some(format!("writing to ffmpeg: {e}")));
            }
            written += 1;
        }
        if checked.elapsed() >= SIZE_CHECK {
            checked = Instant::now();
            let bytes = std::fs::metadata(&job.path).map_or(0, |m| m.len());
            if (job.over_limit)(bytes) {
                return (StopReason::SizeLimit, None);
            }
        }
        let next = job.start + period * u32::try_from(written).unwrap_or(u32::MAX);
        match job.stop.recv_timeout(next.saturating_duration_since(Instant::now())) {
            Ok(reason) => return (reason, None),
            Err(RecvTimeoutError::Disconnected) => return (StopReason::BoxStopping, None),
            Err(RecvTimeoutError::Timeout) => {}
        }
        match capture(job.desktop.as_ref(), job.screen) {
            Ok(f) if (f.width, f.height) != (width, height) => {
                return (StopReason::ScreenResized, None);
            }
            Ok(f) => last = f,
            // A display server restarting: keep the last frame meanwhile.
            Err(DisplayError::Gone(why)) => tracing::debug!(why, "recording: no capture"),
            Err(e) => return (StopReason::Failed, Some(format!("capturing the screen: {e}"))),
        }
    }
}
