//! Opens the engine a run measures: a throwaway server rqps starts, a server
//! URL, an embedded SQLite file or a library's database. Two steps, each
//! taken once per run: [`check`] refuses what cannot work before anything
//! starts and reads what the options name (the config file, the password
//! file) into a [`Checked`]; [`open`] starts or reaches the engine from it,
//! connects once and checks the server's capacity, and returns what must
//! live as long as the run (the server process, a temporary directory) with
//! where the hardware figures come from (data directory, device, server
//! process tree).

use std::path::PathBuf;
use std::sync::Arc;

use crate::engine::Driver;
use crate::engine::capacity::Need;
use crate::engine::install::{EngineSpec, basedir_for};
use crate::engine::kind::LibraryTarget;
use crate::engine::registry::{EngineKind, UrlTarget};
use crate::engine::server::{Server, ServerError, ServerSpec, locate};
use crate::engine::sqlite::SqliteDriver;
use crate::engine::target::{Target, redact};
use crate::error::{Error, failed, usage};
use crate::harness::probe::Footprint;
use crate::plan::options::{EngineArgs, RunOptions};
use crate::results::ServerInfo;
use crate::suite::Plan;
use crate::util::cpus::CpuSet;

/// A config file as read once, by [`check`]: its path (for messages and the
/// stored run) and its text.
#[derive(Clone, Debug)]
pub struct Config {
    pub path: PathBuf,
    pub text: String,
}

/// What [`check`] found the engine arguments to be, with what it read on
/// the way (the config file, the password), so that [`open`] reads nothing
/// twice and checks nothing again. (No `Debug`: it holds the password.)
#[derive(Clone)]
pub struct Checked {
    pub engine: EngineArgs,
    config: Option<Config>,
    /// The password of a URL target without one: `--password-file`'s, or
    /// the one a matrix handed this child.
    password: Option<String>,
    basedir: Option<PathBuf>,
    keep: bool,
    server_cpus: Option<CpuSet>,
    need: Need,
    /// How long the engine's connections wait (`--stmt-timeout`, `--message-timeout`).
    timeouts: crate::engine::Timeouts,
}

impl Checked {
    /// The same, the server sized for `need` instead of the plans' (`rqps
    /// compat` opens connections of its own: probes, concurrent runs).
    pub fn with_need(mut self, need: Need) -> Checked {
        self.need = need;
        self
    }

    /// For a run of `plan`, one of the plans it was checked against (a
    /// matrix's suites): the server is sized and its capacity checked for
    /// what this plan opens, as a run of that suite alone would be.
    pub fn for_plan(&self, plan: &dyn Plan) -> Checked {
        Checked {
            need: plan.need(),
            ..self.clone()
        }
    }
}

/// Why [`check`] refused the engine arguments, with the run option the
/// reason is about (`config`, `password_file`, an engine option's key),
/// where there is one: a matrix names its line.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct Refused {
    pub option: Option<String>,
    #[source]
    pub error: Error,
}

impl Refused {
    /// The message as a file's field shows it, after the field's name
    /// (`m.toml:7: config: /dev/zero: larger than 1 MiB`).
    pub fn in_file(&self) -> String {
        match &self.error {
            Error::Usage(c) => match c.downcast_ref::<UnreadableConfig>() {
                Some(u) => format!("{}: {}", u.path.display(), u.why),
                None => c.to_string(),
            },
            e => e.to_string(),
        }
    }
}

/// A `--config` file that cannot be used, and why.
#[derive(Debug, thiserror::Error)]
#[error("cannot read config file {}: {why}", path.display())]
pub struct UnreadableConfig {
    pub path: PathBuf,
    #[source]
    pub why: crate::util::ConfigError,
}

impl From<Refused> for Error {
    fn from(r: Refused) -> Error {
        r.error
    }
}

/// A refusal about `option`.
fn about(option: &str) -> impl FnOnce(Error) -> Refused + '_ {
    move |error| Refused {
        option: Some(option.to_string()),
        error,
    }
}

/// A refusal about the engine as a whole.
fn whole(error: Error) -> Refused {
    Refused {
        option: None,
        error,
    }
}

/// Reads a SQLite config: one PRAGMA per line (`PRAGMA` optional), `#` comments.
fn sqlite_pragmas(text: &str) -> Vec<String> {
    text.lines()
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
        .collect()
}

/// The engine a run measures: its driver, how to show it, where its
/// hardware figures come from, and what must live as long as the run (a
/// throwaway server, a temporary SQLite dir).
pub struct Opened {
    pub driver: Arc<dyn Driver>,
    /// How the target is shown to the user (passwords redacted).
    pub shown: String,
    /// The throwaway server's description, stored with the run.
    pub server_info: Option<ServerInfo>,
    /// The CPUs a throwaway server pinned with `--server-cpus` may run on,
    /// as the kernel reports them for its main process.
    pub server_cpus: Option<String>,
    /// Where the hardware figures come from: the data's device and size on
    /// disk, and the server's process tree (for a URL target on this host,
    /// none: the caller's `--server-pid`, or the probe finds it by its port).
    pub footprint: Footprint,
    server: Option<Server>,
    _tmp: Option<tempfile::TempDir>,
}

/// An engine loaded from a library (RocksDB): the release's library from the
/// cache (or the system's without a version), and the database in `dir`, or
/// in a fresh temporary directory.
fn library_engine(
    kind: &'static EngineKind,
    version: Option<String>,
    dir: Option<PathBuf>,
    c: &Checked,
    say: &mut dyn FnMut(&str),
) -> Result<Opened, Error> {
    let Some(l) = kind.library else {
        return Err(usage(format!(
            "{} is not loaded from a library",
            kind.title
        )));
    };
    let spec = EngineSpec {
        kind,
        version: version.clone(),
    };
    let lib = match basedir_for(&spec, false, &mut |_| {}).map_err(usage)? {
        Some(d) => (l.file_in)(&d),
        None => (l.system)().map_err(usage)?,
    };
    let (dir, tmp, shown) = match dir {
        Some(d) => {
            if let Some(parent) = d.parent().filter(|p| !p.as_os_str().is_empty())
                && !parent.is_dir()
            {
                return Err(usage(format!(
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
                .map_err(|e| failed(format!("cannot create a temporary directory: {e}")))?;
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
    let driver = (l.open)(&target, &c.engine.options).map_err(usage)?;
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
        server: None,
        server_cpus: None,
        footprint: Footprint {
            data_path: Some(dir.clone()),
            disk_paths: vec![dir],
            embedded: true,
            ..Default::default()
        },
        _tmp: tmp,
    })
}

fn sqlite_engine(path: &Option<PathBuf>, c: &Checked, shown: String) -> Result<Opened, Error> {
    // The user's lines are stored with the run, as a server's config is, so
    // that "what differs" shows them as the user's own settings.
    let (pragmas, server_info) = match &c.config {
        Some(cfg) => (
            sqlite_pragmas(&cfg.text),
            Some(ServerInfo {
                kind: crate::engine::sqlite::KIND.name.to_string(),
                binary_version: String::new(),
                binaries: "inside rqps".into(),
                config_file: Some(cfg.path.display().to_string()),
                config: cfg.text.lines().map(str::to_string).collect(),
            }),
        ),
        None => (Vec::new(), None),
    };
    let (path, tmp) = match path {
        Some(p) => (p.clone(), None),
        None => {
            let d = tempfile::Builder::new()
                .prefix("rqps-sqlite-")
                .tempdir()
                .map_err(|e| failed(format!("cannot create a temporary directory: {e}")))?;
            // So that the next run removes it if this process is killed.
            let _ = crate::engine::server::mark_owner(d.path());
            (d.path().join("sbtest.db"), Some(d))
        }
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(usage(format!(
            "target {shown}: directory {} does not exist",
            dir.display()
        )));
    }
    let side = |suffix: &str| PathBuf::from(format!("{}{suffix}", path.display()));
    let footprint = Footprint {
        data_path: Some(path.clone()),
        disk_paths: vec![path.clone(), side("-wal"), side("-shm")],
        embedded: true,
        ..Default::default()
    };
    Ok(Opened {
        driver: Arc::new(SqliteDriver::new(&path, pragmas)),
        shown,
        server: None,
        server_info,
        server_cpus: None,
        footprint,
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

/// The driver of a URL target, with the options its kind owns and the
/// password [`check`] read.
fn url_driver(t: &UrlTarget, c: &Checked) -> Result<Arc<dyn Driver>, Error> {
    let open = t.kind.open_url.ok_or_else(|| {
        usage(format!(
            "{} targets are not reached through a URL",
            t.kind.title
        ))
    })?;
    // The URL's own password first; then the password file's (or the one
    // a matrix handed this child); the driver looks further (its
    // environment variable, pgpass) when there is none.
    let with_password;
    let t = match &c.password {
        Some(p) if t.url.password.is_none() => {
            let mut u = t.clone();
            u.url.password = Some(p.clone());
            with_password = u;
            &with_password
        }
        _ => t,
    };
    open(t, &c.engine.options, c.timeouts).map_err(usage)
}

/// A URL target's engine: its driver, and where its figures come from when
/// the server is on this host.
/// A URL's driver; its footprint is [`url_footprint`], once it connected.
fn url_engine(t: &Target, u: &UrlTarget, c: &Checked) -> Result<Opened, Error> {
    let driver = url_driver(u, c)?;
    Ok(Opened {
        driver,
        shown: t.display(),
        server: None,
        server_info: None,
        server_cpus: None,
        footprint: Footprint {
            data_path: None,
            disk_paths: Vec::new(),
            pids: Vec::new(),
            listening_port: local_port(u).flatten(),
            embedded: false,
        },
        _tmp: None,
    })
}

/// Where a URL's server keeps its data, when it runs on this host (the
/// server says, over a connection): asked only after the first connect
/// succeeded, so that a server that does not answer costs one connect
/// timeout, not two (the message said 10 s; rqps waited 20).
fn url_footprint(driver: &dyn Driver, u: &UrlTarget) -> Footprint {
    let local = local_port(u);
    let data = local
        .is_some()
        .then(|| driver.data_path())
        .flatten()
        .filter(|p| p.exists());
    Footprint {
        data_path: data.clone(),
        disk_paths: data.into_iter().collect(),
        pids: Vec::new(),
        listening_port: local.flatten(),
        embedded: false,
    }
}

fn server_engine(e: &EngineSpec, c: &Checked, say: &mut dyn FnMut(&str)) -> Result<Opened, Error> {
    if e.kind.library.is_some() {
        return library_engine(e.kind, e.version.clone(), None, c, say);
    }
    let Some(kind) = e.server() else {
        return Err(usage(
            "--server takes mysql, mariadb, postgres or rocksdb (optionally @VERSION); SQLite needs no server",
        ));
    };
    let cached = basedir_for(e, false, &mut |_| {}).map_err(usage)?;
    if cached.is_some() && c.basedir.is_some() {
        return Err(usage(
            "give either --server KIND@VERSION or --basedir, not both",
        ));
    }
    let basedir = cached.or_else(|| c.basedir.clone());
    let spec = ServerSpec {
        recipe: kind,
        basedir: basedir.clone(),
        config: c.config.as_ref().map(|f| f.path.clone()),
        config_text: c.config.as_ref().map(|f| f.text.clone()),
        keep: c.keep,
        parent_dir: None,
        cpus: c.server_cpus.clone(),
        require_tls: false,
        need: Some(c.need.clone()),
    };
    let binaries = locate(kind, basedir.as_deref()).map_err(usage)?;
    let config: Vec<String> = match &c.config {
        Some(f) => f.text.lines().map(str::to_string).collect(),
        None => Vec::new(),
    };
    let server = Server::start(&spec, &mut |note| say(note)).map_err(|e| match e {
        ServerError::BinaryNotFound { .. }
        | ServerError::BadConfig { .. }
        | ServerError::SettingRefused { .. }
        | ServerError::UntrustedTree { .. } => usage(e),
        e => failed(format!("cannot start the {kind} server: {e}")),
    })?;
    let url = server.url_for_config(&config);
    let Target::Url(target) = Target::parse(&url).map_err(failed)? else {
        return Err(failed(format!("the {kind} server gave no server URL")));
    };
    let info = ServerInfo {
        kind: kind.key().to_string(),
        binary_version: server.binary_version(),
        binaries: binaries.to_string(),
        config_file: c.config.as_ref().map(|f| f.path.display().to_string()),
        config,
    };
    let data = server.data_dir().to_path_buf();
    Ok(Opened {
        driver: url_driver(&target, c)?,
        shown: format!("throwaway {kind} at {}", redact(&url)),
        server_cpus: c.server_cpus.as_ref().map(|want| {
            crate::util::cpus::of_process(server.pid())
                .map(|c| c.to_string())
                .unwrap_or_else(|| want.to_string())
        }),
        footprint: Footprint {
            data_path: Some(data.clone()),
            disk_paths: vec![data],
            pids: vec![server.pid()],
            listening_port: Some(server.port()),
            ..Default::default()
        },
        server: Some(server),
        server_info: Some(info),
        _tmp: None,
    })
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

/// Checks the engine arguments against the run options and the plans (a
/// run's one, a matrix's suites), with
/// no side effects (before any server starts), and reads what they name
/// once: the config file, the password file. One line that says what to
/// change otherwise.
pub fn check(a: &EngineArgs, o: &RunOptions, plans: &[&dyn Plan]) -> Result<Checked, Refused> {
    let kind = named_kind(a);
    let url = matches!(a.target, Some(Target::Url(_))) && a.server.is_none();
    // Before anything starts: a config file that cannot be read, or is too
    // large (/dev/zero), is refused now; its text goes on to the engine.
    let config = match &o.config {
        Some(path) => Some(Config {
            path: path.clone(),
            text: crate::util::read_config(path)
                .map_err(|why| {
                    usage(UnreadableConfig {
                        path: path.clone(),
                        why,
                    })
                })
                .map_err(about("config"))?,
        }),
        None => None,
    };
    if o.password_file.is_some() && !url {
        return Err(about("password_file")(usage(
            "--password-file gives the password of a server --target URL (a throwaway --server has its own)",
        )));
    }
    // A URL's password from the file (or the one a matrix handed this child).
    let password = match url {
        true => crate::engine::secret::explicit_password(o.password_file.as_deref())
            .map_err(|e| about("password_file")(usage(e)))?,
        false => None,
    };
    if o.server_cpus.is_some() && a.server.is_none() {
        return Err(about("server_cpus")(usage(
            "--server-cpus pins a throwaway server: use it with --server (pin a server you run yourself with taskset or its service manager)",
        )));
    }
    if kind.library.is_some() {
        for (key, given) in [
            ("config", o.config.is_some()),
            ("basedir", o.basedir.is_some()),
        ] {
            if given {
                return Err(about(key)(usage(format!(
                    "{} takes no --config or --basedir: give its options with --{}-options",
                    kind.title, kind.name
                ))));
            }
        }
    }
    for (key, value) in &a.options {
        let one = toml::Table::from_iter([(key.clone(), value.clone())]);
        kind.check_options(&one).map_err(|e| about(key)(usage(e)))?;
    }
    let need = largest_need(plans);
    // A throwaway server's config that sets its limits below the plan's needs.
    if let (Some(_), Some(recipe), Some(c)) = (&a.server, kind.server, &config) {
        crate::engine::capacity::check_config(recipe.sized_settings(), &need, &c.text)
            .map_err(|e| about("config")(usage(e)))?;
    }
    // The face the suite needs: `--suite sysbench --server rocksdb` is a
    // usage error, not a stored failed run.
    for plan in plans {
        kind.check_face(plan.suite(), plan.face())
            .map_err(|e| whole(usage(e)))?;
        check_space(*plan, a).map_err(whole)?;
    }
    Ok(Checked {
        engine: a.clone(),
        config,
        password,
        basedir: o.basedir.clone(),
        keep: o.keep,
        server_cpus: o.server_cpus.clone(),
        need,
        timeouts: o.timeouts(),
    })
}

/// What the largest of the plans (a matrix's suites, run one after the
/// other) opens at once: the most connections (with who opens them) and
/// the most prepared statements.
fn largest_need(plans: &[&dyn Plan]) -> Need {
    let mut need = plans[0].need();
    for p in &plans[1..] {
        let n = p.need();
        if n.connections > need.connections {
            need.connections = n.connections;
            need.who = n.who;
            need.fewer = n.fewer;
        }
        need.prepared = need.prepared.max(n.prepared);
    }
    need
}

/// Refuses a plan whose load needs more than the free space where the
/// engine's data will be, when rqps knows where that is (not for a server
/// URL): a load that cannot fit fails hours later, or fills the disk.
fn check_space(plan: &dyn Plan, a: &EngineArgs) -> Result<(), Error> {
    let need = plan.load_bytes();
    if need == 0 {
        return Ok(());
    }
    let Some(dir) = data_dir(a) else {
        return Ok(());
    };
    let Some(free) = crate::util::free_bytes(&dir) else {
        return Ok(());
    };
    if need <= free {
        return Ok(());
    }
    let gb = |b: u64| b as f64 / 1e9;
    Err(usage(format!(
        "the {} load needs about {:.1} GB (the suite's estimate) but {} has {:.1} GB free: make the load smaller, or put the data where there is room (another path, or TMPDIR for a throwaway engine)",
        plan.suite(),
        gb(need),
        dir.display(),
        gb(free)
    )))
}

/// Checks what the opened engine's server allows against what the plan
/// opens at most (`need`): one line that says what to do when
/// it is too small. A server that cannot say is not refused.
pub fn check_capacity(need: &Need, driver: &dyn Driver) -> Result<(), Error> {
    let check = || match driver.allowances() {
        Ok(allowances) => crate::engine::capacity::check(need, &allowances).map_err(usage),
        Err(_) => Ok(()),
    };
    // The sessions the server counts now include the connections rqps
    // itself closed a moment ago (opening the engine, the up-front connect):
    // the server ends them asynchronously, and a clean-clone CI run once saw
    // "max_connections 20, 1 other session now" for a server nobody else
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

/// Where the engine's data will be on this host, when rqps knows: the
/// system temp dir for a throwaway server or database, the directory of a
/// SQLite file or a RocksDB directory. `None` for a server URL.
fn data_dir(a: &EngineArgs) -> Option<PathBuf> {
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

/// Opens the engine [`check`] passed: starts a throwaway server, or makes
/// the driver of a URL, SQLite file or library; then connects once, so
/// that a bad target or config fails before anything is stored, and
/// refuses a server too small for the plan before anything loads.
pub fn open(c: &Checked, say: &mut dyn FnMut(&str)) -> Result<Opened, Error> {
    let mut opened = match (&c.engine.server, &c.engine.target) {
        (Some(kind), _) => server_engine(kind, c, say),
        (None, None) => sqlite_engine(&None, c, Target::Sqlite(None).display()),
        (None, Some(t @ Target::Sqlite(path))) => sqlite_engine(path, c, t.display()),
        (None, Some(Target::Dir { kind, dir, version })) => {
            library_engine(kind, version.clone(), Some(dir.clone()), c, say)
        }
        (None, Some(t @ Target::Url(u))) => url_engine(t, u, c),
    }?;
    let driver = opened.driver.clone();
    let connected = match driver.kv() {
        Some(kv) => kv.connect().map(drop),
        None => driver.require_sql().and_then(|db| db.connect()).map(drop),
    };
    let ready = connected
        .map_err(|source| {
            usage(ConnectFailed {
                shown: opened.shown.clone(),
                source,
            })
        })
        .and_then(|()| check_capacity(&c.need, driver.as_ref()));
    match ready {
        Ok(()) => {
            if let (None, Some(Target::Url(u))) = (&c.engine.server, &c.engine.target) {
                opened.footprint = url_footprint(driver.as_ref(), u);
            }
            Ok(opened)
        }
        Err(e) => {
            opened.close(say);
            Err(e)
        }
    }
}

/// A target rqps cannot connect to, shown as the engine's message (with
/// the target named once) and what to check for the usual causes.
#[derive(Debug, thiserror::Error)]
#[error("{}", connect_failed(shown, &source.to_string()))]
pub struct ConnectFailed {
    pub shown: String,
    #[source]
    pub source: crate::engine::DbError,
}

/// The line for a target rqps cannot connect to: the engine's message (with
/// the target named once) and what to check for the usual causes.
fn connect_failed(shown: &str, message: &str) -> String {
    let line = if message.contains(shown) {
        message.to_string()
    } else {
        format!("cannot connect to {shown}: {message}")
    };
    let m = message.to_lowercase();
    let remedy = if m.contains("connection refused") {
        "; is the server running, and listening on that host and port? (check --target's host:port)"
    } else if m.contains("timed out") || m.contains("no route to host") {
        "; check the host and port of --target, and any firewall between (the server did not answer)"
    } else if m.contains("password") || m.contains("access denied") || m.contains("authentication")
    {
        "; check the user and the password (--password-file, PGPASSWORD, ~/.pgpass or MYSQL_PWD)"
    } else if m.contains("does not exist") || m.contains("unknown database") {
        "; create the database first, or name one that exists in --target"
    } else {
        ""
    };
    format!("{line}{remedy}")
}

impl Opened {
    /// Stops a throwaway server (its notes go to `say`); nothing to do for other engines.
    pub fn close(mut self, say: &mut dyn FnMut(&str)) {
        if let Some(server) = self.server.take()
            && let Err(e) = server.stop_with_notes(say)
        {
            eprintln!("warning: stopping the throwaway server: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::connect_failed;

    #[test]
    fn a_refused_connection_names_the_target_once_and_what_to_check() {
        let url = "postgres://bench@127.0.0.1:1/db";
        let msg = format!(
            "cannot connect to PostgreSQL at 127.0.0.1:1 ({url}): Connection refused (os error 111)"
        );
        let line = connect_failed(url, &msg);
        assert_eq!(line.matches(url).count(), 1, "{line}");
        assert!(line.contains("is the server running"), "{line}");
        // A message that does not name the target gets it in front, and no remedy it does not need.
        assert_eq!(
            connect_failed("sqlite:/x/y.db", "unable to open database file"),
            "cannot connect to sqlite:/x/y.db: unable to open database file"
        );
    }
}
