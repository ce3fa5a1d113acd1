//! A proxy that garbles bytes, in front of a throwaway PostgreSQL and
//! MariaDB (issue 40): one flipped length in a request leaves the server
//! waiting, in the middle of a message, for bytes rqps will never send, and
//! one flipped message type in a reply (ReadyForQuery read as a Notice)
//! leaves rqps waiting for a message the server will never send. Each side
//! waits for the other; neither server times that out. rqps must end the
//! statement within seconds, not the 600 s statement timeout.
//!
//! The proxy parses the stream just enough to flip exactly one chosen byte
//! of the whole run, so the test is the same every time.
//!
//! On the same servers: a stop cancels a statement that would run on
//! (`check_stop_cancels`), as the servers' own cancel, not only by closing
//! the socket.
//!
//! When the server binaries are missing the tests print why and pass
//! (skip), unless `RQPS_REQUIRE_SERVERS=1` is set.

mod common;
use common::server_available;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rqps::engine::server::{Recipe, Server, ServerSpec};

static PG: Recipe = &rqps::engine::postgres::server::RECIPE;
static MARIADB: Recipe = &rqps::engine::mysql::server::RECIPE;

/// Which byte the proxy flips.
#[derive(Clone, Copy, Debug)]
enum Garble {
    /// The length of the `n`-th message (counted over all connections)
    /// from a PostgreSQL client grows by 64.
    PgRequestLength(usize),
    /// The `n`-th ReadyForQuery from the PostgreSQL server becomes a
    /// NoticeResponse, which the client skips.
    PgReadyBecomesNotice(usize),
    /// The length of the `n`-th packet from a MySQL client grows by 64.
    MysqlRequestLength(usize),
}

/// Where a direction of one connection is in the stream of messages.
struct Framing {
    mysql: bool,
    /// Bytes left of the body under way.
    left: usize,
    /// The header read so far, held back until it is whole.
    head: Vec<u8>,
    /// PostgreSQL: the client's first message has no type byte.
    untyped_first: bool,
}

impl Framing {
    fn header_len(&self) -> usize {
        if self.mysql || self.untyped_first {
            4
        } else {
            5
        }
    }

    /// Copies `input` to `out`, handing each whole header to `edit` (which
    /// may change it) before it goes out.
    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>, edit: &mut dyn FnMut(&mut [u8], bool)) {
        let mut i = 0;
        while i < input.len() {
            if self.left > 0 {
                let k = self.left.min(input.len() - i);
                out.extend_from_slice(&input[i..i + k]);
                self.left -= k;
                i += k;
                continue;
            }
            self.head.push(input[i]);
            i += 1;
            if self.head.len() < self.header_len() {
                continue;
            }
            // The body's length, as the header says before any edit.
            self.left = if self.mysql {
                u32::from_le_bytes([self.head[0], self.head[1], self.head[2], 0]) as usize
            } else {
                let at = self.header_len() - 4;
                (u32::from_be_bytes(self.head[at..at + 4].try_into().unwrap()) as usize)
                    .saturating_sub(4)
            };
            edit(&mut self.head, self.untyped_first);
            out.extend_from_slice(&self.head);
            self.head.clear();
            self.untyped_first = false;
        }
    }
}

/// The proxy's count of the messages it could garble, and whether it has.
struct Plan {
    garble: Garble,
    seen: AtomicUsize,
    done: AtomicBool,
    /// Once it garbled, new connections are accepted and never answered:
    /// the link went silent (rqps's asks about the session get nothing).
    silent_after: AtomicBool,
}

impl Plan {
    /// Edits a whole header going `up` (from the client) or down, if it is
    /// the planned one.
    fn edit(&self, up: bool, head: &mut [u8], untyped: bool) {
        let (n, wanted) = match self.garble {
            Garble::PgRequestLength(n) => (n, up && !untyped),
            Garble::MysqlRequestLength(n) => (n, up),
            Garble::PgReadyBecomesNotice(n) => (n, !up && head[0] == b'Z'),
        };
        if !wanted || self.done.load(Ordering::SeqCst) {
            return;
        }
        let i = self.seen.fetch_add(1, Ordering::SeqCst) + 1;
        // The length's low byte (big-endian for PostgreSQL, little for
        // MySQL), grown only where it cannot carry.
        let low = match self.garble {
            Garble::PgRequestLength(_) => head.len() - 1,
            _ => 0,
        };
        if i < n {
            return;
        }
        let notice = matches!(self.garble, Garble::PgReadyBecomesNotice(_));
        if !notice && head[low] >= 0xc0 || self.done.swap(true, Ordering::SeqCst) {
            return;
        }
        if notice {
            eprintln!("proxy: ReadyForQuery #{i} becomes a Notice");
            head[0] = b'N';
        } else {
            eprintln!("proxy: message #{i} from the client grows by 64 bytes");
            head[low] += 0x40;
        }
    }
}

/// A proxy on 127.0.0.1 in front of `upstream` that flips one byte as
/// `garble` says. Its threads end when the connections close.
fn proxy(upstream: u16, garble: Garble) -> (u16, Arc<Plan>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let plan = Arc::new(Plan {
        garble,
        seen: AtomicUsize::new(0),
        done: AtomicBool::new(false),
        silent_after: AtomicBool::new(false),
    });
    let p = plan.clone();
    std::thread::spawn(move || {
        let mut silenced = Vec::new();
        for c in l.incoming() {
            let Ok(c) = c else { return };
            if p.silent_after.load(Ordering::SeqCst) && p.done.load(Ordering::SeqCst) {
                silenced.push(c);
                continue;
            }
            let Ok(u) = TcpStream::connect(("127.0.0.1", upstream)) else {
                return;
            };
            let mysql = matches!(garble, Garble::MysqlRequestLength(_));
            for (from, to, up) in [
                (c.try_clone().unwrap(), u.try_clone().unwrap(), true),
                (u, c, false),
            ] {
                let p = p.clone();
                let f = Framing {
                    mysql,
                    left: 0,
                    head: Vec::new(),
                    untyped_first: up && !mysql,
                };
                std::thread::spawn(move || pump(from, to, up, f, &p));
            }
        }
    });
    (port, plan)
}

fn pump(mut from: TcpStream, mut to: TcpStream, up: bool, mut f: Framing, plan: &Plan) {
    let mut buf = vec![0u8; 64 << 10];
    let mut out = Vec::with_capacity(buf.len() + 8);
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        out.clear();
        f.feed(&buf[..n], &mut out, &mut |h, untyped| {
            plan.edit(up, h, untyped)
        });
        if to.write_all(&out).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

fn start(kind: Recipe) -> Option<Server> {
    if !server_available(kind) {
        return None;
    }
    Some(
        Server::start(&ServerSpec::new(kind), &mut |n| eprintln!("note: {n}"))
            .unwrap_or_else(|e| panic!("starting {kind} failed: {e}")),
    )
}

/// `rqps run` of SELECT 1 through the proxy on `port`, with a message
/// timeout of 2 s and the default statement timeout (600 s); killed after
/// 90 s. Its output and wall time.
fn run_through(server: &Server, port: u16, results: &std::path::Path) -> (String, Duration) {
    let url = url_through(server, port, None);
    let began = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args([
            "run",
            "--suite",
            "select1",
            "--threads",
            "2",
            "--secs",
            "3",
            "--message-timeout",
            "2",
            "--busy-threshold",
            "100",
            "--results",
            results.to_str().unwrap(),
            "--target",
            &url,
        ])
        .env("PGPASSWORD", server.password())
        .env("MYSQL_PWD", server.password())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let done = Arc::new(AtomicBool::new(false));
    let watch = {
        let done = done.clone();
        std::thread::spawn(move || {
            let t = Instant::now();
            while !done.load(Ordering::SeqCst) {
                if t.elapsed() > Duration::from_secs(90) {
                    // SAFETY: our own child, by its pid.
                    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let status = child.wait().unwrap();
    done.store(true, Ordering::SeqCst);
    watch.join().unwrap();
    (format!("{status}\n{out}"), began.elapsed())
}

/// The URL of `server` through the proxy on `port`, TLS off (the proxy
/// reads the protocol), and a connect timeout of 3 s (a link gone silent
/// costs it per connection).
fn url_through(server: &Server, port: u16, password: Option<&str>) -> String {
    let user = match password {
        Some(p) => format!("{}:{p}", server.user()),
        None => server.user().to_string(),
    };
    match server.recipe().key() {
        "postgres" => format!(
            "postgres://{user}@127.0.0.1:{port}/{}?sslmode=disable&connect_timeout=3",
            server.database()
        ),
        _ => format!(
            "mysql://{user}@127.0.0.1:{port}/{}?ssl-mode=DISABLED&connect-timeout=3",
            server.database()
        ),
    }
}

/// Statements through the proxy until the garbled one: it must fail within
/// seconds, saying why.
fn check_driver(server: &Server, garble: Garble) {
    check_driver_with(server, garble, false);
}

/// [`check_driver`] through a link that, once it garbled, answers no new
/// connection: rqps cannot ask the server about the session, twice, and
/// ends the statement all the same.
fn check_driver_silenced(server: &Server, garble: Garble) {
    check_driver_with(server, garble, true);
}

fn check_driver_with(server: &Server, garble: Garble, silent: bool) {
    use rqps::engine::Driver;
    let (port, plan) = proxy(server.port(), garble);
    plan.silent_after.store(silent, Ordering::SeqCst);
    let url = url_through(server, port, Some(server.password()));
    // A message timeout of 2 s, as the runs' --message-timeout 2.
    let timeouts = rqps::engine::Timeouts {
        message: Duration::from_secs(2),
        ..Default::default()
    };
    let driver: Box<dyn Driver> = match server.recipe().key() {
        "postgres" => Box::new(
            rqps::engine::postgres::PostgresDriver::new(&url)
                .unwrap()
                .with_timeouts(timeouts),
        ),
        _ => Box::new(
            rqps::engine::mysql::MysqlDriver::new(&url)
                .unwrap()
                .with_timeouts(timeouts),
        ),
    };
    let mut c = driver.require_sql().unwrap().connect().unwrap();
    for _ in 0..5000 {
        let t = Instant::now();
        match c.query("SELECT 1") {
            Ok(_) => continue,
            Err(e) => {
                assert!(plan.done.load(Ordering::SeqCst), "{garble:?}: {e}");
                let took = t.elapsed();
                let why = if silent {
                    "could not be reached over a new connection either, twice"
                } else {
                    "garbled or lost on the way"
                };
                assert!(e.message.contains(why), "{garble:?}: {e}");
                // 2 s of silence, then a second's grace: not the 600 s.
                assert!(took < Duration::from_secs(20), "{garble:?}: took {took:?}");
                eprintln!("{garble:?}: failed after {took:?}: {e}");
                return;
            }
        }
    }
    panic!(
        "{garble:?}: no statement failed (garbled: {})",
        plan.done.load(Ordering::SeqCst)
    );
}

/// A whole `rqps run` through the proxy ends in seconds.
fn check_run(server: &Server, garble: Garble) {
    let d = tempfile::tempdir().unwrap();
    let (port, plan) = proxy(server.port(), garble);
    let (out, took) = run_through(server, port, d.path());
    assert!(
        plan.done.load(Ordering::SeqCst),
        "{garble:?}: nothing was garbled: {out}"
    );
    assert!(
        took < Duration::from_secs(45),
        "{garble:?}: took {took:?}, waiting on a statement nobody will answer: {out}"
    );
}

/// How many statements of `server` other than the asking one are still in
/// a one-minute sleep.
fn sleeping(server: &Server) -> String {
    use rqps::engine::Driver;
    let sql = match server.recipe().key() {
        "postgres" => {
            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(60)%' AND state = 'active'"
        }
        _ => {
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(60)%'"
        }
    };
    let url = url_through(server, server.port(), Some(server.password()));
    let driver: Box<dyn Driver> = match server.recipe().key() {
        "postgres" => Box::new(rqps::engine::postgres::PostgresDriver::new(&url).unwrap()),
        _ => Box::new(rqps::engine::mysql::MysqlDriver::new(&url).unwrap()),
    };
    let mut c = driver.require_sql().unwrap().connect().unwrap();
    c.query_scalar(sql).unwrap().unwrap_or_default()
}

/// SIGTERM to a run whose statement sleeps for a minute: after the stop's
/// grace rqps asks the server to cancel it (PostgreSQL's cancel request,
/// MySQL's KILL QUERY over a connection of its own), stores the test as
/// interrupted and exits 143, and the server runs the statement no more.
/// Shutting the socket down alone (without the cancel) ends rqps as soon,
/// but the server sleeps on: PostgreSQL for the whole minute.
fn check_stop_cancels(server: &Server) {
    let d = tempfile::tempdir().unwrap();
    let url = url_through(server, server.port(), None);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rqps"));
    cmd.args(["run", "--target", &url, "--results"])
        .arg(d.path().join("r"))
        .args(["--busy-threshold", "100", "-q"]);
    if server.recipe().key() == "postgres" {
        let script = d.path().join("sleep.sql");
        std::fs::write(&script, "SELECT pg_sleep(60);\n").unwrap();
        cmd.args(["--suite", "pgbench", "--skip-init", "--transactions", "1"])
            .arg("--script")
            .arg(&script);
    } else {
        let script = d.path().join("sleep.lua");
        std::fs::write(
            &script,
            "function thread_init() con = sysbench.sql.driver():connect() end\n\
             function event() con:query('SELECT SLEEP(60)') end\n",
        )
        .unwrap();
        cmd.args(["--suite", "sysbench", "--read-secs", "30", "--script"])
            .arg(&script);
    }
    let child = cmd
        .env("PGPASSWORD", server.password())
        .env("MYSQL_PWD", server.password())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while sleeping(server) != "1" {
        assert!(t.elapsed() < Duration::from_secs(60), "no statement slept");
        std::thread::sleep(Duration::from_millis(100));
    }
    let t = Instant::now();
    // SAFETY: kill(2) on our own child, not yet reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let o = child.wait_with_output().unwrap();
    let (took, out) = (t.elapsed(), String::from_utf8_lossy(&o.stderr).into_owned());
    let key = server.recipe().key();
    eprintln!("{key}: a stop ended a minute's statement in {took:?}");
    assert!(
        took < Duration::from_secs(15),
        "{key}: took {took:?}: {out}"
    );
    assert_eq!(o.status.code(), Some(143), "{key}: {out}");
    assert!(out.contains("cancelling what they run"), "{key}: {out}");
    let stored = statuses(&d.path().join("r"));
    assert!(
        !stored.is_empty() && stored.iter().all(|s| s == "interrupted"),
        "{key}: {stored:?}: {out}"
    );
    // Before the cancel: the server still ran the statement (a pg_sleep(60)
    // ended 52 s after the signal).
    assert_eq!(sleeping(server), "0", "{key}: the statement still runs");
}

/// The status of every stored test of the results folder `dir`.
fn statuses(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for run in std::fs::read_dir(dir).unwrap().flatten() {
        let tests = std::fs::read_dir(run.path().join("tests"));
        for t in tests.into_iter().flatten().flatten() {
            let v = common::read_json(&t.path());
            out.push(v["status"].as_str().unwrap_or("?").to_string());
        }
    }
    out
}

#[test]
fn a_garbled_request_or_reply_behind_a_proxy_ends_the_statement_in_seconds() {
    if let Some(pg) = start(PG) {
        check_driver(&pg, Garble::PgRequestLength(40));
        check_driver(&pg, Garble::PgReadyBecomesNotice(40));
        check_run(&pg, Garble::PgRequestLength(400));
        // On the same server (one per engine for the binary).
        check_stop_cancels(&pg);
    }
    if let Some(my) = start(MARIADB) {
        check_driver(&my, Garble::MysqlRequestLength(40));
        check_run(&my, Garble::MysqlRequestLength(400));
        // Before: the asks got no answer, which waited on for the
        // statement timeout (a run still `running` at 150 s).
        check_driver_silenced(&my, Garble::MysqlRequestLength(40));
        check_stop_cancels(&my);
    }
}
