//! The timeline end to end, on the real engine and image, on both display
//! profiles: a click, typing a password, a screenshot, a command with a
//! password on its command line and a secret in its environment and
//! standard input, a file written with a secret in it, two
//! more screenshots, and a read (which is no step), each through holmd with
//! a request id of the test's own. The timeline answers the steps in
//! order with their kinds, request ids and redacted parameters, each
//! screenshot folded into the action before it (the third on its own);
//! pages add up to the whole; the HTML export is one self-contained page
//! with the images inline, the JSONL one parsable line per step naming the
//! screenshot files that the screenshot route serves byte for byte. No
//! secret appears in any of it, nor in the store or the log (the server's
//! scan at its end): typed text keeps only its length, the command line
//! its words with the password replaced (the review's M6 probe). Bad input gets the one error shape. After a restart
//! the timeline is the same, and with a bound of two screenshots a new one
//! drops the oldest.

use holm_proto::host::{BoxSpec, BoxState, CreateBox};
use holm_proto::recording::RecordingStart;
use holm_proto::timeline::{DatasetLine, ExportFormat, Step, StepKind};
use holm_testkit::TestServer;
use holm_testkit::matrix::Target;
use serde_json::{Value, json};

holm_testkit::suite!(a_timeline_keeps_what_was_done_to_a_box: docker [x11, wayland]);

const SECRET_ENV: &str = "tl-env-secret-5c1f9d";
const SECRET_STDIN: &str = "tl-stdin-secret-77ab02";
const SECRET_FILE: &str = "tl-file-secret-0e93c4";
const TYPED: &str = "hunter2-TYPED-PASSWORD";
const IN_COMMAND: &str = "S3CRET-IN-COMMAND";

/// Sends a request to holmd with the request id `rid`; answers the status
/// and the body.
async fn send(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    rid: &str,
    body: Option<reqwest::Body>,
) -> (u16, bytes::Bytes) {
    let media_type = if method == reqwest::Method::POST {
        "application/json"
    } else {
        "application/octet-stream"
    };
    let mut rb = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .request(method, format!("{}{path}", server.url))
        .bearer_auth(&server.token)
        .header("x-request-id", rid);
    if let Some(b) = body {
        rb = rb.body(b).header("content-type", media_type);
    }
    let r = rb.send().await.expect("send");
    let status = r.status().as_u16();
    (status, r.bytes().await.expect("the body"))
}

async fn json_body(server: &TestServer, path: &str, rid: &str, body: Value) -> u16 {
    let body = reqwest::Body::from(body.to_string());
    send(server, reqwest::Method::POST, path, rid, Some(body)).await.0
}

/// The error shape: code, message, request id.
fn one_error(body: &[u8], code: &str) {
    let v: Value = serde_json::from_slice(body).expect("an error body");
    assert_eq!(v["error"]["code"], code, "{v}");
    assert!(v["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
    assert!(v["error"]["request_id"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
}

/// The steps the actions made, in order.
async fn act(server: &TestServer, id: &str) -> Vec<u8> {
    let base = format!("/v1/boxes/{id}");
    let click = json!({"actions": [{"type": "click", "x": 20, "y": 20}]});
    assert_eq!(json_body(server, &format!("{base}/screens/0/input"), "tl-click", click).await, 200);
    let typing = json!({"actions": [{"type": "type", "text": TYPED}]});
    assert_eq!(json_body(server, &format!("{base}/screens/0/input"), "tl-type", typing).await, 200);
    let shot = format!("{base}/screens/0/screenshot");
    let (status, first) = send(server, reqwest::Method::GET, &shot, "tl-shot1", None).await;
    assert_eq!(status, 200);
    let command = format!("echo ok; true mysql -uroot -p{IN_COMMAND}");
    let run = json!({"command": command, "env": {"TL_VAR": SECRET_ENV}, "stdin": SECRET_STDIN});
    assert_eq!(json_body(server, &format!("{base}/commands/run"), "tl-run", run).await, 200);
    let write = format!("{base}/files/content?path=%2Ftmp%2Ftl.txt");
    let body = reqwest::Body::from(format!("the content: {SECRET_FILE}"));
    let (status, _) = send(server, reqwest::Method::PUT, &write, "tl-write", Some(body)).await;
    assert_eq!(status, 200);
    for rid in ["tl-shot2", "tl-shot3"] {
        assert_eq!(send(server, reqwest::Method::GET, &shot, rid, None).await.0, 200);
    }
    let list = format!("{base}/files/list?path=%2Ftmp");
    assert_eq!(send(server, reqwest::Method::GET, &list, "tl-read", None).await.0, 200);
    first.to_vec()
}

fn no_secret(what: &str, text: &str) {
    for s in [SECRET_ENV, SECRET_STDIN, SECRET_FILE, TYPED, IN_COMMAND] {
        assert!(!text.contains(s), "{what} holds a secret: {text}");
    }
}

/// The steps are the actions, in order, with their screenshots after them.
fn check_steps(steps: &[Step]) {
    let got: Vec<(StepKind, &str, &str, Option<&str>)> = steps
        .iter()
        .map(|s| {
            let shot = s.screenshot.as_ref().map(|sh| sh.request_id.as_str());
            (s.action.kind, s.action.name.as_str(), s.request_id.as_str(), shot)
        })
        .collect();
    assert_eq!(
        got,
        [
            (StepKind::Input, "click", "tl-click", None),
            (StepKind::Input, "type", "tl-type", Some("tl-shot1")),
            (StepKind::Command, "run", "tl-run", None),
            (StepKind::File, "write", "tl-write", Some("tl-shot2")),
            (StepKind::Screenshot, "screen", "tl-shot3", Some("tl-shot3")),
        ],
        "{steps:#?}"
    );
    assert!(steps.windows(2).all(|w| w[0].id < w[1].id && w[0].at <= w[1].at));
    let typed = json!({"type": "type", "text_chars": TYPED.len()});
    assert_eq!(steps[1].action.params["actions"][0], typed, "typed text keeps its length only");
    let command = "echo ok; true mysql -uroot -p<redacted>";
    assert_eq!(steps[2].action.params["command"], command, "the password is out of the line");
    assert_eq!(steps[2].action.params["env_names"], json!(["TL_VAR"]));
    assert_eq!(steps[2].action.params["stdin_bytes"], json!(SECRET_STDIN.len()));
    assert_eq!(steps[3].action.params["path"], "/tmp/tl.txt");
    assert_eq!(steps[3].action.params["bytes"], json!(13 + SECRET_FILE.len()));
    no_secret("the timeline", &serde_json::to_string(steps).unwrap());
}

async fn exports(server: &TestServer, id: &str, steps: &[Step], first: &[u8]) {
    let c = &server.client;
    // JSONL: one parsable line per step, naming the files the route serves.
    let jsonl = String::from_utf8(
        c.export_timeline(id, holm_proto::timeline::ExportFormat::Jsonl).await.unwrap(),
    )
    .unwrap();
    no_secret("the JSONL", &jsonl);
    let lines: Vec<DatasetLine> =
        jsonl.lines().map(|l| serde_json::from_str(l).expect("a step a line")).collect();
    assert_eq!(lines.len(), steps.len());
    for (line, step) in lines.iter().zip(steps) {
        assert_eq!(line.request_id, step.request_id);
        let file = step.screenshot.as_ref().map(|s| format!("screenshots/{}", s.file));
        assert_eq!(line.screenshot, file);
    }
    let shot = steps[1].screenshot.as_ref().unwrap();
    assert_eq!(c.timeline_screenshot(id, &shot.id).await.unwrap(), first, "byte for byte");

    // HTML: one page, nothing from elsewhere, the three images inline.
    let html = String::from_utf8(
        c.export_timeline(id, holm_proto::timeline::ExportFormat::Html).await.unwrap(),
    )
    .unwrap();
    no_secret("the HTML", &html);
    assert!(html.starts_with("<!doctype html>") && html.ends_with("</html>"));
    assert_eq!(html.matches("src=\"data:image/").count(), 3, "three images inline");
    assert_eq!(html.matches("src=").count(), 3, "and nothing else loaded");
    for outside in ["href=", "<link", "url(", "@import", "http://", "https://"] {
        assert!(!html.contains(outside), "the page reaches outside: {outside}");
    }
    for step in steps {
        assert!(html.contains(&step.request_id), "{}", step.request_id);
    }
}

/// Bad input gets the one error shape and changes nothing.
async fn refusals(server: &TestServer, id: &str) {
    let get = |path: String| async move {
        send(server, reqwest::Method::GET, &path, "tl-bad", None).await
    };
    let (status, body) = get(format!("/v1/boxes/{id}/timeline/export?format=pdf")).await;
    assert_eq!(status, 400);
    one_error(&body, "invalid_request");
    let (status, body) = get(format!("/v1/boxes/{id}/timeline/export")).await;
    assert_eq!(status, 400);
    one_error(&body, "invalid_request");
    let (status, body) = get(format!("/v1/boxes/{id}/timeline?limit=0")).await;
    assert_eq!(status, 400);
    one_error(&body, "invalid_request");
    let (status, body) = get(format!("/v1/boxes/{id}/timeline/screenshots/..x")).await;
    assert_eq!(status, 400);
    one_error(&body, "invalid_request");
    let (status, body) = get(format!("/v1/boxes/{id}/timeline/screenshots/123")).await;
    assert_eq!(status, 404);
    one_error(&body, "not_found");
    let (status, body) = get("/v1/boxes/box_nosuchbox00/timeline".into()).await;
    assert_eq!(status, 404);
    one_error(&body, "not_found");
}

async fn a_timeline_keeps_what_was_done_to_a_box(target: Target) {
    let mut server = target.server().await;
    for (kind, s) in [("env", SECRET_ENV), ("stdin", SECRET_STDIN), ("file", SECRET_FILE)] {
        server.remember(&format!("a command's or file's {kind}"), s);
    }
    server.remember("typed text", TYPED);
    server.remember("a password on a command line", IN_COMMAND);
    let request = CreateBox {
        spec: BoxSpec { display: Some(target.display), ..BoxSpec::default() },
        ..CreateBox::default()
    };
    let info = server.client.create_box(&request, Some(600)).await.expect("create a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    let id = info.id.clone();

    let first = act(&server, &id).await;
    let steps = server.client.whole_timeline(&id).await.expect("the timeline");
    check_steps(&steps);
    let mut paged = Vec::new();
    let mut cursor = None;
    loop {
        let page = server.client.timeline(&id, cursor.as_deref(), Some(2)).await.unwrap();
        assert!(page.data.len() <= 2);
        paged.extend(page.data);
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(paged, steps, "pages add up to the whole");
    exports(&server, &id, &steps, &first).await;
    refusals(&server, &id).await;
    assert_eq!(server.client.whole_timeline(&id).await.unwrap(), steps, "reads change nothing");

    // A restart keeps it all; with a bound of two, a new screenshot drops
    // the oldest image, and its step says so.
    server.config.limits.timeline_screenshots = 2;
    server.restart().await;
    assert_eq!(server.client.whole_timeline(&id).await.unwrap(), steps, "kept across a restart");
    let shot = format!("/v1/boxes/{id}/screens/0/screenshot");
    assert_eq!(send(&server, reqwest::Method::GET, &shot, "tl-shot4", None).await.0, 200);
    let now = server.client.whole_timeline(&id).await.unwrap();
    assert_eq!(now.len(), 6, "{now:#?}");
    let kept: Vec<bool> =
        now.iter().filter_map(|s| s.screenshot.as_ref()).map(|sh| sh.kept).collect();
    assert_eq!(kept, [false, false, true, true], "the oldest went first");
    let gone = &now[1].screenshot.as_ref().unwrap().id;
    let e = server.client.timeline_screenshot(&id, gone).await.unwrap_err();
    assert_eq!(e.api().map(|e| e.code), Some(holm_proto::ErrorCode::NotFound));
    recorded(&server, &id).await;
    server.client.remove_box(&id).await.expect("remove the box");
}

/// A step made while its screen is recorded says where it falls in the
/// recording; a step from before it falls in none.
async fn recorded(server: &TestServer, id: &str) {
    let b = server.client.boxed(id);
    let rec = b.start_recording(&RecordingStart::default()).await.expect("start a recording");
    let click = json!({"actions": [{"type": "click", "x": 30, "y": 30}]});
    let input = format!("/v1/boxes/{id}/screens/0/input");
    assert_eq!(json_body(server, &input, "tl-rec-click", click).await, 200);
    let now = server.client.whole_timeline(id).await.unwrap();
    let step = |rid: &str| now.iter().find(|s| s.request_id == rid).expect("the step").clone();
    let at = step("tl-rec-click").recording.expect("the click falls in the recording");
    assert_eq!(at.screen, 0);
    assert!((0.0..600.0).contains(&at.seconds), "{at:?} in {rec:?}");
    assert_eq!(step("tl-click").recording, None, "the first click came before it");
    let jsonl = server.client.export_timeline(id, ExportFormat::Jsonl).await.unwrap();
    let lines: Vec<DatasetLine> = String::from_utf8_lossy(&jsonl)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a dataset line"))
        .collect();
    let line = lines.iter().find(|l| l.request_id == "tl-rec-click").expect("the click's line");
    assert_eq!(line.recording.as_ref().map(|r| r.screen), Some(0), "{line:?}");
    let html = server.client.export_timeline(id, ExportFormat::Html).await.unwrap();
    assert!(String::from_utf8_lossy(&html).contains("recording of screen 0 at"));
    b.stop_recording(0).await.expect("stop the recording");
}
