//! Tidy CSV: one row per target × test × threads × repeat, the base included,
//! so any tool can redo the statistics. Insert Benchmark steps are rows too
//! (suite `ibench`, threads = clients, qps = the step's throughput), with the
//! insert, delete and query rates and the SLA in the last columns.

use super::Exporter;
use crate::report::ibench::IbenchSection;
use crate::report::model::{HwFigures, Report, Row, Side};

/// Columns only Insert Benchmark rows fill.
const IBENCH_KEYS: [&str; 8] = [
    "inserts_per_sec",
    "deletes_per_sec",
    "queries_per_sec",
    "target_ips",
    "sla_missed",
    "insert_p99_us",
    "delete_p99_us",
    "query_p99_us",
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

fn rows(out: &mut String, name: &str, engine: &str, row: &Row, side: &Side) {
    for (i, s) in side.samples.iter().enumerate() {
        let mut cells = vec![
            field(name),
            field(engine),
            field(&s.engine_version),
            field(&row.suite),
            row.group.key().to_string(),
            field(&row.test),
            row.threads.to_string(),
            (i + 1).to_string(),
            field(&s.run_id),
            s.qps.to_string(),
            s.tps.to_string(),
            s.errors.to_string(),
            s.latency_us.p50.to_string(),
            s.latency_us.p95.to_string(),
            s.latency_us.p99.to_string(),
            s.latency_us.max.to_string(),
        ];
        let hw = s.hw.as_ref().map(|h| h.values()).unwrap_or([None; 7]);
        cells.extend(hw.iter().map(|v| num(*v)));
        cells.extend(IBENCH_KEYS.iter().map(|_| String::new()));
        out.push_str(&cells.join(","));
        out.push('\n');
    }
}

fn ibench_rows(out: &mut String, report: &Report, s: &IbenchSection) {
    for row in &s.rows {
        let engine = report
            .names()
            .iter()
            .position(|n| *n == row.name)
            .map(|i| report.info(i).engine.as_str())
            .unwrap_or("");
        for (col, cell) in s.steps.iter().zip(&row.cells) {
            let Some(cell) = cell else { continue };
            for (i, r) in cell.repeats.iter().enumerate() {
                if r.status != "ok" {
                    continue;
                }
                let mut cells = vec![
                    field(&row.name),
                    field(engine),
                    field(&r.engine_version),
                    crate::report::ibench::SUITE.to_string(),
                    if col.query { "query" } else { "load" }.to_string(),
                    field(&col.step),
                    r.clients.to_string(),
                    (i + 1).to_string(),
                    field(&r.run_id),
                    r.throughput.to_string(),
                ];
                // tps, errors and the sysbench latency columns.
                cells.extend((0..6).map(|_| String::new()));
                let hw = r.hw.as_ref().map(|h| h.values()).unwrap_or([None; 7]);
                cells.extend(hw.iter().map(|v| num(*v)));
                cells.extend([
                    r.inserts_per_sec.to_string(),
                    r.deletes_per_sec.to_string(),
                    r.queries_per_sec.to_string(),
                    num(r.target_ips),
                    if col.query {
                        r.sla_missed.to_string()
                    } else {
                        String::new()
                    },
                    num(r.insert_p99_us),
                    num(r.delete_p99_us),
                    num(r.query_p99_us),
                ]);
                out.push_str(&cells.join(","));
                out.push('\n');
            }
        }
    }
}

impl Exporter for Csv {
    fn render(&self, report: &Report) -> String {
        let mut header = vec![
            "target", "engine", "version", "suite", "group", "test", "threads", "repeat", "run_id",
            "qps", "tps", "errors", "p50_us", "p95_us", "p99_us", "max_us",
        ];
        header.extend(HwFigures::KEYS);
        header.extend(IBENCH_KEYS);
        let mut out = header.join(",");
        out.push('\n');
        for row in report.rows() {
            rows(
                &mut out,
                &report.base,
                &report.base_info.engine,
                row,
                &row.base,
            );
            for (i, c) in row.cells.iter().enumerate() {
                if let Some(c) = c {
                    let info = &report.target_info[i];
                    rows(&mut out, &info.name, &info.engine, row, &c.side);
                }
            }
        }
        if let Some(s) = &report.ibench {
            ibench_rows(&mut out, report, s);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(super::field("plain"), "plain");
        assert_eq!(super::field("a,b"), "\"a,b\"");
        assert_eq!(super::field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
