//! Boxes on Docker through holmd, end to end: the real engine, the real image,
//! the real desktop.

use std::time::Duration;

use holm_client::BoxClient;
use holm_proto::ErrorCode;
use holm_proto::guest::{CommandRequest, ImageFormat, ProcessStart, ScreenshotOptions};
use holm_proto::host::{BoxState, CreateBox, Placement};
use holm_testkit::{TestServer, container_exists, e2e_enabled, eventually};

async fn new_box(server: &TestServer) -> String {
    let info =
        server.client.create_box(&CreateBox::default(), Some(600)).await.expect("create a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    assert_eq!(info.runtime, "docker");
    info.id
}

/// Decodes a PNG into (width, height, RGB or RGBA bytes, bytes per pixel).
fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>, usize) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let frame = reader.next_frame(&mut buf).expect("a frame");
    buf.truncate(frame.buffer_size());
    let bpp = frame.color_type.samples();
    (frame.width, frame.height, buf, bpp)
}

/// Starts an xterm named `name` in the box that writes what it is typed into
/// `file`, and waits until its window is on the screen.
async fn xterm_writing_to(b: &BoxClient, name: &str, geometry: &str, file: &str) {
    let start = ProcessStart {
        argv: Some(vec![
            "xterm".into(),
            "-name".into(),
            name.into(),
            "-geometry".into(),
            geometry.into(),
            "-en".into(),
            "UTF-8".into(),
            "-e".into(),
            "sh".into(),
            "-c".into(),
            format!("stty -echo; exec cat > {file}"),
        ]),
        env: [("LANG".to_owned(), "C.UTF-8".to_owned())].into(),
        ..ProcessStart::default()
    };
    b.start_process(&start).await.expect("start xterm");
    eventually(Duration::from_secs(30), "the xterm window", || async {
        let r = b.exec(&["xdotool", "search", "--onlyvisible", "--classname", name]).await.ok()?;
        (r.exit_code == Some(0) && r.stdout.lines().count() >= 1).then_some(())
    })
    .await;
}

async fn file_text(b: &BoxClient, path: &str, want: &str) -> String {
    eventually(Duration::from_secs(20), &format!("{path} to hold {want:?}"), || async {
        let bytes = b.read_file(path).await.ok()?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        (text == want).then_some(text)
    })
    .await
}

#[tokio::test]
async fn a_box_serves_its_desktop_commands_and_files() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let id = new_box(&server).await;
    assert!(container_exists(&id).await);
    let b = server.client.boxed(&id);

    // The screenshot decodes at the screen's size, and is not blank.
    let shot = b.screenshot(0, &ScreenshotOptions::default()).await.expect("screenshot");
    assert_eq!(shot.meta.format, ImageFormat::Png);
    let (w, h, pixels, bpp) = decode_png(&shot.bytes);
    assert_eq!((w, h), (1280, 800));
    let distinct: std::collections::HashSet<&[u8]> = pixels.chunks(bpp).collect();
    assert!(distinct.len() > 10, "the desktop looks blank: {} colours", distinct.len());

    // Commands: exit codes and output.
    let r = b
        .run(&CommandRequest {
            command: Some("echo out; echo err >&2; exit 3".into()),
            ..CommandRequest::default()
        })
        .await
        .expect("run");
    assert_eq!(r.exit_code, Some(3));
    assert_eq!(r.stdout, "out\n");
    assert_eq!(r.stderr, "err\n");

    // Files round-trip, byte for byte.
    let data: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
    b.write_file("/tmp/holm-e2e/data.bin", data.clone(), None).await.expect("write");
    assert_eq!(
        b.read_file("/tmp/holm-e2e/data.bin").await.expect("read").as_ref(),
        data.as_slice()
    );
    let missing = b.read_file("/tmp/holm-e2e/none").await.unwrap_err();
    assert_eq!(missing.api().map(|e| e.code), Some(ErrorCode::FileNotFound));

    // Delete removes the container.
    let removed = server.client.remove_box(&id).await.expect("remove");
    assert_eq!(removed.state, BoxState::Removed);
    assert!(!container_exists(&id).await);
    let gone = b.exec(&["true"]).await.unwrap_err();
    assert_eq!(gone.api().map(|e| e.code), Some(ErrorCode::NotRunning));
}

#[tokio::test]
async fn typed_unicode_arrives_and_clicks_land_on_the_window_asked_for() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let id = new_box(&server).await;
    let b = server.client.boxed(&id);
    // Two terminals side by side; a click picks the one that gets the keys.
    xterm_writing_to(&b, "left", "60x10+0+0", "/tmp/left.txt").await;
    xterm_writing_to(&b, "right", "60x10+700+0", "/tmp/right.txt").await;

    b.click(0, 900, 60).await.expect("click the right terminal");
    b.type_text(0, "right side\n").await.expect("type");
    file_text(&b, "/tmp/right.txt", "right side\n").await;

    b.click(0, 150, 60).await.expect("click the left terminal");
    let text = "héllo wörld ß ø € ж 中文\tend\n";
    b.type_text(0, text).await.expect("type unicode");
    file_text(&b, "/tmp/left.txt", text).await;
    // Nothing typed after the click went to the other terminal.
    assert_eq!(
        String::from_utf8_lossy(&b.read_file("/tmp/right.txt").await.unwrap()),
        "right side\n"
    );
    server.client.remove_box(&id).await.expect("remove");
}

#[tokio::test]
async fn memory_and_cpus_come_from_the_placement_and_labels_mark_the_box() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let request = CreateBox {
        placement: Placement { memory: Some("1g".into()), cpus: Some(1.5), ..Placement::default() },
        ..CreateBox::default()
    };
    let info = server.client.create_box(&request, Some(600)).await.expect("create");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    let docker = bollard::Docker::connect_with_defaults().unwrap();
    let c = docker.inspect_container(&format!("holm-{}", info.id), None).await.unwrap();
    let host = c.host_config.unwrap();
    assert_eq!(host.memory, Some(1 << 30));
    assert_eq!(host.nano_cpus, Some(1_500_000_000));
    // Published on loopback only, at a port the engine chose.
    let ports = c.network_settings.unwrap().ports.unwrap();
    let binding = &ports["8765/tcp"].as_ref().unwrap()[0];
    assert_eq!(binding.host_ip.as_deref(), Some("127.0.0.1"));
    // Labels mark the box; neither they nor the answer carry the secret.
    let labels = c.config.unwrap().labels.unwrap();
    assert_eq!(labels["holm.box"], info.id);
    let record =
        std::fs::read_to_string(server.state_dir.join(format!("boxes/{}.json", info.id))).unwrap();
    let secret = serde_json::from_str::<serde_json::Value>(&record).unwrap()["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(labels.values().all(|v| !v.contains(&secret)));
    assert!(!serde_json::to_string(&info).unwrap().contains(&secret));
    assert!(
        !serde_json::to_string(&server.client.get_box(&info.id, None).await.unwrap())
            .unwrap()
            .contains(&secret)
    );
    server.client.remove_box(&info.id).await.unwrap();
}

#[tokio::test]
async fn refusals_come_in_the_error_shape_and_change_nothing() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;

    // No token: refused, for every route but health.
    let anon = holm_client::Client::new(&server.url, None);
    anon.health().await.expect("health needs no token");
    let e = anon.create_box(&CreateBox::default(), None).await.unwrap_err();
    let api = e.api().expect("the error shape");
    assert_eq!(api.code, ErrorCode::Unauthorized);
    assert!(api.request_id.as_deref().is_some_and(|id| id.starts_with("req_")));
    let wrong = holm_client::Client::new(&server.url, Some("not-the-token-at-all"));
    assert_eq!(
        wrong.runtimes().await.unwrap_err().api().map(|e| e.code),
        Some(ErrorCode::Unauthorized)
    );

    // An unknown runtime: refused with the names the server has.
    let request = CreateBox {
        placement: Placement { runtime: Some("vmware".into()), ..Placement::default() },
        ..CreateBox::default()
    };
    let e = server.client.create_box(&request, None).await.unwrap_err();
    let api = e.api().expect("the error shape");
    assert_eq!(api.code, ErrorCode::UnknownRuntime);
    assert_eq!(api.details.as_ref().unwrap()["known"], serde_json::json!(["docker"]));
    assert!(api.hint.as_deref().unwrap().contains("docker"));

    // Unknown fields: each named.
    let http = holm_client::client_builder().build().unwrap();
    let r = http
        .post(format!("{}/v1/boxes", server.url))
        .bearer_auth(&server.token)
        .json(&serde_json::json!({"spec": {"screenz": 2}, "placement": {"ttl": 5}, "extra": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: serde_json::Value = r.json().await.unwrap();
    let paths: Vec<&str> = body["error"]["details"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["extra", "placement.ttl", "spec.screenz"]);

    // Nothing was created by any of it.
    assert!(server.client.all_boxes().await.unwrap().is_empty());
}
