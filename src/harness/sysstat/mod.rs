//! System statistics sampled from Linux `/proc` while a benchmark test runs,
//! to explain the cost of each operation: machine CPU (ticks and shares),
//! context switches, I/O of the device holding the data directory, CPU and
//! RSS of the server's process tree, and the benchmark client's own CPU.
//!
//! * [`procfs`]: pure parsers of the /proc files (tested on fixtures).
//! * [`Sampler`]: a background thread taking a [`Snapshot`] per interval;
//!   [`SampleSeries::totals`], [`SampleSeries::per_interval`] and
//!   [`per_op`] turn them into figures. Anything that cannot be measured is
//!   `None`, with the reason in [`SampleSeries::unavailable`]; on a system
//!   without /proc every figure is `None` (own CPU then comes from
//!   getrusage on Unix).
//! * [`device_for_path`], [`dir_size_on_disk`], [`host_facts`],
//!   [`pid_listening_on`], [`background_cpu_pct`]: one-off look-ups.

/// A `/proc` or `/sys` file that could not be read or did not parse as the
/// kernel documents it; the figures that needed it are left unmeasured with
/// this as the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProcError(pub String);

impl From<String> for ProcError {
    fn from(s: String) -> Self {
        ProcError(s)
    }
}

/// The reason, as text (what the results store under `unavailable`).
impl std::ops::Deref for ProcError {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for ProcError {
    fn from(s: &str) -> Self {
        ProcError(s.to_string())
    }
}

mod device;
mod host;
pub mod procfs;
mod sampler;

pub use device::{
    DeviceInfo, canonicalize_existing_prefix, device_for_path, dir_size_on_disk, parent_disk,
    resolve_device,
};
pub use host::{
    HostFacts, clock_ticks_per_sec, host_facts, online_cpus, page_size, pid_listening_on,
};
pub use procfs::{CpuTimes, DiskCounters, parse_per_cpu};
pub use sampler::{
    IntervalRates, PerOp, ProcTreeUsage, ProcUsage, SampleSeries, Sampler, SamplerConfig, Snapshot,
    Totals, background_cpu_pct, descendants, per_op, scan_processes, tree_usage,
};
