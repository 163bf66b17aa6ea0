//! The browser in real boxes on Docker, through holmd: the Chromium bridge
//! with a real Playwright client, every page tool (the tab's history too), a
//! login moved between boxes with save_state/load_state, a browser profile
//! that outlives its box, and a
//! new bridge secret when a restarted server takes a box back. Pages are
//! served from inside the box by a small Perl server (Perl is in every Debian
//! image); nothing reaches outside the machine.

use std::time::Duration;

use holm_client::{BoxClient, Client};

use holm_proto::ErrorCode;
use holm_proto::guest::{
    ClickRequest, EvaluateRequest, OpenTab, PageImageFormat, PageScreenshotOptions, ProcessStart,
    WaitRequest,
};
use holm_proto::host::{BoxSpec, BoxState, CreateBox};
use holm_testkit::gate::{GATE_HEADER, Gated};
use holm_testkit::matrix::{Engine, Target};
use holm_testkit::{SERVE_PL, TestServer, e2e_enabled, eventually, node_clients};
use serde_json::Value;

const PAGE: &str = r#"<!doctype html>
<html><head><title>Holm e2e page</title></head><body>
<h1>Served from inside the box</h1>
<button id="go" onclick="document.getElementById('out').textContent = 'clicked ' + (++window.clicks)">Go</button>
<p id="out">not yet</p>
<input id="name" onkeydown="if (event.key === 'Enter') document.getElementById('out').textContent = 'enter:' + this.value">
<div id="later"></div>
<div style="height: 2500px"></div>
<script>
  window.clicks = 0;
  setTimeout(() => { document.getElementById('later').innerHTML = '<b class="late">late</b>'; }, 200);
</script>
</body></html>"#;

const LOGIN: &str = r#"<!doctype html><title>Login</title><script>
  document.cookie = 'session=s3ss10n; max-age=86400; path=/';
  localStorage.setItem('user', 'alice');
</script><p>logged in</p>"#;

const CHECK: &str = r#"<!doctype html><title>Check</title><p id="who"></p><script>
  document.getElementById('who').textContent = 'user=' + localStorage.getItem('user') + ' cookie=' + document.cookie;
</script>"#;

const PORT: u16 = 8000;

fn origin() -> String {
    format!("http://127.0.0.1:{PORT}")
}

// The browser's own behaviours on both profiles, on Docker (the bridge and
// a page tool run on every runtime in the shared suite, core.rs); browser
// profiles on both engines' volumes.
holm_testkit::suite!(
    playwright_connects_through_the_bridge_with_the_secret_or_a_ticket_and_not_without:
    docker [x11, wayland],
);
holm_testkit::suite!(each_page_tool_works_through_holmd: docker [x11, wayland]);
holm_testkit::suite!(a_browser_profile_survives_its_box_and_is_kept_by_one_box_at_a_time:
    docker [x11],
    podman [x11],
);

/// A box of the target's profile with the browser.
async fn desktop(client: &Client, target: Target) -> String {
    new_box(client, BoxSpec { display: Some(target.display), ..BoxSpec::default() }).await
}

async fn new_box(client: &Client, spec: BoxSpec) -> String {
    let info = client
        .create_box(&CreateBox { spec, ..CreateBox::default() }, Some(600))
        .await
        .expect("create a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    info.id
}

/// Writes the pages and starts the Perl server in the box; waits until it
/// answers.
async fn serve(b: &BoxClient, pages: &[(&str, &str)]) {
    b.write_file("/tmp/site/serve.pl", SERVE_PL.as_bytes().to_vec(), None).await.expect("write");
    for (name, html) in pages {
        b.write_file(&format!("/tmp/site/{name}"), html.as_bytes().to_vec(), None)
            .await
            .expect("write a page");
    }
    b.start_process(&ProcessStart {
        argv: Some(vec![
            "perl".into(),
            "/tmp/site/serve.pl".into(),
            PORT.to_string(),
            "/tmp/site".into(),
        ]),
        ..ProcessStart::default()
    })
    .await
    .expect("start the site");
    eventually(Duration::from_secs(20), "the site in the box", || async {
        let probe = format!("IO::Socket::INET->new('127.0.0.1:{PORT}') or exit 1");
        let r = b.exec(&["perl", "-MIO::Socket::INET", "-e", &probe]).await.ok()?;
        (r.exit_code == Some(0)).then_some(())
    })
    .await;
}

/// Runs the Playwright client; answers its JSON line and whether it succeeded.
async fn playwright(endpoint: &str, headers: &Value, page_url: &str) -> (bool, Value) {
    let dir = node_clients();
    let out = tokio::process::Command::new("node")
        .arg(dir.join("connect.mjs"))
        .args([endpoint, &headers.to_string(), page_url])
        .current_dir(&dir)
        .output()
        .await
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    let v: Value = serde_json::from_str(line).unwrap_or_else(|_| {
        panic!("node printed no JSON: {stdout}\nstderr: {}", String::from_utf8_lossy(&out.stderr))
    });
    (out.status.success(), v)
}

async fn playwright_connects_through_the_bridge_with_the_secret_or_a_ticket_and_not_without(
    target: Target,
) {
    let server = target.server().await;
    let id = desktop(&server.client, target).await;
    let b = server.client.boxed(&id);
    serve(&b, &[("index.html", PAGE)]).await;
    let page_url = format!("{}/", origin());
    b.navigate(&page_url).await.expect("navigate");

    // The box shows where its bridge is, but no credential.
    let info = server.client.get_box(&id, None).await.unwrap();
    let bridge_url = info.bridge_url.clone().expect("a running box has a bridge");
    assert!(bridge_url.starts_with("http://127.0.0.1:"), "{bridge_url}");
    let access = b.bridge(None).await.expect("bridge access");
    assert_eq!(access.http_url, bridge_url);
    let auth = &access.headers["Authorization"];
    let bridge_secret = auth.strip_prefix("Bearer ").unwrap();
    assert!(bridge_secret.len() >= 32);
    let shown = serde_json::to_string(&info).unwrap();
    assert!(!shown.contains(bridge_secret), "the box's details show the bridge secret");

    // Playwright with the header: reads the title, clicks the button, and the
    // click happened in the box's page.
    let headers = serde_json::json!({ "Authorization": auth });
    let (ok, v) = playwright(&access.http_url, &headers, &page_url).await;
    assert!(ok, "{v}");
    assert_eq!(v["title"], "Holm e2e page");
    assert_eq!(v["out"], "clicked 1");
    let seen = b.evaluate("document.getElementById('out').textContent").await.unwrap();
    assert_eq!(seen.value, "clicked 1");

    // The same client without the secret, or with a wrong one, is refused
    // and nothing reaches the page.
    for headers in [serde_json::json!({}), serde_json::json!({"Authorization": "Bearer nope"})] {
        let (ok, v) = playwright(&access.http_url, &headers, &page_url).await;
        assert!(!ok, "{v}");
        assert!(v["error"].as_str().unwrap().contains("401"), "{v}");
    }
    let r = reqwest::get(format!("{}/json/version", access.http_url)).await.unwrap();
    assert_eq!(r.status(), 401);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unauthorized");
    assert_eq!(b.evaluate("window.clicks").await.unwrap().value, 1);

    // With a ticket URL and no headers: it works, once.
    let (ok, v) = playwright(&access.ticket_url, &serde_json::json!({}), &page_url).await;
    assert!(ok, "{v}");
    assert_eq!(v["out"], "clicked 2");
    let (ok, v) = playwright(&access.ticket_url, &serde_json::json!({}), &page_url).await;
    assert!(!ok, "a used ticket opened another connection: {v}");
    // A new ticket each time the bridge is asked for; the secret stays.
    let again = b.bridge(Some(30)).await.unwrap();
    assert_ne!(again.ticket_url, access.ticket_url);
    assert_eq!(again.headers, access.headers);
    let (ok, v) = playwright(&again.ticket_url, &serde_json::json!({}), &page_url).await;
    assert!(ok, "{v}");
    assert_eq!(v["out"], "clicked 3");
}

#[tokio::test]
async fn a_box_behind_a_vendors_proxy_is_reached_with_the_endpoints_headers() {
    if !e2e_enabled().await {
        return;
    }
    // Every port of the box is behind a gate that refuses a request without
    // its token, as E2B's proxy does without the traffic token. holmd knows
    // only the endpoints the runtime answers.
    let token = holm::ids::new_secret();
    let gated = std::sync::Arc::new(Gated::new(&token));
    let server = TestServer::start_on(gated.clone()).await;
    let id = new_box(&server.client, BoxSpec::default()).await;
    let b = server.client.boxed(&id);
    // Commands, files and page tools, forwarded through the gate.
    serve(&b, &[("index.html", PAGE)]).await;
    let page_url = format!("{}/", origin());
    assert_eq!(b.navigate(&page_url).await.expect("navigate").title, "Holm e2e page");
    assert_eq!(gated.refused().await, 0, "holmd sent every request with the gate's header");

    // The bridge's access carries the gate's header beside the bridge's own.
    let access = b.bridge(None).await.expect("bridge access");
    assert_eq!(access.headers[GATE_HEADER], token);
    assert!(access.headers["Authorization"].starts_with("Bearer "));
    let shown = server.client.get_box(&id, None).await.unwrap();
    assert_eq!(shown.bridge_url.as_deref(), Some(access.http_url.as_str()));
    assert!(!serde_json::to_string(&shown).unwrap().contains(&token), "{shown:?}");
    // Playwright with both headers: its WebSocket upgrade passes the gate.
    let headers = serde_json::to_value(&access.headers).unwrap();
    let (ok, v) = playwright(&access.http_url, &headers, &page_url).await;
    assert!(ok, "{v}");
    assert_eq!(v["out"], "clicked 1");
    // Without the gate's header the gate refuses it, as the vendor would.
    let auth_only = serde_json::json!({ "Authorization": access.headers["Authorization"] });
    let (ok, v) = playwright(&access.http_url, &auth_only, &page_url).await;
    assert!(!ok, "{v}");
    assert!(gated.refused().await > 0);
}

async fn each_page_tool_works_through_holmd(target: Target) {
    let server = target.server().await;
    let id = desktop(&server.client, target).await;
    let b = server.client.boxed(&id);
    serve(&b, &[("index.html", PAGE), ("two.html", "<title>Two</title><p>second</p>")]).await;

    let r = b.navigate(&format!("{}/", origin())).await.expect("navigate");
    assert_eq!(r.title, "Holm e2e page");
    let text = b.page_text(None).await.unwrap();
    assert!(text.content.contains("Served from inside the box"), "{text:?}");
    let html = b.page_html(None).await.unwrap();
    assert!(html.content.contains(r#"<button id="go""#));

    b.page_click("#go").await.expect("click");
    b.page_click_with(&ClickRequest {
        selector: "#go".into(),
        count: Some(2),
        ..ClickRequest::default()
    })
    .await
    .expect("double click");
    assert_eq!(b.evaluate("window.clicks").await.unwrap().value, 3);
    b.page_fill("#name", "bob").await.expect("fill");
    b.page_type("#name", "by").await.expect("type");
    b.page_press("Enter").await.expect("press");
    assert_eq!(
        b.evaluate("document.getElementById('out').textContent").await.unwrap().value,
        "enter:bobby"
    );
    b.page_wait(".late").await.expect("wait");
    let e = b
        .page_wait_with(&WaitRequest {
            selector: "#never".into(),
            timeout_ms: Some(200),
            ..WaitRequest::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::Timeout));
    let e = b.evaluate("nope.nope").await.unwrap_err();
    let api = e.api().expect("an API error");
    assert_eq!(api.code, ErrorCode::PageError);
    assert!(api.message.contains("nope is not defined"), "{api}");
    let v = b
        .evaluate_with(&EvaluateRequest {
            expression: "Promise.resolve({n: 1 + 1})".into(),
            ..EvaluateRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(v.value, serde_json::json!({"n": 2}));

    let shot = b.page_screenshot(&PageScreenshotOptions::default()).await.unwrap();
    assert_eq!(shot.format, PageImageFormat::Png);
    assert!(shot.bytes.starts_with(b"\x89PNG"));
    let full = b
        .page_screenshot(&PageScreenshotOptions { full_page: Some(true), ..Default::default() })
        .await
        .unwrap();
    assert!(full.height > shot.height && full.height > 2500, "{} vs {}", full.height, shot.height);

    let first = b.tabs().await.unwrap().into_iter().find(|t| t.current).unwrap();
    let two = b
        .open_tab(&OpenTab { url: Some(format!("{}/two.html", origin())), ..OpenTab::default() })
        .await
        .unwrap();
    assert_eq!(two.title, "Two");
    assert_eq!(b.page_text(None).await.unwrap().title, "Two");
    b.activate_tab(&first.id).await.unwrap();
    assert_eq!(b.page_text(None).await.unwrap().title, "Holm e2e page");
    b.close_tab(&two.id).await.unwrap();
    assert!(!b.tabs().await.unwrap().iter().any(|t| t.id == two.id));
    let e = b.close_tab(&two.id).await.unwrap_err();
    assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::NotFound));

    // The tab's history: back to the page before, forward again, the same
    // page loaded again (a new document: what the old one set is gone), and
    // no page past the last one.
    b.navigate(&format!("{}/two.html", origin())).await.expect("navigate");
    let back = b.page_back(None).await.expect("back");
    assert_eq!((back.title.as_str(), back.url), ("Holm e2e page", format!("{}/", origin())));
    assert_eq!(b.page_text(None).await.unwrap().title, "Holm e2e page");
    let forward = b.page_forward(Some(&first.id)).await.expect("forward");
    assert_eq!((forward.title.as_str(), forward.tab.as_str()), ("Two", first.id.as_str()));
    b.evaluate("window.marker = 1").await.unwrap();
    let again = b.page_reload(None).await.expect("reload");
    assert_eq!(again.title, "Two");
    assert_eq!(b.evaluate("typeof window.marker").await.unwrap().value, "undefined");
    let e = b.page_forward(None).await.unwrap_err();
    let api = e.api().expect("an API error");
    assert_eq!(api.code, ErrorCode::Conflict, "{api}");
    assert!(api.message.contains("no page to go forward to"), "{api}");
}

#[tokio::test]
async fn a_login_made_in_one_box_appears_in_another_after_save_and_load() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let (a, b) = tokio::join!(
        new_box(&server.client, BoxSpec::default()),
        new_box(&server.client, BoxSpec::default())
    );
    let (a, b) = (server.client.boxed(&a), server.client.boxed(&b));
    serve(&a, &[("index.html", LOGIN)]).await;
    a.navigate(&format!("{}/", origin())).await.expect("log in on A");

    let state = a.save_state().await.expect("save_state");
    assert!(state.cookies.iter().any(|c| c.name == "session" && c.value == "s3ss10n"), "{state:?}");
    assert_eq!(state.origins.len(), 1);
    assert_eq!(state.origins[0].origin, origin());

    // B has no login; it gets A's without fetching anything from A's site
    // (B's own site, started only afterwards, shows what B's browser holds).
    assert!(b.save_state().await.unwrap().cookies.is_empty());
    let loaded = b.load_state(&state).await.expect("load_state");
    assert_eq!((loaded.cookies, loaded.origins), (state.cookies.len(), 1));
    serve(&b, &[("check.html", CHECK)]).await;
    b.navigate(&format!("{}/check.html", origin())).await.unwrap();
    let who = b.page_text(None).await.unwrap().content;
    assert!(who.contains("user=alice") && who.contains("session=s3ss10n"), "{who}");
}

/// A browser profile lives on the engine's volume (Docker's, podman's).
async fn a_browser_profile_survives_its_box_and_is_kept_by_one_box_at_a_time(target: Target) {
    let server = target.server().await;
    let profile = format!("e2e-{}", &holm::ids::new_secret()[..12]);
    let _volume = RemoveVolume(target.engine, holm::runtime::docker::profile_volume(&profile));
    let spec = BoxSpec { profile: Some(profile.clone()), ..BoxSpec::default() };
    let first = new_box(&server.client, spec.clone()).await;
    let b = server.client.boxed(&first);
    serve(&b, &[("index.html", LOGIN), ("check.html", CHECK)]).await;
    b.navigate(&format!("{}/", origin())).await.expect("log in");

    // A second live box cannot take the profile.
    let e = server
        .client
        .create_box(&target.request(spec.clone(), Default::default()), Some(60))
        .await
        .unwrap_err();
    assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::Conflict), "{e}");

    server.client.remove_box(&first).await.expect("remove the first box");
    let second = new_box(&server.client, spec).await;
    let b = server.client.boxed(&second);
    let state = b.save_state().await.unwrap();
    assert!(state.cookies.iter().any(|c| c.name == "session" && c.value == "s3ss10n"), "{state:?}");
    serve(&b, &[("check.html", CHECK)]).await;
    b.navigate(&format!("{}/check.html", origin())).await.unwrap();
    let who = b.page_text(None).await.unwrap().content;
    assert!(who.contains("user=alice") && who.contains("session=s3ss10n"), "{who}");

    server.client.remove_box(&second).await.unwrap();
}

/// Removes a test's profile volume from its engine when the test ends,
/// however it ends: first any container that still holds it, then the volume.
struct RemoveVolume(Engine, String);

impl Drop for RemoveVolume {
    fn drop(&mut self) {
        use bollard::query_parameters::{
            ListContainersOptionsBuilder, RemoveContainerOptionsBuilder, RemoveVolumeOptions,
        };
        let (engine, volume) = (self.0, self.1.clone());
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                return;
            };
            rt.block_on(async {
                let docker = engine.client();
                let all = ListContainersOptionsBuilder::default().all(true).build();
                for c in docker.list_containers(Some(all)).await.unwrap_or_default() {
                    let holds = c
                        .labels
                        .as_ref()
                        .and_then(|l| l.get(holm::runtime::LABEL_PROFILE))
                        .is_some_and(|p| holm::runtime::docker::profile_volume(p) == volume);
                    if let (true, Some(id)) = (holds, c.id) {
                        let force = RemoveContainerOptionsBuilder::default().force(true).build();
                        let _ = docker.remove_container(&id, Some(force)).await;
                    }
                }
                let _ = docker.remove_volume(&volume, None::<RemoveVolumeOptions>).await;
            });
        })
        .join();
    }
}

#[tokio::test]
async fn a_server_that_takes_a_box_back_gives_its_bridge_a_new_secret() {
    if !e2e_enabled().await {
        return;
    }
    let mut server = TestServer::start().await;
    let id = new_box(&server.client, BoxSpec::default()).await;
    let before = server.client.boxed(&id).bridge(None).await.expect("bridge");
    let version = format!("{}/json/version", before.http_url);
    let old = before.headers["Authorization"].clone();
    let http = holm_client::client_builder().no_proxy().build().unwrap();
    assert_eq!(
        http.get(&version).header("authorization", &old).send().await.unwrap().status(),
        200
    );

    server.restart().await;
    let after = server.client.boxed(&id).bridge(None).await.expect("bridge after the restart");
    let new = after.headers["Authorization"].clone();
    assert_ne!(old, new);
    assert_eq!(after.http_url, before.http_url, "the box kept running, on the same ports");
    assert_eq!(
        http.get(&version).header("authorization", &old).send().await.unwrap().status(),
        401
    );
    assert_eq!(
        http.get(&version).header("authorization", &new).send().await.unwrap().status(),
        200
    );
}

/// Not a test: the latency of `Runtime.evaluate` through the bridge from the
/// host. Run it by hand:
///
/// `HOLM_E2E=1 cargo test -p holm-e2e --test browser -- --ignored --nocapture bridge_latency`
#[tokio::test]
#[ignore = "a benchmark, run by hand"]
async fn bridge_latency() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let id = new_box(&server.client, BoxSpec::default()).await;
    let b = server.client.boxed(&id);
    let access = b.bridge(None).await.unwrap();
    let tab = b.tabs().await.unwrap().into_iter().find(|t| t.current).unwrap();
    let host = access.http_url.trim_start_matches("http://");
    let ws = format!("ws://{host}/devtools/page/{}", tab.id);
    let measure = |url: String| {
        let auth = access.headers["Authorization"].clone();
        async move {
            let mut req = url.into_client_request().unwrap();
            req.headers_mut().insert("authorization", auth.parse().unwrap());
            let (mut s, _) =
                tokio_tungstenite::connect_async_with_config(req, None, true).await.unwrap();
            let mut times = Vec::new();
            for id in 0..2200u64 {
                let msg = serde_json::json!({"id": id, "method": "Runtime.evaluate",
                    "params": {"expression": "1 + 1", "returnByValue": true}});
                let t = std::time::Instant::now();
                s.send(Message::Text(msg.to_string().into())).await.unwrap();
                loop {
                    if let Some(Ok(Message::Text(t))) = s.next().await
                        && serde_json::from_str::<Value>(&t).unwrap()["id"] == id
                    {
                        break;
                    }
                }
                if id >= 200 {
                    times.push(t.elapsed());
                }
            }
            times.sort();
            let p = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
            (p(0.5), p(0.9), p(0.99))
        }
    };
    let (p50, p90, p99) = measure(ws).await;
    eprintln!(
        "Runtime.evaluate through the bridge (page target, 2000 calls): p50 {p50:?}, p90 {p90:?}, p99 {p99:?}"
    );
}
