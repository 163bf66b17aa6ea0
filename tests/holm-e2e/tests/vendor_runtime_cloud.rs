//! holm's Runtime Cloud adapter against its stand-in (issue 28, the audit's
//! ranked items 6 and 10):
//! - every change carries an `Idempotency-Key` that Runtime Cloud
//!   remembers for 24 hours and answers again, so building an image again
//!   after a failed build needs a key of its own, or the failed build's
//!   answer comes back and the image never builds;
//! - the guest runs as a background process, whose end holm sees and
//!   explains with the guest's own words.

#[allow(dead_code)]
mod traces;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use holm::image::ImageRequest;
use holm::runtime::remote::{Addresses, NewSandbox, Recipe, Resources, Vendor};
use holm::runtime::runtime_cloud::{Options, RuntimeCloud};
use holm_standins::runtime_cloud::RuntimeCloudStandin;
use holm_testkit::e2e_enabled;

/// A stand-in, holm's adapter on it, and the default box's recipe.
async fn adapter() -> (RuntimeCloudStandin, RuntimeCloud, Recipe) {
    holm_testkit::matrix::ensure_base().await;
    let s = RuntimeCloudStandin::start().await;
    let rc = RuntimeCloud::new(
        &s.controls.key,
        Options { api_url: Some(s.api_url.clone()), addresses: Addresses::Any },
    )
    .expect("the adapter");
    let recipe = Recipe::new(&ImageRequest::default(), 4096, 2).expect("a recipe");
    (s, rc, recipe)
}

#[tokio::test(flavor = "multi_thread")]
async fn runtime_cloud_builds_an_image_again_after_a_failed_build() {
    if !e2e_enabled().await {
        return;
    }
    let (s, rc, recipe) = adapter().await;
    let mut progress = |p: holm::image::Progress| eprintln!("[runtime-cloud] {p:?}");
    s.fail_next_image_builds(1);
    let failed = rc.image(&recipe, &mut progress).await;
    assert!(failed.is_err(), "the first build fails: {failed:?}");
    let image = rc.image(&recipe, &mut progress).await;
    let image = image.expect("the second try builds the image, not the failed answer again");
    assert!(!image.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn runtime_cloud_says_why_a_guest_that_ended_did() {
    if !e2e_enabled().await {
        return;
    }
    let (s, rc, recipe) = adapter().await;
    let mut progress = |p: holm::image::Progress| eprintln!("[runtime-cloud] {p:?}");
    let image = rc.image(&recipe, &mut progress).await.expect("the image");
    // A guest that refuses its configuration and ends at once.
    let new = NewSandbox {
        box_id: "box_guestends".into(),
        image,
        env: vec![
            ("HOLM_BOX_SECRET_SHA256".into(), "0".repeat(64)),
            ("HOLM_PROFILE".into(), "neither".into()),
        ],
        labels: BTreeMap::from([("holm.box".to_owned(), "box_guestends".to_owned())]),
        deadline_secs: 600,
        idle: None,
        resources: Resources { memory_mib: 4096, cpus: 2 },
    };
    let sandbox = rc.create(&new).await.expect("the sandbox");
    rc.boot(&sandbox, &new).await.expect("the guest's process is started");
    // Its end is the vendor's process state: read until it says so.
    let give_up = Instant::now() + Duration::from_secs(60);
    let why = loop {
        if let Some(why) = rc.guest_ended(&sandbox.id).await.expect("the process is read") {
            break why;
        }
        assert!(Instant::now() < give_up, "the guest's process never ended");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(why.contains("exit code 2"), "{why}");
    assert!(why.contains(r#"HOLM_PROFILE="neither": expected x11 or wayland"#), "{why}");
    // Every call it took is one Runtime Cloud documents.
    traces::check_documented_part("runtime-cloud", &s.controls.calls.all(), &["labels", "env"]);
    rc.delete(&sandbox.id).await.expect("the sandbox is removed");
}
