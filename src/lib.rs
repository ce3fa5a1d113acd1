//! rqps: a database benchmark and regression finder.
//!
//! `cli → plan → suite/runner → workload → driver`, with measurement around
//! the driver calls and `store → report` on the other side.

pub mod bench;
pub mod cli;
pub mod driver;
pub mod engines;
pub mod host;
pub mod hwcost;
pub mod ibench;
pub mod matrix;
pub mod measure;
pub mod plan;
pub mod report;
pub mod runner;
pub mod server;
pub mod store;
pub mod suite;
pub mod sysstat;
pub mod target;
pub mod util;
pub mod workload;
