//! One self-contained HTML page: inline CSS, inline SVG charts, no script and
//! nothing fetched. The tables are the same blocks the terminal prints.

use super::document::{document, rel_text};
use super::format::Exporter;
use crate::report::doc::{Block, Chart, Table};
use crate::report::model::{Report, Shade, Verdict};
use crate::report::svg::{self, Bar, BarChart, Line, LineChart, esc};

pub struct Html;

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#222;line-height:1.4}
h1{font-size:1.5em;margin-bottom:.3em}h2{font-size:1.25em;margin-top:1.5em;border-bottom:1px solid #ccc;padding-bottom:.2em}
h3{font-size:1em;margin:1.2em 0 .4em}p{max-width:70em}
table{border-collapse:collapse;margin:.4em 0 1em;font-size:13px}
th,td{border:1px solid #d0d0d0;padding:2px 8px;white-space:nowrap}th{background:#f3f3f3;text-align:left}
div.table{max-width:100%;overflow-x:auto}
table.diff td{white-space:normal;overflow-wrap:anywhere;max-width:36em;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.red{background:#ff9a9a}td.green{background:#81ffa6}td.grey{background:#e4e4e4}
.beside{display:flex;flex-wrap:wrap;gap:0 2.5em;align-items:flex-start}.beside.top>div{min-width:0;max-width:100%}
.charts{display:flex;flex-wrap:wrap;gap:12px}.chart{overflow-x:auto;max-width:100%}
svg{display:block}details{margin:.4em 0 1em}summary{cursor:pointer;color:#333}
p,li,summary,h1,h2,h3{overflow-wrap:anywhere}";

fn table(t: &Table, out: &mut String) {
    table_of(t, "", out)
}

/// A table in a box of its own that scrolls sideways where the table is
/// wider than the page, so the page itself never does; `class` for the
/// table (`diff`: its values wrap).
fn table_of(t: &Table, class: &str, out: &mut String) {
    if class.is_empty() {
        out.push_str("<div class=\"table\"><table><thead><tr>");
    } else {
        out.push_str(&format!(
            "<div class=\"table\"><table class=\"{class}\"><thead><tr>"
        ));
    }
    for h in &t.header {
        out.push_str(&format!("<th>{}</th>", esc(h)));
    }
    out.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        out.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let mut class = Vec::new();
            if i >= t.left {
                class.push("num");
            }
            match c.shade {
                Some(Shade::Red) => class.push("red"),
                Some(Shade::Green) => class.push("green"),
                Some(Shade::Grey) => class.push("grey"),
                None => {}
            }
            if class.is_empty() {
                out.push_str(&format!("<td>{}</td>", esc(&c.text())));
            } else {
                out.push_str(&format!(
                    "<td class=\"{}\">{}</td>",
                    class.join(" "),
                    esc(&c.text())
                ));
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>\n");
}

fn group_chart(r: &Report, gi: usize) -> String {
    let g = &r.groups[gi];
    let sweep = r.sweep();
    let chart = BarChart {
        title: format!("{}: relative QPS against {}", g.title, r.base),
        categories: g.rows.iter().map(|row| row.label(sweep)).collect(),
        series: r.targets.clone(),
        bars: g
            .rows
            .iter()
            .map(|row| {
                row.cells
                    .iter()
                    .zip(&r.targets)
                    .map(|(c, t)| {
                        c.as_ref().map(|c| Bar {
                            value: c.rel.ratio,
                            low: c.rel.ci_low,
                            high: c.rel.ci_high,
                            faded: c.rel.verdict == Verdict::Same,
                            tip: format!(
                                "{t}, {}: {}{}",
                                row.label(sweep),
                                rel_text(&c.rel),
                                match (c.rel.ci_low, c.rel.ci_high) {
                                    (Some(lo), Some(hi)) => format!(" (95% CI {lo:.2} to {hi:.2})"),
                                    _ => String::new(),
                                }
                            ),
                        })
                    })
                    .collect()
            })
            .collect(),
        caption: svg::RELATIVE_CAPTION.into(),
        first_is_base: false,
    };
    svg::bar_chart(&chart)
}

fn names_lines(r: &Report) -> impl Iterator<Item = (usize, &str, &'static str)> {
    r.names().into_iter().enumerate().map(|(i, n)| {
        let col = if i == 0 {
            svg::base_colour()
        } else {
            svg::colour(i - 1)
        };
        (i, n, col)
    })
}

fn per_second_chart(r: &Report, gi: usize, ri: usize) -> String {
    let row = &r.groups[gi].rows[ri];
    let lines = names_lines(r)
        .filter_map(|(i, name, colour)| {
            let side = row.side(i)?;
            let reps = if side.n > 1 {
                format!(" (mean of {})", side.n)
            } else {
                String::new()
            };
            Some(Line {
                name: format!("{name}{reps}"),
                colour,
                points: side.per_second.iter().map(|p| (p[0], p[1])).collect(),
            })
        })
        .collect();
    svg::line_chart(&LineChart {
        title: format!("{} t={}: per second", row.test, row.threads),
        x_label: "seconds".into(),
        y_label: row.unit_note().unwrap_or("QPS").into(),
        lines,
        markers: false,
        x_categories: None,
    })
}

fn sweep_chart(r: &Report, suite: &str, test: &str) -> String {
    let rows: Vec<_> = r
        .rows()
        .filter(|x| x.suite == suite && x.test == test)
        .collect();
    let cats: Vec<f64> = r.thread_counts.iter().map(|t| *t as f64).collect();
    let lines = names_lines(r)
        .map(|(i, name, colour)| Line {
            name: name.to_string(),
            colour,
            points: rows
                .iter()
                .filter_map(|row| {
                    let side = row.side(i)?;
                    Some((row.threads as f64, side.qps))
                })
                .collect(),
        })
        .collect();
    svg::line_chart(&LineChart {
        title: format!("{test}: QPS by thread count"),
        x_label: "threads".into(),
        y_label: rows
            .first()
            .and_then(|r| r.unit_note())
            .unwrap_or("QPS")
            .into(),
        lines,
        markers: true,
        x_categories: Some(cats),
    })
}

/// A block of text or a table, the same in a report and in a [`page`];
/// the other blocks are [`block`]'s and [`plain_block`]'s.
fn text_block(b: &Block, out: &mut String) {
    match b {
        Block::Heading(level, s) => out.push_str(&format!("<h{level}>{}</h{level}>\n", esc(s))),
        Block::Para(s) => out.push_str(&format!("<p>{}</p>\n", esc(s))),
        Block::Bullets(items) => {
            out.push_str("<ul>");
            for i in items {
                out.push_str(&format!("<li>{}</li>", esc(i)));
            }
            out.push_str("</ul>\n");
        }
        Block::Table(t) => table(t, out),
        Block::Diff(d) => table_of(&d.table(), "diff", out),
        Block::Folded(..) | Block::Beside(_) | Block::Chart(_) => {}
    }
}

fn block(r: &Report, b: &Block, out: &mut String) {
    match b {
        b @ (Block::Heading(..)
        | Block::Para(_)
        | Block::Bullets(_)
        | Block::Table(_)
        | Block::Diff(_)) => text_block(b, out),
        Block::Folded(summary, bs) => {
            out.push_str(&format!("<details><summary>{}</summary>\n", esc(summary)));
            for b in bs {
                block(r, b, out);
            }
            out.push_str("</details>\n");
        }
        Block::Beside(bs) => {
            // Each heading starts a column of its own.
            out.push_str("<div class=\"beside\">");
            let mut open = false;
            for b in bs {
                if matches!(b, Block::Heading(..)) {
                    if open {
                        out.push_str("</div>");
                    }
                    out.push_str("<div>");
                    open = true;
                }
                block(r, b, out);
            }
            if open {
                out.push_str("</div>");
            }
            out.push_str("</div>\n");
        }
        Block::Chart(c) => {
            let svg = match c {
                Chart::Group(gi) => group_chart(r, *gi),
                Chart::PerSecond { group, row } => per_second_chart(r, *group, *row),
                Chart::Sweep { suite, test } => sweep_chart(r, suite, test),
                Chart::Drawn { svg, .. } => svg.clone(),
                Chart::Plot { plot, .. } => plot.svg(),
            };
            out.push_str("<div class=\"chart\">");
            out.push_str(&svg);
            out.push_str("</div>\n");
        }
    }
}

/// The CPU profiles' flame graphs, as SVG images (their own styles stay
/// out of the page); nothing when the results carry no profile.
fn flame_graphs(r: &Report, out: &mut String) {
    use base64::Engine as _;
    if r.flame_graphs.is_empty() {
        return;
    }
    let img = |svg: &str, alt: &str, out: &mut String| {
        out.push_str(&format!(
            "<div class=\"chart flame\"><img alt=\"{}\" style=\"max-width:100%\" src=\"data:image/svg+xml;base64,{}\"></div>\n",
            esc(alt),
            base64::engine::general_purpose::STANDARD.encode(svg)
        ));
    };
    out.push_str("<h2 id=\"cpu-profiles\">CPU profiles</h2>\n<p>Where each test's engine CPU went, \
from perf samples of the measured interval (<code>--cpu-profile</code>); each graph spans its \
own total, its frames' counts are CPU time per operation (ps). In the differential graph the target's \
stacks are red where they cost more CPU per operation than in the base, blue where less, so runs \
of different lengths compare. \
<code>rqps report --explain TEST</code> prints the same as numbers.</p>\n");
    for set in &r.flame_graphs {
        out.push_str(&format!(
            "<h3>{} t={} ({})</h3>\n",
            esc(&set.test),
            set.threads,
            esc(&set.engine_is)
        ));
        img(&set.base, &format!("flame graph of {}", r.base), out);
        for (name, graph, diff) in &set.targets {
            img(graph, &format!("flame graph of {name}"), out);
            img(
                diff,
                &format!("differential flame graph of {name} against {}", r.base),
                out,
            );
        }
    }
}

/// Where the page is relative to its top: the summary and the significant
/// changes, drawn side by side.
#[derive(Clone, Copy)]
enum Top {
    Before,
    Summary,
    Changes,
    After,
}

impl Exporter for Html {
    fn render(&self, report: &Report) -> String {
        let doc = document(report, true);
        let title = match doc.first() {
            Some(Block::Heading(_, t)) => t.clone(),
            _ => "rqps report".into(),
        };
        let mut out = format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{}</title><style>{STYLE}</style></head><body>\n",
            esc(&title)
        );
        // Consecutive small charts (per second, thread sweeps) flow side by side.
        let mut in_charts = false;
        // The summary and the significant changes side by side at the top.
        let mut top = Top::Before;
        for b in &doc {
            if let Block::Heading(2, t) = b {
                if in_charts {
                    out.push_str("</div>\n");
                    in_charts = false;
                }
                let name = super::document::section_name(t);
                top = match (top, name.as_str()) {
                    (Top::Before, "summary") => {
                        out.push_str("<div class=\"beside top\"><div>");
                        Top::Summary
                    }
                    (Top::Summary, "significant-changes") => {
                        out.push_str("</div><div>");
                        Top::Changes
                    }
                    (Top::Summary | Top::Changes, _) => {
                        out.push_str("</div></div>\n");
                        Top::After
                    }
                    (t, _) => t,
                };
            }
            let small = matches!(
                b,
                Block::Chart(
                    Chart::PerSecond { .. }
                        | Chart::Sweep { .. }
                        | Chart::Drawn { small: true, .. }
                        | Chart::Plot { small: true, .. }
                )
            );
            if small && !in_charts {
                out.push_str("<div class=\"charts\">");
                in_charts = true;
            } else if !small && in_charts {
                out.push_str("</div>\n");
                in_charts = false;
            }
            block(report, b, &mut out);
        }
        if in_charts {
            out.push_str("</div>\n");
        }
        if matches!(top, Top::Summary | Top::Changes) {
            out.push_str("</div></div>\n");
        }
        flame_graphs(report, &mut out);
        out.push_str(
            "<p style=\"color:#777;font-size:12px\">Made by rqps report.</p>\n</body></html>\n",
        );
        out
    }
}

/// A page of blocks that need no [`Report`] (text, tables and drawn charts;
/// other charts are left out): `rqps history` renders through it.
pub fn page(doc: &[Block]) -> String {
    let title = match doc.first() {
        Some(Block::Heading(_, t)) => t.clone(),
        _ => "rqps".into(),
    };
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{}</title><style>{STYLE}</style></head><body>\n",
        esc(&title)
    );
    let mut in_charts = false;
    for b in doc {
        let small = matches!(b, Block::Chart(Chart::Drawn { small: true, .. }));
        if small != in_charts {
            out.push_str(if small {
                "<div class=\"charts\">"
            } else {
                "</div>\n"
            });
            in_charts = small;
        }
        plain_block(b, &mut out);
    }
    if in_charts {
        out.push_str("</div>\n");
    }
    out.push_str("<p style=\"color:#777;font-size:12px\">Made by rqps.</p>\n</body></html>\n");
    out
}

/// One block of [`page`].
fn plain_block(b: &Block, out: &mut String) {
    match b {
        b @ (Block::Heading(..)
        | Block::Para(_)
        | Block::Bullets(_)
        | Block::Table(_)
        | Block::Diff(_)) => text_block(b, out),
        Block::Beside(bs) => {
            out.push_str("<div class=\"beside\">");
            for b in bs {
                plain_block(b, out);
            }
            out.push_str("</div>\n");
        }
        Block::Folded(summary, bs) => {
            out.push_str(&format!("<details><summary>{}</summary>\n", esc(summary)));
            for b in bs {
                plain_block(b, out);
            }
            out.push_str("</details>\n");
        }
        Block::Chart(Chart::Drawn { svg, .. }) => {
            out.push_str("<div class=\"chart\">");
            out.push_str(svg);
            out.push_str("</div>\n");
        }
        Block::Chart(_) => {}
    }
}
