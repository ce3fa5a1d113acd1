//! A small synchronous client for the MySQL/MariaDB client/server protocol:
//! just what the benchmark needs, and cheap on the client's CPU.
//!
//! - Handshake V10 and HandshakeResponse41; `mysql_native_password`,
//!   `caching_sha2_password` (fast path, and the full exchange: the password
//!   over a secure transport, else RSA-encrypted with the server's key),
//!   `sha256_password`, MariaDB's `client_ed25519` ([`super::auth`]), empty
//!   passwords, AuthSwitchRequest. No compression.
//! - TLS ([`crate::engine::tls`]) over TCP: when `ssl-mode` allows and the
//!   server offers CLIENT_SSL, an SSLRequest packet after the greeting, the
//!   rustls handshake, then the handshake response over TLS (which makes the
//!   channel secure for a cleartext password); the hot path
//!   reads and writes through the rustls stream with the same buffers.
//! - COM_QUERY (text protocol), COM_STMT_PREPARE / COM_STMT_EXECUTE (binary
//!   protocol), COM_STMT_CLOSE and COM_QUIT when the client is dropped.
//! - Result rows are counted, not decoded: an execution only looks at the
//!   first byte of each row packet.
//!
//! Hot path: one reused output buffer (packet header and payload written in
//! place, one `write_all` per command) and one reused input buffer with our
//! own framing; every complete packet in it is parsed before reading again.
//! An execution allocates nothing once the buffers have grown to size.

use crate::engine::deadline::{AskServer, Deadline, MidMessage, Session, Waited};
use crate::engine::inflight;
use crate::engine::{DbError, SqlState};
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use sha1::{Digest, Sha1};
use sha2::Sha256;

use super::auth;
use crate::engine::tls::{self, Mode, TlsInfo, TlsSetup, TlsStream};
use crate::engine::{Outcome, Param, Rows};
use crate::evloop;

// Capability flags (protocol documentation, "Capabilities").
/// `CLIENT_LONG_PASSWORD`; MariaDB calls it `CLIENT_MYSQL` and its servers
/// do not set it, which also says the 4 MariaDB capability bytes are valid.
const CLIENT_LONG_PASSWORD: u32 = 1;
const CLIENT_CONNECT_WITH_DB: u32 = 1 << 3;
const CLIENT_PROTOCOL_41: u32 = 1 << 9;
/// The server offers TLS; the client asks for it (SSLRequest).
const CLIENT_SSL: u32 = 1 << 11;
const CLIENT_TRANSACTIONS: u32 = 1 << 13;
const CLIENT_SECURE_CONNECTION: u32 = 1 << 15;
const CLIENT_MULTI_STATEMENTS: u32 = 1 << 16;
const CLIENT_MULTI_RESULTS: u32 = 1 << 17;
const CLIENT_PS_MULTI_RESULTS: u32 = 1 << 18;
const CLIENT_PLUGIN_AUTH: u32 = 1 << 19;
const CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
const CLIENT_DEPRECATE_EOF: u32 = 1 << 24;
/// MariaDB extended capability (bit 36 overall): the server sends a prepared
/// statement's result metadata only when it changed.
const MARIADB_CLIENT_CACHE_METADATA: u32 = 1 << 4;

/// Everything we would like; the server's offer is and-ed in.
const WANTED: u32 = CLIENT_LONG_PASSWORD
    | CLIENT_PROTOCOL_41
    | CLIENT_TRANSACTIONS
    | CLIENT_SECURE_CONNECTION
    | CLIENT_MULTI_STATEMENTS
    | CLIENT_MULTI_RESULTS
    | CLIENT_PS_MULTI_RESULTS
    | CLIENT_PLUGIN_AUTH
    | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
    | CLIENT_DEPRECATE_EOF;

const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;

const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;
const COM_STMT_CLOSE: u8 = 0x19;

const TYPE_LONGLONG: u8 = 0x08;
const TYPE_VAR_STRING: u8 = 0xfd;
const TYPE_NULL: u8 = 0x06;

/// utf8mb4_general_ci.
const UTF8MB4: u8 = 45;
/// Largest payload of one packet; a payload this long continues in the next.
const MAX_PAYLOAD: usize = 0xff_ffff;
/// What we tell the server it may send us in one (logical) packet.
const MAX_PACKET: u32 = 1 << 30;
const READ_BUF: usize = 64 * 1024;
/// The largest reply a server may send: max_allowed_packet's upper bound.
const MAX_REPLY: usize = 1 << 30;

const NATIVE: &str = "mysql_native_password";
const CACHING_SHA2: &str = "caching_sha2_password";
const SHA256: &str = "sha256_password";
/// MariaDB's ed25519 plugin, as the server names its client side.
const ED25519: &str = "client_ed25519";
/// The plugins [`Client::connect`] can answer, for messages.
const SUPPORTED: &str =
    "mysql_native_password, caching_sha2_password, sha256_password and MariaDB's ed25519";

/// What went wrong on a connection, with the cause beneath it kept as the
/// source. [`Error::kind`] says what it leaves of the connection.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An ERR packet: the MySQL error number, its SQLSTATE (none before
    /// the handshake) and message.
    #[error("{message} ({code})")]
    Server {
        code: u16,
        state: Option<SqlState>,
        message: String,
    },
    /// Reading or writing the socket failed.
    #[error("connection to the server failed: {0}")]
    Io(#[source] io::Error),
    #[error("connection to the server failed: the server closed the connection")]
    Closed,
    /// An earlier failure left the connection out of step.
    #[error("connection to the server failed earlier and cannot be used")]
    Unusable,
    #[error("cannot resolve host '{host}': {source}")]
    Resolve {
        host: String,
        #[source]
        source: io::Error,
    },
    #[error("host '{host}' has no address")]
    NoAddress { host: String },
    #[error(
        "the server did not finish the connection handshake within the connect timeout ({} s)",
        limit.as_secs_f64()
    )]
    HandshakeTimedOut {
        limit: Duration,
        #[source]
        source: Box<Error>,
    },
    /// A packet the client cannot make sense of.
    #[error("malformed packet from the server ({what})")]
    Malformed { what: &'static str },
    #[error("packets out of order (got sequence id {got}, expected {expected})")]
    OutOfOrder { got: u8, expected: u8 },
    #[error(
        "a reply of more than {} MiB (the largest max_allowed_packet): the server's stream is garbled",
        MAX_REPLY >> 20
    )]
    Oversized,
    #[error("unexpected data from the server between commands")]
    Unexpected,
    #[error("the server asked for LOCAL INFILE, which rqps does not support")]
    LocalInfile,
    /// An open connection on which the server said nothing for the
    /// statement timeout: the connection is gone and the statement failed.
    #[error("{}", crate::engine::statement_timeout_message(*limit))]
    TimedOut {
        limit: Duration,
        #[source]
        source: io::Error,
    },
    #[error("TLS over a stream that is not TCP")]
    TlsNotTcp,
    #[error("no TLS over a unix socket")]
    TlsOverUnix,
    #[error("TLS is disabled for this target")]
    TlsDisabled,
    /// The TLS handshake failed (certificate, name, protocol).
    #[error(transparent)]
    Tls(DbError),
    #[error(
        "server {version} does not offer TLS, and {option} requires it: enable TLS on the server (ssl_cert, ssl_key), or use ssl-mode=PREFERRED or DISABLED"
    )]
    TlsNotOffered {
        version: String,
        option: &'static str,
    },
    #[error("unsupported protocol version {0} (expected 10)")]
    ProtocolVersion(u8),
    #[error("server {version} does not speak the 4.1 protocol")]
    NotProtocol41 { version: String },
    #[error(
        "user '{user}' authenticates with '{plugin}', which rqps does not support: give the user one of {SUPPORTED}"
    )]
    UnsupportedPlugin { user: String, plugin: String },
    #[error("unexpected packet during authentication (plugin {plugin}); rqps supports {SUPPORTED}")]
    UnexpectedAuthPacket { plugin: &'static str },
    #[error(
        "{plugin}: the server sent no usable RSA public key ({source}; does it have RSA keys?): give server-public-key-path=FILE, or connect with TLS (ssl-mode=REQUIRED) or through the unix socket (?socket=PATH)"
    )]
    NoServerKey {
        plugin: &'static str,
        #[source]
        source: auth::RsaError,
    },
    /// The key of server-public-key-path does not read.
    #[error("{plugin}: server-public-key-path: {source}")]
    KeyFile {
        plugin: &'static str,
        #[source]
        source: auth::RsaError,
    },
    #[error("{plugin}: {source}")]
    Encrypt {
        plugin: &'static str,
        #[source]
        source: auth::RsaError,
    },
    #[error(
        "the server wants the full caching_sha2_password exchange for user '{user}' (its password is not in the server's cache) over plaintext: add get-server-public-key=true to the URL, or server-public-key-path=FILE (the server's RSA public key, PEM), or connect with TLS (ssl-mode=REQUIRED) or through the unix socket (?socket=/path/mysqld.sock)"
    )]
    FullAuthInPlaintext { user: String },
    #[error("the statement takes {takes} parameters, {given} given")]
    Parameters { takes: u16, given: usize },
}

/// What an [`Error`] leaves of the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The server refused the command; the connection is fine.
    Server,
    /// The connection failed or can no longer be trusted (I/O error, the
    /// server went away, a packet we cannot make sense of).
    Broken,
    /// A problem another try would not fix (unsupported authentication,
    /// TLS, wrong use of the API).
    Fatal,
    /// The statement timeout passed: the statement failed and the
    /// connection is closed.
    TimedOut,
}

impl Error {
    pub fn kind(&self) -> Kind {
        match self {
            Error::Server { .. } => Kind::Server,
            Error::Io(_)
            | Error::Closed
            | Error::Unusable
            | Error::Resolve { .. }
            | Error::NoAddress { .. }
            | Error::HandshakeTimedOut { .. }
            | Error::Malformed { .. }
            | Error::OutOfOrder { .. }
            | Error::Oversized
            | Error::Unexpected
            | Error::LocalInfile => Kind::Broken,
            Error::TimedOut { .. } => Kind::TimedOut,
            Error::TlsNotTcp
            | Error::TlsOverUnix
            | Error::TlsDisabled
            | Error::Tls(_)
            | Error::TlsNotOffered { .. }
            | Error::ProtocolVersion(_)
            | Error::NotProtocol41 { .. }
            | Error::UnsupportedPlugin { .. }
            | Error::UnexpectedAuthPacket { .. }
            | Error::NoServerKey { .. }
            | Error::KeyFile { .. }
            | Error::Encrypt { .. }
            | Error::FullAuthInPlaintext { .. }
            | Error::Parameters { .. } => Kind::Fatal,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

fn io_error(e: io::Error) -> Error {
    Error::Io(e)
}

fn malformed(what: &'static str) -> Error {
    Error::Malformed { what }
}

/// Where the server listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Addr {
    Tcp { host: String, port: u16 },
    Unix(PathBuf),
}

/// How to connect. (No `Debug`: it holds the password.)
#[derive(Clone)]
pub struct Opts {
    pub addr: Addr,
    pub user: String,
    pub password: String,
    /// Default database; `None` connects without one.
    pub db: Option<String>,
    pub connect_timeout: Duration,
    /// Longest wait for one read or write on the socket (the statement timeout).
    pub io_timeout: Duration,
    /// Longest wait for the rest of a message once it has begun.
    pub message_timeout: Duration,
    /// `ssl-mode` and its files; not used over a unix socket.
    pub tls: TlsSetup,
    /// Where the server's RSA public key comes from, for the full
    /// `caching_sha2_password` and `sha256_password` exchanges over plaintext.
    pub keys: KeyOpts,
}

/// The server's RSA public key for sending a password over plaintext
/// (URL options named as the mysql client's).
#[derive(Clone, Default)]
pub struct KeyOpts {
    /// `get-server-public-key=true`: ask the server for it (caching_sha2_password).
    pub get_server_public_key: bool,
    /// `server-public-key-path=FILE`: the key, PEM, read from the file.
    pub server_public_key: Option<String>,
}

/// The socket under a [`Client`].
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<TlsStream>),
    /// Only while the TCP stream is being wrapped in TLS.
    Gone,
}

impl Stream {
    /// Runs the TLS handshake on the TCP stream (after the SSLRequest).
    fn start_tls(&mut self, setup: &TlsSetup, host: &str) -> Result<()> {
        let Stream::Tcp(tcp) = std::mem::replace(self, Stream::Gone) else {
            return Err(Error::TlsNotTcp);
        };
        match setup.connect(host, tcp) {
            Some(Ok(s)) => {
                *self = Stream::Tls(Box::new(s));
                Ok(())
            }
            Some(Err(e)) => Err(Error::Tls(e)),
            None => Err(Error::TlsDisabled),
        }
    }
}

impl Stream {
    /// The socket's descriptor (under TLS, the TCP socket's).
    fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        match self {
            Stream::Tcp(s) => Some(s.as_raw_fd()),
            Stream::Unix(s) => Some(s.as_raw_fd()),
            Stream::Tls(s) => Some(s.sock.as_raw_fd()),
            Stream::Gone => None,
        }
    }
}

fn gone() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "the TLS handshake failed")
}

impl Read for Stream {
    /// Inside a task of the event-driven core, a read that would wait
    /// suspends the task instead ([`crate::evloop`]).
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if evloop::active() {
            return match self {
                Stream::Tls(s) => tls::read_in_task(s, buf),
                Stream::Gone => Err(gone()),
                s => evloop::recv(s.raw_fd().unwrap_or(-1), buf),
            };
        }
        match self {
            // The blocking read itself, without libc's cancellation
            // bookkeeping around it (about 60 instructions a statement).
            Stream::Tcp(s) => evloop::recv_blocking(std::os::fd::AsRawFd::as_raw_fd(s), buf),
            // Polled, then read: a blocking Unix-socket read wakes twice per
            // reply (why: the PostgreSQL wire client's `Read for Stream`).
            Stream::Unix(s) => evloop::recv(std::os::fd::AsRawFd::as_raw_fd(s), buf),
            Stream::Tls(s) => s.read(buf),
            Stream::Gone => Err(gone()),
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
                Stream::Gone => Err(gone()),
                s => evloop::send(s.raw_fd().unwrap_or(-1), buf),
            };
        }
        match self {
            Stream::Tcp(s) => evloop::send_blocking(std::os::fd::AsRawFd::as_raw_fd(s), buf),
            // Without SIGPIPE (why: the PostgreSQL wire client's `Write for Stream`).
            Stream::Unix(s) => evloop::send(std::os::fd::AsRawFd::as_raw_fd(s), buf),
            Stream::Tls(s) => s.write(buf),
            Stream::Gone => Err(gone()),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Sets an integer socket option; failures are ignored (keepalive tuning is
/// a nicety, not a requirement).
fn setsockopt(fd: i32, level: libc::c_int, name: libc::c_int, value: libc::c_int) {
    // SAFETY: `fd` is an open socket owned by the caller for the duration of
    // the call, and the option value is a live `c_int` of the size passed.
    unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

fn tcp_keepalive(s: &TcpStream) {
    use std::os::fd::AsRawFd;
    let fd = s.as_raw_fd();
    setsockopt(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1);
    #[cfg(target_os = "linux")]
    {
        setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, 60);
        setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, 10);
        setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_KEEPCNT, 6);
        setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT, 120_000);
    }
}

/// Both timeouts of socket `fd`, through the core, which keeps them: its
/// waits then know them without asking the kernel.
fn set_timeouts(fd: std::os::fd::RawFd, t: Duration) -> io::Result<()> {
    evloop::set_timeout(fd, evloop::Interest::Read, Some(t))?;
    evloop::set_timeout(fd, evloop::Interest::Write, Some(t))
}

fn tcp_connect(host: &str, port: u16, o: &Opts) -> Result<TcpStream> {
    let addrs = (host, port)
        .to_socket_addrs()
        .map_err(|source| Error::Resolve {
            host: host.to_string(),
            source,
        })?;
    let mut last = None;
    for a in addrs {
        match TcpStream::connect_timeout(&a, o.connect_timeout) {
            Ok(s) => {
                let fd = std::os::fd::AsRawFd::as_raw_fd(&s);
                evloop::new_fd(fd);
                s.set_nodelay(true)
                    .and_then(|_| set_timeouts(fd, o.io_timeout))
                    .map_err(io_error)?;
                tcp_keepalive(&s);
                return Ok(s);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(e) => io_error(e),
        None => Error::NoAddress {
            host: host.to_string(),
        },
    })
}

/// A statement prepared on the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stmt {
    id: u32,
    params: u16,
    columns: u16,
}

/// One connection. `S` is the socket; tests drive it with byte fixtures.
pub struct Client<S: Read + Write = Stream> {
    /// On the list a stop cancels ([`inflight`]); dropped before `io`.
    registered: Option<inflight::Registered>,
    io: S,
    /// Input: `rbuf[rpos..rend]` is received but not yet parsed.
    rbuf: Vec<u8>,
    rpos: usize,
    rend: usize,
    /// A payload spread over several packets (16 MiB or more), joined.
    big: Vec<u8>,
    /// Output: one packet (or command), header included.
    wbuf: Vec<u8>,
    /// Sequence id of the next packet, either way.
    seq: u8,
    caps: u32,
    /// MariaDB's extended capabilities in effect.
    ext_caps: u32,
    /// Set after an I/O or protocol error, and until the handshake is done:
    /// nothing more is sent, not even on drop.
    /// Past the handshake: a timeout now is the statement timeout.
    ready: bool,
    broken: bool,
    /// Statements to close on drop.
    stmts: Vec<u32>,
    /// Result column types of each prepared statement that returns rows,
    /// by statement id (to decode binary rows in [`Client::execute_rows`]).
    metas: std::collections::HashMap<u32, Vec<ColMeta>, StmtIds>,
    /// The deadline for the rest of a packet once it has begun.
    mid: MidMessage,
    /// The server's id of this connection (its handshake's thread id).
    connection_id: u32,
    /// The server's version as its handshake gave it (`8.0.33`,
    /// `5.5.5-10.11.19-MariaDB-...`).
    server_version: String,
    /// The authentication plugin the login ended with (after any switch).
    auth_plugin: &'static str,
}

/// A result column's type code and whether an integer is unsigned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColMeta {
    ty: u8,
    unsigned: bool,
}

const UNSIGNED_FLAG: u16 = 32;

/// The type of a ColumnDefinition41 packet.
fn parse_coldef(b: &[u8]) -> Result<ColMeta> {
    let mut r = Reader(b);
    for _ in 0..6 {
        r.lenenc_bytes()?;
    }
    r.lenenc()?;
    let _charset = r.u16()?;
    let _length = r.u32()?;
    let ty = r.u8()?;
    let flags = r.u16()?;
    Ok(ColMeta {
        ty,
        unsigned: flags & UNSIGNED_FLAG != 0,
    })
}

/// The column name (the fifth field) of a ColumnDefinition41 packet.
fn coldef_name(b: &[u8]) -> Result<String> {
    let mut r = Reader(b);
    for _ in 0..4 {
        r.lenenc_bytes()?;
    }
    let name = r.lenenc_bytes()?.unwrap_or_default();
    Ok(String::from_utf8_lossy(name).into_owned())
}

/// Appends the values of one binary-protocol row to `out`.
fn push_binary_row(b: &[u8], metas: &[ColMeta], out: &mut Rows) -> Result<()> {
    let mut r = Reader(b);
    r.u8()?;
    let bitmap = r.take((metas.len() + 9) / 8)?;
    for (i, m) in metas.iter().enumerate() {
        let bit = i + 2;
        if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
            out.push(None);
            continue;
        }
        match m.ty {
            0x01 => {
                let v = r.u8()?;
                if m.unsigned {
                    out.push_display(v)
                } else {
                    out.push_display(v as i8)
                }
            }
            0x02 | 0x0d => {
                let v = r.u16()?;
                if m.unsigned {
                    out.push_display(v)
                } else {
                    out.push_display(v as i16)
                }
            }
            0x03 | 0x09 => {
                let v = r.u32()?;
                if m.unsigned {
                    out.push_display(v)
                } else {
                    out.push_display(v as i32)
                }
            }
            0x08 => {
                let v = u64::from_le_bytes(r.take(8)?.try_into().unwrap_or_default());
                if m.unsigned {
                    out.push_display(v)
                } else {
                    out.push_display(v as i64)
                }
            }
            0x04 => out.push_display(f32::from_le_bytes(
                r.take(4)?.try_into().unwrap_or_default(),
            )),
            0x05 => out.push_display(f64::from_le_bytes(
                r.take(8)?.try_into().unwrap_or_default(),
            )),
            0x06 => out.push(None),
            0x07 | 0x0a | 0x0c | 0x0e => {
                let n = r.u8()? as usize;
                let mut f = Reader(r.take(n)?);
                let (y, mo, d) = if n >= 4 {
                    (f.u16()?, f.u8()?, f.u8()?)
                } else {
                    (0, 0, 0)
                };
                let (h, mi, sec) = if n >= 7 {
                    (f.u8()?, f.u8()?, f.u8()?)
                } else {
                    (0, 0, 0)
                };
                out.push_display(format_args!(
                    "{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{sec:02}"
                ));
            }
            0x0b => {
                let n = r.u8()? as usize;
                let mut f = Reader(r.take(n)?);
                let (neg, days, h, mi, sec) = if n >= 8 {
                    (f.u8()?, f.u32()?, f.u8()?, f.u8()?, f.u8()?)
                } else {
                    (0, 0, 0, 0, 0)
                };
                let sign = if neg == 1 { "-" } else { "" };
                let h = days as u64 * 24 + h as u64;
                out.push_display(format_args!("{sign}{h:02}:{mi:02}:{sec:02}"));
            }
            _ => out.push(r.lenenc_bytes()?),
        }
    }
    Ok(())
}

/// Appends the values of one text-protocol row to `out`.
fn push_text_row(b: &[u8], width: usize, out: &mut Rows) -> Result<()> {
    let mut r = Reader(b);
    for _ in 0..width {
        out.push(r.lenenc_bytes()?);
    }
    Ok(())
}

/// What a connection's reads are for: a session's statements (watched by
/// asking the server when a reply is silent), or asking about another
/// session (see [`MidMessage`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Watch {
    Statements,
    Probe,
}

/// Asks the server, over a connection of its own, what connection `id` is
/// doing (see [`MidMessage`]). The asking connection waits no longer than
/// the message timeout.
fn ask_about(o: &Opts, id: u32) -> AskServer {
    let mut o = o.clone();
    let short = o.message_timeout;
    o.connect_timeout = o.connect_timeout.min(short);
    o.io_timeout = o.io_timeout.min(short);
    Box::new(move || session_of(&o, id))
}

/// Cancels what connection `id` runs: `KILL QUERY` over a connection of its
/// own, which waits no longer than the message timeout.
fn kill_query(o: &Opts, id: u32) -> inflight::Cancel {
    let mut o = o.clone();
    let short = o.message_timeout;
    o.connect_timeout = o.connect_timeout.min(short);
    o.io_timeout = o.io_timeout.min(short);
    std::sync::Arc::new(move || {
        if let Ok(mut c) = Client::connect_with(&o, Watch::Probe) {
            let _ = c.query(&format!("KILL QUERY {id}"));
        }
    })
}

/// What connection `id` is doing, by the process list. The asking
/// connection's own id must be what the server says it is: behind a proxy
/// that hands out ids of its own (ProxySQL, MaxScale), the answer is not
/// trusted.
fn session_of(o: &Opts, id: u32) -> Session {
    // A refusal the server sent is an answer (Unknown); a connection that
    // failed on the way is none (Unreachable).
    let mut c = match Client::connect_with(o, Watch::Probe) {
        Ok(c) => c,
        Err(e) if matches!(e.kind(), Kind::Broken | Kind::TimedOut) => {
            return Session::Unreachable(e.to_string());
        }
        Err(_) => return Session::Unknown,
    };
    let sql = format!(
        "SELECT CONNECTION_ID(), (SELECT COMMAND FROM information_schema.PROCESSLIST WHERE ID = {id})"
    );
    let rows = match c.query_rows(&sql) {
        Ok(rows) => rows,
        Err(e) if matches!(e.kind(), Kind::Broken | Kind::TimedOut) => {
            return Session::Unreachable(e.to_string());
        }
        Err(_) => return Session::Unknown,
    };
    let own = c.connection_id.to_string();
    match rows.first().map(Vec::as_slice) {
        // Sleep: waiting for the client's next command, or the rest of one.
        Some([Some(me), Some(command)]) if *me == own => {
            if command.eq_ignore_ascii_case("Sleep") {
                Session::WaitsForClient(format!("connection {id}: {command}"))
            } else {
                Session::Busy
            }
        }
        _ => Session::Unknown,
    }
}

impl Client<Stream> {
    /// Connects and authenticates.
    pub fn connect(o: &Opts) -> Result<Self> {
        Self::connect_with(o, Watch::Statements)
    }

    fn connect_with(o: &Opts, watch: Watch) -> Result<Self> {
        let stream = match &o.addr {
            Addr::Tcp { host, port } => Stream::Tcp(tcp_connect(host, *port, o)?),
            Addr::Unix(path) => {
                let s = UnixStream::connect(path).map_err(io_error)?;
                let fd = std::os::fd::AsRawFd::as_raw_fd(&s);
                evloop::new_fd(fd);
                set_timeouts(fd, o.io_timeout).map_err(io_error)?;
                Stream::Unix(s)
            }
        };
        let secure = matches!(o.addr, Addr::Unix(_));
        // The connect timeout bounds the handshake as a whole.
        let deadline = match &stream {
            Stream::Tcp(s) => s
                .try_clone()
                .ok()
                .and_then(|s| Deadline::watch(s, o.connect_timeout)),
            Stream::Unix(s) => s
                .try_clone()
                .ok()
                .and_then(|s| Deadline::watch(s, o.connect_timeout)),
            Stream::Tls(_) | Stream::Gone => None,
        };
        let mut c = Client::new(stream);
        let mut start = |s: &mut Stream| match &o.addr {
            Addr::Tcp { host, .. } => s.start_tls(&o.tls, host),
            Addr::Unix(_) => Err(Error::TlsOverUnix),
        };
        // As the mysql client: no TLS over a unix socket.
        let tls = match o.addr {
            Addr::Tcp { .. } if o.tls.mode() != Mode::Disable => Some(TlsStep {
                mode: o.tls.mode(),
                start: &mut start,
            }),
            _ => None,
        };
        let r = c.handshake(&o.user, &o.password, o.db.as_deref(), secure, tls, &o.keys);
        match (r, deadline) {
            (Err(e), Some(d)) if d.expired() => Err(Error::HandshakeTimedOut {
                limit: o.connect_timeout,
                source: Box::new(e),
            }),
            (r, _) => {
                r?;
                c.ready = true;
                if let Some(fd) = c.io.raw_fd() {
                    let ask = (watch == Watch::Statements).then(|| ask_about(o, c.connection_id));
                    c.mid = MidMessage::on(fd, o.io_timeout, o.message_timeout, ask)
                        .map_err(io_error)?;
                    if watch == Watch::Statements {
                        let cancel = kill_query(o, c.connection_id);
                        c.registered = Some(inflight::register(Some(fd), Some(cancel)));
                    }
                }
                Ok(c)
            }
        }
    }
}

impl Client<Stream> {
    /// What TLS the connection uses (`None`: plaintext or a unix socket).
    pub fn tls(&self) -> Option<TlsInfo> {
        match &self.io {
            Stream::Tls(s) => Some(TlsInfo::of(&s.conn)),
            _ => None,
        }
    }
}

/// How [`Client::handshake`] switches to TLS: the `ssl-mode`, and what runs
/// the TLS handshake on the socket once the SSLRequest is sent.
pub(crate) struct TlsStep<'a, S> {
    pub mode: Mode,
    pub start: &'a mut dyn FnMut(&mut S) -> Result<()>,
}

impl<S: Read + Write> Client<S> {
    fn new(io: S) -> Self {
        Client {
            registered: None,
            io,
            rbuf: vec![0; READ_BUF],
            rpos: 0,
            rend: 0,
            big: Vec::new(),
            wbuf: Vec::with_capacity(4096),
            seq: 0,
            caps: 0,
            ext_caps: 0,
            broken: true,
            ready: false,
            stmts: Vec::new(),
            metas: Default::default(),
            mid: MidMessage::off(),
            connection_id: 0,
            server_version: String::new(),
            auth_plugin: "",
        }
    }

    /// Whether the server is MariaDB (its handshake says so).
    pub fn is_mariadb(&self) -> bool {
        self.server_version.contains("MariaDB")
    }

    /// The authentication plugin the login used, as the server names it
    /// (`caching_sha2_password`, `mysql_native_password`, `client_ed25519`).
    pub fn auth_plugin(&self) -> &'static str {
        self.auth_plugin
    }

    /// Marks the connection broken when `r` says it is.
    #[inline]
    fn check<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r
            && matches!(e.kind(), Kind::Broken | Kind::TimedOut)
        {
            self.broken = true;
        }
        r
    }

    // ---- framing ----------------------------------------------------------

    /// Makes sure `rbuf[rpos..]` holds at least `n` bytes, reading as much as
    /// the socket has each time.
    #[inline(always)]
    fn fill(&mut self, n: usize) -> Result<()> {
        if self.rend - self.rpos >= n {
            return Ok(());
        }
        self.read_more(n)
    }

    #[inline(never)]
    fn read_more(&mut self, n: usize) -> Result<()> {
        while self.rend - self.rpos < n {
            if self.rpos == self.rend {
                self.rpos = 0;
                self.rend = 0;
            }
            if self.rpos + n > self.rbuf.len() {
                self.rbuf.copy_within(self.rpos..self.rend, 0);
                self.rend -= self.rpos;
                self.rpos = 0;
                if n > self.rbuf.len() {
                    self.rbuf.resize(n.next_power_of_two(), 0);
                }
            }
            // Bytes of a packet are in: the rest is due within the
            // mid-message deadline (a header is 4 bytes, so a packet's
            // payload always has its header in).
            if let Err(e) = self.mid.before_read(self.rend > self.rpos) {
                return Err(io_error(e));
            }
            match self.io.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => {
                    return Err(Error::Closed);
                }
                Ok(k) => {
                    self.rend += k;
                    self.mid.heard();
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => match self.mid.failed(e) {
                    Waited::Again => {}
                    Waited::Fail(e) => return Err(self.io_failure(e)),
                },
            }
        }
        self.mid.message_done();
        Ok(())
    }

    /// Reads one packet header and its payload; returns (start, len) of the
    /// payload in `rbuf` and consumes it.
    #[inline]
    fn frame(&mut self) -> Result<(usize, usize)> {
        self.fill(4)?;
        let h = &self.rbuf[self.rpos..self.rpos + 4];
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        let seq = h[3];
        // A header out of sequence is garbage: say so now rather than wait
        // for up to 16 MiB that will never come. An ERR packet may come out
        // of turn (a server that closes an idle connection says why with
        // sequence id 0), and it is short: accept that.
        if seq != self.seq && !(seq == 0 && len < 1024) {
            return Err(Error::OutOfOrder {
                got: seq,
                expected: self.seq,
            });
        }
        self.fill(4 + len)?;
        let start = self.rpos + 4;
        self.rpos = start + len;
        if seq != self.seq && !(len > 0 && self.rbuf[start] == 0xff) {
            return Err(Error::OutOfOrder {
                got: seq,
                expected: self.seq,
            });
        }
        self.seq = seq.wrapping_add(1);
        Ok((start, len))
    }

    /// The next packet's payload, valid until the next read.
    #[inline]
    fn next(&mut self) -> Result<&[u8]> {
        let (start, len) = self.frame()?;
        if len < MAX_PAYLOAD {
            return Ok(&self.rbuf[start..start + len]);
        }
        self.next_big(start)
    }

    /// A payload of 16 MiB or more, continued in further packets until one
    /// shorter than the maximum (possibly empty).
    #[cold]
    fn next_big(&mut self, start: usize) -> Result<&[u8]> {
        let mut big = std::mem::take(&mut self.big);
        big.clear();
        big.extend_from_slice(&self.rbuf[start..start + MAX_PAYLOAD]);
        loop {
            // No server sends more than max_allowed_packet, at most 1 GiB:
            // a longer chain of full packets is garbage, not a reply.
            if big.len() > MAX_REPLY {
                return Err(Error::Oversized);
            }
            let (s, len) = self.frame()?;
            big.extend_from_slice(&self.rbuf[s..s + len]);
            if len < MAX_PAYLOAD {
                break;
            }
        }
        self.big = big;
        Ok(&self.big)
    }

    /// Starts a packet of a new exchange (sequence id 0) in `wbuf`.
    #[inline]
    fn begin_command(&mut self, cmd: u8) -> Result<()> {
        if self.broken {
            return Err(Error::Unusable);
        }
        if self.rpos != self.rend {
            return Err(Error::Unexpected);
        }
        self.rpos = 0;
        self.rend = 0;
        self.seq = 0;
        self.wbuf.clear();
        self.wbuf.extend_from_slice(&[0, 0, 0, 0, cmd]);
        Ok(())
    }

    /// Starts a packet that continues the current exchange.
    fn begin_packet(&mut self) {
        self.wbuf.clear();
        self.wbuf.extend_from_slice(&[0, 0, 0, 0]);
    }

    /// Sends the packet in `wbuf`, split if its payload is 16 MiB or more.
    #[inline]
    fn send(&mut self) -> Result<()> {
        let len = self.wbuf.len() - 4;
        if len >= MAX_PAYLOAD {
            return self.send_big();
        }
        self.wbuf[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
        self.wbuf[3] = self.seq;
        self.seq = self.seq.wrapping_add(1);
        let r = self.io.write_all(&self.wbuf);
        r.map_err(|e| self.io_failure(e))
    }

    /// An I/O error: past the handshake, a timeout is the statement
    /// timeout (see [`crate::engine::Timeouts`]).
    fn io_failure(&self, e: io::Error) -> Error {
        let timeout = matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        );
        if timeout && self.ready {
            Error::TimedOut {
                limit: self.mid.statement_timeout(),
                source: e,
            }
        } else {
            io_error(e)
        }
    }

    #[cold]
    fn send_big(&mut self) -> Result<()> {
        let payload = &self.wbuf[4..];
        let mut out = Vec::with_capacity(payload.len() + 4 * (payload.len() / MAX_PAYLOAD + 1));
        let mut rest = payload;
        loop {
            let n = rest.len().min(MAX_PAYLOAD);
            out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
            out.push(self.seq);
            self.seq = self.seq.wrapping_add(1);
            out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            // A chunk of exactly the maximum says "more follows": end with
            // a shorter (possibly empty) one.
            if n < MAX_PAYLOAD {
                break;
            }
        }
        self.io.write_all(&out).map_err(io_error)
    }

    // ---- connection phase -------------------------------------------------

    /// The connection phase. `secure`: the channel is safe for a cleartext
    /// password (a unix socket); a TLS upgrade through `tls` makes it so too.
    fn handshake(
        &mut self,
        user: &str,
        password: &str,
        db: Option<&str>,
        secure: bool,
        tls: Option<TlsStep<'_, S>>,
        keys: &KeyOpts,
    ) -> Result<()> {
        self.seq = 0;
        let hs = parse_handshake(self.next()?)?;
        self.connection_id = hs.connection_id;
        if hs.caps & CLIENT_PROTOCOL_41 == 0 || hs.caps & CLIENT_SECURE_CONNECTION == 0 {
            return Err(Error::NotProtocol41 {
                version: hs.version,
            });
        }
        let mut caps = WANTED & hs.caps;
        if db.is_some() {
            caps |= CLIENT_CONNECT_WITH_DB & hs.caps;
        }
        // MariaDB (no CLIENT_MYSQL bit): its extended capabilities go in the
        // last 4 filler bytes. Metadata caching only with DEPRECATE_EOF, so
        // a skipped metadata block never leaves an EOF packet to guess about.
        let mariadb = hs.caps & CLIENT_LONG_PASSWORD == 0;
        let ext = if mariadb && caps & CLIENT_DEPRECATE_EOF != 0 {
            hs.ext_caps & MARIADB_CLIENT_CACHE_METADATA
        } else {
            0
        };
        // A plugin we do not know: answer as mysql_native_password and let
        // the server switch us to what the account needs.
        let plugin = match hs.plugin.as_str() {
            CACHING_SHA2 => CACHING_SHA2,
            SHA256 => SHA256,
            _ => NATIVE,
        };
        let tls_offered = hs.caps & CLIENT_SSL != 0;
        let mut secure = secure;
        let mut tls_used = false;
        if let Some(t) = tls {
            if tls_offered {
                caps |= CLIENT_SSL;
                // SSLRequest: the handshake response's first 32 bytes, in the clear.
                self.begin_packet();
                let w = &mut self.wbuf;
                w.extend_from_slice(&caps.to_le_bytes());
                w.extend_from_slice(&MAX_PACKET.to_le_bytes());
                w.push(UTF8MB4);
                w.extend_from_slice(&[0; 19]);
                w.extend_from_slice(&ext.to_le_bytes());
                self.send()?;
                (t.start)(&mut self.io)?;
                secure = true;
                tls_used = true;
            } else if t.mode.required() {
                return Err(Error::TlsNotOffered {
                    version: hs.version,
                    option: tls::Flavor::Mysql.mode_option(t.mode),
                });
            }
        }

        // After any TLS upgrade: sha256_password sends the password itself
        // over a secure channel.
        let auth = first_response(plugin, password.as_bytes(), &hs.scramble, secure, keys)?;
        self.begin_packet();
        let w = &mut self.wbuf;
        w.extend_from_slice(&caps.to_le_bytes());
        w.extend_from_slice(&MAX_PACKET.to_le_bytes());
        w.push(UTF8MB4);
        w.extend_from_slice(&[0; 19]);
        w.extend_from_slice(&ext.to_le_bytes());
        w.extend_from_slice(user.as_bytes());
        w.push(0);
        if caps & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
            put_lenenc(w, auth.len() as u64);
        } else {
            w.push(auth.len() as u8);
        }
        w.extend_from_slice(&auth);
        if caps & CLIENT_CONNECT_WITH_DB != 0 {
            w.extend_from_slice(db.unwrap_or_default().as_bytes());
            w.push(0);
        }
        if caps & CLIENT_PLUGIN_AUTH != 0 {
            w.extend_from_slice(plugin.as_bytes());
            w.push(0);
        }
        self.send()?;
        self.caps = caps;
        self.ext_caps = ext;
        self.server_version = hs.version.clone();
        let r = self.authenticate(user, password, plugin, hs.scramble, secure, keys);
        self.auth_plugin = r.as_ref().copied().unwrap_or(plugin);
        r.map_err(|e| match e {
            // MariaDB answers "Access denied" also to an account that
            // demands TLS: say what else it can mean.
            e @ Error::Server { .. } => tls_hint(e, tls_offered && !tls_used),
            e => e,
        })?;
        self.broken = false;
        if let (Some(db), 0) = (db, caps & CLIENT_CONNECT_WITH_DB) {
            self.query(&format!("USE `{}`", db.replace('`', "``")))?;
        }
        Ok(())
    }

    /// The authentication exchange after the handshake response, until the
    /// server's OK: auth switches, the fast and full `caching_sha2_password`
    /// paths, the RSA key exchange, `client_ed25519`.
    fn authenticate(
        &mut self,
        user: &str,
        password: &str,
        mut plugin: &'static str,
        mut scramble: Vec<u8>,
        secure: bool,
        keys: &KeyOpts,
    ) -> Result<&'static str> {
        // We asked the server for its RSA public key and wait for it.
        let mut awaiting_key = plugin == SHA256 && sha256_requests_key(password, secure, keys);
        loop {
            let b = self.next()?;
            match b.first() {
                Some(0x00) => return Ok(plugin),
                Some(0xff) => {
                    return Err(match parse_err(b) {
                        Error::Server {
                            code,
                            state,
                            message,
                        } if code == 1045 => Error::Server {
                            code,
                            state,
                            message: format!(
                                "{message} (authentication plugin {plugin}; check the user and the \
                                 password: the URL's, else --password-file's, else $MYSQL_PWD)"
                            ),
                        },
                        e => e,
                    });
                }
                Some(0xfe) => {
                    // AuthSwitchRequest: plugin name, then its data.
                    let mut r = Reader(&b[1..]);
                    let name = r.nul_str().unwrap_or_default();
                    let name = String::from_utf8_lossy(name).into_owned();
                    let data = r.0.to_vec();
                    plugin = match name.as_str() {
                        NATIVE => NATIVE,
                        CACHING_SHA2 => CACHING_SHA2,
                        SHA256 => SHA256,
                        ED25519 => ED25519,
                        _ => return Err(unsupported_plugin(&name, user)),
                    };
                    let auth = if plugin == ED25519 {
                        // 32 random bytes, no terminating NUL.
                        let nonce = data.get(..32).ok_or_else(|| malformed("ed25519 nonce"))?;
                        scramble = nonce.to_vec();
                        auth::ed25519_sign(password.as_bytes(), nonce)
                    } else {
                        scramble = data[..data.len().min(20)].to_vec();
                        awaiting_key =
                            plugin == SHA256 && sha256_requests_key(password, secure, keys);
                        first_response(plugin, password.as_bytes(), &scramble, secure, keys)?
                    };
                    self.begin_packet();
                    self.wbuf.extend_from_slice(&auth);
                    self.send()?;
                }
                // AuthMoreData with the PEM key we asked for.
                Some(0x01) if awaiting_key => {
                    let key = auth::parse_public_key(&b[1..])
                        .map_err(|source| Error::NoServerKey { plugin, source })?;
                    let c = auth::encrypt_password(password.as_bytes(), &scramble, &key)
                        .map_err(|source| Error::Encrypt { plugin, source })?;
                    awaiting_key = false;
                    self.begin_packet();
                    self.wbuf.extend_from_slice(&c);
                    self.send()?;
                }
                Some(0x01) if plugin == CACHING_SHA2 => match b.get(1) {
                    // Fast authentication succeeded; an OK packet follows.
                    Some(3) => {}
                    // Full authentication: the password itself over a
                    // secure transport, else encrypted with the RSA key.
                    Some(4) => {
                        let reply = if secure {
                            let mut p = password.as_bytes().to_vec();
                            p.push(0);
                            p
                        } else if let Some(key) = &keys.server_public_key {
                            let key = auth::parse_public_key(key.as_bytes()).map_err(|source| {
                                Error::KeyFile {
                                    plugin: CACHING_SHA2,
                                    source,
                                }
                            })?;
                            auth::encrypt_password(password.as_bytes(), &scramble, &key).map_err(
                                |source| Error::Encrypt {
                                    plugin: CACHING_SHA2,
                                    source,
                                },
                            )?
                        } else if keys.get_server_public_key {
                            awaiting_key = true;
                            vec![2]
                        } else {
                            return Err(Error::FullAuthInPlaintext {
                                user: user.to_string(),
                            });
                        };
                        self.begin_packet();
                        self.wbuf.extend_from_slice(&reply);
                        self.send()?;
                    }
                    _ => return Err(malformed("caching_sha2_password state")),
                },
                Some(_) => {
                    return Err(Error::UnexpectedAuthPacket { plugin });
                }
                None => return Err(malformed("empty packet during authentication")),
            }
        }
    }

    // ---- commands ---------------------------------------------------------

    /// Reads the response to a command: every result set. A statement that
    /// returned columns gives `Rows` (rows of all sets); otherwise the sum of
    /// the affected-row counts. `on_row` sees each row packet.
    #[inline]
    fn results<F: FnMut(&[u8]) -> Result<()>>(&mut self, mut on_row: F) -> Result<Outcome> {
        let deprecate_eof = self.caps & CLIENT_DEPRECATE_EOF != 0;
        let cache_meta = self.ext_caps & MARIADB_CLIENT_CACHE_METADATA != 0;
        let (mut rows, mut affected, mut has_rows) = (0u64, 0u64, false);
        loop {
            let b = self.next()?;
            let status = match b.first() {
                Some(0x00) => {
                    let (n, status) = parse_ok(b)?;
                    affected += n;
                    status
                }
                Some(0xff) => return Err(parse_err(b)),
                Some(0xfb) => {
                    // We never offer CLIENT_LOCAL_FILES; a server asking
                    // anyway expects a reply we do not send.
                    return Err(Error::LocalInfile);
                }
                None => return Err(malformed("empty response")),
                Some(_) => {
                    let mut r = Reader(b);
                    let columns = r.lenenc()?.ok_or_else(|| malformed("column count"))?;
                    // MariaDB metadata caching: a 0 after the count says the
                    // column definitions are skipped.
                    let skipped = cache_meta && r.0.first() == Some(&0);
                    if !skipped {
                        for _ in 0..columns {
                            self.next()?;
                        }
                    }
                    if !deprecate_eof {
                        self.next()?;
                    }
                    has_rows = true;
                    loop {
                        let b = self.next()?;
                        match b.first() {
                            // EOF, or with DEPRECATE_EOF an OK packet with
                            // the 0xfe header. (A text row can start with
                            // 0xfe only for a value of 16 MiB or more.)
                            Some(0xfe) if b.len() < MAX_PAYLOAD => {
                                break parse_end(b, deprecate_eof)?;
                            }
                            Some(0xff) => return Err(parse_err(b)),
                            Some(_) => {
                                rows += 1;
                                on_row(b)?;
                            }
                            None => return Err(malformed("empty row")),
                        }
                    }
                }
            };
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                break;
            }
        }
        Ok(if has_rows {
            Outcome::Rows(rows)
        } else {
            Outcome::Affected(affected)
        })
    }

    /// Reads the response to a command as [`Client::results`] does, keeping
    /// the values of the rows of its first result set in `out`: binary rows
    /// typed by the definitions sent with them, else by `prepared`; text
    /// rows as they are.
    fn results_into(
        &mut self,
        prepared: &[ColMeta],
        binary: bool,
        out: &mut Rows,
    ) -> Result<Outcome> {
        let deprecate_eof = self.caps & CLIENT_DEPRECATE_EOF != 0;
        let cache_meta = self.ext_caps & MARIADB_CLIENT_CACHE_METADATA != 0;
        let (mut rows, mut affected, mut has_rows) = (0u64, 0u64, false);
        out.reset(0);
        loop {
            let b = self.next()?;
            let status = match b.first() {
                Some(0x00) => {
                    let (n, status) = parse_ok(b)?;
                    affected += n;
                    status
                }
                Some(0xff) => return Err(parse_err(b)),
                Some(0xfb) => {
                    return Err(Error::LocalInfile);
                }
                None => return Err(malformed("empty response")),
                Some(_) => {
                    let mut r = Reader(b);
                    let columns = r.lenenc()?.ok_or_else(|| malformed("column count"))? as usize;
                    let skipped = cache_meta && r.0.first() == Some(&0);
                    // The prepared definitions are borrowed, not copied: an
                    // allocation an execute when the server caches them.
                    let metas: std::borrow::Cow<'_, [ColMeta]> = if !skipped {
                        let mut sent = Vec::with_capacity(columns);
                        for _ in 0..columns {
                            let b = self.next()?;
                            sent.push(parse_coldef(b)?);
                        }
                        sent.into()
                    } else {
                        prepared.into()
                    };
                    if binary && metas.len() != columns {
                        return Err(malformed("result columns without their types"));
                    }
                    if !deprecate_eof {
                        self.next()?;
                    }
                    let first = !has_rows;
                    if first {
                        out.reset(columns);
                    }
                    has_rows = true;
                    loop {
                        let b = self.next()?;
                        match b.first() {
                            Some(0xfe) if b.len() < MAX_PAYLOAD => {
                                break parse_end(b, deprecate_eof)?;
                            }
                            Some(0xff) => return Err(parse_err(b)),
                            Some(_) => {
                                rows += 1;
                                if first && binary {
                                    push_binary_row(b, &metas, out)?;
                                } else if first {
                                    push_text_row(b, columns, out)?;
                                }
                            }
                            None => return Err(malformed("empty row")),
                        }
                    }
                }
            };
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                break;
            }
        }
        Ok(if has_rows {
            Outcome::Rows(rows)
        } else {
            Outcome::Affected(affected)
        })
    }

    /// Runs `sql` (text protocol), keeping the values of its rows in `out`.
    pub fn query_into(&mut self, sql: &str, out: &mut Rows) -> Result<Outcome> {
        let r = self
            .send_query(sql)
            .and_then(|_| self.results_into(&[], false, out));
        self.check(r)
    }

    fn send_query(&mut self, sql: &str) -> Result<()> {
        self.begin_command(COM_QUERY)?;
        self.wbuf.extend_from_slice(sql.as_bytes());
        self.send()
    }

    /// Runs `sql` (text protocol), reading every row.
    pub fn query(&mut self, sql: &str) -> Result<Outcome> {
        let r = self.send_query(sql).and_then(|_| self.results(|_| Ok(())));
        self.check(r)
    }

    /// Runs `sql` and returns the first column of its first row as text
    /// (`None` for no row or NULL).
    pub fn query_scalar(&mut self, sql: &str) -> Result<Option<String>> {
        let mut first: Option<Option<String>> = None;
        let r = self.send_query(sql).and_then(|_| {
            self.results(|row| {
                if first.is_none() {
                    let v = Reader(row).lenenc_bytes()?;
                    first = Some(v.map(|v| String::from_utf8_lossy(v).into_owned()));
                }
                Ok(())
            })
        });
        self.check(r)?;
        Ok(first.flatten())
    }

    /// Runs `sql` and returns every row, each column as text (`None` for
    /// NULL).
    pub fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        let mut rows = Vec::new();
        let r = self.send_query(sql).and_then(|_| {
            self.results(|row| {
                let mut r = Reader(row);
                let mut v = Vec::new();
                while !r.0.is_empty() {
                    v.push(
                        r.lenenc_bytes()?
                            .map(|s| String::from_utf8_lossy(s).into_owned()),
                    );
                }
                rows.push(v);
                Ok(())
            })
        });
        self.check(r)?;
        Ok(rows)
    }

    /// Runs `sql` (text protocol) and returns the names of its first
    /// result's columns as the server sent them (`rqps compat` compares
    /// them); the rows are read and dropped.
    pub fn query_column_names(&mut self, sql: &str) -> Result<Vec<String>> {
        let mut names = Vec::new();
        let r = self
            .send_query(sql)
            .and_then(|_| self.results_named(&mut names));
        self.check(r)?;
        Ok(names)
    }

    /// Reads the response to a text query, keeping the column names of its
    /// first result set in `names`.
    fn results_named(&mut self, names: &mut Vec<String>) -> Result<()> {
        let deprecate_eof = self.caps & CLIENT_DEPRECATE_EOF != 0;
        let mut first = true;
        loop {
            let b = self.next()?;
            let status = match b.first() {
                Some(0x00) => parse_ok(b)?.1,
                Some(0xff) => return Err(parse_err(b)),
                Some(0xfb) => {
                    return Err(Error::LocalInfile);
                }
                None => return Err(malformed("empty response")),
                Some(_) => {
                    let columns = Reader(b)
                        .lenenc()?
                        .ok_or_else(|| malformed("column count"))?
                        as usize;
                    for _ in 0..columns {
                        let b = self.next()?;
                        if first {
                            names.push(coldef_name(b)?);
                        }
                    }
                    first = false;
                    if !deprecate_eof {
                        self.next()?;
                    }
                    loop {
                        let b = self.next()?;
                        match b.first() {
                            Some(0xfe) if b.len() < MAX_PAYLOAD => {
                                break parse_end(b, deprecate_eof)?;
                            }
                            Some(0xff) => return Err(parse_err(b)),
                            Some(_) => {}
                            None => return Err(malformed("empty row")),
                        }
                    }
                }
            };
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(());
            }
        }
    }

    fn prepare_inner(&mut self, sql: &str) -> Result<Stmt> {
        self.begin_command(COM_STMT_PREPARE)?;
        self.wbuf.extend_from_slice(sql.as_bytes());
        self.send()?;
        let b = self.next()?;
        match b.first() {
            Some(0x00) => {}
            Some(0xff) => return Err(parse_err(b)),
            _ => return Err(malformed("prepare response")),
        }
        let mut r = Reader(&b[1..]);
        let id = r.u32()?;
        let columns = r.u16()?;
        let params = r.u16()?;
        let deprecate_eof = self.caps & CLIENT_DEPRECATE_EOF != 0;
        let mut metas = Vec::with_capacity(columns as usize);
        for (n, keep) in [(params, false), (columns, true)] {
            for _ in 0..n {
                let b = self.next()?;
                if keep {
                    metas.push(parse_coldef(b)?);
                }
            }
            if n > 0 && !deprecate_eof {
                self.next()?;
            }
        }
        self.stmts.push(id);
        if columns > 0 {
            self.metas.insert(id, metas);
        }
        Ok(Stmt {
            id,
            params,
            columns,
        })
    }

    /// Prepares `sql` on the server (binary protocol).
    pub fn prepare(&mut self, sql: &str) -> Result<Stmt> {
        let r = self.prepare_inner(sql);
        self.check(r)
    }

    #[inline]
    fn execute_inner(&mut self, st: &Stmt, params: &[Param<'_>]) -> Result<Outcome> {
        self.send_execute(st, params)?;
        self.results(|_| Ok(()))
    }

    /// Executes a prepared statement, keeping the values of its rows in `out`.
    pub fn execute_rows(
        &mut self,
        st: &Stmt,
        params: &[Param<'_>],
        out: &mut Rows,
    ) -> Result<Outcome> {
        if params.len() != st.params as usize {
            return Err(Error::Parameters {
                takes: st.params,
                given: params.len(),
            });
        }
        // The map is lent out for the call (a move, no rehash), the
        // statement's types read in place.
        let metas = std::mem::take(&mut self.metas);
        let prepared = metas.get(&st.id).map_or(&[][..], Vec::as_slice);
        let r = self
            .send_execute(st, params)
            .and_then(|_| self.results_into(prepared, true, out));
        self.metas = metas;
        self.check(r)
    }

    #[inline]
    fn send_execute(&mut self, st: &Stmt, params: &[Param<'_>]) -> Result<()> {
        self.begin_command(COM_STMT_EXECUTE)?;
        let w = &mut self.wbuf;
        w.extend_from_slice(&st.id.to_le_bytes());
        // No cursor, one iteration.
        w.extend_from_slice(&[0, 1, 0, 0, 0]);
        if !params.is_empty() {
            // NULL bitmap, then "types follow" and the types: sent every
            // time, which costs 2 bytes a parameter and keeps the server
            // from ever using stale ones.
            let bitmap = w.len();
            w.resize(bitmap + params.len().div_ceil(8), 0);
            for (i, p) in params.iter().enumerate() {
                if matches!(p, Param::Null) {
                    w[bitmap + i / 8] |= 1 << (i % 8);
                }
            }
            w.push(1);
            for p in params {
                w.extend_from_slice(match p {
                    Param::Int(_) => &[TYPE_LONGLONG, 0],
                    Param::Text(_) => &[TYPE_VAR_STRING, 0],
                    Param::Null => &[TYPE_NULL, 0],
                });
            }
            for p in params {
                match *p {
                    Param::Null => {}
                    Param::Int(v) => w.extend_from_slice(&v.to_le_bytes()),
                    Param::Text(s) => {
                        put_lenenc(w, s.len() as u64);
                        w.extend_from_slice(s.as_bytes());
                    }
                }
            }
        }
        self.send()
    }

    /// Executes a prepared statement with `params`, counting its rows.
    #[inline]
    pub fn execute(&mut self, st: &Stmt, params: &[Param<'_>]) -> Result<Outcome> {
        if params.len() != st.params as usize {
            return Err(Error::Parameters {
                takes: st.params,
                given: params.len(),
            });
        }
        let r = self.execute_inner(st, params);
        self.check(r)
    }
}

impl<S: Read + Write> Drop for Client<S> {
    /// Best effort: closes the statements and says goodbye in one write.
    fn drop(&mut self) {
        if self.broken {
            return;
        }
        let w = &mut self.wbuf;
        w.clear();
        for id in &self.stmts {
            w.extend_from_slice(&[5, 0, 0, 0, COM_STMT_CLOSE]);
            w.extend_from_slice(&id.to_le_bytes());
        }
        w.extend_from_slice(&[1, 0, 0, 0, COM_QUIT]);
        let _ = self.io.write_all(w);
    }
}

/// The hasher of statement ids (the server's small numbers): a multiply,
/// where the default SipHash cost about 120 instructions an execute.
#[derive(Clone, Copy, Default)]
struct StmtIds;

impl std::hash::BuildHasher for StmtIds {
    type Hasher = StmtIdHasher;
    fn build_hasher(&self) -> StmtIdHasher {
        StmtIdHasher(0)
    }
}

struct StmtIdHasher(u64);

impl std::hash::Hasher for StmtIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ u64::from(n)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

// ---- packets ---------------------------------------------------------------

fn unsupported_plugin(name: &str, user: &str) -> Error {
    Error::UnsupportedPlugin {
        user: user.to_string(),
        plugin: name.to_string(),
    }
}

/// Whether `sha256_password` asks the server for its RSA key: over
/// plaintext, with a password, and no key file (as the mysql client does).
fn sha256_requests_key(password: &str, secure: bool, keys: &KeyOpts) -> bool {
    !password.is_empty() && !secure && keys.server_public_key.is_none()
}

/// The first answer of `plugin` to the server's scramble: the hashed
/// scramble, or for `sha256_password` the password itself over a secure
/// transport, RSA-encrypted with a known key, or a request for the key (1).
fn first_response(
    plugin: &str,
    password: &[u8],
    scramble: &[u8],
    secure: bool,
    keys: &KeyOpts,
) -> Result<Vec<u8>> {
    if plugin != SHA256 {
        return auth_response(plugin, password, scramble);
    }
    if password.is_empty() {
        return Ok(vec![0]);
    }
    if secure {
        let mut p = password.to_vec();
        p.push(0);
        return Ok(p);
    }
    match &keys.server_public_key {
        Some(pem) => {
            let key = auth::parse_public_key(pem.as_bytes()).map_err(|source| Error::KeyFile {
                plugin: SHA256,
                source,
            })?;
            auth::encrypt_password(password, &scramble[..scramble.len().min(20)], &key).map_err(
                |source| Error::Encrypt {
                    plugin: SHA256,
                    source,
                },
            )
        }
        None => Ok(vec![1]),
    }
}

fn auth_response(plugin: &str, password: &[u8], scramble: &[u8]) -> Result<Vec<u8>> {
    let scramble = &scramble[..scramble.len().min(20)];
    Ok(match plugin {
        NATIVE => native_password(password, scramble),
        CACHING_SHA2 => caching_sha2_password(password, scramble),
        other => return Err(unsupported_plugin(other, "?")),
    })
}

/// `SHA1(password) XOR SHA1(scramble + SHA1(SHA1(password)))`; empty for an
/// empty password.
pub(crate) fn native_password(password: &[u8], scramble: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let s1 = Sha1::digest(password);
    let s2 = Sha1::digest(s1);
    let mut h = Sha1::new();
    h.update(scramble);
    h.update(s2);
    let m = h.finalize();
    s1.iter().zip(m.iter()).map(|(a, b)| a ^ b).collect()
}

/// `SHA256(password) XOR SHA256(SHA256(SHA256(password)) + scramble)`;
/// empty for an empty password.
pub(crate) fn caching_sha2_password(password: &[u8], scramble: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let d1 = Sha256::digest(password);
    let d2 = Sha256::digest(d1);
    let mut h = Sha256::new();
    h.update(d2);
    h.update(scramble);
    let m = h.finalize();
    d1.iter().zip(m.iter()).map(|(a, b)| a ^ b).collect()
}

struct Handshake {
    version: String,
    connection_id: u32,
    caps: u32,
    ext_caps: u32,
    scramble: Vec<u8>,
    plugin: String,
}

fn parse_handshake(b: &[u8]) -> Result<Handshake> {
    let mut r = Reader(b);
    match r.u8()? {
        10 => {}
        0xff => return Err(parse_err(b)),
        v => {
            return Err(Error::ProtocolVersion(v));
        }
    }
    let version = String::from_utf8_lossy(r.nul_str()?).into_owned();
    let connection_id = r.u32()?;
    let mut scramble = r.take(8)?.to_vec();
    r.u8()?;
    let mut caps = r.u16()? as u32;
    let mut ext_caps = 0;
    let mut plugin = String::new();
    if !r.0.is_empty() {
        let _charset = r.u8()?;
        let _status = r.u16()?;
        caps |= (r.u16()? as u32) << 16;
        let auth_len = r.u8()? as usize;
        let reserved = r.take(10)?;
        if caps & CLIENT_LONG_PASSWORD == 0 {
            ext_caps = u32::from_le_bytes([reserved[6], reserved[7], reserved[8], reserved[9]]);
        }
        if caps & CLIENT_SECURE_CONNECTION != 0 {
            let n = auth_len.saturating_sub(8).max(13).min(r.0.len());
            scramble.extend_from_slice(r.take(n)?);
            if scramble.len() > 20 && scramble.last() == Some(&0) {
                scramble.pop();
            }
        }
        if caps & CLIENT_PLUGIN_AUTH != 0 {
            // Some old servers omit the final NUL.
            let name = r.nul_str().unwrap_or(r.0);
            plugin = String::from_utf8_lossy(name).into_owned();
        }
    }
    Ok(Handshake {
        connection_id,
        version,
        caps,
        ext_caps,
        scramble,
        plugin,
    })
}

/// An OK packet (header 0x00 or 0xfe): (affected rows, status flags).
fn parse_ok(b: &[u8]) -> Result<(u64, u16)> {
    let mut r = Reader(&b[1..]);
    let affected = r.lenenc()?.unwrap_or(0);
    let _last_insert_id = r.lenenc()?;
    let status = r.u16()?;
    Ok((affected, status))
}

/// The packet after the rows: the status flags.
fn parse_end(b: &[u8], deprecate_eof: bool) -> Result<u16> {
    if deprecate_eof {
        return Ok(parse_ok(b)?.1);
    }
    let mut r = Reader(&b[1..]);
    let _warnings = r.u16()?;
    r.u16()
}

/// An ERR packet: the error number, then under protocol 4.1 `#` and the
/// SQLSTATE's five characters, then the message. Before the handshake it
/// has no SQL state.
fn parse_err(b: &[u8]) -> Error {
    let mut r = Reader(b.get(1..).unwrap_or_default());
    let Ok(code) = r.u16() else {
        return malformed("ERR packet");
    };
    let mut msg = r.0;
    let mut state = None;
    if let [b'#', s @ ..] = msg
        && s.len() >= 5
    {
        state = SqlState::parse(&s[..5]);
        msg = &s[5..];
    }
    Error::Server {
        code,
        state,
        message: String::from_utf8_lossy(msg).into_owned(),
    }
}

/// A plaintext login refused by a server that offers TLS may be one that
/// demands it (an account with REQUIRE SSL, or require_secure_transport):
/// MariaDB then says only "Access denied", as for a wrong password. Say
/// what else it can mean, and the remedy. `plain_but_offered`: the server
/// offered TLS and this connection did not use it.
fn tls_hint(e: Error, plain_but_offered: bool) -> Error {
    match e {
        Error::Server {
            code,
            state,
            message,
        } if message.contains("secure transport") => Error::Server {
            code,
            state,
            message: format!(
                "the server requires TLS and rqps connected without it (ssl-mode=DISABLED): use \
                 ssl-mode=REQUIRED, or VERIFY_IDENTITY with ssl-ca=CA_FILE ({message})"
            ),
        },
        Error::Server {
            code,
            state,
            message,
        } if code == 1045 && plain_but_offered => Error::Server {
            code,
            state,
            message: format!(
                "{message}; if the password is right, the server or the account requires TLS \
                 (require_secure_transport, which MariaDB reports as a denied access, or REQUIRE \
                 SSL) and rqps connected without it (ssl-mode=DISABLED): use ssl-mode=REQUIRED"
            ),
        },
        e => e,
    }
}

fn put_lenenc(w: &mut Vec<u8>, n: u64) {
    if n < 251 {
        w.push(n as u8);
    } else if n < 1 << 16 {
        w.push(0xfc);
        w.extend_from_slice(&(n as u16).to_le_bytes());
    } else if n < 1 << 24 {
        w.push(0xfd);
        w.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
    } else {
        w.push(0xfe);
        w.extend_from_slice(&n.to_le_bytes());
    }
}

/// A cursor over a payload; every read fails cleanly past the end.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(malformed("truncated"));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A length-encoded integer; `None` for the NULL marker 0xfb.
    #[inline]
    fn lenenc(&mut self) -> Result<Option<u64>> {
        let n = match self.u8()? {
            x @ 0..=0xfa => x as u64,
            0xfb => return Ok(None),
            0xfc => self.u16()? as u64,
            0xfd => {
                let b = self.take(3)?;
                u32::from_le_bytes([b[0], b[1], b[2], 0]) as u64
            }
            0xfe => {
                let b = self.take(8)?;
                u64::from_le_bytes(b.try_into().unwrap_or_default())
            }
            0xff => return Err(malformed("length")),
        };
        Ok(Some(n))
    }
    /// A length-encoded string; `None` for NULL.
    fn lenenc_bytes(&mut self) -> Result<Option<&'a [u8]>> {
        match self.lenenc()? {
            None => Ok(None),
            Some(n) => Ok(Some(self.take(usize::try_from(n).unwrap_or(usize::MAX))?)),
        }
    }
    /// Bytes up to a NUL, which is consumed.
    fn nul_str(&mut self) -> Result<&'a [u8]> {
        let n = self
            .0
            .iter()
            .position(|&c| c == 0)
            .ok_or_else(|| malformed("unterminated string"))?;
        let s = &self.0[..n];
        self.0 = &self.0[n + 1..];
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn binary_rows_decode_by_column_type() {
        let metas = [
            ColMeta {
                ty: 0x08,
                unsigned: false,
            },
            ColMeta {
                ty: 0xf6,
                unsigned: false,
            },
            ColMeta {
                ty: 0x03,
                unsigned: false,
            },
            ColMeta {
                ty: 0x0c,
                unsigned: false,
            },
        ];
        // header, bitmap (column 2 NULL: bit 4), -5, "12.50", 2026-11-23 10:20:30
        let mut row = vec![0u8, 0b0001_0000];
        row.extend_from_slice(&(-5i64).to_le_bytes());
        row.extend_from_slice(b"\x0512.50");
        row.extend_from_slice(&[7, 0xea, 0x07, 11, 23, 10, 20, 30]);
        let mut out = Rows::default();
        out.reset(4);
        push_binary_row(&row, &metas, &mut out).unwrap();
        assert_eq!(out.int(0, 0).unwrap(), -5);
        assert_eq!(out.num(0, 1).unwrap(), 12.5);
        assert_eq!(out.get(0, 2), None);
        assert_eq!(out.get(0, 3), Some("2026-11-23 10:20:30"));
        assert!(push_binary_row(&row[..5], &metas, &mut out).is_err());
    }

    /// A socket that hands out the given chunks one read at a time (each
    /// read gets at most one chunk) and records what is written.
    struct Fixture {
        chunks: VecDeque<Vec<u8>>,
        reads: usize,
        written: Vec<u8>,
    }

    impl Read for Fixture {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let Some(mut c) = self.chunks.pop_front() else {
                return Ok(0);
            };
            self.reads += 1;
            let n = c.len().min(buf.len());
            buf[..n].copy_from_slice(&c[..n]);
            if n < c.len() {
                self.chunks.push_front(c.split_off(n));
            }
            Ok(n)
        }
    }

    impl Write for Fixture {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Packet `seq` with `payload`, framed.
    fn pkt(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        v.push(seq);
        v.extend_from_slice(payload);
        v
    }

    /// Packets with sequence ids from `first`, concatenated.
    fn pkts(first: u8, payloads: &[&[u8]]) -> Vec<u8> {
        payloads
            .iter()
            .enumerate()
            .flat_map(|(i, p)| pkt(first + i as u8, p))
            .collect()
    }

    fn client(caps: u32, ext: u32, chunks: Vec<Vec<u8>>) -> Client<Fixture> {
        let mut c = Client::new(Fixture {
            chunks: chunks.into(),
            reads: 0,
            written: Vec::new(),
        });
        c.caps = caps;
        c.ext_caps = ext;
        c.broken = false;
        c
    }

    const BASE: u32 = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_MULTI_RESULTS;
    const NO_EOF: u32 = BASE | CLIENT_DEPRECATE_EOF;

    /// OK: affected rows 10000 (lenenc 0xfc), insert id 0, status, warnings.
    const OK_10000: &[u8] = &[0x00, 0xfc, 0x10, 0x27, 0x00, 0x02, 0x00, 0x00, 0x00];
    const COL_DEF: &[u8] = b"\x03def\x06sbtest\x07sbtest1\x07sbtest1\x01c\x01c\x0c\x2d\x00\xe0\x01\x00\x00\xfe\x00\x00\x00\x00\x00";
    const EOF: &[u8] = &[0xfe, 0x00, 0x00, 0x02, 0x00];
    const OK_END: &[u8] = &[0xfe, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00];

    #[test]
    fn ok_packet_with_lenenc_affected_rows() {
        let mut c = client(NO_EOF, 0, vec![pkt(1, OK_10000)]);
        assert_eq!(
            c.query("UPDATE t SET k=k+1").unwrap(),
            Outcome::Affected(10000)
        );
        // The command went out as one packet: length 19, sequence 0, COM_QUERY.
        assert_eq!(c.io.written, pkt(0, b"\x03UPDATE t SET k=k+1"));
        for (bytes, n) in [
            (&[0x00u8, 0xfd, 1, 2, 3, 0, 2, 0][..], 0x030201),
            (
                &[0x00, 0xfe, 1, 0, 0, 0, 0, 0, 0, 1, 0, 2, 0][..],
                (1 << 56) + 1,
            ),
            (&[0x00, 0xfa, 0, 2, 0][..], 250),
        ] {
            assert_eq!(parse_ok(bytes).unwrap(), (n, 2));
        }
        assert!(parse_ok(&[0x00, 0xfc, 1]).is_err());
    }

    #[test]
    fn err_packet_gives_code_state_and_message() {
        let err = b"\xff\x28\x04#42000You have an error in your SQL syntax";
        let mut c = client(NO_EOF, 0, vec![pkt(1, err)]);
        let e = c.query("SELEC 1").unwrap_err();
        let state = |s: &Option<SqlState>| s.map(|s| s.to_string());
        assert!(
            matches!(&e, Error::Server { code: 1064, state: s, message }
                if state(s).as_deref() == Some("42000") && message == "You have an error in your SQL syntax"),
            "{e:?}"
        );
        // A statement error leaves the connection usable.
        assert!(!c.broken);
        // A duplicate key: 23000, as sysbench's scripts read it.
        let e = parse_err(b"\xff\x26\x04#23000Duplicate entry '1' for key 'PRIMARY'");
        assert!(
            matches!(&e, Error::Server { code: 1062, state: s, message }
                if state(s).as_deref() == Some("23000") && message.starts_with("Duplicate entry")),
            "{e:?}"
        );
        // Before the handshake there is no SQL state; a '#' and too few
        // characters after it are the message's.
        for (packet, text) in [
            (
                &b"\xff\x10\x04Too many connections"[..],
                "Too many connections",
            ),
            (b"\xff\x10\x04#4200", "#4200"),
        ] {
            let e = parse_err(packet);
            assert!(
                matches!(&e, Error::Server { code: 1040, state: None, message } if message == text),
                "{e:?}"
            );
        }
    }

    #[test]
    fn result_sets_with_and_without_eof_packets() {
        let row: &[u8] = b"\x01a";
        // Classic framing: count, definitions, EOF, rows, EOF.
        let classic = pkts(1, &[b"\x01", COL_DEF, EOF, row, row, row, EOF]);
        let mut c = client(BASE, 0, vec![classic]);
        assert_eq!(c.query("SELECT c FROM t").unwrap(), Outcome::Rows(3));
        // DEPRECATE_EOF: no EOF after the definitions, an OK (0xfe) at the end.
        let modern = pkts(1, &[b"\x01", COL_DEF, row, row, OK_END]);
        let mut c = client(NO_EOF, 0, vec![modern]);
        assert_eq!(c.query("SELECT c FROM t").unwrap(), Outcome::Rows(2));
        // An empty result set is still rows (zero of them).
        let mut c = client(NO_EOF, 0, vec![pkts(1, &[b"\x01", COL_DEF, OK_END])]);
        assert_eq!(
            c.query("SELECT c FROM t WHERE 0").unwrap(),
            Outcome::Rows(0)
        );
        // MariaDB metadata caching: "0" after the count, no definitions.
        let mut c = client(
            NO_EOF,
            MARIADB_CLIENT_CACHE_METADATA,
            vec![pkts(1, &[b"\x01\x00", b"\x00\x00\x05", OK_END])],
        );
        let st = Stmt {
            id: 1,
            params: 0,
            columns: 1,
        };
        assert_eq!(c.execute(&st, &[]).unwrap(), Outcome::Rows(1));
        // ... and "1": the definitions follow.
        let mut c = client(
            NO_EOF,
            MARIADB_CLIENT_CACHE_METADATA,
            vec![pkts(1, &[b"\x01\x01", COL_DEF, b"\x00\x00\x05", OK_END])],
        );
        assert_eq!(c.execute(&st, &[]).unwrap(), Outcome::Rows(1));
        // An error after some rows.
        let err = b"\xff\xbd\x04#40001Deadlock found when trying to get lock";
        let mut c = client(NO_EOF, 0, vec![pkts(1, &[b"\x01", COL_DEF, row, err])]);
        assert!(matches!(
            c.query("SELECT c FROM t"),
            Err(Error::Server { code: 1213, .. })
        ));
    }

    #[test]
    fn multi_results_are_all_read() {
        // OK with SERVER_MORE_RESULTS_EXISTS, then a result set, then OK.
        let more_ok: &[u8] = &[0x00, 0x01, 0x00, 0x0a, 0x00, 0x00, 0x00];
        let more_end: &[u8] = &[0xfe, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00];
        let last_ok: &[u8] = &[0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00];
        let bytes = pkts(1, &[more_ok, b"\x01", COL_DEF, b"\x01x", more_end, last_ok]);
        let mut c = client(NO_EOF, 0, vec![bytes]);
        assert_eq!(
            c.query("UPDATE t SET a=1; SELECT c FROM t; DO 1").unwrap(),
            Outcome::Rows(1)
        );
        assert_eq!(c.rpos, c.rend, "everything consumed");
        let bytes = pkts(1, &[more_ok, last_ok]);
        let mut c = client(NO_EOF, 0, vec![bytes]);
        assert_eq!(c.query("DELETE ...; DO 1").unwrap(), Outcome::Affected(1));
    }

    #[test]
    fn packets_split_across_reads() {
        let bytes = pkts(1, &[b"\x01", COL_DEF, b"\x01a", b"\x01b", OK_END]);
        // Every split point, including inside a header.
        for cut in 1..bytes.len() {
            let mut c = client(
                NO_EOF,
                0,
                vec![bytes[..cut].to_vec(), bytes[cut..].to_vec()],
            );
            assert_eq!(
                c.query("SELECT c FROM t").unwrap(),
                Outcome::Rows(2),
                "cut {cut}"
            );
            assert_eq!(c.io.reads, 2);
        }
        // One byte at a time.
        let mut c = client(NO_EOF, 0, bytes.iter().map(|&b| vec![b]).collect());
        assert_eq!(c.query_scalar("SELECT c FROM t").unwrap(), Some("a".into()));
        // All in one read: one read only.
        let mut c = client(NO_EOF, 0, vec![bytes.clone()]);
        assert_eq!(c.query("SELECT c FROM t").unwrap(), Outcome::Rows(2));
        assert_eq!(c.io.reads, 1);
        // A small input buffer that has to move and grow.
        let mut c = client(NO_EOF, 0, vec![bytes]);
        c.rbuf = vec![0; 8];
        assert_eq!(c.query("SELECT c FROM t").unwrap(), Outcome::Rows(2));
    }

    #[test]
    fn payloads_of_16_mib_or_more_span_packets() {
        // A text row with one 16 MiB + 10 byte value: lenenc 0xfd is too
        // small for it, so 0xfe and 8 bytes; the payload is split after
        // MAX_PAYLOAD bytes.
        let value_len = (1 << 24) + 10;
        let mut row = vec![0xfe];
        row.extend_from_slice(&(value_len as u64).to_le_bytes());
        row.resize(row.len() + value_len, b'x');
        let (a, b) = row.split_at(MAX_PAYLOAD);
        let mut bytes = pkts(1, &[b"\x01", COL_DEF]);
        bytes.extend(pkt(3, a));
        bytes.extend(pkt(4, b));
        bytes.extend(pkt(5, OK_END));
        let mut c = client(NO_EOF, 0, vec![bytes]);
        let v = c.query_scalar("SELECT repeat('x', ...)").unwrap().unwrap();
        assert_eq!(v.len(), value_len);

        // Sending: a statement of exactly MAX_PAYLOAD bytes (with the
        // command byte) ends with an empty packet; the answer comes with the
        // next sequence id.
        let mut c = client(NO_EOF, 0, vec![pkt(2, OK_10000)]);
        let sql = "x".repeat(MAX_PAYLOAD - 1);
        c.query(&sql).unwrap();
        let w = &c.io.written;
        assert_eq!(w.len(), MAX_PAYLOAD + 8);
        assert_eq!(&w[..4], &[0xff, 0xff, 0xff, 0]);
        assert_eq!(&w[MAX_PAYLOAD + 4..], &[0, 0, 0, 1]);
    }

    #[test]
    fn out_of_order_or_truncated_input_breaks_the_connection() {
        let mut c = client(NO_EOF, 0, vec![pkt(2, OK_10000)]);
        assert!(matches!(c.query("DO 1"), Err(e) if e.kind() == Kind::Broken));
        assert!(c.broken);
        assert!(matches!(c.query("DO 1"), Err(e) if e.kind() == Kind::Broken));
        // The server closed the connection mid-response.
        let mut c = client(NO_EOF, 0, vec![pkts(1, &[b"\x01", COL_DEF])]);
        let e = c.query("SELECT c FROM t").unwrap_err();
        assert!(e.to_string().contains("closed"), "{e}");
        // An ERR out of turn (idle timeout) keeps its code.
        let mut c = client(NO_EOF, 0, vec![pkt(0, b"\xff\xbf\x0f#HY000timeout")]);
        assert!(matches!(
            c.query("DO 1"),
            Err(Error::Server { code: 4031, .. })
        ));
    }

    #[test]
    fn prepare_and_execute_packets() {
        // Prepare: id 7, 1 column, 2 params; classic framing.
        let prep = pkts(
            1,
            &[
                b"\x00\x07\x00\x00\x00\x01\x00\x02\x00\x00\x00\x00",
                COL_DEF,
                COL_DEF,
                EOF,
                COL_DEF,
                EOF,
            ],
        );
        let exec = pkts(1, &[b"\x01", COL_DEF, EOF, b"\x00\x00\x01a", EOF]);
        let mut c = client(BASE, 0, vec![prep, exec]);
        let st = c.prepare("SELECT c FROM t WHERE id=? AND c=?").unwrap();
        assert_eq!((st.id, st.params, st.columns), (7, 2, 1));
        c.io.written.clear();
        let params = [Param::Int(-2), Param::Text("ab")];
        assert_eq!(c.execute(&st, &params).unwrap(), Outcome::Rows(1));
        let mut want = vec![COM_STMT_EXECUTE, 7, 0, 0, 0, 0, 1, 0, 0, 0];
        want.extend_from_slice(&[0, 1, TYPE_LONGLONG, 0, TYPE_VAR_STRING, 0]);
        want.extend_from_slice(&(-2i64).to_le_bytes());
        want.extend_from_slice(b"\x02ab");
        assert_eq!(c.io.written, pkt(0, &want));
        let e = c.execute(&st, &params[..1]).unwrap_err();
        assert!(matches!(e, Error::Parameters { takes: 2, given: 1 }), "{e}");
    }

    #[test]
    fn drop_closes_statements_and_quits() {
        let written = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        struct Recorder(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
        impl Read for Recorder {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Ok(0)
            }
        }
        impl Write for Recorder {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0.borrow_mut().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut c = Client::new(Recorder(written.clone()));
        c.broken = false;
        c.stmts = vec![7, 9];
        drop(c);
        let mut want = pkt(0, &[COM_STMT_CLOSE, 7, 0, 0, 0]);
        want.extend(pkt(0, &[COM_STMT_CLOSE, 9, 0, 0, 0]));
        want.extend(pkt(0, &[COM_QUIT]));
        assert_eq!(*written.borrow(), want);
        // A broken connection is left alone.
        written.borrow_mut().clear();
        let c = Client::new(Recorder(written.clone()));
        drop(c);
        assert!(written.borrow().is_empty());
    }

    /// Values computed independently with Python's hashlib for the password
    /// `secret` and the scramble bytes 1..=20.
    #[test]
    fn password_scrambles_match_known_vectors() {
        let scramble: Vec<u8> = (1..=20).collect();
        let hex = |v: Vec<u8>| v.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(
            hex(native_password(b"secret", &scramble)),
            "b32bb3a583e1340c0a1108d58b1be49781ad8c2f"
        );
        assert_eq!(
            hex(caching_sha2_password(b"secret", &scramble)),
            "746ebe205d56a0707acb3e796e834e0dd7b1d61743b26bd5202c7a623230c7c9"
        );
        assert!(native_password(b"", &scramble).is_empty());
        assert!(caching_sha2_password(b"", &scramble).is_empty());
    }

    /// A MariaDB-style handshake (no CLIENT_MYSQL bit, extended caps in the
    /// reserved bytes) with scramble bytes 1..=20.
    fn handshake_packet(caps: u32, ext: u32, plugin: &str) -> Vec<u8> {
        let mut v = vec![10];
        v.extend_from_slice(b"5.5.5-10.11.19-MariaDB\0");
        v.extend_from_slice(&42u32.to_le_bytes());
        v.extend(1..=8u8);
        v.push(0);
        v.extend_from_slice(&(caps as u16).to_le_bytes());
        v.push(45);
        v.extend_from_slice(&2u16.to_le_bytes());
        v.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        v.push(21);
        v.extend_from_slice(&[0; 6]);
        v.extend_from_slice(&ext.to_le_bytes());
        v.extend(9..=20u8);
        v.push(0);
        v.extend_from_slice(plugin.as_bytes());
        v.push(0);
        v
    }

    const SERVER_CAPS: u32 = (WANTED | CLIENT_CONNECT_WITH_DB | 0xffff) & !CLIENT_LONG_PASSWORD;

    #[test]
    fn handshake_response_and_auth_switch() {
        let scramble: Vec<u8> = (1..=20).collect();
        let hs = handshake_packet(SERVER_CAPS, MARIADB_CLIENT_CACHE_METADATA | 1, NATIVE);
        let switch = b"\xfecaching_sha2_password\0\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\0";
        let more: &[u8] = b"\x01\x03";
        let ok: &[u8] = &[0, 0, 0, 2, 0, 0, 0];
        let mut c = Client::new(Fixture {
            chunks: vec![pkt(0, &hs), pkt(2, switch), pkts(4, &[more, ok])].into(),
            reads: 0,
            written: Vec::new(),
        });
        c.handshake(
            "bench",
            "secret",
            Some("sbtest"),
            false,
            None,
            &KeyOpts::default(),
        )
        .unwrap();
        assert!(!c.broken);
        assert_eq!(c.ext_caps, MARIADB_CLIENT_CACHE_METADATA);
        assert_eq!(c.caps & CLIENT_LONG_PASSWORD, 0);
        assert_ne!(c.caps & CLIENT_DEPRECATE_EOF, 0);
        let w = &c.io.written;
        let resp_len = u32::from_le_bytes([w[0], w[1], w[2], 0]) as usize;
        assert_eq!(w[3], 1);
        let resp = &w[4..4 + resp_len];
        assert_eq!(u32::from_le_bytes(resp[..4].try_into().unwrap()), c.caps);
        assert_eq!(resp[8], UTF8MB4);
        assert_eq!(&resp[28..32], &MARIADB_CLIENT_CACHE_METADATA.to_le_bytes());
        let mut r = Reader(&resp[32..]);
        assert_eq!(r.nul_str().unwrap(), b"bench");
        assert_eq!(
            r.lenenc_bytes().unwrap().unwrap(),
            &native_password(b"secret", &scramble)[..]
        );
        assert_eq!(r.nul_str().unwrap(), b"sbtest");
        assert_eq!(r.nul_str().unwrap(), NATIVE.as_bytes());
        assert!(r.0.is_empty());
        // The answer to the switch: the SHA-256 scramble, sequence 3.
        let sw = &w[4 + resp_len..];
        assert_eq!(sw, pkt(3, &caching_sha2_password(b"secret", &scramble)));
    }

    #[test]
    fn an_ed25519_switch_is_answered_with_a_signature_of_the_whole_nonce() {
        use ed25519_dalek::{Signature, Verifier, VerifyingKey};
        let hs = handshake_packet(SERVER_CAPS, 0, NATIVE);
        // A nonce whose last byte is 0: it is data, not a terminator.
        let mut nonce: Vec<u8> = (1..=31).collect();
        nonce.push(0);
        let mut switch = b"\xfeclient_ed25519\0".to_vec();
        switch.extend_from_slice(&nonce);
        let ok: &[u8] = &[0, 0, 0, 2, 0, 0, 0];
        let mut c = Client::new(Fixture {
            chunks: vec![pkt(0, &hs), pkt(2, &switch), pkt(4, ok)].into(),
            reads: 0,
            written: Vec::new(),
        });
        c.handshake("bench", "secret", None, false, None, &KeyOpts::default())
            .unwrap();
        let w = &c.io.written;
        let resp_len = u32::from_le_bytes([w[0], w[1], w[2], 0]) as usize;
        let answer = &w[4 + resp_len..];
        assert_eq!(&answer[..4], &[64, 0, 0, 3]);
        let sig = Signature::from_slice(&answer[4..]).unwrap();
        let key = VerifyingKey::from_bytes(&auth::ed25519_public(b"secret")).unwrap();
        key.verify(&nonce, &sig).unwrap();
        assert!(key.verify(&nonce[..31], &sig).is_err());
    }

    #[test]
    fn ssl_mode_required_against_a_server_without_tls_is_refused_before_the_password() {
        let hs = handshake_packet(SERVER_CAPS & !CLIENT_SSL, 0, NATIVE);
        let mut c = Client::new(Fixture {
            chunks: vec![pkt(0, &hs)].into(),
            reads: 0,
            written: Vec::new(),
        });
        let mut start =
            |_: &mut Fixture| -> Result<()> { panic!("no TLS handshake without CLIENT_SSL") };
        let step = TlsStep {
            mode: Mode::Require,
            start: &mut start,
        };
        let e = c
            .handshake(
                "bench",
                "hunter2",
                None,
                false,
                Some(step),
                &KeyOpts::default(),
            )
            .unwrap_err();
        assert!(
            matches!(&e, Error::TlsNotOffered { .. })
                && e.to_string().contains("ssl-mode=REQUIRED"),
            "{e}"
        );
        assert!(
            c.io.written.is_empty(),
            "nothing was sent, the user name included"
        );
    }

    #[test]
    fn ssl_mode_preferred_sends_the_ssl_request_then_the_response_after_the_tls_handshake() {
        let hs = handshake_packet(SERVER_CAPS | CLIENT_SSL, 0, NATIVE);
        let ok: &[u8] = &[0, 0, 0, 2, 0, 0, 0];
        let mut c = Client::new(Fixture {
            chunks: vec![pkt(0, &hs), pkt(3, ok)].into(),
            reads: 0,
            written: Vec::new(),
        });
        let mut started = 0;
        let mut start = |f: &mut Fixture| -> Result<()> {
            started = f.written.len();
            Ok(())
        };
        let step = TlsStep {
            mode: Mode::Prefer,
            start: &mut start,
        };
        c.handshake(
            "bench",
            "hunter2",
            None,
            false,
            Some(step),
            &KeyOpts::default(),
        )
        .unwrap();
        let w = &c.io.written;
        // The SSLRequest: a 32-byte packet, sequence 1, asking for CLIENT_SSL.
        assert_eq!(started, 36);
        assert_eq!(&w[..4], &[32, 0, 0, 1]);
        let caps = u32::from_le_bytes([w[4], w[5], w[6], w[7]]);
        assert_ne!(caps & CLIENT_SSL, 0);
        // Then the handshake response, sequence 2, with the user name.
        assert_eq!(w[39], 2);
        assert!(w[36..].windows(5).any(|x| x == b"bench"));
        assert!(!w[..36].windows(5).any(|x| x == b"bench"));
    }

    #[test]
    fn auth_failures() {
        // Wrong password: the server's ERR, without the password.
        let hs = handshake_packet(SERVER_CAPS & !CLIENT_SSL, 0, NATIVE);
        let denied =
            b"\xff\x15\x04#28000Access denied for user 'bench'@'localhost' (using password: YES)";
        let mut c = Client::new(Fixture {
            chunks: vec![pkt(0, &hs), pkt(2, denied)].into(),
            reads: 0,
            written: Vec::new(),
        });
        let e = c
            .handshake("bench", "hunter2", None, false, None, &KeyOpts::default())
            .unwrap_err();
        assert!(matches!(e, Error::Server { code: 1045, .. }), "{e}");
        assert!(!e.to_string().contains("TLS"), "{e}");
        assert!(c.broken);
        // The same from a server that offers TLS: perhaps it demands it.
        let hs_tls = handshake_packet(SERVER_CAPS | CLIENT_SSL, 0, NATIVE);
        let mut c = Client::new(Fixture {
            chunks: vec![pkt(0, &hs_tls), pkt(2, denied)].into(),
            reads: 0,
            written: Vec::new(),
        });
        let e = c
            .handshake("bench", "hunter2", None, false, None, &KeyOpts::default())
            .unwrap_err();
        assert!(matches!(e, Error::Server { code: 1045, .. }), "{e}");
        assert!(e.to_string().contains("requires TLS"), "{e}");
        assert!(e.to_string().contains("ssl-mode=REQUIRED"), "{e}");
        // caching_sha2_password full authentication over TCP: a clear fatal.
        let hs = handshake_packet(SERVER_CAPS, 0, CACHING_SHA2);
        let mut c = Client::new(Fixture {
            chunks: vec![pkt(0, &hs), pkt(2, b"\x01\x04")].into(),
            reads: 0,
            written: Vec::new(),
        });
        let e = c
            .handshake("bench", "hunter2", None, false, None, &KeyOpts::default())
            .unwrap_err();
        assert!(
            matches!(&e, Error::FullAuthInPlaintext { .. })
                && e.to_string().contains("get-server-public-key=true")
                && e.to_string().contains("server-public-key-path")
                && e.to_string().contains("ssl-mode=REQUIRED"),
            "{e}"
        );
        assert!(!e.to_string().contains("hunter2"));
        // ... and over a unix socket, the password in clear.
        let ok: &[u8] = &[0, 0, 0, 2, 0, 0, 0];
        let mut c = Client::new(Fixture {
            chunks: vec![pkt(0, &hs), pkts(2, &[b"\x01\x04"]), pkt(4, ok)].into(),
            reads: 0,
            written: Vec::new(),
        });
        c.handshake("bench", "hunter2", None, true, None, &KeyOpts::default())
            .unwrap();
        assert!(c.io.written.ends_with(&pkt(3, b"hunter2\0")));
        // An unknown plugin asked for by a switch.
        let mut c = Client::new(Fixture {
            chunks: vec![pkt(0, &hs), pkt(2, b"\xfedialog\0abc\0")].into(),
            reads: 0,
            written: Vec::new(),
        });
        let e = c
            .handshake("bench", "hunter2", None, false, None, &KeyOpts::default())
            .unwrap_err();
        assert!(
            matches!(&e, Error::UnsupportedPlugin { plugin, .. } if plugin == "dialog")
                && e.to_string().contains("sha256_password"),
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

    fn connect_to(port: u16) -> (Result<Client>, std::time::Duration) {
        let t = std::time::Instant::now();
        let r = Client::connect(&Opts {
            addr: Addr::Tcp {
                host: "127.0.0.1".into(),
                port,
            },
            user: "u".into(),
            password: String::new(),
            db: None,
            connect_timeout: Duration::from_secs(1),
            io_timeout: Duration::from_secs(30),
            message_timeout: crate::engine::DEFAULT_MESSAGE_TIMEOUT,
            tls: crate::engine::tls::TlsSetup::disabled(crate::engine::tls::Flavor::Mysql),
            keys: Default::default(),
        });
        (r, t.elapsed())
    }

    #[test]
    fn a_silent_listener_fails_the_connect_within_the_connect_timeout() {
        let (r, took) = connect_to(slow_server(Vec::new(), Duration::ZERO));
        let e = r.err().expect("no greeting, no connection");
        assert!(e.to_string().contains("connect timeout (1 s)"), "{e}");
        assert!(took < Duration::from_secs(3), "{took:?}");
    }

    #[test]
    fn a_greeting_sent_byte_by_byte_fails_within_the_connect_timeout() {
        let mut greeting =
            handshake_packet(CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION, 0, NATIVE);
        let mut packet = (greeting.len() as u32).to_le_bytes()[..3].to_vec();
        packet.push(0);
        packet.append(&mut greeting);
        let (r, took) = connect_to(slow_server(packet, Duration::from_millis(200)));
        let e = r.err().expect("a greeting that takes too long");
        assert!(e.to_string().contains("connect timeout (1 s)"), "{e}");
        assert!(took < Duration::from_secs(3), "{took:?}");
    }

    #[test]
    fn a_garbled_header_is_a_protocol_error_at_once() {
        // A length of 16 MiB and sequence id 7 where 0 is due.
        let (r, took) = connect_to(slow_server(vec![0xff, 0xff, 0xff, 7], Duration::ZERO));
        let e = r.err().expect("garbage is no greeting");
        assert!(e.to_string().contains("out of order"), "{e}");
        assert!(took < Duration::from_millis(900), "{took:?}");
    }
}
