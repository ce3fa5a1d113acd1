//! What `--target` names, parsed once: an embedded SQLite file, or a server
//! URL of a kind the [registry](crate::engine::registry) knows, taken apart
//! by [`DbUrl`]. Shown only through [`redact`]: credentials never appear.

use std::path::PathBuf;
use std::sync::Arc;

use crate::engine::Driver;
use crate::engine::registry::{self, UrlTarget};
use crate::engine::url::DbUrl;

/// `s` as it may be printed or stored, whatever it is (a target, a message,
/// an argument): URL passwords and `password=` values hidden, also in a URL
/// of a registered scheme with a slash missing (`mysql:/u:p@h`). The rules
/// are [`url::redact_with`](crate::engine::url::redact_with)'s.
pub fn redact(s: &str) -> String {
    crate::engine::url::redact_with(s, &|scheme| registry::by_scheme(scheme).is_some())
}

/// [`redact`] applied to every argument of a command line.
pub fn redact_args(args: &[String]) -> Vec<String> {
    args.iter().map(|a| redact(a)).collect()
}

#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// Embedded SQLite; `None` = a new database in a temp dir.
    Sqlite(Option<PathBuf>),
    /// A server reached through a URL.
    Url(UrlTarget),
}

impl Target {
    pub fn parse(s: &str) -> Result<Target, String> {
        let s = s.trim();
        if let Some(path) = s.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path.is_empty() {
                return Err(
                    "malformed target 'sqlite:': give a file path, e.g. sqlite:/tmp/sb.db".into(),
                );
            }
            return Ok(Target::Sqlite(Some(PathBuf::from(path))));
        }
        if s == "sqlite" {
            return Ok(Target::Sqlite(None));
        }
        let kind = s
            .split_once("://")
            .and_then(|(scheme, _)| registry::by_scheme(scheme))
            .filter(|k| k.open_url.is_some());
        let Some(kind) = kind else {
            let urls: Vec<String> = registry::kinds()
                .iter()
                .filter_map(|k| k.schemes.first())
                .map(|scheme| format!("{scheme}://user:pass@host:port/db"))
                .collect();
            let urls = match urls.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                _ => urls.join(""),
            };
            return Err(format!(
                "malformed target '{}': expected sqlite:PATH, {urls}",
                redact(s)
            ));
        };
        check_authority(s)?;
        let url = DbUrl::parse(s, kind.schemes).map_err(|e| e.to_string())?;
        Ok(Target::Url(UrlTarget {
            kind,
            url,
            raw: s.to_string(),
        }))
    }

    /// The driver of a server URL (`None` for SQLite, whose driver needs its PRAGMAs).
    pub fn server_driver(&self) -> Option<Result<Arc<dyn Driver>, String>> {
        match self {
            Target::Url(u) => {
                let open = u.kind.open_url?;
                Some(open(u, &toml::Table::new()).map_err(|e| e.to_string()))
            }
            Target::Sqlite(_) => None,
        }
    }

    /// The target as it may be printed and stored.
    pub fn display(&self) -> String {
        match self {
            Target::Sqlite(Some(p)) => format!("sqlite:{}", p.display()),
            Target::Sqlite(None) => "sqlite (temporary database)".into(),
            Target::Url(u) => redact(&u.raw),
        }
    }
}

/// The first look at a server URL, with the messages users know: a host
/// (or a socket parameter) and a numeric port.
fn check_authority(s: &str) -> Result<(), String> {
    let scheme = s.split_once("://").map(|(a, _)| a);
    let rest = s.split_once("://").map(|(_, r)| r).unwrap_or("");
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    let host_name = if host.starts_with('[') {
        host
    } else {
        host.rsplit_once(':').map(|(h, _)| h).unwrap_or(host)
    };
    if host_name.is_empty() && !rest.contains("socket=") && !rest.contains("host=") {
        return Err(format!(
            "malformed target '{}': no host (expected e.g. {}://user:pass@127.0.0.1:PORT/db)",
            redact(s),
            scheme.unwrap_or("mysql")
        ));
    }
    if let Some((_, port)) = host.rsplit_once(':')
        && !host.starts_with('[')
        && port.parse::<u16>().is_err()
    {
        return Err(format!(
            "malformed target '{}': bad port '{port}'",
            redact(s)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let e = Target::parse(bad).unwrap_err();
            assert!(!e.contains("secret"), "{e}");
            assert!(e.starts_with("malformed target"), "{e}");
        }
        assert_eq!(
            Target::parse("oracle://u@h/x").unwrap_err(),
            "malformed target 'oracle://u@h/x': expected sqlite:PATH, \
             mysql://user:pass@host:port/db or postgres://user:pass@host:port/db"
        );
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
