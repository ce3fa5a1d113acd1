//! A script bound to the engine it runs on: the states its commands and
//! threads run in, each with its thread's context and `sysbench.sql`.

use std::sync::Arc;

use mlua::Lua;

use super::capi::ThreadCtx;
use super::fail::Fail;
use super::options::OptValue;
use super::plan::ScriptPlan;
use super::rand::{self, Thread};
use super::sql;
use super::state::{self, Db};
use crate::engine::Driver;

/// A script with the engine it runs on.
pub struct Script {
    pub driver: Arc<dyn Driver>,
    /// sysbench's name of the engine's driver (`mysql`, `pgsql`); `None`:
    /// the engine has none, and a script that asks for it is told why.
    pub name: Option<&'static str>,
}

impl Script {
    /// A state for `thread` of `command`, options exported, and its context.
    pub fn state(
        &self,
        plan: &ScriptPlan,
        command: &str,
        thread: Thread,
        opt: &[(String, OptValue)],
    ) -> Result<(Lua, Arc<ThreadCtx>), Fail> {
        let ctx = rand::context(plan.rand_seed, thread, plan.dist());
        let db = match self.name {
            Some(name) => Db::Engine(Arc::new(sql::Ctx {
                driver: self.driver.clone(),
                name,
                ps_mode: plan.ps_mode,
                ignore: plan.ignore(),
                thread: ctx.clone(),
            })),
            None => Db::None(no_driver(self.driver.engine())),
        };
        let lua = state::new(&state::Spec {
            plan,
            command,
            ctx: ctx.clone(),
            opt: Some(opt),
            db,
        })?;
        state::export(&lua, opt).map_err(|e| Fail::lua(&e))?;
        if !plan.declares {
            state::export_globals(&lua, opt).map_err(|e| Fail::lua(&e))?;
        }
        Ok((lua, ctx))
    }
}

/// Why a script cannot reach engine `engine`.
pub fn no_driver(engine: impl std::fmt::Display) -> String {
    format!(
        "sysbench scripts reach a database through sysbench's drivers (mysql, pgsql), and \
         engine {engine} has none: give --target mysql://... or postgres://... (or --server KIND)"
    )
}
