//! A driver that records what a suite's worker sends and what comes back:
//! it wraps an engine's driver, and its connections keep, for every
//! statement prepared or run, the text, the parameters and the answer (the
//! rows as text, the affected-row count, or the error). Executions are
//! answered through the engine's own [`Conn::fetch`], so the worker gets
//! the outcome it would have got, and the record gets the rows.

use std::sync::{Arc, Mutex};

use crate::engine::{
    Caps, Conn, DbError, DbResult, Dialect, Driver, Meaning, Outcome, Param, PsMode, Rows,
    SqlAccess, StmtId, inline_params,
};

/// A parameter as it was bound.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Text(String),
    Null,
}

impl Value {
    fn of(p: &Param<'_>) -> Value {
        match p {
            Param::Int(i) => Value::Int(*i),
            Param::Text(s) => Value::Text((*s).to_string()),
            Param::Null => Value::Null,
        }
    }

    fn param(&self) -> Param<'_> {
        match self {
            Value::Int(i) => Param::Int(*i),
            Value::Text(s) => Param::Text(s),
            Value::Null => Param::Null,
        }
    }
}

/// What the engine answered.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// A statement prepared (nothing run yet).
    Prepared,
    /// A result set: its rows, each value as text (`None`: NULL).
    Rows(Vec<Vec<Option<String>>>),
    /// No result set: the affected-row count.
    Affected(u64),
    /// The first value of the first row, as asked (`query_scalar`).
    Scalar(Option<String>),
    Error {
        meaning: Meaning,
        code: Option<String>,
        message: String,
    },
}

impl Answer {
    fn error(e: &DbError) -> Answer {
        Answer::Error {
            meaning: e.meaning(),
            code: e.code.clone(),
            message: e.message.clone(),
        }
    }
}

/// One statement as it was sent.
#[derive(Clone, Debug, PartialEq)]
pub struct Sent {
    /// Which of the recorder's connections sent it (in the order opened).
    pub conn: usize,
    /// The text with `?` placeholders, as the worker gave it.
    pub sql: String,
    pub params: Vec<Value>,
    pub answer: Answer,
}

impl Sent {
    /// The statement with its parameters written in as SQL literals, to
    /// run by hand.
    pub fn literal(&self) -> String {
        let params: Vec<Param<'_>> = self.params.iter().map(Value::param).collect();
        let mut out = String::new();
        match inline_params(&self.sql, &params, &mut out) {
            Ok(()) => out,
            Err(_) => self.sql.clone(),
        }
    }
}

/// The statements recorded so far, shared by a recorder's connections.
pub type Log = Arc<Mutex<Vec<Sent>>>;

/// An engine's driver with every statement recorded.
pub struct Recorder {
    inner: Arc<dyn Driver>,
    log: Log,
    conns: std::sync::atomic::AtomicUsize,
}

impl Recorder {
    pub fn new(inner: Arc<dyn Driver>) -> Arc<Recorder> {
        Arc::new(Recorder {
            inner,
            log: Arc::default(),
            conns: Default::default(),
        })
    }

    /// Takes what was recorded since the last take.
    pub fn take(&self) -> Vec<Sent> {
        self.conns.store(0, std::sync::atomic::Ordering::SeqCst);
        std::mem::take(&mut *self.log.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The driver underneath, unrecorded.
    pub fn inner(&self) -> &Arc<dyn Driver> {
        &self.inner
    }
}

impl Driver for Recorder {
    fn engine(&self) -> &'static str {
        self.inner.engine()
    }
    fn caps(&self) -> Caps {
        self.inner.caps()
    }
    fn calls(&self) -> crate::engine::Calls {
        self.inner.calls()
    }
    fn version(&self) -> DbResult<String> {
        self.inner.version()
    }
    fn settings(&self) -> DbResult<Vec<(String, String)>> {
        self.inner.settings()
    }
    fn tls(&self) -> Option<crate::engine::tls::TlsInfo> {
        self.inner.tls()
    }
    fn auth(&self) -> Option<String> {
        self.inner.auth()
    }
    fn db_size(&self) -> DbResult<Option<u64>> {
        self.inner.db_size()
    }
    fn data_path(&self) -> Option<std::path::PathBuf> {
        self.inner.data_path()
    }
    fn status(&self) -> DbResult<Vec<(String, String)>> {
        self.inner.status()
    }
    fn allowances(&self) -> DbResult<Vec<crate::engine::capacity::Allowance>> {
        self.inner.allowances()
    }
    fn sql(&self) -> Option<&dyn SqlAccess> {
        self.inner.sql().map(|_| self as &dyn SqlAccess)
    }
}

impl SqlAccess for Recorder {
    fn connect(&self) -> DbResult<Box<dyn Conn>> {
        let inner = self.inner.require_sql()?.connect()?;
        Ok(Box::new(RecConn {
            inner,
            log: self.log.clone(),
            conn: self.conns.fetch_add(1, std::sync::atomic::Ordering::SeqCst),
            stmts: Vec::new(),
            rows: Rows::default(),
        }))
    }
    fn dialect(&self) -> &dyn Dialect {
        match self.inner.sql() {
            Some(db) => db.dialect(),
            None => &NO_DIALECT,
        }
    }
}

/// Never used: a recorder's SQL face exists only over an engine that has one.
struct NoDialect;
static NO_DIALECT: NoDialect = NoDialect;
impl Dialect for NoDialect {
    fn create_table(&self, _: &crate::engine::Table) -> Vec<String> {
        Vec::new()
    }
    fn settle(&self, _: &[String]) -> Vec<String> {
        Vec::new()
    }
}

/// A connection whose statements are recorded.
struct RecConn {
    inner: Box<dyn Conn>,
    log: Log,
    conn: usize,
    /// The text of each statement prepared here, by its id.
    stmts: Vec<(StmtId, String)>,
    rows: Rows,
}

/// The values of `rows`, row by row.
pub fn rows_of(rows: &Rows) -> Vec<Vec<Option<String>>> {
    // Every result set's rows, one after the other: several statements in
    // one message answer with a set each.
    (0..rows.sets())
        .map(|i| rows.set(i))
        .flat_map(|set| {
            (0..set.len()).map(move |r| {
                (0..set.width())
                    .map(|c| set.get(r, c).map(str::to_string))
                    .collect()
            })
        })
        .collect()
}

impl RecConn {
    fn push(&self, sql: &str, params: &[Param<'_>], answer: Answer) {
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Sent {
                conn: self.conn,
                sql: sql.to_string(),
                params: params.iter().map(Value::of).collect(),
                answer,
            });
    }

    fn text(&self, id: StmtId) -> String {
        self.stmts
            .iter()
            .find(|(s, _)| *s == id)
            .map(|(_, t)| t.clone())
            .unwrap_or_default()
    }

    /// Records the answer of a statement that may return rows (`rows`
    /// filled by the engine).
    fn answered(&self, sql: &str, params: &[Param<'_>], r: &DbResult<Outcome>, rows: &Rows) {
        let answer = match r {
            Ok(Outcome::Rows(_)) => Answer::Rows(rows_of(rows)),
            Ok(Outcome::Affected(n)) => Answer::Affected(*n),
            Err(e) => Answer::error(e),
        };
        self.push(sql, params, answer);
    }
}

impl Conn for RecConn {
    fn prepare(&mut self, sql: &str, mode: PsMode) -> DbResult<StmtId> {
        let r = self.inner.prepare(sql, mode);
        match &r {
            Ok(id) => {
                self.stmts.push((*id, sql.to_string()));
                self.push(sql, &[], Answer::Prepared);
            }
            Err(e) => self.push(sql, &[], Answer::error(e)),
        }
        r
    }

    fn execute(&mut self, stmt: StmtId, params: &[Param<'_>]) -> DbResult<Outcome> {
        let mut rows = std::mem::take(&mut self.rows);
        let r = self.inner.fetch(stmt, params, &mut rows);
        self.answered(&self.text(stmt), params, &r, &rows);
        self.rows = rows;
        r
    }

    fn fetch(&mut self, stmt: StmtId, params: &[Param<'_>], rows: &mut Rows) -> DbResult<Outcome> {
        let r = self.inner.fetch(stmt, params, rows);
        self.answered(&self.text(stmt), params, &r, rows);
        r
    }

    fn query(&mut self, sql: &str) -> DbResult<Outcome> {
        let mut rows = std::mem::take(&mut self.rows);
        let r = self.inner.query_into(sql, &mut rows);
        self.answered(sql, &[], &r, &rows);
        self.rows = rows;
        r
    }

    fn query_scalar(&mut self, sql: &str) -> DbResult<Option<String>> {
        let r = self.inner.query_scalar(sql);
        let answer = match &r {
            Ok(v) => Answer::Scalar(v.clone()),
            Err(e) => Answer::error(e),
        };
        self.push(sql, &[], answer);
        r
    }

    fn query_into(&mut self, sql: &str, rows: &mut Rows) -> DbResult<Outcome> {
        let r = self.inner.query_into(sql, rows);
        self.answered(sql, &[], &r, rows);
        r
    }

    fn execute_unprepared(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        rows: Option<&mut Rows>,
    ) -> Option<DbResult<Outcome>> {
        match rows {
            Some(out) => {
                let r = self
                    .inner
                    .execute_unprepared(sql, params, Some(&mut *out))?;
                self.answered(sql, params, &r, out);
                Some(r)
            }
            None => {
                let mut own = std::mem::take(&mut self.rows);
                let r = self.inner.execute_unprepared(sql, params, Some(&mut own))?;
                self.answered(sql, params, &r, &own);
                self.rows = own;
                Some(r)
            }
        }
    }

    fn column_names(&mut self, sql: &str) -> Option<DbResult<Vec<String>>> {
        self.inner.column_names(sql)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sqlite::SqliteDriver;

    #[test]
    fn the_rows_of_several_statements_in_one_message_are_all_kept() {
        let dir = tempfile::tempdir().unwrap();
        let d = SqliteDriver::new(&dir.path().join("t.db"), vec![]);
        let mut c = d.connect().unwrap();
        let mut r = Rows::default();
        c.query_into("SELECT 1; SELECT 2, 3", &mut r).unwrap();
        assert_eq!(
            rows_of(&r),
            vec![
                vec![Some("1".to_string())],
                vec![Some("2".to_string()), Some("3".to_string())]
            ]
        );
    }

    #[test]
    fn every_statement_and_its_answer_is_recorded_and_the_worker_gets_its_outcome() {
        let dir = tempfile::tempdir().unwrap();
        let inner: Arc<dyn Driver> = Arc::new(SqliteDriver::new(&dir.path().join("t.db"), vec![]));
        let rec = Recorder::new(inner);
        let mut c = rec.connect().unwrap();
        c.query("CREATE TABLE t (id INT PRIMARY KEY, v TEXT)")
            .unwrap();
        let ins = c
            .prepare("INSERT INTO t VALUES (?, ?)", PsMode::Auto)
            .unwrap();
        assert_eq!(
            c.execute(ins, &[Param::Int(1), Param::Text("a'b")])
                .unwrap(),
            Outcome::Affected(1)
        );
        let sel = c
            .prepare("SELECT v FROM t WHERE id = ?", PsMode::Auto)
            .unwrap();
        assert_eq!(c.execute(sel, &[Param::Int(1)]).unwrap(), Outcome::Rows(1));
        assert!(c.execute(ins, &[Param::Int(1), Param::Text("x")]).is_err());
        assert!(c.prepare("SELEC 1", PsMode::Auto).is_err());
        let log = rec.take();
        let answers: Vec<&Answer> = log.iter().map(|s| &s.answer).collect();
        assert_eq!(answers[0], &Answer::Affected(0));
        assert_eq!(answers[1], &Answer::Prepared);
        assert_eq!(answers[2], &Answer::Affected(1));
        assert_eq!(answers[4], &Answer::Rows(vec![vec![Some("a'b".into())]]));
        assert!(matches!(
            answers[5],
            Answer::Error {
                meaning: Meaning::DuplicateKey,
                ..
            }
        ));
        assert!(matches!(
            answers[6],
            Answer::Error {
                meaning: Meaning::Syntax,
                ..
            }
        ));
        assert_eq!(log[2].literal(), "INSERT INTO t VALUES (1, 'a''b')");
        assert!(rec.take().is_empty());
    }
}
