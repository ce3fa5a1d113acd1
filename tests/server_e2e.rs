//! The sysbench suite against real throwaway MariaDB and PostgreSQL servers,
//! interoperability with real sysbench, a server killed mid-test, and
//! passwords kept out of every output.
//!
//! What needs a server rqps does not start itself (`--server`) and does not
//! kill shares the binary's one throwaway server of each kind
//! ([`shared::server_with_database`], a database per test); the two kinds'
//! runs of a test go side by side only where they mostly wait.
//!
//! Without the server binaries these tests print why and pass, unless
//! `RQPS_REQUIRE_SERVERS=1` (set by `.ci/run`), in which case they fail.

mod common;
use common::shared::server_with_database;
use common::{read_json, rqps, server_available, servers_required, text};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rqps::engine::server::{Recipe, Server, ServerSpec};
use serde_json::Value;

static PG: Recipe = &rqps::engine::postgres::server::RECIPE;
static MARIADB: Recipe = &rqps::engine::mysql::server::RECIPE;

const KINDS: [Recipe; 2] = [MARIADB, PG];

fn sysbench_available() -> bool {
    let ok = Command::new("sysbench")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok && servers_required() {
        panic!("RQPS_REQUIRE_SERVERS=1 but sysbench is not installed (apt-get install sysbench)");
    }
    ok
}

fn start(kind: Recipe) -> Server {
    Server::start(&ServerSpec::new(kind), &mut |n| eprintln!("note: {n}"))
        .unwrap_or_else(|e| panic!("starting {kind}: {e}"))
}

/// `f` for each kind whose binaries are here, one after the other.
fn each_kind(f: impl Fn(Recipe)) {
    KINDS
        .into_iter()
        .filter(|&k| server_available(k))
        .for_each(f);
}

/// [`each_kind`] with the kinds side by side (a panic in one fails the test
/// once both are done): for a test that mostly waits, or whose steps end at
/// a number of events. A step of a fixed short time stays one after the
/// other: side by side, on a busy 2-core machine, a 0.2 s step could see no
/// transaction complete.
fn each_kind_side_by_side(f: impl Fn(Recipe) + Sync) {
    let f = &f;
    std::thread::scope(|s| {
        for kind in KINDS.into_iter().filter(|&k| server_available(k)) {
            s.spawn(move || f(kind));
        }
    });
}

fn tests_of(doc: &Value) -> Vec<Value> {
    doc["tests"].as_array().unwrap().clone()
}

#[test]
fn ci_profile_on_throwaway_servers() {
    const EVENTS: &str = "50";
    // Half of each step's time is rqps's probe of the machine (a 0.25 s
    // window): the kinds side by side.
    each_kind_side_by_side(|kind| {
        let d = tempfile::tempdir().unwrap();
        let (conf, setting, want) = match kind.key() {
            "mariadb" => (
                "innodb_buffer_pool_size = 96M\n",
                "innodb_buffer_pool_size",
                "100663296",
            ),
            "postgres" => ("shared_buffers = 96MB\n", "shared_buffers", "12288"),
            other => panic!("this test has no case for {other}"),
        };
        let conf_path = d.path().join("engine.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let json = d.path().join("run.json");
        let results = d.path().join("r");
        let o = rqps(&[
            "run",
            "--server",
            kind.product(),
            "--config",
            conf_path.to_str().unwrap(),
            "--profile",
            "ci",
            // Every one of the 32 statements' kinds on each server, each
            // ending at 50 transactions rather than after the profile's 1 s
            // (the slowest kinds, range=10000, take ~0.2 s for them). A fixed
            // 0.2 s failed now and then under load (a `delete` that completed
            // no transaction in it); 30 s is only the deadline.
            "--events",
            EVENTS,
            "--read-secs",
            "30",
            "--write-secs",
            "30",
            "--warmup-secs",
            "0.05",
            "--results",
            results.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "-q",
        ]);
        assert!(o.status.success(), "{kind}: {}", text(&o));
        let doc = read_json(&json);
        assert_eq!(doc["status"], "ok");
        assert_eq!(doc["server"]["kind"], kind.key());
        assert_eq!(
            doc["settings"][setting], want,
            "{kind}: the config file was applied and recorded"
        );
        // MariaDB is named as its server says it is, whatever the URL scheme.
        let engine = if kind == MARIADB {
            "mariadb"
        } else {
            "postgres"
        };
        assert_eq!(doc["engine"]["name"], engine);
        assert!(!doc["engine"]["version"].as_str().unwrap().is_empty());
        let tests = tests_of(&doc);
        let reported: Vec<&Value> = tests.iter().filter(|t| t["reported"] == true).collect();
        assert_eq!(reported.len(), 32);
        for t in reported {
            let name = t["test"].as_str().unwrap();
            assert_eq!(t["status"], "ok", "{kind} {name}: {}", t["reason"]);
            assert!(t["qps"].as_f64().unwrap() > 0.0, "{kind} {name}");
            assert_eq!(
                t["events"].to_string(),
                EVENTS,
                "{kind} {name}: {}",
                t["reason"]
            );
            assert_eq!(t["errors"], 0, "{kind} {name}");
        }
    });
}

/// sysbench's connection options for database `db` of a throwaway server.
fn sysbench_args(s: &Server, db: &str) -> Vec<String> {
    let port = s.port().to_string();
    match s.recipe().key() {
        "mariadb" => vec![
            "--db-driver=mysql".into(),
            "--mysql-host=127.0.0.1".into(),
            format!("--mysql-port={port}"),
            "--mysql-user=root".into(),
            format!("--mysql-db={db}"),
        ],
        "postgres" => vec![
            "--db-driver=pgsql".into(),
            "--pgsql-host=127.0.0.1".into(),
            format!("--pgsql-port={port}"),
            "--pgsql-user=postgres".into(),
            format!("--pgsql-db={db}"),
        ],
        other => panic!("this test has no case for {other}"),
    }
}

fn sysbench(s: &Server, db: &str, script: &str, extra: &[&str], command: &str) -> Output {
    // The throwaway server's password, as libpq and libmariadb read it.
    Command::new("sysbench")
        .env("PGPASSWORD", s.password())
        .env("MYSQL_PWD", s.password())
        .arg(script)
        .args(sysbench_args(s, db))
        .args(["--tables=2", "--table-size=1000"])
        .args(extra)
        .arg(command)
        .output()
        .expect("sysbench runs")
}

#[test]
fn tables_are_interchangeable_with_real_sysbench() {
    if !sysbench_available() {
        eprintln!("skipping: sysbench is not installed");
        return;
    }
    each_kind(|kind| {
        let (held, url) = server_with_database(kind, "interop");
        let server = held.server;
        let password_file = server.password_file();
        let d = tempfile::tempdir().unwrap();
        let results = d.path().join("r");
        let common = [
            "--password-file",
            password_file.to_str().unwrap(),
            "--tables",
            "2",
            "--table-size",
            "1000",
            "--read-secs",
            "0.3",
            "--write-secs",
            "0.3",
            "--warmup-secs",
            "0",
            "-q",
        ];

        // rqps prepares; sysbench runs on those tables (a fixed number of
        // events: what counts is that they run, not for how long).
        let o = rqps(
            &[
                &[
                    "run",
                    "--target",
                    &url,
                    "--tests",
                    "point-query",
                    "--results",
                    results.to_str().unwrap(),
                ],
                &common[..],
            ]
            .concat(),
        );
        assert!(o.status.success(), "{kind}: {}", text(&o));
        for script in ["oltp_point_select", "oltp_read_write"] {
            let o = sysbench(
                server,
                "interop",
                script,
                &["--events=50", "--time=0", "--threads=1"],
                "run",
            );
            let out = text(&o);
            assert!(
                o.status.success(),
                "{kind} sysbench {script} on rqps tables: {out}"
            );
            assert!(
                out.contains("queries:") && !out.contains("FATAL"),
                "{kind} {script}: {out}"
            );
        }

        // sysbench prepares; rqps runs on those tables without loading.
        let o = sysbench(server, "interop", "oltp_read_write", &[], "cleanup");
        assert!(o.status.success(), "{}", text(&o));
        let o = sysbench(server, "interop", "oltp_read_write", &[], "prepare");
        assert!(o.status.success(), "{kind} sysbench prepare: {}", text(&o));
        let json = d.path().join("skip.json");
        let o = rqps(
            &[
                &[
                    "run",
                    "--target",
                    &url,
                    "--skip-prepare",
                    "--tests",
                    "point-query,random-points_range=10,read-write_range=10,insert",
                    // Other tests than the run above: another experiment, so
                    // another name (a name's runs are repeats).
                    "--name",
                    "on-sysbench-tables",
                    "--results",
                    results.to_str().unwrap(),
                    "--json",
                    json.to_str().unwrap(),
                ],
                &common[..],
            ]
            .concat(),
        );
        assert!(
            o.status.success(),
            "{kind} rqps on sysbench tables: {}",
            text(&o)
        );
        let doc = read_json(&json);
        assert!(doc.get("load").is_none(), "--skip-prepare must not load");
        for t in tests_of(&doc) {
            assert_eq!(t["status"], "ok", "{kind} {}: {}", t["test"], t["reason"]);
            assert_eq!(t["errors"], 0);
            assert!(t["qps"].as_f64().unwrap() > 0.0);
        }
    });
}

#[test]
fn a_server_killed_mid_test_fails_that_test_and_keeps_the_rest() {
    // Mostly waiting (for the second test, then rqps's reconnect window).
    each_kind_side_by_side(|kind| {
        let mut server = start(kind);
        let url = server.url();
        let d = tempfile::tempdir().unwrap();
        let results = d.path().join("r");
        let json = d.path().join("k.json");
        let started = Instant::now();
        let child = Command::new(env!("CARGO_BIN_EXE_rqps"))
            .args([
                "run",
                "--target",
                &url,
                "--profile",
                "ci",
                "--tests",
                "update-index,update-nonindex,point-query",
            ])
            .args([
                "--read-secs",
                "1",
                "--write-secs",
                "3",
                "--warmup-secs",
                "0",
                "-q",
            ])
            .args([
                "--results",
                results.to_str().unwrap(),
                "--json",
                json.to_str().unwrap(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Kill the server while update-nonindex (the second test) runs.
        loop {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "{kind}: the run never reached the second test"
            );
            if json.exists() && tests_of(&read_json(&json)).len() == 1 {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        std::thread::sleep(Duration::from_millis(1000));
        server.kill();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{kind}: {err}");
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "{kind}: took too long after the kill"
        );
        let doc = read_json(&json);
        assert_eq!(doc["status"], "failed");
        let tests = tests_of(&doc);
        assert_eq!(tests.len(), 3, "{kind}: every test has a result");
        assert_eq!(
            tests[0]["status"], "ok",
            "{kind}: the test that finished is kept"
        );
        assert_eq!(tests[1]["status"], "failed", "{kind}");
        assert!(tests[1]["reason"].as_str().unwrap().len() > 5);
        assert_eq!(
            tests[2]["status"], "failed",
            "{kind}: the next test fails fast"
        );
        // The results directory agrees.
        let run_dir: PathBuf = std::fs::read_dir(&results)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        assert_eq!(read_json(&run_dir.join("run.json"))["status"], "failed");
        drop(server);
    });
}

#[test]
fn passwords_never_reach_output_or_results() {
    const PW: &str = "Zq8-very-secret-pw";
    each_kind(|kind| {
        let (held, _) = server_with_database(kind, "pw");
        let server = held.server;
        // A user with a password of its own, made by the throwaway admin.
        let url = match kind.key() {
            "mariadb" => {
                use mysql::prelude::Queryable;
                let mut c =
                    mysql::Conn::new(mysql::Opts::from_url(&server.url()).unwrap()).unwrap();
                c.query_drop(format!("CREATE USER 'bench'@'%' IDENTIFIED BY '{PW}'"))
                    .unwrap();
                c.query_drop("GRANT ALL ON pw.* TO 'bench'@'%'").unwrap();
                format!("mysql://bench:{PW}@127.0.0.1:{}/pw", server.port())
            }
            "postgres" => {
                let mut c = postgres::Client::connect(
                    &format!(
                        "host=127.0.0.1 port={} user=postgres password={} dbname=pw",
                        server.port(),
                        server.password()
                    ),
                    postgres::NoTls,
                )
                .unwrap();
                c.batch_execute(&format!("CREATE USER bench PASSWORD '{PW}'; GRANT ALL ON SCHEMA public TO bench; ALTER DATABASE pw OWNER TO bench")).unwrap();
                format!("postgres://bench:{PW}@127.0.0.1:{}/pw", server.port())
            }
            other => panic!("this test has no case for {other}"),
        };
        let d = tempfile::tempdir().unwrap();
        let results = d.path().join("r");
        let json = d.path().join("p.json");
        let o = rqps(&[
            "run",
            "--target",
            &url,
            "--profile",
            "ci",
            "--tests",
            "point-query",
            "--read-secs",
            "0.3",
            "--warmup-secs",
            "0",
            "--results",
            results.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ]);
        let out = text(&o);
        assert!(
            o.status.success(),
            "{kind}: {}",
            out.replace(PW, "<leaked>")
        );
        assert!(!out.contains(PW), "{kind}: password printed");
        assert!(
            out.contains("bench:***@"),
            "{kind}: the redacted target is shown: {out}"
        );
        // A wrong password: the error names the target without the password either.
        let bad = url.replace(&format!("bench:{PW}"), "bench:wrong-Zq8-pw");
        let o = rqps(&[
            "run",
            "--target",
            &bad,
            "--profile",
            "ci",
            "--tests",
            "point-query",
            "--results",
            results.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{kind}: {}", text(&o));
        assert!(!text(&o).contains("wrong-Zq8-pw"), "{kind}: {}", text(&o));
        let mut files = vec![json.clone()];
        let mut stack = vec![results.clone()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p)
                } else {
                    files.push(p)
                }
            }
        }
        for f in files {
            let s = std::fs::read_to_string(&f).unwrap();
            assert!(
                !s.contains(PW),
                "{kind}: password stored in {}",
                f.display()
            );
        }
    });
}

#[test]
fn hardware_cost_per_operation_on_throwaway_servers() {
    for kind in KINDS {
        if !server_available(kind) {
            continue;
        }
        let d = tempfile::tempdir().unwrap();
        let json = d.path().join("hw.json");
        let results = d.path().join("r");
        let mut args = vec![
            "run",
            "--server",
            kind.product(),
            "--profile",
            "ci",
            "--tests",
            "update-index,point-query",
            "--read-secs",
            "1.5",
            "--write-secs",
            "1.5",
            "--results",
            results.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "-q",
        ];
        // `--server-cpus` and `--client-cpus` through the binary, on one of
        // the servers this test starts anyway: the run stores the server's
        // CPU set as the kernel reported it and the client's as given.
        let budgets = kind == PG;
        if budgets {
            args.extend(["--server-cpus", "0", "--client-cpus", "0"]);
        }
        let o = rqps(&args);
        assert!(o.status.success(), "{kind}: {}", text(&o));
        let out = text(&o);
        assert!(out.contains("hardware cost per operation"), "{kind}: {out}");
        let doc = read_json(&json);
        if budgets {
            assert_eq!(doc["params"]["server_cpus"], "0");
            assert_eq!(doc["params"]["client_cpus"], "0");
            assert!(doc["command_line"].to_string().contains("--server-cpus"));
        }
        let setting = if kind == MARIADB {
            "innodb_buffer_pool_size"
        } else {
            "shared_buffers"
        };
        assert!(
            doc["settings"][setting].is_string(),
            "{kind}: settings captured"
        );
        assert!(
            doc["host"]["cpu_model"].is_string() && doc["host"]["data_fs"].is_string(),
            "{kind}: {}",
            doc["host"]
        );
        assert!(
            doc["load"]["hw"]["client_cpu_us_per_op"].as_f64().unwrap() > 0.0,
            "{kind}: load per row"
        );
        for t in tests_of(&doc) {
            let name = t["test"].as_str().unwrap();
            let hw = &t["hw"];
            let f = |k: &str| {
                hw[k]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{kind} {name}: {k} missing: {hw}"))
            };
            assert!(f("client_cpu_us_per_op") > 0.0, "{kind} {name}");
            assert!(f("server_cpu_us_per_op") > 0.0, "{kind} {name}");
            assert!(f("cpu_us_per_op") > 0.0, "{kind} {name}");
            assert!(f("server_max_rss_mb") > 1.0, "{kind} {name}");
            assert!(
                hw["db_after"]["engine_bytes"].as_u64().unwrap() > 0,
                "{kind} {name}"
            );
            assert!(
                hw["db_after"]["disk_bytes"].as_u64().unwrap() > 0,
                "{kind} {name}"
            );
            if name == "update-index" {
                assert!(f("wkb_per_op") > 0.0, "{kind}: a write test writes: {hw}");
            }
            assert!(
                !t["status_delta"].as_object().unwrap().is_empty(),
                "{kind} {name}: status counters moved"
            );
            assert!(
                !hw["per_second"].as_array().unwrap().is_empty(),
                "{kind} {name}"
            );
        }
    }
}

#[test]
fn embedded_sqlite_says_what_it_cannot_measure() {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("s.json");
    let o = rqps(&[
        "run",
        "--profile",
        "ci",
        "--tests",
        "update-index",
        "--write-secs",
        "1",
        "--results",
        d.path().join("r").to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = &tests_of(&read_json(&json))[0];
    let hw = &t["hw"];
    assert!(hw["client_cpu_us_per_op"].as_f64().unwrap() > 0.0);
    // No made-up zero: the server figure is absent and the reason is given.
    assert!(
        hw.get("server_cpu_us_per_op").is_none_or(|v| v.is_null()),
        "{hw}"
    );
    assert!(
        hw["unavailable"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("embedded"))
    );
}

/// The `--part` flags of one client part.
fn part_args(
    url: &str,
    password_file: &str,
    i: usize,
    start_at: u64,
    results: &std::path::Path,
) -> Vec<String> {
    [
        "run",
        "--target",
        url,
        "--password-file",
        password_file,
        "--profile",
        "ci",
        "--tests",
        "point-query",
        "--threads",
        "4",
        "--read-secs",
        "1",
        "--warmup-secs",
        "0",
        "--skip-prepare",
        "--part",
        &format!("{i}/4"),
        "--start-at",
        &start_at.to_string(),
        "--results",
        results.to_str().unwrap(),
        "-q",
    ]
    .map(String::from)
    .to_vec()
}

/// Four client parts as separate processes against one PostgreSQL, the
/// fourth started after the agreed time, then `rqps merge`: the merged QPS is
/// the sum of the parts', the merged p99 is the p99 of one histogram fed with
/// every part's samples, the threads add up, each part's host is kept, and
/// the late part is flagged.
#[test]
fn four_client_parts_merge_exactly_and_a_late_part_is_flagged() {
    if !server_available(PG) {
        return;
    }
    let (held, url) = server_with_database(PG, "parts");
    let password_file = held.server.password_file();
    let password_file = password_file.to_str().unwrap();
    let d = tempfile::tempdir().unwrap();
    let o = rqps(&[
        "run",
        "--target",
        &url,
        "--password-file",
        password_file,
        "--profile",
        "ci",
        "--tests",
        "point-query",
        "--read-secs",
        "0.2",
        "--results",
        d.path().join("load").to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "load: {}", text(&o));
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
    };
    let start_at = now().as_secs() + 5;
    let dirs: Vec<PathBuf> = (1..=4).map(|i| d.path().join(format!("p{i}"))).collect();
    let spawn = |i: usize| {
        Command::new(env!("CARGO_BIN_EXE_rqps"))
            .args(part_args(&url, password_file, i, start_at, &dirs[i - 1]))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut children: Vec<_> = (1..=3).map(spawn).collect();
    // The fourth part is started 2.5 s after the agreed time.
    let late_at = Duration::from_secs(start_at) + Duration::from_millis(2500);
    std::thread::sleep(late_at.saturating_sub(now()));
    children.push(spawn(4));
    for (i, c) in children.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "part {}: {}", i + 1, text(&o));
    }

    let merged_dir = d.path().join("merged");
    let mut args: Vec<&str> = vec!["merge"];
    args.extend(dirs.iter().map(|p| p.to_str().unwrap()));
    args.extend(["--results", merged_dir.to_str().unwrap()]);
    let o = rqps(&args);
    assert!(o.status.success(), "merge: {}", text(&o));
    assert!(text(&o).contains("part 4/4 began"), "{}", text(&o));

    let one_run = |dir: &std::path::Path| {
        let runs: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("run.json").is_file())
            .collect();
        assert_eq!(runs.len(), 1, "{}", dir.display());
        rqps::results::read_run(&runs[0]).unwrap()
    };
    let parts: Vec<_> = dirs.iter().map(|p| one_run(p)).collect();
    let merged = one_run(&merged_dir);
    let t = &merged.tests[0];
    assert_eq!((t.test.as_str(), t.threads), ("point-query", 4));
    assert!(parts.iter().all(|p| p.tests[0].threads == 1));

    let sum: f64 = parts.iter().map(|p| p.tests[0].qps).sum();
    assert!((t.qps - sum).abs() <= 1e-9 * sum, "{} != {sum}", t.qps);
    let events: u64 = parts.iter().map(|p| p.tests[0].events).sum();
    assert_eq!(t.events, events);

    // One histogram fed with every part's samples, value by value.
    let mut all = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 2).unwrap();
    for p in &parts {
        let h = rqps::results::decode_histogram(p.tests[0].histogram.as_ref().unwrap()).unwrap();
        for v in h.iter_recorded() {
            all.record_n(v.value_iterated_to(), v.count_at_value())
                .unwrap();
        }
    }
    assert_eq!(all.len(), events);
    assert_eq!(
        t.latency_us.p99,
        all.value_at_quantile(0.99) as f64 / 1000.0
    );
    assert_eq!(t.latency_us.max, all.max() as f64 / 1000.0);

    let late: Vec<bool> = merged.merged_from.iter().map(|p| p.late).collect();
    assert_eq!(late, [false, false, false, true]);
    assert!(merged.merged_from.iter().all(|p| p.host.is_some()));
    assert!(merged.merged_from[3].late_secs >= 2.0);
    assert!(
        t.warnings.iter().any(|w| w.contains("part 4/4 began")),
        "{:?}",
        t.warnings
    );
    assert_eq!(t.part_hw.len(), 4);

    // A part alone is not the target's result: reports leave it out.
    let o = rqps(&[
        "report",
        "--results",
        dirs[0].to_str().unwrap(),
        "--base",
        &merged.name,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("holds no runs"), "{}", text(&o));
}
