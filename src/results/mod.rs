//! The results directory: every finished test is written at once, atomically,
//! so a crash or Ctrl-C of rqps loses nothing that finished.
//!
//! Layout: `<results>/<run-id>/run.json` (the run's context) and
//! `<results>/<run-id>/tests/<NNN>-<test>-t<threads>.json` (one per test).
//! A test file is written with status `running` when the test starts and
//! replaced when it ends, so a test cut short by a crash is visible as such.

pub mod compat;
pub mod merge;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::util::{file_safe, now_rfc3339, write_atomic, write_output};

/// How a result's warning about a busy machine starts (written by the
/// harness's probe, read by reports to mark the result).
pub const BUSY_WARNING: &str = "the machine was not idle";

/// The mark after a verdict, a status or a value measured while the machine
/// was busy (a result with a [`BUSY_WARNING`]), wherever rqps prints one.
pub const BUSY_MARK: &str = "!";

/// Whether a result carries the busy machine's warning.
pub fn ran_busy(warnings: &[String]) -> bool {
    warnings.iter().any(|w| w.starts_with(BUSY_WARNING))
}

/// How a result's warning about a server stall starts (written by the
/// harness from the per-second series, shown by `rqps show` and the live line).
pub const STALL_WARNING: &str = "the server stalled";

/// One test at one thread count.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TestResult {
    pub suite: String,
    pub test: String,
    /// Report group (`point`, `range`, `range-agg`, `write`).
    pub group: String,
    pub threads: usize,
    /// Part of the reported set of its order (warm-up steps are not).
    pub reported: bool,
    /// `ok`, `failed`, `interrupted`, or `running` while it runs.
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    pub started: String,
    /// Measured seconds (warm-up excluded) and the warm-up that preceded them.
    pub secs: f64,
    pub warmup_secs: f64,
    /// The reported throughput: statements per second, except `scan`, where it
    /// is thousands of rows scanned per second by one scan (reference §5.1).
    pub qps: f64,
    pub qps_unit: String,
    /// Events (sysbench transactions) per second.
    pub tps: f64,
    /// Statements per second, for every test (equal to `qps` except for scan).
    pub statements_per_sec: f64,
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub events: u64,
    pub errors: u64,
    pub reconnects: u64,
    pub rows: u64,
    /// Event latency in microseconds.
    pub latency_us: Latency,
    /// The event latency histogram (nanoseconds), HdrHistogram V2 deflated
    /// and base64-encoded ([`encode_histogram`]), so that `rqps merge` adds the
    /// histograms of client parts exactly instead of averaging percentiles.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub histogram: Option<String>,
    /// Per operation kind (TPC-C's transactions, LinkBench's operations, the
    /// Insert Benchmark's statement kinds), for suites whose events have kinds.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty", default)]
    pub ops: std::collections::BTreeMap<String, OpStats>,
    pub per_second: Vec<SecondSample>,
    /// The events each connection (worker) completed in the measured
    /// interval, in their order: one stuck or starved connection shows as a
    /// 0 beside the others.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub per_connection: Vec<u64>,
    /// The measured step ran past its deadline because connections were
    /// still in a statement (absent when it did not).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub overran: Option<Box<Overran>>,
    /// Hardware cost per operation, from the /proc sampler (absent where not
    /// measured). Boxed, as the other large fields most results lack or a
    /// reader drops: a reader of 76,000 results keeps each inline.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub hw: Option<Box<HwCost>>,
    /// A result merged from client parts: each part's own hardware figures
    /// (its host's), in part order; `hw` is then absent.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub part_hw: Vec<Option<HwCost>>,
    /// Change of the engine's status counters over the test (`SHOW GLOBAL STATUS`,
    /// `pg_stat_*`), numeric counters only.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty", default)]
    pub status_delta: std::collections::BTreeMap<String, f64>,
    /// Conditions that may have falsified this result (e.g. a busy machine:
    /// a warning that starts with [`BUSY_WARNING`]).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub warnings: Vec<String>,
    /// CPU profiles of the measured interval (`--cpu-profile`), absent without one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu_profile: Option<Box<CpuProfile>>,
    /// A measured interval bounded by a number of events (sysbench's
    /// `--events`) as well as, or instead of, a time: the bound and which
    /// ended it. Absent for a test bounded by time alone.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub event_bound: Option<EventBound>,
    /// What the suite measured beyond this core, under the suite's name
    /// (`"ibench": {...}`): each suite reads and writes its own entry through
    /// [`TestResult::detail`] and [`TestResult::set_detail`].
    #[serde(flatten)]
    pub detail: serde_json::Map<String, serde_json::Value>,
    /// What the measured step of this test ended with, for the harness's
    /// status rule (`harness::status`) when the test ends; never stored.
    #[serde(skip)]
    pub step: Option<Box<StepFacts>>,
}

/// A test's event bound and what ended its measured interval.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct EventBound {
    /// The events the test's workers could complete, all together.
    pub events: u64,
    pub ended_by: EndedBy,
}

/// Which bound ended a measured interval that had an event bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndedBy {
    /// Every event of the bound completed.
    Events,
    /// The time ran out first.
    Time,
}

impl EventBound {
    /// `ended by its event limit (200 events)`, `ended by its time limit
    /// (10 s) after 153 of its 200 events`: what ended a test that measured
    /// `events` in `secs` (its planned time for [`EndedBy::Time`]).
    pub fn said(&self, events: u64, secs: f64) -> String {
        match self.ended_by {
            EndedBy::Events => format!(
                "ended by its event limit: {} events in {secs:.2} s",
                self.events
            ),
            EndedBy::Time => format!(
                "ended by its time limit ({secs:.1} s) after {events} of its {} events",
                self.events
            ),
        }
    }
}

/// How a measured step ended, beyond its counts: what the harness's status
/// rule needs to tell an honest interval from one cut short.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepFacts {
    /// The measured duration the step was given (`None`: it ran until its
    /// workers had done their budgets).
    pub planned_secs: Option<f64>,
    /// How far into the measured interval the workers' work reached: the
    /// last answer from the server, or the deadline a worker waited for.
    pub covered_secs: f64,
    /// The last error an event failed with in the measured interval, and in
    /// the warm-up.
    pub last_error: Option<String>,
    pub warm_error: Option<String>,
    /// How long the measured interval lasted, to the end of the latest
    /// event (past the deadline when one was stuck).
    pub lasted_secs: f64,
    /// The connections (workers, by index) whose last event ended past the
    /// deadline by more than the margin, and by how many seconds; the
    /// step's rates are over the interval without them.
    pub overran: Vec<(usize, f64)>,
}

/// A step that ran past its deadline because connections were still in a
/// statement (the harness's status rule, `harness::status`): stored with
/// the result, and its warning starts with [`OVERRAN_WARNING`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Overran {
    /// Seconds the step ran past its deadline.
    pub secs: f64,
    /// The connections still in a statement then (their index in
    /// `per_connection`).
    pub connections: Vec<usize>,
}

/// How a result's warning about a step that ran past its deadline starts.
pub const OVERRAN_WARNING: &str = "ran past its deadline";

impl TestResult {
    /// The suite's own figures stored under `key` (its name), if they read as `T`.
    pub fn detail<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.detail
            .get(key)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    }

    /// Stores the suite's own figures under `key` (its name).
    pub fn set_detail<T: Serialize>(&mut self, key: &str, v: &T) {
        if let Ok(v) = serde_json::to_value(v) {
            self.detail.insert(key.to_string(), v);
        }
    }

    /// A result that is about to run: identity filled, every figure zero, status `running`.
    pub fn running(
        suite: &str,
        test: String,
        group: &str,
        threads: usize,
        reported: bool,
        qps_unit: &str,
    ) -> Self {
        TestResult {
            suite: suite.into(),
            test,
            group: group.into(),
            threads,
            reported,
            status: Status::Running,
            reason: None,
            started: crate::util::now_rfc3339(),
            secs: 0.0,
            warmup_secs: 0.0,
            qps: 0.0,
            qps_unit: qps_unit.into(),
            tps: 0.0,
            statements_per_sec: 0.0,
            reads: 0,
            writes: 0,
            other: 0,
            events: 0,
            errors: 0,
            reconnects: 0,
            rows: 0,
            latency_us: Default::default(),
            histogram: None,
            ops: Default::default(),
            per_second: Vec::new(),
            per_connection: Vec::new(),
            overran: None,
            hw: None,
            part_hw: Vec::new(),
            status_delta: Default::default(),
            warnings: Vec::new(),
            cpu_profile: None,
            event_bound: None,
            detail: Default::default(),
            step: None,
        }
    }
}

/// How a test or a run ended (`running` while it runs, and in a file whose
/// writer died).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    #[default]
    Running,
    Ok,
    Failed,
    Interrupted,
    /// Left `running` by an rqps process that is gone (killed with SIGKILL,
    /// out of memory, a reset): never written, only read (see [`read_run`]).
    Killed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Interrupted => "interrupted",
            Status::Killed => "killed",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Host {
    pub hostname: String,
    pub os: String,
    pub arch: String,
    pub cpus: usize,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu_model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mem_total_kb: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub kernel: Option<String>,
    /// Filesystem, mount point and source of the database's data.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub data_fs: Option<String>,
    /// Block device whose IO the hardware figures count.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub data_device: Option<String>,
}

/// One second of a test, summed over threads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SecondSample {
    /// Seconds since the measured interval began (1 = the first second).
    pub t: u32,
    pub qps: f64,
    pub tps: f64,
    pub errors: u64,
}

/// Latency percentiles of events, in microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub avg: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl Latency {
    pub fn from_histogram(h: &hdrhistogram::Histogram<u64>) -> Self {
        if h.is_empty() {
            return Latency::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Latency {
            avg: h.mean() / 1000.0,
            p50: us(h.value_at_quantile(0.50)),
            p95: us(h.value_at_quantile(0.95)),
            p99: us(h.value_at_quantile(0.99)),
            max: us(h.max()),
        }
    }
}

/// One kind of operation in a test.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct OpStats {
    /// Operations of this kind that completed in the measured interval.
    pub count: u64,
    /// Completed operations per second of the test.
    pub per_sec: f64,
    /// Operations of this kind that failed (retried, or ending the test).
    pub errors: u64,
    /// Latency of the completed ones, microseconds.
    pub latency_us: Latency,
}

/// The hardware cost of one operation (spec §5): the one declaration of
/// these figures. The sampler fills it (`harness::sysstat::per_op`), a
/// stored result keeps it inside [`HwCost`], and reports show it and the
/// mean over a name's repeats. `None` where not measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PerOp {
    /// Machine CPU (user + system + irq + steal), microseconds per operation.
    pub cpu_us_per_op: Option<f64>,
    /// CPU of the server process tree (for embedded SQLite: the database work inside rqps).
    pub server_cpu_us_per_op: Option<f64>,
    /// CPU of rqps itself (for embedded SQLite this includes the engine).
    pub client_cpu_us_per_op: Option<f64>,
    /// Context switches per operation.
    pub cs_per_op: Option<f64>,
    /// Storage reads, KB read and KB written per operation, for the data directory's device.
    pub reads_per_op: Option<f64>,
    pub rkb_per_op: Option<f64>,
    pub wkb_per_op: Option<f64>,
    /// Storage writes per operation (the Insert Benchmark reports them per
    /// insert; not among the reported figures of [`PerOp::values`]).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub writes_per_op: Option<f64>,
}

impl PerOp {
    /// Column titles of the reported figures, in the order of [`PerOp::values`].
    pub const TITLES: [&'static str; 7] = [
        "cpu/o",
        "server cpu/o",
        "client cpu/o",
        "cs/o",
        "r/o",
        "rKB/o",
        "wKB/o",
    ];
    /// Their CSV column names (the field names), in the same order.
    pub const KEYS: [&'static str; 7] = [
        "cpu_us_per_op",
        "server_cpu_us_per_op",
        "client_cpu_us_per_op",
        "cs_per_op",
        "reads_per_op",
        "rkb_per_op",
        "wkb_per_op",
    ];

    /// The reported figures.
    pub fn values(&self) -> [Option<f64>; 7] {
        [
            self.cpu_us_per_op,
            self.server_cpu_us_per_op,
            self.client_cpu_us_per_op,
            self.cs_per_op,
            self.reads_per_op,
            self.rkb_per_op,
            self.wkb_per_op,
        ]
    }

    /// The reported figures from [`PerOp::values`]' order (no writes per op).
    pub fn from_values(v: [Option<f64>; 7]) -> Self {
        PerOp {
            cpu_us_per_op: v[0],
            server_cpu_us_per_op: v[1],
            client_cpu_us_per_op: v[2],
            cs_per_op: v[3],
            reads_per_op: v[4],
            rkb_per_op: v[5],
            wkb_per_op: v[6],
            writes_per_op: None,
        }
    }

    /// Whether no reported figure was measured.
    pub fn is_empty(&self) -> bool {
        self.values().iter().all(Option::is_none)
    }

    /// The reported figures of a stored result; `None` when none was measured.
    pub fn from_cost(h: &HwCost) -> Option<Self> {
        let fig = Self::from_values(h.per_op.values());
        (!fig.is_empty()).then_some(fig)
    }
}

/// A result's per-op figures read as its own (`hw.cpu_us_per_op`), as they
/// are stored.
impl std::ops::Deref for HwCost {
    type Target = PerOp;
    fn deref(&self) -> &PerOp {
        &self.per_op
    }
}

impl std::ops::DerefMut for HwCost {
    fn deref_mut(&mut self) -> &mut PerOp {
        &mut self.per_op
    }
}

/// What a test cost the machine, per operation (spec §5; reference §5.2). Every
/// figure is `None` where it could not be measured; `unavailable` says why.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HwCost {
    /// How many operations the figures are divided by.
    pub ops: f64,
    /// What one operation is: `statement`, `transaction`, `operation`,
    /// `row` (absent in results stored before rqps said: statements).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub per: Option<String>,
    /// The figures per operation, stored inline (`cpu_us_per_op`, ...).
    #[serde(flatten)]
    pub per_op: PerOp,
    /// Largest resident set of the server process tree during the test, MB.
    pub server_max_rss_mb: Option<f64>,
    /// Database size before and after the test: as the engine reports it, and bytes on disk.
    pub db_before: Option<DbSize>,
    pub db_after: Option<DbSize>,
    /// CPU used by other processes just before the test, percent of all CPUs.
    pub background_cpu_pct: Option<f64>,
    /// Block device the figures are for.
    pub device: Option<String>,
    pub unavailable: Vec<String>,
    /// One sample per second.
    pub per_second: Vec<HwSecond>,
    /// What limited the test: each side's use of its CPU budget, the host's
    /// CPU and the data device over the measured interval (absent in results
    /// stored before rqps measured it).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub limit: Option<Limit>,
}

/// What limited a test, from the figures of its measured interval: how much
/// of its CPU budget each side used, how busy the host's CPUs and the data
/// device were, and the limit named from them (`harness::limit` says how).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Limit {
    /// `client`, `server-cpu`, `host-cpu` or `disk`; absent: none reached
    /// its threshold.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub by: Option<String>,
    /// The share at or above which a budget counts as used up, percent.
    pub threshold_pct: f64,
    /// Cores rqps used on average (its CPU seconds / the interval); it
    /// includes an engine that runs inside rqps.
    pub client_cores: Option<f64>,
    /// The client's budget: the CPUs rqps may run on (`--client-cpus`, else
    /// the machine's).
    pub client_cpus: usize,
    /// Busy share of the client's CPUs (every process on them), 0..=100;
    /// absent when the client has the whole machine.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub client_cpus_busy_pct: Option<f64>,
    /// Cores the server's processes used on average; absent where they are
    /// not measurable (a remote server, an engine inside rqps).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub server_cores: Option<f64>,
    /// The server's budget: the CPUs its main process may run on.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub server_cpus: Option<usize>,
    /// Busy share of the server's CPUs, when it has fewer than the machine's.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub server_cpus_busy_pct: Option<f64>,
    /// The machine's CPUs and their busy share, 0..=100.
    pub host_cpus: usize,
    pub host_busy_pct: Option<f64>,
    /// Share of the interval the data device had I/O in flight (`io_ticks`), 0..=100.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub disk_util_pct: Option<f64>,
}

fn cpus_word(n: usize) -> &'static str {
    if n == 1 { "CPU" } else { "CPUs" }
}

impl Limit {
    /// Share of the client's budget in use, percent: the busy share of its
    /// own CPUs when it has fewer than the machine's (whoever used them,
    /// rqps could get no more), else its own cores over its CPUs.
    pub fn client_used_pct(&self) -> Option<f64> {
        self.client_cpus_busy_pct.or_else(|| {
            let c = self.client_cores?;
            (self.client_cpus > 0).then(|| 100.0 * c / self.client_cpus as f64)
        })
    }

    /// Share of the server's budget in use, percent (as [`Limit::client_used_pct`]).
    pub fn server_used_pct(&self) -> Option<f64> {
        self.server_cpus_busy_pct.or_else(|| {
            let c = self.server_cores?;
            let n = self.server_cpus.filter(|n| *n > 0)?;
            Some(100.0 * c / n as f64)
        })
    }

    /// What a test line, `show` and the hardware tables print: `client 99%
    /// of 4 CPUs`, `server-cpu 97% of 2 CPUs`, `host-cpu 95% of 16 CPUs`,
    /// `disk 93% busy`; `None` when no limit was named.
    pub fn label(&self) -> Option<String> {
        let by = self.by.as_deref()?;
        let pct = |v: Option<f64>| v.map(|v| format!("{:.0}%", v.min(100.0)));
        let text = match by {
            "client" => {
                let mut s = format!(
                    "client {} of {} {}",
                    pct(self.client_used_pct())?,
                    self.client_cpus,
                    cpus_word(self.client_cpus)
                );
                // Others shared the client's CPUs: say how much was rqps's own.
                if let (Some(busy), Some(c)) = (self.client_cpus_busy_pct, self.client_cores) {
                    let own = 100.0 * c / self.client_cpus.max(1) as f64;
                    if busy - own >= 10.0 {
                        s.push_str(&format!(" (rqps {own:.0}%)"));
                    }
                }
                s
            }
            "server-cpu" => {
                let n = self.server_cpus?;
                format!(
                    "server-cpu {} of {n} {}",
                    pct(self.server_used_pct())?,
                    cpus_word(n)
                )
            }
            "host-cpu" => format!(
                "host-cpu {} of {} {}",
                pct(self.host_busy_pct)?,
                self.host_cpus,
                cpus_word(self.host_cpus)
            ),
            "disk" => format!("disk {} busy", pct(self.disk_util_pct)?),
            other => other.to_string(),
        };
        Some(text)
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DbSize {
    pub engine_bytes: Option<u64>,
    pub disk_bytes: Option<u64>,
}

/// One second of hardware samples.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HwSecond {
    pub t: f64,
    /// Percent of all CPUs: user+system busy, iowait.
    pub cpu_busy_pct: Option<f64>,
    pub cpu_iowait_pct: Option<f64>,
    pub cs_per_sec: Option<f64>,
    pub reads_per_sec: Option<f64>,
    pub rkb_per_sec: Option<f64>,
    pub wkb_per_sec: Option<f64>,
    /// Percent of one core.
    pub server_cpu_pct: Option<f64>,
    pub client_cpu_pct: Option<f64>,
    pub server_rss_mb: Option<f64>,
}

/// The engine a run measured.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EngineInfo {
    pub name: String,
    pub version: String,
    /// The authentication method rqps's logins used
    /// (`caching_sha2_password`), where the engine says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<String>,
}

impl EngineInfo {
    /// Runs stored before MariaDB was an engine kind of its own named it
    /// `mysql`; its version string says what it is.
    fn upgrade(&mut self) {
        if self.name == "mysql" && self.version.contains("MariaDB") {
            self.name = "mariadb".into();
        }
    }
}

/// A server rqps started and stopped for a run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ServerInfo {
    pub kind: String,
    /// What the server binary says of its version.
    pub binary_version: String,
    /// Where the binaries came from.
    pub binaries: String,
    /// The config file given with --config and its lines.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub config_file: Option<String>,
    #[serde(default)]
    pub config: Vec<String>,
}

fn one() -> usize {
    1
}

/// A run: its context and, in the `--json` document, its tests.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunDoc {
    pub rqps_version: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub git_commit: Option<String>,
    pub run_id: String,
    /// The name reports use for this target.
    pub name: String,
    pub suite: String,
    /// Which repeat of the suite this run is (1-based); runs of one name are pooled by reports.
    #[serde(default = "one")]
    pub repeat: usize,
    pub status: Status,
    pub started: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub finished: Option<String>,
    /// The command line, credentials redacted.
    pub command_line: Vec<String>,
    /// The target, credentials redacted.
    pub target: String,
    pub engine: EngineInfo,
    /// A throwaway server rqps started for this run, if any.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub server: Option<ServerInfo>,
    /// Every server setting at the start of the run (`SHOW GLOBAL VARIABLES`, `pg_settings`).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty", default)]
    pub settings: std::collections::BTreeMap<String, String>,
    pub params: serde_json::Value,
    pub host: Host,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub load: Option<LoadStats>,
    /// This run is one client part of a load (`rqps run --part I/N`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub part: Option<PartInfo>,
    /// This run was merged from client parts (`rqps merge`): each part, its host
    /// included, in part order.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub merged_from: Vec<PartInfo>,
    #[serde(default)]
    pub tests: Vec<TestResult>,
    /// Whether the run measures anything: false for a run of commands
    /// alone (a sysbench script's `prepare` or `cleanup`), which a name's
    /// repeats neither count nor are compared with.
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub measures: bool,
    /// What the run did besides its measured tests, in order: a script's
    /// `prepare`, `cleanup` and its other commands, each as it ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandRun>,
    /// The rqps process writing the run (absent in runs stored before it was).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub owner: Option<Owner>,
}

fn yes() -> bool {
    true
}

fn is_yes(b: &bool) -> bool {
    *b
}

/// A command a run ran besides its measured tests (a sysbench script's
/// `prepare`, `cleanup`): how long it took, what it sent, how it ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommandRun {
    pub command: String,
    pub secs: f64,
    /// Statements it sent (reads, writes and others, as its suite counts them).
    pub statements: u64,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
}

/// The rqps process that writes a run: a run it left `running` reads as
/// [`Status::Killed`] once that process is gone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub pid: u32,
    /// When it started (clock ticks after boot), to tell it from a later
    /// process with the same pid.
    #[serde(default)]
    pub start: u64,
    pub host: String,
}

impl Owner {
    /// This process.
    pub fn this_process() -> Owner {
        let pid = std::process::id();
        Owner {
            pid,
            start: crate::util::process_start_time(pid).unwrap_or(0),
            host: crate::util::hostname(),
        }
    }

    /// Known to be gone: on this host, and no process with its pid and
    /// start time runs. A run from another host is never called killed.
    pub fn is_gone(&self) -> bool {
        self.host == crate::util::hostname()
            && crate::util::process_start_time(self.pid)
                .is_none_or(|s| self.start != 0 && s != self.start)
    }
}

/// One client part of a load: which share it ran and when it started.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartInfo {
    /// 1-based: part `index` of `count`.
    pub index: usize,
    pub count: usize,
    /// The agreed start (`--start-at`), RFC 3339 UTC.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub start_at: Option<String>,
    /// When the part began its first test, RFC 3339 UTC.
    pub started: String,
    /// Seconds after `start_at` that the part began (0 when on time or early).
    #[serde(default)]
    pub late_secs: f64,
    /// Began more than [`LATE_TOLERANCE_SECS`] after `start_at`.
    #[serde(default)]
    pub late: bool,
    /// Filled in merged runs: the part's run id and client host.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub host: Option<Host>,
}

/// A part that begins more than this many seconds after `--start-at` is flagged late.
pub const LATE_TOLERANCE_SECS: f64 = 1.0;

/// The CPU profiles of one test's measured interval (`--cpu-profile`,
/// src/harness/profile.rs): folded stacks sampled every `period_ns` of CPU
/// time, so a stack's µs per operation is `count × period_ns / 1000 / ops`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CpuProfile {
    /// CPU time between two samples, in nanoseconds.
    pub period_ns: u64,
    /// The operations the profile is divided by (the hardware cost's `ops`).
    pub ops: f64,
    /// What the engine profile covers: `server` (its process tree) or
    /// `rqps process` (an engine inside rqps).
    pub engine_is: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub engine: Option<ProfileSide>,
    /// rqps's own process, for a server engine.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub client: Option<ProfileSide>,
}

/// Folded stacks: `frame;frame;leaf count` lines, root first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Folded {
    pub text: String,
    pub samples: u64,
}

/// Folded `stack count` lines as (stack, count); malformed lines are skipped.
pub fn parse_folded(text: &str) -> Vec<(&str, u64)> {
    text.lines()
        .filter_map(|l| {
            let (stack, n) = l.trim_end().rsplit_once(' ')?;
            Some((stack, n.parse().ok()?))
        })
        .collect()
}

/// One profile: its sample count and its folded stacks (`a;b;c count`
/// lines), deflated and base64-encoded.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ProfileSide {
    pub samples: u64,
    pub folded: String,
}

impl ProfileSide {
    pub fn new(f: &Folded) -> Self {
        use base64::Engine as _;
        use std::io::Write as _;
        let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        let bytes = z
            .write_all(f.text.as_bytes())
            .and_then(|_| z.finish())
            .unwrap_or_default();
        ProfileSide {
            samples: f.samples,
            folded: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// The folded stacks; `None` when they do not decode.
    pub fn stacks(&self) -> Option<String> {
        use base64::Engine as _;
        use std::io::Read as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&self.folded)
            .ok()?;
        let mut text = String::new();
        flate2::read::DeflateDecoder::new(bytes.as_slice())
            .read_to_string(&mut text)
            .ok()?;
        Some(text)
    }
}

/// A latency histogram as stored in [`TestResult::histogram`].
pub fn encode_histogram(h: &hdrhistogram::Histogram<u64>) -> Option<String> {
    use base64::Engine as _;
    use hdrhistogram::serialization::Serializer as _;
    let mut bytes = Vec::new();
    hdrhistogram::serialization::V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .ok()?;
    Some(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// A histogram stored by [`encode_histogram`]; `None` when it does not decode.
pub fn decode_histogram(s: &str) -> Option<hdrhistogram::Histogram<u64>> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(s).ok()?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .ok()
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LoadStats {
    pub rows: u64,
    pub secs: f64,
    /// Seconds spent inserting rows, and creating the secondary indexes.
    pub insert_secs: f64,
    pub index_secs: f64,
    pub rows_per_sec: f64,
    /// Hardware cost per row loaded.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub hw: Option<HwCost>,
}

/// What can go wrong with the results directory, with the path it is about.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("results directory {} is not writable: {source}", dir.display())]
    NotWritable {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {what} {}: {source}", path.display())]
    Write {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("cannot encode {what}: {source}")]
    Encode {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
}

impl StoreError {
    /// Whether the user can fix it by pointing rqps elsewhere (exit 2).
    pub fn is_usage(&self) -> bool {
        !matches!(self, StoreError::Write { .. } | StoreError::Encode { .. })
    }
}

type Error = StoreError;

pub struct Store {
    dir: PathBuf,
    json: Option<PathBuf>,
    /// The `--json` path is not a regular file (a FIFO, /dev/stdout): it gets
    /// the document once, when the run ends, instead of after every test.
    json_once: bool,
    doc: RunDoc,
    seq: usize,
}

fn io_err(what: &'static str, path: &Path, source: std::io::Error) -> Error {
    StoreError::Write {
        what,
        path: path.to_path_buf(),
        source,
    }
}

fn encode<T: Serialize>(what: &'static str, v: &T) -> Result<Vec<u8>, Error> {
    serde_json::to_vec_pretty(v).map_err(|source| StoreError::Encode { what, source })
}

/// A results directory [`check_writable`] found writable: what
/// [`Store::create`] takes, so that a run checks its directory once.
#[derive(Clone, Debug)]
pub struct ResultsDir(PathBuf);

impl ResultsDir {
    pub fn path(&self) -> &Path {
        &self.0
    }
}

/// Checks that results can be written under `root` (creating it), before any work starts.
pub fn check_writable(root: &Path) -> Result<ResultsDir, Error> {
    let not_writable = |source| StoreError::NotWritable {
        dir: root.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(root).map_err(not_writable)?;
    let probe = root.join(".rqps-write-test");
    std::fs::write(&probe, b"ok").map_err(not_writable)?;
    let _ = std::fs::remove_file(probe);
    Ok(ResultsDir(root.to_path_buf()))
}

impl Store {
    /// Creates `<root>/<run-id>/` and writes `run.json`.
    pub fn create(
        root: &ResultsDir,
        mut doc: RunDoc,
        json: Option<PathBuf>,
    ) -> Result<Store, Error> {
        let root = root.path();
        // The directory is claimed by an exclusive create, so two rqps
        // processes started together (two `rqps matrix --resume`) never share
        // a run id: the one that loses tries the next suffix.
        let base = format!("{}-{}", crate::util::now_stamp(), file_safe(&doc.name));
        let mut n = 1;
        let (id, dir) = loop {
            let id = if n == 1 {
                base.clone()
            } else {
                format!("{base}-{n}")
            };
            let dir = root.join(&id);
            match std::fs::create_dir(&dir) {
                Ok(()) => break (id, dir),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100_000 => n += 1,
                Err(e) => return Err(io_err("results directory", &dir, e)),
            }
        };
        std::fs::create_dir(dir.join("tests")).map_err(|e| io_err("results directory", &dir, e))?;
        doc.run_id = id;
        doc.tests.clear();
        let json_once = json.as_deref().is_some_and(|j| {
            matches!(
                crate::util::output_path(j),
                Ok(crate::util::OutputPath::Stream)
            )
        });
        let store = Store {
            dir,
            json,
            json_once,
            doc,
            seq: 0,
        };
        store.write_run(false)?;
        Ok(store)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn doc(&self) -> &RunDoc {
        &self.doc
    }

    /// Writes `run.json`, and the `--json` document (see [`write_output`]):
    /// after every change, or only at the `last` one for a path that is not a
    /// regular file.
    fn write_run(&self, last: bool) -> Result<(), Error> {
        let mut head = self.doc.clone();
        head.tests.clear();
        let path = self.dir.join("run.json");
        let bytes = encode("run file", &head)?;
        {
            let mut live = in_progress();
            write_atomic(&path, &bytes).map_err(|e| io_err("run file", &path, e))?;
            let test = live.take().and_then(|l| l.test);
            *live = (head.status == Status::Running).then_some(InProgress {
                run: (path, head),
                test,
            });
        }
        if let Some(json) = &self.json
            && (last || !self.json_once)
        {
            let bytes = encode("JSON file", &self.doc)?;
            write_output(json, &bytes).map_err(|e| io_err("JSON file", json, e))?;
        }
        Ok(())
    }

    fn test_path(&self, seq: usize, r: &TestResult) -> PathBuf {
        self.dir.join("tests").join(format!(
            "{seq:03}-{}-t{}.json",
            file_safe(&r.test),
            r.threads
        ))
    }

    /// Marks `r` as running on disk; returns its slot for [`Store::finish_test`].
    pub fn begin_test(&mut self, r: &TestResult) -> Result<usize, Error> {
        self.seq += 1;
        let path = self.test_path(self.seq, r);
        let bytes = encode("result", r)?;
        let mut live = in_progress();
        write_atomic(&path, &bytes).map_err(|e| io_err("result", &path, e))?;
        if let Some(l) = live.as_mut() {
            l.test = Some((path, r.clone()));
        }
        Ok(self.seq)
    }

    /// Writes the finished result over its running marker, and the `--json` document.
    pub fn finish_test(&mut self, slot: usize, r: TestResult) -> Result<(), Error> {
        let path = self.test_path(slot, &r);
        let bytes = encode("result", &r)?;
        {
            let mut live = in_progress();
            write_atomic(&path, &bytes).map_err(|e| io_err("result", &path, e))?;
            if let Some(l) = live.as_mut() {
                l.test = None;
            }
        }
        self.doc.tests.push(r);
        if self.json.is_some() {
            self.write_run(false)
        } else {
            Ok(())
        }
    }

    pub fn set_load(&mut self, load: LoadStats) -> Result<(), Error> {
        self.doc.load = Some(load);
        self.write_run(false)
    }

    /// Records a command the run ran besides its tests.
    pub fn add_command(&mut self, c: CommandRun) -> Result<(), Error> {
        self.doc.commands.push(c);
        self.write_run(false)
    }

    /// Records how the run ended (`ok`, `failed`, `interrupted`).
    pub fn finish(&mut self, status: Status) -> Result<(), Error> {
        self.doc.status = status;
        self.doc.finished = Some(now_rfc3339());
        self.write_run(true)
    }
}

/// What the run in progress has on disk: its run file (path and head) and
/// the test marked `running`, for [`interrupt_in_progress`].
struct InProgress {
    run: (PathBuf, RunDoc),
    test: Option<(PathBuf, TestResult)>,
}

static IN_PROGRESS: std::sync::Mutex<Option<InProgress>> = std::sync::Mutex::new(None);

/// Held while a [`Store`] writes a file that [`interrupt_in_progress`] may
/// write too, so that a finished result is never overwritten by a marker.
fn in_progress() -> std::sync::MutexGuard<'static, Option<InProgress>> {
    IN_PROGRESS.lock().unwrap_or_else(|e| e.into_inner())
}

/// For a process about to exit in the middle of a run (a stop that did not
/// end in time): stores the test marked `running` and the run as
/// `interrupted`, with `reason`. Returns the lock, held until the process
/// exits, so that no writer of this run follows (`None`: a writer held it
/// for a second, and nothing was written).
pub fn interrupt_in_progress(reason: &str) -> Option<impl Drop> {
    let mut tries = 0;
    let mut live = loop {
        match IN_PROGRESS.try_lock() {
            Ok(g) => break g,
            Err(std::sync::TryLockError::Poisoned(e)) => break e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) if tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(std::sync::TryLockError::WouldBlock) => return None,
        }
    };
    if let Some(l) = live.as_mut() {
        if let Some((path, r)) = l.test.as_mut() {
            r.status = Status::Interrupted;
            r.reason = Some(reason.to_string());
            if let Ok(bytes) = encode("result", r) {
                let _ = write_atomic(path, &bytes);
            }
        }
        let (path, head) = &mut l.run;
        head.status = Status::Interrupted;
        head.finished = Some(now_rfc3339());
        if let Ok(bytes) = encode("run file", head) {
            let _ = write_atomic(path, &bytes);
        }
    }
    Some(live)
}

/// The largest file of a run directory that readers take (`run.json` or a
/// test file). rqps writes test files of a few MB at most (the largest part
/// is a CPU profile); a file over this was not written by rqps, and reading
/// it whole would cost its size in memory.
pub const MAX_RESULT_FILE_BYTES: u64 = 64 << 20;

/// Reads a file of a run directory: opened without following a symbolic
/// link and without blocking (a FIFO), and only when it is a regular file
/// of at most [`MAX_RESULT_FILE_BYTES`], of which no more is read.
pub fn read_result_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "is a symbolic link, not a file rqps wrote",
            ),
            _ => e,
        })?;
    let md = f.metadata()?;
    if !md.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not a regular file",
        ));
    }
    let too_large = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "larger than {} MiB, the limit for a results file",
                MAX_RESULT_FILE_BYTES >> 20
            ),
        )
    };
    if md.len() > MAX_RESULT_FILE_BYTES {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(md.len() as usize);
    f.take(MAX_RESULT_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_RESULT_FILE_BYTES {
        return Err(too_large());
    }
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// What a reader of many runs keeps of each one. The rest is dropped as
/// each run is read, so a reader's memory is what it keeps, not what is
/// stored: 2,000 runs of the `ci` profile (321 MB on disk) took 270 to 357
/// MB to report on, kept whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Everything (`show`, `merge`, `runs`).
    All,
    /// What `report` and `compare` read: no latency histograms (each test's
    /// percentiles are stored beside it), no per-second hardware samples,
    /// and not the hardware figures' notes on what could not be measured
    /// (a run's own table says those).
    Report,
    /// What `history` reads: each test's key, status and QPS, and the
    /// run's name, time and engine.
    History,
    /// The run's context alone (`run.json`): no test file is read (`rqps
    /// runs`, the names a finished run suggests comparing with).
    Context,
}

impl RunDoc {
    /// Drops what a reader that keeps `keep` does not read.
    pub fn keep(&mut self, keep: Keep) {
        if keep == Keep::All {
            return;
        }
        if let Some(hw) = self.load.as_mut().and_then(|l| l.hw.as_mut()) {
            hw.per_second = Vec::new();
        }
        if keep == Keep::Context {
            self.tests = Vec::new();
        }
        if matches!(keep, Keep::History | Keep::Context) {
            self.settings.clear();
            self.load = None;
            self.merged_from = Vec::new();
        }
        for t in &mut self.tests {
            t.histogram = None;
            for hw in
                t.hw.as_deref_mut()
                    .into_iter()
                    .chain(t.part_hw.iter_mut().flatten())
            {
                hw.per_second = Vec::new();
                hw.unavailable = Vec::new();
            }
            if keep == Keep::History {
                t.hw = None;
                t.part_hw = Vec::new();
                t.per_second = Vec::new();
                t.ops.clear();
                t.status_delta.clear();
                t.warnings = Vec::new();
                t.cpu_profile = None;
                t.detail.clear();
            }
            // Vectors read from JSON grow by doubling: give back the rest.
            t.per_second.shrink_to_fit();
            t.warnings.shrink_to_fit();
        }
        self.tests.shrink_to_fit();
    }
}

/// Reads a run directory back: its context and every test file, in order
/// (each through [`read_result_file`]; a `tests` that is a link is refused).
pub fn read_run(dir: &Path) -> Result<RunDoc, Error> {
    read_run_keeping(dir, Keep::All)
}

/// [`read_run`], keeping what `keep` says ([`RunDoc::keep`]); with
/// [`Keep::Context`] no test file is read.
pub fn read_run_keeping(dir: &Path, keep: Keep) -> Result<RunDoc, Error> {
    let read = |path: &Path| {
        read_result_file(path).map_err(|source| StoreError::Read {
            path: path.to_path_buf(),
            source,
        })
    };
    let parse = |path: &Path, source| StoreError::Parse {
        path: path.to_path_buf(),
        source,
    };
    let path = dir.join("run.json");
    let text = read(&path)?;
    let mut doc: RunDoc = serde_json::from_str(&text).map_err(|e| parse(&path, e))?;
    doc.engine.upgrade();
    let tests = dir.join("tests");
    let not_dir = |source| StoreError::Read {
        path: tests.clone(),
        source,
    };
    if !std::fs::symlink_metadata(&tests).map_err(not_dir)?.is_dir() {
        return Err(not_dir(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not a directory (a symbolic link is not followed)",
        )));
    }
    if keep == Keep::Context {
        mark_killed(&mut doc);
        doc.keep(keep);
        return Ok(doc);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&tests)
        .map_err(not_dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    doc.tests = files
        .iter()
        .map(|p| {
            let t = read(p)?;
            serde_json::from_str(&t).map_err(|e| parse(p, e))
        })
        .collect::<Result<_, Error>>()?;
    mark_killed(&mut doc);
    doc.keep(keep);
    Ok(doc)
}

/// The run documents (`run.json`, without their tests) of the runs under
/// `root` stored as `name`, oldest first: those whose directory rqps named
/// for it ([`Store::create`]: `<stamp>-<name>` or `<stamp>-<name>-<n>`), so
/// that a new run's check against its name's repeats reads only those. A
/// run that does not read is left out.
pub fn run_heads_named(root: &Path, name: &str) -> Vec<RunDoc> {
    let safe = file_safe(name);
    let ours = |dir: &str| {
        // `20261127-102239-` is 16 characters.
        let Some(rest) = dir.get(16..) else {
            return false;
        };
        rest == safe
            || rest.strip_prefix(&safe).is_some_and(|n| {
                n.strip_prefix('-')
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
    };
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut docs: Vec<RunDoc> = entries
        .flatten()
        .filter(|e| ours(&e.file_name().to_string_lossy()))
        .filter_map(|e| {
            let text = read_result_file(&e.path().join("run.json")).ok()?;
            serde_json::from_str::<RunDoc>(&text).ok()
        })
        .filter(|d| d.name == name)
        .collect();
    docs.sort_by(|a, b| (&a.started, &a.run_id).cmp(&(&b.started, &b.run_id)));
    docs
}

/// A run still `running` whose process is gone was killed, and so was its
/// running test: say so, with the pid and host, instead of `running`.
fn mark_killed(doc: &mut RunDoc) {
    let Some(owner) = &doc.owner else {
        return;
    };
    if doc.status != Status::Running || !owner.is_gone() {
        return;
    }
    doc.status = Status::Killed;
    let reason = format!(
        "rqps (pid {} on {}) ended without finishing this test: it was killed",
        owner.pid, owner.host
    );
    for t in doc.tests.iter_mut().filter(|t| t.status == Status::Running) {
        t.status = Status::Killed;
        t.reason = Some(reason.clone());
    }
}
