//! A fast per-thread generator for the suites' data and draws, and the
//! digit-group strings of sysbench's `c` and `pad` columns (its load). The
//! sysbench suite's events draw from sysbench's own generator instead
//! (`suite/sysbench/rng.rs`), value for value.

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

/// Fast per-thread generator.
pub struct Rng(SmallRng);

impl Rng {
    pub fn seeded(seed: u64) -> Self {
        Rng(SmallRng::seed_from_u64(seed))
    }

    /// Uniform integer in `[lo, hi]`.
    #[inline]
    pub fn uniform(&mut self, lo: i64, hi: i64) -> i64 {
        self.0.random_range(lo..=hi)
    }

    #[inline]
    pub fn unit(&mut self) -> f64 {
        self.0.random::<f64>()
    }

    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        self.0.random_range(0..n)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.random::<u64>()
    }

    /// Writes `groups` groups of 11 random decimal digits joined by `-` into
    /// `out` (cleared first): sysbench's `c` (10 groups, 119 characters) and
    /// `pad` (5 groups, 59 characters).
    pub fn digit_groups(&mut self, groups: usize, out: &mut String) {
        out.clear();
        for g in 0..groups {
            if g > 0 {
                out.push('-');
            }
            // 11 digits from one 64-bit draw (10^11 < 2^64 / 10^7, negligible bias).
            let mut v = self.next_u64() % 100_000_000_000;
            let mut digits = [b'0'; 11];
            for d in digits.iter_mut().rev() {
                *d += (v % 10) as u8;
                v /= 10;
            }
            // Digits are ASCII.
            out.push_str(std::str::from_utf8(&digits).unwrap_or_default());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_and_pad_have_sysbench_format() {
        let mut rng = Rng::seeded(1);
        let mut s = String::new();
        for (groups, len) in [(10, 119), (5, 59)] {
            for _ in 0..100 {
                rng.digit_groups(groups, &mut s);
                assert_eq!(s.len(), len);
                let parts: Vec<&str> = s.split('-').collect();
                assert_eq!(parts.len(), groups);
                assert!(
                    parts
                        .iter()
                        .all(|p| p.len() == 11 && p.bytes().all(|b| b.is_ascii_digit())),
                    "{s}"
                );
            }
        }
        // Digits vary: not a constant string.
        let mut a = String::new();
        rng.digit_groups(10, &mut a);
        rng.digit_groups(10, &mut s);
        assert_ne!(a, s);
    }
}
