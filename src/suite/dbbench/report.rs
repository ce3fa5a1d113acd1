//! The dbbench part of a report: per step and name, the figures of
//! db_bench's summary table (ops/s, MB/s, LSM size, compaction GB written,
//! write amplification, compaction MB/s and seconds, µs/op and its
//! percentiles, uptime, stall %, stall count, user and system CPU, RSS)
//! with ops/s relative to the base, and the LSM shape before each step.
//! The generic test tables carry the measured steps too (relative ops/s
//! with its statistics, and `rqps compare`'s gate).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::steps::{KEY, StepFigures, test_names};
use crate::report::doc::{Block, TCell, Table};
use crate::report::model::Report;
use crate::report::section::{Data, DataTable, GroupDef, Input, Part, Section, Val};
use crate::results::RunDoc;

pub struct DbbenchSection;
pub static SECTION: DbbenchSection = DbbenchSection;

impl Section for DbbenchSection {
    fn suite(&self) -> &'static str {
        KEY
    }
    fn groups(&self) -> Vec<GroupDef> {
        vec![GroupDef {
            key: "dbbench",
            title: "db_bench standard sequence (ops/s)",
        }]
    }
    fn test_positions(&self, _base_runs: &[&RunDoc]) -> Option<HashMap<String, usize>> {
        Some(
            test_names()
                .into_iter()
                .enumerate()
                .map(|(i, n)| (n.to_string(), i))
                .collect(),
        )
    }
    fn json_key(&self) -> Option<&'static str> {
        Some(KEY)
    }
    fn csv_columns(&self) -> &'static [&'static str] {
        &CSV_COLUMNS
    }
    fn build(&self, input: &Input) -> Option<Arc<dyn Part>> {
        build(input.base, input.names, input.runs).map(|p| Arc::new(p) as Arc<dyn Part>)
    }
}

/// db_bench's `report.tsv` summary columns, in its order, after the test
/// and the name (and version).
pub const TSV_COLUMNS: [&str; 20] = [
    "ops_sec", "mb_sec", "lsm_sz", "c_wgb", "w_amp", "c_mbps", "c_wsecs", "c_csecs", "usec_op",
    "p50", "p99", "p99.9", "p99.99", "pmax", "uptime", "stall%", "Nstall", "u_cpu", "s_cpu", "rss",
];

/// The columns only dbbench's CSV records fill.
pub const CSV_COLUMNS: [&str; 12] = [
    "db_test",
    "db_ops_per_sec",
    "db_rel_ops",
    "db_usec_op",
    "db_p99_9_us",
    "db_p99_99_us",
    "db_w_amp",
    "db_stall_pct",
    "db_u_cpu_us_per_op",
    "db_s_cpu_us_per_op",
    "db_rss_mb",
    "db_lsm_before",
];

/// One step of one name (its last run's).
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub test: String,
    pub name: String,
    pub version: String,
    pub threads: usize,
    pub status: String,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    /// ops/s divided by the base's for the same step.
    pub rel_ops: Option<f64>,
    pub figures: StepFigures,
}

#[derive(Clone, Debug, Serialize)]
pub struct DbbenchPart {
    pub base: String,
    /// By step in sequence order, then by name in report order.
    pub rows: Vec<Row>,
}

fn build(base: &str, names: &[&str], runs: &[RunDoc]) -> Option<DbbenchPart> {
    let mut rows: Vec<Row> = Vec::new();
    for name in names {
        let Some(run) = runs
            .iter()
            .rev()
            .find(|r| r.name == *name && r.suite == KEY)
        else {
            continue;
        };
        for t in run.tests.iter().filter(|t| t.suite == KEY) {
            let Some(figures) = t.detail::<StepFigures>(KEY) else {
                continue;
            };
            rows.push(Row {
                test: t.test.clone(),
                name: name.to_string(),
                version: run.engine.version.clone(),
                threads: t.threads,
                status: t.status.to_string(),
                p50_us: t.latency_us.p50,
                p99_us: t.latency_us.p99,
                max_us: t.latency_us.max,
                rel_ops: None,
                figures,
            });
        }
    }
    if rows.is_empty() {
        return None;
    }
    let order: Vec<&str> = test_names();
    let pos = |t: &str| order.iter().position(|n| *n == t).unwrap_or(usize::MAX);
    let name_pos = |n: &str| names.iter().position(|x| *x == n).unwrap_or(usize::MAX);
    rows.sort_by_key(|r| (pos(&r.test), name_pos(&r.name)));
    let base_ops: HashMap<String, f64> = rows
        .iter()
        .filter(|r| r.name == base)
        .map(|r| (r.test.clone(), r.figures.ops_per_sec))
        .collect();
    for r in &mut rows {
        if let Some(b) = base_ops.get(&r.test).filter(|b| **b > 0.0) {
            r.rel_ops = (r.figures.ops > 0).then(|| r.figures.ops_per_sec / b);
        }
    }
    Some(DbbenchPart {
        base: base.to_string(),
        rows,
    })
}

const GB: f64 = 1024.0 * 1024.0 * 1024.0;

/// A figure with two decimals, empty where there is none.
fn v2(v: Option<f64>) -> Val {
    Val::fixed(v, 2, Val::Empty)
}

/// db_bench's summary figures of a row, in [`TSV_COLUMNS`] order.
fn summary(r: &Row) -> Vec<Val> {
    let f = &r.figures;
    let w = f.work.unwrap_or_default();
    let lsm = f
        .lsm_after
        .as_ref()
        .map(|s| s.bytes() as f64 / GB)
        .unwrap_or(0.0);
    vec![
        Val::Fixed(f.ops_per_sec, 0),
        Val::Fixed(f.mb_per_sec, 1),
        Val::Fixed(lsm, 3),
        Val::Fixed(w.compact_write_bytes as f64 / GB, 3),
        v2(f.w_amp),
        Val::Fixed(
            w.compact_write_bytes as f64 / 1_048_576.0 / f.uptime_secs.max(1e-9),
            1,
        ),
        Val::Fixed(w.compact_micros as f64 / 1e6, 1),
        Val::Fixed(w.compact_cpu_micros as f64 / 1e6, 1),
        Val::Fixed(f.micros_per_op, 2),
        Val::Fixed(r.p50_us, 1),
        Val::Fixed(r.p99_us, 1),
        Val::Fixed(f.p99_9_us, 1),
        Val::Fixed(f.p99_99_us, 1),
        Val::Fixed(r.max_us, 0),
        Val::Fixed(f.uptime_secs, 1),
        v2(f.stall_pct),
        Val::Int(w.stall_count as i64),
        Val::Fixed(f.user_cpu_secs, 1),
        Val::Fixed(f.sys_cpu_secs, 1),
        Val::Fixed(f.rss_bytes.unwrap_or(0) as f64 / GB, 3),
    ]
}

fn brief(s: &Option<crate::engine::kv::LsmShape>) -> String {
    s.as_ref().map(|s| s.brief()).unwrap_or_default()
}

impl Part for DbbenchPart {
    fn title(&self) -> String {
        "db_bench".into()
    }

    fn blocks(&self, _report: &Report, _charts: bool) -> Vec<Block> {
        let mut out = vec![
            Block::Heading(2, "db_bench standard sequence".into()),
            Block::Para(format!(
                "Per step (each name's last run): ops/s and its ratio to {} (above 1 is faster), \
µs per op and percentiles, write amplification (compaction bytes written / flush bytes), \
stall %, user+system CPU µs per op of the process (engine inside), RSS, and the LSM shape \
before the step (files and MB per level, memtable).",
                self.base
            )),
        ];
        out.push(Block::Table(Table {
            header: [
                "test",
                "name",
                "ops/s",
                "rel",
                "us/op",
                "p99",
                "p99.99",
                "w-amp",
                "stall%",
                "cpu us/op",
                "rss MB",
                "LSM before",
            ]
            .map(String::from)
            .to_vec(),
            rows: self
                .rows
                .iter()
                .map(|r| {
                    let f = &r.figures;
                    let cpu = match (f.user_cpu_us_per_op, f.sys_cpu_us_per_op) {
                        (Some(u), Some(s)) => format!("{:.1}+{:.1}", u, s),
                        _ => String::new(),
                    };
                    vec![
                        TCell::from(r.test.clone()),
                        r.name.clone().into(),
                        if r.figures.ops > 0 {
                            format!("{:.0}", f.ops_per_sec)
                        } else {
                            r.status.clone()
                        }
                        .into(),
                        v2(r.rel_ops).into(),
                        Val::Fixed(f.micros_per_op, 2).into(),
                        Val::Fixed(r.p99_us, 1).into(),
                        Val::Fixed(f.p99_99_us, 1).into(),
                        v2(f.w_amp).into(),
                        v2(f.stall_pct).into(),
                        cpu.into(),
                        Val::Fixed(f.rss_bytes.unwrap_or(0) as f64 / 1_048_576.0, 0).into(),
                        TCell::from(brief(&f.lsm_before)),
                    ]
                })
                .collect(),
            left: 2,
        }));
        out
    }

    fn data(&self, _report: &Report) -> Data {
        let records = self
            .rows
            .iter()
            .map(|r| {
                let f = &r.figures;
                vec![
                    ("target", r.name.as_str().into()),
                    ("db_test", r.test.as_str().into()),
                    ("db_ops_per_sec", Val::Fixed(f.ops_per_sec, 1)),
                    ("db_rel_ops", v2(r.rel_ops)),
                    ("db_usec_op", Val::Fixed(f.micros_per_op, 3)),
                    ("db_p99_9_us", Val::Fixed(f.p99_9_us, 1)),
                    ("db_p99_99_us", Val::Fixed(f.p99_99_us, 1)),
                    ("db_w_amp", v2(f.w_amp)),
                    ("db_stall_pct", v2(f.stall_pct)),
                    ("db_u_cpu_us_per_op", v2(f.user_cpu_us_per_op)),
                    ("db_s_cpu_us_per_op", v2(f.sys_cpu_us_per_op)),
                    (
                        "db_rss_mb",
                        Val::Fixed(f.rss_bytes.unwrap_or(0) as f64 / 1_048_576.0, 1),
                    ),
                    ("db_lsm_before", brief(&f.lsm_before).into()),
                ]
            })
            .collect();
        let mut header: Vec<String> = ["test", "name", "version"].map(String::from).to_vec();
        header.extend(TSV_COLUMNS.iter().map(|c| c.to_string()));
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let mut row: Vec<Val> = vec![
                    r.test.as_str().into(),
                    r.name.as_str().into(),
                    r.version.as_str().into(),
                ];
                row.extend(summary(r));
                row
            })
            .collect();
        Data {
            records,
            tables: vec![DataTable {
                title: None,
                header,
                rows,
            }],
        }
    }
}
