//! The sane maxima of the numbers a user gives: durations, thread and client
//! counts, tables, rows and rates. A suite's options struct declares a field
//! as `Option<Secs>`, `Option<Vec<Threads>>`, `Option<Rows>`, ... instead of
//! `f64` or `u64`, and both of its readers check it before anything runs: clap
//! (through [`FromStr`]) on the command line, exit 2 with one line, and serde
//! on a matrix file, with `file:line: field` (the matrix checks each option on
//! its own). [`crate::suite::set`] and [`crate::suite::set_all`] turn them back
//! into plain numbers for the suite's parameters. A value at its maximum is
//! large but harmless: it neither overflows a `Duration` nor makes rqps
//! allocate more than a run of that size needs.
//!
//! The minimum a suite needs (at least one thread, more than 0 seconds) stays
//! the suite's own check.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The longest duration option: a day, in seconds.
pub const MAX_SECS: f64 = 86_400.0;
/// The most client threads (or Insert Benchmark clients): connections rqps opens.
pub const MAX_THREADS: u64 = 4_096;
/// The most tables a suite creates.
pub const MAX_TABLES: u64 = 10_000;
/// The most rows per table, per client, or written per client.
pub const MAX_ROWS: u64 = 10_000_000_000;
/// The highest rate in rows (or statements) per second.
pub const MAX_RATE: u64 = 10_000_000;
/// The most repeats of a run (`--repeats`, a matrix's `repeats`).
pub const MAX_REPEATS: u64 = 1_000;

/// A number outside its bounds, as the one line that says the limit.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BoundError {
    #[error("'{0}' is not a number of seconds")]
    NotSecs(String),
    #[error("must be a number of seconds from 0 to {MAX_SECS} (a day), got {0:?}")]
    SecsRange(f64),
    #[error("must be at most {MAX_SECS} seconds (a day), got {0:?}")]
    SecsOver(f64),
    #[error("'{text}' is not a whole number from 0 to {max}")]
    NotCount { text: String, max: u64 },
    #[error("must be a whole number from 0 to {max}, got {got}")]
    Negative { max: u64, got: i64 },
    /// The digits as given, which may not fit in 64 bits.
    #[error("must be at most {max}, got {got}")]
    Over { max: u64, got: String },
    #[error("must be at least 1 second, got {0}")]
    TimeoutUnder(f64),
    #[error("'{0}' is not a percentage")]
    NotPercent(String),
    #[error("must be a percentage from 0 to 100, got {0}")]
    PercentRange(f64),
}

/// A duration in seconds: a number from 0 to [`MAX_SECS`].
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Secs(f64);

impl Secs {
    pub fn new(v: f64) -> Result<Secs, BoundError> {
        if !v.is_finite() || v < 0.0 {
            Err(BoundError::SecsRange(v))
        } else if v > MAX_SECS {
            Err(BoundError::SecsOver(v))
        } else {
            Ok(Secs(v))
        }
    }

    pub fn get(self) -> f64 {
        self.0
    }
}

impl FromStr for Secs {
    type Err = BoundError;
    fn from_str(s: &str) -> Result<Self, BoundError> {
        let v: f64 = s
            .trim()
            .parse()
            .map_err(|_| BoundError::NotSecs(s.to_string()))?;
        Secs::new(v)
    }
}

impl fmt::Display for Secs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<'de> Deserialize<'de> for Secs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Secs::new(f64::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl From<Secs> for f64 {
    fn from(s: Secs) -> f64 {
        s.0
    }
}

impl Serialize for Secs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

/// A timeout in seconds: from 1 to [`MAX_SECS`] (a shorter one would fail
/// statements that are merely slow).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Timeout(Secs);

impl Timeout {
    pub fn new(v: f64) -> Result<Timeout, BoundError> {
        let s = Secs::new(v)?;
        if v < 1.0 {
            return Err(BoundError::TimeoutUnder(v));
        }
        Ok(Timeout(s))
    }

    pub fn get(self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.0.get())
    }
}

impl FromStr for Timeout {
    type Err = BoundError;
    fn from_str(s: &str) -> Result<Self, BoundError> {
        Timeout::new(s.parse::<Secs>()?.get())
    }
}

impl fmt::Display for Timeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<'de> Deserialize<'de> for Timeout {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Timeout::new(f64::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl Serialize for Timeout {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// A share of all CPUs, in percent: from 0 to 100.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Percent(f64);

impl Percent {
    pub const fn new_const(v: f64) -> Percent {
        Percent(v)
    }

    pub fn new(v: f64) -> Result<Percent, BoundError> {
        if (0.0..=100.0).contains(&v) {
            Ok(Percent(v))
        } else {
            Err(BoundError::PercentRange(v))
        }
    }

    pub fn get(self) -> f64 {
        self.0
    }
}

impl FromStr for Percent {
    type Err = BoundError;
    fn from_str(s: &str) -> Result<Self, BoundError> {
        let v: f64 = s
            .trim()
            .parse()
            .map_err(|_| BoundError::NotPercent(s.to_string()))?;
        Percent::new(v)
    }
}

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<'de> Deserialize<'de> for Percent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Percent::new(f64::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl Serialize for Percent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

/// A whole number from 0 to `MAX`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Count<const MAX: u64>(u64);

/// Client threads or clients (connections).
pub type Threads = Count<MAX_THREADS>;
/// Tables.
pub type Tables = Count<MAX_TABLES>;
/// Rows per table or per client.
pub type Rows = Count<MAX_ROWS>;
/// Rows or statements per second.
pub type Rate = Count<MAX_RATE>;
/// Repeats of a run.
pub type Repeats = Count<MAX_REPEATS>;

impl<const MAX: u64> Count<MAX> {
    pub fn new(v: u64) -> Result<Self, BoundError> {
        if v > MAX {
            Err(BoundError::Over {
                max: MAX,
                got: v.to_string(),
            })
        } else {
            Ok(Count(v))
        }
    }

    pub fn get(self) -> u64 {
        self.0
    }
}

impl<const MAX: u64> FromStr for Count<MAX> {
    type Err = BoundError;
    fn from_str(s: &str) -> Result<Self, BoundError> {
        let t = s.trim();
        match t.parse::<u64>() {
            Ok(v) => Count::new(v),
            // Digits that do not fit in 64 bits are over the limit too.
            Err(_) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
                Err(BoundError::Over {
                    max: MAX,
                    got: t.to_string(),
                })
            }
            Err(_) => Err(BoundError::NotCount {
                text: s.to_string(),
                max: MAX,
            }),
        }
    }
}

impl<const MAX: u64> fmt::Display for Count<MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<const MAX: u64> Serialize for Count<MAX> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de, const MAX: u64> Deserialize<'de> for Count<MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = i64::deserialize(d)?;
        u64::try_from(v)
            .map_err(|_| BoundError::Negative { max: MAX, got: v })
            .and_then(Count::new)
            .map_err(serde::de::Error::custom)
    }
}

impl<const MAX: u64> From<Count<MAX>> for u64 {
    fn from(c: Count<MAX>) -> u64 {
        c.0
    }
}

impl<const MAX: u64> From<Count<MAX>> for usize {
    fn from(c: Count<MAX>) -> usize {
        usize::try_from(c.0).unwrap_or(usize::MAX)
    }
}

/// `--repeats N` as clap reads it: a whole number up to [`MAX_REPEATS`].
pub fn repeats(s: &str) -> Result<usize, BoundError> {
    s.parse::<Repeats>().map(usize::from)
}

/// Checks a number given outside an options struct (a matrix's `repeats`,
/// `cooldown_secs`): `Ok` or the one line that says the limit.
pub fn check_secs(v: f64) -> Result<f64, BoundError> {
    Secs::new(v).map(Secs::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_over_a_day_or_not_finite_are_refused_with_the_limit() {
        assert_eq!("3".parse::<Secs>().unwrap().get(), 3.0);
        assert_eq!("86400".parse::<Secs>().unwrap().get(), MAX_SECS);
        for bad in ["1e308", "1e19", "1e10", "86400.5", "inf", "NaN", "-1"] {
            let e = bad.parse::<Secs>().unwrap_err().to_string();
            assert!(e.contains("86400"), "{bad}: {e}");
        }
        assert_eq!(
            "x".parse::<Secs>().unwrap_err(),
            BoundError::NotSecs("x".into())
        );
    }

    #[test]
    fn counts_over_their_maximum_are_refused_with_the_limit() {
        assert_eq!("4096".parse::<Threads>().unwrap().get(), 4096);
        assert_eq!(
            "4097".parse::<Threads>().unwrap_err().to_string(),
            "must be at most 4096, got 4097"
        );
        assert_eq!(
            "99999999999999999999999"
                .parse::<Rows>()
                .unwrap_err()
                .to_string(),
            "must be at most 10000000000, got 99999999999999999999999"
        );
        assert!(matches!(
            "-1".parse::<Rows>().unwrap_err(),
            BoundError::NotCount { .. }
        ));
        assert!("1e3".parse::<Rows>().is_err());
    }

    #[test]
    fn matrix_values_are_checked_as_they_are_read() {
        #[derive(Deserialize, Debug)]
        struct O {
            n: Option<Repeats>,
            s: Option<Secs>,
        }
        let o = toml::from_str::<O>("n = 3\ns = 1.5").unwrap();
        assert!(o.n.is_some() && o.s.is_some(), "{o:?}");
        let e = |src: &str| toml::from_str::<O>(src).unwrap_err().message().to_string();
        assert!(e("n = 4294967296").contains("at most 1000"));
        assert!(e("n = -1").contains("from 0 to 1000"));
        assert!(e("s = -1").contains("from 0 to 86400"));
        assert!(e("s = 1e308").contains("at most 86400"));
        assert!(toml::from_str::<O>("n = 3\ns = 2").is_ok());
    }
}
