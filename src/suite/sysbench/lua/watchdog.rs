//! The watchdog of a script's `run` step. Events run with LuaJIT's trace
//! compiler on, as in sysbench, and a compiled loop never reaches an
//! instruction hook; so a thread of its own watches the workers:
//! - an event still running the event grace after the test's end (the
//!   test's time, 5 s to 60 s: events in flight at the end finish and are
//!   counted, as in sysbench), or at Ctrl-C, is asked to stop: its next
//!   statement fails, which ends the event and the worker, with a message
//!   that says so (the test fails; at Ctrl-C it is interrupted);
//! - an event that goes on in Lua code that calls nothing rqps could fail
//!   (a loop the JIT compiled) [`ESCALATE`] after that ends the run, with a
//!   message that names the thread, since no thread can be stopped from
//!   outside. A worker that waits for the database is not ended here: a
//!   statement that does not return is the connection's matter.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::capi::ThreadCtx;
use crate::harness::runner::stop_requested;

/// How long a worker asked to stop may stay in Lua before the run ends.
pub const ESCALATE: Duration = Duration::from_secs(2);
/// Why it asked the workers to stop.
const STOP: &str = "stop";
const END: &str = "end";
/// How often the watchdog looks.
const TICK: Duration = Duration::from_millis(50);

/// The watchdog of one step; stopped (and the workers' marks cleared) when
/// dropped.
pub struct Watchdog {
    done: Arc<AtomicBool>,
    ctxs: Vec<Arc<ThreadCtx>>,
    handle: Option<JoinHandle<()>>,
}

/// What the watchdog watches.
pub struct Watch {
    pub ctxs: Vec<Arc<ThreadCtx>>,
    /// The step's end (none when only `--events` bounds it).
    pub deadline: Option<Instant>,
    /// How long an event may run past it.
    pub grace: Duration,
    /// The script, for the message.
    pub script: String,
}

impl Watchdog {
    pub fn spawn(w: Watch) -> Watchdog {
        let done = Arc::new(AtomicBool::new(false));
        let ctxs = w.ctxs.clone();
        let d = done.clone();
        let handle = std::thread::Builder::new()
            .name("rqps-lua-watchdog".into())
            .spawn(move || watch(&w, &d))
            .ok();
        Watchdog { done, ctxs, handle }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        // thread_done runs after the step: its statements are not refused.
        for c in &self.ctxs {
            c.watch.abort.store(false, Ordering::Relaxed);
        }
    }
}

fn watch(w: &Watch, done: &AtomicBool) {
    let mut asked: Option<(Instant, &'static str)> = None;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(TICK);
        let now = Instant::now();
        let why = if stop_requested() {
            Some(STOP)
        } else if w.deadline.is_some_and(|d| now >= d + w.grace) {
            Some(END)
        } else {
            None
        };
        if let Some(why) = why
            && asked.is_none()
        {
            asked = Some((now, why));
        }
        let Some((at, why)) = asked else {
            continue;
        };
        for c in &w.ctxs {
            if c.watch.in_event.load(Ordering::Relaxed) {
                c.watch.abort.store(true, Ordering::Relaxed);
            }
        }
        if now < at + ESCALATE {
            continue;
        }
        let stuck = w.ctxs.iter().find(|c| {
            c.watch.in_event.load(Ordering::Relaxed) && !c.watch.in_db.load(Ordering::Relaxed)
        });
        if let Some(c) = stuck {
            let when = if why == STOP {
                format!(
                    "{:.0} s after the stop",
                    now.duration_since(at).as_secs_f64()
                )
            } else {
                format!(
                    "{:.0} s after the test's end",
                    w.deadline
                        .map_or(0.0, |d| now.saturating_duration_since(d).as_secs_f64())
                )
            };
            crate::harness::quit::end_run_now(&format!(
                "{}: event() of thread {} still runs {when}, in Lua code that calls nothing rqps \
                 can stop (a loop LuaJIT compiled); rqps ends the run, and the test reads as \
                 killed (sysbench would run the loop for ever)",
                w.script, c.tid,
            ));
        }
    }
}
