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

/// What the server says, over a connection of rqps's own, the session of
/// a statement that gets no reply is doing (see [`MidMessage`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Session {
    /// Working on something (running, waiting on a lock): wait on.
    Busy,
    /// Waiting for the client (PostgreSQL's `ClientRead`, MySQL's `Sleep`):
    /// what the server said of it, for the message.
    WaitsForClient(String),
    /// Not known: an answer rqps cannot trust (a pooler in between hands
    /// out ids of its own), or a refusal (privileges, too many connections).
    Unknown,
    /// No answer: a new connection to the server failed on the way (it
    /// timed out, or the link broke), with what happened. Twice in a row,
    /// the link itself is broken (a proxy or network that went silent or
    /// garbles bytes) and the statement ends, rather than at the statement
    /// timeout.
    Unreachable(String),
}

/// Asks the server about the session of the watched connection.
pub(crate) type AskServer = Box<dyn FnMut() -> Session + Send>;

/// After the server said once that it waits for the client: how long rqps
/// listens for a reply that may have been on its way before it asks again.
const GRACE: Duration = Duration::from_secs(1);

/// The read deadlines of a wire client once it is logged in.
///
/// **Inside a message.** A server writes each message whole, so once the
/// first bytes of one have arrived, the rest must follow within
/// the message timeout ([`Timeouts::message`](crate::engine::Timeouts), 10 s by
/// default),
/// whatever the statement timeout. Silence there is a fault (a garbled
/// length field, a server stopped mid-write), not a long query. A server
/// that trickles a message a byte at a time is stopped too: the time since
/// the message began is checked before each read, so it fails within twice
/// the deadline at most. Each message has its own deadline
/// ([`MidMessage::message_done`]): a result set that streams for minutes,
/// message after message, is a long query, not a fault.
///
/// **Between messages** a long query is silent, so silence alone is a fault
/// only after the statement timeout (600 s by default). But a garbled
/// *request* (a length field that grew by one flipped byte) leaves the
/// server waiting, in the middle of a message, for bytes the client will
/// never send, and a garbled reply type (ReadyForQuery that became a
/// Notice) leaves the client waiting for a message the server will never
/// send: each side waits for the other. Neither server times that out
/// (PostgreSQL waits for the rest of a message forever, MySQL for
/// `wait_timeout`, 8 hours), so rqps asks. Whenever a reply has been
/// silent for the message timeout, [`AskServer`] asks the server, over a
/// connection of its own, what the statement's session is doing. A session
/// that waits for the client, twice, [`GRACE`] apart, with nothing arriving
/// between, ends the statement at once: behind a proxy that garbled one
/// request in 9, runs waited out the 600 s instead. A server that cannot be
/// reached over a new connection, two asks in a row (each bounded by the
/// message timeout), ends it too: the link itself is broken and no answer
/// will come (a garbled link whose asks failed as well waited for the
/// statement timeout). A session that works (a long query, a lock wait) is
/// asked again each message timeout until the statement timeout.
///
/// The socket's read timeout is the short one throughout (set once), so the
/// usual path, where a reply arrives in one read, costs no system call.
pub(crate) struct MidMessage {
    /// The socket; `None`: not watched (during the handshake, in tests).
    fd: Option<std::os::fd::RawFd>,
    /// The statement timeout: the most a reply may be silent.
    long: Duration,
    short: Duration,
    /// When the message under way began to wait, if one is.
    since: Option<std::time::Instant>,
    /// When the silence between messages began, once a read timed out.
    quiet: Option<std::time::Instant>,
    /// The socket's read timeout now.
    current: Duration,
    /// The server said the session waits for the client; one more such
    /// answer after [`GRACE`] ends the statement.
    suspect: bool,
    /// The last ask got no answer ([`Session::Unreachable`]); one more
    /// ends the statement.
    unreachable: bool,
    ask: Option<AskServer>,
}

/// What a wire client does after a read failed: read again, or give up
/// with this error.
pub(crate) enum Waited {
    Again,
    Fail(std::io::Error),
}

impl MidMessage {
    pub(crate) fn off() -> Self {
        MidMessage {
            fd: None,
            long: Duration::ZERO,
            short: Duration::ZERO,
            since: None,
            quiet: None,
            current: Duration::ZERO,
            suspect: false,
            unreachable: false,
            ask: None,
        }
    }

    /// Watches socket `fd` with the statement timeout `long` and the message
    /// timeout `short`, asking the server with `ask` (if any) when a reply is
    /// silent. Sets the socket's read timeout to the message timeout.
    pub(crate) fn on(
        fd: std::os::fd::RawFd,
        long: Duration,
        short: Duration,
        ask: Option<AskServer>,
    ) -> std::io::Result<Self> {
        let short = short.min(long);
        set_read_timeout(fd, short)?;
        Ok(MidMessage {
            fd: Some(fd),
            long,
            short,
            since: None,
            quiet: None,
            current: short,
            suspect: false,
            unreachable: false,
            ask,
        })
    }

    /// The statement timeout the socket was given, for the message of a
    /// statement that timed out.
    pub(crate) fn statement_timeout(&self) -> Duration {
        self.long
    }

    /// Before a read that may wait: `mid` when part of the message is in.
    #[inline]
    pub(crate) fn before_read(&mut self, mid: bool) -> std::io::Result<()> {
        if self.fd.is_none() {
            return Ok(());
        }
        if !mid {
            self.since = None;
            return Ok(());
        }
        match self.since {
            None => {
                self.since = Some(std::time::Instant::now());
                Ok(())
            }
            Some(t) if t.elapsed() > self.short => Err(self.stalled()),
            Some(_) => Ok(()),
        }
    }

    /// A read brought bytes: the silence between messages is over.
    #[inline]
    pub(crate) fn heard(&mut self) {
        self.quiet = None;
        if self.suspect {
            self.relax();
        }
    }

    #[cold]
    fn relax(&mut self) {
        self.suspect = false;
        self.set_timeout(self.short);
    }

    fn set_timeout(&mut self, d: Duration) {
        if let Some(fd) = self.fd
            && d != self.current
            && set_read_timeout(fd, d).is_ok()
        {
            self.current = d;
        }
    }

    /// The message that was waited for is whole: the next one, even if its
    /// first bytes are already in, gets a deadline of its own.
    #[inline]
    pub(crate) fn message_done(&mut self) {
        self.since = None;
    }

    /// A read's error. A timeout in the middle of a message is a fault; one
    /// between messages is silence, which ends at the statement timeout or
    /// when the server says it waits for the client.
    #[cold]
    pub(crate) fn failed(&mut self, e: std::io::Error) -> Waited {
        let timeout = matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        );
        if !timeout || self.fd.is_none() {
            return Waited::Fail(e);
        }
        if self.since.is_some() {
            return Waited::Fail(self.stalled());
        }
        // A new silence: what the asks of the last one found is over.
        if self.quiet.is_none() {
            self.unreachable = false;
        }
        let quiet = *self
            .quiet
            .get_or_insert_with(|| std::time::Instant::now() - self.current);
        let silent = quiet.elapsed();
        if silent >= self.long {
            return Waited::Fail(e);
        }
        let answer = match self.ask.as_mut() {
            Some(ask) => ask(),
            None => Session::Unknown,
        };
        let unreachable = std::mem::take(&mut self.unreachable);
        match answer {
            Session::Unreachable(why) if unreachable => {
                return Waited::Fail(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "no reply came for {:.0} s and the server could not be reached over a new connection either, twice ({why}): the link is broken (a proxy or network that went silent or garbles bytes?); the connection was closed",
                        quiet.elapsed().as_secs_f64()
                    ),
                ));
            }
            Session::Unreachable(_) => {
                self.unreachable = true;
                if self.suspect {
                    self.relax();
                }
            }
            Session::WaitsForClient(what) if self.suspect => {
                return Waited::Fail(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "the server is not working on the statement but waiting for rqps ({what}), \
                         and no reply came for {:.0} s: the request or its reply was garbled or \
                         lost on the way (a proxy or network that corrupts bytes?); the connection \
                         was closed",
                        quiet.elapsed().as_secs_f64()
                    ),
                ));
            }
            Session::WaitsForClient(_) => {
                self.suspect = true;
                self.set_timeout(GRACE);
            }
            Session::Busy | Session::Unknown => {
                if self.suspect {
                    self.relax();
                }
            }
        }
        // Not past the statement timeout on the next wait.
        let left = self.long.saturating_sub(quiet.elapsed());
        if left.is_zero() {
            return Waited::Fail(e);
        }
        let next = if self.suspect { GRACE } else { self.short };
        self.set_timeout(next.min(left));
        Waited::Again
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

/// SO_RCVTIMEO of socket `fd` (what `set_read_timeout` sets), through the
/// client core, which keeps it for its waits.
fn set_read_timeout(fd: std::os::fd::RawFd, d: Duration) -> std::io::Result<()> {
    crate::evloop::set_timeout(fd, crate::evloop::Interest::Read, Some(d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn each_message_has_its_own_deadline_and_a_trickle_within_one_fails() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let short = Duration::from_millis(30);
        // The socket is given the default message timeout; the deadline is
        // checked against a short one.
        const DEFAULT: Duration = crate::engine::DEFAULT_MESSAGE_TIMEOUT;
        let mut m = MidMessage::on(a.as_raw_fd(), Duration::from_secs(600), DEFAULT, None).unwrap();
        m.short = short;
        m.current = short;
        // A stream of messages, each whole within the deadline, that runs
        // longer than it: never a fault.
        for _ in 0..4 {
            m.before_read(true).unwrap();
            std::thread::sleep(short / 2);
            m.before_read(true).unwrap();
            m.message_done();
        }
        // One message that takes longer than the deadline: a fault.
        m.before_read(true).unwrap();
        std::thread::sleep(short + short / 2);
        let e = m.before_read(true).unwrap_err();
        assert!(e.to_string().contains("--message-timeout"), "{e}");
        // The socket waits the message timeout at a time, in a message or not.
        m.message_done();
        m.before_read(false).unwrap();
        let t = a.read_timeout().unwrap().unwrap();
        assert!(
            t >= Duration::from_secs(1) && t <= Duration::from_secs(10),
            "{t:?}"
        );
    }

    fn timed_out() -> std::io::Error {
        std::io::Error::from(std::io::ErrorKind::WouldBlock)
    }

    type Pair = (
        std::os::unix::net::UnixStream,
        std::os::unix::net::UnixStream,
    );

    /// A watch over a socket pair (kept open while it lives) whose server
    /// answers `answers` in turn, and how many times it was asked.
    fn asked(
        answers: Vec<Session>,
        long: Duration,
    ) -> (MidMessage, Pair, std::sync::Arc<std::sync::Mutex<usize>>) {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let n = std::sync::Arc::new(std::sync::Mutex::new(0));
        let count = n.clone();
        let mut it = answers.into_iter();
        let ask: AskServer = Box::new(move || {
            *count.lock().unwrap() += 1;
            it.next().unwrap_or(Session::Unknown)
        });
        let m = MidMessage::on(
            a.as_raw_fd(),
            long,
            crate::engine::DEFAULT_MESSAGE_TIMEOUT,
            Some(ask),
        )
        .unwrap();
        (m, (a, b), n)
    }

    #[test]
    fn a_session_that_waits_for_the_client_twice_ends_the_statement() {
        let waits = || Session::WaitsForClient("PostgreSQL session 7: idle, ClientRead".into());
        let (mut m, _b, asked_n) = asked(vec![waits(), waits()], Duration::from_secs(600));
        m.before_read(false).unwrap();
        // First answer: listen a second longer for a reply on its way.
        assert!(matches!(m.failed(timed_out()), Waited::Again));
        assert!(m.suspect);
        assert_eq!(m.current, GRACE);
        match m.failed(timed_out()) {
            Waited::Fail(e) => {
                let e = e.to_string();
                assert!(
                    e.contains("garbled") && e.contains("idle, ClientRead"),
                    "{e}"
                );
            }
            Waited::Again => panic!("waited on"),
        }
        assert_eq!(*asked_n.lock().unwrap(), 2);
    }

    #[test]
    fn a_server_unreachable_twice_in_a_row_ends_the_statement() {
        let gone = || Session::Unreachable("no answer from the server in time".into());
        let (mut m, _b, asked_n) = asked(vec![gone(), gone()], Duration::from_secs(600));
        assert!(matches!(m.failed(timed_out()), Waited::Again));
        match m.failed(timed_out()) {
            Waited::Fail(e) => {
                let e = e.to_string();
                assert!(
                    e.contains("could not be reached") && e.contains("twice"),
                    "{e}"
                );
            }
            Waited::Again => panic!("waited on"),
        }
        assert_eq!(*asked_n.lock().unwrap(), 2);
        // Not in a row (the server answered between): wait on.
        let (mut m, _b, _) = asked(
            vec![gone(), Session::Busy, gone(), Session::Busy],
            Duration::from_secs(600),
        );
        for _ in 0..4 {
            assert!(matches!(m.failed(timed_out()), Waited::Again));
        }
    }

    #[test]
    fn a_busy_or_unknown_session_or_a_reply_between_waits_on_until_the_statement_timeout() {
        let waits = || Session::WaitsForClient("x".into());
        // A reply came after the first answer: not a fault, and the socket
        // gets its message timeout back.
        let (mut m, _b, _) = asked(vec![waits(), waits()], Duration::from_secs(600));
        assert!(matches!(m.failed(timed_out()), Waited::Again));
        m.heard();
        assert!(!m.suspect);
        assert_eq!(m.current, m.short);
        assert!(
            matches!(m.failed(timed_out()), Waited::Again),
            "a new silence"
        );
        // Busy (a long query) or unknown (no answer): wait on, up to the
        // statement timeout, which no answer shortens.
        let long = Duration::from_millis(300);
        let (mut m, _b, asked_n) = asked(vec![Session::Busy; 100], long);
        m.short = Duration::from_millis(50);
        m.current = m.short;
        let t = std::time::Instant::now();
        loop {
            match m.failed(timed_out()) {
                Waited::Again => std::thread::sleep(m.current),
                Waited::Fail(e) => {
                    assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
                    break;
                }
            }
        }
        assert!(
            t.elapsed() >= Duration::from_millis(240),
            "{:?}",
            t.elapsed()
        );
        assert!(*asked_n.lock().unwrap() >= 3);
    }
}
