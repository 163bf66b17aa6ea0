//! `holm bench --scale`: what grows as boxes are added. For 1, 10, 30 and 60
//! boxes (`--scale-counts`) started at once: the time until all are usable,
//! each box's memory, holmd's own memory and CPU (this process: the bench
//! runs holmd in process) per box, and screenshot latency with one client
//! per box.
//!
//! This process's resident memory is holmd's and the bench's together. The
//! bench holds little of its own: the clients that started the boxes are
//! done, and the screenshot clients (one connection pool per box) are
//! dropped before the second reading. So the figure is read twice: after
//! the boxes idled (holmd with its boxes, before any screenshot), and after
//! the screenshot burst with the bench's clients gone (what the burst left
//! behind: buffers still held, or kept by the allocator).

use std::cell::RefCell;
use std::time::{Duration, Instant};

use holm_proto::guest::ScreenshotOptions;
use holm_proto::host::CreateBox;
use serde::Serialize;

use super::server::Server;
use super::stats::{Samples, Summary};

/// One count's figures.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// Boxes started at once.
    pub boxes: usize,
    /// From the creates to the last box running, seconds.
    pub all_usable_secs: f64,
    /// Each box's memory as `docker stats` shows it after `--idle` seconds,
    /// averaged, MiB.
    pub memory_per_box_mib: f64,
    /// The largest box's memory, read with the others, MiB.
    pub memory_max_box_mib: f64,
    /// This process's resident memory once these boxes idled, before any
    /// screenshot, MiB.
    pub holmd_rss_mib: f64,
    /// That above the process's own with no box, per box, MiB.
    pub holmd_rss_per_box_mib: f64,
    /// This process's resident memory after the screenshot burst, its
    /// clients dropped, the boxes still running, MiB.
    pub holmd_rss_after_shots_mib: f64,
    /// That above the process's own with no box, per box, MiB.
    pub holmd_rss_after_shots_per_box_mib: f64,
    /// holmd's CPU while every box served one screenshot client, percent of
    /// one CPU, per box.
    pub holmd_cpu_per_box_pct: f64,
    /// Screenshots through holmd, one client per box at once.
    pub screenshot: Summary,
    /// Screenshots that failed.
    pub errors: usize,
}

/// The scale run.
#[derive(Debug, Clone, Serialize)]
pub struct Scale {
    /// holmd's resident memory before any box, MiB.
    pub holmd_rss_idle_mib: f64,
    /// The counts, in the order run.
    pub counts: Vec<usize>,
    /// Seconds each count's screenshot clients ran.
    pub screenshot_secs: u64,
    /// Each count.
    pub steps: Vec<Step>,
}

/// This process's resident memory, MiB.
fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or(0.0);
    (kib / 1024.0 * 10.0).round() / 10.0
}

/// This process's CPU time so far (user and system), seconds.
fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis; utime and stime are
    // the 14th and 15th of the whole line.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest.split_whitespace().filter_map(|v| v.parse().ok()).collect();
    // `rest` starts at the 3rd field (state, not a number, skipped by the
    // filter): utime is then index 10, stime 11.
    let ticks = f.get(10).copied().unwrap_or(0.0) + f.get(11).copied().unwrap_or(0.0);
    // /proc counts in USER_HZ, 100 on every Linux ABI.
    ticks / 100.0
}

/// Runs the counts in `counts`, each with its boxes removed before the next.
pub async fn run(
    server: &Server,
    docker: &bollard::Docker,
    request: &CreateBox,
    counts: &[usize],
    (idle, secs): (Duration, u64),
    progress: &dyn Fn(&str),
) -> anyhow::Result<Scale> {
    let idle_rss = rss_mib();
    let mut steps = Vec::new();
    for &n in counts {
        let before = server.every_box().len();
        let step = one_count(server, docker, request, n, (idle, secs), idle_rss, progress).await;
        server.remove_since(before).await;
        steps.push(step?);
    }
    Ok(Scale {
        holmd_rss_idle_mib: idle_rss,
        counts: counts.to_vec(),
        screenshot_secs: secs,
        steps,
    })
}

/// Starts `n` boxes at once, lets them idle, reads their memory and this
/// process's, then runs the screenshot clients. The caller removes the
/// boxes.
async fn one_count(
    server: &Server,
    docker: &bollard::Docker,
    request: &CreateBox,
    n: usize,
    (idle, secs): (Duration, u64),
    idle_rss: f64,
    progress: &dyn Fn(&str),
) -> anyhow::Result<Step> {
    progress(&format!("scale: starting {n} boxes at once"));
    let t = Instant::now();
    let starts = (0..n).map(|_| super::new_box(server, request));
    let ids = futures_util::future::try_join_all(starts)
        .await
        .map_err(|e| e.context(format!("start {n} boxes at once")))?;
    let all_usable = t.elapsed().as_secs_f64();
    progress(&format!("scale: {n} boxes usable in {all_usable:.1} s; idling {} s", idle.as_secs()));
    tokio::time::sleep(idle).await;
    let (mut memory, mut largest) = (0.0, 0.0_f64);
    for id in &ids {
        let m = super::memory::sample(docker, id).await?.docker_stats_mib;
        memory += m;
        largest = largest.max(m);
    }
    #[allow(clippy::cast_precision_loss)]
    let per = |v: f64| (v / n as f64 * 100.0).round() / 100.0;
    let rss = rss_mib();
    progress(&format!("scale: {n} boxes, one screenshot client each for {secs} s"));
    let (shots, errors, cpu) = screenshots(server, &ids, Duration::from_secs(secs)).await;
    let after = rss_mib();
    Ok(Step {
        boxes: n,
        all_usable_secs: (all_usable * 100.0).round() / 100.0,
        memory_per_box_mib: (per(memory) * 10.0).round() / 10.0,
        memory_max_box_mib: largest,
        holmd_rss_mib: rss,
        holmd_rss_per_box_mib: per(rss - idle_rss),
        holmd_rss_after_shots_mib: after,
        holmd_rss_after_shots_per_box_mib: per(after - idle_rss),
        holmd_cpu_per_box_pct: per(cpu * 100.0),
        screenshot: shots.summary(),
        errors,
    })
}

/// One client per box takes PNG screenshots through holmd for `duration`;
/// answers the samples, the failures, and holmd's CPU meanwhile (CPUs).
async fn screenshots(server: &Server, ids: &[String], duration: Duration) -> (Samples, usize, f64) {
    let shots = RefCell::new((Samples::default(), 0usize));
    let (start, cpu0) = (Instant::now(), cpu_secs());
    let deadline = start + duration;
    let clients = ids.iter().map(|id| {
        let b = server.another_client().boxed(id);
        let shots = &shots;
        async move {
            while Instant::now() < deadline {
                let t = Instant::now();
                match b.screenshot(0, &ScreenshotOptions::default()).await {
                    Ok(_) => shots.borrow_mut().0.push(t.elapsed()),
                    Err(_) => {
                        shots.borrow_mut().1 += 1;
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
            }
        }
    });
    futures_util::future::join_all(clients).await;
    let cpu = (cpu_secs() - cpu0) / start.elapsed().as_secs_f64();
    let (samples, errors) = shots.into_inner();
    (samples, errors, cpu)
}

/// Prints the scale report as a table.
pub fn print(r: &super::ScaleReport) {
    use holm_cli::output::line;
    let (run, m) = (&r.run, &r.run.machine);
    let load = |l: Option<[f64; 3]>| {
        l.map_or_else(|| "?".into(), |l| format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2]))
    };
    line(&format!(
        "holm {} bench --scale, {} ({} CPUs, {} GiB); load average {} at the start, {} at the end; took {:.0} s",
        run.holm_version,
        run.started_at,
        m.cpus,
        m.memory_gib.map_or_else(|| "?".into(), |v| v.to_string()),
        load(m.load_at_start),
        load(m.load_at_end),
        run.took_secs,
    ));
    let s = &r.scale;
    line(&format!(
        "\nholmd with no box: {} MiB resident (this process: holmd and the bench); one PNG screenshot client per box for {} s\n",
        s.holmd_rss_idle_mib, s.screenshot_secs
    ));
    line(
        "| boxes | all usable s | MiB per box | max MiB | holmd MiB idle | per box | holmd MiB after shots | per box | holmd CPU % per box | screenshot p50 ms | p99 ms | errors |",
    );
    line("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let cell = |v: Option<f64>| v.map_or_else(|| "—".into(), |v| format!("{v:.2}"));
    for st in &s.steps {
        line(&format!(
            "| {} | {:.2} | {:.1} | {:.1} | {:.1} | {:.2} | {:.1} | {:.2} | {:.2} | {} | {} | {} |",
            st.boxes,
            st.all_usable_secs,
            st.memory_per_box_mib,
            st.memory_max_box_mib,
            st.holmd_rss_mib,
            st.holmd_rss_per_box_mib,
            st.holmd_rss_after_shots_mib,
            st.holmd_rss_after_shots_per_box_mib,
            st.holmd_cpu_per_box_pct,
            cell(st.screenshot.p50_ms),
            cell(st.screenshot.p99_ms),
            st.errors,
        ));
    }
}
