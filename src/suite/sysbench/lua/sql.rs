//! The Rust half of `sysbench.sql`: one connection of a script on the
//! engine's own client ([`crate::engine::Conn`]), counted as sysbench counts
//! its statements (a result set is a read; otherwise written rows make a
//! write, none an "other"), with sysbench's ignorable errors. The Lua half
//! (`prelude.lua`) wraps it in sysbench's objects and raises its errors.
//!
//! Every method returns `true` and its values, or `false, errno, state,
//! message, ignorable`: the Lua half raises, since an error raised here would
//! reach the script as an opaque value rather than sysbench's error table.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use mlua::{Lua, MultiValue, UserData, UserDataMethods, Value};

use super::capi::{self, ThreadCtx};
use crate::engine::{Conn, DbError, Driver, ErrorClass, Outcome, Param, PsMode, Rows, StmtId};

/// sysbench's default `--mysql-ignore-errors`: deadlock, record changed
/// since last read, lock wait timeout.
pub const DEFAULT_IGNORE: &str = "1213,1020,1205";

/// Which errors restart the event instead of failing the thread
/// (`--mysql-ignore-errors`: numbers, or `all`).
#[derive(Clone, Debug, Default)]
pub struct Ignore {
    pub all: bool,
    pub codes: Vec<String>,
}

impl Ignore {
    pub fn parse(list: &str) -> Ignore {
        let codes: Vec<String> = list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        Ignore {
            all: codes.iter().any(|c| c == "all"),
            codes,
        }
    }

    /// Whether `e` is ignorable as sysbench's driver `driver` decides:
    /// `mysql` by its error number and `--mysql-ignore-errors`; `pgsql` by
    /// its fixed set (a deadlock, a serialization failure, a unique
    /// violation), read as the error's meaning, which the engine sets from
    /// its own codes.
    fn ignorable(&self, e: &DbError, driver: &str) -> bool {
        if driver == PGSQL {
            return crate::suite::sysbench::ignorable::PGSQL_IGNORABLE.contains(&e.meaning);
        }
        match e.code.as_deref() {
            Some(code) => self.all || self.codes.iter().any(|c| c == code),
            None => self.all,
        }
    }
}

/// sysbench's name of its PostgreSQL driver.
pub const PGSQL: &str = "pgsql";

/// What every connection of one Lua state shares: the engine, sysbench's
/// name of its driver, how statements are sent, the ignore list, and the
/// state's thread (counters, stream, watchdog marks).
pub struct Ctx {
    pub driver: Arc<dyn Driver>,
    /// `mysql` or `pgsql`.
    pub name: &'static str,
    pub ps_mode: PsMode,
    pub ignore: Ignore,
    pub thread: Arc<ThreadCtx>,
}

impl Ctx {
    /// Whether preparing a statement names it as sysbench 1.0.20's
    /// PostgreSQL driver does, with two draws of the thread's stream
    /// (`pgsql` with server-side prepared statements).
    fn names_statements(&self) -> bool {
        self.name == PGSQL && self.ps_mode == PsMode::Auto
    }

    fn count(&self, o: Outcome) {
        let t = &self.thread;
        match o {
            Outcome::Rows(n) => {
                t.bump(capi::READ, 1);
                t.bump(capi::ROWS, n);
            }
            Outcome::Affected(0) => t.bump(capi::OTHER, 1),
            Outcome::Affected(_) => t.bump(capi::WRITE, 1),
        }
    }

    /// Runs `f` (a call that waits for the database) marked as such for the
    /// watchdog, unless the watchdog asked the state to stop; the state is
    /// current again afterwards (another state's task may have run on this
    /// thread while it waited).
    fn wait<T>(&self, f: impl FnOnce() -> Result<T, DbError>) -> Result<T, DbError> {
        let w = &self.thread.watch;
        if w.abort.load(Ordering::Relaxed) {
            return Err(DbError::fatal(STOPPED));
        }
        w.in_db.store(true, Ordering::Relaxed);
        let r = f();
        w.in_db.store(false, Ordering::Relaxed);
        capi::enter(&self.thread);
        r
    }

    pub fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        self.wait(|| self.driver.require_sql()?.connect())
    }
}

/// The error of a statement the watchdog refused.
pub const STOPPED: &str = "stopped by rqps's watchdog";

/// The connection in `slot`, unless `disconnect()` closed it.
fn conn_of(slot: &mut Mutex<Option<Box<dyn Conn>>>) -> Result<&mut Box<dyn Conn>, DbError> {
    let c = match slot.get_mut() {
        Ok(c) => c,
        Err(p) => p.into_inner(),
    };
    c.as_mut()
        .ok_or_else(|| DbError::fatal("the connection was closed (disconnect())"))
}

/// rqps's own C declarations for the statement path (not sysbench's: the
/// names start with `rqps_`), declared in every state before the script.
pub const CDEF: &str = r#"
typedef struct { int32_t kind; uint32_t len; int64_t i; double d; const char *s; } rqps_sb_param;
typedef struct { double nrows; double nfields; double generation; double next; } rqps_sb_out;
int rqps_sb_query(void *conn, const char *sql, size_t len, rqps_sb_out *out);
int rqps_sb_execute(void *conn, uint32_t stmt, uint32_t n, const rqps_sb_param *params, rqps_sb_out *out);
"#;

/// A statement's parameter as the Lua half hands it over
/// (`rqps_sb_param`): `kind` 0 NULL, 1 `i`, 2 the `len` bytes at `s`, 3 `d`.
#[repr(C)]
pub struct SbParam {
    pub kind: i32,
    pub len: u32,
    pub i: i64,
    pub d: f64,
    pub s: *const u8,
}

/// The bytes of a text parameter.
fn text(p: &SbParam) -> &[u8] {
    if p.s.is_null() {
        return &[];
    }
    // SAFETY: the Lua half passes a string it keeps alive (the parameter's
    // value) and its length.
    unsafe { std::slice::from_raw_parts(p.s, p.len as usize) }
}

/// A parameter as the engine's client takes it; `made` holds, in order, the
/// text of its doubles and of its text that is not UTF-8.
fn bind<'a>(p: &'a SbParam, made: &mut std::slice::Iter<'a, String>) -> Param<'a> {
    match p.kind {
        1 => Param::Int(p.i),
        2 => match std::str::from_utf8(text(p)) {
            Ok(s) => Param::Text(s),
            Err(_) => Param::Text(made.next().map_or("", String::as_str)),
        },
        3 => Param::Text(made.next().map_or("", String::as_str)),
        _ => Param::Null,
    }
}

/// What a statement returned, written where the Lua half reads it
/// (`rqps_sb_out`): rows (or affected rows), fields, the result's
/// generation, and the next row `fetch_row` gives (0 after each statement).
/// The connection's one result object is this struct itself, as sysbench's
/// is its connection's `sql_result`: the statement path writes it and
/// returns it, with no Lua table to fill.
#[repr(C)]
pub struct SbOut {
    pub nrows: f64,
    pub nfields: f64,
    pub generation: f64,
    pub next: f64,
}

/// One `sysbench.sql` connection. Its statements run through
/// [`rqps_sb_query`] and [`rqps_sb_execute`], called through `ffi` as
/// sysbench's own driver functions are, so that the JIT compiles them into
/// the event's trace; the rest (connect, prepare, rows, errors) through
/// mlua's methods.
pub struct RawConn {
    ctx: Arc<Ctx>,
    /// A mutex only to make the userdata `Sync` as mlua asks: the methods
    /// take `&mut self`, so reaching it never locks.
    conn: Mutex<Option<Box<dyn Conn>>>,
    /// Every statement prepared on it, by the index scripts hold, with its
    /// text to prepare it again after a reconnect.
    stmts: Vec<(String, StmtId)>,
    /// The last result's values, and its generation: a result set is valid
    /// until the connection's next statement, as in sysbench.
    rows: Rows,
    generation: u64,
    /// The last statement's error, as the Lua half reads it: sysbench's
    /// `sql_errno`, `sql_state`, the message, and whether it is ignorable.
    error: Option<(i64, String, String, bool)>,
    /// The text of double parameters of the statement being sent.
    scratch: Vec<String>,
}

impl RawConn {
    pub fn open(ctx: Arc<Ctx>) -> Result<RawConn, DbError> {
        let conn = ctx.connect()?;
        Ok(RawConn {
            ctx,
            conn: Mutex::new(Some(conn)),
            stmts: Vec::new(),
            rows: Rows::default(),
            generation: 0,
            error: None,
            scratch: Vec::new(),
        })
    }

    fn slot(&mut self) -> &mut Option<Box<dyn Conn>> {
        match self.conn.get_mut() {
            Ok(c) => c,
            Err(p) => p.into_inner(),
        }
    }

    fn reconnect(&mut self) -> Result<(), DbError> {
        *self.slot() = None;
        let mut conn = self.ctx.connect()?;
        for (sql, id) in &mut self.stmts {
            *id = conn.prepare(sql, self.ctx.ps_mode)?;
        }
        *self.slot() = Some(conn);
        self.ctx.thread.bump(capi::RECONNECT, 1);
        Ok(())
    }

    /// A statement's outcome, counted and written to `out` (0), or its
    /// error kept for the Lua half (1).
    fn outcome(&mut self, r: Result<Outcome, DbError>, out: &mut SbOut) -> i32 {
        match r {
            Ok(o) => {
                self.ctx.count(o);
                let (n, fields) = match o {
                    Outcome::Rows(n) => (n, self.rows.width()),
                    Outcome::Affected(n) => (n, 0),
                };
                out.nrows = n as f64;
                out.nfields = fields as f64;
                out.generation = self.generation as f64;
                out.next = 0.0;
                0
            }
            Err(e) => {
                self.failed(e);
                1
            }
        }
    }

    /// Keeps a failure as the Lua half reads it, with sysbench's driver's
    /// `sql_errno` and `sql_state` (`pgsql`: no number, the SQLSTATE;
    /// `mysql`: the error number and its ERR packet's SQLSTATE; both empty
    /// for an error the server did not send); a lost connection that the ignore list covers is
    /// reconnected first, and on PostgreSQL the transaction an ignorable
    /// error aborted is rolled back, as sysbench's drivers do.
    fn failed(&mut self, e: DbError) {
        let name = self.ctx.name;
        let mut ignorable = self.ctx.ignore.ignorable(&e, name);
        if e.class == ErrorClass::Reconnect {
            ignorable = ignorable && self.reconnect().is_ok();
        } else if ignorable
            && name == PGSQL
            && let Ok(c) = conn_of(&mut self.conn)
        {
            let _ = self.ctx.wait(|| c.query("ROLLBACK"));
        }
        if ignorable {
            // The event restarts with this error: the worker reports what
            // it means, which the Lua half does not carry.
            self.ctx.thread.restarted(e.meaning());
        }
        let state = e.state.map(|s| s.to_string()).unwrap_or_default();
        let errno = match &e.code {
            Some(code) if name != PGSQL => code.parse::<i64>().unwrap_or(0),
            _ => 0,
        };
        self.error = Some((errno, state, e.message, ignorable));
    }

    /// `con:query(sql)`.
    fn query(&mut self, sql: &str, out: &mut SbOut) -> i32 {
        self.generation += 1;
        let (ctx, rows) = (&self.ctx, &mut self.rows);
        let r = match conn_of(&mut self.conn) {
            Ok(c) => ctx.wait(|| c.query_into(sql, rows)),
            Err(e) => Err(e),
        };
        self.outcome(r, out)
    }

    /// `stmt:execute()` of statement `idx` with `params`.
    fn execute(&mut self, idx: usize, params: &[SbParam], out: &mut SbOut) -> i32 {
        let Some(&(_, id)) = self.stmts.get(idx) else {
            self.error = Some((
                0,
                String::new(),
                "execute(): unknown statement".into(),
                false,
            ));
            return 1;
        };
        // Doubles as text, the others as they are: the engine's client
        // converts to the parameter's type. Text that is not UTF-8 is sent
        // with its bad bytes replaced, as the mlua path did.
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        for p in params {
            match p.kind {
                3 => scratch.push(p.d.to_string()),
                2 if std::str::from_utf8(text(p)).is_err() => {
                    scratch.push(String::from_utf8_lossy(text(p)).into_owned());
                }
                _ => {}
            }
        }
        let mut made = scratch.iter();
        let mut buf = [Param::Null; 16];
        let owned: Vec<Param<'_>>;
        let bound: &[Param<'_>] = if params.len() <= buf.len() {
            for (slot, p) in buf.iter_mut().zip(params) {
                *slot = bind(p, &mut made);
            }
            &buf[..params.len()]
        } else {
            owned = params.iter().map(|p| bind(p, &mut made)).collect();
            &owned
        };
        self.generation += 1;
        let (ctx, rows) = (&self.ctx, &mut self.rows);
        let r = match conn_of(&mut self.conn) {
            Ok(c) => ctx.wait(|| c.fetch(id, bound, rows)),
            Err(e) => Err(e),
        };
        self.scratch = scratch;
        self.outcome(r, out)
    }

    fn prepare(&mut self, lua: &Lua, sql: &str) -> mlua::Result<MultiValue> {
        let mode = self.ctx.ps_mode;
        let ctx = &self.ctx;
        let r = match conn_of(&mut self.conn) {
            Ok(c) => {
                // sysbench's driver names the statement once it has a
                // connection, before it prepares it.
                if ctx.names_statements() {
                    super::rand::name_statement(&ctx.thread);
                }
                ctx.wait(|| c.prepare(sql, mode))
            }
            Err(e) => Err(e),
        };
        match r {
            Ok(id) => {
                self.stmts.push((sql.to_string(), id));
                Ok(MultiValue::from_iter([
                    Value::Boolean(true),
                    Value::Integer(self.stmts.len() as i64 - 1),
                ]))
            }
            Err(e) => {
                self.failed(e);
                self.last_error(lua)
            }
        }
    }

    /// The last error: `false, errno, state, message, ignorable`.
    fn last_error(&self, lua: &Lua) -> mlua::Result<MultiValue> {
        let (errno, state, msg, ignorable) = match &self.error {
            Some((n, s, m, i)) => (*n, s.as_str(), m.as_str(), *i),
            None => (0, "", "unknown error", false),
        };
        Ok(MultiValue::from_iter([
            Value::Boolean(false),
            Value::Integer(errno),
            Value::String(lua.create_string(state)?),
            Value::String(lua.create_string(msg)?),
            Value::Boolean(ignorable),
        ]))
    }

    /// Row `i` (from 0) of the result of generation `generation`, as a
    /// table of text values; nil past the last row.
    fn row(&self, lua: &Lua, generation: u64, i: usize) -> mlua::Result<Value> {
        if generation != self.generation {
            return Err(mlua::Error::runtime(
                "fetch_row(): the result set was freed by a later statement on its connection",
            ));
        }
        if i >= self.rows.len() {
            return Ok(Value::Nil);
        }
        let t = lua.create_table()?;
        for col in 0..self.rows.width() {
            if let Some(v) = self.rows.get(i, col) {
                t.raw_set(col + 1, v)?;
            }
        }
        Ok(Value::Table(t))
    }
}

/// `rqps_sb_query(conn, sql, len, out)`: `con:query(sql)` of the Lua half;
/// 0, or 1 with the error kept for `last_error()`.
///
/// # Safety
/// `conn` is the pointer a live connection's `ptr()` gave (the Lua half's
/// connection object holds the userdata it points into), `sql` has `len`
/// bytes, `out` is writable; none is used by another call at the same time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rqps_sb_query(
    conn: *mut RawConn,
    sql: *const u8,
    len: usize,
    out: *mut SbOut,
) -> i32 {
    // SAFETY: the caller's promise above.
    let (Some(c), Some(out)) = (unsafe { conn.as_mut() }, unsafe { out.as_mut() }) else {
        return 1;
    };
    let bytes = if sql.is_null() {
        &[][..]
    } else {
        // SAFETY: `len` bytes at `sql` (the caller's promise).
        unsafe { std::slice::from_raw_parts(sql, len) }
    };
    let text = String::from_utf8_lossy(bytes);
    c.query(&text, out)
}

/// `rqps_sb_execute(conn, stmt, n, params, out)`: `stmt:execute()` of the
/// Lua half with its `n` bound parameters; 0, or 1 with the error kept.
///
/// # Safety
/// As [`rqps_sb_query`]; `params` points to `n` parameters whose strings
/// stay alive for the call (or is null with `n` 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rqps_sb_execute(
    conn: *mut RawConn,
    stmt: u32,
    n: u32,
    params: *const SbParam,
    out: *mut SbOut,
) -> i32 {
    // SAFETY: the caller's promise above.
    let (Some(c), Some(out)) = (unsafe { conn.as_mut() }, unsafe { out.as_mut() }) else {
        return 1;
    };
    let params = if params.is_null() || n == 0 {
        &[][..]
    } else {
        // SAFETY: `n` parameters at `params` (the caller's promise).
        unsafe { std::slice::from_raw_parts(params, n as usize) }
    };
    c.execute(stmt as usize, params, out)
}

/// The statement path's exported functions, referred to once so that the
/// linker keeps them for `ffi.C`.
pub fn exported() -> [*const (); 2] {
    [rqps_sb_query as *const (), rqps_sb_execute as *const ()]
}

impl UserData for RawConn {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method_mut("prepare", |lua, this, sql: mlua::LuaString| {
            this.prepare(lua, &sql.to_str()?)
        });
        m.add_method("row", |lua, this, (generation, i): (f64, f64)| {
            this.row(lua, generation as u64, i as usize)
        });
        m.add_method("last_error", |lua, this, ()| this.last_error(lua));
        // Where the userdata keeps the connection, for the statement path's
        // C functions: valid while the userdata lives (the Lua half's
        // connection object holds both).
        m.add_method_mut("ptr", |_, this, ()| {
            Ok(mlua::LightUserData(
                (this as *mut RawConn).cast::<std::ffi::c_void>(),
            ))
        });
        m.add_method_mut("disconnect", |_, this, ()| {
            *this.slot() = None;
            Ok(())
        });
        m.add_method_mut("reconnect", |lua, this, ()| match this.reconnect() {
            Ok(()) => Ok(MultiValue::from_iter([Value::Boolean(true)])),
            Err(e) => {
                this.failed(e);
                this.last_error(lua)
            }
        });
    }
}

/// Adds `connect` and `driver_name` to `raw`, the table of Rust functions
/// the prelude receives.
pub fn register(lua: &Lua, raw: &mlua::Table, ctx: Arc<Ctx>) -> mlua::Result<()> {
    let name = ctx.name;
    raw.set("driver_name", lua.create_function(move |_, ()| Ok(name))?)?;
    raw.set(
        "connect",
        lua.create_function(move |lua, ()| match RawConn::open(ctx.clone()) {
            Ok(c) => Ok(MultiValue::from_iter([Value::UserData(
                lua.create_userdata(c)?,
            )])),
            Err(e) => Ok(MultiValue::from_iter([
                Value::Boolean(false),
                Value::Integer(0),
                Value::String(lua.create_string("")?),
                Value::String(lua.create_string(e.to_string())?),
            ])),
        })?,
    )?;
    Ok(())
}

/// A connection made while the script is checked, before any engine
/// opens: made at the top level, it is the real one when the script runs;
/// a statement on it is refused, since the top level runs again when the
/// script runs, with its connections.
struct CheckConn;

/// What a statement at the top level of a script being checked says.
const AT_CHECK: &str = "rqps checks a script before it connects: a statement at the top \
     level cannot run then (send it from thread_init, event or a command)";

impl UserData for CheckConn {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        for name in ["prepare", "row", "reconnect"] {
            m.add_method(name, |_, _, _: MultiValue| -> mlua::Result<()> {
                Err(mlua::Error::runtime(AT_CHECK))
            });
        }
        // No connection: the statement path fails, and says why.
        m.add_method("ptr", |_, _, ()| {
            Ok(mlua::LightUserData(std::ptr::null_mut()))
        });
        m.add_method("last_error", |lua, _, ()| {
            Ok(MultiValue::from_iter([
                Value::Boolean(false),
                Value::Integer(0),
                Value::String(lua.create_string("")?),
                Value::String(lua.create_string(AT_CHECK)?),
                Value::Boolean(false),
            ]))
        });
        m.add_method("disconnect", |_, _, ()| Ok(()));
    }
}

/// `connect` and `driver_name` while the script is checked: the driver's
/// name is empty until the engine is known.
pub fn register_check(lua: &Lua, raw: &mlua::Table) -> mlua::Result<()> {
    raw.set("driver_name", lua.create_function(|_, ()| Ok(""))?)?;
    raw.set(
        "connect",
        lua.create_function(|lua, ()| lua.create_userdata(CheckConn))?,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Meaning;

    #[test]
    fn ignorable_errors_follow_the_list_on_mysql_and_the_fixed_set_on_pgsql() {
        let e = |code: Option<&str>, meaning| DbError {
            code: code.map(String::from),
            ..DbError::new(ErrorClass::Retry, meaning, "")
        };
        let i = Ignore::parse(DEFAULT_IGNORE);
        assert!(i.ignorable(&e(Some("1213"), Meaning::Deadlock), "mysql"));
        assert!(!i.ignorable(&e(Some("1062"), Meaning::DuplicateKey), "mysql"));
        // PostgreSQL's SQLSTATEs go by their meaning, even one that reads
        // as a number (40001, a serialization failure).
        assert!(i.ignorable(&e(Some("40P01"), Meaning::Deadlock), PGSQL));
        assert!(i.ignorable(&e(Some("40001"), Meaning::Serialization), PGSQL));
        assert!(i.ignorable(&e(Some("23505"), Meaning::DuplicateKey), PGSQL));
        assert!(!i.ignorable(&e(Some("42601"), Meaning::Syntax), PGSQL));
        assert!(!i.ignorable(&e(Some("40001"), Meaning::Serialization), "mysql"));
        let all = Ignore::parse("all");
        assert!(all.ignorable(&e(Some("1062"), Meaning::DuplicateKey), "mysql"));
        assert!(all.ignorable(&e(None, Meaning::Other), "mysql"));
        assert!(!i.ignorable(&e(None, Meaning::Other), "mysql"));
    }
}
