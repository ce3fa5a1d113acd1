//! The per-second series of a step, the one sampler every suite uses.
//!
//! Each thread closes its own whole seconds as its statements start: before
//! each one it calls [`Seconds::tick`], which (one comparison, usually false)
//! keeps a copy of the thread's cumulative [`Tally`] at every second boundary
//! that passed. Nothing is shared on the per-event path: no atomic, no lock,
//! no sampling thread whose wake-up jitter would move events between seconds.
//! When the step ends, [`merge`] sums the threads' marks second by second.
//!
//! An event counts in the second in which it started. A thread that waited
//! through several seconds (a rate limit, a long statement) marks each of
//! them with the same counts, so they read as seconds with nothing done.

/// Nanoseconds per second.
pub const SEC: u64 = 1_000_000_000;

/// What a thread counts, cumulatively, for the series.
pub trait Tally: Copy + Default {
    /// Adds another thread's figures for the same interval.
    fn merge(&mut self, other: &Self);
    /// What happened between the cumulative `earlier` and `self`, both of one
    /// thread.
    fn since(&self, earlier: &Self) -> Self;
    /// Closes a second and returns the mark to keep. Gauges that describe one
    /// second (the longest statement in it) are reset here; counters stay.
    #[inline]
    fn close(&mut self) -> Self {
        *self
    }
}

/// One thread's marks: its tally at each whole second after `start`.
#[derive(Clone, Debug)]
pub struct Seconds<T> {
    start: u64,
    next: u64,
    marks: Vec<T>,
}

impl<T: Tally> Seconds<T> {
    /// Seconds counted from `start` (a [`super::measure::now_ns`] reading), with room
    /// for `expected` marks so that no second allocates.
    pub fn new(start: u64, expected: usize) -> Self {
        Seconds {
            start,
            next: start + SEC,
            marks: Vec::with_capacity(expected + 2),
        }
    }

    /// Call before each statement that starts at `now`: closes the seconds
    /// that ended before it, marking `current` (the thread's running tally).
    #[inline]
    pub fn tick(&mut self, now: u64, current: &mut T) {
        while now >= self.next {
            self.marks.push(current.close());
            self.next += SEC;
        }
    }

    /// The [`super::measure::now_ns`] reading the seconds count from.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// The whole seconds closed so far.
    pub fn closed(&self) -> usize {
        self.marks.len()
    }
}

/// One entry of a merged series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Second<T> {
    /// Seconds from the start to the end of this entry (1, 2, … and then the
    /// end of a last, partial second).
    pub at: f64,
    /// How long the entry lasted: 1 s, or less for the last.
    pub secs: f64,
    /// What all threads did in it.
    pub d: T,
}

/// Sums the threads' series second by second. Each thread gives its marks and
/// its final tally. `elapsed` is the step's length in seconds from the
/// threads' common start; the time after the last whole second becomes one
/// more, shorter entry when it is longer than `min_tail` seconds and `keep`
/// says its figures are worth a rate (a few events in a sliver of a second
/// would read as a spike).
pub fn merge<T: Tally>(
    threads: &[(&Seconds<T>, &T)],
    elapsed: f64,
    min_tail: f64,
    keep: impl Fn(&T) -> bool,
) -> Vec<Second<T>> {
    merge_seconds(threads, whole_seconds(threads), elapsed, min_tail, keep)
}

/// The whole seconds the threads closed (the longest series).
pub fn whole_seconds<T: Tally>(threads: &[(&Seconds<T>, &T)]) -> usize {
    threads.iter().map(|(s, _)| s.closed()).max().unwrap_or(0)
}

/// [`merge`] over `whole` whole seconds: for a subset of a step's threads (one
/// client's connections) whose series must line up with the step's.
pub fn merge_seconds<T: Tally>(
    threads: &[(&Seconds<T>, &T)],
    whole: usize,
    elapsed: f64,
    min_tail: f64,
    keep: impl Fn(&T) -> bool,
) -> Vec<Second<T>> {
    // A thread's cumulative tally after `i` seconds: its mark, or its final
    // tally once it has ended.
    let at = |(s, last): &(&Seconds<T>, &T), i: usize| -> T {
        if i == 0 {
            T::default()
        } else {
            s.marks.get(i - 1).copied().unwrap_or(**last)
        }
    };
    let sum = |i: usize, j: Option<usize>| {
        let mut d = T::default();
        // A thread that ended before second `i` began did nothing from then
        // on (its gauges belong to its own last second).
        for t in threads.iter().filter(|t| i <= t.0.closed()) {
            let later = match j {
                Some(j) => at(t, j),
                None => *t.1,
            };
            d.merge(&later.since(&at(t, i)));
        }
        d
    };
    let mut out: Vec<Second<T>> = (0..whole)
        .map(|i| Second {
            at: (i + 1) as f64,
            secs: 1.0,
            d: sum(i, Some(i + 1)),
        })
        .collect();
    let tail = elapsed - whole as f64;
    if tail > min_tail {
        let d = sum(whole, None);
        if keep(&d) {
            out.push(Second {
                at: elapsed,
                secs: tail,
                d,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows done (a counter) and the longest statement in the second (a gauge).
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    struct T {
        rows: u64,
        longest: u64,
    }

    impl Tally for T {
        fn merge(&mut self, o: &Self) {
            self.rows += o.rows;
            self.longest = self.longest.max(o.longest);
        }
        fn since(&self, e: &Self) -> Self {
            T {
                rows: self.rows - e.rows,
                longest: self.longest,
            }
        }
        fn close(&mut self) -> Self {
            let m = *self;
            self.longest = 0;
            m
        }
    }

    /// Runs one thread: statements of `rows` rows that take `ns` each, the
    /// first starting at `first`, until `end`.
    fn thread(start: u64, first: u64, ns: u64, rows: u64, end: u64) -> (Seconds<T>, T) {
        let mut s = Seconds::new(start, 4);
        let mut t = T::default();
        let mut now = first;
        while now + ns <= end {
            s.tick(now, &mut t);
            t.rows += rows;
            t.longest = t.longest.max(ns);
            now += ns;
        }
        (s, t)
    }

    #[test]
    fn threads_add_up_second_by_second_with_a_partial_last_second() {
        // 10 statements a second of 1 row, and 4 a second of 5 rows, for 2.5 s.
        let a = thread(0, 0, SEC / 10, 1, 5 * SEC / 2);
        let b = thread(0, 0, SEC / 4, 5, 5 * SEC / 2);
        let s = merge(&[(&a.0, &a.1), (&b.0, &b.1)], 2.5, 0.05, |d| d.rows > 0);
        let rows: Vec<u64> = s.iter().map(|x| x.d.rows).collect();
        assert_eq!(rows, [30, 30, 5 + 10]);
        assert_eq!((s[2].at, s[2].secs), (2.5, 0.5));
        assert_eq!(s.iter().map(|x| x.d.rows).sum::<u64>(), a.1.rows + b.1.rows);
    }

    #[test]
    fn seconds_spent_waiting_count_as_seconds_with_nothing_done() {
        let mut s = Seconds::new(0, 4);
        let mut t = T::default();
        s.tick(SEC / 2, &mut t);
        t.rows += 7;
        // The next statement starts 3.2 s later.
        s.tick(SEC * 37 / 10, &mut t);
        t.rows += 1;
        let m = merge(&[(&s, &t)], 4.0, 0.05, |_| true);
        let rows: Vec<u64> = m.iter().map(|x| x.d.rows).collect();
        assert_eq!(rows, [7, 0, 0, 1]);
    }

    #[test]
    fn a_gauge_describes_only_its_own_second() {
        let mut s = Seconds::new(0, 4);
        let mut t = T {
            rows: 0,
            longest: 900,
        };
        s.tick(SEC, &mut t);
        t.longest = t.longest.max(20);
        let m = merge(&[(&s, &t)], 1.5, 0.05, |_| true);
        assert_eq!(m[0].d.longest, 900);
        assert_eq!(m[1].d.longest, 20);
    }

    #[test]
    fn the_gauge_of_a_thread_that_ended_early_stays_in_its_last_second() {
        let a = thread(0, 0, SEC / 10, 1, 5 * SEC / 2);
        // A thread that ran one statement of a second, started at 0.
        let s = Seconds::new(0, 4);
        let t = T {
            rows: 1,
            longest: SEC,
        };
        let m = merge(&[(&a.0, &a.1), (&s, &t)], 2.5, 0.05, |_| true);
        let longest: Vec<u64> = m.iter().map(|x| x.d.longest).collect();
        assert_eq!(longest, [SEC, SEC / 10, SEC / 10]);
    }

    #[test]
    fn a_thread_that_ended_early_adds_nothing_to_later_seconds() {
        let a = thread(0, 0, SEC / 10, 1, 3 * SEC);
        let b = thread(0, 0, SEC / 10, 1, SEC / 2);
        let both = [(&a.0, &a.1), (&b.0, &b.1)];
        let m = merge(&both, 3.0, 0.05, |_| true);
        let rows: Vec<u64> = m.iter().map(|x| x.d.rows).collect();
        assert_eq!(rows, [15, 10, 10]);
        // Alone, over the step's seconds, it still has an entry for each.
        let alone = merge_seconds(&both[1..], whole_seconds(&both), 3.0, 0.05, |_| true);
        let rows: Vec<u64> = alone.iter().map(|x| x.d.rows).collect();
        assert_eq!(rows, [5, 0, 0]);
    }

    #[test]
    fn a_sliver_of_a_last_second_or_an_empty_one_is_left_out() {
        let (mut s, mut t) = thread(0, 0, SEC / 10, 1, 2 * SEC);
        // One more statement starts at 2 s and ends 5 ms later.
        s.tick(2 * SEC, &mut t);
        t.rows += 1;
        assert_eq!(s.closed(), 2);
        let sliver = merge(&[(&s, &t)], 2.005, 0.05, |_| true);
        assert_eq!(sliver.len(), 2);
        let kept = merge(&[(&s, &t)], 2.5, 0.05, |d| d.rows > 0);
        assert_eq!(kept.len(), 3);
        t.rows -= 1;
        let empty = merge(&[(&s, &t)], 2.5, 0.05, |d| d.rows > 0);
        assert_eq!(empty.len(), 2);
    }
}
