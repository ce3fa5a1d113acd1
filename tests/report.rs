//! `rqps report` and `rqps compare` on the stored fixture results
//! (tests/fixtures/results, written by tests/fixtures/make-results.py):
//! snapshots of every exporter, exit codes through the real binary, and the
//! HTML page in headless Chromium.
//!
//! `UPDATE_SNAPSHOTS=1 cargo test --test report` rewrites the expected files
//! under tests/fixtures/report/ (review the diff before committing).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rqps::report::compare::Rules;
use rqps::report::export::{self, Format};
use rqps::report::load::{self, Options};
use rqps::report::model::{Report, Verdict};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn results() -> PathBuf {
    fixtures().join("results")
}

fn opts(base: &str, targets: Option<&[&str]>) -> Options {
    Options {
        base: base.into(),
        targets: targets.map(|t| t.iter().map(|s| s.to_string()).collect()),
        rules: Rules::default(),
        all: false,
        sections: rqps::suite::report_sections(),
        workloads: rqps::suite::workloads(),
        engines: rqps::plan::report::engine_keys(),
        allow_mismatch: false,
    }
}

fn fixture_report() -> Report {
    load::load(&results(), &opts("pg15", None)).expect("fixture report builds")
}

/// Compares `got` with the expected file, or rewrites it with UPDATE_SNAPSHOTS=1.
fn snapshot(name: &str, got: &str) {
    common::snapshot(&fixtures().join("report").join(name), got, "report");
}

fn render(r: &Report, f: Format, colour: bool) -> String {
    export::exporter(f, colour).render(r)
}

#[test]
fn snapshot_term() {
    let r = fixture_report();
    snapshot("report.txt", &render(&r, Format::Term, false));
    let coloured = render(&r, Format::Term, true);
    assert!(coloured.contains("\x1b[31m") && coloured.contains("\x1b[32m"));
    snapshot("report-colour.txt", &coloured);
}

/// What `rqps report` prints on a terminal by default: the answer, then the
/// names of the other sections; and one section by name.
#[test]
fn the_terminal_report_gives_the_answer_first_and_the_rest_on_request() {
    let r = fixture_report();
    let term = |view: export::View| {
        use export::Exporter as _;
        export::term::Term {
            colour: false,
            view,
        }
        .render(&r)
    };
    let answer = term(export::View::Answer);
    let full = render(&r, Format::Term, false);
    assert!(answer.lines().count() < full.lines().count());
    let at = |s: &str| {
        answer
            .find(s)
            .unwrap_or_else(|| panic!("no {s}:\n{answer}"))
    };
    assert!(at("Summary (geometric") < at("Significant changes"));
    assert!(at("Significant changes") < at("What differs"));
    assert!(at("What differs") < at("More in this report"));
    assert!(!answer.contains("Hardware efficiency per operation\n"));
    assert!(
        answer.contains("--section NAME for point-queries"),
        "{answer}"
    );
    snapshot("report.answer.txt", &answer);
    let one = term(export::View::Sections(vec!["writes".into()]));
    assert!(one.contains("\nWrites\n------\n"), "{one}");
    assert!(
        !one.contains("Point queries") && !one.contains("Summary"),
        "{one}"
    );
    // Through the CLI: the answer by default, everything with --full, an
    // unknown section refused with the names there are.
    let r = results();
    let r = r.to_str().unwrap();
    let (out, _) = text(&rqps(&["report", "--results", r, "--base", "pg15"]));
    assert_eq!(out, answer);
    let (out, _) = text(&rqps(&[
        "report",
        "--results",
        r,
        "--base",
        "pg15",
        "--full",
    ]));
    assert_eq!(out, full);
    let o = rqps(&[
        "report",
        "--results",
        r,
        "--base",
        "pg15",
        "--section",
        "nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("no such section; it has summary, "),
        "{:?}",
        text(&o)
    );
}

#[test]
fn snapshot_markdown() {
    snapshot("report.md", &render(&fixture_report(), Format::Md, false));
}

#[test]
fn snapshot_csv() {
    let csv = render(&fixture_report(), Format::Csv, false);
    // One row per target × test × threads × repeat: 11 reported rows × (3 + 3 + 2)
    // repeats, less the failed pg16-tuned insert; then the summary, one record
    // per target and group (4 and all tests), verdict last.
    assert_eq!(csv.lines().count(), 1 + 11 * 8 - 1 + 2 * 5);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .contains(",relative,ci_low,ci_high,verdict")
    );
    // The verdict is the last column here: no column after it is filled.
    assert!(
        csv.lines().any(
            |l| l.starts_with("pg16,postgres,16.4,sysbench,write,geomean,") && l.ends_with(",same")
        ),
        "{csv}"
    );
    snapshot("report.csv", &csv);
}

#[test]
fn snapshot_tsv() {
    snapshot("report.tsv", &render(&fixture_report(), Format::Tsv, false));
    // One thread count: exactly the reference's qps.rel layout.
    let (mut runs, _) = load::read_results(&results()).unwrap();
    for r in &mut runs {
        r.tests.retain(|t| t.threads == 1);
    }
    let one = load::build(&runs, &opts("pg15", Some(&["pg16", "pg16-tuned"]))).unwrap();
    let tsv = render(&one, Format::Tsv, false);
    assert!(
        tsv.starts_with("Relative to: pg15\ncol-1 : pg16\ncol-2 : pg16-tuned\n\ncol-1\tcol-2\n")
    );
    assert!(tsv.contains("\tpoint-query_range=100\n"));
    assert!(tsv.contains("\trandom-points_range=10\n"));
    snapshot("report-t1.tsv", &tsv);
}

#[test]
fn snapshot_json() {
    let json = render(&fixture_report(), Format::Json, false);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["base"], "pg15");
    assert_eq!(v["groups"].as_array().unwrap().len(), 4);
    snapshot("report.json", &json);
}

#[test]
fn snapshot_html() {
    let html = render(&fixture_report(), Format::Html, false);
    // Self-contained: nothing to fetch, no script.
    for bad in ["<script", "<link", " src=", "https://", "@import"] {
        assert!(!html.contains(bad), "HTML holds {bad}");
    }
    assert_eq!(
        html.matches("http://").count(),
        html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
    // pg16 and pg16-tuned share a version: no version-series line chart but
    // the summary's bars per group; 4 group bar charts, 2 thread sweeps, 11
    // per-second charts.
    assert_eq!(html.matches("class=\"series\"").count(), 0);
    assert_eq!(html.matches("<svg").count(), 1 + 4 + 2 + 11);
    // Each per-second chart behind one click: its test's line.
    assert_eq!(html.matches(": QPS per second</summary>").count(), 11);
    // The answer first: the summary, the scalability of the sweep and the
    // charts come before what differs.
    let at = |s: &str| html.find(s).unwrap_or_else(|| panic!("no {s}"));
    assert!(at("Summary (geometric") < at("<h2>Scalability"));
    assert!(at("<h2>Scalability") < at("<svg"));
    assert!(at("Summary: geometric mean of relative QPS") < at("What differs"));
    assert!(at("<h2>Point queries") < at("What differs"));
    assert!(html.contains("y-axis starts at"));
    assert!(html.contains("class=\"num red\"") && html.contains("class=\"num green\""));
    snapshot("report.html", &html);
}

#[test]
fn comparison_model_on_the_fixture() {
    let r = fixture_report();
    assert_eq!(r.targets, ["pg16", "pg16-tuned"]);
    assert_eq!(r.thread_counts, [1, 4]);
    let titles: Vec<&str> = r.groups.iter().map(|g| g.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "point queries",
            "range queries without aggregation",
            "range queries with aggregation",
            "writes"
        ]
    );
    let cell = |test: &str, threads: usize, t: usize| {
        let row = r
            .rows()
            .find(|x| x.test == test && x.threads == threads)
            .unwrap_or_else(|| panic!("no row {test} t={threads}"));
        row.cells[t].clone()
    };
    // pg16 is 10 % slower on point queries over 3 repeats: significant.
    let pq = cell("point-query", 1, 0).unwrap();
    assert_eq!(pq.rel.verdict, Verdict::Slower);
    assert_eq!(pq.side.n, 3);
    assert!((pq.rel.ratio - 0.90).abs() < 0.005);
    // Within the 2 % noise floor although significant: ~.
    assert_eq!(
        cell("update-index", 1, 0).unwrap().rel.verdict,
        Verdict::Same
    );
    // Noisy write-only: ~.
    assert_eq!(cell("write-only", 1, 0).unwrap().rel.verdict, Verdict::Same);
    // The failed repeat leaves one: untested.
    let ins = cell("insert", 1, 1).unwrap();
    assert_eq!((ins.side.n, ins.rel.verdict), (1, Verdict::Untested));
    assert_eq!(r.skipped.len(), 1);
    assert_eq!(r.skipped[0].status, "failed");
    // The outlier repeat is named.
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("outlier") && w.contains("20250101-170000-pg16")),
        "{:?}",
        r.warnings
    );
    // Warm-up steps only with --all.
    assert!(r.rows().all(|x| !x.test.ends_with(".warm")));
    let mut o = opts("pg15", None);
    o.all = true;
    let all = load::load(&results(), &o).unwrap();
    assert!(all.rows().any(|x| x.test == "point-query.warm"));
    // What differs: settings and config lines of pg16-tuned.
    let d = &r.differences[1];
    let names: Vec<&str> = d.settings.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["jit", "server_version", "shared_buffers"]);
    assert_eq!(d.config_target_only, ["shared_buffers = 1GB", "jit = off"]);
    assert_eq!(d.base_engine, "postgres 15.8");
    assert_eq!(d.target_engine, "postgres 16.4");
}

#[test]
fn unknown_names_are_refused_with_the_known_ones() {
    let e = load::load(&results(), &opts("pg14", None))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("pg14") && e.contains("pg15, pg16, pg16-tuned"),
        "{e}"
    );
    let e = load::load(&results(), &opts("pg15", Some(&["nope"])))
        .unwrap_err()
        .to_string();
    assert!(e.contains("nope") && e.contains("pg16-tuned"), "{e}");
    let e = load::load(&results(), &opts("pg15", Some(&["pg15"])))
        .unwrap_err()
        .to_string();
    assert!(e.contains("base"), "{e}");
}

// ---- through the binary ----

fn rqps(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .expect("rqps runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn compare(args: &[&str]) -> Output {
    let r = results();
    let mut v = vec!["compare", "--results", r.to_str().unwrap()];
    v.extend_from_slice(args);
    rqps(&v)
}

#[test]
fn compare_exits_1_on_a_significant_drop_and_names_the_tests() {
    let o = compare(&["--base", "pg15", "--target", "pg16", "--fail-below", "0.95"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    let fail = out.lines().find(|l| l.starts_with("FAIL:")).expect(&out);
    assert!(
        fail.contains("point-query t=1") && fail.contains("point-query t=4"),
        "{fail}"
    );
    assert!(fail.contains("random-points_range=10 t=1"), "{fail}");
    // 0.97 is significant but not below 0.95; update-index is within the floor.
    assert!(
        !fail.contains("read-only_range=100") && !fail.contains("update-index"),
        "{fail}"
    );
    assert!(
        !out.contains("\x1b["),
        "no colour when stdout is not a terminal"
    );
    assert!(err.contains("outlier"), "{err}");
}

#[test]
fn compare_exits_0_when_nothing_is_significantly_below() {
    // pg16's 10 % drop is significant but not below 0.8.
    let o = compare(&["--base", "pg15", "--target", "pg16", "--fail-below", "0.8"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("OK:"), "{out}");
}

#[test]
fn compare_exits_1_when_the_target_failed_a_test_the_base_has_and_names_it() {
    // pg16-tuned is within 0.9 everywhere, but its insert t=1 failed in one run.
    let o = compare(&[
        "--base",
        "pg15",
        "--target",
        "pg16-tuned",
        "--fail-below",
        "0.9",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(!out.contains("OK:"), "{out}");
    let fail = out
        .lines()
        .find(|l| l.starts_with("FAIL: pg16-tuned failed"))
        .expect(&out);
    assert!(
        fail.contains(
            "1 test(s) that pg15 has: insert t=1 (failed: server closed the connection, run 20250101-150000-pg16-tuned)"
        ),
        "{fail}"
    );
    assert!(err.contains("not counted: pg16-tuned insert t=1"), "{err}");
}

#[test]
fn compare_with_one_repeat_fails_on_the_ratio_and_says_untested() {
    let o = compare(&[
        "--base",
        "pg15",
        "--target",
        "pg16-tuned",
        "--fail-below",
        "1.08",
    ]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let fail = out.lines().find(|l| l.starts_with("FAIL:")).expect(&out);
    assert!(
        fail.contains("insert t=1 (1.07, untested: one repeat)"),
        "{fail}"
    );
}

#[test]
fn compare_noise_floor_swallows_small_drops() {
    // At 1.0, read-only_range=100 (0.97, CI 0.95..0.99) is significantly below;
    // update-index (0.99, CI up to 1.00) is not.
    let args = ["--base", "pg15", "--target", "pg16", "--fail-below", "1.0"];
    let o = compare(&args);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("read-only_range=100 t=1 (0.97)"), "{out}");
    assert!(
        !out.lines()
            .any(|l| l.starts_with("FAIL:") && l.contains("update-index"))
    );
    let mut wide = args.to_vec();
    wide.extend(["--noise-floor", "0.05"]);
    let (out, _) = text(&compare(&wide));
    let fail = out.lines().find(|l| l.starts_with("FAIL:")).expect(&out);
    assert!(!fail.contains("read-only_range=100"), "{fail}");
}

#[test]
fn compare_and_report_exit_2_on_bad_input() {
    for (args, says) in [
        (
            vec!["--base", "pg14", "--target", "pg16"],
            "pg15, pg16, pg16-tuned",
        ),
        (vec!["--base", "pg15", "--target", "pg17"], "pg17"),
        (vec!["--base", "pg15", "--target", "pg15"], "base"),
        (
            vec!["--base", "pg15", "--target", "pg16", "--fail-below", "0"],
            "--fail-below",
        ),
        (
            vec!["--base", "pg15", "--target", "pg16", "--noise-floor", "2"],
            "--noise-floor",
        ),
    ] {
        let o = compare(&args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {out}{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let o = rqps(&[
        "compare",
        "--results",
        "/nonexistent/rqps",
        "--base",
        "a",
        "--target",
        "b",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = rqps(&["report", "--results", "/nonexistent/rqps", "--base", "a"]);
    assert_eq!(o.status.code(), Some(2));
    let r = results();
    let o = rqps(&["report", "--results", r.to_str().unwrap(), "--base", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("pg15, pg16, pg16-tuned"));
    let o = rqps(&[
        "report",
        "--results",
        r.to_str().unwrap(),
        "--base",
        "pg15",
        "--format",
        "pdf",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn report_writes_every_format_to_a_file() {
    let d = tempfile::tempdir().unwrap();
    let r = results();
    for f in ["term", "md", "html", "csv", "tsv", "json"] {
        let path = d.path().join(format!("out.{f}"));
        let o = rqps(&[
            "report",
            "--results",
            r.to_str().unwrap(),
            "--base",
            "pg15",
            "--targets",
            "pg16",
            "--format",
            f,
            "-o",
            path.to_str().unwrap(),
        ]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{f}: {err}");
        assert!(out.is_empty(), "{f}: nothing on stdout with -o");
        let body = std::fs::read_to_string(&path).unwrap();
        assert!(body.contains("pg16") && !body.contains("pg16-tuned"), "{f}");
        assert!(!body.contains("\x1b["), "{f}: no colour in a file");
    }
    // The data formats keep notes on stderr.
    let o = rqps(&[
        "report",
        "--results",
        r.to_str().unwrap(),
        "--base",
        "pg15",
        "--format",
        "tsv",
    ]);
    let (out, err) = text(&o);
    assert!(out.starts_with("Relative to: pg15\n"));
    assert!(err.contains("outlier") && !out.contains("outlier"));
}

// ---- the HTML page in a real browser ----

fn browser() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|b| {
        Command::new(b)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Distinct colours, the share of non-white pixels, and the pixel count of
/// each colour of `probe`, in an RGB(A) PNG.
fn png_stats(path: &Path, probe: &[(u8, u8, u8)]) -> (usize, f64, Vec<usize>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bytes = &buf[..info.buffer_size()];
    let step = match info.color_type {
        png::ColorType::Rgba => 4,
        png::ColorType::Rgb => 3,
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    let mut colours = std::collections::HashSet::new();
    let mut non_white = 0usize;
    let mut hits = vec![0usize; probe.len()];
    let px = bytes.len() / step;
    for p in bytes.chunks_exact(step) {
        let c = (p[0], p[1], p[2]);
        colours.insert(c);
        if let Some(i) = probe.iter().position(|x| *x == c) {
            hits[i] += 1;
        }
        if p[0] < 250 || p[1] < 250 || p[2] < 250 {
            non_white += 1;
        }
    }
    (colours.len(), non_white as f64 / px as f64, hits)
}

/// Headless Chromium's screenshot of `page` at `size` ("W,H"), into `shot`.
fn screenshot(browser: &str, page: &Path, shot: &Path, tmp: &Path, size: &str) {
    let profile = tmp.join("profile");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            &format!("--user-data-dir={}", profile.display()),
            &format!("--screenshot={}", shot.display()),
            &format!("--window-size={size}"),
            &format!("file://{}", page.display()),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("chromium starts");
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish in 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(shot.is_file(), "no screenshot written");
}

#[test]
fn html_report_renders_in_headless_chromium() {
    let required = std::env::var("RQPS_REQUIRE_SERVERS").is_ok_and(|v| v == "1");
    let Some(browser) = browser() else {
        if required {
            panic!("RQPS_REQUIRE_SERVERS=1 but no chromium on PATH (apt-get install chromium)");
        }
        eprintln!(
            "skipping the browser check: no chromium on PATH (set RQPS_REQUIRE_SERVERS=1 to make this fail)"
        );
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let page = d.path().join("report.html");
    std::fs::write(&page, render(&fixture_report(), Format::Html, false)).unwrap();
    let shot = d.path().join("shot.png");
    screenshot(browser, &page, &shot, d.path(), "1200,2000");
    // The first target's bars (#4e79a7), a red cell (#ff9a9a), a green one (#81ffa6).
    let probe = [(0x4e, 0x79, 0xa7), (0xff, 0x9a, 0x9a), (0x81, 0xff, 0xa6)];
    let (colours, ink, hits) = png_stats(&shot, &probe);
    // A blank page has one colour; text alone a few hundred grey shades. The
    // coloured cells and bars add many more.
    assert!(
        colours > 300,
        "only {colours} distinct colours: is the page blank?"
    );
    assert!(
        ink > 0.05,
        "only {:.1} % of the page is not white",
        ink * 100.0
    );
    assert!(
        hits.iter().all(|n| *n > 500),
        "bar and cell colours missing from the screenshot: {hits:?}"
    );
    if std::env::var("RQPS_KEEP_SCREENSHOT").is_ok() {
        let keep = std::env::temp_dir().join("rqps-report-shot.png");
        std::fs::copy(&shot, &keep).unwrap();
        eprintln!("screenshot kept at {}", keep.display());
    }
}

// ---- five versions (synthesized from the fixture's pg15 run) ----

const FIVE: [&str; 5] = ["pg12", "pg13", "pg14", "pg15", "pg16"];

fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Five names, two repeats each, interleaved as a matrix runs them: point
/// and range tests 1 to 3 % slower per version, writes 2 to 4 % faster, ±1 %
/// between repeats. pg16 sets work_mem in its config and has two settings the others
/// lack; pg12 has one of its own. The first pg14 run found the machine busy
/// before two of its steps.
fn five_versions(dir: &Path) {
    let src = results().join("20250101-100000-pg15");
    let run = read_json(&src.join("run.json"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(src.join("tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for rep in 0..2 {
        for (k, name) in FIVE.iter().enumerate() {
            let id = format!("2025010{}-1{k}0000-{name}", rep + 1);
            let d = dir.join(&id);
            std::fs::create_dir_all(d.join("tests")).unwrap();
            let mut r = run.clone();
            r["run_id"] = id.clone().into();
            r["name"] = (*name).into();
            r["started"] = format!("2025-01-0{}T1{k}:00:00Z", rep + 1).into();
            r["engine"]["version"] = format!("{}.0", 12 + k).into();
            let s = &mut r["settings"];
            s["server_version"] = format!("{}.0", 12 + k).into();
            match *name {
                "pg12" => s["old_in_12"] = "on".into(),
                "pg16" => {
                    s["new_in_16_a"] = "1".into();
                    s["new_in_16_b"] = "2".into();
                    s["work_mem"] = "64MB".into();
                    r["server"]["config"]
                        .as_array_mut()
                        .unwrap()
                        .push("work_mem = 64MB".into());
                }
                _ => s["work_mem"] = "4MB".into(),
            }
            std::fs::write(d.join("run.json"), r.to_string()).unwrap();
            for (i, f) in files.iter().enumerate() {
                let mut t = read_json(f);
                let spread = 0.01 * (i % 3) as f64;
                let per_version = if t["group"] == "write" {
                    1.04 - spread
                } else {
                    0.97 + spread
                };
                let wobble = 1.0 + 0.01 * if (i + rep) % 2 == 0 { 1.0 } else { -1.0 };
                let scale = per_version_pow(per_version, k) * wobble;
                t["qps"] = (t["qps"].as_f64().unwrap() * scale).into();
                for p in t["per_second"].as_array_mut().unwrap() {
                    p["qps"] = (p["qps"].as_f64().unwrap() * scale).into();
                }
                if *name == "pg14" && rep == 0 && (i == 2 || i == 9) {
                    t["warnings"] = serde_json::json!([format!(
                        "{}: other processes used 60% of all CPUs just before this step (threshold 20%); its figures may be off",
                        rqps::results::BUSY_WARNING
                    )]);
                }
                std::fs::write(d.join("tests").join(f.file_name().unwrap()), t.to_string())
                    .unwrap();
            }
        }
    }
}

fn per_version_pow(f: f64, k: usize) -> f64 {
    f.powi(k as i32)
}

fn five_report(dir: &Path) -> Report {
    let targets: Vec<&str> = FIVE[1..].to_vec();
    load::load(dir, &opts("pg12", Some(&targets))).expect("five-version report builds")
}

#[test]
fn a_busy_machine_is_one_note_per_run_and_a_mark_on_its_results() {
    let d = tempfile::tempdir().unwrap();
    five_versions(d.path());
    let r = five_report(d.path());
    let busy: Vec<&String> = r
        .warnings
        .iter()
        .filter(|w| w.contains(rqps::results::BUSY_WARNING))
        .collect();
    assert_eq!(busy.len(), 1, "{:?}", r.warnings);
    assert!(
        busy[0].contains("pg14 run 20250101-120000-pg14") && busy[0].contains("2 of its steps"),
        "{busy:?}"
    );
    let text = render(&r, Format::Term, false);
    let verdict_marked = |l: &str| ["+!", "-!", "~!", "?!"].iter().any(|m| l.contains(m));
    let marked: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" t=") && verdict_marked(l))
        .collect();
    let values: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" t=") && l.contains(" !"))
        .collect();
    // Two rows, their verdicts marked in the relative table and their
    // values in the QPS table; the groups they are in, in the summary.
    assert_eq!(
        (marked.len(), values.len()),
        (2, 2),
        "{marked:#?} {values:#?}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("  point queries") && verdict_marked(l)),
        "{text}"
    );
    // The first lines say how many, and what to do.
    let top: String = text.lines().take(10).collect::<Vec<_>>().join("\n");
    assert!(
        top.contains("busy machine: 2 of ") && top.contains("Rerun them on an idle machine"),
        "{top}"
    );
    assert!(export::legend(&r).contains("!: a repeat ran while the machine was busy"));
    // Not coloured: a busy verdict carries no ANSI colour, the others do.
    let coloured = render(&r, Format::Term, true);
    for l in coloured.lines().filter(|l| verdict_marked(l)) {
        let cell = l.split("  ").find(|c| verdict_marked(c)).unwrap();
        assert!(!cell.contains("\x1b["), "{l:?}");
    }
    assert!(coloured.contains("\x1b[3"));
    // Without the warning nothing is marked.
    let quiet = render(&fixture_report(), Format::Term, false);
    assert!(!quiet.contains(" !") && !quiet.contains("busy machine"));
}

#[test]
fn what_differs_lists_config_settings_first_and_folds_one_version_only_ones() {
    let d = tempfile::tempdir().unwrap();
    five_versions(d.path());
    let html = render(&five_report(d.path()), Format::Html, false);
    let pg16 = &html[html.find("<h3>pg16 against pg12").unwrap()..];
    let at = |s: &str| pg16.find(s).unwrap_or_else(|| panic!("no {s}"));
    assert!(at("set by a config") < at("default differs"));
    assert!(at("<td>work_mem</td>") < at("<td>server_version</td>"));
    assert!(
        pg16.contains(
            "<details><summary>3 server setting(s) that only one of pg12 and pg16 has</summary>"
        ),
        "{}",
        &pg16[..2000.min(pg16.len())]
    );
    assert!(at("<details>") < at("<td>new_in_16_a</td>"));
    assert!(at("<td>new_in_16_a</td>") < at("</details>"));
}

#[test]
fn a_five_version_report_shows_a_chart_within_the_first_1200_pixels() {
    let required = std::env::var("RQPS_REQUIRE_SERVERS").is_ok_and(|v| v == "1");
    let Some(browser) = browser() else {
        assert!(!required, "RQPS_REQUIRE_SERVERS=1 but no chromium on PATH");
        eprintln!("skipping: no chromium on PATH (set RQPS_REQUIRE_SERVERS=1 to make this fail)");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    five_versions(d.path());
    let page = d.path().join("five.html");
    let html = render(&five_report(d.path()), Format::Html, false);
    // The names ran a thread sweep (point-query and update-index at 1 and 4
    // threads): its scalability section comes right after the summary, then
    // the version series (issue 27).
    let at = |s: &str| html.find(s).unwrap_or_else(|| panic!("no {s}"));
    assert!(at("<h2>Summary") < at("<h2>Scalability"));
    assert!(at("<h2>Scalability") < at("<h2>Relative QPS by version"));
    std::fs::write(&page, &html).unwrap();
    let shot = d.path().join("five.png");
    // The window is the first 1,200 pixels: the screenshot holds nothing below.
    screenshot(browser, &page, &shot, d.path(), "1200,1200");
    // The thread-sweep charts' first target's line (#4e79a7, drawn 2 px wide).
    let (_, _, hits) = png_stats(&shot, &[(0x4e, 0x79, 0xa7)]);
    assert!(hits[0] > 300, "no chart in the first 1,200 px: {hits:?}");
    if std::env::var("RQPS_KEEP_SCREENSHOT").is_ok() {
        let keep = std::env::temp_dir().join("rqps-five-shot.png");
        std::fs::copy(&shot, &keep).unwrap();
        eprintln!("screenshot kept at {}", keep.display());
    }
}

// ---- like with like (issue 27) ----

/// The fixture's runs of `names`, copied into `dir`.
fn copy_runs(dir: &Path, names: &[&str]) {
    for e in std::fs::read_dir(results()).unwrap() {
        let src = e.unwrap().path();
        let run = read_json(&src.join("run.json"));
        if !names.contains(&run["name"].as_str().unwrap()) {
            continue;
        }
        let dst = dir.join(src.file_name().unwrap());
        std::fs::create_dir_all(dst.join("tests")).unwrap();
        std::fs::copy(src.join("run.json"), dst.join("run.json")).unwrap();
        for t in std::fs::read_dir(src.join("tests")).unwrap() {
            let t = t.unwrap().path();
            std::fs::copy(&t, dst.join("tests").join(t.file_name().unwrap())).unwrap();
        }
    }
}

/// Copies of `from`'s fixture runs named `to`, with `params` changed.
fn derive(dir: &Path, from: &str, to: &str, params: serde_json::Value) {
    for e in std::fs::read_dir(results()).unwrap() {
        let src = e.unwrap().path();
        let mut run = read_json(&src.join("run.json"));
        if run["name"] != from {
            continue;
        }
        let id = src.file_name().unwrap().to_string_lossy().replace(from, to);
        let dst = dir.join(&id);
        std::fs::create_dir_all(dst.join("tests")).unwrap();
        run["name"] = to.into();
        run["run_id"] = id.clone().into();
        for (k, v) in params.as_object().unwrap() {
            run["params"][k] = v.clone();
        }
        std::fs::write(dst.join("run.json"), run.to_string()).unwrap();
        for t in std::fs::read_dir(src.join("tests")).unwrap() {
            let t = t.unwrap().path();
            std::fs::copy(&t, dst.join("tests").join(t.file_name().unwrap())).unwrap();
        }
    }
}

/// pg15 (the base), pg16 (the same workload) and big: pg16's results under
/// a workload of 100,000 rows and 3 s reads (the base's: 10,000 and 5 s),
/// and another TLS and server CPU set, which a comparison may be about.
fn with_big() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    copy_runs(d.path(), &["pg15", "pg16"]);
    derive(
        d.path(),
        "pg16",
        "big",
        serde_json::json!({"table_size": 100000, "read_secs": 3.0}),
    );
    derive(
        d.path(),
        "pg16",
        "tls",
        serde_json::json!({"tls": "TLSv1.3 TLS_AES_256_GCM_SHA384", "server_cpus": "0-3", "seed": 7}),
    );
    d
}

const BIG: &str = "not compared: big (table_size 100000 vs 10000, read_secs 3 vs 5)";

fn report_of(dir: &Path, args: &[&str]) -> Output {
    let mut v = vec!["report", "--results", dir.to_str().unwrap()];
    v.extend_from_slice(args);
    rqps(&v)
}

#[test]
fn compare_refuses_a_target_of_another_workload_with_exit_2_and_one_line() {
    let d = with_big();
    let r = d.path().to_str().unwrap();
    let o = rqps(&[
        "compare",
        "--results",
        r,
        "--base",
        "pg15",
        "--target",
        "big",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(BIG) && err.contains("--allow-mismatch"),
        "{err}"
    );
    // Quiet: TLS, CPU budgets and the seed may differ.
    let o = rqps(&[
        "compare",
        "--results",
        r,
        "--base",
        "pg15",
        "--target",
        "tls",
    ]);
    let (out, err) = text(&o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "pg16's drop fails the gate: {out}{err}"
    );
    assert!(
        !out.contains("not compared") && !err.contains("not compared"),
        "{out}{err}"
    );
    assert!(!out.contains("workload"), "{out}");
}

#[test]
fn allow_mismatch_compares_anyway_and_says_so_on_top() {
    let d = with_big();
    let r = d.path().to_str().unwrap();
    let o = rqps(&[
        "compare",
        "--results",
        r,
        "--base",
        "pg15",
        "--target",
        "big",
        "--allow-mismatch",
    ]);
    let (out, err) = text(&o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "pg16's results fail the gate: {out}{err}"
    );
    assert!(
        out.starts_with(
            "compared although the workload is not pg15's (--allow-mismatch): big (table_size 100000 vs 10000, read_secs 3 vs 5)\n"
        ),
        "{out}"
    );
    assert!(out.contains("FAIL:"), "{out}");
    let o = report_of(d.path(), &["--base", "pg15", "--allow-mismatch"]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(0));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0], "Relative QPS: big, pg16, tls against pg15",
        "{out}"
    );
    assert!(
        lines[2].contains("compared although the workload is not pg15's"),
        "{out}"
    );
    assert!(lines[2].contains("big (table_size"), "{out}");
    assert!(!out.contains("not compared"), "{out}");
}

#[test]
fn report_leaves_a_target_of_another_workload_out_with_a_line_on_top() {
    let d = with_big();
    // Without --targets: only the names whose workload is the base's.
    for args in [
        &["--base", "pg15"][..],
        &["--base", "pg15", "--targets", "pg16,big,tls"],
    ] {
        let o = report_of(d.path(), args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{err}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "Relative QPS: pg16, tls against pg15", "{out}");
        assert!(lines[2].starts_with(&format!("  - {BIG}")), "{out}");
        let summary = out.split("\nRelative QPS =").next().unwrap();
        assert!(
            summary.contains("pg16") && !summary.contains("big  "),
            "{summary}"
        );
        assert!(
            !out.contains("big,postgres") && !out.contains("| big |"),
            "{out}"
        );
    }
    for (format, top) in [
        ("md", format!("- {}", BIG)),
        ("html", format!("<ul><li>{BIG}")),
    ] {
        let o = report_of(d.path(), &["--base", "pg15", "--format", format]);
        let (out, _) = text(&o);
        let first_h2 = out.find("## ").or(out.find("<h2>")).unwrap();
        let at = out
            .find(&top)
            .unwrap_or_else(|| panic!("{format}: no {top}: {out}"));
        assert!(at < first_h2, "{format}: the line is not on top");
    }
    // The data formats say it on stderr and leave big out.
    let o = report_of(d.path(), &["--base", "pg15", "--format", "csv"]);
    let (out, err) = text(&o);
    assert!(err.contains(BIG) && !out.contains("\nbig,"), "{err}");
    // Named alone, it is refused as compare refuses it.
    let o = report_of(d.path(), &["--base", "pg15", "--targets", "big"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(err.contains(BIG), "{err}");
}

#[test]
fn a_matched_pair_is_compared_without_a_line() {
    let r = fixture_report();
    assert!(r.not_compared.is_empty() && r.unlike.is_empty());
    for f in [Format::Term, Format::Md, Format::Html, Format::Json] {
        let out = render(&r, f, false);
        assert!(
            !out.contains("not compared") && !out.contains("compared although"),
            "{f:?}"
        );
    }
    assert!(export::mismatch_lines(&r).is_empty());
}

// ---- verdicts in the summary ----

/// The summary row of `group` in a term or Markdown table.
fn summary_row<'a>(out: &'a str, group: &str) -> &'a str {
    out.lines()
        .find(|l| l.trim_start_matches(['|', ' ']).starts_with(group))
        .unwrap_or_else(|| panic!("no row {group}: {out}"))
}

#[test]
fn a_group_of_not_significant_tests_is_marked_and_uncoloured_in_every_format() {
    // pg16's writes are ~ in every test (update-index within the noise floor,
    // write-only and insert noisy): its summary is 0.98 ~, grey. Its point
    // queries are 10 % slower in every test: 0.90 -, red.
    let r = fixture_report();
    let writes = &r.groups[3];
    assert_eq!(writes.group, "write");
    assert!(
        writes
            .rows
            .iter()
            .all(|row| row.cells[0].as_ref().unwrap().rel.verdict == Verdict::Same)
    );
    let s = writes.summary[0].as_ref().unwrap();
    assert_eq!(
        (s.verdict, s.shade),
        (Verdict::Same, rqps::report::model::Shade::Grey)
    );
    let p = r.groups[0].summary[0].as_ref().unwrap();
    assert_eq!(
        (p.verdict, p.shade),
        (Verdict::Slower, rqps::report::model::Shade::Red)
    );

    let term = render(&r, Format::Term, true);
    let row = summary_row(&term, "writes");
    assert!(row.contains("\x1b[90m0.98 ~\x1b[0m"), "{row:?}");
    let row = summary_row(&term, "point queries");
    assert!(row.contains("\x1b[31m0.90 -\x1b[0m"), "{row:?}");
    let md = render(&r, Format::Md, false);
    let row = summary_row(&md, "writes");
    assert!(row.contains("| 0.98 \\~ |"), "{row}");
    assert!(summary_row(&md, "point queries").contains("| **0.90 -** |"));
    let html = render(&r, Format::Html, false);
    assert!(
        html.contains("<td>writes</td><td class=\"num grey\">0.98 ~</td>"),
        "{html}"
    );
    assert!(html.contains("<td>point queries</td><td class=\"num red\">0.90 -</td>"));
    let csv = render(&r, Format::Csv, false);
    let row = csv
        .lines()
        .find(|l| l.starts_with("pg16,postgres,16.4,sysbench,write,geomean,"))
        .unwrap();
    assert!(row.contains(",same,") || row.ends_with(",same"), "{row}");
    assert!(csv.lines().any(
        |l| l.starts_with("pg16,postgres,16.4,sysbench,point,geomean,") && l.contains(",slower")
    ));
    let tsv = render(&r, Format::Tsv, false);
    let summary = &tsv[tsv.find("\nsummary\n").unwrap()..];
    assert!(
        summary.contains("\n0.98\t~\t1.10\t?\twrites\n"),
        "{summary}"
    );
    assert!(
        summary.contains("\n0.90\t-\t1.07\t+\tpoint queries\n"),
        "{summary}"
    );
    let json: serde_json::Value = serde_json::from_str(&render(&r, Format::Json, false)).unwrap();
    assert_eq!(json["groups"][3]["summary"][0]["verdict"], "same");
    assert_eq!(json["groups"][3]["summary"][0]["shade"], "grey");
    assert_eq!(json["groups"][0]["summary"][0]["verdict"], "slower");
}

// ---- charts that fit ----

#[test]
fn a_line_chart_joins_versions_and_configs_get_bars() {
    // pg16 and pg16-tuned share 16.4: configs, so the summary's bars.
    let html = render(&fixture_report(), Format::Html, false);
    assert!(!html.contains("class=\"series\""));
    assert!(!html.contains("Relative QPS by version"));
    assert!(html.contains("aria-label=\"Summary: geometric mean of relative QPS against pg15\""));
    // Five versions of one engine: the line chart, no summary bars.
    let d = tempfile::tempdir().unwrap();
    five_versions(d.path());
    let r = five_report(d.path());
    assert!(export::is_version_series(&r));
    let html = render(&r, Format::Html, false);
    assert_eq!(html.matches("class=\"series\"").count(), 4);
    assert!(!html.contains("Summary: geometric mean of relative QPS"));
}

// ---- a sweep is a study ----

#[test]
fn the_scalability_section_comes_right_after_the_summary() {
    let r = fixture_report();
    let term = render(&r, Format::Term, false);
    let h2: Vec<&str> = term
        .lines()
        .zip(term.lines().skip(1))
        .filter(|(_, next)| next.starts_with("---") && !next.starts_with("  "))
        .map(|(l, _)| l)
        .collect();
    assert_eq!(
        h2[..2],
        ["Summary (geometric mean of relative QPS)", "Scalability"],
        "{h2:?}"
    );
    let md = render(&r, Format::Md, false);
    let h2: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("## "))
        .take(2)
        .collect();
    assert_eq!(
        h2,
        [
            "## Summary (geometric mean of relative QPS)",
            "## Scalability"
        ]
    );
    let html = render(&r, Format::Html, false);
    let h2: Vec<&str> = html
        .match_indices("<h2>")
        .take(2)
        .map(|(i, _)| &html[i..i + 16])
        .collect();
    assert_eq!(h2, ["<h2>Summary (geo", "<h2>Scalability<"]);
    // Quiet: at one thread count there is no such section.
    let (mut runs, _) = load::read_results(&results()).unwrap();
    for r in &mut runs {
        r.tests.retain(|t| t.threads == 1);
    }
    let one = load::build(&runs, &opts("pg15", None)).unwrap();
    assert!(!render(&one, Format::Term, false).contains("Scalability"));
}

#[test]
fn a_sweep_of_the_base_alone_is_a_scalability_study() {
    let d = tempfile::tempdir().unwrap();
    copy_runs(d.path(), &["pg15"]);
    let o = report_of(d.path(), &["--base", "pg15"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.starts_with("Thread sweep: pg15\n"), "{out}");
    let after_title = &out[out.find("\n\n").unwrap()..];
    assert!(
        after_title.starts_with("\n\nScalability\n-----------\n"),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
            == [
                "point-query",
                "pg15",
                "41985",
                "1.00",
                "3.61",
                "151447",
                "4"
            ]),
        "{out}"
    );
    assert!(
        !out.contains("nothing to compare") && !out.contains("Summary"),
        "{out}"
    );
    let md = report_of(d.path(), &["--base", "pg15", "--format", "md"]);
    let md = String::from_utf8_lossy(&md.stdout).into_owned();
    assert!(
        md.starts_with("# Thread sweep: pg15\n\n## Scalability\n"),
        "{md}"
    );
    let html = report_of(d.path(), &["--base", "pg15", "--format", "html"]);
    let html = String::from_utf8_lossy(&html.stdout).into_owned();
    assert!(
        html.contains("<h1>Thread sweep: pg15</h1>\n<h2>Scalability</h2>"),
        "{html}"
    );
    assert_eq!(
        html.matches("QPS by thread count</title>").count(),
        2,
        "{html}"
    );
    // Quiet: a base alone at one thread count has nothing to show.
    let (mut runs, _) = load::read_results(d.path()).unwrap();
    for r in &mut runs {
        r.tests.retain(|t| t.threads == 1);
    }
    let e = load::build(&runs, &opts("pg15", None))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("nothing to compare") && e.contains("--threads 1,2,4"),
        "{e}"
    );
}

/// A real sweep on embedded SQLite (the ci profile, point-query at 1 and 2
/// threads): `show` gives each thread count's speed-up, and `report --base`
/// of that name alone its scalability section.
#[test]
fn show_and_report_of_a_real_sweep_give_the_speed_up() {
    let d = tempfile::tempdir().unwrap();
    let res = d.path().join("results");
    let db = format!("sqlite:{}", d.path().join("db.sqlite").display());
    let r = res.to_str().unwrap();
    let o = rqps(&[
        "run",
        "--profile",
        "ci",
        "--tests",
        "point-query",
        "--threads",
        "1,2",
        "--name",
        "lite",
        "--results",
        r,
        "--target",
        &db,
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let o = rqps(&["show", "--results", r]);
    let (out, _) = text(&o);
    let header = out
        .lines()
        .find(|l| l.trim_start().starts_with("test "))
        .unwrap();
    assert!(header.contains("QPS  speed-up"), "{out}");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with("point-query"))
        .take(2)
        .collect();
    assert!(rows[0].contains(" 1.00 "), "{out}");
    let s: f64 = rows[1].split_whitespace().nth(3).unwrap().parse().unwrap();
    assert!(s > 0.0, "{out}");
    let o = rqps(&["report", "--results", r, "--base", "lite"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        out.contains("\nScalability\n") && out.contains("  point-query  lite "),
        "{out}"
    );
    // Quiet: one thread count, no speed-up column.
    let one = d.path().join("one");
    let db = format!("sqlite:{}", d.path().join("one.sqlite").display());
    let o = rqps(&[
        "run",
        "--profile",
        "ci",
        "--tests",
        "point-query",
        "--results",
        one.to_str().unwrap(),
        "--target",
        &db,
        "--name",
        "lite",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let (out, _) = text(&rqps(&["show", "--results", one.to_str().unwrap()]));
    assert!(out.contains("QPS") && !out.contains("speed-up"), "{out}");
}

#[test]
fn a_thread_count_only_the_target_ran_is_a_row_with_a_dash_for_the_base() {
    // pg15 at one thread only; pg16 and pg16-tuned at 1 and 4.
    let (mut runs, _) = load::read_results(&results()).unwrap();
    for r in runs.iter_mut().filter(|r| r.name == "pg15") {
        r.tests.retain(|t| t.threads == 1);
    }
    let r = load::build(&runs, &opts("pg15", None)).unwrap();
    let row = r
        .rows()
        .find(|x| x.test == "point-query" && x.threads == 4)
        .expect("the target's thread count is a row");
    assert!(!row.base_ran() && row.cells.iter().all(Option::is_none));
    let term = render(&r, Format::Term, false);
    let cells = |label: &str| -> Vec<Vec<String>> {
        term.lines()
            .filter(|l| l.trim_start().starts_with(label))
            .map(|l| l.split_whitespace().skip(2).map(String::from).collect())
            .collect()
    };
    // The relative table: - for each target; the QPS table: - for the base.
    let rows = cells("point-query t=4");
    assert_eq!(rows[0], ["-", "-"], "{term}");
    assert_eq!(rows[1][0], "-", "{term}");
    assert!(rows[1][1].parse::<f64>().unwrap() > 100_000.0, "{term}");
    // The target's curve has both points; the base, one, has none.
    let curves = rqps::report::scalability::curves(&r);
    assert!(
        curves
            .iter()
            .any(|c| c.name == "pg16" && c.points.len() == 2)
    );
    assert!(curves.iter().all(|c| c.name != "pg15"));
    // Not missing from the gate, and no "not compared" warning.
    let gate = rqps::report::compare::gate(&r, 0.5);
    assert!(
        gate.missing.is_empty() && gate.broken.iter().all(|b| !b.contains("t=4")),
        "{gate:?}"
    );
    assert!(
        !r.warnings.iter().any(|w| w.contains("did not run")),
        "{:?}",
        r.warnings
    );
    // Quiet: where both ran every thread count, every row has the base.
    assert!(fixture_report().rows().all(|x| x.base_ran()));
}

/// A copy of the fixture results where each of 20 more runs of pg16 has the
/// same warning on its point-query t=1 (a run id and figure of its own).
fn twenty_warned_runs(dir: &Path) {
    let from = results();
    for e in std::fs::read_dir(&from).unwrap().flatten() {
        copy_dir(&e.path(), &dir.join(e.file_name()));
    }
    let run = from.join("20250101-110000-pg16");
    for i in 0..20 {
        let id = format!("20250102-{:02}0000-pg16", i);
        let to = dir.join(&id);
        copy_dir(&run, &to);
        let doc = to.join("run.json");
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&doc).unwrap()).unwrap();
        v["run_id"] = id.clone().into();
        v["started"] = format!("2025-01-02T{:02}:00:00Z", i).into();
        std::fs::write(&doc, v.to_string()).unwrap();
        let test = to.join("tests/002-point-query-t1.json");
        let mut t: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&test).unwrap()).unwrap();
        t["warnings"] =
            serde_json::json!([format!("client 0 stalled for {}.5 s in a statement", i + 2)]);
        std::fs::write(&test, t.to_string()).unwrap();
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn the_data_formats_and_compare_say_a_warning_of_many_runs_once_with_a_count() {
    let d = tempfile::tempdir().unwrap();
    twenty_warned_runs(d.path());
    let r = d.path().to_str().unwrap();
    let o = rqps(&[
        "report",
        "--results",
        r,
        "--base",
        "pg15",
        "--targets",
        "pg16",
        "--format",
        "json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // Before: 20 lines, one per run.
    let stalled: Vec<&str> = err.lines().filter(|l| l.contains("stalled")).collect();
    assert_eq!(stalled.len(), 1, "{err}");
    assert!(
        stalled[0].starts_with(
            "warning: pg16 point-query t=1 in run 20250102-000000-pg16: client 0 stalled for 2.5 s"
        ) && stalled[0].ends_with("(and 19 more like it)"),
        "{err}"
    );
    // The document keeps each one.
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let listed = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w.as_str().unwrap().contains("stalled"))
        .count();
    assert_eq!(listed, 20);
    let o = rqps(&[
        "compare",
        "--results",
        r,
        "--base",
        "pg15",
        "--target",
        "pg16",
    ]);
    let (_, err) = text(&o);
    assert_eq!(
        err.lines().filter(|l| l.contains("stalled")).count(),
        1,
        "{err}"
    );
    // Quiet: a note of another test stays apart, as it is.
    assert!(
        err.lines().any(|l| l.ends_with(
            "outlier repeat: pg16 range-covered-pk t=1 run 20250101-170000-pg16: QPS 4229 against a median of 3000 (modified z-score > 3.5)"
        )),
        "{err}"
    );
}
