//! The runtime columns: cold start and idle memory of the same box on each
//! other container runtime the host has (podman, and each engine under
//! gVisor's runsc), beside Docker's in the same run, as ratios to it.
//!
//! A runtime is measured when its engine answers (and, for gVisor, when the
//! engine has `runsc`); one that cannot be is listed with the reason, not
//! left out silently.

use std::time::Duration;

use anyhow::Context;
use holm::runtime::Runtime;
use holm::runtime::docker::DockerRuntime;
use holm_proto::guest::Profile;
use holm_proto::host::{CreateBox, Placement};
use serde::Serialize;

use super::server::Server;
use super::stats::{Samples, Summary};
use super::{cold, memory};

/// A runtime to measure beside Docker.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The runtime's name in the benchmark's holmd.
    pub name: String,
    /// Its engine, when it can be reached.
    engine: Option<DockerRuntime>,
    /// Its OCI runtime, when not the engine's default.
    isolation: Option<&'static str>,
    /// Why it cannot be measured here, if it cannot.
    pub skipped: Option<String>,
}

/// One column of the table.
#[derive(Debug, Clone, Serialize)]
pub struct Column {
    /// The runtime.
    pub runtime: String,
    /// The box's display.
    pub display: Profile,
    /// Why it was not measured, when it was not.
    pub skipped: Option<String>,
    /// From the create request to holmd answering `running`, ms.
    pub cold_start_running: Summary,
    /// Its cold starts stage by stage (the guest's, each component's), to
    /// see where a slow runtime spends its time.
    pub cold_start: Option<cold::ColdStart>,
    /// An idle box's memory as the engine's stats show it, MiB.
    pub idle_mib: Option<f64>,
}

/// The runtimes to measure beside Docker: podman, Docker under runsc and
/// podman under runsc, each with whether it can be measured here.
pub async fn candidates() -> Vec<Candidate> {
    let mut out = Vec::new();
    let docker = DockerRuntime::connect("docker").ok();
    let podman = holm::runtime::podman::connect("podman");
    for (name, engine, isolation) in [
        ("podman", podman.as_ref().ok().cloned(), None),
        ("docker-runsc", docker.clone(), Some("runsc")),
        ("podman-runsc", podman.as_ref().ok().cloned(), Some("runsc")),
    ] {
        let Some(engine) = engine else {
            let skipped = Some("its engine cannot be reached".to_owned());
            out.push(Candidate { name: name.into(), engine: None, isolation, skipped });
            continue;
        };
        let skipped = match engine.ping().await {
            Err(e) => Some(e.to_string()),
            Ok(()) => match isolation {
                None => None,
                Some(i) => isolation_missing(&engine, i).await,
            },
        };
        out.push(Candidate { name: name.into(), engine: Some(engine), isolation, skipped });
    }
    out
}

/// Why `engine` cannot run boxes under `isolation`, if it cannot: it has
/// no such OCI runtime, or (podman 4.3, whose API runs every container on
/// its default) its default is another.
async fn isolation_missing(engine: &DockerRuntime, isolation: &str) -> Option<String> {
    let provider = engine.provider();
    match engine.oci_runtimes().await {
        Err(e) => return Some(e.to_string()),
        Ok(has) if !has.iter().any(|h| h == isolation) => {
            return Some(format!("the {provider} engine has no {isolation}"));
        }
        Ok(_) => {}
    }
    if provider != "podman" {
        return None;
    }
    match engine.default_oci_runtime().await {
        Ok(Some(d)) if d == isolation => None,
        Ok(d) => Some(format!(
            "podman's API runs every container on its default OCI runtime ({}), not {isolation}",
            d.unwrap_or_default()
        )),
        Err(e) => Some(e.to_string()),
    }
}

/// Keeps only the candidates named (`--runtimes docker-runsc`); none named
/// keeps them all. A name that is no candidate's is an error that lists them.
pub fn only(candidates: Vec<Candidate>, names: &[String]) -> anyhow::Result<Vec<Candidate>> {
    if let Some(unknown) = names.iter().find(|n| !candidates.iter().any(|c| &c.name == *n)) {
        let known: Vec<&str> = candidates.iter().map(|c| c.name.as_str()).collect();
        anyhow::bail!(
            "--runtimes {unknown}: no such runtime; the runtimes are {}",
            known.join(", ")
        );
    }
    Ok(candidates.into_iter().filter(|c| names.is_empty() || names.contains(&c.name)).collect())
}

impl Candidate {
    /// The runtimes file's table for it: its provider and isolation, or
    /// nothing for an engine's own runtime (offered by its name alone).
    pub fn runtime_section(&self) -> String {
        match (self.isolation, &self.engine) {
            (Some(i), Some(engine)) => format!(
                "[runtimes.{}]\nprovider = \"{}\"\nisolation = \"{i}\"\n",
                self.name,
                engine.provider()
            ),
            _ => String::new(),
        }
    }
}

/// The runtimes file that offers the candidates that can be measured, and
/// their names for `HOLM_SERVER_RUNTIMES`.
pub fn runtimes_file(candidates: &[Candidate]) -> (String, Vec<String>) {
    let mut text = String::new();
    let mut names = Vec::new();
    for c in candidates.iter().filter(|c| c.skipped.is_none()) {
        text.push_str(&c.runtime_section());
        names.push(c.name.clone());
    }
    (text, names)
}

/// The displays whose columns and pool rows `--quick` leaves out on the
/// other runtimes (their X11 boxes stand for them there), and why.
pub const QUICK_SKIPS_WAYLAND: &str = "--quick measures the other runtimes' X11 boxes only";

/// Makes the box images of `displays` on `engine` (podman's first run
/// builds them there: minutes).
async fn images_on(
    engine: &DockerRuntime,
    displays: &[Profile],
    progress: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let mut quiet = |_: holm::image::Progress| {};
    engine.make_base(&mut quiet).await.context("make the base image")?;
    for &display in displays {
        progress(&format!("preparing the {display} box image on {}", engine.provider()));
        let request = holm::image::ImageRequest::default().with_display(display);
        engine
            .prepare_image(&request, &mut quiet)
            .await
            .with_context(|| format!("build the {display} box image on {}", engine.provider()))?;
    }
    Ok(())
}

/// The displays measured on the other runtimes: both, or X11 alone with
/// `quick`.
pub fn displays(quick: bool) -> &'static [Profile] {
    if quick { &[Profile::X11] } else { &[Profile::X11, Profile::Wayland] }
}

/// Makes sure each candidate that can be measured has the box images of
/// `displays` on its engine.
pub async fn prepare(
    candidates: &[Candidate],
    displays: &[Profile],
    progress: &dyn Fn(&str),
) -> anyhow::Result<()> {
    for c in candidates.iter().filter(|c| c.skipped.is_none()) {
        let Some(engine) = &c.engine else { continue };
        images_on(engine, displays, &|l| progress(&format!("{}: {l}", c.name))).await?;
    }
    Ok(())
}

impl Column {
    fn skipped(runtime: &str, display: Profile, why: String) -> Self {
        Self {
            runtime: runtime.to_owned(),
            display,
            skipped: Some(why),
            cold_start_running: Samples::default().summary(),
            cold_start: None,
            idle_mib: None,
        }
    }

    /// The runtime and, for Wayland, the display: `podman (wayland)`.
    pub fn label(&self) -> String {
        label(&self.runtime, self.display)
    }
}

/// A runtime's row label: its name, and `(wayland)` for a Wayland box.
pub fn label(runtime: &str, display: Profile) -> String {
    match display {
        Profile::X11 => runtime.to_owned(),
        Profile::Wayland => format!("{runtime} (wayland)"),
    }
}

/// Measures each candidate, an X11 box and a Wayland box (with `quick`, a
/// column saying the Wayland box was not measured): `n` cold starts, then
/// one box's memory after `idle` seconds. Each engine builds its images
/// first (podman's first run builds them on podman: minutes).
pub async fn run(
    server: &Server,
    requests: &[CreateBox; 2],
    candidates: &[Candidate],
    (n, idle, quick): (usize, Duration, bool),
    progress: &dyn Fn(&str),
) -> anyhow::Result<Vec<Column>> {
    let mut out = Vec::new();
    for c in candidates {
        let (None, Some(engine)) = (&c.skipped, &c.engine) else {
            let why = c.skipped.clone().unwrap_or_default();
            progress(&format!("{}: not measured: {why}", c.name));
            for display in [Profile::X11, Profile::Wayland] {
                out.push(Column::skipped(&c.name, display, why.clone()));
            }
            continue;
        };
        images_on(engine, displays(quick), &|l| progress(&format!("{}: {l}", c.name))).await?;
        for (display, request) in [Profile::X11, Profile::Wayland].into_iter().zip(requests) {
            if !displays(quick).contains(&display) {
                out.push(Column::skipped(&c.name, display, QUICK_SKIPS_WAYLAND.into()));
                continue;
            }
            let on = CreateBox {
                placement: Placement { runtime: Some(c.name.clone()), ..request.placement.clone() },
                ..request.clone()
            };
            out.push(column(server, engine, (&c.name, display), &on, (n, idle), progress).await?);
        }
    }
    Ok(out)
}

/// One column: `n` cold starts of `on` on runtime `name`, then one box's
/// idle memory.
async fn column(
    server: &Server,
    engine: &DockerRuntime,
    (name, display): (&str, Profile),
    on: &CreateBox,
    (n, idle): (usize, Duration),
    progress: &dyn Fn(&str),
) -> anyhow::Result<Column> {
    let label = label(name, display);
    let before = server.every_box().len();
    let kinds = [(display, on)];
    let cold =
        match cold::run(server, &kinds, n, &|line| progress(&format!("{label}: {line}"))).await {
            Ok(cold) => cold,
            // A runtime whose box does not start in time is a finding of the
            // run, written in its column; the other columns and rows still
            // stand. (Whether boxes start on it at all is the box suite's to
            // test, not the benchmark's.)
            Err(e) => {
                let why = format!("no box started: {e:#}");
                progress(&format!("{label}: not measured: {why}"));
                server.remove_since(before).await;
                return Ok(Column::skipped(name, display, why));
            }
        };
    let cold = cold.into_iter().next().context("one cold start figure")?;
    let running = cold.stages.iter().find(|s| s.stage == "running").map(|s| s.since_request);
    let info = server.client.create_box(on, Some(300)).await.context("create a box")?;
    server.made(&info.id);
    tokio::time::sleep(idle).await;
    let mem = memory::sample(engine.docker(), &info.id).await;
    server.remove(&info.id).await?;
    Ok(Column {
        runtime: name.to_owned(),
        display,
        skipped: None,
        cold_start_running: running.unwrap_or_else(|| Samples::default().summary()),
        cold_start: Some(cold),
        idle_mib: mem.ok().map(|m| m.docker_stats_mib),
    })
}

/// The `--runtimes` run's report, as written to `--out`.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The version, when it ran, how long, the command and the machine.
    #[serde(flatten)]
    pub run: crate::report::Run,
    /// The box image (on Docker).
    pub image: String,
    /// Docker's cold start of an X11 box in the same run, the X11
    /// columns' baseline.
    pub docker: cold::ColdStart,
    /// Docker's cold start of a Wayland box in the same run, the Wayland
    /// columns' baseline (none with `--quick`).
    pub docker_wayland: Option<cold::ColdStart>,
    /// Each other runtime's cold start and idle memory, X11 and Wayland.
    pub runtimes: Vec<Column>,
}

/// Docker's cold starts (X11 and, unless `quick`, Wayland, by turns), then
/// each candidate's: the runtime columns alone.
pub async fn alone(
    server: &Server,
    requests: &[CreateBox; 2],
    candidates: &[Candidate],
    (n, idle, quick): (usize, Duration, bool),
    progress: &dyn Fn(&str),
) -> anyhow::Result<(cold::ColdStart, Option<cold::ColdStart>, Vec<Column>)> {
    let kinds: Vec<(Profile, &CreateBox)> =
        displays(quick).iter().copied().zip(requests.iter()).collect();
    let docker = cold::run(server, &kinds, n, &|l| progress(&format!("docker: {l}"))).await?;
    let mut docker = docker.into_iter();
    let x11 = docker.next().context("one cold start figure")?;
    let columns = run(server, requests, candidates, (n, idle, quick), progress).await?;
    Ok((x11, docker.next(), columns))
}

/// Prints the `--runtimes` report: each runtime's stages, then the columns.
pub fn print(r: &Report) {
    use super::report::{Baseline, print_cold, print_runtime_columns};
    print_cold("cold start (docker)", &r.docker);
    if let Some(wayland) = &r.docker_wayland {
        print_cold("cold start (docker (wayland))", wayland);
    }
    for c in &r.runtimes {
        if let Some(cold) = &c.cold_start {
            print_cold(&format!("cold start ({})", c.label()), cold);
        }
    }
    let mut base = vec![Baseline { display: Profile::X11, cold: &r.docker, idle_mib: None }];
    if let Some(cold) = &r.docker_wayland {
        base.push(Baseline { display: Profile::Wayland, cold, idle_mib: None });
    }
    print_runtime_columns(&base, &r.runtimes);
}
