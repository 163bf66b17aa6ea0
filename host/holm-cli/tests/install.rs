//! `scripts/install.sh` and `deploy/holmd.service` as the deploy guide uses
//! them: the script installs this build's `holm` and `holmd` into
//! `HOLM_INSTALL_DIR` from a build directory and from a release archive
//! (with no network at all), again over itself, and refuses a bad source
//! without touching what is installed; an archive whose SHA-256 is not the
//! one given (`HOLM_SHA256`) or published beside it (`<archive>.sha256`) is
//! refused before anything is written; `systemd-analyze verify` passes the
//! unit without a word.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// This build's programs: `holm` is this crate's; `holmd` is beside it
/// (`cargo test --workspace`, the test command, builds both).
fn programs() -> [PathBuf; 2] {
    let holm = PathBuf::from(env!("CARGO_BIN_EXE_holm"));
    let holmd = holm.with_file_name("holmd");
    assert!(holmd.is_file(), "{} is missing: build it (cargo build -p holmd)", holmd.display());
    [holm, holmd]
}

/// Runs the script with `env`, in a network namespace of its own (only a
/// loopback that is down) when `offline`.
fn install(env: &[(&str, &Path)], offline: bool) -> Output {
    let script = repo().join("scripts/install.sh");
    let mut c = if offline {
        let mut c = Command::new("unshare");
        c.args(["--net", "sh"]).arg(&script);
        c
    } else {
        let mut c = Command::new("sh");
        c.arg(&script);
        c
    };
    for k in ["HOLM_ARCHIVE", "HOLM_BUILD_DIR", "HOLM_VERSION", "HOLM_RELEASE_URL", "HOLM_SHA256"] {
        c.env_remove(k);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run scripts/install.sh")
}

fn said(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Asserts `dir` holds exactly `holm` and `holmd`, each a byte-for-byte copy
/// of this build's, executable by all, and that the installed `holm` runs.
fn installed_from_this_build(dir: &Path) {
    assert_eq!(names(dir), ["holm", "holmd"], "nothing else is left in {}", dir.display());
    for src in programs() {
        let name = src.file_name().unwrap();
        let dst = dir.join(name);
        assert!(std::fs::read(&dst).unwrap() == std::fs::read(&src).unwrap(), "{dst:?} differs");
        let mode = std::fs::metadata(&dst).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o755, "{}", dst.display());
    }
    let v = Command::new(dir.join("holm")).arg("--version").output().unwrap();
    assert!(v.status.success() && String::from_utf8_lossy(&v.stdout).starts_with("holm "), "{v:?}");
}

#[test]
fn installs_from_a_build_dir_and_again_over_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let build = programs()[0].parent().unwrap().to_owned();
    // A directory that does not exist yet, two levels down.
    let dir = tmp.path().join("prefix/bin");
    let env = [("HOLM_BUILD_DIR", build.as_path()), ("HOLM_INSTALL_DIR", dir.as_path())];

    let first = install(&env, false);
    assert!(first.status.success(), "{}", said(&first));
    installed_from_this_build(&dir);
    let inode = std::fs::metadata(dir.join("holmd")).unwrap().ino();
    // A running holmd keeps its file open; the second install must not
    // write into it but put a new file in its place.
    let running = std::fs::File::open(dir.join("holmd")).unwrap();

    let second = install(&env, false);
    assert!(second.status.success(), "{}", said(&second));
    installed_from_this_build(&dir);
    assert_ne!(std::fs::metadata(dir.join("holmd")).unwrap().ino(), inode, "renamed over");
    assert_eq!(running.metadata().unwrap().ino(), inode, "the old file lives on while open");
}

/// A release archive as the release job makes it, in `tmp`: one directory
/// holding both programs.
fn release_archive(tmp: &Path) -> PathBuf {
    let staging = tmp.join("stage/holm-x86_64-linux");
    std::fs::create_dir_all(&staging).unwrap();
    for src in programs() {
        std::fs::copy(&src, staging.join(src.file_name().unwrap())).unwrap();
    }
    let archive = tmp.join("holm-x86_64-linux.tar.gz");
    let tar = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(tmp.join("stage"))
        .arg("holm-x86_64-linux")
        .status()
        .unwrap();
    assert!(tar.success());
    archive
}

/// The SHA-256 of `file`, in hex, as `sha256sum` prints it.
fn sha256(file: &Path) -> String {
    let out = Command::new("sha256sum").arg(file).output().unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).split(' ').next().unwrap().to_owned()
}

#[test]
fn installs_from_a_local_archive_with_no_network() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = release_archive(tmp.path());
    let dir = tmp.path().join("bin");
    let env = [("HOLM_ARCHIVE", archive.as_path()), ("HOLM_INSTALL_DIR", dir.as_path())];
    let out = install(&env, true);
    assert!(out.status.success(), "{}", said(&out));
    installed_from_this_build(&dir);

    // Without a source the script would download: in the same namespace
    // that fails, which shows the archive's install used no network.
    let none = install(&[("HOLM_INSTALL_DIR", tmp.path().join("other").as_path())], true);
    assert!(!none.status.success(), "{}", said(&none));
    assert!(said(&none).contains("cannot download"), "{}", said(&none));
}

#[test]
fn a_bad_source_is_refused_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bin");
    let build = programs()[0].parent().unwrap().to_owned();
    let first = install(&[("HOLM_BUILD_DIR", &build), ("HOLM_INSTALL_DIR", &dir)], false);
    assert!(first.status.success(), "{}", said(&first));
    let before: Vec<u64> =
        ["holm", "holmd"].iter().map(|n| std::fs::metadata(dir.join(n)).unwrap().ino()).collect();

    // A build directory with `holm` but no `holmd`.
    let half = tmp.path().join("half");
    std::fs::create_dir(&half).unwrap();
    std::fs::copy(&programs()[0], half.join("holm")).unwrap();
    let missing = tmp.path().join("nothing.tar.gz");
    let cases: [(&str, &Path, &str); 3] = [
        ("HOLM_BUILD_DIR", &half, "no holmd in"),
        ("HOLM_BUILD_DIR", &tmp.path().join("absent"), "is not a directory"),
        ("HOLM_ARCHIVE", &missing, "is not a file"),
    ];
    for (var, value, message) in cases {
        let out = install(&[(var, value), ("HOLM_INSTALL_DIR", &dir)], false);
        assert!(!out.status.success(), "{var}={}: {}", value.display(), said(&out));
        assert!(said(&out).contains(message), "{var}: {}", said(&out));
        let after: Vec<u64> = ["holm", "holmd"]
            .iter()
            .map(|n| std::fs::metadata(dir.join(n)).unwrap().ino())
            .collect();
        assert_eq!(after, before, "{var}={}: the installed programs changed", value.display());
        assert_eq!(names(&dir), ["holm", "holmd"]);
    }
}

/// `systemd-analyze verify` on a copy of `unit`, in a directory of its own
/// (the analyzer looks for the unit's neighbours there).
fn verify(unit: &str) -> Output {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("holmd.service");
    std::fs::write(&path, unit).unwrap();
    Command::new("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .output()
        .expect("systemd-analyze is installed (.ci/setup installs Debian's systemd)")
}

#[test]
fn systemd_analyze_verify_passes_the_unit_without_a_warning() {
    let unit = std::fs::read_to_string(repo().join("deploy/holmd.service")).unwrap();
    // The analyzer checks that the program exists: holmd is not installed
    // here, so the copy it reads runs /bin/true in its place.
    let program = "ExecStart=/usr/local/bin/holmd";
    assert!(unit.lines().any(|l| l == program), "the unit runs holmd itself, with no shell");
    let unit = unit.replace(program, "ExecStart=/bin/true");
    let out = verify(&unit);
    assert!(out.status.success() && out.stderr.is_empty(), "{}", said(&out));
    // The analyzer reads what it is given: a misspelt key is warned about
    // and a relative program refused, so the silence above means something.
    let typo = verify(&unit.replace("\nRestart=", "\nRestrt="));
    assert!(said(&typo).contains("Unknown key 'Restrt'"), "{}", said(&typo));
    let relative = verify(&unit.replace("ExecStart=/bin/true", "ExecStart=bin/true"));
    assert!(!relative.status.success(), "{}", said(&relative));
    // What the guide and docs/security.md say of the unit.
    for line in [
        "KillSignal=SIGINT",
        "Restart=on-failure",
        "EnvironmentFile=/etc/holm/holmd.env",
        "AmbientCapabilities=CAP_NET_ADMIN CAP_NET_RAW",
        // The token as a credential: a missing file stops the unit, and
        // no shell turns an unreadable one into an empty variable.
        "LoadCredential=token:/etc/holm/token",
        "UMask=0077",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ReadWritePaths=/var/lib/holm -/run/xtables.lock",
    ] {
        assert!(unit.lines().any(|l| l == line), "the unit has {line}");
    }
    assert!(!unit.contains("$(") && !unit.contains("HOLM_SERVER_TOKEN="), "no token in a shell");
}

/// A download (a `file://` release URL, so no network) is installed only
/// when its SHA-256 matches the `.sha256` beside it or `HOLM_SHA256`; a
/// wrong or missing checksum is refused loudly and writes nothing, and so is
/// a local archive whose `HOLM_SHA256` does not match.
#[test]
fn an_archive_whose_checksum_does_not_match_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = release_archive(tmp.path());
    let right = sha256(&archive);
    let wrong = format!("{}{}", &right[..63], if right.ends_with('0') { "1" } else { "0" });
    let url = format!("file://{}", archive.display());
    let sums = tmp.path().join("holm-x86_64-linux.tar.gz.sha256");
    let url_var = PathBuf::from(&url);
    let sha = |hex: &str| PathBuf::from(hex);

    let refused = |env: &[(&str, &Path)], message: &str| {
        let dir = tmp.path().join("refused");
        let mut env = env.to_vec();
        env.push(("HOLM_INSTALL_DIR", &dir));
        let out = install(&env, true);
        assert!(!out.status.success(), "{}", said(&out));
        assert!(said(&out).contains(message), "{}", said(&out));
        assert!(!dir.exists(), "nothing was written: {}", said(&out));
    };
    // No checksum beside the download and none given.
    refused(&[("HOLM_RELEASE_URL", &url_var)], "cannot download");
    // A published checksum that is not the archive's.
    std::fs::write(&sums, format!("{wrong}  holm-x86_64-linux.tar.gz\n")).unwrap();
    refused(&[("HOLM_RELEASE_URL", &url_var)], "checksum mismatch");
    // HOLM_SHA256 wins over the published one, and is checked too.
    std::fs::write(&sums, format!("{right}  holm-x86_64-linux.tar.gz\n")).unwrap();
    refused(&[("HOLM_RELEASE_URL", &url_var), ("HOLM_SHA256", &sha(&wrong))], "checksum mismatch");
    refused(&[("HOLM_ARCHIVE", &archive), ("HOLM_SHA256", &sha(&wrong))], "checksum mismatch");
    refused(&[("HOLM_ARCHIVE", &archive), ("HOLM_SHA256", &sha("not-hex"))], "64 hex digits");

    // The right checksum, published or given, installs.
    for (i, env) in [
        vec![("HOLM_RELEASE_URL", url_var.as_path())],
        vec![("HOLM_RELEASE_URL", url_var.as_path()), ("HOLM_SHA256", &sha(&right.to_uppercase()))],
        vec![("HOLM_ARCHIVE", archive.as_path()), ("HOLM_SHA256", &sha(&right))],
    ]
    .into_iter()
    .enumerate()
    {
        let dir = tmp.path().join(format!("bin{i}"));
        let mut env = env.clone();
        env.push(("HOLM_INSTALL_DIR", &dir));
        let out = install(&env, true);
        assert!(out.status.success(), "{}", said(&out));
        assert!(said(&out).contains("SHA-256 of"), "{}", said(&out));
        installed_from_this_build(&dir);
    }
}
