//! The dbbench suite on real RocksDB releases, end to end through the rqps
//! binary. Installing a release needs Maven Central (through `mvn`): those
//! tests run when `RQPS_NETWORK_TESTS=1` (set by `.ci/run`) and are skipped
//! otherwise. The input checks that need no release always run.

mod common;
use common::{read_json, text};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Two releases far apart: before and after the defaults that changed
/// (dynamic level bytes, checksum, format version) and the batched multi-get.
const OLD: &str = "6.29.5";
const NEW: &str = "10.10.1";

fn enabled() -> bool {
    let on = std::env::var("RQPS_NETWORK_TESTS").is_ok_and(|v| v == "1");
    if !on {
        eprintln!(
            "skipping: set RQPS_NETWORK_TESTS=1 to fetch RocksDB releases from Maven Central"
        );
    }
    on
}

/// One engine cache for this test crate, kept in Cargo's temporary
/// directory for tests (a static is never dropped, so a temporary directory
/// would be left behind): each release is installed once, and a later run
/// finds it there.
fn cache() -> &'static Path {
    static CACHE: OnceLock<PathBuf> = OnceLock::new();
    CACHE.get_or_init(|| {
        let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rocksdb-engines");
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

fn rqps(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rqps"))
        .env("RQPS_CACHE_DIR", cache())
        .args(args)
        .output()
        .expect("rqps runs")
}

/// Installs `version` into the crate's cache (once).
fn installed(version: &str) {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let o = rqps(&["engine", "install", "rocksdb", version]);
    assert!(o.status.success(), "{}", text(&o));
}

/// Every stored run under `results`, oldest first.
fn runs(results: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("run.json").is_file())
        .collect();
    v.sort();
    v
}

/// The stored tests of one run, in order.
fn tests_of(run: &Path) -> Vec<serde_json::Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(run.join("tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().map(|f| read_json(f)).collect()
}

/// A small `ci` run: every step, in a few seconds.
const SMALL: &[&str] = &[
    "--suite",
    "dbbench",
    "--profile",
    "ci",
    "--keys",
    "5000",
    "--secs",
    "0.2",
    "--quiet",
];

#[test]
fn a_matrix_of_two_releases_far_apart_runs_every_ci_step_on_each_in_its_own_process() {
    if !enabled() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let matrix = dir.path().join("m.toml");
    // The matrix installs what is missing; two releases in one process would
    // abort it, so passing shows each ran in a process of its own.
    std::fs::write(
        &matrix,
        format!(
            "[defaults]\nsuite = \"dbbench\"\nprofile = \"ci\"\nkeys = 5000\nsecs = 0.2\n\
             cooldown_secs = 0\n\n\
             [[target]]\nname = \"old\"\nengine = \"rocksdb@{OLD}\"\n\n\
             [[target]]\nname = \"new\"\nengine = \"rocksdb@{NEW}\"\n\
             rocksdb_options = \"max_background_jobs=4\"\n"
        ),
    )
    .unwrap();
    let results = dir.path().join("res");
    let o = rqps(&[
        "matrix",
        matrix.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let runs = runs(&results);
    assert_eq!(runs.len(), 2, "{out}");
    for (run, version) in runs.iter().zip([OLD, NEW]) {
        let doc = read_json(&run.join("run.json"));
        assert_eq!(
            doc["engine"]["version"], version,
            "the LOG names the release"
        );
        assert_eq!(doc["status"], "ok");
        let options = doc["settings"]["options"].as_str().unwrap();
        assert!(
            options.contains("checksum=kXXH3") && options.contains("format_version=5"),
            "{options}"
        );
        assert_eq!(
            options.contains("max_background_jobs=4"),
            version == NEW,
            "the target's own options override the pinned ones: {options}"
        );
        let tests = tests_of(run);
        let names: Vec<&str> = tests.iter().map(|t| t["test"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "fillseq",
                "waitforcompaction",
                "readrandom",
                "fwdrange",
                "revrange",
                "multireadrandom",
                "overwritesome",
                "flush_mt_l0",
                "readwhilewriting",
                "fwdrangewhilewriting",
                "revrangewhilewriting",
                "overwriteandwait"
            ]
        );
        for t in &tests {
            assert_eq!(t["status"], "ok", "{t}");
            let f = &t["dbbench"];
            assert!(f["lsm_before"].is_object(), "{t}");
            assert!(f["work"].is_object(), "{t}");
            if t["reported"] == true {
                assert!(f["ops_per_sec"].as_f64().unwrap() > 0.0, "{t}");
                assert!(f["user_cpu_us_per_op"].as_f64().is_some(), "{t}");
                assert!(f["rss_bytes"].as_u64().unwrap() > 0, "{t}");
                assert!(f["db_bytes"].as_u64().unwrap() > 0, "{t}");
            }
        }
        let fill = &tests[0]["dbbench"];
        assert_eq!(fill["ops"], 5000, "fillseq writes every key once");
        assert_eq!(
            fill["step_options"], "memtablerep=vector;allow_concurrent_memtable_write=false",
            "fillseq loads with benchmark.sh's memtable"
        );
        assert!(
            tests[1..]
                .iter()
                .all(|t| t["dbbench"]["step_options"].is_null()),
            "the later steps run with the default memtable"
        );
        let writer = &tests[8]["dbbench"]["writer_ops_per_sec"];
        assert!(writer.as_f64().unwrap() > 0.0, "the writer wrote: {writer}");
    }
    // The report: relative to the base, with db_bench's summary columns in the TSV.
    let tsv = rqps(&[
        "report",
        "--results",
        results.to_str().unwrap(),
        "--base",
        "old",
        "--format",
        "tsv",
    ]);
    let tsv = text(&tsv);
    assert!(
        tsv.contains("test\tname\tversion\tops_sec\tmb_sec\tlsm_sz\tc_wgb\tw_amp\tc_mbps\tc_wsecs\tc_csecs\tusec_op\tp50\tp99\tp99.9\tp99.99\tpmax\tuptime\tstall%\tNstall\tu_cpu\ts_cpu\trss\n"),
        "{tsv}"
    );
    assert!(
        tsv.contains(&format!("\nreadrandom\tnew\t{NEW}\t")),
        "{tsv}"
    );
    let md = text(&rqps(&[
        "report",
        "--results",
        results.to_str().unwrap(),
        "--base",
        "old",
        "--format",
        "md",
    ]));
    assert!(md.contains("db_bench standard sequence"), "{md}");
    let json_path = dir.path().join("r.json");
    let o = rqps(&[
        "report",
        "--results",
        results.to_str().unwrap(),
        "--base",
        "old",
        "--format",
        "json",
        "-o",
        json_path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let json = read_json(&json_path);
    let rows = json["dbbench"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 24, "12 steps x 2 names");
    let base_read = rows
        .iter()
        .find(|r| r["test"] == "readrandom" && r["name"] == "old")
        .unwrap();
    assert_eq!(base_read["rel_ops"], 1.0, "the base against itself");
    let csv = text(&rqps(&[
        "report",
        "--results",
        results.to_str().unwrap(),
        "--base",
        "old",
        "--format",
        "csv",
    ]));
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .contains(",db_test,db_ops_per_sec,db_rel_ops,"),
        "{csv}"
    );
}

#[test]
fn the_shape_step_leaves_level_0_empty() {
    if !enabled() {
        return;
    }
    installed(OLD);
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().to_str().unwrap();
    // Small memtables and no L0 compaction during the load: fillseq leaves
    // several files in L0 for the shape step to push down.
    let mut args = vec![
        "run",
        "--server",
        "rocksdb@6.29.5",
        "--results",
        results,
        "--rocksdb-options",
        "write_buffer_size=262144;level0_file_num_compaction_trigger=20;level0_slowdown_writes_trigger=40;level0_stop_writes_trigger=50",
    ];
    args.extend(SMALL);
    let o = rqps(&args);
    assert!(o.status.success(), "{}", text(&o));
    let tests = tests_of(&runs(dir.path())[0]);
    let shape = tests
        .iter()
        .find(|t| t["test"] == "flush_mt_l0")
        .expect("the shape step ran");
    let l0 = |s: &serde_json::Value| -> u64 {
        s["levels"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["level"] == 0)
            .map(|l| l["files"].as_u64().unwrap())
            .sum()
    };
    let f = &shape["dbbench"];
    assert!(l0(&f["lsm_before"]) > 0, "L0 had files before: {f}");
    assert_eq!(l0(&f["lsm_after"]), 0, "L0 is empty after: {f}");
    assert!(
        f["lsm_after"]["memtable_bytes"].as_u64().unwrap() < 4096,
        "the memtable was flushed: {f}"
    );
    let below: u64 = f["lsm_after"]["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["files"].as_u64().unwrap())
        .sum();
    assert!(below > 0, "the data moved to a lower level: {f}");
}

#[test]
fn an_option_the_release_does_not_know_is_refused_with_the_release_named() {
    if !enabled() {
        return;
    }
    installed(OLD);
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run",
        "--server",
        "rocksdb@6.29.5",
        "--results",
        dir.path().to_str().unwrap(),
        "--rocksdb-options",
        "no_such_option=1",
    ];
    args.extend(SMALL);
    let o = rqps(&args);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains("RocksDB 6.29.5 refuses the options") && out.contains("no_such_option"),
        "{out}"
    );
    assert_eq!(out.matches("error").count(), 1, "one line: {out}");
}

#[test]
fn a_release_that_is_not_installed_or_options_that_are_not_key_value_pairs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().to_str().unwrap();
    let o = rqps(&[
        "run",
        "--server",
        "rocksdb@3.5.1",
        "--results",
        results,
        "--suite",
        "dbbench",
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("rqps engine install rocksdb 3.5.1"), "{out}");
    let o = rqps(&[
        "run",
        "--server",
        "rocksdb@3.5.1",
        "--results",
        results,
        "--suite",
        "dbbench",
        "--rocksdb-options",
        "compression",
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("key=value pairs separated by ';'"), "{out}");
    let o = rqps(&[
        "run",
        "--target",
        "rocksdb:/tmp/x?version=latest",
        "--results",
        results,
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("version 'latest' is not like 8.10.0"), "{out}");
    let o = rqps(&[
        "run",
        "--server",
        "postgres",
        "--results",
        results,
        "--rocksdb-options",
        "a=1",
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains("--rocksdb-options applies only to RocksDB"),
        "{out}"
    );
}

#[test]
fn a_suite_on_an_engine_without_the_face_it_needs_is_a_usage_error_that_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("res");
    let res = results.to_str().unwrap();
    // A SQL suite on the key-value engine (no library needed: refused before it opens).
    let o = rqps(&[
        "run",
        "--server",
        "rocksdb",
        "--suite",
        "sysbench",
        "--results",
        res,
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains(
            "suite sysbench needs SQL access, which RocksDB (rocksdb) does not offer: run it on sqlite, mysql, mariadb or postgres"
        ),
        "{out}"
    );
    // The key-value suite on SQL engines: the default SQLite, and a URL.
    for target in [None, Some("postgres://u@127.0.0.1:1/db")] {
        let mut args = vec!["run", "--suite", "dbbench", "--results", res];
        if let Some(t) = target {
            args.extend(["--target", t]);
        }
        let o = rqps(&args);
        let out = text(&o);
        assert_eq!(o.status.code(), Some(2), "{out}");
        assert!(
            out.contains("suite dbbench needs key-value access")
                && out.contains("does not offer: run it on rocksdb"),
            "{out}"
        );
        assert_eq!(out.trim().lines().count(), 1, "one line: {out}");
    }
    assert!(
        !results.exists() || runs(&results).is_empty(),
        "nothing is stored"
    );
}

/// The system's RocksDB library (Debian's librocksdb), if installed: `None`
/// skips the test, saying so, and fails it under `RQPS_REQUIRE_SERVERS=1`.
fn system_library() -> Option<PathBuf> {
    let lib = rqps::engine::rocksdb::KIND
        .library
        .expect("a library engine");
    match (lib.system)() {
        Ok(p) => Some(p),
        Err(e) if common::servers_required() => panic!("RQPS_REQUIRE_SERVERS=1 but: {e}"),
        Err(e) => {
            eprintln!("skipping: {e} (set RQPS_REQUIRE_SERVERS=1 to make this fail)");
            None
        }
    }
}

#[test]
fn debians_librocksdb_runs_every_ci_step_when_no_release_is_named() {
    let Some(lib) = system_library() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("res");
    let mut args = vec![
        "run",
        "--server",
        "rocksdb",
        "--results",
        results.to_str().unwrap(),
    ];
    args.extend(SMALL);
    let o = rqps(&args);
    assert!(o.status.success(), "{}", text(&o));
    let run = &runs(&results)[0];
    let doc = read_json(&run.join("run.json"));
    assert_eq!(doc["status"], "ok");
    assert_eq!(doc["server"]["binaries"], lib.display().to_string());
    let version = doc["engine"]["version"].as_str().unwrap();
    assert!(
        version.split('.').count() == 3 && version.split('.').all(|n| n.parse::<u32>().is_ok()),
        "the LOG names the release: {version}"
    );
    let tests = tests_of(run);
    assert_eq!(tests.len(), 12);
    assert!(tests.iter().all(|t| t["status"] == "ok"), "{tests:?}");
    assert_eq!(
        tests[0]["dbbench"]["step_options"],
        "memtablerep=vector;allow_concurrent_memtable_write=false"
    );
}

#[test]
fn bench_dbbench_client_pairs_short_pinned_rounds_and_reports_the_median_ratio_with_its_iqr() {
    let o = rqps(&["bench", "dbbench-client", "--rounds", "0"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("must be more than 0"), "{}", text(&o));
    if system_library().is_none() {
        return;
    }
    let o = rqps(&["bench", "dbbench-client", "--cpu", "100000"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("--cpu 100000: this process may run only on CPUs"),
        "{}",
        text(&o)
    );
    let o = rqps(&[
        "bench",
        "dbbench-client",
        "--keys",
        "2000",
        "--rounds",
        "3",
        "--secs",
        "0.05",
        "--cpu",
        "0",
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("pinned to CPU "), "{out}");
    let rows = out
        .lines()
        .filter(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() == 7 && w.iter().all(|x| x.parse::<f64>().is_ok())
        })
        .count();
    assert_eq!(rows, 3, "one line per round: {out}");
    let summary = out
        .lines()
        .find(|l| l.starts_with("rqps/bare, median of the rounds' ratios: "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        summary.contains("(IQR ") && summary.contains("per CPU second"),
        "{summary}"
    );
    assert!(out.contains("load average (1, 5, 15 min): "), "{out}");
}

#[test]
fn a_directory_target_keeps_its_database_and_names_its_release() {
    if !enabled() {
        return;
    }
    installed(NEW);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let target = format!("rocksdb:{}?version={NEW}", db.display());
    let results = dir.path().join("res");
    let mut args = vec![
        "run",
        "--target",
        &target,
        "--results",
        results.to_str().unwrap(),
    ];
    args.extend(SMALL);
    let o = rqps(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert!(db.join("CURRENT").is_file(), "the database stays");
    // RocksDB's LOG of each open names its memtable: the vector one for
    // fillseq, then the default skip list again (the LOG of the last open).
    let logs: Vec<String> = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("LOG"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let factory = |l: &String| {
        l.lines()
            .find_map(|x| x.split_once("Options.memtable_factory: "))
            .map(|(_, f)| f.trim().to_string())
    };
    let current = std::fs::read_to_string(db.join("LOG")).unwrap();
    assert_eq!(factory(&current).as_deref(), Some("SkipListFactory"));
    assert!(
        logs.iter()
            .any(|l| factory(l).as_deref() == Some("VectorRepFactory")),
        "an open with the vector memtable"
    );
    let doc = read_json(&runs(&results)[0].join("run.json"));
    assert_eq!(doc["engine"]["version"], NEW);
    assert_eq!(doc["target"], target);
}
