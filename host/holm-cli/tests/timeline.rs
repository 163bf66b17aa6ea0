//! `holm timeline` from the real binary against a real holmd and a real
//! box: the table, `--json`, `--html FILE` (one page, the screenshot
//! inline) and `--dataset DIR` (`steps.jsonl`, one line per step, and the
//! PNG each names under `screenshots/`); an unknown box is the one error
//! shape with exit 1.

mod common;

use holm_proto::guest::ScreenshotOptions;
use holm_proto::host::{BoxState, CreateBox};
use holm_proto::timeline::{DatasetLine, Step};
use holm_testkit::{TestServer, e2e_enabled};

fn holm(server: &TestServer, args: &[&str]) -> std::process::Output {
    common::holm_with(server, args, None, &[], &[])
}

fn ok(server: &TestServer, args: &[&str]) -> String {
    let o = holm(server, args);
    assert!(o.status.success(), "holm {args:?}: {}", common::text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

// The server runs in this process while `holm` blocks this thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_timeline_from_the_cli() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let info = server.client.create_box(&CreateBox::default(), Some(600)).await.expect("a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    let id = info.id.as_str();
    let b = server.client.boxed(id);
    b.click(0, 30, 30).await.expect("click");
    b.screenshot(0, &ScreenshotOptions::default()).await.expect("a screenshot");
    b.exec(&["true"]).await.expect("a command");

    let table = ok(&server, &["timeline", id]);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("AT") && lines[0].contains("SCREENSHOT"), "{table}");
    assert_eq!(lines.len(), 3, "a header and two steps: {table}");
    assert!(lines[1].contains("input") && lines[1].contains("click") && lines[1].contains(".png"));
    assert!(lines[2].contains("command") && lines[2].contains("run"), "{table}");

    let steps: Vec<Step> = serde_json::from_str(&ok(&server, &["--json", "timeline", id])).unwrap();
    assert_eq!(steps.len(), 2);

    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("t.html");
    ok(&server, &["timeline", id, "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("src=\"data:image/png;base64,").count(), 1, "the screenshot inline");

    let data = dir.path().join("data");
    let said = ok(&server, &["timeline", id, "--dataset", data.to_str().unwrap()]);
    assert!(said.contains("2 steps"), "{said}");
    let text = std::fs::read_to_string(data.join("steps.jsonl")).unwrap();
    let rows: Vec<DatasetLine> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 2);
    let file = rows[0].screenshot.as_deref().expect("the click's screenshot");
    let png = std::fs::read(data.join(file)).expect("the file the line names");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    assert_eq!(rows[1].screenshot, None);

    let o = holm(&server, &["--json", "timeline", "box_nosuchbox1"]);
    assert_eq!(o.status.code(), Some(1));
    let err: serde_json::Value = serde_json::from_slice(&o.stderr).expect("the error shape");
    assert_eq!(err["error"]["code"], "not_found", "{err}");
    server.client.remove_box(id).await.expect("remove");
}
