//! The memory of an idle box: what `docker stats` shows (the cgroup's usage
//! less its inactive page cache), its anonymous memory, and which processes
//! hold it.

use std::collections::BTreeMap;

use anyhow::Context;
use bollard::query_parameters::StatsOptions;
use futures_util::StreamExt;
use holm_client::BoxClient;
use serde::Serialize;

const MIB: f64 = 1024.0 * 1024.0;

/// One box's memory.
#[derive(Debug, Clone, Serialize)]
pub struct BoxMemory {
    /// As `docker stats` shows it: usage less inactive file pages, MiB.
    pub docker_stats_mib: f64,
    /// The cgroup's whole usage, page cache included, MiB.
    pub usage_mib: f64,
    /// Anonymous memory (cgroup v1 `total_rss`, v2 `anon`), MiB.
    pub anon_mib: Option<f64>,
}

/// Box `id`'s container statistics, as the engine has them now.
pub async fn stats(
    docker: &bollard::Docker,
    box_id: &str,
) -> anyhow::Result<bollard::models::ContainerStatsResponse> {
    let name = holm::runtime::docker::container_name(box_id);
    docker
        .stats(&name, Some(StatsOptions { stream: false, one_shot: true }))
        .next()
        .await
        .context("the engine answered no stats")?
        .with_context(|| format!("read the stats of {name}"))
}

/// Reads box `id`'s memory from the engine.
pub async fn sample(docker: &bollard::Docker, box_id: &str) -> anyhow::Result<BoxMemory> {
    let stats = stats(docker, box_id).await?;
    let mem = stats.memory_stats.context("the engine reported no memory")?;
    let usage = mem.usage.unwrap_or(0);
    let detail = mem.stats.unwrap_or_default();
    // As the docker CLI computes it: cgroup v1 `total_inactive_file`, v2
    // `inactive_file`.
    let inactive = detail
        .get("total_inactive_file")
        .or_else(|| detail.get("inactive_file"))
        .copied()
        .filter(|i| *i < usage)
        .unwrap_or(0);
    let anon = detail.get("total_rss").or_else(|| detail.get("anon")).copied();
    #[allow(clippy::cast_precision_loss)]
    let mib = |b: u64| (b as f64 / MIB * 10.0).round() / 10.0;
    Ok(BoxMemory {
        docker_stats_mib: mib(usage - inactive),
        usage_mib: mib(usage),
        anon_mib: anon.map(mib),
    })
}

/// The resident memory of the box's processes, summed by program, MiB,
/// largest first (shared pages are counted in each process that maps them,
/// so the sum is above the cgroup's figure).
pub async fn processes(guest: &BoxClient) -> anyhow::Result<Vec<(String, f64)>> {
    let r = guest.exec(&["ps", "-eo", "rss=,comm="]).await?;
    let mut by: BTreeMap<String, u64> = BTreeMap::new();
    for line in r.stdout.lines() {
        let mut parts = line.split_whitespace();
        let (Some(rss), Some(comm)) = (parts.next(), parts.next()) else { continue };
        let Ok(kib) = rss.parse::<u64>() else { continue };
        *by.entry(comm.to_owned()).or_default() += kib;
    }
    #[allow(clippy::cast_precision_loss)]
    let mut v: Vec<(String, f64)> =
        by.into_iter().map(|(k, kib)| (k, (kib as f64 / 1024.0 * 10.0).round() / 10.0)).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    Ok(v)
}
