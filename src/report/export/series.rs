//! The version-series chart of the HTML report: for one group, x the names
//! in report order (the base first), y QPS relative to the base, one line per
//! test, the grey band between the red and green thresholds shaded. The
//! picture posts comparing many versions use.

use std::fmt::Write;

use crate::report::compare::{GREEN_AT, RED_AT};
use crate::report::model::{Report, Verdict};
use crate::report::svg::{self, esc};

/// A test's points, one per name: the ratio and whether it is significant.
type Points = Vec<Option<(f64, bool)>>;

/// The chart of group `gi` (an SVG element). A point is filled when its
/// change is significant (`+`/`-`), hollow otherwise; a test a target has
/// no result for breaks its line there.
pub fn chart(r: &Report, gi: usize) -> String {
    let g = &r.groups[gi];
    let sweep = r.sweep();
    let names = r.names();
    let tests: Vec<(String, Points)> = g
        .rows
        .iter()
        .map(|row| {
            let mut pts = vec![Some((1.0, false))];
            pts.extend(row.cells.iter().map(|c| {
                c.as_ref().map(|c| {
                    let sig = matches!(c.rel.verdict, Verdict::Faster | Verdict::Slower);
                    (c.rel.ratio, sig)
                })
            }));
            (row.label(sweep), pts)
        })
        .collect();
    let (lo, hi) = svg::relative_range(
        tests
            .iter()
            .flat_map(|(_, p)| p.iter().flatten().map(|x| x.0)),
    );
    let (width, ml, mr) = (560.0, 52.0, 16.0);
    let pw = width - ml - mr;
    // The legend: as many names per line as fit.
    let mut legend = String::new();
    let (mut lx, mut ly) = (ml, 42.0);
    for (i, (name, _)) in tests.iter().enumerate() {
        let w = 24.0 + 6.5 * name.chars().count() as f64;
        if lx + w > ml + pw && lx > ml {
            lx = ml;
            ly += 16.0;
        }
        let _ = write!(
            legend,
            r##"<rect x="{lx:.1}" y="{:.1}" width="12" height="4" fill="{}"/><text x="{:.1}" y="{ly:.1}" font-size="11" fill="#333">{}</text>"##,
            ly - 5.0,
            svg::colour(i),
            lx + 16.0,
            esc(name)
        );
        lx += w;
    }
    let mt = ly + 12.0;
    let ph = 220.0;
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(1) as f64;
    let slanted = longest * 6.5 > pw / names.len().max(1) as f64;
    let mb = if slanted { 30.0 + longest * 4.6 } else { 34.0 };
    let height = mt + ph + mb;
    let x = |i: usize| ml + (i as f64 + 0.5) / names.len().max(1) as f64 * pw;
    let y = |v: f64| mt + ph - (v.clamp(lo, hi) - lo) / (hi - lo) * ph;
    let title = format!("{}: relative QPS by version", g.title);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" class="series" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" role="img" aria-label="{t}" font-family="sans-serif"><title>{t}</title><rect width="100%" height="100%" fill="#fff"/><text x="{ml}" y="20" font-size="14" font-weight="bold">{t}</text>"##,
        t = esc(&title)
    );
    s.push_str(&legend);
    // The band in which a ratio prints grey.
    let _ = write!(
        s,
        r##"<rect x="{ml}" y="{:.1}" width="{pw:.1}" height="{:.1}" fill="#ececec"/>"##,
        y(GREEN_AT),
        y(RED_AT) - y(GREEN_AT)
    );
    let step = svg::nice_step(hi - lo, 5.0);
    let mut v = (lo / step).ceil() * step;
    while v <= hi + 1e-9 {
        let _ = write!(
            s,
            r##"<line x1="{ml}" x2="{:.1}" y1="{yy:.1}" y2="{yy:.1}" stroke="#e3e3e3"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end" fill="#333">{}</text>"##,
            ml + pw,
            ml - 6.0,
            y(v) + 4.0,
            svg::tick_label(v),
            yy = y(v)
        );
        v += step;
    }
    let _ = write!(
        s,
        r##"<line x1="{ml}" x2="{:.1}" y1="{yy:.1}" y2="{yy:.1}" stroke="#555" stroke-dasharray="5 4"/>"##,
        ml + pw,
        yy = y(1.0)
    );
    for (i, n) in names.iter().enumerate() {
        let (xx, yy) = (x(i), mt + ph + 15.0);
        if slanted {
            let _ = write!(
                s,
                r##"<text x="{xx:.1}" y="{yy:.1}" font-size="11" text-anchor="end" fill="#333" transform="rotate(-35 {xx:.1} {yy:.1})">{}</text>"##,
                esc(n)
            );
        } else {
            let _ = write!(
                s,
                r##"<text x="{xx:.1}" y="{yy:.1}" font-size="11" text-anchor="middle" fill="#333">{}</text>"##,
                esc(n)
            );
        }
    }
    for (ti, (name, pts)) in tests.iter().enumerate() {
        let c = svg::colour(ti);
        // Consecutive present points make one polyline each.
        let mut run: Vec<String> = Vec::new();
        let flush = |run: &mut Vec<String>, s: &mut String| {
            if run.len() > 1 {
                let _ = write!(
                    s,
                    r##"<polyline fill="none" stroke="{c}" stroke-width="2" points="{}"/>"##,
                    run.join(" ")
                );
            }
            run.clear();
        };
        for (i, p) in pts.iter().enumerate() {
            match p {
                Some((v, _)) => run.push(format!("{:.1},{:.1}", x(i), y(*v))),
                None => flush(&mut run, &mut s),
            }
        }
        flush(&mut run, &mut s);
        for (i, p) in pts.iter().enumerate().skip(1) {
            if let Some((v, sig)) = p {
                let _ = write!(
                    s,
                    r##"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{}" stroke="{c}" stroke-width="1.5"><title>{} {}: {v:.2}</title></circle>"##,
                    x(i),
                    y(*v),
                    if *sig { c } else { "#fff" },
                    esc(name),
                    esc(names[i])
                );
            }
        }
    }
    s.push_str("</svg>");
    s
}
