//! The review's M5 in a real box: a box that writes past its
//! `placement.disk` is stopped by the server's disk watch, with a reason
//! that begins `disk_limit`, having written little more than its limit:
//! its container's writable layer and the host's free space show it. A
//! `placement.disk` that is not a size, or above the bound, is refused in
//! the one error shape and nothing is made.

use std::time::Duration;

use bollard::query_parameters::InspectContainerOptions;
use holm::runtime::Runtime as _;
use holm_proto::ErrorCode;
use holm_proto::host::{BoxSpec, BoxState, Placement};
use holm_testkit::matrix::Target;

holm_testkit::suite!(a_box_past_its_disk_limit_is_stopped: docker [x11]);

/// The limit the box is given.
const LIMIT: u64 = 128 << 20;
/// What the box may write past it in one round of the watch (a second
/// here; the writer below writes about 30 MiB a second).
const SLACK: u64 = 96 << 20;
/// What the host's free space may lose besides the box's writes: the
/// machine is shared with builds and other tests.
const HOST_NOISE: u64 = 512 << 20;

/// The bytes free on the filesystem of the engine's data root.
async fn free_bytes(target: &Target) -> u64 {
    let info = target.engine.client().info().await.expect("the engine's info");
    let root = info.docker_root_dir.expect("the engine's data root");
    let out = std::process::Command::new("df")
        .args(["-B1", "--output=avail", &root])
        .output()
        .expect("df");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().nth(1).and_then(|l| l.trim().parse().ok()).expect("df's answer")
}

/// The container's writable layer, as the engine measures it.
async fn size_rw(target: &Target, box_id: &str) -> u64 {
    let name = holm::runtime::docker::container_name(box_id);
    let c = target
        .engine
        .client()
        .inspect_container(&name, Some(InspectContainerOptions { size: true }))
        .await
        .expect("inspect the box's container");
    c.size_rw.and_then(|n| u64::try_from(n).ok()).expect("a size")
}

async fn a_box_past_its_disk_limit_is_stopped(target: Target) {
    let server = target.server_with(|c| c.limits.disk_check = Duration::from_secs(1)).await;

    // Bad input: refused, and nothing made.
    for (disk, says) in [("banana", "not a size"), ("2t", "1t"), ("1m", "32m")] {
        let placement = Placement { disk: Some(disk.into()), ..Placement::default() };
        let e = server
            .client
            .create_box(&target.request(BoxSpec::default(), placement), Some(60))
            .await
            .expect_err("a bad placement.disk is refused");
        let api = e.api().cloned().expect("the one error shape");
        assert_eq!(api.code, ErrorCode::InvalidRequest, "{api:?}");
        let issue = &api.details.as_ref().expect("details")["issues"][0];
        assert_eq!(issue["path"], "placement.disk", "{api:?}");
        assert!(issue["problem"].as_str().unwrap().contains(says), "{disk}: {api:?}");
    }
    assert!(server.client.all_boxes().await.unwrap().is_empty(), "no box was made");
    let mine = target.engine.runtime().list().await.expect("the engine's boxes");
    let label = holm::runtime::LABEL_SERVER;
    let made = mine.iter().filter(|m| m.labels.get(label) == Some(&server.config.server_name));
    assert_eq!(made.count(), 0, "no container was made");

    let placement = Placement { disk: Some("128m".into()), ..Placement::default() };
    let request = target.request(BoxSpec::default(), placement);
    let info = server.client.create_box(&request, Some(600)).await.expect("create a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    let at_start = size_rw(&target, &info.id).await;
    assert!(at_start < LIMIT / 2, "a new box wrote {at_start} bytes already");
    let free_before = free_bytes(&target).await;

    // About 30 MiB a second, synced, up to 2 GiB: far past the limit and
    // the slack if nothing stops it.
    let writer = "i=0; while [ $i -lt 512 ]; do dd if=/dev/zero of=/fill.$i bs=1M count=4 \
                  conv=fsync 2>/dev/null; i=$((i+1)); sleep 0.1; done";
    let b = server.client.boxed(&info.id);
    let spawn = format!("({writer}) >/dev/null 2>&1 &");
    let r = b.exec(&["sh", "-c", &spawn]).await.expect("start the writer");
    assert_eq!(r.exit_code, Some(0), "{r:?}");

    let stopped = server
        .client
        .get_box(&info.id, Some((BoxState::Stopped, 120)))
        .await
        .expect("the box after the wait");
    assert_eq!(stopped.state, BoxState::Stopped, "the watch stopped the box: {stopped:?}");
    let reason = stopped.reason.clone().unwrap_or_default();
    assert!(reason.starts_with("disk_limit: "), "{reason}");
    assert!(reason.contains("placement.disk of 128m"), "{reason}");

    // Its files are kept; they hold little more than the limit.
    let written = size_rw(&target, &info.id).await;
    assert!(written > LIMIT, "stopped at {written} bytes, under its limit");
    assert!(written <= LIMIT + SLACK, "the box wrote {written} bytes before it was stopped");
    let free_after = free_bytes(&target).await;
    let lost = free_before.saturating_sub(free_after);
    assert!(
        lost <= LIMIT + SLACK + HOST_NOISE,
        "the host lost {lost} bytes of free space while the box wrote"
    );
    // The box's info keeps saying why.
    let again = server.client.get_box(&info.id, None).await.unwrap();
    assert_eq!((again.state, again.reason.as_deref()), (BoxState::Stopped, Some(&*reason)));
    server.client.remove_box(&info.id).await.expect("remove the box");
}
