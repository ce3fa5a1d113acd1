//! The timed step, owned once: a suite hands its workers (connected and
//! prepared) and its [`Timing`] to [`TestRun::timed`], and the harness runs
//! the warm-up and the measured interval ([`runner::run_step`]), starts the
//! `/proc` sampler when the warm-up ends, draws the one progress bar every
//! suite shows (elapsed of total, the live rate), fills the result's core
//! ([`fill_core`]) and ends the hardware probe over what the suite counts.
//! A suite keeps no timed loop of its own.
//!
//! Checks after the timed steps (TPC-C's consistency, pgbench's balances,
//! LinkBench's counts) go through [`Harness::check`]: timed, probed, stored
//! and failed with the violation as the reason, the same way for each.

use std::time::{Duration, Instant};

use super::runner::{self, Live, StepConfig, StepRun, Worker};
use super::{Harness, RECONNECT_FOR, TestFailure, TestRun, fill_core};
use crate::error::Error;
use crate::results::{Status, TestResult};

/// How long a step runs: its warm-up, then its measured interval.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub warmup: Duration,
    /// The measured interval ([`Duration::MAX`]: no deadline, the step ends
    /// when every worker is [`Worker::finished`]).
    pub duration: Duration,
    /// How long a worker keeps trying to reconnect after a lost connection.
    pub reconnect_for: Duration,
    /// The workers have budgets (rows, transactions, operations) and the
    /// step ends when they are spent: `duration` is only the most it may
    /// take, and the progress shows no total.
    pub budgeted: bool,
}

impl Timing {
    /// `warmup_secs` of warm-up, then `secs` measured.
    pub fn measured(warmup_secs: f64, secs: f64) -> Timing {
        Timing {
            warmup: Duration::from_secs_f64(warmup_secs.max(0.0)),
            duration: Duration::from_secs_f64(secs.max(0.0)),
            reconnect_for: RECONNECT_FOR,
            budgeted: false,
        }
    }

    /// The same, for workers with budgets: `secs` is the most it may take.
    pub fn budgeted(self) -> Timing {
        Timing {
            budgeted: true,
            ..self
        }
    }

    /// No warm-up and no deadline: the step ends when every worker's budget
    /// is spent (the Insert Benchmark's rows), at Ctrl-C or a fatal error.
    pub fn until_finished() -> Timing {
        let c = StepConfig::until_finished(RECONNECT_FOR);
        Timing {
            warmup: c.warmup,
            duration: c.duration,
            reconnect_for: c.reconnect_for,
            budgeted: true,
        }
    }

    fn config(&self) -> StepConfig {
        StepConfig {
            warmup: self.warmup,
            duration: self.duration,
            reconnect_for: self.reconnect_for,
        }
    }
}

/// What a step's hardware cost is divided by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Per {
    /// Each statement (or key-value operation) the workers recorded.
    Statement,
    /// Each event (a transaction, a LinkBench operation).
    Event,
}

impl Per {
    fn count(self, step: &StepRun) -> f64 {
        match self {
            Per::Statement => step.counts.queries() as f64,
            Per::Event => step.counts.events as f64,
        }
    }
}

/// A timed step: its timing, and what its probe divides by.
pub struct Step<'s> {
    pub timing: Timing,
    pub per: Per,
    /// How the result is filled from the measurement: `true` (every suite
    /// but one) with [`fill_core`]; `false` when the suite's own figures
    /// fill it in the `then` of [`TestRun::timed_then`] (the Insert
    /// Benchmark counts rows, and its index step has no statements).
    pub core: bool,
    /// The noun of the live rate on the progress bar (the runner counts
    /// statements, or key-value operations).
    pub rate: &'static str,
    /// The suite's own figures, shown after the harness's on the progress
    /// line (the Insert Benchmark's insert and delete rates).
    pub shows: Option<&'s mut dyn FnMut() -> String>,
}

impl<'s> Step<'s> {
    /// A step of `timing`, its cost per `per`, filled by the harness.
    pub fn new(timing: Timing, per: Per) -> Step<'s> {
        Step {
            timing,
            per,
            core: true,
            rate: "statements",
            shows: None,
        }
    }
}

/// The progress bar's message: the phase or the live rate, then elapsed
/// of total seconds (elapsed alone without a total).
fn progress_message(l: &Live, unit: &str, budgeted: bool) -> String {
    let phase = if l.warming {
        "warm-up".to_string()
    } else {
        format!("{:>10.0} {unit}/s", l.qps)
    };
    if budgeted {
        format!("{phase}  {:.0} s", l.elapsed.as_secs_f64())
    } else {
        format!(
            "{phase}  {:.0}/{:.0} s",
            l.elapsed.as_secs_f64(),
            l.total.as_secs_f64()
        )
    }
}

impl TestRun<'_> {
    /// Runs the timed step of `workers` and ends the probe right after it;
    /// see [`TestRun::timed_then`].
    pub fn timed<W: Worker>(&mut self, workers: &mut [W], step: Step<'_>) -> StepRun {
        let per = step.per;
        match self.timed_then(workers, step, |_, _, s| Ok(per.count(s))) {
            Ok(s) => s,
            Err(_) => unreachable!("a `then` that cannot fail"),
        }
    }

    /// Runs the timed step of `workers`: warm-up, measured interval,
    /// sampling from the warm-up's end, the progress bar, the result's core;
    /// then `then` (work whose hardware cost counts with the step's: a
    /// compaction it waits for, figures it reads from its workers), which
    /// returns the operations the probe divides by; then ends the probe,
    /// with the workers' connections still open.
    pub fn timed_then<W: Worker>(
        &mut self,
        workers: &mut [W],
        mut step: Step<'_>,
        then: impl FnOnce(&mut Self, &mut [W], &StepRun) -> Result<f64, TestFailure>,
    ) -> Result<StepRun, TestFailure> {
        let t = step.timing;
        let total = t.warmup.saturating_add(t.duration);
        let bar = if t.budgeted {
            self.bar(0, "{prefix:>28} {msg}")
        } else {
            self.bar(total.as_millis() as u64, "{prefix:>28} [{bar:30}] {msg}")
        };
        let unit = step.rate;
        let mut shows = step.shows.take();
        // Without a warm-up the measured interval starts with the step: a
        // step whose budgets are spent before the runner's first look would
        // otherwise never start the sampler.
        let warms = !t.warmup.is_zero();
        if !warms {
            self.start_sampling();
        }
        let run = runner::run_step(
            workers,
            &t.config(),
            &mut |l: Live| {
                bar.set_position(l.elapsed.as_millis() as u64);
                let mut msg = progress_message(&l, unit, t.budgeted);
                if let Some(f) = shows.as_mut() {
                    msg.push_str("  ");
                    msg.push_str(&f());
                }
                bar.set_message(msg);
            },
            &mut || {
                if warms {
                    self.start_sampling()
                }
            },
        );
        bar.finish_and_clear();
        if step.core {
            fill_core(&mut self.result, &run);
        }
        self.result.warmup_secs = t.warmup.as_secs_f64();
        let ops = then(self, workers, &run)?;
        self.finish_probe(ops);
        Ok(run)
    }
}

/// The step alone, outside a test (`rqps compat`'s one client, a suite's
/// unit tests): `timing` on the runner, without progress, sampling or probe.
pub fn bare_step<W: Worker>(
    workers: &mut [W],
    timing: Timing,
    on_live: &mut dyn FnMut(Live),
) -> StepRun {
    runner::run_step(workers, &timing.config(), on_live, &mut || {})
}

/// What a check after the timed steps found.
pub struct Verdict {
    /// How many things it checked (conditions, balances, pairs): the
    /// result's events, and what its probe divides by.
    pub checked: u64,
    /// The first violation: the test fails with it as the reason.
    pub violation: Option<String>,
}

impl Harness<'_> {
    /// Runs a check after the timed steps as a test of its own: `body`
    /// checks (and stores its detail in the result), the harness times it,
    /// probes it per checked item (`per`), and fails the test with the
    /// violation as its reason.
    pub fn check(
        &mut self,
        label: &str,
        result: TestResult,
        per: &'static str,
        body: impl FnOnce(&mut TestRun<'_>) -> Result<Verdict, TestFailure>,
    ) -> Result<TestResult, Error> {
        self.test(label.to_string(), result, |run| {
            run.per_op = per;
            run.start_sampling();
            let started = Instant::now();
            let v = body(run)?;
            let secs = started.elapsed().as_secs_f64();
            run.finish_probe(v.checked as f64);
            run.result.secs = secs;
            run.result.events = v.checked;
            match v.violation {
                Some(reason) => Err(TestFailure::new(reason)),
                None => {
                    run.result.status = Status::Ok;
                    Ok(())
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(secs: u64, warming: bool) -> Live {
        Live {
            elapsed: Duration::from_secs(secs),
            total: Duration::from_secs(12),
            warming,
            qps: 1234.4,
        }
    }

    #[test]
    fn the_progress_shows_the_warm_up_then_the_rate_of_the_suites_unit() {
        assert_eq!(
            progress_message(&live(1, true), "statements", false),
            "warm-up  1/12 s"
        );
        assert_eq!(
            progress_message(&live(5, false), "operations", false),
            "      1234 operations/s  5/12 s"
        );
        assert_eq!(
            progress_message(&live(5, false), "statements", true),
            "      1234 statements/s  5 s"
        );
    }
}
