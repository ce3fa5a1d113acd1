//! The reference driver's own arithmetic, reproduced bit for bit where a
//! LinkBench result depends on it (issue 33): its seeded random numbers
//! (`java.util.Random`), its id shuffle (rotations within 1,024 groups of
//! ids, one rotation per group drawn from a fixed seed) and its out-degree
//! table (`nlinks.dat`, the reference's `config/Distribution.dat`).
//!
//! With these, id `i` of a load of `n` nodes gets exactly the out-degree the
//! reference gives it at `maxid1 = n + 1`: the load's link count, its split
//! over the link types and the place of its super-node are the reference's.
//! Values checked against the reference's own classes are in the tests.

/// The reference's seed for the shuffle that ranks ids by out-degree (and
/// for the id1 draws that follow out-degree).
pub const NLINKS_SEED: i64 = 20_343_988_438_726_021;
/// The reference's seed for the id1 draws of link requests that do not
/// follow out-degree (reads and writes alike).
pub const UNCORR_SEED: i64 = 53_238_253_823_453;
/// The reference's seed for the id draws of node reads, updates and deletes.
pub const NODE_SEED: i64 = 4_766_565_305_853_767_165;
/// Groups every shuffle rotates within.
pub const GROUPS: u64 = 1024;

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const MASK: u64 = (1 << 48) - 1;

/// The 48-bit linear congruential generator of `java.util.Random`: the same
/// seed gives the same numbers as the reference's `new Random(seed)`.
#[derive(Clone, Debug)]
pub struct JavaRandom {
    state: u64,
}

impl JavaRandom {
    pub fn new(seed: i64) -> Self {
        JavaRandom {
            state: (seed as u64 ^ MULTIPLIER) & MASK,
        }
    }

    /// The next `bits` (at most 31 here) high bits of the state.
    fn next(&mut self, bits: u32) -> i32 {
        self.state = self.state.wrapping_mul(MULTIPLIER).wrapping_add(0xB) & MASK;
        (self.state >> (48 - bits)) as i32
    }

    /// `nextInt(bound)`: uniform in `[0, bound)`, by Java's rejection rule
    /// (a power of two takes the high bits instead).
    pub fn next_int(&mut self, bound: i32) -> i32 {
        assert!(bound > 0, "next_int needs a positive bound");
        if bound & bound.wrapping_neg() == bound {
            return ((i64::from(bound) * i64::from(self.next(31))) >> 31) as i32;
        }
        loop {
            let bits = self.next(31);
            let val = bits % bound;
            // Java rejects the draws whose bucket the 31-bit range cuts off:
            // there the sum overflows to a negative int.
            if bits.wrapping_sub(val).wrapping_add(bound - 1) >= 0 {
                return val;
            }
        }
    }
}

/// The reference's invertible shuffle of `[0, n)`: ids fall into `GROUPS`
/// groups by `i mod GROUPS`, and each group is rotated by its own number of
/// steps of `GROUPS`, drawn from the seed. Cheap, table-free both ways.
#[derive(Clone, Debug)]
pub struct GroupShuffle {
    n: u64,
    groups: u64,
    small: u64,
    round_down: u64,
    round_up: u64,
    rotation: Vec<u64>,
}

impl GroupShuffle {
    /// The shuffle of `[0, n)` (n at least 1, below 2^31) from `seed`.
    pub fn new(seed: i64, groups: u64, n: u64) -> Self {
        let n = n.max(1);
        let groups = groups.min(n);
        let small = n / groups;
        let mut rng = JavaRandom::new(seed);
        let rotation = (0..groups)
            .map(|_| rng.next_int(small as i32) as u64)
            .collect();
        let round_down = small * groups;
        let round_up = if round_down == n {
            n
        } else {
            round_down + groups
        };
        GroupShuffle {
            n,
            groups,
            small,
            round_down,
            round_up,
            rotation,
        }
    }

    fn shift(&self, i: u64, inverse: bool) -> u64 {
        let group = i % self.groups;
        // The first n mod groups groups hold one id more than the others.
        let big = group < self.n % self.groups;
        let size = self.small + u64::from(big);
        let r = self.rotation[group as usize];
        let steps = if inverse { size - r } else { r };
        let j = i + self.groups * steps;
        if j < self.n {
            return j;
        }
        let wrapped = j % if big { self.round_up } else { self.round_down };
        if wrapped >= self.n { group } else { wrapped }
    }

    /// Where `i` goes (the reference's `permute`).
    pub fn permute(&self, i: u64) -> u64 {
        self.shift(i, false)
    }

    /// What goes to `i` (the reference's `invertPermute`).
    pub fn invert(&self, i: u64) -> u64 {
        self.shift(i, true)
    }
}

/// How the reference splits an id's out-degree over `types` link types:
/// each type gets `total / types`, and one more for every type whose number
/// is below `total - total / types`. With two types that gives the first
/// type one link more than half, and the second one more too from three
/// links on: the loaded links exceed the out-degree (a 2 becomes 2 + 1).
/// rqps loads what the reference loads, so it splits the same way.
pub fn split(total: u64, types: u64, t: u64) -> u64 {
    let each = total / types;
    each + u64::from(t < total - each)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_random_gives_the_numbers_java_gives() {
        // new java.util.Random(42): nextInt(10) x5, then nextInt(16), nextInt(1 << 30).
        let mut r = JavaRandom::new(42);
        let got: Vec<i32> = (0..5).map(|_| r.next_int(10)).collect();
        assert_eq!(got, [0, 3, 8, 4, 0]);
        assert_eq!(r.next_int(16), 15);
        assert_eq!(r.next_int(1 << 30), 297_510_752);
    }

    #[test]
    fn group_shuffles_are_bijections_with_inverses() {
        for n in [1u64, 2, 3, 777, 1024, 1025, 3000, 5000, 20_000, 100_000] {
            let s = GroupShuffle::new(NLINKS_SEED, GROUPS, n);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let j = s.permute(i);
                assert!(j < n, "n {n}: {i} -> {j}");
                assert!(!seen[j as usize], "n {n}: {j} twice");
                seen[j as usize] = true;
                assert_eq!(s.invert(j), i, "n {n}");
            }
        }
    }

    /// Printed by the reference's own `InvertibleShuffler` (its source
    /// compiled as it is) for the first ranks and the last.
    #[test]
    fn group_shuffles_place_ids_where_the_reference_does() {
        let cases: [(i64, u64, [u64; 6], u64); 6] = [
            (
                NLINKS_SEED,
                100_000,
                [14336, 59393, 43010, 35843, 68612, 88069],
                69279,
            ),
            (
                UNCORR_SEED,
                100_000,
                [86016, 22529, 19458, 20483, 8196, 87045],
                61087,
            ),
            (
                NODE_SEED,
                100_000,
                [88064, 34817, 63490, 12291, 46084, 74757],
                41631,
            ),
            (NLINKS_SEED, 5_000, [3072, 2049, 1026, 1027, 4, 5], 4999),
            (UNCORR_SEED, 3_000, [1024, 1, 2, 1027, 4, 5], 2999),
            (
                NODE_SEED,
                1_000_001,
                [963584, 648193, 712706, 159747, 699396, 533509],
                216640,
            ),
        ];
        for (seed, n, first, last) in cases {
            let s = GroupShuffle::new(seed, GROUPS, n);
            let got: Vec<u64> = (0..6).map(|i| s.permute(i)).collect();
            assert_eq!(got, first, "seed {seed} n {n}");
            assert_eq!(s.permute(n - 1), last, "seed {seed} n {n}");
        }
        // Fewer ids than groups: every group holds one id and nothing moves.
        let s = GroupShuffle::new(NLINKS_SEED, GROUPS, 777);
        assert!((0..777).all(|i| s.permute(i) == i));
    }

    #[test]
    fn the_split_gives_the_first_type_the_odd_link_and_both_an_extra_from_three() {
        let both = |t| (split(t, 2, 0), split(t, 2, 1));
        assert_eq!(both(0), (0, 0));
        assert_eq!(both(1), (1, 0));
        assert_eq!(both(2), (2, 1));
        assert_eq!(both(3), (2, 2));
        assert_eq!(both(4), (3, 3));
        assert_eq!(both(961_963), (480_982, 480_982));
        // One type: the total.
        assert_eq!(split(5, 1, 0), 5);
    }
}
