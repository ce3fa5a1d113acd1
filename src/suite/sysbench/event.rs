//! One worker thread of a sysbench test: its connection, its prepared
//! statements (one set per table), and the event that it repeats.
//!
//! Draws follow sysbench's OLTP scripts (oltp_common.lua): each statement
//! group draws its table with `uniform(1, tables)` (also for one table),
//! each id with `default(1, table_size)`, `c` and `pad` from their `#`
//! templates, in the scripts' order, and every event ends with the draw
//! sysbench takes for its latency histogram. Thread `i` starts from
//! sysbench's `i`-th stream for `rand_seed` ([`SbRng::for_thread`]).

use std::sync::Arc;

use super::rng::{SbDist, SbRandType, SbRng};
use crate::engine::{Conn, DbError, DbResult, Driver, ErrorClass, Param, PsMode, StmtId};
use crate::harness::measure::Counts;
use crate::harness::runner::Worker;

use super::catalog::{IdMode, Kind, TestDef};
use super::schema::table_name;

/// Parameters an event needs from the run.
#[derive(Clone, Debug)]
pub struct EventParams {
    /// How many tables the events use: `sbtest<first_table>` and the next ones.
    pub tables: usize,
    /// The first of them (1 = `sbtest1`; a client part's share starts later).
    pub first_table: usize,
    pub table_size: i64,
    /// The distribution of ids, with its parameters.
    pub rand: SbDist,
    pub ps_mode: PsMode,
    /// No BEGIN/COMMIT around the read-only, read-write and write-only events.
    pub skip_trx: bool,
    /// sysbench's `--rand-seed` of the streams.
    pub rand_seed: u32,
}

/// sysbench's templates of the `c` and `pad` values: 10 and 5 groups of 11
/// digits joined by `-`.
const C_TEMPLATE: &str = "###########-###########-###########-###########-###########-\
###########-###########-###########-###########-###########";
const PAD_TEMPLATE: &str = "###########-###########-###########-###########-###########";

/// Statements per event of the read-only/read-write mixes (sysbench defaults).
const POINT_SELECTS: usize = 10;
/// Ids per `update-inlist` statement (the Lua default; the reference passes no other).
const UPDATE_INLIST_POINTS: usize = 10;
/// Values per points-* statement and rows per range-* statement.
const COVERED_POINTS: usize = 100;
const COVERED_RANGE: i64 = 100;

// Indexes into a table's statement list; which exist depends on the kind.
const POINT: usize = 0;
const SIMPLE: usize = 1;
const SUM: usize = 2;
const ORDER: usize = 3;
const DISTINCT: usize = 4;
const INDEX_UPDATE: usize = 5;
const NON_INDEX_UPDATE: usize = 6;
const DELETE: usize = 7;
const INSERT: usize = 8;
const MAIN: usize = 0;

fn ph(n: usize) -> String {
    vec!["?"; n].join(",")
}

/// The SQL of each statement slot for `kind` on `table` (empty slots unused).
fn statements(kind: Kind, t: &str) -> Vec<String> {
    let mix = |range: bool| -> Vec<String> {
        let mut v = vec![format!("SELECT c FROM {t} WHERE id=?")];
        if range {
            v.push(format!("SELECT c FROM {t} WHERE id BETWEEN ? AND ?"));
            v.push(format!("SELECT SUM(k) FROM {t} WHERE id BETWEEN ? AND ?"));
            v.push(format!(
                "SELECT c FROM {t} WHERE id BETWEEN ? AND ? ORDER BY c"
            ));
            v.push(format!(
                "SELECT DISTINCT c FROM {t} WHERE id BETWEEN ? AND ? ORDER BY c"
            ));
        } else {
            v.extend(std::iter::repeat_n(String::new(), 4));
        }
        v.push(format!("UPDATE {t} SET k=k+1 WHERE id=?"));
        v.push(format!("UPDATE {t} SET c=? WHERE id=?"));
        v.push(format!("DELETE FROM {t} WHERE id=?"));
        v.push(format!(
            "INSERT INTO {t} (id, k, c, pad) VALUES (?, ?, ?, ?)"
        ));
        v
    };
    let cols = |covered: bool, on_id: bool| {
        let key = if on_id { "id" } else { "k" };
        (
            if covered {
                key.to_string()
            } else {
                format!("{key}, c")
            },
            key,
        )
    };
    match kind {
        Kind::PointSelect => vec![format!("SELECT c FROM {t} WHERE id=?")],
        Kind::InList { points, .. } => {
            vec![format!("SELECT c FROM {t} WHERE id IN ({})", ph(points))]
        }
        Kind::PointsCovered { covered, on_id } => {
            let (c, key) = cols(covered, on_id);
            vec![format!(
                "SELECT {c} FROM {t} WHERE {key} IN ({})",
                ph(COVERED_POINTS)
            )]
        }
        Kind::RangeCovered { covered, on_id } => {
            let (c, key) = cols(covered, on_id);
            vec![format!("SELECT {c} FROM {t} WHERE {key} BETWEEN ? AND ?")]
        }
        Kind::ReadOnly { .. } => {
            let mut v = mix(true);
            v.truncate(DISTINCT + 1);
            v
        }
        Kind::ReadOnlyCount { .. } => {
            vec![format!("SELECT count(c) FROM {t} WHERE id BETWEEN ? AND ?")]
        }
        Kind::UpdateInlist => vec![format!(
            "UPDATE {t} SET c=? WHERE id IN ({})",
            ph(UPDATE_INLIST_POINTS)
        )],
        Kind::UpdateIndex => vec![format!("UPDATE {t} SET k=k+1 WHERE id=?")],
        Kind::UpdateNonIndex { .. } => vec![format!("UPDATE {t} SET c=? WHERE id=?")],
        Kind::WriteOnly => mix(false),
        Kind::ReadWrite { .. } => mix(true),
        Kind::Delete => vec![format!("DELETE FROM {t} WHERE id=?")],
        // Scan and insert are sent as plain text, as the reference does.
        Kind::Scan | Kind::Insert => vec![],
    }
}

/// The SQL of the main statement of `kind` on `sbtest<table>` (empty for
/// the kinds sent as plain text).
pub fn main_statement(kind: Kind, table: usize) -> String {
    statements(kind, &table_name(table))
        .into_iter()
        .next()
        .unwrap_or_default()
}

pub struct SbWorker {
    driver: Arc<dyn Driver>,
    kind: Kind,
    p: EventParams,
    conn: Box<dyn Conn>,
    /// Per table (index 0 = sbtest1), the statements of `kind`.
    stmts: Vec<Vec<StmtId>>,
    begin: Option<StmtId>,
    commit: Option<StmtId>,
    rollback: String,
    in_trx: bool,
    rng: SbRng,
    /// The top of the id range (sysbench's ids are 32-bit).
    id_max: u32,
    c: String,
    pad: String,
    /// Reused parameter list for IN lists and ranges (integers only).
    ints: Vec<Param<'static>>,
    /// Reused text of plain statements (insert).
    text: String,
    insert_prefix: Vec<String>,
    scan_sql: String,
}

impl SbWorker {
    pub fn new(
        driver: Arc<dyn Driver>,
        test: &TestDef,
        p: &EventParams,
        thread: usize,
    ) -> DbResult<SbWorker> {
        let db = driver.require_sql()?;
        let conn = db.connect()?;
        let dist = match test.kind {
            Kind::UpdateNonIndex { ids: IdMode::Zipf } => p.rand.with_kind(SbRandType::Zipfian),
            _ => p.rand,
        };
        let dialect = db.dialect();
        let tables = p.tables.max(1);
        let mut w = SbWorker {
            kind: test.kind,
            p: p.clone(),
            conn,
            stmts: Vec::new(),
            begin: None,
            commit: None,
            rollback: dialect.rollback().to_string(),
            in_trx: false,
            rng: SbRng::for_thread(p.rand_seed, thread, dist),
            id_max: p.table_size.clamp(1, u32::MAX.into()) as u32,
            c: String::with_capacity(128),
            pad: String::with_capacity(64),
            ints: Vec::with_capacity(1024),
            text: String::with_capacity(512),
            insert_prefix: (p.first_table..p.first_table + tables)
                .map(|i| dialect.insert_auto_id_prefix(&super::schema::table(i)))
                .collect(),
            scan_sql: format!(
                "SELECT * FROM {} WHERE LENGTH(c) < 0",
                table_name(p.first_table + thread % tables)
            ),
            driver: driver.clone(),
        };
        w.prepare_all()?;
        Ok(w)
    }

    fn prepare_all(&mut self) -> DbResult<()> {
        let mode = self.p.ps_mode;
        self.stmts.clear();
        for i in self.p.first_table..self.p.first_table + self.p.tables.max(1) {
            let mut ids = Vec::new();
            for sql in statements(self.kind, &table_name(i)) {
                ids.push(if sql.is_empty() {
                    StmtId(u32::MAX)
                } else {
                    self.conn.prepare(&sql, mode)?
                });
            }
            self.stmts.push(ids);
        }
        let dialect = self.driver.require_sql()?.dialect();
        // sysbench's --skip_trx: the same statements, each in its own implicit
        // transaction; the event is still counted once (one "transaction").
        let begin = match self.kind {
            _ if self.p.skip_trx => None,
            Kind::ReadOnly { .. } => Some(dialect.begin_read()),
            Kind::WriteOnly | Kind::ReadWrite { .. } => Some(dialect.begin_write()),
            _ => None,
        };
        if let Some(b) = begin {
            self.begin = Some(self.conn.prepare(b, mode)?);
            self.commit = Some(self.conn.prepare(dialect.commit(), mode)?);
        }
        Ok(())
    }

    /// The table of a statement group (0 = the first): sysbench's
    /// `uniform(1, tables)`, drawn also when there is one.
    #[inline(always)]
    fn table(&mut self) -> usize {
        self.rng.uniform(1, self.stmts.len() as u32) as usize - 1
    }

    /// An id: sysbench's `default(1, table_size)`.
    #[inline(always)]
    fn id(&mut self) -> i64 {
        self.rng.default(1, self.id_max).into()
    }

    /// A `c` value into `self.c`.
    fn c_value(&mut self) {
        self.rng.string_to(C_TEMPLATE, &mut self.c);
    }

    #[inline]
    fn exec(&mut self, c: &mut Counts, stmt: StmtId, params: &[Param<'_>]) -> DbResult<()> {
        let o = self.conn.execute(stmt, params)?;
        c.record(o);
        Ok(())
    }

    /// Runs `stmt` with the reused integer list.
    #[inline]
    fn exec_ints(&mut self, c: &mut Counts, stmt: StmtId) -> DbResult<()> {
        let o = self.conn.execute(stmt, &self.ints)?;
        c.record(o);
        Ok(())
    }

    fn fill_ids(&mut self, n: usize) {
        self.ints.clear();
        for _ in 0..n {
            let v = self.id();
            self.ints.push(Param::Int(v));
        }
    }

    fn range(&mut self, c: &mut Counts, t: usize, slot: usize, len: i64) -> DbResult<()> {
        let x = self.id();
        self.ints.clear();
        self.ints.push(Param::Int(x));
        self.ints.push(Param::Int(x + len - 1));
        self.exec_ints(c, self.stmts[t][slot])
    }

    fn point_selects(&mut self, c: &mut Counts) -> DbResult<()> {
        let t = self.table();
        for _ in 0..POINT_SELECTS {
            let id = self.id();
            self.exec(c, self.stmts[t][POINT], &[Param::Int(id)])?;
        }
        Ok(())
    }

    fn writes(&mut self, c: &mut Counts) -> DbResult<()> {
        let t = self.table();
        let id = self.id();
        self.exec(c, self.stmts[t][INDEX_UPDATE], &[Param::Int(id)])?;
        let t = self.table();
        self.c_value();
        let id = self.id();
        let c_val = std::mem::take(&mut self.c);
        let r = self.exec(
            c,
            self.stmts[t][NON_INDEX_UPDATE],
            &[Param::Text(&c_val), Param::Int(id)],
        );
        self.c = c_val;
        r?;
        // Delete one row and insert it back with the same id and new values.
        let t = self.table();
        let id = self.id();
        self.exec(c, self.stmts[t][DELETE], &[Param::Int(id)])?;
        let k = self.id();
        self.c_value();
        self.rng.string_to(PAD_TEMPLATE, &mut self.pad);
        let (c_val, pad) = (std::mem::take(&mut self.c), std::mem::take(&mut self.pad));
        let r = self.exec(
            c,
            self.stmts[t][INSERT],
            &[
                Param::Int(id),
                Param::Int(k),
                Param::Text(&c_val),
                Param::Text(&pad),
            ],
        );
        self.c = c_val;
        self.pad = pad;
        r
    }

    fn begin(&mut self, c: &mut Counts) -> DbResult<()> {
        if let Some(b) = self.begin {
            self.exec(c, b, &[])?;
            self.in_trx = true;
        }
        Ok(())
    }

    fn commit(&mut self, c: &mut Counts) -> DbResult<()> {
        if let Some(s) = self.commit {
            self.exec(c, s, &[])?;
            self.in_trx = false;
        }
        Ok(())
    }

    /// sysbench's point query: one row by a drawn id.
    #[inline(always)]
    fn point_select(&mut self, c: &mut Counts) -> DbResult<()> {
        let t = self.table();
        let id = self.id();
        self.exec(c, self.stmts[t][MAIN], &[Param::Int(id)])
    }

    #[inline(never)]
    fn run_event(&mut self, c: &mut Counts) -> DbResult<()> {
        match self.kind {
            Kind::PointSelect => self.point_select(c),
            Kind::InList { points, hot } => {
                let t = self.table();
                self.ints.clear();
                if hot {
                    let first = self.p.table_size / 2 + 1;
                    self.ints
                        .extend((0..points as i64).map(|i| Param::Int(first + i)));
                } else {
                    for _ in 0..points {
                        let id = self.id();
                        self.ints.push(Param::Int(id));
                    }
                }
                self.exec_ints(c, self.stmts[t][MAIN])
            }
            Kind::PointsCovered { .. } => {
                let t = self.table();
                self.fill_ids(COVERED_POINTS);
                self.exec_ints(c, self.stmts[t][MAIN])
            }
            Kind::RangeCovered { .. } => {
                let t = self.table();
                // BETWEEN x AND x+100: 101 values inclusive.
                self.range(c, t, MAIN, COVERED_RANGE + 1)
            }
            Kind::Scan => {
                let o = self.conn.query(&self.scan_sql)?;
                c.record(o);
                Ok(())
            }
            Kind::ReadOnly {
                range,
                simple,
                sum,
                order,
                distinct,
            } => {
                self.begin(c)?;
                self.point_selects(c)?;
                for (on, slot) in [
                    (simple, SIMPLE),
                    (sum, SUM),
                    (order, ORDER),
                    (distinct, DISTINCT),
                ] {
                    // sysbench draws each range's table even where its
                    // count is 0.
                    let t = self.table();
                    if on {
                        self.range(c, t, slot, range)?;
                    }
                }
                self.commit(c)
            }
            Kind::ReadOnlyCount { range } => {
                let t = self.table();
                self.range(c, t, MAIN, range)
            }
            Kind::UpdateInlist => {
                let t = self.table();
                self.c_value();
                let c_val = std::mem::take(&mut self.c);
                let mut p = [Param::Int(0); UPDATE_INLIST_POINTS + 1];
                p[0] = Param::Text(&c_val);
                for slot in p.iter_mut().skip(1) {
                    *slot = Param::Int(self.id());
                }
                let r = self.exec(c, self.stmts[t][MAIN], &p);
                self.c = c_val;
                r
            }
            Kind::UpdateIndex => {
                let t = self.table();
                let id = self.id();
                self.exec(c, self.stmts[t][MAIN], &[Param::Int(id)])
            }
            Kind::UpdateNonIndex { ids } => {
                // oltp_update_non_index.lua: the table, c, then the id.
                let t = self.table();
                self.c_value();
                let id = if ids == IdMode::One { 1 } else { self.id() };
                let c_val = std::mem::take(&mut self.c);
                let r = self.exec(
                    c,
                    self.stmts[t][MAIN],
                    &[Param::Text(&c_val), Param::Int(id)],
                );
                self.c = c_val;
                r
            }
            Kind::WriteOnly => {
                self.begin(c)?;
                self.writes(c)?;
                self.commit(c)
            }
            Kind::ReadWrite { range } => {
                self.begin(c)?;
                self.point_selects(c)?;
                for slot in [SIMPLE, SUM, ORDER, DISTINCT] {
                    let t = self.table();
                    self.range(c, t, slot, range)?;
                }
                self.writes(c)?;
                self.commit(c)
            }
            Kind::Delete => {
                let t = self.table();
                let id = self.id();
                self.exec(c, self.stmts[t][MAIN], &[Param::Int(id)])
            }
            Kind::Insert => {
                use std::fmt::Write;
                let t = self.table();
                let k = self.id();
                self.c_value();
                self.rng.string_to(PAD_TEMPLATE, &mut self.pad);
                self.text.clear();
                self.text.push_str(&self.insert_prefix[t]);
                let _ = write!(self.text, "{k}, '{}', '{}')", self.c, self.pad);
                let o = self.conn.query(&self.text)?;
                c.record(o);
                Ok(())
            }
        }
    }
}

/// A unique violation restarts the event, as sysbench's PostgreSQL driver
/// treats it ([`super::ignorable::PGSQL_IGNORABLE`]; deadlocks and serialization
/// failures are the engines' retry class already).
/// read-write's DELETE then INSERT of one id meets it when two clients draw
/// the same id at once under read committed: the second DELETE does not
/// see the first client's new row, and its INSERT collides (seen in CI at
/// 4 threads on 2,000 rows). On MySQL the DELETE's next-key lock makes
/// the second client wait and delete that row, so it does not arise there.
fn ignorable_as_sysbench(mut e: DbError) -> DbError {
    if e.class == ErrorClass::Fatal && super::ignorable::PGSQL_IGNORABLE.contains(&e.meaning) {
        e.class = ErrorClass::Retry;
    }
    e
}

impl Worker for SbWorker {
    /// The point query runs here, inlined into the harness's loop; every
    /// other kind is a call to `run_event`. Why: `run_event` matches on
    /// every kind and saves as many registers, and its entry and exit were
    /// about 20 of the harness's instructions per point query (callgrind,
    /// `rqps bench harness`), against a 3.5 us query with 3 % to spend.
    #[inline(always)]
    fn event(&mut self, c: &mut Counts) -> DbResult<()> {
        let r = if let Kind::PointSelect = self.kind {
            self.point_select(c)
        } else {
            self.run_event(c).map_err(ignorable_as_sysbench)
        };
        self.rng.skip_histogram_slot();
        r
    }

    fn recover(&mut self, err: &DbError) -> DbResult<()> {
        match err.class {
            ErrorClass::Retry => {
                if self.in_trx {
                    self.in_trx = false;
                    // The engine may already have rolled back; a failing ROLLBACK is fine.
                    let _ = self.conn.query(&self.rollback);
                }
                Ok(())
            }
            ErrorClass::Reconnect => {
                self.in_trx = false;
                self.conn = self.driver.require_sql()?.connect()?;
                self.prepare_all()
            }
            ErrorClass::Fatal => Err(err.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Meaning;
    use crate::engine::sqlite::SqliteDriver;
    use crate::suite::sysbench::catalog::lookup;
    use crate::suite::sysbench::load::{LoadParams, load};

    #[test]
    fn a_unique_violation_restarts_the_event_and_other_refusals_stay_fatal() {
        let e = |meaning| DbError {
            meaning,
            ..DbError::fatal("x".to_string())
        };
        assert_eq!(
            ignorable_as_sysbench(e(Meaning::DuplicateKey)).class,
            ErrorClass::Retry
        );
        assert_eq!(
            ignorable_as_sysbench(e(Meaning::Syntax)).class,
            ErrorClass::Fatal
        );
    }

    const N: i64 = 1000;

    fn setup(tables: usize) -> (tempfile::TempDir, Arc<dyn Driver>, EventParams) {
        let dir = tempfile::tempdir().unwrap();
        let driver: Arc<dyn Driver> =
            Arc::new(SqliteDriver::new(&dir.path().join("sb.db"), vec![]));
        load(
            driver.as_ref(),
            &LoadParams {
                tables,
                table_size: N as u64,
                seed: 7,
            },
            &mut |_| {},
        )
        .unwrap();
        let p = EventParams {
            tables,
            table_size: N,
            rand: SbDist::new(SbRandType::Uniform, Default::default()).unwrap(),
            ps_mode: PsMode::Auto,
            skip_trx: false,
            first_table: 1,
            rand_seed: 11,
        };
        (dir, driver, p)
    }

    fn one_event(driver: &Arc<dyn Driver>, p: &EventParams, name: &str) -> Counts {
        let mut w = SbWorker::new(driver.clone(), &lookup(name).unwrap(), p, 0).unwrap();
        let mut c = Counts::default();
        w.event(&mut c).unwrap();
        c
    }

    fn scalar(driver: &Arc<dyn Driver>, sql: &str) -> String {
        driver
            .require_sql()
            .unwrap()
            .connect()
            .unwrap()
            .query_scalar(sql)
            .unwrap()
            .unwrap_or_default()
    }

    #[test]
    fn read_statements_return_the_reference_row_counts() {
        let (_d, driver, p) = setup(1);
        let c = one_event(&driver, &p, "random-points_range=10");
        assert_eq!((c.reads, c.rows), (1, 10));
        let c = one_event(&driver, &p, "random-points_range=1000");
        // Uniform ids repeat, and IN returns each row once: at most 1000 rows.
        assert_eq!(c.reads, 1);
        assert!(c.rows > 500 && c.rows <= 1000, "{}", c.rows);
        let c = one_event(&driver, &p, "point-query");
        assert_eq!((c.reads, c.rows, c.queries()), (1, 1, 1));
        // read-only: BEGIN, 10 points, 4 ranges, COMMIT = 14 reads + 2 other.
        let c = one_event(&driver, &p, "read-only_range=10");
        assert_eq!((c.reads, c.writes, c.other, c.events), (14, 0, 2, 0));
        let c = one_event(&driver, &p, "read-only-sum");
        assert_eq!((c.reads, c.other), (11, 2));
        let c = one_event(&driver, &p, "read-only-count");
        assert_eq!((c.reads, c.other, c.rows), (1, 0, 1));
        let c = one_event(&driver, &p, "scan");
        assert_eq!((c.reads, c.rows), (1, 0));
    }

    #[test]
    fn range_covered_pk_returns_101_rows() {
        let (_d, driver, p) = setup(1);
        let mut w =
            SbWorker::new(driver.clone(), &lookup("range-covered-pk").unwrap(), &p, 0).unwrap();
        let mut c = Counts::default();
        w.ints.clear();
        w.ints.extend([Param::Int(10), Param::Int(110)]);
        let stmt = w.stmts[0][MAIN];
        w.exec_ints(&mut c, stmt).unwrap();
        assert_eq!(c.rows, 101);
        // The event itself asks for x..x+100.
        assert_eq!(
            statements(
                Kind::RangeCovered {
                    covered: true,
                    on_id: true
                },
                "t"
            )[0],
            "SELECT id FROM t WHERE id BETWEEN ? AND ?"
        );
    }

    #[test]
    fn hot_points_reads_the_same_100_ids_every_time() {
        let (_d, driver, p) = setup(1);
        let mut w = SbWorker::new(driver.clone(), &lookup("hot-points").unwrap(), &p, 0).unwrap();
        for _ in 0..3 {
            let mut c = Counts::default();
            w.event(&mut c).unwrap();
            assert_eq!(c.rows, 100);
            let ids: Vec<i64> = w
                .ints
                .iter()
                .map(|p| if let Param::Int(v) = p { *v } else { 0 })
                .collect();
            assert_eq!(ids, (N / 2 + 1..=N / 2 + 100).collect::<Vec<_>>());
        }
    }

    #[test]
    fn update_one_touches_only_id_1() {
        let (_d, driver, p) = setup(2);
        let before: Vec<String> = (1..=2)
            .map(|t| {
                scalar(
                    &driver,
                    &format!("SELECT group_concat(c) FROM sbtest{t} WHERE id > 1"),
                )
            })
            .collect();
        let mut w = SbWorker::new(driver.clone(), &lookup("update-one").unwrap(), &p, 0).unwrap();
        for _ in 0..20 {
            let mut c = Counts::default();
            w.event(&mut c).unwrap();
            assert_eq!((c.writes, c.queries()), (1, 1));
        }
        let after: Vec<String> = (1..=2)
            .map(|t| {
                scalar(
                    &driver,
                    &format!("SELECT group_concat(c) FROM sbtest{t} WHERE id > 1"),
                )
            })
            .collect();
        assert_eq!(before, after);
    }

    #[test]
    fn write_only_keeps_the_row_count_and_counts_six_queries() {
        let (_d, driver, p) = setup(1);
        let mut w = SbWorker::new(driver.clone(), &lookup("write-only").unwrap(), &p, 0).unwrap();
        for _ in 0..50 {
            let mut c = Counts::default();
            w.event(&mut c).unwrap();
            assert_eq!(c.queries(), 6);
            assert_eq!(c.reads, 0);
        }
        assert_eq!(
            scalar(&driver, "SELECT count(*) FROM sbtest1"),
            N.to_string()
        );
        let c = one_event(&driver, &p, "read-write_range=10");
        assert_eq!((c.reads, c.writes + c.other), (14, 6));
    }

    #[test]
    fn skip_trx_sends_the_same_statements_without_begin_and_commit() {
        let (_d, driver, mut p) = setup(1);
        p.skip_trx = true;
        let c = one_event(&driver, &p, "read-only_range=10");
        assert_eq!((c.reads, c.writes, c.other), (14, 0, 0));
        let c = one_event(&driver, &p, "read-write_range=10");
        assert_eq!((c.reads, c.writes, c.other), (14, 4, 0));
        let c = one_event(&driver, &p, "write-only");
        assert_eq!((c.reads, c.writes, c.other), (0, 4, 0));
    }

    #[test]
    fn a_share_of_the_tables_is_the_only_one_written() {
        let (_d, driver, mut p) = setup(4);
        (p.first_table, p.tables) = (3, 2);
        let mut w = SbWorker::new(driver.clone(), &lookup("insert").unwrap(), &p, 0).unwrap();
        for _ in 0..40 {
            w.event(&mut Counts::default()).unwrap();
        }
        let rows = |t: usize| -> i64 {
            scalar(&driver, &format!("SELECT count(*) FROM sbtest{t}"))
                .parse()
                .unwrap()
        };
        assert_eq!((rows(1), rows(2)), (N, N));
        assert_eq!(rows(3) + rows(4), 2 * N + 40);
        assert!(
            rows(3) > N && rows(4) > N,
            "both tables of the share are used"
        );
    }

    #[test]
    fn delete_then_insert_and_update_inlist() {
        let (_d, driver, p) = setup(1);
        let c = one_event(&driver, &p, "delete");
        assert_eq!(c.writes + c.other, 1);
        assert_eq!(
            scalar(&driver, "SELECT count(*) FROM sbtest1"),
            (N - 1).to_string()
        );
        let c = one_event(&driver, &p, "insert");
        assert_eq!(c.writes, 1);
        assert_eq!(
            scalar(&driver, "SELECT count(*) FROM sbtest1"),
            N.to_string()
        );
        assert_eq!(
            scalar(&driver, "SELECT max(id) FROM sbtest1"),
            (N + 1).to_string()
        );
        let c = one_event(&driver, &p, "update-inlist");
        assert_eq!((c.writes, c.queries()), (1, 1));
    }

    #[test]
    fn text_mode_gives_the_same_counts() {
        let (_d, driver, mut p) = setup(1);
        p.ps_mode = PsMode::Disable;
        let c = one_event(&driver, &p, "read-write_range=100");
        assert_eq!((c.reads, c.writes + c.other), (14, 6));
    }
}
