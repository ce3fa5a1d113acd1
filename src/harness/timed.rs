//! The timed step's terms, owned once: a suite hands its workers (connected
//! and prepared) and its [`Timing`] to `TestRun::timed` (in the harness's
//! face, with the test it runs in), and the harness runs
//! the warm-up and the measured interval ([`runner::run_step`]), starts the
//! `/proc` sampler when the warm-up ends, draws the one progress bar every
//! suite shows (elapsed of total, the live rate), fills the result's core
//! (`fill_core`) and ends the hardware probe over what the suite counts.
//! A suite keeps no timed loop of its own.
//!
//! Checks after the timed steps (TPC-C's consistency, pgbench's balances,
//! LinkBench's counts) go through `Harness::check`: timed, probed, stored
//! and failed with the violation as the reason, the same way for each.

use std::time::Duration;

use super::reconnect::RECONNECT_FOR;
use super::runner::{self, LiveProgress, StepConfig, StepRun, Worker};

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
    /// The measured events the step may complete, all workers together
    /// (sysbench's `--events`; [`Timing::events`]).
    pub events: Option<u64>,
}

impl Timing {
    /// `warmup_secs` of warm-up, then `secs` measured.
    pub fn measured(warmup_secs: f64, secs: f64) -> Timing {
        Timing {
            warmup: Duration::from_secs_f64(warmup_secs.max(0.0)),
            duration: Duration::from_secs_f64(secs.max(0.0)),
            reconnect_for: RECONNECT_FOR,
            budgeted: false,
            events: None,
        }
    }

    /// The same, bounded by `events` measured events too, as sysbench
    /// bounds a run with `--events` and `--time`: the step ends at
    /// whichever comes first. With a duration of 0 (sysbench's `--time=0`)
    /// the events alone bound it. `None` (or 0, sysbench's "no limit"):
    /// no event bound.
    pub fn events(self, events: Option<u64>) -> Timing {
        let Some(n) = events.filter(|&n| n > 0) else {
            return self;
        };
        let open = self.duration.is_zero();
        Timing {
            events: Some(n),
            duration: if open { Duration::MAX } else { self.duration },
            budgeted: self.budgeted || open,
            ..self
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
            events: None,
        }
    }

    pub(super) fn config(&self) -> StepConfig {
        StepConfig {
            warmup: self.warmup,
            duration: self.duration,
            reconnect_for: self.reconnect_for,
            events: self.events,
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
    pub(super) fn count(self, step: &StepRun) -> f64 {
        match self {
            Per::Statement => step.counts.queries() as f64,
            Per::Event => step.counts.events as f64,
        }
    }
}

/// A timed step: its timing, and what its probe divides by.
pub struct TimedStep<'s> {
    pub timing: Timing,
    pub per: Per,
    /// How the result is filled from the measurement: `true` (every suite
    /// but one) with `fill_core`; `false` when the suite's own figures
    /// fill it in the `then` of `TestRun::timed_then` (the Insert
    /// Benchmark counts rows, and its index step has no statements).
    pub core: bool,
    /// The noun of the live rate on the progress bar (the runner counts
    /// statements, or key-value operations).
    pub rate: &'static str,
    /// The suite's own figures, shown after the harness's on the progress
    /// line (the Insert Benchmark's insert and delete rates).
    pub shows: Option<&'s mut dyn FnMut() -> String>,
}

impl<'s> TimedStep<'s> {
    /// A step of `timing`, its cost per `per`, filled by the harness.
    pub fn new(timing: Timing, per: Per) -> TimedStep<'s> {
        TimedStep {
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
pub(super) fn progress_message(l: &LiveProgress, unit: &str, budgeted: bool) -> String {
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

/// The step alone, outside a test (`rqps compat`'s one client, a suite's
/// unit tests): `timing` on the runner, the workers where `placement`
/// puts them, without progress, sampling or probe.
pub fn bare_step<W: Worker>(
    workers: &mut [W],
    timing: Timing,
    placement: &super::placement::Placement,
    on_live: &mut dyn FnMut(LiveProgress),
) -> StepRun {
    runner::run_step(workers, &timing.config(), placement, on_live, &mut || {})
}

/// What a check after the timed steps found.
pub struct Verdict {
    /// How many things it checked (conditions, balances, pairs): the
    /// result's events, and what its probe divides by.
    pub checked: u64,
    /// The first violation: the test fails with it as the reason.
    pub violation: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(secs: u64, warming: bool) -> LiveProgress {
        LiveProgress {
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
