//! holm's Runtime Cloud adapter against its stand-in (issue 28, the audit's
//! ranked item 10): every change carries an `Idempotency-Key` that Runtime
//! Cloud remembers for 24 hours and answers again, so building an image
//! again after a failed build needs a key of its own, or the failed
//! build's answer comes back and the image never builds.

use holm::image::ImageRequest;
use holm::runtime::remote::{Addresses, Recipe, Vendor};
use holm::runtime::runtime_cloud::{Options, RuntimeCloud};
use holm_standins::runtime_cloud::RuntimeCloudStandin;
use holm_testkit::e2e_enabled;

#[tokio::test(flavor = "multi_thread")]
async fn runtime_cloud_builds_an_image_again_after_a_failed_build() {
    if !e2e_enabled().await {
        return;
    }
    holm_testkit::matrix::ensure_base().await;

    let s = RuntimeCloudStandin::start().await;
    let rc = RuntimeCloud::new(
        &s.controls.key,
        Options { api_url: Some(s.api_url.clone()), addresses: Addresses::Any },
    )
    .expect("the adapter");
    let recipe = Recipe::new(&ImageRequest::default(), 4096, 2).expect("a recipe");
    let mut progress = |p: holm::image::Progress| eprintln!("[runtime-cloud] {p:?}");
    s.fail_next_image_builds(1);
    let failed = rc.image(&recipe, &mut progress).await;
    assert!(failed.is_err(), "the first build fails: {failed:?}");
    let image = rc.image(&recipe, &mut progress).await;
    let image = image.expect("the second try builds the image, not the failed answer again");
    assert!(!image.is_empty());
}
