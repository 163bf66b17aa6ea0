//! `holm-bench` (run as `holm bench`): how fast holm is against the
//! exec-driven way, measured side by side on real boxes on Docker, in one
//! run.
//!
//! It is a program of its own, not part of the `holm` CLI, because it
//! carries a whole server (holmd's library: stores, sealing) that the CLI,
//! a client, must not link; `holm bench ARGS` runs it.
//!
//! The benchmark starts its own holmd in this process (on threads and a
//! runtime of its own, a loopback port, a token and a state directory of its
//! own; see [`server`]) and drives it with `holm-client`, as any client
//! would. Against it, in the same loops with the order alternating, it runs
//! the baselines with `docker exec` on the same box: `import`,
//! `xwd | convert`, `xdotool` (the box image carries them for this; holm
//! never calls them). It measures:
//!
//! - latency ([`latency`]): screenshots, clicks, typing, act-then-see, and
//!   through holmd against straight to the guest;
//! - cold start ([`cold`]), split into the moments each part was ready;
//! - the viewers ([`viewer`]): a viewer URL's first frame (in Chromium and
//!   with an RFB client of its own), input to the frame that shows it, and
//!   the stream's bandwidth, against screenshots;
//! - the memory of an idle box ([`memory`]);
//! - concurrency ([`load`]): K boxes × M clients for T seconds.
//!
//! It prints tables (or, with `--json`, the report) and writes the report as
//! JSON. It never asserts a time; the targets are checked and printed.
//! Only boxes it made are touched, and every one is removed at the end.

mod args;
mod busy;
mod chromium;
mod cold;
mod cpu;
mod exec;
#[cfg(feature = "kubernetes")]
mod kube;
mod latency;
mod load;
mod memory;
mod pooled;
mod quiet;
mod recording;
mod report;
mod rfb;
mod runtimes;
mod scale;
mod server;
mod speed;
mod stats;
mod viewer;
mod wayland;

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;

pub use args::{BenchArgs, Config};
use holm::runtime::Runtime;
use holm::runtime::docker::DockerRuntime;
use holm_cli::output;
use holm_proto::guest::Profile;
use holm_proto::host::{BoxSpec, CreateBox, Placement};
use serde::Serialize;

/// Measure holm against the exec-driven way on real boxes on Docker (its
/// own holmd in this process; prints tables and writes a JSON report).
#[derive(Debug, Parser)]
#[command(name = "holm bench", version)]
struct Cli {
    /// Print the report (and errors) as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    args: BenchArgs,
}

fn main() -> std::process::ExitCode {
    // The holmd this runs in process gets holmd's allocator settings,
    // before any thread starts.
    holmd::allocator::tune();
    let cli = Cli::parse();
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            output::error(&anyhow::anyhow!("start the runtime: {e}"), cli.json);
            return std::process::ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(cli.args, cli.json)) {
        Ok(code) => code,
        Err(e) => {
            output::error(&e, cli.json);
            std::process::ExitCode::FAILURE
        }
    }
}

/// The whole report, as written to `--out`.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The version, when it ran, how long, the command and the machine.
    #[serde(flatten)]
    pub run: crate::report::Run,
    /// What the run did.
    pub config: Config,
    /// The box image.
    pub image: String,
    /// Latency, holm against its baselines.
    pub latency: Vec<latency::Row>,
    /// The viewers (on the X11 latency box), against screenshots.
    pub viewer: viewer::ViewerReport,
    /// Cold start.
    pub cold_start: cold::ColdStart,
    /// Create → usable from a warm pool against cold, by turns, on each
    /// runtime (Docker's first).
    pub warm_pool: Vec<pooled::Pooled>,
    /// Cold start and idle memory on each other runtime (podman, gVisor).
    pub runtimes: Vec<runtimes::Column>,
    /// Idle boxes' memory.
    pub memory: report::Memory,
    /// Concurrency, on unchanged screens.
    pub concurrency: load::Concurrency,
    /// Concurrency on the same boxes, every click changing the screen.
    pub concurrency_changing: load::Concurrency,
    /// The Wayland box, measured in the same run.
    pub wayland: WaylandReport,
    /// What recording costs a box, on each profile.
    pub recording: Vec<recording::Row>,
    /// The targets, checked.
    pub targets: Vec<report::Target>,
    /// Every box the run made (all removed at its end).
    pub boxes: Vec<String>,
}

/// The Wayland box's figures: its latency against `grim`, `wtype` and
/// `swaymsg`, its cold start (by turns with the X11 box's), its idle memory.
#[derive(Debug, Serialize)]
pub struct WaylandReport {
    /// The Wayland box image.
    pub image: String,
    /// Latency, holm against the Wayland tools.
    pub latency: Vec<latency::Row>,
    /// Cold start.
    pub cold_start: cold::ColdStart,
    /// The idle Wayland box's memory.
    pub memory: report::Memory,
}

fn progress(line: &str) {
    #[allow(clippy::print_stderr)]
    {
        eprintln!("bench: {line}");
    }
}

/// Runs the benchmark.
pub async fn run(args: BenchArgs, json: bool) -> anyhow::Result<std::process::ExitCode> {
    let config = Config::from_args(&args);
    let started = std::time::SystemTime::now();
    let t0 = std::time::Instant::now();
    let docker = DockerRuntime::connect("docker").context("the benchmark needs Docker")?;
    docker.ping().await.context("the benchmark needs a Docker engine that answers")?;
    let mut machine = report::Machine::describe(docker.docker()).await;

    progress("preparing the box image (the first run builds it: a few minutes)");
    let mut image_progress = |p: holm::image::Progress| match p {
        holm::image::Progress::Status(s) => progress(&format!("image: {s}")),
        // Only the build's steps, not apt's output.
        holm::image::Progress::Output(line) if line.starts_with("Step ") => {
            progress(&format!("image: {line}"));
        }
        holm::image::Progress::Output(_) => {}
        holm::image::Progress::Built { tag } => progress(&format!("image: built {tag}")),
        other => progress(&format!("image: {other:?}")),
    };
    docker.make_base(&mut image_progress).await.context("make the base image")?;
    let mut images = Vec::new();
    for display in [Profile::X11, Profile::Wayland] {
        let request = holm::image::ImageRequest::default().with_display(display);
        images.push(
            docker
                .prepare_image(&request, &mut image_progress)
                .await
                .with_context(|| format!("build the {display} box image"))?,
        );
    }
    let [image, wayland_image] = <[String; 2]>::try_from(images).expect("two images");

    if let Some(kubeconfig) = &args.kubernetes {
        #[cfg(feature = "kubernetes")]
        {
            let (n, to) = (config.cold_starts, (args.out.as_path(), json));
            return kube::bench(kubeconfig, n, image, machine, (started, t0), to).await;
        }
        #[cfg(not(feature = "kubernetes"))]
        anyhow::bail!(
            "--kubernetes {}: this holm-bench was built without Kubernetes \
             (cargo build -p holm-bench --features kubernetes)",
            kubeconfig.display()
        );
    }
    let mut candidates = runtimes::candidates().await;
    if let Some(names) = &args.runtimes {
        candidates = runtimes::only(candidates, names)?;
    }
    let (file, more) = runtimes::runtimes_file(&candidates);
    let server = server::Server::start(&more, &file)?;
    let run_id = holm::ids::new_box_id();
    if args.scale {
        let request = bench_request(&run_id, Profile::X11);
        let (counts, secs): (&[usize], u64) =
            if args.quick { (&[1, 2], 2) } else { (&[1, 10, 30, 60], 10) };
        let counts = args.scale_counts.as_deref().unwrap_or(counts);
        if counts.is_empty() || counts.contains(&0) {
            anyhow::bail!("--scale-counts: give one or more counts of boxes, each at least 1");
        }
        let idle = Duration::from_secs(config.idle_secs);
        let run = scale::run(&server, docker.docker(), &request, counts, (idle, secs), &progress);
        let scale = alone(&server, docker.docker(), &mut machine, None, run).await?;
        let boxes = server.every_box();
        let report = ScaleReport { run: run_header(started, t0, machine), image, scale, boxes };
        return finish(&report, &args.out, json, || scale::print(&report));
    }
    if args.recording {
        let requests =
            [bench_request(&run_id, Profile::X11), bench_request(&run_id, Profile::Wayland)];
        let run = recording_rows(&server, docker.docker(), &requests, &config);
        let recording = alone(&server, docker.docker(), &mut machine, None, run).await?;
        let report = RecordingReport { run: run_header(started, t0, machine), recording };
        return finish(&report, &args.out, json, || recording::print(&report.recording));
    }
    if args.runtimes.is_some() {
        let requests =
            [bench_request(&run_id, Profile::X11), bench_request(&run_id, Profile::Wayland)];
        let how = (config.cold_starts, Duration::from_secs(config.idle_secs), config.quick);
        let run = runtimes::alone(&server, &requests, &candidates, how, &progress);
        let (docker_cold, docker_wayland, columns) =
            Box::pin(alone(&server, docker.docker(), &mut machine, None, run)).await?;
        let report = runtimes::Report {
            run: run_header(started, t0, machine),
            image,
            docker: docker_cold,
            docker_wayland,
            runtimes: columns,
        };
        return finish(&report, &args.out, json, || runtimes::print(&report));
    }
    if args.pool {
        let requests =
            [bench_request(&run_id, Profile::X11), bench_request(&run_id, Profile::Wayland)];
        let run = async {
            runtimes::prepare(&candidates, runtimes::displays(config.quick), &progress).await?;
            let (n, quick) = (config.cold_starts, config.quick);
            pooled::run(&server, &requests, &candidates, n, quick, &progress).await
        };
        let phase = Some("warm pool");
        let warm_pool = alone(&server, docker.docker(), &mut machine, phase, run).await?;
        let boxes = server.every_box();
        let report = pooled::PoolReport {
            run: run_header(started, t0, machine),
            image,
            targets: report::pool_targets(&warm_pool),
            warm_pool,
            boxes,
        };
        return finish(&report, &args.out, json, || {
            pooled::print(&report.warm_pool);
            report::print_targets(&report.targets);
        });
    }
    if args.latency {
        let request = bench_request(&run_id, Profile::X11);
        let run = measure_box(&server, docker.docker(), &request, &config, Profile::X11, false);
        let phase = Some("latency");
        let (latency, ..) =
            Box::pin(alone(&server, docker.docker(), &mut machine, phase, run)).await?;
        let report = LatencyReport {
            run: run_header(started, t0, machine),
            image,
            targets: speed::targets(&latency, &[]),
            latency,
        };
        return finish(&report, &args.out, json, || {
            report::print_rows(&report.latency);
            report::print_targets(&report.targets);
        });
    }
    if args.throughput {
        let request = bench_request(&run_id, Profile::X11);
        let run = async {
            let (ids, started_in) = concurrency_boxes(&server, &request, &config).await?;
            load::both(&server, &ids, &config, started_in, &progress).await
        };
        let phase = Some("concurrency");
        let concurrency =
            Box::pin(alone(&server, docker.docker(), &mut machine, phase, run)).await?;
        let refs: Vec<&load::Concurrency> = concurrency.iter().collect();
        let boxes = server.every_box();
        let report = load::ThroughputReport {
            boxes,
            run: run_header(started, t0, machine),
            image,
            targets: speed::targets(&[], &refs)
                .into_iter()
                .filter(|t| t.id.starts_with("speed_throughput"))
                .collect(),
            concurrency,
        };
        return finish(&report, &args.out, json, || {
            report.concurrency.iter().for_each(report::print_concurrency);
            report::print_targets(&report.targets);
        });
    }
    if args.viewers {
        let request = bench_request(&run_id, Profile::X11);
        let run = async {
            progress("viewers: starting an X11 box");
            let id = new_box(&server, &request).await?;
            let through = server.through_holmd(&id);
            let (n, secs) = (config.viewer_samples, config.viewer_secs);
            viewer::run(&server, &id, &through, n, secs, &progress).await
        };
        let phase = Some("viewers");
        let viewer = alone(&server, docker.docker(), &mut machine, phase, run).await?;
        let boxes = server.every_box();
        let report =
            viewer::ViewersOnly { run: run_header(started, t0, machine), image, viewer, boxes };
        return finish(&report, &args.out, json, || viewer::print(&report.viewer));
    }
    let requests = [bench_request(&run_id, Profile::X11), bench_request(&run_id, Profile::Wayland)];

    let mut loads = Vec::new();
    let phases = phases(&server, docker.docker(), &requests, &config, &candidates, &mut loads);
    let result = tokio::select! {
        r = phases => r,
        _ = tokio::signal::ctrl_c() => Err(anyhow::anyhow!("interrupted")),
    };
    progress("removing the benchmark's boxes");
    server.remove_all().await;
    let boxes = server.every_box();
    drop(server);
    let Measured {
        latency,
        viewer,
        cold_start,
        warm_pool,
        runtimes: runtime_columns,
        memory,
        concurrency: [concurrency, concurrency_changing],
        wayland,
        recording,
    } = result?;
    let wayland = WaylandReport {
        image: wayland_image,
        latency: wayland.0,
        cold_start: wayland.1,
        memory: wayland.2,
    };

    machine.load_by_phase = loads;
    machine.finish(docker.docker()).await;
    let mut targets = report::targets(&config, &latency, &cold_start, &memory, &concurrency);
    targets.extend(report::wayland_targets(&cold_start, &memory, &wayland));
    targets.extend(report::pool_targets(&warm_pool));
    targets.extend(speed::targets(&latency, &[&concurrency, &concurrency_changing]));
    let report = Report {
        run: run_header(started, t0, machine),
        config,
        image,
        latency,
        viewer,
        cold_start,
        warm_pool,
        runtimes: runtime_columns,
        memory,
        concurrency,
        concurrency_changing,
        wayland,
        recording,
        targets,
        boxes,
    };
    finish(&report, &args.out, json, || report::print(&report))
}

/// The `--scale` run's report, as written to `--out`.
#[derive(Debug, Serialize)]
pub struct ScaleReport {
    /// The version, when it ran, how long, the command and the machine.
    #[serde(flatten)]
    pub run: crate::report::Run,
    /// The box image.
    pub image: String,
    /// What grows with the number of boxes.
    pub scale: scale::Scale,
    /// Every box the run made (all removed at its end).
    pub boxes: Vec<String>,
}

/// The `--latency` run's report, as written to `--out`.
#[derive(Debug, Serialize)]
pub struct LatencyReport {
    /// The version, when it ran, how long, the command and the machine.
    #[serde(flatten)]
    pub run: crate::report::Run,
    /// The box image.
    pub image: String,
    /// Latency, holm against its baselines.
    pub latency: Vec<latency::Row>,
    /// The targets those rows decide.
    pub targets: Vec<report::Target>,
}

/// The `--recording` run's report, as written to `--out`.
#[derive(Debug, Serialize)]
pub struct RecordingReport {
    /// The version, when it ran, how long, the command and the machine.
    #[serde(flatten)]
    pub run: crate::report::Run,
    /// What recording costs a box, on each profile.
    pub recording: Vec<recording::Row>,
}

/// The cost of recording on each profile; `requests` are the X11 box's and
/// the Wayland box's.
async fn recording_rows(
    server: &server::Server,
    docker: &bollard::Docker,
    requests: &[CreateBox; 2],
    config: &Config,
) -> anyhow::Result<Vec<recording::Row>> {
    let pairs = [(Profile::X11, &requests[0]), (Profile::Wayland, &requests[1])];
    let times = (Duration::from_secs(config.idle_secs), Duration::from_secs(config.recording_secs));
    recording::run(server, docker, &pairs, times, &progress).await
}

/// A box of the bench's: labelled with the run, an hour at most.
fn bench_request(run_id: &str, display: Profile) -> CreateBox {
    CreateBox {
        spec: BoxSpec {
            labels: BTreeMap::from([("holm-bench".to_owned(), run_id.to_owned())]),
            display: Some(display),
            ..BoxSpec::default()
        },
        placement: Placement { expires_after_secs: Some(3600), ..Placement::default() },
    }
}

/// Writes `report` to `out`, then prints it (as JSON with `json`).
fn finish<R: Serialize>(
    report: &R,
    out: &std::path::Path,
    json: bool,
    print: impl FnOnce(),
) -> anyhow::Result<std::process::ExitCode> {
    let text = serde_json::to_string_pretty(report)?;
    std::fs::write(out, format!("{text}\n")).with_context(|| format!("write {}", out.display()))?;
    if json {
        output::json(report);
    } else {
        print();
        output::line(&format!("\nThe report is in {}.", out.display()));
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// Runs one measurement alone until it ends (or Ctrl-C), then removes
/// every box the run made and reads the machine at the end; `phase` names
/// the load average read at the start.
async fn alone<T>(
    server: &server::Server,
    docker: &bollard::Docker,
    machine: &mut report::Machine,
    phase: Option<&str>,
    run: impl std::future::Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    let loads = phase.map(|p| vec![(p.to_owned(), report::load_average())]);
    let result = tokio::select! {
        r = run => r,
        _ = tokio::signal::ctrl_c() => Err(anyhow::anyhow!("interrupted")),
    };
    server.remove_all().await;
    if let Some(loads) = loads {
        machine.load_by_phase = loads;
    }
    machine.finish(docker).await;
    result
}

/// What the phases measured.
struct Measured {
    latency: Vec<latency::Row>,
    viewer: viewer::ViewerReport,
    cold_start: cold::ColdStart,
    warm_pool: Vec<pooled::Pooled>,
    /// Each other runtime's cold start and idle memory.
    runtimes: Vec<runtimes::Column>,
    memory: report::Memory,
    /// On unchanged screens, then on changing ones.
    concurrency: [load::Concurrency; 2],
    /// The Wayland box: latency, cold start, idle memory.
    wayland: (Vec<latency::Row>, cold::ColdStart, report::Memory),
    /// What recording costs a box.
    recording: Vec<recording::Row>,
}

/// `requests` are the X11 box's and the Wayland box's.
async fn phases(
    server: &server::Server,
    docker: &bollard::Docker,
    requests: &[CreateBox; 2],
    config: &Config,
    candidates: &[runtimes::Candidate],
    loads: &mut Vec<(String, Option<[f64; 3]>)>,
) -> anyhow::Result<Measured> {
    let [request, wayland_request] = requests;
    let mut phase = |name: &str| loads.push((name.to_owned(), report::load_average()));
    // Cold starts first, while no other box of ours runs; X11 and Wayland
    // boxes by turns, so both meet the same load.
    phase("cold start");
    let kinds = [(Profile::X11, request), (Profile::Wayland, wayland_request)];
    let mut colds = cold::run(server, &kinds, config.cold_starts, &progress).await?.into_iter();
    let (cold_start, wayland_cold) = (colds.next().expect("x11"), colds.next().expect("wayland"));
    phase("runtimes");
    let how = (config.cold_starts, Duration::from_secs(config.idle_secs), config.quick);
    let runtimes = runtimes::run(server, requests, candidates, how, &progress).await?;

    phase("warm pool");
    let warm_pool =
        pooled::run(server, requests, candidates, config.cold_starts, config.quick, &progress)
            .await?;

    phase("latency");
    let (latency, x11_memory, viewer) =
        measure_box(server, docker, request, config, Profile::X11, true).await?;
    let viewer = viewer.context("the X11 box measured no viewer rows")?;
    let mut samples = vec![x11_memory.0];
    phase("wayland latency");
    let (wayland_latency, wayland_memory, _) =
        measure_box(server, docker, wayland_request, config, Profile::Wayland, true).await?;

    phase("recording");
    let recording = recording_rows(server, docker, requests, config).await?;

    phase("concurrency");
    let (ids, started_in) = concurrency_boxes(server, request, config).await?;
    for id in &ids {
        samples.push(memory::sample(docker, id).await?);
    }
    let concurrency = load::both(server, &ids, config, started_in, &progress).await?;
    Ok(Measured {
        latency,
        viewer,
        cold_start,
        warm_pool,
        runtimes,
        memory: report::Memory::new(samples, x11_memory.1),
        concurrency,
        wayland: (
            wayland_latency,
            wayland_cold,
            report::Memory::new(vec![wayland_memory.0], wayland_memory.1),
        ),
        recording,
    })
}

/// What one box measured: latency rows, idle memory (and its programs'),
/// and (X11) the viewer rows.
type BoxFigures =
    (Vec<latency::Row>, (memory::BoxMemory, Vec<(String, f64)>), Option<viewer::ViewerReport>);

/// One box of `display`: its idle memory (and its programs'), then its
/// latency rows, (X11) its viewer rows when `viewers`, and (X11) the busy
/// screen's rows; removed after.
async fn measure_box(
    server: &server::Server,
    docker: &bollard::Docker,
    request: &CreateBox,
    config: &Config,
    display: Profile,
    viewers: bool,
) -> anyhow::Result<BoxFigures> {
    progress(&format!("latency: starting a {display} box"));
    let id = new_box(server, request).await?;
    let guest = server.straight(&id).context("the box has no guest URL")?;
    progress(&format!("memory: letting the box idle {} s", config.idle_secs));
    tokio::time::sleep(Duration::from_secs(config.idle_secs)).await;
    let sample = memory::sample(docker, &id).await?;
    let top = memory::processes(&guest).await?;
    let through = server.through_holmd(&id);
    let (rows, viewers) = match display {
        Profile::X11 => {
            let exec = exec::Exec::new(&id);
            let mut rows = latency::run(&through, &guest, &exec, config.latency, &progress).await?;
            let (n, secs) = (config.viewer_samples, config.viewer_secs);
            let viewer = if viewers {
                Some(viewer::run(server, &id, &through, n, secs, &progress).await?)
            } else {
                None
            };
            // Last: the page covers the desktop the rows above measure.
            let n = config.latency.screenshots;
            rows.extend(busy::run(&through, &guest, &exec, n, &progress).await?);
            progress("quiet window: clicking a link and back, settled at 10 to 200 ms");
            rows.extend(quiet::run(&through, &guest, config.latency.quiet).await?);
            (rows, viewer)
        }
        Profile::Wayland => {
            let rows = wayland::run(
                &through,
                &guest,
                &exec::Exec::wayland(&id),
                config.latency,
                &progress,
            )
            .await?;
            (rows, None)
        }
    };
    server.remove(&id).await?;
    Ok((rows, (sample, top), viewers))
}

/// Starts a box through holmd and waits until it runs.
/// The concurrency run's boxes, asked for at once, and how long until all
/// were running (seconds); answers after they idled `config.idle_secs`.
async fn concurrency_boxes(
    server: &server::Server,
    request: &CreateBox,
    config: &Config,
) -> anyhow::Result<(Vec<String>, f64)> {
    progress(&format!("concurrency: starting {} boxes", config.boxes));
    let t = std::time::Instant::now();
    let starts = (0..config.boxes).map(|_| new_box(server, request));
    let ids = futures_util::future::try_join_all(starts).await.context("start the boxes")?;
    let started_in = t.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(config.idle_secs)).await;
    Ok((ids, started_in))
}

async fn new_box(server: &server::Server, request: &CreateBox) -> anyhow::Result<String> {
    let info = server.client.create_box(request, Some(300)).await.context("create a box")?;
    server.made(&info.id);
    if info.state != holm_proto::host::BoxState::Running {
        anyhow::bail!("box {} is {:?}: {}", info.id, info.state, info.reason.unwrap_or_default());
    }
    Ok(info.id)
}

/// What a report opens with, once the run that began at `started` (`t0`)
/// is over: the version, the times, the command and the machine.
pub(crate) fn run_header(
    started: std::time::SystemTime,
    t0: std::time::Instant,
    machine: report::Machine,
) -> report::Run {
    report::Run {
        holm_version: env!("CARGO_PKG_VERSION").into(),
        started_at: humantime::format_rfc3339_seconds(started).to_string(),
        took_secs: (t0.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        command: command_line(),
        machine,
    }
}

fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!("holm bench {}", args.join(" ")).trim_end().to_owned()
}
