//! The guard of a comparison across engines: an engine that parses a
//! statement and ignores part of it, returns other rows or runs at a weaker
//! isolation level looks faster on the same workload. When the results
//! directory holds a compatibility record (`rqps compat`) that checked both
//! the base's engine and a target's, each test whose statements differ in
//! semantics on either is marked in that target's cells and left out of the
//! group summaries, with a one-line reason. When the two are different
//! products and no record checked them, the report says that none was made.
//!
//! Engines are matched as runs store them (engine name and version). Only
//! the rows of the generic tables are guarded; a difference in a test whose
//! suite reports only through its own part (the Insert Benchmark) is named
//! in the note.

use super::model::GroupBlock;
use crate::results::compat::{CompatRecord, EngineCompat, Level, covering};
use crate::results::{EngineInfo, RunDoc};

/// The product an engine is: its name, or `mariadb` for a MySQL-protocol
/// server whose version says MariaDB (as run names call it).
fn product(e: &EngineInfo) -> &str {
    if e.version.to_ascii_lowercase().contains("mariadb") {
        "mariadb"
    } else {
        &e.name
    }
}

fn shown(e: &EngineInfo) -> String {
    format!("{} {}", product(e), e.version)
}

/// Why `e` does not do the reference's work in `suite`'s `test`, if it does not.
fn differs(e: &EngineCompat, suite: &str, test: &str) -> Option<String> {
    let t = e.test(suite, test)?;
    (t.level != Level::Semantics).then(|| {
        format!(
            "{} differs from the reference at the {} level: {}",
            e.id.label,
            t.level.key(),
            t.reason.clone().unwrap_or_default()
        )
    })
}

/// How `rqps compat` is given the engine of `run`, named as the report
/// names it: the run's own `--server` or `--target` (`mysql56=mysql@5.6.14`),
/// else the server it ran on (`mariadb`) or its target.
fn compat_engine(name: &str, run: &RunDoc) -> (&'static str, String) {
    let given = |flag: &str| {
        let line = &run.command_line;
        line.iter().enumerate().find_map(|(i, a)| {
            a.strip_prefix(&format!("{flag}="))
                .map(str::to_string)
                .or_else(|| (a == flag).then(|| line.get(i + 1).cloned()).flatten())
        })
    };
    let (flag, engine) = if let Some(s) = given("--server") {
        ("--server", s)
    } else if let Some(t) = given("--target") {
        ("--target", t)
    } else if run.server.is_some() {
        ("--server", product(&run.engine).to_string())
    } else if run.engine.name == "sqlite" {
        ("--target", "sqlite".to_string())
    } else {
        ("--target", run.target.clone())
    };
    (
        flag,
        crate::cmdline::shell_word(&format!("{name}={engine}")),
    )
}

/// The `rqps compat` that makes a record for the base's and a target's
/// engines in the results directory the report reads.
fn compat_command(base: (&str, &RunDoc), target: (&str, &RunDoc), results: &str) -> String {
    let (_, reference) = compat_engine(base.0, base.1);
    let (flag, engine) = compat_engine(target.0, target.1);
    format!("rqps compat --reference {reference} {flag} {engine}{results}")
}

/// The newest record that names both engines but is not whole (an engine
/// left out, a test the link failed in), when no whole one covers them.
fn partial<'a>(
    records: &'a [CompatRecord],
    a: &EngineInfo,
    b: &EngineInfo,
) -> Option<&'a CompatRecord> {
    records
        .iter()
        .rev()
        .find(|r| r.engine(a).is_some() && r.engine(b).is_some())
}

/// Marks the cells of each target whose engine is not the base's, as the
/// newest record that checked both says; returns one note per such target.
/// `names` and `runs` (the latest of each name): the base first, then the
/// targets in order; `results`: ` --results DIR` for the commands the notes
/// suggest, or nothing.
pub fn apply(
    blocks: &mut [GroupBlock],
    names: &[&String],
    runs: &[&RunDoc],
    records: &[CompatRecord],
    results: &str,
) -> Vec<String> {
    let engines: Vec<&EngineInfo> = runs.iter().map(|r| &r.engine).collect();
    let mut notes = Vec::new();
    let base = engines[0];
    for i in 1..engines.len() {
        let target = engines[i];
        if target.name == base.name && target.version == base.version {
            continue;
        }
        let pair = format!(
            "{} ({}) against {} ({})",
            names[i],
            shown(target),
            names[0],
            shown(base)
        );
        let Some((record, b, t)) = covering(records, base, target) else {
            if let Some(r) = partial(records, base, target) {
                notes.push(format!(
                    "{pair}: the compatibility record of {} (reference {}) could not check everything \
({}), so it leaves no test out; run `rqps compat` again over a sound link",
                    r.started,
                    r.reference.id.label,
                    r.gaps().join("; ")
                ));
            } else if product(target) != product(base) {
                notes.push(format!(
                    "{pair}: no compatibility record was made for these engines, so nothing says both did the same work; \
make one with `{}`",
                    compat_command((names[0], runs[0]), (names[i], runs[i]), results)
                ));
            }
            continue;
        };
        let mut left = 0;
        let mut seen: Vec<(String, String)> = Vec::new();
        for row in blocks.iter_mut().flat_map(|b| b.rows.iter_mut()) {
            seen.push((row.suite.clone(), row.test.clone()));
            let Some(Some(cell)) = row.cells.get_mut(i - 1) else {
                continue;
            };
            let why =
                differs(t, &row.suite, &row.test).or_else(|| differs(b, &row.suite, &row.test));
            if let Some(why) = why {
                cell.excluded = Some(why);
                left += 1;
            }
        }
        let outside: Vec<String> = [t, b]
            .iter()
            .flat_map(|e| e.tests.iter())
            .filter(|x| x.level != Level::Semantics)
            .filter(|x| !seen.iter().any(|(s, n)| x.covers(s, n)))
            .map(|x| format!("{} {}", x.suite, x.test))
            .fold(Vec::new(), |mut v, x| {
                if !v.contains(&x) {
                    v.push(x);
                }
                v
            });
        notes.push(format!(
            "{pair}: the compatibility record of {} (reference {}) {}{}",
            record.started,
            record.reference.id.label,
            match left {
                0 => "finds no test of these tables whose statements differ in semantics".to_string(),
                n => format!(
                    "leaves {n} ratio(s) out of the summaries: their statements differ in semantics (marked x)"
                ),
            },
            if outside.is_empty() {
                String::new()
            } else {
                format!(
                    "; also differing, in tests not in these tables: {}",
                    outside.join(", ")
                )
            }
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::load::{Options, build_with, read_results};
    use crate::results::compat::{EngineId, TestCompat};

    fn engine(label: &str, version: &str, differing: &[&str]) -> EngineCompat {
        EngineCompat {
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
            tests: ["point-query", "insert", "delete"]
                .iter()
                .map(|t| TestCompat {
                    suite: "sysbench".into(),
                    test: t.to_string(),
                    also: vec![format!("{t}.pre")],
                    level: if differing.contains(t) {
                        Level::Syntax
                    } else {
                        Level::Semantics
                    },
                    statements: 3,
                    reason: differing
                        .contains(t)
                        .then(|| "rows differ: SELECT c FROM sbtest1 WHERE id=5".into()),
                    not_checked: None,
                })
                .collect(),
            differences: Vec::new(),
            probes: Vec::new(),
            conditions: Vec::new(),
            suites: Vec::new(),
        }
    }

    fn record(target_differs: &[&str]) -> CompatRecord {
        CompatRecord {
            rqps_version: "0".into(),
            started: "2026-11-27T10:00:00Z".into(),
            finished: "2026-11-27T10:01:00Z".into(),
            command_line: Vec::new(),
            seed: 1,
            suites: Vec::new(),
            rules: Vec::new(),
            reference: engine("pg15", "15.8", &[]),
            targets: vec![engine("pg16", "16.4", target_differs)],
        }
    }

    fn opts() -> Options {
        Options {
            base: "pg15".into(),
            targets: Some(vec!["pg16".into()]),
            rules: Default::default(),
            all: false,
            sections: Vec::new(),
            workloads: Vec::new(),
            engines: Default::default(),
            allow_mismatch: false,
        }
    }

    fn fixture_runs() -> Vec<crate::results::RunDoc> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
        read_results(&dir).unwrap().0
    }

    #[test]
    fn a_record_marks_the_tests_whose_semantics_differ_and_the_summaries_leave_them_out() {
        let runs = fixture_runs();
        let plain = build_with(&runs, &[], &opts()).unwrap();
        assert!(
            plain.compat.is_empty(),
            "one product: no note without a record"
        );
        let guarded = build_with(&runs, &[record(&["point-query"])], &opts()).unwrap();
        let marked: Vec<(&str, &str)> = guarded
            .rows()
            .filter_map(|r| {
                let why = r.cells[0].as_ref()?.excluded.as_deref()?;
                Some((r.test.as_str(), why))
            })
            .collect();
        assert!(!marked.is_empty());
        assert!(
            marked.iter().all(|(t, _)| *t == "point-query"),
            "{marked:?}"
        );
        assert!(
            marked[0]
                .1
                .starts_with("pg16 differs from the reference at the syntax level: rows differ")
        );
        assert!(guarded.compat[0].contains("leaves"), "{:?}", guarded.compat);
        // The point group's summary is the geometric mean of the others.
        let gi = guarded
            .groups
            .iter()
            .position(|g| g.group == "point")
            .unwrap();
        let (p, g) = (&plain.groups[gi], &guarded.groups[gi]);
        let others: Vec<f64> = g
            .rows
            .iter()
            .filter_map(|r| r.cells[0].as_ref())
            .filter(|c| c.excluded.is_none())
            .map(|c| c.rel.ratio)
            .collect();
        assert_eq!(g.geomean[0], crate::report::stats::geomean(&others));
        assert_ne!(g.geomean[0], p.geomean[0]);
        // Every format says it: the marked cell and the reason.
        for f in [
            crate::report::export::Format::Term,
            crate::report::export::Format::Md,
            crate::report::export::Format::Html,
            crate::report::export::Format::Csv,
            crate::report::export::Format::Tsv,
            crate::report::export::Format::Json,
        ] {
            let text = crate::report::export::exporter(f, false).render(&guarded);
            assert!(
                text.contains("rows differ: SELECT c FROM sbtest1 WHERE id=5"),
                "{f:?}"
            );
        }
        // A record with no difference marks nothing and says so.
        let quiet = build_with(&runs, &[record(&[])], &opts()).unwrap();
        assert!(
            quiet
                .rows()
                .all(|r| r.cells.iter().flatten().all(|c| c.excluded.is_none()))
        );
        assert!(
            quiet.compat[0].contains("finds no test"),
            "{:?}",
            quiet.compat
        );
        assert_eq!(quiet.overall, plain.overall);
    }

    #[test]
    fn a_record_with_tests_the_link_failed_in_leaves_nothing_out_and_says_why() {
        let runs = fixture_runs();
        // As a garbling proxy made it: the target's tests at "none", but
        // because the connection broke, not because of the engine.
        let mut broken = record(&["point-query", "insert", "delete"]);
        for t in &mut broken.targets[0].tests {
            t.level = Level::None;
            t.not_checked = Some("the connection broke: protocol error".into());
        }
        let r = build_with(&runs, &[broken.clone()], &opts()).unwrap();
        assert!(
            r.rows()
                .all(|row| row.cells.iter().flatten().all(|c| c.excluded.is_none()))
        );
        assert_eq!(r.compat.len(), 1, "{:?}", r.compat);
        assert!(
            r.compat[0].contains("could not check everything")
                && r.compat[0].contains("3 of 3 test(s) not checked")
                && r.compat[0].contains("leaves no test out"),
            "{:?}",
            r.compat
        );
        let gate = crate::report::compare::gate(&r, 0.9);
        assert!(gate.excluded.is_empty(), "{:?}", gate.excluded);
        // A target the record left out: the same.
        broken.targets[0].tests.clear();
        broken.targets[0].left_out = Some("cannot connect".into());
        let r = build_with(&runs, &[broken], &opts()).unwrap();
        assert!(r.compat[0].contains("pg16 could not be checked: cannot connect"));
        assert!(
            r.rows()
                .all(|row| row.cells.iter().flatten().all(|c| c.excluded.is_none()))
        );
    }

    #[test]
    fn another_product_without_a_record_is_said_to_have_none() {
        let mut runs = fixture_runs();
        for r in runs.iter_mut().filter(|r| r.name == "pg16") {
            r.engine.name = "mysql".into();
            r.engine.version = "8.0.33".into();
        }
        let r = build_with(&runs, &[record(&["point-query"])], &opts()).unwrap();
        assert_eq!(r.compat.len(), 1);
        assert!(
            r.compat[0].contains("no compatibility record was made"),
            "{:?}",
            r.compat
        );
        assert!(
            r.rows()
                .all(|row| row.cells.iter().flatten().all(|c| c.excluded.is_none()))
        );
        let text =
            crate::report::export::exporter(crate::report::export::Format::Md, false).render(&r);
        assert!(text.contains("no compatibility record was made"), "{text}");
    }
}
