//! LinkBench end to end through the real binary: the ci profile on embedded
//! SQLite and on throwaway MariaDB and PostgreSQL servers (the tables each
//! engine got, every step stored with its per-operation figures, the mean
//! out-degree of the load, the counts check), and a corrupted count that
//! the check finds (exit 1).
//!
//! Without the server binaries the server test prints why and passes,
//! unless `RQPS_REQUIRE_SERVERS=1`, in which case it fails.

mod common;
use common::{read_json, rqps, server_available, text};
use std::path::Path;

use rqps::engine::Driver;
use rqps::engine::mysql::MysqlDriver;
use rqps::engine::postgres::PostgresDriver;
use rqps::engine::server::{Recipe, Server, ServerSpec};
use rqps::engine::sqlite::SqliteDriver;
use serde_json::Value;

static PG: Recipe = &rqps::engine::postgres::server::RECIPE;
static MARIADB: Recipe = &rqps::engine::mysql::server::RECIPE;

const OPS: [&str; 10] = [
    "GET_LINKS_LIST",
    "GET_NODE",
    "ADD_LINK",
    "UPDATE_LINK",
    "UPDATE_NODE",
    "COUNT_LINK",
    "DELETE_LINK",
    "ADD_NODE",
    "DELETE_NODE",
    "MULTIGET_LINK",
];

/// Runs linkbench's ci profile against `target` with `extra` options;
/// returns the exit code, the run document and the output.
fn ci_run(target: &str, dir: &Path, extra: &[&str]) -> (i32, Value, String) {
    let json = dir.join("run.json");
    let results = dir.join("r");
    let mut args = vec![
        "run",
        "--suite",
        "linkbench",
        "--profile",
        "ci",
        "--target",
        target,
        "--results",
        results.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--busy-threshold",
        "100",
    ];
    args.extend(extra);
    let o = rqps(&args);
    let out = text(&o);
    let doc = if json.exists() {
        read_json(&json)
    } else {
        Value::Null
    };
    (o.status.code().unwrap_or(-1), doc, out)
}

/// What every complete ci run must show, whatever the engine.
fn check_ci_doc(doc: &Value, out: &str, what: &str) {
    assert_eq!(doc["suite"], "linkbench", "{what}");
    assert_eq!(doc["status"], "ok", "{what}: {out}");
    let tests = doc["tests"].as_array().unwrap();
    let names: Vec<&str> = tests.iter().map(|t| t["test"].as_str().unwrap()).collect();
    assert_eq!(names, ["load", "P1", "P2", "check"], "{what}");
    // The load: nodes, links, counts, and a mean out-degree within 5 % of the distribution's.
    let load = &tests[0]["linkbench"]["load"];
    let nodes = load["nodes"].as_u64().unwrap();
    let links = load["links"].as_u64().unwrap();
    assert_eq!(nodes, doc["params"]["nodes"].as_u64().unwrap(), "{what}");
    // ci keeps rqps's smooth mapping (no million-link super-node), and says so.
    assert_eq!(doc["params"]["outdegree"], "smooth", "{what}");
    assert!(
        load["counts"].as_u64().unwrap() > nodes / 3,
        "{what}: {load}"
    );
    assert_eq!(
        Some(links),
        load["expected_links"].as_u64(),
        "{what}: the load made the mapping's links"
    );
    let mean = links as f64 / nodes as f64;
    let want = load["distribution_mean"].as_f64().unwrap();
    assert!((want - 4.74).abs() < 0.01, "{what}: {want}");
    assert!(
        (mean / want - 1.0).abs() < 0.05,
        "{what}: mean out-degree {mean} vs {want}"
    );
    assert!(load["nodes_per_sec"].as_f64().unwrap() > 0.0);
    assert!(load["links_per_sec"].as_f64().unwrap() > 0.0);
    // Each request step: every operation ran, without failures, and the
    // per-operation figures are ordered.
    for (t, requesters) in tests[1..3].iter().zip([1, 2]) {
        assert_eq!(t["status"], "ok", "{what}: {t}");
        assert_eq!(t["threads"], requesters);
        let r = &t["linkbench"]["request"];
        assert_eq!(r["requesters"], requesters);
        assert_eq!(r["gave_up"], 0, "{what}");
        assert_eq!(r["stats"]["failures"], 0, "{what}: {r}");
        assert!(r["stats"]["list_scans"].as_u64().unwrap() > 0);
        assert!(r["stats"]["list_rows"].as_u64().unwrap() > 0);
        let ops = r["ops"].as_array().unwrap();
        let got: Vec<&str> = ops.iter().map(|o| o["op"].as_str().unwrap()).collect();
        assert_eq!(got, OPS, "{what}");
        let total: u64 = ops.iter().map(|o| o["count"].as_u64().unwrap()).sum();
        assert_eq!(total, t["events"].as_u64().unwrap(), "{what}");
        for o in ops {
            assert_eq!(o["errors"], 0, "{what}: {o}");
            if o["count"].as_u64().unwrap() == 0 {
                continue;
            }
            let p = |k: &str| o[k].as_f64().unwrap();
            assert!(
                p("p25_us") <= p("p50_us")
                    && p("p50_us") <= p("p75_us")
                    && p("p75_us") <= p("p95_us")
                    && p("p95_us") <= p("p99_us")
                    && p("p99_us") <= p("max_us") * 1.001,
                "{what}: {o}"
            );
        }
        // The common operations ran in every step.
        for o in &ops[..3] {
            assert!(o["count"].as_u64().unwrap() > 0, "{what}: {o}");
        }
        assert!(t["qps"].as_f64().unwrap() > 0.0);
        assert_eq!(t["qps_unit"], "ops/s");
        assert!(!t["per_second"].as_array().unwrap().is_empty());
    }
    let check = &tests[3]["linkbench"]["check"];
    assert_eq!(tests[3]["status"], "ok", "{what}");
    assert_eq!(check["mismatched"], 0, "{what}");
    assert_eq!(check["stray"], 0, "{what}");
    assert!(check["pairs"].as_u64().unwrap() > 0);
    assert!(out.contains("LinkBench requests (ops/s)"), "{what}: {out}");
}

/// Puts one count off by five, reruns requests on the loaded tables, and
/// expects the check to fail the run with exit 1.
fn corrupted_count_fails(target: &str, d: &dyn Driver, dir: &Path, what: &str) {
    let mut c = d.require_sql().unwrap().connect().unwrap();
    c.query(
        "UPDATE counttable SET count = count + 5 WHERE id = \
         (SELECT id FROM (SELECT min(id) AS id FROM counttable WHERE count > 0) m)",
    )
    .unwrap();
    let (code, doc, out) = ci_run(
        target,
        dir,
        &[
            "--lb-load",
            "false",
            "--requesters",
            "1",
            "--requests",
            "200",
            "--lb-secs",
            "60",
            "--name",
            "bad",
        ],
    );
    assert_eq!(code, 1, "{what}: {out}");
    assert!(out.contains("counttable disagrees"), "{what}: {out}");
    let tests = doc["tests"].as_array().unwrap();
    let names: Vec<&str> = tests.iter().map(|t| t["test"].as_str().unwrap()).collect();
    assert_eq!(names, ["P1", "check"], "{what}");
    // The request count ended the step, long before its 60 s.
    assert_eq!(tests[0]["events"], 200, "{what}");
    assert!(tests[0]["secs"].as_f64().unwrap() < 30.0, "{what}");
    let check = &tests[1];
    assert_eq!(check["status"], "failed", "{what}");
    assert!(check["linkbench"]["check"]["mismatched"].as_u64().unwrap() >= 1);
}

fn one(d: &dyn Driver, sql: &str) -> String {
    d.require_sql()
        .unwrap()
        .connect()
        .unwrap()
        .query_scalar(sql)
        .unwrap()
        .unwrap_or_default()
}

#[test]
fn ci_profile_on_sqlite_and_a_corrupted_count() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("lb.db");
    let target = format!("sqlite:{}", db.display());
    let (code, doc, out) = ci_run(&target, d.path(), &["--name", "good"]);
    assert_eq!(code, 0, "{out}");
    check_ci_doc(&doc, &out, "sqlite");
    let drv = SqliteDriver::new(&db, vec![]);
    assert_eq!(
        one(
            &drv,
            "SELECT group_concat(name) FROM (SELECT name FROM pragma_index_info('id1_type') ORDER BY seqno)"
        ),
        "id1,link_type,visibility,time,id2,version,data"
    );
    // Links and counts are clustered on their keys.
    for t in ["linktable", "counttable"] {
        let sql = one(
            &drv,
            &format!("SELECT sql FROM sqlite_master WHERE name = '{t}'"),
        );
        assert!(sql.ends_with("WITHOUT ROWID"), "{sql}");
    }
    // Paced requesters: Poisson arrivals at 100 requests/s each.
    let d3 = tempfile::tempdir().unwrap();
    let (code, doc, out) = ci_run(
        &target,
        d3.path(),
        &[
            "--lb-load",
            "false",
            "--requesters",
            "2",
            "--request-rate",
            "100",
            "--lb-secs",
            "2",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let p2 = &doc["tests"][0];
    assert_eq!(p2["test"], "P2");
    let rate = p2["qps"].as_f64().unwrap();
    assert!((140.0..260.0).contains(&rate), "{rate} ops/s: {out}");
    // The corrupted run goes into the same results: rqps compare fails it.
    corrupted_count_fails(&target, &drv, d.path(), "sqlite");
    let results = d.path().join("r");
    let o = rqps(&[
        "compare",
        "--results",
        results.to_str().unwrap(),
        "--base",
        "good",
        "--target",
        "bad",
        "--fail-below",
        "0.01",
        // bad ran 200 requests for at most 60 s, good the profile's 1 s:
        // another workload (issue 27), compared for its counts check.
        "--allow-mismatch",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("linkbench counts check: counttable disagrees"),
        "{}",
        text(&o)
    );
    // Node writes refused by triggers: each requester reconnects after each
    // failed request and gives up at --max-failures.
    let mut c = drv.require_sql().unwrap().connect().unwrap();
    for op in ["INSERT", "UPDATE", "DELETE"] {
        c.query(&format!(
            "CREATE TRIGGER no_{op} BEFORE {op} ON nodetable \
             BEGIN SELECT RAISE(ABORT, 'nodes are read-only'); END"
        ))
        .unwrap();
    }
    let d4 = tempfile::tempdir().unwrap();
    let (code, doc, out) = ci_run(
        &target,
        d4.path(),
        &[
            "--lb-load",
            "false",
            "--requesters",
            "2",
            "--max-failures",
            "5",
            "--lb-secs",
            "30",
        ],
    );
    assert_eq!(code, 1, "{out}");
    let p2 = &doc["tests"][0];
    assert_eq!(p2["status"], "failed", "{out}");
    let reason = p2["reason"].as_str().unwrap();
    assert!(
        reason.contains("every requester gave up after 5 failed requests")
            && reason.contains("nodes are read-only"),
        "{reason}"
    );
    assert!(p2["secs"].as_f64().unwrap() < 20.0, "gave up early: {p2}");
    assert_eq!(p2["linkbench"]["request"]["gave_up"], 2);
}

#[test]
fn bad_options_are_refused_with_one_line() {
    for (args, says) in [
        (
            vec!["--requesters", "0"],
            "--requesters must list requester counts",
        ),
        (vec!["--nodes", "1"], "--nodes must be from 2"),
        (vec!["--request-rate=-1"], "--request-rate must be"),
        (vec!["--lb-secs", "0"], "--lb-secs must be"),
        (vec!["--lb-secs", "1e308"], "must be at most 86400 seconds"),
        (vec!["--requesters", "1,100000"], "must be at most"),
        (vec!["--request-rate", "1e300"], "--request-rate must be"),
        (
            vec!["--outdegree", "left"],
            "[possible values: reference, smooth]",
        ),
    ] {
        let mut a = vec!["run", "--suite", "linkbench", "--target", "sqlite::memory:"];
        a.extend(args);
        let o = rqps(&a);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(says), "{}", text(&o));
    }
    let d = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", d.path().join("empty.db").display());
    // Without an earlier load there is nothing to request: the run fails.
    let (code, _, out) = ci_run(&target, d.path(), &["--lb-load", "false"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("run once without --lb-load false"), "{out}");
}

#[test]
fn rqps_tests_lists_the_linkbench_steps() {
    let o = rqps(&[
        "tests",
        "--suite",
        "linkbench",
        "--profile",
        "ci",
        "--requesters",
        "1,4,16",
        "--index-after-load",
        "true",
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let steps: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split(':').next())
        .filter(|s| ["load", "index", "P1", "P4", "P16", "check"].contains(&s.trim()))
        .map(|s| s.trim())
        .collect();
    assert_eq!(
        steps,
        ["load", "index", "P1", "P4", "P16", "check"],
        "{out}"
    );
    // The plan counts the links the mapping gives: the reference's own total
    // at 100,000 nodes by default, rqps's earlier one with --outdegree smooth.
    for (args, says) in [
        (
            vec![],
            "100000 nodes and 1368899 links over 2 link types (reference out-degrees: one node has 961963)",
        ),
        (
            vec!["--outdegree", "smooth"],
            "100000 nodes and 472765 links over 2 link types (smooth out-degrees)",
        ),
        (
            vec!["--profile", "ci"],
            "5000 nodes and 23398 links over 2 link types (smooth out-degrees)",
        ),
    ] {
        let mut a = vec!["tests", "--suite", "linkbench"];
        a.extend(args);
        let o = rqps(&a);
        assert!(
            o.status.success() && text(&o).contains(says),
            "{}",
            text(&o)
        );
    }
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
        let (code, doc, out) = ci_run(&url, d.path(), &["--index-after-load", "true"]);
        assert_eq!(code, 0, "{kind}: {out}");
        // The index step sits between the load and the requests.
        let mut doc = doc;
        let tests = doc["tests"].as_array_mut().unwrap();
        assert_eq!(tests[1]["test"], "index", "{kind}");
        assert_eq!(tests[1]["status"], "ok", "{kind}");
        tests.remove(1);
        check_ci_doc(&doc, &out, kind.product());
        let drv: Box<dyn Driver> = match kind.key() {
            "mariadb" => {
                let drv = MysqlDriver::new(&url).unwrap();
                assert_eq!(
                    one(
                        &drv,
                        "SELECT GROUP_CONCAT(column_name ORDER BY seq_in_index) \
                         FROM information_schema.statistics WHERE table_schema = DATABASE() \
                         AND table_name = 'linktable' AND index_name = 'PRIMARY'"
                    ),
                    "link_type,id1,id2"
                );
                assert_eq!(
                    one(
                        &drv,
                        "SELECT GROUP_CONCAT(column_name ORDER BY seq_in_index) \
                         FROM information_schema.statistics WHERE table_schema = DATABASE() \
                         AND index_name = 'id1_type'"
                    ),
                    "id1,link_type,visibility,time,id2,version,data"
                );
                Box::new(drv)
            }
            "postgres" => {
                let drv = PostgresDriver::new(&url).unwrap();
                assert_eq!(
                    one(
                        &drv,
                        "SELECT indexdef FROM pg_indexes WHERE indexname = 'id1_type'"
                    ),
                    "CREATE INDEX id1_type ON public.linktable USING btree \
                     (id1, link_type, visibility, \"time\", id2, version, data)"
                );
                assert_eq!(
                    one(
                        &drv,
                        "SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM pg_index i \
                         CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) \
                         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum \
                         WHERE i.indrelid = 'counttable'::regclass AND i.indisprimary"
                    ),
                    "id,link_type"
                );
                Box::new(drv)
            }
            other => panic!("this test has no case for {other}"),
        };
        let d2 = tempfile::tempdir().unwrap();
        corrupted_count_fails(&url, drv.as_ref(), d2.path(), kind.product());
    }
}

/// A matrix of two SQLite targets running `suite = "linkbench"`, then its
/// report in every format and `rqps compare` with per-operation rows.
#[test]
fn a_linkbench_matrix_reports_per_operation_in_every_format() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("wal.conf"), "journal_mode=WAL\n").unwrap();
    std::fs::write(d.path().join("delete.conf"), "journal_mode=DELETE\n").unwrap();
    let m = d.path().join("m.toml");
    std::fs::write(
        &m,
        r#"
[defaults]
suite = "linkbench"
profile = "ci"
repeats = 1
cooldown_secs = 0
requesters = [1]
nodes = 3000
outdegree = "smooth"
lb_secs = 0.5
lb_warmup_secs = 0.1

[[target]]
name = "wal"
engine = "sqlite"
config = "wal.conf"

[[target]]
name = "delete"
engine = "sqlite"
config = "delete.conf"
"#,
    )
    .unwrap();
    let results = d.path().join("results");
    let r = results.to_str().unwrap();
    let o = rqps(&["matrix", m.to_str().unwrap(), "--results", r]);
    assert!(o.status.success(), "{}", text(&o));
    let report = |format: &str| {
        // The terminal's whole report (its answer alone leaves the suite's
        // sections to --section or --full).
        let mut args = vec![
            "report",
            "--results",
            r,
            "--base",
            "wal",
            "--format",
            format,
        ];
        if format == "term" {
            args.push("--full");
        }
        let o = rqps(&args);
        assert!(o.status.success(), "{format}: {}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let term = report("term");
    for want in [
        "LinkBench requests (ops/s)",
        "P1 (1 requesters): per operation",
        "MULTIGET_LINK",
        "rel p99",
        "Counts check",
        "wal: ok",
    ] {
        assert!(term.contains(want), "term lacks {want}:\n{term}");
    }
    let md = report("md");
    assert!(md.contains("### P1 (1 requesters): per operation"), "{md}");
    assert!(md.contains("| GET_NODE | delete |"), "{md}");
    let html = report("html");
    assert!(
        html.contains("GET_LINKS_LIST") && html.contains("<table"),
        "{html}"
    );
    let csv = report("csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let per_op: Vec<Vec<&str>> = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|r| !r[col("lb_op")].is_empty())
        .collect();
    assert_eq!(per_op.len(), 2 * OPS.len(), "{csv}");
    // Relative figures for the target's rows (an operation too rare to
    // have run in half a second on one side has none).
    let rel: Vec<f64> = per_op
        .iter()
        .filter(|r| r[col("target")] == "delete" && !r[col("lb_rel_ops")].is_empty())
        .map(|r| r[col("lb_rel_ops")].parse::<f64>().unwrap())
        .collect();
    assert!(rel.len() >= 5 && rel.iter().all(|v| *v > 0.0), "{csv}");
    let tsv = report("tsv");
    assert!(tsv.contains("# linkbench P1\nop\tname\tops/s"), "{tsv}");
    let json: Value = serde_json::from_str(&report("json")).unwrap();
    let lb = &json["linkbench"];
    assert_eq!(lb["base"], "wal");
    assert_eq!(lb["loads"].as_array().unwrap().len(), 2, "{lb}");
    let rows = lb["steps"][0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2 * OPS.len(), "{lb}");
    assert!(rows[1]["rel"]["ratio"].as_f64().unwrap() > 0.0, "{lb}");
    assert!(rows[1]["rel_p99"].as_f64().unwrap() > 0.0, "{lb}");
    let o = rqps(&[
        "compare",
        "--results",
        r,
        "--base",
        "wal",
        "--target",
        "delete",
        "--fail-below",
        "0.01",
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    for op in OPS {
        assert!(out.contains(&format!("linkbench P1 {op}")), "{out}");
    }
}
