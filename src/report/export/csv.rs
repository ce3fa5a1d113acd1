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
//! is always the first. docs/reports.md lists the columns.

use super::Exporter;
use crate::report::model::{HwFigures, Report, Row, Side};
use crate::report::section::CsvRecord;

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

fn num(v: Option<f64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn rows(
    out: &mut Vec<Vec<String>>,
    extra: usize,
    name: &str,
    engine: &str,
    row: &Row,
    side: &Side,
) {
    for (i, s) in side.samples.iter().enumerate() {
        let mut cells = vec![
            field(name),
            field(engine),
            field(&s.engine_version),
            field(&row.suite),
            field(&row.group),
            field(&row.test),
            row.threads.to_string(),
            (i + 1).to_string(),
            field(&s.run_id),
            s.qps.to_string(),
            field(&row.unit),
            s.tps.to_string(),
            s.errors.to_string(),
            s.busy.to_string(),
            s.latency_us.p50.to_string(),
            s.latency_us.p95.to_string(),
            s.latency_us.p99.to_string(),
            s.latency_us.max.to_string(),
        ];
        let hw = s.hw.as_ref().map(|h| h.values()).unwrap_or([None; 7]);
        cells.extend(hw.iter().map(|v| num(*v)));
        cells.extend((0..SUMMARY.len() + extra).map(|_| String::new()));
        out.push(cells);
    }
}

/// A record in `header` order, quoted; columns it lacks are empty.
fn record(out: &mut Vec<Vec<String>>, header: &[&str], rec: &CsvRecord) {
    out.push(
        header
            .iter()
            .map(|h| {
                rec.iter()
                    .find(|(k, _)| k == h)
                    .map(|(_, v)| field(v))
                    .unwrap_or_default()
            })
            .collect(),
    );
}

/// The header and rows without the columns that no row fills (the first
/// column is always kept).
fn write_filled(header: &[&str], rows: &[Vec<String>]) -> String {
    let keep: Vec<bool> = (0..header.len())
        .map(|c| c == 0 || rows.iter().any(|r| r.get(c).is_some_and(|v| !v.is_empty())))
        .collect();
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let kept: Vec<&str> = cells
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(c, _)| c)
            .collect();
        out.push_str(&kept.join(","));
        out.push('\n');
    };
    line(&mut header.iter().copied());
    for r in rows {
        line(&mut r.iter().map(String::as_str));
    }
    out
}

impl Exporter for Csv {
    fn render(&self, report: &Report) -> String {
        let mut header: Vec<&str> = COLUMNS.to_vec();
        header.extend(HwFigures::KEYS);
        header.extend(SUMMARY);
        let generic = header.len();
        for s in report.listed_sections() {
            for c in s.csv_columns() {
                if !header.contains(c) {
                    header.push(c);
                }
            }
        }
        let extra = header.len() - generic;
        let mut out = Vec::new();
        for row in report.rows() {
            rows(
                &mut out,
                extra,
                &report.base,
                &report.base_info.engine,
                row,
                &row.base,
            );
            for (i, info) in report.target_info.iter().enumerate() {
                if let Some(side) = row.side(i + 1) {
                    rows(&mut out, extra, &info.name, &info.engine, row, side);
                }
            }
        }
        for rec in summary(report) {
            record(&mut out, &header, &rec);
        }
        for b in &report.parts {
            for rec in b.part.csv(report) {
                record(&mut out, &header, &rec);
            }
        }
        write_filled(&header, &out)
    }
}

/// One record per target and group, then per target over all tests (group
/// `all`): test `geomean`, the summary's ratio, interval and verdict.
fn summary(report: &Report) -> Vec<CsvRecord> {
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
                ("target", info.name.clone()),
                ("engine", info.engine.clone()),
                ("version", info.version()),
                ("suite", suite.to_string()),
                ("group", group.to_string()),
                ("test", "geomean".to_string()),
                ("relative", rel.ratio.to_string()),
                ("ci_low", num(rel.ci_low)),
                ("ci_high", num(rel.ci_high)),
                ("verdict", verdict),
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
