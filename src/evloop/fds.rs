//! What the core knows of each descriptor, so that finding it out costs no
//! system call on the hot path:
//!
//! - the socket's timeouts (`SO_RCVTIMEO`, `SO_SNDTIMEO`) as rqps set them
//!   through [`set_timeout`], process-wide: a connection is opened on one
//!   thread and driven from another. A socket whose timeouts were set some
//!   other way is asked once ([`timeout`]) and the answer kept, until
//!   [`forget`] (a new socket under the number);
//! - per thread: what this thread's epoll has the descriptor registered
//!   for, and whether the socket is known drained (a read came back short,
//!   or found nothing, and no readiness was reported since). A read of a
//!   drained socket waits at once instead of asking the kernel first.

use std::cell::RefCell;
use std::io;
use std::os::fd::RawFd;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What a task waits for on a socket; also which of its timeouts bounds a
/// wait (`Both` waits up to the read timeout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interest {
    Read,
    Write,
    /// Either (TLS: records to send and records to read).
    Both,
}

impl Interest {
    /// The epoll events a wait for this registers (edge-triggered).
    pub(super) fn epoll_events(self) -> u32 {
        let base = libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET;
        (match self {
            Interest::Read => base,
            Interest::Write | Interest::Both => base | libc::EPOLLOUT,
        }) as u32
    }

    /// Whether epoll's `events` end a wait for this.
    pub(super) fn matches(self, events: u32) -> bool {
        let trouble = (libc::EPOLLERR | libc::EPOLLHUP | libc::EPOLLRDHUP) as u32;
        let want = match self {
            Interest::Read => libc::EPOLLIN as u32,
            Interest::Write => libc::EPOLLOUT as u32,
            Interest::Both => (libc::EPOLLIN | libc::EPOLLOUT) as u32,
        };
        events & (want | trouble) != 0
    }

    /// Whether a wait for this waits to send (a stop may end those first).
    pub(super) fn sends(self) -> bool {
        matches!(self, Interest::Write | Interest::Both)
    }

    fn timeout_slot(self) -> usize {
        match self {
            Interest::Read | Interest::Both => 0,
            Interest::Write => 1,
        }
    }

    fn sockopt(self) -> libc::c_int {
        match self {
            Interest::Read | Interest::Both => libc::SO_RCVTIMEO,
            Interest::Write => libc::SO_SNDTIMEO,
        }
    }
}

// ---- timeouts, process-wide ------------------------------------------------

const CHUNK: usize = 1024;
/// Descriptors below 1024 * 1024 are kept; a higher one is asked each wait.
const CHUNKS: usize = 1024;

/// Per descriptor, the receive and send timeouts: 0 not known, 1 none
/// (wait without end), 2 + microseconds otherwise.
type Slots = [[AtomicU64; 2]; CHUNK];
static TIMEOUTS: [OnceLock<Box<Slots>>; CHUNKS] = [const { OnceLock::new() }; CHUNKS];

const UNKNOWN: u64 = 0;
const NONE: u64 = 1;

fn slot(fd: RawFd, i: Interest) -> Option<&'static AtomicU64> {
    let fd = usize::try_from(fd).ok()?;
    let chunk = TIMEOUTS.get(fd / CHUNK)?.get_or_init(|| {
        Box::new(std::array::from_fn(|_| {
            [AtomicU64::new(UNKNOWN), AtomicU64::new(UNKNOWN)]
        }))
    });
    Some(&chunk[fd % CHUNK][i.timeout_slot()])
}

fn encode(t: Option<Duration>) -> u64 {
    match t {
        None => NONE,
        Some(d) => 2 + u64::try_from(d.as_micros()).unwrap_or(u64::MAX - 2),
    }
}

/// The kernel's form of a timeout: whole microseconds, and zero (which
/// would mean "without end") raised to one.
fn timeval(t: Option<Duration>) -> libc::timeval {
    match t {
        None => libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        Some(d) => libc::timeval {
            tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
            tv_usec: (d.subsec_micros() as libc::suseconds_t)
                .max(libc::suseconds_t::from(d.is_zero())),
        },
    }
}

fn from_timeval(tv: libc::timeval) -> Option<Duration> {
    if tv.tv_sec == 0 && tv.tv_usec == 0 {
        None
    } else {
        Some(Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000))
    }
}

/// Sets socket `fd`'s timeout for `way` (`Read`: `SO_RCVTIMEO`, `Write`:
/// `SO_SNDTIMEO`; `None`: none) and keeps it, so that a wait of the core
/// knows it without asking. Every timeout rqps sets on a socket the core
/// drives goes through here.
pub fn set_timeout(fd: RawFd, way: Interest, t: Option<Duration>) -> io::Result<()> {
    let tv = timeval(t);
    // SAFETY: setsockopt reads a timeval of the size given; a bad fd is an error.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            way.sockopt(),
            (&tv as *const libc::timeval).cast(),
            size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    if let Some(s) = slot(fd, way) {
        s.store(encode(from_timeval(tv)), Ordering::Relaxed);
    }
    Ok(())
}

/// Socket `fd`'s timeout for `way`, as kept; asked of the kernel (once,
/// then kept) when it is not known.
pub(super) fn timeout(fd: RawFd, way: Interest) -> Option<Duration> {
    let s = slot(fd, way);
    match s.map_or(UNKNOWN, |s| s.load(Ordering::Relaxed)) {
        UNKNOWN => {
            let t = ask_timeout(fd, way);
            if let Some(s) = s {
                s.store(encode(t), Ordering::Relaxed);
            }
            t
        }
        NONE => None,
        v => Some(Duration::from_micros(v - 2)),
    }
}

#[cfg(test)]
thread_local! {
    /// How many times this thread asked the kernel for a timeout.
    pub(super) static ASKED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn ask_timeout(fd: RawFd, way: Interest) -> Option<Duration> {
    #[cfg(test)]
    ASKED.set(ASKED.get() + 1);
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
            way.sockopt(),
            (&mut tv as *mut libc::timeval).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return None;
    }
    from_timeval(tv)
}

// ---- per thread ------------------------------------------------------------

/// What this thread knows of one descriptor.
#[derive(Clone, Copy, Default)]
pub(super) struct FdState {
    /// The events this thread's epoll has it registered for (0: not).
    pub registered: u32,
    /// Nothing to read: a read came back short or found nothing, and no
    /// readiness has been reported since.
    pub drained: bool,
}

thread_local! {
    static FDS: RefCell<Vec<FdState>> = const { RefCell::new(Vec::new()) };
}

/// `f` of this thread's state of `fd` (a negative one has none: `f` of a
/// throwaway default).
#[inline]
pub(super) fn with<R>(fd: RawFd, f: impl FnOnce(&mut FdState) -> R) -> R {
    let Ok(i) = usize::try_from(fd) else {
        return f(&mut FdState::default());
    };
    FDS.with_borrow_mut(|v| {
        if i >= v.len() {
            v.resize(i + 1, FdState::default());
        }
        f(&mut v[i])
    })
}

/// Whether this thread knows `fd` drained.
#[inline]
pub(super) fn drained(fd: RawFd) -> bool {
    let Ok(i) = usize::try_from(fd) else {
        return false;
    };
    FDS.with_borrow(|v| v.get(i).is_some_and(|s| s.drained))
}

/// Marks `fd` drained (or not) on this thread.
#[inline]
pub(super) fn set_drained(fd: RawFd, d: bool) {
    with(fd, |s| s.drained = d);
}

/// Forgets what this thread knows of every descriptor (a new epoll).
pub(super) fn forget_all() {
    FDS.with_borrow_mut(|v| v.clear());
}

/// Announces a socket the calling thread just opened, before its timeouts
/// are set: its number may be a closed socket's, whose timeouts, epoll
/// registration and state the core still has.
pub fn forget(fd: RawFd) {
    with(fd, |s| *s = FdState::default());
    for way in [Interest::Read, Interest::Write] {
        if let Some(s) = slot(fd, way) {
            s.store(UNKNOWN, Ordering::Relaxed);
        }
    }
}
