//! Tidy CSV: one row per target × test × threads × repeat, the base included,
//! so any tool can redo the statistics; then the summary, one record per
//! target and group (test `geomean`, group `all` over every test) with the
//! geometric mean's ratio, interval and verdict. The parts of the suites' sections add
//! their records after these rows (the Insert Benchmark's steps: suite
//! `ibench`, threads = clients, qps = the step's throughput), filling the
//! generic columns they have and the columns their section names, which
//! follow the generic ones in section order.
//!
//! `unit` names what `qps` counts (`statements/s`; `Krows/s` for a scan), and
//! `busy` is `true` for a repeat that ran while other processes kept the
//! machine busy. Only the columns that some row fills are written; `target`
//! is always the first. `excluded` (a target's rows a compatibility record
//! leaves out of the summaries: the one-line reason) is written only when
//! some row has one. docs/reports.md lists the columns.

use super::format::{Exporter, written};
use crate::report::doc::{Record, Val};
use crate::report::model::{HwFigures, Report, Row, Side};

/// The columns of the summary records (a group's geometric mean of relative
/// QPS, its interval and verdict), after the per-op figures.
const SUMMARY: [&str; 4] = ["relative", "ci_low", "ci_high", "verdict"];

/// The columns every row may fill, before the per-op figures.
const COLUMNS: [&str; 18] = [
    "target", "engine", "version", "suite", "group", "test", "threads", "repeat", "run_id", "qps",
    "unit", "tps", "errors", "busy", "p50_us", "p95_us", "p99_us", "max_us",
];

pub struct Csv;

/// Quotes a field when it holds a comma, a quote or a line break.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Hands `f` one record per repeat of `side` in `row` (with `excluded`,
/// the reason a compatibility record leaves them out, if any).
fn rows(
    f: &mut dyn FnMut(&Record),
    name: &str,
    engine: &str,
    row: &Row,
    side: &Side,
    excluded: Option<&str>,
) {
    for (i, s) in side.samples.iter().enumerate() {
        let mut rec: Record = vec![
            ("target", name.into()),
            ("engine", engine.into()),
            ("version", s.engine_version.as_str().into()),
            ("suite", row.suite.as_str().into()),
            ("group", row.group.as_str().into()),
            ("test", row.test.as_str().into()),
            ("threads", Val::Int(row.threads as i64)),
            ("repeat", Val::Int(i as i64 + 1)),
            ("run_id", s.run_id.as_str().into()),
            ("qps", Val::Num(s.qps)),
            ("unit", row.unit.as_str().into()),
            ("tps", Val::Num(s.tps)),
            ("errors", Val::Int(s.errors as i64)),
            ("busy", Val::Text(s.busy.to_string())),
            ("p50_us", Val::Num(s.latency_us.p50)),
            ("p95_us", Val::Num(s.latency_us.p95)),
            ("p99_us", Val::Num(s.latency_us.p99)),
            ("max_us", Val::Num(s.latency_us.max)),
        ];
        let hw = s.hw.as_ref().map(|h| h.values()).unwrap_or([None; 7]);
        rec.extend(
            HwFigures::KEYS
                .iter()
                .zip(hw)
                .map(|(k, v)| (*k, Val::num(v))),
        );
        if let Some(why) = excluded {
            rec.push(("excluded", why.into()));
        }
        f(&rec);
    }
}

/// A record in `header` order, quoted; columns it lacks are empty.
fn record(header: &[&str], rec: &Record) -> Vec<String> {
    header
        .iter()
        .map(|h| {
            rec.iter()
                .find(|(k, _)| k == h)
                .map(|(_, v)| field(&v.text("")))
                .unwrap_or_default()
        })
        .collect()
}

/// Which columns of `header` to write: the first, and those some record
/// of `report` fills.
fn filled(header: &[&str], report: &Report) -> Vec<bool> {
    let mut keep: Vec<bool> = (0..header.len()).map(|c| c == 0).collect();
    each_record(report, &mut |rec| {
        for (k, v) in rec {
            if let Some(c) = header.iter().position(|h| h == k)
                && !keep[c]
                && !v.text("").is_empty()
            {
                keep[c] = true;
            }
        }
    });
    keep
}

/// One CSV line of `cells`, the columns `keep` keeps.
fn line<'a>(
    w: &mut dyn std::io::Write,
    cells: impl Iterator<Item = &'a str>,
    keep: &[bool],
) -> std::io::Result<()> {
    let mut first = true;
    for (c, _) in cells.zip(keep).filter(|(_, k)| **k) {
        if !first {
            w.write_all(b",")?;
        }
        first = false;
        w.write_all(c.as_bytes())?;
    }
    w.write_all(b"\n")
}

/// The header and rows without the columns that no row fills (the first
/// column is always kept).
#[cfg(test)]
fn write_filled(header: &[&str], rows: &[Vec<String>]) -> String {
    let keep: Vec<bool> = (0..header.len())
        .map(|c| c == 0 || rows.iter().any(|r| r.get(c).is_some_and(|v| !v.is_empty())))
        .collect();
    let mut out = Vec::new();
    let _ = line(&mut out, header.iter().copied(), &keep);
    for r in rows {
        let _ = line(&mut out, r.iter().map(String::as_str), &keep);
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Every record of `report`, in order, to `f`: the rows of each test (the
/// base's repeats, then each target's), the summary, then the parts'.
fn each_record(report: &Report, f: &mut dyn FnMut(&Record)) {
    for row in report.rows() {
        rows(
            f,
            &report.base,
            &report.base_info.engine,
            row,
            &row.base,
            None,
        );
        for (i, info) in report.target_info.iter().enumerate() {
            if let Some(side) = row.side(i + 1) {
                let excluded = row
                    .cells
                    .get(i)
                    .and_then(|c| c.as_ref().and_then(|c| c.excluded.as_deref()));
                rows(f, &info.name, &info.engine, row, side, excluded);
            }
        }
    }
    for rec in summary(report) {
        f(&rec);
    }
    for b in &report.parts {
        for rec in b.part.data(report).records {
            f(&rec);
        }
    }
}

impl Exporter for Csv {
    fn render(&self, report: &Report) -> String {
        written(self, report)
    }

    /// Two passes over the records, none kept: which columns some record
    /// fills, then the lines.
    fn write(&self, report: &Report, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut header: Vec<&str> = COLUMNS.to_vec();
        header.extend(HwFigures::KEYS);
        header.extend(SUMMARY);
        // Filled only on the rows a compatibility record leaves out.
        header.push("excluded");
        for s in report.listed_sections() {
            for c in s.csv_columns() {
                if !header.contains(c) {
                    header.push(c);
                }
            }
        }
        let keep = filled(&header, report);
        line(w, header.iter().copied(), &keep)?;
        let mut result = Ok(());
        each_record(report, &mut |rec| {
            if result.is_ok() {
                let cells = record(&header, rec);
                result = line(w, cells.iter().map(String::as_str), &keep);
            }
        });
        result
    }
}

/// One record per target and group, then per target over all tests (group
/// `all`): test `geomean`, the summary's ratio, interval and verdict.
fn summary(report: &Report) -> Vec<Record> {
    let mut out = Vec::new();
    let groups = report
        .groups
        .iter()
        .map(|g| (g.rows[0].suite.as_str(), g.group.as_str(), &g.summary))
        .chain(std::iter::once(("", "all", &report.overall_summary)));
    for (suite, group, rels) in groups {
        for (i, rel) in rels.iter().enumerate() {
            let Some(rel) = rel else { continue };
            let info = &report.target_info[i];
            let verdict = serde_json::to_value(rel.verdict)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            out.push(vec![
                ("target", info.name.as_str().into()),
                ("engine", info.engine.as_str().into()),
                ("version", info.version().into()),
                ("suite", suite.into()),
                ("group", group.into()),
                ("test", "geomean".into()),
                ("relative", Val::Num(rel.ratio)),
                ("ci_low", Val::num(rel.ci_low)),
                ("ci_high", Val::num(rel.ci_high)),
                ("verdict", verdict.into()),
            ]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_no_row_fills_are_left_out_but_never_the_first() {
        let header = ["target", "qps", "unit", "extra"];
        let rows = vec![
            vec!["".to_string(), "1".into(), "".into(), "".into()],
            vec!["b".to_string(), "2".into(), "Krows/s".into(), "".into()],
        ];
        assert_eq!(
            super::write_filled(&header, &rows),
            "target,qps,unit\n,1,\nb,2,Krows/s\n"
        );
    }

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(super::field("plain"), "plain");
        assert_eq!(super::field("a,b"), "\"a,b\"");
        assert_eq!(super::field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
