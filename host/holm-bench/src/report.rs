//! The machine, the memory figures, the targets, and the printed tables.

use holm_proto::guest::Profile;
use serde::Serialize;

use super::cold::ColdStart;
use super::latency::Row;
use super::load::Concurrency;
use super::memory::BoxMemory;
use super::stats::Samples;
use super::{Config, Report, WaylandReport};
use crate::output;

/// What every report opens with.
#[derive(Debug, Serialize)]
pub struct Run {
    /// The holm version.
    pub holm_version: String,
    /// When the run started (RFC 3339).
    pub started_at: String,
    /// How long it took, seconds.
    pub took_secs: f64,
    /// The command that repeats it.
    pub command: String,
    /// The machine, and what else it ran.
    pub machine: Machine,
}

/// The machine the run was on, and what else it was running.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// Logical CPUs.
    pub cpus: usize,
    /// The CPU.
    pub cpu_model: Option<String>,
    /// Memory, GiB.
    pub memory_gib: Option<f64>,
    /// The operating system.
    pub os: Option<String>,
    /// The kernel.
    pub kernel: Option<String>,
    /// The Docker engine's version.
    pub docker: Option<String>,
    /// The cgroup version the engine uses.
    pub cgroup_version: Option<String>,
    /// How busy the CPUs were in the second before the run started anything
    /// (other work on the machine), percent of all CPUs.
    pub cpu_busy_before_pct: Option<f64>,
    /// The load average (1, 5, 15 minutes) when the run started.
    pub load_at_start: Option<[f64; 3]>,
    /// The load average as each phase began.
    pub load_by_phase: Vec<(String, Option<[f64; 3]>)>,
    /// The load average when it ended.
    pub load_at_end: Option<[f64; 3]>,
    /// Containers running that this run did not make, when it started.
    pub other_containers_at_start: Option<usize>,
    /// Of those, holm boxes (other holmds' or tests').
    pub other_holm_boxes_at_start: Option<usize>,
    /// Containers running at the end (this run's are gone by then).
    pub other_containers_at_end: Option<usize>,
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// (busy, total) jiffies of all CPUs so far.
fn cpu_jiffies() -> Option<(u64, u64)> {
    let text = read("/proc/stat")?;
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal
    let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
    let total: u64 = v.iter().take(8).sum();
    Some((total - idle, total))
}

/// How busy the CPUs are over the next second, percent.
async fn cpu_busy() -> Option<f64> {
    let (b0, t0) = cpu_jiffies()?;
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let (b1, t1) = cpu_jiffies()?;
    #[allow(clippy::cast_precision_loss)]
    let pct = (b1 - b0) as f64 / (t1 - t0).max(1) as f64 * 100.0;
    Some(pct.round())
}

/// The load average now.
pub fn load_average() -> Option<[f64; 3]> {
    let text = read("/proc/loadavg")?;
    let mut it = text.split_whitespace().map(|v| v.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// Running containers (this run's boxes are not running when it is asked):
/// all of them, and how many are holm boxes.
async fn containers(docker: &bollard::Docker) -> Option<(usize, usize)> {
    let list = docker.list_containers(None::<bollard::query_parameters::ListContainersOptions>);
    let list = list.await.ok()?;
    let holm = list
        .iter()
        .filter(|c| c.labels.as_ref().is_some_and(|l| l.contains_key(holm::runtime::LABEL_BOX)))
        .count();
    Some((list.len(), holm))
}

impl Machine {
    /// Describes this machine and what runs on its engine now.
    pub async fn describe(docker: &bollard::Docker) -> Self {
        let cpu_model = read("/proc/cpuinfo").and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        });
        let memory_gib = read("/proc/meminfo").and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some((kib / 1024.0 / 1024.0 * 10.0).round() / 10.0)
        });
        let os = read("/etc/os-release").and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_owned())
        });
        let info = docker.info().await.ok();
        let (other, holm) = containers(docker).await.unzip();
        let cpu_busy_before_pct = cpu_busy().await;
        Self {
            cpus: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            cpu_model,
            memory_gib,
            os,
            kernel: read("/proc/sys/kernel/osrelease").map(|v| v.trim().to_owned()),
            docker: info.as_ref().and_then(|i| i.server_version.clone()),
            cgroup_version: info
                .as_ref()
                .and_then(|i| i.cgroup_version.as_ref())
                .map(|v| v.to_string()),
            cpu_busy_before_pct,
            load_at_start: load_average(),
            load_by_phase: Vec::new(),
            load_at_end: None,
            other_containers_at_start: other,
            other_holm_boxes_at_start: holm,
            other_containers_at_end: None,
        }
    }

    /// Notes the load and the other containers at the end.
    pub async fn finish(&mut self, docker: &bollard::Docker) {
        self.load_at_end = load_average();
        self.other_containers_at_end = containers(docker).await.map(|(n, _)| n);
    }
}

/// Idle boxes' memory.
#[derive(Debug, Clone, Serialize)]
pub struct Memory {
    /// Boxes read.
    pub n: usize,
    /// The median of `docker stats`' figure, MiB.
    pub docker_stats_p50_mib: Option<f64>,
    /// The largest, MiB.
    pub docker_stats_max_mib: Option<f64>,
    /// Each box.
    pub boxes: Vec<BoxMemory>,
    /// In the first box: resident memory by program, MiB, largest first.
    pub processes_mib: Vec<(String, f64)>,
}

impl Memory {
    /// The figures of `boxes`.
    pub fn new(boxes: Vec<BoxMemory>, processes_mib: Vec<(String, f64)>) -> Self {
        let mut s = Samples::default();
        for b in &boxes {
            s.push_ms(b.docker_stats_mib);
        }
        let sum = s.summary();
        Self {
            n: boxes.len(),
            docker_stats_p50_mib: sum.p50_ms,
            docker_stats_max_mib: sum.max_ms,
            boxes,
            processes_mib,
        }
    }
}

/// One of the targets.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    /// A stable name.
    pub id: String,
    /// The target.
    pub target: String,
    /// What this run measured.
    pub measured: String,
    /// Whether it was met; `null` when this run was too small to say.
    pub met: Option<bool>,
}

pub(crate) fn row<'a>(rows: &'a [Row], id: &str) -> Option<&'a Row> {
    rows.iter().find(|r| r.id == id)
}

pub(crate) fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.2} ms"))
}

pub(crate) fn target(id: &str, target: &str, measured: String, met: Option<bool>) -> Target {
    Target { id: id.into(), target: target.into(), measured, met }
}

/// Checks the targets against the figures.
pub fn targets(
    config: &Config,
    rows: &[Row],
    cold: &ColdStart,
    memory: &Memory,
    load: &Concurrency,
) -> Vec<Target> {
    let mut out = Vec::new();
    let p50 = |id: &str| row(rows, id).and_then(|r| r.holm.summary.p50_ms);
    let ratio = |id: &str| row(rows, id).and_then(|r| r.ratio);

    let png = p50("screenshot_png_vs_import");
    out.push(target(
        "screenshot_png_p50",
        "screenshot PNG through holmd p50 ≤ 15 ms",
        ms(png),
        png.map(|v| v <= 15.0),
    ));
    let r = ratio("screenshot_png_vs_xwd_convert");
    out.push(target(
        "screenshot_png_vs_xwd_convert",
        "screenshot PNG ≥ 20× faster than xwd | convert",
        r.map_or_else(|| "-".into(), |r| format!("{r:.1}×")),
        r.map(|r| r >= 20.0),
    ));
    let click = p50("click_vs_xdotool");
    out.push(target("click_p50", "click p50 ≤ 3 ms", ms(click), click.map(|v| v <= 3.0)));
    let r = ratio("click_vs_xdotool");
    out.push(target(
        "click_vs_xdotool",
        "click ≥ 50× faster than exec'd xdotool",
        r.map_or_else(|| "-".into(), |r| format!("{r:.1}×")),
        r.map(|r| r >= 50.0),
    ));
    let settled = p50("act_and_see_settled_vs_exec");
    let plain = p50("act_and_see_vs_exec");
    out.push(target(
        "act_and_see_p50",
        "act-then-see (click and the settled screenshot, one call) p50 ≤ 40 ms",
        format!("{} settled (25 ms quiet); {} without settling", ms(settled), ms(plain)),
        settled.map(|v| v <= 40.0),
    ));
    for (id, bound_ms) in [
        ("type_ascii_vs_xdotool", 100.0),
        ("type_non_ascii_vs_xdotool", 100.0),
        ("type_long_vs_xdotool", 1500.0),
    ] {
        let Some(r) = row(rows, id) else { continue };
        let exact = r.holm.exact.unwrap_or(0);
        let n = r.holm.summary.n;
        out.push(target(
            &format!("{}_{bound_ms}", id.trim_end_matches("_vs_xdotool")),
            &format!("{}: typed exactly in ≤ {bound_ms} ms", r.operation),
            format!("{}, exact {exact}/{n}", ms(r.holm.summary.p50_ms)),
            r.holm.summary.p50_ms.map(|v| v <= bound_ms && exact == n),
        ));
    }
    let over: Vec<Option<f64>> = ["holmd_overhead_screenshot", "holmd_overhead_click"]
        .iter()
        .map(|id| row(rows, id).and_then(|r| r.paired_delta_p50_ms))
        .collect();
    out.push(target(
        "holmd_overhead_p50",
        "holmd's overhead ≤ 1 ms p50 (paired: through holmd minus straight to the guest)",
        format!("screenshot {}, click {}", ms(over[0]), ms(over[1])),
        over.iter().copied().collect::<Option<Vec<f64>>>().map(|v| v.iter().all(|d| *d <= 1.0)),
    ));
    let cold_p50 =
        cold.stages.iter().find(|s| s.stage == "running").and_then(|s| s.since_request.p50_ms);
    out.push(target(
        "cold_start_p50",
        "cold start to usable p50 ≤ 1.3 s (median of ≥ 5)",
        format!("{} (n = {})", ms(cold_p50), cold.n),
        cold_p50.filter(|_| cold.n >= 5).map(|v| v <= 1300.0),
    ));
    out.push(target(
        "idle_memory",
        "idle box ≤ 230 MiB",
        format!(
            "p50 {} MiB, max {} MiB (n = {}, docker stats)",
            memory.docker_stats_p50_mib.map_or_else(|| "-".into(), |v| format!("{v:.1}")),
            memory.docker_stats_max_mib.map_or_else(|| "-".into(), |v| format!("{v:.1}")),
            memory.n
        ),
        memory.docker_stats_p50_mib.map(|v| v <= 230.0),
    ));
    let full = config.boxes >= 10 && config.clients_per_box >= 10 && config.duration_secs >= 60;
    out.push(target(
        "concurrency_10x10x60",
        "10 boxes × 10 clients for 60 s with no errors",
        format!(
            "{} × {} for {:.0} s: {} errors, {} calls, {:.1}/s, p99 {}",
            load.boxes,
            load.clients_per_box,
            load.duration_secs,
            load.errors,
            load.ops,
            load.throughput_per_sec,
            ms(load.all.p99_ms)
        ),
        full.then_some(load.errors == 0),
    ));
    out
}

/// Checks the warm pool's targets on Docker's row (the first): create →
/// usable from a pool p50 ≤ 100 ms and ≥ 10× faster than cold in the same
/// run, and a claim through holmd at most 10 ms p50.
pub fn pool_targets(rows: &[super::pooled::Pooled]) -> Vec<Target> {
    let Some(w) = rows.first() else { return Vec::new() };
    let measured = format!(
        "{} against cold {} (×{}, n = {})",
        ms(w.pooled.p50_ms),
        ms(w.cold.p50_ms),
        w.ratio_p50.map_or_else(|| "-".into(), |r| format!("{r:.1}")),
        w.n
    );
    vec![
        target(
            "warm_pool_p50",
            "create → usable from a warm pool p50 ≤ 100 ms and ≥ 10× faster than cold (same run)",
            measured.clone(),
            w.pooled.p50_ms.zip(w.ratio_p50).map(|(p, r)| p <= 100.0 && r >= 10.0),
        ),
        claim_target(rows),
    ]
}

/// A claim through holmd at most 10 ms p50 on every row measured (each
/// runtime, and Docker's Wayland pool).
fn claim_target(rows: &[super::pooled::Pooled]) -> Target {
    let measured: Vec<_> = rows.iter().filter(|r| r.skipped.is_none()).collect();
    let each: Vec<String> =
        measured.iter().map(|r| format!("{} {}", r.runtime, ms(r.pooled.p50_ms))).collect();
    let met =
        measured.iter().map(|r| r.pooled.p50_ms.map(|p| p <= 10.0)).collect::<Option<Vec<_>>>();
    target(
        "warm_pool_claim_p50",
        "a warm pool claim through holmd p50 ≤ 10 ms, on each runtime measured",
        each.join(", "),
        met.map(|v| v.iter().all(|m| *m)),
    )
}

/// Checks the Wayland targets: its own figures, and its cold start and
/// memory against the X11 box's in the same run.
pub fn wayland_targets(
    x11_cold: &ColdStart,
    x11_memory: &Memory,
    w: &WaylandReport,
) -> Vec<Target> {
    let rows = &w.latency;
    let p50 = |id: &str| row(rows, id).and_then(|r| r.holm.summary.p50_ms);
    let mut out = Vec::new();
    let png = p50("wayland_screenshot_png_vs_grim");
    out.push(target(
        "wayland_screenshot_png_p50",
        "Wayland: screenshot PNG through holmd p50 ≤ 15 ms",
        ms(png),
        png.map(|v| v <= 15.0),
    ));
    let r = row(rows, "wayland_screenshot_png_vs_grim").and_then(|r| r.ratio);
    out.push(target(
        "wayland_screenshot_png_vs_grim",
        "Wayland: screenshot PNG ≥ 5× faster than grim through docker exec",
        r.map_or_else(|| "-".into(), |r| format!("{r:.1}×")),
        r.map(|r| r >= 5.0),
    ));
    let click = p50("wayland_click_vs_swaymsg");
    out.push(target(
        "wayland_click_p50",
        "Wayland: click p50 ≤ 3 ms",
        ms(click),
        click.map(|v| v <= 3.0),
    ));
    for id in ["wayland_type_ascii_vs_wtype", "wayland_type_non_ascii_vs_wtype"] {
        let Some(r) = row(rows, id) else { continue };
        let exact = r.holm.exact.unwrap_or(0);
        let n = r.holm.summary.n;
        out.push(target(
            &format!("{}_100", id.trim_end_matches("_vs_wtype")),
            &format!("{}: typed exactly in ≤ 100 ms", r.operation),
            format!("{}, exact {exact}/{n}", ms(r.holm.summary.p50_ms)),
            r.holm.summary.p50_ms.map(|v| v <= 100.0 && exact == n),
        ));
    }
    let running = |c: &ColdStart| {
        c.stages.iter().find(|s| s.stage == "running").and_then(|s| s.since_request.p50_ms)
    };
    let (wl, x11) = (running(&w.cold_start), running(x11_cold));
    out.push(target(
        "wayland_cold_start_vs_x11",
        "Wayland: cold start to usable within 20% of the X11 box's in the same run (p50)",
        format!("{} against X11's {} (n = {} each)", ms(wl), ms(x11), w.cold_start.n),
        wl.zip(x11).filter(|_| w.cold_start.n >= 5).map(|(wl, x11)| wl <= x11 * 1.2),
    ));
    let (wm, xm) = (w.memory.docker_stats_p50_mib, x11_memory.docker_stats_p50_mib);
    let mib = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.1} MiB"));
    out.push(target(
        "wayland_idle_memory",
        "Wayland: idle box ≤ the X11 box's memory (docker stats, p50)",
        format!("{} against X11's {}", mib(wm), mib(xm)),
        wm.zip(xm).map(|(w, x)| w <= x),
    ));
    out
}

pub(crate) fn cell(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

/// Prints the report as Markdown tables.
pub fn print(r: &Report) {
    let (run, m) = (&r.run, &r.run.machine);
    output::line(&format!(
        "holm {} bench, {} ({} CPUs, {}, {} GiB; {}; kernel {}; Docker {}, cgroup v{})",
        run.holm_version,
        run.started_at,
        m.cpus,
        m.cpu_model.as_deref().unwrap_or("?"),
        m.memory_gib.map_or_else(|| "?".into(), |v| v.to_string()),
        m.os.as_deref().unwrap_or("?"),
        m.kernel.as_deref().unwrap_or("?"),
        m.docker.as_deref().unwrap_or("?"),
        m.cgroup_version.as_deref().unwrap_or("?"),
    ));
    let load = |l: Option<[f64; 3]>| {
        l.map_or_else(|| "?".into(), |l| format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2]))
    };
    let phases: Vec<String> =
        m.load_by_phase.iter().map(|(p, l)| format!("{p} {}", load(*l))).collect();
    output::line(&format!(
        "CPUs {}% busy with other work just before the run; load average {} at the start ({}), {} at the end; other containers running: {} at the start ({} holm boxes), {} at the end",
        m.cpu_busy_before_pct.map_or_else(|| "?".into(), |v| v.to_string()),
        load(m.load_at_start),
        phases.join(", "),
        load(m.load_at_end),
        m.other_containers_at_start.map_or_else(|| "?".into(), |v| v.to_string()),
        m.other_holm_boxes_at_start.map_or_else(|| "?".into(), |v| v.to_string()),
        m.other_containers_at_end.map_or_else(|| "?".into(), |v| v.to_string()),
    ));
    output::line(&format!("command: {}; took {:.0} s\n", run.command, run.took_secs));

    print_rows(&r.latency);
    let over: Vec<String> = r
        .latency
        .iter()
        .filter(|row| row.id.starts_with("holmd_overhead"))
        .map(|row| format!("{} {} ms", row.id, cell(row.paired_delta_p50_ms)))
        .collect();
    output::line(&format!("\nholmd's overhead, median of paired differences: {}", over.join(", ")));
    super::viewer::print(&r.viewer);
    super::recording::print(&r.recording);

    print_cold("cold start", &r.cold_start);
    super::pooled::print(&r.warm_pool);

    let mem = &r.memory;
    output::line(&format!(
        "\nidle box memory (docker stats): p50 {} MiB, max {} MiB, n = {}",
        cell(mem.docker_stats_p50_mib),
        cell(mem.docker_stats_max_mib),
        mem.n
    ));
    let top: Vec<String> =
        mem.processes_mib.iter().take(6).map(|(k, v)| format!("{k} {v:.0}")).collect();
    output::line(&format!(
        "resident memory by program in one box (MiB, shared pages counted in each): {}",
        top.join(", ")
    ));

    print_runtimes(r);

    print_concurrency(&r.concurrency);
    print_concurrency(&r.concurrency_changing);

    let w = &r.wayland;
    output::line(&format!("\nWayland box ({}), in the same run:\n", w.image));
    print_rows(&w.latency);
    print_cold("Wayland cold start", &w.cold_start);
    let top: Vec<String> =
        w.memory.processes_mib.iter().take(6).map(|(k, v)| format!("{k} {v:.0}")).collect();
    output::line(&format!(
        "\nidle Wayland box memory (docker stats): {} MiB; resident memory by program (MiB): {}",
        cell(w.memory.docker_stats_p50_mib),
        top.join(", ")
    ));

    print_targets(&r.targets);
}

/// The targets as a table.
pub(crate) fn print_targets(targets: &[Target]) {
    output::line("\n| target | measured | met |");
    output::line("|---|---|---|");
    for t in targets {
        let met = match t.met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "not measured at size",
        };
        output::line(&format!(
            "| {} | {} | {met} |",
            t.target.replace('|', "\\|"),
            t.measured.replace('|', "\\|")
        ));
    }
}

/// The runtime columns: Docker's cold starts and idle memory from this run
/// (X11 and Wayland), and each other runtime's beside them, as ratios to
/// Docker's of the same display.
fn print_runtimes(r: &Report) {
    let base = [
        Baseline {
            display: Profile::X11,
            cold: &r.cold_start,
            idle_mib: r.memory.boxes.first().map(|b| b.docker_stats_mib),
        },
        Baseline {
            display: Profile::Wayland,
            cold: &r.wayland.cold_start,
            idle_mib: r.wayland.memory.boxes.first().map(|b| b.docker_stats_mib),
        },
    ];
    print_runtime_columns(&base, &r.runtimes);
}

/// Docker's figures for one display, the runtime columns' baseline.
pub(crate) struct Baseline<'a> {
    /// The display.
    pub display: Profile,
    /// Docker's cold starts of it.
    pub cold: &'a ColdStart,
    /// Docker's idle box of it, MiB, when measured.
    pub idle_mib: Option<f64>,
}

impl Baseline<'_> {
    fn cold_p50(&self) -> Option<f64> {
        let running = self.cold.stages.iter().find(|s| s.stage == "running");
        running.and_then(|s| s.since_request.p50_ms)
    }
}

/// The runtime columns beside Docker's cold start and idle memory of the
/// same display (`base`), as ratios to them.
pub(crate) fn print_runtime_columns(base: &[Baseline], columns: &[super::runtimes::Column]) {
    output::line(
        "\nruntimes (the same box; cold start to `running`, idle memory as the engine's stats show it):\n",
    );
    output::line("| runtime | cold start p50 ms | × docker | idle MiB | × docker |");
    output::line("|---|---:|---:|---:|---:|");
    let ratio = |v: Option<f64>, base: Option<f64>| match (v, base) {
        (Some(v), Some(b)) if b > 0.0 => format!("{:.2}", v / b),
        _ => String::new(),
    };
    for b in base {
        output::line(&format!(
            "| {} | {} | 1.00 | {} | {} |",
            super::runtimes::label("docker", b.display),
            cell(b.cold_p50()),
            cell(b.idle_mib),
            if b.idle_mib.is_some() { "1.00" } else { "" }
        ));
    }
    for c in columns {
        if let Some(why) = &c.skipped {
            output::line(&format!(
                "| {} | not measured: {} | | | |",
                c.label(),
                why.replace('|', "/")
            ));
            continue;
        }
        let b = base.iter().find(|b| b.display == c.display);
        let cold = c.cold_start_running.p50_ms;
        output::line(&format!(
            "| {} | {} | {} | {} | {} |",
            c.label(),
            cell(cold),
            ratio(cold, b.and_then(Baseline::cold_p50)),
            cell(c.idle_mib),
            ratio(c.idle_mib, b.and_then(|b| b.idle_mib)),
        ));
    }
}

/// A ratio for the tables: one decimal, two below 1 (a side far slower).
fn ratio(v: f64) -> String {
    if v < 1.0 { format!("{v:.2}×") } else { format!("{v:.1}×") }
}

/// Prints latency rows as a Markdown table.
pub(crate) fn print_rows(rows: &[Row]) {
    output::line(
        "| operation | holm | p50 ms | p95 ms | n | baseline | p50 ms | p95 ms | n | baseline / holm | exact (holm, baseline) |",
    );
    output::line("|---|---|---:|---:|---:|---|---:|---:|---:|---:|---|");
    for row in rows {
        let exact = match (row.holm.exact, row.baseline.exact) {
            (Some(h), Some(b)) => {
                format!("{h}/{}, {b}/{}", row.holm.summary.n, row.baseline.summary.n)
            }
            _ => String::new(),
        };
        output::line(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            row.operation,
            row.holm.label,
            cell(row.holm.summary.p50_ms),
            cell(row.holm.summary.p95_ms),
            row.holm.summary.n,
            row.baseline.label.replace('|', "\\|"),
            cell(row.baseline.summary.p50_ms),
            cell(row.baseline.summary.p95_ms),
            row.baseline.summary.n,
            row.ratio.map_or_else(|| "-".into(), ratio),
            exact,
        ));
    }
}

/// Prints a cold start's stages as a Markdown table, and the components' own
/// times.
pub(crate) fn print_cold(title: &str, cold: &ColdStart) {
    output::line(&format!("\n{title}, n = {} (ms since the create request):\n", cold.n));
    output::line("| stage | p50 ms | p95 ms | min | max |");
    output::line("|---|---:|---:|---:|---:|");
    for s in &cold.stages {
        output::line(&format!(
            "| {} | {} | {} | {} | {} |",
            s.what,
            cell(s.since_request.p50_ms),
            cell(s.since_request.p95_ms),
            cell(s.since_request.min_ms),
            cell(s.since_request.max_ms),
        ));
    }
    let own: Vec<String> =
        cold.guest_ready_ms.iter().map(|(k, v)| format!("{k} {}", cell(v.p50_ms))).collect();
    output::line(&format!(
        "\neach component's own start-to-ready (guest's ready_ms, p50): {}; removing a box p50 {} ms",
        own.join(", "),
        cell(cold.remove.p50_ms)
    ));
}

/// One concurrency run's table, its reused encodings and its CPU by program.
pub fn print_concurrency(c: &Concurrency) {
    let screens = match c.screens {
        super::load::Screens::Unchanged => "on Chromium's blank page (a click changes nothing)",
        super::load::Screens::Changing => "on a page every click changes",
    };
    output::line(&format!(
        "\nconcurrency {screens}: {} boxes × {} clients, {:.0} s (the {} boxes started at once in {:.1} s)\n",
        c.boxes, c.clients_per_box, c.duration_secs, c.boxes, c.boxes_started_in_secs
    ));
    output::line(
        "| calls | per second | errors | screenshot p50 / p99 ms | click p50 / p99 ms | all p50 / p99 ms |",
    );
    output::line("|---:|---:|---:|---:|---:|---:|");
    output::line(&format!(
        "| {} | {:.1} | {} | {} / {} | {} / {} | {} / {} |",
        c.ops,
        c.throughput_per_sec,
        c.errors,
        cell(c.screenshot.p50_ms),
        cell(c.screenshot.p99_ms),
        cell(c.click.p50_ms),
        cell(c.click.p99_ms),
        cell(c.all.p50_ms),
        cell(c.all.p99_ms),
    ));
    output::line(&match c.screens {
        super::load::Screens::Unchanged => format!(
            "\n{} of {} screenshots found the screen as the one before; the guest answered those from its kept encoding.",
            c.unchanged_screenshots, c.screenshot.n
        ),
        super::load::Screens::Changing => format!(
            "\nEvery screenshot was encoded anew (the box's screenshots take turns between two regions); {} of {} showed the same pixels as the box's last one of its region (Chromium had not painted the clicks since).",
            c.unchanged_screenshots, c.screenshot.n
        ),
    });
    let cpu: Vec<String> = c
        .cpu_by_program
        .iter()
        .take(12)
        .map(|p| format!("{} {:.1}% ({} processes)", p.program, p.cpu_percent, p.processes))
        .collect();
    output::line(&format!("CPU by program, % of one CPU: {}", cpu.join(", ")));
    for e in &c.error_samples {
        output::line(&format!("  error: {e}"));
    }
}
