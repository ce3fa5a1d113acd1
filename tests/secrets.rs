//! Passwords off the command line, against real throwaway MariaDB and
//! PostgreSQL servers: rqps takes the password from `MYSQL_PWD`,
//! `PGPASSWORD`, libpq's password file, `--password-file` or a matrix's
//! `password_file`, and it then appears in no argument list of rqps or its
//! children (`/proc/PID/cmdline`, read while rqps runs), in no output and in
//! no file of the results directory. A control run with the password in the
//! URL shows that the argument-list check sees a password where there is one.
//! Also: MariaDB's ed25519 plugin, with the ci profile.
//!
//! Without the server binaries these tests print why and pass, unless
//! `RQPS_REQUIRE_SERVERS=1`.

mod common;
use common::server_available;
use std::collections::BTreeSet;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use rqps::engine::server::{Recipe, Server, ServerSpec};

static PG: Recipe = &rqps::engine::postgres::server::RECIPE;
static MARIADB: Recipe = &rqps::engine::mysql::server::RECIPE;

const PW: &str = "Kx7-secret-Pw-41";

fn start(kind: Recipe) -> Server {
    Server::start(&ServerSpec::new(kind), &mut |n| eprintln!("note: {n}"))
        .unwrap_or_else(|e| panic!("starting {kind}: {e}"))
}

/// What one watched rqps did: exit code, stdout + stderr, and every
/// argument list seen of it and its descendants while it ran.
struct Watched {
    code: Option<i32>,
    output: String,
    cmdlines: BTreeSet<String>,
}

/// The parent of `pid` from /proc/PID/stat.
fn ppid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ...": comm may hold spaces, so after the last ')'.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// `pid` and all its descendants now.
fn tree(pid: u32) -> Vec<u32> {
    let all: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| Some((p, ppid(p)?)))
        .collect();
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        out.extend(all.iter().filter(|(_, pp)| *pp == parent).map(|(p, _)| *p));
        i += 1;
    }
    out
}

/// Runs rqps with `args` and `env`, reading the argument lists of it and its
/// children every 10 ms until it ends.
fn watch(args: &[&str], env: &[(&str, &str)]) -> Watched {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rqps"));
    cmd.args(args)
        .env_remove("MYSQL_PWD")
        .env_remove("PGPASSWORD")
        .env_remove("PGPASSFILE")
        .env_remove("RQPS_PASSWORD")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut pipes = [
        Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ]
    .map(|mut p| {
        std::thread::spawn(move || {
            let mut s = String::new();
            p.read_to_string(&mut s).unwrap();
            s
        })
    })
    .into_iter();
    let mut cmdlines = BTreeSet::new();
    let status = loop {
        for p in tree(child.id()) {
            if let Ok(b) = std::fs::read(format!("/proc/{p}/cmdline"))
                && !b.is_empty()
            {
                cmdlines.insert(String::from_utf8_lossy(&b).replace('\0', " "));
            }
        }
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let output = format!(
        "{}{}",
        pipes.next().unwrap().join().unwrap(),
        pipes.next().unwrap().join().unwrap()
    );
    Watched {
        code: status.code(),
        output,
        cmdlines,
    }
}

/// Every file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files
}

/// Where `secret` shows: "cmdline", "output", or a results file.
fn leaks(w: &Watched, results: &Path, secret: &str) -> Vec<String> {
    let mut out = Vec::new();
    if w.cmdlines.iter().any(|c| c.contains(secret)) {
        out.push("cmdline".to_string());
    }
    if w.output.contains(secret) {
        out.push("output".to_string());
    }
    for f in files_under(results) {
        if std::fs::read(&f)
            .unwrap()
            .windows(secret.len())
            .any(|w| w == secret.as_bytes())
        {
            out.push(f.display().to_string());
        }
    }
    out
}

/// A short sysbench run (one test) against `target` into `results`.
fn run_args<'a>(target: &'a str, results: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "--target",
        target,
        "--profile",
        "ci",
        "--tests",
        "point-query",
        "--read-secs",
        "0.3",
        "--warmup-secs",
        "0",
        "--results",
        results,
    ]
}

fn private_file(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    p
}

/// Runs `args`; it must succeed and `PW` must show nowhere.
fn assert_hidden(what: &str, args: &[&str], env: &[(&str, &str)], results: &Path) {
    let w = watch(args, env);
    assert_eq!(
        w.code,
        Some(0),
        "{what}: {}",
        w.output.replace(PW, "<password>")
    );
    assert!(
        w.cmdlines.iter().any(|c| c.contains("--target")),
        "{what}: the watcher saw rqps's arguments: {:?}",
        w.cmdlines
    );
    assert_eq!(leaks(&w, results, PW), Vec::<String>::new(), "{what}");
}

/// The control: with the password in the URL, the watcher sees it in rqps's
/// argument list (so a leak would not go unseen), and nowhere else.
fn control(url_with_password: &str, results: &Path) {
    let w = watch(&run_args(url_with_password, results.to_str().unwrap()), &[]);
    assert_eq!(w.code, Some(0), "{}", w.output.replace(PW, "<password>"));
    assert_eq!(leaks(&w, results, PW), ["cmdline"]);
}

fn mariadb_user(server: &Server, create: &str) {
    use mysql::prelude::Queryable;
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&server.url()).unwrap()).unwrap();
    for sql in create.split(';').filter(|s| !s.trim().is_empty()) {
        c.query_drop(sql).unwrap();
    }
}

#[test]
fn mariadb_passwords_from_mysql_pwd_and_a_password_file_show_nowhere() {
    if !server_available(MARIADB) {
        return;
    }
    let server = start(MARIADB);
    mariadb_user(
        &server,
        &format!(
            "CREATE USER 'bench'@'%' IDENTIFIED BY '{PW}'; GRANT ALL ON sbtest.* TO 'bench'@'%'"
        ),
    );
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("r");
    let r = results.to_str().unwrap();
    let url = format!("mysql://bench@127.0.0.1:{}/sbtest", server.port());
    assert_hidden(
        "MYSQL_PWD",
        &run_args(&url, r),
        &[("MYSQL_PWD", PW)],
        &results,
    );
    let file = private_file(d.path(), "pw", &format!("{PW}\n"), 0o600);
    let mut args = run_args(&url, r);
    args.extend(["--password-file", file.to_str().unwrap()]);
    assert_hidden("--password-file", &args, &[], &results);
    // The file outranks MYSQL_PWD.
    assert_hidden(
        "--password-file",
        &args,
        &[("MYSQL_PWD", "wrong")],
        &results,
    );
    // A file others may read: refused, exit 2, saying how to fix it.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let w = watch(&args, &[]);
    assert_eq!(w.code, Some(2), "{}", w.output);
    assert!(w.output.contains("chmod 600"), "{}", w.output);
    assert!(!w.output.contains(PW));
    // No password at all: the server refuses, and says so.
    let w = watch(&run_args(&url, r), &[]);
    assert_eq!(w.code, Some(2), "{}", w.output);
    assert!(w.output.contains("Access denied"), "{}", w.output);
    control(
        &format!("mysql://bench:{PW}@127.0.0.1:{}/sbtest", server.port()),
        &d.path().join("control"),
    );
    server.stop().unwrap();
}

#[test]
fn postgres_passwords_from_pgpassword_pgpass_and_a_password_file_show_nowhere() {
    if !server_available(PG) {
        return;
    }
    let server = start(PG);
    let mut c = postgres::Client::connect(
        &format!(
            "host=127.0.0.1 port={} user=postgres password={} dbname=sbtest",
            server.port(),
            server.password()
        ),
        postgres::NoTls,
    )
    .unwrap();
    c.batch_execute(&format!(
        "CREATE USER bench PASSWORD '{PW}'; GRANT ALL ON SCHEMA public TO bench; \
         ALTER DATABASE sbtest OWNER TO bench"
    ))
    .unwrap();
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("r");
    let r = results.to_str().unwrap();
    let url = format!("postgres://bench@127.0.0.1:{}/sbtest", server.port());
    assert_hidden(
        "PGPASSWORD",
        &run_args(&url, r),
        &[("PGPASSWORD", PW)],
        &results,
    );
    let pgpass = private_file(
        d.path(),
        "pgpass",
        &format!(
            "127.0.0.1:{}:other:bench:wrong\n*:{}:sbtest:bench:{PW}\n",
            server.port(),
            server.port()
        ),
        0o600,
    );
    let pgpass_env = [("PGPASSFILE", pgpass.to_str().unwrap())];
    assert_hidden("PGPASSFILE", &run_args(&url, r), &pgpass_env, &results);
    // A pgpass file others may read is ignored with a warning, as by libpq.
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let w = watch(&run_args(&url, r), &pgpass_env);
    assert_eq!(w.code, Some(2), "{}", w.output);
    assert!(
        w.output.contains("is ignored") && w.output.contains("chmod 600"),
        "{}",
        w.output
    );
    let file = private_file(d.path(), "pw", &format!("{PW}\n"), 0o600);
    let mut args = run_args(&url, r);
    args.extend(["--password-file", file.to_str().unwrap()]);
    assert_hidden(
        "--password-file",
        &args,
        &[("PGPASSWORD", "wrong")],
        &results,
    );
    control(
        &format!("postgres://bench:{PW}@127.0.0.1:{}/sbtest", server.port()),
        &d.path().join("control"),
    );
    server.stop().unwrap();
}

#[test]
fn a_matrix_password_file_shows_nowhere() {
    if !server_available(PG) {
        return;
    }
    let server = start(PG);
    let mut c = postgres::Client::connect(
        &format!(
            "host=127.0.0.1 port={} user=postgres password={} dbname=sbtest",
            server.port(),
            server.password()
        ),
        postgres::NoTls,
    )
    .unwrap();
    c.batch_execute(&format!(
        "CREATE USER bench PASSWORD '{PW}'; GRANT ALL ON SCHEMA public TO bench; \
         ALTER DATABASE sbtest OWNER TO bench"
    ))
    .unwrap();
    let d = tempfile::tempdir().unwrap();
    private_file(d.path(), "pw", &format!("{PW}\n"), 0o600);
    let matrix = d.path().join("m.toml");
    std::fs::write(
        &matrix,
        format!(
            "[defaults]\nprofile = \"ci\"\ntests = [\"point-query\"]\nread_secs = 0.3\n\
             warmup_secs = 0\npassword_file = \"pw\"\n\
             [[target]]\nname = \"pg\"\nurl = \"postgres://bench@127.0.0.1:{}/sbtest\"\n",
            server.port()
        ),
    )
    .unwrap();
    let results = d.path().join("r");
    let w = watch(
        &[
            "matrix",
            matrix.to_str().unwrap(),
            "--results",
            results.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(w.code, Some(0), "{}", w.output.replace(PW, "<password>"));
    assert!(w.output.contains("--password-file"), "{}", w.output);
    assert_eq!(leaks(&w, &results, PW), Vec::<String>::new());
    // A password file others may read stops the matrix before it runs.
    std::fs::set_permissions(d.path().join("pw"), std::fs::Permissions::from_mode(0o640)).unwrap();
    let w = watch(&["matrix", matrix.to_str().unwrap(), "--dry-run"], &[]);
    assert_eq!(w.code, Some(2), "{}", w.output);
    assert!(
        w.output.contains("password_file") && w.output.contains("chmod 600"),
        "{}",
        w.output
    );
    server.stop().unwrap();
}

#[test]
fn mariadb_ed25519_accounts_run_a_write_test_the_settle_step_and_a_read_test() {
    if !server_available(MARIADB) {
        return;
    }
    let server = start(MARIADB);
    mariadb_user(
        &server,
        &format!(
            "INSTALL SONAME 'auth_ed25519'; \
             CREATE USER 'ed'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('{PW}'); \
             GRANT ALL ON sbtest.* TO 'ed'@'%'"
        ),
    );
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("r");
    let url = format!("mysql://ed@127.0.0.1:{}/sbtest", server.port());
    let w = watch(
        &[
            "run",
            "--target",
            &url,
            "--profile",
            "ci",
            // Every connection logs in through ed25519, whatever it runs: a
            // transaction that writes, the settle step after it (its ANALYZE
            // and FLUSH with the account's grants) and a read. The whole
            // profile's 32 tests (~55 s on a busy machine) logged in the same way.
            "--tests",
            "read-write_range=100,point-query",
            "--read-secs",
            "0.3",
            "--write-secs",
            "0.3",
            "--warmup-secs",
            "0",
            "--results",
            results.to_str().unwrap(),
            "-q",
        ],
        &[("MYSQL_PWD", PW)],
    );
    assert_eq!(w.code, Some(0), "{}", w.output.replace(PW, "<password>"));
    assert_eq!(leaks(&w, &results, PW), Vec::<String>::new());
    // A wrong password: refused, naming the plugin.
    let w = watch(
        &run_args(&url, results.to_str().unwrap()),
        &[("MYSQL_PWD", "not-the-password")],
    );
    assert_eq!(w.code, Some(2), "{}", w.output);
    assert!(
        w.output.contains("Access denied") && w.output.contains("client_ed25519"),
        "{}",
        w.output
    );
    server.stop().unwrap();
}

/// rqps with `args`, killed after 60 s: exit code and stderr.
fn stderr_of(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(args)
        .env_remove("PGPASSWORD")
        .env_remove("MYSQL_PWD")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let o = child.wait_with_output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_password_in_a_command_line_url_is_warned_once_unless_allowed() {
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("r");
    let results = results.to_str().unwrap();
    let warning = "a password, which every local user can read in the process list";
    // Nothing listens on port 1: the warning comes before the connection.
    let with = format!("postgres://u:{PW}@127.0.0.1:1/db");
    let param = format!("mysql://u@127.0.0.1:1/db?password={PW}");
    for url in [with.as_str(), param.as_str()] {
        let (_, err) = stderr_of(&run_args(url, results));
        assert_eq!(err.matches(warning).count(), 1, "{url}: {err}");
        assert!(err.contains("the --target URL holds") && err.contains("--password-file"));
        assert!(!err.contains(PW), "{err}");
        let mut allowed = run_args(url, results);
        allowed.push("--allow-password-in-url");
        let (_, err) = stderr_of(&allowed);
        assert!(!err.contains(warning), "{url}: {err}");
    }
    let (_, err) = stderr_of(&run_args("postgres://u@127.0.0.1:1/db", results));
    assert!(!err.contains(warning), "{err}");
    // compat: one warning for the reference and the targets together.
    let compat = |extra: &[&str]| {
        let mut a = vec![
            "compat",
            "--reference",
            &with,
            "--target",
            &param,
            "--target",
            &with,
            "--results",
            results,
            "--suites",
            "select1",
        ];
        a.extend(extra);
        stderr_of(&a)
    };
    let (_, err) = compat(&[]);
    assert_eq!(err.matches(warning).count(), 1, "{err}");
    assert!(
        err.contains("the --reference and --target URLs hold"),
        "{err}"
    );
    assert!(!err.contains(PW), "{err}");
    let (_, err) = compat(&["--allow-password-in-url"]);
    assert!(!err.contains(warning), "{err}");
}
