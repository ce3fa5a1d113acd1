//! A real two-target matrix (SQLite journal modes, ci profile) end to end.

mod common;
use common::{rqps, text};
use std::path::Path;

fn runs(results: &Path) -> Vec<serde_json::Value> {
    let mut v: Vec<_> = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("run.json").is_file())
        .map(|p| {
            serde_json::from_str::<serde_json::Value>(
                &std::fs::read_to_string(p.join("run.json")).unwrap(),
            )
            .unwrap()
        })
        .collect();
    v.sort_by_key(|d| {
        d["started"].as_str().unwrap_or("").to_string() + d["run_id"].as_str().unwrap_or("")
    });
    v
}

#[test]
fn sqlite_matrix_runs_interleaved_resumes_and_reports() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("wal.conf"), "journal_mode=WAL\n").unwrap();
    std::fs::write(
        d.path().join("delete.conf"),
        "journal_mode=DELETE\nsynchronous=FULL\n",
    )
    .unwrap();
    let m = d.path().join("m.toml");
    std::fs::write(
        &m,
        r#"
[defaults]
profile = "ci"
repeats = 2
cooldown_secs = 0
tests = ["point-query", "update-index"]
# One value where a list may be given.
threads = 2
read_secs = 0.5
write_secs = 0.5

[[target]]
name = "wal"
engine = "sqlite"
config = "wal.conf"

[[target]]
name = "delete"
engine = "sqlite"
config = "delete.conf"
"#,
    )
    .unwrap();
    let results = d.path().join("results");
    let r = results.to_str().unwrap();

    let o = rqps(&["matrix", m.to_str().unwrap(), "--results", r, "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("4 runs (4 to do)"), "{}", text(&o));
    assert!(!results.exists(), "a dry run stores nothing");

    // Part 2 of 3 takes runs 2 and 5 of the plan (wal-1 delete-1 wal-2 delete-2).
    let o = rqps(&[
        "matrix",
        m.to_str().unwrap(),
        "--results",
        r,
        "--dry-run",
        "--part",
        "2/3",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let plan = text(&o);
    assert!(plan.contains("= 1 runs (1 to do)"), "{plan}");
    assert!(
        plan.contains("1. delete repeat 1:") && !plan.contains("2. "),
        "{plan}"
    );
    let o = rqps(&["matrix", m.to_str().unwrap(), "--dry-run", "--part", "4/3"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("I/N"), "{}", text(&o));

    let o = rqps(&["matrix", m.to_str().unwrap(), "--results", r]);
    assert!(o.status.success(), "{}", text(&o));
    let docs = runs(&results);
    let order: Vec<(String, u64)> = docs
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap().to_string(),
                d["repeat"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        order,
        [("wal", 1), ("delete", 1), ("wal", 2), ("delete", 2)].map(|(n, r)| (n.to_string(), r))
    );
    assert!(docs.iter().all(|d| d["status"] == "ok"));
    // The final report compares the targets with the base (the first target).
    let out = text(&o);
    assert!(
        out.contains("delete") && results.join("report-wal.html").is_file(),
        "{out}"
    );
    let journal = |d: &serde_json::Value| {
        d["command_line"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a.as_str().unwrap().ends_with("delete.conf"))
    };
    assert!(
        !journal(&docs[0]) && journal(&docs[1]),
        "each target runs with its own config"
    );
    assert_eq!(docs[0]["params"]["threads"], serde_json::json!([2]));
    let line = docs[0]["command_line"].to_string();
    assert!(line.contains(r#""--threads","2""#), "{line}");

    // Resuming a finished matrix runs nothing more.
    let o = rqps(&["matrix", m.to_str().unwrap(), "--results", r, "--resume"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("(0 to do)"), "{}", text(&o));
    assert_eq!(runs(&results).len(), 4);

    // A target given by URL: its password is never printed in the plan.
    let u = d.path().join("url.toml");
    std::fs::write(
        &u,
        "[[target]]\nname = \"x\"\nurl = \"mysql://u:Secr3t-pw@127.0.0.1:1/db\"\n",
    )
    .unwrap();
    let o = rqps(&["matrix", u.to_str().unwrap(), "--results", r, "--dry-run"]);
    assert!(
        o.status.success() && text(&o).contains("u:***@") && !text(&o).contains("Secr3t-pw"),
        "{}",
        text(&o)
    );

    // A bad matrix names file, line and field.
    let bad = d.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[target]]\nname = \"x\"\nengine = \"postgres@latest\"\n",
    )
    .unwrap();
    let o = rqps(&["matrix", bad.to_str().unwrap(), "--results", r]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("bad.toml:3: engine:"), "{}", text(&o));

    // Options of the other suite are refused before anything runs.
    std::fs::write(
        &bad,
        "[defaults]\nsuite = \"ibench\"\ntests = [\"point-query\"]\n[[target]]\nname = \"x\"\nengine = \"sqlite\"\n",
    )
    .unwrap();
    let o = rqps(&["matrix", bad.to_str().unwrap(), "--results", r]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("bad.toml:3: tests: applies only to suite = \"sysbench\""),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("== x repeat"), "{}", text(&o));
}
