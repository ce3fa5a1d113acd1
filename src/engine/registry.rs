//! The one list of engine kinds rqps knows. Each kind declares itself in
//! its own folder (`engine/<name>/mod.rs`, `KIND`): the names users give it,
//! its URL schemes and default port, its throwaway-server recipe and whether
//! prebuilt versions can be installed, and how to open a driver from a
//! parsed target. Everything that turns a user's words into an engine (the
//! target parser, `--server`, matrix `engine = "..."`, `rqps engine
//! install`) asks this registry instead of matching on names itself.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::server::ServerKind;
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
pub type OpenUrl = fn(&UrlTarget, &toml::Table) -> DbResult<Arc<dyn Driver>>;

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
    pub server: Option<ServerKind>,
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
}

/// How prebuilt versions of a server kind are fetched and unpacked
/// (see [`install`](crate::engine::install)).
#[derive(Debug)]
pub struct Prebuilt {
    /// A version to show in examples (`16.15`).
    pub example: &'static str,
    /// The Maven coordinates of `version`.
    pub artifact: fn(&str) -> String,
    /// Unpacks the fetched jar into a directory.
    pub unpack: fn(&Path, &Path) -> Result<(), String>,
    /// The install prefix (`--basedir`) of `version` unpacked into a directory.
    pub basedir_in: fn(&Path, &str) -> PathBuf,
    /// The line of `rqps engine list` that says which versions exist.
    pub published: &'static str,
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
    pub check: fn(&str) -> Result<(), String>,
}

/// Why an options table does not fit an engine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// An option another kind owns.
    #[error(
        "--{flag} applies only to {owner} targets (--target {scheme}://... or --server {server})"
    )]
    OtherEngine {
        flag: &'static str,
        owner: &'static str,
        scheme: &'static str,
        server: &'static str,
    },
    /// An option no kind owns.
    #[error("unknown engine option '{0}'")]
    Unknown(String),
    /// A value that is not text.
    #[error("engine option {key}: expected a text value such as {key} = \"...\"")]
    NotText { key: String },
    /// A value the option's check refused (its message as it is).
    #[error("{0}")]
    BadValue(String),
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
            cmd = cmd.arg(
                clap::Arg::new(o.key)
                    .long(o.flag)
                    .value_name(o.value_name)
                    .help(o.help)
                    .action(clap::ArgAction::Set),
            );
        }
        cmd
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

    /// Checks that every option in `t` is one of this kind's, with a value
    /// it accepts.
    pub fn check_options(&self, t: &toml::Table) -> Result<(), OptionError> {
        for (key, value) in t {
            let Some(o) = self.option(key) else {
                let owned = kinds()
                    .into_iter()
                    .find_map(|k| k.option(key).map(|o| (k, o)));
                return Err(match owned {
                    Some((owner, o)) => OptionError::OtherEngine {
                        flag: o.flag,
                        owner: owner.title,
                        scheme: owner.schemes.first().copied().unwrap_or(owner.name),
                        server: owner.server.map(|s| s.key()).unwrap_or(owner.name),
                    },
                    None => OptionError::Unknown(key.clone()),
                });
            };
            let v = value
                .as_str()
                .ok_or_else(|| OptionError::NotText { key: key.clone() })?;
            (o.check)(v).map_err(OptionError::BadValue)?;
        }
        Ok(())
    }
}

/// Every kind's options added to `cmd` (what `rqps run` offers).
pub fn augment_args(cmd: clap::Command) -> clap::Command {
    kinds().into_iter().fold(cmd, |c, k| k.augment_args(c))
}

/// Every kind's options that `m` holds, as one table by key (for
/// `EngineArgs::options`).
pub fn options_from_matches(m: &clap::ArgMatches) -> toml::Table {
    let mut t = toml::Table::new();
    for k in kinds() {
        t.extend(k.options_from_matches(m));
    }
    t
}

/// The command-line arguments that give `t`'s options back to `rqps run`
/// (`--mysql-storage-engine Aria`), in key order; keys no kind owns and
/// values that are not text are reported, not dropped.
pub fn options_to_args(t: &toml::Table) -> Result<Vec<String>, OptionError> {
    let mut args = Vec::new();
    for (key, value) in t {
        let o = kinds()
            .into_iter()
            .find_map(|k| k.option(key))
            .ok_or_else(|| OptionError::Unknown(key.clone()))?;
        let v = value
            .as_str()
            .ok_or_else(|| OptionError::NotText { key: key.clone() })?;
        args.push(format!("--{}", o.flag));
        args.push(v.to_string());
    }
    Ok(args)
}

/// Whether some engine kind owns the option `key` (`mysql_storage_engine`).
pub fn owns_option(key: &str) -> bool {
    kinds().into_iter().any(|k| k.option(key).is_some())
}

/// Checks options before the engine is known (a matrix's `[defaults]`):
/// each key must belong to some kind and have a value that kind accepts.
pub fn check_any_options(t: &toml::Table) -> Result<(), OptionError> {
    for (key, value) in t {
        let owner = kinds()
            .into_iter()
            .find(|k| k.option(key).is_some())
            .ok_or_else(|| OptionError::Unknown(key.clone()))?;
        let mut one = toml::Table::new();
        one.insert(key.clone(), value.clone());
        owner.check_options(&one)?;
    }
    Ok(())
}

impl PartialEq for EngineKind {
    /// Kinds are singletons: two are the same when their names are.
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// Every engine kind, in the order help texts list them.
pub fn kinds() -> [&'static EngineKind; 3] {
    [
        &crate::engine::sqlite::KIND,
        &crate::engine::mysql::KIND,
        &crate::engine::postgres::KIND,
    ]
}

/// The kind a user's name means (`pg`, `MariaDB`, `sqlite`, ...).
pub fn by_name(name: &str) -> Option<&'static EngineKind> {
    kinds()
        .into_iter()
        .find(|k| k.aliases.iter().any(|a| a.eq_ignore_ascii_case(name)))
}

/// The kind whose targets use URL scheme `scheme`.
pub fn by_scheme(scheme: &str) -> Option<&'static EngineKind> {
    kinds().into_iter().find(|k| k.schemes.contains(&scheme))
}

/// The kind a throwaway-server recipe belongs to.
pub fn by_server(server: ServerKind) -> &'static EngineKind {
    kinds()
        .into_iter()
        .find(|k| k.server == Some(server))
        .unwrap_or(&crate::engine::postgres::KIND)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_scheme_and_recipe_has_one_kind() {
        for k in kinds() {
            assert!(k.aliases.contains(&k.name), "{}", k.name);
            for a in k.aliases {
                assert_eq!(by_name(a), Some(k), "{a}");
                assert_eq!(by_name(&a.to_ascii_uppercase()), Some(k), "{a}");
            }
            for s in k.schemes {
                assert_eq!(by_scheme(s), Some(k), "{s}");
            }
            if let Some(srv) = k.server {
                assert_eq!(by_server(srv), k);
            }
            assert_eq!(k.schemes.is_empty(), k.open_url.is_none(), "{}", k.name);
        }
        assert_eq!(by_name("pg").map(|k| k.name), Some("postgres"));
        assert_eq!(by_name("mariadb").map(|k| k.name), Some("mysql"));
        assert_eq!(by_scheme("postgresql").map(|k| k.name), Some("postgres"));
        assert!(by_name("oracle").is_none() && by_scheme("oracle").is_none());
        assert_eq!(by_server(ServerKind::Mariadb).name, "mysql");
        assert_eq!(by_server(ServerKind::Postgres).default_port, Some(5432));
    }

    fn storage(v: &str) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("mysql_storage_engine".into(), toml::Value::String(v.into()));
        t
    }

    #[test]
    fn options_are_checked_by_the_kind_that_owns_them() {
        let mysql = by_name("mysql").unwrap();
        assert_eq!(mysql.check_options(&storage("RocksDB")), Ok(()));
        assert_eq!(mysql.check_options(&toml::Table::new()), Ok(()));
        for other in ["sqlite", "postgres"] {
            let e = by_name(other)
                .unwrap()
                .check_options(&storage("RocksDB"))
                .unwrap_err();
            assert_eq!(
                e.to_string(),
                "--mysql-storage-engine applies only to MySQL/MariaDB targets \
                 (--target mysql://... or --server mariadb)"
            );
        }
        assert_eq!(
            mysql
                .check_options(&storage("x;drop"))
                .unwrap_err()
                .to_string(),
            "storage engine 'x;drop': expected a name such as InnoDB, RocksDB or Aria"
        );
        let mut t = toml::Table::new();
        t.insert("mysql_storage_engine".into(), toml::Value::Integer(3));
        assert!(matches!(
            mysql.check_options(&t),
            Err(OptionError::NotText { .. })
        ));
        let mut t = toml::Table::new();
        t.insert("nope".into(), toml::Value::String("x".into()));
        assert_eq!(
            mysql.check_options(&t),
            Err(OptionError::Unknown("nope".into()))
        );
        assert_eq!(check_any_options(&storage("Aria")), Ok(()));
        assert!(check_any_options(&storage("")).is_err());
        assert!(check_any_options(&t).is_err());
    }

    #[test]
    fn options_come_from_the_command_line() {
        let cmd =
            augment_args(clap::Command::new("rqps").arg(clap::Arg::new("other").long("other")));
        let m = cmd
            .clone()
            .try_get_matches_from(["rqps", "--mysql-storage-engine", "Aria", "--other", "x"])
            .unwrap();
        assert_eq!(options_from_matches(&m), storage("Aria"));
        assert_eq!(
            options_to_args(&storage("Aria")).unwrap(),
            ["--mysql-storage-engine", "Aria"]
        );
        let mut bad = toml::Table::new();
        bad.insert("nope".into(), toml::Value::String("x".into()));
        assert!(options_to_args(&bad).is_err());
        let m = cmd.try_get_matches_from(["rqps"]).unwrap();
        assert!(options_from_matches(&m).is_empty());
        // A command without the options yields none, without a panic.
        let bare = clap::Command::new("x").try_get_matches_from(["x"]).unwrap();
        assert!(options_from_matches(&bare).is_empty());
    }
}
