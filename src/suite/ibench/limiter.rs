//! Holds an inserting connection to a target rate of rows per second
//! (reference §4.5), without drift.
//!
//! Batch `k` owns the slot `[start + k × I, start + (k + 1) × I)` with
//! `I = rows_per_batch / rate`, and is due in the middle of it: an absolute
//! schedule (time lost to a slow statement is made up by sending the
//! following batches at once, so the average stays on target), and one that
//! puts the same number of batches in every whole second when `I` divides
//! a second (due times never sit on the second boundaries that per-second
//! rates are sampled at, where jitter would move a batch between seconds).
//! Connections of several clients are spread over the slot
//! ([`Limiter::with_phase`]) so their batches do not all fall due at once
//! (the reference starts its clients a second apart).
//! Catch-up is
//! bounded: when the writer is more than `max_lag` behind, the slots it
//! missed beyond that are given up, so an engine that stalled for a minute
//! does not get a minute of inserts in one burst (the reference catches up
//! at most within the current second; this keeps up to `max_lag`).

/// Time as the limiter sees it: a monotonic clock in nanoseconds that it
/// can sleep on. Tests use a fake one.
pub trait Clock {
    fn now_ns(&self) -> u64;
    fn wait_until(&self, t_ns: u64);
}

/// The monotonic clock of [`crate::harness::measure::now_ns`].
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ns(&self) -> u64 {
        crate::harness::measure::now_ns()
    }
    fn wait_until(&self, t_ns: u64) {
        crate::harness::measure::sleep_until_ns(t_ns);
    }
}

/// The schedule of one inserting connection.
#[derive(Clone, Debug)]
pub struct Limiter {
    /// Nanoseconds between batches (fractional, so no rounding drift).
    interval: f64,
    /// When batch 0 was due, moved forward by slots given up.
    base: f64,
    /// Index of the next batch.
    next: u64,
    max_lag: f64,
    /// Nanoseconds of slots given up because the writer was too far behind.
    forfeited: f64,
    /// Where in its slot a batch is due, as a fraction of the slot (0.5: the middle).
    phase: f64,
}

/// Longest sleep between looks at the stop flag.
const NAP_NS: u64 = 100_000_000;

impl Limiter {
    /// `rows_per_sec` rows in batches of `rows_per_batch`, the first due at `start_ns`.
    pub fn new(rows_per_sec: f64, rows_per_batch: usize, start_ns: u64, max_lag_ns: u64) -> Self {
        Limiter {
            interval: rows_per_batch.max(1) as f64 * 1e9 / rows_per_sec.max(1e-9),
            base: start_ns as f64,
            next: 0,
            max_lag: max_lag_ns as f64,
            forfeited: 0.0,
            phase: 0.5,
        }
    }

    /// Batches fall due at `phase` of their slot (strictly between 0 and 1)
    /// instead of its middle: writer `i` of `n` uses `(i + 0.5) / n`, which
    /// spreads the writers evenly without changing any slot's bounds.
    pub fn with_phase(mut self, phase: f64) -> Self {
        if phase > 0.0 && phase < 1.0 {
            self.phase = phase;
        }
        self
    }

    /// When the next batch is due: at its phase of its slot.
    pub fn due_ns(&self) -> u64 {
        (self.base + (self.next as f64 + self.phase) * self.interval) as u64
    }

    /// When the slot of the last batch handed out ends: a writer that waits
    /// for it after its last batch has run at exactly the target rate.
    pub fn slot_end_ns(&self) -> u64 {
        (self.base + self.next as f64 * self.interval) as u64
    }

    /// Seconds of slots given up so far.
    pub fn forfeited_secs(&self) -> f64 {
        self.forfeited / 1e9
    }

    /// Waits until the next batch is due (or `stop` says to stop: then
    /// returns false), giving up slots that are more than `max_lag` late.
    pub fn wait<C: Clock>(&mut self, clock: &C, stop: &dyn Fn() -> bool) -> bool {
        let due = self.base + (self.next as f64 + self.phase) * self.interval;
        let now = clock.now_ns() as f64;
        if now - due > self.max_lag {
            let behind = now - due - self.max_lag;
            self.base += behind;
            self.forfeited += behind;
        }
        if !nap_until(clock, self.due_ns(), stop) {
            return false;
        }
        self.next += 1;
        true
    }
}

/// Sleeps until `t_ns` in naps, looking at `stop` between them; false when stopped.
pub fn nap_until<C: Clock>(clock: &C, t_ns: u64, stop: &dyn Fn() -> bool) -> bool {
    loop {
        if stop() {
            return false;
        }
        let now = clock.now_ns();
        if now >= t_ns {
            return true;
        }
        clock.wait_until(t_ns.min(now + NAP_NS));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    use crate::suite::rand::Rng;

    /// A clock that only moves when slept on or told to.
    struct FakeClock(Cell<u64>);

    impl FakeClock {
        fn advance(&self, ns: u64) {
            self.0.set(self.0.get() + ns);
        }
    }

    impl Clock for FakeClock {
        fn now_ns(&self) -> u64 {
            self.0.get()
        }
        fn wait_until(&self, t: u64) {
            if t > self.0.get() {
                self.0.set(t);
            }
        }
    }

    const SEC: u64 = 1_000_000_000;

    /// Runs a writer of `batch`-row statements that each take `cost(i)` ns
    /// for `secs` of fake time; returns rows inserted and the limiter.
    fn simulate(
        rate: f64,
        batch: usize,
        secs: u64,
        max_lag: u64,
        mut cost: impl FnMut(u64) -> u64,
    ) -> (u64, Limiter) {
        let clock = FakeClock(Cell::new(5 * SEC));
        let end = clock.now_ns() + secs * SEC;
        let mut l = Limiter::new(rate, batch, clock.now_ns(), max_lag);
        let mut rows = 0;
        let mut i = 0;
        loop {
            assert!(l.wait(&clock, &|| false));
            if clock.now_ns() >= end {
                return (rows, l);
            }
            clock.advance(cost(i));
            rows += batch as u64;
            i += 1;
        }
    }

    #[test]
    fn ten_seconds_at_200_rows_per_second_is_within_two_percent() {
        // Statements of 0.1–30 ms, a cheap sink with a noisy cost.
        let mut rng = Rng::seeded(1);
        let (rows, l) = simulate(200.0, 50, 10, SEC, |_| {
            rng.uniform(100_000, 30_000_000) as u64
        });
        assert!((rows as f64 - 2000.0).abs() <= 2000.0 * 0.02, "{rows}");
        assert_eq!(l.forfeited_secs(), 0.0);
        // Rates that are not a multiple of the batch do not round up.
        let (rows, _) = simulate(75.0, 50, 10, SEC, |_| 1_000_000);
        assert!((rows as f64 - 750.0).abs() <= 750.0 * 0.02, "{rows}");
        let (rows, _) = simulate(1000.0, 5, 10, SEC, |_| 50_000);
        assert!((rows as f64 - 10_000.0).abs() <= 10_000.0 * 0.02, "{rows}");
    }

    #[test]
    fn a_short_stall_is_made_up_and_a_long_one_is_not() {
        // One statement takes 0.8 s: the lost slots are sent at once after it.
        let (rows, l) = simulate(200.0, 50, 10, SEC, |i| {
            if i == 3 { 800_000_000 } else { 1_000_000 }
        });
        assert!((rows as f64 - 2000.0).abs() <= 2000.0 * 0.02, "{rows}");
        assert_eq!(l.forfeited_secs(), 0.0);
        // Batch 3 (due at 0.875 s) takes 4 s: at 4.875 s the writer is 3.75 s
        // behind batch 4; it makes up 1 s of it and gives up 2.75 s, 11 slots.
        let (rows, l) = simulate(
            200.0,
            50,
            10,
            SEC,
            |i| {
                if i == 3 { 4 * SEC } else { 1_000_000 }
            },
        );
        assert!(
            (l.forfeited_secs() - 2.75).abs() < 0.01,
            "{}",
            l.forfeited_secs()
        );
        assert_eq!(rows, 2000 - 11 * 50);
    }

    #[test]
    fn a_writer_that_cannot_keep_up_runs_flat_out_without_bursts() {
        // Each statement takes twice its slot: the rate is half the target, and
        // being behind never releases more than max_lag of batches at once.
        let (rows, _) = simulate(1000.0, 50, 10, SEC / 2, |_| 100_000_000);
        assert!((rows as f64 - 5000.0).abs() <= 5000.0 * 0.02, "{rows}");
    }

    #[test]
    fn the_slot_of_the_last_batch_ends_on_schedule() {
        let clock = FakeClock(Cell::new(0));
        let mut l = Limiter::new(100.0, 50, 0, SEC);
        for _ in 0..4 {
            assert!(l.wait(&clock, &|| false));
        }
        // Four batches of 50 at 100 rows/s: slots of 0.5 s, each batch in the
        // middle of its slot, the last ending at 2 s.
        assert_eq!(clock.now_ns(), 7 * SEC / 4);
        assert_eq!(l.slot_end_ns(), 2 * SEC);
    }

    #[test]
    fn every_whole_second_gets_the_same_batches() {
        // qr100: 2 batches of 50 per second, qr1000: 20. Count per second of
        // due time, with a statement cost that would push boundary batches over.
        for (rate, batch, per_sec) in [(100.0, 50, 2), (1000.0, 50, 20), (500.0, 50, 10)] {
            let clock = FakeClock(Cell::new(0));
            let mut l = Limiter::new(rate, batch, 0, SEC);
            let mut counts = [0u32; 5];
            loop {
                assert!(l.wait(&clock, &|| false));
                let sec = (clock.now_ns() / SEC) as usize;
                if sec >= counts.len() {
                    break;
                }
                counts[sec] += 1;
                clock.advance(SEC / 1000);
            }
            assert_eq!(counts, [per_sec; 5], "{rate}");
        }
    }

    #[test]
    fn stop_ends_a_wait() {
        let clock = FakeClock(Cell::new(0));
        let mut l = Limiter::new(1.0, 1, 0, SEC);
        assert!(l.wait(&clock, &|| false));
        assert!(!l.wait(&clock, &|| true));
    }

    #[test]
    fn real_clock_with_a_cheap_sink() {
        // 1 s at 2000 rows/s in batches of 10 with an instant sink.
        let clock = SystemClock;
        let start = clock.now_ns();
        let mut l = Limiter::new(2000.0, 10, start, SEC);
        let mut rows = 0u64;
        while l.wait(&clock, &|| false) {
            if clock.now_ns() >= start + SEC {
                break;
            }
            rows += 10;
        }
        assert!((rows as f64 - 2000.0).abs() <= 2000.0 * 0.05, "{rows}");
    }

    #[test]
    fn phases_spread_writers_within_their_slots() {
        let clock = FakeClock(Cell::new(0));
        // 100 rows/s in batches of 50: slots of 0.5 s.
        let due = |phase| {
            let mut l = Limiter::new(100.0, 50, 0, SEC).with_phase(phase);
            let first = l.due_ns();
            assert!(l.wait(&clock, &|| false));
            (first, l.slot_end_ns())
        };
        assert_eq!(due(0.25), (125_000_000, 500_000_000));
        assert_eq!(due(0.75), (375_000_000, 500_000_000));
        // Out of range: the middle.
        assert_eq!(due(1.0).0, 250_000_000);
    }
}
