//! Windows and the clipboard, on both display profiles: a listed window's
//! rectangle is where its pixels are, a move and a resize show in the next
//! listing and on the screen, focusing a terminal sends it the typed keys,
//! closing one removes it; the clipboard gives back the text and the PNG
//! bytes set, Chromium pastes the text with ctrl+v and its own copy is read
//! back; bad input is refused and changes nothing. One desktop per profile
//! serves the whole file.

mod common;

use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use common::{Guest, Options, Profile, Site, XClient, eventually};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

crate::profiles!(windows_and_the_clipboard_do_what_they_say);

/// The suites of this file run one at a time: two desktops with Chromium
/// would starve each other.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const MAGENTA: [u8; 3] = [0xff, 0x00, 0xff];

const PAGE: &str = r#"<!doctype html>
<html><head><title>Clipboard</title>
<style>html, body { margin: 0; height: 100%; background: #ff00ff; }
textarea { position: absolute; left: 0; top: 0; width: 240px; height: 60px; }</style>
</head><body><textarea id="t" spellcheck="false"></textarea></body></html>"#;

async fn ok(r: reqwest::RequestBuilder) -> Value {
    let r = r.send().await.unwrap();
    let status = r.status();
    let v: Value = r.json().await.unwrap();
    assert_eq!(status, 200, "{v}");
    v
}

async fn windows(g: &Guest) -> Vec<Value> {
    ok(g.get("/v1/windows")).await["data"].as_array().unwrap().clone()
}

/// The listed window that `is` picks, once there is one.
async fn window(g: &Guest, what: &str, is: impl Fn(&Value) -> bool) -> Value {
    eventually(WAIT, what, || async { windows(g).await.into_iter().find(|w| is(w)) }).await
}

async fn act(g: &Guest, id: &Value, action: Value) -> Value {
    ok(g.post(&format!("/v1/windows/{id}")).json(&action)).await
}

async fn evaluate(g: &Guest, expression: &str) -> Value {
    let r = g.post("/v1/browser/evaluate").json(&json!({ "expression": expression })).send().await;
    r.unwrap().json::<Value>().await.unwrap()["value"].clone()
}

async fn input(g: &Guest, actions: Value) {
    ok(g.post("/v1/screens/0/input").json(&json!({ "actions": actions }))).await;
}

/// Screen 0 as RGB rows.
async fn screenshot(g: &Guest) -> (u32, Vec<u8>) {
    let r = g.get("/v1/screens/0/screenshot?format=png").send().await.unwrap();
    assert_eq!(r.status(), 200);
    let bytes = r.bytes().await.unwrap();
    let mut d = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
    let mut buf = vec![0; d.output_buffer_size().unwrap()];
    let info = d.next_frame(&mut buf).unwrap();
    (info.width, buf)
}

fn px((width, rgb): &(u32, Vec<u8>), x: i64, y: i64) -> [u8; 3] {
    let i = ((y * i64::from(*width) + x) * 3) as usize;
    [rgb[i], rgb[i + 1], rgb[i + 2]]
}

/// The window `id` as listed once its bottom corners and right edge
/// (inside by 3 pixels) show the page's magenta, and the pixels 3 outside
/// its left, right and bottom edges (where they are on the screen) do not.
async fn pixels_are_where_listed(g: &Guest, id: &Value) -> Value {
    eventually(WAIT, "the window's pixels where it is listed", || async {
        let w = windows(g).await.into_iter().find(|w| w["id"] == *id)?;
        let (x, y, width, height) =
            (w["x"].as_i64()?, w["y"].as_i64()?, w["width"].as_i64()?, w["height"].as_i64()?);
        let shot = screenshot(g).await;
        let (right, bottom) = (x + width - 1, y + height - 1);
        let inside = [(x + 3, bottom - 3), (right - 3, bottom - 3), (right - 3, y + height / 2)];
        let outside = [(x - 3, bottom - 3), (right + 3, bottom - 3), (x + width / 2, bottom + 3)];
        let on_screen = |(px_, py): &(i64, i64)| (0..1280).contains(px_) && (0..800).contains(py);
        let ok = inside.iter().all(|&(a, b)| px(&shot, a, b) == MAGENTA)
            && outside.iter().filter(|p| on_screen(p)).all(|&(a, b)| px(&shot, a, b) != MAGENTA);
        ok.then_some(w)
    })
    .await
}

/// A terminal running `cat` into `out`: xterm titled `name`, or foot with
/// the app id `name`.
fn terminal(g: &Guest, name: &str, out: &Path) -> XClient {
    let script = format!("stty -echo; exec cat > '{}'", out.display());
    let mut cmd = match g.profile {
        Profile::X11 => {
            let mut cmd = std::process::Command::new("xterm");
            cmd.args(["-title", name, "-geometry", "60x10", "-e", "sh", "-c", &script])
                .env("DISPLAY", g.display(0));
            cmd
        }
        Profile::Wayland => {
            let mut cmd = std::process::Command::new("foot");
            cmd.args(["--app-id", name, "--", "sh", "-c", &script])
                .env("XDG_RUNTIME_DIR", &g.wayland_dir)
                .env("WAYLAND_DISPLAY", "wayland-1");
            cmd
        }
    };
    let child = cmd
        .env("LANG", "C.UTF-8")
        .env("HOME", &g.home)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start a terminal");
    XClient(child)
}

fn named(name: &str) -> impl Fn(&Value) -> bool + '_ {
    move |w| w["title"] == name || w["app"] == name
}

async fn windows_and_the_clipboard_do_what_they_say(p: Profile) {
    let _turn = ONE_AT_A_TIME.lock().await;
    common::require_programs(&[if p == Profile::X11 { "xterm" } else { "foot" }]);
    let g = Guest::start(Options { profile: p, chromium: true, ..Options::default() }).await;
    g.wait_until(Duration::from_secs(120), |h| h["status"] == "ready").await;
    let site = Site::start(&[("/", PAGE)]).await;
    ok(g.post("/v1/browser/navigate").json(&json!({ "url": format!("{}/", site.url) }))).await;

    // Chromium's window is listed, with the pixels of its magenta page
    // where its rectangle says.
    let chromium = window(&g, "Chromium's window", |w| {
        w["app"].as_str().unwrap_or_default().to_lowercase().contains("chrom")
    })
    .await;
    let id = chromium["id"].clone();
    pixels_are_where_listed(&g, &id).await;

    // A move and a resize show in the answer, in the next listing, and on
    // the screen.
    let moved = act(&g, &id, json!({"action": "move", "x": 100, "y": 120})).await;
    assert_eq!(moved["applied"], true, "{moved}");
    let resized = act(&g, &id, json!({"action": "resize", "width": 640, "height": 400})).await;
    assert_eq!(resized["applied"], true, "{resized}");
    let now = window(&g, "Chromium's window", |w| w["id"] == id).await;
    let rect =
        |w: &Value| (w["x"].clone(), w["y"].clone(), w["width"].clone(), w["height"].clone());
    assert_eq!(rect(&now), (json!(100), json!(120), json!(640), json!(400)), "{now}");
    let shown = pixels_are_where_listed(&g, &id).await;
    assert_eq!(rect(&shown), rect(&now));

    // Bad input is refused in the one shape and changes nothing.
    let r = g.post("/v1/windows/999999999").json(&json!({"action": "focus"})).send().await;
    let r = r.unwrap();
    assert_eq!(r.status(), 404);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["code"], "not_found", "{e}");
    let r = g
        .post(&format!("/v1/windows/{id}"))
        .json(&json!({"action": "resize", "width": 0, "height": 10}));
    let r = r.send().await.unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<Value>().await.unwrap()["error"]["code"], "invalid_request");
    let same = window(&g, "Chromium's window", |w| w["id"] == id).await;
    assert_eq!(rect(&same), rect(&now));

    // Two terminals: the focused one gets the typed keys.
    let (a_out, b_out) = (g.home.join("a.txt"), g.home.join("b.txt"));
    let (a_name, b_name) =
        (format!("holm-a-{}", std::process::id()), format!("holm-b-{}", std::process::id()));
    let _a = terminal(&g, &a_name, &a_out);
    let _b = terminal(&g, &b_name, &b_out);
    let a = window(&g, "terminal a", named(&a_name)).await;
    let b = window(&g, "terminal b", named(&b_name)).await;
    for (w, out, text) in
        [(&a, &a_out, "to a\n"), (&b, &b_out, "to b\n"), (&a, &a_out, "a again\n")]
    {
        let acted = act(&g, &w["id"], json!({"action": "focus"})).await;
        assert_eq!(acted["applied"], true, "{acted}");
        assert_eq!(acted["window"]["focused"], true);
        let before = std::fs::read_to_string(out).unwrap_or_default();
        input(&g, json!([{"type": "type", "text": text}])).await;
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        let deadline = std::time::Instant::now() + WAIT;
        while read(out) != format!("{before}{text}") {
            if std::time::Instant::now() >= deadline {
                let listed = windows(&g).await;
                panic!(
                    "{text:?} did not reach {}: a holds {:?}, b holds {:?}; windows: {listed:?}",
                    w["title"],
                    read(&a_out),
                    read(&b_out)
                );
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
    assert_eq!(std::fs::read_to_string(&b_out).unwrap(), "to b\n");
    let listed = windows(&g).await;
    let focused: Vec<_> = listed.iter().filter(|w| w["focused"] == true).collect();
    assert_eq!(focused.len(), 1, "{listed:?}");
    assert_eq!(focused[0]["id"], a["id"]);

    // Closing removes it.
    let closed = act(&g, &b["id"], json!({"action": "close"})).await;
    assert_eq!(closed, json!({"applied": true, "window": null}));
    assert!(!windows(&g).await.iter().any(|w| w["id"] == b["id"]));

    clipboard(&g, &now).await;
}

/// Keys typed right after a click on a window without the keyboard go to
/// that window, however slow the window manager is to move the focus: the
/// click waits for it. X11 only: there the window manager moves the focus
/// after reading the press from its own connection (here: while it is
/// stopped); on Wayland the compositor moves it in order with the input.
#[tokio::test]
async fn keys_typed_right_after_a_click_reach_the_clicked_window_however_slow_its_manager() {
    common::require_programs(&["xterm"]);
    let g = Guest::start(Options { profile: Profile::X11, ..Options::default() }).await;
    let health = g.wait_until(WAIT, |h| h["status"] == "ready").await;
    let fluxbox = health["components"].as_array().unwrap().iter().find(|c| c["name"] == "fluxbox");
    let fluxbox = libc::pid_t::try_from(fluxbox.unwrap()["pid"].as_i64().unwrap()).unwrap();
    let (a_out, b_out) = (g.home.join("click-a.txt"), g.home.join("click-b.txt"));
    let pid = std::process::id();
    let (a_name, b_name) = (format!("holm-click-a-{pid}"), format!("holm-click-b-{pid}"));
    let _a = terminal(&g, &a_name, &a_out);
    let _b = terminal(&g, &b_name, &b_out);
    let mut middles = Vec::new();
    for (name, x) in [(&a_name, 0), (&b_name, 600)] {
        let w = window(&g, "a terminal", named(name)).await;
        act(&g, &w["id"], json!({"action": "move", "x": x, "y": 40})).await;
        let w = window(&g, "the terminal moved", |v| named(name)(v) && v["x"] == x).await;
        let middle = |k: &str, n: &str| w[k].as_i64().unwrap() + w[n].as_i64().unwrap() / 2;
        middles.push((middle("x", "width"), middle("y", "height")));
    }
    for out in [&a_out, &b_out] {
        eventually(WAIT, "the terminal's cat", || async { out.exists().then_some(()) }).await;
    }
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let click_and_type = |(x, y): (i64, i64), text: &str| json!([{"type": "click", "x": x, "y": y}, {"type": "type", "text": text}]);
    input(&g, click_and_type(middles[1], "to b\n")).await;
    eventually(WAIT, "the keys in b", || async { (read(&b_out) == "to b\n").then_some(()) }).await;

    // The window manager stopped: the press waits in its queue.
    let waits = |g: &Guest| g.log().matches("waiting for the window manager to focus").count();
    let waited = waits(&g);
    // SAFETY: kill takes plain integers.
    assert_eq!(unsafe { libc::kill(fluxbox, libc::SIGSTOP) }, 0);
    let actions = click_and_type(middles[0], "to a\n");
    let sent =
        tokio::spawn(g.post("/v1/screens/0/input").json(&json!({ "actions": actions })).send());
    eventually(WAIT, "the click to wait for the window manager", || async {
        (waits(&g) > waited).then_some(())
    })
    .await;
    // SAFETY: kill takes plain integers.
    assert_eq!(unsafe { libc::kill(fluxbox, libc::SIGCONT) }, 0);
    let r = sent.await.unwrap().unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    eventually(WAIT, "the keys in a", || async { (read(&a_out) == "to a\n").then_some(()) }).await;
    assert_eq!(read(&b_out), "to b\n", "keys typed after the click went to the other window");
}

/// A PNG of 7x5 pixels, each its own colour.
fn png_bytes() -> Vec<u8> {
    let mut out = Vec::new();
    let mut e = png::Encoder::new(&mut out, 7, 5);
    e.set_color(png::ColorType::Rgb);
    let mut w = e.write_header().unwrap();
    let data: Vec<u8> = (0..7 * 5 * 3).map(|i| (i * 7 % 256) as u8).collect();
    w.write_image_data(&data).unwrap();
    w.finish().unwrap();
    out
}

async fn clipboard(g: &Guest, chromium: &Value) {
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let text = "holm clipboard: ünïcødé, 中文, 42";
    ok(g.put("/v1/clipboard").json(&json!({ "text": text }))).await;
    let got = ok(g.get("/v1/clipboard")).await;
    assert_eq!(got["text"], text, "{got}");

    // Image and text together: the same PNG bytes come back.
    let png = png_bytes();
    ok(g.put("/v1/clipboard").json(&json!({ "text": text, "png_base64": b64(&png) }))).await;
    let got = ok(g.get("/v1/clipboard")).await;
    assert!(got["types"].as_array().unwrap().contains(&json!("image/png")), "{got}");
    let back = base64::engine::general_purpose::STANDARD
        .decode(got["png_base64"].as_str().expect("an image"))
        .unwrap();
    assert_eq!(back, png);
    assert_eq!(got["text"], text);

    // An image that is not a PNG is refused and changes nothing.
    let r = g.put("/v1/clipboard").json(&json!({ "png_base64": b64(b"GIF89a not a png") }));
    let r = r.send().await.unwrap();
    assert_eq!(r.status(), 400);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["code"], "invalid_request", "{e}");
    assert_eq!(ok(g.get("/v1/clipboard")).await["png_base64"], b64(&png));

    // Chromium pastes the text with ctrl+v.
    ok(g.put("/v1/clipboard").json(&json!({ "text": text }))).await;
    act(g, &chromium["id"], json!({"action": "focus"})).await;
    let now = window(g, "Chromium's window", |w| w["id"] == chromium["id"]).await;
    let (x, bottom) = (
        now["x"].as_i64().unwrap() + 100,
        now["y"].as_i64().unwrap() + now["height"].as_i64().unwrap(),
    );
    eventually(WAIT, "the text area to have the focus", || async {
        // The page fills the window's bottom, under the browser's bars;
        // the text area is at its top left.
        let page = evaluate(g, "window.innerHeight").await.as_i64()?;
        input(g, json!([{"type": "click", "x": x, "y": bottom - page + 30}])).await;
        let focused = "document.hasFocus() && document.activeElement.id === 't'";
        (evaluate(g, focused).await == true).then_some(())
    })
    .await;
    input(g, json!([{"type": "key", "key": "ctrl+v"}])).await;
    eventually(WAIT, "Chromium to paste the clipboard's text", || async {
        (evaluate(g, "document.getElementById('t').value").await == text).then_some(())
    })
    .await;

    // Chromium's own copy is what the clipboard then holds.
    evaluate(g, "(() => { const t = document.getElementById('t'); t.value = 'copied by chromium'; t.select(); return 1 })()").await;
    input(g, json!([{"type": "key", "key": "ctrl+c"}])).await;
    eventually(WAIT, "the clipboard to hold Chromium's copy", || async {
        (ok(g.get("/v1/clipboard")).await["text"] == "copied by chromium").then_some(())
    })
    .await;
}
