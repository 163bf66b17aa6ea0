//! `holm bench`: how fast holm is against the exec-driven way, measured side
//! by side on real boxes on Docker, in one run.
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
//! - the memory of an idle box ([`memory`]);
//! - concurrency ([`load`]): K boxes × M clients for T seconds.
//!
//! It prints tables (or, with `--json`, the report) and writes the report as
//! JSON. It never asserts a time; the targets are checked and printed.
//! Only boxes it made are touched, and every one is removed at the end.

mod cold;
mod exec;
mod latency;
mod load;
mod memory;
mod report;
mod server;
mod stats;

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use holm::runtime::Runtime;
use holm::runtime::docker::DockerRuntime;
use holm_proto::host::{BoxSpec, CreateBox, Placement};
use serde::Serialize;

use crate::output;

/// `holm bench`'s arguments.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The shortest run that measures every row once or a few times (about a
    /// minute): for a smoke test, not for figures.
    #[arg(long)]
    quick: bool,
    /// Where to write the report as JSON.
    #[arg(long, default_value = "holm-bench.json")]
    out: std::path::PathBuf,
    /// Runs of each latency pair (screenshots, clicks, act-then-see; typing
    /// runs half as many, holmd's overhead four times as many).
    #[arg(long)]
    samples: Option<usize>,
    /// Cold starts (the median of at least 5 is the figure).
    #[arg(long)]
    cold: Option<usize>,
    /// Concurrency: K boxes.
    #[arg(long)]
    boxes: Option<usize>,
    /// Concurrency: M clients on each box.
    #[arg(long)]
    clients: Option<usize>,
    /// Concurrency: T seconds.
    #[arg(long)]
    duration: Option<u64>,
    /// Seconds a box idles before its memory is read.
    #[arg(long)]
    idle: Option<u64>,
}

/// What one run does.
#[derive(Debug, Clone, Serialize)]
pub struct Config {
    /// `--quick`.
    pub quick: bool,
    /// Runs of each latency pair.
    pub latency: latency::Counts,
    /// Cold starts.
    pub cold_starts: usize,
    /// K.
    pub boxes: usize,
    /// M.
    pub clients_per_box: usize,
    /// T.
    pub duration_secs: u64,
    /// Idle seconds before memory is read.
    pub idle_secs: u64,
}

impl Config {
    fn from_args(a: &BenchArgs) -> Self {
        let samples = a.samples.unwrap_or(if a.quick { 2 } else { 20 }).max(1);
        let mut latency = latency::Counts {
            screenshots: samples,
            clicks: if a.samples.is_none() && !a.quick { 50 } else { samples },
            types: (samples / 2).max(1),
            acts: samples,
            overhead: samples * 4,
        };
        if a.samples.is_none() && !a.quick {
            latency.overhead = 200;
        }
        Self {
            quick: a.quick,
            latency,
            cold_starts: a.cold.unwrap_or(if a.quick { 1 } else { 5 }),
            boxes: a.boxes.unwrap_or(if a.quick { 1 } else { 10 }),
            clients_per_box: a.clients.unwrap_or(if a.quick { 2 } else { 10 }),
            duration_secs: a.duration.unwrap_or(if a.quick { 2 } else { 60 }),
            idle_secs: a.idle.unwrap_or(if a.quick { 2 } else { 10 }),
        }
    }
}

/// The whole report, as written to `--out`.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The holm version.
    pub holm_version: String,
    /// When the run started (RFC 3339).
    pub started_at: String,
    /// How long it took, seconds.
    pub took_secs: f64,
    /// The command that repeats it.
    pub command: String,
    /// The machine, and what else it ran.
    pub machine: report::Machine,
    /// What the run did.
    pub config: Config,
    /// The box image.
    pub image: String,
    /// Latency, holm against its baselines.
    pub latency: Vec<latency::Row>,
    /// Cold start.
    pub cold_start: cold::ColdStart,
    /// Idle boxes' memory.
    pub memory: report::Memory,
    /// Concurrency.
    pub concurrency: load::Concurrency,
    /// The targets, checked.
    pub targets: Vec<report::Target>,
    /// Every box the run made (all removed at its end).
    pub boxes: Vec<String>,
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
    let image = docker
        .prepare_image(&holm::image::ImageRequest::default(), &mut image_progress)
        .await
        .context("build the box image")?;

    let server = server::Server::start()?;
    let run_id = holm::ids::new_box_id();
    let request = CreateBox {
        spec: BoxSpec {
            labels: BTreeMap::from([("holm-bench".to_owned(), run_id)]),
            ..BoxSpec::default()
        },
        placement: Placement { expires_after_secs: Some(3600), ..Placement::default() },
    };

    let mut loads = Vec::new();
    let phases = phases(&server, docker.docker(), &request, &config, &mut loads);
    let result = tokio::select! {
        r = phases => r,
        _ = tokio::signal::ctrl_c() => Err(anyhow::anyhow!("interrupted")),
    };
    progress("removing the benchmark's boxes");
    server.remove_all().await;
    let boxes = server.every_box();
    drop(server);
    let (latency, cold_start, memory, concurrency) = result?;

    machine.load_by_phase = loads;
    machine.finish(docker.docker()).await;
    let targets = report::targets(&config, &latency, &cold_start, &memory, &concurrency);
    let report = Report {
        holm_version: env!("CARGO_PKG_VERSION").into(),
        started_at: humantime::format_rfc3339_seconds(started).to_string(),
        took_secs: (t0.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        command: command_line(),
        machine,
        config,
        image,
        latency,
        cold_start,
        memory,
        concurrency,
        targets,
        boxes,
    };
    let text = serde_json::to_string_pretty(&report)?;
    std::fs::write(&args.out, format!("{text}\n"))
        .with_context(|| format!("write {}", args.out.display()))?;
    if json {
        output::json(&report);
    } else {
        report::print(&report);
        output::line(&format!("\nThe report is in {}.", args.out.display()));
    }
    Ok(std::process::ExitCode::SUCCESS)
}

type Phases = (Vec<latency::Row>, cold::ColdStart, report::Memory, load::Concurrency);

async fn phases(
    server: &server::Server,
    docker: &bollard::Docker,
    request: &CreateBox,
    config: &Config,
    loads: &mut Vec<(String, Option<[f64; 3]>)>,
) -> anyhow::Result<Phases> {
    let mut phase = |name: &str| loads.push((name.to_owned(), report::load_average()));
    // Cold starts first, while no other box of ours runs.
    phase("cold start");
    let cold_start = cold::run(server, request, config.cold_starts, &progress).await?;

    phase("latency");
    progress("latency: starting a box");
    let id = new_box(server, request).await?;
    let guest = server.straight(&id).context("the box has no guest URL")?;
    progress(&format!("memory: letting the box idle {} s", config.idle_secs));
    tokio::time::sleep(Duration::from_secs(config.idle_secs)).await;
    let mut samples = vec![memory::sample(docker, &id).await?];
    let top = memory::processes(&guest).await?;
    let latency = latency::run(
        &server.through_holmd(&id),
        &guest,
        &exec::Exec::new(&id),
        config.latency,
        &progress,
    )
    .await?;
    server.remove(&id).await?;

    phase("concurrency");
    progress(&format!("concurrency: starting {} boxes", config.boxes));
    let t = std::time::Instant::now();
    let starts = (0..config.boxes).map(|_| new_box(server, request));
    let ids: Vec<String> =
        futures_util::future::try_join_all(starts).await.context("start the boxes")?;
    let started_in = t.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(config.idle_secs)).await;
    for id in &ids {
        samples.push(memory::sample(docker, id).await?);
    }
    progress(&format!(
        "concurrency: {} boxes × {} clients for {} s",
        config.boxes, config.clients_per_box, config.duration_secs
    ));
    let mut concurrency =
        load::run(server, &ids, config.clients_per_box, Duration::from_secs(config.duration_secs))
            .await;
    concurrency.boxes_started_in_secs = (started_in * 10.0).round() / 10.0;
    Ok((latency, cold_start, report::Memory::new(samples, top), concurrency))
}

/// Starts a box through holmd and waits until it runs.
async fn new_box(server: &server::Server, request: &CreateBox) -> anyhow::Result<String> {
    let info = server.client.create_box(request, Some(300)).await.context("create a box")?;
    server.made(&info.id);
    if info.state != holm_proto::host::BoxState::Running {
        anyhow::bail!("box {} is {:?}: {}", info.id, info.state, info.reason.unwrap_or_default());
    }
    Ok(info.id)
}

fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!("holm {}", args.join(" "))
}
