//! The random parts of LinkBench (spec A2–A4): the operation mix, Zipf ids
//! spread by a fixed permutation, the out-degree of each id (`--outdegree`:
//! the reference's mapping over its table `nlinks.dat` by default, or rqps's
//! smoothed one over `outdegree.dat`), lognormal payload sizes and their
//! bytes.

use serde::{Deserialize, Serialize};

use super::reference::{self, GroupShuffle};
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
const NLINKS_DAT: &str = include_str!("nlinks.dat");

impl OutDegree {
    /// Rows of "out-degree cumulative-probability", the probability
    /// divided by `scale`; `#` starts a comment line.
    fn parse(text: &str, scale: f64) -> Self {
        let rows = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|l| {
                let mut it = l.split_whitespace();
                let k = it.next()?.parse().ok()?;
                let c: f64 = it.next()?.parse().ok()?;
                Some((k, c / scale))
            })
            .collect();
        OutDegree { rows }
    }
    /// rqps's smoothed table (spec A2: 45 % zeros, max 961,963, mean 4.74).
    pub fn shipped() -> Self {
        Self::parse(OUTDEGREE_DAT, 1.0)
    }
    /// The reference's own table (`nlinks.dat`, its percentages divided by
    /// 100 as the reference divides them, so each probability is the same
    /// double).
    pub fn reference() -> Self {
        Self::parse(NLINKS_DAT, 100.0)
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

/// How ids get their out-degrees (`--outdegree`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Outdegree {
    /// The reference driver's mapping: its table, its shuffle, each id at the
    /// left edge of its share, so the highest-ranked id always gets the
    /// table's maximum (961,963 links) and the link count is the reference's.
    Reference,
    /// rqps's earlier mapping: a smoothed table, each id at the middle of its
    /// share, so no node gets more than its share of the graph implies.
    Smooth,
}

impl Outdegree {
    pub fn name(self) -> &'static str {
        match self {
            Outdegree::Reference => "reference",
            Outdegree::Smooth => "smooth",
        }
    }
}

/// Which id gets which out-degree rank.
enum Ranking {
    /// rqps's Feistel permutation: rank = apply(id offset).
    Feistel(Perm),
    /// The reference's shuffle: rank = invert(id offset).
    Groups(GroupShuffle),
}

/// The graph's shape: ids, the out-degree of each, and how its ids are drawn.
pub struct Graph {
    /// First id and how many ids the load made: ids are `[start, start + n)`.
    pub start: u64,
    pub n: u64,
    pub link_types: [i64; 2],
    pub mode: Outdegree,
    degree: OutDegree,
    /// The fixed shuffle that gives each id its out-degree rank (spec A2).
    ranking: Ranking,
}

impl Graph {
    pub fn new(n: u64, seed: u64, mode: Outdegree) -> Self {
        let (degree, ranking) = match mode {
            Outdegree::Reference => (
                OutDegree::reference(),
                Ranking::Groups(GroupShuffle::new(
                    reference::NLINKS_SEED,
                    reference::GROUPS,
                    n,
                )),
            ),
            Outdegree::Smooth => (
                OutDegree::shipped(),
                Ranking::Feistel(Perm::new(n, seed ^ 0x6C69_6E6B)),
            ),
        };
        Graph {
            start: 1,
            n,
            link_types: [123_456_789, 123_456_790],
            mode,
            degree,
            ranking,
        }
    }
    /// The out-degree at rank `s` (0: the largest): the table's value at
    /// quantile u = 1 − s/n (the reference: the left edge of the rank's
    /// share, so rank 0 gets the maximum) or u = 1 − (s + ½)/n (smooth: the
    /// middle of its share).
    fn at_rank(&self, s: u64) -> u64 {
        self.degree.at(self.quantile(s))
    }
    fn quantile(&self, s: u64) -> f64 {
        match self.mode {
            // As the reference computes it, operation for operation.
            Outdegree::Reference => 1.0 - s as f64 / self.n as f64,
            Outdegree::Smooth => 1.0 - (s as f64 + 0.5) / self.n as f64,
        }
    }
    /// Out-degree of `id1`: the table's value at its rank.
    pub fn nlinks(&self, id1: u64) -> u64 {
        let off = id1 - self.start;
        let s = match &self.ranking {
            Ranking::Feistel(p) => p.apply(off),
            Ranking::Groups(g) => g.invert(off),
        };
        self.at_rank(s)
    }
    /// How many of `id1`'s links are of type index `t` (0 or 1); their id2s
    /// are id1 + 0.. . The reference's split loads one link more than the
    /// out-degree from 2 links on ([`reference::split`]); smooth splits the
    /// out-degree exactly.
    pub fn nlinks_of(&self, id1: u64, t: usize) -> u64 {
        self.split(self.nlinks(id1), t)
    }
    fn split(&self, all: u64, t: usize) -> u64 {
        let types = self.link_types.len() as u64;
        match self.mode {
            Outdegree::Reference => reference::split(all, types, t as u64),
            Outdegree::Smooth => all / types + u64::from((t as u64) < all % types),
        }
    }
    /// Links the load makes for `id1`, over every type.
    pub fn links_of(&self, id1: u64) -> u64 {
        let all = self.nlinks(id1);
        (0..self.link_types.len()).map(|t| self.split(all, t)).sum()
    }
    /// Links the whole load makes: the shuffle only moves out-degrees
    /// between ids, so this walks the ranks, without it.
    pub fn total_links(&self) -> u64 {
        let rows = &self.degree.rows;
        let mut i = rows.len().saturating_sub(1);
        let mut total = 0;
        for s in 0..self.n {
            // Quantiles fall as ranks rise: step the row down to the first
            // whose cumulative probability still reaches it.
            let u = self.quantile(s);
            while i > 0 && rows[i - 1].1 >= u {
                i -= 1;
            }
            let all = rows.get(i).map_or(0, |r| r.0);
            total += (0..self.link_types.len())
                .map(|t| self.split(all, t))
                .sum::<u64>();
        }
        total
    }
    /// The id with the `rank`-th largest out-degree (rank 0: the largest).
    pub fn by_degree(&self, rank: u64) -> u64 {
        let rank = rank.min(self.n - 1);
        self.start
            + match &self.ranking {
                Ranking::Feistel(p) => p.invert(rank),
                Ranking::Groups(g) => g.permute(rank),
            }
    }
    pub fn distribution(&self) -> &OutDegree {
        &self.degree
    }
}

/// Spreads Zipf ranks over the ids, so that hot ids are not the smallest.
pub enum Spread {
    /// rqps's Feistel permutation (the smooth mapping keeps it).
    Feistel(Perm),
    /// The reference's group shuffle, with its seed.
    Groups(GroupShuffle),
}

impl Spread {
    /// The id offset (from the first id) that rank `r` lands on.
    pub fn apply(&self, r: u64) -> u64 {
        match self {
            Spread::Feistel(p) => p.apply(r),
            Spread::Groups(g) => g.permute(r),
        }
    }
}

/// How requests pick their ids (spec A4).
pub struct IdDists {
    pub get_node: Zipf,
    pub update_node: Zipf,
    pub link_read: Zipf,
    pub link_write_corr: Zipf,
    /// Spreads the hot ranks of the uncorrelated link reads and writes.
    pub spread: Spread,
    /// Spreads the hot ranks of node reads and updates.
    pub node_spread: Spread,
    /// Share of link reads and writes whose id1 follows the out-degree.
    pub correlated: f64,
}

impl IdDists {
    /// With the reference's mapping the hot ids are the reference's (its
    /// shuffles and seeds: the hottest link id is the same id, with the same
    /// out-degree); smooth keeps rqps's earlier spread.
    pub fn new(n: u64, seed: u64, mode: Outdegree) -> Self {
        let (spread, node_spread) = match mode {
            Outdegree::Reference => (
                Spread::Groups(GroupShuffle::new(
                    reference::UNCORR_SEED,
                    reference::GROUPS,
                    n,
                )),
                Spread::Groups(GroupShuffle::new(
                    reference::NODE_SEED,
                    reference::GROUPS,
                    n,
                )),
            ),
            Outdegree::Smooth => (
                Spread::Feistel(Perm::new(n, seed ^ 0x7370_7265_6164)),
                Spread::Feistel(Perm::new(n, seed ^ 0x7370_7265_6164)),
            ),
        };
        IdDists {
            get_node: Zipf::new(n, 0.625),
            update_node: Zipf::new(n, 0.606),
            link_read: Zipf::new(n, 0.8),
            link_write_corr: Zipf::new(n, 0.741),
            spread,
            node_spread,
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

/// A lognormal length with the given median and sigma, below `end`: the
/// reference rounds exp(μ + σz) and takes `end − 1` for anything larger
/// (link data: at most 254 bytes; node data: at most 1 MiB − 1).
pub fn lognormal_len(rng: &mut Rng, median: f64, sigma: f64, end: usize) -> usize {
    // Box–Muller: one standard normal from two uniforms.
    let u1 = rng.unit().max(f64::MIN_POSITIVE);
    let u2 = rng.unit();
    let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
    ((median * (sigma * z).exp()).round() as usize).min(end.saturating_sub(1))
}

/// Median link payload, bytes, and the end of its range (reference defaults).
pub const LINK_DATA: (f64, usize) = (8.0, 255);
/// Median node payload, bytes, and the end of its range.
pub const NODE_DATA: (f64, usize) = (128.0, 1 << 20);
/// Share of payload chunks drawn afresh (the rest copy the motif buffer):
/// the reference's defaults for links and for nodes.
pub const LINK_UNIQUENESS: f64 = 0.225;
pub const NODE_UNIQUENESS: f64 = 0.63;

/// Characters payloads are written in: 69 of them, as many as the bytes of
/// the reference's link payloads (32 to 100), all safe in any engine's text
/// literal. (The reference's node bytes span 171 values, 50 to 220; text
/// columns take only ASCII here, so node payloads use these 69 too and
/// compress somewhat better than the reference's.)
const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,:;+";
/// Bytes of the motif buffer and of each chunk (the reference's sizes).
const MOTIF_BYTES: usize = 512;
const CHUNK_BYTES: usize = 128;

/// Payload bytes the way the reference's motif generator makes them: a
/// 512-byte buffer of random characters drawn once per generator, then each
/// payload in 128-byte chunks, each drawn afresh with probability
/// `uniqueness` and otherwise copied from a random place in the buffer. So
/// payloads repeat each other, and compress, about as the reference's do.
#[derive(Clone, Debug)]
pub struct Motif {
    buf: Vec<u8>,
    uniqueness: f64,
    bytes: Vec<u8>,
}

impl Motif {
    pub fn new(rng: &mut Rng, uniqueness: f64) -> Self {
        let buf = (0..MOTIF_BYTES)
            .map(|_| ALPHABET[rng.below(ALPHABET.len())])
            .collect();
        Motif {
            buf,
            uniqueness,
            bytes: Vec::new(),
        }
    }

    /// Fills `out` with `len` payload characters (reusing its allocation).
    pub fn fill(&mut self, rng: &mut Rng, len: usize, out: &mut String) {
        self.bytes.clear();
        let mut i = 0;
        while i < len {
            let chunk = CHUNK_BYTES.min(len - i);
            if rng.unit() < self.uniqueness {
                for _ in 0..chunk {
                    self.bytes.push(ALPHABET[rng.below(ALPHABET.len())]);
                }
            } else {
                let at = rng.below(MOTIF_BYTES - chunk + 1);
                self.bytes.extend_from_slice(&self.buf[at..at + chunk]);
            }
            i += chunk;
        }
        out.clear();
        out.extend(self.bytes.iter().map(|&b| b as char));
    }
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
    fn the_smooth_out_degree_table_has_the_spec_shape() {
        let d = OutDegree::shipped();
        assert!((d.zero_share() - 0.45).abs() < 1e-9);
        assert_eq!(d.max(), 961_963);
        assert!((d.mean() - 4.74).abs() < 0.01, "{}", d.mean());
        assert_eq!(d.at(0.0), 0);
        assert_eq!(d.at(1.0), 961_963);
    }

    #[test]
    fn smooth_out_degrees_over_a_load_average_to_the_tables_mean() {
        let n = 20_000;
        let g = Graph::new(n, 5, Outdegree::Smooth);
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

    /// Every id's links, summed: what a load of `n` nodes makes, and the
    /// largest out-degree among them.
    fn load_of(n: u64, mode: Outdegree) -> (u64, u64, u64) {
        let g = Graph::new(n, 0x004C_4247_5241_5048, mode);
        let ids = 1..=n;
        let links: u64 = ids.clone().map(|id| g.links_of(id)).sum();
        let type0: u64 = ids.clone().map(|id| g.nlinks_of(id, 0)).sum();
        let max = ids.map(|id| g.nlinks(id)).max().unwrap_or(0);
        assert_eq!(g.total_links(), links, "{mode:?} at {n}");
        (links, type0, max)
    }

    /// The reference's totals: its own classes (InvertibleShuffler and
    /// PiecewiseLinearDistribution, compiled from its source) and its
    /// Distribution.dat give, at maxid1 = n + 1, these links, links of the
    /// first type, and largest out-degree. The mapping has no randomness
    /// (fixed seeds, no draws per load), so they are matched exactly.
    #[test]
    fn the_reference_mapping_loads_the_references_links_at_every_size() {
        for (n, links, type0) in [
            (100_000, 1_368_899, 705_263),
            (20_000, 1_034_669, 521_497),
            (5_000, 976_519, 489_300),
            (3_000, 969_693, 485_471),
            (777, 963_369, 481_846),
            (2, 961_965, 480_983),
        ] {
            let (got, got0, max) = load_of(n, Outdegree::Reference);
            assert_eq!((got, got0), (links, type0), "at {n} nodes");
            assert_eq!(max, 961_963, "at {n} nodes");
        }
        // Larger loads by their ranks alone, without the shuffle (faster).
        for (n, links) in [(1_000_000, 5_249_370), (1_000_001, 5_249_373)] {
            assert_eq!(Graph::new(n, 1, Outdegree::Reference).total_links(), links);
        }
    }

    /// Which id is the super-node, and the out-degrees of the first ids, as
    /// the reference's classes print them: the shuffle is the reference's,
    /// not only the totals.
    #[test]
    fn the_reference_mapping_gives_each_id_the_references_out_degree() {
        for (n, super_node, first) in [
            (100_000, 14_337, [0, 1, 0, 0, 1, 3, 1, 1, 3, 1, 0, 0]),
            (5_000, 3_073, [1, 0, 0, 0, 413, 264, 185, 0, 110, 0, 0, 1]),
            (
                3_000,
                1_025,
                [0, 0, 588, 264, 151, 102, 77, 0, 53, 47, 0, 0],
            ),
            (
                1_000,
                1,
                [961_963, 264, 77, 47, 34, 27, 23, 20, 18, 16, 15, 14],
            ),
        ] {
            let g = Graph::new(n, 1, Outdegree::Reference);
            let got: Vec<u64> = (1..=12).map(|id| g.nlinks(id)).collect();
            assert_eq!(got, first, "at {n} nodes");
            assert_eq!(g.by_degree(0), super_node, "at {n} nodes");
            assert_eq!(g.nlinks(super_node), 961_963, "at {n} nodes");
        }
        // A checksum over every id at 100,000 nodes (Java's long arithmetic).
        let g = Graph::new(100_000, 1, Outdegree::Reference);
        let mut ck: i64 = 0;
        for id in 1..=100_000 {
            ck = ck.wrapping_mul(1_000_003).wrapping_add(g.nlinks(id) as i64)
                % 2_305_843_009_213_693_951;
        }
        assert_eq!(ck, 56_366_966_825_750_169);
    }

    /// Under the reference mapping, requests draw the reference's hot ids:
    /// its shuffles with its seeds (first ranks as its classes place them).
    #[test]
    fn reference_requests_draw_the_references_hot_ids() {
        let n = 100_000;
        let g = Graph::new(n, 1, Outdegree::Reference);
        let ids = IdDists::new(n, 1, Outdegree::Reference);
        let first = |s: &Spread| (0..3).map(|r| s.apply(r)).collect::<Vec<_>>();
        assert_eq!(first(&ids.spread), [86016, 22529, 19458]);
        assert_eq!(first(&ids.node_spread), [88064, 34817, 63490]);
        // Correlated draws rank by out-degree: rank r is the reference's
        // nlinks shuffle at r.
        assert_eq!(g.by_degree(1), 1 + 59393);
        // At 5,000 nodes the hottest uncorrelated id is the super-node, as
        // in the reference: its shuffles coincide on rank 0 there.
        let g = Graph::new(5_000, 1, Outdegree::Reference);
        let ids = IdDists::new(5_000, 1, Outdegree::Reference);
        assert_eq!(g.nlinks(g.start + ids.spread.apply(0)), 961_963);
    }

    #[test]
    fn the_smooth_mapping_keeps_rqps_earlier_graph() {
        let (links, _, max) = load_of(100_000, Outdegree::Smooth);
        assert_eq!(links, 472_765);
        assert!(max < 961_963, "{max}");
    }

    #[test]
    fn the_reference_table_is_the_references() {
        let d = OutDegree::reference();
        assert_eq!(d.rows.len(), 19_951);
        assert_eq!(d.max(), 961_963);
        assert!((d.zero_share() - 0.453_316_057_3).abs() < 1e-12);
        assert_eq!(d.at(0.0), 0);
        assert_eq!(d.at(1.0), 961_963);
        assert!(
            d.rows
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1)
        );
    }

    #[test]
    fn multiget_sizes_and_payloads_stay_in_bounds() {
        let mut rng = Rng::seeded(3);
        let mut s = String::new();
        let mut twos = 0;
        let mut motif = Motif::new(&mut rng, LINK_UNIQUENESS);
        let mut longest = 0;
        for _ in 0..10_000 {
            let k = multiget_size(&mut rng);
            assert!((1..=127).contains(&k));
            twos += usize::from(k == 2);
            let len = lognormal_len(&mut rng, LINK_DATA.0, 1.0, LINK_DATA.1);
            longest = longest.max(len);
            motif.fill(&mut rng, len, &mut s);
            assert_eq!(s.len(), len);
            assert!(s.bytes().all(|b| ALPHABET.contains(&b)));
        }
        // The reference's range ends at 255 (exclusive).
        assert_eq!(longest, 254);
        // P(size 2) = P(0 < r ≤ 0.382) ≈ 38 %.
        assert!((3_300..4_300).contains(&twos), "{twos}");
        let mut lens: Vec<usize> = (0..10_001)
            .map(|_| lognormal_len(&mut rng, NODE_DATA.0, 1.0, NODE_DATA.1))
            .collect();
        lens.sort();
        assert!((110..150).contains(&lens[5_000]), "median {}", lens[5_000]);
    }

    /// Share of 128-byte payload chunks found in the motif buffer.
    fn motif_share(uniqueness: f64) -> f64 {
        let mut rng = Rng::seeded(9);
        let mut m = Motif::new(&mut rng, uniqueness);
        let buf = String::from_utf8(m.buf.clone()).unwrap();
        let mut s = String::new();
        let draws = 4_000;
        let copied = (0..draws)
            .filter(|_| {
                m.fill(&mut rng, 128, &mut s);
                buf.contains(s.as_str())
            })
            .count();
        copied as f64 / draws as f64
    }

    #[test]
    fn payload_chunks_are_fresh_at_the_uniqueness_and_copied_otherwise() {
        for u in [LINK_UNIQUENESS, NODE_UNIQUENESS] {
            let copied = motif_share(u);
            assert!(
                (copied - (1.0 - u)).abs() < 0.03,
                "uniqueness {u}: {copied}"
            );
        }
        // The alphabet is as large as the reference's link byte range, 32..=100.
        assert_eq!(ALPHABET.len(), 100 - 32 + 1);
    }
}
