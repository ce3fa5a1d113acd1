//! TPC-C in `rqps compat`: each of the five transactions on its own (a
//! [`Terminal`] told to run only it), a few of each on the warehouses
//! [`load`] fills, the tables they write compared afterwards; then two
//! terminals running the mix at once, and the consistency conditions
//! ([`check`]).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::check;
use super::draw::{self, KINDS};
use super::load::load;
use super::schema;
use super::txn::{Terminal, TerminalConfig};
use crate::engine::PsMode;
use crate::suite::api::{CompatConcurrent, CompatPlan, CompatTable, CompatTest, Condition};

/// What a compat plan takes of the run's parameters.
#[derive(Clone, Debug)]
pub struct Shape {
    pub warehouses: u32,
    pub seed: u64,
    pub ps_mode: PsMode,
}

/// Transactions of each kind checked one by one.
const EVENTS: u64 = 5;
/// Terminals and transactions each in the concurrent run.
const TERMINALS: usize = 2;
const CONCURRENT_EVENTS: u64 = 40;

/// The tables each transaction writes.
fn writes(kind: usize) -> &'static [&'static str] {
    match kind {
        draw::NEW_ORDER => &["district", "orders", "new_order", "order_line", "stock"],
        draw::PAYMENT => &["warehouse", "district", "customer", "history"],
        draw::DELIVERY => &["new_order", "orders", "order_line", "customer"],
        _ => &[],
    }
}

fn config(p: &Shape, terminal: usize, only: Option<usize>) -> TerminalConfig {
    let w = p.warehouses as i64;
    TerminalConfig {
        warehouses: w,
        home_w: terminal as i64 % w + 1,
        home_d: (terminal as i64 / w) % draw::DISTRICTS + 1,
        seed: p.seed.wrapping_add(terminal as u64 * 7919),
        keying: false,
        isolation_sql: None,
        ps_mode: p.ps_mode,
        writer: None,
        measuring: Arc::new(AtomicBool::new(false)),
        only,
    }
}

pub fn plan(p: &Shape) -> CompatPlan {
    let tests = KINDS
        .iter()
        .enumerate()
        .map(|(kind, name)| {
            let p = p.clone();
            CompatTest {
                at_once: None,
                name: name.to_string(),
                // tpmC is the mix of all five: any that differs, differs it.
                also: vec!["tpmC".into()],
                writes: writes(kind).iter().map(|t| t.to_string()).collect(),
                events: EVENTS,
                worker: Box::new(move |d| {
                    Ok(Box::new(Terminal::new(Arc::clone(d), config(&p, 0, Some(kind)))?) as _)
                }),
            }
        })
        .collect();
    let lp = p.clone();
    let (warehouses, seed) = (p.warehouses, p.seed);
    CompatPlan {
        load_what: format!("{} warehouse(s) of TPC-C tables", p.warehouses),
        load: Box::new(move |d| load(d.as_ref(), warehouses, seed, &mut |_| {}).map(|_| ())),
        tables: schema::all()
            .into_iter()
            .map(|t| CompatTable {
                columns: t.columns.iter().map(|c| c.name.clone()).collect(),
                name: t.name,
            })
            .collect(),
        tests,
        concurrent: Some(CompatConcurrent {
            what: format!(
                "{TERMINALS} terminals, {CONCURRENT_EVENTS} transactions of the mix each"
            ),
            workers: Box::new(move |d| {
                (0..TERMINALS)
                    .map(|i| Ok(Box::new(Terminal::new(Arc::clone(d), config(&lp, i, None))?) as _))
                    .collect()
            }),
            events: CONCURRENT_EVENTS,
            check: Box::new(move |d| {
                let mut c = d.require_sql()?.connect()?;
                let r = check::run(c.as_mut())?;
                Ok(r.conditions
                    .into_iter()
                    .map(|c| Condition {
                        name: format!("consistency condition {}: {}", c.number, c.rule),
                        holds: c.ok,
                        detail: c.violation,
                    })
                    .collect())
            }),
        }),
    }
}
