//! `Computer::builder()`: a box driven from Rust with no server.

use holm::Computer;
use holm_proto::guest::ScreenshotOptions;
use holm_testkit::gate::{GATE_HEADER, Gated};
use holm_testkit::matrix::Target;
use holm_testkit::{Profile, container_exists, e2e_enabled, ensure_image};

// On both engines; both profiles on Docker (the Wayland box on podman is
// the shared suite's, core.rs).
holm_testkit::suite!(a_computer_launches_runs_commands_and_is_removed:
    docker [x11, wayland],
    podman [x11],
);

/// `Computer::builder().runtime(name)` on each container engine, on each
/// display profile.
async fn a_computer_launches_runs_commands_and_is_removed(target: Target) {
    target.ensure_image().await;
    let builder = Computer::builder().runtime(target.engine.name()).browser(false);
    let builder = match target.display {
        Profile::X11 => builder,
        Profile::Wayland => builder.wayland(),
    };
    let computer = builder.launch().await.expect("launch");
    let info = computer.info().await.expect("info");
    assert_eq!(info.profile, target.display);
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
    assert!(target.container_exists(&id).await, "a container on {}", target.engine.name());
    computer.remove().await.expect("remove");
    assert!(!target.container_exists(&id).await);
}

#[tokio::test]
async fn an_unknown_runtime_is_refused_with_the_names() {
    let err = Computer::builder().runtime("hyperv").launch().await.unwrap_err();
    assert!(
        matches!(&err, holm::Error::UnknownRuntime { known, .. } if known == &["docker", "podman"]),
        "{err}"
    );
}

#[tokio::test]
async fn a_computer_on_a_runtime_behind_a_proxy_reaches_its_guest_through_the_endpoint() {
    if !e2e_enabled().await {
        return;
    }
    ensure_image().await;
    let token = holm::ids::new_secret();
    let gated = std::sync::Arc::new(Gated::new(&token));
    let computer = Computer::builder().machine(gated.clone()).launch().await.expect("launch");
    let out = computer.exec(&["echo", "through the gate"]).await.expect("exec");
    assert_eq!(out.stdout, "through the gate\n");
    assert_eq!(computer.guest().headers().collect::<Vec<_>>(), [(GATE_HEADER, token.as_str())]);
    assert_eq!(gated.refused().await, 0);
    // The bridge's access names the gate's header; with it the bridge
    // answers, without it the gate refuses.
    let access = computer.bridge(None).await.expect("bridge");
    assert_eq!(access.headers[GATE_HEADER], token);
    let version = format!("{}/json/version", access.http_url);
    let mut with = reqwest::Client::new().get(&version);
    for (k, v) in &access.headers {
        with = with.header(k, v);
    }
    let v: serde_json::Value = with.send().await.unwrap().json().await.unwrap();
    assert!(
        v["webSocketDebuggerUrl"]
            .as_str()
            .unwrap()
            .starts_with(&access.http_url.replace("http", "ws"))
    );
    let without = reqwest::Client::new()
        .get(&version)
        .header("Authorization", &access.headers["Authorization"])
        .send()
        .await
        .unwrap();
    assert_eq!(without.status(), 403);
    let id = computer.id().to_owned();
    computer.remove().await.expect("remove");
    assert!(!container_exists(&id).await);
}
