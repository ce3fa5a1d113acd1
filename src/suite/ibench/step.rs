//! Runs one Insert Benchmark step: per client an inserting connection, a
//! deleting one where the step deletes, and a query connection where it
//! queries (reference §4.3), until each client has inserted its rows.
//!
//! The connections are workers of the harness's timed step
//! ([`TestRun::timed_then`] in a test, [`bare_step`] outside one), in a
//! step without a deadline that ends when every writer has done its
//! work. An event is one statement (a batch of inserts, a delete, a query;
//! l.x's index builds are one more), sent again after the runner's
//! recovery from a retryable or lost-connection error; a writer's pause
//! holds it to its rate and to the delete-lag gate, the one rule of the
//! runner's that is this suite's own:
//! deletes never run ahead of inserts: delete `d` starts only after insert
//! `d` has finished, and an inserter waits while it is [`MAX_DELETE_LAG`]
//! statements ahead of its deleter (the reference bounds both queues at 8),
//! so each table keeps its size. Each connection closes its own seconds as its
//! statements start (the harness's [`series`]), and the step merges them into
//! the per-second series, overall and per client; the calling thread only
//! reports progress.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use super::limiter::{Limiter, SystemClock, nap_until};
use super::rows::{CASHREGISTERS, PRICES, PRODUCTS, RowGen, RowInts};
use super::{KEY, QUERY_ROWS, QueryKind, schema, table_name};
use crate::engine::schema::Table;
use crate::engine::{
    Conn, DbError, DbResult, Driver, ErrorClass, Outcome, Param, PsMode, SqlAccess, StmtId,
};
use crate::harness::measure::{Counts, now_ns};
use crate::harness::runner::{self, StepStatus, Worker};
use crate::harness::series::{self, Seconds, Tally};
use crate::harness::wait::Gate;
use crate::harness::{Per, Placement, TestRun, TimedStep, Timing, bare_step};
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

/// What the progress display is told about twice a second (the runner's
/// [`runner::LiveProgress`] has one rate; a step of this suite has three, and rows
/// to go).
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
    /// How the shared runner's step ended, for the harness's status rule.
    pub facts: crate::results::StepFacts,
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

/// One client's counters, read by the progress display while the
/// connections run.
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
    /// Writers (inserter, deleter) that have not finished their work;
    /// queries stop at 0.
    writers_left: AtomicUsize,
    /// Wakes the client's inserter and deleter when the other made
    /// progress: the delete-lag gate.
    gate: Gate,
}

struct StepTally {
    clients: Vec<ClientLive>,
    /// Index builds: earliest start and latest end ([`now_ns`]).
    index_start: AtomicU64,
    index_end: AtomicU64,
    indexing: AtomicBool,
    /// Serializes index builds on single-writer engines.
    index_lock: Mutex<()>,
}

/// A connection and the statements prepared on it, made again after it is
/// lost, and how its statements fared.
struct Link<'a> {
    driver: &'a dyn SqlAccess,
    conn: Box<dyn Conn>,
    ps: PsMode,
    sqls: Vec<String>,
    ids: Vec<StmtId>,
    /// Failures in a row of the statement being tried.
    tries: u32,
    /// Whether the last failure was of a measured statement (its retries
    /// are counted; a look-up of the smallest or largest id, or an index
    /// build, is not).
    measured: bool,
    /// Measured statements sent again after a failure that was recovered from.
    retries: u64,
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
            tries: 0,
            measured: false,
            retries: 0,
        })
    }

    /// Prepares `sql` and returns its slot.
    fn prepare(&mut self, sql: String) -> DbResult<usize> {
        let id = self.conn.prepare(&sql, self.ps)?;
        self.sqls.push(sql);
        self.ids.push(id);
        Ok(self.ids.len() - 1)
    }

    /// Runs prepared statement `slot` (a measured one). A write whose
    /// connection was lost is sent again on the new one: if it had
    /// committed, the table holds one batch more.
    fn exec(&mut self, slot: usize, params: &[Param<'_>]) -> DbResult<Outcome> {
        let r = self.conn.execute(self.ids[slot], params);
        self.tried(r, true)
    }

    /// Runs `sql` as text.
    fn run_text(&mut self, sql: &str) -> DbResult<()> {
        let r = self.conn.query(sql).map(|_| ());
        self.tried(r, false)
    }

    /// The integer value of a one-value query (None for NULL).
    fn int(&mut self, sql: &str) -> DbResult<Option<i64>> {
        let r = self.conn.query_scalar(sql);
        self.tried(r, false)
            .map(|v| v.and_then(|v| v.trim().parse().ok()))
    }

    /// Counts a statement's try: a success ends its run of failures, and
    /// [`MAX_RETRIES`] failures in a row fail the step.
    fn tried<T>(&mut self, r: DbResult<T>, measured: bool) -> DbResult<T> {
        match r {
            Ok(v) => {
                self.tries = 0;
                Ok(v)
            }
            Err(e) => {
                self.tries += 1;
                self.measured = measured;
                if e.class != ErrorClass::Fatal && self.tries > MAX_RETRIES {
                    return Err(DbError::fatal(format!(
                        "still failing after {MAX_RETRIES} tries: {e}"
                    )));
                }
                Err(e)
            }
        }
    }

    /// The runner's recovery from a failed statement, which is then sent
    /// again: nothing after a retryable error; after a lost connection, a
    /// new one with every statement prepared again (the runner tries again
    /// with backoff until [`crate::harness::RECONNECT_FOR`] has passed).
    fn recover(&mut self, e: &DbError) -> DbResult<()> {
        if e.class == ErrorClass::Reconnect {
            let mut conn = self.driver.connect()?;
            let mut ids = Vec::with_capacity(self.sqls.len());
            for s in &self.sqls {
                ids.push(conn.prepare(s, self.ps)?);
            }
            self.conn = conn;
            self.ids = ids;
        }
        if self.measured {
            self.retries += 1;
            self.measured = false;
        }
        Ok(())
    }
}

/// What every connection of a step has: its link, its client's counters,
/// and what it measured.
struct ConnCore<'a> {
    link: Link<'a>,
    client: usize,
    live: &'a ClientLive,
    /// Response times in nanoseconds.
    hist: RtHist,
    marks: Marks,
    /// When the measured statement being tried first started ([`now_ns`]):
    /// one that failed is sent again, with the same parameters, and timed
    /// from here (its retries included, as one response).
    started: Option<u64>,
    /// When the connection finished its work (`None`: not yet).
    end_ns: Option<u64>,
}

impl<'a> ConnCore<'a> {
    fn new(
        driver: &'a dyn Driver,
        spec: &StepSpec,
        sh: &'a StepTally,
        client: usize,
    ) -> DbResult<Self> {
        Ok(ConnCore {
            link: Link::new(driver, spec.ps_mode)?,
            client,
            live: &sh.clients[client - 1],
            hist: RtHist::default(),
            marks: Marks::default(),
            started: None,
            end_ns: None,
        })
    }

    /// Before a measured statement is sent: when it started, the first time.
    fn start(&mut self) {
        if self.started.is_none() {
            let t = now_ns();
            self.marks.tick(t);
            self.started = Some(t);
        }
    }

    /// After it succeeded: records its response time, and returns it and
    /// when it ended.
    fn done(&mut self) -> (u64, u64) {
        let t1 = now_ns();
        let dt = t1 - self.started.take().unwrap_or(t1);
        self.hist.record(dt);
        (dt, t1)
    }

    /// A writer that has done its work: the client's queries stop once its
    /// other writer has too.
    fn finish(&mut self) {
        self.end_ns = Some(now_ns());
        self.live.writers_left.fetch_sub(1, Ordering::AcqRel);
    }
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

/// Where an inserter is in its work.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stage {
    /// Inserting its batches.
    Insert,
    /// Creating the secondary indexes (l.x).
    Index,
    /// Waiting for the slot of its last batch to end: a paced writer's
    /// step lasts until then (an event with no statement).
    Tail,
    Done,
}

struct Inserter<'a> {
    c: ConnCore<'a>,
    spec: &'a StepSpec,
    sh: &'a StepTally,
    /// Slots of the insert of a full batch and of the last, shorter one.
    full: usize,
    tail: Option<usize>,
    rowgen: RowGen,
    ints: Vec<RowInts>,
    data: Vec<String>,
    /// The time of the batch being sent, Unix seconds.
    epoch: i64,
    limiter: Option<Limiter>,
    /// The next batch.
    next: u64,
    /// l.x's index builds, and how many of them are done.
    index_sqls: Vec<String>,
    built: usize,
    stage: Stage,
}

impl<'a> Inserter<'a> {
    fn new(
        driver: &'a dyn Driver,
        spec: &'a StepSpec,
        sh: &'a StepTally,
        client: usize,
    ) -> DbResult<Self> {
        let table = schema::table(client);
        let mut c = ConnCore::new(driver, spec, sh, client)?;
        let per = spec.rows_per_statement;
        let d = driver.require_sql()?.dialect();
        let full = c.link.prepare(insert_sql(d, &table, per))?;
        let last = batch_rows(spec, statements(spec).saturating_sub(1));
        let tail = if last > 0 && last != per {
            Some(c.link.prepare(insert_sql(d, &table, last))?)
        } else {
            None
        };
        let index_sqls = if spec.create_indexes {
            d.create_indexes(&table)
        } else {
            Vec::new()
        };
        Ok(Inserter {
            c,
            spec,
            sh,
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
            epoch: 0,
            limiter: None,
            next: 0,
            index_sqls,
            built: 0,
            stage: Stage::Insert,
        })
    }

    /// When the step's clock starts, at `start_ns`.
    fn begin(&mut self, start_ns: u64) {
        let spec = self.spec;
        self.c.marks = Marks::new(start_ns);
        self.limiter = spec.rate_per_client.map(|r| {
            Limiter::new(
                r,
                spec.rows_per_statement,
                start_ns,
                MAX_CATCH_UP.as_nanos() as u64,
            )
            .with_phase((self.c.client as f64 - 0.5) / spec.clients.max(1) as f64)
        });
        self.advance();
    }

    /// Moves on to the next stage once the current one's work is done.
    fn advance(&mut self) {
        if self.stage == Stage::Insert {
            if self.next < statements(self.spec) {
                return;
            }
            if self.spec.create_indexes {
                self.stage = Stage::Index;
                return;
            }
        }
        if self.stage != Stage::Tail && self.limiter.is_some() {
            self.stage = Stage::Tail;
            return;
        }
        self.stage = Stage::Done;
        self.c.finish();
    }

    /// Before a new batch: its slot of the rate, then the delete-lag gate.
    /// Before the end of a paced step: the end of the last batch's slot.
    fn pause(&mut self, stop: &dyn Fn() -> bool) -> bool {
        match self.stage {
            Stage::Insert if self.c.started.is_none() => {
                if let Some(l) = self.limiter.as_mut()
                    && !l.wait(&SystemClock, stop)
                {
                    return true;
                }
                if self.spec.deletes {
                    let (live, b) = (self.c.live, self.next);
                    live.gate.wait(
                        &|| b < live.delete_stmts.load(Ordering::Acquire) + MAX_DELETE_LAG,
                        stop,
                    );
                }
                self.limiter.is_some() || self.spec.deletes
            }
            Stage::Tail => {
                if let Some(l) = &self.limiter {
                    nap_until(&SystemClock, l.slot_end_ns(), stop);
                }
                true
            }
            _ => false,
        }
    }

    fn event(&mut self, counts: &mut Counts) -> DbResult<()> {
        match self.stage {
            Stage::Insert => self.insert(counts),
            Stage::Index => self.create_indexes(),
            Stage::Tail => {
                self.advance();
                Ok(())
            }
            Stage::Done => Ok(()),
        }
    }

    fn insert(&mut self, counts: &mut Counts) -> DbResult<()> {
        let rows = batch_rows(self.spec, self.next);
        if self.c.started.is_none() {
            // A new batch; one sent again keeps its rows and its time.
            self.epoch = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0);
            for r in 0..rows {
                self.ints[r] = self.rowgen.ints();
                self.rowgen.data(&mut self.data[r]);
            }
        }
        let mut params: Vec<Param<'_>> = Vec::with_capacity(rows * 6);
        for r in 0..rows {
            let v = self.ints[r];
            params.extend([
                Param::Int(self.epoch),
                Param::Int(v.cashregisterid),
                Param::Int(v.customerid),
                Param::Int(v.productid),
                Param::Int(v.price),
                Param::Text(&self.data[r]),
            ]);
        }
        let slot = if rows == self.spec.rows_per_statement {
            self.full
        } else {
            self.tail.unwrap_or(self.full)
        };
        self.c.start();
        let o = self.c.link.exec(slot, &params)?;
        counts.record(o);
        let (dt, _) = self.c.done();
        let t = &mut self.c.marks.tally;
        t.inserted += rows as u64;
        t.max_insert = t.max_insert.max(dt);
        let live = self.c.live;
        live.inserted_rows.fetch_add(rows as u64, Ordering::Relaxed);
        live.insert_stmts.fetch_add(1, Ordering::Release);
        if self.spec.deletes {
            live.gate.notify();
        }
        self.next += 1;
        self.advance();
        Ok(())
    }

    /// l.x's index builds, one engine at a time where it has one writer;
    /// after a failure, the builds not yet done.
    fn create_indexes(&mut self) -> DbResult<()> {
        let sh = self.sh;
        let single = self.c.link.driver.caps().single_writer;
        let _one_at_a_time =
            single.then(|| sh.index_lock.lock().unwrap_or_else(|e| e.into_inner()));
        sh.indexing.store(true, Ordering::Relaxed);
        sh.index_start.fetch_min(now_ns(), Ordering::Relaxed);
        while let Some(sql) = self.index_sqls.get(self.built) {
            self.c.link.run_text(sql)?;
            self.built += 1;
        }
        sh.index_end.fetch_max(now_ns(), Ordering::Relaxed);
        self.advance();
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
    c: ConnCore<'a>,
    spec: &'a StepSpec,
    min_sql: String,
    /// The smallest id when the step began (0 for an empty table).
    start_min: i64,
    full: usize,
    tail: Option<usize>,
    /// The next delete, and how many there are (one per insert).
    next: u64,
    statements: u64,
    /// A lower bound of the ids in the table.
    min: i64,
    /// The smallest id is to be read again before the next delete.
    resync: bool,
}

impl<'a> Deleter<'a> {
    fn new(
        driver: &'a dyn Driver,
        spec: &'a StepSpec,
        sh: &'a StepTally,
        client: usize,
    ) -> DbResult<Self> {
        let table = schema::table(client);
        let d = driver.require_sql()?.dialect();
        let mut c = ConnCore::new(driver, spec, sh, client)?;
        let per = spec.rows_per_statement;
        let full = c.link.prepare(d.delete_oldest(&table, per))?;
        let last = batch_rows(spec, statements(spec).saturating_sub(1));
        let tail = if last > 0 && last != per {
            Some(c.link.prepare(d.delete_oldest(&table, last))?)
        } else {
            None
        };
        let min_sql = d.min_key_sql(&table);
        let start_min = c
            .link
            .conn
            .query_scalar(&min_sql)?
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        Ok(Deleter {
            c,
            spec,
            min_sql,
            start_min,
            full,
            tail,
            next: 0,
            statements: statements(spec),
            min: start_min,
            resync: false,
        })
    }

    /// When the step's clock starts, at `start_ns`.
    fn begin(&mut self, start_ns: u64) {
        self.c.marks = Marks::new(start_ns);
        if self.next >= self.statements {
            self.c.finish();
        }
    }

    /// Before a new delete: until its insert has finished.
    fn pause(&mut self, stop: &dyn Fn() -> bool) -> bool {
        if self.c.started.is_some() || self.resync {
            return false;
        }
        let (live, d) = (self.c.live, self.next);
        live.gate
            .wait(&|| live.insert_stmts.load(Ordering::Acquire) > d, stop);
        true
    }

    fn event(&mut self, counts: &mut Counts) -> DbResult<()> {
        let live = self.c.live;
        if !self.resync {
            let rows = batch_rows(self.spec, self.next);
            let slot = if rows == self.spec.rows_per_statement {
                self.full
            } else {
                self.tail.unwrap_or(self.full)
            };
            self.c.start();
            let o = self.c.link.exec(slot, &[Param::Int(self.min)])?;
            counts.record(o);
            let (dt, _) = self.c.done();
            let deleted = match o {
                Outcome::Affected(n) | Outcome::Rows(n) => n,
            };
            let t = &mut self.c.marks.tally;
            t.deleted += deleted;
            t.max_delete = t.max_delete.max(dt);
            live.deleted_rows.fetch_add(deleted, Ordering::Relaxed);
            live.delete_stmts.fetch_add(1, Ordering::Release);
            live.gate.notify();
            // The ids below min are gone; min is a lower bound that keeps
            // the delete off the purged left edge of the index.
            self.min += rows as i64;
            self.next += 1;
            self.resync = self.next.is_multiple_of(RESYNC_MIN_EVERY);
        }
        if self.resync {
            if let Some(v) = self.c.link.int(&self.min_sql)? {
                self.min = v;
            }
            self.resync = false;
        }
        live.min_id.store(self.min, Ordering::Relaxed);
        if self.next >= self.statements {
            self.c.finish();
        }
        Ok(())
    }
}

struct Querier<'a> {
    c: ConnCore<'a>,
    kind: QueryKind,
    /// Range queries (3 shapes) or the point query.
    slots: Vec<usize>,
    max_sql: String,
    rng: Rng,
    /// Queries done, and the largest id last read.
    n: u64,
    max: i64,
    /// The query being sent: its shape and its values (a range query's
    /// bound is the first).
    shape: usize,
    values: [i64; QUERY_ROWS],
    rows_fetched: u64,
}

impl<'a> Querier<'a> {
    fn new(
        driver: &'a dyn Driver,
        spec: &StepSpec,
        sh: &'a StepTally,
        kind: QueryKind,
        client: usize,
    ) -> DbResult<Self> {
        let table = schema::table(client);
        let t = &table.name;
        let d = driver.require_sql()?.dialect();
        let mut c = ConnCore::new(driver, spec, sh, client)?;
        let mut slots = Vec::new();
        match kind {
            QueryKind::Range => {
                let shapes = [
                    ("productid, customerid, price", "productid >= ?"),
                    ("cashregisterid, customerid, price", "cashregisterid > ?"),
                    ("price, dateandtime, customerid", "price >= ?"),
                ];
                for ((cols, cond), index) in shapes.iter().zip(&table.indexes) {
                    slots.push(c.link.prepare(format!(
                        "SELECT {cols} FROM {} WHERE {cond} ORDER BY {cols} LIMIT {QUERY_ROWS}",
                        d.table_with_index(&table, &index.name)
                    ))?);
                }
            }
            QueryKind::Point => {
                slots.push(c.link.prepare(format!(
                    "SELECT {KEY}, productid, data FROM {t} WHERE {KEY} IN ({})",
                    ["?"; QUERY_ROWS].join(", ")
                ))?);
            }
        }
        Ok(Querier {
            c,
            kind,
            slots,
            max_sql: d.max_key_sql(&table),
            rng: Rng::seeded(seed_for(spec.seed, client, 3)),
            n: 0,
            max: 0,
            shape: 0,
            values: [0; QUERY_ROWS],
            rows_fetched: 0,
        })
    }

    /// When the step's clock starts, at `start_ns`.
    fn begin(&mut self, start_ns: u64) {
        self.c.marks = Marks::new(start_ns);
        self.c.end_ns = Some(start_ns);
    }

    /// Queries run until the client's writers have done their work.
    fn finished(&self) -> bool {
        self.c.live.writers_left.load(Ordering::Acquire) == 0
    }

    fn event(&mut self, counts: &mut Counts) -> DbResult<()> {
        if self.c.started.is_none() {
            // A new query; one sent again keeps its values and its time.
            match self.kind {
                QueryKind::Range => {
                    self.shape = self.rng.below(3);
                    let hi = [PRODUCTS, CASHREGISTERS, PRICES][self.shape];
                    self.values[0] = self.rng.uniform(0, hi - 1);
                }
                QueryKind::Point => {
                    if self.n.is_multiple_of(REFRESH_MAX_EVERY) {
                        self.max = self.c.link.int(&self.max_sql)?.unwrap_or(0);
                    }
                    let (min, max) = (self.c.live.min_id.load(Ordering::Relaxed), self.max);
                    for id in self.values.iter_mut() {
                        *id = if max > min {
                            self.rng.uniform(min, max - 1)
                        } else {
                            min
                        };
                    }
                }
            }
            self.c.start();
        }
        let o = match self.kind {
            QueryKind::Range => self
                .c
                .link
                .exec(self.slots[self.shape], &[Param::Int(self.values[0])])?,
            QueryKind::Point => {
                let ids = self.values.map(Param::Int);
                self.c.link.exec(self.slots[0], &ids)?
            }
        };
        counts.record(o);
        let (dt, end) = self.c.done();
        if let Outcome::Rows(r) = o {
            self.rows_fetched += r;
        }
        self.n += 1;
        let t = &mut self.c.marks.tally;
        t.queries += 1;
        t.max_query = t.max_query.max(dt);
        self.c.live.queries.fetch_add(1, Ordering::Relaxed);
        self.c.end_ns = Some(end);
        Ok(())
    }
}

/// One connection of a client, a worker of the shared runner.
enum Role<'a> {
    Insert(Inserter<'a>),
    Delete(Deleter<'a>),
    Query(Querier<'a>),
}

impl<'a> Role<'a> {
    fn common(&self) -> &ConnCore<'a> {
        match self {
            Role::Insert(w) => &w.c,
            Role::Delete(w) => &w.c,
            Role::Query(w) => &w.c,
        }
    }

    fn begin(&mut self, start_ns: u64) {
        match self {
            Role::Insert(w) => w.begin(start_ns),
            Role::Delete(w) => w.begin(start_ns),
            Role::Query(w) => w.begin(start_ns),
        }
    }
}

impl Worker for Role<'_> {
    fn event(&mut self, c: &mut Counts) -> DbResult<()> {
        match self {
            Role::Insert(w) => w.event(c),
            Role::Delete(w) => w.event(c),
            Role::Query(w) => w.event(c),
        }
    }

    fn recover(&mut self, err: &DbError) -> DbResult<()> {
        match self {
            Role::Insert(w) => w.c.link.recover(err),
            Role::Delete(w) => w.c.link.recover(err),
            Role::Query(w) => w.c.link.recover(err),
        }
    }

    fn pause(&mut self, _deadline_ns: u64, stop: &dyn Fn() -> bool) -> bool {
        match self {
            Role::Insert(w) => w.pause(stop),
            Role::Delete(w) => w.pause(stop),
            Role::Query(_) => false,
        }
    }

    fn finished(&self) -> bool {
        match self {
            Role::Query(w) => w.finished(),
            w => w.common().end_ns.is_some(),
        }
    }
}

/// Totals over clients at one instant.
#[derive(Clone, Copy, Default)]
struct Totals {
    inserted: u64,
    deleted: u64,
    queries: u64,
}

fn totals(sh: &StepTally) -> Totals {
    let mut t = Totals::default();
    for c in client_totals(sh) {
        t.inserted += c.inserted;
        t.deleted += c.deleted;
        t.queries += c.queries;
    }
    t
}

fn client_totals(sh: &StepTally) -> Vec<Totals> {
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

/// Every client's connections, connected and prepared.
fn connect<'a>(
    driver: &'a dyn Driver,
    spec: &'a StepSpec,
    sh: &'a StepTally,
) -> DbResult<Vec<Role<'a>>> {
    let mut roles = Vec::new();
    for c in 1..=spec.clients {
        roles.push(Role::Insert(Inserter::new(driver, spec, sh, c)?));
        let mut writers = 1;
        if spec.deletes {
            let d = Deleter::new(driver, spec, sh, c)?;
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
            roles.push(Role::Query(Querier::new(driver, spec, sh, kind, c)?));
        }
    }
    Ok(roles)
}

/// The progress display's figures, from the clients' counters.
struct Meter {
    start_ns: u64,
    target_rows: u64,
    /// Rates over the last second or so, for the display only.
    window: (u64, Totals),
    recent: (f64, f64, f64),
    shown: Progress,
}

impl Meter {
    fn new(start_ns: u64, target_rows: u64) -> Self {
        Meter {
            start_ns,
            target_rows,
            window: (start_ns, Totals::default()),
            recent: (0.0, 0.0, 0.0),
            shown: Progress::default(),
        }
    }

    fn update(&mut self, sh: &StepTally) -> &Progress {
        let now = now_ns();
        let t = totals(sh);
        let span = (now - self.window.0) as f64 / 1e9;
        if span >= 0.999 {
            let per = |a: u64, b: u64| (a - b) as f64 / span;
            let w = self.window.1;
            self.recent = (
                per(t.inserted, w.inserted),
                per(t.deleted, w.deleted),
                per(t.queries, w.queries),
            );
            self.window = (now, t);
        }
        let elapsed = (now - self.start_ns) as f64 / 1e9;
        let avg = |n: u64| n as f64 / elapsed.max(1e-9);
        self.shown = Progress {
            elapsed,
            inserted_rows: t.inserted,
            target_rows: self.target_rows,
            ips: self.recent.0,
            dps: self.recent.1,
            qps: self.recent.2,
            avg_ips: avg(t.inserted),
            avg_dps: avg(t.deleted),
            avg_qps: avg(t.queries),
            indexing: sh.indexing.load(Ordering::Relaxed),
        };
        &self.shown
    }

    /// The last figures shown, with the rows inserted in the end.
    fn last(&mut self, sh: &StepTally) -> &Progress {
        self.shown.inserted_rows = totals(sh).inserted;
        &self.shown
    }
}

/// Runs `spec` with every client's connections (connected and prepared
/// before the step's clock starts) on the shared runner, calling
/// `on_progress` from this thread: the step bare, without a test around
/// it (`rqps compat`'s one client).
pub fn run_alone(
    driver: &dyn Driver,
    spec: &StepSpec,
    on_progress: &mut dyn FnMut(&Progress),
) -> StepOutcome {
    step_through(driver, spec, Through::Bare(on_progress))
}

/// Runs `spec` as the timed step of the test `run` (the harness's progress
/// and probe, the latter per `ops` of the outcome).
pub fn run_test_step(
    run: &mut TestRun<'_>,
    spec: &StepSpec,
    ops: &dyn Fn(&StepOutcome) -> f64,
) -> StepOutcome {
    let driver = run.driver.clone();
    step_through(driver.as_ref(), spec, Through::Test { run, ops })
}

/// Who times a step: the harness for a test, or the runner alone.
enum Through<'r, 't> {
    Test {
        run: &'r mut TestRun<'t>,
        ops: &'r dyn Fn(&StepOutcome) -> f64,
    },
    Bare(&'r mut dyn FnMut(&Progress)),
}

fn step_through(driver: &dyn Driver, spec: &StepSpec, through: Through<'_, '_>) -> StepOutcome {
    let sh = StepTally {
        clients: (0..spec.clients).map(|_| ClientLive::default()).collect(),
        index_start: AtomicU64::new(u64::MAX),
        index_end: AtomicU64::new(0),
        indexing: AtomicBool::new(false),
        index_lock: Mutex::new(()),
    };
    let mut roles = match connect(driver, spec, &sh) {
        Ok(r) => r,
        Err(e) => {
            return empty_outcome(StepStatus::Failed(format!(
                "could not connect and prepare: {e}"
            )));
        }
    };
    let start_ns = now_ns();
    for r in &mut roles {
        r.begin(start_ns);
    }
    let mut meter = Meter::new(start_ns, spec.rows_per_client * spec.clients as u64);
    let outcome = |roles: &[Role<'_>], run: &runner::StepRun| {
        // From the start to when the last connection that did its work ended.
        let end = roles
            .iter()
            .filter(|r| r.finished())
            .filter_map(|r| r.common().end_ns)
            .max()
            .unwrap_or_else(now_ns);
        let mut out = empty_outcome(run.status.clone());
        out.secs = (end.max(start_ns) - start_ns) as f64 / 1e9;
        out.reconnects = run.counts.reconnects;
        out.facts = run.facts.clone();
        measured(spec, &sh, roles, &mut out);
        out
    };
    match through {
        Through::Bare(on_progress) => {
            // Outside a test, a thread per role (`rqps compat`'s one client,
            // the self-benchmark's client).
            let one_each = Placement::thread_per_worker();
            let run = bare_step(&mut roles, Timing::until_finished(), &one_each, &mut |_| {
                on_progress(meter.update(&sh))
            });
            on_progress(meter.last(&sh));
            outcome(&roles, &run)
        }
        Through::Test { run, ops } => {
            let mut shows = || progress_line(meter.update(&sh));
            let step = TimedStep {
                core: false,
                shows: Some(&mut shows),
                ..TimedStep::new(Timing::until_finished(), Per::Statement)
            };
            let mut out = None;
            let _ = run.timed_then(&mut roles, step, |_, roles, r| {
                let o = outcome(roles, r);
                let n = ops(&o);
                out = Some(o);
                Ok(n)
            });
            out.unwrap_or_else(|| empty_outcome(StepStatus::Failed("the step did not end".into())))
        }
    }
}

/// The Insert Benchmark's own figures on the progress line: rates over the
/// last second (and since the step began), rows inserted of the target.
fn progress_line(p: &Progress) -> String {
    let phase = if p.indexing {
        "  creating indexes".to_string()
    } else {
        String::new()
    };
    format!(
        "rows {}/{}  ips {:>8.0} ({:.0})  dps {:>8.0} ({:.0})  qps {:>7.0} ({:.0}){phase}",
        p.inserted_rows, p.target_rows, p.ips, p.avg_ips, p.dps, p.avg_dps, p.qps, p.avg_qps
    )
}

/// Fills `out` with what the connections of a step that ended measured.
fn measured(spec: &StepSpec, sh: &StepTally, roles: &[Role<'_>], out: &mut StepOutcome) {
    // The step's seconds, then each client's: the same entries, so a last
    // partial second is kept for every client when it is kept for the step.
    let tail_kept = std::cell::Cell::new(false);
    let all: Vec<&Marks> = roles.iter().map(|r| &r.common().marks).collect();
    let whole = series::whole_seconds(&each_series(&all));
    out.per_second = merged(&all, whole, out.secs, &|d| {
        tail_kept.set(d.inserted > 0 || d.deleted > 0 || d.queries > 0);
        tail_kept.get()
    });
    out.per_client = (1..=spec.clients)
        .map(|c| {
            let mine: Vec<&Marks> = roles
                .iter()
                .map(Role::common)
                .filter(|r| r.client == c)
                .map(|r| &r.marks)
                .collect();
            merged(&mine, whole, out.secs, &|_| tail_kept.get())
        })
        .collect();
    let t = totals(sh);
    out.inserted_rows = t.inserted;
    out.deleted_rows = t.deleted;
    out.queries = t.queries;
    for c in &sh.clients {
        out.insert_statements += c.insert_stmts.load(Ordering::Relaxed);
        out.delete_statements += c.delete_stmts.load(Ordering::Relaxed);
    }
    for r in roles {
        let (hist, retries) = match r {
            Role::Insert(_) => (&mut out.insert_hist, &mut out.insert_retries),
            Role::Delete(_) => (&mut out.delete_hist, &mut out.delete_retries),
            Role::Query(q) => {
                out.rows_fetched += q.rows_fetched;
                (&mut out.query_hist, &mut out.query_retries)
            }
        };
        hist.add(&r.common().hist);
        *retries += r.common().link.retries;
    }
    let (s0, s1) = (
        sh.index_start.load(Ordering::Relaxed),
        sh.index_end.load(Ordering::Relaxed),
    );
    if spec.create_indexes && s1 >= s0 && s0 != u64::MAX {
        out.index_secs = Some((s1 - s0) as f64 / 1e9);
    }
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
        facts: Default::default(),
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
        let out = run_alone(&driver, &spec(1234, 100, false), &mut |_| {});
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
            let out = run_alone(&driver, &spec(1003, 5, true), &mut |_| {});
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
        let out = run_alone(&driver, &s, &mut |_| {});
        assert_eq!(out.status, StepStatus::Ok);
        assert!(out.index_secs.is_some());
        for kind in [QueryKind::Range, QueryKind::Point] {
            // 1 s at 100 rows/s per client in batches of 20.
            let mut q = spec(100, 20, true);
            q.queries = Some(kind);
            q.rate_per_client = Some(100.0);
            let mut shown = 0;
            let out = run_alone(&driver, &q, &mut |_| shown += 1);
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

    /// What a table holds, its ids and times aside, in id order.
    fn content(c: &mut Box<dyn Conn>, t: &str) -> String {
        c.query_scalar(&format!(
            "SELECT group_concat(v, ';') FROM (SELECT cashregisterid || ',' || customerid || ',' \
             || productid || ',' || price || ',' || data AS v FROM {t} ORDER BY transactionid)"
        ))
        .unwrap()
        .unwrap()
    }

    #[test]
    fn a_statement_that_fails_is_sent_again_with_its_rows_and_timed_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let plain = SqliteDriver::new(&dir.path().join("a.db"), vec![]);
        setup_tables(&plain, 2).unwrap();
        let out = run_alone(&plain, &spec(1000, 10, false), &mut |_| {});
        assert_eq!((out.status, out.insert_retries), (StepStatus::Ok, 0));
        // Busy after 1 ms instead of 30 s: a retryable error, statement by statement.
        let busy = SqliteDriver::new(
            &dir.path().join("b.db"),
            vec!["PRAGMA busy_timeout = 1".into()],
        );
        setup_tables(&busy, 2).unwrap();
        // Another connection holds the write lock for the step's first 100 ms.
        let mut lock = busy.connect().unwrap();
        lock.query("BEGIN IMMEDIATE").unwrap();
        let out = std::thread::scope(|s| {
            let step = s.spawn(|| run_alone(&busy, &spec(1000, 10, false), &mut |_| {}));
            std::thread::sleep(Duration::from_millis(100));
            lock.query("COMMIT").unwrap();
            step.join().unwrap()
        });
        assert_eq!(out.status, StepStatus::Ok);
        assert!(out.insert_retries >= 2, "{}", out.insert_retries);
        // One response per statement, from its first try to its success.
        assert_eq!((out.insert_statements, out.insert_hist.len()), (200, 200));
        assert!(out.insert_hist.hist.max() >= 50_000_000);
        // The same rows as the run without errors, none twice and none lost.
        let (mut a, mut b) = (plain.connect().unwrap(), busy.connect().unwrap());
        for t in ["pi1", "pi2"] {
            assert_eq!(ids(&mut b, t), "1000,1,1000");
            assert_eq!(content(&mut a, t), content(&mut b, t));
        }
    }

    #[test]
    fn a_statement_still_failing_after_its_tries_fails_the_step() {
        let dir = tempfile::tempdir().unwrap();
        let busy = SqliteDriver::new(
            &dir.path().join("ib.db"),
            vec!["PRAGMA busy_timeout = 0".into()],
        );
        setup_tables(&busy, 2).unwrap();
        let mut lock = busy.connect().unwrap();
        lock.query("BEGIN IMMEDIATE").unwrap();
        let out = run_alone(&busy, &spec(100, 10, true), &mut |_| {});
        lock.query("COMMIT").unwrap();
        match out.status {
            StepStatus::Failed(m) => {
                assert!(m.starts_with("still failing after 1000 tries: "), "{m}")
            }
            s => panic!("{s:?}"),
        }
        assert_eq!((out.inserted_rows, out.deleted_rows), (0, 0));
    }
}
