//! `sysbench.rand` for scripts: the one adapter between sysbench's names
//! and sysbench's own generator ([`crate::suite::sysbench::rng`]). Worker
//! thread `i` of a `run` (and of a parallel command) draws from
//! `SbRng::for_thread(rand_seed, i, dist)`: with one thread and a seed, the
//! values sysbench 1.0.20 draws. A script's top level, `init()`, `done()`
//! and commands run on the main thread draw from [`SbRng::main_thread`]
//! (sysbench's own main stream cannot be reproduced). `unique` is
//! [`SbUnique`], one sequence shared by every thread of the process.
//!
//! Two draws sysbench takes outside the script are taken here too, so the
//! script's draws stay on sysbench's stream: one after every event for the
//! latency histogram ([`skip_histogram_slot`], unless `--percentile=0`),
//! and two each time the PostgreSQL driver names a server-side prepared
//! statement ([`name_statement`], sysbench 1.0.20's `get_unique_stmt_name`).

use std::sync::{Arc, Mutex};

use mlua::{Lua, Table};

use crate::suite::sysbench::rng::{SbDist, SbRng, SbUnique, c_u32};

/// One state's generator, shared by its `sysbench.rand` functions and kept
/// in the state's app data for the draws sysbench takes outside the script.
#[derive(Clone)]
pub struct Stream(Arc<Mutex<SbRng>>);

impl Stream {
    fn with<T>(&self, f: impl FnOnce(&mut SbRng) -> T) -> T {
        match self.0.lock() {
            Ok(mut r) => f(&mut r),
            Err(p) => f(&mut p.into_inner()),
        }
    }
}

/// Which stream a state draws from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Thread {
    /// sysbench's main thread: the check, commands not run in parallel,
    /// `init()` and `done()`.
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

/// The draw sysbench takes after each event for its latency histogram.
pub fn skip_histogram_slot(lua: &Lua) {
    if let Some(s) = lua.app_data_ref::<Stream>() {
        s.with(|r| r.skip_histogram_slot());
    }
}

/// The two draws sysbench 1.0.20's PostgreSQL driver takes to name a
/// server-side prepared statement (`sbstmt` and two random numbers).
pub fn name_statement(lua: &Lua) {
    if let Some(s) = lua.app_data_ref::<Stream>() {
        s.with(|r| {
            r.uniform_uint64();
            r.uniform_uint64();
        });
    }
}

/// A Lua number as sysbench's FFI passes it to a `uint32_t` parameter.
fn u32_of(x: f64) -> u32 {
    c_u32(x)
}

/// Fills `sysbench.rand` for `thread`, `default` drawing from `dist`.
pub fn register(
    lua: &Lua,
    t: &Table,
    rand_seed: u32,
    thread: Thread,
    dist: SbDist,
) -> mlua::Result<()> {
    let rng = match thread {
        Thread::Main => SbRng::main_thread(rand_seed, dist),
        Thread::Worker(i) => SbRng::for_thread(rand_seed, i, dist),
    };
    let s = Stream(Arc::new(Mutex::new(rng)));
    lua.set_app_data(s.clone());
    type Draw = fn(&mut SbRng, u32, u32) -> u32;
    let ranged: [(&str, Draw); 6] = [
        ("default", SbRng::default),
        ("uniform", SbRng::uniform),
        ("gaussian", SbRng::gaussian),
        ("special", SbRng::special),
        ("pareto", SbRng::pareto),
        ("zipfian", SbRng::zipfian),
    ];
    for (name, f) in ranged {
        let s = s.clone();
        t.set(
            name,
            lua.create_function(move |_, (a, b): (f64, f64)| {
                Ok(s.with(|r| f(r, u32_of(a), u32_of(b))) as f64)
            })?,
        )?;
    }
    let w = s.clone();
    t.set(
        "uniform_uint64",
        lua.create_function(move |_, ()| Ok(w.with(|r| r.uniform_uint64()) as f64))?,
    )?;
    let w = s.clone();
    t.set(
        "uniform_double",
        lua.create_function(move |_, ()| Ok(w.with(|r| r.uniform_double())))?,
    )?;
    let unique = unique_sequence(rand_seed);
    t.set(
        "unique",
        lua.create_function(move |_, ()| Ok(unique.next() as f64))?,
    )?;
    let w = s.clone();
    t.set(
        "string",
        lua.create_function(move |lua, fmt: mlua::LuaString| {
            let mut out = Vec::new();
            w.with(|r| r.string_into(&fmt.as_bytes(), &mut out));
            lua.create_string(out)
        })?,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rand_table(thread: Thread, dist: SbDist) -> (Lua, Table) {
        let lua = Lua::new();
        let t = lua.create_table().unwrap();
        register(&lua, &t, 7, thread, dist).unwrap();
        (lua, t)
    }

    #[test]
    fn a_worker_thread_draws_sysbench_s_stream_for_that_thread() {
        let dist = SbDist::sysbench_default();
        let (_lua, t) = rand_table(Thread::Worker(1), dist);
        let mut want = SbRng::for_thread(7, 1, dist);
        let f: mlua::Function = t.get("default").unwrap();
        let u: mlua::Function = t.get("uniform").unwrap();
        for _ in 0..100 {
            assert_eq!(
                f.call::<f64>((1, 10000)).unwrap(),
                want.default(1, 10000) as f64
            );
            assert_eq!(u.call::<f64>((5, 50)).unwrap(), want.uniform(5, 50) as f64);
        }
    }

    #[test]
    fn the_histogram_and_statement_name_draws_advance_the_state_s_stream() {
        let dist = SbDist::sysbench_default();
        let (lua, t) = rand_table(Thread::Main, dist);
        let mut want = SbRng::main_thread(7, dist);
        skip_histogram_slot(&lua);
        name_statement(&lua);
        for _ in 0..3 {
            want.uniform_uint64();
        }
        let f: mlua::Function = t.get("uniform").unwrap();
        assert_eq!(
            f.call::<f64>((1, 1000)).unwrap(),
            want.uniform(1, 1000) as f64
        );
    }

    #[test]
    fn random_strings_keep_the_template_s_shape() {
        let (_lua, t) = rand_table(Thread::Worker(0), SbDist::sysbench_default());
        let f: mlua::Function = t.get("string").unwrap();
        let s: String = f.call("##-@@x").unwrap();
        let s = s.as_bytes();
        assert_eq!(s.len(), 6);
        assert!(s[0].is_ascii_digit() && s[2] == b'-' && s[3].is_ascii_lowercase() && s[5] == b'x');
    }
}
