//! A saturated machine, for tests whose behaviour must not depend on an idle
//! one: one busy loop per CPU, started and stopped by the test.
//!
//! This file uses only `std`, so test suites that cannot depend on the
//! harness (the guest's, which is built for the box) include it by path.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Busy loops on every CPU. They stop when this drops, or by themselves
/// after the limit given at start, whichever comes first, so a test that
/// hangs or leaks the handle cannot keep the machine busy.
#[derive(Debug)]
pub struct Load {
    stop: Arc<AtomicBool>,
    loops: Vec<JoinHandle<()>>,
}

impl Load {
    /// Starts one busy loop per CPU this process may run on, each ending
    /// after `limit` at most.
    pub fn saturate(limit: Duration) -> Self {
        let cpus = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
        Self::start(cpus, limit)
    }

    /// Starts `count` busy loops, each ending after `limit` at most.
    pub fn start(count: usize, limit: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let loops = (0..count)
            .map(|i| {
                let stop = Arc::clone(&stop);
                std::thread::Builder::new()
                    .name(format!("busy-{i}"))
                    .spawn(move || spin(&stop, Instant::now() + limit))
                    .expect("start a busy loop")
            })
            .collect();
        Self { stop, loops }
    }

    /// How many loops were started.
    pub fn loops(&self) -> usize {
        self.loops.len()
    }

    /// Whether every loop has ended (by reaching its limit).
    pub fn ended(&self) -> bool {
        self.loops.iter().all(JoinHandle::is_finished)
    }
}

fn spin(stop: &AtomicBool, until: Instant) {
    let mut n: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        // Check the clock now and then, not on every turn.
        for _ in 0..100_000 {
            n = std::hint::black_box(n.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
        if Instant::now() >= until {
            return;
        }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for l in self.loops.drain(..) {
            let _ = l.join();
        }
    }
}
