//! Runs one Insert Benchmark step: per client an inserting connection, a
//! deleting one where the step deletes, and a query connection where it
//! queries (reference §4.3), until each client has inserted its rows.
//!
//! Deletes never run ahead of inserts: delete `d` starts only after insert
//! `d` has finished, and an inserter waits while it is [`MAX_DELETE_LAG`]
//! statements ahead of its deleter (the reference bounds both queues at 8),
//! so each table keeps its size. Each connection closes its own seconds as its
//! statements start (the harness's [`series`]), and the step merges them into
//! the per-second series, overall and per client; the calling thread only
//! reports progress.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use super::limiter::{Limiter, SystemClock, sleep_until};
use super::rows::{CASHREGISTERS, PRICES, PRODUCTS, RowGen, RowInts};
use super::{KEY, QUERY_ROWS, QueryKind, schema, table_name};
use crate::engine::schema::Table;
use crate::engine::{
    Conn, DbError, DbResult, Driver, ErrorClass, Outcome, Param, PsMode, SqlAccess, StmtId,
};
use crate::harness::measure::now_ns;
use crate::harness::runner::{StepStatus, stop_requested};
use crate::harness::series::{self, Seconds, Tally};
use crate::harness::{RECONNECT_FOR, ReconnectError, reconnect_with_backoff};
use crate::suite::ibench::rt::RtHist;
use crate::suite::rand::Rng;

/// Most insert statements an inserter may be ahead of its deleter.
pub const MAX_DELETE_LAG: u64 = 8;
/// The deleter re-reads the smallest id every this many deletes.
pub const RESYNC_MIN_EVERY: u64 = 1000;
/// Point queries re-read the largest id every this many queries.
pub const REFRESH_MAX_EVERY: u64 = 100;
/// Largest lag a rate-limited writer may make up at once.
pub const MAX_CATCH_UP: Duration = Duration::from_secs(1);
/// How long a connection keeps trying to come back after it was lost.
/// Retryable errors in a row on one statement before the step fails.
const MAX_RETRIES: u32 = 1000;

/// Room for this many seconds of marks before a connection's series allocates.
const EXPECTED_SECS: usize = 128;

/// What one step does, for every client.
#[derive(Clone, Debug)]
pub struct StepSpec {
    pub clients: usize,
    /// Rows each client inserts.
    pub rows_per_client: u64,
    pub rows_per_statement: usize,
    /// Delete as many of the oldest rows as each insert adds.
    pub deletes: bool,
    pub queries: Option<QueryKind>,
    /// Rows per second per client, or as fast as possible.
    pub rate_per_client: Option<f64>,
    /// After inserting, create the secondary indexes (l.x).
    pub create_indexes: bool,
    pub seed: u64,
    pub ps_mode: PsMode,
}

/// What the progress display is told about twice a second.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    pub elapsed: f64,
    pub inserted_rows: u64,
    pub target_rows: u64,
    /// Rates over the last second, then since the step began.
    pub ips: f64,
    pub dps: f64,
    pub qps: f64,
    pub avg_ips: f64,
    pub avg_dps: f64,
    pub avg_qps: f64,
    /// Creating indexes (l.x).
    pub indexing: bool,
}

/// One sample of the step's counters (summed over clients).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Seconds since the step began, at the end of the sample, and its length.
    pub t: f64,
    pub secs: f64,
    pub ips: f64,
    pub dps: f64,
    pub qps: f64,
    /// Longest statement of each kind that started in the sample, nanoseconds.
    pub max_insert_ns: u64,
    pub max_delete_ns: u64,
    pub max_query_ns: u64,
}

/// What a step measured.
pub struct StepOutcome {
    pub status: StepStatus,
    /// From when the writers were released to when the last connection finished.
    pub secs: f64,
    pub inserted_rows: u64,
    pub insert_statements: u64,
    pub deleted_rows: u64,
    pub delete_statements: u64,
    pub queries: u64,
    pub rows_fetched: u64,
    pub insert_retries: u64,
    pub delete_retries: u64,
    pub query_retries: u64,
    pub reconnects: u64,
    /// Response times in nanoseconds.
    pub insert_hist: RtHist,
    pub delete_hist: RtHist,
    pub query_hist: RtHist,
    pub per_second: Vec<Sample>,
    /// The same seconds for each client alone.
    pub per_client: Vec<Vec<Sample>>,
    /// Wall seconds from the first index build's start to the last one's end (l.x).
    pub index_secs: Option<f64>,
}

/// Drops and creates every client's table (the `--setup` of l.i0).
pub fn setup_tables(driver: &dyn Driver, clients: usize) -> DbResult<()> {
    let db = driver.require_sql()?;
    let mut conn = db.connect()?;
    let d = db.dialect();
    for i in 1..=clients {
        let t = schema::table(i);
        conn.query(&d.drop_table(&t))?;
        for sql in d.create_table(&t) {
            conn.query(&sql)?;
        }
    }
    Ok(())
}

/// The first table past this run's clients (`pi<C+1>`) when it exists: one
/// left by an earlier run with more clients. rqps cannot tell that it made
/// it, so it is not dropped; its size counts in the database size.
pub fn leftover_table(driver: &dyn Driver, clients: usize) -> Option<String> {
    let t = table_name(clients + 1);
    let mut conn = driver.require_sql().ok()?.connect().ok()?;
    conn.query_scalar(&format!("SELECT 1 FROM {t} LIMIT 1"))
        .ok()
        .map(|_| t)
}

/// Rows in all the clients' tables.
pub fn count_rows(driver: &dyn Driver, clients: usize) -> DbResult<u64> {
    let mut conn = driver.require_sql()?.connect()?;
    let mut n = 0;
    for i in 1..=clients {
        let v = conn.query_scalar(&format!("SELECT count(*) FROM {}", table_name(i)))?;
        n += v.and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0);
    }
    Ok(n)
}

/// Why a connection's loop ended early.
enum Halt {
    Stopped,
    Failed(String),
}

type Done<T> = Result<T, Halt>;

/// Wakes a client's inserter and deleter when the other made progress.
#[derive(Default)]
struct Gate {
    m: Mutex<()>,
    cv: Condvar,
}

impl Gate {
    fn notify(&self) {
        drop(self.m.lock().unwrap_or_else(|e| e.into_inner()));
        self.cv.notify_all();
    }

    /// Waits until `ready` (true) or `stop` (false).
    fn wait(&self, ready: &dyn Fn() -> bool, stop: &dyn Fn() -> bool) -> bool {
        let mut g = self.m.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if ready() {
                return true;
            }
            if stop() {
                return false;
            }
            g = self
                .cv
                .wait_timeout(g, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// One client's counters, read by the sampler while the connections run.
#[repr(align(64))]
#[derive(Default)]
struct ClientLive {
    inserted_rows: AtomicU64,
    insert_stmts: AtomicU64,
    deleted_rows: AtomicU64,
    delete_stmts: AtomicU64,
    queries: AtomicU64,
    /// The deleter's lower bound of the ids in the table.
    min_id: AtomicI64,
    inserter_done: AtomicBool,
    /// Writers (inserter, deleter) still running; queries stop at 0.
    writers_left: AtomicUsize,
    gate: Gate,
}

struct Shared {
    abort: AtomicBool,
    failure: Mutex<Option<String>>,
    clients: Vec<ClientLive>,
    /// Index builds: earliest start and latest end ([`now_ns`]).
    index_start: AtomicU64,
    index_end: AtomicU64,
    indexing: AtomicBool,
    /// Serializes index builds on single-writer engines.
    index_lock: Mutex<()>,
}

impl Shared {
    fn stopping(&self) -> bool {
        stop_requested() || self.abort.load(Ordering::Relaxed)
    }

    fn fail(&self, msg: String) {
        let mut f = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        if f.is_none() {
            *f = Some(msg);
        }
        drop(f);
        self.abort.store(true, Ordering::SeqCst);
        for c in &self.clients {
            c.gate.notify();
        }
    }
}

/// A connection and the statements prepared on it, made again after it is lost.
struct Link<'a> {
    driver: &'a dyn SqlAccess,
    conn: Box<dyn Conn>,
    ps: PsMode,
    sqls: Vec<String>,
    ids: Vec<StmtId>,
    reconnects: u64,
}

impl<'a> Link<'a> {
    fn new(driver: &'a dyn Driver, ps: PsMode) -> DbResult<Self> {
        let driver = driver.require_sql()?;
        Ok(Link {
            driver,
            conn: driver.connect()?,
            ps,
            sqls: Vec::new(),
            ids: Vec::new(),
            reconnects: 0,
        })
    }

    /// Prepares `sql` and returns its slot.
    fn prepare(&mut self, sql: String) -> DbResult<usize> {
        let id = self.conn.prepare(&sql, self.ps)?;
        self.sqls.push(sql);
        self.ids.push(id);
        Ok(self.ids.len() - 1)
    }

    /// Connects again with backoff and prepares every statement again.
    fn reconnect(&mut self, first: &DbError, stop: &dyn Fn() -> bool) -> Done<()> {
        let give_up = std::time::Instant::now() + RECONNECT_FOR;
        let (driver, sqls, ps) = (self.driver, &self.sqls, self.ps);
        let attempt = || {
            driver.connect().and_then(|mut c| {
                let mut ids = Vec::with_capacity(sqls.len());
                for s in sqls {
                    ids.push(c.prepare(s, ps)?);
                }
                Ok((c, ids))
            })
        };
        match reconnect_with_backoff(give_up, stop, attempt) {
            Ok((c, ids)) => {
                self.conn = c;
                self.ids = ids;
                self.reconnects += 1;
                Ok(())
            }
            Err(ReconnectError::Fatal(e)) => Err(Halt::Failed(e.to_string())),
            Err(ReconnectError::Stopped) => Err(Halt::Stopped),
            Err(ReconnectError::GaveUp(e)) => Err(Halt::Failed(format!(
                "lost the connection and could not reconnect: {e} (first error: {first})"
            ))),
        }
    }

    /// Handles a failed statement: Ok to run it again, or why not.
    fn recover(&mut self, e: DbError, tries: &mut u32, stop: &dyn Fn() -> bool) -> Done<()> {
        if stop() {
            return Err(Halt::Stopped);
        }
        *tries += 1;
        match e.class {
            ErrorClass::Fatal => Err(Halt::Failed(e.to_string())),
            _ if *tries > MAX_RETRIES => Err(Halt::Failed(format!(
                "still failing after {MAX_RETRIES} tries: {e}"
            ))),
            ErrorClass::Retry => Ok(()),
            ErrorClass::Reconnect => self.reconnect(&e, stop),
        }
    }

    /// Runs a prepared statement, again after retryable errors (counted in
    /// `retries`). A write whose connection was lost is sent again on the new
    /// one: if it had committed, the table holds one batch more.
    fn exec(
        &mut self,
        slot: usize,
        params: &[Param<'_>],
        retries: &mut u64,
        stop: &dyn Fn() -> bool,
    ) -> Done<Outcome> {
        let mut tries = 0;
        loop {
            match self.conn.execute(self.ids[slot], params) {
                Ok(o) => return Ok(o),
                Err(e) => {
                    self.recover(e, &mut tries, stop)?;
                    *retries += 1;
                }
            }
        }
    }

    /// Runs `sql` as text, again after retryable errors.
    fn run_text(&mut self, sql: &str, stop: &dyn Fn() -> bool) -> Done<()> {
        let mut tries = 0;
        loop {
            match self.conn.query(sql) {
                Ok(_) => return Ok(()),
                Err(e) => self.recover(e, &mut tries, stop)?,
            }
        }
    }

    /// The integer value of a one-value query (None for NULL).
    fn int(&mut self, sql: &str, stop: &dyn Fn() -> bool) -> Done<Option<i64>> {
        let mut tries = 0;
        loop {
            match self.conn.query_scalar(sql) {
                Ok(v) => return Ok(v.and_then(|v| v.trim().parse().ok())),
                Err(e) => self.recover(e, &mut tries, stop)?,
            }
        }
    }
}

/// What one connection's loop measured.
struct RoleResult {
    hist: RtHist,
    retries: u64,
    reconnects: u64,
    rows_fetched: u64,
    end_ns: u64,
}

fn seed_for(seed: u64, client: usize, role: u64) -> u64 {
    seed ^ (client as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ role.wrapping_mul(0xD1B5_4A32_D192_ED03)
}

/// Rows of insert (and delete) statement `b` of a client.
fn batch_rows(spec: &StepSpec, b: u64) -> usize {
    let per = spec.rows_per_statement as u64;
    spec.rows_per_client.saturating_sub(b * per).min(per) as usize
}

fn statements(spec: &StepSpec) -> u64 {
    spec.rows_per_client
        .div_ceil(spec.rows_per_statement.max(1) as u64)
}

struct Inserter<'a> {
    link: Link<'a>,
    client: usize,
    table: Table,
    /// Slots of the insert of a full batch and of the last, shorter one.
    full: usize,
    tail: Option<usize>,
    rowgen: RowGen,
    ints: Vec<RowInts>,
    data: Vec<String>,
    marks: Marks,
}

impl<'a> Inserter<'a> {
    fn new(driver: &'a dyn Driver, spec: &StepSpec, client: usize) -> DbResult<Self> {
        let table = schema::table(client);
        let mut link = Link::new(driver, spec.ps_mode)?;
        let per = spec.rows_per_statement;
        let d = driver.require_sql()?.dialect();
        let full = link.prepare(insert_sql(d, &table, per))?;
        let last = batch_rows(spec, statements(spec).saturating_sub(1));
        let tail = if last > 0 && last != per {
            Some(link.prepare(insert_sql(d, &table, last))?)
        } else {
            None
        };
        Ok(Inserter {
            link,
            client,
            table,
            full,
            tail,
            rowgen: RowGen::new(seed_for(spec.seed, client, 1)),
            ints: vec![
                RowInts {
                    cashregisterid: 0,
                    customerid: 0,
                    productid: 0,
                    price: 0,
                };
                per
            ],
            data: vec![String::with_capacity(24); per],
            marks: Marks::default(),
        })
    }

    fn run(&mut self, spec: &StepSpec, sh: &Shared, start_ns: u64) -> Done<RoleResult> {
        self.marks = Marks::new(start_ns);
        let live = &sh.clients[self.client - 1];
        let stop = || sh.stopping();
        let mut hist = RtHist::default();
        let mut retries = 0;
        let mut limiter = spec.rate_per_client.map(|r| {
            Limiter::new(
                r,
                spec.rows_per_statement,
                start_ns,
                MAX_CATCH_UP.as_nanos() as u64,
            )
            .with_phase((self.client as f64 - 0.5) / spec.clients.max(1) as f64)
        });
        let n = statements(spec);
        for b in 0..n {
            let rows = batch_rows(spec, b);
            if let Some(l) = limiter.as_mut()
                && !l.wait(&SystemClock, &stop)
            {
                return Err(Halt::Stopped);
            }
            if spec.deletes
                && !live.gate.wait(
                    &|| b < live.delete_stmts.load(Ordering::Acquire) + MAX_DELETE_LAG,
                    &stop,
                )
            {
                return Err(Halt::Stopped);
            }
            let epoch = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0);
            for r in 0..rows {
                self.ints[r] = self.rowgen.ints();
                self.rowgen.data(&mut self.data[r]);
            }
            let mut params: Vec<Param<'_>> = Vec::with_capacity(rows * 6);
            for r in 0..rows {
                let v = self.ints[r];
                params.extend([
                    Param::Int(epoch),
                    Param::Int(v.cashregisterid),
                    Param::Int(v.customerid),
                    Param::Int(v.productid),
                    Param::Int(v.price),
                    Param::Text(&self.data[r]),
                ]);
            }
            let slot = if rows == spec.rows_per_statement {
                self.full
            } else {
                self.tail.unwrap_or(self.full)
            };
            let t0 = now_ns();
            self.marks.tick(t0);
            self.link.exec(slot, &params, &mut retries, &stop)?;
            let dt = now_ns() - t0;
            hist.record(dt);
            let t = &mut self.marks.tally;
            t.inserted += rows as u64;
            t.max_insert = t.max_insert.max(dt);
            live.inserted_rows.fetch_add(rows as u64, Ordering::Relaxed);
            live.insert_stmts.fetch_add(1, Ordering::Release);
            if spec.deletes {
                live.gate.notify();
            }
        }
        if spec.create_indexes {
            self.create_indexes(sh, &stop)?;
        }
        // A paced writer's step lasts until its last slot ends.
        if let Some(l) = &limiter
            && !sleep_until(&SystemClock, l.slot_end_ns(), &stop)
        {
            return Err(Halt::Stopped);
        }
        Ok(RoleResult {
            hist,
            retries,
            reconnects: self.link.reconnects,
            rows_fetched: 0,
            end_ns: now_ns(),
        })
    }

    fn create_indexes(&mut self, sh: &Shared, stop: &dyn Fn() -> bool) -> Done<()> {
        let single = self.link.driver.caps().single_writer;
        let _one_at_a_time =
            single.then(|| sh.index_lock.lock().unwrap_or_else(|e| e.into_inner()));
        sh.indexing.store(true, Ordering::Relaxed);
        sh.index_start.fetch_min(now_ns(), Ordering::Relaxed);
        let d = self.link.driver.dialect();
        for sql in d.create_indexes(&self.table) {
            self.link.run_text(&sql, stop)?;
        }
        sh.index_end.fetch_max(now_ns(), Ordering::Relaxed);
        Ok(())
    }
}

/// The multi-row INSERT of `rows` rows into `table` (one `?` per column,
/// the time as Unix seconds).
pub fn insert_sql(dialect: &dyn crate::engine::Dialect, table: &Table, rows: usize) -> String {
    let ts = dialect.datetime_from_epoch();
    let one = format!("({ts}, ?, ?, ?, ?, ?)");
    format!(
        "INSERT INTO {} ({}) VALUES {}",
        table.name,
        table.value_columns(),
        vec![one; rows].join(", ")
    )
}

struct Deleter<'a> {
    link: Link<'a>,
    client: usize,
    min_sql: String,
    /// The smallest id when the step began (0 for an empty table).
    start_min: i64,
    full: usize,
    tail: Option<usize>,
    marks: Marks,
}

impl<'a> Deleter<'a> {
    fn new(driver: &'a dyn Driver, spec: &StepSpec, client: usize) -> DbResult<Self> {
        let table = schema::table(client);
        let d = driver.require_sql()?.dialect();
        let mut link = Link::new(driver, spec.ps_mode)?;
        let per = spec.rows_per_statement;
        let full = link.prepare(d.delete_oldest(&table, per))?;
        let last = batch_rows(spec, statements(spec).saturating_sub(1));
        let tail = if last > 0 && last != per {
            Some(link.prepare(d.delete_oldest(&table, last))?)
        } else {
            None
        };
        let min_sql = d.min_key_sql(&table);
        let start_min = link
            .conn
            .query_scalar(&min_sql)?
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        Ok(Deleter {
            link,
            client,
            min_sql,
            start_min,
            full,
            tail,
            marks: Marks::default(),
        })
    }

    fn run(&mut self, spec: &StepSpec, sh: &Shared, start_ns: u64) -> Done<RoleResult> {
        self.marks = Marks::new(start_ns);
        let live = &sh.clients[self.client - 1];
        let stop = || sh.stopping();
        let mut hist = RtHist::default();
        let mut retries = 0;
        let mut m = self.start_min;
        for d in 0.. {
            let ready = || {
                live.insert_stmts.load(Ordering::Acquire) > d
                    || live.inserter_done.load(Ordering::Acquire)
            };
            if !live.gate.wait(&ready, &stop) {
                return Err(Halt::Stopped);
            }
            if live.insert_stmts.load(Ordering::Acquire) <= d {
                break;
            }
            let rows = batch_rows(spec, d);
            let slot = if rows == spec.rows_per_statement {
                self.full
            } else {
                self.tail.unwrap_or(self.full)
            };
            let t0 = now_ns();
            self.marks.tick(t0);
            let o = self
                .link
                .exec(slot, &[Param::Int(m)], &mut retries, &stop)?;
            let dt = now_ns() - t0;
            hist.record(dt);
            let deleted = match o {
                Outcome::Affected(n) | Outcome::Rows(n) => n,
            };
            let t = &mut self.marks.tally;
            t.deleted += deleted;
            t.max_delete = t.max_delete.max(dt);
            live.deleted_rows.fetch_add(deleted, Ordering::Relaxed);
            live.delete_stmts.fetch_add(1, Ordering::Release);
            live.gate.notify();
            // The ids below m are gone; m is a lower bound that keeps the
            // delete off the purged left edge of the index.
            m += rows as i64;
            if (d + 1) % RESYNC_MIN_EVERY == 0
                && let Some(v) = self.link.int(&self.min_sql, &stop)?
            {
                m = v;
            }
            live.min_id.store(m, Ordering::Relaxed);
        }
        Ok(RoleResult {
            hist,
            retries,
            reconnects: self.link.reconnects,
            rows_fetched: 0,
            end_ns: now_ns(),
        })
    }
}

struct Querier<'a> {
    link: Link<'a>,
    client: usize,
    kind: QueryKind,
    /// Range queries (3 shapes) or the point query.
    slots: Vec<usize>,
    max_sql: String,
    rng: Rng,
    marks: Marks,
}

impl<'a> Querier<'a> {
    fn new(
        driver: &'a dyn Driver,
        spec: &StepSpec,
        kind: QueryKind,
        client: usize,
    ) -> DbResult<Self> {
        let table = schema::table(client);
        let t = &table.name;
        let d = driver.require_sql()?.dialect();
        let mut link = Link::new(driver, spec.ps_mode)?;
        let mut slots = Vec::new();
        match kind {
            QueryKind::Range => {
                let shapes = [
                    ("productid, customerid, price", "productid >= ?"),
                    ("cashregisterid, customerid, price", "cashregisterid > ?"),
                    ("price, dateandtime, customerid", "price >= ?"),
                ];
                for ((cols, cond), index) in shapes.iter().zip(&table.indexes) {
                    slots.push(link.prepare(format!(
                        "SELECT {cols} FROM {} WHERE {cond} ORDER BY {cols} LIMIT {QUERY_ROWS}",
                        d.table_with_index(&table, &index.name)
                    ))?);
                }
            }
            QueryKind::Point => {
                slots.push(link.prepare(format!(
                    "SELECT {KEY}, productid, data FROM {t} WHERE {KEY} IN ({})",
                    ["?"; QUERY_ROWS].join(", ")
                ))?);
            }
        }
        Ok(Querier {
            link,
            client,
            kind,
            slots,
            max_sql: d.max_key_sql(&table),
            rng: Rng::seeded(seed_for(spec.seed, client, 3)),
            marks: Marks::default(),
        })
    }

    fn run(&mut self, sh: &Shared, start_ns: u64) -> Done<RoleResult> {
        self.marks = Marks::new(start_ns);
        let live = &sh.clients[self.client - 1];
        let stop = || sh.stopping();
        let mut hist = RtHist::default();
        let mut retries = 0;
        let mut fetched = 0u64;
        let mut max = 0i64;
        let mut n = 0u64;
        let mut ids = [Param::Int(0); QUERY_ROWS];
        while live.writers_left.load(Ordering::Acquire) > 0 {
            if stop() {
                return Err(Halt::Stopped);
            }
            let t0;
            let o = match self.kind {
                QueryKind::Range => {
                    let shape = self.rng.below(3);
                    let hi = [PRODUCTS, CASHREGISTERS, PRICES][shape];
                    let v = self.rng.uniform(0, hi - 1);
                    t0 = now_ns();
                    self.marks.tick(t0);
                    self.link
                        .exec(self.slots[shape], &[Param::Int(v)], &mut retries, &stop)?
                }
                QueryKind::Point => {
                    if n.is_multiple_of(REFRESH_MAX_EVERY) {
                        max = self.link.int(&self.max_sql, &stop)?.unwrap_or(0);
                    }
                    let min = live.min_id.load(Ordering::Relaxed);
                    for id in ids.iter_mut() {
                        *id = Param::Int(if max > min {
                            self.rng.uniform(min, max - 1)
                        } else {
                            min
                        });
                    }
                    t0 = now_ns();
                    self.marks.tick(t0);
                    self.link.exec(self.slots[0], &ids, &mut retries, &stop)?
                }
            };
            let dt = now_ns() - t0;
            hist.record(dt);
            if let Outcome::Rows(r) = o {
                fetched += r;
            }
            n += 1;
            let t = &mut self.marks.tally;
            t.queries += 1;
            t.max_query = t.max_query.max(dt);
            live.queries.fetch_add(1, Ordering::Relaxed);
        }
        Ok(RoleResult {
            hist,
            retries,
            reconnects: self.link.reconnects,
            rows_fetched: fetched,
            end_ns: now_ns(),
        })
    }
}

/// Totals over clients at one instant.
#[derive(Clone, Copy, Default)]
struct Totals {
    inserted: u64,
    deleted: u64,
    queries: u64,
}

fn totals(sh: &Shared) -> Totals {
    let mut t = Totals::default();
    for c in client_totals(sh) {
        t.inserted += c.inserted;
        t.deleted += c.deleted;
        t.queries += c.queries;
    }
    t
}

fn client_totals(sh: &Shared) -> Vec<Totals> {
    sh.clients
        .iter()
        .map(|c| Totals {
            inserted: c.inserted_rows.load(Ordering::Relaxed),
            deleted: c.deleted_rows.load(Ordering::Relaxed),
            queries: c.queries.load(Ordering::Relaxed),
        })
        .collect()
}

/// What one connection did, cumulatively, for the per-second series.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct IbTally {
    inserted: u64,
    deleted: u64,
    queries: u64,
    /// Longest statement of each kind in the current second (gauges).
    max_insert: u64,
    max_delete: u64,
    max_query: u64,
}

impl Tally for IbTally {
    fn merge(&mut self, o: &Self) {
        self.inserted += o.inserted;
        self.deleted += o.deleted;
        self.queries += o.queries;
        self.max_insert = self.max_insert.max(o.max_insert);
        self.max_delete = self.max_delete.max(o.max_delete);
        self.max_query = self.max_query.max(o.max_query);
    }

    fn since(&self, e: &Self) -> Self {
        IbTally {
            inserted: self.inserted - e.inserted,
            deleted: self.deleted - e.deleted,
            queries: self.queries - e.queries,
            ..*self
        }
    }

    fn close(&mut self) -> Self {
        let mark = *self;
        (self.max_insert, self.max_delete, self.max_query) = (0, 0, 0);
        mark
    }
}

/// A connection's running tally and its closed seconds.
#[derive(Default)]
struct Marks {
    tally: IbTally,
    seconds: Option<Seconds<IbTally>>,
}

impl Marks {
    fn new(start_ns: u64) -> Self {
        Marks {
            tally: IbTally::default(),
            seconds: Some(Seconds::new(start_ns, EXPECTED_SECS)),
        }
    }

    /// Before a statement that starts at `now`.
    #[inline]
    fn tick(&mut self, now: u64) {
        if let Some(s) = self.seconds.as_mut() {
            s.tick(now, &mut self.tally);
        }
    }
}

fn each_series<'a>(roles: &[&'a Marks]) -> Vec<(&'a Seconds<IbTally>, &'a IbTally)> {
    roles
        .iter()
        .filter_map(|m| Some((m.seconds.as_ref()?, &m.tally)))
        .collect()
}

/// The per-second series of `roles` (connections' marks) over `whole` whole
/// seconds and a last part-second up to `end_t`.
fn merged(
    roles: &[&Marks],
    whole: usize,
    end_t: f64,
    keep: &dyn Fn(&IbTally) -> bool,
) -> Vec<Sample> {
    let series = series::merge_seconds(&each_series(roles), whole, end_t, 1e-3, keep);
    let mut out: Vec<Sample> = series
        .iter()
        .map(|s| {
            let per = |n: u64| n as f64 / s.secs.max(1e-9);
            Sample {
                t: s.at,
                secs: s.secs,
                ips: per(s.d.inserted),
                dps: per(s.d.deleted),
                qps: per(s.d.queries),
                max_insert_ns: s.d.max_insert,
                max_delete_ns: s.d.max_delete,
                max_query_ns: s.d.max_query,
            }
        })
        .collect();
    // A step in which nothing was done still has its one sample.
    if out.is_empty() && end_t > 1e-3 {
        out.push(Sample {
            t: end_t,
            secs: end_t,
            ..Sample::default()
        });
    }
    out
}

/// A connection role ready to run, built before the clock starts.
enum Role<'a> {
    Insert(Inserter<'a>),
    Delete(Deleter<'a>),
    Query(Querier<'a>),
}

/// Runs `spec` with every client's connections (connected and prepared
/// before the step's clock starts), calling `on_progress` from this thread.
pub fn run_step(
    driver: &dyn Driver,
    spec: &StepSpec,
    on_progress: &mut dyn FnMut(&Progress),
) -> StepOutcome {
    let sh = Shared {
        abort: AtomicBool::new(false),
        failure: Mutex::new(None),
        clients: (0..spec.clients).map(|_| ClientLive::default()).collect(),
        index_start: AtomicU64::new(u64::MAX),
        index_end: AtomicU64::new(0),
        indexing: AtomicBool::new(false),
        index_lock: Mutex::new(()),
    };
    let mut roles: Vec<Role<'_>> = Vec::new();
    let built: DbResult<()> = (|| {
        for c in 1..=spec.clients {
            roles.push(Role::Insert(Inserter::new(driver, spec, c)?));
            let mut writers = 1;
            if spec.deletes {
                let d = Deleter::new(driver, spec, c)?;
                // Point queries draw ids from here up from their first query on.
                sh.clients[c - 1]
                    .min_id
                    .store(d.start_min, Ordering::Relaxed);
                roles.push(Role::Delete(d));
                writers += 1;
            }
            sh.clients[c - 1]
                .writers_left
                .store(writers, Ordering::Relaxed);
            if let Some(kind) = spec.queries {
                roles.push(Role::Query(Querier::new(driver, spec, kind, c)?));
            }
        }
        Ok(())
    })();
    if let Err(e) = built {
        return empty_outcome(StepStatus::Failed(format!(
            "could not connect and prepare: {e}"
        )));
    }
    let target_rows = spec.rows_per_client * spec.clients as u64;
    let start_ns = now_ns();
    type Joined = (Vec<(u8, usize, Done<RoleResult>, Marks)>, f64);
    let (results, secs): Joined = std::thread::scope(|s| {
        let sh = &sh;
        let handles: Vec<_> = roles
            .into_iter()
            .map(|role| {
                s.spawn(move || {
                    let (kind, client, r, marks) = match role {
                        Role::Insert(mut w) => {
                            let r = w.run(spec, sh, start_ns);
                            let live = &sh.clients[w.client - 1];
                            live.inserter_done.store(true, Ordering::Release);
                            live.gate.notify();
                            (0u8, w.client, r, w.marks)
                        }
                        Role::Delete(mut w) => {
                            let r = w.run(spec, sh, start_ns);
                            (1, w.client, r, w.marks)
                        }
                        Role::Query(mut w) => {
                            let r = w.run(sh, start_ns);
                            (2, w.client, r, w.marks)
                        }
                    };
                    if kind < 2 {
                        sh.clients[client - 1]
                            .writers_left
                            .fetch_sub(1, Ordering::AcqRel);
                    }
                    if let Err(Halt::Failed(m)) = &r {
                        sh.fail(m.clone());
                    }
                    (kind, client, r, marks)
                })
            })
            .collect();
        // Rates over the last second or so, for the display only.
        let mut window = (start_ns, Totals::default());
        let mut recent = (0.0, 0.0, 0.0);
        let mut shown = Progress::default();
        let mut next_show = start_ns;
        while !handles.iter().all(|h| h.is_finished()) {
            let now = now_ns();
            let wake = next_show.min(now + 100_000_000);
            std::thread::sleep(Duration::from_nanos(wake.saturating_sub(now)));
            let now = now_ns();
            if now >= next_show {
                let t = totals(sh);
                let span = (now - window.0) as f64 / 1e9;
                if span >= 0.999 {
                    let per = |a: u64, b: u64| (a - b) as f64 / span;
                    let w = window.1;
                    recent = (
                        per(t.inserted, w.inserted),
                        per(t.deleted, w.deleted),
                        per(t.queries, w.queries),
                    );
                    window = (now, t);
                }
                let elapsed = (now - start_ns) as f64 / 1e9;
                let avg = |n: u64| n as f64 / elapsed.max(1e-9);
                shown = Progress {
                    elapsed,
                    inserted_rows: t.inserted,
                    target_rows,
                    ips: recent.0,
                    dps: recent.1,
                    qps: recent.2,
                    avg_ips: avg(t.inserted),
                    avg_dps: avg(t.deleted),
                    avg_qps: avg(t.queries),
                    indexing: sh.indexing.load(Ordering::Relaxed),
                };
                on_progress(&shown);
                next_show = now + 500_000_000;
            }
        }
        let results: Vec<(u8, usize, Done<RoleResult>, Marks)> = handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    let failed = Err(Halt::Failed("a connection thread panicked".into()));
                    (9, 0, failed, Marks::default())
                })
            })
            .collect();
        let end = results
            .iter()
            .filter_map(|(_, _, r, _)| r.as_ref().ok().map(|r| r.end_ns))
            .max()
            .unwrap_or_else(now_ns);
        shown.inserted_rows = totals(sh).inserted;
        on_progress(&shown);
        (results, (end.max(start_ns) - start_ns) as f64 / 1e9)
    });
    let mut out = empty_outcome(StepStatus::Ok);
    out.secs = secs;
    // The step's seconds, then each client's: the same entries, so a last
    // partial second is kept for every client when it is kept for the step.
    let tail_kept = std::cell::Cell::new(false);
    let all: Vec<&Marks> = results.iter().map(|r| &r.3).collect();
    let whole = series::whole_seconds(&each_series(&all));
    out.per_second = merged(&all, whole, secs, &|d| {
        tail_kept.set(d.inserted > 0 || d.deleted > 0 || d.queries > 0);
        tail_kept.get()
    });
    out.per_client = (1..=spec.clients)
        .map(|c| {
            let mine: Vec<&Marks> = results.iter().filter(|r| r.1 == c).map(|r| &r.3).collect();
            merged(&mine, whole, secs, &|_| tail_kept.get())
        })
        .collect();
    let t = totals(&sh);
    out.inserted_rows = t.inserted;
    out.deleted_rows = t.deleted;
    out.queries = t.queries;
    for c in &sh.clients {
        out.insert_statements += c.insert_stmts.load(Ordering::Relaxed);
        out.delete_statements += c.delete_stmts.load(Ordering::Relaxed);
    }
    let mut stopped = false;
    for (kind, _, r, _) in results {
        match r {
            Ok(r) => {
                let (hist, retries) = match kind {
                    0 => (&mut out.insert_hist, &mut out.insert_retries),
                    1 => (&mut out.delete_hist, &mut out.delete_retries),
                    _ => (&mut out.query_hist, &mut out.query_retries),
                };
                hist.add(&r.hist);
                *retries += r.retries;
                out.reconnects += r.reconnects;
                out.rows_fetched += r.rows_fetched;
            }
            Err(Halt::Stopped) => stopped = true,
            Err(Halt::Failed(_)) => {}
        }
    }
    let (s0, s1) = (
        sh.index_start.load(Ordering::Relaxed),
        sh.index_end.load(Ordering::Relaxed),
    );
    if spec.create_indexes && s1 >= s0 && s0 != u64::MAX {
        out.index_secs = Some((s1 - s0) as f64 / 1e9);
    }
    let failure = sh.failure.lock().unwrap_or_else(|e| e.into_inner()).take();
    out.status = match failure {
        Some(m) => StepStatus::Failed(m),
        None if stopped || stop_requested() => StepStatus::Interrupted,
        None => StepStatus::Ok,
    };
    out
}

fn empty_outcome(status: StepStatus) -> StepOutcome {
    StepOutcome {
        status,
        secs: 0.0,
        inserted_rows: 0,
        insert_statements: 0,
        deleted_rows: 0,
        delete_statements: 0,
        queries: 0,
        rows_fetched: 0,
        insert_retries: 0,
        delete_retries: 0,
        query_retries: 0,
        reconnects: 0,
        insert_hist: RtHist::default(),
        delete_hist: RtHist::default(),
        query_hist: RtHist::default(),
        per_second: Vec::new(),
        per_client: Vec::new(),
        index_secs: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sqlite::SqliteDriver;

    fn spec(rows: u64, per: usize, deletes: bool) -> StepSpec {
        StepSpec {
            clients: 2,
            rows_per_client: rows,
            rows_per_statement: per,
            deletes,
            queries: None,
            rate_per_client: None,
            create_indexes: false,
            seed: 1,
            ps_mode: PsMode::Auto,
        }
    }

    fn ids(c: &mut Box<dyn Conn>, t: &str) -> String {
        c.query_scalar(&format!(
            "SELECT count(*) || ',' || min(transactionid) || ',' || max(transactionid) FROM {t}"
        ))
        .unwrap()
        .unwrap()
    }

    #[test]
    fn tables_are_queues_of_constant_size() {
        let dir = tempfile::tempdir().unwrap();
        let driver = SqliteDriver::new(&dir.path().join("ib.db"), vec![]);
        setup_tables(&driver, 2).unwrap();
        // 1234 rows: 12 statements of 100 and one of 34.
        let out = run_step(&driver, &spec(1234, 100, false), &mut |_| {});
        assert_eq!(out.status, StepStatus::Ok);
        assert_eq!((out.inserted_rows, out.insert_statements), (2468, 26));
        assert_eq!(count_rows(&driver, 2).unwrap(), 2468);
        let mut c = driver.connect().unwrap();
        assert_eq!(ids(&mut c, "pi1"), "1234,1,1234");
        // Range of the generated columns as stored, and the time of the batch.
        let check = c
            .query_scalar(
                "SELECT min(cashregisterid) >= 0 AND max(cashregisterid) < 1000 \
                 AND max(productid) < 10000 AND max(customerid) < 100000 AND max(price) < 500 \
                 AND min(length(data)) >= 10 AND max(length(data)) <= 20 \
                 AND abs(strftime('%s', max(dateandtime)) - strftime('%s', 'now')) < 600 FROM pi2",
            )
            .unwrap();
        assert_eq!(check.as_deref(), Some("1"));

        // l.i1-like: 5 rows per statement, a delete per insert. An observer
        // counts the rows all along: never fewer than at the start (a delete
        // never ran ahead of its insert), never more than 8 statements ahead.
        let stop = AtomicBool::new(false);
        let (lo, hi, out) = std::thread::scope(|s| {
            let obs = s.spawn(|| {
                let mut c = driver.connect().unwrap();
                let (mut lo, mut hi) = (u64::MAX, 0);
                while !stop.load(Ordering::Relaxed) {
                    let n: u64 = c
                        .query_scalar("SELECT count(*) FROM pi1")
                        .unwrap()
                        .unwrap()
                        .parse()
                        .unwrap();
                    (lo, hi) = (lo.min(n), hi.max(n));
                }
                (lo, hi)
            });
            let out = run_step(&driver, &spec(1003, 5, true), &mut |_| {});
            stop.store(true, Ordering::Relaxed);
            let (lo, hi) = obs.join().unwrap();
            (lo, hi, out)
        });
        assert_eq!(out.status, StepStatus::Ok);
        assert_eq!((out.inserted_rows, out.deleted_rows), (2006, 2006));
        assert_eq!(out.insert_statements, out.delete_statements);
        assert!(lo >= 1234 && hi <= 1234 + MAX_DELETE_LAG * 5, "{lo}..{hi}");
        // The oldest 1003 rows went, the newest stayed.
        assert_eq!(ids(&mut c, "pi1"), "1234,1004,2237");
        assert_eq!(count_rows(&driver, 2).unwrap(), 2468);
        assert!(out.delete_hist.len() == 2 * 201 && out.insert_hist.len() == 2 * 201);
    }

    #[test]
    fn a_table_left_by_a_run_with_more_clients_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let driver = SqliteDriver::new(&dir.path().join("ib.db"), vec![]);
        setup_tables(&driver, 3).unwrap();
        assert_eq!(leftover_table(&driver, 2).as_deref(), Some("pi3"));
        assert_eq!(leftover_table(&driver, 3), None);
    }

    #[test]
    fn query_steps_are_paced_and_end_with_their_rows() {
        let dir = tempfile::tempdir().unwrap();
        let driver = SqliteDriver::new(&dir.path().join("ib.db"), vec![]);
        setup_tables(&driver, 2).unwrap();
        let mut s = spec(300, 100, false);
        s.create_indexes = true;
        let out = run_step(&driver, &s, &mut |_| {});
        assert_eq!(out.status, StepStatus::Ok);
        assert!(out.index_secs.is_some());
        for kind in [QueryKind::Range, QueryKind::Point] {
            // 1 s at 100 rows/s per client in batches of 20.
            let mut q = spec(100, 20, true);
            q.queries = Some(kind);
            q.rate_per_client = Some(100.0);
            let mut shown = 0;
            let out = run_step(&driver, &q, &mut |_| shown += 1);
            assert_eq!(out.status, StepStatus::Ok);
            assert_eq!(out.inserted_rows, 200);
            assert_eq!(out.deleted_rows, 200);
            assert!(out.secs >= 0.99 && out.secs < 1.5, "{}", out.secs);
            assert!(out.queries > 0 && shown > 0);
            // Range queries return their 10 rows; point queries mostly find theirs.
            let per = out.rows_fetched as f64 / out.queries as f64;
            assert!(per > 8.0 && per <= 10.0, "{kind:?}: {per}");
            assert!(!out.per_second.is_empty());
            let ins: f64 = out.per_second.iter().map(|s| s.ips * s.secs).sum();
            assert!((ins - 200.0).abs() < 1e-6, "{ins}");
            // Each client's own seconds hold its own 100 rows.
            assert_eq!(out.per_client.len(), 2);
            for c in &out.per_client {
                assert_eq!(c.len(), out.per_second.len());
                let ins: f64 = c.iter().map(|s| s.ips * s.secs).sum();
                assert!((ins - 100.0).abs() < 1e-6, "{ins}");
            }
        }
        assert_eq!(count_rows(&driver, 2).unwrap(), 600);
    }
}
