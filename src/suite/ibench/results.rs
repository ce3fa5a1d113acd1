//! What an Insert Benchmark step stores beyond the result core, under
//! `"ibench"` in each test file (reference §4.8–§4.10).

use serde::{Deserialize, Serialize};

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

/// The Insert Benchmark figures stored with a test, if it has them.
pub fn step_of(t: &crate::results::TestResult) -> Option<IbenchStep> {
    t.detail(<super::Ibench as crate::suite::api::Workload>::NAME)
}
