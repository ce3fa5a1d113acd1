//! Change points of a series by E-divisive means (Matteson and James, "A
//! Nonparametric Approach for Multiple Change Point Analysis of Multivariate
//! Data", 2014), the method Otava (formerly Hunter) applies to benchmark
//! histories: split the series where the energy divergence between the two
//! sides is largest, keep the split when a permutation test says such a
//! divergence is unlikely without a change, and repeat within the pieces.
//!
//! The divergence of X (m values) and Y (k values), with exponent α = 1:
//! Q = mk/(m + k) · (2/(mk) Σ|xᵢ − yⱼ| − Σ_{i<i'}|xᵢ − xᵢ'|/C(m,2) − Σ_{j<j'}|yⱼ − yⱼ'|/C(k,2)),
//! a within-side term left out for a side of one value.

use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;

/// How [`e_divisive`] decides.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// A split is kept when its permutation p-value is at most this.
    pub max_p: f64,
    /// Permutations per test (the smallest p-value is 1 / (permutations + 1)).
    pub permutations: usize,
    /// The fewest values a piece may have (1: the newest run alone can start a change).
    pub min_size: usize,
    /// Seed of the permutations, so that a report is reproducible.
    pub seed: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_p: 0.05,
            permutations: 999,
            min_size: 1,
            seed: 0x5eed_0016,
        }
    }
}

/// One change point: the series changes from `index` on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Split {
    /// The first value after the change (0-based).
    pub index: usize,
    /// Its permutation p-value when it was found.
    pub p: f64,
}

/// Sums of distances from a value to a set of values: a Fenwick tree over
/// the values' ranks in their piece, of counts and sums. Adding, removing
/// and asking cost O(log n), so a piece's scan is O(n log n) rather than
/// the O(n²) of summing every pair: 2,000 runs of history took 46 s in
/// the permutation tests, almost all of it here.
struct RankSums {
    count: Vec<f64>,
    sum: Vec<f64>,
    total_count: f64,
    total_sum: f64,
}

impl RankSums {
    fn new(n: usize) -> Self {
        RankSums {
            count: vec![0.0; n + 1],
            sum: vec![0.0; n + 1],
            total_count: 0.0,
            total_sum: 0.0,
        }
    }

    /// Adds (`sign` 1) or removes (-1) value `v` of rank `r`.
    fn add(&mut self, r: usize, v: f64, sign: f64) {
        self.total_count += sign;
        self.total_sum += sign * v;
        let mut i = r + 1;
        while i < self.count.len() {
            self.count[i] += sign;
            self.sum[i] += sign * v;
            i += i & i.wrapping_neg();
        }
    }

    /// Σ |v − x| over the set, for `v` of rank `r` (not in the set). Values
    /// of lower rank are at most `v`; equal values add 0 on either side.
    fn distance(&self, r: usize, v: f64) -> f64 {
        let (mut c, mut s) = (0.0, 0.0);
        let mut i = r;
        while i > 0 {
            c += self.count[i];
            s += self.sum[i];
            i &= i - 1;
        }
        (c * v - s) + ((self.total_sum - s) - (self.total_count - c) * v)
    }
}

/// The ranks of `z` within each piece between `bounds`: `rank[i]` orders
/// `z[i]` among `z[w0..w1]` (ties broken by position).
fn ranks(z: &[f64], bounds: &[usize]) -> Vec<usize> {
    let mut rank = vec![0; z.len()];
    for w in bounds.windows(2) {
        let mut idx: Vec<usize> = (w[0]..w[1]).collect();
        idx.sort_by(|&a, &b| z[a].total_cmp(&z[b]));
        for (r, i) in idx.into_iter().enumerate() {
            rank[i] = r;
        }
    }
    rank
}

/// The largest divergence over the splits of `z[s..e]` (`rank`: each
/// value's rank in the piece, [`ranks`]): `(index, Q)`, or `None` when the
/// piece is too short to split.
fn best_split(z: &[f64], rank: &[usize], s: usize, e: usize, min: usize) -> Option<(usize, f64)> {
    let min = min.max(1);
    if e - s < 2 * min {
        return None;
    }
    let n = e - s;
    // Left = [s, s + 1), right = [s + 1, e).
    let mut left = RankSums::new(n);
    let mut right = RankSums::new(n);
    let mut within_right = 0.0;
    for j in s + 1..e {
        within_right += right.distance(rank[j], z[j]);
        right.add(rank[j], z[j], 1.0);
    }
    let mut cross = right.distance(rank[s], z[s]);
    left.add(rank[s], z[s], 1.0);
    let mut within_left = 0.0;
    let pairs = |n: usize| (n * (n - 1) / 2) as f64;
    let mut best: Option<(usize, f64)> = None;
    for tau in s + 1..e {
        let (m, k) = ((tau - s) as f64, (e - tau) as f64);
        if tau - s >= min && e - tau >= min {
            let mut div = 2.0 * cross / (m * k);
            if tau - s >= 2 {
                div -= within_left / pairs(tau - s);
            }
            if e - tau >= 2 {
                div -= within_right / pairs(e - tau);
            }
            let q = m * k / (m + k) * div;
            if best.is_none_or(|(_, b)| q > b) {
                best = Some((tau, q));
            }
        }
        if tau + 1 < e {
            // z[tau] moves from the right side to the left.
            right.add(rank[tau], z[tau], -1.0);
            let to_left = left.distance(rank[tau], z[tau]);
            let to_right = right.distance(rank[tau], z[tau]);
            left.add(rank[tau], z[tau], 1.0);
            cross += to_right - to_left;
            within_left += to_left;
            within_right -= to_right;
        }
    }
    best
}

/// The best split over all `pieces` (boundaries, ascending, first 0 and last
/// `z.len()`): `(index, Q)`.
fn best_over(z: &[f64], rank: &[usize], bounds: &[usize], min: usize) -> Option<(usize, f64)> {
    bounds
        .windows(2)
        .filter_map(|w| best_split(z, rank, w[0], w[1], min))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// How far apart two divergences may be and still be one, relative to the
/// largest value of the series times its length squared: the scan's running
/// sums of f64 drift by a few ulps per step, over n steps of sums of n
/// values. For a real step of δ between two halves, Q ≈ nδ/2, so this
/// hides only steps under 2e-10·n of the values (4e-7 at 2,000 runs).
const ROUNDING: f64 = 1e-10;

/// The largest magnitude in `z` (1 for an empty or all-zero series).
fn scale(z: &[f64]) -> f64 {
    let m = z.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if m > 0.0 { m } else { 1.0 }
}

/// The change points of `z`, in the order of the series. Each round takes
/// the strongest split of any piece and tests it: the values are shuffled
/// within each piece `permutations` times, and p = (1 + the shuffles whose
/// strongest split is at least as strong) / (1 + permutations). The first
/// split with p above `max_p` ends the search (its shuffles stop as soon as
/// p must exceed `max_p`).
pub fn e_divisive(z: &[f64], settings: Settings) -> Vec<Split> {
    let mut rng = SmallRng::seed_from_u64(settings.seed);
    let mut bounds = vec![0, z.len()];
    let mut found = Vec::new();
    loop {
        let rank = ranks(z, &bounds);
        let Some((index, q)) = best_over(z, &rank, &bounds, settings.min_size) else {
            break;
        };
        // A divergence of rounding size is none: a piece of equal values
        // (a directory of copied runs) gives Q of 1e-13 rather than 0, and
        // its shuffles, summed in another order, a little less, so each
        // such "change" passed the test and the search went on split by
        // split, 999 shuffles each: history over 200 tied runs took 160 s.
        let n = z.len() as f64;
        let tolerance = ROUNDING * scale(z) * n * n;
        if q <= tolerance {
            break;
        }
        // A shuffle within a piece keeps each value's rank in it: values
        // and ranks move together.
        let mut shuffled: Vec<(f64, usize)> = z.iter().copied().zip(rank).collect();
        let (mut zs, mut rs) = (vec![0.0; z.len()], vec![0; z.len()]);
        let mut as_strong = 0usize;
        for _ in 0..settings.permutations {
            for w in bounds.windows(2) {
                shuffled[w[0]..w[1]].shuffle(&mut rng);
            }
            for (i, &(v, r)) in shuffled.iter().enumerate() {
                zs[i] = v;
                rs[i] = r;
            }
            if best_over(&zs, &rs, &bounds, settings.min_size)
                .is_some_and(|(_, p)| p >= q - tolerance)
            {
                as_strong += 1;
                // p can only exceed max_p from here: the split is rejected.
                if (1 + as_strong) as f64 > settings.max_p * (1 + settings.permutations) as f64 {
                    break;
                }
            }
        }
        let p = (1 + as_strong) as f64 / (1 + settings.permutations) as f64;
        if p > settings.max_p {
            break;
        }
        found.push(Split { index, p });
        bounds.push(index);
        bounds.sort_unstable();
    }
    found.sort_by_key(|s| s.index);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The divergence straight from its definition, to check the scan's running sums.
    fn q_direct(x: &[f64], y: &[f64]) -> f64 {
        let (m, k) = (x.len() as f64, y.len() as f64);
        let mean_pairs = |v: &[f64]| {
            if v.len() < 2 {
                return 0.0;
            }
            let mut s = 0.0;
            for i in 0..v.len() {
                for j in i + 1..v.len() {
                    s += (v[i] - v[j]).abs();
                }
            }
            s / (v.len() * (v.len() - 1) / 2) as f64
        };
        let cross: f64 = x
            .iter()
            .flat_map(|a| y.iter().map(move |b| (a - b).abs()))
            .sum();
        m * k / (m + k) * (2.0 * cross / (m * k) - mean_pairs(x) - mean_pairs(y))
    }

    #[test]
    fn the_scan_finds_the_split_the_definition_ranks_highest() {
        let z = [1.0, 1.2, 0.9, 1.1, 3.0, 2.8, 3.1, 1.0, 3.2];
        let whole = ranks(&z, &[0, z.len()]);
        let (tau, q) = best_split(&z, &whole, 0, z.len(), 1).unwrap();
        let direct: Vec<f64> = (1..z.len()).map(|t| q_direct(&z[..t], &z[t..])).collect();
        let best = direct.iter().cloned().fold(f64::MIN, f64::max);
        assert!((q - best).abs() < 1e-9, "{q} vs {best}");
        assert!((direct[tau - 1] - q).abs() < 1e-9);
        // A sub-piece and a minimum size.
        let piece = ranks(&z, &[0, 2, 8, z.len()]);
        let (tau2, q2) = best_split(&z, &piece, 2, 8, 2).unwrap();
        let d2: Vec<(usize, f64)> = (4..=6).map(|t| (t, q_direct(&z[2..t], &z[t..8]))).collect();
        let b2 = d2.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
        assert_eq!(tau2, b2.0);
        assert!((q2 - b2.1).abs() < 1e-9);
        assert!(best_split(&z, &ranks(&z, &[0, 3, z.len()]), 0, 3, 2).is_none());
    }

    #[test]
    fn the_ranked_scan_matches_the_definition_with_ties_and_in_pieces() {
        // Values with many ties, in three pieces.
        let z: Vec<f64> = (0..90)
            .map(|i| ((i * 37 % 11) / 3) as f64 * 0.5 + (i / 60) as f64)
            .collect();
        let bounds = [0, 25, 61, 90];
        let rank = ranks(&z, &bounds);
        for w in bounds.windows(2) {
            let (s, e) = (w[0], w[1]);
            let (tau, q) = best_split(&z, &rank, s, e, 1).unwrap();
            let direct: Vec<(usize, f64)> = (s + 1..e)
                .map(|t| (t, q_direct(&z[s..t], &z[t..e])))
                .collect();
            let best = direct.iter().map(|d| d.1).fold(f64::MIN, f64::max);
            assert!(
                (q - best).abs() < 1e-9 * best.abs().max(1.0),
                "{s}..{e}: {q} vs {best}"
            );
            let at = direct.iter().find(|d| d.0 == tau).unwrap().1;
            assert!(
                (at - q).abs() < 1e-9 * q.abs().max(1.0),
                "{s}..{e}: tau {tau}"
            );
        }
    }

    #[test]
    fn equal_values_have_no_change_point_and_cost_one_scan() {
        // Copies of one run: every value tied. Rounding made each split a
        // "change" with p = 0.001 before, and found one per value.
        for v in [
            85161.50545799093,
            1717.0994792438596,
            2911.054194610765,
            0.1,
        ] {
            let z = vec![v; 300];
            let t = std::time::Instant::now();
            assert_eq!(e_divisive(&z, Settings::default()), Vec::new(), "{v}");
            // One scan, no shuffles: well under the time of a few thousand.
            assert!(t.elapsed() < std::time::Duration::from_secs(2), "{v}");
        }
        // A step between two tied levels is still found.
        let mut z = vec![100.0; 150];
        z.extend(vec![80.0; 150]);
        let s = e_divisive(&z, Settings::default());
        assert_eq!(s.iter().map(|s| s.index).collect::<Vec<_>>(), [150]);
    }

    #[test]
    fn a_clear_step_is_one_change_point_and_flat_noise_none() {
        let z: Vec<f64> = (0..30)
            .map(|i| if i < 20 { 0.0 } else { -0.1 } + 0.01 * ((i * 7 % 5) as f64 - 2.0))
            .collect();
        let found = e_divisive(&z, Settings::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].index, 20);
        assert!(found[0].p <= 0.01, "{found:?}");
        let flat = vec![1.0; 30];
        assert!(e_divisive(&flat, Settings::default()).is_empty());
        assert!(e_divisive(&[], Settings::default()).is_empty());
        assert!(e_divisive(&[1.0], Settings::default()).is_empty());
    }
}
