//! rqps: a database benchmark and regression finder.
//!
//! `cli → plan → suite/runner → workload → driver`, with measurement around
//! the driver calls and `store → report` on the other side.

pub mod cli;
pub mod engine;
pub mod error;
pub mod harness;
pub mod plan;
pub mod report;
pub mod results;
pub mod suite;
pub mod util;
