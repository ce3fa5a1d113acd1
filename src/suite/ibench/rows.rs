//! Row values of the Insert Benchmark (reference §4.2): uniform integers
//! for the indexed columns, and a `data` string of 10–20 characters of
//! which about 37.5 % are random base64 characters and the rest the letter
//! `a`, placed first (so the column compresses about as well as the
//! reference's).
//!
//! The reference cuts the random part from the base64 text of 4 MiB of
//! random bytes at a random offset. Every character of that text is an
//! independent uniform draw from the 64 symbols, so drawing the characters
//! from the generator directly gives the same values, without a cache miss
//! per row on a 5.6 MB string (which made the client's row generation cost
//! more than sending the row).

use crate::suite::rand::Rng;

/// Exclusive upper bounds of the integer columns (all start at 0).
pub const CASHREGISTERS: i64 = 1_000;
pub const PRODUCTS: i64 = 10_000;
pub const CUSTOMERS: i64 = 100_000;
pub const PRICES: i64 = 500;

/// Inclusive bounds of the length of `data`.
pub const DATA_LEN_MIN: usize = 10;
pub const DATA_LEN_MAX: usize = 20;
/// Percent of 3/4 of the length that is random text (`data_random_pct`).
pub const DATA_RANDOM_PCT: usize = 50;

/// Characters of `data` of length `len` that are random:
/// `int(len * 0.75 * pct / 100)`, the rest being `a`.
pub fn random_chars(len: usize) -> usize {
    len * 3 * DATA_RANDOM_PCT / 400
}

/// The base64 alphabet (RFC 4648).
pub const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// One generated row; `data` lives in the generator's buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowInts {
    pub cashregisterid: i64,
    pub customerid: i64,
    pub productid: i64,
    pub price: i64,
}

/// Makes rows for one inserting connection.
pub struct RowGen {
    rng: Rng,
}

impl RowGen {
    pub fn new(seed: u64) -> Self {
        RowGen {
            rng: Rng::seeded(seed),
        }
    }

    pub fn ints(&mut self) -> RowInts {
        RowInts {
            cashregisterid: self.rng.uniform(0, CASHREGISTERS - 1),
            customerid: self.rng.uniform(0, CUSTOMERS - 1),
            productid: self.rng.uniform(0, PRODUCTS - 1),
            price: self.rng.uniform(0, PRICES - 1),
        }
    }

    /// Writes a `data` value into `out` (cleared first).
    pub fn data(&mut self, out: &mut String) {
        out.clear();
        let len = self.rng.uniform(DATA_LEN_MIN as i64, DATA_LEN_MAX as i64) as usize;
        let random = random_chars(len);
        out.extend(std::iter::repeat_n('a', len - random));
        // At most 7 characters of 6 bits: one 64-bit draw holds 10.
        let mut bits = self.rng.next_u64();
        for _ in 0..random {
            out.push(B64[(bits & 63) as usize] as char);
            bits >>= 6;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_columns_cover_their_ranges_and_no_more() {
        let mut g = RowGen::new(7);
        let mut lo = [i64::MAX; 4];
        let mut hi = [i64::MIN; 4];
        for _ in 0..200_000 {
            let r = g.ints();
            for (i, v) in [r.cashregisterid, r.customerid, r.productid, r.price]
                .into_iter()
                .enumerate()
            {
                lo[i] = lo[i].min(v);
                hi[i] = hi[i].max(v);
            }
        }
        assert_eq!(lo, [0; 4]);
        // The customer range is the widest: 200k draws reach its top often enough.
        assert_eq!(
            hi,
            [CASHREGISTERS - 1, CUSTOMERS - 1, PRODUCTS - 1, PRICES - 1]
        );
    }

    #[test]
    fn data_is_a_run_of_a_then_random_base64() {
        let mut g = RowGen::new(3);
        let mut s = String::new();
        let mut lens = [0u32; DATA_LEN_MAX + 1];
        let mut symbols = [0u32; 64];
        let (mut a, mut total) = (0usize, 0usize);
        for _ in 0..20_000 {
            g.data(&mut s);
            let len = s.len();
            assert!((DATA_LEN_MIN..=DATA_LEN_MAX).contains(&len), "{s}");
            lens[len] += 1;
            let random = random_chars(len);
            let (head, tail) = s.split_at(len - random);
            assert!(head.bytes().all(|b| b == b'a'), "{s}");
            for b in tail.bytes() {
                symbols[B64.iter().position(|&x| x == b).expect("base64")] += 1;
            }
            a += head.len();
            total += len;
        }
        // Every length occurs; 10 characters carry 3 random ones, 20 carry 7.
        assert!(lens[DATA_LEN_MIN..].iter().all(|&n| n > 1000), "{lens:?}");
        assert_eq!((random_chars(10), random_chars(20)), (3, 7));
        // About 37.5 % random, the rest 'a' (int() rounds the random part down).
        let random_share = 1.0 - a as f64 / total as f64;
        assert!((0.32..0.375).contains(&random_share), "{random_share}");
        // The random characters are uniform over the alphabet, as base64 of random bytes.
        let n: u32 = symbols.iter().sum();
        let expect = n as f64 / 64.0;
        assert!(
            symbols
                .iter()
                .all(|&c| (c as f64 - expect).abs() < 0.1 * expect),
            "{symbols:?}"
        );
    }
}
