//! Create → usable from a warm pool against a cold create, in the same run
//! and by turns, on each runtime (Docker, podman, gVisor): for each, a
//! second holmd keeps a pool of one box of the X11 request's spec on that
//! runtime; each turn times a create that claims the pooled box (on that
//! server) and a cold create of the same request on the same runtime (on
//! the benchmark's own server, which has no pool), both until holmd
//! answers `running`. Each turn waits for the pool to be full again first,
//! so no refill runs during either create.
//!
//! `holm-bench --pool` measures only these rows (and the targets they
//! decide), with their own report.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use holm_proto::guest::Profile;
use holm_proto::host::{BoxState, CreateBox, Placement};
use serde::Serialize;

use super::runtimes::Candidate;
use super::server::Server;
use super::stats::{Samples, Summary};

/// The pool runtime `name`'s second holmd keeps: one box of the default
/// spec (one screen, Chromium) on `display`, which that display's request
/// matches.
pub fn pool_section(name: &str, display: Profile) -> String {
    format!("[[runtimes.{name}.pool]]\nsize = 1\ndisplay = \"{display}\"\n")
}

/// Pooled against cold, on one runtime.
#[derive(Debug, Clone, Serialize)]
pub struct Pooled {
    /// The runtime.
    pub runtime: String,
    /// Why it was not measured, when it was not.
    pub skipped: Option<String>,
    /// Turns.
    pub n: usize,
    /// Create → holmd answers running, claiming a pooled box.
    pub pooled: Summary,
    /// Create → holmd answers running, cold, same request and runtime, by
    /// turns.
    pub cold: Summary,
    /// Cold p50 over pooled p50.
    pub ratio_p50: Option<f64>,
}

impl Pooled {
    fn skipped(runtime: &str, why: String) -> Self {
        Self {
            runtime: runtime.to_owned(),
            skipped: Some(why),
            n: 0,
            pooled: Samples::default().summary(),
            cold: Samples::default().summary(),
            ratio_p50: None,
        }
    }
}

/// Runs `n` turns of a pooled and a cold create of the X11 request on
/// Docker, then of the Wayland request on Docker, then of each request on
/// each of `candidates` that can be measured (with `docker_only`,
/// `--quick`'s smoke run, each but Docker's X11 row is a row saying it was
/// not measured: the e2e suite's `starts.rs` checks a pool on every
/// runtime, and the test command's time stays within its budget). Docker's
/// X11 row comes first; a failure there ends the run, one on another row
/// is written in its row.
pub async fn run(
    server: &Server,
    requests: &[CreateBox; 2],
    candidates: &[Candidate],
    n: usize,
    docker_only: bool,
    progress: &dyn Fn(&str),
) -> anyhow::Result<Vec<Pooled>> {
    let [request, _] = requests;
    let mut rows =
        vec![run_on(server, request, ("docker", Profile::X11), None, n, progress).await?];
    let quick = docker_only.then(|| "--quick measures Docker's X11 pool only".to_owned());
    let mut others: Vec<(Option<&Candidate>, Profile)> = vec![(None, Profile::Wayland)];
    for c in candidates {
        others.extend([Profile::X11, Profile::Wayland].map(|d| (Some(c), d)));
    }
    for (c, display) in others {
        let name = c.map_or("docker", |c| c.name.as_str());
        let label = super::runtimes::label(name, display);
        let request = if display == Profile::X11 { &requests[0] } else { &requests[1] };
        let why = c.and_then(|c| c.skipped.clone()).or_else(|| quick.clone());
        let row = match why {
            Some(why) => Err(anyhow::anyhow!(why)),
            None => {
                let before = server.every_box().len();
                let row = run_on(server, request, (name, display), c, n, progress).await;
                if row.is_err() {
                    server.remove_since(before).await;
                }
                row
            }
        };
        rows.push(match row {
            Ok(row) => Pooled { runtime: label, ..row },
            Err(e) => {
                progress(&format!("warm pool on {label}: not measured: {e:#}"));
                Pooled::skipped(&label, format!("{e:#}"))
            }
        });
    }
    Ok(rows)
}

/// `n` turns on runtime `name` with a pool of `display` boxes, which a
/// holmd offers with the candidate's runtimes-file table (none for
/// Docker, offered by default).
async fn run_on(
    server: &Server,
    request: &CreateBox,
    (name, display): (&str, Profile),
    candidate: Option<&Candidate>,
    n: usize,
    progress: &dyn Fn(&str),
) -> anyhow::Result<Pooled> {
    let section = candidate.map(Candidate::runtime_section).unwrap_or_default();
    let more: Vec<String> = candidate.map(|c| c.name.clone()).into_iter().collect();
    let file = format!("{section}{}", pool_section(name, display));
    let pool = Server::start(&more, &file)?;
    let on = CreateBox {
        placement: Placement { runtime: Some(name.to_owned()), ..request.placement.clone() },
        ..request.clone()
    };
    let (mut pooled, mut cold) = (Samples::default(), Samples::default());
    let label = super::runtimes::label(name, display);
    for i in 0..n {
        progress(&format!("warm pool on {label} {}/{n}: waiting for the pool to fill", i + 1));
        wait_for_pool(&pool).await?;
        pooled.push(create(&pool, &on).await?);
        wait_for_pool(&pool).await?;
        progress(&format!("warm pool on {label} {}/{n}: a cold create beside it", i + 1));
        cold.push(create(server, &on).await?);
    }
    let (pooled, cold) = (pooled.summary(), cold.summary());
    let ratio_p50 = cold.p50_ms.zip(pooled.p50_ms).map(|(c, p)| (c / p * 10.0).round() / 10.0);
    drop(pool);
    Ok(Pooled { runtime: name.to_owned(), skipped: None, n, pooled, cold, ratio_p50 })
}

/// Waits until the pool has a box waiting.
async fn wait_for_pool(pool: &Server) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let all = pool.client.every_box(true).await.context("list the pool's boxes")?;
        if all.iter().any(|b| b.state == BoxState::Pooled) {
            return Ok(());
        }
        if let Some(failed) = all.iter().find(|b| b.state == BoxState::Failed) {
            bail!("a pooled box failed: {}", failed.reason.clone().unwrap_or_default());
        }
        if Instant::now() > deadline {
            bail!("the warm pool did not fill in 300 seconds");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One create, until holmd answers running; the box is removed after.
pub(crate) async fn create(server: &Server, request: &CreateBox) -> anyhow::Result<Duration> {
    let t0 = Instant::now();
    let info = server
        .client
        .create_box(request, Some(crate::cold::START_LIMIT_SECS))
        .await
        .context("create a box")?;
    let took = t0.elapsed();
    server.made(&info.id);
    if info.state != BoxState::Running {
        bail!("box {} is {:?}: {}", info.id, info.state, info.reason.unwrap_or_default());
    }
    server.remove(&info.id).await?;
    Ok(took)
}

/// Prints the rows: one per runtime, pooled against cold on that runtime.
pub fn print(rows: &[Pooled]) {
    use crate::report::cell;
    let n = rows.iter().map(|r| r.n).max().unwrap_or(0);
    crate::output::line(&format!(
        "\ncreate → running from a warm pool against cold on the same runtime, by turns (n = {n}):\n"
    ));
    crate::output::line(
        "| runtime | from a warm pool p50 ms | p95 ms | cold p50 ms | p95 ms | cold / pooled |",
    );
    crate::output::line("|---|---:|---:|---:|---:|---:|");
    for r in rows {
        if let Some(why) = &r.skipped {
            crate::output::line(&format!("| {} | not measured: {why} | | | | |", r.runtime));
            continue;
        }
        crate::output::line(&format!(
            "| {} | {} | {} | {} | {} | {}× |",
            r.runtime,
            cell(r.pooled.p50_ms),
            cell(r.pooled.p95_ms),
            cell(r.cold.p50_ms),
            cell(r.cold.p95_ms),
            r.ratio_p50.map_or_else(|| "-".into(), |x| format!("{x:.1}")),
        ));
    }
}

/// The report of a `--pool` run, as written to `--out`.
#[derive(Debug, Serialize)]
pub struct PoolReport {
    /// The version, when it ran, how long, the command and the machine.
    #[serde(flatten)]
    pub run: crate::report::Run,
    /// The box image.
    pub image: String,
    /// One row per runtime, Docker's first.
    pub warm_pool: Vec<Pooled>,
    /// The targets those rows decide.
    pub targets: Vec<crate::report::Target>,
    /// Every box the run made (all removed at its end).
    pub boxes: Vec<String>,
}
