//! pgbench in `rqps compat`: each built-in script under each protocol
//! (simple, extended, prepared), a few transactions of one [`Client`] on
//! the tables [`init::load`] fills; then two clients running tpcb-like at
//! once, and the balances check ([`check`]).

use std::sync::{Arc, Mutex};

use super::builtin::{ALL, Builtin};
use super::check;
use super::client::{Client, Compiled};
use super::init;
use super::params::{Params, Protocol, ScriptSpec};
use crate::engine::DbError;
use crate::suite::api::{CompatConcurrent, CompatPlan, CompatTable, CompatTest, Condition};

/// Transactions of each script and protocol checked one by one.
const EVENTS: u64 = 5;
const CLIENTS: usize = 2;
const CONCURRENT_EVENTS: u64 = 30;

/// `p` running only built-in `b` over `protocol`.
fn only(p: &Params, b: Builtin, protocol: Protocol) -> Params {
    let mut q = p.clone();
    q.scripts = vec![ScriptSpec {
        name: b.name().into(),
        weight: 1,
        builtin: Some(b),
        path: None,
        text: None,
    }];
    q.protocol = protocol;
    q.rate = None;
    q.latency_limit_ms = None;
    q
}

fn clients(
    d: &Arc<dyn crate::engine::Driver>,
    p: &Params,
    n: usize,
) -> crate::engine::DbResult<Vec<Client>> {
    let c =
        Compiled::new(p, d.require_sql()?.dialect()).map_err(|e| DbError::fatal(e.to_string()))?;
    let c = Arc::new(c);
    (0..n)
        .map(|i| Client::new(Arc::clone(d), c.clone(), p, n, i))
        .collect()
}

pub fn plan(p: &Params) -> CompatPlan {
    let mut tests = Vec::new();
    for b in ALL {
        for protocol in [Protocol::Simple, Protocol::Extended, Protocol::Prepared] {
            let q = only(p, b, protocol);
            let (name, also) = if protocol == p.protocol {
                (b.name().to_string(), vec!["pgbench".to_string()])
            } else {
                (
                    format!("{} --protocol {}", b.name(), protocol.name()),
                    vec![b.name().to_string(), "pgbench".to_string()],
                )
            };
            tests.push(CompatTest {
                at_once: None,
                name,
                also,
                writes: if b == Builtin::SelectOnly {
                    Vec::new()
                } else {
                    init::tables(p.scale)
                        .iter()
                        .map(|t| t.name.clone())
                        .collect()
                },
                events: EVENTS,
                worker: Box::new(move |d| {
                    let mut c = clients(d, &q, 1)?;
                    Ok(Box::new(c.remove(0)) as _)
                }),
            });
        }
    }
    let scale = p.scale;
    let tpcb = only(p, Builtin::TpcbLike, p.protocol);
    // The sums as the concurrent run found them: the check compares what
    // the run changed (the single tests before it ran simple-update, which
    // moves only the accounts' balances).
    let before: Arc<Mutex<Option<check::Sums>>> = Arc::default();
    let before_check = Arc::clone(&before);
    CompatPlan {
        load_what: format!("pgbench's tables at scale {scale}"),
        load: Box::new(move |d| init::load(d.as_ref(), scale, &mut |_| {}).map(|_| ())),
        tables: init::tables(p.scale)
            .into_iter()
            .map(|t| CompatTable {
                columns: t.columns.iter().map(|c| c.name.clone()).collect(),
                name: t.name,
            })
            .collect(),
        tests,
        concurrent: Some(CompatConcurrent {
            what: format!("{CLIENTS} clients, {CONCURRENT_EVENTS} tpcb-like transactions each"),
            workers: Box::new(move |d| {
                let mut c = d.require_sql()?.connect()?;
                *before.lock().unwrap_or_else(|e| e.into_inner()) = Some(check::run(c.as_mut())?);
                Ok(clients(d, &tpcb, CLIENTS)?
                    .into_iter()
                    .map(|c| Box::new(c) as _)
                    .collect())
            }),
            events: CONCURRENT_EVENTS,
            check: Box::new(move |d| {
                let mut c = d.require_sql()?.connect()?;
                let after = check::run(c.as_mut())?;
                let Some(before) = before_check
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
                else {
                    return Err(DbError::fatal("the balances were not read before the run"));
                };
                let v = check::Change { before, after }.violation();
                Ok(vec![Condition {
                    name: "sum(abalance), sum(bbalance), sum(tbalance) and sum(delta) change alike"
                        .into(),
                    holds: v.is_none(),
                    detail: v.map(|v| v.to_string()),
                }])
            }),
        }),
    }
}
