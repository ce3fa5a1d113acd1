//! The calls that code inside a task makes where it would block: reads and
//! writes on sockets, waits for a descriptor, sleeps. Inside a task they
//! suspend it; outside one they block the thread as the plain calls do.

use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use super::fds::{self, Interest};
use super::sched::{Wait, Woke, active, stopped, suspend};

/// Sleeps until `t`: inside a task, the thread runs other tasks meanwhile
/// (and a stop that ends every wait ends the sleep early).
pub fn sleep_until(t: Instant) {
    loop {
        let now = Instant::now();
        if now >= t {
            return;
        }
        if active() {
            let w = Wait {
                fd: None,
                until: Some(t),
            };
            if suspend(w) == Woke::Stopped {
                return;
            }
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
/// false then (or when a stop ended the wait). Outside a task it waits with
/// `poll(2)`.
pub fn wait_fd(fd: RawFd, interest: Interest, until: Option<Instant>) -> bool {
    wait(fd, interest, until) == Woke::Ready
}

fn wait(fd: RawFd, interest: Interest, until: Option<Instant>) -> Woke {
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
    if unsafe { libc::poll(&mut p, 1, ms) } > 0 {
        if p.revents & !libc::POLLOUT != 0 {
            fds::set_drained(fd, false);
        }
        Woke::Ready
    } else {
        Woke::Time
    }
}

/// Announces a socket this thread just opened, before its timeouts are set
/// ([`set_timeout`]): a descriptor number the core knew may be reused
/// (closing a socket drops it from the epoll, not from what the core knows
/// of the number).
pub fn new_fd(fd: RawFd) {
    fds::forget(fd);
}

fn timed_out() -> io::Error {
    io::Error::new(
        io::ErrorKind::WouldBlock,
        "timed out waiting for the socket",
    )
}

#[cfg(test)]
thread_local! {
    /// The `recv` system calls this thread made through the core.
    pub(super) static RECVS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// `recvfrom(fd, buf, flags)` as the system call itself: libc's `recv` is
/// a cancellation point, whose bookkeeping around the call cost about 30
/// instructions a call (callgrind), on every statement's read.
#[inline]
fn sys_recv(fd: RawFd, buf: &mut [u8], flags: libc::c_int) -> io::Result<usize> {
    #[cfg(test)]
    RECVS.set(RECVS.get() + 1);
    // SAFETY: recvfrom writes at most buf.len() bytes into buf; no address
    // is asked for (null pointers).
    let n = unsafe {
        libc::syscall(
            libc::SYS_recvfrom,
            fd,
            buf.as_mut_ptr(),
            buf.len(),
            flags,
            std::ptr::null_mut::<libc::sockaddr>(),
            std::ptr::null_mut::<libc::socklen_t>(),
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// `sendto(fd, buf, flags)` as the system call itself (see [`sys_recv`]).
#[inline]
fn sys_send(fd: RawFd, buf: &[u8], flags: libc::c_int) -> io::Result<usize> {
    // SAFETY: sendto reads at most buf.len() bytes from buf; no address.
    let n = unsafe {
        libc::syscall(
            libc::SYS_sendto,
            fd,
            buf.as_ptr(),
            buf.len(),
            flags,
            std::ptr::null::<libc::sockaddr>(),
            0 as libc::socklen_t,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// A blocking read on socket `fd` outside the core (a thread per
/// connection), as `read` on the socket is: it waits up to the socket's
/// receive timeout (then `WouldBlock`), without libc's cancellation
/// bookkeeping.
#[inline]
pub fn recv_blocking(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    sys_recv(fd, buf, 0)
}

/// A blocking write on socket `fd` outside the core, as `send` with
/// `MSG_NOSIGNAL` (what `TcpStream::write` does), without libc's
/// cancellation bookkeeping.
#[inline]
pub fn send_blocking(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    sys_send(fd, buf, libc::MSG_NOSIGNAL)
}

/// One `recv` on socket `fd` that never blocks: `WouldBlock` when nothing
/// is there. A socket known drained (see [`super::fds`]) is not asked: a
/// short read drains a stream socket, and whatever arrives later is
/// reported by epoll (edge-triggered) or poll before the next read.
#[inline]
pub fn recv_now(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    if fds::drained(fd) {
        return Err(io::ErrorKind::WouldBlock.into());
    }
    recv_asking(fd, buf)
}

/// [`recv_now`] of a socket not known drained: asks the kernel, and notes
/// what the answer says of the socket.
#[inline]
fn recv_asking(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    match sys_recv(fd, buf, libc::MSG_DONTWAIT) {
        // Short: nothing is left (not at the end of the stream, whose
        // reads return 0 for ever, or for an empty buffer).
        Ok(n) => {
            if n > 0 && n < buf.len() {
                fds::set_drained(fd, true);
            }
            Ok(n)
        }
        Err(e) => {
            if e.kind() == io::ErrorKind::WouldBlock {
                fds::set_drained(fd, true);
            }
            Err(e)
        }
    }
}

/// One `send` on socket `fd` that never blocks.
#[inline]
pub fn send_now(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    sys_send(fd, buf, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL)
}

/// The deadline of a wait on `fd` for `way` that starts now: its timeout
/// from now (inside a task, the turn's now: [`super::sched::wait_start`]).
#[inline]
fn deadline(fd: RawFd, way: Interest) -> Option<Instant> {
    let t = fds::timeout(fd, way)?;
    super::sched::wait_start().checked_add(t)
}

/// Retries `op` (a non-blocking call on `fd`) until it does not say
/// `WouldBlock`, waiting in between for what `op` says it waits for (it
/// sets its argument, [`Interest::Read`] unless told) up to the socket's
/// timeout for `way`, as a blocking call on the socket would. The timeout
/// is the one rqps set ([`set_timeout`]): no system call asks for it. A
/// [`super::Stop`] that ends the wait fails it with [`stopped`].
#[inline]
pub fn retry<T>(
    fd: RawFd,
    way: Interest,
    mut op: impl FnMut(&mut Interest) -> io::Result<T>,
) -> io::Result<T> {
    let mut until = None;
    let mut interest = Interest::Read;
    loop {
        match op(&mut interest) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if let Some(r) = wait_once(fd, interest, way, &mut until, &mut op) {
                    return r;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

/// One wait of [`retry`] (and [`recv`]): `None` to try again, else what
/// the call returns (a stop, or the timeout after a last try of `op`).
#[inline]
fn wait_once<T>(
    fd: RawFd,
    interest: Interest,
    way: Interest,
    until: &mut Option<Option<Instant>>,
    op: &mut impl FnMut(&mut Interest) -> io::Result<T>,
) -> Option<io::Result<T>> {
    let until = *until.get_or_insert_with(|| deadline(fd, way));
    match wait(fd, interest, until) {
        Woke::Ready => None,
        Woke::Stopped => Some(Err(stopped())),
        Woke::Time if until.is_some_and(|t| Instant::now() >= t) => {
            // What came at the last moment is taken; else the wait timed
            // out, as a blocking call's would.
            fds::set_drained(fd, false);
            let mut i = interest;
            Some(match op(&mut i) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Err(timed_out()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(timed_out()),
                r => r,
            })
        }
        Woke::Time => None,
    }
}

/// A read on socket `fd` that waits as the module's contract says. A
/// socket known drained waits first, with no call that would find nothing.
#[inline]
pub fn recv(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    let mut until = None;
    loop {
        if !fds::drained(fd) {
            match recv_asking(fd, buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => return r,
            }
        }
        let mut op = |_: &mut Interest| recv_now(fd, buf);
        if let Some(r) = wait_once(fd, Interest::Read, Interest::Read, &mut until, &mut op) {
            return r;
        }
    }
}

/// A write on socket `fd` that waits as the module's contract says.
pub fn send(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    retry(fd, Interest::Write, |i| {
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
