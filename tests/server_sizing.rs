//! Servers sized for the plan, through the real binary: a throwaway
//! PostgreSQL gets the connections 64 LinkBench requesters need, and a
//! server too small for the plan (a --target, a throwaway server's
//! --config, a matrix target) is refused in one line before anything loads.
//!
//! Without the PostgreSQL binaries these tests print why and pass, unless
//! `RQPS_REQUIRE_SERVERS=1`, in which case they fail.

mod common;
use common::{read_json, rqps, server_available, text};

use rqps::engine::SqlAccess;
use rqps::engine::postgres::PostgresDriver;
use rqps::engine::server::{Recipe, Server, ServerSpec};

static PG: Recipe = &rqps::engine::postgres::server::RECIPE;

/// Runs stored under `results` (it may exist and be empty).
fn runs(results: &std::path::Path) -> usize {
    std::fs::read_dir(results).map_or(0, |d| {
        d.filter(|e| e.as_ref().is_ok_and(|e| e.path().join("run.json").exists()))
            .count()
    })
}

#[test]
fn linkbench_with_64_requesters_on_a_throwaway_postgres_completes() {
    if !server_available(PG) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("run.json");
    let o = rqps(&[
        "run",
        "--suite",
        "linkbench",
        "--server",
        "postgres",
        "--profile",
        "ci",
        "--requesters",
        "64",
        "--lb-secs",
        "0.5",
        "--results",
        d.path().join("r").to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--busy-threshold",
        "100",
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("sizing the PostgreSQL server for the plan (64 LinkBench requesters): max_connections = 139"),
        "{out}"
    );
    let doc = read_json(&json);
    assert_eq!(doc["settings"]["max_connections"], "139");
    let p64 = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"] == "P64")
        .expect("P64 stored");
    assert_eq!(p64["status"], "ok", "{out}");
    assert_eq!(p64["errors"], 0, "{out}");
}

#[test]
fn a_server_too_small_for_the_plan_is_refused_before_anything_loads() {
    if !server_available(PG) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let low = d.path().join("low.conf");
    std::fs::write(&low, "max_connections = 20\n").unwrap();
    let results = d.path().join("r");
    let r = results.to_str().unwrap();

    // A throwaway server whose --config sets it too low: refused before it starts.
    let o = rqps(&[
        "run",
        "--suite",
        "linkbench",
        "--server",
        "postgres",
        "--config",
        low.to_str().unwrap(),
        "--profile",
        "ci",
        "--requesters",
        "16",
        "--results",
        r,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        err.trim(),
        "error: 16 LinkBench requesters need 33 connections (with rqps's own 1); the server allows 20 \
(max_connections, set by --config): raise it, or run fewer requesters",
    );
    assert_eq!(runs(&results), 0, "nothing stored");

    // A --target server with that config.
    let spec = ServerSpec {
        config: Some(low.clone()),
        ..ServerSpec::new(PG)
    };
    let server = Server::start(&spec, &mut |n| eprintln!("note: {n}")).unwrap();
    let url = server.url();
    let o = rqps(&[
        "run",
        "--suite",
        "linkbench",
        "--target",
        &url,
        "--profile",
        "ci",
        "--requesters",
        "16",
        "--results",
        r,
        // The throwaway server's URL holds its password: the warning
        // about it would be a second line.
        "--allow-password-in-url",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("16 LinkBench requesters need 33 connections (with rqps's own 1); the server allows 20 (max_connections): raise it, or run fewer requesters"),
        "{err}"
    );
    assert_eq!(runs(&results), 0, "nothing stored");
    let drv = PostgresDriver::new(&url).unwrap();
    let mut c = drv.connect().unwrap();
    assert_eq!(
        c.query_scalar("SELECT to_regclass('linktable') IS NULL")
            .unwrap()
            .as_deref(),
        Some("t"),
        "nothing loaded"
    );

    // A matrix with that target: refused before its first run.
    let m = d.path().join("m.toml");
    std::fs::write(
        &m,
        format!(
            "[defaults]\nsuite = \"linkbench\"\nprofile = \"ci\"\nrequesters = [1, 16]\n\
[[target]]\nname = \"small\"\nurl = \"{url}\"\n"
        ),
    )
    .unwrap();
    let o = rqps(&["matrix", m.to_str().unwrap(), "--results", r]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("target small: 16 LinkBench requesters need 33 connections"),
        "{}",
        text(&o)
    );
    assert_eq!(runs(&results), 0, "nothing stored");

    // The same server is large enough for 4 requesters: the check is quiet.
    let o = rqps(&[
        "run",
        "--suite",
        "select1",
        "--target",
        &url,
        "--profile",
        "ci",
        "--threads",
        "4",
        "--secs",
        "0.3",
        "--results",
        r,
        "--busy-threshold",
        "100",
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    server.stop().unwrap();
}

#[test]
fn a_mariadb_target_too_small_for_the_plan_is_refused_before_anything_loads() {
    let mariadb: Recipe = &rqps::engine::mysql::server::RECIPE;
    if !server_available(mariadb) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let low = d.path().join("low.cnf");
    std::fs::write(&low, "max_connections = 20\n").unwrap();
    let spec = ServerSpec {
        config: Some(low),
        ..ServerSpec::new(mariadb)
    };
    let server = Server::start(&spec, &mut |n| eprintln!("note: {n}")).unwrap();
    let results = d.path().join("r");
    let o = rqps(&[
        "run",
        "--suite",
        "select1",
        "--target",
        &server.url(),
        "--profile",
        "ci",
        "--threads",
        "30",
        "--results",
        results.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    // The server may still count a session rqps closed a moment ago (it
    // ends them asynchronously; CI saw "allows 19 (max_connections 20, 1
    // other session now)" with nobody else connected): the refusal stands
    // either way, and says which.
    let said = regex::Regex::new(
        r"30 select1 threads need 31 connections \(with rqps's own 1\); the server allows (20 \(max_connections\)|1\d \(max_connections 20, \d other sessions? now\)): raise it, or run fewer threads",
    )
    .unwrap();
    assert!(said.is_match(&err), "{err}");
    assert_eq!(runs(&results), 0, "nothing stored");
    server.stop().unwrap();
}
