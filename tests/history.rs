//! `rqps history` through the real binary on synthesized result directories:
//! 60 nightly runs made from a fixture run (tests/fixtures/results), each
//! test's QPS drawn with 2 % log-normal noise from a seeded generator.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand_distr::{Distribution, Normal};
use serde_json::Value;

fn fixture_run() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/20250101-100000-pg15")
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn write(p: &Path, v: &Value) {
    std::fs::write(p, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

/// `n` runs named nightly-0 .. nightly-(n-1), an hour apart, each with the
/// tests point-query and insert (t=1); `qps(run, test)` gives the mean QPS.
fn synthesize(dir: &Path, n: usize, qps: impl Fn(usize, &str) -> f64) {
    let run = read(&fixture_run().join("run.json"));
    let tests: Vec<(String, Value)> = ["002-point-query-t1.json", "011-insert-t1.json"]
        .iter()
        .map(|f| (f.to_string(), read(&fixture_run().join("tests").join(f))))
        .collect();
    let mut rng = SmallRng::seed_from_u64(40);
    let noise = Normal::<f64>::new(0.0, 0.02).unwrap();
    for i in 0..n {
        let started = format!("2026-01-{:02}T{:02}:00:00Z", 1 + i / 24, i % 24);
        let id = format!("2026010{}-{:02}0000-nightly-{i}", 1 + i / 24, i % 24);
        let d = dir.join(&id);
        std::fs::create_dir_all(d.join("tests")).unwrap();
        let mut r = run.clone();
        r["run_id"] = id.clone().into();
        r["name"] = format!("nightly-{i}").into();
        r["started"] = started.clone().into();
        write(&d.join("run.json"), &r);
        for (f, t) in &tests {
            let mut t = t.clone();
            let name = t["test"].as_str().unwrap().to_string();
            t["qps"] = (qps(i, &name) * noise.sample(&mut rng).exp()).into();
            t["started"] = started.clone().into();
            write(&d.join("tests").join(f), &t);
        }
    }
}

fn history(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rqps"))
        .arg("history")
        .arg("--results")
        .arg(dir)
        .args(args)
        .output()
        .expect("rqps runs")
}

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn changes_of<'a>(h: &'a Value, test: &str) -> Vec<&'a Value> {
    h["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["test"] == test)
        .collect()
}

#[test]
fn an_eight_percent_step_at_run_40_is_one_change_point_and_a_flat_series_none() {
    let tmp = tempfile::tempdir().unwrap();
    synthesize(tmp.path(), 60, |i, test| match test {
        "point-query" if i >= 40 => 920.0,
        _ => 1000.0,
    });
    let h = json(&history(
        tmp.path(),
        &[
            "--format",
            "json",
            "--order",
            "name",
            "--name-glob",
            "nightly-*",
        ],
    ));
    assert_eq!(h["runs"].as_array().unwrap().len(), 60);
    // --order name sorts nightly-10 after nightly-9.
    assert_eq!(h["runs"][10]["name"], "nightly-10");
    let step = changes_of(&h, "point-query");
    assert_eq!(step.len(), 1, "{step:?}");
    let c = step[0];
    let index = c["index"].as_u64().unwrap();
    assert!((39..=41).contains(&index), "{c}");
    assert_eq!(c["run_id"], h["runs"][index as usize]["run_id"]);
    let change = c["change"].as_f64().unwrap();
    assert!((-0.10..-0.06).contains(&change), "{c}");
    assert!(c["before"].as_f64().unwrap() > c["after"].as_f64().unwrap());
    assert!(c["p"].as_f64().unwrap() <= 0.05);
    assert!(changes_of(&h, "insert").is_empty(), "{h}");

    // The readable formats say the same.
    let o = history(tmp.path(), &["--format", "term"]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{err}");
    let row = out
        .lines()
        .find(|l| l.contains("point-query") && l.contains("->"))
        .unwrap();
    assert!(
        row.contains(&format!(" {index} ")) && row.contains('%'),
        "{out}"
    );
    let o = history(tmp.path(), &["--format", "html"]);
    let page = String::from_utf8_lossy(&o.stdout);
    assert_eq!(page.matches("<svg").count(), 2);
    assert_eq!(page.matches("class=\"change\"").count(), 1);

    // The step is old news: the newest run starts nothing.
    assert!(history(tmp.path(), &["--fail-on-change"]).status.success());
}

#[test]
fn fail_on_change_exits_1_when_the_newest_run_starts_a_regression() {
    let tmp = tempfile::tempdir().unwrap();
    synthesize(tmp.path(), 60, |i, test| match test {
        "insert" if i == 59 => 850.0,
        _ => 1000.0,
    });
    let o = history(tmp.path(), &["--fail-on-change", "--format", "md"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("FAIL: the newest run") && err.contains("insert"),
        "{err}"
    );
    let h = json(&history(tmp.path(), &["--format", "json"]));
    let c = changes_of(&h, "insert");
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0]["index"], 59);
}

#[test]
fn history_refuses_bad_input_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    synthesize(tmp.path(), 3, |_, _| 1000.0);
    for (args, says) in [
        (&["--name-glob", "weekly-*"][..], "matches 'weekly-*'"),
        (&["--name-glob", "[x"][..], "is not a glob"),
        (&["--max-p", "1.5"][..], "--max-p must be"),
        (&["--name-glob", "nightly-0"][..], "at least 3 runs"),
    ] {
        let o = history(tmp.path(), args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// `n` exact copies of the fixture run's tests, named `a` and `b` in turn,
/// ten minutes apart: every value of a series tied, as in a directory of
/// copied runs.
fn copies(dir: &Path, n: usize) {
    let run = read(&fixture_run().join("run.json"));
    let tests: Vec<(String, Value)> = std::fs::read_dir(fixture_run().join("tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                read(&p),
            )
        })
        .collect();
    for i in 0..n {
        let (h, m) = (i * 10 / 60, i * 10 % 60);
        let started = format!("2026-01-{:02}T{:02}:{m:02}:00Z", 1 + h / 24, h % 24);
        let name = if i % 2 == 0 { "a" } else { "b" };
        let id = format!("202601{:02}-{:02}{m:02}00-{name}", 1 + h / 24, h % 24);
        let d = dir.join(&id);
        std::fs::create_dir_all(d.join("tests")).unwrap();
        let mut r = run.clone();
        r["run_id"] = id.clone().into();
        r["name"] = name.into();
        r["started"] = started.clone().into();
        write(&d.join("run.json"), &r);
        for (f, t) in &tests {
            let mut t = t.clone();
            t["started"] = started.clone().into();
            write(&d.join("tests").join(f), &t);
        }
    }
}

#[test]
fn copied_runs_with_tied_values_have_no_change_point_and_take_seconds() {
    // 300 copies under two names: history took 160 s over 200 of them (a
    // debug build), finding a "change" every other run from rounding.
    let d = tempfile::tempdir().unwrap();
    copies(d.path(), 300);
    let t = std::time::Instant::now();
    let h = json(&history(d.path(), &["--format", "json"]));
    let took = t.elapsed();
    assert_eq!(
        h["changes"].as_array().unwrap().len(),
        0,
        "{}",
        h["changes"]
    );
    assert!(
        took < std::time::Duration::from_secs(20),
        "history took {took:?}"
    );
}
