//! The HTTP side of `rqps serve`: connections accepted on one thread and
//! handed to a fixed pool of workers through a bounded queue, each request
//! head read up to [`MAX_HEAD`] bytes within [`READ_TIMEOUT`] and parsed by
//! httparse, one request per connection (`Connection: close`), GET and HEAD
//! only. What a client can make the server hold is bounded: the workers, the
//! queue, a head each; a connection over the queue's bound is answered 503 at
//! once, a head over its bound 414 or 431, a slow one 408.
//!
//! Nothing here knows the pages: a handler turns a [`Request`] into a
//! [`Response`], and a handler that panics answers 500 (the worker lives on).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// The largest request head (request line and headers) read, in bytes.
pub const MAX_HEAD: usize = 16 * 1024;
/// The most headers a request may have.
const MAX_HEADERS: usize = 64;
/// How long a client may take to send its request head.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to read the answer.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// Connections accepted and waiting for a worker; more get 503.
const QUEUE: usize = 64;
/// After an answer to a request whose rest was not read (a head too long),
/// what is read and dropped so that the client sees the answer rather than
/// a reset: at most this many bytes, for at most [`DRAIN_TIME`].
const DRAIN_BYTES: usize = 4 << 20;
const DRAIN_TIME: Duration = Duration::from_secs(2);

/// A request as the handler sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// `GET` or `HEAD`.
    pub method: String,
    /// The request target as sent (`/run/x?format=json`), undecoded.
    pub target: String,
    /// The `Accept` header, if any.
    pub accept: Option<String>,
    /// The `Host` header, if any.
    pub host: Option<String>,
}

/// An answer.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Arc<str>,
    /// Extra headers (`Allow`, `Location`).
    pub headers: Vec<(&'static str, String)>,
}

pub const HTML: &str = "text/html; charset=utf-8";
pub const JSON: &str = "application/json";
pub const TEXT: &str = "text/plain; charset=utf-8";

impl Response {
    pub fn new(status: u16, content_type: &'static str, body: impl Into<Arc<str>>) -> Self {
        Response {
            status,
            content_type,
            body: body.into(),
            headers: Vec::new(),
        }
    }

    /// A plain-text answer (the transport's own refusals).
    pub fn text(status: u16, body: &str) -> Self {
        Response::new(
            status,
            TEXT,
            format!("{status} {}: {body}\n", reason(status)),
        )
    }
}

/// The reason phrase of the statuses rqps serve answers with.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        303 => "See Other",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// Every answer's security headers: nothing is loaded from anywhere, no
/// script runs, the pages are not framed, and nothing is cached (the
/// folder changes under a live run).
const SECURITY_HEADERS: &str = "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'\r\n\
X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\nCache-Control: no-store\r\n";

/// Why a request head was refused before any handler saw it.
#[derive(Debug, PartialEq)]
pub enum HeadError {
    /// The connection closed or failed before a head came: no answer.
    Gone,
    /// No whole head within [`READ_TIMEOUT`].
    Timeout,
    /// Over [`MAX_HEAD`] bytes: 414 when the request line alone is that
    /// long, else 431.
    TooLong { in_request_line: bool },
    /// Not HTTP/1.x as httparse reads it.
    Malformed(String),
}

impl HeadError {
    fn response(&self) -> Option<Response> {
        match self {
            HeadError::Gone => None,
            HeadError::Timeout => {
                Some(Response::text(408, "the request head did not come in time"))
            }
            HeadError::TooLong {
                in_request_line: true,
            } => Some(Response::text(
                414,
                &format!("the request line is longer than {MAX_HEAD} bytes"),
            )),
            HeadError::TooLong { .. } => Some(Response::text(
                431,
                &format!("the request head is longer than {MAX_HEAD} bytes"),
            )),
            HeadError::Malformed(why) => Some(Response::text(400, why)),
        }
    }
}

/// Where the head in `buf` ends (after its blank line), if it has.
fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4)
        .or_else(|| buf.windows(2).position(|w| w == b"\n\n").map(|i| i + 2))
}

/// Reads one request head from `r`: at most [`MAX_HEAD`] bytes, until
/// `deadline`.
pub fn read_head(r: &mut impl Read, deadline: Instant) -> Result<Vec<u8>, HeadError> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        if Instant::now() >= deadline {
            return Err(HeadError::Timeout);
        }
        let room = (MAX_HEAD - buf.len()).min(chunk.len());
        let n = match r.read(&mut chunk[..room]) {
            Ok(0) => return Err(HeadError::Gone),
            Ok(n) => n,
            // A read's own timeout is short: the deadline is checked above.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::Interrupted
                        | std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(_) => return Err(HeadError::Gone),
        };
        // Look for the end from a little before the new bytes.
        let from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = head_end(&buf[from..]) {
            buf.truncate(from + end);
            return Ok(buf);
        }
        if buf.len() >= MAX_HEAD {
            return Err(HeadError::TooLong {
                in_request_line: !buf.contains(&b'\n'),
            });
        }
    }
}

/// The request in a whole head, parsed by httparse.
pub fn parse_head(head: &[u8]) -> Result<Request, HeadError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => {
            return Err(HeadError::Malformed("the request head is cut short".into()));
        }
        Err(httparse::Error::TooManyHeaders) => {
            return Err(HeadError::Malformed(format!(
                "more than {MAX_HEADERS} headers"
            )));
        }
        Err(e) => return Err(HeadError::Malformed(format!("not an HTTP/1 request: {e}"))),
    }
    let header = |name: &str| {
        req.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).into_owned())
    };
    Ok(Request {
        method: req.method.unwrap_or_default().to_string(),
        target: req.path.unwrap_or_default().to_string(),
        accept: header("accept"),
        host: header("host"),
    })
}

/// The bytes of `resp` on the wire: status line, headers, and the body
/// unless the request was HEAD.
pub fn encode(resp: &Response, head_only: bool) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n{SECURITY_HEADERS}",
        resp.status,
        reason(resp.status),
        resp.content_type,
        resp.body.len()
    );
    for (k, v) in &resp.headers {
        // A value never holds a line break (it would start a header of its own).
        let v: String = v.chars().filter(|c| !c.is_control()).collect();
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    if !head_only {
        bytes.extend_from_slice(resp.body.as_bytes());
    }
    bytes
}

/// Sends `resp` and closes: the write side first, then what the client is
/// still sending is read and dropped for a while, so that it reads the
/// answer instead of a reset.
fn answer(stream: &mut TcpStream, resp: &Response, head_only: bool, drain: bool) {
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    if stream.write_all(&encode(resp, head_only)).is_err() {
        return;
    }
    let _ = stream.flush();
    let _ = stream.shutdown(Shutdown::Write);
    if drain {
        let until = Instant::now() + DRAIN_TIME;
        let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
        let mut sink = [0u8; 8192];
        let mut read = 0;
        while read < DRAIN_BYTES && Instant::now() < until {
            match stream.read(&mut sink) {
                Ok(0) => break,
                Ok(n) => read += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => break,
            }
        }
    }
}

/// What answers requests.
pub type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// One connection: its head, the handler's answer (500 if it panicked).
fn connection(mut stream: TcpStream, handler: &Handler) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    // Each read waits 500 ms at most, so the deadline is checked often.
    let head = read_head(&mut stream, Instant::now() + READ_TIMEOUT);
    let req = match head.and_then(|h| parse_head(&h)) {
        Ok(r) => r,
        Err(e) => {
            if let Some(resp) = e.response() {
                answer(&mut stream, &resp, false, true);
            }
            return;
        }
    };
    let head_only = req.method == "HEAD";
    let resp = if req.method != "GET" && !head_only {
        let mut r = Response::text(
            405,
            &format!("{} is not served: this server only reads", req.method),
        );
        r.headers.push(("Allow", "GET, HEAD".into()));
        r
    } else {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(&req))).unwrap_or_else(
            |_| {
                Response::text(
                    500,
                    "rqps serve failed on this request; the server goes on (please report it)",
                )
            },
        )
    };
    answer(&mut stream, &resp, head_only, false);
}

/// Serves `listener` with `workers` threads until the process ends.
pub fn serve(listener: TcpListener, workers: usize, handler: Arc<Handler>) -> std::io::Error {
    let (tx, rx) = mpsc::sync_channel::<TcpStream>(QUEUE);
    let rx = Arc::new(Mutex::new(rx));
    for i in 0..workers.max(1) {
        let rx = Arc::clone(&rx);
        let handler = Arc::clone(&handler);
        let spawned = std::thread::Builder::new()
            .name(format!("serve-{i}"))
            .spawn(move || {
                loop {
                    let next = match rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(poisoned) => poisoned.into_inner().recv(),
                    };
                    match next {
                        Ok(stream) => connection(stream, &*handler),
                        Err(_) => return,
                    }
                }
            });
        if let Err(e) = spawned {
            return e;
        }
    }
    loop {
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            // Out of descriptors or a connection reset before accept: go on.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EMFILE | libc::ENFILE | libc::ECONNABORTED | libc::EINTR)
                ) =>
            {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            Err(e) => return e,
        };
        if let Err(mpsc::TrySendError::Full(mut s)) = tx.try_send(stream) {
            answer(
                &mut s,
                &Response::text(503, "too many requests at once; try again"),
                false,
                false,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    #[test]
    fn a_head_is_read_to_its_blank_line_and_parsed() {
        let mut r: &[u8] =
            b"GET /runs?x=1 HTTP/1.1\r\nHost: a\r\nAccept: application/json\r\n\r\nrest";
        let head = read_head(&mut r, far()).unwrap();
        assert!(head.ends_with(b"\r\n\r\n"));
        let req = parse_head(&head).unwrap();
        assert_eq!(req.method, "GET");
        assert_eq!(req.target, "/runs?x=1");
        assert_eq!(req.accept.as_deref(), Some("application/json"));
        assert_eq!(req.host.as_deref(), Some("a"));
    }

    #[test]
    fn a_long_request_line_is_414_and_long_headers_431() {
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(1 << 20));
        let e = read_head(&mut long.as_bytes(), far()).unwrap_err();
        assert_eq!(
            e,
            HeadError::TooLong {
                in_request_line: true
            }
        );
        assert_eq!(e.response().unwrap().status, 414);
        let many = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "b".repeat(MAX_HEAD));
        let e = read_head(&mut many.as_bytes(), far()).unwrap_err();
        assert_eq!(e.response().unwrap().status, 431);
        // Just under the bound reads.
        let fits = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_HEAD - 100));
        assert!(read_head(&mut fits.as_bytes(), far()).is_ok());
    }

    #[test]
    fn garbage_is_400_and_a_closed_connection_gets_no_answer() {
        for bad in [
            &b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"[..],
            b"GET\r\n\r\n",
            b"GET / HTTP/9.9\r\n\r\n",
            b"GET / HTTP/1.1\r\nBad Header\r\n\r\n",
        ] {
            let e = parse_head(bad).unwrap_err();
            assert_eq!(e.response().unwrap().status, 400, "{bad:?}");
        }
        let e = read_head(&mut &b"GET / HTTP/1.1\r\n"[..], far()).unwrap_err();
        assert_eq!(e, HeadError::Gone);
        assert!(e.response().is_none());
        let e = read_head(&mut &b"GET / HTTP/1.1\r\n"[..], Instant::now()).unwrap_err();
        assert_eq!(e.response().unwrap().status, 408);
    }

    #[test]
    fn an_answer_has_its_length_security_headers_and_no_injected_header() {
        let mut r = Response::new(200, HTML, "<p>hi</p>");
        r.headers.push(("Location", "/x\r\nSet-Cookie: a=b".into()));
        let wire = String::from_utf8(encode(&r, false)).unwrap();
        assert!(wire.starts_with("HTTP/1.1 200 OK\r\n"), "{wire}");
        assert!(wire.contains("Content-Length: 9\r\n"));
        assert!(wire.contains("Content-Security-Policy: default-src 'none';"));
        assert!(!wire.contains("\r\nSet-Cookie"), "{wire}");
        assert!(wire.ends_with("\r\n\r\n<p>hi</p>"));
        let head = String::from_utf8(encode(&r, true)).unwrap();
        assert!(head.ends_with("\r\n\r\n") && head.contains("Content-Length: 9\r\n"));
    }

    /// The pool end to end on a loopback socket: an answer, a panic that
    /// answers 500 and leaves the worker serving, a POST refused.
    #[test]
    fn the_pool_answers_survives_a_panic_and_refuses_writes() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let handler: Arc<Handler> = Arc::new(|r: &Request| {
            if r.target == "/boom" {
                panic!("a bug");
            }
            Response::new(200, TEXT, format!("you asked for {}", r.target))
        });
        std::thread::spawn(move || serve(listener, 1, handler));
        let ask = |raw: &str| {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(raw.as_bytes()).unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            out
        };
        assert!(ask("GET /boom HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 500 "));
        let ok = ask("GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK") && ok.ends_with("you asked for /a"));
        let post = ask("POST /a HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
        assert!(post.starts_with("HTTP/1.1 405 ") && post.contains("Allow: GET, HEAD"));
    }
}
