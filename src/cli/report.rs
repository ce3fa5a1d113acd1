//! `rqps report` (compare targets with a base, in any format) and `rqps
//! compare` (a regression gate for scripts: exit 1 on a significant drop).

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use super::{CliError, EXIT_FAILED};
use crate::report::compare::{self, Rules};
use crate::report::export::{self, Format, TCell, Table};
use crate::report::load::{self, Options};
use crate::report::model::{Report, Verdict};
use crate::report::section::Section;

/// The report sections of the registered suites.
pub fn sections() -> Vec<&'static dyn Section> {
    crate::suite::report_sections()
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Results directory.
    #[arg(long, default_value = "rqps-results", value_name = "DIR")]
    pub results: PathBuf,
    /// The run name everything is compared with (runs of one name are repeats).
    #[arg(long, value_name = "NAME")]
    pub base: String,
    /// Only these targets, in this order (default: every other name whose workload is the
    /// base's, oldest first). The base alone, if it ran a thread sweep, is its scalability study.
    #[arg(long, value_delimiter = ',', value_name = "A,B,..")]
    pub targets: Option<Vec<String>>,
    /// Output format.
    #[arg(long, value_enum, default_value = "term")]
    pub format: Format,
    /// Write to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A change needs |ratio - 1| above this to be called faster or slower.
    #[arg(long, default_value_t = 0.02, value_name = "F")]
    pub noise_floor: f64,
    /// Also compare the unreported warm-up steps.
    #[arg(long)]
    pub all: bool,
    /// Also compare targets whose workload (suite, tests, table sizes, durations,
    /// distribution, ...) is not the base's; the report says so on top. Without it they
    /// are left out, with one line naming the differences.
    #[arg(long)]
    pub allow_mismatch: bool,
    /// Instead of the report: where the CPU per operation of TEST went, from the CPU
    /// profiles of runs made with --cpu-profile. The top functions of base and each target
    /// side by side in µs/op, by largest increase, with the sampling error.
    #[arg(long, value_name = "TEST")]
    pub explain: Option<String>,
    /// Rows of each --explain table.
    #[arg(long, default_value_t = 20, value_name = "N", requires = "explain")]
    pub top: usize,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Results directory.
    #[arg(long, default_value = "rqps-results", value_name = "DIR")]
    pub results: PathBuf,
    /// The reference run name.
    #[arg(long, value_name = "NAME")]
    pub base: String,
    /// The run name under test.
    #[arg(long, value_name = "NAME")]
    pub target: String,
    /// Fail when a test's relative QPS is significantly below this.
    #[arg(long, default_value_t = 0.95, value_name = "RATIO")]
    pub fail_below: f64,
    /// A change needs |ratio - 1| above this to count.
    #[arg(long, default_value_t = 0.02, value_name = "F")]
    pub noise_floor: f64,
    /// Also compare the unreported warm-up steps.
    #[arg(long)]
    pub all: bool,
    /// Compare even when the target's workload (suite, tests, table sizes, durations,
    /// distribution, ...) is not the base's; without it such a pair exits 2.
    #[arg(long)]
    pub allow_mismatch: bool,
}

fn rules(noise_floor: f64) -> Result<Rules, CliError> {
    if !(0.0..1.0).contains(&noise_floor) {
        return Err(CliError::Usage(format!(
            "--noise-floor must be at least 0 and below 1 (0.02 = 2 %), not {noise_floor}"
        )));
    }
    Ok(Rules {
        noise_floor,
        ..Rules::default()
    })
}

/// The parameters that make each registered suite's workload.
pub fn workloads() -> Vec<crate::report::model::WorkloadKeys> {
    crate::suite::workloads()
}

/// Skipped results and warnings, one line each, for standard error.
fn notes(r: &Report) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    v.extend(r.skipped.iter().map(|s| {
        format!(
            "note: not counted: {} {} t={} in run {}: {}{}",
            s.target,
            s.test,
            s.threads,
            s.run_id,
            s.status,
            s.reason
                .as_ref()
                .map(|x| format!(" ({x})"))
                .unwrap_or_default()
        )
    }));
    v.extend(r.warnings.iter().map(|w| format!("warning: {w}")));
    v
}

pub fn report(a: &ReportArgs) -> Result<i32, CliError> {
    if let Some(o) = &a.output {
        crate::util::check_output(o).map_err(|e| CliError::Usage(e.to_string()))?;
    }
    if let Some(test) = &a.explain {
        return explain(a, test);
    }
    let opts = Options {
        base: a.base.clone(),
        targets: a.targets.clone(),
        rules: rules(a.noise_floor)?,
        all: a.all,
        sections: sections(),
        workloads: workloads(),
        allow_mismatch: a.allow_mismatch,
    };
    let report = load::load(&a.results, &opts)?;
    let colour = a.format == Format::Term
        && a.output.is_none()
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none();
    let text = export::exporter(a.format, colour).render(&report);
    // The readable formats carry the notes; keep the data formats clean.
    if matches!(a.format, Format::Csv | Format::Tsv | Format::Json) {
        for l in export::mismatch_lines(&report) {
            eprintln!("note: {l}");
        }
        for n in notes(&report) {
            eprintln!("{n}");
        }
    }
    match &a.output {
        Some(path) => {
            crate::util::write_output(path, text.as_bytes())
                .map_err(|e| CliError::Failed(format!("cannot write {}: {e}", path.display())))?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(0)
}

/// `rqps report --explain TEST`.
fn explain(a: &ReportArgs, test: &str) -> Result<i32, CliError> {
    let (runs, _) = load::read_results(&a.results)?;
    let known = load::names(&runs);
    if !known.contains(&a.base) {
        return Err(CliError::Usage(format!(
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
        return Err(CliError::Usage(format!(
            "--explain compares the base with a target, and {} holds only '{}'",
            a.results.display(),
            a.base
        )));
    }
    let text = crate::report::profile::explain(&runs, &a.base, &targets, test, a.top)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    match &a.output {
        Some(path) => {
            crate::util::write_output(path, text.as_bytes())
                .map_err(|e| CliError::Failed(format!("cannot write {}: {e}", path.display())))?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(0)
}

pub fn compare(a: &CompareArgs) -> Result<i32, CliError> {
    if !(a.fail_below > 0.0 && a.fail_below.is_finite()) {
        return Err(CliError::Usage(format!(
            "--fail-below must be a ratio above 0 (0.95 = fail on a 5 % drop), not {}",
            a.fail_below
        )));
    }
    let opts = Options {
        base: a.base.clone(),
        targets: Some(vec![a.target.clone()]),
        rules: rules(a.noise_floor)?,
        all: a.all,
        sections: sections(),
        workloads: workloads(),
        allow_mismatch: a.allow_mismatch,
    };
    // A target whose workload is not the base's is refused here (exit 2,
    // one line), unless --allow-mismatch.
    let report = load::load(&a.results, &opts)?;
    let gate = compare::gate(&report, a.fail_below);
    if gate.rows.is_empty() && gate.broken.is_empty() {
        return Err(CliError::Usage(format!(
            "'{}' and '{}' have no test at the same suite and thread count to compare",
            a.target, a.base
        )));
    }
    let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
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
            .map(|c| c.rel.shade);
        t.rows.push(vec![
            g.label.as_str().into(),
            export::qps(g.base_qps).into(),
            export::qps(g.target_qps).into(),
            TCell::shaded(export::Val::Rel(g.ratio, g.verdict), rel),
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
    for l in export::mismatch_lines(&report) {
        out.push_str(&l);
        out.push('\n');
    }
    out.push_str(&format!(
        "{} against {} (fail below {}; + faster, - slower, ~ no significant change, ? one repeat: untested)\n",
        a.target, a.base, a.fail_below
    ));
    export::term::table(&t, colour, &mut out);
    print!("{out}");
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
    if !failures.is_empty() {
        println!(
            "FAIL: {} test(s) below {} (significantly, or untested with one repeat): {}",
            failures.len(),
            a.fail_below,
            failures.join(", ")
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
    println!(
        "OK: no test of {} is significantly below {} of {} ({} compared{})",
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
