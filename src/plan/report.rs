//! Reports as plain functions, for `rqps report` and `rqps compare` and for
//! the report a matrix ends with: what to compare (a typed request), loaded
//! from the results directory and rendered or gated.

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::error::{EXIT_FAILED, Error, failed, usage};
use crate::report::compare::{self, Rules};
use crate::report::export::{self, Format, TCell, Table};
use crate::report::load::{self, Options};
use crate::report::model::{Report, Verdict};

/// The relative change below which a difference is noise, by default:
/// `rqps report`, `rqps compare` and a matrix's final report.
pub const NOISE_FLOOR: f64 = 0.02;
/// Rows of each `--explain` table, by default.
pub const EXPLAIN_TOP: usize = 20;

/// What `rqps report` compares, and how it shows it.
pub struct ReportRequest {
    pub results: PathBuf,
    /// The run name everything is compared with.
    pub base: String,
    /// Only these targets, in this order (default: every other name).
    pub targets: Option<Vec<String>>,
    pub format: Format,
    /// How much of the terminal format to print.
    pub view: export::View,
    /// Write here instead of standard output.
    pub output: Option<PathBuf>,
    pub noise_floor: f64,
    /// Also the unreported warm-up steps.
    pub all: bool,
    pub allow_mismatch: bool,
    /// Instead of the report: where the CPU per operation of this test went.
    pub explain: Option<String>,
    /// Rows of each explain table.
    pub top: usize,
}

/// What `rqps compare` gates.
pub struct CompareRequest {
    pub results: PathBuf,
    pub base: String,
    pub target: String,
    /// Fail when a test's relative QPS is significantly below this.
    pub fail_below: f64,
    pub noise_floor: f64,
    pub all: bool,
    pub allow_mismatch: bool,
}

fn rules(noise_floor: f64) -> Result<Rules, Error> {
    if !(0.0..1.0).contains(&noise_floor) {
        return Err(usage(format!(
            "--noise-floor must be at least 0 and below 1 (0.02 = 2 %), not {noise_floor}"
        )));
    }
    Ok(Rules {
        noise_floor,
        ..Rules::default()
    })
}

/// Whether standard output gets ANSI colours: on a terminal, or where
/// `CLICOLOR_FORCE` is set (to anything but `0`, the common convention, for
/// pagers and tests), and never when `NO_COLOR` is set.
fn colour_wanted() -> bool {
    let forced = std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0");
    std::env::var_os("NO_COLOR").is_none() && (forced || std::io::stdout().is_terminal())
}

/// Writes `text` to the file the user named (saying so on standard error),
/// else to standard output.
fn emit(output: Option<&std::path::Path>, text: &str) -> Result<(), Error> {
    emit_with(output, &mut |w| w.write_all(text.as_bytes()))
}

/// What `write` writes, as it writes it, to the file the user named, else
/// to standard output.
fn emit_with(
    output: Option<&std::path::Path>,
    write: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), Error> {
    match output {
        Some(path) => {
            crate::util::write_output_with(path, write)
                .map_err(|e| failed(format!("cannot write {}: {e}", path.display())))?;
            eprintln!("wrote {}", path.display());
        }
        None => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            write(&mut out)
                .and_then(|()| std::io::Write::flush(&mut out))
                .map_err(|e| failed(format!("cannot write the standard output: {e}")))?;
        }
    }
    Ok(())
}

/// The compatibility record `which` names: a file, or `latest` (the newest
/// under `<results>/compat/`).
pub fn stored_compat(
    results: &std::path::Path,
    which: &str,
) -> Result<crate::results::compat::CompatRecord, Error> {
    if which != "latest" {
        let path = std::path::Path::new(which);
        let text = crate::results::read_result_file(path)
            .map_err(|e| usage(format!("cannot read compatibility record {which}: {e}")))?;
        return serde_json::from_str(&text)
            .map_err(|e| usage(format!("{which} is not a compatibility record: {e}")));
    }
    let (mut records, warnings) = crate::results::compat::read_all(results);
    for w in warnings {
        eprintln!("warning: {w}");
    }
    records.sort_by(|a, b| a.started.cmp(&b.started));
    records.pop().ok_or_else(|| {
        usage(format!(
            "{} holds no compatibility record: make one with rqps compat --reference ENGINE --server KIND[@VERSION] --results {}",
            results.display(),
            results.display()
        ))
    })
}

/// Renders a compatibility record in `format` to the file the user named,
/// else to standard output.
pub fn emit_compat(
    record: &crate::results::compat::CompatRecord,
    format: Format,
    output: Option<&std::path::Path>,
) -> Result<(), Error> {
    let colour = format == Format::Term
        && output.is_none()
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none();
    emit(
        output,
        &crate::report::compat::render(record, format, colour),
    )
}

/// Skipped results and warnings for standard error, those alike (one
/// cause on many runs) folded into one line with a count; the JSON report
/// lists each.
fn notes(r: &Report) -> Vec<String> {
    use crate::report::fold::folded as fold;
    let mut v: Vec<String> = Vec::new();
    v.extend(fold(
        r.skipped.iter().map(|s| format!("note: {}", s.line())),
    ));
    v.extend(fold(r.warnings.iter().map(|w| format!("warning: {w}"))));
    v
}

pub fn report(a: &ReportRequest) -> Result<i32, Error> {
    if let Some(o) = &a.output {
        crate::util::check_output(o).map_err(usage)?;
    }
    if let Some(test) = &a.explain {
        return explain(a, test);
    }
    let opts = Options {
        base: a.base.clone(),
        targets: a.targets.clone(),
        rules: rules(a.noise_floor)?,
        all: a.all,
        sections: crate::suite::report_sections(),
        workloads: crate::suite::workloads(),
        engines: engine_keys(),
        allow_mismatch: a.allow_mismatch,
    };
    let report = load::load(&a.results, &opts)?;
    let colour = a.format == Format::Term && a.output.is_none() && colour_wanted();
    if let export::View::Sections(wanted) = &a.view {
        let (_, sections) = export::document::split(export::document(&report, false));
        let names: Vec<String> = sections.iter().map(|s| s.name()).collect();
        for w in wanted {
            if !names
                .iter()
                .any(|n| export::document::section_wanted(n, std::slice::from_ref(w)))
            {
                return Err(usage(format!(
                    "--section {w}: this report has no such section; it has {}",
                    names.join(", ")
                )));
            }
        }
    }
    // The data formats stream as they are made (JSON and CSV over
    // thousands of runs are tens of megabytes).
    let exporter: Box<dyn export::Exporter> = match a.format {
        Format::Term => Box::new(export::term::Term {
            colour,
            view: a.view.clone(),
        }),
        f => export::exporter(f, colour),
    };
    // The readable formats carry the notes; keep the data formats clean.
    if matches!(a.format, Format::Csv | Format::Tsv | Format::Json) {
        for l in export::mismatch_lines(&report) {
            eprintln!("note: {l}");
        }
        for l in &report.compat {
            eprintln!("note: compatibility: {l}");
        }
        for n in notes(&report) {
            eprintln!("{n}");
        }
    }
    emit_with(a.output.as_deref(), &mut |w| exporter.write(&report, w))?;
    Ok(0)
}

/// `rqps report --explain TEST`.
fn explain(a: &ReportRequest, test: &str) -> Result<i32, Error> {
    let (runs, _) = load::read_results_keeping(&a.results, crate::results::Keep::Report)?;
    let known = load::names(&runs);
    if !known.contains(&a.base) {
        return Err(usage(format!(
            "no run is named '{}' in {} (names: {})",
            a.base,
            a.results.display(),
            known.join(", ")
        )));
    }
    let targets: Vec<String> = match &a.targets {
        Some(t) => t.clone(),
        None => known.into_iter().filter(|n| *n != a.base).collect(),
    };
    if targets.is_empty() {
        return Err(usage(format!(
            "--explain compares the base with a target, and {} holds only '{}'",
            a.results.display(),
            a.base
        )));
    }
    let text =
        crate::report::profile::explain(&runs, &a.base, &targets, test, a.top).map_err(usage)?;
    emit(a.output.as_deref(), &text)?;
    Ok(0)
}

pub fn compare(a: &CompareRequest) -> Result<i32, Error> {
    if !(a.fail_below > 0.0 && a.fail_below.is_finite()) {
        return Err(usage(format!(
            "--fail-below must be a ratio above 0 (0.95 = fail on a 5 % drop), not {}",
            a.fail_below
        )));
    }
    let opts = Options {
        base: a.base.clone(),
        targets: Some(vec![a.target.clone()]),
        rules: rules(a.noise_floor)?,
        all: a.all,
        sections: crate::suite::report_sections(),
        workloads: crate::suite::workloads(),
        engines: engine_keys(),
        allow_mismatch: a.allow_mismatch,
    };
    // A target whose workload is not the base's is refused here (exit 2,
    // one line), unless --allow-mismatch.
    let report = load::load(&a.results, &opts)?;
    let gate = compare::gate(&report, a.fail_below);
    if gate.rows.is_empty() && gate.broken.is_empty() && gate.excluded.is_empty() {
        return Err(usage(format!(
            "'{}' and '{}' have no test at the same suite and thread count to compare",
            a.target, a.base
        )));
    }
    print!("{}", gate_text(a, &report, &gate));
    for n in notes(&report) {
        eprintln!("{n}");
    }
    let failures: Vec<String> = gate
        .failures()
        .map(|g| {
            if g.verdict == Verdict::Untested {
                format!("{} ({:.2}, untested: one repeat)", g.label, g.ratio)
            } else {
                format!("{} ({:.2})", g.label, g.ratio)
            }
        })
        .collect();
    let untested = gate
        .rows
        .iter()
        .filter(|g| g.verdict == Verdict::Untested)
        .count();
    // Verdicts from a busy machine, said in the gate's one-line result.
    let busy_labels: Vec<String> = report
        .rows()
        .filter(|r| {
            r.cells
                .first()
                .is_some_and(|c| c.as_ref().is_some_and(|c| c.rel.busy))
        })
        .map(|r| r.label(report.sweep()))
        .collect();
    let busy = gate
        .rows
        .iter()
        .filter(|g| busy_labels.contains(&g.label))
        .count();
    let busy_note = if busy > 0 {
        format!(
            "; {busy} of them ran while the machine was busy (marked {}): their verdicts may be the other load's, rerun on an idle machine",
            crate::report::load::BUSY_MARK
        )
    } else {
        String::new()
    };
    if !failures.is_empty() {
        println!(
            "FAIL: {} test(s) below {} (significantly, or untested with one repeat): {}{}",
            failures.len(),
            a.fail_below,
            failures.join(", "),
            busy_note.replacen("of them", "compared tests", 1)
        );
        if untested > 0 {
            println!(
                "{untested} comparison(s) had one repeat on a side and were not tested; run more repeats with the same --name"
            );
        }
    }
    if !gate.not_compared.is_empty() {
        println!(
            "not compared: {} has no result for {} row(s) too rare in {} to gate: {}",
            a.target,
            gate.not_compared.len(),
            a.base,
            gate.not_compared.join(", ")
        );
    }
    if !gate.excluded.is_empty() {
        println!(
            "not gated: {} test(s) whose statements {} and {} answer differently (compatibility record): {}",
            gate.excluded.len(),
            a.target,
            a.base,
            gate.excluded.join("; ")
        );
    }
    if !gate.broken.is_empty() {
        println!(
            "FAIL: {} failed or has no result for {} test(s) that {} has: {}",
            a.target,
            gate.broken.len(),
            a.base,
            gate.broken.join(", ")
        );
    }
    if !failures.is_empty() || !gate.broken.is_empty() {
        return Ok(EXIT_FAILED);
    }
    // Nothing compared is no evidence: never OK.
    if gate.rows.is_empty() {
        println!(
            "FAIL: no test of {} was compared with {} ({} left out by a compatibility record, {} without a result): nothing says it is not below {}",
            a.target,
            a.base,
            gate.excluded.len(),
            gate.missing.len() + gate.not_compared.len(),
            a.fail_below
        );
        return Ok(EXIT_FAILED);
    }
    println!(
        "OK: no test of {} is significantly below {} of {} ({} compared{}){busy_note}",
        a.target,
        a.fail_below,
        a.base,
        gate.rows.len(),
        if untested > 0 {
            format!(", {untested} untested with one repeat")
        } else {
            String::new()
        }
    );
    Ok(0)
}

/// The formats of `rqps history`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum HistoryFormat {
    Term,
    Md,
    Html,
    Json,
}

/// What `rqps history` reads and how it shows it.
pub struct HistoryRequest {
    pub results: PathBuf,
    /// Only runs whose name matches this glob.
    pub name_glob: Option<String>,
    pub order: crate::report::history::Order,
    /// The suite, when the results hold runs of several.
    pub suite: Option<String>,
    pub format: HistoryFormat,
    pub output: Option<PathBuf>,
    /// A change point needs a permutation p-value at most this.
    pub max_p: f64,
    pub fail_on_change: bool,
    pub all: bool,
}

/// `rqps history`: the change points, rendered and written or printed; exit
/// status 1 when `fail_on_change` and the newest run starts a regression.
pub fn history(a: &HistoryRequest) -> Result<i32, Error> {
    if !(a.max_p > 0.0 && a.max_p < 1.0) {
        return Err(usage(format!(
            "--max-p must be above 0 and below 1 (0.05 = 5 %), not {}",
            a.max_p
        )));
    }
    let name_glob = match &a.name_glob {
        Some(g) => Some(glob::Pattern::new(g).map_err(|e| {
            usage(format!(
                "--name-glob '{g}' is not a glob ({e}); use * and ? as in 'nightly-*'"
            ))
        })?),
        None => None,
    };
    if let Some(o) = &a.output {
        crate::util::check_output(o).map_err(usage)?;
    }
    let (runs, warnings) = load::read_results_keeping(&a.results, crate::results::Keep::History)?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    let opts = crate::report::history::Options {
        name_glob,
        order: a.order,
        suite: a.suite.clone(),
        all: a.all,
        settings: crate::report::changepoint::Settings {
            max_p: a.max_p,
            ..crate::report::changepoint::Settings::default()
        },
    };
    let h = crate::report::history::build(&runs, &opts)?;
    let colour = a.format == HistoryFormat::Term && a.output.is_none() && colour_wanted();
    let text = match a.format {
        HistoryFormat::Term => crate::report::history::render_term(&h, colour),
        HistoryFormat::Md => crate::report::history::render_md(&h),
        HistoryFormat::Html => crate::report::history::render_html(&h),
        HistoryFormat::Json => crate::report::history::render_json(&h),
    };
    if a.format == HistoryFormat::Json {
        for w in &h.warnings {
            eprintln!("warning: {w}");
        }
    }
    emit(a.output.as_deref(), &text)?;
    if a.fail_on_change {
        let newest: Vec<String> = h
            .newest_regressions()
            .map(|c| format!("{} ({:+.1}%, p {:.3})", c.test, 100.0 * c.change, c.p))
            .collect();
        if !newest.is_empty() {
            eprintln!(
                "FAIL: the newest run {} starts a regression in {} test(s): {}",
                h.runs.last().map(|r| r.run_id.as_str()).unwrap_or(""),
                newest.len(),
                newest.join(", ")
            );
            return Ok(EXIT_FAILED);
        }
    }
    Ok(0)
}

/// The gate as `rqps compare` prints it: what differs, a line that says
/// what is compared, and the table of tests.
fn gate_text(a: &CompareRequest, report: &Report, gate: &compare::Gate) -> String {
    let colour = colour_wanted();
    let mut t = Table {
        header: [
            "test",
            &format!("{} QPS", a.base),
            &format!("{} QPS", a.target),
            "relative",
            "95% CI",
            "p",
            "",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
        left: 1,
    };
    for g in &gate.rows {
        let rel = report
            .rows()
            .find(|r| r.label(report.sweep()) == g.label)
            .and_then(|r| r.cells[0].as_ref())
            .map(|c| &c.rel);
        t.rows.push(vec![
            g.label.as_str().into(),
            export::qps(g.base_qps).into(),
            export::qps(g.target_qps).into(),
            match rel {
                Some(rel) => rel.cell(),
                None => TCell::shaded(export::Val::Relative(g.ratio, g.verdict), None),
            },
            g.ci.map(|(lo, hi)| format!("{lo:.2}..{hi:.2}"))
                .unwrap_or_default()
                .into(),
            g.p.map(|p| {
                if p < 0.001 {
                    "<0.001".to_string()
                } else {
                    format!("{p:.3}")
                }
            })
            .unwrap_or_default()
            .into(),
            if g.fails { "FAIL" } else { "" }.into(),
        ]);
    }
    let mut out = String::new();
    for l in export::mismatch_lines(report) {
        out.push_str(&l);
        out.push('\n');
    }
    for l in &report.compat {
        out.push_str(&format!("compatibility: {l}\n"));
    }
    out.push_str(&format!(
        "{} against {} (fail below {}; + faster, - slower, ~ no significant change, ? one repeat: untested{})\n",
        a.target,
        a.base,
        a.fail_below,
        if report.rows().any(|r| r.cells.iter().flatten().any(|c| c.rel.busy)) {
            format!(
                "; {m} measured on a busy machine, not coloured",
                m = crate::report::load::BUSY_MARK
            )
        } else {
            String::new()
        }
    ));
    export::term::table(&t, colour, &mut out);
    out
}

/// What reports are told of the engine kinds (the report does not import
/// the engines): each kind's fairness settings by its names, and the keys of
/// every kind's options.
pub fn engine_keys() -> crate::report::model::EngineKeys {
    let kinds = crate::engine::registry::kinds();
    crate::report::model::EngineKeys {
        fairness: kinds
            .iter()
            .map(|k| (k.aliases, k.fairness_settings))
            .collect(),
        options: kinds
            .iter()
            .flat_map(|k| k.options.iter().map(|o| o.key))
            .collect(),
    }
}
