//! Where a server password comes from when the target URL has none, so
//! that it never has to be written on a command line.
//!
//! Precedence, first found wins: the URL's password, `--password-file` (or
//! a matrix's `password_file`, which reaches an `rqps run` child as
//! [`CHILD_ENV`]), the engine's own variable (`PGPASSWORD`, `MYSQL_PWD`),
//! then for PostgreSQL the password file of libpq (`PGPASSFILE`, else
//! `~/.pgpass`).
//!
//! Files holding a password must be private: a `--password-file` readable by
//! group or others is refused; a pgpass file that is, is ignored with a
//! warning, as libpq does.

use std::path::{Path, PathBuf};

/// The variable through which a matrix hands a password to an `rqps run`
/// child (instead of its command line); read like `--password-file`.
pub const CHILD_ENV: &str = "RQPS_PASSWORD";

/// The environment variables from which rqps may take a password: removed
/// from the environment of any command a user's script runs (pgbench's
/// `\shell`), so that the command cannot expand or pass them on.
pub const SECRET_ENV: [&str; 3] = [CHILD_ENV, "PGPASSWORD", "MYSQL_PWD"];

/// Whether a file with this mode may hold a password: no permission for
/// group or others (0600 or stricter).
fn private(mode: u32) -> bool {
    mode & 0o077 == 0
}

/// Why a password file cannot be used; each names the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum PasswordFileError {
    #[error("password file {}: cannot read it: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("password file {}: not a regular file", path.display())]
    NotAFile { path: PathBuf },
    #[error(
        "password file {} can be read by group or others (mode {mode:04o}): run `chmod 600 {}`",
        path.display(),
        path.display()
    )]
    NotPrivate { path: PathBuf, mode: u32 },
    #[error("password file {}: the password is not UTF-8", path.display())]
    NotUtf8 { path: PathBuf },
    #[error(
        "password file {}: its first line is empty; write the password on it",
        path.display()
    )]
    Empty { path: PathBuf },
}

/// The password in `path`: its first line, without the line end. Refused
/// when others may read it, with the command that fixes it.
pub fn read_password_file(path: &Path) -> Result<String, PasswordFileError> {
    use std::os::unix::fs::PermissionsExt;
    let read = |source| PasswordFileError::Read {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(read)?;
    if !meta.is_file() {
        return Err(PasswordFileError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let mode = meta.permissions().mode() & 0o777;
    if !private(mode) {
        return Err(PasswordFileError::NotPrivate {
            path: path.to_path_buf(),
            mode,
        });
    }
    let text = std::fs::read(path).map_err(read)?;
    let first = text.split(|&b| b == b'\n').next().unwrap_or_default();
    let first = first.strip_suffix(b"\r").unwrap_or(first);
    let pw = String::from_utf8(first.to_vec()).map_err(|_| PasswordFileError::NotUtf8 {
        path: path.to_path_buf(),
    })?;
    if pw.is_empty() {
        return Err(PasswordFileError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(pw)
}

/// What a driver is told besides its URL: the password of `--password-file`
/// (or [`CHILD_ENV`]), already read.
pub fn explicit_password(file: Option<&Path>) -> Result<Option<String>, PasswordFileError> {
    match file {
        Some(f) => read_password_file(f).map(Some),
        None => Ok(std::env::var(CHILD_ENV).ok().filter(|p| !p.is_empty())),
    }
}

/// A URL (`scheme://user:password@host/...`) without its password, and the
/// password, decoded; `None` when it has none.
pub fn split_url_password(url: &str) -> Option<(String, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let (main, query) = match rest.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (rest, None),
    };
    // As DbUrl::parse: the last '@' ends the user info.
    let (userinfo, hostpart) = main.rsplit_once('@')?;
    let (user, pass) = userinfo.split_once(':')?;
    let password = crate::engine::url::decode(pass).ok()?;
    let mut out = format!("{scheme}://{user}@{hostpart}");
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    Some((out, password))
}

/// One connection as the libpq password file sees it.
pub struct PgKey<'a> {
    pub host: &'a str,
    pub port: u16,
    pub database: &'a str,
    pub user: &'a str,
}

/// The password for `key` from libpq's password file (`PGPASSFILE`, else
/// `~/.pgpass`); `warn` hears why a file was ignored.
pub fn pgpass(key: &PgKey<'_>, warn: &mut dyn FnMut(&str)) -> Option<String> {
    let path = match std::env::var_os("PGPASSFILE") {
        Some(p) if !p.is_empty() => std::path::PathBuf::from(p),
        _ => std::path::PathBuf::from(std::env::var_os("HOME")?).join(".pgpass"),
    };
    pgpass_in(&path, key, warn)
}

/// [`pgpass`] with the file given.
pub fn pgpass_in(path: &Path, key: &PgKey<'_>, warn: &mut dyn FnMut(&str)) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mode = meta.permissions().mode() & 0o777;
    if !private(mode) {
        warn(&format!(
            "password file {} is ignored: it can be read by group or others (mode {mode:04o}); \
             run `chmod 600 {}`",
            path.display(),
            path.display()
        ));
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    // A unix socket in the usual directory is "localhost" to libpq.
    let local = key.host.starts_with('/')
        && matches!(
            key.host.trim_end_matches('/'),
            "/var/run/postgresql" | "/run/postgresql" | "/tmp"
        );
    let port = key.port.to_string();
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .find_map(|line| {
            let f = pgpass_fields(line)?;
            let hit = |pattern: &str, value: &str| pattern == "*" || pattern == value;
            let host_hit = hit(&f[0], key.host) || (local && f[0] == "localhost");
            (host_hit && hit(&f[1], &port) && hit(&f[2], key.database) && hit(&f[3], key.user))
                .then(|| f[4].clone())
        })
}

/// `host:port:database:user:password` with `\:` and `\\` escapes; `None`
/// for a line with fewer fields.
fn pgpass_fields(line: &str) -> Option<[String; 5]> {
    let mut fields: Vec<String> = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    fields.last_mut()?.push(n);
                }
            }
            // The password is the rest of the line, colons and all.
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut()?.push(c),
        }
    }
    fields.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn file(dir: &Path, name: &str, text: &str, mode: u32) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn a_password_file_gives_its_first_line_and_must_be_private() {
        let d = tempfile::tempdir().unwrap();
        let p = file(d.path(), "pw", "s3cr:et\r\nsecond line\n", 0o600);
        assert_eq!(read_password_file(&p).unwrap(), "s3cr:et");
        let p = file(d.path(), "pw2", "only", 0o400);
        assert_eq!(read_password_file(&p).unwrap(), "only");
        for mode in [0o640, 0o604, 0o660] {
            let p = file(d.path(), "open", "pw\n", mode);
            let e = read_password_file(&p).unwrap_err().to_string();
            assert!(e.contains("chmod 600") && !e.contains("pw\n"), "{e}");
        }
        let p = file(d.path(), "empty", "\nrest\n", 0o600);
        assert!(
            read_password_file(&p)
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
        let e = read_password_file(&d.path().join("missing"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot read"), "{e}");
    }

    #[test]
    fn a_url_password_is_taken_out_whole() {
        assert_eq!(
            split_url_password("mysql://u:p%3Fa/s@b@127.0.0.1:3306/db?socket=/x"),
            Some((
                "mysql://u@127.0.0.1:3306/db?socket=/x".to_string(),
                "p?a/s@b".to_string()
            ))
        );
        assert_eq!(split_url_password("postgres://u@h/db"), None);
        assert_eq!(split_url_password("rocksdb:/tmp/x"), None);
    }

    #[test]
    fn pgpass_lines_match_with_wildcards_and_escapes() {
        let d = tempfile::tempdir().unwrap();
        let text = "# comment\n\
                    other:5432:*:*:wrong\n\
                    db1.example:*:sb\\:test:bench:pa\\:ss:with:colons\n\
                    *:5433:*:*:any-host\n\
                    localhost:5432:*:bench:socket\n";
        let p = file(d.path(), "pgpass", text, 0o600);
        let key = |host, port, database| PgKey {
            host,
            port,
            database,
            user: "bench",
        };
        let get = |k: PgKey<'_>| pgpass_in(&p, &k, &mut |m| panic!("unexpected warning: {m}"));
        assert_eq!(
            get(key("db1.example", 1, "sb:test")).as_deref(),
            Some("pa:ss:with:colons")
        );
        assert_eq!(get(key("db1.example", 1, "sbtest")), None);
        assert_eq!(get(key("x", 5433, "y")).as_deref(), Some("any-host"));
        assert_eq!(
            get(key("/var/run/postgresql", 5432, "y")).as_deref(),
            Some("socket")
        );
        assert_eq!(get(key("/srv/pg", 5432, "y")), None);
        // Readable by others: ignored, with a warning that says how to fix it.
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut warnings = Vec::new();
        let mut warn = |m: &str| warnings.push(m.to_string());
        assert_eq!(pgpass_in(&p, &key("x", 5433, "y"), &mut warn), None);
        assert!(warnings[0].contains("chmod 600"), "{warnings:?}");
    }
}
