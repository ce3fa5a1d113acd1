//! What a TPC-C run stores beside the generic figures ([`Detail`], under
//! [`KEY`]): written by the run (`mod.rs`), read by the report section
//! (`report.rs`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The suite's name, and the key of its [`Detail`] in a result.
pub const KEY: &str = "tpcc";

/// A transaction kind's figures in a run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct KindDetail {
    pub count: u64,
    pub per_sec: f64,
    /// Share of all completed transactions, in percent.
    pub share_pct: f64,
    pub retries: u64,
    pub errors: u64,
    pub rollbacks: u64,
    /// Response time in milliseconds (retries included, keying and think
    /// time excluded).
    pub latency_ms: BTreeMap<String, f64>,
}

/// The suite's figures of a run (`detail.tpcc` of the `tpmC` result).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Detail {
    pub tpmc: f64,
    pub tpm_total: f64,
    /// tpmC / (12.86 × warehouses), in percent: the share of the most a
    /// warehouse can do with keying and think times.
    pub efficiency_pct: f64,
    pub warehouses: u32,
    pub terminals: usize,
    /// The isolation level in effect, as the engine names it.
    pub isolation: String,
    pub keying: bool,
    pub kinds: BTreeMap<String, KindDetail>,
    /// Hardware cost per New-Order (the per-transaction figures are the
    /// result's `hw`).
    pub hw_per_new_order: BTreeMap<String, f64>,
}
