//! The pgbench client costs no allocation per transaction once its
//! statements are prepared and its variables exist: the real client
//! (`suite::pgbench::client::Client`, the one executor of scripts) runs a
//! script on SQLite with `--protocol prepared` (the `\set` expressions of a
//! tpcb-like script, random draws, arithmetic, a double, a hash, a CASE, a
//! `\gset` whose text is read back, `\if` jumps, `\sleep 0`, bound
//! variables), and a global allocator counts its allocations over a
//! thousand transactions. A script whose `\gset` value grows every time
//! shows the counter counts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

use rqps::engine::Driver;
use rqps::engine::sqlite::SqliteDriver;
use rqps::harness::measure::Counts;
use rqps::harness::runner::Worker;
use rqps::suite::Workload;
use rqps::suite::pgbench::client::{Client, Compiled};
use rqps::suite::pgbench::{Options, Pgbench};

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counter is a plain
// thread-local cell with no destructor.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn allocs() -> u64 {
    ALLOCS.with(|c| c.get())
}

const SCRIPT: &str = "\
\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
\\set ratio :delta / 3.0
\\set h hash(:aid) % 100
\\set z random_zipfian(1, 1000, 1.07)
SELECT n AS fromgset FROM acc WHERE id = 0 \\gset
\\set kind CASE WHEN :h < 50 THEN 1 ELSE 2 END + :fromgset
\\sleep 0 ms
\\if :kind = 1
BEGIN;
\\else
BEGIN IMMEDIATE;
\\endif
UPDATE acc SET n = n + :delta WHERE id = :aid;
SELECT n, :ratio FROM acc WHERE id = :aid;
INSERT INTO hist (tid, bid, aid, delta) VALUES (:tid, :bid, :aid, :delta);
END;
";

/// A client of `script` on a fresh SQLite database under `dir`.
fn client(dir: &std::path::Path, script: &str, protocol: &str) -> Client {
    let db = dir.join("a.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "CREATE TABLE acc (id INTEGER PRIMARY KEY, n INT);\n\
         WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1000)\n\
         INSERT INTO acc SELECT i, 0 FROM s;\n\
         INSERT INTO acc VALUES (0, 7);\n\
         CREATE TABLE hist (tid INT, bid INT, aid INT, delta INT);",
    )
    .unwrap();
    let path = dir.join("t.sql");
    std::fs::write(&path, script).unwrap();
    let common = rqps::suite::RunBasics {
        profile: "ci".into(),
        seed: 11,
        part: None,
    };
    let o = Options {
        script: Some(vec![path.to_str().unwrap().to_string()]),
        protocol: Some(protocol.into()),
        skip_init: Some(true),
        define: Some(vec!["scale=1".into()]),
        ..Default::default()
    };
    let p = Pgbench::params(&common, o).unwrap();
    let driver: Arc<dyn Driver> = Arc::new(SqliteDriver::new(&db, vec![]));
    let compiled = Arc::new(Compiled::new(&p, driver.sql().unwrap().dialect()).unwrap());
    Client::new(driver, compiled, &p, 1, 0).unwrap()
}

#[test]
fn the_real_client_runs_transactions_without_allocating() {
    let d = tempfile::tempdir().unwrap();
    let mut c = client(d.path(), SCRIPT, "prepared");
    let mut counts = Counts::default();
    // The first transactions prepare the statements and make the variables.
    for _ in 0..20 {
        c.event(&mut counts).unwrap();
    }
    let before = allocs();
    for _ in 0..1000 {
        c.event(&mut counts).unwrap();
    }
    let after = allocs();
    assert_eq!(counts.queries(), 1020 * 6, "statements per transaction");
    assert_eq!(after - before, 0, "allocations in 1000 transactions");
    // Every command ran in each (the branches take one of BEGIN and BEGIN
    // IMMEDIATE).
    let ops = &c.tally[0].ops;
    assert_eq!(ops[0].count, 1020);
    assert_eq!(ops[11].count + ops[13].count, 1020);

    // The counter counts: a \gset value that grows every transaction
    // grows its buffer.
    let d = tempfile::tempdir().unwrap();
    let mut c = client(
        d.path(),
        "\\set n :scale * 1000 + :client_id\n\\set scale :scale + 1\nSELECT hex(randomblob(:n)) AS y \\gset\n",
        "prepared",
    );
    c.event(&mut counts).unwrap();
    let before = allocs();
    for _ in 0..10 {
        c.event(&mut counts).unwrap();
    }
    assert!(allocs() > before);
}

/// Runs `script` once on the real client and returns how often each
/// command ran.
fn ran(script: &str) -> Vec<u64> {
    let d = tempfile::tempdir().unwrap();
    let mut c = client(d.path(), script, "simple");
    c.event(&mut Counts::default()).unwrap();
    c.tally[0].ops.iter().map(|o| o.count).collect()
}

#[test]
fn if_elif_else_run_the_branch_pgbench_runs_in_the_client() {
    // Branch commands count too: 1 where the client passed them.
    for (script, want) in [
        ("\\if 0\n\\elif 1\nSELECT 1;\n\\endif", vec![1, 1, 1, 1]),
        ("\\if 0\n\\else\nSELECT 2;\n\\endif", vec![1, 1, 1, 1]),
        (
            "\\if 1\n\\else\nSELECT 3;\n\\endif\nSELECT 4;",
            vec![1, 1, 0, 0, 1],
        ),
        (
            "\\if 0\n\\elif 0\n\\elif 1\n\\else\nSELECT 5;\n\\endif\nSELECT 6;",
            vec![1, 1, 1, 1, 0, 0, 1],
        ),
        // A false \\if goes past its \\endif.
        ("\\if 0\n\\endif\nSELECT 7;", vec![1, 0, 1]),
        (
            "\\set n 0\n\\if :n\n\\set r 1\n\\elif NULL\n\\set r 2\n\\else\n\\set r 3\n\\endif\n\\if :r = 3\nSELECT 8;\n\\endif",
            vec![1, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1],
        ),
    ] {
        assert_eq!(ran(script), want, "{script}");
    }
}

#[test]
fn sleep_reads_a_variable_as_atoi_reads_its_text() {
    // pgbench sleeps atoi("2.7") = 2 ms and atoi("0.002") = 0.
    let d = tempfile::tempdir().unwrap();
    let mut c = client(
        d.path(),
        "\\set a 2.7\n\\set b 0.002\n\\sleep :a ms\n\\sleep :b s\n",
        "simple",
    );
    c.event(&mut Counts::default()).unwrap();
    let ms = |i: usize| c.tally[0].ops[i].ns as f64 / 1e6;
    assert!((2.0..200.0).contains(&ms(2)), "{} ms", ms(2));
    assert!(ms(3) < 1.0, "{} ms", ms(3));
}
