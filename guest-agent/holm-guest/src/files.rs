//! Files in the box: read and write whole files as streams, list, stat, make
//! directories, remove and rename.
//!
//! Paths are absolute; nothing is taken relative to a working directory.
//! Every error names the path it is about and has one of the file codes
//! (`file_not_found`, `is_a_directory`, `not_a_directory`,
//! `permission_denied`, `already_exists`, `directory_not_empty`).
//!
//! A write never leaves a half-written file at the path: the body goes into a
//! temporary file in the same directory, which is flushed to disk and then
//! renamed over the path. Listing and copying walk many entries, so they run
//! as one blocking task with `std::fs` rather than as one `tokio::fs` hop per
//! entry.

use std::ffi::OsStr;
use std::fs::Metadata;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use holm_proto::guest::{FileInfo, FileStat, FileType, Page};
use holm_proto::{ApiError, ErrorCode, Issue};
use tokio::io::AsyncWriteExt;

use holm_http::error::Error;

/// How deep a listing goes by default.
pub const DEFAULT_DEPTH: u32 = 1;
/// How deep a listing may go.
pub const MAX_DEPTH: u32 = 32;
/// The most entries one page of a listing holds, and the default.
pub const MAX_LIST: u32 = 10_000;
/// The mode of a new file when the request gives none.
pub const DEFAULT_MODE: u32 = 0o644;

/// Checks that `value`, the field `field` of a request, is an absolute path.
/// A problem is added to `issues`.
pub fn absolute(field: &str, value: &str, issues: &mut Vec<Issue>) -> PathBuf {
    let problem = if value.is_empty() {
        Some("is empty; give an absolute path such as /root/notes.txt".to_owned())
    } else if value.contains('\0') {
        Some("contains a NUL byte".to_owned())
    } else if !value.starts_with('/') {
        Some(format!(
            "must be an absolute path (starting with /), not {value:?}; paths are not taken relative to any directory"
        ))
    } else {
        None
    };
    if let Some(problem) = problem {
        issues.push(Issue { path: field.to_owned(), problem });
    }
    PathBuf::from(value)
}

/// Turns `issues` into the one `invalid_request` answer, with a hint that
/// shows the absolute form of a relative path.
pub fn refuse(issues: Vec<Issue>, home: &Path, relative: Option<&str>) -> Error {
    let mut err = ApiError::invalid_fields(issues);
    if let Some(rel) = relative.filter(|r| !r.is_empty() && !r.starts_with('/')) {
        err.hint = Some(format!(
            "use an absolute path; in the home directory that is {}",
            home.join(rel).display()
        ));
    }
    err.into()
}

/// Parses a mode such as `644`, `0755` or `0o600`.
pub fn parse_mode(mode: &str) -> Result<u32, Issue> {
    let digits = mode.strip_prefix("0o").unwrap_or(mode);
    u32::from_str_radix(digits, 8)
        .ok()
        .filter(|m| !digits.is_empty() && digits.len() <= 5 && *m <= 0o7777)
        .ok_or_else(|| Issue {
            path: "mode".into(),
            problem: format!("must be permission bits in octal, such as 644 or 755, not {mode:?}"),
        })
}

fn error_with(code: ErrorCode, path: &str, what: &str) -> Error {
    ApiError::new(code, format!("{path}: {what}"))
        .with_details(serde_json::json!({ "path": path }))
        .into()
}

fn rfc3339(t: std::time::SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

/// What a path is, from metadata that did not follow a final symlink.
fn info_from(path: String, meta: &Metadata, symlink_target: Option<String>) -> FileInfo {
    let ft = meta.file_type();
    let kind = if ft.is_symlink() {
        FileType::Symlink
    } else if ft.is_dir() {
        FileType::Dir
    } else if ft.is_file() {
        FileType::File
    } else {
        FileType::Other
    };
    let name = Path::new(&path)
        .file_name()
        .map_or_else(|| "/".to_owned(), |n| n.to_string_lossy().into_owned());
    FileInfo {
        name,
        kind,
        size: meta.len(),
        mode: format!("{:o}", meta.permissions().mode() & 0o7777),
        modified: meta.modified().ok().map(rfc3339),
        symlink_target,
        path,
    }
}

/// The entry at `path` itself (a symlink is not followed).
async fn entry(path: &Path, shown: &str) -> Result<FileInfo, Error> {
    let meta = tokio::fs::symlink_metadata(path).await.map_err(|e| Error::io(shown, &e))?;
    let target = if meta.file_type().is_symlink() {
        tokio::fs::read_link(path).await.ok().map(|t| t.to_string_lossy().into_owned())
    } else {
        None
    };
    Ok(info_from(shown.to_owned(), &meta, target))
}

/// `GET /v1/files/stat`: the entry, or `exists: false`.
pub async fn stat(path: &Path, shown: &str) -> Result<FileStat, Error> {
    match entry(path, shown).await {
        Ok(info) => Ok(FileStat { exists: true, info: Some(info) }),
        Err(e) if e.0.code == ErrorCode::FileNotFound || e.0.code == ErrorCode::NotADirectory => {
            // A path under a file cannot exist either.
            Ok(FileStat { exists: false, info: None })
        }
        Err(e) => Err(e),
    }
}

/// A file opened for reading, and how many bytes to send.
#[derive(Debug)]
pub struct Reading {
    /// The open file.
    pub file: tokio::fs::File,
    /// Its size, when it is known; files such as those in `/proc` say 0 and
    /// are read to their end instead.
    pub len: Option<u64>,
}

impl Reading {
    /// The file's bytes as a streamed `application/octet-stream` answer,
    /// with its length when it is known.
    pub fn response(self) -> axum::response::Response {
        use axum::http::{HeaderValue, header};
        use axum::response::IntoResponse as _;
        use tokio::io::AsyncReadExt as _;
        let body = self.file.take(self.len.unwrap_or(u64::MAX));
        let stream = tokio_util::io::ReaderStream::with_capacity(body, 64 * 1024);
        let mut response = axum::body::Body::from_stream(stream).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
        if let Some(len) = self.len {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
        }
        response
    }
}

/// Opens a regular file (following symlinks) for `GET /v1/files/content`.
pub async fn open(path: &Path, shown: &str) -> Result<Reading, Error> {
    let file = tokio::fs::File::open(path).await.map_err(|e| Error::io(shown, &e))?;
    let meta = file.metadata().await.map_err(|e| Error::io(shown, &e))?;
    if meta.is_dir() {
        return Err(error_with(ErrorCode::IsADirectory, shown, "is a directory, not a file")
            .hint("list it with GET /v1/files/list"));
    }
    if !meta.is_file() {
        return Err(error_with(
            ErrorCode::Unsupported,
            shown,
            "is not a regular file (a device, pipe or socket); only regular files can be read",
        ));
    }
    Ok(Reading { file, len: (meta.len() > 0).then_some(meta.len()) })
}

/// Removes a temporary file unless the write that made it succeeded.
struct TempFile(Option<PathBuf>);

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            // A failed write must not leave its debris behind; this is one
            // small unlink.
            let _ = std::fs::remove_file(p);
        }
    }
}

/// A name for a temporary file beside `name`, unique within this guest.
fn temp_name(name: &OsStr) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = name.to_string_lossy();
    // Keep the whole name under the 255-byte limit.
    let mut end = name.len().min(200);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!(".{}.holm-{}-{n}.tmp", &name[..end], std::process::id())
}

/// Makes the missing parents of a path. A parent that is a file is named.
async fn make_parents(parent: &Path) -> Result<(), Error> {
    match tokio::fs::create_dir_all(parent).await {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(error_with(
            ErrorCode::NotADirectory,
            &parent.to_string_lossy(),
            "is not a directory",
        )),
        Err(e) => Err(Error::io(&parent.to_string_lossy(), &e)),
    }
}

/// `PUT /v1/files/content`: streams `body` into place atomically and answers
/// the new entry. `mode` defaults to the replaced file's mode, or 644.
pub async fn write<S, E>(
    path: &Path,
    shown: &str,
    mode: Option<u32>,
    mut body: S,
) -> Result<FileInfo, Error>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let Some(name) = path.file_name().filter(|_| !shown.ends_with('/')) else {
        return Err(error_with(
            ErrorCode::InvalidRequest,
            shown,
            "names a directory; give the path of a file, such as /root/notes.txt",
        ));
    };
    // Links among the directories on the way pass the same rule as one at
    // the file's own name (`nofollow::links_on_the_way`).
    if let Err(link) = crate::nofollow::links_on_the_way(path) {
        let why = format!(
            "goes through {}, a symbolic link its owner could not write through; not followed",
            link.display()
        );
        return Err(error_with(ErrorCode::PermissionDenied, shown, &why));
    }
    // Writing to a symlink writes the file it points to, as an editor would,
    // when the link's owner may write there too (`nofollow::may_follow`).
    let mut target = path.to_path_buf();
    if let Ok(link) = tokio::fs::symlink_metadata(path).await
        && link.file_type().is_symlink()
        && let Ok(real) = tokio::fs::canonicalize(path).await
    {
        let owner = tokio::fs::metadata(&real).await.map(|m| m.uid()).unwrap_or(0);
        if !crate::nofollow::may_follow(link.uid(), owner) {
            let why = "is a symbolic link to a file its owner does not own; not followed";
            return Err(error_with(ErrorCode::PermissionDenied, shown, why));
        }
        target = real;
    }
    let name = target.file_name().unwrap_or(name).to_owned();
    let existing = match tokio::fs::metadata(&target).await {
        Ok(m) if m.is_dir() => {
            return Err(error_with(ErrorCode::IsADirectory, shown, "is a directory"));
        }
        Ok(m) => Some(m),
        Err(_) => None,
    };
    let parent = target.parent().unwrap_or(Path::new("/")).to_path_buf();
    make_parents(&parent).await?;
    let tmp = parent.join(temp_name(&name));
    let mut file = tokio::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .await
        .map_err(|e| Error::io(shown, &e))?;
    let guard = TempFile(Some(tmp.clone()));
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| {
            Error::from(ApiError::invalid(format!("the request body ended early: {e}")))
        })?;
        file.write_all(&chunk).await.map_err(|e| Error::io(shown, &e))?;
    }
    file.flush().await.map_err(|e| Error::io(shown, &e))?;
    let mode =
        mode.or(existing.as_ref().map(|m| m.permissions().mode() & 0o7777)).unwrap_or(DEFAULT_MODE);
    file.set_permissions(std::fs::Permissions::from_mode(mode))
        .await
        .map_err(|e| Error::io(shown, &e))?;
    let std_file = file.into_std().await;
    let owner = existing.as_ref().map(|m| (m.uid(), m.gid()));
    tokio::task::spawn_blocking(move || -> io::Result<()> {
        if let Some((uid, gid)) = owner {
            // Replacing a file keeps its owner; where that is not allowed the
            // new file keeps ours.
            let _ = std::os::unix::fs::fchown(&std_file, Some(uid), Some(gid));
        }
        std_file.sync_all()
    })
    .await
    .map_err(Error::internal)?
    .map_err(|e| Error::io(shown, &e))?;
    tokio::fs::rename(&tmp, &target).await.map_err(|e| Error::io(shown, &e))?;
    std::mem::forget(guard);
    // The rename is durable once the directory is; a failure here does not
    // undo the write.
    if let Ok(dir) = tokio::fs::File::open(&parent).await {
        let _ = dir.sync_all().await;
    }
    let meta = tokio::fs::metadata(&target).await.map_err(|e| Error::io(shown, &e))?;
    Ok(info_from(shown.to_owned(), &meta, None))
}

/// `GET /v1/files/list`: the entries under `root`, in tree order (each
/// directory's entries sorted by name, each followed by what is inside it),
/// `depth` levels deep, symlinks not followed. At most `limit` entries, after
/// `cursor` (a path from `next_cursor`).
pub async fn list(
    root: PathBuf,
    shown: String,
    depth: u32,
    limit: u32,
    cursor: Option<PathBuf>,
) -> Result<Page<FileInfo>, Error> {
    tokio::task::spawn_blocking(move || {
        list_blocking(&root, &shown, depth, limit, cursor.as_deref())
    })
    .await
    .map_err(Error::internal)?
}

fn list_blocking(
    root: &Path,
    shown: &str,
    depth: u32,
    limit: u32,
    cursor: Option<&Path>,
) -> Result<Page<FileInfo>, Error> {
    let meta = std::fs::metadata(root).map_err(|e| Error::io(shown, &e))?;
    if !meta.is_dir() {
        return Err(error_with(ErrorCode::NotADirectory, shown, "is not a directory").hint(
            "read a file with GET /v1/files/content, or look at it with GET /v1/files/stat",
        ));
    }
    let base = if shown.len() > 1 { shown.trim_end_matches('/') } else { shown };
    let mut walk = Walk {
        limit: usize::try_from(limit).unwrap_or(usize::MAX),
        cursor,
        out: Vec::new(),
        more: false,
    };
    // The root itself must be readable; below it, what cannot be read is skipped.
    let entries = read_sorted(root).map_err(|e| Error::io(shown, &e))?;
    walk.dir(root, base, entries, 1, depth);
    let next_cursor = if walk.more { walk.out.last().map(|i| i.path.clone()) } else { None };
    Ok(Page { data: walk.out, next_cursor })
}

fn read_sorted(dir: &Path) -> io::Result<Vec<(std::ffi::OsString, std::fs::FileType)>> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        let Ok(ft) = entry.file_type() else { continue };
        entries.push((entry.file_name(), ft));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

struct Walk<'a> {
    limit: usize,
    cursor: Option<&'a Path>,
    out: Vec<FileInfo>,
    /// Entries remain after the last one taken.
    more: bool,
}

impl Walk<'_> {
    /// Walks one directory. `Path`'s ordering compares component by
    /// component, which is exactly tree order, so a cursor is resumed by
    /// skipping every entry up to it, and whole subtrees that lie before it.
    fn dir(
        &mut self,
        dir: &Path,
        shown: &str,
        entries: Vec<(std::ffi::OsString, std::fs::FileType)>,
        level: u32,
        depth: u32,
    ) {
        for (name, ft) in entries {
            if self.more {
                return;
            }
            let full = dir.join(&name);
            let lossy = name.to_string_lossy();
            let shown_entry =
                if shown == "/" { format!("/{lossy}") } else { format!("{shown}/{lossy}") };
            let (emit, descend) = match self.cursor {
                Some(c) if full.as_path() < c => (false, c.starts_with(&full)),
                Some(c) if full.as_path() == c => (false, true),
                _ => (true, true),
            };
            if emit {
                if self.out.len() == self.limit {
                    self.more = true;
                    return;
                }
                let Ok(meta) = std::fs::symlink_metadata(&full) else { continue };
                let target = if ft.is_symlink() {
                    std::fs::read_link(&full).ok().map(|t| t.to_string_lossy().into_owned())
                } else {
                    None
                };
                self.out.push(info_from(shown_entry.clone(), &meta, target));
            }
            if descend
                && ft.is_dir()
                && level < depth
                && let Ok(children) = read_sorted(&full)
            {
                self.dir(&full, &shown_entry, children, level + 1, depth);
            }
        }
    }
}

/// `POST /v1/files/mkdir`: makes a directory (and its parents, with
/// `parents`, which also accepts one that exists).
pub async fn mkdir(path: &Path, shown: &str, parents: bool) -> Result<FileInfo, Error> {
    let made = if parents {
        tokio::fs::create_dir_all(path).await
    } else {
        tokio::fs::create_dir(path).await
    };
    match made {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let what = if tokio::fs::metadata(path).await.is_ok_and(|m| m.is_dir()) {
                "already exists"
            } else {
                "already exists and is not a directory"
            };
            return Err(error_with(ErrorCode::AlreadyExists, shown, what));
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound && !parents => {
            return Err(error_with(
                ErrorCode::FileNotFound,
                shown,
                "its parent directory does not exist",
            )
            .hint("pass \"parents\": true to make the missing parents too"));
        }
        Err(e) => return Err(Error::io(shown, &e)),
    }
    entry(path, shown).await
}

/// `POST /v1/files/remove`: removes a file, a symlink (not what it points
/// to), an empty directory, or with `recursive` a whole tree.
pub async fn remove(path: &Path, shown: &str, recursive: bool) -> Result<(), Error> {
    if path.components().all(|c| matches!(c, Component::RootDir)) {
        return Err(error_with(
            ErrorCode::InvalidRequest,
            shown,
            "the root directory cannot be removed",
        ));
    }
    let meta = tokio::fs::symlink_metadata(path).await.map_err(|e| Error::io(shown, &e))?;
    let removed = if meta.is_dir() {
        if recursive {
            tokio::fs::remove_dir_all(path).await
        } else {
            tokio::fs::remove_dir(path).await
        }
    } else {
        tokio::fs::remove_file(path).await
    };
    removed.map_err(|e| {
        let err = Error::io(shown, &e);
        if err.0.code == ErrorCode::DirectoryNotEmpty {
            err.hint("pass \"recursive\": true to remove it with everything in it")
        } else {
            err
        }
    })
}

/// `POST /v1/files/rename`: moves `from` to `to`, making `to`'s parents.
/// Without `overwrite` an existing `to` is refused, atomically. Across file
/// systems the entry is copied and the original removed.
pub async fn rename(
    from: &Path,
    from_shown: &str,
    to: &Path,
    to_shown: &str,
    overwrite: bool,
) -> Result<FileInfo, Error> {
    tokio::fs::symlink_metadata(from).await.map_err(|e| Error::io(from_shown, &e))?;
    if let Some(parent) = to.parent() {
        make_parents(parent).await?;
    }
    let result = if overwrite {
        tokio::fs::rename(from, to).await
    } else {
        let (f, t) = (from.to_path_buf(), to.to_path_buf());
        let r = tokio::task::spawn_blocking(move || {
            rustix::fs::renameat_with(
                rustix::fs::CWD,
                &f,
                rustix::fs::CWD,
                &t,
                rustix::fs::RenameFlags::NOREPLACE,
            )
            .map_err(io::Error::from)
        })
        .await
        .map_err(Error::internal)?;
        match r {
            // A file system without RENAME_NOREPLACE: check, then rename.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && !same_or_inside(from, to) => {
                if tokio::fs::symlink_metadata(to).await.is_ok() {
                    Err(io::Error::from(io::ErrorKind::AlreadyExists))
                } else {
                    tokio::fs::rename(from, to).await
                }
            }
            other => other,
        }
    };
    match result {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::CrossesDevices => {
            move_across(from, from_shown, to, to_shown, overwrite).await?;
        }
        Err(e) => return Err(rename_error(&e, from_shown, to_shown, overwrite)),
    }
    entry(to, to_shown).await
}

/// Whether `to` is `from` or inside it: moving a directory into itself.
fn same_or_inside(from: &Path, to: &Path) -> bool {
    to.starts_with(from)
}

fn rename_error(e: &io::Error, from: &str, to: &str, overwrite: bool) -> Error {
    match e.kind() {
        io::ErrorKind::AlreadyExists if !overwrite => {
            error_with(ErrorCode::AlreadyExists, to, "already exists")
                .hint("pass \"overwrite\": true to replace it")
        }
        io::ErrorKind::AlreadyExists
        | io::ErrorKind::IsADirectory
        | io::ErrorKind::NotADirectory
        | io::ErrorKind::DirectoryNotEmpty => {
            let what = match e.kind() {
                io::ErrorKind::IsADirectory => "is a directory; a file cannot replace it",
                io::ErrorKind::NotADirectory => "is not a directory; a directory cannot replace it",
                io::ErrorKind::DirectoryNotEmpty => {
                    "is a directory that is not empty; it cannot be replaced"
                }
                _ => "already exists",
            };
            let code = match e.kind() {
                io::ErrorKind::IsADirectory => ErrorCode::IsADirectory,
                io::ErrorKind::NotADirectory => ErrorCode::NotADirectory,
                io::ErrorKind::DirectoryNotEmpty => ErrorCode::DirectoryNotEmpty,
                _ => ErrorCode::AlreadyExists,
            };
            error_with(code, to, what)
        }
        _ if e.raw_os_error() == Some(libc::EINVAL) => error_with(
            ErrorCode::InvalidRequest,
            from,
            &format!("cannot be moved into itself ({to})"),
        ),
        _ => Error::io(from, e),
    }
}

/// Moves an entry to another file system: copy, then remove the original.
async fn move_across(
    from: &Path,
    from_shown: &str,
    to: &Path,
    to_shown: &str,
    overwrite: bool,
) -> Result<(), Error> {
    let (f, t) = (from.to_path_buf(), to.to_path_buf());
    let (fs_, ts_) = (from_shown.to_owned(), to_shown.to_owned());
    tokio::task::spawn_blocking(move || -> Result<(), Error> {
        let src = std::fs::symlink_metadata(&f).map_err(|e| Error::io(&fs_, &e))?;
        match std::fs::symlink_metadata(&t) {
            Ok(_) if !overwrite => {
                return Err(error_with(ErrorCode::AlreadyExists, &ts_, "already exists")
                    .hint("pass \"overwrite\": true to replace it"));
            }
            Ok(dst) => {
                // rename(2) semantics: a directory replaces only an empty
                // directory, a file replaces only a non-directory.
                match (src.is_dir(), dst.is_dir()) {
                    (true, true) => std::fs::remove_dir(&t).map_err(|e| Error::io(&ts_, &e))?,
                    (false, false) => {}
                    (false, true) => {
                        return Err(error_with(
                            ErrorCode::IsADirectory,
                            &ts_,
                            "is a directory; a file cannot replace it",
                        ));
                    }
                    (true, false) => {
                        return Err(error_with(
                            ErrorCode::NotADirectory,
                            &ts_,
                            "is not a directory; a directory cannot replace it",
                        ));
                    }
                }
            }
            Err(_) => {}
        }
        if src.is_dir() {
            copy_tree(&f, &t).map_err(|e| Error::io(&ts_, &e))?;
            std::fs::remove_dir_all(&f).map_err(|e| Error::io(&fs_, &e))?;
        } else {
            // A file goes beside its target first, then is renamed over it,
            // so the target is never half-written.
            let tmp = t
                .parent()
                .unwrap_or(Path::new("/"))
                .join(temp_name(t.file_name().unwrap_or(OsStr::new("file"))));
            let guard = TempFile(Some(tmp.clone()));
            copy_entry(&f, &tmp, &src).map_err(|e| Error::io(&ts_, &e))?;
            std::fs::rename(&tmp, &t).map_err(|e| Error::io(&ts_, &e))?;
            std::mem::forget(guard);
            std::fs::remove_file(&f).map_err(|e| Error::io(&fs_, &e))?;
        }
        Ok(())
    })
    .await
    .map_err(Error::internal)?
}

/// Copies one non-directory entry: a file with its mode, or a symlink.
fn copy_entry(from: &Path, to: &Path, meta: &Metadata) -> io::Result<()> {
    if meta.file_type().is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)
    } else if meta.is_file() {
        std::fs::copy(from, to).map(|_| ())
    } else {
        // Devices, pipes and sockets are not copied.
        Ok(())
    }
}

/// Copies a directory tree, keeping modes and symlinks.
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(from)?;
    std::fs::create_dir(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let m = std::fs::symlink_metadata(&src)?;
        if m.is_dir() { copy_tree(&src, &dst)? } else { copy_entry(&src, &dst, &m)? }
    }
    std::fs::set_permissions(to, meta.permissions())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_in_octal() {
        assert_eq!(parse_mode("644").unwrap(), 0o644);
        assert_eq!(parse_mode("0755").unwrap(), 0o755);
        assert_eq!(parse_mode("0o600").unwrap(), 0o600);
        assert_eq!(parse_mode("4755").unwrap(), 0o4755);
        for bad in ["", "9", "rwx", "77777", "0o", "-1"] {
            assert_eq!(parse_mode(bad).unwrap_err().path, "mode", "{bad}");
        }
    }

    #[test]
    fn relative_and_empty_paths_are_refused_by_field() {
        let mut issues = Vec::new();
        absolute("from", "notes.txt", &mut issues);
        absolute("to", "", &mut issues);
        absolute("path", "/ok", &mut issues);
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["from", "to"]);
        let err = refuse(issues, Path::new("/root"), Some("notes.txt"));
        assert_eq!(
            err.0.hint.as_deref(),
            Some("use an absolute path; in the home directory that is /root/notes.txt")
        );
    }

    #[test]
    fn temp_names_are_unique_and_short() {
        let long = "é".repeat(127);
        let a = temp_name(OsStr::new(&long));
        let b = temp_name(OsStr::new(&long));
        assert_ne!(a, b);
        assert!(a.len() < 255, "{}", a.len());
        assert!(a.starts_with(".é"));
    }

    fn names(page: &Page<FileInfo>, root: &str) -> Vec<String> {
        page.data.iter().map(|i| i.path.strip_prefix(root).unwrap().to_owned()).collect()
    }

    #[test]
    fn listing_is_tree_ordered_and_pages_resume_at_the_cursor() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in ["b", "b/c", "a"] {
            std::fs::create_dir(root.join(d)).unwrap();
        }
        for f in ["b.txt", "b/c/deep", "b/x", "a/1"] {
            std::fs::write(root.join(f), f).unwrap();
        }
        std::os::unix::fs::symlink(root.join("b"), root.join("link")).unwrap();
        let shown = root.to_str().unwrap();
        let all = list_blocking(root, shown, 3, 100, None).unwrap();
        // `b/...` comes before `b.txt`: tree order, not string order.
        assert_eq!(
            names(&all, shown),
            ["/a", "/a/1", "/b", "/b/c", "/b/c/deep", "/b/x", "/b.txt", "/link"]
        );
        assert_eq!(all.next_cursor, None);
        assert_eq!(all.data[7].kind, FileType::Symlink);
        let one = list_blocking(root, shown, 1, 100, None).unwrap();
        assert_eq!(names(&one, shown), ["/a", "/b", "/b.txt", "/link"]);
        // Pages of three, each resuming after the previous page's cursor.
        let mut cursor = None;
        let mut seen = Vec::new();
        loop {
            let page = list_blocking(root, shown, 3, 3, cursor.as_deref().map(Path::new)).unwrap();
            assert!(page.data.len() <= 3);
            seen.extend(names(&page, shown));
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(seen, names(&all, shown));
    }
}
