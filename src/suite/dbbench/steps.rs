//! The standard sequence's steps, and what each stores beside the generic
//! figures ([`StepFigures`], under [`KEY`]): shared by the run (`mod.rs`) and
//! the report section (`report.rs`).

use serde::{Deserialize, Serialize};

use crate::engine::kv::{LsmCounters, LsmShape};

/// The key of [`StepFigures`] in a result's `detail`.
pub const KEY: &str = "dbbench";

/// What one step does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    FillSeq,
    ReadRandom,
    FwdRange,
    RevRange,
    MultiRead,
    Overwrite,
}

/// One benchmark of the sequence, as db_bench names them (`--benchmarks`).
#[derive(Clone, Copy, Debug)]
pub enum Benchmark {
    /// A measured step: its op, whether it runs for the key budget
    /// (`Some(fraction of keys)`) rather than `secs`, a rate-limited writer
    /// beside it, and a wait for compaction after it.
    Measured {
        name: &'static str,
        op: Op,
        budget: Option<f64>,
        writer: bool,
        wait_after: bool,
    },
    /// Waits for the background work to finish.
    Drain,
    /// Flush, compact level 0 down, wait.
    Shape,
}

const fn measured(name: &'static str, op: Op) -> Benchmark {
    Benchmark::Measured {
        name,
        op,
        budget: None,
        writer: false,
        wait_after: false,
    }
}

const fn while_writing(name: &'static str, op: Op) -> Benchmark {
    Benchmark::Measured {
        name,
        op,
        budget: None,
        writer: true,
        wait_after: false,
    }
}

/// The standard sequence.
pub const SEQUENCE: &[Benchmark] = &[
    Benchmark::Measured {
        name: "fillseq",
        op: Op::FillSeq,
        budget: Some(1.0),
        writer: false,
        wait_after: false,
    },
    Benchmark::Drain,
    measured("readrandom", Op::ReadRandom),
    measured("fwdrange", Op::FwdRange),
    measured("revrange", Op::RevRange),
    measured("multireadrandom", Op::MultiRead),
    Benchmark::Measured {
        name: "overwritesome",
        op: Op::Overwrite,
        budget: Some(0.1),
        writer: false,
        wait_after: false,
    },
    Benchmark::Shape,
    while_writing("readwhilewriting", Op::ReadRandom),
    while_writing("fwdrangewhilewriting", Op::FwdRange),
    while_writing("revrangewhilewriting", Op::RevRange),
    Benchmark::Measured {
        name: "overwriteandwait",
        op: Op::Overwrite,
        budget: None,
        writer: false,
        wait_after: true,
    },
];

impl Benchmark {
    pub fn name(&self) -> &'static str {
        match self {
            Benchmark::Measured { name, .. } => name,
            Benchmark::Drain => "waitforcompaction",
            Benchmark::Shape => "flush_mt_l0",
        }
    }
}

/// The test names of the sequence, in order (the report's row order).
pub fn test_names() -> Vec<&'static str> {
    SEQUENCE.iter().map(Benchmark::name).collect()
}

/// What a step stores beside the generic figures (`detail.dbbench`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct StepFigures {
    /// The tree before the step.
    pub lsm_before: Option<LsmShape>,
    /// The tree after it (the shape step's proof).
    pub lsm_after: Option<LsmShape>,
    /// The engine's background work during the step (and its wait).
    pub work: Option<LsmCounters>,
    /// Compaction bytes written per byte flushed.
    pub w_amp: Option<f64>,
    /// Percent of the step's time writers were stalled.
    pub stall_pct: Option<f64>,
    /// Seconds from the step's start to its end (waits included).
    pub uptime_secs: f64,
    /// Operations: gets, seeks, keys of a batch, puts.
    pub ops: u64,
    pub ops_per_sec: f64,
    pub mb_per_sec: f64,
    pub micros_per_op: f64,
    pub p99_9_us: f64,
    pub p99_99_us: f64,
    /// CPU seconds of this process (engine and workers) during the step.
    pub user_cpu_secs: f64,
    pub sys_cpu_secs: f64,
    pub user_cpu_us_per_op: Option<f64>,
    pub sys_cpu_us_per_op: Option<f64>,
    /// Resident memory of this process at the step's end.
    pub rss_bytes: Option<u64>,
    /// The database's size on disk at the step's end.
    pub db_bytes: Option<u64>,
    /// Puts of the rate-limited writer, per second.
    pub writer_ops_per_sec: Option<f64>,
    /// Engine settings this step ran with on top of the run's `options`
    /// (fillseq: db_bench's vector memtable), in the engine's options form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_options: Option<String>,
}
