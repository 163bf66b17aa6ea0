//! `holm bench --quick` end to end: real boxes on the real Docker engine,
//! every row measured, the report written, every box removed. No time is
//! asserted: the figures are the benchmark's to print, not a test's to judge.

use std::collections::BTreeSet;
use std::process::Command;

use holm_testkit::{container_exists, e2e_enabled, ensure_image};

const ROWS: [&str; 13] = [
    "screenshot_png_vs_import",
    "screenshot_png_vs_xwd_convert",
    "screenshot_jpeg_vs_import",
    "screenshot_jpeg_vs_xwd_convert",
    "click_vs_xdotool",
    "type_ascii_vs_xdotool",
    "type_ascii_vs_xdotool_delay0",
    "type_non_ascii_vs_xdotool",
    "type_non_ascii_vs_xdotool_delay0",
    "act_and_see_vs_exec",
    "act_and_see_settled_vs_exec",
    "holmd_overhead_screenshot",
    "holmd_overhead_click",
];

const STAGES: [&str; 8] =
    ["container", "guest", "xvfb", "fluxbox", "x11vnc", "chromium", "chromium_window", "running"];

const TARGETS: [&str; 10] = [
    "screenshot_png_p50",
    "screenshot_png_vs_xwd_convert",
    "click_p50",
    "click_vs_xdotool",
    "act_and_see_p50",
    "type_ascii_100",
    "type_non_ascii_100",
    "holmd_overhead_p50",
    "cold_start_p50",
    "idle_memory",
];

fn n(v: &serde_json::Value) -> u64 {
    v["n"].as_u64().unwrap_or_else(|| panic!("no n in {v}"))
}

#[tokio::test]
async fn the_quickest_bench_measures_every_row_and_cleans_up() {
    if !e2e_enabled().await {
        return;
    }
    // The image once for every test process (the bench would build it too,
    // but not under the test kit's lock).
    ensure_image().await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bench.json");
    let run = Command::new(env!("CARGO_BIN_EXE_holm"))
        .args(["bench", "--quick", "--out"])
        .arg(&out)
        .output()
        .expect("run holm bench");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "holm bench failed:\n{stderr}\n{stdout}");
    assert!(stdout.contains("| operation | holm |"), "no table printed:\n{stdout}");

    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).expect("the report")).expect("JSON");
    assert_eq!(report["config"]["quick"], true);

    // Every latency row, each side measured as many times as the config says.
    let rows = report["latency"].as_array().expect("latency rows");
    let ids: BTreeSet<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let want: BTreeSet<&str> = ROWS.into_iter().collect();
    assert_eq!(ids, want);
    let counts = &report["config"]["latency"];
    for r in rows {
        let id = r["id"].as_str().unwrap();
        let expected = if id.starts_with("screenshot") {
            counts["screenshots"].as_u64()
        } else if id.starts_with("click") {
            counts["clicks"].as_u64()
        } else if id.starts_with("type") {
            counts["types"].as_u64()
        } else if id.starts_with("act") {
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
        if id.starts_with("type") {
            // holm types exactly: a correctness property, not a time.
            assert_eq!(r["holm"]["exact"].as_u64(), Some(expected), "{id}: {r}");
            assert!(r["baseline"]["exact"].as_u64().is_some(), "{id}: {r}");
        }
    }

    // Cold start: every stage seen in every start.
    let cold = &report["cold_start"];
    let starts = report["config"]["cold_starts"].as_u64().unwrap();
    assert_eq!(cold["n"].as_u64(), Some(starts));
    let stages: Vec<&str> =
        cold["stages"].as_array().unwrap().iter().map(|s| s["stage"].as_str().unwrap()).collect();
    assert_eq!(stages, STAGES);
    for s in cold["stages"].as_array().unwrap() {
        assert_eq!(n(&s["since_request"]), starts, "{s}");
    }

    // Memory: the latency box and each concurrency box.
    let boxes = report["config"]["boxes"].as_u64().unwrap();
    let memory = &report["memory"];
    assert_eq!(memory["n"].as_u64(), Some(1 + boxes));
    assert!(memory["docker_stats_p50_mib"].as_f64().is_some_and(|m| m > 0.0), "{memory}");
    assert!(!memory["processes_mib"].as_array().unwrap().is_empty());

    // Concurrency ran its clients.
    let load = &report["concurrency"];
    assert_eq!(load["boxes"].as_u64(), Some(boxes));
    assert!(load["ops"].as_u64().is_some_and(|o| o > 0), "{load}");

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
    assert_eq!(made.len() as u64, starts + 1 + boxes);
    for id in made {
        let id = id.as_str().unwrap();
        assert!(!container_exists(id).await, "box {id} was left running");
    }
}
