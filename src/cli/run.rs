//! `rqps run`: its arguments as a typed [`RunSpec`], run in a session, and
//! the next step printed.

use super::run_args::RunArgs;
use crate::engine::install::EngineSpec;
use crate::engine::target::Target;
use crate::error::{EXIT_INTERRUPTED, Error, usage};
use crate::plan::options::EngineArgs;
use crate::plan::session::{self, RunSpec};
use crate::suite::{Common, Suite};

/// `rqps run`: the chosen suite's plan from its parsed options, then the run.
pub fn run_cli(a: &RunArgs, suite: &dyn Suite, m: &clap::ArgMatches) -> Result<i32, Error> {
    let common = Common {
        profile: a.profile.clone(),
        seed: a.options.seed.unwrap_or_else(crate::suite::clock_seed),
        part: a.output.part,
    };
    let plan = suite.plan_cli(&common, m)?;
    let mut plan_args = vec![
        "--suite".to_string(),
        suite.name().to_string(),
        "--profile".to_string(),
        a.profile.clone(),
    ];
    plan_args.extend(suite_args(suite, m));
    let spec = RunSpec::new(
        plan,
        plan_args,
        engine(a)?,
        a.options.clone(),
        a.output.clone(),
    );
    let ran = session::run(&spec)?;
    // The last line: what to do next. Not for a matrix's child runs (it
    // reports itself), nor under --quiet, nor after Ctrl-C.
    if let Some(name) = ran.name
        && !a.output.quiet
        && a.output.repeat_number.is_none()
        && ran.code != EXIT_INTERRUPTED
    {
        // The rerun it may suggest is the command as the user typed it.
        let typed: Vec<String> = std::env::args().collect();
        let argv = crate::engine::target::redact_args(&typed);
        if let Some(hint) = crate::plan::hints::next_step(&a.output.results, &name, &argv) {
            eprintln!("{hint}");
        }
    }
    Ok(ran.code)
}

/// The engine `a` names, with its target and server parsed; a password in
/// the `--target` URL is warned about, once, unless allowed.
fn engine(a: &RunArgs) -> Result<EngineArgs, Error> {
    let target = a
        .target
        .as_deref()
        .map(Target::parse)
        .transpose()
        .map_err(usage)?;
    if !a.allow_password_in_url
        && target.as_ref().is_some_and(Target::has_url_password)
        && let Some(w) = crate::engine::target::password_in_url_warning(&["--target"], true)
    {
        eprintln!("rqps: warning: {w}");
    }
    Ok(EngineArgs {
        target,
        server: a
            .server
            .as_deref()
            .map(str::parse::<EngineSpec>)
            .transpose()
            .map_err(usage)?,
        options: a.engine_options.clone(),
    })
}

/// The suite's options given on the command line, as `rqps run` arguments
/// again (a list as one comma-separated value, a repeated option repeated),
/// for the command line stored with the run.
fn suite_args(suite: &dyn Suite, m: &clap::ArgMatches) -> Vec<String> {
    let mut out = Vec::new();
    for arg in suite.args(clap::Command::new("run")).get_arguments() {
        let (id, Some(long)) = (arg.get_id().as_str(), arg.get_long()) else {
            continue;
        };
        if m.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
            continue;
        }
        let Ok(Some(given)) = m.try_get_raw_occurrences(id) else {
            continue;
        };
        for values in given {
            let values: Vec<String> = values.map(|v| v.to_string_lossy().into_owned()).collect();
            out.push(format!("--{long}"));
            if !values.is_empty() && arg.get_num_args().is_none_or(|n| n.takes_values()) {
                out.push(values.join(","));
            }
        }
    }
    out
}
