//! TPC-C, the order-entry benchmark, as go-tpc, tpcc-mysql and BenchBase run
//! it: nine tables loaded per warehouse, terminals each bound to a home
//! warehouse running New-Order, Payment, Order-Status, Delivery and
//! Stock-Level in the 45/43/4/4/4 mix with no keying or think time (unless
//! asked), and the consistency conditions checked after every run.
//!
//! `draw` draws the values (NURand, last names, the mix), `schema` declares
//! the tables, `load` fills them, `txn` is a terminal, `check` the
//! consistency conditions. Not an audited TPC-C result: see the README.

use crate::error::usage;

pub mod check;
pub mod compat;
pub mod detail;
pub mod draw;
pub mod load;
pub mod report;
pub mod schema;
pub mod txn;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::engine::{Driver, PsMode};
use crate::error::Error;
use crate::harness::runner::stop_requested;
use crate::harness::{Harness, MixMember, Per, RunEnd, TestFailure, TimedStep, Timing, Verdict};
use crate::results::{Status, TestResult};
use crate::suite::api::{RunBasics, Workload, set};

pub use detail::{Detail, KEY, KindDetail};
use draw::KINDS;
use txn::{Terminal, TerminalConfig};

/// The TPC-C suite.
pub struct Tpcc;

/// What a user may set (`rqps run --suite tpcc --flag`, or the matrix key).
#[derive(clap::Args, Serialize, Deserialize, Default, Debug, Clone)]
#[serde(deny_unknown_fields)]
#[command(next_help_heading = "tpcc options (--suite tpcc)")]
pub struct Options {
    /// Warehouses (each about 500,000 rows, 70 MB).
    #[arg(long, value_name = "W")]
    pub warehouses: Option<u32>,
    /// Terminals: client threads, one connection each; terminal i has home
    /// warehouse i mod W + 1.
    #[arg(long, value_name = "T")]
    pub terminals: Option<usize>,
    /// Seconds the run is measured.
    #[arg(long, value_name = "S")]
    pub secs: Option<f64>,
    /// Seconds of warm-up before the measurement, excluded from its statistics.
    #[arg(long, value_name = "S")]
    pub warmup_secs: Option<f64>,
    /// Keying and think times of the TPC-C specification (18/3/2/2/2 s keying,
    /// 12/12/10/5/5 s mean think); off by default.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub keying: Option<bool>,
    /// Isolation level of every terminal's session: read-uncommitted,
    /// read-committed, repeatable-read or serializable (default: the engine's;
    /// the level in effect is recorded either way).
    #[arg(long, value_name = "LEVEL")]
    pub isolation: Option<String>,
    /// auto (server-side prepared statements) or disable (text).
    #[arg(long, value_name = "MODE")]
    pub ps_mode: Option<String>,
    /// Use the tables already in the target instead of loading them.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub skip_load: Option<bool>,
    /// Only check the consistency conditions of the tables in the target.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub check_only: Option<bool>,
}

/// Checked parameters, stored with every result.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Params {
    pub profile: String,
    pub warehouses: u32,
    pub terminals: usize,
    pub secs: f64,
    pub warmup_secs: f64,
    pub keying: bool,
    /// The level asked for, in SQL's words; `None`: the engine's default.
    pub isolation: Option<String>,
    pub ps_mode: PsMode,
    pub skip_load: bool,
    pub check_only: bool,
    pub seed: u64,
    /// How terminals pick their warehouse (recorded, as the spec asks).
    pub terminal_binding: String,
}

/// (profile, warehouses, terminals, secs, warm-up secs)
const PROFILES: [(&str, u32, usize, f64, f64); 4] = [
    ("quick", 2, 4, 100.0, 10.0),
    ("ci", 1, 2, 3.0, 0.5),
    ("small-server", 10, 10, 600.0, 60.0),
    ("large-server", 100, 64, 1800.0, 120.0),
];

fn isolation_sql_name(v: &str) -> Result<String, Error> {
    match v.to_ascii_lowercase().replace('_', "-").as_str() {
        "read-uncommitted" => Ok("READ UNCOMMITTED".into()),
        "read-committed" => Ok("READ COMMITTED".into()),
        "repeatable-read" => Ok("REPEATABLE READ".into()),
        "serializable" => Ok("SERIALIZABLE".into()),
        _ => Err(usage(format!(
            "--isolation must be read-uncommitted, read-committed, repeatable-read or serializable, got '{v}'"
        ))),
    }
}

impl Workload for Tpcc {
    const NAME: &'static str = KEY;
    const ABOUT: &'static str =
        "TPC-C order entry: five transactions 45/43/4/4/4, tpmC, consistency checked";
    type Options = Options;
    const ROLES: &'static [(crate::suite::api::Role, &'static str)] = {
        use crate::suite::api::Role;
        &[
            (Role::Clients, "terminals"),
            (Role::MeasuredSecs, "secs"),
            (Role::WarmupSecs, "warmup-secs"),
        ]
    };
    type Params = Params;
    // Terminals are the thread counts, compared cell by cell; the isolation
    // level is a setting a comparison may be about.
    const UNITS: crate::harness::Units = crate::harness::Units {
        event: "transaction",
        per_op: "transaction",
    };
    const TREATMENTS: &'static [&'static str] = &["ps_mode"];
    const WORKLOAD: &'static [&'static str] = &["warehouses", "secs", "keying", "terminal_binding"];

    fn params(common: &RunBasics, o: Options) -> Result<Params, Error> {
        let &(_, w, t, secs, warm) = PROFILES
            .iter()
            .find(|p| p.0 == common.profile)
            .unwrap_or(&PROFILES[0]);
        let mut p = Params {
            profile: common.profile.clone(),
            warehouses: w,
            terminals: t,
            secs,
            warmup_secs: warm,
            keying: false,
            isolation: None,
            ps_mode: PsMode::Auto,
            skip_load: false,
            check_only: false,
            seed: common.seed,
            terminal_binding: "home warehouse per terminal (i mod W + 1), district (i / W) mod 10 + 1 for Stock-Level".into(),
        };
        set(&mut p.warehouses, o.warehouses);
        set(&mut p.terminals, o.terminals);
        set(&mut p.secs, o.secs);
        set(&mut p.warmup_secs, o.warmup_secs);
        set(&mut p.keying, o.keying);
        set(&mut p.skip_load, o.skip_load);
        set(&mut p.check_only, o.check_only);
        if let Some(i) = &o.isolation {
            p.isolation = Some(isolation_sql_name(i)?);
        }
        if let Some(m) = &o.ps_mode {
            p.ps_mode = crate::suite::api::ps_mode(m)?;
        }
        if !(1..=100_000).contains(&p.warehouses) {
            return Err(usage(format!(
                "--warehouses must be between 1 and 100000, got {}",
                p.warehouses
            )));
        }
        if !(1..=10_000).contains(&p.terminals) {
            return Err(usage(format!(
                "--terminals must be between 1 and 10000, got {}",
                p.terminals
            )));
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
        if p.check_only { 1 } else { 7 }
    }

    fn estimate_secs(p: &Params) -> f64 {
        if p.check_only {
            0.0
        } else {
            p.secs + p.warmup_secs
        }
    }

    /// About 70 MB per warehouse once loaded (TPC-C's tables and indexes).
    fn load_bytes(p: &Params) -> u64 {
        if p.skip_load || p.check_only {
            return 0;
        }
        u64::from(p.warehouses).saturating_mul(70_000_000)
    }

    fn describe(p: &Params) -> String {
        let mut s = String::new();
        if !p.check_only {
            if !p.skip_load {
                s.push_str(&format!(
                    "load: {} warehouse(s), about {} rows, secondary indexes after\n",
                    p.warehouses,
                    load::expected_rows(p.warehouses)
                ));
            }
            s.push_str(&format!(
                "tpmC: {} terminal(s), {:.1} s warm-up, {:.1} s measured, mix 45/43/4/4/4, keying and think time {}\n",
                p.terminals,
                p.warmup_secs,
                p.secs,
                if p.keying { "on" } else { "off" }
            ));
            for k in KINDS {
                s.push_str(&format!(
                    "{k}: transactions/s of that kind in the same run\n"
                ));
            }
        }
        s.push_str("consistency: conditions 1-10 and 12\n");
        s
    }

    fn need(p: &Params) -> crate::suite::api::Need {
        // The load runs one connection per CPU, at most one per warehouse
        // and the item catalogue.
        let loaders = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .min(p.warehouses as usize + 1);
        let connections = p.terminals.max(loaders);
        crate::suite::api::Need {
            connections,
            // A terminal prepares about 80 statements (one per order size).
            prepared: 100 * connections,
            who: format!("{} TPC-C terminals", p.terminals),
            fewer: "run fewer terminals".into(),
        }
    }

    fn run(p: &Params, h: &mut Harness<'_>) -> Result<RunEnd, Error> {
        // An isolation level the engine does not have is bad input: refused
        // before anything is loaded.
        let single_level = h
            .driver
            .sql()
            .is_some_and(|db| db.dialect().only_isolation().is_some());
        if p.isolation.is_some()
            && !p.check_only
            && single_level
            && let Err(e) = isolation(h.driver.as_ref(), p)
        {
            return Err(usage(e));
        }
        let mut end = RunEnd::Ok;
        if !p.check_only {
            if !p.skip_load {
                match load_tables(p, h) {
                    Err(_) if stop_requested() => return Ok(RunEnd::Interrupted),
                    r => r?,
                }
            }
            if stop_requested() {
                return Ok(RunEnd::Interrupted);
            }
            let r = run_terminals(p, h)?;
            store_kinds(h, &r)?;
            if !end.after(&r) {
                return Ok(end);
            }
        }
        let result = TestResult::running(
            Self::NAME,
            "consistency".into(),
            "tpcc",
            1,
            false,
            "conditions/s",
        );
        let r = h.check("consistency", result, "condition", |run| {
            let db = run
                .driver
                .require_sql()
                .map_err(TestFailure::when("the consistency check could not run"))?;
            let mut conn = db
                .connect()
                .map_err(TestFailure::when("the consistency check could not run"))?;
            let rep = check::run(conn.as_mut())
                .map_err(TestFailure::when("the consistency check could not run"))?;
            run.result.set_detail("tpcc_consistency", &rep);
            Ok(Verdict {
                checked: rep.conditions.len() as u64,
                violation: rep.first_violation(),
            })
        })?;
        end.after(&r);
        Ok(end)
    }

    fn report() -> Option<&'static dyn crate::report::section::Section> {
        Some(&report::SECTION)
    }

    fn compat(p: &Params) -> Option<crate::suite::api::CompatPlan> {
        Some(compat::plan(&compat::Shape {
            warehouses: p.warehouses,
            seed: p.seed,
            ps_mode: p.ps_mode,
        }))
    }

    fn line(label: &str, r: &TestResult) -> String {
        match r.detail::<Detail>("tpcc") {
            Some(d) if r.status == Status::Ok => {
                // Efficiency (tpmC against the 12.86 x W a keyed run can reach)
                // means something only with keying and think times; without
                // them it reads 63608.5 %, so it is left out.
                let efficiency = if d.keying {
                    format!("  efficiency {:>6.1} %", d.efficiency_pct)
                } else {
                    String::new()
                };
                let mut s = format!(
                    "{label:>28}  tpmC {:>10.1}  tpmTotal {:>10.1}{efficiency}  isolation {}",
                    d.tpmc, d.tpm_total, d.isolation
                );
                if let Some(hw) = &r.hw {
                    let f = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0}"));
                    s.push_str(&format!(
                        "  cpu/tx {} us (client {}, server {})",
                        f(hw.cpu_us_per_op),
                        f(hw.client_cpu_us_per_op),
                        f(hw.server_cpu_us_per_op)
                    ));
                }
                for (k, v) in &d.kinds {
                    s.push_str(&format!(
                        "\n{k:>28}  {:>8} tx {:>8.1}/s  retries {}  errors {}  rollbacks {}  p50 {:.2} p90 {:.2} p99 {:.2} max {:.2} ms",
                        v.count,
                        v.per_sec,
                        v.retries,
                        v.errors,
                        v.rollbacks,
                        v.latency_ms["p50"],
                        v.latency_ms["p90"],
                        v.latency_ms["p99"],
                        v.latency_ms["max"]
                    ));
                }
                s
            }
            _ if r.test == "consistency" && r.status == Status::Ok => {
                format!("{label:>28}  conditions 1-10 and 12 hold ({:.1} s)", r.secs)
            }
            _ => crate::harness::result_line(label, r),
        }
    }
}

fn load_tables(p: &Params, h: &mut Harness<'_>) -> Result<(), Error> {
    h.load(
        "load",
        load::expected_rows(p.warehouses),
        |driver, progress| {
            load::load(driver.as_ref(), p.warehouses, p.seed, &mut |n| {
                progress.done(n)
            })
            .map_err(|source| Error::Engine {
                context: "loading the TPC-C tables failed".into(),
                source,
            })
        },
        |stats| {
            format!(
                "loaded {} warehouse(s): {} rows in {:.1} s ({:.0} rows/s; indexes {:.1} s)",
                p.warehouses, stats.rows, stats.secs, stats.rows_per_sec, stats.index_secs
            )
        },
    )?;
    Ok(())
}

/// Why the terminals' isolation level cannot be set.
#[derive(Debug, thiserror::Error)]
enum IsolationError {
    /// The engine has one level, and another was asked for.
    #[error("{engine} runs every transaction {only}: leave out --isolation or give {}", only.to_ascii_lowercase())]
    OnlyLevel {
        engine: &'static str,
        only: &'static str,
    },
    #[error(transparent)]
    Engine(#[from] crate::engine::DbError),
    #[error("the engine refused {sql}: {source}")]
    Refused {
        sql: String,
        #[source]
        source: crate::engine::DbError,
    },
}

/// The isolation statement for the terminals' sessions, and the level in
/// effect as the engine reports it.
fn isolation(driver: &dyn Driver, p: &Params) -> Result<(Option<String>, String), IsolationError> {
    let db = driver.require_sql()?;
    let d = db.dialect();
    let set_sql = match (&p.isolation, d.only_isolation()) {
        (None, _) => None,
        (Some(want), Some(only)) if want == only => None,
        (Some(_), Some(only)) => {
            return Err(IsolationError::OnlyLevel {
                engine: driver.engine(),
                only,
            });
        }
        (Some(want), None) => d.session_isolation(want),
    };
    if let Some(only) = d.only_isolation() {
        return Ok((None, only.to_string()));
    }
    let mut conn = db.connect()?;
    if let Some(sql) = &set_sql {
        conn.query(sql).map_err(|source| IsolationError::Refused {
            sql: sql.clone(),
            source,
        })?;
    }
    let level = d
        .isolation_sql()
        .iter()
        .find_map(|q| conn.query_scalar(q).ok().flatten())
        .unwrap_or_else(|| "unknown".into());
    Ok((set_sql, level))
}

fn ms(h: &hdrhistogram::Histogram<u64>, q: f64) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    let v = if q >= 100.0 {
        h.max()
    } else {
        h.value_at_quantile(q / 100.0)
    };
    v as f64 / 1e6
}

fn run_terminals(p: &Params, h: &mut Harness<'_>) -> Result<TestResult, Error> {
    h.test(
        "tpmC".into(),
        TestResult::running(Tpcc::NAME, "tpmC".into(), "tpcc", p.terminals, true, "tpmC"),
        |run| {
            let (isolation_sql, level) = isolation(run.driver.as_ref(), p)
                .map_err(TestFailure::when("could not set the isolation level"))?;
            let measuring = Arc::new(AtomicBool::new(false));
            let writer = run
                .driver
                .caps()
                .single_writer
                .then(|| Arc::new(Mutex::new(())));
            let w = p.warehouses as i64;
            let mut terms = (0..p.terminals)
                .map(|i| {
                    Terminal::new(
                        run.driver.clone(),
                        TerminalConfig {
                            warehouses: w,
                            home_w: i as i64 % w + 1,
                            home_d: (i as i64 / w) % draw::DISTRICTS + 1,
                            seed: p.seed.wrapping_add(i as u64 * 7919),
                            keying: p.keying,
                            isolation_sql: isolation_sql.clone(),
                            ps_mode: p.ps_mode,
                            writer: writer.clone(),
                            measuring: measuring.clone(),
                            only: None,
                        },
                    )
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(TestFailure::when("could not start the terminals"))?;
            let timing = Timing::measured(p.warmup_secs, p.secs);
            let step = run.timed(&mut terms, TimedStep::new(timing, Per::Event));
            let minutes = step.secs.max(1e-9) / 60.0;
            let events = step.counts.events;
            let new_orders = step.kinds.first().map_or(0, |k| k.events);
            let hw = run.result.hw.clone();
            let mut kinds = BTreeMap::new();
            for (i, k) in step.kinds.iter().enumerate() {
                let mut hist = gen_hist();
                let (mut retries, mut rollbacks) = (0, 0);
                for t in &terms {
                    let _ = hist.add(&t.tally[i].hist);
                    retries += t.tally[i].retries;
                    rollbacks += t.tally[i].rollbacks;
                }
                let latency_ms = [
                    ("p50", 50.0),
                    ("p90", 90.0),
                    ("p95", 95.0),
                    ("p99", 99.0),
                    ("p99.9", 99.9),
                    ("max", 100.0),
                ]
                .iter()
                .map(|(n, q)| (n.to_string(), ms(&hist, *q)))
                .collect();
                kinds.insert(
                    KINDS[i].to_string(),
                    KindDetail {
                        count: k.events,
                        per_sec: k.events as f64 / step.secs.max(1e-9),
                        share_pct: k.events as f64 * 100.0 / events.max(1) as f64,
                        retries,
                        errors: k.errors,
                        rollbacks,
                        latency_ms,
                    },
                );
            }
            let tpmc = new_orders as f64 / minutes;
            let mut per_no = BTreeMap::new();
            if let Some(hw) = &hw {
                let f = events as f64 / new_orders.max(1) as f64;
                for (k, v) in [
                    ("cpu_us", hw.cpu_us_per_op),
                    ("server_cpu_us", hw.server_cpu_us_per_op),
                    ("client_cpu_us", hw.client_cpu_us_per_op),
                    ("cs", hw.cs_per_op),
                    ("reads", hw.reads_per_op),
                    ("rkb", hw.rkb_per_op),
                    ("wkb", hw.wkb_per_op),
                ] {
                    if let Some(v) = v {
                        per_no.insert(k.to_string(), v * f);
                    }
                }
            }
            let d = Detail {
                tpmc,
                tpm_total: events as f64 / minutes,
                efficiency_pct: tpmc / (12.86 * p.warehouses as f64) * 100.0,
                warehouses: p.warehouses,
                terminals: p.terminals,
                isolation: level,
                keying: p.keying,
                kinds,
                hw_per_new_order: per_no,
            };
            run.result.qps = d.tpmc;
            run.result.set_detail("tpcc", &d);
            Ok(())
        },
    )
}

fn gen_hist() -> hdrhistogram::Histogram<u64> {
    crate::harness::measure::new_histogram()
}

/// One result per transaction kind (its transactions per second), as
/// tpmC is compared; the test's line already shows them.
fn store_kinds(h: &mut Harness<'_>, main: &TestResult) -> Result<(), Error> {
    let Some(d) = main.detail::<Detail>("tpcc") else {
        return Ok(());
    };
    for k in KINDS {
        let Some(kd) = d.kinds.get(k) else { continue };
        h.store_member(
            main,
            MixMember {
                name: k.to_string(),
                group: "tpcc transactions",
                count: kd.count,
                per_sec: kd.per_sec,
                errors: kd.errors,
                detail: ("tpcc_kind", kd),
                shown: false,
            },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn common(profile: &str) -> RunBasics {
        RunBasics {
            profile: profile.into(),
            seed: 1,
            part: None,
        }
    }

    #[test]
    fn profiles_and_options_give_checked_parameters() {
        let p = Tpcc::params(&common("ci"), Options::default()).unwrap();
        assert_eq!((p.warehouses, p.terminals), (1, 2));
        assert!(p.secs < 10.0 && !p.keying && p.isolation.is_none());
        let o = Options {
            warehouses: Some(3),
            terminals: Some(30),
            isolation: Some("Repeatable_Read".into()),
            keying: Some(true),
            ..Default::default()
        };
        let p = Tpcc::params(&common("quick"), o).unwrap();
        assert_eq!((p.warehouses, p.terminals, p.keying), (3, 30, true));
        assert_eq!(p.isolation.as_deref(), Some("REPEATABLE READ"));
        for (o, msg) in [
            (
                Options {
                    warehouses: Some(0),
                    ..Default::default()
                },
                "--warehouses must be between 1",
            ),
            (
                Options {
                    terminals: Some(0),
                    ..Default::default()
                },
                "--terminals must be between 1",
            ),
            (
                Options {
                    isolation: Some("snapshot".into()),
                    ..Default::default()
                },
                "--isolation must be",
            ),
            (
                Options {
                    secs: Some(-1.0),
                    ..Default::default()
                },
                "--secs must be",
            ),
        ] {
            let e = Tpcc::params(&common("ci"), o).unwrap_err();
            assert!(e.is_usage() && e.to_string().contains(msg), "{e}");
        }
    }

    #[test]
    fn matrix_tables_fill_the_same_options() {
        let t: toml::Table = toml::from_str(
            "warehouses = 2\nterminals = 8\nkeying = true\nisolation = \"serializable\"",
        )
        .unwrap();
        let o = Options::deserialize(t).unwrap();
        let p = Tpcc::params(&common("ci"), o).unwrap();
        assert_eq!((p.warehouses, p.terminals, p.keying), (2, 8, true));
        assert_eq!(p.isolation.as_deref(), Some("SERIALIZABLE"));
    }

    #[test]
    fn the_live_line_shows_efficiency_only_with_keying() {
        let line = |keying: bool| {
            let mut r: TestResult = serde_json::from_value(serde_json::json!({
                "suite": "tpcc", "test": "tpmC", "group": "tpmC", "threads": 2,
                "reported": true, "status": "ok", "started": "", "secs": 1.0,
                "warmup_secs": 0.0, "qps": 1.0, "qps_unit": "", "tps": 0.0,
                "statements_per_sec": 0.0, "reads": 0, "writes": 0, "other": 0, "events": 0,
                "errors": 0, "reconnects": 0, "rows": 0,
                "latency_us": {"avg": 0.0, "p50": 0.0, "p95": 0.0, "p99": 0.0, "max": 0.0},
                "per_second": []
            }))
            .unwrap();
            let d = detail::Detail {
                tpmc: 8180.0,
                tpm_total: 18000.0,
                efficiency_pct: 63608.5,
                warehouses: 1,
                terminals: 2,
                isolation: "REPEATABLE READ".into(),
                keying,
                kinds: Default::default(),
                hw_per_new_order: Default::default(),
            };
            r.set_detail("tpcc", &d);
            <Tpcc as Workload>::line("tpmC", &r)
        };
        assert!(!line(false).contains("efficiency"), "{}", line(false));
        assert!(
            line(true).contains("efficiency 63608.5 %"),
            "{}",
            line(true)
        );
    }

    #[test]
    fn latency_quantiles_in_milliseconds() {
        let mut h = gen_hist();
        for v in 1..=1000u64 {
            h.record(v * 1_000_000).unwrap();
        }
        assert!((ms(&h, 50.0) - 500.0).abs() < 10.0);
        assert!((ms(&h, 90.0) - 900.0).abs() < 15.0);
        assert!((ms(&h, 100.0) - 1000.0).abs() < 15.0);
        assert_eq!(ms(&gen_hist(), 50.0), 0.0);
    }
}
