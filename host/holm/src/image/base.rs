//! The base image, `debian:bookworm-slim`, and how holm gets it without a
//! registry.
//!
//! The bundled Dockerfile starts `FROM debian:bookworm-slim`. When the engine
//! lacks that image, holm first tries to pull it (bounded in time), and when
//! the pull fails, as it does on a machine that reaches Debian's package
//! mirrors but no container registry, it makes the image itself:
//!
//! 1. `debootstrap --variant=minbase bookworm` from deb.debian.org into a
//!    temporary directory, checked against Debian's archive keyring
//!    (`--keyring`; holm refuses when the host lacks it);
//! 2. the tree is finished the way Debian's official slim image is: apt
//!    sources for bookworm, bookworm-updates and bookworm-security; dpkg
//!    excludes for docs, man pages and translations (and those files
//!    removed); apt settings that keep caches and lists out of layers; a
//!    `policy-rc.d` that keeps package scripts from starting services in a
//!    build; caches, logs, device nodes and host files (`resolv.conf`,
//!    `hostname`) removed;
//! 3. the tree is streamed as a tar straight into the engine's image import
//!    (`POST /images/create?fromSrc=-`), so the ~200 MB tree is never held in
//!    memory, and tagged `debian:bookworm-slim`, with `PATH` and `CMD
//!    ["bash"]` set as in the official image.
//!
//! Making the base needs root (debootstrap creates device nodes, chroots and
//! sets file owners) and `debootstrap` on the host; without either, the error
//! says what to do.

use std::collections::HashMap;
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use bollard::Docker;
use bollard::query_parameters::CreateImageOptionsBuilder;
use bytes::Bytes;
use futures_util::StreamExt;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

use super::{ImageError, Progress, Result, Tail, single_flight};

/// The image the bundled Dockerfile starts from.
pub const BASE_IMAGE: &str = "debian:bookworm-slim";

/// The Debian release of the base.
const SUITE: &str = "bookworm";
/// Where debootstrap and the image's apt fetch packages from.
const MIRROR: &str = "http://deb.debian.org/debian";
/// Debian's archive keyring, which debootstrap checks the suite's `Release`
/// file with (`--keyring`); without it holm refuses to make the base.
const KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";
/// Where the image's apt fetches security updates from.
const SECURITY_MIRROR: &str = "http://deb.debian.org/debian-security";
/// A pull that sends nothing for this long is taken as failed: a registry
/// that cannot be reached usually fails at once, but a black-holed network
/// would otherwise hang the first box for minutes.
const PULL_STALL: Duration = Duration::from_secs(30);
/// The longest a pull may take in all before holm makes the base instead.
const PULL_LIMIT: Duration = Duration::from_secs(600);
/// Lines of debootstrap output an error quotes.
const ERROR_TAIL_LINES: usize = 15;
/// The size of the pieces the base's tar is streamed to the engine in.
const CHUNK: usize = 256 * 1024;

/// Makes sure the engine has the base image ([`BASE_IMAGE`]) and returns its
/// id: the image that is there, or a pulled one, or one made with
/// debootstrap when the pull fails.
pub async fn ensure_base(
    docker: &Docker,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<String> {
    ensure_base_as(docker, BASE_IMAGE, progress).await
}

/// [`ensure_base`] under another tag: pulls `tag`, or makes a Debian
/// bookworm image with debootstrap and tags it `tag`. Tests use it to make a
/// base under a throwaway tag without touching the real one.
#[doc(hidden)]
pub async fn ensure_base_as(
    docker: &Docker,
    tag: &str,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<String> {
    if let Some(id) = inspect_id(docker, tag).await? {
        return Ok(id);
    }
    // One pull or debootstrap per tag at a time; whoever waited finds the
    // image the first caller made.
    let lock = single_flight::lock_for(&format!("base {tag}"));
    let _guard = lock.lock().await;
    if let Some(id) = inspect_id(docker, tag).await? {
        return Ok(id);
    }

    progress(Progress::Status(format!("{tag} is missing; pulling it")));
    let pull_error = match pull(docker, tag, progress).await {
        Ok(()) => match inspect_id(docker, tag).await? {
            Some(id) => {
                progress(Progress::Built { tag: tag.to_owned() });
                return Ok(id);
            }
            None => "the pull ended without an image".to_owned(),
        },
        Err(reason) => reason,
    };

    let fix_prefix = "holm can make it with debootstrap, but";
    if !rustix::process::geteuid().is_root() {
        return Err(ImageError::BaseUnavailable {
            base: tag.to_owned(),
            pull_error,
            fix: format!(
                "{fix_prefix} that needs root: run holm as root once to make it, or load it with `docker load`"
            ),
        });
    }
    let Some(debootstrap) = find_program("debootstrap") else {
        return Err(ImageError::BaseUnavailable {
            base: tag.to_owned(),
            pull_error,
            fix: format!(
                "{fix_prefix} debootstrap is not installed: install it (`apt-get install debootstrap`), \
                 or load the image with `docker load`"
            ),
        });
    };
    if !Path::new(KEYRING).is_file() {
        return Err(ImageError::BaseUnavailable {
            base: tag.to_owned(),
            pull_error,
            fix: format!(
                "{fix_prefix} Debian's archive keyring {KEYRING} is missing, and without it what \
                 debootstrap downloads is not checked: install it (`apt-get install \
                 debian-archive-keyring`), or load the image with `docker load`"
            ),
        });
    }
    progress(Progress::Status(format!(
        "{tag} is missing and cannot be pulled ({pull_error}); making it with debootstrap \
         (debian {SUITE}, minbase, from {MIRROR})"
    )));
    let id = make_with_debootstrap(docker, &debootstrap, tag, progress).await?;
    progress(Progress::Built { tag: tag.to_owned() });
    Ok(id)
}

/// The id of the image `name`, or `None` when the engine has no such image.
pub(super) async fn inspect_id(docker: &Docker, name: &str) -> Result<Option<String>> {
    match docker.inspect_image(name).await {
        Ok(image) => Ok(Some(image.id.unwrap_or_default())),
        Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. }) => Ok(None),
        Err(source) => Err(ImageError::Engine { action: format!("inspect image {name}"), source }),
    }
}

/// Splits `repo:tag` (the repository may hold a registry's `host:port/`).
fn split_tag(name: &str) -> (&str, &str) {
    match name.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => (repo, tag),
        _ => (name, "latest"),
    }
}

/// Pulls `name`, giving up when the registry goes quiet for [`PULL_STALL`] or
/// the pull takes longer than [`PULL_LIMIT`]. The error is a short reason.
async fn pull(
    docker: &Docker,
    name: &str,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> std::result::Result<(), String> {
    let (repo, tag) = split_tag(name);
    let options = CreateImageOptionsBuilder::default().from_image(repo).tag(tag).build();
    let mut stream = docker.create_image(Some(options), None, None);
    let deadline = tokio::time::Instant::now() + PULL_LIMIT;
    loop {
        let step = deadline.saturating_duration_since(tokio::time::Instant::now()).min(PULL_STALL);
        match tokio::time::timeout(step, stream.next()).await {
            Err(_) => return Err(format!("the pull made no progress for {}s", step.as_secs())),
            Ok(None) => return Ok(()),
            Ok(Some(Err(e))) => return Err(short_engine_error(&e)),
            Ok(Some(Ok(info))) => {
                if let Some(status) = info.status {
                    let line = match info.id {
                        Some(id) => format!("{id}: {status}"),
                        None => status,
                    };
                    progress(Progress::Output(line));
                }
            }
        }
    }
}

/// The engine's own message, without bollard's wrapping.
fn short_engine_error(e: &bollard::errors::Error) -> String {
    match e {
        bollard::errors::Error::DockerResponseServerError { message, .. } => {
            message.trim().to_owned()
        }
        bollard::errors::Error::DockerStreamError { error } => error.trim().to_owned(),
        other => other.to_string(),
    }
}

/// Finds a program on `PATH`, or in the sbin directories that a non-login
/// root shell may not have on its path.
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/local/sbin", "/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// A temporary directory for the debootstrap tree that, however the work
/// ends (an error, a panic, the future dropped), unmounts anything debootstrap
/// left mounted inside and then removes the tree.
#[derive(Debug)]
struct Workdir {
    dir: Option<tempfile::TempDir>,
}

impl Workdir {
    fn new() -> Result<Self> {
        // /var/tmp rather than /tmp: /tmp is often a small tmpfs or mounted
        // noexec, and debootstrap runs programs inside the tree.
        let parent =
            std::env::var_os("TMPDIR").map_or_else(|| PathBuf::from("/var/tmp"), PathBuf::from);
        let dir = tempfile::Builder::new().prefix("holm-base-").tempdir_in(&parent).map_err(
            ImageError::io(format!("make a temporary directory in {}", parent.display())),
        )?;
        Ok(Self { dir: Some(dir) })
    }

    fn rootfs(&self) -> PathBuf {
        self.dir.as_ref().map(|d| d.path().join("rootfs")).unwrap_or_default()
    }
}

impl Drop for Workdir {
    fn drop(&mut self) {
        let Some(dir) = self.dir.take() else { return };
        unmount_under(dir.path());
        if let Err(e) = dir.close() {
            tracing::warn!(error = %e, "could not remove the debootstrap tree");
        }
    }
}

/// Lazily unmounts every mount point under `root`, deepest first. debootstrap
/// mounts /proc and /sys in the tree while it installs and unmounts them when
/// it ends, but not when it is killed or fails halfway; removing the tree
/// with them mounted would reach into the host's /proc and /sys.
fn unmount_under(root: &Path) {
    let Ok(mountinfo) = std::fs::read_to_string("/proc/self/mountinfo") else { return };
    let prefix = format!("{}/", root.display());
    let mut points: Vec<String> = mountinfo
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(unescape_mountinfo)
        .filter(|p| p.starts_with(&prefix))
        .collect();
    points.sort_by_key(|p| std::cmp::Reverse(p.len()));
    for point in points {
        let status = std::process::Command::new("umount").arg("-l").arg(&point).status();
        if !status.is_ok_and(|s| s.success()) {
            tracing::warn!(mount = %point, "could not unmount a mount left in the debootstrap tree");
        }
    }
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape_mountinfo(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match (bytes[i], octal) {
            (b'\\', Some(d)) => {
                out.push(d.iter().fold(0u8, |v, b| v.wrapping_mul(8).wrapping_add(b - b'0')));
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Makes the base with debootstrap and imports it under `tag`; returns its id.
async fn make_with_debootstrap(
    docker: &Docker,
    debootstrap: &Path,
    tag: &str,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<String> {
    let work = Workdir::new()?;
    let rootfs = work.rootfs();

    run_debootstrap(debootstrap, &rootfs, progress).await?;

    progress(Progress::Status("finishing the tree as a slim container base".into()));
    let tree = rootfs.clone();
    tokio::task::spawn_blocking(move || finish_rootfs(&tree))
        .await
        .map_err(|e| ImageError::Io {
            action: "finish the base tree".into(),
            source: io::Error::other(e),
        })?
        .map_err(ImageError::io("finish the base tree"))?;

    progress(Progress::Status(format!("importing the tree into the engine as {tag}")));
    import(docker, &rootfs, tag, progress).await?;

    match inspect_id(docker, tag).await? {
        Some(id) => Ok(id),
        None => Err(ImageError::Engine {
            action: format!("import {tag}"),
            source: bollard::errors::Error::DockerStreamError {
                error: "the import ended without an image".into(),
            },
        }),
    }
}

/// Runs `debootstrap --variant=minbase bookworm <rootfs> <mirror>`, streaming
/// its output as progress.
async fn run_debootstrap(
    debootstrap: &Path,
    rootfs: &Path,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<()> {
    let mut child = tokio::process::Command::new(debootstrap)
        .arg("--variant=minbase")
        .arg(format!("--keyring={KEYRING}"))
        .arg(SUITE)
        .arg(rootfs)
        .arg(MIRROR)
        // debootstrap runs dpkg and apt in the tree; a locale the tree does
        // not have would fill the output with warnings.
        .env("LC_ALL", "C")
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // If holm stops waiting (the caller gave up), stop debootstrap too;
        // `Workdir` then cleans up what it left.
        .kill_on_drop(true)
        .spawn()
        .map_err(ImageError::io(format!("start {}", debootstrap.display())))?;

    let stdout = lines(child.stdout.take().expect("stdout is piped"));
    let stderr = lines(child.stderr.take().expect("stderr is piped"));
    let mut output = std::pin::pin!(futures_util::stream::select(stdout, stderr));
    let mut tail = Tail::new(ERROR_TAIL_LINES);
    while let Some(line) = output.next().await {
        tail.push(&line);
        progress(Progress::Output(line));
    }
    let status = child.wait().await.map_err(ImageError::io("wait for debootstrap"))?;
    if status.success() {
        Ok(())
    } else {
        Err(ImageError::Debootstrap { status: status.to_string(), output: tail.joined() })
    }
}

/// The lines a child writes to one of its pipes. Bytes that are not UTF-8
/// are replaced rather than ending the stream, so the child never blocks on a
/// pipe nobody reads.
fn lines(
    pipe: impl AsyncRead + Unpin + Send + 'static,
) -> impl futures_util::Stream<Item = String> + Send {
    futures_util::stream::unfold(BufReader::new(pipe), |mut reader| async move {
        let mut buf = Vec::new();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => None,
            Ok(_) => Some((String::from_utf8_lossy(&buf).trim_end().to_owned(), reader)),
        }
    })
}

/// Finishes a debootstrap tree as a container base, the way Debian's official
/// slim images are made (debuerreotype): see the module docs.
fn finish_rootfs(root: &Path) -> io::Result<()> {
    let write = |rel: &str, text: &str, mode: u32| -> io::Result<()> {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
    };

    // Apt sources: the release, its updates and its security updates. The
    // keyring is installed by debootstrap as a dependency of apt.
    remove_if_exists(&root.join("etc/apt/sources.list"))?;
    write(
        "etc/apt/sources.list.d/debian.sources",
        &format!(
            "Types: deb\nURIs: {MIRROR}\nSuites: {SUITE} {SUITE}-updates\nComponents: main\n\
             Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n\
             Types: deb\nURIs: {SECURITY_MIRROR}\nSuites: {SUITE}-security\nComponents: main\n\
             Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
        ),
        0o644,
    )?;

    // Apt and dpkg settings of the official images: no package caches or
    // translations in layers, compressed lists, no "suggests" kept alive,
    // and the slim variant's path excludes.
    let clean = "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true";
    write(
        "etc/apt/apt.conf.d/docker-clean",
        &format!(
            "DPkg::Post-Invoke {{ \"{clean}\"; }};\nAPT::Update::Post-Invoke {{ \"{clean}\"; }};\n\
             Dir::Cache::pkgcache \"\";\nDir::Cache::srcpkgcache \"\";\n"
        ),
        0o644,
    )?;
    write("etc/apt/apt.conf.d/docker-no-languages", "Acquire::Languages \"none\";\n", 0o644)?;
    write("etc/apt/apt.conf.d/docker-gzip-indexes", "Acquire::GzipIndexes \"true\";\n", 0o644)?;
    write(
        "etc/apt/apt.conf.d/docker-autoremove-suggests",
        "Apt::AutoRemove::SuggestsImportant \"false\";\n",
        0o644,
    )?;
    write("etc/dpkg/dpkg.cfg.d/docker-apt-speedup", "force-unsafe-io\n", 0o644)?;
    write(
        "etc/dpkg/dpkg.cfg.d/docker",
        "# The slim variant: files containers do not need are not installed.\n\
         path-exclude /usr/share/doc/*\npath-include /usr/share/doc/*/copyright\n\
         path-exclude /usr/share/groff/*\npath-exclude /usr/share/info/*\n\
         path-exclude /usr/share/linda/*\npath-exclude /usr/share/lintian/overrides/*\n\
         path-exclude /usr/share/locale/*\npath-exclude /usr/share/man/*\n",
        0o644,
    )?;
    // Package scripts must not start services during an image build.
    write("usr/sbin/policy-rc.d", "#!/bin/sh\nexit 101\n", 0o755)?;

    // What the excludes keep out from now on, removed from what is there.
    for dir in [
        "usr/share/groff",
        "usr/share/info",
        "usr/share/linda",
        "usr/share/lintian/overrides",
        "usr/share/locale",
        "usr/share/man",
    ] {
        clear_dir(&root.join(dir), |_| false)?;
    }
    let doc = root.join("usr/share/doc");
    if doc.is_dir() {
        for entry in std::fs::read_dir(&doc)? {
            let path = entry?.path();
            if path.symlink_metadata()?.is_dir() {
                clear_dir(&path, |name| name == "copyright")?;
            } else {
                std::fs::remove_file(&path)?;
            }
        }
    }

    // Caches, lists and logs of the bootstrap; device nodes (the engine
    // gives each container its own /dev); the host's resolver and name,
    // which debootstrap copied and the engine mounts over at run time.
    for dir in ["var/lib/apt/lists", "var/cache/apt", "var/log", "dev", "tmp", "var/tmp"] {
        clear_files(&root.join(dir))?;
    }
    for file in ["etc/resolv.conf", "etc/hostname", "var/cache/ldconfig/aux-cache"] {
        remove_if_exists(&root.join(file))?;
    }
    if root.join("etc/machine-id").exists() {
        // An empty machine-id means "not set up yet", so no two containers
        // share the id debootstrap generated.
        write("etc/machine-id", "", 0o444)?;
    }
    Ok(())
}

fn remove_if_exists(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Removes everything in `dir` (not `dir` itself) but the entries `keep`
/// accepts by name.
fn clear_dir(dir: &Path, keep: impl Fn(&str) -> bool) -> io::Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if keep(&entry.file_name().to_string_lossy()) {
            continue;
        }
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// Removes every file, link and device under `dir`, keeping the directories
/// (packages expect /var/log/apt and the like to exist).
fn clear_files(dir: &Path) -> io::Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            clear_files(&entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// Streams the tree at `rootfs` as a tar into the engine's import, tagged
/// `tag`.
async fn import(
    docker: &Docker,
    rootfs: &Path,
    tag: &str,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<()> {
    let (tx, rx) = tokio::sync::mpsc::channel::<io::Result<Bytes>>(8);
    let tree = rootfs.to_owned();
    let writer = tokio::task::spawn_blocking(move || {
        let result =
            write_tar(&tree, ChannelWriter { tx: tx.clone(), buf: Vec::with_capacity(CHUNK) });
        if let Err(e) = &result {
            // End the request body with the error, so the engine does not
            // import a truncated tree.
            let _ = tx.blocking_send(Err(io::Error::new(e.kind(), e.to_string())));
        }
        result
    });
    let body =
        futures_util::stream::unfold(
            rx,
            |mut rx| async move { rx.recv().await.map(|item| (item, rx)) },
        );

    let (repo, tag_part) = split_tag(tag);
    let options = CreateImageOptionsBuilder::default()
        .from_src("-")
        .repo(repo)
        .tag(tag_part)
        .message(&format!("made by holm: debootstrap --variant=minbase {SUITE} {MIRROR}"))
        .changes(vec![
            "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
            "CMD [\"bash\"]".into(),
        ])
        .build();
    let mut stream = docker.create_image(Some(options), Some(bollard::body_try_stream(body)), None);
    let mut engine_result = Ok(());
    while let Some(item) = stream.next().await {
        match item {
            Ok(info) => {
                if let Some(status) = info.status {
                    progress(Progress::Output(status));
                }
            }
            Err(source) => {
                engine_result = Err(ImageError::Engine { action: format!("import {tag}"), source });
                break;
            }
        }
    }
    drop(stream);
    // The tar's own error explains a failed import better than the broken
    // request it caused, so it comes first.
    match writer.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) if e.kind() != io::ErrorKind::BrokenPipe => {
            return Err(ImageError::Io {
                action: "write the base tree as a tar".into(),
                source: e,
            });
        }
        Ok(Err(_)) => {}
        Err(e) => {
            return Err(ImageError::Io {
                action: "write the base tree as a tar".into(),
                source: io::Error::other(e),
            });
        }
    }
    engine_result
}

/// A `Write` that hands what it is given to the async side in [`CHUNK`]-sized
/// pieces, so the tar is made on a blocking thread while the engine reads it.
struct ChannelWriter {
    tx: tokio::sync::mpsc::Sender<io::Result<Bytes>>,
    buf: Vec<u8>,
}

impl ChannelWriter {
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK)));
        self.tx.blocking_send(Ok(chunk)).map_err(|_| {
            io::Error::new(io::ErrorKind::BrokenPipe, "the engine stopped reading the tar")
        })
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

/// Writes the tree at `root` as a tar: owners, modes (setuid included) and
/// times as they are, symbolic links as links, hard links as links to the
/// first path of the same file, in a stable (sorted) order.
fn write_tar(root: &Path, out: impl Write) -> io::Result<()> {
    let mut tar = tar::Builder::new(out);
    tar.follow_symlinks(false);
    tar.mode(tar::HeaderMode::Complete);
    let mut links: HashMap<(u64, u64), PathBuf> = HashMap::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let mut entries: Vec<_> = std::fs::read_dir(&dir)?.collect::<io::Result<_>>()?;
        entries.sort_by_key(std::fs::DirEntry::file_name);
        let mut subdirs = Vec::new();
        for entry in entries {
            let rel_path = rel.join(entry.file_name());
            let path = entry.path();
            let meta = path.symlink_metadata()?;
            let kind = meta.file_type();
            if kind.is_dir() {
                tar.append_dir(&rel_path, &path)?;
                subdirs.push(rel_path);
            } else if kind.is_file() && meta.nlink() > 1 {
                if let Some(first) = links.get(&(meta.dev(), meta.ino())) {
                    let mut header = tar::Header::new_gnu();
                    header.set_metadata_in_mode(&meta, tar::HeaderMode::Complete);
                    header.set_entry_type(tar::EntryType::Link);
                    header.set_size(0);
                    tar.append_link(&mut header, &rel_path, first)?;
                } else {
                    links.insert((meta.dev(), meta.ino()), rel_path.clone());
                    tar.append_path_with_name(&path, &rel_path)?;
                }
            } else if !kind.is_socket() {
                // Sockets cannot be archived and mean nothing in an image.
                tar.append_path_with_name(&path, &rel_path)?;
            }
        }
        // Visit subdirectories in name order: the stack pops the last first.
        stack.extend(subdirs.into_iter().rev());
    }
    tar.into_inner()?.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_split_at_the_last_colon_after_the_last_slash() {
        assert_eq!(split_tag("debian:bookworm-slim"), ("debian", "bookworm-slim"));
        assert_eq!(split_tag("holm-test-base:abc"), ("holm-test-base", "abc"));
        assert_eq!(split_tag("localhost:5000/debian"), ("localhost:5000/debian", "latest"));
        assert_eq!(split_tag("localhost:5000/debian:12"), ("localhost:5000/debian", "12"));
        assert_eq!(split_tag("debian"), ("debian", "latest"));
    }

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape_mountinfo(r"/var/tmp/a\040b/proc"), "/var/tmp/a b/proc");
        assert_eq!(unescape_mountinfo("/plain"), "/plain");
    }

    #[test]
    fn tar_keeps_links_modes_and_hard_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("usr/bin")).unwrap();
        std::fs::write(root.join("usr/bin/perl"), b"perl").unwrap();
        std::fs::hard_link(root.join("usr/bin/perl"), root.join("usr/bin/perl5")).unwrap();
        std::fs::set_permissions(
            root.join("usr/bin/perl"),
            std::fs::Permissions::from_mode(0o4755),
        )
        .unwrap();
        std::os::unix::fs::symlink("usr/bin", root.join("bin")).unwrap();

        let mut bytes = Vec::new();
        write_tar(root, &mut bytes).unwrap();
        let mut archive = tar::Archive::new(bytes.as_slice());
        let mut seen = Vec::new();
        for entry in archive.entries().unwrap() {
            let entry = entry.unwrap();
            let h = entry.header();
            let link = entry.link_name().unwrap().map(|l| l.display().to_string());
            seen.push((
                entry.path().unwrap().display().to_string(),
                h.entry_type(),
                h.mode().unwrap() & 0o7777,
                link,
            ));
        }
        use tar::EntryType::*;
        assert_eq!(
            seen,
            [
                ("bin".to_owned(), Symlink, 0o777, Some("usr/bin".to_owned())),
                ("usr".to_owned(), Directory, 0o755, None),
                ("usr/bin".to_owned(), Directory, 0o755, None),
                ("usr/bin/perl".to_owned(), Regular, 0o4755, None),
                ("usr/bin/perl5".to_owned(), Link, 0o4755, Some("usr/bin/perl".to_owned())),
            ]
        );
    }

    #[test]
    fn finishing_a_tree_writes_sources_and_removes_the_excluded() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in [
            "etc/apt",
            "usr/share/doc/bash",
            "usr/share/man/man1",
            "var/log/apt",
            "dev",
            "var/lib/apt/lists",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            "etc/apt/sources.list",
            "etc/resolv.conf",
            "usr/share/doc/bash/copyright",
            "usr/share/doc/bash/README",
            "usr/share/man/man1/bash.1.gz",
            "var/log/apt/history.log",
            "var/lib/apt/lists/deb.debian.org_Packages",
            "dev/null",
        ] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        finish_rootfs(root).unwrap();

        let sources =
            std::fs::read_to_string(root.join("etc/apt/sources.list.d/debian.sources")).unwrap();
        assert!(sources.contains("Suites: bookworm bookworm-updates\n"), "{sources}");
        assert!(sources.contains("Suites: bookworm-security\n"), "{sources}");
        assert!(!root.join("etc/apt/sources.list").exists());
        assert!(!root.join("etc/resolv.conf").exists());
        assert!(root.join("usr/share/doc/bash/copyright").exists());
        assert!(!root.join("usr/share/doc/bash/README").exists());
        assert!(!root.join("usr/share/man/man1").exists());
        assert!(root.join("var/log/apt").is_dir());
        assert!(!root.join("var/log/apt/history.log").exists());
        assert!(!root.join("var/lib/apt/lists/deb.debian.org_Packages").exists());
        assert!(!root.join("dev/null").exists());
        let policy = root.join("usr/sbin/policy-rc.d");
        assert_eq!(policy.metadata().unwrap().permissions().mode() & 0o777, 0o755);
    }
}
