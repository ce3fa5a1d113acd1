//! Response times of one kind of statement: a histogram for the percentiles
//! and exact counts in the reference's buckets (§4.8), so a statement of
//! 257 µs is never counted under "up to 256 µs" by the histogram's rounding.

use hdrhistogram::Histogram;

use super::results::RT_BUCKETS_US;
use crate::harness::measure::new_histogram;

/// Buckets of [`RT_BUCKETS_US`], then one beyond the last bound.
pub const RT_BUCKETS: usize = RT_BUCKETS_US.len() + 1;

#[derive(Clone, Debug)]
pub struct RtHist {
    pub hist: Histogram<u64>,
    pub buckets: [u64; RT_BUCKETS],
}

impl Default for RtHist {
    fn default() -> Self {
        RtHist {
            hist: new_histogram(),
            buckets: [0; RT_BUCKETS],
        }
    }
}

impl RtHist {
    /// One statement that took `ns` nanoseconds.
    pub fn record(&mut self, ns: u64) {
        self.hist.saturating_record(ns.max(1));
        let b = RT_BUCKETS_US
            .iter()
            .position(|&us| ns <= us * 1000)
            .unwrap_or(RT_BUCKETS - 1);
        self.buckets[b] += 1;
    }

    pub fn add(&mut self, other: &RtHist) {
        let _ = self.hist.add(&other.hist);
        for (a, b) in self.buckets.iter_mut().zip(other.buckets) {
            *a += b;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    pub fn len(&self) -> u64 {
        self.hist.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exact_at_their_bounds() {
        let mut h = RtHist::default();
        for ns in [256_000, 256_001, 1_000_000, 16_000_000_000, 16_000_000_001] {
            h.record(ns);
        }
        assert_eq!(h.buckets, [1, 2, 0, 0, 0, 0, 0, 0, 1, 1]);
        let mut all = RtHist::default();
        all.add(&h);
        all.add(&h);
        assert_eq!(all.buckets[1], 4);
        assert_eq!(all.len(), 10);
    }
}
