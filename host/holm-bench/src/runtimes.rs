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

/// Makes sure each candidate that can be measured has the box image on its
/// engine (podman's first run builds it there: minutes).
pub async fn prepare(candidates: &[Candidate], progress: &dyn Fn(&str)) -> anyhow::Result<()> {
    for c in candidates.iter().filter(|c| c.skipped.is_none()) {
        let Some(engine) = &c.engine else { continue };
        progress(&format!("{}: preparing the box image on {}", c.name, engine.provider()));
        let mut quiet = |_: holm::image::Progress| {};
        engine.make_base(&mut quiet).await.context("make the base image")?;
        engine
            .prepare_image(&holm::image::ImageRequest::default(), &mut quiet)
            .await
            .with_context(|| format!("build the box image on {}", engine.provider()))?;
    }
    Ok(())
}

/// Measures each candidate: `n` cold starts, then one box's memory after
/// `idle` seconds. Each engine builds its image first (podman's first run
/// builds the box image on podman: minutes).
pub async fn run(
    server: &Server,
    request: &CreateBox,
    candidates: &[Candidate],
    n: usize,
    idle: Duration,
    progress: &dyn Fn(&str),
) -> anyhow::Result<Vec<Column>> {
    let mut out = Vec::new();
    for c in candidates {
        let (None, Some(engine)) = (&c.skipped, &c.engine) else {
            let why = c.skipped.clone().unwrap_or_default();
            progress(&format!("{}: not measured: {why}", c.name));
            out.push(Column {
                runtime: c.name.clone(),
                skipped: Some(why),
                cold_start_running: Samples::default().summary(),
                cold_start: None,
                idle_mib: None,
            });
            continue;
        };
        progress(&format!("{}: preparing the box image on {}", c.name, engine.provider()));
        let mut quiet = |_: holm::image::Progress| {};
        engine.make_base(&mut quiet).await.context("make the base image")?;
        engine
            .prepare_image(&holm::image::ImageRequest::default(), &mut quiet)
            .await
            .with_context(|| format!("build the box image on {}", engine.provider()))?;
        let on = CreateBox {
            placement: Placement { runtime: Some(c.name.clone()), ..request.placement.clone() },
            ..request.clone()
        };
        let kinds = [(Profile::X11, &on)];
        let before = server.every_box().len();
        let cold =
            match cold::run(server, &kinds, n, &|line| progress(&format!("{}: {line}", c.name)))
                .await
            {
                Ok(cold) => cold,
                // A runtime whose box does not start in time is a finding of
                // the run, written in its column; the other columns and rows
                // still stand. (Whether boxes start on it at all is the box
                // suite's to test, not the benchmark's.)
                Err(e) => {
                    let why = format!("no box started: {e:#}");
                    progress(&format!("{}: not measured: {why}", c.name));
                    server.remove_since(before).await;
                    out.push(Column {
                        runtime: c.name.clone(),
                        skipped: Some(why),
                        cold_start_running: Samples::default().summary(),
                        cold_start: None,
                        idle_mib: None,
                    });
                    continue;
                }
            };
        let cold = cold.into_iter().next().context("one cold start figure")?;
        let running = cold.stages.iter().find(|s| s.stage == "running").map(|s| s.since_request);
        let info = server.client.create_box(&on, Some(300)).await.context("create a box")?;
        server.made(&info.id);
        tokio::time::sleep(idle).await;
        let mem = memory::sample(engine.docker(), &info.id).await;
        server.remove(&info.id).await?;
        out.push(Column {
            runtime: c.name.clone(),
            skipped: None,
            cold_start_running: running.unwrap_or_else(|| Samples::default().summary()),
            cold_start: Some(cold),
            idle_mib: mem.ok().map(|m| m.docker_stats_mib),
        });
    }
    Ok(out)
}

/// The `--runtimes` run's report, as written to `--out`.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The version, when it ran, how long, the command and the machine.
    #[serde(flatten)]
    pub run: crate::report::Run,
    /// The box image (on Docker).
    pub image: String,
    /// Docker's cold start in the same run, the columns' baseline.
    pub docker: cold::ColdStart,
    /// Each other runtime's cold start and idle memory.
    pub runtimes: Vec<Column>,
}

/// Docker's cold starts, then each candidate's: the runtime columns alone.
pub async fn alone(
    server: &Server,
    request: &CreateBox,
    candidates: &[Candidate],
    n: usize,
    idle: Duration,
    progress: &dyn Fn(&str),
) -> anyhow::Result<(cold::ColdStart, Vec<Column>)> {
    let kinds = [(Profile::X11, request)];
    let docker = cold::run(server, &kinds, n, &|l| progress(&format!("docker: {l}"))).await?;
    let docker = docker.into_iter().next().context("one cold start figure")?;
    let columns = run(server, request, candidates, n, idle, progress).await?;
    Ok((docker, columns))
}

/// Prints the `--runtimes` report: each runtime's stages, then the columns.
pub fn print(r: &Report) {
    super::report::print_cold("cold start (docker)", &r.docker);
    for c in &r.runtimes {
        if let Some(cold) = &c.cold_start {
            super::report::print_cold(&format!("cold start ({})", c.runtime), cold);
        }
    }
    super::report::print_runtime_columns(&r.docker, None, &r.runtimes);
}
