//! Viewers end to end, on the real engine and the real image, on both
//! display profiles: `GET /v1/boxes/{id}` shows each screen's viewer and
//! takeover URLs; through holmd (no server token, the URL's own) a page
//! loads with noVNC and an RFB client over WebSocket sees the box's screen;
//! watch-only input is dropped where the stream is served and takeover
//! input lands, holding the agent's input until the person hands back; a
//! revoked URL and a stopped-and-started box's old URL open nothing; the
//! viewer policy is checked, `bind: any` publishes with a token, and holmd
//! serves viewers behind a real nginx set up as the deploy guide says.

use std::time::Duration;

use holm_http::viewer_page;
use holm_proto::host::{BoxInfo, BoxSpec, BoxState, CreateBox};
use holm_proto::viewer::{CreateViewer, ViewerAuth, ViewerBind, ViewerMode, ViewerPolicy};
use holm_proto::{ApiError, ErrorCode};
use holm_testkit::desk::{file_text, stream_shows_the_screen, terminal_writing_to, viewer_session};
use holm_testkit::rfb;
use holm_testkit::{Profile, TestServer, e2e_enabled, ensure_image_of, eventually};
use serde_json::{Value, json};

// A viewer is a box behaviour: both profiles, on Docker (the policy's
// publishing is the host engine's).
holm_testkit::suite!(watch_and_take_over_a_box_through_holmd: docker [x11, wayland]);

async fn new_box(server: &TestServer, display: Profile, policy: Option<ViewerPolicy>) -> BoxInfo {
    ensure_image_of(display).await;
    let request = CreateBox {
        spec: BoxSpec { display: Some(display), policy, ..BoxSpec::default() },
        ..CreateBox::default()
    };
    let info = server.client.create_box(&request, Some(600)).await.expect("create a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    server.client.get_box(&info.id, None).await.expect("get the box")
}

async fn file_text_containing(b: &holm_client::BoxClient, path: &str, want: &str) -> String {
    eventually(Duration::from_secs(20), &format!("{path} to hold {want:?}"), || async {
        let text = String::from_utf8_lossy(&b.read_file(path).await.ok()?).into_owned();
        text.contains(want).then_some(text)
    })
    .await
}

fn http() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// What a hostile box plants where the page once loaded noVNC from (the
/// box's own disk): a script that marks the page and takes its title.
const PAYLOAD: &str =
    ";window.__holmPwned=true;setInterval(function(){document.title='HOLM-PWNED'},5);";

/// The box, as root, appends [`PAYLOAD`] to noVNC's files on its disk (made
/// when the image carries none).
async fn the_box_plants_a_payload(b: &holm_client::BoxClient) {
    let script = format!(
        "set -e; for f in /usr/share/novnc/core/rfb.js /usr/share/novnc/app/ui.js; do \
         mkdir -p \"$(dirname \"$f\")\"; printf '%s\\n' \"{PAYLOAD}\" >> \"$f\"; done; \
         grep -c HOLM-PWNED /usr/share/novnc/core/rfb.js"
    );
    let done = b.exec(&["sh", "-c", &script]).await.expect("the box runs a command");
    assert_eq!(done.exit_code, Some(0), "{done:?}");
}

/// The page, its scripts and noVNC's modules load from `page_url` with no
/// server token, each byte for byte what the server carries (whatever the
/// box holds on its disk), never sniffed; the page runs only its own
/// scripts; the session answers the box and screen with the URL's token.
async fn the_page_loads(page_url: &str, screen: u8) {
    let (page, token) = page_url.split_once("#token=").unwrap_or((page_url, ""));
    let r = http().get(page).send().await.unwrap();
    assert_eq!(r.status(), 200, "{page}");
    let csp = r.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(csp.contains("script-src 'self'") && csp.contains("default-src 'none'"), "{csp}");
    assert!(!csp.contains("unsafe"), "{csp}");
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    assert_eq!(r.text().await.unwrap(), viewer_page::PAGE);
    let base = page.rsplitn(3, '/').nth(2).unwrap();
    for (asset, mime, bytes) in viewer_page::ASSETS {
        let r = http().get(format!("{base}/{asset}")).send().await.unwrap();
        assert_eq!(r.status(), 200, "{base}/{asset}");
        assert_eq!(r.headers()["content-type"], *mime, "{asset}");
        assert_eq!(r.headers()["x-content-type-options"], "nosniff", "{asset}");
        let got = r.bytes().await.unwrap();
        assert!(got.as_ref() == *bytes, "{base}/{asset} is not what the server carries");
    }
    // Nothing else of the box's viewer port is reached under the page.
    for other in ["novnc/app/ui.js", "novnc/vnc.html", "0/view/x", "assets/other.js"] {
        let r = http().get(format!("{base}/{other}")).send().await.unwrap();
        assert_eq!(r.status(), 404, "{base}/{other}");
        assert!(r.headers()["content-type"].to_str().unwrap().starts_with("application/json"));
    }
    let mut session = http().get(format!("{page}/session"));
    if !token.is_empty() {
        session = session.bearer_auth(token);
    }
    let r = session.send().await.unwrap();
    assert_eq!(r.headers()["content-type"], "application/json");
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    let s: Value = r.json().await.unwrap();
    assert_eq!(s["screen"], screen, "{s}");
}

/// Every script a page ran in Chromium (`report["scripts"]`) is one the
/// server carries, byte for byte, under the page's viewer root; all of them
/// ran; a planted payload did not.
fn the_page_ran_only_its_own_scripts(report: &Value, page_url: &str) {
    use sha2::Digest;
    assert_eq!(report["pwned"], false, "a script from the box ran in the page");
    assert!(!report["title"].as_str().unwrap_or("").contains("HOLM-PWNED"), "{}", report["title"]);
    let (page, _) = page_url.split_once('#').unwrap_or((page_url, ""));
    let root = format!("{}/", page.rsplitn(3, '/').nth(2).unwrap());
    let mut ran: Vec<&str> = Vec::new();
    for s in report["scripts"].as_array().expect("the scripts the page ran") {
        let url = s["url"].as_str().unwrap();
        let path = url.strip_prefix(&root).unwrap_or_else(|| panic!("{url} is not under {root}"));
        let (_, bytes) =
            viewer_page::asset(path).unwrap_or_else(|| panic!("{url} is not embedded"));
        let want = format!("{:x}", sha2::Sha256::digest(bytes));
        assert_eq!(
            s["sha256"].as_str(),
            Some(want.as_str()),
            "{url} is not what the server carries"
        );
        ran.push(path);
    }
    ran.sort_unstable();
    ran.dedup();
    let mut all: Vec<&str> = viewer_page::ASSETS
        .iter()
        .filter(|(_, mime, _)| mime.starts_with("text/javascript"))
        .map(|(p, _, _)| *p)
        .collect();
    all.sort_unstable();
    assert_eq!(ran, all, "the page ran every script the server carries, and no other");
}

/// Opens `page_url` in a real headless Chromium (Playwright); with `typing`,
/// clicks the canvas at a screen point and types through the page. Answers
/// the page's report (state, title, first_frame_ms) and its canvas as RGB.
async fn in_chromium(
    page_url: &str,
    size: (u32, u32),
    typing: Option<(i32, i32, &str)>,
) -> (Value, Vec<u8>) {
    let dir = holm_testkit::node_clients();
    let mut args = vec![page_url.to_owned(), size.0.to_string(), size.1.to_string()];
    if let Some((x, y, text)) = typing {
        args.extend([x.to_string(), y.to_string(), text.to_owned()]);
    }
    let out = tokio::process::Command::new("node")
        .arg(dir.join("viewer-page.mjs"))
        .args(&args)
        .current_dir(&dir)
        .output()
        .await
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value =
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|_| {
            panic!(
                "node printed no JSON: {stdout}\nstderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    assert!(out.status.success(), "the page never showed the screen: {v}");
    the_page_ran_only_its_own_scripts(&v, page_url);
    use base64::Engine;
    let png = base64::engine::general_purpose::STANDARD.decode(v["png"].as_str().unwrap()).unwrap();
    let (rgb, _) = decode_rgb(&png);
    (v, rgb)
}

/// A PNG as RGB triples, and its width.
fn decode_rgb(bytes: &[u8]) -> (Vec<u8>, u32) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
    let mut buf = vec![0u8; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let rgb = buf[..info.buffer_size()].chunks(channels).flat_map(|p| [p[0], p[1], p[2]]).collect();
    (rgb, info.width)
}

/// How many of two RGB images' pixels are within `tolerance` on every
/// channel (the page's stream may be compressed with loss).
fn close_pixels(a: &[u8], b: &[u8], tolerance: u8) -> usize {
    a.chunks(3)
        .zip(b.chunks(3))
        .filter(|(p, q)| p.iter().zip(q.iter()).all(|(x, y)| x.abs_diff(*y) <= tolerance))
        .count()
}

/// The viewer page in a real Chromium shows the box's screen: its canvas,
/// scaled back to the screen's size, is the screenshot's pixels.
async fn the_page_shows_the_screen_in_chromium(
    server: &TestServer,
    id: &str,
    page_url: &str,
    size: (u32, u32),
) {
    let (report, canvas) = in_chromium(page_url, size, None).await;
    // Said, not asserted: speed is for `holm bench`.
    eprintln!(
        "viewer page in Chromium: first frame drawn {} ms after navigation began; connected {} ms after goto",
        report["first_frame_ms"], report["connected_ms"]
    );
    assert_eq!(report["state"], "connected", "{report}");
    assert_eq!(report["canvas"], json!([size.0, size.1]), "{report}");
    assert!(report["title"].as_str().unwrap().contains("screen 0"), "{report}");
    let shot = server.client.boxed(id).screenshot(0, &Default::default()).await.unwrap();
    let (screen, _) = decode_rgb(&shot.bytes);
    let pixels = (size.0 * size.1) as usize;
    let close = close_pixels(&canvas, &screen, 24);
    assert!(close * 100 >= pixels * 97, "{close} of {pixels} canvas pixels match the screenshot");
}

fn api_error(e: holm_client::ClientError) -> ApiError {
    match e {
        holm_client::ClientError::Api(e) => e,
        other => panic!("expected an API error, got {other}"),
    }
}

async fn watch_and_take_over_a_box_through_holmd(target: holm_testkit::matrix::Target) {
    let display = target.display;
    let mut server = TestServer::start().await;
    let info = new_box(&server, display, None).await;
    let id = info.id.clone();
    let b = server.client.boxed(&id);

    // Each screen's pair of URLs, on holmd's address, each with a token.
    assert_eq!(info.viewers.len(), 1, "{:?}", info.viewers);
    let pair = &info.viewers[0];
    let prefix = format!("{}/v1/boxes/{id}/viewer/0/", server.url);
    assert!(pair.view_url.starts_with(&format!("{prefix}view#token=vg_")), "{}", pair.view_url);
    assert!(
        pair.takeover_url.starts_with(&format!("{prefix}takeover#token=vg_")),
        "{}",
        pair.takeover_url
    );
    let again = server.client.get_box(&id, None).await.unwrap();
    assert_eq!(again.viewers, info.viewers, "the same URLs until they near their expiry");
    // A hostile box rewrites the noVNC it may hold: the page through holmd
    // runs none of it (checked in the_page_loads and in Chromium below).
    the_box_plants_a_payload(&b).await;
    the_page_loads(&pair.view_url, 0).await;
    let size = (info.screens[0].width, info.screens[0].height);
    the_page_shows_the_screen_in_chromium(&server, &id, &pair.view_url, size).await;

    // The stream through holmd shows the screen.
    let mut watcher = rfb::open(&pair.view_url).await.expect("the watch-only URL is let in");
    let screen = &info.screens[0];
    assert_eq!(
        (u32::from(watcher.width), u32::from(watcher.height)),
        (screen.width, screen.height)
    );
    stream_shows_the_screen(&server.client.boxed(&id), &mut watcher).await;

    // Watch-only input is dropped at the stream; takeover input lands.
    let path = "/tmp/typed.txt";
    let (x, y) = terminal_writing_to(&b, display, "typed", "60x10+100+100", path).await;
    b.click(0, x, y).await.expect("the agent clicks the terminal");
    b.type_text(0, "agent\n").await.expect("the agent types");
    file_text(&b, path, "agent\n").await;
    let xy = |v: i32| u16::try_from(v).unwrap();
    watcher.click(xy(x), xy(y)).await;
    watcher.type_ascii("watched\n").await;
    let mut person = rfb::open(&pair.takeover_url).await.expect("the takeover URL is let in");
    person.click(xy(x), xy(y)).await;
    // The first keys a new sender gives a terminal can be lost: the person
    // types until a line arrives.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let typed = loop {
        person.type_ascii("taken\n").await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        let text =
            String::from_utf8_lossy(&b.read_file(path).await.unwrap_or_default()).into_owned();
        if text.contains("taken\n") {
            break text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the person's typing never arrived: {text:?}"
        );
    };
    assert!(!typed.contains("watched"), "watch-only keys reached the box: {typed:?}");

    // A person in control: the agent's input is refused in the one shape,
    // screenshots keep working, and the box says who and since when.
    let refused = api_error(b.type_text(0, "agent again\n").await.expect_err("refused"));
    assert_eq!(refused.code, ErrorCode::HumanInControl, "{refused:?}");
    assert!(refused.hint.as_deref().unwrap_or("").contains("handed_back"), "{refused:?}");
    b.screenshot(0, &Default::default()).await.expect("screenshots keep working");
    // Nor can it act through the accessibility tree or replace what the
    // person would paste (the review's L2).
    let act = holm_proto::accessibility::NodeAction {
        action: holm_proto::accessibility::NodeVerb::Click,
        node: None,
        role: Some("push button".into()),
        name: Some("Reload".into()),
        value: None,
        screen: Some(0),
        pointer: None,
        sensitive: false,
    };
    let refused_act = api_error(b.accessibility_act(&act).await.expect_err("act refused"));
    assert_eq!(refused_act.code, ErrorCode::HumanInControl, "{refused_act:?}");
    let swap = holm_proto::desk::ClipboardSet {
        text: Some("swapped".into()),
        png_base64: None,
        sensitive: false,
    };
    let refused_clip = api_error(b.set_clipboard(&swap).await.expect_err("clipboard refused"));
    assert_eq!(refused_clip.code, ErrorCode::HumanInControl, "{refused_clip:?}");
    let held = server.client.get_box(&id, None).await.unwrap();
    let control = held.human_in_control.expect("the box says a person is in control");
    assert!(refused.message.contains(&control.since), "{refused:?}");
    let h = server.client.handoff(&id, None).await.unwrap();
    assert_eq!(h.status.state.as_str(), "human_in_control");

    // The page's hand-back button, through holmd: the agent acts again.
    let (_, token) = pair.takeover_url.split_once("#token=").unwrap();
    let r = http()
        .post(format!("{prefix}takeover/control"))
        .bearer_auth(token)
        .json(&json!({"action": "release"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let back = server.client.handoff(&id, Some(5)).await.unwrap();
    assert_eq!(back.status.state.as_str(), "handed_back", "{back:?}");
    b.type_text(0, "agent again\n").await.expect("the agent types again");
    drop(person);
    // A click and typing in a real Chromium through a takeover page land in
    // the box's terminal; the same through the watch-only page do not. The
    // person closes the page: control comes back after the grace period.
    in_chromium(&pair.view_url, size, Some((x, y, "viewpage"))).await;
    let carol = CreateViewer {
        mode: Some(ViewerMode::Control),
        label: Some("carol".into()),
        ..CreateViewer::default()
    };
    let carol = server.client.create_viewer(&id, &carol).await.unwrap();
    in_chromium(&carol.url, size, Some((x, y, "pagetyped"))).await;
    let text = file_text_containing(&b, path, "pagetyped\n").await;
    assert!(!text.contains("viewpage"), "the watch-only page's keys reached the box: {text:?}");
    let back = server.client.handoff(&id, Some(60)).await.unwrap();
    assert_eq!(back.status.state.as_str(), "handed_back", "{back:?}");
    let by = serde_json::to_value(back.status.handed_back.as_ref().unwrap().by).unwrap();
    assert_eq!(by, "disconnected", "{back:?}");
    control_is_in_the_traces(&server, &id, &carol.url).await;

    // Bad input: one error shape, nothing made.
    let before = server.client.viewers(&id).await.unwrap().len();
    let bad = CreateViewer { screen: 3, expires_after_secs: Some(0), ..CreateViewer::default() };
    let e = api_error(server.client.create_viewer(&id, &bad).await.expect_err("refused"));
    assert_eq!(e.code, ErrorCode::InvalidRequest);
    let paths: Vec<String> = serde_json::from_value(e.details.unwrap()["issues"].clone())
        .map(|i: Vec<holm_proto::Issue>| i.into_iter().map(|i| i.path).collect())
        .unwrap();
    assert_eq!(paths, ["screen", "expires_after_secs"]);
    assert_eq!(server.client.viewers(&id).await.unwrap().len(), before);

    // A grant of its own, revoked: its stream closes and it opens nothing.
    let request = CreateViewer {
        mode: Some(ViewerMode::View),
        label: Some("bob".into()),
        ..CreateViewer::default()
    };
    let g = server.client.create_viewer(&id, &request).await.unwrap();
    let mut bob = rfb::open(&g.url).await.expect("a new URL is let in");
    let revoked = server.client.revoke_viewer(&id, &g.id).await.unwrap();
    assert!(revoked.revoked_at.is_some());
    assert!(bob.closed().await.contains("revoked"));
    let refusal = rfb::open(&g.url).await.expect_err("a revoked URL");
    assert_eq!(refusal.status, 401, "{}", refusal.body);

    // Asking for help answers a takeover URL; nobody came yet.
    let asked = server
        .client
        .ask_for_help(
            &id,
            &holm_proto::viewer::AskForHelp { reason: "the captcha".into(), ..Default::default() },
        )
        .await
        .unwrap();
    assert_eq!(asked.status.state.as_str(), "waiting");
    let url = asked.takeover_url.expect("a takeover URL");
    assert!(url.contains("/viewer/0/takeover#token="), "{url}");
    let s = viewer_session(&url).await;
    assert_eq!(s["handoff"]["help"]["reason"], "the captcha", "the page shows the reason: {s}");

    a_revoked_url_stays_revoked(&mut server, &id).await;
    let pair = holm_proto::viewer::ScreenViewers {
        view_url: pair.view_url.replacen(&prefix[..prefix.find("/v1/").unwrap()], &server.url, 1),
        ..pair.clone()
    };

    // A stopped and started box: a new desktop, new URLs; the old open nothing.
    drop(watcher);
    server.client.stop_box(&id).await.unwrap();
    let started = server.client.start_box(&id, Some(300)).await.unwrap();
    assert_eq!(started.state, BoxState::Running);
    let fresh = server.client.get_box(&id, None).await.unwrap();
    assert_ne!(fresh.viewers[0].view_url, pair.view_url);
    let refusal = rfb::open(&pair.view_url).await.expect_err("the earlier desktop's URL");
    assert_eq!(refusal.status, 401, "{}", refusal.body);
    rfb::open(&fresh.viewers[0].view_url).await.expect("the new URL is let in");
    server.client.remove_box(&id).await.expect("remove");
}

/// What a viewer session answers `token` (the status).
async fn session_status(server: &TestServer, id: &str, token: &str) -> u16 {
    let url = format!("{}/v1/boxes/{id}/viewer/0/takeover/session", server.url);
    http().get(url).bearer_auth(token).send().await.unwrap().status().as_u16()
}

/// The review's M1 probe: the shown takeover URL, revoked, stays dead
/// across a GET that shows a new pair, another viewer's config push and a
/// restart of holmd; the record still lists it, revoked.
async fn a_revoked_url_stays_revoked(server: &mut TestServer, id: &str) {
    let shown = server.client.get_box(id, None).await.unwrap().viewers[0].clone();
    let (_, token) = shown.takeover_url.split_once("#token=").unwrap();
    let grant = server
        .client
        .viewers(id)
        .await
        .unwrap()
        .into_iter()
        .find(|g| g.url == shown.takeover_url)
        .expect("the shown takeover URL is listed")
        .id;
    assert_eq!(session_status(server, id, token).await, 200);
    server.client.revoke_viewer(id, &grant).await.unwrap();
    assert_eq!(session_status(server, id, token).await, 401, "revoked");
    let again = server.client.get_box(id, None).await.unwrap().viewers[0].clone();
    assert_ne!(again.takeover_url, shown.takeover_url, "a new shown takeover URL");
    assert_eq!(again.view_url, shown.view_url, "the shown watch-only URL is kept");
    let push = CreateViewer { label: Some("dave".into()), ..CreateViewer::default() };
    server.client.create_viewer(id, &push).await.unwrap();
    assert_eq!(session_status(server, id, token).await, 401, "after another viewer's push");
    let listed = server.client.viewers(id).await.unwrap();
    let g = listed.iter().find(|g| g.id == grant).expect("the revoked grant stays listed");
    assert!(g.revoked_at.is_some(), "{g:?}");
    server.restart().await;
    assert_eq!(session_status(server, id, token).await, 401, "after a restart of holmd");
    let (_, fresh) = again.takeover_url.split_once("#token=").unwrap();
    assert_eq!(session_status(server, id, fresh).await, 200, "the new URL opens after the restart");
}

#[tokio::test]
async fn a_bad_viewer_policy_is_refused_naming_its_field() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let policy = |auth, bind, advertise: Option<&str>| ViewerPolicy {
        auth,
        bind,
        advertise: advertise.map(str::to_owned),
    };
    for (p, field) in [
        (policy(ViewerAuth::None, ViewerBind::Any, Some("127.0.0.1")), "spec.policy.auth"),
        (policy(ViewerAuth::Token, ViewerBind::Any, None), "spec.policy.advertise"),
        (policy(ViewerAuth::Token, ViewerBind::Any, Some("http://x:1/")), "spec.policy.advertise"),
    ] {
        let request = CreateBox {
            spec: BoxSpec { policy: Some(p), ..BoxSpec::default() },
            ..CreateBox::default()
        };
        let e = api_error(server.client.create_box(&request, None).await.expect_err("refused"));
        assert_eq!(e.code, ErrorCode::InvalidRequest);
        assert!(e.details.unwrap().to_string().contains(field), "{field}");
    }
    let r = http()
        .post(format!("{}/v1/boxes", server.url))
        .bearer_auth(&server.token)
        .json(&json!({"spec": {"policy": {"auth": "token", "colour": "red"}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert!(body.to_string().contains("colour"), "{body}");
    assert!(body["error"]["request_id"].is_string());
    assert!(server.client.all_boxes().await.unwrap().is_empty(), "nothing was made");
}

/// The box's traces say who held control and how it came back: the first
/// person (the pair's takeover URL) handing back with the button, then
/// carol leaving the page; never a token.
async fn control_is_in_the_traces(server: &TestServer, id: &str, carol_url: &str) {
    let want = [("taken", None, None), ("returned", None, Some("released"))];
    let then = [("taken", Some("carol"), None), ("returned", Some("carol"), Some("disconnected"))];
    let traces = eventually(Duration::from_secs(60), "control in the traces", || async {
        let page = server.client.traces(id, None, Some(1000)).await.ok()?;
        let control: Vec<Value> = page
            .data
            .iter()
            .filter_map(|t| t.control.as_ref().map(|c| serde_json::to_value(c).unwrap()))
            .collect();
        let kinds: Vec<(String, Option<String>, Option<String>)> = control
            .iter()
            .filter(|c| c["kind"] == "taken" || c["kind"] == "returned")
            .map(|c| {
                let s = |k: &str| c[k].as_str().map(str::to_owned);
                (s("kind").unwrap_or_default(), s("label"), s("by"))
            })
            .collect();
        let expected: Vec<_> = want
            .iter()
            .chain(&then)
            .map(|(k, l, b)| ((*k).to_owned(), l.map(str::to_owned), b.map(str::to_owned)))
            .collect();
        // The pair's grant has no label; only carol's is checked by name.
        let matches = kinds.len() >= 4
            && kinds.iter().zip(&expected).all(|(got, want)| {
                got.0 == want.0 && (want.1.is_none() || got.1 == want.1) && got.2 == want.2
            });
        matches.then_some(page.data)
    })
    .await;
    let t = traces.iter().find(|t| t.control.is_some()).unwrap();
    assert_eq!(t.method, "CONTROL");
    assert!(t.path.starts_with(&format!("/v1/boxes/{id}/viewer/")), "{t:?}");
    let (_, token) = carol_url.split_once("#token=").unwrap();
    let all = serde_json::to_string(&traces).unwrap();
    assert!(!all.contains(token), "a viewer token in the traces");
}

/// The deploy guide's nginx `location` block, from docs/deploy.md (between its
/// `nginx-config` markers), proxying to `upstream` instead of the guide's
/// `127.0.0.1:8080`.
fn guide_location(upstream: &str) -> String {
    let guide = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/deploy.md"),
    )
    .unwrap();
    let (_, rest) =
        guide.split_once("<!-- nginx-config -->").expect("docs/deploy.md's nginx block");
    let (block, _) = rest.split_once("<!-- /nginx-config -->").unwrap();
    let block: String =
        block.lines().filter(|l| !l.starts_with("```")).map(|l| format!("    {l}\n")).collect();
    assert!(block.contains("proxy_pass http://127.0.0.1:8080;"), "{block}");
    block.replace("http://127.0.0.1:8080", &format!("http://{upstream}"))
}

/// The nginx block the end-to-end test runs is in docs/deploy.md, in the form
/// it reads, on every run (with or without `HOLM_E2E`).
#[test]
fn docs_deploy_md_holds_the_nginx_block_the_tests_run() {
    let block = guide_location("127.0.0.1:9");
    assert!(block.contains("proxy_pass http://127.0.0.1:9;"), "{block}");
    assert!(block.contains("proxy_set_header Upgrade $http_upgrade;"), "{block}");
    // Uploads over nginx's 1 MiB default, and streams not held in a buffer
    // (review L8).
    for line in ["client_max_body_size 1g;", "proxy_buffering off;", "proxy_request_buffering off;"]
    {
        assert!(block.contains(line), "{line}: {block}");
    }
}

/// nginx from Debian's package, set up as the deploy guide shows (its
/// block, read from docs/deploy.md), in front of `upstream` on a free loopback
/// port; stopped when dropped.
struct Nginx {
    child: std::process::Child,
    bin: &'static str,
    conf: std::path::PathBuf,
    url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // `-s quit` asks the master to end its workers and then itself; a
        // killed master would leave its worker running (holding the
        // listening port, and any output pipe it inherited).
        let quit = std::process::Command::new(self.bin)
            .args(["-c", self.conf.to_str().unwrap_or_default(), "-s", "quit"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        if !quit.is_ok_and(|s| s.success()) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

fn nginx_at(port: u16, upstream: &str) -> Nginx {
    let bin = ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let bin = bin.expect("nginx is installed (.ci/setup installs Debian's nginx-light)");
    let dir = tempfile::tempdir().unwrap();
    let upstream = upstream.trim_start_matches("http://");
    let conf = format!(
        "daemon off;\nworker_processes 1;\npid {dir}/nginx.pid;\nerror_log {dir}/error.log;\n\
         events {{ worker_connections 64; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {dir}/body;\n  proxy_temp_path {dir}/proxy;\n\
           fastcgi_temp_path {dir}/fcgi;\n  uwsgi_temp_path {dir}/uwsgi;\n  scgi_temp_path {dir}/scgi;\n\
           server {{\n    listen 127.0.0.1:{port};\n{location}  }}\n}}\n",
        dir = dir.path().display(),
        location = guide_location(upstream),
    );
    let path = dir.path().join("nginx.conf");
    std::fs::write(&path, conf).unwrap();
    let child = std::process::Command::new(bin)
        .args(["-c", path.to_str().unwrap(), "-e", dir.path().join("error.log").to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start nginx");
    Nginx { child, bin, conf: path, url: format!("http://127.0.0.1:{port}"), _dir: dir }
}

#[tokio::test]
async fn viewers_work_behind_nginx_and_bind_any_publishes_with_a_token() {
    if !e2e_enabled().await {
        return;
    }
    // Behind nginx: the URLs name the proxy's address (HOLM_PUBLIC_URL), and
    // the page and the stream pass through it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let public = format!("http://127.0.0.1:{port}");
    let server = TestServer::start_with(|c| c.public_url = Some(public)).await;
    let nginx = nginx_at(port, &server.url);
    eventually(Duration::from_secs(10), "nginx to answer", || async {
        http()
            .get(format!("{}/v1/health", nginx.url))
            .send()
            .await
            .ok()
            .filter(|r| r.status() == 200)
    })
    .await;
    // REST with the token, and /mcp, through the same proxy.
    let proxied = holm_client::Client::new(&nginx.url, Some(&server.token));
    proxied.list_boxes(None, None).await.expect("REST through nginx");
    let r = http()
        .post(format!("{}/mcp", nginx.url))
        .bearer_auth(&server.token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "nginx-test", "version": "1"}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "/mcp through nginx: {}", r.text().await.unwrap());
    let published = ViewerPolicy {
        auth: ViewerAuth::Token,
        bind: ViewerBind::Any,
        advertise: Some("127.0.0.1".into()),
    };
    let info = new_box(&server, Profile::X11, None).await;
    let view = &info.viewers[0].view_url;
    assert!(
        view.starts_with(&format!("{}/v1/boxes/{}/viewer/0/view#token=", nginx.url, info.id)),
        "{view}"
    );
    the_page_loads(view, 0).await;
    let mut v = rfb::open(view).await.expect("the stream through nginx");
    stream_shows_the_screen(&server.client.boxed(&info.id), &mut v).await;
    drop(v);
    server.client.remove_box(&info.id).await.unwrap();

    // bind: any: the viewer port is published on every interface (tests
    // connect on 127.0.0.1 only), its URLs name `advertise`, and a token is
    // needed there too.
    let info = new_box(&server, Profile::X11, Some(published)).await;
    let docker = bollard::Docker::connect_with_defaults().unwrap();
    let c = docker.inspect_container(&format!("holm-{}", info.id), None).await.unwrap();
    let ports = c.host_config.unwrap().port_bindings.unwrap();
    let ip =
        |port: u16| ports[&format!("{port}/tcp")].as_ref().unwrap()[0].host_ip.clone().unwrap();
    assert_eq!(ip(holm_proto::viewer::VIEWER_PORT), "0.0.0.0");
    assert_eq!(
        ip(holm_proto::guest::DEFAULT_GUEST_PORT),
        "127.0.0.1",
        "only the viewer port is published"
    );
    let view = &info.viewers[0].view_url;
    assert!(view.starts_with("http://127.0.0.1:") && view.contains("/0/view#token=vg_"), "{view}");
    assert!(!view.contains("/v1/boxes/"), "{view}");
    let mut v = rfb::open(view).await.expect("the published port lets the token in");
    stream_shows_the_screen(&server.client.boxed(&info.id), &mut v).await;
    let (url, _) = rfb::stream_of(view);
    let refusal = rfb::connect(&url, None).await.expect_err("no token");
    assert_eq!(refusal.status, 401);
    // The guest serves the page's scripts from its binary on its own port too.
    let port_root = view.split("/0/view").next().unwrap();
    let r = http().get(format!("{port_root}/novnc/core/rfb.js")).send().await.unwrap();
    let carried = viewer_page::asset("novnc/core/rfb.js").unwrap().1;
    assert!(r.bytes().await.unwrap().as_ref() == carried, "the guest's noVNC is its own");
    server.client.remove_box(&info.id).await.unwrap();

    an_open_box_is_not_open_through_holmd(&server).await;
}

/// The review's M2 probe: a box whose viewers need no token (`auth: none`,
/// for tools on the server's host) is not open through holmd to whoever
/// knows its id: its session and stream there ask for the server token.
async fn an_open_box_is_not_open_through_holmd(server: &TestServer) {
    let open = ViewerPolicy { auth: ViewerAuth::None, ..ViewerPolicy::default() };
    let info = new_box(server, Profile::X11, Some(open)).await;
    let page = info.viewers[0].takeover_url.clone();
    let path = format!("/v1/boxes/{}/viewer/0/takeover", info.id);
    assert!(page.ends_with(&path), "no token in an open box's URL: {page}");
    let r = http().get(format!("{page}/session")).send().await.unwrap();
    assert_eq!(r.status(), 401, "no credential");
    let r = http().get(format!("{page}/session")).bearer_auth("vg_guess").send().await.unwrap();
    assert_eq!(r.status(), 401, "a wrong credential");
    let r = http().get(format!("{page}/session")).bearer_auth(&server.token).send().await.unwrap();
    assert_eq!(r.status(), 200, "the server token");
    let s: Value = r.json().await.unwrap();
    assert_eq!((s["mode"].as_str(), s["grant"].as_str()), (Some("control"), Some("open")), "{s}");
    let (stream, _) = rfb::stream_of(&page);
    let refusal = rfb::connect(&stream, None).await.expect_err("no credential");
    assert_eq!(refusal.status, 401, "{}", refusal.body);
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut req = stream.as_str().into_client_request().unwrap();
    let h = req.headers_mut();
    h.insert("sec-websocket-protocol", "holm-rfb.v1".parse().unwrap());
    h.insert("authorization", format!("Bearer {}", server.token).parse().unwrap());
    let (ws, _) =
        tokio_tungstenite::connect_async(req).await.expect("the stream with the server token");
    drop(ws);
    server.client.remove_box(&info.id).await.unwrap();
}
