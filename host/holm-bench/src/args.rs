//! `holm bench`'s arguments, and what one run does with them.

use clap::Args;
use serde::Serialize;

use super::latency;

/// `holm bench`'s arguments.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The shortest run that measures every row once or a few times (about a
    /// minute): for a smoke test, not for figures.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Where to write the report as JSON.
    #[arg(long, default_value = "holm-bench.json")]
    pub(crate) out: std::path::PathBuf,
    /// Runs of each latency pair (screenshots, clicks, act-then-see; typing
    /// runs half as many, holmd's overhead four times as many).
    #[arg(long)]
    pub(crate) samples: Option<usize>,
    /// Cold starts (the median of at least 5 is the figure).
    #[arg(long)]
    pub(crate) cold: Option<usize>,
    /// Concurrency: K boxes.
    #[arg(long)]
    pub(crate) boxes: Option<usize>,
    /// Concurrency: M clients on each box.
    #[arg(long)]
    pub(crate) clients: Option<usize>,
    /// Concurrency: T seconds.
    #[arg(long)]
    pub(crate) duration: Option<u64>,
    /// Seconds a box idles before its memory is read.
    #[arg(long)]
    pub(crate) idle: Option<u64>,
    /// Runs of each viewer pair (first frame, input to frame).
    #[arg(long)]
    pub(crate) viewer_samples: Option<usize>,
    /// Seconds each viewer bandwidth row (idle, busy screen) is measured.
    #[arg(long)]
    pub(crate) viewer_secs: Option<u64>,
    /// Measure only what grows with the number of boxes: 1, 10, 30 and 60
    /// boxes (1 and 2 with `--quick`; `--scale-counts`), each count started
    /// at once (see `scale.rs`). Writes its own report to `--out`.
    #[arg(long)]
    pub(crate) scale: bool,
    /// The counts `--scale` measures, comma-separated, in order.
    #[arg(long, value_name = "N,...", value_delimiter = ',', requires = "scale")]
    pub(crate) scale_counts: Option<Vec<usize>>,
    /// Measure only the X11 latency box (screenshots, clicks, typing,
    /// act-then-see, the busy screen, holmd's overhead) and the targets
    /// they decide: a few minutes, for working on one of those figures.
    /// Writes its own report to `--out`.
    #[arg(long, conflicts_with = "scale")]
    pub(crate) latency: bool,
    /// Measure only the viewer rows on an X11 box (first frame in Chromium
    /// and with the bench's RFB client, input to frame, bandwidth): a minute
    /// or two, for working on the live view. Writes its own report to
    /// `--out`.
    #[arg(long, conflicts_with_all = ["scale", "latency"])]
    pub(crate) viewers: bool,
    /// Measure only the concurrency phase: `--boxes` boxes, `--clients`
    /// clients on each for `--duration` seconds, on unchanged screens and
    /// on changing ones, with the CPU by program. Writes its own report to
    /// `--out`.
    #[arg(long, conflicts_with_all = ["scale", "latency", "viewers"])]
    pub(crate) throughput: bool,
    /// Measure only the cost of recording: an idle box recording against
    /// one that is not, on X11 and on Wayland. Writes its own report to
    /// `--out`.
    #[arg(long, conflicts_with_all = ["scale", "latency", "viewers"])]
    pub(crate) recording: bool,
    /// Measure only a box on the Kubernetes cluster this kubeconfig
    /// reaches: a claim from an agent-sandbox warm pool against a cold pod,
    /// beside a cold Docker box (`--cold` turns; a holm-bench built with
    /// `--features kubernetes`). Writes its own report to `--out`.
    #[arg(long, value_name = "KUBECONFIG", conflicts_with_all = ["scale", "latency", "recording"])]
    pub(crate) kubernetes: Option<std::path::PathBuf>,
    /// Measure only the warm pools: a create that claims a pooled box
    /// against a cold create, by turns (`--cold` turns), on Docker, podman
    /// and gVisor, X11 and Wayland boxes on each (X11 alone but on Docker
    /// with `--quick`), and the targets they decide. Writes its own report
    /// to `--out`.
    #[arg(long, conflicts_with_all = ["scale", "latency", "recording", "kubernetes"])]
    pub(crate) pool: bool,
    /// Measure only the runtime columns: Docker's cold starts, then each
    /// other runtime's (podman, gVisor's runsc), X11 and Wayland boxes
    /// (X11 alone with `--quick`), each stage by stage, and their idle
    /// memory; name runtimes (`--runtimes docker-runsc`,
    /// comma-separated) to measure only those. Writes its own report to
    /// `--out`.
    #[arg(
        long,
        value_name = "RUNTIME",
        num_args = 0..,
        value_delimiter = ',',
        conflicts_with_all = ["scale", "latency", "recording", "kubernetes", "pool"]
    )]
    pub(crate) runtimes: Option<Vec<String>>,
}

/// What one run does.
#[derive(Debug, Clone, Serialize)]
pub struct Config {
    /// `--quick`.
    pub quick: bool,
    /// Runs of each latency pair.
    pub latency: latency::Counts,
    /// Cold starts.
    pub cold_starts: usize,
    /// K.
    pub boxes: usize,
    /// M.
    pub clients_per_box: usize,
    /// T.
    pub duration_secs: u64,
    /// Idle seconds before memory is read.
    pub idle_secs: u64,
    /// Runs of each viewer pair.
    pub viewer_samples: usize,
    /// Seconds of each viewer bandwidth row.
    pub viewer_secs: u64,
    /// Seconds the cost of recording is measured over.
    pub recording_secs: u64,
}

impl Config {
    pub(crate) fn from_args(a: &BenchArgs) -> Self {
        let samples = a.samples.unwrap_or(if a.quick { 2 } else { 20 }).max(1);
        let mut latency = latency::Counts {
            screenshots: samples,
            clicks: if a.samples.is_none() && !a.quick { 50 } else { samples },
            types: (samples / 2).max(1),
            acts: samples,
            overhead: samples * 4,
            quiet: (samples / 7).clamp(1, 3),
        };
        if a.samples.is_none() && !a.quick {
            latency.overhead = 200;
        }
        Self {
            quick: a.quick,
            latency,
            cold_starts: a.cold.unwrap_or(if a.quick { 1 } else { 5 }),
            boxes: a.boxes.unwrap_or(if a.quick { 1 } else { 10 }),
            clients_per_box: a.clients.unwrap_or(if a.quick { 2 } else { 10 }),
            duration_secs: a.duration.unwrap_or(if a.quick { 2 } else { 60 }),
            idle_secs: a.idle.unwrap_or(if a.quick { 2 } else { 10 }),
            viewer_samples: a.viewer_samples.unwrap_or(if a.quick { 2 } else { 10 }).max(1),
            viewer_secs: a.viewer_secs.unwrap_or(if a.quick { 2 } else { 5 }).max(1),
            recording_secs: if a.quick { 3 } else { 30 },
        }
    }
}
