//! `holm-bench --quick --kubernetes KUBECONFIG` end to end against the
//! Kubernetes API stand-in: a claim from an agent-sandbox warm pool, a cold
//! pod and a cold Docker box each measured, the report written, every box
//! removed. No time is asserted.

use std::process::Command;

use holm_standins::kube::KubeStandin;
use holm_testkit::{container_exists, e2e_enabled, ensure_image};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubernetes_rows_measure_a_claim_a_cold_pod_and_docker_and_clean_up() {
    if !e2e_enabled().await {
        return;
    }
    ensure_image().await;
    let standin = KubeStandin::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = standin.write_kubeconfig(dir.path());
    let out = dir.path().join("bench.json");
    let bench = env!("CARGO_BIN_EXE_holm-bench");
    let run = tokio::task::spawn_blocking(move || {
        Command::new(bench)
            .arg("--quick")
            .arg("--kubernetes")
            .arg(&kubeconfig)
            .arg("--out")
            .arg(&out)
            .output()
    });
    let run = run.await.unwrap().expect("run holm bench");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "holm bench failed:\n{stderr}\n{stdout}");
    assert!(stdout.contains("claim from a warm pool"), "no rows printed:\n{stdout}");

    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("bench.json")).unwrap()).unwrap();
    let rows = &report["kubernetes"];
    for row in ["claim", "cold_pod", "cold_docker"] {
        assert_eq!(rows[row]["n"].as_u64(), Some(1), "{row}: {rows}");
        assert!(rows[row]["p50_ms"].as_f64().is_some_and(|ms| ms > 0.0), "{row}: {rows}");
    }
    assert!(rows["pod_over_claim_p50"].as_f64().is_some(), "{rows}");
    // The first claim (which makes the pool), then a claim, a pod and a
    // Docker box: all gone.
    let made = report["boxes"].as_array().unwrap();
    assert_eq!(made.len(), 4, "{made:?}");
    for id in made {
        let id = id.as_str().unwrap();
        assert!(!container_exists(id).await, "box {id} was left running");
        let pod = holm_standins::kube::labelled_pod(holm::runtime::LABEL_BOX, id);
        assert!(pod.is_none(), "box {id}'s pod was left");
    }
}
