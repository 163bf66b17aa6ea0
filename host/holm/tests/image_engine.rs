//! `holm::image` against the real Docker engine: building the box image,
//! reusing it, app and package layers, build errors, and making the base with
//! debootstrap. Gated by `HOLM_E2E` / `CI` (see `common`).
//!
//! The first run builds the desktop layer (Chromium and fonts), which takes
//! minutes; later runs hit the engine's layer cache.

mod common;

use bollard::Docker;
use holm::image::{
    self, ImageError, ImageRequest, LABEL_APPS, LABEL_GUEST, LABEL_HASH, LABEL_IMAGE,
    LABEL_PACKAGES, Progress,
};

/// Builds share the engine's layer cache; run them one at a time so a cold
/// cache builds the desktop layer once rather than once per test.
static BUILDS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Runs `ensure_image` and returns its result with everything it reported.
async fn ensure(docker: &Docker, request: &ImageRequest) -> (image::Result<String>, Vec<Progress>) {
    let mut events = Vec::new();
    let result = image::ensure_image(docker, request, &mut |p| events.push(p)).await;
    (result, events)
}

fn built(events: &[Progress]) -> bool {
    events.iter().any(|p| matches!(p, Progress::Built { .. }))
}

fn reused(events: &[Progress]) -> bool {
    events.iter().any(|p| matches!(p, Progress::Reused { .. }))
}

fn build_output(events: &[Progress]) -> usize {
    events.iter().filter(|p| matches!(p, Progress::Output(_))).count()
}

#[tokio::test]
async fn default_image_is_built_then_reused_and_runs_the_guest() {
    let Some(docker) = common::docker_or_skip().await else { return };
    let _serial = BUILDS.lock().await;

    let (first, events) = ensure(&docker, &ImageRequest::default()).await;
    let tag = first.unwrap_or_else(|e| panic!("{e}"));
    assert!(tag.starts_with("holm-box:"), "{tag}");
    // Either this run built it, or an earlier run did and it was reused.
    assert!(built(&events) || reused(&events), "{events:?}");

    // With nothing changed, the second call only inspects: no build output.
    let (second, events) = ensure(&docker, &ImageRequest::default()).await;
    assert_eq!(second.unwrap(), tag);
    assert!(reused(&events), "{events:?}");
    assert!(!built(&events), "{events:?}");
    assert_eq!(build_output(&events), 0, "{events:?}");

    let inspect = docker.inspect_image(&tag).await.unwrap();
    let config = inspect.config.unwrap();
    assert_eq!(config.entrypoint.unwrap(), ["/usr/local/bin/holm-guest"]);
    let mut ports: Vec<_> = config.exposed_ports.unwrap().into_iter().collect();
    ports.sort();
    // The guest, the viewer port (noVNC pages and RFB over WebSocket), the bridge.
    assert_eq!(ports, ["6080/tcp", "8765/tcp", "9223/tcp"]);
    assert!(config.env.unwrap().contains(&"LANG=C.UTF-8".to_owned()));
    let labels = config.labels.unwrap();
    assert_eq!(labels[LABEL_IMAGE], "1");
    assert_eq!(labels[LABEL_APPS], "");
    assert_eq!(labels[LABEL_PACKAGES], "");
    assert_eq!(labels[LABEL_GUEST], image::guest_sha256());
    assert!(tag.ends_with(&labels[LABEL_HASH][..16]), "{tag} vs {}", labels[LABEL_HASH]);

    // The guest in the image is the one this holm embeds, and the desktop
    // and the baseline tools are there.
    let (code, out) =
        common::run_in(&docker, &tag, &["sha256sum", "/usr/local/bin/holm-guest"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with(image::guest_sha256()), "{out}");
    let tools = "Xvfb fluxbox x11vnc chromium xterm convert import xdotool xwd";
    let (code, out) = common::run_in(
        &docker,
        &tag,
        &["sh", "-c", &format!("for t in {tools}; do command -v $t || exit 1; done")],
    )
    .await;
    assert_eq!(code, 0, "a tool is missing: {out}");

    let listed = image::list_images(&docker).await.unwrap();
    let summary = listed.iter().find(|s| s.tag.as_deref() == Some(tag.as_str())).expect("listed");
    assert!(summary.apps.is_empty() && summary.packages.is_empty(), "{summary:?}");
    assert!(summary.size > 100 << 20, "{summary:?}");
    assert!(summary.created > 0);
}

#[tokio::test]
async fn a_package_makes_its_own_image_built_once_for_concurrent_callers() {
    let Some(docker) = common::docker_or_skip().await else { return };
    let _serial = BUILDS.lock().await;

    let default_tag =
        ensure(&docker, &ImageRequest::default()).await.0.unwrap_or_else(|e| panic!("{e}"));
    let jq = ImageRequest::new([] as [&str; 0], ["jq"]).unwrap();
    // Start from a clean slate, so this run really builds the jq image.
    let base_id = image::ensure_base(&docker, &mut |_| {}).await.unwrap();
    let jq_tag = image::image_tag(&jq, image::GUEST_BINARY, &base_id).unwrap();
    common::remove_image(&docker, &jq_tag).await;

    // Two callers at once: one builds, the other waits and reuses.
    let ((a, a_events), (b, b_events)) = tokio::join!(ensure(&docker, &jq), ensure(&docker, &jq));
    let result = async {
        let (a, b) = (a.unwrap_or_else(|e| panic!("{e}")), b.unwrap_or_else(|e| panic!("{e}")));
        assert_eq!(a, jq_tag);
        assert_eq!(b, jq_tag);
        assert_ne!(jq_tag, default_tag);
        assert_eq!(
            [built(&a_events), built(&b_events)].iter().filter(|b| **b).count(),
            1,
            "exactly one caller builds:\n{a_events:?}\n{b_events:?}"
        );
        assert!(reused(&a_events) != reused(&b_events), "the other reuses");

        let (code, out) = common::run_in(&docker, &jq_tag, &["jq", "--version"]).await;
        assert_eq!(code, 0, "{out}");
        assert!(out.starts_with("jq-"), "{out}");
        // The default image has no jq.
        let (code, _) = common::run_in(&docker, &default_tag, &["sh", "-c", "command -v jq"]).await;
        assert_ne!(code, 0, "jq is in the default image");

        let labels = docker.inspect_image(&jq_tag).await.unwrap().config.unwrap().labels.unwrap();
        assert_eq!(labels[LABEL_PACKAGES], "jq");
        assert_eq!(labels[LABEL_APPS], "");
    };
    // Catch a failed check so the image is removed either way.
    let outcome = futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(result)).await;
    common::remove_image(&docker, &jq_tag).await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

#[tokio::test]
async fn a_failing_step_fails_with_the_builds_error() {
    let Some(docker) = common::docker_or_skip().await else { return };
    let _serial = BUILDS.lock().await;

    let request = ImageRequest::new([] as [&str; 0], ["holm-no-such-package"]).unwrap();
    let (result, events) = ensure(&docker, &request).await;
    let err = result.expect_err("a package that does not exist cannot be installed");
    let ImageError::BuildFailed { tag, message, output, .. } = &err else { panic!("{err}") };
    assert!(message.contains("returned a non-zero code"), "{message}");
    assert!(output.contains("Unable to locate package holm-no-such-package"), "{output}");
    assert!(err.to_string().contains("Unable to locate package"), "{err}");
    assert!(!built(&events));
    assert!(docker.inspect_image(tag).await.is_err(), "a failed build left {tag}");
}

#[tokio::test]
async fn bad_requests_are_refused_before_the_engine_is_used() {
    // No engine needed: validation comes first. Kept here to show the
    // contract of `ensure_image` itself.
    let docker = Docker::connect_with_defaults().unwrap();
    let unknown = ImageRequest { apps: vec!["photoshop".into()], ..ImageRequest::default() };
    let (result, events) = ensure(&docker, &unknown).await;
    let err = result.unwrap_err();
    assert!(matches!(err, ImageError::UnknownApp { .. }), "{err}");
    assert!(err.to_string().contains("vscode"), "{err}");
    assert!(events.is_empty());

    let bad = ImageRequest { packages: vec!["jq; reboot".into()], ..ImageRequest::default() };
    let err = ensure(&docker, &bad).await.0.unwrap_err();
    assert!(matches!(err, ImageError::InvalidPackage { .. }), "{err}");
}

#[tokio::test]
async fn base_is_made_with_debootstrap_when_it_cannot_be_pulled() {
    let Some(docker) = common::docker_or_skip().await else { return };
    let tag = format!("holm-test-base:{}", common::random_suffix());

    let mut events = Vec::new();
    let made = image::ensure_base_as(&docker, &tag, &mut |p| events.push(p)).await;
    let checks = async {
        let id = made.unwrap_or_else(|e| panic!("{e}"));
        assert!(
            events.iter().any(|p| matches!(p, Progress::Status(s)
                if s.contains("is missing and cannot be pulled") && s.contains("making it with debootstrap"))),
            "{events:?}"
        );
        assert!(events.contains(&Progress::Built { tag: tag.clone() }), "{events:?}");
        // What debootstrap fetched was checked against Debian's keyring
        // (`--keyring`), not taken unchecked.
        assert!(
            events
                .iter()
                .any(|p| matches!(p, Progress::Output(s) if s.contains("Valid Release signature"))),
            "{events:?}"
        );

        // A working Debian bookworm with apt sources for updates and
        // security, and no package lists or caches baked in.
        let script = "set -e; . /etc/os-release; echo $VERSION_CODENAME; \
                      cat /etc/apt/sources.list.d/debian.sources; \
                      test -z \"$(ls /var/lib/apt/lists | grep -v -x -e lock -e partial)\"; \
                      apt-get --version | head -n1";
        let (code, out) = common::run_in(&docker, &tag, &["sh", "-c", script]).await;
        assert_eq!(code, 0, "{out}");
        assert!(out.starts_with("bookworm\n"), "{out}");
        assert!(out.contains("bookworm-security"), "{out}");
        assert!(out.contains("apt 2."), "{out}");

        // Once made, it is there: the next call answers with the same id and
        // reports nothing.
        let mut again = Vec::new();
        let id2 = image::ensure_base_as(&docker, &tag, &mut |p| again.push(p)).await.unwrap();
        assert_eq!(id, id2);
        assert!(again.is_empty(), "{again:?}");
    };
    let outcome = futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(checks)).await;
    common::remove_image(&docker, &tag).await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}
