//! A box's life on Docker, end to end: stop and start (files kept, a new
//! desktop), pause and resume (a process's memory kept), fork (a copy of the
//! files, a new secret), a real expiry, and recovery after the store is
//! lost.

use std::time::Duration;

use holm_client::BoxClient;
use holm_proto::guest::{ProcessStart, ScreenshotOptions};
use holm_proto::host::{BoxInfo, BoxSpec, BoxState, CreateBox, ForkBox, Placement};
use holm_testkit::{TestServer, container_exists, e2e_enabled, eventually};

async fn new_box(server: &TestServer, placement: Placement) -> BoxInfo {
    let request =
        CreateBox { spec: BoxSpec { browser: Some(false), ..BoxSpec::default() }, placement };
    let info = server.client.create_box(&request, Some(600)).await.expect("create a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    info
}

async fn text(b: &BoxClient, path: &str) -> String {
    String::from_utf8_lossy(&b.read_file(path).await.expect("read")).into_owned()
}

fn secret_of(server: &TestServer, id: &str) -> String {
    let record =
        std::fs::read_to_string(server.state_dir.join(format!("boxes/{id}.json"))).unwrap();
    serde_json::from_str::<serde_json::Value>(&record).unwrap()["secret"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn guest_port(id: &str) -> String {
    let docker = bollard::Docker::connect_with_defaults().unwrap();
    let c = docker.inspect_container(&format!("holm-{id}"), None).await.unwrap();
    let ports = c.network_settings.unwrap().ports.unwrap();
    ports["8765/tcp"].as_ref().unwrap()[0].host_port.clone().unwrap()
}

#[tokio::test]
async fn stop_keeps_the_files_and_start_gives_a_new_desktop() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let id = new_box(&server, Placement::default()).await.id;
    let b = server.client.boxed(&id);
    b.write_file("/root/kept.txt", b"still here".to_vec(), None).await.unwrap();
    let p = b
        .start_process(&ProcessStart {
            argv: Some(vec!["sleep".into(), "600".into()]),
            ..ProcessStart::default()
        })
        .await
        .unwrap();
    let before = guest_port(&id).await;

    let stopped = server.client.stop_box(&id).await.unwrap();
    assert_eq!(stopped.state, BoxState::Stopped);
    let e = b.exec(&["true"]).await.unwrap_err();
    assert_eq!(e.api().map(|e| e.code), Some(holm_proto::ErrorCode::NotRunning));

    let started = server.client.start_box(&id, Some(300)).await.unwrap();
    assert_eq!(started.state, BoxState::Running, "{started:?}");
    assert_eq!(text(&b, "/root/kept.txt").await, "still here", "the files are kept");
    // A new desktop: the guest started again, so the old process is gone,
    // and the guest is reached where the engine published it now.
    let processes = b.processes().await.unwrap();
    assert!(processes.is_empty(), "{} of the old desktop survived: {processes:?}", p.id);
    let shot = b.screenshot(0, &ScreenshotOptions::default()).await.expect("a new desktop");
    assert!(!shot.bytes.is_empty());
    eprintln!("guest port before the stop: {before}, after the start: {}", guest_port(&id).await);
    server.client.remove_box(&id).await.unwrap();
}

#[tokio::test]
async fn pause_keeps_a_process_memory_and_resume_continues_it() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let id = new_box(&server, Placement::default()).await.id;
    let b = server.client.boxed(&id);
    // The count lives only in the shell's memory; the file shows it.
    let script = "i=0; while :; do i=$((i+1)); echo \"$$ $i\" > /tmp/count.tmp; \
                  mv /tmp/count.tmp /tmp/count; sleep 0.05; done";
    b.start_process(&ProcessStart {
        argv: Some(vec!["sh".into(), "-c".into(), script.into()]),
        ..ProcessStart::default()
    })
    .await
    .unwrap();
    let read = |b: BoxClient| async move {
        let t = String::from_utf8_lossy(&b.read_file("/tmp/count").await.ok()?).into_owned();
        let (pid, n) = t.trim().split_once(' ')?;
        Some((pid.to_owned(), n.parse::<u64>().ok()?))
    };
    let (pid, n1) = eventually(Duration::from_secs(20), "the counter to count past 20", || {
        let b = b.clone();
        async move { read(b).await.filter(|(_, n)| *n > 20) }
    })
    .await;

    assert_eq!(server.client.pause_box(&id).await.unwrap().state, BoxState::Paused);
    let docker = bollard::Docker::connect_with_defaults().unwrap();
    let c = docker.inspect_container(&format!("holm-{id}"), None).await.unwrap();
    assert_eq!(c.state.unwrap().paused, Some(true), "the engine paused it");
    assert_eq!(server.client.resume_box(&id).await.unwrap().state, BoxState::Running);

    // The same process goes on counting from where it was, not from 1.
    let (pid2, n2) = eventually(Duration::from_secs(20), "the counter to go on", || {
        let b = b.clone();
        async move { read(b).await.filter(|(_, n)| *n > n1) }
    })
    .await;
    assert_eq!(pid2, pid, "the same process");
    assert!(n2 > n1);
    server.client.remove_box(&id).await.unwrap();
}

#[tokio::test]
async fn fork_copies_the_files_into_a_new_box_with_its_own_secret() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let id = new_box(&server, Placement::default()).await.id;
    let b = server.client.boxed(&id);
    b.write_file("/root/before-fork.txt", b"from the original".to_vec(), None).await.unwrap();

    let fork = server
        .client
        .fork_box(&id, &ForkBox::default(), Some("fork-key-1"), Some(300))
        .await
        .unwrap();
    assert_eq!(fork.state, BoxState::Running, "{fork:?}");
    assert_eq!(fork.forked_from.as_deref(), Some(id.as_str()));
    assert_eq!(fork.runtime, "docker");
    // Repeated with its key: the same copy.
    let again =
        server.client.fork_box(&id, &ForkBox::default(), Some("fork-key-1"), None).await.unwrap();
    assert_eq!(again.id, fork.id);
    assert!(again.replayed);

    let f = server.client.boxed(&fork.id);
    assert_eq!(text(&f, "/root/before-fork.txt").await, "from the original");
    assert_eq!(text(&b, "/root/before-fork.txt").await, "from the original");
    // Each goes its own way after.
    f.write_file("/root/only-in-fork.txt", b"x".to_vec(), None).await.unwrap();
    assert!(b.read_file("/root/only-in-fork.txt").await.is_err());
    // The copy's desktop came up clean in the copied files.
    assert!(!f.screenshot(0, &ScreenshotOptions::default()).await.unwrap().bytes.is_empty());

    // A new secret, and the copied image does not hold the original's.
    let (s1, s2) = (secret_of(&server, &id), secret_of(&server, &fork.id));
    assert_ne!(s1, s2);
    let docker = bollard::Docker::connect_with_defaults().unwrap();
    let image = format!("holm-fork:{}", fork.id);
    let inspected = docker.inspect_image(&image).await.expect("the fork's image");
    let env = inspected.config.unwrap().env.unwrap_or_default();
    assert!(env.iter().all(|v| !v.contains(&s1)), "the image holds the secret: {env:?}");

    // Removing the copy removes its image; the original runs on.
    server.client.remove_box(&fork.id).await.unwrap();
    assert!(!container_exists(&fork.id).await);
    assert!(docker.inspect_image(&image).await.is_err(), "the fork's image stays");
    assert!(b.exec(&["true"]).await.is_ok());
    server.client.remove_box(&id).await.unwrap();
}

#[tokio::test]
async fn a_box_is_removed_at_the_end_of_its_lifetime() {
    if !e2e_enabled().await {
        return;
    }
    // The shortest lifetime a box may have: this test takes about a minute.
    let server = TestServer::start().await;
    let info =
        new_box(&server, Placement { expires_after_secs: Some(60), ..Placement::default() }).await;
    let gone =
        server.client.get_box(&info.id, Some((BoxState::Removed, 180))).await.expect("get the box");
    assert_eq!(gone.state, BoxState::Removed, "{gone:?}");
    assert!(gone.reason.as_deref().unwrap().contains("lifetime of 60 seconds"), "{gone:?}");
    assert!(!container_exists(&info.id).await, "its container is gone");
}

#[tokio::test]
async fn a_server_that_lost_its_store_finds_its_labelled_boxes() {
    if !e2e_enabled().await {
        return;
    }
    let mut server = TestServer::start().await;
    let info =
        new_box(&server, Placement { expires_after_secs: Some(900), ..Placement::default() }).await;
    server.client.boxed(&info.id).write_file("/root/x", b"1".to_vec(), None).await.unwrap();
    std::fs::remove_dir_all(server.state_dir.join("boxes")).unwrap();
    server.restart().await;

    let found = server.client.get_box(&info.id, None).await.expect("found by its labels");
    assert_eq!(found.state, BoxState::Running);
    assert_eq!(found.expires_at, info.expires_at, "its deadline came from its labels");
    // Driven with the secret read back from the container.
    assert_eq!(text(&server.client.boxed(&info.id), "/root/x").await, "1");
    server.client.remove_box(&info.id).await.unwrap();
    assert!(!container_exists(&info.id).await);
}

#[tokio::test]
async fn a_leftover_container_of_the_same_box_is_replaced() {
    if !e2e_enabled().await {
        return;
    }
    // A server killed while the engine made a box's container, then asked
    // again for the same box after its restart: the second create wins.
    use holm::runtime::Runtime;
    let image = holm_testkit::ensure_image().await;
    let docker = holm::runtime::docker::DockerRuntime::connect("docker").unwrap();
    let name = holm_testkit::unique_server_name();
    let spec = holm::runtime::MachineSpec {
        box_id: holm::ids::new_box_id(),
        image,
        env: vec![("HOLM_BOX_SECRET".into(), holm::ids::new_secret())],
        labels: [(holm::runtime::LABEL_SERVER.to_owned(), name.clone())].into(),
        ports: vec![holm_proto::guest::DEFAULT_GUEST_PORT],
        memory_bytes: None,
        nano_cpus: None,
        profile: None,
    };
    let first = docker.create(&spec).await.expect("first create");
    let second = docker.create(&spec).await.expect("the same box again");
    assert_ne!(first.id, second.id);
    assert!(docker.inspect(&first.id).await.is_err(), "the leftover is gone");
    assert_eq!(docker.find(&spec.box_id).await.unwrap().map(|m| m.id), Some(second.id));
    holm_testkit::remove_server_boxes(&name).await;
}
