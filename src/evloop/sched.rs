//! The scheduler: the tasks of one thread as coroutines, the thread's
//! epoll, and the loop that resumes whichever task can run ([`run`]).

use std::cell::Cell;
use std::collections::VecDeque;
use std::io;
use std::os::fd::RawFd;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::fds::{self, Interest};

/// What a suspended task waits for: a socket, a time, both, or neither
/// (it only lets the others run).
#[derive(Clone, Copy, Debug)]
pub(super) struct Wait {
    pub fd: Option<(RawFd, Interest)>,
    pub until: Option<Instant>,
}

/// Why a suspended task runs again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Woke {
    /// Its socket is ready (or it only yielded).
    Ready,
    /// Its time came first.
    Time,
    /// A [`Stop`] ended its wait.
    Stopped,
}

type Y = Yielder<Woke, Wait>;

#[cfg(test)]
thread_local! {
    /// How many times this thread called `epoll_wait` (tests count sleeps).
    pub(super) static EPOLL_WAITS: Cell<u64> = const { Cell::new(0) };
}

thread_local! {
    /// The clock as this turn of the loop's waits count from ([`wait_start`]).
    static TURN: Cell<Option<Instant>> = const { Cell::new(None) };
    /// The running task's yielder; null outside a task.
    static CURRENT: Cell<*const Y> = const { Cell::new(std::ptr::null()) };
    /// The stop of the run on this thread (null: none, or no run).
    static STOP: Cell<*const StopInner> = const { Cell::new(std::ptr::null()) };
}

/// Each task's stack: as a thread's (the memory is reserved, and touched
/// only as deep as the task goes).
const STACK: usize = 2 << 20;

/// Whether the calling code runs inside a task of [`run`].
#[inline]
pub fn active() -> bool {
    !CURRENT.get().is_null()
}

/// Now, as a deadline of a task's wait counts from: inside a task, the
/// first such reading of the loop's turn, kept for the turn's other tasks
/// (one clock read per turn, not per wait; a deadline of seconds comes the
/// microseconds of the turn's processing early); outside a task, the clock.
#[inline]
pub(super) fn wait_start() -> Instant {
    if !active() {
        return Instant::now();
    }
    match TURN.get() {
        Some(t) => t,
        None => {
            let t = Instant::now();
            TURN.set(Some(t));
            t
        }
    }
}

/// Which waits a [`Stop`] ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Waits {
    /// Waits to send (a socket whose peer stopped reading): the task's
    /// send fails with [`stopped`].
    Sends = 1,
    /// Every wait: sends, replies, [`super::wait_fd`], and sleeps (which
    /// return early).
    All = 2,
}

/// A stop for the tasks of the runs it is given to ([`run_until`]), from
/// any thread: once [`Stop::end`] is called, each of their waits of that
/// kind ends at once (a blocked send fails with [`stopped`]), and so does
/// each later one, for the rest of the run. A stop never ends a task's
/// computation: the task sees its I/O fail and returns.
#[derive(Clone, Default)]
pub struct Stop(Arc<StopInner>);

#[derive(Default)]
struct StopInner {
    /// 0, or the [`Waits`] it ends.
    level: AtomicU8,
    /// The eventfd of each run on it (a write wakes that run's thread).
    loops: Mutex<Vec<RawFd>>,
}

impl StopInner {
    fn ends(&self, w: &Wait) -> bool {
        match self.level.load(Ordering::Acquire) {
            0 => false,
            1 => w.fd.is_some_and(|(_, i)| i.sends()),
            _ => w.fd.is_some() || w.until.is_some(),
        }
    }
}

impl Stop {
    pub fn new() -> Stop {
        Stop::default()
    }

    /// Ends `what` waits of the tasks of every run on this stop, now and
    /// for the rest of those runs (never fewer than an earlier call ended).
    pub fn end(&self, what: Waits) {
        let had = self.0.level.fetch_max(what as u8, Ordering::AcqRel);
        if had >= what as u8 {
            return;
        }
        let loops = self.0.loops.lock().unwrap_or_else(|e| e.into_inner());
        for &fd in loops.iter() {
            let one: u64 = 1;
            // SAFETY: writes 8 bytes from a live u64 to the run's eventfd,
            // which stays open while it is on the list.
            unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
        }
    }

    /// What it ends (`None`: nothing yet).
    pub fn ending(&self) -> Option<Waits> {
        match self.0.level.load(Ordering::Acquire) {
            0 => None,
            1 => Some(Waits::Sends),
            _ => Some(Waits::All),
        }
    }
}

/// The error of an I/O wait a [`Stop`] ended.
#[derive(Debug, thiserror::Error)]
#[error("stopped: the run is ending and this wait was ended with it")]
pub struct Stopped;

/// An I/O error that says a [`Stop`] ended the wait.
pub fn stopped() -> io::Error {
    io::Error::other(Stopped)
}

/// Whether `e` is [`stopped`]'s.
pub fn is_stopped(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|i| i.is::<Stopped>())
}

/// Suspends the running task until `w` is met, or a stop ends it.
pub(super) fn suspend(w: Wait) -> Woke {
    let stop = STOP.get();
    // SAFETY: STOP is non-null only while a run is on this thread, and it
    // points into that run's Stop, which the run holds.
    if !stop.is_null() && unsafe { &*stop }.ends(&w) {
        return Woke::Stopped;
    }
    let y = CURRENT.get();
    debug_assert!(!y.is_null());
    // SAFETY: CURRENT is non-null only while a task runs on this thread,
    // and then it points at that task's yielder, which lives on the task's
    // own stack for as long as the task does.
    let woke = unsafe { &*y }.suspend(w);
    CURRENT.set(y);
    woke
}

/// Lets the other runnable tasks of this thread run first (no-op outside a task).
pub fn yield_now() {
    if active() {
        suspend(Wait {
            fd: None,
            until: None,
        });
    }
}

/// The thread's epoll instance.
struct Epoll(RawFd);

/// Whether the kernel lacks `epoll_pwait2` (before Linux 5.11): then
/// timeouts are whole milliseconds, rounded up.
static NO_PWAIT2: AtomicBool = AtomicBool::new(false);

/// The epoll token of the run's eventfd (a stop's wake-up).
const STOP_TOKEN: u64 = u64::MAX;

impl Epoll {
    fn new() -> io::Result<Epoll> {
        // SAFETY: no pointers.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // A new epoll has nothing registered: what this thread knew of its
        // descriptors belonged to an earlier one.
        fds::forget_all();
        Ok(Epoll(fd))
    }

    /// Registers `fd` for what a wait for `interest` needs: added once,
    /// modified only when that changes (a write wait, and the read wait
    /// after it). An addition or a modification looks at the socket's
    /// state again, so an edge that came before it is not lost.
    fn watch(&self, fd: RawFd, interest: Interest) {
        let events = interest.epoll_events();
        let op = fds::with(fd, |s| {
            let had = std::mem::replace(&mut s.registered, events);
            match had {
                0 => Some(libc::EPOLL_CTL_ADD),
                had if had != events => Some(libc::EPOLL_CTL_MOD),
                _ => None,
            }
        });
        let Some(op) = op else { return };
        let mut ev = libc::epoll_event {
            events,
            u64: fd as u64,
        };
        // SAFETY: ev lives for the call. EEXIST (a dup'ed descriptor) is fine.
        let r = unsafe { libc::epoll_ctl(self.0, op, fd, &mut ev) };
        if r != 0 && op == libc::EPOLL_CTL_MOD {
            // The number is a new socket's that nobody announced (the old
            // one's close took it off the epoll): register it afresh.
            // SAFETY: as above.
            unsafe { libc::epoll_ctl(self.0, libc::EPOLL_CTL_ADD, fd, &mut ev) };
        }
    }

    /// Waits for events up to `timeout` (`None`: without end).
    fn wait(&self, out: &mut [libc::epoll_event], timeout: Option<Duration>) -> usize {
        #[cfg(test)]
        EPOLL_WAITS.set(EPOLL_WAITS.get() + 1);
        let max = out.len() as libc::c_int;
        let n = if !NO_PWAIT2.load(Ordering::Relaxed) {
            let ts = timeout.map(|d| libc::timespec {
                tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
                tv_nsec: d.subsec_nanos() as libc::c_long,
            });
            let tp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const _);
            // The system call, not glibc's wrapper: the wrapper came with
            // glibc 2.35, and the packages run on 2.34 (scripts/package.sh).
            // On 64-bit Linux `timespec` is the kernel's; with no signal
            // mask the mask's size is not read.
            // SAFETY: `out` holds `max` events; the timespec lives for the call.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_epoll_pwait2,
                    self.0,
                    out.as_mut_ptr(),
                    max,
                    tp,
                    std::ptr::null::<libc::sigset_t>(),
                    0usize,
                )
            } as libc::c_int;
            if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
                NO_PWAIT2.store(true, Ordering::Relaxed);
                return 0;
            }
            n
        } else {
            let ms = timeout.map_or(-1, |d| {
                d.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
            });
            // SAFETY: `out` holds `max` events.
            unsafe { libc::epoll_wait(self.0, out.as_mut_ptr(), max, ms) }
        };
        n.max(0) as usize
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        // SAFETY: the descriptor is ours and closed once.
        unsafe { libc::close(self.0) };
        fds::forget_all();
    }
}

/// A run's place on its [`Stop`]: an eventfd in the run's epoll, which
/// [`Stop::end`] writes to wake the thread.
struct OnStop<'s> {
    stop: &'s StopInner,
    efd: RawFd,
}

impl<'s> OnStop<'s> {
    fn new(stop: &'s Stop, ep: &Epoll) -> io::Result<OnStop<'s>> {
        // SAFETY: no pointers.
        let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if efd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLET) as u32,
            u64: STOP_TOKEN,
        };
        // SAFETY: ev lives for the call; both descriptors are open.
        if unsafe { libc::epoll_ctl(ep.0, libc::EPOLL_CTL_ADD, efd, &mut ev) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: ours, closed once.
            unsafe { libc::close(efd) };
            return Err(e);
        }
        let inner = &*stop.0;
        inner
            .loops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(efd);
        STOP.set(inner as *const StopInner);
        Ok(OnStop { stop: inner, efd })
    }
}

impl Drop for OnStop<'_> {
    fn drop(&mut self) {
        STOP.set(std::ptr::null());
        let mut loops = self.stop.loops.lock().unwrap_or_else(|e| e.into_inner());
        loops.retain(|&f| f != self.efd);
        // SAFETY: ours, off the list (no more writes), closed once.
        unsafe { libc::close(self.efd) };
    }
}

/// Clears [`TURN`] when a run ends (or unwinds).
struct TurnClock;

impl Drop for TurnClock {
    fn drop(&mut self) {
        TURN.set(None);
    }
}

type Task<'a, T> = Box<dyn FnOnce() -> T + 'a>;
type Co<T> = Coroutine<Woke, Wait, std::thread::Result<T>>;

/// The scheduler's state besides the coroutines.
struct Queue {
    ready: VecDeque<(usize, Woke)>,
    /// What each task waits for (`None`: runnable, running or done). The
    /// nearest deadline is found by a scan: a thread has tens of tasks, and
    /// a heap would keep one stale entry per reply until its (statement
    /// timeout) deadline passed.
    waits: Vec<Option<Wait>>,
    /// The task waiting on each descriptor, by its number.
    by_fd: Vec<Option<usize>>,
    /// No wait's deadline is before this (`None`: none has one): the waits
    /// are scanned only once it passes. A task woken before its deadline
    /// leaves it early, which costs one scan too many, never a late wake.
    earliest: Option<Instant>,
}

impl Queue {
    /// Files task `i`'s new wait.
    fn park(&mut self, ep: &Epoll, i: usize, w: Wait) {
        if let Some((fd, interest)) = w.fd {
            ep.watch(fd, interest);
            if let Ok(f) = usize::try_from(fd) {
                if f >= self.by_fd.len() {
                    self.by_fd.resize(f + 1, None);
                }
                self.by_fd[f] = Some(i);
            }
        } else if w.until.is_none() {
            self.ready.push_back((i, Woke::Ready));
            return;
        }
        if let Some(t) = w.until
            && self.earliest.is_none_or(|e| t < e)
        {
            self.earliest = Some(t);
        }
        self.waits[i] = Some(w);
    }

    /// Makes task `i` runnable.
    fn wake(&mut self, i: usize, why: Woke) {
        if let Some(w) = self.waits[i].take()
            && let Some((fd, _)) = w.fd
            && let Some(slot) = usize::try_from(fd).ok().and_then(|f| self.by_fd.get_mut(f))
        {
            *slot = None;
        }
        self.ready.push_back((i, why));
    }

    /// Wakes the tasks whose time has come (at `now`); the time to the
    /// next one. The waits are scanned only when the earliest deadline
    /// known has passed.
    fn expire(&mut self, now: Instant) -> Option<Duration> {
        match self.earliest {
            None => return None,
            Some(e) if now < e => return Some(e - now),
            Some(_) => {}
        }
        let mut next: Option<Instant> = None;
        for i in 0..self.waits.len() {
            let Some(t) = self.waits[i].and_then(|w| w.until) else {
                continue;
            };
            if t <= now {
                self.wake(i, Woke::Time);
            } else if next.is_none_or(|n| t < n) {
                next = Some(t);
            }
        }
        self.earliest = next;
        next.map(|t| t - now)
    }

    /// Wakes the tasks whose waits `stop` ends.
    fn stop(&mut self, stop: &StopInner) {
        for i in 0..self.waits.len() {
            if self.waits[i].is_some_and(|w| stop.ends(&w)) {
                self.wake(i, Woke::Stopped);
            }
        }
    }

    /// Files what epoll reported: every descriptor's readiness is noted (a
    /// drained socket that got data is drained no more, even when no task
    /// waits on it now), and the task waiting for it wakes.
    fn dispatch(&mut self, events: &[libc::epoll_event], stop: Option<&StopInner>) {
        for ev in events {
            let bits = ev.events;
            if ev.u64 == STOP_TOKEN {
                if let Some(s) = stop {
                    self.stop(s);
                }
                continue;
            }
            let fd = ev.u64 as RawFd;
            if bits & !(libc::EPOLLOUT as u32) != 0 {
                fds::set_drained(fd, false);
            }
            let Some(i) = usize::try_from(fd)
                .ok()
                .and_then(|f| self.by_fd.get(f).copied().flatten())
            else {
                continue;
            };
            if self.waits[i]
                .and_then(|w| w.fd)
                .is_some_and(|(_, int)| int.matches(bits))
            {
                self.wake(i, Woke::Ready);
            }
        }
    }
}

/// Runs `tasks` on this thread to their ends, each in a coroutine of its
/// own, and returns what each returned (or its panic), in order.
pub fn run<'a, T: 'a>(tasks: Vec<Task<'a, T>>) -> io::Result<Vec<std::thread::Result<T>>> {
    run_until(tasks, &Stop::new())
}

/// [`run`], with waits that `stop` ends when told ([`Stop::end`]).
pub fn run_until<'a, T: 'a>(
    tasks: Vec<Task<'a, T>>,
    stop: &Stop,
) -> io::Result<Vec<std::thread::Result<T>>> {
    let ep = Epoll::new()?;
    let on_stop = OnStop::new(stop, &ep)?;
    let n = tasks.len();
    let mut cos: Vec<Option<Co<T>>> = Vec::with_capacity(n);
    for t in tasks {
        let stack = DefaultStack::new(STACK)?;
        let body = move |y: &Y, _: Woke| {
            CURRENT.set(y as *const Y);
            std::panic::catch_unwind(AssertUnwindSafe(t))
        };
        // SAFETY: every coroutine is run to its end (or dropped, which
        // unwinds it) before `run` returns, so what its closure borrows for
        // 'a outlives it.
        cos.push(Some(unsafe {
            Coroutine::with_stack_unchecked(stack, body)
        }));
    }
    let mut out: Vec<Option<std::thread::Result<T>>> = (0..n).map(|_| None).collect();
    let mut q = Queue {
        ready: (0..n).map(|i| (i, Woke::Ready)).collect(),
        waits: vec![None; n],
        by_fd: Vec::new(),
        earliest: None,
    };
    let mut live = n;
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 64];
    let _turn = TurnClock;
    while live > 0 {
        while let Some((i, woke)) = q.ready.pop_front() {
            let Some(co) = cos[i].as_mut() else { continue };
            let r = co.resume(woke);
            CURRENT.set(std::ptr::null());
            match r {
                CoroutineResult::Yield(w) => q.park(&ep, i, w),
                CoroutineResult::Return(r) => {
                    out[i] = Some(r);
                    cos[i] = None;
                    live -= 1;
                }
            }
        }
        if live == 0 {
            break;
        }
        // Tasks whose time came run next, but sockets are looked at first
        // (without waiting), so that a task that keeps sleeping for no time
        // does not starve the others' replies.
        let next = q.expire(Instant::now());
        let timeout = if q.ready.is_empty() {
            next
        } else {
            Some(Duration::ZERO)
        };
        let got = ep.wait(&mut events, timeout);
        q.dispatch(&events[..got], Some(on_stop.stop));
        TURN.set(None);
    }
    drop(on_stop);
    Ok(out
        .into_iter()
        .map(|r| r.expect("every task returned"))
        .collect())
}
