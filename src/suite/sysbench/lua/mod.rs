//! sysbench Lua scripts, unchanged, on rqps's clients and harness:
//! `rqps run --suite sysbench --script FILE.lua -- [--name=value ...]
//! [command ...]`.
//!
//! The contract:
//! - The script is loaded and checked when the run is planned, before any
//!   engine opens: a syntax error (file and line), a use of a sysbench API
//!   rqps lacks (its name), an option the script does not declare, an
//!   option value of the wrong type, or a command it does not have, is one
//!   line and exit 2 ([`check`]).
//! - Commands run in the order given (default: `prepare`, `run`,
//!   `cleanup`, those the script has; `--skip-prepare` leaves out `prepare`). A command from
//!   `sysbench.cmdline.commands` wins over the global function of the same
//!   name, as in sysbench; a parallel one runs on as many threads (each its
//!   own state and `sysbench.tid`) as the largest thread count.
//! - `run` is one measured test per thread count, through the harness like
//!   every other suite's: a [`worker::LuaWorker`] (its own Lua state) per
//!   thread; `init()` and `done()` in a state of their own around them.
//! - Statements are counted as sysbench counts them ([`sql`]); sysbench's
//!   driver name (`mysql`, `pgsql`) comes from the engine's dialect, and an
//!   engine without one is refused before anything runs.
//! - `sysbench.rand` draws through one adapter ([`rand`]).

pub mod fail;
pub mod options;
pub mod plan;
pub mod rand;
pub mod script;
pub mod sql;
pub mod state;
pub mod worker;

pub use fail::Fail;
pub use plan::{SYSBENCH_DIR, ScriptPlan, VERSION};
pub use script::Script;

use std::sync::{Arc, Mutex};

use mlua::{Function, Lua, Value};

use crate::engine::{DbError, PsMode};
use crate::error::{Error, usage};
use crate::harness::measure::Counts;
use crate::harness::runner::stop_requested;
use crate::harness::{Harness, Per, RunEnd, TestFailure, TimedStep, Timing};
use crate::results::TestResult;
use crate::suite::sysbench::rng::{SbDist, SbRandParams, SbRandType};
use options::OptValue;

/// The most a script file may be.
const MAX_SCRIPT_BYTES: u64 = 4 << 20;

/// What sysbench 1.0 offers scripts that rqps does not: a script that names
/// one is refused when planned.
const MISSING: &[&str] = &[
    "sysbench.db.",
    "sysbench.histogram",
    "sysbench.report_csv",
    "sysbench.report_json",
    "sysbench.report_default",
    "sysbench.cmdline.print_test_options",
    "db_query(",
    "db_connect(",
];

/// The first use of an API rqps lacks in `text`, as `file:line: name`.
fn missing_api(path: &str, text: &str) -> Option<String> {
    for (i, line) in text.lines().enumerate() {
        let code = line.split("--").next().unwrap_or("");
        for m in MISSING {
            if let Some(at) = code.find(m) {
                // The whole name used, up to what is not part of a name.
                let name: String = code[at..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
                    .collect();
                return Some(format!(
                    "{path}:{}: {name} is a sysbench API rqps does not offer \
                     (docs/suites/sysbench.md lists what scripts can use)",
                    i + 1
                ));
            }
        }
    }
    None
}

/// The inputs of a plan: the script, its arguments, and what rqps's own
/// options say.
pub struct Inputs<'a> {
    pub path: &'a str,
    pub args: &'a [String],
    pub threads: &'a [usize],
    pub secs: f64,
    pub warmup_secs: f64,
    /// rqps's own `--rand-type`, if given (a script's default is `special`).
    pub rand_type: Option<SbRandType>,
    /// rqps's own distribution parameters (the script's command line wins).
    pub rand: SbRandParams,
    /// The streams' seed from rqps's options (its `--rand-seed`, else one
    /// made from `--seed`); a script's `--rand-seed` other than 0 wins.
    pub rand_seed: u32,
    pub seed: u64,
    pub ps_mode: PsMode,
    pub skip_prepare: bool,
}

/// Reads and checks a script and its command line: one line saying what is
/// wrong otherwise.
pub fn check(i: &Inputs<'_>) -> Result<ScriptPlan, Error> {
    let path = i.path;
    let meta = std::fs::metadata(path).map_err(|e| {
        usage(format!(
            "--script {path}: cannot read it ({e}); give the path of a sysbench Lua script"
        ))
    })?;
    if !meta.is_file() || meta.len() > MAX_SCRIPT_BYTES {
        return Err(usage(format!(
            "--script {path}: not a regular file of at most {} MiB",
            MAX_SCRIPT_BYTES >> 20
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| usage(format!("--script {path}: cannot read it ({e})")))?;
    if let Some(m) = missing_api(path, &text) {
        return Err(usage(m));
    }
    let args = options::parse_args(i.args).map_err(|e| usage(format!("{path}: {e}")))?;
    let commands = if args.commands.is_empty() {
        let mut c = vec!["prepare", "run", "cleanup"];
        if i.skip_prepare {
            c.remove(0);
        }
        c.into_iter().map(String::from).collect()
    } else {
        args.commands.clone()
    };
    let mut plan = ScriptPlan {
        path: path.to_string(),
        text,
        args: i.args.to_vec(),
        commands,
        options: Vec::new(),
        declares: false,
        threads: i.threads.to_vec(),
        secs: i.secs,
        events: None,
        warmup_secs: i.warmup_secs,
        rand_type: i.rand_type.unwrap_or(SbRandType::Special),
        rand: i.rand,
        rand_seed: i.rand_seed,
        seed: i.seed,
        percentile: 95,
        ps_mode: i.ps_mode,
    };
    // The script's declarations, read from a state of its own.
    let lua = state::new(&state::Spec {
        plan: &plan,
        command: &plan.commands[0],
        tid: 0,
        thread: rand::Thread::Main,
        opt: None,
        sql: None,
    })
    .map_err(usage)?;
    let declared = declared(&lua).map_err(|e| usage(format!("{path}: {e}")))?;
    plan.declares = !declared.is_empty();
    let mut all = options::core();
    all.extend(declared);
    plan.options = options::resolve(&all, &args.given, path, plan.declares).map_err(usage)?;
    apply_core(&mut plan, &args.given)?;
    if args.commands.is_empty() {
        // The default cycle leaves out what the script does not have.
        plan.commands
            .retain(|c| c == "run" || command_exists(&lua, c).is_ok());
    }
    for c in &plan.commands {
        command_exists(&lua, c).map_err(|e| usage(format!("{path}: {e}")))?;
    }
    Ok(plan)
}

/// The options `sysbench.cmdline.options` declares.
fn declared(lua: &Lua) -> Result<Vec<options::Declared>, Fail> {
    let f: Function = lua
        .globals()
        .get("__rqps_declared_options")
        .map_err(|e| Fail::lua(&e))?;
    let rows: mlua::Table = f.call(()).map_err(|e| Fail::lua(&e))?;
    let mut out = Vec::new();
    for row in rows.sequence_values::<mlua::Table>() {
        let row = row.map_err(|e| Fail::lua(&e))?;
        out.push(options::Declared {
            name: row.get(1).map_err(|e| Fail::lua(&e))?,
            kind: row
                .get::<Option<u8>>(4)
                .ok()
                .flatten()
                .unwrap_or(options::ARG_STRING),
            default: row.get::<Option<String>>(3).ok().flatten(),
        });
    }
    // sysbench sorts them by name; so does its --help.
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// sysbench's own options given on the script's command line, applied to
/// the plan.
fn apply_core(plan: &mut ScriptPlan, given: &[(String, String)]) -> Result<(), Error> {
    let get = |name: &str| {
        plan.options
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let is_given = |name: &str| given.iter().any(|(n, _)| n == name);
    if is_given("threads") {
        let t = get("threads").and_then(|v| v.num()).unwrap_or(1.0);
        if t < 1.0 {
            return Err(usage("--threads must be at least 1"));
        }
        plan.threads = vec![t as usize];
    }
    // sysbench's bounds of a run: --events and --time, whichever comes
    // first; 0 is no limit (the harness's event bound, Timing::events).
    let events = get("events").and_then(|v| v.num()).unwrap_or(0.0);
    if events < 0.0 {
        return Err(usage("--events must be 0 (no limit) or more"));
    }
    plan.events = (events >= 1.0).then_some(events as u64);
    if is_given("time") {
        let t = get("time").and_then(|v| v.num()).unwrap_or(0.0);
        if t < 0.0 || t == 0.0 && plan.events.is_none() && plan.commands.iter().any(|c| c == "run")
        {
            return Err(usage(
                "--time=0 without --events=N is an endless run: give --events=N (the run ends at N events), or --time=S",
            ));
        }
        plan.secs = t;
    }
    if is_given("warmup_time") {
        plan.warmup_secs = get("warmup_time").and_then(|v| v.num()).unwrap_or(0.0);
    }
    if is_given("rand_type") {
        plan.rand_type = get("rand_type")
            .map(|v| v.text())
            .unwrap_or_default()
            .parse()?;
    }
    let int = |name: &str| get(name).and_then(|v| v.num());
    if is_given("rand_seed") {
        // sysbench's 0 seeds from the clock; rqps keeps the one it made.
        let s = int("rand_seed").unwrap_or(0.0);
        if !(0.0..=u32::MAX as f64).contains(&s) {
            return Err(usage("--rand-seed must be between 0 and 4294967295"));
        }
        if s != 0.0 {
            plan.rand_seed = s as u32;
        }
    }
    for (name, field) in [
        ("rand_spec_iter", &mut plan.rand.rand_spec_iter),
        ("rand_spec_pct", &mut plan.rand.rand_spec_pct),
        ("rand_spec_res", &mut plan.rand.rand_spec_res),
    ] {
        if is_given(name) {
            let v = int(name).unwrap_or(0.0);
            if v < 0.0 || v > u32::MAX as f64 {
                return Err(usage(format!(
                    "--{} must be a count of 0 or more",
                    name.replace('_', "-")
                )));
            }
            *field = v as u32;
        }
    }
    if is_given("rand_pareto_h") {
        plan.rand.rand_pareto_h = int("rand_pareto_h").unwrap_or(0.0);
    }
    if is_given("rand_zipfian_exp") {
        plan.rand.rand_zipfian_exp = int("rand_zipfian_exp").unwrap_or(0.0);
    }
    SbDist::new(plan.rand_type, plan.rand).map_err(usage)?;
    if is_given("percentile") {
        let p = int("percentile").unwrap_or(95.0);
        if !(0.0..=100.0).contains(&p) {
            return Err(usage("--percentile must be between 0 and 100"));
        }
        plan.percentile = p as u32;
    }
    if is_given("db_ps_mode") {
        plan.ps_mode =
            crate::suite::api::ps_mode(&get("db_ps_mode").map(|v| v.text()).unwrap_or_default())?;
    }
    // What the script reads of them is what runs.
    let threads = plan.threads.iter().copied().max().unwrap_or(1);
    let (secs, rand_type, rand, rand_seed) = (plan.secs, plan.rand_type, plan.rand, plan.rand_seed);
    let ps = match plan.ps_mode {
        PsMode::Auto => "auto",
        PsMode::Disable => "disable",
    };
    for (n, v) in &mut plan.options {
        match n.as_str() {
            "threads" => *v = OptValue::Num(threads as f64),
            "time" => *v = OptValue::Num(secs),
            "rand_type" => *v = OptValue::Str(rand_type.name().into()),
            "rand_seed" => *v = OptValue::Num(rand_seed.into()),
            "rand_spec_iter" => *v = OptValue::Num(rand.rand_spec_iter.into()),
            "rand_spec_pct" => *v = OptValue::Num(rand.rand_spec_pct.into()),
            "rand_spec_res" => *v = OptValue::Num(rand.rand_spec_res.into()),
            "rand_pareto_h" => *v = OptValue::Num(rand.rand_pareto_h),
            "rand_zipfian_exp" => *v = OptValue::Num(rand.rand_zipfian_exp),
            "db_ps_mode" => *v = OptValue::Str(ps.into()),
            _ => {}
        }
    }
    Ok(())
}

/// Whether the script has `command`: `run` needs `event`; the others a
/// command of `sysbench.cmdline.commands` or a function of that name.
fn command_exists(lua: &Lua, command: &str) -> Result<(), Fail> {
    let custom: Function = lua
        .load("return sysbench.cmdline.command_defined")
        .eval()
        .map_err(|e| Fail::lua(&e))?;
    if custom.call::<bool>(command).unwrap_or(false) {
        return Ok(());
    }
    let ok = match command {
        "run" => state::has_function(lua, "event"),
        "prepare" | "cleanup" | "help" => state::has_function(lua, command),
        _ => false,
    };
    if ok {
        return Ok(());
    }
    let mut have: Vec<String> = Vec::new();
    if state::has_function(lua, "event") {
        have.push("run".into());
    }
    for c in ["prepare", "cleanup", "help"] {
        if state::has_function(lua, c) {
            have.push(c.into());
        }
    }
    if let Ok(t) = lua
        .load("return sysbench.cmdline.commands")
        .eval::<mlua::Table>()
    {
        for k in t.pairs::<String, Value>().flatten().map(|(k, _)| k) {
            if !have.contains(&k) {
                have.push(k);
            }
        }
    }
    Err(format!(
        "the script has no '{command}' command (it has: {})",
        have.join(", ")
    )
    .into())
}

/// The failure of a command outside a test.
fn command_failed(command: &str, msg: impl Into<String>) -> Error {
    Error::Engine {
        context: format!("the script's '{command}' command failed"),
        source: DbError::fatal(msg),
    }
}

/// Runs the plan's commands in order.
pub fn run(plan: &ScriptPlan, h: &mut Harness<'_>) -> Result<RunEnd, Error> {
    let name = h
        .driver
        .require_sql()
        .map_err(|source| Error::Engine {
            context: "sysbench scripts need SQL".into(),
            source,
        })?
        .dialect()
        .client_driver_name()
        .ok_or_else(|| {
            usage(format!(
                "sysbench scripts reach an engine through sysbench's drivers (mysql, pgsql); \
                 engine {} has none: target a MySQL, MariaDB or PostgreSQL server",
                h.driver.engine()
            ))
        })?;
    let s = Script {
        driver: h.driver.clone(),
        name,
    };
    rand::seed_unique(plan.rand_seed);
    let mut end = RunEnd::Ok;
    for c in &plan.commands {
        if stop_requested() {
            return Ok(RunEnd::Interrupted);
        }
        if c == "run" {
            for &threads in &plan.threads {
                if stop_requested() {
                    return Ok(RunEnd::Interrupted);
                }
                let r = run_test(plan, &s, h, threads)?;
                if !end.after(&r) {
                    return Ok(end);
                }
            }
        } else {
            h.ui.say(&format!("{}: {c}", plan.path));
            let tally = Arc::new(Mutex::new(Counts::default()));
            let began = std::time::Instant::now();
            let r = command(plan, &s, c, &tally);
            // Recorded as it ran: a name's `prepare` and `cleanup` runs
            // keep what they did.
            let statements = tally.lock().map_or(0, |t| t.queries());
            h.store.add_command(crate::results::CommandRun {
                command: c.clone(),
                secs: began.elapsed().as_secs_f64(),
                statements,
                status: if r.is_ok() {
                    crate::results::Status::Ok
                } else {
                    crate::results::Status::Failed
                },
                reason: r.as_ref().err().map(|e| e.to_string()),
            })?;
            r?;
        }
    }
    Ok(end)
}

/// A command other than `run`: a custom one (on its threads when
/// parallel), else the global function.
fn command(
    plan: &ScriptPlan,
    s: &Script,
    c: &str,
    tally: &Arc<Mutex<Counts>>,
) -> Result<(), Error> {
    let threads = plan.max_threads();
    let opt = plan.opt_for(threads);
    let lua = s
        .state(plan, c, rand::Thread::Main, &opt, tally.clone())
        .map_err(|e| command_failed(c, e))?;
    let call = |lua: &Lua| -> Result<bool, Fail> {
        let f: Function = lua
            .load("return sysbench.cmdline.call_command")
            .eval()
            .map_err(|e| Fail::lua(&e))?;
        f.call::<bool>(c).map_err(|e| Fail::lua(&e))
    };
    let parallel: bool = lua
        .load(format!("return sysbench.cmdline.command_parallel({c:?})"))
        .eval()
        .unwrap_or(false);
    if parallel {
        drop(lua);
        let errors: Vec<Fail> = std::thread::scope(|sc| {
            let handles: Vec<_> = (0..threads)
                .map(|tid| {
                    let (opt, tally) = (&opt, tally.clone());
                    sc.spawn(move || -> Result<(), Fail> {
                        let lua = s.state(plan, c, rand::Thread::Worker(tid), opt, tally)?;
                        call(&lua).map(|_| ())
                    })
                })
                .collect();
            handles
                .into_iter()
                .filter_map(|h| match h.join() {
                    Ok(Ok(())) => None,
                    Ok(Err(e)) => Some(e),
                    Err(_) => Some("a thread of the command panicked".into()),
                })
                .collect()
        });
        if let Some(e) = errors.into_iter().next() {
            return Err(command_failed(c, e));
        }
        return Ok(());
    }
    if call(&lua).map_err(|e| command_failed(c, e))? {
        return Ok(());
    }
    let f: Function = lua
        .globals()
        .get(c)
        .map_err(|e| command_failed(c, state::one_line(&e)))?;
    f.call::<()>(())
        .map_err(|e| command_failed(c, state::one_line(&e)))
}

/// Calls the global function `name` of `lua` if the script defines it.
fn call_if_defined(lua: &Lua, name: &str) -> Result<(), Fail> {
    if !state::has_function(lua, name) {
        return Ok(());
    }
    let f: Function = lua.globals().get(name).map_err(|e| Fail::lua(&e))?;
    f.call::<()>(())
        .map_err(|e| Fail::from(format!("{name}() failed: {}", state::one_line(&e))))
}

/// The script's event at `threads` threads: one measured test.
fn run_test(
    plan: &ScriptPlan,
    s: &Script,
    h: &mut Harness<'_>,
    threads: usize,
) -> Result<TestResult, Error> {
    let opt = plan.opt_for(threads);
    let tally = Arc::new(Mutex::new(Counts::default()));
    let global = s
        .state(plan, "run", rand::Thread::Main, &opt, tally)
        .map_err(|e| command_failed("run", e))?;
    call_if_defined(&global, "init").map_err(|e| command_failed("run", e))?;
    let test = test_name(&plan.path);
    let label = format!("{test} t{threads}");
    let mut r = TestResult::running(
        "sysbench",
        test,
        crate::suite::sysbench::report::SCRIPT_GROUP,
        threads,
        true,
        "statements/s",
    );
    r.warmup_secs = plan.warmup_secs;
    let result = h.test(label, r, |run| {
        let mut workers = (0..threads)
            .map(|tid| worker::LuaWorker::new(s, plan, tid, threads))
            .collect::<Result<Vec<_>, _>>()
            .map_err(TestFailure::when("could not start the script's threads"))?;
        let timing = Timing::measured(plan.warmup_secs, plan.secs).events(plan.events);
        run.timed(&mut workers, TimedStep::new(timing, Per::Statement));
        for w in workers {
            if let Err(e) = w.done() {
                run.warn(e.into());
            }
        }
        Ok(())
    })?;
    call_if_defined(&global, "done").map_err(|e| command_failed("run", e))?;
    Ok(result)
}

/// The test's name: the script's file name without `.lua`.
pub fn test_name(path: &str) -> String {
    let base = std::path::Path::new(path)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string());
    base.strip_suffix(".lua").unwrap_or(&base).to_string()
}

/// What `rqps tests --suite sysbench --script FILE` prints: the commands,
/// the steps and every option's value.
pub fn describe(s: &ScriptPlan) -> String {
    let threads: Vec<String> = s.threads.iter().map(|t| t.to_string()).collect();
    let mut out = format!(
        "script {}: commands {}; run: threads {}, {} each{}\n",
        s.path,
        s.commands.join(", "),
        threads.join(","),
        match (s.events, s.secs) {
            (Some(n), 0.0) => format!("{n} events"),
            (Some(n), t) => format!("{n} events or {t} s, whichever first,"),
            (None, t) => format!("{t} s"),
        },
        if s.warmup_secs > 0.0 {
            format!(" after {} s of warm-up", s.warmup_secs)
        } else {
            String::new()
        }
    );
    for (n, v) in &s.options {
        out.push_str(&format!("  --{}={}\n", n.replace('_', "-"), v.text()));
    }
    out
}
