//! holm's Daytona adapter against the Daytona stand-in made as strict as
//! Daytona's sources say Daytona is (issue 28, the audit's ranked item 4):
//! a snapshot unused for 14 days goes `inactive`, and holm activates it
//! (`POST /snapshots/{id}/activate`) instead of waiting an hour for it;
//! and item 8: a snapshot is built in the region the runtime's `target`
//! names.

use std::collections::BTreeMap;

use holm::image::ImageRequest;
use holm::runtime::daytona::{Daytona, Options};
use holm::runtime::remote::{Addresses, NewSandbox, Recipe, Resources, Vendor};
use holm_standins::daytona::{DEACTIVATE_AFTER_SECS, DaytonaStandin};
use holm_testkit::e2e_enabled;

#[tokio::test(flavor = "multi_thread")]
async fn daytona_activates_a_snapshot_that_went_inactive_unused() {
    if !e2e_enabled().await {
        return;
    }
    holm_testkit::matrix::ensure_base().await;

    let s = DaytonaStandin::start().await;
    let daytona = Daytona::new(
        &s.controls.key,
        Options { api_url: Some(s.api_url.clone()), target: None, addresses: Addresses::Any },
    )
    .expect("the adapter");
    let recipe = Recipe::new(&ImageRequest::default(), 4096, 2).expect("a recipe");
    let mut progress = |p: holm::image::Progress| eprintln!("[daytona] {p:?}");
    let name = daytona.image(&recipe, &mut progress).await.expect("the snapshot");
    assert_eq!(s.snapshot_state(&name).as_deref(), Some("active"));

    // Two weeks without a box of this recipe.
    s.controls.clock.advance(DEACTIVATE_AFTER_SECS);
    assert_eq!(s.snapshot_state(&name).as_deref(), Some("inactive"));

    // The old adapter waited up to an hour for `inactive` to change: the
    // guard fails the test long before that.
    let again = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        daytona.image(&recipe, &mut progress),
    )
    .await
    .expect("an inactive snapshot is activated, not waited on")
    .expect("the snapshot again");
    assert_eq!(again, name);
    assert_eq!(s.snapshot_state(&name).as_deref(), Some("active"));
    let activations: Vec<_> = s
        .controls
        .calls
        .all()
        .into_iter()
        .filter(|c| c.method == "POST" && c.path.ends_with("/activate"))
        .collect();
    assert_eq!(activations.len(), 1, "{activations:?}");
    assert_eq!(activations[0].status, 200);
}

/// Item 8: a runtime with a `target` builds its snapshot in that region
/// (`regionId`), or Daytona refuses every sandbox made from it there.
#[tokio::test(flavor = "multi_thread")]
async fn daytona_builds_the_snapshot_in_the_targets_region() {
    if !e2e_enabled().await {
        return;
    }
    holm_testkit::matrix::ensure_base().await;

    let s = DaytonaStandin::start().await;
    let daytona = Daytona::new(
        &s.controls.key,
        Options {
            api_url: Some(s.api_url.clone()),
            target: Some("eu".into()),
            addresses: Addresses::Any,
        },
    )
    .expect("the adapter");
    let recipe = Recipe::new(&ImageRequest::default(), 4096, 2).expect("a recipe");
    let mut progress = |p: holm::image::Progress| eprintln!("[daytona] {p:?}");
    let image = daytona.image(&recipe, &mut progress).await.expect("the snapshot");
    let new = NewSandbox {
        box_id: "bx-daytona-eu".into(),
        image,
        env: Vec::new(),
        labels: BTreeMap::from([("holm.runtime".to_owned(), "daytona".to_owned())]),
        deadline_secs: 600,
        idle: None,
        resources: Resources { memory_mib: 4096, cpus: 2 },
    };
    let sandbox = daytona.create(&new).await.expect("a sandbox in the target's region");
    daytona.delete(&sandbox.id).await.expect("delete");
}
