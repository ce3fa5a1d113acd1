//! A minimal synchronous PostgreSQL frontend (protocol 3.0, TLS over TCP).
//!
//! One blocking socket per connection and two reused buffers: executing a
//! prepared statement writes Bind + Execute + Sync into the output buffer
//! with one `write`, then parses the answer in place from the read buffer,
//! which takes whatever the socket has in one `read` and frames every
//! complete message in it before reading again. Rows are counted, not
//! decoded. In steady state an execution allocates nothing.
//!
//! Messages are encoded by `postgres-protocol`, but for the hot path's
//! Bind, which is written from a template made when the statement is
//! prepared (the crate's generic encoder cost about three times the rest
//! of an execution; a test checks the bytes against it). Backend messages
//! the hot path sees (BindComplete, DataRow, CommandComplete,
//! ReadyForQuery) are read in place; every other one is parsed by
//! `postgres-protocol` from a copy.
//!
//! TLS ([`crate::engine::tls`]) follows libpq: an SSLRequest before the
//! startup message on TCP (never on a unix socket), the server's one-byte
//! answer, then the handshake; the hot path reads and writes through the
//! rustls stream with the same two buffers. Over TLS, SCRAM-SHA-256-PLUS
//! binds the authentication to the server's certificate
//! (`tls-server-end-point`) as `channel_binding` asks.

use crate::engine::deadline::{AskServer, Deadline, MidMessage, Session, Waited};
use crate::engine::inflight;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::ops::Range;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::Oid;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{
    ChannelBinding, SCRAM_SHA_256, SCRAM_SHA_256_PLUS, ScramSha256,
};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;

use crate::engine::tls::{self, Mode, TlsInfo, TlsSetup, TlsStream};
use crate::engine::{DbError, DbResult, ErrorClass, Meaning, Outcome, Param, SqlState};
use crate::evloop;

/// The SSLRequest code (protocol 3.0): 1234 in the high 16 bits, 5679 in the low.
const SSL_REQUEST: i32 = 80877103;

/// Initial size of the read buffer; one `read` takes up to this much.
const READ_BUF: usize = 64 * 1024;
/// Compact the read buffer when less than this is free at its end.
const MIN_READ: usize = 8 * 1024;
/// Largest message accepted (the server's own limit on a field is 1 GiB).
const MAX_MESSAGE: usize = 1 << 30;
/// The type bytes of every message a server sends (protocol 3.0).
const BACKEND_TYPES: &[u8] = b"RK23CdcGHWDIEVvnNAtS1sZT";

/// [`BACKEND_TYPES`] as a table, for the check every message takes: a
/// `contains` over the list was a memchr call per message, 7 % of the
/// pgbench client's user CPU per select-only transaction (perf).
const IS_BACKEND_TYPE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < BACKEND_TYPES.len() {
        t[BACKEND_TYPES[i] as usize] = true;
        i += 1;
    }
    t
};

// Type OIDs (pg_type.h).
const NAME: Oid = 19;
const INT8: Oid = 20;
const INT2: Oid = 21;
const INT4: Oid = 23;
const TEXT: Oid = 25;
const FLOAT4: Oid = 700;
const FLOAT8: Oid = 701;
const UNKNOWN: Oid = 705;
const BPCHAR: Oid = 1042;
const VARCHAR: Oid = 1043;
/// `numeric`: bound in text format (its binary form is base-10000 digits).
const NUMERIC: Oid = 1700;

/// Where and as whom to connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub host: Host,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
    pub database: String,
    pub application_name: String,
    /// For the TCP connect and for the whole startup exchange.
    pub connect_timeout: Duration,
    /// How long a statement's reply, and the rest of a begun message, may take.
    pub timeouts: crate::engine::Timeouts,
    /// `sslmode` and its files; not used over a unix socket.
    pub tls: TlsSetup,
    /// `channel_binding`.
    pub channel_binding: ChannelBindingMode,
}

/// libpq's `channel_binding`: whether SCRAM over TLS binds to the server's
/// certificate (SCRAM-SHA-256-PLUS).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChannelBindingMode {
    Disable,
    /// When the server offers it over TLS (libpq's default).
    #[default]
    Prefer,
    /// Fail unless the server authenticates with SCRAM-SHA-256-PLUS.
    Require,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Host {
    /// Host name or IP address.
    Tcp(String),
    /// Directory holding the server's `.s.PGSQL.<port>` socket.
    Unix(PathBuf),
}

/// The socket under a connection.
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<TlsStream>),
}

impl Stream {
    /// Through the core, which keeps it: its waits then know it without
    /// asking the kernel.
    fn set_read_timeout(&self, t: Duration) -> io::Result<()> {
        evloop::set_timeout(self.raw_fd(), evloop::Interest::Read, Some(t))
    }
    /// The socket's descriptor (under TLS, the TCP socket's).
    fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tls(s) => s.get_ref().as_raw_fd(),
        }
    }
    fn set_write_timeout(&self, t: Duration) -> io::Result<()> {
        evloop::set_timeout(self.raw_fd(), evloop::Interest::Write, Some(t))
    }

    /// Asks the server for TLS (SSLRequest) and runs the handshake when it
    /// agrees. A plain TCP stream stays plain when TLS is disabled, on
    /// `allow`'s first (`plain_first`) attempt, or when TLS is only
    /// preferred and the server declines.
    fn negotiate_tls(self, cfg: &Config, plain_first: bool) -> DbResult<Stream> {
        let (Stream::Tcp(mut tcp), Host::Tcp(host)) = (self, &cfg.host) else {
            unreachable!("TLS is negotiated on TCP streams only")
        };
        let mode = cfg.tls.mode();
        if mode == Mode::Disable || (mode == Mode::Allow && plain_first) {
            return Ok(Stream::Tcp(tcp));
        }
        let mut req = [0u8; 8];
        req[..4].copy_from_slice(&8i32.to_be_bytes());
        req[4..].copy_from_slice(&SSL_REQUEST.to_be_bytes());
        tcp.write_all(&req).map_err(io_error)?;
        // Exactly one byte: nothing the server sends before the handshake
        // may be read as part of the TLS stream.
        let mut answer = [0u8; 1];
        tcp.read_exact(&mut answer).map_err(io_error)?;
        match answer[0] {
            b'S' => match cfg.tls.connect(host, tcp) {
                Some(r) => r.map(|s| Stream::Tls(Box::new(s))),
                None => unreachable!("a TLS setup that is not disabled has a config"),
            },
            b'N' if mode.required() => Err(DbError::fatal(format!(
                "the server does not accept TLS connections, and {} requires TLS: enable ssl on \
                 the server, or use sslmode=prefer or sslmode=disable",
                tls::Flavor::Postgres.mode_option(mode)
            ))),
            b'N' => {
                // The server would not do TLS; a fresh startup follows on
                // the same connection.
                Ok(Stream::Tcp(tcp))
            }
            b => Err(DbError::fatal(format!(
                "the server answered the TLS request with {:?}, not S or N (a server older \
                 than protocol 3.0?): use sslmode=disable",
                b as char
            ))),
        }
    }

    /// What the TLS connection negotiated, and the channel binding data of
    /// its server certificate.
    fn tls_state(&self) -> Option<(TlsInfo, Option<Vec<u8>>)> {
        let Stream::Tls(s) = self else { return None };
        let hash = s
            .conn
            .peer_certificates()
            .and_then(|c| c.first())
            .and_then(|c| tls::server_end_point_hash(c));
        Some((TlsInfo::of(&s.conn), hash))
    }

    fn open(cfg: &Config) -> io::Result<Stream> {
        match &cfg.host {
            Host::Unix(dir) => {
                let s = UnixStream::connect(dir.join(format!(".s.PGSQL.{}", cfg.port)))?;
                evloop::new_fd(std::os::fd::AsRawFd::as_raw_fd(&s));
                Ok(Stream::Unix(s))
            }
            Host::Tcp(host) => {
                let mut last = None;
                for addr in (host.as_str(), cfg.port).to_socket_addrs()? {
                    match TcpStream::connect_timeout(&addr, cfg.connect_timeout) {
                        Ok(s) => {
                            s.set_nodelay(true)?;
                            keepalive(&s);
                            evloop::new_fd(std::os::fd::AsRawFd::as_raw_fd(&s));
                            return Ok(Stream::Tcp(s));
                        }
                        Err(e) => last = Some(e),
                    }
                }
                Err(last.unwrap_or_else(|| {
                    io::Error::new(io::ErrorKind::NotFound, format!("no address for {host}"))
                }))
            }
        }
    }
}

/// A dead peer is noticed by TCP: keepalives while we wait for an answer,
/// the user timeout while our data goes unacknowledged. Best effort.
fn keepalive(s: &TcpStream) {
    use std::os::fd::AsRawFd;
    let fd = s.as_raw_fd();
    let set = |level: libc::c_int, name: libc::c_int, v: libc::c_int| {
        // SAFETY: fd is an open socket owned by `s`; the option value is a
        // c_int that lives for the call, and its size is passed with it.
        unsafe {
            libc::setsockopt(
                fd,
                level,
                name,
                (&v as *const libc::c_int).cast(),
                size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    };
    set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1);
    #[cfg(target_os = "linux")]
    {
        set(libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, 60);
        set(libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, 10);
        set(libc::IPPROTO_TCP, libc::TCP_KEEPCNT, 6);
        set(libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT, 120_000);
    }
}

impl Read for Stream {
    /// Inside a task of the event-driven core, a read that would wait
    /// suspends the task instead ([`crate::evloop`]).
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if evloop::active() {
            return match self {
                Stream::Tls(s) => tls::read_in_task(s, buf),
                s => evloop::recv(s.raw_fd(), buf),
            };
        }
        match self {
            // The blocking read itself, without libc's cancellation
            // bookkeeping around it (about 60 instructions a statement).
            Stream::Tcp(s) => evloop::recv_blocking(std::os::fd::AsRawFd::as_raw_fd(s), buf),
            // A blocking read on a Unix socket is woken each time the server
            // reads what this side sent (the socket's wait queue gets the
            // write-space wake-up too) and sleeps again: 2.0 voluntary
            // context switches per pipelined transaction where pgbench,
            // which polls for reading and then reads, has 1.0. So: a read
            // that does not wait, a poll for input, the read (as in a task).
            // TCP wakes a reader only for data.
            Stream::Unix(s) => evloop::recv(std::os::fd::AsRawFd::as_raw_fd(s), buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    /// Over TLS, rustls encrypts `buf` and writes the records before it
    /// returns, so the callers' `write_all` needs no flush.
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if evloop::active() {
            return match self {
                Stream::Tls(s) => tls::write_in_task(s, buf),
                s => evloop::send(s.raw_fd(), buf),
            };
        }
        match self {
            Stream::Tcp(s) => evloop::send_blocking(std::os::fd::AsRawFd::as_raw_fd(s), buf),
            // send(2) with MSG_NOSIGNAL, as TCP's: write(2) on a Unix socket
            // shut down by a stop ([`inflight`]) or closed by the server
            // raises SIGPIPE, which ends rqps without a word.
            Stream::Unix(s) => evloop::send(std::os::fd::AsRawFd::as_raw_fd(s), buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Backend messages framed in place: 1 byte type, 4 byte length (counting
/// itself), body.
struct ReadBuf {
    buf: Vec<u8>,
    /// Start of the first message not yet returned.
    pos: usize,
    /// End of the bytes read.
    end: usize,
    /// The deadline for the rest of a message once it has begun.
    mid: MidMessage,
}

impl ReadBuf {
    fn new() -> Self {
        ReadBuf {
            buf: vec![0; READ_BUF],
            pos: 0,
            end: 0,
            mid: MidMessage::off(),
        }
    }

    /// The next complete message: its type and where its body lies in
    /// `self.buf`, valid until the next call.
    #[inline]
    fn next<R: Read>(&mut self, r: &mut R) -> io::Result<(u8, Range<usize>)> {
        loop {
            let avail = self.end - self.pos;
            let need = if avail >= 5 {
                let b = &self.buf[self.pos..self.end];
                let len = u32::from_be_bytes([b[1], b[2], b[3], b[4]]) as usize;
                if !(4..=MAX_MESSAGE).contains(&len) {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("bad message length {len} (type {:?})", b[0] as char),
                    ));
                }
                // Garbage, not a message: say so now rather than wait for
                // a length that will never come.
                if !IS_BACKEND_TYPE[b[0] as usize] {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("unknown message type {:?} (length {len})", b[0] as char),
                    ));
                }
                if avail > len {
                    let tag = b[0];
                    let body = self.pos + 5..self.pos + 1 + len;
                    self.pos = body.end;
                    return Ok((tag, body));
                }
                len + 1
            } else {
                5
            };
            self.fill(r, need)?;
        }
    }

    /// One read, after making room for a message of `need` bytes starting
    /// at `pos`.
    #[cold]
    #[inline(never)]
    fn fill<R: Read>(&mut self, r: &mut R, need: usize) -> io::Result<()> {
        // Bytes of a message are in: the rest is due within the
        // mid-message deadline.
        self.mid.before_read(self.end > self.pos)?;
        if self.pos == self.end {
            self.pos = 0;
            self.end = 0;
        } else if self.pos > 0
            && (self.pos + need > self.buf.len() || self.buf.len() - self.end < MIN_READ)
        {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        // Grown as the message arrives (doubling), not to its length field at
        // once: a garbled length just under the 1 GB bound costs memory only
        // for the bytes that really come.
        if need > self.buf.len() && self.buf.len() - self.end < MIN_READ {
            let to = (self.buf.len() * 2).min(need.next_power_of_two());
            self.buf.resize(to, 0);
        }
        loop {
            match r.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    ));
                }
                Ok(n) => {
                    self.end += n;
                    self.mid.heard();
                    if self.end - self.pos >= need {
                        self.mid.message_done();
                    }
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => match self.mid.failed(e) {
                    Waited::Again => {}
                    Waited::Fail(e) => return Err(e),
                },
            }
        }
    }
}

/// A statement prepared on one connection.
#[derive(Clone, Debug)]
pub struct Statement {
    name: String,
    params: Vec<Oid>,
    rows: bool,
    /// The RowDescription the server sent when it was prepared (empty:
    /// none), for the column names.
    described: Vec<u8>,
    /// The Bind message up to its value count, length left 0: see
    /// [`bind_head`].
    bind_head: Vec<u8>,
}

impl Statement {
    /// The body of the RowDescription the server sent when it was prepared
    /// (empty: the statement returns no rows).
    pub fn described(&self) -> &[u8] {
        &self.described
    }

    /// Its name on the server.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The type the server chose for each placeholder.
    pub fn param_types(&self) -> &[Oid] {
        &self.params
    }
    /// Whether executing it returns a result set (it has a RowDescription).
    pub fn returns_rows(&self) -> bool {
        self.rows
    }
}

/// Result set of [`PgConn::query_rows`]: column names, then rows of text
/// values (`None` for NULL).
pub type Rows = (Vec<String>, Vec<Vec<Option<String>>>);

/// One connection.
pub struct PgConn<S: Read + Write = Stream> {
    /// On the list a stop cancels ([`inflight`]); dropped before `stream`.
    registered: Option<inflight::Registered>,
    stream: S,
    /// Output buffer of everything but the hot path's Bind.
    out: BytesMut,
    /// Output buffer of [`Self::execute`]: Bind + Execute + Sync.
    hot: Vec<u8>,
    /// Execute (unnamed portal, all rows) + Sync, encoded once.
    exec_sync: Vec<u8>,
    rd: ReadBuf,
    /// An I/O or protocol error left the stream out of step with the server
    /// (or the server ended the session): every call fails with Reconnect.
    broken: bool,
    next_stmt: u32,
    /// Past the startup: a timeout now is the statement timeout.
    ready: bool,
    backend_key: Option<(i32, i32)>,
    server_version: Option<String>,
    tls: Option<TlsInfo>,
    /// How the startup proved who we are: `trust` (nothing asked),
    /// `password` (cleartext), `md5`, `scram-sha-256`(`-plus`).
    auth: &'static str,
    /// The transaction status of the last ReadyForQuery: `I` idle, `T` in
    /// a transaction block, `E` in a failed one.
    txn: u8,
    /// Pipeline mode: what is queued, not sent yet.
    pipe: Pipe,
}

/// A pipeline being queued ([`PgConn::pipeline_start`]): its messages
/// wait here until its end, as libpq's output buffer holds them until a
/// sync (`PQpipelineSync`); one write sends them all.
#[derive(Default)]
struct Pipe {
    on: bool,
    buf: BytesMut,
    /// What is queued, in order: a statement (`Q`) or a Sync (`S`), and
    /// where its messages end in `buf`.
    items: Vec<(u8, usize)>,
}

/// The most bytes of a pipeline sent before its answers so far are read.
/// Sent whole, a large pipeline can stall: the server stops reading while
/// its answers fill our receive buffer, and we stop reading while our
/// write waits for it. Far below the socket buffers (Unix sockets: 208 KiB;
/// TCP: 128 KiB on the receiving side at least), so a part always goes out
/// whole; pgbench's pipelines (tens of statements) go in one write.
const PIPE_PART: usize = 32 * 1024;

/// Flush: the server sends what it has answered so far.
const FLUSH: [u8; 5] = [b'H', 0, 0, 0, 4];

impl PgConn<Stream> {
    /// Connects, authenticates and waits until the server is ready. With
    /// `sslmode=allow`, as libpq: plaintext first, then TLS when the
    /// server's rules refuse plaintext.
    pub fn connect(cfg: &Config) -> DbResult<Self> {
        let allow = cfg.tls.mode() == Mode::Allow && matches!(cfg.host, Host::Tcp(_));
        match Self::connect_once(cfg, allow, Watch::Statements) {
            Err(e) if allow && plaintext_refused(&e) => {
                Self::connect_once(cfg, false, Watch::Statements)
            }
            r => r,
        }
    }

    /// One connection attempt; `plain_first`: `allow`'s plaintext try.
    fn connect_once(cfg: &Config, plain_first: bool, watch: Watch) -> DbResult<Self> {
        let stream = Stream::open(cfg).map_err(io_error)?;
        stream
            .set_read_timeout(cfg.connect_timeout)
            .and_then(|_| stream.set_write_timeout(cfg.connect_timeout))
            .map_err(io_error)?;
        // The connect timeout bounds the startup exchange as a whole.
        let deadline = match &stream {
            Stream::Tcp(s) => s
                .try_clone()
                .ok()
                .and_then(|s| Deadline::watch(s, cfg.connect_timeout)),
            Stream::Unix(s) => s
                .try_clone()
                .ok()
                .and_then(|s| Deadline::watch(s, cfg.connect_timeout)),
            Stream::Tls(_) => None,
        };
        let expired = |d: &Option<Deadline>| {
            d.as_ref()
                .filter(|d| d.expired())
                .map(|d| io_error(io::Error::new(io::ErrorKind::TimedOut, d.message())))
        };
        let stream = match stream {
            s @ Stream::Tcp(_) => match s.negotiate_tls(cfg, plain_first) {
                Ok(s) => s,
                Err(e) => return Err(expired(&deadline).unwrap_or(e)),
            },
            s => s,
        };
        let state = stream.tls_state();
        let mut c = PgConn::from_stream(stream);
        let (info, cb_data) = match state {
            Some((i, h)) => (Some(i), h),
            None => (None, None),
        };
        let tls_used = info.is_some();
        c.tls = info;
        match (c.startup(cfg, tls_used, cb_data), deadline) {
            (Err(_), Some(d)) if d.expired() => {
                return Err(io_error(io::Error::new(
                    io::ErrorKind::TimedOut,
                    d.message(),
                )));
            }
            (r, _) => r?,
        }
        // A connection that asks about another's session waits no longer
        // than the message timeout, and asks about none itself.
        let (limit, ask) = match watch {
            Watch::Statements => (
                cfg.timeouts.statement,
                c.backend_key.map(|(pid, _)| ask_about(cfg, pid)),
            ),
            Watch::Probe => (cfg.timeouts.message, None),
        };
        c.stream
            .set_read_timeout(limit)
            .and_then(|_| c.stream.set_write_timeout(limit))
            .map_err(io_error)?;
        c.rd.mid = MidMessage::on(c.stream.raw_fd(), limit, cfg.timeouts.message, ask)
            .map_err(io_error)?;
        if watch == Watch::Statements {
            let cancel = c.backend_key.map(|(pid, key)| cancel_by(cfg, pid, key));
            c.registered = Some(inflight::register(Some(c.stream.raw_fd()), cancel));
        }
        c.ready = true;
        Ok(c)
    }
}

/// What a connection's reads are for: a session's statements (watched by
/// asking the server when a reply is silent), or asking about another
/// session (see [`MidMessage`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Watch {
    Statements,
    Probe,
}

/// Asks the server, over a connection of its own, what backend `pid` is
/// doing (see [`MidMessage`]).
fn ask_about(cfg: &Config, pid: i32) -> AskServer {
    let mut cfg = cfg.clone();
    cfg.connect_timeout = cfg.connect_timeout.min(cfg.timeouts.message);
    Box::new(move || session_of(&cfg, pid))
}

/// Cancels what backend `pid` runs, as libpq's `PQcancel`: a cancel
/// request with its `key`, over a connection of its own (bounded by the
/// message timeout), after which the server closes it.
fn cancel_by(cfg: &Config, pid: i32, key: i32) -> inflight::Cancel {
    let mut cfg = cfg.clone();
    cfg.connect_timeout = cfg.connect_timeout.min(cfg.timeouts.message);
    std::sync::Arc::new(move || {
        let Ok(mut s) = Stream::open(&cfg) else {
            return;
        };
        let limit = cfg.connect_timeout;
        let mut m = BytesMut::with_capacity(16);
        frontend::cancel_request(pid, key, &mut m);
        let sent = s
            .set_write_timeout(limit)
            .and_then(|_| s.set_read_timeout(limit))
            .and_then(|_| s.write_all(&m));
        if sent.is_ok() {
            let _ = s.read(&mut [0u8; 1]);
        }
    })
}

/// What backend `pid` is doing, by `pg_stat_activity`. The asking
/// connection's own pid must be what the server says it is: behind a
/// pooler, which hands out keys of its own, the answer is not trusted.
fn session_of(cfg: &Config, pid: i32) -> Session {
    // A refusal the server sent is an answer (Unknown); a connection that
    // failed on the way is none (Unreachable).
    let mut c = match PgConn::connect_once(cfg, false, Watch::Probe) {
        Ok(c) => c,
        Err(e) if e.class == ErrorClass::Reconnect => return Session::Unreachable(e.message),
        Err(_) => return Session::Unknown,
    };
    let sql = format!(
        "SELECT pg_backend_pid(), (SELECT coalesce(state, '') || ',' || coalesce(wait_event, '') \
         FROM pg_stat_activity WHERE pid = {pid})"
    );
    let rows = match c.query_rows(&sql) {
        Ok((_, rows)) => rows,
        Err(e) if !c.is_usable() => return Session::Unreachable(e.message),
        Err(_) => return Session::Unknown,
    };
    let own = c.backend_key().map(|(p, _)| p.to_string());
    match rows.first().map(Vec::as_slice) {
        Some([Some(me), Some(what)]) if Some(me) == own.as_ref() => {
            let (state, wait) = what.split_once(',').unwrap_or((what, ""));
            // ClientRead (10 and later): reading the client's next message,
            // or the rest of one. 9.6 names no wait: idle says it.
            if wait == "ClientRead" || (wait.is_empty() && state.starts_with("idle")) {
                Session::WaitsForClient(format!("PostgreSQL backend {pid}: {state}, {wait}"))
            } else {
                Session::Busy
            }
        }
        _ => Session::Unknown,
    }
}

impl<S: Read + Write> Drop for PgConn<S> {
    fn drop(&mut self) {
        if !self.broken {
            self.out.clear();
            frontend::terminate(&mut self.out);
            let _ = self.stream.write_all(&self.out);
        }
    }
}

impl<S: Read + Write> PgConn<S> {
    /// A connection over `stream`, before the startup exchange.
    fn from_stream(stream: S) -> Self {
        PgConn {
            registered: None,
            stream,
            out: BytesMut::with_capacity(4096),
            hot: Vec::with_capacity(4096),
            exec_sync: exec_sync(),
            rd: ReadBuf::new(),
            broken: false,
            next_stmt: 0,
            ready: false,
            backend_key: None,
            server_version: None,
            txn: b'I',
            tls: None,
            auth: "trust",
            pipe: Pipe::default(),
        }
    }

    /// What TLS the connection uses (`None`: plaintext or a unix socket).
    pub fn tls(&self) -> Option<&TlsInfo> {
        self.tls.as_ref()
    }

    /// The authentication method the server asked for at startup.
    pub fn auth(&self) -> &'static str {
        self.auth
    }

    /// The server's process id and cancel key (BackendKeyData).
    pub fn backend_key(&self) -> Option<(i32, i32)> {
        self.backend_key
    }

    /// `server_version` as the server reported it at startup.
    pub fn server_version(&self) -> Option<&str> {
        self.server_version.as_deref()
    }

    /// False once an error left the connection unusable.
    pub fn is_usable(&self) -> bool {
        !self.broken
    }

    #[inline]
    fn check_usable(&self) -> DbResult<()> {
        if self.broken {
            return Err(DbError::lost(
                "the connection was lost after an earlier error",
            ));
        }
        Ok(())
    }

    /// Writes the output buffer.
    fn send(&mut self) -> DbResult<()> {
        if let Err(e) = self.stream.write_all(&self.out) {
            self.broken = true;
            return Err(self.io_failure(e));
        }
        Ok(())
    }

    /// Writes the hot path's output buffer.
    #[inline]
    fn send_hot(&mut self) -> DbResult<()> {
        if let Err(e) = self.stream.write_all(&self.hot) {
            self.broken = true;
            return Err(self.io_failure(e));
        }
        Ok(())
    }

    #[inline]
    fn frame(&mut self) -> DbResult<(u8, Range<usize>)> {
        match self.rd.next(&mut self.stream) {
            Ok(f) => {
                if f.0 == b'Z' && f.1.start < f.1.end {
                    self.txn = self.rd.buf[f.1.start];
                }
                Ok(f)
            }
            Err(e) => {
                self.broken = true;
                Err(self.io_failure(e))
            }
        }
    }

    /// An I/O error: past the startup, a timeout is the statement timeout
    /// (see [`crate::engine::Timeouts`]), which fails the test.
    #[cold]
    fn io_failure(&self, e: io::Error) -> DbError {
        let timeout = matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        );
        if timeout && self.ready {
            DbError::fatal(crate::engine::statement_timeout_message(
                self.rd.mid.statement_timeout(),
            ))
        } else {
            io_error(e)
        }
    }

    /// A protocol violation: the connection is out of step from here on.
    #[cold]
    fn protocol(&mut self, what: impl std::fmt::Display) -> DbError {
        self.broken = true;
        DbError::fatal(format!("PostgreSQL protocol error: {what}")).means(Meaning::Protocol)
    }

    #[cold]
    fn unexpected(&mut self, tag: u8, during: &str) -> DbError {
        self.protocol(format!(
            "unexpected message {:?} during {during}",
            tag as char
        ))
    }

    /// Parses a message body with `postgres-protocol` (cold paths).
    fn parse(&mut self, tag: u8, body: Range<usize>) -> DbResult<Message> {
        match parse_message(tag, &self.rd.buf[body]) {
            Ok(m) => Ok(m),
            Err(e) => Err(self.protocol(e)),
        }
    }

    /// An ErrorResponse. Keeps the first error of an exchange in `first`;
    /// returns Err at once when the server ends the session (FATAL, PANIC),
    /// as no ReadyForQuery follows then.
    #[cold]
    #[inline(never)]
    fn on_error(&mut self, body: Range<usize>, first: &mut Option<DbError>) -> DbResult<()> {
        let (e, ends_session) = match error_response(&self.rd.buf[body]) {
            Ok(r) => r,
            Err(e) => {
                // The session is out of step from here on; but where an
                // error was read already, that one is the answer (H2
                // 2.5.252 follows a refused Parse with a second
                // ErrorResponse, for the Describe, that lacks its closing
                // zero byte).
                let broken = self.protocol(e);
                return Err(first.take().unwrap_or(broken));
            }
        };
        if ends_session {
            self.broken = true;
            return Err(e);
        }
        if first.is_none() {
            *first = Some(e);
        }
        Ok(())
    }

    /// COPY FROM STDIN: refuse it, so the server fails the statement and
    /// answers ReadyForQuery.
    #[cold]
    fn refuse_copy_in(&mut self, extended: bool) -> DbResult<()> {
        self.out.clear();
        frontend::copy_fail("rqps does not send COPY data", &mut self.out).map_err(encode_error)?;
        if extended {
            // The Sync sent with the Execute was ignored in copy-in mode.
            frontend::sync(&mut self.out);
        }
        self.send()
    }

    /// The startup exchange; `tls_used` and `cb_data` (the server
    /// certificate's `tls-server-end-point` hash) choose the channel binding.
    fn startup(&mut self, cfg: &Config, tls_used: bool, cb_data: Option<Vec<u8>>) -> DbResult<()> {
        self.out.clear();
        frontend::startup_message(
            [
                ("user", cfg.user.as_str()),
                ("database", cfg.database.as_str()),
                ("application_name", cfg.application_name.as_str()),
                ("client_encoding", "UTF8"),
            ],
            &mut self.out,
        )
        .map_err(encode_error)?;
        self.send()?;
        let password = || {
            cfg.password.as_deref().ok_or_else(|| {
                DbError::fatal(format!(
                    "the server asks user '{}' for a password and none was given: use --password-file FILE, \
                     $PGPASSWORD or ~/.pgpass ($PGPASSFILE) rather than the URL, which shows in ps",
                    cfg.user
                ))
            })
        };
        let mut scram: Option<ScramSha256> = None;
        let mut bound = false;
        let auth_failed = |e: io::Error| DbError::fatal(format!("SCRAM authentication: {e}"));
        loop {
            let (tag, body) = self.frame()?;
            match tag {
                b'R' => {
                    self.out.clear();
                    match self.parse(tag, body)? {
                        Message::AuthenticationOk => {
                            if cfg.channel_binding == ChannelBindingMode::Require && !bound {
                                self.broken = true;
                                return Err(channel_binding_required(tls_used, false));
                            }
                        }
                        Message::AuthenticationCleartextPassword => {
                            self.auth = "password";
                            frontend::password_message(password()?.as_bytes(), &mut self.out)
                                .map_err(encode_error)?;
                        }
                        Message::AuthenticationMd5Password(b) => {
                            self.auth = "md5";
                            let h = md5_hash(cfg.user.as_bytes(), password()?.as_bytes(), b.salt());
                            frontend::password_message(h.as_bytes(), &mut self.out)
                                .map_err(encode_error)?;
                        }
                        Message::AuthenticationSasl(b) => {
                            let mut mechs = b.mechanisms();
                            let mut offered = Vec::new();
                            while let Some(m) = mechs.next().map_err(|e| self.protocol(e))? {
                                offered.push(m.to_string());
                            }
                            let plus = offered.iter().any(|m| m == SCRAM_SHA_256_PLUS);
                            let (mech, binding) = match (&cb_data, cfg.channel_binding) {
                                (
                                    Some(h),
                                    ChannelBindingMode::Prefer | ChannelBindingMode::Require,
                                ) if plus => {
                                    bound = true;
                                    (
                                        SCRAM_SHA_256_PLUS,
                                        ChannelBinding::tls_server_end_point(h.clone()),
                                    )
                                }
                                (_, ChannelBindingMode::Require) => {
                                    return Err(channel_binding_required(tls_used, plus));
                                }
                                // Over TLS without the server offering PLUS: say we could
                                // have bound ('y'), so a server that did offer it and was
                                // stripped of it by a man in the middle refuses us. Not
                                // when we could not hash the certificate: the server
                                // offers PLUS then, and would refuse the 'y'.
                                (None, _) if tls_used && !plus => {
                                    (SCRAM_SHA_256, ChannelBinding::unrequested())
                                }
                                (Some(_), ChannelBindingMode::Prefer) => {
                                    (SCRAM_SHA_256, ChannelBinding::unrequested())
                                }
                                _ => (SCRAM_SHA_256, ChannelBinding::unsupported()),
                            };
                            if !offered.iter().any(|m| m == mech) {
                                return Err(unsupported(format!(
                                    "the server offers SASL mechanisms {offered:?}; rqps supports \
                                     {SCRAM_SHA_256} and {SCRAM_SHA_256_PLUS} only"
                                )));
                            }
                            self.auth = mech;
                            let s = ScramSha256::new(password()?.as_bytes(), binding);
                            frontend::sasl_initial_response(mech, s.message(), &mut self.out)
                                .map_err(encode_error)?;
                            scram = Some(s);
                        }
                        Message::AuthenticationSaslContinue(b) => {
                            let Some(s) = scram.as_mut() else {
                                return Err(self.protocol("SASL continue without SASL start"));
                            };
                            s.update(b.data()).map_err(auth_failed)?;
                            frontend::sasl_response(s.message(), &mut self.out)
                                .map_err(encode_error)?;
                        }
                        Message::AuthenticationSaslFinal(b) => {
                            let Some(s) = scram.as_mut() else {
                                return Err(self.protocol("SASL final without SASL start"));
                            };
                            // Checks the server's signature.
                            s.finish(b.data()).map_err(auth_failed)?;
                        }
                        _ => {
                            return Err(unsupported(
                                "the server asks for an authentication method rqps does not \
                                 support (it supports trust, password, md5 and scram-sha-256)",
                            ));
                        }
                    }
                    if !self.out.is_empty() {
                        self.send()?;
                    }
                }
                b'K' => {
                    if let Message::BackendKeyData(k) = self.parse(tag, body)? {
                        self.backend_key = Some((k.process_id(), k.secret_key()));
                    }
                }
                b'S' => {
                    if let Message::ParameterStatus(p) = self.parse(tag, body)?
                        && p.name().ok() == Some("server_version")
                    {
                        self.server_version = p.value().ok().map(str::to_string);
                    }
                }
                b'N' => {}
                b'E' => {
                    let mut first = None;
                    let r = self.on_error(body, &mut first);
                    // Errors during startup are FATAL; just in case one is not.
                    self.broken = true;
                    let e = r
                        .err()
                        .or(first)
                        .unwrap_or_else(|| DbError::fatal("startup failed"));
                    return Err(if tls_used { e } else { tls_hint(e, &cfg.host) });
                }
                b'Z' => return Ok(()),
                _ => return Err(self.unexpected(tag, "startup")),
            }
        }
    }

    /// Whether the session is inside a transaction block (or a failed one),
    /// as the server said in its last ReadyForQuery.
    pub fn in_transaction(&self) -> bool {
        self.txn != b'I'
    }

    /// Prepares `sql` (with `$n` placeholders) as a named statement and
    /// learns its parameter types and whether it returns rows.
    pub fn prepare(&mut self, sql: &str) -> DbResult<Statement> {
        self.check_usable()?;
        let name = format!("s{}", self.next_stmt);
        self.next_stmt += 1;
        self.out.clear();
        frontend::parse(&name, sql, std::iter::empty(), &mut self.out).map_err(encode_error)?;
        frontend::describe(b'S', &name, &mut self.out).map_err(encode_error)?;
        frontend::sync(&mut self.out);
        self.send()?;
        let mut params = Vec::new();
        let mut rows = false;
        let mut described = Vec::new();
        let mut err = None;
        loop {
            let (tag, body) = self.frame()?;
            match tag {
                b'1' | b'n' | b'N' | b'S' | b'A' => {}
                b't' => {
                    if let Message::ParameterDescription(d) = self.parse(tag, body)? {
                        params = d.parameters().collect().map_err(|e| self.protocol(e))?;
                    }
                }
                b'T' => {
                    rows = true;
                    described = self.rd.buf[body].to_vec();
                }
                b'E' => self.on_error(body, &mut err)?,
                b'Z' => break,
                _ => return Err(self.unexpected(tag, "prepare")),
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(Statement {
                bind_head: bind_head_typed(&name, &params),
                name,
                params,
                rows,
                described,
            }),
        }
    }

    /// Executes a prepared statement with `params` bound in binary in the
    /// types the server chose; reads all it returns, counting rows.
    pub fn execute(&mut self, stmt: &Statement, params: &[Param<'_>]) -> DbResult<Outcome> {
        self.execute_with(stmt, params, |_| Ok(()))
    }

    /// Executes a prepared statement and hands each DataRow body (values
    /// in text format) to `on_row`.
    pub fn execute_rows<F>(
        &mut self,
        stmt: &Statement,
        params: &[Param<'_>],
        on_row: F,
    ) -> DbResult<Outcome>
    where
        F: FnMut(&[u8]) -> io::Result<()>,
    {
        self.execute_with(stmt, params, on_row)
    }

    #[inline]
    fn execute_with<F>(
        &mut self,
        stmt: &Statement,
        params: &[Param<'_>],
        mut on_row: F,
    ) -> DbResult<Outcome>
    where
        F: FnMut(&[u8]) -> io::Result<()>,
    {
        self.check_usable()?;
        write_bind(stmt, params, &mut self.hot)?;
        self.hot.extend_from_slice(&self.exec_sync);
        self.send_hot()?;

        let mut count = 0u64;
        let mut affected = 0u64;
        let mut err = None;
        loop {
            let (tag, body) = self.frame()?;
            match tag {
                b'D' => {
                    count += 1;
                    if let Err(e) = on_row(&self.rd.buf[body]) {
                        return Err(self.protocol(e));
                    }
                }
                b'2' => {}
                b'C' if !stmt.rows => affected = tag_count(&self.rd.buf[body]),
                b'C' => {}
                b'Z' => break,
                b'I' | b'N' | b'S' | b'A' | b'H' | b'd' | b'c' => {}
                b'E' => self.on_error(body, &mut err)?,
                b'G' => self.refuse_copy_in(true)?,
                _ => return Err(self.unexpected(tag, "execute")),
            }
        }
        match err {
            Some(e) => Err(e),
            None if stmt.rows => Ok(Outcome::Rows(count)),
            None => Ok(Outcome::Affected(affected)),
        }
    }

    /// Runs `sql` through the simple protocol; `on` sees each RowDescription
    /// and DataRow body. Returns the last statement's outcome.
    #[inline]
    fn simple<F>(&mut self, sql: &str, mut on: F) -> DbResult<Outcome>
    where
        F: FnMut(u8, &[u8]) -> io::Result<()>,
    {
        self.check_usable()?;
        self.out.clear();
        frontend::query(sql, &mut self.out).map_err(encode_error)?;
        self.send()?;
        let mut last = Outcome::Affected(0);
        let mut in_set = false;
        let mut count = 0u64;
        let mut err = None;
        loop {
            let (tag, body) = self.frame()?;
            match tag {
                b'D' => {
                    count += 1;
                    if let Err(e) = on(tag, &self.rd.buf[body]) {
                        return Err(self.protocol(e));
                    }
                }
                b'T' => {
                    in_set = true;
                    count = 0;
                    if let Err(e) = on(tag, &self.rd.buf[body]) {
                        return Err(self.protocol(e));
                    }
                }
                b'C' => {
                    last = if in_set {
                        Outcome::Rows(count)
                    } else {
                        Outcome::Affected(tag_count(&self.rd.buf[body]))
                    };
                    in_set = false;
                }
                b'I' => {
                    last = Outcome::Affected(0);
                    in_set = false;
                }
                b'Z' => break,
                b'N' | b'S' | b'A' | b'H' | b'd' | b'c' => {}
                b'E' => self.on_error(body, &mut err)?,
                b'G' => self.refuse_copy_in(false)?,
                _ => return Err(self.unexpected(tag, "query")),
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(last),
        }
    }

    /// Runs `sql` (one or more statements) as text; the outcome is the last
    /// statement's: `Rows` for a result set, else `Affected`.
    pub fn query(&mut self, sql: &str) -> DbResult<Outcome> {
        self.simple(sql, |_, _| Ok(()))
    }

    /// The first column of the first row as text; `None` without rows or
    /// for NULL.
    pub fn query_scalar(&mut self, sql: &str) -> DbResult<Option<String>> {
        let mut first: Option<Option<String>> = None;
        self.simple(sql, |tag, body| {
            if tag == b'D' && first.is_none() {
                first = Some(first_column(body)?);
            }
            Ok(())
        })?;
        Ok(first.flatten())
    }

    /// Runs `sql` (one or more statements) through the simple protocol and
    /// hands each RowDescription (`T`) and DataRow (`D`) body to `on`, so
    /// that the caller tells the result sets apart.
    pub fn query_sets<F>(&mut self, sql: &str, on: F) -> DbResult<Outcome>
    where
        F: FnMut(u8, &[u8]) -> io::Result<()>,
    {
        self.simple(sql, on)
    }

    /// Runs `sql` through the simple protocol and hands each DataRow body
    /// to `on_row`.
    pub fn query_with<F>(&mut self, sql: &str, mut on_row: F) -> DbResult<Outcome>
    where
        F: FnMut(&[u8]) -> io::Result<()>,
    {
        self.simple(sql, |tag, body| {
            if tag == b'D' {
                on_row(body)?;
            }
            Ok(())
        })
    }

    /// Every row of `sql` as text, with the column names.
    pub fn query_rows(&mut self, sql: &str) -> DbResult<Rows> {
        let mut names = Vec::new();
        let mut rows = Vec::new();
        self.simple(sql, |tag, body| {
            match parse_message(tag, body)? {
                Message::RowDescription(d) => {
                    names = d.fields().map(|f| Ok(f.name().to_string())).collect()?;
                }
                Message::DataRow(r) => {
                    let buf = r.buffer();
                    let row = r
                        .ranges()
                        .map(|v| Ok(v.map(|v| String::from_utf8_lossy(&buf[v]).into_owned())))
                        .collect()?;
                    rows.push(row);
                }
                _ => {}
            }
            Ok(())
        })?;
        Ok((names, rows))
    }

    /// Runs `sql` (with `$n` placeholders) once through the extended
    /// protocol with the unnamed statement, as libpq's `PQexecParams` does
    /// (Parse, Bind, Describe, Execute, Sync in one write): the server
    /// parses and plans it on every call, and infers the parameters'
    /// types, which go as text. `on_row` sees each DataRow body.
    pub fn execute_unnamed<F>(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        mut on_row: F,
    ) -> DbResult<Outcome>
    where
        F: FnMut(u8, &[u8]) -> io::Result<()>,
    {
        self.check_usable()?;
        self.out.clear();
        write_unnamed(sql, params, &mut self.out)?;
        frontend::sync(&mut self.out);
        self.send()?;
        let (mut rows, mut count, mut affected) = (false, 0u64, 0u64);
        let mut err = None;
        loop {
            let (tag, body) = self.frame()?;
            match tag {
                b'D' => {
                    count += 1;
                    if let Err(e) = on_row(tag, &self.rd.buf[body]) {
                        return Err(self.protocol(e));
                    }
                }
                b'T' => {
                    rows = true;
                    if let Err(e) = on_row(tag, &self.rd.buf[body]) {
                        return Err(self.protocol(e));
                    }
                }
                b'C' => affected = tag_count(&self.rd.buf[body]),
                b'1' | b'2' | b'n' | b'I' | b'N' | b'S' | b'A' => {}
                b'Z' => break,
                b'E' => self.on_error(body, &mut err)?,
                b'G' => self.refuse_copy_in(true)?,
                _ => return Err(self.unexpected(tag, "execute")),
            }
        }
        match err {
            Some(e) => Err(e),
            None if rows => Ok(Outcome::Rows(count)),
            None => Ok(Outcome::Affected(affected)),
        }
    }
    /// Enters pipeline mode: [`Self::pipeline_prepared`] and
    /// [`Self::pipeline_unnamed`] queue statements, [`Self::pipeline_sync`]
    /// sync points, and [`Self::pipeline_end`] sends them all and reads the
    /// answers. Other calls still run at once, outside the pipeline
    /// (nothing queued has gone out yet).
    pub fn pipeline_start(&mut self) -> DbResult<()> {
        self.check_usable()?;
        if self.pipe.on {
            return Err(DbError::fatal("already in pipeline mode"));
        }
        self.pipe.on = true;
        self.pipe.buf.clear();
        self.pipe.items.clear();
        Ok(())
    }

    fn pipe_on(&self) -> DbResult<()> {
        if !self.pipe.on {
            return Err(DbError::fatal("not in pipeline mode"));
        }
        Ok(())
    }

    /// Queues a prepared statement with `params`: Bind, Describe (of the
    /// portal, as libpq's `PQsendQueryPrepared`), Execute.
    pub fn pipeline_prepared(&mut self, stmt: &Statement, params: &[Param<'_>]) -> DbResult<()> {
        self.pipe_on()?;
        write_bind(stmt, params, &mut self.hot)?;
        self.pipe.buf.extend_from_slice(&self.hot);
        frontend::describe(b'P', "", &mut self.pipe.buf).map_err(encode_error)?;
        frontend::execute("", 0, &mut self.pipe.buf).map_err(encode_error)?;
        self.pipe.items.push((b'Q', self.pipe.buf.len()));
        Ok(())
    }

    /// Queues `sql` (with `$n` placeholders) as the unnamed statement, its
    /// parameters as text, as libpq's `PQsendQueryParams`.
    pub fn pipeline_unnamed(&mut self, sql: &str, params: &[Param<'_>]) -> DbResult<()> {
        self.pipe_on()?;
        write_unnamed(sql, params, &mut self.pipe.buf)?;
        self.pipe.items.push((b'Q', self.pipe.buf.len()));
        Ok(())
    }

    /// Queues a Sync: the statements before it end their implicit
    /// transaction there, and an error skips statements only up to it.
    pub fn pipeline_sync(&mut self) -> DbResult<()> {
        self.pipe_on()?;
        frontend::sync(&mut self.pipe.buf);
        self.pipe.items.push((b'S', self.pipe.buf.len()));
        Ok(())
    }

    /// Leaves pipeline mode, dropping what is queued (nothing of it was sent).
    pub fn pipeline_discard(&mut self) {
        self.pipe.on = false;
        self.pipe.buf.clear();
        self.pipe.items.clear();
    }

    /// Ends the pipeline: queues a last Sync, sends what is queued (in one
    /// write up to [`PIPE_PART`] bytes; a larger pipeline in parts, each
    /// ending with a Flush, its answers read before the next goes out), and
    /// reads every answer up to the last ReadyForQuery, handing each
    /// statement's outcome to `each`; the first error, once all is read.
    pub fn pipeline_end(&mut self, each: &mut dyn FnMut(Outcome)) -> DbResult<()> {
        self.pipeline_sync()?;
        self.pipe.on = false;
        let items = std::mem::take(&mut self.pipe.items);
        let buf = std::mem::take(&mut self.pipe.buf);
        let r = self.pipe_exchange(&items, &buf, each);
        // Keep the buffers' room for the next pipeline.
        (self.pipe.items, self.pipe.buf) = (items, buf);
        self.pipe.items.clear();
        self.pipe.buf.clear();
        r
    }

    fn pipe_exchange(
        &mut self,
        items: &[(u8, usize)],
        buf: &[u8],
        each: &mut dyn FnMut(Outcome),
    ) -> DbResult<()> {
        self.check_usable()?;
        let (mut sent, mut done, mut from) = (0, 0, 0);
        // After an error the server skips the statements up to the next Sync.
        let mut skipping = false;
        let (mut rows, mut count) = (false, 0u64);
        let mut err = None;
        while done < items.len() {
            if done == sent {
                // The next part: whole statements, at least one.
                let mut to = sent + 1;
                while to < items.len() && items[to].1 - from <= PIPE_PART {
                    to += 1;
                }
                let end = items[to - 1].1;
                let mut w = self.stream.write_all(&buf[from..end]);
                if w.is_ok() && to < items.len() {
                    w = self.stream.write_all(&FLUSH);
                }
                if let Err(e) = w {
                    self.broken = true;
                    return Err(self.io_failure(e));
                }
                (sent, from) = (to, end);
            }
            if skipping && items[done].0 == b'Q' {
                done += 1;
                continue;
            }
            let (tag, body) = self.frame()?;
            match tag {
                b'T' => (rows, count) = (true, 0),
                b'n' => rows = false,
                b'D' => count += 1,
                b'C' | b'I' => {
                    each(if rows {
                        Outcome::Rows(count)
                    } else if tag == b'I' {
                        Outcome::Affected(0)
                    } else {
                        Outcome::Affected(tag_count(&self.rd.buf[body]))
                    });
                    (rows, count) = (false, 0);
                    done += 1;
                }
                b'1' | b'2' | b'3' | b'N' | b'S' | b'A' => {}
                b'E' => {
                    self.on_error(body, &mut err)?;
                    (rows, count, skipping) = (false, 0, true);
                    done += 1;
                }
                b'Z' => {
                    // Statements an error skipped were counted as done.
                    while done < sent && items[done].0 == b'Q' {
                        done += 1;
                    }
                    skipping = false;
                    done += 1;
                }
                // The server would ignore the queued Syncs in copy-in mode.
                b'G' => return Err(self.protocol("COPY FROM STDIN cannot run in a pipeline")),
                _ => return Err(self.unexpected(tag, "a pipeline")),
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Appends Bind for `stmt` with `params` to `out` (emptied first), as
/// `frontend::bind` writes it (see the tests), from the statement's
/// template: the crate's generic encoder costs more than the round trip's
/// own user time on the hot path.
#[inline]
fn write_bind(stmt: &Statement, params: &[Param<'_>], out: &mut Vec<u8>) -> DbResult<()> {
    if params.len() != stmt.params.len() {
        return Err(DbError::fatal(format!(
            "the statement takes {} parameters, {} given",
            stmt.params.len(),
            params.len()
        )));
    }
    out.clear();
    out.extend_from_slice(&stmt.bind_head);
    for (i, (p, &ty)) in params.iter().zip(&stmt.params).enumerate() {
        encode_param(i, p, ty, out)?;
    }
    // One result format code: text.
    out.extend_from_slice(&[0, 1, 0, 0]);
    let len = out.len() - 1;
    if len > i32::MAX as usize {
        return Err(DbError::fatal(
            "the parameters exceed the protocol's 2 GiB message",
        ));
    }
    out[1..5].copy_from_slice(&(len as u32).to_be_bytes());
    Ok(())
}

/// Appends Parse, Bind, Describe and Execute of `sql` as the unnamed
/// statement, its parameters as text (the server infers their types).
fn write_unnamed(sql: &str, params: &[Param<'_>], out: &mut BytesMut) -> DbResult<()> {
    frontend::parse("", sql, std::iter::empty(), out).map_err(encode_error)?;
    frontend::bind(
        "",
        "",
        std::iter::empty::<i16>(),
        params.iter(),
        |p, buf| {
            match *p {
                Param::Int(v) => {
                    let mut digits = [0u8; 20];
                    buf.put_slice(decimal(v, &mut digits));
                }
                Param::Text(t) => buf.put_slice(t.as_bytes()),
                Param::Null => return Ok(postgres_protocol::IsNull::Yes),
            }
            Ok(postgres_protocol::IsNull::No)
        },
        [0],
        out,
    )
    .map_err(|_| DbError::fatal("cannot encode the statement's parameters"))?;
    frontend::describe(b'P', "", out).map_err(encode_error)?;
    frontend::execute("", 0, out).map_err(encode_error)?;
    Ok(())
}

/// Parses one backend message given its type and body.
fn parse_message(tag: u8, body: &[u8]) -> io::Result<Message> {
    let mut b = BytesMut::with_capacity(body.len() + 5);
    b.put_u8(tag);
    b.put_u32(body.len() as u32 + 4);
    b.extend_from_slice(body);
    Message::parse(&mut b)?
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "truncated message"))
}

/// Each value of a DataRow body in order (`None` for NULL).
pub fn data_row_values(body: &[u8], mut on: impl FnMut(Option<&[u8]>)) -> io::Result<()> {
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "truncated DataRow");
    let n = i16::from_be_bytes(body.get(..2).ok_or_else(bad)?.try_into().unwrap());
    let mut at = 2usize;
    for _ in 0..n.max(0) {
        let len = i32::from_be_bytes(body.get(at..at + 4).ok_or_else(bad)?.try_into().unwrap());
        at += 4;
        if len < 0 {
            on(None);
        } else {
            let end = at + len as usize;
            on(Some(body.get(at..end).ok_or_else(bad)?));
            at = end;
        }
    }
    Ok(())
}

/// The number of values in a DataRow body.
/// Hands each column name of a RowDescription body to `on`, in order, and
/// returns how many columns it describes.
pub fn column_names(body: &[u8], mut on: impl FnMut(&[u8])) -> io::Result<usize> {
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "truncated RowDescription");
    let n = i16::from_be_bytes(body.get(..2).ok_or_else(bad)?.try_into().unwrap()).max(0);
    let mut at = 2usize;
    for _ in 0..n {
        let rest = body.get(at..).ok_or_else(bad)?;
        let nul = rest.iter().position(|&b| b == 0).ok_or_else(bad)?;
        on(&rest[..nul]);
        // The name's NUL, then table, column, type, size, modifier, format.
        at += nul + 1 + 18;
    }
    Ok(n as usize)
}

pub fn data_row_width(body: &[u8]) -> usize {
    body.get(..2)
        .map(|b| i16::from_be_bytes([b[0], b[1]]).max(0) as usize)
        .unwrap_or(0)
}

/// The first value of a DataRow body, as text.
fn first_column(body: &[u8]) -> io::Result<Option<String>> {
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "truncated DataRow");
    let n = i16::from_be_bytes(body.get(..2).ok_or_else(bad)?.try_into().unwrap());
    if n < 1 {
        return Ok(None);
    }
    let len = i32::from_be_bytes(body.get(2..6).ok_or_else(bad)?.try_into().unwrap());
    if len < 0 {
        return Ok(None);
    }
    let v = body.get(6..6 + len as usize).ok_or_else(bad)?;
    Ok(Some(String::from_utf8_lossy(v).into_owned()))
}

/// The row count at the end of a CommandComplete tag ("UPDATE 3",
/// "INSERT 0 1", "SELECT 10"); 0 for tags without one ("BEGIN").
pub fn tag_count(body: &[u8]) -> u64 {
    let tag = body.strip_suffix(&[0]).unwrap_or(body);
    let last = match tag.iter().rposition(|&b| b == b' ') {
        Some(i) => &tag[i + 1..],
        None => return 0,
    };
    if last.is_empty() || last.len() > 19 || !last.iter().all(u8::is_ascii_digit) {
        return 0;
    }
    last.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'))
}

/// An ErrorResponse body as a DbError, and whether its severity ends the
/// session (FATAL, PANIC).
pub fn error_response(body: &[u8]) -> io::Result<(DbError, bool)> {
    let Message::ErrorResponse(e) = parse_message(b'E', body)? else {
        unreachable!("parse_message(b'E') gives an ErrorResponse");
    };
    let (mut code, mut message, mut detail) = (None, String::new(), None);
    let (mut severity, mut localized) = (None, None);
    let mut fields = e.fields();
    while let Some(f) = fields.next()? {
        let v = String::from_utf8_lossy(f.value_bytes()).into_owned();
        match f.type_() {
            b'C' => code = Some(v),
            b'M' => message = v,
            b'D' => detail = Some(v),
            b'V' => severity = Some(v),
            b'S' => localized = Some(v),
            _ => {}
        }
    }
    // 'V' (9.6+) is never translated; 'S' may be.
    let severity = severity.or(localized).unwrap_or_default();
    let ends = severity == "FATAL" || severity == "PANIC";
    let (class, meaning) = code
        .as_deref()
        .map_or((ErrorClass::Fatal, Meaning::Other), super::sqlstate::of);
    if let Some(d) = detail {
        message = format!("{message}: {d}");
    }
    Ok((
        DbError {
            state: code.as_deref().and_then(|c| SqlState::parse(c.as_bytes())),
            code,
            ..DbError::new(class, meaning, message)
        },
        ends,
    ))
}

/// `channel_binding=require` could not be met.
fn channel_binding_required(tls_used: bool, offered: bool) -> DbError {
    let why = if !tls_used {
        "the connection does not use TLS"
    } else if offered {
        "the server's certificate has no single-hash signature algorithm to bind to"
    } else {
        "the server did not authenticate with SCRAM-SHA-256-PLUS"
    };
    DbError::fatal(format!(
        "channel_binding=require, but {why}: use sslmode=require (or stronger) with a \
         scram-sha-256 account, or channel_binding=prefer"
    ))
}

/// A plaintext startup refused because pg_hba.conf wants TLS (a `hostssl`
/// line, or `hostnossl ... reject`): say so, with the remedy.
fn tls_hint(mut e: DbError, host: &Host) -> DbError {
    if plaintext_refused(&e) && matches!(host, Host::Tcp(_)) {
        e.message = format!(
            "the server requires TLS for this connection and rqps connected without it \
             (sslmode=disable): use sslmode=require, or verify-full with sslrootcert=CA_FILE \
             ({})",
            e.message
        );
    }
    e
}

/// The server's rules refused a connection for being without TLS (28000,
/// "no encryption" in PostgreSQL 12 and later, "SSL off" before).
fn plaintext_refused(e: &DbError) -> bool {
    e.code.as_deref() == Some("28000")
        && (e.message.contains("no encryption") || e.message.contains("SSL off"))
}

/// A lost connection, timeout, or I/O failure: reconnect.
#[cold]
fn io_error(e: io::Error) -> DbError {
    let message = match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            format!("no answer from the server in time ({e})")
        }
        _ => e.to_string(),
    };
    DbError::lost(message)
}

/// Something the client does not support (an authentication method).
#[cold]
fn unsupported(message: impl Into<String>) -> DbError {
    DbError::fatal(message).means(Meaning::Unsupported)
}

/// A message we could not encode (a NUL in a string, a length over the
/// protocol's limits): the statement's fault, not the connection's.
#[cold]
fn encode_error(e: io::Error) -> DbError {
    DbError::fatal(format!("cannot send the statement: {e}"))
}

fn type_name(ty: Oid) -> String {
    match ty {
        16 => "bool".into(),
        17 => "bytea".into(),
        NAME => "name".into(),
        INT8 => "int8".into(),
        INT2 => "int2".into(),
        INT4 => "int4".into(),
        TEXT => "text".into(),
        FLOAT4 => "float4".into(),
        FLOAT8 => "float8".into(),
        UNKNOWN => "unknown".into(),
        BPCHAR => "bpchar".into(),
        VARCHAR => "varchar".into(),
        1700 => "numeric".into(),
        t => format!("type oid {t}"),
    }
}

fn is_text(ty: Oid) -> bool {
    matches!(ty, TEXT | BPCHAR | VARCHAR | NAME | UNKNOWN)
}

/// The Bind message for statement `name` with `n` parameters up to and
/// including its value count, length left 0: type, length, portal "",
/// statement name, one format code (binary) when there are parameters,
/// value count.
fn bind_head(name: &str, n: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(name.len() + 14);
    b.push(b'B');
    b.extend_from_slice(&[0; 4]);
    b.push(0);
    b.extend_from_slice(name.as_bytes());
    b.push(0);
    if n == 0 {
        b.extend_from_slice(&[0, 0]);
    } else {
        b.extend_from_slice(&[0, 1, 0, 1]);
    }
    b.extend_from_slice(&(n as u16).to_be_bytes());
    b
}

/// [`bind_head`] for parameters of the types `params`: all binary, unless
/// one is `numeric`, which then goes in text format (one format code per
/// parameter).
fn bind_head_typed(name: &str, params: &[Oid]) -> Vec<u8> {
    if !params.contains(&NUMERIC) {
        return bind_head(name, params.len());
    }
    let mut b = Vec::with_capacity(name.len() + 12 + 2 * params.len());
    b.push(b'B');
    b.extend_from_slice(&[0; 4]);
    b.push(0);
    b.extend_from_slice(name.as_bytes());
    b.push(0);
    b.extend_from_slice(&(params.len() as u16).to_be_bytes());
    for &t in params {
        b.extend_from_slice(if t == NUMERIC { &[0, 0] } else { &[0, 1] });
    }
    b.extend_from_slice(&(params.len() as u16).to_be_bytes());
    b
}

/// Execute (unnamed portal, no row limit) + Sync.
fn exec_sync() -> Vec<u8> {
    let mut b = BytesMut::new();
    frontend::execute("", 0, &mut b).expect("no NUL in the portal name");
    frontend::sync(&mut b);
    b.to_vec()
}

/// Appends parameter `i` as a Bind value (length, bytes) in the binary
/// format of type `ty`; text types take their UTF-8 bytes.
#[inline]
fn encode_param(i: usize, p: &Param<'_>, ty: Oid, out: &mut Vec<u8>) -> DbResult<()> {
    #[cold]
    #[inline(never)]
    fn fail(i: usize, what: String) -> DbResult<()> {
        Err(DbError::fatal(format!("parameter ${}: {what}", i + 1)))
    }
    fn text(out: &mut Vec<u8>, s: &[u8]) {
        out.extend_from_slice(&(s.len() as u32).to_be_bytes());
        out.extend_from_slice(s);
    }
    match *p {
        // A length of -1: NULL, whatever the type.
        Param::Null => out.extend_from_slice(&(-1i32).to_be_bytes()),
        Param::Int(v) => match ty {
            INT4 => match i32::try_from(v) {
                Ok(v) => {
                    out.extend_from_slice(&[0, 0, 0, 4]);
                    out.extend_from_slice(&v.to_be_bytes());
                }
                Err(_) => return fail(i, format!("{v} is out of range for int4")),
            },
            INT8 => {
                out.extend_from_slice(&[0, 0, 0, 8]);
                out.extend_from_slice(&v.to_be_bytes());
            }
            INT2 => match i16::try_from(v) {
                Ok(v) => {
                    out.extend_from_slice(&[0, 0, 0, 2]);
                    out.extend_from_slice(&v.to_be_bytes());
                }
                Err(_) => return fail(i, format!("{v} is out of range for int2")),
            },
            FLOAT8 => {
                out.extend_from_slice(&[0, 0, 0, 8]);
                out.extend_from_slice(&(v as f64).to_be_bytes());
            }
            FLOAT4 => {
                out.extend_from_slice(&[0, 0, 0, 4]);
                out.extend_from_slice(&(v as f32).to_be_bytes());
            }
            t if is_text(t) || t == NUMERIC => {
                let mut digits = [0u8; 20];
                text(out, decimal(v, &mut digits));
            }
            t => {
                return fail(
                    i,
                    format!("cannot bind an integer to type {}", type_name(t)),
                );
            }
        },
        Param::Text(s) => match ty {
            t if is_text(t) => {
                if s.len() > i32::MAX as usize {
                    return fail(i, "longer than the protocol's 2 GiB".into());
                }
                text(out, s.as_bytes());
            }
            NUMERIC => {
                if s.trim().parse::<f64>().is_err() {
                    return fail(i, format!("'{s}' is not a number"));
                }
                text(out, s.trim().as_bytes());
            }
            INT4 | INT8 | INT2 => match s.trim().parse::<i64>() {
                Ok(v) => return encode_param(i, &Param::Int(v), ty, out),
                Err(e) => return fail(i, format!("'{s}' as {}: {e}", type_name(ty))),
            },
            // A number in text (a sysbench script's FLOAT or DOUBLE parameter).
            FLOAT8 | FLOAT4 => match s.trim().parse::<f64>() {
                Ok(v) if ty == FLOAT8 => {
                    out.extend_from_slice(&[0, 0, 0, 8]);
                    out.extend_from_slice(&v.to_be_bytes());
                }
                Ok(v) => {
                    out.extend_from_slice(&[0, 0, 0, 4]);
                    out.extend_from_slice(&(v as f32).to_be_bytes());
                }
                Err(e) => return fail(i, format!("'{s}' as {}: {e}", type_name(ty))),
            },
            t => return fail(i, format!("cannot bind text to type {}", type_name(t))),
        },
    }
    Ok(())
}

/// `v` in decimal, written at the end of `buf`.
fn decimal(v: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut n = v.unsigned_abs();
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// A scripted server: reads come from `chunks` one by one (cut to the
    /// reader's buffer), then EOF; writes are recorded.
    #[derive(Default)]
    struct Script {
        chunks: VecDeque<Vec<u8>>,
        written: Vec<u8>,
    }

    impl Read for Script {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let Some(mut c) = self.chunks.pop_front() else {
                return Ok(0);
            };
            let n = c.len().min(buf.len());
            buf[..n].copy_from_slice(&c[..n]);
            if n < c.len() {
                self.chunks.push_front(c.split_off(n));
            }
            Ok(n)
        }
    }

    impl Write for Script {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    fn cstr(s: &str) -> Vec<u8> {
        let mut v = s.as_bytes().to_vec();
        v.push(0);
        v
    }

    fn data_row(values: &[&str]) -> Vec<u8> {
        let mut b = (values.len() as i16).to_be_bytes().to_vec();
        for v in values {
            b.extend_from_slice(&(v.len() as i32).to_be_bytes());
            b.extend_from_slice(v.as_bytes());
        }
        msg(b'D', &b)
    }

    fn error(fields: &[(u8, &str)]) -> Vec<u8> {
        let mut b = Vec::new();
        for (t, v) in fields {
            b.push(*t);
            b.extend_from_slice(&cstr(v));
        }
        b.push(0);
        msg(b'E', &b)
    }

    fn ready() -> Vec<u8> {
        msg(b'Z', b"I")
    }

    fn conn(chunks: Vec<Vec<u8>>) -> PgConn<Script> {
        PgConn::from_stream(Script {
            chunks: chunks.into(),
            written: Vec::new(),
        })
    }

    /// All of `stream` cut into pieces of `size` bytes.
    fn cut(stream: &[u8], size: usize) -> Vec<Vec<u8>> {
        stream.chunks(size).map(<[u8]>::to_vec).collect()
    }

    fn stmt(params: &[Oid], rows: bool) -> Statement {
        Statement {
            name: "s0".into(),
            params: params.to_vec(),
            rows,
            bind_head: bind_head("s0", params.len()),
            described: Vec::new(),
        }
    }

    #[test]
    fn command_complete_tags_give_affected_rows() {
        for (tag, n) in [
            ("UPDATE 3", 3),
            ("INSERT 0 1", 1),
            ("INSERT 0 250", 250),
            ("DELETE 0", 0),
            ("SELECT 10", 10),
            ("BEGIN", 0),
            ("COMMIT", 0),
            ("CREATE TABLE", 0),
            ("", 0),
            ("UPDATE 99999999999999999999999", 0),
        ] {
            assert_eq!(tag_count(&cstr(tag)), n, "{tag}");
            assert_eq!(tag_count(tag.as_bytes()), n, "{tag} without NUL");
        }
    }

    #[test]
    fn bind_execute_sync_go_out_in_one_write_with_binary_params() {
        let mut answer = msg(b'2', b"");
        answer.extend(msg(b'C', &cstr("UPDATE 1")));
        answer.extend(ready());
        let mut c = conn(vec![answer]);
        let s = stmt(&[INT4, BPCHAR], false);
        let o = c.execute(&s, &[Param::Int(7), Param::Text("ab")]).unwrap();
        assert_eq!(o, Outcome::Affected(1));
        let mut bind = Vec::new();
        bind.extend(cstr("")); // portal
        bind.extend(cstr("s0"));
        bind.extend([0, 1, 0, 1]); // one format code: binary
        bind.extend([0, 2]); // two values
        bind.extend([0, 0, 0, 4, 0, 0, 0, 7]);
        bind.extend([0, 0, 0, 2, b'a', b'b']);
        bind.extend([0, 1, 0, 0]); // one result format: text
        let mut want = msg(b'B', &bind);
        want.extend(msg(b'E', &[0, 0, 0, 0, 0])); // portal "", all rows
        want.extend(msg(b'S', b""));
        assert_eq!(c.stream.written, want);
    }

    #[test]
    fn rows_are_counted_whatever_the_read_sizes() {
        let mut answer = msg(b'2', b"");
        for i in 0..100 {
            answer.extend(data_row(&[&format!("row {i}"), "x"]));
        }
        answer.extend(msg(b'C', &cstr("SELECT 100")));
        answer.extend(msg(b'N', &[0])); // a notice: ignored
        answer.extend(ready());
        for size in [1, 2, 3, 5, 7, 64, 1000, answer.len()] {
            let mut c = conn(cut(&answer, size));
            let o = c.execute(&stmt(&[INT8], true), &[Param::Int(1)]).unwrap();
            assert_eq!(o, Outcome::Rows(100), "reads of {size} bytes");
            // Everything was consumed, nothing more read.
            assert!(c.stream.chunks.is_empty(), "reads of {size} bytes");
            assert_eq!(c.rd.pos, c.rd.end);
        }
    }

    #[test]
    fn two_answers_in_one_read_are_kept_apart() {
        let mut answer = msg(b'2', b"");
        answer.extend(msg(b'C', &cstr("DELETE 2")));
        answer.extend(ready());
        answer.extend(msg(b'2', b""));
        answer.extend(data_row(&["1"]));
        answer.extend(msg(b'C', &cstr("SELECT 1")));
        answer.extend(ready());
        let mut c = conn(vec![answer]);
        assert_eq!(
            c.execute(&stmt(&[], false), &[]).unwrap(),
            Outcome::Affected(2)
        );
        assert_eq!(c.execute(&stmt(&[], true), &[]).unwrap(), Outcome::Rows(1));
    }

    #[test]
    fn messages_larger_than_the_buffer_grow_it() {
        let big = "x".repeat(3 * READ_BUF);
        let mut answer = msg(b'T', &[0, 1]);
        answer.extend(data_row(&[&big]));
        answer.extend(data_row(&["small"]));
        answer.extend(msg(b'C', &cstr("SELECT 2")));
        answer.extend(ready());
        let mut c = conn(cut(&answer, 10_000));
        assert_eq!(
            c.query_scalar("SELECT big").unwrap().as_deref(),
            Some(&*big)
        );
        assert!(c.rd.buf.len() >= 3 * READ_BUF);
    }

    #[test]
    fn error_responses_map_to_classes_and_codes() {
        for (code, class) in [
            ("40001", ErrorClass::Retry),
            ("40P01", ErrorClass::Retry),
            ("55P03", ErrorClass::Retry),
            ("08006", ErrorClass::Reconnect),
            ("57P03", ErrorClass::Reconnect),
            ("23505", ErrorClass::Fatal),
            ("42P01", ErrorClass::Fatal),
        ] {
            let mut answer = error(&[
                (b'S', "ERROR"),
                (b'V', "ERROR"),
                (b'C', code),
                (b'M', "it failed"),
                (b'D', "the details"),
            ]);
            answer.extend(ready());
            answer.extend(msg(b'C', &cstr("BEGIN")));
            answer.extend(ready());
            let mut c = conn(vec![answer]);
            let e = c.query("SELECT 1").unwrap_err();
            assert_eq!(e.class, class, "{code}");
            assert_eq!(e.code.as_deref(), Some(code));
            assert_eq!(e.message, "it failed: the details");
            // The connection stays in step: the next answer is read whole.
            assert!(c.is_usable());
            assert_eq!(c.query("BEGIN").unwrap(), Outcome::Affected(0));
        }
    }

    #[test]
    fn a_malformed_second_error_keeps_the_first_and_ends_the_connection() {
        let mut answer = error(&[
            (b'S', "ERROR"),
            (b'C', "42000"),
            (b'M', "Syntax error in SQL statement"),
        ]);
        // H2's answer to the Describe after a refused Parse: its fields
        // without the closing zero byte.
        let mut bad = b"SERROR\0C08P01\0MPrepared not found: s0\0".to_vec();
        answer.extend(msg(b'E', &bad));
        answer.extend(ready());
        let mut c = conn(vec![answer]);
        let e = c
            .prepare("INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING")
            .unwrap_err();
        assert_eq!(e.code.as_deref(), Some("42000"), "{e}");
        assert_eq!(e.meaning(), crate::engine::Meaning::Syntax, "{e}");
        assert!(!c.is_usable(), "out of step after the malformed message");
        bad.push(0);
        let mut answer = msg(b'E', &bad);
        answer.extend(ready());
        let mut c = conn(vec![answer]);
        let e = c.prepare("SELECT 1").unwrap_err();
        assert_eq!(e.code.as_deref(), Some("08P01"), "{e}");
        assert!(c.is_usable(), "a well-formed error keeps the connection");
    }

    #[test]
    fn a_fatal_error_ends_the_connection_without_ready_for_query() {
        let answer = error(&[
            (b'S', "FATAL"),
            (b'V', "FATAL"),
            (b'C', "57P01"),
            (b'M', "terminating connection due to administrator command"),
        ]);
        let mut c = conn(vec![answer]);
        let e = c.execute(&stmt(&[], true), &[]).unwrap_err();
        assert_eq!(e.class, ErrorClass::Reconnect);
        assert_eq!(e.code.as_deref(), Some("57P01"));
        assert!(!c.is_usable());
        let before = c.stream.written.len();
        let e = c.query("SELECT 1").unwrap_err();
        assert_eq!(e.class, ErrorClass::Reconnect);
        assert_eq!(c.stream.written.len(), before, "nothing sent when broken");
    }

    #[test]
    fn eof_in_the_middle_of_a_message_is_reconnect() {
        let mut answer = msg(b'2', b"");
        answer.extend(&data_row(&["abc"])[..6]);
        let mut c = conn(cut(&answer, 4));
        let e = c.execute(&stmt(&[], true), &[]).unwrap_err();
        assert_eq!(e.class, ErrorClass::Reconnect, "{e}");
        assert!(!c.is_usable());
    }

    #[test]
    fn a_garbled_length_costs_memory_only_for_the_bytes_that_come() {
        // A DataRow of "900 MB" of which 10 bytes come, then the end.
        let mut answer = msg(b'2', b"");
        answer.extend(b"D");
        answer.extend(900_000_000u32.to_be_bytes());
        answer.extend([0u8; 10]);
        let mut c = conn(cut(&answer, 4));
        let e = c.execute(&stmt(&[], true), &[]).unwrap_err();
        assert_eq!(e.class, ErrorClass::Reconnect, "{e}");
        assert!(c.rd.buf.len() <= 2 * READ_BUF, "{}", c.rd.buf.len());
    }

    #[test]
    fn bad_lengths_are_protocol_errors() {
        let mut c = conn(vec![vec![b'D', 0, 0, 0, 2]]);
        let e = c.query("SELECT 1").unwrap_err();
        assert!(!c.is_usable(), "{e}");
    }

    #[test]
    fn out_of_range_parameters_fail_before_sending() {
        let mut c = conn(vec![]);
        for (ty, v) in [
            (INT4, 1i64 << 31),
            (INT2, 40_000),
            (INT4, -(1i64 << 31) - 1),
        ] {
            let e = c
                .execute(&stmt(&[ty], false), &[Param::Int(v)])
                .unwrap_err();
            assert_eq!(e.class, ErrorClass::Fatal, "{e}");
            assert!(e.message.contains("$1"), "{e}");
            assert!(e.message.contains("out of range"), "{e}");
        }
        let e = c
            .execute(
                &stmt(&[INT8, INT4], false),
                &[Param::Int(1), Param::Text("x")],
            )
            .unwrap_err();
        assert!(e.message.contains("$2"), "{e}");
        let e = c
            .execute(&stmt(&[INT4], false), &[Param::Int(1), Param::Int(2)])
            .unwrap_err();
        assert_eq!(e.class, ErrorClass::Fatal);
        assert!(c.stream.written.is_empty());
        assert!(c.is_usable());
    }

    #[test]
    fn params_are_encoded_in_the_servers_types() {
        let enc = |p: Param<'_>, ty: Oid| {
            let mut out = Vec::new();
            encode_param(0, &p, ty, &mut out).unwrap();
            let len = u32::from_be_bytes(out[..4].try_into().unwrap()) as usize;
            assert_eq!(len, out.len() - 4);
            out.split_off(4)
        };
        assert_eq!(enc(Param::Int(-2), INT8), (-2i64).to_be_bytes());
        assert_eq!(enc(Param::Int(-2), INT4), (-2i32).to_be_bytes());
        assert_eq!(enc(Param::Int(300), INT2), 300i16.to_be_bytes());
        assert_eq!(enc(Param::Int(5), FLOAT8), 5f64.to_be_bytes());
        assert_eq!(enc(Param::Int(5), FLOAT4), 5f32.to_be_bytes());
        assert_eq!(enc(Param::Text(" 12 "), INT4), 12i32.to_be_bytes());
        assert_eq!(enc(Param::Text("-7"), INT2), (-7i16).to_be_bytes());
        assert_eq!(enc(Param::Text("é'"), VARCHAR), "é'".as_bytes());
        assert_eq!(enc(Param::Text(""), TEXT), b"");
        for v in [0, 5, -5, 1234567890, i64::MIN, i64::MAX] {
            assert_eq!(enc(Param::Int(v), TEXT), v.to_string().as_bytes());
        }
        let mut out = Vec::new();
        let e = encode_param(2, &Param::Int(1), 16, &mut out).unwrap_err();
        assert_eq!(
            e.message,
            "parameter $3: cannot bind an integer to type bool"
        );
    }

    /// The hot path writes exactly what the crate's encoder writes.
    #[test]
    fn numeric_parameters_go_in_text_format() {
        let head = bind_head_typed("s1", &[INT4, NUMERIC]);
        // formats: 2 codes, binary then text; then 2 values.
        assert!(head.ends_with(&[0, 2, 0, 1, 0, 0, 0, 2]), "{head:?}");
        assert_eq!(bind_head_typed("s1", &[INT4]), bind_head("s1", 1));
        let mut out = Vec::new();
        encode_param(0, &Param::Text("12.50"), NUMERIC, &mut out).unwrap();
        assert_eq!(out, b"\0\0\0\x0512.50");
        out.clear();
        encode_param(0, &Param::Int(-3), NUMERIC, &mut out).unwrap();
        assert_eq!(out, b"\0\0\0\x02-3");
        assert!(encode_param(0, &Param::Text("x"), NUMERIC, &mut out).is_err());
        // A number in text binds to a float (a sysbench script's FLOAT).
        out.clear();
        encode_param(0, &Param::Text("2.5"), FLOAT8, &mut out).unwrap();
        assert_eq!(out, [&[0, 0, 0, 8][..], &2.5f64.to_be_bytes()].concat());
        out.clear();
        encode_param(0, &Param::Text("2.5"), FLOAT4, &mut out).unwrap();
        assert_eq!(out, [&[0, 0, 0, 4][..], &2.5f32.to_be_bytes()].concat());
        assert!(encode_param(0, &Param::Text("x"), FLOAT8, &mut out).is_err());
        let mut seen = Vec::new();
        let body = [0, 2, 0, 0, 0, 1, b'7', 0xff, 0xff, 0xff, 0xff];
        data_row_values(&body, |v| seen.push(v.map(|v| v.to_vec()))).unwrap();
        assert_eq!(seen, [Some(b"7".to_vec()), None]);
        assert_eq!(data_row_width(&body), 2);
        assert!(data_row_values(&body[..6], |_| {}).is_err());
    }

    #[test]
    fn bind_matches_postgres_protocol() {
        use postgres_protocol::{IsNull, types};
        let cases: Vec<(Vec<Oid>, Vec<Param<'_>>)> = vec![
            (vec![], vec![]),
            (vec![INT4], vec![Param::Int(42)]),
            (vec![INT4, TEXT], vec![Param::Null, Param::Null]),
            (
                vec![INT8, BPCHAR, INT2, TEXT],
                vec![
                    Param::Int(-1),
                    Param::Text("abc"),
                    Param::Int(7),
                    Param::Int(99),
                ],
            ),
        ];
        for (types_, params) in cases {
            let s = Statement {
                name: "s17".into(),
                bind_head: bind_head("s17", types_.len()),
                params: types_.clone(),
                rows: true,
                described: Vec::new(),
            };
            let mut c = conn(vec![[msg(b'2', b""), ready()].concat()]);
            c.execute(&s, &params).unwrap();
            let mut want = BytesMut::new();
            let formats: &[i16] = if params.is_empty() { &[] } else { &[1] };
            let r = frontend::bind(
                "",
                "s17",
                formats.iter().copied(),
                params.iter().zip(&types_),
                |(p, &ty), buf| {
                    match (*p, ty) {
                        (Param::Int(v), INT4) => types::int4_to_sql(v as i32, buf),
                        (Param::Int(v), INT8) => types::int8_to_sql(v, buf),
                        (Param::Int(v), INT2) => types::int2_to_sql(v as i16, buf),
                        (Param::Int(v), _) => types::text_to_sql(&v.to_string(), buf),
                        (Param::Text(t), _) => types::text_to_sql(t, buf),
                        (Param::Null, _) => return Ok(IsNull::Yes),
                    }
                    Ok(IsNull::No)
                },
                [0],
                &mut want,
            );
            assert!(r.is_ok());
            frontend::execute("", 0, &mut want).unwrap();
            frontend::sync(&mut want);
            assert_eq!(c.stream.written, want.to_vec(), "{types_:?}");
        }
    }

    /// The tags of the messages in `bytes`, a stream of frontend messages.
    fn tags(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            out.push(bytes[i]);
            let len = u32::from_be_bytes(bytes[i + 1..i + 5].try_into().unwrap()) as usize;
            i += 1 + len;
        }
        out
    }

    #[test]
    fn a_pipeline_goes_out_in_one_write_at_its_end_and_reads_every_segment() {
        // Segment 1: a prepared UPDATE and an unnamed SELECT; segment 2 (after
        // \syncpipeline): a statement the server refuses.
        let mut answer = msg(b'2', b"");
        answer.extend(msg(b'n', b""));
        answer.extend(msg(b'C', &cstr("UPDATE 1")));
        answer.extend(msg(b'1', b""));
        answer.extend(msg(b'2', b""));
        answer.extend(msg(b'T', &[0, 0]));
        answer.extend(data_row(&["5"]));
        answer.extend(msg(b'C', &cstr("SELECT 1")));
        answer.extend(ready());
        answer.extend(msg(b'1', b""));
        answer.extend(error(&[
            (b'S', "ERROR"),
            (b'C', "22012"),
            (b'M', "division by zero"),
        ]));
        answer.extend(ready());
        let mut c = conn(cut(&answer, 7));
        let s = stmt(&[INT4], false);
        c.pipeline_start().unwrap();
        assert!(
            c.pipeline_start()
                .unwrap_err()
                .message
                .contains("already in pipeline mode")
        );
        c.pipeline_prepared(&s, &[Param::Int(3)]).unwrap();
        c.pipeline_unnamed("select $1", &[Param::Int(5)]).unwrap();
        c.pipeline_sync().unwrap();
        c.pipeline_unnamed("select 1/0", &[]).unwrap();
        assert!(
            c.stream.written.is_empty(),
            "nothing goes out before the end"
        );
        let mut seen = Vec::new();
        let e = c.pipeline_end(&mut |o| seen.push(o)).unwrap_err();
        assert_eq!(e.code.as_deref(), Some("22012"));
        assert_eq!(seen, [Outcome::Affected(1), Outcome::Rows(1)]);
        assert_eq!(tags(&c.stream.written), b"BDEPBDESPBDES");
        assert!(c.is_usable() && !c.in_transaction());
        // Out of pipeline mode, and a new one starts clean.
        assert!(
            c.pipeline_sync()
                .unwrap_err()
                .message
                .contains("not in pipeline mode")
        );
        c.pipeline_start().unwrap();
        c.pipeline_discard();
        assert!(c.pipeline_end(&mut |_| {}).is_err());
    }

    #[test]
    fn a_large_pipeline_goes_in_parts_each_answered_before_the_next() {
        // 600 statements of ~150 bytes: more than one part. The 301st fails;
        // the server skips the rest up to the Sync.
        let sql = format!("select {}", "1+".repeat(60) + "1");
        let mut answer = Vec::new();
        for _ in 0..300 {
            answer.extend(msg(b'1', b""));
            answer.extend(msg(b'2', b""));
            answer.extend(msg(b'T', &[0, 0]));
            answer.extend(data_row(&["61"]));
            answer.extend(msg(b'C', &cstr("SELECT 1")));
        }
        answer.extend(msg(b'1', b""));
        answer.extend(error(&[
            (b'S', "ERROR"),
            (b'C', "40001"),
            (b'M', "could not serialize"),
        ]));
        answer.extend(ready());
        let mut c = conn(cut(&answer, 4096));
        c.pipeline_start().unwrap();
        for _ in 0..600 {
            c.pipeline_unnamed(&sql, &[]).unwrap();
        }
        let mut seen = 0;
        let e = c.pipeline_end(&mut |o| {
            assert_eq!(o, Outcome::Rows(1));
            seen += 1;
        });
        assert_eq!(e.unwrap_err().code.as_deref(), Some("40001"));
        assert_eq!(seen, 300);
        let t = tags(&c.stream.written);
        let flushes = t.iter().filter(|&&x| x == b'H').count();
        assert!(flushes >= 2, "{flushes} flushes");
        assert_eq!(t.iter().filter(|&&x| x == b'S').count(), 1);
        assert_eq!(t.last(), Some(&b'S'));
        assert!(c.is_usable() && c.pipeline_start().is_ok());
    }

    #[test]
    fn simple_query_gives_the_last_statements_outcome() {
        let mut answer = msg(b'T', &[0, 0]);
        answer.extend(data_row(&["1"]));
        answer.extend(msg(b'C', &cstr("SELECT 1")));
        answer.extend(msg(b'C', &cstr("UPDATE 4")));
        answer.extend(ready());
        answer.extend(msg(b'C', &cstr("UPDATE 4")));
        answer.extend(msg(b'T', &[0, 0]));
        answer.extend(data_row(&["1"]));
        answer.extend(data_row(&["2"]));
        answer.extend(msg(b'C', &cstr("SELECT 2")));
        answer.extend(ready());
        answer.extend(msg(b'I', b""));
        answer.extend(ready());
        let mut c = conn(vec![answer]);
        assert_eq!(c.query("x; y").unwrap(), Outcome::Affected(4));
        assert_eq!(c.query("y; x").unwrap(), Outcome::Rows(2));
        assert_eq!(c.query("").unwrap(), Outcome::Affected(0));
        assert_eq!(c.stream.written[0], b'Q');
    }

    #[test]
    fn query_scalar_reads_the_first_value_and_null_as_none() {
        let mut answer = msg(b'T', &[0, 0]);
        answer.extend(data_row(&["15.4", "x"]));
        answer.extend(data_row(&["other"]));
        answer.extend(msg(b'C', &cstr("SELECT 2")));
        answer.extend(ready());
        answer.extend(msg(b'T', &[0, 0]));
        answer.extend(msg(b'D', &[0, 1, 0xff, 0xff, 0xff, 0xff]));
        answer.extend(msg(b'C', &cstr("SELECT 1")));
        answer.extend(ready());
        answer.extend(msg(b'T', &[0, 0]));
        answer.extend(msg(b'C', &cstr("SELECT 0")));
        answer.extend(ready());
        let mut c = conn(vec![answer]);
        assert_eq!(c.query_scalar("a").unwrap().as_deref(), Some("15.4"));
        assert_eq!(c.query_scalar("b").unwrap(), None);
        assert_eq!(c.query_scalar("c").unwrap(), None);
    }

    #[test]
    fn copy_in_is_refused() {
        let mut answer = msg(b'G', &[0, 0, 0]);
        answer.extend(error(&[
            (b'V', "ERROR"),
            (b'C', "57014"),
            (b'M', "COPY failed"),
        ]));
        answer.extend(ready());
        let mut c = conn(vec![answer]);
        let e = c.query("COPY t FROM STDIN").unwrap_err();
        assert_eq!(e.code.as_deref(), Some("57014"));
        assert!(c.is_usable());
        assert!(c.stream.written.contains(&b'f'));
    }

    #[test]
    fn md5_startup_sends_the_hash_and_reads_until_ready() {
        let mut answer = msg(b'R', &[0, 0, 0, 5, 1, 2, 3, 4]);
        answer.extend(msg(b'R', &[0, 0, 0, 0]));
        answer.extend(msg(b'S', &[cstr("server_version"), cstr("17.2")].concat()));
        answer.extend(msg(b'K', &[0, 0, 0, 42, 0, 0, 0, 7]));
        answer.extend(ready());
        let mut c = conn(cut(&answer, 3));
        let cfg = Config {
            host: Host::Tcp("h".into()),
            port: 5432,
            user: "bob".into(),
            password: Some("pw".into()),
            database: "db".into(),
            application_name: "rqps".into(),
            connect_timeout: Duration::from_secs(1),
            timeouts: Default::default(),
            tls: TlsSetup::disabled(tls::Flavor::Postgres),
            channel_binding: ChannelBindingMode::Prefer,
        };
        c.startup(&cfg, false, None).unwrap();
        assert_eq!(c.backend_key(), Some((42, 7)));
        assert_eq!(c.server_version(), Some("17.2"));
        let w = &c.stream.written;
        let startup_len = u32::from_be_bytes(w[..4].try_into().unwrap()) as usize;
        let startup = &w[..startup_len];
        for kv in ["user\0bob\0", "database\0db\0", "application_name\0rqps\0"] {
            assert!(
                startup.windows(kv.len()).any(|x| x == kv.as_bytes()),
                "{kv}"
            );
        }
        let hash = md5_hash(b"bob", b"pw", [1, 2, 3, 4]);
        assert_eq!(&w[startup_len..], msg(b'p', &cstr(&hash)));
    }

    #[test]
    fn a_password_request_without_password_is_fatal() {
        let answer = msg(b'R', &[0, 0, 0, 3]);
        let mut c = conn(vec![answer]);
        let cfg = Config {
            host: Host::Tcp("h".into()),
            port: 5432,
            user: "bob".into(),
            password: None,
            database: "db".into(),
            application_name: "rqps".into(),
            connect_timeout: Duration::from_secs(1),
            timeouts: Default::default(),
            tls: TlsSetup::disabled(tls::Flavor::Postgres),
            channel_binding: ChannelBindingMode::Prefer,
        };
        let e = c.startup(&cfg, false, None).unwrap_err();
        assert_eq!(e.class, ErrorClass::Fatal);
        assert!(
            e.message.contains("--password-file") && e.message.contains("~/.pgpass"),
            "{e}"
        );
    }

    /// A server on a loopback port that, once a client connects, sends
    /// `bytes` one at a time `every` apart (nothing at all when empty) and
    /// then holds the connection open for 10 s.
    fn slow_server(bytes: Vec<u8>, every: std::time::Duration) -> u16 {
        let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            for b in bytes {
                if s.write_all(&[b]).is_err() {
                    return;
                }
                std::thread::sleep(every);
            }
            std::thread::sleep(std::time::Duration::from_secs(10));
        });
        port
    }

    fn connect_to(port: u16) -> (DbResult<PgConn>, std::time::Duration) {
        let t = std::time::Instant::now();
        let r = PgConn::connect(&Config {
            host: Host::Tcp("127.0.0.1".into()),
            port,
            user: "u".into(),
            password: None,
            database: "d".into(),
            application_name: "rqps".into(),
            connect_timeout: Duration::from_secs(1),
            timeouts: Default::default(),
            tls: TlsSetup::disabled(tls::Flavor::Postgres),
            channel_binding: ChannelBindingMode::Prefer,
        });
        (r, t.elapsed())
    }

    fn connect_with(port: u16, mode: Mode) -> DbResult<PgConn> {
        let options = tls::TlsOptions {
            mode,
            ..tls::TlsOptions::disabled(tls::Flavor::Postgres)
        };
        PgConn::connect(&Config {
            host: Host::Tcp("127.0.0.1".into()),
            port,
            user: "u".into(),
            password: None,
            database: "d".into(),
            application_name: "rqps".into(),
            connect_timeout: Duration::from_secs(2),
            timeouts: Default::default(),
            tls: TlsSetup::new(options).unwrap(),
            channel_binding: ChannelBindingMode::Prefer,
        })
    }

    #[test]
    fn a_server_that_declines_tls_fails_sslmode_require_and_serves_prefer_in_the_clear() {
        // 'N' to the SSLRequest, then AuthenticationOk and ReadyForQuery.
        let mut bytes = b"N".to_vec();
        bytes.extend_from_slice(b"R\0\0\0\x08\0\0\0\0");
        bytes.extend_from_slice(b"Z\0\0\0\x05I");
        let e = connect_with(slow_server(bytes.clone(), Duration::ZERO), Mode::Require)
            .err()
            .expect("require refuses a server without TLS");
        assert!(e.message.contains("does not accept TLS"), "{e}");
        assert!(e.message.contains("sslmode=require requires TLS"), "{e}");
        let c = connect_with(slow_server(bytes, Duration::ZERO), Mode::Prefer).unwrap();
        assert!(c.tls().is_none(), "prefer went on without TLS");
    }

    #[test]
    fn a_plaintext_login_refused_for_want_of_tls_says_to_use_sslmode_require() {
        let e = DbError {
            code: Some("28000".into()),
            ..DbError::fatal(
                "no pg_hba.conf entry for host \"127.0.0.1\", user \"u\", database \"d\", no encryption",
            )
        };
        let e = tls_hint(e, &Host::Tcp("127.0.0.1".into()));
        assert!(e.message.contains("requires TLS"), "{}", e.message);
        assert!(e.message.contains("use sslmode=require"), "{}", e.message);
        let other = DbError {
            code: Some("28P01".into()),
            ..DbError::fatal("password authentication failed")
        };
        assert!(
            !tls_hint(other, &Host::Tcp("h".into()))
                .message
                .contains("TLS")
        );
    }

    #[test]
    fn a_silent_listener_fails_the_connect_within_the_connect_timeout() {
        let (r, took) = connect_to(slow_server(Vec::new(), Duration::ZERO));
        let e = r.err().expect("no answer, no connection");
        assert!(e.to_string().contains("connect timeout (1 s)"), "{e}");
        assert!(took < Duration::from_secs(3), "{took:?}");
    }

    #[test]
    fn an_answer_sent_byte_by_byte_fails_within_the_connect_timeout() {
        // AuthenticationOk, then ReadyForQuery: 14 bytes at 200 ms each.
        let mut bytes = b"R\0\0\0\x08\0\0\0\0".to_vec();
        bytes.extend_from_slice(b"Z\0\0\0\x05I");
        let (r, took) = connect_to(slow_server(bytes, Duration::from_millis(200)));
        let e = r.err().expect("an answer that takes too long");
        assert!(e.to_string().contains("connect timeout (1 s)"), "{e}");
        assert!(took < Duration::from_secs(3), "{took:?}");
    }

    #[test]
    fn a_garbled_message_type_is_a_protocol_error_at_once() {
        // Type 'x' (no such message) with a length of 16 MiB.
        let bytes = vec![b'x', 1, 0, 0, 0];
        let (r, took) = connect_to(slow_server(bytes, Duration::ZERO));
        let e = r.err().expect("garbage is no answer");
        assert!(e.to_string().contains("unknown message type"), "{e}");
        assert!(took < Duration::from_millis(900), "{took:?}");
    }
}

#[cfg(test)]
mod microbench {
    use super::*;

    /// Answers every read with the same point-select answer.
    struct Echo(Vec<u8>);
    impl Read for Echo {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            buf[..self.0.len()].copy_from_slice(&self.0);
            Ok(self.0.len())
        }
    }
    impl Write for Echo {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            std::hint::black_box(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    #[ignore]
    fn execute_cost() {
        let mut a = vec![b'2', 0, 0, 0, 4];
        let row = [vec![0, 1, 0, 0, 0, 120], vec![b'x'; 120]].concat();
        a.push(b'D');
        a.extend((row.len() as u32 + 4).to_be_bytes());
        a.extend(row);
        a.extend([b'C', 0, 0, 0, 13]);
        a.extend(b"SELECT 1\0");
        a.extend([b'Z', 0, 0, 0, 5, b'I']);
        let mut c = PgConn::from_stream(Echo(a));
        let s = Statement {
            name: "s3".into(),
            params: vec![INT4],
            rows: true,
            bind_head: bind_head("s3", 1),
            described: Vec::new(),
        };
        let n = 10_000_000;
        let t = std::time::Instant::now();
        for i in 0..n {
            let o = c.execute(&s, &[Param::Int(i & 0xffff)]).unwrap();
            std::hint::black_box(o);
        }
        eprintln!(
            "{:.1} ns per execute",
            t.elapsed().as_nanos() as f64 / n as f64
        );
    }
}
