//! The runs page (the folder's runs, filtered, newest first, paged) and the
//! page of one run (its context, the end-of-run tables `rqps show` prints
//! with the hardware cost per operation, the per-second series, the CPU
//! profiles, the settings).

use std::path::Path;

use serde::Serialize;

use super::http::Response;
use super::index::{Folder, RunSummary, scrub};
use super::page::{self, Parts, a, command, datalist, field, select};
use super::paths::{Refused, Target, escape, link, not_found};
use crate::report::doc::{Block, Chart, TCell, Table};
use crate::report::svg::{self, Line, LineChart, esc};
use crate::results::{self, RunDoc, Status, TestResult};

/// Runs per page by default, and at most.
const PER_PAGE: usize = 50;
const MAX_PER_PAGE: usize = 500;
/// Names a form suggests at most.
const SUGGESTED: usize = 2000;
/// Per-second charts and flame graphs on a run's page at most.
const MAX_CHARTS: usize = 64;

fn number(t: &Target, key: &str, default: usize, max: usize) -> Result<usize, Refused> {
    match t.get(key) {
        None => Ok(default),
        Some(v) => match v.parse::<usize>() {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(Refused {
                status: 400,
                why: format!("{key}={v}: give a whole number from 1 to {max}"),
            }),
        },
    }
}

/// What the name filter matches: a glob where it has `*`, `?` or `[`,
/// else a part of the name (either case).
type Matcher = Box<dyn Fn(&str) -> bool>;

fn name_matcher(f: &str) -> Result<Matcher, Refused> {
    if f.contains(['*', '?', '[']) {
        let g = glob::Pattern::new(f).map_err(|e| Refused {
            status: 400,
            why: format!("name={f} is not a glob ({e}); use * and ? as in nightly-*"),
        })?;
        Ok(Box::new(move |n: &str| g.matches(n)))
    } else {
        let f = f.to_lowercase();
        Ok(Box::new(move |n: &str| n.to_lowercase().contains(&f)))
    }
}

#[derive(Serialize)]
struct RunsJson<'a> {
    results: String,
    /// Runs that match the filters, and this page of them.
    matched: usize,
    page: usize,
    per: usize,
    runs: Vec<&'a RunSummary>,
    suites: &'a [String],
    /// Entries of the folder that are symbolic links, not followed.
    links_not_followed: usize,
}

/// `/runs`.
pub fn runs(folder: &Folder, t: &Target) -> Result<Response, Refused> {
    let per = number(t, "per", PER_PAGE, MAX_PER_PAGE)?;
    let pageno = number(t, "page", 1, usize::MAX)?;
    let name = t.get("name").unwrap_or("");
    let suite = t.get("suite").unwrap_or("");
    let engine = t.get("engine").unwrap_or("").to_lowercase();
    let status = t.get("status").unwrap_or("");
    let name_ok = name_matcher(name)?;
    let snap = folder.snapshot();
    let matched: Vec<&RunSummary> = snap
        .runs
        .iter()
        .filter(|r| name.is_empty() || name_ok(&r.name))
        .filter(|r| suite.is_empty() || r.suite == suite)
        .filter(|r| {
            engine.is_empty()
                || format!("{} {}", r.engine, r.version)
                    .to_lowercase()
                    .contains(&engine)
        })
        .filter(|r| status.is_empty() || r.status == status)
        .collect();
    let shown: Vec<&RunSummary> = matched
        .iter()
        .skip((pageno - 1).saturating_mul(per))
        .take(per)
        .copied()
        .collect();
    let results = folder.root.display().to_string();
    if t.json {
        let j = RunsJson {
            results,
            matched: matched.len(),
            page: pageno,
            per,
            runs: shown,
            suites: &snap.suites,
            links_not_followed: snap.links,
        };
        return Ok(page::respond(200, t, "".into(), page::to_json(&j).into()));
    }
    let mut top = String::new();
    top.push_str(&datalist("names", &snap.names, SUGGESTED));
    let mut body = format!(
        "<p>{} runs in <code>{}</code>, newest first.</p>",
        snap.runs.len(),
        esc(&results)
    );
    body.push_str(&format!(
        "<form class=\"serve\" action=\"/runs\">{}{}{}{}<button>Filter</button></form>",
        field("name (part or glob)", "name", name, Some("names")),
        select("suite", "suite", "any", &snap.suites, suite),
        field(
            "engine or version",
            "engine",
            t.get("engine").unwrap_or(""),
            None
        ),
        select(
            "status",
            "status",
            "any",
            &[
                "ok",
                "running",
                "failed",
                "interrupted",
                "killed",
                "unreadable"
            ]
            .map(String::from),
            status
        ),
    ));
    body.push_str(&format!(
        "<form class=\"serve\" action=\"/compare\">{}{}<button>Compare</button></form>",
        field("base", "base", "", Some("names")),
        field("target", "target", "", Some("names")),
    ));
    let live = shown.iter().any(|r| r.running());
    if live {
        body.push_str(&format!(
            "<p class=\"live\">A run is being written: this page reloads every {} s.</p>",
            page::RELOAD_SECS
        ));
    }
    body.push_str(&runs_table(&shown));
    body.push_str(&pager(t, pageno, per, matched.len()));
    if snap.links > 0 {
        body.push_str(&format!(
            "<p>{} entries of the folder are symbolic links: not followed, not listed.</p>",
            snap.links
        ));
    }
    let html = page::blocks_page(
        &[Block::Heading(1, "Runs".into())],
        t,
        "/runs",
        &Parts {
            top,
            after_title: body,
            live,
            ..Parts::default()
        },
    );
    Ok(page::respond(200, t, html.into(), "".into()))
}

fn runs_table(runs: &[&RunSummary]) -> String {
    let mut s = String::from(
        "<table><thead><tr><th>started</th><th>run</th><th>name</th><th>suite</th><th>engine</th>\
<th>status</th><th>tests</th><th></th></tr></thead><tbody>",
    );
    for r in runs {
        let status = match (&r.error, &r.part) {
            (Some(e), _) => format!("unreadable: {e}"),
            (None, Some(p)) => format!("{} (part {p}, not reported until merged)", r.status),
            _ if r.commands_only => format!("{} (commands only, nothing measured)", r.status),
            _ => r.status.clone(),
        };
        s.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"st-{}\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            esc(&r.started.replacen('T', " ", 1)),
            a(&format!("/run/{}", escape(&r.run_id)), &r.run_id),
            if r.name.is_empty() { String::new() } else { a(&link("/runs", &[("name", &r.name)]), &r.name) },
            esc(&r.suite),
            esc(format!("{} {}", r.engine, r.version).trim()),
            esc(&r.status),
            esc(&status),
            r.tests,
            if r.reportable() {
                a(&link("/compare", &[("base", &r.name)]), "compare")
            } else {
                String::new()
            },
        ));
    }
    s.push_str("</tbody></table>");
    s
}

fn pager(t: &Target, pageno: usize, per: usize, total: usize) -> String {
    let pages = total.div_ceil(per).max(1);
    let to = |p: usize| {
        let mut q: Vec<(&str, String)> = t
            .query
            .iter()
            .filter(|(k, _)| k != "page")
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        q.push(("page", p.to_string()));
        let pairs: Vec<(&str, &str)> = q.iter().map(|(k, v)| (*k, v.as_str())).collect();
        link("/runs", &pairs)
    };
    let from = ((pageno - 1) * per + 1).min(total);
    let mut s = format!(
        "<p class=\"pages\"><span>runs {from}–{} of {total}</span>",
        (pageno * per).min(total)
    );
    if pageno > 1 {
        s.push_str(&a(&to(pageno - 1), "‹ newer"));
    }
    if pageno < pages {
        s.push_str(&a(&to(pageno + 1), "older ›"));
    }
    s.push_str("</p>");
    s
}

/// A run read for its page: `run.json` and each test file that reads;
/// those that do not are named.
struct OneRun {
    doc: RunDoc,
    unreadable: Vec<String>,
}

fn read_one(dir: &Path) -> Result<OneRun, results::StoreError> {
    let mut doc = results::read_run_keeping(dir, results::Keep::Context)?;
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir.join("tests"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut unreadable = Vec::new();
    for f in files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match results::read_result_file(&f)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<TestResult>(&t).map_err(|e| e.to_string()))
        {
            Ok(mut t) => {
                if doc.status == Status::Killed && t.status == Status::Running {
                    t.status = Status::Killed;
                }
                doc.tests.push(t);
            }
            Err(e) => unreadable.push(format!("tests/{name}: {e}")),
        }
    }
    scrub(&mut doc);
    Ok(OneRun { doc, unreadable })
}

/// A parameter's value as text: a list joined with commas.
fn word(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => a.iter().map(word).collect::<Vec<_>>().join(","),
        serde_json::Value::Null => "-".into(),
        other => other.to_string(),
    }
}

fn kv_table(head: [&str; 2], rows: Vec<(String, String)>) -> Block {
    Block::Table(Table {
        header: head.map(String::from).to_vec(),
        rows: rows
            .into_iter()
            .map(|(k, v)| vec![TCell::from(k.as_str()), TCell::from(v.as_str())])
            .collect(),
        left: 2,
    })
}

fn facts(d: &RunDoc) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = vec![
        ("name".into(), d.name.clone()),
        ("suite".into(), d.suite.clone()),
        ("repeat".into(), d.repeat.to_string()),
        ("status".into(), d.status.to_string()),
        ("started".into(), d.started.clone()),
        ("finished".into(), d.finished.clone().unwrap_or_default()),
        (
            "engine".into(),
            format!("{} {}", d.engine.name, d.engine.version),
        ),
        ("target".into(), d.target.clone()),
        (
            "rqps".into(),
            format!(
                "{} {}",
                d.rqps_version,
                d.git_commit.as_deref().unwrap_or("")
            ),
        ),
        (
            "host".into(),
            format!(
                "{} ({} {}, {} CPUs)",
                d.host.hostname, d.host.os, d.host.arch, d.host.cpus
            ),
        ),
    ];
    let opt = |k: &str, v: &Option<String>, rows: &mut Vec<(String, String)>| {
        if let Some(v) = v {
            rows.push((k.into(), v.clone()));
        }
    };
    opt("login", &d.engine.auth, &mut rows);
    opt("CPU", &d.host.cpu_model, &mut rows);
    if let Some(kb) = d.host.mem_total_kb {
        rows.push(("memory".into(), format!("{:.1} GiB", kb as f64 / 1048576.0)));
    }
    opt("kernel", &d.host.kernel, &mut rows);
    opt("data filesystem", &d.host.data_fs, &mut rows);
    opt("data device", &d.host.data_device, &mut rows);
    if let Some(s) = &d.server {
        rows.push((
            "server".into(),
            format!("{} ({})", s.kind, s.binary_version),
        ));
        rows.push(("server binaries".into(), s.binaries.clone()));
        opt("server config file", &s.config_file, &mut rows);
        if !s.config.is_empty() {
            rows.push(("server config".into(), s.config.join("; ")));
        }
    }
    if let Some(p) = &d.part {
        rows.push(("part".into(), format!("{}/{}", p.index, p.count)));
    }
    rows.retain(|(_, v)| !v.trim().is_empty());
    rows
}

/// One test's per-second QPS.
fn per_second_chart(t: &TestResult) -> Option<Block> {
    if t.per_second.is_empty() {
        return None;
    }
    Some(Block::Chart(Chart::Drawn {
        svg: svg::line_chart(&LineChart {
            title: format!("{} t={}: per second", t.test, t.threads),
            x_label: "seconds".into(),
            y_label: crate::report::model::unit_note(&t.qps_unit)
                .unwrap_or("QPS")
                .into(),
            lines: vec![Line {
                name: format!("{} ({})", t.test, t.status),
                colour: svg::base_colour(),
                points: t.per_second.iter().map(|s| (s.t as f64, s.qps)).collect(),
            }],
            markers: false,
            x_categories: None,
        }),
        small: true,
    }))
}

/// The flame graphs of a test's CPU profile, as images.
fn flame_graphs(t: &TestResult, out: &mut String) {
    use base64::Engine as _;
    let Some(p) = &t.cpu_profile else {
        return;
    };
    for (side, what) in [
        (&p.engine, p.engine_is.as_str()),
        (&p.client, "rqps (client)"),
    ] {
        let Some(side) = side else {
            continue;
        };
        let title = format!("{} t={}: {what}", t.test, t.threads);
        if let Some(svg) = crate::report::profile::flame_graph(&title, p, side) {
            out.push_str(&format!(
                "<h3>{}</h3><div class=\"chart flame\"><img alt=\"flame graph of {}\" style=\"max-width:100%\" src=\"data:image/svg+xml;base64,{}\"></div>\n",
                esc(&title),
                esc(&title),
                base64::engine::general_purpose::STANDARD.encode(svg)
            ));
        }
    }
}

/// `/run/RUN-ID`.
pub fn run(folder: &Folder, t: &Target, id: &str) -> Result<Response, Refused> {
    let snap = folder.snapshot();
    let Some(summary) = snap.run(id) else {
        return Err(not_found(format!(
            "no run {id} in the results folder (the runs page lists them)"
        )));
    };
    let path = format!("/run/{}", escape(id));
    let one = match read_one(&folder.root.join(id)) {
        Ok(one) => one,
        Err(e) => {
            let why = summary.error.clone().unwrap_or_else(|| {
                e.to_string()
                    .replace(&folder.root.join(id).display().to_string(), id)
            });
            let why = crate::engine::target::redact(&why);
            let json = page::to_json(&serde_json::json!({
                "run_id": id, "status": "unreadable", "error": why,
            }));
            let html = page::blocks_page(
                &[
                    Block::Heading(1, format!("Run {id}")),
                    Block::Para(format!("This run cannot be read: {why}")),
                    Block::Para("Reports leave it out, with a warning; the other runs of the folder are not affected.".into()),
                ],
                t,
                &path,
                &Parts::default(),
            );
            return Ok(page::respond(200, t, html.into(), json.into()));
        }
    };
    let d = &one.doc;
    if t.json {
        let mut v = serde_json::to_value(d).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("unreadable_tests".into(), one.unreadable.clone().into());
        }
        return Ok(page::respond(200, t, "".into(), page::to_json(&v).into()));
    }
    let live = d.status == Status::Running;
    let mut after = String::new();
    if live {
        after.push_str(&format!(
            "<p class=\"live\">Running: {} test(s) stored so far; this page reloads every {} s.</p>",
            d.tests.len(),
            page::RELOAD_SECS
        ));
    }
    after.push_str(&format!(
        "<p>{} · {} · {}</p>",
        a(
            &link("/compare", &[("base", &d.name)]),
            &format!("compare {} with another name", d.name)
        ),
        a(
            &link("/runs", &[("name", &d.name)]),
            &format!("every run named {}", d.name)
        ),
        a(
            &link("/history", &[("suite", &d.suite)]),
            &format!("history of the {} runs", d.suite)
        ),
    ));
    after.push_str(&format!(
        "<p>Command line: {}</p>",
        command(
            &d.command_line
                .iter()
                .map(|w| crate::cmdline::shell_word(w))
                .collect::<Vec<_>>()
                .join(" ")
        )
    ));
    after.push_str("<h2>Results</h2><p>As <code>rqps show</code> prints them, with the hardware cost per operation.</p>");
    after.push_str(&format!(
        "<pre class=\"serve\">{}</pre>",
        esc(&crate::report::table::run_table(
            d,
            false,
            &crate::suite::report_sections()
        ))
    ));
    if !one.unreadable.is_empty() {
        after.push_str(&format!(
            "<p>Test files that cannot be read (left out above): {}</p>",
            esc(&one.unreadable.join("; "))
        ));
    }
    let mut blocks = vec![
        Block::Heading(1, format!("Run {id}")),
        Block::Heading(2, "Run".into()),
        kv_table(["", "this run"], facts(d)),
    ];
    if let Some(p) = d.params.as_object().filter(|p| !p.is_empty()) {
        blocks.push(Block::Heading(2, "Parameters".into()));
        blocks.push(kv_table(
            ["parameter", "value"],
            p.iter().map(|(k, v)| (k.clone(), word(v))).collect(),
        ));
    }
    let charts: Vec<Block> = d
        .tests
        .iter()
        .filter_map(per_second_chart)
        .take(MAX_CHARTS)
        .collect();
    if !charts.is_empty() {
        blocks.push(Block::Heading(2, "Per second".into()));
        blocks.extend(charts);
    }
    if !d.settings.is_empty() {
        blocks.push(Block::Heading(2, "Server settings".into()));
        blocks.push(Block::Folded(
            format!("{} settings at the start of the run", d.settings.len()),
            vec![kv_table(
                ["setting", "value"],
                d.settings
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            )],
        ));
    }
    let mut bottom = String::new();
    for t in d
        .tests
        .iter()
        .filter(|t| t.cpu_profile.is_some())
        .take(MAX_CHARTS)
    {
        if bottom.is_empty() {
            bottom.push_str("<h2>CPU profiles</h2><p>Flame graphs of the measured interval (<code>--cpu-profile</code>), widths in CPU time per operation.</p>");
        }
        flame_graphs(t, &mut bottom);
    }
    let html = page::blocks_page(
        &blocks,
        t,
        &path,
        &Parts {
            after_title: after,
            bottom,
            live,
            ..Parts::default()
        },
    );
    Ok(page::respond(200, t, html.into(), "".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{CpuProfile, Folded, ProfileSide, SecondSample};

    #[test]
    fn a_tests_profile_and_series_draw_and_a_test_without_draws_nothing() {
        let mut t = TestResult::running(
            "sysbench",
            "point-query".into(),
            "point",
            1,
            true,
            "statements/s",
        );
        let mut out = String::new();
        flame_graphs(&t, &mut out);
        assert!(out.is_empty() && per_second_chart(&t).is_none());
        t.cpu_profile = Some(Box::new(CpuProfile {
            period_ns: 1_000_000,
            ops: 100.0,
            engine_is: "server".into(),
            engine: Some(ProfileSide::new(&Folded {
                text: "main;query;parse 10\nmain;query;execute 30\n".into(),
                samples: 40,
            })),
            client: None,
        }));
        t.per_second = (1..=3)
            .map(|s| SecondSample {
                t: s,
                qps: 100.0 * s as f64,
                tps: 1.0,
                errors: 0,
            })
            .collect();
        flame_graphs(&t, &mut out);
        assert!(
            out.contains("point-query t=1: server")
                && out.contains("src=\"data:image/svg+xml;base64,"),
            "{out}"
        );
        let Some(Block::Chart(Chart::Drawn { svg, small: true })) = per_second_chart(&t) else {
            panic!("no chart");
        };
        assert!(svg.starts_with("<svg") && svg.contains("point-query t=1: per second"));
    }
}
