//! Typed text arrives exactly, on a machine whose CPUs are all busy: a long
//! text in many scripts, typed through the input API into a terminal and
//! into Chromium's text area, read back character for character. Runs on
//! both display profiles (`x11::NAME`, `wayland::NAME`).

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::desk::Terminal;
use common::load::Load;
use common::{Guest, Options, Profile, Site, eventually};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

/// How long the test may keep the machine saturated at most.
const LOAD_LIMIT: Duration = Duration::from_secs(300);

crate::profiles!(a_long_text_in_many_scripts_arrives_exactly_in_a_terminal_and_in_chromium);

/// The suites of this file run one at a time: two desktops with Chromium
/// under busy loops would starve each other.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// 500 characters, 199 of them distinct and on no key of a US layout:
/// Latin with diacritics, Greek, Cyrillic, Hebrew, Arabic, Devanagari
/// (with its combining signs), Chinese, Japanese kana and symbols. No emoji:
/// beyond U+FFFF Chromium on Wayland takes a key's character as one UTF-16
/// unit (😀 arrives as U+F600); terminals get them right on both profiles
/// (see `desktop.rs`). `holm bench` types the same text.
const LONG_TEXT: &str = include_str!("../../../tests/fixtures/typing-500.txt");

const PAGE: &str = r#"<!doctype html>
<html><head><title>Typing</title>
<style>html, body { margin: 0; height: 100%; } textarea { box-sizing: border-box; width: 100%; height: 100%; }</style>
</head><body><textarea id="t" spellcheck="false"></textarea></body></html>"#;

async fn input_ok(g: &Guest, body: Value) -> Value {
    let r = g.post("/v1/screens/0/input").json(&body).send().await.unwrap();
    let status = r.status();
    let v: Value = r.json().await.unwrap();
    assert_eq!(status, 200, "{body} -> {v}");
    v
}

async fn evaluate(g: &Guest, expression: &str) -> Value {
    let r = g.post("/v1/browser/evaluate").json(&json!({ "expression": expression })).send().await;
    let v: Value = r.unwrap().json().await.unwrap();
    v["value"].clone()
}

/// Reads until the text is complete (as long as `want`, or ending as it
/// ends), or [`WAIT`] passed; answers what was read last, to be compared.
async fn until_complete<F, Fut>(want: &str, mut read: F) -> String
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = String>,
{
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let got = read().await;
        let complete = got.chars().count() >= want.chars().count() || got.ends_with("12345.\n");
        if complete || std::time::Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn a_long_text_in_many_scripts_arrives_exactly_in_a_terminal_and_in_chromium(p: Profile) {
    let text = LONG_TEXT;
    assert_eq!(text.chars().count(), 500);
    let off_us: HashSet<char> = text.chars().filter(|c| !c.is_ascii()).collect();
    assert!(off_us.len() >= 150, "{} distinct characters on no US key", off_us.len());

    let _turn = ONE_AT_A_TIME.lock().await;
    let _load = Load::saturate(LOAD_LIMIT);
    let g = Guest::start(Options { profile: p, chromium: true, ..Options::default() }).await;
    g.wait_until(Duration::from_secs(120), |h| h["status"] == "ready").await;

    // A terminal: `cat` writes what it reads to a file.
    let out = g.home.join("long.txt");
    let terminal = Terminal::open(&g, &out).await;
    input_ok(&g, json!({"actions":[{"type":"type","text":"ready\n"}]})).await;
    eventually(WAIT, "the terminal to take keys", || async {
        (std::fs::read_to_string(&out).unwrap_or_default() == "ready\n").then_some(())
    })
    .await;
    input_ok(&g, json!({"actions":[{"type":"type","text":text}]})).await;
    let want = format!("ready\n{text}");
    let got =
        until_complete(&want, || async { std::fs::read_to_string(&out).unwrap_or_default() }).await;
    assert_eq!(got, want);
    assert!(terminal.has_focus(&g), "the terminal lost the focus");
    terminal.close(&g).await;

    // Chromium: a text area filling the page, focused by a click.
    let site = Site::start(&[("/", PAGE)]).await;
    let r = g
        .post("/v1/browser/navigate")
        .json(&json!({ "url": format!("{}/", site.url) }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    input_ok(&g, json!({"actions":[{"type":"click","x":640,"y":400}]})).await;
    eventually(WAIT, "the text area to have the keyboard focus", || async {
        let focused = "document.hasFocus() && document.activeElement.id === 't'";
        (evaluate(&g, focused).await == true).then_some(())
    })
    .await;
    input_ok(&g, json!({"actions":[{"type":"type","text":text}]})).await;
    let value = "document.getElementById('t').value";
    let got = until_complete(text, || async {
        evaluate(&g, value).await.as_str().unwrap_or_default().to_owned()
    })
    .await;
    assert_eq!(got, text);
}
