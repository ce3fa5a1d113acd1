//! The sysbench suite's parameters: named profiles, and every override
//! applied and checked before anything touches a database.

use crate::error::usage;
use serde::{Deserialize, Serialize};

use super::catalog::{self, Order, Span, TestDef};
use crate::engine::PsMode;
use crate::suite::rand::RandType;

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
    pub rand_type: RandType,
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
    /// A sysbench Lua script run instead of the tests (`--script`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<super::lua::ScriptPlan>,
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
            rand_type: RandType::Uniform,
            ps_mode: PsMode::Auto,
            skip_prepare: false,
            skip_trx: false,
            part_tables: None,
            tests: Vec::new(),
            seed: 0,
            script: None,
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
        if self.read_secs == 0.0 || self.write_secs == 0.0 {
            return Err(usage("--read-secs and --write-secs must be more than 0"));
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
        assert!(profile("huge").is_none());
    }
}
