//! Row values of the Insert Benchmark (reference §4.2): uniform integers
//! for the indexed columns, and a `data` string of 10–20 characters of
//! which about 37.5 % are a slice of random base64 text and the rest the
//! letter `a`, placed first (so the column compresses about as well as the
//! reference's).

use std::sync::OnceLock;

use crate::workload::rand::Rng;

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

/// Bytes of random data whose base64 text random slices are cut from.
const RANDOM_BYTES: usize = 4 << 20;

/// Characters of `data` of length `len` that come from the random text:
/// `int(len * 0.75 * pct / 100)`, the rest being `a`.
pub fn random_chars(len: usize) -> usize {
    len * 3 * DATA_RANDOM_PCT / 400
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 (RFC 4648, with padding).
fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The random text, made once per process (as the reference does per
/// client process) from a fixed seed: what matters is that it does not
/// compress, not which bytes it holds.
pub fn random_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let mut rng = Rng::seeded(0x1B_E7C4);
        let mut bytes = vec![0u8; RANDOM_BYTES];
        for chunk in bytes.chunks_mut(8) {
            let v = rng.uniform(i64::MIN, i64::MAX).to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
        base64(&bytes)
    })
}

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
    text: &'static str,
}

impl RowGen {
    pub fn new(seed: u64) -> Self {
        RowGen {
            rng: Rng::seeded(seed),
            text: random_text(),
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
        let at = self.rng.below(self.text.len() - random);
        out.push_str(&self.text[at..at + random]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
    }

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
    fn data_is_a_run_of_a_then_a_slice_of_random_base64() {
        let text = random_text();
        assert_eq!(text.len(), RANDOM_BYTES.div_ceil(3) * 4);
        let mut g = RowGen::new(3);
        let mut s = String::new();
        let mut lens = [0u32; DATA_LEN_MAX + 1];
        let (mut a, mut total) = (0usize, 0usize);
        for i in 0..20_000 {
            g.data(&mut s);
            let len = s.len();
            assert!((DATA_LEN_MIN..=DATA_LEN_MAX).contains(&len), "{s}");
            lens[len] += 1;
            let random = random_chars(len);
            let (head, tail) = s.split_at(len - random);
            assert!(head.bytes().all(|b| b == b'a'), "{s}");
            assert!(tail.bytes().all(|b| B64.contains(&b)), "{s}");
            // A slice of the random text (checked on a sample: the search is slow).
            if i < 20 {
                assert!(text.contains(tail), "{s}");
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
    }
}
