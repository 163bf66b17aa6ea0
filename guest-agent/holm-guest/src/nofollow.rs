//! Writes by the guest (root) into directories the desktop user owns
//! (`~/.fluxbox`, the recordings under the state directory), which a
//! symbolic link the desktop user planted cannot redirect (review L4).
//!
//! The directory is opened with `O_DIRECTORY | O_NOFOLLOW`, so its own name
//! may not be a link, and the file is made in it with `openat(O_CREAT |
//! O_EXCL | O_NOFOLLOW)`, so nothing may be at the file's name, a link
//! included: a link is refused, never followed. A file replaced is written
//! to a new temporary file in the same directory and moved over the old
//! name with `renameat`, which replaces a link itself, never its target.
//! The directory's ancestors must not be the desktop user's to change (its
//! home's parent, `/home`, is root's).
//!
//! A file an agent writes (`PUT /v1/files/content`) goes through a link at
//! its path, as an editor's save would, only when the link is root's or its
//! owner owns the file it points to ([`may_follow`]): root never writes
//! further than the link's owner could. The same rule holds for every link
//! among the directories on the way ([`links_on_the_way`]): a link the
//! desktop user planted in the middle of a path, pointing at a directory
//! of root's, is refused too. That is a check before the write, not a walk
//! of open directories: a link swapped in between the check and the write
//! is not caught.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, Mode, OFlags};

/// Whether root may write through a link owned by `link_uid` to a file
/// owned by `target_uid`: a link of root's, or one whose owner owns the
/// file (as the kernel's `protected_symlinks` rule for sticky directories).
pub fn may_follow(link_uid: u32, target_uid: u32) -> bool {
    link_uid == 0 || link_uid == target_uid
}

/// Checks the directories on the way to `path` (its ancestors, not its own
/// name) as root would go through them: each link among them must be
/// root's or lead to a directory its owner owns ([`may_follow`]), and a
/// link that leads nowhere must be root's (a write would make directories
/// through it). Answers the first link that fails. Once a name is absent,
/// the rest is made as plain directories, and nothing more is checked.
pub fn links_on_the_way(path: &Path) -> Result<(), std::path::PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let Some(parent) = path.parent() else { return Ok(()) };
    let mut here = std::path::PathBuf::from("/");
    for part in parent.components() {
        let std::path::Component::Normal(name) = part else { continue };
        let next = here.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&next) else { return Ok(()) };
        if !meta.file_type().is_symlink() {
            here = next;
            continue;
        }
        match std::fs::canonicalize(&next) {
            Ok(real) => {
                let owner = std::fs::metadata(&real).map(|m| m.uid()).unwrap_or(0);
                if !may_follow(meta.uid(), owner) {
                    return Err(next);
                }
                here = real;
            }
            Err(_) if meta.uid() == 0 => return Ok(()),
            Err(_) => return Err(next),
        }
    }
    Ok(())
}

/// Opens `dir`, refusing a link at its name.
fn open_dir(dir: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::open(dir, flags, Mode::empty()).map_err(|e| refused(dir, e))
}

/// Makes the file `name` in the open directory `d`; refused when anything,
/// a link included, is there.
fn create_at(d: &OwnedFd, dir: &Path, name: &str, mode: u32) -> io::Result<File> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::openat(d, name, flags, Mode::from_raw_mode(mode))
        .map(File::from)
        .map_err(|e| refused(&dir.join(name), e))
}

/// The error of a refused open, naming the path and, for a link, why.
fn refused(path: &Path, e: rustix::io::Errno) -> io::Error {
    let e = io::Error::from(e);
    let why = match e.raw_os_error() {
        Some(libc::ELOOP | libc::ENOTDIR) => "is a symbolic link or not a directory; not followed",
        Some(libc::EEXIST) => "already exists (a symbolic link is never written through)",
        _ => return io::Error::new(e.kind(), format!("{}: {e}", path.display())),
    };
    io::Error::new(e.kind(), format!("{} {why}", path.display()))
}

/// Makes a new file `name` in `dir` for writing; refused (`AlreadyExists`)
/// when anything is at that name, a link included, and when `dir` itself
/// is a link.
pub fn create(dir: &Path, name: &str, mode: u32) -> io::Result<File> {
    let d = open_dir(dir)?;
    create_at(&d, dir, name, mode)
}

/// Writes `bytes` to a new file `name` in `dir` ([`create`]).
pub fn create_with(dir: &Path, name: &str, bytes: &[u8], mode: u32) -> io::Result<()> {
    create(dir, name, mode)?.write_all(bytes)
}

/// Puts `bytes` at `name` in `dir`, replacing what is there (a link is
/// replaced, its target untouched): written to a new temporary file, then
/// renamed over the name.
pub fn replace(dir: &Path, name: &str, bytes: &[u8], mode: u32) -> io::Result<()> {
    let d = open_dir(dir)?;
    let tmp = format!(".{name}.holm-{}.tmp", std::process::id());
    // A leftover of a crash, or a link planted at the name: unlinking
    // removes the entry itself.
    let _ = rustix::fs::unlinkat(&d, tmp.as_str(), AtFlags::empty());
    let written = create_at(&d, dir, &tmp, mode).and_then(|mut f| f.write_all(bytes));
    let moved = written.and_then(|()| {
        rustix::fs::renameat(&d, tmp.as_str(), &d, name)
            .map_err(|e| io::Error::new(io::Error::from(e).kind(), format!("renaming {tmp}: {e}")))
    });
    if moved.is_err() {
        let _ = rustix::fs::unlinkat(&d, tmp.as_str(), AtFlags::empty());
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_link_at_a_new_file_is_refused_and_its_target_untouched() {
        let t = tempfile::tempdir().unwrap();
        let (home, outside) = (t.path().join("home"), t.path().join("outside"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        // A dangling link: following it would make a file outside.
        symlink(outside.join("made"), home.join("overlay")).unwrap();
        let e = create_with(&home, "overlay", b"x", 0o644).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{e}");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(!outside.join("made").exists(), "nothing was made through the link");
        // A link to a file: the file keeps its bytes.
        std::fs::write(outside.join("victim"), "orig").unwrap();
        symlink(outside.join("victim"), home.join("apps")).unwrap();
        assert!(create_with(&home, "apps", b"x", 0o644).is_err());
        assert_eq!(std::fs::read_to_string(outside.join("victim")).unwrap(), "orig");
        // With nothing there, the file is made.
        create_with(&home, "fresh", b"new", 0o644).unwrap();
        assert_eq!(std::fs::read_to_string(home.join("fresh")).unwrap(), "new");
    }

    #[tokio::test]
    async fn an_agent_s_write_goes_through_no_link_its_owner_could_not_write_through() {
        use std::os::unix::fs::MetadataExt;
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "orig").unwrap();
        let link = t.path().join("planted");
        symlink(&victim, &link).unwrap();
        let me = std::fs::metadata(&victim).unwrap().uid();
        if me == 0 {
            // As root (the guest): the link is the desktop user's.
            std::os::unix::fs::lchown(&link, Some(1000), Some(1000)).unwrap();
        } else {
            // Not root: point the link at a file of root's instead.
            std::fs::remove_file(&link).unwrap();
            symlink("/etc/passwd", &link).unwrap();
        }
        let body = || futures_util::stream::iter([Ok::<_, io::Error>(bytes::Bytes::from("x"))]);
        let shown = link.to_string_lossy().into_owned();
        let e = crate::files::write(&link, &shown, None, body()).await.unwrap_err().0;
        assert_eq!(e.code, holm_proto::ErrorCode::PermissionDenied, "{e:?}");
        assert!(e.message.contains("not followed"), "{e:?}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "orig");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        // A link whose owner owns its target is written through.
        let own = t.path().join("own");
        symlink(&victim, &own).unwrap();
        crate::files::write(&own, "own", None, body()).await.unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "x");
        assert!(may_follow(0, 1000) && may_follow(1000, 1000) && !may_follow(1000, 0));
    }

    #[tokio::test]
    async fn a_link_in_the_middle_of_a_path_does_not_redirect_an_agent_s_write() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let victim_dir = t.path().join("etc");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&victim_dir).unwrap();
        std::fs::write(victim_dir.join("passwd"), "orig").unwrap();
        // The desktop user's link to a directory of root's, in the middle of
        // the path, and a dangling one (a write would make directories
        // through it).
        let planted = home.join("dir");
        symlink(&victim_dir, &planted).unwrap();
        let dangling = home.join("nowhere");
        symlink(t.path().join("made"), &dangling).unwrap();
        if rustix::process::geteuid().is_root() {
            for link in [&planted, &dangling] {
                std::os::unix::fs::lchown(link, Some(1000), Some(1000)).unwrap();
            }
            std::os::unix::fs::chown(&home, Some(1000), Some(1000)).unwrap();
        } else {
            // Not root: the link leads to a directory of root's instead.
            std::fs::remove_file(&planted).unwrap();
            symlink("/etc", &planted).unwrap();
        }
        let body = || futures_util::stream::iter([Ok::<_, io::Error>(bytes::Bytes::from("x"))]);
        for (path, link) in
            [(planted.join("passwd"), &planted), (dangling.join("sub/file"), &dangling)]
        {
            let shown = path.to_string_lossy().into_owned();
            let e = crate::files::write(&path, &shown, None, body()).await.unwrap_err().0;
            assert_eq!(e.code, holm_proto::ErrorCode::PermissionDenied, "{e:?}");
            assert!(e.message.contains(&*link.to_string_lossy()), "names the link: {e:?}");
            assert_eq!(links_on_the_way(&path), Err(link.clone()));
        }
        assert_eq!(std::fs::read_to_string(victim_dir.join("passwd")).unwrap(), "orig");
        assert!(!t.path().join("made").exists(), "no directory was made through the link");
        // A link whose owner owns the directory it leads to is gone through,
        // and so is a path with no link.
        let own = t.path().join("own");
        symlink(&home, &own).unwrap();
        crate::files::write(&own.join("note"), "note", None, body()).await.unwrap();
        assert_eq!(std::fs::read_to_string(home.join("note")).unwrap(), "x");
        assert_eq!(links_on_the_way(&home.join("a/b/c")), Ok(()));
    }

    #[test]
    fn a_directory_that_is_a_link_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let outside = t.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        symlink(&outside, t.path().join("dot-fluxbox")).unwrap();
        let e = create_with(&t.path().join("dot-fluxbox"), "overlay", b"x", 0o644).unwrap_err();
        assert!(e.to_string().contains("not followed"), "{e}");
        let e = replace(&t.path().join("dot-fluxbox"), "rec.json", b"x", 0o644).unwrap_err();
        assert!(e.to_string().contains("not followed"), "{e}");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "nothing was made there");
    }

    #[test]
    fn a_replaced_link_is_replaced_itself_and_its_target_untouched() {
        let t = tempfile::tempdir().unwrap();
        let (dir, outside) = (t.path().join("recordings"), t.path().join("outside"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("victim"), "orig").unwrap();
        std::fs::write(outside.join("victim2"), "orig2").unwrap();
        symlink(outside.join("victim"), dir.join("rec.json")).unwrap();
        // A link planted at the temporary name too.
        let tmp = format!(".rec.json.holm-{}.tmp", std::process::id());
        symlink(outside.join("victim2"), dir.join(&tmp)).unwrap();
        replace(&dir, "rec.json", b"{}", 0o644).unwrap();
        assert_eq!(std::fs::read_to_string(outside.join("victim")).unwrap(), "orig");
        assert_eq!(std::fs::read_to_string(outside.join("victim2")).unwrap(), "orig2");
        let meta = std::fs::symlink_metadata(dir.join("rec.json")).unwrap();
        assert!(meta.is_file(), "the name now holds a file of its own");
        assert_eq!(std::fs::read_to_string(dir.join("rec.json")).unwrap(), "{}");
        assert!(!dir.join(&tmp).exists());
        // Again over a file: replaced.
        replace(&dir, "rec.json", b"[]", 0o644).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("rec.json")).unwrap(), "[]");
    }
}
