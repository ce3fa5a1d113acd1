//! Every way rqps ends cleans up (issue 18): SIGTERM and SIGHUP stop a run
//! as Ctrl-C does, a throwaway server dies with rqps even on `kill -9`, and
//! the next run removes what a killed rqps left behind. Through the real
//! binary and real servers.

mod common;
use common::{read_json, server_available, text};

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

static PG: rqps::engine::server::Recipe = &rqps::engine::postgres::server::RECIPE;

/// A SQLite run of one test that would read for a minute.
fn long_run(results: &Path, tmp: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(["run", "--profile", "ci", "--tests", "point-query"])
        .args(["--read-secs", "60", "--warmup-secs", "0", "-q", "--results"])
        .arg(results)
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The run directory under `results` and its first test's file, once that
/// test has started.
fn wait_for_running_test(results: &Path) -> (PathBuf, PathBuf) {
    let t = Instant::now();
    loop {
        let run = std::fs::read_dir(results)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.join("run.json").is_file());
        if let Some(run) = run
            && let Some(test) = std::fs::read_dir(run.join("tests"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|x| x == "json"))
        {
            return (run.join("run.json"), test);
        }
        assert!(t.elapsed() < Duration::from_secs(60), "no test started");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) on our own child, not yet reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

#[test]
fn sigterm_and_sighup_stop_a_run_like_ctrl_c_and_exit_with_128_plus_the_signal() {
    for (sig, code, name) in [
        (libc::SIGTERM, 143, "SIGTERM"),
        (libc::SIGHUP, 129, "SIGHUP"),
    ] {
        let d = tempfile::tempdir().unwrap();
        let (results, tmp) = (d.path().join("r"), d.path().join("tmp"));
        std::fs::create_dir(&tmp).unwrap();
        let child = long_run(&results, &tmp);
        let (run, test) = wait_for_running_test(&results);
        signal(&child, sig);
        let t = Instant::now();
        let o = child.wait_with_output().unwrap();
        assert!(t.elapsed() < Duration::from_secs(30), "{name}: slow stop");
        assert_eq!(o.status.code(), Some(code), "{name}: {}", text(&o));
        let doc = read_json(&run);
        assert_eq!(doc["status"], "interrupted", "{name}: {doc}");
        let test = read_json(&test);
        assert_eq!(test["status"], "interrupted", "{name}: {test}");
        assert_eq!(
            test["reason"],
            format!("stopped by {name}"),
            "{name}: {test}"
        );
        // The temporary SQLite directory went with it.
        let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
        assert!(left.is_empty(), "{name}: left {left:?}");
    }
}

/// Every process below `pid`, through /proc's parent links.
fn descendants(pid: u32) -> Vec<u32> {
    let parent_of = |p: u32| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
        stat[stat.rfind(')')? + 1..]
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    let all: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        found.extend(all.iter().filter(|&&c| parent_of(c) == Some(p)));
        i += 1;
    }
    found.remove(0);
    found
}

/// `rqps run --server postgres` reading for a minute, with its temporary
/// files in `tmp`, once the server is up; and the server's processes.
fn run_on_postgres(results: &Path, tmp: &Path) -> (Child, Vec<u32>) {
    run_on_postgres_for(results, tmp, "60")
}

fn run_on_postgres_for(results: &Path, tmp: &Path, read_secs: &str) -> (Child, Vec<u32>) {
    run_on_postgres_with(results, tmp, read_secs, &[])
}

fn run_on_postgres_with(
    results: &Path,
    tmp: &Path,
    read_secs: &str,
    extra: &[&str],
) -> (Child, Vec<u32>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(["run", "--server", "postgres", "--profile", "ci"])
        .args(extra)
        .args(["--tests", "point-query", "--warmup-secs", "0"])
        .args(["--read-secs", read_secs, "--results"])
        .arg(results)
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("ready on") {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "rqps ended early");
    }
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    let server = descendants(child.id());
    assert!(!server.is_empty(), "no server process under rqps");
    (child, server)
}

/// A temporary directory with `tmp` in it that the server's user can enter.
fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let (results, tmp) = (d.path().join("r"), d.path().join("tmp"));
    std::fs::create_dir(&tmp).unwrap();
    // As root the server runs as nobody, who must reach its files.
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(d.path(), mode).unwrap();
    (d, results, tmp)
}

/// Fails unless every process in `pids` is gone within 5 s.
fn gone_within_5_s(pids: &[u32], after: &str) {
    let t = Instant::now();
    loop {
        let alive: Vec<u32> = pids
            .iter()
            .copied()
            .filter(|p| Path::new(&format!("/proc/{p}")).exists())
            .collect();
        if alive.is_empty() {
            return;
        }
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "server processes {alive:?} still run 5 s after {after}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The server's processes once one more than `before` has run for a second
/// (the test's backend, not a short-lived probe connection), so that
/// stopping them stops the test's statements.
fn with_the_tests_backend(rqps: &Child, before: &[u32]) -> Vec<u32> {
    let t = Instant::now();
    let mut seen: std::collections::HashMap<u32, Instant> = Default::default();
    loop {
        let now = descendants(rqps.id());
        seen.retain(|p, _| now.contains(p));
        for p in now.iter().filter(|p| !before.contains(p)) {
            seen.entry(*p).or_insert_with(Instant::now);
        }
        if seen
            .values()
            .any(|since| since.elapsed() >= Duration::from_secs(1))
        {
            return now;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "no backend started");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect()
}

#[test]
fn a_throwaway_server_dies_with_rqps_on_kill_9_and_the_next_run_removes_its_files() {
    if !server_available(PG) {
        return;
    }
    let (_d, results, tmp) = dirs();
    let (mut child, server) = run_on_postgres(&results, &tmp);
    child.kill().unwrap();
    child.wait().unwrap();
    gone_within_5_s(&server, "kill -9 of rqps");
    let left = entries(&tmp);
    assert_eq!(left.len(), 1, "{left:?}");

    // The next run removes the data directory and says so.
    let o = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(["run", "--profile", "ci", "--tests", "point-query", "-q"])
        .arg("--results")
        .arg(&results)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("removed {}", left[0].display())),
        "{}",
        text(&o)
    );
    assert!(!left[0].exists());
}

#[test]
fn a_quick_second_ctrl_c_still_kills_the_server_and_removes_its_files() {
    if !server_available(PG) {
        return;
    }
    let (_d, results, tmp) = dirs();
    let (child, server) = run_on_postgres(&results, &tmp);
    signal(&child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(50));
    signal(&child, libc::SIGINT);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130));
    gone_within_5_s(&server, "a double Ctrl-C");
    assert!(entries(&tmp).is_empty(), "{:?}", entries(&tmp));
}

#[test]
fn a_run_whose_rqps_was_killed_shows_as_killed_with_its_pid_and_host() {
    let d = tempfile::tempdir().unwrap();
    let (results, tmp) = (d.path().join("r"), d.path().join("tmp"));
    std::fs::create_dir(&tmp).unwrap();
    let mut child = long_run(&results, &tmp);
    let (run, _) = wait_for_running_test(&results);
    let pid = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    let owner = &read_json(&run)["owner"];
    assert_eq!(owner["pid"], pid, "{owner}");
    assert_eq!(owner["host"], rqps::util::hostname(), "{owner}");
    let o = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(["show", "--all", "--results"])
        .arg(&results)
        .output()
        .unwrap();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.lines().next().unwrap().ends_with(", killed"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("point-query") && l.trim_end().ends_with("killed")),
        "{out}"
    );
}

#[test]
fn a_server_stopped_for_seconds_mid_test_leaves_a_stall_warning_in_the_result() {
    if !server_available(PG) {
        return;
    }
    let (_d, results, tmp) = dirs();
    let (child, before) = run_on_postgres_for(&results, &tmp, "6");
    let (_, test) = wait_for_running_test(&results);
    let server = with_the_tests_backend(&child, &before);
    // SAFETY: kill(2) on the server's processes, which this test started.
    let all = |sig| {
        server.iter().for_each(|&p| unsafe {
            libc::kill(p as i32, sig);
        })
    };
    all(libc::SIGSTOP);
    std::thread::sleep(Duration::from_secs(3));
    all(libc::SIGCONT);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let listing: Vec<_> = entries(test.parent().unwrap());
    assert!(
        test.is_file(),
        "{} not in {listing:?}: {}",
        test.display(),
        text(&o)
    );
    let t = read_json(&test);
    assert_eq!(t["status"], "ok", "{t}");
    let warnings = t["warnings"].to_string();
    assert!(warnings.contains("the server stalled"), "{t}");
}

#[test]
fn a_statement_silent_past_the_statement_timeout_fails_its_test_with_the_reason() {
    if !server_available(PG) {
        return;
    }
    let (_d, results, tmp) = dirs();
    let (child, before) = run_on_postgres_with(&results, &tmp, "8", &["--stmt-timeout", "1"]);
    let (_, test) = wait_for_running_test(&results);
    let server = with_the_tests_backend(&child, &before);
    // SAFETY: kill(2) on the server's processes, which this test started.
    let all = |sig| {
        server.iter().for_each(|&p| unsafe {
            libc::kill(p as i32, sig);
        })
    };
    all(libc::SIGSTOP);
    std::thread::sleep(Duration::from_secs(3));
    all(libc::SIGCONT);
    let o = child.wait_with_output().unwrap();
    let t = read_json(&test);
    assert_eq!(o.status.code(), Some(1), "{}: {t}", text(&o));
    assert_eq!(t["status"], "failed", "{t}");
    let reason = t["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("sent nothing for 1 s, the statement timeout"),
        "{reason}"
    );
}

#[test]
fn the_system_wide_perf_of_cpu_profile_dies_with_rqps_on_kill_9() {
    // perf records every CPU: one left behind would sample (and fill the
    // disk) until someone noticed.
    let have_perf = Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_perf {
        assert!(
            !common::servers_required(),
            "RQPS_REQUIRE_SERVERS=1 but no perf on PATH (apt install linux-perf)"
        );
        return;
    }
    let (_d, results, tmp) = dirs();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args([
            "run",
            "--profile",
            "ci",
            "--tests",
            "point-query",
            "--cpu-profile",
        ])
        .args(["--read-secs", "60", "--warmup-secs", "0", "-q", "--results"])
        .arg(&results)
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let perf = loop {
        let perf: Vec<u32> = descendants(child.id())
            .into_iter()
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "perf")
            })
            .collect();
        if !perf.is_empty() {
            break perf;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "no perf started");
        std::thread::sleep(Duration::from_millis(50));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    gone_within_5_s(&perf, "kill -9 of rqps");
}

#[test]
fn sigterm_stops_compat_at_once_and_removes_its_throwaway_servers_files() {
    if !server_available(PG) {
        return;
    }
    let (_d, results, tmp) = dirs();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(["compat", "--reference", "sqlite", "--server", "postgres"])
        .args(["--suites", "sysbench", "--results"])
        .arg(&results)
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains("ready on") {
        assert!(
            err.read_line(&mut said).unwrap() > 0,
            "rqps ended early: {said}"
        );
    }
    let server = descendants(child.id());
    assert!(!server.is_empty(), "no server process under rqps");
    let left = entries(&tmp);
    assert!(!left.is_empty(), "no server files in {}", tmp.display());
    let t = Instant::now();
    signal(&child, libc::SIGTERM);
    std::io::Read::read_to_string(&mut err, &mut said).unwrap();
    let status = child.wait().unwrap();
    // Before: killed by the signal, the data directory (126 MB) left.
    assert_eq!(status.code(), Some(143), "{said}");
    assert!(t.elapsed() < Duration::from_secs(10), "{said}");
    assert!(
        said.contains("SIGTERM: stopping now; no record is stored"),
        "{said}"
    );
    for dir in &left {
        assert!(
            said.contains(&format!("removed {}", dir.display())),
            "{said}"
        );
    }
    gone_within_5_s(&server, "SIGTERM to rqps compat");
    assert!(entries(&tmp).is_empty(), "{:?}", entries(&tmp));
    assert!(!results.join("compat").exists(), "a record was stored");
}
