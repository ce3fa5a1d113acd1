//! A deadline for a whole exchange on a socket, not just for each read: the
//! connect timeout bounds the connect *and* the handshake of both wire
//! clients, even against a server that sends its greeting one byte a
//! second (which a per-read timeout never stops).

use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// A socket that can be shut down from another thread.
pub(crate) trait ShutDown: Send + 'static {
    fn shut_down(&self);
}

impl ShutDown for TcpStream {
    fn shut_down(&self) {
        let _ = self.shutdown(Shutdown::Both);
    }
}

impl ShutDown for UnixStream {
    fn shut_down(&self) {
        let _ = self.shutdown(Shutdown::Both);
    }
}

/// While it lives, a watchdog thread shuts the socket down when `limit`
/// passes, so that a blocked read or write returns at once; dropping it ends
/// the watch.
pub(crate) struct Deadline {
    _cancel: mpsc::Sender<()>,
    expired: Arc<AtomicBool>,
    limit: Duration,
}

impl Deadline {
    /// Watches `socket` (a clone of the client's) for `limit`. `None` when
    /// no thread could be started: then only the per-read timeouts hold.
    pub(crate) fn watch(socket: impl ShutDown, limit: Duration) -> Option<Deadline> {
        let (tx, rx) = mpsc::channel::<()>();
        let expired = Arc::new(AtomicBool::new(false));
        let flag = expired.clone();
        std::thread::Builder::new()
            .name("rqps-deadline".into())
            .spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(limit) {
                    flag.store(true, Ordering::SeqCst);
                    socket.shut_down();
                }
            })
            .ok()?;
        Some(Deadline {
            _cancel: tx,
            expired,
            limit,
        })
    }

    /// Whether the limit passed (and the socket was shut down).
    pub(crate) fn expired(&self) -> bool {
        self.expired.load(Ordering::SeqCst)
    }

    /// What to say when it did.
    pub(crate) fn message(&self) -> String {
        format!(
            "the server did not finish the connection handshake within the connect timeout ({} s)",
            self.limit.as_secs_f64()
        )
    }
}

/// The mid-message deadline of a wire client: a server writes each message
/// whole, so once the first bytes of one have arrived, the rest must follow
/// within the message timeout ([`Timeouts::message`](crate::engine::Timeouts), 10 s by
/// default), whatever the statement timeout. Silence there is a fault (a
/// garbled length field, a server stopped mid-write), not a long query:
/// without this, a garbled reply waited out the statement timeout (600 s).
///
/// Between messages the socket keeps the statement timeout; inside one it
/// gets the short one, set only when a read has to wait mid-message (a
/// setsockopt per such wait, none on the usual path where a reply arrives
/// in one read). A server that trickles a message a byte at a time is
/// stopped too: the time since the message began is checked before each
/// read, so it fails within twice the deadline at most. Each message has its
/// own deadline ([`MidMessage::message_done`]): a result set that streams
/// for minutes, message after message, is a long query, not a fault.
pub(crate) struct MidMessage {
    /// The socket; `None`: not watched (during the handshake, in tests).
    fd: Option<std::os::fd::RawFd>,
    /// The socket's timeout between messages (the statement timeout).
    long: Duration,
    short: Duration,
    /// When the message under way began to wait, if one is.
    since: Option<std::time::Instant>,
    /// The socket has the short timeout now.
    armed: bool,
}

impl MidMessage {
    pub(crate) fn off() -> Self {
        MidMessage {
            fd: None,
            long: Duration::ZERO,
            short: Duration::ZERO,
            since: None,
            armed: false,
        }
    }

    /// Watches socket `fd`, whose read timeout is `long` (the statement
    /// timeout) now; a message must be whole within `short`.
    pub(crate) fn on(fd: std::os::fd::RawFd, long: Duration, short: Duration) -> Self {
        MidMessage {
            fd: Some(fd),
            long,
            short: short.min(long),
            since: None,
            armed: false,
        }
    }

    /// The statement timeout the socket was given, for the message of a
    /// statement that timed out.
    pub(crate) fn statement_timeout(&self) -> Duration {
        self.long
    }

    /// Before a read that may wait: `mid` when part of the message is in.
    #[inline]
    pub(crate) fn before_read(&mut self, mid: bool) -> std::io::Result<()> {
        let Some(fd) = self.fd else {
            return Ok(());
        };
        if !mid {
            self.since = None;
            if self.armed {
                self.armed = false;
                set_read_timeout(fd, self.long)?;
            }
            return Ok(());
        }
        match self.since {
            None => {
                self.since = Some(std::time::Instant::now());
                if !self.armed {
                    self.armed = true;
                    set_read_timeout(fd, self.short)?;
                }
                Ok(())
            }
            Some(t) if t.elapsed() > self.short => Err(self.stalled()),
            Some(_) => Ok(()),
        }
    }

    /// The message that was waited for is whole: the next one, even if its
    /// first bytes are already in, gets a deadline of its own.
    #[inline]
    pub(crate) fn message_done(&mut self) {
        self.since = None;
    }

    /// A read's error: a timeout in the middle of a message is this fault.
    #[cold]
    pub(crate) fn failed(&self, e: std::io::Error) -> std::io::Error {
        let timeout = matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        );
        if timeout && self.since.is_some() {
            self.stalled()
        } else {
            e
        }
    }

    fn stalled(&self) -> std::io::Error {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "the server stopped in the middle of a message for {} s (--message-timeout): a garbled reply or a stuck server; the connection was closed",
                self.short.as_secs_f64()
            ),
        )
    }
}

/// SO_RCVTIMEO of socket `fd` (what `set_read_timeout` sets).
fn set_read_timeout(fd: std::os::fd::RawFd, d: Duration) -> std::io::Result<()> {
    let tv = libc::timeval {
        tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
        // Zero would mean "wait forever".
        tv_usec: (d.subsec_micros() as libc::suseconds_t).max(libc::suseconds_t::from(d.is_zero())),
    };
    // SAFETY: setsockopt reads a timeval of the size given; a bad fd is an error.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn each_message_has_its_own_deadline_and_a_trickle_within_one_fails() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let short = Duration::from_millis(30);
        let mut m = MidMessage {
            fd: Some(a.as_raw_fd()),
            long: Duration::from_secs(600),
            short,
            since: None,
            armed: false,
        };
        // A stream of messages, each whole within the deadline, that runs
        // longer than it: never a fault.
        for _ in 0..4 {
            m.before_read(true).unwrap();
            std::thread::sleep(short / 2);
            m.before_read(true).unwrap();
            m.message_done();
        }
        // (The kernel keeps it in clock ticks: 30 ms reads back as 32.)
        let t = a.read_timeout().unwrap().unwrap();
        assert!(t >= short && t < Duration::from_secs(1), "{t:?}");
        // One message that takes longer than the deadline: a fault.
        m.before_read(true).unwrap();
        std::thread::sleep(short + short / 2);
        let e = m.before_read(true).unwrap_err();
        assert!(e.to_string().contains("--message-timeout"), "{e}");
        // Between messages the socket waits as long as a statement may.
        m.before_read(false).unwrap();
        assert_eq!(a.read_timeout().unwrap(), Some(Duration::from_secs(600)));
    }
}
