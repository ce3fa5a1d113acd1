//! One pgbench client: a connection and a thread that, per transaction,
//! draws a script by weight and runs its commands in order.
//!
//! - SQL: `:name` becomes the variable's value as pgbench substitutes it
//!   (`simple`: written into the text; `extended` and `prepared`: bound as
//!   a parameter, the statement prepared on its first use on the
//!   connection and kept). `\gset`/`\aset` store the row's values under the
//!   select list's column names.
//! - `\set` evaluates through [`super::expr`] with the client's own random
//!   stream; `\sleep` sleeps; `\if`/`\elif`/`\else`/`\endif` branch.
//! - A statement the engine refuses fails the test with the engine's
//!   message and the script's file:line. A serialization failure or
//!   deadlock (the engine's retry class) rolls back and, within
//!   `--max-tries`, runs the script again from its start with the same
//!   random values (as pgbench 15+); past it, the transaction is counted
//!   failed, by class, and the client goes on.
//! - With `--rate`, transactions are scheduled on a Poisson process
//!   ([`Worker::pause`]); the lag of each start behind its schedule is
//!   kept, and with `--latency-limit` a transaction already that late when
//!   its turn comes is skipped, as pgbench counts them.
//!
//! Per command, the time it took and its count (pgbench `-r`), kept in
//! plain counters: the per-transaction path allocates nothing once every
//! variable exists.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::{
    Conn, DbError, DbResult, Dialect, Driver, ErrorClass, Outcome, Param, PsMode, Rows, StmtId,
};
use crate::harness::measure::{Counts, event_clock};
use crate::harness::runner::Worker;

use super::expr::{Env, Expr, Value};
use super::params::{Params, Protocol};
use super::script::{CommandKind, Fetch, SleepAmount, SleepUnit, SqlPart, parse_script};

/// A SQL command, ready for either protocol.
pub struct SqlCmd {
    /// The statement with `?` where each variable goes.
    param_sql: String,
    /// The variables, in placeholder order.
    vars: Vec<String>,
    /// The parts, for text substitution.
    parts: Vec<SqlPart>,
    fetch: Fetch,
    /// Column names for `\gset`/`\aset`; an error to report when the
    /// select list does not name them.
    columns: Result<Vec<String>, Fault>,
}

/// A command, with its branches' targets resolved.
pub enum Op {
    Sql(Box<SqlCmd>),
    Set {
        var: String,
        expr: Expr,
    },
    Sleep {
        amount: SleepAmount,
        unit: SleepUnit,
    },
    /// `next`: the index of the branch after this one at the same depth
    /// (`\elif`, `\else` or `\endif`).
    If {
        expr: Expr,
        next: usize,
    },
    Elif {
        expr: Expr,
        next: usize,
        end: usize,
    },
    Else {
        end: usize,
    },
    Endif,
}

/// One script, compiled for the run.
pub struct CompiledScript {
    pub name: String,
    /// The file (or built-in) name errors carry.
    pub source: String,
    pub weight: u32,
    pub ops: Vec<Op>,
    /// Each command's first line, and its text as shown in figures.
    pub lines: Vec<u32>,
    pub shown: Vec<String>,
}

/// Every script of the run, and the weights to draw them by.
pub struct Compiled {
    pub scripts: Vec<CompiledScript>,
    /// Running sums of the weights.
    cumulative: Vec<u64>,
    total: u64,
}

/// Why a script cannot run (found before any client starts).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CompileError(String);

impl Compiled {
    /// The run's scripts, built-ins rendered for `d`.
    pub fn new(p: &Params, d: &dyn Dialect) -> Result<Compiled, CompileError> {
        let mut scripts = Vec::new();
        for s in &p.scripts {
            let (source, text) = match (&s.builtin, &s.text) {
                (Some(b), _) => (b.name().to_string(), b.text(d)),
                (None, Some(t)) => (s.path.clone().unwrap_or_else(|| s.name.clone()), t.clone()),
                (None, None) => return Err(CompileError(format!("script {} has no text", s.name))),
            };
            scripts.push(compile(&s.name, &source, s.weight, &text)?);
        }
        Ok(Compiled::of(scripts))
    }

    fn of(scripts: Vec<CompiledScript>) -> Compiled {
        let mut cumulative = Vec::with_capacity(scripts.len());
        let mut total = 0u64;
        for s in &scripts {
            total += u64::from(s.weight);
            cumulative.push(total);
        }
        Compiled {
            scripts,
            cumulative,
            total,
        }
    }

    /// The script a uniform 64-bit draw `r` picks, by weight.
    #[inline]
    pub fn choose(&self, r: u64) -> usize {
        if self.scripts.len() == 1 {
            return 0;
        }
        let x = ((u128::from(r) * u128::from(self.total)) >> 64) as u64;
        self.cumulative
            .iter()
            .position(|&c| x < c)
            .unwrap_or(self.scripts.len() - 1)
    }
}

/// Parses `text` into the commands a client runs.
fn compile(
    name: &str,
    source: &str,
    weight: u32,
    text: &str,
) -> Result<CompiledScript, CompileError> {
    let script = parse_script(source, text).map_err(|e| CompileError(e.to_string()))?;
    let mut ops = Vec::with_capacity(script.commands.len());
    let mut lines = Vec::new();
    let mut shown = Vec::new();
    for c in &script.commands {
        lines.push(c.line);
        let one_line = c.text.split_whitespace().collect::<Vec<_>>().join(" ");
        shown.push(one_line.chars().take(120).collect::<String>());
        ops.push(match &c.kind {
            CommandKind::Sql { parts, fetch } => {
                let mut param_sql = String::new();
                let mut vars = Vec::new();
                for p in parts {
                    match p {
                        SqlPart::Text(t) => param_sql.push_str(t),
                        SqlPart::Var(v) => {
                            param_sql.push('?');
                            vars.push(v.clone());
                        }
                    }
                }
                let columns = if matches!(fetch, Fetch::None) {
                    Ok(Vec::new())
                } else {
                    select_columns(&param_sql)
                };
                Op::Sql(Box::new(SqlCmd {
                    param_sql,
                    vars,
                    parts: parts.clone(),
                    fetch: fetch.clone(),
                    columns,
                }))
            }
            CommandKind::Set { var, expr } => Op::Set {
                var: var.clone(),
                expr: expr.clone(),
            },
            CommandKind::Sleep { amount, unit } => Op::Sleep {
                amount: amount.clone(),
                unit: *unit,
            },
            CommandKind::If { cond, next } => Op::If {
                expr: cond.clone(),
                next: *next,
            },
            CommandKind::Elif { cond, next, end } => Op::Elif {
                expr: cond.clone(),
                next: *next,
                end: *end,
            },
            CommandKind::Else { end } => Op::Else { end: *end },
            CommandKind::Endif => Op::Endif,
        });
    }
    Ok(CompiledScript {
        name: name.to_string(),
        source: source.to_string(),
        weight,
        ops,
        lines,
        shown,
    })
}

/// What went wrong in a command, before its file:line is added.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{0}")]
pub struct Fault(String);

/// The words that end a select list.
const ENDS_LIST: [&str; 13] = [
    "from",
    "into",
    "where",
    "group",
    "order",
    "limit",
    "union",
    "having",
    "window",
    "offset",
    "for",
    "except",
    "intersect",
];

/// The names a statement's result columns get, from its select list (or
/// its RETURNING list), as PostgreSQL names them: the alias, else the
/// column, else the function's name. `*` cannot be named here.
pub fn select_columns(sql: &str) -> Result<Vec<String>, Fault> {
    let lower = sql.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    // Top-level words and commas, outside quotes and parentheses.
    let mut depth = 0i32;
    let mut i = 0;
    let mut start = None;
    let mut end = sql.len();
    let mut items = Vec::new();
    let mut item_start = 0;
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let keyword_at = |i: usize, k: &str| {
        lower[i..].starts_with(k)
            && (i == 0 || !is_word(bytes[i - 1]))
            && bytes.get(i + k.len()).is_none_or(|&b| !is_word(b))
    };
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\'' | b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b {
                    i += 1;
                }
            }
            b'(' => depth += 1,
            b')' => depth -= 1,
            b',' if depth == 0 && start.is_some() => {
                items.push(&sql[item_start..i]);
                item_start = i + 1;
            }
            _ if depth == 0 && start.is_none() => {
                for k in ["select", "returning"] {
                    if keyword_at(i, k) {
                        start = Some(i + k.len());
                        item_start = i + k.len();
                        i += k.len() - 1;
                        break;
                    }
                }
            }
            _ if depth == 0 && ENDS_LIST.iter().any(|k| keyword_at(i, k)) => {
                end = i;
                break;
            }
            _ => {}
        }
        i += 1;
    }
    if start.is_none() {
        return Err(Fault(
            "\\gset and \\aset need a statement that returns rows (SELECT or RETURNING)".into(),
        ));
    }
    items.push(&sql[item_start..end.max(item_start)]);
    let items: Vec<&str> = items
        .into_iter()
        .map(|s| s.trim().trim_end_matches(';').trim())
        .collect();
    let mut names = Vec::new();
    for item in items {
        if item.is_empty() {
            continue;
        }
        names.push(column_name(item)?);
    }
    // `SELECT DISTINCT a` names a.
    if let Some(first) = names.first_mut()
        && let Some(rest) = first.strip_prefix("distinct ")
    {
        *first = rest.to_string();
    }
    Ok(names)
}

fn ident(s: &str) -> Option<String> {
    let s = s.trim();
    if let Some(q) = s.strip_prefix('"').and_then(|q| q.strip_suffix('"')) {
        return Some(q.replace("\"\"", "\""));
    }
    (!s.is_empty()
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit()))
    .then(|| s.to_lowercase())
}

fn column_name(item: &str) -> Result<String, Fault> {
    let item = item
        .strip_prefix("DISTINCT ")
        .or_else(|| item.strip_prefix("distinct "))
        .unwrap_or(item)
        .trim();
    if item == "*" || item.ends_with(".*") {
        return Err(Fault(format!(
            "\\gset and \\aset cannot name the columns of '{item}': list them (SELECT a, b ...)"
        )));
    }
    // `expr AS name` or `expr name`.
    if let Some((_, last)) = item.rsplit_once(char::is_whitespace) {
        let head = item[..item.len() - last.len()].trim_end();
        let head_l = head.to_ascii_lowercase();
        if let Some(n) = ident(last) {
            if head_l.ends_with(" as") || head_l == "as" {
                return Ok(n);
            }
            let ends_expr = head.ends_with(|c: char| {
                c == ')' || c.is_alphanumeric() || c == '"' || c == '\'' || c == '_'
            });
            let op_word = [
                "and", "or", "not", "is", "null", "then", "else", "when", "case",
            ]
            .iter()
            .any(|w| head_l.ends_with(&format!(" {w}")) || head_l == *w);
            if ends_expr && !op_word && n != "end" {
                return Ok(n);
            }
        }
    }
    // A column: its last part.
    if let Some(n) = item.rsplit('.').next().and_then(ident)
        && item.split('.').all(|p| ident(p).is_some())
    {
        return Ok(n);
    }
    // A function call: its name.
    if let Some((f, _)) = item.split_once('(')
        && let Some(n) = f.rsplit('.').next().and_then(ident)
    {
        return Ok(n);
    }
    if item.to_ascii_lowercase().starts_with("case") {
        return Ok("case".into());
    }
    Ok("?column?".into())
}

/// Figures of one command of one script.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpTally {
    pub ns: u64,
    pub count: u64,
    pub failures: u64,
    pub retries: u64,
}

/// Figures of one script on one client.
#[derive(Clone, Debug, Default)]
pub struct ScriptTally {
    pub ops: Vec<OpTally>,
    /// Transactions that failed after their last try.
    pub failed: u64,
    /// Transactions that needed more than one try, and the extra tries.
    pub retried: u64,
    pub retries: u64,
}

/// Failed transactions by the class of their last error.
#[derive(Clone, Copy, Debug, Default)]
pub struct FailureTally {
    pub serialization: u64,
    pub deadlock: u64,
    pub other: u64,
}

/// The schedule's figures under `--rate`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateTally {
    pub lag_ns_sum: u64,
    pub lag_ns_max: u64,
    pub started: u64,
    pub skipped: u64,
    /// Transactions that ended later than --latency-limit after their
    /// scheduled (or, without --rate, actual) start.
    pub late: u64,
}

/// xoshiro256**: the client's random stream, copied to replay a retried
/// transaction with the same values.
#[derive(Clone, Debug)]
pub struct Xoshiro([u64; 4]);

impl Xoshiro {
    pub fn seeded(seed: u64) -> Self {
        let mut s = seed;
        let mut next = || {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Xoshiro([next(), next(), next(), next()])
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let r = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        r
    }

    /// Uniform in (0, 1].
    fn unit_open(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }
}

/// What evaluation sees of a client.
struct ClientEnv<'a> {
    vars: &'a HashMap<String, Value>,
    rng: &'a mut Xoshiro,
}

impl Env for ClientEnv<'_> {
    fn var(&self, name: &str) -> Option<&Value> {
        self.vars.get(name)
    }
    fn random_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }
}

/// A value as a condition, as pgbench reads one.
fn truth(v: &Value) -> Result<bool, Fault> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Int(i) => Ok(*i != 0),
        Value::Double(d) => Ok(*d != 0.0),
        Value::Null => Ok(false),
        Value::Str(s) => match s.trim().to_ascii_lowercase().as_str() {
            "t" | "true" | "y" | "yes" | "on" | "1" => Ok(true),
            "f" | "false" | "n" | "no" | "off" | "0" => Ok(false),
            other => Err(Fault(format!("'{other}' is not a boolean"))),
        },
    }
}

/// A value read from the engine (`\gset`), or given with `--define`.
pub fn value_of_text(t: Option<&str>) -> Value {
    match t {
        None => Value::Null,
        Some(t) => match t.trim().parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => match t.trim().parse::<f64>() {
                Ok(d) if t.contains(['.', 'e', 'E']) => Value::Double(d),
                _ => Value::Str(t.to_string()),
            },
        },
    }
}

/// An error of command `op` of script `s`, with its file:line.
fn at(s: &CompiledScript, op: usize, e: DbError) -> DbError {
    DbError {
        class: e.class,
        code: e.code,
        message: format!("{}:{}: {}", s.source, s.lines[op], e.message),
    }
}

fn fatal_at(s: &CompiledScript, op: usize, msg: impl std::fmt::Display) -> DbError {
    DbError::fatal(format!("{}:{}: {msg}", s.source, s.lines[op]))
}

/// The pacing of a client under `--rate`.
struct Pace {
    mean_ns: f64,
    next_ns: u64,
    rng: Xoshiro,
}

/// One client.
pub struct Client {
    driver: Arc<dyn Driver>,
    conn: Box<dyn Conn>,
    c: Arc<Compiled>,
    protocol: Protocol,
    rollback: &'static str,
    /// Per script, per command: the statement once prepared.
    stmts: Vec<Vec<Option<StmtId>>>,
    vars: HashMap<String, Value>,
    rng: Xoshiro,
    text: String,
    rows: Rows,
    param_text: Vec<String>,
    current: usize,
    max_tries: u32,
    budget: Option<u64>,
    done: u64,
    pace: Option<Pace>,
    latency_limit_ns: Option<u64>,
    scheduled: Option<u64>,
    pub tally: Vec<ScriptTally>,
    pub failures: FailureTally,
    pub rate: RateTally,
}

impl Client {
    /// Client `id` of `clients`, connected.
    pub fn new(
        driver: Arc<dyn Driver>,
        c: Arc<Compiled>,
        p: &Params,
        clients: usize,
        id: usize,
    ) -> DbResult<Client> {
        let db = driver.require_sql()?;
        let conn = db.connect()?;
        let rollback = db.dialect().rollback();
        let seed = p.seed.wrapping_add((id as u64).wrapping_mul(0x9E37_79B9));
        let mut vars = HashMap::new();
        vars.insert("scale".to_string(), Value::Int(i64::from(p.scale)));
        vars.insert("client_id".to_string(), Value::Int(id as i64));
        vars.insert("random_seed".to_string(), Value::Int(p.seed as i64));
        vars.insert(
            "default_seed".to_string(),
            Value::Int(Xoshiro::seeded(p.seed).next_u64() as i64),
        );
        for (k, v) in &p.defines {
            vars.insert(k.clone(), value_of_text(Some(v)));
        }
        let pace = p.rate.map(|r| Pace {
            mean_ns: 1e9 * clients as f64 / r,
            next_ns: 0,
            rng: Xoshiro::seeded(seed ^ 0x5EED),
        });
        let tally = c
            .scripts
            .iter()
            .map(|s| ScriptTally {
                ops: vec![OpTally::default(); s.ops.len()],
                ..Default::default()
            })
            .collect();
        Ok(Client {
            stmts: c.scripts.iter().map(|s| vec![None; s.ops.len()]).collect(),
            driver,
            conn,
            c,
            protocol: p.protocol,
            rollback,
            vars,
            rng: Xoshiro::seeded(seed),
            text: String::new(),
            rows: Rows::default(),
            param_text: Vec::new(),
            current: 0,
            max_tries: p.max_tries,
            budget: p.transactions,
            done: 0,
            pace,
            latency_limit_ns: p.latency_limit_ms.map(|ms| (ms * 1e6) as u64),
            scheduled: None,
            tally,
            failures: FailureTally::default(),
            rate: RateTally::default(),
        })
    }

    /// Runs script `s` once from its start: `Err` with the index of the
    /// command that failed.
    fn run_script(&mut self, s: usize, counts: &mut Counts) -> Result<(), (DbError, usize)> {
        let clock = event_clock();
        let c = self.c.clone();
        let script = &c.scripts[s];
        let mut pc = 0;
        let mut entering = false;
        while pc < script.ops.len() {
            let t0 = clock.now_ns();
            let mut next = pc + 1;
            let mut enters = false;
            match &script.ops[pc] {
                Op::Sql(cmd) => {
                    let o = self.sql(s, pc, cmd).map_err(|e| (at(script, pc, e), pc))?;
                    counts.record(o);
                }
                Op::Set { var, expr } => {
                    let v = self.eval(expr).map_err(|m| (fatal_at(script, pc, m), pc))?;
                    match self.vars.get_mut(var.as_str()) {
                        Some(slot) => *slot = v,
                        None => {
                            self.vars.insert(var.clone(), v);
                        }
                    }
                }
                Op::Sleep { amount, unit } => {
                    let n = match amount {
                        SleepAmount::Int(n) => *n,
                        SleepAmount::Var(v) => match self.vars.get(v.as_str()) {
                            Some(Value::Int(n)) => *n,
                            Some(Value::Str(t)) if t.trim().parse::<i64>().is_ok() => {
                                t.trim().parse::<i64>().unwrap_or(0)
                            }
                            _ => {
                                let e = format!(
                                    "\\sleep :{v}: the variable is undefined or not an integer"
                                );
                                return Err((fatal_at(script, pc, e), pc));
                            }
                        },
                    };
                    let us = match unit {
                        SleepUnit::Us => n,
                        SleepUnit::Ms => n.saturating_mul(1000),
                        SleepUnit::S => n.saturating_mul(1_000_000),
                    };
                    if us > 0 {
                        std::thread::sleep(Duration::from_micros(us as u64));
                    }
                }
                Op::If { expr, next: n } => {
                    (next, enters) = self.branch(script, pc, expr, *n)?;
                }
                Op::Elif { expr, next: n, end } => {
                    (next, enters) = if entering {
                        self.branch(script, pc, expr, *n)?
                    } else {
                        (end + 1, false)
                    };
                }
                Op::Else { end } => {
                    next = if entering { pc + 1 } else { end + 1 };
                }
                Op::Endif => {}
            }
            // A false \if or \elif enters the \elif or \else it goes to;
            // reaching one otherwise leaves the \if (the branch before it was
            // taken). Told by the condition, not by where control went: a
            // false \if whose own branch is empty goes to the very next
            // command, as a taken branch would.
            entering = enters;
            let op = &mut self.tally[s].ops[pc];
            op.ns += clock.now_ns().saturating_sub(t0);
            op.count += 1;
            pc = next;
        }
        Ok(())
    }

    /// Where an `\if`/`\elif` on `expr` goes: the next command when true,
    /// else its next branch (`\endif`: past it); and whether that next
    /// branch (an `\elif` or `\else`) is to be entered.
    fn branch(
        &mut self,
        script: &CompiledScript,
        pc: usize,
        expr: &Expr,
        next: usize,
    ) -> Result<(usize, bool), (DbError, usize)> {
        let v = self.eval(expr).map_err(|m| (fatal_at(script, pc, m), pc))?;
        let t = truth(&v).map_err(|m| (fatal_at(script, pc, m), pc))?;
        Ok(if t {
            (pc + 1, false)
        } else if matches!(script.ops.get(next), Some(Op::Endif)) {
            (next + 1, false)
        } else {
            (next, true)
        })
    }

    fn eval(&mut self, expr: &Expr) -> Result<Value, Fault> {
        let mut env = ClientEnv {
            vars: &self.vars,
            rng: &mut self.rng,
        };
        expr.eval(&mut env).map_err(|e| Fault(e.to_string()))
    }

    /// Runs one SQL command, storing what `\gset`/`\aset` ask for.
    fn sql(&mut self, s: usize, pc: usize, cmd: &SqlCmd) -> DbResult<Outcome> {
        let fetch = !matches!(cmd.fetch, Fetch::None);
        let outcome = match self.protocol {
            Protocol::Simple => {
                self.text.clear();
                for part in &cmd.parts {
                    match part {
                        SqlPart::Text(t) => self.text.push_str(t),
                        SqlPart::Var(v) => match self.vars.get(v.as_str()) {
                            Some(Value::Int(i)) => {
                                let _ = write!(self.text, "{i}");
                            }
                            Some(val) => val.write_sql_text(&mut self.text),
                            // As pgbench: an undefined variable stays as written.
                            None => {
                                self.text.push(':');
                                self.text.push_str(v);
                            }
                        },
                    }
                }
                if fetch {
                    self.conn.query_into(&self.text, &mut self.rows)?
                } else {
                    self.conn.query(&self.text)?
                }
            }
            Protocol::Extended | Protocol::Prepared => {
                let n = cmd.vars.len();
                while self.param_text.len() < n {
                    self.param_text.push(String::new());
                }
                let mut ints = [None::<i64>; 16];
                let mut ints_vec;
                let ints: &mut [Option<i64>] = if n <= 16 {
                    &mut ints[..n]
                } else {
                    ints_vec = vec![None; n];
                    &mut ints_vec
                };
                for (i, v) in cmd.vars.iter().enumerate() {
                    match self.vars.get(v.as_str()) {
                        Some(Value::Int(x)) => ints[i] = Some(*x),
                        Some(val) => {
                            let t = &mut self.param_text[i];
                            t.clear();
                            val.write_sql_text(t);
                        }
                        None => {
                            return Err(DbError::fatal(format!(
                                "undefined variable :{v} (set it with \\set, \\gset or --define)"
                            )));
                        }
                    }
                }
                let texts = &self.param_text;
                let param = |i: usize| match ints[i] {
                    Some(x) => Param::Int(x),
                    None => Param::Text(&texts[i]),
                };
                let rows = fetch.then_some(&mut self.rows);
                let slot = &mut self.stmts[s][pc];
                let conn = self.conn.as_mut();
                if n <= 16 {
                    let mut arr = [Param::Int(0); 16];
                    for (i, p) in arr.iter_mut().enumerate().take(n) {
                        *p = param(i);
                    }
                    bound(conn, slot, self.protocol, &cmd.param_sql, &arr[..n], rows)?
                } else {
                    let v: Vec<Param<'_>> = (0..n).map(param).collect();
                    bound(conn, slot, self.protocol, &cmd.param_sql, &v, rows)?
                }
            }
        };
        if fetch {
            self.store_rows(cmd)?;
        }
        Ok(outcome)
    }

    /// `\gset`: the one row's values; `\aset`: every row's, the last one
    /// winning.
    fn store_rows(&mut self, cmd: &SqlCmd) -> DbResult<()> {
        let names = cmd
            .columns
            .as_ref()
            .map_err(|m| DbError::fatal(m.to_string()))?;
        let (prefix, one) = match &cmd.fetch {
            Fetch::Gset(p) => (p.as_str(), true),
            Fetch::Aset(p) => (p.as_str(), false),
            Fetch::None => return Ok(()),
        };
        let n = self.rows.len();
        if one && n != 1 {
            return Err(DbError::fatal(format!(
                "\\gset expects one row, the statement returned {n}"
            )));
        }
        if n > 0 && self.rows.width() != names.len() {
            return Err(DbError::fatal(format!(
                "the select list names {} column(s) ({}) but the statement returned {}",
                names.len(),
                names.join(", "),
                self.rows.width()
            )));
        }
        for r in 0..n {
            for (col, name) in names.iter().enumerate() {
                let v = value_of_text(self.rows.get(r, col));
                let key = format!("{prefix}{name}");
                self.vars.insert(key, v);
            }
        }
        Ok(())
    }

    /// Rolls back after a failed statement; only a lost connection counts.
    fn roll_back(&mut self) -> DbResult<()> {
        match self.conn.query(self.rollback) {
            Err(e) if e.class == ErrorClass::Reconnect => Err(e),
            _ => Ok(()),
        }
    }
}

/// Executes a statement with bound parameters: `extended` sends it to be
/// parsed anew each time where the engine's protocol can (PostgreSQL's
/// unnamed statement), else, as `prepared`, prepares it on first use and
/// keeps it in `slot`.
fn bound(
    conn: &mut dyn Conn,
    slot: &mut Option<StmtId>,
    protocol: Protocol,
    sql: &str,
    params: &[Param<'_>],
    mut rows: Option<&mut Rows>,
) -> DbResult<Outcome> {
    if protocol == Protocol::Extended
        && slot.is_none()
        && let Some(r) = conn.execute_unprepared(sql, params, rows.as_deref_mut())
    {
        return r;
    }
    let id = match *slot {
        Some(id) => id,
        None => {
            let id = conn.prepare(sql, PsMode::Auto)?;
            *slot = Some(id);
            id
        }
    };
    match rows {
        Some(out) => conn.fetch(id, params, out),
        None => conn.execute(id, params),
    }
}

/// The class a failed transaction is counted in.
fn failure_class(e: &DbError, f: &mut FailureTally) {
    match e.code.as_deref() {
        Some("40001") => f.serialization += 1,
        Some("40P01" | "1213") => f.deadlock += 1,
        _ => f.other += 1,
    }
}

impl Worker for Client {
    fn event(&mut self, c: &mut Counts) -> DbResult<()> {
        let clock = event_clock();
        let start = clock.now_ns();
        self.done += 1;
        let from = match self.scheduled.take() {
            Some(at) => {
                let lag = start.saturating_sub(at);
                self.rate.lag_ns_sum += lag;
                self.rate.lag_ns_max = self.rate.lag_ns_max.max(lag);
                self.rate.started += 1;
                at
            }
            None => start,
        };
        let s = self.c.choose(self.rng.next_u64());
        self.current = s;
        let replay = (self.max_tries > 1).then(|| self.rng.clone());
        let mut tries = 1;
        loop {
            match self.run_script(s, c) {
                Ok(()) => break,
                Err((e, op)) => {
                    self.tally[s].ops[op].failures += 1;
                    // A lost connection is the harness's to count and cure;
                    // anything else ends the test.
                    if e.class != ErrorClass::Retry {
                        return Err(e);
                    }
                    self.roll_back()?;
                    if tries < self.max_tries {
                        tries += 1;
                        self.tally[s].ops[op].retries += 1;
                        self.tally[s].retries += 1;
                        if let Some(r) = &replay {
                            self.rng = r.clone();
                        }
                        continue;
                    }
                    self.tally[s].failed += 1;
                    if tries > 1 {
                        self.tally[s].retried += 1;
                    }
                    failure_class(&e, &mut self.failures);
                    return Err(e);
                }
            }
        }
        if tries > 1 {
            self.tally[s].retried += 1;
        }
        if let Some(limit) = self.latency_limit_ns
            && clock.now_ns().saturating_sub(from) > limit
        {
            self.rate.late += 1;
        }
        Ok(())
    }

    fn recover(&mut self, err: &DbError) -> DbResult<()> {
        match err.class {
            // Rolled back in `event` already.
            ErrorClass::Retry => Ok(()),
            ErrorClass::Reconnect => {
                self.conn = self.driver.require_sql()?.connect()?;
                for s in &mut self.stmts {
                    s.fill(None);
                }
                Ok(())
            }
            ErrorClass::Fatal => Err(err.clone()),
        }
    }

    fn kinds(&self) -> &'static [&'static str] {
        kind_names(&self.c)
    }

    #[inline]
    fn kind(&self) -> usize {
        self.current
    }

    fn pause(&mut self, deadline_ns: u64, _stop: &dyn Fn() -> bool) -> bool {
        let Some(pace) = self.pace.as_mut() else {
            return false;
        };
        let clock = event_clock();
        let now = clock.now_ns();
        if pace.next_ns == 0 {
            pace.next_ns = now;
        }
        let wait = |p: &mut Pace| (-p.rng.unit_open().ln() * p.mean_ns) as u64;
        pace.next_ns += wait(pace);
        if let Some(limit) = self.latency_limit_ns {
            while pace.next_ns + limit < now && self.budget.is_none_or(|b| self.done < b) {
                self.rate.skipped += 1;
                self.done += 1;
                pace.next_ns += wait(pace);
            }
        }
        let until = pace.next_ns.min(deadline_ns);
        if until > now {
            std::thread::sleep(Duration::from_nanos(until - now));
        }
        self.scheduled = Some(pace.next_ns);
        true
    }

    fn warmed_up(&mut self) {
        for t in &mut self.tally {
            let n = t.ops.len();
            *t = ScriptTally {
                ops: vec![OpTally::default(); n],
                ..Default::default()
            };
        }
        self.failures = FailureTally::default();
        self.rate = RateTally::default();
        self.done = 0;
    }

    #[inline]
    fn finished(&self) -> bool {
        self.budget.is_some_and(|b| self.done >= b)
    }
}

/// The scripts' names for the harness's per-kind figures: made once per
/// set of scripts and kept for the process (a few bytes per run).
fn kind_names(c: &Compiled) -> &'static [&'static str] {
    use std::sync::Mutex;
    static MADE: Mutex<Vec<&'static [&'static str]>> = Mutex::new(Vec::new());
    let want: Vec<&str> = c.scripts.iter().map(|s| s.name.as_str()).collect();
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(k) = made.iter().find(|k| k[..] == want[..]) {
        return k;
    }
    let names: Vec<&'static str> = want
        .iter()
        .map(|n| &*Box::leak(n.to_string().into_boxed_str()))
        .collect();
    let k: &'static [&'static str] = Box::leak(names.into_boxed_slice());
    made.push(k);
    k
}

/// Runs `text` (the init script) once, as client 0 with the simple protocol.
pub fn run_once(driver: Arc<dyn Driver>, p: &Params, path: &str, text: &str) -> DbResult<()> {
    let script = compile("init", path, 1, text).map_err(|e| DbError::fatal(e.to_string()))?;
    let c = Arc::new(Compiled::of(vec![script]));
    let mut one = p.clone();
    one.protocol = Protocol::Simple;
    one.rate = None;
    one.max_tries = 1;
    let mut client = Client::new(driver, c, &one, 1, 0)?;
    let mut counts = Counts::default();
    client.run_script(0, &mut counts).map_err(|(e, _)| e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiled(weights: &[u32]) -> Compiled {
        Compiled::of(
            weights
                .iter()
                .enumerate()
                .map(|(i, &w)| compile(&format!("s{i}"), "x", w, "SELECT 1;\n").unwrap())
                .collect(),
        )
    }

    #[test]
    fn weights_are_drawn_within_one_point_over_100000_draws() {
        let c = compiled(&[1, 3, 6, 0]);
        let mut rng = Xoshiro::seeded(42);
        let mut n = [0u64; 4];
        for _ in 0..100_000 {
            n[c.choose(rng.next_u64())] += 1;
        }
        for (i, want) in [10.0, 30.0, 60.0, 0.0].iter().enumerate() {
            let got = n[i] as f64 / 1000.0;
            assert!((got - want).abs() < 1.0, "script {i}: {got} % for {want} %");
        }
        assert_eq!(n[3], 0, "weight 0 is never drawn");
        // Every draw maps somewhere, the extremes included.
        assert_eq!(c.choose(0), 0);
        assert_eq!(c.choose(u64::MAX), 2);
    }

    #[test]
    fn branches_resolve_to_the_next_branch_and_the_endif() {
        let s = compile(
            "b",
            "b.sql",
            1,
            "\\if :a\nSELECT 1;\n\\elif :b\nSELECT 2;\n\\else\nSELECT 3;\n\\endif\nSELECT 4;\n",
        )
        .unwrap();
        assert!(matches!(s.ops[0], Op::If { next: 2, .. }));
        assert!(matches!(
            s.ops[2],
            Op::Elif {
                next: 4,
                end: 6,
                ..
            }
        ));
        assert!(matches!(s.ops[4], Op::Else { end: 6 }));
        assert!(matches!(s.ops[6], Op::Endif));
        assert_eq!(s.lines, [1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn select_lists_name_the_gset_columns_as_postgresql_does() {
        let n = |sql: &str| select_columns(sql).unwrap();
        assert_eq!(
            n("SELECT abalance FROM pgbench_accounts WHERE aid = ?"),
            ["abalance"]
        );
        assert_eq!(
            n("select a.x, count(*), sum(b) AS Total, 1 + 2 three, \"Mixed\" from t"),
            ["x", "count", "total", "three", "Mixed"]
        );
        assert_eq!(n("SELECT 1"), ["?column?"]);
        assert_eq!(n("SELECT coalesce(max(aid), 0) AS m;"), ["m"]);
        assert_eq!(
            n("UPDATE t SET v = v + 1 WHERE id = ? RETURNING v, id"),
            ["v", "id"]
        );
        assert!(
            select_columns("SELECT * FROM t")
                .unwrap_err()
                .to_string()
                .contains("list them")
        );
        assert!(select_columns("UPDATE t SET v = 1").is_err());
    }

    #[test]
    fn values_read_back_keep_their_type() {
        assert!(matches!(value_of_text(Some("42")), Value::Int(42)));
        assert!(matches!(value_of_text(Some("-1.5")), Value::Double(d) if d == -1.5));
        assert!(matches!(value_of_text(Some("abc")), Value::Str(ref s) if s == "abc"));
        assert!(matches!(value_of_text(None), Value::Null));
        assert!(truth(&Value::Int(2)).unwrap());
        assert!(!truth(&Value::Str("off".into())).unwrap());
        assert!(truth(&Value::Str("maybe".into())).is_err());
    }
}
