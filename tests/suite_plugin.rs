//! A suite is a plug-in: `select1` lives in its own folder and one registry
//! line, and it runs from the CLI, is stored, reported, gated and run by a
//! matrix without any of those naming it.

mod common;
use common::{read_json, rqps, text};
use std::path::Path;

fn run_select1(results: &Path, name: &str) {
    let o = rqps(&[
        "run",
        "--suite",
        "select1",
        "--profile",
        "ci",
        "--threads",
        "1,2",
        "--secs",
        "0.3",
        "--warmup-secs",
        "0.1",
        "--name",
        name,
        "--results",
        results.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
}

fn stored_tests(results: &Path) -> Vec<serde_json::Value> {
    let mut v = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("run.json").is_file())
        .collect();
    dirs.sort();
    for d in dirs {
        let run = read_json(&d.join("run.json"));
        assert_eq!(run["suite"], "select1");
        let mut files: Vec<_> = std::fs::read_dir(d.join("tests"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        v.extend(files.iter().map(|f| read_json(f)));
    }
    v
}

#[test]
fn a_new_suite_runs_from_the_cli_and_every_test_is_stored() {
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("results");
    run_select1(&results, "a");
    let tests = stored_tests(&results);
    assert_eq!(tests.len(), 2, "one test per thread count");
    for (t, threads) in tests.iter().zip([1, 2]) {
        assert_eq!(t["suite"], "select1");
        assert_eq!(t["status"], "ok");
        assert_eq!(t["threads"], threads);
        assert!(t["qps"].as_f64().unwrap() > 0.0, "{t}");
        assert!(t["reads"].as_u64().unwrap() > 0, "every SELECT 1 is a read");
        assert!(t["hw"].is_object(), "the harness probed it: {t}");
    }
}

#[test]
fn a_new_suite_appears_in_every_report_format_and_the_gate() {
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("results");
    run_select1(&results, "a");
    run_select1(&results, "b");
    let r = results.to_str().unwrap();
    for format in ["term", "md", "csv", "tsv", "json", "html"] {
        let o = rqps(&["report", "--results", r, "--base", "a", "--format", format]);
        assert!(o.status.success(), "{format}: {}", text(&o));
        assert!(
            text(&o).contains("select1"),
            "{format} names the test: {}",
            text(&o)
        );
    }
    let o = rqps(&[
        "compare",
        "--results",
        r,
        "--base",
        "a",
        "--target",
        "b",
        "--fail-below",
        "0.01",
    ]);
    assert!(text(&o).contains("select1"), "{}", text(&o));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn a_new_suite_runs_in_a_matrix_with_its_own_options() {
    let d = tempfile::tempdir().unwrap();
    let m = d.path().join("m.toml");
    std::fs::write(
        &m,
        "[defaults]\nsuite = \"select1\"\nprofile = \"ci\"\nthreads = [1]\nsecs = 0.3\nwarmup_secs = 0.1\ncooldown_secs = 0\n\n[[target]]\nname = \"one\"\nengine = \"sqlite\"\n\n[[target]]\nname = \"two\"\nengine = \"sqlite\"\n",
    )
    .unwrap();
    let results = d.path().join("results");
    let o = rqps(&[
        "matrix",
        m.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let tests = stored_tests(&results);
    assert_eq!(tests.len(), 2);
    assert!(tests.iter().all(|t| t["status"] == "ok"));

    // An option of another suite names its file, line and the suite it belongs to.
    std::fs::write(
        &m,
        "[defaults]\nsuite = \"select1\"\ntable_size = 10\n[[target]]\nname = \"x\"\nengine = \"sqlite\"\n",
    )
    .unwrap();
    let o = rqps(&[
        "matrix",
        m.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("m.toml:3: table_size: applies only to suite = \"sysbench\""),
        "{}",
        text(&o)
    );
}

#[test]
fn a_new_suites_options_are_its_own() {
    let o = rqps(&["run", "--secs", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--secs applies only to --suite select1"),
        "{}",
        text(&o)
    );
    let o = rqps(&["run", "--suite", "select1", "--profile", "small-server"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("unknown profile"), "{}", text(&o));
    let o = rqps(&["run", "--suite", "nope"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("expected one of sysbench"),
        "{}",
        text(&o)
    );
    let o = rqps(&["tests", "--suite", "select1", "--threads", "1,4"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("select1 t4"), "{}", text(&o));
}

#[test]
fn a_new_suite_runs_on_throwaway_servers_too() {
    let required = std::env::var("RQPS_REQUIRE_SERVERS").is_ok_and(|v| v == "1");
    for server in ["postgres", "mariadb"] {
        let d = tempfile::tempdir().unwrap();
        let results = d.path().join("results");
        let o = rqps(&[
            "run",
            "--suite",
            "select1",
            "--server",
            server,
            "--profile",
            "ci",
            "--secs",
            "0.3",
            "--results",
            results.to_str().unwrap(),
        ]);
        if !o.status.success() && !required && o.status.code() == Some(2) {
            eprintln!("skipping {server}: {}", text(&o));
            continue;
        }
        assert!(o.status.success(), "{server}: {}", text(&o));
        let tests = stored_tests(&results);
        assert_eq!(tests.len(), 1, "{server}");
        assert_eq!(tests[0]["status"], "ok", "{server}");
        assert!(tests[0]["qps"].as_f64().unwrap() > 0.0, "{server}");
        assert!(
            tests[0]["hw"]["server_cpu_us_per_op"].as_f64().is_some(),
            "{server}: the server's CPU per SELECT 1 is measured: {}",
            tests[0]
        );
    }
}
