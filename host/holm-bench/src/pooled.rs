//! Create → usable from a warm pool against a cold create, in the same run
//! and by turns: a second holmd keeps a pool of one box of the X11 request's
//! spec; each turn times a create that claims the pooled box (on that
//! server) and a cold create of the same request (on the benchmark's own
//! server, which has no pool), both until holmd answers `running`. Each turn
//! waits for the pool to be full again first, so no refill runs during
//! either create.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use holm_proto::host::{BoxState, CreateBox};
use serde::Serialize;

use super::server::Server;
use super::stats::{Samples, Summary};

/// The pool the second holmd keeps: one box of the default spec (X11, one
/// screen, Chromium), which the X11 request matches.
pub const RUNTIMES_FILE: &str = "[runtimes.docker]\n[[runtimes.docker.pool]]\nsize = 1\n";

/// Pooled against cold.
#[derive(Debug, Clone, Serialize)]
pub struct Pooled {
    /// Turns.
    pub n: usize,
    /// Create → holmd answers running, claiming a pooled box.
    pub pooled: Summary,
    /// Create → holmd answers running, cold, same request, by turns.
    pub cold: Summary,
    /// Cold p50 over pooled p50.
    pub ratio_p50: Option<f64>,
}

/// Runs `n` turns of a pooled and a cold create of `request`.
pub async fn run(
    server: &Server,
    request: &CreateBox,
    n: usize,
    progress: &dyn Fn(&str),
) -> anyhow::Result<Pooled> {
    let pool = Server::start(&[], RUNTIMES_FILE)?;
    let (mut pooled, mut cold) = (Samples::default(), Samples::default());
    for i in 0..n {
        progress(&format!("warm pool {}/{n}: waiting for the pool to fill", i + 1));
        wait_for_pool(&pool).await?;
        pooled.push(create(&pool, request).await?);
        wait_for_pool(&pool).await?;
        progress(&format!("warm pool {}/{n}: a cold create beside it", i + 1));
        cold.push(create(server, request).await?);
    }
    let (pooled, cold) = (pooled.summary(), cold.summary());
    let ratio_p50 = cold.p50_ms.zip(pooled.p50_ms).map(|(c, p)| (c / p * 10.0).round() / 10.0);
    drop(pool);
    Ok(Pooled { n, pooled, cold, ratio_p50 })
}

/// Waits until the pool has a box waiting.
async fn wait_for_pool(pool: &Server) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let all = pool.client.every_box(true).await.context("list the pool's boxes")?;
        if all.iter().any(|b| b.state == BoxState::Pooled) {
            return Ok(());
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
