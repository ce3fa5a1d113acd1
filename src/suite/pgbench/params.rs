//! The checked parameters a run stores with its results ([`Params`]: its
//! scripts, the protocol) and the key of the suite's figures ([`KEY`]):
//! shared by the run (`mod.rs`), the clients, the tables' initialisation,
//! the figures and the report section.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::builtin::Builtin;
use crate::error::{Error, usage};

/// The key of the suite's figures in results.
pub const KEY: &str = "pgbench";

/// The largest script file rqps reads (`--script`, `--init-script`), the
/// limit of config and matrix files.
pub const MAX_SCRIPT_BYTES: u64 = 1 << 20;
/// The most scripts a run mixes (`--script` and `--builtin`), as pgbench.
pub const MAX_SCRIPTS: usize = 128;
/// The most script text a run reads in all (its files and init script): a
/// run stores it with its parameters, and JSON writes a control character
/// in 6 bytes, so the run's file stays under a quarter of what readers take
/// (`results::MAX_RESULT_FILE_BYTES`, 64 MiB).
pub const MAX_SCRIPTS_BYTES: u64 = 4 << 20;
/// The most commands whose figures (count, latency, failures) a test
/// stores, over all its scripts, in script order: each takes at most about
/// 1 KB of JSON, so a test's file stays within a few MB whatever the
/// scripts. The figures of the commands past it are not stored (the
/// script's detail says how many).
pub const MAX_STORED_STATEMENTS: usize = 2000;

/// How statements go to the server (pgbench's `--protocol`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// The variables written into the SQL text, sent as one query.
    Simple,
    /// The variables bound as parameters.
    Extended,
    /// As `extended`, each statement prepared once per connection.
    Prepared,
}

impl Protocol {
    /// As `--protocol` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Simple => "simple",
            Protocol::Extended => "extended",
            Protocol::Prepared => "prepared",
        }
    }

    pub(super) fn parse(v: &str) -> Result<Protocol, Error> {
        match v {
            "simple" => Ok(Protocol::Simple),
            "extended" => Ok(Protocol::Extended),
            "prepared" => Ok(Protocol::Prepared),
            _ => Err(usage(format!(
                "--protocol must be simple, extended or prepared, got '{v}'"
            ))),
        }
    }
}

/// A script of the run, as stored with its results.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ScriptSpec {
    /// How results name it: the built-in's name or the file's name.
    pub name: String,
    pub weight: u32,
    /// The built-in it is (rendered per dialect when the run starts).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub builtin: Option<Builtin>,
    /// A file's path and text, read when the run was planned.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub text: Option<String>,
}

/// Checked parameters, stored with every result.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Params {
    pub profile: String,
    pub scripts: Vec<ScriptSpec>,
    pub clients: Vec<usize>,
    /// Measured seconds per test (with --transactions: the most it may take).
    pub secs: f64,
    /// Transactions per client, instead of a duration.
    pub transactions: Option<u64>,
    pub warmup_secs: f64,
    pub scale: u32,
    pub protocol: Protocol,
    pub defines: BTreeMap<String, String>,
    pub rate: Option<f64>,
    pub latency_limit_ms: Option<f64>,
    pub max_tries: u32,
    /// The init script's path and text.
    pub init_script: Option<(String, String)>,
    /// Whether rqps makes pgbench's four tables before the tests.
    pub init_tables: bool,
    /// `--scale` was given (not the profile's): under `--skip-init`, the
    /// built-ins use the tables' scale, and a given one that differs is
    /// refused. Not stored.
    #[serde(skip)]
    pub scale_given: bool,
    pub seed: u64,
    /// Whether the scripts' `\shell` and `\setshell` may run
    /// (`--allow-shell`); without it a script holding one is refused.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_shell: bool,
    /// pgbench's transaction log (`--log`), when asked for.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub log: Option<LogSpec>,
}

/// What `--log` writes: pgbench's per-transaction or aggregated log files
/// (see [`super::txlog`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LogSpec {
    /// The files' names before `.PID` (`--log-prefix`, default
    /// `pgbench_log`), relative to the working directory.
    pub prefix: String,
    /// The fraction of transactions logged (`--sampling-rate`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sampling_rate: Option<f64>,
    /// Seconds per aggregated line (`--aggregate-interval`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub aggregate_secs: Option<u32>,
    /// Failures named by class (`--failures-detailed`).
    #[serde(default)]
    pub failures_detailed: bool,
}

impl Params {
    /// Whether the built-in scripts run on tables rqps did not make: their
    /// scale is then the tables' (`count(*)` of `pgbench_branches`, as
    /// pgbench reads it), see [`super::tables_scale`].
    pub fn scale_from_tables(&self) -> bool {
        !self.init_tables && self.scripts.iter().any(|s| s.builtin.is_some())
    }

    /// Whether the balances check runs after the tests: every script that
    /// runs is a built-in and the only one that writes is tpcb-like.
    pub fn checks_balances(&self) -> bool {
        self.scripts
            .iter()
            .all(|s| matches!(s.builtin, Some(Builtin::TpcbLike | Builtin::SelectOnly)))
            && self
                .scripts
                .iter()
                .any(|s| s.builtin == Some(Builtin::TpcbLike))
    }
}
