//! The options of `rqps run` ([`RunArgs`]): the engine, the suite and its
//! profile, and flattened in, the options a matrix also sets
//! ([`RunOptions`](crate::plan::options::RunOptions)) and where the runs are
//! stored ([`Output`](crate::plan::options::Output)). Apart from the CLI's
//! face, so that `run.rs` uses them without importing the module that
//! imports it.

use clap::Args;

#[derive(Args, Clone, Debug)]
pub struct RunArgs {
    /// Where to run: sqlite:PATH, mysql://user@host:port/db (or mariadb://),
    /// postgres://user@host:port/db (or postgresql://), or rocksdb:PATH?version=V (a RocksDB
    /// database directory, opened with that installed release's library; without ?version,
    /// the system's librocksdb). Default: a new SQLite database in a temporary directory,
    /// removed afterwards. The password: --password-file, $PGPASSWORD, ~/.pgpass or
    /// $MYSQL_PWD; one in the URL works but shows in the process list for the whole run,
    /// and rqps warns about it (see --allow-password-in-url).
    #[arg(long, value_name = "TARGET", display_order = 0)]
    pub target: Option<String>,
    /// Take a password inside the --target URL without the warning that any local user
    /// can read it in the process list (ps) while rqps runs.
    #[arg(long, requires = "target", display_order = 0)]
    pub allow_password_in_url: bool,
    /// Start a throwaway engine instead of using --target: mysql (Oracle MySQL), mariadb,
    /// postgres or rocksdb, each optionally @VERSION from `rqps engine install`
    /// (mysql@8.0.33, postgres@16.15, rocksdb@8.10.0). For a
    /// server rqps creates a fresh data directory in a temp dir, writes --config into it,
    /// starts the server on a free loopback port, runs the suite, stops it and removes the data
    /// directory (unless --keep); rocksdb opens a fresh database with that release's library.
    #[arg(
        long,
        value_name = "KIND[@VERSION]",
        conflicts_with = "target",
        display_order = 1
    )]
    pub server: Option<String>,
    /// The workload suite: one of the suites listed at the end (default: the first). Its
    /// options have their own heading; `rqps run --suite NAME --help` shows them.
    #[arg(long, value_name = "NAME", display_order = 10)]
    pub suite: Option<String>,
    /// A named set of parameters: quick (default, ~3 min on SQLite), ci (small and short: about
    /// a minute for sysbench, seconds for most suites), and, where a suite has them, the
    /// reference's sizes (small-server and large-server; dbbench: server). Options below override it; `rqps tests --suite NAME --profile P` lists what
    /// a profile runs.
    #[arg(long, default_value = "quick", value_name = "NAME", display_order = 11)]
    pub profile: String,
    /// The options a matrix also sets.
    #[command(flatten)]
    pub options: crate::plan::options::RunOptions,
    /// Where and how the runs are stored and shown.
    #[command(flatten)]
    pub output: crate::plan::options::Output,
    /// Options owned by engine kinds (e.g. `mysql_storage_engine`), from their
    /// own flags or a matrix target.
    #[arg(skip)]
    pub engine_options: toml::Table,
}
