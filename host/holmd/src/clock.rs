//! Time, behind a trait, so lifetime rules are tested without waiting: the
//! service reads every deadline through a [`Clock`]. The server runs on
//! [`SystemClock`]; tests drive a [`ManualClock`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Wall-clock time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now.
    fn now(&self) -> SystemTime;

    /// Now, in whole seconds since the epoch.
    fn now_secs(&self) -> u64 {
        self.now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
    }
}

/// The system's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that moves only when told, for tests.
#[derive(Debug)]
pub struct ManualClock {
    millis: AtomicU64,
}

impl ManualClock {
    /// A clock at `start`.
    pub fn new(start: SystemTime) -> Self {
        let millis = start.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        Self { millis: AtomicU64::new(u64::try_from(millis).unwrap_or(u64::MAX)) }
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        let by = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        self.millis.fetch_add(by, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.millis.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told() {
        let c = ManualClock::new(UNIX_EPOCH + Duration::from_secs(1000));
        assert_eq!(c.now_secs(), 1000);
        c.advance(Duration::from_millis(1500));
        assert_eq!(c.now_secs(), 1001);
        assert!(SystemClock.now_secs() > 1_700_000_000);
    }
}
