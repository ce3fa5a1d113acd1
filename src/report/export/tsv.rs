//! The reference's `qps.rel` TSV (reference §5.1): "Relative to: <base>",
//! one "col-N : <name>" line per target, a blank line, the column header,
//! then one row per test: the relative values with two decimals and the label
//! `name_range=R`. Rows follow the four groups in suite order. With several
//! thread counts, one such table per count, each after a `threads=N` line.
//!
//! Insert Benchmark results follow as the reference's `tput.tab`,
//! `tputr.tab` and `iput.tab` (reference §5.4): one row per name, one column
//! per step, each table after a title line and a blank line.

use super::Exporter;
use crate::report::ibench::IbenchSection;
use crate::report::model::Report;

pub struct Tsv;

/// Tabs and line breaks would break the layout; names never need them.
fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

fn ibench(s: &IbenchSection, out: &mut String) {
    let table =
        |out: &mut String, title: &str, cols: &[usize], rows: Vec<(String, Vec<String>)>| {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(title);
            out.push_str("\ndbms");
            for &i in cols {
                out.push('\t');
                out.push_str(&clean(&s.steps[i].step));
            }
            out.push('\n');
            for (name, vals) in rows {
                out.push_str(&clean(&name));
                for v in vals {
                    out.push('\t');
                    out.push_str(&v);
                }
                out.push('\n');
            }
        };
    let all: Vec<usize> = (0..s.steps.len()).collect();
    let fmt = |v: Option<f64>| v.map(super::qps).unwrap_or_else(|| "NA".into());
    table(
        out,
        "ibench throughput (inserts/s; l.x: indexed rows/s; qr/qp: queries/s)",
        &all,
        s.rows
            .iter()
            .map(|r| {
                let v = r
                    .cells
                    .iter()
                    .map(|c| fmt(c.as_ref().and_then(|c| c.throughput)));
                (r.name.clone(), v.collect())
            })
            .collect(),
    );
    if s.base_row().is_some() && s.targets().next().is_some() {
        table(
            out,
            &format!("ibench throughput relative to {}", clean(&s.base)),
            &all,
            s.targets()
                .map(|r| {
                    let v = r.cells.iter().map(|c| {
                        c.as_ref()
                            .and_then(|c| c.rel.as_ref())
                            .map(|rel| format!("{:.2}", rel.ratio))
                            .unwrap_or_else(|| "NA".into())
                    });
                    (r.name.clone(), v.collect())
                })
                .collect(),
        );
    }
    let q: Vec<usize> = s.query_columns().map(|(i, _)| i).collect();
    if !q.is_empty() {
        let mut rows: Vec<(String, Vec<String>)> = s
            .rows
            .iter()
            .map(|r| {
                let v = q
                    .iter()
                    .map(|&i| fmt(r.cells[i].as_ref().and_then(|c| c.inserts_per_sec)));
                (r.name.clone(), v.collect())
            })
            .collect();
        rows.push((
            "target".into(),
            q.iter().map(|&i| fmt(s.steps[i].target_ips)).collect(),
        ));
        table(
            out,
            "ibench insert rate during queries (rows/s; below 95% of target: SLA missed)",
            &q,
            rows,
        );
    }
}

impl Exporter for Tsv {
    fn render(&self, report: &Report) -> String {
        if report.groups.is_empty() {
            let mut out = String::new();
            if let Some(s) = &report.ibench {
                ibench(s, &mut out);
            }
            return out;
        }
        let mut out = format!("Relative to: {}\n", clean(&report.base));
        for (i, t) in report.targets.iter().enumerate() {
            out.push_str(&format!("col-{} : {}\n", i + 1, clean(t)));
        }
        let cols: Vec<String> = (1..=report.targets.len())
            .map(|i| format!("col-{i}"))
            .collect();
        for &threads in &report.thread_counts {
            out.push('\n');
            if report.sweep() {
                out.push_str(&format!("threads={threads}\n"));
            }
            out.push_str(&cols.join("\t"));
            out.push('\n');
            for row in report.rows().filter(|r| r.threads == threads) {
                for c in &row.cells {
                    match c {
                        Some(c) => out.push_str(&format!("{:.2}\t", c.rel.ratio)),
                        None => out.push_str("NA\t"),
                    }
                }
                out.push_str(&clean(&row.range_label()));
                out.push('\n');
            }
        }
        if let Some(s) = &report.ibench {
            ibench(s, &mut out);
        }
        out
    }
}
