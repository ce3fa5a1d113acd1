//! The figures of a pgbench test beyond the harness's core, as pgbench
//! prints them: per script its transactions, TPS, failures and retries,
//! latency, and per command its average latency, failures and retries
//! (`pgbench -r`); over all scripts the failures by class and, with
//! `--rate`, the schedule lag, skipped and late transactions.

use serde::{Deserialize, Serialize};

use super::client::{Client, Compiled};
use super::params::{Params, Protocol};
use crate::harness::runner::StepRun;

/// One command of a script.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct StatementDetail {
    pub line: u32,
    /// Its first line, as written.
    pub text: String,
    pub count: u64,
    /// Average latency in milliseconds (pgbench -r's figure).
    pub latency_ms_avg: f64,
    pub failures: u64,
    pub retries: u64,
}

/// One script in one test.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ScriptDetail {
    pub name: String,
    pub weight: u32,
    /// Transactions that completed.
    pub count: u64,
    pub tps: f64,
    /// Share of completed transactions, in percent.
    pub share_pct: f64,
    pub failed: u64,
    pub retried: u64,
    pub retries: u64,
    pub latency_ms_avg: f64,
    pub statements: Vec<StatementDetail>,
    /// Commands whose figures are not stored (past
    /// [`super::params::MAX_STORED_STATEMENTS`] over the test's scripts).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub statements_not_stored: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Failed transactions by the class of their last error.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Failures {
    pub serialization: u64,
    pub deadlock: u64,
    /// Other errors of the engine's retry class (busy, lock wait timeout).
    pub other: u64,
}

/// The schedule under `--rate`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RateDetail {
    pub rate: f64,
    /// Lag of each start behind its schedule, in milliseconds.
    pub lag_ms_avg: f64,
    pub lag_ms_max: f64,
    /// Transactions not sent because they were already later than
    /// --latency-limit when their turn came.
    pub skipped: u64,
    /// Transactions that ended more than --latency-limit after their
    /// schedule.
    pub late: u64,
}

/// The pgbench figures of one test (`detail.pgbench` of its result).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Detail {
    pub clients: usize,
    pub scale: u32,
    pub protocol: Protocol,
    pub max_tries: u32,
    /// Completed transactions and failed ones.
    pub transactions: u64,
    pub failed: u64,
    pub failures: Failures,
    /// Transactions that needed more than one try, and the extra tries.
    pub retried: u64,
    pub retries: u64,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub latency_limit_ms: Option<f64>,
    /// Late transactions without --rate (with it, in `rate`).
    pub late: u64,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rate: Option<RateDetail>,
    pub scripts: Vec<ScriptDetail>,
    /// The transaction log's files (`--log`), as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log_files: Vec<String>,
}

/// The detail of a finished step over `clients`.
pub fn detail(p: &Params, c: &Compiled, clients: &[Client], step: &StepRun, n: usize) -> Detail {
    let secs = step.secs.max(1e-9);
    let events = step.counts.events;
    let mut failures = Failures::default();
    let (mut lag_sum, mut lag_max, mut started, mut skipped, mut late) = (0u64, 0u64, 0u64, 0, 0);
    for cl in clients {
        failures.serialization += cl.failures.serialization;
        failures.deadlock += cl.failures.deadlock;
        failures.other += cl.failures.other;
        lag_sum += cl.rate.lag_ns_sum;
        lag_max = lag_max.max(cl.rate.lag_ns_max);
        started += cl.rate.started;
        skipped += cl.rate.skipped;
        late += cl.rate.late;
    }
    let mut scripts = Vec::new();
    let mut room = super::params::MAX_STORED_STATEMENTS;
    for (i, s) in c.scripts.iter().enumerate() {
        let kept = s.ops.len().min(room);
        room -= kept;
        let count = step.kinds.get(i).map_or(events, |k| k.events);
        let (mut failed, mut retried, mut retries) = (0, 0, 0);
        let mut ops = vec![(0u64, 0u64, 0u64, 0u64); s.ops.len()];
        for cl in clients {
            let t = &cl.tally[i];
            failed += t.failed;
            retried += t.retried;
            retries += t.retries;
            for (o, ot) in ops.iter_mut().zip(&t.ops) {
                o.0 += ot.ns;
                o.1 += ot.count;
                o.2 += ot.failures;
                o.3 += ot.retries;
            }
        }
        let latency_ms_avg = match step.kinds.get(i) {
            Some(k) if !k.hist.is_empty() => k.hist.mean() / 1e6,
            _ if c.scripts.len() == 1 => step.latency.avg / 1e3,
            _ => 0.0,
        };
        scripts.push(ScriptDetail {
            name: s.name.clone(),
            weight: s.weight,
            count,
            tps: count as f64 / secs,
            share_pct: count as f64 * 100.0 / events.max(1) as f64,
            failed,
            retried,
            retries,
            latency_ms_avg,
            statements_not_stored: (s.ops.len() - kept) as u64,
            statements: ops
                .iter()
                .take(kept)
                .enumerate()
                .map(|(j, &(ns, count, failures, retries))| StatementDetail {
                    line: s.lines[j],
                    text: s.shown[j].clone(),
                    count,
                    latency_ms_avg: if count > 0 {
                        ns as f64 / count as f64 / 1e6
                    } else {
                        0.0
                    },
                    failures,
                    retries,
                })
                .collect(),
        });
    }
    let failed = scripts.iter().map(|s| s.failed).sum();
    Detail {
        clients: n,
        scale: p.scale,
        protocol: p.protocol,
        max_tries: p.max_tries,
        transactions: events,
        failed,
        failures,
        retried: scripts.iter().map(|s| s.retried).sum(),
        retries: scripts.iter().map(|s| s.retries).sum(),
        latency_limit_ms: p.latency_limit_ms,
        late: if p.rate.is_none() { late } else { 0 },
        rate: p.rate.map(|rate| RateDetail {
            rate,
            lag_ms_avg: lag_sum as f64 / started.max(1) as f64 / 1e6,
            lag_ms_max: lag_max as f64 / 1e6,
            skipped,
            late,
        }),
        scripts,
        log_files: Vec::new(),
    }
}
