//! agent-sandbox's SandboxWarmPool and SandboxClaim controllers, as
//! kubernetes-sigs/agent-sandbox's `extensions/controllers` reconcile
//! them (the parts holm's runtime will use).
//!
//! A pool keeps `spec.replicas` (default 1) Sandboxes of its template's
//! blueprint, named `POOL-xxxxx`, owned by it, labelled
//! `agents.x-k8s.io/warm-pool-sandbox` (the pool name's hash, also on
//! their pod template), `agents.x-k8s.io/launch-type: warm` and
//! `agents.x-k8s.io/created-by: controller`, annotated
//! `agents.x-k8s.io/sandbox-template-ref`; its status counts `replicas`
//! and `readyReplicas`, with the `selector` and `observedGeneration`. A
//! claim adopts one of its pool's Sandboxes (a Ready one first): the
//! Sandbox loses the pool's label and owner, is owned by the claim,
//! labelled `agents.x-k8s.io/claim-uid`, annotated
//! `agents.x-k8s.io/pod-name`, and the claim is annotated
//! `agents.x-k8s.io/sandbox-name`; the pool then makes another. With no
//! Sandbox in the pool the claim starts one cold, named as the claim. The
//! claim's status has `sandbox {name, podIPs}` and the Sandbox's `Ready`
//! (and `Finished`) condition, or `Ready: False` with `WarmPoolNotFound`,
//! `TemplateNotFound` or `SandboxMissing`.
//!
//! Not done: update strategies, the readiness grace period and
//! replacement of unready Sandboxes, claim `env`, `lifecycle`,
//! `additionalPodMetadata` and `volumeClaimTemplates`, the template's
//! managed NetworkPolicy and secure defaults, batching, events, metrics.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::kinds::{self, Kind};
use super::objects::{self, Fresh};
use super::sandboxes::name_hash;
use super::{State, store};
use crate::common::{Clock, random_id};

/// The label marking a pool's Sandboxes, by the pool name's hash.
pub const POOL_LABEL: &str = "agents.x-k8s.io/warm-pool-sandbox";

fn kind(group: &str, resource: &str) -> &'static Kind {
    kinds::find(group, "v1beta1", resource).expect("a served kind")
}

fn sandboxes() -> &'static Kind {
    kind("agents.x-k8s.io", "sandboxes")
}

fn ext(resource: &str) -> &'static Kind {
    kind("extensions.agents.x-k8s.io", resource)
}

fn meta<'a>(o: &'a Value, field: &str) -> &'a str {
    o["metadata"][field].as_str().unwrap_or("")
}

fn is_ready(sb: &Value) -> bool {
    sb["status"]["conditions"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

fn owner_ref(o: &Value, kind: &str, api_version: &str) -> Value {
    json!([{
        "apiVersion": api_version, "kind": kind, "name": o["metadata"]["name"],
        "uid": o["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true
    }])
}

/// Reconciles every pool, then every claim.
pub(crate) fn reconcile_all(state: &Arc<State>) {
    let (pools, claims) = {
        let inner = state.lock();
        (
            inner.store.list(ext("sandboxwarmpools"), None),
            inner.store.list(ext("sandboxclaims"), None),
        )
    };
    for pool in &pools {
        pool_reconcile(state, pool);
    }
    for claim in &claims {
        claim_reconcile(state, claim);
    }
}

/// The template named `name` in `ns`.
fn template(state: &State, ns: &str, name: &str) -> Option<Value> {
    state.lock().store.get(&(ext("sandboxtemplates"), ns.to_owned(), name.to_owned())).cloned()
}

/// A Sandbox of `template`'s blueprint (`podTemplate`,
/// `volumeClaimTemplates`, `service`) with `metadata`.
fn sandbox_of(template: &Value, metadata: Value, pod_labels: &Map<String, Value>) -> Value {
    let spec = &template["spec"];
    let mut blueprint = json!({ "podTemplate": spec["podTemplate"].clone() });
    for k in ["volumeClaimTemplates", "service"] {
        if !spec[k].is_null() {
            blueprint[k] = spec[k].clone();
        }
    }
    let labels = &mut blueprint["podTemplate"]["metadata"]["labels"];
    if !labels.is_object() {
        *labels = json!({});
    }
    for (k, v) in pod_labels {
        labels[k] = v.clone();
    }
    json!({ "apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox", "metadata": metadata, "spec": blueprint })
}

/// Stores a new Sandbox (as the controller, with the API server's checks).
fn create_sandbox(state: &State, ns: &str, name: &str, mut sb: Value) {
    let key: store::Key = (sandboxes(), ns.to_owned(), name.to_owned());
    let mut inner = state.lock();
    if inner.store.get(&key).is_some() {
        return;
    }
    let mut none = String::new;
    let fresh = Fresh {
        now: Clock::rfc3339(Clock::default().now()),
        uid: super::write::uuid(),
        next_ip: &mut none,
    };
    if objects::create(sandboxes(), &mut sb, name, fresh).is_ok() {
        inner.store.put(&key, sb);
        drop(inner);
        state.changed();
    }
}

/// Writes `status` on the object at `key` when it differs.
fn set_status(state: &State, key: &store::Key, status: Value) {
    let mut inner = state.lock();
    let Some(mut o) = inner.store.get(key).cloned() else { return };
    if o["status"] == status {
        return;
    }
    o["status"] = status;
    inner.store.put(key, o);
    drop(inner);
    state.changed();
}

fn pool_reconcile(state: &Arc<State>, pool: &Value) {
    let (ns, name) = (meta(pool, "namespace"), meta(pool, "name"));
    let hash = name_hash(name);
    let members: Vec<Value> = state
        .lock()
        .store
        .list(sandboxes(), Some(ns))
        .into_iter()
        .filter(|s| s["metadata"]["labels"][POOL_LABEL] == hash.as_str())
        .collect();
    let want = pool["spec"]["replicas"].as_u64().unwrap_or(1) as usize;
    let template_name = pool["spec"]["sandboxTemplateRef"]["name"].as_str().unwrap_or("");
    if members.len() < want
        && let Some(t) = template(state, ns, template_name)
    {
        for _ in members.len()..want {
            let sb_name = format!("{name}-{}", random_id(5));
            let labels: Map<String, Value> = [
                (POOL_LABEL.to_owned(), json!(hash)),
                (
                    "agents.x-k8s.io/sandbox-template-ref-hash".to_owned(),
                    json!(name_hash(template_name)),
                ),
                ("agents.x-k8s.io/launch-type".to_owned(), json!("warm")),
            ]
            .into_iter()
            .collect();
            let mut sb_labels = labels.clone();
            sb_labels.insert("agents.x-k8s.io/created-by".into(), json!("controller"));
            let metadata = json!({
                "name": sb_name, "namespace": ns, "labels": sb_labels,
                "annotations": { "agents.x-k8s.io/sandbox-template-ref": template_name },
                "ownerReferences": owner_ref(pool, "SandboxWarmPool", "extensions.agents.x-k8s.io/v1beta1")
            });
            let mut pod_labels = labels;
            pod_labels.remove("agents.x-k8s.io/launch-type");
            create_sandbox(state, ns, &sb_name, sandbox_of(&t, metadata, &pod_labels));
        }
    }
    for extra in members.iter().skip(want) {
        let key = (sandboxes(), ns.to_owned(), meta(extra, "name").to_owned());
        if state.lock().store.remove(&key).is_some() {
            state.changed();
        }
    }
    let kept = &members[..members.len().min(want)];
    let status = json!({
        "replicas": kept.len(),
        "readyReplicas": kept.iter().filter(|s| is_ready(s)).count(),
        "selector": format!("{POOL_LABEL}={hash}"),
        "observedGeneration": pool["metadata"]["generation"]
    });
    set_status(state, &(ext("sandboxwarmpools"), ns.to_owned(), name.to_owned()), status);
}

/// The Sandbox a claim holds: named by its annotation, or owned by it.
fn claimed(state: &State, claim: &Value) -> Option<Value> {
    let (ns, uid) = (meta(claim, "namespace"), &claim["metadata"]["uid"]);
    let named = claim["metadata"]["annotations"]["agents.x-k8s.io/sandbox-name"].as_str();
    state.lock().store.list(sandboxes(), Some(ns)).into_iter().find(|s| {
        named == Some(meta(s, "name"))
            || s["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|r| r.iter().any(|r| &r["uid"] == uid))
    })
}

/// Makes `sb` the claim's: out of its pool, owned by the claim.
fn adopt(state: &State, claim: &Value, sb: &Value) {
    let (ns, name) = (meta(claim, "namespace"), meta(claim, "name"));
    let mut s = sb.clone();
    if let Some(labels) = s["metadata"]["labels"].as_object_mut() {
        labels.remove(POOL_LABEL);
        labels.remove("agents.x-k8s.io/sandbox-template-hash");
        labels.remove("agents.x-k8s.io/created-by");
        labels.insert("agents.x-k8s.io/launch-type".into(), json!("warm"));
        labels.insert("agents.x-k8s.io/claim-uid".into(), claim["metadata"]["uid"].clone());
    }
    s["metadata"]["ownerReferences"] =
        owner_ref(claim, "SandboxClaim", "extensions.agents.x-k8s.io/v1beta1");
    s["metadata"]["annotations"]["agents.x-k8s.io/pod-name"] = json!(meta(sb, "name"));
    let sb_key = (sandboxes(), ns.to_owned(), meta(sb, "name").to_owned());
    let claim_key = (ext("sandboxclaims"), ns.to_owned(), name.to_owned());
    let mut inner = state.lock();
    inner.store.put(&sb_key, s);
    if let Some(mut c) = inner.store.get(&claim_key).cloned() {
        c["metadata"]["annotations"]["agents.x-k8s.io/sandbox-name"] = json!(meta(sb, "name"));
        inner.store.put(&claim_key, c);
    }
    drop(inner);
    state.changed();
}

fn claim_reconcile(state: &Arc<State>, claim: &Value) {
    let (ns, name) = (meta(claim, "namespace"), meta(claim, "name"));
    let g = &claim["metadata"]["generation"];
    let pool_name = claim["spec"]["warmPoolRef"]["name"].as_str().unwrap_or("");
    let key = (ext("sandboxclaims"), ns.to_owned(), name.to_owned());
    let mut held = claimed(state, claim);
    if held.is_none() {
        let pool = state
            .lock()
            .store
            .get(&(ext("sandboxwarmpools"), ns.to_owned(), pool_name.to_owned()))
            .cloned();
        let Some(pool) = pool else {
            let c = json!({ "type": "Ready", "status": "False", "reason": "WarmPoolNotFound",
                "message": format!("SandboxWarmPool \"{pool_name}\" not found"), "observedGeneration": g });
            return set_status(state, &key, claim_status(claim, c, None));
        };
        let hash = name_hash(pool_name);
        let mut members: Vec<Value> = state
            .lock()
            .store
            .list(sandboxes(), Some(ns))
            .into_iter()
            .filter(|s| {
                s["metadata"]["labels"][POOL_LABEL] == hash.as_str()
                    && s["metadata"]["deletionTimestamp"].is_null()
            })
            .collect();
        members.sort_by_key(|s| !is_ready(s));
        if let Some(sb) = members.first() {
            adopt(state, claim, sb);
        } else {
            let template_name = pool["spec"]["sandboxTemplateRef"]["name"].as_str().unwrap_or("");
            let Some(t) = template(state, ns, template_name) else {
                let c = json!({ "type": "Ready", "status": "False", "reason": "TemplateNotFound",
                    "message": format!("SandboxTemplate \"{template_name}\" not found"), "observedGeneration": g });
                return set_status(state, &key, claim_status(claim, c, None));
            };
            let metadata = json!({
                "name": name, "namespace": ns,
                "labels": { "agents.x-k8s.io/launch-type": "cold", "agents.x-k8s.io/claim-uid": claim["metadata"]["uid"] },
                "ownerReferences": owner_ref(claim, "SandboxClaim", "extensions.agents.x-k8s.io/v1beta1")
            });
            create_sandbox(state, ns, name, sandbox_of(&t, metadata, &Map::new()));
        }
        held = claimed(state, claim);
    }
    let ready = match &held {
        None => json!({ "type": "Ready", "status": "False", "reason": "SandboxMissing",
            "message": "Sandbox does not exist", "observedGeneration": g }),
        Some(sb) => sb["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
            .map(|c| {
                let mut c = c.clone();
                c["observedGeneration"] = g.clone();
                c
            })
            .unwrap_or_else(|| {
                json!({ "type": "Ready", "status": "False", "reason": "SandboxNotReady",
                "message": "Sandbox is not ready", "observedGeneration": g })
            }),
    };
    set_status(state, &key, claim_status(claim, ready, held.as_ref()));
}

/// A claim's status: its `Ready` condition (its `lastTransitionTime`
/// kept while its status stays), the Sandbox's `Finished`, and the
/// Sandbox's name and addresses.
fn claim_status(claim: &Value, mut ready: Value, sb: Option<&Value>) -> Value {
    let old = claim["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready"));
    if ready.get("lastTransitionTime").is_none_or(Value::is_null) {
        ready["lastTransitionTime"] = match old {
            Some(o) if o["status"] == ready["status"] => o["lastTransitionTime"].clone(),
            _ => json!(Clock::rfc3339(Clock::default().now())),
        };
    }
    let mut conditions = vec![ready];
    let finished = sb
        .and_then(|s| s["status"]["conditions"].as_array())
        .and_then(|c| c.iter().find(|c| c["type"] == "Finished"));
    conditions.extend(finished.cloned());
    let mut status = json!({ "conditions": conditions });
    if let Some(sb) = sb {
        let mut s = json!({ "name": sb["metadata"]["name"] });
        if let Some(ips) = sb["status"].get("podIPs") {
            s["podIPs"] = ips.clone();
        }
        status["sandbox"] = s;
    }
    status
}
