//! The event-driven client core: one thread runs many tasks, each a stackful
//! coroutine running ordinary blocking code (a worker's loop, the wire
//! clients, sleeps), and waits for all of them with one `epoll_wait`.
//!
//! The contract: code inside a task calls [`recv`], [`send`], [`wait_fd`] and
//! [`sleep_until`] where it would block; they suspend the task instead of the
//! thread, and [`run`] resumes it when its socket is ready or its deadline
//! passes. Outside a task (the thread-per-worker path, setup code, tests)
//! they block the thread exactly as the plain calls do, so the wire clients
//! call them unconditionally ([`active`] tells which case holds).
//!
//! - Sockets stay in blocking mode: reads and writes inside a task use
//!   `MSG_DONTWAIT`, and a task that must wait takes its deadline from the
//!   socket's own `SO_RCVTIMEO`/`SO_SNDTIMEO` (what a blocking call would
//!   have waited), so statement and message timeouts hold unchanged; a wait
//!   that reaches it reports `WouldBlock`, as the blocking call does.
//! - A socket is registered with the thread's epoll once, edge-triggered,
//!   for reading; writability is added only while a task waits to write
//!   (and taken off at its next wait to read). Why: with `EPOLLOUT` always
//!   on, every reply woke the thread twice, once when the server read the
//!   query (the send buffer drained: an `EPOLLOUT` edge) and once for the
//!   reply, 1.9 sleeps per transaction where pgbench, which polls for
//!   reading only, sleeps once. A wake-up that does not match what the
//!   task waits for is ignored, and a spurious one only costs a retried
//!   `recv`. A descriptor that a task opens must be announced with
//!   [`new_fd`] (its number may be a closed socket's that the epoll still
//!   has on its list).
//! - Latency: a task whose reply is in is resumed after the tasks already
//!   runnable before it on its thread (at most the CPU time of those
//!   replies' processing), never after a sleep: `epoll_wait` is called only
//!   when no task can run. pgbench's threads have the same bound.
//! - What still blocks the thread: connecting (the TCP connect and DNS),
//!   asking the server about a silent statement over a connection of its
//!   own, and embedded engines' calls (they are CPU in the client thread:
//!   such steps keep a thread per worker).

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::io;
use std::os::fd::RawFd;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

/// What a task waits for on a socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interest {
    Read,
    Write,
    /// Either (TLS: records to send and records to read).
    Both,
}

impl Interest {
    /// The epoll events a wait for this registers (edge-triggered).
    fn epoll_events(self) -> u32 {
        let base = libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET;
        (match self {
            Interest::Read => base,
            Interest::Write | Interest::Both => base | libc::EPOLLOUT,
        }) as u32
    }

    fn matches(self, events: u32) -> bool {
        let trouble = (libc::EPOLLERR | libc::EPOLLHUP | libc::EPOLLRDHUP) as u32;
        let want = match self {
            Interest::Read => libc::EPOLLIN as u32,
            Interest::Write => libc::EPOLLOUT as u32,
            Interest::Both => (libc::EPOLLIN | libc::EPOLLOUT) as u32,
        };
        events & (want | trouble) != 0
    }
}

/// What a suspended task waits for: a socket, a time, both, or neither
/// (it only lets the others run).
#[derive(Clone, Copy, Debug)]
struct Wait {
    fd: Option<(RawFd, Interest)>,
    until: Option<Instant>,
}

type Y = Yielder<bool, Wait>;

#[cfg(test)]
thread_local! {
    /// How many times this thread called `epoll_wait` (tests count sleeps).
    static EPOLL_WAITS: Cell<u64> = const { Cell::new(0) };
}

thread_local! {
    /// The running task's yielder; null outside a task.
    static CURRENT: Cell<*const Y> = const { Cell::new(std::ptr::null()) };
    /// The descriptors this thread's epoll has, with the events each is
    /// registered for (see [`new_fd`]).
    static REGISTERED: RefCell<HashMap<RawFd, u32>> = RefCell::new(HashMap::new());
}

/// Each task's stack: as a thread's (the memory is reserved, and touched
/// only as deep as the task goes).
const STACK: usize = 2 << 20;

/// Whether the calling code runs inside a task of [`run`].
#[inline]
pub fn active() -> bool {
    !CURRENT.get().is_null()
}

/// Suspends the running task until `w` is met; true when its socket is
/// ready (or it only yielded), false when its time came first.
fn suspend(w: Wait) -> bool {
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

/// Sleeps until `t`: inside a task, the thread runs other tasks meanwhile.
pub fn sleep_until(t: Instant) {
    loop {
        let now = Instant::now();
        if now >= t {
            return;
        }
        if active() {
            suspend(Wait {
                fd: None,
                until: Some(t),
            });
        } else {
            std::thread::sleep(t - now);
        }
    }
}

/// [`sleep_until`] now + `d`.
pub fn sleep(d: Duration) {
    if let Some(t) = Instant::now().checked_add(d) {
        sleep_until(t);
    }
}

/// Waits until socket `fd` is ready for `interest`, or `until` passes:
/// false then. Outside a task it waits with `poll(2)`.
pub fn wait_fd(fd: RawFd, interest: Interest, until: Option<Instant>) -> bool {
    if active() {
        return suspend(Wait {
            fd: Some((fd, interest)),
            until,
        });
    }
    let events = match interest {
        Interest::Read => libc::POLLIN,
        Interest::Write => libc::POLLOUT,
        Interest::Both => libc::POLLIN | libc::POLLOUT,
    };
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let ms = until.map_or(-1, |t| {
        let left = t.saturating_duration_since(Instant::now());
        left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
    });
    // SAFETY: one pollfd that lives for the call.
    unsafe { libc::poll(&mut p, 1, ms) > 0 }
}

/// Announces a socket this thread just opened: a descriptor number the
/// thread's epoll had may be reused (closing a socket drops it from the
/// epoll, not from this thread's list of what it registered).
pub fn new_fd(fd: RawFd) {
    REGISTERED.with_borrow_mut(|r| r.remove(&fd));
}

/// The deadline of a wait on `fd` by its socket timeout (`SO_RCVTIMEO` or
/// `SO_SNDTIMEO`): `None` when it has none.
fn socket_deadline(fd: RawFd, opt: libc::c_int) -> Option<Instant> {
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    let mut len = size_of::<libc::timeval>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `tv`.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&mut tv as *mut libc::timeval).cast(),
            &mut len,
        )
    };
    if r != 0 || (tv.tv_sec == 0 && tv.tv_usec == 0) {
        return None;
    }
    let d = Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000);
    Instant::now().checked_add(d)
}

fn timed_out() -> io::Error {
    io::Error::new(
        io::ErrorKind::WouldBlock,
        "timed out waiting for the socket",
    )
}

/// One `recv` on socket `fd` that never blocks: `WouldBlock` when nothing
/// is there.
#[inline]
pub fn recv_now(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: recv writes at most buf.len() bytes into buf.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// One `send` on socket `fd` that never blocks.
#[inline]
pub fn send_now(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    let flags = libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL;
    // SAFETY: send reads at most buf.len() bytes from buf.
    let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), flags) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Retries `op` (a non-blocking call on `fd`) until it does not say
/// `WouldBlock`, waiting in between for what `op` says it waits for (it
/// sets its argument, [`Interest::Read`] unless told) up to the socket's
/// timeout `opt`, as a blocking call on the socket would.
#[inline]
pub fn retry<T>(
    fd: RawFd,
    opt: libc::c_int,
    mut op: impl FnMut(&mut Interest) -> io::Result<T>,
) -> io::Result<T> {
    let mut deadline = None;
    let mut interest = Interest::Read;
    loop {
        match op(&mut interest) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let until = *deadline.get_or_insert_with(|| socket_deadline(fd, opt));
                if !wait_fd(fd, interest, until) && until.is_some_and(|t| Instant::now() >= t) {
                    return Err(timed_out());
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

/// A read on socket `fd` inside a task (see the module's contract).
pub fn recv(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    retry(fd, libc::SO_RCVTIMEO, |_| recv_now(fd, buf))
}

/// A write on socket `fd` inside a task.
pub fn send(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    retry(fd, libc::SO_SNDTIMEO, |i| {
        *i = Interest::Write;
        send_now(fd, buf)
    })
}

/// A socket as `Read`/`Write` that never blocks (for rustls, whose
/// `WouldBlock` the caller turns into a wait with [`retry`]).
pub struct NonBlocking(pub RawFd);

impl io::Read for NonBlocking {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        recv_now(self.0, buf)
    }
}

impl io::Write for NonBlocking {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        send_now(self.0, buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The thread's epoll instance.
struct Epoll(RawFd);

/// Whether the kernel lacks `epoll_pwait2` (before Linux 5.11): then
/// timeouts are whole milliseconds, rounded up.
static NO_PWAIT2: AtomicBool = AtomicBool::new(false);

impl Epoll {
    fn new() -> io::Result<Epoll> {
        // SAFETY: no pointers.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Epoll(fd))
    }

    /// Registers `fd` for what a wait for `interest` needs: added once,
    /// modified only when that changes (a write wait, and the read wait
    /// after it). A modification looks at the socket's state again, so an
    /// edge that came before it is not lost.
    fn watch(&self, fd: RawFd, interest: Interest) {
        let events = interest.epoll_events();
        let op = REGISTERED.with_borrow_mut(|r| match r.insert(fd, events) {
            None => Some(libc::EPOLL_CTL_ADD),
            Some(had) if had != events => Some(libc::EPOLL_CTL_MOD),
            Some(_) => None,
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
        REGISTERED.with_borrow_mut(|r| r.clear());
    }
}

type Task<'a, T> = Box<dyn FnOnce() -> T + 'a>;
type Co<T> = Coroutine<bool, Wait, std::thread::Result<T>>;

/// The scheduler's state besides the coroutines.
struct Queue {
    ready: VecDeque<(usize, bool)>,
    /// What each task waits for (`None`: runnable, running or done). The
    /// nearest deadline is found by a scan: a thread has tens of tasks, and
    /// a heap would keep one stale entry per reply until its (statement
    /// timeout) deadline passed.
    waits: Vec<Option<Wait>>,
    by_fd: HashMap<RawFd, usize>,
}

impl Queue {
    /// Files task `i`'s new wait.
    fn park(&mut self, ep: &Epoll, i: usize, w: Wait) {
        if let Some((fd, interest)) = w.fd {
            ep.watch(fd, interest);
            self.by_fd.insert(fd, i);
        } else if w.until.is_none() {
            self.ready.push_back((i, true));
            return;
        }
        self.waits[i] = Some(w);
    }

    /// Makes task `i` runnable (`io`: its socket, not its time, woke it).
    fn wake(&mut self, i: usize, io: bool) {
        if let Some(w) = self.waits[i].take()
            && let Some((fd, _)) = w.fd
        {
            self.by_fd.remove(&fd);
        }
        self.ready.push_back((i, io));
    }

    /// Wakes the tasks whose time has come; the time to the next one.
    fn expire(&mut self) -> Option<Duration> {
        let now = Instant::now();
        let mut next: Option<Instant> = None;
        for i in 0..self.waits.len() {
            let Some(t) = self.waits[i].and_then(|w| w.until) else {
                continue;
            };
            if t <= now {
                self.wake(i, false);
            } else if next.is_none_or(|n| t < n) {
                next = Some(t);
            }
        }
        next.map(|t| t - now)
    }
}

/// Runs `tasks` on this thread to their ends, each in a coroutine of its
/// own, and returns what each returned (or its panic), in order.
pub fn run<'a, T: 'a>(tasks: Vec<Task<'a, T>>) -> io::Result<Vec<std::thread::Result<T>>> {
    let ep = Epoll::new()?;
    let n = tasks.len();
    let mut cos: Vec<Option<Co<T>>> = Vec::with_capacity(n);
    for t in tasks {
        let stack = DefaultStack::new(STACK)?;
        let body = move |y: &Y, _: bool| {
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
        ready: (0..n).map(|i| (i, true)).collect(),
        waits: vec![None; n],
        by_fd: HashMap::new(),
    };
    let mut live = n;
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 64];
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
        let next = q.expire();
        let timeout = if q.ready.is_empty() {
            next
        } else {
            Some(Duration::ZERO)
        };
        let got = ep.wait(&mut events, timeout);
        for ev in &events[..got] {
            let (fd, bits) = (ev.u64 as RawFd, ev.events);
            if let Some(&i) = q.by_fd.get(&fd)
                && q.waits[i]
                    .and_then(|w| w.fd)
                    .is_some_and(|(_, int)| int.matches(bits))
            {
                q.wake(i, true);
            }
        }
    }
    Ok(out
        .into_iter()
        .map(|r| r.expect("every task returned"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    fn boxed<'a, T>(f: impl FnOnce() -> T + 'a) -> Task<'a, T> {
        Box::new(f)
    }

    #[test]
    fn many_tasks_on_one_thread_each_get_their_own_replies() {
        // 50 socket pairs; each task sends on its end and waits for the
        // echo that a plain thread sends back after a delay.
        let pairs: Vec<(UnixStream, UnixStream)> =
            (0..50).map(|_| UnixStream::pair().unwrap()).collect();
        let (mine, theirs): (Vec<_>, Vec<_>) = pairs.into_iter().unzip();
        let echo = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            for mut s in theirs.into_iter().rev() {
                let mut b = [0u8; 8];
                s.read_exact(&mut b).unwrap();
                s.write_all(&b).unwrap();
            }
        });
        let thread = std::thread::current().id();
        let tasks: Vec<Task<'_, (u64, bool)>> = mine
            .iter()
            .enumerate()
            .map(|(i, s)| {
                boxed(move || {
                    let fd = s.as_raw_fd();
                    assert!(active());
                    assert_eq!(send(fd, &(i as u64).to_le_bytes()).unwrap(), 8);
                    let mut b = [0u8; 8];
                    assert_eq!(recv(fd, &mut b).unwrap(), 8);
                    (u64::from_le_bytes(b), std::thread::current().id() == thread)
                })
            })
            .collect();
        let t = Instant::now();
        let got = run(tasks).unwrap();
        echo.join().unwrap();
        for (i, r) in got.into_iter().enumerate() {
            assert_eq!(r.unwrap(), (i as u64, true));
        }
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert!(!active());
    }

    #[test]
    fn sleeping_tasks_overlap_and_wake_in_deadline_order() {
        let order = RefCell::new(Vec::new());
        let t0 = Instant::now();
        let tasks: Vec<Task<'_, ()>> = [60u64, 20, 40]
            .into_iter()
            .map(|ms| {
                let order = &order;
                boxed(move || {
                    sleep(Duration::from_millis(ms));
                    assert!(t0.elapsed() >= Duration::from_millis(ms));
                    order.borrow_mut().push(ms);
                })
            })
            .collect();
        run(tasks).unwrap();
        // Three sleeps of up to 60 ms at once, not 120 ms one after another.
        assert!(
            t0.elapsed() < Duration::from_millis(110),
            "{:?}",
            t0.elapsed()
        );
        assert_eq!(*order.borrow(), [20, 40, 60]);
    }

    #[test]
    fn a_read_with_a_socket_timeout_fails_as_a_blocking_read_would() {
        let (a, _b) = UnixStream::pair().unwrap();
        a.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        let ticks = Cell::new(0u32);
        let t0 = Instant::now();
        let tasks: Vec<Task<'_, Option<io::ErrorKind>>> = vec![
            boxed(|| recv(a.as_raw_fd(), &mut [0u8; 4]).err().map(|e| e.kind())),
            // Runs while the other waits.
            boxed(|| {
                for _ in 0..5 {
                    sleep(Duration::from_millis(5));
                    ticks.set(ticks.get() + 1);
                }
                None
            }),
        ];
        let got = run(tasks).unwrap();
        assert_eq!(got[0].as_ref().unwrap(), &Some(io::ErrorKind::WouldBlock));
        assert!(t0.elapsed() >= Duration::from_millis(50));
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        assert_eq!(ticks.get(), 5);
    }

    #[test]
    fn a_stop_flag_ends_a_task_that_polls_it_and_a_panic_stays_in_its_task() {
        let stop = Cell::new(false);
        let spins = Cell::new(0u64);
        let tasks: Vec<Task<'_, u32>> = vec![
            boxed(|| {
                while !stop.get() {
                    spins.set(spins.get() + 1);
                    sleep(Duration::from_millis(1));
                }
                1
            }),
            boxed(|| {
                sleep(Duration::from_millis(20));
                stop.set(true);
                2
            }),
            boxed(|| panic!("scripted")),
        ];
        let got = run(tasks).unwrap();
        assert_eq!(*got[0].as_ref().unwrap(), 1);
        assert_eq!(*got[1].as_ref().unwrap(), 2);
        assert!(got[2].is_err());
        // It ran meanwhile (a panic's backtrace takes the thread for a while).
        assert!(spins.get() >= 2, "{}", spins.get());
    }

    #[test]
    fn outside_a_task_the_calls_block_the_thread_as_plain_ones_do() {
        assert!(!active());
        let (a, mut b) = UnixStream::pair().unwrap();
        a.set_read_timeout(Some(Duration::from_millis(30))).unwrap();
        let e = recv(a.as_raw_fd(), &mut [0u8; 4]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        b.write_all(b"hi").unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(recv(a.as_raw_fd(), &mut buf).unwrap(), 2);
        let t = Instant::now();
        sleep(Duration::from_millis(10));
        assert!(t.elapsed() >= Duration::from_millis(10));
    }

    #[test]
    fn a_task_waiting_for_its_reply_is_not_woken_when_its_query_is_read() {
        // The peer reads the query (the task's send buffer drains: an
        // EPOLLOUT edge), then answers 50 ms later: one epoll_wait, not two.
        let (a, b) = UnixStream::pair().unwrap();
        let peer = std::thread::spawn(move || {
            let mut b = b;
            let mut q = [0u8; 5];
            b.read_exact(&mut q).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            b.write_all(b"reply").unwrap();
        });
        let fd = a.as_raw_fd();
        EPOLL_WAITS.set(0);
        let got = run(vec![boxed(|| {
            assert_eq!(send(fd, b"query").unwrap(), 5);
            let mut buf = [0u8; 5];
            let n = recv(fd, &mut buf).unwrap();
            buf[..n].to_vec()
        })])
        .unwrap();
        peer.join().unwrap();
        assert_eq!(got[0].as_ref().unwrap(), b"reply");
        assert_eq!(EPOLL_WAITS.get(), 1, "woken for the reply only");
    }

    #[test]
    fn a_reused_descriptor_number_is_registered_again() {
        // A task closes its socket and opens another (a reconnect): the
        // new one may get the old number, which the epoll dropped.
        let tasks: Vec<Task<'_, usize>> = vec![boxed(|| {
            let mut total = 0;
            for _ in 0..3 {
                let (a, b) = UnixStream::pair().unwrap();
                new_fd(a.as_raw_fd());
                let w = std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(10));
                    (&b).write_all(b"x").unwrap();
                    b
                });
                total += recv(a.as_raw_fd(), &mut [0u8; 1]).unwrap();
                drop(w.join().unwrap());
            }
            total
        })];
        let t = Instant::now();
        assert_eq!(*run(tasks).unwrap()[0].as_ref().unwrap(), 3);
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    }
}
