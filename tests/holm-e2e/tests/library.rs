//! `Computer::builder()`: a box driven from Rust with no server.

use holm::Computer;
use holm_proto::guest::ScreenshotOptions;
use holm_testkit::{container_exists, e2e_enabled, ensure_image};

#[tokio::test]
async fn a_computer_launches_runs_commands_and_is_removed() {
    if !e2e_enabled().await {
        return;
    }
    ensure_image().await;
    let computer =
        Computer::builder().runtime("docker").browser(false).launch().await.expect("launch");
    let info = computer.info().await.expect("info");
    assert_eq!(info.screens.len(), 1);
    let out = computer.exec(&["sh", "-c", "echo $((6 * 7))"]).await.expect("exec");
    assert_eq!(out.stdout, "42\n");
    let shot = computer
        .screenshot(0, &ScreenshotOptions { max_width: Some(640), ..Default::default() })
        .await
        .unwrap();
    assert_eq!(shot.meta.width, 640);
    assert!(computer.guest_url().starts_with("http://127.0.0.1:"));
    let id = computer.id().to_owned();
    assert!(container_exists(&id).await);
    computer.remove().await.expect("remove");
    assert!(!container_exists(&id).await);
}

#[tokio::test]
async fn an_unknown_runtime_is_refused_with_the_names() {
    let err = Computer::builder().runtime("hyperv").launch().await.unwrap_err();
    assert!(
        matches!(&err, holm::Error::UnknownRuntime { known, .. } if known == &["docker"]),
        "{err}"
    );
}
