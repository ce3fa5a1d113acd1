//! A results directory written by rqps before the suite plug-in seam
//! (tests/fixtures/results-v1: sysbench and Insert Benchmark runs on SQLite,
//! names `a` and `b`, written by the binary of commit 7071344) still loads,
//! and `rqps report` prints exactly what that binary printed for it
//! (tests/fixtures/report-v1, also written by it; report.txt, .md and .json
//! re-recorded for issue 16's deliberate changes: the moderated t-test's
//! intervals, the page order, one busy-machine note per run with marks; and
//! all five for issue 27's: the summary's verdicts, and the summary records
//! of the CSV and TSV; report.txt, .md, .json and compare.txt for issue 38's:
//! a verdict from a busy machine marked `!` and not coloured, and said on
//! top and in the gate's line; report.txt, .md and the show-*.txt for issue
//! 57's: the significant changes after the summary, the answer again at the
//! end, lines within 120 columns, the server's own memory column). The
//! terminal report is the `--full` one, as the old binary printed every
//! section).

mod common;
use common::{rqps, text};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

#[test]
fn results_written_before_the_seam_report_exactly_as_they_did() {
    let results = fixtures().join("results-v1");
    for (format, file) in [
        ("term", "report.txt"),
        ("md", "report.md"),
        ("csv", "report.csv"),
        ("tsv", "report.tsv"),
        ("json", "report.json"),
    ] {
        let mut args = vec![
            "report",
            "--results",
            results.to_str().unwrap(),
            "--base",
            "a",
            "--format",
            format,
        ];
        if format == "term" {
            args.push("--full");
        }
        let o = rqps(&args);
        assert!(o.status.success(), "{format}: {}", text(&o));
        let want = std::fs::read_to_string(fixtures().join("report-v1").join(file)).unwrap();
        let got = String::from_utf8_lossy(&o.stdout);
        assert!(
            got == want,
            "{format} differs from what the old binary printed:\n--- old\n{want}\n--- new\n{got}"
        );
    }
}

#[test]
fn results_written_before_the_seam_show_and_gate_as_they_did() {
    let results = fixtures().join("results-v1");
    let r = results.to_str().unwrap();
    let o = rqps(&["compare", "--results", r, "--base", "a", "--target", "b"]);
    let want = std::fs::read_to_string(fixtures().join("report-v1").join("compare.txt")).unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), want);
    assert_eq!(
        o.status.code(),
        Some(1),
        "the old binary failed the gate too"
    );
    let mut runs: Vec<_> = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    runs.sort();
    for run in &runs {
        let o = rqps(&["show", "--results", r, run]);
        assert!(o.status.success(), "{run}: {}", text(&o));
        let want =
            std::fs::read_to_string(fixtures().join("report-v1").join(format!("show-{run}.txt")))
                .unwrap();
        assert_eq!(String::from_utf8_lossy(&o.stdout), want, "show {run}");
    }
}
