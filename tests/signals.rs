//! Every way rqps ends cleans up (issue 18): SIGTERM and SIGHUP stop a run
//! as Ctrl-C does, a throwaway server dies with rqps even on `kill -9`, and
//! the next run removes what a killed rqps left behind. Through the real
//! binary and real servers.

mod common;
use common::{read_json, server_available, text};

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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

/// A TCP proxy on 127.0.0.1 in front of `upstream` that forwards both ways
/// until `stall` is set; from then on, a connection that has carried more
/// than 8 KB from its client (past its login) is no longer read (its proxy
/// thread counts it in `stalled` and sleeps), as behind a server or a
/// network that stopped reading: the client's send fills the socket buffers
/// and blocks. Small connections (logins, status probes, cancel requests)
/// still go through.
fn stalling_proxy(upstream: u16) -> (u16, Arc<AtomicBool>, Arc<AtomicUsize>) {
    use std::os::fd::AsRawFd;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    // A small receive buffer, inherited by each accepted socket: without it
    // the proxy's side would take megabytes before the client's send blocks.
    let small: libc::c_int = 64 << 10;
    // SAFETY: setsockopt on our listener with an int that lives for the call.
    unsafe {
        libc::setsockopt(
            l.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&small as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    let port = l.local_addr().unwrap().port();
    let (stall, stalled) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
    );
    let (st, sd) = (stall.clone(), stalled.clone());
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(c) = c else { return };
            let Ok(u) = std::net::TcpStream::connect(("127.0.0.1", upstream)) else {
                return;
            };
            let (mut c2, mut u2) = (c.try_clone().unwrap(), u.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut u2, &mut c2);
            });
            let (st, sd) = (st.clone(), sd.clone());
            std::thread::spawn(move || {
                let (mut from, mut to) = (c, u);
                let mut buf = vec![0u8; 64 << 10];
                let mut carried = 0usize;
                loop {
                    if st.load(Ordering::SeqCst) && carried > 8 << 10 {
                        sd.fetch_add(1, Ordering::SeqCst);
                        // Holds both sockets open, reading nothing, for good.
                        loop {
                            std::thread::sleep(Duration::from_secs(3600));
                        }
                    }
                    let n = match std::io::Read::read(&mut from, &mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    carried += n;
                    if std::io::Write::write_all(&mut to, &buf[..n]).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, stall, stalled)
}

/// The test files under `results` whose status starts with `status`.
fn stored(results: &Path, status: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(results)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|run| entries(&run.path().join("tests")))
        .filter(|p| {
            std::fs::read_to_string(p).is_ok_and(|s| s.contains(&format!("\"status\": \"{status}")))
        })
        .collect();
    v.sort();
    v
}

/// Whether one of `files` is test `name` (`-t3`: at 3 threads).
fn has(files: &[PathBuf], name: &str) -> bool {
    files.iter().any(|p| p.to_string_lossy().contains(name))
}

/// Waits until `child` runs a test whose file name has `name`; fails if
/// it ends first.
fn wait_running(child: &mut Child, results: &Path, name: &str) {
    let t = Instant::now();
    while !has(&stored(results, "running"), name) {
        assert!(t.elapsed() < Duration::from_secs(90), "no test {name} ran");
        if child.try_wait().unwrap().is_some() {
            let o = std::mem::replace(child, Command::new("true").spawn().unwrap());
            panic!("rqps ended early: {}", text(&o.wait_with_output().unwrap()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends `sig` to `child` and waits for it (killing it after a minute): its
/// output and how long it took to end.
fn stop_and_wait(child: Child, sig: i32) -> (std::process::Output, Duration) {
    signal(&child, sig);
    let stopped = Instant::now();
    let pid = child.id() as i32;
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    let watchdog = std::thread::spawn(move || {
        while !d.load(Ordering::SeqCst) {
            if stopped.elapsed() > Duration::from_secs(60) {
                // SAFETY: kill(2) on our child, not yet reaped (`done` is
                // set only after the wait).
                unsafe { libc::kill(pid, libc::SIGKILL) };
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let o = child.wait_with_output().unwrap();
    let took = stopped.elapsed();
    done.store(true, Ordering::SeqCst);
    watchdog.join().unwrap();
    (o, took)
}

#[test]
fn sigterm_ends_a_run_whose_sends_are_blocked_within_seconds_and_keeps_the_finished_test() {
    use rqps::engine::server::{Server, ServerSpec};
    if !server_available(PG) {
        return;
    }
    let (d, results, _tmp) = dirs();
    let server = Server::start(&ServerSpec::new(PG), &mut |n| eprintln!("note: {n}")).unwrap();
    let (port, stall, stalled) = stalling_proxy(server.port());
    // Each transaction sends a 6 MB statement (the text it read from the
    // server): more than the socket buffers hold, so a send to a proxy
    // that stopped reading blocks.
    let script = d.path().join("big.sql");
    std::fs::write(
        &script,
        "SELECT quote_literal(repeat('x', 6000000)) AS big \\gset\nSELECT length(:big) AS n;\n",
    )
    .unwrap();
    let url = format!(
        "postgres://{}@127.0.0.1:{port}/{}?sslmode=disable",
        server.user(),
        server.database()
    );
    // A test of one client that ends, then one of three: two in tasks of
    // one client thread's event loop, one on a thread of its own.
    let mut child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(["run", "--suite", "pgbench", "--skip-init", "--script"])
        .arg(&script)
        .args(["--clients", "1,3", "--client-threads", "2"])
        .args(["--transactions", "4", "--busy-threshold", "100", "-q"])
        .args(["--target", &url, "--results"])
        .arg(&results)
        .env("PGPASSWORD", server.password())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the three clients' test runs, the proxy stops reading them.
    wait_running(&mut child, &results, "-t3");
    stall.store(true, Ordering::SeqCst);
    let t = Instant::now();
    while stalled.load(Ordering::SeqCst) < 3 {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the sends never stalled ({} of 3)",
            stalled.load(Ordering::SeqCst)
        );
        assert!(child.try_wait().unwrap().is_none(), "rqps ended");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let (o, took) = stop_and_wait(child, libc::SIGTERM);
    // Before: still there 600 s later (the statement timeout), ended only
    // by a second signal.
    assert!(
        took < Duration::from_secs(15),
        "took {took:?}: {}",
        text(&o)
    );
    assert_eq!(o.status.code(), Some(143), "{}", text(&o));
    assert!(text(&o).contains("cancelling"), "{}", text(&o));
    assert!(
        has(&stored(&results, "ok"), "-t1"),
        "the finished test was lost"
    );
    assert!(has(&stored(&results, "interrupted"), "-t3"), "{}", text(&o));
    assert!(stored(&results, "running").is_empty() && stored(&results, "failed").is_empty());
}

#[test]
fn ctrl_c_interrupts_an_embedded_statement_that_would_never_end() {
    let d = tempfile::tempdir().unwrap();
    let (results, tmp) = (d.path().join("r"), d.path().join("tmp"));
    std::fs::create_dir(&tmp).unwrap();
    // Client 1 of the second test counts an endless recursion.
    let script = d.path().join("endless.sql");
    std::fs::write(
        &script,
        "\\if :client_id = 1\nWITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;\n\\else\nSELECT 1;\n\\endif\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(["run", "--suite", "pgbench", "--skip-init", "--script"])
        .arg(&script)
        .args(["--clients", "1,2", "--transactions", "3", "-q"])
        .args(["--busy-threshold", "100", "--results"])
        .arg(&results)
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_running(&mut child, &results, "-t2");
    std::thread::sleep(Duration::from_millis(500));
    let (o, took) = stop_and_wait(child, libc::SIGINT);
    // Before: the statement ran on (for good) after the first Ctrl-C.
    assert!(
        took < Duration::from_secs(15),
        "took {took:?}: {}",
        text(&o)
    );
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(
        has(&stored(&results, "ok"), "-t1"),
        "the finished test was lost"
    );
    assert!(has(&stored(&results, "interrupted"), "-t2"), "{}", text(&o));
    assert!(entries(&tmp).is_empty(), "{:?}", entries(&tmp));
}
