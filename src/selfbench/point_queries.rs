//! The harness's side of `rqps bench harness`: the sysbench suite's
//! point-query worker, which `selfbench/mod.rs` pits against the bare loop
//! of `selfbench/bare_sqlite.rs`.

use std::sync::Arc;
use std::time::Duration;

use super::measure::{BenchError, NoResult};
use crate::engine::{Driver, PsMode};
use crate::harness::runner::{StepConfig, run_step};
use crate::suite::sysbench::catalog::lookup;
use crate::suite::sysbench::event::{EventParams, SbWorker, main_statement};
use crate::suite::sysbench::load::{LoadParams, load};
use crate::suite::sysbench::params::rand_seed_from;
use crate::suite::sysbench::rng::{SbDist, SbRandParams, SbRandType};

/// The harness's side of `rqps bench harness`: sysbench's `point-query` on
/// `sbtest1`, one worker through the harness's step runner (its event,
/// counts, latency histogram and per-second series), kept across rounds.
pub struct PointQueries {
    workers: Vec<SbWorker>,
}

impl PointQueries {
    /// The test the worker runs.
    pub const TEST: &'static str = "point-query";

    /// Loads `sbtest1` with `rows` rows through `driver`, then connects and
    /// prepares the worker, whose ids are drawn from `seed` (uniform).
    pub fn load(driver: &Arc<dyn Driver>, rows: u64, seed: u64) -> Result<Self, BenchError> {
        load(
            driver.as_ref(),
            &LoadParams {
                tables: 1,
                table_size: rows,
                seed: 1,
            },
            &mut |_| {},
        )
        .map_err(BenchError::engine("loading the table"))?;
        let test =
            lookup(Self::TEST).ok_or_else(|| BenchError::NoResult(NoResult::NoPointQueryTest))?;
        let p = EventParams {
            tables: 1,
            table_size: rows as i64,
            rand: SbDist::new(SbRandType::Uniform, SbRandParams::default())
                .map_err(|_| BenchError::NoResult(NoResult::SysbenchDefaults))?,
            ps_mode: PsMode::Auto,
            skip_trx: false,
            first_table: 1,
            rand_seed: rand_seed_from(seed),
        };
        // Thread 0's generator is seeded with `seed` itself.
        let worker = SbWorker::new(driver.clone(), &test, &p, 0)
            .map_err(BenchError::engine("starting the worker"))?;
        Ok(PointQueries {
            workers: vec![worker],
        })
    }

    /// The one statement of the test, as its worker prepares it.
    pub fn sql() -> String {
        lookup(Self::TEST)
            .map(|t| main_statement(t.kind, 1))
            .unwrap_or_default()
    }

    /// One step of `secs` measured seconds, no warm-up: the queries and
    /// the measured interval's seconds.
    pub fn run(&mut self, secs: f64) -> Result<(u64, f64), BenchError> {
        let cfg = StepConfig {
            warmup: Duration::ZERO,
            duration: Duration::from_secs_f64(secs),
            reconnect_for: Duration::ZERO,
            events: None,
        };
        let one_each = crate::harness::Placement::thread_per_worker();
        let r = run_step(&mut self.workers, &cfg, &one_each, &mut |_| {}, &mut || {});
        Ok((r.counts.queries(), r.secs))
    }
}
