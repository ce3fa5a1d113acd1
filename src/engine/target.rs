//! What `--target` names, parsed once: an embedded SQLite file, or a server
//! URL of a kind the [registry](crate::engine::registry) knows, taken apart
//! by [`DbUrl`]. Shown only through [`redact`]: credentials never appear.

use std::path::PathBuf;
use std::sync::Arc;

use crate::engine::registry::{self, UrlTarget};
use crate::engine::url::DbUrl;
use crate::engine::{DbError, DbResult, Driver};

/// `s` as it may be printed or stored, whatever it is (a target, a message,
/// an argument): URL passwords and `password=` values hidden, also in a URL
/// of a registered scheme with a slash missing (`mysql:/u:p@h`). The rules
/// are [`url::redact_with`](crate::engine::url::redact_with)'s.
pub fn redact(s: &str) -> String {
    crate::engine::url::redact_with(s, &|scheme| registry::by_scheme(scheme).is_some())
}

/// The warning for URLs given on the command line with a password in
/// them (`options`: `--target`, `--reference`), said once per command:
/// any local user reads a process's arguments (`ps`, `/proc/PID/cmdline`)
/// for as long as it runs. `password_file`: the command has
/// `--password-file`. `None` when there is nothing to say.
pub fn password_in_url_warning(options: &[&str], password_file: bool) -> Option<String> {
    let (last, rest) = options.split_last()?;
    let named = if rest.is_empty() {
        format!("the {last} URL holds")
    } else {
        format!("the {} and {last} URLs hold", rest.join(", "))
    };
    Some(format!(
        "{named} a password, which every local user can read in the process list (ps) for \
         the whole run: leave it out of the URL and give it {}in $PGPASSWORD or ~/.pgpass \
         (PostgreSQL) or $MYSQL_PWD (MySQL); --allow-password-in-url silences this warning",
        if password_file {
            "with --password-file FILE (chmod 600), or "
        } else {
            ""
        }
    ))
}

/// [`redact`] applied to every argument of a command line.
pub fn redact_args(args: &[String]) -> Vec<String> {
    args.iter().map(|a| redact(a)).collect()
}

/// Why a `--target` (or a matrix `url`) is not one rqps can use: the user's
/// mistake, so callers report it as a usage error. Every target in a message
/// is [redacted](redact) already.
#[derive(Clone, Debug, thiserror::Error)]
pub enum TargetError {
    #[error("malformed target 'sqlite:': give a file path, e.g. sqlite:/tmp/sb.db")]
    NoSqlitePath,
    /// A scheme no engine kind reaches through a URL; `expected` lists the
    /// forms that work.
    #[error("malformed target '{target}'{hint}: expected {expected}")]
    UnknownScheme {
        target: String,
        /// " (did you mean mysql?)" for a misspelt scheme, or "".
        hint: String,
        expected: String,
    },
    #[error(
        "malformed target '{target}': no host (expected e.g. {scheme}://user@127.0.0.1:PORT/db)"
    )]
    NoHost { target: String, scheme: String },
    #[error("malformed target '{target}': bad port '{port}'")]
    BadPort { target: String, port: String },
    /// A `KIND:PATH?version=V` target that is not one.
    #[error("malformed target '{target}': {why} (expected e.g. {name}:/path/to/db?version=8.10.0)")]
    BadDir {
        target: String,
        why: String,
        name: &'static str,
    },
    /// What [`DbUrl::parse`] refused (its message names the target, redacted).
    #[error(transparent)]
    Url(DbError),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// Embedded SQLite; `None` = a new database in a temp dir.
    Sqlite(Option<PathBuf>),
    /// A server reached through a URL.
    Url(UrlTarget),
    /// A database directory of an engine loaded from a library
    /// (`rocksdb:PATH?version=V`); the library is found when it is opened.
    Dir {
        kind: &'static registry::EngineKind,
        dir: PathBuf,
        version: Option<String>,
    },
}

impl Target {
    pub fn parse(s: &str) -> Result<Target, TargetError> {
        let s = s.trim();
        if let Some(path) = s.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path.is_empty() {
                return Err(TargetError::NoSqlitePath);
            }
            return Ok(Target::Sqlite(Some(PathBuf::from(path))));
        }
        if s == "sqlite" {
            return Ok(Target::Sqlite(None));
        }
        if let Some((name, rest)) = s.split_once(':')
            && let Some(kind) = registry::by_name(name).filter(|k| k.library.is_some())
        {
            return dir_target(kind, s, rest);
        }
        let kind = s
            .split_once("://")
            .and_then(|(scheme, _)| registry::by_scheme(scheme))
            .filter(|k| k.open_url.is_some());
        let Some(kind) = kind else {
            // Every form each kind takes (all its URL schemes, `rocksdb:PATH?version=V`),
            // with no password: that goes in --password-file, never in the URL.
            let mut forms: Vec<String> = vec!["sqlite:PATH".into()];
            for k in registry::kinds() {
                if k.open_url.is_some()
                    && let Some((first, rest)) = k.schemes.split_first()
                {
                    let also = rest
                        .iter()
                        .map(|s| format!(" or {s}://"))
                        .collect::<String>();
                    forms.push(format!("{first}://user@host:port/db{also}"));
                }
                if k.library.is_some() {
                    forms.push(format!("{}:PATH?version=V", k.name));
                }
            }
            let forms = match forms.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{}; or {last}", rest.join("; ")),
                _ => forms.join(""),
            };
            let hint = s
                .split_once("://")
                .map(|(scheme, _)| {
                    let schemes = registry::kinds()
                        .into_iter()
                        .filter(|k| k.open_url.is_some())
                        .flat_map(|k| k.schemes.iter().copied());
                    crate::util::suggest::hint(scheme, schemes)
                })
                .unwrap_or_default();
            return Err(TargetError::UnknownScheme {
                target: redact(s),
                hint,
                expected: format!(
                    "{forms} (the password goes in --password-file, never in the URL)"
                ),
            });
        };
        check_authority(s)?;
        let url = DbUrl::parse(s, kind.schemes).map_err(TargetError::Url)?;
        Ok(Target::Url(UrlTarget {
            kind,
            url,
            raw: s.to_string(),
        }))
    }

    /// Whether the target is a URL that holds a password (in its user info
    /// or a `password=` parameter): one that sits on the command line when
    /// given there.
    pub fn has_url_password(&self) -> bool {
        match self {
            Target::Url(u) => u.url.password.is_some() || redact(&u.raw) != u.raw,
            _ => false,
        }
    }

    /// The engine kind the target is of.
    pub fn kind(&self) -> &'static registry::EngineKind {
        match self {
            Target::Sqlite(_) => &crate::engine::sqlite::KIND,
            Target::Url(u) => u.kind,
            Target::Dir { kind, .. } => kind,
        }
    }

    /// The driver of a server URL (`None` for SQLite, whose driver needs its PRAGMAs).
    pub fn server_driver(&self) -> Option<DbResult<Arc<dyn Driver>>> {
        match self {
            Target::Url(u) => {
                let open = u.kind.open_url?;
                Some(open(u, &toml::Table::new(), Default::default()))
            }
            Target::Sqlite(_) | Target::Dir { .. } => None,
        }
    }

    /// What `--target` takes to name this target again (a URL with its
    /// password, as given: the caller redacts or moves it); `None` for a
    /// temporary SQLite database, the default.
    pub fn arg(&self) -> Option<String> {
        match self {
            Target::Sqlite(None) => None,
            Target::Url(u) => Some(u.raw.clone()),
            t => Some(t.display()),
        }
    }

    /// The target as it may be printed and stored.
    pub fn display(&self) -> String {
        match self {
            Target::Sqlite(Some(p)) => format!("sqlite:{}", p.display()),
            Target::Sqlite(None) => "sqlite (temporary database)".into(),
            Target::Url(u) => redact(&u.raw),
            Target::Dir { kind, dir, version } => match version {
                Some(v) => format!("{}:{}?version={v}", kind.name, dir.display()),
                None => format!("{}:{}", kind.name, dir.display()),
            },
        }
    }
}

/// `KIND:PATH[?version=V]` of an engine loaded from a library.
fn dir_target(
    kind: &'static registry::EngineKind,
    s: &str,
    rest: &str,
) -> Result<Target, TargetError> {
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let bad = |why: &str| TargetError::BadDir {
        target: s.to_string(),
        why: why.to_string(),
        name: kind.name,
    };
    if path.is_empty() {
        return Err(bad("give a directory"));
    }
    let mut version = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("version", v))
                if !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.') =>
            {
                version = Some(v.to_string())
            }
            Some(("version", v)) => {
                return Err(bad(&format!("version '{v}' is not like 8.10.0")));
            }
            _ => return Err(bad(&format!("unknown parameter '{pair}' (only version=V)"))),
        }
    }
    Ok(Target::Dir {
        kind,
        dir: PathBuf::from(path),
        version,
    })
}

/// The first look at a server URL, with the messages users know: a host
/// (or a socket parameter) and a numeric port.
/// The user info ends where [`DbUrl::parse`] ends it (the last '@'), so no
/// part of a password is taken for a host or a port.
fn check_authority(s: &str) -> Result<(), TargetError> {
    let scheme = s.split_once("://").map(|(a, _)| a);
    let rest = s.split_once("://").map(|(_, r)| r).unwrap_or("");
    let hostpart = match rest.rsplit_once('@') {
        Some((userinfo, _)) if userinfo.contains('?') => {
            return Err(TargetError::Url(crate::engine::DbError::fatal(format!(
                "malformed target '{}': {}",
                redact(s),
                crate::engine::url::AT_AFTER_QUERY
            ))));
        }
        Some((_, h)) => h,
        None => rest,
    };
    let main = hostpart.split_once('?').map_or(hostpart, |(m, _)| m);
    let host = main.split('/').next().unwrap_or("");
    let host_name = if host.starts_with('[') {
        host
    } else {
        host.rsplit_once(':').map(|(h, _)| h).unwrap_or(host)
    };
    if host_name.is_empty() && !rest.contains("socket=") && !rest.contains("host=") {
        return Err(TargetError::NoHost {
            target: redact(s),
            scheme: scheme.unwrap_or("mysql").to_string(),
        });
    }
    if let Some((_, port)) = host.rsplit_once(':')
        && !host.starts_with('[')
        && port.parse::<u16>().is_err()
    {
        return Err(TargetError::BadPort {
            target: redact(s),
            port: port.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_engine_target_is_a_directory_with_an_optional_release() {
        let rocks = registry::by_name("rocksdb").unwrap();
        let t = Target::parse("rocksdb:/data/db?version=8.10.0").unwrap();
        assert_eq!(
            t,
            Target::Dir {
                kind: rocks,
                dir: PathBuf::from("/data/db"),
                version: Some("8.10.0".into()),
            }
        );
        assert_eq!(t.display(), "rocksdb:/data/db?version=8.10.0");
        assert!(t.server_driver().is_none());
        let bare = Target::parse("rocksdb:///data/db").unwrap();
        assert_eq!(bare.display(), "rocksdb:/data/db");
        let bad = |s: &str| Target::parse(s).unwrap_err().to_string();
        assert_eq!(
            bad("rocksdb:"),
            "malformed target 'rocksdb:': give a directory (expected e.g. rocksdb:/path/to/db?version=8.10.0)"
        );
        assert!(bad("rocksdb:/d?version=").contains("version '' is not like 8.10.0"));
        assert!(bad("rocksdb:/d?cache=1").contains("unknown parameter 'cache=1' (only version=V)"));
    }

    #[test]
    fn parses_targets() {
        assert_eq!(
            Target::parse("sqlite:/tmp/x.db").unwrap(),
            Target::Sqlite(Some("/tmp/x.db".into()))
        );
        let Target::Url(u) = Target::parse("mysql://u:p@127.0.0.1:3307/sbtest").unwrap() else {
            panic!("a URL target")
        };
        assert_eq!(
            (u.kind.name, u.url.port, u.url.database.as_deref()),
            ("mysql", Some(3307), Some("sbtest"))
        );
        let Target::Url(u) = Target::parse("postgres://u@localhost/db").unwrap() else {
            panic!("a URL target")
        };
        assert_eq!(u.kind.name, "postgres");
        assert_eq!(
            Target::parse("mariadb://u:secret@h/db").unwrap().display(),
            "mariadb://u:***@h/db"
        );
        for bad in [
            "sqlite:",
            "oracle://x",
            "mysql://u:p@:12/x",
            "mysql://u:secret@h:port/x",
            "mysql://u:secret@h:0/x",
            "nonsense",
        ] {
            let e = Target::parse(bad).unwrap_err().to_string();
            assert!(!e.contains("secret"), "{e}");
            assert!(e.starts_with("malformed target"), "{e}");
        }
        assert_eq!(
            Target::parse("oracle://u@h/x").unwrap_err().to_string(),
            "malformed target 'oracle://u@h/x': expected sqlite:PATH; \
             mysql://user@host:port/db; mariadb://user@host:port/db; postgres://user@host:port/db \
             or postgresql://; or rocksdb:PATH?version=V (the password goes in --password-file, \
             never in the URL)"
        );
        let typo = Target::parse("mysq://u@h/x").unwrap_err().to_string();
        assert!(
            typo.contains("'mysq://u@h/x' (did you mean mysql?)"),
            "{typo}"
        );
    }

    #[test]
    fn each_mistake_in_a_target_has_its_own_error() {
        let e = |s: &str| Target::parse(s).unwrap_err();
        assert!(matches!(e("sqlite:"), TargetError::NoSqlitePath));
        assert!(matches!(e("sqlite://"), TargetError::NoSqlitePath));
        assert!(matches!(e("nonsense"), TargetError::UnknownScheme { .. }));
        assert!(matches!(
            e("mysql://u:secret@:12/x"),
            TargetError::NoHost { scheme, target } if scheme == "mysql" && target == "mysql://u:***@:12/x"
        ));
        assert!(matches!(
            e("postgres://u:secret@h:port/x"),
            TargetError::BadPort { port, target } if port == "port" && target == "postgres://u:***@h:port/x"
        ));
        // The port passes the first look but not DbUrl's (0 is no port).
        let url = e("mysql://u:secret@h:0/x");
        assert!(matches!(url, TargetError::Url(_)), "{url:?}");
        assert!(!url.to_string().contains("secret"), "{url}");
    }

    #[test]
    fn a_password_with_a_slash_or_a_question_mark_never_shows_in_an_error() {
        // An unescaped '/' parses, as DbUrl does, instead of being taken for the host's end.
        for url in [
            "mysql://u:se/cret@127.0.0.1:3306/db",
            "postgres://u:sec/ret@127.0.0.1/db",
        ] {
            let Target::Url(u) = Target::parse(url).unwrap() else {
                panic!("a URL target")
            };
            assert!(u.url.password.unwrap().contains('/'));
            assert_eq!(u.url.host.as_deref(), Some("127.0.0.1"));
        }
        // A '?' cannot parse; the error quotes no part of the password.
        for url in [
            "mysql://u:se?cret@127.0.0.1:3306/db",
            "postgres://u:se?cret@127.0.0.1/db?sslmode=disable",
        ] {
            let e = Target::parse(url).unwrap_err().to_string();
            assert!(!e.contains("cret") && !e.contains("'se"), "{e}");
            assert!(e.contains("%3F"), "{e}");
        }
    }

    #[test]
    fn a_password_in_a_url_is_told_apart_and_warned_once_for_all_options() {
        assert!(
            Target::parse("postgres://u:pw@h/db")
                .unwrap()
                .has_url_password()
        );
        assert!(
            Target::parse("mysql://u@h/db?password=pw")
                .unwrap()
                .has_url_password()
        );
        assert!(
            !Target::parse("postgres://u@h/db")
                .unwrap()
                .has_url_password()
        );
        assert!(!Target::parse("sqlite").unwrap().has_url_password());
        assert_eq!(password_in_url_warning(&[], true), None);
        let w = password_in_url_warning(&["--reference", "--target"], false).unwrap();
        assert!(
            w.starts_with("the --reference and --target URLs hold a password"),
            "{w}"
        );
        assert!(w.contains("$PGPASSWORD") && w.contains("--allow-password-in-url"));
        assert!(!w.contains("--password-file"), "compat has none: {w}");
        let w = password_in_url_warning(&["--target"], true).unwrap();
        assert!(w.starts_with("the --target URL holds a password"), "{w}");
        assert!(w.contains("--password-file FILE"), "{w}");
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact("mysql://root:s3cret@127.0.0.1:3306/sb"),
            "mysql://root:***@127.0.0.1:3306/sb"
        );
        assert_eq!(redact("postgres://u:p@ss@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact("mysql://u:a/b@h/db"), "mysql://u:***@h/db");
        assert_eq!(
            redact("postgres://u@h/db?password=zz&x=1"),
            "postgres://u@h/db?password=***&x=1"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("--threads"), "--threads");
        assert_eq!(redact("sqlite:/tmp/a@b:c"), "sqlite:/tmp/a@b:c");
        assert_eq!(
            redact_args(&["--target".into(), "mysql://r:pw@h/d".into()]),
            ["--target", "mysql://r:***@h/d"]
        );
    }
}
