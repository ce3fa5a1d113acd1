//! `rqps run`: from arguments to a stored, printed run.

use std::sync::Arc;

use super::{CliError, EXIT_FAILED, EXIT_INTERRUPTED, RunArgs};
use crate::driver::sqlite::SqliteDriver;
use crate::driver::{Driver, PsMode};
use crate::plan::{SysbenchParams, profile};
use crate::store::{EngineInfo, RunDoc, Store};
use crate::suite::{RunEnd, Ui, run_sysbench};
use crate::target::{Target, redact_args};

/// The profile with every option given on the command line applied.
pub fn params(a: &RunArgs) -> Result<SysbenchParams, CliError> {
    let mut p = profile(&a.profile)
        .ok_or_else(|| CliError::Usage(format!("unknown profile '{}'", a.profile)))?;
    if let Some(l) = &a.list {
        p.list = l.parse().map_err(CliError::Usage)?;
    }
    if let Some(t) = &a.tests {
        p.tests = t
            .iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        if p.tests.is_empty() {
            return Err(CliError::Usage(
                "--tests needs at least one test name".into(),
            ));
        }
    }
    macro_rules! set {
        ($($f:ident),*) => { $( if let Some(v) = a.$f.clone() { p.$f = v; } )* };
    }
    set!(
        threads,
        tables,
        table_size,
        read_secs,
        write_secs,
        warmup_secs,
        warm_secs,
        settle_secs
    );
    if let Some(r) = &a.rand_type {
        p.rand_type = r.parse().map_err(CliError::Usage)?;
    }
    if let Some(m) = &a.ps_mode {
        p.ps_mode = if m == "disable" {
            PsMode::Disable
        } else {
            PsMode::Auto
        };
    }
    p.skip_prepare = a.skip_prepare;
    p.seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    Ok(p)
}

/// Reads a SQLite config file: one PRAGMA per line (`PRAGMA` optional), `#` comments.
fn sqlite_pragmas(path: &std::path::Path) -> Result<Vec<String>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("cannot read config file {}: {e}", path.display())))?;
    Ok(text
        .lines()
        .map(|l| {
            l.split('#')
                .next()
                .unwrap_or("")
                .trim()
                .trim_end_matches(';')
        })
        .filter(|l| !l.is_empty())
        .map(|l| {
            if l.to_ascii_uppercase().starts_with("PRAGMA ") {
                l.to_string()
            } else {
                format!("PRAGMA {l}")
            }
        })
        .collect())
}

pub fn run(a: &RunArgs) -> Result<i32, CliError> {
    let p = params(a)?;
    let steps = p.steps().map_err(CliError::Usage)?;
    let target = match &a.target {
        Some(t) => Target::parse(t).map_err(CliError::Usage)?,
        None => Target::Sqlite(None),
    };
    crate::store::check_writable(&a.results).map_err(CliError::Usage)?;
    if let Some(j) = &a.json {
        let parent = j
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        if !parent.is_dir() {
            return Err(CliError::Usage(format!(
                "--json {}: directory {} does not exist",
                j.display(),
                parent.display()
            )));
        }
    }
    // Keeps a temporary database alive for the run; removed on drop.
    let mut _tmp: Option<tempfile::TempDir> = None;
    let driver: Arc<dyn Driver> = match &target {
        Target::Sqlite(path) => {
            let pragmas = match &a.config {
                Some(c) => sqlite_pragmas(c)?,
                None => Vec::new(),
            };
            let path = match path {
                Some(p) => p.clone(),
                None => {
                    let d = tempfile::Builder::new()
                        .prefix("rqps-sqlite-")
                        .tempdir()
                        .map_err(|e| {
                            CliError::Failed(format!("cannot create a temporary directory: {e}"))
                        })?;
                    let p = d.path().join("sbtest.db");
                    _tmp = Some(d);
                    p
                }
            };
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
                && !dir.is_dir()
            {
                return Err(CliError::Usage(format!(
                    "target {}: directory {} does not exist",
                    target.display(),
                    dir.display()
                )));
            }
            Arc::new(SqliteDriver::new(&path, pragmas))
        }
        Target::Mysql(_) | Target::Postgres(_) => {
            return Err(CliError::Usage(format!(
                "target {}: this build of rqps runs embedded SQLite only",
                target.display()
            )));
        }
    };
    // Connect once up front so a bad target or config fails before anything is stored.
    drop(
        driver
            .connect()
            .map_err(|e| CliError::Usage(format!("cannot connect to {}: {e}", target.display())))?,
    );
    let version = driver
        .version()
        .map_err(|e| CliError::Failed(format!("cannot read the engine version: {e}")))?;
    let name = a
        .name
        .clone()
        .unwrap_or_else(|| format!("{}-{version}", driver.engine()));
    let doc = RunDoc {
        rqps_version: env!("CARGO_PKG_VERSION").into(),
        git_commit: option_env!("RQPS_GIT_COMMIT")
            .filter(|s| !s.is_empty())
            .map(String::from),
        run_id: String::new(),
        name,
        suite: a.suite.clone(),
        status: "running".into(),
        started: crate::util::now_rfc3339(),
        finished: None,
        command_line: redact_args(&std::env::args().collect::<Vec<_>>()),
        target: target.display(),
        engine: EngineInfo {
            name: driver.engine().into(),
            version,
        },
        params: serde_json::to_value(&p).unwrap_or_default(),
        host: crate::host::host(),
        load: None,
        tests: Vec::new(),
    };
    let mut store = Store::create(&a.results, doc, a.json.clone()).map_err(CliError::Usage)?;
    install_ctrlc();
    let ui = Ui { quiet: a.quiet };
    ui.say(&format!(
        "rqps {}: {} on {} ({} {}), {} steps, about {:.0} s; results in {}",
        env!("CARGO_PKG_VERSION"),
        p.profile,
        target.display(),
        store.doc().engine.name,
        store.doc().engine.version,
        steps.len(),
        p.estimate_secs(&steps),
        store.dir().display()
    ));
    let end = run_sysbench(driver, &p, &steps, &mut store, &ui);
    let (status, code) = match &end {
        Ok(RunEnd::Ok) => ("ok", 0),
        Ok(RunEnd::Failed) => ("failed", EXIT_FAILED),
        Ok(RunEnd::Interrupted) => ("interrupted", EXIT_INTERRUPTED),
        Err(_) if crate::runner::stop_requested() => ("interrupted", EXIT_INTERRUPTED),
        Err(_) => ("failed", EXIT_FAILED),
    };
    store.finish(status).map_err(CliError::Failed)?;
    println!("{}", crate::report::table::run_table(store.doc(), false));
    eprintln!("results: {}", store.dir().display());
    if let Err(m) = end {
        eprintln!("error: {m}");
    }
    Ok(code)
}

fn install_ctrlc() {
    let _ = ctrlc::set_handler(|| {
        if crate::runner::stop_requested() {
            eprintln!("\nstopping now");
            std::process::exit(EXIT_INTERRUPTED);
        }
        eprintln!(
            "\ninterrupted: finishing the current events and saving results (Ctrl-C again to quit at once)"
        );
        crate::runner::request_stop();
    });
}
