//! `rqps matrix FILE`: runs every target of a matrix file in turn.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::{CliError, EXIT_FAILED, EXIT_INTERRUPTED, parse_run_args};
use crate::plan::matrix::{Matrix, Progress};

#[derive(Args)]
pub struct MatrixArgs {
    /// The matrix file (TOML): [defaults] and [[target]] tables; see examples/.
    file: PathBuf,
    /// Results directory.
    #[arg(long, default_value = "rqps-results", value_name = "DIR")]
    results: PathBuf,
    /// Continue an interrupted matrix: skip the runs that already finished.
    #[arg(long)]
    resume: bool,
    /// Print the plan and its estimated duration; run nothing.
    #[arg(long)]
    dry_run: bool,
}

pub fn matrix(a: &MatrixArgs) -> Result<i32, CliError> {
    let m = Matrix::load(&a.file).map_err(CliError::Usage)?;
    let steps = m.steps();
    // Every target's run must make sense before the first one starts.
    let mut plans = Vec::new();
    for t in &m.targets {
        let plan = parse_run_args(&m.run_args(t, 1, &a.results))
            .and_then(|args| super::suites::Plan::from_args(&args))
            .map_err(|e| {
                CliError::Usage(format!(
                    "{}: target {}: {}",
                    a.file.display(),
                    t.name,
                    e.message()
                ))
            })?;
        plans.push((t.name.clone(), plan.estimate_secs()));
    }
    let est = |t: &crate::plan::matrix::Target| -> f64 {
        plans
            .iter()
            .find(|(n, _)| *n == t.name)
            .map_or(0.0, |(_, s)| *s)
    };
    let progress_path = Progress::path(&a.results, &a.file);
    let mut progress = if a.resume {
        Progress::load(&progress_path)
    } else {
        Progress::default()
    };
    progress.matrix = a.file.display().to_string();
    let todo: Vec<_> = steps
        .iter()
        .filter(|s| !progress.done.contains(s))
        .collect();
    let total: f64 = todo
        .iter()
        .map(|s| {
            est(m
                .targets
                .iter()
                .find(|t| t.name == s.target)
                .expect("steps name targets"))
                + m.cooldown_secs
        })
        .sum();
    println!(
        "matrix {}: {} targets x {} repeats = {} runs ({} to do), base {}, about {:.0} min plus loads and server starts",
        a.file.display(),
        m.targets.len(),
        m.repeats,
        steps.len(),
        todo.len(),
        m.base,
        total / 60.0
    );
    for (i, s) in steps.iter().enumerate() {
        let t = m
            .targets
            .iter()
            .find(|t| t.name == s.target)
            .expect("steps name targets");
        let done = if progress.done.contains(s) {
            "  (done)"
        } else {
            ""
        };
        println!(
            "  {:>3}. {} repeat {}: rqps {}{done}",
            i + 1,
            s.target,
            s.repeat,
            crate::engine::target::redact_args(&m.run_args(t, s.repeat, &a.results)).join(" ")
        );
    }
    let missing = m.missing_engines();
    if a.dry_run {
        for e in missing {
            println!("  needs an install first: {e:?} (done automatically when the matrix runs)");
        }
        return Ok(0);
    }
    crate::results::check_writable(&a.results).map_err(CliError::Usage)?;
    for e in missing {
        if let crate::engine::install::EngineRef::Cached(kind, v) = e {
            crate::engine::install::install(kind, &v, &mut |n| eprintln!("{n}"))
                .map_err(CliError::Failed)?;
        }
    }
    let mut failed = Vec::new();
    let mut first = true;
    for s in &steps {
        if progress.done.contains(s) {
            continue;
        }
        if crate::harness::runner::stop_requested() {
            return Ok(EXIT_INTERRUPTED);
        }
        if !first && m.cooldown_secs > 0.0 {
            eprintln!("cooling down {:.0} s", m.cooldown_secs);
            std::thread::sleep(Duration::from_secs_f64(m.cooldown_secs));
        }
        first = false;
        let t = m
            .targets
            .iter()
            .find(|t| t.name == s.target)
            .expect("steps name targets");
        eprintln!("== {} repeat {} of {}", s.target, s.repeat, m.repeats);
        let args = parse_run_args(&m.run_args(t, s.repeat, &a.results))?;
        let code = match super::run::run(&args) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {}: {}", s.target, e.message());
                EXIT_FAILED
            }
        };
        match code {
            0 => {
                progress.done.push(s.clone());
                progress.save(&progress_path).map_err(CliError::Failed)?;
            }
            EXIT_INTERRUPTED => {
                eprintln!(
                    "interrupted: `rqps matrix {} --resume` continues where this stopped",
                    a.file.display()
                );
                return Ok(EXIT_INTERRUPTED);
            }
            _ => failed.push(format!("{} repeat {}", s.target, s.repeat)),
        }
    }
    let names: Vec<String> = m.targets.iter().map(|t| t.name.clone()).collect();
    final_report(&a.results, &m.base, &names)?;
    if !failed.is_empty() {
        eprintln!(
            "failed runs (rerun them with --resume): {}",
            failed.join(", ")
        );
        return Ok(EXIT_FAILED);
    }
    Ok(0)
}

/// The comparison against the base once every run is stored: terminal tables, and a
/// self-contained HTML page beside the results.
fn final_report(results: &std::path::Path, base: &str, names: &[String]) -> Result<(), CliError> {
    let others: Vec<String> = names
        .iter()
        .filter(|n| n.as_str() != base)
        .cloned()
        .collect();
    let args =
        |format: &str, output: Option<PathBuf>| -> Result<super::report::ReportArgs, CliError> {
            let mut argv = vec![
                "rqps".to_string(),
                "report".into(),
                "--results".into(),
                results.display().to_string(),
            ];
            argv.extend([
                "--base".into(),
                base.to_string(),
                "--format".into(),
                format.to_string(),
            ]);
            if !others.is_empty() {
                argv.extend(["--targets".into(), others.join(",")]);
            }
            if let Some(o) = output {
                argv.extend(["-o".into(), o.display().to_string()]);
            }
            super::parse_report_args(&argv)
        };
    if others.is_empty() {
        eprintln!(
            "one target: nothing to compare; its runs are in {}",
            results.display()
        );
        return Ok(());
    }
    super::report::report(&args("term", None)?)?;
    let html = results.join(format!("report-{}.html", crate::util::file_safe(base)));
    super::report::report(&args("html", Some(html.clone()))?)?;
    eprintln!("HTML report: {}", html.display());
    Ok(())
}
