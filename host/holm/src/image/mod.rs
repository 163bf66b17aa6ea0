//! The box image: the bundled Dockerfile, the app catalogue, and building the
//! image on a Docker engine.
//!
//! A box image is the desktop of its display profile (Xvfb, fluxbox, x11vnc;
//! or headless sway and wayvnc; with Chromium and fonts), the apps and
//! packages the box asked for, and the static guest agent as the entrypoint.
//! holm builds it itself, on the runtime's engine, from
//! `images/x11/Dockerfile` or `images/wayland/Dockerfile`,
//! `images/apps.toml` and [`GUEST_BINARY`]; nothing
//! is pulled from a registry but the base, and even the base can be made
//! locally with `debootstrap` when no registry is reachable (see
//! [`ensure_base`]).
//!
//! The flow a runtime, `holmd` or the CLI follows:
//!
//! 1. Describe the image with an [`ImageRequest`] (apps from the catalogue and
//!    Debian packages). [`ImageRequest::normalized`] checks it and puts it in
//!    one canonical order, so the same set always gives the same image.
//! 2. Call [`ensure_image`]. It makes sure the base exists, computes the tag
//!    (`holm-box:<hash>`, see [`plan`]), answers at once when the engine has
//!    that image, and otherwise builds it, streaming [`Progress`] to the
//!    caller. Concurrent calls for the same tag in one process build once.
//! 3. Start boxes from the tag. [`list_images`] shows what was built.
//!
//! Runtimes that cannot take a build context (Daytona, Modal) can use
//! [`plan`] for the rendered Dockerfile and the labels and send them their
//! own way.

mod base;
mod catalog;
mod engine;
mod plan;
mod prune;
mod request;

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

pub use base::{BASE_IMAGE, ensure_base, ensure_base_as};
pub use catalog::{App, Catalog, catalog};
pub use engine::{ImageSummary, ensure_image, list_images};
pub use plan::{
    BuildPlan, IMAGE_REPOSITORY, LABEL_APPS, LABEL_BASE, LABEL_DISPLAY, LABEL_GUEST, LABEL_HASH,
    LABEL_IMAGE, LABEL_PACKAGES, image_tag, plan,
};
pub use prune::{Prune, Pruned, prune};
pub use request::ImageRequest;

/// The static `holm-guest` binary (x86_64 Linux, no program interpreter) that
/// every box image runs as its entrypoint.
///
/// `build.rs` builds it with the workspace's `guest` profile, or takes the
/// file named by `HOLM_GUEST_BIN` at compile time.
pub static GUEST_BINARY: &[u8] = include_bytes!(env!("HOLM_GUEST_EMBED"));

/// The hex SHA-256 of [`GUEST_BINARY`], computed once: the tag of every image
/// covers it, and hashing ~10 MB on every call would be waste.
pub fn guest_sha256() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| hex::encode(Sha256::digest(GUEST_BINARY)))
}

/// What an image operation reports while it works.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Progress {
    /// A message from holm about what it does next and why.
    Status(String),
    /// One line of output from the engine: a build step, apt's output, a pull.
    Output(String),
    /// The image already existed on the engine; nothing was built.
    Reused {
        /// The image's tag.
        tag: String,
    },
    /// The image was built (or, for the base, pulled or made) and tagged.
    Built {
        /// The image's tag.
        tag: String,
    },
}

impl Progress {
    /// The line a report of this shows to people.
    pub fn into_line(self) -> String {
        match self {
            Self::Status(m) | Self::Output(m) => m,
            Self::Built { tag } => format!("built {tag}"),
            Self::Reused { tag } => format!("{tag} exists; nothing to build"),
        }
    }
}

/// Why an image operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImageError {
    /// An app name that is not in the catalogue.
    #[error("unknown app {name:?}: the apps are {known}")]
    UnknownApp {
        /// The name asked for.
        name: String,
        /// The catalogue's names, comma-separated.
        known: String,
    },
    /// A package name that is not a Debian package name.
    #[error(
        "invalid package name {name:?}: a debian package name has two or more characters, lowercase \
         letters, digits, '+', '-' and '.', and starts with a letter or digit"
    )]
    InvalidPackage {
        /// The name asked for.
        name: String,
    },
    /// The engine refused or failed a request.
    #[error("docker engine: {action}: {source}")]
    Engine {
        /// What holm asked the engine to do.
        action: String,
        /// The engine's or the client's error.
        #[source]
        source: bollard::errors::Error,
    },
    /// A step of the image build failed.
    #[error("building {tag} failed: {message}{hint}\n{output}")]
    BuildFailed {
        /// The tag that was being built.
        tag: String,
        /// The engine's error, such as "The command '/bin/sh -c …' returned a
        /// non-zero code: 100".
        message: String,
        /// A hint, when holm knows a likely cause (empty, or starting with
        /// "; ").
        hint: String,
        /// The last lines of the build's output, which carry the failing
        /// command's own error.
        output: String,
    },
    /// The base image is missing, cannot be pulled, and holm cannot make it.
    #[error("{base} is missing and cannot be pulled ({pull_error}); {fix}")]
    BaseUnavailable {
        /// The base image's tag.
        base: String,
        /// Why the pull failed.
        pull_error: String,
        /// What the user can do.
        fix: String,
    },
    /// `debootstrap` ran and failed.
    #[error("debootstrap failed ({status}): {output}")]
    Debootstrap {
        /// Its exit status.
        status: String,
        /// The last lines of its output.
        output: String,
    },
    /// A local file operation failed.
    #[error("{action}: {source}")]
    Io {
        /// What holm was doing.
        action: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl ImageError {
    /// The request field this error is about, when it is about one.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            Self::UnknownApp { .. } => Some("apps"),
            Self::InvalidPackage { .. } => Some("packages"),
            _ => None,
        }
    }

    fn engine(action: impl Into<String>) -> impl FnOnce(bollard::errors::Error) -> Self {
        let action = action.into();
        move |source| Self::Engine { action, source }
    }

    fn io(action: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let action = action.into();
        move |source| Self::Io { action, source }
    }
}

/// The result type of this module.
pub type Result<T, E = ImageError> = std::result::Result<T, E>;

/// Keeps the last lines of a long output (a build, debootstrap) so an error can
/// quote the lines that explain it without holding the whole log.
#[derive(Debug)]
struct Tail {
    lines: std::collections::VecDeque<String>,
    max: usize,
}

impl Tail {
    fn new(max: usize) -> Self {
        Self { lines: std::collections::VecDeque::with_capacity(max), max }
    }

    fn push(&mut self, line: &str) {
        if self.lines.len() == self.max {
            self.lines.pop_front();
        }
        self.lines.push_back(line.to_owned());
    }

    fn joined(&self) -> String {
        self.lines.iter().map(String::as_str).collect::<Vec<_>>().join("\n")
    }
}

/// The lock that makes concurrent work on `key` (such as one vendor image)
/// happen once: later callers wait for the first and then find its result.
pub(crate) fn single_flight_lock(key: &str) -> std::sync::Arc<tokio::sync::Mutex<()>> {
    single_flight::lock_for(key)
}

/// Per-key locks for single-flight work: concurrent callers with the same key
/// (an image tag) take turns, so the second finds the first's result instead
/// of building it again. Entries are weak, so finished keys cost nothing.
mod single_flight {
    use std::collections::HashMap;
    use std::sync::{Arc, LazyLock, Mutex, Weak};

    static LOCKS: LazyLock<Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>> =
        LazyLock::new(Default::default);

    /// The lock for `key`, shared by everyone who asks while it is alive.
    pub(super) fn lock_for(key: &str) -> Arc<tokio::sync::Mutex<()>> {
        // A poisoned map only means another thread panicked while inserting;
        // the map itself is still consistent, so keep using it.
        let mut map = LOCKS.lock().unwrap_or_else(|e| e.into_inner());
        map.retain(|_, weak| weak.strong_count() > 0);
        if let Some(lock) = map.get(key).and_then(Weak::upgrade) {
            return lock;
        }
        let lock = Arc::new(tokio::sync::Mutex::new(()));
        map.insert(key.to_owned(), Arc::downgrade(&lock));
        lock
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads the program headers of a 64-bit little-endian ELF file and
    /// returns their types.
    fn program_header_types(elf: &[u8]) -> Vec<u32> {
        assert!(elf.len() > 64, "too short for an ELF header");
        assert_eq!(&elf[..4], b"\x7fELF", "not an ELF file");
        assert_eq!(elf[4], 2, "not a 64-bit ELF file");
        assert_eq!(elf[5], 1, "not a little-endian ELF file");
        let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap());
        assert_eq!(u16_at(18), 62, "not an x86_64 ELF file");
        let phoff = usize::try_from(u64_at(32)).unwrap();
        let phentsize = usize::from(u16_at(54));
        let phnum = usize::from(u16_at(56));
        (0..phnum).map(|i| u32_at(phoff + i * phentsize)).collect()
    }

    #[test]
    fn the_embedded_guest_is_a_static_x86_64_executable() {
        const PT_LOAD: u32 = 1;
        const PT_INTERP: u32 = 3;
        let types = program_header_types(GUEST_BINARY);
        assert!(types.contains(&PT_LOAD), "no loadable segment: {types:?}");
        // A dynamically linked program names its loader in PT_INTERP; a static
        // one (static-pie included) has none, so it runs in any image.
        assert!(!types.contains(&PT_INTERP), "the guest is dynamically linked: {types:?}");
    }

    #[test]
    fn guest_hash_is_hex_sha256() {
        assert_eq!(guest_sha256().len(), 64);
        assert!(guest_sha256().bytes().all(|b| b.is_ascii_hexdigit()));
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let mut tail = Tail::new(2);
        for line in ["a", "b", "c"] {
            tail.push(line);
        }
        assert_eq!(tail.joined(), "b\nc");
    }

    #[test]
    fn single_flight_shares_one_lock_per_key() {
        let a = single_flight::lock_for("k");
        let b = single_flight::lock_for("k");
        let c = single_flight::lock_for("other");
        assert!(std::sync::Arc::ptr_eq(&a, &b));
        assert!(!std::sync::Arc::ptr_eq(&a, &c));
    }
}
