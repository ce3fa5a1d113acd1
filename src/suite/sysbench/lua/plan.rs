//! A checked script run, as stored with the results.

use serde::{Deserialize, Serialize};

use super::options::OptValue;
use super::sql;
use crate::engine::PsMode;
use crate::suite::sysbench::rng::{SbDist, SbRandParams, SbRandType};

/// Where sysbench keeps its bundled scripts (`require("oltp_common")`).
pub const SYSBENCH_DIR: &str = "/usr/share/sysbench";
/// The sysbench version whose Lua API rqps follows.
pub const VERSION: &str = "1.0.20";

/// A checked script run, as stored with the results.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ScriptPlan {
    pub path: String,
    /// The script's text, read once when planned.
    #[serde(skip)]
    pub text: String,
    /// Its command line after `--`, as given.
    pub args: Vec<String>,
    pub commands: Vec<String>,
    /// `sysbench.opt`: sysbench's own options rqps takes, then the script's.
    pub options: Vec<(String, OptValue)>,
    /// Whether the script declares its options (else they are also globals).
    pub declares: bool,
    pub threads: Vec<usize>,
    /// Seconds each `run` step is measured (0: no time limit, `--events`
    /// alone bounds it).
    pub secs: f64,
    /// `--events`: each `run` step ends at this many events, all threads
    /// together, or at `secs`, whichever comes first (`None`: `secs` alone).
    #[serde(default)]
    pub events: Option<u64>,
    pub warmup_secs: f64,
    /// `--rand-type`: a script's default is sysbench's `special`.
    pub rand_type: SbRandType,
    /// `--rand-spec-*`, `--rand-pareto-h`, `--rand-zipfian-exp` (absent
    /// from plans stored before them: sysbench's defaults).
    #[serde(default)]
    pub rand: SbRandParams,
    /// `--rand-seed`: worker thread i draws sysbench's i-th stream of it.
    #[serde(default)]
    pub rand_seed: u32,
    pub seed: u64,
    /// `--percentile`: 0 turns off sysbench's histogram, and its draw after
    /// each event.
    #[serde(default = "sysbench_percentile")]
    pub percentile: u32,
    pub ps_mode: PsMode,
}

/// sysbench's default `--percentile`.
fn sysbench_percentile() -> u32 {
    95
}

impl ScriptPlan {
    /// `sysbench.opt` for a step of `threads` threads.
    pub fn opt_for(&self, threads: usize) -> Vec<(String, OptValue)> {
        let mut o = self.options.clone();
        for (n, v) in &mut o {
            if n == "threads" {
                *v = OptValue::Num(threads as f64);
            }
        }
        o
    }

    /// The distribution of `sysbench.rand.default` with its parameters.
    pub fn dist(&self) -> SbDist {
        SbDist::new(self.rand_type, self.rand)
            .unwrap_or_else(|_| SbDist::sysbench_default().with_kind(self.rand_type))
    }

    /// Most threads any step runs.
    pub fn max_threads(&self) -> usize {
        self.threads.iter().copied().max().unwrap_or(1)
    }

    pub fn ignore(&self) -> sql::Ignore {
        let list = self
            .options
            .iter()
            .find(|(n, _)| n == "mysql_ignore_errors")
            .map(|(_, v)| v.text())
            .unwrap_or_else(|| sql::DEFAULT_IGNORE.into());
        sql::Ignore::parse(&list)
    }
}
