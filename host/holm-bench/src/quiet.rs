//! The quiet window, chosen from measurement: how long the screen must stay
//! unchanged before act-then-see calls it settled.
//!
//! The action is the one agents do most: click a link and look at the page
//! it opens. Here the link leads from a light page to the busy page (16
//! photographs from the box's own one-connection-at-a-time server, so the
//! page paints in several steps with gaps between them) and back. For each
//! quiet window the settled screenshot is compared with one taken a second
//! later: when they differ, the settle ended in a gap and the
//! agent saw a stale screen. The baseline is what an agent without settle
//! does: click, wait a fixed second, then look.

use std::time::{Duration, Instant};

use anyhow::Context;
use holm_client::BoxClient;
use holm_proto::guest::{Action, InputRequest, ScreenshotOptions, Settle};

use super::busy::{LIGHT, PORT};
use super::latency::{Pair, Row, click_action};

/// The quiet windows measured, in milliseconds, and their rows' ids.
const WINDOWS: [(u32, &str); 5] = [
    (10, "settle_quiet_10ms_vs_fixed_wait"),
    (25, "settle_quiet_25ms_vs_fixed_wait"),
    (50, "settle_quiet_50ms_vs_fixed_wait"),
    (100, "settle_quiet_100ms_vs_fixed_wait"),
    (200, "settle_quiet_200ms_vs_fixed_wait"),
];

/// What an agent without settle waits after acting.
const FIXED_WAIT: Duration = Duration::from_secs(1);

/// How long after a settle the screen counts as final.
const FINAL_AFTER: Duration = Duration::from_secs(1);

/// Where the link is clicked (in the page's top half, which is the link),
/// and where the pointer goes after (its bottom half: no link).
const LINK: (i32, i32) = (640, 250);
const AWAY: (i32, i32) = (640, 760);

/// The click on the link and the move off it.
fn click_and_leave() -> Vec<Action> {
    vec![click_action(LINK.0, LINK.1), Action::Move { x: AWAY.0, y: AWAY.1 }]
}

/// One click on the page's link, with `settle`, and the frame hash of the
/// screenshot after it.
async fn click_link(b: &BoxClient, settle: Option<Settle>) -> anyhow::Result<(Duration, String)> {
    let request = InputRequest {
        actions: click_and_leave(),
        settle,
        screenshot: Some(ScreenshotOptions::default()),
        ..InputRequest::default()
    };
    let t = Instant::now();
    let shot = b.act_and_see(0, &request).await?;
    Ok((t.elapsed(), shot.meta.frame))
}

/// Whether the screen still shows the frame `seen` after it had time to
/// finish.
async fn current(b: &BoxClient, seen: &str) -> anyhow::Result<bool> {
    tokio::time::sleep(FINAL_AFTER).await;
    let last = b.screenshot(0, &ScreenshotOptions::default()).await?;
    Ok(last.meta.frame == seen)
}

/// The rows: for each quiet window, `n` clicks each way (light page to busy
/// page and back), settled, against the fixed wait. The busy page must be
/// open (see `busy::run`).
pub async fn run(through: &BoxClient, guest: &BoxClient, n: usize) -> anyhow::Result<Vec<Row>> {
    // Start on the light page, settled.
    let url = format!("http://127.0.0.1:{PORT}/{LIGHT}");
    guest.navigate(&url).await.context("open the light page")?;
    tokio::time::sleep(FINAL_AFTER).await;
    let mut rows = Vec::new();
    for (quiet, id) in WINDOWS {
        let mut pair = Pair::new(
            id,
            &format!(
                "click a link to a page of photographs (and back), settled screenshot, {quiet} ms quiet"
            ),
            &format!("POST input click + settle (quiet {quiet} ms) + screenshot"),
            "POST input click + screenshot after a fixed 1 s",
        );
        let (mut fresh, mut base_fresh) = (0, 0);
        // Each sample is two clicks: there, then back.
        for _ in 0..2 * n {
            let settle = Settle { timeout_ms: 3000, quiet_ms: quiet };
            let (h, seen) = click_link(through, Some(settle)).await?;
            fresh += usize::from(current(through, &seen).await?);
            // The baseline goes there and back too, so the next click of
            // this side starts from the same page.
            let t = Instant::now();
            through.actions(0, click_and_leave()).await?;
            tokio::time::sleep(FIXED_WAIT).await;
            let shot = through.screenshot(0, &ScreenshotOptions::default()).await?;
            let b = t.elapsed();
            base_fresh += usize::from(current(through, &shot.meta.frame).await?);
            // A third click: the next sample's clicks go the other way, so
            // each side goes there and back equally often.
            click_link(through, Some(Settle { timeout_ms: 3000, quiet_ms: 300 })).await?;
            pair.push(h, b);
        }
        pair.holm_exact = Some(fresh);
        pair.base_exact = Some(base_fresh);
        rows.push(pair.row());
    }
    Ok(rows)
}
