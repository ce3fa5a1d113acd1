//! rqps's own PostgreSQL frontend against a real throwaway server:
//! password authentication (cleartext, md5, SCRAM-SHA-256) through
//! `pg_hba.conf`, and no heap allocation per execution in steady state.
//!
//! When the server binaries are missing the test prints why and passes
//! (skip), unless `RQPS_REQUIRE_SERVERS=1` is set, in which case it fails.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::{Duration, Instant};

use rqps::engine::postgres::PostgresDriver;
use rqps::engine::server::{Recipe, Server, ServerSpec, locate};
use rqps::engine::{Conn, ErrorClass, Outcome, Param, PsMode, SqlAccess};

static PG: Recipe = &rqps::engine::postgres::server::RECIPE;

/// Counts the allocations of the current thread (tests run in parallel).
struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

fn allocs() -> u64 {
    ALLOCS.with(Cell::get)
}

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(p, l, size) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn start() -> Option<Server> {
    if let Err(e) = locate(PG, None) {
        if std::env::var("RQPS_REQUIRE_SERVERS").is_ok_and(|v| v == "1") {
            panic!("RQPS_REQUIRE_SERVERS=1 but: {e}");
        }
        eprintln!("skipping: {e} (set RQPS_REQUIRE_SERVERS=1 to make this fail)");
        return None;
    }
    let srv = Server::start(&ServerSpec::new(PG), &mut |n| eprintln!("note: {n}"))
        .unwrap_or_else(|e| panic!("starting postgres failed: {e}"));
    Some(srv)
}

fn scalar(c: &mut dyn Conn, sql: &str) -> String {
    c.query_scalar(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .unwrap_or_default()
}

/// (user, hba method, password_encryption, password as written in the URL,
/// the password itself).
const USERS: [(&str, &str, &str, &str, &str); 3] = [
    (
        "rqps_scram",
        "scram-sha-256",
        "scram-sha-256",
        "sc%40r:m",
        "sc@r:m",
    ),
    ("rqps_md5", "md5", "md5", "m%2Fd5", "m/d5"),
    ("rqps_plain", "password", "scram-sha-256", "pl41n", "pl41n"),
];

fn password_users(srv: &Server, admin: &mut dyn Conn) {
    for (user, _, enc, _, pw) in USERS {
        admin
            .query(&format!("SET password_encryption = '{enc}'"))
            .unwrap();
        admin
            .query(&format!("CREATE ROLE {user} LOGIN PASSWORD '{pw}'"))
            .unwrap();
        admin
            .query(&format!("GRANT ALL ON DATABASE sbtest TO {user}"))
            .unwrap();
        let stored = scalar(
            admin,
            &format!("SELECT rolpassword FROM pg_authid WHERE rolname = '{user}'"),
        );
        let prefix = if enc == "md5" {
            "md5"
        } else {
            "SCRAM-SHA-256$"
        };
        assert!(stored.starts_with(prefix), "{user}: {stored}");
    }
    // First match wins: our lines go before the throwaway server's own.
    let hba = srv.data_dir().join("pg_hba.conf");
    let old = std::fs::read_to_string(&hba).unwrap();
    let mut new = String::new();
    for (user, method, ..) in USERS {
        new.push_str(&format!("host all {user} 127.0.0.1/32 {method}\n"));
    }
    std::fs::write(&hba, new + &old).unwrap();
    assert_eq!(scalar(admin, "SELECT pg_reload_conf()"), "t");
    let errors = scalar(
        admin,
        "SELECT count(*) FROM pg_hba_file_rules WHERE error IS NOT NULL",
    );
    assert_eq!(errors, "0");
}

fn authentication(srv: &Server) {
    let port = srv.port();
    for (user, method, _, url_pw, _) in USERS {
        let url = format!("postgres://{user}:{url_pw}@127.0.0.1:{port}/sbtest");
        let d = PostgresDriver::new(&url).unwrap();
        // The reload reaches the postmaster asynchronously: until then the
        // old rule answers; wrong passwords are refused either way.
        let wrong = PostgresDriver::new(&format!(
            "postgres://{user}:wr0ngpass@127.0.0.1:{port}/sbtest"
        ))
        .unwrap();
        let t = Instant::now();
        let e = loop {
            match wrong.connect() {
                Err(e) => break e,
                Ok(_) if t.elapsed() < Duration::from_secs(10) => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                Ok(_) => panic!("{user}: a wrong password is accepted ({method})"),
            }
        };
        eprintln!("{user} ({method}), wrong password: {e}");
        assert_eq!(e.class, ErrorClass::Fatal, "{e}");
        assert_eq!(e.code.as_deref(), Some("28P01"), "{e}");
        assert!(!e.to_string().contains("wr0ngpass"), "{e}");

        let mut c = d
            .connect()
            .unwrap_or_else(|e| panic!("{user} ({method}): {e}"));
        assert_eq!(scalar(c.as_mut(), "SELECT current_user"), user);
        assert_eq!(
            scalar(
                c.as_mut(),
                "SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()"
            ),
            "rqps"
        );
        assert_eq!(scalar(c.as_mut(), "SHOW client_encoding"), "UTF8");

        let none = PostgresDriver::new(&format!("postgres://{user}@127.0.0.1:{port}/sbtest"))
            .unwrap()
            .connect()
            .err()
            .expect("connecting without a password");
        assert_eq!(none.class, ErrorClass::Fatal, "{none}");
        assert!(none.message.contains("password"), "{none}");
    }
}

/// Prepared and text statements, after warming up, allocate nothing.
fn no_allocations(driver: &dyn SqlAccess) {
    let mut c = driver.connect().unwrap();
    c.query(
        "CREATE TABLE alloc_t (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, c CHAR(120) NOT NULL)",
    )
    .unwrap();
    c.query("INSERT INTO alloc_t SELECT i, i, 'c' || i FROM generate_series(1, 1000) i")
        .unwrap();
    for mode in [PsMode::Auto, PsMode::Disable] {
        let begin = c.prepare("BEGIN", mode).unwrap();
        let commit = c.prepare("COMMIT", mode).unwrap();
        let point = c.prepare("SELECT c FROM alloc_t WHERE id=?", mode).unwrap();
        let range = c
            .prepare("SELECT c FROM alloc_t WHERE id BETWEEN ? AND ?", mode)
            .unwrap();
        let update = c
            .prepare("UPDATE alloc_t SET k=k+1 WHERE id=?", mode)
            .unwrap();
        let by_c = c.prepare("SELECT id FROM alloc_t WHERE c=?", mode).unwrap();
        let run = |c: &mut dyn Conn, i: i64| {
            let id = i % 900 + 1;
            assert_eq!(c.execute(begin, &[]).unwrap(), Outcome::Affected(0));
            assert_eq!(
                c.execute(point, &[Param::Int(id)]).unwrap(),
                Outcome::Rows(1)
            );
            assert_eq!(
                c.execute(range, &[Param::Int(id), Param::Int(id + 99)])
                    .unwrap(),
                Outcome::Rows(100)
            );
            assert_eq!(
                c.execute(update, &[Param::Int(id)]).unwrap(),
                Outcome::Affected(1)
            );
            assert_eq!(
                c.execute(by_c, &[Param::Text("c7")]).unwrap(),
                Outcome::Rows(1)
            );
            assert_eq!(c.execute(commit, &[]).unwrap(), Outcome::Affected(0));
            assert_eq!(c.query("SELECT 1").unwrap(), Outcome::Rows(1));
        };
        for i in 0..50 {
            run(c.as_mut(), i);
        }
        let before = allocs();
        for i in 0..500 {
            run(c.as_mut(), i);
        }
        let n = allocs() - before;
        assert_eq!(n, 0, "{mode:?}: {n} allocations in 3500 statements");
    }
    // Out-of-range parameters fail before anything is sent.
    let upd = c
        .prepare("UPDATE alloc_t SET k=? WHERE id=1", PsMode::Auto)
        .unwrap();
    let e = c.execute(upd, &[Param::Int(1 << 40)]).unwrap_err();
    assert_eq!(e.class, ErrorClass::Fatal, "{e}");
    assert_eq!(c.query("SELECT 1").unwrap(), Outcome::Rows(1));
    c.query("DROP TABLE alloc_t").unwrap();
}

#[test]
fn postgres_passwords_and_allocations() {
    let Some(srv) = start() else {
        return;
    };
    let driver = PostgresDriver::new(&srv.url()).unwrap();
    let mut admin = driver.connect().unwrap();
    no_allocations(&driver);
    password_users(&srv, admin.as_mut());
    authentication(&srv);
    drop(admin);
    srv.stop().unwrap();
}
