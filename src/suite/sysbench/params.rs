//! The sysbench suite's parameters: named profiles, and every override
//! applied and checked before anything touches a database.

use crate::error::usage;
use serde::{Deserialize, Serialize};

use super::catalog::{self, Order, Span, TestDef};
use super::rng::{SbDist, SbRandParams, SbRandType};
use crate::engine::PsMode;

/// Parameters of a sysbench run, as stored with every result.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SysbenchParams {
    pub profile: String,
    pub list: Order,
    pub tables: usize,
    pub table_size: u64,
    pub threads: Vec<usize>,
    pub read_secs: f64,
    pub write_secs: f64,
    /// Duration of the unreported warm-up steps (`scan.warm`, `point-query.warm`, ...).
    pub warm_secs: f64,
    /// Warm-up at the start of every test, excluded from its statistics.
    pub warmup_secs: f64,
    /// Sleep budget of the settle step after the load and the write block.
    pub settle_secs: f64,
    /// Events each measured test completes, all threads together
    /// (sysbench's `--events`), at most: the test ends at them or at its
    /// time, whichever first (its events alone when its time is 0). `None`:
    /// time alone; null in results stored before it existed.
    #[serde(default)]
    pub events: Option<u64>,
    /// The distribution of ids (`--rand-type`): rqps's default is uniform,
    /// sysbench 1.0.20's is special.
    pub rand_type: SbRandType,
    /// The parameters of the distributions (`rand_spec_iter`, ...), stored
    /// as keys of their own; absent in results stored before they existed
    /// (those runs drew uniform, zipfian 0.8 or pareto 0.2: the defaults).
    #[serde(flatten)]
    pub rand: SbRandParams,
    /// sysbench's `--rand-seed` the run's streams are: thread i draws what
    /// sysbench's i-th thread draws with this seed. 0 when none was given
    /// (the streams' seed is then made from the run's `seed`, recorded but
    /// not compared: two runs of one command are repeats), and in results
    /// stored before it existed.
    #[serde(default)]
    pub rand_seed: u32,
    pub ps_mode: PsMode,
    pub skip_prepare: bool,
    /// No BEGIN/COMMIT around the events of read-only, read-write and write-only
    /// (sysbench's `--skip_trx`); absent in results stored before it existed.
    #[serde(default)]
    pub skip_trx: bool,
    /// A client part's share of the tables (`--part I/N` when N divides
    /// `tables`): the first and how many. Not stored: a merged run used them all.
    #[serde(skip)]
    pub part_tables: Option<(usize, usize)>,
    /// The tests asked for with `--tests`, or empty for the whole order.
    pub tests: Vec<String>,
    pub seed: u64,
    /// A sysbench Lua script run instead of the tests (`--script`), as it
    /// ran: recorded with the run (a drawn seed included), not compared
    /// (`script_line` is); null without one.
    #[serde(default, rename = "script_plan")]
    pub script: Option<super::lua::ScriptPlan>,
    /// The script run as its experiment, one short line
    /// ([`super::script_line`]), stored as `script`; null without one, so
    /// that it is a parameter of every run.
    #[serde(default, rename = "script")]
    pub script_line: Option<String>,
}

/// A `--rand-seed` made from rqps's 64-bit seed: 31 bits, not 0, so that
/// sysbench takes it as it is (its `--rand-seed` is a C int, 0 meaning the
/// clock).
pub fn rand_seed_from(seed: u64) -> u32 {
    match ((seed ^ (seed >> 32)) as u32) & 0x7FFF_FFFF {
        0 => 1,
        s => s,
    }
}

pub fn profile(name: &str) -> Option<SysbenchParams> {
    let base = |tables, table_size, threads: Vec<usize>, read, write, warm, warmup, settle| {
        SysbenchParams {
            profile: name.to_string(),
            list: Order::Current,
            tables,
            table_size,
            threads,
            read_secs: read,
            write_secs: write,
            warm_secs: warm,
            warmup_secs: warmup,
            settle_secs: settle,
            events: None,
            rand_type: SbRandType::Uniform,
            rand: SbRandParams::default(),
            rand_seed: 0,
            ps_mode: PsMode::Auto,
            skip_prepare: false,
            skip_trx: false,
            part_tables: None,
            tests: Vec::new(),
            seed: 0,
            script: None,
            script_line: None,
        }
    };
    Some(match name {
        // The whole current order on embedded SQLite in about 3 minutes on 2 cores.
        "quick" => base(1, 100_000, vec![1], 3.0, 3.0, 2.0, 1.0, 1.0),
        // Seconds per test, for the test suite.
        "ci" => base(2, 2_000, vec![1], 1.0, 1.0, 0.3, 0.2, 0.0),
        // The reference's sizes (reference §1.2): 1 table of 50M rows, 1 client,
        // 600 s reads and 900 s writes, 60 s scan warm-ups, settle 60 s + 1 s per million rows.
        "small-server" => base(1, 50_000_000, vec![1], 600.0, 900.0, 60.0, 5.0, 110.0),
        // 8 tables of 10M rows, 16 clients.
        "large-server" => base(8, 10_000_000, vec![16], 600.0, 900.0, 60.0, 5.0, 140.0),
        _ => return None,
    })
}

impl SysbenchParams {
    /// The tables the events use: (first, how many).
    pub fn event_tables(&self) -> (usize, usize) {
        self.part_tables.unwrap_or((1, self.tables))
    }

    /// The duration of a step.
    pub fn secs(&self, span: Span) -> f64 {
        match span {
            Span::Read => self.read_secs,
            Span::Write => self.write_secs,
            Span::Warm => self.warm_secs,
        }
    }

    /// The distribution of ids with its parameters.
    pub fn dist(&self) -> Result<SbDist, crate::error::Error> {
        SbDist::new(self.rand_type, self.rand).map_err(usage)
    }

    /// The seed of the streams: `rand_seed`, or for results stored before
    /// it, one made from `seed` as a run makes it ([`rand_seed_from`]).
    pub fn glibc_seed(&self) -> u32 {
        match self.rand_seed {
            0 => rand_seed_from(self.seed),
            s => s,
        }
    }

    /// Checks the parameters and returns the steps to run, or one line saying what is wrong.
    pub fn steps(&self) -> Result<Vec<TestDef>, crate::error::Error> {
        if self.tables == 0 {
            return Err(usage("--tables must be at least 1"));
        }
        if self.table_size == 0 {
            return Err(usage(
                "--table-size must be at least 1 (zero rows cannot be queried)",
            ));
        }
        if self.table_size > u32::MAX as u64 {
            return Err(usage(format!(
                "--table-size must be at most {} (sysbench draws ids as 32-bit numbers)",
                u32::MAX
            )));
        }
        self.dist()?;
        if self.threads.is_empty() || self.threads.contains(&0) {
            return Err(usage(
                "--threads must list thread counts of at least 1, e.g. --threads 1,2,4",
            ));
        }
        for (name, v) in [
            ("--read-secs", self.read_secs),
            ("--write-secs", self.write_secs),
            ("--warm-secs", self.warm_secs),
            ("--warmup-secs", self.warmup_secs),
            ("--settle-secs", self.settle_secs),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(usage(format!(
                    "{name} must be a number of seconds >= 0, got {v}"
                )));
            }
        }
        if (self.read_secs == 0.0 || self.write_secs == 0.0) && self.events.is_none() {
            return Err(usage(
                "--read-secs and --write-secs must be more than 0, or 0 with --events N (each test then ends at its N events, as sysbench's --time=0)",
            ));
        }
        if self.tests.is_empty() {
            return Ok(catalog::order(self.list));
        }
        catalog::select(self.list, &self.tests).map_err(|unknown| {
            let list = match self.list {
                Order::Current => "current",
                Order::Classic => "classic",
            };
            let names: Vec<String> = catalog::order(self.list)
                .into_iter()
                .map(|t| t.name)
                .collect();
            // Each unknown name with the test it most likely means.
            let unknown: Vec<String> = unknown
                .iter()
                .map(|u| {
                    let hint = crate::util::suggest::hint(u, names.iter().map(String::as_str));
                    format!("{u}{hint}")
                })
                .collect();
            usage(format!(
                "unknown test{} {} in the {list} list: `rqps tests --list {list}` lists the names",
                if unknown.len() > 1 { "s" } else { "" },
                unknown.join(", ")
            ))
        })
    }

    /// Estimated seconds the suite takes, load and settle excluded.
    pub fn estimate_secs(&self, steps: &[TestDef]) -> f64 {
        steps
            .iter()
            .map(|t| {
                let runs = if t.threads_per_table {
                    1
                } else {
                    self.threads.len()
                };
                runs as f64 * (self.secs(t.span) + self.warmup_secs)
            })
            .sum::<f64>()
            + self.settle_secs * steps.iter().filter(|t| t.settle_after).count() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_profile_takes_about_three_minutes() {
        let p = profile("quick").unwrap();
        let steps = p.steps().unwrap();
        let est = p.estimate_secs(&steps);
        assert!((120.0..200.0).contains(&est), "{est}");
        let ci = profile("ci").unwrap();
        assert!(ci.estimate_secs(&ci.steps().unwrap()) < 60.0);
    }

    #[test]
    fn bad_values_are_refused_with_a_reason() {
        let mut p = profile("ci").unwrap();
        p.table_size = 0;
        assert!(p.steps().unwrap_err().to_string().contains("--table-size"));
        let mut p = profile("ci").unwrap();
        p.tests = vec!["point-query".into(), "bogus".into()];
        assert!(p.steps().unwrap_err().to_string().contains("bogus"));
        let mut p = profile("ci").unwrap();
        p.threads = vec![1, 0];
        assert!(p.steps().is_err());
        let mut p = profile("ci").unwrap();
        p.table_size = 1 << 32;
        assert!(p.steps().unwrap_err().to_string().contains("32-bit"));
        let mut p = profile("ci").unwrap();
        p.rand.rand_spec_pct = 150;
        assert!(
            p.steps()
                .unwrap_err()
                .to_string()
                .contains("--rand-spec-pct")
        );
        assert!(profile("huge").is_none());
    }

    #[test]
    fn results_stored_before_the_distribution_parameters_load_with_sysbench_s_defaults() {
        let mut v = serde_json::to_value(profile("ci").unwrap()).unwrap();
        let o = v.as_object_mut().unwrap();
        for k in [
            "rand_spec_iter",
            "rand_spec_pct",
            "rand_spec_res",
            "rand_pareto_h",
            "rand_zipfian_exp",
            "rand_seed",
        ] {
            assert!(o.remove(k).is_some(), "{k} is stored");
        }
        o.insert("rand_type".into(), "zipfian".into());
        let p: SysbenchParams = serde_json::from_value(v).unwrap();
        assert_eq!(p.rand_type, SbRandType::Zipfian);
        assert_eq!(p.rand, SbRandParams::default());
        assert_eq!((p.rand_seed, p.glibc_seed()), (0, rand_seed_from(p.seed)));
        assert!((1..=i32::MAX as u32).contains(&rand_seed_from(0)));
    }
}
