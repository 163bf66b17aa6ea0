//! Tests of [`KubernetesRuntime`]'s watch and refusals against a scripted
//! API on 127.0.0.1 (one answer per request, then the connection closes).

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;

/// Answers each request `answer(method, path and query, head)` gives, and
/// keeps the requests it had, in order.
async fn api(
    answer: impl Fn(&str, &str, &str) -> (u16, String) + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            while !head.ends_with(b"\r\n\r\n") {
                let mut byte = [0u8; 1];
                if socket.read(&mut byte).await.unwrap() == 0 {
                    break;
                }
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let mut words = head.split_whitespace();
            let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
            log.lock().unwrap().push(format!("{method} {target}"));
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().to_owned())
                })
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            let mut body = vec![0u8; length];
            socket.read_exact(&mut body).await.unwrap();
            let (code, body) = answer(method, target, &head);
            let reply = format!(
                "HTTP/1.1 {code} X\r\ncontent-type: application/json\r\nconnection: close\r\n\
                 content-length: {}\r\n\r\n{body}",
                body.len()
            );
            socket.write_all(reply.as_bytes()).await.unwrap();
            let _ = socket.shutdown().await;
        }
    });
    (url, seen)
}

fn runtime(dir: &std::path::Path, server: &str) -> KubernetesRuntime {
    runtime_as(dir, server, serde_json::json!({ "token": "t0ken-never-shown" }))
}

fn runtime_as(dir: &std::path::Path, server: &str, user: Value) -> KubernetesRuntime {
    let path = dir.join("kubeconfig");
    let config = serde_json::json!({
        "clusters": [{ "name": "c", "cluster": { "server": server } }],
        "users": [{ "name": "u", "user": user }],
        "contexts": [{ "name": "x", "context": { "cluster": "c", "user": "u" } }],
        "current-context": "x",
    });
    std::fs::write(&path, config.to_string()).unwrap();
    let settings = KubeSettings { kubeconfig: Some(path), ..Default::default() };
    KubernetesRuntime::new("k8s", settings, DockerRuntime::connect("docker").unwrap())
}

const RUNNING: &str = r#"{"metadata":{"name":"holm-box-1","resourceVersion":"7"},
    "status":{"phase":"Running","podIP":"10.1.2.3"}}"#;

#[tokio::test]
async fn a_watch_too_old_relists_the_pod_and_goes_on() {
    let (url, seen) = api(|_, target, _| {
        if target.contains("watch=true") {
            let gone = r#"{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old resource version"}}"#;
            (200, format!("{gone}\n"))
        } else {
            (200, RUNNING.to_owned())
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let pod = runtime(dir.path(), &url).wait_running("holm-box-1").await.unwrap();
    assert_eq!(pod.status.unwrap().pod_ip.as_deref(), Some("10.1.2.3"));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen[0].contains("fieldSelector=metadata.name%3Dholm-box-1"), "{seen:?}");
    assert!(seen[0].contains("resourceVersion=0"), "{seen:?}");
    assert_eq!(seen[1], "GET /api/v1/namespaces/default/pods/holm-box-1");
}

#[tokio::test]
async fn another_watch_error_fails_the_wait() {
    let (url, _) = api(|_, _, _| {
        let e = r#"{"type":"ERROR","object":{"kind":"Status","code":500,"reason":"InternalError","message":"etcd is down"}}"#;
        (200, format!("{e}\n"))
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let e = runtime(dir.path(), &url).wait_running("holm-box-1").await.unwrap_err();
    assert_eq!(e.to_string(), RuntimeError::Engine("watch: etcd is down".into()).to_string());
}

#[tokio::test]
async fn a_refusal_is_the_apis_status_and_no_token_shows() {
    let (url, seen) = api(|method, _, _| match method {
        "POST" => (
            409,
            r#"{"kind":"Status","code":409,"reason":"AlreadyExists","message":"secrets \"holm-box-1\" already exists"}"#
                .to_owned(),
        ),
        _ => (404, r#"{"kind":"Status","code":404,"reason":"NotFound","message":"not found"}"#.to_owned()),
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path(), &url);
    let spec = MachineSpec {
        box_id: "box_1".into(),
        image: "img".into(),
        env: vec![],
        labels: BTreeMap::new(),
        ports: vec![8765],
        public_ports: vec![],
        memory_bytes: None,
        nano_cpus: None,
        pids_limit: None,
        profile: None,
        deadline: None,
        idle_timeout_secs: None,
        expires_at: None,
    };
    let e = rt.create(&spec).await.unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains(
            "kubernetes refused to create a secret: secrets \"holm-box-1\" already exists (AlreadyExists, 409)"
        ),
        "{text}"
    );
    // The failed create removed what it may have made (each delete found nothing).
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.iter().any(|r| r == "DELETE /api/v1/namespaces/default/secrets/holm-box-1"),
        "{seen:?}"
    );
    assert!(matches!(rt.inspect("holm-box-1").await, Err(RuntimeError::NotFound(_))));
    let debug = format!("{rt:?} {:?} {e:?}", rt.client().await.unwrap());
    assert!(!debug.contains("t0ken-never-shown"), "{debug}");
}

#[tokio::test]
async fn an_exec_plugins_token_is_sent_kept_and_asked_again_after_a_401() {
    // The API takes `exec-t0ken-2` only: the plugin's first token is
    // refused, and the plugin is asked again.
    let (url, _) = api(|_, _, head| {
        let auth = head.lines().find_map(|l| l.strip_prefix("authorization: ")).unwrap_or("");
        if auth == "Bearer exec-t0ken-2" {
            (404, r#"{"kind":"Status","code":404,"reason":"NotFound","message":"no"}"#.to_owned())
        } else {
            (
                401,
                r#"{"kind":"Status","code":401,"reason":"Unauthorized","message":"who"}"#
                    .to_owned(),
            )
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("plugin.sh");
    // Each run appends a line to `runs` and answers a token numbered by it.
    let script = r#"#!/bin/sh
echo "$KUBERNETES_EXEC_INFO" >> "$RUNS"
n=$(wc -l < "$RUNS" | tr -d ' ')
echo "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"exec-t0ken-$n\",\"expirationTimestamp\":\"2999-01-01T00:00:00Z\"}}"
"#;
    std::fs::write(&plugin, script).unwrap();
    let runs = dir.path().join("runs");
    let user = serde_json::json!({ "exec": {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": "/bin/sh",
        "args": [plugin],
        "env": [{ "name": "RUNS", "value": runs }],
    }});
    let rt = runtime_as(dir.path(), &url, user);
    let refused = rt.inspect("holm-box-1").await.unwrap_err();
    assert!(refused.to_string().contains("Unauthorized, 401"), "{refused}");
    for _ in 0..2 {
        assert!(matches!(rt.inspect("holm-box-1").await, Err(RuntimeError::NotFound(_))));
    }
    let runs = std::fs::read_to_string(runs).unwrap();
    assert_eq!(runs.lines().count(), 2, "run once, then once after the 401: {runs}");
    assert!(runs.contains(r#""kind":"ExecCredential""#), "{runs}");
    let debug = format!("{rt:?} {:?}", rt.client().await.unwrap());
    assert!(!debug.contains("exec-t0ken"), "{debug}");
}

/// A pod whose container waits for `reason`, as the kubelet reports it.
fn waiting_pod(reason: &str) -> Pod {
    Pod::from_value(serde_json::json!({
        "metadata": { "name": "holm-box-1" },
        "status": { "phase": "Pending", "containerStatuses": [{
            "name": "box", "ready": false, "restartCount": 0,
            "state": { "waiting": { "reason": reason, "message": "port is already allocated" } }
        }] }
    }))
    .unwrap()
}

#[test]
fn a_container_that_cannot_start_fails_the_wait_and_one_being_made_does_not() {
    for reason in ["RunContainerError", "CreateContainerError", "ErrImagePull", "CrashLoopBackOff"]
    {
        let failed = running_or_failed(&waiting_pod(reason)).expect("a verdict");
        let why = failed.expect_err("it will not run");
        assert!(why.contains(reason) && why.contains("port is already allocated"), "{why}");
    }
    for reason in ["ContainerCreating", "PodInitializing"] {
        assert!(running_or_failed(&waiting_pod(reason)).is_none(), "{reason} may yet run");
    }
}

#[tokio::test]
async fn prebuilt_images_run_as_named_and_nothing_is_built() {
    use holm_proto::guest::Profile;
    let settings = KubeSettings {
        images: [(Profile::X11, "reg.example/holm-box:x11-1".to_owned())].into(),
        ..KubeSettings::default()
    };
    // The builder is never asked: no engine answers at this address.
    let builder = DockerRuntime::connect("tcp://127.0.0.1:9").unwrap();
    let rt = KubernetesRuntime::new("k", settings, builder);
    let mut quiet = |_: Progress| {};
    let x11 = rt.prepare_image(&ImageRequest::default(), &mut quiet).await;
    assert_eq!(x11.unwrap(), "reg.example/holm-box:x11-1");
    let wayland = ImageRequest::default().with_display(Profile::Wayland);
    let e = rt.prepare_image(&wayland, &mut quiet).await.unwrap_err();
    assert!(
        matches!(e, RuntimeError::Unsupported { .. }) && e.to_string().contains("wayland"),
        "{e}"
    );
    let apps = ImageRequest { apps: vec!["gimp".into()], ..ImageRequest::default() };
    let e = rt.prepare_image(&apps, &mut quiet).await.unwrap_err();
    assert!(e.to_string().contains("apps or packages"), "{e}");
}
