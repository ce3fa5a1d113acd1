//! Random values drawn the way sysbench draws them: uniform ids, the
//! rejection-inversion Zipfian (theta 0.8 by default), Pareto, and the
//! digit-group strings of the `c` and `pad` columns.

use crate::error::usage;
use rand::distr::Distribution;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use rand_distr::Zipf;

/// The distribution of ids and `k` values (`--rand-type`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RandType {
    Uniform,
    /// Zipfian with exponent theta; value 1 is the hottest.
    Zipfian,
    /// Pareto with h = 0.2: about 80 % of values in the lowest 20 % of the range.
    Pareto,
}

impl std::str::FromStr for RandType {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> Result<Self, crate::error::Error> {
        match s {
            "uniform" => Ok(RandType::Uniform),
            "zipfian" => Ok(RandType::Zipfian),
            "pareto" => Ok(RandType::Pareto),
            _ => Err(usage(format!(
                "unknown --rand-type '{s}' (expected uniform, zipfian or pareto)"
            ))),
        }
    }
}

pub const ZIPFIAN_THETA: f64 = 0.8;
const PARETO_H: f64 = 0.2;

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

/// Draws ids in `[1, n]` with a fixed distribution.
pub enum IdDist {
    Uniform { n: i64 },
    Zipf { n: i64, zipf: Zipf<f64> },
    Pareto { n: i64, power: f64 },
}

impl IdDist {
    pub fn new(kind: RandType, n: i64) -> Self {
        let n = n.max(1);
        match kind {
            RandType::Uniform => IdDist::Uniform { n },
            RandType::Zipfian => match Zipf::new(n as f64, ZIPFIAN_THETA) {
                Ok(zipf) => IdDist::Zipf { n, zipf },
                Err(_) => IdDist::Uniform { n },
            },
            RandType::Pareto => IdDist::Pareto {
                n,
                power: PARETO_H.ln() / (1.0 - PARETO_H).ln(),
            },
        }
    }

    /// An id in `[1, n]`. The uniform draw is inlined into the caller's
    /// event; the skewed ones are a call (`rqps bench harness` under
    /// callgrind: the call's entry and exit were 16 of 28 instructions per
    /// point query).
    #[inline(always)]
    pub fn draw(&self, rng: &mut Rng) -> i64 {
        match self {
            IdDist::Uniform { n } => rng.uniform(1, *n),
            _ => self.draw_skewed(rng),
        }
    }

    #[inline(never)]
    fn draw_skewed(&self, rng: &mut Rng) -> i64 {
        match self {
            IdDist::Uniform { n } => rng.uniform(1, *n),
            IdDist::Zipf { n, zipf } => (zipf.sample(&mut rng.0) as i64).clamp(1, *n),
            IdDist::Pareto { n, power } => {
                (1 + (*n as f64 * rng.unit().powf(*power)) as i64).min(*n)
            }
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

    #[test]
    fn uniform_covers_the_range_and_stays_inside() {
        let mut rng = Rng::seeded(2);
        let d = IdDist::new(RandType::Uniform, 10);
        let mut seen = [0u32; 11];
        for _ in 0..10_000 {
            let v = d.draw(&mut rng);
            assert!((1..=10).contains(&v));
            seen[v as usize] += 1;
        }
        for (i, &c) in seen.iter().enumerate().skip(1) {
            assert!(
                (800..1200).contains(&c),
                "value {i} drawn {c} times of 10000"
            );
        }
    }

    #[test]
    fn zipfian_is_skewed_with_theta_0_8() {
        let mut rng = Rng::seeded(3);
        let n = 1000;
        let d = IdDist::new(RandType::Zipfian, n);
        let mut counts = vec![0u32; n as usize + 1];
        let draws = 200_000;
        for _ in 0..draws {
            let v = d.draw(&mut rng);
            assert!((1..=n).contains(&v));
            counts[v as usize] += 1;
        }
        // P(1)/P(2) = 2^0.8 = 1.74 for a Zipfian of exponent 0.8.
        let ratio = counts[1] as f64 / counts[2] as f64;
        assert!((1.55..1.95).contains(&ratio), "P(1)/P(2) = {ratio}");
        // id 1 is the hottest, and the first 10 % of ids get far more than 10 % of draws.
        assert!(counts[1] > *counts[2..].iter().max().unwrap());
        let head: u32 = counts[1..=100].iter().sum();
        assert!(
            head as f64 / draws as f64 > 0.4,
            "head share {}",
            head as f64 / draws as f64
        );
    }

    #[test]
    fn pareto_puts_most_values_low() {
        let mut rng = Rng::seeded(4);
        let d = IdDist::new(RandType::Pareto, 1000);
        let low = (0..10_000).filter(|_| d.draw(&mut rng) <= 200).count();
        assert!((7_500..8_500).contains(&low), "{low}");
    }
}
