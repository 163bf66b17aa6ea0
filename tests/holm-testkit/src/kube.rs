//! What the Kubernetes stand-in's tests share: the pinned `kubectl` run
//! against a kubeconfig, and the guest's `/health` at a pod's address.

use std::path::Path;
use std::process::Command;

/// Runs kubectl with `args` against the kubeconfig `config`, on a blocking
/// thread: its exit status, stdout and stderr.
pub async fn kubectl(config: &Path, args: &[&str]) -> (bool, String, String) {
    let mut command = Command::new(holm_standins::sdk::kubectl());
    command.env("KUBECONFIG", config).args(args);
    let out = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("kubectl's thread")
        .expect("run kubectl");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// kubectl with `args`, which must succeed; its stdout.
pub async fn ok(config: &Path, args: &[&str]) -> String {
    let (ok, stdout, stderr) = kubectl(config, args).await;
    assert!(ok, "kubectl {args:?} failed:\n{stdout}\n{stderr}");
    stdout
}

/// `GET /health` of the guest at `ip:8765` over a plain connection: the
/// whole response, or `None` when nothing listens there.
pub async fn guest_health(ip: &str) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect((ip, 8765)).await.ok()?;
    let request = format!("GET /health HTTP/1.1\r\nHost: {ip}\r\nConnection: close\r\n\r\n");
    s.write_all(request.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    Some(out)
}
