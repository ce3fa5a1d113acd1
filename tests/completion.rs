//! Shell completion completes values, as a user at a bash prompt sees it:
//! the script `rqps completions bash` prints is sourced into a real bash,
//! the function it registers for `rqps` (found with `complete -p`) is called
//! with COMP_WORDS as bash calls it at a TAB, and COMPREPLY is read back. So
//! the test goes through clap's registration script, the `rqps` binary on
//! PATH and its dynamic completer, the whole way a TAB goes.

use std::path::Path;
use std::process::Command;

/// The candidates bash offers for the command line `words` (the last word is
/// the one being completed, maybe ""), with `cache` as the engine cache.
fn complete(words: &[&str], cache: &Path) -> Vec<String> {
    let bin = Path::new(env!("CARGO_BIN_EXE_rqps"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let quoted: Vec<String> = words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
        .collect();
    let script = format!(
        r#"set -e
source <(rqps completions bash)
fn=$(complete -p rqps | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
COMP_WORDS=({words})
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_LINE="${{COMP_WORDS[*]}}"
COMP_POINT=${{#COMP_LINE}}
COMP_TYPE=9
cur=${{COMP_WORDS[COMP_CWORD]}}
prev=${{COMP_WORDS[COMP_CWORD-1]}}
"$fn" rqps "$cur" "$prev"
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        words = quoted.join(" ")
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("PATH", path)
        .env("RQPS_CACHE_DIR", cache)
        .env_remove("COMPLETE")
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "bash completion of {words:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim_end().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// An engine cache holding one installed PostgreSQL release.
fn cache_with_postgres_16_15() -> tempfile::TempDir {
    let cache = tempfile::tempdir().unwrap();
    let entry = cache.path().join("postgres-16.15");
    std::fs::create_dir_all(&entry).unwrap();
    std::fs::write(entry.join(".rqps-complete"), "PostgreSQL 16.15\n").unwrap();
    cache
}

#[test]
fn bash_completes_the_values_of_run_s_options_from_the_registries() {
    let cache = cache_with_postgres_16_15();
    let c = |w: &[&str]| complete(w, cache.path());

    let suites = c(&["rqps", "run", "--suite", ""]);
    for s in ["sysbench", "ibench", "pgbench", "tpcc", "dbbench"] {
        assert!(suites.contains(&s.to_string()), "--suite: {suites:?}");
    }
    assert_eq!(c(&["rqps", "run", "--suite", "pgb"]), ["pgbench"]);

    // Profiles are the named suite's: dbbench has `server`, sysbench does not.
    let db = c(&["rqps", "run", "--suite", "dbbench", "--profile", ""]);
    assert_eq!(db, ["quick", "ci", "server"]);
    let sb = c(&["rqps", "tests", "--profile", ""]);
    assert!(sb.contains(&"small-server".to_string()) && !sb.contains(&"server".to_string()));

    // Tests of sysbench's list, after a comma too.
    let tests = c(&["rqps", "run", "--tests", "point-q"]);
    assert!(
        tests.contains(&"point-query".to_string()),
        "--tests: {tests:?}"
    );
    let more = c(&["rqps", "run", "--tests", "point-query,ins"]);
    assert!(
        more.iter().all(|t| t.starts_with("point-query,ins")) && !more.is_empty(),
        "--tests after a comma: {more:?}"
    );
    assert_eq!(c(&["rqps", "run", "--list", "cl"]), ["classic"]);

    // Engines, and the versions installed in the cache.
    let servers = c(&["rqps", "run", "--server", ""]);
    for s in ["postgres", "mariadb", "rocksdb", "postgres@16.15"] {
        assert!(servers.contains(&s.to_string()), "--server: {servers:?}");
    }

    // pgbench's built-in scripts, and a suite's options after its --suite.
    let b = c(&["rqps", "run", "--suite", "pgbench", "--builtin", "s"]);
    assert_eq!(b, ["simple-update", "select-only"]);
    let o = c(&["rqps", "run", "--suite", "ibench", "--rows-per"]);
    assert_eq!(o, ["--rows-per-client"]);
    assert!(
        c(&["rqps", "run", "--rows-per"]).is_empty(),
        "sysbench has no --rows-per-client"
    );
}

#[test]
fn bash_completes_engine_install_s_kinds_and_published_releases() {
    let cache = tempfile::tempdir().unwrap();
    let c = |w: &[&str]| complete(w, cache.path());
    let kinds = c(&["rqps", "engine", "install", "p"]);
    assert_eq!(kinds, ["postgres"]);
    let versions = c(&["rqps", "engine", "install", "postgres", "16.1"]);
    assert!(versions.contains(&"16.15".to_string()), "{versions:?}");
    assert!(
        versions.iter().all(|v| v.starts_with("16.1")),
        "{versions:?}"
    );
    assert_eq!(c(&["rqps", "man", "engi"]), ["engine"]);
}
