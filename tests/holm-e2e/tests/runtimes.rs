//! Runtimes on the real Docker engine: discovery with and without
//! `HOLM_SERVER_RUNTIMES`, the runtimes file read at start (and its mistakes
//! stopping the server), and two runtimes on one engine with different
//! memory, visible in each box's container.

use std::path::PathBuf;

use holm_proto::ErrorCode;
use holm_proto::host::{BoxState, CreateBox, ForkBox, Placement};
use holm_testkit::{TestServer, e2e_enabled};

fn runtimes_file(dir: &tempfile::TempDir, text: &str) -> PathBuf {
    let path = dir.path().join("runtimes.toml");
    std::fs::write(&path, text).unwrap();
    path
}

async fn memory_of(box_id: &str) -> i64 {
    let docker = bollard::Docker::connect_with_defaults().unwrap();
    let c = docker
        .inspect_container(&holm::runtime::docker::container_name(box_id), None)
        .await
        .expect("inspect the box's container");
    c.host_config.and_then(|h| h.memory).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_with_and_without_the_filter_and_the_files_mistakes() {
    if !e2e_enabled().await {
        return;
    }
    // Without HOLM_SERVER_RUNTIMES: docker answers, so it is offered, and
    // the file adds a second runtime on it.
    let dir = tempfile::tempdir().unwrap();
    let file = runtimes_file(
        &dir,
        "default = \"small\"\n[runtimes.docker]\nlifetime = \"2h\"\n\
         [runtimes.small]\nprovider = \"docker\"\nmemory = \"512m\"\nmax_lifetime = \"90m\"\n",
    );
    let f = file.clone();
    let server = TestServer::start_without_image(move |c| {
        c.runtimes = None;
        c.config_file = Some(f);
    })
    .await;
    let list = server.client.runtimes().await.unwrap();
    let names: Vec<&str> = list.iter().map(|r| r.name.as_str()).collect();
    // Docker and the file's runtime; besides them only host runtimes this
    // machine has (podman's service answers; msb is installed).
    assert!(names.contains(&"docker") && names.contains(&"small"), "{names:?}");
    let found = ["docker", "podman", "microsandbox", "nerdctl", "smolvm", "small"];
    assert!(names.iter().all(|n| found.contains(n)), "{names:?}");
    let small = list.iter().find(|r| r.name == "small").unwrap();
    assert!(small.default, "the file's default");
    assert_eq!(small.provider, "docker");
    assert_eq!((small.lifetime_secs, small.max_lifetime_secs), (3600, 5400));
    assert_eq!(list.iter().find(|r| r.name == "docker").unwrap().lifetime_secs, 7200);
    assert_eq!(serde_json::to_value(small.state).unwrap(), "available");
    let one = server.client.runtime("small").await.unwrap();
    assert_eq!(&one, small);
    let e = server.client.runtime("vmware").await.unwrap_err().to_api_error();
    assert_eq!(e.code, ErrorCode::UnknownRuntime);
    assert!(e.hint.unwrap().contains("docker, "));
    drop(server);

    // With it: only what it names.
    let f = file.clone();
    let server = TestServer::start_without_image(move |c| {
        c.runtimes = Some(vec!["small".into()]);
        c.config_file = Some(f);
    })
    .await;
    let names: Vec<String> =
        server.client.runtimes().await.unwrap().into_iter().map(|r| r.name).collect();
    assert_eq!(names, ["small"]);
    drop(server);

    // `enabled = false` hides a found runtime.
    let hidden = runtimes_file(&dir, "[runtimes.docker]\nenabled = false\n");
    let server = TestServer::start_without_image(move |c| {
        c.runtimes = None;
        c.config_file = Some(hidden);
    })
    .await;
    let left: Vec<String> =
        server.client.runtimes().await.unwrap().into_iter().map(|r| r.name).collect();
    assert!(!left.contains(&"docker".to_owned()), "{left:?}");
    drop(server);

    // Mistakes stop the server at start, naming the file, table and field.
    let cases: &[(&str, Option<Vec<String>>, &str)] = &[
        ("[runtimes.docker]\nmemroy = \"4g\"\n", None, "[runtimes.docker] memroy: unknown field"),
        (
            "[runtimes.vm]\nprovider = \"smolvm\"\nprogram = \"/nonexistent/smolvm\"\n",
            None,
            "[runtimes.vm] program: /nonexistent/smolvm does not exist",
        ),
        (
            "[runtimes.microsandbox]\nprogram = \"/nonexistent/msb\"\n",
            Some(vec!["microsandbox".into()]),
            "[runtimes.microsandbox] program: /nonexistent/msb does not exist",
        ),
        (
            "[runtimes.hard]\nprovider = \"docker\"\nisolation = \"runsx\"\n",
            None,
            "[runtimes.hard] isolation: the docker engine has no OCI runtime named \"runsx\"; it has: ",
        ),
        (
            "[runtimes.hard]\nprovider = \"podman\"\nisolation = \"runsx\"\n",
            Some(vec!["hard".into()]),
            "[runtimes.hard] isolation: the podman engine has no OCI runtime named \"runsx\"",
        ),
        (
            "[runtimes.hard]\nprovider = \"podman\"\nisolation = \"runsc\"\n",
            Some(vec!["hard".into()]),
            "[runtimes.hard] isolation: podman's API runs every container on its service's default OCI runtime (runc)",
        ),
        (
            "[runtimes.vm]\nprovider = \"microsandbox\"\nbuild_with = \"nerdctl\"\n",
            None,
            "[runtimes.vm] build_with: nerdctl cannot build images in this build of holm",
        ),
        (
            "[runtimes.gpu]\nprovider = \"docker\"\ncontext = \"no-such-context\"\n",
            None,
            "[runtimes.gpu] context: there is no Docker context named \"no-such-context\"",
        ),
        (
            "default = \"small\"\n[runtimes.small]\nprovider = \"docker\"\n",
            Some(vec!["docker".into()]),
            "default: \"small\" is not a runtime this server offers; it offers: docker",
        ),
    ];
    for (text, filter, want) in cases {
        let path = runtimes_file(&dir, text);
        let mut config = server_config(&dir);
        config.config_file = Some(path.clone());
        config.runtimes = filter.clone();
        let e = holmd::service(&config).await.expect_err(text).to_string();
        assert!(e.starts_with(&format!("{}: ", path.display())), "{e}");
        assert!(e.contains(want), "for {text:?}\n  got:  {e}\n  want: {want}");
    }
    let mut config = server_config(&dir);
    config.runtimes = Some(vec!["docker".into(), "vmware".into()]);
    let e = holmd::service(&config).await.expect_err("vmware").to_string();
    assert!(e.contains("HOLM_SERVER_RUNTIMES") && e.contains("vmware"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtimes_without_an_adapter_here_are_named_unavailable_and_refuse_boxes() {
    if !e2e_enabled().await {
        return;
    }
    // The runtimes guide's own example starts a server: smolvm (and
    // nerdctl) are listed with the reason they cannot run boxes here.
    let server = TestServer::start_without_image(|c| {
        c.runtimes = Some(vec!["docker".into(), "smolvm".into(), "nerdctl".into()]);
    })
    .await;
    for (name, environment) in [("smolvm", "microvm"), ("nerdctl", "container")] {
        let info = server.client.runtime(name).await.expect("listed");
        assert_eq!(serde_json::to_value(info.state).unwrap(), "unavailable", "{info:?}");
        assert_eq!(serde_json::to_value(info.environment).unwrap(), environment);
        let reason = info.reason.unwrap();
        assert!(reason.contains(&format!("no {name} adapter yet")), "{reason}");
        let request = CreateBox {
            placement: Placement { runtime: Some(name.into()), ..Placement::default() },
            ..CreateBox::default()
        };
        let e = server.client.create_box(&request, None).await.unwrap_err().to_api_error();
        assert_eq!(e.code, ErrorCode::Unavailable, "{e:?}");
        assert!(e.message.contains(&reason), "{e:?}");
        assert!(e.request_id.is_some());
    }
    assert!(server.client.all_boxes().await.unwrap().is_empty(), "nothing was recorded");
}

fn server_config(dir: &tempfile::TempDir) -> holmd::config::ServerConfig {
    let state = dir.path().join("state");
    holmd::config::ServerConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        token: None,
        exposure: holmd::config::Exposure::LoopbackOnly,
        state_dir: state.clone(),
        runtimes: None,
        public_url: None,
        storage: holmd::store::StoreConfig::Local { dir: state },
        shared_store: false,
        server_name: holm_testkit::unique_server_name(),
        config_file: None,
        secret_key: None,
        secret_file: None,
        sandboxes: Vec::new(),
        limits: holmd::service::Limits::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runtimes_on_one_engine_give_their_boxes_their_own_memory() {
    if !e2e_enabled().await {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = runtimes_file(
        &dir,
        "[runtimes.docker]\nmemory = \"1g\"\n\
         [runtimes.small]\nprovider = \"docker\"\nmemory = \"512m\"\ncpus = 1.5\n",
    );
    let server = TestServer::start_with(move |c| {
        c.runtimes = Some(vec!["docker".into(), "small".into()]);
        c.config_file = Some(file);
    })
    .await;
    let on = |runtime: Option<&str>| CreateBox {
        placement: Placement { runtime: runtime.map(str::to_owned), ..Placement::default() },
        ..CreateBox::default()
    };
    // No runtime named: the default, docker.
    let big = server.client.create_box(&on(None), Some(600)).await.unwrap();
    let small = server.client.create_box(&on(Some("small")), Some(600)).await.unwrap();
    assert_eq!((big.state, small.state), (BoxState::Running, BoxState::Running));
    assert_eq!((big.runtime.as_str(), small.runtime.as_str()), ("docker", "small"));
    assert_eq!(memory_of(&big.id).await, 1 << 30);
    assert_eq!(memory_of(&small.id).await, 512 << 20);
    let docker = bollard::Docker::connect_with_defaults().unwrap();
    let c = docker
        .inspect_container(&holm::runtime::docker::container_name(&small.id), None)
        .await
        .unwrap();
    assert_eq!(c.host_config.unwrap().nano_cpus, Some(1_500_000_000));
    // A placement overrides the runtime's memory.
    let mut request = on(Some("small"));
    request.placement.memory = Some("768m".into());
    let custom = server.client.create_box(&request, Some(600)).await.unwrap();
    assert_eq!(memory_of(&custom.id).await, 768 << 20);

    // A fork goes on the same runtime, with its memory.
    let fork =
        server.client.fork_box(&small.id, &ForkBox::default(), None, Some(600)).await.unwrap();
    assert_eq!((fork.runtime.as_str(), fork.state), ("small", BoxState::Running));
    assert_eq!(memory_of(&fork.id).await, 512 << 20);

    // After a restart each box is still on its own runtime.
    let mut server = server;
    server.restart().await;
    for (id, runtime) in [(&big.id, "docker"), (&small.id, "small"), (&fork.id, "small")] {
        let b = server.client.get_box(id, Some((BoxState::Running, 60))).await.unwrap();
        assert_eq!((b.runtime.as_str(), b.state), (runtime, BoxState::Running), "{id}");
    }
}
