//! Screenshot, click and typing speed of a real guest against the tools an
//! agent would otherwise run as processes, on the same display in the same
//! run, alternating which goes first.
//!
//! ```text
//! cargo bench -p holm-guest --bench x11
//! ```
//!
//! Needs Xvfb, fluxbox, ImageMagick (`import`, `convert`), `xwd` and
//! `xdotool`. Prints one table (median, p95, n, ratio to the baseline) and a
//! breakdown of where a screenshot's time goes.

#[path = "../tests/common/mod.rs"]
mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Guest, Options};
use holm_guest::image;
use holm_proto::guest::{Region, ScreenshotOptions};

/// Milliseconds of each run.
#[derive(Default)]
struct Samples(Vec<f64>);

impl Samples {
    fn push(&mut self, d: Duration) {
        self.0.push(d.as_secs_f64() * 1000.0);
    }

    fn sorted(&self) -> Vec<f64> {
        let mut v = self.0.clone();
        v.sort_by(f64::total_cmp);
        v
    }

    fn median(&self) -> f64 {
        let v = self.sorted();
        if v.is_empty() { f64::NAN } else { v[v.len() / 2] }
    }

    fn p95(&self) -> f64 {
        let v = self.sorted();
        if v.is_empty() { f64::NAN } else { v[((v.len() * 95).div_ceil(100)).saturating_sub(1)] }
    }
}

#[allow(
    clippy::disallowed_methods,
    reason = "the bench process is not the guest: it times the tools an agent would run"
)]
fn run(display: &str, argv: &[&str]) -> Duration {
    let t = Instant::now();
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .env("DISPLAY", display)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", argv[0]));
    let d = t.elapsed();
    assert!(out.status.success(), "{argv:?} failed");
    d
}

async fn api_shot(g: &Guest, query: &str) -> Duration {
    let t = Instant::now();
    let r = g.get(&format!("/v1/screens/0/screenshot?{query}")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let body = r.bytes().await.unwrap();
    let d = t.elapsed();
    assert!(body.len() > 1000);
    d
}

async fn api_input(g: &Guest, body: serde_json::Value) -> Duration {
    let t = Instant::now();
    let r = g.post("/v1/screens/0/input").json(&body).send().await.unwrap();
    assert_eq!(r.status(), 200);
    r.bytes().await.unwrap();
    t.elapsed()
}

struct Row {
    name: String,
    holm: Samples,
    baseline_name: &'static str,
    baseline: Samples,
}

fn print(rows: &[Row]) {
    println!(
        "\n| operation | holm median ms | p95 | n | baseline | median ms | p95 | n | baseline / holm |"
    );
    println!("|---|---:|---:|---:|---|---:|---:|---:|---:|");
    for r in rows {
        println!(
            "| {} | {:.2} | {:.2} | {} | {} | {:.2} | {:.2} | {} | {:.1}x |",
            r.name,
            r.holm.median(),
            r.holm.p95(),
            r.holm.0.len(),
            r.baseline_name.replace('|', "\\|"),
            r.baseline.median(),
            r.baseline.p95(),
            r.baseline.0.len(),
            r.baseline.median() / r.holm.median(),
        );
    }
}

fn main() {
    common::require_programs(&["Xvfb", "fluxbox", "import", "convert", "xwd", "xdotool", "xterm"]);
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(bench());
}

async fn bench() {
    let n_shots: usize =
        std::env::var("HOLM_BENCH_SHOTS").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    let n_clicks: usize =
        std::env::var("HOLM_BENCH_CLICKS").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let n_types: usize = 10;
    let g = Guest::start(Options::default()).await;
    g.wait_until(Duration::from_secs(30), |h| h["status"] == "ready").await;
    let d = g.display(0);
    // Something real on the screen: a terminal full of text over the desktop.
    let _term = g.x_client(
        0,
        "xterm",
        &[
            "-geometry",
            "120x40+40+40",
            "-e",
            "sh",
            "-c",
            "ls -laR /usr/share/doc | head -300; sleep 100000",
        ],
    );
    tokio::time::sleep(Duration::from_secs(2)).await;

    // Warm-up: connections, the MIT-SHM segment, the page cache of the tools.
    for _ in 0..3 {
        api_shot(&g, "").await;
        api_shot(&g, "format=jpeg").await;
        run(&d, &["import", "-window", "root", "png:-"]);
        api_input(&g, serde_json::json!({"actions":[{"type":"click","x":5,"y":5}]})).await;
        run(&d, &["xdotool", "mousemove", "5", "5", "click", "1"]);
    }

    let mut png = Row {
        name: "screenshot 1280x800 PNG".into(),
        holm: Samples::default(),
        baseline_name: "import -window root png:-",
        baseline: Samples::default(),
    };
    let mut png_xwd = Row {
        name: "screenshot 1280x800 PNG".into(),
        holm: Samples::default(),
        baseline_name: "xwd -root | convert xwd:- png:-",
        baseline: Samples::default(),
    };
    let mut jpeg = Row {
        name: "screenshot 1280x800 JPEG q80".into(),
        holm: Samples::default(),
        baseline_name: "import -window root -quality 80 jpeg:-",
        baseline: Samples::default(),
    };
    for i in 0..n_shots {
        let holm_first = i % 2 == 0;
        if holm_first {
            png.holm.push(api_shot(&g, "").await);
            jpeg.holm.push(api_shot(&g, "format=jpeg").await);
        }
        png.baseline.push(run(&d, &["import", "-window", "root", "png:-"]));
        png_xwd.baseline.push(run(&d, &["sh", "-c", "xwd -root -silent | convert xwd:- png:-"]));
        jpeg.baseline.push(run(&d, &["import", "-window", "root", "-quality", "80", "jpeg:-"]));
        if !holm_first {
            png.holm.push(api_shot(&g, "").await);
            jpeg.holm.push(api_shot(&g, "format=jpeg").await);
        }
    }
    png_xwd.holm = Samples(png.holm.0.clone());

    let mut click = Row {
        name: "click (move + press + release)".into(),
        holm: Samples::default(),
        baseline_name: "xdotool mousemove X Y click 1",
        baseline: Samples::default(),
    };
    for i in 0..n_clicks {
        let (x, y) = (10 + (i % 50) as i32 * 20, 700);
        let holm = serde_json::json!({"actions":[{"type":"click","x":x,"y":y}]});
        let (xs, ys) = (x.to_string(), y.to_string());
        let base = ["xdotool", "mousemove", xs.as_str(), ys.as_str(), "click", "1"];
        if i % 2 == 0 {
            click.holm.push(api_input(&g, holm).await);
            click.baseline.push(run(&d, &base));
        } else {
            click.baseline.push(run(&d, &base));
            click.holm.push(api_input(&g, holm).await);
        }
    }

    // 100 characters each; the second has characters on no US key, fewer
    // distinct ones than there are spare keycodes, so nothing is recycled.
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
    let distinct = |t: &str| {
        let mut v: Vec<char> = t.chars().filter(|c| !c.is_ascii()).collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    let mut rows = vec![png, png_xwd, jpeg, click];
    for (name, text) in [
        ("type 100 ASCII characters".to_owned(), ascii),
        (format!("type 100 characters, {} distinct non-US", distinct(&mixed)), mixed),
    ] {
        let mut row = Row {
            name,
            holm: Samples::default(),
            baseline_name: "xdotool type --delay 0",
            baseline: Samples::default(),
        };
        let holm = serde_json::json!({"actions":[{"type":"type","text":text}]});
        for i in 0..n_types {
            if i % 2 == 0 {
                row.holm.push(api_input(&g, holm.clone()).await);
                row.baseline.push(run(&d, &["xdotool", "type", "--delay", "0", &text]));
            } else {
                row.baseline.push(run(&d, &["xdotool", "type", "--delay", "0", &text]));
                row.holm.push(api_input(&g, holm.clone()).await);
            }
        }
        rows.push(row);
    }
    let mut http = Samples::default();
    let mut warm_click = Samples::default();
    for i in 0..n_clicks {
        let t = Instant::now();
        let r = g.get("/v1/screens/0/cursor").send().await.unwrap();
        r.bytes().await.unwrap();
        http.push(t.elapsed());
        let x = 10 + (i % 50) as i32 * 20;
        warm_click.push(
            api_input(&g, serde_json::json!({"actions":[{"type":"click","x":x,"y":700}]})).await,
        );
    }
    print(&rows);
    println!(
        "\nfor scale: GET /v1/screens/0/cursor (HTTP + one X round trip) median {:.2} ms, p95 {:.2} ms",
        http.median(),
        http.p95()
    );
    println!(
        "click through the API back to back (no process started in between): median {:.2} ms, p95 {:.2} ms",
        warm_click.median(),
        warm_click.p95()
    );
    breakdown(&d);
}

/// Where a screenshot's time goes, measured in this process on the same
/// display with the guest's own code.
fn breakdown(display: &str) {
    let x11 = holm_guest::x11::X11::new(vec![display.to_owned()]);
    let Some(screen) = x11.screen(0) else { return };
    let Ok((w, h)) = screen.size() else { return };
    let mut cap = Samples::default();
    let mut hash = Samples::default();
    let mut enc_png = Samples::default();
    let mut enc_jpeg = Samples::default();
    let mut enc_webp = Samples::default();
    let mut scaled = Samples::default();
    let mut in_place = Samples::default();
    let mut rgb = Samples::default();
    let mut bytes = (0, 0, 0);
    let region = Region { x: 0, y: 0, width: w, height: h };
    for _ in 0..20 {
        let t = Instant::now();
        let Ok(c) = screen.with(true, |c| holm_guest::x11::capture::capture(c, region, false))
        else {
            return;
        };
        cap.push(t.elapsed());
        let t = Instant::now();
        std::hint::black_box(image::pixels_hash(&c.frame.data));
        hash.push(t.elapsed());
        let t = Instant::now();
        let Ok(_) = screen.with(true, holm_guest::x11::capture::screen_hash) else { return };
        in_place.push(t.elapsed());
        let t = Instant::now();
        std::hint::black_box(image::to_rgb(&c.frame.data));
        rgb.push(t.elapsed());
        for (samples, q, slot) in [
            (&mut enc_png, "", 0),
            (&mut enc_jpeg, "format=jpeg", 1),
            (&mut enc_webp, "format=webp", 2),
            (&mut scaled, "max_width=640", 3),
        ] {
            let opts: ScreenshotOptions = holm_proto::strict::from_query(q).unwrap();
            let plan = image::plan(&opts, w, h, "").unwrap();
            let t = Instant::now();
            let (out, _) = image::render(&c.frame, &plan).unwrap();
            samples.push(t.elapsed());
            match slot {
                0 => bytes.0 = out.len(),
                1 => bytes.1 = out.len(),
                2 => bytes.2 = out.len(),
                _ => {}
            }
        }
    }
    println!("\nscreenshot breakdown, {w}x{h}, in process (median ms):");
    println!("  capture (MIT-SHM GetImage + copy + pointer): {:.2}", cap.median());
    println!("  frame hash (xxh3):                           {:.2}", hash.median());
    println!("  MIT-SHM GetImage + in-place hash (settle):   {:.2}", in_place.median());
    println!("  BGRX to RGB (part of PNG and WebP):          {:.2}", rgb.median());
    println!(
        "  PNG encode:                                  {:.2}  ({} KB)",
        enc_png.median(),
        bytes.0 / 1024
    );
    println!(
        "  JPEG q80 encode:                             {:.2}  ({} KB)",
        enc_jpeg.median(),
        bytes.1 / 1024
    );
    println!(
        "  WebP lossless encode:                        {:.2}  ({} KB)",
        enc_webp.median(),
        bytes.2 / 1024
    );
    println!("  Lanczos3 downscale to 640x400 + PNG:         {:.2}", scaled.median());
}
