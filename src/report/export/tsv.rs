//! The reference's `qps.rel` TSV (reference §5.1): "Relative to: <base>",
//! one "col-N : <name>" line per target, a blank line, the column header,
//! then one row per test: the relative values with two decimals and the
//! label its suite's section gives (sysbench: `name_range=R`; else the test
//! name). Rows follow the groups in report order. With several thread
//! counts, one such table per count, each after a `threads=N` line.
//!
//! Then the summary: after a `summary` line, each group's geometric mean
//! and its verdict's mark per target (`col-N`, `verdict-N`), the group's
//! title last, and `all tests`.
//!
//! When targets of another engine than the base's are compared, a
//! `compatibility` section follows the summary: the guard's notes, and
//! each ratio a compatibility record left out of the summary.
//!
//! A report of the base alone (its thread sweep) is its scalability
//! instead: test, threads, QPS and speed-up.
//!
//! The parts of the suites' sections follow with tables of their own (the
//! Insert Benchmark: the reference's `tput.tab`, `tputr.tab`, `iput.tab`);
//! a report with no generic row has only those.

use super::format::Exporter;
use crate::report::doc::DataTable;
use crate::report::model::Report;

pub struct Tsv;

/// Tabs and line breaks would break the layout; names never need them.
pub fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

impl Exporter for Tsv {
    fn render(&self, report: &Report) -> String {
        if report.groups.is_empty() {
            let mut out = String::new();
            parts(report, &mut out);
            return out;
        }
        if report.targets.is_empty() {
            return scalability(report);
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
                let label = match report.section(&row.suite) {
                    Some(s) => s.tsv_label(&row.test),
                    None => row.test.clone(),
                };
                out.push_str(&clean(&label));
                out.push('\n');
            }
        }
        // The summary: each group's geometric mean and its verdict.
        out.push_str("\nsummary\n");
        let head: Vec<String> = (1..=report.targets.len())
            .flat_map(|i| [format!("col-{i}"), format!("verdict-{i}")])
            .collect();
        out.push_str(&head.join("\t"));
        out.push('\n');
        let groups = report
            .groups
            .iter()
            .map(|g| (g.title.as_str(), &g.summary))
            .chain(std::iter::once(("all tests", &report.overall_summary)));
        for (title, rels) in groups {
            for rel in rels {
                match rel {
                    Some(r) => out.push_str(&format!("{:.2}\t{}\t", r.ratio, r.verdict.mark())),
                    None => out.push_str("NA\tNA\t"),
                }
            }
            out.push_str(&clean(title));
            out.push('\n');
        }
        compat(report, &mut out);
        parts(report, &mut out);
        out
    }
}

/// After a `compatibility` line, one line per note of the compatibility
/// guard, then each ratio it left out of the summary: `col-N`, the test's
/// label and the reason, tab-separated. Nothing without a note.
fn compat(report: &Report, out: &mut String) {
    if report.compat.is_empty() {
        return;
    }
    out.push_str("\ncompatibility\n");
    for n in &report.compat {
        out.push_str(&clean(n));
        out.push('\n');
    }
    for row in report.rows() {
        for (i, c) in row.cells.iter().enumerate() {
            if let Some(why) = c.as_ref().and_then(|c| c.excluded.as_ref()) {
                out.push_str(&format!(
                    "excluded\tcol-{}\t{}\t{}\n",
                    i + 1,
                    clean(&row.label(report.sweep())),
                    clean(why)
                ));
            }
        }
    }
}

/// The tables of the suites' parts, in section order.
fn parts(report: &Report, out: &mut String) {
    for b in &report.parts {
        for t in b.part.data(report).tables {
            table(&t, out);
        }
    }
}

/// One table of a part: after a blank line (when `out` holds something
/// already), its title line and its header; a value not measured reads `NA`,
/// and tabs and line breaks in any field become spaces.
fn table(t: &DataTable, out: &mut String) {
    if !out.is_empty() && !out.ends_with("\n\n") {
        out.push('\n');
    }
    if let Some(title) = &t.title {
        out.push_str(&clean(title));
        out.push('\n');
    }
    let header: Vec<String> = t.header.iter().map(|h| clean(h)).collect();
    out.push_str(&header.join("\t"));
    out.push('\n');
    for row in &t.rows {
        let cells: Vec<String> = row.iter().map(|v| clean(&v.text("NA"))).collect();
        out.push_str(&cells.join("\t"));
        out.push('\n');
    }
}

/// The base alone (a thread sweep): one row per test and thread count, its
/// QPS and speed-up over its fewest threads.
fn scalability(report: &Report) -> String {
    let mut out = format!(
        "Scalability of: {}\n\ntest\tthreads\tqps\tspeedup\n",
        clean(&report.base)
    );
    for c in crate::report::scalability::curves(report) {
        for &(t, q) in &c.points {
            let s = c
                .speedup(t)
                .map(|s| format!("{s:.2}"))
                .unwrap_or("NA".into());
            out.push_str(&format!("{}\t{t}\t{q:.1}\t{s}\n", clean(&c.test)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::report::doc::{DataTable, Val};

    #[test]
    fn a_parts_table_follows_a_blank_line_and_keeps_its_columns() {
        let t = DataTable {
            title: Some("probe\ttable".into()),
            header: vec!["name".into(), "ops/s".into(), "rel".into()],
            rows: vec![vec!["a\tb".into(), Val::Fixed(1.25, 1), Val::Na]],
        };
        let mut out = String::new();
        super::table(&t, &mut out);
        assert_eq!(out, "probe table\nname\tops/s\trel\na b\t1.2\tNA\n");
        super::table(&t, &mut out);
        assert!(out.contains("\tNA\n\nprobe table\n"), "{out}");
    }
}
