//! The pages that answer what `rqps report`, `rqps history` and `rqps
//! compat --show` answer, from the same model and exporters: a comparison
//! of a base with targets, the history of a suite's runs with its change
//! points, and the compatibility records. Each names the command line that
//! gives the same answer. Comparisons and histories are cached until a run
//! they read (or a record) changes.

use std::sync::Arc;

use super::http::Response;
use super::index::{Cached, Folder, RunSummary};
use super::page::{self, Parts, a, command, datalist, field, select};
use super::paths::{Refused, Target, escape, link, not_found};
use crate::cmdline::shell_word;
use crate::report::export::{self, Exporter as _, Format};
use crate::report::history::{self, Order};
use crate::report::svg::esc;

/// Targets one comparison takes at most.
const MAX_TARGETS: usize = 8;
/// Runs a history takes by default, and at most (the newest of those chosen).
const HISTORY_RUNS: usize = 500;
const MAX_HISTORY_RUNS: usize = 5000;

fn bad(why: String) -> Refused {
    Refused { status: 400, why }
}

/// A name the folder holds, or 404 with the nearest one.
fn known(names: &[String], n: &str) -> Result<(), Refused> {
    if names.iter().any(|k| k == n) {
        return Ok(());
    }
    Err(not_found(format!(
        "no run is named '{n}'{} (the runs page lists the names)",
        crate::util::suggest::hint(n, names.iter().map(String::as_str))
    )))
}

fn compare_form(names: &[String], base: &str, targets: &str) -> String {
    format!(
        "{}<form class=\"serve\" action=\"/compare\">{}{}<button>Compare</button></form>",
        datalist("names", names, 2000),
        field("base", "base", base, Some("names")),
        field("targets (commas)", "target", targets, Some("names")),
    )
}

/// `/compare?base=A&target=B`: the comparison `rqps report --base A
/// --targets B` prints, in the HTML exporter's page or as its JSON.
pub fn compare(folder: &Folder, t: &Target) -> Result<Response, Refused> {
    let snap = folder.snapshot();
    let base = t.get("base").unwrap_or("").to_string();
    let targets = t.all("target");
    let all = t.flag("all");
    let mismatch = t.flag("allow_mismatch");
    if targets.len() > MAX_TARGETS {
        return Err(bad(format!(
            "{} targets: a page compares {MAX_TARGETS} at most",
            targets.len()
        )));
    }
    if base.is_empty() || targets.is_empty() {
        return Ok(choose(t, &snap.runs, &snap.names, &base));
    }
    for n in std::iter::once(&base).chain(&targets) {
        known(&snap.names, n)?;
    }
    let names: Vec<&str> = std::iter::once(base.as_str())
        .chain(targets.iter().map(String::as_str))
        .collect();
    let chosen: Vec<&RunSummary> = snap
        .runs
        .iter()
        .rev()
        .filter(|r| r.reportable() && names.contains(&r.name.as_str()))
        .collect();
    let key = format!("compare\0{}\0{all}\0{mismatch}", names.join("\0"));
    let made_from = folder.made_from(chosen.iter().copied(), true);
    let cmd = format!(
        "rqps report{} --base {} --targets {}{}{}",
        crate::cmdline::results_arg(&folder.root),
        shell_word(&base),
        shell_word(&targets.join(",")),
        if all { " --all" } else { "" },
        if mismatch { " --allow-mismatch" } else { "" }
    );
    let path = "/compare";
    let cached = folder.page(&key, made_from, || {
        let (runs, mut warnings) = folder.read_runs(&chosen, crate::results::Keep::Report);
        let records = folder.records();
        warnings.extend(records.warnings.iter().cloned());
        let recs: Vec<crate::results::compat::CompatRecord> =
            records.records.iter().map(|(_, r)| r.clone()).collect();
        let opts = crate::report::load::Options {
            base: base.clone(),
            targets: Some(targets.clone()),
            rules: crate::report::compare::Rules {
                noise_floor: crate::plan::report::NOISE_FLOOR,
                ..Default::default()
            },
            all,
            sections: crate::suite::report_sections(),
            workloads: crate::suite::workloads(),
            engines: crate::plan::report::engine_keys(),
            allow_mismatch: mismatch,
        };
        let live = chosen.iter().any(|r| r.running());
        let form = compare_form(&snap.names, &base, &targets.join(","));
        match crate::report::load::build_from_dir(&runs, &recs, &opts, &folder.root) {
            Ok(mut report) => {
                warnings.append(&mut report.warnings);
                report.warnings = warnings;
                let mut after = format!(
                    "{form}<p>The same answer on the command line: {}{}</p>",
                    command(&cmd),
                    if targets.len() == 1 {
                        format!(
                            "; as a gate that exits 1 on a significant drop: {}",
                            command(&format!(
                                "rqps compare{} --base {} --target {}",
                                crate::cmdline::results_arg(&folder.root),
                                shell_word(&base),
                                shell_word(&targets[0])
                            ))
                        )
                    } else {
                        String::new()
                    }
                );
                if live {
                    after.push_str(&format!(
                        "<p class=\"live\">A run compared here is being written: this page reloads every {} s.</p>",
                        page::RELOAD_SECS
                    ));
                }
                let html = page::inject(
                    &export::html::Html.render(&report),
                    t,
                    path,
                    &Parts {
                        after_title: after,
                        live,
                        ..Parts::default()
                    },
                );
                Cached {
                    made_from,
                    status: 200,
                    html: html.into(),
                    json: export::json::Json.render(&report).into(),
                    live,
                }
            }
            Err(e) => {
                let why = e.to_string();
                let html = page::blocks_page(
                    &[
                        crate::report::doc::Block::Heading(1, "Compare".into()),
                        crate::report::doc::Block::Para(format!("Cannot compare: {why}")),
                    ],
                    t,
                    path,
                    &Parts {
                        after_title: form,
                        live,
                        ..Parts::default()
                    },
                );
                Cached {
                    made_from,
                    status: 400,
                    html: html.into(),
                    json: page::to_json(&serde_json::json!({ "status": 400, "error": why })).into(),
                    live,
                }
            }
        }
    });
    Ok(page::respond(
        cached.status,
        t,
        Arc::clone(&cached.html),
        Arc::clone(&cached.json),
    ))
}

/// The compare page without a base or a target: the form, and the names
/// of the base's suite to compare it with.
fn choose(t: &Target, runs: &[RunSummary], names: &[String], base: &str) -> Response {
    let mut after = compare_form(names, base, "");
    let suite = runs
        .iter()
        .find(|r| r.name == base && r.reportable())
        .map(|r| r.suite.clone());
    let candidates: Vec<&String> = match &suite {
        Some(s) => names
            .iter()
            .filter(|n| *n != base && runs.iter().any(|r| &r.name == *n && &r.suite == s))
            .take(200)
            .collect(),
        None => Vec::new(),
    };
    if !base.is_empty() && suite.is_none() {
        after.push_str(&format!("<p>No run is named {}.</p>", esc(base)));
    }
    if !candidates.is_empty() {
        after.push_str(&format!(
            "<p>Names of {} runs to compare {} with, newest first:</p><ul>",
            esc(suite.as_deref().unwrap_or("")),
            esc(base)
        ));
        for c in &candidates {
            after.push_str(&format!(
                "<li>{}</li>",
                a(&link("/compare", &[("base", base), ("target", c)]), c)
            ));
        }
        after.push_str("</ul>");
    } else if base.is_empty() {
        after.push_str("<p>Choose a base (the run name the others are compared with) and one or more targets. Runs of one name are repeats of it.</p>");
    }
    let json = page::to_json(&serde_json::json!({
        "base": base, "suite": suite, "candidates": candidates,
    }));
    let html = page::blocks_page(
        &[crate::report::doc::Block::Heading(1, "Compare".into())],
        t,
        "/compare",
        &Parts {
            after_title: after,
            ..Parts::default()
        },
    );
    page::respond(200, t, html.into(), json.into())
}

/// What a history page asks for.
struct HistoryAsk {
    glob_text: String,
    glob: Option<glob::Pattern>,
    order: Order,
    /// The newest runs taken.
    last: usize,
    max_p: f64,
    all: bool,
    /// One test only.
    test: Option<String>,
}

fn history_ask(t: &Target) -> Result<HistoryAsk, Refused> {
    let glob_text = t.get("name").unwrap_or("").to_string();
    let glob = if glob_text.is_empty() {
        None
    } else {
        Some(glob::Pattern::new(&glob_text).map_err(|e| {
            bad(format!(
                "name={glob_text} is not a glob ({e}); use * and ? as in nightly-*"
            ))
        })?)
    };
    let order = match t.get("order").unwrap_or("started") {
        "started" => Order::Started,
        "name" => Order::Name,
        other => return Err(bad(format!("order={other}: give started or name"))),
    };
    let last = match t.get("last") {
        None => HISTORY_RUNS,
        Some(v) => v
            .parse::<usize>()
            .ok()
            .filter(|n| (3..=MAX_HISTORY_RUNS).contains(n))
            .ok_or_else(|| {
                bad(format!(
                    "last={v}: give a whole number from 3 to {MAX_HISTORY_RUNS}"
                ))
            })?,
    };
    let max_p = match t.get("max_p") {
        None => 0.05,
        Some(v) => v
            .parse::<f64>()
            .ok()
            .filter(|p| *p > 0.0 && *p < 1.0)
            .ok_or_else(|| bad(format!("max_p={v}: give a p-value above 0 and below 1")))?,
    };
    Ok(HistoryAsk {
        glob_text,
        glob,
        order,
        last,
        max_p,
        all: t.flag("all"),
        test: t.get("test").map(String::from),
    })
}

/// `rqps history` with the options that give the page's answer.
fn history_command(folder: &Folder, ask: &HistoryAsk, suite: &str) -> String {
    let mut cmd = format!("rqps history{}", crate::cmdline::results_arg(&folder.root));
    if !suite.is_empty() {
        cmd.push_str(&format!(" --suite {}", shell_word(suite)));
    }
    if !ask.glob_text.is_empty() {
        cmd.push_str(&format!(" --name-glob {}", shell_word(&ask.glob_text)));
    }
    if ask.order == Order::Name {
        cmd.push_str(" --order name");
    }
    if ask.max_p != 0.05 {
        cmd.push_str(&format!(" --max-p {}", ask.max_p));
    }
    if ask.all {
        cmd.push_str(" --all");
    }
    cmd
}

fn history_form(names: &[String], suites: &[String], ask: &HistoryAsk, t: &Target) -> String {
    format!(
        "{}<form class=\"serve\" action=\"/history\">{}{}{}{}{}<button>Show</button></form>",
        datalist("names", names, 2000),
        select(
            "suite",
            "suite",
            "the newest run's",
            suites,
            t.get("suite").unwrap_or("")
        ),
        field("names (glob)", "name", &ask.glob_text, Some("names")),
        select(
            "order",
            "order",
            "by start time",
            &["name".to_string()],
            if ask.order == Order::Name { "name" } else { "" }
        ),
        field("test", "test", ask.test.as_deref().unwrap_or(""), None),
        field("newest runs", "last", &ask.last.to_string(), None),
    )
}

/// `/history?suite=S&name=GLOB`: what `rqps history --suite S --name-glob
/// GLOB` prints, for the newest `last` runs chosen.
pub fn history(folder: &Folder, t: &Target) -> Result<Response, Refused> {
    let snap = folder.snapshot();
    let ask = history_ask(t)?;
    let matching: Vec<&RunSummary> = snap
        .runs
        .iter()
        .filter(|r| r.reportable())
        .filter(|r| ask.glob.as_ref().is_none_or(|g| g.matches(&r.name)))
        .collect();
    // Without a suite: the newest matching run's.
    let suite = match t.get("suite") {
        Some(s) => s.to_string(),
        None => matching
            .first()
            .map(|r| r.suite.clone())
            .unwrap_or_default(),
    };
    let of_suite: Vec<&RunSummary> = matching.into_iter().filter(|r| r.suite == suite).collect();
    let total = of_suite.len();
    let mut chosen: Vec<&RunSummary> = of_suite.into_iter().take(ask.last).collect();
    chosen.reverse();
    let made_from = folder.made_from(chosen.iter().copied(), false);
    let key = format!(
        "history\0{suite}\0{}\0{:?}\0{}\0{}\0{}\0{}",
        ask.glob_text,
        ask.order,
        ask.test.as_deref().unwrap_or(""),
        ask.last,
        ask.all,
        ask.max_p
    );
    let mut top = history_form(&snap.names, &snap.suites, &ask, t);
    if total > chosen.len() {
        top.push_str(&format!(
            "<p>The newest {} of the {total} runs chosen (newest runs: up to {MAX_HISTORY_RUNS}); the command line takes them all.</p>",
            chosen.len()
        ));
    }
    top.push_str(&format!(
        "<p>The same answer on the command line: {}{}</p>",
        command(&history_command(folder, &ask, &suite)),
        if ask.test.is_some() {
            " (every test)"
        } else {
            ""
        }
    ));
    let cached = folder.page(&key, made_from, || {
        let mut docs = folder.history_runs(&chosen);
        if let Some(test) = &ask.test {
            for d in &mut docs {
                d.tests.retain(|x| &x.test == test);
            }
        }
        let opts = history::Options {
            name_glob: ask.glob.clone(),
            order: ask.order,
            suite: Some(suite.clone()),
            all: ask.all,
            settings: crate::report::changepoint::Settings {
                max_p: ask.max_p,
                ..Default::default()
            },
        };
        let built = history::build(&docs, &opts).map_err(|e| {
            if total == 0 && t.get("suite").is_none() && ask.glob.is_none() {
                "the results folder holds no run to make a history of".to_string()
            } else {
                e.to_string()
            }
        });
        history_page(t, made_from, built, top, &docs, ask.test.is_none())
    });
    Ok(page::respond(
        cached.status,
        t,
        Arc::clone(&cached.html),
        Arc::clone(&cached.json),
    ))
}

/// The history page of `built` (or of why there is none), with `top` (the
/// form and the command line) and, for every test, a link to its page.
fn history_page(
    t: &Target,
    made_from: u64,
    built: Result<history::History, String>,
    top: String,
    docs: &[crate::results::RunDoc],
    test_links: bool,
) -> Cached {
    let path = "/history";
    let h = match built {
        Ok(h) => h,
        Err(why) => {
            let html = page::blocks_page(
                &[
                    crate::report::doc::Block::Heading(1, "History".into()),
                    crate::report::doc::Block::Para(format!("No history: {why}")),
                ],
                t,
                path,
                &Parts {
                    after_title: top,
                    ..Parts::default()
                },
            );
            return Cached {
                made_from,
                status: 400,
                html: html.into(),
                json: page::to_json(&serde_json::json!({ "status": 400, "error": why })).into(),
                live: false,
            };
        }
    };
    let mut after = top;
    let mut tests: Vec<&str> = Vec::new();
    for x in docs.iter().flat_map(|d| &d.tests) {
        if !tests.contains(&x.test.as_str()) {
            tests.push(&x.test);
        }
    }
    if test_links && !tests.is_empty() {
        let links: Vec<String> = tests
            .iter()
            .map(|x| {
                let mut q: Vec<(&str, &str)> = t
                    .query
                    .iter()
                    .filter(|(k, _)| k != "test")
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                q.push(("test", x));
                a(&link(path, &q), x)
            })
            .collect();
        after.push_str(&format!("<p>One test: {}</p>", links.join(" · ")));
    }
    let html = page::inject(
        &history::render_html(&h),
        t,
        path,
        &Parts {
            after_title: after,
            ..Parts::default()
        },
    );
    Cached {
        made_from,
        status: 200,
        html: html.into(),
        json: history::render_json(&h).into(),
        live: false,
    }
}

/// `/compat` (the newest record) and `/compat/FILE`: a record as `rqps
/// compat --show FILE` prints it.
pub fn compat(folder: &Folder, t: &Target, file: Option<&str>) -> Result<Response, Refused> {
    let recs = folder.records();
    let chosen = match file {
        Some(f) => Some(
            recs.records
                .iter()
                .find(|(n, _)| n == f)
                .ok_or_else(|| not_found(format!("no compatibility record {f} in the folder")))?,
        ),
        None => recs.records.last(),
    };
    let path = match file {
        Some(f) => format!("/compat/{}", escape(f)),
        None => "/compat".to_string(),
    };
    let list: Vec<serde_json::Value> = recs
        .records
        .iter()
        .rev()
        .map(|(n, r)| {
            serde_json::json!({
                "file": n,
                "started": r.started,
                "reference": r.reference.id.label,
                "targets": r.targets.iter().map(|e| e.id.label.clone()).collect::<Vec<_>>(),
            })
        })
        .collect();
    if t.json {
        let body = match (file, chosen) {
            (Some(_), Some((_, r))) => crate::report::compat::render(r, Format::Json, false),
            _ => page::to_json(&serde_json::json!({
                "records": list,
                "latest": chosen.map(|(_, r)| r),
                "warnings": recs.warnings,
            })),
        };
        return Ok(page::respond(200, t, "".into(), body.into()));
    }
    let mut after = String::new();
    if !recs.records.is_empty() {
        after.push_str("<p>Records, newest first: ");
        let items: Vec<String> = recs
            .records
            .iter()
            .rev()
            .map(|(n, r)| {
                let label = format!(
                    "{} ({} against {})",
                    r.started,
                    r.targets
                        .iter()
                        .map(|e| e.id.label.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    r.reference.id.label
                );
                if chosen.is_some_and(|(c, _)| c == n) {
                    format!("<b>{}</b>", esc(&label))
                } else {
                    a(&format!("/compat/{}", escape(n)), &label)
                }
            })
            .collect();
        after.push_str(&items.join(" · "));
        after.push_str("</p>");
    }
    for w in &recs.warnings {
        after.push_str(&format!("<p>warning: {}</p>", esc(w)));
    }
    let html = match chosen {
        Some((n, r)) => {
            after.push_str(&format!(
                "<p>The same record on the command line: {}</p>",
                command(&format!(
                    "rqps compat --show {} --format html",
                    shell_word(
                        &folder
                            .root
                            .join(crate::results::compat::DIR)
                            .join(n)
                            .display()
                            .to_string()
                    )
                ))
            ));
            page::inject(
                &crate::report::compat::render(r, Format::Html, false),
                t,
                &path,
                &Parts {
                    after_title: after,
                    ..Parts::default()
                },
            )
        }
        None => page::blocks_page(
            &[
                crate::report::doc::Block::Heading(1, "Compatibility".into()),
                crate::report::doc::Block::Para(format!(
                    "The folder holds no compatibility record: make one with rqps compat --reference ENGINE --server KIND[@VERSION]{}",
                    crate::cmdline::results_arg(&folder.root)
                )),
            ],
            t,
            &path,
            &Parts {
                after_title: after,
                ..Parts::default()
            },
        ),
    };
    Ok(page::respond(200, t, html.into(), "".into()))
}
