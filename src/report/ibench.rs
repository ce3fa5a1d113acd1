//! Insert Benchmark tables (reference §5.4): the throughput table (one row
//! per run, one column per step), the same relative to the first run, and
//! the insert rate during the query steps with SLA misses marked.

use crate::store::{RunDoc, TestResult};

use super::table::{TextTable, cell, num};

/// Marks a query step's QPS whose insert rate missed the SLA ("can be ignored").
pub const MISSED_QPS: &str = "*";
/// Marks an insert rate below 95 % of its target.
pub const MISSED_IPS: &str = "!";

/// The stored steps of `doc`, in run order (the latest result of a step wins).
fn steps(doc: &RunDoc) -> Vec<&TestResult> {
    let mut v: Vec<&TestResult> = Vec::new();
    for t in doc.tests.iter().filter(|t| t.suite == "ibench") {
        match v.iter_mut().find(|x| x.test == t.test) {
            Some(x) => *x = t,
            None => v.push(t),
        }
    }
    v
}

/// Step names across `docs`, in the order they first appear.
fn columns(docs: &[&RunDoc]) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    for d in docs {
        for t in steps(d) {
            if !cols.contains(&t.test) {
                cols.push(t.test.clone());
            }
        }
    }
    cols
}

fn find<'a>(doc: &'a RunDoc, step: &str) -> Option<&'a TestResult> {
    steps(doc).into_iter().find(|t| t.test == step)
}

fn missed(t: &TestResult) -> bool {
    t.ibench.as_ref().is_some_and(|i| i.sla_missed)
}

/// The step's throughput when it finished, else its status.
fn value(t: Option<&TestResult>) -> Result<f64, String> {
    match t {
        None => Err("-".into()),
        Some(t) if t.status == "ok" => Ok(t.qps),
        Some(t) => Err(t.status.clone()),
    }
}

/// The throughput table, the relative one (with two runs or more) and the
/// insert-rate-during-queries table for `docs` (the first is the base).
pub fn ibench_tables(docs: &[&RunDoc]) -> String {
    let cols = columns(docs);
    if cols.is_empty() {
        return String::new();
    }
    let mut header = vec!["run"];
    header.extend(cols.iter().map(String::as_str));
    let mut tput = TextTable::new(&header);
    let mut any_missed = false;
    for d in docs {
        let mut row = vec![d.name.clone()];
        for c in &cols {
            let t = find(d, c);
            row.push(match value(t) {
                Ok(v) if t.is_some_and(missed) => {
                    any_missed = true;
                    format!("{}{MISSED_QPS}", num(v))
                }
                Ok(v) => num(v),
                Err(s) => s,
            });
        }
        tput.row(row);
    }
    let mut out = format!(
        "\nthroughput (l.i0, l.i1, l.i2: inserts/s; l.x: indexed rows/s; qr/qp: queries/s)\n{}",
        tput.render()
    );
    if any_missed {
        out.push_str(&format!(
            "  {MISSED_QPS} the step missed its insert-rate SLA: its queries/s can be ignored\n"
        ));
    }
    if docs.len() > 1 {
        let mut rel = TextTable::new(&header);
        for d in docs {
            let mut row = vec![d.name.clone()];
            for c in &cols {
                row.push(match (value(find(docs[0], c)), value(find(d, c))) {
                    (Ok(b), Ok(v)) if b > 0.0 => format!("{:.2}", v / b),
                    _ => "-".into(),
                });
            }
            rel.row(row);
        }
        out.push_str(&format!(
            "\nthroughput relative to {}\n{}",
            docs[0].name,
            rel.render()
        ));
    }
    let qcols: Vec<&String> = cols
        .iter()
        .filter(|c| {
            docs.iter()
                .any(|d| find(d, c).is_some_and(|t| t.group == "query"))
        })
        .collect();
    if !qcols.is_empty() {
        let mut h = vec!["run"];
        h.extend(qcols.iter().map(|c| c.as_str()));
        let mut iput = TextTable::new(&h);
        let mut targets = vec!["target".to_string()];
        let mut any = false;
        for c in &qcols {
            targets.push(
                docs.iter()
                    .find_map(|d| find(d, c).and_then(|t| t.ibench.as_ref()?.target_ips))
                    .map(num)
                    .unwrap_or_else(|| "-".into()),
            );
        }
        for d in docs {
            let mut row = vec![d.name.clone()];
            for c in &qcols {
                row.push(match find(d, c) {
                    Some(t) if t.status == "ok" => {
                        let ips = t.ibench.as_ref().map_or(0.0, |i| i.inserts_per_sec);
                        if missed(t) {
                            any = true;
                            format!("{}{MISSED_IPS}", num(ips))
                        } else {
                            num(ips)
                        }
                    }
                    Some(t) => t.status.clone(),
                    None => "-".into(),
                });
            }
            iput.row(row);
        }
        iput.row(targets);
        out.push_str(&format!(
            "\ninsert rate during queries (rows/s, all clients)\n{}",
            iput.render()
        ));
        if any {
            out.push_str(&format!(
                "  {MISSED_IPS} below 95 % of the target: the engine missed the SLA\n"
            ));
        }
    }
    out
}

/// The end-of-run report of one Insert Benchmark run.
pub fn ibench_run_table(doc: &RunDoc) -> String {
    let mut out = format!(
        "{} on {} {} ({}), {}\n",
        doc.suite, doc.engine.name, doc.engine.version, doc.name, doc.status
    );
    let rows = steps(doc);
    let rows: Vec<&TestResult> = rows.into_iter().filter(|t| t.status != "running").collect();
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
        let ib = t.ibench.clone().unwrap_or_default();
        let p99 = |rt: &Option<crate::store::RtSummary>| {
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
        let mut status = t.status.clone();
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
    out.push_str(&ibench_tables(&[doc]));
    out.push_str(&hw_table(&rows));
    out
}

/// Hardware cost per insert (loads; per indexed row for l.x) or per query (qr/qp).
fn hw_table(rows: &[&TestResult]) -> String {
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
        "wKB/insert",
        "db MB",
    ]);
    let mut n = 0;
    let mut notes: Vec<String> = Vec::new();
    for t in rows.iter().filter(|t| t.status == "ok") {
        let Some(hw) = &t.hw else { continue };
        let per = match (t.group.as_str(), t.test.as_str()) {
            ("query", _) => "query",
            (_, "l.x") => "row",
            _ => "insert",
        };
        let db = hw
            .db_after
            .as_ref()
            .and_then(|d| d.disk_bytes.or(d.engine_bytes))
            .map(|b| b as f64 / 1048576.0);
        table.row(vec![
            t.test.clone(),
            per.into(),
            cell(hw.cpu_us_per_op),
            cell(hw.server_cpu_us_per_op),
            cell(hw.client_cpu_us_per_op),
            cell(hw.cs_per_op),
            cell(hw.reads_per_op),
            cell(hw.rkb_per_op),
            cell(hw.wkb_per_op),
            cell(t.ibench.as_ref().and_then(|i| i.wkb_per_insert)),
            cell(db),
        ]);
        for u in &hw.unavailable {
            if !notes.contains(u) {
                notes.push(u.clone());
            }
        }
        n += 1;
    }
    if n == 0 {
        return String::new();
    }
    let mut out = format!(
        "\nhardware cost per operation (CPU in microseconds; cs = context switches; r = storage reads)\n{}",
        table.render()
    );
    for u in notes {
        out.push_str(&format!("  - not measured: {u}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::IbenchStep;

    fn step(name: &str, qps: f64, ips: f64, target: Option<f64>) -> TestResult {
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
        t.ibench = Some(IbenchStep {
            inserts_per_sec: ips,
            target_ips: target,
            sla_missed: target.is_some_and(|t| crate::ibench::sla_missed(ips, t)),
            ..Default::default()
        });
        t
    }

    fn doc(name: &str, tests: Vec<TestResult>) -> RunDoc {
        let mut d: RunDoc = serde_json::from_value(serde_json::json!({
            "rqps_version": "0", "run_id": name, "name": name, "suite": "ibench",
            "status": "ok", "started": "", "command_line": [], "target": "",
            "engine": {"name": "e", "version": "1"}, "params": null,
            "host": serde_json::to_value(crate::host::host()).unwrap()
        }))
        .unwrap();
        d.tests = tests;
        d
    }

    #[test]
    fn tables_mark_sla_misses_and_compare_with_the_first_run() {
        let a = doc(
            "a",
            vec![
                step("l.i0", 1000.0, 1000.0, None),
                step("qr100", 500.0, 100.0, Some(100.0)),
            ],
        );
        let b = doc(
            "b",
            vec![
                step("l.i0", 1500.0, 1500.0, None),
                step("qr100", 800.0, 90.0, Some(100.0)),
            ],
        );
        let out = ibench_tables(&[&a, &b]);
        assert!(out.contains("800*"), "{out}");
        assert!(out.contains(" 500\n") || out.contains(" 500 "), "{out}");
        assert!(out.contains("90.0!"), "{out}");
        assert!(out.contains("1.50") && out.contains("1.60"), "{out}");
        assert!(out.contains("target"), "{out}");
        assert!(out.contains("missed its insert-rate SLA"), "{out}");
        let one = ibench_run_table(&a);
        assert!(one.contains("insert rate during queries"), "{one}");
        assert!(!one.contains("relative"), "{one}");
    }
}
