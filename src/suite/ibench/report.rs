//! The Insert Benchmark part of a comparison (reference §5.4): for every name
//! (the base first) and step, the throughput over the repeats, its ratio to
//! the base, the insert rate of the query steps against their SLA, and the
//! per-op hardware figures. Every exporter renders this one model, through
//! the suite's report section in the sibling `report_export` file, which
//! builds the content from it; this file imports nothing of that one.

use std::collections::BTreeMap;

use serde::Serialize;

use super::results::{RtSummary, step_of};
use crate::report::compare::{self, Rules};
use crate::report::model::{HwFigures, HwRatio, RelativeQps, Shade};
use crate::report::stats;
use crate::results::{RunDoc, Status, TestResult};

/// The suite name of Insert Benchmark runs and results.
pub const SUITE: &str = "ibench";

/// Marks a query step's QPS whose insert rate missed the SLA ("can be ignored").
pub const MISSED_QPS: &str = "*";
/// Marks an insert rate below 95 % of its target.
pub const MISSED_IPS: &str = "!";

/// The Insert Benchmark tables of a comparison.
#[derive(Clone, Debug, Serialize)]
pub struct IbenchSection {
    /// The steps, in the order they ran (the columns of every table).
    pub steps: Vec<IbenchColumn>,
    /// One row per name with Insert Benchmark results: the base first (when
    /// it has any), then the targets.
    pub rows: Vec<IbenchRow>,
    /// The name the relative table divides by.
    pub base: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct IbenchColumn {
    pub step: String,
    /// A qr/qp step (queries under a paced insert rate).
    pub query: bool,
    /// What the throughput counts.
    pub unit: String,
    /// What the per-op hardware figures are divided by.
    pub per: String,
    /// qr/qp: the insert rate asked for, rows/s over all clients.
    pub target_ips: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct IbenchRow {
    pub name: String,
    /// One per step; `None` where the name has no result for it.
    pub cells: Vec<Option<IbenchCell>>,
}

/// One name at one step, over its repeats.
#[derive(Clone, Debug, Serialize)]
pub struct IbenchCell {
    /// `ok` when a repeat finished, else the status of the last one.
    pub status: Status,
    /// Geometric mean over the finished repeats: inserts/s (loads), indexed
    /// rows/s (l.x) or queries/s (qr/qp).
    pub throughput: Option<f64>,
    /// Means over the finished repeats, rows or queries per second, all clients.
    pub inserts_per_sec: Option<f64>,
    pub deletes_per_sec: Option<f64>,
    pub queries_per_sec: Option<f64>,
    /// A finished repeat's average insert rate was below 95 % of its target.
    pub sla_missed: bool,
    /// The colour of the throughput (reference §5.4 `tput.tab`): within the
    /// lowest quarter of the column's range red, the highest green, a step
    /// that missed its SLA grey. Absent with one row.
    pub shade: Option<Shade>,
    /// Throughput relative to the base (targets only).
    pub rel: Option<RelativeQps>,
    /// Per-op figures, the mean over the repeats that have them.
    pub hw: Option<HwFigures>,
    /// ... relative to the base.
    pub hw_rel: Option<Vec<HwRatio>>,
    /// KB written and writes per inserted row (reference §5.3 `wkbpi`, `wpi`).
    pub wkb_per_insert: Option<f64>,
    pub writes_per_insert: Option<f64>,
    /// `[t, rate]`: the step's throughput per second (mean over the repeats).
    pub per_second: Vec<[f64; 2]>,
    /// Statements per response-time bucket of reference §4.8
    /// ([`crate::suite::ibench::results::RT_BUCKETS_US`], then beyond), summed over the
    /// finished repeats: inserts, deletes, queries (absent: none ran).
    pub rt_buckets: [Option<Vec<u64>>; 3],
    pub repeats: Vec<IbenchRepeat>,
}

/// One stored step.
#[derive(Clone, Debug, Serialize)]
pub struct IbenchRepeat {
    pub run_id: String,
    pub engine_version: String,
    pub status: Status,
    pub clients: usize,
    pub secs: f64,
    pub throughput: f64,
    pub inserts_per_sec: f64,
    pub deletes_per_sec: f64,
    pub queries_per_sec: f64,
    pub target_ips: Option<f64>,
    pub sla_missed: bool,
    pub insert_p99_us: Option<f64>,
    pub delete_p99_us: Option<f64>,
    pub query_p99_us: Option<f64>,
    pub hw: Option<HwFigures>,
}

impl IbenchColumn {
    /// l.x: its rate counts the rows it indexed, while its per-second
    /// samples count only its few inserts.
    pub fn builds_indexes(&self) -> bool {
        self.per == "row"
    }
}

impl IbenchSection {
    pub fn column(&self, step: &str) -> Option<usize> {
        self.steps.iter().position(|c| c.step == step)
    }

    /// The rows after the base's (those with a relative value).
    pub fn targets(&self) -> impl Iterator<Item = &IbenchRow> {
        self.rows.iter().filter(move |r| r.name != self.base)
    }

    pub fn base_row(&self) -> Option<&IbenchRow> {
        self.rows.iter().find(|r| r.name == self.base)
    }

    pub fn query_columns(&self) -> impl Iterator<Item = (usize, &IbenchColumn)> {
        self.steps.iter().enumerate().filter(|(_, c)| c.query)
    }

    pub fn any_missed(&self) -> bool {
        self.rows
            .iter()
            .flat_map(|r| r.cells.iter().flatten())
            .any(|c| c.sla_missed)
    }
}

/// The stored steps of `doc`, in run order (the latest result of a step wins).
pub fn run_steps(doc: &RunDoc) -> Vec<&TestResult> {
    let mut v: Vec<&TestResult> = Vec::new();
    for t in doc.tests.iter().filter(|t| t.suite == SUITE) {
        match v.iter_mut().find(|x| x.test == t.test) {
            Some(x) => *x = t,
            None => v.push(t),
        }
    }
    v
}

pub(super) fn unit_of(t: &TestResult) -> (&'static str, &'static str) {
    match (t.group.as_str(), t.test.as_str()) {
        ("query", _) => ("queries/s", "query"),
        (_, "l.x") => ("indexed rows/s", "row"),
        _ => ("inserts/s", "insert"),
    }
}

fn repeat(run: &RunDoc, t: &TestResult) -> IbenchRepeat {
    let owned = step_of(t).unwrap_or_default();
    let ib = &owned;
    let p99 = |rt: &Option<RtSummary>| rt.as_ref().map(|r| r.p99);
    IbenchRepeat {
        run_id: run.run_id.clone(),
        engine_version: run.engine.version.clone(),
        status: t.status,
        clients: t.threads,
        secs: t.secs,
        throughput: t.qps,
        inserts_per_sec: ib.inserts_per_sec,
        deletes_per_sec: ib.deletes_per_sec,
        queries_per_sec: ib.queries_per_sec,
        target_ips: ib.target_ips,
        sla_missed: ib.sla_missed,
        insert_p99_us: p99(&ib.insert_rt),
        delete_p99_us: p99(&ib.delete_rt),
        query_p99_us: p99(&ib.query_rt),
        hw: t.hw.as_deref().and_then(HwFigures::from_cost),
    }
}

fn mean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = xs.collect();
    (!v.is_empty()).then(|| stats::mean(&v))
}

/// The step's primary rate per second, averaged over the repeats by second.
/// The last, partial second of a step is left out when it has whole ones (a
/// rate over a few milliseconds says little), as for the rate percentiles.
fn per_second(found: &[&TestResult], query: bool) -> Vec<[f64; 2]> {
    let mut by_t: BTreeMap<u64, (f64, f64, usize)> = BTreeMap::new();
    for t in found {
        let Some(ib) = step_of(t) else { continue };
        let whole = ib.per_second.iter().any(|s| s.secs >= 0.999);
        for s in ib.per_second.iter().filter(|s| !whole || s.secs >= 0.999) {
            // Whole seconds of different repeats meet at the same second.
            let key = if whole {
                s.t.round() as u64 * 1000
            } else {
                (s.t * 1000.0).round() as u64
            };
            let e = by_t.entry(key).or_default();
            e.0 = if whole { s.t.round() } else { s.t };
            e.1 += if query { s.qps } else { s.ips };
            e.2 += 1;
        }
    }
    by_t.into_values()
        .map(|(t, sum, n)| [t, sum / n as f64])
        .collect()
}

/// Bucket counts of statement kind `kind` (0 insert, 1 delete, 2 query), summed.
fn rt_buckets(found: &[&TestResult], kind: usize) -> Option<Vec<u64>> {
    let mut sum: Option<Vec<u64>> = None;
    for t in found {
        let Some(ib) = step_of(t) else { continue };
        let rt = [&ib.insert_rt, &ib.delete_rt, &ib.query_rt][kind];
        let Some(rt) = rt else { continue };
        let s = sum.get_or_insert_with(|| vec![0; rt.buckets.len()]);
        for (a, b) in s.iter_mut().zip(&rt.buckets) {
            *a += b;
        }
    }
    sum
}

fn cell(runs: &[(&RunDoc, &TestResult)], query: bool) -> IbenchCell {
    let repeats: Vec<IbenchRepeat> = runs.iter().map(|(r, t)| repeat(r, t)).collect();
    let ok: Vec<&IbenchRepeat> = repeats.iter().filter(|r| r.status == Status::Ok).collect();
    let ok_tests: Vec<&TestResult> = runs
        .iter()
        .filter(|(_, t)| t.status == Status::Ok)
        .map(|(_, t)| *t)
        .collect();
    let tput: Vec<f64> = ok.iter().map(|r| r.throughput).collect();
    IbenchCell {
        status: if ok.is_empty() {
            repeats.last().map_or(Status::Failed, |r| r.status)
        } else {
            Status::Ok
        },
        throughput: if ok.is_empty() {
            None
        } else {
            // A step with no work reads 0; keep it rather than no value.
            stats::geomean(&tput).or(Some(stats::mean(&tput)))
        },
        inserts_per_sec: mean(ok.iter().map(|r| r.inserts_per_sec)),
        deletes_per_sec: mean(ok.iter().map(|r| r.deletes_per_sec)),
        queries_per_sec: mean(ok.iter().map(|r| r.queries_per_sec)),
        sla_missed: ok.iter().any(|r| r.sla_missed),
        shade: None,
        rel: None,
        hw: compare::hw_mean(ok.iter().filter_map(|r| r.hw.as_ref())),
        hw_rel: None,
        wkb_per_insert: mean(ok_tests.iter().filter_map(|t| step_of(t)?.wkb_per_insert)),
        writes_per_insert: mean(
            ok_tests
                .iter()
                .filter_map(|t| step_of(t)?.writes_per_insert),
        ),
        per_second: per_second(&ok_tests, query),
        rt_buckets: [0, 1, 2].map(|k| rt_buckets(&ok_tests, k)),
        repeats,
    }
}

/// A name's stored steps by step name, each with the run it came from.
type ByStep<'a> = BTreeMap<String, Vec<(&'a RunDoc, &'a TestResult)>>;

/// The Insert Benchmark tables of `names` (the base first) from `runs`;
/// `None` when none of them ran it.
pub fn build(base: &str, names: &[&str], runs: &[RunDoc], rules: Rules) -> Option<IbenchSection> {
    let mut steps: Vec<IbenchColumn> = Vec::new();
    let mut found: Vec<(String, ByStep)> = Vec::new();
    for name in names {
        let mut m: ByStep = BTreeMap::new();
        for run in runs.iter().filter(|r| r.name == *name) {
            for t in run_steps(run) {
                if !steps.iter().any(|c| c.step == t.test) {
                    let (unit, per) = unit_of(t);
                    steps.push(IbenchColumn {
                        step: t.test.clone(),
                        query: t.group == "query",
                        unit: unit.into(),
                        per: per.into(),
                        target_ips: None,
                    });
                }
                m.entry(t.test.clone()).or_default().push((run, t));
            }
        }
        if !m.is_empty() {
            found.push((name.to_string(), m));
        }
    }
    if found.is_empty() {
        return None;
    }
    for c in &mut steps {
        c.target_ips = found
            .iter()
            .flat_map(|(_, m)| m.get(&c.step).into_iter().flatten())
            .find_map(|(_, t)| step_of(t)?.target_ips);
    }
    let mut rows: Vec<IbenchRow> = found
        .iter()
        .map(|(name, m)| IbenchRow {
            name: name.clone(),
            cells: steps
                .iter()
                .map(|c| m.get(&c.step).map(|f| cell(f, c.query)))
                .collect(),
        })
        .collect();
    let base_cells: Option<Vec<Option<IbenchCell>>> = rows
        .iter()
        .find(|r| r.name == base)
        .map(|r| r.cells.clone());
    if let Some(bc) = base_cells {
        let ok = |c: &IbenchCell| -> Vec<f64> {
            c.repeats
                .iter()
                .filter(|r| r.status == Status::Ok)
                .map(|r| r.throughput)
                .collect()
        };
        for row in rows.iter_mut().filter(|r| r.name != base) {
            // The steps of one target against the base pool their variance
            // (compare::relative_all).
            let sides: Vec<(usize, Vec<f64>, Vec<f64>)> = row
                .cells
                .iter()
                .zip(&bc)
                .enumerate()
                .filter_map(|(i, (c, b))| Some((i, ok(c.as_ref()?), ok(b.as_ref()?))))
                .collect();
            let pairs: Vec<(&[f64], &[f64])> = sides
                .iter()
                .map(|(_, t, b)| (t.as_slice(), b.as_slice()))
                .collect();
            let mut rels: Vec<Option<RelativeQps>> = vec![None; row.cells.len()];
            for ((i, _, _), rel) in sides.iter().zip(compare::relative_all(&pairs, rules)) {
                rels[*i] = rel;
            }
            for ((cell, b), rel) in row.cells.iter_mut().zip(&bc).zip(rels) {
                let (Some(cell), Some(b)) = (cell.as_mut(), b.as_ref()) else {
                    continue;
                };
                cell.rel = rel;
                cell.hw_rel = match (&cell.hw, &b.hw) {
                    (None, None) => None,
                    (t, b) => Some(compare::hw_rel(
                        t.as_ref().unwrap_or(&HwFigures::default()),
                        b.as_ref().unwrap_or(&HwFigures::default()),
                    )),
                };
            }
        }
    }
    if rows.len() > 1 {
        for col in 0..steps.len() {
            shade_column(&mut rows, col);
        }
    }
    Some(IbenchSection {
        steps,
        rows,
        base: base.to_string(),
    })
}

/// Reference §5.4 `tput.tab`: min over the column, max over the values that
/// kept their SLA; red within a quarter of the gap above the min (unless the
/// min is at least 80 % of the max), green within a quarter below the max,
/// grey for a missed SLA.
fn shade_column(rows: &mut [IbenchRow], col: usize) {
    let vals: Vec<(f64, bool)> = rows
        .iter()
        .filter_map(|r| r.cells[col].as_ref())
        .filter_map(|c| Some((c.throughput?, c.sla_missed)))
        .collect();
    if vals.len() < 2 {
        return;
    }
    let min = vals.iter().map(|v| v.0).fold(f64::INFINITY, f64::min);
    let max = vals
        .iter()
        .filter(|v| !v.1)
        .map(|v| v.0)
        .fold(f64::NEG_INFINITY, f64::max);
    let gap = max - min;
    for c in rows.iter_mut().filter_map(|r| r.cells[col].as_mut()) {
        let Some(v) = c.throughput else { continue };
        c.shade = if c.sla_missed {
            Some(Shade::Grey)
        } else if max.is_finite() && v >= max - gap / 4.0 {
            Some(Shade::Green)
        } else if max.is_finite() && v <= min + gap / 4.0 && min < 0.8 * max {
            Some(Shade::Red)
        } else {
            None
        };
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn step(name: &str, qps: f64, ips: f64, target: Option<f64>) -> TestResult {
        let mut t: TestResult = serde_json::from_value(serde_json::json!({
            "suite": "ibench", "test": name,
            "group": if target.is_some() { "query" } else { "load" },
            "threads": 1, "reported": true, "status": "ok", "started": "", "secs": 1.0,
            "warmup_secs": 0.0, "qps": qps, "qps_unit": "", "tps": 0.0,
            "statements_per_sec": 0.0, "reads": 0, "writes": 0, "other": 0, "events": 0,
            "errors": 0, "reconnects": 0, "rows": 0,
            "latency_us": {"avg": 0.0, "p50": 0.0, "p95": 0.0, "p99": 0.0, "max": 0.0},
            "per_second": []
        }))
        .unwrap();
        t.set_detail(
            "ibench",
            &crate::suite::ibench::results::IbenchStep {
                inserts_per_sec: ips,
                target_ips: target,
                sla_missed: target.is_some_and(|t| crate::suite::ibench::run::sla_missed(ips, t)),
                ..Default::default()
            },
        );
        t
    }

    pub(crate) fn doc(name: &str, run_id: &str, tests: Vec<TestResult>) -> RunDoc {
        let mut d: RunDoc = serde_json::from_value(serde_json::json!({
            "rqps_version": "0", "run_id": run_id, "name": name, "suite": "ibench",
            "status": "ok", "started": run_id, "command_line": [], "target": "",
            "engine": {"name": "e", "version": "1"}, "params": null,
            "host": serde_json::to_value(crate::harness::host::host()).unwrap()
        }))
        .unwrap();
        d.tests = tests;
        d
    }

    /// Two names: a (base) and b, b faster at l.i0 and missing qr100's SLA.
    pub(crate) fn two_runs() -> Vec<RunDoc> {
        vec![
            doc(
                "a",
                "1",
                vec![
                    step("l.i0", 1000.0, 1000.0, None),
                    step("qr100", 500.0, 100.0, Some(100.0)),
                ],
            ),
            doc(
                "b",
                "2",
                vec![
                    step("l.i0", 1500.0, 1500.0, None),
                    step("qr100", 800.0, 90.0, Some(100.0)),
                ],
            ),
        ]
    }

    #[test]
    fn model_compares_with_the_base_and_marks_the_sla() {
        let runs = two_runs();
        let s = build("a", &["a", "b"], &runs, Rules::default()).unwrap();
        assert_eq!(
            s.steps.iter().map(|c| c.step.as_str()).collect::<Vec<_>>(),
            ["l.i0", "qr100"]
        );
        assert_eq!(s.steps[1].target_ips, Some(100.0));
        let b = &s.rows[1];
        let l = b.cells[0].as_ref().unwrap();
        assert!((l.rel.as_ref().unwrap().ratio - 1.5).abs() < 1e-9);
        assert_eq!(l.shade, Some(Shade::Green));
        assert_eq!(s.rows[0].cells[0].as_ref().unwrap().shade, Some(Shade::Red));
        let q = b.cells[1].as_ref().unwrap();
        assert!(q.sla_missed);
        // A missed step is grey and leaves the column's max to the others.
        assert_eq!(q.shade, Some(Shade::Grey));
        assert_eq!(
            s.rows[0].cells[1].as_ref().unwrap().shade,
            Some(Shade::Green)
        );
        assert!(s.rows[0].cells[0].as_ref().unwrap().rel.is_none());
    }

    #[test]
    fn repeats_pool_and_failed_steps_keep_their_status() {
        let mut runs = two_runs();
        runs.push(doc("a", "3", vec![step("l.i0", 1210.0, 1210.0, None)]));
        let mut failed = step("qr100", 0.0, 0.0, Some(100.0));
        failed.status = crate::results::Status::Failed;
        runs[1].tests[1] = failed;
        let s = build("a", &["a", "b"], &runs, Rules::default()).unwrap();
        let a = s.rows[0].cells[0].as_ref().unwrap();
        assert_eq!(a.repeats.len(), 2);
        assert!((a.throughput.unwrap() - 1100.0).abs() < 1e-6, "geomean");
        let q = s.rows[1].cells[1].as_ref().unwrap();
        assert_eq!(q.status, Status::Failed);
        assert!(q.throughput.is_none() && q.rel.is_none());
        assert!(build("a", &["x"], &runs, Rules::default()).is_none());
    }

    #[test]
    fn per_second_series_and_buckets_pool_the_repeats() {
        use crate::suite::ibench::results::{IbenchSecond, RtSummary};
        let sec = |t: f64, secs: f64, ips: f64| IbenchSecond {
            t,
            secs,
            ips,
            ..Default::default()
        };
        let mut runs = Vec::new();
        for (id, ips, jitter) in [("1", 100.0, 0.0004), ("2", 300.0, -0.0003)] {
            let mut t = step("l.i1", ips, ips, None);
            let mut ib = step_of(&t).unwrap();
            // Two whole seconds a hair apart between repeats, then a partial one.
            ib.per_second = vec![
                sec(1.0 + jitter, 1.0, ips),
                sec(2.0 + jitter, 1.0, ips),
                sec(2.01, 0.01, 5.0),
            ];
            ib.insert_rt = Some(RtSummary {
                count: 3,
                buckets: vec![1, 2, 0],
                ..Default::default()
            });
            t.set_detail("ibench", &ib);
            runs.push(doc("a", id, vec![t]));
        }
        let s = build("a", &["a"], &runs, Rules::default()).unwrap();
        let c = s.rows[0].cells[0].as_ref().unwrap();
        assert_eq!(c.per_second, [[1.0, 200.0], [2.0, 200.0]]);
        assert_eq!(c.rt_buckets[0], Some(vec![2, 4, 0]));
        assert_eq!(c.rt_buckets[1], None);
    }
}
