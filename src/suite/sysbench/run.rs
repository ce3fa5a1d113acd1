//! Runs a planned sysbench suite against one target: load, every step at
//! every thread count in order, settle steps, and each result stored the
//! moment it exists (through the harness).

use std::time::Duration;

use super::catalog::{Kind, Span, TestDef};
use super::event::{EventParams, SbWorker};
use super::load::{LoadParams, load, settle};
use super::params::SysbenchParams;
use crate::error::Error;
use crate::harness::runner::{StepRun, stop_requested};
use crate::harness::{Harness, Per, RunEnd, TestFailure, TimedStep, Timing};
use crate::results::TestResult;

pub fn run(p: &SysbenchParams, h: &mut Harness<'_>) -> Result<RunEnd, Error> {
    let steps = p.steps()?;
    let mut end = RunEnd::Ok;
    let first_settles = steps
        .first()
        .is_some_and(|t| t.settle_after && t.threads_per_table);
    if !p.skip_prepare {
        load_tables(p, h)?;
        if !first_settles {
            settle_tables(p, h)?;
        }
    }
    let (first_table, tables) = p.event_tables();
    let ev = EventParams {
        tables,
        first_table,
        table_size: p.table_size as i64,
        rand: p.dist()?,
        ps_mode: p.ps_mode,
        skip_trx: p.skip_trx,
        rand_seed: p.glibc_seed(),
    };
    'steps: for t in &steps {
        let counts: Vec<usize> = if t.threads_per_table {
            vec![tables]
        } else {
            p.threads.clone()
        };
        for threads in counts {
            if stop_requested() {
                end = RunEnd::Interrupted;
                break 'steps;
            }
            let r = run_one(p, h, &ev, t, threads)?;
            if !end.after(&r) {
                break 'steps;
            }
        }
        if t.settle_after && !stop_requested() {
            settle_tables(p, h)?;
        }
    }
    Ok(end)
}

fn load_tables(p: &SysbenchParams, h: &mut Harness<'_>) -> Result<(), Error> {
    let params = LoadParams {
        tables: p.tables,
        table_size: p.table_size,
        seed: p.seed,
    };
    let expected = p.tables as u64 * p.table_size;
    h.load(
        "load",
        expected,
        |driver, progress| {
            load(driver.as_ref(), &params, &mut |n| progress.done(n)).map_err(|source| {
                Error::Engine {
                    context: "loading the sbtest tables failed".into(),
                    source,
                }
            })
        },
        |stats| {
            format!(
                "loaded {} tables x {} rows in {:.1} s ({:.0} rows/s; index {:.1} s)",
                p.tables, p.table_size, stats.secs, stats.rows_per_sec, stats.index_secs
            )
        },
    )?;
    Ok(())
}

fn settle_tables(p: &SysbenchParams, h: &Harness<'_>) -> Result<(), Error> {
    let budget = Duration::from_secs_f64(p.settle_secs);
    let (took, refused) =
        settle(h.driver.as_ref(), p.tables, budget).map_err(|source| Error::Engine {
            context: "settle step failed".into(),
            source,
        })?;
    for r in refused {
        h.ui.warn(&format!(
            "settle step: the engine refused {r}; continuing without it"
        ));
    }
    h.ui.say(&format!("settled in {:.1} s", took.as_secs_f64()));
    Ok(())
}

fn run_one(
    p: &SysbenchParams,
    h: &mut Harness<'_>,
    ev: &EventParams,
    t: &TestDef,
    threads: usize,
) -> Result<TestResult, Error> {
    let secs = p.secs(t.span);
    // The event bound is the tests' (warm-up steps keep their time).
    let events = p.events.filter(|_| t.span != Span::Warm);
    let timing = Timing::measured(p.warmup_secs, secs).events(events);
    let label = format!("{} t{threads}", t.name);
    h.test(label, base_result(p, t, threads), |run| {
        let mut workers = (0..threads)
            .map(|i| SbWorker::new(run.driver.clone(), t, ev, i))
            .collect::<Result<Vec<SbWorker>, _>>()
            .map_err(TestFailure::when("could not start the test"))?;
        let step = run.timed(&mut workers, TimedStep::new(timing, Per::Statement));
        scan_rate(&mut run.result, &step, t.kind, p.table_size);
        drop(workers);
        Ok(())
    })
}

fn base_result(p: &SysbenchParams, t: &TestDef, threads: usize) -> TestResult {
    let unit = if t.kind == Kind::Scan {
        "Krows/s"
    } else {
        "statements/s"
    };
    let mut r = TestResult::running(
        "sysbench",
        t.name.clone(),
        t.group.key(),
        threads,
        t.reported,
        unit,
    );
    r.warmup_secs = p.warmup_secs;
    r
}

/// A scan's rate in the reference's unit, over the harness's core.
pub fn scan_rate(r: &mut TestResult, run: &StepRun, kind: Kind, table_size: u64) {
    if kind == Kind::Scan {
        // Thousands of rows scanned per second by one scan: (N / 1000) / average event latency.
        let avg_s = run.hist.mean() / 1e9;
        r.qps = if avg_s > 0.0 {
            table_size as f64 / 1000.0 / avg_s
        } else {
            0.0
        };
    }
}
