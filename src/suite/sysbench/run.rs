//! Runs a planned sysbench suite against one target: load, every step at
//! every thread count in order, settle steps, and each result stored the
//! moment it exists.

use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::engine::Driver;
use crate::harness::probe::{Probe, ProbeContext};
use crate::harness::runner::{Live, StepConfig, StepRun, StepStatus, run_step, stop_requested};
use crate::plan::SysbenchParams;
use crate::results::{Store, TestResult};
use crate::suite::sysbench::catalog::{Kind, TestDef};
use crate::suite::sysbench::event::{EventParams, SbWorker};
use crate::suite::sysbench::load::{LoadParams, load, settle};

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

    pub(crate) fn bar(&self, len: u64, prefix: String, template: &str) -> ProgressBar {
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

pub(crate) const RECONNECT_FOR: Duration = Duration::from_secs(10);

/// Everything a run's steps share.
pub struct Session<'a> {
    pub driver: Arc<dyn Driver>,
    pub p: &'a SysbenchParams,
    pub store: &'a mut Store,
    pub ui: &'a Ui,
    pub probe: &'a ProbeContext,
}

pub fn run_sysbench(s: &mut Session<'_>, steps: &[TestDef]) -> Result<RunEnd, String> {
    let p = s.p;
    let mut end = RunEnd::Ok;
    let first_settles = steps
        .first()
        .is_some_and(|t| t.settle_after && t.threads_per_table);
    if !p.skip_prepare {
        s.load()?;
        if !first_settles {
            s.settle()?;
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
            let r = s.run_one(&ev, t, threads)?;
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
            s.settle()?;
        }
    }
    Ok(end)
}

impl Session<'_> {
    fn load(&mut self) -> Result<(), String> {
        let p = self.p;
        let rows = p.tables as u64 * p.table_size;
        let bar = self.ui.bar(
            rows,
            "load".into(),
            "{prefix:>28} [{bar:30}] {pos}/{len} rows {per_sec} {elapsed}",
        );
        let mut probe = Probe::before(self.probe, self.driver.as_ref());
        if let Some(w) = probe.warning() {
            self.ui.warn(&format!("load: {w}"));
        }
        probe.start_sampling(self.probe);
        let params = LoadParams {
            tables: p.tables,
            table_size: p.table_size,
            seed: p.seed,
        };
        let mut stats = load(self.driver.as_ref(), &params, &mut |n| bar.set_position(n))
            .map_err(|e| format!("loading the sbtest tables failed: {e}"))?;
        bar.finish_and_clear();
        // The load's operations are rows, as the reference normalizes it.
        let (hw, _) = probe.finish(self.probe, self.driver.as_ref(), stats.rows as f64);
        stats.hw = Some(hw);
        self.ui.say(&format!(
            "loaded {} tables x {} rows in {:.1} s ({:.0} rows/s; index {:.1} s)",
            p.tables, p.table_size, stats.secs, stats.rows_per_sec, stats.index_secs
        ));
        self.store.set_load(stats)
    }

    fn settle(&self) -> Result<(), String> {
        let budget = Duration::from_secs_f64(self.p.settle_secs);
        let (took, refused) = settle(self.driver.as_ref(), self.p.tables, budget)
            .map_err(|e| format!("settle step failed: {e}"))?;
        for r in refused {
            self.ui.warn(&format!(
                "settle step: the engine refused {r}; continuing without it"
            ));
        }
        self.ui
            .say(&format!("settled in {:.1} s", took.as_secs_f64()));
        Ok(())
    }

    fn run_one(
        &mut self,
        ev: &EventParams,
        t: &TestDef,
        threads: usize,
    ) -> Result<TestResult, String> {
        let p = self.p;
        let mut r = base_result(p, t, threads);
        let slot = self.store.begin_test(&r)?;
        let secs = p.secs(t.span);
        let cfg = StepConfig {
            warmup: Duration::from_secs_f64(p.warmup_secs),
            duration: Duration::from_secs_f64(secs),
            reconnect_for: RECONNECT_FOR,
        };
        let label = format!("{} t{threads}", t.name);
        let workers: Result<Vec<SbWorker>, _> = (0..threads)
            .map(|i| SbWorker::new(self.driver.clone(), t, ev, i))
            .collect();
        match workers {
            Err(e) => {
                r.status = "failed".into();
                r.reason = Some(format!("could not start the test: {e}"));
            }
            Ok(mut workers) => {
                let mut probe = Probe::before(self.probe, self.driver.as_ref());
                if let Some(w) = probe.warning() {
                    self.ui.warn(&format!("{label}: {w}"));
                    r.warnings.push(w.to_string());
                }
                let total_ms = ((p.warmup_secs + secs) * 1000.0) as u64;
                let bar = self
                    .ui
                    .bar(total_ms, label.clone(), "{prefix:>28} [{bar:30}] {msg}");
                let ctx = self.probe;
                let run = run_step(
                    &mut workers,
                    &cfg,
                    &mut |l: Live| {
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
                    },
                    &mut || probe.start_sampling(ctx),
                );
                bar.finish_and_clear();
                fill_result(&mut r, &run, t.kind, p.table_size);
                // The last sample is taken while the workers' connections are still open:
                // a server process that exits between samples takes its CPU time out of
                // the server's process tree until its parent reaps it.
                let (hw, delta) = probe.finish(
                    self.probe,
                    self.driver.as_ref(),
                    run.counts.queries() as f64,
                );
                drop(workers);
                r.hw = Some(hw);
                r.status_delta = delta;
            }
        }
        self.ui.say(&result_line(&label, &r));
        self.store.finish_test(slot, r.clone())?;
        Ok(r)
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".into())
}

/// The one line printed when a test ends.
fn result_line(label: &str, r: &TestResult) -> String {
    if r.status != "ok" {
        return format!(
            "{label:>28}  {}: {}",
            r.status,
            r.reason.clone().unwrap_or_default()
        );
    }
    let unit = if r.qps_unit == "Krows/s" {
        "Krows/s"
    } else {
        "qps    "
    };
    let mut line = format!(
        "{label:>28}  {:>11.1} {unit}  {:>9.1} tps  p95 {:>9.1} us  errors {}",
        r.qps, r.tps, r.latency_us.p95, r.errors
    );
    if r.reconnects > 0 {
        line.push_str(&format!("  reconnects {}", r.reconnects));
    }
    if let Some(hw) = &r.hw {
        line.push_str(&format!(
            "  cpu/o {} us (client {}, server {})",
            opt(hw.cpu_us_per_op),
            opt(hw.client_cpu_us_per_op),
            opt(hw.server_cpu_us_per_op)
        ));
    }
    line
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
