//! Samples in milliseconds and their order statistics.

use std::time::Duration;

use serde::Serialize;

/// Milliseconds of each run of one operation.
#[derive(Debug, Clone, Default)]
pub struct Samples(Vec<f64>);

impl Samples {
    /// Adds one run.
    pub fn push(&mut self, d: Duration) {
        self.0.push(d.as_secs_f64() * 1000.0);
    }

    /// Adds one run given in milliseconds.
    pub fn push_ms(&mut self, ms: f64) {
        self.0.push(ms);
    }

    /// How many runs.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The `p`-th percentile (0 to 100), nearest rank; `None` without runs.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        if self.0.is_empty() {
            return None;
        }
        let mut v = self.0.clone();
        v.sort_by(f64::total_cmp);
        // Nearest rank: the smallest value with at least p% of runs at or below it.
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
        Some(v[rank.clamp(1, v.len()) - 1])
    }

    /// The median (the lower one of an even count's two middle runs).
    pub fn median(&self) -> Option<f64> {
        self.percentile(50.0)
    }

    /// What the report shows of these samples.
    pub fn summary(&self) -> Summary {
        Summary {
            n: self.len(),
            p50_ms: self.median().map(round),
            p95_ms: self.percentile(95.0).map(round),
            p99_ms: self.percentile(99.0).map(round),
            min_ms: self.0.iter().copied().reduce(f64::min).map(round),
            max_ms: self.0.iter().copied().reduce(f64::max).map(round),
        }
    }
}

/// Order statistics of one set of samples, in milliseconds.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Summary {
    /// How many runs.
    pub n: usize,
    /// The median.
    pub p50_ms: Option<f64>,
    /// The 95th percentile.
    pub p95_ms: Option<f64>,
    /// The 99th percentile.
    pub p99_ms: Option<f64>,
    /// The fastest run.
    pub min_ms: Option<f64>,
    /// The slowest run.
    pub max_ms: Option<f64>,
}

/// Rounds to three decimals (microseconds), for printing and JSON.
pub fn round(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(v: &[f64]) -> Samples {
        let mut s = Samples::default();
        for x in v {
            s.push_ms(*x);
        }
        s
    }

    #[test]
    fn nearest_rank_percentiles() {
        let s = of(&[5.0, 1.0, 4.0, 2.0, 3.0]);
        assert_eq!(s.median(), Some(3.0));
        assert_eq!(s.percentile(95.0), Some(5.0));
        assert_eq!(s.percentile(0.0), Some(1.0));
        let hundred = of(&(1..=100).map(f64::from).collect::<Vec<_>>());
        assert_eq!(hundred.percentile(95.0), Some(95.0));
        assert_eq!(hundred.percentile(99.0), Some(99.0));
        assert_eq!(hundred.median(), Some(50.0));
    }

    #[test]
    fn no_runs_no_statistics() {
        let s = Samples::default();
        assert_eq!(s.median(), None);
        let sum = s.summary();
        assert_eq!(sum.n, 0);
        assert_eq!(sum.p50_ms, None);
    }

    #[test]
    fn durations_are_milliseconds() {
        let mut s = Samples::default();
        s.push(Duration::from_micros(1500));
        assert_eq!(s.summary().p50_ms, Some(1.5));
    }
}
