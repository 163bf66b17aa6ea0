//! holm's Vercel adapter against the Vercel stand-in made as strict as
//! Vercel's sources say Vercel is (issue 28, the audit's ranked item 9):
//! on a Hobby team a sandbox lives at most 45 minutes, and holm refuses a
//! longer box before it builds or pushes any image, naming the plan's
//! limit.

use holm::image::ImageRequest;
use holm::runtime::Runtime;
use holm::runtime::remote::{Addresses, Remote, Vendor as _};
use holm::runtime::vercel::{Options, Vercel};
use holm::spec::resolve;
use holm_proto::host::{BoxSpec, Placement};
use holm_standins::vercel::VercelStandin;
use holm_testkit::e2e_enabled;

#[tokio::test(flavor = "multi_thread")]
async fn vercel_hobby_refuses_a_box_longer_than_45_minutes_before_any_image() {
    if !e2e_enabled().await {
        return;
    }
    let s = VercelStandin::start().await;
    s.set_plan("hobby");
    let vercel = Vercel::new(
        &s.controls.key,
        Options {
            team_id: s.team_id.clone(),
            project_id: s.project_id.clone(),
            api_url: Some(s.api_url.clone()),
            registry_url: Some(s.registry_url.clone()),
            addresses: Addresses::Any,
        },
    )
    .expect("the adapter");
    // A box of 45 minutes is one Hobby runs.
    vercel.admit(45 * 60).await.expect("45 minutes fit the Hobby plan");

    let runtime = Remote::new("vercel", vercel);
    let placement = Placement { expires_after_secs: Some(3600), ..Placement::default() };
    let resolved =
        resolve(&BoxSpec::default(), &placement, &runtime.can(), runtime.lifetimes().offered)
            .expect("a box of an hour is within Vercel's 24 hours");
    let mut progress = |p: holm::image::Progress| eprintln!("[vercel] {p:?}");
    let refused = runtime
        .prepare_image_for(&ImageRequest::default(), &resolved, &mut progress)
        .await
        .expect_err("an hour is over the Hobby plan's 45 minutes");
    let said = refused.to_string();
    assert!(said.contains("Hobby") && said.contains("45 minutes"), "{said}");
    assert!(s.pushed().is_empty(), "nothing was pushed: {:?}", s.pushed());
}
