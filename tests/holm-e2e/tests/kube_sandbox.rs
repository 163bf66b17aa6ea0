//! kubectl drives agent-sandbox's kinds on holm's Kubernetes API stand-in:
//! a `Sandbox` of the real box image becomes `Ready` (the controller's
//! pod, headless Service and status), its guest answers at the reported
//! `podIPs`, `operatingMode: Suspended` removes the pod and `Running`
//! brings a new one, and deleting the Sandbox removes what it owns; the
//! project's own examples apply unchanged (its hello-world Sandbox runs
//! to `Finished`; its aider SandboxTemplate, SandboxWarmPool and
//! SandboxClaim are accepted by the CRDs' schemas and reconciled); a SandboxWarmPool of
//! the box image keeps its ready Sandboxes, a SandboxClaim adopts one (its
//! guest answering at the claim's `podIPs`) and the pool makes another,
//! and deleting the claim and the pool removes what they own.

use std::path::Path;

use holm_standins::kube::KubeStandin;
use holm_testkit::e2e_enabled;
use holm_testkit::kube::{guest_health, kubectl, ok};
use serde_json::Value;

/// The guest's `GET /health` at `ip:8765`: whether it answers 200.
async fn healthy(ip: &str) -> bool {
    guest_health(ip).await.is_some_and(|r| r.starts_with("HTTP/1.1 200"))
}

async fn sandbox(config: &Path, name: &str) -> Value {
    serde_json::from_str(&ok(config, &["get", "sandbox", name, "-o", "json"]).await).unwrap()
}

fn condition<'a>(o: &'a Value, kind: &str) -> &'a Value {
    o["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == kind))
        .unwrap_or_else(|| panic!("no {kind} condition: {o:#}"))
}

fn box_sandbox(image: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: Secret
metadata: {{name: box-secret}}
stringData: {{secret: 0123456789abcdef0123}}
---
apiVersion: agents.x-k8s.io/v1beta1
kind: Sandbox
metadata:
  name: box
spec:
  service: true
  podTemplate:
    metadata:
      labels: {{app: holm-box}}
    spec:
      automountServiceAccountToken: false
      containers:
      - name: guest
        image: {image}
        ports: [{{containerPort: 8765}}]
        readinessProbe: {{httpGet: {{path: /health, port: 8765}}, periodSeconds: 1}}
        env:
        - name: HOLM_BOX_SECRET
          valueFrom: {{secretKeyRef: {{name: box-secret, key: secret}}}}
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_of_the_box_image_is_ready_suspends_resumes_and_goes() {
    if !e2e_enabled().await {
        return;
    }
    let image = holm_testkit::ensure_image().await;
    let standin = KubeStandin::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = standin.write_kubeconfig(dir.path());
    let file = dir.path().join("sandbox.yaml");
    std::fs::write(&file, box_sandbox(&image)).unwrap();
    ok(&config, &["apply", "-f", file.to_str().unwrap()]).await;

    ok(&config, &["wait", "--for=condition=Ready", "sandbox/box", "--timeout=120s"]).await;
    let table = ok(&config, &["get", "sandbox", "box"]).await;
    let row: Vec<&str> = table.lines().nth(1).unwrap_or("").split_whitespace().collect();
    assert_eq!(
        row[..3],
        ["box", "True", "DependenciesReady"],
        "the CRD's printer columns: {table}"
    );
    let sb = sandbox(&config, "box").await;
    let ready = condition(&sb, "Ready");
    assert_eq!(
        (ready["reason"].as_str(), ready["message"].as_str()),
        (Some("DependenciesReady"), Some("Pod is Ready; Service Exists"))
    );
    assert_eq!(condition(&sb, "Suspended")["reason"], "NotSuspended");
    assert_eq!(sb["status"]["serviceFQDN"], "box.default.svc.cluster.local");
    let hash = sb["status"]["selector"].as_str().unwrap().rsplit('=').next().unwrap().to_owned();
    let pod: Value =
        serde_json::from_str(&ok(&config, &["get", "pod", "box", "-o", "json"]).await).unwrap();
    assert_eq!(pod["metadata"]["labels"]["agents.x-k8s.io/sandbox-name-hash"], hash.as_str());
    assert_eq!(pod["metadata"]["labels"]["app"], "holm-box");
    assert_eq!(pod["metadata"]["ownerReferences"][0]["uid"], sb["metadata"]["uid"]);
    let ip = sb["status"]["podIPs"][0].as_str().unwrap().to_owned();
    assert!(healthy(&ip).await, "the guest answers at the sandbox's podIPs[0] {ip}");

    suspend_and_resume(&config).await;

    let (patched, _, stderr) =
        kubectl(&config, &["patch", "sandbox", "box", "-p", r#"{"spec":{"service":false}}"#]).await;
    assert!(
        !patched && stderr.contains("application/strategic-merge-patch+json is not supported"),
        "{stderr}"
    );

    ok(&config, &["delete", "sandbox", "box"]).await;
    ok(&config, &["wait", "--for=delete", "pod/box", "service/box", "--timeout=60s"]).await;
    assert!(standin.pod_container("default", "box").is_none());
}

/// `operatingMode: Suspended` removes the Sandbox's pod and its
/// addresses; `Running` brings a new pod whose guest answers.
async fn suspend_and_resume(config: &Path) {
    ok(
        config,
        &[
            "patch",
            "sandbox",
            "box",
            "--type=merge",
            "-p",
            r#"{"spec":{"operatingMode":"Suspended"}}"#,
        ],
    )
    .await;
    ok(config, &["wait", "--for=condition=Suspended", "sandbox/box", "--timeout=60s"]).await;
    let sb = sandbox(config, "box").await;
    assert_eq!(condition(&sb, "Ready")["reason"], "SandboxSuspended");
    assert!(sb["status"].get("podIPs").is_none(), "{sb:#}");
    let (found, _, stderr) = kubectl(config, &["get", "pod", "box"]).await;
    assert!(!found && stderr.contains("not found"), "the pod is gone: {stderr}");

    ok(
        config,
        &[
            "patch",
            "sandbox",
            "box",
            "--type=merge",
            "-p",
            r#"{"spec":{"operatingMode":"Running"}}"#,
        ],
    )
    .await;
    ok(config, &["wait", "--for=condition=Ready", "sandbox/box", "--timeout=120s"]).await;
    let ip = sandbox(config, "box").await["status"]["podIPs"][0].as_str().unwrap().to_owned();
    assert!(healthy(&ip).await, "a new pod answers at {ip}");
}

/// kubernetes-sigs/agent-sandbox's `examples/hello-world-sandbox/hello-world.yaml`,
/// with `${IMAGE}` given.
const HELLO_WORLD: &str = "apiVersion: agents.x-k8s.io/v1beta1
kind: Sandbox
metadata:
  name: hello-world
spec:
  podTemplate:
    spec:
      containers:
      - name: my-container
        image: ${IMAGE}
      restartPolicy: Never
";

/// kubernetes-sigs/agent-sandbox's `examples/aider-sandbox/` (`template.yaml`,
/// `warmpool.yaml`, `claim.yaml`), unchanged.
const AIDER: &str = r#"apiVersion: extensions.agents.x-k8s.io/v1beta1
kind: SandboxTemplate
metadata:
  name: aider-browser-template
  namespace: default
spec:
  networkPolicyManagement: Managed
  networkPolicy:
    ingress:
    - ports: [{protocol: TCP, port: 8501}]
    egress:
    - ports: [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]
    - ports: [{protocol: TCP, port: 443}]
  volumeClaimTemplates:
  - metadata:
      name: workspace-volume
    spec:
      accessModes: [ "ReadWriteOnce" ]
      resources:
        requests:
          storage: 10Gi
  podTemplate:
    spec:
      securityContext:
        fsGroup: 1000
      initContainers:
      - name: git-clone
        image: alpine/git
        workingDir: /workspace
        env:
        - name: REPO_URL
          value: "REPO_URL"
        command:
        - /bin/sh
        - -c
        - |
          if [ ! -d /workspace/.git ]; then
            git clone "$REPO_URL" .
          fi
          chown -R 1000:1000 /workspace
        volumeMounts:
        - name: workspace-volume
          mountPath: /workspace
      containers:
      - name: aider
        image: aider-sandbox:v1
        imagePullPolicy: Never
        workingDir: /workspace
        ports:
        - containerPort: 8501
        env:
        - name: OPENAI_API_KEY
          valueFrom:
            secretKeyRef:
              name: llm-secrets
              key: openai-api-key
              optional: true
        volumeMounts:
        - name: workspace-volume
          mountPath: /workspace
---
apiVersion: extensions.agents.x-k8s.io/v1beta1
kind: SandboxWarmPool
metadata:
  name: aider-warmpool
  namespace: default
spec:
  replicas: 1
  sandboxTemplateRef:
    name: aider-browser-template
---
apiVersion: extensions.agents.x-k8s.io/v1beta1
kind: SandboxClaim
metadata:
  name: user-session-aider
  namespace: default
spec:
  warmPoolRef:
    name: aider-warmpool
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_sandbox_projects_examples_apply_unchanged() {
    if !e2e_enabled().await {
        return;
    }
    holm_testkit::matrix::ensure_base().await;
    let standin = KubeStandin::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = standin.write_kubeconfig(dir.path());
    let hello = dir.path().join("hello-world.yaml");
    std::fs::write(&hello, HELLO_WORLD.replace("${IMAGE}", holm::image::BASE_IMAGE)).unwrap();
    ok(&config, &["apply", "-f", hello.to_str().unwrap()]).await;
    // The image's own command (`bash` with no input) ends at once: the
    // pod succeeds and the Sandbox is Finished, not Ready.
    ok(&config, &["wait", "--for=condition=Finished", "sandbox/hello-world", "--timeout=120s"])
        .await;
    let sb = sandbox(&config, "hello-world").await;
    assert_eq!(condition(&sb, "Finished")["reason"], "PodSucceeded");
    assert_eq!(condition(&sb, "Ready")["reason"], "PodSucceeded");

    let aider = dir.path().join("aider.yaml");
    std::fs::write(&aider, AIDER).unwrap();
    let applied = ok(&config, &["apply", "-f", aider.to_str().unwrap()]).await;
    for line in [
        "sandboxtemplate.extensions.agents.x-k8s.io/aider-browser-template created",
        "sandboxwarmpool.extensions.agents.x-k8s.io/aider-warmpool created",
        "sandboxclaim.extensions.agents.x-k8s.io/user-session-aider created",
    ] {
        assert!(applied.contains(line), "{applied}");
    }
    let list: Value = serde_json::from_str(
        &ok(&config, &["get", "sandboxtemplate,swp,sandboxclaim", "-o", "json"]).await,
    )
    .unwrap();
    let kinds: Vec<&str> =
        list["items"].as_array().unwrap().iter().filter_map(|o| o["kind"].as_str()).collect();
    assert_eq!(kinds, ["SandboxTemplate", "SandboxWarmPool", "SandboxClaim"]);
    // The pool makes a Sandbox of the template and the claim adopts it;
    // its image is not on the engine, so its pod waits in ErrImagePull
    // and the claim is not Ready.
    ok(
        &config,
        &[
            "wait",
            "--for=jsonpath={.status.conditions[0].reason}=DependenciesNotReady",
            "sandboxclaim/user-session-aider",
            "--timeout=60s",
        ],
    )
    .await;
    let claim: Value = serde_json::from_str(
        &ok(&config, &["get", "sandboxclaim", "user-session-aider", "-o", "json"]).await,
    )
    .unwrap();
    let adopted = claim["status"]["sandbox"]["name"].as_str().unwrap().to_owned();
    assert!(adopted.starts_with("aider-warmpool-"), "{claim:#}");
    let pod: Value =
        serde_json::from_str(&ok(&config, &["get", "pod", &adopted, "-o", "json"]).await).unwrap();
    assert_eq!(
        pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"], "ErrImagePull",
        "{pod:#}"
    );
    let template = &list["items"][0];
    assert_eq!(template["spec"]["podTemplate"]["spec"]["initContainers"][0]["name"], "git-clone");
    assert_eq!(template["metadata"]["generation"], 1);
    ok(&config, &["delete", "-f", aider.to_str().unwrap(), "-f", hello.to_str().unwrap()]).await;
}

fn box_pool(image: &str) -> String {
    let sandbox = box_sandbox(image);
    let template = sandbox.split("---\n").nth(1).unwrap();
    let template = template
        .replace(
            "apiVersion: agents.x-k8s.io/v1beta1",
            "apiVersion: extensions.agents.x-k8s.io/v1beta1",
        )
        .replace("kind: Sandbox\n", "kind: SandboxTemplate\n")
        .replace("  name: box\n", "  name: holm-box\n")
        .replace("  service: true\n", "");
    format!(
        "{}---\n{template}---\napiVersion: extensions.agents.x-k8s.io/v1beta1\nkind: SandboxWarmPool\nmetadata: {{name: desktops}}\nspec:\n  replicas: 1\n  sandboxTemplateRef: {{name: holm-box}}\n",
        sandbox.split("---\n").next().unwrap()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_adopts_a_warm_box_and_the_pool_makes_another() {
    if !e2e_enabled().await {
        return;
    }
    let image = holm_testkit::ensure_image().await;
    let standin = KubeStandin::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = standin.write_kubeconfig(dir.path());
    let file = dir.path().join("pool.yaml");
    std::fs::write(&file, box_pool(&image)).unwrap();
    ok(&config, &["apply", "-f", file.to_str().unwrap()]).await;
    let one_ready =
        ["wait", "--for=jsonpath={.status.readyReplicas}=1", "swp/desktops", "--timeout=120s"];
    ok(&config, &one_ready).await;
    let pool: Value =
        serde_json::from_str(&ok(&config, &["get", "swp", "desktops", "-o", "json"]).await)
            .unwrap();
    let selector = pool["status"]["selector"].as_str().unwrap().to_owned();
    assert!(selector.starts_with("agents.x-k8s.io/warm-pool-sandbox="), "{pool:#}");
    let members = |out: String| -> Vec<String> { out.lines().map(str::to_owned).collect() };
    let warm = members(ok(&config, &["get", "sandbox", "-l", &selector, "-o", "name"]).await);
    assert_eq!(warm.len(), 1, "{warm:?}");
    let warm = warm[0].trim_start_matches("sandbox.agents.x-k8s.io/").to_owned();
    assert!(warm.starts_with("desktops-"), "{warm}");

    let claim = dir.path().join("claim.yaml");
    std::fs::write(&claim, "apiVersion: extensions.agents.x-k8s.io/v1beta1\nkind: SandboxClaim\nmetadata: {name: alice}\nspec: {warmPoolRef: {name: desktops}}\n").unwrap();
    ok(&config, &["apply", "-f", claim.to_str().unwrap()]).await;
    ok(&config, &["wait", "--for=condition=Ready", "sandboxclaim/alice", "--timeout=60s"]).await;
    let c: Value =
        serde_json::from_str(&ok(&config, &["get", "sandboxclaim", "alice", "-o", "json"]).await)
            .unwrap();
    assert_eq!(c["status"]["sandbox"]["name"], warm.as_str(), "the warm Sandbox is adopted: {c:#}");
    let table = ok(&config, &["get", "sandboxclaim", "alice"]).await;
    let row: Vec<&str> = table.lines().nth(1).unwrap_or("").split_whitespace().collect();
    assert_eq!(row[..4], ["alice", "True", warm.as_str(), "DependenciesReady"], "{table}");
    assert_eq!(c["metadata"]["annotations"]["agents.x-k8s.io/sandbox-name"], warm.as_str());
    let ip = c["status"]["sandbox"]["podIPs"][0].as_str().unwrap().to_owned();
    assert!(healthy(&ip).await, "the claimed box answers at {ip}");
    let adopted = sandbox(&config, &warm).await;
    assert_eq!(adopted["metadata"]["ownerReferences"][0]["kind"], "SandboxClaim");
    assert_eq!(adopted["metadata"]["labels"]["agents.x-k8s.io/claim-uid"], c["metadata"]["uid"]);
    assert!(adopted["metadata"]["labels"].get("agents.x-k8s.io/warm-pool-sandbox").is_none());

    // The pool makes another warm Sandbox in its place.
    ok(&config, &one_ready).await;
    let refill = members(ok(&config, &["get", "sandbox", "-l", &selector, "-o", "name"]).await);
    assert_eq!(refill.len(), 1, "{refill:?}");
    assert!(!refill[0].ends_with(&warm), "{refill:?}");

    ok(&config, &["delete", "sandboxclaim", "alice"]).await;
    ok(&config, &["wait", "--for=delete", &format!("pod/{warm}"), "--timeout=60s"]).await;
    assert!(kubectl(&config, &["get", "sandbox", &warm]).await.2.contains("not found"));
    ok(&config, &["delete", "swp", "desktops"]).await;
    ok(&config, &["wait", "--for=delete", "pods", "--all", "--timeout=60s"]).await;
    assert_eq!(ok(&config, &["get", "sandbox", "-o", "name"]).await, "");

    std::fs::write(&claim, "apiVersion: extensions.agents.x-k8s.io/v1beta1\nkind: SandboxClaim\nmetadata: {name: bob}\nspec: {warmPoolRef: {name: nopool}}\n").unwrap();
    ok(&config, &["apply", "-f", claim.to_str().unwrap()]).await;
    ok(
        &config,
        &[
            "wait",
            "--for=jsonpath={.status.conditions[0].reason}=WarmPoolNotFound",
            "sandboxclaim/bob",
            "--timeout=60s",
        ],
    )
    .await;
}

/// holm's own manifest of a box as an agent-sandbox `Sandbox`
/// (`deploy/kubernetes/holm-box-sandbox.yaml`), applied as a user would
/// (the image set, the box secret's Secret made first): the
/// Sandbox is Ready through its probe on sandboxd's `/v1/health`, and an
/// agent-sandbox client reaches the box's files through sandboxd's
/// contract at the Sandbox's `podIPs`, with the box secret and not without.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holms_box_sandbox_manifest_serves_agent_sandboxs_contract() {
    if !e2e_enabled().await {
        return;
    }
    let image = holm_testkit::ensure_image().await;
    let standin = KubeStandin::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = standin.write_kubeconfig(dir.path());
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/kubernetes/holm-box-sandbox.yaml"),
    )
    .unwrap();
    let placeholder = "registry.example.com/holm-box:latest";
    assert!(shipped.contains(placeholder), "the manifest names its image placeholder");
    // The Secret as YAML: `kubectl create secret` sends protobuf, which
    // the stand-in does not speak (docs/kubernetes-standin.md).
    let secret = "sandboxd-box-secret-0123456789";
    let secret_yaml = format!(
        "apiVersion: v1\nkind: Secret\nmetadata: {{name: holm-box-secret}}\nstringData: {{secret: {secret}}}\n"
    );
    let secret_file = dir.path().join("secret.yaml");
    std::fs::write(&secret_file, secret_yaml).unwrap();
    ok(&config, &["apply", "-f", secret_file.to_str().unwrap()]).await;
    let file = dir.path().join("holm-box-sandbox.yaml");
    std::fs::write(&file, shipped.replace(placeholder, &image)).unwrap();
    ok(&config, &["apply", "-f", file.to_str().unwrap()]).await;
    ok(&config, &["wait", "--for=condition=Ready", "sandbox/holm-box", "--timeout=120s"]).await;

    let sb = sandbox(&config, "holm-box").await;
    let ip = sb["status"]["podIPs"][0].as_str().unwrap().to_owned();
    let base = format!("http://{ip}:8080/v1");
    let http = holm_client::client_builder().build().unwrap();
    let health: Value =
        http.get(format!("{base}/health")).send().await.unwrap().json().await.unwrap();
    assert_eq!(health["status"], "ok", "{health}");
    let file_url = format!("{base}/files/tmp/from-agent-sandbox.txt");
    let r = http.put(&file_url).body("nope").send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = http.put(&file_url).bearer_auth(secret).body("hello from a client").send().await;
    assert_eq!(r.unwrap().status(), 204);
    let r = http.get(&file_url).bearer_auth(secret).send().await.unwrap();
    assert_eq!(r.text().await.unwrap(), "hello from a client");
    let r = http.get(format!("{base}/metadata")).bearer_auth(secret).send().await.unwrap();
    let metadata: Value = r.json().await.unwrap();
    assert_eq!(metadata["env"]["SANDBOX_NAME"], "holm-box", "{metadata}");
    // holm's own API answers beside it.
    assert!(healthy(&ip).await, "the guest's own API at {ip}:8765");

    ok(&config, &["delete", "sandbox", "holm-box"]).await;
    ok(&config, &["wait", "--for=delete", "pod/holm-box", "--timeout=60s"]).await;
    assert!(standin.pod_container("default", "holm-box").is_none());
}
