//! agent-sandbox mode: a box is a `SandboxClaim` on a `SandboxWarmPool` of a
//! `SandboxTemplate` (kubernetes-sigs/agent-sandbox, `v1beta1`).
//!
//! - **One template and pool per kind of box.** What a box's pod is made
//!   of (the image, the guest's environment but the secret's digest, the
//!   ports, resources and the settings' pod fields) names its template,
//!   `holm-t-` and 12 hex digits of its SHA-256, so boxes alike share a
//!   pool and a changed image makes a new one. The template, its pool
//!   (`warm_pool` ready boxes) and a Secret of the same name are made at
//!   the first box of that kind, by whichever server gets there first (an
//!   `AlreadyExists` answer is taken as "made").
//! - **The pool's boxes are identity-free.** They start with the *pool's*
//!   secret, whose digest the template's pod reads from the Secret (the
//!   secret itself is in the Secret too, under [`POOL_SECRET_KEY`], which
//!   no pod reads: the runtime needs it to reach a pool box's guest, and
//!   two servers must agree on it). A claim gives its box no `env`, which
//!   would start it cold: once the claim holds a running box, the runtime
//!   asks the box's guest, with the pool's secret, to take the *box's*
//!   secret's digest (`PUT /v1/secret` with `secret_sha256`); the box
//!   secret itself never reaches the cluster.
//! - **The box's end**: the claim's `lifecycle.shutdownTime` is the box's
//!   deadline, with `shutdownPolicy: Delete`, so the cluster ends a box no
//!   server removed.
//! - **Stop and start** (only with a `volume_size`): a box's template
//!   carries a `volumeClaimTemplates` entry mounted at [`VOLUME_PATH`];
//!   stop sets the claim's Sandbox `operatingMode: Suspended` (its pod
//!   goes, its volume stays) and start sets it `Running` again: a new pod
//!   on the same volume, whose guest starts with the pool's secret and is
//!   given the box's digest again, read from the box's own Secret
//!   (`holm-<box id>`, made with the claim when the box can stop). Files
//!   elsewhere are the image's again, as a new pod's are.
//! - **Confinement**: the template's pod is the plain-pods mode's (no
//!   service-account token, resources, runtime class, node selector,
//!   tolerations), and its NetworkPolicy (`networkPolicyManagement:
//!   Managed`, made by agent-sandbox's controller) lets in only holmd's
//!   pods ([`HOLMD_LABEL`]) on the box's ports, and lets out DNS and every
//!   address but the private ranges and the metadata address.

use std::time::Duration;

use serde_json::{Value, json};
use sha2::Digest;

use super::client::{SANDBOX_CLAIMS, SANDBOX_TEMPLATES, SANDBOX_WARM_POOLS, SANDBOXES, SECRETS};
use super::objects::{self, Pod};
use super::runtime::KubernetesRuntime;
use super::{KubeSettings, object_name};
use crate::runtime::{
    ENV_SECRET_SHA256, LABEL_BOX, LABEL_RUNTIME, Machine, MachineSpec, Result, RuntimeError,
};

/// The key of the pool's own secret in its Secret (read by the runtime,
/// never by a pod).
pub const POOL_SECRET_KEY: &str = "holm-pool-secret";

/// The label of holmd's pods, the only ones a box lets in.
pub const HOLMD_LABEL: (&str, &str) = ("app.kubernetes.io/name", "holmd");

/// The addresses a box may not reach: the private ranges (RFC 1918, the
/// shared address space) and the link-local range with the metadata
/// address.
const BLOCKED: &[&str] =
    &["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16"];

/// The name of a box's volume, in its template and pod.
pub const VOLUME: &str = "holm-root";

/// Where a box's volume is mounted: root's home, where the box's files
/// are written unless a caller names another place.
pub const VOLUME_PATH: &str = "/root";

/// How long a claimed box's guest may take to answer before the claim
/// fails (it started with its pool, so it usually answers at once).
const GUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// The name of the template, pool and Secret of the boxes alike `spec`.
pub fn template_name(spec: &MachineSpec, runtime: &str, s: &KubeSettings) -> String {
    let mut made_of = pod_template(spec, runtime, s, "holm-t").to_string();
    if let Some(v) = volume_claim(s) {
        made_of.push_str(&v.to_string());
    }
    let digest = sha2::Sha256::digest(made_of.as_bytes());
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("holm-t-{hex}")
}

/// The template's pod: the plain-pods mode's, without the box's identity
/// (its labels are the runtime's alone, and the digest comes from the
/// pool's Secret `name`).
fn pod_template(spec: &MachineSpec, runtime: &str, s: &KubeSettings, name: &str) -> Value {
    let mut pod = objects::pod(spec, runtime, s);
    if s.volume_size.is_some() {
        let mount = json!([{ "name": VOLUME, "mountPath": VOLUME_PATH }]);
        pod["spec"]["containers"][0]["volumeMounts"] = mount;
    }
    let env = pod["spec"]["containers"][0]["env"].as_array_mut();
    for var in env.into_iter().flatten() {
        if var["name"] == ENV_SECRET_SHA256 {
            var["valueFrom"]["secretKeyRef"]["name"] = json!(name);
        }
    }
    json!({
        "metadata": { "labels": { LABEL_RUNTIME: runtime } },
        "spec": pod["spec"],
    })
}

/// The box's volume claim template, with a `volume_size`.
fn volume_claim(s: &KubeSettings) -> Option<Value> {
    let size = s.volume_size.as_deref()?;
    let mut spec = json!({
        "accessModes": ["ReadWriteOnce"],
        "resources": { "requests": { "storage": size } },
    });
    if let Some(class) = &s.storage_class {
        spec["storageClassName"] = json!(class);
    }
    Some(json!({ "metadata": { "name": VOLUME }, "spec": spec }))
}

/// The template `name` of boxes alike `spec`, with its network policy.
pub fn template(spec: &MachineSpec, runtime: &str, s: &KubeSettings, name: &str) -> Value {
    let ports: Vec<Value> =
        spec.ports.iter().map(|p| json!({"protocol": "TCP", "port": p})).collect();
    let (key, value) = HOLMD_LABEL;
    let mut template = json!({
        "apiVersion": "extensions.agents.x-k8s.io/v1beta1",
        "kind": "SandboxTemplate",
        "metadata": { "name": name, "labels": { LABEL_RUNTIME: runtime } },
        "spec": {
            "podTemplate": pod_template(spec, runtime, s, name),
            "networkPolicyManagement": "Managed",
            "networkPolicy": {
                "ingress": [{
                    "from": [{ "podSelector": { "matchLabels": { key: value } } }],
                    "ports": ports,
                }],
                "egress": [
                    { "ports": [{ "protocol": "UDP", "port": 53 }, { "protocol": "TCP", "port": 53 }] },
                    { "to": [{ "ipBlock": { "cidr": "0.0.0.0/0", "except": BLOCKED } }] },
                ],
            },
        },
    });
    if let Some(v) = volume_claim(s) {
        template["spec"]["volumeClaimTemplates"] = json!([v]);
    }
    template
}

/// The warm pool of the template `name`.
pub fn pool(runtime: &str, name: &str, replicas: u32) -> Value {
    json!({
        "apiVersion": "extensions.agents.x-k8s.io/v1beta1",
        "kind": "SandboxWarmPool",
        "metadata": { "name": name, "labels": { LABEL_RUNTIME: runtime } },
        "spec": { "replicas": replicas, "sandboxTemplateRef": { "name": name } },
    })
}

/// The pool's Secret: the digest its boxes start with, and the secret.
fn pool_secret(runtime: &str, name: &str, secret: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": { "name": name, "labels": { LABEL_RUNTIME: runtime } },
        "type": "Opaque",
        "stringData": {
            ENV_SECRET_SHA256: crate::ids::secret_digest(secret),
            POOL_SECRET_KEY: secret,
        },
    })
}

/// The box's claim on the pool `pool`, ended by the cluster at the box's
/// deadline.
pub fn claim(spec: &MachineSpec, runtime: &str, pool: &str) -> Value {
    let annotations: std::collections::BTreeMap<&String, &String> = spec
        .labels
        .iter()
        .filter(|(k, _)| k.as_str() != LABEL_BOX && k.as_str() != LABEL_RUNTIME)
        .collect();
    let mut claim = json!({
        "apiVersion": "extensions.agents.x-k8s.io/v1beta1",
        "kind": "SandboxClaim",
        "metadata": {
            "name": object_name(&spec.box_id),
            "labels": objects::labels(spec, runtime),
            "annotations": annotations,
        },
        "spec": { "warmPoolRef": { "name": pool } },
    });
    if let Some(deadline) = spec.deadline {
        let at = humantime::format_rfc3339_seconds(deadline).to_string();
        claim["spec"]["lifecycle"] = json!({ "shutdownTime": at, "shutdownPolicy": "Delete" });
    }
    claim
}

/// The name of the Sandbox (and of its pod) a claim holds, once it holds one.
pub fn sandbox_of(claim: &Value) -> Option<&str> {
    claim["status"]["sandbox"]["name"].as_str().filter(|n| !n.is_empty())
}

/// The value of `key` in a Secret (`data` is base64, as the API answers;
/// `stringData` as a stand-in might).
fn secret_value(secret: &Value, key: &str) -> Option<String> {
    use base64::Engine;
    if let Some(b64) = secret["data"][key].as_str() {
        let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
        return String::from_utf8(bytes).ok();
    }
    secret["stringData"][key].as_str().map(str::to_owned)
}

impl KubernetesRuntime {
    /// Makes, unless there are, the template, pool and Secret of boxes
    /// alike `spec`, and answers their name and the pool's secret.
    async fn ensure_pool(&self, spec: &MachineSpec) -> Result<(String, String)> {
        let (runtime, s) = (self.name_str(), self.settings());
        let name = template_name(spec, runtime, s);
        let client = self.client().await?;
        let ns = self.namespace();
        let mut stored = client.get(ns, SECRETS, &name).await;
        if matches!(stored, Ok(None)) {
            let made = client
                .create(ns, SECRETS, &pool_secret(runtime, &name, &crate::ids::new_secret()))
                .await;
            match made {
                Ok(v) => stored = Ok(Some(v)),
                // Another server made it first: read theirs.
                Err(e) if is_conflict(&e) => stored = client.get(ns, SECRETS, &name).await,
                Err(e) => return Err(self.api_error("create the pool's secret", e)),
            }
        }
        let stored = stored.map_err(|e| self.api_error("read the pool's secret", e))?;
        let secret =
            stored.as_ref().and_then(|s| secret_value(s, POOL_SECRET_KEY)).ok_or_else(|| {
                RuntimeError::Engine(format!("the Secret {name} holds no {POOL_SECRET_KEY}"))
            })?;
        let template = template(spec, runtime, s, &name);
        let pool = pool(runtime, &name, s.warm_pool);
        for (resource, object, what) in [
            (SANDBOX_TEMPLATES, &template, "create a SandboxTemplate"),
            (SANDBOX_WARM_POOLS, &pool, "create a SandboxWarmPool"),
        ] {
            match client.create(ns, resource, object).await {
                Err(e) if !is_conflict(&e) => return Err(self.api_error(what, e)),
                _ => {}
            }
        }
        Ok((name, secret))
    }

    /// Claims a box of the pool for `spec`, waits until it runs, and gives
    /// its guest the box's secret.
    pub(super) async fn claim_box(&self, spec: &MachineSpec) -> Result<Machine> {
        let (pool, pool_secret) = self.ensure_pool(spec).await?;
        let client = self.client().await?;
        let ns = self.namespace();
        if self.settings().volume_size.is_some() {
            // The digest again at each start (the secret never goes there).
            let secret = objects::secret(spec, self.name_str());
            let made = client.create(ns, SECRETS, &secret).await;
            made.map_err(|e| self.api_error("create the box's secret", e))?;
        }
        let claim = claim(spec, self.name_str(), &pool);
        let made = client.create(ns, SANDBOX_CLAIMS, &claim).await;
        made.map_err(|e| self.api_error("create a SandboxClaim", e))?;
        let name = object_name(&spec.box_id);
        let held = self.wait_held(&name).await?;
        let pod = self.wait_running(&held).await?;
        let machine = self.claim_machine(&name, pod, &spec.ports).await?;
        let digest = spec.env.iter().find(|(k, _)| k == ENV_SECRET_SHA256).map(|(_, v)| v.clone());
        let digest = digest.ok_or_else(|| RuntimeError::Engine("a box without a secret".into()))?;
        self.give_secret(&machine, &pool_secret, &digest).await?;
        Ok(machine)
    }

    /// Asks the guest of a pool box (`machine`), with the pool's secret,
    /// to take the box's secret's digest.
    async fn give_secret(&self, machine: &Machine, pool_secret: &str, digest: &str) -> Result<()> {
        let guest = machine.guest().ok_or_else(|| {
            RuntimeError::Engine(format!("the claim {}'s pod has no address", machine.id))
        })?;
        let pool_client = holm_client::BoxClient::at(guest, pool_secret);
        let given = tokio::time::timeout(GUEST_TIMEOUT, async {
            loop {
                match pool_client.set_box_secret_digest(digest).await {
                    // Not listening yet: its pod runs, its guest starts.
                    Err(holm_client::ClientError::Transport { .. }) => {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                    other => return other,
                }
            }
        })
        .await;
        match given {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(RuntimeError::Engine(format!(
                "the claimed box's guest refused its secret: {e}"
            ))),
            Err(_) => Err(RuntimeError::Engine(format!(
                "the claimed box's guest did not answer in {} s",
                GUEST_TIMEOUT.as_secs()
            ))),
        }
    }

    /// The claim `name` and the Sandbox it holds.
    async fn held_sandbox(&self, name: &str) -> Result<(Value, String)> {
        let got = self.client().await?.get(self.namespace(), SANDBOX_CLAIMS, name).await;
        let claim = got.map_err(|e| self.api_error("read a SandboxClaim", e))?;
        let claim = claim.ok_or_else(|| RuntimeError::NotFound(name.to_owned()))?;
        let held = sandbox_of(&claim).map(str::to_owned);
        let held =
            held.ok_or_else(|| RuntimeError::Engine(format!("the claim {name} holds no box")))?;
        Ok((claim, held))
    }

    /// Sets the `operatingMode` of the Sandbox `held`.
    async fn set_operating_mode(&self, held: &str, mode: &str) -> Result<()> {
        let patch = json!({ "spec": { "operatingMode": mode } });
        let patched = self.client().await?.patch(self.namespace(), SANDBOXES, held, &patch).await;
        patched.map(drop).map_err(|e| self.api_error("change a Sandbox's operatingMode", e))
    }

    /// Stops the claim `name`'s box: its Sandbox `Suspended`, its pod gone,
    /// its volume kept.
    pub(super) async fn suspend_claim(&self, name: &str) -> Result<()> {
        let (_, held) = self.held_sandbox(name).await?;
        self.set_operating_mode(&held, "Suspended").await?;
        self.wait_gone(&held).await
    }

    /// Starts the claim `name`'s box again: its Sandbox `Running`, a new
    /// pod on its volume, whose guest is given the box's digest again.
    pub(super) async fn resume_claim(&self, name: &str) -> Result<Machine> {
        let (claim, held) = self.held_sandbox(name).await?;
        let client = self.client().await?;
        let ns = self.namespace();
        let box_secret = client.get(ns, SECRETS, name).await;
        let box_secret = box_secret.map_err(|e| self.api_error("read the box's secret", e))?;
        let digest = box_secret.as_ref().and_then(|s| secret_value(s, ENV_SECRET_SHA256));
        let digest = digest.ok_or_else(|| {
            RuntimeError::Engine(format!("the Secret {name} holds no {ENV_SECRET_SHA256}"))
        })?;
        let pool = claim["spec"]["warmPoolRef"]["name"].as_str().unwrap_or_default().to_owned();
        let pool_secret = client.get(ns, SECRETS, &pool).await;
        let pool_secret = pool_secret.map_err(|e| self.api_error("read the pool's secret", e))?;
        let pool_secret = pool_secret.as_ref().and_then(|s| secret_value(s, POOL_SECRET_KEY));
        let pool_secret = pool_secret.ok_or_else(|| {
            RuntimeError::Engine(format!("the Secret {pool} holds no {POOL_SECRET_KEY}"))
        })?;
        self.set_operating_mode(&held, "Running").await?;
        let pod = self.wait_running(&held).await?;
        let ports = super::runtime::pod_ports(&pod);
        let machine = as_machine(&claim, pod, &ports);
        self.give_secret(&machine, &pool_secret, &digest).await?;
        Ok(machine)
    }

    /// Waits on a watch of the claim `name` until it holds a Sandbox, and
    /// answers its name (that of its pod too).
    async fn wait_held(&self, name: &str) -> Result<String> {
        let wait = self.watch_object(SANDBOX_CLAIMS, name, "0".to_owned(), |seen| match seen {
            Some(claim) => sandbox_of(&claim).map(|s| Ok(s.to_owned())),
            None => Some(Err(RuntimeError::Engine(format!("the claim {name} was deleted")))),
        });
        tokio::time::timeout(super::runtime::RUN_TIMEOUT, wait).await.unwrap_or_else(|_| {
            Err(RuntimeError::Engine(format!("the claim {name} held no box in time")))
        })
    }

    /// The machine the claim `name` is, its box's pod `pod`.
    async fn claim_machine(&self, name: &str, pod: Pod, ports: &[u16]) -> Result<Machine> {
        let got = self.client().await?.get(self.namespace(), SANDBOX_CLAIMS, name).await;
        let claim = got.map_err(|e| self.api_error("read a SandboxClaim", e))?;
        let claim = claim.ok_or_else(|| RuntimeError::NotFound(name.to_owned()))?;
        Ok(as_machine(&claim, pod, ports))
    }

    /// The machine of the claim `claim`: its pod's state and address, the
    /// claim's labels and name.
    pub(super) async fn claim_to_machine(&self, claim: &Value) -> Result<Machine> {
        let Some(held) = sandbox_of(claim) else {
            return Ok(as_machine(claim, Pod::default(), &[]));
        };
        let client = self.client().await?;
        let got = client.get(self.namespace(), super::client::PODS, held).await;
        let pod = match got.map_err(|e| self.api_error("read a pod", e))? {
            Some(v) => Pod::from_value(v)?,
            None => {
                // No pod: stopped, if its Sandbox is suspended.
                let sandbox = client.get(self.namespace(), SANDBOXES, held).await;
                let sandbox = sandbox.map_err(|e| self.api_error("read a Sandbox", e))?;
                let mut m = as_machine(claim, Pod::default(), &[]);
                let suspended = sandbox.is_some_and(|s| s["spec"]["operatingMode"] == "Suspended");
                if suspended && m.state != crate::runtime::MachineState::Gone {
                    m.state = crate::runtime::MachineState::Stopped;
                }
                return Ok(m);
            }
        };
        let ports = super::runtime::pod_ports(&pod);
        Ok(as_machine(claim, pod, &ports))
    }

    /// Whether this runtime has warm pools and each has as many ready
    /// boxes as it keeps (its `status.readyReplicas`, as agent-sandbox
    /// reports it): for a measurement that must claim a warm box.
    pub async fn warm_pools_ready(&self) -> Result<bool> {
        let selector = format!("{LABEL_RUNTIME}={}", self.name_str());
        let listed =
            self.client().await?.list(self.namespace(), SANDBOX_WARM_POOLS, &selector).await;
        let pools = listed.map_err(|e| self.api_error("list SandboxWarmPools", e))?;
        let full = |p: &Value| {
            let want = p["spec"]["replicas"].as_u64().unwrap_or(0);
            p["status"]["readyReplicas"].as_u64().unwrap_or(0) >= want
        };
        Ok(!pools.is_empty() && pools.iter().all(full))
    }

    /// Deletes the claim `name` (its Sandbox and pod go with it) and waits
    /// until its pod is gone.
    pub(super) async fn remove_claim(&self, name: &str) -> Result<()> {
        let client = self.client().await?;
        let ns = self.namespace();
        match client.delete(ns, SECRETS, name).await {
            Err(e) if !e.is_not_found() => return Err(self.api_error("delete the box's secret", e)),
            _ => {}
        }
        let got = client.get(ns, SANDBOX_CLAIMS, name).await;
        let Some(claim) = got.map_err(|e| self.api_error("read a SandboxClaim", e))? else {
            return Ok(());
        };
        match client.delete(ns, SANDBOX_CLAIMS, name).await {
            Err(e) if !e.is_not_found() => return Err(self.api_error("delete a SandboxClaim", e)),
            _ => {}
        }
        match sandbox_of(&claim) {
            Some(held) => self.wait_gone(held).await,
            None => Ok(()),
        }
    }
}

/// The machine of a claim whose box's pod is `pod`.
fn as_machine(claim: &Value, pod: Pod, ports: &[u16]) -> Machine {
    let mut m = super::runtime::machine(pod, ports);
    let meta = &claim["metadata"];
    let mut labels = std::collections::BTreeMap::new();
    for field in ["annotations", "labels"] {
        for (k, v) in meta[field].as_object().into_iter().flatten() {
            if let Some(v) = v.as_str() {
                labels.insert(k.clone(), v.to_owned());
            }
        }
    }
    if meta["deletionTimestamp"].is_string() {
        m.state = crate::runtime::MachineState::Gone;
        m.endpoints.clear();
    }
    m.id = meta["name"].as_str().unwrap_or_default().to_owned();
    m.box_id = labels.get(LABEL_BOX).cloned();
    m.labels = labels;
    m
}

fn is_conflict(e: &super::client::ApiError) -> bool {
    matches!(e, super::client::ApiError::Api(s) if s.code == 409)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(image: &str) -> MachineSpec {
        MachineSpec {
            box_id: "box_abc".into(),
            image: image.into(),
            env: vec![
                (ENV_SECRET_SHA256.into(), "d1g357".into()),
                ("HOLM_SCREENS".into(), "1".into()),
            ],
            labels: [("holm.spec".to_owned(), "{}".to_owned())].into(),
            ports: vec![8765],
            public_ports: vec![],
            memory_bytes: None,
            nano_cpus: None,
            pids_limit: None,
            profile: None,
            deadline: Some(std::time::UNIX_EPOCH + Duration::from_secs(1_800_000_000)),
            idle_timeout_secs: None,
            expires_at: None,
        }
    }

    #[test]
    fn boxes_alike_share_a_template_that_holds_no_identity() {
        let s = KubeSettings::default();
        let name = template_name(&spec("img:1"), "k8s", &s);
        assert!(name.starts_with("holm-t-") && name.len() == 19, "{name}");
        let mut other = spec("img:1");
        other.box_id = "box_other".into();
        other.env[0].1 = "an0ther".into();
        assert_eq!(
            template_name(&other, "k8s", &s),
            name,
            "the box and its digest name no template"
        );
        assert_ne!(template_name(&spec("img:2"), "k8s", &s), name);
        let t = template(&spec("img:1"), "k8s", &s, &name);
        let text = t.to_string();
        assert!(!text.contains("box_abc") && !text.contains("d1g357"), "{text}");
        let env = &t["spec"]["podTemplate"]["spec"]["containers"][0]["env"][0];
        assert_eq!(env["valueFrom"]["secretKeyRef"]["name"], name.as_str());
        assert_eq!(t["spec"]["podTemplate"]["spec"]["automountServiceAccountToken"], false);
        let egress = &t["spec"]["networkPolicy"]["egress"][1]["to"][0]["ipBlock"];
        assert!(egress["except"].as_array().unwrap().contains(&json!("169.254.0.0/16")));
    }

    #[test]
    fn a_volume_is_a_claim_template_mounted_at_root_and_names_another_template() {
        let plain = KubeSettings::default();
        let t = template(&spec("img:1"), "k8s", &plain, "holm-t-x");
        assert!(t["spec"].get("volumeClaimTemplates").is_none(), "{t}");
        let s = KubeSettings {
            volume_size: Some("10Gi".into()),
            storage_class: Some("fast".into()),
            ..KubeSettings::default()
        };
        let t = template(&spec("img:1"), "k8s", &s, "holm-t-x");
        let vct = &t["spec"]["volumeClaimTemplates"][0];
        assert_eq!(vct["metadata"]["name"], VOLUME);
        assert_eq!(vct["spec"]["resources"]["requests"]["storage"], "10Gi");
        assert_eq!(vct["spec"]["storageClassName"], "fast");
        assert_eq!(vct["spec"]["accessModes"], json!(["ReadWriteOnce"]));
        let mounts = &t["spec"]["podTemplate"]["spec"]["containers"][0]["volumeMounts"];
        assert_eq!(mounts, &json!([{ "name": VOLUME, "mountPath": VOLUME_PATH }]));
        let names: std::collections::BTreeSet<String> = [
            plain,
            s.clone(),
            KubeSettings { volume_size: Some("20Gi".into()), ..s.clone() },
            KubeSettings { storage_class: None, ..s },
        ]
        .iter()
        .map(|s| template_name(&spec("img:1"), "k8s", s))
        .collect();
        assert_eq!(names.len(), 4, "each volume is its own kind of box: {names:?}");
    }

    #[test]
    fn a_claim_names_its_box_and_ends_at_its_deadline() {
        let c = claim(&spec("img:1"), "k8s", "holm-t-x");
        assert_eq!(c["metadata"]["name"], "holm-box-abc");
        assert_eq!(c["metadata"]["labels"][LABEL_BOX], "box_abc");
        assert_eq!(c["metadata"]["annotations"]["holm.spec"], "{}");
        assert_eq!(c["spec"]["warmPoolRef"]["name"], "holm-t-x");
        assert_eq!(c["spec"]["lifecycle"]["shutdownTime"], "2027-01-15T08:00:00Z");
        assert!(c.get("env").is_none() && c["spec"].get("env").is_none(), "no env: no cold start");
    }

    #[test]
    fn the_pool_secret_reads_from_data_or_string_data() {
        let s = pool_secret("k8s", "holm-t-x", "p00l-secret");
        assert_eq!(secret_value(&s, POOL_SECRET_KEY).as_deref(), Some("p00l-secret"));
        let answered = json!({ "data": { POOL_SECRET_KEY: "cDAwbC1zZWNyZXQ=" } });
        assert_eq!(secret_value(&answered, POOL_SECRET_KEY).as_deref(), Some("p00l-secret"));
        assert_eq!(secret_value(&json!({}), POOL_SECRET_KEY), None);
    }
}
