//! The smallest suite: every event is one `SELECT 1`. It measures the floor
//! of a round trip (client, wire and server cost of a statement that does
//! nothing), and it is the template for a new workload: one folder with an
//! options struct, a `Workload` impl, and one line in the registry. No other
//! file names it.

use crate::error::usage;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::engine::{Conn, DbError, DbResult, Driver, ErrorClass, PsMode, StmtId};
use crate::harness::measure::Counts;
use crate::harness::runner::{Worker, stop_requested};
use crate::harness::{Harness, Per, RunEnd, TestFailure, TimedStep, Timing};
use crate::results::TestResult;
use crate::suite::api::{RunBasics, Workload, set, set_all};
use crate::suite::bounds::{Secs, Threads};

/// The `SELECT 1` suite.
pub struct Select1;

/// What a user may set (`rqps run --suite select1 --flag`, or the matrix key).
#[derive(clap::Args, Serialize, Deserialize, Default, Debug, Clone)]
#[serde(deny_unknown_fields)]
#[command(next_help_heading = "select1 options (--suite select1)")]
pub struct Options {
    /// Client threads (one connection each); a list runs the test at each count.
    #[arg(long, value_delimiter = ',', value_name = "N,M,..")]
    #[serde(default, deserialize_with = "crate::suite::api::one_or_many")]
    pub threads: Option<Vec<Threads>>,
    /// Seconds the test is measured at each thread count.
    #[arg(long, value_name = "S")]
    pub secs: Option<Secs>,
    /// Seconds of warm-up before each measurement, excluded from its statistics.
    #[arg(long, value_name = "S")]
    pub warmup_secs: Option<Secs>,
}

/// Checked parameters, stored with every result.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Params {
    pub profile: String,
    pub threads: Vec<usize>,
    pub secs: f64,
    pub warmup_secs: f64,
}

impl Workload for Select1 {
    const NAME: &'static str = "select1";
    const ABOUT: &'static str =
        "one SELECT 1 per event: the round-trip floor of client, wire and server";
    const PROFILES: &'static [&'static str] = &["quick", "ci"];
    type Options = Options;
    const ROLES: &'static [(crate::suite::api::Role, &'static str)] = {
        use crate::suite::api::Role;
        &[
            (Role::Clients, "threads"),
            (Role::MeasuredSecs, "secs"),
            (Role::WarmupSecs, "warmup-secs"),
        ]
    };
    type Params = Params;
    const UNITS: crate::harness::Units = crate::harness::Units {
        event: "statement",
        per_op: "statement",
    };
    const WORKLOAD: &'static [&'static str] = &["secs"];

    fn params(common: &RunBasics, o: Options) -> Result<Params, crate::error::Error> {
        let (secs, warmup_secs) = if common.profile == "ci" {
            (0.5, 0.1)
        } else {
            (5.0, 1.0)
        };
        let mut p = Params {
            profile: common.profile.clone(),
            threads: vec![1],
            secs,
            warmup_secs,
        };
        set_all(&mut p.threads, o.threads);
        set(&mut p.secs, o.secs);
        set(&mut p.warmup_secs, o.warmup_secs);
        if p.threads.is_empty() || p.threads.contains(&0) {
            return Err(usage(
                "--threads must list thread counts of at least 1, e.g. --threads 1,2",
            ));
        }
        if !(p.secs.is_finite() && p.secs > 0.0 && p.secs <= 86_400.0) {
            return Err(usage(format!(
                "--secs must be a number of seconds in (0, 86400], got {:?}",
                p.secs
            )));
        }
        if !(p.warmup_secs.is_finite() && (0.0..=86_400.0).contains(&p.warmup_secs)) {
            return Err(usage(format!(
                "--warmup-secs must be a number of seconds in [0, 86400], got {:?}",
                p.warmup_secs
            )));
        }
        Ok(p)
    }

    fn step_count(p: &Params) -> usize {
        p.threads.len()
    }

    fn estimate_secs(p: &Params) -> f64 {
        p.threads.len() as f64 * (p.secs + p.warmup_secs)
    }

    fn describe(p: &Params) -> String {
        p.threads
            .iter()
            .map(|t| {
                format!(
                    "select1 t{t}: {:.1} s warm-up, {:.1} s measured\n",
                    p.warmup_secs, p.secs
                )
            })
            .collect()
    }

    fn need(p: &Params) -> crate::suite::api::Need {
        let threads = p.threads.iter().copied().max().unwrap_or(1);
        crate::suite::api::Need {
            connections: threads,
            prepared: threads,
            who: format!("{threads} select1 threads"),
            fewer: "run fewer threads".into(),
        }
    }

    fn run(p: &Params, h: &mut Harness<'_>) -> Result<RunEnd, crate::error::Error> {
        let mut end = RunEnd::Ok;
        for &threads in &p.threads {
            if stop_requested() {
                return Ok(RunEnd::Interrupted);
            }
            let r = h.test(
                format!("select1 t{threads}"),
                TestResult::running(
                    Self::NAME,
                    "select1".into(),
                    "select",
                    threads,
                    true,
                    "statements/s",
                ),
                |run| {
                    let mut workers = (0..threads)
                        .map(|_| Pinger::new(run.driver.clone()))
                        .collect::<DbResult<Vec<_>>>()
                        .map_err(TestFailure::when("could not start the test"))?;
                    let timing = Timing::measured(p.warmup_secs, p.secs);
                    run.timed(&mut workers, TimedStep::new(timing, Per::Statement));
                    Ok(())
                },
            )?;
            if !end.after(&r) {
                break;
            }
        }
        Ok(end)
    }

    /// Three `SELECT 1`s on one connection, and nothing to load.
    fn compat(_p: &Params) -> Option<crate::suite::api::CompatPlan> {
        Some(crate::suite::api::CompatPlan {
            load_what: "no tables".into(),
            load: Box::new(|_| Ok(())),
            tables: Vec::new(),
            tests: vec![crate::suite::api::CompatTest {
                at_once: None,
                name: "select1".into(),
                also: Vec::new(),
                writes: Vec::new(),
                events: 3,
                worker: Box::new(|d| Ok(Box::new(Pinger::new(d.clone())?) as _)),
            }],
            concurrent: None,
        })
    }
}

/// One connection sending `SELECT 1`.
struct Pinger {
    driver: Arc<dyn Driver>,
    conn: Box<dyn Conn>,
    stmt: StmtId,
}

impl Pinger {
    fn new(driver: Arc<dyn Driver>) -> DbResult<Self> {
        let mut conn = driver.require_sql()?.connect()?;
        let stmt = conn.prepare("SELECT 1", PsMode::Auto)?;
        Ok(Pinger { driver, conn, stmt })
    }
}

impl Worker for Pinger {
    #[inline]
    fn event(&mut self, c: &mut Counts) -> DbResult<()> {
        let o = self.conn.execute(self.stmt, &[])?;
        c.record(o);
        Ok(())
    }

    fn recover(&mut self, err: &DbError) -> DbResult<()> {
        match err.class {
            ErrorClass::Retry => Ok(()),
            ErrorClass::Reconnect => {
                self.conn = self.driver.require_sql()?.connect()?;
                self.stmt = self.conn.prepare("SELECT 1", PsMode::Auto)?;
                Ok(())
            }
            ErrorClass::Fatal => Err(err.clone()),
        }
    }
}
