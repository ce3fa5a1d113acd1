//! `rqps run`: its arguments as a typed [`RunSpec`], run in a session, and
//! the next step printed.

use super::run_args::RunArgs;
use crate::engine::install::EngineSpec;
use crate::engine::target::Target;
use crate::error::{Error, usage};
use crate::plan::options::EngineArgs;
use crate::plan::session::{self, RunSpec};
use crate::suite::{RunBasics, Suite};

/// `rqps run`: the chosen suite's plan from its parsed options, then the run.
pub fn run_cli(a: &RunArgs, suite: &dyn Suite, m: &clap::ArgMatches) -> Result<i32, Error> {
    let common = RunBasics {
        profile: a.profile.clone(),
        seed: a.options.seed.unwrap_or_else(crate::suite::clock_seed),
        part: a.output.part,
    };
    let plan = suite.plan_cli(&common, m)?;
    let spec = RunSpec::new(plan, engine(a)?, a.options.clone(), a.output.clone());
    let ran = session::run(&spec)?;
    // The last line: what to do next. Not for a matrix's child runs (it
    // reports itself), nor under --quiet, nor after a failure or Ctrl-C
    // (nor after a run that measured nothing: `next_step` says nothing).
    if let Some(name) = ran.name
        && !a.output.quiet
        && a.output.repeat_number.is_none()
        && ran.code == 0
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

#[cfg(test)]
mod tests {
    use super::super::{Cmd, Parsed, parse};
    use crate::plan::options::{Output, RunOptions};
    use crate::plan::session::RunSpec;
    use crate::suite::{RunBasics, registry};

    /// Every option of every suite, set (some suites need two tables: an
    /// option that excludes another), as a matrix table writes them.
    fn every_option(dir: &std::path::Path) -> Vec<(&'static str, String)> {
        let script = dir.join("s.sql");
        std::fs::write(&script, "\\set aid random(1, 10)\nSELECT :aid;\n").unwrap();
        let s = script.display();
        let lua_file = dir.join("s.lua");
        std::fs::write(
            &lua_file,
            "sysbench.cmdline.options = { rows = {\"rows\", 5} }\nfunction event() end\n",
        )
        .unwrap();
        let lua = lua_file.display();
        vec![
            (
                "sysbench",
                "list = \"classic\"\ntests = [\"point-query.pre\", \"read-only.pre_range=10\"]\n\
                 threads = [1, 2]\ntables = 2\ntable_size = 1000\nread_secs = 2.0\nwrite_secs = 3.0\n\
                 warmup_secs = 1.0\nwarm_secs = 1.5\nsettle_secs = 1.0\nrand_type = \"pareto\"\n\
                 ps_mode = \"disable\"\nskip_prepare = true\nskip_trx = true\n\
                 rand_spec_iter = 10\nrand_spec_pct = 2\nrand_spec_res = 70\nrand_pareto_h = 0.3\n\
                 rand_zipfian_exp = 0.9\nrand_seed = 5\nevents = 1000\n"
                    .into(),
            ),
            (
                "sysbench",
                format!(
                    "script = \"{lua}\"\nscript_args = [\"--rows=7\", \"run\"]\nthreads = [2]\n\
                     read_secs = 2.0\nskip_prepare = true\nskip_trx = true\n\
                     sysbench_report = true\nscript_memory = 64\n"
                ),
            ),
            (
                "ibench",
                "clients = 2\nrows_per_client = 1000\nwrites = 10\nquery_secs = 2.0\n\
                 rates = [100, 200]\nsettle_secs = 1.0\nps_mode = \"disable\"\n"
                    .into(),
            ),
            ("select1", "threads = [1, 2]\nsecs = 2.0\nwarmup_secs = 1.0\n".into()),
            (
                "linkbench",
                "requesters = [1, 2]\nnodes = 1000\noutdegree = \"smooth\"\nloaders = 2\n\
                 lb_secs = 2.0\nlb_warmup_secs = 1.0\nrequests = 100\nrequest_rate = 10.5\n\
                 list_limit = 50\nmax_failures = 5\nindex_after_load = false\nlb_load = false\n"
                    .into(),
            ),
            (
                "tpcc",
                "warehouses = 2\nterminals = 4\nsecs = 2.5\nwarmup_secs = 1.0\nkeying = false\n\
                 isolation = \"serializable\"\nps_mode = \"disable\"\nskip_load = true\n\
                 check_only = false\n"
                    .into(),
            ),
            (
                "dbbench",
                "keys = 1000\nkey_size = 16\nvalue_size = 100\nthreads = 2\nsecs = 2.0\n\
                 writer_mb_s = 0.5\nbatch = 4\nscan_len = 10\nskip_load = true\n"
                    .into(),
            ),
            (
                "pgbench",
                format!(
                    "script = [\"{s}@2\", \"{s}\"]\nbuiltin = [\"select-only@3\"]\nclients = [1, 2]\n\
                     time = 2.0\nwarmup_secs = 1.0\nscale = 2\nprotocol = \"prepared\"\n\
                     define = [\"a=1\", \"b=x,y\"]\nrate = 100.5\nlatency_limit = 20.0\nmax_tries = 3\n\
                     init_script = \"{s}\"\nskip_init = true\nallow_shell = true\nlog = true\n\
                     log_prefix = \"{d}/run1\"\naggregate_interval = 1\nfailures_detailed = true\n",
                    d = dir.display()
                ),
            ),
            (
                "pgbench",
                "transactions = 10\nlog = true\nsampling_rate = 0.5\n".into(),
            ),
        ]
    }

    /// Every output option set to a value other than its default.
    fn every_output() -> Output {
        Output {
            part: Some("2/4".parse().unwrap()),
            start_at: Some(
                std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_790_000_000_123),
            ),
            repeats: 3,
            repeat_number: Some(2),
            name: Some("n".into()),
            allow_mismatch: true,
            results: "elsewhere".into(),
            json: Some("run.json".into()),
            server_pid: Some(123),
            quiet: true,
        }
    }

    #[test]
    fn every_option_set_stored_and_parsed_back_is_what_was_set() {
        let dir = tempfile::tempdir().unwrap();
        let tables = every_option(dir.path());
        let common = RunBasics {
            profile: "ci".into(),
            seed: 1,
            part: None,
        };
        for s in registry() {
            // Every option of the suite is in one of its tables.
            let keys: Vec<String> = tables
                .iter()
                .filter(|(n, _)| *n == s.name())
                .flat_map(|(_, t)| {
                    toml::from_str::<toml::Table>(t)
                        .unwrap()
                        .into_iter()
                        .map(|(k, _)| k)
                })
                .collect();
            for a in s.args(clap::Command::new("run")).get_arguments() {
                let key = a
                    .get_long()
                    .unwrap_or(a.get_id().as_str())
                    .replace('-', "_");
                assert!(keys.contains(&key), "{}: no value for {key}", s.name());
            }
        }
        for (name, text) in &tables {
            let table: toml::Table = toml::from_str(text).unwrap();
            let suite = crate::suite::find(name).unwrap();
            let plan = suite.plan_toml(&common, &table).unwrap();
            assert_eq!(plan.options(), table, "{name}");
            let spec = RunSpec::new(
                plan,
                Default::default(),
                RunOptions::default(),
                every_output(),
            );
            let argv = spec.argv();
            let Ok(Parsed {
                cli,
                matches,
                chosen,
            }) = parse(&argv)
            else {
                panic!("{name}: {argv:?} does not parse");
            };
            let (Cmd::Run(a), Some((_, m))) = (cli.cmd, matches.subcommand()) else {
                panic!("{argv:?}: not a run");
            };
            assert_eq!(chosen.name(), *name);
            assert_eq!(a.output, every_output(), "{argv:?}");
            assert_eq!(a.profile, "ci");
            let back = chosen.plan_cli(&common, m).unwrap();
            assert_eq!(back.options(), table, "{argv:?}");
            assert_eq!(back.args(), spec.plan.args());
        }
    }

    #[test]
    fn the_defaults_args_leave_out_are_what_an_empty_command_line_gives() {
        let Ok(Parsed { cli, .. }) = parse(&["rqps".into(), "run".into()]) else {
            panic!("rqps run does not parse");
        };
        let Cmd::Run(a) = cli.cmd else {
            panic!("not a run");
        };
        assert_eq!(a.output, Output::default());
        assert_eq!(a.options, RunOptions::default());
        for s in registry() {
            let m = s
                .args(clap::Command::new("run"))
                .try_get_matches_from(["run"])
                .unwrap();
            let plan = s.plan_cli(
                &RunBasics {
                    profile: "ci".into(),
                    seed: 1,
                    part: None,
                },
                &m,
            );
            let args = plan.unwrap().args();
            assert_eq!(args, ["--suite", s.name(), "--profile", "ci"]);
        }
    }

    #[test]
    fn one_value_is_taken_where_a_list_is() {
        let dir = tempfile::tempdir().unwrap();
        let common = RunBasics {
            profile: "ci".into(),
            seed: 1,
            part: None,
        };
        for (name, text) in every_option(dir.path()) {
            let suite = crate::suite::find(name).unwrap();
            let table = toml::from_str::<toml::Table>(&text).unwrap();
            for (key, v) in &table {
                let toml::Value::Array(list) = v else {
                    continue;
                };
                // The table as it is, with one value where it had a list
                // (an option that needs another, as script_args needs
                // script, keeps it).
                let mut one = table.clone();
                one.insert(key.clone(), list[0].clone());
                let listed = toml::Table::from_iter([(
                    key.to_string(),
                    toml::Value::Array(vec![list[0].clone()]),
                )]);
                let plan = suite.plan_toml(&common, &one);
                let plan = plan.unwrap_or_else(|e| panic!("{name} {key} = {}: {e}", list[0]));
                assert_eq!(plan.options().get(key), listed.get(key), "{name} {key}");
            }
        }
    }

    #[test]
    fn another_suites_option_points_at_this_suites_own() {
        let refused = |argv: &[&str]| {
            let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
            match parse(&argv) {
                Err(super::super::NotParsed::Usage(e)) => e.to_string(),
                _ => panic!("{argv:?} is not refused"),
            }
        };
        assert_eq!(
            refused(&["rqps", "run", "--clients", "8"]),
            "--clients applies only to --suite ibench; --suite sysbench sets its clients with --threads"
        );
        assert_eq!(
            refused(&["rqps", "run", "--suite", "pgbench", "--threads", "8"]),
            "--threads applies only to --suite sysbench; --suite pgbench sets its clients with --clients"
        );
        // Nothing of the kind: the owner alone.
        assert_eq!(
            refused(&["rqps", "run", "--suite", "select1", "--rates", "5"]),
            "--rates applies only to --suite ibench"
        );
    }

    #[test]
    fn a_matrix_define_list_is_stored_as_one_define_per_variable() {
        let table: toml::Table = toml::from_str("define = [\"a=1\", \"b=x\"]\n").unwrap();
        let common = RunBasics {
            profile: "ci".into(),
            seed: 1,
            part: None,
        };
        let plan = crate::suite::find("pgbench")
            .unwrap()
            .plan_toml(&common, &table)
            .unwrap();
        let args = plan.args();
        assert!(
            args.windows(4)
                .any(|w| w == ["--define", "a=1", "--define", "b=x"]),
            "{args:?}"
        );
    }
}
