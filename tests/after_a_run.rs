//! What a user does after a run (issue 31): the last line of `rqps run` says
//! how to compare, `rqps runs` lists the stored names, the CSV loads into
//! tools with a unit and a busy column and no column left empty, and
//! `rqps --version` names the commit it was built from.

mod common;
use common::{hint_commands, one_line, rqps, text};

use std::path::Path;

fn fixtures() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"))
}

fn last_line(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .last()
        .unwrap_or("")
        .to_string()
}

fn ci_run(results: &str, name: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "--profile",
        "ci",
        "--tests",
        "point-query",
        "--threads",
        "1",
        "--read-secs",
        "0.2",
        "--write-secs",
        "0.2",
        "--results",
        results,
        "--name",
        name,
    ];
    args.extend_from_slice(extra);
    rqps(&args)
}

#[test]
fn after_a_run_the_last_line_says_how_to_compare_and_runs_lists_the_names() {
    let d = tempfile::tempdir().unwrap();
    let res = d.path().join("res");
    let res = res.to_str().unwrap();
    // The first name: run a second target, then report.
    let o = ci_run(res, "a", &[]);
    assert!(o.status.success(), "{}", text(&o));
    // The run with one change, under a name of its own, then the report
    // (issue 38: every hint is a command that works; tests/conclusions.rs
    // runs them). Never the same run under a new name (issue 57): that
    // compares a run with itself.
    // Each command on lines of its own, within 120 columns.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.lines().any(|l| l
            == "compare with (one change: --ps-mode auto → disable; or change --target, --server or --config), then the report:"),
        "{err}"
    );
    let cmds: Vec<String> = hint_commands(&err, "compare with")
        .iter()
        .map(|c| one_line(c))
        .collect();
    assert_eq!(
        cmds,
        [
            format!(
                "rqps run --profile ci --tests point-query --threads 1 --read-secs 0.2 --write-secs 0.2 --results {res} --ps-mode disable --name a-disable"
            ),
            format!("rqps report --results {res} --base a")
        ]
    );
    // A second name: the report of both.
    let o = ci_run(res, "b", &["--repeats", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        last_line(&o),
        format!("compare with: rqps report --results {res} --base a")
    );
    // --quiet: only the table.
    let o = ci_run(res, "c", &["-q"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("compare with"), "{}", text(&o));
    // The first command again, as its own command: a repeat of `a` (the
    // seed it drew is recorded, not compared; issue 55).
    let o = ci_run(res, "a", &["-q"]);
    assert!(o.status.success(), "{}", text(&o));

    let o = rqps(&["runs", "--results", res]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("NAME") && lines[0].contains("REPEATS"),
        "{out}"
    );
    let row = |name: &str| {
        lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in\n{out}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    // NAME SUITE ENGINE(2 words) REPEATS FIRST(2) LAST(2) SHAPE...
    assert_eq!(&row("a")[..2], ["a", "sysbench"], "{out}");
    assert_eq!(row("a")[4], "2", "two commands, one line: {out}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("a ")).count(),
        1,
        "{out}"
    );
    assert!(!out.contains("seed"), "{out}");
    assert_eq!(row("b")[4], "2", "{out}");
    assert!(
        row("b").contains(&"profile=ci") && row("b").contains(&"threads=1"),
        "{out}"
    );
    assert!(
        out.ends_with(&format!("rqps report --results {res} --base a\n")),
        "{out}"
    );
    // a, b and c ran one command: the report says first that they are an
    // A/A comparison, whose differences are noise, and how large.
    let o = rqps(&["report", "--results", res, "--base", "a"]);
    let rep = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        rep.starts_with(
            "A/A: b, c against a, identical parameters: every difference is noise, here up to "
        ),
        "{rep}"
    );
}

/// sysbench's `--events=200 --time=0` as the native tests take it: each
/// test ends at exactly 200 events, and the closing table says so; `--events`
/// with a time ends at whichever comes first; a time of 0 needs events.
#[test]
fn events_bound_each_native_test_as_sysbench_s_events_bound_a_run() {
    let d = tempfile::tempdir().unwrap();
    let res = d.path().join("res");
    let res = res.to_str().unwrap();
    let json = d.path().join("run.json");
    let bounded = |name: &str, extra: &[&str]| {
        let mut a = vec![
            "run",
            "--profile",
            "ci",
            "--tests",
            "point-query",
            "--threads",
            "1",
            "--results",
            res,
            "--name",
            name,
        ];
        a.extend_from_slice(extra);
        rqps(&a)
    };
    let o = bounded(
        "ev",
        &[
            "--events",
            "200",
            "--read-secs",
            "0",
            "--write-secs",
            "0",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("the test ended at its event limit: 200 events (--events)"),
        "{}",
        text(&o)
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let t = &doc["tests"][0];
    assert_eq!(
        (t["events"].as_u64(), t["threads"].as_u64()),
        (Some(200), Some(1)),
        "{t}"
    );
    assert_eq!(t["event_bound"]["ended_by"], "events", "{t}");
    assert_eq!(doc["params"]["events"], 200);
    // A time that ends first: said, and the events bound the rest.
    let o = bounded("ev-time", &["--events", "1000000000", "--read-secs", "0.2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("point-query t=1: ended by its time limit (0.2 s) after "),
        "{}",
        text(&o)
    );
    let o = bounded("ev-zero", &["--read-secs", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("or 0 with --events N"), "{}", text(&o));
}

#[test]
fn runs_groups_the_repeats_of_each_name_and_says_what_differs() {
    let o = rqps(&[
        "runs",
        "--results",
        fixtures().join("results").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let repeats = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .map(|l| l.split_whitespace().nth(4).unwrap().to_string())
    };
    assert_eq!(repeats("pg15").as_deref(), Some("3"), "{out}");
    assert_eq!(repeats("pg16").as_deref(), Some("3"), "{out}");
    assert_eq!(repeats("pg16-tuned").as_deref(), Some("2"), "{out}");
    assert!(out.contains("2025-01-01 10:00  2025-01-01 16:00"), "{out}");

    let empty = tempfile::tempdir().unwrap();
    let o = rqps(&["runs", "--results", empty.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no runs in"), "{}", text(&o));
}

#[test]
fn the_csv_of_a_sysbench_report_has_unit_and_busy_and_no_column_empty_on_every_row() {
    let o = rqps(&[
        "report",
        "--results",
        fixtures().join("results").to_str().unwrap(),
        "--base",
        "pg15",
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let csv = String::from_utf8_lossy(&o.stdout).to_string();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let all: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(header[0], "target", "{csv}");
    for (i, h) in header.iter().enumerate() {
        assert!(
            all.iter().any(|r| !r[i].is_empty()),
            "column {h} is empty on every row:\n{csv}"
        );
    }
    let col = |h: &str| {
        header
            .iter()
            .position(|x| *x == h)
            .unwrap_or_else(|| panic!("no {h} column: {header:?}"))
    };
    // The measured rows (the summary's `geomean` records have no unit or busy).
    let rows: Vec<&Vec<&str>> = all.iter().filter(|r| r[col("test")] != "geomean").collect();
    assert!(rows.len() > 10, "{csv}");
    // scan counts thousands of rows per second, the others statements.
    for r in &rows {
        let want = if r[col("test")] == "scan" {
            "Krows/s"
        } else {
            "statements/s"
        };
        assert_eq!(r[col("unit")], want, "{csv}");
    }
    assert!(
        rows.iter()
            .all(|r| ["true", "false"].contains(&r[col("busy")])),
        "{csv}"
    );
}

#[test]
fn version_names_the_commit_when_built_from_a_checkout() {
    let o = rqps(&["--version"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        out.starts_with(&format!("rqps {}", env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success());
    match head {
        // Built from a checkout: the commit (HEAD when the build ran; the
        // build reruns when HEAD moves).
        Some(h) => {
            let commit = String::from_utf8_lossy(&h.stdout).trim().to_string();
            assert!(
                out.contains(&format!("(git {commit})")),
                "{out} vs {commit}"
            );
        }
        None => assert!(!out.contains("(git"), "{out}"),
    }
}
