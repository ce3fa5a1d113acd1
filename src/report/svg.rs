//! Hand-written SVG charts for the HTML report: grouped bars of relative QPS
//! and line charts (QPS per second, QPS by thread count). No dependency; the
//! browser lays the text out. Every text that goes in is escaped.

use std::fmt::Write;

/// Escapes text for XML/HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Series colours: the base (in line charts) first, then the targets.
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#76b7b2", "#b07aa1", "#edc948", "#9c755f", "#ff9da7", "#59a14f",
    "#e15759", "#bab0ac",
];
const BASE_COLOUR: &str = "#555555";

/// The colour of target `i` (0-based, the base excluded).
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// A step of 1, 2, 2.5 or 5 × 10^k giving about `ticks` intervals over `range`.
pub fn nice_step(range: f64, ticks: f64) -> f64 {
    if range.is_nan() || range <= 0.0 || range.is_infinite() {
        return 1.0;
    }
    let raw = range / ticks;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let m = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .find(|m| *m >= norm - 1e-9)
        .unwrap_or(10.0);
    m * mag
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A tick label: `0.8`, `12k`, `1.5M`.
pub fn tick_label(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(format!("{:.2}", v / 1e6)))
    } else if a >= 1e4 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else {
        trim(format!("{v:.2}"))
    }
}

fn ticks(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let mut v = Vec::new();
    let mut k = (lo / step).ceil();
    while k * step <= hi + step * 1e-9 && v.len() < 100 {
        v.push(k * step);
        k += 1.0;
    }
    v
}

/// Lays a legend out in rows within `width`; returns the SVG and its height.
fn legend(items: &[(String, &str)], x0: f64, y0: f64, width: f64) -> (String, f64) {
    let mut s = String::new();
    let (mut x, mut y) = (x0, y0);
    for (name, col) in items {
        let w = 22.0 + 7.0 * name.chars().count() as f64;
        if x > x0 && x + w > x0 + width {
            x = x0;
            y += 18.0;
        }
        let _ = write!(
            s,
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{col}"/><text x="{:.1}" y="{:.1}" font-size="12">{}</text>"#,
            y - 10.0,
            x + 16.0,
            y,
            esc(name)
        );
        x += w;
    }
    (s, y - y0 + 18.0)
}

/// One bar of a grouped bar chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub value: f64,
    /// Confidence interval, drawn as a whisker.
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Drawn pale: the change is not significant (`~`).
    pub faded: bool,
    /// Tooltip.
    pub tip: String,
}

/// Relative values around 1.0: `bars[category][series]`.
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    pub title: String,
    pub categories: Vec<String>,
    pub series: Vec<String>,
    pub bars: Vec<Vec<Option<Bar>>>,
    /// The line under the title that says how to read the chart.
    pub caption: String,
    /// The first series is the base: drawn in the base's colour, as in the line charts.
    pub first_is_base: bool,
}

/// The caption of a chart of ratios to the base.
pub const RELATIVE_CAPTION: &str = "dashed line: 1.0 = the base; whiskers: 95% CI (arrowhead: cut off); pale bars: not significant (~)";

/// The y range of a relative chart: the floor is at most 0.8 and 0.05 under
/// the lowest value (rounded down to 0.1), never below 0; the top at least 1.2.
pub fn relative_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.8, 1.2);
    }
    // The 1e-9 keeps 0.85 − 0.05 from flooring to 0.7 through rounding.
    let floor = (((lo - 0.05) * 10.0 + 1e-9).floor() / 10.0).clamp(0.0, 0.8);
    let top = (((hi + 0.05) * 10.0 - 1e-9).ceil() / 10.0).max(1.2);
    (floor, top)
}

pub fn bar_chart(c: &BarChart) -> String {
    let series_colour = |i: usize| match (c.first_is_base, i) {
        (true, 0) => base_colour(),
        (true, i) => colour(i - 1),
        (false, i) => colour(i),
    };
    let nser = c.series.len().max(1) as f64;
    let ncat = c.categories.len().max(1) as f64;
    let longest = c
        .categories
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0) as f64;
    // Categories share at least 540 px; bars stay at most 28 px wide.
    let cat_w = (nser * 16.0 + 22.0).max(46.0).max(540.0 / ncat);
    let bar_w = ((cat_w - 14.0) / nser).min(28.0);
    // Room on the left for the first slanted label (about 4.9 px per character).
    let ml = (longest * 4.9 - cat_w / 2.0 + 12.0).max(56.0);
    let mr = 16.0;
    let plot_w = cat_w * ncat;
    let width = ml + plot_w + mr;
    let items: Vec<(String, &str)> = c
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| (s.clone(), series_colour(i)))
        .collect();
    // The caption in lines that fit the chart (about 5.6 px a character at
    // 11 px), so that none is cut at the chart's edge.
    let per_line = ((plot_w + mr) / 5.6).max(30.0) as usize;
    let caption = crate::util::text::wrap(&c.caption, per_line, "", "");
    let extra = 13.0 * caption.len().saturating_sub(1) as f64;
    let (leg, leg_h) = legend(&items, ml, 72.0 + extra, plot_w);
    let mt = 72.0 + extra + leg_h + 8.0;
    let plot_h = 240.0;
    let mb = 24.0 + longest * 6.4 * 0.7;
    let height = mt + plot_h + mb;

    // The bars set the range; a whisker may widen it to half the lowest bar
    // and twice the highest, and is cut (with an arrowhead) beyond that, so
    // the wide interval of two repeats does not flatten every bar.
    let bars = || c.bars.iter().flatten().flatten();
    let (vlo, vhi) = bars().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), b| {
        (lo.min(b.value), hi.max(b.value))
    });
    let values = bars().flat_map(|b| {
        [Some(b.value), b.low, b.high]
            .into_iter()
            .flatten()
            .map(|v| v.clamp(vlo / 2.0, vhi * 2.0))
            .collect::<Vec<_>>()
    });
    let (y0, y1) = relative_range(values);
    let y = |v: f64| mt + plot_h - (v.clamp(y0, y1) - y0) / (y1 - y0) * plot_h;

    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" role="img" aria-label="{t}" font-family="sans-serif"><title>{t}</title><rect width="100%" height="100%" fill="#fff"/>"##,
        t = esc(&c.title)
    );
    let _ = write!(
        s,
        r#"<text x="{ml}" y="20" font-size="15" font-weight="bold">{}</text>"#,
        esc(&c.title)
    );
    if y0 > 0.0 {
        let _ = write!(
            s,
            r##"<text x="{ml}" y="38" font-size="12" font-weight="bold" fill="#a33">y-axis starts at {}, not 0</text>"##,
            tick_label(y0)
        );
    }
    for (i, line) in caption.iter().enumerate() {
        let _ = write!(
            s,
            r##"<text x="{ml}" y="{:.0}" font-size="11" fill="#555">{}</text>"##,
            54.0 + 13.0 * i as f64,
            esc(line)
        );
    }
    s.push_str(&leg);
    grid(&mut s, ml, plot_w, (y0, y1), &y);
    // Bars.
    for (ci, cat) in c.bars.iter().enumerate() {
        let x0 = ml + ci as f64 * cat_w + (cat_w - bar_w * nser) / 2.0;
        for (si, b) in cat.iter().enumerate() {
            let Some(b) = b else { continue };
            let x = x0 + si as f64 * bar_w;
            let top = y(b.value);
            let base = y(y0);
            let _ = write!(
                s,
                r#"<rect x="{x:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{}"{}><title>{}</title></rect>"#,
                (bar_w - 2.0).max(1.0),
                (base - top).max(0.0),
                series_colour(si),
                if b.faded {
                    r#" fill-opacity="0.35""#
                } else {
                    ""
                },
                esc(&b.tip)
            );
            if let (Some(lo), Some(hi)) = (b.low, b.high) {
                whisker(&mut s, x + (bar_w - 2.0) / 2.0, (lo, hi), (y0, y1), &y);
            }
        }
        // Category label, slanted.
        let cx = ml + (ci as f64 + 0.5) * cat_w;
        let ly = mt + plot_h + 14.0;
        let _ = write!(
            s,
            r#"<text x="{cx:.1}" y="{ly:.1}" font-size="11" text-anchor="end" transform="rotate(-40 {cx:.1} {ly:.1})">{}</text>"#,
            esc(&c.categories[ci])
        );
    }
    // Axes and the reference line at 1.0.
    let _ = write!(
        s,
        r##"<path d="M{ml} {mt}V{:.1}H{:.1}" stroke="#333" fill="none"/>"##,
        mt + plot_h,
        ml + plot_w
    );
    let y_one = y(1.0);
    let _ = write!(
        s,
        r##"<line x1="{ml}" x2="{:.1}" y1="{y_one:.1}" y2="{y_one:.1}" stroke="#000" stroke-width="1.5" stroke-dasharray="6 4"/>"##,
        ml + plot_w
    );
    s.push_str("</svg>");
    s
}

/// The grid lines and y labels of a relative chart, and a label of the
/// floor when no tick falls on it.
fn grid(s: &mut String, ml: f64, plot_w: f64, (y0, y1): (f64, f64), y: &dyn Fn(f64) -> f64) {
    let step = nice_step(y1 - y0, 6.0);
    for t in ticks(y0, y1, step) {
        let yy = y(t);
        let _ = write!(
            s,
            r##"<line x1="{ml}" x2="{:.1}" y1="{yy:.1}" y2="{yy:.1}" stroke="#e3e3e3"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end" fill="#333">{}</text>"##,
            ml + plot_w,
            ml - 6.0,
            yy + 4.0,
            tick_label(t)
        );
    }
    // The floor gets a label of its own when no tick falls on it.
    if ticks(y0, y1, step)
        .first()
        .is_none_or(|t| *t - y0 > step * 0.3)
    {
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end" fill="#a33">{}</text>"##,
            ml - 6.0,
            y(y0) + 4.0,
            tick_label(y0)
        );
    }
}

/// The interval `lo..hi` of a bar centred at `cx`: an end inside the range
/// `y0..y1` gets a cap, a cut one an arrowhead.
fn whisker(
    s: &mut String,
    cx: f64,
    (lo, hi): (f64, f64),
    (y0, y1): (f64, f64),
    y: &dyn Fn(f64) -> f64,
) {
    let end = |v: f64, dir: f64| {
        if (y0..=y1).contains(&v) {
            format!("M{:.1} {:.1}h6", cx - 3.0, y(v))
        } else {
            let tip = y(v);
            format!(
                "M{:.1} {:.1}L{cx:.1} {tip:.1}L{:.1} {:.1}",
                cx - 3.5,
                tip + 6.0 * dir,
                cx + 3.5,
                tip + 6.0 * dir
            )
        }
    };
    let _ = write!(
        s,
        r##"<path d="M{cx:.1} {:.1}V{:.1}{}{}" stroke="#222" fill="none"/>"##,
        y(lo),
        y(hi),
        end(lo, -1.0),
        end(hi, 1.0)
    );
}

/// One line of a line chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub name: String,
    pub colour: &'static str,
    pub points: Vec<(f64, f64)>,
}

/// A line chart; the first line is the base.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    /// Draw a dot at each point.
    pub markers: bool,
    /// Equally spaced categories (thread counts) instead of a linear x axis.
    pub x_categories: Option<Vec<f64>>,
}

/// The base's colour in line charts.
pub fn base_colour() -> &'static str {
    BASE_COLOUR
}

pub fn line_chart(c: &LineChart) -> String {
    let (width, ml, mr) = (560.0, 60.0, 16.0);
    let plot_w = width - ml - mr;
    let items: Vec<(String, &str)> = c.lines.iter().map(|l| (l.name.clone(), l.colour)).collect();
    let (leg, leg_h) = legend(&items, ml, 40.0, plot_w);
    let mt = 40.0 + leg_h + 6.0;
    let plot_h = 200.0;
    let height = mt + plot_h + 44.0;
    let pts = || c.lines.iter().flat_map(|l| l.points.iter());
    let y_max = pts().map(|p| p.1).fold(0.0f64, f64::max);
    let y_step = nice_step(if y_max > 0.0 { y_max * 1.05 } else { 1.0 }, 5.0);
    let y1 = ((y_max * 1.05) / y_step).ceil().max(1.0) * y_step;
    let y = |v: f64| mt + plot_h - v.clamp(0.0, y1) / y1 * plot_h;
    type XAxis = (Box<dyn Fn(f64) -> f64>, Vec<(f64, String)>);
    let (x_of, xticks): XAxis = match &c.x_categories {
        Some(cats) => {
            let n = cats.len().max(1) as f64;
            let cats2 = cats.clone();
            let pos = move |v: f64| {
                let i = cats2.iter().position(|c| *c == v).unwrap_or(0) as f64;
                ml + (i + 0.5) / n * plot_w
            };
            let t = cats.iter().map(|v| (pos(*v), tick_label(*v))).collect();
            (Box::new(pos), t)
        }
        None => {
            let x_max = pts().map(|p| p.0).fold(0.0f64, f64::max).max(1.0);
            let step = nice_step(x_max, 6.0);
            let x1 = (x_max / step).ceil() * step;
            let f = move |v: f64| ml + v / x1 * plot_w;
            let t = ticks(0.0, x1, step)
                .into_iter()
                .map(|v| (f(v), tick_label(v)))
                .collect();
            (Box::new(f), t)
        }
    };

    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" role="img" aria-label="{t}" font-family="sans-serif"><title>{t}</title><rect width="100%" height="100%" fill="#fff"/><text x="{ml}" y="20" font-size="14" font-weight="bold">{t}</text>"##,
        t = esc(&c.title)
    );
    s.push_str(&leg);
    for t in ticks(0.0, y1, y_step) {
        let yy = y(t);
        let _ = write!(
            s,
            r##"<line x1="{ml}" x2="{:.1}" y1="{yy:.1}" y2="{yy:.1}" stroke="#e3e3e3"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end" fill="#333">{}</text>"##,
            ml + plot_w,
            ml - 6.0,
            yy + 4.0,
            tick_label(t)
        );
    }
    for (xx, label) in &xticks {
        let _ = write!(
            s,
            r##"<text x="{xx:.1}" y="{:.1}" font-size="11" text-anchor="middle" fill="#333">{}</text>"##,
            mt + plot_h + 15.0,
            esc(label)
        );
    }
    let _ = write!(
        s,
        r##"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle" fill="#555">{}</text><text x="14" y="{:.1}" font-size="11" text-anchor="middle" fill="#555" transform="rotate(-90 14 {:.1})">{}</text>"##,
        ml + plot_w / 2.0,
        mt + plot_h + 34.0,
        esc(&c.x_label),
        mt + plot_h / 2.0,
        mt + plot_h / 2.0,
        esc(&c.y_label)
    );
    // The first line (the base) is drawn last and dashed, so it stays visible
    // where a target's line lies on it.
    for (i, l) in c
        .lines
        .iter()
        .enumerate()
        .skip(1)
        .chain(c.lines.iter().enumerate().take(1))
    {
        if l.points.is_empty() {
            continue;
        }
        let d: Vec<String> = l
            .points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x_of(p.0), y(p.1)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"{}><title>{}</title></polyline>"#,
            d.join(" "),
            l.colour,
            if i == 0 {
                r#" stroke-dasharray="6 3""#
            } else {
                ""
            },
            esc(&l.name)
        );
        if c.markers || l.points.len() == 1 {
            for p in &l.points {
                let _ = write!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{}"><title>{}: {}</title></circle>"#,
                    x_of(p.0),
                    y(p.1),
                    l.colour,
                    esc(&l.name),
                    tick_label(p.1)
                );
            }
        }
    }
    let _ = write!(
        s,
        r##"<path d="M{ml} {mt}V{:.1}H{:.1}" stroke="#333" fill="none"/></svg>"##,
        mt + plot_h,
        ml + plot_w
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc(r#"<a href="x">O'Neil & co</a>"#),
            "&lt;a href=&quot;x&quot;&gt;O&#39;Neil &amp; co&lt;/a&gt;"
        );
    }

    #[test]
    fn axis_helpers() {
        assert_eq!(nice_step(1.0, 5.0), 0.2);
        assert_eq!(nice_step(0.6, 6.0), 0.1);
        assert_eq!(nice_step(100000.0, 5.0), 20000.0);
        assert_eq!(nice_step(12.0, 5.0), 2.5);
        assert_eq!(tick_label(0.8), "0.8");
        assert_eq!(tick_label(25000.0), "25k");
        assert_eq!(tick_label(1500000.0), "1.5M");
        assert_eq!(ticks(0.8, 1.2, 0.1).len(), 5);
        // The floor: 0.8 at most, 0.05 under the lowest value, never below 0.
        assert_eq!(relative_range([0.97, 1.03].into_iter()), (0.8, 1.2));
        assert_eq!(relative_range([0.62, 1.31].into_iter()), (0.5, 1.4));
        assert_eq!(relative_range([0.02].into_iter()), (0.0, 1.2));
        assert_eq!(relative_range([0.85, 1.15].into_iter()), (0.8, 1.2));
    }

    #[test]
    fn charts_escape_names_and_label_the_floor() {
        let c = BarChart {
            title: "point <queries>".into(),
            categories: vec!["a&b".into()],
            series: vec!["v<2".into()],
            bars: vec![vec![Some(Bar {
                value: 0.9,
                low: Some(0.85),
                high: Some(0.95),
                faded: false,
                tip: "x\"y".into(),
            })]],
            caption: RELATIVE_CAPTION.into(),
            first_is_base: false,
        };
        let s = bar_chart(&c);
        assert!(s.contains("point &lt;queries&gt;") && s.contains("a&amp;b"));
        assert!(s.contains("v&lt;2") && s.contains("x&quot;y"));
        assert!(!s.contains("<queries>"));
        assert!(s.contains("y-axis starts at 0.8, not 0"));
        assert!(s.contains("stroke-dasharray"));
        let l = line_chart(&LineChart {
            title: "t".into(),
            x_label: "s".into(),
            y_label: "QPS".into(),
            lines: vec![Line {
                name: "<b>".into(),
                colour: base_colour(),
                points: vec![(1.0, 10.0), (2.0, 12.0)],
            }],
            markers: false,
            x_categories: None,
        });
        assert!(l.contains("<polyline") && l.contains("&lt;b&gt;") && !l.contains("<b>"));
    }
}
