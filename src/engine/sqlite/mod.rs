//! Embedded SQLite through rusqlite (SQLite compiled into rqps).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, Statement, types::ValueRef};

use crate::engine::kind::EngineKind;
use crate::engine::schema::{self, KeyedTable, Table};
use crate::engine::{
    Caps, Conn, DbError, DbResult, Dialect, Driver, ErrorClass, Meaning, Outcome, Param, PsMode,
    Rows, SqlAccess, StmtId, inline_params,
};

/// PRAGMAs applied to every connection unless the target's config says
/// otherwise: WAL lets readers run beside the one writer.
pub const DEFAULT_PRAGMAS: &[&str] = &["PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL"];

/// SQLite in the engine registry: embedded, so no URL, no server, no
/// versions to install (targets are `sqlite:PATH`, see
/// [`Target`](crate::engine::target::Target)).
pub static KIND: EngineKind = EngineKind {
    library: None,
    face: crate::engine::Face::Sql,
    fairness_settings: &["synchronous", "journal_mode", "cache_size", "mmap_size"],
    name: "sqlite",
    title: "SQLite",
    aliases: &["sqlite"],
    schemes: &[],
    default_port: None,
    server: None,
    prebuilt: None,
    apt_package: None,
    open_url: None,
    options: &[],
};

/// How long a connection waits for the write lock before reporting busy.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

pub struct SqliteDriver {
    path: PathBuf,
    /// Statements run on every new connection (PRAGMA lines).
    init: Vec<String>,
    dialect: SqliteDialect,
}

impl SqliteDriver {
    /// `pragmas` are run on every connection after the defaults, so they win.
    pub fn new(path: &Path, pragmas: Vec<String>) -> Self {
        let mut init: Vec<String> = DEFAULT_PRAGMAS.iter().map(|s| s.to_string()).collect();
        init.extend(pragmas);
        SqliteDriver {
            path: path.to_path_buf(),
            init,
            dialect: SqliteDialect,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn open(&self) -> DbResult<SqliteConn> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(&self.path, flags).map_err(|e| {
            DbError::fatal(format!(
                "cannot open SQLite database {}: {e}",
                self.path.display()
            ))
        })?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(map_err)?;
        let interrupt = conn.get_interrupt_handle();
        let mut c = SqliteConn {
            _registered: crate::engine::inflight::register(
                None,
                Some(std::sync::Arc::new(move || interrupt.interrupt())),
            ),
            stmts: Vec::new(),
            text: String::new(),
            conn: Box::new(conn),
        };
        for sql in &self.init {
            c.query(sql).map_err(|e| DbError {
                message: format!("{sql}: {}", e.message),
                ..e
            })?;
        }
        Ok(c)
    }
}

impl SqlAccess for SqliteDriver {
    fn connect(&self) -> DbResult<Box<dyn Conn>> {
        Ok(Box::new(self.open()?))
    }
    fn dialect(&self) -> &dyn Dialect {
        &self.dialect
    }
}

impl Driver for SqliteDriver {
    fn engine(&self) -> &'static str {
        KIND.name
    }
    fn sql(&self) -> Option<&dyn SqlAccess> {
        Some(self)
    }
    fn caps(&self) -> Caps {
        Caps {
            prepared_statements: true,
            multi_row_insert: true,
            single_writer: true,
            pipelining: false,
            max_params: 32766,
        }
    }
    fn version(&self) -> DbResult<String> {
        Ok(rusqlite::version().to_string())
    }
    /// The effective value of the PRAGMAs that shape performance.
    fn settings(&self) -> DbResult<Vec<(String, String)>> {
        let mut c = self.open()?;
        let mut out = Vec::new();
        for p in [
            "journal_mode",
            "synchronous",
            "cache_size",
            "page_size",
            "mmap_size",
            "locking_mode",
            "temp_store",
            "wal_autocheckpoint",
            "busy_timeout",
            "auto_vacuum",
            "cache_spill",
        ] {
            if let Some(v) = c.query_scalar(&format!("PRAGMA {p}"))? {
                out.push((p.to_string(), v));
            }
        }
        Ok(out)
    }
    fn db_size(&self) -> DbResult<Option<u64>> {
        let mut c = self.open()?;
        let num = |c: &mut SqliteConn, sql: &str| -> DbResult<u64> {
            Ok(c.query_scalar(sql)?
                .and_then(|v| v.parse().ok())
                .unwrap_or(0))
        };
        Ok(Some(
            num(&mut c, "PRAGMA page_count")? * num(&mut c, "PRAGMA page_size")?,
        ))
    }
    fn data_path(&self) -> Option<PathBuf> {
        Some(self.path.clone())
    }
}

pub struct SqliteDialect;

impl Dialect for SqliteDialect {
    /// The id is `INTEGER PRIMARY KEY`, the rowid: SQLite assigns 1, 2, ...
    /// in insert order, like AUTO_INCREMENT. NOT NULL comes before DEFAULT,
    /// numbers unquoted.
    fn create_table(&self, t: &Table) -> Vec<String> {
        let mut cols = vec![format!(
            "{} INTEGER{} PRIMARY KEY",
            t.id.name,
            if t.id.not_null { " NOT NULL" } else { "" }
        )];
        cols.extend(
            t.columns
                .iter()
                .map(|c| schema::column_sql(c, &schema::standard_type(c.ty), false, false)),
        );
        vec![format!("CREATE TABLE {} ({})", t.name, cols.join(", "))]
    }
    /// Keyed tables are clustered on their key (`WITHOUT ROWID`), as the
    /// key is what they are read by.
    fn create_keyed_table(&self, t: &KeyedTable) -> Vec<String> {
        vec![schema::keyed_table_sql(
            t,
            &schema::standard_type,
            false,
            false,
            // WITHOUT ROWID needs a primary key; a table without one
            // (a history log) keeps the rowid.
            if t.key.is_empty() {
                ""
            } else {
                " WITHOUT ROWID"
            },
        )]
    }
    fn begin_write(&self) -> &'static str {
        "BEGIN IMMEDIATE"
    }
    fn datetime_from_epoch(&self) -> &'static str {
        "datetime(?, 'unixepoch')"
    }
    fn table_with_index(&self, table: &Table, index: &str) -> String {
        format!("{} INDEXED BY {index}", table.name)
    }
    fn settle(&self, _tables: &[String]) -> Vec<String> {
        vec!["PRAGMA wal_checkpoint(TRUNCATE)".into(), "ANALYZE".into()]
    }
    fn for_update(&self) -> &'static str {
        ""
    }
    fn session_isolation(&self, _level: &str) -> Option<String> {
        None
    }
    fn only_isolation(&self) -> Option<&'static str> {
        Some("SERIALIZABLE")
    }
    /// A writer waits for the database lock, not a row's.
    fn lock_wait_timeout(&self, ms: u64) -> Option<String> {
        Some(format!("PRAGMA busy_timeout = {ms}"))
    }
}

/// Reads every row of `stmt` (bound already) into `out`, emptied first; a
/// statement without result columns (DML, BEGIN) says how many rows it
/// changed, as [`Conn::execute`] does.
fn fetch_rows(stmt: &mut Statement<'_>, out: &mut Rows, conn: &Connection) -> DbResult<Outcome> {
    out.reset(0);
    if stmt.column_count() == 0 {
        out.begin_set(0);
        let before = conn.total_changes();
        stmt.raw_execute().map_err(map_err)?;
        return Ok(Outcome::Affected(conn.total_changes() - before));
    }
    fetch_set(stmt, out)
}

/// Reads every row of `stmt` (bound already) into the next result set of
/// `out`, with the columns' names.
fn fetch_set(stmt: &mut Statement<'_>, out: &mut Rows) -> DbResult<Outcome> {
    let width = stmt.column_count();
    out.begin_set(width);
    for i in 0..width {
        out.push_name(stmt.column_name(i).map_err(map_err)?.as_bytes());
    }
    let mut rows = stmt.raw_query();
    let mut n = 0u64;
    while let Some(row) = rows.next().map_err(map_err)? {
        for i in 0..width {
            match row.get_ref(i).map_err(map_err)? {
                ValueRef::Null => out.push(None),
                ValueRef::Integer(v) => out.push_display(v),
                ValueRef::Real(v) => out.push_display(v),
                ValueRef::Text(t) | ValueRef::Blob(t) => out.push(Some(t)),
            }
        }
        n += 1;
    }
    Ok(Outcome::Rows(n))
}

enum Slot {
    /// A prepared statement and whether it can change rows (BEGIN/COMMIT
    /// count as read-only in SQLite, which is what we want: they are "other").
    Prepared {
        stmt: Statement<'static>,
        writes: bool,
        has_rows: bool,
    },
    Text(String),
}

/// A connection and the statements prepared on it.
///
/// The statements borrow the boxed connection; `stmts` is declared first so
/// it is dropped before `conn`, and the box keeps the connection's address
/// fixed, so the borrow stays valid for the life of this struct.
pub struct SqliteConn {
    /// On the list a stop cancels ([`crate::engine::inflight`]): its
    /// statement is interrupted (`sqlite3_interrupt`).
    _registered: crate::engine::inflight::Registered,
    stmts: Vec<Slot>,
    text: String,
    conn: Box<Connection>,
}

// SAFETY: the connection and every statement prepared on it move between
// threads together and are only ever used by the thread that owns them.
unsafe impl Send for SqliteConn {}

/// SQLite's result codes, one table: what the runner does on each and what
/// it means. The generic SQLITE_ERROR (a syntax error, an unknown name) has
/// only its message to tell, and SQLite's words are read for it here.
fn of(f: &rusqlite::ffi::Error, message: &str) -> (ErrorClass, Meaning) {
    // Extended codes of SQLITE_CONSTRAINT.
    const UNIQUE: std::ffi::c_int = 2067;
    const PRIMARY_KEY: std::ffi::c_int = 1555;
    match f.code {
        ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
            (ErrorClass::Retry, Meaning::LockWait)
        }
        ErrorCode::ConstraintViolation
            if f.extended_code == UNIQUE || f.extended_code == PRIMARY_KEY =>
        {
            (ErrorClass::Fatal, Meaning::DuplicateKey)
        }
        ErrorCode::Unknown => (ErrorClass::Fatal, of_generic(message)),
        _ => (ErrorClass::Fatal, Meaning::Other),
    }
}

/// What SQLITE_ERROR's message says.
fn of_generic(message: &str) -> Meaning {
    if message.contains("syntax error") || message.starts_with("incomplete input") {
        Meaning::Syntax
    } else if message.starts_with("no such ") {
        Meaning::Unknown
    } else {
        Meaning::Other
    }
}

fn map_err(e: rusqlite::Error) -> DbError {
    match &e {
        rusqlite::Error::SqliteFailure(f, msg) => {
            let message = msg.clone().unwrap_or_else(|| f.to_string());
            let (class, meaning) = of(f, &message);
            DbError {
                code: Some(format!("{:?}", f.code)),
                ..DbError::new(class, meaning, message)
            }
        }
        // A statement SQLite could not parse, with the token it stopped at.
        rusqlite::Error::SqlInputError { error, msg, .. } => {
            let (class, meaning) = of(error, msg);
            DbError::new(class, meaning, e.to_string())
        }
        _ => DbError::fatal(e.to_string()),
    }
}

// Inlined into `execute`, the per-statement path: as a call, its entry, exit
// and result cost about 25 instructions per point query (callgrind).
#[inline(always)]
fn run(
    stmt: &mut Statement<'_>,
    writes: bool,
    has_rows: bool,
    conn: &Connection,
) -> DbResult<Outcome> {
    if has_rows {
        let mut rows = stmt.raw_query();
        let mut n = 0u64;
        while let Some(row) = rows.next().map_err(map_err)? {
            // Touch the first column as a client reading the result would.
            let _ = row.get_ref(0).map_err(map_err)?;
            n += 1;
        }
        Ok(Outcome::Rows(n))
    } else {
        // The rows this statement changed: `changes()` alone would repeat
        // the last INSERT, UPDATE or DELETE's count after a BEGIN
        // IMMEDIATE, which writes nothing and is not read-only.
        let before = if writes { conn.total_changes() } else { 0 };
        stmt.raw_execute().map_err(map_err)?;
        let changed = if writes {
            conn.total_changes() - before
        } else {
            0
        };
        Ok(Outcome::Affected(changed))
    }
}

impl Conn for SqliteConn {
    fn prepare(&mut self, sql: &str, mode: PsMode) -> DbResult<StmtId> {
        let slot = match mode {
            PsMode::Auto => {
                let stmt = self.conn.prepare(sql).map_err(map_err)?;
                let writes = !stmt.readonly();
                let has_rows = stmt.column_count() > 0;
                // SAFETY: see the struct comment; the statement never outlives `conn`.
                let stmt: Statement<'static> = unsafe { std::mem::transmute(stmt) };
                Slot::Prepared {
                    stmt,
                    writes,
                    has_rows,
                }
            }
            PsMode::Disable => Slot::Text(sql.to_string()),
        };
        self.stmts.push(slot);
        Ok(StmtId(self.stmts.len() as u32 - 1))
    }

    fn execute(&mut self, id: StmtId, params: &[Param<'_>]) -> DbResult<Outcome> {
        let slot = self
            .stmts
            .get_mut(id.0 as usize)
            .ok_or_else(|| DbError::fatal(format!("no prepared statement {}", id.0)))?;
        match slot {
            Slot::Prepared {
                stmt,
                writes,
                has_rows,
            } => {
                for (i, p) in params.iter().enumerate() {
                    match *p {
                        Param::Int(v) => stmt.raw_bind_parameter(i + 1, v),
                        Param::Text(s) => stmt.raw_bind_parameter(i + 1, s),
                        Param::Null => stmt.raw_bind_parameter(i + 1, rusqlite::types::Null),
                    }
                    .map_err(map_err)?;
                }
                run(stmt, *writes, *has_rows, &self.conn)
            }
            Slot::Text(sql) => {
                let mut text = std::mem::take(&mut self.text);
                let r = inline_params(sql, params, &mut text).and_then(|_| self.query(&text));
                self.text = text;
                r
            }
        }
    }

    fn fetch(&mut self, id: StmtId, params: &[Param<'_>], out: &mut Rows) -> DbResult<Outcome> {
        let slot = self
            .stmts
            .get_mut(id.0 as usize)
            .ok_or_else(|| DbError::fatal(format!("no prepared statement {}", id.0)))?;
        match slot {
            Slot::Prepared { stmt, .. } => {
                for (i, p) in params.iter().enumerate() {
                    match *p {
                        Param::Int(v) => stmt.raw_bind_parameter(i + 1, v),
                        Param::Text(s) => stmt.raw_bind_parameter(i + 1, s),
                        Param::Null => stmt.raw_bind_parameter(i + 1, rusqlite::types::Null),
                    }
                    .map_err(map_err)?;
                }
                fetch_rows(stmt, out, &self.conn)
            }
            Slot::Text(sql) => {
                let mut text = std::mem::take(&mut self.text);
                let r = inline_params(sql, params, &mut text).and_then(|_| {
                    let mut stmt = self.conn.prepare(&text).map_err(map_err)?;
                    fetch_rows(&mut stmt, out, &self.conn)
                });
                self.text = text;
                r
            }
        }
    }

    /// Runs every statement of `sql` in turn (`a; b`, as the servers'
    /// text protocols do); the outcome is the last one's.
    fn query(&mut self, sql: &str) -> DbResult<Outcome> {
        use rusqlite::fallible_iterator::FallibleIterator as _;
        let mut batch = rusqlite::Batch::new(&self.conn, sql);
        let mut last = Outcome::Affected(0);
        while let Some(mut stmt) = batch.next().map_err(map_err)? {
            let (writes, has_rows) = (!stmt.readonly(), stmt.column_count() > 0);
            last = run(&mut stmt, writes, has_rows, &self.conn)?;
        }
        Ok(last)
    }

    fn query_scalar(&mut self, sql: &str) -> DbResult<Option<String>> {
        let mut stmt = self.conn.prepare(sql).map_err(map_err)?;
        let mut rows = stmt.query([]).map_err(map_err)?;
        match rows.next().map_err(map_err)? {
            None => Ok(None),
            Some(row) => Ok(match row.get_ref(0).map_err(map_err)? {
                ValueRef::Null => None,
                ValueRef::Integer(i) => Some(i.to_string()),
                ValueRef::Real(f) => Some(f.to_string()),
                ValueRef::Text(t) | ValueRef::Blob(t) => {
                    Some(String::from_utf8_lossy(t).into_owned())
                }
            }),
        }
    }

    /// [`Conn::query`] keeping the rows of every statement that returns
    /// some, one result set each.
    fn query_into(&mut self, sql: &str, out: &mut Rows) -> DbResult<Outcome> {
        use rusqlite::fallible_iterator::FallibleIterator as _;
        out.reset(0);
        let mut batch = rusqlite::Batch::new(&self.conn, sql);
        let mut last = Outcome::Affected(0);
        while let Some(mut stmt) = batch.next().map_err(map_err)? {
            last = if stmt.column_count() > 0 {
                fetch_set(&mut stmt, out)?
            } else {
                let writes = !stmt.readonly();
                run(&mut stmt, writes, false, &self.conn)?
            };
        }
        Ok(last)
    }

    fn in_transaction(&self) -> Option<bool> {
        Some(!self.conn.is_autocommit())
    }

    fn column_names(&mut self, sql: &str) -> Option<DbResult<Vec<String>>> {
        Some(
            self.conn
                .prepare(sql)
                .map(|s| s.column_names().map(str::to_string).collect())
                .map_err(map_err),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_tables_are_clustered_and_upserts_count() {
        use crate::engine::SetTo;
        use crate::engine::schema::fixtures;
        let t = fixtures::keyed("kv");
        let d = SqliteDialect;
        let mut c = mem();
        for sql in d.create_keyed_table(&t) {
            assert!(sql.ends_with(" WITHOUT ROWID"), "{sql}");
            c.query(&sql).unwrap();
        }
        c.query(&d.create_keyed_index(&t, &t.indexes[0])).unwrap();
        let ins = c.prepare(&d.insert_ignore(&t, 1), PsMode::Auto).unwrap();
        let row = [Param::Int(1), Param::Int(2), Param::Int(3)];
        assert_eq!(c.execute(ins, &row).unwrap(), Outcome::Affected(1));
        assert_eq!(c.execute(ins, &row).unwrap(), Outcome::Affected(0));
        let up = d.upsert(&t, 1, &[("n", SetTo::Add(10))]);
        let up = c.prepare(&up, PsMode::Auto).unwrap();
        c.execute(up, &row).unwrap();
        c.execute(up, &[Param::Int(5), Param::Int(6), Param::Int(7)])
            .unwrap();
        assert_eq!(
            c.query_scalar("SELECT group_concat(n) FROM (SELECT n FROM kv ORDER BY a)")
                .unwrap()
                .as_deref(),
            Some("13,7")
        );
    }

    #[test]
    fn offers_the_sql_face_only() {
        let d = SqliteDriver::new(Path::new("/nonexistent/x.db"), vec![]);
        let engine: &dyn Driver = &d;
        assert!(engine.sql().is_some());
        assert!(engine.kv().is_none());
        let e = engine.require_kv().err().expect("no key-value face");
        assert!(
            e.message
                .contains("engine sqlite offers no key-value access"),
            "{e}"
        );
    }

    fn mem() -> Box<dyn Conn> {
        let dir = tempfile::tempdir().unwrap();
        let d = SqliteDriver::new(&dir.path().join("t.db"), vec![]);
        let c = d.connect().unwrap();
        std::mem::forget(dir);
        c
    }

    #[test]
    fn counts_reads_writes_and_other() {
        let mut c = mem();
        c.query("CREATE TABLE t (id INTEGER PRIMARY KEY, v INT)")
            .unwrap();
        let ins = c
            .prepare("INSERT INTO t (v) VALUES (?)", PsMode::Auto)
            .unwrap();
        assert_eq!(
            c.execute(ins, &[Param::Int(5)]).unwrap(),
            Outcome::Affected(1)
        );
        let begin = c.prepare("BEGIN", PsMode::Auto).unwrap();
        let commit = c.prepare("COMMIT", PsMode::Auto).unwrap();
        // COMMIT right after a write must not report the write's row count.
        assert_eq!(c.execute(begin, &[]).unwrap(), Outcome::Affected(0));
        assert_eq!(
            c.execute(ins, &[Param::Int(6)]).unwrap(),
            Outcome::Affected(1)
        );
        assert_eq!(c.execute(commit, &[]).unwrap(), Outcome::Affected(0));
        let del = c
            .prepare("DELETE FROM t WHERE id=?", PsMode::Disable)
            .unwrap();
        assert_eq!(
            c.execute(del, &[Param::Int(99)]).unwrap(),
            Outcome::Affected(0)
        );
        let sel = c
            .prepare("SELECT v FROM t WHERE id IN (?, ?)", PsMode::Auto)
            .unwrap();
        assert_eq!(
            c.execute(sel, &[Param::Int(1), Param::Int(2)]).unwrap(),
            Outcome::Rows(2)
        );
        assert_eq!(
            c.query_scalar("SELECT count(*) FROM t").unwrap().as_deref(),
            Some("2")
        );
    }

    #[test]
    fn fetch_returns_the_values_in_either_mode() {
        let mut c = mem();
        c.query("CREATE TABLE t (a INT, b TEXT, m DECIMAL(6,2))")
            .unwrap();
        c.query("INSERT INTO t VALUES (1, 'x', 2.5), (2, NULL, 3)")
            .unwrap();
        let mut rows = Rows::default();
        for mode in [PsMode::Auto, PsMode::Disable] {
            let s = c
                .prepare("SELECT a, b, m FROM t WHERE a >= ? ORDER BY a", mode)
                .unwrap();
            assert_eq!(
                c.fetch(s, &[Param::Int(1)], &mut rows).unwrap(),
                Outcome::Rows(2)
            );
            assert_eq!(rows.len(), 2);
            assert_eq!(rows.get(0, 1), Some("x"));
            assert_eq!(rows.get(1, 1), None);
            assert_eq!(rows.num(0, 2).unwrap(), 2.5);
            assert_eq!(rows.int(1, 0).unwrap(), 2);
        }
    }

    #[test]
    fn fetch_of_a_statement_without_rows_says_what_it_changed_as_execute_does() {
        let mut c = mem();
        c.query("CREATE TABLE t (a INT)").unwrap();
        let mut rows = Rows::default();
        for mode in [PsMode::Auto, PsMode::Disable] {
            let ins = c.prepare("INSERT INTO t VALUES (?), (?)", mode).unwrap();
            assert_eq!(
                c.fetch(ins, &[Param::Int(1), Param::Int(2)], &mut rows)
                    .unwrap(),
                Outcome::Affected(2)
            );
            let begin = c.prepare("BEGIN IMMEDIATE", mode).unwrap();
            assert_eq!(
                c.fetch(begin, &[], &mut rows).unwrap(),
                Outcome::Affected(0)
            );
            assert_eq!(c.execute(begin, &[]).ok(), None, "already in a transaction");
            c.query("COMMIT").unwrap();
            assert_eq!(c.execute(begin, &[]).unwrap(), Outcome::Affected(0));
            c.query("COMMIT").unwrap();
        }
        assert_eq!(
            c.query_into("DELETE FROM t", &mut rows).unwrap(),
            Outcome::Affected(4)
        );
    }

    #[test]
    fn errors_are_classified() {
        let mut c = mem();
        let e = c.query("SELECT * FROM missing").unwrap_err();
        assert_eq!(e.class, ErrorClass::Fatal);
        assert!(e.message.contains("missing"), "{e}");
    }
}
