//! pgbench scripts cost no allocation per transaction once parsed: the
//! `\set` expressions of a tpcb-like script (random draws, arithmetic,
//! a double, a hash, a CASE, a variable read from `\gset` text), the `\if`
//! jumps and the substitution of every `:name` into a reused buffer are
//! counted with a global allocator over a thousand transactions.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashMap;

use rqps::suite::pgbench::expr::{Env, PgPrng, Value};
use rqps::suite::pgbench::script::{CommandKind, SqlPart, parse_script};

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

struct Client {
    vars: HashMap<String, Value>,
    rng: PgPrng,
}

impl Env for Client {
    fn var(&self, name: &str) -> Option<&Value> {
        self.vars.get(name)
    }
    fn random_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }
}

const SCRIPT: &str = "\
\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
\\set ratio :delta / 3.0
\\set h hash(:aid) % 100
\\set z random_zipfian(1, 1000, 1.07)
\\set kind CASE WHEN :h < 50 THEN 1 ELSE 2 END + :fromgset
\\if :kind = 1
BEGIN;
\\else
START TRANSACTION;
\\endif
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance, :ratio FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";

/// Runs one transaction of `script` and returns how many statements it sent.
fn transaction(
    script: &rqps::suite::pgbench::script::Script,
    c: &mut Client,
    sql: &mut String,
) -> usize {
    let mut sent = 0;
    let mut pc = 0;
    while pc < script.commands.len() {
        match &script.commands[pc].kind {
            CommandKind::Set { var, expr } => {
                let v = expr.eval(c).unwrap();
                *c.vars.get_mut(var.as_str()).unwrap() = v;
                pc += 1;
            }
            CommandKind::Sql { parts, .. } => {
                sql.clear();
                for p in parts {
                    match p {
                        SqlPart::Text(t) => sql.push_str(t),
                        SqlPart::Var(n) => c.vars[n.as_str()].write_sql_text(sql),
                    }
                }
                sent += 1;
                pc += 1;
            }
            _ => pc = script.after_conditional(pc, |e| e.eval_truth(c)).unwrap(),
        }
    }
    sent
}

#[test]
fn a_parsed_script_runs_transactions_without_allocating() {
    let script = parse_script("tpcb-like.sql", SCRIPT).unwrap();
    let mut c = Client {
        vars: HashMap::new(),
        rng: PgPrng::seeded(11),
    };
    c.vars.insert("scale".into(), Value::Int(10));
    c.vars.insert("default_seed".into(), Value::Int(5432));
    c.vars.insert("fromgset".into(), Value::Str("7".into()));
    for name in ["aid", "bid", "tid", "delta", "ratio", "h", "z", "kind"] {
        c.vars.insert(name.into(), Value::Null);
    }
    let mut sql = String::with_capacity(1024);
    assert_eq!(transaction(&script, &mut c, &mut sql), 5);

    let before = allocs();
    let mut sent = 0;
    for _ in 0..1000 {
        sent += transaction(&script, &mut c, &mut sql);
    }
    let after = allocs();
    assert_eq!(sent, 5000);
    assert_eq!(after - before, 0, "allocations in 1000 transactions");
    // The counter counts: the same work with a fresh buffer allocates.
    let before = allocs();
    transaction(&script, &mut c, &mut String::new());
    assert!(allocs() > before);
}
