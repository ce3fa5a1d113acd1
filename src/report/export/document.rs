//! The readable report as one [`Block`] document ([`document`]), which the
//! term, md and html exporters render, so they always say the same thing;
//! and the texts and cells those exporters share (the legend, the ratio's
//! text, the per-op cells).

use super::series;
use crate::report::doc::{Block, Chart, Plot, TCell, Table, Val, qps};
use crate::report::model::{
    Differences, HwFigures, RelativeQps, Report, Row, Side, ValueDiff, Verdict,
};

/// `0.93 -`: the ratio and the verdict's mark (`0.93 -!` when measured on a
/// busy machine).
pub fn rel_text(r: &RelativeQps) -> String {
    r.cell().text()
}

/// `0.90..0.96`, or empty when untested.
pub fn ci_text(r: &RelativeQps) -> String {
    match (r.ci_low, r.ci_high) {
        (Some(lo), Some(hi)) => format!("{lo:.2}..{hi:.2}"),
        _ => String::new(),
    }
}

/// A group's geometric mean with its verdict's mark, coloured only when
/// significant ([`crate::report::compare::group_rel`]).
fn geo_text(g: Option<&RelativeQps>) -> TCell {
    match g {
        Some(g) => g.cell(),
        None => "NA".into(),
    }
}

/// The lines on top of a report: the names left out because their workload
/// is not the base's, and those compared all the same (`--allow-mismatch`).
pub fn mismatch_lines(r: &Report) -> Vec<String> {
    let mut v: Vec<String> = r.not_compared.iter().map(|m| m.refusal(&r.base)).collect();
    v.extend(r.repeats_differ.iter().cloned());
    if !r.unlike.is_empty() {
        v.push(format!(
            "compared although the workload is not {}'s (--allow-mismatch): {}",
            r.base,
            r.unlike
                .iter()
                .map(|m| m.named())
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    v
}

/// Whether the names make a version series: one engine, and every name at a
/// version of its own (in report order, which is the matrix's). Names that
/// share a version differ in config, and a line between them would read as
/// an upgrade.
pub fn is_version_series(r: &Report) -> bool {
    let infos: Vec<&crate::report::model::TargetInfo> =
        (0..=r.targets.len()).map(|i| r.info(i)).collect();
    let one_engine = infos.iter().all(|i| i.engine == infos[0].engine);
    let mut versions: Vec<&str> = Vec::new();
    for i in &infos {
        match i.versions.as_slice() {
            [v] if !versions.contains(&v.as_str()) => versions.push(v),
            _ => return false,
        }
    }
    one_engine
}

/// What the marks and colours mean.
pub fn legend(r: &Report) -> String {
    let busy = if busy_rows(r).0 > 0 {
        format!(
            " {m}: a repeat ran while the machine was busy: a verdict marked {m} (`1.42 +{m}`) \
is not coloured, because the change may be the other load's.",
            m = crate::report::load::BUSY_MARK
        )
    } else {
        String::new()
    };
    let excluded = if r
        .rows()
        .any(|row| row.cells.iter().flatten().any(|c| c.excluded.is_some()))
    {
        " x: left out of the summaries, as the engines answer the test's statements differently (see Compatibility of the engines)."
    } else {
        ""
    };
    format!(
        "Relative QPS = QPS(target) / QPS(base), the ratio of geometric means over the repeats; \
above 1 is faster than the base. Marks: + faster, - slower (p < {} in the moderated t-test on log QPS, each test's variance \
shrunk toward the one pooled over the run pair's tests, and a change above the {}% noise floor), ~ no significant change, ? one repeat on a side (untested). \
95% CI: confidence interval of the ratio. Colours: red <= 0.95, green >= 1.05, grey between and for ~. \
Summary and geomean: the geometric mean of the group's ratios, its mark from the 95% CI of the mean \
of the tests' log ratios (variance: the sum of their squared standard errors over n²); coloured \
only when + or -; ? when a test is untested.{busy}{excluded}",
        r.alpha,
        trim_num(r.noise_floor * 100.0)
    )
}

/// How many compared rows (a test at a thread count) had a repeat on a busy
/// machine on either side, and how many rows were compared.
pub fn busy_rows(r: &Report) -> (usize, usize) {
    let compared: Vec<&Row> = r
        .rows()
        .filter(|row| row.cells.iter().any(Option::is_some))
        .collect();
    let busy = compared
        .iter()
        .filter(|row| row.cells.iter().flatten().any(|c| c.rel.busy))
        .count();
    (busy, compared.len())
}

/// The report's first lines when tests ran on a busy machine: how many, what
/// it means for their verdicts, and what to do.
pub fn busy_lines(r: &Report) -> Vec<String> {
    let (busy, of) = busy_rows(r);
    if busy == 0 {
        return Vec::new();
    }
    vec![format!(
        "busy machine: {busy} of {of} compared tests ran while other processes used the CPUs (over --busy-threshold); their verdicts are marked {m} and not coloured, since the change may be the other load's. Rerun them on an idle machine (stop the other work), or raise --busy-threshold if that load is part of the setup",
        m = crate::report::load::BUSY_MARK
    )]
}

fn trim_num(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn opt(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "(not set)".into())
}

/// Per-op figures as cells, NA where not measured.
pub fn hw_cells(f: Option<&HwFigures>) -> Vec<TCell> {
    let vals = f.map(|f| f.values()).unwrap_or([None; 7]);
    vals.iter()
        .map(|v| v.map(Val::Sig3).unwrap_or(Val::Na).into())
        .collect()
}

fn row_has_hw(row: &Row) -> bool {
    row.base.hw.is_some() || row.cells.iter().flatten().any(|c| c.side.hw.is_some())
}

fn abs_cell(s: Option<&Side>) -> TCell {
    match s {
        Some(s) => format!("{}{}", qps(s.qps), busy_mark(s)).into(),
        None => "-".into(),
    }
}

/// ` !` when a repeat of `s` ran on a busy machine, else nothing.
fn busy_mark(s: &Side) -> String {
    if s.busy() {
        format!(" {}", crate::report::load::BUSY_MARK)
    } else {
        String::new()
    }
}

/// The readable report, as blocks. `charts`: include the chart blocks and the
/// sections that are only charts.
pub fn document(r: &Report, charts: bool) -> Vec<Block> {
    let mut out = Vec::new();
    let tables = !r.groups.is_empty();
    let compared = !r.targets.is_empty();
    // Without generic tables the report is its first part's; the base alone
    // is the study of its thread sweep.
    let heading = match r.parts.first() {
        Some(b) if !tables => format!(
            "{}: {} against {}",
            b.part.title(),
            r.targets.join(", "),
            r.base
        ),
        _ if !compared => format!("Thread sweep: {}", r.base),
        // Said first: what follows compares a run with itself.
        _ if r.identical() => format!(
            "A/A: {} against {}, identical parameters: every difference is noise{}",
            r.targets.join(", "),
            r.base,
            match (r.widest_change(), r.overall.first().copied().flatten()) {
                (Some(w), Some(all)) => format!(
                    ", here up to {:.0}% on a test (all tests {all:.2})",
                    100.0 * w
                ),
                _ => String::new(),
            }
        ),
        _ => format!("Relative QPS: {} against {}", r.targets.join(", "), r.base),
    };
    out.push(Block::Heading(1, heading));
    let mut top = busy_lines(r);
    top.extend(mismatch_lines(r));
    if !top.is_empty() {
        out.push(Block::Bullets(top));
    }
    // The answer first: the summary, the scalability of a thread sweep, the
    // charts, then the tables, then what differs and the notes.
    if tables && compared {
        summary(r, &mut out);
        changes(r, &mut out);
        // On a page (charts), folded: the tables and charts come first.
        if charts {
            out.push(Block::Folded(
                "What the marks, colours and intervals mean".into(),
                vec![Block::Para(legend(r))],
            ));
        } else {
            out.push(Block::Para(legend(r)));
        }
    }
    // What a suite says belongs with the answer (TPC-C's warehouses,
    // terminals and keying), each a section of its own.
    for b in &r.parts {
        out.extend(b.part.answer(r));
    }
    compat(r, &mut out);
    out.extend(crate::report::scalability::blocks(r, charts));
    if charts && tables && compared {
        if r.targets.len() >= 2 && is_version_series(r) {
            version_series(r, &mut out);
        } else {
            summary_bars(r, &mut out);
        }
    }
    groups(r, charts, &mut out);
    for b in &r.parts {
        out.extend(b.part.blocks(r, charts));
    }
    differs(r, &mut out);
    notes(r, &mut out);
    if charts && tables {
        charts_after(r, &mut out);
    }
    out
}

/// One line chart per group when the report has more than two names: x the
/// names in order (the base first), y QPS relative to the base, one line per
/// test, the 0.95..1.05 band shaded. The picture of a version series.
fn version_series(r: &Report, out: &mut Vec<Block>) {
    out.push(Block::Heading(
        2,
        format!("Relative QPS by version (against {})", r.base),
    ));
    out.push(Block::Para(
        "One line per test across the names in report order; dashed line: 1.0 = the base; grey band: \
0.95 to 1.05; filled points: significant (+ or -), hollow: ~ or untested (?)."
            .into(),
    ));
    for gi in 0..r.groups.len() {
        out.push(Block::Chart(Chart::Drawn {
            svg: series::chart(r, gi),
            small: true,
        }));
    }
}

/// Bars per group of the summary (x the groups and all tests, one bar per
/// target with its interval): the picture when the names are configs, not a
/// version series.
fn summary_bars(r: &Report, out: &mut Vec<Block>) {
    let mut cats: Vec<String> = r.groups.iter().map(|g| g.title.clone()).collect();
    cats.push("all tests".into());
    let rels: Vec<&Vec<Option<RelativeQps>>> = r
        .groups
        .iter()
        .map(|g| &g.summary)
        .chain(std::iter::once(&r.overall_summary))
        .collect();
    let bars = cats
        .iter()
        .zip(&rels)
        .map(|(cat, row)| {
            row.iter()
                .zip(&r.targets)
                .map(|(rel, t)| {
                    rel.as_ref().map(|rel| crate::report::svg::Bar {
                        value: rel.ratio,
                        low: rel.ci_low,
                        high: rel.ci_high,
                        faded: !matches!(rel.verdict, Verdict::Faster | Verdict::Slower),
                        tip: format!(
                            "{t}, {cat}: {}{}",
                            rel_text(rel),
                            match (rel.ci_low, rel.ci_high) {
                                (Some(lo), Some(hi)) => format!(" (95% CI {lo:.2} to {hi:.2})"),
                                _ => String::new(),
                            }
                        ),
                    })
                })
                .collect()
        })
        .collect();
    out.push(Block::Chart(Chart::Plot {
        plot: Plot::Bars(crate::report::svg::BarChart {
            title: format!("Summary: geometric mean of relative QPS against {}", r.base),
            categories: cats,
            series: r.targets.clone(),
            bars,
            caption: "dashed line: 1.0 = the base; whiskers: 95% CI of the group's geometric mean; pale bars: ~ or untested (?)".into(),
            first_is_base: false,
        }),
        small: false,
    }));
}

/// Geometric means per group and overall, with their verdicts.
fn summary(r: &Report, out: &mut Vec<Block>) {
    // Summary: geometric means per group and overall.
    let mut header = vec!["group".to_string()];
    header.extend(r.targets.iter().cloned());
    let mut rows: Vec<Vec<TCell>> = r
        .groups
        .iter()
        .map(|g| {
            let mut row: Vec<TCell> = vec![g.title.as_str().into()];
            row.extend(g.summary.iter().map(|v| geo_text(v.as_ref())));
            row
        })
        .collect();
    let mut all: Vec<TCell> = vec!["all tests".into()];
    all.extend(r.overall_summary.iter().map(|v| geo_text(v.as_ref())));
    rows.push(all);
    out.push(Block::Heading(
        2,
        "Summary (geometric mean of relative QPS)".into(),
    ));
    out.push(Block::Table(Table {
        header,
        rows,
        left: 1,
    }));
}

/// The compatibility of the engines compared: a note per target of
/// another engine, and each ratio left out of the summaries with its reason.
fn compat(r: &Report, out: &mut Vec<Block>) {
    if r.compat.is_empty() {
        return;
    }
    out.push(Block::Heading(2, "Compatibility of the engines".into()));
    let mut items = r.compat.clone();
    let sweep = r.sweep();
    for row in r.rows() {
        for (t, c) in r.targets.iter().zip(&row.cells) {
            if let Some(why) = c.as_ref().and_then(|c| c.excluded.as_ref()) {
                items.push(format!(
                    "x {t} {}: left out of the summaries: {why}",
                    row.label(sweep)
                ));
            }
        }
    }
    out.push(Block::Bullets(items));
}

/// A target's ratio as its cell shows it: marked `x` where it is left out
/// of the summaries, as the two engines did not do the same work.
fn rel_cell(c: &crate::report::model::Cell) -> TCell {
    let cell = c.rel.cell();
    if c.excluded.is_some() {
        TCell::shaded(format!("{} x", cell.text()), cell.shade)
    } else {
        cell
    }
}

/// Who is compared, and what differs between each target and the base.
fn differs(r: &Report, out: &mut Vec<Block>) {
    out.push(Block::Heading(
        2,
        if r.targets.is_empty() {
            "Runs"
        } else {
            "What differs"
        }
        .into(),
    ));
    let targets = Table {
        header: ["name", "role", "engine", "version", "run ids", "runs"]
            .map(String::from)
            .to_vec(),
        rows: (0..=r.targets.len())
            .map(|i| {
                let info = r.info(i);
                vec![
                    info.name.as_str().into(),
                    if i == 0 { "base" } else { "target" }.into(),
                    info.engine.as_str().into(),
                    info.version().into(),
                    info.runs
                        .iter()
                        .map(|x| x.run_id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                        .into(),
                    info.runs.len().to_string().into(),
                ]
            })
            .collect(),
        left: 5,
    };
    out.push(Block::Table(targets));
    for d in &r.differences {
        if d.is_empty() {
            out.push(Block::Para(format!(
                "{}: same engine version, server settings, config, parameters and host as {}.",
                d.target, r.base
            )));
            continue;
        }
        out.push(Block::Heading(
            3,
            format!("{} against {}", d.target, r.base),
        ));
        let mut items = Vec::new();
        if d.base_engine != d.target_engine {
            items.push(format!(
                "engine: {} (base), {} (target)",
                d.base_engine, d.target_engine
            ));
        }
        for l in &d.config_base_only {
            items.push(format!("config line only in the base: {l}"));
        }
        for l in &d.config_target_only {
            items.push(format!("config line only in the target: {l}"));
        }
        for (what, list) in [("parameter", &d.params), ("host", &d.host)] {
            for v in list {
                items.push(format!(
                    "{what} {}: {} (base), {} (target)",
                    v.name,
                    opt(&v.base),
                    opt(&v.target)
                ));
            }
        }
        if !items.is_empty() {
            out.push(Block::Bullets(items));
        }
        settings_blocks(r, d, out);
    }
}

/// The server settings that differ: those a config sets first, then those
/// that differ by the versions' defaults, each one a line; then (folded)
/// the paths, versions and build facts, and those only one version has.
fn settings_blocks(r: &Report, d: &Differences, out: &mut Vec<Block>) {
    let diff = |title: &str, list: &[&ValueDiff]| {
        Block::Diff(crate::report::doc::Diff {
            title: title.to_string(),
            sides: [r.base.clone(), d.target.clone()],
            rows: list
                .iter()
                .map(|v| (v.name.clone(), v.base.clone(), v.target.clone()))
                .collect(),
        })
    };
    let from_config: Vec<&ValueDiff> = d
        .settings
        .iter()
        .filter(|v| d.settings_from_config.contains(&v.name))
        .collect();
    let rest = d
        .settings
        .iter()
        .filter(|v| !d.settings_from_config.contains(&v.name));
    let (facts, rest): (Vec<&ValueDiff>, Vec<&ValueDiff>) = rest.partition(|v| build_fact(v));
    let (one_side, by_default): (Vec<&ValueDiff>, Vec<&ValueDiff>) = rest
        .into_iter()
        .partition(|v| v.base.is_none() || v.target.is_none());
    if !from_config.is_empty() {
        out.push(diff("server setting (set by a config)", &from_config));
    }
    if !by_default.is_empty() {
        out.push(diff("server setting (default differs)", &by_default));
    }
    if !facts.is_empty() {
        out.push(Block::Folded(
            format!(
                "{} path(s), version(s) and build fact(s) that differ between {} and {}",
                facts.len(),
                r.base,
                d.target
            ),
            vec![diff("server setting (path, version, build)", &facts)],
        ));
    }
    if !one_side.is_empty() {
        out.push(Block::Folded(
            format!(
                "{} server setting(s) that only one of {} and {} has",
                one_side.len(),
                r.base,
                d.target
            ),
            vec![diff("server setting (one side only)", &one_side)],
        ));
    }
}

/// Whether a setting that differs says where the server is or which build
/// it is rather than how it behaves: a path (an install or data directory,
/// a log or socket file), a version string, a host name. The engine line
/// names the versions; the stored run keeps every value.
fn build_fact(v: &ValueDiff) -> bool {
    let name = v.name.to_ascii_lowercase();
    let path = |x: &Option<String>| {
        x.as_deref()
            .is_some_and(|x| x.starts_with('/') || x.starts_with("./") || x.contains(":/"))
    };
    const SUFFIXES: [&str; 8] = [
        "dir",
        "_directory",
        "_directories",
        "_file",
        "_basename",
        "_index",
        "_path",
        "socket",
    ];
    name.contains("version")
        || name == "hostname"
        || name.ends_with("_uuid")
        || SUFFIXES.iter().any(|s| name.ends_with(s))
        || path(&v.base)
        || path(&v.target)
}

/// Results not counted, and warnings.
fn notes(r: &Report, out: &mut Vec<Block>) {
    if !r.skipped.is_empty() || !r.warnings.is_empty() {
        out.push(Block::Heading(2, "Notes".into()));
        let mut items: Vec<String> = r.skipped.iter().map(|s| s.line()).collect();
        items.extend(r.warnings.iter().cloned());
        const MAX_NOTES: usize = 30;
        if items.len() > MAX_NOTES {
            let more = items.len() - MAX_NOTES;
            items.truncate(MAX_NOTES);
            items.push(format!(
                "... and {more} more (all of them in --format json)"
            ));
        }
        out.push(Block::Bullets(items));
    }
}

/// One section per group (chart, relative table, absolute table), then the
/// hardware efficiency per test.
fn groups(r: &Report, charts: bool, out: &mut Vec<Block>) {
    let sweep = r.sweep();
    for (gi, g) in r.groups.iter().enumerate() {
        out.push(Block::Heading(2, capitalise(&g.title)));
        if charts && !r.targets.is_empty() {
            out.push(Block::Chart(Chart::Group(gi)));
        }
        let mut rh = vec!["test".to_string()];
        for t in &r.targets {
            rh.push(t.clone());
            rh.push("95% CI".into());
        }
        let mut rel_rows: Vec<Vec<TCell>> = g
            .rows
            .iter()
            .map(|row| {
                let mut cells: Vec<TCell> = vec![row.label(sweep).into()];
                for c in &row.cells {
                    match c {
                        Some(c) => {
                            cells.push(rel_cell(c));
                            cells.push(ci_text(&c.rel).into());
                        }
                        None => {
                            cells.push("-".into());
                            cells.push("".into());
                        }
                    }
                }
                cells
            })
            .collect();
        let mut geo_row: Vec<TCell> = vec!["geomean".into()];
        for v in &g.summary {
            geo_row.push(geo_text(v.as_ref()));
            geo_row.push(v.as_ref().map(ci_text).unwrap_or_default().into());
        }
        rel_rows.push(geo_row);
        let rel = Table {
            header: rh,
            rows: rel_rows,
            left: 1,
        };
        let mut ah = vec!["test".to_string()];
        ah.extend(r.names().iter().map(|s| s.to_string()));
        let abs = Table {
            header: ah,
            rows: g
                .rows
                .iter()
                .map(|row| {
                    let unit = row
                        .unit_note()
                        .map(|u| format!(" ({u})"))
                        .unwrap_or_default();
                    let mut cells: Vec<TCell> = vec![format!("{}{unit}", row.label(sweep)).into()];
                    cells.extend((0..=r.targets.len()).map(|i| abs_cell(row.side(i))));
                    cells
                })
                .collect(),
            left: 1,
        };
        if r.targets.is_empty() {
            out.push(Block::Table(abs));
        } else {
            out.push(Block::Beside(vec![
                Block::Heading(3, "Relative QPS".into()),
                Block::Table(rel),
                Block::Heading(3, "QPS".into()),
                Block::Table(abs),
            ]));
        }
    }
    hardware(r, out);
}

/// The hardware efficiency per test: each row's per-op figures, absolute and
/// relative to the base, with the limit where results have it.
fn hardware(r: &Report, out: &mut Vec<Block>) {
    let sweep = r.sweep();
    let hw_rows: Vec<&Row> = r.rows().filter(|row| row_has_hw(row)).collect();
    let limits = hw_rows.iter().any(|row| {
        row.base.limit().is_some() || row.cells.iter().flatten().any(|c| c.side.limit().is_some())
    });
    if !hw_rows.is_empty() {
        out.push(Block::Heading(
            2,
            "Hardware efficiency per operation".into(),
        ));
        out.push(Block::Para(
            "Per-op figures (cpu/o: CPU microseconds per operation, cs/o: context switches, r/o: \
storage reads, rKB/o and wKB/o: KB read and written), absolute and relative to the base: \
above 1 costs more than the base. \"1\" when both are 0, \"inf\" when only the base is 0, NA \
where not measured."
                .into(),
        ));
        if limits {
            out.push(Block::Para(format!(
                "{}.",
                crate::report::table::LIMIT_LEGEND
            )));
        }
        for row in hw_rows {
            out.push(Block::Heading(
                3,
                format!("{} ({})", row.label(sweep), row.suite),
            ));
            let mut header = vec!["".to_string()];
            header.extend(HwFigures::TITLES.iter().map(|s| s.to_string()));
            // Results stored before rqps measured the limit have no column.
            if limits {
                header.push("limit".into());
            }
            let limit_cell = |s: Option<&crate::report::model::Side>| -> Vec<TCell> {
                if limits {
                    vec![crate::report::table::limit_cell(s.and_then(|s| s.limit())).into()]
                } else {
                    Vec::new()
                }
            };
            let mut rows = Vec::new();
            let mut first: Vec<TCell> = vec![r.base.as_str().into()];
            first.extend(hw_cells(row.base.hw.as_ref()));
            first.extend(limit_cell(Some(&row.base)));
            rows.push(first);
            for (t, c) in r.targets.iter().zip(&row.cells) {
                let mut cells: Vec<TCell> = vec![t.as_str().into()];
                cells.extend(hw_cells(c.as_ref().and_then(|c| c.side.hw.as_ref())));
                cells.extend(limit_cell(c.as_ref().map(|c| &c.side)));
                rows.push(cells);
            }
            for (t, c) in r.targets.iter().zip(&row.cells) {
                if let Some(rel) = c.as_ref().and_then(|c| c.hw_rel.as_ref()) {
                    let mut cells: Vec<TCell> = vec![format!("{t} / {}", r.base).into()];
                    cells.extend(rel.iter().map(|x| TCell::from(x.to_string())));
                    if limits {
                        cells.push("".into());
                    }
                    rows.push(cells);
                }
            }
            out.push(Block::Table(Table {
                header,
                rows,
                left: 1,
            }));
        }
    }
}

/// A section of the readable document: a level-2 heading and the blocks
/// up to the next one.
pub struct DocSection {
    pub title: String,
    pub blocks: Vec<Block>,
}

impl DocSection {
    /// Its name for `--section`: the title in lower case, words joined by
    /// `-`, without what is in brackets (`point-queries`, `summary`,
    /// `hardware-efficiency-per-operation`).
    pub fn name(&self) -> String {
        section_name(&self.title)
    }
}

/// `Summary (geometric mean of relative QPS)` → `summary`.
pub fn section_name(title: &str) -> String {
    let bare = title.split(" (").next().unwrap_or(title);
    let mut out = String::new();
    for c in bare.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// The document split at its level-2 headings: what comes before the first
/// (the title and the lines on top), then each section.
pub fn split(blocks: Vec<Block>) -> (Vec<Block>, Vec<DocSection>) {
    let mut head = Vec::new();
    let mut sections: Vec<DocSection> = Vec::new();
    for b in blocks {
        match b {
            Block::Heading(2, title) => sections.push(DocSection {
                title: title.clone(),
                blocks: vec![Block::Heading(2, title)],
            }),
            b => match sections.last_mut() {
                Some(s) => s.blocks.push(b),
                None => head.push(b),
            },
        }
    }
    (head, sections)
}

/// Whether section `name` is one of `wanted` (each a name or the start of
/// one: `point` for `point-queries`).
pub fn section_wanted(name: &str, wanted: &[String]) -> bool {
    wanted.iter().any(|w| {
        let w = section_name(w);
        !w.is_empty() && name.starts_with(&w)
    })
}

/// The sections that make the answer: the summary with its verdicts, the
/// tests left out of it as the engines did not do the same work, the
/// scalability of a sweep, what differs (or the runs of a base alone) and
/// the notes.
const ANSWER: [&str; 7] = [
    "summary",
    "significant-changes",
    "compatibility-of-the-engines",
    "scalability",
    "what-differs",
    "runs",
    "notes",
];

/// Rows of the significant changes shown in the answer.
const CHANGES_SHOWN: usize = 12;
/// Notes shown in the answer.
const NOTES_SHOWN: usize = 8;

/// The answer first, for a terminal: the title and the lines on top, the
/// summary, the significant changes, what differs and the notes (the
/// first [`NOTES_SHOWN`]), then one line naming the other sections, which
/// `--full` or `--section NAME` prints. A report of a suite's part alone
/// (no generic tables) answers with the part's first section.
pub fn answer(r: &Report, blocks: Vec<Block>) -> Vec<Block> {
    let (mut out, sections) = split(blocks);
    let has_summary = sections.iter().any(|s| s.name() == "summary");
    // The sections the suites give the answer ([`crate::report::section::Part::answer`]).
    let given: Vec<String> = r
        .parts
        .iter()
        .flat_map(|b| b.part.answer(r))
        .filter_map(|b| match b {
            Block::Heading(2, t) => Some(section_name(&t)),
            _ => None,
        })
        .collect();
    let mut rest: Vec<String> = Vec::new();
    for (i, s) in sections.into_iter().enumerate() {
        let name = s.name();
        let first_part = i == 0 && !has_summary && !ANSWER.contains(&name.as_str());
        if ANSWER.contains(&name.as_str()) || given.contains(&name) || first_part {
            let notes = name == "notes";
            out.extend(s.blocks.into_iter().map(|b| shortened(b, notes)));
        } else if !rest.contains(&name) {
            rest.push(name);
        }
    }
    if !rest.is_empty() {
        out.push(Block::Para(format!(
            "More in this report: the same command with --full (everything), or --section NAME for {}.",
            rest.join(", ")
        )));
    }
    out
}

/// A block as the answer shows it: folded blocks as their one line, the
/// notes cut at [`NOTES_SHOWN`].
fn shortened(b: Block, notes: bool) -> Block {
    match b {
        Block::Folded(summary, _) => Block::Bullets(vec![format!(
            "{summary} (--section what-differs lists them)"
        )]),
        Block::Bullets(mut items) if notes && items.len() > NOTES_SHOWN => {
            let more = items.len() - NOTES_SHOWN;
            items.truncate(NOTES_SHOWN);
            items.push(format!("... and {more} more (--section notes)"));
            Block::Bullets(items)
        }
        b => b,
    }
}

/// The tests whose verdict is `+` or `-`, largest change first; where no
/// test could be tested (one repeat on a side), the largest ratios, said
/// to be untested.
fn changes(r: &Report, out: &mut Vec<Block>) {
    if r.targets.is_empty() {
        return;
    }
    let sweep = r.sweep();
    let cells = || {
        r.rows().flat_map(|row| {
            r.targets
                .iter()
                .zip(&row.cells)
                .filter_map(move |(t, c)| Some((row, t, c.as_ref()?)))
        })
    };
    let significant = cells()
        .filter(|(_, _, c)| matches!(c.rel.verdict, Verdict::Faster | Verdict::Slower))
        .count();
    let untested = cells()
        .filter(|(_, _, c)| c.rel.verdict == Verdict::Untested)
        .count();
    let shown = |v: Verdict| match significant {
        0 => v == Verdict::Untested,
        _ => matches!(v, Verdict::Faster | Verdict::Slower),
    };
    let mut rows: Vec<(f64, Vec<TCell>)> = Vec::new();
    for (row, t, c) in cells().filter(|(_, _, c)| shown(c.rel.verdict)) {
        rows.push((
            c.rel.ratio.ln().abs(),
            vec![
                row.label(sweep).into(),
                t.as_str().into(),
                rel_cell(c),
                ci_text(&c.rel).into(),
            ],
        ));
    }
    out.push(Block::Heading(2, "Significant changes".into()));
    if significant == 0 {
        out.push(Block::Para(if untested > 0 {
            format!(
                "None found, and {untested} comparison(s) could not be tested: one repeat on a side (?). Run two or more repeats under each name (--repeats N) for verdicts. The largest untested ratios:"
            )
        } else {
            "No test is significantly faster or slower (+ or -) than the base.".into()
        }));
        if rows.is_empty() {
            return;
        }
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    let more = rows.len().saturating_sub(CHANGES_SHOWN);
    out.push(Block::Table(Table {
        header: ["test", "target", "relative", "95% CI"]
            .map(String::from)
            .to_vec(),
        rows: rows
            .into_iter()
            .take(CHANGES_SHOWN)
            .map(|(_, r)| r)
            .collect(),
        left: 2,
    }));
    if more > 0 {
        out.push(Block::Para(format!(
            "... and {more} more: each group's section lists every test."
        )));
    }
}

/// Sorts cells by how far their ratio is from 1 (a halving as far as a
/// doubling), the farthest first.
fn largest_first(cells: &mut [&(&Row, &crate::report::model::Cell)]) {
    cells.sort_by(|a, b| {
        b.1.rel
            .ratio
            .ln()
            .abs()
            .total_cmp(&a.1.rel.ratio.ln().abs())
    });
}

/// The answer again, for the end of a terminal report, so that it is on
/// screen when the report has scrolled by: for each target what changed
/// (slower, faster, like noise, untested, the largest changes), the
/// summary of geometric means, and what the marks mean. Empty for a report
/// without generic tables or targets.
pub fn closing(r: &Report) -> Vec<Block> {
    if r.groups.is_empty() || r.targets.is_empty() {
        return Vec::new();
    }
    let sweep = r.sweep();
    let mut out = vec![Block::Heading(
        2,
        format!("Answer: {} against {}", r.targets.join(", "), r.base),
    )];
    let mut lines = Vec::new();
    for (ti, t) in r.targets.iter().enumerate() {
        let cells: Vec<(&Row, &crate::report::model::Cell)> = r
            .rows()
            .filter_map(|row| Some((row, row.cells.get(ti)?.as_ref()?)))
            .collect();
        let count = |v: Verdict| cells.iter().filter(|(_, c)| c.rel.verdict == v).count();
        let mut moved: Vec<&(&Row, &crate::report::model::Cell)> = cells
            .iter()
            .filter(|(_, c)| matches!(c.rel.verdict, Verdict::Faster | Verdict::Slower))
            .collect();
        largest_first(&mut moved);
        // Where nothing could be tested, the largest untested ratios.
        let untested_only = moved.is_empty();
        if untested_only {
            moved = cells
                .iter()
                .filter(|(_, c)| c.rel.verdict == Verdict::Untested)
                .collect();
            largest_first(&mut moved);
        }
        let largest: Vec<String> = moved
            .iter()
            .take(3)
            // A ratio and its mark are not split over two lines.
            .map(|(row, c)| {
                format!(
                    "{} {}",
                    row.label(sweep),
                    rel_cell(c).text().replace(' ', "\u{a0}")
                )
            })
            .collect();
        let untested = count(Verdict::Untested);
        lines.push(format!(
            "{t}: {} slower, {} faster, {} like noise (~){} of {} test(s){}",
            count(Verdict::Slower),
            count(Verdict::Faster),
            count(Verdict::Same),
            if untested > 0 {
                format!(", {untested} untested (?)")
            } else {
                String::new()
            },
            cells.len(),
            match (largest.is_empty(), untested_only) {
                (true, _) => String::new(),
                (false, false) => format!("; largest: {}", largest.join(", ")),
                (false, true) => format!("; largest untested: {}", largest.join(", ")),
            }
        ));
    }
    let (busy, of) = busy_rows(r);
    if busy > 0 {
        lines.push(format!(
            "{busy} of {of} ran on a busy machine ({}): rerun them on an idle one before trusting their verdicts",
            crate::report::load::BUSY_MARK
        ));
    }
    out.push(Block::Bullets(lines));
    let mut summary_blocks = Vec::new();
    summary(r, &mut summary_blocks);
    out.extend(
        summary_blocks
            .into_iter()
            .filter(|b| !matches!(b, Block::Heading(..))),
    );
    out.push(Block::Para(format!(
        "Geometric means of relative QPS (target / base). + faster, - slower, ~ no significant change, ? untested (one repeat on a side){}.",
        if busy > 0 {
            format!(", {} busy machine", crate::report::load::BUSY_MARK)
        } else {
            String::new()
        }
    )));
    out
}

/// Only the sections named in `wanted` (after the title and the lines on top).
pub fn only_sections(blocks: Vec<Block>, wanted: &[String]) -> Vec<Block> {
    let (mut out, sections) = split(blocks);
    for s in sections {
        if section_wanted(&s.name(), wanted) {
            out.extend(s.blocks);
        }
    }
    out
}

/// A per-second chart needs this many points to show a course (a 1 s test
/// has one or two, which say nothing a QPS cell does not).
pub const PER_SECOND_POINTS: usize = 5;

/// The per-second charts (the thread-sweep charts are in the scalability
/// section): each folded under its test's line, so the page shows one line
/// per test and a click opens its chart; tests with fewer than
/// [`PER_SECOND_POINTS`] seconds on every side have none.
fn charts_after(r: &Report, out: &mut Vec<Block>) {
    let sweep = r.sweep();
    let mut charts = Vec::new();
    let mut short = 0;
    for (gi, g) in r.groups.iter().enumerate() {
        for (ri, row) in g.rows.iter().enumerate() {
            let points = (0..=r.targets.len())
                .filter_map(|i| row.side(i))
                .map(|s| s.per_second.len())
                .max()
                .unwrap_or(0);
            if points < PER_SECOND_POINTS {
                short += 1;
                continue;
            }
            charts.push(Block::Folded(
                format!("{}: QPS per second", row.label(sweep)),
                vec![Block::Chart(Chart::PerSecond { group: gi, row: ri })],
            ));
        }
    }
    if charts.is_empty() && short == 0 {
        return;
    }
    out.push(Block::Heading(2, "QPS per second".into()));
    if short > 0 {
        out.push(Block::Para(format!(
            "{short} test(s) ran fewer than {PER_SECOND_POINTS} seconds: no chart."
        )));
    }
    out.extend(charts);
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::sig3;

    #[test]
    fn number_formats() {
        assert_eq!(qps(12345.6), "12346");
        assert_eq!(qps(12.34), "12.3");
        assert_eq!(sig3(0.0), "0");
        assert_eq!(sig3(123.4), "123");
        assert_eq!(sig3(12.34), "12.3");
        assert_eq!(sig3(1.234), "1.23");
        assert_eq!(sig3(0.1234), "0.123");
        assert_eq!(sig3(0.001234), "0.00123");
        assert_eq!(sig3(0.002), "0.002");
        assert_eq!(trim_num(2.0), "2");
        assert_eq!(trim_num(2.5), "2.5");
    }
}
