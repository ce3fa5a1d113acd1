//! `rqps history`: the change points of each test's QPS over many runs of
//! one suite (nightly builds), in term, md, html or json; with
//! `--fail-on-change`, exit 1 when the newest run starts a regression.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::error::{EXIT_FAILED, Error};
use crate::report::changepoint::Settings;
use crate::report::history::{self, Order};
use crate::report::load;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum HistoryFormat {
    Term,
    Md,
    Html,
    Json,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  rqps history --results nightly-results --name-glob 'nightly-*' --order name\n  rqps history --format html -o history.html\n  rqps history --fail-on-change        # in CI, after storing tonight's run"
)]
pub struct HistoryArgs {
    /// Results directory.
    #[arg(long, default_value = "rqps-results", value_name = "DIR")]
    pub results: PathBuf,
    /// Only runs whose --name matches this glob (`nightly-*`, `build-?`); default: every run.
    #[arg(long, value_name = "GLOB")]
    pub name_glob: Option<String>,
    /// Order the runs by start time, or by name (digits compared as numbers: build-9 before build-10).
    #[arg(long, value_enum, default_value = "started")]
    pub order: Order,
    /// The suite, when the results hold runs of several.
    #[arg(long, value_name = "SUITE")]
    pub suite: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "term")]
    pub format: HistoryFormat,
    /// Write to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A change point needs a permutation p-value at most this (999 permutations).
    #[arg(long, default_value_t = 0.05, value_name = "P")]
    pub max_p: f64,
    /// Exit 1 when the newest run starts a significant regression (for CI).
    #[arg(long)]
    pub fail_on_change: bool,
    /// Also count the unreported warm-up steps.
    #[arg(long)]
    pub all: bool,
}

pub fn history(a: &HistoryArgs) -> Result<i32, Error> {
    if !(a.max_p > 0.0 && a.max_p < 1.0) {
        return Err(crate::error::usage(format!(
            "--max-p must be above 0 and below 1 (0.05 = 5 %), not {}",
            a.max_p
        )));
    }
    let name_glob = match &a.name_glob {
        Some(g) => Some(glob::Pattern::new(g).map_err(|e| {
            crate::error::usage(format!(
                "--name-glob '{g}' is not a glob ({e}); use * and ? as in 'nightly-*'"
            ))
        })?),
        None => None,
    };
    if let Some(o) = &a.output {
        crate::util::check_output(o).map_err(|e| crate::error::usage(e.to_string()))?;
    }
    let (runs, warnings) = load::read_results(&a.results)?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    let opts = history::Options {
        name_glob,
        order: a.order,
        suite: a.suite.clone(),
        all: a.all,
        settings: Settings {
            max_p: a.max_p,
            ..Settings::default()
        },
    };
    let h = history::build(&runs, &opts)?;
    let colour = a.format == HistoryFormat::Term
        && a.output.is_none()
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none();
    let text = match a.format {
        HistoryFormat::Term => history::render_term(&h, colour),
        HistoryFormat::Md => history::render_md(&h),
        HistoryFormat::Html => history::render_html(&h),
        HistoryFormat::Json => history::render_json(&h),
    };
    if a.format == HistoryFormat::Json {
        for w in &h.warnings {
            eprintln!("warning: {w}");
        }
    }
    match &a.output {
        Some(path) => {
            crate::util::write_output(path, text.as_bytes()).map_err(|e| {
                crate::error::failed(format!("cannot write {}: {e}", path.display()))
            })?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
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
