//! TPC-C's random values: NURand with fixed C constants, customer last
//! names from syllables, the transaction mix, and the strings of the load.

use crate::suite::rand::Rng;

/// NURand's C for customer last names while loading.
pub const C_LAST_LOAD: i64 = 157;
/// NURand's C for customer last names while running: 223 − 157 = 66 lies in
/// [65, 119] and is neither 96 nor 112, as TPC-C requires of the pair.
pub const C_LAST_RUN: i64 = 223;
/// NURand's C for customer ids.
pub const C_ID: i64 = 259;
/// NURand's C for item ids.
pub const C_ITEM: i64 = 7911;

/// Items in the catalogue, customers per district, orders per district
/// after the load, districts per warehouse.
pub const ITEMS: i64 = 100_000;
pub const CUSTOMERS: i64 = 3_000;
pub const ORDERS: i64 = 3_000;
pub const DISTRICTS: i64 = 10;
/// Orders from this id on are undelivered after the load (and have a new_order row).
pub const FIRST_NEW_ORDER: i64 = 2_101;

/// NURand(A, x, y) = (((rand(0, A) | rand(x, y)) + C) mod (y − x + 1)) + x.
pub fn nurand(rng: &mut Rng, a: i64, c: i64, x: i64, y: i64) -> i64 {
    (((rng.uniform(0, a) | rng.uniform(x, y)) + c) % (y - x + 1)) + x
}

const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` in 0..=999: its three digits as syllables.
pub fn last_name(n: i64, out: &mut String) {
    out.clear();
    let n = n.clamp(0, 999) as usize;
    for d in [n / 100, (n / 10) % 10, n % 10] {
        out.push_str(SYLLABLES[d]);
    }
}

/// A customer's last name while running: NURand(255, 0, 999) with the run's C.
pub fn run_last_name(rng: &mut Rng, out: &mut String) {
    last_name(nurand(rng, 255, C_LAST_RUN, 0, 999), out);
}

/// The five transactions, in the order their counters are kept.
pub const KINDS: [&str; 5] = [
    "new-order",
    "payment",
    "order-status",
    "delivery",
    "stock-level",
];
pub const NEW_ORDER: usize = 0;
pub const PAYMENT: usize = 1;
pub const ORDER_STATUS: usize = 2;
pub const DELIVERY: usize = 3;
pub const STOCK_LEVEL: usize = 4;

/// The mix in percent, in [`KINDS`] order: 45/43/4/4/4.
pub const MIX: [u32; 5] = [45, 43, 4, 4, 4];

/// The next transaction: a draw over [`MIX`].
pub fn pick(rng: &mut Rng) -> usize {
    let mut r = rng.uniform(0, 99) as u32;
    for (k, &w) in MIX.iter().enumerate() {
        if r < w {
            return k;
        }
        r -= w;
    }
    NEW_ORDER
}

/// Keying time in seconds per transaction kind (TPC-C 5.2.5.7).
pub const KEYING_SECS: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];
/// Mean think time in seconds per transaction kind.
pub const THINK_SECS: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];

/// A think time drawn from the negative exponential with mean `mean`, cut
/// at ten times the mean as TPC-C allows.
pub fn think(rng: &mut Rng, mean: f64) -> f64 {
    let u = rng.unit().max(1e-12);
    (-u.ln() * mean).min(10.0 * mean)
}

const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// Appends a random alphanumeric string of `lo..=hi` characters.
pub fn astring(rng: &mut Rng, lo: i64, hi: i64, out: &mut String) {
    let n = rng.uniform(lo, hi);
    for _ in 0..n {
        out.push(ALNUM[rng.below(ALNUM.len())] as char);
    }
}

/// Appends a random string of `lo..=hi` decimal digits.
pub fn nstring(rng: &mut Rng, lo: i64, hi: i64, out: &mut String) {
    let n = rng.uniform(lo, hi);
    for _ in 0..n {
        out.push((b'0' + rng.below(10) as u8) as char);
    }
}

/// Item or stock data: 26..50 characters (`lo`..`hi`), 10 % of them with
/// "ORIGINAL" somewhere inside.
pub fn data_with_original(rng: &mut Rng, lo: i64, hi: i64, out: &mut String) {
    out.clear();
    astring(rng, lo, hi, out);
    if rng.below(10) == 0 {
        let at = rng.below(out.len() - 8 + 1);
        out.replace_range(at..at + 8, "ORIGINAL");
    }
}

/// A zip code: 4 random digits and "11111".
pub fn zip(rng: &mut Rng, out: &mut String) {
    out.clear();
    nstring(rng, 4, 4, out);
    out.push_str("11111");
}

/// `cents` as a decimal with two places: `-1234` → `-12.34`.
pub fn money(cents: i64, out: &mut String) {
    use std::fmt::Write;
    out.clear();
    let sign = if cents < 0 { "-" } else { "" };
    let c = cents.unsigned_abs();
    let _ = write!(out, "{sign}{}.{:02}", c / 100, c % 100);
}

/// A random permutation of 1..=n.
pub fn permutation(rng: &mut Rng, n: i64) -> Vec<i64> {
    let mut v: Vec<i64> = (1..=n).collect();
    for i in (1..v.len()).rev() {
        let j = rng.below(i + 1);
        v.swap(i, j);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut rng = Rng::seeded(7);
        let mut hits = vec![0u32; 1000];
        for _ in 0..200_000 {
            let v = nurand(&mut rng, 255, C_LAST_RUN, 0, 999);
            assert!((0..=999).contains(&v), "{v}");
            hits[v as usize] += 1;
        }
        // Uniform would give 200 each; NURand's OR makes some values far
        // more frequent than others.
        let (min, max) = (*hits.iter().min().unwrap(), *hits.iter().max().unwrap());
        assert!(max > 4 * min.max(1), "min {min} max {max}");
        for _ in 0..10_000 {
            let v = nurand(&mut rng, 8191, C_ITEM, 1, ITEMS);
            assert!((1..=ITEMS).contains(&v));
            let c = nurand(&mut rng, 1023, C_ID, 1, CUSTOMERS);
            assert!((1..=CUSTOMERS).contains(&c));
        }
    }

    #[test]
    fn nurand_is_the_formula() {
        // With A = 0 the OR is rand(x, y) alone; a seeded generator gives the
        // same draws, so the result is (u + C) mod (y - x + 1) + x.
        let mut a = Rng::seeded(3);
        let mut b = Rng::seeded(3);
        for _ in 0..100 {
            let v = nurand(&mut a, 0, 157, 0, 999);
            let _zero = b.uniform(0, 0);
            let u = b.uniform(0, 999);
            assert_eq!(v, (u + 157) % 1000);
        }
    }

    #[test]
    fn last_names_are_three_syllables() {
        let mut s = String::new();
        last_name(0, &mut s);
        assert_eq!(s, "BARBARBAR");
        last_name(371, &mut s);
        assert_eq!(s, "PRICALLYOUGHT");
        last_name(999, &mut s);
        assert_eq!(s, "EINGEINGEING");
        let delta = C_LAST_RUN - C_LAST_LOAD;
        assert!((65..=119).contains(&delta) && delta != 96 && delta != 112);
    }

    #[test]
    fn the_mix_is_45_43_4_4_4() {
        assert_eq!(MIX.iter().sum::<u32>(), 100);
        let mut rng = Rng::seeded(11);
        let n = 200_000;
        let mut count = [0u32; 5];
        for _ in 0..n {
            count[pick(&mut rng)] += 1;
        }
        for (k, &c) in count.iter().enumerate() {
            let share = c as f64 * 100.0 / n as f64;
            assert!(
                (share - MIX[k] as f64).abs() < 0.5,
                "{}: {share:.2} % instead of {} %",
                KINDS[k],
                MIX[k]
            );
        }
    }

    #[test]
    fn strings_money_and_permutations() {
        let mut rng = Rng::seeded(5);
        let mut s = String::new();
        let mut original = 0;
        for _ in 0..2000 {
            data_with_original(&mut rng, 26, 50, &mut s);
            assert!((26..=50).contains(&s.len()), "{s}");
            original += s.contains("ORIGINAL") as u32;
        }
        assert!((120..=280).contains(&original), "{original}");
        zip(&mut rng, &mut s);
        assert_eq!(s.len(), 9);
        assert!(s.ends_with("11111") && s.bytes().all(|b| b.is_ascii_digit()));
        money(-1234, &mut s);
        assert_eq!(s, "-12.34");
        money(5, &mut s);
        assert_eq!(s, "0.05");
        let mut p = permutation(&mut rng, 3000);
        assert_ne!(p[..10], (1..=10).collect::<Vec<_>>()[..]);
        p.sort();
        assert_eq!(p, (1..=3000).collect::<Vec<_>>());
        let t: Vec<f64> = (0..10_000).map(|_| think(&mut rng, 12.0)).collect();
        let mean = t.iter().sum::<f64>() / t.len() as f64;
        assert!((mean - 12.0).abs() < 0.6, "{mean}");
        assert!(t.iter().all(|&x| (0.0..=120.0).contains(&x)));
    }
}
