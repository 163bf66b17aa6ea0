//! Latency, side by side on one box: holm's way (through holmd) against the
//! exec-driven way (`docker exec` of `import`, `xwd | convert`, `xdotool`),
//! and through holmd against straight to the guest. Each pair is measured in
//! the same loop, and which side goes first alternates, so drift on a shared
//! machine falls on both sides alike.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use holm_client::BoxClient;
use holm_proto::guest::{
    Action, Button, ImageFormat, InputRequest, ProcessStart, ScreenshotOptions, Settle,
};
use serde::Serialize;

use super::exec::Exec;
use super::stats::{Samples, Summary, round};

/// How many runs of each pair.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Counts {
    /// Screenshots, each format.
    pub screenshots: usize,
    /// Clicks.
    pub clicks: usize,
    /// Texts typed, each text.
    pub types: usize,
    /// Act-then-see calls.
    pub acts: usize,
    /// Calls through holmd and straight, each operation.
    pub overhead: usize,
    /// Clicks each way for each quiet window (see `quiet`).
    pub quiet: usize,
}

/// One side of a row.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// What was run.
    pub label: String,
    /// Its times.
    #[serde(flatten)]
    pub summary: Summary,
    /// Typing: runs that produced exactly the text. The quiet window: settled
    /// screenshots that were still the screen a second later.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact: Option<usize>,
}

/// One row of the table: holm against a baseline, measured in one loop.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// A stable name, such as `screenshot_png_vs_import`.
    pub id: String,
    /// The operation.
    pub operation: String,
    /// holm's side.
    pub holm: Side,
    /// The baseline's side.
    pub baseline: Side,
    /// Baseline median over holm median: how many times faster holm is
    /// (below 1 when holm's side is the slower, as through holmd against
    /// straight to the guest).
    pub ratio: Option<f64>,
    /// The median of the paired differences (holm minus baseline), run by run.
    pub paired_delta_p50_ms: Option<f64>,
}

/// Samples of one row while it is measured.
pub(crate) struct Pair {
    id: &'static str,
    operation: String,
    holm_label: String,
    holm: Samples,
    pub(crate) holm_exact: Option<usize>,
    base_label: String,
    base: Samples,
    pub(crate) base_exact: Option<usize>,
    /// holm minus baseline, for runs where both were measured.
    deltas: Samples,
}

impl Pair {
    pub(crate) fn new(id: &'static str, operation: &str, holm: &str, base: &str) -> Self {
        Self {
            id,
            operation: operation.into(),
            holm_label: holm.into(),
            holm: Samples::default(),
            holm_exact: None,
            base_label: base.into(),
            base: Samples::default(),
            base_exact: None,
            deltas: Samples::default(),
        }
    }

    pub(crate) fn push(&mut self, holm: Duration, base: Duration) {
        self.holm.push(holm);
        self.base.push(base);
        self.deltas.push_ms((holm.as_secs_f64() - base.as_secs_f64()) * 1000.0);
    }

    pub(crate) fn row(self) -> Row {
        let holm = self.holm.summary();
        let base = self.base.summary();
        let ratio = match (holm.p50_ms, base.p50_ms) {
            (Some(h), Some(b)) if h > 0.0 => Some((b / h * 100.0).round() / 100.0),
            _ => None,
        };
        Row {
            id: self.id.into(),
            operation: self.operation,
            holm: Side { label: self.holm_label, summary: holm, exact: self.holm_exact },
            baseline: Side { label: self.base_label, summary: base, exact: self.base_exact },
            ratio,
            paired_delta_p50_ms: self.deltas.median().map(round),
        }
    }
}

/// Whether run `i` measures holm's side first.
pub(crate) fn holm_first(i: usize) -> bool {
    i.is_multiple_of(2)
}

pub(crate) const PNG: &ScreenshotOptions = &ScreenshotOptions {
    format: None,
    quality: None,
    region: None,
    max_width: None,
    max_height: None,
    scale: None,
    cursor: None,
};

fn jpeg() -> ScreenshotOptions {
    ScreenshotOptions { format: Some(ImageFormat::Jpeg), ..ScreenshotOptions::default() }
}

pub(crate) async fn shot(b: &BoxClient, options: &ScreenshotOptions) -> anyhow::Result<Duration> {
    let t = Instant::now();
    let s = b.screenshot(0, options).await?;
    let d = t.elapsed();
    if s.bytes.len() < 1000 {
        bail!("a screenshot of {} bytes", s.bytes.len());
    }
    Ok(d)
}

/// Changes what screen 0 shows (the page's background colour), untimed,
/// so the next screenshot is encoded afresh: the guest answers a screen
/// that has not changed since its last screenshot with the same bytes, and
/// the screenshot rows measure a capture and an encode, as after an action.
pub(crate) async fn vary(b: &BoxClient, i: usize) -> anyhow::Result<()> {
    let colour = 0x40_80_c0 ^ (i.wrapping_mul(0x2f_1b_3d) & 0x3f_3f_3f);
    let js = format!("document.body.style.background = '#{colour:06x}'");
    b.evaluate(&js).await.context("change the page's colour")?;
    // Chromium draws it within a frame or two.
    tokio::time::sleep(Duration::from_millis(80)).await;
    Ok(())
}

/// One act-then-see call on screen 0: its time, once the screenshot it
/// answered is checked to be one.
pub(crate) async fn act_and_see(b: &BoxClient, r: &InputRequest) -> anyhow::Result<Duration> {
    let t = Instant::now();
    let s = b.act_and_see(0, r).await?;
    let d = t.elapsed();
    if s.bytes.len() < 1000 {
        bail!("a screenshot of {} bytes", s.bytes.len());
    }
    Ok(d)
}

pub(crate) fn click_action(x: i32, y: i32) -> Action {
    Action::Click { x: Some(x), y: Some(y), button: Button::Left, count: 1, modifiers: vec![] }
}

pub(crate) async fn click(b: &BoxClient, x: i32, y: i32) -> anyhow::Result<Duration> {
    let t = Instant::now();
    b.click(0, x, y).await?;
    Ok(t.elapsed())
}

/// The terminal the benchmark types into and clicks on: an xterm at the
/// top left of screen 0 that writes every byte it is typed (raw, no echo)
/// to [`TYPED`].
pub(crate) const TYPED: &str = "/tmp/holm-bench-typed";

/// Points inside that terminal, for clicks: they keep it focused.
fn point(i: usize) -> (i32, i32) {
    let i = i32::try_from(i % 20).unwrap_or(0);
    (40 + i * 12, 60 + (i % 5) * 30)
}

async fn open_terminal(b: &BoxClient) -> anyhow::Result<()> {
    let start = ProcessStart {
        argv: Some(
            [
                "xterm",
                "-name",
                "holm-bench",
                "-geometry",
                "80x20+0+0",
                "-en",
                "UTF-8",
                "-e",
                "sh",
                "-c",
                &format!("stty raw -echo; exec cat > {TYPED}"),
            ]
            .map(str::to_owned)
            .to_vec(),
        ),
        env: [("LANG".to_owned(), "C.UTF-8".to_owned())].into(),
        tag: Some("holm-bench".into()),
        ..ProcessStart::default()
    };
    b.start_process(&start).await.context("start the benchmark's xterm")?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r =
            b.exec(&["xdotool", "search", "--onlyvisible", "--classname", "holm-bench"]).await?;
        if r.exit_code == Some(0) && !r.stdout.trim().is_empty() {
            break;
        }
        if Instant::now() > deadline {
            bail!("the benchmark's xterm did not show in 30 seconds");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Focus it (and wait until its file exists: `cat` has started).
    let (x, y) = point(0);
    b.click(0, x, y).await?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while b.stat(TYPED).await.is_err() {
        if Instant::now() > deadline {
            bail!("the benchmark's xterm did not start cat");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// Reads what the terminal was typed so far.
pub(crate) struct Typed {
    pub(crate) guest: BoxClient,
    pub(crate) seen: usize,
}

impl Typed {
    /// Waits until `text` (or something of its length) arrived after what
    /// was seen before; answers whether exactly `text` arrived.
    pub(crate) async fn arrived(
        &mut self,
        text: &str,
        quiet_max: Duration,
    ) -> anyhow::Result<bool> {
        // The terminal is raw: Return arrives as a carriage return.
        let text = text.replace('\n', "\r");
        let want = self.seen + text.len();
        let deadline = Instant::now() + quiet_max * 5;
        let mut last_len = usize::MAX;
        let mut changed = Instant::now();
        loop {
            let bytes = self.guest.read_file(TYPED).await?;
            if bytes.len() != last_len {
                last_len = bytes.len();
                changed = Instant::now();
            }
            // Done when the text's length arrived and nothing more came for
            // a moment (a wrong text may be longer), or nothing came for
            // `quiet_max` (it may be shorter).
            let quiet = changed.elapsed();
            if (bytes.len() >= want && quiet >= Duration::from_millis(50))
                || quiet >= quiet_max
                || Instant::now() > deadline
            {
                let got = bytes.get(self.seen..).unwrap_or_default();
                self.seen = bytes.len();
                return Ok(got == text.as_bytes());
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// One text the benchmark types, with the rows it makes.
pub struct Text {
    /// The row against `xdotool type --delay 12`.
    pub id: &'static str,
    /// The row against `xdotool type --delay 0`.
    pub fast_id: &'static str,
    /// What is typed, for the table.
    pub operation: &'static str,
    /// The text.
    pub text: String,
    /// How long the terminal may go quiet before the text counts as
    /// arrived (a long text in many scripts makes xterm load fonts midway).
    pub quiet: Duration,
}

/// The 500-character text of the guest's typing test: eight scripts and
/// symbols, 199 distinct characters on no US key.
const LONG_TEXT: &str = include_str!("../../../tests/fixtures/typing-500.txt");

/// 100 characters of ASCII, 100 with characters that have no key on a US
/// layout (few distinct ones), and the 500-character text in eight scripts.
pub fn texts() -> [Text; 3] {
    let ascii: String =
        "The quick brown fox jumps over the lazy dog; 0123456789 (a+b)*c = d! ~`@#$%^&_-=[]{}| "
            .chars()
            .cycle()
            .take(100)
            .collect();
    let mixed: String = "Grüße aus Köln: Straße, café, naïve, Привет мир, 中文 €. "
        .chars()
        .cycle()
        .take(100)
        .collect();
    let second = Duration::from_secs(1);
    [
        Text {
            id: "type_ascii_vs_xdotool",
            fast_id: "type_ascii_vs_xdotool_delay0",
            operation: "type 100 ASCII characters",
            text: ascii,
            quiet: second,
        },
        Text {
            id: "type_non_ascii_vs_xdotool",
            fast_id: "type_non_ascii_vs_xdotool_delay0",
            operation: "type 100 characters, non-ASCII",
            text: mixed,
            quiet: second,
        },
        Text {
            id: "type_long_vs_xdotool",
            fast_id: "type_long_vs_xdotool_delay0",
            operation: "type 500 characters in 8 scripts, 199 distinct on no US key",
            text: LONG_TEXT.to_owned(),
            quiet: second * 5,
        },
    ]
}

/// Measures every row on box `id`: `holmd` through holmd, `guest` straight.
pub async fn run(
    through: &BoxClient,
    guest: &BoxClient,
    exec: &Exec,
    n: Counts,
    progress: &dyn Fn(&str),
) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    progress("latency: opening a terminal to type into");
    open_terminal(guest).await?;

    // Warm-up: connections, the MIT-SHM segment, the tools' page cache.
    for _ in 0..3 {
        shot(through, PNG).await?;
        shot(through, &jpeg()).await?;
        shot(guest, PNG).await?;
        exec.screenshot(&["import", "-window", "root", "png:-"]).await?;
        exec.screenshot(&["sh", "-c", "xwd -root | convert xwd:- png:-"]).await?;
        let (x, y) = point(0);
        click(through, x, y).await?;
        click(guest, x, y).await?;
        exec.run(&["xdotool", "mousemove", &x.to_string(), &y.to_string(), "click", "1"]).await?;
    }

    progress("latency: screenshots");
    let import_png = ["import", "-window", "root", "png:-"];
    let xwd_png = ["sh", "-c", "xwd -root | convert xwd:- png:-"];
    let import_jpeg = ["import", "-window", "root", "-quality", "80", "jpeg:-"];
    let xwd_jpeg = ["sh", "-c", "xwd -root | convert xwd:- -quality 80 jpeg:-"];
    let mut png_import = Pair::new(
        "screenshot_png_vs_import",
        "screenshot 1280x800 PNG",
        "holmd GET screenshot",
        "docker exec import -window root png:-",
    );
    let mut png_xwd = Pair::new(
        "screenshot_png_vs_xwd_convert",
        "screenshot 1280x800 PNG",
        "holmd GET screenshot",
        "docker exec sh -c 'xwd -root | convert xwd:- png:-'",
    );
    let mut jpeg_import = Pair::new(
        "screenshot_jpeg_vs_import",
        "screenshot 1280x800 JPEG q80",
        "holmd GET screenshot?format=jpeg",
        "docker exec import -window root -quality 80 jpeg:-",
    );
    let mut jpeg_xwd = Pair::new(
        "screenshot_jpeg_vs_xwd_convert",
        "screenshot 1280x800 JPEG q80",
        "holmd GET screenshot?format=jpeg",
        "docker exec sh -c 'xwd -root | convert xwd:- -quality 80 jpeg:-'",
    );
    for i in 0..n.screenshots {
        let (mut hp, mut hj) = (Duration::ZERO, Duration::ZERO);
        if holm_first(i) {
            vary(guest, 2 * i).await?;
            hp = shot(through, PNG).await?;
            vary(guest, 2 * i + 1).await?;
            hj = shot(through, &jpeg()).await?;
        }
        let bp = exec.screenshot(&import_png).await?;
        let bx = exec.screenshot(&xwd_png).await?;
        let bj = exec.screenshot(&import_jpeg).await?;
        let bxj = exec.screenshot(&xwd_jpeg).await?;
        if !holm_first(i) {
            vary(guest, 2 * i).await?;
            hp = shot(through, PNG).await?;
            vary(guest, 2 * i + 1).await?;
            hj = shot(through, &jpeg()).await?;
        }
        png_import.push(hp, bp);
        png_xwd.push(hp, bx);
        jpeg_import.push(hj, bj);
        jpeg_xwd.push(hj, bxj);
    }
    rows.extend([png_import.row(), png_xwd.row(), jpeg_import.row(), jpeg_xwd.row()]);

    progress("latency: clicks");
    let mut clicks = Pair::new(
        "click_vs_xdotool",
        "click (move, press, release)",
        "holmd POST input click",
        "docker exec xdotool mousemove X Y click 1",
    );
    for i in 0..n.clicks {
        let (x, y) = point(i);
        let (xs, ys) = (x.to_string(), y.to_string());
        let base = ["xdotool", "mousemove", &xs, &ys, "click", "1"];
        let (h, b) = if holm_first(i) {
            let h = click(through, x, y).await?;
            (h, exec.run(&base).await?.0)
        } else {
            let b = exec.run(&base).await?.0;
            (click(through, x, y).await?, b)
        };
        clicks.push(h, b);
    }
    rows.push(clicks.row());

    progress("latency: typing");
    let mut typed = Typed { guest: guest.clone(), seen: guest.read_file(TYPED).await?.len() };
    for Text { id, fast_id, operation, text, quiet } in texts() {
        let mut delayed = Pair::new(
            id,
            operation,
            "holmd POST input type",
            "docker exec xdotool type --delay 12 (computer-use demo)",
        );
        let mut fast = Pair::new(
            fast_id,
            operation,
            "holmd POST input type",
            "docker exec xdotool type --delay 0",
        );
        let (mut holm_exact, mut delayed_exact, mut fast_exact) = (0, 0, 0);
        for i in 0..n.types {
            // Three sides: rotate which goes first.
            let mut times = [Duration::ZERO; 3];
            for k in 0..3 {
                let side = (i + k) % 3;
                let t = Instant::now();
                match side {
                    0 => {
                        through.type_text(0, &text).await?;
                    }
                    1 => {
                        exec.run(&["xdotool", "type", "--delay", "12", &text]).await?;
                    }
                    _ => {
                        exec.run(&["xdotool", "type", "--delay", "0", &text]).await?;
                    }
                }
                times[side] = t.elapsed();
                let exact = typed.arrived(&text, quiet).await?;
                match side {
                    0 => holm_exact += usize::from(exact),
                    1 => delayed_exact += usize::from(exact),
                    _ => fast_exact += usize::from(exact),
                }
            }
            delayed.push(times[0], times[1]);
            fast.push(times[0], times[2]);
        }
        delayed.holm_exact = Some(holm_exact);
        delayed.base_exact = Some(delayed_exact);
        fast.holm_exact = Some(holm_exact);
        fast.base_exact = Some(fast_exact);
        rows.extend([delayed.row(), fast.row()]);
    }

    progress("latency: act-then-see");
    let mut act = Pair::new(
        "act_and_see_vs_exec",
        "click, then the screenshot after it (PNG)",
        "holmd POST input click + screenshot, one call",
        "docker exec xdotool click; docker exec import png:-",
    );
    let mut settled = Pair::new(
        "act_and_see_settled_vs_exec",
        "click, then the settled screenshot (PNG, 25 ms quiet)",
        "holmd POST input click + settle + screenshot, one call",
        "docker exec xdotool click; docker exec import png:-",
    );
    for i in 0..n.acts {
        let (x, y) = point(i);
        let (xs, ys) = (x.to_string(), y.to_string());
        let plain = InputRequest { actions: vec![click_action(x, y)], ..InputRequest::default() };
        let settling = InputRequest {
            actions: vec![click_action(x, y)],
            settle: Some(Settle { timeout_ms: 2000, quiet_ms: 25 }),
            ..InputRequest::default()
        };
        let baseline = async {
            let t = Instant::now();
            exec.run(&["xdotool", "mousemove", &xs, &ys, "click", "1"]).await?;
            exec.screenshot(&import_png).await?;
            anyhow::Ok(t.elapsed())
        };
        let see = |r: InputRequest| async move {
            vary(guest, i).await?;
            act_and_see(through, &r).await
        };
        let (h, hs, b) = if holm_first(i) {
            let h = see(plain).await?;
            let hs = see(settling).await?;
            (h, hs, baseline.await?)
        } else {
            let b = baseline.await?;
            (see(plain).await?, see(settling).await?, b)
        };
        act.push(h, b);
        settled.push(hs, b);
    }
    rows.extend([act.row(), settled.row()]);

    progress("latency: holmd's overhead");
    let mut over_shot = Pair::new(
        "holmd_overhead_screenshot",
        "screenshot PNG: through holmd against straight to the guest",
        "through holmd",
        "straight to the guest",
    );
    let mut over_click = Pair::new(
        "holmd_overhead_click",
        "click: through holmd against straight to the guest",
        "through holmd",
        "straight to the guest",
    );
    for i in 0..n.overhead {
        let (x, y) = point(i);
        // Both sides take an unchanged screen (the guest's kept
        // encoding): the difference is holmd's alone.
        if holm_first(i) {
            let h = shot(through, PNG).await?;
            over_shot.push(h, shot(guest, PNG).await?);
            let h = click(through, x, y).await?;
            over_click.push(h, click(guest, x, y).await?);
        } else {
            let g = shot(guest, PNG).await?;
            over_shot.push(shot(through, PNG).await?, g);
            let g = click(guest, x, y).await?;
            over_click.push(click(through, x, y).await?, g);
        }
    }
    rows.extend([over_shot.row(), over_click.row()]);
    Ok(rows)
}
