//! The Python SDK's suite (`sdks/python/tests`, pytest) against a real holmd
//! and real Docker boxes: this test starts a holmd ([`TestServer`]), installs
//! `sdks/python` the way `pip install ./sdks/python` does (offline: its
//! dependencies are the pinned test environment's), and runs pytest with the
//! server's URL and token in `HOLM_SERVER_URL` and `HOLM_SERVER_TOKEN`. The
//! suite drives boxes with the SDK, the drop-in computers with the
//! frameworks' own packages (openai-agents, anthropic, e2b-desktop), the
//! bridge with Python's Playwright, and runs the examples and the README's
//! snippet.
//!
//! `.ci/setup` makes the environment: a venv at `/opt/holm-ci/sdk-python`
//! with the packages pinned in `sdks/python/requirements-test.txt`
//! (`HOLM_SDK_PYTHON` names another interpreter).

use std::path::PathBuf;
use std::process::Command;

use holm_testkit::{TestServer, e2e_enabled};

/// The interpreter with the SDK's test environment.
fn python() -> PathBuf {
    let python = std::env::var_os("HOLM_SDK_PYTHON")
        .map_or_else(|| PathBuf::from("/opt/holm-ci/sdk-python/bin/python"), PathBuf::from);
    assert!(
        python.exists(),
        "the Python SDK's test environment is not at {}: run .ci/setup (it makes a venv with the packages pinned in sdks/python/requirements-test.txt), or set HOLM_SDK_PYTHON",
        python.display()
    );
    python
}

fn sdk_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sdks/python")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdks_suite_passes_against_a_real_holmd() {
    if !e2e_enabled().await {
        return;
    }
    let python = python();
    let sdk = sdk_dir().canonicalize().expect("sdks/python");
    let site = tempfile::tempdir().expect("a directory for the installed package");
    let install = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index"])
        .args(["--no-deps", "--no-build-isolation", "--target"])
        .arg(site.path())
        .arg(&sdk)
        .env("PIP_NO_INPUT", "1")
        .output()
        .expect("run pip");
    assert!(
        install.status.success(),
        "pip install sdks/python failed:\n{}{}",
        String::from_utf8_lossy(&install.stdout),
        String::from_utf8_lossy(&install.stderr)
    );
    let server = TestServer::start().await;
    let mut pytest = Command::new(&python);
    pytest
        .args(["-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfE", "--durations=10"])
        .arg(sdk.join("tests"))
        .current_dir(&sdk)
        // The installed package first, then the tests' own helpers.
        .env("PYTHONPATH", format!("{}:{}", site.path().display(), sdk.join("tests").display()))
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("HOLM_SERVER_URL", &server.url)
        .env("HOLM_SERVER_TOKEN", &server.token)
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .env_remove("ALL_PROXY")
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .env_remove("all_proxy");
    let status = tokio::task::spawn_blocking(move || pytest.status())
        .await
        .expect("pytest's thread")
        .expect("run pytest");
    assert!(status.success(), "the Python SDK's suite failed (its output is above): {status}");
    drop(server);
}
