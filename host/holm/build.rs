//! Builds the static `holm-guest` binary that `holm::image::GUEST_BINARY`
//! embeds.
//!
//! Every box runs the guest as its entrypoint, and holm copies it into the box
//! image it builds, so the host must carry the guest's bytes. This script runs
//! a nested `cargo build -p holm-guest --profile guest --target
//! x86_64-unknown-linux-gnu` with `-C target-feature=+crt-static` (the musl
//! target is not installed here), so the one binary runs in any image, and
//! hands its path to the crate as `HOLM_GUEST_EMBED`, which `include_bytes!`
//! reads.
//!
//! Set `HOLM_GUEST_BIN=/path/to/holm-guest` to embed a binary built elsewhere
//! (a release pipeline, a cross build); the nested build is then skipped.
//!
//! The nested build uses its own target directory (`<target>/guest`), because
//! the outer build holds the lock of its own; and it runs with the outer
//! build's per-crate cargo variables removed, because those describe `holm`,
//! not the guest, and some of them (`RUSTFLAGS`, `CARGO_TARGET_DIR`, the
//! `clippy-driver` wrapper) would change how the guest is built.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

include!("guest_inputs.rs");

/// The only target the guest is built for: boxes are x86_64 Linux.
const GUEST_TARGET: &str = "x86_64-unknown-linux-gnu";

fn main() {
    println!("cargo:rerun-if-env-changed=HOLM_GUEST_BIN");
    println!("cargo:rerun-if-changed=build.rs");

    if let Some(prebuilt) = env::var_os("HOLM_GUEST_BIN").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(prebuilt);
        if !path.is_file() {
            panic!("HOLM_GUEST_BIN={} is not a file", path.display());
        }
        let path = path.canonicalize().expect("canonicalize HOLM_GUEST_BIN");
        println!("cargo:rerun-if-changed={}", path.display());
        println!("cargo:rustc-env=HOLM_GUEST_EMBED={}", path.display());
        return;
    }

    // The workspace root, where Cargo.lock and the guest live: the
    // workspace's `.cargo/config.toml` names it; without that (a build that
    // does not read it) it is two levels above this crate.
    println!("cargo:rerun-if-env-changed=HOLM_WORKSPACE_ROOT");
    let workspace = env::var_os("HOLM_WORKSPACE_ROOT").filter(|v| !v.is_empty()).map_or_else(
        || {
            PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
                .join("../..")
        },
        PathBuf::from,
    );
    let workspace = workspace.canonicalize().expect("find the workspace root");

    // Rebuild the guest only when something it is built from changed. Cargo
    // scans a directory named here for any file newer than the last run, so a
    // second build with nothing changed does not start the nested cargo at all.
    println!("cargo:rerun-if-changed=guest_inputs.rs");
    for input in GUEST_INPUTS {
        // A path that does not exist would make cargo rerun this script on
        // every build, so only existing ones are named.
        let path = workspace.join(input);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }

    let target_dir = guest_target_dir(&workspace);
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&workspace)
        .args(["build", "-p", "holm-guest", "--profile", "guest", "--target", GUEST_TARGET])
        .arg("--target-dir")
        .arg(&target_dir);
    scrub_env(&mut cmd);
    // With an explicit `--target`, these flags apply to the guest and its
    // dependencies only, not to build scripts and proc macros, which must stay
    // dynamically linked to load in the compiler.
    cmd.env("CARGO_ENCODED_RUSTFLAGS", "-Ctarget-feature=+crt-static");

    let status = cmd.status().expect("run the nested cargo build of holm-guest");
    if !status.success() {
        panic!(
            "building the static holm-guest failed ({status}); its output is above. \
             Set HOLM_GUEST_BIN=/path/to/holm-guest to embed a prebuilt binary instead"
        );
    }

    let binary = target_dir.join(GUEST_TARGET).join("guest").join("holm-guest");
    if !binary.is_file() {
        panic!("the nested build succeeded but {} is missing", binary.display());
    }
    println!("cargo:rustc-env=HOLM_GUEST_EMBED={}", binary.display());
}

/// Where the nested build puts its artifacts: `guest/` under the outer target
/// directory when the user moved it with `CARGO_TARGET_DIR`, else under the
/// workspace's `target/`.
fn guest_target_dir(workspace: &Path) -> PathBuf {
    let base = env::var_os("CARGO_TARGET_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .map(|p| if p.is_absolute() { p } else { workspace.join(p) })
        .unwrap_or_else(|| workspace.join("target"));
    base.join("guest")
}

/// Removes the variables cargo sets for this build script (they describe
/// `holm`'s compilation) and the flags that would change the guest's build.
///
/// Kept on purpose: `CARGO_HOME` and the user's own cargo configuration
/// (`CARGO_NET_*`, `CARGO_HTTP_*`, `CARGO_REGISTRIES_*`, profiles), so the
/// nested build fetches and builds as the user asked; and `CARGO_MAKEFLAGS`,
/// the jobserver the outer build shares with this script, so the nested build
/// takes job slots from the same pool instead of doubling the parallelism on
/// a small machine.
fn scrub_env(cmd: &mut Command) {
    const EXACT: &[&str] = &[
        "CARGO",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_CRATE_NAME",
        "CARGO_BIN_NAME",
        "CARGO_TARGET_DIR",
        "CARGO_TARGET_TMPDIR",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_TARGET_DIR",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_ENCODED_RUSTDOCFLAGS",
        "CARGO_RUSTC_CURRENT_DIR",
        "CARGO_BUILD_RUSTC_WRAPPER",
        "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_LINKER",
        "RUSTDOC",
        "TARGET",
        "HOST",
        "OUT_DIR",
        "OPT_LEVEL",
        "PROFILE",
        "DEBUG",
        "NUM_JOBS",
    ];
    const PREFIXES: &[&str] =
        &["CARGO_MANIFEST_", "CARGO_PKG_", "CARGO_FEATURE_", "CARGO_CFG_", "__CARGO"];
    for (key, _) in env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        if EXACT.contains(&key) || PREFIXES.iter().any(|p| key.starts_with(p)) {
            cmd.env_remove(key);
        }
    }
}
