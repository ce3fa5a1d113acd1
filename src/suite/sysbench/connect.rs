//! sysbench's connection options on a script's command line
//! (`-- --mysql-host=127.0.0.1 --mysql-port=3307`): rqps connects a script
//! to the server of `--target` (or `--server`), so they are answered with
//! the URL that says the same, the password left to `--password-file` or the
//! environment.

/// sysbench's connection options, each driver's, as keyed (`_` for `-`).
const OPTIONS: &[&str] = &[
    "mysql_host",
    "mysql_port",
    "mysql_user",
    "mysql_password",
    "mysql_db",
    "mysql_socket",
    "pgsql_host",
    "pgsql_port",
    "pgsql_user",
    "pgsql_password",
    "pgsql_db",
    "db_driver",
];

/// The connection options among a script's `args` (`--name=value`), as
/// keyed (`mysql_host`) with their values, in order.
fn given(args: &[String]) -> Vec<(String, String)> {
    args.iter()
        .filter_map(|a| {
            let (name, value) = a.strip_prefix("--")?.split_once('=').unwrap_or((a, ""));
            let key = name.trim_start_matches('-').replace('-', "_");
            OPTIONS
                .contains(&key.as_str())
                .then(|| (key, value.to_string()))
        })
        .collect()
}

/// One line for a script command line that gives sysbench's connection
/// options: they are not rqps's, and the `--target` URL that says the same
/// (sysbench's defaults where one is not given: user and database
/// `sbtest`, the driver's port). `None` when `args` give none.
pub fn hint(args: &[String]) -> Option<String> {
    let given = given(args);
    if given.is_empty() {
        return None;
    }
    let get = |k: &str| {
        given
            .iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let pg = get("db_driver").is_some_and(|d| d == "pgsql")
        || given.iter().any(|(n, _)| n.starts_with("pgsql_"));
    // The URL scheme of the driver's server, its options' prefix and port.
    let (scheme, d, port) = if pg {
        ("postgres://", "pgsql_", "5432")
    } else {
        ("mysql://", "mysql_", "3306")
    };
    let user = get(&format!("{d}user")).unwrap_or_else(|| "sbtest".into());
    let db = get(&format!("{d}db")).unwrap_or_else(|| "sbtest".into());
    let url = match get("mysql_socket").filter(|_| !pg) {
        Some(socket) => format!("{scheme}{user}@/{db}?socket={socket}"),
        None => {
            let host = get(&format!("{d}host")).unwrap_or_else(|| "localhost".into());
            let port = get(&format!("{d}port")).unwrap_or_else(|| port.into());
            format!("{scheme}{user}@{host}:{port}/{db}")
        }
    };
    let shown: Vec<String> = given
        .iter()
        .map(|(n, v)| {
            let n = n.replace('_', "-");
            if n.ends_with("password") {
                format!("--{n}=...")
            } else if v.is_empty() {
                format!("--{n}")
            } else {
                format!("--{n}={v}")
            }
        })
        .collect();
    let password = if given.iter().any(|(n, _)| n.ends_with("_password")) {
        format!(
            "; its password from --password-file FILE or ${}, never on the command line",
            if pg { "PGPASSWORD" } else { "MYSQL_PWD" }
        )
    } else {
        String::new()
    };
    Some(format!(
        "{}: rqps connects a script to the server of --target (or --server), not through sysbench's connection options: leave {} out and give `--target {url}` before --{password}",
        shown.join(" "),
        if shown.len() > 1 { "them" } else { "it" }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn sysbench_s_connection_options_are_answered_with_the_target_url() {
        let m = hint(&words(
            "--mysql-host=127.0.0.1 --mysql-port=3307 --mysql-user=root --tables=2 run",
        ))
        .unwrap();
        assert!(
            m.starts_with("--mysql-host=127.0.0.1 --mysql-port=3307 --mysql-user=root: ")
                && m.contains("`--target mysql://root@127.0.0.1:3307/sbtest`"),
            "{m}"
        );
        let m = hint(&words("--db-driver=pgsql --pgsql-password=secret run")).unwrap();
        assert!(
            m.contains("`--target postgres://sbtest@localhost:5432/sbtest`")
                && m.contains("$PGPASSWORD")
                && !m.contains("secret"),
            "{m}"
        );
        let m = hint(&words("--mysql-socket=/run/mysqld.sock --mysql-db=x")).unwrap();
        assert!(
            m.contains("`--target mysql://sbtest@/x?socket=/run/mysqld.sock`"),
            "{m}"
        );
        assert!(hint(&words("--tables=2 run")).is_none());
    }

    /// The URL in a hint's backquotes (after `--target `).
    fn url_of(m: &str) -> String {
        let at = m.find("`--target ").expect("a --target in backquotes") + 10;
        m[at..at + m[at..].find('`').unwrap()].to_string()
    }

    #[test]
    fn each_hinted_target_is_one_rqps_takes_and_says_what_the_options_said() {
        use crate::engine::url::DbUrl;
        let parsed = |args: &str| {
            let url = url_of(&hint(&words(args)).unwrap());
            let scheme = url.split("://").next().unwrap().to_string();
            let kind = crate::engine::registry::by_scheme(&scheme)
                .unwrap_or_else(|| panic!("no engine kind takes {url}"));
            DbUrl::parse(&url, kind.schemes).unwrap_or_else(|e| panic!("{url}: {e}"))
        };
        let u = parsed("--mysql-host=10.0.0.7 --mysql-port=3307 --mysql-user=bench --mysql-db=b2");
        assert_eq!(
            (
                u.host.as_deref(),
                u.port,
                u.user.as_deref(),
                u.database.as_deref()
            ),
            (Some("10.0.0.7"), Some(3307), Some("bench"), Some("b2"))
        );
        let u = parsed("--pgsql-host=db1 --pgsql-user=pg --pgsql-password=x");
        assert_eq!(
            (u.host.as_deref(), u.port, u.user.as_deref(), u.password),
            (Some("db1"), Some(5432), Some("pg"), None)
        );
        let u = parsed("--mysql-socket=/run/mysqld/mysqld.sock");
        assert_eq!(
            (u.host.as_deref(), u.param("socket"), u.database.as_deref()),
            (None, Some("/run/mysqld/mysqld.sock"), Some("sbtest"))
        );
        // A URL rqps refuses (a port that is not a number) is what the
        // check finds.
        assert!(DbUrl::parse("mysql://sbtest@h:port/sbtest", &["mysql"]).is_err());
    }
}
