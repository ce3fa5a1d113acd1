//! `rqps runs`: the names stored in a results directory, for choosing a
//! `--base` and the targets of `rqps report` ([`crate::plan::stored::list`]).

use std::path::PathBuf;

use clap::Args;

use crate::error::Error;

#[derive(Args)]
pub struct RunsArgs {
    /// Results directory.
    #[arg(long, default_value = crate::cmdline::RESULTS_DIR, value_name = "DIR")]
    results: PathBuf,
}

pub fn runs(a: &RunsArgs) -> Result<i32, Error> {
    crate::plan::stored::list(&a.results).map(|()| 0)
}
