//! What limited each test, through the real binary: on embedded SQLite a
//! client pinned to one CPU that a busy loop shares is named the limit (and
//! the busy-machine warning is said once), and a client with room is not; a
//! throwaway PostgreSQL pinned to one CPU that a busy loop shares is named
//! the limit when the client's CPU has room.

mod common;
use common::{read_json, server_available};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

fn rqps(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(args)
        // Each test's line whole, not wrapped at 120 columns: the checks read it.
        .env("COLUMNS", "1000")
        .output()
        .expect("rqps runs")
}

/// The busy loop of one test must not fill the other's machine.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A thread pinned to `cpu` that spins until `stop`.
fn busy_loop(cpu: usize, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        // SAFETY: cpu_set_t is plain data; this pins the calling thread only.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            assert_eq!(
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
                0
            );
        }
        let mut x = 0u64;
        while !stop.load(Ordering::Relaxed) {
            for i in 0..10_000u64 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
            }
            std::hint::black_box(x);
        }
    })
}

fn point_query_run(dir: &std::path::Path, name: &str, threads: &str, extra: &[&str]) -> Output {
    let results = dir.join("r");
    let json = dir.join(format!("{name}.json"));
    let mut args = vec![
        "run",
        "--profile",
        "ci",
        "--tests",
        "point-query",
        "--threads",
        threads,
        "--read-secs",
        "1",
        "--warmup-secs",
        "0.2",
        "--table-size",
        "500",
        "--name",
        name,
        "--results",
        results.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend(extra);
    rqps(&args)
}

fn limits(doc: &serde_json::Value) -> Vec<serde_json::Value> {
    doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == "ok")
        .map(|t| t["hw"]["limit"].clone())
        .collect()
}

#[test]
fn a_client_on_one_cpu_that_a_busy_loop_shares_is_the_limit_and_the_busy_warning_is_said_once() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        eprintln!("skipped: needs 2 CPUs");
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let spin = busy_loop(1, stop.clone());
    let o = point_query_run(d.path(), "pinned", "1,2", &["--client-cpus", "1"]);
    stop.store(true, Ordering::Relaxed);
    spin.join().unwrap();
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");

    let doc = read_json(&d.path().join("pinned.json"));
    let l = limits(&doc);
    assert_eq!(l.len(), 2, "{err}");
    for x in &l {
        assert_eq!(x["by"], "client", "{x}");
        assert_eq!(x["client_cpus"], 1, "{x}");
        assert!(x["client_cpus_busy_pct"].as_f64().unwrap() >= 90.0, "{x}");
    }
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("point-query")).collect();
    let results: Vec<&&str> = lines.iter().filter(|l| l.contains(" qps ")).collect();
    assert_eq!(results.len(), 2, "{err}");
    for line in &results {
        assert!(line.contains("limit: client 1"), "{line}");
        assert!(line.contains("of 1 CPU"), "{line}");
        // The busy loop made the machine busy before every step: each line says so.
        assert!(line.ends_with("  busy"), "{line}");
    }
    // Said once, with the remedy, however many steps it affected.
    assert_eq!(err.matches("the machine was not idle").count(), 1, "{err}");
    assert!(err.contains("raise --busy-threshold"), "{err}");
    let stored = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            t["warnings"].as_array().is_some_and(|w| {
                w.iter()
                    .any(|w| w.as_str().unwrap().starts_with("the machine was not idle"))
            })
        })
        .count();
    assert_eq!(stored, 2, "every affected test keeps its warning");

    let show = rqps(&["show", "--results", d.path().join("r").to_str().unwrap()]);
    let out = text(&show.stdout);
    assert!(out.contains("limit"), "{out}");
    assert!(out.contains("client 1"), "{out}");
    assert!(
        out.contains("the figure is the client's, not the server's"),
        "{out}"
    );
}

#[test]
fn a_client_with_room_on_its_cpus_is_not_named_the_limit() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        eprintln!("skipped: needs 2 CPUs");
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    // One thread on the whole machine: the client can use one of its CPUs.
    let o = point_query_run(d.path(), "free", "1", &[]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    let doc = read_json(&d.path().join("free.json"));
    let l = limits(&doc);
    assert_eq!(l.len(), 1, "{err}");
    let x = &l[0];
    assert_eq!(x["client_cpus"].as_u64().unwrap() as usize, cpus, "{x}");
    assert!(x["client_cores"].as_f64().unwrap() > 0.0, "{x}");
    assert!(x.get("client_cpus_busy_pct").is_none(), "{x}");
    assert_ne!(x["by"], "client", "{x}");
    assert_ne!(x["by"], "server-cpu", "{x}");
    // Other processes may fill the host (tests run side by side); when they
    // did not, no limit is named.
    if x["host_busy_pct"].as_f64().unwrap() < 90.0
        && x["disk_util_pct"].as_f64().unwrap_or(0.0) < 90.0
    {
        assert!(x.get("by").is_none(), "{x}");
        let line = err.lines().find(|l| l.contains("qps")).unwrap();
        assert!(!line.contains("limit:"), "{line}");
    }
}

#[test]
fn a_server_on_one_cpu_that_a_busy_loop_shares_is_the_limit() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 || !server_available(&rqps::engine::postgres::server::RECIPE) {
        eprintln!("skipped: needs 2 CPUs and PostgreSQL");
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("pg.json");
    let stop = Arc::new(AtomicBool::new(false));
    let spin = busy_loop(0, stop.clone());
    let o = rqps(&[
        "run",
        "--suite",
        "select1",
        "--server",
        "postgres",
        "--server-cpus",
        "0",
        "--client-cpus",
        "1",
        "--profile",
        "ci",
        "--threads",
        "2",
        "--secs",
        "1",
        "--warmup-secs",
        "0.2",
        "--results",
        d.path().join("r").to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--busy-threshold",
        "100",
    ]);
    stop.store(true, Ordering::Relaxed);
    spin.join().unwrap();
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    let l = limits(&read_json(&json));
    assert_eq!(l.len(), 1, "{err}");
    let x = &l[0];
    assert_eq!(x["server_cpus"], 1, "{x}");
    assert!(x["server_cores"].as_f64().unwrap() > 0.0, "{x}");
    assert!(x["server_cpus_busy_pct"].as_f64().unwrap() >= 90.0, "{x}");
    // The client comes first when its CPU was full too (tests side by side).
    if x["client_cpus_busy_pct"].as_f64().unwrap() < 90.0 {
        assert_eq!(x["by"], "server-cpu", "{x}");
        let line = err
            .lines()
            .find(|l| l.contains("select1") && l.contains("qps"))
            .unwrap_or_default();
        assert!(line.contains("limit: server-cpu 1"), "{err}");
    } else {
        assert_eq!(x["by"], "client", "{x}");
    }
}
