//! `examples/e2b.rs`, `examples/daytona.rs`, `examples/modal.rs`,
//! `examples/runtime_cloud.rs` and `examples/vercel.rs` run as users run them
//! (`cargo run --example e2b`), against the vendors' stand-ins: the
//! vendor's own variables point them there. The workspace's tests build the
//! examples (`cargo test` builds every example); this runs the binaries.

use std::path::PathBuf;

use holm_testkit::cloud::{Cloud, Standin};
use holm_testkit::{e2e_enabled, ensure_image};

/// The built example `name`, beside this test's own binary.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("this test's path");
    let profile = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>");
    let path = profile.join("examples").join(name);
    assert!(
        path.exists(),
        "{} is not built: run the workspace's tests (`cargo test --workspace` builds every example), or `cargo build -p holm-examples --examples`",
        path.display()
    );
    path
}

async fn runs_against_the_standin(cloud: Cloud) {
    if !e2e_enabled().await {
        return;
    }
    ensure_image().await;
    let standin = Standin::start(cloud).await;
    let binary = example(cloud.name());
    let env = standin.env();
    let out =
        tokio::process::Command::new(&binary).envs(env).output().await.expect("run the example");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the {} example failed:\n{stdout}\n{stderr}", cloud.name());
    assert!(stdout.contains(&format!("runs on {}", cloud.name())), "{stdout}");
    assert!(stdout.contains("screenshot: 1280x800"), "{stdout}");
    assert!(stdout.contains("kernel: Linux"), "{stdout}");
    assert!(stdout.contains("file: hello from holm"), "{stdout}");
    assert!(stdout.trim_end().ends_with("removed"), "{stdout}");
    assert!(!stdout.contains(standin.key()) && !stderr.contains(standin.key()), "the key came out");
    standin.reap_now().await;
    let left = match &standin {
        Standin::E2b(s) => s.sandbox_ids(),
        Standin::Daytona(s) => s.sandbox_ids(),
        Standin::Modal(s) => s.sandbox_ids(),
        Standin::RuntimeCloud(s) => s.sandbox_ids(),
        Standin::Vercel(s) => s.sandbox_names(),
    };
    assert!(left.is_empty(), "the example left sandboxes: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_e2b_example_runs_against_the_stand_in() {
    runs_against_the_standin(Cloud::E2b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daytona_example_runs_against_the_stand_in() {
    runs_against_the_standin(Cloud::Daytona).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_modal_example_runs_against_the_stand_in() {
    runs_against_the_standin(Cloud::Modal).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runtime_cloud_example_runs_against_the_stand_in() {
    runs_against_the_standin(Cloud::RuntimeCloud).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vercel_example_runs_against_the_stand_in() {
    runs_against_the_standin(Cloud::Vercel).await;
}
