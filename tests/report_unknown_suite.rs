//! A suite the report code has never heard of: results stored with
//! `suite = "select1"` (one test, group `select`) still show up in every
//! format of `rqps report` and in `rqps compare`, because the generic tables
//! take any suite with test, threads and QPS (issue 11: a new suite needs no
//! edit to report/).
//!
//! The results directory is written here, in the layout of
//! tests/fixtures/results: `<run id>/run.json` and `<run id>/tests/*.json`.

use std::path::Path;
use std::process::{Command, Output};

use rqps::report::compare::{self, Rules};
use rqps::report::export::{self, Format};
use rqps::report::load::{self, Options};
use rqps::report::model::{Report, Verdict};

/// QPS of the three repeats of each name: `cand` is 20 % slower, consistently.
const BASE_QPS: [f64; 3] = [1000.0, 1010.0, 990.0];
const CAND_QPS: [f64; 3] = [800.0, 805.0, 795.0];

fn run_doc(name: &str, run_id: &str, started: &str) -> serde_json::Value {
    serde_json::json!({
        "rqps_version": "0.1.0",
        "run_id": run_id,
        "name": name,
        "suite": "select1",
        "status": "ok",
        "started": started,
        "command_line": ["rqps", "run", "--suite", "select1", "--name", name],
        "target": "sqlite::memory:",
        // cand is another build of the engine: the same parameters on one version would be an
        // A/A report, with its own heading.
        "engine": { "name": "sqlite", "version": if name == "cand" { "3.46.1" } else { "3.46.0" } },
        "params": { "secs": 3.0 },
        "host": {
            "arch": "x86_64", "cpu_model": "Test CPU", "cpus": 8, "hostname": "bench1",
            "kernel": "6.1.0", "mem_total_kb": 16000000, "os": "linux"
        }
    })
}

fn test_doc(threads: usize, qps: f64, started: &str) -> serde_json::Value {
    let per_second: Vec<serde_json::Value> = (1..=3)
        .map(|t| serde_json::json!({ "t": t, "qps": qps, "tps": qps, "errors": 0 }))
        .collect();
    let events = (qps * 3.0) as u64;
    serde_json::json!({
        "suite": "select1", "test": "select1", "group": "select",
        "threads": threads, "reported": true, "status": "ok", "started": started,
        "secs": 3.0, "warmup_secs": 0.0, "qps": qps, "qps_unit": "queries/s", "tps": qps,
        "statements_per_sec": qps, "reads": events, "writes": 0, "other": 0,
        "events": events, "errors": 0, "reconnects": 0, "rows": events,
        "latency_us": { "avg": 100.0, "p50": 90.0, "p95": 150.0, "p99": 200.0, "max": 900.0 },
        "per_second": per_second
    })
}

fn write_json(path: &Path, v: &serde_json::Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

/// Three repeats of `base` and of `cand`, each at 1 and 2 threads.
fn results_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (hour, (name, qps)) in [("base", BASE_QPS), ("cand", CAND_QPS)]
        .into_iter()
        .flat_map(|(n, q)| q.into_iter().map(move |v| (n, v)))
        .enumerate()
    {
        let started = format!("2025-01-01T{:02}:00:00Z", 10 + hour);
        let run_id = format!("20250101-{:02}0000-{name}", 10 + hour);
        let dir = d.path().join(&run_id);
        write_json(&dir.join("run.json"), &run_doc(name, &run_id, &started));
        for (i, threads) in [1, 2].into_iter().enumerate() {
            let file = format!("{:03}-select1-t{threads}.json", i + 1);
            write_json(
                &dir.join("tests").join(file),
                &test_doc(threads, qps * threads as f64, &started),
            );
        }
    }
    d
}

fn opts() -> Options {
    Options {
        base: "base".into(),
        targets: None,
        rules: Rules::default(),
        all: false,
        // The registered suites' sections: select1 has none, so report/ knows nothing of it.
        sections: rqps::suite::report_sections(),
        workloads: rqps::suite::workloads(),
        engines: rqps::plan::report::engine_keys(),
        allow_mismatch: false,
    }
}

fn report(dir: &Path) -> Report {
    load::load(dir, &opts()).expect("a report of an unknown suite builds")
}

fn rqps(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("rqps runs")
}

#[test]
fn an_unknown_suite_makes_rows_of_the_generic_tables() {
    let d = results_dir();
    let r = report(d.path());
    assert_eq!(r.targets, ["cand"]);
    assert_eq!(r.thread_counts, [1, 2]);
    assert_eq!(r.groups.len(), 1);
    let g = &r.groups[0];
    assert_eq!(
        (g.group.as_str(), g.title.as_str()),
        ("select", "select1: select")
    );
    let rows: Vec<(&str, &str, usize)> = r
        .rows()
        .map(|x| (x.suite.as_str(), x.test.as_str(), x.threads))
        .collect();
    assert_eq!(rows, [("select1", "select1", 1), ("select1", "select1", 2)]);
    let cell = r.rows().next().unwrap().cells[0].as_ref().unwrap();
    assert_eq!(cell.side.n, 3);
    assert_eq!(cell.rel.verdict, Verdict::Slower);
    assert!((cell.rel.ratio - 0.80).abs() < 0.005, "{:?}", cell.rel);
    assert!(r.parts.is_empty(), "no section built a part of its own");
    assert!(
        r.warnings
            .iter()
            .all(|w| !w.contains("unknown report group")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn an_unknown_suite_appears_in_every_format() {
    let d = results_dir();
    let r = report(d.path());
    let render = |f: Format| export::exporter(f, false).render(&r);

    let term = render(Format::Term);
    assert!(
        term.starts_with("Relative QPS: cand against base\n"),
        "{term}"
    );
    assert!(term.contains("Select1: select"), "{term}");
    assert!(
        term.contains("select1 t=1") && term.contains("0.80 -"),
        "{term}"
    );

    let md = render(Format::Md);
    assert!(md.contains("## Select1: select"), "{md}");
    assert!(md.contains("| select1 t=2 |"), "{md}");

    let csv = render(Format::Csv);
    // Header, then 2 thread counts × 3 repeats × 2 names, then the summary
    // of the group and of all tests.
    assert_eq!(csv.lines().count(), 1 + 2 * 3 * 2 + 2, "{csv}");
    assert!(
        csv.contains("\ncand,sqlite,3.46.1,select1,select,select1,1,1,"),
        "{csv}"
    );

    let tsv = render(Format::Tsv);
    assert!(
        tsv.starts_with("Relative to: base\ncol-1 : cand\n"),
        "{tsv}"
    );
    assert!(tsv.contains("threads=2\ncol-1\n0.80\tselect1\n"), "{tsv}");

    let json: serde_json::Value = serde_json::from_str(&render(Format::Json)).unwrap();
    let row = &json["groups"][0]["rows"][0];
    assert_eq!(row["suite"], "select1");
    assert_eq!(row["group"], "select");
    assert_eq!(row["cells"][0]["rel"]["verdict"], "slower");

    let html = render(Format::Html);
    assert!(html.contains("<h2>Select1: select</h2>"), "{html}");
    // The summary's bars, the group's bar chart, one thread sweep; no
    // per-second chart, as each test has fewer than 5 seconds.
    assert_eq!(html.matches("<svg").count(), 1 + 1 + 1);
    assert!(html.contains("2 test(s) ran fewer than 5 seconds: no chart."));
    assert!(html.contains("select1: QPS by thread count"));
}

#[test]
fn an_unknown_suite_goes_through_rqps_report_and_rqps_compare() {
    let d = results_dir();
    let dir = d.path().to_str().unwrap();
    for (format, want) in [
        ("term", "select1 t=1"),
        ("md", "select1 t=1"),
        ("html", "select1 t=1"),
        ("csv", ",select1,select,select1,2,"),
        ("tsv", "\tselect1\n"),
        ("json", "\"suite\": \"select1\""),
    ] {
        let o = rqps(&[
            "report",
            "--results",
            dir,
            "--base",
            "base",
            "--format",
            format,
        ]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{format}: {out}");
        assert!(out.contains(want), "{format}: {out}");
    }

    let o = rqps(&[
        "compare",
        "--results",
        dir,
        "--base",
        "base",
        "--target",
        "cand",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a 20 % drop fails the gate: {out}"
    );
    assert!(
        out.contains("select1 t=1") && out.contains("select1 t=2"),
        "{out}"
    );
    assert!(out.contains("FAIL: 2 test(s) below 0.95"), "{out}");

    // The same gate through the library.
    let g = compare::gate(&report(d.path()), 0.95);
    let labels: Vec<(&str, bool)> = g.rows.iter().map(|r| (r.label.as_str(), r.fails)).collect();
    assert_eq!(labels, [("select1 t=1", true), ("select1 t=2", true)]);
    assert!(g.missing.is_empty());
}
