//! The TypeScript SDK's suite (`sdks/typescript/tests`, node's test runner)
//! against a real holmd and real Docker boxes: this test starts a holmd
//! ([`TestServer`]) and runs `node --test` with the server's URL and token in
//! `HOLM_SERVER_URL` and `HOLM_SERVER_TOKEN`. The suite drives boxes with the
//! SDK (its committed `dist/`, which it checks is what the sources compile
//! to), the bridge with playwright-core, installs the package the way
//! `npm install ./sdks/typescript` does (offline: it has no dependencies),
//! and compiles and runs the TypeScript agent loop and the README's snippet
//! against that installed copy.
//!
//! `.ci/setup` makes the environment: the dev packages pinned in
//! `sdks/typescript/package-lock.json`, installed with `npm ci`.

use std::path::PathBuf;
use std::process::Command;

use holm_testkit::{TestServer, e2e_enabled};

fn sdk_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sdks/typescript")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdks_suite_passes_against_a_real_holmd() {
    if !e2e_enabled().await {
        return;
    }
    let sdk = sdk_dir().canonicalize().expect("sdks/typescript");
    assert!(
        sdk.join("node_modules/typescript/bin/tsc").exists(),
        "the TypeScript SDK's dev packages are not in {}: run .ci/setup (it runs npm ci there, from the lockfile)",
        sdk.join("node_modules").display()
    );
    let server = TestServer::start().await;
    let mut node = Command::new("node");
    node.args(["--test", "--test-reporter=spec", "tests/suite.test.mjs"])
        .current_dir(&sdk)
        .env("HOLM_SERVER_URL", &server.url)
        .env("HOLM_SERVER_TOKEN", &server.token)
        // npm stays offline: the package has nothing to fetch.
        .env("npm_config_offline", "true")
        .env_remove("NODE_OPTIONS")
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .env_remove("ALL_PROXY")
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .env_remove("all_proxy");
    let status = tokio::task::spawn_blocking(move || node.status())
        .await
        .expect("node's thread")
        .expect("run node (Node.js 18 or later; .ci/setup installs it)");
    assert!(status.success(), "the TypeScript SDK's suite failed (its output is above): {status}");
    drop(server);
}
