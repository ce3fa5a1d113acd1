//! What SQL runs, in what order. Workloads ask drivers for capabilities and
//! dialect pieces, never for an engine's name.

pub mod ibench;
pub mod rand;
pub mod sysbench;
