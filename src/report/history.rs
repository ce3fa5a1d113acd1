//! `rqps history`: many runs of one suite in order (nightly builds), each
//! test's QPS as a series, and the change points of each series found by
//! E-divisive means ([`super::changepoint`]) on log QPS.
//!
//! The model is built once ([`build`]) and rendered in four formats: term and
//! md through the report's [`Block`] renderers (a sparkline per test), html
//! as one self-contained page (an SVG line chart per test with the change
//! points marked), json serialized whole.

use std::fmt::Write;

use serde::Serialize;

use super::changepoint::{self, Settings};
use super::doc::{Block, TCell, Table};
use super::export::{self, md, term};
use super::stats;
use super::svg::{self, esc};
use crate::error::{Error, usage};
use crate::results::RunDoc;

/// The order of the runs in the series.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// When each run started.
    Started,
    /// The run names, digits compared as numbers (`nightly-9` before `nightly-10`).
    Name,
}

/// What `rqps history` reads.
#[derive(Clone, Debug)]
pub struct Options {
    /// Only runs whose name matches (`nightly-*`); `None`: every run.
    pub name_glob: Option<glob::Pattern>,
    pub order: Order,
    /// The suite, when the runs hold several.
    pub suite: Option<String>,
    /// Count unreported warm-up steps too.
    pub all: bool,
    pub settings: Settings,
}

/// One run of the history.
#[derive(Clone, Debug, Serialize)]
pub struct HistRun {
    pub run_id: String,
    pub name: String,
    pub started: String,
    pub engine_version: String,
}

/// One test's QPS over the runs.
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    /// `test`, or `test t=N` when the history has several thread counts.
    pub test: String,
    pub unit: String,
    /// One per run, in [`History::runs`] order; `null` where the run has no
    /// counted result for the test.
    pub qps: Vec<Option<f64>>,
}

/// One change point.
#[derive(Clone, Debug, Serialize)]
pub struct Change {
    pub test: String,
    /// The first run after the change: its 0-based index in [`History::runs`] ...
    pub index: usize,
    /// ... and its id.
    pub run_id: String,
    /// Geometric mean QPS of the runs since the previous change point (or the start) ...
    pub before: f64,
    /// ... and up to the next one (or the end).
    pub after: f64,
    /// after / before − 1 (−0.08: 8 % slower).
    pub change: f64,
    /// Permutation p-value of the split.
    pub p: f64,
}

/// The whole history.
#[derive(Clone, Debug, Serialize)]
pub struct History {
    pub suite: String,
    pub order: Order,
    /// The p-value a change point needs at most.
    pub max_p: f64,
    pub runs: Vec<HistRun>,
    pub series: Vec<Series>,
    /// Every change point, test by test, in series order.
    pub changes: Vec<Change>,
    pub warnings: Vec<String>,
}

impl History {
    /// Change points the newest run starts that are regressions (for `--fail-on-change`).
    pub fn newest_regressions(&self) -> impl Iterator<Item = &Change> {
        let last = self.runs.len().saturating_sub(1);
        self.changes
            .iter()
            .filter(move |c| c.index == last && c.change < 0.0)
    }
}

/// `a` before `b` with runs of digits compared as numbers.
fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for (x, y) in ca.iter().zip(&cb) {
        let o = match (x, y) {
            ((true, p), (true, q)) => {
                let (p, q) = (p.trim_start_matches('0'), q.trim_start_matches('0'));
                p.len().cmp(&q.len()).then(p.cmp(q))
            }
            ((_, p), (_, q)) => p.cmp(q),
        };
        if o.is_ne() {
            return o;
        }
    }
    ca.len().cmp(&cb.len()).then(a.cmp(b))
}

/// What to say when no stored run is one `opts` asks for.
fn no_runs(opts: &Options) -> Error {
    let what = match (&opts.name_glob, &opts.suite) {
        (Some(g), _) => format!("no run has a name that matches '{}'", g.as_str()),
        (None, Some(s)) => format!("no run of suite '{s}'"),
        (None, None) => "the results directory holds no runs".to_string(),
    };
    usage(format!(
        "{what}; run `rqps run --name NAME` to store runs, or pick another --results/--name-glob"
    ))
}

/// The history of the runs `opts` selects from `runs` (as read by
/// [`super::load::read_results`]).
pub fn build(runs: &[RunDoc], opts: &Options) -> Result<History, Error> {
    let mut chosen: Vec<&RunDoc> = runs
        .iter()
        .filter(|r| opts.name_glob.as_ref().is_none_or(|g| g.matches(&r.name)))
        .filter(|r| opts.suite.as_ref().is_none_or(|s| *s == r.suite))
        .collect();
    if chosen.is_empty() {
        return Err(no_runs(opts));
    }
    let mut suites: Vec<&str> = chosen.iter().map(|r| r.suite.as_str()).collect();
    suites.sort();
    suites.dedup();
    if suites.len() > 1 {
        return Err(usage(format!(
            "the runs hold several suites ({}); pick one with --suite",
            suites.join(", ")
        )));
    }
    match opts.order {
        Order::Started => {
            chosen.sort_by(|a, b| (&a.started, &a.run_id).cmp(&(&b.started, &b.run_id)))
        }
        Order::Name => chosen.sort_by(|a, b| {
            natural_cmp(&a.name, &b.name)
                .then((&a.started, &a.run_id).cmp(&(&b.started, &b.run_id)))
        }),
    }
    if chosen.len() < 3 {
        return Err(usage(format!(
            "a history needs at least 3 runs; {} match",
            chosen.len()
        )));
    }

    // Keys in the order the runs first stored them.
    let mut keys: Vec<(String, usize, String)> = Vec::new();
    for r in &chosen {
        for t in &r.tests {
            if (t.reported || opts.all) && !keys.iter().any(|k| k.0 == t.test && k.1 == t.threads) {
                keys.push((t.test.clone(), t.threads, t.qps_unit.clone()));
            }
        }
    }
    let sweep = {
        let mut th: Vec<usize> = keys.iter().map(|k| k.1).collect();
        th.sort();
        th.dedup();
        th.len() > 1
    };
    let mut warnings = Vec::new();
    let mut series = Vec::new();
    let mut changes = Vec::new();
    // Each test's series first, then their change points on every CPU (the
    // permutation tests are most of the work): the same splits as one by
    // one, since each series has its own seeded shuffles.
    let mut prepared = Vec::new();
    for (test, threads, unit) in keys {
        let label = if sweep {
            format!("{test} t={threads}")
        } else {
            test.clone()
        };
        let qps: Vec<Option<f64>> = chosen
            .iter()
            .map(|r| {
                let v: Vec<f64> = r
                    .tests
                    .iter()
                    .filter(|t| {
                        t.test == test
                            && t.threads == threads
                            && t.status == crate::results::Status::Ok
                    })
                    .filter(|t| t.reported || opts.all)
                    .map(|t| t.qps)
                    .collect();
                stats::geomean(&v)
            })
            .collect();
        // The series without gaps, and the run index of each value.
        let present: Vec<(usize, f64)> = qps
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (i, v)))
            .collect();
        let missing = qps.len() - present.len();
        if missing > 0 {
            warnings.push(format!(
                "{label}: {missing} of {} runs have no counted result; the series skips them",
                qps.len()
            ));
        }
        prepared.push((label, unit, qps, present));
    }
    let found = crate::util::par_map(&prepared, |(_, _, _, present)| {
        let logs: Vec<f64> = present.iter().map(|p| p.1.ln()).collect();
        changepoint::e_divisive(&logs, opts.settings)
    });
    for ((label, unit, qps, present), splits) in prepared.into_iter().zip(found) {
        let mut bounds: Vec<usize> = vec![0];
        bounds.extend(splits.iter().map(|s| s.index));
        bounds.push(present.len());
        let gm = |a: usize, b: usize| {
            stats::geomean(&present[a..b].iter().map(|p| p.1).collect::<Vec<_>>()).unwrap_or(0.0)
        };
        for (k, s) in splits.iter().enumerate() {
            let (before, after) = (
                gm(bounds[k], bounds[k + 1]),
                gm(bounds[k + 1], bounds[k + 2]),
            );
            let index = present[s.index].0;
            changes.push(Change {
                test: label.clone(),
                index,
                run_id: chosen[index].run_id.clone(),
                before,
                after,
                change: after / before - 1.0,
                p: s.p,
            });
        }
        series.push(Series {
            test: label,
            unit,
            qps,
        });
    }
    Ok(History {
        suite: suites[0].to_string(),
        order: opts.order,
        max_p: opts.settings.max_p,
        runs: chosen
            .iter()
            .map(|r| HistRun {
                run_id: r.run_id.clone(),
                name: r.name.clone(),
                started: r.started.clone(),
                engine_version: r.engine.version.clone(),
            })
            .collect(),
        series,
        changes,
        warnings,
    })
}

fn p_text(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// Eight levels of a sparkline, low to high.
const SPARK: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The series as a sparkline scaled to its own range, `|` before each
/// change point, `·` for a run without a result.
pub fn sparkline(qps: &[Option<f64>], change_at: &[usize]) -> String {
    let vals: Vec<f64> = qps.iter().flatten().copied().collect();
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut s = String::new();
    for (i, v) in qps.iter().enumerate() {
        if change_at.contains(&i) {
            s.push('|');
        }
        s.push(match v {
            None => '·',
            Some(v) if hi > lo => SPARK[(((v - lo) / (hi - lo)) * 7.0).round() as usize],
            Some(_) => SPARK[3],
        });
    }
    s
}

/// The readable document: the summary, the table of change points, then a
/// chart per test (a sparkline table for term and md; SVG for html).
pub fn document(h: &History, charts: bool) -> Vec<Block> {
    let mut out = vec![Block::Heading(
        1,
        format!("History of {} runs ({})", h.runs.len(), h.suite),
    )];
    let (first, last) = (&h.runs[0], &h.runs[h.runs.len() - 1]);
    out.push(Block::Para(format!(
        "Runs ordered by {}, from {} ({}, {}) to {} ({}, {}). Change points by E-divisive means on \
log QPS with a permutation test (p <= {}); index is the first run after the change, counted from 0.",
        match h.order {
            Order::Started => "start time",
            Order::Name => "name",
        },
        first.run_id,
        first.name,
        first.started,
        last.run_id,
        last.name,
        last.started,
        h.max_p
    )));
    out.push(Block::Heading(2, "Change points".into()));
    if h.changes.is_empty() {
        out.push(Block::Para(format!(
            "No change point in {} test(s).",
            h.series.len()
        )));
    } else {
        let rows = h
            .changes
            .iter()
            .map(|c| {
                let shade = Some(super::compare::shade(
                    1.0 + c.change,
                    super::model::Verdict::Untested,
                ));
                vec![
                    TCell::from(c.test.as_str()),
                    c.index.to_string().into(),
                    c.run_id.as_str().into(),
                    format!("{} -> {}", export::qps(c.before), export::qps(c.after)).into(),
                    TCell::shaded(format!("{:+.1}%", 100.0 * c.change), shade),
                    p_text(c.p).into(),
                ]
            })
            .collect();
        out.push(Block::Table(Table {
            header: ["test", "index", "run", "QPS before -> after", "change", "p"]
                .map(String::from)
                .to_vec(),
            rows,
            left: 3,
        }));
    }
    out.push(Block::Heading(2, "QPS by run".into()));
    if charts {
        for s in &h.series {
            out.push(Block::Chart(super::doc::Chart::Drawn {
                svg: chart(h, s),
                small: true,
            }));
        }
    } else {
        let rows = h
            .series
            .iter()
            .map(|s| {
                let at: Vec<usize> = h
                    .changes
                    .iter()
                    .filter(|c| c.test == s.test)
                    .map(|c| c.index)
                    .collect();
                let vals: Vec<f64> = s.qps.iter().flatten().copied().collect();
                vec![
                    TCell::from(s.test.as_str()),
                    sparkline(&s.qps, &at).into(),
                    vals.first()
                        .map(|v| export::qps(*v))
                        .unwrap_or_default()
                        .into(),
                    vals.last()
                        .map(|v| export::qps(*v))
                        .unwrap_or_default()
                        .into(),
                ]
            })
            .collect();
        out.push(Block::Table(Table {
            header: ["test", "QPS by run (| change point)", "first", "last"]
                .map(String::from)
                .to_vec(),
            rows,
            left: 2,
        }));
    }
    if !h.warnings.is_empty() {
        out.push(Block::Heading(2, "Notes".into()));
        out.push(Block::Bullets(h.warnings.clone()));
    }
    out
}

/// One test's QPS by run index, the change points as dashed red lines and
/// the level of each piece between them as a grey step.
pub fn chart(h: &History, s: &Series) -> String {
    let (width, height, ml, mr, mt, mb) = (560.0, 240.0, 64.0, 16.0, 34.0, 40.0);
    let (pw, ph) = (width - ml - mr, height - mt - mb);
    let n = h.runs.len().max(2);
    let vals: Vec<f64> = s.qps.iter().flatten().copied().collect();
    let hi = vals.iter().copied().fold(0.0f64, f64::max);
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    // A y axis around the data, not from 0: a few percent must show.
    let pad = ((hi - lo) * 0.15).max(hi * 0.01);
    let step = svg::nice_step(hi - lo + 2.0 * pad, 5.0);
    let y0 = ((lo - pad) / step).floor() * step;
    let y1 = ((hi + pad) / step).ceil() * step;
    let x = |i: usize| ml + i as f64 / (n - 1) as f64 * pw;
    let y = |v: f64| mt + ph - (v - y0) / (y1 - y0) * ph;
    let mut o = String::new();
    let title = format!("{}: QPS by run", s.test);
    let _ = write!(
        o,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" role="img" aria-label="{t}" font-family="sans-serif"><title>{t}</title><rect width="100%" height="100%" fill="#fff"/><text x="{ml}" y="20" font-size="14" font-weight="bold">{t}</text>"##,
        t = esc(&title)
    );
    let mut v = y0;
    while v <= y1 + step * 0.01 {
        let yy = y(v);
        let _ = write!(
            o,
            r##"<line x1="{ml}" x2="{:.1}" y1="{yy:.1}" y2="{yy:.1}" stroke="#e3e3e3"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end" fill="#333">{}</text>"##,
            ml + pw,
            ml - 6.0,
            yy + 4.0,
            svg::tick_label(v)
        );
        v += step;
    }
    let xstep = svg::nice_step((n - 1) as f64, 8.0).max(1.0) as usize;
    for i in (0..n).step_by(xstep) {
        let _ = write!(
            o,
            r##"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle" fill="#333">{i}</text>"##,
            x(i),
            mt + ph + 15.0
        );
    }
    let _ = write!(
        o,
        r##"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle" fill="#555">run index ({} runs)</text>"##,
        ml + pw / 2.0,
        mt + ph + 32.0,
        h.runs.len()
    );
    let mine: Vec<&Change> = h.changes.iter().filter(|c| c.test == s.test).collect();
    // Piece levels: before of each change up to it, the last after to the end.
    let mut start = 0usize;
    for (k, c) in mine.iter().enumerate() {
        let _ = write!(
            o,
            r##"<line x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#999" stroke-width="2"/>"##,
            x(start),
            x(c.index),
            y(c.before),
            y(c.before)
        );
        start = c.index;
        if k + 1 == mine.len() {
            let _ = write!(
                o,
                r##"<line x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#999" stroke-width="2"/>"##,
                x(start),
                x(n - 1),
                y(c.after),
                y(c.after)
            );
        }
        let xx = x(c.index);
        let _ = write!(
            o,
            r##"<line class="change" x1="{xx:.1}" x2="{xx:.1}" y1="{mt}" y2="{:.1}" stroke="#c00" stroke-dasharray="4 3"/><text x="{:.1}" y="{:.1}" font-size="11" fill="#c00">{:+.1}%</text>"##,
            mt + ph,
            xx + 3.0,
            mt + 11.0,
            100.0 * c.change
        );
    }
    let pts: Vec<String> = s
        .qps
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| format!("{:.1},{:.1}", x(i), y(v))))
        .collect();
    let _ = write!(
        o,
        r##"<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/>"##,
        svg::colour(0),
        pts.join(" ")
    );
    o.push_str("</svg>");
    o
}

pub fn render_term(h: &History, colour: bool) -> String {
    let mut out = String::new();
    for b in document(h, false) {
        term::block(&b, colour, &mut out);
    }
    out
}

pub fn render_md(h: &History) -> String {
    let mut out = String::new();
    for b in document(h, false) {
        md::block(&b, &mut out);
    }
    out
}

pub fn render_html(h: &History) -> String {
    let doc = document(h, true);
    export::html::page(&doc)
}

pub fn render_json(h: &History) -> String {
    let mut s = serde_json::to_string_pretty(h).expect("a history serializes");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_with_their_numbers() {
        let mut v = vec!["nightly-10", "nightly-9", "nightly-100", "nightly-09b", "a"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            ["a", "nightly-9", "nightly-09b", "nightly-10", "nightly-100"]
        );
    }

    #[test]
    fn sparkline_marks_changes_and_gaps() {
        let s = sparkline(&[Some(1.0), Some(2.0), None, Some(1.0)], &[1]);
        assert_eq!(s, "▁|█·▁");
        assert_eq!(sparkline(&[Some(3.0), Some(3.0)], &[]), "▄▄");
    }
}
