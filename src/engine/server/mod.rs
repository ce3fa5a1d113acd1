//! Throwaway PostgreSQL and MariaDB/MySQL server instances for benchmarking.
//!
//! [`Server::start`] creates a temporary directory, initialises a fresh data directory in it with
//! the installed binaries (`initdb` / `mariadb-install-db`), applies an optional config file,
//! starts the server on a free loopback port, waits until it accepts connections and creates the
//! database `sbtest`. [`Server::stop`] (or dropping the [`Server`]) shuts it down and removes the
//! temporary directory unless [`ServerSpec::keep`] is set.
//!
//! Layout of the temporary directory (`rqps-postgres-XXXXXX` / `rqps-mariadb-XXXXXX`):
//! `data/` (data directory), `run/` (unix socket, pid file), `tmp/` (MariaDB tmpdir),
//! `server.log`, `init.log`, `password`, for MariaDB the generated `my.cnf`, and for a
//! server that requires TLS ([`ServerSpec::require_tls`]) its certificates in `tls/` (see
//! [`tls`]).
//!
//! Only rqps can use the server: each instance gets a random password made at
//! start, which the server's superuser needs over TCP. It reaches the server
//! and the driver in memory or through 0600 files that only rqps's user and
//! the server's user can read (removed once the server is up), never on a
//! command line; `password` (0600, rqps's user) keeps it for `--keep`. Unix
//! socket logins are refused for every other local user. When rqps runs as
//! root, the server runs as `nobody` (see [`ServerRecipe::refuses_root`]).
//!
//! What differs between servers (binaries, initialisation, start command,
//! probe, names) is a [`ServerRecipe`], implemented in each engine kind's
//! folder and reached through the kind's `server`; this module names no
//! engine, so the kinds depend on it and never the other way round.

pub mod tls;
pub mod trust;
pub mod util;

use std::fmt;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use util::{set_mode, write_private};

/// How long [`Server::start`] waits for the server to accept connections.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a clean shutdown may take before the server is killed.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(60);
/// How long `initdb` / `mariadb-install-db` may run.
pub(crate) const INIT_TIMEOUT: Duration = Duration::from_secs(300);
/// Limit for one connection attempt (connect + a query) while waiting for the server.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// Limit for the statements run after startup (CREATE DATABASE).
const SQL_TIMEOUT: Duration = Duration::from_secs(60);
/// Lines of a log shown in error messages.
const TAIL_LINES: usize = 20;
/// How many ports are tried when the chosen one was taken in the meantime.
const PORT_ATTEMPTS: usize = 3;
/// Longest unix socket path (sun_path is 108 bytes including the NUL).
const MAX_SOCKET_PATH: usize = 107;

/// The throwaway-server recipe of one engine kind: how to find, initialise,
/// start, probe and stop its server. Declared here and implemented in each
/// kind's folder (`engine/<name>/server.rs`); an
/// [`EngineKind`](crate::engine::kind::EngineKind) reaches its recipe through
/// its `server` field, so this module runs servers without naming any engine.
/// The recipe's names (`MariaDB`, `mariadb`) are the server's, which may
/// differ from the kind's (`mysql`): they are the ones `--server`, the engine
/// cache and stored results (`server.kind`) use.
pub trait ServerRecipe: Sync {
    /// Human-readable product name (`PostgreSQL`, `MariaDB`).
    fn product(&self) -> &'static str;
    /// The name used on the command line, in engine references, in the
    /// engine cache and in stored results (`postgres`, `mariadb`).
    fn key(&self) -> &'static str;
    /// The URL scheme of the running server's target.
    fn scheme(&self) -> &'static str;
    /// The superuser rqps connects as.
    fn user(&self) -> &'static str;
    /// The unix socket file in the socket directory for `port`.
    fn socket_file(&self, port: u16) -> String;
    /// The longest name the server creates in its socket directory (its lock
    /// file), which must fit a unix socket path.
    fn longest_socket_name(&self) -> &'static str;
    /// The signal that asks the server for a quick clean shutdown.
    fn stop_signal(&self) -> i32;
    /// Whether the server must not run as root (then rqps runs it as
    /// `nobody`): PostgreSQL refuses to, and a MariaDB running as root could
    /// write root-owned files anywhere.
    fn refuses_root(&self) -> bool {
        true
    }
    /// The settings that limit what clients open (connections, prepared
    /// statements), with their defaults: a throwaway server gets them
    /// raised for its plan ([`ServerSpec::need`]).
    fn sized_settings(&self) -> &'static [crate::engine::capacity::SizedSetting] {
        &[]
    }
    /// What to pass as `--basedir` when the one given is not a directory.
    fn basedir_hint(&self) -> &'static str;
    /// Finds the binaries: under `basedir`, else on PATH and in the usual
    /// Debian locations.
    fn locate(&self, basedir: Option<&Path>) -> Result<Binaries, ServerError>;
    /// Initialises `srv`'s data directory (with the user's config lines).
    fn init(&self, srv: &Server, bins: &Binaries, config: Option<&str>) -> Result<(), ServerError>;
    /// Starts the server process on `srv`'s port and socket.
    fn spawn(&self, srv: &Server, bins: &Binaries) -> Result<Child, ServerError>;
    /// One connection attempt that also checks that the server answering on
    /// `port` runs on `data_dir` (is ours).
    fn probe(&self, port: u16, password: &str, data_dir: &Path) -> Result<(), ProbeError>;
    /// Creates database `db` on the server at `port`.
    fn create_database(&self, port: u16, password: &str, db: &str) -> Result<(), ProbeError>;
    /// The server's main process when it is not the spawned child.
    fn main_pid(&self, _data_dir: &Path) -> Option<u32> {
        None
    }
    /// The query parameter of rqps's URLs that makes its client insist on
    /// TLS (`required`) or use none (`sslmode=require`, `ssl-mode=DISABLED`).
    fn tls_param(&self, required: bool) -> &'static str;
    /// What the output of a failed initialisation or start (`log`) says
    /// about a setting of the config that this server does not know (an
    /// older version than the setting, or a typo): the setting, as one line
    /// that says what to do. `None` when the failure is something else.
    fn refused_setting(&self, _log: &str) -> Option<String> {
        None
    }
    /// The TLS version and cipher of the last login that `log` (the
    /// server's log) records, for servers that log them when started with
    /// [`ServerSpec::require_tls`]: how to learn what another program's
    /// client negotiated.
    fn logged_tls(&self, _log: &str) -> Option<String> {
        None
    }
}

impl fmt::Display for dyn ServerRecipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.product())
    }
}

impl fmt::Debug for dyn ServerRecipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ServerRecipe({})", self.key())
    }
}

impl PartialEq for dyn ServerRecipe {
    /// Recipes are singletons: two are the same when their keys are.
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for dyn ServerRecipe {}

/// The recipe of a server kind.
pub type Recipe = &'static dyn ServerRecipe;

/// What to start.
#[derive(Clone, Debug)]
pub struct ServerSpec {
    /// Which server (an engine kind's `server`).
    pub recipe: Recipe,
    /// Install prefix: e.g. `/usr/lib/postgresql/15` (has `bin/`), or a MariaDB tree with
    /// `bin/` and `scripts/` (and maybe `lib/` or `libs/`, added to `LD_LIBRARY_PATH`).
    pub basedir: Option<PathBuf>,
    /// File with `postgresql.conf` lines, or `my.cnf` `[mysqld]` lines (header optional).
    pub config: Option<PathBuf>,
    /// The text of `config` when the caller has read it already (`rqps run`
    /// reads its `--config` once, when it checks it); else `config` is read.
    pub config_text: Option<String>,
    /// Keep the temporary directory (data, logs) after stop.
    pub keep: bool,
    /// Where to create the temporary directory (default [`std::env::temp_dir`]).
    pub parent_dir: Option<PathBuf>,
    /// Pin the server (initialisation and every process and thread it
    /// starts) to these CPUs: `--server-cpus`.
    pub cpus: Option<crate::util::cpus::CpuSet>,
    /// Make a CA and certificates for this server at start ([`tls::TlsFiles`],
    /// in `tls/` of its temporary directory) and start it so that it
    /// accepts TCP clients over TLS only: a plaintext client is refused, so
    /// no client can measure the cleartext protocol by mistake.
    pub require_tls: bool,
    /// What the plan opens at most at once: the server's limits are raised
    /// to fit it where the config leaves them ([`crate::engine::capacity::sizing`]).
    pub need: Option<crate::engine::capacity::Need>,
}

impl ServerSpec {
    /// A server of `recipe` with the defaults: found on PATH, no config,
    /// files removed after stop, in the system temp dir.
    pub fn new(recipe: Recipe) -> ServerSpec {
        ServerSpec {
            recipe,
            basedir: None,
            config: None,
            config_text: None,
            keep: false,
            parent_dir: None,
            cpus: None,
            require_tls: false,
            need: None,
        }
    }
}

/// Errors from locating, starting and stopping servers. The first line of each message says
/// what went wrong; errors about a failed process add the tail of its output on further lines.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("{recipe} binaries not found: {missing}; searched {searched}; {hint}")]
    BinaryNotFound {
        recipe: Recipe,
        missing: String,
        searched: String,
        hint: String,
    },
    #[error("bad config file {path}: {reason}")]
    BadConfig { path: PathBuf, reason: String },
    /// Making the TLS files failed (see [`tls::TlsError`]).
    #[error(transparent)]
    Tls(tls::TlsError),
    #[error(
        "rqps runs as root and {product} must not run as root, but there is no user `nobody` to run it as; run rqps as an ordinary user"
    )]
    NoUserNobody { product: &'static str },
    #[error(
        "{product} must run as user nobody (rqps runs as root), but nobody cannot enter {} (mode {mode:o}); choose a parent directory that others can traverse, e.g. /tmp",
        dir.display()
    )]
    Untraversable {
        product: &'static str,
        dir: PathBuf,
        mode: u32,
    },
    #[error("parent directory {} for the server files is not usable: {source}", parent.display())]
    ParentUnusable {
        parent: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("parent directory {} for the server files is not a directory", parent.display())]
    ParentNotADirectory { parent: PathBuf },
    /// `mysqld --version` said something rqps cannot read a version from
    /// (`hint`: what to install when it could not even start).
    #[error("cannot tell the MySQL version from `mysqld --version`: {said}{hint}")]
    UnknownVersion { said: String, hint: &'static str },
    /// A `--basedir` tree that others could change: nothing in it ran.
    #[error("refusing to run anything from --basedir {}: {source}", basedir.display())]
    UntrustedTree {
        basedir: PathBuf,
        #[source]
        source: trust::Untrusted,
    },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
    #[error("{tool} failed ({status}); its output ended with:\n{tail}")]
    InitFailed {
        tool: String,
        status: String,
        log: PathBuf,
        tail: String,
    },
    #[error("{recipe} server exited during startup ({status}); its log ended with:\n{tail}")]
    StartFailed {
        recipe: Recipe,
        status: String,
        log: PathBuf,
        tail: String,
    },
    #[error(
        "{recipe} server did not accept connections within {secs} s (last error: {last_error}); its log ended with:\n{tail}"
    )]
    StartTimeout {
        recipe: Recipe,
        secs: u64,
        #[source]
        last_error: ProbeError,
        log: PathBuf,
        tail: String,
    },
    /// The server (or its initialisation) refused a setting of its config
    /// that this version does not know; `why` names it and says what to do.
    #[error("{recipe} {version} {why}")]
    SettingRefused {
        recipe: Recipe,
        /// The version as the binary says it (`5.5.34`).
        version: String,
        why: String,
    },
    #[error("{recipe}: {what} failed: {source}")]
    Sql {
        recipe: Recipe,
        what: String,
        #[source]
        source: ProbeError,
    },
    #[error("{recipe} server (pid {pid}) did not shut down within {secs} s and was killed")]
    StopTimeout { recipe: Recipe, pid: u32, secs: u64 },
    #[error("could not remove {path}: {source}")]
    Cleanup {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// What a client library reports, kept as it is: each engine kind's client
/// has its own error type, and this module names no engine.
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

/// Why one connection attempt to a throwaway server, or a statement run on it
/// after startup, failed. The message is the client's own (or says which other
/// server answered): it ends up as the "last error" of a start that timed out,
/// or after "CREATE DATABASE ... failed:".
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// No connection (nothing listens yet, refused, handshake failed).
    #[error("{0}")]
    Connect(#[source] Cause),
    /// Connected, but a statement failed.
    #[error("{0}")]
    Query(#[source] Cause),
    /// The server on our port runs on another data directory: not ours.
    #[error("another server answers on port {port} (its {setting} is {dir})")]
    NotOurs {
        port: u16,
        /// What the server calls its data directory (`datadir`, `data directory`).
        setting: &'static str,
        dir: String,
    },
    /// A connection attempt that neither succeeded nor failed in time.
    #[error("connection attempt timed out")]
    ConnectTimeout,
    /// A statement that did not finish in time.
    #[error("timed out after {secs} s")]
    Timeout { secs: u64 },
}

impl ProbeError {
    /// For `map_err` on a client's connect.
    pub(crate) fn connect(e: impl Into<Cause>) -> ProbeError {
        ProbeError::Connect(e.into())
    }

    /// For `map_err` on a client's query.
    pub(crate) fn query(e: impl Into<Cause>) -> ProbeError {
        ProbeError::Query(e.into())
    }
}

impl ServerError {
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(io::Error) -> ServerError {
        let context = context.into();
        move |source| ServerError::Io { context, source }
    }
}

/// A file step of the server's own (see [`util::FileError`]).
impl From<util::FileError> for ServerError {
    fn from(e: util::FileError) -> Self {
        ServerError::Io {
            context: e.context,
            source: e.source,
        }
    }
}

/// Making the TLS files, with the same message (see [`tls::TlsError`]).
impl From<tls::TlsError> for ServerError {
    fn from(e: tls::TlsError) -> Self {
        match e {
            e @ tls::TlsError::Cert { .. } => ServerError::Tls(e),
            tls::TlsError::File(e) => e.into(),
        }
    }
}

/// Where the binaries of one server kind were found (see [`locate`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binaries {
    pub recipe: Recipe,
    /// `postgres` / `mariadbd` (or `mysqld`).
    pub server: PathBuf,
    /// `initdb` / `mariadb-install-db` (or `mysql_install_db`).
    pub init: PathBuf,
    /// Install prefix: PostgreSQL's `bin/..`; MariaDB's `--basedir`.
    pub basedir: PathBuf,
    /// Added to `LD_LIBRARY_PATH` of every child process (only with an explicit basedir).
    pub lib_dir: Option<PathBuf>,
    /// MariaDB `--lc-messages-dir` (only with an explicit basedir that has one).
    pub share_dir: Option<PathBuf>,
    /// How they were found, e.g. "--basedir /opt/pg" or "PATH".
    pub source: String,
}

impl Binaries {
    /// A [`Command`] for `program` with `LD_LIBRARY_PATH` extended by [`Binaries::lib_dir`].
    pub fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        if let Some(lib) = &self.lib_dir {
            let mut paths = vec![lib.clone()];
            if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
                paths.extend(std::env::split_paths(&old));
            }
            if let Ok(joined) = std::env::join_paths(paths) {
                cmd.env("LD_LIBRARY_PATH", joined);
            }
        }
        cmd
    }

    /// Output of `postgres --version` / `mariadbd --version`, trimmed.
    pub fn version(&self) -> Result<String, ServerError> {
        let mut cmd = self.command(&self.server);
        cmd.arg("--version");
        util::capture(&mut cmd, Duration::from_secs(20)).map_err(ServerError::io(format!(
            "cannot run {} --version",
            self.server.display()
        )))
    }
}

impl fmt::Display for Binaries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: server {}, init {} (found via {}",
            self.recipe,
            self.server.display(),
            self.init.display(),
            self.source
        )?;
        if let Some(lib) = &self.lib_dir {
            write!(f, "; LD_LIBRARY_PATH += {}", lib.display())?;
        }
        f.write_str(")")
    }
}

/// Finds the binaries of `recipe` without starting anything.
///
/// Without `basedir`: `$PATH` first, then the usual Debian locations
/// (`/usr/lib/postgresql/<highest version>/bin`; `/usr/sbin/mariadbd`,
/// `/usr/bin/mariadb-install-db`). With `basedir`: only `DIR/bin`, `DIR/sbin`, `DIR/scripts`.
pub fn locate(recipe: Recipe, basedir: Option<&Path>) -> Result<Binaries, ServerError> {
    if let Some(dir) = basedir
        && !dir.is_dir()
    {
        return Err(ServerError::BinaryNotFound {
            recipe,
            missing: format!("--basedir {} is not a directory", dir.display()),
            searched: dir.display().to_string(),
            hint: recipe.basedir_hint().into(),
        });
    }
    if let Some(dir) = basedir {
        trust::check_tree(dir).map_err(|source| ServerError::UntrustedTree {
            basedir: dir.to_path_buf(),
            source,
        })?;
    }
    recipe.locate(basedir)
}

/// `DIR/libs` or `DIR/lib` when it exists.
pub(crate) fn lib_dir_of(basedir: &Path) -> Option<PathBuf> {
    ["libs", "lib"]
        .iter()
        .map(|d| basedir.join(d))
        .find(|d| d.is_dir())
}

/// The servers this process runs, by temporary directory: their process
/// groups and the directories to remove, for [`abandon_all`].
struct RunningServer {
    root: PathBuf,
    pgid: i32,
    remove: Vec<PathBuf>,
}

static LIVE: std::sync::Mutex<Vec<RunningServer>> = std::sync::Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<RunningServer>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// For a quick exit (a second Ctrl-C or SIGTERM): kills every throwaway
/// server this process runs, with its whole process group, and removes its
/// files (not those kept with `--keep`), without the clean shutdown.
/// Returns the directories it removed.
pub fn abandon_all() -> Vec<PathBuf> {
    let servers = std::mem::take(&mut *live());
    // Before the kill: once a server dies, the thread that started it may
    // remove its files too.
    let dirs: Vec<PathBuf> = servers
        .iter()
        .flat_map(|s| s.remove.iter().filter(|d| d.exists()).cloned())
        .collect();
    for s in &servers {
        // SAFETY: kill(2) on the process group the server leads (started with
        // process_group(0)); no memory is touched.
        unsafe { libc::kill(-s.pgid, libc::SIGKILL) };
    }
    for dir in &dirs {
        let _ = util::remove_dir_all_retry(dir);
    }
    dirs.into_iter().filter(|d| !d.exists()).collect()
}

/// Makes the process `cmd` starts die with rqps, even when rqps is killed
/// with SIGKILL: the kernel sends it SIGKILL when its parent dies
/// (`PR_SET_PDEATHSIG`; set after the switch to the server's user, which
/// would clear it). The parent is the thread that spawns it, so a server is
/// started from a thread that outlives it (rqps uses its main thread).
pub(crate) fn dies_with_rqps(cmd: &mut Command) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: getpid(2) has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the child between fork and exec and calls
    // only async-signal-safe functions (prctl, getppid).
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            // rqps died before the line above: the signal will never come.
            if libc::getppid() != parent {
                return Err(io::Error::other("rqps exited while starting the server"));
            }
            Ok(())
        });
    }
}

/// The file in each of rqps's temporary directories that names the rqps
/// process that made it, so that the next `rqps run` can remove those whose
/// process is gone (killed with SIGKILL, or a machine reset).
pub const OWNER_FILE: &str = "rqps.owner";

/// Writes [`OWNER_FILE`] into `dir`: this process's pid and start time.
pub fn mark_owner(dir: &Path) -> io::Result<()> {
    let pid = std::process::id();
    let start = util::process_start_time(pid).unwrap_or(0);
    fs::write(dir.join(OWNER_FILE), format!("{pid} {start}\n"))
}

/// Removes the temporary directories (`rqps-*` in the system temp dir) that
/// an rqps process which is gone left behind; returns a line for each.
/// Directories kept with `--keep` have no owner file and stay.
pub fn remove_stale_dirs() -> Vec<String> {
    remove_stale_dirs_in(&std::env::temp_dir())
}

/// The `rqps-*` directories in `parent` with an owner file: each with the
/// pid and start time it names.
fn owned_dirs(parent: &Path) -> Vec<(PathBuf, u32, u64)> {
    let Ok(entries) = fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let dir = e.path();
        if !e.file_name().to_string_lossy().starts_with("rqps-") {
            continue;
        }
        let Ok(text) = fs::read_to_string(dir.join(OWNER_FILE)) else {
            continue;
        };
        let mut it = text.split_whitespace().map(|w| w.parse::<u64>().ok());
        let (Some(Some(pid)), Some(Some(start))) = (it.next(), it.next()) else {
            continue;
        };
        if let Ok(pid) = u32::try_from(pid) {
            out.push((dir, pid, start));
        }
    }
    out
}

/// For a quick exit, after [`abandon_all`]: removes this process's own
/// temporary directories in the system temp dir (a SQLite database's, a
/// server's still starting); returns those removed.
pub fn remove_own_dirs() -> Vec<PathBuf> {
    let me = std::process::id();
    let start = util::process_start_time(me).unwrap_or(0);
    owned_dirs(&std::env::temp_dir())
        .into_iter()
        .filter(|(_, pid, s)| *pid == me && *s == start)
        .filter_map(|(dir, _, _)| {
            let _ = util::remove_dir_all_retry(&dir);
            (!dir.exists()).then_some(dir)
        })
        .collect()
}

/// [`remove_stale_dirs`] in `parent`.
pub fn remove_stale_dirs_in(parent: &Path) -> Vec<String> {
    let mut said = Vec::new();
    for (dir, pid, start) in owned_dirs(parent) {
        let alive = util::process_start_time(pid).is_some_and(|s| start == 0 || s == start);
        if alive {
            continue;
        }
        said.push(match util::remove_dir_all_retry(&dir) {
            Ok(()) => format!(
                "removed {}, left behind by rqps process {pid}, which is gone",
                dir.display()
            ),
            Err(e) => format!(
                "cannot remove {}, left behind by rqps process {pid}, which is gone: {e}",
                dir.display()
            ),
        });
    }
    said
}

/// A running throwaway server. Dropping it stops the server and removes its files
/// (unless `keep`).
pub struct Server {
    recipe: Recipe,
    host: String,
    pub(crate) port: u16,
    user: String,
    /// The superuser's password, made at start (see the module docs).
    password: String,
    database: String,
    pub(crate) root: PathBuf,
    pub(crate) data_dir: PathBuf,
    pub(crate) socket_dir: PathBuf,
    pub(crate) socket: PathBuf,
    /// Directories besides `root` to remove at cleanup, even with `keep` (socket fallback).
    extra_dirs: Vec<PathBuf>,
    pub(crate) log_path: PathBuf,
    pub(crate) init_log: PathBuf,
    /// Files that hand the password to the server, removed once it is up.
    secrets: std::sync::Mutex<Vec<PathBuf>>,
    pub(crate) version: String,
    /// uid/gid the server runs as when it is not our own (PostgreSQL started by root).
    pub(crate) run_as: Option<(u32, u32)>,
    /// The certificates of a server started with [`ServerSpec::require_tls`].
    tls: Option<tls::TlsFiles>,
    child: Option<Child>,
    pid: u32,
    keep: bool,
    cleaned: bool,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("recipe", &self.recipe)
            .field("url", &self.url())
            .field("pid", &self.pid)
            .field("root", &self.root)
            .field("keep", &self.keep)
            .finish()
    }
}

impl Server {
    /// Creates a fresh data dir in a new temp dir, initialises it, writes the config, starts the
    /// server on a free loopback port, waits until it accepts connections (at most
    /// [`START_TIMEOUT`]), creates database `sbtest`, and returns. `note` receives
    /// human-readable notes.
    pub fn start(spec: &ServerSpec, note: &mut dyn FnMut(&str)) -> Result<Server, ServerError> {
        let bins = locate(spec.recipe, spec.basedir.as_deref())?;
        let mut config = match (&spec.config_text, &spec.config) {
            (Some(text), _) => Some(text.clone()),
            (None, Some(path)) => Some(read_config(path)?),
            (None, None) => None,
        };
        if let Some(need) = &spec.need {
            let user = config.as_deref().unwrap_or("");
            let sized = crate::engine::capacity::sizing(spec.recipe.sized_settings(), need, user);
            if !sized.is_empty() {
                note(&format!(
                    "sizing the {} server for the plan ({}): {}",
                    spec.recipe,
                    need.who,
                    sized.join(", ")
                ));
                config = Some(format!(
                    "# set by rqps for the plan (a --config line sets them instead)\n{}\n{user}",
                    sized.join("\n")
                ));
            }
        }
        let root = make_root(spec)?;
        let mut srv = Server {
            recipe: spec.recipe,
            host: "127.0.0.1".into(),
            port: 0,
            user: spec.recipe.user().into(),
            password: util::random_password()
                .map_err(ServerError::io("cannot make a random password"))?,
            database: "sbtest".into(),
            data_dir: root.join("data"),
            socket_dir: root.join("run"),
            socket: PathBuf::new(),
            extra_dirs: Vec::new(),
            log_path: root.join("server.log"),
            init_log: root.join("init.log"),
            secrets: Default::default(),
            root,
            version: String::new(),
            run_as: None,
            tls: None,
            child: None,
            pid: 0,
            keep: spec.keep,
            cleaned: false,
        };
        // What this thread spawns inherits its CPU set: pinned while the
        // server is initialised and started, restored when the guard drops.
        let pinned = match &spec.cpus {
            Some(c) => Some(c.pin_this_thread().map_err(ServerError::io(format!(
                "cannot pin the {} server to CPUs {c}",
                spec.recipe
            )))?),
            None => None,
        };
        let started = srv.start_inner(&bins, config.as_deref(), spec.require_tls, note);
        drop(pinned);
        // Before the files go: a setting the version does not know is said
        // in one line, not as a log tail.
        let started = started.map_err(|e| srv.setting_refused(e));
        match started {
            Ok(()) => Ok(srv),
            Err(e) => {
                let _ = srv.shutdown();
                match srv.cleanup() {
                    Ok(Some(kept)) => note(&format!(
                        "kept the files of the failed {} start in {}",
                        srv.recipe,
                        kept.display()
                    )),
                    Ok(None) => {}
                    Err(ce) => note(&format!("warning: {ce}")),
                }
                Err(e)
            }
        }
    }

    fn start_inner(
        &mut self,
        bins: &Binaries,
        config: Option<&str>,
        require_tls: bool,
        note: &mut dyn FnMut(&str),
    ) -> Result<(), ServerError> {
        let began = Instant::now();
        self.version = bins.version()?;
        for dir in [&self.data_dir, &self.socket_dir] {
            fs::create_dir(dir)
                .map_err(ServerError::io(format!("cannot create {}", dir.display())))?;
        }
        self.choose_socket_dir(note)?;
        if self.recipe.refuses_root() && util::euid() == 0 {
            self.drop_root(note)?;
        }
        // Written after drop_root: rqps's own user owns it, not the server's.
        write_private(&self.password_file(), &self.password)?;
        if require_tls {
            self.tls = Some(tls::TlsFiles::make(&self.root.join("tls"), self.run_as)?);
        }
        self.recipe.init(self, bins, config)?;
        self.forget_secrets();
        let init_secs = began.elapsed().as_secs_f64();
        for attempt in 1..=PORT_ATTEMPTS {
            self.port = util::free_port().map_err(ServerError::io("cannot pick a free port"))?;
            self.socket = self.socket_dir.join(self.recipe.socket_file(self.port));
            let offset = util::file_len(&self.log_path);
            let child = self.recipe.spawn(self, bins)?;
            self.pid = child.id();
            self.register(child.id());
            self.child = Some(child);
            let ready = self.wait_ready(offset);
            self.forget_secrets();
            match ready {
                Ok(()) => break,
                Err(ServerError::StartFailed { .. })
                    if attempt < PORT_ATTEMPTS
                        && port_in_use(&util::read_from(&self.log_path, offset)) =>
                {
                    note(&format!(
                        "port {} was taken before {} could bind it; trying another port",
                        self.port, self.recipe
                    ));
                }
                Err(e) => return Err(e),
            }
        }
        if let Some(pid) = self.recipe.main_pid(&self.data_dir) {
            self.pid = pid;
        }
        let (recipe, port) = (self.recipe, self.port);
        let (db, password) = (self.database.clone(), self.password.clone());
        let created = util::with_timeout(SQL_TIMEOUT, move || {
            recipe.create_database(port, &password, &db)
        })
        .unwrap_or(Err(ProbeError::Timeout {
            secs: SQL_TIMEOUT.as_secs(),
        }));
        created.map_err(|source| ServerError::Sql {
            recipe,
            what: format!("CREATE DATABASE {}", self.database),
            source,
        })?;
        note(&format!(
            "{} ({}) ready on {}:{} after {:.1} s (initialisation {:.1} s); files in {}",
            self.recipe,
            self.version,
            self.host,
            self.port,
            began.elapsed().as_secs_f64(),
            init_secs,
            self.root.display()
        ));
        Ok(())
    }

    /// `e` as [`ServerError::SettingRefused`] when the failed step's output
    /// says that a setting is unknown to this version; else `e`.
    fn setting_refused(&self, e: ServerError) -> ServerError {
        let log = match &e {
            ServerError::InitFailed { log, .. } | ServerError::StartFailed { log, .. } => log,
            _ => return e,
        };
        match self.recipe.refused_setting(&util::tail_file(log, 200)) {
            Some(why) => ServerError::SettingRefused {
                recipe: self.recipe,
                version: version_word(&self.version),
                why,
            },
            None => e,
        }
    }

    /// Uses `root/run` for the unix socket unless that path would be too long for a socket
    /// address; then a short directory in the system temp dir (or /tmp) instead.
    fn choose_socket_dir(&mut self, note: &mut dyn FnMut(&str)) -> Result<(), ServerError> {
        let longest = self.recipe.longest_socket_name();
        let fits = |dir: &Path| dir.join(longest).as_os_str().len() <= MAX_SOCKET_PATH;
        if fits(&self.socket_dir) {
            return Ok(());
        }
        let base = [std::env::temp_dir(), PathBuf::from("/tmp")]
            .into_iter()
            .find(|d| fits(&d.join("rqps-sock-XXXXXX")))
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        let dir = tempfile::Builder::new()
            .prefix("rqps-sock-")
            .tempdir_in(&base)
            .map_err(ServerError::io(format!(
                "cannot create a socket directory in {}",
                base.display()
            )))?
            .keep();
        self.extra_dirs.push(dir.clone());
        set_mode(&dir, 0o755)?;
        note(&format!(
            "{} is too long for a unix socket path; using {} for the socket",
            self.socket_dir.display(),
            dir.display()
        ));
        self.socket_dir = dir;
        Ok(())
    }

    /// For a server that refuses to run as root (PostgreSQL): run it as
    /// nobody/nogroup and hand it the files.
    fn drop_root(&mut self, note: &mut dyn FnMut(&str)) -> Result<(), ServerError> {
        let product = self.recipe.product();
        let (uid, user_gid) =
            util::lookup_user("nobody").ok_or_else(|| ServerError::NoUserNobody { product })?;
        let gid = util::lookup_group("nogroup").unwrap_or(user_gid);
        for dir in std::iter::once(&self.root).chain(&self.extra_dirs) {
            if let Some((bad, mode)) = util::untraversable_ancestor(dir, uid, gid) {
                return Err(ServerError::Untraversable {
                    product,
                    dir: bad.to_path_buf(),
                    mode,
                });
            }
        }
        for dir in std::iter::once(&self.root).chain(&self.extra_dirs) {
            util::chown_recursive(dir, uid, gid).map_err(ServerError::io(format!(
                "cannot chown {} to nobody",
                dir.display()
            )))?;
        }
        self.run_as = Some((uid, gid));
        note(&format!(
            "running {product} as user nobody (uid {uid}, gid {gid}) because rqps runs as root"
        ));
        Ok(())
    }

    /// Polls until the server accepts connections, the child exits, or [`START_TIMEOUT`].
    fn wait_ready(&mut self, log_offset: u64) -> Result<(), ServerError> {
        let deadline = Instant::now() + START_TIMEOUT;
        let mut last_error;
        loop {
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child
                    .try_wait()
                    .map_err(ServerError::io("cannot wait for the server process"))?
            {
                self.child = None;
                let since = util::read_from(&self.log_path, log_offset);
                let tail = if since.trim().is_empty() {
                    util::tail_file(&self.log_path, TAIL_LINES)
                } else {
                    let lines: Vec<&str> = since.lines().filter(|l| !l.trim().is_empty()).collect();
                    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
                };
                return Err(ServerError::StartFailed {
                    recipe: self.recipe,
                    status: status.to_string(),
                    log: self.log_path.clone(),
                    tail,
                });
            }
            match self.probe() {
                Ok(()) => return Ok(()),
                Err(e) => last_error = e,
            }
            if Instant::now() >= deadline {
                return Err(ServerError::StartTimeout {
                    recipe: self.recipe,
                    secs: START_TIMEOUT.as_secs(),
                    last_error,
                    log: self.log_path.clone(),
                    tail: util::tail_file(&self.log_path, TAIL_LINES),
                });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// One connection attempt that also checks that the server answering on our port is ours.
    fn probe(&self) -> Result<(), ProbeError> {
        let (recipe, port, data) = (self.recipe, self.port, self.data_dir.clone());
        let password = self.password.clone();
        util::with_timeout(PROBE_TIMEOUT, move || recipe.probe(port, &password, &data))
            .unwrap_or(Err(ProbeError::ConnectTimeout))
    }

    /// Writes `contents` to `name` in the temporary directory for the server
    /// process to read (0600, owned by the server's user), and removes it
    /// once the server is up: how a recipe hands the password to a server or
    /// its init tool without a command line.
    pub(crate) fn server_secret(&self, name: &str, contents: &str) -> Result<PathBuf, ServerError> {
        let path = self.root.join(name);
        let _ = fs::remove_file(&path);
        write_private(&path, contents)?;
        self.secrets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(path.clone());
        if let Some((uid, gid)) = self.run_as {
            std::os::unix::fs::lchown(&path, Some(uid), Some(gid))
                .map_err(ServerError::io(format!("cannot chown {}", path.display())))?;
        }
        Ok(path)
    }

    /// Removes the files [`Server::server_secret`] wrote.
    fn forget_secrets(&mut self) {
        let secrets = self.secrets.get_mut().unwrap_or_else(|e| e.into_inner());
        for path in secrets.drain(..) {
            let _ = fs::remove_file(path);
        }
    }

    /// The superuser's password (random, made at start).
    pub fn password(&self) -> &str {
        &self.password
    }

    /// The 0600 file, owned by rqps's user, that holds the password: how to
    /// connect to a kept server without the password being printed.
    pub fn password_file(&self) -> PathBuf {
        self.root.join("password")
    }

    /// How to connect by hand, without the password: the URL and the file
    /// that holds it.
    pub fn how_to_connect(&self) -> String {
        format!(
            "{} with the password in {}",
            self.url_without_password(),
            self.password_file().display()
        )
    }

    /// Which server this is.
    pub fn recipe(&self) -> Recipe {
        self.recipe
    }

    /// `postgres://postgres:PASSWORD@127.0.0.1:PORT/sbtest` or
    /// `mysql://root:PASSWORD@127.0.0.1:PORT/sbtest`. It holds the password:
    /// show it only through [`crate::engine::target::redact`] or use
    /// [`Server::url_without_password`], and never pass it on a command line.
    pub fn url(&self) -> String {
        format!(
            "{}://{}:{}@{}:{}/{}",
            self.recipe.scheme(),
            self.user,
            self.password,
            self.host,
            self.port,
            self.database
        )
    }

    /// [`Server::url`] for rqps's own runs on this server, with
    /// [`Server::tls_param`]'s query.
    pub fn url_for_config(&self, config: &[String]) -> String {
        with_query(self.url(), self.tls_param(config))
    }

    /// [`Server::url_without_password`] with [`Server::tls_param`]'s query.
    pub fn url_without_password_for_config(&self, config: &[String]) -> String {
        with_query(self.url_without_password(), self.tls_param(config))
    }

    /// The TLS of rqps's own runs on this server, as a URL query: TLS
    /// required on a server started with [`ServerSpec::require_tls`]; the
    /// clients' default (prefer, `None`) when `config` (the `--config`
    /// lines) turns TLS on (a setting whose name starts with `ssl`, or
    /// `require_secure_transport`); otherwise no TLS. Servers that make
    /// their own certificates (MariaDB 11.4 and later) would otherwise be
    /// measured over TLS and older ones without, and the cost per query
    /// would differ by the TLS alone.
    pub fn tls_param(&self, config: &[String]) -> Option<&'static str> {
        if self.tls.is_some() {
            return Some(self.recipe.tls_param(true));
        }
        let tls_configured = config.iter().any(|l| {
            let key = l
                .split('=')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            let key = key.replace('-', "_");
            !key.starts_with('#') && (key.starts_with("ssl") || key == "require_secure_transport")
        });
        (!tls_configured).then(|| self.recipe.tls_param(false))
    }

    /// The certificates of a server started with [`ServerSpec::require_tls`].
    pub fn tls_files(&self) -> Option<&tls::TlsFiles> {
        self.tls.as_ref()
    }

    /// How far the server's log reaches now: pass it to
    /// [`Server::logged_tls_since`] to look only at what comes later.
    pub fn log_len(&self) -> u64 {
        util::file_len(&self.log_path)
    }

    /// The TLS version and cipher of the last login the server's log
    /// recorded after `offset` (see [`ServerRecipe::logged_tls`]); `None`
    /// when the server does not log them.
    pub fn logged_tls_since(&self, offset: u64) -> Option<String> {
        self.recipe
            .logged_tls(&util::read_from(&self.log_path, offset))
    }

    /// [`Server::url`] without the password (for a client that reads it
    /// from elsewhere, and for messages).
    pub fn url_without_password(&self) -> String {
        format!(
            "{}://{}@{}:{}/{}",
            self.recipe.scheme(),
            self.user,
            self.host,
            self.port,
            self.database
        )
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn user(&self) -> &str {
        &self.user
    }

    pub fn database(&self) -> &str {
        &self.database
    }

    /// The unix socket file (`.../.s.PGSQL.PORT` for PostgreSQL, `.../mysqld.sock` for MariaDB).
    /// PostgreSQL clients want its directory: see [`Server::socket_dir`].
    pub fn socket_path(&self) -> Option<&Path> {
        Some(&self.socket)
    }

    /// Directory holding the unix socket.
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    /// Pid of the server main process (postmaster / mariadbd).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The temporary directory holding data dir, logs and socket.
    pub fn temp_dir(&self) -> &Path {
        &self.root
    }

    /// e.g. `postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)`.
    pub fn binary_version(&self) -> String {
        self.version.clone()
    }

    /// The server's log (PostgreSQL stderr / MariaDB `--log-error`).
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// Output of `initdb` / `mariadb-install-db`.
    pub fn init_log_path(&self) -> &Path {
        &self.init_log
    }

    /// Whether the server main process is still running.
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut().map(|c| c.try_wait()) {
            Some(Ok(None)) => true,
            Some(Ok(Some(_))) => {
                self.child = None;
                false
            }
            Some(Err(_)) => true,
            None => false,
        }
    }

    /// SIGKILLs the server (simulates a crash) and reaps it: its whole
    /// process group, since a PostgreSQL backend whose postmaster died only
    /// notices later and could still answer a query.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            if let Ok(pgid) = i32::try_from(child.id()) {
                // SAFETY: kill(2) with a negative pid signals the process group the
                // server leads (it was started with process_group(0)); no memory is touched.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
            }
            let _ = child.kill();
            if !matches!(
                util::wait_timeout(&mut child, Duration::from_secs(10)),
                Ok(Some(_))
            ) {
                self.child = Some(child);
            }
        }
    }

    /// Clean shutdown (PostgreSQL fast shutdown / SIGTERM to mariadbd), SIGKILL after
    /// [`STOP_TIMEOUT`]; then removes the temporary directory unless `keep`.
    pub fn stop(self) -> Result<(), ServerError> {
        self.stop_with_notes(&mut |_| {})
    }

    /// Like [`Server::stop`], and tells `note` where the files are when they are kept.
    pub fn stop_with_notes(mut self, note: &mut dyn FnMut(&str)) -> Result<(), ServerError> {
        let stopped = self.shutdown();
        let cleaned = self.cleanup();
        if let Ok(Some(kept)) = &cleaned {
            note(&format!(
                "kept {} files in {} (data {}, log {}); started again, it takes {}",
                self.recipe,
                kept.display(),
                self.data_dir.display(),
                self.log_path.display(),
                self.how_to_connect()
            ));
        }
        stopped?;
        cleaned.map(|_| ())
    }

    /// Stops the server process if it runs; waits at most [`STOP_TIMEOUT`], then SIGKILL.
    fn shutdown(&mut self) -> Result<(), ServerError> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        if let Ok(Some(_)) = child.try_wait() {
            return Ok(());
        }
        let sig = self.recipe.stop_signal();
        let _ = util::signal(&child, sig);
        if let Ok(Some(_)) = util::wait_timeout(&mut child, STOP_TIMEOUT) {
            return Ok(());
        }
        let _ = child.kill();
        let _ = util::wait_timeout(&mut child, Duration::from_secs(10));
        Err(ServerError::StopTimeout {
            recipe: self.recipe,
            pid: self.pid,
            secs: STOP_TIMEOUT.as_secs(),
        })
    }

    /// Lists the server for [`abandon_all`] (once per process group).
    fn register(&self, pgid: u32) {
        let mut remove = self.extra_dirs.clone();
        if !self.keep {
            remove.push(self.root.clone());
        }
        let mut live = live();
        live.retain(|l| l.root != self.root);
        live.push(RunningServer {
            root: self.root.clone(),
            pgid: i32::try_from(pgid).unwrap_or(i32::MAX),
            remove,
        });
    }

    /// Removes the files (once). `Ok(Some(dir))` when they were kept.
    fn cleanup(&mut self) -> Result<Option<PathBuf>, ServerError> {
        if self.cleaned {
            return Ok(None);
        }
        self.cleaned = true;
        live().retain(|l| l.root != self.root);
        let mut result = Ok(None);
        let extra = std::mem::take(&mut self.extra_dirs);
        for dir in extra {
            if let Err(source) = util::remove_dir_all_retry(&dir) {
                result = Err(ServerError::Cleanup { path: dir, source });
            }
        }
        if self.keep {
            // Kept files are not stale: the next run leaves them alone.
            let _ = fs::remove_file(self.root.join(OWNER_FILE));
            return result.map(|_| Some(self.root.clone()));
        }
        util::remove_dir_all_retry(&self.root).map_err(|source| ServerError::Cleanup {
            path: self.root.clone(),
            source,
        })?;
        result
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let stopped = self.shutdown();
        let cleaned = self.cleanup();
        let mut err = io::stderr().lock();
        if let Err(e) = stopped {
            let _ = writeln!(err, "rqps: warning: {e}");
        }
        match cleaned {
            Ok(Some(kept)) => {
                let _ = writeln!(
                    err,
                    "rqps: kept {} files in {}; started again, it takes {}",
                    self.recipe,
                    kept.display(),
                    self.how_to_connect()
                );
            }
            Ok(None) => {}
            Err(e) => {
                let _ = writeln!(err, "rqps: warning: {e}");
            }
        }
    }
}

/// `url?query`, or `url` without a query.
fn with_query(url: String, query: Option<&str>) -> String {
    match query {
        Some(q) => format!("{url}?{q}"),
        None => url,
    }
}

/// Reads the user's config file, with a clear error for a bad path.
fn read_config(path: &Path) -> Result<String, ServerError> {
    let bad = |why: crate::util::ConfigError| ServerError::BadConfig {
        path: path.to_path_buf(),
        reason: why.to_string(),
    };
    crate::util::read_config(path).map_err(bad)
}

/// Creates the temporary directory (mode 0755) and returns its absolute path.
fn make_root(spec: &ServerSpec) -> Result<PathBuf, ServerError> {
    let parent = spec.parent_dir.clone().unwrap_or_else(std::env::temp_dir);
    let parent = fs::canonicalize(&parent).map_err(|source| ServerError::ParentUnusable {
        parent: parent.clone(),
        source,
    })?;
    if !parent.is_dir() {
        return Err(ServerError::ParentNotADirectory { parent });
    }
    let prefix = format!("rqps-{}-", spec.recipe.key());
    let root = tempfile::Builder::new()
        .prefix(&prefix)
        .tempdir_in(&parent)
        .map_err(ServerError::io(format!(
            "cannot create a temporary directory in {}",
            parent.display()
        )))?
        .keep();
    if let Err(e) = set_mode(&root, 0o755) {
        let _ = fs::remove_dir(&root);
        return Err(e.into());
    }
    // A directory kept with --keep is never stale, even when rqps is killed.
    let marked = if spec.keep { Ok(()) } else { mark_owner(&root) };
    if let Err(e) = marked {
        let _ = fs::remove_dir(&root);
        return Err(ServerError::io(format!(
            "cannot write into {}",
            root.display()
        ))(e));
    }
    Ok(root)
}

/// The version in a server binary's `--version` line: the word after ` Ver `
/// (`mysqld  Ver 8.0.33 for Linux` -> `8.0.33`), else the first word that
/// starts with a digit, else the whole line.
fn version_word(said: &str) -> String {
    let word = match said.split_once(" Ver ") {
        Some((_, rest)) => rest.split_whitespace().next(),
        None => said
            .split_whitespace()
            .find(|w| w.starts_with(|c: char| c.is_ascii_digit())),
    };
    word.unwrap_or(said).to_string()
}

/// Whether a server log says that the TCP port was already taken.
fn port_in_use(log: &str) -> bool {
    log.contains("Address already in use")
        || log.contains("Bind on TCP/IP port")
        || log.contains("could not create any TCP/IP sockets")
}

/// Maps the exit of an init tool to [`ServerError::InitFailed`].
pub(crate) fn check_init(
    tool: &Path,
    outcome: io::Result<util::RunOutcome>,
    log: &Path,
) -> Result<(), ServerError> {
    let name = tool
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| tool.display().to_string());
    let status = match outcome {
        Ok(util::RunOutcome::Exited(s)) if s.success() => return Ok(()),
        Ok(util::RunOutcome::Exited(s)) => s.to_string(),
        Ok(util::RunOutcome::TimedOut) => format!("killed after {} s", INIT_TIMEOUT.as_secs()),
        Err(e) => {
            return Err(ServerError::Io {
                context: format!("cannot run {}", tool.display()),
                source: e,
            });
        }
    };
    Err(ServerError::InitFailed {
        tool: name,
        status,
        log: log.to_path_buf(),
        tail: util::error_lines(log, TAIL_LINES),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_word_of_a_binary() {
        assert_eq!(
            version_word(
                "/b/mysqld  Ver 5.5.34 for linux2.6 on x86_64 (MySQL Community Server (GPL))"
            ),
            "5.5.34"
        );
        assert_eq!(
            version_word("postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"),
            "15.18"
        );
        assert_eq!(version_word("odd"), "odd");
    }

    #[test]
    fn port_in_use_is_recognised() {
        assert!(port_in_use(
            "LOG:  could not bind IPv4 address \"127.0.0.1\": Address already in use"
        ));
        assert!(port_in_use(
            "[ERROR] Can't start server: Bind on TCP/IP port. Got error: 98: Address already in use"
        ));
        assert!(!port_in_use("FATAL:  configuration file contains errors"));
    }

    #[test]
    fn only_directories_of_rqps_processes_that_are_gone_are_removed() {
        let parent = tempfile::tempdir().unwrap();
        let dir = |name: &str, owner: Option<String>| {
            let d = parent.path().join(name);
            fs::create_dir(&d).unwrap();
            if let Some(o) = owner {
                fs::write(d.join(OWNER_FILE), o).unwrap();
            }
            d
        };
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        gone.wait().unwrap();
        let dead = dir("rqps-postgres-dead", Some(format!("{} 1\n", gone.id())));
        let me = std::process::id();
        let start = util::process_start_time(me).unwrap();
        let live = dir("rqps-mariadb-live", Some(format!("{me} {start}\n")));
        // This pid with another start time: a later process reused the pid.
        let reused = dir("rqps-sqlite-reused", Some(format!("{me} {}\n", start + 1)));
        let kept = dir("rqps-postgres-kept", None);
        let other = dir("not-rqps", Some(format!("{} 1\n", gone.id())));
        let said = remove_stale_dirs_in(parent.path());
        assert!(!dead.exists() && !reused.exists());
        assert!(live.exists() && kept.exists() && other.exists());
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(
            said.iter().any(|l| l
                == &format!(
                    "removed {}, left behind by rqps process {}, which is gone",
                    dead.display(),
                    gone.id()
                )),
            "{said:?}"
        );
    }

    #[test]
    fn server_is_send() {
        fn send<T: Send>() {}
        send::<Server>();
        send::<ServerError>();
    }
}
