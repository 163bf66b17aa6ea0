//! microsandbox, as far as this host allows: `msb` from PyPI is found, a
//! trial microVM decides whether it is available, and the image hand-off
//! (`msb load` of the image saved from Docker) runs for real.
//!
//! On a host whose KVM cannot boot a guest (this machine's is PVM:
//! `KVM_CREATE_VM` succeeds and every boot fails), the runtime is listed
//! `unavailable` with the hypervisor's reason, and a box on it is refused
//! in the one error shape, leaving nothing behind. On a host whose trial
//! boots, the same test makes a box there and drives it instead.

use holm::runtime::Runtime;
use holm::runtime::microsandbox::{self, MicrosandboxRuntime};
use holm_proto::ErrorCode;
use holm_proto::host::{BoxState, CreateBox, Placement, RuntimeState};
use holm_testkit::matrix::Engine;
use holm_testkit::{TestServer, e2e_enabled, ensure_image};

/// The `msb` the tests use: on the PATH, as `.ci/setup` installs it.
fn msb() -> std::path::PathBuf {
    microsandbox::find_program(None)
        .unwrap_or_else(|e| panic!("the microsandbox tests need msb (run .ci/setup): {e}"))
}

/// The sandboxes msb knows, by name.
/// msb's sandboxes, but other processes' trials (a server that another
/// program runs beside this test may be trying a microVM just now).
async fn sandboxes() -> Vec<String> {
    let ours = format!("holm-trial-{}-", std::process::id());
    all_sandboxes()
        .await
        .into_iter()
        .filter(|n| !n.starts_with("holm-trial-") || n.starts_with(&ours))
        .collect()
}

async fn all_sandboxes() -> Vec<String> {
    let out = tokio::process::Command::new(msb())
        .args(["ls", "--format", "json"])
        .output()
        .await
        .expect("run msb ls");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("msb ls answers JSON");
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn microsandbox_is_available_only_when_a_trial_microvm_boots() {
    if !e2e_enabled().await {
        return;
    }
    msb();
    let before = sandboxes().await;
    ensure_image().await;
    let server = TestServer::start_without_image(|c| {
        c.runtimes = Some(vec!["docker".into(), "microsandbox".into()]);
    })
    .await;
    let info = server.client.runtime("microsandbox").await.expect("found");
    assert_eq!(serde_json::to_value(info.environment).unwrap(), "microvm");
    assert!(!info.can.pause && !info.can.browser_profile, "{:?}", info.can);
    let request = CreateBox {
        placement: Placement { runtime: Some("microsandbox".into()), ..Placement::default() },
        ..CreateBox::default()
    };
    if info.state == RuntimeState::Available {
        // A host whose KVM runs guests: a box runs there and answers.
        let b = server.client.create_box(&request, Some(900)).await.expect("a box");
        assert_eq!(b.state, BoxState::Running, "{b:?}");
        let out = server.client.boxed(&b.id).exec(&["uname", "-r"]).await.unwrap();
        assert_eq!(out.exit_code, Some(0));
        server.client.remove_box(&b.id).await.unwrap();
        return;
    }
    // Here: the trial boot's own reason, not a device check.
    let reason = info.reason.expect("an unavailable runtime says why");
    assert!(reason.contains("a trial microVM did not boot"), "{reason}");
    assert!(reason.contains("KVM"), "{reason}");
    let e = server.client.create_box(&request, None).await.unwrap_err().to_api_error();
    assert_eq!(e.code, ErrorCode::Unavailable, "{e:?}");
    assert!(e.message.contains("a trial microVM did not boot"), "{e:?}");
    assert!(e.hint.as_deref().unwrap().contains("holm runtime get microsandbox"), "{e:?}");
    assert!(e.request_id.is_some());
    // Nothing behind: no record, no sandbox, the trial's removed too.
    assert!(server.client.all_boxes().await.unwrap().is_empty());
    assert_eq!(sandboxes().await, before, "msb keeps no sandbox of holm's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_image_is_saved_from_docker_and_handed_to_msb_once() {
    if !e2e_enabled().await {
        return;
    }
    // The base image stands in for the box image: the same save and load,
    // a twentieth of the bytes.
    let docker = Engine::Docker.require().await;
    let mut progress = |_: holm::image::Progress| {};
    docker.make_base(&mut progress).await.expect("the base image");
    let tag = format!("holm-handoff-test:{}", &holm::ids::new_secret()[..12].to_lowercase());
    let (repo, version) = tag.split_once(':').unwrap();
    let client = Engine::Docker.client();
    let options = bollard::query_parameters::TagImageOptionsBuilder::default()
        .repo(repo)
        .tag(version)
        .build();
    client.tag_image(holm::image::BASE_IMAGE, Some(options)).await.expect("tag");
    let id = client.inspect_image(&tag).await.unwrap().id.unwrap();

    let rt = MicrosandboxRuntime::new("microsandbox", msb(), docker);
    let first = rt.hand_over(&tag).await;
    let second = rt.hand_over(&tag).await;
    let fresh = MicrosandboxRuntime::new("microsandbox", msb(), Engine::Docker.runtime());
    let third = fresh.hand_over(&tag).await;
    let inspected = tokio::process::Command::new(msb())
        .args(["image", "inspect", &tag, "--format", "json"])
        .output()
        .await
        .unwrap();
    // Clean up before asserting: msb's copy, then Docker's tag.
    let removed =
        tokio::process::Command::new(msb()).args(["image", "rm", &tag]).output().await.unwrap();
    let _ = client
        .remove_image(&tag, None::<bollard::query_parameters::RemoveImageOptions>, None)
        .await;

    assert!(first.expect("handed over"), "the first hand-off loads");
    assert!(!second.unwrap(), "the same runtime loads a tag once");
    assert!(!third.unwrap(), "a new runtime finds msb's copy");
    let v: serde_json::Value = serde_json::from_slice(&inspected.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&inspected.stderr)));
    assert_eq!(v["config"]["digest"], id, "msb holds Docker's image");
    assert!(removed.status.success(), "{}", String::from_utf8_lossy(&removed.stderr));
}
