//! agent-sandbox's Sandbox controller, as kubernetes-sigs/agent-sandbox's
//! `controllers/sandbox_controller.go` reconciles a `Sandbox`
//! (`agents.x-k8s.io/v1beta1`): a Pod named as the Sandbox from its
//! `podTemplate`, labelled `agents.x-k8s.io/sandbox-name-hash` (FNV-1a of
//! the name) and owned by it; a headless Service of the same name when
//! `spec.service` is true; `operatingMode: Suspended` deletes the Pod and
//! keeps the Sandbox, `Running` makes it again; `status.selector`,
//! `podIPs`, `nodeName`, `service`, `serviceFQDN`, and the conditions
//! `Ready` (`DependenciesReady`, `DependenciesNotReady`,
//! `SandboxSuspended`, `PodSucceeded`, `PodFailed`), `Suspended`
//! (`NotSuspended`, `PodTerminating`, `PodTerminated`), `PodScheduled`
//! and `Finished` (present only while they apply). The garbage collector's
//! part is here too: a Pod, Service, PersistentVolumeClaim or Sandbox
//! whose owner (a Sandbox, a pool or a claim, [`pools`](super::pools)) is
//! gone is deleted, a claim only once no pod mounts it (as the API
//! server's `pvc-protection` finalizer holds it).
//!
//! Each of `volumeClaimTemplates` is a PersistentVolumeClaim
//! `<template name>-<sandbox name>` (labelled with the name hash, owned by
//! the Sandbox, made before the Pod whatever the operating mode, as
//! `reconcilePVCs` does), bound at once (no provisioner or storage class
//! is run), and a volume of the Pod of the template's name; the kubelet
//! part mounts it as a Docker volume that outlives the Pod, so files on it
//! survive `Suspended`, and goes with the claim.
//!
//! Not done: `shutdownTime` and `shutdownPolicy`, relabelling an adopted
//! Sandbox's running pod, events and metrics.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::State;
use super::kinds::{self, Kind};
use super::objects::{self, Fresh};
use super::pods;
use crate::common::Clock;

/// The label naming a Sandbox's pod by the hash of its name.
pub const NAME_HASH_LABEL: &str = "agents.x-k8s.io/sandbox-name-hash";

fn kind(group: &str, version: &str, resource: &str) -> &'static Kind {
    kinds::find(group, version, resource).expect("a served kind")
}

/// FNV-1a (32 bits) of `name`, as 8 hex digits (`NameHash`).
pub fn name_hash(name: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

/// Runs the controller until the stand-in stops: every change to the
/// store reconciles every Sandbox.
pub(crate) fn spawn(state: &Arc<State>) {
    let mut changes = state.subscribe();
    let st = Arc::clone(state);
    state.tasks.add([tokio::spawn(async move {
        loop {
            reconcile_all(&st);
            if changes.changed().await.is_err() {
                return;
            }
        }
    })]);
}

fn reconcile_all(state: &Arc<State>) {
    super::pools::reconcile_all(state);
    let sandboxes = state.lock().store.list(kind("agents.x-k8s.io", "v1beta1", "sandboxes"), None);
    for sb in &sandboxes {
        reconcile(state, sb);
    }
    collect_orphans(state);
}

fn owned_by(o: &Value, uid: &str) -> bool {
    o["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|refs| refs.iter().any(|r| r["uid"] == uid && r["kind"] == "Sandbox"))
}

/// Creates `object` of `kind` in `ns` as the controller, with the API
/// server's defaults.
fn create(state: &Arc<State>, kind: &'static Kind, ns: &str, name: &str, mut object: Value) {
    let mut inner = state.lock();
    let key = (kind, ns.to_owned(), name.to_owned());
    if inner.store.get(&key).is_some() {
        return;
    }
    let mut next_ip = || inner.next_cluster_ip();
    let fresh = Fresh {
        now: Clock::rfc3339(Clock::default().now()),
        uid: super::write::uuid(),
        next_ip: &mut next_ip,
    };
    if objects::create(kind, &mut object, name, fresh).is_err() {
        return;
    }
    if kind.kind == "PersistentVolumeClaim" {
        let spec = &object["spec"];
        object["status"] = json!({ "phase": "Bound", "accessModes": spec["accessModes"],
            "capacity": { "storage": spec["resources"]["requests"]["storage"] } });
    }
    inner.store.put(&key, object);
    drop(inner);
    state.changed();
    if kind.kind == "Pod" {
        pods::start(Arc::clone(state), ns.to_owned(), name.to_owned());
    }
}

fn owner(sb: &Value) -> Value {
    json!([{
        "apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox",
        "name": sb["metadata"]["name"], "uid": sb["metadata"]["uid"],
        "controller": true, "blockOwnerDeletion": true
    }])
}

/// The PersistentVolumeClaims of a Sandbox's `volumeClaimTemplates`, by
/// name, and the template each is of.
fn volume_claims(sb: &Value, ns: &str, name: &str, hash: &str) -> Vec<(String, String, Value)> {
    let templates = sb["spec"]["volumeClaimTemplates"].as_array().cloned().unwrap_or_default();
    templates
        .iter()
        .filter_map(|t| {
            let template = t["metadata"]["name"].as_str()?.to_owned();
            let mut labels = t["metadata"]["labels"].as_object().cloned().unwrap_or_default();
            labels.insert(NAME_HASH_LABEL.into(), json!(hash));
            let claim = format!("{template}-{name}");
            let pvc = json!({
                "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": { "name": claim, "namespace": ns, "labels": labels,
                    "annotations": t["metadata"]["annotations"], "ownerReferences": owner(sb) },
                "spec": t["spec"]
            });
            Some((claim, template, pvc))
        })
        .collect()
}

/// The Pod of a Sandbox, from its `podTemplate`, with a volume for each
/// of its PersistentVolumeClaims (in place of one of the same name).
fn pod_for(sb: &Value, ns: &str, name: &str, hash: &str) -> Value {
    let template = &sb["spec"]["podTemplate"];
    let mut spec = template["spec"].clone();
    for (claim, volume, _) in volume_claims(sb, ns, name, hash) {
        let mut volumes = spec["volumes"].as_array().cloned().unwrap_or_default();
        volumes.retain(|v| v["name"] != volume.as_str());
        volumes.push(json!({ "name": volume, "persistentVolumeClaim": { "claimName": claim } }));
        spec["volumes"] = Value::Array(volumes);
    }
    let mut labels = template["metadata"]["labels"].as_object().cloned().unwrap_or_default();
    let mut keys: Vec<String> = labels.keys().cloned().collect();
    keys.sort();
    labels.insert(NAME_HASH_LABEL.into(), json!(hash));
    let mut annotations =
        template["metadata"]["annotations"].as_object().cloned().unwrap_or_default();
    if !keys.is_empty() {
        annotations.insert("agents.x-k8s.io/propagated-labels".into(), json!(keys.join(",")));
    }
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": { "name": name, "namespace": ns, "labels": labels,
            "annotations": annotations, "ownerReferences": owner(sb) },
        "spec": spec
    })
}

fn reconcile(state: &Arc<State>, sb: &Value) {
    let m = &sb["metadata"];
    let (ns, name, uid) = (
        m["namespace"].as_str().unwrap_or(""),
        m["name"].as_str().unwrap_or(""),
        m["uid"].as_str().unwrap_or(""),
    );
    let hash = name_hash(name);
    let pods_kind = kind("", "v1", "pods");
    let svc_kind = kind("", "v1", "services");
    let suspended = sb["spec"]["operatingMode"] == "Suspended";
    let pvcs_kind = kind("", "v1", "persistentvolumeclaims");
    for (claim, _, pvc) in volume_claims(sb, ns, name, &hash) {
        create(state, pvcs_kind, ns, &claim, pvc);
    }
    let pod = state.lock().store.get(&(pods_kind, ns.to_owned(), name.to_owned())).cloned();
    match &pod {
        Some(p) if suspended && owned_by(p, uid) => {
            pods::delete(state, ns, name, None);
        }
        None if !suspended => create(state, pods_kind, ns, name, pod_for(sb, ns, name, &hash)),
        _ => {}
    }
    if sb["spec"]["service"] == true {
        let svc = json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": { "name": name, "namespace": ns,
                "labels": { NAME_HASH_LABEL: hash }, "ownerReferences": owner(sb) },
            "spec": { "clusterIP": "None", "selector": { NAME_HASH_LABEL: hash } }
        });
        create(state, svc_kind, ns, name, svc);
    }
    let (pod, svc) = {
        let inner = state.lock();
        (
            inner.store.get(&(pods_kind, ns.to_owned(), name.to_owned())).cloned(),
            inner.store.get(&(svc_kind, ns.to_owned(), name.to_owned())).cloned(),
        )
    };
    let status = status(sb, pod.as_ref(), svc.as_ref(), &hash);
    write_status(state, sb, status);
}

/// The Sandbox's status for its pod and service now.
fn status(sb: &Value, pod: Option<&Value>, svc: Option<&Value>, hash: &str) -> Value {
    let uid = &sb["metadata"]["uid"];
    let owned = pod.filter(|p| owned_by(p, uid.as_str().unwrap_or("")));
    let mut s = Map::new();
    if let Some(svc) = svc {
        let (n, ns) = (
            svc["metadata"]["name"].as_str().unwrap_or(""),
            svc["metadata"]["namespace"].as_str().unwrap_or(""),
        );
        s.insert("service".into(), json!(n));
        s.insert("serviceFQDN".into(), json!(format!("{n}.{ns}.svc.cluster.local")));
    }
    if pod.is_some() || sb["status"].get("selector").is_some() {
        s.insert("selector".into(), json!(format!("{NAME_HASH_LABEL}={hash}")));
    }
    if let Some(p) = owned {
        let ips: Vec<Value> = p["status"]["podIPs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| i["ip"].clone())
            .collect();
        if !ips.is_empty() {
            s.insert("podIPs".into(), Value::Array(ips));
        }
        if let Some(node) = p["spec"]["nodeName"].as_str() {
            s.insert("nodeName".into(), json!(node));
        }
    }
    s.insert("conditions".into(), Value::Array(conditions(sb, pod, svc.is_some())));
    Value::Object(s)
}

fn cond(t: &str, ok: &str, reason: &str, message: &str, generation: &Value) -> Value {
    json!({ "type": t, "status": ok, "observedGeneration": generation, "reason": reason, "message": message })
}

fn conditions(sb: &Value, pod: Option<&Value>, svc: bool) -> Vec<Value> {
    let g = &sb["metadata"]["generation"];
    let suspended = sb["spec"]["operatingMode"] == "Suspended";
    let phase = pod.and_then(|p| p["status"]["phase"].as_str()).unwrap_or("");
    let ready = if suspended {
        let m = if pod.is_some() { "Sandbox is suspending" } else { "Sandbox is suspended" };
        cond("Ready", "False", "SandboxSuspended", m, g)
    } else if phase == "Succeeded" {
        cond("Ready", "False", "PodSucceeded", "Pod completed successfully", g)
    } else if phase == "Failed" {
        cond("Ready", "False", "PodFailed", "Pod failed", g)
    } else {
        let pod_ready = pod.is_some_and(|p| {
            p["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
                && p["status"]["podIPs"].as_array().is_some_and(|a| !a.is_empty())
        });
        let mut m = match pod {
            None => "Pod does not exist".to_owned(),
            Some(_) if pod_ready => "Pod is Ready".to_owned(),
            Some(_) if phase == "Running" => "Pod is Running but not Ready".to_owned(),
            Some(_) => format!("Pod exists with phase: {phase}"),
        };
        let svc_needed = sb["spec"]["service"] == true || svc;
        if svc_needed {
            m += if svc { "; Service Exists" } else { "; Service does not exist" };
        }
        if pod_ready && (!svc_needed || svc) {
            cond("Ready", "True", "DependenciesReady", &m, g)
        } else {
            cond("Ready", "False", "DependenciesNotReady", &m, g)
        }
    };
    let suspension = match (suspended, pod) {
        (false, _) => cond("Suspended", "False", "NotSuspended", "Sandbox is not suspended", g),
        (true, None) => cond(
            "Suspended",
            "True",
            "PodTerminated",
            "Pod has been terminated. Sandbox is suspended",
            g,
        ),
        (true, Some(_)) => cond(
            "Suspended",
            "False",
            "PodTerminating",
            "Pod is terminating. Sandbox is suspending",
            g,
        ),
    };
    let mut out = vec![ready, suspension];
    if let Some(p) = pod {
        let scheduled = p["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "PodScheduled");
        let ok = scheduled.and_then(|c| c["status"].as_str()).unwrap_or("Unknown");
        let reason = if ok == "True" { "PodScheduled" } else { "PodSchedulingUnknown" };
        out.push(cond("PodScheduled", ok, reason, "", g));
        match phase {
            "Succeeded" => {
                out.push(cond("Finished", "True", "PodSucceeded", "Pod completed successfully", g))
            }
            "Failed" => out.push(cond("Finished", "True", "PodFailed", "Pod failed", g)),
            _ => {}
        }
    }
    out
}

/// Stores `status` on the Sandbox when it differs, each condition keeping
/// its `lastTransitionTime` while its status stays (`meta.SetStatusCondition`).
fn write_status(state: &State, sb: &Value, mut status: Value) {
    let old = &sb["status"];
    let now = Clock::rfc3339(Clock::default().now());
    for c in status["conditions"].as_array_mut().into_iter().flatten() {
        let before =
            old["conditions"].as_array().into_iter().flatten().find(|o| o["type"] == c["type"]);
        c["lastTransitionTime"] = match before {
            Some(b) if b["status"] == c["status"] => b["lastTransitionTime"].clone(),
            _ => json!(now),
        };
    }
    if &status == old {
        return;
    }
    let key = (
        kind("agents.x-k8s.io", "v1beta1", "sandboxes"),
        sb["metadata"]["namespace"].as_str().unwrap_or("").to_owned(),
        sb["metadata"]["name"].as_str().unwrap_or("").to_owned(),
    );
    let mut inner = state.lock();
    let Some(mut current) = inner.store.get(&key).cloned() else { return };
    if current["metadata"]["resourceVersion"] != sb["metadata"]["resourceVersion"] {
        return; // changed meanwhile: the next pass reconciles it
    }
    current["status"] = status;
    inner.store.put(&key, current);
    drop(inner);
    state.changed();
}

/// The garbage collector's part: deletes the Pods, Services, Sandboxes
/// and PersistentVolumeClaims (once no pod mounts them) whose owning
/// Sandbox, SandboxWarmPool or SandboxClaim is gone.
fn collect_orphans(state: &Arc<State>) {
    let owners = [
        kind("agents.x-k8s.io", "v1beta1", "sandboxes"),
        kind("extensions.agents.x-k8s.io", "v1beta1", "sandboxwarmpools"),
        kind("extensions.agents.x-k8s.io", "v1beta1", "sandboxclaims"),
    ];
    let pvcs = kind("", "v1", "persistentvolumeclaims");
    let owned = [kind("", "v1", "pods"), kind("", "v1", "services"), owners[0], pvcs];
    let orphans: Vec<(&'static Kind, Value)> = {
        let inner = state.lock();
        let alive: Vec<Value> = owners
            .iter()
            .flat_map(|k| inner.store.list(k, None))
            .map(|o| o["metadata"]["uid"].clone())
            .collect();
        let orphan = |o: &Value| {
            o["metadata"]["ownerReferences"].as_array().is_some_and(|refs| {
                refs.iter().any(|r| {
                    owners.iter().any(|k| r["kind"] == k.kind) && !alive.contains(&r["uid"])
                })
            })
        };
        let pods = inner.store.list(owned[0], None);
        // `pvc-protection`: a claim a pod still mounts stays.
        let mounted = |pvc: &Value| {
            pods.iter().any(|p| {
                p["metadata"]["namespace"] == pvc["metadata"]["namespace"]
                    && p["spec"]["volumes"].as_array().is_some_and(|vs| {
                        vs.iter().any(|v| {
                            v["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"]
                        })
                    })
            })
        };
        owned
            .iter()
            .flat_map(|k| inner.store.list(k, None).into_iter().map(move |o| (*k, o)))
            .filter(|(k, o)| orphan(o) && !(*k == pvcs && mounted(o)))
            .collect()
    };
    let mut gone = false;
    for (k, o) in orphans {
        let m = &o["metadata"];
        let ns = m["namespace"].as_str().unwrap_or("").to_owned();
        let name = m["name"].as_str().unwrap_or("").to_owned();
        if k.kind == "Pod" {
            pods::delete(state, &ns, &name, None);
            continue;
        }
        gone |= state.lock().store.remove(&(k, ns, name)).is_some();
        if k == pvcs {
            pods::remove_volume(state, &o);
        }
    }
    if gone {
        state.changed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_hash_is_fnv_1a_in_hex() {
        // FNV-1a 32 of "" is the offset basis; of "a", 0xe40c292c.
        assert_eq!(name_hash(""), "811c9dc5");
        assert_eq!(name_hash("a"), "e40c292c");
    }
}
