//! Integration tests that start real PostgreSQL and MariaDB servers.
//!
//! When the binaries are missing the server tests print why and pass (skip), unless
//! `RQPS_REQUIRE_SERVERS=1` is set, in which case they fail.

mod common;
use common::server_available;
use std::fs;
use std::net::TcpStream;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use mysql::prelude::Queryable as _;
use rqps::engine::server::{Recipe, Server, ServerError, ServerSpec, locate};

static PG: Recipe = &rqps::engine::postgres::server::RECIPE;
static MARIADB: Recipe = &rqps::engine::mysql::server::RECIPE;

/// A config file in its own temp dir with a small buffer pool setting.
fn config_file(kind: Recipe) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (name, text) = match kind.key() {
        "postgres" => ("pg.conf", "# test config\nshared_buffers = 64MB\n"),
        "mariadb" => ("my.cnf", "# test config\ninnodb_buffer_pool_size = 64M\n"),
        other => panic!("this test has no case for {other}"),
    };
    let path = dir.path().join(name);
    fs::write(&path, text).unwrap();
    (dir, path)
}

fn start(kind: Recipe, keep: bool, config: Option<PathBuf>) -> (Server, Vec<String>) {
    let spec = ServerSpec {
        config,
        keep,
        ..ServerSpec::new(kind)
    };
    let mut notes = Vec::new();
    let srv = Server::start(&spec, &mut |n| {
        eprintln!("note: {n}");
        notes.push(n.to_string());
    })
    .unwrap_or_else(|e| panic!("starting {kind} failed: {e}"));
    (srv, notes)
}

fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn pg_client(srv: &Server) -> postgres::Client {
    postgres::Client::connect(&srv.url(), postgres::NoTls).expect("connect via url()")
}

/// Nothing listens on the port (a login would fail without the password
/// anyway, so a TCP connect is what tells a stopped server).
fn unreachable(port: u16) -> bool {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_err()
}

fn pg_unreachable(port: u16) -> bool {
    unreachable(port)
}

fn my_conn(srv: &Server) -> mysql::Conn {
    let opts = mysql::Opts::from_url(&srv.url()).expect("url() parses");
    mysql::Conn::new(opts).expect("connect via url()")
}

fn my_unreachable(port: u16) -> bool {
    unreachable(port)
}

/// Runs `program` with `args` as user nobody (through setpriv; needs root).
fn as_nobody(program: &Path, args: &[&str]) -> Output {
    Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        .arg(program)
        .args(args)
        .env_remove("PGPASSWORD")
        .env_remove("MYSQL_PWD")
        .current_dir("/")
        .output()
        .expect("setpriv runs")
}

/// What every throwaway server keeps from others: no password on the
/// server's command line, the password in a 0600 file of rqps's user, and a
/// server that does not run as root.
fn check_private(srv: &Server) {
    assert_eq!(srv.password().len(), 32);
    assert!(srv.url().contains(srv.password()));
    assert!(!srv.url_without_password().contains(srv.password()));
    let cmdline = fs::read(format!("/proc/{}/cmdline", srv.pid())).unwrap();
    assert!(
        !String::from_utf8_lossy(&cmdline).contains(srv.password()),
        "the password is on the server's command line"
    );
    let md = fs::metadata(srv.password_file()).unwrap();
    assert_eq!(md.permissions().mode() & 0o777, 0o600);
    // SAFETY: geteuid has no preconditions.
    assert_eq!(md.uid(), unsafe { libc::geteuid() });
    assert_eq!(
        fs::read_to_string(srv.password_file()).unwrap(),
        srv.password()
    );
    let status = fs::read_to_string(format!("/proc/{}/status", srv.pid())).unwrap();
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap();
    assert_ne!(uid, "0", "the server runs as root");
    // Nothing that handed the password to the server is left.
    for name in ["init.sql", "pwfile"] {
        assert!(!srv.temp_dir().join(name).exists(), "{name} is left");
    }
}

/// Common checks on a freshly started server.
fn check_basics(srv: &Server, kind: Recipe) {
    assert_eq!(srv.recipe(), kind);
    assert_eq!(srv.host(), "127.0.0.1");
    assert!(
        ![0, 3306, 5432].contains(&srv.port()),
        "port {}",
        srv.port()
    );
    assert_eq!(srv.database(), "sbtest");
    let (scheme, user) = match kind.key() {
        "postgres" => ("postgres", "postgres"),
        "mariadb" => ("mysql", "root"),
        other => panic!("this test has no case for {other}"),
    };
    assert_eq!(srv.user(), user);
    assert_eq!(
        srv.url(),
        format!(
            "{scheme}://{user}:{}@127.0.0.1:{}/sbtest",
            srv.password(),
            srv.port()
        )
    );
    check_private(srv);
    assert!(srv.data_dir().is_dir());
    assert!(srv.data_dir().starts_with(srv.temp_dir()));
    assert!(srv.log_path().is_file());
    assert!(process_exists(srv.pid()), "pid {} not running", srv.pid());
    let version = srv.binary_version();
    match kind.key() {
        "postgres" => {
            assert!(version.contains("PostgreSQL"), "{version}");
            let first =
                fs::read_to_string(srv.data_dir().join("postmaster.pid")).unwrap_or_default();
            assert_eq!(first.lines().next(), Some(srv.pid().to_string().as_str()));
        }
        "mariadb" => assert!(version.contains("MariaDB"), "{version}"),
        other => panic!("this test has no case for {other}"),
    }
    assert!(
        srv.socket_path().unwrap().exists(),
        "socket {:?}",
        srv.socket_path()
    );
}

#[test]
fn postgres_start_config_query_stop_removes_files() {
    if !server_available(PG) {
        return;
    }
    let (_cfg_dir, cfg) = config_file(PG);
    let (srv, notes) = start(PG, false, Some(cfg));
    check_basics(&srv, PG);
    if is_root() {
        assert!(notes.iter().any(|n| n.contains("nobody")), "{notes:?}");
    }

    let mut c = pg_client(&srv);
    let version: String = c.query_one("SELECT version()", &[]).unwrap().get(0);
    assert!(version.starts_with("PostgreSQL"), "{version}");
    let sb: String = c.query_one("SHOW shared_buffers", &[]).unwrap().get(0);
    assert_eq!(sb, "64MB");
    let db: String = c
        .query_one("SELECT current_database()", &[])
        .unwrap()
        .get(0);
    assert_eq!(db, "sbtest");
    c.batch_execute(
        "CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'a'), (2, 'b')",
    )
    .unwrap();
    let n: i64 = c.query_one("SELECT count(*) FROM t", &[]).unwrap().get(0);
    assert_eq!(n, 2);
    drop(c);

    // The unix socket works too.
    let mut s = postgres::Config::new()
        .host_path(srv.socket_dir())
        .port(srv.port())
        .user("postgres")
        .dbname("sbtest")
        .connect(postgres::NoTls)
        .expect("connect via unix socket");
    let one: i32 = s.query_one("SELECT 1", &[]).unwrap().get(0);
    assert_eq!(one, 1);
    drop(s);

    let (root, pid, port) = (srv.temp_dir().to_path_buf(), srv.pid(), srv.port());
    srv.stop().expect("clean stop");
    assert!(!root.exists(), "{} still exists", root.display());
    assert!(!process_exists(pid), "postmaster {pid} still running");
    assert!(pg_unreachable(port));
}

#[test]
fn postgres_keep_leaves_data_dir() {
    if !server_available(PG) {
        return;
    }
    let (srv, _) = start(PG, true, None);
    let mut c = pg_client(&srv);
    c.batch_execute("CREATE TABLE kept (id int)").unwrap();
    drop(c);
    let (root, data) = (srv.temp_dir().to_path_buf(), srv.data_dir().to_path_buf());
    let mut notes = Vec::new();
    srv.stop_with_notes(&mut |n| notes.push(n.to_string()))
        .expect("clean stop");
    assert!(data.join("PG_VERSION").is_file());
    assert!(
        notes.iter().any(|n| n.contains(&*root.to_string_lossy())),
        "{notes:?}"
    );
    let pw = fs::read_to_string(root.join("password")).unwrap();
    assert!(notes.iter().all(|n| !n.contains(&pw)), "{notes:?}");
    assert!(
        notes
            .iter()
            .any(|n| n.contains(&*root.join("password").to_string_lossy())),
        "{notes:?}"
    );
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn postgres_kill_makes_server_unreachable() {
    if !server_available(PG) {
        return;
    }
    let (mut srv, _) = start(PG, false, None);
    let (root, pid, port) = (srv.temp_dir().to_path_buf(), srv.pid(), srv.port());
    assert!(!pg_unreachable(port));
    assert!(srv.is_running());
    srv.kill();
    assert!(!srv.is_running());
    assert!(!process_exists(pid));
    assert!(pg_unreachable(port), "server still reachable after kill()");
    srv.stop().expect("stop after kill cleans up");
    assert!(!root.exists());
}

/// `Cpus_allowed_list` of a process or thread's `/proc/.../status`.
fn cpus_allowed(status: &str) -> String {
    cpus_allowed_if_alive(status)
        .unwrap_or_else(|| panic!("{status}: gone or no Cpus_allowed_list"))
}

/// The same, or None when the process has ended (its status is gone).
fn cpus_allowed_if_alive(status: &str) -> Option<String> {
    let text = fs::read_to_string(status).ok()?;
    let list = text
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"));
    Some(
        list.unwrap_or_else(|| panic!("{status} has no Cpus_allowed_list"))
            .trim()
            .to_string(),
    )
}

/// The pids whose parent is `pid` (from /proc/*/stat).
fn children(pid: u32) -> Vec<u32> {
    fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                // pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
                s.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    == Some(pid)
            })
        })
        .collect()
}

/// `--server-cpus 0`: the postmaster and every process it started run on CPU
/// 0 only, as the kernel reports it in /proc; the thread that started the
/// server gets its own CPU set back.
#[test]
fn server_cpus_0_keeps_postgres_and_its_processes_on_cpu_0() {
    if !server_available(PG) {
        return;
    }
    let me = "/proc/thread-self/status";
    let before = cpus_allowed(me);
    let spec = ServerSpec {
        cpus: Some(rqps::util::cpus::CpuSet::parse_on_this_machine("0").unwrap()),
        ..ServerSpec::new(PG)
    };
    let srv = Server::start(&spec, &mut |n| eprintln!("note: {n}")).expect("postgres starts");
    assert_eq!(
        cpus_allowed(me),
        before,
        "the starting thread stays unpinned"
    );
    let pid = srv.pid();
    assert_eq!(cpus_allowed(&format!("/proc/{pid}/status")), "0");
    let kids = children(pid);
    assert!(!kids.is_empty(), "postgres started no background process");
    for k in kids {
        // A child may end between the listing and the read (PostgreSQL's
        // startup process does, once recovery is done): only a live one
        // has a CPU set to check.
        if let Some(allowed) = cpus_allowed_if_alive(&format!("/proc/{k}/status")) {
            assert_eq!(allowed, "0", "child {k}");
        }
    }
    drop(srv);
    // Without --server-cpus the server runs wherever this process may.
    let (srv, _) = start(PG, false, None);
    assert_eq!(cpus_allowed(&format!("/proc/{}/status", srv.pid())), before);
}

#[test]
fn postgres_drop_stops_server() {
    if !server_available(PG) {
        return;
    }
    let (srv, _) = start(PG, false, None);
    let (root, pid, port) = (srv.temp_dir().to_path_buf(), srv.pid(), srv.port());
    drop(srv);
    assert!(!process_exists(pid));
    assert!(!root.exists());
    assert!(pg_unreachable(port));
}

#[test]
fn mariadb_start_config_query_stop_removes_files() {
    if !server_available(MARIADB) {
        return;
    }
    let (_cfg_dir, cfg) = config_file(MARIADB);
    let (srv, _) = start(MARIADB, false, Some(cfg));
    check_basics(&srv, MARIADB);

    let mut c = my_conn(&srv);
    let version: Option<String> = c.query_first("SELECT version()").unwrap();
    assert!(
        version.as_deref().unwrap_or("").contains("MariaDB"),
        "{version:?}"
    );
    let bp: Option<u64> = c.query_first("SELECT @@innodb_buffer_pool_size").unwrap();
    assert_eq!(bp, Some(67_108_864));
    let db: Option<String> = c.query_first("SELECT DATABASE()").unwrap();
    assert_eq!(db.as_deref(), Some("sbtest"));
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
        .unwrap();
    let n: Option<u64> = c.query_first("SELECT COUNT(*) FROM t").unwrap();
    assert_eq!(n, Some(2));
    drop(c);

    // The unix socket works too.
    let opts = mysql::OptsBuilder::new()
        .socket(srv.socket_path().map(|p| p.to_string_lossy().into_owned()))
        .user(Some("root"))
        .pass(Some(srv.password()))
        .db_name(Some("sbtest"));
    let mut s = mysql::Conn::new(opts).expect("connect via unix socket");
    let one: Option<u32> = s.query_first("SELECT 1").unwrap();
    assert_eq!(one, Some(1));
    drop(s);

    let (root, pid, port) = (srv.temp_dir().to_path_buf(), srv.pid(), srv.port());
    srv.stop().expect("clean stop");
    assert!(!root.exists(), "{} still exists", root.display());
    assert!(!process_exists(pid), "mariadbd {pid} still running");
    assert!(my_unreachable(port));
}

#[test]
fn mariadb_keep_leaves_data_dir() {
    if !server_available(MARIADB) {
        return;
    }
    let (srv, _) = start(MARIADB, true, None);
    let mut c = my_conn(&srv);
    c.query_drop("CREATE TABLE kept (id INT)").unwrap();
    drop(c);
    let (root, data) = (srv.temp_dir().to_path_buf(), srv.data_dir().to_path_buf());
    let mut notes = Vec::new();
    srv.stop_with_notes(&mut |n| notes.push(n.to_string()))
        .expect("clean stop");
    assert!(data.join("sbtest").join("kept.frm").is_file());
    assert!(
        notes.iter().any(|n| n.contains(&*root.to_string_lossy())),
        "{notes:?}"
    );
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn mariadb_kill_makes_server_unreachable() {
    if !server_available(MARIADB) {
        return;
    }
    let (mut srv, _) = start(MARIADB, false, None);
    let (root, pid, port) = (srv.temp_dir().to_path_buf(), srv.pid(), srv.port());
    assert!(!my_unreachable(port));
    srv.kill();
    assert!(!srv.is_running());
    assert!(!process_exists(pid));
    assert!(my_unreachable(port), "server still reachable after kill()");
    srv.stop().expect("stop after kill cleans up");
    assert!(!root.exists());
}

#[test]
fn mariadb_drop_stops_server() {
    if !server_available(MARIADB) {
        return;
    }
    let (srv, _) = start(MARIADB, false, None);
    let (root, pid, port) = (srv.temp_dir().to_path_buf(), srv.pid(), srv.port());
    drop(srv);
    assert!(!process_exists(pid));
    assert!(!root.exists());
    assert!(my_unreachable(port));
}

/// Whether a test that needs a second local user can run (as root, with
/// setpriv); says so when not.
fn can_switch_users() -> bool {
    let ok = is_root() && Path::new("/usr/bin/setpriv").exists();
    if !ok {
        eprintln!("skipping: needs root and setpriv to run a client as user nobody");
    }
    ok
}

#[test]
fn another_local_user_cannot_log_in_to_a_throwaway_postgres() {
    if !server_available(PG) || !can_switch_users() {
        return;
    }
    let (srv, _) = start(PG, false, None);
    let psql = locate(PG, None).unwrap().server.with_file_name("psql");
    let port = srv.port().to_string();
    let socket_dir = srv.socket_dir().to_string_lossy().into_owned();
    for host in ["127.0.0.1", socket_dir.as_str()] {
        for user in ["postgres", "nobody"] {
            let args = ["-w", "-h", host, "-p", &port, "-U", user, "-d", "sbtest"];
            let out = as_nobody(&psql, &[&args[..], &["-c", "SELECT 1"]].concat());
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success(),
                "nobody logged in as {user} via {host}"
            );
            assert!(
                err.contains("authentication failed") || err.contains("no password supplied"),
                "{user} via {host}: {err}"
            );
        }
    }
    // rqps's own user gets in over the socket (peer, mapped to postgres).
    let out = Command::new(&psql)
        .args(["-w", "-h", &socket_dir, "-p", &port, "-U", "postgres"])
        .args(["-d", "sbtest", "-c", "SELECT 1"])
        .env_remove("PGPASSWORD")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn another_local_user_cannot_log_in_to_a_throwaway_mariadb() {
    if !server_available(MARIADB) || !can_switch_users() {
        return;
    }
    let (srv, _) = start(MARIADB, false, None);
    let client = Path::new("/usr/bin/mariadb");
    let port = srv.port().to_string();
    let socket = srv.socket_path().unwrap().to_string_lossy().into_owned();
    for user in ["root", "nobody", ""] {
        for how in [
            ["-h", "127.0.0.1", "-P", &port],
            ["-S", &socket, "-P", &port],
        ] {
            let args = [
                &["--no-defaults", "--skip-password", "-u", user][..],
                &how[..],
                &["-e", "SELECT 1"],
            ]
            .concat();
            let out = as_nobody(client, &args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success(),
                "nobody logged in as {user:?} {how:?}"
            );
            assert!(err.contains("Access denied"), "{user:?} {how:?}: {err}");
        }
    }
    // And rqps, with the password, may write files only into the server's own directory.
    let mut c = my_conn(&srv);
    let dir: Option<String> = c.query_first("SELECT @@secure_file_priv").unwrap();
    let dir = PathBuf::from(dir.unwrap());
    assert!(dir.starts_with(srv.temp_dir()), "{}", dir.display());
    let outside = srv.temp_dir().join("outfile.txt");
    let e = c
        .query_drop(format!("SELECT 1 INTO OUTFILE '{}'", outside.display()))
        .unwrap_err();
    assert!(e.to_string().contains("secure-file-priv"), "{e}");
}

#[test]
fn locate_with_bogus_basedir_is_a_clear_error() {
    let bogus = Path::new("/nonexistent/rqps-bogus-basedir");
    let empty = tempfile::tempdir().unwrap();
    for kind in [PG, MARIADB] {
        for dir in [bogus, empty.path()] {
            let err = locate(kind, Some(dir)).expect_err("bogus basedir must fail");
            assert!(matches!(err, ServerError::BinaryNotFound { .. }), "{err:?}");
            let msg = err.to_string();
            eprintln!("{msg}");
            assert!(msg.contains(&*dir.to_string_lossy()), "{msg}");
            assert!(msg.contains("--basedir"), "{msg}");
            assert!(msg.contains(kind.product()), "{msg}");
            assert!(!msg.contains('\n'), "one line: {msg}");
        }
    }
}

#[test]
fn start_with_missing_config_file_is_a_clear_error() {
    for kind in [PG, MARIADB] {
        if !server_available(kind) {
            continue;
        }
        let parent = tempfile::tempdir().unwrap();
        let spec = ServerSpec {
            config: Some(PathBuf::from("/nonexistent/rqps.conf")),
            parent_dir: Some(parent.path().to_path_buf()),
            ..ServerSpec::new(kind)
        };
        let err = Server::start(&spec, &mut |_| {}).expect_err("missing config must fail");
        assert!(matches!(err, ServerError::BadConfig { .. }), "{err:?}");
        assert!(err.to_string().contains("/nonexistent/rqps.conf"), "{err}");
        // Nothing was left behind.
        assert_eq!(fs::read_dir(parent.path()).unwrap().count(), 0);
    }
}

#[test]
fn bad_server_option_fails_fast_with_log_tail() {
    if !server_available(PG) {
        return;
    }
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = cfg_dir.path().join("bad.conf");
    fs::write(&cfg, "shared_buffers = banana\n").unwrap();
    let parent = tempfile::tempdir().unwrap();
    let spec = ServerSpec {
        config: Some(cfg),
        parent_dir: Some(parent.path().to_path_buf()),
        ..ServerSpec::new(PG)
    };
    let t = std::time::Instant::now();
    let err = Server::start(&spec, &mut |_| {}).expect_err("bad option must fail");
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "took {:?}",
        t.elapsed()
    );
    assert!(matches!(err, ServerError::StartFailed { .. }), "{err:?}");
    assert!(err.to_string().contains("shared_buffers"), "{err}");
    assert_eq!(fs::read_dir(parent.path()).unwrap().count(), 0);
}

#[test]
fn located_binaries_are_described() {
    for kind in [PG, MARIADB] {
        if !server_available(kind) {
            continue;
        }
        let bins = locate(kind, None).unwrap();
        let text = bins.to_string();
        assert!(text.contains(&*bins.server.to_string_lossy()), "{text}");
        assert!(bins.version().unwrap().contains(kind.product()));
    }
    if Path::new("/usr/lib/postgresql/15/bin/initdb").exists() {
        let b = locate(PG, Some(Path::new("/usr/lib/postgresql/15"))).unwrap();
        assert_eq!(b.init, Path::new("/usr/lib/postgresql/15/bin/initdb"));
    }
}

#[test]
fn server_kind_parses() {
    use rqps::engine::registry::server_by_name;
    assert_eq!(server_by_name("pg"), Ok(PG));
    assert_eq!(server_by_name("MariaDB"), Ok(MARIADB));
    // Oracle MySQL has a recipe of its own.
    let mysql: Recipe = &rqps::engine::mysql::oracle::RECIPE;
    assert_eq!(server_by_name("MySQL"), Ok(mysql));
    assert!(server_by_name("oracle").is_err());
}

/// A fake engine tree under `dir`: `bin/NAME` for each name, a script that
/// touches `marker` (it ran) and fails. Modes 0755, owned by rqps's user.
fn fake_tree(dir: &Path, names: &[&str], marker: &Path) -> PathBuf {
    let base = dir.join("tree");
    fs::create_dir_all(base.join("bin")).unwrap();
    fs::set_permissions(&base, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(base.join("bin"), fs::Permissions::from_mode(0o755)).unwrap();
    for name in names {
        let p = base.join("bin").join(name);
        fs::write(
            &p,
            format!("#!/bin/sh\ntouch {}\nexit 1\n", marker.display()),
        )
        .unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    }
    base
}

/// `rqps run --server KIND --basedir BASE` (a short SQL run): its output.
fn run_with_basedir(kind: &str, base: &Path, results: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rqps"))
        .args([
            "run",
            "--suite",
            "select1",
            "--profile",
            "ci",
            "--server",
            kind,
        ])
        .arg("--basedir")
        .arg(base)
        .arg("--results")
        .arg(results)
        .output()
        .unwrap()
}

#[test]
fn a_basedir_tree_another_user_could_change_runs_nothing_not_even_its_version() {
    let d = tempfile::tempdir().unwrap();
    let marker = d.path().join("ran");
    let results = d.path().join("r");
    for (kind, names) in [
        ("postgres", &["postgres", "initdb"][..]),
        ("mariadb", &["mariadbd", "mariadb-install-db"][..]),
        ("mysql", &["mysqld"][..]),
    ] {
        let base = fake_tree(d.path(), names, &marker);
        // A world-writable bin/: any user could put a mysqld there.
        fs::set_permissions(base.join("bin"), fs::Permissions::from_mode(0o777)).unwrap();
        let o = run_with_basedir(kind, &base, &results);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{kind}: {err}");
        assert!(
            err.contains("refusing to run anything from --basedir")
                && err.contains("/tree/bin is writable by every user (mode 777)")
                && err.contains("chmod go-w"),
            "{kind}: {err}"
        );
        assert!(!marker.exists(), "{kind}: its program ran");
        fs::set_permissions(base.join("bin"), fs::Permissions::from_mode(0o755)).unwrap();
        // Another user's tree: root used to run its `--version` as uid 0.
        if is_root() {
            for entry in std::iter::once(base.clone()).chain(
                fs::read_dir(base.join("bin"))
                    .unwrap()
                    .map(|e| e.unwrap().path()),
            ) {
                std::os::unix::fs::lchown(&entry, Some(65534), Some(65534)).unwrap();
            }
            std::os::unix::fs::lchown(base.join("bin"), Some(65534), Some(65534)).unwrap();
            let o = run_with_basedir(kind, &base, &results);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{kind}: {err}");
            assert!(
                err.contains("/tree is owned by ") && err.contains("uid 65534"),
                "{kind}: {err}"
            );
            assert!(!marker.exists(), "{kind}: its program ran as root");
            std::os::unix::fs::lchown(&base, Some(0), Some(0)).unwrap();
            let o = run_with_basedir(kind, &base, &results);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains("/tree/bin is owned by "), "{kind}: {err}");
            assert!(!marker.exists(), "{kind}: its program ran as root");
            chown_to_root(&base);
        }
        // The quiet case: the same tree, private to rqps's user, is run.
        let o = run_with_basedir(kind, &base, &results);
        assert!(
            marker.exists(),
            "{kind}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(!String::from_utf8_lossy(&o.stderr).contains("refusing"));
        fs::remove_file(&marker).unwrap();
        fs::remove_dir_all(&base).unwrap();
    }
}

/// Gives the tree back to rqps's user (root).
fn chown_to_root(base: &Path) {
    for entry in [base.to_path_buf(), base.join("bin")].into_iter().chain(
        fs::read_dir(base.join("bin"))
            .unwrap()
            .map(|e| e.unwrap().path()),
    ) {
        std::os::unix::fs::lchown(&entry, Some(0), Some(0)).unwrap();
    }
}
