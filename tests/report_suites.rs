//! Snapshots of every exporter on the stored results of each suite with a
//! report part of its own (tests/fixtures/suites/SUITE: two names, `base` and
//! `target`, each one run of the suite's `ci` profile on embedded SQLite, or
//! RocksDB for dbbench), and of the `rqps compare` gate they feed. They pin
//! the parts' output byte for byte, whatever the code that renders them.
//!
//! `UPDATE_SNAPSHOTS=1 cargo test --test report_suites` rewrites the expected
//! files under tests/fixtures/suites-report/ (review the diff before committing).
//! To renew the stored results, run each suite twice, e.g.
//! `rqps run --suite tpcc --profile ci --name base --results tests/fixtures/suites/tpcc`
//! (then `--name target`), and update the snapshots.

mod common;

use std::path::{Path, PathBuf};

use rqps::report::compare::Rules;
use rqps::report::export::{self, Format};
use rqps::report::load::{self, Options};
use rqps::report::model::Report;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn report(suite: &str) -> Report {
    let opts = Options {
        base: "base".into(),
        targets: None,
        rules: Rules::default(),
        all: false,
        sections: rqps::suite::report_sections(),
        workloads: rqps::suite::workloads(),
        engines: rqps::plan::report::engine_keys(),
        allow_mismatch: false,
    };
    load::load(&fixtures().join("suites").join(suite), &opts).expect("fixture report builds")
}

/// Compares `got` with the expected file, or rewrites it with UPDATE_SNAPSHOTS=1.
fn snapshot(name: &str, got: &str) {
    common::snapshot(
        &fixtures().join("suites-report").join(name),
        got,
        "report_suites",
    );
}

/// Every format of `suite`'s report, and the gate of its first target.
fn every_format(suite: &str) {
    let r = report(suite);
    assert!(
        r.parts.iter().any(|b| b.section.suite() == suite),
        "{suite}: the fixture builds the suite's part"
    );
    for (ext, f, colour) in [
        ("txt", Format::Term, false),
        ("colour.txt", Format::Term, true),
        ("md", Format::Md, false),
        ("html", Format::Html, false),
        ("csv", Format::Csv, false),
        ("tsv", Format::Tsv, false),
        ("json", Format::Json, false),
    ] {
        let got = export::exporter(f, colour).render(&r);
        snapshot(&format!("{suite}.{ext}"), &got);
    }
    let gate = rqps::report::compare::gate(&r, 0.95);
    snapshot(&format!("{suite}.gate"), &format!("{gate:#?}\n"));
}

#[test]
fn ibench_report_is_unchanged_in_every_format() {
    every_format("ibench");
}

#[test]
fn linkbench_report_is_unchanged_in_every_format() {
    every_format("linkbench");
}

#[test]
fn tpcc_report_is_unchanged_in_every_format() {
    every_format("tpcc");
}

#[test]
fn pgbench_report_is_unchanged_in_every_format() {
    every_format("pgbench");
}

#[test]
fn dbbench_report_is_unchanged_in_every_format() {
    every_format("dbbench");
}

/// TPC-C's answer carries what makes tpmC comparable: warehouses,
/// terminals, keying (and efficiency only when keying is on), with the
/// durability settings; the other TPC-C sections stay behind --section.
#[test]
fn tpcc_s_answer_carries_its_warehouses_terminals_and_keying() {
    use export::Exporter as _;
    let r = report("tpcc");
    let answer = export::term::Term {
        colour: false,
        view: export::View::Answer,
    }
    .render(&r);
    let context = answer
        .split("TPC-C context (what makes tpmC comparable)\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no TPC-C context in the answer:\n{answer}"));
    let header = context.lines().nth(1).unwrap();
    for column in [
        "warehouses",
        "terminals",
        "keying",
        "isolation",
        "consistency",
        "tpmC",
    ] {
        assert!(header.contains(column), "{header}");
    }
    // No keying in the fixture: efficiency against the keyed rate says nothing.
    assert!(!header.contains("efficiency"), "{header}");
    assert!(context.contains("Keying and think times are off (--keying turns them on)"));
    assert!(context.contains("journal_mode=wal"), "{context}");
    assert!(!answer.contains("TPC-C transactions (retries"), "{answer}");
    for l in answer.lines() {
        assert!(l.chars().count() <= 120, "{l}");
    }
}
