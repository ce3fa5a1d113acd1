//! What LinkBench adds to reports: its groups in the generic tables (load
//! and request steps, ops/s), the line printed when a step ends, and its
//! part: load rates, per-operation tables of every request step with
//! throughput and latency relative to the base, and the counts check, in
//! every format and in the `rqps compare` gate.

use std::sync::Arc;

use serde::Serialize;

use super::detail::{Detail, KEY, OpFigures};
use crate::report::compare::{self, Gate, GateRow, Rules};
use crate::report::doc::{TCell, Table};
use crate::report::export::Block;
use crate::report::model::{RelativeQps, Report, Verdict};
use crate::report::section::{Data, DataTable, GroupDef, Input, Part, Record, Section, Val};
use crate::report::stats;
use crate::results::{RunDoc, TestResult};

/// The LinkBench report section.
pub struct LinkbenchSection;

pub static SECTION: LinkbenchSection = LinkbenchSection;

impl Section for LinkbenchSection {
    fn suite(&self) -> &'static str {
        KEY
    }
    fn groups(&self) -> Vec<GroupDef> {
        vec![
            GroupDef {
                key: "load",
                title: "LinkBench load (links/s)",
            },
            GroupDef {
                key: "request",
                title: "LinkBench requests (ops/s)",
            },
            GroupDef {
                key: "check",
                title: "LinkBench counts check",
            },
        ]
    }
    fn json_key(&self) -> Option<&'static str> {
        Some(KEY)
    }
    fn csv_columns(&self) -> &'static [&'static str] {
        &CSV_COLUMNS
    }
    fn build(&self, input: &Input) -> Option<Arc<dyn Part>> {
        build(input.base, input.names, input.runs, input.rules)
            .map(|p| Arc::new(p) as Arc<dyn Part>)
    }
}

/// The columns only LinkBench's CSV records fill.
pub const CSV_COLUMNS: [&str; 12] = [
    "lb_op",
    "lb_ops_per_sec",
    "lb_mean_us",
    "lb_p25_us",
    "lb_p50_us",
    "lb_p75_us",
    "lb_p95_us",
    "lb_p99_us",
    "lb_max_us",
    "lb_errors",
    "lb_rel_ops",
    "lb_rel_p99",
];

/// The LinkBench part of a comparison.
#[derive(Clone, Debug, Serialize)]
pub struct LbPart {
    pub base: String,
    /// The load of each name that has one (the last run's).
    pub loads: Vec<LoadRow>,
    /// Request steps in the order they ran.
    pub steps: Vec<StepPart>,
    /// The counts check of each name's runs: `ok`, or the reason it failed.
    pub checks: Vec<(String, String)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct LoadRow {
    pub name: String,
    pub nodes: u64,
    pub links: u64,
    pub nodes_per_sec: f64,
    pub links_per_sec: f64,
    pub links_per_node: f64,
    pub index_secs: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct StepPart {
    pub step: String,
    pub requesters: usize,
    /// One per operation and name (the base first), operations in mix order.
    pub rows: Vec<OpRow>,
}

/// One operation of one name in one step, over its repeats.
#[derive(Clone, Debug, Serialize)]
pub struct OpRow {
    pub op: String,
    pub name: String,
    pub repeats: usize,
    /// Geometric mean over the repeats.
    pub ops_per_sec: f64,
    /// Arithmetic means over the repeats.
    pub mean_us: f64,
    pub p25_us: f64,
    pub p50_us: f64,
    pub p75_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub count: u64,
    pub errors: u64,
    /// Throughput relative to the base (targets only).
    pub rel: Option<RelativeQps>,
    /// Latency relative to the base: above 1 is slower.
    pub rel_mean: Option<f64>,
    pub rel_p50: Option<f64>,
    pub rel_p99: Option<f64>,
    /// The repeats' ops/s, for the statistics.
    #[serde(skip)]
    pub samples: Vec<f64>,
}

fn detail(t: &TestResult) -> Detail {
    t.detail(KEY).unwrap_or_default()
}

fn lb_tests(run: &RunDoc) -> impl Iterator<Item = &TestResult> {
    run.tests.iter().filter(|t| t.suite == KEY)
}

fn ratio(t: f64, b: f64) -> Option<f64> {
    (b > 0.0 && t > 0.0).then(|| t / b)
}

/// One operation's row of a name in a step: its repeats' figures pooled
/// (throughput as a geometric mean, latencies as means, counts summed).
fn op_row(op: &str, name: &str, repeats: &[Vec<OpFigures>]) -> OpRow {
    let figs: Vec<&OpFigures> = repeats
        .iter()
        .filter_map(|r| r.iter().find(|o| o.op == op))
        .collect();
    let n = figs.len().max(1) as f64;
    let avg = |f: fn(&OpFigures) -> f64| figs.iter().map(|o| f(o)).sum::<f64>() / n;
    let samples: Vec<f64> = figs
        .iter()
        .map(|o| o.ops_per_sec)
        .filter(|v| *v > 0.0)
        .collect();
    OpRow {
        op: op.to_string(),
        name: name.to_string(),
        repeats: figs.len(),
        ops_per_sec: stats::geomean(&samples).unwrap_or(0.0),
        mean_us: avg(|o| o.mean_us),
        p25_us: avg(|o| o.p25_us),
        p50_us: avg(|o| o.p50_us),
        p75_us: avg(|o| o.p75_us),
        p95_us: avg(|o| o.p95_us),
        p99_us: avg(|o| o.p99_us),
        max_us: figs.iter().map(|o| o.max_us).fold(0.0, f64::max),
        count: figs.iter().map(|o| o.count).sum(),
        errors: figs.iter().map(|o| o.errors).sum(),
        rel: None,
        rel_mean: None,
        rel_p50: None,
        rel_p99: None,
        samples,
    }
}

/// Builds the part from every run of `names`; `None` when none has LinkBench results.
pub fn build(base: &str, names: &[&str], runs: &[RunDoc], rules: Rules) -> Option<LbPart> {
    let mut loads = Vec::new();
    let mut checks = Vec::new();
    let mut steps: Vec<StepPart> = Vec::new();
    let mut any = false;
    for name in names {
        let mine: Vec<&RunDoc> = runs.iter().filter(|r| r.name == *name).collect();
        let mut load: Option<LoadRow> = None;
        // step -> op -> repeats' figures
        let mut by_step: Vec<(String, usize, Vec<Vec<OpFigures>>)> = Vec::new();
        for run in &mine {
            for t in lb_tests(run) {
                any = true;
                let d = detail(t);
                if let (Some(l), true) = (&d.load, t.status == crate::results::Status::Ok) {
                    match (t.test.as_str(), load.as_mut()) {
                        ("index", Some(row)) => row.index_secs = l.index_secs,
                        ("load", _) => {
                            load = Some(LoadRow {
                                name: name.to_string(),
                                nodes: l.nodes,
                                links: l.links,
                                nodes_per_sec: l.nodes_per_sec,
                                links_per_sec: l.links_per_sec,
                                links_per_node: l.mean_out_degree,
                                index_secs: None,
                            })
                        }
                        _ => {}
                    }
                }
                if t.test == "check" {
                    checks.push((
                        name.to_string(),
                        if t.status == crate::results::Status::Ok {
                            "ok".to_string()
                        } else {
                            t.reason.clone().unwrap_or_else(|| t.status.to_string())
                        },
                    ));
                }
                if let (Some(q), true) = (&d.request, t.status == crate::results::Status::Ok) {
                    match by_step.iter_mut().find(|s| s.0 == t.test) {
                        Some(s) => s.2.push(q.ops.clone()),
                        None => by_step.push((t.test.clone(), q.requesters, vec![q.ops.clone()])),
                    }
                }
            }
        }
        loads.extend(load);
        for (step, requesters, repeats) in by_step {
            let idx = match steps.iter().position(|s| s.step == step) {
                Some(i) => i,
                None => {
                    steps.push(StepPart {
                        step: step.clone(),
                        requesters,
                        rows: Vec::new(),
                    });
                    steps.len() - 1
                }
            };
            let ops: Vec<String> = repeats
                .first()
                .map(|r| r.iter().map(|o| o.op.clone()).collect())
                .unwrap_or_default();
            for op in ops {
                steps[idx].rows.push(op_row(&op, name, &repeats));
            }
        }
    }
    if !any {
        return None;
    }
    // Relative figures of the targets against the base, per step and operation.
    for s in &mut steps {
        let base_rows: Vec<OpRow> = s.rows.iter().filter(|r| r.name == base).cloned().collect();
        // The operations of one target in a step pool their variance
        // (compare::relative_all).
        let mut rels: Vec<Option<RelativeQps>> = vec![None; s.rows.len()];
        let mut targets: Vec<String> = s
            .rows
            .iter()
            .filter(|r| r.name != base)
            .map(|r| r.name.clone())
            .collect();
        targets.sort();
        targets.dedup();
        for t in &targets {
            let idx: Vec<(usize, &OpRow)> = s
                .rows
                .iter()
                .enumerate()
                .filter(|(_, r)| &r.name == t)
                .filter_map(|(i, r)| Some((i, base_rows.iter().find(|b| b.op == r.op)?)))
                .collect();
            let pairs: Vec<(&[f64], &[f64])> = idx
                .iter()
                .map(|(i, b)| (s.rows[*i].samples.as_slice(), b.samples.as_slice()))
                .collect();
            let out = compare::relative_all(&pairs, rules);
            for ((i, _), rel) in idx.iter().zip(out) {
                rels[*i] = rel;
            }
        }
        for (r, rel) in s.rows.iter_mut().zip(rels) {
            if r.name == base {
                continue;
            }
            let Some(b) = base_rows.iter().find(|b| b.op == r.op) else {
                continue;
            };
            r.rel = rel;
            r.rel_mean = ratio(r.mean_us, b.mean_us);
            r.rel_p50 = ratio(r.p50_us, b.p50_us);
            r.rel_p99 = ratio(r.p99_us, b.p99_us);
        }
        // Operations in mix order, the names in the report's order within each.
        let order = |op: &str| super::dist::OPS.iter().position(|o| *o == op).unwrap_or(99);
        let name_at = |n: &str| names.iter().position(|x| *x == n).unwrap_or(99);
        s.rows.sort_by_key(|r| (order(&r.op), name_at(&r.name)));
    }
    Some(LbPart {
        base: base.to_string(),
        loads,
        steps,
        checks,
    })
}

impl Part for LbPart {
    fn title(&self) -> String {
        "LinkBench".into()
    }

    fn blocks(&self, _report: &Report, _charts: bool) -> Vec<Block> {
        let mut out = vec![
            Block::Heading(2, "LinkBench".into()),
            Block::Para(format!(
                "Per operation and request step: the geometric mean of ops/s over the repeats, \
latency percentiles in microseconds (means over the repeats). Relative columns divide by {}: \
rel ops/s above 1 is faster, rel p50/p99 above 1 is slower.",
                self.base
            )),
        ];
        if !self.loads.is_empty() {
            out.push(Block::Heading(3, "Load".into()));
            out.push(Block::Table(Table {
                header: [
                    "name",
                    "nodes",
                    "nodes/s",
                    "links",
                    "links/s",
                    "links/node",
                    "index s",
                ]
                .map(String::from)
                .to_vec(),
                rows: self
                    .loads
                    .iter()
                    .map(|l| {
                        vec![
                            TCell::from(l.name.clone()),
                            Val::Int(l.nodes as i64).into(),
                            Val::Fixed(l.nodes_per_sec, 0).into(),
                            Val::Int(l.links as i64).into(),
                            Val::Fixed(l.links_per_sec, 0).into(),
                            Val::Fixed(l.links_per_node, 2).into(),
                            Val::fixed(l.index_secs, 1, Val::Empty).into(),
                        ]
                    })
                    .collect(),
                left: 1,
            }));
        }
        for s in &self.steps {
            out.push(Block::Heading(
                3,
                format!("{} ({} requesters): per operation", s.step, s.requesters),
            ));
            out.push(Block::Table(Table {
                header: [
                    "op",
                    "name",
                    "ops/s",
                    "rel ops/s",
                    "mean us",
                    "p25",
                    "p50",
                    "p75",
                    "p95",
                    "p99",
                    "max",
                    "errors",
                    "rel p50",
                    "rel p99",
                ]
                .map(String::from)
                .to_vec(),
                rows: s
                    .rows
                    .iter()
                    .map(|r| {
                        vec![
                            TCell::from(r.op.clone()),
                            r.name.clone().into(),
                            Val::Fixed(r.ops_per_sec, 1).into(),
                            match &r.rel {
                                Some(rel) => TCell::shaded(
                                    format!("{:.2}{}", rel.ratio, rel.verdict.mark()),
                                    Some(rel.shade),
                                ),
                                None => TCell::from(""),
                            },
                            Val::Fixed(r.mean_us, 1).into(),
                            Val::Fixed(r.p25_us, 1).into(),
                            Val::Fixed(r.p50_us, 1).into(),
                            Val::Fixed(r.p75_us, 1).into(),
                            Val::Fixed(r.p95_us, 1).into(),
                            Val::Fixed(r.p99_us, 1).into(),
                            Val::Fixed(r.max_us, 1).into(),
                            Val::Int(r.errors as i64).into(),
                            Val::fixed(r.rel_p50, 2, Val::Empty).into(),
                            Val::fixed(r.rel_p99, 2, Val::Empty).into(),
                        ]
                    })
                    .collect(),
                left: 2,
            }));
        }
        if !self.checks.is_empty() {
            out.push(Block::Heading(3, "Counts check".into()));
            out.push(Block::Bullets(
                self.checks
                    .iter()
                    .map(|(n, c)| format!("{n}: {c}"))
                    .collect(),
            ));
        }
        out
    }

    fn data(&self, _report: &Report) -> Data {
        let mut records = Vec::new();
        let mut tables = Vec::new();
        let rel = |v: Option<f64>| Val::fixed(v, 2, Val::Empty);
        for s in &self.steps {
            for r in &s.rows {
                let mut rec: Record = vec![
                    ("target", r.name.as_str().into()),
                    ("suite", KEY.into()),
                    ("group", "request".into()),
                    ("test", s.step.as_str().into()),
                    ("threads", Val::Int(s.requesters as i64)),
                    ("qps", Val::Num(r.ops_per_sec)),
                ];
                rec.extend(CSV_COLUMNS.iter().copied().zip([
                    r.op.as_str().into(),
                    Val::Num(r.ops_per_sec),
                    Val::Num(r.mean_us),
                    Val::Num(r.p25_us),
                    Val::Num(r.p50_us),
                    Val::Num(r.p75_us),
                    Val::Num(r.p95_us),
                    Val::Num(r.p99_us),
                    Val::Num(r.max_us),
                    Val::Int(r.errors as i64),
                    Val::num(r.rel.as_ref().map(|x| x.ratio)),
                    Val::num(r.rel_p99),
                ]));
                records.push(rec);
            }
            tables.push(DataTable {
                title: Some(format!("# linkbench {}", s.step)),
                header: [
                    "op", "name", "ops/s", "mean_us", "p25", "p50", "p75", "p95", "p99", "max",
                    "errors", "rel_ops", "rel_p50", "rel_p99",
                ]
                .map(String::from)
                .to_vec(),
                rows: s
                    .rows
                    .iter()
                    .map(|r| {
                        vec![
                            r.op.as_str().into(),
                            r.name.as_str().into(),
                            Val::Fixed(r.ops_per_sec, 1),
                            Val::Fixed(r.mean_us, 1),
                            Val::Fixed(r.p25_us, 1),
                            Val::Fixed(r.p50_us, 1),
                            Val::Fixed(r.p75_us, 1),
                            Val::Fixed(r.p95_us, 1),
                            Val::Fixed(r.p99_us, 1),
                            Val::Fixed(r.max_us, 1),
                            Val::Int(r.errors as i64),
                            rel(r.rel.as_ref().map(|x| x.ratio)),
                            rel(r.rel_p50),
                            rel(r.rel_p99),
                        ]
                    })
                    .collect(),
            });
        }
        Data { records, tables }
    }

    /// Per operation of each request step, the first target's throughput
    /// against the base. Operations the base ran fewer than
    /// [`GATE_MIN_COUNT`] times are shown but never fail the gate (their
    /// rate is noise).
    fn gate(&self, report: &Report, threshold: f64, gate: &mut Gate) {
        let Some(target) = report.targets.first() else {
            return;
        };
        // A target whose counts check failed fails the gate, whatever its speed.
        if let Some((_, why)) = self.checks.iter().find(|(n, c)| n == target && c != "ok") {
            gate.rows.push(GateRow {
                label: format!("{KEY} counts check: {why}"),
                base_qps: 1.0,
                target_qps: 0.0,
                ratio: 0.0,
                ci: None,
                p: None,
                verdict: Verdict::Slower,
                fails: true,
            });
        }
        for s in &self.steps {
            for b in s.rows.iter().filter(|r| r.name == self.base) {
                let label = format!("{KEY} {} {}", s.step, b.op);
                let Some((t, rel)) = s
                    .rows
                    .iter()
                    .find(|r| &r.name == target && r.op == b.op)
                    .and_then(|t| Some((t, t.rel.as_ref()?)))
                else {
                    // A rare operation (a few in a short step) that the
                    // target happened not to draw is sampling, not a
                    // missing result: the same count that lets a row fail
                    // the gate decides.
                    if b.ops_per_sec > 0.0 && b.count >= GATE_MIN_COUNT {
                        gate.missing.push(label);
                    } else {
                        gate.not_compared.push(label);
                    }
                    continue;
                };
                gate.rows.push(GateRow {
                    label,
                    base_qps: b.ops_per_sec,
                    target_qps: t.ops_per_sec,
                    ratio: rel.ratio,
                    ci: rel.ci_low.zip(rel.ci_high),
                    p: rel.p,
                    verdict: rel.verdict,
                    fails: b.count >= GATE_MIN_COUNT
                        && compare::gate_fails(rel, threshold, report.noise_floor),
                });
            }
        }
    }
}

/// Fewest base operations for a per-operation gate row to fail.
pub const GATE_MIN_COUNT: u64 = 1000;

fn opt(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".into())
}

/// The one line printed when a step ends.
pub fn result_line(label: &str, r: &TestResult) -> String {
    if r.status != crate::results::Status::Ok {
        return format!(
            "{label:>8}  {}: {}",
            r.status,
            r.reason.clone().unwrap_or_default()
        );
    }
    let d: Detail = r.detail(KEY).unwrap_or_default();
    let mut line = if let Some(c) = &d.check {
        format!(
            "{label:>8}  counttable agrees with the visible links for all {} (id1, link_type) pairs",
            c.pairs
        )
    } else if let Some(l) = &d.load {
        match l.index_secs {
            Some(s) => format!("{label:>8}  id1_type over {} links in {s:.1} s", l.links),
            None => format!(
                "{label:>8}  {} nodes at {:.0} nodes/s, {} links at {:.0} links/s, {} counts, {:.2} links/node, in {:.1} s",
                l.nodes,
                l.nodes_per_sec,
                l.links,
                l.links_per_sec,
                l.counts,
                l.mean_out_degree,
                r.secs
            ),
        }
    } else if let Some(q) = &d.request {
        format!(
            "{label:>8}  {:>10.1} ops/s  p95 {:.1} us  retries {}  failures {}  list rows {}",
            q.ops_per_sec, r.latency_us.p95, q.stats.retries, q.stats.failures, q.stats.list_rows
        )
    } else {
        format!("{label:>8}  {:.1} {}", r.qps, r.qps_unit)
    };
    if let Some(hw) = &r.hw {
        line.push_str(&format!(
            "  cpu/o {} us (client {}, server {})",
            opt(hw.cpu_us_per_op),
            opt(hw.client_cpu_us_per_op),
            opt(hw.server_cpu_us_per_op)
        ));
    }
    line
}
