//! Boxes at cloud vendors, end to end, against the vendors' stand-ins
//! (`holm-standins`): holmd → the vendor's API → the vendor's proxy → the
//! guest, each sandbox a real container on the local engine. One scenario,
//! run once per vendor with one box: the vendor's limits before anything
//! starts; a 429 and a 500 on create survived, with one sandbox made; the
//! bridge through the vendor's proxy and its token; pause where the vendor can; the key
//! rotated while the box runs; a restart taking it back by its record, and
//! by its metadata when the store is lost; a vendor that does not answer
//! (the box `unreachable`, its record kept, then taken back); the vendor
//! ending the box at its deadline while holmd is stopped; an invalid key's
//! clear error; and no key in any response, log line, trace or record.
//! What every box does (desktop, typing, commands, files, page tools,
//! pause, removal) is the shared suite's, run on these vendors too
//! (`core.rs`: `a_box_lives_its_whole_life::e2b::x11`, `::daytona::x11`,
//! `::modal::x11`, `::runtime_cloud::x11`, `::vercel::x11`).
//! The SDK conformance of each stand-in is `vendor_sdks.rs`.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use holm_proto::ErrorCode;
use holm_proto::host::{BoxSpec, BoxState, ChangeRuntime, CreateBox, Placement, RuntimeState};
use holm_standins::Fault;
use holm_testkit::cloud::{Cloud, CloudServer};
use holm_testkit::{e2e_enabled, eventually};

mod traces;

/// Everything the tests' tracing wrote, to scan for keys.
fn logs() -> &'static Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let writer = Arc::clone(&buf);
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(
                "holm=debug,holmd=debug,holm_standins=debug",
            ))
            .with_writer(move || Capture(Arc::clone(&writer)))
            .try_init();
        buf
    })
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(b);
        std::io::stderr().write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Every answer the test read, to scan for keys.
#[derive(Default)]
struct Seen(Vec<String>);

impl Seen {
    fn add(&mut self, v: &impl serde::Serialize) {
        self.0.push(serde_json::to_string(v).unwrap_or_default());
    }
}

async fn limits_come_before_anything_starts(c: &CloudServer, seen: &mut Seen) {
    let client = &c.server.client;
    let before = c.standin.controls().calls.all().len();
    let cloud = c.cloud.name();
    let with = |placement: Placement, spec: BoxSpec| CreateBox {
        spec,
        placement: Placement { runtime: Some(cloud.into()), ..placement },
    };
    let cpus = client
        .create_box(
            &with(Placement { cpus: Some(1.5), ..Placement::default() }, BoxSpec::default()),
            None,
        )
        .await
        .unwrap_err();
    let api = cpus.api().expect("the error shape");
    assert_eq!(api.code, ErrorCode::InvalidRequest, "{api:?}");
    let issues = api.details.as_ref().unwrap()["issues"].to_string();
    assert!(issues.contains("placement.cpus") && issues.contains("whole CPUs"), "{issues}");
    seen.add(api);
    let long = client
        .create_box(
            &with(
                Placement { expires_after_secs: Some(25 * 3600), ..Placement::default() },
                BoxSpec::default(),
            ),
            None,
        )
        .await
        .unwrap_err();
    let issues = long.api().unwrap().details.as_ref().unwrap()["issues"].to_string();
    assert!(issues.contains("90000") && issues.contains("86400"), "both numbers: {issues}");
    let screens = client
        .create_box(
            &with(Placement::default(), BoxSpec { screens: Some(7), ..BoxSpec::default() }),
            None,
        )
        .await
        .unwrap_err();
    assert!(
        screens.api().unwrap().details.as_ref().unwrap()["issues"].to_string().contains("1 to 6")
    );
    if c.cloud == Cloud::Vercel {
        // Vercel sets memory from the CPUs: 3g is no number of CPUs.
        let memory = client
            .create_box(
                &with(
                    Placement { memory: Some("3g".into()), ..Placement::default() },
                    BoxSpec::default(),
                ),
                None,
            )
            .await
            .unwrap_err();
        let api = memory.api().expect("the error shape");
        let issues = api.details.as_ref().unwrap()["issues"].to_string();
        assert!(issues.contains("placement.memory") && issues.contains("per CPU"), "{issues}");
    }
    let profile = client
        .create_box(
            &with(
                Placement::default(),
                BoxSpec { profile: Some("p".into()), ..BoxSpec::default() },
            ),
            None,
        )
        .await
        .unwrap_err();
    assert!(
        profile.api().unwrap().details.as_ref().unwrap()["issues"]
            .to_string()
            .contains("save_state")
    );
    let wayland = client
        .create_box(
            &with(
                Placement::default(),
                BoxSpec {
                    display: Some(holm_proto::guest::Profile::Wayland),
                    ..BoxSpec::default()
                },
            ),
            None,
        )
        .await
        .unwrap_err();
    let issues = wayland.api().unwrap().details.as_ref().unwrap()["issues"].to_string();
    assert!(issues.contains("spec.display") && issues.contains("Wayland"), "{issues}");
    // None of it reached the vendor.
    let after = c.standin.controls().calls.all();
    assert!(after[before..].iter().all(|call| is_read(c.cloud, call)), "{:?}", &after[before..]);
}

/// A Vercel sandbox's current session.
fn session(c: &CloudServer, sandbox: &str) -> String {
    match &c.standin {
        holm_testkit::cloud::Standin::Vercel(s) => s.session_of(sandbox).expect("its session"),
        _ => unreachable!("only Vercel has sessions"),
    }
}

/// Whether a call only reads (every gRPC call is a POST: Modal's by name).
fn is_read(cloud: Cloud, call: &holm_standins::Call) -> bool {
    match cloud {
        Cloud::Modal => {
            let rpc = call.path.rsplit('/').next().unwrap_or_default();
            !rpc.contains("Create") && !rpc.contains("Terminate")
        }
        Cloud::E2b | Cloud::Daytona | Cloud::RuntimeCloud | Cloud::Vercel => call.method == "GET",
    }
}

/// The method of the vendor's reads.
fn read_method(cloud: Cloud) -> &'static str {
    if cloud == Cloud::Modal { "POST" } else { "GET" }
}

/// The vendor's path for creating a sandbox.
fn create_path(cloud: Cloud) -> &'static str {
    match cloud {
        Cloud::E2b => "/v2/sandboxes",
        Cloud::Daytona => "/api/sandbox",
        Cloud::Modal => "/modal.client.ModalClient/SandboxCreate",
        Cloud::RuntimeCloud => "/v1/sandboxes",
        Cloud::Vercel => "/api/v3/sandboxes",
    }
}

async fn a_box_made_through_a_429_and_a_500(c: &CloudServer) -> String {
    let path = create_path(c.cloud);
    c.standin.controls().faults.inject(Fault::new(path, 429, 1).method("POST").retry_after(1));
    c.standin.controls().faults.inject(Fault::new(path, 500, 1).method("POST"));
    let id = c.new_box().await;
    let creates: Vec<u16> = c
        .standin
        .controls()
        .calls
        .to("POST", path)
        .into_iter()
        .filter(|call| call.path == path)
        .map(|call| call.status)
        .collect();
    assert_eq!(&creates[..2], [429, 500], "{creates:?}");
    assert_eq!(
        creates.len(),
        3,
        "after the 500 holm looked for the sandbox, then made one: {creates:?}"
    );
    // One sandbox, labelled with the box.
    let sandbox = c.sandbox_of(&id).await;
    assert!(c.standin.has_sandbox(&sandbox));
    id
}

async fn the_bridge_is_reached_through_the_vendors_proxy(
    c: &CloudServer,
    id: &str,
    seen: &mut Seen,
) {
    let b = c.server.client.boxed(id);
    // The bridge is reached through the vendor's proxy: with its headers
    // the browser's DevTools answer; without the proxy's token, the proxy
    // refuses before the bridge sees anything.
    let access = b.bridge(None).await.expect("bridge access");
    let http =
        reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let version = format!("{}/json/version", access.http_url);
    let mut with = http.get(&version);
    for (k, v) in &access.headers {
        with = with.header(k, v);
    }
    let answer = with.send().await.expect("the bridge through the proxy");
    assert_eq!(answer.status(), 200);
    let v: serde_json::Value = answer.json().await.unwrap();
    assert!(v["Browser"].as_str().unwrap_or("").contains("Chrom"), "{v}");
    let only_auth = http
        .get(&version)
        .header("Authorization", &access.headers["Authorization"])
        .send()
        .await
        .unwrap();
    let refused = only_auth.status().as_u16();
    match c.cloud {
        Cloud::E2b => {
            assert!(refused == 403 || refused == 400, "E2B's proxy refused with {refused}")
        }
        Cloud::Daytona => assert_eq!(refused, 307, "Daytona's proxy sends a browser to log in"),
        // Modal's tunnels and Vercel's routes have no gate of their own: the
        // bridge's secret is the only header, and without it the bridge
        // refuses.
        Cloud::Modal | Cloud::Vercel => {
            assert_eq!(refused, 200, "the bridge's secret alone opens it");
            assert_eq!(access.headers.len(), 1, "{:?}", access.headers.keys());
            let bare = http.get(&version).send().await.unwrap().status().as_u16();
            assert_eq!(bare, 401, "the bridge without its secret");
        }
        Cloud::RuntimeCloud => assert_eq!(refused, 401, "a private preview wants its token"),
    }
    let info = c.server.client.get_box(id, None).await.unwrap();
    seen.add(&info);
    let shown = serde_json::to_string(&info).unwrap();
    let token =
        access.headers.iter().find(|(k, _)| k.as_str() != "Authorization").map(|(_, v)| v.clone());
    if let Some(token) = token.filter(|t| t.len() > 8) {
        assert!(!shown.contains(&token), "the box's details show the proxy's token");
    }
}

async fn pause_keeps_memory_where_the_vendor_can(c: &CloudServer, id: &str) {
    let client = &c.server.client;
    let b = client.boxed(id);
    let can = client.runtime(c.cloud.name()).await.unwrap().can;
    if !can.pause {
        let e = client.pause_box(id).await.unwrap_err();
        assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::Unsupported));
        return;
    }
    let pid = b.exec(&["sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo $!"]).await.unwrap().stdout;
    let paused = client.pause_box(id).await.expect("pause");
    assert_eq!(paused.state, BoxState::Paused);
    let sandbox = c.sandbox_of(id).await;
    if let holm_testkit::cloud::Standin::E2b(s) = &c.standin {
        assert_eq!(s.is_paused(&sandbox), Some(true));
    }
    let again = client.pause_box(id).await.expect("pausing a paused box answers it");
    assert_eq!(again.state, BoxState::Paused);
    let resumed = client.resume_box(id).await.expect("resume");
    assert_eq!(resumed.state, BoxState::Running);
    let alive = b.exec(&["kill", "-0", pid.trim()]).await.unwrap();
    assert_eq!(alive.exit_code, Some(0), "the process lived through the pause");
}

async fn a_new_key_moves_to_the_running_box(c: &CloudServer, id: &str, seen: &mut Seen) -> String {
    let new_key = format!("{}_rotated_{}", &c.standin.key()[..3], holm::ids::new_secret());
    c.standin.controls().keys.add(&new_key);
    let info = c
        .server
        .client
        .change_runtime(
            c.cloud.name(),
            &ChangeRuntime { api_key: Some(new_key.clone()), ..ChangeRuntime::default() },
        )
        .await
        .expect("replace the key");
    assert_eq!(info.key_version, Some(2));
    seen.add(&info);
    c.standin.controls().keys.revoke(c.standin.key());
    // The box answers, and the vendor takes calls about it with the new key
    // only: the old one is revoked.
    let b = c.server.client.boxed(id);
    assert_eq!(b.exec(&["echo", "still here"]).await.unwrap().stdout, "still here\n");
    let sandbox = c.sandbox_of(id).await;
    let deadline_path = match c.cloud {
        Cloud::E2b => format!("/sandboxes/{sandbox}/timeout"),
        Cloud::Daytona => format!("/api/sandbox/{sandbox}/autostop/"),
        // Modal cannot move a timeout: holm checks the sandbox is there.
        Cloud::Modal => "/modal.client.ModalClient/SandboxWait".to_owned(),
        Cloud::RuntimeCloud => format!("/v1/sandboxes/{sandbox}:extend"),
        Cloud::Vercel => {
            format!("/api/v2/sandboxes/sessions/{}/extend-timeout", session(c, &sandbox))
        }
    };
    c.standin.controls().faults.inject(Fault::new(&deadline_path, 500, 1));
    let extended =
        c.server.client.extend_box(id, 600).await.expect("extend with the new key, through a 500");
    seen.add(&extended);
    let calls = c.standin.controls().calls.to("POST", &deadline_path);
    let statuses: Vec<u16> = calls.iter().map(|call| call.status).collect();
    assert!(
        statuses.contains(&500) && statuses.iter().any(|s| (200..300).contains(s)),
        "{statuses:?}"
    );
    assert!(!statuses.contains(&401), "a call went with the revoked key: {statuses:?}");
    new_key
}

async fn a_restart_takes_the_box_back(c: &mut CloudServer, id: &str) {
    c.server.restart().await;
    let info = c.server.client.get_box(id, None).await.unwrap();
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    let b = c.server.client.boxed(id);
    assert_eq!(b.exec(&["echo", "taken back"]).await.unwrap().stdout, "taken back\n");

    // The store loses the box: the vendor's metadata finds it again, with
    // its secret read back from the vendor.
    c.server.stop().await;
    let record = c.server.state_dir.join(format!("boxes/{id}.json"));
    std::fs::remove_file(&record).expect("lose the box's record");
    c.server.start_again().await;
    let info = c.server.client.get_box(id, None).await.expect("adopted by its labels");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    let b = c.server.client.boxed(id);
    assert_eq!(b.exec(&["echo", "adopted"]).await.unwrap().stdout, "adopted\n");
}

async fn a_vendor_that_does_not_answer_leaves_the_box_unreachable(c: &mut CloudServer, id: &str) {
    let sandbox = c.sandbox_of(id).await;
    let read = match c.cloud {
        Cloud::E2b => format!("/sandboxes/{sandbox}"),
        Cloud::Daytona => format!("/api/sandbox/{sandbox}"),
        Cloud::Modal => {
            let _ = sandbox;
            "/modal.client.ModalClient/SandboxTagsGet".to_owned()
        }
        Cloud::RuntimeCloud => format!("/v1/sandboxes/{sandbox}"),
        Cloud::Vercel => format!("/api/v2/sandboxes/{sandbox}"),
    };
    c.server.stop().await;
    c.standin.controls().faults.inject(Fault::new(&read, 503, 5).method(read_method(c.cloud)));
    c.server.start_again().await;
    let info = c.server.client.get_box(id, None).await.unwrap();
    assert_eq!(info.state, BoxState::Unreachable, "{info:?}");
    let reason = info.reason.clone().unwrap_or_default();
    assert!(reason.contains("503") && reason.contains("does not answer"), "{reason}");
    // The vendor answers again: the box is taken back.
    c.server.service.retake_unreachable().await;
    let info = c.server.client.get_box(id, None).await.unwrap();
    assert_eq!(info.state, BoxState::Running, "{info:?}");
}

async fn the_vendor_ends_the_box_at_its_deadline_while_holmd_is_stopped(
    c: &mut CloudServer,
    id: &str,
) {
    let sandbox = c.sandbox_of(id).await;
    c.server.stop().await;
    // The box lives an hour, extended by ten minutes; the vendor's clock
    // passes that (Daytona counts it from the last activity).
    c.standin.controls().clock.advance(3600 + 600 + 180);
    c.standin.reap_now().await;
    eventually(Duration::from_secs(30), "the vendor to end the sandbox", || async {
        (!c.standin.has_sandbox(&sandbox)).then_some(())
    })
    .await;
    c.server.start_again().await;
    let info = c.server.client.get_box(id, None).await.unwrap();
    assert_eq!(info.state, BoxState::Removed, "{info:?}");
    assert!(info.reason.unwrap_or_default().contains("gone"));
}

async fn an_invalid_key_gives_a_clear_error(c: &CloudServer, seen: &mut Seen) -> String {
    // The runtimes file points only the vendor's own runtime at the
    // stand-in (another account would reach the real vendor), so the bad
    // key goes on that runtime.
    let bad_key = format!("{}_{}", &c.standin.key()[..3], "0".repeat(40));
    let info = c
        .server
        .client
        .change_runtime(
            c.cloud.name(),
            &ChangeRuntime { api_key: Some(bad_key.clone()), ..ChangeRuntime::default() },
        )
        .await
        .expect("set a bad key");
    assert_eq!(info.state, RuntimeState::Unavailable, "{info:?}");
    // Vercel refuses a token it does not know with 403 (`invalidToken`).
    let refused = if c.cloud == Cloud::Vercel { "403" } else { "401" };
    let reason = info.reason.clone().unwrap_or_default();
    assert!(reason.contains(refused), "{reason}");
    seen.add(&info);
    let e = c.server.client.create_box(&c.request(), Some(120)).await;
    let shown = match e {
        Ok(info) => {
            assert_eq!(info.state, BoxState::Failed, "{info:?}");
            seen.add(&info);
            info.reason.unwrap_or_default()
        }
        Err(e) => {
            let api = e.api().expect("the error shape").clone();
            seen.add(&api);
            api.message
        }
    };
    assert!(shown.contains(refused), "{shown}");
    bad_key
}

async fn no_key_anywhere(c: &CloudServer, keys: &[String], seen: &Seen, box_id: &str) {
    let traces = c.server.client.traces(box_id, None, None).await.expect("traces");
    let traces = serde_json::to_string(&traces).unwrap();
    let logs = String::from_utf8_lossy(&logs().lock().unwrap()).into_owned();
    let mut store = String::new();
    for entry in walk(&c.server.state_dir) {
        store.push_str(&String::from_utf8_lossy(&std::fs::read(entry).unwrap_or_default()));
    }
    for key in keys {
        assert!(!logs.contains(key.as_str()), "a key reached the log");
        assert!(!traces.contains(key.as_str()), "a key reached the traces");
        assert!(!store.contains(key.as_str()), "a key is in the store in the clear");
        for answer in &seen.0 {
            assert!(!answer.contains(key.as_str()), "a key reached an answer: {answer}");
        }
    }
    assert!(logs.contains("vendor"), "the scan read no vendor log at all");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

/// holm called none of the routes the vendor's spec marks deprecated or no
/// longer lists (the stand-in serves them for older SDKs): each would be
/// the first to go.
fn no_deprecated_route(c: &CloudServer) {
    let deprecated: Vec<String> = c
        .standin
        .controls()
        .calls
        .all()
        .iter()
        .filter_map(|call| {
            let instead = match c.cloud {
                Cloud::E2b => holm_standins::e2b::deprecated(call),
                Cloud::Daytona => holm_standins::daytona::deprecated(call),
                Cloud::Modal | Cloud::RuntimeCloud | Cloud::Vercel => None,
            };
            instead.map(|i| format!("{} {} (instead: {i})", call.method, call.path))
        })
        .collect();
    assert!(deprecated.is_empty(), "holm called deprecated routes: {deprecated:#?}");
}

async fn scenario(cloud: Cloud) {
    let _ = logs();
    if !e2e_enabled().await {
        return;
    }
    holm_testkit::ensure_image().await;
    let mut c = cloud.server().await;
    let mut seen = Seen::default();
    let runtime = c.server.client.runtime(cloud.name()).await.unwrap();
    assert_eq!(runtime.state, RuntimeState::Available);
    assert_eq!(runtime.place, holm_proto::host::Place::Remote);
    seen.add(&runtime);

    limits_come_before_anything_starts(&c, &mut seen).await;
    let id = a_box_made_through_a_429_and_a_500(&c).await;
    the_bridge_is_reached_through_the_vendors_proxy(&c, &id, &mut seen).await;
    pause_keeps_memory_where_the_vendor_can(&c, &id).await;
    let rotated = a_new_key_moves_to_the_running_box(&c, &id, &mut seen).await;
    a_restart_takes_the_box_back(&mut c, &id).await;
    a_vendor_that_does_not_answer_leaves_the_box_unreachable(&mut c, &id).await;
    the_vendor_ends_the_box_at_its_deadline_while_holmd_is_stopped(&mut c, &id).await;
    a_removed_box_is_deleted_at_the_vendor(&c).await;
    let bad = an_invalid_key_gives_a_clear_error(&c, &mut seen).await;
    let keys = vec![c.standin.key().to_owned(), rotated, bad];
    no_key_anywhere(&c, &keys, &seen, &id).await;
    no_deprecated_route(&c);
    the_vendors_sdk_makes_the_calls_holm_made(&c, &keys[0], &keys[1]).await;
}

/// Removing a box deletes its sandbox at the vendor (the call the
/// contract trace compares with the SDK's delete). The box answers once
/// its desktop does, not waiting for Chromium.
async fn a_removed_box_is_deleted_at_the_vendor(c: &CloudServer) {
    let mut request = c.request();
    request.spec.ready = Some(holm_proto::host::Ready::Desktop);
    let info = c.server.client.create_box(&request, Some(900)).await.expect("create a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    let sandbox = c.sandbox_of(&info.id).await;
    let removed = c.server.client.remove_box(&info.id).await.expect("remove the box");
    assert_eq!(removed.state, BoxState::Removed, "{removed:?}");
    assert!(!c.standin.has_sandbox(&sandbox), "the vendor still runs the removed box's sandbox");
}

/// The contract trace ([`traces`]): the vendor's own SDK (its script in
/// `holm-standins`) runs its create, read, list, timeout, pause and resume
/// (or stop and start) and delete against the stand-in holm used, with the
/// key that holds now; holm's calls and the SDK's are then compared.
/// Runtime Cloud has no SDK: holm's calls are checked against its
/// documented contract instead ([`traces::check_documented`]). Modal's
/// calls are gRPC: its stand-in traces each request message's set fields
/// by their proto names (a map's keys already read as `name.*`, so no
/// `maps`); its client runs with its own setting `sandbox_v2` off
/// (`MODAL_SANDBOX_V2=0`), since holm's sandboxes are Modal's V1
/// (`SandboxCreate`), and builds on the base image the engine has.
async fn the_vendors_sdk_makes_the_calls_holm_made(c: &CloudServer, old_key: &str, key: &str) {
    let mut extra: Vec<(String, String)> = Vec::new();
    let (script, maps): (&str, &[&str]) = match c.cloud {
        Cloud::E2b => ("e2b_sdk.py", &["metadata", "envVars"]),
        Cloud::Daytona => ("daytona_sdk.py", &["labels", "env"]),
        Cloud::Vercel => ("vercel_sdk.mjs", &["env", "tags"]),
        Cloud::RuntimeCloud => {
            let calls = c.standin.controls().calls.all();
            traces::check_documented(c.cloud.name(), &calls, &["labels", "env"]);
            return;
        }
        Cloud::Modal => {
            extra.push(("MODAL_SANDBOX_V2".into(), "0".into()));
            extra.push(("HOLM_BASE_IMAGE".into(), holm::image::BASE_IMAGE.into()));
            ("modal_sdk.py", &[])
        }
    };
    let env = c
        .standin
        .env()
        .into_iter()
        .map(|(k, v)| if v == old_key { (k, key.to_owned()) } else { (k, v) })
        .chain(extra)
        .collect();
    let run = holm_standins::sdk::run(script, env).await;
    assert!(
        run.ok,
        "the vendor's SDK failed against the stand-in:\n{}\n{}",
        run.stdout, run.stderr
    );
    traces::check(c.cloud.name(), &c.standin.controls().calls.all(), maps);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boxes_at_e2b_through_its_api_and_proxy() {
    scenario(Cloud::E2b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boxes_at_daytona_through_its_api_and_proxy() {
    scenario(Cloud::Daytona).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boxes_at_modal_through_its_grpc_api_and_tunnels() {
    scenario(Cloud::Modal).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boxes_at_runtime_cloud_through_its_api_and_previews() {
    scenario(Cloud::RuntimeCloud).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boxes_at_vercel_through_its_api_registry_and_routes() {
    scenario(Cloud::Vercel).await;
}
