//! `rqps run`: from arguments to a stored, printed run.

use super::{CliError, EXIT_FAILED, EXIT_INTERRUPTED, RunArgs};
use crate::engine::open::{EngineArgs, OpenError, Opened};
use crate::engine::target::redact_args;
use crate::harness::probe::ProbeContext;
use crate::harness::{Harness, RunEnd, Ui};
use crate::results::{EngineInfo, RunDoc, Status, Store};
use crate::suite::{Common, Plan, Suite};
use std::path::PathBuf;

/// `10.11.19-MariaDB-0+deb12u1` → `10.11.19`; `PostgreSQL 15.18 (Debian ...)` → `15.18`.
fn short_version(v: &str) -> String {
    v.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find(|s| s.contains('.') && s.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or(v)
        .to_string()
}

/// The engine options of `rqps run`.
pub fn engine_args(a: &RunArgs) -> EngineArgs {
    EngineArgs {
        target: a.target.clone(),
        server: a.server.clone(),
        basedir: a.basedir.clone(),
        keep: a.keep,
        config: a.config.clone(),
        options: a.engine_options.clone(),
    }
}

fn open_error(e: OpenError) -> CliError {
    match e {
        OpenError::Usage(m) => CliError::Usage(m),
        OpenError::Failed(m) => CliError::Failed(m),
    }
}

/// `rqps run`: the chosen suite's plan from its parsed options, then the run.
pub fn run_cli(a: &RunArgs, suite: &dyn Suite, m: &clap::ArgMatches) -> Result<i32, CliError> {
    let plan = suite.plan_cli(&common(a), m)?;
    run(a, plan.as_ref())
}

/// What every suite's plan starts from.
pub fn common(a: &RunArgs) -> Common {
    Common {
        profile: a.profile.clone(),
        seed: a.seed.unwrap_or_else(crate::suite::clock_seed),
    }
}

/// Runs a plan against the engine `a` names, `a.repeats` times (each its own stored run).
pub fn run(a: &RunArgs, plan: &dyn Plan) -> Result<i32, CliError> {
    if a.repeats == 0 {
        return Err(CliError::Usage("--repeats must be at least 1".into()));
    }
    if !(0.0..=100.0).contains(&a.busy_threshold) {
        return Err(CliError::Usage(format!(
            "--busy-threshold must be a percentage from 0 to 100, got {}",
            a.busy_threshold
        )));
    }
    let ea = engine_args(a);
    crate::engine::open::check(&ea).map_err(open_error)?;
    crate::results::check_writable(&a.results)?;
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
    let ui = Ui { quiet: a.quiet };
    install_ctrlc();
    let mut engine =
        crate::engine::open::open(&ea, &mut |note| ui.say(note)).map_err(open_error)?;
    let code = run_on(a, plan, &mut engine, &ui);
    engine.close(&mut |note| ui.say(note));
    code
}

fn run_on(a: &RunArgs, plan: &dyn Plan, engine: &mut Opened, ui: &Ui) -> Result<i32, CliError> {
    let driver = engine.driver.clone();
    // Connect once up front so a bad target or config fails before anything is stored.
    let connected = match driver.kv() {
        Some(kv) => kv.connect().map(drop),
        None => driver.require_sql().and_then(|db| db.connect()).map(drop),
    };
    connected.map_err(|e| CliError::Usage(format!("cannot connect to {}: {e}", engine.shown)))?;
    let version = driver
        .version()
        .map_err(|e| CliError::Failed(format!("cannot read the engine version: {e}")))?;
    let settings = driver
        .settings()
        .map_err(|e| CliError::Failed(format!("cannot read the server settings: {e}")))?
        .into_iter()
        .collect();
    let engine_label = if version.to_lowercase().contains("mariadb") {
        "mariadb"
    } else {
        driver.engine()
    };
    let name = a
        .name
        .clone()
        .unwrap_or_else(|| format!("{engine_label}-{}", short_version(&version)));
    let probe = ProbeContext::for_engine(
        &engine.footprint(a.server_pid),
        a.device.clone(),
        a.busy_threshold,
    );
    let mut host = crate::harness::host::host();
    host.data_fs = probe.fs.clone();
    host.data_device = probe.device.clone();
    let doc = RunDoc {
        rqps_version: env!("CARGO_PKG_VERSION").into(),
        git_commit: option_env!("RQPS_GIT_COMMIT")
            .filter(|s| !s.is_empty())
            .map(String::from),
        run_id: String::new(),
        name,
        suite: plan.suite().to_string(),
        repeat: 1,
        status: Status::Running,
        started: crate::util::now_rfc3339(),
        finished: None,
        command_line: redact_args(&if a.argv.is_empty() {
            std::env::args().collect()
        } else {
            a.argv.clone()
        }),
        target: engine.shown.clone(),
        engine: EngineInfo {
            name: driver.engine().into(),
            version,
        },
        server: engine.server_info.clone(),
        settings,
        params: {
            let mut p = plan.params_json();
            // Engine options change what is measured, so "what differs" shows them.
            if let Some(o) = p.as_object_mut() {
                for (k, v) in &a.engine_options {
                    if let Ok(v) = serde_json::to_value(v) {
                        o.insert(k.clone(), v);
                    }
                }
            }
            p
        },
        host,
        load: None,
        tests: Vec::new(),
    };
    let repeats = a.repeats;
    let mut code = 0;
    let numbers: Vec<usize> = match a.repeat_number {
        Some(n) => vec![n.max(1)],
        None => (1..=repeats).collect(),
    };
    for repeat in numbers {
        if crate::harness::runner::stop_requested() {
            break;
        }
        let mut doc = doc.clone();
        doc.repeat = repeat;
        let json = a.json.as_ref().map(|j| {
            // A device or FIFO gets every repeat's document in turn.
            let stream = matches!(
                crate::util::output_path(j),
                Ok(crate::util::OutputPath::Stream)
            );
            if repeats > 1 && !stream {
                numbered(j, repeat)
            } else {
                j.clone()
            }
        });
        let c = run_repeat(doc, json, a, plan, engine, &probe, ui, repeats)?;
        // Ctrl-C wins over a failure, a failure over success.
        if c == EXIT_INTERRUPTED || code != EXIT_INTERRUPTED && c != 0 {
            code = c;
        }
    }
    Ok(code)
}

/// `run.json` → `run-r2.json`, for the documents of repeats.
fn numbered(path: &std::path::Path, repeat: usize) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-r{repeat}.{}", ext.to_string_lossy()),
        None => format!("{stem}-r{repeat}"),
    };
    path.with_file_name(name)
}

/// One repeat of the suite: its own stored run.
#[allow(clippy::too_many_arguments)]
fn run_repeat(
    doc: RunDoc,
    json: Option<PathBuf>,
    a: &RunArgs,
    plan: &dyn Plan,
    engine: &Opened,
    probe: &ProbeContext,
    ui: &Ui,
    repeats: usize,
) -> Result<i32, CliError> {
    let repeat = doc.repeat;
    let mut store = Store::create(&a.results, doc, json)?;
    ui.say(&format!(
        "rqps {}: {} on {} ({} {}), {} steps, about {:.0} s{}; results in {}",
        env!("CARGO_PKG_VERSION"),
        plan.profile(),
        engine.shown,
        store.doc().engine.name,
        store.doc().engine.version,
        plan.step_count(),
        plan.estimate_secs(),
        if repeats > 1 {
            format!(", repeat {repeat} of {repeats}")
        } else {
            String::new()
        },
        store.dir().display()
    ));
    let end = plan.run(&mut Harness {
        driver: engine.driver.clone(),
        store: &mut store,
        ui,
        probe,
        line: plan.line(),
    });

    let (status, code) = match &end {
        Ok(RunEnd::Ok) => (Status::Ok, 0),
        Ok(RunEnd::Failed) => (Status::Failed, EXIT_FAILED),
        Ok(RunEnd::Interrupted) => (Status::Interrupted, EXIT_INTERRUPTED),
        Err(_) if crate::harness::runner::stop_requested() => {
            (Status::Interrupted, EXIT_INTERRUPTED)
        }
        Err(_) => (Status::Failed, EXIT_FAILED),
    };
    store.finish(status)?;
    println!(
        "{}",
        crate::report::table::run_table(store.doc(), false, &super::report::sections())
    );
    eprintln!("results: {}", store.dir().display());
    if let Err(m) = end {
        eprintln!("error: {m}");
    }
    Ok(code)
}

pub(super) fn install_ctrlc() {
    let _ = ctrlc::set_handler(|| {
        if crate::harness::runner::stop_requested() {
            eprintln!("\nstopping now");
            std::process::exit(EXIT_INTERRUPTED);
        }
        eprintln!(
            "\ninterrupted: finishing the current events and saving results (Ctrl-C again to quit at once)"
        );
        crate::harness::runner::request_stop();
    });
}
