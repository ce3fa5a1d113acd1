//! Conclusions a newcomer cannot misread (issue 38): each of its eight
//! moments driven through the CLI on real runs of embedded SQLite.
//!
//! 1. every hint rqps prints is a command that works: the test runs each
//!    one, as printed, through `sh`;
//! 2. a name's repeats are one experiment: another `--config` under the
//!    default name is refused before the load, with exit 2;
//! 3. busy is said where the verdict is: with spinning processes beside it,
//!    the report colours no verdict and says so in its first 10 lines;
//! 4. `--ps-mode` is a treatment: compared, and named under what differs;
//! 5. each repeat stores its own start and end;
//! 6. hardware costs are per what the suite counts;
//! 7. no work is not `ok`: a writer holds the SQLite database through the
//!    whole measured interval (and tests/intervals.rs does it to a real
//!    server behind a proxy that cuts a reply in half);
//! 8. the report fits the screen: the answer first, and no per-second chart
//!    of a test shorter than 5 s (tests/report.rs checks the rest).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{hint_commands, one_line, read_json, rqps, text};

/// `rqps run` on a temporary SQLite database.
fn run(results: &Path, args: &[&str]) -> Output {
    let mut a = vec!["run", "--results", results.to_str().unwrap()];
    a.extend_from_slice(args);
    rqps(&a)
}

/// A `select1` run: half a second measured.
fn select1(results: &Path, args: &[&str]) -> Output {
    let mut a = vec!["--suite", "select1", "--profile", "ci"];
    a.extend_from_slice(args);
    run(results, &a)
}

/// The run directories under `results`, oldest first.
fn run_dirs(results: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(results)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.join("run.json").is_file());
    v.sort();
    v
}

/// Runs `command` as printed, with `rqps` being the binary under test.
fn sh(command: &str, cwd: &Path) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_rqps")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("sh")
        .args(["-c", command])
        .current_dir(cwd)
        .env("PATH", path)
        .output()
        .unwrap()
}

/// The line of `out` that starts with `prefix`, without it.
fn line_after<'a>(out: &'a str, prefix: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line starting {prefix:?} in:\n{out}"))
}

/// Runs each command of the hint in `out` that starts with `head`, as
/// printed (on lines of its own, continued with ` \`), and checks it works.
fn hint_works(out: &str, head: &str, cwd: &Path) -> Vec<Output> {
    hint_commands(out, head)
        .into_iter()
        .map(|c| {
            let o = sh(&c, cwd);
            assert_eq!(o.status.code(), Some(0), "{c}: {}", text(&o));
            o
        })
        .collect()
}

#[test]
fn moment_1_every_hint_is_a_command_that_works_on_the_results_present() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path().join("r");
    // A name of another suite first: no hint may offer it as a base. The
    // suite has no treatment rqps can change for it: the hint asks for a
    // change in words, never the same run under a new name.
    let o = select1(&r, &["--name", "other"]);
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    let hint = line_after(&all, "to compare: run it again with one thing changed, ");
    assert!(!hint.contains("rqps run"), "{hint}");
    let o = text(&rqps(&["runs", "--results", r.to_str().unwrap()]));
    line_after(
        &o,
        "nothing to compare yet: run other again with one thing changed, such as --target, --server or --config",
    );
    // A sysbench run: its first line changes a treatment (--ps-mode) under
    // a name of its own, then the report of the two. Both work as printed.
    let o = run(
        &r,
        &[
            "--profile",
            "ci",
            "--tests",
            "point-query",
            "--name",
            "first",
        ],
    );
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    let hint: Vec<String> = hint_commands(&all, "compare with")
        .iter()
        .map(|c| one_line(c))
        .collect();
    assert!(!hint.iter().any(|c| c.contains("--base other")), "{hint:?}");
    assert!(
        hint[0].contains("--ps-mode disable --name first-disable"),
        "{hint:?}"
    );
    let outs = hint_works(&all, "compare with", d.path());
    // That second run's own line: the report that compares it.
    let second = text(&outs[0]);
    let again = hint_commands(&second, "compare with");
    assert!(again[0].starts_with("rqps report --results "), "{again:?}");
    hint_works(&second, "compare with", d.path());
    // `rqps runs` now: a report that works.
    let o = text(&rqps(&["runs", "--results", r.to_str().unwrap()]));
    hint_works(&o, "compare them with", d.path());
}

#[test]
fn moment_2_another_config_under_a_stored_name_is_refused_before_the_load() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path().join("r");
    let conf = d.path().join("other.conf");
    std::fs::write(&conf, "PRAGMA cache_size = -4000\n").unwrap();
    let sysbench = ["--profile", "ci", "--tests", "point-query", "-q"];
    let o = run(&r, &sysbench);
    assert!(o.status.success(), "{}", text(&o));
    let mut with_config = sysbench.to_vec();
    with_config.extend(["--config", conf.to_str().unwrap()]);
    let o = run(&r, &with_config);
    let err = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("'sqlite-3.")
            && err.contains("another experiment")
            && err.contains("setting cache_size -2000 → -4000")
            && err.contains("config no --config → "),
        "{err}"
    );
    assert!(
        err.contains("--name sqlite-3.") && err.contains("-2, or pass --allow-mismatch"),
        "{err}"
    );
    // One short line (issue 55): what differs, never a dump.
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.trim().chars().count() <= 300, "{err}");
    assert!(!err.contains("load"), "refused before the load: {err}");
    assert_eq!(run_dirs(&r).len(), 1, "the refused run stored nothing");
    // Its own name, or --allow-mismatch: stored; the report then flags the
    // name whose repeats differ.
    with_config.push("--allow-mismatch");
    let o = run(&r, &with_config);
    assert!(o.status.success(), "{}", text(&o));
    let name = read_json(&run_dirs(&r)[0].join("run.json"))["name"]
        .as_str()
        .unwrap()
        .to_string();
    let o = run(&r, &[&sysbench[..], &["--name", "other"]].concat());
    assert!(o.status.success(), "{}", text(&o));
    let o = rqps(&[
        "report",
        "--results",
        r.to_str().unwrap(),
        "--base",
        "other",
    ]);
    let rep = text(&o);
    assert!(
        rep.contains(&format!("repeats of {name} are not the same experiment"))
            && rep.contains("config no --config → "),
        "{rep}"
    );
}

/// Processes that keep every CPU busy while they live.
struct Spinners(Vec<std::process::Child>);

impl Spinners {
    fn start() -> Spinners {
        let n = std::thread::available_parallelism().map_or(2, |n| n.get());
        Spinners(
            (0..n)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .unwrap()
                })
                .collect(),
        )
    }
}

impl Drop for Spinners {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn moment_3_a_busy_machine_is_said_where_the_verdict_is() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path().join("r");
    {
        let _busy = Spinners::start();
        for name in ["a", "b"] {
            let o = select1(&r, &["--repeats", "2", "--name", name, "-q"]);
            assert!(o.status.success(), "{}", text(&o));
        }
    }
    let rs = r.to_str().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(["report", "--results", rs, "--base", "a"])
        .env("CLICOLOR_FORCE", "1")
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", text(&o));
    let top: Vec<&str> = out.lines().take(10).collect();
    assert!(
        top.iter().any(|l| l.contains(
            "busy machine: 1 of 1 compared tests ran while other processes used the CPUs"
        )),
        "{out}"
    );
    // Colour is on (the legend's table has none, but the page does use it
    // elsewhere), and no verdict carries one: each is marked instead.
    let verdicts: Vec<&str> = out
        .lines()
        .filter(|l| ["+!", "-!", "~!", "?!"].iter().any(|m| l.contains(m)))
        .collect();
    assert!(verdicts.len() >= 2, "{out}");
    for l in &verdicts {
        assert!(!l.contains("\x1b[31m") && !l.contains("\x1b[32m"), "{l:?}");
    }
    // The gate's one line says so.
    let o = rqps(&[
        "compare",
        "--results",
        rs,
        "--base",
        "a",
        "--target",
        "b",
        "--fail-below",
        "0.01",
    ]);
    let g = text(&o);
    assert_eq!(o.status.code(), Some(0), "{g}");
    assert!(
        line_after(&g, "OK: ").contains("1 of them ran while the machine was busy"),
        "{g}"
    );
}

#[test]
fn moment_4_and_5_ps_mode_is_a_treatment_and_each_repeat_has_its_own_times() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path().join("r");
    let base = ["--profile", "ci", "--tests", "point-query", "-q"];
    let o = run(
        &r,
        &[&base[..], &["--name", "ps", "--repeats", "2"]].concat(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = run(
        &r,
        &[&base[..], &["--name", "text", "--ps-mode", "disable"]].concat(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = rqps(&["report", "--results", r.to_str().unwrap(), "--base", "ps"]);
    let rep = text(&o);
    assert!(o.status.success(), "{rep}");
    assert!(!rep.contains("not compared"), "{rep}");
    assert!(
        rep.contains("parameter ps_mode: auto (base), disable (target)"),
        "{rep}"
    );
    // The two repeats of `ps`: each its own start, and its own end after it.
    let docs: Vec<serde_json::Value> = run_dirs(&r)
        .iter()
        .map(|d| read_json(&d.join("run.json")))
        .filter(|d| d["name"] == "ps")
        .collect();
    assert_eq!(docs.len(), 2);
    let t = |d: &serde_json::Value, k: &str| d[k].as_str().unwrap().to_string();
    assert!(t(&docs[0], "started") <= t(&docs[0], "finished"));
    assert!(t(&docs[0], "finished") <= t(&docs[1], "started"));
    assert!(t(&docs[1], "started") <= t(&docs[1], "finished"));
    assert_ne!(t(&docs[0], "started"), t(&docs[1], "started"), "{docs:?}");
}

#[test]
fn moment_6_hardware_costs_are_per_what_the_suite_counts() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path().join("r");
    let script = d.path().join("one.sql");
    std::fs::write(&script, "SELECT 1;\n").unwrap();
    let o = select1(&r, &["-q", "--name", "s"]);
    assert!(
        text(&o).contains("hardware cost per operation (per statement;"),
        "{}",
        text(&o)
    );
    let o = run(
        &r,
        &[
            "--suite",
            "pgbench",
            "--script",
            script.to_str().unwrap(),
            "--skip-init",
            "--time",
            "1",
            "-q",
            "--name",
            "p",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("hardware cost per operation (per transaction;"),
        "{out}"
    );
    assert!(!out.contains("per statement"), "{out}");
    // `show` says the same from the stored figures. The run is named: two
    // runs that start in the same second sort by name, so "the latest" may
    // be the select1 one.
    let id = std::fs::read_dir(&r)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|n| n.ends_with("-p"))
        .expect("the pgbench run's directory");
    let show = text(&rqps(&["show", "--results", r.to_str().unwrap(), &id]));
    assert!(show.contains("(per transaction;"), "{show}");
}

#[test]
fn moment_7_a_test_that_completed_no_transaction_is_failed_with_the_last_error() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path().join("r");
    let db = d.path().join("sb.db");
    let conf = d.path().join("impatient.conf");
    // A writer that waits 0.1 s for the lock, then fails (and retries).
    std::fs::write(&conf, "PRAGMA busy_timeout = 100\n").unwrap();
    let target = format!("sqlite:{}", db.display());
    let args = |name: &'static str| {
        vec![
            "--profile".to_string(),
            "ci".into(),
            "--tests".into(),
            "update-index".into(),
            "--threads".into(),
            "1".into(),
            "--write-secs".into(),
            "1".into(),
            "--target".into(),
            target.clone(),
            "--name".into(),
            name.into(),
        ]
    };
    let ok = run(
        &r,
        &args("free").iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert!(ok.status.success(), "{}", text(&ok));
    let mut locked = args("locked");
    locked.extend(["--config".to_string(), conf.display().to_string()]);
    let child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .arg("run")
        .arg("--results")
        .arg(&r)
        .args(&locked)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once its test has begun, another writer holds the database for 4 s:
    // past the warm-up and the measured second, every update fails busy.
    let t = std::time::Instant::now();
    let running = || {
        run_dirs(&r).iter().any(|run| {
            read_json(&run.join("run.json"))["name"] == "locked"
                && std::fs::read_to_string(run.join("tests/001-update-index-t1.json"))
                    .is_ok_and(|s| s.contains("\"running\""))
        })
    };
    while !running() {
        assert!(t.elapsed().as_secs() < 120, "the test never started");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
        c.execute_batch("BEGIN IMMEDIATE").unwrap();
        std::thread::sleep(std::time::Duration::from_secs(4));
        c.execute_batch("COMMIT").unwrap();
    }
    let o = child.wait_with_output().unwrap();
    let all = text(&o);
    assert_eq!(o.status.code(), Some(1), "{all}");
    // The live line, `show`, the report and the gate say why.
    let why = "no work: not one transaction completed in the 1.0 s measured;";
    assert!(
        all.lines()
            .any(|l| l.contains("failed: ") && l.contains(why)),
        "{all}"
    );
    assert!(all.contains("the last with: database is locked"), "{all}");
    let rs = r.to_str().unwrap();
    let show = text(&rqps(&["show", "--results", rs]));
    assert!(
        show.contains(&format!("failed: update-index t=1: {why}")),
        "{show}"
    );
    let rep = text(&rqps(&[
        "report",
        "--results",
        rs,
        "--base",
        "free",
        "--targets",
        "locked",
    ]));
    // Read as one text: the report wraps its notes at 120 columns.
    let flat = rep.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("not counted: locked update-index t=1") && flat.contains(why),
        "{rep}"
    );
    let gate = rqps(&[
        "compare",
        "--results",
        rs,
        "--base",
        "free",
        "--target",
        "locked",
    ]);
    let g = text(&gate);
    assert_eq!(gate.status.code(), Some(1), "{g}");
    assert!(g.contains("FAIL: locked failed") && g.contains(why), "{g}");
}

#[test]
fn moment_8_the_report_of_short_tests_fits_the_screen_and_has_no_per_second_charts() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path().join("r");
    for name in ["a", "b"] {
        let o = run(
            &r,
            &[
                "--profile",
                "ci",
                "--tests",
                "point-query,update-index",
                "-q",
                "--name",
                name,
            ],
        );
        assert!(o.status.success(), "{}", text(&o));
    }
    let rs = r.to_str().unwrap();
    let o = rqps(&["report", "--results", rs, "--base", "a"]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.lines().count() < 70, "{out}");
    assert!(
        out.contains("Significant changes") && out.contains("What differs"),
        "{out}"
    );
    assert!(
        !out.contains("Hardware efficiency per operation\n"),
        "{out}"
    );
    let full = rqps(&["report", "--results", rs, "--base", "a", "--full"]);
    assert!(text(&full).contains("Hardware efficiency per operation\n"));
    let html = d.path().join("r.html");
    let o = rqps(&[
        "report",
        "--results",
        rs,
        "--base",
        "a",
        "--format",
        "html",
        "-o",
        html.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains(": per second\""),
        "a per-second chart of a 1 s test"
    );
    assert!(
        page.contains("test(s) ran fewer than 5 seconds: no chart."),
        "{page}"
    );
}
