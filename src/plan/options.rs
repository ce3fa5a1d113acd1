//! The options of a run that `rqps run` and matrix files share: one struct,
//! [`RunOptions`], read by clap (flattened into `rqps run`'s arguments) and
//! by serde (a matrix's `[defaults]` and each `[[target]]`, the target's own
//! keys over the defaults), and written back as `rqps run` arguments
//! ([`RunOptions::args`]) for the stored command line and a matrix's child
//! runs. A new option that a matrix can also set is a field here and its
//! use where the run reads it.
//!
//! [`EngineArgs`] is the engine the run names (`--target` or `--server`, a
//! matrix target's `url` or `engine`), with the options engine kinds own.
//! [`Output`] holds what only a single `rqps run` says about where and how
//! its runs are stored (a matrix names the target and numbers the repeat).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::engine::install::EngineSpec;
use crate::engine::target::Target;
use crate::suite::bounds::{Percent, Timeout};
use crate::util::cpus::CpuSet;

/// Which engine the user named (`rqps run` options, matrix target fields):
/// a `--target` or a `--server`, and the options engine kinds own.
#[derive(Clone, Debug, Default)]
pub struct EngineArgs {
    /// `--target`, parsed once when the run's spec is built.
    pub target: Option<Target>,
    /// `--server KIND[@VERSION]`.
    pub server: Option<EngineSpec>,
    /// Options owned by engine kinds, by key (`mysql_storage_engine`); each
    /// kind checks its own ([`check_options`](crate::engine::registry::EngineKind::check_options)).
    pub options: toml::Table,
}

impl EngineArgs {
    /// As `rqps run` arguments: the engine kinds' options, then `--server`
    /// or `--target` (a URL with its password: the caller redacts or moves it).
    pub fn args(&self) -> Vec<String> {
        let mut a = crate::engine::registry::options_to_args(&self.options).unwrap_or_default();
        match (&self.server, &self.target) {
            (Some(s), _) => a.extend(
                s.server_arg()
                    .map(|s| ["--server".to_string(), s])
                    .into_iter()
                    .flatten(),
            ),
            (None, Some(t)) => a.extend(
                t.arg()
                    .map(|t| ["--target".to_string(), t])
                    .into_iter()
                    .flatten(),
            ),
            (None, None) => {}
        }
        a
    }
}

/// The busy threshold a run has unless told otherwise.
const BUSY_THRESHOLD: Percent = Percent::new_const(crate::harness::probe::BUSY_THRESHOLD_PCT);

/// What `rqps run --flag` and a matrix key of the same name (`_` for `-`)
/// both set. The `display_order`s keep `rqps run --help` in the order its
/// options had before they were gathered here.
#[derive(clap::Args, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct RunOptions {
    /// The password of the --target URL when it has none: the first line of FILE, which only
    /// its owner may read (chmod 600). Without it, $PGPASSWORD or ~/.pgpass ($PGPASSFILE)
    /// (PostgreSQL) and $MYSQL_PWD (MySQL and MariaDB) are read, so a password never has to be
    /// on the command line.
    #[arg(long, value_name = "FILE", requires = "target", display_order = 2)]
    pub password_file: Option<PathBuf>,
    /// Install prefix of the --server engine (e.g. /usr/lib/postgresql/15, a MariaDB tree
    /// with bin/ and scripts/, or an unpacked Oracle MySQL tree, 5.5 to 9.x). Default: PATH,
    /// then the usual Debian locations.
    #[arg(long, value_name = "DIR", requires = "server", display_order = 3)]
    pub basedir: Option<PathBuf>,
    /// Keep the --server data directory after the run (its path is printed).
    #[arg(long, requires = "server", display_order = 4)]
    pub keep: bool,
    /// Pin the throwaway --server to these CPUs (a Linux CPU list: 0-17, 0,2,4-7): the
    /// server's CPU budget of a scalability study. Stored with the run's parameters.
    #[arg(long, value_name = "LIST", requires = "server", display_order = 5, value_parser = CpuSet::parse_on_this_machine)]
    pub server_cpus: Option<CpuSet>,
    /// Pin rqps's client threads to these CPUs (a CPU list, as --server-cpus), so the
    /// client does not take the server's CPUs. Stored with the run's parameters.
    #[arg(long, value_name = "LIST", display_order = 6, value_parser = CpuSet::parse_on_this_machine)]
    pub client_cpus: Option<CpuSet>,
    /// Client threads that drive the connections (pgbench's --jobs): each runs its share of
    /// the connections on one event loop, waiting for all their replies at once. Default: as
    /// many as the client's CPUs (--client-cpus, else the machine's); at least one per
    /// connection, or 0, gives each connection a thread of its own. Embedded engines (SQLite,
    /// RocksDB) always run a thread per connection. The number used is stored with the run.
    #[arg(long, value_name = "N", display_order = 6)]
    pub client_threads: Option<crate::suite::bounds::Threads>,
    /// Engine configuration. SQLite: PRAGMA lines run on every connection after the defaults
    /// journal_mode=WAL, synchronous=NORMAL (e.g. `journal_mode=DELETE`). --server postgres:
    /// postgresql.conf lines. --server mysql or mariadb: my.cnf [mysqld] lines.
    #[arg(long, value_name = "FILE", display_order = 9)]
    pub config: Option<PathBuf>,
    /// Seed of the random generators (default: from the clock).
    #[arg(long, display_order = 14)]
    pub seed: Option<u64>,
    /// Block device (its /proc/diskstats name, e.g. nvme0n1) whose IO is charged to each
    /// test. Default: the device that holds the database's data directory.
    #[arg(long, value_name = "NAME", display_order = 18)]
    pub device: Option<String>,
    /// Fail a statement (and its test) when the server sends nothing for this many seconds,
    /// 1 to 86400 (default 600; raise it when index builds on large tables take longer).
    #[arg(long, value_name = "SECS", display_order = 20)]
    pub stmt_timeout: Option<Timeout>,
    /// Drop the connection when the server stops for this many seconds in the middle of a
    /// reply message, 1 to 86400 (default 10): servers send each message whole, so silence
    /// there is a fault (a garbled length, a stuck server), not a long query.
    #[arg(long, value_name = "SECS", display_order = 21)]
    pub message_timeout: Option<Timeout>,
    /// Warn when other processes use more than this percent of all CPUs before a test.
    #[arg(long, default_value_t = BUSY_THRESHOLD, value_name = "PCT", display_order = 22)]
    pub busy_threshold: Percent,
    /// Record a CPU profile of each test's measured interval with `perf record -e cpu-clock
    /// -g` (1 sample per ms of CPU): of the server's processes (or, for SQLite and RocksDB,
    /// of rqps itself) and of rqps's client, stored with the result. `rqps report --explain
    /// TEST` shows where the CPU per operation went. Without a usable perf the run goes on.
    #[arg(long, display_order = 23)]
    pub cpu_profile: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            password_file: None,
            basedir: None,
            keep: false,
            server_cpus: None,
            client_cpus: None,
            client_threads: None,
            config: None,
            seed: None,
            device: None,
            stmt_timeout: None,
            message_timeout: None,
            busy_threshold: BUSY_THRESHOLD,
            cpu_profile: false,
        }
    }
}

/// A run option that a matrix gives a bad value.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.message())]
pub struct BadOption(#[source] toml::de::Error);

impl RunOptions {
    /// The keys a matrix table may give (the field names).
    pub fn keys() -> Vec<String> {
        <RunOptions as clap::Args>::augment_args(clap::Command::new("run"))
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .collect()
    }

    /// Checks one matrix key on its own, so that its error names its line.
    pub fn check_one(key: &str, value: &toml::Value) -> Result<(), BadOption> {
        let one = toml::Table::from_iter([(key.to_string(), value.clone())]);
        RunOptions::from_table(one).map(drop)
    }

    /// The options a matrix table gives; the others keep their defaults.
    pub fn from_table(t: toml::Table) -> Result<RunOptions, BadOption> {
        RunOptions::deserialize(t).map_err(BadOption)
    }

    /// Paths in a matrix file are relative to its folder.
    pub fn relative_to(mut self, dir: &Path) -> RunOptions {
        for p in [&mut self.config, &mut self.password_file, &mut self.basedir]
            .into_iter()
            .flatten()
        {
            *p = dir.join(&*p);
        }
        self
    }

    /// `--stmt-timeout` and `--message-timeout`, else the engines' defaults.
    pub fn timeouts(&self) -> crate::engine::Timeouts {
        let d = crate::engine::Timeouts::default();
        crate::engine::Timeouts {
            statement: self.stmt_timeout.map_or(d.statement, Timeout::get),
            message: self.message_timeout.map_or(d.message, Timeout::get),
        }
    }

    /// The options as `rqps run` arguments, in `--help`'s order: only those
    /// that differ from the defaults.
    pub fn args(&self) -> Vec<String> {
        crate::cmdline::args::args_of(self)
    }
}

pub use crate::cmdline::args::cli_value;

/// Where and how a run is stored and shown: what one `rqps run` sets and a
/// matrix sets for each step (the target's name, the repeat's number).
#[derive(clap::Args, Serialize, Clone, Debug, PartialEq)]
pub struct Output {
    /// Run the I-th of N equal shares of the load (sysbench: of every --threads count), as one
    /// of N client processes or hosts driving one server; `rqps merge` adds the parts' results
    /// up. Needs --skip-prepare: load the tables once before the parts start.
    #[arg(long, value_name = "I/N", display_order = 7, value_parser = parse_part)]
    #[serde(serialize_with = "as_text")]
    pub part: Option<crate::suite::part::ClientPart>,
    /// Begin the first test at this wall-clock time (RFC 3339, e.g. 2026-11-23T10:00:00Z, or
    /// Unix seconds), so that parts on several hosts start together. A part that begins more
    /// than 1 s late is flagged (stored with the run, listed by `rqps merge` and reports).
    #[arg(long, value_name = "TIME", display_order = 8, value_parser = parse_start_at)]
    #[serde(serialize_with = "rfc3339_millis")]
    pub start_at: Option<SystemTime>,
    /// Run the whole suite this many times (each repeat is stored as its own run of the
    /// same name; reports pool them and test whether differences are significant).
    #[arg(long, default_value_t = 1, value_name = "N", display_order = 12, value_parser = crate::suite::bounds::repeats)]
    pub repeats: usize,
    /// Store this run as repeat N of its name (set by matrix files, which interleave repeats).
    #[arg(long, hide = true, value_name = "N", display_order = 13)]
    pub repeat_number: Option<usize>,
    /// Name of this target in results and reports (default: engine-version). Runs of one
    /// name are pooled as repeats, so a run whose engine version, fairness settings,
    /// --config or parameters differ from the name's stored runs is refused: give it its
    /// own name.
    #[arg(long, display_order = 15)]
    pub name: Option<String>,
    /// Store the run under --name even though the name's stored runs are another
    /// experiment (engine version, fairness settings, --config or parameters); reports
    /// then flag the name's repeats as differing.
    // 16, as --results: clap orders equal places by name.
    #[arg(long, display_order = 16)]
    pub allow_mismatch: bool,
    /// Results directory.
    #[arg(
        long,
        default_value = crate::cmdline::RESULTS_DIR,
        value_name = "DIR",
        display_order = 16
    )]
    pub results: PathBuf,
    /// Also write the whole run (context and every test) as one JSON document.
    #[arg(long, value_name = "FILE", display_order = 17)]
    pub json: Option<PathBuf>,
    /// Pid of the server process, for a --target server on this host that rqps cannot
    /// find from its listening port.
    #[arg(long, value_name = "PID", display_order = 19)]
    pub server_pid: Option<u32>,
    /// No progress bars or per-test lines; only the final table.
    #[arg(long, short, display_order = 24)]
    pub quiet: bool,
}

/// What `rqps run` without output options has (clap's defaults above; a
/// test in `cli::run` holds them equal).
impl Default for Output {
    fn default() -> Self {
        Output {
            part: None,
            start_at: None,
            repeats: 1,
            repeat_number: None,
            name: None,
            allow_mismatch: false,
            results: PathBuf::from(crate::cmdline::RESULTS_DIR),
            json: None,
            server_pid: None,
            quiet: false,
        }
    }
}

impl Output {
    /// One repeat of a matrix step: its target's name, in `results`.
    pub fn step(name: &str, repeat: usize, results: &Path) -> Output {
        Output {
            repeat_number: Some(repeat),
            name: Some(name.to_string()),
            results: results.to_path_buf(),
            ..Output::default()
        }
    }

    /// As `rqps run` arguments: those that differ from the defaults.
    pub fn args(&self) -> Vec<String> {
        crate::cmdline::args::args_of(self)
    }
}

/// An optional value stored as the text its option reads (`--part 2/4`).
fn as_text<T: std::fmt::Display, S: serde::Serializer>(
    v: &Option<T>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_some(&v.to_string()),
        None => s.serialize_none(),
    }
}

/// `--start-at` as RFC 3339 with milliseconds, which [`parse_start_at`] reads.
fn rfc3339_millis<S: serde::Serializer>(v: &Option<SystemTime>, s: S) -> Result<S::Ok, S::Error> {
    as_text(&v.map(humantime::format_rfc3339_millis), s)
}

/// `--part I/N`: the I-th of N client parts.
pub fn parse_part(s: &str) -> Result<crate::suite::part::ClientPart, crate::error::Error> {
    s.parse()
}

/// A `--start-at` that is neither an RFC 3339 time nor Unix seconds.
#[derive(Debug, thiserror::Error)]
#[error("{0}: give an RFC 3339 UTC time such as 2026-11-23T10:00:00Z, or Unix seconds")]
pub struct BadStartAt(#[source] humantime::TimestampError);

/// `--start-at`: RFC 3339 (UTC, `Z`) or Unix seconds.
fn parse_start_at(s: &str) -> Result<SystemTime, BadStartAt> {
    if let Ok(secs) = s.trim().parse::<u64>() {
        return Ok(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs));
    }
    humantime::parse_rfc3339(s.trim()).map_err(BadStartAt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_become_the_arguments_that_give_them_back() {
        let o = RunOptions {
            config: Some("c.cnf".into()),
            stmt_timeout: Some(Timeout::new(30.0).unwrap()),
            server_cpus: Some(CpuSet::parse_syntax("0").unwrap()),
            cpu_profile: true,
            ..RunOptions::default()
        };
        let args = o.args();
        assert_eq!(
            args,
            [
                "--server-cpus",
                "0",
                "--config",
                "c.cnf",
                "--stmt-timeout",
                "30",
                "--cpu-profile"
            ]
        );
        // Defaults are left out.
        assert!(RunOptions::default().args().is_empty());
        // What the arguments say is what a matrix table says.
        let t: toml::Table = toml::from_str(
            "config = \"c.cnf\"\nstmt_timeout = 30\nserver_cpus = \"0\"\ncpu_profile = true\n",
        )
        .unwrap();
        assert_eq!(RunOptions::from_table(t).unwrap(), o);
    }

    #[test]
    fn a_bad_value_says_why() {
        for (key, v, says) in [
            ("stmt_timeout", toml::Value::Integer(0), "at least 1 second"),
            ("busy_threshold", toml::Value::Float(101.0), "from 0 to 100"),
            ("client_cpus", toml::Value::Integer(1), "a CPU list such as"),
            ("client_threads", toml::Value::Integer(5000), "4096"),
            ("nope", toml::Value::Integer(1), "nope"),
        ] {
            let e = RunOptions::check_one(key, &v).unwrap_err().to_string();
            assert!(e.contains(says), "{key}: {e}");
        }
        assert!(RunOptions::keys().contains(&"password_file".to_string()));
    }
}
