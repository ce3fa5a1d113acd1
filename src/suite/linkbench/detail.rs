//! What a LinkBench step stores beside the generic figures (under [`KEY`]):
//! written by the run (`mod.rs`), read by the report section (`report.rs`).

use serde::{Deserialize, Serialize};

use super::check;
use super::request::ReqStats;

/// The key of the suite's detail in every result.
pub const KEY: &str = "linkbench";

/// Figures of one operation in a request step.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct OpFigures {
    pub op: String,
    pub count: u64,
    pub ops_per_sec: f64,
    pub errors: u64,
    pub mean_us: f64,
    pub p25_us: f64,
    pub p50_us: f64,
    pub p75_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// What a LinkBench step stores beyond the core result (`"linkbench": {...}`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Detail {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub load: Option<LoadFigures>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub request: Option<RequestFigures>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub check: Option<check::CheckOut>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LoadFigures {
    pub nodes: u64,
    pub links: u64,
    pub counts: u64,
    pub nodes_per_sec: f64,
    pub links_per_sec: f64,
    pub node_secs: f64,
    pub link_secs: f64,
    /// Links per node the load made.
    pub mean_out_degree: f64,
    /// The out-degree distribution's own mean.
    pub distribution_mean: f64,
    /// Links the mapping (`params.outdegree`) gives these nodes: what a
    /// load that ran to its end made.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub expected_links: Option<u64>,
    pub retries: u64,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub index_secs: Option<f64>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RequestFigures {
    pub requesters: usize,
    pub ops_per_sec: f64,
    pub ops: Vec<OpFigures>,
    pub stats: ReqStats,
    /// Requesters that gave up after too many failed requests.
    pub gave_up: usize,
}
