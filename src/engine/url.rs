//! Parsing of `scheme://user:pass@host:port/db?key=value` targets for the
//! server drivers. The crates' own URL parsers are not used: they disagree
//! on unix sockets and would put the password into their error messages.
//! Every error built here names the target without its password.

use super::{DbError, DbResult};

/// A target URL taken apart. Percent-escapes are decoded everywhere but in
/// the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbUrl {
    pub scheme: String,
    pub user: Option<String>,
    pub password: Option<String>,
    /// `None` when the URL has no host (unix sockets given as parameters).
    pub host: Option<String>,
    pub port: Option<u16>,
    pub database: Option<String>,
    /// `?key=value&...` in order.
    pub params: Vec<(String, String)>,
}

impl DbUrl {
    /// Parses `url`, whose scheme must be one of `schemes`.
    pub fn parse(url: &str, schemes: &[&str]) -> DbResult<DbUrl> {
        let url = url.trim();
        let bad = |what: String| {
            DbError::fatal(format!("malformed target '{}': {what}", redact_url(url)))
        };
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(bad(format!(
                "expected {}://user@host:port/db (the password in --password-file)",
                schemes[0]
            )));
        };
        if !schemes.contains(&scheme) {
            return Err(bad(format!(
                "unsupported scheme '{scheme}' (expected {})",
                schemes.join(", ")
            )));
        }
        // The last '@' ends the user info, as in [`redact_with`], so an
        // unescaped '/', ':', '#' or '@' in a password still parses. A '?'
        // before it is either in the password or in a parameter holding an
        // '@': refused without quoting any part of it.
        let (userinfo, hostpart) = match rest.rsplit_once('@') {
            Some((u, _)) if u.contains('?') => return Err(bad(AT_AFTER_QUERY.into())),
            Some((u, h)) => (Some(u), h),
            None => (None, rest),
        };
        let (main, query) = hostpart.split_once('?').unwrap_or((hostpart, ""));
        let (authority, path) = main.split_once('/').unwrap_or((main, ""));
        let (user, password) = match userinfo {
            None => (None, None),
            Some(u) => {
                let (user, pass) = match u.split_once(':') {
                    Some((user, pass)) => (user, Some(pass)),
                    None => (u, None),
                };
                let user = decode(user).map_err(|e| bad(format!("user name: {e}")))?;
                // The message must not quote the password, not even in part.
                let pass = pass
                    .map(decode)
                    .transpose()
                    .map_err(|_| bad("bad %-escape in the password".into()))?;
                ((!user.is_empty()).then_some(user), pass)
            }
        };
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let Some((h, after)) = v6.split_once(']') else {
                return Err(bad("unclosed '[' in the host".into()));
            };
            match after.strip_prefix(':') {
                Some(p) => (h, Some(p)),
                None if after.is_empty() => (h, None),
                None => return Err(bad(format!("unexpected '{after}' after the host"))),
            }
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        let port = match port {
            None | Some("") => None,
            Some(p) => Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|&p| p != 0)
                    .ok_or_else(|| bad(format!("bad port '{p}'")))?,
            ),
        };
        let database = decode(path).map_err(|e| bad(format!("database name: {e}")))?;
        let mut params = Vec::new();
        for kv in query.split('&').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            let v = decode(v).map_err(|e| bad(format!("parameter {k}: {e}")))?;
            params.push((k.to_string(), v));
        }
        Ok(DbUrl {
            scheme: scheme.to_string(),
            user,
            password,
            host: (!host.is_empty()).then(|| host.to_string()),
            port,
            database: (!database.is_empty()).then_some(database),
            params,
        })
    }

    /// The value of parameter `key` (the last one when repeated).
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Fails on parameters not in `known`.
    pub fn check_params(&self, url: &str, known: &[&str]) -> DbResult<()> {
        match self
            .params
            .iter()
            .find(|(k, _)| !known.contains(&k.as_str()))
        {
            None => Ok(()),
            Some((k, _)) => Err(DbError::fatal(format!(
                "target '{}': unknown parameter '{k}' (known: {})",
                redact_url(url),
                known.join(", ")
            ))),
        }
    }

    /// The connect timeout parameter `key` (libpq's `connect_timeout`,
    /// the mysql client's `connect-timeout`): whole seconds, 1 to 3600;
    /// `default` without it.
    pub fn connect_timeout(
        &self,
        url: &str,
        key: &str,
        default: std::time::Duration,
    ) -> DbResult<std::time::Duration> {
        let Some(v) = self.param(key) else {
            return Ok(default);
        };
        match v.trim().parse::<u64>() {
            Ok(n @ 1..=3600) => Ok(std::time::Duration::from_secs(n)),
            _ => Err(DbError::fatal(format!(
                "target '{}': {key}={v}: give whole seconds from 1 to 3600 (default {})",
                redact_url(url),
                default.as_secs()
            ))),
        }
    }

    /// The database name, which the drivers require.
    pub fn require_database(&self, url: &str) -> DbResult<&str> {
        self.database.as_deref().ok_or_else(|| {
            DbError::fatal(format!(
                "target '{}' names no database: add /DBNAME after the host, e.g. {}://user@127.0.0.1/sbtest",
                redact_url(url),
                self.scheme
            ))
        })
    }
}

/// Why a URL with a '?' before its last '@' is refused (the password may hold the '?').
pub const AT_AFTER_QUERY: &str = "'@' after '?': write a '?' in the password as %3F (and an '@' in a parameter as %40); \
     the password is not shown";

/// `s` as it may be printed or stored: the password of a URL (`user:pass@`)
/// and the values of `password=`, `pass=` and `pwd=` parameters replaced by
/// `***`. Everything between the scheme's `://` and the last '@' counts as
/// the user info (as in [`DbUrl::parse`]), whatever it holds: a password
/// with an unescaped '@', '?', '/', '#', '%' or ':' is hidden whole. When
/// the text before the first ':' of the user info could not be a user name
/// (it holds '/', '?' or '#'), all of it is hidden. Text that is not a URL
/// keeps everything but such parameters.
///
/// This is the one redaction rqps uses. `is_scheme` says which prefixes
/// before a lone ':' are URL schemes with a slash missing (`mysql:/u:p@h`),
/// whose user info is hidden too: for text of any kind (command lines,
/// messages) the schemes of the engine registry
/// ([`target::redact`](crate::engine::target::redact)); for text given as a
/// URL, any scheme ([`redact_url`]). This module does not consult the
/// registry itself, so that the kinds, which parse their URLs here, do not
/// depend on the list of kinds.
pub fn redact_with(s: &str, is_scheme: &dyn Fn(&str) -> bool) -> String {
    // A URL, or one of a known scheme with a slash missing (`mysql:/u:p@h`):
    // the user info is hidden in both.
    let split = match s.split_once("://") {
        Some((scheme, rest)) => Some((format!("{scheme}://"), rest)),
        None => s
            .split_once(':')
            .filter(|(scheme, _)| is_scheme(scheme))
            .map(|(scheme, rest)| {
                let user = rest.trim_start_matches('/');
                (
                    format!("{scheme}:{}", &rest[..rest.len() - user.len()]),
                    user,
                )
            }),
    };
    let mut out = match split {
        Some((prefix, rest)) => match rest.rsplit_once('@') {
            Some((userinfo, after)) => match userinfo.split_once(':') {
                Some((user, _)) if !user.contains(['/', '?', '#']) => {
                    format!("{prefix}{user}:***@{after}")
                }
                Some(_) => format!("{prefix}***@{after}"),
                None => format!("{prefix}{userinfo}@{after}"),
            },
            None => format!("{prefix}{rest}"),
        },
        None => s.to_string(),
    };
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

/// [`redact_with`] for text given as a target URL: any `scheme:` prefix
/// counts as a scheme, since the text is meant as a URL (a driver's own
/// messages; an error about a malformed URL).
pub fn redact_url(s: &str) -> String {
    redact_with(s, &|scheme| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// Why [`decode`] refused a part of a URL (its message follows the part's
/// name: `user name: bad %-escape`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DecodeError {
    /// A `%` not followed by two hex digits.
    #[error("bad %-escape")]
    BadEscape,
    #[error("%-escapes are not UTF-8")]
    NotUtf8,
}

/// Decodes `%XX` escapes (UTF-8).
pub(crate) fn decode(s: &str) -> Result<String, DecodeError> {
    if !s.contains('%') {
        return Ok(s.to_string());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or(DecodeError::BadEscape)?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| DecodeError::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MY: &[&str] = &["mysql", "mariadb"];

    #[test]
    fn parses_the_usual_shapes() {
        let u = DbUrl::parse("mysql://root:s%40cret@127.0.0.1:3307/sbtest", MY).unwrap();
        assert_eq!(u.user.as_deref(), Some("root"));
        assert_eq!(u.password.as_deref(), Some("s@cret"));
        assert_eq!(u.host.as_deref(), Some("127.0.0.1"));
        assert_eq!(u.port, Some(3307));
        assert_eq!(u.database.as_deref(), Some("sbtest"));
        let u = DbUrl::parse("mariadb://u@db.example/x", MY).unwrap();
        assert_eq!((u.port, u.password), (None, None));
        let u = DbUrl::parse("mysql://u:p@[::1]:33/x", MY).unwrap();
        assert_eq!((u.host.as_deref(), u.port), (Some("::1"), Some(33)));
        let u = DbUrl::parse("mysql://u:a/b@c@h/x", MY).unwrap();
        assert_eq!(u.password.as_deref(), Some("a/b@c"));
        assert_eq!(u.host.as_deref(), Some("h"));
        let u = DbUrl::parse("mysql://root@/sb?socket=/run/my%20sql/mysqld.sock", MY).unwrap();
        assert_eq!(u.host, None);
        assert_eq!(u.param("socket"), Some("/run/my sql/mysqld.sock"));
        let u = DbUrl::parse("mysql://root@localhost", MY).unwrap();
        assert_eq!(u.database, None);
        assert!(u.require_database("mysql://root@localhost").is_err());
    }

    #[test]
    fn percent_escapes_decode_or_say_what_is_wrong() {
        assert_eq!(decode("a%20b%C3%A9"), Ok("a bé".to_string()));
        assert_eq!(decode("plain"), Ok("plain".to_string()));
        assert_eq!(decode("a%2"), Err(DecodeError::BadEscape));
        assert_eq!(decode("%zz"), Err(DecodeError::BadEscape));
        assert_eq!(decode("%ff"), Err(DecodeError::NotUtf8));
        let e = DbUrl::parse("mysql://u@h/db%ff", MY).unwrap_err();
        assert_eq!(
            e.to_string(),
            "malformed target 'mysql://u@h/db%ff': database name: %-escapes are not UTF-8"
        );
    }

    #[test]
    fn errors_never_show_the_password() {
        for url in [
            "mysql://root:hunter2@h:notaport/db",
            "mysql://root:hunter2@h:0/db",
            "oracle://root:hunter2@h/db",
            "mysql://root:hunter2%zz@h/db",
            "mysql://root:hunter2@[::1/db",
            "mysql://root:hun/ter2@h:99999/db",
            "mysql://root:hunter2@h/db?password=hunter2&x=1",
            "mysql:/root:hunter2@h/db",
            "mysql://root:hun?ter2@h/db",
            "mysql://root:hun?ter2@h:3306/db?socket=/x",
        ] {
            let e = match DbUrl::parse(url, MY) {
                Err(e) => e,
                Ok(u) => u.check_params(url, &["socket"]).unwrap_err(),
            };
            let text = e.to_string();
            assert!(
                !text.contains("hunter2") && !text.contains("ter2"),
                "{text}"
            );
        }
        assert_eq!(redact_url("mysql://u:a/b@h/db"), "mysql://u:***@h/db");
        // A '?' in the password: the URL does not parse, and is still hidden.
        assert_eq!(redact_url("mysql://u:a?b@h/db"), "mysql://u:***@h/db");
        assert_eq!(
            redact_url("mysql://u:a?b@h/db?socket=/s"),
            "mysql://u:***@h/db?socket=/s"
        );
        assert_eq!(
            redact_url("mysql://u@h/db?socket=/s"),
            "mysql://u@h/db?socket=/s"
        );
        // Everything to the last '@' is the user info, whatever it holds.
        assert_eq!(
            redact_url("postgres://bench:SEC@RET?x@127.0.0.1:20432/sbtest"),
            "postgres://bench:***@127.0.0.1:20432/sbtest"
        );
        assert_eq!(
            redact_url("mysql://u:a#b%c:d/e@h/db?socket=/s"),
            "mysql://u:***@h/db?socket=/s"
        );
        assert_eq!(redact_url("mysql://x/y:pw@h/db"), "mysql://***@h/db");
        assert!(DbUrl::parse("mysql://u:SEC@RET?x@h/db", MY).is_err());
        assert_eq!(
            DbUrl::parse("mysql://u:a#b:c@h/db", MY)
                .unwrap()
                .password
                .as_deref(),
            Some("a#b:c")
        );
        assert_eq!(redact_url("mysql:/root:pw@h/db"), "mysql:/root:***@h/db");
        assert_eq!(redact_url("oracle:/root:pw@h/db"), "oracle:/root:***@h/db");
        let none = |_: &str| false;
        assert_eq!(
            redact_with("mysql:/root:pw@h/db", &none),
            "mysql:/root:pw@h/db"
        );
        assert_eq!(
            redact_with("x?password=pw&y=1", &none),
            "x?password=***&y=1"
        );
    }
}
