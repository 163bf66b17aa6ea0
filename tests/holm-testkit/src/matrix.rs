//! One suite, many runtimes and display profiles: a box behaviour is written
//! once as a scenario taking a [`Target`], and [`suite!`](crate::suite) makes
//! one test of it per runtime and each of that runtime's profiles, named
//! `SCENARIO::RUNTIME::PROFILE` (`cargo test -p holm-e2e ::podman::` runs
//! a runtime's share).
//!
//! ```ignore
//! holm_testkit::suite!(a_box_lives_its_whole_life: docker [x11, wayland], docker_runsc [x11, wayland]);
//! async fn a_box_lives_its_whole_life(target: Target) { let server = target.server().await; ... }
//! ```
//!
//! A target is an engine (Docker or podman), an OCI runtime under it (the
//! engine's default, or `runsc` for gVisor) and a display profile. Its
//! server offers exactly that runtime, as the default, so a scenario
//! creates boxes with [`Target::create`] and never names a runtime. Each
//! engine builds its own box image from the bundled Dockerfile (a gVisor
//! target uses its engine's image). When the engine of a target does not
//! answer, the test fails saying what to start: CI never skips silently.
//!
//! A cloud vendor is a target too (`e2b`, `daytona`; X11, the one profile
//! their runtimes offer): its server has the vendor's runtime pointed at
//! the vendor's stand-in ([`crate::cloud`]), whose sandboxes are containers
//! on the local Docker engine marked with the sandbox's metadata, so the
//! scenario looks at a box's container the same way. Its requests name the
//! vendor's runtime.
//!
//! So is Kubernetes (`kubernetes`, plain pods; `kubernetes_claims`,
//! agent-sandbox's claims on a warm pool): its server offers the
//! `kubernetes` runtime pointed at a Kubernetes API stand-in of its own
//! ([`holm_standins::kube`]), whose pods are containers on the local
//! Docker engine, each at a loopback address of its own.

use holm::runtime::Runtime;
use holm::runtime::docker::DockerRuntime;
use holm_proto::guest::Profile;
use holm_proto::host::{BoxSpec, CreateBox, Placement};

use crate::cloud::{Cloud, CloudServer};
use crate::{FileLock, TestServer};

/// An engine that speaks the Docker Engine API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// Docker.
    Docker,
    /// podman's service, rootful.
    Podman,
}

impl Engine {
    /// The runtime's name for it (and its provider).
    pub fn name(self) -> &'static str {
        match self {
            Self::Docker => "docker",
            Self::Podman => "podman",
        }
    }

    /// A client of the engine, through holm's own runtime.
    pub fn runtime(self) -> DockerRuntime {
        match self {
            Self::Docker => DockerRuntime::connect("docker").expect("connect to Docker"),
            Self::Podman => holm::runtime::podman::connect("podman").expect("connect to podman"),
        }
    }

    /// The engine's bollard client, to look at containers, images and
    /// volumes as the engine reports them.
    pub fn client(self) -> bollard::Docker {
        self.runtime().docker().clone()
    }

    /// Fails the test unless the engine answers, saying what to start.
    pub async fn require(self) -> DockerRuntime {
        let rt = self.runtime();
        if let Err(e) = rt.ping().await {
            panic!("end-to-end tests on {} need its engine (run .ci/setup): {e}", self.name());
        }
        rt
    }
}

/// Where a scenario runs: an engine, an OCI runtime under it, a display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// The engine.
    pub engine: Engine,
    /// The OCI runtime under it (`runsc`), or the engine's default.
    pub isolation: Option<&'static str>,
    /// The display profile of the boxes.
    pub display: Profile,
    /// The cloud vendor whose stand-in runs the boxes (on the local Docker
    /// engine), or none for a host runtime.
    pub vendor: Option<Cloud>,
    /// The vendor is the real one, from its variables ([`crate::live`]),
    /// not its stand-in: nothing of it is on the local engine to look at.
    pub live: bool,
    /// The `kubernetes` runtime's mode (`pods`, `agent-sandbox`), its
    /// boxes pods of a Kubernetes API stand-in ([`holm_standins::kube`])
    /// on the local Docker engine; none for other runtimes.
    pub kube: Option<&'static str>,
}

impl Target {
    /// Docker, runc, X11.
    pub const DOCKER: Self = Self {
        engine: Engine::Docker,
        isolation: None,
        display: Profile::X11,
        vendor: None,
        live: false,
        kube: None,
    };
    /// podman, runc, X11.
    pub const PODMAN: Self = Self {
        engine: Engine::Podman,
        isolation: None,
        display: Profile::X11,
        vendor: None,
        live: false,
        kube: None,
    };
    /// Docker under gVisor, X11.
    pub const DOCKER_RUNSC: Self = Self {
        engine: Engine::Docker,
        isolation: Some("runsc"),
        display: Profile::X11,
        vendor: None,
        live: false,
        kube: None,
    };
    /// podman under gVisor, X11.
    pub const PODMAN_RUNSC: Self = Self {
        engine: Engine::Podman,
        isolation: Some("runsc"),
        display: Profile::X11,
        vendor: None,
        live: false,
        kube: None,
    };

    /// E2B through its stand-in, X11.
    pub const E2B: Self = Self::vendor(Cloud::E2b);
    /// Daytona through its stand-in, X11.
    pub const DAYTONA: Self = Self::vendor(Cloud::Daytona);
    /// Modal through its stand-in, X11.
    pub const MODAL: Self = Self::vendor(Cloud::Modal);
    /// Runtime Cloud through its stand-in, X11.
    pub const RUNTIME_CLOUD: Self = Self::vendor(Cloud::RuntimeCloud);
    /// Vercel Sandbox through its stand-in, X11.
    pub const VERCEL: Self = Self::vendor(Cloud::Vercel);
    /// Kubernetes, a box a Pod, a Secret and a headless Service, X11.
    pub const KUBERNETES: Self = Self::kube("pods");
    /// Kubernetes with agent-sandbox, a box a `SandboxClaim` on a warm
    /// pool, X11.
    pub const KUBERNETES_CLAIMS: Self = Self::kube("agent-sandbox");

    const fn vendor(cloud: Cloud) -> Self {
        Self {
            engine: Engine::Docker,
            isolation: None,
            display: Profile::X11,
            vendor: Some(cloud),
            live: false,
            kube: None,
        }
    }

    /// The `kubernetes` runtime in `mode` on a Kubernetes API stand-in, X11.
    const fn kube(mode: &'static str) -> Self {
        Self { kube: Some(mode), ..Self::DOCKER }
    }

    /// The real vendor `cloud`, from its own variables ([`crate::live`]), X11.
    pub const fn live(cloud: Cloud) -> Self {
        Self { live: true, ..Self::vendor(cloud) }
    }

    /// The target a [`suite!`](crate::suite) names: a runtime (`docker`,
    /// `podman`, `docker_runsc`, `podman_runsc`, `e2b`, `daytona`, `modal`,
    /// `runtime_cloud`, `vercel`, `kubernetes`, `kubernetes_claims`) and a
    /// profile (`x11`, `wayland`).
    pub fn named(runtime: &str, profile: &str) -> Self {
        let target = match runtime {
            "docker" => Self::DOCKER,
            "podman" => Self::PODMAN,
            "docker_runsc" => Self::DOCKER_RUNSC,
            "podman_runsc" => Self::PODMAN_RUNSC,
            "e2b" => Self::E2B,
            "daytona" => Self::DAYTONA,
            "modal" => Self::MODAL,
            "runtime_cloud" => Self::RUNTIME_CLOUD,
            "vercel" => Self::VERCEL,
            "kubernetes" => Self::KUBERNETES,
            "kubernetes_claims" => Self::KUBERNETES_CLAIMS,
            other => panic!("no test target is called {other:?}"),
        };
        let display = match profile {
            "x11" => Profile::X11,
            "wayland" => Profile::Wayland,
            other => panic!("no display profile is called {other:?}"),
        };
        target.with_display(display)
    }

    /// The same target with another display profile.
    #[must_use]
    pub const fn with_display(mut self, display: Profile) -> Self {
        self.display = display;
        self
    }

    /// The name of the runtime its server offers: the engine's, or
    /// `<engine>-<isolation>` for a runtime the runtimes file adds.
    pub fn runtime_name(&self) -> String {
        if let Some(cloud) = self.vendor {
            return cloud.name().to_owned();
        }
        if self.kube.is_some() {
            return "kubernetes".to_owned();
        }
        match self.isolation {
            None => self.engine.name().to_owned(),
            Some(i) => format!("{}-{i}", self.engine.name()),
        }
    }

    /// The runtimes file that offers this target's runtime.
    pub fn runtimes_file(&self) -> String {
        let name = self.runtime_name();
        match self.isolation {
            None => format!("default = \"{name}\"\n"),
            Some(i) => format!(
                "default = \"{name}\"\n[runtimes.{name}]\nprovider = \"{}\"\nisolation = \"{i}\"\n",
                self.engine.name()
            ),
        }
    }

    /// A server offering only this target's runtime, as its default, after
    /// making sure the engine has the box image.
    pub async fn server(&self) -> TestServer {
        self.server_with(|_| {}).await
    }

    /// [`Target::server`], with its configuration changed by `change` last
    /// (a host runtime's only; a vendor's server is the stand-in's, or the
    /// real vendor's on a live run).
    pub async fn server_with(
        &self,
        change: impl FnOnce(&mut holmd::config::ServerConfig),
    ) -> TestServer {
        if let (true, Some(cloud)) = (self.live, self.vendor) {
            // Vercel's runtime builds the box image on the local engine.
            if cloud == Cloud::Vercel {
                self.ensure_image().await;
            }
            return crate::live::server_from_env(cloud).await;
        }
        self.ensure_image().await;
        if let Some(cloud) = self.vendor {
            // The stand-in lives as long as the server.
            let CloudServer { mut server, standin, .. } = cloud.server().await;
            server.keep(standin);
            return server;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("runtimes.toml");
        let mut runtimes = self.runtimes_file();
        let standin = match self.kube {
            Some(mode) => {
                let standin = holm_standins::kube::KubeStandin::start().await;
                let config = standin.write_kubeconfig(dir.path());
                runtimes = format!(
                    "default = \"kubernetes\"\n[runtimes.kubernetes]\nprovider = \"kubernetes\"\n\
                     kubeconfig = \"{}\"\nnamespace = \"default\"\nmode = \"{mode}\"\n",
                    config.display()
                );
                if mode == "agent-sandbox" {
                    // A volume at /root: its boxes can stop and start.
                    runtimes.push_str("volume_size = \"1Gi\"\n");
                }
                Some(standin)
            }
            None => None,
        };
        std::fs::write(&file, runtimes).expect("write the runtimes file");
        let name = self.runtime_name();
        let mut server = TestServer::start_without_image(move |c| {
            c.runtimes = Some(vec![name]);
            c.config_file = Some(file);
            change(c);
        })
        .await;
        server.keep(dir);
        if let Some(standin) = standin {
            // The stand-in lives as long as the server.
            server.keep(standin);
        }
        server
    }

    /// Makes sure the engine has the plain box image of the target's
    /// display profile, and answers its tag.
    pub async fn ensure_image(&self) -> String {
        ensure_image_on(self.engine, self.display).await
    }

    /// A request for a box on this target, with `spec` and `placement`,
    /// on the target's display.
    pub fn request(&self, spec: BoxSpec, placement: Placement) -> CreateBox {
        let runtime = placement.runtime.or_else(|| self.vendor.map(|v| v.name().to_owned()));
        CreateBox {
            spec: BoxSpec { display: Some(self.display), ..spec },
            placement: Placement { runtime, ..placement },
        }
    }

    /// CPUs a box asks for that the target takes: a fraction on a host
    /// runtime, whole (and even, for E2B) at a vendor.
    pub fn cpus(&self) -> f64 {
        if self.vendor.is_some() { 2.0 } else { 1.5 }
    }

    /// Memory a box asks for that the target takes, and in bytes: 1 GiB,
    /// or on Vercel, which sets memory from the CPUs, 2 GiB per CPU.
    pub fn memory(&self) -> (&'static str, i64) {
        match self.vendor {
            Some(Cloud::Vercel) => ("4g", 4 << 30),
            _ => ("1g", 1 << 30),
        }
    }

    /// The default request for a box on this target.
    pub fn create(&self) -> CreateBox {
        self.request(BoxSpec::default(), Placement::default())
    }

    /// The engine's view of a box's container.
    pub async fn container(&self, box_id: &str) -> bollard::models::ContainerInspectResponse {
        let name = match self.container_name(box_id).await {
            Some(name) => name,
            None => panic!("no container of {box_id} on {}", self.runtime_name()),
        };
        self.engine
            .client()
            .inspect_container(&name, None)
            .await
            .unwrap_or_else(|e| panic!("inspect the container of {box_id}: {e}"))
    }

    /// What the engine knows of a box that did not come up: its
    /// container's state and the last lines it wrote (the guest logs
    /// there), for a failing assertion's message.
    pub async fn diagnose(&self, box_id: &str) -> String {
        use futures_util::StreamExt as _;
        let Some(name) = self.container_name(box_id).await else {
            return format!("no container of {box_id}");
        };
        let engine = self.engine.client();
        let state = match engine.inspect_container(&name, None).await {
            Ok(c) => format!("{:?}", c.state),
            Err(e) => format!("cannot inspect {name}: {e}"),
        };
        let options = bollard::query_parameters::LogsOptionsBuilder::default()
            .stdout(true)
            .stderr(true)
            .tail("80")
            .build();
        let mut lines = Vec::new();
        let mut logs = engine.logs(&name, Some(options));
        while let Some(line) = logs.next().await {
            match line {
                Ok(line) => lines.push(line.to_string()),
                Err(e) => {
                    lines.push(format!("(logs: {e})"));
                    break;
                }
            }
        }
        format!("container {name}: {state}\nits last lines:\n{}", lines.concat())
    }

    /// On a `kubernetes` target, the pod that runs `box_id` (labelled
    /// with it, or held by the claim labelled with it) and its container.
    pub fn kube_pod(&self, box_id: &str) -> Option<holm_standins::kube::FoundPod> {
        holm_standins::kube::labelled_pod(holm::runtime::LABEL_BOX, box_id)
    }

    /// Whether the engine has a container for `box_id`.
    pub async fn container_exists(&self, box_id: &str) -> bool {
        match self.container_name(box_id).await {
            Some(name) => self.engine.runtime().inspect(&name).await.is_ok(),
            None => false,
        }
    }

    /// The name of the container of `box_id`: holm's on a host runtime;
    /// on `kubernetes`, the stand-in's container of the box's pod; at a
    /// vendor, the stand-in's container of the sandbox whose metadata
    /// names the box.
    async fn container_name(&self, box_id: &str) -> Option<String> {
        if self.kube.is_some() {
            return self.kube_pod(box_id)?.container;
        }
        if self.vendor.is_none() {
            return Some(holm::runtime::docker::container_name(box_id));
        }
        let filters = std::collections::HashMap::from([(
            "label".to_owned(),
            vec![
                format!("{}={box_id}", holm::runtime::LABEL_BOX),
                holm_standins::engine::LABEL_OWNER.to_owned(),
            ],
        )]);
        let options = bollard::query_parameters::ListContainersOptionsBuilder::default()
            .all(true)
            .filters(&filters)
            .build();
        let found = self.engine.client().list_containers(Some(options)).await.ok()?;
        found
            .into_iter()
            .next()?
            .names?
            .into_iter()
            .next()
            .map(|n| n.trim_start_matches('/').to_owned())
    }
}

/// Makes sure the local Docker engine has the base image (the vendors'
/// images are built from it), one test process at a time.
pub async fn ensure_base() {
    let rt = Engine::Docker.require().await;
    let _lock = FileLock::acquire(".holm_e2e_image_docker.lock");
    let mut progress = |p: holm::image::Progress| eprintln!("[base] {p:?}");
    rt.make_base(&mut progress).await.expect("make the base image");
}

/// Makes sure `engine` has the plain box image of the `display` profile
/// (making the base first if needed) and answers its tag; one test process
/// builds at a time.
pub async fn ensure_image_on(engine: Engine, display: Profile) -> String {
    let rt = engine.require().await;
    let _lock = FileLock::acquire(&format!(".holm_e2e_image_{}.lock", engine.name()));
    let mut progress = |p: holm::image::Progress| eprintln!("[image {}] {p:?}", engine.name());
    rt.make_base(&mut progress).await.expect("make the base image");
    let request = holm::image::ImageRequest::default().with_display(display);
    rt.prepare_image(&request, &mut progress).await.expect("build the box image")
}

/// Makes one end-to-end test of a scenario (an `async fn(Target)`) per
/// runtime and each of its display profiles, `SCENARIO::RUNTIME::PROFILE`:
///
/// ```ignore
/// holm_testkit::suite!(a_box_lives_its_whole_life: docker [x11, wayland], podman [x11]);
/// ```
///
/// Each test runs only when end-to-end tests do ([`crate::e2e_enabled`]).
#[macro_export]
macro_rules! suite {
    ($scenario:ident: $($rt:ident $profiles:tt),+ $(,)?) => {
        mod $scenario {
            $($crate::suite!(@runtime $scenario $rt $profiles);)+
        }
    };
    (@runtime $scenario:ident $rt:ident [$($p:ident),+ $(,)?]) => {
        mod $rt {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $p() {
                    if !$crate::e2e_enabled().await {
                        return;
                    }
                    let target = $crate::matrix::Target::named(stringify!($rt), stringify!($p));
                    super::super::$scenario(target).await;
                }
            )+
        }
    };
}
