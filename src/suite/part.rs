//! Client parts: `--part I/N` runs the I-th of N equal shares of a load, so
//! that N client hosts started together drive one server, and `rqps merge`
//! adds their results up.

use crate::error::usage;

/// A client part (`--part I/N`): part `index` (1-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientPart {
    pub index: usize,
    pub count: usize,
}

/// The most parts a load is split into.
pub const MAX_PARTS: usize = 4096;

impl std::str::FromStr for ClientPart {
    type Err = crate::error::Error;

    /// `I/N` with 1 <= I <= N <= [`MAX_PARTS`].
    fn from_str(s: &str) -> Result<ClientPart, Self::Err> {
        let bad = || {
            usage(format!(
                "--part {s}: give I/N, the I-th of N parts, with 1 <= I <= N <= {MAX_PARTS} (e.g. --part 2/4)"
            ))
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count || count > MAX_PARTS {
            return Err(bad());
        }
        Ok(ClientPart { index, count })
    }
}

impl std::fmt::Display for ClientPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl ClientPart {
    /// This part's share of `total` (threads, clients): `total / count`, the
    /// first `total % count` parts one more, so the shares add up to `total`.
    /// A share of 0 is refused: every part must have work.
    pub fn share(&self, total: usize, what: &str) -> Result<usize, crate::error::Error> {
        let share = total / self.count + usize::from(self.index <= total % self.count);
        if share == 0 {
            return Err(usage(format!(
                "{what} {total} cannot be split into {} parts: each part needs at least 1 (give {what} of {} or more)",
                self.count, self.count
            )));
        }
        Ok(share)
    }

    /// Whether the `i`-th (0-based) run of a plan is this part's: every N-th run.
    pub fn takes(&self, i: usize) -> bool {
        i % self.count == self.index - 1
    }

    /// The seed of this part's random generators: each part draws other ids.
    pub fn seed(&self, seed: u64) -> u64 {
        seed ^ (self.index as u64).wrapping_mul(0xA24B_AED4_963E_E407)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_whole_and_none_is_empty() {
        for total in 4..40 {
            let sum: usize = (1..=4)
                .map(|i| {
                    ClientPart { index: i, count: 4 }
                        .share(total, "--threads")
                        .unwrap()
                })
                .sum();
            assert_eq!(sum, total);
        }
        let e = ClientPart { index: 4, count: 4 }
            .share(3, "--threads")
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("--threads 3 cannot be split into 4 parts"),
            "{e}"
        );
        assert!(ClientPart { index: 2, count: 3 }.takes(4));
        assert!(!ClientPart { index: 2, count: 3 }.takes(3));
    }

    #[test]
    fn bad_parts_are_refused_with_the_form() {
        assert_eq!(
            "2/4".parse::<ClientPart>().unwrap(),
            ClientPart { index: 2, count: 4 }
        );
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", "1/99999"] {
            let e = bad.parse::<ClientPart>().unwrap_err();
            assert!(e.is_usage() && e.to_string().contains("I/N"), "{bad}: {e}");
        }
    }
}
