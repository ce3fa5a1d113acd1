//! One pgbench client: a connection and a thread that, per transaction,
//! draws a script by weight and runs its commands in order. This is the
//! one executor of scripts: the tests run it on real engines.
//!
//! - SQL: `:name` becomes the variable's value as pgbench substitutes it
//!   (`simple`: written into the text; `extended` and `prepared`: bound as
//!   a parameter, NULL when the variable is undefined, the statement
//!   prepared on its first use on the connection and kept). `\gset` stores
//!   the last result's one row, `\aset` every result's last row, under the
//!   column names the engine gives (the select list's, where it gives none).
//! - Variables live in slots numbered when the scripts are compiled, so a
//!   transaction looks no name up; values read from the engine or given
//!   with `--define` are text until an expression reads them, as pgbench's.
//! - `\set` evaluates through [`super::expr`] with the client's streams,
//!   which are pgbench 15's for the seed ([`ClientStreams`]), as are the
//!   script choice and the `--rate` schedule; `debug()` prints to standard
//!   error. `\sleep` sleeps C's `atoi` of the value's text, and ends at
//!   the test's deadline or a stop (the transaction is then abandoned,
//!   not counted). `\if`/`\elif`/`\else`/`\endif` branch. `\shell` and
//!   `\setshell` (compiled only with `--allow-shell`) join their words with
//!   the variables' values and run them through [`super::shell`], which
//!   waits without holding up the thread's other clients.
//! - A statement the engine refuses fails the test with the engine's
//!   message and the script's file:line, after rolling back so that no
//!   other client waits on its locks. A serialization failure or deadlock
//!   (the engine's retry class) rolls back and, within `--max-tries`, runs
//!   the script again from its start with the same random values (as
//!   pgbench 15+); past it, the transaction is counted failed, by class,
//!   and the client goes on. A script that ends inside a transaction
//!   aborts the client, as pgbench's does.
//! - With `--rate`, transactions are scheduled on pgbench's Poisson
//!   process ([`Worker::pause`]); the lag of each start behind its schedule
//!   is kept, and with `--latency-limit` a transaction already that late
//!   when its turn comes is skipped (skipped ones count towards
//!   `--transactions`), as pgbench counts them.
//!
//! Per command, the time it took and its count (pgbench `-r`), kept in
//! plain counters: the per-transaction path allocates nothing once every
//! variable exists (`tests/pgbench_expr_alloc.rs` counts it).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::{
    Conn, DbError, DbResult, Dialect, Driver, ErrorClass, Meaning, Outcome, Param, PsMode, Rows,
    StmtId,
};
use crate::harness::measure::{Counts, event_clock};
use crate::harness::runner::{Worker, stop_requested};

use super::expr::{ClientStreams, Env, EvalError, Expr, PgPrng, Val, Value, debug_text, unit_draw};
use super::params::{Params, Protocol};
use super::script::{
    CommandKind, Fetch, ScriptError, SleepAmount, SleepUnit, SqlPart, atoi, parse_script,
    valid_variable_name,
};
use super::shell::{Ended, ShellFault};
use super::txlog::{ClientLog, Failure, Outcome as LogOutcome, TestLog};

/// The most variables a statement may bind under `extended` and
/// `prepared`, as pgbench (its `MAX_ARGS` less the statement itself).
pub const MAX_PARAMS: usize = 255;

/// A piece of an SQL command: text, or the variable in a slot.
pub enum SqlPiece {
    Text(String),
    Var(u32),
}

/// A SQL command, ready for either protocol.
pub struct SqlCmd {
    /// The statement with `?` where each variable goes.
    param_sql: String,
    /// The variables' slots, in placeholder order.
    vars: Vec<u32>,
    /// The parts, for text substitution.
    parts: Vec<SqlPiece>,
    fetch: Fetch,
    /// Column names for `\gset`/`\aset` where the engine names none, from
    /// the select list; an error to report when it does not name them.
    columns: Result<Vec<String>, Fault>,
}

/// `\sleep`'s amount: a number, or the variable in a slot.
pub enum SleepArg {
    Int(i64),
    Var(u32),
}

/// A command, with its branches' targets resolved.
pub enum Op {
    Sql(Box<SqlCmd>),
    Set {
        slot: u32,
        expr: Expr,
    },
    Sleep {
        amount: SleepArg,
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
    /// `\shell` (`var: None`) and `\setshell`.
    Shell {
        var: Option<u32>,
        words: Vec<ShellWord>,
    },
    StartPipeline,
    SyncPipeline,
    EndPipeline,
}

/// A word of a shell command.
pub enum ShellWord {
    /// Text as written (`::name` already made `:name`).
    Text(String),
    /// `:name`: the variable in a slot, and the word as written.
    Var(u32, String),
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

/// The slots of the variables: every name a script reads or writes, and the
/// built-in ones.
#[derive(Default)]
struct Slots {
    names: Vec<String>,
    map: HashMap<String, u32>,
}

impl Slots {
    fn of(&mut self, name: &str) -> u32 {
        if let Some(&s) = self.map.get(name) {
            return s;
        }
        let s = self.names.len() as u32;
        self.names.push(name.to_string());
        self.map.insert(name.to_string(), s);
        s
    }
}

/// The built-in variables' slots (made first, in this order).
const SCALE: u32 = 0;
const CLIENT_ID: u32 = 1;
const RANDOM_SEED: u32 = 2;
const DEFAULT_SEED: u32 = 3;
const BUILT_IN: [&str; 4] = ["scale", "client_id", "random_seed", "default_seed"];

/// Every script of the run, and the weights to draw them by.
pub struct Compiled {
    pub scripts: Vec<CompiledScript>,
    /// Running sums of the weights.
    cumulative: Vec<u64>,
    total: u64,
    slots: Slots,
    /// A script pipelines statements (the engine must be able to).
    pub pipelines: bool,
}

/// Why a script cannot run (found before any client starts).
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("script {script} has no text")]
    NoText { script: String },
    /// The script does not parse (its file:line in the message).
    #[error(transparent)]
    Parse(#[from] ScriptError),
    #[error(
        "{file}:{line}: statement has too many arguments (maximum is {MAX_PARAMS}) under --protocol {protocol}: use --protocol simple, or fewer :variables"
    )]
    TooManyArguments {
        file: String,
        line: u32,
        protocol: &'static str,
    },
    #[error(
        "{file}:{line}: \\{command} runs a shell command, which rqps does only with --allow-shell: add --allow-shell (allow_shell = true in a matrix) to let this script's commands run as your user"
    )]
    ShellNotAllowed {
        file: String,
        line: u32,
        command: &'static str,
    },
    /// pgbench aborts the client when the command runs ("cannot use
    /// pipeline mode with the simple query protocol"); refused here before
    /// anything runs.
    #[error(
        "{file}:{line}: \\{command} cannot run under --protocol simple: pipelines need the extended query protocol (pgbench: cannot use pipeline mode with the simple query protocol); use --protocol extended or --protocol prepared"
    )]
    PipelineSimple {
        file: String,
        line: u32,
        command: &'static str,
    },
}

impl Compiled {
    /// The run's scripts, built-ins rendered for `d`.
    pub fn new(p: &Params, d: &dyn Dialect) -> Result<Compiled, CompileError> {
        let mut slots = Slots::default();
        for n in BUILT_IN {
            slots.of(n);
        }
        for k in p.defines.keys() {
            slots.of(k);
        }
        let mut scripts = Vec::new();
        for s in &p.scripts {
            let (source, text) = match (&s.builtin, &s.text) {
                (Some(b), _) => (b.name().to_string(), b.text(d)),
                (None, Some(t)) => (s.path.clone().unwrap_or_else(|| s.name.clone()), t.clone()),
                (None, None) => {
                    return Err(CompileError::NoText {
                        script: s.name.clone(),
                    });
                }
            };
            scripts.push(compile(
                &s.name,
                &source,
                s.weight,
                &text,
                (p.protocol, p.allow_shell),
                &mut slots,
            )?);
        }
        Ok(Compiled::of(scripts, slots))
    }

    fn of(scripts: Vec<CompiledScript>, slots: Slots) -> Compiled {
        let mut cumulative = Vec::with_capacity(scripts.len());
        let mut total = 0u64;
        for s in &scripts {
            total += u64::from(s.weight);
            cumulative.push(total);
        }
        let pipelines = scripts
            .iter()
            .any(|s| s.ops.iter().any(|o| matches!(o, Op::StartPipeline)));
        Compiled {
            scripts,
            cumulative,
            total,
            slots,
            pipelines,
        }
    }

    /// The script pgbench's `chooseScript` picks with `rng`: a uniform draw
    /// in `[0, total weight)`, the first script whose running sum exceeds
    /// it; no draw when there is one script.
    #[inline]
    pub fn choose(&self, rng: &mut PgPrng) -> usize {
        if self.scripts.len() == 1 {
            return 0;
        }
        let x = super::expr::uniform_range(rng, 0, self.total - 1);
        self.cumulative
            .iter()
            .position(|&c| x < c)
            .unwrap_or(self.scripts.len() - 1)
    }

    /// The slot of the variable `name`, when a script or the run names it.
    fn slot(&self, name: &str) -> Option<u32> {
        self.slots.map.get(name).copied()
    }
}

/// Checks a script file as it will run under `protocol` (parse errors,
/// more bound variables than pgbench allows, and a shell command without
/// `allow_shell`), before anything connects.
pub fn check_script(
    path: &str,
    text: &str,
    protocol: Protocol,
    allow_shell: bool,
) -> Result<(), CompileError> {
    compile(
        "check",
        path,
        1,
        text,
        (protocol, allow_shell),
        &mut Slots::default(),
    )
    .map(|_| ())
}

/// Parses `text` into the commands a client runs.
fn compile(
    name: &str,
    source: &str,
    weight: u32,
    text: &str,
    (protocol, allow_shell): (Protocol, bool),
    slots: &mut Slots,
) -> Result<CompiledScript, CompileError> {
    let script = parse_script(source, text)?;
    let mut ops = Vec::with_capacity(script.commands.len());
    let mut lines = Vec::new();
    let mut shown = Vec::new();
    let mut slot_of = |n: &str| slots.of(n);
    for c in script.commands {
        lines.push(c.line);
        let one_line = c.text.split_whitespace().collect::<Vec<_>>().join(" ");
        shown.push(one_line.chars().take(120).collect::<String>());
        ops.push(match c.kind {
            CommandKind::Sql { parts, fetch } => {
                let mut param_sql = String::new();
                let mut vars = Vec::new();
                let mut out = Vec::with_capacity(parts.len());
                for p in parts {
                    match p {
                        SqlPart::Text(t) => {
                            param_sql.push_str(&t);
                            out.push(SqlPiece::Text(t));
                        }
                        SqlPart::Var(v) => {
                            param_sql.push('?');
                            let s = slot_of(&v);
                            vars.push(s);
                            out.push(SqlPiece::Var(s));
                        }
                    }
                }
                if protocol != Protocol::Simple && vars.len() > MAX_PARAMS {
                    return Err(CompileError::TooManyArguments {
                        file: source.to_string(),
                        line: c.line,
                        protocol: protocol.name(),
                    });
                }
                let columns = if matches!(fetch, Fetch::None) {
                    Ok(Vec::new())
                } else {
                    select_columns(&param_sql)
                };
                Op::Sql(Box::new(SqlCmd {
                    param_sql,
                    vars,
                    parts: out,
                    fetch,
                    columns,
                }))
            }
            CommandKind::Set { var, mut expr } => {
                expr.resolve(&mut slot_of);
                Op::Set {
                    slot: slot_of(&var),
                    expr,
                }
            }
            CommandKind::Sleep { amount, unit } => Op::Sleep {
                amount: match amount {
                    SleepAmount::Int(n) => SleepArg::Int(n),
                    SleepAmount::Var(v) => SleepArg::Var(slot_of(&v)),
                },
                unit,
            },
            CommandKind::If { mut cond, next } => {
                cond.resolve(&mut slot_of);
                Op::If { expr: cond, next }
            }
            CommandKind::Elif {
                mut cond,
                next,
                end,
            } => {
                cond.resolve(&mut slot_of);
                Op::Elif {
                    expr: cond,
                    next,
                    end,
                }
            }
            CommandKind::Else { end } => Op::Else { end },
            CommandKind::Endif => Op::Endif,
            CommandKind::Shell { var, words } => {
                if !allow_shell {
                    return Err(CompileError::ShellNotAllowed {
                        file: source.to_string(),
                        line: c.line,
                        command: if var.is_some() { "setshell" } else { "shell" },
                    });
                }
                Op::Shell {
                    var: var.map(|v| slot_of(&v)),
                    words: words
                        .into_iter()
                        .map(|w| shell_word(w, &mut slot_of))
                        .collect(),
                }
            }
            CommandKind::StartPipeline | CommandKind::SyncPipeline | CommandKind::EndPipeline => {
                let (op, command) = match c.kind {
                    CommandKind::StartPipeline => (Op::StartPipeline, "startpipeline"),
                    CommandKind::SyncPipeline => (Op::SyncPipeline, "syncpipeline"),
                    _ => (Op::EndPipeline, "endpipeline"),
                };
                if protocol == Protocol::Simple {
                    return Err(CompileError::PipelineSimple {
                        file: source.to_string(),
                        line: c.line,
                        command,
                    });
                }
                op
            }
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

/// A word of `\shell` as pgbench reads it: `:name` a variable, `::text`
/// the text `:text`, anything else text.
fn shell_word(w: String, slot_of: &mut impl FnMut(&str) -> u32) -> ShellWord {
    match w.strip_prefix(':') {
        Some(rest) if rest.starts_with(':') => ShellWord::Text(rest.to_string()),
        Some(name) => ShellWord::Var(slot_of(name), w.clone()),
        None => ShellWord::Text(w),
    }
}

/// What went wrong in a command, before its file:line is added.
#[derive(Clone, Debug, thiserror::Error)]
pub enum Fault {
    #[error("\\gset and \\aset need a statement that returns rows (SELECT or RETURNING)")]
    NoRows,
    #[error("\\gset and \\aset cannot name the columns of '{item}': list them (SELECT a, b ...)")]
    AllColumns { item: String },
    /// An expression (or a condition's text) that cannot be evaluated.
    #[error(transparent)]
    Eval(#[from] EvalError),
}

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
        return Err(Fault::NoRows);
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
        return Err(Fault::AllColumns {
            item: item.to_string(),
        });
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

/// What evaluation sees of a client.
struct ClientEnv<'a> {
    vars: &'a [Option<Value>],
    rng: &'a mut PgPrng,
    /// Client, script and 1-based command, for `debug()`.
    at: (usize, usize, usize),
}

impl Env for ClientEnv<'_> {
    fn var(&self, _name: &str) -> Option<&Value> {
        // Every name has a slot.
        None
    }
    #[inline]
    fn slot(&self, slot: u32) -> Option<&Value> {
        self.vars.get(slot as usize)?.as_ref()
    }
    #[inline]
    fn random_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }
    fn debug(&mut self, v: Val) {
        let (client, script, command) = self.at;
        eprintln!(
            "debug(client={client},script={script},command={command}): {}",
            debug_text(v)
        );
    }
}

/// An error of command `op` of script `s`, with its file:line.
fn at(s: &CompiledScript, op: usize, e: DbError) -> DbError {
    DbError {
        message: format!("{}:{}: {}", s.source, s.lines[op], e.message),
        ..e
    }
}

fn fatal_at(s: &CompiledScript, op: usize, msg: impl std::fmt::Display) -> DbError {
    DbError::fatal(format!("{}:{}: {msg}", s.source, s.lines[op]))
}

/// The pacing of a client under `--rate`: pgbench's Poisson schedule.
struct Pace {
    /// Mean microseconds between starts (pgbench's `throttle_delay`).
    mean_us: f64,
    next_ns: u64,
    rng: PgPrng,
}

impl Pace {
    /// The next wait in nanoseconds, as pgbench's `getPoissonRand` draws it
    /// (whole microseconds).
    fn wait_ns(&mut self) -> u64 {
        let uniform = 1.0 - unit_draw(&mut self.rng);
        ((-uniform.ln() * self.mean_us + 0.5) as u64).saturating_mul(1000)
    }
}

/// One client.
pub struct Client {
    driver: Arc<dyn Driver>,
    conn: Box<dyn Conn>,
    c: Arc<Compiled>,
    id: usize,
    protocol: Protocol,
    rollback: &'static str,
    /// Per script, per command: the statement once prepared.
    stmts: Vec<Vec<Option<StmtId>>>,
    /// The variables, by slot.
    vars: Vec<Option<Value>>,
    /// `random()` and the others (pgbench's per-client stream).
    rng: PgPrng,
    /// The script choice (pgbench's per-thread stream).
    choose: PgPrng,
    text: String,
    key: String,
    rows: Rows,
    param_text: Vec<String>,
    current: usize,
    max_tries: u32,
    budget: Option<u64>,
    done: u64,
    pace: Option<Pace>,
    latency_limit_ns: Option<u64>,
    scheduled: Option<u64>,
    /// The test's end as a clock reading (`\sleep` ends there), learnt from
    /// [`Worker::pause`]; during the warm-up, the warm-up's end plus the
    /// measured duration.
    deadline_ns: u64,
    duration_ns: u64,
    warming: bool,
    /// The last event was cut short by the deadline or a stop.
    cut: bool,
    /// Between `\startpipeline` and `\endpipeline`: SQL commands are
    /// queued on the connection, their answers read at the end.
    piped: bool,
    pub tally: Vec<ScriptTally>,
    pub failures: FailureTally,
    pub rate: RateTally,
    /// pgbench's transaction log (`--log`), when asked for.
    log: Option<ClientLog>,
    /// The script drawn for the next transaction while its schedule was
    /// being skipped (a skipped transaction is logged with it, as pgbench).
    next_script: Option<usize>,
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
        let streams = ClientStreams::of(p.seed, clients, id);
        let mut vars = vec![None; c.slots.names.len()];
        vars[SCALE as usize] = Some(Value::Int(i64::from(p.scale)));
        vars[CLIENT_ID as usize] = Some(Value::Int(id as i64));
        vars[RANDOM_SEED as usize] = Some(Value::Int(p.seed as i64));
        vars[DEFAULT_SEED as usize] = Some(Value::Int(streams.default_seed));
        // As pgbench: a definition is text, and overrides a built-in.
        for (k, v) in &p.defines {
            if let Some(s) = c.slot(k) {
                vars[s as usize] = Some(Value::Str(v.clone()));
            }
        }
        let pace = p.rate.map(|r| Pace {
            mean_us: 1e6 * clients as f64 / r,
            next_ns: 0,
            rng: streams.throttle.clone(),
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
            id,
            protocol: p.protocol,
            rollback,
            vars,
            rng: streams.func,
            choose: streams.choose,
            text: String::new(),
            key: String::new(),
            rows: Rows::default(),
            param_text: Vec::new(),
            current: 0,
            max_tries: p.max_tries,
            budget: p.transactions,
            done: 0,
            pace,
            latency_limit_ns: p.latency_limit_ms.map(|ms| (ms * 1e6) as u64),
            scheduled: None,
            deadline_ns: u64::MAX,
            duration_ns: (p.secs * 1e9).min(u64::MAX as f64) as u64,
            warming: true,
            cut: false,
            piped: false,
            tally,
            failures: FailureTally::default(),
            rate: RateTally::default(),
            log: None,
            next_script: None,
        })
    }

    /// Logs this client's transactions into `log` (its thread's file), with
    /// pgbench's `--sampling-rate` stream for the seed.
    pub fn log_into(&mut self, log: &TestLog, p: &Params, clients: usize) {
        let sample = ClientStreams::of(p.seed, clients, self.id).sample;
        self.log = Some(log.client(self.id, sample));
    }

    /// Runs script `s` once from its start: `Err` with the index of the
    /// command that failed. `Ok(false)`: a `\sleep` was cut short by the
    /// deadline or a stop, and the rest of the script did not run.
    fn run_script(&mut self, s: usize, counts: &mut Counts) -> Result<bool, (DbError, usize)> {
        let clock = event_clock();
        let c = self.c.clone();
        let script = &c.scripts[s];
        let mut pc = 0;
        let mut entering = false;
        let mut t0 = clock.now_ns();
        while pc < script.ops.len() {
            let mut next = pc + 1;
            let mut enters = false;
            match &script.ops[pc] {
                Op::Sql(cmd) => {
                    if self.piped && !matches!(cmd.fetch, Fetch::None) {
                        // As pgbench: the rows would come only at the end.
                        let which = if matches!(cmd.fetch, Fetch::Gset(_)) {
                            "gset"
                        } else {
                            "aset"
                        };
                        let e = format!(
                            "\\{which} is not allowed in pipeline mode (the rows come only at \\endpipeline): move the query before \\startpipeline or after \\endpipeline"
                        );
                        return Err((fatal_at(script, pc, e), pc));
                    }
                    let o = self.sql(s, pc, cmd).map_err(|e| (at(script, pc, e), pc))?;
                    if let Some(o) = o {
                        counts.record(o);
                    }
                }
                Op::StartPipeline => {
                    if self.piped {
                        let e = "\\startpipeline: already in pipeline mode (end it with \\endpipeline first)";
                        return Err((fatal_at(script, pc, e), pc));
                    }
                    self.conn
                        .pipeline_start()
                        .map_err(|e| (at(script, pc, e), pc))?;
                    self.piped = true;
                }
                Op::SyncPipeline | Op::EndPipeline => {
                    let end = matches!(script.ops[pc], Op::EndPipeline);
                    if !self.piped {
                        let e = format!(
                            "\\{}: not in pipeline mode (start one with \\startpipeline)",
                            if end { "endpipeline" } else { "syncpipeline" }
                        );
                        return Err((fatal_at(script, pc, e), pc));
                    }
                    let r = if end {
                        self.piped = false;
                        self.conn.pipeline_end(&mut |o| counts.record(o))
                    } else {
                        self.conn.pipeline_sync()
                    };
                    r.map_err(|e| (at(script, pc, e), pc))?;
                }
                Op::Set { slot, expr } => {
                    let v = self
                        .eval(expr, s, pc)
                        .map_err(|m| (fatal_at(script, pc, m), pc))?;
                    self.vars[*slot as usize] = Some(v);
                }
                Op::Sleep { amount, unit } => {
                    let n = match amount {
                        SleepArg::Int(n) => *n,
                        SleepArg::Var(slot) => match &self.vars[*slot as usize] {
                            Some(Value::Int(n)) => *n,
                            Some(v) => {
                                // pgbench: atoi of the variable's text.
                                self.text.clear();
                                v.write_sql_text(&mut self.text);
                                atoi(&self.text).unwrap_or(0)
                            }
                            None => {
                                let e = format!(
                                    "\\sleep: undefined variable \"{}\" (set it with \\set, \\gset or --define)",
                                    c.slots.names[*slot as usize]
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
                    if !self.sleep_us(us) {
                        return Ok(false);
                    }
                }
                Op::If { expr, next: n } => {
                    (next, enters) = self.branch(script, s, pc, expr, *n)?;
                }
                Op::Elif { expr, next: n, end } => {
                    (next, enters) = if entering {
                        self.branch(script, s, pc, expr, *n)?
                    } else {
                        (end + 1, false)
                    };
                }
                Op::Else { end } => {
                    next = if entering { pc + 1 } else { end + 1 };
                }
                Op::Endif => {}
                Op::Shell { var, words } => {
                    if !self
                        .shell(*var, words)
                        .map_err(|m| (fatal_at(script, pc, m), pc))?
                    {
                        return Ok(false);
                    }
                }
            }
            // A false \if or \elif enters the \elif or \else it goes to;
            // reaching one otherwise leaves the \if (the branch before it was
            // taken). Told by the condition, not by where control went: a
            // false \if whose own branch is empty goes to the very next
            // command, as a taken branch would.
            entering = enters;
            let t1 = clock.now_ns();
            let op = &mut self.tally[s].ops[pc];
            op.ns += t1.saturating_sub(t0);
            op.count += 1;
            t0 = t1;
            pc = next;
        }
        Ok(true)
    }

    /// Sleeps `us` microseconds, but not past the test's deadline nor after
    /// a stop (SIGTERM, Ctrl-C): false when it ended early for either.
    fn sleep_us(&mut self, us: i64) -> bool {
        if us <= 0 {
            return true;
        }
        let clock = event_clock();
        let now = clock.now_ns();
        let want = now.saturating_add((us as u64).saturating_mul(1000));
        let until = want.min(self.deadline_ns);
        // Slices short enough that a stop is seen at once.
        const SLICE_NS: u64 = 20_000_000;
        loop {
            if stop_requested() {
                return false;
            }
            let now = clock.now_ns();
            if now >= until {
                return want <= self.deadline_ns;
            }
            crate::harness::wait::sleep(Duration::from_nanos((until - now).min(SLICE_NS)));
        }
    }

    /// Where an `\if`/`\elif` on `expr` goes: the next command when true,
    /// else its next branch (`\endif`: past it); and whether that next
    /// branch (an `\elif` or `\else`) is to be entered.
    fn branch(
        &mut self,
        script: &CompiledScript,
        s: usize,
        pc: usize,
        expr: &Expr,
        next: usize,
    ) -> Result<(usize, bool), (DbError, usize)> {
        let v = self
            .eval(expr, s, pc)
            .map_err(|m| (fatal_at(script, pc, m), pc))?;
        let t = truth(&v).map_err(|m| (fatal_at(script, pc, m), pc))?;
        Ok(if t {
            (pc + 1, false)
        } else if matches!(script.ops.get(next), Some(Op::Endif)) {
            (next + 1, false)
        } else {
            (next, true)
        })
    }

    /// Runs a `\shell` or `\setshell` ([`super::shell`]): false when the
    /// deadline or a stop cut it short.
    fn shell(&mut self, var: Option<u32>, words: &[ShellWord]) -> Result<bool, ShellFault> {
        let cmd = if var.is_some() { "setshell" } else { "shell" };
        self.text.clear();
        for (i, w) in words.iter().enumerate() {
            if i > 0 {
                self.text.push(' ');
            }
            match w {
                ShellWord::Text(t) => self.text.push_str(t),
                ShellWord::Var(slot, word) => match &self.vars[*slot as usize] {
                    Some(v) => v.write_sql_text(&mut self.text),
                    None => {
                        return Err(ShellFault::Undefined {
                            cmd,
                            word: word.clone(),
                        });
                    }
                },
            }
        }
        if self.text.len() > super::shell::MAX_COMMAND_BYTES {
            return Err(ShellFault::TooLong {
                cmd,
                bytes: self.text.len(),
            });
        }
        let fail = |source| ShellFault::Run { cmd, source };
        Ok(match var {
            None => match super::shell::shell(&self.text, self.deadline_ns).map_err(fail)? {
                Ended::Done(()) => true,
                Ended::Cut => false,
            },
            Some(slot) => {
                match super::shell::setshell(&self.text, self.deadline_ns).map_err(fail)? {
                    Ended::Done(v) => {
                        self.vars[slot as usize] = Some(Value::Int(i64::from(v)));
                        true
                    }
                    Ended::Cut => false,
                }
            }
        })
    }

    fn eval(&mut self, expr: &Expr, s: usize, pc: usize) -> Result<Value, Fault> {
        let mut env = ClientEnv {
            vars: &self.vars,
            rng: &mut self.rng,
            at: (self.id, s, pc + 1),
        };
        expr.eval(&mut env).map_err(Fault::from)
    }

    /// Runs one SQL command, storing what `\gset`/`\aset` ask for; in a
    /// pipeline, queues it (`None`: its outcome comes at the end).
    fn sql(&mut self, s: usize, pc: usize, cmd: &SqlCmd) -> DbResult<Option<Outcome>> {
        let fetch = !matches!(cmd.fetch, Fetch::None);
        let outcome = match self.protocol {
            Protocol::Simple => {
                self.text.clear();
                for part in &cmd.parts {
                    match part {
                        SqlPiece::Text(t) => self.text.push_str(t),
                        SqlPiece::Var(v) => match &self.vars[*v as usize] {
                            Some(Value::Int(i)) => {
                                let _ = write!(self.text, "{i}");
                            }
                            Some(val) => val.write_sql_text(&mut self.text),
                            // As pgbench: an undefined variable stays as written.
                            None => {
                                self.text.push(':');
                                self.text.push_str(&self.c.slots.names[*v as usize]);
                            }
                        },
                    }
                }
                Some(if fetch {
                    self.conn.query_into(&self.text, &mut self.rows)?
                } else {
                    self.conn.query(&self.text)?
                })
            }
            Protocol::Extended | Protocol::Prepared => {
                let n = cmd.vars.len();
                while self.param_text.len() < n {
                    // Room for any number's text (`%.15g` takes at most 23).
                    self.param_text.push(String::with_capacity(32));
                }
                // Integers bind as integers, the rest as text (written
                // first, while the texts can be borrowed to change); an
                // undefined variable binds NULL, as pgbench's.
                for (i, v) in cmd.vars.iter().enumerate() {
                    if let Some(val) = &self.vars[*v as usize]
                        && !matches!(val, Value::Int(_))
                    {
                        let t = &mut self.param_text[i];
                        t.clear();
                        val.write_sql_text(t);
                    }
                }
                let (vars, texts) = (&self.vars, &self.param_text);
                let param = |i: usize| match &vars[cmd.vars[i] as usize] {
                    Some(Value::Int(x)) => Param::Int(*x),
                    Some(_) => Param::Text(&texts[i]),
                    None => Param::Null,
                };
                let rows = fetch.then_some(&mut self.rows);
                let slot = &mut self.stmts[s][pc];
                let conn = self.conn.as_mut();
                let how = (self.protocol, self.piped);
                // The parameters on the stack, in an array no longer than
                // most statements need: every slot of it is written, and
                // with tens of connections a thread each line written is
                // one its cache lost since this connection last ran.
                let sql = &cmd.param_sql;
                if n <= 4 {
                    on_stack::<4, _>(n, param, |p| bound(conn, slot, how, sql, p, rows))?
                } else if n <= 16 {
                    on_stack::<16, _>(n, param, |p| bound(conn, slot, how, sql, p, rows))?
                } else {
                    let v: Vec<Param<'_>> = (0..n).map(param).collect();
                    bound(conn, slot, how, &cmd.param_sql, &v, rows)?
                }
            }
        };
        if fetch {
            self.store_rows(cmd)?;
        }
        Ok(outcome)
    }

    /// `\gset`: the last result's one row; `\aset`: each result's last row
    /// (a result without rows sets nothing). Values are kept as text.
    fn store_rows(&mut self, cmd: &SqlCmd) -> DbResult<()> {
        let (prefix, one) = match &cmd.fetch {
            Fetch::Gset(p) => (p.as_str(), true),
            Fetch::Aset(p) => (p.as_str(), false),
            Fetch::None => return Ok(()),
        };
        let sets = self.rows.sets();
        let first = if one { sets - 1 } else { 0 };
        for k in first..sets {
            let set = self.rows.set(k);
            let n = set.len();
            if one && n != 1 {
                return Err(DbError::fatal(format!("\\gset: expected one row, got {n}")));
            }
            if n == 0 {
                continue;
            }
            for col in 0..set.width() {
                self.key.clear();
                self.key.push_str(prefix);
                match set.name(col) {
                    Some(name) => self.key.push_str(name),
                    None => {
                        let names = cmd
                            .columns
                            .as_ref()
                            .map_err(|m| DbError::fatal(m.to_string()))?;
                        match names.get(col) {
                            Some(name) => self.key.push_str(name),
                            None => {
                                return Err(DbError::fatal(format!(
                                    "the select list names {} column(s) ({}) but the statement returned {}",
                                    names.len(),
                                    names.join(", "),
                                    set.width()
                                )));
                            }
                        }
                    }
                }
                if !valid_variable_name(&self.key) {
                    return Err(DbError::fatal(format!(
                        "error storing into variable {}: invalid variable name (letters, digits and _, not starting with a digit; name the column with AS)",
                        self.key
                    )));
                }
                // A name no script reads is not kept: nothing could read it.
                let Some(slot) = self.c.slot(&self.key) else {
                    continue;
                };
                let v = set.get(n - 1, col);
                let slot = &mut self.vars[slot as usize];
                match (v, slot) {
                    (None, slot) => *slot = Some(Value::Null),
                    (Some(t), Some(Value::Str(old))) => {
                        old.clear();
                        old.push_str(t);
                    }
                    (Some(t), slot) => *slot = Some(Value::Str(t.to_string())),
                }
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

    /// Ends a client that cannot go on: rolls back first, so that no other
    /// client waits on the locks it holds until a timeout.
    fn abort(&mut self, e: DbError) -> DbError {
        let _ = self.roll_back();
        e
    }
}

/// `f` of the first `n` (at most `N`) of `param`'s parameters, gathered in an
/// array on the stack.
fn on_stack<'p, const N: usize, R>(
    n: usize,
    param: impl Fn(usize) -> Param<'p>,
    f: impl FnOnce(&[Param<'p>]) -> R,
) -> R {
    let mut arr = [Param::Null; N];
    for (i, p) in arr.iter_mut().enumerate().take(n) {
        *p = param(i);
    }
    f(&arr[..n])
}

/// Executes a statement with bound parameters: `extended` sends it to be
/// parsed anew each time where the engine's protocol can (PostgreSQL's
/// unnamed statement), else, as `prepared`, prepares it on first use and
/// keeps it in `slot`. In a pipeline (`how.1`) it is queued instead.
fn bound(
    conn: &mut dyn Conn,
    slot: &mut Option<StmtId>,
    how: (Protocol, bool),
    sql: &str,
    params: &[Param<'_>],
    mut rows: Option<&mut Rows>,
) -> DbResult<Option<Outcome>> {
    let (protocol, piped) = how;
    if piped {
        let prepared = (protocol == Protocol::Prepared).then_some(slot);
        conn.pipeline_queue(sql, params, prepared)?;
        return Ok(None);
    }
    if protocol == Protocol::Extended
        && slot.is_none()
        && let Some(r) = conn.execute_unprepared(sql, params, rows.as_deref_mut())
    {
        return r.map(Some);
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
    .map(Some)
}

/// The class a failed transaction is counted in.
fn failure_class(e: &DbError, f: &mut FailureTally) {
    match e.meaning() {
        Meaning::Serialization => f.serialization += 1,
        Meaning::Deadlock => f.deadlock += 1,
        _ => f.other += 1,
    }
}

impl Worker for Client {
    fn event(&mut self, c: &mut Counts) -> DbResult<()> {
        let clock = event_clock();
        let start = clock.now_ns();
        self.done += 1;
        self.cut = false;
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
        let s = match self.next_script.take() {
            Some(s) => s,
            None => self.c.choose(&mut self.choose),
        };
        self.current = s;
        let replay = (self.max_tries > 1).then(|| self.rng.clone());
        let mut tries = 1;
        loop {
            let ran = self.run_script(s, c);
            if self.piped && !matches!(ran, Ok(true)) {
                // Failed or cut short inside a pipeline: nothing queued went out.
                self.conn.pipeline_discard();
                self.piped = false;
            }
            match ran {
                Ok(true) => break,
                Ok(false) => {
                    // Cut short: roll back what it began, count nothing.
                    self.cut = true;
                    self.roll_back()?;
                    return Ok(());
                }
                Err((e, op)) => {
                    self.tally[s].ops[op].failures += 1;
                    // A lost connection is the harness's to count and cure;
                    // anything else ends the test.
                    if e.class != ErrorClass::Retry {
                        return Err(if e.class == ErrorClass::Fatal {
                            self.abort(e)
                        } else {
                            e
                        });
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
                    if let Some(log) = self.log.as_mut() {
                        let class = match e.meaning() {
                            Meaning::Serialization => Failure::Serialization,
                            Meaning::Deadlock => Failure::Deadlock,
                            _ => Failure::Other,
                        };
                        log.record(clock.now_ns(), s, tries, LogOutcome::Failed(class));
                    }
                    return Err(e);
                }
            }
        }
        // As pgbench: a script that ends inside a pipeline aborts the
        // client; what it queued never went out.
        if self.piped {
            self.conn.pipeline_discard();
            self.piped = false;
            let script = &self.c.scripts[s];
            let e = fatal_at(
                script,
                script.ops.len() - 1,
                format_args!(
                    "client {} aborted: end of script reached with pipeline open (end it with \\endpipeline)",
                    self.id
                ),
            );
            return Err(self.abort(e));
        }
        // As pgbench: a script that ends inside a transaction aborts the
        // client (it would otherwise hold its locks and its snapshot).
        if self.conn.in_transaction() == Some(true) {
            let script = &self.c.scripts[s];
            let last = script.ops.len() - 1;
            let e = fatal_at(
                script,
                last,
                format_args!(
                    "client {} aborted: end of script reached without completing the last transaction (end the script with COMMIT or END)",
                    self.id
                ),
            );
            return Err(self.abort(e));
        }
        if tries > 1 {
            self.tally[s].retried += 1;
        }
        if self.latency_limit_ns.is_none() && self.log.is_none() {
            return Ok(());
        }
        let end = clock.now_ns();
        if let Some(limit) = self.latency_limit_ns
            && end.saturating_sub(from) > limit
        {
            self.rate.late += 1;
        }
        if let Some(log) = self.log.as_mut() {
            // Whole microseconds, as pgbench's clock reads them.
            let outcome = LogOutcome::Done {
                latency_us: (end / 1000).saturating_sub(from / 1000),
                lag_us: (start / 1000).saturating_sub(from / 1000),
            };
            log.record(end, s, tries, outcome);
        }
        Ok(())
    }

    fn recover(&mut self, err: &DbError) -> DbResult<()> {
        match err.class {
            // Rolled back in `event` already.
            ErrorClass::Retry => Ok(()),
            ErrorClass::Reconnect => {
                self.piped = false;
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
        self.deadline_ns = if self.warming {
            deadline_ns.saturating_add(self.duration_ns)
        } else {
            deadline_ns
        };
        // The log's writes, outside the transactions' timing.
        let wrote = self.log.as_mut().is_some_and(|l| l.flush());
        let Some(pace) = self.pace.as_mut() else {
            return wrote;
        };
        let clock = event_clock();
        let now = clock.now_ns();
        if pace.next_ns == 0 {
            pace.next_ns = now;
        }
        pace.next_ns += pace.wait_ns();
        if let Some(limit) = self.latency_limit_ns {
            while pace.next_ns + limit < now && self.budget.is_none_or(|b| self.done < b) {
                self.rate.skipped += 1;
                self.done += 1;
                pace.next_ns += pace.wait_ns();
                if let Some(log) = self.log.as_mut() {
                    let s = *self
                        .next_script
                        .get_or_insert_with(|| self.c.choose(&mut self.choose));
                    log.record(now, s, 1, LogOutcome::Skipped);
                }
            }
            // As pgbench: skipped transactions count towards
            // --transactions; a budget spent by skipping runs no more.
            if self.budget.is_some_and(|b| self.done >= b) {
                return true;
            }
        }
        let until = pace.next_ns.min(deadline_ns);
        if until > now {
            crate::harness::wait::sleep(Duration::from_nanos(until - now));
        }
        self.scheduled = Some(pace.next_ns);
        true
    }

    fn warmed_up(&mut self) {
        self.warming = false;
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
        if let Some(log) = self.log.as_mut() {
            log.start();
        }
    }

    #[inline]
    fn finished(&self) -> bool {
        self.budget.is_some_and(|b| self.done >= b)
    }

    #[inline]
    fn abandoned(&self) -> bool {
        self.cut
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
    let mut slots = Slots::default();
    for n in BUILT_IN {
        slots.of(n);
    }
    for k in p.defines.keys() {
        slots.of(k);
    }
    let script = compile(
        "init",
        path,
        1,
        text,
        (Protocol::Simple, p.allow_shell),
        &mut slots,
    )
    .map_err(|e| DbError::fatal(e.to_string()))?;
    let c = Arc::new(Compiled::of(vec![script], slots));
    let mut one = p.clone();
    one.protocol = Protocol::Simple;
    one.rate = None;
    one.max_tries = 1;
    one.transactions = Some(1);
    let mut client = Client::new(driver, c, &one, 1, 0)?;
    let mut counts = Counts::default();
    client.event(&mut counts)
}

/// A value as a condition, as pgbench reads one.
fn truth(v: &Value) -> Result<bool, Fault> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Int(i) => Ok(*i != 0),
        Value::Double(d) => Ok(*d != 0.0),
        Value::Null => Ok(false),
        Value::Str(s) => super::expr::parse_text_value("condition", s)
            .map(Val::truth)
            .map_err(Fault::from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiled(weights: &[u32]) -> Compiled {
        let mut slots = Slots::default();
        Compiled::of(
            weights
                .iter()
                .enumerate()
                .map(|(i, &w)| {
                    compile(
                        &format!("s{i}"),
                        "x",
                        w,
                        "SELECT 1;\n",
                        (Protocol::Simple, false),
                        &mut slots,
                    )
                    .unwrap()
                })
                .collect(),
            slots,
        )
    }

    #[test]
    fn weights_are_drawn_within_one_point_over_100000_draws() {
        let c = compiled(&[1, 3, 6, 0]);
        let mut rng = PgPrng::seeded(42);
        let mut n = [0u64; 4];
        for _ in 0..100_000 {
            n[c.choose(&mut rng)] += 1;
        }
        for (i, want) in [10.0, 30.0, 60.0, 0.0].iter().enumerate() {
            let got = n[i] as f64 / 1000.0;
            assert!((got - want).abs() < 1.0, "script {i}: {got} % for {want} %");
        }
        assert_eq!(n[3], 0, "weight 0 is never drawn");
        // One script: no draw, as pgbench.
        let one = compiled(&[5]);
        let mut a = PgPrng::seeded(1);
        assert_eq!(one.choose(&mut a), 0);
        assert_eq!(a.next_u64(), PgPrng::seeded(1).next_u64());
    }

    #[test]
    fn branches_resolve_to_the_next_branch_and_the_endif() {
        let s = compile(
            "b",
            "b.sql",
            1,
            "\\if :a\nSELECT 1;\n\\elif :b\nSELECT 2;\n\\else\nSELECT 3;\n\\endif\nSELECT 4;\n",
            (Protocol::Simple, false),
            &mut Slots::default(),
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
    fn more_than_255_bound_variables_are_refused_as_pgbench_refuses_them() {
        let sql = |n: usize| format!("\\set i 0\nSELECT least({});\n", vec![":i"; n].join(", "));
        let mut slots = Slots::default();
        for proto in [Protocol::Prepared, Protocol::Extended] {
            assert!(compile("t", "t.sql", 1, &sql(255), (proto, false), &mut slots).is_ok());
            let e = compile("t", "t.sql", 1, &sql(256), (proto, false), &mut slots)
                .err()
                .unwrap()
                .to_string();
            assert!(
                e.starts_with("t.sql:2: statement has too many arguments (maximum is 255)"),
                "{e}"
            );
        }
        assert!(
            compile(
                "t",
                "t.sql",
                1,
                &sql(256),
                (Protocol::Simple, false),
                &mut slots
            )
            .is_ok()
        );
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
}
