//! Workloads, one folder each.

pub mod ibench;
pub mod rand;
pub mod sysbench;
