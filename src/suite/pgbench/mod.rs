//! pgbench scripts on every SQL engine: PostgreSQL's own benchmark, its
//! script format and its options, with rqps's results around them.
//!
//! The contract: a run is a set of scripts, each with a weight (pgbench's
//! `-f FILE@W` and `-b NAME@W`); every client (one connection, one thread)
//! draws a script per transaction by weight and runs its commands
//! ([`client`]). The built-in scripts (`tpcb-like`, `simple-update`,
//! `select-only`) are rendered per dialect ([`builtin`]); a user's script
//! runs as written. The tables are made as `pgbench -i` makes them
//! ([`init`]), and after a run whose only writing script is the built-in
//! tpcb-like, the balances must add up ([`check`]): a violation fails the
//! run (exit 1). The script language itself is [`script`] and [`expr`];
//! its shell commands, run only with `--allow-shell`, are [`shell`].
//!
//! Results: one `pgbench` test per client count (TPS over all scripts,
//! latency, the per-second series and the hardware cost per transaction
//! from the harness; failures, retries, schedule lag and skipped
//! transactions in its detail), and one test per script (its TPS and its
//! per-statement latency, as `pgbench -r` prints it) that reports set
//! against the base.

use crate::error::usage;

pub mod builtin;
pub mod check;
pub mod client;
pub mod compat;
pub mod expr;
pub mod init;
pub mod params;
pub mod report;
pub mod script;
pub mod shell;
pub mod stats;
pub mod txlog;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::engine::DbError;
use crate::error::Error;
use crate::harness::runner::stop_requested;
use crate::harness::{Harness, MixMember, Per, RunEnd, TestFailure, TimedStep, Timing, Verdict};
use crate::results::{Status, TestResult};
use crate::suite::api::{PeerFlag, RunBasics, Workload, set, set_all};
use crate::suite::bounds::{Rows, Secs, Threads};

use builtin::Builtin;
use client::{Client, Compiled};
pub use params::{KEY, Params, Protocol, ScriptSpec};
use stats::{Detail, ScriptDetail};

/// The pgbench suite.
pub struct Pgbench;

/// What a user may set (`rqps run --suite pgbench --flag`, or the matrix
/// key of the same name with `_` for `-`). pgbench's own names, long form.
#[derive(clap::Args, Serialize, Deserialize, Default, Debug, Clone)]
#[serde(deny_unknown_fields)]
#[command(next_help_heading = "pgbench options (--suite pgbench)")]
pub struct Options {
    /// A pgbench script file, with an optional weight (pgbench's -f FILE@W);
    /// repeat it (or give a comma-separated list) for a mix. Each
    /// transaction runs one script, drawn by weight.
    #[arg(long, value_name = "FILE[@W]", alias = "file", value_delimiter = ',')]
    #[serde(default, deserialize_with = "crate::suite::api::one_or_many")]
    pub script: Option<Vec<String>>,
    /// A built-in script: tpcb-like (the default when no script is given),
    /// simple-update or select-only, with an optional weight (-b NAME@W).
    #[arg(long, value_name = "NAME[@W]", value_delimiter = ',',
          add = clap_complete::engine::ArgValueCandidates::new(builtin::candidates))]
    #[serde(default, deserialize_with = "crate::suite::api::one_or_many")]
    pub builtin: Option<Vec<String>>,
    /// Clients: connections (pgbench's --client), driven from
    /// --client-threads threads (pgbench's --jobs). A list runs the test at
    /// each count.
    #[arg(long, alias = "client", value_delimiter = ',', value_name = "N,M,..")]
    #[serde(default, deserialize_with = "crate::suite::api::one_or_many")]
    pub clients: Option<Vec<Threads>>,
    /// Seconds each test is measured (pgbench's --time).
    #[arg(long, value_name = "S", conflicts_with = "transactions")]
    pub time: Option<Secs>,
    /// Transactions each client runs instead of --time (pgbench's
    /// --transactions, per client; skipped ones count).
    #[arg(long, value_name = "N")]
    pub transactions: Option<Rows>,
    /// Seconds of warm-up before each measurement, excluded from its
    /// statistics (pgbench has none: 0 by default).
    #[arg(long, value_name = "S")]
    pub warmup_secs: Option<Secs>,
    /// Scale factor: 100,000 accounts, 10 tellers and 1 branch per unit
    /// (initialisation and the built-ins' ranges; :scale in scripts).
    #[arg(long, value_name = "N")]
    pub scale: Option<u32>,
    /// simple (variables written into the SQL text), extended (bound as
    /// parameters, the statement parsed on every execution where the
    /// engine's protocol can: PostgreSQL) or prepared (bound, each
    /// statement prepared once per connection). Default: simple, as pgbench.
    #[arg(long, value_name = "MODE")]
    pub protocol: Option<String>,
    /// A variable for every script: NAME=VALUE (pgbench's -D); repeat it.
    #[arg(long, value_name = "NAME=VALUE")]
    #[serde(default, deserialize_with = "crate::suite::api::one_or_many")]
    pub define: Option<Vec<String>>,
    /// Transactions per second over all clients, on a Poisson schedule
    /// (pgbench's --rate); the lag behind the schedule is reported.
    #[arg(long, value_name = "TPS")]
    pub rate: Option<f64>,
    /// Milliseconds: a transaction that took longer is counted late; with
    /// --rate, one already that far behind its schedule is skipped (as
    /// pgbench's --latency-limit).
    #[arg(long, value_name = "MS")]
    pub latency_limit: Option<f64>,
    /// Tries of a transaction that fails with a serialization failure or a
    /// deadlock, the first included (as pgbench 15+; default 1: no retry).
    #[arg(long, value_name = "N")]
    pub max_tries: Option<u32>,
    /// A script run once by one client before the tests: a user's own
    /// schema and data (same language as --script; protocol simple).
    #[arg(long, value_name = "FILE")]
    pub init_script: Option<String>,
    /// Use the tables already in the target: no initialisation.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub skip_init: Option<bool>,
    /// Let the scripts' \shell and \setshell run their shell commands
    /// (sh -c, as your user, without rqps's password variables in their
    /// environment). Without it, a script holding one is refused.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub allow_shell: Option<bool>,
    /// Write pgbench's transaction log: a line per transaction (or per
    /// --aggregate-interval) in pgbench's format, in files PREFIX.PID and
    /// PREFIX.PID.T per client thread, in the working directory.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub log: Option<bool>,
    /// The log files' name before .PID (default pgbench_log); a path puts
    /// them in another directory. Needs --log.
    #[arg(long, value_name = "PREFIX")]
    pub log_prefix: Option<String>,
    /// The fraction of transactions the log keeps, above 0 and at most 1
    /// (0.05: one in twenty, drawn at random). Needs --log.
    #[arg(long, value_name = "RATE")]
    pub sampling_rate: Option<f64>,
    /// A log line per interval of this many seconds (count, latency sums,
    /// min, max, lag, skipped, retries, failures) instead of one per
    /// transaction. Needs --log; --time a multiple of it.
    #[arg(long, value_name = "S")]
    pub aggregate_interval: Option<u32>,
    /// Name a failed transaction's class in the log (serialization,
    /// deadlock) instead of "failed". rqps's own results always count
    /// failures by class.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub failures_detailed: Option<bool>,
}

/// The scale of pgbench's tables in the target, as pgbench reads it for
/// its built-in scripts: `count(*)` of `pgbench_branches` (one branch per
/// unit of scale). Tables that cannot be read, or hold no branch: a usage
/// error that says to make them.
fn tables_scale(db: &dyn crate::engine::SqlAccess) -> Result<u32, Error> {
    let read = db
        .connect()
        .and_then(|mut c| c.query_scalar("SELECT count(*) FROM pgbench_branches"));
    let n = match read {
        Ok(v) => v.and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0),
        Err(e) => {
            return Err(usage(format!(
                "--skip-init: cannot read the tables' scale (SELECT count(*) FROM pgbench_branches: {e}); make pgbench's tables first: run without --skip-init (or pgbench -i)"
            )));
        }
    };
    match u32::try_from(n) {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(usage(format!(
            "--skip-init: pgbench_branches holds {n} rows, so the tables have no scale; make them again: run without --skip-init (or pgbench -i)"
        ))),
    }
}

/// (profile, scale, clients, secs)
const PROFILES: [(&str, u32, &[usize], f64); 4] = [
    ("quick", 2, &[1, 4], 30.0),
    ("ci", 1, &[2], 1.0),
    ("small-server", 100, &[1, 8, 32], 300.0),
    ("large-server", 1000, &[1, 16, 64, 128], 600.0),
];

/// `--define NAME=VALUE`s as variables, each name checked.
fn defines(given: Vec<String>) -> Result<BTreeMap<String, String>, Error> {
    let mut defines = BTreeMap::new();
    for d in given {
        let Some((name, value)) = d.split_once('=') else {
            return Err(usage(format!(
                "--define {d}: expected NAME=VALUE, e.g. --define nbranches=10"
            )));
        };
        let name = name.trim();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii())
        {
            return Err(usage(format!(
                "--define {d}: '{name}' is not a variable name (letters, digits and _)"
            )));
        }
        defines.insert(name.to_string(), value.to_string());
    }
    Ok(defines)
}

/// The `--log` options checked as pgbench checks them, with rqps's remedy.
fn log_spec(o: &Options, p: &Params) -> Result<Option<params::LogSpec>, Error> {
    if !o.log.unwrap_or(false) {
        for (given, name) in [
            (o.log_prefix.is_some(), "--log-prefix"),
            (o.sampling_rate.is_some(), "--sampling-rate"),
            (o.aggregate_interval.is_some(), "--aggregate-interval"),
        ] {
            if given {
                return Err(usage(format!(
                    "{name} needs --log (it sets how the transaction log is written)"
                )));
            }
        }
        return Ok(None);
    }
    if let Some(r) = o.sampling_rate
        && !(r > 0.0 && r <= 1.0)
    {
        return Err(usage(format!(
            "--sampling-rate must be above 0 and at most 1, got {r} (0.05 logs one transaction in twenty)"
        )));
    }
    if let Some(a) = o.aggregate_interval {
        if a == 0 || a > i32::MAX as u32 {
            return Err(usage(format!(
                "--aggregate-interval must be whole seconds from 1 to {}, got {a}",
                i32::MAX
            )));
        }
        if o.sampling_rate.is_some() {
            return Err(usage(
                "give --sampling-rate or --aggregate-interval, not both (as pgbench)",
            ));
        }
        if p.transactions.is_none() {
            let secs = p.secs;
            if f64::from(a) > secs {
                return Err(usage(format!(
                    "--aggregate-interval {a} is longer than the test (--time {secs}): give a shorter interval"
                )));
            }
            if secs.fract() != 0.0 || !(secs as u64).is_multiple_of(u64::from(a)) {
                return Err(usage(format!(
                    "--time {secs} must be a multiple of --aggregate-interval {a} (as pgbench)"
                )));
            }
        }
    }
    let prefix = o.log_prefix.clone().unwrap_or_else(|| "pgbench_log".into());
    let file = std::path::Path::new(&prefix);
    if prefix.is_empty() || prefix.ends_with('/') || file.file_name().is_none() {
        return Err(usage(format!(
            "--log-prefix '{prefix}' names no file: give a name, e.g. --log-prefix run1 or --log-prefix /tmp/run1"
        )));
    }
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(usage(format!(
            "--log-prefix {prefix}: {} is not a directory; create it or give another prefix",
            dir.display()
        )));
    }
    // A FIFO or a device where a log file goes: refused now (opening one
    // for writing waits for a reader, where no stop reaches rqps).
    let threads = p.clients.iter().copied().max().unwrap_or(1);
    if let Some(f) = txlog::not_a_file_among(&prefix, std::process::id(), threads) {
        return Err(usage(format!(
            "--log-prefix {prefix}: {f} is not a regular file (a FIFO, a device or a socket): remove it or give another prefix"
        )));
    }
    Ok(Some(params::LogSpec {
        prefix,
        sampling_rate: o.sampling_rate,
        aggregate_secs: o.aggregate_interval,
        failures_detailed: o.failures_detailed.unwrap_or(false),
    }))
}

/// The `--builtin` scripts, then the `--script` files (read and checked
/// now, so that a mistake is a usage error naming file:line), each with its
/// weight and a unique name.
fn scripts(
    builtins: Vec<String>,
    files: Vec<String>,
    protocol: Protocol,
    allow_shell: bool,
) -> Result<Vec<ScriptSpec>, Error> {
    let mut scripts: Vec<ScriptSpec> = Vec::new();
    for spec in builtins {
        let (name, weight) = split_weight(&spec, "builtin")?;
        let b = Builtin::find(&name)?;
        let name = unique_name(&scripts, b.name().to_string());
        scripts.push(ScriptSpec {
            name,
            weight,
            builtin: Some(b),
            path: None,
            text: None,
        });
    }
    for spec in files {
        let (path, weight) = split_weight(&spec, "script")?;
        let text = read_script_file(&path, "script")?;
        // Checked now, so a mistake is a usage error naming file:line.
        client::check_script(&path, &text, protocol, allow_shell).map_err(usage)?;
        let base = std::path::Path::new(&path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.clone());
        let name = unique_name(&scripts, base);
        scripts.push(ScriptSpec {
            name,
            weight,
            builtin: None,
            path: Some(path),
            text: Some(text),
        });
    }
    Ok(scripts)
}

/// `NAME@WEIGHT` split; the weight 1 when absent.
fn split_weight(spec: &str, what: &str) -> Result<(String, u32), Error> {
    match spec.rsplit_once('@') {
        Some((name, w)) if !w.contains('/') => {
            let weight: u32 = w.trim().parse().map_err(|_| {
                usage(format!(
                    "--{what} {spec}: the weight after @ must be a whole number from 0 to {}, e.g. {name}@5",
                    u32::MAX
                ))
            })?;
            Ok((name.to_string(), weight))
        }
        _ => Ok((spec.to_string(), 1)),
    }
}

/// Names each script uniquely (a file given twice gets `#2`).
fn unique_name(taken: &[ScriptSpec], name: String) -> String {
    if !taken.iter().any(|s| s.name == name) {
        return name;
    }
    (2..)
        .map(|i| format!("{name}#{i}"))
        .find(|n| !taken.iter().any(|s| &s.name == n))
        .unwrap_or(name)
}

/// Reads a script file: a regular file of at most [`params::MAX_SCRIPT_BYTES`],
/// never through another user's link in a sticky directory.
fn read_script_file(path: &str, option: &str) -> Result<String, Error> {
    crate::util::read_input(std::path::Path::new(path), params::MAX_SCRIPT_BYTES).map_err(|e| {
        usage(format!(
            "--{option} {path}: cannot read it ({e}); give the path of a pgbench script"
        ))
    })
}

/// pgbench's flags that rqps spells otherwise, and what to write instead.
const PGBENCH_FLAGS: &[PeerFlag] = &[
    flag("-c", true, "--clients {}"),
    flag("-T", true, "--time {}"),
    flag("-t", true, "--transactions {}"),
    flag("-f", true, "--script {}"),
    flag("-b", true, "--builtin {}"),
    flag("-M", true, "--protocol {}"),
    flag("-D", true, "--define {}"),
    flag("-R", true, "--rate {}"),
    flag("-L", true, "--latency-limit {}"),
    flag("-s", true, "--scale {}"),
    flag("-S", false, "--builtin select-only"),
    flag("-N", false, "--builtin simple-update"),
    flag("-n", false, "--skip-init"),
    flag("--no-vacuum", false, "--skip-init"),
    flag("--random-seed", true, "--seed {}"),
    flag("-j", true, "--client-threads {}"),
    flag("--jobs", true, "--client-threads {}"),
    flag(
        "-P",
        true,
        "rqps has no --progress: it shows a progress line while a test runs and stores each test's per-second figures (per_second) with its results",
    ),
    flag(
        "--progress",
        true,
        "rqps has no --progress: it shows a progress line while a test runs and stores each test's per-second figures (per_second) with its results",
    ),
    flag(
        "-r",
        false,
        "rqps always keeps each command's latency (pgbench -r): drop the flag",
    ),
    flag(
        "--report-per-command",
        false,
        "rqps always keeps each command's latency (pgbench -r): drop the flag",
    ),
    flag(
        "-i",
        false,
        "rqps makes the tables before the tests unless --skip-init (--scale N sets their size)",
    ),
    flag(
        "--initialize",
        false,
        "rqps makes the tables before the tests unless --skip-init (--scale N sets their size)",
    ),
    flag(
        "-C",
        false,
        "rqps has no --connect: each client keeps its connection for the test",
    ),
    flag("-l", false, "--log"),
];

const fn flag(flag: &'static str, value: bool, instead: &'static str) -> PeerFlag {
    PeerFlag {
        flag,
        value,
        instead,
    }
}

impl Workload for Pgbench {
    const NAME: &'static str = KEY;
    const PEER: (&'static str, &'static [PeerFlag]) = ("pgbench", PGBENCH_FLAGS);
    const ABOUT: &'static str = "pgbench scripts (built-in tpcb-like, simple-update, select-only, or your own) on every SQL engine";
    type Options = Options;
    const ROLES: &'static [(crate::suite::api::Role, &'static str)] = {
        use crate::suite::api::Role;
        &[
            (Role::Clients, "clients"),
            (Role::MeasuredSecs, "time"),
            (Role::WarmupSecs, "warmup-secs"),
        ]
    };
    type Params = Params;
    const UNITS: crate::harness::Units = crate::harness::Units {
        event: "transaction",
        per_op: "transaction",
    };
    const TREATMENTS: &'static [&'static str] = &["protocol"];
    const WORKLOAD: &'static [&'static str] = &[
        "scripts",
        "scale",
        "secs",
        "transactions",
        "defines",
        "rate",
        "latency_limit_ms",
        "max_tries",
    ];

    fn compat(p: &Params) -> Option<crate::suite::api::CompatPlan> {
        Some(compat::plan(p))
    }

    fn params(common: &RunBasics, mut o: Options) -> Result<Params, Error> {
        // The log's options, checked once the test's length is known.
        let log = Options {
            log: o.log,
            log_prefix: o.log_prefix.take(),
            sampling_rate: o.sampling_rate,
            aggregate_interval: o.aggregate_interval,
            failures_detailed: o.failures_detailed,
            ..Options::default()
        };
        let &(_, scale, clients, secs) = PROFILES
            .iter()
            .find(|p| p.0 == common.profile)
            .unwrap_or(&PROFILES[0]);
        let mut p = Params {
            profile: common.profile.clone(),
            scripts: Vec::new(),
            clients: clients.to_vec(),
            secs,
            transactions: None,
            warmup_secs: 0.0,
            scale,
            protocol: Protocol::Simple,
            defines: BTreeMap::new(),
            rate: None,
            latency_limit_ms: None,
            max_tries: 1,
            init_script: None,
            init_tables: true,
            scale_given: o.scale.is_some(),
            seed: common.seed,
            allow_shell: o.allow_shell.unwrap_or(false),
            log: None,
        };
        set_all(&mut p.clients, o.clients);
        set(&mut p.secs, o.time);
        set(&mut p.warmup_secs, o.warmup_secs);
        set(&mut p.scale, o.scale);
        if let Some(t) = o.transactions {
            let t = u64::from(t);
            if t == 0 {
                return Err(usage("--transactions must be at least 1"));
            }
            if o.time.is_some() {
                return Err(usage("give --time or --transactions, not both"));
            }
            p.transactions = Some(t);
            p.secs = crate::suite::bounds::MAX_SECS;
        }
        if let Some(m) = &o.protocol {
            p.protocol = Protocol::parse(m)?;
        }
        if p.clients.is_empty() || p.clients.contains(&0) {
            return Err(usage(
                "--clients must list client counts of at least 1, e.g. --clients 1,4",
            ));
        }
        if p.secs.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return Err(usage("--time must be more than 0 seconds"));
        }
        if !(1..=1_000_000).contains(&p.scale) {
            return Err(usage(format!(
                "--scale must be between 1 and 1000000, got {}",
                p.scale
            )));
        }
        p.log = log_spec(&log, &p)?;
        p.defines = defines(o.define.unwrap_or_default())?;
        if let Some(r) = o.rate {
            if !(r.is_finite() && r > 0.0 && r <= 1e8) {
                return Err(usage(format!(
                    "--rate must be transactions per second above 0, got {r}"
                )));
            }
            p.rate = Some(r);
        }
        if let Some(l) = o.latency_limit {
            if !(l.is_finite() && l > 0.0) {
                return Err(usage(format!(
                    "--latency-limit must be milliseconds above 0, got {l}"
                )));
            }
            p.latency_limit_ms = Some(l);
        }
        if let Some(m) = o.max_tries {
            if m == 0 {
                return Err(usage(
                    "--max-tries must be at least 1 (1: no retry; rqps has no unlimited tries)",
                ));
            }
            p.max_tries = m;
        }
        p.scripts = scripts(
            o.builtin.unwrap_or_default(),
            o.script.unwrap_or_default(),
            p.protocol,
            p.allow_shell,
        )?;
        if let Some(path) = o.init_script {
            let text = read_script_file(&path, "init-script")?;
            client::check_script(&path, &text, Protocol::Simple, p.allow_shell).map_err(usage)?;
            p.init_script = Some((path, text));
        }
        if p.scripts.len() > params::MAX_SCRIPTS {
            return Err(usage(format!(
                "{} scripts given: at most {} (--script and --builtin together), as pgbench",
                p.scripts.len(),
                params::MAX_SCRIPTS
            )));
        }
        let read: u64 = p
            .scripts
            .iter()
            .filter_map(|s| s.text.as_ref())
            .chain(p.init_script.as_ref().map(|(_, t)| t))
            .map(|t| t.len() as u64)
            .sum();
        if read > params::MAX_SCRIPTS_BYTES {
            return Err(usage(format!(
                "the scripts hold {read} bytes in all: at most {} MiB (a run stores its scripts with its results); give fewer or shorter scripts",
                params::MAX_SCRIPTS_BYTES >> 20
            )));
        }
        if p.scripts.is_empty() {
            p.scripts.push(ScriptSpec {
                name: Builtin::TpcbLike.name().into(),
                weight: 1,
                builtin: Some(Builtin::TpcbLike),
                path: None,
                text: None,
            });
        }
        if p.scripts.iter().map(|s| u64::from(s.weight)).sum::<u64>() == 0 {
            return Err(usage(
                "every script has weight 0: give at least one a weight above 0",
            ));
        }
        let any_builtin = p.scripts.iter().any(|s| s.builtin.is_some());
        p.init_tables = !o.skip_init.unwrap_or(false) && (any_builtin || p.init_script.is_none());
        if o.skip_init.unwrap_or(false) {
            p.init_script = None;
        }
        // Custom scripts alone on tables rqps does not make: `:scale` is 1
        // unless --scale says otherwise, as pgbench reports it.
        if !p.init_tables && !any_builtin && !p.scale_given {
            p.scale = 1;
        }
        Ok(p)
    }

    fn step_count(p: &Params) -> usize {
        usize::from(p.init_tables || p.init_script.is_some())
            + p.clients.len() * (1 + p.scripts.len())
            + usize::from(p.checks_balances())
    }

    /// About 130 bytes per account row (four columns, an 84-byte filler,
    /// the row header) and its key, as PostgreSQL stores them.
    fn load_bytes(p: &Params) -> u64 {
        if p.init_tables {
            init::ACCOUNTS * u64::from(p.scale) * 150
        } else {
            0
        }
    }

    fn need(p: &Params) -> crate::suite::api::Need {
        let clients = p.clients.iter().copied().max().unwrap_or(1);
        // Each client prepares each SQL command of each script at most once.
        let per_client: usize = p
            .scripts
            .iter()
            .map(|s| match (&s.builtin, &s.text) {
                (Some(_), _) => 7,
                (None, Some(t)) => t.matches(';').count() + t.matches("\\gset").count() + 1,
                (None, None) => 1,
            })
            .sum();
        crate::suite::api::Need {
            connections: clients,
            prepared: clients * per_client,
            who: format!("{clients} pgbench clients"),
            fewer: "run fewer --clients".into(),
        }
    }

    fn estimate_secs(p: &Params) -> f64 {
        let per = match p.transactions {
            Some(_) => 0.0,
            None => p.secs,
        };
        p.clients.len() as f64 * (per + p.warmup_secs)
    }

    fn describe(p: &Params) -> String {
        let mut s = String::new();
        if p.init_tables {
            s.push_str(&format!(
                "init: pgbench_branches {}, pgbench_tellers {}, pgbench_accounts {} rows, pgbench_history empty (scale {})\n",
                p.scale,
                10 * u64::from(p.scale),
                100_000 * u64::from(p.scale),
                p.scale
            ));
        }
        if let Some((path, _)) = &p.init_script {
            s.push_str(&format!("init script: {path}\n"));
        }
        let total: u64 = p.scripts.iter().map(|s| u64::from(s.weight)).sum();
        let how = match p.transactions {
            Some(t) => format!("{t} transactions per client"),
            None => format!("{:.1} s measured", p.secs),
        };
        for &c in &p.clients {
            s.push_str(&format!(
                "pgbench c{c}: {c} client(s), {how}, protocol {}{}\n",
                p.protocol.name(),
                p.rate
                    .map(|r| format!(", rate {r} tx/s"))
                    .unwrap_or_default()
            ));
            for sc in &p.scripts {
                s.push_str(&format!(
                    "  script {} weight {} ({:.1} %)\n",
                    sc.name,
                    sc.weight,
                    f64::from(sc.weight) * 100.0 / total.max(1) as f64
                ));
            }
        }
        if let Some(l) = &p.log {
            s.push_str(&format!(
                "transaction log: {}.PID, then {}.PID.1 ... per client thread, in pgbench's {} format{}\n",
                l.prefix,
                l.prefix,
                match l.aggregate_secs {
                    Some(a) => format!("aggregated ({a} s intervals)"),
                    None => "per-transaction".into(),
                },
                l.sampling_rate
                    .map(|r| format!(", sampling rate {r}"))
                    .unwrap_or_default()
            ));
        }
        if p.checks_balances() {
            s.push_str(
                "balances: sum(abalance), sum(bbalance), sum(tbalance) and sum(delta) change alike over the run\n",
            );
        }
        s
    }

    /// A script that pipelines, on an engine that cannot: refused before
    /// anything runs (pgbench fails when the command runs, on a server
    /// without pipelining). Under --skip-init, built-ins on tables whose
    /// scale cannot be read, or differs from a --scale given: refused.
    fn check_target(p: &Params, driver: &dyn crate::engine::Driver) -> Result<(), Error> {
        let Ok(db) = driver.require_sql() else {
            return Ok(());
        };
        if p.scale_from_tables() {
            let scale = tables_scale(db)?;
            if p.scale_given && scale != p.scale {
                return Err(usage(format!(
                    "--scale {} but pgbench_branches holds {scale} row(s): the built-in scripts run at the tables' scale, {scale}, as pgbench reads it; drop --scale, or make the tables at scale {} (without --skip-init)",
                    p.scale, p.scale
                )));
            }
        }
        let pipelines = Compiled::new(p, db.dialect()).is_ok_and(|c| c.pipelines);
        if pipelines && !driver.caps().pipelining {
            return Err(usage(format!(
                "\\startpipeline: {} cannot pipeline statements (pipelines need PostgreSQL's extended query protocol); run the script on PostgreSQL, or remove \\startpipeline, \\syncpipeline and \\endpipeline to run its statements one by one",
                driver.engine()
            )));
        }
        Ok(())
    }

    fn run(p: &Params, h: &mut Harness<'_>) -> Result<RunEnd, Error> {
        // Under --skip-init the built-ins' scale is the tables', as pgbench
        // reads it: a profile's would draw ids past the last row.
        let at_tables_scale;
        let p = match h.driver.require_sql() {
            Ok(db) if p.scale_from_tables() => {
                let scale = tables_scale(db)?;
                if scale != p.scale {
                    h.ui.say(&format!(
                        "pgbench: scale {scale}, the tables' (count(*) of pgbench_branches, as pgbench reads it), not the profile's {}",
                        p.scale
                    ));
                }
                at_tables_scale = Params { scale, ..p.clone() };
                &at_tables_scale
            }
            _ => p,
        };
        let compiled = {
            let db = h.driver.require_sql().map_err(|source| Error::Engine {
                context: "pgbench needs a SQL engine".into(),
                source,
            })?;
            Arc::new(Compiled::new(p, db.dialect()).map_err(usage)?)
        };
        if p.init_tables || p.init_script.is_some() {
            match init::run(p, h) {
                Err(_) if stop_requested() => return Ok(RunEnd::Interrupted),
                r => r?,
            }
        }
        // The balances before the first test: the check is of what the run
        // changed, not of the tables' history.
        let before = if p.checks_balances() {
            let db = h.driver.require_sql().map_err(|source| Error::Engine {
                context: "the balances check could not read the tables".into(),
                source,
            })?;
            let mut conn = db.connect().map_err(|source| Error::Engine {
                context: "the balances check could not connect".into(),
                source,
            })?;
            Some(check::run(conn.as_mut()).map_err(|source| Error::Engine {
                context: "the balances check could not read the tables".into(),
                source,
            })?)
        } else {
            None
        };
        let mut end = RunEnd::Ok;
        for &clients in &p.clients {
            if stop_requested() {
                return Ok(RunEnd::Interrupted);
            }
            let r = run_clients(p, h, clients, &compiled)?;
            store_scripts(h, &r)?;
            if !end.after(&r) {
                return Ok(end);
            }
        }
        if let Some(before) = before.filter(|_| !stop_requested()) {
            let result = TestResult::running(
                KEY,
                "balances".into(),
                "pgbench checks",
                1,
                false,
                "checks/s",
            );
            let r = h.check("balances", result, "check", |run| {
                let could_not = || TestFailure::when("the balances check could not run");
                let db = run.driver.require_sql().map_err(could_not())?;
                let mut conn = db.connect().map_err(could_not())?;
                let after = check::run(conn.as_mut()).map_err(could_not())?;
                let change = check::Change {
                    before: before.clone(),
                    after,
                };
                run.result.set_detail("pgbench_balances", &change);
                Ok(Verdict {
                    checked: 1,
                    violation: change.violation().map(|v| v.to_string()),
                })
            })?;
            end.after(&r);
        }
        Ok(end)
    }

    fn report() -> Option<&'static dyn crate::report::section::Section> {
        Some(&report::SECTION)
    }

    fn line(label: &str, r: &TestResult) -> String {
        if r.status == Status::Ok {
            if let Some(c) = r.detail::<check::Change>("pgbench_balances") {
                return format!(
                    "{label:>28}  sum(abalance), sum(bbalance), sum(tbalance) and sum(delta) each changed by {}{}",
                    c.deltas()[0],
                    if c.before.agree() {
                        ""
                    } else {
                        " (they differed before the run: checked what it changed)"
                    }
                );
            }
            if let Some(d) = r.detail::<ScriptDetail>("pgbench_script") {
                return format!(
                    "{label:>28}  {:>9.1} TPS  weight {}  latency avg {:.3} ms  failed {}  retried {}",
                    r.tps, d.weight, d.latency_ms_avg, d.failed, d.retried
                );
            }
        }
        if r.status != Status::Ok {
            return crate::harness::result_line(label, r);
        }
        let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
        let mut s = format!(
            "{label:>28}  {:>9.1} TPS  latency avg {:.3} ms  p95 {:.3} ms",
            r.tps,
            r.latency_us.avg / 1000.0,
            r.latency_us.p95 / 1000.0
        );
        if let Some(hw) = &r.hw {
            s.push_str(&format!(
                "  cpu per transaction {} us (client {}, server {})",
                opt(hw.cpu_us_per_op),
                opt(hw.client_cpu_us_per_op),
                opt(hw.server_cpu_us_per_op)
            ));
        }
        if let Some(d) = r.detail::<Detail>(KEY) {
            s.push_str(&format!(
                "\n{:>28}  failed {} (serialization {}, deadlock {}, other {})  retried {} ({} retries)",
                "", d.failed, d.failures.serialization, d.failures.deadlock, d.failures.other,
                d.retried, d.retries
            ));
            if let Some(lag) = &d.rate {
                s.push_str(&format!(
                    "\n{:>28}  rate {:.1} tx/s: lag avg {:.3} ms max {:.3} ms  skipped {}  late {}",
                    "", lag.rate, lag.lag_ms_avg, lag.lag_ms_max, lag.skipped, lag.late
                ));
            }
            if let (Some(first), Some(last)) = (d.log_files.first(), d.log_files.last()) {
                s.push_str(&format!(
                    "\n{:>28}  transaction log: {}",
                    "",
                    match d.log_files.len() {
                        1 => first.clone(),
                        2 => format!("{first} and {last}"),
                        n => format!("{first} to {last} ({n} files, one per client thread)"),
                    }
                ));
            }
        }
        s
    }
}

/// One test: `clients` clients running the scripts for the measured time.
fn run_clients(
    p: &Params,
    h: &mut Harness<'_>,
    clients: usize,
    compiled: &Arc<Compiled>,
) -> Result<TestResult, Error> {
    let label = format!("pgbench c{clients}");
    h.test(
        label,
        TestResult::running(KEY, "pgbench".into(), "pgbench", clients, true, "tx/s"),
        |run| {
            // Each client its own copy of the compiled scripts: one shared
            // Arc, whose count every client bumps per transaction, is a cache
            // line the clients' cores would pass back and forth.
            let dialect = run
                .driver
                .require_sql()
                .map_err(TestFailure::when("could not start the clients"))?
                .dialect();
            let mut workers = (0..clients)
                .map(|i| {
                    let own = match i {
                        0 => compiled.clone(),
                        _ => Arc::new(
                            Compiled::new(p, dialect).map_err(|e| DbError::fatal(e.to_string()))?,
                        ),
                    };
                    Client::new(run.driver.clone(), own, p, clients, i)
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(TestFailure::when("could not start the clients"))?;
            let log = match &p.log {
                Some(spec) => {
                    let threads = run.placement.threads_for(clients);
                    let log = txlog::open(spec, p, threads).map_err(TestFailure::new)?;
                    for w in &mut workers {
                        w.log_into(&log, p, clients);
                    }
                    Some(log)
                }
                None => None,
            };
            let mut timing = Timing::measured(p.warmup_secs, p.secs);
            if p.transactions.is_some() {
                timing = timing.budgeted();
            }
            let step = run.timed(&mut workers, TimedStep::new(timing, Per::Event));
            run.result.qps = run.result.tps;
            let mut d = stats::detail(p, compiled, &workers, &step, clients);
            // What the threads' buffers hold goes to the files now; the
            // interval each aggregated log ended in stays unwritten, as
            // pgbench leaves it.
            let written = log.map(txlog::TestLog::finish);
            if let Some(Ok(files)) = &written {
                d.log_files = files.clone();
            }
            run.result.set_detail(KEY, &d);
            if let Some(Err(e)) = written {
                return Err(TestFailure::new(e));
            }
            Ok(())
        },
    )
}

/// One result per script (its transactions per second and per-statement
/// latency), shown under the test's line.
fn store_scripts(h: &mut Harness<'_>, main: &TestResult) -> Result<(), Error> {
    let Some(d) = main.detail::<Detail>(KEY) else {
        return Ok(());
    };
    for sd in &d.scripts {
        h.store_member(
            main,
            MixMember {
                name: sd.name.clone(),
                group: "pgbench scripts",
                count: sd.count,
                per_sec: sd.tps,
                errors: sd.failed,
                detail: ("pgbench_script", sd),
                shown: true,
            },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn common(profile: &str) -> RunBasics {
        RunBasics {
            profile: profile.into(),
            seed: 1,
            part: None,
        }
    }

    #[test]
    fn the_default_is_tpcb_like_on_fresh_tables_and_options_are_checked() {
        let p = Pgbench::params(&common("ci"), Options::default()).unwrap();
        assert_eq!(p.scripts.len(), 1);
        assert_eq!(p.scripts[0].builtin, Some(Builtin::TpcbLike));
        assert!(p.init_tables && p.checks_balances());
        assert_eq!((p.scale, p.protocol, p.max_tries), (1, Protocol::Simple, 1));
        for (o, msg) in [
            (
                Options {
                    protocol: Some("binary".into()),
                    ..Default::default()
                },
                "--protocol must be simple, extended or prepared",
            ),
            (
                Options {
                    builtin: Some(vec!["tpcc".into()]),
                    ..Default::default()
                },
                "tpcb-like, simple-update or select-only",
            ),
            (
                Options {
                    builtin: Some(vec!["select-only@x".into()]),
                    ..Default::default()
                },
                "the weight after @",
            ),
            (
                Options {
                    define: Some(vec!["novalue".into()]),
                    ..Default::default()
                },
                "expected NAME=VALUE",
            ),
            (
                Options {
                    script: Some(vec!["/nonexistent/x.sql".into()]),
                    ..Default::default()
                },
                "cannot read it",
            ),
            (
                Options {
                    builtin: Some(vec!["select-only@0".into()]),
                    ..Default::default()
                },
                "weight 0",
            ),
            (
                Options {
                    max_tries: Some(0),
                    ..Default::default()
                },
                "--max-tries must be at least 1",
            ),
        ] {
            let e = Pgbench::params(&common("ci"), o).unwrap_err();
            assert!(e.is_usage() && e.to_string().contains(msg), "{e}");
        }
    }

    #[test]
    fn weights_names_and_the_check_follow_the_scripts() {
        let o = Options {
            builtin: Some(vec!["select-only@9".into(), "simple-update@1".into()]),
            ..Default::default()
        };
        let p = Pgbench::params(&common("ci"), o).unwrap();
        let w: Vec<(&str, u32)> = p
            .scripts
            .iter()
            .map(|s| (s.name.as_str(), s.weight))
            .collect();
        assert_eq!(w, [("select-only", 9), ("simple-update", 1)]);
        assert!(!p.checks_balances(), "simple-update breaks the invariant");
        let d = Pgbench::describe(&p);
        assert!(d.contains("script select-only weight 9 (90.0 %)"), "{d}");
        let o = Options {
            builtin: Some(vec!["tpcb-like".into(), "select-only".into()]),
            ..Default::default()
        };
        assert!(Pgbench::params(&common("ci"), o).unwrap().checks_balances());
    }

    #[test]
    fn log_options_are_checked_as_pgbench_checks_them() {
        let log = |f: fn(&mut Options)| {
            let mut o = Options {
                log: Some(true),
                time: Some(Secs::new(4.0).unwrap()),
                ..Default::default()
            };
            f(&mut o);
            Pgbench::params(&common("ci"), o)
        };
        for (f, msg) in [
            ((|o: &mut Options| o.log = None) as fn(&mut Options), ""),
            (|o| o.sampling_rate = Some(0.5), ""),
            (|o| o.aggregate_interval = Some(2), ""),
            (
                |o| {
                    o.log = None;
                    o.sampling_rate = Some(0.5)
                },
                "--sampling-rate needs --log",
            ),
            (
                |o| {
                    o.log = None;
                    o.log_prefix = Some("x".into())
                },
                "--log-prefix needs --log",
            ),
            (|o| o.sampling_rate = Some(0.0), "above 0 and at most 1"),
            (|o| o.sampling_rate = Some(1.5), "above 0 and at most 1"),
            (|o| o.aggregate_interval = Some(0), "from 1 to"),
            (
                |o| o.aggregate_interval = Some(3),
                "a multiple of --aggregate-interval 3",
            ),
            (|o| o.aggregate_interval = Some(5), "longer than the test"),
            (
                |o| {
                    o.aggregate_interval = Some(1);
                    o.sampling_rate = Some(0.5)
                },
                "not both",
            ),
            (
                |o| o.log_prefix = Some("/nonexistent/dir/x".into()),
                "is not a directory",
            ),
            (|o| o.log_prefix = Some("logs/".into()), "names no file"),
        ] {
            match (log(f), msg) {
                (Ok(_), "") => {}
                (Err(e), m) if !m.is_empty() => {
                    assert!(e.is_usage() && e.to_string().contains(m), "{e}")
                }
                (r, m) => panic!("{m}: {:?}", r.map(|p| p.log)),
            }
        }
        let p = log(|o| o.failures_detailed = Some(true)).unwrap();
        let spec = p.log.unwrap();
        assert_eq!(spec.prefix, "pgbench_log");
        assert!(spec.failures_detailed);
    }

    #[test]
    fn matrix_tables_fill_the_same_options() {
        let t: toml::Table = toml::from_str(
            "builtin = \"select-only@3\"\nclients = [1, 2]\nprotocol = \"prepared\"\n\
             define = [\"a=1\", \"b=x\"]\nmax_tries = 3\nrate = 50.0\nlatency_limit = 10.0\nscale = 2\nallow_shell = true",
        )
        .unwrap();
        let o = Options::deserialize(t).unwrap();
        let p = Pgbench::params(&common("ci"), o).unwrap();
        assert_eq!(p.clients, [1, 2]);
        assert_eq!(p.protocol, Protocol::Prepared);
        assert_eq!(p.scripts[0].weight, 3);
        assert_eq!(p.defines["b"], "x");
        assert_eq!((p.max_tries, p.scale), (3, 2));
        assert_eq!((p.rate, p.latency_limit_ms), (Some(50.0), Some(10.0)));
        assert!(p.allow_shell);
        assert!(
            !Pgbench::params(&common("ci"), Options::default())
                .unwrap()
                .allow_shell
        );
        let t: toml::Table = toml::from_str(
            "log = true\nlog_prefix = \"run1\"\naggregate_interval = 1\nfailures_detailed = true\ntime = 2",
        )
        .unwrap();
        let p = Pgbench::params(&common("ci"), Options::deserialize(t).unwrap()).unwrap();
        let spec = p.log.unwrap();
        assert_eq!(
            (
                spec.prefix.as_str(),
                spec.aggregate_secs,
                spec.failures_detailed
            ),
            ("run1", Some(1), true)
        );
    }
}
