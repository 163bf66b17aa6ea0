//! The kubelet's part: each Pod a container on the local Docker engine.
//!
//! The pod's first container runs: its image (from the local engine: the
//! stand-in pulls nothing), `command` as the entrypoint, `args` as the
//! command, `env` with `value` or `valueFrom` (a Secret's or ConfigMap's
//! key, the pod's own name, namespace or IP). The pod gets an address of
//! its own on the loopback network, `127.N.X.Y`, and each `containerPort`
//! is published on it as itself, so `status.podIP:containerPort` reaches
//! the container from the host as it would from inside a cluster. Its
//! status goes as the kubelet reports it: `Pending` (scheduled to the
//! node `standin`, then `ContainerCreating`), `Running` with `podIP`,
//! `containerStatuses` and the `Ready` condition once the container runs,
//! or, when its first container has a `readinessProbe` with `httpGet`,
//! once that probe first answers 200 to 399 (probed as the kubelet does:
//! after `initialDelaySeconds`, every `periodSeconds`, default 10; other
//! probe kinds are not run, and a ready pod is not probed again), and when the container ends, `Succeeded` or
//! `Failed` under `restartPolicy: Never` (the stand-in restarts nothing,
//! so otherwise the container waits in `CrashLoopBackOff`). A deleted
//! pod's container is removed, then the pod. A volume of the pod that is
//! a PersistentVolumeClaim is a Docker volume of the claim, mounted where
//! the container's `volumeMounts` say; other volume kinds are not mounted.

use std::sync::Arc;

use base64::Engine as _;
use serde_json::{Value, json};

use super::State;
use super::kinds;
use super::store::Key;
use crate::common::Clock;
use crate::engine::RunSpec;

/// The Docker label naming a container's pod, `namespace/name`.
pub const LABEL_POD: &str = "kube.holm.dev/pod";
/// The node every pod is scheduled to.
pub const NODE: &str = "standin";

fn now() -> String {
    Clock::rfc3339(Clock::default().now())
}

fn key(ns: &str, name: &str) -> Key {
    (kinds::find("", "v1", "pods").expect("pods are served"), ns.to_owned(), name.to_owned())
}

/// Changes the pod's stored object with `f`, unless it is gone or being
/// deleted; answers whether it did.
fn update(state: &State, ns: &str, name: &str, f: impl FnOnce(&mut Value)) -> bool {
    let k = key(ns, name);
    let mut inner = state.lock();
    let Some(mut pod) = inner.store.get(&k).cloned() else { return false };
    if pod["metadata"].get("deletionTimestamp").is_some() {
        return false;
    }
    f(&mut pod);
    inner.store.put(&k, pod);
    drop(inner);
    state.changed();
    true
}

fn condition(kind: &str, ok: bool, reason: Option<&str>) -> Value {
    let mut c = json!({
        "type": kind,
        "status": if ok { "True" } else { "False" },
        "lastProbeTime": null,
        "lastTransitionTime": now()
    });
    if let Some(r) = reason {
        c["reason"] = json!(r);
    }
    c
}

/// The value of one `env` entry of `pod`, as the kubelet resolves it.
fn env_value(state: &State, pod: &Value, e: &Value, ip: &str) -> Result<String, String> {
    if let Some(v) = e.get("value").and_then(Value::as_str) {
        return Ok(v.to_owned());
    }
    let from = &e["valueFrom"];
    let ns = pod["metadata"]["namespace"].as_str().unwrap_or("");
    for (field, resource, binary) in
        [("secretKeyRef", "secrets", true), ("configMapKeyRef", "configmaps", false)]
    {
        let Some(r) = from.get(field) else { continue };
        let (obj, k) = (r["name"].as_str().unwrap_or(""), r["key"].as_str().unwrap_or(""));
        let kind = kinds::find("", "v1", resource).expect("served");
        let object = state.lock().store.get(&(kind, ns.to_owned(), obj.to_owned())).cloned();
        let raw = object.as_ref().and_then(|o| o["data"][k].as_str()).map(str::to_owned);
        return match (raw, binary) {
            (Some(s), true) => base64::engine::general_purpose::STANDARD
                .decode(s)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .map_err(|e| e.to_string()),
            (Some(s), false) => Ok(s),
            (None, _) if r["optional"].as_bool() == Some(true) => Ok(String::new()),
            (None, _) => Err(format!("couldn't find key {k} in {} {ns}/{obj}", kind.kind)),
        };
    }
    if let Some(path) = from.pointer("/fieldRef/fieldPath").and_then(Value::as_str) {
        return Ok(match path {
            "status.podIP" => ip.to_owned(),
            "spec.nodeName" => NODE.to_owned(),
            p => pod
                .pointer(&format!("/{}", p.replace('.', "/")))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        });
    }
    Ok(String::new())
}

/// Marks the pod's container as waiting for `reason`.
fn waiting(state: &State, ns: &str, name: &str, container: &Value, reason: &str, message: &str) {
    let status = json!([{
        "name": container["name"], "image": container["image"], "imageID": "",
        "ready": false, "restartCount": 0, "started": false,
        "state": { "waiting": { "reason": reason, "message": message } }, "lastState": {}
    }]);
    update(state, ns, name, |p| {
        p["status"]["containerStatuses"] = status;
        p["status"]["conditions"] = json!([
            condition("PodScheduled", true, None),
            condition("Initialized", true, None),
            condition("Ready", false, Some("ContainersNotReady")),
            condition("ContainersReady", false, Some("ContainersNotReady")),
        ]);
    });
}

/// What the engine runs for `pod` at `ip`, or why it cannot (the
/// waiting reason and message the kubelet reports).
async fn run_spec(state: &State, pod: &Value, ip: &str) -> Result<RunSpec, (&'static str, String)> {
    let container = &pod["spec"]["containers"][0];
    let image = container["image"].as_str().unwrap_or("").to_owned();
    let mut env = Vec::new();
    for e in container["env"].as_array().into_iter().flatten() {
        let v = env_value(state, pod, e, ip).map_err(|m| ("CreateContainerConfigError", m))?;
        env.push(format!("{}={v}", e["name"].as_str().unwrap_or("")));
    }
    if state.engine.image_id(&image).await.is_none() {
        let m = format!("the stand-in pulls no images: {image} is not on the local Docker engine");
        return Err(("ErrImagePull", m));
    }
    let strings = |v: &Value| -> Option<Vec<String>> {
        v.as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
    };
    let ports: Vec<u16> = container["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["containerPort"].as_u64().and_then(|n| u16::try_from(n).ok()))
        .collect();
    let volumes =
        volume_mounts(state, pod, container).map_err(|m| ("CreateContainerConfigError", m))?;
    let uid = pod["metadata"]["uid"].as_str().unwrap_or("");
    let (ns, name) = (
        pod["metadata"]["namespace"].as_str().unwrap_or(""),
        pod["metadata"]["name"].as_str().unwrap_or(""),
    );
    Ok(RunSpec {
        name: format!("holm-standin-kube-{uid}"),
        image,
        entrypoint: strings(&container["command"]),
        cmd: strings(&container["args"]),
        env,
        ports,
        host_ip: Some(ip.to_owned()),
        labels: [(LABEL_POD.to_owned(), format!("{ns}/{name}"))].into_iter().collect(),
        volumes,
        ..RunSpec::default()
    })
}

/// The Docker volume of the PersistentVolumeClaim `pvc` (by its uid: a
/// claim made again under the same name is a new, empty volume).
fn volume_name(pvc: &Value) -> String {
    format!("holm-standin-kube-pvc-{}", pvc["metadata"]["uid"].as_str().unwrap_or(""))
}

/// The Docker volume and path of each of the container's `volumeMounts`
/// whose volume is a PersistentVolumeClaim; a claim that does not exist is
/// an error (the kubelet would not start the pod). Other volume kinds are
/// not mounted.
fn volume_mounts(
    state: &State,
    pod: &Value,
    container: &Value,
) -> Result<Vec<(String, String)>, String> {
    let ns = pod["metadata"]["namespace"].as_str().unwrap_or("");
    let pvcs = kinds::find("", "v1", "persistentvolumeclaims").expect("served");
    let mut mounts = Vec::new();
    for m in container["volumeMounts"].as_array().into_iter().flatten() {
        let volumes = pod["spec"]["volumes"].as_array();
        let Some(v) = volumes.into_iter().flatten().find(|v| v["name"] == m["name"]) else {
            return Err(format!("volume {} is not one of the pod's", m["name"]));
        };
        let Some(claim) = v["persistentVolumeClaim"]["claimName"].as_str() else { continue };
        let pvc = state.lock().store.get(&(pvcs, ns.to_owned(), claim.to_owned())).cloned();
        let pvc = pvc.ok_or_else(|| format!("persistentvolumeclaim \"{claim}\" not found"))?;
        mounts.push((volume_name(&pvc), m["mountPath"].as_str().unwrap_or("").to_owned()));
    }
    Ok(mounts)
}

/// Removes the Docker volume of the PersistentVolumeClaim `pvc` (just
/// deleted), in a task.
pub(crate) fn remove_volume(state: &Arc<State>, pvc: &Value) {
    let (st, name) = (Arc::clone(state), volume_name(pvc));
    state.tasks.add([tokio::spawn(async move {
        let _ = st.engine.remove_volume(&name).await;
    })]);
}

/// Runs the pod `ns/name` (just created) on the engine, in a task.
pub(crate) fn start(state: Arc<State>, ns: String, name: String) {
    let tasks = Arc::clone(&state);
    tasks.tasks.add([tokio::spawn(async move { run(&state, &ns, &name).await })]);
}

async fn run(state: &Arc<State>, ns: &str, name: &str) {
    let Some(pod) = state.lock().store.get(&key(ns, name)).cloned() else { return };
    let container = pod["spec"]["containers"][0].clone();
    let image = container["image"].as_str().unwrap_or("").to_owned();
    update(state, ns, name, |p| {
        p["spec"]["nodeName"] = json!(NODE);
        p["status"]["conditions"] = json!([condition("PodScheduled", true, None)]);
    });
    waiting(state, ns, name, &container, "ContainerCreating", "");
    let ip = state.lock().next_pod_ip();
    let spec = match run_spec(state, &pod, &ip).await {
        Ok(spec) => spec,
        Err((reason, m)) => return waiting(state, ns, name, &container, reason, &m),
    };
    let image_id = state.engine.image_id(&image).await.unwrap_or_default();
    let id = match state.engine.run(&spec).await {
        Ok((id, _)) => id,
        Err(e) => return waiting(state, ns, name, &container, "RunContainerError", &e),
    };
    let started = now();
    let running = {
        let mut inner = state.lock();
        inner.containers.insert((ns.to_owned(), name.to_owned()), id.clone());
        inner
            .store
            .get(&key(ns, name))
            .is_some_and(|p| p["metadata"].get("deletionTimestamp").is_none())
    };
    if !running {
        let _ = state.engine.remove(&id).await;
        return;
    }
    let probe =
        container["readinessProbe"].get("httpGet").map(|_| container["readinessProbe"].clone());
    let ready = probe.is_none();
    let c = json!({
        "name": container["name"], "image": image, "imageID": image_id,
        "containerID": format!("docker://{id}"), "ready": ready, "restartCount": 0,
        "started": true, "state": { "running": { "startedAt": started } }, "lastState": {}
    });
    update(state, ns, name, |p| {
        let s = &mut p["status"];
        s["phase"] = json!("Running");
        s["hostIP"] = json!("127.0.0.1");
        s["hostIPs"] = json!([{ "ip": "127.0.0.1" }]);
        s["podIP"] = json!(ip);
        s["podIPs"] = json!([{ "ip": ip }]);
        s["startTime"] = json!(started);
        s["containerStatuses"] = json!([c]);
        s["conditions"] = json!([
            condition("PodReadyToStartContainers", true, None),
            condition("Initialized", true, None),
            condition("Ready", ready, (!ready).then_some("ContainersNotReady")),
            condition("ContainersReady", ready, (!ready).then_some("ContainersNotReady")),
            condition("PodScheduled", true, None),
        ]);
    });
    if let Some(probe) = probe {
        let (st, ns, name, ip) = (Arc::clone(state), ns.to_owned(), name.to_owned(), ip.clone());
        let task = tokio::spawn(async move { readiness(&st, &ns, &name, &ip, &probe).await });
        state.tasks.add([task]);
    }
    if let Some(code) = state.engine.wait(&id).await {
        ended(state, ns, name, code);
    }
}

/// Probes the pod's `readinessProbe.httpGet` until it first answers, then
/// marks the pod ready; stops when the pod is gone or no longer running.
async fn readiness(state: &Arc<State>, ns: &str, name: &str, ip: &str, probe: &Value) {
    let secs = |k: &str, default: u64| probe[k].as_u64().unwrap_or(default);
    let (delay, period) = (secs("initialDelaySeconds", 0), secs("periodSeconds", 10).max(1));
    let get = &probe["httpGet"];
    let port = get["port"].as_u64().and_then(|p| u16::try_from(p).ok()).unwrap_or(80);
    let path = get["path"].as_str().unwrap_or("/").to_owned();
    tokio::time::sleep(std::time::Duration::from_secs(delay)).await;
    loop {
        let running = state
            .lock()
            .store
            .get(&key(ns, name))
            .is_some_and(|p| p["status"]["phase"] == "Running");
        if !running {
            return;
        }
        if http_ok(ip, port, &path).await {
            update(state, ns, name, |p| {
                let s = &mut p["status"];
                s["containerStatuses"][0]["ready"] = json!(true);
                for cond in s["conditions"].as_array_mut().into_iter().flatten() {
                    if cond["type"] == "Ready" || cond["type"] == "ContainersReady" {
                        *cond = condition(cond["type"].as_str().unwrap_or(""), true, None);
                    }
                }
            });
            return;
        }
        tokio::time::sleep(std::time::Duration::from_secs(period)).await;
    }
}

/// Whether `GET path` at `ip:port` answers 200 to 399, as the kubelet's
/// HTTP probe counts success.
async fn http_ok(ip: &str, port: u16, path: &str) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let attempt = async {
        let mut s = tokio::net::TcpStream::connect((ip, port)).await.ok()?;
        let request = format!("GET {path} HTTP/1.1\r\nHost: {ip}\r\nConnection: close\r\n\r\n");
        s.write_all(request.as_bytes()).await.ok()?;
        let mut head = [0u8; 12];
        s.read_exact(&mut head).await.ok()?;
        let code: u16 = std::str::from_utf8(&head[9..12]).ok()?.parse().ok()?;
        Some((200..400).contains(&code))
    };
    // The kubelet's probe timeout: `timeoutSeconds`, default 1.
    tokio::time::timeout(std::time::Duration::from_secs(1), attempt).await.ok().flatten()
        == Some(true)
}

/// Reports the pod's container ended with `code`.
fn ended(state: &State, ns: &str, name: &str, code: i64) {
    update(state, ns, name, |p| {
        let policy = p["spec"]["restartPolicy"].as_str().unwrap_or("Always").to_owned();
        let s = &mut p["status"];
        let c = &mut s["containerStatuses"][0];
        let started = c.pointer("/state/running/startedAt").cloned().unwrap_or(Value::Null);
        let terminated = json!({ "terminated": {
            "exitCode": code, "reason": if code == 0 { "Completed" } else { "Error" },
            "startedAt": started, "finishedAt": now(), "containerID": c["containerID"]
        } });
        c["ready"] = json!(false);
        c["started"] = json!(false);
        let done = policy == "Never" || policy == "OnFailure" && code == 0;
        if done {
            c["state"] = terminated;
            s["phase"] = json!(if code == 0 { "Succeeded" } else { "Failed" });
        } else {
            c["lastState"] = terminated;
            c["state"] = json!({ "waiting": {
                "reason": "CrashLoopBackOff",
                "message": "the stand-in restarts no containers"
            } });
        }
        let reason = if done { "PodCompleted" } else { "ContainersNotReady" };
        for cond in s["conditions"].as_array_mut().into_iter().flatten() {
            if cond["type"] == "Ready" || cond["type"] == "ContainersReady" {
                *cond = condition(cond["type"].as_str().unwrap_or(""), false, Some(reason));
            }
        }
    });
}

/// Deletes the pod `ns/name` gracefully: marks it with its
/// `deletionTimestamp` and grace period (`grace`, else its spec's) and
/// removes it once its container is removed. Answers it as marked, or
/// `None` when it is gone.
pub(crate) fn delete(
    state: &Arc<State>,
    ns: &str,
    name: &str,
    grace: Option<i64>,
) -> Option<Value> {
    let k = key(ns, name);
    let mut inner = state.lock();
    let mut pod = inner.store.get(&k).cloned()?;
    if pod["metadata"].get("deletionTimestamp").is_some() {
        return Some(pod);
    }
    let grace =
        grace.or_else(|| pod["spec"]["terminationGracePeriodSeconds"].as_i64()).unwrap_or(30);
    pod["metadata"]["deletionTimestamp"] = json!(now());
    pod["metadata"]["deletionGracePeriodSeconds"] = json!(grace);
    let stored = inner.store.put(&k, pod);
    drop(inner);
    state.changed();
    stop(Arc::clone(state), ns.to_owned(), name.to_owned());
    Some(stored)
}

/// Removes the pod `ns/name` (marked for deletion) once its container is
/// removed, in a task.
fn stop(state: Arc<State>, ns: String, name: String) {
    let tasks = Arc::clone(&state);
    tasks.tasks.add([tokio::spawn(async move {
        let id = state.lock().containers.remove(&(ns.clone(), name.clone()));
        if let Some(id) = id {
            let _ = state.engine.remove(&id).await;
        }
        let removed = state.lock().store.remove(&key(&ns, &name));
        if removed.is_some() {
            state.changed();
        }
    })]);
}
