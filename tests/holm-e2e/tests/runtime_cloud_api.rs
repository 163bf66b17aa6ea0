//! The Runtime Cloud stand-in answers the requests Runtime Cloud's
//! documentation shows (its HTTPS API reference: the `curl` examples, the
//! error shape, idempotency, `Prefer: wait`, `waitFor`, pages, leases,
//! the removed 0.1.0 routes) as the documentation says. Runtime Cloud has
//! no SDK on PyPI or npm that the test machines hold, so the requests are
//! sent as the documentation writes them, byte for byte where it gives
//! them. The sandbox is a real container on the local engine.

use holm_standins::runtime_cloud::RuntimeCloudStandin;
use holm_testkit::e2e_enabled;
use reqwest::StatusCode;
use serde_json::{Value, json};

struct Api {
    http: reqwest::Client,
    base: String,
    key: String,
}

impl Api {
    fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}{path}", self.base))
            .header("Authorization", format!("Bearer {}", self.key))
            .header("Content-Type", "application/json")
    }

    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.http
            .get(format!("{}{path}", self.base))
            .header("Authorization", format!("Bearer {}", self.key))
    }
}

/// Reads an answer: its status, its request id, its body.
async fn read(r: reqwest::RequestBuilder) -> (StatusCode, String, Value) {
    let r = r.send().await.expect("the stand-in answers");
    let status = r.status();
    let id = r
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .expect("every response carries x-request-id")
        .to_owned();
    let body = r.json().await.unwrap_or(Value::Null);
    (status, id, body)
}

/// The one error shape, with the code, and the request id of the header.
fn is_error(body: &Value, status: StatusCode, code: &str, request_id: &str) {
    let e = &body["error"];
    assert_eq!(e["code"], code, "{body}");
    assert_eq!(e["status"], status.as_u16(), "{body}");
    assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    assert!(e["hint"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    assert_eq!(e["requestId"], request_id, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_requests_are_answered_as_documented() {
    if !e2e_enabled().await {
        return;
    }
    let standin = RuntimeCloudStandin::start().await;
    let api = Api {
        http: holm_client::client_builder().build().expect("an HTTP client"),
        base: standin.api_url.clone(),
        key: standin.key.clone(),
    };

    // "Requests": the first curl example, a create that waits.
    let (status, _, sbx) =
        read(api.post("/v1/sandboxes").header("Prefer", "wait=60").body("{}")).await;
    assert_eq!(status, StatusCode::CREATED, "{sbx}");
    // As `runtime sandbox get --json` shows a sandbox.
    for (k, v) in [
        ("kind", json!("sandbox")),
        ("name", Value::Null),
        ("labels", json!({})),
        ("state", json!("running")),
        ("vcpu", json!(2)),
        ("memoryMiB", json!(4096)),
        ("diskMiB", json!(4096)),
        ("cpu", json!("shared")),
        ("cpuFloorMillis", json!(50)),
        ("timeoutSeconds", json!(1800)),
        ("onLeaseEnd", json!("pause")),
    ] {
        assert_eq!(sbx[k], v, "{k}: {sbx}");
    }
    let id = sbx["id"].as_str().expect("an id").to_owned();

    // The second: `"${ID}:exec"` with the documented command. The
    // stand-in's default image has no Python (it is Debian, not Runtime's
    // Ubuntu): the answer has the documented fields, and bash's 127.
    let (status, _, ran) = read(
        api.post(&format!("/v1/sandboxes/{id}:exec"))
            .body(r#"{"command": "python3 -c \"print(6 * 7)\""}"#),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{ran}");
    assert_eq!(ran["exitCode"], 127, "{ran}");
    assert_eq!(ran["timedOut"], false, "{ran}");
    assert!(ran["stderr"].as_str().unwrap().contains("python3"), "{ran}");
    let (_, _, ran) = read(
        api.post(&format!("/v1/sandboxes/{id}:exec")).json(&json!({"command": "echo $((6 * 7))"})),
    )
    .await;
    assert_eq!((ran["exitCode"].clone(), ran["stdout"].clone()), (json!(0), json!("42\n")));
    let (_, _, ran) = read(
        api.post(&format!("/v1/sandboxes/{id}:exec"))
            .json(&json!({"argv": ["sleep", "5"], "timeoutMs": 200})),
    )
    .await;
    assert_eq!(ran["timedOut"], true, "a timeout is a result, not an error: {ran}");

    // Background processes: a start answers at once, and a read says when
    // the process ended, with its exit code; a pty is refused by name.
    let (status, _, p) = read(
        api.post(&format!("/v1/sandboxes/{id}/processes"))
            .json(&json!({"command": "read line < /dev/stdin; exit 3", "cwd": "/"})),
    )
    .await;
    assert_eq!((status, p["state"].clone()), (StatusCode::CREATED, json!("running")), "{p}");
    let pid = p["id"].as_str().expect("a process id").to_owned();
    let (status, _, p) = read(api.get(&format!("/v1/sandboxes/{id}/processes/{pid}"))).await;
    assert_eq!(
        (status, p["command"].clone()),
        (StatusCode::OK, json!("read line < /dev/stdin; exit 3"))
    );
    let (_, _, started) = read(
        api.post(&format!("/v1/sandboxes/{id}/processes"))
            .json(&json!({"argv": ["sh", "-c", "exit 3"]})),
    )
    .await;
    let quick = started["id"].as_str().expect("a process id").to_owned();
    let ended = loop {
        let (_, _, p) = read(api.get(&format!("/v1/sandboxes/{id}/processes/{quick}"))).await;
        if p["state"] != "running" {
            break p;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!((ended["state"].clone(), ended["exitCode"].clone()), (json!("exited"), json!(3)));
    let (_, _, listed) = read(api.get(&format!("/v1/sandboxes/{id}/processes"))).await;
    let ids: Vec<&str> =
        listed["data"].as_array().unwrap().iter().filter_map(|p| p["id"].as_str()).collect();
    assert_eq!(ids.len(), 2, "{listed}");
    assert!(ids.contains(&pid.as_str()) && ids.contains(&quick.as_str()), "{listed}");
    let (status, rid, refused) = read(
        api.post(&format!("/v1/sandboxes/{id}/processes"))
            .json(&json!({"argv": ["bash"], "pty": {"cols": 80, "rows": 24}})),
    )
    .await;
    is_error(&refused, status, "invalid_request", &rid);

    // Waiting for a state without polling.
    let (status, _, got) =
        read(api.get(&format!("/v1/sandboxes/{id}?waitFor=running&timeoutSeconds=60"))).await;
    assert_eq!((status, got["state"].clone()), (StatusCode::OK, json!("running")));

    // One error shape: no key; unknown fields, every one named.
    let (status, rid, body) =
        read(api.http.post(format!("{}/v1/sandboxes", api.base)).body("{}")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    is_error(&body, status, "unauthorized", &rid);
    let (status, rid, body) =
        read(api.post("/v1/sandboxes").json(&json!({"vcpus": 2, "colour": "red", "vcpu": 0})))
            .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    is_error(&body, status, "invalid_request", &rid);
    let named: Vec<&str> = body["error"]["details"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["path"].as_str())
        .collect();
    for field in ["vcpus", "colour", "vcpu"] {
        assert!(named.contains(&field), "{field} is not named: {body}");
    }

    // Retries and idempotency: the same key and body answer the first
    // result again; another body with it is refused; one sandbox is made.
    let made = || {
        api.post("/v1/sandboxes")
            .header("Idempotency-Key", "job-42")
            .header("Prefer", "wait=60")
            .json(&json!({"labels": {"team": "search"}, "timeoutSeconds": 600}))
    };
    let (status, _, first) = read(made()).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let again = made().send().await.unwrap();
    assert_eq!(again.headers()["idempotency-replayed"], "true");
    let again: Value = again.json().await.unwrap();
    assert_eq!(
        (again["id"].clone(), again["replayed"].clone()),
        (first["id"].clone(), json!(true))
    );
    let (status, rid, body) = read(
        api.post("/v1/sandboxes")
            .header("Idempotency-Key", "job-42")
            .json(&json!({"labels": {"team": "other"}})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    is_error(&body, status, "idempotency_key_reused", &rid);

    // Pages: `{data, nextCursor}`, the cursor passed back, null at the end;
    // a label filter.
    let (_, _, p1) = read(api.get("/v1/sandboxes?limit=1")).await;
    assert_eq!(p1["data"].as_array().unwrap().len(), 1, "{p1}");
    let cursor = p1["nextCursor"].as_str().expect("a next page").to_owned();
    let (_, _, p2) = read(api.get(&format!("/v1/sandboxes?limit=1&cursor={cursor}"))).await;
    assert_eq!(p2["data"].as_array().unwrap().len(), 1, "{p2}");
    assert_eq!(p2["nextCursor"], Value::Null, "{p2}");
    assert_ne!(p1["data"][0]["id"], p2["data"][0]["id"]);
    let (_, _, labelled) = read(api.get("/v1/sandboxes?label=team:search")).await;
    let ids: Vec<&Value> = labelled["data"].as_array().unwrap().iter().map(|s| &s["id"]).collect();
    assert_eq!(ids, [&first["id"]]);
    let (status, rid, body) = read(api.get("/v1/sandboxes?limit=101")).await;
    is_error(&body, status, "invalid_request", &rid);

    // The lease: `{"seconds": 600}` more; never more than an hour ahead.
    let before = standin.expires_at(&id).unwrap();
    let (status, _, _) =
        read(api.post(&format!("/v1/sandboxes/{id}:extend")).json(&json!({"seconds": 600}))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(standin.expires_at(&id), Some(before + 600));
    let (status, rid, body) =
        read(api.post(&format!("/v1/sandboxes/{id}:extend")).json(&json!({"seconds": 3600}))).await;
    is_error(&body, status, "invalid_request", &rid);

    // Forks are switched off; the 0.1.0 routes are gone.
    let (status, rid, body) = read(api.post(&format!("/v1/sandboxes/{id}:fork")).body("{}")).await;
    is_error(&body, status, "fork_unavailable", &rid);
    let (status, rid, body) = read(api.get("/v1/resources")).await;
    assert_eq!(status, StatusCode::GONE);
    is_error(&body, status, "upgrade_required", &rid);
    assert!(body["error"]["details"]["replacement"].is_string(), "{body}");

    // Who the key is.
    let (_, _, me) = read(api.get("/v1/me")).await;
    for k in ["orgId", "principalId", "credentialId"] {
        assert!(me[k].is_string(), "{k}: {me}");
    }

    // Stop, waiting for it; then the state refuses changes.
    let (status, _, stopped) =
        read(api.post(&format!("/v1/sandboxes/{id}:stop")).header("Prefer", "wait=60").body("{}"))
            .await;
    assert_eq!((status, stopped["state"].clone()), (StatusCode::OK, json!("stopped")));
    let (status, rid, body) =
        read(api.post(&format!("/v1/sandboxes/{id}:exec")).json(&json!({"command": "true"}))).await;
    assert_eq!(status, StatusCode::CONFLICT);
    is_error(&body, status, "sandbox_stopped", &rid);
    let (_, _, listed) = read(api.get("/v1/sandboxes")).await;
    assert!(!listed.to_string().contains(&id), "a stopped sandbox is left out: {listed}");
    let (_, _, listed) = read(api.get("/v1/sandboxes?includeStopped=true")).await;
    assert!(listed.to_string().contains(&id), "{listed}");
    let other = first["id"].as_str().unwrap();
    let _ =
        read(api.post(&format!("/v1/sandboxes/{other}:stop")).header("Prefer", "wait=60")).await;
    assert!(standin.sandbox_ids().is_empty());
}
