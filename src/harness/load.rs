//! The terms of work the harness measures without a timed step, owned once
//! as the timed step is (`timed.rs`; the frames themselves are in the
//! harness's face, `mod.rs`): a suite hands over the work and says how many
//! operations it did; the harness draws the one load bar, probes the machine
//! before (the busy warning), samples `/proc` while the work runs, ends the
//! probe over the operations and stores what it found.
//!
//! - [`Harness::load`]: the run's load (sysbench's tables, TPC-C's
//!   warehouses, pgbench's init), stored as the run's [`LoadStats`].
//! - [`TestRun::load`]: a load stored as a test of its own, with the
//!   suite's figures (LinkBench's load).
//! - [`TestRun::measured`]: work without a bar (LinkBench's index build, a
//!   check, the engine's background work).
//!
//! A suite starts no sampler, ends no probe and draws no bar of its own.

use indicatif::ProgressBar;

/// The one load bar's template: done of expected, in the load's unit.
pub(super) const LOAD_BAR: &str = "{prefix:>28} [{bar:30}] {pos}/{len} {msg} {per_sec} {elapsed}";

/// What a load shows while it runs, on the bar the harness draws. It may be
/// shared by the load's threads.
pub struct LoadProgress {
    pub(super) bar: ProgressBar,
    /// --quiet: no lines for the user.
    pub(super) quiet: bool,
}

impl LoadProgress {
    /// `done` of the expected units (rows, nodes) are in.
    pub fn done(&self, done: u64) {
        self.bar.set_position(done);
    }

    /// The text after the count: the unit, and the load's own figures
    /// (`nodes, 1234 links`).
    pub fn note(&self, text: String) {
        self.bar.set_message(text);
    }

    /// A line for the user above the bar (none with --quiet).
    pub fn say(&self, line: &str) {
        if !self.quiet {
            self.bar.suspend(|| eprintln!("{line}"));
        }
    }
}
