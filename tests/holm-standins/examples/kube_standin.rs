//! Runs the Kubernetes API stand-in by hand: prints the path of a
//! kubeconfig for it (`KUBECONFIG=… kubectl get pods`) and serves until
//! interrupted, then removes its pods' containers.

#[tokio::main]
async fn main() {
    let standin = holm_standins::kube::KubeStandin::start().await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = standin.write_kubeconfig(dir.path());
    println!("{}", config.display());
    let _ = tokio::signal::ctrl_c().await;
}
