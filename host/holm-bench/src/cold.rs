//! Cold start: from the create request to a box that is usable, split into
//! the moments each part of it was first seen ready, as seen from outside:
//! the container running (holmd has its guest URL), the guest answering, each
//! desktop component ready (the guest's health), Chromium's window mapped,
//! and holmd answering `running`. X11 and Wayland boxes start by turns in
//! the same run, so the two are compared under the same load.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use holm_proto::guest::{ComponentState, Profile};
use holm_proto::host::{BoxState, CreateBox};
use serde::Serialize;

use super::server::Server;
use super::stats::{Samples, Summary};

/// The stages of an X11 box, in the order it reaches them. The VNC server
/// is not one: it starts when the first viewer asks for it (`HOLM_VNC`).
pub const STAGES: [(&str, &str); 7] = [
    ("container", "container running (image found, created, started; holmd has its port)"),
    ("guest", "guest answering /health"),
    ("xvfb", "Xvfb answering (display)"),
    ("fluxbox", "fluxbox managing (window manager)"),
    ("chromium", "Chromium's DevTools answering"),
    ("chromium_window", "Chromium's window mapped"),
    ("running", "holmd answers running (usable)"),
];

/// The stages of a Wayland box, in the order it reaches them.
pub const WAYLAND_STAGES: [(&str, &str); 6] = [
    ("container", "container running (image found, created, started; holmd has its port)"),
    ("guest", "guest answering /health"),
    ("sway", "sway answering, the guest's pointer and keyboard made (display)"),
    ("chromium", "Chromium's DevTools answering"),
    ("chromium_window", "Chromium's window mapped"),
    ("running", "holmd answers running (usable)"),
];

/// The stages of a box of `display`.
pub fn stages(display: Profile) -> &'static [(&'static str, &'static str)] {
    match display {
        Profile::X11 => &STAGES,
        Profile::Wayland => &WAYLAND_STAGES,
    }
}

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

/// What one kind of box's starts measured so far.
#[derive(Default)]
struct Tally {
    stages: BTreeMap<&'static str, Samples>,
    guest_ready: BTreeMap<String, Samples>,
    remove: Samples,
}

/// Starts `n` boxes of each request one after another, each removed before
/// the next, the kinds taking turns (and which goes first alternating);
/// answers one figure per request, in order.
pub async fn run(
    server: &Server,
    requests: &[(Profile, &CreateBox)],
    n: usize,
    progress: &dyn Fn(&str),
) -> anyhow::Result<Vec<ColdStart>> {
    let mut tallies: Vec<Tally> = requests.iter().map(|_| Tally::default()).collect();
    for i in 0..n {
        for k in 0..requests.len() {
            let j = (i + k) % requests.len();
            let (display, request) = requests[j];
            progress(&format!("cold start {}/{n} ({display})", i + 1));
            let (id, seen, ready) = one(server, request, display).await?;
            let tally = &mut tallies[j];
            for (stage, d) in seen {
                tally.stages.entry(stage).or_default().push(d);
            }
            for (name, ms) in ready {
                #[allow(clippy::cast_precision_loss)]
                tally.guest_ready.entry(name).or_default().push_ms(ms as f64);
            }
            let t = Instant::now();
            server.remove(&id).await?;
            tally.remove.push(t.elapsed());
        }
    }
    Ok(requests
        .iter()
        .zip(tallies)
        .map(|((display, _), tally)| ColdStart {
            n,
            stages: stages(*display)
                .iter()
                .map(|(stage, what)| Stage {
                    stage: (*stage).into(),
                    what: (*what).into(),
                    since_request: tally.stages.get(stage).cloned().unwrap_or_default().summary(),
                })
                .collect(),
            guest_ready_ms: tally.guest_ready.into_iter().map(|(k, v)| (k, v.summary())).collect(),
            remove: tally.remove.summary(),
        })
        .collect())
}

/// How long one cold start may take before the bench gives up. Generous:
/// under gVisor on the ptrace platform, with other suites beside it on two
/// cores, a start has been seen to pass two minutes; the bench measures
/// time, it does not judge it.
pub(crate) const START_LIMIT_SECS: u64 = 600;

type Seen = Vec<(&'static str, Duration)>;

/// One cold start: when each stage was first seen, and the guest's own
/// start-to-ready time of each component.
async fn one(
    server: &Server,
    request: &CreateBox,
    display: Profile,
) -> anyhow::Result<(String, Seen, Vec<(String, u64)>)> {
    let t0 = Instant::now();
    let info = server.client.create_box(request, None).await.context("create a box")?;
    let id = info.id;
    server.made(&id);
    let deadline = t0 + Duration::from_secs(START_LIMIT_SECS);

    // holmd's own answer: a server-side wait for `running`.
    let running = async {
        let info = server
            .client
            .get_box(&id, Some((BoxState::Running, START_LIMIT_SECS)))
            .await
            .context("wait for the box")?;
        if info.state != BoxState::Running {
            bail!(
                "the box is still {:?} after {START_LIMIT_SECS} s{}{}",
                info.state,
                info.reason.map(|r| format!(": {r}")).unwrap_or_default(),
                waiting_for(server, &id).await
            );
        }
        anyhow::Ok(t0.elapsed())
    };

    // The container and the guest's components, polled.
    let components = async {
        let mut seen: Seen = Vec::new();
        let guest = loop {
            if Instant::now() > deadline {
                bail!("the box's container did not start in {START_LIMIT_SECS} seconds");
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
        // window, asked of X or sway through the guest (an `xdotool` or
        // `swaymsg` process each time, so less often: the asking loads the
        // start it measures). Each ask is followed by a pause of at least
        // 25 ms and three times what the ask took, so asking takes at most a
        // quarter of the start: a process costs the guest ~10 ms on runc,
        // but ~280 ms and ~200 ms of CPU under gVisor's ptrace platform,
        // where asking every 25 ms took most of a core from the box.
        let health = async {
            let mut seen: Seen = Vec::new();
            let mut ready_ms = Vec::new();
            loop {
                if Instant::now() > deadline {
                    bail!("the box's desktop was not ready in {START_LIMIT_SECS} seconds");
                }
                if let Ok(h) = guest.health().await {
                    if !has(&seen, "guest") {
                        seen.push(("guest", t0.elapsed()));
                    }
                    for c in h.components.iter().filter(|c| c.screen == 0) {
                        let Some(stage) =
                            stages(display).iter().map(|(s, _)| *s).find(|s| *s == c.name)
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
                    if h.components.iter().all(|c| c.state.settled()) {
                        return anyhow::Ok((seen, ready_ms));
                    }
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        let window = async {
            loop {
                if Instant::now() > deadline {
                    bail!("Chromium's window was not mapped in {START_LIMIT_SECS} seconds");
                }
                let asked = Instant::now();
                if browser_window_shown(&guest, display).await {
                    return anyhow::Ok(t0.elapsed());
                }
                tokio::time::sleep(ask_pause(asked.elapsed())).await;
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

/// What the box's guest still waits for, said after a start that took too
/// long: each component not ready, with its state and last error.
async fn waiting_for(server: &Server, id: &str) -> String {
    let Some(guest) = server.straight(id) else {
        return " (its container never answered)".into();
    };
    match guest.health().await {
        Err(e) => format!(" (its guest does not answer: {e})"),
        Ok(h) => {
            let waiting: Vec<String> = h
                .components
                .iter()
                .filter(|c| !c.state.settled())
                .map(|c| match &c.last_exit {
                    Some(e) => {
                        format!(
                            "{} {:?} after {} restarts, last exit {e}",
                            c.name, c.state, c.restarts
                        )
                    }
                    None => format!("{} {:?}", c.name, c.state),
                })
                .collect();
            format!(" (waiting for: {})", waiting.join("; "))
        }
    }
}

/// How long to wait before asking for the window again, after an ask that
/// took `took`: 25 ms, or three times the ask when that is longer.
fn ask_pause(took: Duration) -> Duration {
    (took * 3).max(Duration::from_millis(25))
}

fn has(seen: &Seen, stage: &str) -> bool {
    seen.iter().any(|(s, _)| *s == stage)
}

/// Whether screen 0's Chromium has a window on the screen: asked of X with
/// `xdotool`, or of sway's tree with `swaymsg` (its `app_id` is the one the
/// guest gives it).
async fn browser_window_shown(guest: &holm_client::BoxClient, display: Profile) -> bool {
    match display {
        Profile::X11 => guest
            .exec(&["xdotool", "search", "--onlyvisible", "--class", "chromium"])
            .await
            .is_ok_and(|r| r.exit_code == Some(0) && !r.stdout.trim().is_empty()),
        Profile::Wayland => {
            let Ok(r) = guest.exec(&["swaymsg", "-t", "get_tree"]).await else { return false };
            serde_json::from_str::<serde_json::Value>(&r.stdout)
                .is_ok_and(|tree| crate::wayland::find_app(&tree, "holm-chromium-0").is_some())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asking_for_the_window_takes_at_most_a_quarter_of_the_time() {
        assert_eq!(ask_pause(Duration::from_millis(5)), Duration::from_millis(25));
        assert_eq!(ask_pause(Duration::from_millis(280)), Duration::from_millis(840));
    }
}
