//! Runs one step: worker threads (one connection each) repeat their event
//! through a warm-up that is not measured, then for the measured duration,
//! until the deadline, Ctrl-C, or a fatal error; a worker with a budget ends
//! when it is spent, and a step without a deadline when every budget is.
//! The workers of a step may be of different kinds (an enum of them) that
//! wait for each other in [`Worker::pause`].

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::engine::{DbError, DbResult, ErrorClass};
use crate::harness::measure::{
    Counts, Latency, SecondSample, ThreadMeasure, event_clock, new_histogram, now_ns, per_second,
    start_clock,
};
use crate::harness::placement::Placement;
use crate::harness::reconnect::{ReconnectError, reconnect_with_backoff};
use crate::results::{EndedBy, EventBound};

/// One thread's side of a workload: what an event is, and how to get back
/// to a clean state after an error.
pub trait Worker: Send {
    /// Runs one event, recording every statement in `c`.
    fn event(&mut self, c: &mut Counts) -> DbResult<()>;
    /// Called after an event failed with a `Retry` or `Reconnect` error:
    /// roll back, or reconnect and prepare again.
    fn recover(&mut self, err: &DbError) -> DbResult<()>;
    /// The names of the operation kinds its events are (TPC-C's transactions,
    /// LinkBench's operations), counted and timed apart. Empty: every event is
    /// of one kind, the test itself.
    fn kinds(&self) -> &'static [&'static str] {
        &[]
    }
    /// The index in [`Worker::kinds`] of the event that just ran or failed.
    #[inline]
    fn kind(&self) -> usize {
        0
    }
    /// Called before each event, outside its timing: a worker that paces
    /// its events (a request rate) sleeps here until the next one is due,
    /// but not past `deadline_ns` (a [`now_ns`] reading). A worker may also
    /// wait here for another worker of the step (the Insert Benchmark's
    /// inserter for its deleter): `stop` turns true when the step is
    /// stopping (Ctrl-C, or another thread failed), and such a wait ends
    /// then. Returns whether it slept (or waited): then the runner reads
    /// the clock again, and runs no event if the step is stopping. Default:
    /// no pacing.
    #[inline]
    fn pause(&mut self, _deadline_ns: u64, _stop: &dyn Fn() -> bool) -> bool {
        false
    }
    /// Called once on the worker's thread when its warm-up ends, before its
    /// first measured event: a worker that keeps figures of its own starts
    /// them here. Default: nothing.
    fn warmed_up(&mut self) {}
    /// True once the worker has nothing more to do (its request budget is
    /// spent, or it gave up): its thread ends early, without an error, and
    /// the step ends when every thread has. Default: never.
    #[inline]
    fn finished(&self) -> bool {
        false
    }
    /// True when the event that just returned `Ok` did not complete: a
    /// worker that waits inside its events (a pgbench `\sleep`) ended the
    /// wait at the step's deadline or at a stop, and undid what the event
    /// began. It is not counted, and the thread ends. Default: never.
    #[inline]
    fn abandoned(&self) -> bool {
        false
    }
}

static STOP: AtomicBool = AtomicBool::new(false);
/// The signal that asked for the stop (0: none, or not a signal).
static STOP_SIGNAL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Asks every running step to stop as soon as its current events finish (Ctrl-C).
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

/// [`request_stop`] for signal `sig` (SIGINT, SIGTERM, SIGHUP): the first
/// one decides the exit status, see [`stop_exit_code`].
pub fn request_stop_by(sig: i32) {
    let _ = STOP_SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    request_stop();
}

static QUITTING: AtomicBool = AtomicBool::new(false);

/// Marks that a second signal is ending the process at once: the thread
/// that handles it exits once the servers are killed and their files gone,
/// and no other thread may exit first (see [`quitting`]).
pub fn begin_quitting() {
    QUITTING.store(true, Ordering::SeqCst);
}

/// Whether [`begin_quitting`] was called.
pub fn quitting() -> bool {
    QUITTING.load(Ordering::SeqCst)
}

/// The exit status of a run that a stop ended: 128 + the signal, as shells
/// report it (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP); 130 without a signal.
pub fn stop_exit_code() -> i32 {
    match STOP_SIGNAL.load(Ordering::SeqCst) {
        0 => 128 + libc::SIGINT,
        sig => 128 + sig,
    }
}

/// What stopped the run, for the reason stored with an interrupted test.
pub fn stop_cause() -> &'static str {
    match STOP_SIGNAL.load(Ordering::SeqCst) {
        libc::SIGTERM => "stopped by SIGTERM",
        libc::SIGHUP => "stopped by SIGHUP",
        _ => "stopped by Ctrl-C",
    }
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

#[derive(Clone, Copy, Debug)]
pub struct StepConfig {
    pub warmup: Duration,
    /// The measured interval after the warm-up. One too long to end (such
    /// as [`Duration::MAX`], see [`StepConfig::until_finished`]) sets no
    /// deadline: the step ends when every worker is [`Worker::finished`].
    pub duration: Duration,
    /// How long a worker keeps trying to reconnect after the connection is
    /// lost (counted from the step's end, or from the loss in a step
    /// without a deadline).
    pub reconnect_for: Duration,
    /// The measured events the step may complete, all workers together
    /// (sysbench's `--events`); `None`: no bound. The step ends at
    /// whichever comes first, its deadline or its last event: a worker
    /// takes an event before it starts one, and an event it retries after
    /// an error keeps its place, so exactly this many complete unless the
    /// deadline, a stop or a failure comes first.
    pub events: Option<u64>,
}

/// Whole seconds of marks a thread's per-second series makes room for at
/// most before the step: a day, the longest duration a suite accepts.
const MAX_EXPECTED_SECS: u64 = 86_401;
/// What it makes room for in a step without a deadline (it grows after).
const OPEN_EXPECTED_SECS: usize = 128;

impl StepConfig {
    /// A step with no warm-up and no deadline, for workers with budgets
    /// (the Insert Benchmark's rows): it ends when every worker is
    /// [`Worker::finished`], at Ctrl-C, or at a fatal error.
    pub fn until_finished(reconnect_for: Duration) -> Self {
        StepConfig {
            warmup: Duration::ZERO,
            duration: Duration::MAX,
            reconnect_for,
            events: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "status", content = "reason", rename_all = "lowercase")]
pub enum StepStatus {
    Ok,
    Failed(String),
    Interrupted,
}

/// What a step measured, summed over its threads.
pub struct StepRun {
    pub status: StepStatus,
    pub counts: Counts,
    /// Length of the measured interval in seconds.
    pub secs: f64,
    pub hist: Histogram<u64>,
    pub latency: Latency,
    pub per_second: Vec<SecondSample>,
    /// Per operation kind, when the workers name kinds (empty otherwise).
    pub kinds: Vec<KindRun>,
    /// What the harness's status rule reads ([`crate::harness::status`]).
    pub facts: crate::results::StepFacts,
    /// The events each worker (connection) completed in the measured
    /// interval, in the workers' order.
    pub per_worker: Vec<u64>,
    /// A step with an event bound that ran to its end: the bound, and
    /// whether its events or its deadline ended it (`None`: no bound, or a
    /// stop or a failure ended it).
    pub event_bound: Option<EventBound>,
}

/// What one kind of operation measured in a step, summed over threads.
pub struct KindRun {
    /// The kind's name (`None` for a step whose events have no kinds).
    pub name: Option<String>,
    pub events: u64,
    /// Events of this kind that failed (and were retried or ended the thread).
    pub errors: u64,
    pub hist: Histogram<u64>,
}

/// What the progress display is told a few times a second.
#[derive(Clone, Copy, Debug)]
pub struct LiveProgress {
    pub elapsed: Duration,
    /// Warm-up and duration ([`Duration::MAX`] in a step without a deadline).
    pub total: Duration,
    pub warming: bool,
    /// Statements per second over the last update interval.
    pub qps: f64,
}

#[repr(align(64))]
#[derive(Default)]
struct Padded(AtomicU64);

/// How often the calling thread looks at the workers.
const TICK: Duration = Duration::from_millis(100);

struct StepState<'a> {
    abort: AtomicBool,
    /// Ends the waits of the step's tasks on the client core: their blocked
    /// sends once the step is stopping (a server that stopped reading
    /// would hold them for the send timeout).
    stop: crate::evloop::Stop,
    live: Vec<Padded>,
    cfg: &'a StepConfig,
    /// When the warm-up and the step end, set once every worker thread
    /// runs: a thread the machine started late starts the clock late, not
    /// inside the measured interval.
    times: std::sync::OnceLock<Times>,
    /// Every worker thread and the calling one: all have started ...
    ready: std::sync::Barrier,
    /// ... and the times are set.
    go: std::sync::Barrier,
    /// Measured events taken so far, against [`StepConfig::events`].
    taken: AtomicU64,
    /// Set when a worker found the event bound spent.
    spent: AtomicBool,
}

/// A step's clock, set when its workers are ready.
struct Times {
    /// The step's deadline (`None`: it has none).
    end: Option<Instant>,
    /// The same instants as [`now_ns`] readings, for the per-event path.
    warm_end_ns: u64,
    end_ns: u64,
}

impl StepState<'_> {
    fn stopping(&self) -> bool {
        stop_requested() || self.abort.load(Ordering::Relaxed)
    }

    /// Takes the next event of the bound: false when the bound is spent
    /// (then the worker ends). Always true without a bound.
    #[inline]
    fn take_event(&self) -> bool {
        let Some(max) = self.cfg.events else {
            return true;
        };
        if self.taken.fetch_add(1, Ordering::Relaxed) < max {
            return true;
        }
        self.spent.store(true, Ordering::Relaxed);
        false
    }

    fn t(&self) -> &Times {
        self.times
            .get()
            .expect("a step's times are set before its workers start")
    }
}

/// Why a worker thread stopped before the step's end; the step fails with
/// its text.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The engine's error, which retrying or reconnecting cannot cure (or
    /// recovering from a retryable one failed).
    #[error("{0}")]
    Engine(#[from] DbError),
    /// The connection was lost and did not come back in time.
    #[error("lost the connection and could not reconnect: {last} (first error: {first})")]
    GaveUp { first: DbError, last: DbError },
    /// Ctrl-C, or another thread's failure, while reconnecting.
    #[error("lost the connection and stopped before it came back (first error: {first})")]
    Stopped { first: DbError },
    #[error("worker thread panicked")]
    Panicked,
    /// The client thread could not start its event loop (epoll, stacks);
    /// each of its workers says so.
    #[error("cannot start the client's event loop: {0}")]
    Core(#[source] std::sync::Arc<std::io::Error>),
}

/// Handles a failed event: counts it and recovers, or says why the thread must stop.
fn on_error<W: Worker>(
    w: &mut W,
    e: DbError,
    c: &mut Counts,
    sh: &StepState<'_>,
) -> Result<(), WorkerError> {
    match e.class {
        ErrorClass::Fatal => Err(e.into()),
        ErrorClass::Retry => {
            c.errors += 1;
            Ok(w.recover(&e)?)
        }
        ErrorClass::Reconnect => {
            c.errors += 1;
            let now = Instant::now();
            let give_up = sh.t().end.map_or(now, |end| now.max(end)) + sh.cfg.reconnect_for;
            match reconnect_with_backoff(give_up, &|| sh.stopping(), || w.recover(&e)) {
                Ok(()) => {
                    c.reconnects += 1;
                    Ok(())
                }
                Err(ReconnectError::Fatal(e2)) => Err(e2.into()),
                Err(ReconnectError::GaveUp(last)) => Err(WorkerError::GaveUp { first: e, last }),
                Err(ReconnectError::Stopped) => Err(WorkerError::Stopped { first: e }),
            }
        }
    }
}

// Not inlined, so a profiler can tell the harness's loop from its callers
// (`bench/harness.sh`'s callgrind figures toggle on it); it runs once per step.
#[inline(never)]
fn work<W: Worker>(
    w: &mut W,
    idx: usize,
    sh: &StepState<'_>,
    expected_secs: usize,
) -> (ThreadMeasure, Option<WorkerError>) {
    let clock = event_clock();
    let stop = || sh.stopping();
    let (warm_end_ns, end_ns) = (sh.t().warm_end_ns, sh.t().end_ns);
    let mut scratch = Counts::default();
    let mut warm_error: Option<String> = None;
    // Warm-up: run events, measure nothing.
    let mut now = clock.now_ns();
    while now < warm_end_ns {
        if sh.stopping() || w.finished() {
            return (ThreadMeasure::new(warm_end_ns, 0, 1), None);
        }
        if w.pause(warm_end_ns, &stop) {
            if sh.stopping() || w.finished() {
                return (ThreadMeasure::new(warm_end_ns, 0, 1), None);
            }
            now = clock.now_ns();
            if now >= warm_end_ns {
                break;
            }
        }
        match w.event(&mut scratch) {
            Ok(()) if w.abandoned() => return (ThreadMeasure::new(warm_end_ns, 0, 1), None),
            Ok(()) => {}
            // An event that failed once a stop was asked for: cancelled by
            // it (see `plan::signals`), not a failure of the test.
            Err(_) if stop_requested() => return (ThreadMeasure::new(warm_end_ns, 0, 1), None),
            Err(e) => {
                warm_error = Some(e.to_string());
                if let Err(msg) = on_error(w, e, &mut scratch, sh) {
                    return (ThreadMeasure::new(warm_end_ns, 0, 1), Some(msg));
                }
            }
        }
        now = clock.now_ns();
    }
    w.warmed_up();
    // The measured interval is the step's, from the end of the warm-up for
    // every thread: a warm-up event that ran past it (or hung) is time of
    // the interval in which this thread completed nothing.
    let mut m = ThreadMeasure::new(warm_end_ns, expected_secs, w.kinds().len().max(1));
    m.warm_error = warm_error;
    let mut t0 = now;
    // Whether this thread holds an event of the bound it has not completed
    // (one that failed and is run again keeps it).
    let mut holding = false;
    loop {
        if sh.stopping() {
            return (m, None);
        }
        if w.finished() {
            m.reached(end_ns, false);
            return (m, None);
        }
        let waited = w.pause(end_ns, &stop);
        if waited {
            t0 = clock.now_ns();
            if sh.stopping() {
                return (m, None);
            }
            if w.finished() {
                m.reached(end_ns, false);
                return (m, None);
            }
        }
        // No event starts after the deadline: a pause that waited for it
        // covered the interval; a warm-up event that ran past it did not.
        if t0 >= end_ns {
            if waited {
                m.reached(end_ns, true);
            }
            return (m, None);
        }
        if !holding && !sh.take_event() {
            return (m, None);
        }
        holding = true;
        m.tick(t0);
        let r = w.event(&mut m.counts);
        let t1 = clock.now_ns();
        match r {
            Ok(()) if w.abandoned() => {
                // Not counted, but the thread worked until it returned: it
                // waited inside its event for the deadline (a pgbench
                // `\sleep`: the interval is covered), or a script's event
                // ran statements (counted) and returned sysbench's stop
                // value. The rates are over that time, not over nothing.
                m.reached(t1.min(end_ns), true);
                return (m, None);
            }
            Ok(()) => {
                holding = false;
                m.event_done(t1, t1 - t0, w.kind())
            }
            // Cancelled by a stop: neither counted nor a failure.
            Err(_) if stop_requested() => return (m, None),
            Err(e) => {
                let answered = e.class == ErrorClass::Retry;
                m.failed(w.kind(), t1, &e);
                if let Err(msg) = on_error(w, e, &mut m.counts, sh) {
                    return (m, Some(msg));
                }
                let now = clock.now_ns();
                if answered {
                    // The rollback after an error the server sent is work too.
                    m.covered = m.covered.max(now);
                }
                // A recovery (a reconnect) that outlasted the deadline.
                if t1 < end_ns && now >= end_ns {
                    return (m, None);
                }
            }
        }
        sh.live[idx].0.store(m.counts.queries(), Ordering::Relaxed);
        if t1 >= end_ns {
            return (m, None);
        }
        t0 = t1;
    }
}

/// Runs `workers` (already connected and prepared) for `cfg`, where
/// `placement` puts them (a thread each, or tasks of a few client threads),
/// calling `on_live` a few times a second from the calling thread, and
/// `on_measured` once when the warm-up ends.
pub fn run_step<W: Worker>(
    workers: &mut [W],
    cfg: &StepConfig,
    placement: &Placement,
    on_live: &mut dyn FnMut(LiveProgress),
    on_measured: &mut dyn FnMut(),
) -> StepRun {
    run_on(
        workers,
        cfg,
        placement.threads_for(workers.len()),
        on_live,
        on_measured,
    )
}

/// What one worker measured, and why it stopped early (if it did).
type WorkerRun = (ThreadMeasure, Option<WorkerError>);

/// [`run_step`] on `j` client threads (a placement's count for these
/// workers: 1 to `workers.len()`).
fn run_on<W: Worker>(
    workers: &mut [W],
    cfg: &StepConfig,
    j: usize,
    on_live: &mut dyn FnMut(LiveProgress),
    on_measured: &mut dyn FnMut(),
) -> StepRun {
    start_clock();
    let n = workers.len();
    // Each client thread's workers: worker i on thread i % j.
    let j = j.clamp(1, n.max(1));
    let sh = StepState {
        abort: AtomicBool::new(false),
        stop: crate::evloop::Stop::new(),
        live: (0..n).map(|_| Padded::default()).collect(),
        cfg,
        times: std::sync::OnceLock::new(),
        ready: std::sync::Barrier::new(j + 1),
        go: std::sync::Barrier::new(j + 1),
        taken: AtomicU64::new(0),
        spent: AtomicBool::new(false),
    };
    let bounded = Instant::now().checked_add(cfg.warmup.saturating_add(cfg.duration));
    let expected_secs = match bounded {
        Some(_) => cfg.duration.as_secs().min(MAX_EXPECTED_SECS) as usize + 1,
        None => OPEN_EXPECTED_SECS,
    };
    let mut groups: Vec<Vec<(usize, &mut W)>> = (0..j).map(|_| Vec::new()).collect();
    for (i, w) in workers.iter_mut().enumerate() {
        groups[i % j].push((i, w));
    }
    let results: Vec<WorkerRun> = std::thread::scope(|s| {
        let sh = &sh;
        let handles: Vec<_> = groups
            .into_iter()
            .map(|g| {
                s.spawn(move || {
                    sh.ready.wait();
                    sh.go.wait();
                    run_group(g, sh, expected_secs)
                })
            })
            .collect();
        let start = start_times(sh, cfg);
        watch(
            sh,
            cfg,
            start,
            &|| handles.iter().all(|h| h.is_finished()),
            on_live,
            on_measured,
        );
        let warm_end_ns = sh.t().warm_end_ns;
        let mut out: Vec<Option<WorkerRun>> = (0..n).map(|_| None).collect();
        for (g, h) in handles.into_iter().enumerate() {
            for (i, r) in h.join().unwrap_or_default() {
                out[i] = Some(r);
            }
            // A thread that panicked outside its tasks: its workers.
            for i in (g..n).step_by(j) {
                out[i].get_or_insert_with(|| {
                    (
                        ThreadMeasure::new(warm_end_ns, 0, 1),
                        Some(WorkerError::Panicked),
                    )
                });
            }
        }
        out.into_iter().flatten().collect()
    });
    summarize(workers, cfg, &sh, results)
}

/// Runs one client thread's workers: alone, on the thread itself; more than
/// one, each in a task of the event-driven core.
fn run_group<W: Worker>(
    group: Vec<(usize, &mut W)>,
    sh: &StepState<'_>,
    expected_secs: usize,
) -> Vec<(usize, WorkerRun)> {
    let one = |w: &mut W, i: usize| {
        let r = work(w, i, sh, expected_secs);
        if r.1.is_some() {
            sh.abort.store(true, Ordering::Relaxed);
        }
        r
    };
    let idx: Vec<usize> = group.iter().map(|(i, _)| *i).collect();
    if let [_] = group.as_slice() {
        let (i, w) = group.into_iter().next().expect("one worker");
        return vec![(i, one(w, i))];
    }
    let tasks = group
        .into_iter()
        .map(|(i, w)| Box::new(move || one(w, i)) as Box<dyn FnOnce() -> WorkerRun + '_>)
        .collect();
    let warm_end_ns = sh.t().warm_end_ns;
    let failed = |e: WorkerError| (ThreadMeasure::new(warm_end_ns, 0, 1), Some(e));
    match crate::evloop::run_until(tasks, &sh.stop) {
        Ok(rs) => idx
            .into_iter()
            .zip(rs)
            .map(|(i, r)| (i, r.unwrap_or_else(|_| failed(WorkerError::Panicked))))
            .collect(),
        Err(e) => {
            sh.abort.store(true, Ordering::Relaxed);
            let e = std::sync::Arc::new(e);
            idx.into_iter()
                .map(|i| (i, failed(WorkerError::Core(e.clone()))))
                .collect()
        }
    }
}

/// Starts the step's clock once every client thread runs; returns when it
/// started.
fn start_times(sh: &StepState<'_>, cfg: &StepConfig) -> Instant {
    sh.ready.wait();
    let start = Instant::now();
    let start_ns = now_ns();
    let warm_end = start + cfg.warmup;
    let warm_end_ns = start_ns + cfg.warmup.as_nanos() as u64;
    let end = warm_end.checked_add(cfg.duration);
    let _ = sh.times.set(Times {
        end,
        warm_end_ns,
        end_ns: match end {
            Some(_) => warm_end_ns
                .saturating_add(u64::try_from(cfg.duration.as_nanos()).unwrap_or(u64::MAX)),
            None => u64::MAX,
        },
    });
    sh.go.wait();
    start
}

/// The calling thread's part: tells the progress display a few times a
/// second, and `on_measured` when the warm-up ends, until `done`.
fn watch(
    sh: &StepState<'_>,
    cfg: &StepConfig,
    start: Instant,
    done: &dyn Fn() -> bool,
    on_live: &mut dyn FnMut(LiveProgress),
    on_measured: &mut dyn FnMut(),
) {
    let warm_end = start + cfg.warmup;
    let total = cfg.warmup.saturating_add(cfg.duration);
    let mut last = (Instant::now(), 0u64);
    let mut measuring = false;
    while !done() {
        if sh.stopping() {
            sh.stop.end(crate::evloop::Waits::Sends);
        }
        let now = Instant::now();
        if !measuring && now >= warm_end {
            measuring = true;
            on_measured();
        }
        let nap = if measuring {
            TICK
        } else {
            (warm_end - now).min(TICK)
        };
        std::thread::sleep(nap);
        let now = Instant::now();
        let q: u64 = sh.live.iter().map(|p| p.0.load(Ordering::Relaxed)).sum();
        let dt = now.duration_since(last.0).as_secs_f64();
        if dt >= 0.5 || q < last.1 {
            let qps = if now < warm_end {
                0.0
            } else {
                q.saturating_sub(last.1) as f64 / dt
            };
            on_live(LiveProgress {
                elapsed: now.duration_since(start),
                total,
                warming: now < warm_end,
                qps,
            });
            last = (now, q);
        }
    }
}

/// How far past its deadline a thread's last event may end before the step
/// counts as overrun: a second, or 5 % of the measured duration if longer.
/// An honest step's threads end within one event's latency of it.
pub fn overrun_margin(duration: Duration) -> Duration {
    Duration::from_secs(1).max(duration.mul_f64(0.05).min(Duration::from_secs(3600)))
}

/// Sums what the workers measured into the step's figures.
fn summarize<W: Worker>(
    workers: &[W],
    cfg: &StepConfig,
    sh: &StepState<'_>,
    results: Vec<WorkerRun>,
) -> StepRun {
    let (warm_end_ns, end) = (sh.t().warm_end_ns, sh.t().end);
    let mut error = None;
    let mut threads = Vec::with_capacity(results.len());
    for (t, e) in results {
        threads.push(t);
        // The cause, not its echo: a thread that was reconnecting when
        // another one failed says only that it stopped.
        error = match (error, e) {
            (Some(WorkerError::Stopped { .. }), Some(e)) => Some(e),
            (error, e) => error.or(e),
        };
    }
    // A thread whose last event ended past the deadline by more than the
    // margin was stuck in it: the others' interval, not its wait, is what
    // the step measured (its rates are not diluted by the wait), and the
    // status rule flags the step with the connections named.
    let lasted = threads
        .iter()
        .map(|t| t.elapsed())
        .max()
        .unwrap_or_default();
    let margin = overrun_margin(cfg.duration);
    let end_ns = sh.t().end_ns;
    let mut overran = Vec::new();
    let elapsed = threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let past = Duration::from_nanos(t.last.saturating_sub(end_ns));
            if end.is_some() && past > margin {
                overran.push((i, past.as_secs_f64()));
                cfg.duration
            } else {
                t.elapsed()
            }
        })
        .max()
        .unwrap_or_default();
    let names: &[&str] = workers.first().map(|w| w.kinds()).unwrap_or(&[]);
    let mut counts = Counts::default();
    let mut hist = new_histogram();
    let mut kinds: Vec<KindRun> = (0..names.len().max(1))
        .map(|i| KindRun {
            name: names.get(i).map(|n| n.to_string()),
            events: 0,
            errors: 0,
            hist: new_histogram(),
        })
        .collect();
    for t in &threads {
        counts.add(&t.counts);
        for (k, tk) in kinds.iter_mut().zip(&t.kinds) {
            let h = tk.latencies.histogram();
            k.events += h.len();
            k.errors += tk.errors;
            let _ = k.hist.add(&h);
        }
    }
    for k in &kinds {
        let _ = hist.add(&k.hist);
    }
    let status = match error {
        // Reconnecting when the stop came: the stop is the cause.
        Some(WorkerError::Stopped { .. }) if stop_requested() => StepStatus::Interrupted,
        Some(e) => StepStatus::Failed(e.to_string()),
        None if stop_requested() => StepStatus::Interrupted,
        None => StepStatus::Ok,
    };
    let ended_by = match (&status, cfg.events) {
        (StepStatus::Ok, Some(_)) if sh.spent.load(Ordering::Relaxed) => Some(EndedBy::Events),
        (StepStatus::Ok, Some(_)) if end.is_some() => Some(EndedBy::Time),
        _ => None,
    };
    let facts = crate::results::StepFacts {
        // An interval its event bound ended is whole where it ends.
        planned_secs: end
            .filter(|_| ended_by != Some(EndedBy::Events))
            .map(|_| cfg.duration.as_secs_f64()),
        covered_secs: threads
            .iter()
            .map(|t| t.covered.saturating_sub(warm_end_ns))
            .max()
            .unwrap_or(0) as f64
            / 1e9,
        last_error: threads.iter().rev().find_map(|t| t.last_error.clone()),
        warm_error: threads.iter().rev().find_map(|t| t.warm_error.clone()),
        lasted_secs: lasted.as_secs_f64(),
        overran,
    };
    StepRun {
        facts,
        status,
        per_worker: threads.iter().map(|t| t.counts.events).collect(),
        event_bound: cfg
            .events
            .zip(ended_by)
            .map(|(events, ended_by)| EventBound { events, ended_by }),
        counts,
        secs: elapsed.as_secs_f64(),
        latency: Latency::from_histogram(&hist),
        per_second: per_second(&threads, elapsed),
        hist,
        kinds: if names.is_empty() { Vec::new() } else { kinds },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread per worker.
    const ONE_EACH: Placement = Placement::thread_per_worker();

    /// At most `n` client threads, workers shared as tasks.
    fn core(n: usize) -> Placement {
        Placement::core(n, crate::engine::OnSockets::for_tests())
    }
    use crate::engine::Outcome;

    /// A worker with no database: each event "reads" one row after a short
    /// spin, and fails as scripted.
    struct Mock {
        n: u64,
        fail_every: Option<(u64, ErrorClass)>,
        recovered: u64,
        reconnect_fails: u32,
    }

    impl Worker for Mock {
        fn event(&mut self, c: &mut Counts) -> DbResult<()> {
            self.n += 1;
            std::hint::black_box((0..200).sum::<u64>());
            if let Some((k, class)) = self.fail_every
                && self.n.is_multiple_of(k)
            {
                return Err(DbError::new(
                    class,
                    crate::engine::Meaning::Other,
                    "scripted",
                ));
            }
            c.record(Outcome::Rows(1));
            Ok(())
        }
        fn recover(&mut self, _e: &DbError) -> DbResult<()> {
            if self.reconnect_fails > 0 {
                self.reconnect_fails -= 1;
                return Err(DbError::new(
                    ErrorClass::Reconnect,
                    crate::engine::Meaning::Other,
                    "refused",
                ));
            }
            self.recovered += 1;
            Ok(())
        }
    }

    fn mock(fail_every: Option<(u64, ErrorClass)>) -> Mock {
        Mock {
            n: 0,
            fail_every,
            recovered: 0,
            reconnect_fails: 0,
        }
    }

    fn cfg(warm_ms: u64, ms: u64) -> StepConfig {
        StepConfig {
            warmup: Duration::from_millis(warm_ms),
            duration: Duration::from_millis(ms),
            reconnect_for: Duration::from_millis(300),
            events: None,
        }
    }

    #[test]
    fn warmup_is_excluded_and_counts_add_up() {
        let mut ws = vec![mock(None), mock(None)];
        let r = run_step(&mut ws, &cfg(200, 1200), &ONE_EACH, &mut |_| {}, &mut || {});
        assert_eq!(r.status, StepStatus::Ok);
        let total_events: u64 = ws.iter().map(|w| w.n).sum();
        // Events of the warm-up ran but are not counted.
        assert!(r.counts.events < total_events);
        assert_eq!(r.counts.events, r.counts.reads);
        assert_eq!(r.hist.len(), r.counts.events);
        assert!(r.secs > 1.15 && r.secs < 2.0, "{}", r.secs);
        // Per-second series: one whole second plus the tail, and it sums to the total.
        let summed: f64 = r.per_second.iter().take(1).map(|s| s.tps).sum();
        assert!(summed > 0.0);
        assert_eq!(r.per_second.len(), 2);
    }

    fn bounded(ms: Option<u64>, events: u64) -> StepConfig {
        StepConfig {
            events: Some(events),
            ..ms.map_or(
                StepConfig::until_finished(Duration::from_millis(300)),
                |ms| cfg(0, ms),
            )
        }
    }

    #[test]
    fn an_event_bound_ends_the_step_after_exactly_that_many_events_of_all_workers() {
        // No deadline (sysbench's --time=0): the events alone end it, a
        // retried event keeping its place (every tenth try fails).
        let mut ws = vec![mock(Some((10, ErrorClass::Retry)))];
        let r = run_step(
            &mut ws,
            &bounded(None, 200),
            &ONE_EACH,
            &mut |_| {},
            &mut || {},
        );
        assert_eq!(
            (r.counts.events, r.counts.errors),
            (200, 22),
            "{:?}",
            r.counts
        );
        // Three workers share the count.
        let mut ws = vec![mock(None), mock(None), mock(None)];
        let r = run_step(
            &mut ws,
            &bounded(None, 200),
            &ONE_EACH,
            &mut |_| {},
            &mut || {},
        );
        assert_eq!(r.status, StepStatus::Ok);
        assert_eq!(r.counts.events, 200, "{:?}", r.per_worker);
        assert_eq!(r.per_worker.iter().sum::<u64>(), 200);
        let b = r.event_bound.unwrap();
        assert_eq!((b.events, b.ended_by), (200, EndedBy::Events));
        // Not judged against a duration it never had.
        assert_eq!(r.facts.planned_secs, None);
        // The same with a deadline far away, on the event-driven core.
        let mut ws: Vec<Sleepy> = (0..6)
            .map(|_| Sleepy {
                n: 0,
                fail_at: None,
            })
            .collect();
        let r = run_step(
            &mut ws,
            &bounded(Some(60_000), 50),
            &core(2),
            &mut |_| {},
            &mut || {},
        );
        assert_eq!(r.counts.events, 50);
        assert_eq!(r.event_bound.unwrap().ended_by, EndedBy::Events);
        assert_eq!(r.facts.planned_secs, None);
        assert!(r.secs < 30.0, "{}", r.secs);
    }

    #[test]
    fn a_deadline_before_the_event_bound_ends_the_step_and_says_so() {
        let mut ws = vec![mock(None)];
        let r = run_step(
            &mut ws,
            &bounded(Some(200), u64::MAX / 2),
            &ONE_EACH,
            &mut |_| {},
            &mut || {},
        );
        assert_eq!(r.status, StepStatus::Ok);
        assert!(r.counts.events > 0);
        assert_eq!(r.event_bound.unwrap().ended_by, EndedBy::Time);
        assert_eq!(r.facts.planned_secs, Some(0.2));
        // Without a bound, nothing is said.
        let r = run_step(&mut ws, &cfg(0, 50), &ONE_EACH, &mut |_| {}, &mut || {});
        assert_eq!(r.event_bound, None);
    }

    /// Events of two kinds in turn, every third one of kind `b` failing.
    struct TwoKinds {
        n: u64,
    }

    impl Worker for TwoKinds {
        fn event(&mut self, c: &mut Counts) -> DbResult<()> {
            self.n += 1;
            std::hint::black_box((0..200).sum::<u64>());
            if self.kind() == 1 && self.n.is_multiple_of(3) {
                return Err(DbError::new(
                    ErrorClass::Retry,
                    crate::engine::Meaning::Other,
                    "scripted",
                ));
            }
            c.record(Outcome::Rows(1));
            Ok(())
        }
        fn recover(&mut self, _e: &DbError) -> DbResult<()> {
            Ok(())
        }
        fn kinds(&self) -> &'static [&'static str] {
            &["a", "b"]
        }
        fn kind(&self) -> usize {
            (self.n % 2) as usize
        }
    }

    #[test]
    fn each_operation_kind_is_counted_and_timed_apart() {
        let mut ws = vec![TwoKinds { n: 0 }, TwoKinds { n: 0 }];
        let r = run_step(&mut ws, &cfg(0, 300), &ONE_EACH, &mut |_| {}, &mut || {});
        assert_eq!(r.status, StepStatus::Ok);
        let names: Vec<_> = r.kinds.iter().map(|k| k.name.clone().unwrap()).collect();
        assert_eq!(names, ["a", "b"]);
        let (a, b) = (&r.kinds[0], &r.kinds[1]);
        assert_eq!(a.events + b.events, r.counts.events);
        assert_eq!(a.hist.len() + b.hist.len(), r.hist.len());
        assert_eq!(a.errors, 0, "kind a never fails");
        assert_eq!(b.errors, r.counts.errors);
        assert!(b.errors > 0 && b.events > 0);
        // A step whose events have no kinds keeps no per-kind figures.
        let mut ws = vec![mock(None)];
        let r = run_step(&mut ws, &cfg(0, 100), &ONE_EACH, &mut |_| {}, &mut || {});
        assert!(r.kinds.is_empty());
    }

    /// Stops after a budget of events, pausing a fixed gap before each.
    struct Paced {
        n: u64,
        budget: u64,
        gap_ns: u64,
        paused: u64,
    }

    impl Worker for Paced {
        fn event(&mut self, c: &mut Counts) -> DbResult<()> {
            self.n += 1;
            c.record(Outcome::Rows(1));
            Ok(())
        }
        fn recover(&mut self, _e: &DbError) -> DbResult<()> {
            Ok(())
        }
        fn pause(&mut self, deadline_ns: u64, _stop: &dyn Fn() -> bool) -> bool {
            let until = (now_ns() + self.gap_ns).min(deadline_ns);
            while now_ns() < until {
                std::thread::sleep(Duration::from_micros(200));
            }
            self.paused += 1;
            true
        }
        fn finished(&self) -> bool {
            self.n >= self.budget
        }
        fn warmed_up(&mut self) {
            self.n = 0;
            self.budget = self.budget.saturating_sub(1000);
        }
    }

    #[test]
    fn a_finished_worker_ends_the_step_early_and_pauses_are_not_timed() {
        // Budgets of 20 and 10 after the warm-up (1000 more before it).
        let mut ws = vec![
            Paced {
                n: 0,
                budget: 1020,
                gap_ns: 2_000_000,
                paused: 0,
            },
            Paced {
                n: 0,
                budget: 1010,
                gap_ns: 2_000_000,
                paused: 0,
            },
        ];
        let t = Instant::now();
        let r = run_step(
            &mut ws,
            &cfg(50, 10_000),
            &ONE_EACH,
            &mut |_| {},
            &mut || {},
        );
        assert_eq!(r.status, StepStatus::Ok);
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        // The budget counts from the end of the warm-up, exactly.
        assert_eq!(r.counts.events, 30);
        assert!(ws[0].paused > 20, "{}", ws[0].paused);
        // Events take microseconds; the 2 ms pauses before them are not in their latency.
        assert!(r.latency.max < 1_000.0, "{:?}", r.latency);
        assert!(r.secs >= 0.035, "{}", r.secs);
    }

    #[test]
    fn retryable_errors_are_counted_and_the_test_goes_on() {
        let mut ws = vec![mock(Some((10, ErrorClass::Retry)))];
        let r = run_step(&mut ws, &cfg(0, 300), &ONE_EACH, &mut |_| {}, &mut || {});
        assert_eq!(r.status, StepStatus::Ok);
        assert!(r.counts.errors > 0);
        assert_eq!(ws[0].recovered, r.counts.errors);
        // One failed event in ten.
        let ratio = r.counts.errors as f64 / (r.counts.events + r.counts.errors) as f64;
        assert!((ratio - 0.1).abs() < 0.01, "{ratio}");
    }

    #[test]
    fn lost_connections_reconnect_with_backoff() {
        let mut w = mock(Some((1000, ErrorClass::Reconnect)));
        w.reconnect_fails = 2;
        let mut ws = vec![w];
        let r = run_step(&mut ws, &cfg(0, 300), &ONE_EACH, &mut |_| {}, &mut || {});
        assert_eq!(r.status, StepStatus::Ok);
        assert!(r.counts.reconnects >= 1);
    }

    #[test]
    fn a_fatal_error_fails_the_step_and_stops_all_threads() {
        let mut ws = vec![mock(Some((50, ErrorClass::Fatal))), mock(None)];
        let t = Instant::now();
        let r = run_step(&mut ws, &cfg(0, 5000), &ONE_EACH, &mut |_| {}, &mut || {});
        assert!(t.elapsed() < Duration::from_secs(2));
        assert_eq!(r.status, StepStatus::Failed("scripted".into()));
    }

    #[test]
    fn reconnect_gives_up_when_the_server_stays_gone() {
        let mut w = mock(Some((5, ErrorClass::Reconnect)));
        w.reconnect_fails = u32::MAX;
        let mut ws = vec![w];
        let r = run_step(&mut ws, &cfg(0, 100), &ONE_EACH, &mut |_| {}, &mut || {});
        match r.status {
            StepStatus::Failed(m) => assert!(m.contains("could not reconnect"), "{m}"),
            s => panic!("{s:?}"),
        }
    }

    #[test]
    fn a_step_without_a_deadline_ends_when_every_worker_is_finished() {
        let paced = |budget| Paced {
            n: 0,
            budget,
            gap_ns: 1_000_000,
            paused: 0,
        };
        // Budgets of 30 and 60 after the (no-op) warm-up's 1000.
        let mut ws = vec![paced(1030), paced(1060)];
        let cfg = StepConfig::until_finished(Duration::from_millis(300));
        let r = run_step(&mut ws, &cfg, &ONE_EACH, &mut |_| {}, &mut || {});
        assert_eq!(r.status, StepStatus::Ok);
        assert_eq!(r.counts.events, 90);
        // 60 pauses of 1 ms: the step lasted as long as its longest budget.
        assert!(r.secs >= 0.055 && r.secs < 2.0, "{}", r.secs);
    }

    #[test]
    fn reconnecting_in_a_step_without_a_deadline_gives_up_after_reconnect_for() {
        let mut w = mock(Some((5, ErrorClass::Reconnect)));
        w.reconnect_fails = u32::MAX;
        let mut ws = vec![w];
        let t = Instant::now();
        let cfg = StepConfig::until_finished(Duration::from_millis(300));
        let r = run_step(&mut ws, &cfg, &ONE_EACH, &mut |_| {}, &mut || {});
        match r.status {
            StepStatus::Failed(m) => assert!(m.contains("could not reconnect"), "{m}"),
            s => panic!("{s:?}"),
        }
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    }

    /// Waits in its pause for a go that never comes, or fails (fatally, or
    /// by losing a connection that never comes back) at its `n`-th event.
    struct Waiter {
        n: u64,
        wait: bool,
        fail_at: Option<(u64, ErrorClass, &'static str)>,
        woken: bool,
    }

    impl Worker for Waiter {
        fn event(&mut self, c: &mut Counts) -> DbResult<()> {
            self.n += 1;
            if let Some((at, class, message)) = self.fail_at
                && self.n == at
            {
                return Err(DbError::new(class, crate::engine::Meaning::Other, message));
            }
            c.record(Outcome::Rows(1));
            Ok(())
        }
        fn recover(&mut self, e: &DbError) -> DbResult<()> {
            Err(e.clone())
        }
        fn pause(&mut self, _deadline_ns: u64, stop: &dyn Fn() -> bool) -> bool {
            if !self.wait {
                std::thread::sleep(Duration::from_millis(5));
                return true;
            }
            while !stop() {
                std::thread::sleep(Duration::from_millis(1));
            }
            self.woken = true;
            true
        }
    }

    fn waiter(wait: bool, fail_at: Option<(u64, ErrorClass, &'static str)>) -> Waiter {
        Waiter {
            n: 0,
            wait,
            fail_at,
            woken: false,
        }
    }

    #[test]
    fn a_wait_on_another_worker_ends_when_the_step_stops_and_runs_no_event() {
        let mut ws = vec![
            waiter(true, None),
            waiter(false, Some((3, ErrorClass::Fatal, "disk full"))),
        ];
        let t = Instant::now();
        let r = run_step(&mut ws, &cfg(0, 10_000), &ONE_EACH, &mut |_| {}, &mut || {});
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        assert_eq!(r.status, StepStatus::Failed("disk full".into()));
        // The waiter saw the stop, and its event did not run after it.
        assert!(ws[0].woken);
        assert_eq!(ws[0].n, 0);
    }

    #[test]
    fn the_step_fails_with_the_cause_not_with_a_thread_stopped_while_reconnecting() {
        // Thread 0 loses its connection for good and keeps reconnecting
        // (for 10 s) until thread 1 fails for a reason of its own.
        let mut ws = vec![
            waiter(false, Some((1, ErrorClass::Reconnect, "connection reset"))),
            waiter(false, Some((20, ErrorClass::Fatal, "disk full"))),
        ];
        let mut c = cfg(0, 10_000);
        c.reconnect_for = Duration::from_secs(10);
        let t = Instant::now();
        let r = run_step(&mut ws, &c, &ONE_EACH, &mut |_| {}, &mut || {});
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert_eq!(r.status, StepStatus::Failed("disk full".into()));
    }

    /// Answers (after 1 ms) until its `hang_at`-th event of the warm-up, or
    /// of the measured interval, then waits `hang` in that event and fails
    /// it as a lost connection; reconnects at once.
    struct Hangs {
        measuring: bool,
        n: u64,
        hang_at: (bool, u64),
        hang: Duration,
        hung: bool,
    }

    impl Worker for Hangs {
        fn event(&mut self, c: &mut Counts) -> DbResult<()> {
            self.n += 1;
            if !self.hung && (self.measuring, self.n) == self.hang_at {
                self.hung = true;
                std::thread::sleep(self.hang);
                return Err(DbError::new(
                    ErrorClass::Reconnect,
                    crate::engine::Meaning::Other,
                    "the reply stopped mid-message",
                ));
            }
            std::thread::sleep(Duration::from_millis(1));
            c.record(Outcome::Rows(1));
            Ok(())
        }
        fn recover(&mut self, _e: &DbError) -> DbResult<()> {
            Ok(())
        }
        fn warmed_up(&mut self) {
            (self.measuring, self.n) = (true, 0);
        }
    }

    fn hangs(measuring: bool, at: u64, hang_ms: u64) -> Hangs {
        Hangs {
            measuring: false,
            n: 0,
            hang_at: (measuring, at),
            hang: Duration::from_millis(hang_ms),
            hung: false,
        }
    }

    #[test]
    fn an_event_that_hangs_past_the_deadline_leaves_the_interval_covered_up_to_the_hang() {
        // The 21st measured event hangs for 1.5 s, past the 1 s measured.
        let mut ws = vec![hangs(true, 21, 1500)];
        let r = run_step(&mut ws, &cfg(100, 1000), &ONE_EACH, &mut |_| {}, &mut || {});
        assert_eq!(r.status, StepStatus::Ok);
        assert_eq!(
            (r.counts.events, r.counts.errors),
            (20, 1),
            "{:?}",
            r.counts
        );
        let f = &r.facts;
        assert_eq!(f.planned_secs, Some(1.0));
        // Up to the end of the 20th event: well short of the second.
        assert!(
            f.covered_secs > 0.0 && f.covered_secs < 0.9,
            "{}",
            f.covered_secs
        );
        assert_eq!(
            f.last_error.as_deref(),
            Some("the reply stopped mid-message")
        );
    }

    #[test]
    fn a_warm_up_event_that_hangs_past_the_deadline_measures_nothing_after_it() {
        // The warm-up's first event hangs until after the measured second.
        let mut ws = vec![hangs(false, 1, 2000)];
        let r = run_step(&mut ws, &cfg(500, 1000), &ONE_EACH, &mut |_| {}, &mut || {});
        assert_eq!(r.status, StepStatus::Ok);
        assert_eq!(r.counts.events, 0, "no event starts after the deadline");
        assert_eq!(r.facts.covered_secs, 0.0);
        assert!(r.facts.warm_error.is_some());
    }

    #[test]
    fn a_whole_interval_and_a_paced_one_are_covered_to_the_deadline() {
        let mut ws = vec![mock(Some((10, ErrorClass::Retry)))];
        let r = run_step(&mut ws, &cfg(0, 300), &ONE_EACH, &mut |_| {}, &mut || {});
        assert!(r.facts.covered_secs >= 0.3, "{}", r.facts.covered_secs);
        // A worker that waits 40 ms before each event: its last one ends
        // before the deadline, and it waited for the deadline after it.
        let mut ws = vec![Paced {
            n: 0,
            budget: u64::MAX,
            gap_ns: 40_000_000,
            paused: 0,
        }];
        let r = run_step(&mut ws, &cfg(0, 300), &ONE_EACH, &mut |_| {}, &mut || {});
        assert!(r.facts.covered_secs >= 0.3, "{}", r.facts.covered_secs);
        // Its rates are over the whole interval (the upper bound is a slow
        // machine's, not a check).
        assert!(r.secs >= 0.3 && r.secs < 2.0, "{}", r.secs);
    }

    /// Answers in 1 ms, except its `stuck_at`-th measured event, which
    /// takes `stuck` and then succeeds (a statement stuck on a lock).
    struct Stuck {
        n: u64,
        stuck_at: Option<u64>,
        stuck: Duration,
    }

    impl Worker for Stuck {
        fn event(&mut self, c: &mut Counts) -> DbResult<()> {
            self.n += 1;
            let d = if Some(self.n) == self.stuck_at {
                self.stuck
            } else {
                Duration::from_millis(1)
            };
            std::thread::sleep(d);
            c.record(Outcome::Rows(1));
            Ok(())
        }
        fn recover(&mut self, _e: &DbError) -> DbResult<()> {
            Ok(())
        }
    }

    #[test]
    fn a_connection_stuck_past_the_deadline_is_named_and_does_not_dilute_the_rates() {
        let stuck = |at| Stuck {
            n: 0,
            stuck_at: at,
            stuck: Duration::from_millis(1600),
        };
        let mut ws = vec![stuck(None), stuck(Some(5)), stuck(None)];
        let r = run_step(&mut ws, &cfg(0, 300), &ONE_EACH, &mut |_| {}, &mut || {});
        assert_eq!(r.status, StepStatus::Ok);
        let f = &r.facts;
        assert_eq!(f.overran.len(), 1, "{:?}", f.overran);
        assert_eq!(f.overran[0].0, 1);
        assert!(f.overran[0].1 > 1.0, "{:?}", f.overran);
        assert!(f.lasted_secs > 1.5, "{}", f.lasted_secs);
        // Before: over the 1.6 s the stuck one took.
        assert!(r.secs < 0.6, "{}", r.secs);
        // Quiet when none is stuck.
        let mut ws = vec![stuck(None), stuck(None)];
        let r = run_step(&mut ws, &cfg(0, 300), &ONE_EACH, &mut |_| {}, &mut || {});
        assert!(r.facts.overran.is_empty());
        assert!(r.secs < 0.6, "{}", r.secs);
    }

    /// Runs one statement in 30 ms, then ends its thread as a script's
    /// event that returns sysbench's stop value does (not counted).
    struct StopsAtOnce {
        ended: bool,
    }

    impl Worker for StopsAtOnce {
        fn event(&mut self, c: &mut Counts) -> DbResult<()> {
            std::thread::sleep(Duration::from_millis(30));
            c.record(Outcome::Rows(1));
            self.ended = true;
            Ok(())
        }
        fn recover(&mut self, _e: &DbError) -> DbResult<()> {
            Ok(())
        }
        fn finished(&self) -> bool {
            self.ended
        }
        fn abandoned(&self) -> bool {
            self.ended
        }
    }

    #[test]
    fn a_thread_that_ends_in_its_first_event_is_rated_over_the_time_it_ran() {
        let mut ws = vec![StopsAtOnce { ended: false }];
        let r = run_step(&mut ws, &cfg(0, 2000), &ONE_EACH, &mut |_| {}, &mut || {});
        assert_eq!(r.status, StepStatus::Ok);
        assert_eq!((r.counts.events, r.counts.reads), (0, 1));
        // One statement in about 30 ms: about 33 a second, where an interval
        // of nothing gave a billion.
        assert!(r.secs >= 0.029 && r.secs < 1.0, "{}", r.secs);
    }

    /// Each event waits 2 ms as a reply would (a sleep of the core), and
    /// fails fatally at its `fail_at`-th event if told.
    struct Sleepy {
        n: u64,
        fail_at: Option<u64>,
    }

    impl Worker for Sleepy {
        fn event(&mut self, c: &mut Counts) -> DbResult<()> {
            self.n += 1;
            crate::evloop::sleep(Duration::from_millis(2));
            if self.fail_at == Some(self.n) {
                return Err(DbError::fatal("scripted"));
            }
            c.record(Outcome::Rows(1));
            Ok(())
        }
        fn recover(&mut self, _e: &DbError) -> DbResult<()> {
            Ok(())
        }
    }

    #[test]
    fn many_workers_on_two_client_threads_wait_at_once_and_each_progresses() {
        let mut ws: Vec<Sleepy> = (0..16)
            .map(|_| Sleepy {
                n: 0,
                fail_at: None,
            })
            .collect();
        let r = run_step(&mut ws, &cfg(50, 300), &core(2), &mut |_| {}, &mut || {});
        assert_eq!(r.status, StepStatus::Ok);
        assert_eq!(r.per_worker.len(), 16);
        // 16 waits of 2 ms overlap on 2 threads: each worker completes
        // about 150 events in 300 ms, not 150 / 8 as one after another.
        for (i, &n) in r.per_worker.iter().enumerate() {
            assert!(n > 60, "worker {i}: {n} events ({:?})", r.per_worker);
        }
        assert_eq!(r.counts.events, r.per_worker.iter().sum::<u64>());
        // The latency is each event's own wait, not its thread's queue.
        assert!(r.latency.p50 < 10_000.0, "{:?}", r.latency);
    }

    #[test]
    fn a_fatal_error_on_the_core_stops_the_other_tasks_of_every_thread() {
        let mut ws: Vec<Sleepy> = (0..6)
            .map(|i| Sleepy {
                n: 0,
                fail_at: (i == 4).then_some(10),
            })
            .collect();
        let t = Instant::now();
        let r = run_step(&mut ws, &cfg(0, 5000), &core(2), &mut |_| {}, &mut || {});
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        assert_eq!(r.status, StepStatus::Failed("scripted".into()));
    }

    #[test]
    fn on_the_core_a_worker_without_a_deadline_ends_with_its_budget() {
        let paced = |budget| Paced {
            n: 0,
            budget,
            gap_ns: 0,
            paused: 0,
        };
        let mut ws = vec![paced(1030), paced(1060), paced(1010)];
        let cfg = StepConfig::until_finished(Duration::from_millis(300));
        let r = run_step(&mut ws, &cfg, &core(1), &mut |_| {}, &mut || {});
        assert_eq!(r.status, StepStatus::Ok);
        assert_eq!(r.per_worker, [30, 60, 10]);
    }

    /// Sends into a socket whose peer never reads (its sends block, up to
    /// a 30 s timeout), or, without one, fails fatally at its 10th event.
    struct SendsOrFails {
        sock: Option<(
            std::os::unix::net::UnixStream,
            std::os::unix::net::UnixStream,
        )>,
        n: u64,
    }

    impl Worker for SendsOrFails {
        fn event(&mut self, c: &mut Counts) -> DbResult<()> {
            self.n += 1;
            let Some((s, _)) = &self.sock else {
                crate::evloop::sleep(Duration::from_millis(2));
                if self.n == 10 {
                    return Err(DbError::fatal("scripted"));
                }
                c.record(Outcome::Rows(1));
                return Ok(());
            };
            let fd = std::os::fd::AsRawFd::as_raw_fd(s);
            match crate::evloop::send(fd, &[0u8; 65536]) {
                Ok(_) => {
                    c.record(Outcome::Rows(0));
                    Ok(())
                }
                Err(e) => Err(DbError::lost(e.to_string())),
            }
        }
        fn recover(&mut self, _e: &DbError) -> DbResult<()> {
            Ok(())
        }
    }

    #[test]
    fn on_the_core_a_send_blocked_on_a_silent_peer_ends_when_the_step_stops() {
        let stuck = || {
            let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
            let fd = std::os::fd::AsRawFd::as_raw_fd(&a);
            crate::evloop::new_fd(fd);
            let t = Some(Duration::from_secs(30));
            crate::evloop::set_timeout(fd, crate::evloop::Interest::Write, t).unwrap();
            SendsOrFails {
                sock: Some((a, b)),
                n: 0,
            }
        };
        let mut ws = vec![stuck(), SendsOrFails { sock: None, n: 0 }, stuck()];
        let t = Instant::now();
        let r = run_step(&mut ws, &cfg(0, 20_000), &core(1), &mut |_| {}, &mut || {});
        // The fatal error stops the step; the blocked sends end with it,
        // not at their 30 s timeout.
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert_eq!(r.status, StepStatus::Failed("scripted".into()));
    }
}
