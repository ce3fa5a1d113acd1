//! TPC-C end to end through the real binary: the ci profile on embedded
//! SQLite and on throwaway MariaDB and PostgreSQL servers, each followed by
//! a consistency check that must pass; a second run on the loaded tables,
//! the report and gate over both; and corrupted rows that the check must
//! name by condition and place.
//!
//! Without the server binaries the server test prints why and passes,
//! unless `RQPS_REQUIRE_SERVERS=1`, in which case it fails.

mod common;
use common::{rqps, run_stored_env, server_available, text};
use std::path::Path;

use rqps::engine::server::{Recipe, Server, ServerSpec};
use serde_json::Value;

static PG: Recipe = &rqps::engine::postgres::server::RECIPE;
static MARIADB: Recipe = &rqps::engine::mysql::server::RECIPE;

const TESTS: [&str; 7] = [
    "tpmC",
    "new-order",
    "payment",
    "order-status",
    "delivery",
    "stock-level",
    "consistency",
];

/// Runs the ci profile against `target` as `name`; returns the run document and the output.
fn ci_run(target: &str, dir: &Path, name: &str, extra: &[&str]) -> (Value, String) {
    ci_run_env(target, dir, name, extra, &[])
}

fn ci_run_env(
    target: &str,
    dir: &Path,
    name: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Value, String) {
    let json = dir.join(format!("{name}.json"));
    let mut args = vec![
        "--suite",
        "tpcc",
        "--profile",
        "ci",
        "--target",
        target,
        "--name",
        name,
    ];
    args.extend(extra);
    run_stored_env(&dir.join("r"), &json, &args, env)
}

fn test<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"] == name)
        .unwrap_or_else(|| panic!("no test {name}"))
}

/// What every complete ci run must show, whatever the engine.
fn check_ci_doc(doc: &Value, out: &str, what: &str, loaded: bool) {
    assert_eq!(doc["suite"], "tpcc", "{what}");
    assert_eq!(doc["status"], "ok", "{what}: {out}");
    assert_eq!(doc["params"]["warehouses"], 1);
    assert_eq!(doc["params"]["terminals"], 2);
    let names: Vec<&str> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["test"].as_str().unwrap())
        .collect();
    assert_eq!(names, TESTS, "{what}");
    if loaded {
        let rows = doc["load"]["rows"].as_u64().unwrap();
        // 100,000 items, the warehouse, 100,000 stock rows, 10 districts
        // with 3000 customers, history rows and orders, 900 new orders and
        // 5..15 lines per order.
        assert!((500_000..=700_000).contains(&rows), "{what}: {rows} rows");
        assert!(doc["load"]["rows_per_sec"].as_f64().unwrap() > 0.0);
    }
    let main = test(doc, "tpmC");
    assert_eq!(main["status"], "ok", "{what}");
    assert_eq!(main["qps_unit"], "tpmC");
    let d = &main["tpcc"];
    let tpmc = d["tpmc"].as_f64().unwrap();
    assert!(tpmc > 0.0 && (main["qps"].as_f64().unwrap() - tpmc).abs() < 1e-6);
    assert!(d["tpm_total"].as_f64().unwrap() > tpmc);
    assert!(
        (d["efficiency_pct"].as_f64().unwrap() - tpmc / 12.86 * 100.0).abs() < 1e-6,
        "{what}"
    );
    assert_ne!(d["isolation"], "unknown", "{what}");
    let mut total = 0;
    for k in &TESTS[1..6] {
        let kd = &d["kinds"][k];
        let count = kd["count"].as_u64().unwrap();
        total += count;
        assert_eq!(kd["errors"], 0, "{what} {k}");
        for q in ["p50", "p90", "p95", "p99", "p99.9", "max"] {
            assert!(kd["latency_ms"][q].as_f64().is_some(), "{what} {k} {q}");
        }
        let t = test(doc, k);
        assert_eq!(t["qps_unit"], "tx/s");
        assert_eq!(t["events"].as_u64().unwrap(), count, "{what} {k}");
    }
    assert_eq!(total, main["events"].as_u64().unwrap(), "{what}");
    let share = d["kinds"]["new-order"]["share_pct"].as_f64().unwrap();
    assert!(
        (25.0..=65.0).contains(&share),
        "{what}: new-order {share} %"
    );
    assert!(
        d["kinds"]["payment"]["count"].as_u64().unwrap() > 0
            && d["kinds"]["delivery"]["count"].as_u64().unwrap() > 0,
        "{what}"
    );
    assert!(!main["per_second"].as_array().unwrap().is_empty());
    let hw = &main["hw"];
    assert!(hw["client_cpu_us_per_op"].as_f64().unwrap() > 0.0, "{what}");
    assert!(d["hw_per_new_order"]["client_cpu_us"].as_f64().unwrap() > 0.0);
    let check = test(doc, "consistency");
    assert_eq!(check["status"], "ok", "{what}: {out}");
    let conds = check["tpcc_consistency"]["conditions"].as_array().unwrap();
    assert_eq!(conds.len(), 11);
    assert!(conds.iter().all(|c| c["ok"] == true), "{what}: {conds:?}");
    assert!(out.contains("conditions 1-10 and 12 hold"), "{out}");
}

fn sqlite(db: &Path, sql: &str) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute_batch(sql).unwrap();
}

fn check_only(target: &str, dir: &Path) -> (i32, String) {
    let o = rqps(&[
        "run",
        "--suite",
        "tpcc",
        "--target",
        target,
        "--check-only",
        "--results",
        dir.join("r").to_str().unwrap(),
        "--busy-threshold",
        "100",
    ]);
    (o.status.code().unwrap_or(-1), text(&o))
}

#[test]
fn ci_profile_on_sqlite_reported_compared_and_corrupted() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("tpcc.db");
    let target = format!("sqlite:{}", db.display());
    let (doc, out) = ci_run(&target, d.path(), "a", &[]);
    check_ci_doc(&doc, &out, "sqlite", true);
    assert_eq!(test(&doc, "tpmC")["tpcc"]["isolation"], "SERIALIZABLE");
    // A second run on the tables the first left: still consistent.
    let (doc, out) = ci_run(&target, d.path(), "b", &["--skip-load"]);
    check_ci_doc(&doc, &out, "sqlite again", false);
    assert!(doc["load"].is_null());

    // The report sets tpmC and each transaction against the base.
    let results = d.path().join("r");
    let results = results.to_str().unwrap();
    for (format, want) in [
        ("term", "TPC-C context"),
        ("md", "TPC-C: transactions per second by type"),
        ("html", "stock-level"),
        ("csv", "tpcc_isolation"),
        ("tsv", "tpcc context"),
        ("json", "\"isolation\""),
    ] {
        // The terminal's whole report: its answer alone leaves the suite's
        // sections to --section or --full.
        let mut args = vec![
            "report",
            "--results",
            results,
            "--base",
            "a",
            "--format",
            format,
        ];
        if format == "term" {
            args.push("--full");
        }
        let o = rqps(&args);
        let t = text(&o);
        assert!(o.status.success(), "{format}: {t}");
        assert!(t.contains(want), "{format}: {t}");
        assert!(t.contains("payment") && t.contains("tpmC"), "{format}: {t}");
        assert!(t.contains("SERIALIZABLE"), "{format}: {t}");
    }
    let o = rqps(&[
        "compare",
        "--results",
        results,
        "--base",
        "a",
        "--target",
        "b",
        "--fail-below",
        "0.0001",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("tpmC"), "{}", text(&o));

    // One row changed: the check fails, naming the condition and the place.
    sqlite(
        &db,
        "UPDATE district SET d_next_o_id = d_next_o_id + 5 WHERE d_w_id = 1 AND d_id = 3",
    );
    let (code, out) = check_only(&target, d.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("consistency condition 2 (D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)) fails for warehouse 1 district 3"),
        "{out}"
    );
    sqlite(
        &db,
        "UPDATE district SET d_next_o_id = d_next_o_id - 5 WHERE d_w_id = 1 AND d_id = 3; \
         UPDATE customer SET c_balance = c_balance + 1 WHERE c_w_id = 1 AND c_d_id = 7 AND c_id = 42",
    );
    let (code, out) = check_only(&target, d.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("consistency condition 10")
            && out.contains("warehouse 1 district 7 customer 42"),
        "{out}"
    );
    sqlite(
        &db,
        "UPDATE customer SET c_balance = c_balance - 1 WHERE c_w_id = 1 AND c_d_id = 7 AND c_id = 42",
    );
    let (code, out) = check_only(&target, d.path());
    assert_eq!(code, 0, "{out}");
}

#[test]
fn bad_options_are_refused_with_a_remedy() {
    for (args, msg) in [
        (vec!["--warehouses", "0"], "--warehouses must be between 1"),
        (vec!["--isolation", "snapshot"], "--isolation must be"),
        (vec!["--terminals", "x"], "terminals"),
    ] {
        let mut a = vec!["run", "--suite", "tpcc", "--profile", "ci"];
        a.extend(args);
        let o = rqps(&a);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{t}");
        assert!(t.contains(msg), "{t}");
        assert!(!t.contains("panicked"), "{t}");
    }
    // SQLite has one isolation level; asking for another is refused before the load.
    let d = tempfile::tempdir().unwrap();
    let o = rqps(&[
        "run",
        "--suite",
        "tpcc",
        "--profile",
        "ci",
        "--isolation",
        "read-committed",
        "--results",
        d.path().join("r").to_str().unwrap(),
        "--busy-threshold",
        "100",
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("sqlite runs every transaction SERIALIZABLE"),
        "{t}"
    );
    assert!(!t.contains("loaded"), "{t}");
}

#[test]
fn ci_profile_on_throwaway_servers() {
    for kind in [MARIADB, PG] {
        if !server_available(kind) {
            continue;
        }
        let server = Server::start(&ServerSpec::new(kind), &mut |n| eprintln!("note: {n}"))
            .unwrap_or_else(|e| panic!("starting {kind}: {e}"));
        let url = server.url();
        let d = tempfile::tempdir().unwrap();
        // The client core forced on, whatever the machine's CPU count: both
        // terminals are tasks of one client thread, and the consistency
        // check after them must pass.
        let core = [("RQPS_CLIENT_THREADS", "1")];
        let (doc, out) = ci_run_env(&url, d.path(), kind.key(), &[], &core);
        check_ci_doc(&doc, &out, kind.product(), true);
        assert_eq!(doc["params"]["client_threads"], 1, "{out}");
        let main = test(&doc, "tpmC");
        assert!(
            main["hw"]["server_cpu_us_per_op"].as_f64().unwrap() > 0.0,
            "{out}"
        );
        let level = main["tpcc"]["isolation"].as_str().unwrap().to_string();
        match kind.key() {
            "mariadb" => assert_eq!(level, "REPEATABLE-READ"),
            _ => assert_eq!(level, "read committed"),
        }
        // The level asked for is the one the sessions run at.
        let (doc, out) = ci_run(
            &url,
            d.path(),
            "serializable",
            &["--skip-load", "--isolation", "serializable", "--secs", "1"],
        );
        assert_eq!(doc["status"], "ok", "{out}");
        let level = test(&doc, "tpmC")["tpcc"]["isolation"]
            .as_str()
            .unwrap()
            .to_ascii_lowercase();
        assert_eq!(level, "serializable", "{out}");
        assert_eq!(test(&doc, "consistency")["status"], "ok", "{out}");
        drop(server);
    }
}
