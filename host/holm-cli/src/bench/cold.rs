//! Cold start: from the create request to a box that is usable, split into
//! the moments each part of it was first seen ready, as seen from outside:
//! the container running (holmd has its guest URL), the guest answering, each
//! desktop component ready (the guest's health), Chromium's window mapped,
//! and holmd answering `running`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use holm_proto::guest::ComponentState;
use holm_proto::host::{BoxState, CreateBox};
use serde::Serialize;

use super::server::Server;
use super::stats::{Samples, Summary};

/// The stages, in the order a box reaches them.
pub const STAGES: [(&str, &str); 8] = [
    ("container", "container running (image found, created, started; holmd has its port)"),
    ("guest", "guest answering /health"),
    ("xvfb", "Xvfb answering (display)"),
    ("fluxbox", "fluxbox managing (window manager)"),
    ("x11vnc", "x11vnc answering (VNC)"),
    ("chromium", "Chromium's DevTools answering"),
    ("chromium_window", "Chromium's window mapped"),
    ("running", "holmd answers running (usable)"),
];

/// One stage over every start.
#[derive(Debug, Clone, Serialize)]
pub struct Stage {
    /// The stage's name.
    pub stage: String,
    /// What it means.
    pub what: String,
    /// Milliseconds from the create request until it was first seen.
    pub since_request: Summary,
}

/// The cold start figures.
#[derive(Debug, Clone, Serialize)]
pub struct ColdStart {
    /// How many boxes were started.
    pub n: usize,
    /// Each stage, from the request.
    pub stages: Vec<Stage>,
    /// Each component's own start-to-ready time, as the guest measured it.
    pub guest_ready_ms: BTreeMap<String, Summary>,
    /// How long removing each box took.
    pub remove: Summary,
}

/// Starts `n` boxes one after another, each removed before the next.
pub async fn run(
    server: &Server,
    request: &CreateBox,
    n: usize,
    progress: &dyn Fn(&str),
) -> anyhow::Result<ColdStart> {
    let mut stages: BTreeMap<&str, Samples> = BTreeMap::new();
    let mut guest_ready: BTreeMap<String, Samples> = BTreeMap::new();
    let mut remove = Samples::default();
    for i in 0..n {
        progress(&format!("cold start {}/{n}", i + 1));
        let (id, seen, ready) = one(server, request).await?;
        for (stage, d) in seen {
            stages.entry(stage).or_default().push(d);
        }
        for (name, ms) in ready {
            #[allow(clippy::cast_precision_loss)]
            guest_ready.entry(name).or_default().push_ms(ms as f64);
        }
        let t = Instant::now();
        server.remove(&id).await?;
        remove.push(t.elapsed());
    }
    Ok(ColdStart {
        n,
        stages: STAGES
            .iter()
            .map(|(stage, what)| Stage {
                stage: (*stage).into(),
                what: (*what).into(),
                since_request: stages.get(stage).cloned().unwrap_or_default().summary(),
            })
            .collect(),
        guest_ready_ms: guest_ready.into_iter().map(|(k, v)| (k, v.summary())).collect(),
        remove: remove.summary(),
    })
}

type Seen = Vec<(&'static str, Duration)>;

/// One cold start: when each stage was first seen, and the guest's own
/// start-to-ready time of each component.
async fn one(
    server: &Server,
    request: &CreateBox,
) -> anyhow::Result<(String, Seen, Vec<(String, u64)>)> {
    let t0 = Instant::now();
    let info = server.client.create_box(request, None).await.context("create a box")?;
    let id = info.id;
    server.made(&id);
    let deadline = t0 + Duration::from_secs(120);

    // holmd's own answer: a server-side wait for `running`.
    let running = async {
        let info = server
            .client
            .get_box(&id, Some((BoxState::Running, 120)))
            .await
            .context("wait for the box")?;
        if info.state != BoxState::Running {
            bail!("the box is {:?}: {}", info.state, info.reason.unwrap_or_default());
        }
        anyhow::Ok(t0.elapsed())
    };

    // The container and the guest's components, polled.
    let components = async {
        let mut seen: Seen = Vec::new();
        let guest = loop {
            if Instant::now() > deadline {
                bail!("the box's container did not start in 120 seconds");
            }
            if let Some((BoxState::Failed, _)) = server.state(&id) {
                bail!("the box failed to start");
            }
            if let Some(g) = server.straight(&id) {
                seen.push(("container", t0.elapsed()));
                break g;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        // The guest's health, polled every 5 ms; and, beside it, Chromium's
        // window, asked of X through the guest every 25 ms (an `xdotool`
        // process each time, so less often: the asking loads the start it
        // measures).
        let health = async {
            let mut seen: Seen = Vec::new();
            let mut ready_ms = Vec::new();
            loop {
                if Instant::now() > deadline {
                    bail!("the box's desktop was not ready in 120 seconds");
                }
                if let Ok(h) = guest.health().await {
                    if !has(&seen, "guest") {
                        seen.push(("guest", t0.elapsed()));
                    }
                    for c in h.components.iter().filter(|c| c.screen == 0) {
                        let Some(stage) = STAGES.iter().map(|(s, _)| *s).find(|s| *s == c.name)
                        else {
                            continue;
                        };
                        if c.state == ComponentState::Ready && !has(&seen, stage) {
                            seen.push((stage, t0.elapsed()));
                            if let Some(ms) = c.ready_ms {
                                ready_ms.push((c.name.clone(), ms));
                            }
                        }
                    }
                    if h.components.iter().all(|c| {
                        matches!(c.state, ComponentState::Ready | ComponentState::Disabled)
                    }) {
                        return anyhow::Ok((seen, ready_ms));
                    }
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        let window = async {
            loop {
                if Instant::now() > deadline {
                    bail!("Chromium's window was not mapped in 120 seconds");
                }
                let r = guest
                    .exec(&["xdotool", "search", "--onlyvisible", "--class", "chromium"])
                    .await;
                if r.is_ok_and(|r| r.exit_code == Some(0) && !r.stdout.trim().is_empty()) {
                    return anyhow::Ok(t0.elapsed());
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        };
        let (health, window) = tokio::join!(health, window);
        let (more, ready_ms) = health?;
        seen.extend(more);
        seen.push(("chromium_window", window?));
        anyhow::Ok((seen, ready_ms))
    };

    let (running, components) = tokio::join!(running, components);
    let running = running?;
    let (mut seen, ready_ms) = components?;
    seen.push(("running", running));
    Ok((id, seen, ready_ms))
}

fn has(seen: &Seen, stage: &str) -> bool {
    seen.iter().any(|(s, _)| *s == stage)
}
