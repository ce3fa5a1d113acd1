//! `rqps report` (compare targets with a base, in any format) and `rqps
//! compare` (a regression gate for scripts: exit 1 on a significant drop):
//! their arguments, as the typed requests of [`crate::plan::report`].

use std::path::PathBuf;

use clap::Args;

use crate::error::Error;
use crate::plan::report::{CompareRequest, ReportRequest};
use crate::report::export::Format;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Results directory.
    #[arg(long, default_value = crate::cmdline::RESULTS_DIR, value_name = "DIR")]
    pub results: PathBuf,
    /// The run name everything is compared with (runs of one name are repeats); `rqps runs`
    /// lists the names stored.
    #[arg(long, value_name = "NAME")]
    pub base: Option<String>,
    /// Only these targets, in this order (default: every other name whose workload is the
    /// base's, oldest first). The base alone, if it ran a thread sweep, is its scalability study.
    #[arg(long, value_delimiter = ',', value_name = "A,B,..")]
    pub targets: Option<Vec<String>>,
    /// Output format.
    #[arg(long, value_enum, default_value = "term")]
    pub format: Format,
    /// Every section of the terminal report. Without it (or --section) the terminal report
    /// gives the answer: the summary with its verdicts and the significant changes, the
    /// scalability table where a name ran several thread counts, what differs and the notes,
    /// then the names of the other sections (each group's and suite's own tables, the hardware
    /// cost per operation).
    #[arg(long, conflicts_with = "section")]
    pub full: bool,
    /// Only these sections of the terminal report, by name or its start: the answer's summary
    /// (with the significant changes), scalability, what-differs and notes, and the others its
    /// last line lists (point-queries, hardware-efficiency-per-operation, tpc-c-tpmc, ...).
    #[arg(long, value_delimiter = ',', value_name = "NAME,..")]
    pub section: Option<Vec<String>>,
    /// Write to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A change needs |ratio - 1| above this to be called faster or slower.
    #[arg(long, default_value_t = crate::plan::report::NOISE_FLOOR, value_name = "F")]
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
    #[arg(long, default_value_t = crate::plan::report::EXPLAIN_TOP, value_name = "N", requires = "explain")]
    pub top: usize,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Results directory.
    #[arg(long, default_value = crate::cmdline::RESULTS_DIR, value_name = "DIR")]
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
    #[arg(long, default_value_t = crate::plan::report::NOISE_FLOOR, value_name = "F")]
    pub noise_floor: f64,
    /// Also compare the unreported warm-up steps.
    #[arg(long)]
    pub all: bool,
    /// Compare even when the target's workload (suite, tests, table sizes, durations,
    /// distribution, ...) is not the base's; without it such a pair exits 2.
    #[arg(long)]
    pub allow_mismatch: bool,
}

pub fn report(a: &ReportArgs) -> Result<i32, Error> {
    // Without --base: the names stored, rather than clap's usage text.
    let Some(base) = &a.base else {
        return Err(crate::report::load::no_base(&a.results, "rqps report"));
    };
    crate::plan::report::report(&ReportRequest {
        results: a.results.clone(),
        base: base.clone(),
        targets: a.targets.clone(),
        format: a.format,
        view: match (&a.section, a.full) {
            (Some(s), _) => crate::report::export::View::Sections(s.clone()),
            (None, true) => crate::report::export::View::Full,
            (None, false) => crate::report::export::View::Answer,
        },
        output: a.output.clone(),
        noise_floor: a.noise_floor,
        all: a.all,
        allow_mismatch: a.allow_mismatch,
        explain: a.explain.clone(),
        top: a.top,
    })
}

pub fn compare(a: &CompareArgs) -> Result<i32, Error> {
    crate::plan::report::compare(&CompareRequest {
        results: a.results.clone(),
        base: a.base.clone(),
        target: a.target.clone(),
        fail_below: a.fail_below,
        noise_floor: a.noise_floor,
        all: a.all,
        allow_mismatch: a.allow_mismatch,
    })
}
