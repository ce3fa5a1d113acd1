//! The Insert Benchmark part of every format (reference §5.4): in the
//! readable document the throughput table, the relative table, the insert
//! rate during the query steps with SLA misses marked, charts, and the per-op
//! hardware figures; the records and the reference's TSV tables as data, the
//! rows of the `rqps compare` gate, the end-of-run table, and the suite's
//! report [`Section`] ([`SECTION`]).

use std::sync::Arc;

use super::report::{
    IbenchCell, IbenchSection, MISSED_IPS, MISSED_QPS, SUITE, build, run_steps, unit_of,
};
use super::results::{RtSummary, step_of};
use crate::report::compare::Rules;
use crate::report::compare::{Gate, GateRow, gate_fails, hw_ratio};
use crate::report::export::{Block, Chart, Plot, TCell, Table, hw_cells, qps, rel_text, sig3};
use crate::report::model::{HwFigures, Report, Shade, Verdict};
use crate::report::section::{Data, DataTable, Input, Part, Record, Section, Val};
use crate::report::svg::{self, Bar, BarChart, Line, LineChart};
use crate::results::{RunDoc, Status, TestResult};

/// A chart as data, drawn by the HTML exporter; `small` ones flow side by side.
fn chart(plot: Plot, small: bool) -> Block {
    Block::Chart(Chart::Plot { plot, small })
}

fn header(first: &str, cols: impl Iterator<Item = String>) -> Vec<String> {
    std::iter::once(first.to_string()).chain(cols).collect()
}

/// The step's status where it has no value, `-` where it did not run.
fn missing(c: Option<&IbenchCell>) -> TCell {
    match c {
        Some(c) => c.status.as_str().into(),
        None => "-".into(),
    }
}

/// The three tables with their headings and notes; with `charts`, the bar
/// charts follow the relative and insert-rate tables.
pub fn tables(s: &IbenchSection, charts: bool) -> Vec<Block> {
    let mut out = Vec::new();
    let cols = header("name", s.steps.iter().map(|c| c.step.clone()));
    let tput = Table {
        header: cols.clone(),
        rows: s
            .rows
            .iter()
            .map(|r| {
                let mut cells: Vec<TCell> = vec![r.name.as_str().into()];
                cells.extend(r.cells.iter().map(|c| {
                    match c.as_ref().and_then(|x| Some((x, x.throughput?))) {
                        Some((c, v)) if c.sla_missed => {
                            TCell::shaded(format!("{}{MISSED_QPS}", qps(v)), c.shade)
                        }
                        Some((c, v)) => TCell::shaded(Val::Qps(v), c.shade),
                        None => missing(c.as_ref()),
                    }
                }));
                cells
            })
            .collect(),
        left: 1,
    };
    out.push(Block::Heading(
        3,
        "Throughput (l.i0, l.i1, l.i2: inserts/s; l.x: indexed rows/s; qr/qp: queries/s)".into(),
    ));
    out.push(Block::Table(tput));
    if s.any_missed() {
        out.push(Block::Para(format!(
            "{MISSED_QPS} the step missed its insert-rate SLA: its queries/s can be ignored."
        )));
    }

    let targets: Vec<_> = s.targets().collect();
    if s.base_row().is_some() && !targets.is_empty() {
        out.push(Block::Heading(
            3,
            format!("Throughput relative to {}", s.base),
        ));
        out.push(Block::Table(Table {
            header: cols.clone(),
            rows: targets
                .iter()
                .map(|r| {
                    let mut cells: Vec<TCell> = vec![r.name.as_str().into()];
                    cells.extend(r.cells.iter().map(|c| {
                        match c.as_ref().and_then(|c| c.rel.as_ref()) {
                            Some(rel) => TCell::shaded(
                                Val::Relative(rel.ratio, rel.verdict),
                                Some(rel.shade),
                            ),
                            None => "-".into(),
                        }
                    }));
                    cells
                })
                .collect(),
            left: 1,
        }));
        if charts {
            out.push(chart(ibench_relative_chart(s), false));
        }
    }

    let q: Vec<usize> = s.query_columns().map(|(i, _)| i).collect();
    if !q.is_empty() {
        out.push(Block::Heading(
            3,
            "Insert rate during queries (rows/s, all clients)".into(),
        ));
        let mut rows: Vec<Vec<TCell>> = s
            .rows
            .iter()
            .map(|r| {
                let mut cells: Vec<TCell> = vec![r.name.as_str().into()];
                for &i in &q {
                    let c = r.cells[i].as_ref();
                    cells.push(match c.and_then(|x| Some((x, x.inserts_per_sec?))) {
                        Some((c, v)) if c.sla_missed => {
                            TCell::shaded(format!("{}{MISSED_IPS}", qps(v)), Some(Shade::Red))
                        }
                        Some((_, v)) => Val::Qps(v).into(),
                        None => missing(c),
                    });
                }
                cells
            })
            .collect();
        let mut target: Vec<TCell> = vec!["target".into()];
        target.extend(q.iter().map(|&i| match s.steps[i].target_ips {
            Some(t) => TCell::shaded(Val::Qps(t), Some(Shade::Grey)),
            None => "-".into(),
        }));
        rows.push(target);
        out.push(Block::Table(Table {
            header: header("name", q.iter().map(|&i| s.steps[i].step.clone())),
            rows,
            left: 1,
        }));
        if s.any_missed() {
            out.push(Block::Para(format!(
                "{MISSED_IPS} below 95 % of the target: the engine missed the SLA."
            )));
        }
        if charts {
            out.push(chart(ibench_insert_rate_chart(s), false));
        }
    }
    out
}

/// The share of statements in each response-time bucket of reference §4.8,
/// per step, statement kind and name (the reference's per-step histogram
/// tables, with the repeats pooled).
fn response_times(s: &IbenchSection) -> Vec<Block> {
    let label = |us: u64| match us {
        us if us >= 1_000_000 => format!("<= {} s", us / 1_000_000),
        us if us >= 1_000 => format!("<= {} ms", us / 1_000),
        us => format!("<= {us} us"),
    };
    let mut header = vec![
        "step".to_string(),
        "kind".into(),
        "name".into(),
        "count".into(),
    ];
    header.extend(
        crate::suite::ibench::results::RT_BUCKETS_US
            .iter()
            .map(|&b| label(b)),
    );
    header.push(format!(
        "> {}",
        label(
            *crate::suite::ibench::results::RT_BUCKETS_US
                .last()
                .unwrap_or(&0)
        )
        .trim_start_matches("<= ")
    ));
    let mut rows = Vec::new();
    for (i, col) in s.steps.iter().enumerate() {
        for (k, kind) in ["insert", "delete", "query"].iter().enumerate() {
            for r in &s.rows {
                let Some(b) = r.cells[i].as_ref().and_then(|c| c.rt_buckets[k].as_ref()) else {
                    continue;
                };
                let n: u64 = b.iter().sum();
                if n == 0 {
                    continue;
                }
                let mut cells: Vec<TCell> = vec![
                    col.step.as_str().into(),
                    (*kind).into(),
                    r.name.as_str().into(),
                    n.to_string().into(),
                ];
                cells.extend(b.iter().map(|&c| {
                    if c == 0 {
                        TCell::from("")
                    } else {
                        Val::Fixed(c as f64 * 100.0 / n as f64, 2).into()
                    }
                }));
                rows.push(cells);
            }
        }
    }
    if rows.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Heading(3, "Response times (% of statements per bucket)".into()),
        Block::Para(
            "The reference's buckets (iibench), per step and statement kind, the repeats pooled; \
empty cells had no statement."
                .into(),
        ),
        Block::Table(Table {
            header,
            rows,
            left: 3,
        }),
    ]
}

/// The whole Insert Benchmark section of a report.
pub fn section(s: &IbenchSection, charts: bool) -> Vec<Block> {
    let mut out = vec![
        Block::Heading(2, "Insert Benchmark".into()),
        Block::Para(
            "Rows: one per name, the base first; a value is the geometric mean over the \
repeats that finished. Throughput colours (reference tput.tab): green within the top quarter \
of the column's range, red within the bottom quarter (unless the lowest is at least 80% of the \
highest), grey where the step missed its insert-rate SLA (average insert rate below 95% of the \
target). Relative values follow the sysbench rule: red <= 0.95, green >= 1.05."
                .into(),
        ),
    ];
    out.extend(tables(s, charts));

    if charts {
        // l.x's per-second samples count its few inserts, not the indexing.
        let with_series: Vec<usize> = (0..s.steps.len())
            .filter(|&i| !s.steps[i].builds_indexes())
            .filter(|&i| {
                s.rows.iter().any(|r| {
                    r.cells[i]
                        .as_ref()
                        .is_some_and(|c| c.per_second.iter().any(|p| p[1] > 0.0))
                })
            })
            .collect();
        if !with_series.is_empty() {
            out.push(Block::Heading(3, "Throughput per second".into()));
            out.extend(
                with_series
                    .into_iter()
                    .map(|step| chart(ibench_per_second_chart(s, step), true)),
            );
        }
    }

    if charts {
        out.extend(response_times(s));
    }

    let hw_steps: Vec<usize> = (0..s.steps.len())
        .filter(|&i| {
            s.rows
                .iter()
                .any(|r| r.cells[i].as_ref().is_some_and(|c| c.hw.is_some()))
        })
        .collect();
    if !hw_steps.is_empty() {
        out.push(Block::Heading(
            3,
            "Hardware cost per operation (Insert Benchmark)".into(),
        ));
        out.push(Block::Para(
            "Per insert for l.i0, l.i1 and l.i2, per indexed row for l.x, per query for qr/qp \
(reference §5.3); w/i and wKB/i are storage writes and KB written per inserted row in every step. Relative rows divide by the \
base: above 1 costs more."
                .into(),
        ));
        let base = s.base_row();
        for i in hw_steps {
            let col = &s.steps[i];
            out.push(Block::Heading(4, format!("{}, per {}", col.step, col.per)));
            let mut h = vec![String::new()];
            h.extend(HwFigures::TITLES.iter().map(|t| t.to_string()));
            h.push("w/i".into());
            h.push("wKB/i".into());
            let mut rows = Vec::new();
            for r in &s.rows {
                let Some(c) = r.cells[i].as_ref().filter(|c| c.status == Status::Ok) else {
                    continue;
                };
                let mut cells: Vec<TCell> = vec![r.name.as_str().into()];
                cells.extend(hw_cells(c.hw.as_ref()));
                for v in [c.writes_per_insert, c.wkb_per_insert] {
                    cells.push(v.map(sig3).unwrap_or_else(|| "NA".into()).into());
                }
                rows.push(cells);
            }
            let base_cell = base.and_then(|b| b.cells[i].as_ref());
            let base_w = base_cell.and_then(|c| c.writes_per_insert);
            let base_wkb = base_cell.and_then(|c| c.wkb_per_insert);
            for r in s.targets() {
                let Some(c) = r.cells[i].as_ref() else {
                    continue;
                };
                if let Some(rel) = &c.hw_rel {
                    let mut cells: Vec<TCell> = vec![format!("{} / {}", r.name, s.base).into()];
                    cells.extend(rel.iter().map(|x| TCell::from(x.to_string())));
                    cells.push(hw_ratio(c.writes_per_insert, base_w).to_string().into());
                    cells.push(hw_ratio(c.wkb_per_insert, base_wkb).to_string().into());
                    rows.push(cells);
                }
            }
            out.push(Block::Table(Table {
                header: h,
                rows,
                left: 1,
            }));
        }
    }
    out
}

/// Insert Benchmark throughput of each target relative to the base, per step.
fn ibench_relative_chart(s: &IbenchSection) -> Plot {
    let targets: Vec<_> = s.targets().collect();
    Plot::Bars(BarChart {
        title: format!("Insert Benchmark: throughput relative to {}", s.base),
        categories: s.steps.iter().map(|c| c.step.clone()).collect(),
        series: targets.iter().map(|r| r.name.clone()).collect(),
        bars: (0..s.steps.len())
            .map(|i| {
                targets
                    .iter()
                    .map(|r| {
                        let rel = r.cells[i].as_ref()?.rel.as_ref()?;
                        Some(Bar {
                            value: rel.ratio,
                            low: rel.ci_low,
                            high: rel.ci_high,
                            faded: rel.verdict == Verdict::Same,
                            tip: format!("{}, {}: {}", r.name, s.steps[i].step, rel_text(rel)),
                        })
                    })
                    .collect()
            })
            .collect(),
        caption: svg::RELATIVE_CAPTION.into(),
        first_is_base: false,
    })
}

/// Insert rate of every name during the query steps, as a share of the target.
fn ibench_insert_rate_chart(s: &IbenchSection) -> Plot {
    let cols: Vec<_> = s.query_columns().collect();
    Plot::Bars(BarChart {
        title: "Insert Benchmark: insert rate during queries / target".into(),
        categories: cols.iter().map(|(_, c)| c.step.clone()).collect(),
        series: s.rows.iter().map(|r| r.name.clone()).collect(),
        bars: cols
            .iter()
            .map(|(i, c)| {
                s.rows
                    .iter()
                    .map(|r| {
                        let cell = r.cells[*i].as_ref()?;
                        let ips = cell.inserts_per_sec?;
                        let target = c.target_ips.filter(|t| *t > 0.0)?;
                        Some(Bar {
                            value: ips / target,
                            low: None,
                            high: None,
                            faded: false,
                            tip: format!(
                                "{}, {}: {} of {} rows/s{}",
                                r.name,
                                c.step,
                                qps(ips),
                                qps(target),
                                if cell.sla_missed { ", SLA missed" } else { "" }
                            ),
                        })
                    })
                    .collect()
            })
            .collect(),
        caption: "dashed line: 1.0 = the target rate; below 0.95 the step missed its SLA".into(),
        first_is_base: s.base_row().is_some(),
    })
}

/// One step's throughput per second, a line per name.
fn ibench_per_second_chart(s: &IbenchSection, step: usize) -> Plot {
    let col = &s.steps[step];
    let has_base = s.base_row().is_some();
    let lines = s
        .rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let c = r.cells[step].as_ref()?;
            let reps = c.repeats.iter().filter(|x| x.status == Status::Ok).count();
            Some(Line {
                name: if reps > 1 {
                    format!("{} (mean of {reps})", r.name)
                } else {
                    r.name.clone()
                },
                colour: match (has_base, i) {
                    (true, 0) => svg::base_colour(),
                    (true, i) => svg::colour(i - 1),
                    (false, i) => svg::colour(i),
                },
                points: c.per_second.iter().map(|p| (p[0], p[1])).collect(),
            })
        })
        .collect();
    Plot::Lines(LineChart {
        title: format!("{}: per second", col.step),
        x_label: "seconds".into(),
        y_label: col.unit.clone(),
        lines,
        markers: false,
        x_categories: None,
    })
}

/// Columns only Insert Benchmark records fill.
pub const CSV_COLUMNS: [&str; 8] = [
    "inserts_per_sec",
    "deletes_per_sec",
    "queries_per_sec",
    "target_ips",
    "sla_missed",
    "insert_p99_us",
    "delete_p99_us",
    "query_p99_us",
];

/// One record per finished repeat of a step: suite `ibench`, threads =
/// clients, qps = the step's throughput, and the rates and SLA in
/// [`CSV_COLUMNS`].
fn records(s: &IbenchSection, report: &Report) -> Vec<Record> {
    let mut out = Vec::new();
    for row in &s.rows {
        let engine = report
            .names()
            .iter()
            .position(|n| *n == row.name)
            .map(|i| report.info(i).engine.clone())
            .unwrap_or_default();
        for (col, cell) in s.steps.iter().zip(&row.cells) {
            let Some(cell) = cell else { continue };
            for (i, r) in cell.repeats.iter().enumerate() {
                if r.status != Status::Ok {
                    continue;
                }
                let mut rec: Record = vec![
                    ("target", row.name.as_str().into()),
                    ("engine", engine.as_str().into()),
                    ("version", r.engine_version.as_str().into()),
                    ("suite", SUITE.into()),
                    ("group", if col.query { "query" } else { "load" }.into()),
                    ("test", col.step.as_str().into()),
                    ("threads", Val::Int(r.clients as i64)),
                    ("repeat", Val::Int(i as i64 + 1)),
                    ("run_id", r.run_id.as_str().into()),
                    ("qps", Val::Num(r.throughput)),
                ];
                let hw = r.hw.as_ref().map(|h| h.values()).unwrap_or([None; 7]);
                rec.extend(
                    HwFigures::KEYS
                        .iter()
                        .zip(hw)
                        .map(|(k, v)| (*k, Val::num(v))),
                );
                rec.extend(CSV_COLUMNS.iter().copied().zip([
                    Val::Num(r.inserts_per_sec),
                    Val::Num(r.deletes_per_sec),
                    Val::Num(r.queries_per_sec),
                    Val::num(r.target_ips),
                    if col.query {
                        Val::Text(r.sla_missed.to_string())
                    } else {
                        Val::Empty
                    },
                    Val::num(r.insert_p99_us),
                    Val::num(r.delete_p99_us),
                    Val::num(r.query_p99_us),
                ]));
                out.push(rec);
            }
        }
    }
    out
}

/// The reference's `tput.tab`, `tputr.tab` and `iput.tab` (reference §5.4):
/// one row per name, one column per step, each table after a title line.
fn tables_data(s: &IbenchSection) -> Vec<DataTable> {
    let table = |title: String, cols: &[usize], rows: Vec<Vec<Val>>| DataTable {
        title: Some(title),
        header: header("dbms", cols.iter().map(|&i| s.steps[i].step.clone())),
        rows,
    };
    let row = |name: &str, vals: Vec<Val>| -> Vec<Val> {
        std::iter::once(Val::from(name)).chain(vals).collect()
    };
    let all: Vec<usize> = (0..s.steps.len()).collect();
    let fmt = |v: Option<f64>| v.map(Val::Qps).unwrap_or(Val::Na);
    let mut out = vec![table(
        "ibench throughput (inserts/s; l.x: indexed rows/s; qr/qp: queries/s)".into(),
        &all,
        s.rows
            .iter()
            .map(|r| {
                let v = r
                    .cells
                    .iter()
                    .map(|c| fmt(c.as_ref().and_then(|c| c.throughput)));
                row(&r.name, v.collect())
            })
            .collect(),
    )];
    if s.base_row().is_some() && s.targets().next().is_some() {
        out.push(table(
            format!("ibench throughput relative to {}", s.base),
            &all,
            s.targets()
                .map(|r| {
                    let v = r.cells.iter().map(|c| {
                        let rel = c.as_ref().and_then(|c| c.rel.as_ref());
                        Val::fixed(rel.map(|rel| rel.ratio), 2, Val::Na)
                    });
                    row(&r.name, v.collect())
                })
                .collect(),
        ));
    }
    let q: Vec<usize> = s.query_columns().map(|(i, _)| i).collect();
    if !q.is_empty() {
        let mut rows: Vec<Vec<Val>> = s
            .rows
            .iter()
            .map(|r| {
                let v = q
                    .iter()
                    .map(|&i| fmt(r.cells[i].as_ref().and_then(|c| c.inserts_per_sec)));
                row(&r.name, v.collect())
            })
            .collect();
        rows.push(row(
            "target",
            q.iter().map(|&i| fmt(s.steps[i].target_ips)).collect(),
        ));
        out.push(table(
            "ibench insert rate during queries (rows/s; below 95% of target: SLA missed)".into(),
            &q,
            rows,
        ));
    }
    out
}

/// The Insert Benchmark steps of `target` against the base: throughput as
/// for sysbench tests, and a query step fails when the target missed the
/// insert-rate SLA that the base kept.
pub fn gate(ib: &IbenchSection, report: &Report, threshold: f64, gate: &mut Gate) {
    let noise_floor = report.noise_floor;
    let target = report.targets.first();
    let (Some(base), Some(target)) = (
        ib.base_row(),
        target.and_then(|t| ib.rows.iter().find(|r| &r.name == t)),
    ) else {
        return;
    };
    let (rows, missing) = (&mut gate.rows, &mut gate.missing);
    for (i, col) in ib.steps.iter().enumerate() {
        let label = format!("{SUITE} {}", col.step);
        let Some(b) = base.cells[i].as_ref().filter(|c| c.throughput.is_some()) else {
            continue;
        };
        let Some((t, rel)) = target.cells[i]
            .as_ref()
            .and_then(|c| Some((c, c.rel.as_ref()?)))
        else {
            missing.push(label);
            continue;
        };
        rows.push(GateRow {
            label: label.clone(),
            base_qps: b.throughput.unwrap_or(0.0),
            target_qps: t.throughput.unwrap_or(0.0),
            ratio: rel.ratio,
            ci: rel.ci_low.zip(rel.ci_high),
            p: rel.p,
            verdict: rel.verdict,
            fails: gate_fails(rel, threshold, noise_floor),
        });
        if t.sla_missed && !b.sla_missed {
            let (bi, ti) = (
                b.inserts_per_sec.unwrap_or(0.0),
                t.inserts_per_sec.unwrap_or(0.0),
            );
            rows.push(GateRow {
                label: format!("{label} insert rate (SLA missed)"),
                base_qps: bi,
                target_qps: ti,
                ratio: if bi > 0.0 { ti / bi } else { 0.0 },
                ci: None,
                p: None,
                verdict: Verdict::Slower,
                fails: true,
            });
        }
    }
}

/// The end-of-run report of one Insert Benchmark run.
pub fn ibench_run_table(doc: &RunDoc) -> String {
    use crate::report::table::{TextTable, cell, num};
    let mut out = format!(
        "{} on {} {} ({}), {}\n",
        doc.suite, doc.engine.name, doc.engine.version, doc.name, doc.status
    );
    let rows = run_steps(doc);
    let rows: Vec<&TestResult> = rows
        .into_iter()
        .filter(|t| t.status != crate::results::Status::Running)
        .collect();
    let mut detail = TextTable::new(&[
        "step",
        "clients",
        "ips",
        "dps",
        "qps",
        "ins p99 us",
        "del p99 us",
        "qry p99 us",
        "ips p99",
        "secs",
        "status",
    ]);
    for t in &rows {
        let owned = step_of(t).unwrap_or_default();
        let ib = &owned;
        let p99 = |rt: &Option<RtSummary>| {
            rt.as_ref()
                .map(|r| num(r.p99))
                .unwrap_or_else(|| "-".into())
        };
        let low = ib
            .rate_percentiles
            .iter()
            .find(|r| r.pct == 99)
            .map(|r| num(r.ips))
            .unwrap_or_else(|| "-".into());
        let mut status = t.status.to_string();
        if ib.sla_missed {
            status.push_str(", SLA missed");
        }
        detail.row(vec![
            t.test.clone(),
            t.threads.to_string(),
            num(ib.inserts_per_sec),
            num(ib.deletes_per_sec),
            num(ib.queries_per_sec),
            p99(&ib.insert_rt),
            p99(&ib.delete_rt),
            p99(&ib.query_rt),
            low,
            format!("{:.1}", t.secs),
            status,
        ]);
    }
    if !rows.is_empty() {
        out.push_str(&format!(
            "\nsteps (rates per second of the whole step, all clients; ips p99: the per-second insert rate 99 % of seconds beat)\n{}",
            detail.render()
        ));
    }
    let finished: Vec<RunDoc> = {
        let mut d = doc.clone();
        d.tests
            .retain(|t| t.status != crate::results::Status::Running);
        vec![d]
    };
    if let Some(sec) = build(&doc.name, &[&doc.name], &finished, Rules::default()) {
        let mut text = String::new();
        for b in tables(&sec, false) {
            crate::report::export::term::block(&b, false, &mut text);
        }
        out.push_str(&text);
    }
    // Hardware cost per insert (loads; per indexed row for l.x) or per query (qr/qp).
    let mut table = TextTable::new(&[
        "step",
        "per",
        "cpu/o us",
        "server cpu/o",
        "client cpu/o",
        "cs/o",
        "r/o",
        "rKB/o",
        "wKB/o",
        "w/insert",
        "wKB/insert",
        "db MB",
    ]);
    let mut n = 0;
    let mut notes: Vec<String> = Vec::new();
    for t in rows
        .iter()
        .filter(|t| t.status == crate::results::Status::Ok)
    {
        let Some(hw) = &t.hw else { continue };
        let db = hw
            .db_after
            .as_ref()
            .and_then(|d| d.disk_bytes.or(d.engine_bytes))
            .map(|b| b as f64 / 1048576.0);
        table.row(vec![
            t.test.clone(),
            unit_of(t).1.into(),
            cell(hw.cpu_us_per_op),
            cell(hw.server_cpu_us_per_op),
            cell(hw.client_cpu_us_per_op),
            cell(hw.cs_per_op),
            cell(hw.reads_per_op),
            cell(hw.rkb_per_op),
            cell(hw.wkb_per_op),
            cell(step_of(t).and_then(|i| i.writes_per_insert)),
            cell(step_of(t).and_then(|i| i.wkb_per_insert)),
            cell(db),
        ]);
        for u in &hw.unavailable {
            if !notes.contains(u) {
                notes.push(u.clone());
            }
        }
        n += 1;
    }
    if n > 0 {
        out.push_str(&format!(
            "\nhardware cost per operation (CPU in microseconds; cs = context switches; r = storage reads)\n{}",
            table.render()
        ));
        for u in notes {
            out.push_str(&format!("  - not measured: {u}\n"));
        }
    }
    out
}

/// The Insert Benchmark section of reports.
pub struct Ibench;

/// The one value the registry lists.
pub static SECTION: Ibench = Ibench;

impl Section for Ibench {
    fn suite(&self) -> &'static str {
        SUITE
    }

    /// Steps are not tests × threads: the section's own tables show them.
    fn in_tables(&self) -> bool {
        false
    }

    fn run_table(&self, doc: &RunDoc, _all: bool) -> Option<String> {
        Some(ibench_run_table(doc))
    }

    /// Its columns and key were in every report before suites were
    /// plug-ins (tests/results_v1.rs holds that layout).
    fn always_listed(&self) -> bool {
        true
    }

    fn json_key(&self) -> Option<&'static str> {
        Some(SUITE)
    }

    fn csv_columns(&self) -> &'static [&'static str] {
        &CSV_COLUMNS
    }

    fn build(&self, input: &Input) -> Option<Arc<dyn Part>> {
        let s = build(input.base, input.names, input.runs, input.rules)?;
        Some(Arc::new(s))
    }
}

impl Part for IbenchSection {
    fn title(&self) -> String {
        "Insert Benchmark".into()
    }

    fn blocks(&self, _report: &Report, charts: bool) -> Vec<Block> {
        section(self, charts)
    }

    fn data(&self, report: &Report) -> Data {
        Data {
            records: records(self, report),
            tables: tables_data(self),
        }
    }

    fn gate(&self, report: &Report, threshold: f64, g: &mut Gate) {
        gate(self, report, threshold, g)
    }
}
#[cfg(test)]
mod tests {
    use crate::report::compare::Rules;
    use crate::report::export::{md, term};
    use crate::suite::ibench::report::{build, tests::two_runs};

    #[test]
    fn tables_mark_misses_and_compare_with_the_base() {
        let runs = two_runs();
        let s = build("a", &["a", "b"], &runs, Rules::default()).unwrap();
        let mut out = String::new();
        for b in super::section(&s, false) {
            term::block(&b, false, &mut out);
        }
        assert!(out.contains("800*"), "{out}");
        assert!(out.contains("90.0!"), "{out}");
        assert!(out.contains("1.50 ?") && out.contains("1.60 ?"), "{out}");
        assert!(out.contains("target"), "{out}");
        assert!(out.contains("missed its insert-rate SLA"), "{out}");
        assert!(out.contains("Throughput relative to a"), "{out}");
        let mut m = String::new();
        for b in super::section(&s, false) {
            md::block(&b, &mut m);
        }
        assert!(m.contains("| b | **1.50 ?** |"), "{m}");
        assert!(m.contains("90.0!"), "{m}");
    }

    #[test]
    fn run_table_shows_the_three_tables_of_one_run() {
        let runs = two_runs();
        let one = super::ibench_run_table(&runs[1]);
        assert!(one.contains("Insert rate during queries"), "{one}");
        assert!(one.contains("800*") && one.contains("90.0!"), "{one}");
        assert!(!one.contains("relative"), "{one}");
    }
}

#[cfg(test)]
mod formats {
    use crate::report::compare::Rules;
    use crate::report::export::{Format, exporter};
    use crate::report::load::{Options, build};
    use crate::suite::ibench::report::tests::{step, two_runs};

    fn opts() -> Options {
        Options {
            base: "a".into(),
            targets: None,
            rules: Rules::default(),
            all: false,
            sections: crate::suite::report_sections(),
            workloads: crate::suite::workloads(),
            engines: Default::default(),
            allow_mismatch: false,
        }
    }

    #[test]
    fn every_format_carries_the_insert_benchmark() {
        let r = build(&two_runs(), &opts()).unwrap();
        assert!(r.groups.is_empty() && r.parts.len() == 1);
        for f in [
            Format::Term,
            Format::Md,
            Format::Html,
            Format::Csv,
            Format::Tsv,
            Format::Json,
        ] {
            let out = exporter(f, false).render(&r);
            assert!(out.contains("qr100"), "{f:?}: {out}");
            assert!(
                !out.contains("Relative QPS"),
                "{f:?}: no empty sysbench part"
            );
        }
    }

    #[test]
    fn the_gate_fails_a_step_that_missed_the_sla_the_base_kept() {
        let r = build(&two_runs(), &opts()).unwrap();
        let g = crate::report::compare::gate(&r, 0.95);
        let labels: Vec<(&str, bool)> =
            g.rows.iter().map(|r| (r.label.as_str(), r.fails)).collect();
        assert_eq!(
            labels,
            [
                ("ibench l.i0", false),
                ("ibench qr100", false),
                ("ibench qr100 insert rate (SLA missed)", true),
            ]
        );
        assert!(g.missing.is_empty());
    }

    #[test]
    fn sysbench_and_insert_benchmark_results_report_together() {
        let mut runs = two_runs();
        for (d, qps) in runs.iter_mut().zip([100.0, 90.0]) {
            let mut t = step("point-query", qps, 0.0, None);
            t.suite = "sysbench".into();
            t.group = "point".into();
            t.detail.clear();
            d.tests.push(t);
        }
        let r = build(&runs, &opts()).unwrap();
        assert_eq!(r.rows().count(), 1, "the sysbench test is a row");
        assert!(
            r.warnings
                .iter()
                .all(|w| !w.contains("unknown report group"))
        );
        let text = exporter(Format::Term, false).render(&r);
        assert!(
            text.contains("Relative QPS") && text.contains("0.90 ?"),
            "{text}"
        );
        assert!(
            text.contains("Insert Benchmark") && text.contains("1.60 ?"),
            "{text}"
        );
        let tsv = exporter(Format::Tsv, false).render(&r);
        assert!(tsv.starts_with("Relative to: a\n"), "{tsv}");
        assert!(tsv.contains("\nibench throughput relative to a\n"), "{tsv}");
    }
}
