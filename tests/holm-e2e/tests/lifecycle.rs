//! A box's life on Docker, end to end, beyond the shared suite (`core.rs`,
//! where stop and start, pause and resume, and fork run on every runtime):
//! a real expiry, recovery after the store is lost, and a leftover
//! container of the same box replaced.

use holm_client::BoxClient;
use holm_proto::host::{BoxInfo, BoxSpec, BoxState, CreateBox, Placement};
use holm_testkit::{TestServer, container_exists, e2e_enabled};

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

/// A machine of a new box on `image`, labelled with server `name`, its
/// guest given a secret's digest and `env`.
fn machine_spec(image: String, name: &str, env: &[(&str, &str)]) -> holm::runtime::MachineSpec {
    let secret = (
        holm::runtime::ENV_SECRET_SHA256.to_owned(),
        holm::ids::secret_digest(&holm::ids::new_secret()),
    );
    holm::runtime::MachineSpec {
        box_id: holm::ids::new_box_id(),
        image,
        env: std::iter::once(secret)
            .chain(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())))
            .collect(),
        labels: [(holm::runtime::LABEL_SERVER.to_owned(), name.to_owned())].into(),
        ports: vec![holm_proto::guest::DEFAULT_GUEST_PORT],
        public_ports: Vec::new(),
        memory_bytes: None,
        nano_cpus: None,
        pids_limit: None,
        profile: None,
        deadline: None,
        idle_timeout_secs: None,
        expires_at: None,
    }
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
    // A server with a key, as a deployed one has: its boxes' secrets are
    // worked out from it again, since no box holds its own.
    let mut server = TestServer::start_with(|c| {
        c.secret_key = Some(holm::ids::new_secret());
    })
    .await;
    let info =
        new_box(&server, Placement { expires_after_secs: Some(900), ..Placement::default() }).await;
    server.client.boxed(&info.id).write_file("/root/x", b"1".to_vec(), None).await.unwrap();
    std::fs::remove_dir_all(server.state_dir.join("boxes")).unwrap();
    server.restart().await;

    let found = server.client.get_box(&info.id, None).await.expect("found by its labels");
    assert_eq!(found.state, BoxState::Running);
    assert_eq!(found.expires_at, info.expires_at, "its deadline came from its labels");
    // Driven with the secret worked out again from the server key.
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
    let spec = machine_spec(image, &name, &[]);
    let first = docker.create(&spec).await.expect("first create");
    let second = docker.create(&spec).await.expect("the same box again");
    assert_ne!(first.id, second.id);
    assert!(docker.inspect(&first.id).await.is_err(), "the leftover is gone");
    assert_eq!(docker.find(&spec.box_id).await.unwrap().map(|m| m.id), Some(second.id));
    holm_testkit::remove_server_boxes(&name).await;
}

#[tokio::test]
async fn a_guest_that_ends_at_once_is_seen_ended() {
    if !e2e_enabled().await {
        return;
    }
    // The guest is a container's first process: a guest that refuses its
    // configuration ends it, and the runtime says so while a start waits.
    use holm::runtime::Runtime;
    let image = holm_testkit::ensure_image().await;
    let docker = holm::runtime::docker::DockerRuntime::connect("docker").unwrap();
    let name = holm_testkit::unique_server_name();
    let spec = machine_spec(image, &name, &[("HOLM_PROFILE", "neither")]);
    let machine = docker.create(&spec).await.expect("create");
    // The container's state is the event: read until it says so.
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let why = loop {
        if let Some(why) = docker.guest_ended(&machine.id).await {
            break why;
        }
        assert!(std::time::Instant::now() < give_up, "the guest's container never stopped");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert!(why.contains("the guest ended (exit code 2)"), "{why}");
    assert!(why.contains(r#"HOLM_PROFILE="neither": expected x11 or wayland"#), "{why}");
    holm_testkit::remove_server_boxes(&name).await;
}
