//! The accessibility tree, on both display profiles. On X11: a page in
//! Chromium and a GTK app (yad) give their nodes, each with role, name,
//! states and a rectangle that holds the pixels the screenshot shows for
//! it (a magenta button); clicking by node does what clicking the
//! rectangle's centre does (the page counts clicks, yad ends with the
//! button's code); a text field's value is set; the bounds cut the tree and
//! say so; bad input is refused in the one shape and changes nothing. On
//! Wayland both routes answer `unsupported`.

mod common;

use std::time::Duration;

use common::{Guest, Options, Profile, Site, eventually};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);

crate::profiles!(the_accessibility_tree_names_and_places_what_shows);

const MAGENTA: [u8; 3] = [0xff, 0x00, 0xff];

const PAGE: &str = r##"<!doctype html>
<html><head><title>Nodes</title>
<style>body { margin: 40px; } button { border: none; background: #ff00ff; width: 200px; height: 60px; }</style>
</head><body>
<button id="go" onclick="window.clicks = (window.clicks || 0) + 1">Press me</button>
<p><a href="#there">A link</a></p>
<p><input id="who" aria-label="Your name" value=""></p>
</body></html>"##;

/// Makes GTK buttons flat magenta, so their pixels can be found.
const GTK_CSS: &str = "button { background-image: none; background-color: #ff00ff; border: none; border-radius: 0; box-shadow: none; outline: none; }\n";

async fn answer(r: reqwest::RequestBuilder) -> (u16, Value) {
    let r = r.send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap())
}

async fn ok(r: reqwest::RequestBuilder) -> Value {
    let (status, v) = answer(r).await;
    assert_eq!(status, 200, "{v}");
    v
}

async fn tree(g: &Guest, query: &str) -> Value {
    ok(g.get(&format!("/v1/accessibility{query}"))).await
}

fn find<'a>(nodes: &'a Value, is: &dyn Fn(&Value) -> bool) -> Option<&'a Value> {
    for n in nodes.as_array()? {
        if is(n) {
            return Some(n);
        }
        if let Some(found) = find(&n["children"], is) {
            return Some(found);
        }
    }
    None
}

/// The node `is` picks in the tree of `query`, once there is one.
async fn node(g: &Guest, query: &str, what: &str, is: impl Fn(&Value) -> bool) -> Value {
    eventually(WAIT, what, || async { find(&tree(g, query).await["nodes"], &is).cloned() }).await
}

fn role_name<'a>(role: &'a str, name: &'a str) -> impl Fn(&Value) -> bool + 'a {
    move |n| n["role"] == role && n["name"] == name
}

async fn act(g: &Guest, body: Value) -> (u16, Value) {
    answer(g.post("/v1/accessibility/act").json(&body)).await
}

async fn evaluate(g: &Guest, expression: &str) -> Value {
    ok(g.post("/v1/browser/evaluate").json(&json!({ "expression": expression }))).await["value"]
        .clone()
}

/// The smallest rectangle holding every magenta pixel of screen 0, as
/// (x, y, width, height).
async fn magenta_box(g: &Guest) -> Option<(i64, i64, i64, i64)> {
    let r = g.get("/v1/screens/0/screenshot?format=png").send().await.unwrap();
    let bytes = r.bytes().await.unwrap();
    let mut d = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
    let mut buf = vec![0; d.output_buffer_size().unwrap()];
    let info = d.next_frame(&mut buf).unwrap();
    let (w, mut lo, mut hi) = (i64::from(info.width), (i64::MAX, i64::MAX), (-1, -1));
    for (i, px) in buf.chunks_exact(3).enumerate() {
        if px == MAGENTA {
            let (x, y) = (i as i64 % w, i as i64 / w);
            lo = (lo.0.min(x), lo.1.min(y));
            hi = (hi.0.max(x), hi.1.max(y));
        }
    }
    (hi.0 >= 0).then(|| (lo.0, lo.1, hi.0 - lo.0 + 1, hi.1 - lo.1 + 1))
}

/// The node's rectangle is where the screenshot shows its magenta pixels
/// (to a pixel: toolkits round fractional layout).
async fn pixels_are_in_rect(g: &Guest, n: &Value) {
    let r = &n["rect"];
    let rect = (r["x"].as_i64().unwrap(), r["y"].as_i64().unwrap());
    let size = (r["width"].as_i64().unwrap(), r["height"].as_i64().unwrap());
    let shown = eventually(WAIT, "the magenta pixels", || magenta_box(g)).await;
    let near = |a: i64, b: i64| (a - b).abs() <= 1;
    assert!(
        near(shown.0, rect.0)
            && near(shown.1, rect.1)
            && near(shown.2, size.0)
            && near(shown.3, size.1),
        "the node {n} is at {rect:?} {size:?}, its pixels at {shown:?}"
    );
}

fn centre(n: &Value) -> (i64, i64) {
    let r = &n["rect"];
    (
        r["x"].as_i64().unwrap() + r["width"].as_i64().unwrap() / 2,
        r["y"].as_i64().unwrap() + r["height"].as_i64().unwrap() / 2,
    )
}

async fn the_accessibility_tree_names_and_places_what_shows(p: Profile) {
    common::require_programs(&["dbus-daemon", "yad"]);
    let g = Guest::start(Options { profile: p, chromium: true, ..Options::default() }).await;
    g.wait_until(Duration::from_secs(120), |h| h["status"] == "ready").await;
    let info = ok(g.get("/v1/info")).await;
    let has = info["capabilities"].as_array().unwrap().contains(&json!("accessibility"));
    assert_eq!(has, p == Profile::X11, "{info}");
    if p == Profile::Wayland {
        for r in [
            g.get("/v1/accessibility"),
            g.post("/v1/accessibility/act").json(&json!({"action": "click", "name": "x"})),
        ] {
            let (status, e) = answer(r).await;
            assert_eq!((status, &e["error"]["code"]), (400, &json!("unsupported")), "{e}");
        }
        return;
    }
    let site = Site::start(&[("/", PAGE)]).await;
    ok(g.post("/v1/browser/navigate").json(&json!({ "url": format!("{}/", site.url) }))).await;
    let button = node(&g, "", "the page's button", role_name("push button", "Press me")).await;
    assert!(button["states"].as_array().unwrap().contains(&json!("focusable")), "{button}");
    assert!(button["id"].as_str().unwrap().starts_with(':'), "{button}");
    pixels_are_in_rect(&g, &button).await;
    node(&g, "", "the page's link", role_name("link", "A link")).await;

    // Clicking by node, by the pointer at the node, and at its centre
    // through input: each clicks the button once.
    let (s, by_node) = act(&g, json!({"action": "click", "node": button["id"]})).await;
    assert_eq!((s, &by_node["via"]), (200, &json!("action")), "{by_node}");
    eventually(WAIT, "one click", || async {
        (evaluate(&g, "window.clicks").await == 1).then_some(())
    })
    .await;
    let (s, by_pointer) = act(
        &g,
        json!({"action": "click", "role": "push button", "name": "Press me", "pointer": true}),
    )
    .await;
    assert_eq!((s, &by_pointer["via"]), (200, &json!("pointer")), "{by_pointer}");
    let (x, y) = centre(&button);
    assert_eq!(by_pointer["point"], json!([x, y]));
    eventually(WAIT, "two clicks", || async {
        (evaluate(&g, "window.clicks").await == 2).then_some(())
    })
    .await;
    ok(g.post("/v1/screens/0/input")
        .json(&json!({"actions": [{"type": "click", "x": x, "y": y}]})))
    .await;
    eventually(WAIT, "three clicks", || async {
        (evaluate(&g, "window.clicks").await == 3).then_some(())
    })
    .await;

    // A text field's value is set through the app.
    let (s, set) = act(
        &g,
        json!({"action": "set_value", "role": "entry", "name": "Your name", "value": "holm"}),
    )
    .await;
    assert_eq!(s, 200, "{set}");
    eventually(WAIT, "the field's value", || async {
        (evaluate(&g, "document.getElementById('who').value").await == "holm").then_some(())
    })
    .await;

    // The bounds cut the tree and say so.
    let small = tree(&g, "?max_nodes=3").await;
    assert_eq!(
        (small["count"].clone(), small["truncated"].clone()),
        (json!(3), json!(true)),
        "{small}"
    );
    let shallow = tree(&g, "?depth=1").await;
    assert_eq!(shallow["truncated"], true);
    let below = shallow["nodes"][0]["children"].as_array().unwrap();
    assert!(!below.is_empty() && below.iter().all(|n| n["children"].is_null()), "{shallow}");
    assert!(below.iter().any(|n| n["cut"] == true), "{shallow}");

    bad_input_changes_nothing(&g, &button).await;
    gtk(&g).await;
}

async fn bad_input_changes_nothing(g: &Guest, button: &Value) {
    for (body, status, code) in [
        (
            json!({"action": "click", "node": ":1.9999/org/a11y/atspi/accessible/1"}),
            404,
            "not_found",
        ),
        (json!({"action": "click", "node": "not a node"}), 404, "not_found"),
        (
            json!({"action": "click", "node": button["id"], "name": "Another name"}),
            404,
            "not_found",
        ),
        (
            json!({"action": "click", "role": "push button", "name": "No such button"}),
            404,
            "not_found",
        ),
        (json!({"action": "click"}), 400, "invalid_request"),
        (json!({"action": "set_value", "node": button["id"]}), 400, "invalid_request"),
        (json!({"action": "click", "node": button["id"], "screen": 7}), 404, "not_found"),
        (json!({"action": "fly", "node": button["id"]}), 400, "invalid_request"),
    ] {
        let (s, e) = act(g, body.clone()).await;
        assert_eq!((s, e["error"]["code"].as_str()), (status, Some(code)), "{body}: {e}");
        assert!(e["error"]["request_id"].is_string(), "{e}");
    }
    for query in ["?depth=0", "?max_nodes=5001", "?screen=7", "?colour=red"] {
        let (s, e) = answer(g.get(&format!("/v1/accessibility{query}"))).await;
        assert!(s == 400 || s == 404, "{query}: {e}");
    }
    assert_eq!(evaluate(g, "window.clicks").await, 3, "bad input clicked");
}

/// yad, a GTK dialog, started as a command: its button is in the focused
/// window's tree where its pixels are; clicking it by node ends yad with
/// the button's code, as clicking its centre does.
async fn gtk(g: &Guest) {
    let css = g.home.join("gtkcss/gtk-3.0");
    std::fs::create_dir_all(&css).unwrap();
    std::fs::write(css.join("gtk.css"), GTK_CSS).unwrap();
    // Chromium's magenta button must not count.
    ok(g.post("/v1/browser/navigate").json(&json!({ "url": "about:blank" }))).await;
    for by_node in [true, false] {
        let start = json!({
            "argv": ["yad", "--title=holm-yad", "--text=Pick", "--button=Alpha:3"],
            "env": {"XDG_CONFIG_HOME": g.home.join("gtkcss"), "GTK_THEME": "Adwaita"},
        });
        let (s, started) = answer(g.post("/v1/processes").json(&start)).await;
        assert_eq!(s, 201, "{started}");
        let alpha =
            node(g, "", "yad's button in the focused window", role_name("push button", "Alpha"))
                .await;
        pixels_are_in_rect(g, &alpha).await;
        if by_node {
            let (s, r) = act(g, json!({"action": "click", "node": alpha["id"]})).await;
            assert_eq!((s, &r["via"]), (200, &json!("action")), "{r}");
        } else {
            let (x, y) = centre(&alpha);
            ok(g.post("/v1/screens/0/input")
                .json(&json!({"actions": [{"type": "click", "x": x, "y": y}]})))
            .await;
        }
        let id = started["id"].as_str().unwrap().to_owned();
        let ended = eventually(WAIT, "yad to end", || async {
            let p = ok(g.get(&format!("/v1/processes/{id}"))).await;
            (p["state"] != "running").then_some(p)
        })
        .await;
        assert_eq!(ended["exit_code"], 3, "{ended}");
    }
}
