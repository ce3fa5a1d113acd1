//! What a worker records while it runs: statement counts the way sysbench
//! counts them, an HDR histogram of event latency, and a per-second series.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::engine::Outcome;

/// Statement and event counters of one thread (or of a whole test).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Statements that returned a result set.
    pub reads: u64,
    /// Statements with no result set that changed rows.
    pub writes: u64,
    /// BEGIN/COMMIT and statements that changed nothing.
    pub other: u64,
    /// Events (sysbench "transactions") that completed.
    pub events: u64,
    /// Events that failed with a retryable error (counted, then retried).
    pub errors: u64,
    /// Connections re-established after a lost connection.
    pub reconnects: u64,
    /// Rows returned by reads.
    pub rows: u64,
}

impl Counts {
    #[inline]
    pub fn record(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Rows(n) => {
                self.reads += 1;
                self.rows += n;
            }
            Outcome::Affected(0) => self.other += 1,
            Outcome::Affected(_) => self.writes += 1,
        }
    }

    #[inline]
    pub fn queries(&self) -> u64 {
        self.reads + self.writes + self.other
    }

    pub fn add(&mut self, o: &Counts) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.other += o.other;
        self.events += o.events;
        self.errors += o.errors;
        self.reconnects += o.reconnects;
        self.rows += o.rows;
    }

    pub fn minus(&self, o: &Counts) -> Counts {
        Counts {
            reads: self.reads - o.reads,
            writes: self.writes - o.writes,
            other: self.other - o.other,
            events: self.events - o.events,
            errors: self.errors - o.errors,
            reconnects: self.reconnects - o.reconnects,
            rows: self.rows - o.rows,
        }
    }
}

pub use crate::results::{Latency, SecondSample};

use super::series::{self, Seconds, Tally};

impl Tally for Counts {
    fn merge(&mut self, o: &Counts) {
        self.add(o);
    }

    fn since(&self, earlier: &Counts) -> Counts {
        self.minus(earlier)
    }
}

const NANOS_PER_SEC: u64 = 1_000_000_000;

/// The clock behind [`now_ns`]: the CPU's time-stamp counter, scaled to
/// nanoseconds, where the CPU has an invariant one (quanta checks, and
/// falls back to CLOCK_MONOTONIC where it has not).
pub struct EventClock {
    clock: quanta::Clock,
    /// The counter's reading, and CLOCK_MONOTONIC's, when the clock was made:
    /// [`now_ns`] counts from the latter, so its values look like the
    /// monotonic clock's.
    base_raw: u64,
    base_ns: u64,
}

static CLOCK: std::sync::OnceLock<EventClock> = std::sync::OnceLock::new();

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * NANOS_PER_SEC + ts.tv_nsec as u64
}

/// The clock of [`now_ns`], for a loop that reads it per event and would
/// rather not look up the process's clock each time.
#[inline]
pub fn event_clock() -> &'static EventClock {
    CLOCK.get_or_init(|| {
        // Calibrating the counter against CLOCK_MONOTONIC takes up to 200 ms,
        // once per process: [`start_clock`] does it before a step is timed.
        let clock = quanta::Clock::new();
        let base_raw = clock.raw();
        EventClock {
            clock,
            base_raw,
            base_ns: monotonic_ns(),
        }
    })
}

/// Makes the clock of [`now_ns`] ready (calibrates it, once per process), so
/// that the first reading inside a measured interval costs no more than the
/// others.
pub fn start_clock() {
    event_clock();
}

/// Monotonic clock in nanoseconds, read once per event by every worker.
/// Why the time-stamp counter and not CLOCK_MONOTONIC: on this project's
/// 2-core KVM guest (clocksource tsc) a vDSO `clock_gettime` took 31-32 ns
/// and this clock, the counter read with its scaling, 12 ns (the ignored
/// test `what_a_clock_reading_costs`: 20 million calls each, 4 alternating
/// rounds, load 1.6), and the harness has about 3 % of a 3.5 us SQLite point query to spend
/// (issue 11's target); the scaling is a multiply and a shift. Readings
/// are only compared with each other, within one process.
#[inline]
pub fn now_ns() -> u64 {
    event_clock().now_ns()
}

/// Sleeps until `t_ns` (a [`now_ns`] reading). The one sleep of workers
/// (pacing, think times, backoff): inside a task of the event-driven core
/// ([`crate::evloop`]) the client thread runs its other connections
/// meanwhile, where `std::thread::sleep` would stop them all.
pub fn sleep_until_ns(t_ns: u64) {
    let now = now_ns();
    if t_ns > now {
        crate::evloop::sleep(Duration::from_nanos(t_ns - now));
    }
}

impl EventClock {
    /// [`now_ns`].
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.base_ns + self.clock.delta_as_nanos(self.base_raw, self.clock.raw())
    }
}

/// Latency histogram of events in nanoseconds, up to an hour, with 2 significant digits
/// (values within 1 %). Three digits would need a 256 KB counts array per thread, which
/// every event touches at a random place: after each context switch that costs cache misses
/// that showed up as 15-20 % of rqps's user CPU per query against a server; two digits need 36 KB.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 2).expect("valid histogram bounds")
}

/// The largest latency a test records (an hour); longer events count as this.
pub const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// Sub-buckets per power of two: 256 below 256 ns (exact), then 128 per
/// doubling, the layout of an HDR histogram with 2 significant digits.
const SUB: u64 = 128;
const LINEAR: u64 = 2 * SUB;
/// Slots up to [`MAX_LATENCY_NS`] (2^42 ns): 256 exact ones, then 128 for each
/// of the 34 doublings above 256.
const SLOTS: usize = (LINEAR + 35 * SUB) as usize;

/// Event latencies of one thread, counted per event in the bucket layout of
/// [`new_histogram`] and handed over as that HDR histogram when the step
/// ends ([`Recorder::histogram`]). Why not record into the HDR histogram
/// directly: its `record` (bounds, min/max, total, checked add) cost about
/// 50 instructions per event under callgrind, this about 10, and the harness
/// has about 3 % of a 3.5 us SQLite point query to spend (issue 11's target).
/// Both quantize a value to the same bucket, so percentiles are identical.
pub struct Recorder {
    counts: Box<[u64; SLOTS]>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            counts: Box::new([0; SLOTS]),
        }
    }
}

impl Recorder {
    /// The slot of `ns` (clamped to [`MAX_LATENCY_NS`]).
    #[inline]
    fn slot(ns: u64) -> usize {
        let v = ns.min(MAX_LATENCY_NS);
        if v < LINEAR {
            return v as usize;
        }
        // 2^e <= v < 2^(e+1), e >= 8: keep the top 8 bits (128..255).
        let shift = 63 - v.leading_zeros() as u64 - 7;
        (LINEAR + (shift - 1) * SUB + ((v >> shift) - SUB)) as usize
    }

    /// The lowest value of slot `i` (what the HDR histogram reports for it).
    fn value(i: usize) -> u64 {
        let i = i as u64;
        if i < LINEAR {
            return i;
        }
        let shift = (i - LINEAR) / SUB + 1;
        ((i - LINEAR) % SUB + SUB) << shift
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        let i = Self::slot(ns);
        // `slot` never exceeds SLOTS - 1 (a test checks it); the bounds check
        // that stays always predicts.
        self.counts[i] += 1;
    }

    /// Events recorded.
    pub fn len(&self) -> u64 {
        self.counts.iter().sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The same counts as an HDR histogram ([`new_histogram`]'s bounds).
    pub fn histogram(&self) -> Histogram<u64> {
        let mut h = new_histogram();
        for (i, &n) in self.counts.iter().enumerate() {
            if n > 0 {
                // A zero-length event counts as the histogram's lowest value, 1 ns.
                let _ = h.record_n(Self::value(i).max(1), n);
            }
        }
        h
    }
}

/// One operation kind's latencies and failures on one thread.
pub struct KindMeasure {
    pub errors: u64,
    pub latencies: Recorder,
}

/// Everything one thread measured during the measured interval.
pub struct ThreadMeasure {
    pub counts: Counts,
    /// Per operation kind (one entry when the events have no kinds); the
    /// step's histogram is their sum, so an event is recorded once.
    pub kinds: Vec<KindMeasure>,
    /// Counts at each whole second after the measured interval began.
    pub seconds: Seconds<Counts>,
    /// When the last measured event ended ([`now_ns`]), or the deadline
    /// for a thread that waited for it (a paced worker): the end of the
    /// interval its rates are counted over.
    pub last: u64,
    /// How far the thread's work reached ([`now_ns`]): the end of its last
    /// event that the server answered (a success, or an error it sent back),
    /// or the deadline it waited for or had no more to do by. A thread
    /// whose connection stopped answering stays where the silence began.
    pub covered: u64,
    /// The last error an event of the measured interval failed with.
    pub last_error: Option<String>,
    /// The last error of the warm-up, if any.
    pub warm_error: Option<String>,
}

impl ThreadMeasure {
    /// `start` is a [`now_ns`] reading; `kinds` operation kinds (at least 1).
    pub fn new(start: u64, expected_secs: usize, kinds: usize) -> Self {
        ThreadMeasure {
            counts: Counts::default(),
            kinds: (0..kinds.max(1))
                .map(|_| KindMeasure {
                    errors: 0,
                    latencies: Recorder::default(),
                })
                .collect(),
            seconds: Seconds::new(start, expected_secs),
            last: start,
            covered: start,
            last_error: None,
            warm_error: None,
        }
    }

    /// Records one event of kind `kind` that ended at `end` after `nanos`.
    #[inline]
    pub fn event_done(&mut self, end: u64, nanos: u64, kind: usize) {
        self.counts.events += 1;
        self.last = end;
        self.covered = end;
        let k = if kind < self.kinds.len() { kind } else { 0 };
        // Values beyond the histogram's hour are clamped rather than lost.
        self.kinds[k].latencies.record(nanos);
    }

    /// Counts a failed event of kind `kind` that ended at `end` with
    /// `err` (not on the per-event path). An error the server sent back
    /// (one to retry) is work that reached it; a lost connection is not.
    pub fn failed(&mut self, kind: usize, end: u64, err: &crate::engine::DbError) {
        let k = if kind < self.kinds.len() { kind } else { 0 };
        self.kinds[k].errors += 1;
        if err.class == crate::engine::ErrorClass::Retry {
            self.covered = self.covered.max(end);
        }
        self.last_error = Some(err.to_string());
    }

    /// The thread reached the deadline `end` without an event to run (it
    /// waited for its next one, or had no more to do): its interval lasts
    /// until then. No deadline (`u64::MAX`): nothing changes.
    pub fn reached(&mut self, end: u64, paced: bool) {
        if end == u64::MAX {
            return;
        }
        self.covered = self.covered.max(end);
        if paced {
            self.last = self.last.max(end);
        }
    }

    /// Called before each event starts: closes the seconds that ended before
    /// `now`, so an event counts in the second in which it started.
    #[inline]
    pub fn tick(&mut self, now: u64) {
        self.seconds.tick(now, &mut self.counts);
    }

    pub fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.last.saturating_sub(self.seconds.start()))
    }
}

/// The step's per-second series: every thread's seconds summed
/// ([`series::merge`]). A trailing part-second, if any, is reported at its own rate.
pub fn per_second(threads: &[ThreadMeasure], elapsed: Duration) -> Vec<SecondSample> {
    let each: Vec<(&Seconds<Counts>, &Counts)> =
        threads.iter().map(|t| (&t.seconds, &t.counts)).collect();
    series::merge(&each, elapsed.as_secs_f64(), 0.05, |d| {
        d.events > 0 || d.errors > 0
    })
    .into_iter()
    .map(|s| SecondSample {
        t: s.at.ceil() as u32,
        qps: s.d.queries() as f64 / s.secs,
        tps: s.d.events as f64 / s.secs,
        errors: s.d.errors,
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorder_buckets_values_as_the_hdr_histogram_does() {
        let mut r = Recorder::default();
        let mut h = new_histogram();
        let mut v = 1u64;
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            // Values over every magnitude up to the hour.
            v = (rng >> (rng % 62)).clamp(1, MAX_LATENCY_NS);
            r.record(v);
            h.saturating_record(v);
        }
        let got = r.histogram();
        assert_eq!(got.len(), h.len());
        for q in [0.0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0] {
            assert!(
                h.equivalent(got.value_at_quantile(q), h.value_at_quantile(q)),
                "q {q}: {} vs {}",
                got.value_at_quantile(q),
                h.value_at_quantile(q)
            );
        }
        assert!(Recorder::slot(MAX_LATENCY_NS) < SLOTS);
        // Longer than an hour counts as an hour, not lost.
        r.record(u64::MAX);
        assert_eq!(r.len(), got.len() + 1);
        assert_eq!(Recorder::slot(u64::MAX), Recorder::slot(MAX_LATENCY_NS));
        assert_eq!(Recorder::value(Recorder::slot(255)), 255);
        assert_eq!(Recorder::value(Recorder::slot(1000)), 1000);
        assert!(v > 0);
    }

    #[test]
    fn the_event_clock_keeps_time_with_the_monotonic_clock() {
        start_clock();
        let (a, m) = (now_ns(), std::time::Instant::now());
        std::thread::sleep(Duration::from_millis(50));
        let (b, e) = (now_ns(), m.elapsed());
        // The same interval on both clocks: a wrong scale (ticks taken for
        // nanoseconds, a bad calibration) would be off by a factor.
        let diff = (b - a) as i64 - e.as_nanos() as i64;
        assert!(diff.abs() < 1_000_000, "{} ns vs {:?}", b - a, e);
        assert!(b - a >= 50_000_000, "{}", b - a);
        // Its readings look like CLOCK_MONOTONIC's (the same epoch).
        let skew = now_ns() as i64 - monotonic_ns() as i64;
        assert!(skew.abs() < 50_000_000, "{skew}");
    }

    /// A measurement, not a check: what one reading of each clock costs,
    /// alternating rounds. `cargo test --release --lib
    /// what_a_clock_reading_costs -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn what_a_clock_reading_costs() {
        const CALLS: u32 = 20_000_000;
        let per_call = |read: &dyn Fn() -> u64| {
            let t = std::time::Instant::now();
            let mut sum = 0u64;
            for _ in 0..CALLS {
                sum = sum.wrapping_add(std::hint::black_box(read()));
            }
            std::hint::black_box(sum);
            t.elapsed().as_nanos() as f64 / f64::from(CALLS)
        };
        start_clock();
        let clock = event_clock();
        for round in 1..=4 {
            let mono = per_call(&monotonic_ns);
            let event = per_call(&|| clock.now_ns());
            println!(
                "round {round}: clock_gettime(CLOCK_MONOTONIC) {mono:.1} ns, event clock {event:.1} ns"
            );
        }
    }

    #[test]
    fn counting_follows_sysbench() {
        let mut c = Counts::default();
        c.record(Outcome::Rows(10));
        c.record(Outcome::Affected(1));
        c.record(Outcome::Affected(0));
        c.record(Outcome::Affected(0));
        assert_eq!(
            (c.reads, c.writes, c.other, c.rows, c.queries()),
            (1, 1, 2, 10, 4)
        );
    }

    #[test]
    fn per_second_series_sums_threads_and_keeps_a_tail() {
        let start = now_ns();
        let mut threads = vec![
            ThreadMeasure::new(start, 3, 1),
            ThreadMeasure::new(start, 3, 1),
        ];
        for (i, t) in threads.iter_mut().enumerate() {
            // 10 events per second per thread for 2.5 seconds, one statement each.
            for e in 0..25u64 {
                let begin = start + 100_000_000 * e + 1000 * i as u64;
                t.tick(begin);
                t.counts.record(Outcome::Rows(1));
                t.event_done(begin + 100_000_000, 1000, 0);
            }
        }
        let s = per_second(&threads, Duration::from_millis(2500));
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].tps, 20.0);
        assert_eq!(s[1].qps, 20.0);
        assert!((s[2].tps - 10.0 / 0.5).abs() < 1e-9, "{:?}", s[2]);
    }

    #[test]
    fn latency_percentiles_in_microseconds() {
        let mut h = new_histogram();
        for v in 1..=100u64 {
            h.record(v * 1000).unwrap();
        }
        let l = Latency::from_histogram(&h);
        assert!(
            (l.p50 - 50.0).abs() < 0.5 && (l.p99 - 99.0).abs() < 1.0 && (l.max - 100.0).abs() < 1.0,
            "{l:?}"
        );
    }
}
