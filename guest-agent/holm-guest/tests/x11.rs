//! Screens, screenshots and input against a real guest on a real Xvfb.
//!
//! Each test checks the effect through an independent X client: text typed
//! into an xterm lands in a file, clicks arrive as events on the test's own
//! window, and screenshots of windows the test painted decode to the colours
//! it painted.

mod common;

use std::time::Duration;

use common::{Guest, Options, XClient, eventually};
use serde_json::{Value, json};
use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    ConfigureWindowAux, ConnectionExt, CreateWindowAux, EventMask, InputFocus, KeyButMask,
    MapState, StackMode, Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

const WAIT: Duration = Duration::from_secs(20);

/// The tests of this file run one at a time: eight desktops at once on a
/// two-core machine starve the X clients the tests read back through.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A connection of the test's own to the guest's display.
fn x(g: &Guest) -> RustConnection {
    x11rb::connect(Some(&g.display(0))).expect("connect to the guest's display").0
}

/// Opens an override-redirect window (the window manager leaves it alone)
/// at `(x, y)`, with coloured child windows `(x, y, w, h, rgb)` inside, and
/// raises it above everything.
fn window(
    c: &RustConnection,
    (x, y, w, h): (i16, i16, u16, u16),
    background: u32,
    children: &[(i16, i16, u16, u16, u32)],
    events: EventMask,
) -> Window {
    let screen = &c.setup().roots[0];
    let id = c.generate_id().unwrap();
    c.create_window(
        0,
        id,
        screen.root,
        x,
        y,
        w,
        h,
        0,
        WindowClass::INPUT_OUTPUT,
        0,
        &CreateWindowAux::new()
            .override_redirect(1)
            .background_pixel(background)
            .event_mask(events),
    )
    .unwrap();
    for &(cx, cy, cw, ch, rgb) in children {
        let child = c.generate_id().unwrap();
        c.create_window(
            0,
            child,
            id,
            cx,
            cy,
            cw,
            ch,
            0,
            WindowClass::INPUT_OUTPUT,
            0,
            &CreateWindowAux::new().background_pixel(rgb),
        )
        .unwrap();
        c.map_window(child).unwrap();
    }
    c.map_window(id).unwrap();
    c.configure_window(id, &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE)).unwrap();
    c.sync().unwrap();
    id
}

async fn wait_viewable(c: &RustConnection, w: Window) {
    eventually(WAIT, "the window to be viewable", || async {
        let attrs = c.get_window_attributes(w).unwrap().reply().unwrap();
        (attrs.map_state == MapState::VIEWABLE).then_some(())
    })
    .await;
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

async fn shot(g: &Guest, query: &str) -> Shot {
    let r = g.get(&format!("/v1/screens/0/screenshot?{query}")).send().await.unwrap();
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

fn close(a: (u8, u8, u8), b: (u8, u8, u8), tolerance: i16) -> bool {
    let d = |x: u8, y: u8| (i16::from(x) - i16::from(y)).abs();
    d(a.0, b.0) <= tolerance && d(a.1, b.1) <= tolerance && d(a.2, b.2) <= tolerance
}

const RED: (u8, u8, u8) = (255, 0, 0);
const GREEN: (u8, u8, u8) = (0, 255, 0);
const BLUE: (u8, u8, u8) = (0, 0, 255);
const WHITE: (u8, u8, u8) = (255, 255, 255);

/// A 400x200 window at (100, 100): red, green / blue, white quadrants.
async fn pattern(g: &Guest, c: &RustConnection) -> Window {
    let w = window(
        c,
        (100, 100, 400, 200),
        0,
        &[
            (0, 0, 200, 100, 0xff0000),
            (200, 0, 200, 100, 0x00ff00),
            (0, 100, 200, 100, 0x0000ff),
            (200, 100, 200, 100, 0xffffff),
        ],
        EventMask::NO_EVENT,
    );
    wait_viewable(c, w).await;
    // Painted once the screen shows it.
    eventually(WAIT, "the pattern on screen", || async {
        let s = shot(g, "region=100,100,400,200").await;
        (s.px(0, 0) == RED && s.px(399, 199) == WHITE).then_some(())
    })
    .await;
    w
}

#[tokio::test]
async fn screenshots_show_the_painted_pattern_in_every_format_region_and_scale() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = Guest::start(Options::default()).await;
    let c = x(&g);
    pattern(&g, &c).await;

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

#[tokio::test]
async fn an_unchanged_frame_answers_304_without_a_body() {
    let g = Guest::start(Options::default()).await;
    let c = x(&g);
    let w = pattern(&g, &c).await;
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
    c.destroy_window(w).unwrap();
    c.sync().unwrap();
    let fresh = eventually(WAIT, "a changed frame", || async {
        let r = g.get(path).header("if-none-match", &etag).send().await.unwrap();
        (r.status() == 200).then(|| r.headers()["etag"].to_str().unwrap().to_owned())
    })
    .await;
    assert_ne!(fresh, etag);
}

/// Collects button presses on the test's window.
async fn next_press(c: &RustConnection) -> (u8, i16, i16, KeyButMask) {
    eventually(WAIT, "a ButtonPress", || async {
        while let Some(e) = c.poll_for_event().unwrap() {
            if let Event::ButtonPress(e) = e {
                return Some((e.detail, e.event_x, e.event_y, e.state));
            }
        }
        None
    })
    .await
}

#[tokio::test]
async fn clicks_land_on_the_pixel_asked_for_with_the_button_asked_for() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = Guest::start(Options::default()).await;
    let c = x(&g);
    let w = window(
        &c,
        (0, 0, 1280, 800),
        0x202020,
        &[],
        EventMask::BUTTON_PRESS | EventMask::BUTTON_RELEASE,
    );
    wait_viewable(&c, w).await;

    for (x, y, button, number) in
        [(0, 0, "left", 1), (1279, 799, "right", 3), (640, 400, "middle", 2), (0, 799, "left", 1)]
    {
        input_ok(&g, json!({"actions":[{"type":"click","x":x,"y":y,"button":button}]})).await;
        assert_eq!(next_press(&c).await, (number, x as i16, y as i16, KeyButMask::default()));
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
        assert_eq!(next_press(&c).await, (1, 10, 20, KeyButMask::default()));
    }
    let (_, x, y, state) = next_press(&c).await;
    assert_eq!((x, y), (30, 40));
    assert!(state.contains(KeyButMask::CONTROL | KeyButMask::SHIFT), "{state:?}");
    let mask = c.query_pointer(w).unwrap().reply().unwrap().mask;
    assert!(!mask.intersects(KeyButMask::CONTROL | KeyButMask::SHIFT), "still held: {mask:?}");

    // Scrolling: down is button 5, left is button 6, one press per click.
    input_ok(&g, json!({"actions":[{"type":"scroll","x":5,"y":6,"dy":2,"dx":-1}]})).await;
    let presses = [next_press(&c).await, next_press(&c).await, next_press(&c).await];
    let buttons: Vec<u8> = presses.iter().map(|p| p.0).collect();
    assert_eq!(buttons, [5, 5, 6]);
    assert!(presses.iter().all(|p| (p.1, p.2) == (5, 6)));

    // Screenshot coordinates map to the screen: 0.5 scale, origin (100, 50).
    input_ok(
        &g,
        json!({"actions":[{"type":"click","x":10,"y":20}],"coordinate_space":{"scale":0.5,"x":100,"y":50}}),
    )
    .await;
    let (_, x, y, _) = next_press(&c).await;
    assert_eq!((x, y), (120, 90));

    // The cursor route agrees.
    let cur: Value = g.get("/v1/screens/0/cursor").send().await.unwrap().json().await.unwrap();
    assert_eq!(cur, json!({"screen":0,"x":120,"y":90}));
}

/// Finds a top-level window (or a descendant) whose WM_NAME is `title`.
fn find_window(c: &RustConnection, root: Window, title: &str) -> Option<Window> {
    let tree = c.query_tree(root).ok()?.reply().ok()?;
    for &w in &tree.children {
        let name = c
            .get_property(
                false,
                w,
                x11rb::protocol::xproto::AtomEnum::WM_NAME,
                x11rb::protocol::xproto::AtomEnum::STRING,
                0,
                256,
            )
            .ok()?
            .reply()
            .ok()?;
        if name.value == title.as_bytes() {
            return Some(w);
        }
        if let Some(found) = find_window(c, w, title) {
            return Some(found);
        }
    }
    None
}

#[tokio::test]
async fn typed_unicode_arrives_exactly_in_an_x_client() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = Guest::start(Options::default()).await;
    common::require_programs(&["xterm"]);
    let out = g.home.join("typed.txt");
    let script = format!("stty -echo; exec cat > '{}'", out.display());
    let title = format!("holm-typing-{}", std::process::id());
    let child = std::process::Command::new("xterm")
        .args(["-u8", "-title", &title, "-geometry", "100x20+0+0", "-e", "sh", "-c", &script])
        .env("DISPLAY", g.display(0))
        .env("LANG", "C.UTF-8")
        .env("LC_ALL", "C.UTF-8")
        .env("HOME", &g.home)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start xterm");
    let _xterm = XClient(child);
    let c = x(&g);
    let root = c.setup().roots[0].root;
    let w = eventually(WAIT, "the xterm window", || async { find_window(&c, root, &title) }).await;
    wait_viewable(&c, w).await;
    eventually(WAIT, "xterm's shell to open the file", || async { out.exists().then_some(()) })
        .await;
    // Focus it directly, so no window-manager policy is involved.
    eventually(WAIT, "xterm to have the focus", || async {
        c.set_input_focus(InputFocus::POINTER_ROOT, w, x11rb::CURRENT_TIME).unwrap();
        c.sync().unwrap();
        let focus = c.get_input_focus().unwrap().reply().unwrap().focus;
        (focus == w).then_some(())
    })
    .await;

    // xterm reads keys once it is up: a first line shows it is.
    input_ok(&g, json!({"actions":[{"type":"type","text":"ready\n"}]})).await;
    let probe = eventually(WAIT, "xterm to take keys", || async {
        let got = std::fs::read_to_string(&out).unwrap_or_default();
        (got == "ready\n").then_some(got)
    })
    .await;

    // Characters on no US key, Tab and newlines, the same character again
    // and again, and a whole alphabet (more distinct characters than there
    // are spare keycodes, so spares are recycled mid-text).
    let text = "Héllo, wörld! é ß ø ж 中 € — naïve café\tTab\n\
                ~`!@#$%^&*()_+{}|:\"<>? [];',./\\ ABC xyz 123\n\
                абвгдеёжзийклмнопрстуфхцчшщъыьэюя ΑΒΓΔ αβγδ ₿ ½ ∞\n\
                ééé жжж 中中中\n";
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
    let got = eventually(WAIT, "the typed text in the file", || async {
        let got = std::fs::read_to_string(&out).unwrap_or_default();
        (got.len() >= want.len()).then_some(got)
    })
    .await;
    assert_eq!(got, want);
}

#[tokio::test]
async fn capture_and_input_survive_an_x_server_restart() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = Guest::start(Options::default()).await;
    let health = g.wait_until(WAIT, |h| h["status"] == "ready").await;
    let s = shot(&g, "scale=0.25").await;
    assert_eq!((s.width, s.height), (320, 200));
    let pid = health["components"][0]["pid"].as_i64().unwrap() as i32;
    assert_eq!(health["components"][0]["name"], "xvfb");
    // SAFETY: kill takes plain integers.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    g.wait_until(WAIT, |h| {
        h["components"][0]["restarts"] == 1 && h["components"][0]["state"] == "ready"
    })
    .await;
    // The guest's old connection is dead; the next capture reconnects.
    let s = shot(&g, "").await;
    assert_eq!((s.width, s.height), (1280, 800));
    let r = input_ok(&g, json!({"actions":[{"type":"move","x":7,"y":9}]})).await;
    assert_eq!(r["cursor"], json!({"x":7,"y":9}));
    // And the new server really is the one that moved.
    let c = x(&g);
    let p = c.query_pointer(c.setup().roots[0].root).unwrap().reply().unwrap();
    assert_eq!((p.root_x, p.root_y), (7, 9));
}

#[tokio::test]
async fn act_then_see_in_one_call_with_settle() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = Guest::start(Options::default()).await;
    let c = x(&g);
    pattern(&g, &c).await;
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

#[tokio::test]
async fn bad_requests_name_the_field_and_change_nothing() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = Guest::start(Options::default()).await;
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

#[tokio::test]
async fn screen_and_info_describe_the_screens_and_capabilities() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let g = Guest::start(Options {
        screens: 2,
        sizes: "1280x800,800x600".into(),
        ..Options::default()
    })
    .await;
    let s: Value = g.get("/v1/screens/1").send().await.unwrap().json().await.unwrap();
    assert_eq!(s, json!({"index":1,"width":800,"height":600,"display":g.display(1),"ready":true}));
    let r = g.get("/v1/screens/1/screenshot?format=jpeg").send().await.unwrap();
    assert_eq!(r.headers()["x-holm-width"], "800");
    let info: Value = g.get("/v1/info").send().await.unwrap().json().await.unwrap();
    let caps: Vec<&str> =
        info["capabilities"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    for want in
        ["screenshot.png", "screenshot.jpeg", "screenshot.webp", "input.xtest", "input.unicode"]
    {
        assert!(caps.contains(&want), "{caps:?}");
    }
}
