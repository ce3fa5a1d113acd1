//! `rqps merge DIR...`: the runs of client parts (`rqps run --part I/N`) as
//! one run per name and repeat, stored in a results directory of its own.

use std::path::PathBuf;

use clap::Args;

use crate::error::Error;

#[derive(Args)]
pub struct MergeArgs {
    /// Results directories of the parts (or run directories, each with its run.json).
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Where the merged runs are stored (not one of the parts' directories, so that
    /// reports never count a part beside the whole).
    #[arg(long, default_value = crate::cmdline::RESULTS_DIR, value_name = "DIR")]
    results: PathBuf,
}

pub fn merge_cli(a: &MergeArgs) -> Result<i32, Error> {
    crate::plan::stored::merge_parts(&a.dirs, &a.results).map(|()| 0)
}
