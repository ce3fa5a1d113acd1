//! `rqps compat` against real engines, and the guard it gives `rqps
//! report` and `rqps compare`. The engines come from the package
//! registries: PostgreSQL releases and MySQL/MariaDB through rqps's own
//! installer (the engine cache, so CI pays once), H2 2.5.252 from Maven
//! Central (run with the JDK mvn brings), go-mysql-server v0.20.0 built
//! from the Go module proxy into a temporary directory, PGlite's socket
//! server from npm. They need the network: they run when
//! `RQPS_NETWORK_TESTS=1` (set by `.ci/run`) and are skipped otherwise.
//!
//! The CI slice (`postgres_against_h2_and_sqlite_...`) checks a few tests
//! of two suites on PostgreSQL 18, H2's PostgreSQL server and SQLite, then
//! guards a report with the record it made. The full run
//! (`full_run_of_both_teams`, also `RQPS_COMPAT_FULL=1`) checks every
//! suite on every engine of docs/compat.md and writes the records there
//! named (`RQPS_COMPAT_OUT`, else a temporary directory); it took 28 minutes here.

mod common;
use common::text;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const H2: &str = "2.5.252";
const GMS: &str = "v0.20.0";
const PGLITE_SOCKET: &str = "0.2.17";

fn network() -> bool {
    let on = std::env::var("RQPS_NETWORK_TESTS").is_ok_and(|v| v == "1");
    if !on {
        eprintln!("skipping: set RQPS_NETWORK_TESTS=1 to fetch engines from the registries");
    }
    on
}

fn rqps(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rqps"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("rqps runs")
}

fn ok(o: &std::process::Output) -> String {
    let t = text(o);
    assert!(o.status.success(), "{t}");
    t
}

/// A loopback port nobody listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something listens on `port`.
fn wait_listening(port: u16, child: &mut Child, limit: Duration, what: &str) {
    let t = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(s)) = child.try_wait() {
            panic!("{what} exited before it listened: {s}");
        }
        assert!(
            t.elapsed() < limit,
            "{what} did not listen on {port} within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A server process of a test, killed when dropped.
struct Proc {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run_checked(cmd: &mut Command, what: &str) {
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert!(o.status.success(), "{what} failed: {}", text(&o));
}

/// H2's jar from Maven Central, through mvn (the local repository keeps it).
fn h2_jar() -> PathBuf {
    run_checked(
        Command::new("mvn").args([
            "-q",
            "-B",
            "dependency:get",
            &format!("-Dartifact=com.h2database:h2:{H2}"),
            "-Dtransitive=false",
        ]),
        "mvn dependency:get com.h2database:h2",
    );
    let home = std::env::var("HOME").unwrap();
    let jar = Path::new(&home).join(format!(".m2/repository/com/h2database/h2/{H2}/h2-{H2}.jar"));
    assert!(jar.is_file(), "{} after mvn", jar.display());
    jar
}

/// H2's PostgreSQL server mode on a free port, databases created on first
/// use in a temporary directory (user and password of the first login).
fn h2() -> Proc {
    let jar = h2_jar();
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut child = Command::new("java")
        .arg("-cp")
        .arg(&jar)
        .args([
            "org.h2.tools.Server",
            "-pg",
            "-pgPort",
            &port.to_string(),
            "-baseDir",
        ])
        .arg(dir.path())
        .arg("-ifNotExists")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("java runs (the JDK mvn needs)");
    wait_listening(port, &mut child, Duration::from_secs(120), "H2");
    Proc {
        child,
        port,
        _dir: dir,
    }
}

/// go-mysql-server's in-memory engine behind a small server main, built
/// from the Go module proxy in a temporary directory.
fn gms() -> Proc {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("go.mod"),
        format!("module rqpsgms\n\ngo 1.22\n\nrequire github.com/dolthub/go-mysql-server {GMS}\n"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("main.go"),
        r#"package main

import (
	"fmt"
	"os"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
)

// A MySQL-protocol server over one in-memory database: argv[1] the
// address to listen on, argv[2] the database's name.
func main() {
	d := memory.NewDatabase(os.Args[2])
	d.BaseDatabase.EnablePrimaryKeyIndexes()
	pro := memory.NewDBProvider(d)
	cfg := server.Config{Protocol: "tcp", Address: os.Args[1]}
	s, err := server.NewServer(cfg, sqle.NewDefault(pro), sql.NewContext, memory.NewSessionBuilder(pro), nil)
	if err == nil {
		err = s.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
"#,
    )
    .unwrap();
    for args in [&["mod", "tidy"][..], &["build", "-o", "gms", "."]] {
        run_checked(
            Command::new("go").args(args).current_dir(dir.path()),
            &format!("go {}", args.join(" ")),
        );
    }
    let port = free_port();
    let mut child = Command::new(dir.path().join("gms"))
        .args([&format!("127.0.0.1:{port}"), "compat"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_listening(port, &mut child, Duration::from_secs(60), "go-mysql-server");
    Proc {
        child,
        port,
        _dir: dir,
    }
}

/// PGlite's socket server from npm, its database in memory, as it starts
/// by default: one connection at a time, over one PGlite session.
fn pglite() -> Proc {
    let dir = tempfile::tempdir().unwrap();
    run_checked(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(dir.path())
            .arg(format!("@electric-sql/pglite-socket@{PGLITE_SOCKET}")),
        "npm install @electric-sql/pglite-socket",
    );
    let port = free_port();
    let mut child = Command::new("node")
        .arg(
            dir.path()
                .join("node_modules/@electric-sql/pglite-socket/dist/scripts/server.js"),
        )
        .args(["-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("node runs");
    wait_listening(port, &mut child, Duration::from_secs(300), "PGlite");
    Proc {
        child,
        port,
        _dir: dir,
    }
}

fn install(kind: &str, version: &str) {
    ok(&rqps(&["engine", "install", kind, version], &[]));
}

fn record(results: &Path) -> serde_json::Value {
    let dir = results.join("compat");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    common::read_json(files.last().expect("a record"))
}

fn target<'a>(r: &'a serde_json::Value, label: &str) -> &'a serde_json::Value {
    r["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"]["label"] == label)
        .unwrap_or_else(|| panic!("no target {label} in {r}"))
}

fn test_level<'a>(e: &'a serde_json::Value, test: &str) -> &'a str {
    e["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"] == test)
        .unwrap_or_else(|| panic!("no test {test} in {e}"))["level"]
        .as_str()
        .unwrap()
}

fn probe<'a>(e: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    e["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no probe {name} in {e}"))
}

#[test]
fn postgres_against_h2_and_sqlite_then_a_report_leaves_out_what_differs() {
    if !network() {
        return;
    }
    install("postgres", "18.6");
    let h2 = h2();
    let res = tempfile::tempdir().unwrap();
    let results = res.path().to_str().unwrap();
    let url = format!("h2=postgres://sa@127.0.0.1:{}/compat", h2.port);
    // The password of a URL without one comes from the environment, as
    // libpq takes it: never from the command line.
    let env = [("PGPASSWORD", "sa")];
    let t = Instant::now();
    let out = ok(&rqps(
        &[
            "compat",
            "--reference",
            "pg18=postgres@18.6",
            "--target",
            &url,
            "--target",
            "lite=sqlite",
            "--suites",
            "sysbench,select1",
            "--tests",
            "point-query,update-index,select1",
            "--results",
            results,
        ],
        &env,
    ));
    eprintln!("compat took {:.1} s", t.elapsed().as_secs_f64());
    assert!(
        out.contains("Compatibility with pg18 (postgres 18.6)"),
        "{out}"
    );
    let r = record(res.path());
    assert!(
        !out.contains("sa@") || !out.contains(":sa@"),
        "no password shown"
    );
    let h2 = target(&r, "h2");
    // H2 answers the sysbench statements as PostgreSQL does...
    for t in ["point-query", "update-index", "select1"] {
        assert_eq!(test_level(h2, t), "semantics", "{t}: {h2}");
    }
    // ... but not its protocol and errors: a cleartext password, no
    // `SHOW transaction_isolation`, its own SQLSTATEs (same meaning).
    assert_eq!(probe(h2, "authentication")["seen"], "password");
    assert_eq!(probe(h2, "authentication")["same"], false);
    assert_eq!(probe(h2, "default level")["same"], false);
    assert!(
        probe(h2, "syntax error")["seen"]
            .as_str()
            .unwrap()
            .starts_with("syntax error (42001:"),
        "{h2}"
    );
    // SQLite keeps a CHAR's value as given, PostgreSQL pads it: the first
    // difference says which statement, and both answers.
    let lite = target(&r, "lite");
    assert_eq!(test_level(lite, "point-query"), "syntax");
    let d = &lite["differences"][0];
    assert_eq!(d["test"], "point-query");
    let stmt = d["statement"].as_str().unwrap();
    assert!(
        stmt.starts_with("SELECT c FROM sbtest") && !stmt.contains('?'),
        "{d}"
    );
    assert!(d["reference"].as_str().unwrap().ends_with(" ')"), "{d}");
    assert!(d["target"].as_str().unwrap().ends_with("')"), "{d}");
    let suites = lite["suites"].as_array().unwrap();
    assert!(
        suites
            .iter()
            .any(|s| s["suite"] == "sysbench" && s["comparable"] == false)
    );
    // The record in every format.
    for f in ["term", "md", "html", "csv", "tsv", "json"] {
        let o = ok(&rqps(
            &["compat", "--show", "--results", results, "--format", f],
            &[],
        ));
        assert!(o.contains("point-query") && o.contains("lite"), "{f}: {o}");
    }

    // Runs of two engines in the same results directory: the report leaves
    // point-query out of the summaries, with the reason, in every format.
    for (name, engine) in [
        ("pg18", "--server=postgres@18.6"),
        ("lite", "--target=sqlite"),
    ] {
        ok(&rqps(
            &[
                "run",
                engine,
                "--suite",
                "sysbench",
                "--profile",
                "ci",
                "--tests",
                "point-query,update-index",
                "--read-secs",
                "0.5",
                "--write-secs",
                "0.5",
                "--warmup-secs",
                "0",
                "--name",
                name,
                "--results",
                results,
            ],
            &[],
        ));
    }
    let md = ok(&rqps(
        &[
            "report",
            "--results",
            results,
            "--base",
            "pg18",
            "--format",
            "md",
        ],
        &[],
    ));
    assert!(md.contains("Compatibility of the engines"), "{md}");
    assert!(
        md.contains("x lite point-query: left out of the summaries"),
        "{md}"
    );
    for f in ["term", "html", "csv", "tsv", "json"] {
        let o = ok(&rqps(
            &[
                "report",
                "--results",
                results,
                "--base",
                "pg18",
                "--format",
                f,
            ],
            &[],
        ));
        assert!(
            o.contains("differs from the reference at the syntax level"),
            "{f}: {o}"
        );
    }
    let gate = rqps(
        &[
            "compare",
            "--results",
            results,
            "--base",
            "pg18",
            "--target",
            "lite",
            "--fail-below",
            "0.01",
        ],
        &[],
    );
    // Both tests read or write sbtest's CHAR columns, which SQLite does
    // not pad: neither is gated, each with its reason, and a gate that
    // compared nothing fails (issue 51: never OK with 0 compared).
    let g = text(&gate);
    assert_eq!(gate.status.code(), Some(1), "{g}");
    assert!(g.contains("not gated: 2 test(s)"), "{g}");
    assert!(
        g.contains("point-query: lite differs from the reference at the syntax level"),
        "{g}"
    );
    assert!(
        g.contains(
            "FAIL: no test of lite was compared with pg18 (2 left out by a compatibility record"
        ),
        "{g}"
    );
    // The same runs without the record: the report says none was made.
    let bare = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(res.path()).unwrap() {
        let p = e.unwrap().path();
        if p.join("run.json").is_file() {
            let to = bare.path().join(p.file_name().unwrap());
            run_checked(Command::new("cp").arg("-r").arg(&p).arg(&to), "cp");
        }
    }
    let md = ok(&rqps(
        &[
            "report",
            "--results",
            bare.path().to_str().unwrap(),
            "--base",
            "pg18",
            "--format",
            "md",
        ],
        &[],
    ));
    assert!(md.contains("no compatibility record was made"), "{md}");
    assert!(!md.contains("left out of the summaries"), "{md}");
}

/// Where the full run's records go: `RQPS_COMPAT_OUT`, else a temporary
/// directory (kept, and named on standard error).
fn out_dir(team: &str) -> PathBuf {
    let base = match std::env::var("RQPS_COMPAT_OUT") {
        Ok(d) => PathBuf::from(d),
        Err(_) => tempfile::Builder::new()
            .prefix("rqps-compat-")
            .tempdir()
            .unwrap()
            .keep(),
    };
    let d = base.join(team);
    std::fs::create_dir_all(&d).unwrap();
    eprintln!("{team}: records in {}", d.display());
    d
}

#[test]
fn full_run_of_both_teams() {
    if !network() || std::env::var("RQPS_COMPAT_FULL").map_or(true, |v| v != "1") {
        eprintln!("skipping: the full run needs RQPS_NETWORK_TESTS=1 and RQPS_COMPAT_FULL=1");
        return;
    }
    for (k, v) in [
        ("postgres", "18.6"),
        ("postgres", "9.6.24"),
        ("mariadb", "11.4.5"),
        ("mysql", "8.0.33"),
        ("mysql", "5.6.14"),
    ] {
        install(k, v);
    }
    // Each record as Markdown beside it, for docs/compat.md.
    let md = |dir: &Path| {
        for e in std::fs::read_dir(dir.join("compat")).unwrap() {
            let p = e.unwrap().path();
            let o = ok(&rqps(
                &["compat", "--show", p.to_str().unwrap(), "--format", "md"],
                &[],
            ));
            std::fs::write(p.with_extension("md"), o).unwrap();
        }
    };
    // Team Postgres: every suite on PostgreSQL 9.6, H2, PGlite and SQLite.
    let (h2, pglite) = (h2(), pglite());
    let pg = out_dir("postgres");
    ok(&rqps(
        &[
            "compat",
            "--reference",
            "pg18=postgres@18.6",
            "--server",
            "pg96=postgres@9.6.24",
            "--target",
            &format!("h2=postgres://sa@127.0.0.1:{}/compat", h2.port),
            "--target",
            &format!(
                "pglite=postgres://postgres@127.0.0.1:{}/postgres",
                pglite.port
            ),
            "--target",
            "sqlite=sqlite",
            "--results",
            pg.to_str().unwrap(),
        ],
        &[("PGPASSWORD", "sa")],
    ));
    md(&pg);
    drop((h2, pglite));
    // Team MySQL: every suite on MariaDB (Debian's and 11.4.5) and MySQL
    // 5.6; go-mysql-server on the suites whose load it takes in minutes.
    let my = out_dir("mysql");
    ok(&rqps(
        &[
            "compat",
            "--reference",
            "mysql80=mysql@8.0.33",
            "--server",
            "mariadb1011=mariadb",
            "--server",
            "mariadb114=mariadb@11.4.5",
            "--server",
            "mysql56=mysql@5.6.14",
            "--results",
            my.to_str().unwrap(),
        ],
        &[],
    ));
    let gms = gms();
    ok(&rqps(
        &[
            "compat",
            "--reference",
            "mysql80=mysql@8.0.33",
            "--target",
            &format!("gms=mysql://root@127.0.0.1:{}/compat", gms.port),
            "--suites",
            "sysbench,select1,linkbench,ibench",
            "--results",
            my.to_str().unwrap(),
        ],
        &[],
    ));
    md(&my);
}
