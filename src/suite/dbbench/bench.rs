//! `rqps bench dbbench-client`: readrandom on cached data through rqps's
//! worker and harness against a bare loop calling the same RocksDB library
//! directly, in one process on one database (alternating rounds so drift
//! hits both contenders). The target: rqps reaches at least 0.95 of the
//! bare loop's reads per second.

use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use super::{KvWorker, Op, Params, key_of, value_source};
use crate::engine::install::{EngineSpec, basedir_for};
use crate::engine::kv::KvAccess;
use crate::engine::rocksdb::{KIND, RocksDriver};
use crate::harness::bench::{BenchError, cpu_secs};
use crate::harness::runner::{StepConfig, run_step};

#[derive(Args, Clone, Debug)]
pub struct ClientArgs {
    /// The RocksDB release (installed into the engine cache first if missing).
    #[arg(long, value_name = "VERSION")]
    pub version: String,
    /// Keys loaded (20-byte keys, 400-byte values; all fit in the 1 GiB block cache).
    #[arg(long, default_value_t = 200_000)]
    pub keys: u64,
    /// Reader threads of each contender.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Seconds per round of each contender.
    #[arg(long, default_value_t = 3.0)]
    pub secs: f64,
    /// Rounds (each runs the bare loop and rqps once, alternating who goes first).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
}

/// The cache that holds every block of the benchmark's data.
const CACHED: &str = "block_based_table_factory={block_cache=1073741824}";

fn key20(i: u64, out: &mut Vec<u8>) {
    key_of(i, 20, out)
}

/// Reads per wall second and per CPU second of one contender.
struct Rate {
    ops: u64,
    wall: f64,
    cpu: f64,
}

fn measure(f: impl FnOnce() -> Result<(u64, f64), BenchError>) -> Result<Rate, BenchError> {
    let c0 = cpu_secs();
    let (ops, wall) = f()?;
    let cpu = (cpu_secs() - c0).max(1e-9);
    Ok(Rate {
        ops,
        wall: ops as f64 / wall.max(1e-9),
        cpu: ops as f64 / cpu,
    })
}

/// rqps's readrandom: the suite's workers through the harness's step runner.
fn ours(kv: &dyn KvAccess, p: &Params, values: &Arc<Vec<u8>>) -> Result<(u64, f64), BenchError> {
    let mut workers = (0..p.threads)
        .map(|i| KvWorker::new(kv, p, Op::ReadRandom, i, None, values.clone()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(BenchError::engine("starting the readers"))?;
    let cfg = StepConfig {
        warmup: Duration::ZERO,
        duration: Duration::from_secs_f64(p.secs),
        reconnect_for: Duration::ZERO,
    };
    let r = run_step(&mut workers, &cfg, &mut |_| {}, &mut || {});
    Ok((r.counts.queries(), r.secs))
}

pub fn dbbench_client(a: &ClientArgs) -> Result<(), BenchError> {
    if a.rounds == 0 || a.secs <= 0.0 || a.keys == 0 || a.threads == 0 {
        return Err(BenchError::Args(
            "--rounds, --secs, --keys and --threads must be more than 0",
        ));
    }
    let spec: EngineSpec = format!("{}@{}", KIND.name, a.version).parse().map_err(
        |e: crate::engine::install::EngineSpecError| BenchError::NoResult(e.to_string()),
    )?;
    let base = basedir_for(&spec, true, &mut |n| eprintln!("{n}"))
        .map_err(|e| BenchError::NoResult(e.to_string()))?
        .ok_or_else(|| BenchError::NoResult("no release named".into()))?;
    let lib = KIND
        .library
        .map(|l| (l.file_in)(&base))
        .ok_or_else(|| BenchError::NoResult("RocksDB is not loaded from a library".into()))?;
    let dir = tempfile::tempdir().map_err(BenchError::io("cannot create a temporary directory"))?;
    let driver = RocksDriver::open(&lib, &dir.path().join("db"), Some(&a.version), Some(CACHED))
        .map_err(BenchError::engine("opening the database"))?;
    let mut p = super::Dbbench::params_for_bench(a.keys, a.threads, a.secs);
    let values = Arc::new(value_source(p.seed, p.value_size));
    // Load in key order with plain puts (not the suite's worker, so that a
    // profile of the worker's loop holds only the reads), then settle.
    {
        let mut conn = driver
            .connect()
            .map_err(BenchError::engine("starting the load"))?;
        conn.set_write_ahead_log(false);
        let mut key = Vec::new();
        for i in 0..a.keys {
            key20(i, &mut key);
            let at = (i as usize * 97) % (values.len() - p.value_size);
            conn.put(&key, &values[at..at + p.value_size])
                .map_err(BenchError::engine("loading the keys"))?;
        }
    }
    driver
        .empty_level0(Duration::from_secs(600))
        .map_err(BenchError::engine("settling the tree"))?;
    // Fill the block cache: every key read once, on this thread, so that a
    // profile's reader threads hold only the measured rounds.
    {
        let mut conn = driver
            .connect()
            .map_err(BenchError::engine("warming the cache"))?;
        let (mut key, mut out) = (Vec::new(), Vec::new());
        for i in 0..a.keys {
            key20(i, &mut key);
            conn.get(&key, &mut out)
                .map_err(BenchError::engine("warming the cache"))?;
        }
    }
    let (mut bare_reads, mut rqps_reads) = (0u64, 0u64);
    println!(
        "readrandom on RocksDB {} (cached), {} keys, {} thread(s), {} s per round",
        a.version, a.keys, a.threads, a.secs
    );
    println!("reads per wall second, and per CPU second of this process (robust to other load):");
    println!(
        "{:>5} {:>11} {:>11} {:>7}   {:>11} {:>11} {:>7}",
        "round", "bare r/s", "rqps r/s", "ratio", "bare r/cpu", "rqps r/cpu", "ratio"
    );
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for r in 0..a.rounds {
        let seed = 100 + r as u64;
        p.seed = seed;
        let run_bare = || {
            measure(|| {
                driver
                    .bare_readrandom(a.threads, a.secs, a.keys, seed, key20)
                    .map_err(BenchError::engine("the bare loop"))
            })
        };
        let run_ours = || measure(|| ours(&driver, &p, &values));
        let (bare, rqps) = if r % 2 == 0 {
            let b = run_bare()?;
            (b, run_ours()?)
        } else {
            let o = run_ours()?;
            (run_bare()?, o)
        };
        bare_reads += bare.ops;
        rqps_reads += rqps.ops;
        wall.push(rqps.wall / bare.wall);
        cpu.push(rqps.cpu / bare.cpu);
        println!(
            "{:>5} {:>11.0} {:>11.0} {:>7.3}   {:>11.0} {:>11.0} {:>7.3}",
            r + 1,
            bare.wall,
            rqps.wall,
            rqps.wall / bare.wall,
            bare.cpu,
            rqps.cpu,
            rqps.cpu / bare.cpu
        );
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "median ratio rqps/bare: {:.3} per wall second, {:.3} per CPU second (target >= 0.95)",
        median(&mut wall),
        median(&mut cpu)
    );
    // For a profile's per-read cost (callgrind: the inclusive cost of the
    // harness's worker threads and of the bare loop's threads, over these).
    println!("reads in all rounds: bare {bare_reads}, rqps {rqps_reads}");
    Ok(())
}
