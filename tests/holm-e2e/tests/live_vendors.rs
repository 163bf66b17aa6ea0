//! Live checks at the real vendors, for people with keys: the shared box
//! suite (`core.rs`'s `a_box_lives_its_whole_life`, through a holmd whose
//! runtime named after the vendor comes from the vendor's own variables, as
//! `HOLM_SERVER_SANDBOXES` makes it) against each vendor whose variables are
//! all set:
//!
//! - E2B: `E2B_API_KEY` (and `E2B_API_URL`, `E2B_SANDBOX_URL`);
//! - Daytona: `DAYTONA_API_KEY` (and `DAYTONA_API_URL`, `DAYTONA_TARGET`);
//! - Modal: `MODAL_TOKEN_ID` and `MODAL_TOKEN_SECRET`;
//! - Runtime Cloud: `RUNTIME_API_KEY` (and `RUNTIME_API_URL`);
//! - Vercel: `VERCEL_TOKEN`, `VERCEL_TEAM_ID` and `VERCEL_PROJECT_ID` (and
//!   a local Docker engine: holmd builds the box image there and pushes it).
//!
//! A vendor without them is NOT RUN, and the test prints a line saying so
//! and which variable is missing: that is the test's answer for it, not a
//! pass (read the output: `-- --nocapture`). With no keys, as in CI,
//! nothing beyond loopback is contacted
//! (`with_no_keys_nothing_is_planned_and_every_vendor_says_not_run`).
//! Every sandbox a run made is removed when its server is dropped, also
//! when the suite fails (`holm_testkit::live::Sweeper`); one that could not
//! be removed is printed, to remove by hand
//! (`a_failing_run_leaves_no_sandbox_at_the_vendor`, against E2B's
//! stand-in).
//!
//! ```sh
//! E2B_API_KEY=e2b_... cargo test -p holm-e2e --test live_vendors -- --nocapture --test-threads 1
//! ```

mod box_life;

use futures_util::FutureExt as _;
use holm_proto::host::{BoxState, CreateBox, Placement};
use holm_testkit::cloud::{Cloud, Standin};
use holm_testkit::live::{self, Planned};
use holm_testkit::matrix::Target;

/// Each vendor with its variables through the shared box suite, one after
/// another; every other vendor's "not run" line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shared_box_suite_at_each_vendor_with_a_key() {
    let plan = live::plan_from_env();
    for line in live::report(&plan) {
        println!("{line}");
    }
    for planned in plan {
        if let Planned::Run(cloud, _) = planned {
            println!("live {}: the shared box suite starts", cloud.name());
            box_life::a_box_lives_its_whole_life(Target::live(cloud)).await;
            println!("live {}: the shared box suite passed", cloud.name());
        }
    }
}

/// With none of the vendors' variables, no vendor is planned (so nothing
/// is contacted) and every vendor's line says NOT RUN with the variable
/// it needs.
#[test]
fn with_no_keys_nothing_is_planned_and_every_vendor_says_not_run() {
    let plan = live::plan(&|_| None);
    assert!(plan.iter().all(|p| matches!(p, Planned::NotRun(..))), "{plan:?}");
    let lines = live::report(&plan);
    let names: Vec<&str> = live::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(names, ["e2b", "daytona", "modal", "runtime-cloud", "vercel"]);
    for (line, (name, var)) in lines.iter().zip(names.iter().zip([
        "E2B_API_KEY",
        "DAYTONA_API_KEY",
        "MODAL_TOKEN_SECRET",
        "RUNTIME_API_KEY",
        "VERCEL_TOKEN",
    ])) {
        assert!(line.starts_with(&format!("live {name}: NOT RUN")), "{line}");
        assert!(line.contains(var), "{line}");
    }
}

/// The live path (a runtime from the vendor's variables, as at a real
/// vendor) pointed at E2B's stand-in: a box runs, then the run fails while
/// it runs; the server's sweep removes its sandbox through the vendor's
/// API.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_run_leaves_no_sandbox_at_the_vendor() {
    if !holm_testkit::e2e_enabled().await {
        return;
    }
    holm_testkit::ensure_image().await;
    let standin = Standin::start(Cloud::E2b).await;
    let vars = standin.env();
    let get = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let Planned::Run(Cloud::E2b, sandbox) = live::plan(&get).remove(0) else {
        panic!("the stand-in's variables plan E2B");
    };
    // Its table lets the runtime reach the stand-in on loopback.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("runtimes.toml");
    std::fs::write(&file, standin.runtimes_file()).unwrap();
    let server = live::server(sandbox, Some(file)).await;
    let request = CreateBox {
        placement: Placement { runtime: Some("e2b".into()), ..Placement::default() },
        ..CreateBox::default()
    };
    let info = server.client.create_box(&request, Some(900)).await.expect("a box at E2B");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    let machine = server.service.get(&info.id).unwrap().record().machine_id.unwrap();
    assert!(standin.has_sandbox(&machine));

    let failed = std::panic::AssertUnwindSafe(async move {
        let _server = server;
        panic!("the suite failed while the box ran");
    })
    .catch_unwind()
    .await;
    assert!(failed.is_err());
    assert!(!standin.has_sandbox(&machine), "the sandbox is left at the vendor");
    let deleted = standin.controls().calls.to("DELETE", &format!("/sandboxes/{machine}"));
    assert!(deleted.iter().any(|c| c.status < 300), "removed through the API: {deleted:?}");
}
