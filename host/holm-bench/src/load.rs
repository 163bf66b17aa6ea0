//! Concurrency: K boxes, M clients on each, every client looping a
//! screenshot and a click through holmd for T seconds: once on Chromium's
//! blank page, where a click changes nothing and the guest answers most
//! screenshots from its kept encoding, and once on a page that changes at
//! every click, so each screenshot is encoded anew. Each run says where the
//! machine's CPU went, by program.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use holm_proto::guest::{Region, ScreenshotOptions};
use serde::Serialize;

use super::server::Server;
use super::stats::{Samples, Summary};

/// What the clients click on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Screens {
    /// Chromium's blank page: a click changes nothing on screen.
    Unchanged,
    /// [`CHANGING_PAGE`]: every click changes the page's colour and its
    /// count. Chromium paints a click some milliseconds after it, later
    /// than the next screenshot under this load, so the screenshots also
    /// take turns between the whole screen and the screen less its last
    /// row ([`encoded_anew`]): the guest's kept encoding (one per screen)
    /// never answers, and each screenshot is captured, hashed and encoded
    /// as one after a change is.
    Changing,
}

/// The options of a box's `turn`th screenshot on `screens`.
fn encoded_anew(screens: Screens, turn: usize) -> ScreenshotOptions {
    let region = (screens == Screens::Changing && turn % 2 == 1).then_some(Region {
        x: 0,
        y: 0,
        width: SCREEN.0,
        height: SCREEN.1 - 1,
    });
    ScreenshotOptions { region, ..ScreenshotOptions::default() }
}

/// The bench boxes' screen: holm's default size (their requests set none).
const SCREEN: (u32, u32) = holm::spec::DEFAULT_SIZE;

/// A page whose every press changes its background's hue and a large
/// count: the screen after a click is not the one before it.
const CHANGING_PAGE: &str = "data:text/html,<!doctype html><title>holm bench: changing</title>\
    <body style='margin:0;height:100vh;font:bold 160px sans-serif'><div id=n>0</div><script>\
    let n=0;const c=['%23fdd','%23dfd','%23ddf','%23ffd','%23dff'];\
    addEventListener('mousedown',()=>{n++;document.getElementById('n').textContent=n;\
    document.body.style.background=c[n%255]})</script>";

/// What the load run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Concurrency {
    /// What the clients clicked on.
    pub screens: Screens,
    /// K: boxes.
    pub boxes: usize,
    /// How long starting the K boxes at once took, seconds (until the last
    /// was running).
    pub boxes_started_in_secs: f64,
    /// M: clients on each box.
    pub clients_per_box: usize,
    /// T: how long the clients ran, seconds.
    pub duration_secs: f64,
    /// Calls that succeeded.
    pub ops: usize,
    /// Calls per second, all clients together.
    pub throughput_per_sec: f64,
    /// Screenshots whose frame was the same as the box's screenshot before
    /// it (the clicks changed nothing on screen): the guest answers those
    /// with its kept encoding, without encoding again.
    pub unchanged_screenshots: usize,
    /// Calls that failed.
    pub errors: usize,
    /// The first few failures.
    pub error_samples: Vec<String>,
    /// Screenshots (PNG, through holmd).
    pub screenshot: Summary,
    /// Clicks (through holmd).
    pub click: Summary,
    /// Both.
    pub all: Summary,
    /// Where the machine's CPU went while the clients ran, by program.
    pub cpu_by_program: Vec<super::cpu::ProgramCpu>,
}

#[derive(Default)]
struct Tally {
    shot: Samples,
    click: Samples,
    all: Samples,
    errors: usize,
    samples: Vec<String>,
    /// Each box's last frame hash, and how many screenshots repeated it.
    last_frame: std::collections::HashMap<(String, bool), String>,
    /// Each box's screenshots asked so far.
    turns: std::collections::HashMap<String, usize>,
    unchanged: usize,
}

impl Tally {
    fn fail(&mut self, e: &holm_client::ClientError) {
        self.errors += 1;
        if self.samples.len() < 5 {
            self.samples.push(e.to_string());
        }
    }
}

/// Shows [`CHANGING_PAGE`] on each box's Chromium.
async fn show_changing_page(server: &Server, boxes: &[String]) -> anyhow::Result<()> {
    for id in boxes {
        server.through_holmd(id).navigate(CHANGING_PAGE).await?;
    }
    Ok(())
}

/// Runs `clients` clients on each of `boxes` for `duration`, on `screens`.
pub async fn run(
    server: &Server,
    boxes: &[String],
    clients: usize,
    duration: Duration,
    screens: Screens,
) -> anyhow::Result<Concurrency> {
    if screens == Screens::Changing {
        show_changing_page(server, boxes).await?;
    }
    let cpu = super::cpu::snapshot();
    let tally = RefCell::new(Tally::default());
    let start = Instant::now();
    let deadline = start + duration;
    let workers =
        boxes.iter().flat_map(|id| (0..clients).map(move |c| (id.clone(), c))).map(|(id, c)| {
            let b = server.another_client().boxed(&id);
            let tally = &tally;
            async move {
                let mut i = c * 7;
                while Instant::now() < deadline {
                    let t = Instant::now();
                    // The box's screenshots take turns, whichever client asks.
                    let turn = {
                        let mut tl = tally.borrow_mut();
                        let t = tl.turns.entry(id.clone()).or_default();
                        *t += 1;
                        *t
                    };
                    let options = encoded_anew(screens, turn);
                    match b.screenshot(0, &options).await {
                        Ok(s) => {
                            let mut tl = tally.borrow_mut();
                            tl.shot.push(t.elapsed());
                            let frame = s.meta.frame;
                            // Each region's frame against that region's last.
                            let key = (id.clone(), options.region.is_some());
                            if tl.last_frame.insert(key, frame.clone()) == Some(frame) {
                                tl.unchanged += 1;
                            }
                            tl.all.push(t.elapsed());
                        }
                        Err(e) => {
                            tally.borrow_mut().fail(&e);
                            tokio::time::sleep(Duration::from_millis(10)).await;
                        }
                    }
                    let (x, y) = (100 + i32::try_from(i % 40).unwrap_or(0) * 25, 300);
                    i += 1;
                    let t = Instant::now();
                    match b.click(0, x, y).await {
                        Ok(_) => {
                            let mut tl = tally.borrow_mut();
                            tl.click.push(t.elapsed());
                            tl.all.push(t.elapsed());
                        }
                        Err(e) => {
                            tally.borrow_mut().fail(&e);
                            tokio::time::sleep(Duration::from_millis(10)).await;
                        }
                    }
                }
            }
        });
    futures_util::future::join_all(workers).await;
    let elapsed = start.elapsed().as_secs_f64();
    let cpu_by_program = super::cpu::since(&cpu);
    let tally = tally.into_inner();
    let ops = tally.all.len();
    #[allow(clippy::cast_precision_loss)]
    let throughput = (ops as f64 / elapsed * 10.0).round() / 10.0;
    Ok(Concurrency {
        screens,
        boxes: boxes.len(),
        boxes_started_in_secs: 0.0,
        clients_per_box: clients,
        duration_secs: (elapsed * 10.0).round() / 10.0,
        ops,
        throughput_per_sec: throughput,
        unchanged_screenshots: tally.unchanged,
        errors: tally.errors,
        error_samples: tally.samples,
        screenshot: tally.shot.summary(),
        click: tally.click.summary(),
        all: tally.all.summary(),
        cpu_by_program,
    })
}

/// Both runs on the same `boxes` (started at once in `started_in`
/// seconds): unchanged screens, then changing ones.
pub async fn both(
    server: &Server,
    boxes: &[String],
    config: &super::Config,
    started_in: f64,
    progress: &impl Fn(&str),
) -> anyhow::Result<[Concurrency; 2]> {
    let duration = Duration::from_secs(config.duration_secs);
    let mut out = Vec::new();
    for screens in [Screens::Unchanged, Screens::Changing] {
        progress(&format!(
            "concurrency: {} boxes × {} clients for {} s, {screens:?} screens",
            boxes.len(),
            config.clients_per_box,
            config.duration_secs
        ));
        let mut c = run(server, boxes, config.clients_per_box, duration, screens).await?;
        c.boxes_started_in_secs = (started_in * 10.0).round() / 10.0;
        out.push(c);
    }
    let [a, b]: [Concurrency; 2] = out.try_into().map_err(|_| anyhow::anyhow!("two runs"))?;
    Ok([a, b])
}

/// The report of a `--throughput` run, as written to `--out`.
#[derive(Debug, Serialize)]
pub struct ThroughputReport {
    /// The version, when it ran, how long, the command and the machine.
    #[serde(flatten)]
    pub run: super::report::Run,
    /// The box image.
    pub image: String,
    /// On unchanged screens, then on changing ones.
    pub concurrency: [Concurrency; 2],
    /// The targets they decide.
    pub targets: Vec<super::report::Target>,
    /// Every box the run made (all removed at its end).
    pub boxes: Vec<String>,
}
