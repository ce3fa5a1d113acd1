//! The random parts of LinkBench (spec A2–A4): the operation mix, Zipf ids
//! spread by a fixed permutation, the out-degree distribution (shipped as
//! data in `outdegree.dat`), lognormal payload sizes and their bytes.

use crate::suite::rand::Rng;

/// The ten operations, in the order of the default mix.
pub const OPS: [&str; 10] = [
    "GET_LINKS_LIST",
    "GET_NODE",
    "ADD_LINK",
    "UPDATE_LINK",
    "UPDATE_NODE",
    "COUNT_LINK",
    "DELETE_LINK",
    "ADD_NODE",
    "DELETE_NODE",
    "MULTIGET_LINK",
];

/// The default mix, percent, in the order of [`OPS`] (spec A3).
pub const MIX: [f64; 10] = [
    50.7119145, 12.9326683, 8.9886601, 8.0122125, 7.3664370, 4.8863567, 2.9907664, 2.5732789,
    1.0115914, 0.5261142,
];

/// Indexes into [`OPS`].
pub const GET_LINKS_LIST: usize = 0;
pub const GET_NODE: usize = 1;
pub const ADD_LINK: usize = 2;
pub const UPDATE_LINK: usize = 3;
pub const UPDATE_NODE: usize = 4;
pub const COUNT_LINK: usize = 5;
pub const DELETE_LINK: usize = 6;
pub const ADD_NODE: usize = 7;
pub const DELETE_NODE: usize = 8;
pub const MULTIGET_LINK: usize = 9;

/// The cumulative walk of the mix on r = U[0, total).
#[derive(Clone, Debug)]
pub struct Mix {
    cumulative: [f64; 10],
}

impl Mix {
    pub fn new(weights: &[f64; 10]) -> Self {
        let mut cumulative = [0.0; 10];
        let mut sum = 0.0;
        for (c, w) in cumulative.iter_mut().zip(weights) {
            sum += w;
            *c = sum;
        }
        Mix { cumulative }
    }
    pub fn draw(&self, rng: &mut Rng) -> usize {
        let r = rng.unit() * self.cumulative[9];
        self.cumulative
            .iter()
            .position(|&c| r < c)
            .unwrap_or(OPS.len() - 1)
    }
}

/// A fixed permutation of `[0, n)` from a seed: a 4-round Feistel network
/// over the smallest even number of bits that holds `n`, walked until it
/// lands inside the range. Needs no table, so it works for any id count.
#[derive(Clone, Debug)]
pub struct Perm {
    n: u64,
    half: u32,
    mask: u64,
    keys: [u64; 4],
}

fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Perm {
    pub fn new(n: u64, seed: u64) -> Self {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half = bits.div_ceil(2).max(1);
        let mut keys = [0u64; 4];
        for (i, k) in keys.iter_mut().enumerate() {
            *k = mix64(seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        }
        Perm {
            n,
            half,
            mask: (1u64 << half) - 1,
            keys,
        }
    }
    fn forward(&self, x: u64) -> u64 {
        let (mut l, mut r) = (x >> self.half, x & self.mask);
        for k in self.keys {
            (l, r) = (r, l ^ (mix64(r ^ k) & self.mask));
        }
        (l << self.half) | r
    }
    fn backward(&self, y: u64) -> u64 {
        let (mut l, mut r) = (y >> self.half, y & self.mask);
        for k in self.keys.iter().rev() {
            (l, r) = (r ^ (mix64(l ^ k) & self.mask), l);
        }
        (l << self.half) | r
    }
    /// Where `x` (in `[0, n)`) goes.
    pub fn apply(&self, x: u64) -> u64 {
        if self.n <= 1 {
            return x;
        }
        let mut y = self.forward(x);
        while y >= self.n {
            y = self.forward(y);
        }
        y
    }
    /// What goes to `y`: the inverse of [`Perm::apply`].
    pub fn invert(&self, y: u64) -> u64 {
        if self.n <= 1 {
            return y;
        }
        let mut x = self.backward(y);
        while x >= self.n {
            x = self.backward(x);
        }
        x
    }
}

/// Zipf ranks on `[0, n)` by Gray's method (spec A4): rank 0 is the
/// hottest, with probability 1 / ζ(n, θ).
#[derive(Clone, Debug)]
pub struct Zipf {
    n: u64,
    theta: f64,
    zetan: f64,
    alpha: f64,
    eta: f64,
    second: f64,
}

/// Σ i^−θ for i in 1..=n.
pub fn zeta(n: u64, theta: f64) -> f64 {
    (1..=n).map(|i| (i as f64).powf(-theta)).sum()
}

impl Zipf {
    pub fn new(n: u64, theta: f64) -> Self {
        let n = n.max(1);
        let zetan = zeta(n, theta);
        let zeta2 = zeta(2.min(n), theta);
        let eta = if n > 2 {
            (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan)
        } else {
            1.0
        };
        Zipf {
            n,
            theta,
            zetan,
            alpha: 1.0 / (1.0 - theta),
            eta,
            second: 1.0 + 0.5f64.powf(theta),
        }
    }
    /// The rank at quantile `p` in [0, 1).
    pub fn quantile(&self, p: f64) -> u64 {
        let uz = p * self.zetan;
        if uz < 1.0 || self.n == 1 {
            return 0;
        }
        if uz < self.second {
            return 1;
        }
        let v = (self.n as f64 * (self.eta * p - self.eta + 1.0).powf(self.alpha)) as u64;
        v.min(self.n - 1)
    }
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        self.quantile(rng.unit())
    }
    /// The probability Gray's method gives rank `r` for r < 2, and its
    /// approximation i^−θ / ζ(n) otherwise.
    pub fn share(&self, r: u64) -> f64 {
        ((r + 1) as f64).powf(-self.theta) / self.zetan
    }
}

/// The out-degree distribution: (out-degree, cumulative probability).
pub struct OutDegree {
    rows: Vec<(u64, f64)>,
}

const OUTDEGREE_DAT: &str = include_str!("outdegree.dat");

impl OutDegree {
    /// The shipped table (spec A2: 45 % zeros, max 961,963, mean 4.74).
    pub fn shipped() -> Self {
        let rows = OUTDEGREE_DAT
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|l| {
                let mut it = l.split_whitespace();
                Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
            })
            .collect();
        OutDegree { rows }
    }
    /// The first out-degree whose cumulative probability reaches `u`.
    pub fn at(&self, u: f64) -> u64 {
        let i = self.rows.partition_point(|&(_, c)| c < u);
        self.rows.get(i).or(self.rows.last()).map_or(0, |r| r.0)
    }
    /// The table's mean.
    pub fn mean(&self) -> f64 {
        let mut prev = 0.0;
        let mut m = 0.0;
        for &(k, c) in &self.rows {
            m += k as f64 * (c - prev);
            prev = c;
        }
        m
    }
    pub fn max(&self) -> u64 {
        self.rows.last().map_or(0, |r| r.0)
    }
    pub fn zero_share(&self) -> f64 {
        self.rows.first().map_or(0.0, |r| r.1)
    }
}

/// The graph's shape: ids, the out-degree of each, and how its ids are drawn.
pub struct Graph {
    /// First id and how many ids the load made: ids are `[start, start + n)`.
    pub start: u64,
    pub n: u64,
    pub link_types: [i64; 2],
    degree: OutDegree,
    /// The fixed shuffle that gives each id its out-degree (spec A2).
    shuffle: Perm,
}

impl Graph {
    pub fn new(n: u64, seed: u64) -> Self {
        Graph {
            start: 1,
            n,
            link_types: [123_456_789, 123_456_790],
            degree: OutDegree::shipped(),
            shuffle: Perm::new(n, seed ^ 0x6C69_6E6B),
        }
    }
    /// Out-degree of `id1` over every link type: its place in the shuffle
    /// picks its quantile (the middle of its share, so that a small load
    /// does not give one node the largest out-degree of ten million).
    pub fn nlinks(&self, id1: u64) -> u64 {
        let s = self.shuffle.apply(id1 - self.start);
        let u = 1.0 - (s as f64 + 0.5) / self.n as f64;
        self.degree.at(u)
    }
    /// How many of `id1`'s links are of type index `t` (0 or 1): the
    /// out-degree split over the two types; their id2s are id1 + 0.. .
    pub fn nlinks_of(&self, id1: u64, t: usize) -> u64 {
        let all = self.nlinks(id1);
        all / 2 + u64::from((t as u64) < all % 2)
    }
    /// The id with the `rank`-th largest out-degree (rank 0: the largest).
    pub fn by_degree(&self, rank: u64) -> u64 {
        // The largest out-degrees sit at the top quantiles: shuffle places 0, 1, ...
        self.start + self.shuffle.invert(rank.min(self.n - 1))
    }
    pub fn distribution(&self) -> &OutDegree {
        &self.degree
    }
}

/// How requests pick their ids (spec A4).
pub struct IdDists {
    pub get_node: Zipf,
    pub update_node: Zipf,
    pub link_read: Zipf,
    pub link_write_corr: Zipf,
    /// Spreads the hot ranks of the uncorrelated draws over the ids.
    pub spread: Perm,
    /// Share of link reads and writes whose id1 follows the out-degree.
    pub correlated: f64,
}

impl IdDists {
    pub fn new(n: u64, seed: u64) -> Self {
        IdDists {
            get_node: Zipf::new(n, 0.625),
            update_node: Zipf::new(n, 0.606),
            link_read: Zipf::new(n, 0.8),
            link_write_corr: Zipf::new(n, 0.741),
            spread: Perm::new(n, seed ^ 0x7370_7265_6164),
            correlated: 0.005,
        }
    }
}

/// Multiget size: 1 + ⌈ln(1 − r) / ln 0.618⌉, at most 127 (spec A4).
pub fn multiget_size(rng: &mut Rng) -> usize {
    let r = rng.unit();
    let k = ((1.0 - r).ln() / 0.618f64.ln()).ceil();
    (1 + k.max(0.0) as usize).min(127)
}

/// A lognormal length with the given median and sigma, at most `max`.
pub fn lognormal_len(rng: &mut Rng, median: f64, sigma: f64, max: usize) -> usize {
    // Box–Muller: one standard normal from two uniforms.
    let u1 = rng.unit().max(f64::MIN_POSITIVE);
    let u2 = rng.unit();
    let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
    ((median * (sigma * z).exp()).round() as usize).min(max)
}

/// Characters payloads are written in: letters and digits, safe in any
/// engine's text literal.
const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// Fills `out` with `len` payload characters that repeat themselves the way
/// the spec's "motif" bytes do: each character starts a new run with
/// probability `uniqueness`, and otherwise copies the character `motif`
/// places back, so the text compresses about as well as real payloads.
pub fn payload(rng: &mut Rng, len: usize, motif: usize, uniqueness: f64, out: &mut String) {
    out.clear();
    let bytes: Vec<u8> = {
        let mut b = Vec::with_capacity(len);
        for i in 0..len {
            if i >= motif && rng.unit() >= uniqueness {
                b.push(b[i - motif]);
            } else {
                b.push(ALPHABET[rng.below(ALPHABET.len())]);
            }
        }
        b
    };
    out.extend(bytes.iter().map(|&b| b as char));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_over_100000_draws_is_within_half_a_point_of_the_spec() {
        let mix = Mix::new(&MIX);
        let mut rng = Rng::seeded(7);
        let mut n = [0u64; 10];
        let draws = 100_000;
        for _ in 0..draws {
            n[mix.draw(&mut rng)] += 1;
        }
        let total: f64 = MIX.iter().sum();
        assert!((total - 100.0).abs() < 1e-6, "{total}");
        for i in 0..10 {
            let pct = n[i] as f64 * 100.0 / draws as f64;
            assert!(
                (pct - MIX[i]).abs() < 0.5,
                "{}: {pct} vs {}",
                OPS[i],
                MIX[i]
            );
        }
    }

    #[test]
    fn permutations_are_bijections_with_inverses() {
        for n in [1u64, 2, 3, 10, 1000, 4097] {
            let p = Perm::new(n, 42);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = p.apply(x);
                assert!(y < n);
                assert!(!seen[y as usize], "n {n}: {y} twice");
                seen[y as usize] = true;
                assert_eq!(p.invert(y), x);
            }
        }
        // A different seed, a different order.
        let (a, b) = (Perm::new(1000, 1), Perm::new(1000, 2));
        assert!((0..1000).any(|x| a.apply(x) != b.apply(x)));
    }

    #[test]
    fn zipf_draws_put_the_expected_share_on_the_hottest_ids() {
        let n = 100_000;
        for theta in [0.606, 0.625, 0.741, 0.8] {
            let z = Zipf::new(n, theta);
            let spread = Perm::new(n, 9);
            let mut rng = Rng::seeded(11);
            let draws = 100_000;
            let mut hits = std::collections::HashMap::<u64, u64>::new();
            for _ in 0..draws {
                *hits.entry(spread.apply(z.draw(&mut rng))).or_default() += 1;
            }
            // The hottest id is rank 0 through the permutation.
            for r in 0..2 {
                let id = spread.apply(r);
                let got = hits.get(&id).copied().unwrap_or(0) as f64 / draws as f64;
                let want = z.share(r);
                assert!(
                    (got - want).abs() < 0.1 * want + 0.002,
                    "θ {theta} rank {r}: {got} vs {want}"
                );
            }
            // The ten hottest ids together.
            let got: u64 = (0..10)
                .map(|r| hits.get(&spread.apply(r)).copied().unwrap_or(0))
                .sum();
            let want: f64 = (0..10).map(|r| z.share(r)).sum();
            let got = got as f64 / draws as f64;
            assert!(
                (got - want).abs() < 0.15 * want,
                "θ {theta} top 10: {got} vs {want}"
            );
            // Hot ids are spread: the hottest is not the smallest id.
            assert_ne!(spread.apply(0), 0);
        }
    }

    #[test]
    fn the_shipped_out_degree_table_has_the_spec_shape() {
        let d = OutDegree::shipped();
        assert!((d.zero_share() - 0.45).abs() < 1e-9);
        assert_eq!(d.max(), 961_963);
        assert!((d.mean() - 4.74).abs() < 0.01, "{}", d.mean());
        assert_eq!(d.at(0.0), 0);
        assert_eq!(d.at(1.0), 961_963);
    }

    #[test]
    fn out_degrees_over_a_load_average_to_the_tables_mean() {
        let n = 20_000;
        let g = Graph::new(n, 5);
        let sum: u64 = (1..=n).map(|id| g.nlinks(id)).sum();
        let mean = sum as f64 / n as f64;
        let want = g.distribution().mean();
        assert!((mean / want - 1.0).abs() < 0.05, "{mean} vs {want}");
        // Split over the two types without loss.
        for id in 1..200 {
            assert_eq!(g.nlinks_of(id, 0) + g.nlinks_of(id, 1), g.nlinks(id));
        }
        // Rank 0 by degree has the largest out-degree.
        let mut degrees: Vec<u64> = (1..=n).map(|id| g.nlinks(id)).collect();
        degrees.sort_unstable_by(|a, b| b.cmp(a));
        for rank in 0..5 {
            assert_eq!(g.nlinks(g.by_degree(rank)), degrees[rank as usize]);
        }
    }

    #[test]
    fn multiget_sizes_and_payloads_stay_in_bounds() {
        let mut rng = Rng::seeded(3);
        let mut s = String::new();
        let mut twos = 0;
        for _ in 0..10_000 {
            let k = multiget_size(&mut rng);
            assert!((1..=127).contains(&k));
            twos += usize::from(k == 2);
            let len = lognormal_len(&mut rng, 8.0, 1.0, 255);
            assert!(len <= 255);
            payload(&mut rng, len, 4, 0.63, &mut s);
            assert_eq!(s.len(), len);
            assert!(s.bytes().all(|b| b.is_ascii_alphanumeric()));
        }
        // P(size 2) = P(0 < r ≤ 0.382) ≈ 38 %.
        assert!((3_300..4_300).contains(&twos), "{twos}");
        let mut lens: Vec<usize> = (0..10_001)
            .map(|_| lognormal_len(&mut rng, 128.0, 1.0, 1 << 20))
            .collect();
        lens.sort();
        assert!((110..150).contains(&lens[5_000]), "median {}", lens[5_000]);
    }
}
