//! Command-line parsing and the commands it dispatches to. Prints; the work
//! happens in plan, suite, harness, engine, results and report. `rqps run`
//! and `rqps tests` take the options of the suite `--suite` names, and the
//! engine kinds' options, from the suite and the engine registries.

mod compat;
mod engine;
mod history;
mod matrix;
mod merge;
mod report;
pub mod run;
mod run_args;
mod runs;
mod serve;
pub mod shell;
mod spellings;

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
    Engine(engine::EngineCmd),
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
    #[arg(long, default_value = crate::cmdline::RESULTS_DIR, value_name = "DIR")]
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

/// The suites and what they run, from the registry, for `--help`.
fn suites_help() -> String {
    let mut s =
        String::from("Suites (--suite NAME; `rqps run --suite NAME --help` lists its options):\n");
    for (i, x) in suite::registry().iter().enumerate() {
        let default = if i == 0 { " (the default)" } else { "" };
        s.push_str(&format!("  {:<10} {}{default}\n", x.name(), x.about()));
    }
    s
}

/// rqps's one-line description: its suites (the registry's names) and engines.
fn about() -> String {
    let names: Vec<&str> = suite::registry().iter().map(|s| s.name()).collect();
    format!(
        "Database benchmark and regression finder: {} on SQLite, MariaDB/MySQL, PostgreSQL and RocksDB",
        names.join(", ")
    )
}

/// What `rqps --help` says before the commands.
fn long_about() -> String {
    format!(
        "rqps runs the field's standard database benchmarks and tells a regression from noise.\n\n\
         {}\n\
         Engines: SQLite (built in), MariaDB/MySQL and PostgreSQL (a server you run: --target URL; or a \
         throwaway one rqps starts: --server KIND[@VERSION]), and RocksDB (a release's library: --server \
         rocksdb@VERSION). Every result is kept with its context in a results directory; `rqps report` \
         sets each target against a base with a verdict per test (faster, slower, or not distinguishable \
         from noise).\n\n\
         Start with `rqps run`: it loads sbtest tables into a temporary SQLite database and runs the \
         sysbench quick profile (32 tests, about 3 minutes).",
        suites_help()
    )
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
        .about(about())
        .long_about(long_about())
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
    Usage(Error),
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
        suite_named(argv).map_err(NotParsed::Usage)?
    } else {
        suite::registry()[0]
    };
    // A habit from the tool the suite reproduces (pgbench's `-c 8`): one
    // line that names rqps's option.
    let cmd = command(chosen);
    if takes_suite && let Some(m) = spellings::peer_spellings(argv, chosen, &cmd, &sub) {
        return Err(NotParsed::Usage(usage_error(m)));
    }
    if takes_suite
        && let Some(sc) = cmd.find_subcommand(&sub)
        && let Some(m) = spellings::foreign_options(argv, &spellings::longs(sc), chosen)
    {
        return Err(NotParsed::Usage(usage_error(m)));
    }
    let matches = match cmd.try_get_matches_from(argv) {
        Ok(m) => m,
        // A value over its limit (or not a number): one line that says the limit.
        Err(e) if e.kind() == clap::error::ErrorKind::ValueValidation => {
            let text = e.to_string();
            let line = text.lines().next().unwrap_or("bad value");
            return Err(NotParsed::Usage(usage_error(
                line.trim_start_matches("error: ").to_string(),
            )));
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
        Err(NotParsed::Usage(e)) => return Err(Refused::Line(e)),
        Err(NotParsed::Clap(e)) => return Err(Refused::Clap(e)),
        Err(NotParsed::Info(_)) => return Ok(()),
    };
    let sub = p.matches.subcommand().map(|(_, m)| m);
    let common = |profile: &str| suite::RunBasics {
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
        Err(NotParsed::Usage(e)) => return usage(&scrub(&e.to_string(), &argv)),
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
        Cmd::Engine(c) => engine::engine(&c),
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

/// `rqps tests`: the steps a suite's profile and options give.
fn tests(a: &TestsArgs, suite: &dyn Suite, m: &clap::ArgMatches) -> Result<i32, Error> {
    let common = suite::RunBasics {
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
