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
pub use procfs::{CpuTimes, DiskCounters, ProcError, parse_per_cpu};
pub use sampler::{
    IntervalRates, PerOp, ProcTreeUsage, ProcUsage, SampleSeries, Sampler, SamplerConfig, Snapshot,
    Totals, background_cpu_pct, descendants, per_op, scan_processes, tree_pss_bytes, tree_usage,
};
