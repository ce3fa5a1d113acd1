//! One Lua state of a script, made as sysbench makes each of its states:
//! LuaJIT with every library (scripts use `ffi`), `package.path` reaching
//! the script's folder and sysbench's (`require("oltp_common")`), the
//! `sysbench` table (tid, version, cmdline, opt, rand, sql, hooks), the
//! legacy globals, then the script itself.

use std::path::Path;
use std::sync::Arc;

use mlua::{Lua, LuaOptions, StdLib, Table, Value};

use super::fail::Fail;
pub use super::fail::one_line;
use super::options::OptValue;
use super::plan::{SYSBENCH_DIR, ScriptPlan, VERSION};
use super::sql;

/// The prelude: the part of the API written in Lua.
const PRELUDE: &str = include_str!("prelude.lua");

/// What a state is made for: thread `tid` of a command, with the
/// connection context its `sysbench.sql` uses (`None`: no engine, the plan's
/// check).
pub struct Spec<'a> {
    pub plan: &'a ScriptPlan,
    pub command: &'a str,
    pub tid: usize,
    /// The stream `sysbench.rand` draws from.
    pub thread: super::rand::Thread,
    /// The values of `sysbench.opt` (`None`: not exported yet).
    pub opt: Option<&'a [(String, OptValue)]>,
    pub sql: Option<(Arc<sql::Ctx>, &'static str)>,
}

/// Makes the state and runs the script's main chunk in it.
pub fn new(spec: &Spec<'_>) -> Result<Lua, Fail> {
    let lua = build(spec).map_err(|e| Fail::lua(&e))?;
    let path = &spec.plan.path;
    lua.load(spec.plan.text.as_str())
        .set_name(format!("@{path}"))
        .exec()
        .map_err(|e| Fail::lua(&e))?;
    Ok(lua)
}

fn build(spec: &Spec<'_>) -> mlua::Result<Lua> {
    // Scripts declare C functions through the ffi library, as sysbench's own do.
    let lua = unsafe { Lua::unsafe_new_with(StdLib::ALL, LuaOptions::default()) };
    // LuaJIT's interpreter, not its trace compiler: an instruction hook never
    // runs inside a compiled loop, so a runaway event() could not be stopped
    // at the deadline (a `while true do end` never returned). The scripts'
    // work is calls into rqps's client, which traces do not compile anyway.
    lua.load("jit.off()").exec()?;
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
    sb.set("tid", spec.tid)?;
    sb.set("version", VERSION)?;
    sb.set("version_string", format!("sysbench {VERSION} (rqps)"))?;
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
    let rand = lua.create_table()?;
    super::rand::register(
        &lua,
        &rand,
        spec.plan.rand_seed,
        spec.thread,
        spec.plan.dist(),
    )?;
    sb.set("rand", rand)?;
    lua.globals().set("sysbench", &sb)?;
    if let Some(opt) = spec.opt {
        export(&lua, opt)?;
    }

    let raw = lua.create_table()?;
    match &spec.sql {
        Some((ctx, name)) => sql::register(&lua, &raw, ctx.clone(), name)?,
        None => {
            let none = lua.create_function(|_, ()| -> mlua::Result<()> {
                Err(mlua::Error::runtime(
                    "no database connection while the script is checked: \
                     connect in a command, thread_init or event",
                ))
            })?;
            raw.set("connect", none.clone())?;
            raw.set("driver_name", none)?;
        }
    }
    lua.load(PRELUDE)
        .set_name("@rqps-sysbench-prelude.lua")
        .call::<()>(raw)?;
    Ok(lua)
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
