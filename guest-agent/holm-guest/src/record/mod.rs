//! Recordings of the screens, made in the box ([`holm_proto::recording`]).
//!
//! [`Recorder`] keeps the list: at most one running recording per screen,
//! each a thread ([`encode`]) feeding a supervised `ffmpeg`. Files live in
//! `<state dir>/recordings`, each with a `.json` beside it that holds its
//! record, so a box stopped and started again still lists them (one that
//! was running when the box was killed is listed finished, `box_stopping`,
//! its file playable up to its last fragment).
//!
//! Sizes are bound: one file at [`Limits::per_recording`], all of them at
//! [`Limits::total`]; a start is refused at the total and a running
//! recording stops with `size_limit` when either is reached.

mod encode;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant, SystemTime};

use holm_proto::recording::{
    DEFAULT_FPS, MAX_FPS, Recording, RecordingStart, RecordingState, StopReason,
};
use holm_proto::{ApiError, ErrorCode, Issue};
use tokio::sync::watch;

use crate::display::{Desktop, DisplayError};

/// The size limits, as the configuration sets them.
pub use crate::config::RecordingLimits as Limits;

/// One recording and how to reach its thread.
#[derive(Debug)]
struct Entry {
    rec: Recording,
    path: PathBuf,
    stop: Option<mpsc::Sender<StopReason>>,
    done: watch::Receiver<bool>,
}

/// The box's recordings.
#[derive(Debug)]
pub struct Recorder {
    dir: PathBuf,
    limits: Limits,
    desktop: Arc<dyn Desktop>,
    entries: Mutex<Vec<Entry>>,
    closing: AtomicBool,
}

fn now_rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

fn err(code: ErrorCode, message: impl Into<String>) -> ApiError {
    ApiError::new(code, message)
}

impl Recorder {
    /// The recorder of `desktop`, keeping files in `dir` (listing those a
    /// previous run of the box left there).
    pub fn new(dir: PathBuf, limits: Limits, desktop: Arc<dyn Desktop>) -> Arc<Self> {
        let entries = load(&dir);
        Arc::new(Self { dir, limits, desktop, entries: Mutex::new(entries), closing: false.into() })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every recording, oldest first, with running ones' sizes as they are.
    pub fn list(&self) -> Vec<Recording> {
        self.lock().iter().map(current).collect()
    }

    /// The bytes of every file now.
    fn total(&self) -> u64 {
        self.list().iter().map(|r| r.bytes).sum()
    }

    /// Starts recording as `req` asks; refused in the one error shape, with
    /// nothing changed, for a bad frame rate, a screen the box lacks, a
    /// screen already recorded, the total size reached, or a box stopping.
    pub async fn start(self: &Arc<Self>, req: RecordingStart) -> Result<Recording, ApiError> {
        let fps = req.fps.unwrap_or(DEFAULT_FPS);
        if !(1..=MAX_FPS).contains(&fps) {
            let problem = format!("must be 1 to {MAX_FPS}, not {fps}");
            return Err(ApiError::invalid_fields(vec![Issue { path: "fps".into(), problem }]));
        }
        let screen = req.screen;
        if usize::from(screen) >= self.desktop.len() {
            let last = self.desktop.len().saturating_sub(1);
            return Err(err(ErrorCode::NotFound, format!("there is no screen {screen}"))
                .with_hint(format!("this box has screens 0 to {last}")));
        }
        let total = self.total();
        if total >= self.limits.total {
            return Err(err(
                ErrorCode::LimitReached,
                format!(
                    "the box's recordings hold {total} bytes, its limit is {}",
                    self.limits.total
                ),
            )
            .with_hint("fetch what you need, then DELETE /v1/recordings/{file} to make room"));
        }
        let (done_tx, done) = watch::channel(false);
        let (stop_tx, stop) = mpsc::channel();
        let (path, file) = self.reserve(screen, fps, stop_tx, done)?;
        let this = Arc::clone(self);
        let begun =
            tokio::task::spawn_blocking(move || this.begin(screen, fps, &path, stop, done_tx))
                .await
                .map_err(|e| err(ErrorCode::Internal, e.to_string()));
        match begun.and_then(|r| r) {
            Ok(rec) => Ok(rec),
            Err(e) => {
                self.lock().retain(|e| e.rec.file != file);
                Err(e)
            }
        }
    }

    /// Claims screen `screen` with a placeholder entry, so two starts never
    /// race for it. Answers the file's path and name.
    fn reserve(
        &self,
        screen: u8,
        fps: u8,
        stop: mpsc::Sender<StopReason>,
        done: watch::Receiver<bool>,
    ) -> Result<(PathBuf, String), ApiError> {
        let mut entries = self.lock();
        if self.closing.load(Ordering::SeqCst) {
            return Err(err(ErrorCode::Conflict, "the box is stopping; no recording starts now"));
        }
        if let Some(e) = entries.iter().find(|e| running(e) && e.rec.screen == screen) {
            return Err(err(
                ErrorCode::Conflict,
                format!("screen {screen} is already being recorded, to {}", e.rec.file),
            )
            .with_hint("stop it first (POST /v1/recordings/stop)"));
        }
        let file = unused_name(&self.dir, screen, &entries);
        let path = self.dir.join(&file);
        let rec = Recording {
            file: file.clone(),
            screen,
            state: RecordingState::Recording,
            started_at: now_rfc3339(SystemTime::now()),
            ended_at: None,
            stopped_by: None,
            fps,
            width: 0,
            height: 0,
            bytes: 0,
            error: None,
        };
        entries.push(Entry { rec, path: path.clone(), stop: Some(stop), done });
        Ok((path, file))
    }

    /// Takes the first frame, starts the encoder and the thread.
    fn begin(
        self: Arc<Self>,
        screen: u8,
        fps: u8,
        path: &Path,
        stop: mpsc::Receiver<StopReason>,
        done: watch::Sender<bool>,
    ) -> Result<Recording, ApiError> {
        let first = encode::capture(self.desktop.as_ref(), screen).map_err(|e| match e {
            DisplayError::Gone(_) => err(
                ErrorCode::NotReady,
                format!("the {} of screen {screen} is not answering", self.desktop.server_name()),
            ),
            DisplayError::Unsupported(why) => err(ErrorCode::Unsupported, why),
            DisplayError::Failed(why) => err(ErrorCode::Internal, why),
        })?;
        let (started, start) = (SystemTime::now(), Instant::now());
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| err(ErrorCode::Internal, format!("making {}: {e}", self.dir.display())))?;
        let encoder = encode::Encoder::start(path, first.width, first.height, fps)
            .map_err(|why| err(ErrorCode::Unsupported, why))?;
        let (width, height) = encode::video_size(first.width, first.height);
        let rec = self.update(path, |r| {
            (r.started_at, r.width, r.height) = (now_rfc3339(started), width, height);
        });
        let limits = self.limits;
        let weak = Arc::downgrade(&self);
        let over_limit = Box::new(move |bytes: u64| {
            bytes >= limits.per_recording
                || weak.upgrade().is_some_and(|r| r.total() >= limits.total)
        });
        let job = encode::Job {
            desktop: Arc::clone(&self.desktop),
            screen,
            fps,
            path: path.to_owned(),
            first,
            start,
            encoder,
            stop,
            over_limit,
        };
        let path = path.to_owned();
        std::thread::Builder::new()
            .name(format!("record-{screen}"))
            .spawn(move || {
                let ended = encode::run(job);
                tracing::info!(file = %path.display(), reason = %ended.reason, error = ?ended.error, "a recording ended");
                self.update(&path, |r| {
                    r.state = match ended.reason {
                        StopReason::Failed => RecordingState::Failed,
                        _ => RecordingState::Finished,
                    };
                    r.ended_at = Some(now_rfc3339(SystemTime::now()));
                    r.stopped_by = Some(ended.reason);
                    r.error = ended.error;
                    r.bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
                });
                let _ = done.send(true);
            })
            .map_err(|e| err(ErrorCode::Internal, format!("starting the recording thread: {e}")))?;
        tracing::info!(file = %rec.file, screen, fps, "recording");
        Ok(rec)
    }

    /// Changes the record of the file at `path`, writes it beside the file,
    /// and answers it.
    fn update(&self, path: &Path, change: impl FnOnce(&mut Recording)) -> Recording {
        let mut entries = self.lock();
        let Some(e) = entries.iter_mut().find(|e| e.path == path) else {
            unreachable!("a running recording stays listed")
        };
        change(&mut e.rec);
        if e.rec.state != RecordingState::Recording {
            e.stop = None;
        }
        save(&e.path, &e.rec);
        current(e)
    }

    /// Stops screen `screen`'s running recording and answers it once its
    /// file is complete; `conflict` when none runs there, changing nothing.
    pub async fn stop(&self, screen: u8, reason: StopReason) -> Result<Recording, ApiError> {
        let (mut done, file) = {
            let entries = self.lock();
            let Some(e) = entries.iter().find(|e| running(e) && e.rec.screen == screen) else {
                return Err(err(
                    ErrorCode::Conflict,
                    format!("no recording is running on screen {screen}"),
                )
                .with_hint(
                    "GET /v1/recordings lists the recordings; POST /v1/recordings starts one",
                ));
            };
            if let Some(stop) = &e.stop {
                let _ = stop.send(reason);
            }
            (e.done.clone(), e.rec.file.clone())
        };
        let _ = done.wait_for(|d| *d).await;
        self.list()
            .into_iter()
            .find(|r| r.file == file)
            .ok_or_else(|| err(ErrorCode::Internal, "the recording went away"))
    }

    /// Stops every running recording (the box is stopping) and waits for
    /// their files; no recording starts after.
    pub async fn stop_all(&self) {
        self.closing.store(true, Ordering::SeqCst);
        let screens: Vec<u8> =
            self.lock().iter().filter(|e| running(e)).map(|e| e.rec.screen).collect();
        for screen in screens {
            let _ = self.stop(screen, StopReason::BoxStopping).await;
        }
    }

    /// The path of `file` when it is listed, and whether it is running.
    pub fn file(&self, file: &str) -> Result<(PathBuf, bool), ApiError> {
        let entries = self.lock();
        let e = entries.iter().find(|e| e.rec.file == file).ok_or_else(|| unknown(file))?;
        Ok((e.path.clone(), running(e)))
    }

    /// Removes a recording that is not running, and its file.
    pub fn remove(&self, file: &str) -> Result<(), ApiError> {
        let mut entries = self.lock();
        let i = entries.iter().position(|e| e.rec.file == file).ok_or_else(|| unknown(file))?;
        if running(&entries[i]) {
            return Err(err(ErrorCode::Conflict, format!("{file} is still being recorded"))
                .with_hint("stop it first (POST /v1/recordings/stop)"));
        }
        let e = entries.remove(i);
        let _ = std::fs::remove_file(&e.path);
        let _ = std::fs::remove_file(sidecar(&e.path));
        Ok(())
    }

    /// Records every screen for the box's whole life: each screen's
    /// recording starts once its display answers.
    pub async fn record_all(self: Arc<Self>, supervisor: Arc<crate::supervisor::Supervisor>) {
        for screen in 0..u8::try_from(self.desktop.len()).unwrap_or(u8::MAX) {
            loop {
                if self.closing.load(Ordering::SeqCst) {
                    return;
                }
                supervisor.wait_display(screen, Duration::from_secs(5)).await;
                match self.start(RecordingStart { screen, fps: None }).await {
                    Ok(_) => break,
                    Err(e) if e.code == ErrorCode::NotReady => {
                        tokio::time::sleep(Duration::from_millis(500)).await;
                    }
                    Err(e) => {
                        tracing::warn!(screen, error = %e.message, "the box's recording did not start");
                        break;
                    }
                }
            }
        }
    }
}

fn running(e: &Entry) -> bool {
    e.rec.state == RecordingState::Recording
}

fn unknown(file: &str) -> ApiError {
    err(ErrorCode::NotFound, format!("there is no recording {file:?}"))
        .with_hint("GET /v1/recordings lists the recordings and their files")
}

/// The record with a running file's size as it is now.
fn current(e: &Entry) -> Recording {
    let mut rec = e.rec.clone();
    if running(e) {
        rec.bytes = std::fs::metadata(&e.path).map_or(0, |m| m.len());
    }
    rec
}

/// `screen{N}-{UTC time}.mp4`, unused in `dir` and the list.
fn unused_name(dir: &Path, screen: u8, entries: &[Entry]) -> String {
    let stamp = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let stamp: String = stamp.chars().filter(char::is_ascii_alphanumeric).collect();
    (1..)
        .map(|n| match n {
            1 => format!("screen{screen}-{stamp}.mp4"),
            n => format!("screen{screen}-{stamp}-{n}.mp4"),
        })
        // A name with anything at it, a dangling link included, is taken.
        .find(|f| {
            std::fs::symlink_metadata(dir.join(f)).is_err()
                && !entries.iter().any(|e| &e.rec.file == f)
        })
        .unwrap_or_default()
}

fn sidecar(path: &Path) -> PathBuf {
    path.with_extension("json")
}

/// Writes a record beside its file (to a new temporary file, then renamed;
/// a link at either name is replaced, never followed: [`crate::nofollow`]).
fn save(path: &Path, rec: &Recording) {
    let side = sidecar(path);
    let (dir, name) = (side.parent().unwrap_or(Path::new("/")), side.file_name());
    let name = name.map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let written = serde_json::to_vec_pretty(rec)
        .map_err(std::io::Error::other)
        .and_then(|bytes| crate::nofollow::replace(dir, &name, &bytes, 0o644));
    if let Err(e) = written {
        tracing::warn!(file = %side.display(), error = %e, "could not keep a recording's record");
    }
}

/// The recordings a previous run of the box left in `dir`, oldest first.
fn load(dir: &Path) -> Vec<Entry> {
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut entries: Vec<Entry> = read
        .flatten()
        .map(|d| d.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|side| {
            let mut rec: Recording = serde_json::from_slice(&std::fs::read(&side).ok()?).ok()?;
            let path = side.with_extension("mp4");
            let meta = std::fs::metadata(&path).ok()?;
            rec.bytes = meta.len();
            if rec.state == RecordingState::Recording {
                rec.state = RecordingState::Finished;
                rec.stopped_by = Some(StopReason::BoxStopping);
                rec.ended_at =
                    Some(now_rfc3339(meta.modified().unwrap_or_else(|_| SystemTime::now())));
                save(&path, &rec);
            }
            let (_, done) = watch::channel(true);
            Some(Entry { rec, path, stop: None, done })
        })
        .collect();
    entries.sort_by(|a, b| a.rec.started_at.cmp(&b.rec.started_at));
    entries
}
