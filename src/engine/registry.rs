//! The one list of engine kinds rqps knows. Each kind declares itself in
//! its own folder (`engine/<name>/mod.rs`, `KIND`, an
//! [`EngineKind`]): the names users give it, its URL schemes and default
//! port, its throwaway-server recipe and whether prebuilt versions can be
//! installed, and how to open a driver from a parsed target. Everything that
//! turns a user's words into an engine (the target parser, `--server`,
//! matrix `engine = "..."`, `rqps engine install`) asks this registry
//! instead of matching on names itself.
//!
//! Only this module names the kinds; they depend on [`kind`](crate::engine::kind)
//! for their type, never on the registry, so there is no import cycle.

pub use crate::engine::kind::{
    BadOptionValue, EngineKind, EngineOption, OpenUrl, OptionError, Prebuilt, UrlTarget,
};
use crate::engine::server::Recipe;

// Checking options needs the other kinds (to name an option's owner), so it
// lives with the list of kinds rather than with the type.
impl EngineKind {
    /// Checks that every option in `t` is one of this kind's, with a value
    /// it accepts.
    pub fn check_options(&self, t: &toml::Table) -> Result<(), OptionError> {
        for (key, value) in t {
            let Some(o) = self.option(key) else {
                let owners: Vec<&EngineKind> = kinds()
                    .into_iter()
                    .filter(|k| k.option(key).is_some())
                    .collect();
                return Err(
                    match (owners.first(), owners.first().and_then(|k| k.option(key))) {
                        (Some(owner), Some(o)) => OptionError::OtherEngine {
                            flag: o.flag,
                            owner: or_list(&owners.iter().map(|k| k.title).collect::<Vec<_>>()),
                            target: match (owner.schemes.first(), owner.library) {
                                (Some(scheme), _) => format!("{scheme}://..."),
                                (None, Some(_)) => format!("{}:PATH", owner.name),
                                (None, None) => owner.name.to_string(),
                            },
                            server: or_list(
                                &owners
                                    .iter()
                                    .map(|k| k.server.map(|s| s.key()).unwrap_or(k.name))
                                    .collect::<Vec<_>>(),
                            ),
                        },
                        _ => OptionError::Unknown(key.clone()),
                    },
                );
            };
            let v = value
                .as_str()
                .ok_or_else(|| OptionError::NotText { key: key.clone() })?;
            (o.check)(v).map_err(OptionError::BadValue)?;
        }
        Ok(())
    }
}

/// A suite asked of an engine kind that does not offer the access it needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("suite {suite} needs {}, which {engine_title} ({engine}) does not offer: run it on {}", face.title(), or_list(fit))]
pub struct WrongFace {
    pub suite: String,
    pub face: crate::engine::Face,
    pub engine: &'static str,
    pub engine_title: &'static str,
    /// The kinds that offer the face.
    pub fit: Vec<&'static str>,
}

impl EngineKind {
    /// Checks that this kind offers the face `suite` needs; the error is
    /// one line naming the suite, this engine and the kinds that fit.
    pub fn check_face(&self, suite: &str, face: crate::engine::Face) -> Result<(), WrongFace> {
        if self.face == face {
            return Ok(());
        }
        Err(WrongFace {
            suite: suite.to_string(),
            face,
            engine: self.name,
            engine_title: self.title,
            fit: kinds()
                .into_iter()
                .filter(|k| k.face == face)
                .map(|k| k.name)
                .collect(),
        })
    }
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(names: &[&str]) -> String {
    match names {
        [] => "no engine rqps knows".into(),
        [one] => (*one).into(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// Every kind's options added to `cmd` (what `rqps run` offers); an option
/// two kinds share (MySQL's and MariaDB's) once.
pub fn augment_args(cmd: clap::Command) -> clap::Command {
    let mut seen: Vec<&str> = Vec::new();
    let mut cmd = cmd;
    for k in kinds() {
        for o in k.options {
            if !seen.contains(&o.key) {
                seen.push(o.key);
                cmd = k.augment_arg(cmd, o);
            }
        }
    }
    cmd
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

/// Every engine kind, in the order help texts list them.
pub fn kinds() -> [&'static EngineKind; 5] {
    [
        &crate::engine::sqlite::KIND,
        &crate::engine::mysql::KIND,
        &crate::engine::mysql::MARIADB,
        &crate::engine::postgres::KIND,
        &crate::engine::rocksdb::KIND,
    ]
}

/// The kind a user's name means (`pg`, `MariaDB`, `sqlite`, ...).
pub fn by_name(name: &str) -> Option<&'static EngineKind> {
    kinds()
        .into_iter()
        .find(|k| k.aliases.iter().any(|a| a.eq_ignore_ascii_case(name)))
}

/// The settings that decide durability, isolation and memory on engine
/// `name` (a stored result's engine name); none for an engine rqps does not
/// know.
pub fn fairness_settings(name: &str) -> &'static [&'static str] {
    by_name(name).map(|k| k.fairness_settings).unwrap_or(&[])
}

/// The kind whose targets use URL scheme `scheme`.
pub fn by_scheme(scheme: &str) -> Option<&'static EngineKind> {
    kinds().into_iter().find(|k| k.schemes.contains(&scheme))
}

/// A name that means no engine kind with a throwaway server (`oracle`, or
/// `sqlite`, which is embedded): the message users know, with the name in
/// lower case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown server kind {name:?} (expected postgres, mysql or mariadb)")]
pub struct UnknownServer {
    pub name: String,
}

/// The throwaway-server recipe a user's name means (`pg`, `MariaDB`, ...).
pub fn server_by_name(name: &str) -> Result<Recipe, UnknownServer> {
    by_name(name)
        .and_then(|k| k.server)
        .ok_or_else(|| UnknownServer {
            name: name.to_ascii_lowercase(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fairness_settings_come_from_the_engine_kind_and_none_for_an_unknown_engine() {
        assert!(fairness_settings("mysql").contains(&"innodb_flush_log_at_trx_commit"));
        assert!(fairness_settings("mariadb").contains(&"innodb_flush_log_at_trx_commit"));
        assert!(fairness_settings("postgres").contains(&"synchronous_commit"));
        assert!(fairness_settings("sqlite").contains(&"journal_mode"));
        assert!(fairness_settings("oracle").is_empty());
    }

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
                assert_eq!(by_name(srv.key()), Some(k));
                assert_eq!(server_by_name(srv.key()), Ok(srv));
            }
            assert_eq!(k.schemes.is_empty(), k.open_url.is_none(), "{}", k.name);
        }
        assert_eq!(by_name("pg").map(|k| k.name), Some("postgres"));
        assert_eq!(by_name("mariadb").map(|k| k.name), Some("mariadb"));
        assert_eq!(by_name("MySQL").map(|k| k.name), Some("mysql"));
        assert_eq!(by_scheme("mariadb").map(|k| k.name), Some("mariadb"));
        assert_eq!(by_scheme("postgresql").map(|k| k.name), Some("postgres"));
        assert!(by_name("oracle").is_none() && by_scheme("oracle").is_none());
        assert_eq!(server_by_name("MySQL").map(|s| s.key()), Ok("mysql"));
        assert_eq!(server_by_name("MariaDB").map(|s| s.key()), Ok("mariadb"));
        assert_eq!(server_by_name("mysql").map(|s| s.product()), Ok("MySQL"));
        assert_eq!(server_by_name("pg").map(|s| s.product()), Ok("PostgreSQL"));
        assert_eq!(
            server_by_name("SQLite").unwrap_err().to_string(),
            "unknown server kind \"sqlite\" (expected postgres, mysql or mariadb)"
        );
        assert_eq!(
            server_by_name("Oracle"),
            Err(UnknownServer {
                name: "oracle".into()
            })
        );
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
        // MariaDB shares the option (one flag on the command line).
        assert_eq!(
            by_name("mariadb").unwrap().check_options(&storage("Aria")),
            Ok(())
        );
        assert_eq!(mysql.check_options(&toml::Table::new()), Ok(()));
        for other in ["sqlite", "postgres"] {
            let e = by_name(other)
                .unwrap()
                .check_options(&storage("RocksDB"))
                .unwrap_err();
            assert_eq!(
                e.to_string(),
                "--mysql-storage-engine applies only to MySQL or MariaDB targets \
                 (--target mysql://... or --server mysql or mariadb)"
            );
        }
        assert_eq!(
            mysql
                .check_options(&storage("x;drop"))
                .unwrap_err()
                .to_string(),
            "storage engine 'x;drop': expected a name such as InnoDB, RocksDB or Aria"
        );
        assert!(matches!(
            mysql.check_options(&storage("")),
            Err(OptionError::BadValue(BadOptionValue { what: "storage engine", value, .. })) if value.is_empty()
        ));
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
