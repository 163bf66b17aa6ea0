//! holm's `kubernetes` runtime against the Kubernetes API stand-in.
//!
//! Plain-pods mode: a real box of the box image is a Pod whose guest
//! answers through the endpoint the runtime reports, with the box secret it
//! was given (only its digest, through a Secret); the runtime lists and
//! finds it by label; removing it leaves no Pod, Service, Secret or
//! container. holmd offers a `kubernetes` runtime from its runtimes file
//! and runs a box on it through its API, reaching the guest at the pod's
//! address.
//!
//! agent-sandbox mode (chosen by itself: the stand-in serves agent-sandbox's
//! kinds): a box is a SandboxClaim that adopts a warm, identity-free box of
//! the pool holm made, whose guest then takes the box's secret (its digest)
//! and refuses the pool's; removing the claim removes its box. With a
//! volume, a claimed box stops as a `Suspended` Sandbox (its pod gone, its
//! volume kept) and starts on a new pod that takes the box's secret again,
//! with the volume's files and none of the old pod's others.

use std::time::Duration;

use holm::runtime::docker::DockerRuntime;
use holm::runtime::kubernetes::{
    KubeSettings, KubernetesRuntime, Mode, POOL_SECRET_KEY, object_name,
};
use holm::runtime::{ENV_SECRET_SHA256, MachineSpec, MachineState, Runtime, RuntimeError};
use holm_client::BoxClient;
use holm_proto::guest::DEFAULT_GUEST_PORT;
use holm_standins::kube::KubeStandin;
use holm_standins::kube::pods::LABEL_POD;
use holm_testkit::e2e_enabled;

fn spec(image: &str, box_id: &str, secret: &str) -> MachineSpec {
    let env = [
        (ENV_SECRET_SHA256, holm::ids::secret_digest(secret)),
        ("HOLM_CHROMIUM", "off".into()),
        ("HOLM_SCREENS", "1".into()),
        ("HOLM_GUEST_ADDR", format!("0.0.0.0:{DEFAULT_GUEST_PORT}")),
    ];
    MachineSpec {
        box_id: box_id.into(),
        image: image.into(),
        env: env.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        labels: [("holm.spec".to_owned(), "{\"display\":\"x11\"}".to_owned())].into(),
        ports: vec![DEFAULT_GUEST_PORT],
        public_ports: vec![],
        memory_bytes: Some(2 << 30),
        nano_cpus: Some(2_000_000_000),
        pids_limit: None,
        profile: None,
        deadline: None,
        idle_timeout_secs: None,
        expires_at: None,
    }
}

/// The engine's containers (any state) of the stand-in's pod `default/NAME`.
async fn containers_of_pod(name: &str) -> Vec<String> {
    let docker = bollard::Docker::connect_with_defaults().unwrap();
    let all = bollard::query_parameters::ListContainersOptionsBuilder::default().all(true).build();
    let list = docker.list_containers(Some(all)).await.expect("list containers");
    let pod = format!("default/{name}");
    list.into_iter()
        .filter(|c| c.labels.as_ref().and_then(|l| l.get(LABEL_POD)) == Some(&pod))
        .filter_map(|c| c.id)
        .collect()
}

/// A Kubernetes API stand-in, and a `kubernetes` runtime on it with
/// `settings` (the stand-in's kubeconfig, in the directory kept with it),
/// whose API answers.
async fn on_a_standin(
    settings: KubeSettings,
) -> (KubeStandin, tempfile::TempDir, KubernetesRuntime) {
    let standin = KubeStandin::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = Some(standin.write_kubeconfig(dir.path()));
    let settings = KubeSettings { kubeconfig, ..settings };
    let runtime =
        KubernetesRuntime::new("k8s", settings, DockerRuntime::connect("docker").unwrap());
    runtime.ping().await.expect("the API answers");
    (standin, dir, runtime)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_box_lives_as_a_pod_answers_through_its_endpoint_and_leaves_nothing() {
    if !e2e_enabled().await {
        return;
    }
    let image = holm_testkit::ensure_image().await;
    let standin = KubeStandin::start().await;
    let dir = tempfile::tempdir().unwrap();
    let settings = KubeSettings {
        kubeconfig: Some(standin.write_kubeconfig(dir.path())),
        mode: Mode::Pods,
        ..Default::default()
    };
    let builder = DockerRuntime::connect("docker").expect("the local engine");
    let runtime = KubernetesRuntime::new("k8s", settings, builder);
    runtime.ping().await.expect("the API answers and namespace default exists");
    let missing = KubernetesRuntime::new(
        "k8s",
        KubeSettings {
            kubeconfig: Some(standin.write_kubeconfig(dir.path())),
            namespace: "nowhere".into(),
            mode: Mode::Pods,
            ..Default::default()
        },
        DockerRuntime::connect("docker").unwrap(),
    );
    let err = missing.ping().await.expect_err("a missing namespace is unavailable");
    assert!(err.to_string().contains("namespace nowhere does not exist"), "{err}");

    let (box_id, secret) = ("box_kuberuntime1", "s3cret-of-the-box");
    let name = object_name(box_id);
    let machine = runtime.create(&spec(&image, box_id, secret)).await.expect("the box runs");
    assert_eq!(machine.id, name);
    assert_eq!(machine.state, MachineState::Running);
    assert_eq!(machine.box_id.as_deref(), Some(box_id));

    // The stand-in's pods run on the engine at their own loopback address.
    let guest = machine.guest().expect("an endpoint for the guest port");
    assert!(guest.url().starts_with("http://127."), "{}", guest.url());
    let client = BoxClient::at(guest, secret);
    holm::launch::wait_ready_for(
        &client,
        Duration::from_secs(120),
        holm_proto::host::Ready::Desktop,
    )
    .await
    .expect("the guest answers /health at the pod's address");
    client.info().await.expect("the guest takes the box secret whose digest the Secret holds");
    let wrong = BoxClient::at(guest, "not-the-secret");
    assert!(wrong.info().await.is_err(), "another secret is refused");

    // Only the digest went to the cluster, through the Secret.
    let pod = standin.object("pods", "default", &name).expect("the pod");
    assert!(!pod.to_string().contains(secret));
    let env = &pod["spec"]["containers"][0]["env"][0];
    assert_eq!(env["valueFrom"]["secretKeyRef"]["name"], name.as_str());
    assert_eq!(pod["spec"]["automountServiceAccountToken"], false);
    let stored = standin.object("secrets", "default", &name).expect("the secret");
    assert!(!stored.to_string().contains(secret));
    let svc = standin.object("services", "default", &name).expect("the service");
    assert_eq!(svc["spec"]["clusterIP"], "None");
    assert!(standin.pod_container("default", &name).is_some());
    assert_eq!(containers_of_pod(&name).await.len(), 1, "one container on the engine");

    let listed = runtime.list().await.expect("list");
    assert_eq!(listed.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), [name.as_str()]);
    assert_eq!(listed[0].labels["holm.spec"], "{\"display\":\"x11\"}");
    let found = runtime.find(box_id).await.expect("find").expect("found by label");
    assert_eq!(found.guest().map(|e| e.url()), Some(guest.url()));
    assert!(runtime.find("box_other").await.expect("find").is_none());
    assert_eq!(runtime.inspect(&name).await.expect("inspect").state, MachineState::Running);

    runtime.remove(&name).await.expect("remove");
    for resource in ["pods", "services", "secrets"] {
        assert!(standin.object(resource, "default", &name).is_none(), "{resource} left");
    }
    assert!(standin.pod_container("default", &name).is_none(), "its container left");
    assert!(containers_of_pod(&name).await.is_empty(), "its container is still on the engine");
    assert!(runtime.list().await.expect("list").is_empty());
    assert!(matches!(runtime.inspect(&name).await, Err(RuntimeError::NotFound(_))));
    runtime.remove(&name).await.expect("removing a missing box is not an error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_whose_image_does_not_pull_fails_the_create_and_is_removed() {
    if !e2e_enabled().await {
        return;
    }
    let (standin, _dir, runtime) =
        on_a_standin(KubeSettings { mode: Mode::Pods, ..Default::default() }).await;
    let box_id = "box_kubenoimage";
    let err = runtime
        .create(&spec("holm-box:no-such-image", box_id, "x"))
        .await
        .expect_err("an image the cluster cannot pull");
    assert!(err.to_string().contains("ErrImagePull"), "{err}");
    let name = object_name(box_id);
    for resource in ["pods", "services", "secrets"] {
        assert!(standin.object(resource, "default", &name).is_none(), "{resource} left");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holmd_runs_a_box_on_a_kubernetes_runtime_from_its_runtimes_file() {
    if !e2e_enabled().await {
        return;
    }
    use holm_proto::host::{BoxState, CreateBox, Placement};
    let standin = KubeStandin::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = standin.write_kubeconfig(dir.path());
    let file = dir.path().join("runtimes.toml");
    let table = format!(
        "[runtimes.k8s]\nprovider = \"kubernetes\"\nkubeconfig = \"{}\"\nnamespace = \"default\"\nmode = \"pods\"\n",
        config.display()
    );
    std::fs::write(&file, table).unwrap();
    let server = holm_testkit::TestServer::start_with(move |c| {
        c.runtimes = Some(vec!["docker".into(), "k8s".into()]);
        c.config_file = Some(file);
    })
    .await;
    let info = server.client.runtime("k8s").await.expect("offered");
    assert_eq!(info.provider, "kubernetes");
    assert_eq!(serde_json::to_value(info.state).unwrap(), "available", "{info:?}");
    assert!(!info.can.pause && !info.can.stop && !info.can.fork, "{:?}", info.can);

    let request = CreateBox {
        placement: Placement { runtime: Some("k8s".into()), ..Placement::default() },
        ..CreateBox::default()
    };
    let b = server.client.create_box(&request, Some(600)).await.expect("a box on k8s");
    assert_eq!((b.runtime.as_str(), b.state), ("k8s", BoxState::Running));
    let name = object_name(&b.id);
    assert!(standin.pod_container("default", &name).is_some(), "its pod runs on the engine");
    let out = server.client.boxed(&b.id).exec(&["echo", "from the pod"]).await.expect("exec");
    assert!(out.stdout.contains("from the pod"), "{out:?}");

    server.client.remove_box(&b.id).await.expect("remove");
    for resource in ["pods", "services", "secrets"] {
        assert!(standin.object(resource, "default", &name).is_none(), "{resource} left");
    }
    assert!(standin.pod_container("default", &name).is_none(), "its container left");
}

const CLAIMS: &str = "sandboxclaims.extensions.agents.x-k8s.io";

/// The pool's own secret, as its Secret holds it (`data`, base64).
fn pool_secret(standin: &KubeStandin, pool: &str) -> String {
    use base64::Engine;
    let stored = standin.object("secrets", "default", pool).expect("the pool's Secret");
    let b64 = stored["data"][POOL_SECRET_KEY].as_str().expect("the pool's secret");
    String::from_utf8(base64::engine::general_purpose::STANDARD.decode(b64).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_box_is_a_claim_on_a_warm_pool_and_takes_its_secret_through_its_guest() {
    if !e2e_enabled().await {
        return;
    }
    let image = holm_testkit::ensure_image().await;
    let (standin, _dir, runtime) =
        on_a_standin(KubeSettings { warm_pool: 1, ..Default::default() }).await;

    let (box_id, secret) = ("box_kubeclaim1", "s3cret-of-the-claimed-box");
    let name = object_name(box_id);
    let machine = runtime.create(&spec(&image, box_id, secret)).await.expect("a claimed box");
    assert_eq!((machine.id.as_str(), machine.state), (name.as_str(), MachineState::Running));
    assert_eq!(machine.box_id.as_deref(), Some(box_id));
    assert!(standin.object("pods", "default", &name).is_none(), "no pod of the box's own");

    // The claim adopted a box of the pool (named after the pool, not the
    // claim), and asked for no env, which would have started one cold.
    let claim = standin.object(CLAIMS, "default", &name).expect("the claim");
    let pool = claim["spec"]["warmPoolRef"]["name"].as_str().expect("a pool").to_owned();
    assert!(pool.starts_with("holm-t-"), "{pool}");
    let held = claim["status"]["sandbox"]["name"].as_str().expect("a held box").to_owned();
    assert!(held.starts_with(&format!("{pool}-")), "a warm box of the pool: {held}");
    assert!(claim["spec"].get("env").is_none(), "{claim}");
    let template = standin
        .object("sandboxtemplates.extensions.agents.x-k8s.io", "default", &pool)
        .expect("the template");
    let text = template.to_string();
    assert!(!text.contains(box_id) && !text.contains(secret), "identity-free: {text}");
    assert_eq!(template["spec"]["networkPolicyManagement"], "Managed");

    // The guest takes the box's secret, and no longer the pool's.
    let guest = machine.guest().expect("an endpoint for the guest port");
    let client = BoxClient::at(guest, secret);
    holm::launch::wait_ready_for(
        &client,
        Duration::from_secs(120),
        holm_proto::host::Ready::Desktop,
    )
    .await
    .expect("the claimed box's guest answers");
    client.info().await.expect("the guest takes the box's secret");
    let pooled = BoxClient::at(guest, &pool_secret(&standin, &pool));
    assert!(pooled.info().await.is_err(), "the pool's secret is refused after the claim");
    let stored = standin.object("secrets", "default", &pool).unwrap().to_string();
    assert!(!stored.contains(secret), "the box's secret never reaches the cluster");

    // A second box of the same kind takes the box the pool made next.
    let machine2 = runtime.create(&spec(&image, "box_kubeclaim2", "an0ther-box-secret")).await;
    let machine2 = machine2.expect("a second claimed box");
    let claim2 = standin.object(CLAIMS, "default", &machine2.id).expect("the second claim");
    assert_eq!(claim2["spec"]["warmPoolRef"]["name"], pool.as_str(), "one pool for boxes alike");
    let held2 = claim2["status"]["sandbox"]["name"].as_str().unwrap().to_owned();
    assert!(held2.starts_with(&format!("{pool}-")) && held2 != held, "{held2}");

    let mut listed: Vec<String> =
        runtime.list().await.expect("list").into_iter().map(|m| m.id).collect();
    listed.sort();
    assert_eq!(listed, [name.clone(), machine2.id.clone()]);
    let found = runtime.find(box_id).await.expect("find").expect("found by label");
    assert_eq!(found.guest().map(|e| e.url()), Some(guest.url()));
    assert_eq!(found.labels["holm.spec"], "{\"display\":\"x11\"}");

    for (m, sandbox) in [(&machine, &held), (&machine2, &held2)] {
        runtime.remove(&m.id).await.expect("remove");
        assert!(standin.object(CLAIMS, "default", &m.id).is_none(), "the claim is left");
        assert!(standin.object("pods", "default", sandbox).is_none(), "its box's pod is left");
        assert!(standin.pod_container("default", sandbox).is_none(), "its container is left");
    }
    assert!(runtime.list().await.expect("list").is_empty());
    assert!(matches!(runtime.inspect(&name).await, Err(RuntimeError::NotFound(_))));
}

/// Whether the engine has the volume `name`.
async fn volume_exists(name: &str) -> bool {
    let docker = bollard::Docker::connect_with_defaults().unwrap();
    docker.inspect_volume(name).await.is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claimed_box_stops_suspended_keeps_its_volume_and_starts_with_its_own_secret() {
    if !e2e_enabled().await {
        return;
    }
    let image = holm_testkit::ensure_image().await;
    let (standin, _dir, runtime) = on_a_standin(KubeSettings {
        mode: Mode::AgentSandbox,
        volume_size: Some("1Gi".into()),
        ..Default::default()
    })
    .await;
    assert!(runtime.can().stop, "a box with a volume can stop");

    let (box_id, secret) = ("box_kubestop1", "s3cret-of-the-stopped-box");
    let name = object_name(box_id);
    let machine = runtime.create(&spec(&image, box_id, secret)).await.expect("a claimed box");
    let claim = standin.object(CLAIMS, "default", &name).expect("the claim");
    let held = claim["status"]["sandbox"]["name"].as_str().expect("a held box").to_owned();
    let pool = claim["spec"]["warmPoolRef"]["name"].as_str().unwrap().to_owned();
    let pvc_name = format!("{}-{held}", holm::runtime::kubernetes::VOLUME);
    let pvc = standin.object("persistentvolumeclaims", "default", &pvc_name).expect("its volume");
    assert_eq!(pvc["spec"]["resources"]["requests"]["storage"], "1Gi");
    let volume = format!("holm-standin-kube-pvc-{}", pvc["metadata"]["uid"].as_str().unwrap());
    let box_secret = standin.object("secrets", "default", &name).expect("the box's own Secret");
    assert!(!box_secret.to_string().contains(secret), "only the digest: {box_secret}");

    let client = BoxClient::at(machine.guest().unwrap(), secret);
    client.write_file("/root/kept.txt", b"on the volume".to_vec(), None).await.expect("write");
    client.write_file("/tmp/gone.txt", b"in the pod".to_vec(), None).await.expect("write");

    runtime.stop(&name).await.expect("stop");
    let sandbox = standin.object("sandboxes.agents.x-k8s.io", "default", &held).unwrap();
    assert_eq!(sandbox["spec"]["operatingMode"], "Suspended");
    assert!(standin.object("pods", "default", &held).is_none(), "its pod is gone");
    assert!(volume_exists(&volume).await, "its volume is kept");
    assert!(client.info().await.is_err(), "nothing answers while stopped");
    assert_eq!(runtime.inspect(&name).await.expect("inspect").state, MachineState::Stopped);

    let started = runtime.start(&name).await.expect("start");
    assert_eq!(started.state, MachineState::Running);
    let client = BoxClient::at(started.guest().expect("a new address"), secret);
    client.info().await.expect("the new pod's guest takes the box's secret");
    let pooled = BoxClient::at(started.guest().unwrap(), &pool_secret(&standin, &pool));
    assert!(pooled.info().await.is_err(), "and refuses the pool's");
    assert_eq!(&client.read_file("/root/kept.txt").await.unwrap()[..], b"on the volume");
    assert!(client.read_file("/tmp/gone.txt").await.is_err(), "the rest is the image's again");

    runtime.remove(&name).await.expect("remove");
    for (resource, object) in
        [(CLAIMS, &name), ("secrets", &name), ("persistentvolumeclaims", &pvc_name)]
    {
        let left = || standin.object(resource, "default", object).is_some();
        holm_testkit::eventually(Duration::from_secs(30), "the box's objects to go", || async {
            (!left()).then_some(())
        })
        .await;
    }
    holm_testkit::eventually(Duration::from_secs(30), "its volume to go", || async {
        (!volume_exists(&volume).await).then_some(())
    })
    .await;
}
