//! Wayland latency, side by side on one Wayland box: holm's way (through
//! holmd) against the exec-driven way on Wayland (`docker exec` of `grim`
//! for screenshots, `wtype` for typing, `swaymsg seat - cursor` for clicks),
//! in the same loops with the order alternating, as for X11 ([`latency`]).
//!
//! [`latency`]: super::latency

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use holm_client::BoxClient;
use holm_proto::guest::{InputRequest, ProcessStart, Settle};

use super::exec::Exec;
use super::latency::{
    Counts, PNG, Pair, Row, TYPED, Text, Typed, act_and_see, click, click_action, holm_first, shot,
    texts,
};

/// The node of sway's tree whose `app_id` is `name`, once its window is
/// mapped and shown; answers its rectangle.
pub fn find_app<'a>(node: &'a serde_json::Value, name: &str) -> Option<&'a serde_json::Value> {
    if node["app_id"] == name && node["visible"] == true {
        return Some(&node["rect"]);
    }
    ["nodes", "floating_nodes"]
        .iter()
        .filter_map(|k| node[k].as_array())
        .flatten()
        .find_map(|child| find_app(child, name))
}

/// Opens foot writing every byte it is typed (raw, no echo) to [`TYPED`];
/// sway tiles it beside Chromium. Answers its rectangle once it shows and
/// has the focus, with `cat` started.
async fn open_terminal(b: &BoxClient) -> anyhow::Result<(i32, i32, i32, i32)> {
    let start = ProcessStart {
        argv: Some(
            [
                "foot",
                "--app-id",
                "holm-bench",
                "--",
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
    b.start_process(&start).await.context("start the benchmark's foot")?;
    let deadline = Instant::now() + Duration::from_secs(30);
    let rect = loop {
        let r = b.exec(&["swaymsg", "-t", "get_tree"]).await?;
        let tree: serde_json::Value = serde_json::from_str(&r.stdout).unwrap_or_default();
        let n = |v: &serde_json::Value, k: &str| v[k].as_i64().and_then(|v| i32::try_from(v).ok());
        if let Some(rect) = find_app(&tree, "holm-bench")
            && let (Some(x), Some(y), Some(w), Some(h)) =
                (n(rect, "x"), n(rect, "y"), n(rect, "width"), n(rect, "height"))
        {
            break (x, y, w, h);
        }
        if Instant::now() > deadline {
            bail!("the benchmark's foot did not show in 30 seconds");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (x, y) = point(rect, 0);
    b.click(0, x, y).await?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while b.stat(TYPED).await.is_err() {
        if Instant::now() > deadline {
            bail!("the benchmark's foot did not start cat");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(rect)
}

/// Points inside the terminal, for clicks: they keep it focused.
fn point((x, y, w, h): (i32, i32, i32, i32), i: usize) -> (i32, i32) {
    let i = i32::try_from(i % 20).unwrap_or(0);
    (x + w / 8 + i * (w / 40).max(1), y + h / 8 + (i % 5) * (h / 10).max(1))
}

/// A click as a person's tools make it on sway: one `swaymsg` moving sway's
/// cursor and pressing and releasing its button.
fn swaymsg_click(x: i32, y: i32) -> String {
    format!("seat - cursor set {x} {y}, seat - cursor press button1, seat - cursor release button1")
}

/// Measures the Wayland rows on box `id`, through holmd.
pub async fn run(
    through: &BoxClient,
    guest: &BoxClient,
    exec: &Exec,
    n: Counts,
    progress: &dyn Fn(&str),
) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    progress("wayland latency: opening a terminal to type into");
    let rect = open_terminal(guest).await?;
    let grim = ["grim", "-"];

    // Warm-up: connections, the screencopy buffer, the tools' page cache.
    for _ in 0..3 {
        shot(through, PNG).await?;
        exec.screenshot(&grim).await?;
        let (x, y) = point(rect, 0);
        click(through, x, y).await?;
        exec.run(&["swaymsg", &swaymsg_click(x, y)]).await?;
    }

    progress("wayland latency: screenshots");
    let mut png = Pair::new(
        "wayland_screenshot_png_vs_grim",
        "Wayland: screenshot 1280x800 PNG",
        "holmd GET screenshot",
        "docker exec grim -",
    );
    for i in 0..n.screenshots {
        let (h, b) = if holm_first(i) {
            let h = shot(through, PNG).await?;
            (h, exec.screenshot(&grim).await?)
        } else {
            let b = exec.screenshot(&grim).await?;
            (shot(through, PNG).await?, b)
        };
        png.push(h, b);
    }
    rows.push(png.row());

    progress("wayland latency: clicks");
    let mut clicks = Pair::new(
        "wayland_click_vs_swaymsg",
        "Wayland: click (move, press, release)",
        "holmd POST input click",
        "docker exec swaymsg 'seat - cursor set X Y, … press button1, … release button1'",
    );
    for i in 0..n.clicks {
        let (x, y) = point(rect, i);
        let command = swaymsg_click(x, y);
        let base = ["swaymsg", command.as_str()];
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

    progress("wayland latency: typing");
    let mut typed = Typed { guest: guest.clone(), seen: guest.read_file(TYPED).await?.len() };
    // The two 100-character texts; the long one is an X11 row only.
    for Text { id, operation, text, quiet, .. } in texts().into_iter().take(2) {
        let mut pair = Pair::new(
            if id == "type_ascii_vs_xdotool" {
                "wayland_type_ascii_vs_wtype"
            } else {
                "wayland_type_non_ascii_vs_wtype"
            },
            &format!("Wayland: {operation}"),
            "holmd POST input type",
            "docker exec wtype TEXT",
        );
        let (mut holm_exact, mut base_exact) = (0, 0);
        for i in 0..n.types {
            let mut times = [Duration::ZERO; 2];
            for k in 0..2 {
                let side = (i + k) % 2;
                let t = Instant::now();
                if side == 0 {
                    through.type_text(0, &text).await?;
                } else {
                    exec.run(&["wtype", &text]).await?;
                }
                times[side] = t.elapsed();
                let exact = usize::from(typed.arrived(&text, quiet).await?);
                if side == 0 {
                    holm_exact += exact;
                } else {
                    base_exact += exact;
                }
            }
            pair.push(times[0], times[1]);
        }
        pair.holm_exact = Some(holm_exact);
        pair.base_exact = Some(base_exact);
        rows.push(pair.row());
    }

    progress("wayland latency: act-then-see");
    let mut act = Pair::new(
        "wayland_act_and_see_vs_exec",
        "Wayland: click, then the screenshot after it (PNG)",
        "holmd POST input click + screenshot, one call",
        "docker exec swaymsg click; docker exec grim -",
    );
    let mut settled = Pair::new(
        "wayland_act_and_see_settled_vs_exec",
        "Wayland: click, then the settled screenshot (PNG, 25 ms quiet)",
        "holmd POST input click + settle + screenshot, one call",
        "docker exec swaymsg click; docker exec grim -",
    );
    for i in 0..n.acts {
        let (x, y) = point(rect, i);
        let command = swaymsg_click(x, y);
        let plain = InputRequest { actions: vec![click_action(x, y)], ..InputRequest::default() };
        let settling = InputRequest {
            actions: vec![click_action(x, y)],
            settle: Some(Settle { timeout_ms: 2000, quiet_ms: 25 }),
            ..InputRequest::default()
        };
        let baseline = async {
            let t = Instant::now();
            exec.run(&["swaymsg", &command]).await?;
            exec.screenshot(&grim).await?;
            anyhow::Ok(t.elapsed())
        };
        let see = |r: InputRequest| async move { act_and_see(through, &r).await };
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
    Ok(rows)
}
