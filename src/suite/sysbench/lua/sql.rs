//! The Rust half of `sysbench.sql`: one connection of a script on the
//! engine's own client ([`crate::engine::Conn`]), counted as sysbench counts
//! its statements (a result set is a read; otherwise written rows make a
//! write, none an "other"), with sysbench's ignorable errors. The Lua half
//! (`prelude.lua`) wraps it in sysbench's objects and raises its errors.
//!
//! Every method returns `true` and its values, or `false, errno, state,
//! message, ignorable`: the Lua half raises, since an error raised here would
//! reach the script as an opaque value rather than sysbench's error table.

use std::sync::{Arc, Mutex};

use mlua::{Lua, MultiValue, UserData, UserDataMethods, Value};

use crate::engine::{
    Conn, DbError, Driver, ErrorClass, Meaning, Outcome, Param, PsMode, Rows, StmtId,
};
use crate::harness::measure::Counts;

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

    /// Whether `e` is ignorable: a number by the list, a SQLSTATE by
    /// sysbench's fixed set (read as the error's meaning).
    fn ignorable(&self, e: &DbError) -> bool {
        let Some(code) = e.code.as_deref() else {
            return self.all;
        };
        if code.parse::<u32>().is_ok() {
            return self.all || self.codes.iter().any(|c| c == code);
        }
        self.all || crate::suite::sysbench::ignorable::PGSQL_IGNORABLE.contains(&e.meaning)
    }
}

/// What the error that restarts the event means (kept in the Lua state
/// from the failed statement to the end of the event).
pub struct Restarted(pub Meaning);

/// What every connection of one Lua state shares: the engine, how
/// statements are sent, the ignore list, and the counts of the thread.
pub struct Ctx {
    pub driver: Arc<dyn Driver>,
    pub ps_mode: PsMode,
    pub ignore: Ignore,
    pub tally: Arc<Mutex<Counts>>,
    /// Whether preparing a statement names it as sysbench 1.0.20's
    /// PostgreSQL driver does, with two draws of the thread's stream
    /// (`pgsql` with server-side prepared statements).
    pub names_statements: bool,
}

impl Ctx {
    fn count(&self, f: impl FnOnce(&mut Counts)) {
        if let Ok(mut c) = self.tally.lock() {
            f(&mut c);
        }
    }

    pub fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        self.driver.require_sql()?.connect()
    }
}

/// One `sysbench.sql` connection.
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
        })
    }

    fn slot(&mut self) -> &mut Option<Box<dyn Conn>> {
        match self.conn.get_mut() {
            Ok(c) => c,
            Err(p) => p.into_inner(),
        }
    }

    fn conn(&mut self) -> Result<&mut Box<dyn Conn>, DbError> {
        self.slot()
            .as_mut()
            .ok_or_else(|| DbError::fatal("the connection was closed (disconnect())"))
    }

    fn reconnect(&mut self) -> Result<(), DbError> {
        *self.slot() = None;
        let mut conn = self.ctx.connect()?;
        for (sql, id) in &mut self.stmts {
            *id = conn.prepare(sql, self.ctx.ps_mode)?;
        }
        *self.slot() = Some(conn);
        self.ctx.count(|c| c.reconnects += 1);
        Ok(())
    }

    /// The values a statement's outcome gives the script: rows (or
    /// affected rows), fields, and the result's generation; counted.
    fn done(&mut self, o: Outcome) -> MultiValue {
        self.ctx.count(|c| c.record(o));
        let (n, fields) = match o {
            Outcome::Rows(n) => (n, self.rows.width()),
            Outcome::Affected(n) => (n, 0),
        };
        MultiValue::from_iter([
            Value::Boolean(true),
            Value::Number(n as f64),
            Value::Integer(fields as i64),
            Value::Number(self.generation as f64),
        ])
    }

    /// A failure as the Lua half reads it; a lost connection that the
    /// ignore list covers is reconnected first, as sysbench does.
    fn failed(&mut self, lua: &Lua, e: DbError) -> mlua::Result<MultiValue> {
        let mut ignorable = self.ctx.ignore.ignorable(&e);
        if e.class == ErrorClass::Reconnect {
            ignorable = ignorable && self.reconnect().is_ok();
        }
        if ignorable {
            // The event restarts with this error: the worker reports what
            // it means, which the Lua half does not carry.
            lua.set_app_data(Restarted(e.meaning()));
        }
        let code = e.code.clone().unwrap_or_default();
        let (errno, state) = match code.parse::<i64>() {
            Ok(n) => (n, String::new()),
            Err(_) => (0, code),
        };
        Ok(MultiValue::from_iter([
            Value::Boolean(false),
            Value::Integer(errno),
            Value::String(lua.create_string(&state)?),
            Value::String(lua.create_string(&e.message)?),
            Value::Boolean(ignorable),
        ]))
    }

    fn query(&mut self, lua: &Lua, sql: &str) -> mlua::Result<MultiValue> {
        self.generation += 1;
        let mut rows = std::mem::take(&mut self.rows);
        let r = match self.conn() {
            Ok(c) => c.query_into(sql, &mut rows),
            Err(e) => Err(e),
        };
        self.rows = rows;
        match r {
            Ok(o) => Ok(self.done(o)),
            Err(e) => self.failed(lua, e),
        }
    }

    fn prepare(&mut self, lua: &Lua, sql: &str) -> mlua::Result<MultiValue> {
        let mode = self.ctx.ps_mode;
        let names = self.ctx.names_statements;
        let r = match self.conn() {
            Ok(c) => {
                // sysbench's driver names the statement once it has a
                // connection, before it prepares it.
                if names {
                    super::rand::name_statement(lua);
                }
                c.prepare(sql, mode)
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
            Err(e) => self.failed(lua, e),
        }
    }

    fn execute(&mut self, lua: &Lua, args: MultiValue) -> mlua::Result<MultiValue> {
        let mut it = args.into_iter();
        let idx = match it.next() {
            Some(Value::Integer(i)) => i as usize,
            Some(Value::Number(n)) => n as usize,
            _ => return Err(mlua::Error::runtime("execute(): bad statement")),
        };
        let n = match it.next() {
            Some(Value::Integer(i)) => i as usize,
            Some(Value::Number(f)) => f as usize,
            _ => 0,
        };
        let Some(&(_, id)) = self.stmts.get(idx) else {
            return Err(mlua::Error::runtime("execute(): unknown statement"));
        };
        // The values first, then parameters borrowing them.
        enum ParamValue {
            Int(i64),
            Text(String),
            Null,
        }
        let mut vals: Vec<ParamValue> = Vec::with_capacity(n);
        for _ in 0..n {
            vals.push(match it.next().unwrap_or(Value::Nil) {
                Value::Nil => ParamValue::Null,
                Value::Integer(i) => ParamValue::Int(i),
                Value::Number(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => {
                    ParamValue::Int(f as i64)
                }
                Value::Number(f) => ParamValue::Text(f.to_string()),
                Value::Boolean(b) => ParamValue::Int(b as i64),
                Value::String(s) => ParamValue::Text(s.to_string_lossy()),
                other => ParamValue::Text(other.to_string()?),
            });
        }
        let params: Vec<Param<'_>> = vals
            .iter()
            .map(|v| match v {
                ParamValue::Int(i) => Param::Int(*i),
                ParamValue::Text(s) => Param::Text(s),
                ParamValue::Null => Param::Null,
            })
            .collect();
        self.generation += 1;
        let mut rows = std::mem::take(&mut self.rows);
        let r = match self.conn() {
            Ok(c) => c.fetch(id, &params, &mut rows),
            Err(e) => Err(e),
        };
        self.rows = rows;
        drop(params);
        match r {
            Ok(o) => Ok(self.done(o)),
            Err(e) => self.failed(lua, e),
        }
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

impl UserData for RawConn {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method_mut("query", |lua, this, sql: mlua::LuaString| {
            this.query(lua, &sql.to_str()?)
        });
        m.add_method_mut("prepare", |lua, this, sql: mlua::LuaString| {
            this.prepare(lua, &sql.to_str()?)
        });
        m.add_method_mut("execute", |lua, this, args: MultiValue| {
            this.execute(lua, args)
        });
        m.add_method("row", |lua, this, (generation, i): (f64, f64)| {
            this.row(lua, generation as u64, i as usize)
        });
        m.add_method_mut("disconnect", |_, this, ()| {
            *this.slot() = None;
            Ok(())
        });
        m.add_method_mut("reconnect", |lua, this, ()| match this.reconnect() {
            Ok(()) => Ok(MultiValue::from_iter([Value::Boolean(true)])),
            Err(e) => this.failed(lua, e),
        });
    }
}

/// Adds `connect` and `driver_name` to `raw`, the table of Rust functions
/// the prelude receives.
pub fn register(
    lua: &Lua,
    raw: &mlua::Table,
    ctx: Arc<Ctx>,
    driver_name: &'static str,
) -> mlua::Result<()> {
    raw.set(
        "driver_name",
        lua.create_function(move |_, ()| Ok(driver_name))?,
    )?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignorable_errors_follow_the_list_for_numbers_and_sysbench_s_set_for_sqlstates() {
        let e = |code: Option<&str>, meaning| DbError {
            class: ErrorClass::Retry,
            code: code.map(String::from),
            message: String::new(),
            meaning,
        };
        let i = Ignore::parse(DEFAULT_IGNORE);
        assert!(i.ignorable(&e(Some("1213"), Meaning::Deadlock)));
        assert!(!i.ignorable(&e(Some("1062"), Meaning::DuplicateKey)));
        assert!(i.ignorable(&e(Some("40P01"), Meaning::Deadlock)));
        assert!(!i.ignorable(&e(Some("42601"), Meaning::Syntax)));
        let all = Ignore::parse("all");
        assert!(all.ignorable(&e(Some("1062"), Meaning::DuplicateKey)));
        assert!(all.ignorable(&e(None, Meaning::Other)));
        assert!(!i.ignorable(&e(None, Meaning::Other)));
    }
}
