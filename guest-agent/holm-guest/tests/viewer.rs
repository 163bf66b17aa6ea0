//! The viewers against a real guest on both profiles: the RFB stream over
//! WebSocket shows the screen pixel for pixel, watch-only input never
//! reaches the desktop (the stream's server drops it, whatever the client
//! sends), takeover input does and puts a person in control (the agent's
//! input is refused until they hand back), the clipboard goes both ways,
//! and tokens open only their own box, screen and time. The VNC server is
//! not started until the first viewer of its screen asks (`HOLM_VNC=demand`).

// The test process is not the guest: it runs clipboard tools and waits on
// them like any parent. The one-reaper rule (clippy.toml) binds the guest only.
#![allow(clippy::disallowed_methods)]

mod common;

use std::time::Duration;

use common::rfb::{self, Rfb};
use common::{Guest, Options, Profile, desk, eventually};
use holm_http::viewer_token::{self, Claims};
use holm_proto::viewer::ViewerMode;
use serde_json::{Value, json};

/// A guest with VNC, its viewer key set.
async fn guest(p: Profile, box_id: &str) -> (Guest, String) {
    let g = Guest::start(Options { profile: p, vnc: "demand", ..Options::default() }).await;
    let vnc = match p {
        Profile::X11 => "x11vnc",
        Profile::Wayland => "wayvnc",
    };
    // The desktop is ready without its VNC server, which waits, not
    // started, for the first viewer: each stream below starts it.
    let h = g.wait_until(Duration::from_secs(30), |h| h["status"] == "ready").await;
    let servers: Vec<&Value> =
        h["components"].as_array().unwrap().iter().filter(|c| c["name"] == vnc).collect();
    assert!(!servers.is_empty(), "{h}");
    for c in servers {
        assert_eq!((&c["state"], &c["pid"]), (&json!("idle"), &Value::Null), "{h}");
    }
    let key = viewer_token::new_key();
    configure(&g, &key, box_id, &[]).await;
    (g, key)
}

async fn configure(g: &Guest, key: &str, box_id: &str, revoked: &[&str]) {
    let r = g
        .put("/v1/viewers/config")
        .json(&json!({"key": key, "box_id": box_id, "title": "test box", "revoked": revoked, "labels": {"vg_0000000000c1": "alice"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204, "{}", r.text().await.unwrap());
}

fn token(key: &str, box_id: &str, grant: &str, screen: u8, mode: ViewerMode, secs: i64) -> String {
    let expires = u64::try_from(i64::try_from(viewer_token::now_secs()).unwrap() + secs).unwrap();
    viewer_token::mint(key, box_id, &Claims { grant: grant.into(), screen, mode, expires })
}

fn stream_url(g: &Guest, screen: u8, mode: ViewerMode) -> String {
    let m = match mode {
        ViewerMode::View => "view",
        ViewerMode::Control => "takeover",
    };
    format!("{}/{screen}/{m}/rfb", g.viewer_url.replace("http://", "ws://"))
}

async fn open(g: &Guest, key: &str, grant: &str, mode: ViewerMode) -> Rfb {
    rfb::connect(&stream_url(g, 0, mode), Some(&token(key, "box_a", grant, 0, mode, 600)))
        .await
        .expect("the viewer is let in")
}

async fn handoff(g: &Guest) -> Value {
    g.get("/v1/viewers/handoff").send().await.unwrap().json().await.unwrap()
}

async fn agent_clicks(g: &Guest) -> reqwest::Response {
    g.post("/v1/screens/0/input")
        .json(&json!({"actions": [{"type": "move", "x": 700, "y": 700}]}))
        .send()
        .await
        .unwrap()
}

async fn viewer_control(g: &Guest, key: &str, grant: &str, action: &str) -> Value {
    let r = g
        .http
        .post(format!("{}/0/takeover/control", g.viewer_url))
        .bearer_auth(token(key, "box_a", grant, 0, ViewerMode::Control, 600))
        .json(&json!({ "action": action }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}

async fn the_stream_shows_the_screen(p: Profile) {
    let (g, key) = guest(p, "box_a").await;
    // Something to see: bands of colour in a window of the test's own.
    let _w = desk::Window::open(
        &g,
        0,
        (100, 120, 600, 400),
        0x00_20_40_60,
        &[
            (0, 0, 200, 400, 0x00_d0_30_30),
            (200, 0, 200, 400, 0x00_30_c0_40),
            (400, 0, 200, 400, 0x00_30_50_e0),
        ],
    )
    .await;
    let mut v = open(&g, &key, "vg_000000000001", ViewerMode::View).await;
    assert_eq!((v.width, v.height), (1280, 800));
    // The desktop may still be drawing (the window manager's toolbar): a
    // frame and a screenshot taken one after the other must agree within a
    // few tries.
    let pixels = 1280 * 800;
    let mut best = 0;
    let mut frame = Vec::new();
    for _ in 0..20 {
        frame = v.frame().await;
        let shot = g
            .get("/v1/screens/0/screenshot?format=png")
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let same = rfb::matching_pixels(&frame, &shot);
        best = best.max(same);
        // The pointer may be drawn in one and not the other.
        if same * 1000 >= pixels * 998 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(best * 1000 >= pixels * 998, "at best {best} of {pixels} pixels match the screenshot");
    assert_eq!(&frame[(300 * 1280 + 150) * 3..][..3], [0xd0, 0x30, 0x30]);
    assert_eq!(&frame[(300 * 1280 + 350) * 3..][..3], [0x30, 0xc0, 0x40]);
    assert_eq!(&frame[(300 * 1280 + 550) * 3..][..3], [0x30, 0x50, 0xe0]);
}

async fn watch_only_sends_nothing_and_a_takeover_holds_the_box(p: Profile) {
    let (g, key) = guest(p, "box_a").await;
    let out = g.home.join("typed.txt");
    let _t = desk::Terminal::open(&g, &out).await;
    // The test's terminal drops the first keys it is sent, whoever sends
    // them (xdotool too): the agent types until a line arrives.
    eventually(Duration::from_secs(20), "the terminal to take keys", || async {
        g.post("/v1/screens/0/input")
            .json(&json!({"actions": [{"type": "type", "text": "ready\n"}]}))
            .send()
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        std::fs::read_to_string(&out).unwrap().contains("ready\n").then_some(())
    })
    .await;
    let typed =
        || std::fs::read_to_string(&out).unwrap().rsplit_once("ready\n").unwrap().1.to_owned();

    // Takeover: the first input takes control. The first keys that reach
    // the terminal through the VNC server can be lost as the first keys of
    // any new sender are (see above), so the person types until a line
    // arrives: from then on the path is proven to carry keys.
    let mut watcher = open(&g, &key, "vg_000000000002", ViewerMode::View).await;
    watcher.click(50, 50).await;
    watcher.type_ascii("watched\n").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(handoff(&g).await["state"], "none", "watching takes nothing from the agent");
    assert_eq!(agent_clicks(&g).await.status(), 200);
    let mut person = open(&g, &key, "vg_0000000000c1", ViewerMode::Control).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !typed().contains("taken\n") {
        assert!(std::time::Instant::now() < deadline, "takeover typing never arrived");
        person.type_ascii("taken\n").await;
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    let mark = typed();

    // Watch only: keys, clicks and clipboard text are dropped where the
    // stream is served, whatever the client sends.
    watcher.click(50, 50).await;
    watcher.type_ascii("watched\n").await;
    watcher.cut_text("watched").await;
    person.type_ascii("after\n").await;
    eventually(Duration::from_secs(10), "the person's line after the watcher's", || async {
        (typed() == format!("{mark}after\n")).then_some(())
    })
    .await;
    let status: Value = g.get("/v1/viewers").send().await.unwrap().json().await.unwrap();
    let dropped: u64 = status["connections"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["mode"] == "view")
        .map(|c| c["dropped"].as_u64().unwrap())
        .sum();
    assert_eq!(dropped, 2 * (3 + 2 * 8) + 1, "{status}");
    let mark = typed();
    let h = handoff(&g).await;
    assert_eq!(h["state"], "human_in_control", "{h}");
    assert_eq!(h["control"]["label"], "alice");
    let refused = agent_clicks(&g).await;
    assert_eq!(refused.status(), 409);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "human_in_control", "{body}");
    let since = h["control"]["since"].as_str().unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains(since), "{body}");
    assert!(body["error"]["hint"].as_str().unwrap().contains("wait_for=handed_back"), "{body}");
    assert!(body["error"]["request_id"].is_string());
    let page_action =
        g.post("/v1/browser/navigate").json(&json!({"url": "about:blank"})).send().await.unwrap();
    assert_eq!(page_action.status(), 409, "page actions wait too");
    let shot = g.get("/v1/screens/0/screenshot").send().await.unwrap();
    assert_eq!(shot.status(), 200, "screenshots keep working");

    // The page's hand-back button: the agent acts again, this URL's input is
    // dropped until it takes control again.
    let session = viewer_control(&g, &key, "vg_0000000000c1", "release").await;
    assert_eq!(session["released"], true);
    assert_eq!(session["handoff"]["state"], "handed_back");
    assert_eq!(agent_clicks(&g).await.status(), 200);
    person.type_ascii("late\n").await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(typed(), mark, "handed back: the person's keys are dropped");
    viewer_control(&g, &key, "vg_0000000000c1", "take").await;
    assert_eq!(agent_clicks(&g).await.status(), 409);
    person.type_ascii("again\n").await;
    eventually(Duration::from_secs(10), "typing after taking again", || async {
        (typed() == format!("{mark}again\n")).then_some(())
    })
    .await;

    // Closing the last takeover connection hands back after the grace.
    drop(person);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(handoff(&g).await["state"], "human_in_control", "kept for the grace period");
    let back: Value = g
        .get("/v1/viewers/handoff?wait_for=handed_back&timeout_secs=20")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(back["state"], "handed_back", "{back}");
    assert_eq!(back["handed_back"]["by"], "disconnected");
    assert_eq!(agent_clicks(&g).await.status(), 200);
    let events: Value = g.get("/v1/viewers/events").send().await.unwrap().json().await.unwrap();
    let kinds: Vec<(&str, Option<&str>)> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["kind"].as_str().unwrap(), e["by"].as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("taken", None),
            ("returned", Some("released")),
            ("taken", None),
            ("returned", Some("disconnected"))
        ]
    );
    drop(watcher);
}

async fn the_clipboard_goes_both_ways_for_a_takeover(p: Profile) {
    let (g, key) = guest(p, "box_a").await;
    let mut person = open(&g, &key, "vg_0000000000c1", ViewerMode::Control).await;
    let (paste, copy_cmd): (Vec<&str>, Vec<&str>) = match p {
        Profile::X11 => (
            vec!["xclip", "-o", "-selection", "clipboard"],
            vec!["xclip", "-i", "-selection", "clipboard"],
        ),
        Profile::Wayland => (vec!["wl-paste", "--no-newline"], vec!["wl-copy"]),
    };
    common::require_programs(&[paste[0], copy_cmd[0]]);
    let command = |argv: &[&str]| {
        let mut cmd = std::process::Command::new(argv[0]);
        cmd.args(&argv[1..])
            .env("DISPLAY", g.display(0))
            .env("XDG_RUNTIME_DIR", &g.wayland_dir)
            .env("WAYLAND_DISPLAY", "wayland-1");
        cmd
    };
    // x11vnc does not serve a selection in its first seconds: the text is
    // sent again, as a person would paste again, until the box has it.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        person.cut_text("from the viewer").await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let out = command(&paste).output().unwrap();
        if String::from_utf8_lossy(&out.stdout) == "from the viewer" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the box's clipboard never held the viewer's text"
        );
    }
    let mut child = command(&copy_cmd).stdin(std::process::Stdio::piped()).spawn().unwrap();
    {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"from the box").unwrap();
    }
    // x11vnc sends no selection for 15 s after a viewer connects.
    let texts = person.clipboard_within(Duration::from_secs(25)).await;
    let _ = child.kill();
    let _ = child.wait();
    assert!(texts.iter().any(|t| t == "from the box"), "the viewer got {texts:?}");
}

async fn tokens_open_only_their_box_screen_and_time(p: Profile) {
    let (g, key) = guest(p, "box_a").await;
    let view = |t: Option<String>, screen: u8| {
        let url = stream_url(&g, screen, ViewerMode::View);
        async move { rfb::connect(&url, t.as_deref()).await }
    };
    let refused = |r: Result<Rfb, rfb::Refusal>, status: u16, what: &str| {
        let e = r.expect_err(what);
        assert_eq!(e.status, status, "{what}: {}", e.body);
        assert!(
            e.body["error"]["code"].is_string() && e.body["error"]["request_id"].is_string(),
            "{what}: {}",
            e.body
        );
        e.body["error"]["message"].as_str().unwrap().to_owned()
    };
    let expired = token(&key, "box_a", "vg_000000000003", 0, ViewerMode::View, -1);
    assert!(refused(view(Some(expired), 0).await, 401, "expired").contains("expired"));
    let other_box = token(&key, "box_b", "vg_000000000004", 0, ViewerMode::View, 600);
    refused(view(Some(other_box), 0).await, 401, "another box's token");
    let other_key =
        token(&viewer_token::new_key(), "box_a", "vg_000000000005", 0, ViewerMode::View, 600);
    refused(view(Some(other_key), 0).await, 401, "another key's token");
    refused(view(None, 0).await, 401, "no token");
    refused(view(Some("vg_1.0.v.1.x".into()), 0).await, 401, "a malformed token");
    let control = token(&key, "box_a", "vg_000000000006", 0, ViewerMode::Control, 600);
    refused(view(Some(control), 0).await, 403, "a takeover token on the watch-only stream");
    let unknown_screen = token(&key, "box_a", "vg_000000000007", 3, ViewerMode::View, 600);
    assert!(
        refused(view(Some(unknown_screen), 3).await, 404, "screen 3 of 1").contains("screen 3")
    );

    // Revoking a grant closes its open stream and refuses it after.
    let good = token(&key, "box_a", "vg_000000000008", 0, ViewerMode::View, 600);
    let mut v = view(Some(good.clone()), 0).await.expect("a good token is let in");
    configure(&g, &key, "box_a", &["vg_000000000008"]).await;
    assert!(v.closed().await.contains("revoked"));
    assert!(refused(view(Some(good), 0).await, 401, "revoked").contains("revoked"));

    // A new key (a new desktop) makes every earlier token worthless.
    let before = token(&key, "box_a", "vg_000000000009", 0, ViewerMode::View, 600);
    let mut v = view(Some(before.clone()), 0).await.expect("let in");
    configure(&g, &viewer_token::new_key(), "box_a", &[]).await;
    v.closed().await;
    refused(view(Some(before), 0).await, 401, "a token of the earlier key");

    // A token that expires while its stream is open ends the stream.
    let key = viewer_token::new_key();
    configure(&g, &key, "box_a", &[]).await;
    let short = token(&key, "box_a", "vg_00000000000a", 0, ViewerMode::View, 2);
    let mut v = view(Some(short), 0).await.expect("let in");
    assert!(v.closed().await.contains("expired"));

    // The page and the session: the page is public, the session is not.
    let page = g.http.get(format!("{}/0/view", g.viewer_url)).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(
        page.headers()["content-security-policy"].to_str().unwrap().contains("connect-src 'self'")
    );
    let session = g.http.get(format!("{}/0/view/session", g.viewer_url)).send().await.unwrap();
    assert_eq!(session.status(), 401);
    let t = token(&key, "box_a", "vg_00000000000b", 0, ViewerMode::View, 600);
    let s: Value = g
        .http
        .get(format!("{}/0/view/session", g.viewer_url))
        .bearer_auth(&t)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (s["title"].as_str(), s["screen"].as_u64(), s["mode"].as_str()),
        (Some("test box"), Some(0), Some("view"))
    );
    let r = g
        .http
        .post(format!("{}/0/view/control", g.viewer_url))
        .bearer_auth(&t)
        .json(&json!({"action": "take"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403, "a watch-only URL cannot take control");

    // Bad settings are refused in the one shape, naming each field.
    let r = g
        .put("/v1/viewers/config")
        .json(&json!({"key": "short", "box_id": "", "title": "t", "colour": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_request", "{body}");
    assert!(body.to_string().contains("colour"), "{body}");
    let r = g
        .put("/v1/viewers/config")
        .json(&json!({"key": "short", "box_id": "", "title": "t"}))
        .send()
        .await
        .unwrap();
    let body: Value = r.json().await.unwrap();
    let issues: Vec<&str> = body["error"]["details"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    assert_eq!(issues, ["key", "box_id"]);
}

async fn an_agent_asks_for_help_and_waits(p: Profile) {
    let (g, key) = guest(p, "box_a").await;
    let r =
        g.put("/v1/viewers/help").json(&json!({"reason": "", "screen": 4})).send().await.unwrap();
    assert_eq!(r.status(), 400);
    let asked: Value = g
        .put("/v1/viewers/help")
        .json(&json!({"reason": "please solve the captcha"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(asked["state"], "waiting");
    let t = token(&key, "box_a", "vg_0000000000c1", 0, ViewerMode::Control, 600);
    let s: Value = g
        .http
        .get(format!("{}/0/takeover/session", g.viewer_url))
        .bearer_auth(&t)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        s["handoff"]["help"]["reason"], "please solve the captcha",
        "the page shows the reason"
    );
    let waited =
        g.get("/v1/viewers/handoff?wait_for=handed_back&timeout_secs=1").send().await.unwrap();
    let waited: Value = waited.json().await.unwrap();
    assert_eq!(waited["state"], "waiting", "a bounded wait answers the handoff as it is");
    let bad = g.get("/v1/viewers/handoff?wait_for=waiting&timeout_secs=9999").send().await.unwrap();
    assert_eq!(bad.status(), 400);

    let waiter = {
        let req = g.get("/v1/viewers/handoff?wait_for=handed_back&timeout_secs=30");
        tokio::spawn(async move { req.send().await.unwrap().json::<Value>().await.unwrap() })
    };
    let mut person = open(&g, &key, "vg_0000000000c1", ViewerMode::Control).await;
    person.click(10, 10).await;
    eventually(Duration::from_secs(10), "the person to take control", || async {
        (handoff(&g).await["state"] == "human_in_control").then_some(())
    })
    .await;
    assert!(!waiter.is_finished());
    viewer_control(&g, &key, "vg_0000000000c1", "release").await;
    let done = tokio::time::timeout(Duration::from_secs(10), waiter).await.unwrap().unwrap();
    assert_eq!(done["state"], "handed_back");
    assert_eq!(done["handed_back"]["by"], "released");
    assert!(done.get("help").is_none(), "help given is no longer asked for: {done}");
}

/// Established TCP connections to loopback port `port`, as its server's
/// side of each shows in `/proc/net/tcp`.
fn clients_of(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let local = format!(":{port:04X}");
    table
        .lines()
        .skip(1)
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[1].ends_with(&local) && f[3] == "01"
        })
        .count()
}

/// Two watch-only viewers of screen 0, one after the other: while each
/// watches, x11vnc has its connection and the held client's; once it left,
/// `after` connections (the held client's, or none once it left too).
async fn two_viewers_one_after_the_other(g: &Guest, key: &str, after: (usize, &'static str)) {
    let port = g.vnc_port_base;
    let count = |want: usize, what: &'static str| {
        eventually(Duration::from_secs(20), what, move || async move {
            (clients_of(port) == want).then_some(())
        })
    };
    for grant in ["vg_000000000001", "vg_000000000002"] {
        let mut v = open(g, key, grant, ViewerMode::View).await;
        v.frame().await;
        count(2, "the viewer's and the held client's connections").await;
        drop(v);
        count(after.0, after.1).await;
    }
}

/// On X11 the guest holds one client of its own on a watched screen's
/// x11vnc (so x11vnc's loop runs and takes the next viewer at once),
/// through viewers coming and going, never two; and since it tells
/// x11vnc the client's RFB version before the viewer does, a viewer that
/// answers with another version is closed with the reason.
#[tokio::test]
async fn an_x11_screen_keeps_one_held_vnc_client_and_its_streams_speak_rfb_3_8() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;

    let (g, key) = guest(Profile::X11, "box_a").await;
    two_viewers_one_after_the_other(&g, &key, (1, "the held client alone, once the viewer left"))
        .await;

    let mut req = stream_url(&g, 0, ViewerMode::View).into_client_request().unwrap();
    let t = token(&key, "box_a", "vg_000000000003", 0, ViewerMode::View, 600);
    let protocols = format!("holm-rfb.v1, holm-token.{t}");
    req.headers_mut().insert("sec-websocket-protocol", protocols.parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.expect("the viewer is let in");
    let mut got = Vec::new();
    while got.len() < 12 {
        match ws.next().await.expect("the server's version").unwrap() {
            Message::Binary(b) => got.extend_from_slice(&b),
            other => panic!("{other:?} before the server's version"),
        }
    }
    // Nothing past the version before the client answers it (noVNC reads
    // the security types only after its answer), though x11vnc has the
    // guest's early version and has sent them.
    assert_eq!(got, b"RFB 003.008\n");
    ws.send(Message::binary(b"RFB 003.003\n".to_vec())).await.unwrap();
    let reason = loop {
        match tokio::time::timeout(Duration::from_secs(20), ws.next()).await.expect("a close") {
            Some(Ok(Message::Close(c))) => break c.map(|c| c.reason.to_string()),
            Some(Ok(_)) => {}
            other => panic!("the stream ended without a close frame: {other:?}"),
        }
    };
    assert!(reason.as_deref().is_some_and(|r| r.contains("RFB 3.8")), "{reason:?}");
}

/// The held client leaves once no viewer has been on its screen for
/// `HOLM_VIEWER_HOLD_SECS`, so an unwatched screen's x11vnc goes back to
/// sleep; the next viewer brings it back.
#[tokio::test]
async fn the_held_vnc_client_leaves_a_screen_nobody_watches() {
    let g = Guest::start(Options {
        profile: Profile::X11,
        vnc: "demand",
        env: vec![("HOLM_VIEWER_HOLD_SECS", "1".into())],
        ..Options::default()
    })
    .await;
    g.wait_until(Duration::from_secs(30), |h| h["status"] == "ready").await;
    let key = viewer_token::new_key();
    configure(&g, &key, "box_a", &[]).await;
    two_viewers_one_after_the_other(&g, &key, (0, "no connection once the screen went unwatched"))
        .await;
}

profiles!(
    the_stream_shows_the_screen,
    watch_only_sends_nothing_and_a_takeover_holds_the_box,
    the_clipboard_goes_both_ways_for_a_takeover,
    tokens_open_only_their_box_screen_and_time,
    an_agent_asks_for_help_and_waits,
);
