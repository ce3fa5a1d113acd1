//! What a suite gives `rqps compat`: its tests as its own workers run them
//! (one connection, a fixed seed, a few events each), on tables its own load
//! fills, and the conditions it checks after a concurrent run. The compat
//! command sends these through a recording connection to a reference engine
//! and to each target and compares what came back; it never sees a
//! statement's text until a worker sends it, so what it checks is the code
//! that runs, not a copy of its SQL.
//!
//! A suite opts in with [`Workload::compat`](super::api::Workload::compat);
//! the types here name no suite and no engine.

use std::sync::Arc;

use crate::engine::{DbResult, Driver};
use crate::harness::runner::Worker;

/// Makes what a closure needs on an engine's driver.
pub type OnDriver<T> = Box<dyn Fn(&Arc<dyn Driver>) -> DbResult<T> + Send + Sync>;

/// A suite's part of a compatibility check.
pub struct CompatPlan {
    /// What the load fills, in words (`2 sbtest tables of 2,000 rows`).
    pub load_what: String,
    /// Creates and fills the suite's tables from the plan's seed: the same
    /// rows on every engine.
    pub load: OnDriver<()>,
    /// The tables the load fills, checksummed after each test that writes.
    pub tables: Vec<CompatTable>,
    /// The tests, in the order they run on every engine.
    pub tests: Vec<CompatTest>,
    /// Several workers at once, then the suite's own invariants.
    pub concurrent: Option<CompatConcurrent>,
}

/// A table to checksum, and the columns that count.
#[derive(Clone, Debug)]
pub struct CompatTable {
    pub name: String,
    /// The columns whose values are compared, in order; columns a clock
    /// fills (time stamps) are left out, as they differ between any two
    /// runs.
    pub columns: Vec<String>,
}

/// One test as the suite runs it.
pub struct CompatTest {
    /// The name its results are stored under (`point-query`).
    pub name: String,
    /// Other stored test names the same statements make (`point-query.pre`,
    /// TPC-C's `tpmC` for each transaction): a report marks them alike.
    pub also: Vec<String>,
    /// The tables its events may change: checksummed after it.
    pub writes: Vec<String>,
    /// Events to run.
    pub events: u64,
    /// The suite's own worker for the test, from the plan's seed, on one
    /// connection of the driver it is given.
    pub worker: OnDriver<Box<dyn Worker>>,
    /// Where the worker drives several connections at once, what runs at
    /// once, in words: each difference of the test says it, as one
    /// statement alone may not show the difference by hand.
    pub at_once: Option<String>,
}

/// A concurrent run and the invariants that must hold after it.
pub struct CompatConcurrent {
    /// What runs, in words (`2 terminals, 20 transactions each`).
    pub what: String,
    /// The workers, each on a thread of its own.
    pub workers: OnDriver<Vec<Box<dyn Worker>>>,
    /// Events each worker runs.
    pub events: u64,
    /// The suite's conditions, read after the run.
    pub check: OnDriver<Vec<Condition>>,
}

/// One invariant a suite checks, and whether it held.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    pub name: String,
    pub holds: bool,
    /// What was found where it does not hold.
    pub detail: Option<String>,
}
