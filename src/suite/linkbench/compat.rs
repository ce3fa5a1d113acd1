//! LinkBench in `rqps compat`: each of the ten operations on its own (a
//! [`Requester`] told to make only it), a few of each on the graph
//! [`load`] fills, the tables they write compared afterwards; then two
//! requesters making the mix at once, and the counts check ([`check`]).
//!
//! Rows carry times, so every engine gets the same ones: the load reads a
//! fixed clock, and each test's requester a clock that counts up from it
//! one millisecond a reading. The load runs one link loader, so each
//! engine gets the same rows in the same order.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use super::check::check;
use super::dist::Outdegree;
use super::dist::{self, Graph, IdDists, MIX, Mix, OPS};
use super::load::{self, Clock, Progress, create_tables, load};
use super::request::{RequestSetup, Requester};
use super::schema;
use crate::engine::DbError;

/// What a compat plan takes of the run's parameters.
#[derive(Clone, Debug)]
pub struct Shape {
    pub nodes: u64,
    pub outdegree: Outdegree,
    pub seed: u64,
    /// Seeds the graph's shuffles, as in runs.
    pub graph_seed: u64,
    pub list_limit: usize,
    pub max_failures: u64,
}
use crate::suite::api::{CompatConcurrent, CompatPlan, CompatTable, CompatTest, Condition};

/// 2023-11-14 22:13:20 UTC, in milliseconds: the time every engine's rows get.
const EPOCH_MS: i64 = 1_700_000_000_000;
/// Operations of each kind checked one by one.
const EVENTS: u64 = 5;
const REQUESTERS: u64 = 2;
const CONCURRENT_EVENTS: u64 = 50;

fn fixed() -> Clock {
    Arc::new(|| EPOCH_MS)
}

/// A clock that starts at [`EPOCH_MS`] and moves one millisecond a reading.
fn counting() -> Clock {
    let next = Arc::new(AtomicI64::new(EPOCH_MS));
    Arc::new(move || next.fetch_add(1, Ordering::Relaxed))
}

fn shared(p: &Shape, only: Option<usize>, clock: Clock) -> Arc<RequestSetup> {
    Arc::new(RequestSetup {
        graph: Graph::new(p.nodes, p.graph_seed, p.outdegree),
        ids: IdDists::new(p.nodes, p.graph_seed, p.outdegree),
        mix: Mix::new(&MIX),
        list_limit: p.list_limit,
        rate: 0.0,
        requests: None,
        max_failures: p.max_failures,
        max_retries: 10,
        clock,
        only,
    })
}

/// The tables an operation writes.
fn writes(op: usize) -> &'static [&'static str] {
    match op {
        dist::ADD_LINK | dist::UPDATE_LINK | dist::DELETE_LINK => &[schema::LINK, schema::COUNT],
        dist::ADD_NODE | dist::UPDATE_NODE | dist::DELETE_NODE => &[schema::NODE],
        _ => &[],
    }
}

pub fn plan(p: &Shape) -> CompatPlan {
    let tests = OPS
        .iter()
        .enumerate()
        .map(|(op, name)| {
            let p = p.clone();
            CompatTest {
                at_once: None,
                name: name.to_ascii_lowercase(),
                // Every request step (P1, P4, ...) makes the whole mix.
                also: vec!["P*".into()],
                writes: writes(op).iter().map(|t| t.to_string()).collect(),
                events: EVENTS,
                worker: Box::new(move |d| {
                    let sh = shared(&p, Some(op), counting());
                    Ok(Box::new(Requester::new(Arc::clone(d), sh, p.seed)?) as _)
                }),
            }
        })
        .collect();
    let (lp, cp) = (p.clone(), p.clone());
    let node = schema::node();
    let mut tables = vec![CompatTable {
        name: node.name.clone(),
        columns: std::iter::once(node.id.name.clone())
            .chain(node.columns.iter().map(|c| c.name.clone()))
            .collect(),
    }];
    for t in [schema::link(), schema::count()] {
        tables.push(CompatTable {
            columns: t.columns.iter().map(|c| c.name.clone()).collect(),
            name: t.name,
        });
    }
    CompatPlan {
        load_what: format!(
            "a graph of {} nodes ({:?} out-degrees), one link loader",
            p.nodes, p.outdegree
        ),
        load: Box::new(move |d| {
            let db = d.require_sql()?;
            create_tables(db, true)?;
            let graph = Graph::new(lp.nodes, lp.graph_seed, lp.outdegree);
            load(d, &graph, 1, lp.seed, &Progress::default(), &fixed())
                .map(|_| ())
                .map_err(|e| match e {
                    load::LoadError::Engine { source, .. } => source,
                    e => DbError::fatal(e.to_string()),
                })
        }),
        tables,
        tests,
        concurrent: Some(CompatConcurrent {
            what: format!(
                "{REQUESTERS} requesters, {CONCURRENT_EVENTS} operations of the mix each"
            ),
            workers: Box::new(move |d| {
                let sh = shared(&cp, None, counting());
                (0..REQUESTERS)
                    .map(|i| {
                        Ok(Box::new(Requester::new(
                            Arc::clone(d),
                            sh.clone(),
                            cp.seed.wrapping_add(i + 1),
                        )?) as _)
                    })
                    .collect()
            }),
            events: CONCURRENT_EVENTS,
            check: Box::new(|d| {
                let out = check(d.require_sql()?)?;
                Ok(vec![Condition {
                    name: "counttable holds the visible links of every (id1, link_type)".into(),
                    holds: out.ok(),
                    detail: (!out.ok()).then(|| out.reason()),
                }])
            }),
        }),
    }
}
