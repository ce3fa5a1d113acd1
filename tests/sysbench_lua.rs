//! sysbench's own Lua scripts, unchanged, through rqps: every script
//! Debian's sysbench ships in /usr/share/sysbench runs `prepare`, `run` and
//! `cleanup` on throwaway MariaDB and PostgreSQL (tiny tables, short runs),
//! counted as sysbench counts; bad scripts are refused in one line before
//! any engine opens; a runaway `event()` ends at the test's deadline.
//!
//! Without the server binaries (or sysbench's scripts) these tests print why
//! and pass, unless `RQPS_REQUIRE_SERVERS=1`.

mod common;
use common::{logged_statements, read_json, rqps, server_available, servers_required, text};
use std::path::{Path, PathBuf};

use rqps::engine::server::{Recipe, Server, ServerSpec};
use serde_json::Value;

static PG: Recipe = &rqps::engine::postgres::server::RECIPE;
static MARIADB: Recipe = &rqps::engine::mysql::server::RECIPE;

const SCRIPTS: &str = "/usr/share/sysbench";

fn scripts_available() -> bool {
    let ok = Path::new(SCRIPTS).join("oltp_common.lua").exists();
    if !ok && servers_required() {
        panic!(
            "RQPS_REQUIRE_SERVERS=1 but {SCRIPTS} has no sysbench scripts (apt-get install sysbench)"
        );
    }
    ok
}

/// Every script sysbench ships, but the library the others require.
fn debian_scripts() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(SCRIPTS)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "lua"))
        .filter(|p| !p.ends_with("oltp_common.lua"))
        .collect();
    v.sort();
    v
}

fn start(kind: Recipe) -> Server {
    Server::start(&ServerSpec::new(kind), &mut |n| eprintln!("note: {n}"))
        .unwrap_or_else(|e| panic!("starting {kind}: {e}"))
}

/// `rqps run` of `script` on `url` with `args` after `--`: the exit status,
/// the output, and the stored JSON document.
fn run_script(url: &str, script: &Path, args: &[&str]) -> (bool, String, Value) {
    run_script_with(url, &[], script, args)
}

/// [`run_script`] on a throwaway server, its password read from its file
/// (never on a command line).
fn run_script_on(srv: &Server, script: &Path, args: &[&str]) -> (bool, String, Value) {
    let url = srv.url_without_password();
    let file = srv.password_file();
    run_script_with(
        &url,
        &["--password-file", file.to_str().unwrap()],
        script,
        args,
    )
}

fn run_script_with(
    url: &str,
    rqps_args: &[&str],
    script: &Path,
    args: &[&str],
) -> (bool, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut all = rqps_args.to_vec();
    all.splice(0..0, ["run", "--target", url]);
    all.extend([
        "--suite",
        "sysbench",
        "--script",
        script.to_str().unwrap(),
        "--read-secs",
        "0.3",
        "--results",
        dir.path().to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--busy-threshold",
        "100",
        "--",
    ]);
    all.extend_from_slice(args);
    let o = rqps(&all);
    let doc = if json.exists() {
        read_json(&json)
    } else {
        Value::Null
    };
    (o.status.success(), text(&o), doc)
}

fn every_debian_script_runs_unchanged(kind: Recipe) {
    if !server_available(kind) || !scripts_available() {
        return;
    }
    let server = start(kind);
    for script in debian_scripts() {
        let name = script.file_stem().unwrap().to_str().unwrap().to_string();
        let (ok, out, doc) = run_script_on(&server, &script, &["--table-size=20"]);
        assert!(ok, "{name} on {kind}: {out}");
        // The script's own prepare and cleanup ran (they print as sysbench's do).
        assert!(out.contains("Creating table 'sbtest1'"), "{name}: {out}");
        assert!(out.contains("Dropping table 'sbtest1'"), "{name}: {out}");
        let t = &doc["tests"][0];
        assert_eq!(t["status"], "ok", "{name} on {kind}: {t}");
        assert_eq!(t["test"], name.as_str(), "{t}");
        assert!(t["events"].as_u64().unwrap() > 0, "{name} on {kind}: {t}");
        let (reads, writes, other) = (
            t["reads"].as_u64().unwrap(),
            t["writes"].as_u64().unwrap(),
            t["other"].as_u64().unwrap(),
        );
        // Counted as sysbench counts: a result set is a read, changed rows
        // a write, BEGIN and COMMIT "other".
        let events = t["events"].as_u64().unwrap();
        match name.as_str() {
            "oltp_point_select" => assert_eq!((reads, writes, other), (events, 0, 0), "{t}"),
            "oltp_read_only" => {
                assert_eq!(reads, 14 * events, "{t}");
                assert_eq!(other, 2 * events, "{t}")
            }
            "oltp_insert" => assert_eq!((reads, writes), (0, events), "{t}"),
            // bulk_insert sends its rows when the thread ends, outside the measurement.
            "bulk_insert" => {}
            _ => assert!(reads + writes + other > 0, "{name}: {t}"),
        }
    }
    // Only tables the scripts made were there, and cleanup dropped them all.
    let (ok, out, _) = run_script_on(
        &server,
        Path::new(&format!("{SCRIPTS}/oltp_point_select.lua")),
        &["--table-size=5", "--tables=2", "run"],
    );
    assert!(!ok, "the tables should be gone: {out}");
}

#[test]
fn every_debian_script_prepares_runs_and_cleans_up_on_mariadb() {
    every_debian_script_runs_unchanged(MARIADB);
}

#[test]
fn every_debian_script_prepares_runs_and_cleans_up_on_postgresql() {
    every_debian_script_runs_unchanged(PG);
}

/// sysbench's users' way (issue 55): `prepare`, `run`, `run` and `cleanup`
/// as four commands under one name are one experiment: the runs pool as 2
/// repeats (their seeds drawn, not compared), `prepare` and `cleanup` record
/// what they did; another option under the name is refused in one short
/// line. A script run is a run like any other (issue 57): its QPS in the
/// closing table, `rqps show`, `-q` and a report between two script runs,
/// named by its script and options in `rqps runs` with its real thread
/// count; the hint after it changes one thing and works as printed; no hint
/// follows a `prepare`, a `cleanup` or a failed run.
fn separate_commands_under_one_name_are_one_experiment(server: &Server) {
    let dir = tempfile::tempdir().unwrap();
    let res = dir.path().join("res");
    let (url, file) = (server.url_without_password(), server.password_file());
    let script = format!("{SCRIPTS}/oltp_point_select.lua");
    let rqps_run = |name: &str, extra: &[&str], args: &[&str]| {
        let mut all = vec![
            "run",
            "--target",
            &url,
            "--password-file",
            file.to_str().unwrap(),
            "--suite",
            "sysbench",
            "--script",
            &script,
            "--results",
            res.to_str().unwrap(),
            "--busy-threshold",
            "100",
            "--name",
            name,
        ];
        all.extend_from_slice(extra);
        all.push("--");
        all.extend_from_slice(args);
        rqps(&all)
    };
    let opts = ["--table-size=50", "--threads=2", "--events=300", "--time=0"];
    let with = |cmd: &'static str| [&opts[..], &[cmd]].concat();
    let hint = |o: &std::process::Output| {
        text(o)
            .lines()
            .find_map(|l| l.strip_prefix("compare with: ").map(String::from))
    };
    let o = rqps_run("p", &[], &with("prepare"));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        hint(&o),
        None,
        "no comparison after a prepare: {}",
        text(&o)
    );
    let o = rqps_run("p", &[], &with("run"));
    assert!(o.status.success(), "{}", text(&o));
    let first = hint(&o).unwrap_or_else(|| panic!("{}", text(&o)));
    // The closing table has the script's row with its QPS.
    let table_row = |out: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with("oltp_point_select ") && l.contains(" ok"))
            .map(String::from)
    };
    let closing = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(table_row(&closing).is_some(), "{}", text(&o));
    // Named by its script and options.
    assert!(
        closing.starts_with(
            "sysbench oltp_point_select.lua --time=0 --events=300 --table-size=50 on "
        ),
        "{closing}"
    );
    let o = rqps_run("p", &["-q"], &with("run"));
    assert!(o.status.success(), "the same command twice: {}", text(&o));
    assert!(
        table_row(&String::from_utf8_lossy(&o.stdout)).is_some(),
        "-q: {}",
        text(&o)
    );
    // `rqps show`: the latest run, its QPS.
    let o = rqps(&["show", "--results", res.to_str().unwrap()]);
    assert!(
        table_row(&String::from_utf8_lossy(&o.stdout)).is_some(),
        "show: {}",
        text(&o)
    );
    // Another option under the name: one short line naming it.
    let o = rqps_run(
        "p",
        &[],
        &["--table-size=60", "--threads=2", "--time=1", "run"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = text(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.trim().chars().count() <= 300, "{err}");
    assert!(
        err.contains("--table-size=50") && err.contains("--table-size=60"),
        "{err}"
    );
    assert!(!err.contains('{'), "no JSON: {err}");
    // The first hint, as printed: one change (--ps-mode), its own name.
    let (again, report) = first.split_once("   (").unwrap();
    assert!(again.contains("--ps-mode disable"), "{again}");
    let o = sh(again, dir.path());
    assert!(o.status.success(), "{again}: {}", text(&o));
    let report = report.split_once("then: ").unwrap().1;
    let o = sh(report, dir.path());
    let rep = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{report}: {}", text(&o));
    assert!(!rep.contains("not compared"), "{rep}");
    let row = rep
        .lines()
        .find(|l| l.trim_start().starts_with("oltp_point_select"))
        .unwrap_or_else(|| panic!("{rep}"));
    assert!(
        row.contains("p-disable") || rep.contains("p-disable"),
        "{rep}"
    );
    let o = rqps_run("p", &[], &with("cleanup"));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        hint(&o),
        None,
        "no comparison after a cleanup: {}",
        text(&o)
    );
    // The tables are gone: this run fails, and no hint follows it.
    let o = rqps_run("p", &[], &with("run"));
    assert!(!o.status.success(), "{}", text(&o));
    assert_eq!(
        hint(&o),
        None,
        "no comparison after a failure: {}",
        text(&o)
    );
    // `rqps runs`: the two repeats on one line, at 2 threads, named by the
    // script and its options; prepare and cleanup on a line of their own.
    let o = rqps(&["runs", "--results", res.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.lines().all(|l| l.chars().count() <= 200), "{out}");
    let line = |start: &str| {
        out.lines()
            .find(|l| l.starts_with(start) && !l.contains("no test"))
            .unwrap_or_else(|| panic!("no {start} in {out}"))
            .to_string()
    };
    let p = line("p ");
    assert!(
        p.contains("  3 (1 not ok)  ")
            && p.contains("threads=2 script=")
            && p.contains("script=oltp_point_select.lua --time=0 --events=300 --table-size=50"),
        "{out}"
    );
    assert!(!p.contains("seed") && !p.contains('{'), "{out}");
    assert!(out.contains("no test: prepare, cleanup"), "{out}");
}

/// Runs `command` through `sh` in `cwd`, `rqps` being the binary under test.
fn sh(command: &str, cwd: &Path) -> std::process::Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_rqps")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::process::Command::new("sh")
        .args(["-c", command])
        .current_dir(cwd)
        .env("PATH", path)
        .output()
        .unwrap()
}

#[test]
fn a_runaway_event_ends_at_the_deadline_and_separate_commands_are_one_experiment() {
    if !server_available(MARIADB) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("runaway.lua");
    std::fs::write(
        &script,
        "function event()\n  local x = 0\n  while true do x = x + 1 end\nend\n",
    )
    .unwrap();
    let server = start(MARIADB);
    let t0 = std::time::Instant::now();
    let (ok, out, doc) = run_script_on(&server, &script, &[]);
    assert!(t0.elapsed().as_secs() < 30, "{out}");
    assert!(!ok, "{out}");
    let t = &doc["tests"][0];
    assert_eq!(t["status"], "failed", "{t}");
    assert_eq!(t["events"], 0, "{t}");
    // The same server, for what needs one (and no more than that).
    if scripts_available() {
        separate_commands_under_one_name_are_one_experiment(&server);
    }
}

/// `rqps run --suite sysbench --script FILE -- ARGS` on the default
/// (embedded) target: refused before anything opens.
fn refused(script: &Path, args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec![
        "run",
        "--suite",
        "sysbench",
        "--script",
        script.to_str().unwrap(),
        "--results",
        dir.path().to_str().unwrap(),
        "--",
    ];
    all.extend_from_slice(args);
    let o = rqps(&all);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert_eq!(out.trim().lines().count(), 1, "one line: {out}");
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "nothing stored: {out}"
    );
    out
}

#[test]
fn bad_scripts_get_one_line_and_exit_2_before_any_load() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let syntax = write("syntax.lua", "function event()\n  local x = = 1\nend\n");
    let out = refused(&syntax, &[]);
    assert!(out.contains("syntax.lua:2:"), "{out}");

    let missing = write(
        "missing.lua",
        "-- sysbench.db.query in a comment is fine\nfunction event()\n  return sysbench.histogram.print()\nend\n",
    );
    let out = refused(&missing, &[]);
    assert!(
        out.contains("missing.lua:3: sysbench.histogram.print"),
        "{out}"
    );

    let declares = write(
        "declares.lua",
        "sysbench.cmdline.options = { rows = {'Rows', 10} }\nfunction event() end\n",
    );
    let out = refused(&declares, &["--rowz=3"]);
    assert!(out.contains("--rowz") && out.contains("rows"), "{out}");
    let out = refused(&declares, &["--threads=two"]);
    assert!(out.contains("--threads=two"), "{out}");
    let out = refused(&declares, &["prewarm"]);
    assert!(out.contains("no 'prewarm' command"), "{out}");
}

/// The acceptance check: sysbench's own scripts through rqps, one
/// thread, `--rand-seed=5` and sysbench's default distribution (`special`,
/// which is also a script's default in rqps), send what sysbench 1.0.20
/// sends with the same options: the same statements with the same values in
/// the same order, as MariaDB's general log records them. Both run a set
/// number of events (`--events=N --time=0`): rqps sends exactly sysbench's
/// statements, no more.
#[test]
fn a_seeded_one_thread_script_sends_sysbench_s_statements_in_sysbench_s_order() {
    use rqps::engine::Driver;
    use std::process::Command;
    if !server_available(MARIADB) || !scripts_available() {
        return;
    }
    match Command::new("sysbench").arg("--version").output() {
        Ok(o) if String::from_utf8_lossy(&o.stdout).starts_with("sysbench 1.0.") => {}
        _ if servers_required() => panic!("RQPS_REQUIRE_SERVERS=1 but no sysbench 1.0 binary"),
        _ => return eprintln!("skipping: no sysbench 1.0 binary"),
    }
    let srv = start(MARIADB);
    let log = srv.data_dir().join("general.log");
    let root = rqps::engine::mysql::MysqlDriver::new(&srv.url()).unwrap();
    let mut conn = root.require_sql().unwrap().connect().unwrap();
    // A user without a password, on a server that only this test reaches:
    // sysbench takes passwords on its command line only.
    for sql in [
        "CREATE USER sb@'127.0.0.1'".to_string(),
        "GRANT ALL ON *.* TO sb@'127.0.0.1'".to_string(),
        format!("SET GLOBAL general_log_file = '{}'", log.display()),
        "SET GLOBAL general_log = 1".to_string(),
    ] {
        conn.query(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let port = srv.port().to_string();
    let shape = ["--tables=1", "--table-size=2000"];
    let sb = |script: &str, cmd: &str, extra: &[&str]| {
        let mut args = vec![
            script.to_string(),
            "--db-driver=mysql".into(),
            "--mysql-host=127.0.0.1".into(),
            format!("--mysql-port={port}"),
            "--mysql-user=sb".into(),
            format!("--mysql-db={}", srv.database()),
        ];
        args.extend(shape.iter().chain(extra).map(|s| s.to_string()));
        args.push(cmd.into());
        let o = Command::new("sysbench").args(&args).output().unwrap();
        assert!(o.status.success(), "sysbench {cmd}: {}", text(&o));
    };
    let len = || {
        std::fs::metadata(&log)
            .map(|m| m.len() as usize)
            .unwrap_or(0)
    };
    sb("oltp_point_select", "prepare", &[]);
    let target = format!("mysql://sb@127.0.0.1:{port}/{}", srv.database());
    // (script, events sysbench runs, statements per event)
    for (script, events, per_event) in [("oltp_point_select", 200, 1), ("oltp_read_write", 30, 20)]
    {
        let at = len();
        sb(
            script,
            "run",
            &[
                "--threads=1",
                &format!("--events={events}"),
                "--rand-seed=5",
            ],
        );
        let theirs = logged_statements(&log, at);
        assert_eq!(theirs.len(), events * per_event, "{script}: {theirs:?}");

        let at = len();
        let path = PathBuf::from(SCRIPTS).join(format!("{script}.lua"));
        let mut args = shape.to_vec();
        // sysbench's own bound (issue 55): exactly its events, no time limit.
        let bound = format!("--events={events}");
        args.extend(["--rand-seed=5", &bound, "--time=0", "run"]);
        let (ok, out, doc) = run_script(&target, &path, &args);
        assert!(ok, "rqps {script}: {out}");
        let t = &doc["tests"][0];
        assert_eq!(t["events"].as_u64(), Some(events as u64), "{script}: {t}");
        assert_eq!(t["event_bound"]["ended_by"], "events", "{script}: {t}");
        assert!(out.contains("ended at its event limit"), "{out}");
        let ours = logged_statements(&log, at);
        assert_eq!(
            ours.len(),
            theirs.len(),
            "{script}: rqps sent {} statements, sysbench {}",
            ours.len(),
            theirs.len()
        );
        if let Some(i) = (0..theirs.len()).find(|&i| theirs[i] != ours[i]) {
            panic!(
                "{script}: statement {} differs:\n  sysbench: {}\n  rqps:     {}",
                i + 1,
                theirs[i],
                ours[i]
            );
        }
    }
}

/// The statements a PostgreSQL log (`log_statement = 'all'`) recorded from
/// `offset` on: each statement's text without the statement's name, with
/// its parameters when it had some.
fn pg_logged_statements(log: &Path, offset: usize) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap();
    let mut out: Vec<String> = Vec::new();
    for l in text[offset..].lines() {
        if let Some((_, p)) = l.split_once("DETAIL:  parameters: ") {
            if let Some(last) = out.last_mut() {
                last.push_str(" | ");
                last.push_str(p);
            }
            continue;
        }
        let Some((_, rest)) = l.split_once("LOG:  ") else {
            continue;
        };
        let sql = if let Some(s) = rest.strip_prefix("statement: ") {
            s
        } else if let Some(s) = rest.strip_prefix("execute ") {
            match s.split_once(": ") {
                Some((_, s)) => s,
                None => continue,
            }
        } else {
            continue;
        };
        let word = sql
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        if ["SELECT", "UPDATE", "DELETE", "INSERT", "BEGIN", "COMMIT"].contains(&word.as_str())
            && !sql.contains("pg_catalog")
            && !sql.contains("version()")
            && !sql.contains("current_setting")
            && !sql.contains("pg_settings")
            && !sql.contains("pg_stat")
            && !sql.contains("pg_roles")
            && !sql.contains("current_database()")
        {
            out.push(sql.to_string());
        }
    }
    out
}

/// The same on PostgreSQL (`log_statement = 'all'`), with server-side
/// prepared statements: `oltp_read_write.lua` (30 events, 600 statements)
/// through rqps sends sysbench's statements with sysbench's values in
/// sysbench's order. sysbench 1.0.20's pgsql driver draws twice from the
/// thread's stream to name each statement it prepares, so this fails unless
/// rqps draws them too. sysbench logs in over the server's unix socket as
/// rqps's own user (peer), so no password is on its command line.
#[test]
fn a_seeded_one_thread_script_sends_sysbench_s_statements_on_postgresql() {
    use rqps::engine::Driver;
    use std::process::Command;
    if !server_available(PG) || !scripts_available() {
        return;
    }
    match Command::new("sysbench").arg("--version").output() {
        Ok(o) if String::from_utf8_lossy(&o.stdout).starts_with("sysbench 1.0.") => {}
        _ if servers_required() => panic!("RQPS_REQUIRE_SERVERS=1 but no sysbench 1.0 binary"),
        _ => return eprintln!("skipping: no sysbench 1.0 binary"),
    }
    let srv = start(PG);
    let log = srv.log_path().to_path_buf();
    let root = rqps::engine::postgres::PostgresDriver::new(&srv.url()).unwrap();
    let mut conn = root.require_sql().unwrap().connect().unwrap();
    for sql in [
        "ALTER SYSTEM SET log_statement = 'all'",
        "SELECT pg_reload_conf()",
    ] {
        conn.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    // The reload takes effect in the server's own time.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let sock = srv.socket_dir().display().to_string();
    let port = srv.port().to_string();
    let sb = |script: &str, cmd: &str, extra: &[&str]| {
        let mut args = vec![
            script.to_string(),
            "--db-driver=pgsql".into(),
            format!("--pgsql-host={sock}"),
            format!("--pgsql-port={port}"),
            format!("--pgsql-user={}", srv.user()),
            format!("--pgsql-db={}", srv.database()),
            "--tables=1".into(),
            "--table-size=2000".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args.push(cmd.into());
        let o = Command::new("sysbench").args(&args).output().unwrap();
        assert!(o.status.success(), "sysbench {cmd}: {}", text(&o));
    };
    let len = || {
        std::fs::metadata(&log)
            .map(|m| m.len() as usize)
            .unwrap_or(0)
    };
    sb("oltp_read_write", "prepare", &[]);
    let at = len();
    sb(
        "oltp_read_write",
        "run",
        &["--threads=1", "--events=30", "--rand-seed=5"],
    );
    // The server writes its log in its own time.
    let mut theirs = pg_logged_statements(&log, at);
    for _ in 0..50 {
        if theirs.len() >= 30 * 20 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        theirs = pg_logged_statements(&log, at);
    }
    let at = len();
    let path = PathBuf::from(SCRIPTS).join("oltp_read_write.lua");
    let (ok, out, _) = run_script_on(
        &srv,
        &path,
        &[
            "--tables=1",
            "--table-size=2000",
            "--rand-seed=5",
            "--events=30",
            "--time=0",
            "run",
        ],
    );
    assert!(ok, "{out}");
    // The server writes its log in its own time.
    let mut ours = pg_logged_statements(&log, at);
    for _ in 0..50 {
        if ours.len() >= theirs.len() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        ours = pg_logged_statements(&log, at);
    }
    assert_eq!(theirs.len(), 30 * 20, "sysbench's statements: {theirs:?}");
    assert!(
        ours.len() >= theirs.len(),
        "rqps sent {} statements, sysbench {}",
        ours.len(),
        theirs.len()
    );
    if let Some(i) = (0..theirs.len()).find(|&i| theirs[i] != ours[i]) {
        panic!(
            "statement {} differs:\n  sysbench: {}\n  rqps:     {}",
            i + 1,
            theirs[i],
            ours[i]
        );
    }
}
