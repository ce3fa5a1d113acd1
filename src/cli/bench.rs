//! `rqps bench`: measures rqps itself. Each benchmark belongs to the suite
//! whose code it measures; this module names them for the command line, and
//! holds the one whose bare contender needs an engine's own library
//! (`dbbench-client`: a suite reaches RocksDB only through the key-value
//! face, so the raw C API loop is the engine's and the pairing is here).

use clap::Subcommand;

use crate::harness::bench::BenchError;
use crate::suite::ibench::bench::{IbClientArgs, ibench_client};
use crate::suite::sysbench::bench::{BenchArgs, VsArgs, run, vs_sysbench};

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
        BenchCmd::Harness(a) => run(a),
        BenchCmd::VsSysbench(a) => vs_sysbench(a),
        BenchCmd::IbenchClient(a) => ibench_client(a),
        BenchCmd::DbbenchClient(a) => dbbench_client(a),
    }
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
    use crate::harness::bench::{Quartiles, Round, alternate, load_average, measure_round};
    use crate::suite::dbbench::bench::{Readers, key20};

    if a.rounds == 0 || !a.secs.is_finite() || a.secs <= 0.0 || a.keys == 0 || a.threads == 0 {
        return Err(BenchError::Args(
            "--rounds, --secs, --keys and --threads must be more than 0",
        ));
    }
    let Some(library) = KIND.library else {
        return Err(BenchError::NoResult(
            "RocksDB is not loaded from a library".into(),
        ));
    };
    let lib = match &a.version {
        Some(v) => {
            let spec: EngineSpec = format!("{}@{v}", KIND.name).parse().map_err(
                |e: crate::engine::install::EngineSpecError| BenchError::NoResult(e.to_string()),
            )?;
            let base = basedir_for(&spec, true, &mut |n| eprintln!("{n}"))
                .map_err(|e| BenchError::NoResult(e.to_string()))?
                .ok_or_else(|| BenchError::NoResult("no release named".into()))?;
            (library.file_in)(&base)
        }
        None => (library.system)().map_err(BenchError::NoResult)?,
    };
    let allowed = crate::util::cpus::of_this_thread()
        .unwrap_or_else(crate::util::cpus::online)
        .cpus()
        .to_vec();
    let cpu = match a.cpu {
        Some(c) if !allowed.contains(&c) => {
            return Err(BenchError::NoResult(format!(
                "--cpu {c}: this process may run only on CPUs {allowed:?}"
            )));
        }
        Some(c) => c,
        None => *allowed.last().unwrap_or(&0),
    };
    // Pinned before the database opens, so that RocksDB's background threads
    // share the CPU too, and every reader thread inherits it.
    let pin = crate::util::cpus::CpuSet::parse_syntax(&cpu.to_string())
        .map_err(|e| BenchError::NoResult(e.to_string()))?;
    let _pinned = pin
        .pin_this_thread()
        .map_err(BenchError::io(format!("cannot pin to CPU {cpu}")))?;
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
                driver
                    .bare_readrandom(a.threads, a.secs, a.keys, 100 + r as u64, key20)
                    .map_err(BenchError::engine("the bare loop"))
            })
        },
        |r| {
            if a.bare_vs_bare {
                return measure_round(|| {
                    driver
                        .bare_readrandom(a.threads, a.secs, a.keys, 100 + r as u64, key20)
                        .map_err(BenchError::engine("the bare loop"))
                });
            }
            measure_round(|| readers.run(&driver, 100 + r as u64))
        },
        |r, bare: &Round, ours: &Round| {
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
        },
    )?;
    let ratios = |f: fn(&Round) -> f64| -> Option<Quartiles> {
        Quartiles::of(&pairs.iter().map(|(b, o)| f(o) / f(b)).collect::<Vec<_>>())
    };
    let (Some(wall), Some(cpu_q)) = (ratios(Round::per_wall), ratios(Round::per_cpu)) else {
        return Err(BenchError::NoResult("no round gave figures".into()));
    };
    let show = |q: Quartiles| format!("{:.3} (IQR {:.3}-{:.3})", q.median, q.q1, q.q3);
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
