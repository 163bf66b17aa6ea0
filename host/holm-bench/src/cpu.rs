//! CPU time by program over a phase, read from `/proc`: where a phase's
//! CPU went (every box's Chromium, Xvfb, guest, the engine's proxies, and
//! this process split into holmd's threads and the bench's own).
//!
//! The bench runs as root in the host's process namespace, so it sees the
//! boxes' processes. A process that starts and ends inside the phase is
//! not counted, and one alive at the start is counted from then: the
//! figures are the CPU of the processes alive at the end, over the phase.

use std::collections::HashMap;
use std::time::Instant;

use serde::Serialize;

/// `/proc` counts in USER_HZ, 100 on every Linux ABI.
const TICKS_PER_SEC: f64 = 100.0;
/// The name the bench's holmd gives its runtime's threads (`server.rs`).
const HOLMD_THREADS: &str = "holmd-worker";

/// One program's share of a phase.
#[derive(Debug, Clone, Serialize)]
pub struct ProgramCpu {
    /// The program's name (`comm`), or `holmd (in holm-bench)` and
    /// `holm-bench clients` for this process's two halves.
    pub program: String,
    /// How many processes of that name were counted.
    pub processes: usize,
    /// Its CPU over the phase, in percent of one CPU.
    pub cpu_percent: f64,
    /// Its share of all the CPU counted, percent.
    pub share_percent: f64,
}

/// The CPU counters at one moment.
pub struct Snapshot {
    at: Instant,
    /// (pid, thread) → (name, ticks).
    ticks: HashMap<(u32, u32), (String, u64)>,
}

/// `(comm, utime + stime)` of one `/proc/.../stat`.
fn stat(path: &std::path::Path) -> Option<(String, u64)> {
    let s = std::fs::read_to_string(path).ok()?;
    let (head, rest) = s.rsplit_once(')')?;
    let comm = head.split_once('(')?.1.to_owned();
    let f: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at the 3rd field (state): utime is field 14, stime 15.
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some((comm, ticks))
}

/// Reads every process's counters (this process's thread by thread).
pub fn snapshot() -> Snapshot {
    let me = std::process::id();
    let mut ticks = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            let tasks = std::fs::read_dir(entry.path().join("task")).into_iter().flatten();
            for task in tasks.flatten() {
                let Some(tid) = task.file_name().to_str().and_then(|n| n.parse::<u32>().ok())
                else {
                    continue;
                };
                if let Some((comm, t)) = stat(&task.path().join("stat")) {
                    let name = if comm.starts_with(HOLMD_THREADS) {
                        "holmd (in holm-bench)"
                    } else {
                        "holm-bench clients"
                    };
                    ticks.insert((pid, tid), (name.to_owned(), t));
                }
            }
        } else if let Some(v) = stat(&entry.path().join("stat")) {
            ticks.insert((pid, 0), v);
        }
    }
    Snapshot { at: Instant::now(), ticks }
}

/// The CPU by program between `before` and now, busiest first; programs
/// under 0.5% of one CPU are left out.
pub fn since(before: &Snapshot) -> Vec<ProgramCpu> {
    let after = snapshot();
    let secs = after.at.duration_since(before.at).as_secs_f64().max(1e-3);
    let mut by: HashMap<String, (usize, u64)> = HashMap::new();
    for (key, (name, t)) in &after.ticks {
        let start = before.ticks.get(key).map_or(0, |(_, t0)| *t0);
        let e = by.entry(name.clone()).or_default();
        e.0 += 1;
        e.1 += t.saturating_sub(start);
    }
    #[allow(clippy::cast_precision_loss)]
    let total: f64 = by.values().map(|(_, t)| *t as f64).sum::<f64>().max(1.0);
    #[allow(clippy::cast_precision_loss)]
    let mut out: Vec<ProgramCpu> = by
        .into_iter()
        .map(|(program, (processes, t))| ProgramCpu {
            program,
            processes,
            cpu_percent: (t as f64 / TICKS_PER_SEC / secs * 1000.0).round() / 10.0,
            share_percent: (t as f64 / total * 1000.0).round() / 10.0,
        })
        .filter(|p| p.cpu_percent >= 0.5)
        .collect();
    out.sort_by(|a, b| b.cpu_percent.total_cmp(&a.cpu_percent));
    out
}
