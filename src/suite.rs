//! Runs a planned sysbench suite against one target: load, every step at
//! every thread count in order, settle steps, and each result stored the
//! moment it exists.

use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::driver::Driver;
use crate::plan::SysbenchParams;
use crate::runner::{Live, StepConfig, StepRun, StepStatus, run_step, stop_requested};
use crate::store::{Store, TestResult};
use crate::util::now_rfc3339;
use crate::workload::sysbench::catalog::{Kind, TestDef};
use crate::workload::sysbench::event::{EventParams, SbWorker};
use crate::workload::sysbench::load::{LoadParams, load, settle};

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    Ok,
    /// At least one test failed; the others ran and were stored.
    Failed,
    Interrupted,
}

/// Lines for the user while the suite runs (stderr; bars only on a terminal).
pub struct Ui {
    pub quiet: bool,
}

impl Ui {
    pub fn say(&self, line: &str) {
        if !self.quiet {
            eprintln!("{line}");
        }
    }

    /// Warnings are shown even with --quiet.
    pub fn warn(&self, line: &str) {
        eprintln!("warning: {line}");
    }

    fn bar(&self, len: u64, prefix: String, template: &str) -> ProgressBar {
        let bar = if self.quiet {
            ProgressBar::hidden()
        } else {
            ProgressBar::new(len)
        };
        bar.set_style(
            ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_prefix(prefix);
        bar
    }
}

const RECONNECT_FOR: Duration = Duration::from_secs(10);

pub fn run_sysbench(
    driver: Arc<dyn Driver>,
    p: &SysbenchParams,
    steps: &[TestDef],
    store: &mut Store,
    ui: &Ui,
) -> Result<RunEnd, String> {
    let mut end = RunEnd::Ok;
    let first_settles = steps
        .first()
        .is_some_and(|t| t.settle_after && t.threads_per_table);
    if !p.skip_prepare {
        let rows = p.tables as u64 * p.table_size;
        let bar = ui.bar(
            rows,
            "load".into(),
            "{prefix:>28} [{bar:30}] {pos}/{len} rows {per_sec} {elapsed}",
        );
        let stats = load(
            driver.as_ref(),
            &LoadParams {
                tables: p.tables,
                table_size: p.table_size,
                seed: p.seed,
            },
            &mut |n| bar.set_position(n),
        )
        .map_err(|e| format!("loading the sbtest tables failed: {e}"))?;
        bar.finish_and_clear();
        ui.say(&format!(
            "loaded {} tables x {} rows in {:.1} s ({:.0} rows/s; index {:.1} s)",
            p.tables, p.table_size, stats.secs, stats.rows_per_sec, stats.index_secs
        ));
        store.set_load(stats)?;
        if !first_settles {
            do_settle(driver.as_ref(), p, ui)?;
        }
    }
    let ev = EventParams {
        tables: p.tables,
        table_size: p.table_size as i64,
        rand_type: p.rand_type,
        ps_mode: p.ps_mode,
        seed: p.seed,
    };
    'steps: for t in steps {
        let counts: Vec<usize> = if t.threads_per_table {
            vec![p.tables]
        } else {
            p.threads.clone()
        };
        for threads in counts {
            if stop_requested() {
                end = RunEnd::Interrupted;
                break 'steps;
            }
            let r = run_one(&driver, p, &ev, t, threads, store, ui)?;
            match r.status.as_str() {
                "interrupted" => {
                    end = RunEnd::Interrupted;
                    break 'steps;
                }
                "failed" => end = RunEnd::Failed,
                _ => {}
            }
        }
        if t.settle_after && !stop_requested() {
            do_settle(driver.as_ref(), p, ui)?;
        }
    }
    Ok(end)
}

fn do_settle(driver: &dyn Driver, p: &SysbenchParams, ui: &Ui) -> Result<(), String> {
    let (took, refused) = settle(driver, p.tables, Duration::from_secs_f64(p.settle_secs))
        .map_err(|e| format!("settle step failed: {e}"))?;
    for r in refused {
        ui.warn(&format!(
            "settle step: the engine refused {r}; continuing without it"
        ));
    }
    ui.say(&format!("settled in {:.1} s", took.as_secs_f64()));
    Ok(())
}

fn base_result(p: &SysbenchParams, t: &TestDef, threads: usize) -> TestResult {
    TestResult {
        suite: "sysbench".into(),
        test: t.name.clone(),
        group: t.group.key().into(),
        threads,
        reported: t.reported,
        status: "running".into(),
        reason: None,
        started: now_rfc3339(),
        secs: 0.0,
        warmup_secs: p.warmup_secs,
        qps: 0.0,
        qps_unit: if t.kind == Kind::Scan {
            "Krows/s".into()
        } else {
            "statements/s".into()
        },
        tps: 0.0,
        statements_per_sec: 0.0,
        reads: 0,
        writes: 0,
        other: 0,
        events: 0,
        errors: 0,
        reconnects: 0,
        rows: 0,
        latency_us: Default::default(),
        per_second: Vec::new(),
        hw: None,
        status_delta: Default::default(),
    }
}

/// Fills a result from what a step measured.
pub fn fill_result(r: &mut TestResult, run: &StepRun, kind: Kind, table_size: u64) {
    let secs = run.secs.max(1e-9);
    let c = &run.counts;
    r.secs = run.secs;
    r.statements_per_sec = c.queries() as f64 / secs;
    r.tps = c.events as f64 / secs;
    r.qps = if kind == Kind::Scan {
        // Thousands of rows scanned per second by one scan: (N / 1000) / average event latency.
        let avg_s = run.hist.mean() / 1e9;
        if avg_s > 0.0 {
            table_size as f64 / 1000.0 / avg_s
        } else {
            0.0
        }
    } else {
        r.statements_per_sec
    };
    (
        r.reads,
        r.writes,
        r.other,
        r.events,
        r.errors,
        r.reconnects,
        r.rows,
    ) = (
        c.reads,
        c.writes,
        c.other,
        c.events,
        c.errors,
        c.reconnects,
        c.rows,
    );
    r.latency_us = run.latency.clone();
    r.per_second = run.per_second.clone();
    (r.status, r.reason) = match &run.status {
        StepStatus::Ok => ("ok".into(), None),
        StepStatus::Interrupted => ("interrupted".into(), Some("stopped by Ctrl-C".into())),
        StepStatus::Failed(m) => ("failed".into(), Some(m.clone())),
    };
}

fn run_one(
    driver: &Arc<dyn Driver>,
    p: &SysbenchParams,
    ev: &EventParams,
    t: &TestDef,
    threads: usize,
    store: &mut Store,
    ui: &Ui,
) -> Result<TestResult, String> {
    let mut r = base_result(p, t, threads);
    let slot = store.begin_test(&r)?;
    let secs = p.secs(t.span);
    let cfg = StepConfig {
        warmup: Duration::from_secs_f64(p.warmup_secs),
        duration: Duration::from_secs_f64(secs),
        reconnect_for: RECONNECT_FOR,
    };
    let label = format!("{} t{threads}", t.name);
    let workers: Result<Vec<SbWorker>, _> = (0..threads)
        .map(|i| SbWorker::new(driver.clone(), t, ev, i))
        .collect();
    match workers {
        Err(e) => {
            r.status = "failed".into();
            r.reason = Some(format!("could not start the test: {e}"));
        }
        Ok(mut workers) => {
            let total_ms = ((p.warmup_secs + secs) * 1000.0) as u64;
            let bar = ui.bar(total_ms, label.clone(), "{prefix:>28} [{bar:30}] {msg}");
            let started = Instant::now();
            let run = run_step(&mut workers, &cfg, &mut |l: Live| {
                bar.set_position(l.elapsed.as_millis() as u64);
                let phase = if l.warming {
                    "warm-up".to_string()
                } else {
                    format!("{:>10.0} qps", l.qps)
                };
                bar.set_message(format!(
                    "{phase}  {:.0}/{:.0} s",
                    l.elapsed.as_secs_f64(),
                    l.total.as_secs_f64()
                ));
            });
            drop(workers);
            bar.finish_and_clear();
            fill_result(&mut r, &run, t.kind, p.table_size);
            let _ = started;
        }
    }
    let line = match r.status.as_str() {
        "ok" => format!(
            "{label:>28}  {:>11.1} {}  {:>9.1} tps  p95 {:>9.1} us  errors {}",
            r.qps,
            if r.qps_unit == "Krows/s" {
                "Krows/s"
            } else {
                "qps    "
            },
            r.tps,
            r.latency_us.p95,
            r.errors
        ),
        s => format!("{label:>28}  {s}: {}", r.reason.clone().unwrap_or_default()),
    };
    ui.say(&line);
    store.finish_test(slot, r.clone())?;
    Ok(r)
}
