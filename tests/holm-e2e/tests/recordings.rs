//! Recordings in real boxes on Docker, through holmd, on both profiles: a
//! box made with `"record": true` records screen 0 from its start; a second
//! start on a recorded screen and a stop where nothing runs are refused in
//! the one error shape and change nothing; the MCP tools stop, list and
//! start recordings; each file downloads as a real video of the screen's
//! size; and when the box is removed the server keeps its files (stopping
//! the running one first), so they are still listed and fetched after the
//! box is gone. The recorder in detail (frames that change, the size
//! limit, a box stopped while recording) is tested on both profiles in
//! holm-guest's tests/recordings.rs.

use std::path::Path;
use std::time::Duration;

use futures_util::StreamExt;
use holm_client::BoxClient;
use holm_proto::ErrorCode;
use holm_proto::host::{BoxSpec, BoxState, CreateBox};
use holm_proto::recording::{Recording, RecordingStart, RecordingState, StopReason};
use holm_testkit::eventually;
use holm_testkit::matrix::Target;
use holm_testkit::mcp::{McpClient, Sdk, Transport, text};
use serde_json::json;

holm_testkit::suite!(recordings_work_through_holmd_and_mcp_and_outlive_the_box: docker [x11, wayland]);

/// Fetches `file` and checks with ffprobe that it is H.264 of the box's
/// screen size (1280x800) with a duration.
async fn check_video(b: &BoxClient, file: &str, dir: &Path) {
    let mut stream = std::pin::pin!(b.recording_stream(file).await.expect("fetch the file"));
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        bytes.extend_from_slice(&chunk.expect("a chunk"));
    }
    let path = dir.join(file);
    std::fs::write(&path, &bytes).unwrap();
    let out = std::process::Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0"])
        .args(["-show_entries", "stream=codec_name,width,height:format=duration", "-of", "json"])
        .arg(&path)
        .output()
        .expect("ffprobe is installed (.ci/setup installs ffmpeg)");
    assert!(out.status.success(), "ffprobe: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["streams"][0];
    assert_eq!(
        (s["codec_name"].as_str(), s["width"].as_u64(), s["height"].as_u64()),
        (Some("h264"), Some(1280), Some(800)),
        "{v}"
    );
    let duration: f64 =
        v["format"]["duration"].as_str().and_then(|d| d.parse().ok()).unwrap_or(0.0);
    assert!(duration > 0.0, "{v}");
}

fn running(list: &[Recording]) -> Option<&Recording> {
    list.iter().find(|r| r.state == RecordingState::Recording)
}

async fn recordings_work_through_holmd_and_mcp_and_outlive_the_box(target: Target) {
    let server = target.server().await;
    let spec = BoxSpec { display: Some(target.display), record: Some(true), ..BoxSpec::default() };
    let info = server
        .client
        .create_box(&CreateBox { spec, ..CreateBox::default() }, Some(600))
        .await
        .expect("create a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    let b = server.client.boxed(&info.id);
    let dir = tempfile::tempdir().unwrap();

    // The box records screen 0 from its start.
    let first = eventually(Duration::from_secs(30), "the box's own recording", || async {
        let list = b.recordings().await.ok()?;
        running(&list).filter(|r| r.bytes > 0).cloned()
    })
    .await;
    assert_eq!((first.screen, first.width, first.height), (0, 1280, 800), "{first:?}");
    let e = b.start_recording(&RecordingStart::default()).await.unwrap_err();
    assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::Conflict));
    assert_eq!(b.recordings().await.unwrap().len(), 1, "a refused start changes nothing");

    // MCP stops it, lists it, and starts another.
    let transport =
        Transport::Http { url: format!("{}/mcp", server.url), token: Some(server.token.clone()) };
    let mut mcp = McpClient::connect(&transport, Sdk::V2).await.expect("connect");
    let stopped = mcp.call("stop_recording", json!({"box_id": info.id, "screen": 0})).await;
    assert_eq!(stopped["structuredContent"]["stopped_by"], "requested", "{}", text(&stopped));
    let before = b.recordings().await.unwrap();
    let again = mcp.refused("stop_recording", json!({"box_id": info.id})).await;
    assert_eq!(again["structuredContent"]["error"]["code"], "conflict", "{again}");
    let e = b.stop_recording(0).await.unwrap_err();
    assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::Conflict));
    assert_eq!(b.recordings().await.unwrap(), before, "a refused stop changes nothing");
    let listed = mcp.call("list_recordings", json!({"box_id": info.id})).await;
    assert_eq!(listed["structuredContent"]["recordings"][0]["file"], first.file.as_str());
    let started =
        mcp.call("start_recording", json!({"box_id": info.id, "screen": 0, "fps": 5})).await;
    let second = started["structuredContent"]["file"].as_str().unwrap().to_owned();
    check_video(&b, &first.file, dir.path()).await;
    eventually(Duration::from_secs(30), "the second recording to hold frames", || async {
        let list = b.recordings().await.ok()?;
        running(&list).filter(|r| r.bytes > 0).map(drop)
    })
    .await;

    // Removing the box keeps its files: the running one is stopped first.
    server.client.remove_box(&info.id).await.expect("remove the box");
    let kept = b.recordings().await.expect("the kept recordings");
    let files: Vec<&str> = kept.iter().map(|r| r.file.as_str()).collect();
    assert_eq!(files, [first.file.as_str(), second.as_str()], "{kept:?}");
    assert_eq!(kept[1].stopped_by, Some(StopReason::Requested), "{kept:?}");
    assert_eq!(kept[0].started_at, first.started_at);
    check_video(&b, &second, dir.path()).await;
    let e = b.recording_stream("screen0-none.mp4").await.err().expect("an unknown file");
    assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::NotFound));
}
