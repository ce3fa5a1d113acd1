//! A script bound to the engine it runs on: the states its commands and
//! threads run in, each with its `sysbench.sql` context.

use std::sync::{Arc, Mutex};

use mlua::Lua;

use super::fail::Fail;
use super::options::OptValue;
use super::plan::ScriptPlan;
use super::rand::Thread;
use super::{sql, state};
use crate::engine::Driver;
use crate::harness::measure::Counts;

/// A script with the engine it runs on.
pub struct Script {
    pub driver: Arc<dyn Driver>,
    pub name: &'static str,
}

impl Script {
    /// A state for `thread` of `command`, options exported.
    pub fn state(
        &self,
        plan: &ScriptPlan,
        command: &str,
        thread: Thread,
        opt: &[(String, OptValue)],
        tally: Arc<Mutex<Counts>>,
    ) -> Result<Lua, Fail> {
        let ctx = Arc::new(sql::Ctx {
            driver: self.driver.clone(),
            ps_mode: plan.ps_mode,
            ignore: plan.ignore(),
            tally,
            names_statements: self.name == "pgsql" && plan.ps_mode == crate::engine::PsMode::Auto,
        });
        let lua = state::new(&state::Spec {
            plan,
            command,
            tid: match thread {
                Thread::Main => 0,
                Thread::Worker(i) => i,
            },
            thread,
            opt: Some(opt),
            sql: Some((ctx, self.name)),
        })?;
        state::export(&lua, opt).map_err(|e| Fail::lua(&e))?;
        if !plan.declares {
            state::export_globals(&lua, opt).map_err(|e| Fail::lua(&e))?;
        }
        Ok(lua)
    }
}
