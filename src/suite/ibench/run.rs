//! Runs the Insert Benchmark against one target (spec §2, reference §4):
//! l.i0, l.x, l.i1, l.i2 (then the settle step), and qr/qp at each rate,
//! each step wrapped with the hardware probe and stored the moment it ends.

use std::time::Duration;

use super::Ibench;
use super::params::IbenchParams;
use super::results::{IbenchRetries, IbenchSecond, IbenchStep, RateAt, RtSummary};
use crate::engine::Driver;
use crate::harness::measure::Latency;
use crate::harness::runner::stop_requested;
use crate::harness::settle_tables;
use crate::harness::{Harness, RunEnd, TestFailure};
use crate::results::TestResult;
use crate::suite::api::Workload;
use crate::suite::ibench::rt::RtHist;
use crate::suite::ibench::step::{
    Sample, StepOutcome, StepSpec, count_rows, leftover_table, run_test_step, setup_tables,
};
use crate::suite::ibench::{
    ROWS_L_I0, ROWS_L_I1, ROWS_L_I2, ROWS_L_X, ROWS_QUERY_STEPS, StepDef, table_name,
};

/// Tables are counted before and after each step only up to this many rows
/// per table (a count of a reference-sized table takes too long).
pub const COUNT_ROWS_UP_TO: u64 = 2_000_000;

/// A qr/qp step sustained its target when its average insert rate reached
/// this share of it (reference §4.10).
pub const SLA_SHARE: f64 = 0.95;

/// The percentiles of per-second rates that are stored (reference §4.9).
pub const RATE_PERCENTILES: [u32; 5] = [50, 75, 90, 95, 99];

/// Whether an average insert rate missed its target (reference §4.10).
pub fn sla_missed(avg_ips: f64, target_ips: f64) -> bool {
    avg_ips < SLA_SHARE * target_ips
}

/// The connections' work of step `def` with the run's parameters.
pub fn step_spec(p: &IbenchParams, def: &StepDef, index: usize) -> StepSpec {
    let (i1, i2) = p.writes_split();
    let base = StepSpec {
        clients: p.clients,
        rows_per_client: 0,
        rows_per_statement: ROWS_L_I0,
        deletes: false,
        queries: None,
        rate_per_client: None,
        create_indexes: false,
        seed: p.seed ^ (index as u64 + 1).wrapping_mul(0xA076_1D64_78BD_642F),
        ps_mode: p.ps_mode,
    };
    match def {
        StepDef::LoadI0 => StepSpec {
            rows_per_client: p.rows_per_client,
            ..base
        },
        StepDef::LoadX => StepSpec {
            rows_per_client: (ROWS_L_X / p.clients as u64).max(1),
            create_indexes: true,
            ..base
        },
        StepDef::LoadI1 => StepSpec {
            rows_per_client: i1,
            rows_per_statement: ROWS_L_I1,
            deletes: true,
            ..base
        },
        StepDef::LoadI2 => StepSpec {
            rows_per_client: i2,
            rows_per_statement: ROWS_L_I2,
            deletes: true,
            ..base
        },
        StepDef::Query { kind, rate } => StepSpec {
            rows_per_client: (p.query_secs * *rate as f64).round() as u64,
            // Reference §4.5: fewer rows per statement than per second.
            rows_per_statement: ROWS_QUERY_STEPS.min(*rate as usize),
            deletes: true,
            queries: Some(*kind),
            rate_per_client: Some(*rate as f64),
            ..base
        },
    }
}

pub fn run(p: &IbenchParams, h: &mut Harness<'_>) -> Result<RunEnd, crate::error::Error> {
    let steps = p.steps()?;
    let mut end = RunEnd::Ok;
    for (i, def) in steps.iter().enumerate() {
        if stop_requested() {
            end = RunEnd::Interrupted;
            break;
        }
        let r = run_one(p, h, def, i)?;
        if *def == StepDef::LoadI0 && r.status == crate::results::Status::Failed {
            // Without its tables no later step can run.
            return Err(crate::error::failed(r.reason.unwrap_or_default()));
        }
        if !end.after(&r) {
            break;
        }
    }
    Ok(end)
}

fn tables(p: &IbenchParams) -> Vec<String> {
    (1..=p.clients).map(table_name).collect()
}

/// Rows in all the tables, where that is cheap to count.
fn count(p: &IbenchParams, driver: &dyn Driver) -> Option<u64> {
    (p.rows_per_client + ROWS_L_X <= COUNT_ROWS_UP_TO)
        .then(|| count_rows(driver, p.clients).ok())
        .flatten()
}

fn run_one(
    p: &IbenchParams,
    h: &mut Harness<'_>,
    def: &StepDef,
    index: usize,
) -> Result<TestResult, crate::error::Error> {
    let spec = step_spec(p, def, index);
    let name = def.name();
    let settle_budget = Duration::from_secs_f64(p.settle_secs);
    h.test(name.clone(), base_result(def, p.clients), |run| {
        let driver = run.driver.clone();
        if *def == StepDef::LoadI0 {
            setup_tables(driver.as_ref(), p.clients)
                .map_err(TestFailure::when("could not create the tables"))?;
            if let Some(t) = leftover_table(driver.as_ref(), p.clients) {
                run.warn(format!(
                    "table {t} (from an earlier run with more clients) is still in the database and \
counts in its size; drop it and the pi tables after it to measure this run alone"
                ));
            }
        }
        let rows_before = count(p, driver.as_ref());
        run.per_op = match def {
            StepDef::Query { .. } => "query",
            _ => "row",
        };
        // l.x's operations are the rows it indexed: l.i0's and its own.
        let loaded = (*def == StepDef::LoadX).then(|| p.rows_per_client * p.clients as u64);
        let ops = |o: &StepOutcome| match def {
            StepDef::Query { .. } => o.queries as f64,
            _ => (loaded.unwrap_or(0) + o.inserted_rows) as f64,
        };
        let out = run_test_step(run, &spec, &ops);
        let indexed = loaded.map(|l| l + out.inserted_rows);
        let known = run.result.warnings.len();
        let mut ib = fill_result(&mut run.result, def, &spec, &out, indexed);
        for w in &run.result.warnings[known..] {
            run.ui.warn(&format!("{name}: {w}"));
        }
        let ops = ops(&out);
        let hw = run.result.hw.clone();
        let rows_after = count(p, driver.as_ref());
        ib.rows_before = rows_before;
        ib.rows_after = rows_after;
        // Per inserted row; l.x's rows are the ones it indexed, as its rate.
        let inserts = indexed.unwrap_or(out.inserted_rows) as f64;
        let per_insert = |v: Option<f64>| v.filter(|_| inserts > 0.0).map(|w| w * ops / inserts);
        ib.wkb_per_insert = per_insert(hw.as_ref().and_then(|h| h.wkb_per_op));
        ib.writes_per_insert = per_insert(hw.as_ref().and_then(|h| h.writes_per_op));
        if *def == StepDef::LoadI2 && run.result.status == crate::results::Status::Ok && !stop_requested() {
            let (took, refused) = settle_tables(driver.as_ref(), &tables(p), settle_budget)
                .map_err(TestFailure::when("settle step failed"))?;
            for f in refused {
                run.ui.warn(&format!(
                    "settle step: the engine refused {f}; continuing without it"
                ));
            }
            ib.settle_secs = Some(took.as_secs_f64());
        }
        run.result.set_detail(Ibench::NAME, &ib);
        Ok(())
    })
}

/// The one line printed when a step ends.
pub fn result_line(r: &TestResult) -> String {
    let label = r.test.as_str();
    if r.status != crate::results::Status::Ok {
        return format!(
            "{label:>8}  {}: {}",
            r.status,
            r.reason.clone().unwrap_or_default()
        );
    }
    let Some(ib) = r.detail::<IbenchStep>(Ibench::NAME) else {
        return format!("{label:>8}  {:.0} {}", r.qps, r.qps_unit);
    };
    let mut line = format!(
        "{label:>8}  {:>10.0} {:<14}  ips {:.0}  dps {:.0}  qps {:.0}  in {:.1} s",
        r.qps, r.qps_unit, ib.inserts_per_sec, ib.deletes_per_sec, ib.queries_per_sec, r.secs
    );
    if let Some(t) = ib.target_ips {
        line.push_str(&format!(
            "  target {t:.0} ips: {}",
            if ib.sla_missed { "MISSED" } else { "met" }
        ));
    }
    if let Some(hw) = &r.hw
        && let Some(c) = hw.cpu_us_per_op
    {
        line.push_str(&format!("  cpu/o {c:.1} us"));
    }
    line
}

fn base_result(def: &StepDef, clients: usize) -> TestResult {
    let unit = match def {
        StepDef::LoadX => "indexed rows/s",
        StepDef::Query { .. } => "queries/s",
        _ => "inserts/s",
    };
    let group = if def.is_load() { "load" } else { "query" };
    TestResult::running(Ibench::NAME, def.name(), group, clients, true, unit)
}

/// Response times of one kind, or None when it ran no statement.
pub fn rt_summary(h: &RtHist) -> Option<RtSummary> {
    if h.is_empty() {
        return None;
    }
    let l = Latency::from_histogram(&h.hist);
    let buckets = h.buckets.to_vec();
    Some(RtSummary {
        count: h.len(),
        avg: l.avg,
        p50: l.p50,
        p95: l.p95,
        p99: l.p99,
        max: l.max,
        buckets,
    })
}

/// The value `pct` % from the top of `rates` sorted from high to low
/// (reference §4.9: the 99th is a low rate that 99 % of seconds beat): the
/// one at 1-based position `round(n × pct / 100)`, as the reference's
/// `head -n OFF | tail -1` picks it.
pub fn rate_at(rates: &[f64], pct: u32) -> f64 {
    if rates.is_empty() {
        return 0.0;
    }
    let mut v = rates.to_vec();
    v.sort_by(|a, b| b.total_cmp(a));
    let off = (v.len() as f64 * pct as f64 / 100.0).round() as usize;
    v[off.clamp(1, v.len()) - 1]
}

/// Rates at [`RATE_PERCENTILES`] over whole seconds (all samples when the
/// step was shorter than one).
pub fn rate_percentiles(samples: &[Sample]) -> Vec<RateAt> {
    let whole: Vec<&Sample> = samples.iter().filter(|s| s.secs >= 0.999).collect();
    let use_: Vec<&Sample> = if whole.is_empty() {
        samples.iter().collect()
    } else {
        whole
    };
    let col = |f: fn(&Sample) -> f64| use_.iter().map(|s| f(s)).collect::<Vec<f64>>();
    let (ips, dps, qps) = (col(|s| s.ips), col(|s| s.dps), col(|s| s.qps));
    RATE_PERCENTILES
        .iter()
        .map(|&pct| RateAt {
            pct,
            ips: rate_at(&ips, pct),
            dps: rate_at(&dps, pct),
            qps: rate_at(&qps, pct),
        })
        .collect()
}

/// Fills a result's core from what a step measured, and returns the step's
/// own figures (stored under the suite's name). `indexed`: rows l.x indexed.
pub fn fill_result(
    r: &mut TestResult,
    def: &StepDef,
    spec: &StepSpec,
    out: &StepOutcome,
    indexed: Option<u64>,
) -> IbenchStep {
    let secs = out.secs.max(1e-9);
    let per = |n: u64| n as f64 / secs;
    let statements = out.insert_statements + out.delete_statements + out.queries;
    let target_ips = spec.rate_per_client.map(|rate| rate * spec.clients as f64);
    let ips = per(out.inserted_rows);
    let ib = IbenchStep {
        clients: spec.clients,
        rows_per_statement: spec.rows_per_statement,
        inserted_rows: out.inserted_rows,
        deleted_rows: out.deleted_rows,
        queries: out.queries,
        insert_statements: out.insert_statements,
        delete_statements: out.delete_statements,
        inserts_per_sec: ips,
        deletes_per_sec: per(out.deleted_rows),
        queries_per_sec: per(out.queries),
        indexed_rows_per_sec: indexed.map(per),
        target_ips,
        sla_missed: target_ips.is_some_and(|t| sla_missed(ips, t)),
        rows_per_query: if out.queries > 0 {
            out.rows_fetched as f64 / out.queries as f64
        } else {
            0.0
        },
        retries: IbenchRetries {
            insert: out.insert_retries,
            delete: out.delete_retries,
            query: out.query_retries,
            reconnects: out.reconnects,
        },
        insert_rt: rt_summary(&out.insert_hist),
        delete_rt: rt_summary(&out.delete_hist),
        query_rt: rt_summary(&out.query_hist),
        rate_percentiles: rate_percentiles(&out.per_second),
        client_rate_percentiles: if out.per_client.len() > 1 {
            out.per_client.iter().map(|s| rate_percentiles(s)).collect()
        } else {
            Vec::new()
        },
        index_secs: out.index_secs,
        per_second: out
            .per_second
            .iter()
            .map(|s| IbenchSecond {
                t: s.t,
                secs: s.secs,
                ips: s.ips,
                dps: s.dps,
                qps: s.qps,
                max_insert_us: s.max_insert_ns as f64 / 1000.0,
                max_delete_us: s.max_delete_ns as f64 / 1000.0,
                max_query_us: s.max_query_ns as f64 / 1000.0,
            })
            .collect(),
        ..Default::default()
    };
    let (qps, hist) = match def {
        StepDef::Query { .. } => (ib.queries_per_sec, &out.query_hist),
        StepDef::LoadX => (ib.indexed_rows_per_sec.unwrap_or(0.0), &out.insert_hist),
        _ => (ips, &out.insert_hist),
    };
    r.secs = out.secs;
    r.qps = qps;
    r.tps = per(statements);
    r.statements_per_sec = per(statements);
    r.reads = out.queries;
    r.writes = out.insert_statements + out.delete_statements;
    r.other = 0;
    r.events = statements;
    r.errors = out.insert_retries + out.delete_retries + out.query_retries;
    r.reconnects = out.reconnects;
    if out.reconnects > 0 && (out.insert_statements > 0 || out.delete_statements > 0) {
        r.warnings.push(format!(
            "{} connection(s) were lost and re-established: a write sent again afterwards may have been applied twice, so the tables may hold up to that many batches more or fewer rows than the queue keeps",
            out.reconnects
        ));
    }
    r.rows = out.rows_fetched;
    r.latency_us = Latency::from_histogram(&hist.hist);
    for (name, h, retries) in [
        ("insert", &out.insert_hist, out.insert_retries),
        ("delete", &out.delete_hist, out.delete_retries),
        ("query", &out.query_hist, out.query_retries),
    ] {
        if !h.is_empty() {
            r.ops.insert(
                name.to_string(),
                crate::results::OpStats {
                    count: h.len(),
                    per_sec: per(h.len()),
                    errors: retries,
                    latency_us: Latency::from_histogram(&h.hist),
                },
            );
        }
    }
    (r.status, r.reason) = crate::harness::step_status(&out.status);
    // The harness's status rule: a step that completed no statement is not
    // ok. l.x only builds indexes: it has no statements to count.
    if *def != StepDef::LoadX {
        r.step = Some(Box::new(out.facts.clone()));
    }
    ib
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sla_is_95_percent_of_the_target() {
        assert!(!sla_missed(95.0, 100.0));
        assert!(sla_missed(94.9, 100.0));
        assert!(!sla_missed(2000.0, 2000.0));
    }

    #[test]
    fn rate_percentiles_count_from_the_top() {
        let rates: Vec<f64> = (1..=100).map(|v| v as f64).collect();
        // Sorted high to low, the 50th of 100 from the top is 51 and the 99th
        // is 2 (a low rate), as the reference's np.sh picks them.
        assert_eq!(rate_at(&rates, 50), 51.0);
        assert_eq!(rate_at(&rates, 90), 11.0);
        assert_eq!(rate_at(&rates, 99), 2.0);
        let ten: Vec<f64> = (1..=10).map(|v| v as f64).collect();
        assert_eq!(rate_at(&ten, 99), 1.0, "position round(9.9) = 10");
        assert_eq!(rate_at(&ten, 1), 10.0, "position 0 is the first");
        assert_eq!(rate_at(&[], 50), 0.0);
        assert_eq!(rate_at(&[7.0], 99), 7.0);
        // Partial seconds are left out when there are whole ones.
        let s = |secs, ips| Sample {
            secs,
            ips,
            ..Default::default()
        };
        let p = rate_percentiles(&[s(1.0, 10.0), s(1.0, 20.0), s(0.3, 1000.0)]);
        assert_eq!(p[0].pct, 50);
        assert_eq!(p[0].ips, 20.0, "position round(2 x 0.5) = 1 of [20, 10]");
        assert_eq!(rate_percentiles(&[s(0.3, 5.0)])[0].ips, 5.0);
    }

    #[test]
    fn response_time_buckets_follow_the_reference() {
        let mut h = RtHist::default();
        for us in [100u64, 200, 900, 3_000, 20_000_000] {
            h.record(us * 1000);
        }
        let s = rt_summary(&h).unwrap();
        assert_eq!(s.buckets, [2, 1, 1, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(s.count, 5);
        assert!(rt_summary(&RtHist::default()).is_none());
    }

    #[test]
    fn query_steps_pace_inserts_and_shrink_small_batches() {
        let mut p = crate::suite::ibench::params::ibench_profile("ci").unwrap();
        p.query_secs = 2.0;
        let s = step_spec(
            &p,
            &StepDef::Query {
                kind: crate::suite::ibench::QueryKind::Point,
                rate: 20,
            },
            5,
        );
        assert_eq!(s.rows_per_client, 40);
        assert_eq!(s.rows_per_statement, 20);
        assert!(s.deletes);
        assert_eq!(s.rate_per_client, Some(20.0));
        let s = step_spec(&p, &StepDef::LoadX, 1);
        assert_eq!(s.rows_per_client, 50);
        assert!(s.create_indexes && !s.deletes);
    }
}
