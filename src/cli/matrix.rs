//! `rqps matrix FILE`: its arguments, run by [`crate::plan::executor`].

use std::path::PathBuf;

use clap::Args;

use crate::error::Error;
use crate::plan::executor::MatrixRequest;

#[derive(Args)]
pub struct MatrixArgs {
    /// The matrix file (TOML): [defaults] and [[target]] tables; see examples/.
    file: PathBuf,
    /// Results directory.
    #[arg(long, default_value = crate::cmdline::RESULTS_DIR, value_name = "DIR")]
    results: PathBuf,
    /// Continue an interrupted matrix: skip the runs that already finished.
    #[arg(long)]
    resume: bool,
    /// Print the plan and its estimated duration; run nothing.
    #[arg(long)]
    dry_run: bool,
    /// Run only every N-th run of the plan, starting with the I-th (one of N hosts sharing
    /// the matrix, e.g. a Kubernetes Indexed Job or a Slurm job array). No final report:
    /// `rqps report` over the parts' results, copied into one directory, gives it.
    #[arg(long, value_name = "I/N", value_parser = crate::plan::options::parse_part)]
    part: Option<crate::suite::part::ClientPart>,
}

pub fn matrix(a: &MatrixArgs) -> Result<i32, Error> {
    crate::plan::executor::run(&MatrixRequest {
        file: a.file.clone(),
        results: a.results.clone(),
        resume: a.resume,
        dry_run: a.dry_run,
        part: a.part,
    })
}
