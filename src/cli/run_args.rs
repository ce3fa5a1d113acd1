//! The options of `rqps run` ([`RunArgs`]) and the parsers of their values
//! (`--part`, `--start-at`): apart from the CLI's face, so that `run.rs` and
//! `matrix.rs` use them without importing the module that imports them.

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Clone, Debug, Default)]
pub struct RunArgs {
    /// Where to run: sqlite:PATH, mysql://user@host:port/db (or mariadb://),
    /// postgres://user@host:port/db (or postgresql://), or rocksdb:PATH?version=V (a RocksDB
    /// database directory, opened with that installed release's library; without ?version,
    /// the system's librocksdb). Default: a new SQLite database in a temporary directory,
    /// removed afterwards. The password: --password-file, never the command line.
    #[arg(long, value_name = "TARGET")]
    pub target: Option<String>,
    /// Start a throwaway engine instead of using --target: mysql (Oracle MySQL), mariadb,
    /// postgres or rocksdb, each optionally @VERSION from `rqps engine install`
    /// (mysql@8.0.33, postgres@16.15, rocksdb@8.10.0). For a
    /// server rqps creates a fresh data directory in a temp dir, writes --config into it,
    /// starts the server on a free loopback port, runs the suite, stops it and removes the data
    /// directory (unless --keep); rocksdb opens a fresh database with that release's library.
    #[arg(long, value_name = "KIND[@VERSION]", conflicts_with = "target")]
    pub server: Option<String>,
    /// The password of the --target URL when it has none: the first line of FILE, which only
    /// its owner may read (chmod 600). Without it, $PGPASSWORD or ~/.pgpass (PostgreSQL) and
    /// $MYSQL_PWD (MySQL) are read, so a password never has to be on the command line.
    #[arg(long, value_name = "FILE", requires = "target")]
    pub password_file: Option<PathBuf>,
    /// Install prefix of the --server engine (e.g. /usr/lib/postgresql/15, a MariaDB tree
    /// with bin/ and scripts/, or an unpacked Oracle MySQL tree, 5.5 to 9.x). Default: PATH,
    /// then the usual Debian locations.
    #[arg(long, value_name = "DIR", requires = "server")]
    pub basedir: Option<PathBuf>,
    /// Keep the --server data directory after the run (its path is printed).
    #[arg(long, requires = "server")]
    pub keep: bool,
    /// Pin the throwaway --server to these CPUs (a Linux CPU list: 0-17, 0,2,4-7): the
    /// server's CPU budget of a scalability study. Stored with the run's parameters.
    #[arg(long, value_name = "LIST", requires = "server", value_parser = crate::util::cpus::CpuSet::parse_on_this_machine)]
    pub server_cpus: Option<crate::util::cpus::CpuSet>,
    /// Pin rqps's client threads to these CPUs (a CPU list, as --server-cpus), so the
    /// client does not take the server's CPUs. Stored with the run's parameters.
    #[arg(long, value_name = "LIST", value_parser = crate::util::cpus::CpuSet::parse_on_this_machine)]
    pub client_cpus: Option<crate::util::cpus::CpuSet>,
    /// Run the I-th of N equal shares of the load (sysbench: of every --threads count), as one
    /// of N client processes or hosts driving one server; `rqps merge` adds the parts' results
    /// up. Needs --skip-prepare: load the tables once before the parts start.
    #[arg(long, value_name = "I/N", value_parser = parse_part)]
    pub part: Option<crate::suite::part::Part>,
    /// Begin the first test at this wall-clock time (RFC 3339, e.g. 2026-11-23T10:00:00Z, or
    /// Unix seconds), so that parts on several hosts start together. A part that begins more
    /// than 1 s late is flagged (stored with the run, listed by `rqps merge` and reports).
    #[arg(long, value_name = "TIME", value_parser = parse_start_at)]
    pub start_at: Option<std::time::SystemTime>,
    /// Engine configuration. SQLite: PRAGMA lines run on every connection after the defaults
    /// journal_mode=WAL, synchronous=NORMAL (e.g. `journal_mode=DELETE`). --server postgres:
    /// postgresql.conf lines. --server mysql or mariadb: my.cnf [mysqld] lines.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The workload suite: one of the suites listed at the end (default: the first). Its
    /// options have their own heading; `rqps run --suite NAME --help` shows them.
    #[arg(long, value_name = "NAME")]
    pub suite: Option<String>,
    /// A named set of parameters: quick (default, ~3 min on SQLite), ci (small and short: about
    /// a minute for sysbench, seconds for most suites), and, where a suite has them, the
    /// reference's sizes (small-server and large-server; dbbench: server). Options below override it; `rqps tests --suite NAME --profile P` lists what
    /// a profile runs.
    #[arg(long, default_value = "quick", value_name = "NAME")]
    pub profile: String,
    /// Run the whole suite this many times (each repeat is stored as its own run of the
    /// same name; reports pool them and test whether differences are significant).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = crate::suite::bounds::repeats)]
    pub repeats: usize,
    /// Store this run as repeat N of its name (set by matrix files, which interleave repeats).
    #[arg(long, hide = true, value_name = "N")]
    pub repeat_number: Option<usize>,
    /// MySQL/MariaDB: storage engine of the tables rqps creates (default InnoDB), e.g. RocksDB.
    /// Options owned by engine kinds (e.g. `mysql_storage_engine`), from their
    /// own flags or a matrix target.
    #[arg(skip)]
    pub engine_options: toml::Table,
    /// Seed of the random generators (default: from the clock).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Name of this target in results and reports (default: engine-version). Runs of one
    /// name are pooled as repeats, so a run whose engine version, fairness settings,
    /// --config or parameters differ from the name's stored runs is refused: give it its
    /// own name.
    #[arg(long)]
    pub name: Option<String>,
    /// Store the run under --name even though the name's stored runs are another
    /// experiment (engine version, fairness settings, --config or parameters); reports
    /// then flag the name's repeats as differing.
    #[arg(long)]
    pub allow_mismatch: bool,
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
    /// Fail a statement (and its test) when the server sends nothing for this many seconds,
    /// 1 to 86400 (default 600; raise it when index builds on large tables take longer).
    #[arg(long, value_name = "SECS")]
    pub stmt_timeout: Option<crate::suite::bounds::Secs>,
    /// Drop the connection when the server stops for this many seconds in the middle of a
    /// reply message, 1 to 86400 (default 10): servers send each message whole, so silence
    /// there is a fault (a garbled length, a stuck server), not a long query.
    #[arg(long, value_name = "SECS")]
    pub message_timeout: Option<crate::suite::bounds::Secs>,
    /// Warn when other processes use more than this percent of all CPUs before a test.
    #[arg(long, default_value_t = crate::harness::probe::BUSY_THRESHOLD_PCT, value_name = "PCT")]
    pub busy_threshold: f64,
    /// Record a CPU profile of each test's measured interval with `perf record -e cpu-clock
    /// -g` (1 sample per ms of CPU): of the server's processes (or, for SQLite and RocksDB,
    /// of rqps itself) and of rqps's client, stored with the result. `rqps report --explain
    /// TEST` shows where the CPU per operation went. Without a usable perf the run goes on.
    #[arg(long)]
    pub cpu_profile: bool,
    /// No progress bars or per-test lines; only the final table.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `--part I/N`: the I-th of N client parts.
pub(crate) fn parse_part(s: &str) -> Result<crate::suite::part::Part, crate::error::Error> {
    s.parse()
}

/// A `--start-at` that is neither an RFC 3339 time nor Unix seconds.
#[derive(Debug, thiserror::Error)]
#[error("{0}: give an RFC 3339 UTC time such as 2026-11-23T10:00:00Z, or Unix seconds")]
pub(crate) struct BadStartAt(#[source] humantime::TimestampError);

/// `--start-at`: RFC 3339 (UTC, `Z`) or Unix seconds.
fn parse_start_at(s: &str) -> Result<std::time::SystemTime, BadStartAt> {
    if let Ok(secs) = s.trim().parse::<u64>() {
        return Ok(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs));
    }
    humantime::parse_rfc3339(s.trim()).map_err(BadStartAt)
}
