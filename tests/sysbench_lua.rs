//! sysbench's own Lua scripts, unchanged, through rqps: every script
//! Debian's sysbench ships in /usr/share/sysbench runs `prepare`, `run` and
//! `cleanup` on throwaway MariaDB and PostgreSQL (tiny tables, short runs),
//! counted as sysbench counts; bad scripts are refused in one line before
//! any engine opens; sysbench's reports, its C API for `ffi`, its errors
//! and the bounds on a script (a runaway `event()`, an endless start-up,
//! `os.exit`, memory) hold. One throwaway server of each kind serves the
//! whole binary (each test in a database of its own); what needs no
//! database runs on the default target.
//!
//! Without the server binaries (or sysbench's scripts) these tests print why
//! and pass, unless `RQPS_REQUIRE_SERVERS=1`. sysbench-tpcc and the scripts
//! of Mark Callaghan's sysbench fork are GPL-licensed and not in the
//! repository: their tests run where `RQPS_SYSBENCH_TPCC` and
//! `RQPS_SYSBENCH_FORK` name a copy (docs/suites/sysbench.md says how).

mod common;
use common::shared::server_with_database;
use common::{
    hint_commands, logged_statements, read_json, rqps, server_available, servers_required, text,
};
use std::path::{Path, PathBuf};

use rqps::engine::server::{Recipe, Server};
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

/// `rqps run` of `script` on `url` with `args` after `--`: the exit status,
/// the output, and the stored JSON document.
fn run_script(url: &str, script: &Path, args: &[&str]) -> (bool, String, Value) {
    run_script_with(url, &[], script, args)
}

/// [`run_script`] on database `url` of a throwaway server, its password
/// read from its file (never on a command line).
fn run_script_on(srv: &Server, url: &str, script: &Path, args: &[&str]) -> (bool, String, Value) {
    let file = srv.password_file();
    run_script_with(
        url,
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
    if url.is_empty() {
        all.insert(0, "run");
    } else {
        all.splice(0..0, ["run", "--target", url]);
    }
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
    let (held, url) = server_with_database(kind, "debian");
    let server = held.server;
    for script in debian_scripts() {
        let name = script.file_stem().unwrap().to_str().unwrap().to_string();
        // A fixed number of events, as sysbench's own tests run them: what
        // counts is that they run and how they are counted, not for how long.
        let (ok, out, doc) = run_script_on(
            server,
            &url,
            &script,
            &["--table-size=20", "--events=20", "--time=0"],
        );
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
        assert_eq!(events, 20, "{name} on {kind}: --events=20 ends it: {t}");
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
        server,
        &url,
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
fn separate_commands_under_one_name_are_one_experiment(server: &Server, url: &str) {
    let dir = tempfile::tempdir().unwrap();
    let res = dir.path().join("res");
    let (url, file) = (url.to_string(), server.password_file());
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
    // The hint's commands, as printed.
    let hint = |o: &std::process::Output| {
        let out = text(o);
        out.lines()
            .any(|l| l.starts_with("compare with"))
            .then(|| hint_commands(&out, "compare with"))
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
    let [again, report] = &first[..] else {
        panic!("{first:?}")
    };
    assert!(again.contains("--ps-mode disable"), "{again}");
    let o = sh(again, dir.path());
    assert!(o.status.success(), "{again}: {}", text(&o));
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
fn separate_commands_under_one_name_are_one_experiment_on_mariadb() {
    if !server_available(MARIADB) || !scripts_available() {
        return;
    }
    let (held, url) = server_with_database(MARIADB, "commands");
    separate_commands_under_one_name_are_one_experiment(held.server, &url);
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
        "-- sysbench.db.query in a comment is fine\nfunction event()\n  return sysbench.db.query('SELECT 1')\nend\n",
    );
    let out = refused(&missing, &[]);
    assert!(out.contains("missing.lua:3: sysbench.db.query"), "{out}");

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
    // No event(): sysbench's "cannot find the event() function".
    let no_event = write("no_event.lua", "function foo() end\n");
    let out = refused(&no_event, &["run"]);
    assert!(out.contains("no event() function"), "{out}");
    // sysbench 1.0's deprecated spellings are its options.
    let out = refused(&declares, &["--max-requests=-1"]);
    assert!(out.contains("--events"), "{out}");
    // sysbench's own options rqps does not take, with what to do instead.
    for (arg, says) in [
        ("--mysql-dry-run", "a dry run"),
        ("--mysql-host=127.0.0.1", "--target mysql://"),
        // PostgreSQL's options get a PostgreSQL target.
        ("--pgsql-port=5432", "--target postgres://"),
        ("--cpu-max-prime=2000", "built-in 'cpu' test"),
        ("--warmup-time=-1", "0 or more seconds"),
        ("--verbosity=9", "between 0 and 5"),
        ("--report-interval=-1", "0 (none) or more"),
        ("--rate=10", "no --rate"),
    ] {
        let out = refused(&declares, &[arg]);
        assert!(out.contains(says), "{arg}: {out}");
    }
    let out = refused(Path::new("cpu"), &["run"]);
    assert!(out.contains("built-in 'cpu' test"), "{out}");
    // A script that needs a database, without a target that has a
    // sysbench driver (the default is embedded SQLite).
    let db = write(
        "db.lua",
        "function thread_init()\n  con = sysbench.sql.driver():connect()\nend\nfunction event()\n  con:query('SELECT 1')\nend\n",
    );
    let out = refused(&db, &["run"]);
    assert!(
        out.contains("db.lua") && out.contains("give --target"),
        "{out}"
    );
    // Connecting at the top level is taken; a statement there cannot run
    // before the script connects.
    let top = write(
        "top.lua",
        "con = sysbench.sql.driver():connect()\ncon:query('SELECT 1')\nfunction event() end\n",
    );
    let out = refused(&top, &["run"]);
    assert!(out.contains("before it connects"), "{out}");
    let exit = write("exit.lua", "os.exit(3)\nfunction event() end\n");
    let out = refused(&exit, &["run"]);
    assert!(out.contains("os.exit(3)"), "{out}");
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
    let (held, _) = server_with_database(MARIADB, "seeded");
    let srv = held.server;
    let db = "seeded";
    let log = srv.data_dir().join("general.log");
    let root = rqps::engine::mysql::MysqlDriver::new(&srv.url()).unwrap();
    let mut conn = root.require_sql().unwrap().connect().unwrap();
    // A user without a password, on a server that only this binary's tests
    // reach: sysbench takes passwords on its command line only.
    for sql in [
        "CREATE USER IF NOT EXISTS sb@'127.0.0.1'".to_string(),
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
            format!("--mysql-db={db}"),
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
    let target = format!("mysql://sb@127.0.0.1:{port}/{db}");
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
    conn.query("SET GLOBAL general_log = 0").unwrap();

    // An error as a script sees it, beside sysbench's: a duplicate key's
    // errno and SQLSTATE (23000) in the descriptor and the message, its
    // connection printing as <sql_connection>, equal to the script's and
    // usable; an unknown driver name refused in sysbench's words.
    let dir = tempfile::tempdir().unwrap();
    let probe = write(
        dir.path(),
        "probe.lua",
        "function sysbench.hooks.sql_error_ignorable(e)\n  \
         print(string.format('probe: %d %s %s %s', e.sql_errno, e.sql_state,\n    \
         tostring(e.connection), tostring(e.connection == con)))\n  \
         seen = e.connection\n  return false\nend\n\
         function event()\n  con = sysbench.sql.driver():connect()\n  \
         local _, m = pcall(sysbench.sql.driver, 'nodriver')\n  print('probe: ' .. tostring(m))\n  \
         con:query('CREATE TEMPORARY TABLE dup (id INT PRIMARY KEY)')\n  \
         con:query('INSERT INTO dup VALUES (1)')\n  \
         _, m = pcall(con.query, con, 'INSERT INTO dup VALUES (1)')\n  \
         print('probe: ' .. tostring(m))\n  print('probe: ' .. seen:query_row('SELECT 7'))\nend\n",
    );
    let probed = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.starts_with("probe: ") || l.starts_with("FATAL: invalid"))
            .map(String::from)
            .collect()
    };
    let o = Command::new("sysbench")
        .args([
            probe.to_str().unwrap(),
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
            &format!("--mysql-port={port}"),
            "--mysql-user=sb",
            &format!("--mysql-db={db}"),
            "--events=1",
            "run",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "sysbench probe: {}", text(&o));
    let theirs = probed(&text(&o));
    let (ok, out, _) = run_script(&target, &probe, &["--events=1", "--time=0", "run"]);
    assert!(ok, "rqps probe: {out}");
    let ours = probed(&out);
    assert!(
        ours.contains(&"probe: 1062 23000 <sql_connection> true".to_string())
            && ours
                .iter()
                .any(|l| l.contains("errno = 1062, state = '23000'")),
        "{out}"
    );
    assert_eq!(ours, theirs, "rqps, then sysbench");

    // Results and parameters as the statement path keeps them: a
    // connection's one result (the same object after every statement, as
    // sysbench's), its rows read in order, free(); a parameter set after its
    // statement was bound again to a new array writes nothing stale.
    let results = write(
        dir.path(),
        "results.lua",
        "function event()
  local con = sysbench.sql.driver():connect()
           con:query('CREATE TEMPORARY TABLE r (id INT PRIMARY KEY, s VARCHAR(8))')
           local st = con:prepare('INSERT INTO r VALUES (?, ?)')
           local a = st:bind_create(sysbench.sql.type.INT)
           local b = st:bind_create(sysbench.sql.type.VARCHAR, 3)
           st:bind_param(a, b)
  a:set(1)
  b:set('abcdef')
  local w = st:execute()
           print('probe: ' .. w.nrows .. ' ' .. w.nfields .. ' ' .. tostring(w))
           local c = st:bind_create(sysbench.sql.type.INT)
  st:bind_param(c, b)
           for i = 1, 2000 do a:set(i) end
  collectgarbage()
           c:set(2)
  b:set(nil)
  st:execute()
           local q = con:query('SELECT id, s FROM r ORDER BY id')
           print('probe: ' .. q.nrows .. ' ' .. q.nfields .. ' ' .. tostring(q == w))
           for i = 1, q.nrows do local row = q:fetch_row()
             print('probe: ' .. row[1] .. ' ' .. tostring(row[2])) end
           print('probe: ' .. tostring(q:fetch_row()))
  q:free()
           print('probe: ' .. q.nrows .. ' ' .. con:query_row('SELECT COUNT(*) FROM r'))
           return true
end
",
    );
    let (ok, out, _) = run_script(&target, &results, &["--events=1", "--time=0", "run"]);
    assert!(ok, "rqps results: {out}");
    assert_eq!(
        probed(&out),
        [
            "probe: 1 0 <sql_result>",
            "probe: 2 2 true",
            "probe: 1 abc",
            "probe: 2 nil",
            "probe: nil",
            "probe: 0 2",
        ],
        "{out}"
    );
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
    let (held, url) = server_with_database(PG, "seeded");
    let srv = held.server;
    let db = "seeded";
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
            format!("--pgsql-db={db}"),
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
        srv,
        &url,
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
    for sql in [
        "ALTER SYSTEM RESET log_statement",
        "SELECT pg_reload_conf()",
    ] {
        conn.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// Writes `text` to `dir/name` and returns its path.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Standard output of `rqps run` of `script` on the default target (no
/// database), the exit status, stderr and the stored document.
fn run_plain(
    script: &Path,
    rqps_args: &[&str],
    args: &[&str],
) -> (Option<i32>, String, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut all = vec![
        "run",
        "--suite",
        "sysbench",
        "--script",
        script.to_str().unwrap(),
        "--results",
        dir.path().to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--busy-threshold",
        "100",
    ];
    all.extend_from_slice(rqps_args);
    all.push("--");
    all.extend_from_slice(args);
    let o = rqps(&all);
    let doc = if json.exists() {
        read_json(&json)
    } else {
        Value::Null
    };
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        doc,
    )
}

/// sysbench's reports of a script, made of rqps's figures: `--report-interval`
/// lines in sysbench's layout, sysbench's closing report and latency
/// histogram on request, and the report hooks called with sysbench's stat
/// fields (here through `report_csv` and `report_json`, whose JSON array
/// closes when the reporting thread's state does). A script that reaches no
/// database runs without a target.
#[test]
fn sysbench_s_reports_come_as_lines_hooks_and_a_closing_report() {
    let dir = tempfile::tempdir().unwrap();
    let sleepy =
        "ffi.cdef[[int usleep(unsigned int);]]\nfunction event()\n  ffi.C.usleep(2000)\nend\n";
    let plain = write(dir.path(), "plain.lua", sleepy);
    let hooks = write(
        dir.path(),
        "hooks.lua",
        &format!(
            "{sleepy}sysbench.hooks.report_intermediate = sysbench.report_csv\n\
             sysbench.hooks.report_cumulative = sysbench.report_json\n"
        ),
    );
    // Two runs of two seconds that mostly sleep: side by side.
    let (first, second) = std::thread::scope(|s| {
        let a = s.spawn(|| {
            run_plain(
                &plain,
                &["--sysbench-report"],
                &["--time=2", "--report-interval=1", "--histogram=on", "run"],
            )
        });
        let b = s.spawn(|| run_plain(&hooks, &[], &["--time=2", "--report-interval=1", "run"]));
        (a.join().unwrap(), b.join().unwrap())
    });
    let (code, out, err, doc) = first;
    assert_eq!(code, Some(0), "{out}{err}");
    let t = &doc["tests"][0];
    let line = out
        .lines()
        .find(|l| l.starts_with("[ 1s ] thds: 1 tps: "))
        .unwrap_or_else(|| panic!("no [ 1s ] line: {out}"));
    assert!(
        line.contains(" qps: 0.00 (r/w/o: 0.00/0.00/0.00) lat (ms,95%): ")
            && line.ends_with(" err/s: 0.00 reconn/s: 0.00"),
        "{line}"
    );
    assert!(!out.contains("[ 2s ]"), "no report at the end: {out}");
    for want in [
        "Latency histogram (values are in milliseconds)",
        "SQL statistics:",
        &format!("    total number of events:              {}", t["events"]),
        "         95th percentile: ",
        "Threads fairness:",
    ] {
        assert!(out.contains(want), "{want:?} in {out}");
    }

    let (code, out, err, doc) = second;
    assert_eq!(code, Some(0), "{out}{err}");
    let csv: Vec<&str> = out.lines().filter(|l| l.starts_with("1,1,")).collect();
    assert_eq!(csv.len(), 1, "{out}");
    assert_eq!(csv[0].split(',').count(), 10, "{out}");
    // The cumulative report: the test's own figures, no thread running.
    let at = out.find('[').unwrap_or_else(|| panic!("no JSON: {out}"));
    let v: Value = serde_json::Deserializer::from_str(&out[at..])
        .into_iter()
        .next()
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}: {out}"));
    let t = &doc["tests"][0];
    assert_eq!(v[0]["threads"], 0, "{out}");
    let tps = v[0]["tps"].as_f64().unwrap();
    assert!((tps - t["tps"].as_f64().unwrap()).abs() < 0.01, "{v} {t}");
}

/// sysbench's C API as scripts reach it through `ffi`: the types
/// `sysbench.sql` declares are there before the script (sysbench-tpcc
/// declares `sb_counter_inc` with `sb_counter_type`), `sb_counter_inc`
/// counts into rqps's figures, `uniform_uint64` is a 64-bit value that C
/// prints whole, and `sysbench.histogram` draws sysbench's histogram.
#[test]
fn sysbench_s_c_functions_count_into_rqps_s_figures() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "ffi.lua",
        "ffi.cdef[[\nvoid sb_counter_inc(int, sb_counter_type);\nint printf(const char *, ...);\n]]\n\
         function thread_init()\n  local v = sysbench.rand.uniform_uint64()\n  \
         ffi.C.printf('u64 %llu %s\\n', v, tostring(v))\n  \
         local h = sysbench.histogram.new(1000, 1, 10)\n  h:update(1)\n  h:update(2)\n  h:print()\nend\n\
         function event()\n  ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR)\n  \
         ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_READ)\n  \
         ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_READ)\nend\n",
    );
    let (code, out, err, doc) = run_plain(&script, &["--read-secs", "0.5"], &["run"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let t = &doc["tests"][0];
    let events = t["events"].as_u64().unwrap();
    assert!(events > 0, "{t}");
    // Each event counted one error and two reads (the event the deadline
    // ended counted its own too: at most one more).
    let (errors, reads) = (t["errors"].as_u64().unwrap(), t["reads"].as_u64().unwrap());
    assert!((events..=events + 1).contains(&errors), "{t}");
    assert!((2 * events..=2 * events + 2).contains(&reads), "{t}");
    let u64_line = out.lines().find(|l| l.starts_with("u64 ")).unwrap();
    let words: Vec<&str> = u64_line.split(' ').collect();
    assert_eq!(format!("{}ULL", words[1]), words[2], "{u64_line}");
    assert_ne!(words[1], "0", "{u64_line}");
    assert!(out.contains("       2.001 |"), "{out}");
}

/// A script is bounded where sysbench is not, each time with a message that
/// names what was stopped: `os.exit` fails the test (stored, exit 1), a Lua
/// state that outgrows `--script-memory` fails it, and an event that
/// returns a stop value at once ends its thread with nothing counted and
/// the test ok, as in sysbench.
#[test]
fn os_exit_memory_and_a_stop_value_end_the_test_as_they_should() {
    let dir = tempfile::tempdir().unwrap();
    let exit = write(
        dir.path(),
        "exit.lua",
        "function event()\n  os.exit(0)\nend\n",
    );
    let (code, out, err, doc) = run_plain(&exit, &["--read-secs", "0.5"], &["run"]);
    assert_eq!(code, Some(1), "{out}{err}");
    let t = &doc["tests"][0];
    assert_eq!(t["status"], "failed", "{t}");
    assert!(t["reason"].as_str().unwrap().contains("os.exit(0)"), "{t}");
    let grow = write(
        dir.path(),
        "grow.lua",
        "t = {}\nfunction event()\n  for i = 1, 10000 do t[#t + 1] = {i} end\nend\n",
    );
    let (code, _, err, doc) = run_plain(&grow, &["--script-memory", "16"], &["--time=3", "run"]);
    assert_eq!(code, Some(1), "{err}");
    let reason = doc["tests"][0]["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("event() ran out of memory") && reason.contains("--script-memory 16 MiB"),
        "{reason}"
    );
    let stop = write(
        dir.path(),
        "stop.lua",
        "function event()\n  return true\nend\n",
    );
    let (code, out, err, doc) = run_plain(&stop, &["--read-secs", "0.5"], &["run"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(doc["tests"][0]["status"], "ok");
    assert_eq!(doc["tests"][0]["events"], 0);
}

/// A runaway script ends: an event looping in compiled code (the JIT is on,
/// as in sysbench, so no hook can stop it) ends the run after the event
/// grace with a message that names the thread; an endless `thread_init`
/// is stopped at the start-up bound and named; so is an endless top level,
/// refused before anything is stored. The three run at once.
#[test]
fn a_runaway_event_thread_init_or_top_level_ends_and_says_which() {
    let dir = tempfile::tempdir().unwrap();
    let runaway = write(
        dir.path(),
        "runaway.lua",
        "function event()\n  local x = 0\n  while true do x = x + 1 end\nend\n",
    );
    let init = write(
        dir.path(),
        "init.lua",
        "function thread_init()\n  while true do end\nend\nfunction event() end\n",
    );
    let top = write(
        dir.path(),
        "top.lua",
        "while true do end\nfunction event() end\n",
    );
    let t0 = std::time::Instant::now();
    let (a, b, c) = std::thread::scope(|s| {
        let a = s.spawn(|| run_plain(&runaway, &["--read-secs", "0.3"], &["run"]));
        let b = s.spawn(|| run_plain(&init, &["--read-secs", "0.3"], &["run"]));
        let c = s.spawn(|| refused(&top, &["run"]));
        (a.join().unwrap(), b.join().unwrap(), c.join().unwrap())
    });
    assert!(t0.elapsed().as_secs() < 30, "took {:?}", t0.elapsed());
    let (code, _, err, _) = a;
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("event() of thread 0 still runs") && err.contains("ends the run"),
        "{err}"
    );
    let (code, _, err, doc) = b;
    assert_eq!(code, Some(1), "{err}");
    let reason = doc["tests"][0]["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("thread_init() was stopped after 5 s"),
        "{reason}"
    );
    assert!(
        c.contains("the script's top level was stopped after 5 s"),
        "{c}"
    );
}

/// PostgreSQL's serialization failures (and deadlocks) restart the event,
/// as sysbench's pgsql driver has them, counted as errors, with the
/// SQLSTATE in the error the script sees (`sql_state`, `sql_errno` 0):
/// four threads update one row under REPEATABLE READ. A FLOAT parameter
/// binds to a float column.
#[test]
fn postgresql_serialization_failures_restart_the_event_with_their_sqlstate() {
    if !server_available(PG) {
        return;
    }
    let (held, url) = server_with_database(PG, "serial");
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "serial.lua",
        "function prepare()\n  local con = sysbench.sql.driver():connect()\n  \
         con:query('CREATE TABLE hot (id INT PRIMARY KEY, v INT)')\n  \
         con:query('INSERT INTO hot VALUES (1, 0)')\nend\n\
         function cleanup()\n  sysbench.sql.driver():connect():query('DROP TABLE hot')\nend\n\
         function thread_init()\n  con = sysbench.sql.driver():connect()\n  \
         if sysbench.tid == 0 then\n    con:query('CREATE TEMPORARY TABLE f (x FLOAT)')\n    \
         local st = con:prepare('INSERT INTO f VALUES (?)')\n    \
         local p = st:bind_create(sysbench.sql.type.FLOAT)\n    st:bind_param(p)\n    \
         p:set(2.5)\n    st:execute()\n    print('float ' .. con:query_row('SELECT x FROM f'))\n  \
         end\nend\n\
         function event()\n  con:query('BEGIN ISOLATION LEVEL REPEATABLE READ')\n  \
         con:query('SELECT v FROM hot WHERE id = 1')\n  \
         con:query('UPDATE hot SET v = v + 1 WHERE id = 1')\n  con:query('COMMIT')\nend\n\
         function sysbench.hooks.before_restart_event(e)\n  \
         if not said then print(string.format('restart errno=%d state=%s', e.sql_errno, e.sql_state)) said = true end\nend\n",
    );
    let (ok, out, doc) = run_script_on(
        held.server,
        &url,
        &script,
        &["--threads=4", "--time=2", "prepare", "run", "cleanup"],
    );
    assert!(ok, "{out}");
    let t = &doc["tests"][0];
    assert_eq!(t["status"], "ok", "{t}");
    assert!(t["errors"].as_u64().unwrap() > 0, "{t}");
    assert!(out.contains("restart errno=0 state=40001"), "{out}");
    assert!(out.contains("float 2.5"), "{out}");
}

/// A directory of third-party scripts named by `var`, or a skip that says
/// how to get them.
fn third_party(var: &str, what: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(d) if Path::new(&d).is_dir() => Some(PathBuf::from(d)),
        _ => {
            eprintln!(
                "skipping: {what} are not in the repository (GPL); set {var} to a copy \
                 (docs/suites/sysbench.md, \"Checked with the tools themselves\")"
            );
            None
        }
    }
}

/// sysbench-tpcc (Percona-Lab) unchanged: prepare, run with
/// `--report-interval=1` (its report_intermediate hook calls
/// `sysbench.report_default`), its own `check` on rqps's data, and
/// cleanup, on MariaDB and PostgreSQL.
#[test]
fn sysbench_tpcc_runs_unchanged_with_its_check_on_mariadb_and_postgresql() {
    let Some(dir) = third_party("RQPS_SYSBENCH_TPCC", "sysbench-tpcc's scripts") else {
        return;
    };
    let secs = std::env::var("RQPS_SYSBENCH_TPCC_SECS").unwrap_or_else(|_| "5".into());
    for kind in [MARIADB, PG] {
        if !server_available(kind) {
            continue;
        }
        let (held, url) = server_with_database(kind, "tpcc");
        let time = format!("--time={secs}");
        let (ok, out, doc) = run_script_on(
            held.server,
            &url,
            &dir.join("tpcc.lua"),
            &[
                "--threads=2",
                "--tables=1",
                "--scale=1",
                &time,
                "--report-interval=1",
                "prepare",
                "run",
                "check",
                "cleanup",
            ],
        );
        assert!(ok, "{kind}: {out}");
        assert_eq!(doc["tests"][0]["status"], "ok", "{kind}: {out}");
        assert!(out.contains("[ 1s ] thds: 2 tps: "), "{kind}: {out}");
        assert_eq!(out.matches("PASSED").count(), 10, "{kind}: {out}");
        assert!(!out.contains("FAILED"), "{kind}: {out}");
    }
}

/// The extra scripts of Mark Callaghan's sysbench fork (branch 1.0), unchanged:
/// prepare, run and cleanup on MariaDB.
#[test]
fn the_sysbench_fork_s_extra_scripts_run_unchanged_on_mariadb() {
    let Some(dir) = third_party("RQPS_SYSBENCH_FORK", "the sysbench fork's scripts") else {
        return;
    };
    if !server_available(MARIADB) {
        return;
    }
    let (held, url) = server_with_database(MARIADB, "fork");
    // Its eight scripts beyond sysbench's (with its own oltp_common.lua
    // beside them).
    for name in [
        "oltp_inlist_select",
        "oltp_inlist_update",
        "oltp_points_covered",
        "oltp_range_covered",
        "oltp_read_only_count",
        "oltp_scan",
        "oltp_update_index_rl",
        "oltp_update_rate",
    ] {
        let script = dir.join(format!("{name}.lua"));
        let (ok, out, doc) = run_script_on(
            held.server,
            &url,
            &script,
            &["--table-size=100", "--time=1", "prepare", "run", "cleanup"],
        );
        assert!(out.contains("Dropping table 'sbtest1'"), "{name}: {out}");
        if name == "oltp_update_index_rl" {
            // It calls oltp_common's local get_id(): sysbench 1.0.20 fails
            // at its first event with the same words.
            assert!(!ok, "{name}: {out}");
            assert!(
                out.contains("attempt to call global 'get_id' (a nil value)"),
                "{name}: {out}"
            );
            continue;
        }
        assert!(ok, "{name}: {out}");
        assert_eq!(doc["tests"][0]["status"], "ok", "{name}: {out}");
        assert!(
            doc["tests"][0]["events"].as_u64().unwrap() > 0,
            "{name}: {out}"
        );
    }
}
