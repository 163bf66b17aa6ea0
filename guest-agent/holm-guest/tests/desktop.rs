//! Screens, screenshots and input against a real guest, on both display
//! profiles: a real Xvfb, and a real headless sway. Every test is written
//! once and runs as `x11::NAME` and `wayland::NAME`.
//!
//! Each test checks the effect through an independent client of the
//! display server: text typed into a terminal lands in a file, clicks arrive
//! as events on the test's own window, and screenshots of windows the test
//! painted decode to the colours it painted.

mod common;

use std::time::Duration;

use common::desk::{Press, Terminal, Window};
use common::load::Load;
use common::{Guest, Options, Profile, eventually};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const WAIT: Duration = Duration::from_secs(20);

crate::profiles!(
    screenshots_show_the_painted_pattern_in_every_format_region_and_scale,
    an_unchanged_frame_answers_304_without_a_body,
    clicks_land_on_the_pixel_asked_for_with_the_button_asked_for,
    typed_unicode_arrives_exactly_in_a_terminal,
    capture_and_input_survive_a_display_server_restart,
    act_then_see_in_one_call_with_settle,
    a_screen_that_keeps_changing_does_not_settle_and_ends_at_the_deadline,
    bad_requests_name_the_field_and_change_nothing,
    several_screens_each_with_its_size_and_its_input,
    the_cursor_after_a_person_moved_the_pointer_through_vnc,
);

/// The tests of this file run one at a time: eight desktops at once on a
/// two-core machine starve the clients the tests read back through.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn guest(profile: Profile) -> Guest {
    Guest::start(Options { profile, ..Options::default() }).await
}

async fn input(g: &Guest, body: Value) -> reqwest::Response {
    g.post("/v1/screens/0/input").json(&body).send().await.unwrap()
}

async fn input_ok(g: &Guest, body: Value) -> Value {
    let r = input(g, body.clone()).await;
    let status = r.status();
    let v: Value = r.json().await.unwrap();
    assert_eq!(status, 200, "{body} -> {v}");
    v
}

struct Shot {
    headers: reqwest::header::HeaderMap,
    width: u32,
    height: u32,
    /// RGB, row by row.
    rgb: Vec<u8>,
}

impl Shot {
    fn px(&self, x: u32, y: u32) -> (u8, u8, u8) {
        let i = ((y * self.width + x) * 3) as usize;
        (self.rgb[i], self.rgb[i + 1], self.rgb[i + 2])
    }

    fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
    }
}

fn decode(format: &str, bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    match format {
        "png" => {
            let mut r = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
            let mut buf = vec![0; r.output_buffer_size().unwrap()];
            let info = r.next_frame(&mut buf).unwrap();
            assert_eq!(info.color_type, png::ColorType::Rgb);
            buf.truncate(info.buffer_size());
            (info.width, info.height, buf)
        }
        "jpeg" => {
            let mut d = jpeg_decoder::Decoder::new(std::io::Cursor::new(bytes));
            let pixels = d.decode().unwrap();
            let info = d.info().unwrap();
            assert_eq!(info.pixel_format, jpeg_decoder::PixelFormat::RGB24);
            (u32::from(info.width), u32::from(info.height), pixels)
        }
        "webp" => {
            let mut d = image_webp::WebPDecoder::new(std::io::Cursor::new(bytes)).unwrap();
            let (w, h) = d.dimensions();
            assert!(!d.has_alpha());
            let mut buf = vec![0; d.output_buffer_size().unwrap()];
            d.read_image(&mut buf).unwrap();
            (w, h, buf)
        }
        other => panic!("no decoder for {other}"),
    }
}

async fn shot_of(g: &Guest, screen: u8, query: &str) -> Shot {
    let r = g.get(&format!("/v1/screens/{screen}/screenshot?{query}")).send().await.unwrap();
    let status = r.status();
    let headers = r.headers().clone();
    let bytes = r.bytes().await.unwrap();
    assert_eq!(status, 200, "{query}: {}", String::from_utf8_lossy(&bytes));
    let format =
        query.split('&').find_map(|kv| kv.strip_prefix("format=")).unwrap_or("png").to_owned();
    let mime = headers["content-type"].to_str().unwrap();
    assert_eq!(mime, format!("image/{format}"));
    let (width, height, rgb) = decode(&format, &bytes);
    assert_eq!(headers["x-holm-width"], width.to_string().as_str(), "{query}");
    assert_eq!(headers["x-holm-height"], height.to_string().as_str(), "{query}");
    Shot { headers, width, height, rgb }
}

async fn shot(g: &Guest, query: &str) -> Shot {
    shot_of(g, 0, query).await
}

fn close(a: (u8, u8, u8), b: (u8, u8, u8), tolerance: i16) -> bool {
    let d = |x: u8, y: u8| (i16::from(x) - i16::from(y)).abs();
    d(a.0, b.0) <= tolerance && d(a.1, b.1) <= tolerance && d(a.2, b.2) <= tolerance
}

const RED: (u8, u8, u8) = (255, 0, 0);
const GREEN: (u8, u8, u8) = (0, 255, 0);
const BLUE: (u8, u8, u8) = (0, 0, 255);
const WHITE: (u8, u8, u8) = (255, 255, 255);

/// A 400x200 window at (100, 100): red, green / blue, white quadrants. The
/// pointer goes to the screen's last pixel first: on Wayland the compositor
/// draws it into every frame.
async fn pattern(g: &Guest) -> Window {
    input_ok(g, json!({"actions":[{"type":"move","x":1279,"y":799}]})).await;
    let w = Window::open(
        g,
        0,
        (100, 100, 400, 200),
        0,
        &[
            (0, 0, 200, 100, 0xff0000),
            (200, 0, 200, 100, 0x00ff00),
            (0, 100, 200, 100, 0x0000ff),
            (200, 100, 200, 100, 0xffffff),
        ],
    )
    .await;
    // Painted once the screen shows it.
    eventually(WAIT, "the pattern on screen", || async {
        let s = shot(g, "region=100,100,400,200").await;
        (s.px(0, 0) == RED && s.px(399, 199) == WHITE).then_some(())
    })
    .await;
    w
}

async fn screenshots_show_the_painted_pattern_in_every_format_region_and_scale(p: Profile) {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = guest(p).await;
    let _w = pattern(&g).await;

    // Full screen: the right size, the pattern where it was painted.
    let s = shot(&g, "").await;
    assert_eq!((s.width, s.height), (1280, 800));
    assert_eq!(s.header("x-holm-scale"), "1");
    assert_eq!(s.header("x-holm-region"), "0,0,1280,800");
    assert_eq!(s.px(100, 100), RED);
    assert_eq!(s.px(499, 299), WHITE);

    // A region, pixel-exact at every edge, in both lossless formats.
    for format in ["png", "webp"] {
        let s = shot(&g, &format!("format={format}&region=100,100,400,200")).await;
        assert_eq!((s.width, s.height), (400, 200));
        assert_eq!(s.header("x-holm-region"), "100,100,400,200");
        for (x, y, want) in [
            (0, 0, RED),
            (199, 99, RED),
            (200, 0, GREEN),
            (399, 99, GREEN),
            (0, 100, BLUE),
            (199, 199, BLUE),
            (200, 100, WHITE),
            (399, 199, WHITE),
        ] {
            assert_eq!(s.px(x, y), want, "{format} at ({x},{y})");
        }
    }

    // JPEG: approximately, away from the edges where chroma bleeds.
    let s = shot(&g, "format=jpeg&quality=90&region=100,100,400,200").await;
    assert_eq!((s.width, s.height), (400, 200));
    for (x, y, want) in [(100, 50, RED), (300, 50, GREEN), (100, 150, BLUE), (300, 150, WHITE)] {
        assert!(close(s.px(x, y), want, 12), "jpeg at ({x},{y}): {:?}", s.px(x, y));
    }

    // Downscaled: by factor, and by a bound; the scale is reported.
    let s = shot(&g, "region=100,100,400,200&scale=0.5").await;
    assert_eq!((s.width, s.height), (200, 100));
    assert_eq!(s.header("x-holm-scale"), "0.5");
    for (x, y, want) in [(50, 25, RED), (150, 25, GREEN), (50, 75, BLUE), (150, 75, WHITE)] {
        assert_eq!(s.px(x, y), want, "scaled at ({x},{y})");
    }
    let s = shot(&g, "max_width=640").await;
    assert_eq!((s.width, s.height), (640, 400));
    assert_eq!(s.header("x-holm-scale"), "0.5");
    assert_eq!(s.px(100, 75), RED, "the red quadrant's middle, at half scale");
    let s = shot(&g, "max_width=5000&max_height=5000").await;
    assert_eq!((s.width, s.height), (1280, 800), "never upscaled");
}

async fn an_unchanged_frame_answers_304_without_a_body(p: Profile) {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = guest(p).await;
    let w = pattern(&g).await;
    let path = "/v1/screens/0/screenshot?region=100,100,400,200";
    let r = g.get(path).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    assert!(etag.starts_with('"') && etag.len() == 18, "{etag}");

    let r = g.get(path).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(r.status(), 304);
    assert_eq!(r.headers()["etag"].to_str().unwrap(), etag);
    assert_eq!(r.headers()["x-holm-region"], "100,100,400,200");
    assert!(r.bytes().await.unwrap().is_empty());

    // Other options make other bytes: not the same tag.
    let r =
        g.get(&format!("{path}&format=jpeg")).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(r.status(), 200);

    // A changed frame is sent again, with a new tag.
    w.close();
    let fresh = eventually(WAIT, "a changed frame", || async {
        let r = g.get(path).header("if-none-match", &etag).send().await.unwrap();
        (r.status() == 200).then(|| r.headers()["etag"].to_str().unwrap().to_owned())
    })
    .await;
    assert_ne!(fresh, etag);
}

fn press(button: u8, x: i32, y: i32) -> Press {
    Press { button, x, y, ctrl: false, shift: false }
}

async fn clicks_land_on_the_pixel_asked_for_with_the_button_asked_for(p: Profile) {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = guest(p).await;
    let w = Window::open(&g, 0, (0, 0, 1280, 800), 0x202020, &[]).await;

    for (x, y, button, number) in
        [(0, 0, "left", 1), (1279, 799, "right", 3), (640, 400, "middle", 2), (0, 799, "left", 1)]
    {
        input_ok(&g, json!({"actions":[{"type":"click","x":x,"y":y,"button":button}]})).await;
        assert_eq!(w.next_press().await, press(number, x, y));
    }

    // A double click is two presses; a click without coordinates is where
    // the pointer is; held modifiers are in the event's state, and released after.
    let r = input_ok(
        &g,
        json!({"actions":[
            {"type":"move","x":10,"y":20},
            {"type":"click","count":2},
            {"type":"click","x":30,"y":40,"modifiers":["ctrl","shift"]}
        ]}),
    )
    .await;
    assert_eq!(r["performed"], 3);
    assert_eq!(r["cursor"], json!({"x":30,"y":40}));
    for _ in 0..2 {
        assert_eq!(w.next_press().await, press(1, 10, 20));
    }
    assert_eq!(w.next_press().await, Press { button: 1, x: 30, y: 40, ctrl: true, shift: true });
    w.modifiers_released().await;

    // Scrolling: down is button 5, left is button 6, one click at a time.
    input_ok(&g, json!({"actions":[{"type":"scroll","x":5,"y":6,"dy":2,"dx":-1}]})).await;
    let presses = [w.next_press().await, w.next_press().await, w.next_press().await];
    assert_eq!(presses, [press(5, 5, 6), press(5, 5, 6), press(6, 5, 6)]);

    // Screenshot coordinates map to the screen: 0.5 scale, origin (100, 50).
    input_ok(
        &g,
        json!({"actions":[{"type":"click","x":10,"y":20}],"coordinate_space":{"scale":0.5,"x":100,"y":50}}),
    )
    .await;
    assert_eq!(w.next_press().await, press(1, 120, 90));

    // The cursor route agrees.
    let cur: Value = g.get("/v1/screens/0/cursor").send().await.unwrap().json().await.unwrap();
    assert_eq!(cur, json!({"screen":0,"x":120,"y":90}));
}

/// How long a test may keep the machine saturated at most.
const LOAD_LIMIT: Duration = Duration::from_secs(180);

async fn typed_unicode_arrives_exactly_in_a_terminal(p: Profile) {
    let _turn = ONE_AT_A_TIME.lock().await;
    // On a machine whose CPUs are all busy: the clients lag far behind.
    let _load = Load::saturate(LOAD_LIMIT);
    let g = guest(p).await;
    let out = g.home.join("typed.txt");
    let terminal = Terminal::open(&g, &out).await;

    // The terminal reads keys once it is up: a first line shows it is.
    input_ok(&g, json!({"actions":[{"type":"type","text":"ready\n"}]})).await;
    let probe = eventually(WAIT, "the terminal to take keys", || async {
        let got = std::fs::read_to_string(&out).unwrap_or_default();
        (got == "ready\n").then_some(got)
    })
    .await;

    // Characters on no US key, Tab and newlines, the same character again
    // and again, a whole alphabet, and emoji beyond U+FFFF.
    let text = "Héllo, wörld! é ß ø ж 中 € — naïve café\tTab\n\
                ~`!@#$%^&*()_+{}|:\"<>? [];',./\\ ABC xyz 123\n\
                абвгдеёжзийклмнопрстуфхцчшщъыьэюя ΑΒΓΔ αβγδ ₿ ½ ∞\n\
                ééé жжж 中中中 😀🎉\n";
    let r = input_ok(
        &g,
        json!({"actions":[
            {"type":"type","text":text},
            {"type":"key","key":"shift+a"},
            {"type":"key","key":"!"},
            {"type":"key","key":"ж","repeat":2},
            {"type":"key","key":"Return"}
        ]}),
    )
    .await;
    assert_eq!(r["performed"], 5);
    let want = format!("{probe}{text}A!жж\n");
    // The last keys typed end the file once everything arrived.
    let got = eventually(WAIT, "the typed text in the file", || async {
        let got = std::fs::read_to_string(&out).unwrap_or_default();
        (got.len() >= want.len() || got.ends_with("A!жж\n")).then_some(got)
    })
    .await;
    assert_eq!(got, want);
    // Nothing took the focus meanwhile (a window of the desktop's own would).
    assert!(terminal.has_focus(&g), "the terminal lost the focus");
}

async fn capture_and_input_survive_a_display_server_restart(p: Profile) {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = guest(p).await;
    let health = g.wait_until(WAIT, |h| h["status"] == "ready").await;
    let s = shot(&g, "scale=0.25").await;
    assert_eq!((s.width, s.height), (320, 200));
    let pid = health["components"][0]["pid"].as_i64().unwrap() as i32;
    assert_eq!(health["components"][0]["name"], g.display_server());
    // SAFETY: kill takes plain integers.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    g.wait_until(WAIT, |h| {
        h["components"][0]["restarts"] == 1 && h["components"][0]["state"] == "ready"
    })
    .await;
    // The guest's old connections are dead; the next input reconnects
    // before it sends anything (on X11 without a round trip of its own: the
    // dead socket is read first).
    let r = input_ok(&g, json!({"actions":[{"type":"move","x":7,"y":9}]})).await;
    assert_eq!(r["cursor"], json!({"x":7,"y":9}));
    let s = shot(&g, "").await;
    assert_eq!((s.width, s.height), (1280, 800));
    // And the new server really is the one that gets the input.
    let w = Window::open(&g, 0, (0, 0, 1280, 800), 0x202020, &[]).await;
    input_ok(&g, json!({"actions":[{"type":"click","x":11,"y":13}]})).await;
    assert_eq!(w.next_press().await, press(1, 11, 13));
}

async fn act_then_see_in_one_call_with_settle(p: Profile) {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = guest(p).await;
    let _w = pattern(&g).await;
    let r = input(
        &g,
        json!({
            "actions":[{"type":"move","x":400,"y":150}],
            "settle":{"timeout_ms":5000,"quiet_ms":50},
            "screenshot":{"region":"350,100,100,100","cursor":true}
        }),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");
    assert_eq!(r.headers()["x-holm-settled"], "true");
    assert_eq!(r.headers()["x-holm-cursor"], "400,150");
    assert_eq!(r.headers()["x-holm-region"], "350,100,100,100");
    let (w, h, rgb) = decode("png", &r.bytes().await.unwrap());
    assert_eq!((w, h), (100, 100));
    // The pointer is drawn at (50, 50) of the image, over the green quadrant.
    let px = |x: u32, y: u32| {
        let i = ((y * w + x) * 3) as usize;
        (rgb[i], rgb[i + 1], rgb[i + 2])
    };
    assert_eq!(px(10, 10), GREEN, "far from the pointer");
    let drawn =
        (45..56).flat_map(|y| (45..56).map(move |x| (x, y))).any(|(x, y)| px(x, y) != GREEN);
    assert!(drawn, "no pointer drawn near (50, 50)");

    // Without a screenshot: the result as JSON, with the settle outcome.
    let v = input_ok(&g, json!({"actions":[{"type":"wait","ms":1}],"settle":{}})).await;
    assert_eq!(v["settled"], true);
}

/// A terminal on screen 0 printing the clock's nanoseconds about fifty
/// times a second, so the screen never stays the same for long (xterm
/// without jump scrolling, so each line is drawn as it comes, or foot).
fn busy_terminal(g: &Guest) -> common::XClient {
    let script = ["-e", "sh", "-c", "while :; do date +%N; sleep 0.02; done"];
    match g.profile {
        Profile::X11 => {
            let mut args = vec!["+j", "-geometry", "80x24+0+0"];
            args.extend(script);
            g.x_client(0, "xterm", &args)
        }
        Profile::Wayland => {
            common::require_programs(&["foot"]);
            let child = std::process::Command::new("foot")
                .args(&script[1..])
                .env("XDG_RUNTIME_DIR", &g.wayland_dir)
                .env("WAYLAND_DISPLAY", "wayland-1")
                .env("HOME", &g.home)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("start foot");
            common::XClient(child)
        }
    }
}

async fn a_screen_that_keeps_changing_does_not_settle_and_ends_at_the_deadline(p: Profile) {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = guest(p).await;
    let still = shot(&g, "").await.rgb;
    let _busy = busy_terminal(&g);
    eventually(WAIT, "the terminal on screen", || async {
        (shot(&g, "").await.rgb != still).then_some(())
    })
    .await;

    let before = shot(&g, "").await.rgb;
    let v = input_ok(
        &g,
        json!({"actions":[{"type":"wait","ms":1}],"settle":{"timeout_ms":1000,"quiet_ms":300}}),
    )
    .await;
    assert_eq!(v["settled"], false, "{v}");
    // It kept changing while the settle waited, seen by the screenshots.
    assert_ne!(shot(&g, "").await.rgb, before);

    // The screenshot still comes, said not to be settled.
    let r = input(
        &g,
        json!({
            "actions":[{"type":"move","x":600,"y":600}],
            "settle":{"timeout_ms":1000,"quiet_ms":300},
            "screenshot":{}
        }),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-holm-settled"], "false");
    assert_eq!(r.headers()["content-type"], "image/png");
}

async fn bad_requests_name_the_field_and_change_nothing(p: Profile) {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = guest(p).await;
    input_ok(&g, json!({"actions":[{"type":"move","x":5,"y":5}]})).await;

    // One valid action before a bad one: nothing runs.
    for (body, path, words) in [
        (
            json!({"actions":[{"type":"move","x":100,"y":100},{"type":"move","x":5000,"y":1}]}),
            "actions[1].x",
            "1280x800",
        ),
        (
            json!({"actions":[{"type":"move","x":100,"y":100},{"type":"key","key":"ctrl+shft+t"}]}),
            "actions[1].key",
            "unknown key \"shft\"",
        ),
        (
            json!({"actions":[{"type":"move","x":100,"y":100},{"type":"type","text":"ok\u{7}"}]}),
            "actions[1].text",
            "cannot be typed",
        ),
        (
            json!({"actions":[{"type":"click","x":100,"y":100,"count":4}]}),
            "actions[0].count",
            "1 to 3",
        ),
        (
            json!({"actions":[{"type":"move","x":100,"y":100}],"screenshot":{"quality":0}}),
            "screenshot.quality",
            "1 to 100",
        ),
        (json!({"actions":[{"type":"wait","ms":60001}]}), "actions[0].ms", "60000"),
        (
            json!({"actions":[{"type":"move","x":1,"y":1}],"settle":{"timeout_ms":30001}}),
            "settle.timeout_ms",
            "30000",
        ),
        (
            json!({"actions":[{"type":"click","x":1,"y":1,"buton":"left"}]}),
            "actions[0].buton",
            "unknown field",
        ),
    ] {
        let r = input(&g, body.clone()).await;
        assert_eq!(r.status(), 400, "{body}");
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["error"]["code"], "invalid_request", "{e}");
        let issues = e["error"]["details"]["issues"].as_array().unwrap();
        assert_eq!(issues[0]["path"], path, "{e}");
        assert!(issues[0]["problem"].as_str().unwrap().contains(words), "{e}");
    }
    let cur: Value = g.get("/v1/screens/0/cursor").send().await.unwrap().json().await.unwrap();
    assert_eq!((cur["x"].as_i64(), cur["y"].as_i64()), (Some(5), Some(5)), "nothing moved");

    for (query, path) in [
        ("quality=0", "quality"),
        ("scale=1.5", "scale"),
        ("region=1200,0,100,10", "region"),
        ("format=gif", "format"),
        ("colour=red", "colour"),
    ] {
        let r = g.get(&format!("/v1/screens/0/screenshot?{query}")).send().await.unwrap();
        assert_eq!(r.status(), 400, "{query}");
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["error"]["details"]["issues"][0]["path"], path, "{e}");
    }

    for path in ["/v1/screens/3/screenshot", "/v1/screens/x/cursor", "/v1/screens/9"] {
        let r = g.get(path).send().await.unwrap();
        assert_eq!(r.status(), 404, "{path}");
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["error"]["code"], "not_found");
        assert_eq!(e["error"]["details"]["screens"], json!([0]), "{e}");
    }
}

async fn several_screens_each_with_its_size_and_its_input(p: Profile) {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = Guest::start(Options {
        profile: p,
        screens: 2,
        sizes: "1280x800,800x600".into(),
        ..Options::default()
    })
    .await;
    let s: Value = g.get("/v1/screens/1").send().await.unwrap().json().await.unwrap();
    assert_eq!(
        s,
        json!({"index":1,"width":800,"height":600,"display":g.screen_name(1),"ready":true})
    );
    let r = g.get("/v1/screens/1/screenshot?format=jpeg").send().await.unwrap();
    assert_eq!(r.headers()["x-holm-width"], "800");
    let info: Value = g.get("/v1/info").send().await.unwrap().json().await.unwrap();
    assert_eq!(info["profile"], p.to_string());
    let caps: Vec<&str> =
        info["capabilities"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    let input_cap = match p {
        Profile::X11 => "input.xtest",
        Profile::Wayland => "input.virtual",
    };
    for want in ["screenshot.png", "screenshot.jpeg", "screenshot.webp", input_cap, "input.unicode"]
    {
        assert!(caps.contains(&want), "{caps:?}");
    }

    // Each screen's input lands on that screen, in its own pixels, and its
    // screenshots show its own windows.
    let w0 = Window::open(&g, 0, (0, 0, 1280, 800), 0x202020, &[]).await;
    let w1 = Window::open(&g, 1, (0, 0, 800, 600), 0x0000ff, &[]).await;
    eventually(WAIT, "screen 1's window in its screenshots", || async {
        (shot_of(&g, 1, "region=10,10,1,1").await.px(0, 0) == BLUE).then_some(())
    })
    .await;
    assert_ne!(shot(&g, "region=10,10,1,1").await.px(0, 0), BLUE);
    let r = g
        .post("/v1/screens/1/input")
        .json(&json!({"actions":[{"type":"click","x":799,"y":599,"button":"right"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(w1.next_press().await, press(3, 799, 599));
    input_ok(&g, json!({"actions":[{"type":"click","x":3,"y":4}]})).await;
    assert_eq!(w0.next_press().await, press(1, 3, 4));
    let cur: Value = g.get("/v1/screens/1/cursor").send().await.unwrap().json().await.unwrap();
    assert_eq!(cur, json!({"screen":1,"x":799,"y":599}));
}

/// Speaks just enough RFB (version 3.8, no security) to move the pointer
/// as a person at a viewer would; the connection stays open while the
/// returned stream lives.
async fn vnc_viewer_moves_pointer(port: u16, x: u16, y: u16) -> tokio::net::TcpStream {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut version = [0u8; 12];
    s.read_exact(&mut version).await.unwrap();
    assert!(version.starts_with(b"RFB 003."), "{version:?}");
    s.write_all(b"RFB 003.008\n").await.unwrap();
    let n = s.read_u8().await.unwrap();
    let mut types = vec![0u8; usize::from(n)];
    s.read_exact(&mut types).await.unwrap();
    assert!(types.contains(&1), "no 'None' security offered: {types:?}");
    s.write_all(&[1]).await.unwrap();
    assert_eq!(s.read_u32().await.unwrap(), 0, "security refused");
    s.write_all(&[1]).await.unwrap(); // ClientInit: shared
    let mut init = [0u8; 24];
    s.read_exact(&mut init).await.unwrap();
    let name_len = u32::from_be_bytes([init[20], init[21], init[22], init[23]]);
    let mut name = vec![0u8; name_len as usize];
    s.read_exact(&mut name).await.unwrap();
    let mut event = vec![5u8, 0];
    event.extend_from_slice(&x.to_be_bytes());
    event.extend_from_slice(&y.to_be_bytes());
    s.write_all(&event).await.unwrap();
    s.flush().await.unwrap();
    s
}

async fn the_cursor_after_a_person_moved_the_pointer_through_vnc(p: Profile) {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = Guest::start(Options { profile: p, vnc: "on", ..Options::default() }).await;
    g.wait_until(WAIT, |h| h["status"] == "ready").await;
    let w = Window::open(&g, 0, (0, 0, 1280, 800), 0x202020, &[]).await;
    input_ok(&g, json!({"actions":[{"type":"move","x":5,"y":5}]})).await;
    let mut viewer = vnc_viewer_moves_pointer(g.vnc_port_base, 300, 200).await;
    // The person's move reaches the desktop.
    eventually(WAIT, "the pointer at the person's place", || async {
        (w.pointer_seen().await == (300, 200)).then_some(())
    })
    .await;
    let r = g.get("/v1/screens/0/cursor").send().await.unwrap();
    match p {
        // X11 reads the pointer back from the server.
        Profile::X11 => {
            assert_eq!(r.status(), 200);
            let cur: Value = r.json().await.unwrap();
            assert_eq!(cur, json!({"screen":0,"x":300,"y":200}));
            // Input answers where the pointer is when it ends: a person's
            // move during the input's last action (a wait) is seen, not the
            // position the agent's move before it left.
            let waiting = json!({"actions":[
                {"type":"move","x":5,"y":5},{"type":"wait","ms":5000}
            ]});
            let person = async {
                eventually(WAIT, "the agent's move", || async {
                    (w.pointer_seen().await == (5, 5)).then_some(())
                })
                .await;
                viewer.write_all(&[5, 0, 1, 144, 0, 250]).await.unwrap(); // (400, 250)
                viewer.flush().await.unwrap();
                eventually(WAIT, "the person's second move", || async {
                    (w.pointer_seen().await == (400, 250)).then_some(())
                })
                .await;
            };
            let (r, ()) = tokio::join!(input_ok(&g, waiting), person);
            assert_eq!(r["cursor"], json!({"x":400,"y":250}), "{r}");
        }
        // Wayland cannot: it says so in the one error shape, and
        // screenshots and input results leave the position out.
        Profile::Wayland => {
            assert_eq!(r.status(), 400);
            let e: Value = r.json().await.unwrap();
            assert_eq!(e["error"]["code"], "unsupported", "{e}");
            assert!(e["error"]["message"].as_str().unwrap().contains("not known"), "{e}");
            assert!(e["error"]["request_id"].as_str().unwrap().starts_with("req_"), "{e}");
            let s = shot(&g, "region=0,0,10,10").await;
            assert!(s.headers.get("x-holm-cursor").is_none());
            let v = input_ok(&g, json!({"actions":[{"type":"wait","ms":1}]})).await;
            assert_eq!(v["cursor"], Value::Null);
        }
    }
    // Once the viewer is gone and the agent moves the pointer, it is known.
    // The guest sees the viewer's connection close when it does, not at a
    // time the test could guess: the agent moves until its move is known.
    drop(viewer);
    eventually(WAIT, "the cursor known once the viewer is gone", || async {
        let v = input_ok(&g, json!({"actions":[{"type":"move","x":20,"y":30}]})).await;
        (v["cursor"] == json!({"x":20,"y":30})).then_some(())
    })
    .await;
    let cur: Value = g.get("/v1/screens/0/cursor").send().await.unwrap().json().await.unwrap();
    assert_eq!(cur, json!({"screen":0,"x":20,"y":30}));
}
