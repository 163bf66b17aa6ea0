//! The viewer rows, on the X11 latency box: how soon a person opening a
//! viewer URL sees the screen (in a real Chromium, and with the bench's own
//! RFB client), how soon the viewer shows the change an input made, and how
//! many bytes a second the stream costs on an idle and a busy screen — each
//! against holmd's screenshots in the same run.

use std::time::Duration;

use anyhow::{Context, bail};
use holm_client::BoxClient;
use holm_proto::guest::ProcessStart;
use serde::Serialize;
use tokio::time::Instant;

use super::chromium::{self, Chromium};
use super::latency::{PNG, Pair, Row, holm_first, shot};
use super::rfb::{self, Rfb};
use super::stats::Samples;

/// The viewer figures.
#[derive(Debug, Clone, Serialize)]
pub struct ViewerReport {
    /// Runs of each latency pair.
    pub samples: usize,
    /// First frame and input-to-frame, against screenshots through holmd.
    pub latency: Vec<Row>,
    /// Rows this run could not measure, and why (Chromium missing).
    pub skipped: Vec<Skipped>,
    /// The stream's bytes on an idle and a busy screen, against screenshots.
    pub bandwidth: Vec<Bandwidth>,
    /// Where a first frame's time goes: the p50 moment each stage ended.
    pub stages: Vec<Stage>,
}

/// When one stage of a first frame ended (p50 over the runs), in ms since
/// the row's start (navigation, or the stream's open).
#[derive(Debug, Clone, Serialize)]
pub struct Stage {
    /// The row (and path) it belongs to.
    pub row: String,
    /// What had happened by then.
    pub stage: String,
    /// Its p50, ms.
    pub p50_ms: Option<f64>,
    /// Runs.
    pub n: usize,
}

/// Each stage's samples, in order, for one row.
#[derive(Default)]
struct Stages(Vec<(String, Samples)>);

impl Stages {
    fn push(&mut self, stage: &str, ms: f64) {
        match self.0.iter_mut().find(|(s, _)| s == stage) {
            Some((_, samples)) => samples.push_ms(ms),
            None => {
                let mut samples = Samples::default();
                samples.push_ms(ms);
                self.0.push((stage.to_owned(), samples));
            }
        }
    }

    fn report(self, row: &str, out: &mut Vec<Stage>) {
        for (stage, samples) in self.0 {
            out.push(Stage {
                row: row.to_owned(),
                stage,
                p50_ms: samples.median().map(super::stats::round),
                n: samples.len(),
            });
        }
    }
}

/// The `--viewers` run's report, as written to `--out`.
#[derive(Debug, Serialize)]
pub struct ViewersOnly {
    /// The version, when it ran, how long, the command and the machine.
    #[serde(flatten)]
    pub run: crate::report::Run,
    /// The box image.
    pub image: String,
    /// The viewer rows.
    pub viewer: ViewerReport,
    /// Every box the run made (all removed at its end).
    pub boxes: Vec<String>,
}

/// A row not measured.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    /// The row's id.
    pub id: String,
    /// Why.
    pub reason: String,
}

/// One bandwidth row: the RFB stream against PNG screenshots at its rate.
#[derive(Debug, Clone, Serialize)]
pub struct Bandwidth {
    /// A stable name.
    pub id: String,
    /// What the screen did.
    pub operation: String,
    /// Seconds measured.
    pub seconds: f64,
    /// FramebufferUpdates the stream delivered in them.
    pub frames: u64,
    /// The stream's bytes a second (WebSocket payloads in).
    pub stream_bytes_per_sec: f64,
    /// What the baseline did.
    pub baseline: String,
    /// Screenshots taken for it.
    pub screenshots: u64,
    /// Their bytes a second, at the stream's frame rate.
    pub screenshot_bytes_per_sec: f64,
    /// Screenshots' bytes over the stream's: how many times fewer the stream sends.
    pub ratio: Option<f64>,
}

/// The pause before each first frame: a person does not open a viewer again
/// within a second, and the guest makes its spare connection to the VNC
/// server a moment after each stream opens (its `viewer::spare`).
const BETWEEN: Duration = Duration::from_secs(1);

/// The echoing terminal the input rows type into.
const ECHO: &str = "holm-bench-echo";

/// Measures the viewer rows on box `id` through holmd.
pub async fn run(
    server: &super::server::Server,
    id: &str,
    through: &BoxClient,
    samples: usize,
    busy_secs: u64,
    progress: &dyn Fn(&str),
) -> anyhow::Result<ViewerReport> {
    let info = server.client.get_box(id, None).await.context("read the box's viewers")?;
    let urls = info.viewers.first().context("the box shows no viewer URLs")?;
    let view = urls.view_url.clone();
    let mut latency = Vec::new();
    let mut skipped = Vec::new();
    let mut stages = Vec::new();

    progress("viewer: first frame in Chromium");
    let chromium_id = "viewer_first_frame_chromium_vs_screenshot";
    if chromium::path().exists() {
        latency
            .push(first_frame_chromium(chromium_id, through, &view, samples, &mut stages).await?);
    } else {
        skipped.push(Skipped {
            id: chromium_id.into(),
            reason: format!("no Chromium at {} (set CHROMIUM)", chromium::path().display()),
        });
    }
    progress("viewer: first frame with the bench's RFB client");
    latency.push(first_frame_rfb(through, &view, samples, &mut stages).await?);
    let straight = server.straight_viewer(id, &view).context("the box has no viewer port")?;
    latency.push(first_frame_holmd_vs_guest(&view, &straight, samples, &mut stages).await?);

    progress("viewer: input to frame");
    latency.push(input_to_frame(through, &view, samples).await?);

    progress("viewer: bandwidth, idle screen");
    let seconds = Duration::from_secs(busy_secs);
    let mut rows =
        vec![bandwidth(through, &view, seconds, "viewer_bandwidth_idle", "idle screen").await?];
    progress("viewer: bandwidth, busy screen (an xterm scrolling the time)");
    let busy = busy_terminal(through).await?;
    let measured = bandwidth(
        through,
        &view,
        seconds,
        "viewer_bandwidth_busy",
        "busy screen: an xterm scrolling a new line every 10 ms",
    )
    .await;
    through.signal(&busy, "KILL").await.context("stop the busy terminal")?;
    rows.push(measured?);
    Ok(ViewerReport { samples, latency, skipped, bandwidth: rows, stages })
}

async fn first_frame_chromium(
    id: &'static str,
    through: &BoxClient,
    view: &str,
    samples: usize,
    out: &mut Vec<Stage>,
) -> anyhow::Result<Row> {
    let mut chromium = Chromium::launch().await?;
    let mut stages = Stages::default();
    let mut pair = Pair::new(
        id,
        "open a viewer URL until its first frame is drawn",
        "Chromium (headless): navigation → first frame on the canvas",
        "holmd GET screenshot (PNG)",
    );
    let measured = async {
        // Warm-up: the browser's caches, as a person's second visit. It is
        // the box's first viewer: its VNC server starts now.
        let first = chromium.first_frame(view).await?;
        stages.push("the box's first viewer (warm-up, VNC server started on demand)", first);
        for i in 0..samples {
            tokio::time::sleep(BETWEEN).await;
            let (h, b) = if holm_first(i) {
                let h = chromium.first_frame(view).await?;
                (h, shot(through, PNG).await?)
            } else {
                let b = shot(through, PNG).await?;
                (chromium.first_frame(view).await?, b)
            };
            pair.push(Duration::from_secs_f64(h / 1000.0), b);
            for (stage, ms) in chromium.stages().await? {
                stages.push(&stage, ms);
            }
            stages.push("first frame drawn", h);
        }
        anyhow::Ok(())
    }
    .await;
    chromium.close().await;
    measured?;
    stages.report(id, out);
    Ok(pair.row())
}

/// One first frame over the stream of `view`: its time, and each stage's
/// (the upgrade answered, ServerInit read, the full frame) into `stages`.
async fn rfb_first_frame(view: &str, stages: &mut Stages) -> anyhow::Result<Duration> {
    let t = Instant::now();
    let mut s = rfb::open(view, rfb::ZRLE).await?;
    s.full_frame().await?;
    let took = t.elapsed();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    stages.push("WebSocket upgrade answered", ms(s.upgraded_in));
    stages.push("ServerInit read (handshake done)", ms(s.init_in));
    stages.push("full frame read (ZRLE)", ms(took));
    Ok(took)
}

async fn first_frame_rfb(
    through: &BoxClient,
    view: &str,
    samples: usize,
    out: &mut Vec<Stage>,
) -> anyhow::Result<Row> {
    let id = "viewer_first_frame_rfb_vs_screenshot";
    let mut pair = Pair::new(
        id,
        "open a viewer's stream until its first full frame",
        "RFB over WebSocket through holmd: connect, handshake, full update (ZRLE)",
        "holmd GET screenshot (PNG)",
    );
    let mut stages = Stages::default();
    rfb_first_frame(view, &mut Stages::default()).await?;
    for i in 0..samples {
        tokio::time::sleep(BETWEEN).await;
        let (h, b) = if holm_first(i) {
            let h = rfb_first_frame(view, &mut stages).await?;
            (h, shot(through, PNG).await?)
        } else {
            let b = shot(through, PNG).await?;
            (rfb_first_frame(view, &mut stages).await?, b)
        };
        pair.push(h, b);
    }
    stages.report(&format!("{id}: through holmd"), out);
    Ok(pair.row())
}

/// The stream's first frame through holmd against straight to the guest's
/// viewer port (`straight`): what holmd's upgrade and forwarding add.
async fn first_frame_holmd_vs_guest(
    view: &str,
    straight: &str,
    samples: usize,
    out: &mut Vec<Stage>,
) -> anyhow::Result<Row> {
    let id = "viewer_first_frame_rfb_holmd_vs_guest";
    let mut pair = Pair::new(
        id,
        "open a viewer's stream until its first full frame: through holmd against straight to the guest",
        "through holmd",
        "straight to the guest's viewer port",
    );
    let (mut via, mut guest) = (Stages::default(), Stages::default());
    rfb_first_frame(straight, &mut Stages::default()).await?;
    for i in 0..samples {
        tokio::time::sleep(BETWEEN).await;
        let (h, b) = if holm_first(i) {
            let h = rfb_first_frame(view, &mut via).await?;
            tokio::time::sleep(BETWEEN).await;
            (h, rfb_first_frame(straight, &mut guest).await?)
        } else {
            let b = rfb_first_frame(straight, &mut guest).await?;
            tokio::time::sleep(BETWEEN).await;
            (rfb_first_frame(view, &mut via).await?, b)
        };
        pair.push(h, b);
    }
    via.report(&format!("{id}: through holmd"), out);
    guest.report(&format!("{id}: straight to the guest"), out);
    Ok(pair.row())
}

/// Starts the terminal `cat` echoes into, and focuses it.
async fn echo_terminal(b: &BoxClient) -> anyhow::Result<String> {
    let argv = ["xterm", "-name", ECHO, "-geometry", "60x12+640+40", "-e", "cat"];
    let start = ProcessStart {
        argv: Some(argv.map(str::to_owned).to_vec()),
        tag: Some(ECHO.into()),
        ..ProcessStart::default()
    };
    let p = b.start_process(&start).await.context("start the echoing xterm")?;
    let r = b
        .exec(&[
            "timeout",
            "20",
            "xdotool",
            "search",
            "--sync",
            "--onlyvisible",
            "--classname",
            ECHO,
            "windowactivate",
            "--sync",
        ])
        .await?;
    if r.exit_code != Some(0) {
        bail!("the echoing xterm did not show in 20 s: {}", r.stderr.trim());
    }
    // The window manager draws the focus a moment later.
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(p.id)
}

/// Types a key through holmd; answers when it was sent.
async fn type_key(through: &BoxClient) -> anyhow::Result<Instant> {
    let t = Instant::now();
    through.type_text(0, "x").await?;
    Ok(t)
}

fn too_long(t: Instant) -> anyhow::Result<()> {
    if t.elapsed() > Duration::from_secs(10) {
        bail!("a key typed into the echoing xterm changed nothing on the screen in 10 s");
    }
    Ok(())
}

/// Key to the change in the viewer's stream.
async fn seen_in_stream(through: &BoxClient, s: &mut Rfb) -> anyhow::Result<Duration> {
    s.drain(Duration::from_millis(150), Duration::from_secs(3)).await?;
    let before = s.fb.clone();
    let t = type_key(through).await?;
    loop {
        s.update(Instant::now() + Duration::from_secs(10)).await?;
        if s.fb != before {
            return Ok(t.elapsed());
        }
        too_long(t)?;
    }
}

/// Key to the change in a screenshot, polled.
async fn seen_in_screenshots(through: &BoxClient) -> anyhow::Result<Duration> {
    tokio::time::sleep(Duration::from_millis(150)).await;
    let before = through.screenshot(0, PNG).await?.bytes;
    let t = type_key(through).await?;
    loop {
        if through.screenshot(0, PNG).await?.bytes != before {
            return Ok(t.elapsed());
        }
        too_long(t)?;
    }
}

async fn input_to_frame(through: &BoxClient, view: &str, samples: usize) -> anyhow::Result<Row> {
    let echo = echo_terminal(through).await?;
    let mut pair = Pair::new(
        "viewer_input_to_frame_vs_screenshot_poll",
        "a key typed into an xterm (holmd POST input), until the change is seen",
        "the viewer's stream (RFB, incremental updates): the update that shows it",
        "holmd GET screenshot (PNG) polled until it differs",
    );
    let measured = async {
        let mut s = rfb::open(view, rfb::RAW).await?;
        s.full_frame().await?;
        // Run 0 warms up.
        for i in 0..=samples {
            let (h, b) = if holm_first(i) {
                let h = seen_in_stream(through, &mut s).await?;
                (h, seen_in_screenshots(through).await?)
            } else {
                let b = seen_in_screenshots(through).await?;
                (seen_in_stream(through, &mut s).await?, b)
            };
            if i > 0 {
                pair.push(h, b);
            }
        }
        anyhow::Ok(())
    }
    .await;
    through.signal(&echo, "KILL").await.context("stop the echoing xterm")?;
    measured?;
    Ok(pair.row())
}

/// An xterm that redraws all the time: a new line of the time every 10 ms,
/// so the whole terminal scrolls and every line differs (`yes` would not
/// do: a screen of `y` lines looks the same after every scroll).
async fn busy_terminal(b: &BoxClient) -> anyhow::Result<String> {
    let argv = [
        "xterm",
        "-name",
        "holm-bench-busy",
        "-geometry",
        "80x24+200+200",
        "-e",
        "sh",
        "-c",
        "while :; do date +%T.%N; sleep 0.01; done",
    ];
    let start = ProcessStart {
        argv: Some(argv.map(str::to_owned).to_vec()),
        tag: Some("holm-bench-busy".into()),
        ..ProcessStart::default()
    };
    let p = b.start_process(&start).await.context("start the busy xterm")?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    Ok(p.id)
}

#[allow(clippy::cast_precision_loss)]
async fn bandwidth(
    through: &BoxClient,
    view: &str,
    seconds: Duration,
    id: &str,
    operation: &str,
) -> anyhow::Result<Bandwidth> {
    // As a real viewer: a full frame, then incremental requests, each sent
    // as the last update is read.
    let mut s = rfb::open(view, rfb::ZRLE).await?;
    s.full_frame().await?;
    let start_bytes = s.bytes_in;
    let t = Instant::now();
    let end = t + seconds;
    let mut frames = 0u64;
    while Instant::now() < end {
        if s.update(end).await?.is_some() {
            frames += 1;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    let stream = (s.bytes_in - start_bytes) as f64 / secs;
    drop(s);

    // The same seconds as PNG screenshots, one for each frame the stream
    // delivered (at least one a second, as the slowest poller).
    let rate = (frames as f64 / secs).max(1.0);
    let interval = Duration::from_secs_f64(1.0 / rate);
    let (mut shots, mut bytes) = (0u64, 0u64);
    let t = Instant::now();
    let end = t + seconds;
    let mut next = t;
    while Instant::now() < end {
        bytes += through.screenshot(0, PNG).await?.bytes.len() as u64;
        shots += 1;
        next += interval;
        tokio::time::sleep_until(next).await;
    }
    // Behind the stream's rate (each screenshot takes its time): the bytes
    // the same frame rate would cost.
    let per_shot = bytes as f64 / shots.max(1) as f64;
    let screenshots = per_shot * rate;
    let round = |v: f64| v.round();
    Ok(Bandwidth {
        id: id.into(),
        operation: operation.into(),
        seconds: (secs * 10.0).round() / 10.0,
        frames,
        stream_bytes_per_sec: round(stream),
        baseline: "holmd GET screenshot (PNG) at the stream's frame rate (≥ 1/s)".into(),
        screenshots: shots,
        screenshot_bytes_per_sec: round(screenshots),
        ratio: (stream > 0.0).then(|| (screenshots / stream * 100.0).round() / 100.0),
    })
}

/// Prints the viewer rows: the latency pairs, what was skipped, bandwidth.
pub fn print(v: &ViewerReport) {
    use crate::output;
    output::line("\nviewers (the X11 box, through holmd), against screenshots:\n");
    super::report::print_rows(&v.latency);
    for s in &v.skipped {
        output::line(&format!("  {}: not measured: {}", s.id, s.reason));
    }
    output::line("\nwhere a first frame's time goes (p50 ms since the start, each stage's end):\n");
    output::line("| row | stage | p50 ms | n |");
    output::line("|---|---|---:|---:|");
    for s in &v.stages {
        let p50 = s.p50_ms.map_or_else(|| "-".into(), |p| format!("{p:.2}"));
        output::line(&format!("| {} | {} | {p50} | {} |", s.row, s.stage, s.n));
    }
    output::line(
        "\n| screen | seconds | frames | stream B/s | screenshots (PNG) at its rate B/s | screenshots / stream |",
    );
    output::line("|---|---:|---:|---:|---:|---:|");
    for b in &v.bandwidth {
        output::line(&format!(
            "| {} | {:.1} | {} | {:.0} | {:.0} | {} |",
            b.operation.replace('|', "\\|"),
            b.seconds,
            b.frames,
            b.stream_bytes_per_sec,
            b.screenshot_bytes_per_sec,
            b.ratio.map_or_else(|| "-".into(), |r| format!("{r:.1}×")),
        ));
    }
}
