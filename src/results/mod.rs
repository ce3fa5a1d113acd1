//! The results directory: every finished test is written at once, atomically,
//! so a crash or Ctrl-C of rqps loses nothing that finished.
//!
//! Layout: `<results>/<run-id>/run.json` (the run's context) and
//! `<results>/<run-id>/tests/<NNN>-<test>-t<threads>.json` (one per test).
//! A test file is written with status `running` when the test starts and
//! replaced when it ends, so a test cut short by a crash is visible as such.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::harness::measure::{Latency, SecondSample};
use crate::suite::sysbench::load::LoadStats;
use crate::util::{file_safe, now_rfc3339, write_atomic};

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
    pub status: String,
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
    pub per_second: Vec<SecondSample>,
    /// Hardware cost per operation, from the /proc sampler (absent where not measured).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub hw: Option<HwCost>,
    /// Change of the engine's status counters over the test (`SHOW GLOBAL STATUS`,
    /// `pg_stat_*`), numeric counters only.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty", default)]
    pub status_delta: std::collections::BTreeMap<String, f64>,
    /// Conditions that may have falsified this result (e.g. a busy machine).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub warnings: Vec<String>,
    /// What an Insert Benchmark step measured beyond the common fields.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ibench: Option<IbenchStep>,
}

/// One Insert Benchmark step (reference §4.8, §4.9, §4.10). Rates are rows
/// (inserts, deletes) or statements (queries) per wall second of the whole
/// step, summed over clients.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct IbenchStep {
    pub clients: usize,
    /// Rows per INSERT (and per DELETE).
    pub rows_per_statement: usize,
    pub inserted_rows: u64,
    pub deleted_rows: u64,
    pub queries: u64,
    pub insert_statements: u64,
    pub delete_statements: u64,
    pub inserts_per_sec: f64,
    pub deletes_per_sec: f64,
    pub queries_per_sec: f64,
    /// l.x: rows indexed (every row of the tables) per second of the step.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub indexed_rows_per_sec: Option<f64>,
    /// qr/qp: the insert rate asked for, rows/s summed over clients.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub target_ips: Option<f64>,
    /// qr/qp: the average insert rate was below 95 % of `target_ips` (reference §4.10).
    #[serde(default)]
    pub sla_missed: bool,
    /// Rows fetched per query on average (10 expected).
    pub rows_per_query: f64,
    /// Statements run again after a retryable error, per kind.
    pub retries: IbenchRetries,
    /// Response times per kind (absent for a kind the step did not run).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub insert_rt: Option<RtSummary>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub delete_rt: Option<RtSummary>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub query_rt: Option<RtSummary>,
    /// The per-second rates at the 50th..99th percentile: sorted from high to
    /// low, the value p % from the top, so the 99th is a low rate that 99 % of
    /// seconds beat (reference §4.9).
    pub rate_percentiles: Vec<RateAt>,
    /// The same for each client's own per-second rates, as the reference's
    /// np.sh lists them (only with more than one client).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub client_rate_percentiles: Vec<Vec<RateAt>>,
    /// Rows in all the step's tables before and after (checked where cheap).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rows_before: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rows_after: Option<u64>,
    /// l.x: seconds spent creating the secondary indexes.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub index_secs: Option<f64>,
    /// l.i2: seconds of the settle step that followed (not part of the rates).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub settle_secs: Option<f64>,
    /// KB written to storage per inserted row (reference §5.3 `wkbpi`), for every step.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub wkb_per_insert: Option<f64>,
    /// Storage writes per inserted row (reference §5.3 `wpi`), for every step.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub writes_per_insert: Option<f64>,
    /// One sample per second of the step.
    pub per_second: Vec<IbenchSecond>,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct IbenchRetries {
    pub insert: u64,
    pub delete: u64,
    pub query: u64,
    /// Connections re-established after they were lost.
    pub reconnects: u64,
}

/// Upper bounds in microseconds of the response-time buckets of reference
/// §4.8 (the last bucket, beyond 16 s, has none).
pub const RT_BUCKETS_US: [u64; 9] = [
    256, 1_000, 4_000, 16_000, 64_000, 256_000, 1_000_000, 4_000_000, 16_000_000,
];

/// Response times of one statement kind, in microseconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RtSummary {
    pub count: u64,
    pub avg: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
    /// Counts per bucket of [`RT_BUCKETS_US`], then beyond the last bound.
    pub buckets: Vec<u64>,
}

/// The per-second rates at one percentile (reference §4.9).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RateAt {
    pub pct: u32,
    pub ips: f64,
    pub dps: f64,
    pub qps: f64,
}

/// One second of an Insert Benchmark step (reference §4.8, per interval).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct IbenchSecond {
    /// Seconds since the step began, at the end of this sample.
    pub t: f64,
    /// Length of the sample (1 except for the last, partial one).
    pub secs: f64,
    pub ips: f64,
    pub dps: f64,
    pub qps: f64,
    /// Longest statement of each kind that ended in this sample, microseconds.
    pub max_insert_us: f64,
    pub max_delete_us: f64,
    pub max_query_us: f64,
}

impl TestResult {
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
            status: "running".into(),
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
            per_second: Vec::new(),
            hw: None,
            status_delta: Default::default(),
            warnings: Vec::new(),
            ibench: None,
        }
    }
}

/// What a test cost the machine, per operation (spec §5; reference §5.2). Every
/// figure is `None` where it could not be measured; `unavailable` says why.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HwCost {
    /// What the figures are divided by: statements (rows for the load step).
    pub ops: f64,
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
    /// Storage writes per operation (the Insert Benchmark reports them per insert).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub writes_per_op: Option<f64>,
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
    pub status: String,
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
    pub host: crate::harness::host::Host,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub load: Option<LoadStats>,
    #[serde(default)]
    pub tests: Vec<TestResult>,
}

pub struct Store {
    dir: PathBuf,
    json: Option<PathBuf>,
    doc: RunDoc,
    seq: usize,
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> String {
    format!("cannot write {what} {}: {e}", path.display())
}

/// Checks that results can be written under `root` (creating it), before any work starts.
pub fn check_writable(root: &Path) -> Result<(), String> {
    std::fs::create_dir_all(root)
        .map_err(|e| format!("results directory {} is not writable: {e}", root.display()))?;
    let probe = root.join(".rqps-write-test");
    std::fs::write(&probe, b"ok")
        .map_err(|e| format!("results directory {} is not writable: {e}", root.display()))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

impl Store {
    /// Creates `<root>/<run-id>/` and writes `run.json`.
    pub fn create(root: &Path, mut doc: RunDoc, json: Option<PathBuf>) -> Result<Store, String> {
        check_writable(root)?;
        let mut id = format!("{}-{}", crate::util::now_stamp(), file_safe(&doc.name));
        let mut dir = root.join(&id);
        let mut n = 1;
        while dir.exists() {
            n += 1;
            id = format!("{}-{}-{n}", crate::util::now_stamp(), file_safe(&doc.name));
            dir = root.join(&id);
        }
        std::fs::create_dir_all(dir.join("tests"))
            .map_err(|e| io_err("results directory", &dir, e))?;
        doc.run_id = id;
        doc.tests.clear();
        let store = Store {
            dir,
            json,
            doc,
            seq: 0,
        };
        store.write_run()?;
        Ok(store)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn doc(&self) -> &RunDoc {
        &self.doc
    }

    fn write_run(&self) -> Result<(), String> {
        let mut head = self.doc.clone();
        head.tests.clear();
        let path = self.dir.join("run.json");
        let bytes = serde_json::to_vec_pretty(&head).map_err(|e| e.to_string())?;
        write_atomic(&path, &bytes).map_err(|e| io_err("run file", &path, e))?;
        if let Some(json) = &self.json {
            let bytes = serde_json::to_vec_pretty(&self.doc).map_err(|e| e.to_string())?;
            write_atomic(json, &bytes).map_err(|e| io_err("JSON file", json, e))?;
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
    pub fn begin_test(&mut self, r: &TestResult) -> Result<usize, String> {
        self.seq += 1;
        let path = self.test_path(self.seq, r);
        let bytes = serde_json::to_vec_pretty(r).map_err(|e| e.to_string())?;
        write_atomic(&path, &bytes).map_err(|e| io_err("result", &path, e))?;
        Ok(self.seq)
    }

    /// Writes the finished result over its running marker, and the `--json` document.
    pub fn finish_test(&mut self, slot: usize, r: TestResult) -> Result<(), String> {
        let path = self.test_path(slot, &r);
        let bytes = serde_json::to_vec_pretty(&r).map_err(|e| e.to_string())?;
        write_atomic(&path, &bytes).map_err(|e| io_err("result", &path, e))?;
        self.doc.tests.push(r);
        if self.json.is_some() {
            self.write_run()
        } else {
            Ok(())
        }
    }

    pub fn set_load(&mut self, load: LoadStats) -> Result<(), String> {
        self.doc.load = Some(load);
        self.write_run()
    }

    /// Records how the run ended (`ok`, `failed`, `interrupted`).
    pub fn finish(&mut self, status: &str) -> Result<(), String> {
        self.doc.status = status.to_string();
        self.doc.finished = Some(now_rfc3339());
        self.write_run()
    }
}

/// Reads a run directory back: its context and every test file, in order.
pub fn read_run(dir: &Path) -> Result<RunDoc, String> {
    let path = dir.join("run.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut doc: RunDoc =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("tests"))
        .map_err(|e| format!("cannot read {}: {e}", dir.join("tests").display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    doc.tests = files
        .iter()
        .map(|p| {
            let t = std::fs::read_to_string(p)
                .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            serde_json::from_str(&t).map_err(|e| format!("{}: {e}", p.display()))
        })
        .collect::<Result<_, String>>()?;
    Ok(doc)
}
