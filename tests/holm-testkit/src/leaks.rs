//! The secret scan of the suite: every in-process server's secrets are
//! looked for in everything written while it lived.
//!
//! - [`init_tracing`] gives each test process one log file,
//!   `target/holm-logs/<test binary>-<pid>.log`, with every event of holm's
//!   own crates at `trace` (the most verbose) and of other crates at
//!   `info`, beside the usual output libtest captures.
//! - When a [`crate::TestServer`] ends (its `Drop`), [`Scan`] gathers the
//!   secrets it knows: its token, its server key, the vendor keys it was
//!   given ([`crate::TestServer::remember`]), and from every box record it
//!   holds the box secret, the bridge secret, the viewer key and each
//!   viewer URL's token. It looks for each in the part of the process's
//!   log written since the server started, in its store's files but the
//!   box records (traces included), and in the container log of each of
//!   its boxes still there. A finding names the secret's kind, the box and
//!   where it was found (a file and a line), never the secret.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// The process's log file, once [`init_tracing`] made it.
static LOG: OnceLock<Option<PathBuf>> = OnceLock::new();

/// A writer that appends to the log file (each event in one write).
struct Appender(Mutex<std::fs::File>);

impl std::io::Write for &Appender {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).flush()
    }
}

/// Installs the process's tracing: libtest's captured output at `RUST_LOG`
/// (or `holm=info,holmd=info`), and the log file. Once per process; a
/// subscriber someone else installed first is left alone (then there is
/// no file, and [`log_offset`] says so).
pub fn init_tracing() {
    LOG.get_or_init(|| {
        let dir = crate::target_dir().join("holm-logs");
        std::fs::create_dir_all(&dir).ok()?;
        let exe = std::env::current_exe().ok()?;
        let name = exe.file_name()?.to_string_lossy().into_owned();
        let path = dir.join(format!("{name}-{}.log", std::process::id()));
        let file = std::fs::File::options().create(true).append(true).open(&path).ok()?;
        let appender: &'static Appender = Box::leak(Box::new(Appender(Mutex::new(file))));
        let captured = tracing_subscriber::fmt::layer().with_test_writer().with_filter(
            EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| EnvFilter::new("holm=info,holmd=info")),
        );
        // `holm` names every crate of holm's (`holmd`, `holm_client`, ...):
        // a directive matches targets that start with it.
        let file = tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(move || appender)
            .with_filter(EnvFilter::new("holm=trace,info"));
        tracing_subscriber::registry().with(captured).with(file).try_init().ok()?;
        Some(path)
    });
}

/// The process's log file and how long it is now: where a server's part of
/// it starts.
pub fn log_offset() -> Option<(PathBuf, u64)> {
    let path = LOG.get()?.clone()?;
    let len = std::fs::metadata(&path).ok()?.len();
    Some((path, len))
}

/// Secrets, and the texts to look for them in.
#[derive(Default)]
pub struct Scan {
    secrets: Vec<(String, String)>,
    texts: Vec<(String, String)>,
}

impl Scan {
    /// Looks for `value`, called `kind` in a finding. Values shorter than
    /// 16 characters would match by chance and are not looked for.
    pub fn secret(&mut self, kind: impl Into<String>, value: &str) {
        if value.len() >= 16 {
            self.secrets.push((kind.into(), value.to_owned()));
        }
    }

    /// The secrets of a box record: the box secret, the bridge secret, the
    /// viewer key.
    pub fn record(&mut self, r: &holmd::store::BoxRecord) {
        self.secret(format!("the box secret of {}", r.id), &r.secret);
        if let Some(s) = &r.bridge_secret {
            self.secret(format!("the bridge secret of {}", r.id), s);
        }
        if let Some(s) = &r.viewer_key {
            self.secret(format!("the viewer key of {}", r.id), s);
        }
    }

    /// Looks in `text`, called `place` in a finding.
    pub fn text(&mut self, place: impl Into<String>, text: String) {
        self.texts.push((place.into(), text));
    }

    /// Looks in the file at `path` from byte `from` on.
    pub fn file_from(&mut self, path: &Path, from: u64) {
        let Ok(bytes) = std::fs::read(path) else { return };
        let from = usize::try_from(from).unwrap_or(usize::MAX).min(bytes.len());
        // Line numbers count from the start of the file.
        let skipped = bytecount(&bytes[..from]);
        let text = String::from_utf8_lossy(&bytes[from..]).into_owned();
        self.texts.push((format!("{} (after line {skipped})", path.display()), text));
    }

    /// Looks in every file under `dir` but box records (`boxes/*.json`,
    /// which keep the box's secrets by design, and `boxes/.*.json.tmp`, a
    /// record the store is writing at that moment before it renames it).
    pub fn store_dir(&mut self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let record = path.parent().is_some_and(|p| p.ends_with("boxes"))
                && (name.ends_with(".json") || name.ends_with(".json.tmp"));
            if path.is_dir() {
                self.store_dir(&path);
            } else if !record && let Ok(bytes) = std::fs::read(&path) {
                self.texts
                    .push((path.display().to_string(), String::from_utf8_lossy(&bytes).into()));
            }
        }
    }

    /// Looks in the container log of every container labelled with
    /// `server_name`, on Docker and on podman (where its command answers).
    pub fn container_logs(&mut self, server_name: &str) {
        let label = format!("label={}={server_name}", holm::runtime::LABEL_SERVER);
        for engine in ["docker", "podman"] {
            let Ok(out) = std::process::Command::new(engine)
                .args(["ps", "-a", "--filter", &label, "--format", "{{.Names}}"])
                .output()
            else {
                continue;
            };
            for name in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                if let Ok(log) = std::process::Command::new(engine).args(["logs", name]).output() {
                    let text = String::from_utf8_lossy(&log.stdout).into_owned()
                        + &String::from_utf8_lossy(&log.stderr);
                    self.texts.push((format!("the container log of {name} ({engine})"), text));
                }
            }
        }
    }

    /// What was found: for each secret in each text, its kind and where
    /// (the line, counted in the text), never the value.
    pub fn findings(&self) -> Vec<String> {
        let mut found = Vec::new();
        for (place, text) in &self.texts {
            for (kind, value) in &self.secrets {
                if let Some(at) = text.find(value.as_str()) {
                    let line = bytecount(&text.as_bytes()[..at]) + 1;
                    found.push(format!("{kind} is in {place}, line {line}"));
                }
            }
        }
        found
    }
}

impl std::fmt::Debug for Scan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The kinds and places, never the values.
        let kinds: Vec<&str> = self.secrets.iter().map(|(k, _)| k.as_str()).collect();
        let places: Vec<&str> = self.texts.iter().map(|(p, _)| p.as_str()).collect();
        f.debug_struct("Scan").field("secrets", &kinds).field("texts", &places).finish()
    }
}

/// Newlines in `bytes`.
fn bytecount(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::Scan;

    #[test]
    fn a_finding_names_the_kind_and_the_place_and_never_the_value() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("a.log");
        let secret = "0123456789abcdef0123456789abcdef";
        std::fs::write(&log, format!("one\ntwo {secret}\nthree\n")).unwrap();
        let mut scan = Scan::default();
        scan.secret("the box secret of box_x", secret);
        scan.secret("too short", "abc");
        scan.file_from(&log, 0);
        scan.text("a clean text", "nothing here abc".into());
        let found = scan.findings();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("the box secret of box_x is in "), "{found:?}");
        assert!(found[0].ends_with("a.log (after line 0), line 2"), "{found:?}");
        assert!(!found[0].contains(secret) && !format!("{scan:?}").contains(secret));
        // Read from an offset, lines still count from the file's start.
        let mut scan = Scan::default();
        scan.secret("s", secret);
        scan.file_from(&log, 4);
        assert!(scan.findings()[0].ends_with("(after line 1), line 1"), "{:?}", scan.findings());
        let mut scan = Scan::default();
        scan.secret("s", secret);
        scan.file_from(&log, 10);
        assert!(scan.findings().is_empty());
    }
}
