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
//! - `sysbench.rand` draws through one adapter ([`rand`]); the C functions
//!   sysbench's modules declare for `ffi` are rqps's ([`capi`]).
//! - sysbench's reports (`--report-interval`, the report hooks, the closing
//!   report) are made of rqps's measurements ([`report`]).
//! - A script is trusted code with the rights of the user who runs rqps, as
//!   in sysbench; rqps bounds its memory and time ([`state`], [`watchdog`]).

pub mod capi;
pub mod fail;
pub mod options;
mod out;
pub mod plan;
pub mod rand;
pub mod report;
pub mod script;
pub mod sql;
pub mod stat;
pub mod state;
pub mod watchdog;
pub mod worker;

pub use fail::Fail;
pub use plan::{SYSBENCH_DIR, ScriptPlan, VERSION};
pub use script::Script;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mlua::{Function, Lua, Value};

use crate::engine::{DbError, Driver, PsMode};
use crate::error::{Error, usage};
use crate::harness::runner::stop_requested;
use crate::harness::{Harness, Per, RunEnd, TestFailure, TimedStep, Timing};
use crate::results::TestResult;
use crate::suite::sysbench::rng::{SbDist, SbRandParams, SbRandType};
use options::OptValue;

/// The most a script file may be.
const MAX_SCRIPT_BYTES: u64 = 4 << 20;

/// What sysbench 1.0 offers scripts that rqps does not: a script that names
/// one is refused when planned.
const MISSING: &[&str] = &["sysbench.db.", "db_query(", "db_connect("];

/// sysbench's built-in tests, which measure the client machine, not a
/// database.
const BUILTIN_TESTS: &[&str] = &["cpu", "fileio", "memory", "threads", "mutex"];

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
    /// `--script-memory`, MiB per Lua state.
    pub memory_mib: u64,
    /// `--sysbench-report`.
    pub sysbench_report: bool,
}

/// Reads and checks a script and its command line: one line saying what is
/// wrong otherwise.
pub fn check(i: &Inputs<'_>) -> Result<ScriptPlan, Error> {
    let path = i.path;
    if BUILTIN_TESTS.contains(&path) && !std::path::Path::new(path).exists() {
        return Err(usage(format!(
            "--script {path}: sysbench's built-in '{path}' test measures the client machine, \
             not a database, and rqps does not run it (run `sysbench {path}`); --script takes \
             a sysbench Lua script"
        )));
    }
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
        memory_mib: i.memory_mib,
        sysbench_report: i.sysbench_report,
    };
    // The script's declarations, read from a state of its own.
    let lua = state::new(&state::Spec {
        plan: &plan,
        command: &plan.commands[0],
        ctx: rand::context(plan.rand_seed, rand::Thread::Main, plan.dist()),
        opt: None,
        db: state::Db::Check,
    })
    .map_err(usage)?;
    let declared = declared(&lua).map_err(|e| usage(format!("{path}: {e}")))?;
    plan.declares = !declared.is_empty();
    for (name, _) in &args.given {
        if declared.iter().any(|d| &d.name == name) {
            continue;
        }
        if let Some(why) = options::refused(name) {
            return Err(usage(format!("--{}: {why}", name.replace('_', "-"))));
        }
    }
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
    let int = |name: &str| get(name).and_then(|v| v.num());
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
        let w = get("warmup_time").and_then(|v| v.num()).unwrap_or(0.0);
        if w < 0.0 {
            return Err(usage(
                "--warmup-time must be 0 or more seconds (sysbench takes a negative one and \
                 warms up for no time)",
            ));
        }
        plan.warmup_secs = w;
    }
    if is_given("report_interval") && int("report_interval").unwrap_or(0.0) < 0.0 {
        return Err(usage("--report-interval must be 0 (none) or more seconds"));
    }
    if is_given("verbosity") && !(0.0..=5.0).contains(&int("verbosity").unwrap_or(3.0)) {
        return Err(usage(
            "--verbosity must be between 0 and 5 (sysbench's levels)",
        ));
    }
    if is_given("rand_type") {
        plan.rand_type = get("rand_type")
            .map(|v| v.text())
            .unwrap_or_default()
            .parse()?;
    }
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
        "prepare" | "cleanup" => state::has_function(lua, command),
        // sysbench prints a script's options when it has no help().
        "help" => state::has_function(lua, "help") || declares_options(lua),
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
    let why = if command == "run" {
        // sysbench's words: `run` calls the script's event().
        "the script defines no event() function, which its 'run' command calls".to_string()
    } else {
        format!("the script has no '{command}' command")
    };
    Err(if have.is_empty() {
        format!("{why} (it has no command)")
    } else {
        format!("{why} (it has: {})", have.join(", "))
    }
    .into())
}

/// Whether the script declares options (`sysbench.cmdline.options`).
fn declares_options(lua: &Lua) -> bool {
    lua.load("return type(sysbench.cmdline.options) == 'table' and next(sysbench.cmdline.options) ~= nil")
        .eval::<bool>()
        .unwrap_or(false)
}

/// The failure of a command outside a test.
fn command_failed(command: &str, msg: impl Into<String>) -> Error {
    Error::Engine {
        context: format!("the script's '{command}' command failed"),
        source: DbError::fatal(msg),
    }
}

/// sysbench's name of `driver`'s engine's driver (`mysql`, `pgsql`), if it
/// has one.
pub fn driver_name(driver: &dyn Driver) -> Option<&'static str> {
    driver.require_sql().ok()?.dialect().client_driver_name()
}

/// Refuses, before anything is stored, a target the script cannot use: one
/// without a sysbench driver for a script that reaches a database.
pub fn check_target(plan: &ScriptPlan, driver: &dyn Driver) -> Result<(), Error> {
    if driver_name(driver).is_some() || !plan.needs_database() {
        return Ok(());
    }
    Err(usage(format!(
        "{}: {}",
        plan.path,
        script::no_driver(driver.engine())
    )))
}

/// Runs the plan's commands in order.
pub fn run(plan: &ScriptPlan, h: &mut Harness<'_>) -> Result<RunEnd, Error> {
    let s = Script {
        driver: h.driver.clone(),
        name: driver_name(h.driver.as_ref()),
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
            let sent = AtomicU64::new(0);
            let began = std::time::Instant::now();
            let r = command(plan, &s, c, &sent);
            // Recorded as it ran: a name's `prepare` and `cleanup` runs
            // keep what they did.
            let statements = sent.load(Ordering::Relaxed);
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

/// Calls the command `c` in `lua` (made current, the JIT on): the custom
/// one if the script has it (true), else false.
fn call_command(lua: &Lua, ctx: &Arc<capi::ThreadCtx>, c: &str) -> Result<bool, Fail> {
    capi::enter(ctx);
    state::jit(lua, true).map_err(|e| Fail::lua(&e))?;
    let f: Function = lua
        .load("return sysbench.cmdline.call_command")
        .eval()
        .map_err(|e| Fail::lua(&e))?;
    let r = f.call::<bool>(c);
    if let Some(code) = ctx.exited() {
        return Err(Fail::from(state::exit_message(code)));
    }
    r.map_err(|e| state::memory_or(lua, &e, ""))
}

/// A command other than `run`: a custom one (on its threads when
/// parallel), else the global function, else (`help`) the options. The
/// statements its states send are added to `statements`.
fn command(plan: &ScriptPlan, s: &Script, c: &str, statements: &AtomicU64) -> Result<(), Error> {
    let threads = plan.max_threads();
    let opt = plan.opt_for(threads);
    let (lua, ctx) = s
        .state(plan, c, rand::Thread::Main, &opt)
        .map_err(|e| command_failed(c, e))?;
    let _sent = Sent(&ctx, statements);
    let parallel: bool = lua
        .load(format!("return sysbench.cmdline.command_parallel({c:?})"))
        .eval()
        .unwrap_or(false);
    if parallel {
        drop(lua);
        let errors: Vec<Fail> = std::thread::scope(|sc| {
            let handles: Vec<_> = (0..threads)
                .map(|tid| {
                    let opt = &opt;
                    sc.spawn(move || -> Result<(), Fail> {
                        let (lua, ctx) = s.state(plan, c, rand::Thread::Worker(tid), opt)?;
                        let _sent = Sent(&ctx, statements);
                        capi::register(&ctx);
                        call_command(&lua, &ctx, c).map(|_| ())
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
    if call_command(&lua, &ctx, c).map_err(|e| command_failed(c, e))? {
        return Ok(());
    }
    if c == "help" && !state::has_function(&lua, "help") {
        out::print(&format!("{} options:\n", file_name(&plan.path)));
        return lua
            .load("sysbench.cmdline.print_test_options()")
            .exec()
            .map_err(|e| command_failed(c, state::one_line(&e)));
    }
    let f: Function = lua
        .globals()
        .get(c)
        .map_err(|e| command_failed(c, state::one_line(&e)))?;
    let r = f.call::<()>(());
    if let Some(code) = ctx.exited() {
        return Err(command_failed(c, state::exit_message(code)));
    }
    r.map_err(|e| command_failed(c, state::memory_or(&lua, &e, "")))
}

/// Adds the statements a command's state sent to the command's count when
/// the state is done with, whichever way it ends.
struct Sent<'a>(&'a Arc<capi::ThreadCtx>, &'a AtomicU64);

impl Drop for Sent<'_> {
    fn drop(&mut self) {
        self.1
            .fetch_add(self.0.counts().queries(), Ordering::Relaxed);
    }
}

/// The script's file name.
fn file_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

/// The script's event at `threads` threads: one measured test, with
/// sysbench's reports around it.
fn run_test(
    plan: &ScriptPlan,
    s: &Script,
    h: &mut Harness<'_>,
    threads: usize,
) -> Result<TestResult, Error> {
    let opt = plan.opt_for(threads);
    let (global, _) = s
        .state(plan, "run", rand::Thread::Main, &opt)
        .map_err(|e| command_failed("run", e))?;
    let bound = plan.startup_bound();
    state::call_global(&global, "init", (), bound).map_err(|e| command_failed("run", e))?;
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
    let every = plan.report_interval();
    let show = plan.verbosity() >= 3;
    // The reports need each event's latency (sysbench's closing report its
    // threads' time in events too).
    let timed = every > 0.0 || (plan.sysbench_report && show);
    let mut fairness: report::Fairness = Vec::new();
    let result = h.test(label, r, |run| {
        let start: report::Start = Arc::default();
        let mut workers = (0..threads)
            .map(|tid| worker::LuaWorker::new(s, plan, tid, threads, timed, start.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(TestFailure::when("could not start the script's threads"))?;
        let hook = if every > 0.0 && state::has_hook(&global, "report_intermediate") {
            let (lua, _) = s
                .state(plan, "run", rand::Thread::Main, &opt)
                .map_err(TestFailure::when("could not start the reporting thread"))?;
            Some(lua)
        } else {
            None
        };
        let done = Arc::new(AtomicBool::new(false));
        let reporting = (every > 0.0).then(|| report::Reporting {
            probes: workers.iter().filter_map(|w| w.probe()).collect(),
            every: Duration::from_secs_f64(every),
            percentile: plan.percentile,
            print: show,
            hook,
            start: start.clone(),
            secs: plan.secs,
            done: done.clone(),
        });
        let reporter = reporting.map(|r| std::thread::spawn(move || report::run(r)));
        let timing = Timing::measured(plan.warmup_secs, plan.secs).events(plan.events);
        let watchdog = watchdog::Watchdog::spawn(watchdog::Watch {
            ctxs: workers.iter().map(|w| w.ctx.clone()).collect(),
            // Bounded by --events alone (--time=0): no end to watch for.
            deadline: (plan.secs > 0.0).then(|| Instant::now() + timing.warmup + timing.duration),
            grace: plan.event_grace(),
            script: plan.path.clone(),
        });
        let step = run.timed(&mut workers, TimedStep::new(timing, Per::Statement));
        drop(watchdog);
        done.store(true, Ordering::Relaxed);
        if let Some(Ok(Err(e))) = reporter.map(|t| t.join()) {
            run.warn(format!("the reports: {e}"));
        }
        // Every thread ended by the script's own stop value: as sysbench,
        // the test is what ran, even nothing.
        // Nor did --events or --time end it.
        if !workers.is_empty() && workers.iter().all(|w| w.stopped_by_script()) {
            run.result.step = None;
            run.result.event_bound = None;
        }
        fairness = workers
            .iter()
            .zip(&step.per_worker)
            .map(|(w, &events)| (events, w.busy_secs()))
            .collect();
        for w in workers {
            if let Err(e) = w.done() {
                run.warn(e.into());
            }
        }
        Ok(())
    })?;
    // The cumulative report: the script's hook, else sysbench's own lines
    // on request.
    let stat = report::Stat::of_result(&result, plan.percentile);
    if state::has_hook(&global, "report_cumulative") {
        state::call_hook(&global, "report_cumulative", &stat, bound)
            .map_err(|e| command_failed("run", e))?;
    } else if show && result.status == crate::results::Status::Ok {
        if plan.histogram() {
            out::print(&report::histogram(&result));
        }
        if plan.sysbench_report {
            out::print(&report::closing(&stat, plan.percentile, &fairness));
        }
    }
    state::call_global(&global, "done", (), bound).map_err(|e| command_failed("run", e))?;
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
