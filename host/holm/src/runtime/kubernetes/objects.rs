//! The objects of a box: its Secret (the digest of the box secret), its
//! Pod and its headless Service, made from a [`MachineSpec`] and the
//! runtime's [`KubeSettings`].
//!
//! They are sent as JSON made here; what the runtime reads of a pod is
//! [`Pod`], the few fields it needs.
//!
//! Only `holm.box` and `holm.runtime` are labels (they are selected on, and
//! their values are label-safe); holm's other labels (the spec's JSON, the
//! times) are annotations, whose values may be anything.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{KubeSettings, object_name};
use crate::runtime::{ENV_SECRET_SHA256, LABEL_BOX, LABEL_RUNTIME, MachineSpec, RuntimeError};

/// The labels of every object of a box.
pub fn labels(spec: &MachineSpec, runtime: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (LABEL_BOX.to_owned(), spec.box_id.clone()),
        (LABEL_RUNTIME.to_owned(), runtime.to_owned()),
    ])
}

fn metadata(spec: &MachineSpec, runtime: &str) -> Value {
    let annotations: BTreeMap<&String, &String> = spec
        .labels
        .iter()
        .filter(|(k, _)| k.as_str() != LABEL_BOX && k.as_str() != LABEL_RUNTIME)
        .collect();
    json!({
        "name": object_name(&spec.box_id),
        "labels": labels(spec, runtime),
        "annotations": annotations,
    })
}

/// A pod as the API answers it, as much as the runtime reads.
#[derive(Debug, Default, Deserialize)]
pub struct Pod {
    /// Its name, labels, annotations, version and deletion.
    #[serde(default)]
    pub metadata: Meta,
    /// Its containers.
    pub spec: Option<PodSpec>,
    /// Its phase, address and containers' states.
    pub status: Option<PodStatus>,
}

/// An object's metadata, as much as the runtime reads.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    pub name: Option<String>,
    pub labels: Option<BTreeMap<String, String>>,
    pub annotations: Option<BTreeMap<String, String>>,
    pub resource_version: Option<String>,
    pub deletion_timestamp: Option<String>,
}

/// A pod's spec: its containers' ports.
#[derive(Debug, Default, Deserialize)]
pub struct PodSpec {
    #[serde(default)]
    pub containers: Vec<Container>,
}

/// A container of a pod's spec.
#[derive(Debug, Default, Deserialize)]
pub struct Container {
    pub ports: Option<Vec<ContainerPort>>,
}

/// A port of a container.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPort {
    pub container_port: i32,
}

/// A pod's status.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStatus {
    pub phase: Option<String>,
    #[serde(rename = "podIP")]
    pub pod_ip: Option<String>,
    pub container_statuses: Option<Vec<ContainerStatus>>,
}

/// A container's status.
#[derive(Debug, Default, Deserialize)]
pub struct ContainerStatus {
    pub state: Option<ContainerState>,
}

/// A container's state: why it waits, if it does.
#[derive(Debug, Default, Deserialize)]
pub struct ContainerState {
    pub waiting: Option<Waiting>,
}

/// Why a container waits.
#[derive(Debug, Default, Deserialize)]
pub struct Waiting {
    pub reason: Option<String>,
    pub message: Option<String>,
}

impl Pod {
    /// The pod the API answered.
    pub fn from_value(v: Value) -> Result<Self, RuntimeError> {
        serde_json::from_value(v)
            .map_err(|e| RuntimeError::Engine(format!("a kubernetes pod: {e}")))
    }
}

/// The Secret holding the box's [`ENV_SECRET_SHA256`] (the digest; the
/// secret itself is never sent to the cluster).
pub fn secret(spec: &MachineSpec, runtime: &str) -> Value {
    let digest = spec.env.iter().find(|(k, _)| k == ENV_SECRET_SHA256).map(|(_, v)| v.as_str());
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(spec, runtime),
        "type": "Opaque",
        "stringData": { ENV_SECRET_SHA256: digest.unwrap_or_default() },
    })
}

/// The box's Pod: the box image with the guest as entrypoint (the image's
/// own), its environment (the digest from the Secret), no service account
/// token, the box's memory and CPUs as requests and limits, and the
/// settings' runtime class, node selector and tolerations.
pub fn pod(spec: &MachineSpec, runtime: &str, s: &KubeSettings) -> Value {
    let name = object_name(&spec.box_id);
    let env: Vec<Value> = spec
        .env
        .iter()
        .map(|(k, v)| {
            if k == ENV_SECRET_SHA256 {
                json!({"name": k, "valueFrom": {"secretKeyRef": {"name": name, "key": k}}})
            } else {
                json!({"name": k, "value": v})
            }
        })
        .collect();
    let mut resources = serde_json::Map::new();
    if let Some(bytes) = spec.memory_bytes {
        resources.insert("memory".into(), json!(bytes.to_string()));
    }
    if let Some(nano) = spec.nano_cpus {
        resources.insert("cpu".into(), json!(format!("{}m", nano.div_ceil(1_000_000))));
    }
    let ports: Vec<Value> =
        spec.ports.iter().map(|p| json!({"containerPort": p, "protocol": "TCP"})).collect();
    let tolerations: Vec<Value> = s
        .tolerations
        .iter()
        .map(
            |t| json!({"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect}),
        )
        .collect();
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata(spec, runtime),
        "spec": {
            "automountServiceAccountToken": false,
            "enableServiceLinks": false,
            "restartPolicy": "Never",
            "containers": [{
                "name": "box",
                "image": spec.image,
                "imagePullPolicy": "IfNotPresent",
                "env": env,
                "ports": ports,
                "resources": { "requests": resources, "limits": resources },
            }],
            "nodeSelector": s.node_selector,
            "tolerations": tolerations,
        },
    });
    if let Some(class) = &s.runtime_class {
        pod["spec"]["runtimeClassName"] = json!(class);
    }
    strip_nulls(&mut pod);
    pod
}

/// The box's headless Service: a stable DNS name for the pod
/// (`holm-box-….NAMESPACE.svc`) inside the cluster.
pub fn service(spec: &MachineSpec, runtime: &str) -> Value {
    let ports: Vec<Value> = spec
        .ports
        .iter()
        .map(|p| json!({"name": format!("p{p}"), "port": p, "targetPort": p, "protocol": "TCP"}))
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(spec, runtime),
        "spec": {
            "clusterIP": "None",
            "selector": { LABEL_BOX: spec.box_id },
            "ports": ports,
        },
    })
}

/// Removes `null` members, which the API server would refuse in a strict
/// decoding (a toleration without a key, say).
fn strip_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, v| !v.is_null());
            m.values_mut().for_each(strip_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::kubernetes::Toleration;

    fn spec() -> MachineSpec {
        MachineSpec {
            box_id: "box_abc".into(),
            image: "holm-box:test".into(),
            env: vec![
                (ENV_SECRET_SHA256.into(), "d1g357".into()),
                ("HOLM_SCREENS".into(), "1".into()),
            ],
            labels: BTreeMap::from([("holm.spec".into(), "{\"a\":1}".into())]),
            ports: vec![8765],
            public_ports: vec![],
            memory_bytes: Some(2 << 30),
            nano_cpus: Some(1_500_000_000),
            pids_limit: None,
            profile: None,
            deadline: None,
            idle_timeout_secs: None,
            expires_at: None,
        }
    }

    #[test]
    fn the_pod_takes_the_digest_from_the_secret_and_mounts_no_token() {
        let s = KubeSettings {
            runtime_class: Some("gvisor".into()),
            node_selector: BTreeMap::from([("pool".into(), "boxes".into())]),
            tolerations: vec![Toleration { operator: Some("Exists".into()), ..Default::default() }],
            ..Default::default()
        };
        let pod = pod(&spec(), "k8s", &s);
        let text = pod.to_string();
        assert!(!text.contains("d1g357"), "the digest's value is only in the Secret: {text}");
        let c = &pod["spec"]["containers"][0];
        assert_eq!(c["env"][0]["valueFrom"]["secretKeyRef"]["name"], "holm-box-abc");
        assert_eq!(c["env"][1]["value"], "1");
        assert_eq!(c["resources"]["limits"]["memory"], "2147483648");
        assert_eq!(c["resources"]["limits"]["cpu"], "1500m");
        assert_eq!(pod["spec"]["automountServiceAccountToken"], false);
        assert_eq!(pod["spec"]["runtimeClassName"], "gvisor");
        assert_eq!(pod["spec"]["nodeSelector"]["pool"], "boxes");
        assert_eq!(pod["spec"]["tolerations"][0], json!({"operator": "Exists"}));
        assert_eq!(pod["metadata"]["labels"][LABEL_BOX], "box_abc");
        assert_eq!(pod["metadata"]["labels"][LABEL_RUNTIME], "k8s");
        assert_eq!(pod["metadata"]["annotations"]["holm.spec"], "{\"a\":1}");
        let secret = secret(&spec(), "k8s");
        assert_eq!(secret["stringData"][ENV_SECRET_SHA256], "d1g357");
    }
}
