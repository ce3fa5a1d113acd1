//! `rqps bench`: measures rqps itself. The harness's point-query rate on
//! embedded SQLite is compared with a bare prepared-statement loop over the
//! same table in the same process, alternating rounds so drift hits both.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;

use crate::driver::sqlite::SqliteDriver;
use crate::driver::{Driver, PsMode};
use crate::runner::{StepConfig, run_step};
use crate::workload::rand::{IdDist, RandType, Rng};
use crate::workload::sysbench::catalog::lookup;
use crate::workload::sysbench::event::{EventParams, SbWorker};
use crate::workload::sysbench::load::{LoadParams, load};

#[derive(Args, Clone, Debug)]
pub struct BenchArgs {
    /// Seconds per round of each contender.
    #[arg(long, default_value_t = 3.0)]
    pub secs: f64,
    /// Rounds (each runs the bare loop and the harness once, alternating who goes first).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Rows in the table.
    #[arg(long, default_value_t = 100_000)]
    pub table_size: u64,
}

/// CPU seconds (user + system) this process has used.
fn cpu_secs() -> f64 {
    // SAFETY: rusage is plain data, and getrusage fills the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Queries per wall second and per CPU second of one contender.
struct Rate {
    wall: f64,
    cpu: f64,
}

fn measure(f: impl FnOnce() -> Result<(u64, f64), String>) -> Result<Rate, String> {
    let c0 = cpu_secs();
    let (queries, wall_secs) = f()?;
    let cpu = (cpu_secs() - c0).max(1e-9);
    Ok(Rate {
        wall: queries as f64 / wall_secs,
        cpu: queries as f64 / cpu,
    })
}

/// Point queries of a bare loop: prepared statement, random id,
/// bind, step, read `c`, reset. Nothing else.
fn bare_loop(path: &std::path::Path, n: i64, secs: f64, seed: u64) -> Result<(u64, f64), String> {
    let conn = rusqlite::Connection::open(path).map_err(|e| e.to_string())?;
    let mut stmt = conn
        .prepare("SELECT c FROM sbtest1 WHERE id=?")
        .map_err(|e| e.to_string())?;
    let mut rng = Rng::seeded(seed);
    let ids = IdDist::new(RandType::Uniform, n);
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let start = Instant::now();
    let mut done = 0u64;
    let mut bytes = 0usize;
    loop {
        for _ in 0..64 {
            stmt.raw_bind_parameter(1, ids.draw(&mut rng))
                .map_err(|e| e.to_string())?;
            let mut rows = stmt.raw_query();
            while let Some(row) = rows.next().map_err(|e| e.to_string())? {
                bytes += row
                    .get_ref(0)
                    .map_err(|e| e.to_string())?
                    .as_str()
                    .map(|s| s.len())
                    .unwrap_or(0);
            }
            done += 1;
        }
        if Instant::now() >= deadline {
            break;
        }
    }
    std::hint::black_box(bytes);
    Ok((done, start.elapsed().as_secs_f64()))
}

fn harness(driver: &Arc<dyn Driver>, n: i64, secs: f64, seed: u64) -> Result<(u64, f64), String> {
    let test = lookup("point-query").ok_or("no point-query test")?;
    let p = EventParams {
        tables: 1,
        table_size: n,
        rand_type: RandType::Uniform,
        ps_mode: PsMode::Auto,
        seed,
    };
    let mut workers = vec![SbWorker::new(driver.clone(), &test, &p, 0).map_err(|e| e.to_string())?];
    let cfg = StepConfig {
        warmup: Duration::ZERO,
        duration: Duration::from_secs_f64(secs),
        reconnect_for: Duration::ZERO,
    };
    let r = run_step(&mut workers, &cfg, &mut |_| {});
    Ok((r.counts.queries(), r.secs))
}

pub fn run(a: &BenchArgs) -> Result<(), String> {
    if a.rounds == 0 || a.secs <= 0.0 || a.table_size == 0 {
        return Err("--rounds, --secs and --table-size must be more than 0".into());
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("bench.db");
    let driver: Arc<dyn Driver> = Arc::new(SqliteDriver::new(&path, vec![]));
    load(
        driver.as_ref(),
        &LoadParams {
            tables: 1,
            table_size: a.table_size,
            seed: 1,
        },
        &mut |_| {},
    )
    .map_err(|e| e.to_string())?;
    let n = a.table_size as i64;
    // One untimed pass of each to warm the page cache.
    bare_loop(&path, n, 0.5, 9)?;
    harness(&driver, n, 0.5, 9)?;
    println!(
        "point-query on embedded SQLite {}, {} rows, 1 thread, {} s per round",
        rusqlite::version(),
        a.table_size,
        a.secs
    );
    println!("queries per wall second, and per CPU second of this process (robust to other load):");
    println!(
        "{:>5} {:>11} {:>11} {:>7}   {:>11} {:>11} {:>7}",
        "round", "bare q/s", "rqps q/s", "ratio", "bare q/cpu", "rqps q/cpu", "ratio"
    );
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for r in 0..a.rounds {
        let seed = 100 + r as u64;
        let run_bare = || measure(|| bare_loop(&path, n, a.secs, seed));
        let run_ours = || measure(|| harness(&driver, n, a.secs, seed));
        let (bare, ours) = if r % 2 == 0 {
            let b = run_bare()?;
            (b, run_ours()?)
        } else {
            let h = run_ours()?;
            (run_bare()?, h)
        };
        wall.push(ours.wall / bare.wall);
        cpu.push(ours.cpu / bare.cpu);
        println!(
            "{:>5} {:>11.0} {:>11.0} {:>7.3}   {:>11.0} {:>11.0} {:>7.3}",
            r + 1,
            bare.wall,
            ours.wall,
            ours.wall / bare.wall,
            bare.cpu,
            ours.cpu,
            ours.cpu / bare.cpu
        );
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "median ratio rqps/bare: {:.3} per wall second, {:.3} per CPU second (target >= 0.97)",
        median(&mut wall),
        median(&mut cpu)
    );
    Ok(())
}
