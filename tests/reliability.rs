//! What rqps guarantees when its input is careless or hostile (issue 18):
//! output paths that are not plain files, the gate on failed tests, URLs
//! that never show a password, run directories that two processes cannot
//! share, and numbers and files too large to run. Through the real binary.

mod common;
use common::{rqps, text};

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::Command;

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// A short SQLite run (one test of the ci profile) with `extra` arguments.
fn short_run(results: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rqps"));
    c.args([
        "run",
        "--profile",
        "ci",
        "--tests",
        "point-query",
        "-q",
        "--results",
        results.to_str().unwrap(),
    ])
    .args(extra);
    c
}

#[test]
fn json_into_a_fifo_is_written_through_once_and_the_fifo_stays() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("run.fifo");
    mkfifo(&fifo);
    // A second name of the same FIFO, to release the reader if rqps never opens it.
    let spare = d.path().join("spare.fifo");
    std::fs::hard_link(&fifo, &spare).unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let o = short_run(&d.path().join("r"), &["--json", fifo.to_str().unwrap()])
        .output()
        .unwrap();
    {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&spare);
    }
    let got = reader.join().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo(),
        "the FIFO was replaced by a file"
    );
    let doc: serde_json::Value = serde_json::from_str(&got)
        .unwrap_or_else(|e| panic!("one JSON document through the FIFO ({e}): {got:?}"));
    assert_eq!(doc["status"], "ok");
    assert_eq!(doc["tests"].as_array().unwrap().len(), 1);
}

#[test]
fn a_fifo_where_a_pgbench_log_goes_is_refused_at_once_and_a_json_fifo_without_reader_too() {
    let d = tempfile::tempdir().unwrap();
    let prefix = d.path().join("txlog");
    // The shell makes the FIFO at PREFIX.PID, its own pid, then becomes rqps.
    let t = std::time::Instant::now();
    let o = bounded_cmd(
        Command::new("sh")
            .arg("-c")
            .arg("mkfifo \"$0.$$\" && exec \"$@\"")
            .arg(&prefix)
            .arg(env!("CARGO_BIN_EXE_rqps"))
            .args(["run", "--suite", "pgbench", "--profile", "ci", "--log"])
            .arg("--log-prefix")
            .arg(&prefix)
            .arg("--results")
            .arg(d.path().join("r")),
        30,
    );
    // Before: rqps waited in open() for a reader, deaf to SIGTERM.
    refused(&o, "is not a regular file (a FIFO", "a FIFO log file");
    assert!(t.elapsed() < std::time::Duration::from_secs(20));
    assert!(!d.path().join("r").exists(), "a run was stored");
    // A --json FIFO that nobody reads: the run is stored, the document
    // refused at once instead of a wait in open().
    let fifo = d.path().join("nobody.fifo");
    mkfifo(&fifo);
    let o = bounded_cmd(
        &mut short_run(&d.path().join("r2"), &["--json", fifo.to_str().unwrap()]),
        60,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("no process reads"), "{}", text(&o));
    // Quiet: a regular file at the log's place is written over.
    let o = bounded_cmd(
        Command::new(env!("CARGO_BIN_EXE_rqps"))
            .args(["run", "--suite", "pgbench", "--profile", "ci", "--log"])
            .args(["--time", "0.2", "--log-prefix"])
            .arg(d.path().join("plain"))
            .arg("--results")
            .arg(d.path().join("r3")),
        60,
    );
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn a_server_that_never_answers_fails_the_run_after_the_connect_timeout_its_message_names() {
    // A listener that accepts and never says a word.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in l.incoming().flatten() {
            held.push(c);
        }
    });
    let d = tempfile::tempdir().unwrap();
    for url in [
        format!("postgres://u@127.0.0.1:{port}/db?connect_timeout=3&sslmode=disable"),
        format!("mysql://u@127.0.0.1:{port}/db?connect-timeout=3&ssl-mode=DISABLED"),
    ] {
        let t = std::time::Instant::now();
        let o = bounded(
            &[
                "run",
                "--profile",
                "ci",
                "--target",
                &url,
                "--results",
                d.path().to_str().unwrap(),
            ],
            60,
        );
        let took = t.elapsed();
        refused(&o, "within the connect timeout (3 s)", &url);
        // Before: twice the timeout (the server's data directory was asked
        // for over a connection of its own first).
        assert!(
            took < std::time::Duration::from_secs(5),
            "{url}: {took:?}: {}",
            text(&o)
        );
    }
    let o = bounded(
        &[
            "run",
            "--target",
            "postgres://u@127.0.0.1:1/db?connect_timeout=0",
        ],
        60,
    );
    refused(
        &o,
        "connect_timeout=0: give whole seconds from 1 to 3600",
        "0 s",
    );
}

#[test]
fn json_through_a_symlink_lands_in_its_target_and_the_link_stays() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("out")).unwrap();
    let link = d.path().join("run.json");
    std::os::unix::fs::symlink("out/real.json", &link).unwrap();
    let o = short_run(&d.path().join("r"), &["--json", link.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced"
    );
    let doc = common::read_json(&d.path().join("out/real.json"));
    assert_eq!(doc["status"], "ok");
}

#[test]
fn report_output_replaces_a_regular_file_atomically_and_follows_a_symlink() {
    let d = tempfile::tempdir().unwrap();
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    let report = |out: &Path| {
        rqps(&[
            "report",
            "--results",
            results.to_str().unwrap(),
            "--base",
            "pg15",
            "--format",
            "csv",
            "-o",
            out.to_str().unwrap(),
        ])
    };
    // A hard link to the old file keeps the old bytes: the file was replaced,
    // not truncated and rewritten in place (which a crash would leave half done).
    let out = d.path().join("r.csv");
    std::fs::write(&out, "old").unwrap();
    let old = d.path().join("old.csv");
    std::fs::hard_link(&out, &old).unwrap();
    let o = report(&out);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "old");
    assert!(std::fs::read_to_string(&out).unwrap().contains("pg16"));
    let link = d.path().join("link.csv");
    std::os::unix::fs::symlink(&out, &link).unwrap();
    let o = report(&link);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn compare_fails_when_the_target_has_no_result_for_a_test_the_base_has() {
    let d = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    for e in std::fs::read_dir(&fixtures).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with("-pg15") || name.ends_with("-pg16") {
            copy_dir(&e.path(), &d.path().join(&name));
        }
    }
    let compare = || {
        rqps(&[
            "compare",
            "--results",
            d.path().to_str().unwrap(),
            "--base",
            "pg15",
            "--target",
            "pg16",
            "--fail-below",
            "0.5",
        ])
    };
    let o = compare();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // pg16's runs lose scan: the gate must not pass on the tests that are left.
    for e in std::fs::read_dir(d.path()).unwrap() {
        let p = e.unwrap().path().join("tests/006-scan-t1.json");
        if p.to_str().unwrap().contains("-pg16/") {
            std::fs::remove_file(p).unwrap();
        }
    }
    let o = compare();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        out.lines().any(
            |l| l.starts_with("FAIL: pg16 failed or has no result for 1 test(s)")
                && l.contains("scan t=1 (no result)")
        ),
        "{out}"
    );
}

#[test]
fn a_password_with_a_slash_or_a_question_mark_never_shows_on_the_command_line() {
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("r");
    // '/' parses (the last '@' ends the user info): the run gets as far as
    // connecting, and the refused connection names the target redacted.
    let o = short_run(
        &results,
        &["--target", "mysql://u:hunter/22@127.0.0.1:1/sbtest"],
    )
    .output()
    .unwrap();
    let all = text(&o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert!(!all.contains("hunter"), "{all}");
    assert!(all.contains("mysql://u:***@127.0.0.1:1/sbtest"), "{all}");
    // '?' cannot parse: refused with how to write it, and no part of it.
    let o = short_run(
        &results,
        &["--target", "postgres://u:hunter?22@127.0.0.1:1/sbtest"],
    )
    .output()
    .unwrap();
    let all = text(&o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert!(!all.contains("hunter") && !all.contains("22@"), "{all}");
    assert!(all.contains("%3F"), "{all}");
}

#[test]
fn a_password_with_a_slash_or_a_question_mark_never_shows_from_a_matrix_url() {
    let d = tempfile::tempdir().unwrap();
    let m = d.path().join("m.toml");
    let matrix = |url: &str| {
        std::fs::write(
            &m,
            format!("[defaults]\nprofile = \"ci\"\n[[target]]\nname = \"a\"\nurl = \"{url}\"\n"),
        )
        .unwrap();
        rqps(&[
            "matrix",
            m.to_str().unwrap(),
            "--dry-run",
            "--results",
            d.path().join("r").to_str().unwrap(),
        ])
    };
    let o = matrix("mysql://u:hunter/22@127.0.0.1:1/sbtest");
    let all = text(&o);
    assert_eq!(o.status.code(), Some(0), "{all}");
    assert!(!all.contains("hunter"), "{all}");
    assert!(
        all.contains("--target mysql://u:***@127.0.0.1:1/sbtest"),
        "{all}"
    );
    let o = matrix("mysql://u:hunter?22@127.0.0.1:1/sbtest");
    let all = text(&o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert!(!all.contains("hunter"), "{all}");
    assert!(all.contains("m.toml:5: url: "), "{all}");
}

#[test]
fn runs_started_together_never_share_a_run_directory() {
    use rqps::results::{RunDoc, Store};
    let d = tempfile::tempdir().unwrap();
    let doc: RunDoc = serde_json::from_value(serde_json::json!({
        "rqps_version": "test", "run_id": "", "name": "same", "suite": "sysbench",
        "status": "running", "started": "2026-01-01T00:00:00Z", "command_line": [],
        "target": "sqlite", "engine": {"name": "sqlite", "version": "3"},
        "params": {}, "host": {"hostname": "h", "os": "linux", "arch": "x86_64", "cpus": 1}
    }))
    .unwrap();
    // Rounds of 16 stores of one name created at once: each must get its own
    // directory (checking that a name is free and then creating it lets two
    // processes take the same one).
    for round in 0..8 {
        let root = d.path().join(format!("r{round}"));
        std::fs::create_dir(&root).unwrap();
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(16));
        let ids: Vec<String> = (0..16)
            .map(|_| {
                let (root, doc, barrier) = (root.clone(), doc.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let root = rqps::results::check_writable(&root).unwrap();
                    let s = Store::create(&root, doc, None).unwrap();
                    s.doc().run_id.clone()
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .collect();
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 16, "round {round}: {ids:?}");
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 16);
    }
}

#[test]
fn a_matrix_resumed_twice_at_once_runs_in_one_process_only() {
    let d = tempfile::tempdir().unwrap();
    let m = d.path().join("m.toml");
    std::fs::write(
        &m,
        "[defaults]\nprofile = \"ci\"\ntests = [\"point-query\"]\nread_secs = 30\n\
         [[target]]\nname = \"a\"\nengine = \"sqlite\"\n",
    )
    .unwrap();
    let results = d.path().join("r");
    let matrix = || {
        Command::new(env!("CARGO_BIN_EXE_rqps"))
            .arg("matrix")
            .arg(&m)
            .arg("--resume")
            .arg("--results")
            .arg(&results)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut first = matrix();
    let t = std::time::Instant::now();
    while std::fs::read_dir(&results)
        .map(|r| r.flatten().filter(|e| e.path().is_dir()).count())
        .unwrap_or(0)
        == 0
    {
        assert!(t.elapsed().as_secs() < 60, "the first matrix made no run");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let o = rqps(&[
        "matrix",
        m.to_str().unwrap(),
        "--resume",
        "--results",
        results.to_str().unwrap(),
    ]);
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("another rqps matrix (pid {})", first.id())),
        "{}",
        text(&o)
    );
    let runs = std::fs::read_dir(&results)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .count();
    assert_eq!(runs, 1, "the second matrix started a run");
}

/// Runs rqps with `args`, killing it after `secs` (a run that did not stop at
/// once is a failure, not a hang).
fn bounded(args: &[&str], secs: u64) -> std::process::Output {
    bounded_cmd(Command::new(env!("CARGO_BIN_EXE_rqps")).args(args), secs)
}

/// Runs `c`, killing it after `secs` (a command stuck in `open()` is a
/// failure, not a hang).
fn bounded_cmd(c: &mut Command, secs: u64) -> std::process::Output {
    let mut child = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Exit 2 and one line on stderr that contains `says`.
fn refused(o: &std::process::Output, says: &str, what: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{what}: {}", text(o));
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    assert!(err.contains(says), "{what}: {err}");
}

#[test]
fn durations_beyond_a_day_are_refused_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("r");
    for (suite, flag, v) in [
        ("sysbench", "--read-secs", "1e308"),
        ("sysbench", "--read-secs", "1e19"),
        ("sysbench", "--read-secs", "1e10"),
        ("sysbench", "--write-secs", "1e308"),
        ("sysbench", "--warmup-secs", "1e308"),
        ("sysbench", "--settle-secs", "1e308"),
        ("sysbench", "--warm-secs", "1e308"),
        ("sysbench", "--read-secs", "NaN"),
        ("ibench", "--query-secs", "1e308"),
        ("ibench", "--settle-secs", "1e10"),
        ("select1", "--secs", "1e308"),
        ("select1", "--warmup-secs", "1e19"),
    ] {
        let args = [
            "run",
            "--suite",
            suite,
            "--profile",
            "ci",
            "--results",
            results.to_str().unwrap(),
            flag,
            v,
        ];
        refused(&bounded(&args, 20), "86400", &format!("{flag} {v}"));
    }
    assert!(!results.exists(), "nothing ran");
}

#[test]
fn counts_and_repeats_over_their_limit_are_refused_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("r");
    for (suite, flag, v, says) in [
        ("sysbench", "--threads", "1,5000", "at most 4096"),
        ("sysbench", "--tables", "100000", "at most 10000"),
        (
            "sysbench",
            "--table-size",
            "99999999999999",
            "at most 10000000000",
        ),
        ("sysbench", "--repeats", "4294967296", "at most 1000"),
        ("ibench", "--clients", "1000000", "at most 4096"),
        (
            "ibench",
            "--rows-per-client",
            "1e12",
            "from 0 to 10000000000",
        ),
        ("ibench", "--rates", "100,100000000000", "at most 10000000"),
        (
            "select1",
            "--threads",
            "99999999999999999999999",
            "at most 4096",
        ),
        ("sysbench", "--busy-threshold", "1e9", "from 0 to 100"),
    ] {
        let args = [
            "run",
            "--suite",
            suite,
            "--profile",
            "ci",
            "--results",
            results.to_str().unwrap(),
            flag,
            v,
        ];
        refused(&bounded(&args, 20), says, &format!("{flag} {v}"));
    }
    assert!(!results.exists(), "nothing ran");
}

#[test]
fn a_config_file_over_1_mib_is_refused_without_reading_it_whole() {
    let d = tempfile::tempdir().unwrap();
    let big = d.path().join("big.cnf");
    std::fs::write(&big, vec![b'#'; (1 << 20) + 1]).unwrap();
    for config in [big.to_str().unwrap(), "/dev/zero"] {
        let o = bounded(
            &[
                "run",
                "--profile",
                "ci",
                "--results",
                d.path().join("r").to_str().unwrap(),
                "--config",
                config,
            ],
            20,
        );
        refused(&o, "larger than 1 MiB", config);
    }
}

/// `rqps matrix --dry-run` of a matrix whose [defaults] end with `extra`
/// (line 3 on) and whose one target has `target` lines.
fn dry_matrix(d: &Path, extra: &str, target: &str) -> std::process::Output {
    let m = d.join("m.toml");
    std::fs::write(
        &m,
        format!(
            "[defaults]\nprofile = \"ci\"\n{extra}\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n{target}\n"
        ),
    )
    .unwrap();
    bounded(
        &[
            "matrix",
            m.to_str().unwrap(),
            "--dry-run",
            "--results",
            d.join("r").to_str().unwrap(),
        ],
        20,
    )
}

#[test]
fn a_statement_timeout_under_a_second_or_over_a_day_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("r");
    for (v, says) in [
        ("0", "at least 1 second"),
        ("1e10", "86400"),
        ("soon", "soon"),
    ] {
        let args = [
            "run",
            "--profile",
            "ci",
            "--results",
            results.to_str().unwrap(),
        ];
        let o = bounded(&[&args[..], &["--stmt-timeout", v]].concat(), 20);
        refused(&o, says, &format!("--stmt-timeout {v}"));
    }
    assert!(!results.exists(), "nothing ran");
    let o = dry_matrix(d.path(), "stmt_timeout = 0", "");
    refused(
        &o,
        "m.toml:3: stmt_timeout: must be at least 1 second",
        "matrix",
    );
    let o = dry_matrix(d.path(), "stmt_timeout = 30", "");
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("--stmt-timeout 30"), "{}", text(&o));
}

#[test]
fn a_matrix_with_numbers_out_of_bounds_is_refused_with_file_line_and_field() {
    let d = tempfile::tempdir().unwrap();
    for (extra, says) in [
        ("read_secs = -1", "m.toml:3: read_secs: "),
        ("read_secs = 1e308", "m.toml:3: read_secs: "),
        ("warmup_secs = 1e10", "m.toml:3: warmup_secs: "),
        ("repeats = 4294967296", "m.toml:3: repeats: "),
        ("threads = [1, 100000]", "m.toml:3: threads: "),
        ("table_size = 99999999999999", "m.toml:3: table_size: "),
        ("cooldown_secs = 1e308", "m.toml:3: cooldown_secs: "),
    ] {
        let o = dry_matrix(d.path(), extra, "");
        refused(&o, says, extra);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("at most") || err.contains(" to "),
            "{extra}: {err}"
        );
    }
}

#[test]
fn a_matrix_config_is_read_as_the_run_reads_it() {
    let d = tempfile::tempdir().unwrap();
    // /dev/null is an empty config, not "no such file".
    let o = dry_matrix(d.path(), "", "config = \"/dev/null\"");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = dry_matrix(d.path(), "", "config = \"/dev/zero\"");
    refused(
        &o,
        "m.toml:7: config: /dev/zero: larger than 1 MiB",
        "/dev/zero",
    );
    let o = dry_matrix(d.path(), "", "config = \"nope.cnf\"");
    refused(&o, "m.toml:7: config: ", "missing");
    assert!(text(&o).contains("no such file"));
}

/// `lchown` (the link itself, not its target).
fn lchown(p: &Path, uid: u32) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::lchown(c.as_ptr(), uid, uid) }, 0, "lchown");
}

#[test]
fn an_output_through_another_users_link_in_a_shared_directory_is_refused() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // SAFETY: geteuid touches no memory.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping: making a link of another user needs root");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let shared = d.path().join("tmp");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    // Another user's file, and that user's link to it.
    let theirs = shared.join("theirs.txt");
    std::fs::write(&theirs, "their data\n").unwrap();
    lchown(&theirs, 65534);
    let link = shared.join("out.json");
    std::os::unix::fs::symlink(&theirs, &link).unwrap();
    lchown(&link, 65534);
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    let report = |out: &Path| {
        bounded(
            &[
                "report",
                "--results",
                results.to_str().unwrap(),
                "--base",
                "pg15",
                "--format",
                "csv",
                "-o",
                out.to_str().unwrap(),
            ],
            20,
        )
    };
    let run = short_run(&d.path().join("r"), &["--json", link.to_str().unwrap()])
        .output()
        .unwrap();
    refused(
        &run,
        "symbolic link of another user (uid 65534)",
        "run --json",
    );
    refused(&report(&link), "does not write through it", "report -o");
    let hist = bounded(
        &[
            "history",
            "--results",
            results.to_str().unwrap(),
            "-o",
            link.to_str().unwrap(),
        ],
        20,
    );
    refused(&hist, "does not write through it", "history -o");
    let md = std::fs::metadata(&theirs).unwrap();
    assert_eq!((md.uid(), md.gid()), (65534, 65534), "the owner changed");
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "their data\n");
    assert!(!d.path().join("r").exists(), "nothing ran");
    // The user's own link in the same directory is followed.
    let mine = shared.join("mine.csv");
    std::os::unix::fs::symlink("mine-real.csv", &mine).unwrap();
    let o = report(&mine);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        std::fs::read_to_string(shared.join("mine-real.csv"))
            .unwrap()
            .contains("pg16")
    );
    assert!(
        std::fs::symlink_metadata(&mine)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// Runs rqps with `args`, killed after `secs`: its output, wall time and
/// peak resident memory in MB (wait4's, for this child alone).
// The child is reaped by wait4, which also gives its rusage.
#[allow(clippy::zombie_processes)]
fn measured(args: &[&str], secs: u64) -> (std::process::Output, std::time::Duration, u64) {
    use std::os::unix::process::ExitStatusExt;
    let out = tempfile::tempdir().unwrap();
    let (so, se) = (out.path().join("out"), out.path().join("err"));
    let t = std::time::Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&so).unwrap())
        .stderr(std::fs::File::create(&se).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let deadline = t + std::time::Duration::from_secs(secs);
    let (mut status, mut ru): (libc::c_int, libc::rusage) = (0, unsafe { std::mem::zeroed() });
    loop {
        // SAFETY: wait4 on our own child, writing into locals.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == pid {
            break;
        }
        if std::time::Instant::now() > deadline {
            // SAFETY: our own child, not yet reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let took = t.elapsed();
    let o = std::process::Output {
        status: std::process::ExitStatus::from_raw(status),
        stdout: std::fs::read(&so).unwrap(),
        stderr: std::fs::read(&se).unwrap(),
    };
    (o, took, ru.ru_maxrss as u64 / 1024)
}

#[test]
fn every_reader_skips_a_results_file_that_is_not_a_regular_file_of_sane_size() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    let latest = "20250101-170000-pg16";
    type Make = fn(&Path);
    let cases: [(&str, Make); 5] = [
        ("a link to /dev/zero", |p| {
            std::os::unix::fs::symlink("/dev/zero", p).unwrap()
        }),
        ("a FIFO", |p| mkfifo(p)),
        ("a sparse 2 GB file", |p| {
            let f = std::fs::File::create(p).unwrap();
            f.set_len(2 << 30).unwrap();
        }),
        ("a link to /", |p| {
            std::os::unix::fs::symlink("/", p).unwrap()
        }),
        ("a tests directory that is a link to /", |p| {
            let tests = p.parent().unwrap();
            std::fs::remove_dir_all(tests).unwrap();
            std::os::unix::fs::symlink("/", tests).unwrap();
        }),
    ];
    for (what, make) in cases {
        let d = tempfile::tempdir().unwrap();
        let results = d.path().join("r");
        copy_dir(&fixtures, &results);
        let bad = results.join(latest).join("tests/006-scan-t1.json");
        std::fs::remove_file(&bad).unwrap();
        make(&bad);
        let r = results.to_str().unwrap();
        let mut readers: Vec<Vec<&str>> = vec![
            vec!["show", "--results", r],
            vec![
                "compare",
                "--results",
                r,
                "--base",
                "pg15",
                "--target",
                "pg16",
                "--fail-below",
                "0.5",
            ],
            vec!["history", "--results", r],
        ];
        for f in ["term", "md", "html", "csv", "tsv", "json"] {
            readers.push(vec![
                "report",
                "--results",
                r,
                "--base",
                "pg15",
                "--format",
                f,
            ]);
        }
        let part = results.join(latest);
        let merged = d.path().join("merged");
        readers.push(vec![
            "merge",
            part.to_str().unwrap(),
            "--results",
            merged.to_str().unwrap(),
        ]);
        for args in readers {
            let (o, took, mb) = measured(&args, 20);
            let all = text(&o);
            let what = format!("{} with {what}", args[0]);
            assert!(
                o.status.code().is_some(),
                "{what}: killed after {took:?}: {all}"
            );
            assert!(took.as_secs_f64() < 5.0, "{what}: took {took:?}");
            assert!(mb < 200, "{what}: {mb} MB");
            if args[0] == "merge" {
                assert_ne!(o.status.code(), Some(0), "{what}: {all}");
                assert!(
                    all.contains("006-scan-t1.json") || all.contains("tests"),
                    "{what}: {all}"
                );
            } else {
                assert!(o.status.success(), "{what}: {all}");
                assert!(
                    all.contains(&format!("skipped unreadable run {}", part.display())),
                    "{what}: {all}"
                );
            }
        }
    }
}

/// Pieces of the passwords below: none may appear in any output.
const PIECES: [&str; 7] = ["Zq9", "Wk7", "Xv3", "Yb5", "Uj2", "Rm4", "Tn8"];

fn shows_no_password(what: &str, all: &str) {
    for p in PIECES {
        assert!(!all.contains(p), "{what}: '{p}' shows in: {all}");
    }
}

/// Every file under `dir`, as text.
fn files_text(dir: &Path) -> String {
    let mut out = String::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.push_str(&files_text(&p));
        } else {
            out.push_str(&String::from_utf8_lossy(
                &std::fs::read(&p).unwrap_or_default(),
            ));
        }
    }
    out
}

#[test]
fn a_password_of_any_characters_shows_in_no_output() {
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("r");
    let r = results.to_str().unwrap();
    let passwords = [
        // '@' then '?': cannot parse (the '?' must be %3F).
        "Zq9@Wk7?Xv3/Yb5#Uj2%Rm4:Tn8",
        // Parses: '@', '/', '#' and ':' are taken as the password's.
        "Zq9@Wk7/Xv3#Yb5:Tn8",
        // A '%' that is no escape.
        "Zq9%Rm4/Tn8",
        "Zq9%3FWk7@Tn8",
    ];
    for scheme in ["postgres", "mysql"] {
        for pw in passwords {
            let url = format!("{scheme}://bench:{pw}@127.0.0.1:1/sbtest");
            let bad_port = format!("{scheme}://bench:{pw}@127.0.0.1:notaport/sbtest");
            let target_eq = format!("--target={url}");
            let base = ["run", "--profile", "ci", "-q", "--results", r];
            for extra in [
                vec!["--target", url.as_str()],
                vec!["--target", bad_port.as_str()],
                vec![target_eq.as_str()],
                // Errors from the command-line parser quote the argument.
                vec![url.as_str()],
                vec!["--target", url.as_str(), "--server", "postgres"],
                vec!["--target", url.as_str(), "--threads", "zero"],
            ] {
                let args = [&base[..], &extra[..]].concat();
                let o = bounded(&args, 30);
                let all = text(&o);
                let what = format!("{extra:?}");
                assert_ne!(o.status.code(), Some(0), "{what}: {all}");
                shows_no_password(&what, &all);
            }
            // A matrix: its plan, and its errors.
            let m = d.path().join("m.toml");
            for u in [&url, &bad_port] {
                std::fs::write(
                    &m,
                    format!(
                        "[defaults]\nprofile = \"ci\"\n[[target]]\nname = \"a\"\nurl = \"{u}\"\n"
                    ),
                )
                .unwrap();
                let o = bounded(
                    &["matrix", m.to_str().unwrap(), "--dry-run", "--results", r],
                    20,
                );
                let all = text(&o);
                shows_no_password(&format!("matrix {u}"), &all);
                if o.status.success() {
                    assert!(all.contains("bench:***@127.0.0.1:1/sbtest"), "{all}");
                } else {
                    assert!(all.contains("m.toml:5: url: "), "{all}");
                }
            }
        }
    }
    shows_no_password("stored results", &files_text(&results));
}

/// A server on a loopback port that answers each connection with `hello`
/// (the greeting and login of its protocol) and then, to whatever the
/// client sends next, the first bytes of a message whose rest never comes.
fn half_a_reply_server(hello: fn(&mut std::net::TcpStream) -> Option<()>, partial: Vec<u8>) -> u16 {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let partial = partial.clone();
            std::thread::spawn(move || {
                if hello(&mut s).is_none() {
                    return;
                }
                let mut buf = [0u8; 4096];
                if !matches!(s.read(&mut buf), Ok(n) if n > 0) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
                let _ = s.write_all(&partial);
                s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
                    .unwrap();
                while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
            });
        }
    });
    port
}

/// MySQL's greeting (mysql_native_password), then OK to any login.
fn mysql_hello(s: &mut std::net::TcpStream) -> Option<()> {
    use std::io::{Read, Write};
    let caps: u32 = 1 | (1 << 3) | (1 << 9) | (1 << 13) | (1 << 15) | (1 << 19) | (1 << 24);
    let mut hs = vec![10];
    hs.extend_from_slice(b"8.0.36-half-a-reply\0");
    hs.extend_from_slice(&7u32.to_le_bytes());
    hs.extend_from_slice(b"abcdefgh\0");
    hs.extend_from_slice(&(caps as u16).to_le_bytes());
    hs.push(255);
    hs.extend_from_slice(&2u16.to_le_bytes());
    hs.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    hs.push(21);
    hs.extend_from_slice(&[0; 10]);
    hs.extend_from_slice(b"ijklmnopqrst\0mysql_native_password\0");
    let mut p = (hs.len() as u32).to_le_bytes()[..3].to_vec();
    p.push(0);
    p.extend_from_slice(&hs);
    s.write_all(&p).ok()?;
    let mut h = [0u8; 4];
    s.read_exact(&mut h).ok()?;
    let mut resp = vec![0; u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize];
    s.read_exact(&mut resp).ok()?;
    s.write_all(&[7, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0]).ok()
}

/// PostgreSQL's startup: no TLS, trust, ready.
fn pg_hello(s: &mut std::net::TcpStream) -> Option<()> {
    use std::io::{Read, Write};
    loop {
        let mut len = [0u8; 4];
        s.read_exact(&mut len).ok()?;
        let mut body = vec![0; (u32::from_be_bytes(len) as usize).checked_sub(4)?];
        s.read_exact(&mut body).ok()?;
        if body.starts_with(&80877103u32.to_be_bytes()) {
            s.write_all(b"N").ok()?;
            continue;
        }
        break;
    }
    let mut out = vec![b'R', 0, 0, 0, 8, 0, 0, 0, 0];
    let ps = b"server_version\x0016.0\x00";
    out.push(b'S');
    out.extend_from_slice(&(ps.len() as u32 + 4).to_be_bytes());
    out.extend_from_slice(ps);
    out.extend_from_slice(&[b'K', 0, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0, 2]);
    out.extend_from_slice(&[b'Z', 0, 0, 0, 5, b'I']);
    s.write_all(&out).ok()
}

#[test]
fn a_reply_that_stops_mid_message_fails_within_the_message_timeout_for_both_clients() {
    let d = tempfile::tempdir().unwrap();
    // A packet of 200 bytes (sequence 1), 5 of them sent.
    let mysql = half_a_reply_server(mysql_hello, vec![200, 0, 0, 1, 1, 2, 3, 4, 5]);
    // A RowDescription of 1000 bytes, 3 of its body sent.
    let pg = half_a_reply_server(pg_hello, vec![b'T', 0, 0, 3, 232, 0, 1, 0]);
    for url in [
        format!("mysql://u@127.0.0.1:{mysql}/sbtest"),
        format!("postgres://u@127.0.0.1:{pg}/sbtest"),
    ] {
        let results = d.path().join("r");
        let t = std::time::Instant::now();
        // The statement timeout stays 600 s: the message timeout must act.
        let o = bounded(
            &[
                "run",
                "--profile",
                "ci",
                "--tests",
                "point-query",
                "-q",
                "--results",
                results.to_str().unwrap(),
                "--target",
                &url,
                "--message-timeout",
                "1",
            ],
            40,
        );
        let took = t.elapsed();
        let all = text(&o);
        assert!(
            o.status.code().is_some(),
            "{url}: still waiting after {took:?}: {all}"
        );
        assert_ne!(o.status.code(), Some(0), "{url}: {all}");
        assert!(
            all.contains("in the middle of a message for 1 s"),
            "{url}: {all}"
        );
        assert!(took.as_secs() < 20, "{url}: took {took:?}");
    }
}

/// Whether RocksDB's library is on this machine (Debian's librocksdb).
fn rocksdb_here() -> bool {
    let here = std::fs::read_dir("/usr/lib/x86_64-linux-gnu")
        .map(|r| {
            r.flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("librocksdb.so.")
            })
        })
        .unwrap_or(false);
    if !here {
        eprintln!("skipping: no librocksdb (apt-get install librocksdb7.8)");
    }
    here
}

#[test]
fn a_rocksdb_temporary_directory_left_by_a_killed_run_is_removed_by_the_next() {
    if !rocksdb_here() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let tmp = d.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let results = d.path().join("r");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .env("TMPDIR", &tmp)
        .args([
            "run",
            "--suite",
            "dbbench",
            "--profile",
            "ci",
            "--server",
            "rocksdb",
            "-q",
        ])
        .arg("--results")
        .arg(&results)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let left = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&tmp)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("rqps-rocksdb-")
            })
            .collect()
    };
    let t = std::time::Instant::now();
    // Killed once the database holds files.
    while !left().iter().any(|p| p.join("db/CURRENT").exists()) {
        assert!(
            t.elapsed().as_secs() < 30,
            "no RocksDB directory in {tmp:?}"
        );
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let dirs = left();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    assert!(
        dirs[0].join("rqps.owner").exists(),
        "not marked with its owner"
    );
    // The next run, of any engine, removes it and says so.
    let o = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .env("TMPDIR", &tmp)
        .args([
            "run",
            "--profile",
            "ci",
            "--tests",
            "point-query",
            "-q",
            "--results",
        ])
        .arg(&results)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(!dirs[0].exists(), "left behind: {:?}", dirs[0]);
    assert!(
        text(&o).contains("left behind by rqps process"),
        "{}",
        text(&o)
    );
}

#[test]
fn dbbench_refuses_a_database_that_holds_keys_unless_told_to_skip_the_load() {
    if !rocksdb_here() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("r");
    let target = format!("rocksdb:{}", d.path().join("db").display());
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--suite",
            "dbbench",
            "--profile",
            "ci",
            "--keys",
            "1000",
            "--secs",
            "0.05",
            "--threads",
            "1",
            "-q",
            "--results",
            results.to_str().unwrap(),
            "--target",
            &target,
        ];
        args.extend_from_slice(extra);
        bounded(&args, 60)
    };
    // --skip-load runs the steps on what is there (nothing yet); they write keys.
    let o = run(&["--skip-load"]);
    assert!(o.status.success(), "{}", text(&o));
    let runs = || std::fs::read_dir(&results).unwrap().count();
    assert_eq!(runs(), 1);
    let o = run(&[]);
    refused(&o, "already holds keys", "a second load");
    assert!(text(&o).contains("--skip-load"), "{}", text(&o));
    assert_eq!(runs(), 1, "the refused run was stored");
}

#[test]
fn a_server_stall_is_warned_when_its_test_ends_and_marked_in_show() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("sb.db");
    let results = d.path().join("r");
    let child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args([
            "run",
            "--profile",
            "ci",
            "--tests",
            "update-index",
            "--threads",
            "1",
        ])
        .args(["--write-secs", "4", "-q", "--results"])
        .arg(&results)
        .arg("--target")
        .arg(format!("sqlite:{}", db.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the test runs, another writer holds the database for 2.5 s:
    // rqps's update waits for it, and no statement starts meanwhile.
    let t = std::time::Instant::now();
    let running = || {
        std::fs::read_dir(&results)
            .ok()
            .and_then(|r| r.flatten().next())
            .map(|run| run.path().join("tests/001-update-index-t1.json"))
            .is_some_and(|p| std::fs::read_to_string(p).is_ok_and(|s| s.contains("\"running\"")))
    };
    while !running() {
        assert!(t.elapsed().as_secs() < 60, "the test never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
        c.execute_batch("BEGIN IMMEDIATE").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2500));
        c.execute_batch("COMMIT").unwrap();
    }
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        err.lines()
            .any(|l| l.starts_with("warning: update-index") && l.contains("the server stalled")),
        "{err}"
    );
    let show = rqps(&["show", "--results", results.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&show.stdout);
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("update-index") && l.contains("ok (stalled)")),
        "{out}"
    );
    assert!(
        out.contains("stalled: update-index t=1: the server stalled"),
        "{out}"
    );
    // Quiet where nothing stalled.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    let quiet = rqps(&["show", "--results", fixtures.to_str().unwrap()]);
    assert!(!text(&quiet).contains("stalled"), "{}", text(&quiet));
}

#[test]
fn a_connection_stuck_past_the_deadline_is_flagged_named_and_does_not_dilute_the_rates() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("stuck.db");
    let results = d.path().join("r");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "PRAGMA journal_mode=WAL; CREATE TABLE t(v INTEGER); INSERT INTO t VALUES (0);",
        )
        .unwrap();
    }
    // Client 0 writes, client 1 reads: a writer that holds the database
    // keeps client 0 in its UPDATE past the 2 s deadline; client 1 reads on.
    let script = d.path().join("mix.sql");
    std::fs::write(
        &script,
        "\\if :client_id = 0\nUPDATE t SET v = v + 1;\n\\else\nSELECT v FROM t;\n\\endif\n",
    )
    .unwrap();
    let json = d.path().join("run.json");
    let child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(["run", "--suite", "pgbench", "--skip-init", "--script"])
        .arg(&script)
        .args([
            "--clients",
            "2",
            "--time",
            "2",
            "-q",
            "--busy-threshold",
            "100",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--results")
        .arg(&results)
        .arg("--target")
        .arg(format!("sqlite:{}", db.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    let running = || {
        std::fs::read_dir(&results)
            .ok()
            .and_then(|r| r.flatten().next())
            .and_then(|run| std::fs::read_dir(run.path().join("tests")).ok())
            .is_some_and(|mut t| {
                t.any(|f| {
                    f.is_ok_and(|f| {
                        std::fs::read_to_string(f.path()).is_ok_and(|s| s.contains("\"running\""))
                    })
                })
            })
    };
    while !running() {
        assert!(t.elapsed().as_secs() < 60, "the test never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
        c.execute_batch("BEGIN IMMEDIATE").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(4000));
        c.execute_batch("COMMIT").unwrap();
    }
    let o = child.wait_with_output().unwrap();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let test = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"] == "pgbench")
        .unwrap_or_else(|| panic!("{doc}"));
    // Before: `ok`, no word, and the rates over the 4 s the test lasted.
    assert_eq!(test["status"], "ok", "{test}");
    assert_eq!(
        test["overran"]["connections"],
        serde_json::json!([0]),
        "{test}"
    );
    assert!(test["overran"]["secs"].as_f64().unwrap() > 1.0, "{test}");
    let secs = test["secs"].as_f64().unwrap();
    assert!(secs < 2.5, "the rates are diluted: over {secs} s");
    let warnings = test["warnings"].to_string();
    assert!(
        warnings.contains("ran past its deadline") && warnings.contains("connection 0 was"),
        "{warnings}"
    );
    assert!(
        out.contains("connection 0 was still in a statement"),
        "{out}"
    );
    let show = rqps(&["show", "--results", results.to_str().unwrap()]);
    assert!(
        text(&show).contains("overran: pgbench t=2: ran past"),
        "{}",
        text(&show)
    );
}

#[test]
fn a_load_larger_than_the_free_space_is_refused_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("r");
    let r = results.to_str().unwrap();
    let db = format!("sqlite:{}", d.path().join("sb.db").display());
    // 7 TB of TPC-C in a throwaway database in TMPDIR, 250 TB of sysbench
    // beside a SQLite file.
    let tmp = d.path().to_str().unwrap();
    let mut tpcc = Command::new(env!("CARGO_BIN_EXE_rqps"));
    tpcc.env("TMPDIR", tmp)
        .args([
            "run",
            "--suite",
            "tpcc",
            "--profile",
            "ci",
            "--warehouses",
            "100000",
        ])
        .args(["--results", r]);
    let o = tpcc.output().unwrap();
    refused(&o, "the tpcc load needs about 7000.0 GB", "tpcc");
    assert!(
        text(&o).contains(&format!("but {tmp} has ")),
        "{}",
        text(&o)
    );
    let o = bounded(
        &[
            "run",
            "--profile",
            "ci",
            "--tables",
            "1000",
            "--table-size",
            "1000000000",
            "--target",
            &db,
            "--results",
            r,
        ],
        20,
    );
    refused(&o, "the sysbench load needs about 250000.0 GB", "sysbench");
    assert!(!results.exists(), "nothing ran");
    // Where rqps cannot know the disk (a server URL), the plan is not refused for it.
    let o = bounded(
        &[
            "run",
            "--suite",
            "tpcc",
            "--profile",
            "ci",
            "--warehouses",
            "100000",
            "--target",
            "mysql://u@127.0.0.1:1/tpcc",
            "--results",
            r,
        ],
        20,
    );
    assert!(!text(&o).contains("GB free"), "{}", text(&o));
}

#[test]
fn a_matrix_time_estimate_includes_the_load_and_its_size_is_bounded() {
    let d = tempfile::tempdir().unwrap();
    let m = d.path().join("m.toml");
    let r = d.path().join("r");
    std::fs::write(
        &m,
        "[defaults]\nsuite = \"tpcc\"\nprofile = \"ci\"\nwarehouses = 1000\n\
         [[target]]\nname = \"a\"\nurl = \"mysql://u@127.0.0.1:1/tpcc\"\n",
    )
    .unwrap();
    let o = bounded(
        &[
            "matrix",
            m.to_str().unwrap(),
            "--dry-run",
            "--results",
            r.to_str().unwrap(),
        ],
        20,
    );
    assert!(o.status.success(), "{}", text(&o));
    // 70 GB at 50 MB/s: 23 minutes of load before the measured seconds.
    let out = String::from_utf8_lossy(&o.stdout);
    let mins: f64 = out
        .split("about ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!((23.0..30.0).contains(&mins), "{out}");
    // 200 targets x 1000 repeats: refused at once, without planning them.
    let mut big = String::from("[defaults]\nprofile = \"ci\"\nrepeats = 1000\n");
    for i in 0..200 {
        big.push_str(&format!(
            "[[target]]\nname = \"t{i}\"\nengine = \"sqlite\"\n"
        ));
    }
    std::fs::write(&m, big).unwrap();
    let t = std::time::Instant::now();
    let o = bounded(
        &[
            "matrix",
            m.to_str().unwrap(),
            "--dry-run",
            "--results",
            r.to_str().unwrap(),
        ],
        20,
    );
    refused(
        &o,
        "200 targets x 1000 repeats = 200000 runs: a matrix may have at most 100000",
        "big",
    );
    assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
}

/// rqps with `args` under `umask`: its output.
fn with_umask(umask: libc::mode_t, mut c: Command) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    // SAFETY: umask is async-signal-safe and touches no memory.
    unsafe {
        c.pre_exec(move || {
            libc::umask(umask);
            Ok(())
        });
    }
    c.output().unwrap()
}

fn mode_of(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

#[test]
fn outputs_are_as_private_as_the_results_and_a_umask_can_only_narrow_them() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("r");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    let fixtures = fixtures.to_str().unwrap();
    // Each output a user names, written under `umask` (the run under
    // `run_umask`: it also makes its results directory, which the owner
    // must be able to write when not root).
    let outputs = |run_umask: libc::mode_t,
                   umask: libc::mode_t,
                   tag: &str|
     -> Vec<(String, std::path::PathBuf)> {
        let json = d.path().join(format!("run-{tag}.json"));
        let report = d.path().join(format!("report-{tag}.html"));
        let history = d.path().join(format!("history-{tag}.md"));
        let run = with_umask(
            run_umask,
            short_run(&results, &["--json", json.to_str().unwrap()]),
        );
        assert!(run.status.success(), "{}", text(&run));
        let mut c = Command::new(env!("CARGO_BIN_EXE_rqps"));
        c.args([
            "report",
            "--results",
            fixtures,
            "--base",
            "pg15",
            "--format",
            "html",
            "-o",
        ])
        .arg(&report);
        let o = with_umask(umask, c);
        assert!(o.status.success(), "{}", text(&o));
        let mut c = Command::new(env!("CARGO_BIN_EXE_rqps"));
        c.args(["history", "--results", fixtures, "--format", "md", "-o"])
            .arg(&history);
        let o = with_umask(umask, c);
        assert!(o.status.success(), "{}", text(&o));
        vec![
            ("run --json".into(), json),
            ("report -o".into(), report),
            ("history -o".into(), history),
        ]
    };
    // The usual umask (022) would make them 0644: they are 0600, as the
    // stored results are.
    for (what, p) in outputs(0o022, 0o022, "usual") {
        assert_eq!(mode_of(&p), 0o600, "{what}");
    }
    let run_dir = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(mode_of(&run_dir.join("run.json")), 0o600, "stored results");
    // A stricter umask narrows them further.
    let strict = outputs(0o077, 0o277, "strict");
    assert_eq!(mode_of(&strict[0].1), 0o600, "run --json under umask 0077");
    for (what, p) in &strict[1..] {
        assert_eq!(mode_of(p), 0o400, "{what} under umask 0277");
    }
    // A file the user shared keeps its mode when rqps replaces it.
    let shared = d.path().join("report-usual.html");
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_rqps"));
    c.args([
        "report",
        "--results",
        fixtures,
        "--base",
        "pg15",
        "--format",
        "html",
        "-o",
    ])
    .arg(&shared);
    assert!(with_umask(0o022, c).status.success());
    assert_eq!(mode_of(&shared), 0o644, "an existing file keeps its mode");
}

/// A TCP proxy to `upstream` on 127.0.0.1 that forwards each connection's
/// first `budget` bytes from the client, then cuts the connection: a link
/// that breaks once the login is done.
fn cutting_proxy(upstream: u16, budget: usize) -> u16 {
    use std::io::{Read as _, Write as _};
    let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut client) = c else { continue };
            let Ok(mut server) = std::net::TcpStream::connect(("127.0.0.1", upstream)) else {
                continue;
            };
            let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut s2, &mut c2);
                let _ = c2.shutdown(std::net::Shutdown::Both);
            });
            std::thread::spawn(move || {
                let mut left = budget;
                let mut buf = [0u8; 4096];
                while left > 0 {
                    let n = match client.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n.min(left),
                    };
                    if server.write_all(&buf[..n]).is_err() {
                        break;
                    }
                    left -= n;
                }
                let _ = server.shutdown(std::net::Shutdown::Both);
                let _ = client.shutdown(std::net::Shutdown::Both);
            });
        }
    });
    port
}

/// The pg15/pg16 fixture runs in a directory of their own, with `record`
/// as its only compatibility record.
fn fixtures_with_record(record: &rqps::results::compat::CompatRecord) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    for e in std::fs::read_dir(&fixtures).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with("-pg15") || name.ends_with("-pg16") {
            copy_dir(&e.path(), &d.path().join(&name));
        }
    }
    rqps::results::compat::store(d.path(), record).unwrap();
    d
}

/// A record of PostgreSQL 15.8 (reference) and 16.4 whose every sysbench
/// test of the fixtures differs on 16.4, or was not checked there.
fn fixture_record(not_checked: bool) -> rqps::results::compat::CompatRecord {
    use rqps::results::EngineInfo;
    use rqps::results::compat::{CompatRecord, EngineCompat, EngineId, Level, TestCompat};
    let engine = |label: &str, version: &str, level: Level| EngineCompat {
        id: EngineId {
            label: label.into(),
            engine: EngineInfo {
                name: "postgres".into(),
                version: version.into(),
                auth: None,
            },
            target: String::new(),
        },
        left_out: None,
        statements: Vec::new(),
        tests: [
            "point-query",
            "random-points",
            "range-covered-pk",
            "scan",
            "read-only",
            "read-only-count",
            "update-index",
            "insert",
            "write-only",
        ]
        .iter()
        .map(|t| TestCompat {
            suite: "sysbench".into(),
            test: t.to_string(),
            also: vec![format!("{t}.warm"), format!("{t}_range=*")],
            level,
            statements: 1,
            reason: (level != Level::Semantics).then(|| "rows differ".into()),
            not_checked: (not_checked && level != Level::Semantics)
                .then(|| "not checked: the link failed (connection): reset".into()),
        })
        .collect(),
        differences: Vec::new(),
        probes: Vec::new(),
        conditions: Vec::new(),
        suites: Vec::new(),
    };
    CompatRecord {
        rqps_version: "0".into(),
        started: "2026-11-27T10:00:00Z".into(),
        finished: "2026-11-27T10:01:00Z".into(),
        command_line: Vec::new(),
        seed: 1,
        suites: Vec::new(),
        rules: Vec::new(),
        reference: engine("pg15", "15.8", Level::Semantics),
        targets: vec![engine("pg16", "16.4", Level::None)],
    }
}

#[test]
fn compare_never_answers_ok_with_no_test_compared_and_a_broken_record_excludes_nothing() {
    let compare = |d: &Path| {
        rqps(&[
            "compare",
            "--results",
            d.to_str().unwrap(),
            "--base",
            "pg15",
            "--target",
            "pg16",
            "--fail-below",
            "0.5",
        ])
    };
    // Every test left out by a whole record: it answered `OK ... (0 compared)`.
    let d = fixtures_with_record(&fixture_record(false));
    let o = compare(d.path());
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("FAIL: no test of pg16 was compared with pg15"),
        "{out}"
    );
    assert!(!out.contains("OK:"), "{out}");
    // The same record, made over a link that broke: it leaves nothing out.
    let d = fixtures_with_record(&fixture_record(true));
    let o = compare(d.path());
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("could not check everything"), "{out}");
    assert!(!out.contains("not gated:"), "{out}");
    assert!(!out.contains("(0 compared"), "{out}");
}

#[test]
fn compat_over_a_link_that_breaks_checks_nothing_stores_no_level_and_fails() {
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("r");
    let results = results.to_str().unwrap();
    // A target on a closed port: it exited 0.
    let o = rqps(&[
        "compat",
        "--reference",
        "sqlite",
        "--target",
        "postgres://u@127.0.0.1:1/db",
        "--suites",
        "select1",
        "--results",
        results,
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("compat: FAIL: not every engine could be checked")
            && out.contains("could not be checked"),
        "{out}"
    );
    let pg: rqps::engine::server::Recipe = &rqps::engine::postgres::server::RECIPE;
    if !common::server_available(pg) {
        return;
    }
    let server =
        rqps::engine::server::Server::start(&rqps::engine::server::ServerSpec::new(pg), &mut |n| {
            eprintln!("note: {n}")
        })
        .unwrap();
    // The login passes, the connection breaks soon after.
    let port = cutting_proxy(server.port(), 1200);
    let url = format!(
        "postgres://{}@127.0.0.1:{port}/{}?sslmode=disable",
        server.user(),
        server.database()
    );
    let results2 = d.path().join("r2");
    let o = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(["compat", "--reference", "sqlite", "--target", &url])
        .args(["--suites", "sysbench", "--tests", "point-query,insert"])
        .args(["--stmt-timeout", "10", "--no-concurrent", "--results"])
        .arg(&results2)
        .env("PGPASSWORD", server.password())
        .output()
        .unwrap();
    let out = text(&o);
    // It exited 0 and stored the broken link's failures as the engine's level.
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("not checked, the link failed"), "{out}");
    let dir = results2.join("compat");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let tests = record["targets"][0]["tests"].as_array().unwrap();
    assert!(!tests.is_empty(), "{record}");
    for t in tests {
        assert!(
            t["not_checked"]
                .as_str()
                .is_some_and(|w| w.contains("the link failed")),
            "{t}"
        );
    }
    let o = rqps(&["compat", "--show", "--results", results2.to_str().unwrap()]);
    assert!(text(&o).contains("Not checked"), "{}", text(&o));

    // Once the target's tables are loaded, the link takes no new
    // connection: no test's worker and no probe connects. Before: exit 0,
    // the tests at level `none` (every statement "not sent") and the
    // probes' "no" compared as differences.
    let refuse = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let port = refusing_proxy(server.port(), refuse.clone());
    let url = format!(
        "postgres://{}@127.0.0.1:{port}/{}?sslmode=disable",
        server.user(),
        server.database()
    );
    let results3 = d.path().join("r3");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(["compat", "--reference", "sqlite", "--target", &url])
        .args(["--suites", "sysbench", "--tests", "point-query,insert"])
        .args(["--stmt-timeout", "10", "--no-concurrent", "--results"])
        .arg(&results3)
        .env("PGPASSWORD", server.password())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = String::new();
    {
        use std::io::BufRead as _;
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        while lines.read_line(&mut line).unwrap() > 0 {
            if line.contains("loaded on postgres") {
                refuse.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            err.push_str(&line);
            line.clear();
        }
    }
    let o = child.wait_with_output().unwrap();
    let out = format!("{}{err}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("2 of 2 test(s) not checked"), "{out}");
    assert!(out.contains("probe(s) not checked"), "{out}");
    let file = std::fs::read_dir(results3.join("compat"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let target = &record["targets"][0];
    for t in target["tests"].as_array().unwrap() {
        assert!(t["not_checked"].is_string(), "{t}");
    }
    // No statement counted at any level: none was sent.
    assert!(
        target["statements"].as_array().is_none_or(|s| s
            .iter()
            .all(|s| s["suite"] != "sysbench" || s["test"] == "load")),
        "{target}"
    );
    let connect = target["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "connect")
        .unwrap();
    assert!(connect["not_checked"].is_string(), "{connect}");
    let o = rqps(&["compat", "--show", "--results", results3.to_str().unwrap()]);
    assert!(text(&o).contains("probe(s) (connect)"), "{}", text(&o));
}

/// A TCP proxy to `upstream` on 127.0.0.1 that, once `refuse` is set,
/// closes each new connection at once: a link that takes no more.
fn refusing_proxy(upstream: u16, refuse: std::sync::Arc<std::sync::atomic::AtomicBool>) -> u16 {
    let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(client) = c else { continue };
            if refuse.load(std::sync::atomic::Ordering::SeqCst) {
                drop(client);
                continue;
            }
            let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", upstream)) else {
                continue;
            };
            for (mut from, mut to) in [
                (client.try_clone().unwrap(), server.try_clone().unwrap()),
                (server, client),
            ] {
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(std::net::Shutdown::Both);
                });
            }
        }
    });
    port
}
