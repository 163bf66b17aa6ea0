//! The targets of the speed work (issue 17) that the latency rows and the
//! concurrency phase decide: PNG and click through holmd, holmd's overhead,
//! JPEG against PNG on the same screen, the busy screen, throughput.

use super::latency::Row;
use super::load::{Concurrency, Screens};
use super::report::{Target, ms, row, target};

fn p50(rows: &[Row], id: &str) -> Option<f64> {
    row(rows, id).and_then(|r| r.holm.summary.p50_ms)
}

/// JPEG's p50 at most PNG's, on the screen of the two rows.
fn jpeg_vs_png(rows: &[Row], id: &str, screen: &str, png: &str, jpeg: &str) -> Target {
    let (png, jpeg) = (p50(rows, png), p50(rows, jpeg));
    target(
        id,
        &format!("JPEG at least as fast as PNG ({screen}, p50 through holmd)"),
        format!("JPEG {}, PNG {}", ms(jpeg), ms(png)),
        jpeg.zip(png).map(|(j, p)| j <= p),
    )
}

/// Checks the targets; `loads` are the concurrency runs (none when the run
/// had no concurrency phase).
pub fn targets(rows: &[Row], loads: &[&Concurrency]) -> Vec<Target> {
    let mut out = Vec::new();
    let png = p50(rows, "screenshot_png_vs_import");
    out.push(target(
        "speed_png_p50",
        "screenshot PNG 1280x800 through holmd p50 ≤ 4 ms",
        ms(png),
        png.map(|v| v <= 4.0),
    ));
    out.push(jpeg_vs_png(
        rows,
        "speed_jpeg_vs_png",
        "the bench's desktop",
        "screenshot_png_vs_import",
        "screenshot_jpeg_vs_import",
    ));
    let busy = p50(rows, "busy_screenshot_png_vs_xwd_convert");
    out.push(target(
        "speed_busy_png_p50",
        "busy screen (photographs and text): screenshot PNG through holmd p50 ≤ 15 ms",
        format!(
            "PNG {}, JPEG {}, WebP {}",
            ms(busy),
            ms(p50(rows, "busy_screenshot_jpeg_vs_xwd_convert")),
            ms(p50(rows, "busy_screenshot_webp_vs_xwd_convert"))
        ),
        busy.map(|v| v <= 15.0),
    ));
    out.push(jpeg_vs_png(
        rows,
        "speed_busy_jpeg_vs_png",
        "busy screen",
        "busy_screenshot_png_vs_xwd_convert",
        "busy_screenshot_jpeg_vs_xwd_convert",
    ));
    let click = p50(rows, "click_vs_xdotool");
    let back_to_back = p50(rows, "holmd_overhead_click");
    out.push(target(
        "speed_click_p50",
        "click through holmd p50 ≤ 1.2 ms",
        format!("{} ({} back to back)", ms(click), ms(back_to_back)),
        click.map(|v| v <= 1.2),
    ));
    let over: Vec<Option<f64>> = ["holmd_overhead_screenshot", "holmd_overhead_click"]
        .iter()
        .map(|id| row(rows, id).and_then(|r| r.paired_delta_p50_ms))
        .collect();
    out.push(target(
        "speed_holmd_overhead",
        "holmd's overhead ≤ 0.3 ms p50 (paired: through holmd minus straight to the guest)",
        format!("screenshot {}, click {}", ms(over[0]), ms(over[1])),
        over.iter().copied().collect::<Option<Vec<f64>>>().map(|v| v.iter().all(|d| *d <= 0.3)),
    ));
    for load in loads {
        let full = load.boxes >= 10 && load.clients_per_box >= 10 && load.duration_secs >= 59.0;
        let (id, what, bound) = match load.screens {
            Screens::Unchanged => ("speed_throughput", "", 450.0),
            // Issue 29's target: every screenshot on a screen a click changed.
            Screens::Changing => (
                "speed_throughput_changing",
                ", every click changing the screen, every screenshot encoded anew",
                500.0,
            ),
        };
        out.push(target(
            id,
            &format!("10 boxes × 10 clients for 60 s{what}: 0 errors and ≥ {bound} calls/s"),
            match load.screens {
                Screens::Unchanged => format!(
                    "{:.1} calls/s, {} errors, {} of {} screenshots on an unchanged screen",
                    load.throughput_per_sec,
                    load.errors,
                    load.unchanged_screenshots,
                    load.screenshot.n
                ),
                Screens::Changing => format!(
                    "{:.1} calls/s, {} errors, every screenshot encoded anew",
                    load.throughput_per_sec, load.errors
                ),
            },
            full.then_some(load.errors == 0 && load.throughput_per_sec >= bound),
        ));
    }
    out
}
