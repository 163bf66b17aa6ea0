//! What recording costs a box: two boxes of one profile, started alike and
//! left idle, one of them recording screen 0 (at the default frame rate),
//! measured over the same window: CPU from each container's cgroup usage
//! (nanoseconds of CPU over the window, as a percent of one core), memory as
//! `docker stats` shows it at the window's end, and the recording's bytes a
//! minute. Printed side by side with the ratio.

use std::time::Duration;

use anyhow::Context;
use holm_proto::guest::Profile;
use holm_proto::host::CreateBox;
use holm_proto::recording::{DEFAULT_FPS, RecordingStart};
use serde::Serialize;

use crate::{memory, server};

/// One profile's pair.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// `x11` or `wayland`.
    pub profile: String,
    /// Seconds CPU was measured over.
    pub window_secs: f64,
    /// The recording's frame rate.
    pub fps: u8,
    /// The box that does not record: percent of one core.
    pub cpu_idle_pct: f64,
    /// The box that records.
    pub cpu_recording_pct: f64,
    /// Recording over not, CPU.
    pub cpu_ratio: Option<f64>,
    /// The box that does not record, MiB (`docker stats`).
    pub memory_idle_mib: f64,
    /// The box that records.
    pub memory_recording_mib: f64,
    /// Recording over not, memory.
    pub memory_ratio: Option<f64>,
    /// The recording's file, bytes a minute.
    pub bytes_per_minute: u64,
}

/// Nanoseconds of CPU box `id`'s container used so far.
async fn cpu_ns(docker: &bollard::Docker, id: &str) -> anyhow::Result<u64> {
    let stats = memory::stats(docker, id).await?;
    stats
        .cpu_stats
        .and_then(|c| c.cpu_usage)
        .and_then(|u| u.total_usage)
        .context("the engine reported no CPU usage")
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| (a / b * 100.0).round() / 100.0)
}

/// Measures each `(profile, request)` pair in turn: `settle` after the
/// boxes start (and again after the recording starts), then `window`.
pub async fn run(
    server: &server::Server,
    docker: &bollard::Docker,
    requests: &[(Profile, &CreateBox)],
    (settle, window): (Duration, Duration),
    progress: &dyn Fn(&str),
) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for (profile, request) in requests {
        progress(&format!("recording: starting two {profile} boxes"));
        let (plain, recorded) =
            tokio::try_join!(crate::new_box(server, request), crate::new_box(server, request))?;
        tokio::time::sleep(settle).await;
        let rec = server.through_holmd(&recorded);
        let started = rec.start_recording(&RecordingStart::default()).await?;
        tokio::time::sleep(settle).await;
        progress(&format!("recording: measuring {} s", window.as_secs()));
        let before = tokio::try_join!(cpu_ns(docker, &plain), cpu_ns(docker, &recorded))?;
        let t = std::time::Instant::now();
        tokio::time::sleep(window).await;
        let after = tokio::try_join!(cpu_ns(docker, &plain), cpu_ns(docker, &recorded))?;
        let secs = t.elapsed().as_secs_f64();
        let mem =
            tokio::try_join!(memory::sample(docker, &plain), memory::sample(docker, &recorded))?;
        let stopped = rec.stop_recording(0).await?;
        let took = humantime::parse_rfc3339(stopped.ended_at.as_deref().unwrap_or_default())
            .ok()
            .zip(humantime::parse_rfc3339(&started.started_at).ok())
            .and_then(|(end, start)| end.duration_since(start).ok())
            .map_or(0.0, |d| d.as_secs_f64());
        #[allow(clippy::cast_precision_loss)]
        let pct = |a: u64, b: u64| round1(b.saturating_sub(a) as f64 / 1e9 / secs * 100.0);
        let (idle, recording) = (pct(before.0, after.0), pct(before.1, after.1));
        #[allow(
            clippy::cast_precision_loss,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss
        )]
        let per_minute = if took > 0.0 { (stopped.bytes as f64 / took * 60.0) as u64 } else { 0 };
        rows.push(Row {
            profile: profile.to_string(),
            window_secs: round1(secs),
            fps: started.fps,
            cpu_idle_pct: idle,
            cpu_recording_pct: recording,
            cpu_ratio: ratio(recording, idle),
            memory_idle_mib: mem.0.docker_stats_mib,
            memory_recording_mib: mem.1.docker_stats_mib,
            memory_ratio: ratio(mem.1.docker_stats_mib, mem.0.docker_stats_mib),
            bytes_per_minute: per_minute,
        });
        server.remove(&plain).await?;
        server.remove(&recorded).await?;
    }
    Ok(rows)
}

/// Prints the rows as a table.
pub fn print(rows: &[Row]) {
    holm_cli::output::line(&format!(
        "\nThe cost of recording (an idle box recording screen 0 at {DEFAULT_FPS} fps against one that is not, same window):"
    ));
    let cell = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v}x"));
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.profile.clone(),
                format!("{} s", r.window_secs),
                format!("{}% / {}%", r.cpu_idle_pct, r.cpu_recording_pct),
                cell(r.cpu_ratio),
                format!("{} / {} MiB", r.memory_idle_mib, r.memory_recording_mib),
                cell(r.memory_ratio),
                format!("{:.1} MiB", r.bytes_per_minute as f64 / 1048576.0),
            ]
        })
        .collect();
    holm_cli::output::table(
        &[
            "PROFILE",
            "WINDOW",
            "CPU (NOT / REC)",
            "CPU RATIO",
            "MEMORY (NOT / REC)",
            "MEM RATIO",
            "FILE / MIN",
        ],
        &table,
    );
}
