//! rqps's side of `rqps bench dbbench-client`: a key-value database loaded
//! and warmed the way the benchmark needs, and readrandom through the dbbench
//! suite's workers and the harness's step runner. Only the key-value face is
//! used; the command itself is in `selfbench/mod.rs`, the bare loop that
//! calls the engine's library directly in `selfbench/bare_rocksdb.rs`.

use std::sync::Arc;
use std::time::Duration;

use super::measure::BenchError;
use crate::engine::kv::KvAccess;
use crate::harness::runner::{StepConfig, run_step};
use crate::suite::dbbench::{Dbbench, KvWorker, Op, Params, key_of, value_source};

/// The benchmark's key size (db_bench's default).
pub const KEY_SIZE: usize = 20;

/// Key `i` as the suite writes it, [`KEY_SIZE`] bytes: what the bare loop
/// must read to read the same keys.
pub fn key20(i: u64, out: &mut Vec<u8>) {
    key_of(i, KEY_SIZE, out)
}

/// readrandom through rqps on `keys` keys, `threads` readers, `secs` per round.
pub struct Readers {
    p: Params,
    values: Arc<Vec<u8>>,
}

impl Readers {
    pub fn new(keys: u64, threads: usize, secs: f64) -> Self {
        let p = Dbbench::params_for_bench(keys, threads, secs);
        let values = Arc::new(value_source(p.seed, p.value_size));
        Readers { p, values }
    }

    /// Loads every key in key order with plain puts (not the suite's worker,
    /// so that a profile of the worker's loop holds only the reads), puts
    /// the tree in a known shape, then reads every key once on this thread
    /// so that the block cache holds them all before the measured rounds.
    pub fn load_and_warm(&self, kv: &dyn KvAccess) -> Result<(), BenchError> {
        let (keys, size) = (self.p.keys, self.p.value_size);
        {
            let mut conn = kv
                .connect()
                .map_err(BenchError::engine("starting the load"))?;
            conn.set_write_ahead_log(false);
            let mut key = Vec::new();
            for i in 0..keys {
                key20(i, &mut key);
                let at = (i as usize * 97) % (self.values.len() - size);
                conn.put(&key, &self.values[at..at + size])
                    .map_err(BenchError::engine("loading the keys"))?;
            }
        }
        kv.empty_level0(Duration::from_secs(600))
            .map_err(BenchError::engine("settling the tree"))?;
        let mut conn = kv
            .connect()
            .map_err(BenchError::engine("warming the cache"))?;
        let (mut key, mut out) = (Vec::new(), Vec::new());
        for i in 0..keys {
            key20(i, &mut key);
            conn.get(&key, &mut out)
                .map_err(BenchError::engine("warming the cache"))?;
        }
        Ok(())
    }

    /// One round: the suite's readrandom workers through the harness's step
    /// runner, with `seed`. Returns the reads and the seconds they took.
    pub fn run(&mut self, kv: &dyn KvAccess, seed: u64) -> Result<(u64, f64), BenchError> {
        self.p.seed = seed;
        let p = &self.p;
        let mut workers = (0..p.threads)
            .map(|i| KvWorker::new(kv, p, Op::ReadRandom, i, None, self.values.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(BenchError::engine("starting the readers"))?;
        let cfg = StepConfig {
            warmup: Duration::ZERO,
            duration: Duration::from_secs_f64(p.secs),
            reconnect_for: Duration::ZERO,
            events: None,
        };
        let one_each = crate::harness::Placement::thread_per_worker();
        let r = run_step(&mut workers, &cfg, &one_each, &mut |_| {}, &mut || {});
        Ok((r.counts.queries(), r.secs))
    }
}
