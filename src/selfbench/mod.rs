//! `rqps bench`: measures rqps itself, every self-benchmark in one place.
//! This module sits above the suites and the engines and may name both: it
//! pairs a suite's public workers and loaders (through the harness) with a
//! bare contender that calls an engine's own library or a peer client, on
//! throwaway servers it starts. Nothing below it knows it exists; the CLI
//! holds only the `bench` subcommand and calls [`run_cmd`].
//!
//! - `harness`: here, with the point-query worker ([`point_queries`]) and
//!   the bare SQLite loop ([`bare_sqlite`]);
//! - `vs-sysbench`: [`vs_sysbench`];
//! - `ibench-client`: [`ibench_client`];
//! - `dbbench-client`: here, with the dbbench readers ([`dbbench_readers`])
//!   and the bare RocksDB loop ([`bare_rocksdb`]);
//! - what they share (CPU time, rounds, quartiles, pinning, children,
//!   throwaway servers, the error): [`measure`].

pub mod bare_rocksdb;
pub mod bare_sqlite;
pub mod dbbench_readers;
pub mod ibench_client;
pub mod measure;
pub mod point_queries;
pub mod vs_sysbench;

use clap::Subcommand;

use ibench_client::{IbClientArgs, ibench_client};
use measure::{
    BenchError, NoResult, Quartiles, Round, alternate, load_average, measure_round, pin_to_cpu,
};
use vs_sysbench::{VsArgs, vs_sysbench};

#[derive(Subcommand, Clone, Debug)]
pub enum BenchCmd {
    /// rqps's point-query loop against a bare prepared-statement loop on embedded SQLite.
    Harness(BenchArgs),
    /// rqps against real sysbench on throwaway servers: QPS and client CPU per query.
    VsSysbench(VsArgs),
    /// The Insert Benchmark's l.i0 with rqps as the client against a minimal client that
    /// only sends the same INSERTs, on throwaway servers: insert rate and client CPU per row.
    IbenchClient(IbClientArgs),
    /// db_bench's readrandom on cached data through rqps against a bare loop calling the
    /// same RocksDB library directly, in one process: reads per second and per CPU second.
    DbbenchClient(DbClientArgs),
}

pub fn run_cmd(c: &BenchCmd) -> Result<(), BenchError> {
    match c {
        BenchCmd::Harness(a) => harness(a),
        BenchCmd::VsSysbench(a) => vs_sysbench(a),
        BenchCmd::IbenchClient(a) => ibench_client(a),
        BenchCmd::DbbenchClient(a) => dbbench_client(a),
    }
}

#[derive(clap::Args, Clone, Debug)]
pub struct BenchArgs {
    /// Seconds per round of each contender.
    #[arg(long, default_value_t = 3.0)]
    pub secs: f64,
    /// Rounds (each runs the bare loop and the harness once, alternating who
    /// goes first); the verdict is the median of the rounds' ratios.
    #[arg(long, default_value_t = 7)]
    pub rounds: usize,
    /// Rows in the table.
    #[arg(long, default_value_t = 100_000)]
    pub table_size: u64,
    /// The CPU both contenders are pinned to, so that they share one core's
    /// caches and clock; default: the last CPU this process may run on.
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
    /// A control: the bare loop in both columns (two connections), so that
    /// the ratios show the method's own bias and spread on this machine
    /// (ideal: median 1.0).
    #[arg(long)]
    pub bare_vs_bare: bool,
}

/// The two columns of a round's line and the verdict: per wall second and
/// per CPU second of this process.
fn print_round(r: usize, bare: &Round, ours: &Round) {
    println!(
        "{:>5} {:>11.0} {:>11.0} {:>7.3}   {:>11.0} {:>11.0} {:>7.3}",
        r + 1,
        bare.per_wall(),
        ours.per_wall(),
        ours.per_wall() / bare.per_wall(),
        bare.per_cpu(),
        ours.per_cpu(),
        ours.per_cpu() / bare.per_cpu()
    )
}

/// The median (and IQR) of the rounds' ratios, per wall and per CPU second.
fn verdict(pairs: &[(Round, Round)]) -> Result<(Quartiles, Quartiles), BenchError> {
    let ratios = |f: fn(&Round) -> f64| -> Option<Quartiles> {
        Quartiles::of(&pairs.iter().map(|(b, o)| f(o) / f(b)).collect::<Vec<_>>())
    };
    match (ratios(Round::per_wall), ratios(Round::per_cpu)) {
        (Some(w), Some(c)) => Ok((w, c)),
        _ => Err(BenchError::NoResult(NoResult::NoRound)),
    }
}

fn show(q: Quartiles) -> String {
    format!("{:.3} (IQR {:.3}-{:.3})", q.median, q.q1, q.q3)
}

/// `rqps bench harness`: sysbench's point-query on embedded SQLite through
/// the harness (worker, driver interface, step runner with its clock reads,
/// counts, histogram and per-second series) against a bare loop of the same
/// prepared statement through rusqlite, on the same table in one process,
/// each on a connection of its own kept across rounds, both pinned to one
/// CPU, rounds alternating who goes first. The target: rqps reaches at
/// least 0.97 of the bare loop's queries per second (median of 7 rounds).
fn harness(a: &BenchArgs) -> Result<(), BenchError> {
    use crate::engine::Driver;
    use crate::engine::sqlite::SqliteDriver;
    use crate::suite::sysbench::params::rand_seed_from;
    use crate::suite::sysbench::rng::{SbDist, SbRandParams, SbRandType, SbRng};
    use bare_sqlite::BareQueries;
    use point_queries::PointQueries;
    use std::sync::Arc;

    if a.rounds == 0 || !a.secs.is_finite() || a.secs <= 0.0 || a.table_size == 0 {
        return Err(BenchError::Args(
            "--rounds, --secs and --table-size must be more than 0",
        ));
    }
    let (cpu, _pinned) = pin_to_cpu(a.cpu)?;
    let dir = tempfile::tempdir().map_err(BenchError::io("cannot create a temporary directory"))?;
    let path = dir.path().join("bench.db");
    let driver: Arc<dyn Driver> = Arc::new(SqliteDriver::new(&path, vec![]));
    // Both draw the same ids: the worker's generator (thread 0) and the bare
    // loop's start from the same seed.
    const SEED: u64 = 100;
    let mut ours = PointQueries::load(&driver, a.table_size, SEED)?;
    let sql = PointQueries::sql();
    let bare_conn = |seed: u64| -> Result<_, BenchError> {
        let q = BareQueries::open(&path, &sql).map_err(BenchError::engine("the bare loop"))?;
        let uniform = SbDist::new(SbRandType::Uniform, SbRandParams::default())
            .map_err(|_| BenchError::NoResult(NoResult::SysbenchDefaults))?;
        let rows = a.table_size.clamp(1, u32::MAX.into()) as u32;
        Ok((q, SbRng::for_thread(rand_seed_from(seed), 0, uniform), rows))
    };
    let mut bare = bare_conn(SEED)?;
    let mut control = if a.bare_vs_bare {
        Some(bare_conn(SEED)?)
    } else {
        None
    };
    // Each contender runs on a thread of its own, started for its round, as
    // the harness runs its events on a worker thread: the main thread's warm
    // caches are not the bare loop's alone.
    // The worker's draws per event: the table, the id, the histogram's slot.
    let run_bare = |b: &mut (BareQueries, SbRng, u32), secs: f64| {
        measure_round(|| {
            std::thread::scope(|s| {
                s.spawn(|| {
                    let (q, rng, rows) = b;
                    q.run(secs, || {
                        rng.uniform(1, 1);
                        let id = rng.default(1, *rows);
                        rng.skip_histogram_slot();
                        id.into()
                    })
                    .map_err(BenchError::engine("the bare loop"))
                })
                .join()
                .unwrap_or_else(|_| Err(BenchError::NoResult(NoResult::LoopPanicked)))
            })
        })
    };
    // One untimed pass of each to warm the page caches.
    let warm = (run_bare(&mut bare, 0.5)?.ops, ours.run(0.5)?.0);
    let warm = match control.as_mut() {
        Some(c) => (warm.0, run_bare(c, 0.5)?.ops),
        None => warm,
    };
    let load_before = load_average().unwrap_or_else(|| "unknown".into());
    println!(
        "{} on embedded SQLite {}, {} rows, 1 thread, {} rounds of {} s, pinned to CPU {cpu}",
        PointQueries::TEST,
        rusqlite::version(),
        a.table_size,
        a.rounds,
        a.secs
    );
    if a.bare_vs_bare {
        println!("control (--bare-vs-bare): the column 'rqps' runs the bare loop too");
    }
    println!("queries per wall second, and per CPU second of this process:");
    println!(
        "{:>5} {:>11} {:>11} {:>7}   {:>11} {:>11} {:>7}",
        "round", "bare q/s", "rqps q/s", "ratio", "bare q/cpu", "rqps q/cpu", "ratio"
    );
    let bare = std::cell::RefCell::new(bare);
    let pairs = alternate(
        a.rounds,
        |_| run_bare(&mut bare.borrow_mut(), a.secs),
        |_| match control.as_mut() {
            Some(c) => run_bare(c, a.secs),
            None => measure_round(|| ours.run(a.secs)),
        },
        print_round,
    )?;
    let (wall, cpu_q) = verdict(&pairs)?;
    println!(
        "median ratio rqps/bare: {} per wall second, {} per CPU second (target >= 0.97)",
        show(wall),
        show(cpu_q)
    );
    let (bare_q, rqps_q) = pairs
        .iter()
        .fold(warm, |(b, o), (x, y)| (b + x.ops, o + y.ops));
    // For a profile's per-query cost (callgrind: the inclusive cost of the
    // harness's `runner::work` and of `BareQueries::run`, over these).
    println!("queries in all rounds and the warm-up pass: bare {bare_q}, rqps {rqps_q}");
    println!(
        "load average (1, 5, 15 min): {load_before} before the rounds, {} after",
        load_average().unwrap_or_else(|| "unknown".into())
    );
    Ok(())
}

#[derive(clap::Args, Clone, Debug)]
pub struct DbClientArgs {
    /// The RocksDB release (installed into the engine cache first if missing);
    /// without it, the system's library (Debian's librocksdb).
    #[arg(long, value_name = "VERSION")]
    pub version: Option<String>,
    /// Keys loaded (20-byte keys, 400-byte values; all fit in the 1 GiB block cache).
    #[arg(long, default_value_t = 200_000)]
    pub keys: u64,
    /// Reader threads of each contender.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Seconds per round of each contender.
    #[arg(long, default_value_t = 0.5)]
    pub secs: f64,
    /// Rounds (each runs the bare loop and rqps once, alternating who goes first).
    #[arg(long, default_value_t = 40)]
    pub rounds: usize,
    /// The CPU both contenders (and RocksDB's own threads) are pinned to, so
    /// that they share one core's caches and clock; default: the last CPU
    /// this process may run on.
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
    /// A control: the bare loop in both columns, so that the ratios show the
    /// method's own bias and spread on this machine (ideal: median 1.0).
    #[arg(long)]
    pub bare_vs_bare: bool,
}

/// The cache that holds every block of the benchmark's data.
const CACHED: &str = "block_based_table_factory={block_cache=1073741824}";

/// `rqps bench dbbench-client`: readrandom on cached data through the
/// dbbench suite's workers and the harness against a bare loop calling the
/// same RocksDB library's C API directly, in one process on one database,
/// both pinned to one CPU, in many short alternating rounds. The target:
/// rqps reaches at least 0.95 of the bare loop's reads per second (median
/// of the rounds' ratios).
pub fn dbbench_client(a: &DbClientArgs) -> Result<(), BenchError> {
    use crate::engine::Driver as _;
    use crate::engine::install::{EngineSpec, basedir_for};
    use crate::engine::rocksdb::{KIND, RocksDriver};
    use bare_rocksdb::bare_readrandom;
    use dbbench_readers::{Readers, key20};

    if a.rounds == 0 || !a.secs.is_finite() || a.secs <= 0.0 || a.keys == 0 || a.threads == 0 {
        return Err(BenchError::Args(
            "--rounds, --secs, --keys and --threads must be more than 0",
        ));
    }
    let Some(library) = KIND.library else {
        return Err(NoResult::NotALibrary.into());
    };
    let lib = match &a.version {
        Some(v) => {
            let spec: EngineSpec = format!("{}@{v}", KIND.name).parse()?;
            let base =
                basedir_for(&spec, true, &mut |n| eprintln!("{n}"))?.ok_or(NoResult::NoRelease)?;
            (library.file_in)(&base)
        }
        None => (library.system)()?,
    };
    // Pinned before the database opens, so that RocksDB's background threads
    // share the CPU too, and every reader thread inherits it.
    let (cpu, _pinned) = pin_to_cpu(a.cpu)?;
    let dir = tempfile::tempdir().map_err(BenchError::io("cannot create a temporary directory"))?;
    let driver = RocksDriver::open(
        &lib,
        &dir.path().join("db"),
        a.version.as_deref(),
        Some(CACHED),
    )
    .map_err(BenchError::engine("opening the database"))?;
    let release = driver
        .version()
        .unwrap_or_else(|_| a.version.clone().unwrap_or_default());
    let mut readers = Readers::new(a.keys, a.threads, a.secs);
    readers.load_and_warm(&driver)?;
    let load_before = load_average().unwrap_or_else(|| "unknown".into());
    println!(
        "readrandom on RocksDB {release} (cached; {}), {} keys, {} thread(s), {} rounds of {} s, pinned to CPU {cpu}",
        lib.display(),
        a.keys,
        a.threads,
        a.rounds,
        a.secs
    );
    if a.bare_vs_bare {
        println!("control (--bare-vs-bare): the column 'rqps' runs the bare loop too");
    }
    println!(
        "{:>5} {:>11} {:>11} {:>7}   {:>11} {:>11} {:>7}",
        "round", "bare r/s", "rqps r/s", "ratio", "bare r/cpu", "rqps r/cpu", "ratio"
    );
    let pairs = alternate(
        a.rounds,
        |r| {
            measure_round(|| {
                bare_readrandom(&driver, a.threads, a.secs, a.keys, 100 + r as u64, key20)
                    .map_err(BenchError::engine("the bare loop"))
            })
        },
        |r| {
            if a.bare_vs_bare {
                return measure_round(|| {
                    bare_readrandom(&driver, a.threads, a.secs, a.keys, 100 + r as u64, key20)
                        .map_err(BenchError::engine("the bare loop"))
                });
            }
            measure_round(|| readers.run(&driver, 100 + r as u64))
        },
        print_round,
    )?;
    let (wall, cpu_q) = verdict(&pairs)?;
    println!(
        "rqps/bare, median of the rounds' ratios: {} per wall second, {} per CPU second; target >= 0.95",
        show(wall),
        show(cpu_q)
    );
    let (bare_reads, rqps_reads) = pairs
        .iter()
        .fold((0, 0), |(b, o), (x, y)| (b + x.ops, o + y.ops));
    // For a profile's per-read cost (callgrind: the inclusive cost of the
    // harness's worker threads and of the bare loop's threads, over these).
    println!("reads in all rounds: bare {bare_reads}, rqps {rqps_reads}");
    println!(
        "load average (1, 5, 15 min): {load_before} before the rounds, {} after",
        load_average().unwrap_or_else(|| "unknown".into())
    );
    Ok(())
}
