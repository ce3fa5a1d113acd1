//! `rqps merge DIR...`: the runs of client parts (`rqps run --part I/N`) as
//! one run per name and repeat, stored in a results directory of its own.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::error::Error;
use crate::results::{RunDoc, Store, merge, read_run};

#[derive(Args)]
pub struct MergeArgs {
    /// Results directories of the parts (or run directories, each with its run.json).
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Where the merged runs are stored (not one of the parts' directories, so that
    /// reports never count a part beside the whole).
    #[arg(long, default_value = "rqps-results", value_name = "DIR")]
    results: PathBuf,
}

/// Every run in `dir`: the run itself when `dir` holds a run.json.
fn runs_in(dir: &Path) -> Result<Vec<RunDoc>, Error> {
    if dir.join("run.json").is_file() {
        return Ok(vec![read_run(dir)?]);
    }
    let entries = std::fs::read_dir(dir).map_err(|e| {
        crate::error::usage(format!(
            "cannot read {}: {e} (give the results directories of the parts)",
            dir.display()
        ))
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("run.json").is_file())
        .collect();
    dirs.sort();
    if dirs.is_empty() {
        return Err(crate::error::usage(format!(
            "{} holds no runs (give the results directories of the parts)",
            dir.display()
        )));
    }
    dirs.iter()
        .map(|d| read_run(d).map_err(Error::from))
        .collect()
}

pub fn merge_cli(a: &MergeArgs) -> Result<i32, Error> {
    let out = std::fs::canonicalize(&a.results).unwrap_or_else(|_| a.results.clone());
    let mut runs = Vec::new();
    for d in &a.dirs {
        if std::fs::canonicalize(d).is_ok_and(|d| out.starts_with(&d) || d.starts_with(&out)) {
            return Err(crate::error::usage(format!(
                "--results {} is (inside) a part's directory {}: store the merged runs elsewhere, so reports never count a part beside the whole",
                a.results.display(),
                d.display()
            )));
        }
        runs.extend(runs_in(d)?);
    }
    let merged = merge::merge(runs).map_err(|e| crate::error::usage(e.to_string()))?;
    crate::results::check_writable(&a.results)?;
    let mut command_line = vec!["rqps".to_string(), "merge".into()];
    command_line.extend(a.dirs.iter().map(|d| d.display().to_string()));
    for mut doc in merged {
        let tests = std::mem::take(&mut doc.tests);
        let status = doc.status;
        doc.command_line = command_line.clone();
        let parts = doc.merged_from.len();
        for p in doc.merged_from.iter().filter(|p| p.late) {
            eprintln!(
                "warning: {} part {}/{} began {:.1} s after --start-at (flagged late)",
                doc.name, p.index, p.count, p.late_secs
            );
        }
        let mut store = Store::create(&a.results, doc, None)?;
        for t in tests {
            let slot = store.begin_test(&t)?;
            store.finish_test(slot, t)?;
        }
        store.finish(status)?;
        println!(
            "{}",
            crate::report::table::run_table(store.doc(), false, &crate::suite::report_sections())
        );
        eprintln!(
            "merged {parts} parts of {} repeat {} into {}",
            store.doc().name,
            store.doc().repeat,
            store.dir().display()
        );
    }
    Ok(0)
}
