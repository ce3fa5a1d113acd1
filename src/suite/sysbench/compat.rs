//! The sysbench suite in `rqps compat`: every test of both orders (the
//! classic 42 and the current 32) by its base name, the `.pre` and `.warm`
//! steps counted with the test whose statements they send, each a few
//! events of [`SbWorker`] on the tables [`load`] fills.

use std::sync::Arc;

use super::catalog::{self, Group, Kind, Order};
use super::event::{EventParams, SbWorker};
use super::load::{LoadParams, load};
use super::params::SysbenchParams;
use super::rng::{SbDist, SbRandType};
use super::schema::{table, table_name};
use crate::suite::api::{CompatPlan, CompatTable, CompatTest};

/// Events per test: enough to send every statement of a mix twice or more.
const EVENTS: u64 = 3;

/// A step's base name: `random-points.pre_range=10` → `random-points_range=10`.
fn base(name: &str) -> String {
    let (stem, range) = match name.split_once("_range=") {
        Some((s, r)) => (s, Some(r)),
        None => (name, None),
    };
    let stem = stem.split('.').next().unwrap_or(stem);
    match range {
        Some(r) => format!("{stem}_range={r}"),
        None => stem.to_string(),
    }
}

pub fn plan(p: &SysbenchParams) -> CompatPlan {
    let tables: Vec<String> = (1..=p.tables).map(table_name).collect();
    let mut names: Vec<String> = Vec::new();
    for t in catalog::order(Order::Classic)
        .into_iter()
        .chain(catalog::order(Order::Current))
    {
        if !names.contains(&t.name) {
            names.push(t.name);
        }
    }
    let mut tests: Vec<CompatTest> = Vec::new();
    // params() checked the distribution; a plan made otherwise draws uniform ids.
    let dist = p
        .dist()
        .unwrap_or_else(|_| SbDist::sysbench_default().with_kind(SbRandType::Uniform));
    for name in &names {
        let b = base(name);
        if let Some(t) = tests.iter_mut().find(|t| t.name == b) {
            if *name != b && !t.also.contains(name) {
                t.also.push(name.clone());
            }
            continue;
        }
        let Some(def) = catalog::lookup(&b) else {
            continue;
        };
        let ev = EventParams {
            tables: p.tables,
            first_table: 1,
            table_size: p.table_size as i64,
            rand: dist,
            ps_mode: p.ps_mode,
            skip_trx: false,
            rand_seed: p.glibc_seed(),
        };
        let writes = if def.group == Group::Write {
            tables.clone()
        } else {
            Vec::new()
        };
        let events = if def.kind == Kind::Scan { 1 } else { EVENTS };
        let also = if *name != b {
            vec![name.clone()]
        } else {
            Vec::new()
        };
        tests.push(CompatTest {
            at_once: None,
            name: b,
            also,
            writes,
            events,
            worker: Box::new(move |d| {
                Ok(Box::new(SbWorker::new(Arc::clone(d), &def, &ev, 0)?) as _)
            }),
        });
    }
    let lp = LoadParams {
        tables: p.tables,
        table_size: p.table_size,
        seed: p.seed,
    };
    CompatPlan {
        load_what: format!("{} sbtest table(s) of {} rows", p.tables, p.table_size),
        load: Box::new(move |d| load(d.as_ref(), &lp, &mut |_| {}).map(|_| ())),
        tables: (1..=p.tables)
            .map(|i| CompatTable {
                name: table_name(i),
                columns: std::iter::once(table(i).id.name)
                    .chain(table(i).columns.into_iter().map(|c| c.name))
                    .collect(),
            })
            .collect(),
        tests,
        concurrent: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_of_both_orders_is_one_test_or_counted_with_one() {
        let p = super::super::params::profile("ci").unwrap();
        let plan = plan(&p);
        let covered: Vec<&str> = plan
            .tests
            .iter()
            .flat_map(|t| std::iter::once(t.name.as_str()).chain(t.also.iter().map(String::as_str)))
            .collect();
        for t in catalog::order(Order::Classic)
            .into_iter()
            .chain(catalog::order(Order::Current))
        {
            assert!(covered.contains(&t.name.as_str()), "{}", t.name);
        }
        assert_eq!(plan.tests.len(), 32);
        let rp = plan
            .tests
            .iter()
            .find(|t| t.name == "random-points_range=10")
            .unwrap();
        assert_eq!(rp.also, ["random-points.pre_range=10"]);
        assert!(
            plan.tests
                .iter()
                .find(|t| t.name == "insert")
                .unwrap()
                .writes
                .len()
                == 2
        );
        assert_eq!(base("scan.warmpre"), "scan");
    }
}
