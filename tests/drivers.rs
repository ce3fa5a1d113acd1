//! The MySQL/MariaDB and PostgreSQL drivers against real throwaway servers:
//! the sysbench load and one event of several tests (prepared and text
//! mode), row and statement counts, error classes, settings and status.
//!
//! When the server binaries are missing the tests print why and pass
//! (skip), unless `RQPS_REQUIRE_SERVERS=1` is set, in which case they fail.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rqps::engine::mysql::MysqlDriver;
use rqps::engine::postgres::PostgresDriver;
use rqps::engine::server::{Recipe, Server, ServerSpec, locate};
use rqps::engine::{Conn, DbError, Driver, ErrorClass, Outcome, Param, PsMode, SqlAccess};
use rqps::harness::measure::Counts;
use rqps::harness::runner::Worker;
use rqps::suite::sysbench::catalog::lookup;
use rqps::suite::sysbench::event::{EventParams, SbWorker};
use rqps::suite::sysbench::load::{LoadParams, load, settle};
use rqps::suite::sysbench::rng::{SbDist, SbRandParams, SbRandType};

static PG: Recipe = &rqps::engine::postgres::server::RECIPE;
static MARIADB: Recipe = &rqps::engine::mysql::server::RECIPE;

const N: i64 = 1000;
const TABLES: usize = 2;

fn servers_required() -> bool {
    std::env::var("RQPS_REQUIRE_SERVERS").is_ok_and(|v| v == "1")
}

/// Starts a server of `kind`, or returns `None` (after saying why) when its
/// binaries are missing.
fn start(kind: Recipe) -> Option<Server> {
    if let Err(e) = locate(kind, None) {
        if servers_required() {
            panic!("RQPS_REQUIRE_SERVERS=1 but: {e}");
        }
        eprintln!(
            "skipping {kind} driver test: {e} (set RQPS_REQUIRE_SERVERS=1 to make this fail)"
        );
        return None;
    }
    let t = Instant::now();
    let srv = Server::start(&ServerSpec::new(kind), &mut |n| eprintln!("note: {n}"))
        .unwrap_or_else(|e| panic!("starting {kind} failed: {e}"));
    eprintln!("{kind} started in {:.1} s", t.elapsed().as_secs_f64());
    Some(srv)
}

fn scalar(c: &mut dyn Conn, sql: &str) -> String {
    c.query_scalar(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .unwrap_or_default()
}

fn int(c: &mut dyn Conn, sql: &str) -> i64 {
    let s = scalar(c, sql);
    s.parse()
        .unwrap_or_else(|_| panic!("{sql}: not an integer: {s:?}"))
}

/// (row count, max id) of each table.
fn tables(c: &mut dyn Conn) -> Vec<(i64, i64)> {
    (1..=TABLES)
        .map(|t| {
            (
                int(c, &format!("SELECT count(*) FROM sbtest{t}")),
                int(c, &format!("SELECT max(id) FROM sbtest{t}")),
            )
        })
        .collect()
}

fn one_event(driver: &Arc<dyn Driver>, p: &EventParams, name: &str) -> Counts {
    let mut w = SbWorker::new(driver.clone(), &lookup(name).unwrap(), p, 0)
        .unwrap_or_else(|e| panic!("{name} ({:?}): prepare: {e}", p.ps_mode));
    let mut c = Counts::default();
    w.event(&mut c)
        .unwrap_or_else(|e| panic!("{name} ({:?}): {e}", p.ps_mode));
    c
}

/// One event of several sysbench tests, with their reference counts.
fn sysbench_events(driver: &Arc<dyn Driver>, mode: PsMode) {
    let p = EventParams {
        tables: TABLES,
        table_size: N,
        rand: SbDist::new(SbRandType::Uniform, SbRandParams::default()).unwrap(),
        ps_mode: mode,
        skip_trx: false,
        first_table: 1,
        // Each round's delete event removes the id its point query reads
        // (same first draws): the rounds use different seeds.
        rand_seed: if mode == PsMode::Auto { 11 } else { 12 },
    };
    let mut conn = driver.require_sql().unwrap().connect().unwrap();
    let conn = conn.as_mut();

    let c = one_event(driver, &p, "point-query");
    assert_eq!((c.reads, c.rows, c.queries()), (1, 1, 1), "{mode:?}");
    let c = one_event(driver, &p, "random-points_range=10");
    assert_eq!(c.reads, 1, "{mode:?}");
    assert!(c.rows > 5 && c.rows <= 10, "{mode:?}: {}", c.rows);
    // BEGIN, 10 points, 4 ranges, COMMIT = 14 reads + 2 other.
    let c = one_event(driver, &p, "read-only_range=10");
    assert_eq!((c.reads, c.writes, c.other), (14, 0, 2), "{mode:?}");
    // 10 points + 10 + 1 + 10 + 10 from the ranges, less any deleted ids.
    assert!(c.rows >= 30, "{mode:?}: {}", c.rows);

    let before = tables(conn);
    let mut w = SbWorker::new(driver.clone(), &lookup("write-only").unwrap(), &p, 0).unwrap();
    for _ in 0..20 {
        let mut c = Counts::default();
        w.event(&mut c).unwrap();
        // BEGIN, 2 updates, delete, insert, COMMIT.
        assert_eq!((c.queries(), c.reads), (6, 0), "{mode:?}");
        assert_eq!((c.writes, c.other), (4, 2), "{mode:?}");
    }
    drop(w);
    let after = tables(conn);
    assert_eq!(
        before.iter().map(|t| t.0).collect::<Vec<_>>(),
        after.iter().map(|t| t.0).collect::<Vec<_>>(),
        "{mode:?}: write-only changed the row count"
    );

    // insert: the engine assigns the next id after the load's.
    let before = tables(conn);
    let c = one_event(driver, &p, "insert");
    assert_eq!((c.writes, c.queries()), (1, 1), "{mode:?}");
    let after = tables(conn);
    let grown: Vec<usize> = (0..TABLES).filter(|&i| after[i] != before[i]).collect();
    assert_eq!(grown.len(), 1, "{mode:?}: {before:?} -> {after:?}");
    let i = grown[0];
    assert_eq!(after[i], (before[i].0 + 1, before[i].1 + 1), "{mode:?}");
    if mode == PsMode::Auto {
        assert_eq!(after[i].1, N + 1, "{mode:?}: id after the load");
    }

    let before: i64 = tables(conn).iter().map(|t| t.0).sum();
    let c = one_event(driver, &p, "delete");
    assert_eq!(c.writes + c.other, 1, "{mode:?}");
    let after: i64 = tables(conn).iter().map(|t| t.0).sum();
    assert_eq!(after, before - c.writes as i64, "{mode:?}");

    let c = one_event(driver, &p, "update-inlist");
    assert_eq!((c.writes, c.queries()), (1, 1), "{mode:?}");
    let c = one_event(driver, &p, "scan");
    assert_eq!((c.reads, c.rows), (1, 0), "{mode:?}");
}

/// Direct checks of the Conn contract: BEGIN/COMMIT are `Affected(0)`,
/// DML that changes nothing is `Affected(0)`, an empty SELECT is `Rows(0)`.
fn conn_contract(driver: &dyn Driver) {
    for mode in [PsMode::Auto, PsMode::Disable] {
        let mut c = driver.require_sql().unwrap().connect().unwrap();
        let begin = c.prepare("BEGIN", mode).unwrap();
        let commit = c.prepare("COMMIT", mode).unwrap();
        let upd = c
            .prepare("UPDATE sbtest1 SET k=k+1 WHERE id=?", mode)
            .unwrap();
        let sel = c
            .prepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?", mode)
            .unwrap();
        let pad = c
            .prepare("SELECT id FROM sbtest1 WHERE pad = ? AND id > ?", mode)
            .unwrap();
        assert_eq!(c.execute(begin, &[]).unwrap(), Outcome::Affected(0));
        assert_eq!(
            c.execute(upd, &[Param::Int(2)]).unwrap(),
            Outcome::Affected(1)
        );
        assert_eq!(c.execute(commit, &[]).unwrap(), Outcome::Affected(0));
        assert_eq!(
            c.execute(upd, &[Param::Int(-5)]).unwrap(),
            Outcome::Affected(0)
        );
        assert_eq!(
            c.execute(sel, &[Param::Int(-10), Param::Int(-1)]).unwrap(),
            Outcome::Rows(0)
        );
        assert_eq!(
            c.execute(sel, &[Param::Int(11), Param::Int(20)]).unwrap(),
            Outcome::Rows(10)
        );
        assert_eq!(
            c.execute(pad, &[Param::Text("no'such"), Param::Int(0)])
                .unwrap(),
            Outcome::Rows(0)
        );
        assert_eq!(c.query("BEGIN").unwrap(), Outcome::Affected(0));
        assert_eq!(
            c.query("SELECT id FROM sbtest1 WHERE id < 4").unwrap(),
            Outcome::Rows(3)
        );
        assert_eq!(c.query("COMMIT").unwrap(), Outcome::Affected(0));
    }
}

/// A free loopback port with nothing listening on it.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn expect_err(r: Result<Outcome, DbError>, what: &str) -> DbError {
    match r {
        Ok(o) => panic!("{what}: expected an error, got {o:?}"),
        Err(e) => e,
    }
}

/// Error classes: duplicate key (fatal with the engine's code), lock wait
/// (retry), closed port (reconnect).
fn errors(driver: &dyn Driver, dup_code: &str, lock_timeout: &str, retry_code: &str) {
    let mut c = driver.require_sql().unwrap().connect().unwrap();
    let id = int(c.as_mut(), "SELECT min(id) FROM sbtest1");
    for mode in [PsMode::Auto, PsMode::Disable] {
        let ins = c
            .prepare(
                "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)",
                mode,
            )
            .unwrap();
        let e = expect_err(
            c.execute(
                ins,
                &[
                    Param::Int(id),
                    Param::Int(1),
                    Param::Text("c"),
                    Param::Text("p"),
                ],
            ),
            "duplicate key",
        );
        assert_eq!(e.class, ErrorClass::Fatal, "{e}");
        assert_eq!(e.code.as_deref(), Some(dup_code), "{e}");
        eprintln!("duplicate key ({mode:?}): {e}");
        assert!(!e.message.is_empty());
    }
    let e = expect_err(c.query("SELECT nosuchcolumn FROM sbtest1"), "bad column");
    assert_eq!(e.class, ErrorClass::Fatal, "{e}");
    assert!(e.message.contains("nosuchcolumn"), "{e}");
    // The connection is still usable after statement errors.
    assert_eq!(c.query("SELECT 1").unwrap(), Outcome::Rows(1));

    // A row lock held by another transaction: retry.
    let mut holder = driver.require_sql().unwrap().connect().unwrap();
    holder.query("BEGIN").unwrap();
    holder
        .query(&format!("UPDATE sbtest1 SET k=k+1 WHERE id={id}"))
        .unwrap();
    c.query(lock_timeout).unwrap();
    c.query("BEGIN").unwrap();
    let upd = c
        .prepare("UPDATE sbtest1 SET k=k+1 WHERE id=?", PsMode::Auto)
        .unwrap();
    let e = expect_err(c.execute(upd, &[Param::Int(id)]), "lock wait");
    eprintln!("lock wait: {e}");
    assert_eq!(e.class, ErrorClass::Retry, "{e}");
    assert_eq!(e.code.as_deref(), Some(retry_code), "{e}");
    let _ = c.query("ROLLBACK");
    holder.query("ROLLBACK").unwrap();
}

fn closed_port_is_reconnect(make: &dyn Fn(&str) -> Box<dyn Driver>, scheme: &str) {
    let port = closed_port();
    let d = make(&format!("{scheme}://u:sw0rdfish@127.0.0.1:{port}/sbtest"));
    let e = d
        .require_sql()
        .unwrap()
        .connect()
        .err()
        .expect("connecting to a closed port");
    assert_eq!(e.class, ErrorClass::Reconnect, "{e}");
    assert!(e.message.contains(&format!("127.0.0.1:{port}")), "{e}");
    assert!(!e.to_string().contains("sw0rdfish"), "{e}");
}

/// After the server dies, an existing connection reports `Reconnect`, and
/// so does a new one.
fn killed_server_is_reconnect(mut srv: Server, driver: &dyn Driver) {
    let mut c = driver.require_sql().unwrap().connect().unwrap();
    let sel = c
        .prepare("SELECT c FROM sbtest1 WHERE id=?", PsMode::Auto)
        .unwrap();
    assert_eq!(c.execute(sel, &[Param::Int(3)]).unwrap(), Outcome::Rows(1));
    srv.kill();
    assert!(!srv.is_running());
    let t = Instant::now();
    let e = expect_err(c.execute(sel, &[Param::Int(3)]), "after kill");
    eprintln!("after kill: {e}");
    assert_eq!(e.class, ErrorClass::Reconnect, "{e}");
    let e = expect_err(c.query("SELECT 1"), "after kill, again");
    assert_eq!(e.class, ErrorClass::Reconnect, "{e}");
    let e = driver
        .require_sql()
        .unwrap()
        .connect()
        .err()
        .expect("connect after kill");
    eprintln!("connect after kill: {e}");
    assert_eq!(e.class, ErrorClass::Reconnect, "{e}");
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
}

/// A proxy on a free loopback port to the server at `port`: what the client
/// sends goes on at once, what the server sends 1 ms late.
fn replies_1ms_late(port: u16) -> u16 {
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpStream};
    fn pump(mut from: TcpStream, mut to: TcpStream, late: Duration) {
        let mut b = vec![0u8; 1 << 16];
        while let Ok(n) = from.read(&mut b) {
            if n == 0 {
                break;
            }
            std::thread::sleep(late);
            if to.write_all(&b[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    }
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let (Ok(c), Ok(s)) = (c, TcpStream::connect(("127.0.0.1", port))) else {
                continue;
            };
            let _ = (c.set_nodelay(true), s.set_nodelay(true));
            let (c2, s2) = (c.try_clone().unwrap(), s.try_clone().unwrap());
            std::thread::spawn(move || pump(c, s, Duration::ZERO));
            std::thread::spawn(move || pump(s2, c2, Duration::from_millis(1)));
        }
    });
    proxy
}

/// The system calls the client core makes per statement: `rqps run`'s
/// point-query with 16 connections on one client thread (`--client-threads
/// 1`), under `strace -f -ff` (a file per thread). The client thread is the
/// one that sent the most; every call it made counts, over the statements
/// the run stored. One send and one recv per statement, plus a share of one
/// epoll wait, is the target; before the core knew a socket drained by a
/// short read and its timeouts, a recv that found nothing and a getsockopt
/// came before most waits: 3.75 (MariaDB) and 3.83 (PostgreSQL).
/// `None` without strace (CI installs it).
fn core_syscalls_per_statement(srv: &Server) -> Option<f64> {
    let strace = std::process::Command::new("strace").arg("-V").output();
    if !strace.is_ok_and(|o| o.status.success()) {
        if servers_required() {
            panic!("RQPS_REQUIRE_SERVERS=1 but strace is not installed (apt-get install strace)");
        }
        eprintln!("skipping the core's system-call count: strace is not installed");
        return None;
    }
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("run.json");
    // Replies 1 ms late through a proxy: a read right after a send finds
    // nothing, whatever the machine's load (a server on a loopback socket
    // can answer within strace's stops, and a read that speculates wins).
    let url = srv.url_without_password_for_config(&[]).replacen(
        &format!(":{}/", srv.port()),
        &format!(":{}/", replies_1ms_late(srv.port())),
        1,
    );
    let out = std::process::Command::new("strace")
        .args(["-f", "-ff", "-qq", "-s", "0", "-e", "signal=none"])
        // Each send starts 500 µs late: 16 of them take longer than a
        // reply, so replies wait for the client, as they do when the
        // client is the limit (where its cost matters). Unslowed, the share
        // of waits measures how fast the server answers on a loaded
        // machine (0.06 to 0.97 per statement here), not the core.
        .args(["-e", "inject=sendto:delay_enter=500us", "-o"])
        .arg(d.path().join("tr"))
        .arg(env!("CARGO_BIN_EXE_rqps"))
        .args(["run", "--target", &url, "--password-file"])
        .arg(srv.password_file())
        .args([
            "--suite",
            "select1",
            "--threads",
            "16",
            "--client-threads",
            "1",
            "--warmup-secs",
            "0",
            "--secs",
            "2",
            "-q",
            "--results",
        ])
        .arg(d.path().join("r"))
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let t = &doc["tests"][0];
    assert_eq!(t["status"], "ok", "{t}");
    let statements = ["reads", "writes", "other"]
        .iter()
        .map(|k| t[k].as_u64().unwrap())
        .sum::<u64>();
    assert!(statements > 100, "{statements} statements");
    // Per thread: (sends, calls).
    let mut threads = Vec::new();
    for e in std::fs::read_dir(d.path()).unwrap() {
        let p = e.unwrap().path();
        if !p.file_name().unwrap().to_string_lossy().starts_with("tr.") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let calls: Vec<&str> = text
            .lines()
            .filter_map(|l| l.split_once('('))
            .map(|(name, _)| name)
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
            .collect();
        let sends = calls
            .iter()
            .filter(|n| matches!(**n, "sendto" | "write" | "sendmsg" | "writev"))
            .count();
        let mut by_name = std::collections::BTreeMap::<&str, usize>::new();
        for n in &calls {
            *by_name.entry(n).or_default() += 1;
        }
        let mut by_name: Vec<String> = by_name
            .into_iter()
            .filter(|(_, k)| *k * 100 >= statements as usize)
            .map(|(n, k)| format!("{n} {:.2}", k as f64 / statements as f64))
            .collect();
        by_name.sort();
        threads.push((sends, calls.len(), by_name.join(", ")));
    }
    let (sends, calls, by_name) = threads.into_iter().max().unwrap();
    let per = calls as f64 / statements as f64;
    eprintln!(
        "client core: {calls} system calls ({sends} sends) for {statements} statements: {per:.2} per statement ({by_name})"
    );
    Some(per)
}

fn common(srv: &Server, driver: Arc<dyn Driver>) {
    let v = driver.version().unwrap();
    assert!(!v.is_empty());
    eprintln!("{} version {v}", driver.engine());
    let t = Instant::now();
    let stats = load(
        driver.as_ref(),
        &LoadParams {
            tables: TABLES,
            table_size: N as u64,
            seed: 7,
        },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(stats.rows, TABLES as u64 * N as u64);
    let mut c = driver.require_sql().unwrap().connect().unwrap();
    assert_eq!(tables(c.as_mut()), vec![(N, N); TABLES]);
    for t in 1..=TABLES {
        assert_eq!(
            scalar(c.as_mut(), &format!("SELECT min(length(c)) FROM sbtest{t}")),
            "119"
        );
    }
    let (_, refused) = settle(driver.as_ref(), TABLES, Duration::ZERO).unwrap();
    assert!(refused.is_empty(), "{refused:?}");
    eprintln!(
        "load + settle of {TABLES} x {N} rows: {:.2} s",
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    sysbench_events(&driver, PsMode::Auto);
    sysbench_events(&driver, PsMode::Disable);
    conn_contract(driver.as_ref());
    eprintln!("events: {:.2} s", t.elapsed().as_secs_f64());
    assert!(srv.url().contains("sbtest"));
    if let Some(per) = core_syscalls_per_statement(srv) {
        assert!(
            per <= 2.3,
            "{}: the client core makes {per:.2} system calls per statement at 16 connections on 1 thread; one send, one recv and a share of one wait is the target (at most 2.3)",
            driver.engine()
        );
    }
}

#[test]
fn mysql_driver_against_mariadb() {
    let Some(srv) = start(MARIADB) else {
        return;
    };
    let driver: Arc<dyn Driver> = Arc::new(MysqlDriver::new(&srv.url()).unwrap());
    // The scheme says mysql until a connection says what the server is.
    assert_eq!(driver.engine(), "mysql");
    common(&srv, driver.clone());
    assert_eq!(driver.engine(), "mariadb");
    errors(
        driver.as_ref(),
        "1062",
        "SET SESSION innodb_lock_wait_timeout = 1",
        "1205",
    );
    closed_port_is_reconnect(
        &|u: &str| -> Box<dyn Driver> { Box::new(MysqlDriver::new(u).unwrap()) },
        "mysql",
    );

    let settings = driver.settings().unwrap();
    let bp = settings
        .iter()
        .find(|(k, _)| k == "innodb_buffer_pool_size")
        .expect("innodb_buffer_pool_size in settings");
    assert!(bp.1.parse::<u64>().unwrap() > 0, "{bp:?}");
    let status = driver.status().unwrap();
    assert!(
        status
            .iter()
            .any(|(k, _)| k == "Questions" || k == "Queries"),
        "{} status rows",
        status.len()
    );

    // The unix socket, as ?socket=.
    let sock = srv.socket_path().unwrap().display().to_string();
    let pw = srv.password();
    let d = MysqlDriver::new(&format!("mysql://root:{pw}@/sbtest?socket={sock}")).unwrap();
    let mut c = d.connect().unwrap();
    assert_eq!(
        scalar(c.as_mut(), "SELECT count(*) FROM sbtest2"),
        scalar(
            driver.require_sql().unwrap().connect().unwrap().as_mut(),
            "SELECT count(*) FROM sbtest2"
        )
    );
    drop(c);

    skip_trx_sends_no_begin_or_commit(&driver);
    passwords(&srv, driver.as_ref());
    killed_server_is_reconnect(srv, driver.as_ref());
}

/// `Com_begin` + `Com_commit` of the whole server (status rows from other
/// connections included: nothing else runs during the test).
fn begins_and_commits(c: &mut dyn Conn) -> i64 {
    ["Com_begin", "Com_commit"]
        .iter()
        .map(|v| {
            let sql = format!(
                "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = '{}'",
                v.to_uppercase()
            );
            int(c, &sql)
        })
        .sum()
}

/// `--skip-trx`: read-only and read-write events leave the server's BEGIN and
/// COMMIT counters where they were; without it every event adds one of each.
fn skip_trx_sends_no_begin_or_commit(driver: &Arc<dyn Driver>) {
    let mut p = EventParams {
        tables: TABLES,
        table_size: N,
        rand: SbDist::new(SbRandType::Uniform, SbRandParams::default()).unwrap(),
        ps_mode: PsMode::Auto,
        skip_trx: false,
        first_table: 1,
        rand_seed: 5,
    };
    let mut status = driver.require_sql().unwrap().connect().unwrap();
    const EVENTS: i64 = 10;
    for (skip, per_event) in [(false, 2), (true, 0)] {
        p.skip_trx = skip;
        for test in ["read-only_range=10", "read-write_range=10"] {
            let mut w = SbWorker::new(driver.clone(), &lookup(test).unwrap(), &p, 0).unwrap();
            let before = begins_and_commits(status.as_mut());
            for _ in 0..EVENTS {
                w.event(&mut Counts::default()).unwrap();
            }
            let after = begins_and_commits(status.as_mut());
            assert_eq!(
                after - before,
                EVENTS * per_event,
                "{test} with skip_trx={skip}: Com_begin + Com_commit went {before} -> {after}"
            );
        }
    }
}

/// A user with a password (mysql_native_password, MariaDB's default for
/// `IDENTIFIED BY`) connects over TCP and the unix socket; a wrong password
/// is fatal (1045) and its message does not show it.
fn passwords(srv: &Server, admin: &dyn Driver) {
    const PW: &str = "Pw-with'quote:and@signs";
    let mut c = admin.require_sql().unwrap().connect().unwrap();
    c.query(&format!(
        "CREATE USER 'pwuser'@'%' IDENTIFIED BY '{}'",
        PW.replace('\'', "''")
    ))
    .unwrap();
    c.query("GRANT ALL ON sbtest.* TO 'pwuser'@'%'").unwrap();
    let plugin = scalar(
        c.as_mut(),
        "SELECT plugin FROM mysql.user WHERE user = 'pwuser'",
    );
    assert_eq!(plugin, "mysql_native_password");
    let enc = PW.replace('@', "%40").replace(':', "%3A");
    let port = srv.port();
    let d = MysqlDriver::new(&format!("mysql://pwuser:{enc}@127.0.0.1:{port}/sbtest")).unwrap();
    let mut u = d
        .connect()
        .unwrap_or_else(|e| panic!("pwuser connects: {e}"));
    assert_eq!(scalar(u.as_mut(), "SELECT current_user()"), "pwuser@%");
    let sel = u
        .prepare("SELECT c FROM sbtest1 WHERE id=?", PsMode::Auto)
        .unwrap();
    assert_eq!(u.execute(sel, &[Param::Int(3)]).unwrap(), Outcome::Rows(1));
    let sock = srv.socket_path().unwrap().display().to_string();
    let d = MysqlDriver::new(&format!("mysql://pwuser:{enc}@/sbtest?socket={sock}")).unwrap();
    d.connect()
        .unwrap_or_else(|e| panic!("pwuser over the socket: {e}"));

    for wrong in ["Wrong-secret-9", ""] {
        let d =
            MysqlDriver::new(&format!("mysql://pwuser:{wrong}@127.0.0.1:{port}/sbtest")).unwrap();
        let e = d.connect().err().expect("wrong password is refused");
        eprintln!("wrong password: {e}");
        assert_eq!(e.class, ErrorClass::Fatal, "{e}");
        assert_eq!(e.code.as_deref(), Some("1045"), "{e}");
        if wrong.is_empty() {
            assert!(e.message.contains("using password: NO"), "{e}");
        } else {
            assert!(!e.to_string().contains(wrong), "{e}");
        }
    }
}

#[test]
fn postgres_driver() {
    let Some(srv) = start(PG) else {
        return;
    };
    let driver: Arc<dyn Driver> = Arc::new(PostgresDriver::new(&srv.url()).unwrap());
    assert_eq!(driver.engine(), "postgres");
    common(&srv, driver.clone());
    errors(
        driver.as_ref(),
        "23505",
        "SET lock_timeout = '200ms'",
        "55P03",
    );
    closed_port_is_reconnect(
        &|u: &str| -> Box<dyn Driver> { Box::new(PostgresDriver::new(u).unwrap()) },
        "postgres",
    );

    let settings = driver.settings().unwrap();
    assert!(
        settings.iter().any(|(k, _)| k == "shared_buffers"),
        "{} settings",
        settings.len()
    );
    let status = driver.status().unwrap();
    for key in [
        "pg_stat_database.xact_commit",
        "pg_stat_bgwriter.buffers_clean",
    ] {
        assert!(status.iter().any(|(k, _)| k == key), "{key} missing");
    }

    // The unix socket directory, libpq style.
    let d = PostgresDriver::new(&format!(
        "postgresql://postgres@/sbtest?host={}&port={}",
        srv.socket_dir().display(),
        srv.port()
    ))
    .unwrap();
    let mut c = d.connect().unwrap();
    assert_eq!(
        scalar(c.as_mut(), "SELECT count(*) FROM sbtest2"),
        scalar(
            driver.require_sql().unwrap().connect().unwrap().as_mut(),
            "SELECT count(*) FROM sbtest2"
        )
    );
    drop(c);

    killed_server_is_reconnect(srv, driver.as_ref());
}
