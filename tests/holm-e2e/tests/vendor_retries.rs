//! A create the vendor answered with a 5xx after it made the sandbox,
//! against a list that lags a create (issue 28, the audit's cross-cutting
//! finding 1): holm finds the sandbox by its unique name (Daytona reads a
//! sandbox by name at once) instead of trusting the list, which does not
//! show it yet, and making the box again, which Daytona refuses as a
//! duplicate name; at E2B, which has no names, the list is looked in again
//! for a few seconds rather than once.

use std::sync::atomic::Ordering;

use holm_standins::Fault;
use holm_testkit::cloud::{Cloud, CloudServer, Standin};
use holm_testkit::e2e_enabled;

/// A box made at `cloud` whose list lags a create by `lag_ms`, the first
/// create (`POST path`) answered 503 after the stand-in made the sandbox;
/// asserts holm asked to create only that once.
async fn created_after_a_503(cloud: Cloud, path: &str, lag_ms: u64) -> (CloudServer, String) {
    holm_testkit::ensure_image().await;
    let c = cloud.server().await;
    c.standin.controls().list_lag_ms.store(lag_ms, Ordering::Relaxed);
    c.standin.controls().faults.inject(Fault::new(path, 503, 1).method("POST").after_handling());
    let id = c.new_box().await;
    let creates: Vec<u16> = c
        .standin
        .controls()
        .calls
        .to("POST", path)
        .into_iter()
        .filter(|call| call.path == path)
        .map(|call| call.status)
        .collect();
    assert_eq!(creates, [503], "the sandbox the 503 made was found, not made again");
    (c, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daytona_create_answered_503_after_it_made_the_sandbox_is_found_not_made_twice() {
    if !e2e_enabled().await {
        return;
    }
    // The list shows a new sandbox only after ten minutes: never, here.
    let (c, id) = created_after_a_503(Cloud::Daytona, "/api/sandbox", 600_000).await;
    let Standin::Daytona(d) = &c.standin else { unreachable!("a Daytona stand-in") };
    let made = d.sandbox_ids();
    assert_eq!(made.len(), 1, "one sandbox: {made:?}");
    assert_eq!(
        d.labels(&made[0]).and_then(|l| l.get("holm.box").cloned()).as_deref(),
        Some(id.as_str())
    );
}

/// At E2B, which has no unique names, the list is looked in again over a
/// few seconds: a list that lags the create by a second and a half still
/// shows the sandbox the 503 made, and no second one is made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_e2b_create_answered_503_is_found_in_a_list_that_lags() {
    if !e2e_enabled().await {
        return;
    }
    let (c, id) = created_after_a_503(Cloud::E2b, "/v2/sandboxes", 1500).await;
    let Standin::E2b(e) = &c.standin else { unreachable!("an E2B stand-in") };
    let made = e.sandbox_ids();
    assert_eq!(made.len(), 1, "one sandbox: {made:?}");
    assert_eq!(
        e.metadata(&made[0]).and_then(|l| l.get("holm.box").cloned()).as_deref(),
        Some(id.as_str())
    );
}

/// At Vercel, whose sandbox names are unique in a project, as at Daytona:
/// the sandbox is read by its name, not looked for in a lagging list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vercel_create_answered_503_after_it_made_the_sandbox_is_read_by_name() {
    if !e2e_enabled().await {
        return;
    }
    // The list shows a new sandbox only after ten minutes: never, here.
    let (c, id) = created_after_a_503(Cloud::Vercel, "/api/v3/sandboxes", 600_000).await;
    let Standin::Vercel(v) = &c.standin else { unreachable!("a Vercel stand-in") };
    assert_eq!(v.sandbox_names(), [id], "one sandbox, named after the box");
}
