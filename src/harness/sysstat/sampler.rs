//! Background sampling of /proc during a benchmark test, and the arithmetic
//! that turns the snapshots into totals, per-second rates and per-op costs.

use super::host;
use super::procfs::{self, CpuTimes, DiskCounters, PidStat, ProcError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What to sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplerConfig {
    /// Time between snapshots (default 1 s).
    pub interval: Duration,
    /// `/proc/diskstats` name of the device to follow (see
    /// [`device_for_path`](super::device_for_path)); `None`: no disk figures.
    pub device: Option<String>,
    /// Root pids of the server; their descendants are included.
    pub server_pids: Vec<u32>,
    /// Where procfs is mounted (default "/proc"; tests point it elsewhere).
    pub proc_root: PathBuf,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        SamplerConfig {
            interval: Duration::from_secs(1),
            device: None,
            server_pids: Vec::new(),
            proc_root: PathBuf::from("/proc"),
        }
    }
}

/// CPU and memory of one process. CPU in clock ticks (all its threads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcUsage {
    pub pid: u32,
    pub utime_ticks: u64,
    pub stime_ticks: u64,
    /// Current RSS; `None` when taken from getrusage.
    pub rss_bytes: Option<u64>,
}

impl ProcUsage {
    pub fn cpu_ticks(&self) -> u64 {
        self.utime_ticks.saturating_add(self.stime_ticks)
    }
}

/// CPU and memory summed over a process tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcTreeUsage {
    /// Sum of utime + stime + cutime + cstime over the live members, clock
    /// ticks. The reaped-children part keeps the CPU of short-lived
    /// descendants (per-connection backends) after they exit.
    pub cpu_ticks: u64,
    /// Sum of RSS. Shared memory (e.g. PostgreSQL shared_buffers) is
    /// counted once per process that touched it, so this overstates.
    pub rss_bytes: u64,
    pub process_count: usize,
}

/// One sample of every counter; a figure is `None` when it could not be
/// read (the reason is in [`SampleSeries::unavailable`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Time since the sampler started.
    pub at: Duration,
    pub cpu: Option<CpuTimes>,
    pub ctxt: Option<u64>,
    pub procs_running: Option<u64>,
    pub disk: Option<DiskCounters>,
    pub server: Option<ProcTreeUsage>,
    pub own: Option<ProcUsage>,
}

/// All snapshots of one sampling run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleSeries {
    /// Clock ticks per second used to turn ticks into seconds.
    pub ticks_per_sec: u64,
    /// CPUs counted in /proc/stat (or online CPUs).
    pub num_cpus: Option<usize>,
    pub device: Option<String>,
    pub server_pids: Vec<u32>,
    pub snapshots: Vec<Snapshot>,
    /// Why figures are missing, each reason once, e.g.
    /// "disk: no /proc/diskstats line for overlay".
    pub unavailable: Vec<String>,
}

/// Totals between the first and the last snapshot. A counter is `None`
/// when it is missing from the first or last snapshot, or goes down
/// anywhere in between (wraparound, a process leaving the tree): never a
/// made-up 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Seconds between the first and last snapshot (0 with fewer than two).
    pub elapsed_secs: f64,
    pub snapshots: usize,
    pub num_cpus: Option<usize>,
    /// Machine CPU seconds busy: user+nice+system+irq+softirq+steal, all CPUs.
    pub cpu_busy_secs: Option<f64>,
    /// user + nice.
    pub cpu_user_secs: Option<f64>,
    /// system + irq + softirq.
    pub cpu_system_secs: Option<f64>,
    pub cpu_steal_secs: Option<f64>,
    pub cpu_iowait_secs: Option<f64>,
    pub cpu_idle_secs: Option<f64>,
    /// Busy share of all CPUs' time, 0..=100.
    pub cpu_busy_pct: Option<f64>,
    pub context_switches: Option<u64>,
    pub disk_reads: Option<u64>,
    pub disk_read_kb: Option<f64>,
    pub disk_writes: Option<u64>,
    pub disk_write_kb: Option<f64>,
    /// Share of elapsed time the device had I/O in flight, 0..=100.
    pub disk_util_pct: Option<f64>,
    pub server_cpu_secs: Option<f64>,
    pub server_max_rss_bytes: Option<u64>,
    pub server_max_processes: Option<usize>,
    pub own_cpu_secs: Option<f64>,
}

/// Rates over one interval between consecutive snapshots. CPU shares are
/// of all CPUs' ticks in the interval (0..=100); process CPU is in percent
/// of one CPU (100 = one core busy, like top).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalRates {
    pub start_secs: f64,
    pub end_secs: f64,
    pub cpu_user_pct: Option<f64>,
    pub cpu_nice_pct: Option<f64>,
    pub cpu_system_pct: Option<f64>,
    pub cpu_idle_pct: Option<f64>,
    pub cpu_iowait_pct: Option<f64>,
    pub cpu_irq_pct: Option<f64>,
    pub cpu_softirq_pct: Option<f64>,
    pub cpu_steal_pct: Option<f64>,
    pub cpu_busy_pct: Option<f64>,
    pub ctxt_per_sec: Option<f64>,
    pub procs_running: Option<u64>,
    pub reads_per_sec: Option<f64>,
    pub read_kb_per_sec: Option<f64>,
    pub writes_per_sec: Option<f64>,
    pub write_kb_per_sec: Option<f64>,
    pub disk_util_pct: Option<f64>,
    pub server_cpu_pct: Option<f64>,
    /// At the end of the interval.
    pub server_rss_bytes: Option<u64>,
    pub server_processes: Option<usize>,
    pub own_cpu_pct: Option<f64>,
}

/// Per-operation costs (see [`per_op`]): declared with the results that store them.
pub use crate::results::PerOp;

/// Samples in the background until [`Sampler::stop`].
#[derive(Debug)]
pub struct Sampler {
    probe: Arc<Probe>,
    /// The first snapshot and the reasons noted before the thread started.
    first: Snapshot,
    notes: Notes,
    stop_tx: Option<Sender<()>>,
    handle: Option<JoinHandle<(Vec<Snapshot>, Notes)>>,
}

impl Sampler {
    /// Takes a first snapshot now, then one per `interval` on a background
    /// thread. Never fails: whatever cannot be read is `None` with a reason.
    pub fn start(cfg: SamplerConfig) -> Sampler {
        let mut notes = Notes::default();
        let probe = Arc::new(Probe::new(&cfg, &mut notes));
        let first = probe.snapshot(&mut notes);
        let interval = if cfg.interval.is_zero() {
            Duration::from_millis(1)
        } else {
            cfg.interval
        };
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let p = Arc::clone(&probe);
        let spawned = std::thread::Builder::new()
            .name("rqps-sysstat".into())
            .spawn(move || {
                let mut notes = Notes::default();
                let mut snaps = Vec::new();
                let mut next = interval;
                loop {
                    let now = p.start.elapsed();
                    let wait = next.saturating_sub(now);
                    match stop_rx.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => {}
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                    }
                    snaps.push(p.snapshot(&mut notes));
                    // Keep a fixed schedule; skip ticks missed while busy.
                    let now = p.start.elapsed();
                    while next <= now {
                        next += interval;
                    }
                }
                (snaps, notes)
            });
        let handle = match spawned {
            Ok(h) => Some(h),
            Err(e) => {
                // No thread: the series will hold the first and last snapshot.
                notes.add(format!("sampler: cannot start thread: {e}"));
                None
            }
        };
        Sampler {
            probe,
            first,
            notes,
            stop_tx: Some(stop_tx),
            handle,
        }
    }

    /// Stops the thread, takes a final snapshot and returns everything.
    pub fn stop(mut self) -> SampleSeries {
        let (later, thread_notes) = self.join();
        let mut notes = std::mem::take(&mut self.notes);
        notes.merge(thread_notes);
        let mut snaps = Vec::with_capacity(later.len() + 2);
        snaps.push(self.first.clone());
        snaps.extend(later);
        snaps.push(self.probe.snapshot(&mut notes));
        SampleSeries {
            ticks_per_sec: self.probe.ticks_per_sec,
            num_cpus: self.probe.num_cpus,
            device: self.probe.device.clone(),
            server_pids: self.probe.roots.clone(),
            snapshots: snaps,
            unavailable: notes.0,
        }
    }

    fn join(&mut self) -> (Vec<Snapshot>, Notes) {
        if let Some(tx) = self.stop_tx.take() {
            let _ = tx.send(());
        }
        match self.handle.take().map(|h| h.join()) {
            Some(Ok(v)) => v,
            Some(Err(_)) => {
                let mut n = Notes::default();
                n.add("sampler: background thread panicked");
                (Vec::new(), n)
            }
            None => (Vec::new(), Notes::default()),
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        let _ = self.join();
    }
}

/// Ordered, de-duplicated reasons.
#[derive(Debug, Default)]
struct Notes(Vec<String>);

impl Notes {
    fn add(&mut self, s: impl Into<String>) {
        let s = s.into();
        if !self.0.contains(&s) {
            self.0.push(s);
        }
    }
    fn merge(&mut self, other: Notes) {
        for s in other.0 {
            self.add(s);
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OwnSource {
    ProcSelf,
    Rusage,
    Unavailable,
}

/// Everything a snapshot needs, fixed at start.
#[derive(Debug)]
struct Probe {
    proc_root: PathBuf,
    device: Option<String>,
    roots: Vec<u32>,
    ticks_per_sec: u64,
    page_size: u64,
    num_cpus: Option<usize>,
    own: OwnSource,
    start: Instant,
    /// CPU ticks of the server tree in the latest snapshot (`u64::MAX`: none yet).
    last_server_ticks: std::sync::atomic::AtomicU64,
}

/// Reads of the process tree taken again when its CPU total went down.
const TREE_RESCANS: usize = 3;

/// The server tree's usage, read again (up to [`TREE_RESCANS`] times, a few
/// milliseconds apart) while its CPU total is below the previous snapshot's.
/// That happens when a process of the tree exits between the reads of its
/// parent and of itself: its CPU has left its own counters but not yet
/// reached the parent's reaped-children counters. A total that stays lower
/// is returned as it is (the series then reports server CPU as unavailable).
fn steady_tree_usage(
    mut usage: Option<ProcTreeUsage>,
    last_ticks: Option<u64>,
    mut rescan: impl FnMut() -> Option<ProcTreeUsage>,
) -> Option<ProcTreeUsage> {
    let Some(last) = last_ticks else {
        return usage;
    };
    for _ in 0..TREE_RESCANS {
        match &usage {
            Some(u) if u.cpu_ticks < last => usage = rescan(),
            _ => break,
        }
    }
    usage
}

impl Probe {
    fn new(cfg: &SamplerConfig, notes: &mut Notes) -> Probe {
        let ticks_per_sec = host::clock_ticks_per_sec().unwrap_or_else(|| {
            notes.add("clock ticks: sysconf(_SC_CLK_TCK) failed, assuming 100/s");
            100
        });
        let page_size = host::page_size().unwrap_or_else(|| {
            notes.add("page size: sysconf(_SC_PAGESIZE) failed, assuming 4096");
            4096
        });
        let num_cpus = std::fs::read_to_string(cfg.proc_root.join("stat"))
            .ok()
            .and_then(|t| procfs::parse_proc_stat(&t).ok())
            .map(|s| s.cpu_count)
            .filter(|n| *n > 0)
            .or_else(host::online_cpus);
        // Decide the source of our own CPU once, so deltas never mix sources.
        let own = if read_pid_stat(&cfg.proc_root.join("self/stat")).is_ok() {
            OwnSource::ProcSelf
        } else if host::own_rusage_us().is_some() {
            notes.add(format!(
                "own: {}/self/stat unreadable, using getrusage",
                cfg.proc_root.display()
            ));
            OwnSource::Rusage
        } else {
            notes.add(format!(
                "own: neither {}/self/stat nor getrusage available",
                cfg.proc_root.display()
            ));
            OwnSource::Unavailable
        };
        if cfg.device.is_none() {
            notes.add("disk: no device given");
        }
        if cfg.server_pids.is_empty() {
            notes.add("server: no server pids given");
        }
        Probe {
            proc_root: cfg.proc_root.clone(),
            device: cfg.device.clone(),
            roots: cfg.server_pids.clone(),
            ticks_per_sec,
            page_size,
            num_cpus,
            own,
            start: Instant::now(),
            last_server_ticks: std::sync::atomic::AtomicU64::new(u64::MAX),
        }
    }

    fn snapshot(&self, notes: &mut Notes) -> Snapshot {
        let at = self.start.elapsed();
        let root = self.proc_root.display();
        let mut snap = Snapshot {
            at,
            cpu: None,
            ctxt: None,
            procs_running: None,
            disk: None,
            server: None,
            own: None,
        };

        let stat_path = self.proc_root.join("stat");
        match std::fs::read_to_string(&stat_path) {
            Err(e) => notes.add(format!("cpu, ctxt: cannot read {root}/stat: {e}")),
            Ok(text) => match procfs::parse_proc_stat(&text) {
                Err(e) => notes.add(format!("cpu, ctxt: cannot parse {root}/stat: {e}")),
                Ok(st) => {
                    snap.cpu = Some(st.cpu);
                    snap.ctxt = st.ctxt;
                    snap.procs_running = st.procs_running;
                    if st.ctxt.is_none() {
                        notes.add(format!("ctxt: no ctxt line in {root}/stat"));
                    }
                }
            },
        }

        if let Some(dev) = &self.device {
            match std::fs::read_to_string(self.proc_root.join("diskstats")) {
                Err(e) => notes.add(format!("disk: cannot read {root}/diskstats: {e}")),
                Ok(text) => match procfs::parse_diskstats(&text) {
                    Err(e) => notes.add(format!("disk: cannot parse {root}/diskstats: {e}")),
                    Ok(lines) => match lines.into_iter().find(|l| &l.name == dev) {
                        Some(l) => snap.disk = Some(l.counters),
                        None => notes.add(format!("disk: no {root}/diskstats line for {dev}")),
                    },
                },
            }
        }

        if !self.roots.is_empty() {
            let procs = scan_processes(&self.proc_root);
            if procs.is_empty() {
                notes.add(format!("server: no processes readable under {root}"));
            } else {
                use std::sync::atomic::Ordering::Relaxed;
                let last = self.last_server_ticks.load(Relaxed);
                let usage = steady_tree_usage(
                    tree_usage(&procs, &self.roots, self.page_size),
                    (last != u64::MAX).then_some(last),
                    || {
                        std::thread::sleep(Duration::from_millis(2));
                        let procs = scan_processes(&self.proc_root);
                        tree_usage(&procs, &self.roots, self.page_size)
                    },
                );
                if let Some(u) = &usage {
                    self.last_server_ticks.store(u.cpu_ticks, Relaxed);
                }
                if usage.is_none() {
                    notes.add(format!("server: pids {:?} not running", self.roots));
                }
                snap.server = usage;
            }
        }

        snap.own = match self.own {
            OwnSource::ProcSelf => match read_pid_stat(&self.proc_root.join("self/stat")) {
                Ok(s) => Some(ProcUsage {
                    pid: s.pid,
                    utime_ticks: s.utime,
                    stime_ticks: s.stime,
                    rss_bytes: Some(s.rss_pages.saturating_mul(self.page_size)),
                }),
                Err(e) => {
                    notes.add(format!("own: cannot read {root}/self/stat: {e}"));
                    None
                }
            },
            OwnSource::Rusage => host::own_rusage_us().map(|(u, s)| ProcUsage {
                pid: std::process::id(),
                utime_ticks: u * self.ticks_per_sec / 1_000_000,
                stime_ticks: s * self.ticks_per_sec / 1_000_000,
                rss_bytes: None,
            }),
            OwnSource::Unavailable => None,
        };
        snap
    }
}

fn read_pid_stat(path: &Path) -> Result<PidStat, ProcError> {
    let text = std::fs::read_to_string(path)?;
    procfs::parse_pid_stat(&text)
}

/// `/proc/<pid>/stat` of every process under `proc_root` (threads are not
/// listed there). Processes that vanish while scanning are skipped.
pub fn scan_processes(proc_root: &Path) -> Vec<PidStat> {
    host::numeric_dirs(proc_root)
        .into_iter()
        .filter_map(|pid| read_pid_stat(&proc_root.join(pid.to_string()).join("stat")).ok())
        .collect()
}

/// The pids of `roots` (those present in `procs`) and all their
/// descendants, following ppid links.
pub fn descendants(procs: &[PidStat], roots: &[u32]) -> BTreeSet<u32> {
    let present: BTreeSet<u32> = procs.iter().map(|p| p.pid).collect();
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for p in procs {
        if p.ppid != p.pid {
            children.entry(p.ppid).or_default().push(p.pid);
        }
    }
    let mut out = BTreeSet::new();
    let mut stack: Vec<u32> = roots
        .iter()
        .copied()
        .filter(|r| present.contains(r))
        .collect();
    while let Some(pid) = stack.pop() {
        if out.insert(pid)
            && let Some(kids) = children.get(&pid)
        {
            stack.extend(kids.iter().copied());
        }
    }
    out
}

/// Usage summed over `roots` and their descendants; `None` when none of
/// the roots is running.
pub fn tree_usage(procs: &[PidStat], roots: &[u32], page_size: u64) -> Option<ProcTreeUsage> {
    let members = descendants(procs, roots);
    if members.is_empty() {
        return None;
    }
    let mut u = ProcTreeUsage {
        cpu_ticks: 0,
        rss_bytes: 0,
        process_count: 0,
    };
    for p in procs.iter().filter(|p| members.contains(&p.pid)) {
        u.cpu_ticks = u
            .cpu_ticks
            .saturating_add(p.utime)
            .saturating_add(p.stime)
            .saturating_add(p.cutime)
            .saturating_add(p.cstime);
        u.rss_bytes = u
            .rss_bytes
            .saturating_add(p.rss_pages.saturating_mul(page_size));
        u.process_count += 1;
    }
    Some(u)
}

/// Why the memory of a server's process tree could not be read.
#[derive(Debug, thiserror::Error)]
pub enum MemError {
    #[error("server memory: pids {0:?} not running")]
    NotRunning(Vec<u32>),
    #[error("server memory: no Pss in {}", .0.display())]
    NoPss(PathBuf),
    #[error(
        "server memory: cannot read {}: {source} (rqps may read it when it runs as the server's user or as root)",
        path.display()
    )]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The memory of the process tree of `roots` now: its proportional set
/// sizes summed (`/proc/<pid>/smaps_rollup`), so memory its processes share
/// (PostgreSQL's shared buffers, mapped by every backend) counts once, as
/// long as every process that maps it is in the tree.
pub fn tree_pss_bytes(proc_root: &Path, roots: &[u32]) -> Result<u64, MemError> {
    let procs = scan_processes(proc_root);
    let members = descendants(&procs, roots);
    if members.is_empty() {
        return Err(MemError::NotRunning(roots.to_vec()));
    }
    let mut total = 0u64;
    for pid in members {
        let path = proc_root.join(pid.to_string()).join("smaps_rollup");
        match std::fs::read_to_string(&path) {
            Ok(text) => match procfs::parse_smaps_rollup_pss_kb(&text) {
                Some(kb) => total = total.saturating_add(kb.saturating_mul(1024)),
                None => return Err(MemError::NoPss(path)),
            },
            // A backend that ended since the scan holds no memory.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(MemError::Unreadable { path, source }),
        }
    }
    Ok(total)
}

/// `last - first` of a counter over the series: `None` unless the first and
/// last snapshots have it and no available value decreases on the way.
fn counter_total(snaps: &[Snapshot], f: impl Fn(&Snapshot) -> Option<u64>) -> Option<u64> {
    if snaps.len() < 2 {
        return None;
    }
    let first = f(snaps.first()?)?;
    let last = f(snaps.last()?)?;
    let mut prev = first;
    for v in snaps.iter().filter_map(&f) {
        if v < prev {
            return None;
        }
        prev = v;
    }
    last.checked_sub(first)
}

/// `b - a` when both are present and it is not negative.
fn pair_delta(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    b?.checked_sub(a?)
}

fn pct(part: Option<u64>, whole: Option<u64>) -> Option<f64> {
    let whole = whole.filter(|w| *w > 0)?;
    Some(part? as f64 * 100.0 / whole as f64)
}

impl SampleSeries {
    fn secs(&self, ticks: Option<u64>) -> Option<f64> {
        (self.ticks_per_sec > 0).then_some(())?;
        Some(ticks? as f64 / self.ticks_per_sec as f64)
    }

    /// Totals between the first and last snapshot (see [`Totals`]).
    pub fn totals(&self) -> Totals {
        let s = &self.snapshots;
        let elapsed = match (s.first(), s.last()) {
            (Some(a), Some(b)) => b.at.saturating_sub(a.at).as_secs_f64(),
            _ => 0.0,
        };
        let cpu = |g: fn(&CpuTimes) -> u64| counter_total(s, move |x| x.cpu.as_ref().map(g));
        let busy = cpu(CpuTimes::busy);
        let total = cpu(CpuTimes::total);
        let disk = |g: fn(&DiskCounters) -> Option<u64>| {
            counter_total(s, move |x| x.disk.as_ref().and_then(g))
        };
        let io_ms = disk(|d| d.ms_doing_io);
        Totals {
            elapsed_secs: elapsed,
            snapshots: s.len(),
            num_cpus: self.num_cpus,
            cpu_busy_secs: self.secs(busy),
            cpu_user_secs: self.secs(cpu(|c| c.user.saturating_add(c.nice))),
            cpu_system_secs: self.secs(cpu(|c| {
                c.system.saturating_add(c.irq).saturating_add(c.softirq)
            })),
            cpu_steal_secs: self.secs(cpu(|c| c.steal)),
            cpu_iowait_secs: self.secs(cpu(|c| c.iowait)),
            cpu_idle_secs: self.secs(cpu(|c| c.idle)),
            cpu_busy_pct: pct(busy, total),
            context_switches: counter_total(s, |x| x.ctxt),
            disk_reads: disk(|d| Some(d.reads)),
            disk_read_kb: disk(|d| Some(d.sectors_read)).map(|v| v as f64 / 2.0),
            disk_writes: disk(|d| Some(d.writes)),
            disk_write_kb: disk(|d| Some(d.sectors_written)).map(|v| v as f64 / 2.0),
            disk_util_pct: io_ms
                .filter(|_| elapsed > 0.0)
                .map(|ms| (ms as f64 / (elapsed * 1000.0) * 100.0).min(100.0)),
            server_cpu_secs: self.secs(counter_total(s, |x| x.server.map(|u| u.cpu_ticks))),
            server_max_rss_bytes: s.iter().filter_map(|x| x.server.map(|u| u.rss_bytes)).max(),
            server_max_processes: s
                .iter()
                .filter_map(|x| x.server.map(|u| u.process_count))
                .max(),
            own_cpu_secs: self.secs(counter_total(s, |x| x.own.map(|u| u.cpu_ticks()))),
        }
    }

    /// Rates for each pair of consecutive snapshots.
    pub fn per_interval(&self) -> Vec<IntervalRates> {
        self.snapshots
            .windows(2)
            .map(|w| self.interval_rates(&w[0], &w[1]))
            .collect()
    }

    fn interval_rates(&self, a: &Snapshot, b: &Snapshot) -> IntervalRates {
        let secs = b.at.saturating_sub(a.at).as_secs_f64();
        let per_sec = |d: Option<u64>| d.filter(|_| secs > 0.0).map(|v| v as f64 / secs);
        let cpu_d =
            |g: fn(&CpuTimes) -> u64| pair_delta(a.cpu.as_ref().map(g), b.cpu.as_ref().map(g));
        let total = cpu_d(CpuTimes::total);
        let share = |g: fn(&CpuTimes) -> u64| pct(cpu_d(g), total);
        let disk_d = |g: fn(&DiskCounters) -> Option<u64>| {
            pair_delta(a.disk.as_ref().and_then(g), b.disk.as_ref().and_then(g))
        };
        // Process CPU in percent of one CPU.
        let proc_pct = |ticks: Option<u64>| {
            (self.ticks_per_sec > 0 && secs > 0.0)
                .then_some(())
                .and(ticks)
                .map(|t| t as f64 / self.ticks_per_sec as f64 / secs * 100.0)
        };
        IntervalRates {
            start_secs: a.at.as_secs_f64(),
            end_secs: b.at.as_secs_f64(),
            cpu_user_pct: share(|c| c.user),
            cpu_nice_pct: share(|c| c.nice),
            cpu_system_pct: share(|c| c.system),
            cpu_idle_pct: share(|c| c.idle),
            cpu_iowait_pct: share(|c| c.iowait),
            cpu_irq_pct: share(|c| c.irq),
            cpu_softirq_pct: share(|c| c.softirq),
            cpu_steal_pct: share(|c| c.steal),
            cpu_busy_pct: share(CpuTimes::busy),
            ctxt_per_sec: per_sec(pair_delta(a.ctxt, b.ctxt)),
            procs_running: b.procs_running,
            reads_per_sec: per_sec(disk_d(|d| Some(d.reads))),
            read_kb_per_sec: per_sec(disk_d(|d| Some(d.sectors_read))).map(|v| v / 2.0),
            writes_per_sec: per_sec(disk_d(|d| Some(d.writes))),
            write_kb_per_sec: per_sec(disk_d(|d| Some(d.sectors_written))).map(|v| v / 2.0),
            disk_util_pct: per_sec(disk_d(|d| d.ms_doing_io))
                .map(|ms_per_s| (ms_per_s / 10.0).min(100.0)),
            server_cpu_pct: proc_pct(pair_delta(
                a.server.map(|u| u.cpu_ticks),
                b.server.map(|u| u.cpu_ticks),
            )),
            server_rss_bytes: b.server.map(|u| u.rss_bytes),
            server_processes: b.server.map(|u| u.process_count),
            own_cpu_pct: proc_pct(pair_delta(
                a.own.map(|u| u.cpu_ticks()),
                b.own.map(|u| u.cpu_ticks()),
            )),
        }
    }
}

/// Per-op figures from totals and an operation count; all `None` when
/// `ops` is not a positive finite number.
pub fn per_op(t: &Totals, ops: f64) -> PerOp {
    let ok = ops.is_finite() && ops > 0.0;
    let per = |v: Option<f64>| v.filter(|_| ok).map(|v| v / ops);
    let us = |secs: Option<f64>| per(secs.map(|s| s * 1e6));
    PerOp {
        cpu_us_per_op: us(t.cpu_busy_secs),
        server_cpu_us_per_op: us(t.server_cpu_secs),
        client_cpu_us_per_op: us(t.own_cpu_secs),
        cs_per_op: per(t.context_switches.map(|v| v as f64)),
        reads_per_op: per(t.disk_reads.map(|v| v as f64)),
        rkb_per_op: per(t.disk_read_kb),
        writes_per_op: per(t.disk_writes.map(|v| v as f64)),
        wkb_per_op: per(t.disk_write_kb),
    }
}

/// Percentage of all CPUs' time over `window` spent busy by processes
/// other than the `exclude_pids` trees and this process (with its
/// children): machine busy ticks minus the excluded trees' ticks, over all
/// ticks. Interrupt time not charged to a process counts as other. `None`
/// when /proc/stat cannot be read or no tick passed.
pub fn background_cpu_pct(window: Duration, exclude_pids: &[u32]) -> Option<f64> {
    background_cpu_pct_in(Path::new("/proc"), window, exclude_pids)
}

pub(crate) fn background_cpu_pct_in(
    proc_root: &Path,
    window: Duration,
    exclude_pids: &[u32],
) -> Option<f64> {
    let mut roots = exclude_pids.to_vec();
    roots.push(std::process::id());
    let read_cpu = || {
        std::fs::read_to_string(proc_root.join("stat"))
            .ok()
            .and_then(|t| procfs::parse_proc_stat(&t).ok())
            .map(|s| s.cpu)
    };
    let excluded_ticks =
        || tree_usage(&scan_processes(proc_root), &roots, 1).map_or(0, |u| u.cpu_ticks);
    let c0 = read_cpu()?;
    let e0 = excluded_ticks();
    std::thread::sleep(window);
    let c1 = read_cpu()?;
    let e1 = excluded_ticks();
    let busy = c1.busy().checked_sub(c0.busy())?;
    let total = c1.total().checked_sub(c0.total()).filter(|t| *t > 0)?;
    // A tree member reaped outside the tree makes e1 < e0: count it as 0.
    let other = busy.saturating_sub(e1.saturating_sub(e0));
    Some((other as f64 * 100.0 / total as f64).clamp(0.0, 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two processes sharing memory: their PSS summed counts the shared
    /// pages once, where their RSS summed counts them twice.
    #[test]
    fn a_process_tree_s_memory_counts_shared_memory_once() {
        if !Path::new("/proc/self/smaps_rollup").exists() {
            eprintln!("skipping: no /proc/self/smaps_rollup");
            return;
        }
        // A parent and a child sharing 64 MB, touched by both.
        let mb = 64usize << 20;
        // SAFETY: an anonymous shared mapping; checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mb,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        // SAFETY: the mapping is `mb` bytes long.
        unsafe { std::ptr::write_bytes(p as *mut u8, 1, mb) };
        // SAFETY: the child only reads the mapping and sleeps, then exits.
        let child = unsafe { libc::fork() };
        if child == 0 {
            let mut sum = 0u64;
            for i in (0..mb).step_by(4096) {
                // SAFETY: within the mapping.
                sum += u64::from(unsafe { *(p as *const u8).add(i) });
            }
            // SAFETY: sleep and _exit are async-signal-safe.
            unsafe {
                libc::sleep(if sum > 0 { 5 } else { 0 });
                libc::_exit(0)
            };
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
        let me = std::process::id();
        let both = tree_pss_bytes(Path::new("/proc"), &[me]);
        let procs = scan_processes(Path::new("/proc"));
        let rss = tree_usage(&procs, &[me], page_size_now())
            .unwrap()
            .rss_bytes;
        // SAFETY: the child is ours.
        unsafe {
            libc::kill(child, libc::SIGKILL);
            libc::waitpid(child, std::ptr::null_mut(), 0);
            libc::munmap(p, mb);
        }
        // The tree (this process and its child) holds the 64 MB once by PSS,
        // twice by RSS.
        let both = both.unwrap();
        assert!(rss >= 2 * mb as u64, "rss {rss}");
        assert!(both < rss - (mb as u64) / 2, "pss {both} rss {rss}");
        assert!(both >= mb as u64, "pss {both}");
        assert!(tree_pss_bytes(Path::new("/proc"), &[u32::MAX - 1]).is_err());
    }

    fn page_size_now() -> u64 {
        // SAFETY: sysconf has no preconditions.
        unsafe { libc::sysconf(libc::_SC_PAGESIZE) as u64 }
    }

    const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/proc");

    fn cpu(user: u64, system: u64, idle: u64, iowait: u64) -> CpuTimes {
        CpuTimes {
            user,
            system,
            idle,
            iowait,
            ..CpuTimes::default()
        }
    }

    fn disk(reads: u64, sr: u64, writes: u64, sw: u64, io_ms: u64) -> DiskCounters {
        DiskCounters {
            reads,
            sectors_read: sr,
            writes,
            sectors_written: sw,
            ms_doing_io: Some(io_ms),
            ..DiskCounters::default()
        }
    }

    fn snap(at_ms: u64, c: Option<CpuTimes>, ctxt: Option<u64>) -> Snapshot {
        Snapshot {
            at: Duration::from_millis(at_ms),
            cpu: c,
            ctxt,
            procs_running: Some(2),
            disk: None,
            server: None,
            own: None,
        }
    }

    fn series(snapshots: Vec<Snapshot>) -> SampleSeries {
        SampleSeries {
            ticks_per_sec: 100,
            num_cpus: Some(2),
            device: Some("vda".into()),
            server_pids: vec![1],
            snapshots,
            unavailable: Vec::new(),
        }
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    fn synthetic() -> SampleSeries {
        let tree = |ticks, rss, n| ProcTreeUsage {
            cpu_ticks: ticks,
            rss_bytes: rss,
            process_count: n,
        };
        let own = |u, s| ProcUsage {
            pid: 9,
            utime_ticks: u,
            stime_ticks: s,
            rss_bytes: Some(1),
        };
        let mut a = snap(0, Some(cpu(1000, 500, 10_000, 50)), Some(1_000));
        a.disk = Some(disk(10, 80, 20, 400, 100));
        a.server = Some(tree(100, 1 << 20, 3));
        a.own = Some(own(10, 5));
        let mut b = snap(1000, Some(cpu(1100, 550, 10_040, 60)), Some(3_000));
        b.disk = Some(disk(30, 240, 70, 1400, 400));
        b.server = Some(tree(160, 3 << 20, 5));
        b.own = Some(own(20, 10));
        let mut c = snap(2000, Some(cpu(1200, 600, 10_080, 70)), Some(5_000));
        c.disk = Some(disk(50, 400, 120, 2400, 700));
        c.server = Some(tree(220, 2 << 20, 4));
        c.own = Some(own(30, 15));
        series(vec![a, b, c])
    }

    #[test]
    fn totals_of_synthetic_series() {
        let t = synthetic().totals();
        assert_eq!(t.snapshots, 3);
        assert!((t.elapsed_secs - 2.0).abs() < 1e-9);
        // busy: user +200, system +100 = 300 ticks = 3 s.
        assert!(close(t.cpu_busy_secs, 3.0), "{:?}", t.cpu_busy_secs);
        assert!(close(t.cpu_user_secs, 2.0));
        assert!(close(t.cpu_system_secs, 1.0));
        assert!(close(t.cpu_steal_secs, 0.0));
        assert!(close(t.cpu_idle_secs, 0.8));
        assert!(close(t.cpu_iowait_secs, 0.2));
        // 300 busy of 400 total ticks.
        assert!(close(t.cpu_busy_pct, 75.0));
        assert_eq!(t.context_switches, Some(4_000));
        assert_eq!(t.disk_reads, Some(40));
        assert!(close(t.disk_read_kb, 160.0));
        assert_eq!(t.disk_writes, Some(100));
        assert!(close(t.disk_write_kb, 1000.0));
        assert!(close(t.disk_util_pct, 30.0));
        assert!(close(t.server_cpu_secs, 1.2));
        assert_eq!(t.server_max_rss_bytes, Some(3 << 20));
        assert_eq!(t.server_max_processes, Some(5));
        assert!(close(t.own_cpu_secs, 0.3));

        let p = per_op(&t, 1000.0);
        assert!(close(p.cpu_us_per_op, 3000.0));
        assert!(close(p.server_cpu_us_per_op, 1200.0));
        assert!(close(p.client_cpu_us_per_op, 300.0));
        assert!(close(p.cs_per_op, 4.0));
        assert!(close(p.reads_per_op, 0.04));
        assert!(close(p.rkb_per_op, 0.16));
        assert!(close(p.writes_per_op, 0.1));
        assert!(close(p.wkb_per_op, 1.0));
    }

    #[test]
    fn per_interval_rates() {
        let r = synthetic().per_interval();
        assert_eq!(r.len(), 2);
        let r0 = &r[0];
        assert!((r0.end_secs - 1.0).abs() < 1e-9);
        // Interval 0: user 100, system 50, idle 40, iowait 10 = 200 ticks.
        assert!(close(r0.cpu_user_pct, 50.0));
        assert!(close(r0.cpu_system_pct, 25.0));
        assert!(close(r0.cpu_idle_pct, 20.0));
        assert!(close(r0.cpu_iowait_pct, 5.0));
        assert!(close(r0.cpu_busy_pct, 75.0));
        assert!(close(r0.cpu_steal_pct, 0.0));
        assert!(close(r0.ctxt_per_sec, 2000.0));
        assert!(close(r0.reads_per_sec, 20.0));
        assert!(close(r0.read_kb_per_sec, 80.0));
        assert!(close(r0.writes_per_sec, 50.0));
        assert!(close(r0.write_kb_per_sec, 500.0));
        assert!(close(r0.disk_util_pct, 30.0));
        assert!(close(r0.server_cpu_pct, 60.0));
        assert_eq!(r0.server_rss_bytes, Some(3 << 20));
        assert_eq!(r0.server_processes, Some(5));
        assert!(close(r0.own_cpu_pct, 15.0));
        assert_eq!(r0.procs_running, Some(2));
    }

    #[test]
    fn a_dip_in_the_tree_total_is_read_again() {
        let u = |t| {
            Some(ProcTreeUsage {
                cpu_ticks: t,
                rss_bytes: 0,
                process_count: 1,
            })
        };
        // Read again until the total is back.
        let mut reads = vec![u(90), u(105)].into_iter();
        let got = steady_tree_usage(u(80), Some(100), || reads.next().flatten());
        assert_eq!(got.map(|x| x.cpu_ticks), Some(105));
        assert_eq!(reads.len(), 0);
        // No read when it did not go down, or on the first snapshot.
        let got = steady_tree_usage(u(100), Some(100), || panic!("no rescan"));
        assert_eq!(got.map(|x| x.cpu_ticks), Some(100));
        assert!(steady_tree_usage(u(5), None, || panic!("no rescan")).is_some());
        // A total that stays lower is kept after a bounded number of reads.
        let mut n = 0;
        let got = steady_tree_usage(u(80), Some(100), || {
            n += 1;
            u(80)
        });
        assert_eq!((got.map(|x| x.cpu_ticks), n), (Some(80), TREE_RESCANS));
    }

    #[test]
    fn decreasing_counter_is_unavailable_not_negative() {
        let mut s = synthetic();
        // ctxt wraps in the middle snapshot; a server process leaves the tree.
        s.snapshots[1].ctxt = Some(u64::MAX - 5);
        s.snapshots[2].server.as_mut().unwrap().cpu_ticks = 50;
        // iowait goes backwards (the kernel allows it) between 1 and 2.
        s.snapshots[2].cpu.as_mut().unwrap().iowait = 55;
        let t = s.totals();
        assert_eq!(t.context_switches, None);
        assert_eq!(t.server_cpu_secs, None);
        assert_eq!(t.cpu_iowait_secs, None);
        // Other figures survive.
        assert!(close(t.cpu_user_secs, 2.0));
        assert_eq!(t.disk_reads, Some(40));
        let r = s.per_interval();
        assert!(close(r[0].ctxt_per_sec, (u64::MAX - 5 - 1000) as f64));
        assert_eq!(r[1].ctxt_per_sec, None);
        assert_eq!(r[1].server_cpu_pct, None);
        assert_eq!(r[1].cpu_iowait_pct, None);
        let p = per_op(&t, 10.0);
        assert_eq!(p.cs_per_op, None);
        assert_eq!(p.server_cpu_us_per_op, None);
    }

    #[test]
    fn missing_figures_stay_none() {
        // Disk missing in the last snapshot; ctxt missing in the middle only.
        let mut s = synthetic();
        s.snapshots[2].disk = None;
        s.snapshots[1].ctxt = None;
        let t = s.totals();
        assert_eq!(t.disk_reads, None);
        assert_eq!(t.disk_util_pct, None);
        assert_eq!(t.context_switches, Some(4_000));
        let r = s.per_interval();
        assert_eq!(r[0].ctxt_per_sec, None);
        assert_eq!(r[1].reads_per_sec, None);

        // Nothing at all measured.
        let empty = series(vec![snap(0, None, None), snap(1000, None, None)]);
        let t = empty.totals();
        assert!((t.elapsed_secs - 1.0).abs() < 1e-9);
        assert_eq!(t.cpu_busy_secs, None);
        assert_eq!(t.cpu_busy_pct, None);
        assert_eq!(t.server_max_rss_bytes, None);
        assert_eq!(t.own_cpu_secs, None);
        assert_eq!(per_op(&t, 5.0), PerOp::default());

        // One snapshot: no deltas.
        let one = series(vec![snap(0, Some(cpu(1, 1, 1, 1)), Some(1))]);
        let t = one.totals();
        assert_eq!(t.elapsed_secs, 0.0);
        assert_eq!(t.cpu_busy_secs, None);
        assert!(one.per_interval().is_empty());
        assert!(series(Vec::new()).per_interval().is_empty());
    }

    #[test]
    fn idle_interval_has_no_percentages() {
        // Same tick counts twice (interval shorter than a tick).
        let s = series(vec![
            snap(0, Some(cpu(5, 5, 5, 5)), Some(7)),
            snap(5, Some(cpu(5, 5, 5, 5)), Some(7)),
        ]);
        let r = &s.per_interval()[0];
        assert_eq!(r.cpu_busy_pct, None);
        assert!(close(r.ctxt_per_sec, 0.0));
        assert_eq!(s.totals().cpu_busy_pct, None);
        assert!(close(s.totals().cpu_busy_secs, 0.0));
    }

    #[test]
    fn per_op_rejects_bad_counts() {
        let t = synthetic().totals();
        for ops in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let p = per_op(&t, ops);
            assert_eq!(p.cpu_us_per_op, None);
            assert_eq!(p.wkb_per_op, None);
        }
    }

    #[test]
    fn tree_discovery_on_fake_proc() {
        let root = Path::new(FIX).join("fakeroot");
        let procs = scan_processes(&root);
        let pids: Vec<u32> = procs.iter().map(|p| p.pid).collect();
        assert_eq!(pids, vec![100, 101, 102, 200]);
        assert_eq!(
            descendants(&procs, &[100]).into_iter().collect::<Vec<_>>(),
            vec![100, 101, 102]
        );
        assert_eq!(
            descendants(&procs, &[101]).into_iter().collect::<Vec<_>>(),
            vec![101, 102]
        );
        assert!(descendants(&procs, &[999]).is_empty());
        let u = tree_usage(&procs, &[100, 999], 4096).unwrap();
        // 100: 1000+200+50+5, 101: 10+20, 102: 1+2.
        assert_eq!(u.cpu_ticks, 1288);
        assert_eq!(u.rss_bytes, (25600 + 256 + 100) * 4096);
        assert_eq!(u.process_count, 3);
        assert_eq!(tree_usage(&procs, &[999], 4096), None);
    }

    #[test]
    fn descendants_survive_ppid_cycles() {
        let mk = |pid, ppid| {
            let mut p = procfs::parse_pid_stat(
                &std::fs::read_to_string(format!("{FIX}/pid_stat.kthread")).unwrap(),
            )
            .unwrap();
            p.pid = pid;
            p.ppid = ppid;
            p
        };
        let procs = vec![mk(1, 3), mk(2, 1), mk(3, 2)];
        assert_eq!(descendants(&procs, &[1]).len(), 3);
    }

    #[test]
    fn sampler_on_fake_proc_root() {
        let cfg = SamplerConfig {
            interval: Duration::from_millis(20),
            device: Some("nvme0n1p2".into()),
            server_pids: vec![100],
            proc_root: Path::new(FIX).join("fakeroot"),
        };
        let s = Sampler::start(cfg);
        // 15 intervals for the 3 snapshots the test needs: 70 ms (3.5) left
        // too little slack when the test threads share 2 busy cores.
        std::thread::sleep(Duration::from_millis(300));
        let series = s.stop();
        assert!(series.snapshots.len() >= 3, "{}", series.snapshots.len());
        assert_eq!(series.num_cpus, Some(4));
        let first = &series.snapshots[0];
        assert_eq!(first.cpu.unwrap().user, 1_000_000);
        assert_eq!(first.ctxt, Some(18446744073709551000));
        assert_eq!(first.procs_running, Some(7));
        assert_eq!(first.disk.unwrap().writes, 2000);
        assert_eq!(first.server.unwrap().process_count, 3);
        assert_eq!(first.own.unwrap().pid, 300);
        assert!(series.unavailable.is_empty(), "{:?}", series.unavailable);
        // Constant files: zero deltas, not None; shares undefined.
        let t = series.totals();
        assert_eq!(t.context_switches, Some(0));
        assert_eq!(t.disk_writes, Some(0));
        assert!(close(t.server_cpu_secs, 0.0));
        assert_eq!(t.cpu_busy_pct, None);
        // Snapshots are ordered in time.
        assert!(series.snapshots.windows(2).all(|w| w[0].at <= w[1].at));
    }

    #[test]
    fn sampler_without_proc() {
        let cfg = SamplerConfig {
            interval: Duration::from_millis(10),
            device: Some("sda".into()),
            server_pids: vec![1],
            proc_root: PathBuf::from("/nonexistent/proc"),
        };
        let series = Sampler::start(cfg).stop();
        assert!(series.snapshots.len() >= 2);
        for s in &series.snapshots {
            assert_eq!((s.cpu, s.ctxt, s.disk, s.server), (None, None, None, None));
        }
        let t = series.totals();
        assert_eq!(t.cpu_busy_secs, None);
        assert_eq!(t.disk_reads, None);
        assert_eq!(t.server_cpu_secs, None);
        let joined = series.unavailable.join("\n");
        for word in ["cpu", "disk", "server", "own"] {
            assert!(joined.contains(word), "{joined}");
        }
        // Own CPU falls back to getrusage (unix), never /proc.
        if cfg!(unix) {
            assert!(
                series.snapshots[0]
                    .own
                    .is_some_and(|o| o.rss_bytes.is_none())
            );
        }
        // Each reason is listed once although every snapshot failed.
        let mut dedup = series.unavailable.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), series.unavailable.len());
    }

    #[test]
    fn sampler_dropped_without_stop_does_not_hang() {
        let s = Sampler::start(SamplerConfig {
            interval: Duration::from_secs(3600),
            ..SamplerConfig::default()
        });
        let t0 = Instant::now();
        drop(s);
        assert!(t0.elapsed() < Duration::from_secs(5));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn sampler_live_busy_work() {
        let me = std::process::id();
        let device = super::super::device_for_path(Path::new(env!("CARGO_MANIFEST_DIR")))
            .ok()
            .map(|d| d.diskstats_name);
        let s = Sampler::start(SamplerConfig {
            interval: Duration::from_millis(250),
            device: device.clone(),
            server_pids: vec![me],
            ..SamplerConfig::default()
        });
        let worker = std::thread::spawn(|| {
            let t0 = Instant::now();
            let mut x = 0u64;
            while t0.elapsed() < Duration::from_millis(1500) {
                for i in 0..10_000u64 {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
                }
                std::hint::black_box(x);
            }
            x
        });
        worker.join().unwrap();
        let series = s.stop();
        assert!(series.snapshots.len() >= 6, "{}", series.snapshots.len());
        let t = series.totals();
        assert!(t.elapsed_secs >= 1.4, "{t:?}");
        assert!(t.own_cpu_secs.unwrap() > 0.0, "{t:?}");
        assert!(t.cpu_busy_secs.unwrap() > 0.0, "{t:?}");
        assert!(t.cpu_busy_pct.unwrap() > 0.0, "{t:?}");
        assert!(t.context_switches.unwrap() > 0, "{t:?}");
        // The test process is its own "server" tree here.
        assert!(t.server_cpu_secs.unwrap() > 0.0, "{t:?}");
        assert!(t.server_max_rss_bytes.unwrap() > 0, "{t:?}");
        if device.is_some() {
            assert!(t.disk_reads.is_some(), "{t:?} {:?}", series.unavailable);
        }
        let rates = series.per_interval();
        assert_eq!(rates.len(), series.snapshots.len() - 1);
        assert!(rates.iter().any(|r| r.own_cpu_pct.is_some_and(|p| p > 0.0)));
        let p = per_op(&t, 1_000.0);
        assert!(p.client_cpu_us_per_op.unwrap() > 0.0);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn background_cpu_excluding_ourselves() {
        let pct = background_cpu_pct(Duration::from_millis(300), &[]).expect("background pct");
        assert!((0.0..=100.0).contains(&pct), "{pct}");
        assert_eq!(
            background_cpu_pct_in(Path::new("/nonexistent"), Duration::ZERO, &[]),
            None
        );
    }
}
