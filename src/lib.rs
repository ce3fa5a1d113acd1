//! rqps: a database benchmark and regression finder.
//!
//! `cli → compat, serve → selfbench, plan → suite → report → harness → error →
//! engine → results → evloop → util`, every arrow pointing down (docs/architecture.md
//! lists each module's imports; tests/architecture.rs holds them to it): the
//! CLI (and matrix plans) pick a suite from `suite::registry()` with its
//! typed options; the suite sends each of its tests through the harness
//! (probe, measurement, store); the suite's events reach an engine through
//! its SQL or key-value face. `results` holds what was measured and `report`
//! compares it, with each suite's own section. `evloop` is the client core:
//! many connections' blocking code on one thread, one wait for all of them.

pub mod cli;
pub mod cmdline;
pub mod compat;
pub mod engine;
pub mod error;
pub mod evloop;
pub mod harness;
pub mod plan;
pub mod report;
pub mod results;
pub mod selfbench;
pub mod serve;
pub mod suite;
pub mod util;
