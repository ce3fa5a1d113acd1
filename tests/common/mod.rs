//! Helpers the end-to-end tests share: running the rqps binary and reading
//! what it wrote. Each test crate uses a part of them.
#![allow(dead_code)]

pub mod shared;

use std::path::Path;
use std::process::{Command, Output};

/// Runs the rqps binary with `args` and waits for it. Its lines on
/// standard error come whole (`COLUMNS`): the tests read them as text, and
/// tests/help.rs checks that they wrap at 120 columns without it.
pub fn rqps(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(args)
        .env("COLUMNS", "1000")
        .output()
        .expect("rqps runs")
}

/// Standard output, then standard error.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `rqps run ARGS` storing under `results` and writing its JSON document to
/// `json` (on a busy machine: `--busy-threshold 100`); asserts that it
/// succeeded and returns the document and the output.
pub fn run_stored(results: &Path, json: &Path, args: &[&str]) -> (serde_json::Value, String) {
    run_stored_env(results, json, args, &[])
}

/// [`run_stored`] with `env` set for the rqps process.
pub fn run_stored_env(
    results: &Path,
    json: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (serde_json::Value, String) {
    let mut all = vec![
        "run",
        "--results",
        results.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--busy-threshold",
        "100",
    ];
    all.extend_from_slice(args);
    let o = Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(&all)
        .envs(env.iter().copied())
        .output()
        .expect("rqps runs");
    let out = text(&o);
    assert!(o.status.success(), "rqps {}: {out}", args.join(" "));
    (read_json(json), out)
}

pub fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Whether a missing server binary fails the test (`RQPS_REQUIRE_SERVERS=1`,
/// as CI sets it) instead of skipping it.
pub fn servers_required() -> bool {
    std::env::var("RQPS_REQUIRE_SERVERS").is_ok_and(|v| v == "1")
}

/// Whether `kind`'s server binaries are here: `false` (the test skips it,
/// saying so) or, with [`servers_required`], a panic.
pub fn server_available(kind: rqps::engine::server::Recipe) -> bool {
    match rqps::engine::server::locate(kind, None) {
        Ok(_) => true,
        Err(e) if servers_required() => panic!("RQPS_REQUIRE_SERVERS=1 but: {e}"),
        Err(e) => {
            eprintln!("skipping {kind}: {e} (set RQPS_REQUIRE_SERVERS=1 to make this fail)");
            false
        }
    }
}

/// Compares `got` with the expected file at `path`, or rewrites it when
/// `UPDATE_SNAPSHOTS=1`; a difference names its first line. `test` is the
/// test file to rerun (`report`, `report_suites`).
pub fn snapshot(path: &Path, got: &str, test: &str) {
    if std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run UPDATE_SNAPSHOTS=1 cargo test --test {test}",
            path.display()
        )
    });
    if want != got {
        let line = want
            .lines()
            .zip(got.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(got.lines().count()));
        panic!(
            "{} differs at line {}:\n want: {:?}\n  got: {:?}\n(UPDATE_SNAPSHOTS=1 rewrites it)",
            path.display(),
            line + 1,
            want.lines().nth(line),
            got.lines().nth(line)
        );
    }
}

/// The statements a MariaDB general log recorded from `offset` on, without
/// the clients' own probes: each statement's text (`Execute` of a prepared
/// statement shows its values).
pub fn logged_statements(log: &std::path::Path, offset: usize) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap();
    text[offset..]
        .lines()
        .filter_map(|l| {
            let (_, sql) = l
                .split_once(" Execute\t")
                .or_else(|| l.split_once(" Query\t"))?;
            let word = sql.split_whitespace().next()?.to_ascii_uppercase();
            let sent = ["SELECT", "UPDATE", "DELETE", "INSERT", "BEGIN", "COMMIT"]
                .contains(&word.as_str());
            let probe = sql.contains("information_schema")
                || sql.contains("@@")
                || sql.contains("VERSION()");
            (sent && !probe).then(|| sql.to_string())
        })
        .collect()
}

/// The commands of the hint in `out` whose first line starts with `head`
/// (`compare with`), each as printed, for `sh -c`: the command after
/// `head: ` on that line, or the commands on the lines below it (two spaces
/// in; a line that ends in ` \` goes on on the next, as the shell reads
/// it). Every line of the hint fits 120 columns.
pub fn hint_commands(out: &str, head: &str) -> Vec<String> {
    let mut lines = out.lines().skip_while(|l| !l.starts_with(head));
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no line starting {head:?} in:\n{out}"));
    assert!(first.chars().count() <= 120, "{first}");
    if let Some(cmd) = first
        .strip_prefix(head)
        .and_then(|r| r.strip_prefix(": "))
        .filter(|c| c.starts_with("rqps "))
    {
        return vec![cmd.to_string()];
    }
    let mut cmds = Vec::new();
    let mut cur: Option<String> = None;
    for l in lines.take_while(|l| l.starts_with("  ")) {
        assert!(l.chars().count() <= 120, "{l}");
        let c = match cur.take() {
            Some(c) => format!("{c}\n{l}"),
            None => l.to_string(),
        };
        if l.ends_with(" \\") {
            cur = Some(c);
        } else {
            cmds.push(c);
        }
    }
    assert!(cur.is_none() && !cmds.is_empty(), "{out}");
    cmds
}

/// A command of [`hint_commands`] on one line, as a shell reads it.
pub fn one_line(cmd: &str) -> String {
    cmd.replace(" \\\n", " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
