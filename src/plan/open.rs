//! Opens the engine a run measures: a throwaway server rqps starts, a server
//! URL, or an embedded SQLite file, with what must live as long as the run
//! (the server process, a temporary directory) and where the hardware
//! figures come from (data directory, device, server process tree).

use std::path::PathBuf;
use std::sync::Arc;

use crate::engine::Driver;
use crate::engine::install::{EngineSpec, basedir_for};
use crate::engine::kind::LibraryTarget;
use crate::engine::registry::{EngineKind, UrlTarget};
use crate::engine::server::{Server, ServerError, ServerSpec, locate};
use crate::engine::sqlite::SqliteDriver;
use crate::engine::target::{Target, redact};
use crate::error::Error;
use crate::harness::probe::Footprint;
use crate::results::ServerInfo;

/// What the user said about the engine (`rqps run` options, matrix target fields).
#[derive(Clone, Debug, Default)]
pub struct EngineArgs {
    /// `--target`, parsed once when the run's spec is built.
    pub target: Option<Target>,
    /// `--server KIND[@VERSION]`.
    pub server: Option<EngineSpec>,
    pub basedir: Option<PathBuf>,
    pub keep: bool,
    pub config: Option<PathBuf>,
    /// Options owned by engine kinds, by key (`mysql_storage_engine`); each
    /// kind checks its own ([`EngineKind::check_options`]).
    pub options: toml::Table,
    /// `--server-cpus`: the CPUs a throwaway server is pinned to.
    pub server_cpus: Option<crate::util::cpus::CpuSet>,
    /// `--password-file`: the password of a URL target without one
    /// ([`crate::engine::secret`] says where else it may come from).
    pub password_file: Option<PathBuf>,
    /// What the plan opens at most at once: a throwaway server is sized for
    /// it, and a config that sets its limits too low is refused ([`check`]).
    pub need: Option<crate::engine::capacity::Need>,
}

/// Reads a SQLite config file: one PRAGMA per line (`PRAGMA` optional), `#` comments.
fn sqlite_pragmas(path: &std::path::Path) -> Result<Vec<String>, Error> {
    let text = read_config(path)?;
    Ok(text
        .lines()
        .map(|l| {
            l.split('#')
                .next()
                .unwrap_or("")
                .trim()
                .trim_end_matches(';')
        })
        .filter(|l| !l.is_empty())
        .map(|l| {
            if l.to_ascii_uppercase().starts_with("PRAGMA ") {
                l.to_string()
            } else {
                format!("PRAGMA {l}")
            }
        })
        .collect())
}

/// The engine a run measures: its driver, how to show it, and what must
/// live as long as the run (a throwaway server, a temporary SQLite dir).
pub struct Opened {
    pub driver: Arc<dyn Driver>,
    /// How the target is shown to the user (passwords redacted).
    pub shown: String,
    /// The throwaway server's description, stored with the run.
    pub server_info: Option<ServerInfo>,
    /// The CPUs a throwaway server pinned with `--server-cpus` may run on,
    /// as the kernel reports them for its main process.
    pub server_cpus: Option<String>,
    /// The SQLite database file, for an embedded target.
    sqlite_path: Option<PathBuf>,
    /// For a URL target on this host: `Some(port)` (`Some(None)` for a unix socket).
    local_port: Option<Option<u16>>,
    server: Option<Server>,
    /// The database directory of an engine loaded from a library.
    lib_dir: Option<PathBuf>,
    _tmp: Option<tempfile::TempDir>,
}

/// An engine loaded from a library (RocksDB): the release's library from the
/// cache (or the system's without a version), and the database in `dir`, or
/// in a fresh temporary directory.
fn library_engine(
    kind: &'static EngineKind,
    version: Option<String>,
    dir: Option<PathBuf>,
    a: &EngineArgs,
    say: &mut dyn FnMut(&str),
) -> Result<Opened, Error> {
    let Some(l) = kind.library else {
        return Err(Error::Usage(format!(
            "{} is not loaded from a library",
            kind.title
        )));
    };
    if a.config.is_some() || a.basedir.is_some() {
        return Err(Error::Usage(format!(
            "{} takes no --config or --basedir: give its options with --{}-options",
            kind.title, kind.name
        )));
    }
    kind.check_options(&a.options)
        .map_err(|e| Error::Usage(e.to_string()))?;
    let spec = EngineSpec {
        kind,
        version: version.clone(),
    };
    let lib =
        match basedir_for(&spec, false, &mut |_| {}).map_err(|e| Error::Usage(e.to_string()))? {
            Some(d) => (l.file_in)(&d),
            None => (l.system)().map_err(|e| Error::Usage(e.to_string()))?,
        };
    let (dir, tmp, shown) = match dir {
        Some(d) => {
            if let Some(parent) = d.parent().filter(|p| !p.as_os_str().is_empty())
                && !parent.is_dir()
            {
                return Err(Error::Usage(format!(
                    "target {}:{}: directory {} does not exist",
                    kind.name,
                    d.display(),
                    parent.display()
                )));
            }
            let shown = Target::Dir {
                kind,
                dir: d.clone(),
                version: version.clone(),
            }
            .display();
            (d, None, shown)
        }
        None => {
            let t = tempfile::Builder::new()
                .prefix(&format!("rqps-{}-", kind.name))
                .tempdir()
                .map_err(|e| Error::Failed(format!("cannot create a temporary directory: {e}")))?;
            // So that the next run removes it if this process is killed.
            let _ = crate::engine::server::mark_owner(t.path());
            let d = t.path().join("db");
            let shown = format!(
                "throwaway {} {} at {}",
                kind.title,
                version.as_deref().unwrap_or("(system library)"),
                d.display()
            );
            (d, Some(t), shown)
        }
    };
    say(&format!("opening {shown} with {}", lib.display()));
    let target = LibraryTarget {
        kind,
        lib: lib.clone(),
        dir: dir.clone(),
        version,
    };
    let driver = (l.open)(&target, &a.options).map_err(|e| Error::Usage(e.to_string()))?;
    let info = ServerInfo {
        kind: kind.name.to_string(),
        binary_version: driver.version().unwrap_or_default(),
        binaries: lib.display().to_string(),
        config_file: None,
        config: Vec::new(),
    };
    Ok(Opened {
        driver,
        shown,
        server_info: Some(info),
        sqlite_path: None,
        local_port: None,
        server: None,
        server_cpus: None,
        lib_dir: Some(dir),
        _tmp: tmp,
    })
}

fn sqlite_engine(path: &Option<PathBuf>, a: &EngineArgs, shown: String) -> Result<Opened, Error> {
    let pragmas = match &a.config {
        Some(c) => sqlite_pragmas(c)?,
        None => Vec::new(),
    };
    // The user's lines are stored with the run, as a server's config is, so
    // that "what differs" shows them as the user's own settings.
    let server_info = match &a.config {
        Some(c) => Some(ServerInfo {
            kind: crate::engine::sqlite::KIND.name.to_string(),
            binary_version: String::new(),
            binaries: "inside rqps".into(),
            config_file: Some(c.display().to_string()),
            config: read_config(c)?.lines().map(str::to_string).collect(),
        }),
        None => None,
    };
    let (path, tmp) = match path {
        Some(p) => (p.clone(), None),
        None => {
            let d = tempfile::Builder::new()
                .prefix("rqps-sqlite-")
                .tempdir()
                .map_err(|e| Error::Failed(format!("cannot create a temporary directory: {e}")))?;
            // So that the next run removes it if this process is killed.
            let _ = crate::engine::server::mark_owner(d.path());
            (d.path().join("sbtest.db"), Some(d))
        }
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(Error::Usage(format!(
            "target {shown}: directory {} does not exist",
            dir.display()
        )));
    }
    Ok(Opened {
        driver: Arc::new(SqliteDriver::new(&path, pragmas)),
        shown,
        sqlite_path: Some(path),
        local_port: None,
        server: None,
        server_info,
        server_cpus: None,
        lib_dir: None,
        _tmp: tmp,
    })
}

/// For a server URL on this host, its TCP port (`Some(None)`: a unix socket).
fn local_port(t: &UrlTarget) -> Option<Option<u16>> {
    match t.url.host.as_deref() {
        None => Some(None),
        Some(h) if h.starts_with('/') => Some(None),
        Some("127.0.0.1" | "localhost" | "::1" | "[::1]") => {
            Some(t.url.port.or(t.kind.default_port))
        }
        Some(_) => None,
    }
}

/// The driver of a URL target, with the options its kind owns.
fn url_driver(t: &UrlTarget, a: &EngineArgs) -> Result<Arc<dyn Driver>, Error> {
    t.kind
        .check_options(&a.options)
        .map_err(|e| Error::Usage(e.to_string()))?;
    let open = t.kind.open_url.ok_or_else(|| {
        Error::Usage(format!(
            "{} targets are not reached through a URL",
            t.kind.title
        ))
    })?;
    // The URL's own password first; then the password file's (or the one
    // a matrix handed this child); the driver looks further (its
    // environment variable, pgpass) when there is none.
    let explicit = crate::engine::secret::explicit_password(a.password_file.as_deref())
        .map_err(|e| Error::Usage(e.to_string()))?;
    let with_password;
    let t = match explicit {
        Some(p) if t.url.password.is_none() => {
            let mut c = t.clone();
            c.url.password = Some(p);
            with_password = c;
            &with_password
        }
        _ => t,
    };
    open(t, &a.options).map_err(|e| Error::Usage(e.to_string()))
}

fn server_engine(
    e: &EngineSpec,
    a: &EngineArgs,
    say: &mut dyn FnMut(&str),
) -> Result<Opened, Error> {
    if e.kind.library.is_some() {
        return library_engine(e.kind, e.version.clone(), None, a, say);
    }
    let Some(kind) = e.server() else {
        return Err(Error::Usage(
            "--server takes mysql, mariadb, postgres or rocksdb (optionally @VERSION); SQLite needs no server"
                .into(),
        ));
    };
    let cached = basedir_for(e, false, &mut |_| {}).map_err(|e| Error::Usage(e.to_string()))?;
    if cached.is_some() && a.basedir.is_some() {
        return Err(Error::Usage(
            "give either --server KIND@VERSION or --basedir, not both".into(),
        ));
    }
    let basedir = cached.or_else(|| a.basedir.clone());
    let spec = ServerSpec {
        recipe: kind,
        basedir: basedir.clone(),
        config: a.config.clone(),
        keep: a.keep,
        parent_dir: None,
        cpus: a.server_cpus.clone(),
        require_tls: false,
        need: a.need.clone(),
    };
    let binaries = locate(kind, basedir.as_deref()).map_err(|e| Error::Usage(e.to_string()))?;
    let config = match &a.config {
        Some(c) => read_config(c)?.lines().map(str::to_string).collect(),
        None => Vec::new(),
    };
    let server = Server::start(&spec, &mut |note| say(note)).map_err(|e| match e {
        ServerError::BinaryNotFound { .. }
        | ServerError::BadConfig { .. }
        | ServerError::SettingRefused { .. } => Error::Usage(e.to_string()),
        e => Error::Failed(format!("cannot start the {kind} server: {e}")),
    })?;
    let url = server.url_for_config(&config);
    let Target::Url(target) = Target::parse(&url).map_err(|e| Error::Failed(e.to_string()))? else {
        return Err(Error::Failed(format!(
            "the {kind} server gave no server URL"
        )));
    };
    let info = ServerInfo {
        kind: kind.key().to_string(),
        binary_version: server.binary_version(),
        binaries: binaries.to_string(),
        config_file: a.config.as_ref().map(|c| c.display().to_string()),
        config,
    };
    Ok(Opened {
        driver: url_driver(&target, a)?,
        shown: format!("throwaway {kind} at {}", redact(&url)),
        sqlite_path: None,
        local_port: Some(Some(server.port())),
        server_cpus: a.server_cpus.as_ref().map(|want| {
            crate::util::cpus::of_process(server.pid())
                .map(|c| c.to_string())
                .unwrap_or_else(|| want.to_string())
        }),
        server: Some(server),
        server_info: Some(info),
        lib_dir: None,
        _tmp: None,
    })
}

/// Where the hardware figures come from for this engine: the data's device and
/// size on disk, and the server's process tree (`server_pid` when the user
/// named it).
fn footprint(engine: &Opened, server_pid: Option<u32>) -> Footprint {
    if let Some(d) = &engine.lib_dir {
        return Footprint {
            data_path: Some(d.clone()),
            disk_paths: vec![d.clone()],
            embedded: true,
            ..Default::default()
        };
    }
    match (&engine.server, &engine.sqlite_path) {
        (Some(server), _) => {
            let d = server.data_dir().to_path_buf();
            Footprint {
                data_path: Some(d.clone()),
                disk_paths: vec![d],
                pids: vec![server.pid()],
                listening_port: Some(server.port()),
                ..Default::default()
            }
        }
        (None, Some(db)) => {
            let side = |suffix: &str| PathBuf::from(format!("{}{suffix}", db.display()));
            Footprint {
                data_path: Some(db.clone()),
                disk_paths: vec![db.clone(), side("-wal"), side("-shm")],
                embedded: true,
                ..Default::default()
            }
        }
        (None, None) => {
            let local = engine.local_port;
            let data = engine
                .driver
                .data_path()
                .filter(|p| local.is_some() && p.exists());
            Footprint {
                data_path: data.clone(),
                disk_paths: data.into_iter().collect(),
                pids: server_pid.into_iter().collect(),
                listening_port: local.flatten(),
                embedded: false,
            }
        }
    }
}

/// The engine kind the arguments name, when they name a known one
/// (errors in them are reported by [`open`]).
fn named_kind(a: &EngineArgs) -> &'static EngineKind {
    match (&a.server, &a.target) {
        (Some(s), _) => s.kind,
        (None, Some(t)) => t.kind(),
        (None, None) => &crate::engine::sqlite::KIND,
    }
}

/// The user's config file (at most [`crate::util::MAX_CONFIG_BYTES`]).
fn read_config(path: &std::path::Path) -> Result<String, Error> {
    crate::util::read_config(path)
        .map_err(|why| Error::Usage(format!("cannot read config file {}: {why}", path.display())))
}

/// Checks the engine options without side effects (before any server starts).
pub fn check(a: &EngineArgs) -> Result<(), Error> {
    // Before anything starts: a config file that cannot be read, or is too large
    // (/dev/zero), is refused now.
    if let Some(c) = &a.config {
        read_config(c)?;
    }
    if let Some(f) = &a.password_file {
        if !matches!(a.target, Some(Target::Url(_))) || a.server.is_some() {
            return Err(Error::Usage(
                "--password-file gives the password of a server --target URL (a throwaway --server has its own)".into(),
            ));
        }
        crate::engine::secret::read_password_file(f).map_err(|e| Error::Usage(e.to_string()))?;
    }
    if a.server_cpus.is_some() && a.server.is_none() {
        return Err(Error::Usage(
            "--server-cpus pins a throwaway server: use it with --server (pin a server you run yourself with taskset or its service manager)".into(),
        ));
    }
    let kind = named_kind(a);
    kind.check_options(&a.options)
        .map_err(|e| Error::Usage(e.to_string()))?;
    // A throwaway server's config that sets its limits below the plan's needs.
    if let (Some(_), Some(recipe), Some(need), Some(c)) =
        (&a.server, kind.server, &a.need, &a.config)
    {
        crate::engine::capacity::check_config(recipe.sized_settings(), need, &read_config(c)?)
            .map_err(|e| Error::Usage(e.to_string()))?;
    }
    Ok(())
}

/// Checks what the opened engine's server allows against what the plan
/// opens at most (`need`): one line that says what to do when
/// it is too small. A server that cannot say is not refused.
pub fn check_capacity(
    need: &crate::engine::capacity::Need,
    driver: &dyn Driver,
) -> Result<(), Error> {
    let check = || match driver.allowances() {
        Ok(allowances) => crate::engine::capacity::check(need, &allowances)
            .map_err(|e| Error::Usage(e.to_string())),
        Err(_) => Ok(()),
    };
    // The sessions the server counts now include the connections rqps
    // itself closed a moment ago (opening the engine, the up-front connect):
    // the server ends them asynchronously, and a clean-clone CI run once saw
    // "max_connections 20, 1 other sessions now" for a server nobody else
    // used, and 200 ms later still did on a loaded 2-core machine. A
    // refusal is looked at again, 0.2, 0.4 and 0.8 s later: only a refusal
    // that stands is an error (it costs 1.4 s on that path alone).
    let mut result = check();
    for ms in [200, 400, 800] {
        if result.is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(ms));
        result = check();
    }
    result
}

/// Checks, before anything starts, that the engine the arguments name offers
/// the face `suite` needs (`face`): `--suite sysbench --server rocksdb` is a
/// usage error, not a stored failed run.
pub fn check_face(a: &EngineArgs, suite: &str, face: crate::engine::Face) -> Result<(), Error> {
    named_kind(a)
        .check_face(suite, face)
        .map_err(|e| Error::Usage(e.to_string()))
}

/// Where the engine's data will be on this host, when rqps knows: the
/// system temp dir for a throwaway server or database, the directory of a
/// SQLite file or a RocksDB directory. `None` for a server URL.
pub fn data_dir(a: &EngineArgs) -> Option<PathBuf> {
    if a.server.is_some() {
        return Some(std::env::temp_dir());
    }
    match &a.target {
        None | Some(Target::Sqlite(None)) => Some(std::env::temp_dir()),
        Some(Target::Sqlite(Some(p))) => Some(
            p.parent()
                .filter(|d| !d.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), PathBuf::from),
        ),
        Some(Target::Dir { dir, .. }) => Some(dir.clone()),
        Some(Target::Url(_)) => None,
    }
}

/// Opens the engine: starts a throwaway server, or makes the driver of a URL or SQLite file.
pub fn open(a: &EngineArgs, say: &mut dyn FnMut(&str)) -> Result<Opened, Error> {
    check(a)?;
    match (&a.server, &a.target) {
        (Some(kind), _) => server_engine(kind, a, say),
        (None, None) => sqlite_engine(&None, a, Target::Sqlite(None).display()),
        (None, Some(t @ Target::Sqlite(path))) => sqlite_engine(path, a, t.display()),
        (None, Some(Target::Dir { kind, dir, version })) => {
            library_engine(kind, version.clone(), Some(dir.clone()), a, say)
        }
        (None, Some(t @ Target::Url(u))) => Ok(Opened {
            driver: url_driver(u, a)?,
            shown: t.display(),
            sqlite_path: None,
            local_port: local_port(u),
            server: None,
            server_info: None,
            server_cpus: None,
            lib_dir: None,
            _tmp: None,
        }),
    }
}

impl Opened {
    /// Where the hardware figures come from for this engine.
    pub fn footprint(&self, server_pid: Option<u32>) -> Footprint {
        footprint(self, server_pid)
    }

    /// Stops a throwaway server (its notes go to `say`); nothing to do for other engines.
    pub fn close(mut self, say: &mut dyn FnMut(&str)) {
        if let Some(server) = self.server.take()
            && let Err(e) = server.stop_with_notes(say)
        {
            eprintln!("warning: stopping the throwaway server: {e}");
        }
    }
}
