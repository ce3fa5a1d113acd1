//! `rqps run`: its arguments as a typed [`RunSpec`], run in a session, and
//! the next step printed.

use super::run_args::RunArgs;
use crate::engine::install::EngineSpec;
use crate::engine::target::Target;
use crate::error::{EXIT_INTERRUPTED, Error, usage};
use crate::plan::open::EngineArgs;
use crate::plan::session::{self, RunSpec};
use crate::suite::{Common, Plan, Suite};

/// `rqps run`: the chosen suite's plan from its parsed options, then the run.
pub fn run_cli(a: &RunArgs, suite: &dyn Suite, m: &clap::ArgMatches) -> Result<i32, Error> {
    let plan = suite.plan_cli(&common(a), m)?;
    let spec = spec(a, plan)?;
    let ran = session::run(&spec)?;
    // The last line: what to do next. Not for a matrix's child runs (it
    // reports itself), nor under --quiet, nor after Ctrl-C.
    if let Some(name) = ran.name
        && !a.quiet
        && a.repeat_number.is_none()
        && ran.code != EXIT_INTERRUPTED
    {
        let argv = crate::engine::target::redact_args(&spec.command_line);
        if let Some(hint) = crate::plan::hints::next_step(&a.results, &name, &argv) {
            eprintln!("{hint}");
        }
    }
    Ok(ran.code)
}

/// What every suite's plan starts from.
fn common(a: &RunArgs) -> Common {
    Common {
        profile: a.profile.clone(),
        seed: a.seed.unwrap_or_else(crate::suite::clock_seed),
        part: a.part,
    }
}

/// The run `a` asks for, with its target and server parsed.
fn spec(a: &RunArgs, plan: Box<dyn Plan>) -> Result<RunSpec, Error> {
    let target = match &a.target {
        Some(t) => Some(Target::parse(t).map_err(|e| usage(e.to_string()))?),
        None => None,
    };
    let server = match &a.server {
        Some(s) => Some(s.parse::<EngineSpec>().map_err(|e| usage(e.to_string()))?),
        None => None,
    };
    Ok(RunSpec {
        plan,
        engine: EngineArgs {
            target,
            server,
            basedir: a.basedir.clone(),
            keep: a.keep,
            config: a.config.clone(),
            options: a.engine_options.clone(),
            server_cpus: a.server_cpus.clone(),
            password_file: a.password_file.clone(),
            need: None,
        },
        client_cpus: a.client_cpus.clone(),
        repeats: a.repeats,
        repeat_number: a.repeat_number,
        part: a.part,
        start_at: a.start_at,
        name: a.name.clone(),
        allow_mismatch: a.allow_mismatch,
        results: a.results.clone(),
        json: a.json.clone(),
        device: a.device.clone(),
        server_pid: a.server_pid,
        stmt_timeout: a.stmt_timeout.map(|s| s.get()),
        message_timeout: a.message_timeout.map(|s| s.get()),
        busy_threshold: a.busy_threshold,
        cpu_profile: a.cpu_profile,
        quiet: a.quiet,
        command_line: std::env::args().collect(),
    })
}
