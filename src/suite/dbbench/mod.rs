//! db_bench's standard sequence (the one `benchmark_compare.sh` runs) on a
//! key-value engine, with the LSM put in a known shape before the
//! read-while-writing steps.
//!
//! The steps, in order, from the database the run opens (empty for
//! `--server`; a kept directory that holds keys is refused before the run
//! starts, unless `--skip-load` runs the steps on its keys without fillseq):
//!
//! 1. `fillseq`: every key once, in key order, one thread, write-ahead log
//!    off (keys in order give trivial moves, so a known tree);
//! 2. `waitforcompaction`: let the load's compaction drain (not measured);
//! 3. `readrandom`, `fwdrange` (seek + N nexts), `revrange` (seek-for-prev +
//!    N prevs), `multireadrandom` (batched gets, one op per key);
//! 4. `overwritesome`: a tenth of the keys rewritten at random;
//! 5. `flush_mt_l0`: flush the memtable, wait, compact level 0 into the
//!    next level, wait: level 0 empty, nothing in memory (not measured);
//! 6. `readwhilewriting`, `fwdrangewhilewriting`, `revrangewhilewriting`:
//!    the readers measured while one writer puts random keys at
//!    `--writer-mb-s`;
//! 7. `overwriteandwait`: random overwrites, then the wait for compaction,
//!    so that its write amplification is complete.
//!
//! Every step stores, beside the generic figures, [`StepFigures`]: the LSM
//! shape before it, the engine's background work during it (write
//! amplification, compaction seconds, stalls), user and system CPU per op of
//! this process (the engine runs inside it), RSS and the database size. The
//! engine is asked through the key-value face only; this suite names none.

mod report;
mod steps;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::engine::kv::{Direction, KvAccess, KvConn, LsmCounters, LsmShape};
use crate::engine::{DbError, DbResult, Outcome};
use crate::error::usage;
use crate::harness::measure::Counts;
use crate::harness::runner::{Worker, stop_requested};
use crate::harness::{self, Harness, Per, RunEnd, TestFailure, Timing};
use crate::results::TestResult;
use crate::suite::api::{RunBasics, Workload, set};
use crate::suite::bounds::{Count, Rows, Secs, Threads};
use crate::suite::rand::Rng;
use steps::{Benchmark, KEY, SEQUENCE};
pub use steps::{Op, StepFigures, test_names};

/// The db_bench suite.
pub struct Dbbench;

/// Key or value sizes in bytes.
pub type Bytes = Count<1_048_576>;

/// A rate in MB/s (fractions allowed): the writer of the
/// `*whilewriting` steps.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct MbPerSec(f64);

/// A `--writer-mb-per-sec` (or matrix value) that is not a rate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a rate in MB/s from 0 (exclusive) to 10000, e.g. 2 or 0.5")]
pub struct BadRate(String);

impl std::str::FromStr for MbPerSec {
    type Err = BadRate;
    fn from_str(s: &str) -> Result<Self, BadRate> {
        match s.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 && v <= 10_000.0 => Ok(MbPerSec(v)),
            _ => Err(BadRate(s.to_string())),
        }
    }
}

impl<'de> Deserialize<'de> for MbPerSec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = toml::Value::deserialize(d)?;
        let text = match &v {
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl Serialize for MbPerSec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

/// What a user may set (`rqps run --suite dbbench --flag`, or the matrix key).
#[derive(clap::Args, Serialize, Deserialize, Default, Debug, Clone)]
#[serde(deny_unknown_fields)]
#[command(next_help_heading = "dbbench options (--suite dbbench)")]
pub struct Options {
    /// Keys loaded by fillseq (and drawn from by every later step).
    #[arg(long, value_name = "N")]
    pub keys: Option<Rows>,
    /// Key size in bytes (at least 8: the key number, then padding).
    #[arg(long, value_name = "BYTES")]
    pub key_size: Option<Bytes>,
    /// Value size in bytes (half compressible, as db_bench's).
    #[arg(long, value_name = "BYTES")]
    pub value_size: Option<Bytes>,
    /// Reader (and overwriting) threads of the measured steps.
    #[arg(long, value_name = "N")]
    pub threads: Option<Threads>,
    /// Seconds each timed step is measured.
    #[arg(long, value_name = "S")]
    pub secs: Option<Secs>,
    /// The writer's rate in MB/s during the *whilewriting steps.
    #[arg(long, value_name = "MB/S")]
    pub writer_mb_s: Option<MbPerSec>,
    /// Keys per multireadrandom batch.
    #[arg(long, value_name = "N")]
    pub batch: Option<Threads>,
    /// Entries each fwdrange/revrange visits after its seek.
    #[arg(long, value_name = "N")]
    pub scan_len: Option<Threads>,
    /// Run the steps on the keys the database holds instead of loading it
    /// with fillseq (without it, a database that holds keys is refused).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub skip_load: Option<bool>,
}

/// Checked parameters, stored with every result.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Params {
    pub profile: String,
    pub seed: u64,
    pub keys: u64,
    pub key_size: usize,
    pub value_size: usize,
    pub threads: usize,
    pub secs: f64,
    pub writer_mb_s: f64,
    pub batch: usize,
    pub scan_len: usize,
    /// How long a wait for compaction may last before the step fails.
    pub wait_limit_secs: f64,
    /// fillseq skipped: the steps run on the keys already there.
    #[serde(default)]
    pub skip_load: bool,
}

impl Workload for Dbbench {
    const NAME: &'static str = "dbbench";
    const ABOUT: &'static str = "db_bench's standard sequence on a key-value engine (RocksDB), with the LSM put in a known shape before the read-while-writing steps";
    const PROFILES: &'static [&'static str] = &["quick", "ci", "server"];
    const FACE: crate::engine::Face = crate::engine::Face::Kv;
    type Options = Options;
    const ROLES: &'static [(crate::suite::api::Role, &'static str)] = {
        use crate::suite::api::Role;
        &[(Role::Clients, "threads"), (Role::MeasuredSecs, "secs")]
    };
    type Params = Params;
    const UNITS: crate::harness::Units = crate::harness::Units {
        event: "operation",
        per_op: "operation",
    };
    const WORKLOAD: &'static [&'static str] = &[
        "keys",
        "key_size",
        "value_size",
        "secs",
        "writer_mb_s",
        "batch",
        "scan_len",
    ];

    fn params(common: &RunBasics, o: Options) -> Result<Params, crate::error::Error> {
        let mut p = match common.profile.as_str() {
            "ci" => Params {
                profile: "ci".into(),
                seed: common.seed,
                keys: 20_000,
                key_size: 20,
                value_size: 400,
                threads: 2,
                secs: 0.5,
                writer_mb_s: 1.0,
                batch: 10,
                scan_len: 10,
                wait_limit_secs: 60.0,
                skip_load: false,
            },
            "server" => Params {
                profile: "server".into(),
                seed: common.seed,
                keys: 40_000_000,
                key_size: 20,
                value_size: 400,
                threads: 16,
                secs: 65.0,
                writer_mb_s: 2.0,
                batch: 10,
                scan_len: 10,
                wait_limit_secs: 3_600.0,
                skip_load: false,
            },
            _ => Params {
                profile: common.profile.clone(),
                seed: common.seed,
                keys: 1_000_000,
                key_size: 20,
                value_size: 400,
                threads: 4,
                secs: 10.0,
                writer_mb_s: 2.0,
                batch: 10,
                scan_len: 10,
                wait_limit_secs: 600.0,
                skip_load: false,
            },
        };
        set(&mut p.keys, o.keys.map(Count::get));
        set(&mut p.key_size, o.key_size.map(|b| b.get() as usize));
        set(&mut p.value_size, o.value_size.map(|b| b.get() as usize));
        set(&mut p.threads, o.threads.map(|t| t.get() as usize));
        set(&mut p.secs, o.secs);
        set(&mut p.writer_mb_s, o.writer_mb_s.map(|r| r.0));
        set(&mut p.batch, o.batch.map(|t| t.get() as usize));
        set(&mut p.scan_len, o.scan_len.map(|t| t.get() as usize));
        set(&mut p.skip_load, o.skip_load);
        if p.keys == 0 {
            return Err(usage("--keys must be at least 1, e.g. --keys 1000000"));
        }
        if p.key_size < 8 {
            return Err(usage(format!(
                "--key-size must be at least 8 bytes (the key number), got {}",
                p.key_size
            )));
        }
        if p.value_size == 0 {
            return Err(usage("--value-size must be at least 1 byte, e.g. 400"));
        }
        if p.threads == 0 {
            return Err(usage("--threads must be at least 1, e.g. --threads 4"));
        }
        if !(p.secs.is_finite() && p.secs > 0.0) {
            return Err(usage(format!(
                "--secs must be a number of seconds above 0, got {}",
                p.secs
            )));
        }
        if p.batch == 0 || p.batch > MAX_BATCH || p.scan_len == 0 {
            return Err(usage(format!(
                "--batch must be from 1 to {MAX_BATCH} and --scan-len at least 1, e.g. --batch 10"
            )));
        }
        Ok(p)
    }

    fn step_count(_p: &Params) -> usize {
        SEQUENCE.len()
    }

    fn estimate_secs(p: &Params) -> f64 {
        let timed = SEQUENCE
            .iter()
            .filter(|s| matches!(s, Benchmark::Measured { budget: None, .. }))
            .count();
        timed as f64 * p.secs
    }

    /// fillseq's keys and values, uncompressed.
    fn load_bytes(p: &Params) -> u64 {
        if p.skip_load {
            return 0;
        }
        p.keys.saturating_mul((p.key_size + p.value_size) as u64)
    }

    fn describe(p: &Params) -> String {
        let entry = p.key_size + p.value_size;
        SEQUENCE
            .iter()
            .map(|s| match s {
                Benchmark::Measured {
                    name,
                    op,
                    budget,
                    writer,
                    wait_after,
                } => {
                    let threads = if *op == Op::FillSeq { 1 } else { p.threads };
                    let length = match budget {
                        Some(f) => format!("{} keys", ((p.keys as f64) * f).round() as u64),
                        None => format!("{:.1} s", p.secs),
                    };
                    let mut line = format!("{name} t{threads}: {length}");
                    if *writer {
                        line.push_str(&format!(", a writer at {} MB/s", p.writer_mb_s));
                    }
                    if *wait_after {
                        line.push_str(", then waits for compaction");
                    }
                    if *op == Op::FillSeq {
                        line.push_str(&format!(
                            " of {entry} bytes in key order, write-ahead log off"
                        ));
                    }
                    line + "\n"
                }
                Benchmark::Drain => {
                    "waitforcompaction: until no flush or compaction is pending\n".into()
                }
                Benchmark::Shape => {
                    "flush_mt_l0: flush, wait, compact level 0 into the next level, wait\n".into()
                }
            })
            .collect()
    }

    fn need(p: &Params) -> crate::suite::api::Need {
        // Readers and the writer of the mixed tests.
        crate::suite::api::Need {
            connections: p.threads + 1,
            prepared: 0,
            who: format!("{} db_bench threads", p.threads),
            fewer: "run fewer threads".into(),
        }
    }

    fn run(p: &Params, h: &mut Harness<'_>) -> Result<RunEnd, crate::error::Error> {
        let values = Arc::new(value_source(p.seed, p.value_size));
        let mut end = RunEnd::Ok;
        for step in SEQUENCE {
            if stop_requested() {
                return Ok(RunEnd::Interrupted);
            }
            if p.skip_load
                && matches!(
                    step,
                    Benchmark::Measured {
                        op: Op::FillSeq,
                        ..
                    }
                )
            {
                continue;
            }
            let r = run_one(p, h, *step, &values)?;
            if !end.after(&r) {
                break;
            }
        }
        Ok(end)
    }

    /// fillseq over a kept database writes on top of its keys: the figures
    /// would be of neither an empty nor a known database.
    fn check_target(
        p: &Params,
        driver: &dyn crate::engine::Driver,
    ) -> Result<(), crate::error::Error> {
        if !p.skip_load && holds_keys(driver)? {
            return Err(usage(
                "the target database already holds keys (an earlier run's?): dbbench loads an empty one; \
                 name a new or empty directory, or add --skip-load to run the steps on the keys it holds",
            ));
        }
        Ok(())
    }

    fn line(label: &str, r: &TestResult) -> String {
        if let (false, "ok", Some(f)) = (
            r.reported,
            r.status.to_string().as_str(),
            r.detail::<StepFigures>(KEY),
        ) {
            let shape = |s: &Option<LsmShape>| s.as_ref().map(LsmShape::brief).unwrap_or_default();
            return format!(
                "{label:>28}  done in {:.1} s  LSM before: {}  after: {}",
                r.secs,
                shape(&f.lsm_before),
                shape(&f.lsm_after)
            );
        }
        let base = crate::harness::result_line(label, r);
        match r.detail::<StepFigures>(KEY) {
            Some(f) if r.status == crate::results::Status::Ok => {
                let mut line = base;
                if let Some(w) = f.w_amp {
                    line.push_str(&format!("  w-amp {w:.2}"));
                }
                if let Some(s) = &f.lsm_after {
                    line.push_str(&format!("  LSM after: {}", s.brief()));
                }
                line
            }
            _ => base,
        }
    }

    fn report() -> Option<&'static dyn crate::report::section::Section> {
        Some(&report::SECTION)
    }
}

impl Dbbench {
    /// The parameters `rqps bench dbbench-client` runs readrandom with.
    pub fn params_for_bench(keys: u64, threads: usize, secs: f64) -> Params {
        Params {
            profile: "bench".into(),
            seed: 1,
            keys,
            key_size: 20,
            value_size: 400,
            threads,
            secs,
            writer_mb_s: 1.0,
            batch: 10,
            scan_len: 10,
            wait_limit_secs: 600.0,
            skip_load: false,
        }
    }
}

/// Most keys in one multireadrandom batch.
const MAX_BATCH: usize = 64;

/// Half-compressible bytes to take values from (db_bench's
/// compression ratio 0.5): each 100-byte piece is 50 random letters
/// written twice.
pub fn value_source(seed: u64, value_size: usize) -> Vec<u8> {
    let mut rng = Rng::seeded(seed ^ 0x5eed_da7a);
    let len = (1 << 20) + value_size;
    let mut v = Vec::with_capacity(len + 100);
    while v.len() < len {
        let half: Vec<u8> = (0..50).map(|_| b'a' + rng.below(26) as u8).collect();
        v.extend_from_slice(&half);
        v.extend_from_slice(&half);
    }
    v
}

/// Key `i`: its number big-endian (so byte order is number order), padded
/// to `size`.
#[inline]
pub fn key_of(i: u64, size: usize, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&i.to_be_bytes());
    out.resize(size, b'0');
}

/// User and system CPU seconds of this process so far.
fn cpu_secs() -> (f64, f64) {
    // SAFETY: getrusage fills the struct we pass.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return (0.0, 0.0);
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(u.ru_utime), s(u.ru_stime))
}

/// This process's resident memory now.
fn rss_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = text
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse::<u64>()
        .ok()?;
    Some(kb * 1024)
}

/// What is read before a step, to subtract after it.
struct Before {
    at: Instant,
    cpu: (f64, f64),
    shape: Option<LsmShape>,
    work: Option<LsmCounters>,
}

impl Before {
    fn take(kv: &dyn KvAccess) -> DbResult<Before> {
        Ok(Before {
            shape: kv.lsm_shape()?,
            work: kv.lsm_counters()?,
            cpu: cpu_secs(),
            at: Instant::now(),
        })
    }

    /// The figures of a step that did `ops` operations measured over
    /// `measured_secs`.
    fn finish(
        self,
        kv: &dyn KvAccess,
        driver: &dyn crate::engine::Driver,
        ops: u64,
        measured_secs: f64,
        bytes_per_op: usize,
    ) -> DbResult<StepFigures> {
        let uptime = self.at.elapsed().as_secs_f64();
        let (u1, s1) = cpu_secs();
        let (user, sys) = (u1 - self.cpu.0, s1 - self.cpu.1);
        let work = match (kv.lsm_counters()?, self.work) {
            (Some(after), Some(before)) => Some(after.since(&before)),
            _ => None,
        };
        let per_op = |v: f64| (ops > 0).then(|| v * 1e6 / ops as f64);
        let secs = measured_secs.max(1e-9);
        Ok(StepFigures {
            lsm_before: self.shape,
            lsm_after: kv.lsm_shape()?,
            w_amp: work.and_then(|w| w.write_amp()),
            stall_pct: work.map(|w| w.stall_micros as f64 / (uptime.max(1e-9) * 1e6) * 100.0),
            work,
            uptime_secs: uptime,
            ops,
            ops_per_sec: ops as f64 / secs,
            mb_per_sec: ops as f64 * bytes_per_op as f64 / secs / 1_048_576.0,
            micros_per_op: if ops > 0 {
                secs * 1e6 / ops as f64
            } else {
                0.0
            },
            p99_9_us: 0.0,
            p99_99_us: 0.0,
            user_cpu_secs: user,
            sys_cpu_secs: sys,
            user_cpu_us_per_op: per_op(user),
            sys_cpu_us_per_op: per_op(sys),
            rss_bytes: rss_bytes(),
            db_bytes: driver.db_size().ok().flatten(),
            writer_ops_per_sec: None,
            step_options: None,
        })
    }
}

/// Whether the database holds at least one key.
fn holds_keys(driver: &dyn crate::engine::Driver) -> Result<bool, crate::error::Error> {
    let engine = |source| crate::error::Error::Engine {
        context: "looking for keys in the target database".into(),
        source,
    };
    let kv = driver.require_kv().map_err(engine)?;
    let mut c = kv.connect().map_err(engine)?;
    let n = c
        .scan(&[], Direction::Forward, 1, &mut |_, _| {})
        .map_err(engine)?;
    Ok(n > 0)
}

/// A step that measures the engine's own background work, not a worker's
/// (`drain`: wait for compactions; `shape`: empty level 0), up to `limit`.
fn run_background(
    h: &mut Harness<'_>,
    step: Benchmark,
    limit: Duration,
) -> Result<TestResult, crate::error::Error> {
    let name = step.name();
    h.test(
        name.to_string(),
        TestResult::running(Dbbench::NAME, name.into(), "dbbench", 1, false, "ops/s"),
        |run| {
            let driver = run.driver.clone();
            let kv = driver.require_kv()?;
            let before = Before::take(kv)?;
            // The engine's own work: no operation of a worker's to divide by.
            let per = run.per_op;
            run.measured(per, |run| {
                match step {
                    Benchmark::Shape => kv.empty_level0(limit)?,
                    _ => {
                        if !kv.wait_for_background(limit)? {
                            return Err(TestFailure::new(DbError::fatal(format!(
                                "compaction still running after {:.0} s",
                                limit.as_secs_f64()
                            ))));
                        }
                    }
                }
                let f = before.finish(kv, driver.as_ref(), 0, 0.0, 0)?;
                run.result.secs = f.uptime_secs;
                run.result.status = crate::results::Status::Ok;
                run.result.set_detail(KEY, &f);
                Ok(((), 0.0))
            })
        },
    )
}

fn run_one(
    p: &Params,
    h: &mut Harness<'_>,
    step: Benchmark,
    values: &Arc<Vec<u8>>,
) -> Result<TestResult, crate::error::Error> {
    let limit = Duration::from_secs_f64(p.wait_limit_secs);
    match step {
        Benchmark::Drain | Benchmark::Shape => run_background(h, step, limit),
        Benchmark::Measured {
            name,
            op,
            budget,
            writer,
            wait_after,
        } => {
            let threads = if op == Op::FillSeq { 1 } else { p.threads };
            let engine = |context: &str| {
                let context = context.to_string();
                move |source| crate::error::Error::Engine { context, source }
            };
            // fillseq loads with the memtable db_bench's benchmark.sh gives
            // it; the steps after it run with the default one.
            let step_options = if op == Op::FillSeq {
                h.driver
                    .require_kv()
                    .and_then(|kv| kv.ordered_load(true))
                    .map_err(engine("switching to the ordered load's memtable"))?
            } else {
                None
            };
            let result = h.test(
                format!("{name} t{threads}"),
                TestResult::running(
                    Dbbench::NAME,
                    name.into(),
                    "dbbench",
                    threads,
                    true,
                    "ops/s",
                ),
                |run| {
                    let driver = run.driver.clone();
                    let kv = driver.require_kv()?;
                    let before = Before::take(kv)?;
                    let total = budget.map(|f| ((p.keys as f64 * f).round() as u64).max(1));
                    let mut workers = (0..threads)
                        .map(|i| {
                            let share = total.map(|t| {
                                t / threads as u64 + u64::from((i as u64) < t % threads as u64)
                            });
                            KvWorker::new(kv, p, op, i, share, values.clone())
                        })
                        .collect::<DbResult<Vec<_>>>()
                        .map_err(TestFailure::when("could not start the test"))?;
                    let timing = match total {
                        Some(_) => Timing::measured(0.0, crate::suite::bounds::MAX_SECS).budgeted(),
                        None => Timing::measured(0.0, p.secs),
                    };
                    let stop = AtomicBool::new(false);
                    let written = AtomicU64::new(0);
                    std::thread::scope(|s| {
                        let w = writer.then(|| {
                            let conn = kv.connect();
                            let (stop, written) = (&stop, &written);
                            let values = values.clone();
                            s.spawn(move || write_at_rate(conn?, p, &values, stop, written))
                        });
                        let timed = harness::TimedStep {
                            rate: "operations",
                            ..harness::TimedStep::new(timing, Per::Statement)
                        };
                        // The writer's end and the compaction after the
                        // step count in the step's hardware cost.
                        run.timed_then(&mut workers, timed, |run, _, step| {
                            stop.store(true, Ordering::Relaxed);
                            if let Some(h) = w {
                                h.join()
                                    .unwrap_or_else(|_| Err(DbError::fatal("the writer panicked")))
                                    .map_err(TestFailure::when("the rate-limited writer failed"))?;
                            }
                            if wait_after && !kv.wait_for_background(limit)? {
                                run.warn(format!(
                                    "compaction still running {:.0} s after the step: w-amp is incomplete",
                                    limit.as_secs_f64()
                                ));
                            }
                            let ops = step.counts.queries();
                            let bytes = match op {
                                Op::FwdRange | Op::RevRange => {
                                    (p.key_size + p.value_size) * p.scan_len
                                }
                                _ => p.key_size + p.value_size,
                            };
                            let mut f = before.finish(kv, driver.as_ref(), ops, step.secs, bytes)?;
                            let q = |v: f64| step.hist.value_at_quantile(v) as f64 / 1000.0;
                            if !step.hist.is_empty() {
                                f.p99_9_us = q(0.999);
                                f.p99_99_us = q(0.9999);
                            }
                            if writer {
                                f.writer_ops_per_sec = Some(
                                    written.load(Ordering::Relaxed) as f64 / step.secs.max(1e-9),
                                );
                            }
                            f.step_options = step_options.clone();
                            run.result.set_detail(KEY, &f);
                            Ok(ops as f64)
                        })
                    })?;
                    Ok(())
                },
            );
            if step_options.is_some() {
                // The step's workers are gone: the database can reopen.
                h.driver
                    .require_kv()
                    .and_then(|kv| kv.ordered_load(false))
                    .map_err(engine("restoring the default memtable"))?;
            }
            result
        }
    }
}

/// The writer of the `*whilewriting` steps: random puts at `writer_mb_s`
/// until `stop`.
fn write_at_rate(
    mut conn: Box<dyn KvConn>,
    p: &Params,
    values: &[u8],
    stop: &AtomicBool,
    written: &AtomicU64,
) -> DbResult<()> {
    let entry = (p.key_size + p.value_size) as f64;
    let per_sec = (p.writer_mb_s * 1_048_576.0 / entry).max(1.0);
    let mut rng = Rng::seeded(p.seed ^ 0x00ff_1234);
    let mut key = Vec::with_capacity(p.key_size);
    let start = Instant::now();
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) && !stop_requested() {
        let due = start + Duration::from_secs_f64(n as f64 / per_sec);
        let now = Instant::now();
        if due > now {
            std::thread::sleep((due - now).min(Duration::from_millis(20)));
            continue;
        }
        key_of(rng.next_u64() % p.keys, p.key_size, &mut key);
        let at = rng.below(values.len() - p.value_size);
        conn.put(&key, &values[at..at + p.value_size])?;
        n += 1;
        written.store(n, Ordering::Relaxed);
    }
    Ok(())
}

/// One thread of a measured step (public for `rqps bench dbbench-client`,
/// which runs readrandom through it).
pub struct KvWorker {
    conn: Box<dyn KvConn>,
    op: Op,
    rng: Rng,
    keys: u64,
    key_size: usize,
    value_size: usize,
    scan_len: usize,
    batch: usize,
    /// fillseq: the next key; others: unused.
    next: u64,
    /// Operations left when the step runs for a key budget.
    left: Option<u64>,
    key: Vec<u8>,
    batch_keys: Vec<Vec<u8>>,
    out: Vec<u8>,
    values: Arc<Vec<u8>>,
}

impl KvWorker {
    pub fn new(
        kv: &dyn KvAccess,
        p: &Params,
        op: Op,
        idx: usize,
        budget: Option<u64>,
        values: Arc<Vec<u8>>,
    ) -> DbResult<Self> {
        let mut conn = kv.connect()?;
        // fillseq is a load that can be redone: db_bench runs it without the log.
        conn.set_write_ahead_log(op != Op::FillSeq);
        Ok(KvWorker {
            conn,
            op,
            rng: Rng::seeded(p.seed.wrapping_add(idx as u64 * 0x9e37_79b9)),
            keys: p.keys,
            key_size: p.key_size,
            value_size: p.value_size,
            scan_len: p.scan_len,
            batch: p.batch,
            next: 0,
            left: budget,
            key: Vec::with_capacity(p.key_size),
            batch_keys: (0..p.batch)
                .map(|_| Vec::with_capacity(p.key_size))
                .collect(),
            out: Vec::with_capacity(p.value_size),
            values,
        })
    }
}

impl Worker for KvWorker {
    #[inline]
    fn event(&mut self, c: &mut Counts) -> DbResult<()> {
        match self.op {
            Op::FillSeq => {
                key_of(self.next, self.key_size, &mut self.key);
                let at = self.rng.below(self.values.len() - self.value_size);
                self.conn
                    .put(&self.key, &self.values[at..at + self.value_size])?;
                self.next += 1;
                c.record(Outcome::Affected(1));
            }
            Op::Overwrite => {
                key_of(
                    self.rng.next_u64() % self.keys,
                    self.key_size,
                    &mut self.key,
                );
                let at = self.rng.below(self.values.len() - self.value_size);
                self.conn
                    .put(&self.key, &self.values[at..at + self.value_size])?;
                c.record(Outcome::Affected(1));
            }
            Op::ReadRandom => {
                key_of(
                    self.rng.next_u64() % self.keys,
                    self.key_size,
                    &mut self.key,
                );
                let found = self.conn.get(&self.key, &mut self.out)?;
                c.record(Outcome::Rows(u64::from(found)));
            }
            Op::FwdRange | Op::RevRange => {
                key_of(
                    self.rng.next_u64() % self.keys,
                    self.key_size,
                    &mut self.key,
                );
                let dir = if self.op == Op::FwdRange {
                    Direction::Forward
                } else {
                    Direction::Reverse
                };
                let n = self
                    .conn
                    .scan(&self.key, dir, self.scan_len, &mut |_, _| {})?;
                c.record(Outcome::Rows(n as u64));
            }
            Op::MultiRead => {
                for k in &mut self.batch_keys {
                    key_of(self.rng.next_u64() % self.keys, self.key_size, k);
                }
                let mut refs: [&[u8]; MAX_BATCH] = [&[]; MAX_BATCH];
                for (slot, k) in refs.iter_mut().zip(&self.batch_keys) {
                    *slot = k;
                }
                let mut found = 0u64;
                self.conn.multi_get(&refs[..self.batch], &mut |_, v| {
                    found += u64::from(v.is_some())
                })?;
                // One operation per key, as db_bench counts them.
                c.reads += self.batch as u64;
                c.rows += found;
            }
        }
        if let Some(l) = &mut self.left {
            *l = l.saturating_sub(1);
        }
        Ok(())
    }

    fn recover(&mut self, err: &DbError) -> DbResult<()> {
        match err.class {
            crate::engine::ErrorClass::Fatal => Err(err.clone()),
            _ => Ok(()),
        }
    }

    #[inline]
    fn finished(&self) -> bool {
        self.left == Some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(profile: &str, o: Options) -> Result<Params, crate::error::Error> {
        Dbbench::params(
            &RunBasics {
                profile: profile.into(),
                seed: 1,
                part: None,
            },
            o,
        )
    }

    #[test]
    fn the_sequence_is_db_bench_standard_order() {
        assert_eq!(
            test_names(),
            [
                "fillseq",
                "waitforcompaction",
                "readrandom",
                "fwdrange",
                "revrange",
                "multireadrandom",
                "overwritesome",
                "flush_mt_l0",
                "readwhilewriting",
                "fwdrangewhilewriting",
                "revrangewhilewriting",
                "overwriteandwait"
            ]
        );
        let p = params("ci", Options::default()).unwrap();
        let d = Dbbench::describe(&p);
        assert!(d.starts_with("fillseq t1: 20000 keys"), "{d}");
        assert!(d.contains("overwritesome t2: 2000 keys"), "{d}");
        assert!(
            d.contains("readwhilewriting t2: 0.5 s, a writer at 1 MB/s"),
            "{d}"
        );
        assert_eq!(Dbbench::estimate_secs(&p), 8.0 * 0.5);
    }

    #[test]
    fn options_override_the_profile_and_bad_ones_are_refused() {
        let o = Options {
            keys: Some("500".parse().unwrap()),
            writer_mb_s: Some("0.5".parse().unwrap()),
            ..Default::default()
        };
        let p = params("quick", o).unwrap();
        assert_eq!((p.keys, p.writer_mb_s, p.threads), (500, 0.5, 4));
        let short = Options {
            key_size: Some("4".parse().unwrap()),
            ..Default::default()
        };
        let e = params("ci", short).unwrap_err().to_string();
        assert!(e.contains("--key-size must be at least 8"), "{e}");
        assert!("0".parse::<MbPerSec>().is_err());
        assert!("fast".parse::<MbPerSec>().is_err());
        let t: toml::Table = toml::from_str("writer_mb_s = 3\nkeys = 10").unwrap();
        let o = Options::deserialize(t).unwrap();
        assert_eq!(o.writer_mb_s, Some(MbPerSec(3.0)));
        let t: toml::Table = toml::from_str("writer_mb_s = -1").unwrap();
        assert!(Options::deserialize(t).is_err());
    }

    #[test]
    fn keys_sort_in_number_order_and_values_are_half_compressible() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        key_of(255, 20, &mut a);
        key_of(256, 20, &mut b);
        assert_eq!(a.len(), 20);
        assert!(a < b);
        let v = value_source(7, 400);
        assert!(v.len() > (1 << 20) + 400);
        assert_eq!(v[..50], v[50..100]);
        assert_ne!(v[..50], v[100..150]);
    }
}
