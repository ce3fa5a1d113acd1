//! The Insert Benchmark in `rqps compat`: its four load steps (l.i0, l.x,
//! l.i1, l.i2) as [`run_alone`] runs them, with one client, on the table
//! [`setup_tables`] makes; the inserter's and the deleter's statements
//! are compared connection by connection. The query steps (qr, qp) are
//! left out: their queriers run for as long as paced inserts take, so two
//! engines send different numbers of queries at different moments of the
//! inserts, and no two answers line up.

use std::sync::Arc;

use super::schema::table;
use super::step::{StepSpec, run_alone, setup_tables};
use crate::engine::{DbError, DbResult, Driver};
use crate::harness::measure::Counts;
use crate::harness::runner::{StepStatus, Worker};
use crate::suite::api::{CompatPlan, CompatTable, CompatTest};

/// One whole step, as one event.
struct OneStep {
    driver: Arc<dyn Driver>,
    spec: StepSpec,
    done: bool,
}

impl Worker for OneStep {
    fn event(&mut self, _c: &mut Counts) -> DbResult<()> {
        self.done = true;
        match run_alone(self.driver.as_ref(), &self.spec, &mut |_| {}).status {
            StepStatus::Ok | StepStatus::Interrupted => Ok(()),
            StepStatus::Failed(why) => Err(DbError::fatal(why)),
        }
    }

    fn recover(&mut self, err: &DbError) -> DbResult<()> {
        Err(err.clone())
    }

    fn finished(&self) -> bool {
        self.done
    }
}

/// The plan of `steps` (name and spec, one client each), in order.
pub fn plan(steps: Vec<(String, StepSpec)>) -> CompatPlan {
    let t = table(1);
    let tests = steps
        .into_iter()
        .map(|(name, spec)| CompatTest {
            at_once: spec.deletes.then(|| {
                "the inserter and the deleter write the table at once, on two connections: \
                 try it with two sessions"
                    .to_string()
            }),
            name,
            also: Vec::new(),
            writes: vec![t.name.clone()],
            events: 1,
            worker: Box::new(move |d| {
                Ok(Box::new(OneStep {
                    driver: Arc::clone(d),
                    spec: spec.clone(),
                    done: false,
                }) as _)
            }),
        })
        .collect();
    CompatPlan {
        load_what: format!("an empty table {} (one client)", t.name),
        load: Box::new(|d| setup_tables(d.as_ref(), 1)),
        tables: vec![CompatTable {
            name: t.name.clone(),
            columns: std::iter::once(t.id.name.clone())
                .chain(t.columns.iter().map(|c| c.name.clone()))
                .collect(),
        }],
        tests,
        concurrent: None,
    }
}
