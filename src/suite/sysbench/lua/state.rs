//! One Lua state of a script, made as sysbench makes each of its states:
//! LuaJIT with every library (scripts use `ffi`), `package.path` reaching
//! the script's folder and sysbench's (`require("oltp_common")`), sysbench's
//! C declarations ([`super::capi::CDEF`]), the `sysbench` table (tid,
//! version, cmdline, opt, rand, sql, hooks, reports, histogram), the legacy
//! globals, then the script itself.
//!
//! A script is trusted code, as in sysbench: it runs with the rights of the
//! user who runs rqps (files, processes, `ffi` calls into any C function).
//! rqps bounds what a mistake costs, not what a script may do:
//! - its memory: each state may hold `--script-memory` MiB ([`over_memory`]);
//! - its time outside events: the top level, `thread_init`, `thread_done`,
//!   `init`, `done` and the report hooks run in LuaJIT's interpreter under an
//!   instruction hook that stops them at their bound ([`bounded`]; a
//!   compiled loop never reaches a hook);
//! - `event()` runs with the JIT on, as sysbench runs it: the watchdog
//!   ([`super::watchdog`]) ends a runaway one;
//! - `os.exit` ends the test, not the process, so that the run is stored.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mlua::{Function, HookTriggers, Lua, LuaOptions, StdLib, Table, Value, VmState};

use super::capi::{self, ThreadCtx};
use super::fail::Fail;
pub use super::fail::one_line;
use super::options::OptValue;
use super::plan::{SYSBENCH_DIR, ScriptPlan, VERSION};
use super::sql;
use super::stat::Stat;
use crate::harness::runner::stop_requested;

/// The prelude: the part of the API written in Lua.
const PRELUDE: &str = include_str!("prelude.lua");

/// How often (in VM instructions) a bounded call looks at the clock.
const HOOK_EVERY: u32 = 10_000;

/// What a state reaches the database through.
pub enum Db {
    /// The script is being checked, before any engine opens: `connect()`
    /// gives a connection that refuses statements (one at the top level
    /// runs when the script runs, not when it is checked).
    Check,
    /// The engine has no sysbench driver: why, for the script that asks.
    None(String),
    /// A connection context on the engine (with sysbench's driver name).
    Engine(Arc<sql::Ctx>),
}

/// What a state is made for: thread `tid` of a command, with the
/// connection context its `sysbench.sql` uses.
pub struct Spec<'a> {
    pub plan: &'a ScriptPlan,
    pub command: &'a str,
    /// Its thread's context (`sysbench.tid`, stream, counters).
    pub ctx: Arc<ThreadCtx>,
    /// The values of `sysbench.opt` (`None`: not exported yet).
    pub opt: Option<&'a [(String, OptValue)]>,
    pub db: Db,
}

/// Makes the state and runs the script's main chunk in it, within the
/// start-up bound.
pub fn new(spec: &Spec<'_>) -> Result<Lua, Fail> {
    super::out::line_buffered();
    let lua = build(spec).map_err(|e| Fail::lua(&e))?;
    let path = &spec.plan.path;
    let chunk = lua
        .load(spec.plan.text.as_str())
        .set_name(format!("@{path}"));
    bounded(&lua, &spec.ctx, "", spec.plan.startup_bound(), || {
        chunk.exec()
    })?;
    Ok(lua)
}

fn build(spec: &Spec<'_>) -> mlua::Result<Lua> {
    // SAFETY (mlua's `unsafe_new_with`: the `ffi` library, which scripts
    // use as sysbench's own do, lets Lua code call any C function and write
    // any memory, so mlua cannot promise Rust's safety to Lua code that
    // uses it). What keeps rqps sound:
    // - the script is trusted code the user chose to run, with the user's
    //   rights, as a native plugin or sysbench itself is (the docs and
    //   `--help` of `--script` say so); rqps bounds its memory and time, not
    //   its reach;
    // - the C functions rqps exports for `ffi.C` (`capi.rs`) take only
    //   values, or pointers they made or checked (null, bounds), so a script
    //   that calls them as sysbench's API declares them cannot break Rust's
    //   invariants;
    // - rqps reads nothing from the state but through mlua's checked API,
    //   and each state is used by one thread at a time (a worker, the
    //   reporting thread, or the caller), as mlua requires;
    // - the state's own memory is LuaJIT's: a script that corrupts it with
    //   `ffi` corrupts memory rqps never trusts for a result, and at worst
    //   ends the process, as it would end sysbench.
    let lua = unsafe { Lua::unsafe_new_with(StdLib::ALL, LuaOptions::default()) };
    // The C functions scripts call are only referred to by name from Lua:
    // this keeps them in the binary for `ffi.C` to find.
    std::hint::black_box(capi::exported());
    std::hint::black_box(sql::exported());
    let bound = spec.plan.memory_bytes();
    if bound > 0 {
        // rqps checks the bound after each call into the state; the
        // allocator (mlua's, which LuaJIT's 64-bit GC takes) refuses a
        // margin above it, for a single call that would allocate without
        // end. The margin keeps mlua's own allocations outside a protected
        // call (a stack to grow) below the allocator's limit: one that
        // failed there would unwind through Rust.
        let hard = bound.saturating_add((bound / 4).max(16 << 20));
        let _ = lua.set_memory_limit(hard);
    }
    lua.set_app_data(MemoryBound(bound));
    lua.set_app_data(spec.ctx.clone());
    let dir = Path::new(&spec.plan.path)
        .parent()
        .map(|d| d.to_string_lossy().into_owned())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| ".".into());
    let package: Table = lua.globals().get("package")?;
    let path: String = package.get("path")?;
    package.set(
        "path",
        format!("{dir}/?.lua;./?.lua;{SYSBENCH_DIR}/?.lua;{path}"),
    )?;

    let sb = lua.create_table()?;
    sb.set("tid", spec.ctx.tid)?;
    sb.set("version", VERSION)?;
    sb.set("version_string", format!("sysbench {VERSION}"))?;
    let cmdline = lua.create_table()?;
    cmdline.set("command", spec.command)?;
    cmdline.set("script_path", spec.plan.path.as_str())?;
    let argv = lua.create_table()?;
    argv.raw_set(0, "sysbench")?;
    argv.raw_set(1, spec.plan.path.as_str())?;
    for (i, a) in spec.plan.args.iter().enumerate() {
        argv.raw_set(i + 2, a.as_str())?;
    }
    cmdline.set("argv", argv)?;
    sb.set("cmdline", cmdline)?;
    lua.globals().set("sysbench", &sb)?;
    if let Some(opt) = spec.opt {
        export(&lua, opt)?;
    }

    let raw = lua.create_table()?;
    raw.set("cdef", capi::CDEF)?;
    raw.set("sql_cdef", sql::CDEF)?;
    let zipf = spec.ctx.clone();
    raw.set(
        "zipfian",
        lua.create_function(move |_, (a, b): (f64, f64)| {
            let (a, b) = (super::rand::u32_of(a), super::rand::u32_of(b));
            Ok(zipf.draw(|r| r.zipfian(a, b)) as f64)
        })?,
    )?;
    let exit = spec.ctx.clone();
    raw.set(
        "exit",
        lua.create_function(move |_, code: Value| -> mlua::Result<()> {
            let code = match code {
                Value::Integer(i) => i,
                Value::Number(n) => n as i64,
                Value::Boolean(false) => 1,
                _ => 0,
            };
            exit.exit_called(code);
            Err(mlua::Error::runtime(exit_message(code)))
        })?,
    )?;
    raw.set(
        "print_histogram",
        lua.create_function(|_, text: String| {
            super::out::print(&text);
            Ok(())
        })?,
    )?;
    match &spec.db {
        Db::Engine(ctx) => sql::register(&lua, &raw, ctx.clone())?,
        Db::Check => sql::register_check(&lua, &raw)?,
        Db::None(why) => {
            let why = why.clone();
            let none = lua.create_function(move |_, ()| -> mlua::Result<()> {
                Err(mlua::Error::runtime(why.clone()))
            })?;
            raw.set("connect", none.clone())?;
            raw.set("driver_name", none)?;
        }
    }
    prelude(&lua)?.call::<()>(raw)?;
    Ok(lua)
}

/// The prelude's bytecode, made by the first state that needs it: parsing
/// the prelude cost each state (a run makes one per thread) about 2.4
/// million instructions, as much as 600 point selects (callgrind: the main
/// thread of a 16-thread run, 148 million before, 108 after).
static PRELUDE_CODE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

/// The prelude as a function of `lua`: loaded from its bytecode once a
/// state has compiled it (the same chunk name and lines in errors).
fn prelude(lua: &Lua) -> mlua::Result<Function> {
    if let Some(code) = PRELUDE_CODE.get() {
        return lua
            .load(code.as_slice())
            .set_mode(mlua::chunk::ChunkMode::Binary)
            .into_function();
    }
    let f = lua
        .load(PRELUDE)
        .set_name("@rqps-sysbench-prelude.lua")
        .into_function()?;
    let dump: Function = lua.globals().get::<Table>("string")?.get("dump")?;
    if let Ok(code) = dump.call::<mlua::LuaString>(&f) {
        let _ = PRELUDE_CODE.set(code.as_bytes().to_vec());
    }
    Ok(f)
}

/// What an `os.exit(code)` in a script says.
pub fn exit_message(code: i64) -> String {
    format!(
        "the script called os.exit({code}): rqps ends the test there and stores it as failed \
         (sysbench would end the process; to end a thread, return true from event())"
    )
}

/// Turns LuaJIT's trace compiler on or off for the state (with it off,
/// traces compiled before are dropped, so that no compiled loop runs
/// where an instruction hook must be able to stop the code).
pub fn jit(lua: &Lua, on: bool) -> mlua::Result<()> {
    let j: Table = lua.globals().get("jit")?;
    if on {
        j.get::<Function>("on")?.call::<()>(())
    } else {
        j.get::<Function>("flush")?.call::<()>(())?;
        j.get::<Function>("off")?.call::<()>(())
    }
}

/// Runs `f` (a call into `lua`) in the interpreter with an instruction
/// hook that stops it after `bound` or at Ctrl-C: `what` names it in the
/// error. The state's context is made current first.
pub fn bounded<R>(
    lua: &Lua,
    ctx: &Arc<ThreadCtx>,
    what: &str,
    bound: Duration,
    f: impl FnOnce() -> mlua::Result<R>,
) -> Result<R, Fail> {
    capi::enter(ctx);
    jit(lua, false).map_err(|e| Fail::lua(&e))?;
    let until = Instant::now() + bound;
    let fired = Arc::new(std::sync::atomic::AtomicU8::new(0));
    let f2 = fired.clone();
    lua.set_hook(
        HookTriggers::new().every_nth_instruction(HOOK_EVERY),
        move |_, _| {
            use std::sync::atomic::Ordering::Relaxed;
            if stop_requested() {
                f2.store(2, Relaxed);
                return Err(mlua::Error::runtime("stopped by the user"));
            }
            if Instant::now() > until {
                f2.store(1, Relaxed);
                return Err(mlua::Error::runtime("stopped at its time bound"));
            }
            Ok(VmState::Continue)
        },
    )
    .map_err(|e| Fail::lua(&e))?;
    let r = f();
    lua.remove_hook();
    let name = if what.is_empty() {
        "the script's top level"
    } else {
        what
    };
    match fired.load(std::sync::atomic::Ordering::Relaxed) {
        1 => Err(Fail::from(format!(
            "{name} was stopped after {:.0} s: rqps bounds a script's start-up and its \
             calls outside event() by the test's time, at least {:.0} s (an endless loop?)",
            bound.as_secs_f64(),
            super::plan::MIN_BOUND.as_secs_f64()
        ))),
        2 => Err(Fail::from(format!("{name} was stopped by the user"))),
        _ => match ctx.exited() {
            Some(code) => Err(Fail::from(format!("{name}: {}", exit_message(code)))),
            None => {
                let r = r.map_err(|e| memory_or(lua, &e, what))?;
                match over_memory(lua, what) {
                    Some(f) => Err(f),
                    None => Ok(r),
                }
            }
        },
    }
}

/// A state's memory bound (bytes, 0: none), which rqps checks after each
/// call into it.
#[derive(Clone, Copy)]
pub struct MemoryBound(pub usize);

/// The error of a state that holds more than its bound, `what` (a call
/// into it) having made it so; the allocator's limit is then lifted, so
/// that what rqps still does with the state (read its error, close it)
/// cannot fail on memory.
pub fn over_memory(lua: &Lua, what: &str) -> Option<Fail> {
    let bound = lua.app_data_ref::<MemoryBound>().map_or(0, |b| b.0);
    let used = lua.used_memory();
    if bound == 0 || used <= bound {
        return None;
    }
    let _ = lua.set_memory_limit(0);
    let tid = lua.app_data_ref::<Arc<ThreadCtx>>().map_or(0, |c| c.tid);
    let what = if what.is_empty() {
        "the script's top level"
    } else {
        what
    };
    Some(Fail::from(format!(
        "{what} ran out of memory: the Lua state of thread {tid} holds {} MiB, more than \
         --script-memory {} MiB allows (a table that grows without end?)",
        used >> 20,
        bound >> 20
    )))
}

/// The error of a call into `lua` as one line: the memory bound's own
/// message when the state reached it.
pub fn memory_or(lua: &Lua, e: &mlua::Error, what: &str) -> Fail {
    if let Some(f) = over_memory(lua, what) {
        return f;
    }
    if matches!(e, mlua::Error::MemoryError(_)) || one_line(e).contains("not enough memory") {
        let bound = lua.app_data_ref::<MemoryBound>().map_or(0, |b| b.0);
        let _ = lua.set_memory_limit(0);
        return Fail::from(format!(
            "{} ran out of memory: one call asked for more than --script-memory {} MiB \
             allows (and a margin)",
            if what.is_empty() {
                "the script's top level"
            } else {
                what
            },
            bound >> 20
        ));
    }
    if what.is_empty() {
        return Fail::lua(e);
    }
    Fail::from(format!("{what} failed: {}", one_line(e)))
}

/// Calls the global function `name` of `lua` with `args`, if the script
/// defines it, within `bound`; `what` names it in errors.
pub fn call_global(
    lua: &Lua,
    name: &str,
    args: impl mlua::IntoLuaMulti,
    bound: Duration,
) -> Result<(), Fail> {
    if !has_function(lua, name) {
        return Ok(());
    }
    let Some(ctx) = lua.app_data_ref::<Arc<ThreadCtx>>().map(|c| c.clone()) else {
        return Err(Fail::from("a script state without its context"));
    };
    let f: Function = lua.globals().get(name).map_err(|e| Fail::lua(&e))?;
    bounded(lua, &ctx, &format!("{name}()"), bound, || {
        f.call::<()>(args)
    })
}

/// Calls `sysbench.hooks.<name>(stat)` if the script set that hook.
pub fn call_hook(lua: &Lua, name: &str, stat: &Stat, bound: Duration) -> Result<(), Fail> {
    let hook = lua
        .load(format!("return sysbench.hooks.{name}"))
        .eval::<Value>()
        .map_err(|e| Fail::lua(&e))?;
    let Value::Function(f) = hook else {
        return Ok(());
    };
    let Some(ctx) = lua.app_data_ref::<Arc<ThreadCtx>>().map(|c| c.clone()) else {
        return Err(Fail::from("a script state without its context"));
    };
    let t = stat.to_lua(lua).map_err(|e| Fail::lua(&e))?;
    bounded(lua, &ctx, &format!("sysbench.hooks.{name}"), bound, || {
        f.call::<()>(t)
    })
}

/// Whether the script set `sysbench.hooks.<name>`.
pub fn has_hook(lua: &Lua, name: &str) -> bool {
    matches!(
        lua.load(format!("return sysbench.hooks.{name}"))
            .eval::<Value>(),
        Ok(Value::Function(_))
    )
}

/// Sets `sysbench.opt` (and, for a script that declares no options, the
/// same values as globals, as sysbench does for older scripts).
pub fn export(lua: &Lua, opt: &[(String, OptValue)]) -> mlua::Result<()> {
    let sb: Table = lua.globals().get("sysbench")?;
    let t = lua.create_table()?;
    for (name, v) in opt {
        t.set(name.as_str(), v.to_lua(lua)?)?;
    }
    sb.set("opt", t)?;
    Ok(())
}

/// Sets `sysbench.opt` as globals too, skipping names the script uses for
/// functions (sysbench's legacy export, for scripts without declarations).
pub fn export_globals(lua: &Lua, opt: &[(String, OptValue)]) -> mlua::Result<()> {
    let g = lua.globals();
    for (name, v) in opt {
        if let Value::Function(_) = g.get::<Value>(name.as_str())? {
            continue;
        }
        g.set(name.as_str(), v.to_lua(lua)?)?;
    }
    Ok(())
}

/// Whether the global `name` is a function.
pub fn has_function(lua: &Lua, name: &str) -> bool {
    matches!(lua.globals().get::<Value>(name), Ok(Value::Function(_)))
}
