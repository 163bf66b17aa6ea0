//! Recordings, on both display profiles: a recording made while the
//! pointer moves is a real video (H.264, the screen's size, more than one
//! distinct frame, a duration) and downloads whole; bad input (a stop where
//! nothing runs, a second start on a recorded screen, a bad frame rate or
//! screen, an unknown file) is refused in the one error shape and changes
//! nothing; the size limit stops a recording with `size_limit` and then
//! refuses a start; a box recorded for its whole life finishes its file
//! when it stops.

// The test process is not the guest: it runs ffprobe and waits on it like
// any parent. The one-reaper rule (clippy.toml) binds the guest only.
#![allow(clippy::disallowed_methods)]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{Guest, Options, Profile, eventually, require_programs};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);

crate::profiles!(
    a_recording_is_a_real_video_and_bad_input_changes_nothing,
    the_size_limit_stops_a_recording_and_refuses_the_next,
    a_box_recorded_for_its_life_finishes_its_file_when_it_stops,
);

/// The suites of this file run one at a time: each encodes video.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn start(p: Profile, env: Vec<(&'static str, String)>) -> Guest {
    require_programs(&["ffmpeg", "ffprobe"]);
    Guest::start(Options { profile: p, sizes: "640x480".into(), env, ..Options::default() }).await
}

async fn send(r: reqwest::RequestBuilder) -> (u16, Value) {
    let r = r.send().await.unwrap();
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn list(g: &Guest) -> Vec<Value> {
    let (status, v) = send(g.get("/v1/recordings")).await;
    assert_eq!(status, 200, "{v}");
    v["data"].as_array().unwrap().clone()
}

/// Answers the status and error code, after checking the one error shape.
async fn refused(r: reqwest::RequestBuilder) -> (u16, String) {
    let (status, v) = send(r).await;
    let e = &v["error"];
    assert!(e["message"].is_string() && e["request_id"].is_string(), "not the error shape: {v}");
    (status, e["code"].as_str().unwrap().to_owned())
}

/// Moves the pointer along a line of the screen, so frames differ.
async fn wiggle(g: &Guest, step: u32) {
    let x = 40 + (step * 37) % 560;
    let y = 40 + (step * 23) % 400;
    let (status, v) =
        send(g.post("/v1/screens/0/input").json(&json!({"actions":[{"type":"move","x":x,"y":y}]})))
            .await;
    assert_eq!(status, 200, "{v}");
}

/// What ffprobe says of a video: codec, width, height, frames, duration.
fn probe(path: &Path) -> (String, u64, u64, u64, f64) {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0", "-count_frames"])
        .args(["-show_entries", "stream=codec_name,width,height,nb_read_frames:format=duration"])
        .args(["-of", "json"])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "ffprobe: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["streams"][0];
    let num = |v: &Value| v.as_str().and_then(|s| s.parse().ok()).or(v.as_u64()).unwrap_or(0);
    let duration: f64 =
        v["format"]["duration"].as_str().and_then(|d| d.parse().ok()).unwrap_or(0.0);
    (
        s["codec_name"].as_str().unwrap_or_default().to_owned(),
        num(&s["width"]),
        num(&s["height"]),
        num(&s["nb_read_frames"]),
        duration,
    )
}

/// How many distinct frames a video has.
fn distinct_frames(path: &Path) -> usize {
    let out = Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(path)
        .args(["-f", "framemd5", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "ffmpeg: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let sums: std::collections::BTreeSet<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(',').next_back())
        .collect();
    sums.len()
}

/// Checks a downloaded or kept file is a video of the screen's size.
fn check_video(path: &Path) {
    let (codec, width, height, frames, duration) = probe(path);
    assert_eq!((codec.as_str(), width, height), ("h264", 640, 480), "{}", path.display());
    assert!(frames >= 1 && duration > 0.0, "{frames} frames, {duration} s");
}

async fn a_recording_is_a_real_video_and_bad_input_changes_nothing(p: Profile) {
    let _one = ONE_AT_A_TIME.lock().await;
    let g = start(p, Vec::new()).await;
    // Nothing runs: each refusal changes nothing.
    let stop = || g.post("/v1/recordings/stop").json(&json!({"screen": 0}));
    assert_eq!(refused(stop()).await, (409, "conflict".into()));
    let bad_fps = g.post("/v1/recordings").json(&json!({"fps": 0}));
    assert_eq!(refused(bad_fps).await, (400, "invalid_request".into()));
    let bad_screen = g.post("/v1/recordings").json(&json!({"screen": 4}));
    assert_eq!(refused(bad_screen).await, (404, "not_found".into()));
    let unknown = g.get("/v1/recordings/screen0-nothing.mp4");
    assert_eq!(refused(unknown).await, (404, "not_found".into()));
    assert!(list(&g).await.is_empty());

    let (status, rec) = send(g.post("/v1/recordings").json(&json!({"screen": 0, "fps": 10}))).await;
    assert_eq!(status, 200, "{rec}");
    assert_eq!((rec["state"].as_str(), rec["width"].as_u64()), (Some("recording"), Some(640)));
    let started = rec["started_at"].as_str().unwrap();
    assert!(humantime::parse_rfc3339(started).is_ok() && started.ends_with('Z'), "{started}");
    let again = g.post("/v1/recordings").json(&json!({"screen": 0}));
    assert_eq!(refused(again).await, (409, "conflict".into()));
    let file = rec["file"].as_str().unwrap().to_owned();
    // A running recording is not removed.
    assert_eq!(
        refused(g.req(reqwest::Method::DELETE, &format!("/v1/recordings/{file}"))).await.0,
        409
    );
    assert_eq!(list(&g).await.len(), 1);

    // Something visible changes until the file holds more than its start.
    let mut step = 0;
    eventually(WAIT, "the recording to grow", || {
        step += 1;
        let g = &g;
        async move {
            wiggle(g, step).await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            let r = list(g).await.remove(0);
            (step > 20 && r["bytes"].as_u64().unwrap() > 0).then_some(())
        }
    })
    .await;
    let (status, done) = send(stop()).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(
        (done["state"].as_str(), done["stopped_by"].as_str()),
        (Some("finished"), Some("requested"))
    );
    assert!(done["ended_at"].is_string() && done["started_at"] == rec["started_at"]);
    let before = list(&g).await;
    assert_eq!(refused(stop()).await, (409, "conflict".into()));
    assert_eq!(list(&g).await, before, "a refused stop changes nothing");

    let r = g.get(&format!("/v1/recordings/{file}")).send().await.unwrap();
    assert_eq!(r.headers()["content-type"], "video/mp4");
    let bytes = r.bytes().await.unwrap();
    assert_eq!(bytes.len() as u64, done["bytes"].as_u64().unwrap());
    let path = g.home.join("fetched.mp4");
    std::fs::write(&path, &bytes).unwrap();
    check_video(&path);
    assert!(distinct_frames(&path) > 1, "the pointer moved, so frames differ");

    let (status, _) = send(g.req(reqwest::Method::DELETE, &format!("/v1/recordings/{file}"))).await;
    assert_eq!(status, 204);
    assert!(list(&g).await.is_empty());
}

async fn the_size_limit_stops_a_recording_and_refuses_the_next(p: Profile) {
    let _one = ONE_AT_A_TIME.lock().await;
    let limit = 40_000u64;
    let env = vec![
        ("HOLM_RECORDING_MAX_BYTES", limit.to_string()),
        ("HOLM_RECORDINGS_MAX_BYTES", limit.to_string()),
    ];
    let g = start(p, env).await;
    let (status, rec) = send(g.post("/v1/recordings").json(&json!({"fps": 30}))).await;
    assert_eq!(status, 200, "{rec}");
    let mut step = 0;
    let ended = eventually(WAIT, "the size limit to stop the recording", || {
        step += 1;
        let g = &g;
        async move {
            wiggle(g, step).await;
            let r = list(g).await.remove(0);
            (r["state"] != "recording").then_some(r)
        }
    })
    .await;
    assert_eq!(
        (ended["state"].as_str(), ended["stopped_by"].as_str()),
        (Some("finished"), Some("size_limit"))
    );
    assert!(ended["bytes"].as_u64().unwrap() >= limit, "{ended}");
    let refused_start = g.post("/v1/recordings").json(&json!({}));
    assert_eq!(refused(refused_start).await, (429, "limit_reached".into()));
    assert_eq!(list(&g).await, vec![ended.clone()], "a refused start changes nothing");
    let kept = g.home.join(".holm/recordings").join(ended["file"].as_str().unwrap());
    check_video(&kept);
}

async fn a_box_recorded_for_its_life_finishes_its_file_when_it_stops(p: Profile) {
    let _one = ONE_AT_A_TIME.lock().await;
    let mut g = start(p, vec![("HOLM_RECORD", "on".into())]).await;
    let mut step = 0;
    let rec = eventually(WAIT, "the box's recording to start and grow", || {
        step += 1;
        let g = &g;
        async move {
            wiggle(g, step).await;
            let all = list(g).await;
            let r = all.first()?.clone();
            (r["state"] == "recording" && r["bytes"].as_u64()? > 0 && step > 10).then_some(r)
        }
    })
    .await;
    assert_eq!(rec["screen"], 0);
    assert!(g.terminate(), "the guest ends by itself on SIGTERM");
    let dir = g.home.join(".holm/recordings");
    let file = rec["file"].as_str().unwrap();
    let kept: Value =
        serde_json::from_slice(&std::fs::read(dir.join(file).with_extension("json")).unwrap())
            .unwrap();
    assert_eq!(
        (kept["state"].as_str(), kept["stopped_by"].as_str()),
        (Some("finished"), Some("box_stopping"))
    );
    check_video(&dir.join(file));
}
