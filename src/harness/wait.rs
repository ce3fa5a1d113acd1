//! Waits inside a worker's event that hold up only that worker: on the
//! client core ([`crate::evloop`]) the client thread runs its other
//! connections meanwhile; with a thread per worker they block the thread,
//! as the plain calls do. Suites wait through these, never through the
//! core itself, so the core's rules stay in one place.

use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::evloop;

/// A descriptor a worker waits on to become readable: a pipe, a process's
/// pidfd. Made once per descriptor (its number may be a closed one's that
/// the client core still knows).
pub struct Readable<'a>(BorrowedFd<'a>);

impl<'a> Readable<'a> {
    pub fn new(fd: BorrowedFd<'a>) -> Readable<'a> {
        evloop::new_fd(fd.as_raw_fd());
        Readable(fd)
    }

    /// Waits until the descriptor is readable (true), or `until` passes,
    /// or the step's stop ends the wait (false).
    pub fn wait(&self, until: Instant) -> bool {
        evloop::wait_fd(self.0.as_raw_fd(), evloop::Interest::Read, Some(until))
    }
}

/// Sleeps until `t` (see the module: only this worker waits).
pub fn sleep_until(t: Instant) {
    evloop::sleep_until(t);
}

/// Sleeps for `d` (see the module: only this worker waits).
pub fn sleep(d: Duration) {
    evloop::sleep(d);
}

/// Wakes the workers that wait for another worker's progress (the Insert
/// Benchmark's inserter for its deleter): one may be a task of the same
/// client thread, another a thread of its own.
#[derive(Default)]
pub struct Gate {
    m: Mutex<()>,
    cv: Condvar,
}

impl Gate {
    /// Says that something a waiter may wait for changed.
    pub fn notify(&self) {
        drop(self.m.lock().unwrap_or_else(|e| e.into_inner()));
        self.cv.notify_all();
    }

    /// Waits until `ready` (true) or `stop` (false).
    pub fn wait(&self, ready: &dyn Fn() -> bool, stop: &dyn Fn() -> bool) -> bool {
        let mut g = self.m.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if ready() {
                return true;
            }
            if stop() {
                return false;
            }
            if evloop::active() {
                // On the client core the other side may be a task of this
                // very thread: let it run (no lock held), and look again.
                drop(g);
                evloop::sleep(Duration::from_micros(200));
                g = self.m.lock().unwrap_or_else(|e| e.into_inner());
                continue;
            }
            g = self
                .cv
                .wait_timeout(g, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn a_gate_lets_a_waiting_task_and_its_waker_share_a_thread() {
        // Two tasks of one client thread: the first waits at the gate for
        // the second's progress; a Condvar wait would block the thread and
        // with it the task it waits for.
        let gate = Gate::default();
        let made = AtomicU64::new(0);
        let (gate, made) = (&gate, &made);
        let tasks: Vec<Box<dyn FnOnce() -> bool + '_>> = vec![
            Box::new(move || gate.wait(&|| made.load(Ordering::Acquire) >= 5, &|| false)),
            Box::new(move || {
                for _ in 0..5 {
                    evloop::sleep(Duration::from_millis(2));
                    made.fetch_add(1, Ordering::Release);
                    gate.notify();
                }
                true
            }),
        ];
        let t = Instant::now();
        let got: Vec<bool> = evloop::run(tasks)
            .unwrap()
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(got, [true, true]);
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        // A stop ends the wait.
        assert!(!gate.wait(&|| false, &|| true));
    }

    #[test]
    fn a_readable_wait_ends_with_data_or_at_its_time() {
        use std::io::Write;
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        let r = Readable::new(std::os::fd::AsFd::as_fd(&a));
        let t = Instant::now();
        assert!(!r.wait(t + Duration::from_millis(20)));
        assert!(t.elapsed() >= Duration::from_millis(19));
        b.write_all(b"x").unwrap();
        assert!(r.wait(Instant::now() + Duration::from_secs(5)));
    }
}
