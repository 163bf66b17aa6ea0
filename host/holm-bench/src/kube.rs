//! `holm-bench --kubernetes KUBECONFIG`: a box on Kubernetes, create →
//! holmd answers `running`, claimed from an agent-sandbox warm pool against
//! a cold pod (plain-pods mode), by turns, beside a cold Docker create of
//! the same request in the same run, as ratios.
//!
//! The benchmark's holmd offers two `kubernetes` runtimes on the cluster
//! the kubeconfig names: `k8s-claims` (mode `agent-sandbox`, a warm pool of
//! one) and `k8s-pods` (mode `pods`). A first claim makes the pool (holm
//! makes a kind's template and pool at its first box) and is not counted.
//! Each turn then waits until the pool is full again (its
//! `status.readyReplicas`, as agent-sandbox reports it), so every counted
//! claim takes a warm box; times a claim, a cold pod and a cold Docker
//! create, each removed before the next. On the Kubernetes API stand-in
//! (`holm_standins::kube`) a pod is a container on the local engine, so
//! the figures are holm's own paths, not a cluster's scheduling or image
//! pulls: docs/benchmarks.md says which was measured.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use holm_proto::host::{CreateBox, Placement};
use serde::Serialize;

use super::pooled::create;
use super::server::Server;
use super::stats::{Samples, Summary};

/// The runtime whose boxes are claims on a warm pool.
pub const CLAIMS: &str = "k8s-claims";
/// The runtime whose boxes are cold pods.
pub const PODS: &str = "k8s-pods";

/// The runtimes file that offers [`CLAIMS`] and [`PODS`] on the cluster
/// `kubeconfig` reaches (in its current context and namespace `default`).
pub fn runtimes_file(kubeconfig: &Path) -> String {
    let path = kubeconfig.display().to_string().replace('\\', "\\\\").replace('"', "\\\"");
    format!(
        "[runtimes.{CLAIMS}]\nprovider = \"kubernetes\"\nkubeconfig = \"{path}\"\n\
         mode = \"agent-sandbox\"\nwarm_pool = 1\n\
         [runtimes.{PODS}]\nprovider = \"kubernetes\"\nkubeconfig = \"{path}\"\nmode = \"pods\"\n"
    )
}

/// The Kubernetes rows.
#[derive(Debug, Clone, Serialize)]
pub struct KubeRows {
    /// Turns.
    pub n: usize,
    /// Create → running, claiming a warm box of an agent-sandbox pool.
    pub claim: Summary,
    /// Create → running, a cold pod.
    pub cold_pod: Summary,
    /// Create → running, a cold Docker container, same request, by turns.
    pub cold_docker: Summary,
    /// Cold pod p50 over claim p50.
    pub pod_over_claim_p50: Option<f64>,
    /// Claim p50 over cold Docker p50.
    pub claim_over_docker_p50: Option<f64>,
}

fn ratio(a: &Summary, b: &Summary) -> Option<f64> {
    a.p50_ms.zip(b.p50_ms).map(|(a, b)| (a / b * 100.0).round() / 100.0)
}

/// Runs `n` turns of a claim, a cold pod and a cold Docker create of
/// `request`, watching the pool through `pools` (a runtime of the same
/// name and cluster as [`CLAIMS`]).
pub async fn run(
    server: &Server,
    pools: &holm::runtime::kubernetes::KubernetesRuntime,
    request: &CreateBox,
    n: usize,
    progress: &dyn Fn(&str),
) -> anyhow::Result<KubeRows> {
    let on = |runtime: &str| CreateBox {
        placement: Placement { runtime: Some(runtime.to_owned()), ..request.placement.clone() },
        ..request.clone()
    };
    let (claims, pods, docker) = (on(CLAIMS), on(PODS), on("docker"));
    progress("kubernetes: a first claim makes the warm pool (not counted)");
    create(server, &claims).await.context("the first claim")?;
    let (mut claim, mut cold_pod, mut cold_docker) =
        (Samples::default(), Samples::default(), Samples::default());
    for i in 0..n {
        progress(&format!("kubernetes {}/{n}: waiting for the warm pool to fill", i + 1));
        wait_for_pools(pools).await?;
        claim.push(create(server, &claims).await.context("a claim")?);
        progress(&format!("kubernetes {}/{n}: a cold pod and a cold Docker box", i + 1));
        cold_pod.push(create(server, &pods).await.context("a cold pod")?);
        cold_docker.push(create(server, &docker).await.context("a Docker box")?);
    }
    let summary = |s: Samples| s.summary();
    let (claim, cold_pod, cold_docker) = (summary(claim), summary(cold_pod), summary(cold_docker));
    Ok(KubeRows {
        n,
        pod_over_claim_p50: ratio(&cold_pod, &claim),
        claim_over_docker_p50: ratio(&claim, &cold_docker),
        claim,
        cold_pod,
        cold_docker,
    })
}

/// Waits until every pool of [`CLAIMS`] has its boxes ready.
async fn wait_for_pools(
    pools: &holm::runtime::kubernetes::KubernetesRuntime,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(300);
    while !pools.warm_pools_ready().await.context("read the warm pools")? {
        if Instant::now() > deadline {
            bail!("the warm pool did not fill in 300 seconds");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

/// The report of a `--kubernetes` run, as written to `--out`.
#[derive(Debug, Serialize)]
pub struct KubeReport {
    /// The version, when it ran, how long, the command and the machine.
    #[serde(flatten)]
    pub run: crate::report::Run,
    /// The box image.
    pub image: String,
    /// The rows.
    pub kubernetes: KubeRows,
    /// Every box the run made (all removed at its end).
    pub boxes: Vec<String>,
}

/// Measures the rows on the cluster `kubeconfig` reaches with a holmd of
/// its own, `n` turns, and writes and prints the report.
pub async fn bench(
    kubeconfig: &Path,
    n: usize,
    image: String,
    mut machine: crate::report::Machine,
    (started, t0): (std::time::SystemTime, Instant),
    (out, json): (&Path, bool),
) -> anyhow::Result<std::process::ExitCode> {
    use holm::runtime::kubernetes::{KubeSettings, KubernetesRuntime, Mode};
    let docker = holm::runtime::docker::DockerRuntime::connect("docker")?;
    let settings = KubeSettings {
        kubeconfig: Some(kubeconfig.to_owned()),
        mode: Mode::AgentSandbox,
        ..KubeSettings::default()
    };
    let pools = KubernetesRuntime::new(CLAIMS, settings, docker.clone());
    holm::runtime::Runtime::ping(&pools).await.context("the cluster of --kubernetes")?;
    let server = Server::start(&[CLAIMS.to_owned(), PODS.to_owned()], &runtimes_file(kubeconfig))?;
    let request = crate::bench_request(&holm::ids::new_box_id(), holm_proto::guest::Profile::X11);
    let measured = run(&server, &pools, &request, n, &crate::progress);
    let result = tokio::select! {
        r = measured => r,
        _ = tokio::signal::ctrl_c() => Err(anyhow::anyhow!("interrupted")),
    };
    server.remove_all().await;
    let boxes = server.every_box();
    drop(server);
    machine.finish(docker.docker()).await;
    let report = KubeReport {
        run: crate::run_header(started, t0, machine),
        image,
        kubernetes: result?,
        boxes,
    };
    crate::finish(&report, out, json, || print(&report.kubernetes))
}

/// Prints the rows.
pub fn print(rows: &KubeRows) {
    let line = |what: &str, s: &Summary| {
        let ms = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.0} ms"));
        crate::output::line(&format!(
            "{what:<36} p50 {:>9}  p99 {:>9}  (n = {})",
            ms(s.p50_ms),
            ms(s.p99_ms),
            s.n
        ));
    };
    line("claim from a warm pool (k8s-claims)", &rows.claim);
    line("cold pod (k8s-pods)", &rows.cold_pod);
    line("cold Docker box (docker)", &rows.cold_docker);
    let x = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v}x"));
    crate::output::line(&format!(
        "cold pod / claim: {}    claim / cold Docker: {}",
        x(rows.pod_over_claim_p50),
        x(rows.claim_over_docker_p50)
    ));
}
