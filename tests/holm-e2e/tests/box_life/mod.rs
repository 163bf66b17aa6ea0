//! The shared box suite's scenario (`core.rs` runs it on every runtime and
//! profile, `live_vendors.rs` at the real vendors): see `core.rs`.

use std::time::Duration;

use holm_client::{BoxClient, Client};
use holm_proto::ErrorCode;
use holm_proto::guest::{CommandRequest, ImageFormat, ProcessStart, ScreenshotOptions};
use holm_proto::host::{BoxInfo, BoxSpec, BoxState, ForkBox, Placement};
use holm_testkit::desk::{
    file_text, stream_shows_the_screen, terminal_writing_to, window_middle, window_rect, work_area,
};
use holm_testkit::load::Load;
use holm_testkit::matrix::Target;
use holm_testkit::rfb;
use holm_testkit::{Profile, SERVE_PL, TestServer, eventually};

pub async fn a_box_lives_its_whole_life(target: Target) {
    let server = target.server().await;
    let placement = Placement {
        memory: Some(target.memory().0.into()),
        cpus: Some(target.cpus()),
        ..Placement::default()
    };
    let info = server
        .client
        .create_box(&target.request(BoxSpec::default(), placement), Some(600))
        .await
        .expect("create a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    assert_eq!(info.runtime, target.runtime_name());
    let b = server.client.boxed(&info.id);
    let guest = b.info().await.expect("the guest's info");
    assert_eq!(guest.profile, target.display, "{guest:?}");
    let can = server.client.runtime(&info.runtime).await.expect("the runtime").can;

    the_container_has_its_resources_labels_and_loopback_ports(&target, &server, &info).await;
    the_box_runs_on_the_kernel_its_isolation_gives(&target, &b).await;
    a_screenshot_shows_the_desktop(&b).await;
    the_browser_fills_the_work_area(&b, target.display).await;
    commands_and_files_work(&b).await;
    if target.isolation == Some("runsc") {
        // Debian's 2022 runsc gives the box no pty on this kernel, so the
        // terminals the typing step types into cannot open; said here, so
        // a runsc that has ptys fails this and brings the step back.
        let r = b.exec(&["sh", "-c", "ls /dev/pts"]).await.expect("exec");
        assert_ne!(r.exit_code, Some(0), "ptys work under runsc now: {r:?}");
    } else {
        clicks_pick_the_window_and_unicode_arrives(&b, target.display).await;
    }
    a_viewer_url_streams_the_screen(&server.client, &b, &info.id).await;
    the_bridge_and_page_tools_reach_chromium(&target, &b).await;
    if can.pause {
        pause_keeps_a_process_memory(&target, &server.client, &b, &info.id).await;
    } else {
        refused(server.client.pause_box(&info.id).await.map(drop)).await;
    }
    if can.fork {
        a_fork_copies_the_files_with_a_new_secret(&target, &server, &b, &info.id).await;
    } else {
        refused(server.client.fork_box(&info.id, &ForkBox::default(), None, None).await.map(drop))
            .await;
    }
    if can.stop {
        stop_keeps_the_files_and_start_gives_a_new_desktop(&target, &server.client, &b, &info.id)
            .await;
    } else {
        refused(server.client.stop_box(&info.id).await.map(drop)).await;
    }

    let removed = server.client.remove_box(&info.id).await.expect("remove");
    assert_eq!(removed.state, BoxState::Removed);
    if target.live {
        // Its sandbox leaves the vendor's list (which may lag a removal).
        let runtime = server.service.runtime(&info.runtime).expect("the runtime").runtime;
        eventually(Duration::from_secs(60), "its sandbox to leave the vendor", || async {
            runtime.find(&info.id).await.expect("the vendor's list").is_none().then_some(())
        })
        .await;
    } else {
        assert!(!target.container_exists(&info.id).await, "its container is gone");
    }
    let gone = b.exec(&["true"]).await.unwrap_err();
    assert_eq!(gone.api().map(|e| e.code), Some(ErrorCode::NotRunning));
}

/// A change the runtime cannot make is refused as unsupported.
async fn refused(result: Result<(), holm_client::ClientError>) {
    let e = result.expect_err("the runtime cannot do it");
    assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::Unsupported), "{e}");
}

fn secret_of(server: &TestServer, id: &str) -> String {
    let record =
        std::fs::read_to_string(server.state_dir.join(format!("boxes/{id}.json"))).unwrap();
    serde_json::from_str::<serde_json::Value>(&record).unwrap()["secret"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn the_container_has_its_resources_labels_and_loopback_ports(
    target: &Target,
    server: &TestServer,
    info: &BoxInfo,
) {
    let secret = secret_of(server, &info.id);
    assert!(!serde_json::to_string(info).unwrap().contains(&secret));
    let shown = server.client.get_box(&info.id, None).await.unwrap();
    assert!(!serde_json::to_string(&shown).unwrap().contains(&secret));
    if target.live {
        // A real vendor's sandbox is not on the local engine to look at.
        return;
    }
    if target.kube.is_some() {
        return the_pod_has_its_resources_and_no_secret(target, &secret, info).await;
    }
    let c = target.container(&info.id).await;
    let host = c.host_config.clone().unwrap();
    assert_eq!(host.memory, Some(target.memory().1));
    assert_eq!(host.nano_cpus, Some((target.cpus() * 1e9) as i64));
    // Published on loopback only, at a port the engine chose.
    let ports = c.network_settings.unwrap().ports.unwrap();
    for port in ["8765/tcp", "9223/tcp"] {
        let binding = &ports[port].as_ref().unwrap()[0];
        assert_eq!(binding.host_ip.as_deref(), Some("127.0.0.1"), "{port}");
    }
    // Labels mark the box; neither they nor the answers carry the secret.
    let labels = c.config.unwrap().labels.unwrap();
    assert_eq!(labels["holm.box"], info.id);
    assert_eq!(labels["holm.runtime"], target.runtime_name());
    assert!(labels.values().all(|v| !v.contains(&secret)));
}

/// On Kubernetes a box's memory and CPUs are its pod's requests and
/// limits (the stand-in's kubelet passes none to the engine), it mounts no
/// service account token, its ports are published on the pod's own
/// loopback address, and nothing of the pod carries the secret.
async fn the_pod_has_its_resources_and_no_secret(target: &Target, secret: &str, info: &BoxInfo) {
    let found = target.kube_pod(&info.id).expect("the box's pod");
    let pod = &found.pod;
    let box_container = &pod["spec"]["containers"][0];
    let cpu = format!("{}m", (target.cpus() * 1000.0) as i64);
    for kind in ["requests", "limits"] {
        let resources = &box_container["resources"][kind];
        assert_eq!(resources["memory"], target.memory().1.to_string(), "{kind}");
        assert_eq!(resources["cpu"], cpu.as_str(), "{kind}");
    }
    assert_eq!(pod["spec"]["automountServiceAccountToken"], false);
    let ip: std::net::Ipv4Addr = pod["status"]["podIP"].as_str().unwrap().parse().unwrap();
    assert!(ip.is_loopback(), "{ip}");
    let ports = target.container(&info.id).await.network_settings.unwrap().ports.unwrap();
    for port in ["8765/tcp", "9223/tcp"] {
        let binding = &ports[port].as_ref().unwrap()[0];
        assert_eq!(binding.host_ip.as_deref(), Some(ip.to_string().as_str()), "{port}");
    }
    assert!(!pod.to_string().contains(secret), "{pod}");
}

/// Under gVisor the box's kernel is gVisor's (its log starts "Starting
/// gVisor..."); under runc it is the host's. At a real vendor the kernel is
/// the vendor's (Modal's gVisor, a Firecracker VM's): not checked.
async fn the_box_runs_on_the_kernel_its_isolation_gives(target: &Target, b: &BoxClient) {
    if target.live {
        return;
    }
    let r = b.exec(&["sh", "-c", "dmesg 2>&1 | head -n 3; uname -r"]).await.expect("exec");
    let gvisor = r.stdout.contains("gVisor");
    assert_eq!(gvisor, target.isolation == Some("runsc"), "{target:?}: {}", r.stdout);
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

async fn a_screenshot_shows_the_desktop(b: &BoxClient) {
    let shot = b.screenshot(0, &ScreenshotOptions::default()).await.expect("screenshot");
    assert_eq!(shot.meta.format, ImageFormat::Png);
    let (w, h, pixels, bpp) = decode_png(&shot.bytes);
    assert_eq!((w, h), (1280, 800));
    let distinct: std::collections::HashSet<&[u8]> = pixels.chunks(bpp).collect();
    assert!(distinct.len() > 10, "the desktop looks blank: {} colours", distinct.len());
}

async fn commands_and_files_work(b: &BoxClient) {
    let r = b
        .run(&CommandRequest {
            command: Some("echo out; echo err >&2; exit 3".into()),
            ..CommandRequest::default()
        })
        .await
        .expect("run");
    assert_eq!((r.exit_code, r.stdout.as_str(), r.stderr.as_str()), (Some(3), "out\n", "err\n"));
    // Files round-trip, byte for byte.
    let data: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
    b.write_file("/tmp/holm-e2e/data.bin", data.clone(), None).await.expect("write");
    let read = b.read_file("/tmp/holm-e2e/data.bin").await.expect("read");
    assert_eq!(read.as_ref(), data.as_slice());
    let missing = b.read_file("/tmp/holm-e2e/none").await.unwrap_err();
    assert_eq!(missing.api().map(|e| e.code), Some(ErrorCode::FileNotFound));
}

async fn clicks_pick_the_window_and_unicode_arrives(b: &BoxClient, display: Profile) {
    // On a machine whose CPUs are all busy: the box's clients lag far behind.
    let _load = Load::saturate(Duration::from_secs(180));
    // Two terminals side by side; a click picks the one that gets the keys.
    let left = terminal_writing_to(b, display, "left", "60x10+0+0", "/tmp/left.txt").await;
    let right = terminal_writing_to(b, display, "right", "60x10+700+0", "/tmp/right.txt").await;
    // On Wayland the first terminal's tile moved when the second came.
    let left = window_middle(b, display, "left").await.unwrap_or(left);
    assert!(right.0 > left.0, "left {left:?}, right {right:?}");
    b.click(0, right.0, right.1).await.expect("click the right terminal");
    b.type_text(0, "right side\n").await.expect("type");
    file_text(b, "/tmp/right.txt", "right side\n").await;
    b.click(0, left.0, left.1).await.expect("click the left terminal");
    let text = "héllo wörld ß ø € ж 中文\tend\n";
    b.type_text(0, text).await.expect("type unicode");
    file_text(b, "/tmp/left.txt", text).await;
    // Nothing typed after the click went to the other terminal.
    let right = b.read_file("/tmp/right.txt").await.unwrap();
    assert_eq!(String::from_utf8_lossy(&right), "right side\n");
}

/// The box's first watch-only URL, opened as a person's page would (through
/// holmd, with the URL's own token, and at a vendor through its proxy),
/// streams what a screenshot shows.
async fn a_viewer_url_streams_the_screen(client: &Client, b: &BoxClient, id: &str) {
    let info = client.get_box(id, None).await.expect("get the box");
    let url = &info.viewers.first().expect("a viewer per screen").view_url;
    let mut v = rfb::open(url).await.expect("the viewer URL is let in");
    stream_shows_the_screen(b, &mut v).await;
}

/// What a person opening a viewer sees is tidy: Chromium's window is
/// maximized inside the work area, none of it above the screen's top or
/// under fluxbox's toolbar.
async fn the_browser_fills_the_work_area(b: &BoxClient, display: Profile) {
    let name = match display {
        Profile::X11 => "chromium",
        Profile::Wayland => "holm-chromium-0",
    };
    // The window manager may place the window a moment after it appears.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut seen = None;
    while std::time::Instant::now() < deadline {
        if let (Some(window), Some(area)) =
            (window_rect(b, display, name).await, work_area(b, display).await)
        {
            let fills =
                window.width * 10 >= area.width * 9 && window.height * 10 >= area.height * 9;
            if window.within(&area) && fills {
                return;
            }
            seen = Some((window, area));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("Chromium's window and the work area, last seen: {seen:?}: not maximized inside it");
}

const PAGE: &str = r#"<!doctype html><title>Core page</title>
<button id="go" onclick="this.textContent = 'clicked'">Go</button>"#;

async fn the_bridge_and_page_tools_reach_chromium(target: &Target, b: &BoxClient) {
    // A page served from inside the box, driven with page tools.
    b.write_file("/tmp/site/serve.pl", SERVE_PL.as_bytes().to_vec(), None).await.unwrap();
    b.write_file("/tmp/site/index.html", PAGE.as_bytes().to_vec(), None).await.unwrap();
    let argv = ["perl", "/tmp/site/serve.pl", "8000", "/tmp/site"].map(str::to_owned).to_vec();
    b.start_process(&ProcessStart { argv: Some(argv), ..ProcessStart::default() }).await.unwrap();
    let page = eventually(Duration::from_secs(60), "the page in the box", || async {
        b.navigate("http://127.0.0.1:8000/").await.ok().filter(|p| p.title == "Core page")
    })
    .await;
    assert_eq!(page.title, "Core page");
    b.page_click("#go").await.expect("click by selector");
    let text = b.evaluate("document.getElementById('go').textContent").await.unwrap();
    assert_eq!(text.value, "clicked");

    // The bridge answers with its secret, and refuses without it.
    let access = b.bridge(None).await.expect("bridge access");
    // Loopback: the engine's port, a stand-in's proxy, or a pod's own
    // loopback address; at a real vendor its proxy's public URL.
    let local = if target.live { "https://" } else { "http://127." };
    assert!(access.http_url.starts_with(local), "{}", access.http_url);
    let http = holm_client::client_builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let version = format!("{}/json/version", access.http_url);
    // Every header the access gives: the bridge's secret, and at a vendor
    // the proxy's token too.
    let mut with = http.get(&version);
    for (k, v) in &access.headers {
        with = with.header(k, v);
    }
    let v: serde_json::Value = with.send().await.unwrap().json().await.unwrap();
    let ws = v["webSocketDebuggerUrl"].as_str().unwrap();
    assert!(ws.starts_with("ws://") || ws.starts_with("wss://"), "{v}");
    if !target.live {
        assert!(ws.starts_with("ws://127."), "{v}");
    }
    let bare = http.get(&version).send().await.unwrap().status();
    match target.vendor {
        None => assert_eq!(bare, 401),
        // The vendor's proxy refuses first (vendors.rs checks how).
        Some(_) => assert!(!bare.is_success(), "{bare}"),
    }
}

async fn pause_keeps_a_process_memory(target: &Target, client: &Client, b: &BoxClient, id: &str) {
    // The count lives only in the shell's memory; the file shows it.
    let script = "i=0; while :; do i=$((i+1)); echo \"$$ $i\" > /tmp/count.tmp; \
                  mv /tmp/count.tmp /tmp/count; sleep 0.05; done";
    let argv = ["sh", "-c", script].map(str::to_owned).to_vec();
    b.start_process(&ProcessStart { argv: Some(argv), ..ProcessStart::default() }).await.unwrap();
    let read = |b: BoxClient| async move {
        let t = String::from_utf8_lossy(&b.read_file("/tmp/count").await.ok()?).into_owned();
        let (pid, n) = t.trim().split_once(' ')?;
        Some((pid.to_owned(), n.parse::<u64>().ok()?))
    };
    let (pid, n1) = eventually(Duration::from_secs(30), "the counter to count past 20", || {
        let b = b.clone();
        async move { read(b).await.filter(|(_, n)| *n > 20) }
    })
    .await;
    assert_eq!(client.pause_box(id).await.unwrap().state, BoxState::Paused);
    if !target.live {
        let c = target.container(id).await;
        assert_eq!(c.state.unwrap().paused, Some(true), "the engine paused it");
    }
    let e = b.exec(&["true"]).await.unwrap_err();
    assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::NotRunning));
    assert_eq!(client.resume_box(id).await.unwrap().state, BoxState::Running);
    // The same process goes on counting from where it was, not from 1.
    let (pid2, n2) = eventually(Duration::from_secs(30), "the counter to go on", || {
        let b = b.clone();
        async move { read(b).await.filter(|(_, n)| *n > n1) }
    })
    .await;
    assert_eq!(pid2, pid, "the same process");
    assert!(n2 > n1);
}

async fn a_fork_copies_the_files_with_a_new_secret(
    target: &Target,
    server: &TestServer,
    b: &BoxClient,
    id: &str,
) {
    b.write_file("/root/before-fork.txt", b"from the original".to_vec(), None).await.unwrap();
    let fork = server.client.fork_box(id, &ForkBox::default(), Some("fork-key-1"), Some(300)).await;
    let fork = fork.expect("fork");
    assert_eq!(fork.state, BoxState::Running, "{fork:?}");
    assert_eq!(fork.forked_from.as_deref(), Some(id));
    assert_eq!(fork.runtime, target.runtime_name());
    // Repeated with its key: the same copy.
    let again =
        server.client.fork_box(id, &ForkBox::default(), Some("fork-key-1"), None).await.unwrap();
    assert_eq!((again.id.as_str(), again.replayed), (fork.id.as_str(), true));

    let f = server.client.boxed(&fork.id);
    assert_eq!(text(&f, "/root/before-fork.txt").await, "from the original");
    f.write_file("/root/only-in-fork.txt", b"x".to_vec(), None).await.unwrap();
    assert!(b.read_file("/root/only-in-fork.txt").await.is_err(), "each goes its own way");
    assert!(!f.screenshot(0, &ScreenshotOptions::default()).await.unwrap().bytes.is_empty());

    // A new secret, and the copied image does not hold the original's.
    let (s1, s2) = (secret_of(server, id), secret_of(server, &fork.id));
    assert_ne!(s1, s2);
    let engine = target.engine.client();
    let image = format!("holm-fork:{}", fork.id);
    let inspected = engine.inspect_image(&image).await.expect("the fork's image");
    let raw = serde_json::to_string(&inspected).unwrap();
    assert!(raw.contains("\"Config\""), "{raw}");
    for secret in [&s1, &s2] {
        assert!(!raw.contains(secret.as_str()), "the fork's image holds a box secret: {raw}");
    }
    // Nor do the containers: each holds only its secret's digest.
    for c in [id, fork.id.as_str()] {
        let raw = serde_json::to_string(&target.container(c).await).unwrap();
        assert!(!raw.contains(&s1) && !raw.contains(&s2), "a container holds a box secret");
    }

    // Removing the copy removes its image; the original runs on.
    server.client.remove_box(&fork.id).await.unwrap();
    assert!(!target.container_exists(&fork.id).await);
    assert!(engine.inspect_image(&image).await.is_err(), "the fork's image stays");
    assert!(b.exec(&["true"]).await.is_ok());
}

async fn text(b: &BoxClient, path: &str) -> String {
    String::from_utf8_lossy(&b.read_file(path).await.expect("read")).into_owned()
}

async fn stop_keeps_the_files_and_start_gives_a_new_desktop(
    target: &Target,
    client: &Client,
    b: &BoxClient,
    id: &str,
) {
    b.write_file("/root/kept.txt", b"still here".to_vec(), None).await.unwrap();
    let argv = ["sleep", "600"].map(str::to_owned).to_vec();
    let p = b.start_process(&ProcessStart { argv: Some(argv), ..ProcessStart::default() }).await;
    let p = p.unwrap();
    assert_eq!(client.stop_box(id).await.unwrap().state, BoxState::Stopped);
    let e = b.exec(&["true"]).await.unwrap_err();
    assert_eq!(e.api().map(|e| e.code), Some(ErrorCode::NotRunning));

    let started = client.start_box(id, Some(600)).await.unwrap();
    if started.state != BoxState::Running {
        panic!("started: {started:?}\n{}", target.diagnose(id).await);
    }
    assert_eq!(text(b, "/root/kept.txt").await, "still here", "the files are kept");
    // A new desktop: the guest started again, so the old processes are gone.
    let processes = b.processes().await.unwrap();
    assert!(processes.is_empty(), "{} of the old desktop survived: {processes:?}", p.id);
    let shot = b.screenshot(0, &ScreenshotOptions::default()).await.expect("a new desktop");
    assert!(!shot.bytes.is_empty());
}
