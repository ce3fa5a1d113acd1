//! A script's thread as the harness runs it ([`Worker`]): its own Lua
//! state, `thread_init` when it is made, `event` for each event (an event
//! that returns true ends the thread, uncounted, as in sysbench),
//! `thread_done` at the end. An ignorable SQL error restarts the event (the
//! harness counts the error, then `before_restart_event` runs); an event
//! still running in Lua at the step's deadline, or at Ctrl-C, is stopped by
//! an instruction hook and not counted.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mlua::{Function, HookTriggers, Lua, MultiValue, Value, VmState};

use super::fail::Fail;
use super::plan::ScriptPlan;
use super::rand::{self, Thread};
use super::script::Script;
use super::{sql, state};
use crate::engine::{DbError, DbResult, ErrorClass, Meaning};
use crate::harness::measure::{Counts, event_clock};
use crate::harness::runner::{Worker, stop_requested};

/// How often (in VM instructions) the hook checks the deadline: about every
/// few microseconds of interpreted Lua.
const HOOK_EVERY: u32 = 10_000;

pub struct LuaWorker {
    lua: Lua,
    event: Function,
    restart: Function,
    tally: Arc<Mutex<Counts>>,
    deadline: Arc<AtomicU64>,
    aborted: Arc<AtomicBool>,
    ended: bool,
    tid: usize,
    /// Whether sysbench would keep a latency histogram (`--percentile`
    /// other than 0), drawing once after each event for it.
    histogram: bool,
}

impl LuaWorker {
    /// Thread `tid` of `threads`: its state, options exported, `thread_init`
    /// called.
    pub fn new(s: &Script, plan: &ScriptPlan, tid: usize, threads: usize) -> DbResult<LuaWorker> {
        let tally = Arc::new(Mutex::new(Counts::default()));
        let opt = plan.opt_for(threads);
        let lua = s
            .state(plan, "run", Thread::Worker(tid), &opt, tally.clone())
            .map_err(DbError::fatal)?;
        let deadline = Arc::new(AtomicU64::new(u64::MAX));
        let aborted = Arc::new(AtomicBool::new(false));
        let (d, a) = (deadline.clone(), aborted.clone());
        lua.set_hook(
            HookTriggers::new().every_nth_instruction(HOOK_EVERY),
            move |_, _| {
                if stop_requested() || event_clock().now_ns() > d.load(Ordering::Relaxed) {
                    a.store(true, Ordering::Relaxed);
                    return Err(mlua::Error::runtime(
                        "event() was stopped: it ran past the test's deadline",
                    ));
                }
                Ok(VmState::Continue)
            },
        )
        .map_err(|e| DbError::fatal(state::one_line(&e)))?;
        if state::has_function(&lua, "thread_init") {
            let f: Function = lua
                .globals()
                .get("thread_init")
                .map_err(|e| DbError::fatal(state::one_line(&e)))?;
            f.call::<()>(tid).map_err(|e| {
                DbError::fatal(format!("thread_init() failed: {}", state::one_line(&e)))
            })?;
        }
        let get = |name: &str| -> DbResult<Function> {
            lua.globals()
                .get(name)
                .map_err(|e| DbError::fatal(state::one_line(&e)))
        };
        let (event, restart) = (get("__rqps_event")?, get("__rqps_restart")?);
        Ok(LuaWorker {
            lua,
            event,
            restart,
            tally,
            deadline,
            aborted,
            ended: false,
            tid,
            histogram: plan.percentile != 0,
        })
    }

    fn drain(&self, c: &mut Counts) {
        if let Ok(mut t) = self.tally.lock() {
            c.add(&t);
            *t = Counts::default();
        }
    }

    /// Calls `thread_done`, once the step is over.
    pub fn done(self) -> Result<(), Fail> {
        self.deadline.store(u64::MAX, Ordering::Relaxed);
        if state::has_function(&self.lua, "thread_done") {
            let f: Function = self
                .lua
                .globals()
                .get("thread_done")
                .map_err(|e| Fail::lua(&e))?;
            f.call::<()>(self.tid).map_err(|e| {
                Fail::from(format!("thread_done() failed: {}", state::one_line(&e)))
            })?;
        }
        Ok(())
    }
}

impl Worker for LuaWorker {
    fn event(&mut self, c: &mut Counts) -> DbResult<()> {
        self.lua.remove_app_data::<sql::Restarted>();
        let r = self.event.call::<MultiValue>(());
        if self.aborted.load(Ordering::Relaxed) {
            // An event stopped at the deadline is not counted, nor are the
            // statements it sent (sysbench never stops an event midway).
            if let Ok(mut t) = self.tally.lock() {
                *t = Counts::default();
            }
        }
        self.drain(c);
        let mut v = r
            .map_err(|e| DbError::fatal(state::one_line(&e)))?
            .into_iter();
        let status = match v.next() {
            Some(Value::Integer(i)) => i,
            Some(Value::Number(n)) => n as i64,
            _ => 2,
        };
        let text = |v: Option<Value>| match v {
            Some(Value::String(s)) => s.to_string_lossy(),
            Some(Value::Integer(i)) => i.to_string(),
            Some(Value::Number(n)) => n.to_string(),
            _ => String::new(),
        };
        match status {
            0 => {
                self.ended = matches!(v.next(), Some(Value::Boolean(true)));
                // sysbench's draw for the event's histogram slot, after an
                // event that did not end the thread.
                if !self.ended && self.histogram {
                    rand::skip_histogram_slot(&self.lua);
                }
                Ok(())
            }
            1 => {
                let message = text(v.next());
                let errno = text(v.next());
                let state = text(v.next());
                let code = if state.is_empty() { errno } else { state };
                // A restart the script raised itself (sql_error_ignorable
                // or an error table of its own) failed no statement.
                let meaning = self
                    .lua
                    .remove_app_data::<sql::Restarted>()
                    .map_or(Meaning::Other, |r| r.0);
                Err(DbError {
                    class: ErrorClass::Retry,
                    code: Some(code),
                    meaning,
                    message,
                })
            }
            _ if self.aborted.load(Ordering::Relaxed) => {
                self.ended = true;
                Ok(())
            }
            _ => Err(DbError::fatal(format!(
                "event() failed: {}",
                text(v.next())
            ))),
        }
    }

    fn recover(&mut self, err: &DbError) -> DbResult<()> {
        match err.class {
            ErrorClass::Retry => self.restart.call::<()>(()).map_err(|e| {
                DbError::fatal(format!("before_restart_event: {}", state::one_line(&e)))
            }),
            _ => Err(err.clone()),
        }
    }

    fn pause(&mut self, deadline_ns: u64, _stop: &dyn Fn() -> bool) -> bool {
        self.deadline.store(deadline_ns, Ordering::Relaxed);
        false
    }

    fn finished(&self) -> bool {
        self.ended
    }

    fn abandoned(&self) -> bool {
        self.ended
    }
}
