//! pgbench's transaction log (`--log`): the files, names and line formats
//! pgbench 15 writes, so that the scripts people plot pgbench logs with
//! read rqps's unchanged. Checked against pgbench 15.18's own files.
//!
//! - One file per client thread (pgbench's one per `--jobs` thread): the
//!   first `PREFIX.PID`, the others `PREFIX.PID.T` (T from 1), in the
//!   working directory unless the prefix names another. Worker `i` runs on
//!   client thread `i % threads` (the harness's `Placement::threads_for`), and its lines go
//!   to that thread's file. Files are created private to their owner
//!   ([`crate::util::OUTPUT_MODE`]); an existing file is overwritten, as
//!   pgbench's. A second test in one process (a list of `--clients`, a
//!   matrix) would reuse the names: its prefix gets `_2`, `_3`, ...
//! - Per transaction: `client_id transaction_no time script_no time_epoch
//!   time_us [schedule_lag] [retries]`, the time in microseconds from the
//!   (scheduled) start to the end, or `skipped`, `failed` (with
//!   `--failures-detailed`: `serialization`, `deadlock`); the lag with
//!   `--rate`, the retries when `--max-tries` is not 1.
//! - Aggregated (`--aggregate-interval S`): per interval of S seconds from
//!   the measured start rounded down to a whole second, `interval_start
//!   num_transactions sum_latency sum_latency_2 min_latency max_latency
//!   sum_lag sum_lag_2 min_lag max_lag skipped retried retries
//!   serialization_failures deadlock_failures` (all fifteen always, zero
//!   where the option that fills them is not given, as pgbench 15.18); an
//!   interval is written when a transaction ends after it, so the interval
//!   the test ends in is not written, as pgbench's.
//!
//! Cost to the client: a line is formatted into its thread's buffer when
//! the transaction ends (about 100 ns), and the buffer goes to the file in
//! [`ClientLog::flush`], which the client calls before its next transaction
//! outside its timing (in 64 KiB writes; an aggregated line at once).

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::{Arc, Mutex};

use crate::harness::measure::event_clock;

use super::expr::{PgPrng, unit_draw};
use super::params::{LogSpec, Params};

/// What a per-transaction buffer holds before it is written.
const FLUSH_BYTES: usize = 64 << 10;

/// How a transaction ended, for its line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    /// Completed: microseconds from its (scheduled) start to its end, and
    /// from its scheduled start to its start (0 without `--rate`).
    Done { latency_us: u64, lag_us: u64 },
    /// Skipped under `--rate` and `--latency-limit`.
    Skipped,
    /// Failed after its last try.
    Failed(Failure),
}

/// The class of a failed transaction's last error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Failure {
    Serialization,
    Deadlock,
    /// Another error of the engine's retry class: pgbench 15 has no column
    /// for it (written `failed`, counted in no aggregated column).
    Other,
}

/// Which optional fields the lines carry.
#[derive(Clone, Copy, Debug)]
struct Format {
    rate: bool,
    latency_limit: bool,
    tries: bool,
    detailed: bool,
}

/// pgbench's `SimpleStats`: doubles, as pgbench sums them.
#[derive(Clone, Copy, Debug, Default)]
struct Simple {
    count: u64,
    sum: f64,
    sum2: f64,
    min: f64,
    max: f64,
}

impl Simple {
    fn add(&mut self, v: f64) {
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        if self.count == 0 || v > self.max {
            self.max = v;
        }
        self.count += 1;
        self.sum += v;
        self.sum2 += v * v;
    }
}

/// One interval's figures.
#[derive(Clone, Copy, Debug, Default)]
struct Agg {
    /// Microseconds since the Unix epoch; 0 until the measured start.
    start_us: u64,
    cnt: u64,
    latency: Simple,
    lag: Simple,
    skipped: u64,
    retried: u64,
    retries: u64,
    serialization: u64,
    deadlock: u64,
}

/// One client thread's file.
pub struct Sink {
    file: std::fs::File,
    path: String,
    buf: Vec<u8>,
    /// Seconds per interval and the current interval, when aggregating.
    agg: Option<(u64, Agg)>,
    format: Format,
    error: Option<std::io::Error>,
}

impl Sink {
    /// Writes the buffer to the file; a write error is kept for the end of
    /// the test and nothing more is written.
    fn write_out(&mut self) {
        if self.error.is_none()
            && let Err(e) = self.file.write_all(&self.buf)
        {
            self.error = Some(e);
        }
        self.buf.clear();
    }

    /// Accounts a transaction that ended at `now_us` (epoch) to its
    /// interval, writing the intervals that ended before it.
    fn aggregate(&mut self, now_us: u64, tries: u32, outcome: Outcome) {
        let f = self.format;
        let Some((secs, a)) = self.agg.as_mut() else {
            return;
        };
        let step = *secs * 1_000_000;
        if a.start_us == 0 {
            a.start_us = now_us / 1_000_000 * 1_000_000;
        }
        while a.start_us + step <= now_us {
            agg_line(&mut self.buf, a, f);
            *a = Agg {
                start_us: a.start_us + step,
                ..Agg::default()
            };
        }
        if outcome == Outcome::Skipped {
            a.skipped += 1;
            return;
        }
        if tries > 1 {
            a.retried += 1;
            a.retries += u64::from(tries - 1);
        }
        match outcome {
            Outcome::Done { latency_us, lag_us } => {
                a.cnt += 1;
                a.latency.add(latency_us as f64);
                if f.rate {
                    a.lag.add(lag_us as f64);
                }
            }
            Outcome::Failed(Failure::Serialization) => a.serialization += 1,
            Outcome::Failed(Failure::Deadlock) => a.deadlock += 1,
            Outcome::Failed(Failure::Other) | Outcome::Skipped => {}
        }
    }
}

/// An aggregated line, as pgbench 15.18 writes it: all fifteen fields.
fn agg_line(buf: &mut Vec<u8>, a: &Agg, f: Format) {
    let lag = if f.rate { a.lag } else { Simple::default() };
    let (retried, retries) = if f.tries {
        (a.retried, a.retries)
    } else {
        (0, 0)
    };
    let (ser, dead) = if f.detailed {
        (a.serialization, a.deadlock)
    } else {
        (0, 0)
    };
    let _ = writeln!(
        buf,
        "{} {} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {} {} {} {} {}",
        a.start_us / 1_000_000,
        a.cnt,
        a.latency.sum,
        a.latency.sum2,
        a.latency.min,
        a.latency.max,
        lag.sum,
        lag.sum2,
        lag.min,
        lag.max,
        if f.latency_limit { a.skipped } else { 0 },
        retried,
        retries,
        ser,
        dead
    );
}

/// Why a transaction log could not be written.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error(
        "cannot create the transaction log {path} ({source}): give --log-prefix a writable directory, e.g. --log-prefix /tmp/pgbench_log"
    )]
    Create {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("could not write the transaction log {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// The prefixes this process has written logs under.
static USED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The prefix of a test's files: `prefix` the first time, then `prefix_2`...
fn test_prefix(prefix: &str) -> String {
    let mut used = USED.lock().unwrap_or_else(|e| e.into_inner());
    let name = (1..)
        .map(|k| match k {
            1 => prefix.to_string(),
            _ => format!("{prefix}_{k}"),
        })
        .find(|n| !used.contains(n))
        .unwrap_or_else(|| prefix.to_string());
    used.push(name.clone());
    name
}

/// The log files of one test, one per client thread.
pub struct TestLog {
    sinks: Vec<Arc<Mutex<Sink>>>,
    format: Format,
    spec: LogSpec,
    /// A clock reading and the Unix time in microseconds at that moment.
    base: (u64, u64),
}

/// Opens (creates or empties) the log file `path`: never through a
/// symbolic link, and without blocking, so that a FIFO (whose open waits
/// for a reader) or a device is refused at once instead of holding rqps in
/// `open()` where no stop reaches it.
fn open_file(path: &str) -> std::io::Result<std::fs::File> {
    use std::os::fd::AsRawFd as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .mode(crate::util::OUTPUT_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            // A FIFO with no reader.
            Some(libc::ENXIO) => not_a_file(),
            _ => e,
        })?;
    if !file.metadata()?.is_file() {
        return Err(not_a_file());
    }
    file.set_len(0)?;
    // SAFETY: fcntl on a descriptor `file` owns; F_SETFL takes an int.
    unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETFL, 0) };
    Ok(file)
}

fn not_a_file() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        "not a regular file (a FIFO, a device or a socket)",
    )
}

/// The first of the log files a run of process `pid` with at most
/// `threads` client threads would write under `prefix` that exists and is
/// not a regular file (a FIFO, a device): its path. Checked before a run
/// starts, so that it is refused at once.
pub fn not_a_file_among(prefix: &str, pid: u32, threads: usize) -> Option<String> {
    (0..threads.max(1))
        .map(|t| match t {
            0 => format!("{prefix}.{pid}"),
            _ => format!("{prefix}.{pid}.{t}"),
        })
        .find(|p| std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_file() && !m.is_symlink()))
}

/// Opens the files of a test of `clients` clients on `threads` client
/// threads (as the harness's `Placement::threads_for` counts them).
pub fn open(spec: &LogSpec, p: &Params, threads: usize) -> Result<TestLog, LogError> {
    let prefix = test_prefix(&spec.prefix);
    let pid = std::process::id();
    let format = Format {
        rate: p.rate.is_some(),
        latency_limit: p.latency_limit_ms.is_some() && p.rate.is_some(),
        tries: p.max_tries != 1,
        detailed: spec.failures_detailed,
    };
    let mut sinks = Vec::new();
    for t in 0..threads.max(1) {
        let path = match t {
            0 => format!("{prefix}.{pid}"),
            _ => format!("{prefix}.{pid}.{t}"),
        };
        let file = open_file(&path).map_err(|source| LogError::Create {
            path: path.clone(),
            source,
        })?;
        sinks.push(Arc::new(Mutex::new(Sink {
            file,
            path,
            buf: Vec::with_capacity(FLUSH_BYTES + 256),
            agg: spec.aggregate_secs.map(|s| (u64::from(s), Agg::default())),
            format,
            error: None,
        })));
    }
    let clock = event_clock();
    let mono = clock.now_ns();
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64);
    Ok(TestLog {
        sinks,
        format,
        spec: spec.clone(),
        base: (mono, wall),
    })
}

impl TestLog {
    /// The log of client `id`, whose lines go to thread `id % threads`'s
    /// file; `sample` is its `--sampling-rate` stream.
    pub fn client(&self, id: usize, sample: PgPrng) -> ClientLog {
        ClientLog {
            sink: self.sinks[id % self.sinks.len()].clone(),
            id,
            no: 0,
            sample: self.spec.sampling_rate.map(|r| (r, sample)),
            format: self.format,
            aggregated: self.spec.aggregate_secs.is_some(),
            base: self.base,
            on: false,
        }
    }

    /// Writes what is left (not the interval the test ended in, as
    /// pgbench) and closes the files: their paths, or the first write error.
    pub fn finish(self) -> Result<Vec<String>, LogError> {
        let mut paths = Vec::new();
        for s in self.sinks {
            let mut s = s.lock().unwrap_or_else(|e| e.into_inner());
            s.write_out();
            if s.error.is_none()
                && let Err(e) = s.file.flush()
            {
                s.error = Some(e);
            }
            if let Some(source) = s.error.take() {
                return Err(LogError::Write {
                    path: s.path.clone(),
                    source,
                });
            }
            paths.push(s.path.clone());
        }
        Ok(paths)
    }
}

/// One client's side of the log.
pub struct ClientLog {
    sink: Arc<Mutex<Sink>>,
    id: usize,
    /// Transactions ended since the measured start (pgbench's `cnt`).
    no: u64,
    sample: Option<(f64, PgPrng)>,
    format: Format,
    aggregated: bool,
    base: (u64, u64),
    /// Measuring: nothing is logged during a warm-up.
    on: bool,
}

impl ClientLog {
    /// The measured interval starts: logging begins, and the first
    /// interval of an aggregated log starts at this second.
    pub fn start(&mut self) {
        self.on = true;
        self.no = 0;
        let now = self.epoch_us(event_clock().now_ns());
        let mut s = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, a)) = s.agg.as_mut()
            && a.start_us == 0
        {
            a.start_us = now / 1_000_000 * 1_000_000;
        }
    }

    /// Unix time in microseconds of clock reading `t_ns`.
    fn epoch_us(&self, t_ns: u64) -> u64 {
        let (mono, wall) = self.base;
        if t_ns >= mono {
            wall + (t_ns - mono) / 1000
        } else {
            wall.saturating_sub((mono - t_ns) / 1000)
        }
    }

    /// Logs a transaction of script `script` that ended at clock reading
    /// `end_ns` after `tries` tries.
    pub fn record(&mut self, end_ns: u64, script: usize, tries: u32, outcome: Outcome) {
        if !self.on {
            return;
        }
        self.no += 1;
        if let Some((rate, rng)) = self.sample.as_mut()
            && unit_draw(rng) > *rate
        {
            return;
        }
        let now = self.epoch_us(end_ns);
        let f = self.format;
        let mut s = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        if self.aggregated {
            s.aggregate(now, tries, outcome);
            return;
        }
        let mut line = LineBuf(&mut s.buf);
        let _ = write!(line, "{} {} ", self.id, self.no);
        let lag = match outcome {
            Outcome::Done { latency_us, lag_us } => {
                let _ = write!(line, "{latency_us}");
                lag_us
            }
            Outcome::Skipped => {
                line.0.extend_from_slice(b"skipped");
                0
            }
            Outcome::Failed(class) => {
                line.0.extend_from_slice(match (f.detailed, class) {
                    (true, Failure::Serialization) => b"serialization".as_slice(),
                    (true, Failure::Deadlock) => b"deadlock",
                    _ => b"failed",
                });
                0
            }
        };
        let _ = write!(line, " {script} {} {}", now / 1_000_000, now % 1_000_000);
        if f.rate {
            let _ = write!(line, " {lag}");
        }
        if f.tries {
            let tries = if outcome == Outcome::Skipped {
                1
            } else {
                tries
            };
            let _ = write!(line, " {}", tries.saturating_sub(1));
        }
        line.0.push(b'\n');
    }

    /// Writes the thread's buffer to its file when it is full (an
    /// aggregated log: when it holds a line); called outside the timing of
    /// transactions. Whether it wrote.
    pub fn flush(&mut self) -> bool {
        let mut s = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        let due = if self.aggregated {
            !s.buf.is_empty()
        } else {
            s.buf.len() >= FLUSH_BYTES
        };
        if due {
            s.write_out();
        }
        due
    }
}

/// `fmt::Write` into a byte buffer (the lines are ASCII).
struct LineBuf<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for LineBuf<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink(agg: Option<u64>, format: Format) -> Sink {
        let d = tempfile::tempfile().unwrap();
        Sink {
            file: d,
            path: "x".into(),
            buf: Vec::new(),
            agg: agg.map(|s| (s, Agg::default())),
            format,
            error: None,
        }
    }

    #[test]
    fn a_prefix_in_a_directory_gone_since_the_run_was_planned_fails_with_its_path() {
        use crate::suite::api::{RunBasics, Workload};
        let d = tempfile::tempdir().unwrap();
        let o = super::super::Options {
            log: Some(true),
            log_prefix: Some(d.path().join("x").display().to_string()),
            ..Default::default()
        };
        let common = RunBasics {
            profile: "ci".into(),
            seed: 1,
            part: None,
        };
        let p = super::super::Pgbench::params(&common, o).unwrap();
        let spec = p.log.clone().unwrap();
        drop(d);
        let e = open(&spec, &p, 2).err().unwrap();
        assert!(
            matches!(e, LogError::Create { .. }) && e.to_string().contains(&spec.prefix),
            "{e}"
        );
    }

    /// pgbench 15.18's sample for `-S -c 2 -j 2 -t 20 --random-seed 5
    /// --sampling-rate 0.5 -l`: the transaction numbers each client's
    /// lines carry.
    #[test]
    fn sampling_keeps_the_transactions_pgbench_keeps_for_the_seed() {
        use crate::suite::api::{RunBasics, Workload};
        let d = tempfile::tempdir().unwrap();
        let o = super::super::Options {
            log: Some(true),
            log_prefix: Some(d.path().join("s").display().to_string()),
            sampling_rate: Some(0.5),
            transactions: Some(crate::suite::bounds::Rows::new(20).unwrap()),
            clients: Some(vec![crate::suite::bounds::Threads::new(2).unwrap()]),
            ..Default::default()
        };
        let common = RunBasics {
            profile: "ci".into(),
            seed: 5,
            part: None,
        };
        let p = super::super::Pgbench::params(&common, o).unwrap();
        let log = open(p.log.as_ref().unwrap(), &p, 2).unwrap();
        for id in 0..2 {
            let sample = super::super::expr::ClientStreams::of(5, 2, id).sample;
            let mut c = log.client(id, sample);
            c.start();
            for _ in 0..20 {
                let t = event_clock().now_ns();
                c.record(
                    t,
                    0,
                    1,
                    Outcome::Done {
                        latency_us: 1,
                        lag_us: 0,
                    },
                );
            }
        }
        let files = log.finish().unwrap();
        let kept: Vec<Vec<u64>> = files
            .iter()
            .map(|f| {
                std::fs::read_to_string(f)
                    .unwrap()
                    .lines()
                    .map(|l| l.split(' ').nth(1).unwrap().parse().unwrap())
                    .collect()
            })
            .collect();
        assert_eq!(
            kept,
            [
                vec![3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 15, 16, 18, 19, 20],
                vec![3, 4, 6, 8, 11, 12, 13, 14, 15, 16, 17, 20]
            ]
        );
    }

    const ALL: Format = Format {
        rate: true,
        latency_limit: true,
        tries: true,
        detailed: true,
    };

    #[test]
    fn intervals_are_written_when_a_later_transaction_ends_with_empty_ones_between() {
        let mut s = sink(Some(1), ALL);
        let t0 = 1_700_000_000_000_000u64;
        s.aggregate(
            t0 + 100,
            1,
            Outcome::Done {
                latency_us: 10,
                lag_us: 2,
            },
        );
        s.aggregate(
            t0 + 200,
            3,
            Outcome::Done {
                latency_us: 30,
                lag_us: 4,
            },
        );
        s.aggregate(t0 + 300, 2, Outcome::Failed(Failure::Serialization));
        s.aggregate(t0 + 400, 1, Outcome::Skipped);
        s.aggregate(t0 + 500, 1, Outcome::Failed(Failure::Deadlock));
        assert!(s.buf.is_empty(), "the interval has not ended");
        s.aggregate(
            t0 + 2_000_001,
            1,
            Outcome::Done {
                latency_us: 5,
                lag_us: 0,
            },
        );
        let text = String::from_utf8(s.buf.clone()).unwrap();
        assert_eq!(
            text,
            "1700000000 2 40 1000 10 30 6 20 2 4 1 2 3 1 1\n1700000001 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
        );
    }

    #[test]
    fn options_not_given_leave_their_aggregated_fields_zero() {
        let none = Format {
            rate: false,
            latency_limit: false,
            tries: false,
            detailed: false,
        };
        let mut s = sink(Some(2), none);
        s.aggregate(
            5_000_000,
            2,
            Outcome::Done {
                latency_us: 7,
                lag_us: 3,
            },
        );
        s.aggregate(5_100_000, 1, Outcome::Failed(Failure::Serialization));
        s.aggregate(
            7_000_000,
            1,
            Outcome::Done {
                latency_us: 7,
                lag_us: 3,
            },
        );
        assert_eq!(
            String::from_utf8(s.buf.clone()).unwrap(),
            "5 1 7 49 7 7 0 0 0 0 0 0 0 0 0\n"
        );
    }
}
