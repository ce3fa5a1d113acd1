//! `rqps history`: the change points of each test's QPS over many runs of
//! one suite (nightly builds), in term, md, html or json; with
//! `--fail-on-change`, exit 1 when the newest run starts a regression.

use std::path::PathBuf;

use clap::Args;

use crate::error::Error;
use crate::plan::report::{HistoryFormat, HistoryRequest};
use crate::report::history::Order;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  rqps history --results nightly-results --name-glob 'nightly-*' --order name\n  rqps history --format html -o history.html\n  rqps history --fail-on-change        # in CI, after storing tonight's run"
)]
pub struct HistoryArgs {
    /// Results directory.
    #[arg(long, default_value = crate::cmdline::RESULTS_DIR, value_name = "DIR")]
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
    crate::plan::report::history(&HistoryRequest {
        results: a.results.clone(),
        name_glob: a.name_glob.clone(),
        order: a.order,
        suite: a.suite.clone(),
        format: a.format,
        output: a.output.clone(),
        max_p: a.max_p,
        fail_on_change: a.fail_on_change,
        all: a.all,
    })
}
