//! `sysbench.rand` for scripts: the one adapter between sysbench's names
//! and sysbench's own generator ([`crate::suite::sysbench::rng`]). Worker
//! thread `i` of a `run` (and of a parallel command) draws from
//! `SbRng::for_thread(rand_seed, i, dist)`: with one thread and a seed, the
//! values sysbench 1.0.20 draws. A script's top level, `init()`, `done()`
//! and commands run on the main thread draw from [`SbRng::main_thread`]
//! (sysbench's own main stream cannot be reproduced). `unique` is
//! [`SbUnique`], one sequence shared by every thread of the process.
//!
//! The functions are sysbench's C functions (`sb_rand_uniform` and the
//! rest, [`super::capi`]), called through `ffi.C` as sysbench's own
//! `sysbench.rand` calls them: the Lua numbers are converted to `uint32_t`
//! by LuaJIT as in sysbench, `uniform_uint64` returns a `uint64_t` cdata,
//! and the JIT compiles the calls into the script's traces.
//!
//! Two draws sysbench takes outside the script are taken here too, so the
//! script's draws stay on sysbench's stream: one after every event for the
//! latency histogram (unless `--percentile=0`), and two each time the
//! PostgreSQL driver names a server-side prepared statement
//! ([`name_statement`], sysbench 1.0.20's `get_unique_stmt_name`).

use std::sync::{Arc, Mutex};

use super::capi::ThreadCtx;
use crate::suite::sysbench::rng::{SbDist, SbRng, SbUnique, c_u32};

/// Which stream a state draws from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Thread {
    /// sysbench's main thread: the check, commands not run in parallel,
    /// `init()`, `done()` and the reports.
    Main,
    /// Worker thread `i` (`sysbench.tid`).
    Worker(usize),
}

static UNIQUE: Mutex<Option<Arc<SbUnique>>> = Mutex::new(None);

/// Seeds the process's unique sequence (once per script run).
pub fn seed_unique(rand_seed: u32) {
    let u = Arc::new(SbUnique::seeded(rand_seed));
    match UNIQUE.lock() {
        Ok(mut g) => *g = Some(u),
        Err(p) => *p.into_inner() = Some(u),
    }
}

fn unique_sequence(rand_seed: u32) -> Arc<SbUnique> {
    let mut g = match UNIQUE.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    g.get_or_insert_with(|| Arc::new(SbUnique::seeded(rand_seed)))
        .clone()
}

/// The context of a new state of `thread`: its stream of `rand_seed`,
/// drawing `default` from `dist`.
pub fn context(rand_seed: u32, thread: Thread, dist: SbDist) -> Arc<ThreadCtx> {
    let (tid, rng) = match thread {
        Thread::Main => (0, SbRng::main_thread(rand_seed, dist)),
        Thread::Worker(i) => (i, SbRng::for_thread(rand_seed, i, dist)),
    };
    ThreadCtx::new(tid, rng, unique_sequence(rand_seed))
}

/// The two draws sysbench 1.0.20's PostgreSQL driver takes to name a
/// server-side prepared statement (`sbstmt` and two random numbers).
pub fn name_statement(ctx: &ThreadCtx) {
    ctx.draw(|r| {
        r.uniform_uint64();
        r.uniform_uint64();
    });
}

/// A Lua number as sysbench's FFI passes it to a `uint32_t` parameter.
pub fn u32_of(x: f64) -> u32 {
    c_u32(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::sysbench::lua::plan::ScriptPlan;
    use crate::suite::sysbench::lua::state::{self, Db, Spec};

    /// A state of `thread` (no engine) and its context.
    fn state_of(thread: Thread, dist: SbDist, text: &str) -> (mlua::Lua, Arc<ThreadCtx>) {
        let mut plan = ScriptPlan::for_tests(text);
        plan.rand_type = dist.kind();
        let ctx = context(7, thread, dist);
        let lua = state::new(&Spec {
            plan: &plan,
            command: "run",
            ctx: ctx.clone(),
            opt: None,
            db: Db::Check,
        })
        .unwrap();
        (lua, ctx)
    }

    #[test]
    fn a_worker_thread_draws_sysbench_s_stream_for_that_thread() {
        let dist = SbDist::sysbench_default();
        let (lua, _) = state_of(Thread::Worker(1), dist, "");
        let mut want = SbRng::for_thread(7, 1, dist);
        let f: mlua::Function = lua
            .load("return function(a, b) return sysbench.rand.default(a, b), sysbench.rand.uniform(5, 50) end")
            .eval()
            .unwrap();
        for _ in 0..100 {
            let (d, u): (f64, f64) = f.call((1, 10000)).unwrap();
            assert_eq!(d, want.default(1, 10000) as f64);
            assert_eq!(u, want.uniform(5, 50) as f64);
        }
    }

    #[test]
    fn uniform_uint64_is_a_64_bit_cdata_as_in_sysbench() {
        let dist = SbDist::sysbench_default();
        let (lua, _) = state_of(Thread::Worker(0), dist, "");
        let mut want = SbRng::for_thread(7, 0, dist);
        let s: String = lua
            .load("return string.format('%s %s', type(sysbench.rand.uniform_uint64()), tostring(sysbench.rand.uniform_uint64()))")
            .eval()
            .unwrap();
        want.uniform_uint64();
        assert_eq!(s, format!("cdata {}ULL", want.uniform_uint64()));
    }

    #[test]
    fn the_statement_name_draws_advance_the_state_s_stream() {
        let dist = SbDist::sysbench_default();
        let (lua, ctx) = state_of(Thread::Main, dist, "");
        let mut want = SbRng::main_thread(7, dist);
        name_statement(&ctx);
        for _ in 0..2 {
            want.uniform_uint64();
        }
        let v: f64 = lua
            .load("return sysbench.rand.uniform(1, 1000)")
            .eval()
            .unwrap();
        assert_eq!(v, want.uniform(1, 1000) as f64);
    }

    #[test]
    fn random_strings_keep_the_template_s_shape() {
        let (lua, _) = state_of(Thread::Worker(0), SbDist::sysbench_default(), "");
        let s: String = lua
            .load("return sysbench.rand.string('##-@@x')")
            .eval()
            .unwrap();
        let s = s.as_bytes();
        assert_eq!(s.len(), 6);
        assert!(s[0].is_ascii_digit() && s[2] == b'-' && s[3].is_ascii_lowercase() && s[5] == b'x');
    }
}
