//! What long work shows while it runs, when standard error is a terminal
//! and `--json` is not given: the image's build steps with a bar, then the
//! box's stages (image, container, desktop, browser), each ticked off with
//! its time. Standard output keeps only the result (the id). Otherwise
//! nothing here prints, and the commands behave as they always did.

use std::io::Write;
use std::time::Instant;

use futures_util::StreamExt;
use holm_client::Client;
use holm_proto::host::{BoxInfo, BoxState};
use holm_proto::progress::{BoxEvent, Stage, build_step};

/// The bar's width in cells.
const BAR: usize = 24;

/// A live display of progress on standard error.
#[derive(Debug)]
pub struct Progress {
    on: bool,
    /// The stage being shown and when it began.
    stage: Option<(String, Instant)>,
    /// The build's step, as `(step, steps)`.
    step: Option<(u32, u32)>,
    /// The newest line of the stage.
    line: String,
}

impl Progress {
    /// A display, drawn only when standard error is a terminal and the
    /// output is not JSON.
    pub fn new(json: bool) -> Self {
        let on = !json && rustix::termios::isatty(std::io::stderr());
        Self { on, stage: None, step: None, line: String::new() }
    }

    /// Whether it draws.
    pub fn on(&self) -> bool {
        self.on
    }

    /// Shows a box's event (the final `box` event is the caller's).
    pub fn event(&mut self, e: &BoxEvent) {
        match e {
            BoxEvent::Stage { stage, message } => self.begin(stage.as_str(), message),
            BoxEvent::Build { message, step, steps } => {
                if let (Some(a), Some(b)) = (step, steps) {
                    self.step = Some((*a, *b));
                }
                self.line.clone_from(message);
                self.draw();
            }
            BoxEvent::Box { .. } => {}
        }
    }

    /// Shows a line of an image build, outside a box's making.
    pub fn build_line(&mut self, line: &str) {
        if self.stage.is_none() {
            self.begin(Stage::Image.as_str(), line);
        }
        if let Some(s) = build_step(line) {
            self.step = Some(s);
        }
        line.clone_into(&mut self.line);
        self.draw();
    }

    /// Ticks off the stage shown and begins `name`.
    fn begin(&mut self, name: &str, message: &str) {
        self.end_stage(true);
        self.stage = Some((name.to_owned(), Instant::now()));
        self.step = None;
        message.clone_into(&mut self.line);
        self.draw();
    }

    /// Ticks off (or crosses out) the stage shown, on a line of its own.
    fn end_stage(&mut self, ok: bool) {
        let Some((name, at)) = self.stage.take() else { return };
        if !self.on {
            return;
        }
        let mark = if ok { "✓" } else { "✗" };
        let secs = at.elapsed().as_secs_f64();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{mark} {name:<9} {secs:>6.1} s\r\n");
        let _ = err.flush();
    }

    /// The work ended: ticks off the last stage (`ok`) or crosses it out.
    pub fn finish(&mut self, ok: bool) {
        self.end_stage(ok);
    }

    /// Redraws the live line (its clock moves on).
    pub fn draw(&self) {
        let Some((name, at)) = &self.stage else { return };
        if !self.on {
            return;
        }
        let cols = rustix::termios::tcgetwinsize(std::io::stderr())
            .map_or(80, |w| usize::from(w.ws_col))
            .max(40);
        let mut text = format!("… {name:<9} {:>6.1} s ", at.elapsed().as_secs_f64());
        if let Some((step, steps)) = self.step {
            let filled = (BAR * step as usize) / (steps.max(1) as usize);
            text.push('[');
            text.push_str(&"█".repeat(filled));
            text.push_str(&"░".repeat(BAR - filled));
            text.push_str(&format!("] {step}/{steps} "));
        }
        text.push_str(self.line.trim());
        let shown: String = text.chars().filter(|c| !c.is_control()).take(cols - 1).collect();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{shown}");
        let _ = err.flush();
    }
}

impl Drop for Progress {
    /// A display dropped mid-stage (a failure already on its way out)
    /// leaves no half-drawn line.
    fn drop(&mut self) {
        if self.on && self.stage.is_some() {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

/// Shows a box's progress until it runs, fails, or `wait` seconds pass, and
/// answers the box as it is then. A server without progress is waited on
/// as before.
pub async fn follow_box(
    client: &Client,
    id: &str,
    wait: u64,
    progress: &mut Progress,
) -> anyhow::Result<BoxInfo> {
    match client.progress(id, wait).await {
        Ok(events) => {
            let mut events = std::pin::pin!(events);
            let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
            loop {
                let event = tokio::select! {
                    e = events.next() => e,
                    _ = tick.tick() => {
                        progress.draw();
                        continue;
                    }
                };
                let Some(event) = event else { break };
                match event {
                    Ok(BoxEvent::Box { info }) => {
                        progress.finish(info.state == BoxState::Running);
                        return Ok(*info);
                    }
                    Ok(e) => progress.event(&e),
                    // The stream broke: wait for the box the old way.
                    Err(_) => break,
                }
            }
        }
        Err(e) if e.api().is_some_and(|a| a.code == holm_proto::ErrorCode::RouteNotFound) => {}
        Err(e) => {
            progress.finish(false);
            return Err(e.into());
        }
    }
    let info = client.get_box(id, Some((BoxState::Running, wait))).await?;
    progress.finish(info.state == BoxState::Running);
    Ok(info)
}
