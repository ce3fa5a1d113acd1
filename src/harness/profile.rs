//! CPU profiles of a test's measured interval (`--cpu-profile`).
//!
//! Contract: while a test's `/proc` sampler runs (from the end of the warm-up
//! to the end of the measured run), one `perf record -a -e cpu-clock -g`
//! samples every CPU; when it ends, its samples are split by process into
//! - the engine: the server's process tree (its processes at the start and
//!   at the end of the interval), or, for an engine inside rqps (SQLite,
//!   RocksDB), the whole rqps process: its workers and the engine's own
//!   background threads, which is exactly what `client cpu/o` measures there;
//! - the client: the rqps process, as a second profile (servers only).
//!
//! Why system-wide: per-process events (`perf record -p`) are switched in
//! and out at every context switch of the profiled tasks, and on this 2-CPU
//! VM that halved the QPS of point-query on PostgreSQL (0.48 to 0.52 of the
//! unprofiled QPS over 3 alternating rounds, bench/cpu-profile.sh); per-CPU
//! events cost a timer interrupt per sample only.
//!
//! The sample period is fixed ([`PERIOD_NS`] of CPU time), not a frequency,
//! so `samples × period / ops` is CPU time per operation and its sampling
//! error is `√samples × period / ops`. perf is started with its events
//! disabled and enabled through its control FIFO only once every event is
//! open, so its start-up cost is outside the interval, and disabled before it
//! stops, likewise. The stacks are folded in-process (inferno) and stored with
//! the result, deflated and base64-encoded ([`crate::results::CpuProfile`]).
//!
//! The numbers ([`costs`]): a function's CPU per operation is `samples ×
//! period / ops`; *self* counts the samples whose leaf frame is the
//! function, *inclusive* those whose stack holds it anywhere (once per
//! stack). With frame-pointer call graphs (`-g`), code built without frame
//! pointers has short stacks: self figures stay right, its callers'
//! inclusive ones are too low. [`check_total`] compares a profile's total
//! with the measured CPU per operation.
//!
//! Limits are said once per run ([`check`]): perf missing, not permitted
//! (`kernel.perf_event_paranoid`), or profiles without symbols; the benchmark
//! runs on without profiles.

use std::collections::{BTreeMap, HashSet};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::results::{CpuProfile, Folded, ProfileSide, parse_folded};

/// CPU time between two samples: 1 ms of cpu-clock, about 1 kHz per busy CPU.
pub const PERIOD_NS: u64 = 1_000_000;

/// How long perf may take to open its events or to answer a control command.
const CONTROL_WAIT: Duration = Duration::from_secs(10);

/// Why perf cannot profile, or a recording failed. Each says what to do
/// where there is something to do.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// perf is missing here.
    #[error(
        "perf is not installed (or not on PATH): install it (Debian: `apt install linux-perf`)"
    )]
    NotInstalled,
    /// perf may not profile other processes (`paranoid`: the kernel's
    /// `perf_event_paranoid`, `?` when unreadable).
    #[error(
        "perf is not permitted to profile other processes (kernel.perf_event_paranoid = {paranoid}): run `sysctl kernel.perf_event_paranoid=1`, or run rqps as root"
    )]
    NotPermitted { paranoid: String },
    /// `perf record` fails here for another reason (`said`: its first line).
    #[error("perf record fails here ({said}): check that `perf record -e cpu-clock -- true` works")]
    RecordFails { said: String },
    /// A file, FIFO or child process perf needs.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// perf failed or ended while rqps drove it (`said`: perf's own first
    /// line of errors, if it said one).
    #[error("{why}{}", said.as_deref().map(|s| format!(": {s}")).unwrap_or_default())]
    Stopped { why: Stalled, said: Option<String> },
    /// perf ended without writing its data file (`said`: its first line).
    #[error("perf wrote no profile ({status}): {said}")]
    NoProfile {
        status: std::process::ExitStatus,
        said: String,
    },
    #[error("perf script failed ({status})")]
    ScriptFailed { status: std::process::ExitStatus },
}

/// What perf did not do while rqps drove it through its control FIFO.
#[derive(Debug, thiserror::Error)]
pub enum Stalled {
    #[error("cannot open perf's FIFO: {0}")]
    Fifo(#[source] std::io::Error),
    #[error("perf ended before profiling")]
    EndedBeforeStart,
    #[error("perf did not start within 10 s")]
    NoStart,
    /// A control command (`enable`, `disable`) could not be sent.
    #[error("cannot {command} perf: {source}")]
    Send {
        command: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("perf ended before it could {0}")]
    EndedBefore(&'static str),
    #[error("perf did not {0} within 10 s")]
    NoAnswer(&'static str),
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> ProfileError {
    let context = context.into();
    move |source| ProfileError::Io { context, source }
}

/// The perf binary: `RQPS_PERF` when set (tests), else `perf` from PATH.
fn perf_bin() -> PathBuf {
    std::env::var_os("RQPS_PERF")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("perf"))
}

/// Whether perf can profile here: `Err` says why not and what to do.
pub fn check() -> Result<(), ProfileError> {
    let dir = tempfile::tempdir().map_err(io("cannot make a temporary directory"))?;
    let out = Command::new(perf_bin())
        .args(["record", "-q", "-a", "-e", "cpu-clock", "-c"])
        .arg(PERIOD_NS.to_string())
        .arg("-o")
        .arg(dir.path().join("check.data"))
        .args(["--", "true"])
        .stdin(Stdio::null())
        .output();
    match out {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ProfileError::NotInstalled),
        Err(e) => Err(io("cannot run perf")(e)),
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
                .ok()
                .map(|s| s.trim().to_string());
            if err.contains("paranoid") || err.contains("ermission") || err.contains("EACCES") {
                Err(ProfileError::NotPermitted {
                    paranoid: paranoid.unwrap_or_else(|| "?".to_string()),
                })
            } else {
                let first = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                Err(ProfileError::RecordFails {
                    said: first.trim().to_string(),
                })
            }
        }
    }
}

/// A FIFO in `dir`.
fn mkfifo(path: &Path) -> std::io::Result<()> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("a NUL in a temporary path"))?;
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn open_nonblock(path: &Path, write: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    if write {
        o.write(true);
    } else {
        o.read(true);
    }
    o.custom_flags(libc::O_NONBLOCK).open(path)
}

/// One `perf record` on a set of pids, events disabled until [`Recording::enable`].
pub struct Recording {
    child: Child,
    dir: tempfile::TempDir,
    ctl: Option<std::fs::File>,
    ack: Option<std::fs::File>,
}

impl Recording {
    /// Starts perf on every CPU and returns once its events are open, still
    /// disabled (perf's start takes about 270 ms on a 2-CPU VM).
    pub fn start() -> Result<Recording, ProfileError> {
        let dir = tempfile::tempdir().map_err(io("cannot make a temporary directory"))?;
        let (ctl, ack) = (dir.path().join("ctl"), dir.path().join("ack"));
        mkfifo(&ctl)
            .and_then(|_| mkfifo(&ack))
            .map_err(io("cannot make perf's control FIFOs"))?;
        let mut cmd = Command::new(perf_bin());
        // A system-wide recording must not outlive rqps (kill -9, a second
        // Ctrl-C): perf also ends when its control FIFO closes
        // (tests/signals.rs), and this does not rely on that.
        crate::engine::server::dies_with_rqps(&mut cmd);
        let child = cmd
            .args(["record", "-q", "-a", "-e", "cpu-clock", "-g", "-c"])
            .arg(PERIOD_NS.to_string())
            .args(["-D", "-1"])
            .arg(format!(
                "--control=fifo:{},{}",
                ctl.display(),
                ack.display()
            ))
            .arg("-o")
            .arg(dir.path().join("perf.data"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(io("cannot start perf"))?;
        let mut r = Recording {
            child,
            dir,
            ctl: None,
            ack: None,
        };
        // perf opens the control FIFO once its events are set up.
        let deadline = Instant::now() + CONTROL_WAIT;
        let ack_file = open_nonblock(&ack, false).map_err(io("cannot open perf's FIFO"))?;
        r.ack = Some(ack_file);
        loop {
            match open_nonblock(&ctl, true) {
                Ok(f) => {
                    r.ctl = Some(f);
                    break;
                }
                Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {}
                Err(e) => return Err(r.failed(Stalled::Fifo(e))),
            }
            if let Ok(Some(_)) = r.child.try_wait() {
                return Err(r.failed(Stalled::EndedBeforeStart));
            }
            if Instant::now() > deadline {
                return Err(r.failed(Stalled::NoStart));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(r)
    }

    /// Enables the events: sampling starts when this returns.
    pub fn enable(&mut self) -> Result<(), ProfileError> {
        self.command("enable")
    }

    /// Sends a control command and waits for perf's acknowledgement.
    fn command(&mut self, what: &'static str) -> Result<(), ProfileError> {
        let sent = self
            .ctl
            .as_mut()
            .map(|c| c.write_all(format!("{what}\n").as_bytes()))
            .unwrap_or(Ok(()));
        if let Err(e) = sent {
            return Err(self.failed(Stalled::Send {
                command: what,
                source: e,
            }));
        }
        let deadline = Instant::now() + CONTROL_WAIT;
        let mut got = Vec::new();
        loop {
            let mut buf = [0u8; 16];
            match self.ack.as_mut().map(|a| a.read(&mut buf)) {
                Some(Ok(n)) if n > 0 => {
                    got.extend_from_slice(&buf[..n]);
                    if got.contains(&b'\n') {
                        return Ok(());
                    }
                }
                Some(Ok(_)) | Some(Err(_)) | None => {}
            }
            if let Ok(Some(_)) = self.child.try_wait() {
                return Err(self.failed(Stalled::EndedBefore(what)));
            }
            if Instant::now() > deadline {
                return Err(self.failed(Stalled::NoAnswer(what)));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Ends perf after a failure: the error, with perf's own first line.
    fn failed(&mut self, why: Stalled) -> ProfileError {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let deadline = Instant::now() + CONTROL_WAIT;
        while !matches!(self.child.try_wait(), Ok(Some(_))) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        ProfileError::Stopped {
            why,
            said: err
                .lines()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.trim().to_string()),
        }
    }

    /// Disables the events: nothing is sampled after this returns.
    pub fn disable(&mut self) -> Result<(), ProfileError> {
        self.command("disable")
    }

    /// Ends perf (SIGINT): what it recorded, to fold per process.
    pub fn stop(mut self) -> Result<Recorded, ProfileError> {
        drop(self.ctl.take());
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let status = self.child.wait().map_err(io("perf"))?;
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        let data = self.dir.path().join("perf.data");
        if !data.exists() {
            return Err(ProfileError::NoProfile {
                status,
                said: err.lines().next().unwrap_or("").trim().to_string(),
            });
        }
        let dir = tempfile::tempdir().map_err(io("cannot make a temporary directory"))?;
        let kept = dir.path().join("perf.data");
        std::fs::rename(&data, &kept)
            .or_else(|_| std::fs::copy(&data, &kept).map(drop))
            .map_err(io("cannot keep perf's data"))?;
        Ok(Recorded {
            _dir: dir,
            data: kept,
        })
    }
}

/// A finished system-wide recording.
pub struct Recorded {
    /// Holds `data` until this is dropped.
    _dir: tempfile::TempDir,
    data: PathBuf,
}

impl Recorded {
    /// The folded stacks of the processes `pids` (each process's threads).
    pub fn fold_pids(&self, pids: &[u32]) -> Result<Folded, ProfileError> {
        let list = pids
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let script = Command::new(perf_bin())
            .arg("script")
            .arg("-i")
            .arg(&self.data)
            .arg(format!("--pid={list}"))
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map_err(io("cannot run perf script"))?;
        if !script.status.success() {
            return Err(ProfileError::ScriptFailed {
                status: script.status,
            });
        }
        fold(&script.stdout, PERIOD_NS)
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Folds `perf script` output of samples `period` apart into counts of samples
/// (inferno counts each sample as its period, in nanoseconds of cpu-clock).
pub fn fold(script: &[u8], period: u64) -> Result<Folded, ProfileError> {
    use inferno::collapse::Collapse as _;
    let mut opts = inferno::collapse::perf::Options::default();
    opts.nthreads = 1;
    let mut out = Vec::new();
    inferno::collapse::perf::Folder::from(opts)
        .collapse(script, &mut out)
        .map_err(io("cannot fold perf's stacks"))?;
    let folded = String::from_utf8_lossy(&out);
    let mut text = String::new();
    let mut samples = 0;
    for (stack, n) in parse_folded(&folded) {
        let n = (n + period / 2) / period.max(1);
        if n > 0 {
            samples += n;
            text.push_str(&format!("{stack} {n}\n"));
        }
    }
    Ok(Folded { text, samples })
}

/// Whether the "no symbols" notice was given in this process.
static NO_SYMBOLS_SAID: AtomicBool = AtomicBool::new(false);

/// A profile whose samples mostly end in unnamed frames, said once per process.
pub fn symbols_notice(f: &Folded, who: &str) -> Option<String> {
    let unknown: u64 = parse_folded(&f.text)
        .iter()
        .filter(|(stack, _)| {
            // inferno names an unresolved frame by its module, `[postgres]`.
            let leaf = stack.rsplit(';').next().unwrap_or("");
            (leaf.starts_with('[') && leaf.ends_with(']')) || leaf.starts_with("0x")
        })
        .map(|(_, n)| n)
        .sum();
    if f.samples == 0 || unknown * 2 < f.samples {
        return None;
    }
    if NO_SYMBOLS_SAID.swap(true, Ordering::Relaxed) {
        return None;
    }
    Some(format!(
        "cpu profile: {:.0}% of the {who}'s samples have no function name: install its debug symbols (Debian: the -dbgsym package, or debuginfod)",
        unknown as f64 * 100.0 / f.samples as f64
    ))
}

/// The recording of one test: every CPU, split by process when it ends.
pub struct TestProfile {
    recording: Option<Recording>,
    /// The server's processes when the interval began ([`TestProfile::enable`]).
    server: Vec<u32>,
    enabled: bool,
    /// The engine runs inside rqps.
    embedded: bool,
    failures: Vec<String>,
}

impl TestProfile {
    /// Starts perf, disabled, before the test's warm-up: its start-up would
    /// otherwise come out of the measured interval, which begins at a fixed
    /// time (the hardware figures would lose up to 270 ms of CPU while the
    /// operations still count).
    pub fn prepare(embedded: bool) -> TestProfile {
        let mut failures = Vec::new();
        let recording = match Recording::start() {
            Ok(r) => Some(r),
            Err(e) => {
                failures.push(format!("cpu profile: {e}"));
                None
            }
        };
        TestProfile {
            recording,
            server: Vec::new(),
            enabled: false,
            embedded,
            failures,
        }
    }

    /// Starts sampling, as the measured interval begins: `server` is the
    /// server's process tree now (empty for an engine inside rqps, or a
    /// server on another host).
    pub fn enable(&mut self, server: &[u32]) {
        if self.enabled {
            return;
        }
        self.server = server.to_vec();
        if let Some(r) = self.recording.as_mut() {
            match r.enable() {
                Ok(()) => self.enabled = true,
                Err(e) => {
                    self.failures.push(format!("cpu profile: {e}"));
                    self.recording = None;
                }
            }
        }
    }

    /// Stops recording; the profile over `ops` operations, and what failed.
    /// `server_now` is the server's process tree at the end: with the tree
    /// at the start, every server process that ran in the interval and did
    /// not also end in it.
    pub fn finish(self, ops: f64, server_now: &[u32]) -> (Option<CpuProfile>, Vec<String>) {
        let TestProfile {
            recording,
            server,
            enabled,
            embedded,
            mut failures,
        } = self;
        // Never enabled: the test ended before its measured part.
        let Some(mut recording) = recording.filter(|_| enabled) else {
            return (None, failures);
        };
        let recorded = recording.disable().and_then(|_| recording.stop());
        let recorded = match recorded {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("cpu profile: {e}"));
                return (None, failures);
            }
        };
        let me = std::process::id();
        let no_server = !embedded && server.is_empty() && server_now.is_empty();
        if no_server {
            failures.push(
                "cpu profile of the server: its processes are not on this host (pass --server-pid); only the client is profiled".into(),
            );
        }
        let mut side = |pids: &[u32], who: &str| -> Option<ProfileSide> {
            match recorded.fold_pids(pids) {
                Ok(f) => {
                    if let Some(n) = symbols_notice(&f, who) {
                        failures.push(n);
                    }
                    Some(ProfileSide::new(&f))
                }
                Err(e) => {
                    failures.push(format!("cpu profile of the {who}: {e}"));
                    None
                }
            }
        };
        let (engine_is, engine, client) = if embedded {
            ("rqps process", side(&[me], "rqps process"), None)
        } else if no_server {
            ("server", None, side(&[me], "client"))
        } else {
            let mut tree: Vec<u32> = server.iter().chain(server_now).copied().collect();
            tree.sort_unstable();
            tree.dedup();
            ("server", side(&tree, "server"), side(&[me], "client"))
        };
        if engine.is_none() && client.is_none() {
            return (None, failures);
        }
        (
            Some(CpuProfile {
                period_ns: PERIOD_NS,
                ops,
                engine_is: engine_is.to_string(),
                engine,
                client,
            }),
            failures,
        )
    }
}

/// One function's CPU per operation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FnCost {
    pub name: String,
    pub self_samples: u64,
    pub incl_samples: u64,
    pub self_us: f64,
    pub incl_us: f64,
}

/// A profile's figures per operation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Costs {
    pub samples: u64,
    /// All samples, µs per operation, and its sampling error.
    pub total_us: f64,
    pub error_us: f64,
    /// Every function, by self cost, largest first.
    pub functions: Vec<FnCost>,
    /// µs per operation of one sample.
    pub us_per_sample: f64,
}

impl Costs {
    pub fn get(&self, name: &str) -> Option<&FnCost> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// The sampling error of a figure made of `samples` samples.
    pub fn error_of(&self, samples: u64) -> f64 {
        (samples as f64).sqrt() * self.us_per_sample
    }
}

/// The figures of folded stacks sampled every `period_ns` over `ops` operations.
pub fn costs(folded: &str, period_ns: u64, ops: f64) -> Costs {
    let us_per_sample = if ops > 0.0 {
        period_ns as f64 / 1000.0 / ops
    } else {
        0.0
    };
    let mut by: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut samples = 0;
    for (stack, n) in parse_folded(folded) {
        samples += n;
        let mut seen = HashSet::new();
        let frames: Vec<&str> = stack.split(';').collect();
        for f in &frames {
            if seen.insert(*f) {
                by.entry(f).or_default().1 += n;
            }
        }
        if let Some(leaf) = frames.last() {
            by.entry(leaf).or_default().0 += n;
        }
    }
    let mut functions: Vec<FnCost> = by
        .into_iter()
        .map(|(name, (s, i))| FnCost {
            name: name.to_string(),
            self_samples: s,
            incl_samples: i,
            self_us: s as f64 * us_per_sample,
            incl_us: i as f64 * us_per_sample,
        })
        .collect();
    functions.sort_by(|a, b| {
        b.self_samples
            .cmp(&a.self_samples)
            .then(b.incl_samples.cmp(&a.incl_samples))
            .then(a.name.cmp(&b.name))
    });
    Costs {
        samples,
        total_us: samples as f64 * us_per_sample,
        error_us: (samples as f64).sqrt() * us_per_sample,
        functions,
        us_per_sample,
    }
}

/// The figures of one side of a stored profile.
pub fn side_costs(p: &CpuProfile, side: &ProfileSide) -> Option<Costs> {
    Some(costs(&side.stacks()?, p.period_ns, p.ops))
}

/// Relative tolerance beyond the sampling error when a profile's total is
/// checked against the measured CPU per operation: perf and the `/proc`
/// sampler start and stop a few milliseconds apart, and processes that end
/// within the interval leave the `/proc` total.
pub const CHECK_TOLERANCE: f64 = 0.10;

/// A warning when a profile's total µs/op is not the `measured` CPU per
/// operation within three sampling errors plus [`CHECK_TOLERANCE`].
pub fn check_total(c: &Costs, measured: f64, who: &str, figure: &str) -> Option<String> {
    let allowed = 3.0 * c.error_us + CHECK_TOLERANCE * measured;
    let diff = c.total_us - measured;
    (diff.abs() > allowed).then(|| {
        format!(
            "cpu profile: the {who} profile adds up to {:.2} ± {:.2} µs/op but {figure} measured {measured:.2} µs/op ({:+.0}%): samples were lost or processes were missed",
            c.total_us,
            c.error_us,
            diff * 100.0 / measured.max(1e-9)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `perf script` output as perf 6.1 writes it: two samples of one stack,
    /// one of another, one without symbols.
    const SCRIPT: &str = "postgres 10 1.000001:    1000000 cpu-clock: \n\
\t  155e98 _bt_compare+0x28 (/usr/lib/postgresql/15/bin/postgres)\n\
\t  35310 PostgresMain+0x10 (/usr/lib/postgresql/15/bin/postgres)\n\n\
postgres 10 1.002001:    1000000 cpu-clock: \n\
\t  155e98 _bt_compare+0x28 (/usr/lib/postgresql/15/bin/postgres)\n\
\t  35310 PostgresMain+0x10 (/usr/lib/postgresql/15/bin/postgres)\n\n\
postgres 10 1.003001:    1000000 cpu-clock: \n\
\t  1e98 ExecScan+0x28 (/usr/lib/postgresql/15/bin/postgres)\n\
\t  35310 PostgresMain+0x10 (/usr/lib/postgresql/15/bin/postgres)\n\n\
postgres 10 1.004001:    1000000 cpu-clock: \n\
\t  7345d [unknown] (/usr/lib/postgresql/15/bin/postgres)\n\n";

    #[test]
    fn perf_script_output_folds_into_counts_of_samples() {
        let f = fold(SCRIPT.as_bytes(), PERIOD_NS).unwrap();
        assert_eq!(f.samples, 4);
        let mut lines: Vec<&str> = f.text.lines().collect();
        lines.sort();
        assert_eq!(
            lines,
            [
                "postgres;PostgresMain;ExecScan 1",
                "postgres;PostgresMain;_bt_compare 2",
                "postgres;[postgres] 1"
            ]
        );
    }

    #[test]
    fn a_profile_mostly_without_names_is_said_once() {
        let named = fold(SCRIPT.as_bytes(), PERIOD_NS).unwrap();
        assert_eq!(symbols_notice(&named, "server"), None);
        let unnamed = Folded {
            text: "postgres;[postgres] 9\npostgres;main 1\n".into(),
            samples: 10,
        };
        let n = symbols_notice(&unnamed, "server").expect("a notice");
        assert!(n.contains("90%") && n.contains("debug symbols"), "{n}");
        assert_eq!(symbols_notice(&unnamed, "server"), None);
    }

    #[test]
    fn a_perf_that_is_missing_or_not_permitted_is_said_with_the_remedy() {
        use std::os::unix::fs::PermissionsExt as _;
        // SAFETY: this test alone sets RQPS_PERF in this process's tests.
        unsafe { std::env::set_var("RQPS_PERF", "/nonexistent/perf") };
        let missing = check().unwrap_err().to_string();
        // A perf that refuses as perf does under perf_event_paranoid = 2.
        let d = tempfile::tempdir().unwrap();
        let fake = d.path().join("perf");
        std::fs::write(
            &fake,
            "#!/bin/sh\necho 'Error: Access to performance monitoring and observability operations is limited.' >&2\necho 'Consider adjusting /proc/sys/kernel/perf_event_paranoid setting' >&2\nexit 255\n",
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        unsafe { std::env::set_var("RQPS_PERF", &fake) };
        let refused = check().unwrap_err().to_string();
        unsafe { std::env::remove_var("RQPS_PERF") };
        assert!(missing.contains("apt install linux-perf"), "{missing}");
        assert!(
            refused.contains("sysctl kernel.perf_event_paranoid=1") && refused.contains("root"),
            "{refused}"
        );
    }
}
