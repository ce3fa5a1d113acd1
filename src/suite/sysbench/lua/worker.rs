//! A script's thread as the harness runs it ([`Worker`]): its own Lua
//! state, `thread_init` when it is made (within the start-up bound), `event`
//! for each event with LuaJIT's trace compiler on, as sysbench runs it (an
//! event that returns true ends the thread, uncounted, as in sysbench),
//! `thread_done` at the end. An ignorable SQL error restarts the event (the
//! harness counts the error, then `before_restart_event` runs). An event
//! still running well past the step's end is ended by the watchdog
//! ([`super::watchdog`]); at Ctrl-C, at its next statement.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use mlua::{Function, Lua, Table, Thread as LuaThread, Value};

use super::capi::{self, ThreadCtx};
use super::fail::Fail;
use super::plan::ScriptPlan;
use super::rand::Thread;
use super::report::{Start, ThreadStats};
use super::script::Script;
use super::state;
use crate::engine::{DbError, DbResult, ErrorClass, Meaning, SqlState};
use crate::harness::measure::{Counts, event_clock};
use crate::harness::runner::{Worker, stop_requested};

pub struct LuaWorker {
    lua: Lua,
    /// A coroutine of the state holding `__rqps_event` at the bottom of its
    /// stack, called for each event through Lua's C API ([`EventCall`]).
    event: EventCall,
    restart: Function,
    pub ctx: Arc<ThreadCtx>,
    /// The counters after the last event, to count each event's share.
    last: Counts,
    ended: bool,
    /// The thread ended because its event returned a stop value.
    stopped: bool,
    /// The event was stopped at Ctrl-C: not counted, and the thread ends.
    abandoned: bool,
    tid: usize,
    /// Whether sysbench would keep a latency histogram (`--percentile`
    /// other than 0), drawing once after each event for it.
    histogram: bool,
    /// Each event's latency for the reports, when they need it.
    probe: Option<Arc<ThreadStats>>,
    start: Start,
    bound: std::time::Duration,
    grace: std::time::Duration,
    /// The memory bound of its state, bytes (0: none).
    memory: usize,
}

impl LuaWorker {
    /// Thread `tid` of `threads`: its state, options exported, `thread_init`
    /// called; `timed`: its events are timed for sysbench's reports.
    pub fn new(
        s: &Script,
        plan: &ScriptPlan,
        tid: usize,
        threads: usize,
        timed: bool,
        start: Start,
    ) -> DbResult<LuaWorker> {
        let opt = plan.opt_for(threads);
        let (lua, ctx) = s
            .state(plan, "run", Thread::Worker(tid), &opt)
            .map_err(DbError::fatal)?;
        capi::register(&ctx);
        let bound = plan.startup_bound();
        state::call_global(&lua, "thread_init", tid, bound).map_err(DbError::fatal)?;
        // Events run compiled, as in sysbench.
        state::jit(&lua, true).map_err(|e| DbError::fatal(state::one_line(&e)))?;
        let get = |name: &str| -> DbResult<Function> {
            lua.globals()
                .get(name)
                .map_err(|e| DbError::fatal(state::one_line(&e)))
        };
        let (event, restart) = (get("__rqps_event")?, get("__rqps_restart")?);
        let event = EventCall::new(&lua, event).map_err(|e| DbError::fatal(state::one_line(&e)))?;
        let probe = timed.then(|| ThreadStats::new(ctx.clone()));
        Ok(LuaWorker {
            last: ctx.counts(),
            lua,
            event,
            restart,
            ctx,
            ended: false,
            stopped: false,
            abandoned: false,
            tid,
            histogram: plan.percentile != 0,
            probe,
            start,
            bound,
            grace: plan.event_grace(),
            memory: plan.memory_bytes(),
        })
    }

    /// Whether the thread ended because its event returned a stop value.
    pub fn stopped_by_script(&self) -> bool {
        self.stopped
    }

    /// Seconds its measured events took (0 when not timed).
    pub fn busy_secs(&self) -> f64 {
        self.probe
            .as_ref()
            .map_or(0.0, |p| p.busy_ns.load(Ordering::Relaxed) as f64 / 1e9)
    }

    /// What the reports read of this thread.
    pub fn probe(&self) -> Option<Arc<ThreadStats>> {
        self.probe.clone()
    }

    /// Adds what the thread counted since the last call to `c` (rqps
    /// counts its events itself; the restarts are the harness's errors).
    fn drain(&mut self, c: &mut Counts) {
        let now = self.ctx.counts();
        let mut d = now.minus(&self.last);
        d.events = 0;
        c.add(&d);
        self.last = now;
    }

    /// Calls `thread_done`, once the step is over (within the bound, in
    /// the interpreter).
    pub fn done(self) -> Result<(), Fail> {
        self.ctx.watch.over.store(true, Ordering::Relaxed);
        if let Some(p) = &self.probe {
            p.running.store(false, Ordering::Relaxed);
        }
        state::call_global(&self.lua, "thread_done", self.tid, self.bound)
    }

    /// The error of an event the script failed, as one line.
    fn failure(&self) -> DbError {
        let text = match self.lua.globals().get::<Value>("__rqps_err") {
            Ok(Value::String(s)) => s.to_string_lossy(),
            _ => "an error without a message".into(),
        };
        if let Some(code) = self.ctx.exited() {
            return DbError::fatal(format!("event(): {}", state::exit_message(code)));
        }
        let e = mlua::Error::runtime(text);
        DbError::fatal(state::memory_or(&self.lua, &e, "event()").message)
    }

    /// The error an ignorable failure restarts the event with.
    fn restart_error(&self) -> DbError {
        let (msg, errno, sqlstate) = match self.lua.globals().get::<Table>("__rqps_err") {
            Ok(t) => (
                t.get::<Option<String>>("sql_errmsg").ok().flatten(),
                t.get::<Option<i64>>("sql_errno").ok().flatten(),
                t.get::<Option<String>>("sql_state").ok().flatten(),
            ),
            Err(_) => (None, None, None),
        };
        let message = msg.unwrap_or_else(|| "an ignorable error".into());
        let state = sqlstate.and_then(|s| SqlState::parse(s.as_bytes()));
        // The engine's code: MySQL's error number, else (PostgreSQL's
        // errors have none) the SQLSTATE.
        let code = match errno {
            Some(n) if n != 0 => Some(n.to_string()),
            _ => state.map(|s| s.to_string()),
        };
        // A restart the script raised itself (sql_error_ignorable or an
        // error table of its own) failed no statement.
        let meaning = self.ctx.take_restarted().unwrap_or(Meaning::Other);
        DbError {
            code,
            state,
            ..DbError::new(ErrorClass::Retry, meaning, message)
        }
    }
}

/// `__rqps_event` called through Lua's C API on a coroutine of its own,
/// where it sits at the bottom of the stack: a push, a protected call and a
/// read of its number per event. mlua's `Function::call` took about 350
/// instructions an event more (its lock, a reference moved between
/// threads, an error handler pushed, stack checks and guards, the result
/// converted), about 8 % of a point select's client instructions.
struct EventCall {
    /// Holds the coroutine (and so its stack and the function) alive.
    thread: LuaThread,
}

impl EventCall {
    fn new(lua: &Lua, f: Function) -> mlua::Result<EventCall> {
        // mlua's coroutine starts with the function alone on its stack.
        Ok(EventCall {
            thread: lua.create_thread(f)?,
        })
    }

    /// Calls the function: its number (`__rqps_event` returns 0 to 3), or
    /// the error that escaped it (only running out of memory can: it calls
    /// the event under `pcall`).
    fn call(&mut self) -> mlua::Result<i32> {
        use mlua::ffi;
        let l = self.thread.state();
        // SAFETY: `l` is the coroutine's state, alive while `self.thread`
        // is, and used by this worker alone (`&mut self`; the worker owns
        // its Lua state and nothing else calls into it while an event
        // runs, so mlua's lock has no other holder; mlua's callbacks that
        // the event reaches take it themselves). The coroutine is never
        // resumed: it only serves as a stack, index 1 holding the function,
        // and each call leaves it as it found it (`lua_settop(l, 1)`). The
        // call is protected, so no Lua error unwinds through Rust. A fresh
        // coroutine has LUA_MINSTACK (20) free slots; a call needs 2.
        unsafe {
            ffi::lua_pushvalue(l, 1);
            let rc = ffi::lua_pcall(l, 0, 1, 0);
            let r = if rc == ffi::LUA_OK {
                Ok(ffi::lua_tointeger_(l, -1) as i32)
            } else {
                let mut len = 0usize;
                let p = ffi::lua_tolstring(l, -1, &mut len);
                let msg = if p.is_null() {
                    "an error without a message".to_string()
                } else {
                    String::from_utf8_lossy(std::slice::from_raw_parts(p.cast::<u8>(), len))
                        .into_owned()
                };
                Err(if rc == ffi::LUA_ERRMEM {
                    mlua::Error::MemoryError(msg)
                } else {
                    mlua::Error::runtime(msg)
                })
            };
            ffi::lua_settop(l, 1);
            r
        }
    }

    /// The bytes the state's garbage collector holds, in whole KiB (its
    /// own count, as `collectgarbage("count")` gives it).
    fn gc_bytes(&self) -> usize {
        use mlua::ffi;
        let l = self.thread.state();
        // SAFETY: as in `call`; reading the GC's counters changes nothing.
        unsafe { ffi::lua_gc(l, ffi::LUA_GCCOUNT, 0).max(0) as usize * 1024 }
    }
}

impl Worker for LuaWorker {
    fn event(&mut self, c: &mut Counts) -> DbResult<()> {
        capi::enter(&self.ctx);
        self.ctx.take_restarted();
        let watch = &self.ctx.watch;
        let t0 = self.probe.as_ref().map(|_| event_clock().now_ns());
        watch.in_event.store(true, Ordering::Relaxed);
        let r = self.event.call();
        watch.in_event.store(false, Ordering::Relaxed);
        if watch.abort.load(Ordering::Relaxed) {
            // Stopped by the watchdog (or Ctrl-C): not counted, nor are the
            // statements it sent.
            self.last = self.ctx.counts();
            self.ended = true;
            if stop_requested() {
                self.abandoned = true;
                return Ok(());
            }
            return Err(DbError::fatal(format!(
                "event() of thread {} was stopped: it was still running {:.0} s after the \
                 test's end (an endless loop?); rqps stops such an event at its next statement",
                self.tid,
                self.grace.as_secs_f64()
            )));
        }
        self.drain(c);
        // The GC's own count first (no lock, no call into mlua): the exact
        // check only when it comes near the bound.
        if self.memory > 0
            && self.event.gc_bytes() > self.memory - self.memory / 8
            && let Some(f) = state::over_memory(&self.lua, "event()")
        {
            self.ended = true;
            return Err(DbError::fatal(f.message));
        }
        if let Some(code) = self.ctx.exited() {
            return Err(DbError::fatal(format!(
                "event(): {}",
                state::exit_message(code)
            )));
        }
        match r {
            Ok(0) => {
                // sysbench's draw for the event's histogram slot, after an
                // event that did not end the thread.
                if self.histogram {
                    self.ctx.draw(|r| r.skip_histogram_slot());
                }
                if let (Some(p), Some(t0)) = (&self.probe, t0) {
                    p.event(event_clock().now_ns().saturating_sub(t0));
                }
                Ok(())
            }
            Ok(1) => {
                self.ended = true;
                self.stopped = true;
                if let Some(p) = &self.probe {
                    p.running.store(false, Ordering::Relaxed);
                }
                Ok(())
            }
            Ok(2) => {
                self.ctx.restarts.fetch_add(1, Ordering::Relaxed);
                Err(self.restart_error())
            }
            Ok(_) => Err(self.failure()),
            Err(e) => Err(DbError::fatal(
                state::memory_or(&self.lua, &e, "event()").message,
            )),
        }
    }

    fn recover(&mut self, err: &DbError) -> DbResult<()> {
        match err.class {
            ErrorClass::Retry => {
                capi::enter(&self.ctx);
                self.restart.call::<()>(()).map_err(|e| {
                    DbError::fatal(format!("before_restart_event: {}", state::one_line(&e)))
                })
            }
            _ => Err(err.clone()),
        }
    }

    fn warmed_up(&mut self) {
        let _ = self.start.set(std::time::Instant::now());
        if let Some(p) = &self.probe {
            p.reset();
        }
    }

    fn finished(&self) -> bool {
        self.ended
    }

    fn abandoned(&self) -> bool {
        self.abandoned || self.ended
    }
}
