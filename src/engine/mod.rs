//! How workloads reach an engine: one module per engine behind one trait.
//!
//! A [`Driver`] is the engine-neutral part: identity, version, settings,
//! status counters, size on disk, capabilities, and the error classes of
//! [`DbError`]. Data goes in and out through one of its faces:
//!
//! - SQL ([`SqlAccess`]): a [`Conn`] prepares statements once and executes
//!   them many times with borrowed parameters, so the per-query path
//!   allocates nothing; the [`Dialect`] renders the SQL that differs, from
//!   tables declared as data ([`schema`]).
//! - key-value ([`KvAccess`], [`kv`]): get, put, batches, ordered scans.
//!
//! Workloads ask for the face they need ([`Driver::require_sql`]) and for
//! [`Caps`], never for an engine's name.
//!
//! Engine kinds (sqlite, mysql/mariadb, postgres, rocksdb) each declare themselves
//! in their folder and are found through [`registry`]: names, URL schemes,
//! default ports, throwaway-server recipes, prebuilt versions and the
//! options they own. A `--target` is parsed once ([`target::Target`], with
//! [`url::DbUrl`]) and shown only through [`target::redact`].
//! This layer names no suite: tables are declared by the suites.

pub(crate) mod deadline;
pub mod inflight;

/// How long a statement may go without a word from the server by default
/// (an index build sends nothing until it is done; `--stmt-timeout` raises
/// it for tables whose index builds take longer).
pub const DEFAULT_STATEMENT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// How long a wire client waits on a server: for a statement's reply (the
/// statement timeout, `--stmt-timeout`) and for the rest of a message once
/// it has begun (`--message-timeout`, see [`deadline::MidMessage`]). Given
/// to each driver when it is made: no process-wide setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    pub statement: std::time::Duration,
    pub message: std::time::Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            statement: DEFAULT_STATEMENT_TIMEOUT,
            message: DEFAULT_MESSAGE_TIMEOUT,
        }
    }
}

/// Why a statement failed when the server said nothing for the statement
/// timeout (`limit`): the reason stored with the test.
pub(crate) fn statement_timeout_message(limit: std::time::Duration) -> String {
    format!(
        "the server sent nothing for {} s, the statement timeout; the connection was closed (a statement that needs longer needs a larger --stmt-timeout)",
        limit.as_secs_f64()
    )
}

/// How long a wire client waits for the rest of a server message once it has
/// begun, whatever the statement timeout (see [`deadline::MidMessage`]).
pub const DEFAULT_MESSAGE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

pub mod capacity;
pub mod error;
pub mod fetch;
pub mod install;
pub mod kind;
pub mod kv;
pub mod mysql;
pub mod postgres;
pub mod registry;
pub mod rocksdb;
pub mod schema;
pub mod secret;
pub mod server;
pub mod sqlite;
pub mod target;
pub mod tls;
pub mod unpack;
pub mod url;

use std::fmt;

pub use error::{DbError, DbResult, ErrorClass, Meaning, SqlState};
pub use kv::{KvAccess, KvConn};
pub use schema::{Index, KeyedTable, SetTo, Table};

/// One bound parameter, borrowed from the worker's reusable buffers.
#[derive(Clone, Copy, Debug)]
pub enum Param<'a> {
    Int(i64),
    Text(&'a str),
    /// SQL NULL (pgbench binds an undefined variable so).
    Null,
}

/// What one execution returned, in the terms sysbench counts statements by:
/// a result set is a read; otherwise the affected-row count decides between
/// write (> 0) and "other" (0: BEGIN, COMMIT, DML that changed nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Rows(u64),
    Affected(u64),
}

/// Handle to a statement prepared on one connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StmtId(pub u32);

/// How a statement is sent: server-side prepared (default), or as plain text
/// with the parameters written into the SQL by the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PsMode {
    #[default]
    Auto,
    Disable,
}

/// The way data goes in and out of an engine: what a suite needs
/// ([`crate::suite::Workload::FACE`]) and what an engine kind offers
/// ([`kind::EngineKind::face`]), compared before anything starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Face {
    /// Statements through [`SqlAccess`].
    Sql,
    /// Keys and values through [`KvAccess`].
    Kv,
}

impl Face {
    /// How messages name it (`SQL access`).
    pub fn title(self) -> &'static str {
        match self {
            Face::Sql => "SQL access",
            Face::Kv => "key-value access",
        }
    }
}

/// Where a driver's calls spend their time ([`Driver::calls`]): what decides
/// whether a step's connections may share a client thread.
#[derive(Clone, Copy, Debug)]
pub enum Calls {
    /// On the client's own CPU: an engine inside rqps (SQLite, RocksDB).
    /// Its calls never wait on a socket, so tasks sharing a thread would
    /// only queue them: each connection gets a thread of its own.
    InProcess,
    /// Waiting on sockets through the client core ([`crate::evloop`]): many
    /// connections may run as tasks of one client thread.
    OnSockets(OnSockets),
}

/// An engine driver's word that its calls wait on sockets through the
/// client core and do nothing else that blocks the thread. Only engine
/// code makes one ([`OnSockets::wire`]); the harness needs one to put a
/// step's workers in tasks, so a driver whose calls take the client's CPU
/// can never be handed to the core.
#[derive(Clone, Copy, Debug)]
pub struct OnSockets(());

impl OnSockets {
    /// For a wire client's driver, whose reads and writes go through
    /// [`crate::evloop`].
    pub(in crate::engine) fn wire() -> OnSockets {
        OnSockets(())
    }

    /// For the harness's own tests, whose workers only sleep through the core.
    #[cfg(test)]
    pub(crate) fn for_tests() -> OnSockets {
        OnSockets(())
    }
}

/// What an engine can do, so workloads can choose without naming it.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Caps {
    pub prepared_statements: bool,
    pub multi_row_insert: bool,
    /// Only one writer at a time for the whole database (SQLite): loads run
    /// one table after another instead of in parallel.
    pub single_writer: bool,
    /// Most bound parameters one statement may carry.
    pub max_params: usize,
    /// The connection can pipeline statements ([`Conn::pipeline_start`]):
    /// send several without waiting for each one's answer, and read the
    /// answers at a sync point.
    pub pipelining: bool,
}

impl Caps {
    /// An engine without SQL (a key-value store): no statement of any kind,
    /// so none of the statement capabilities.
    pub const KEY_VALUE: Caps = Caps {
        prepared_statements: false,
        multi_row_insert: false,
        single_writer: false,
        max_params: 0,
        pipelining: false,
    };
}

/// The SQL that differs between engines. Workloads declare their tables as
/// data ([`schema`]) and build statements from these pieces; everything
/// else is standard SQL with `?` placeholders (drivers that number
/// placeholders rewrite them when preparing). No method names a workload.
pub trait Dialect: Send + Sync {
    /// Statements that create `table` (without its secondary indexes).
    fn create_table(&self, table: &Table) -> Vec<String>;
    /// Start of the insert that lets the engine assign the id: everything up
    /// to and including `VALUES (`; the caller appends the values of
    /// [`Table::value_columns`] and `)`.
    fn insert_auto_id_prefix(&self, table: &Table) -> String {
        format!(
            "INSERT INTO {} ({}) VALUES (",
            table.name,
            table.value_columns()
        )
    }
    /// Statement that starts a transaction that only reads.
    fn begin_read(&self) -> &'static str {
        "BEGIN"
    }
    /// Statement that starts a transaction that writes. (SQLite takes the
    /// write lock up front so two writers cannot deadlock on upgrade.)
    fn begin_write(&self) -> &'static str {
        "BEGIN"
    }
    fn commit(&self) -> &'static str {
        "COMMIT"
    }
    fn rollback(&self) -> &'static str {
        "ROLLBACK"
    }
    /// Drop a table if it exists.
    fn drop_table(&self, table: &Table) -> String {
        format!("DROP TABLE IF EXISTS {}", table.name)
    }
    /// Statements that quiet the engine after heavy writes (reference §1.6).
    fn settle(&self, tables: &[String]) -> Vec<String>;
    /// Query whose single value is the database's size in bytes as the engine counts it.
    fn db_size_sql(&self) -> Option<&'static str> {
        None
    }
    /// Query whose single value is the server's data directory.
    fn data_path_sql(&self) -> Option<&'static str> {
        None
    }
    /// A SQL expression turning one `?` bound to Unix seconds into the
    /// engine's date-time type.
    fn datetime_from_epoch(&self) -> &'static str {
        "to_timestamp(?)"
    }
    /// The statement that creates one secondary index of `table` on its own.
    fn create_index(&self, table: &Table, index: &Index) -> String {
        format!(
            "CREATE INDEX {} ON {} ({})",
            index.name,
            table.name,
            index.column_list()
        )
    }
    /// Statements that create every secondary index of `table`, as the
    /// engine builds them best. Default: one `CREATE INDEX` each.
    fn create_indexes(&self, table: &Table) -> Vec<String> {
        table
            .indexes
            .iter()
            .map(|i| self.create_index(table, i))
            .collect()
    }
    /// Statements that create `table`, keyed by its own columns (without
    /// its secondary indexes). Default: the standard type names, NOT NULL
    /// before DEFAULT, numbers bare.
    fn create_keyed_table(&self, table: &KeyedTable) -> Vec<String> {
        vec![schema::keyed_table_sql(
            table,
            &schema::standard_type,
            false,
            false,
            "",
        )]
    }
    /// The statement that creates one secondary index of a keyed table.
    fn create_keyed_index(&self, table: &KeyedTable, index: &Index) -> String {
        format!(
            "CREATE INDEX {} ON {} ({})",
            index.name,
            table.name,
            index.column_list()
        )
    }
    /// An insert of `rows` whole rows of `table` (every column, in order)
    /// that skips each row whose key is already present: the affected-row
    /// count is the rows inserted. Default: `ON CONFLICT DO NOTHING`.
    fn insert_ignore(&self, table: &KeyedTable, rows: usize) -> String {
        format!(
            "INSERT INTO {} ({}) VALUES {} ON CONFLICT DO NOTHING",
            table.name,
            table.column_list(),
            table.placeholders(rows)
        )
    }
    /// An insert of `rows` whole rows of `table` that, for each row whose
    /// key is already present, sets the columns of `set` in the existing row
    /// instead. Default: `ON CONFLICT (key) DO UPDATE SET`.
    fn upsert(&self, table: &KeyedTable, rows: usize, set: &[(&str, SetTo)]) -> String {
        let sets: Vec<String> = set
            .iter()
            .map(|(c, v)| match v {
                SetTo::New => format!("{c} = excluded.{c}"),
                SetTo::Add(n) => format!("{c} = {}.{c} + {n}", table.name),
            })
            .collect();
        format!(
            "INSERT INTO {} ({}) VALUES {} ON CONFLICT ({}) DO UPDATE SET {}",
            table.name,
            table.column_list(),
            table.placeholders(rows),
            table.key_list(),
            sets.join(", ")
        )
    }
    /// What follows FROM in a query that must read `table` through its
    /// index `index`. Default: the table alone (the planner chooses).
    fn table_with_index(&self, table: &Table, _index: &str) -> String {
        table.name.clone()
    }
    /// Deletes the `n` rows with the smallest id at or above the one `?`
    /// (the left edge of a queue). Default: through a sub-select.
    fn delete_oldest(&self, table: &Table, n: usize) -> String {
        let (t, key) = (&table.name, &table.id.name);
        format!(
            "DELETE FROM {t} WHERE {key} IN (SELECT {key} FROM {t} \
             WHERE {key} >= ? ORDER BY {key} ASC LIMIT {n})"
        )
    }
    /// Query whose single value is the smallest id of `table`.
    fn min_key_sql(&self, table: &Table) -> String {
        format!("SELECT min({}) FROM {}", table.id.name, table.name)
    }
    /// What ends a SELECT that locks the rows it reads until the transaction
    /// ends; empty where the engine locks otherwise (SQLite: the write
    /// transaction holds the whole database).
    fn for_update(&self) -> &'static str {
        " FOR UPDATE"
    }
    /// The statement that sets the isolation level of the session's
    /// transactions to `level` (SQL's names: `READ COMMITTED`, `REPEATABLE
    /// READ`, `SERIALIZABLE`, `READ UNCOMMITTED`); `None` where the engine
    /// has only one level, named by [`Dialect::only_isolation`].
    fn session_isolation(&self, level: &str) -> Option<String> {
        Some(format!("SET SESSION TRANSACTION ISOLATION LEVEL {level}"))
    }
    /// The one isolation level of an engine that has no choice.
    fn only_isolation(&self) -> Option<&'static str> {
        None
    }
    /// Queries whose single value is the session's isolation level, to try
    /// in order (engine versions name the variable differently).
    fn isolation_sql(&self) -> &'static [&'static str] {
        &[]
    }
    /// The statement that makes this session wait at most `ms`
    /// milliseconds for a row lock before its statement fails; `None`
    /// where the engine has no such setting.
    fn lock_wait_timeout(&self, _ms: u64) -> Option<String> {
        None
    }
    /// The name client tools give the driver of this engine's protocol
    /// (`mysql`, `pgsql`: the spelling of sysbench's `--db-driver`, which
    /// scripts branch on); `None` where no such tool speaks to it.
    fn client_driver_name(&self) -> Option<&'static str> {
        None
    }
    /// Query whose single value is the largest id of `table`.
    fn max_key_sql(&self, table: &Table) -> String {
        format!("SELECT max({}) FROM {}", table.id.name, table.name)
    }
}

/// The values of the rows a statement returned, as text (`None` for NULL),
/// kept in one buffer that a worker reuses, so fetching allocates only while
/// the buffer grows. Filled by [`Conn::fetch`].
///
/// Several statements sent as one (`a; b`) give several result sets: a
/// driver that tells them apart starts each with [`Rows::begin_set`], and
/// may name its columns ([`Rows::push_name`]). [`Rows::len`], [`Rows::width`]
/// and [`Rows::get`] read the last set; [`Rows::set`] any of them.
#[derive(Clone, Debug, Default)]
pub struct Rows {
    width: usize,
    text: String,
    cells: Vec<Option<(u32, u32)>>,
    /// The current set: its first cell, its rows of no column (PostgreSQL's
    /// `SELECT`), and its first name in `names`.
    start: usize,
    empty_rows: usize,
    names_start: usize,
    /// Whether the current set was begun by [`Rows::begin_set`].
    begun: bool,
    /// The sets before the current one.
    done: Vec<SetMark>,
    /// Column names (ranges of `text`), set after set.
    names: Vec<(u32, u32)>,
}

/// Where one finished result set lies in a [`Rows`].
#[derive(Clone, Copy, Debug)]
struct SetMark {
    start: usize,
    end: usize,
    width: usize,
    empty_rows: usize,
    names: (usize, usize),
}

/// One result set of a [`Rows`].
#[derive(Clone, Copy, Debug)]
pub struct RowSet<'a> {
    rows: &'a Rows,
    mark: SetMark,
}

impl RowSet<'_> {
    /// Rows in the set.
    pub fn len(&self) -> usize {
        let m = &self.mark;
        (m.end - m.start)
            .checked_div(m.width)
            .unwrap_or(m.empty_rows)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Columns per row.
    pub fn width(&self) -> usize {
        self.mark.width
    }
    /// The value at `row`, `col` as text; `None` for NULL or out of range.
    pub fn get(&self, row: usize, col: usize) -> Option<&str> {
        let m = &self.mark;
        if col >= m.width {
            return None;
        }
        let i = m.start + row * m.width + col;
        if i >= m.end {
            return None;
        }
        let (a, b) = (*self.rows.cells.get(i)?)?;
        Some(&self.rows.text[a as usize..b as usize])
    }
    /// The name of column `col`, where the driver gave the names.
    pub fn name(&self, col: usize) -> Option<&str> {
        let (a, b) = self.mark.names;
        if b - a != self.mark.width {
            return None;
        }
        let (x, y) = *self.rows.names.get(a + col)?;
        Some(&self.rows.text[x as usize..y as usize])
    }
}

impl Rows {
    /// Empties the buffer for a result of `width` columns.
    pub fn reset(&mut self, width: usize) {
        self.width = width;
        self.text.clear();
        self.cells.clear();
        self.start = 0;
        self.empty_rows = 0;
        self.names_start = 0;
        self.begun = false;
        self.done.clear();
        self.names.clear();
    }
    /// Starts the next result set, of `width` columns (the first one, after
    /// [`Rows::reset`], is this call's).
    pub fn begin_set(&mut self, width: usize) {
        if self.begun {
            self.done.push(self.mark());
        }
        self.begun = true;
        self.width = width;
        self.start = self.cells.len();
        self.empty_rows = 0;
        self.names_start = self.names.len();
    }
    /// Names the next column of the current set.
    pub fn push_name(&mut self, name: &[u8]) {
        let start = self.text.len() as u32;
        self.text.push_str(&String::from_utf8_lossy(name));
        self.names.push((start, self.text.len() as u32));
    }
    /// Counts a row of no column.
    pub fn push_empty_row(&mut self) {
        self.empty_rows += 1;
    }
    fn mark(&self) -> SetMark {
        SetMark {
            start: self.start,
            end: self.cells.len(),
            width: self.width,
            empty_rows: self.empty_rows,
            names: (self.names_start, self.names.len()),
        }
    }
    /// How many result sets it holds (at least the current one).
    pub fn sets(&self) -> usize {
        self.done.len() + 1
    }
    /// Result set `i` (the last is the current one).
    pub fn set(&self, i: usize) -> RowSet<'_> {
        RowSet {
            rows: self,
            mark: self.done.get(i).copied().unwrap_or_else(|| self.mark()),
        }
    }
    /// Appends the next value (row by row, column by column).
    pub fn push(&mut self, v: Option<&[u8]>) {
        match v {
            None => self.cells.push(None),
            Some(b) => {
                let start = self.text.len() as u32;
                match std::str::from_utf8(b) {
                    Ok(t) => self.text.push_str(t),
                    Err(_) => self.text.push_str(&String::from_utf8_lossy(b)),
                }
                self.cells.push(Some((start, self.text.len() as u32)));
            }
        }
    }
    /// Appends the next value written by `Display` (numbers a driver decoded).
    pub fn push_display(&mut self, v: impl fmt::Display) {
        use std::fmt::Write;
        let start = self.text.len() as u32;
        let _ = write!(self.text, "{v}");
        self.cells.push(Some((start, self.text.len() as u32)));
    }
    /// Rows held (of the last result set).
    pub fn len(&self) -> usize {
        (self.cells.len() - self.start)
            .checked_div(self.width)
            .unwrap_or(self.empty_rows)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Columns per row.
    pub fn width(&self) -> usize {
        self.width
    }
    /// The value at `row`, `col` as text; `None` for NULL or out of range.
    pub fn get(&self, row: usize, col: usize) -> Option<&str> {
        if col >= self.width {
            return None;
        }
        let (a, b) = (*self.cells.get(self.start + row * self.width + col)?)?;
        Some(&self.text[a as usize..b as usize])
    }
    /// The value at `row`, `col` as an integer (an error names what was there).
    pub fn int(&self, row: usize, col: usize) -> DbResult<i64> {
        let v = self.get(row, col);
        v.and_then(|v| v.trim().parse().ok()).ok_or_else(|| {
            DbError::fatal(format!(
                "expected an integer in row {row}, column {col}, got {v:?}"
            ))
        })
    }
    /// The value at `row`, `col` as a number (decimals, floating point).
    pub fn num(&self, row: usize, col: usize) -> DbResult<f64> {
        let v = self.get(row, col);
        v.and_then(|v| v.trim().parse().ok()).ok_or_else(|| {
            DbError::fatal(format!(
                "expected a number in row {row}, column {col}, got {v:?}"
            ))
        })
    }
}

/// A connection. One per worker thread.
pub trait Conn: Send {
    /// Prepares `sql` (with `?` placeholders) for repeated execution. With
    /// [`PsMode::Disable`] the driver keeps the text and sends it with the
    /// parameters written in on every execution.
    fn prepare(&mut self, sql: &str, mode: PsMode) -> DbResult<StmtId>;
    /// Executes a prepared statement, reads every row it returns, and says
    /// what it did.
    fn execute(&mut self, stmt: StmtId, params: &[Param<'_>]) -> DbResult<Outcome>;
    /// Executes a prepared statement and keeps the values of every row it
    /// returns in `rows` (emptied first), for workloads whose next statement
    /// depends on what the last one read.
    fn fetch(
        &mut self,
        _stmt: StmtId,
        _params: &[Param<'_>],
        _rows: &mut Rows,
    ) -> DbResult<Outcome> {
        Err(DbError::fatal(
            "this engine's driver cannot return the values of rows",
        ))
    }
    /// Runs one statement given as text, reading every row.
    fn query(&mut self, sql: &str) -> DbResult<Outcome>;
    /// Runs one statement and returns the first column of the first row as
    /// text, if any (versions, sizes, settings).
    fn query_scalar(&mut self, sql: &str) -> DbResult<Option<String>>;
    /// Runs one statement given as text and keeps the values of every row
    /// it returns in `rows` (emptied first): [`Conn::fetch`] for statements
    /// whose text changes on every execution.
    fn query_into(&mut self, _sql: &str, _rows: &mut Rows) -> DbResult<Outcome> {
        Err(DbError::fatal(
            "this engine's driver cannot return the values of rows",
        ))
    }
    /// Whether the session is inside a transaction that a statement opened
    /// and none ended (`BEGIN` without `COMMIT`), as the engine says; `None`
    /// where the driver cannot tell.
    fn in_transaction(&self) -> Option<bool> {
        None
    }
    /// Runs `sql` (with `?` placeholders) once with `params`, the server
    /// parsing it anew (PostgreSQL's extended protocol with the unnamed
    /// statement, as libpq's `PQexecParams`); with `rows`, keeps the
    /// values of the rows it returns. `None` where the engine's protocol
    /// has no such path: callers prepare the statement instead.
    fn execute_unprepared(
        &mut self,
        _sql: &str,
        _params: &[Param<'_>],
        _rows: Option<&mut Rows>,
    ) -> Option<DbResult<Outcome>> {
        None
    }
    /// Runs `sql` once and returns the names of the columns of its result
    /// as the engine describes them (`rqps compat` compares them); `None`
    /// where the engine's client does not read them.
    fn column_names(&mut self, _sql: &str) -> Option<DbResult<Vec<String>>> {
        None
    }
    /// Enters pipeline mode: statements given to [`Conn::pipeline_queue`]
    /// are sent without waiting for their answers, which
    /// [`Conn::pipeline_end`] reads. Refused where the engine's protocol
    /// has no pipelining ([`Caps::pipelining`] is false).
    fn pipeline_start(&mut self) -> DbResult<()> {
        Err(DbError::fatal(
            "this engine's protocol cannot pipeline statements",
        ))
    }
    /// Queues `sql` (with `?` placeholders) with `params` in the pipeline.
    /// With `prepared`, the statement is the one prepared there (prepared
    /// now, before anything queued goes out, when it is `None`); without,
    /// the server parses it anew (the unnamed statement).
    fn pipeline_queue(
        &mut self,
        _sql: &str,
        _params: &[Param<'_>],
        _prepared: Option<&mut Option<StmtId>>,
    ) -> DbResult<()> {
        Err(DbError::fatal("not in pipeline mode"))
    }
    /// Queues a sync point: the statements queued since the last one end
    /// their implicit transaction there; the pipeline goes on.
    fn pipeline_sync(&mut self) -> DbResult<()> {
        Err(DbError::fatal("not in pipeline mode"))
    }
    /// Ends the pipeline: sends what is queued with a last sync point and
    /// reads every answer, handing each statement's outcome to `each` in
    /// order; the first error, once all is read (the statements after it,
    /// up to its sync point, were skipped by the engine).
    fn pipeline_end(&mut self, _each: &mut dyn FnMut(Outcome)) -> DbResult<()> {
        Err(DbError::fatal("not in pipeline mode"))
    }
    /// Leaves pipeline mode without sending what is queued (a command
    /// before the end failed).
    fn pipeline_discard(&mut self) {}
}

/// A target engine, whatever it speaks: who it is and what it reports
/// about itself. How data gets in and out is one of its faces, asked for
/// by the workload that needs it: [`Driver::sql`] (statements through
/// [`Conn`]) or [`Driver::kv`] (keys and values through [`KvConn`]). An
/// engine offers at least one.
pub trait Driver: Send + Sync {
    /// Short engine name for humans and results (`sqlite`, `mysql`, `postgres`).
    fn engine(&self) -> &'static str;
    fn caps(&self) -> Caps;
    /// Where its calls spend their time. Default: on the client's CPU (a
    /// thread per connection, always safe); the wire clients' drivers say
    /// [`Calls::OnSockets`].
    fn calls(&self) -> Calls {
        Calls::InProcess
    }
    /// Engine version string as the engine reports it.
    fn version(&self) -> DbResult<String>;
    /// Every server setting as (name, value) text, for the run's record.
    /// Engines without server settings return an empty list.
    fn settings(&self) -> DbResult<Vec<(String, String)>> {
        Ok(Vec::new())
    }
    /// What TLS the last connection negotiated (`None`: no TLS, or an
    /// engine without a network client). Runs store it: TLS changes the
    /// cost per query.
    fn tls(&self) -> Option<tls::TlsInfo> {
        None
    }
    /// The authentication method the last login used, as the server names
    /// it (`caching_sha2_password`); `None` where the engine does not say.
    /// Runs store it with the engine.
    fn auth(&self) -> Option<String> {
        None
    }
    /// Size of the database as the engine reports it, in bytes (`None`
    /// where unknown). Default: the dialect's size query, for SQL engines.
    fn db_size(&self) -> DbResult<Option<u64>> {
        let Some(db) = self.sql() else {
            return Ok(None);
        };
        let Some(sql) = db.dialect().db_size_sql() else {
            return Ok(None);
        };
        let v = db.connect()?.query_scalar(sql)?;
        Ok(v.and_then(|v| v.trim().parse::<f64>().ok())
            .map(|b| b as u64))
    }

    /// The engine's data directory or database file, when the engine says (it
    /// may be on another host: callers check that it exists here). Default:
    /// the dialect's data-path query, for SQL engines.
    fn data_path(&self) -> Option<std::path::PathBuf> {
        let db = self.sql()?;
        let sql = db.dialect().data_path_sql()?;
        let v = db.connect().ok()?.query_scalar(sql).ok()??;
        Some(std::path::PathBuf::from(v.trim()))
    }

    /// Server-wide activity counters as (name, value) text, to diff before
    /// and after a test. Engines without such counters return an empty list.
    fn status(&self) -> DbResult<Vec<(String, String)>> {
        Ok(Vec::new())
    }

    /// What the server allows this client to open now (connections,
    /// prepared statements), to check a plan's [`capacity::Need`] before
    /// anything loads. Empty for engines that limit neither.
    fn allowances(&self) -> DbResult<Vec<capacity::Allowance>> {
        Ok(Vec::new())
    }

    /// The SQL face, if the engine speaks SQL.
    fn sql(&self) -> Option<&dyn SqlAccess> {
        None
    }
    /// The key-value face, if the engine stores keys and values.
    fn kv(&self) -> Option<&dyn KvAccess> {
        None
    }
    /// The SQL face, or the error a workload that needs SQL reports.
    fn require_sql(&self) -> DbResult<&dyn SqlAccess> {
        self.sql().ok_or_else(|| {
            DbError::fatal(format!(
                "engine {} offers no SQL access: choose a SQL engine (sqlite, mysql, postgres) for this suite",
                self.engine()
            ))
        })
    }
    /// The key-value face, or the error a workload that needs it reports.
    fn require_kv(&self) -> DbResult<&dyn KvAccess> {
        self.kv().ok_or_else(|| {
            DbError::fatal(format!(
                "engine {} offers no key-value access: choose a key-value engine for this suite",
                self.engine()
            ))
        })
    }
}

/// The SQL face of an engine: connections that prepare and run statements,
/// and the dialect that writes the SQL that differs between engines. It
/// extends [`Driver`], so a workload holding it can still ask for the
/// engine's name and capabilities.
pub trait SqlAccess: Driver {
    fn connect(&self) -> DbResult<Box<dyn Conn>>;
    fn dialect(&self) -> &dyn Dialect;
}

/// Writes `sql` with its `?` placeholders replaced by `params` as SQL
/// literals into `out` (cleared first). Used by drivers in text mode.
pub fn inline_params(sql: &str, params: &[Param<'_>], out: &mut String) -> DbResult<()> {
    use std::fmt::Write;
    out.clear();
    let mut rest = sql;
    let mut next = params.iter();
    while let Some(pos) = rest.find('?') {
        out.push_str(&rest[..pos]);
        match next.next() {
            Some(Param::Int(v)) => {
                let _ = write!(out, "{v}");
            }
            Some(Param::Null) => out.push_str("NULL"),
            Some(Param::Text(s)) => {
                out.push('\'');
                for ch in s.chars() {
                    if ch == '\'' {
                        out.push('\'');
                    }
                    out.push(ch);
                }
                out.push('\'');
            }
            None => {
                return Err(DbError::fatal(format!(
                    "statement has more placeholders than parameters: {sql}"
                )));
            }
        }
        rest = &rest[pos + 1..];
    }
    out.push_str(rest);
    if next.next().is_some() {
        return Err(DbError::fatal(format!(
            "statement has fewer placeholders than parameters: {sql}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_params_writes_literals_and_escapes_quotes() {
        let mut out = String::new();
        inline_params(
            "SELECT c FROM t WHERE id=? AND c=?",
            &[Param::Int(7), Param::Text("a'b")],
            &mut out,
        )
        .unwrap();
        assert_eq!(out, "SELECT c FROM t WHERE id=7 AND c='a''b'");
    }

    #[test]
    fn rows_keep_values_and_nulls_in_place() {
        let mut r = Rows::default();
        r.reset(2);
        r.push(Some(b"7"));
        r.push(None);
        r.push_display(12.5);
        r.push(Some(b"abc"));
        assert_eq!((r.len(), r.width()), (2, 2));
        assert_eq!(r.int(0, 0).unwrap(), 7);
        assert_eq!(r.get(0, 1), None);
        assert_eq!(r.num(1, 0).unwrap(), 12.5);
        assert_eq!(r.get(1, 1), Some("abc"));
        assert!(r.int(1, 1).is_err() && r.int(0, 1).is_err() && r.get(0, 2).is_none());
        r.reset(1);
        assert!(r.is_empty());
    }

    #[test]
    fn inline_params_rejects_count_mismatch() {
        let mut out = String::new();
        assert!(inline_params("SELECT ?", &[], &mut out).is_err());
        assert!(inline_params("SELECT 1", &[Param::Int(1)], &mut out).is_err());
    }
}
