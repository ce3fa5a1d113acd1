//! The harness: what every suite's tests go through, written once.
//!
//! A suite decides what a test does; the harness owns the sequence around it
//! ([`Harness::test`]): the test is marked `running` in the results directory,
//! the machine is probed (busy check, database size, status counters), the
//! suite's body runs, then the result is stored and its one progress line
//! printed. Inside the body, the suite hands its workers and [`Timing`] to
//! the one timed step ([`TestRun::timed`]): warm-up, measured interval and
//! deadline on the [`runner`], the `/proc` sampler from the warm-up's end,
//! the progress bar, the result's core ([`fill_core`]), and the probe's end
//! while the workers' connections are still open. A check after the timed
//! steps goes through [`Harness::check`], a load through [`Harness::load`]
//! (the run's) or [`TestRun::load`] (a load stored as a test). It also owns
//! the one reconnect-with-backoff loop ([`reconnect_with_backoff`]).
//!
//! Modules: [`runner`] (threads, warm-up, duration, Ctrl-C), `timed` (the
//! timed step's terms), `load` (work measured without a timed step: loads,
//! index builds, checks), [`measure`] (histograms, counters, per-second
//! series), [`probe`] and [`sysstat`] (hardware cost per operation),
//! [`host`] (machine facts).

pub mod host;
pub mod limit;
mod load;
pub mod measure;
pub mod placement;
pub mod probe;
pub mod profile;
pub mod quit;
mod reconnect;
pub mod runner;
pub mod series;
pub mod status;
pub mod sysstat;
mod timed;
pub mod wait;

use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::engine::{DbError, DbResult, Driver};
use crate::error::Error;
use crate::results::{HwCost, LoadStats, Status, Store, TestResult};
pub use load::LoadProgress;
pub use placement::Placement;
use probe::{Probe, ProbeContext};
pub use reconnect::{RECONNECT_FOR, ReconnectError, reconnect_with_backoff};
use runner::{LiveProgress, StepRun, Worker};
pub use status::Units;
use timed::progress_message;
pub use timed::{Per, TimedStep, Timing, Verdict, bare_step};

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    Ok,
    /// At least one test failed; the others ran and were stored.
    Failed,
    Interrupted,
}

impl RunEnd {
    /// Folds a finished test into the run's end: `false` when the run must stop now.
    pub fn after(&mut self, r: &TestResult) -> bool {
        match r.status {
            Status::Interrupted => {
                *self = RunEnd::Interrupted;
                false
            }
            Status::Failed | Status::Killed => {
                *self = RunEnd::Failed;
                true
            }
            Status::Ok | Status::Running => true,
        }
    }
}

/// Lines for the user while a suite runs (stderr; bars only when not quiet).
/// Every line is wrapped to the width of standard error's terminal (else
/// `$COLUMNS`, else [`LINE_WIDTH`]), and printed with the bars cleared
/// first, so a line never lands on a bar.
#[derive(Default)]
pub struct Ui {
    pub quiet: bool,
    /// The busy-machine warning was shown: later ones are only stored, and
    /// their test lines carry [`BUSY_LINE_MARK`].
    busy_said: std::sync::atomic::AtomicBool,
    /// The bars drawn now: lines are printed through it.
    bars: indicatif::MultiProgress,
    /// Where lines go instead of standard error (tests).
    sink: Option<Sink>,
}

/// Where a [`Ui`]'s lines go instead of standard error.
type Sink = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

/// The width of progress and result lines when standard error is not a
/// terminal and `$COLUMNS` is not set.
pub const LINE_WIDTH: usize = 120;

/// What a test line carries when the machine was busy before its step.
pub const BUSY_LINE_MARK: &str = "busy";

/// Where a test's line continues when it wraps: under its figures, after the
/// label the bars and lines right-align in 28 columns.
const RESULT_HANG: usize = 30;

impl Ui {
    pub fn new(quiet: bool) -> Ui {
        Ui {
            quiet,
            ..Ui::default()
        }
    }

    /// The width lines are wrapped to.
    pub fn width(&self) -> usize {
        crate::util::text::stderr_columns(LINE_WIDTH)
    }

    /// `line` wrapped to [`Ui::width`], continued `hang` columns in (at
    /// most a third of the width), on standard error above any bar.
    fn print(&self, line: &str, hang: usize) {
        let width = self.width();
        let rest = " ".repeat(hang.min(width / 3));
        let text = line
            .lines()
            .map(|l| crate::util::text::wrapped(l, width, "", &rest))
            .collect::<String>();
        self.bars.suspend(|| match &self.sink {
            Some(sink) => sink(&text),
            None => eprint!("{text}"),
        });
    }

    pub fn say(&self, line: &str) {
        if !self.quiet {
            self.print(line, 2);
        }
    }

    /// A line printed whole, above any bar, never wrapped: for output other
    /// tools parse line by line (sysbench's interval reports).
    pub fn say_whole(&self, line: &str) {
        if !self.quiet {
            let text = format!("{line}\n");
            self.bars.suspend(|| match &self.sink {
                Some(sink) => sink(&text),
                None => eprint!("{text}"),
            });
        }
    }

    /// A test's line when it ends: wrapped under its figures.
    pub fn result(&self, line: &str) {
        if !self.quiet {
            self.print(line, RESULT_HANG);
        }
    }

    /// Warnings are shown even with --quiet. The busy-machine warning
    /// ([`crate::results::BUSY_WARNING`]) is shown once per run, at its
    /// first occurrence: on a busy host it would otherwise come between
    /// most result lines.
    pub fn warn(&self, line: &str) {
        if let Some(text) = self.warning_text(line) {
            self.print(&text, 2);
        }
    }

    /// The line [`Ui::warn`] prints, `None` for a busy warning said before.
    fn warning_text(&self, line: &str) -> Option<String> {
        if !line.contains(crate::results::BUSY_WARNING) {
            return Some(format!("warning: {line}"));
        }
        if self
            .busy_said
            .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            return None;
        }
        Some(format!(
            "warning: {line} (said once: later steps it affects are stored with it and marked `{BUSY_LINE_MARK}` on their line)"
        ))
    }

    /// A bar drawn on standard error (hidden when quiet); its `{msg}` is
    /// cut to what the terminal's width leaves it.
    pub fn bar(&self, len: u64, prefix: String, template: &str) -> ProgressBar {
        let bar = if self.quiet {
            ProgressBar::hidden()
        } else {
            self.bars.add(ProgressBar::new(len))
        };
        let template = if template.contains("{wide_") {
            template.to_string()
        } else {
            template.replace("{msg}", "{wide_msg}")
        };
        bar.set_style(
            ProgressStyle::with_template(&template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_prefix(prefix);
        bar
    }
}

/// What a suite's tests share: the engine, the results directory, the user's
/// terminal and where hardware figures come from.
pub struct Harness<'a> {
    pub driver: Arc<dyn Driver>,
    pub store: &'a mut Store,
    pub ui: &'a Ui,
    pub probe: &'a ProbeContext,
    /// The one line printed when a test ends (the suite's, or [`result_line`]).
    pub line: fn(&str, &TestResult) -> String,
    /// What the suite counts ([`Units`]): the status rule's noun, and what
    /// hardware costs are divided by.
    pub units: Units,
    /// Where each step's workers run: a thread each, or tasks of a few
    /// client threads ([`Placement`]).
    pub placement: Placement,
}

/// One test being run by [`Harness::test`]: the result the suite fills, and
/// the probe it starts and ends at the right moments.
pub struct TestRun<'h> {
    pub result: TestResult,
    /// What the progress line and warnings call this test.
    pub label: String,
    pub driver: &'h Arc<dyn Driver>,
    pub ui: &'h Ui,
    ctx: &'h ProbeContext,
    probe: Option<Probe>,
    profile: Option<profile::TestProfile>,
    /// What [`TestRun::finish_probe`]'s operations are: the suite's
    /// [`Units::per_op`] unless the test sets another (`row` for a load).
    pub per_op: &'static str,
    /// Where the timed step's workers run (the harness's [`Placement`]).
    pub placement: Placement,
}

impl TestRun<'_> {
    /// Starts the `/proc` sampler: call it when the warm-up ends.
    /// With `--cpu-profile`, perf (started before the warm-up) is enabled
    /// first, so that both cover the same interval.
    pub fn start_sampling(&mut self) {
        if let Some(p) = self.probe.as_mut() {
            if let Some(prof) = self.profile.as_mut() {
                prof.enable(&self.ctx.server_tree_now());
            }
            p.start_sampling(self.ctx);
        }
    }

    /// Ends the hardware measurement over `ops` operations and returns the
    /// figures (also stored in the result). Call it while the test's
    /// connections are still open: a server backend that exits between samples
    /// takes its CPU time out of the server's process tree until it is reaped.
    pub fn finish_probe(&mut self, ops: f64) -> Option<&HwCost> {
        let mut probe = self.probe.take()?;
        probe.stop_sampling();
        let profiled = self
            .profile
            .take()
            .map(|p| p.finish(ops, &self.ctx.server_tree_now()));
        let (mut hw, delta) = probe.finish(self.ctx, self.driver.as_ref(), ops);
        hw.per = Some(self.per_op.to_string());
        if let Some((profile, notes)) = profiled {
            for n in notes {
                self.warn(n);
            }
            if let Some(w) = profile.as_ref().and_then(|p| profile_check(p, &hw)) {
                self.warn(w);
            }
            self.result.cpu_profile = profile.map(Box::new);
        }
        self.result.hw = Some(Box::new(hw));
        self.result.status_delta = delta;
        self.result.hw.as_deref()
    }

    /// A condition that may falsify this result: printed now, stored with it.
    pub fn warn(&mut self, w: String) {
        self.ui.warn(&format!("{}: {w}", self.label));
        self.result.warnings.push(w);
    }

    /// A progress bar for this test.
    pub fn bar(&self, len: u64, template: &str) -> ProgressBar {
        self.ui.bar(len, self.label.clone(), template)
    }
}

impl TestRun<'_> {
    /// Runs the timed step of `workers` and ends the probe right after it;
    /// see [`TestRun::timed_then`].
    pub fn timed<W: Worker>(&mut self, workers: &mut [W], step: TimedStep<'_>) -> StepRun {
        let per = step.per;
        let Ok(run) = self
            .step_then::<W, std::convert::Infallible>(workers, step, |_, _, s| Ok(per.count(s)));
        run
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
        step: TimedStep<'_>,
        then: impl FnOnce(&mut Self, &mut [W], &StepRun) -> Result<f64, TestFailure>,
    ) -> Result<StepRun, TestFailure> {
        self.step_then(workers, step, then)
    }

    /// [`TestRun::timed_then`] for any error of `then` (none for `timed`).
    fn step_then<W: Worker, E>(
        &mut self,
        workers: &mut [W],
        mut step: TimedStep<'_>,
        then: impl FnOnce(&mut Self, &mut [W], &StepRun) -> Result<f64, E>,
    ) -> Result<StepRun, E> {
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
        let placement = self.placement;
        let run = runner::run_step(
            workers,
            &t.config(),
            &placement,
            &mut |l: LiveProgress| {
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

impl Harness<'_> {
    /// Runs a check after the timed steps as a test of its own: `body`
    /// checks (and stores its detail in the result), the harness times it,
    /// gives its rate (items checked per second), probes it per checked
    /// item (`per`), and fails the test with the violation as its reason.
    pub fn check(
        &mut self,
        label: &str,
        result: TestResult,
        per: &'static str,
        body: impl FnOnce(&mut TestRun<'_>) -> Result<Verdict, TestFailure>,
    ) -> Result<TestResult, Error> {
        self.test(label.to_string(), result, |run| {
            let (v, secs) = run.measured(per, |run| {
                let started = Instant::now();
                let v = body(run)?;
                let secs = started.elapsed().as_secs_f64();
                let checked = v.checked as f64;
                Ok::<_, TestFailure>(((v, secs), checked))
            })?;
            run.result.secs = secs;
            run.result.events = v.checked;
            run.result.qps = v.checked as f64 / secs.max(1e-9);
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

/// A load's bar: `expected` units, named `unit` after the count.
fn load_bar(ui: &Ui, label: &str, expected: u64, unit: &str) -> LoadProgress {
    let bar = ui.bar(expected, label.to_string(), load::LOAD_BAR);
    bar.set_message(unit.to_string());
    LoadProgress {
        bar,
        quiet: ui.quiet,
    }
}

impl Harness<'_> {
    /// The run's load, called `label` (`load`, `init`): `body` fills the
    /// tables and reports its rows on the load bar (`expected` in all);
    /// the harness probes the machine around it (its cost per row), prints
    /// `summary`'s line and stores the figures as the run's load.
    pub fn load(
        &mut self,
        label: &str,
        expected: u64,
        body: impl FnOnce(&Arc<dyn Driver>, &LoadProgress) -> Result<LoadStats, Error>,
        summary: impl FnOnce(&LoadStats) -> String,
    ) -> Result<LoadStats, Error> {
        let progress = load_bar(self.ui, label, expected, "rows");
        let mut probe = Probe::before(self.probe, self.driver.as_ref());
        if let Some(w) = probe.warning() {
            self.ui.warn(&format!("{label}: {w}"));
        }
        probe.start_sampling(self.probe);
        let loaded = body(&self.driver, &progress);
        progress.bar.finish_and_clear();
        let mut stats = loaded?;
        // The load's operations are rows, as the reference normalizes it.
        let (mut hw, _) = probe.finish(self.probe, self.driver.as_ref(), stats.rows as f64);
        hw.per = Some("row".into());
        stats.hw = Some(hw);
        self.ui.say(&summary(&stats));
        self.store.set_load(stats.clone())?;
        Ok(stats)
    }
}

impl TestRun<'_> {
    /// Work measured as this test's (from `body`'s start to its end, with
    /// its connections still open): the `/proc` sampler runs while `body`
    /// does, and the probe ends over the operations `body` returns, each a
    /// `per` (`row`, `link`, `pair`).
    pub fn measured<T, E>(
        &mut self,
        per: &'static str,
        body: impl FnOnce(&mut Self) -> Result<(T, f64), E>,
    ) -> Result<T, E> {
        self.per_op = per;
        self.start_sampling();
        let (value, ops) = body(self)?;
        self.finish_probe(ops);
        Ok(value)
    }

    /// A load stored as this test ([`TestRun::measured`] with the load
    /// bar): `body` reports its progress in `unit`s (`expected` in all) and
    /// returns the rows it wrote, what the probe divides by.
    pub fn load<T, E>(
        &mut self,
        expected: u64,
        unit: &str,
        body: impl FnOnce(&mut Self, &LoadProgress) -> Result<(T, f64), E>,
    ) -> Result<T, E> {
        let progress = load_bar(self.ui, &self.label, expected, unit);
        let out = self.measured("row", |run| body(run, &progress));
        progress.bar.finish_and_clear();
        out
    }
}

/// A warning when the engine profile does not add up to the measured CPU
/// per operation: `server cpu/o` for a server, `client cpu/o` (the rqps
/// process) for an engine inside rqps.
fn profile_check(p: &crate::results::CpuProfile, hw: &HwCost) -> Option<String> {
    let side = p.engine.as_ref()?;
    let costs = profile::side_costs(p, side)?;
    let (measured, figure) = if p.engine_is == "server" {
        (hw.server_cpu_us_per_op?, "server cpu/o")
    } else {
        (hw.client_cpu_us_per_op?, "client cpu/o")
    };
    profile::check_total(&costs, measured, &p.engine_is, figure)
}

/// Why a test's body failed before or after its measured run (a failure
/// during the run is the step's status); stored as the result's `reason`.
#[derive(Debug, thiserror::Error)]
#[error("{}{source}", doing.map(|d| format!("{d}: ")).unwrap_or_default())]
pub struct TestFailure {
    /// What the test was doing, as "could not start the test".
    pub doing: Option<&'static str>,
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

impl TestFailure {
    /// For `map_err`: the error while the test was `doing` something.
    pub fn when<E: Into<Box<dyn std::error::Error + Send + Sync>>>(
        doing: &'static str,
    ) -> impl FnOnce(E) -> TestFailure {
        move |e| TestFailure {
            doing: Some(doing),
            source: e.into(),
        }
    }

    /// An error that already says what failed (a suite's own error type).
    pub fn new(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> TestFailure {
        TestFailure {
            doing: None,
            source: e.into(),
        }
    }
}

impl From<DbError> for TestFailure {
    fn from(e: DbError) -> Self {
        TestFailure::new(e)
    }
}

impl Harness<'_> {
    /// Runs one test: marks `result` running on disk, probes the machine, runs
    /// `body` (the measured part), stores the result and prints its line. An
    /// `Err` from `body` fails the test with that reason; the test is stored
    /// either way. The error returned is only the results directory's.
    pub fn test(
        &mut self,
        label: String,
        result: TestResult,
        body: impl FnOnce(&mut TestRun<'_>) -> Result<(), TestFailure>,
    ) -> Result<TestResult, Error> {
        let slot = self.store.begin_test(&result)?;
        let mut run = TestRun {
            result,
            label,
            driver: &self.driver,
            ui: self.ui,
            ctx: self.probe,
            probe: None,
            profile: None,
            per_op: self.units.per_op,
            placement: self.placement,
        };
        let probe = Probe::before(self.probe, self.driver.as_ref());
        if let Some(w) = probe.warning() {
            run.warn(w.to_string());
        }
        run.probe = Some(probe);
        if self.probe.cpu_profile {
            run.profile = Some(profile::TestProfile::prepare(self.probe.embedded));
        }
        if let Err(reason) = body(&mut run) {
            // After a stop, what failed was cut off (or cancelled) by it.
            if runner::stop_requested() {
                run.result.status = Status::Interrupted;
                run.result.reason = Some(format!("{}: {reason}", runner::stop_cause()));
            } else {
                run.result.status = Status::Failed;
                run.result.reason = Some(reason.to_string());
            }
        }
        // The one status rule: no work, or an interval cut short, is not ok.
        status::apply(&mut run.result, &self.units);
        let TestRun { result, label, .. } = run;
        self.ui
            .result(&with_marks((self.line)(&label, &result), &result));
        // A stall shows only in the finished step's per-second series, an
        // overrun only once it ended: said now, under its line, even with
        // --quiet.
        for w in result.warnings.iter().filter(|w| {
            w.starts_with(crate::results::STALL_WARNING)
                || w.starts_with(crate::results::OVERRAN_WARNING)
        }) {
            self.ui.warn(&format!("{label}: {w}"));
        }
        self.store.finish_test(slot, result.clone())?;
        Ok(result)
    }
}

/// One member of a test's mix (a pgbench script, a TPC-C transaction
/// kind): its figures, stored as a result of its own beside the test's, so
/// that reports and `rqps compare` set each against the base.
pub struct MixMember<'d, D> {
    pub name: String,
    /// The result's group (`pgbench scripts`, `tpcc transactions`).
    pub group: &'static str,
    /// Its transactions, their rate and the failed ones.
    pub count: u64,
    pub per_sec: f64,
    pub errors: u64,
    /// The suite's figures for it, stored in the result's detail under the key.
    pub detail: (&'static str, &'d D),
    /// Whether its line is printed under the test's (indented).
    pub shown: bool,
}

impl Harness<'_> {
    /// Stores a member of `main`'s mix as a result: `main`'s status, time
    /// and threads, the member's rate (transactions per second) and the
    /// latency the runner kept for it.
    pub fn store_member<D: serde::Serialize>(
        &mut self,
        main: &TestResult,
        m: MixMember<'_, D>,
    ) -> Result<(), Error> {
        let mut r = TestResult::running(
            &main.suite,
            m.name.clone(),
            m.group,
            main.threads,
            true,
            "tx/s",
        );
        r.status = main.status;
        r.reason = main.reason.clone();
        r.secs = main.secs;
        r.warmup_secs = main.warmup_secs;
        r.qps = m.per_sec;
        r.tps = m.per_sec;
        r.events = m.count;
        r.errors = m.errors;
        if let Some(op) = main.ops.get(&m.name) {
            r.latency_us = op.latency_us.clone();
        }
        r.set_detail(m.detail.0, m.detail.1);
        let slot = self.store.begin_test(&r)?;
        if m.shown {
            self.ui.say(&(self.line)(&format!("  {}", m.name), &r));
        }
        self.store.finish_test(slot, r)?;
        Ok(())
    }
}

/// A test's line with what limited it (`limit: client 99% of 4 CPUs`) and
/// a `busy` mark when the machine was busy before its step.
pub fn with_marks(mut line: String, r: &TestResult) -> String {
    if r.status != Status::Ok {
        return line;
    }
    if let Some(l) = r.hw.as_ref().and_then(|h| h.limit.as_ref()?.label()) {
        line.push_str(&format!("  limit: {l}"));
    }
    if r.warnings
        .iter()
        .any(|w| w.starts_with(crate::results::BUSY_WARNING))
    {
        line.push_str(&format!("  {BUSY_LINE_MARK}"));
    }
    line
}

/// Fills a result's core from what [`runner::run_step`] measured: throughput
/// in statements per second, events, counters, latency, per-second series and
/// status.
pub fn fill_core(r: &mut TestResult, run: &runner::StepRun) {
    let secs = run.secs.max(1e-9);
    let c = &run.counts;
    r.secs = run.secs;
    r.statements_per_sec = c.queries() as f64 / secs;
    r.tps = c.events as f64 / secs;
    r.qps = r.statements_per_sec;
    r.reads = c.reads;
    r.writes = c.writes;
    r.other = c.other;
    r.events = c.events;
    r.errors = c.errors;
    r.reconnects = c.reconnects;
    r.rows = c.rows;
    r.latency_us = run.latency.clone();
    r.histogram = crate::results::encode_histogram(&run.hist);
    r.per_second = run.per_second.clone();
    r.per_connection = run.per_worker.clone();
    r.event_bound = run.event_bound;
    r.ops = run
        .kinds
        .iter()
        .filter_map(|k| {
            let name = k.name.clone()?;
            Some((
                name,
                crate::results::OpStats {
                    count: k.events,
                    per_sec: k.events as f64 / secs,
                    errors: k.errors,
                    latency_us: measure::Latency::from_histogram(&k.hist),
                },
            ))
        })
        .collect();
    (r.status, r.reason) = step_status(&run.status);
    r.step = Some(Box::new(run.facts.clone()));
    if let Some(w) = stall_warning(&r.per_second, r.latency_us.max) {
        r.warnings.push(w);
    }
}

/// A stall of the server, seen in the per-second series: whole seconds in
/// which no event started (each thread was still waiting for the one before)
/// while some event took more than a second, so the threads were waiting on
/// the server and not idle under a rate limit. The last, partial second
/// does not count. `None` when there was none.
pub fn stall_warning(
    per_second: &[crate::results::SecondSample],
    max_latency_us: f64,
) -> Option<String> {
    if max_latency_us < 1e6 {
        return None;
    }
    let whole = &per_second[..per_second.len().saturating_sub(1)];
    let idle: Vec<u32> = whole
        .iter()
        .filter(|s| s.tps == 0.0 && s.qps == 0.0 && s.errors == 0)
        .map(|s| s.t)
        .collect();
    let (first, last) = (*idle.first()?, *idle.last()?);
    let span = if first == last {
        format!("second {first}")
    } else {
        format!("{} of seconds {first} to {last}", idle.len())
    };
    Some(format!(
        "{}: no statement started in {span} while the threads waited (the longest took {:.1} s); QPS and latency include the stall",
        crate::results::STALL_WARNING,
        max_latency_us / 1e6
    ))
}

/// A step's end as a result's status and reason.
pub fn step_status(s: &runner::StepStatus) -> (Status, Option<String>) {
    match s {
        runner::StepStatus::Ok => (Status::Ok, None),
        runner::StepStatus::Interrupted => (Status::Interrupted, Some(runner::stop_cause().into())),
        runner::StepStatus::Failed(m) => (Status::Failed, Some(m.clone())),
    }
}

/// The settle step between phases: the engine's quieting statements for
/// `names` (checkpoint, analyze, flush), then a sleep for what is left of
/// `budget`. Statements the engine refuses (privileges) come back as text.
pub fn settle_tables(
    driver: &dyn Driver,
    names: &[String],
    budget: Duration,
) -> DbResult<(Duration, Vec<String>)> {
    let started = Instant::now();
    let db = driver.require_sql()?;
    let mut conn = db.connect()?;
    let mut refused = Vec::new();
    for sql in db.dialect().settle(names) {
        if let Err(e) = conn.query(&sql) {
            refused.push(format!("{sql}: {e}"));
        }
    }
    drop(conn);
    if let Some(rest) = budget.checked_sub(started.elapsed()) {
        std::thread::sleep(rest);
    }
    Ok((started.elapsed(), refused))
}

fn opt(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".into())
}

/// The one line printed when a test ends: throughput, p95, errors, CPU per operation.
pub fn result_line(label: &str, r: &TestResult) -> String {
    if r.status != crate::results::Status::Ok {
        return format!(
            "{label:>28}  {}: {}",
            r.status,
            r.reason.clone().unwrap_or_default()
        );
    }
    let unit = if r.qps_unit == "statements/s" {
        "qps    ".to_string()
    } else {
        r.qps_unit.clone()
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
            "  host cpu/o {} us (client {}, server {})",
            opt(hw.cpu_us_per_op),
            opt(hw.client_cpu_us_per_op),
            opt(hw.server_cpu_us_per_op)
        ));
    }
    line
}

#[cfg(test)]
mod tests {

    fn seconds(tps: &[f64]) -> Vec<crate::results::SecondSample> {
        tps.iter()
            .enumerate()
            .map(|(i, &t)| crate::results::SecondSample {
                t: i as u32 + 1,
                qps: t,
                tps: t,
                errors: 0,
            })
            .collect()
    }

    /// A terminal that records what is drawn on it, and the lines a
    /// [`Ui`] prints, in order.
    #[derive(Debug, Clone, Default)]
    struct Screen(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

    impl Screen {
        fn log(&self, s: String) {
            self.0.lock().unwrap().push(s);
        }
    }

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            100
        }
        fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
            self.log(format!("up {n}"));
            Ok(())
        }
        fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
            self.log(format!("down {n}"));
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.log(format!("line {s}"));
            Ok(())
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            if !s.is_empty() {
                self.log(format!("text {s}"));
            }
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            self.log("clear".into());
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A warning while a bar is drawn: the bar's line is cleared first, so
    /// the warning starts a line of its own (it was printed after the bar,
    /// on its line), wrapped to the terminal's width.
    #[test]
    fn a_warning_never_lands_on_a_bar() {
        let screen = Screen::default();
        let printed = screen.clone();
        let ui = Ui {
            bars: indicatif::MultiProgress::with_draw_target(
                indicatif::ProgressDrawTarget::term_like(Box::new(screen.clone())),
            ),
            sink: Some(std::sync::Arc::new(move |t: &str| {
                printed.log(format!("print {t}"))
            })),
            ..Ui::default()
        };
        let bar = ui.bar(100, "load".into(), "{prefix:>28} [{bar:30}] {msg}");
        bar.set_position(40);
        bar.tick();
        ui.warn(&"load: the machine was not idle ".repeat(10));
        let log = screen.0.lock().unwrap().clone();
        let warn_at = log.iter().position(|e| e.contains("warning:")).unwrap();
        // The bar's last drawing before the warning.
        let bar_at = log[..warn_at]
            .iter()
            .rposition(|e| e.contains("[====") || e.starts_with("text  "))
            .unwrap();
        // Since the bar was last drawn, its line was cleared.
        assert!(
            log[bar_at..warn_at].iter().any(|e| e == "clear"),
            "{log:#?}"
        );
        let warning = &log[warn_at];
        assert!(
            warning
                .trim_start_matches("print ")
                .lines()
                .all(|l| l.chars().count() <= ui.width()),
            "{warning}"
        );
        bar.finish_and_clear();
    }

    /// The widest line a bar made by `make` draws on a 100-column screen,
    /// its message 300 characters.
    fn widest_bar_line(make: &dyn Fn(&Ui) -> ProgressBar) -> usize {
        let screen = Screen::default();
        let ui = Ui {
            bars: indicatif::MultiProgress::with_draw_target(
                indicatif::ProgressDrawTarget::term_like(Box::new(screen.clone())),
            ),
            ..Ui::default()
        };
        let bar = make(&ui);
        bar.set_message("the next step's figures so far ".repeat(10));
        bar.set_position(40);
        bar.tick();
        bar.finish_and_clear();
        let log = screen.0.lock().unwrap().clone();
        log.iter()
            .filter_map(|e| e.strip_prefix("line ").or(e.strip_prefix("text ")))
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0)
    }

    /// A bar's message is cut to what the terminal (100 columns here)
    /// leaves it: the bar never runs past the line (it measured 160 on a
    /// 100-column terminal).
    #[test]
    fn a_bar_fits_the_terminal_whatever_its_message() {
        let template = "{prefix:>28} [{bar:30}] {pos}/{len} {msg}";
        let ours = widest_bar_line(&|ui| ui.bar(100, "point-query t1".into(), template));
        assert!((1..=100).contains(&ours), "{ours} columns");
        // The same bar with its message uncut is what the check finds.
        let uncut = widest_bar_line(&|ui| {
            let bar = ui.bars.add(ProgressBar::new(100));
            bar.set_style(ProgressStyle::with_template(template).unwrap());
            bar
        });
        assert!(uncut > 100, "{uncut} columns");
    }

    #[test]
    fn the_busy_warning_is_said_once_and_other_warnings_every_time() {
        let ui = Ui::new(true);
        let busy = format!(
            "{}: other processes used 40% of all CPUs",
            crate::results::BUSY_WARNING
        );
        let first = ui
            .warning_text(&format!("oltp-read-only t=1: {busy}"))
            .unwrap();
        assert!(first.contains("said once"), "{first}");
        assert_eq!(
            ui.warning_text(&format!("oltp-read-only t=2: {busy}")),
            None
        );
        assert_eq!(ui.warning_text(&format!("load: {busy}")), None);
        assert_eq!(
            ui.warning_text("x: the server stalled").as_deref(),
            Some("warning: x: the server stalled")
        );
        assert!(ui.warning_text("x: the server stalled").is_some());
    }

    #[test]
    fn a_busy_or_limited_test_line_carries_its_marks() {
        let mut r = TestResult::running(
            "sysbench",
            "point-query".into(),
            "point",
            4,
            true,
            "statements/s",
        );
        r.status = Status::Ok;
        assert_eq!(with_marks("line".into(), &r), "line");
        r.warnings.push(format!(
            "{}: other processes used 40%",
            crate::results::BUSY_WARNING
        ));
        r.hw = Some(Box::new(HwCost {
            limit: Some(crate::results::Limit {
                by: Some("client".into()),
                threshold_pct: 90.0,
                client_cores: Some(3.97),
                client_cpus: 4,
                host_cpus: 16,
                ..Default::default()
            }),
            ..Default::default()
        }));
        assert_eq!(
            with_marks("line".into(), &r),
            "line  limit: client 99% of 4 CPUs  busy"
        );
    }

    #[test]
    fn seconds_without_events_while_a_statement_waited_are_a_stall() {
        let s = seconds(&[900.0, 0.0, 0.0, 0.0, 850.0, 0.0]);
        let w = stall_warning(&s, 3.2e6).expect("a stall");
        assert!(w.contains("3 of seconds 2 to 4"), "{w}");
        assert!(w.contains("3.2 s"), "{w}");
        let one = stall_warning(&seconds(&[900.0, 0.0, 850.0, 1.0]), 1.5e6).unwrap();
        assert!(one.contains("in second 2 "), "{one}");
    }

    #[test]
    fn idle_seconds_under_a_rate_limit_or_a_short_last_second_are_no_stall() {
        // No statement took a second: the threads were idle, not waiting.
        assert_eq!(
            stall_warning(&seconds(&[5.0, 0.0, 0.0, 5.0]), 2_000.0),
            None
        );
        // Only the last, partial second is empty.
        assert_eq!(stall_warning(&seconds(&[900.0, 850.0, 0.0]), 2e6), None);
        assert_eq!(stall_warning(&[], 2e6), None);
    }
    use super::*;
}
