//! `holm bench --quick` (the `holm-bench` program) end to end: real boxes on
//! the real Docker engine, every row measured, the report written, every box
//! removed. No time is asserted: the figures are the benchmark's to print,
//! not a test's to judge.

use std::collections::BTreeSet;
use std::process::Command;

use holm_testkit::{Profile, container_exists, e2e_enabled, ensure_image, ensure_image_of};

const ROWS: [&str; 23] = [
    "screenshot_png_vs_import",
    "screenshot_png_vs_xwd_convert",
    "screenshot_jpeg_vs_import",
    "screenshot_jpeg_vs_xwd_convert",
    "click_vs_xdotool",
    "type_ascii_vs_xdotool",
    "type_ascii_vs_xdotool_delay0",
    "type_non_ascii_vs_xdotool",
    "type_non_ascii_vs_xdotool_delay0",
    "type_long_vs_xdotool",
    "type_long_vs_xdotool_delay0",
    "act_and_see_vs_exec",
    "act_and_see_settled_vs_exec",
    "holmd_overhead_screenshot",
    "holmd_overhead_click",
    "busy_screenshot_png_vs_xwd_convert",
    "busy_screenshot_jpeg_vs_xwd_convert",
    "busy_screenshot_webp_vs_xwd_convert",
    "settle_quiet_10ms_vs_fixed_wait",
    "settle_quiet_25ms_vs_fixed_wait",
    "settle_quiet_50ms_vs_fixed_wait",
    "settle_quiet_100ms_vs_fixed_wait",
    "settle_quiet_200ms_vs_fixed_wait",
];

const STAGES: [&str; 7] =
    ["container", "guest", "xvfb", "fluxbox", "chromium", "chromium_window", "running"];

const WAYLAND_ROWS: [&str; 6] = [
    "wayland_screenshot_png_vs_grim",
    "wayland_click_vs_swaymsg",
    "wayland_type_ascii_vs_wtype",
    "wayland_type_non_ascii_vs_wtype",
    "wayland_act_and_see_vs_exec",
    "wayland_act_and_see_settled_vs_exec",
];

const WAYLAND_STAGES: [&str; 6] =
    ["container", "guest", "sway", "chromium", "chromium_window", "running"];

const TARGETS: [&str; 28] = [
    "screenshot_png_p50",
    "screenshot_png_vs_xwd_convert",
    "click_p50",
    "click_vs_xdotool",
    "act_and_see_p50",
    "type_ascii_100",
    "type_non_ascii_100",
    "type_long_1500",
    "holmd_overhead_p50",
    "cold_start_p50",
    "idle_memory",
    "wayland_screenshot_png_p50",
    "wayland_screenshot_png_vs_grim",
    "wayland_click_p50",
    "wayland_type_ascii_100",
    "wayland_type_non_ascii_100",
    "wayland_cold_start_vs_x11",
    "wayland_idle_memory",
    "speed_png_p50",
    "speed_jpeg_vs_png",
    "speed_busy_png_p50",
    "speed_busy_jpeg_vs_png",
    "speed_click_p50",
    "speed_holmd_overhead",
    "speed_throughput",
    "speed_throughput_changing",
    "warm_pool_p50",
    "warm_pool_claim_p50",
];

/// One bench at a time in this process: a box starting changes the host's
/// network interfaces (Docker makes its veth), and the bench's own Chromium
/// then ends the viewer page's loads in flight (`ERR_NETWORK_CHANGED`), so
/// a bench whose viewer rows run while the other test starts boxes draws
/// no frame. (Seen: the quick bench beside the alone modes, and the old
/// guest as well as the new; the guest never saw the page's requests.)
static ONE_BENCH: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn n(v: &serde_json::Value) -> u64 {
    v["n"].as_u64().unwrap_or_else(|| panic!("no n in {v}"))
}

#[tokio::test]
async fn the_quickest_bench_measures_every_row_and_cleans_up() {
    if !e2e_enabled().await {
        return;
    }
    let _one = ONE_BENCH.lock().await;
    // The image once for every test process (the bench would build it too,
    // but not under the test kit's lock).
    ensure_image().await;
    ensure_image_of(Profile::Wayland).await;
    let (stdout, report) = run_quick(&[]);
    assert!(stdout.contains("| operation | holm |"), "no table printed:\n{stdout}");
    assert_eq!(report["config"]["quick"], true);

    // Every latency row, each side measured as many times as the config
    // says, on both boxes.
    check_rows(&report["latency"], &ROWS, &report["config"]["latency"]);
    check_rows(&report["wayland"]["latency"], &WAYLAND_ROWS, &report["config"]["latency"]);
    check_viewer(&report["viewer"], report["config"]["viewer_samples"].as_u64().unwrap());

    // Cold start: every stage seen in every start, on both boxes.
    let starts = report["config"]["cold_starts"].as_u64().unwrap();
    check_cold(&report["cold_start"], &STAGES, starts);
    check_cold(&report["wayland"]["cold_start"], &WAYLAND_STAGES, starts);
    assert_eq!(report["wayland"]["memory"]["n"].as_u64(), Some(1));

    // Memory: the latency box and each concurrency box.
    let boxes = report["config"]["boxes"].as_u64().unwrap();
    let memory = &report["memory"];
    assert_eq!(memory["n"].as_u64(), Some(1 + boxes));
    assert!(memory["docker_stats_p50_mib"].as_f64().is_some_and(|m| m > 0.0), "{memory}");
    assert!(!memory["processes_mib"].as_array().unwrap().is_empty());

    // The warm pool: a row per runtime, Docker's first and measured, each
    // other one saying why not (`--quick` measures Docker's pool only).
    let pools = report["warm_pool"].as_array().expect("warm pool rows");
    assert_eq!(pools[0]["runtime"], "docker", "{pools:?}");
    assert_eq!(pools[0]["pooled"]["n"].as_u64(), Some(starts), "{pools:?}");
    for runtime in ["podman", "docker-runsc", "podman-runsc"] {
        for label in [runtime.to_owned(), format!("{runtime} (wayland)")] {
            let row = pools.iter().find(|r| r["runtime"] == label.as_str());
            let row = row.unwrap_or_else(|| panic!("no warm pool row for {label}: {pools:?}"));
            assert!(row["skipped"].is_string(), "{row}");
        }
    }
    let wayland_pool = pools.iter().find(|r| r["runtime"] == "docker (wayland)");
    assert!(wayland_pool.is_some_and(|r| r["skipped"].is_string()), "{pools:?}");

    // The other runtimes: an X11 and a Wayland column each; `--quick`
    // measures their X11 boxes only, and says so in the Wayland column of
    // each runtime whose X11 box it measured.
    let columns = report["runtimes"].as_array().expect("runtime columns");
    for runtime in ["podman", "docker-runsc", "podman-runsc"] {
        let column = |display: &str| {
            let c = columns.iter().find(|c| c["runtime"] == runtime && c["display"] == display);
            c.unwrap_or_else(|| panic!("no {runtime} {display} column: {columns:?}"))
        };
        let (x11, wayland) = (column("x11"), column("wayland"));
        let why = wayland["skipped"].as_str().unwrap_or_else(|| panic!("{wayland}"));
        if x11["skipped"].is_null() {
            assert!(why.contains("--quick"), "{wayland}");
        }
    }

    // Concurrency ran its clients, on unchanged screens and on changing
    // ones, and says where the CPU went.
    for (key, screens) in [("concurrency", "unchanged"), ("concurrency_changing", "changing")] {
        let load = &report[key];
        assert_eq!(load["screens"], screens, "{load}");
        assert_eq!(load["boxes"].as_u64(), Some(boxes));
        assert!(load["ops"].as_u64().is_some_and(|o| o > 0), "{load}");
        let cpu = load["cpu_by_program"].as_array().unwrap();
        assert!(cpu.iter().any(|p| p["program"] == "holmd (in holm-bench)"), "{load}");
    }
    // How many screenshots found the screen unchanged is counted (how many
    // depends on when Chromium paints a click, so it is reported, not
    // bounded here).
    let changing = &report["concurrency_changing"];
    let shots = changing["screenshot"]["n"].as_u64().unwrap();
    assert!(changing["unchanged_screenshots"].as_u64().is_some_and(|u| u <= shots), "{changing}");

    // Every target is reported; this small run cannot judge the load target.
    let targets: Vec<&str> =
        report["targets"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    for t in TARGETS {
        assert!(targets.contains(&t), "target {t} missing: {targets:?}");
    }
    let load_target =
        report["targets"].as_array().unwrap().iter().find(|t| t["id"] == "concurrency_10x10x60");
    assert!(load_target.is_some_and(|t| t["met"].is_null()));

    // The machine is described, and every box the run made is gone.
    assert!(report["machine"]["cpus"].as_u64().is_some_and(|c| c >= 1));
    let made = report["boxes"].as_array().unwrap();
    // At least the cold starts of both profiles, the two latency boxes and
    // the concurrency boxes; the warm-pool row and each runtime that can be
    // measured here (podman, gVisor) add their own.
    assert!(made.len() as u64 >= 2 * starts + 2 + boxes, "{made:?}");
    for id in made {
        let id = id.as_str().unwrap();
        assert!(!container_exists(id).await, "box {id} was left running");
    }
}

/// Runs `holm-bench --quick` with `mode`'s arguments; answers what it
/// printed and its report.
fn run_quick(mode: &[&str]) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bench.json");
    let run = Command::new(env!("CARGO_BIN_EXE_holm-bench"))
        .arg("--quick")
        .args(mode)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run holm bench");
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "holm bench {mode:?} failed:\n{stderr}\n{stdout}");
    let report = std::fs::read(&out).expect("the report");
    (stdout, serde_json::from_slice(&report).expect("JSON"))
}

/// The modes that measure one part alone (`--viewers`, `--throughput`,
/// `--scale` with its own counts) each write their own report, with the
/// rows of that part, and leave no box behind.
#[tokio::test]
async fn each_mode_alone_writes_its_own_report_and_cleans_up() {
    if !e2e_enabled().await {
        return;
    }
    let _one = ONE_BENCH.lock().await;
    ensure_image().await;

    let viewers = run_quick(&["--viewers"]).1;
    check_viewer(&viewers["viewer"], 2);

    let throughput = run_quick(&["--throughput"]).1;
    let screens: Vec<&str> = throughput["concurrency"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert!(c["ops"].as_u64().is_some_and(|o| o > 0), "{c}");
            c["screens"].as_str().unwrap()
        })
        .collect();
    assert_eq!(screens, ["unchanged", "changing"]);
    let ids: Vec<&str> = throughput["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert!(!ids.is_empty() && ids.iter().all(|i| i.starts_with("speed_throughput")), "{ids:?}");

    let scale = run_quick(&["--scale", "--scale-counts", "1,2"]).1;
    assert_eq!(scale["scale"]["counts"], serde_json::json!([1, 2]));
    let steps = scale["scale"]["steps"].as_array().unwrap();
    let boxes: Vec<u64> = steps.iter().map(|s| s["boxes"].as_u64().unwrap()).collect();
    assert_eq!(boxes, [1, 2]);
    for step in steps {
        assert!(step["memory_per_box_mib"].as_f64().is_some_and(|m| m > 0.0), "{step}");
        assert!(step["screenshot"]["n"].as_u64().is_some_and(|n| n > 0), "{step}");
    }

    for report in [&viewers, &throughput, &scale] {
        let boxes = report["boxes"].as_array().expect("the boxes the run made");
        assert!(!boxes.is_empty(), "{report}");
        for id in boxes {
            let id = id.as_str().unwrap();
            assert!(!container_exists(id).await, "box {id} was left running");
        }
    }
}

fn check_rows(rows: &serde_json::Value, want: &[&str], counts: &serde_json::Value) {
    let rows = rows.as_array().expect("latency rows");
    let ids: BTreeSet<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let want: BTreeSet<&str> = want.iter().copied().collect();
    assert_eq!(ids, want);
    for r in rows {
        let id = r["id"].as_str().unwrap();
        let kind = id.trim_start_matches("wayland_").trim_start_matches("busy_");
        let expected = if kind.starts_with("settle_quiet") {
            // Each count is a click there and one back.
            counts["quiet"].as_u64().map(|q| 2 * q)
        } else if kind.starts_with("screenshot") {
            counts["screenshots"].as_u64()
        } else if kind.starts_with("click") {
            counts["clicks"].as_u64()
        } else if kind.starts_with("type") {
            counts["types"].as_u64()
        } else if kind.starts_with("act") {
            counts["acts"].as_u64()
        } else {
            counts["overhead"].as_u64()
        }
        .unwrap();
        assert!(expected >= 1);
        assert_eq!(n(&r["holm"]), expected, "{id}: {r}");
        assert_eq!(n(&r["baseline"]), expected, "{id}: {r}");
        assert!(r["holm"]["p50_ms"].as_f64().is_some(), "{id}: {r}");
        assert!(r["ratio"].as_f64().is_some(), "{id}: {r}");
        if kind.starts_with("settle_quiet") {
            // How many settled screens were final: counted, never more
            // than were taken.
            for side in ["holm", "baseline"] {
                let fresh = r[side]["exact"].as_u64().expect("counted");
                assert!(fresh <= expected, "{id}: {r}");
            }
        }
        if kind.starts_with("type") {
            // holm types exactly: a correctness property, not a time.
            assert_eq!(r["holm"]["exact"].as_u64(), Some(expected), "{id}: {r}");
            assert!(r["baseline"]["exact"].as_u64().is_some(), "{id}: {r}");
        }
    }
}

/// The viewer rows: first frame (in Chromium where the host has it, else
/// the row says why not), input to frame, and bandwidth of an idle and a
/// busy screen, each with its baseline measured.
fn check_viewer(viewer: &serde_json::Value, samples: u64) {
    let chromium = std::path::Path::new(
        &std::env::var_os("CHROMIUM").unwrap_or_else(|| "/usr/bin/chromium".into()),
    )
    .exists();
    let mut want = vec![
        "viewer_first_frame_rfb_vs_screenshot",
        "viewer_first_frame_rfb_holmd_vs_guest",
        "viewer_input_to_frame_vs_screenshot_poll",
    ];
    let skipped: Vec<&str> =
        viewer["skipped"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    if chromium {
        want.push("viewer_first_frame_chromium_vs_screenshot");
        assert!(skipped.is_empty(), "{viewer}");
    } else {
        assert_eq!(skipped, ["viewer_first_frame_chromium_vs_screenshot"], "{viewer}");
    }
    let rows = viewer["latency"].as_array().unwrap();
    let ids: BTreeSet<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, want.into_iter().collect::<BTreeSet<_>>());
    for r in rows {
        assert_eq!(n(&r["holm"]), samples, "{r}");
        assert_eq!(n(&r["baseline"]), samples, "{r}");
        assert!(r["holm"]["p50_ms"].as_f64().is_some_and(|v| v > 0.0), "{r}");
        assert!(r["ratio"].as_f64().is_some(), "{r}");
    }
    let bandwidth = viewer["bandwidth"].as_array().unwrap();
    let ids: Vec<&str> = bandwidth.iter().map(|b| b["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["viewer_bandwidth_idle", "viewer_bandwidth_busy"]);
    for b in bandwidth {
        assert!(b["seconds"].as_f64().is_some_and(|s| s > 0.0), "{b}");
        assert!(b["screenshots"].as_u64().is_some_and(|s| s >= 1), "{b}");
        assert!(b["screenshot_bytes_per_sec"].as_f64().is_some_and(|v| v > 0.0), "{b}");
        assert!(b["stream_bytes_per_sec"].as_f64().is_some_and(|v| v >= 0.0), "{b}");
    }
    // A screen that redraws all the time is streamed: frames and bytes.
    let busy = &bandwidth[1];
    assert!(busy["frames"].as_u64().is_some_and(|f| f >= 1), "{busy}");
    assert!(busy["stream_bytes_per_sec"].as_f64().is_some_and(|v| v > 0.0), "{busy}");
}

fn check_cold(cold: &serde_json::Value, want: &[&str], starts: u64) {
    assert_eq!(cold["n"].as_u64(), Some(starts));
    let stages: Vec<&str> =
        cold["stages"].as_array().unwrap().iter().map(|s| s["stage"].as_str().unwrap()).collect();
    assert_eq!(stages, want);
    for s in cold["stages"].as_array().unwrap() {
        assert_eq!(n(&s["since_request"]), starts, "{s}");
    }
}
