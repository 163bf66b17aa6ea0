//! A complete screenshot → decide → act loop against a box, through
//! `holm-client` and a running holmd (`HOLM_SERVER_URL`, `HOLM_SERVER_TOKEN`).
//!
//! The goal: type a line into a terminal window. The loop looks at the
//! screen, decides what to do, acts, and looks again. The decision is a tiny
//! rule (find the window that appeared since the first look, click its
//! middle, type) so the example runs without a model; the comment in
//! [`decide`] shows where a model call goes.
//!
//! ```sh
//! cargo run -p holm-examples --bin agent_loop
//! ```

use std::time::Duration;

use anyhow::{Context, bail};
use holm_client::{BoxClient, Client};
use holm_proto::guest::{Action, Button, ProcessStart, ScreenshotOptions};
use holm_proto::host::{BoxSpec, BoxState, CreateBox};

/// What the loop types, and where the terminal writes it.
const LINE: &str = "hello from the agent loop";
const FILE: &str = "/tmp/agent-loop.txt";

/// A screenshot decoded: width, height, RGB(A) bytes, bytes per pixel.
struct Frame {
    width: u32,
    height: u32,
    pixels: Vec<u8>,
    bpp: usize,
}

fn decode(png_bytes: &[u8]) -> anyhow::Result<Frame> {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().context("a PNG")?;
    let mut pixels = vec![0; reader.output_buffer_size().context("the PNG's size")?];
    let info = reader.next_frame(&mut pixels).context("a PNG frame")?;
    pixels.truncate(info.buffer_size());
    Ok(Frame { width: info.width, height: info.height, pixels, bpp: info.color_type.samples() })
}

/// The bounding box of the pixels that differ between two frames, as
/// (x0, y0, x1, y1), when any do.
fn changed(before: &Frame, now: &Frame) -> Option<(u32, u32, u32, u32)> {
    if (before.width, before.height) != (now.width, now.height) {
        return None;
    }
    let mut bounds: Option<(u32, u32, u32, u32)> = None;
    for y in 0..now.height {
        for x in 0..now.width {
            let i = (y as usize * now.width as usize + x as usize) * now.bpp;
            if before.pixels[i..i + 3] != now.pixels[i..i + 3] {
                let b = bounds.get_or_insert((x, y, x, y));
                *b = (b.0.min(x), b.1.min(y), b.2.max(x), b.3.max(y));
            }
        }
    }
    bounds
}

/// What the loop does next.
enum Decision {
    /// Nothing to act on yet: look again.
    Wait,
    /// Act, then look again.
    Act(Vec<Action>),
}

/// Decides from what the screen shows. `typed` says whether the line was
/// already typed.
fn decide(first: &Frame, now: &Frame, typed: bool) -> Decision {
    // A model call goes here: send the screenshot (and the goal) to a model
    // that answers actions, such as
    //   let actions = model.next_actions(GOAL, &screenshot_png).await?;
    // The rule below stands in for it, so the example runs without one.
    if typed {
        return Decision::Wait;
    }
    match changed(first, now) {
        // A window at least 100x50 appeared: click its middle and type.
        Some((x0, y0, x1, y1)) if x1 - x0 >= 100 && y1 - y0 >= 50 => {
            let (x, y) = (((x0 + x1) / 2) as i32, ((y0 + y1) / 2) as i32);
            Decision::Act(vec![
                Action::Click {
                    x: Some(x),
                    y: Some(y),
                    button: Button::Left,
                    count: 1,
                    modifiers: vec![],
                },
                Action::Type { text: format!("{LINE}\n") },
            ])
        }
        _ => Decision::Wait,
    }
}

async fn look(b: &BoxClient) -> anyhow::Result<Frame> {
    let shot = b.screenshot(0, &ScreenshotOptions::default()).await?;
    decode(&shot.bytes)
}

async fn run(b: &BoxClient) -> anyhow::Result<()> {
    let first = look(b).await?;
    // Something to work with: a terminal that writes what it is typed.
    let script = format!("stty -echo; exec cat > {FILE}");
    let argv = ["xterm", "-geometry", "60x10+200+150", "-e", "sh", "-c", &script];
    b.start_process(&ProcessStart {
        argv: Some(argv.iter().map(|s| (*s).to_owned()).collect()),
        ..ProcessStart::default()
    })
    .await?;

    let mut typed = false;
    for step in 1..=60 {
        let now = look(b).await?;
        match decide(&first, &now, typed) {
            Decision::Act(actions) => {
                println!("step {step}: act ({} actions)", actions.len());
                b.actions(0, actions).await?;
                typed = true;
            }
            Decision::Wait => {
                if typed {
                    let text = b.read_file(FILE).await.unwrap_or_default();
                    if String::from_utf8_lossy(&text).contains(LINE) {
                        println!("step {step}: done, {FILE} holds the line");
                        return Ok(());
                    }
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    }
    bail!("the goal was not reached in 60 steps")
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let client = Client::from_env();
    let request = CreateBox {
        spec: BoxSpec { browser: Some(false), ..BoxSpec::default() },
        ..CreateBox::default()
    };
    let info = client.create_box(&request, Some(600)).await?;
    if info.state != BoxState::Running {
        bail!("box {} did not come up: {:?}", info.id, info.reason);
    }
    println!("box {}", info.id);
    let outcome = run(&client.boxed(&info.id)).await;
    client.remove_box(&info.id).await?;
    outcome
}
