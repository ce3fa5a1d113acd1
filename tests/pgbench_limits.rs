//! pgbench scripts as a careless or hostile user gives them (issue 40): a
//! script file that is not a regular file, too large or another user's
//! link in a shared directory is refused before anything runs; the largest
//! scripts rqps accepts give results its own readers read back; `\sleep`
//! ends at the test's deadline and at the first SIGTERM; a script that
//! leaves its transaction open aborts the client, with its file and line,
//! and two such clients do not wait on each other until a timeout.
//!
//! Each child process runs under a deadline of its own (killed past it), so
//! that a hang fails the test instead of stalling the suite.

mod common;
use common::{server_available, text};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rqps::engine::server::{Recipe, Server, ServerSpec};

static PG: Recipe = &rqps::engine::postgres::server::RECIPE;

/// Runs rqps with `args`, killed after `secs`; returns its output and how
/// long it ran.
fn bounded(args: &[&str], secs: u64) -> (Output, Duration) {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(args)
        // Each message whole, as the checks read it (tests/help.rs checks
        // that a run's lines wrap at 120 columns without it).
        .env("COLUMNS", "1000")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = start + Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    (o, start.elapsed())
}

/// `rqps run --suite pgbench` on `target` with `extra`, results under `dir`.
fn run_args<'a>(target: &'a str, dir: &'a Path, extra: &[&'a str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "run",
        "--suite",
        "pgbench",
        "--profile",
        "ci",
        "--target",
        target,
        "--results",
        dir.join("r").to_str().unwrap(),
        "--busy-threshold",
        "100",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn run(target: &str, dir: &Path, extra: &[&str], secs: u64) -> (Output, Duration) {
    let a = run_args(target, dir, extra);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    bounded(&a, secs)
}

/// Exit 2 and one line on stderr that contains `says`.
fn refused(o: &Output, says: &str, what: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{what}: {}", text(o));
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    assert!(err.contains(says), "{what}: {err}");
}

#[test]
fn script_files_that_are_not_regular_files_or_too_large_are_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", d.path().join("x.db").display());
    // A FIFO nobody writes to: it used to hang the run before it started.
    let fifo = d.path().join("fifo.sql");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let big = d.path().join("big.sql");
    std::fs::write(&big, "SELECT 1;\n".repeat((1 << 20) / 10 + 1)).unwrap();
    for (path, says) in [
        (fifo.to_str().unwrap(), "is not a regular file"),
        // Read until memory ran out before.
        ("/dev/zero", "is not a regular file"),
        (big.to_str().unwrap(), "larger than 1 MiB, the limit"),
        (d.path().to_str().unwrap(), "is a directory"),
    ] {
        for option in ["--script", "--init-script"] {
            let (o, took) = run(&target, d.path(), &[option, path], 30);
            refused(&o, &format!("{option} {path}: cannot read it ("), path);
            assert!(text(&o).contains(says), "{path}: {}", text(&o));
            assert!(took < Duration::from_secs(20), "{path} took {took:?}");
        }
    }
    assert!(!d.path().join("r").exists(), "nothing ran");
    // 129 scripts: pgbench's limit is 128.
    let many: Vec<&str> = std::iter::repeat_n(["--builtin", "select-only"], 129)
        .flatten()
        .collect();
    let (o, _) = run(&target, d.path(), &many, 30);
    refused(&o, "129 scripts given: at most 128", "129 scripts");
}

#[test]
fn a_nul_or_a_byte_that_is_not_utf8_in_a_script_is_refused_with_file_and_line_on_every_engine() {
    let d = tempfile::tempdir().unwrap();
    // SQLite used to run `SELECT 1` and count the statement after the NUL
    // as run though it never ran: the test was `ok`.
    let nul = d.path().join("nul.sql");
    std::fs::write(&nul, "SELECT 1;\n\0SELECT * FROM no_such_table;\n").unwrap();
    let latin1 = d.path().join("latin1.sql");
    std::fs::write(&latin1, b"SELECT 1;\nSELECT 2;\nSELECT 'caf\xe9';\n").unwrap();
    let sqlite = format!("sqlite:{}", d.path().join("x.db").display());
    // Refused as the file is read, before any connection: the same for a
    // PostgreSQL or MySQL URL on a port where nothing listens.
    for target in [
        sqlite.as_str(),
        "postgres://u@127.0.0.1:1/db",
        "mysql://u@127.0.0.1:1/db",
    ] {
        for option in ["--script", "--init-script"] {
            let (o, took) = run(target, d.path(), &[option, nul.to_str().unwrap()], 30);
            refused(
                &o,
                &format!("{}:2: a NUL byte (\\0) at column 1", nul.display()),
                target,
            );
            assert!(took < Duration::from_secs(20), "{target} took {took:?}");
            let (o, _) = run(target, d.path(), &[option, latin1.to_str().unwrap()], 30);
            refused(&o, "line 3 is not UTF-8 text", target);
        }
    }
    assert!(!d.path().join("r").exists(), "nothing ran");
}

/// `lchown` (the link itself, not its target).
fn lchown(p: &Path, uid: u32) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::lchown(c.as_ptr(), uid, uid) }, 0, "lchown");
}

#[test]
fn a_script_through_another_users_link_in_a_shared_directory_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid touches no memory.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping: making a link of another user needs root");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", d.path().join("x.db").display());
    let shared = d.path().join("tmp");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    // Another user's link to a script: the kernel's protected_symlinks
    // would refuse to follow it for root; so does rqps.
    let real = d.path().join("real.sql");
    std::fs::write(&real, "SELECT 1;\n").unwrap();
    let link = shared.join("s.sql");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    lchown(&link, 65534);
    let (o, _) = run(&target, d.path(), &["--script", link.to_str().unwrap()], 30);
    refused(
        &o,
        "is a symbolic link of another user (uid 65534) in the shared directory",
        "their link",
    );
    assert!(
        text(&o).contains("does not read through it"),
        "{}",
        text(&o)
    );
    // The user's own link there is followed.
    let mine = shared.join("mine.sql");
    std::os::unix::fs::symlink(&real, &mine).unwrap();
    let (o, _) = run(
        &target,
        d.path(),
        &[
            "--script",
            mine.to_str().unwrap(),
            "--transactions",
            "1",
            "--clients",
            "1",
            "--skip-init",
        ],
        60,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn the_largest_scripts_rqps_accepts_give_results_its_readers_read() {
    let d = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", d.path().join("x.db").display());
    // Four files of 1 MiB each, 4 MiB in all (both limits), of statements
    // whose text JSON writes 6 bytes a character (control characters): the
    // most a run stores of its scripts and of its per-statement figures.
    let line = format!("SELECT '{}';\n", "\u{1}".repeat(118));
    let n = (1 << 20) / line.len();
    let body = line.repeat(n);
    let pad = "-".repeat((1 << 20) - body.len() - 1) + "\n";
    let mut args: Vec<String> = Vec::new();
    for i in 0..4 {
        let p = d.path().join(format!("s{i}.sql"));
        std::fs::write(&p, format!("{pad}{body}")).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 1 << 20);
        args.push("--script".into());
        args.push(p.to_str().unwrap().into());
    }
    // One byte more is refused.
    let extra = d.path().join("extra.sql");
    std::fs::write(&extra, "SELECT 1;").unwrap();
    let mut over = args.clone();
    over.extend(["--script".into(), extra.to_str().unwrap().into()]);
    let over: Vec<&str> = over.iter().map(String::as_str).collect();
    let (o, _) = run(&target, d.path(), &over, 60);
    refused(&o, "at most 4 MiB", "over 4 MiB");

    args.extend(
        [
            "--transactions",
            "1",
            "--clients",
            "1",
            "--skip-init",
            "--name",
            "big",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (o, _) = run(&target, d.path(), &a, 300);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let results = d.path().join("r");
    let run_dir = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let limit = rqps::results::MAX_RESULT_FILE_BYTES;
    let mut files = vec![run_dir.join("run.json")];
    files.extend(
        std::fs::read_dir(run_dir.join("tests"))
            .unwrap()
            .map(|e| e.unwrap().path()),
    );
    for f in &files {
        let len = std::fs::metadata(f).unwrap().len();
        assert!(len < limit / 2, "{}: {len} bytes", f.display());
    }
    // rqps's own readers take it ("no readable runs" before).
    for cmd in ["show", "runs"] {
        let (o, _) = bounded(&[cmd, "--results", results.to_str().unwrap()], 120);
        assert_eq!(o.status.code(), Some(0), "{cmd}: {}", text(&o));
        assert!(text(&o).contains("big"), "{cmd}: {}", text(&o));
    }
    let main = rqps::results::read_run(&run_dir).unwrap();
    let scripts = main
        .tests
        .iter()
        .find(|t| t.test == "pgbench")
        .unwrap()
        .detail["pgbench"]["scripts"]
        .as_array()
        .unwrap()
        .clone();
    let kept: usize = scripts
        .iter()
        .map(|s| s["statements"].as_array().unwrap().len())
        .sum();
    let left: u64 = scripts
        .iter()
        .map(|s| s["statements_not_stored"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!((kept, left as usize), (2000, 4 * n - 2000));
}

#[test]
fn sleep_ends_at_the_deadline_and_at_the_first_sigterm() {
    let d = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", d.path().join("x.db").display());
    let script = d.path().join("sleepy.sql");
    // Client 0 sleeps a minute in its first transaction; client 1 never
    // sleeps, so the test has work to measure (a test with none is failed,
    // whatever ended it: harness/status.rs).
    std::fs::write(
        &script,
        "SELECT 1;\n\\if :client_id = 0\n\\sleep 60\n\\endif\nSELECT 2;\n",
    )
    .unwrap();
    let s = script.to_str().unwrap();
    // The test's end: --time 1, though the sleep asks for a minute. The
    // transaction it cut is not counted.
    let (o, took) = run(
        &target,
        d.path(),
        &[
            "--script",
            s,
            "--time",
            "1",
            "--clients",
            "2",
            "--skip-init",
        ],
        50,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(took < Duration::from_secs(30), "took {took:?}");
    // The first SIGTERM.
    let a = run_args(
        &target,
        d.path(),
        &[
            "--script",
            s,
            "--time",
            "120",
            "--clients",
            "2",
            "--skip-init",
            // Another experiment than the run above (--time): its own name.
            "--name",
            "sigterm",
        ],
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(&a)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Once the test is under way (its clients asleep).
    std::thread::sleep(Duration::from_secs(3));
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let sent = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if sent.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let status = status.expect("still asleep 30 s after SIGTERM");
    assert_eq!(status.code(), Some(143));
}

/// `BEGIN` and a statement, never a COMMIT, by 2 clients: each client
/// aborts at the end of its first transaction, naming the file and line.
fn open_transaction_aborts(target: &str, dir: &Path, write: &str, init: &[&str]) {
    let script = dir.join("open.sql");
    std::fs::write(&script, format!("BEGIN;\n{write};\n")).unwrap();
    let mut extra = vec![
        "--script",
        script.to_str().unwrap(),
        "--transactions",
        "10",
        "--clients",
        "2",
    ];
    extra.extend(init);
    let (o, took) = run(target, dir, &extra, 120);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("open.sql:2: client ")
            && out
                .contains("aborted: end of script reached without completing the last transaction"),
        "{out}"
    );
    assert!(took < Duration::from_secs(60), "took {took:?}: {out}");
}

#[test]
fn a_script_that_leaves_its_transaction_open_aborts_the_client() {
    let d = tempfile::tempdir().unwrap();
    let init = d.path().join("init.sql");
    std::fs::write(
        &init,
        "DROP TABLE IF EXISTS rqps_open;\n\
         CREATE TABLE rqps_open (id int PRIMARY KEY, n int NOT NULL);\n\
         INSERT INTO rqps_open VALUES (1, 0);\n",
    )
    .unwrap();
    let init = init.to_str().unwrap().to_string();
    let write = "UPDATE rqps_open SET n = n + 1 WHERE id = 1";
    let target = format!("sqlite:{}", d.path().join("x.db").display());
    open_transaction_aborts(&target, d.path(), write, &["--init-script", &init]);
    if !server_available(PG) {
        return;
    }
    // On PostgreSQL the second client waits on the first one's row lock:
    // it used to wait until the 600 s statement timeout.
    let server = Server::start(&ServerSpec::new(PG), &mut |n| eprintln!("note: {n}")).unwrap();
    open_transaction_aborts(&server.url(), d.path(), write, &["--init-script", &init]);
}
