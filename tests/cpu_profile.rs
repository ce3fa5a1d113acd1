//! `--cpu-profile` end to end: perf on a real throwaway PostgreSQL and on the
//! SQLite engine inside rqps, `rqps report --explain`, and a run without perf.
//!
//! Without PostgreSQL's binaries or a working perf these tests print why and
//! pass, unless `RQPS_REQUIRE_SERVERS=1`, in which case they fail.

mod common;
use common::{rqps, server_available, servers_required, text};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rqps::report::profile::{Costs, side_costs};
use rqps::results::{RunDoc, TestResult};

static PG: rqps::engine::server::Recipe = &rqps::engine::postgres::server::RECIPE;

fn perf_works() -> bool {
    match rqps::harness::profile::check() {
        Ok(()) => true,
        Err(e) if servers_required() => panic!("RQPS_REQUIRE_SERVERS=1 but: {e}"),
        Err(e) => {
            eprintln!("skipping: {e} (set RQPS_REQUIRE_SERVERS=1 to make this fail)");
            false
        }
    }
}

/// Runs the point-query test with `--cpu-profile` and returns its result.
fn profiled_point_query(results: &Path, name: &str, extra: &[&str]) -> TestResult {
    let json = results.join(format!("{name}.json"));
    let mut args = vec![
        "run",
        "--profile",
        "ci",
        "--tests",
        "point-query",
        "--read-secs",
        "6",
        "--cpu-profile",
        "--name",
        name,
        "--results",
        results.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "-q",
    ];
    args.extend_from_slice(extra);
    let o = rqps(&args);
    assert!(o.status.success(), "{}", text(&o));
    let doc: RunDoc = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    doc.tests
        .into_iter()
        .find(|t| t.test == "point-query" && t.reported)
        .expect("a point-query result")
}

/// The commands of the `--explain` example in docs/hardware.md, as written
/// there (`$ rqps ...` lines): the prepared run, the text run, the report.
fn doc_commands() -> Vec<Vec<String>> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/hardware.md"))
            .unwrap();
    let cmds: Vec<Vec<String>> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("$ rqps "))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    assert_eq!(
        cmds.len(),
        3,
        "docs/hardware.md's --explain example: {cmds:?}"
    );
    cmds
}

/// Runs one of [`doc_commands`] unchanged in `dir` (so `rqps-results` is there).
fn run_doc_command(dir: &Path, args: &[String]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("rqps runs")
}

/// The reported point-query result of the run named `name` in `results`.
fn stored_point_query(results: &Path, name: &str) -> TestResult {
    std::fs::read_dir(results)
        .unwrap()
        .flatten()
        .filter_map(|e| rqps::results::read_run(&e.path()).ok())
        .filter(|r| r.name == name)
        .flat_map(|r| r.tests)
        .find(|t| t.test == "point-query" && t.reported)
        .expect("a point-query result")
}

/// The point-query run with prepared statements on a throwaway PostgreSQL,
/// made by the first command of docs/hardware.md's example, and the
/// directory it ran in: run once and read by both tests below (one run each
/// cost a server start, a load and 6 s of perf, ~25 s on a busy machine).
/// The other test adds the example's second run to the directory.
fn prepared_on_postgres() -> &'static (PathBuf, TestResult) {
    static RUN: OnceLock<(PathBuf, TestResult)> = OnceLock::new();
    RUN.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cpu_profile-postgres");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let o = run_doc_command(&dir, &doc_commands()[0]);
        assert!(o.status.success(), "{}", text(&o));
        let t = stored_point_query(&dir.join("rqps-results"), "pg-auto");
        (dir, t)
    })
}

fn engine_costs(t: &TestResult) -> Costs {
    let p = t
        .cpu_profile
        .as_ref()
        .expect("the result carries a profile");
    side_costs(p, p.engine.as_ref().expect("an engine profile")).expect("the profile decodes")
}

/// How far `t`'s server profile is from the server CPU the `/proc` sampler
/// measured, as a fraction of the latter.
fn profile_off(t: &TestResult) -> f64 {
    let c = engine_costs(t);
    let measured = t.hw.as_ref().and_then(|h| h.server_cpu_us_per_op).unwrap();
    (c.total_us - measured).abs() / measured
}

/// Whether rqps marked `t` as measured on a busy machine (other processes
/// used more CPU than the threshold just before its step).
fn measured_busy(t: &TestResult) -> bool {
    t.warnings
        .iter()
        .any(|w| w.starts_with(rqps::results::BUSY_WARNING))
}

#[test]
fn a_point_query_profile_of_postgres_names_its_executor_and_adds_up_to_server_cpu() {
    if !server_available(PG) || !perf_works() {
        return;
    }
    // On a machine rqps itself found busy, perf (one more process wanting
    // a CPU) can lose samples and the profile falls short of the measured
    // CPU: such a run is measured again, three runs at the most, and the
    // last is held to the same bound. A run on a machine that was not busy
    // is held to it at once.
    let mut t = prepared_on_postgres().1.clone();
    for again in 1..3 {
        if profile_off(&t) < 0.15 || !measured_busy(&t) {
            break;
        }
        eprintln!(
            "the profile is {:.0}% off on a busy machine: measured again",
            profile_off(&t) * 100.0
        );
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cpu_profile-again-{again}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let o = run_doc_command(&dir, &doc_commands()[0]);
        assert!(o.status.success(), "{}", text(&o));
        t = stored_point_query(&dir.join("rqps-results"), "pg-auto");
    }
    let t = &t;
    let p = t.cpu_profile.as_ref().unwrap();
    assert_eq!(p.engine_is, "server");
    assert!(p.client.is_some(), "a server run profiles the client too");
    let c = engine_costs(t);
    assert!(c.samples > 100, "only {} samples", c.samples);
    let top: Vec<&str> = c
        .functions
        .iter()
        .take(40)
        .map(|f| f.name.as_str())
        .collect();
    assert!(
        top.iter().any(|n| ["Exec", "_bt", "index_", "PostgresMain"]
            .iter()
            .any(|p| n.starts_with(p))),
        "no executor or btree function among the top server functions: {top:?}"
    );
    let measured = t.hw.as_ref().and_then(|h| h.server_cpu_us_per_op).unwrap();
    let off = (c.total_us - measured).abs() / measured;
    assert!(
        off < 0.15,
        "profile {:.2} ± {:.2} µs/op against measured server cpu/o {measured:.2} ({:.0}% off)",
        c.total_us,
        c.error_us,
        off * 100.0
    );
}

#[test]
fn text_statements_against_prepared_ones_rank_parser_and_planner_functions_as_the_increase() {
    if !server_available(PG) || !perf_works() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (dir, _) = prepared_on_postgres();
    let cmds = doc_commands();
    let o = run_doc_command(dir, &cmds[1]);
    assert!(o.status.success(), "{}", text(&o));
    // The documented --explain command, unchanged.
    let o = run_doc_command(dir, &cmds[2]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    // The engine table comes first: its rows are the largest increases.
    let rows: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.contains("engine (server)"))
        .skip(2)
        .take(8)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let parse_plan = [
        "raw_parser",
        "base_yyparse",
        "core_yylex",
        "parse_analyze",
        "transform",
        "pg_plan_query",
        "planner",
        "standard_planner",
        "pg_parse_query",
        "query_planner",
        "subquery_planner",
    ];
    let hits: Vec<&&str> = rows
        .iter()
        .filter(|r| parse_plan.iter().any(|p| r.starts_with(p)))
        .collect();
    assert!(
        !hits.is_empty(),
        "no parser or planner function among the top increases {rows:?}:\n{out}"
    );
    // The HTML report carries the flame graphs of both sides and their difference.
    let html = d.path().join("r.html");
    let results = dir.join("rqps-results");
    // The statement mode is a treatment: compared as it is, and named under
    // what differs.
    let o = rqps(&[
        "report",
        "--results",
        results.to_str().unwrap(),
        "--base",
        "pg-auto",
        "--full",
    ]);
    let report = text(&o);
    assert!(o.status.success(), "{report}");
    assert!(!report.contains("not compared"), "{report}");
    assert!(
        report.contains("parameter ps_mode: auto (base), disable (target)"),
        "{report}"
    );
    let o = rqps(&[
        "report",
        "--results",
        results.to_str().unwrap(),
        "--base",
        "pg-auto",
        "--format",
        "html",
        "-o",
        html.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("CPU profiles"));
    assert_eq!(page.matches("data:image/svg+xml;base64,").count(), 3);
    flame_graphs_show_in_headless_chromium(&page, d.path());
}

/// The report's flame-graph images, alone on a page, as headless Chromium
/// draws them: a large share of flame colours (warm, and blue in the
/// differential graph). Skipped without chromium unless required.
fn flame_graphs_show_in_headless_chromium(page: &str, tmp: &Path) {
    let Some(browser) = ["chromium", "chromium-browser"].into_iter().find(|b| {
        std::process::Command::new(b)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }) else {
        assert!(
            !servers_required(),
            "RQPS_REQUIRE_SERVERS=1 but no chromium on PATH"
        );
        eprintln!("skipping the browser check: no chromium on PATH");
        return;
    };
    let imgs: Vec<&str> = page
        .split("<img ")
        .skip(1)
        .filter(|s| s.contains("data:image/svg+xml"))
        .map(|s| &s[..s.find('>').unwrap() + 1])
        .collect();
    assert_eq!(imgs.len(), 3);
    let flames = tmp.join("flames.html");
    let body: String = imgs
        .iter()
        .map(|i| format!("<img style=\"display:block;width:1200px\" {i}"))
        .collect();
    std::fs::write(
        &flames,
        format!("<!DOCTYPE html><html><body style=\"margin:0\">{body}</body></html>"),
    )
    .unwrap();
    let shot = tmp.join("flames.png");
    let status = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            &format!("--user-data-dir={}", tmp.join("chromium").display()),
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,3000",
            &format!("file://{}", flames.display()),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("chromium runs");
    assert!(status.success() && shot.is_file(), "no screenshot");
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = if info.color_type == png::ColorType::Rgba {
        4
    } else {
        3
    };
    let (mut warm, mut blue, mut all) = (0usize, 0usize, 0usize);
    for p in buf[..info.buffer_size()].chunks_exact(step) {
        all += 1;
        let (r, g, b) = (p[0] as i32, p[1] as i32, p[2] as i32);
        if r > 180 && b < 120 && r - b > 100 && g < 235 {
            warm += 1;
        }
        if b > 150 && b - r > 40 {
            blue += 1;
        }
    }
    let warm_share = warm as f64 / all as f64;
    assert!(
        warm_share > 0.05,
        "flame colours cover only {:.1}% of the screenshot",
        warm_share * 100.0
    );
    eprintln!(
        "flame graphs: {:.1}% warm, {:.2}% blue pixels",
        warm_share * 100.0,
        blue as f64 * 100.0 / all as f64
    );
}

#[test]
fn an_embedded_engine_is_profiled_inside_rqps() {
    if !perf_works() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let t = profiled_point_query(d.path(), "sqlite", &[]);
    let p = t.cpu_profile.as_ref().unwrap();
    assert_eq!(p.engine_is, "rqps process");
    assert!(p.client.is_none());
    let c = engine_costs(&t);
    assert!(
        c.functions
            .iter()
            .take(40)
            .any(|f| f.name.starts_with("sqlite3")),
        "no SQLite function among the top ones"
    );
}

#[test]
fn without_perf_the_run_completes_with_one_notice_and_no_profile() {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("run.json");
    let empty = d.path().join("bin");
    std::fs::create_dir(&empty).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args([
            "run",
            "--profile",
            "ci",
            "--tests",
            "point-query,update-index",
            "--cpu-profile",
            "--name",
            "plain",
            "--results",
            d.path().join("r").to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "-q",
        ])
        .env("PATH", &empty)
        .output()
        .unwrap();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert_eq!(out.matches("perf is not installed").count(), 1, "{out}");
    assert!(out.contains("apt install linux-perf"), "{out}");
    let doc: RunDoc = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(doc.tests.iter().all(|t| t.cpu_profile.is_none()));
    assert!(
        doc.tests
            .iter()
            .any(|t| t.status == rqps::results::Status::Ok)
    );
    // Without profiles, --explain says how to get them and fails as a usage error.
    let r = d.path().join("r");
    let o = rqps(&[
        "report",
        "--results",
        r.to_str().unwrap(),
        "--base",
        "plain",
        "--explain",
        "point-query",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("holds only 'plain'"), "{}", text(&o));
    let o = rqps(&[
        "report",
        "--results",
        r.to_str().unwrap(),
        "--base",
        "plain",
        "--targets",
        "plain2",
        "--explain",
        "point-query",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("has no CPU profile of test 'point-query': run it with --cpu-profile"),
        "{}",
        text(&o)
    );
}
