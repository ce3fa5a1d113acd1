//! What `--target` names, and how it is shown: credentials never appear.

use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// Embedded SQLite; `None` = a new database in a temp dir.
    Sqlite(Option<PathBuf>),
    Mysql(String),
    Postgres(String),
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
        let scheme = s.split_once("://").map(|(a, _)| a);
        let check = |s: &str| -> Result<(), String> {
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
        };
        match scheme {
            Some("mysql") | Some("mariadb") => check(s).map(|_| Target::Mysql(s.to_string())),
            Some("postgres") | Some("postgresql") => {
                check(s).map(|_| Target::Postgres(s.to_string()))
            }
            _ => Err(format!(
                "malformed target '{}': expected sqlite:PATH, mysql://user:pass@host:port/db or postgres://user:pass@host:port/db",
                redact(s)
            )),
        }
    }

    /// The driver of a server URL (`None` for SQLite, whose driver needs its PRAGMAs).
    pub fn server_driver(
        &self,
    ) -> Option<Result<std::sync::Arc<dyn crate::engine::Driver>, String>> {
        use crate::engine::{mysql::MysqlDriver, postgres::PostgresDriver};
        Some(match self {
            Target::Mysql(u) => MysqlDriver::new(u)
                .map(|d| std::sync::Arc::new(d) as _)
                .map_err(|e| e.to_string()),
            Target::Postgres(u) => PostgresDriver::new(u)
                .map(|d| std::sync::Arc::new(d) as _)
                .map_err(|e| e.to_string()),
            Target::Sqlite(_) => return None,
        })
    }

    /// The target as it may be printed and stored.
    pub fn display(&self) -> String {
        match self {
            Target::Sqlite(Some(p)) => format!("sqlite:{}", p.display()),
            Target::Sqlite(None) => "sqlite (temporary database)".into(),
            Target::Mysql(u) | Target::Postgres(u) => redact(u),
        }
    }
}

/// Replaces the password of a URL (`user:pass@`) and of `password=` query
/// parameters with `***`. Anything that is not a URL is returned as is.
pub fn redact(s: &str) -> String {
    let mut out = s.to_string();
    if let Some(idx) = out.find("://") {
        let start = idx + 3;
        let end = out[start..]
            .find(['/', '?'])
            .map(|e| start + e)
            .unwrap_or(out.len());
        if let Some(at) = out[start..end].rfind('@') {
            let userinfo = &out[start..start + at];
            if let Some(colon) = userinfo.find(':') {
                out.replace_range(start + colon + 1..start + at, "***");
            }
        }
    }
    for key in ["password=", "pass=", "pwd="] {
        let mut from = 0;
        while let Some(pos) = out[from..].find(key) {
            let v = from + pos + key.len();
            let e = out[v..]
                .find(['&', ' '])
                .map(|e| v + e)
                .unwrap_or(out.len());
            out.replace_range(v..e, "***");
            from = v + 3;
        }
    }
    out
}

/// Redacts every URL-looking argument of a command line.
pub fn redact_args(args: &[String]) -> Vec<String> {
    args.iter().map(|a| redact(a)).collect()
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
        assert!(matches!(
            Target::parse("mysql://u:p@127.0.0.1:3307/sbtest").unwrap(),
            Target::Mysql(_)
        ));
        assert!(matches!(
            Target::parse("postgres://u@localhost/db").unwrap(),
            Target::Postgres(_)
        ));
        for bad in [
            "sqlite:",
            "oracle://x",
            "mysql://u:p@:12/x",
            "mysql://u:secret@h:port/x",
            "nonsense",
        ] {
            let e = Target::parse(bad).unwrap_err();
            assert!(!e.contains("secret"), "{e}");
        }
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact("mysql://root:s3cret@127.0.0.1:3306/sb"),
            "mysql://root:***@127.0.0.1:3306/sb"
        );
        assert_eq!(redact("postgres://u:p@ss@h/db"), "postgres://u:***@h/db");
        assert_eq!(
            redact("postgres://u@h/db?password=zz&x=1"),
            "postgres://u@h/db?password=***&x=1"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("--threads"), "--threads");
    }
}
