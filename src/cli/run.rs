//! `rqps run`: from arguments to a stored, printed run.

use std::sync::Arc;

use super::suites::Plan;
use super::{CliError, EXIT_FAILED, EXIT_INTERRUPTED, RunArgs};
use crate::engine::install::{EngineRef, basedir_for};
use crate::engine::server::{Server, ServerError, ServerSpec, locate};
use crate::engine::sqlite::SqliteDriver;
use crate::engine::target::{Target, redact, redact_args};
use crate::engine::{Driver, PsMode};
use crate::harness::probe::ProbeContext;
use crate::plan::{SysbenchParams, profile};
use crate::results::ServerInfo;
use crate::results::{EngineInfo, RunDoc, Store};
use crate::suite::sysbench::run::{RunEnd, Session, Ui, run_sysbench};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// `10.11.19-MariaDB-0+deb12u1` → `10.11.19`; `PostgreSQL 15.18 (Debian ...)` → `15.18`.
fn short_version(v: &str) -> String {
    v.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find(|s| s.contains('.') && s.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or(v)
        .to_string()
}

/// The profile with every option given on the command line applied.
pub fn params(a: &RunArgs) -> Result<SysbenchParams, CliError> {
    let mut p = profile(&a.profile)
        .ok_or_else(|| CliError::Usage(format!("unknown profile '{}'", a.profile)))?;
    if let Some(l) = &a.list {
        p.list = l.parse().map_err(CliError::Usage)?;
    }
    if let Some(t) = &a.tests {
        p.tests = t
            .iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        if p.tests.is_empty() {
            return Err(CliError::Usage(
                "--tests needs at least one test name".into(),
            ));
        }
    }
    macro_rules! set {
        ($($f:ident),*) => { $( if let Some(v) = a.$f.clone() { p.$f = v; } )* };
    }
    set!(
        threads,
        tables,
        table_size,
        read_secs,
        write_secs,
        warmup_secs,
        warm_secs,
        settle_secs
    );
    if let Some(r) = &a.rand_type {
        p.rand_type = r.parse().map_err(CliError::Usage)?;
    }
    if let Some(m) = &a.ps_mode {
        p.ps_mode = if m == "disable" {
            PsMode::Disable
        } else {
            PsMode::Auto
        };
    }
    p.skip_prepare = a.skip_prepare;
    p.seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    Ok(p)
}

/// Reads a SQLite config file: one PRAGMA per line (`PRAGMA` optional), `#` comments.
fn sqlite_pragmas(path: &std::path::Path) -> Result<Vec<String>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("cannot read config file {}: {e}", path.display())))?;
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
struct Engine {
    driver: Arc<dyn Driver>,
    shown: String,
    /// The SQLite database file, for an embedded target.
    sqlite_path: Option<PathBuf>,
    /// For a URL target on this host: `Some(port)` (`Some(None)` for a unix socket).
    local_port: Option<Option<u16>>,
    server: Option<Server>,
    server_info: Option<ServerInfo>,
    _tmp: Option<tempfile::TempDir>,
}

fn sqlite_engine(path: &Option<PathBuf>, a: &RunArgs, shown: String) -> Result<Engine, CliError> {
    let pragmas = match &a.config {
        Some(c) => sqlite_pragmas(c)?,
        None => Vec::new(),
    };
    let (path, tmp) = match path {
        Some(p) => (p.clone(), None),
        None => {
            let d = tempfile::Builder::new()
                .prefix("rqps-sqlite-")
                .tempdir()
                .map_err(|e| {
                    CliError::Failed(format!("cannot create a temporary directory: {e}"))
                })?;
            (d.path().join("sbtest.db"), Some(d))
        }
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(CliError::Usage(format!(
            "target {shown}: directory {} does not exist",
            dir.display()
        )));
    }
    Ok(Engine {
        driver: Arc::new(SqliteDriver::new(&path, pragmas)),
        shown,
        sqlite_path: Some(path),
        local_port: None,
        server: None,
        server_info: None,
        _tmp: tmp,
    })
}

/// For a server URL on this host, its TCP port (`Some(None)`: a unix socket).
fn local_port(t: &Target) -> Option<Option<u16>> {
    use crate::engine::url::DbUrl;
    let (url, schemes, default_port): (&str, &[&str], u16) = match t {
        Target::Mysql(u) => (u, &["mysql", "mariadb"], 3306),
        Target::Postgres(u) => (u, &["postgres", "postgresql"], 5432),
        Target::Sqlite(_) => return None,
    };
    let u = DbUrl::parse(url, schemes).ok()?;
    match u.host.as_deref() {
        None => Some(None),
        Some(h) if h.starts_with('/') => Some(None),
        Some("127.0.0.1" | "localhost" | "::1" | "[::1]") => {
            Some(Some(u.port.unwrap_or(default_port)))
        }
        Some(_) => None,
    }
}

fn url_driver(target: &Target, a: &RunArgs) -> Result<Arc<dyn Driver>, CliError> {
    match (target, &a.mysql_storage_engine) {
        (Target::Mysql(u), Some(e)) => crate::engine::mysql::MysqlDriver::new(u)
            .and_then(|d| d.with_storage_engine(e))
            .map(|d| Arc::new(d) as Arc<dyn Driver>)
            .map_err(|e| CliError::Usage(e.to_string())),
        (_, Some(_)) => Err(not_mysql()),
        (t, None) => t
            .server_driver()
            .unwrap_or_else(|| Err("SQLite targets have no URL".into()))
            .map_err(CliError::Usage),
    }
}

fn not_mysql() -> CliError {
    CliError::Usage(
        "--mysql-storage-engine applies only to MySQL/MariaDB targets (--target mysql://... or --server mariadb)"
            .into(),
    )
}

fn server_engine(kind: &str, a: &RunArgs, ui: &Ui) -> Result<Engine, CliError> {
    let (kind, cached) = match kind.parse::<EngineRef>().map_err(CliError::Usage)? {
        EngineRef::System(k) => (k, None),
        e @ EngineRef::Cached(k, _) => (
            k,
            basedir_for(&e, false, &mut |_| {}).map_err(CliError::Usage)?,
        ),
        EngineRef::Sqlite => {
            return Err(CliError::Usage(
                "--server takes postgres or mariadb (optionally @VERSION); SQLite needs no server"
                    .into(),
            ));
        }
    };
    if cached.is_some() && a.basedir.is_some() {
        return Err(CliError::Usage(
            "give either --server KIND@VERSION or --basedir, not both".into(),
        ));
    }
    let basedir = cached.or_else(|| a.basedir.clone());
    let spec = ServerSpec {
        kind,
        basedir: basedir.clone(),
        config: a.config.clone(),
        keep: a.keep,
        parent_dir: None,
    };
    let binaries = locate(kind, basedir.as_deref()).map_err(|e| CliError::Usage(e.to_string()))?;
    let config = match &a.config {
        Some(c) => std::fs::read_to_string(c)
            .map_err(|e| CliError::Usage(format!("cannot read config file {}: {e}", c.display())))?
            .lines()
            .map(str::to_string)
            .collect(),
        None => Vec::new(),
    };
    let server = Server::start(&spec, &mut |note| ui.say(note)).map_err(|e| match e {
        ServerError::BinaryNotFound { .. } | ServerError::BadConfig { .. } => {
            CliError::Usage(e.to_string())
        }
        e => CliError::Failed(format!("cannot start the {kind} server: {e}")),
    })?;
    MANAGED_SERVER.store(server.pid(), Ordering::SeqCst);
    let url = server.url();
    let target = Target::parse(&url).map_err(CliError::Failed)?;
    let info = ServerInfo {
        kind: kind.key().to_string(),
        binary_version: server.binary_version(),
        binaries: binaries.to_string(),
        config_file: a.config.as_ref().map(|c| c.display().to_string()),
        config,
    };
    Ok(Engine {
        driver: url_driver(&target, a)?,
        shown: format!("throwaway {kind} at {}", redact(&url)),
        sqlite_path: None,
        local_port: Some(Some(server.port())),
        server: Some(server),
        server_info: Some(info),
        _tmp: None,
    })
}

/// Where the hardware figures come from for this engine: the data's device and
/// size on disk, and the server's process tree.
fn probe_context(a: &RunArgs, engine: &Engine, driver: &dyn Driver) -> ProbeContext {
    let (data_path, disk_paths, pids, embedded): (Option<PathBuf>, Vec<PathBuf>, Vec<u32>, bool) =
        match (&engine.server, &engine.sqlite_path) {
            (Some(server), _) => {
                let d = server.data_dir().to_path_buf();
                (Some(d.clone()), vec![d], vec![server.pid()], false)
            }
            (None, Some(db)) => {
                let side = |suffix: &str| PathBuf::from(format!("{}{suffix}", db.display()));
                (
                    Some(db.clone()),
                    vec![db.clone(), side("-wal"), side("-shm")],
                    vec![],
                    true,
                )
            }
            (None, None) => {
                let local = engine.local_port;
                let data = driver.data_path().filter(|p| local.is_some() && p.exists());
                let pids = match (a.server_pid, local) {
                    (Some(pid), _) => vec![pid],
                    (None, Some(Some(port))) => crate::harness::sysstat::pid_listening_on(port)
                        .into_iter()
                        .collect(),
                    _ => vec![],
                };
                (data.clone(), data.into_iter().collect(), pids, false)
            }
        };
    ProbeContext::new(
        data_path.as_deref(),
        disk_paths,
        a.device.clone(),
        pids,
        embedded,
        a.busy_threshold,
    )
}

/// Pid of a throwaway server, so a second Ctrl-C can stop it before rqps exits.
static MANAGED_SERVER: AtomicU32 = AtomicU32::new(0);

pub fn run(a: &RunArgs) -> Result<i32, CliError> {
    let plan = Plan::from_args(a)?;
    if a.repeats == 0 {
        return Err(CliError::Usage("--repeats must be at least 1".into()));
    }
    let target = match &a.target {
        Some(t) => Some(Target::parse(t).map_err(CliError::Usage)?),
        None => None,
    };
    crate::results::check_writable(&a.results).map_err(CliError::Usage)?;
    if let Some(j) = &a.json {
        let parent = j
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        if !parent.is_dir() {
            return Err(CliError::Usage(format!(
                "--json {}: directory {} does not exist",
                j.display(),
                parent.display()
            )));
        }
    }
    let ui = Ui { quiet: a.quiet };
    let sqlite = a.server.is_none() && matches!(target, None | Some(Target::Sqlite(_)));
    let postgres = a
        .server
        .as_deref()
        .is_some_and(|s| s.starts_with("postgres"));
    if let Some(e) = &a.mysql_storage_engine {
        if sqlite || postgres {
            return Err(not_mysql());
        }
        crate::engine::mysql::check_storage_engine(e).map_err(CliError::Usage)?;
    }
    install_ctrlc();
    let mut engine = match (&a.server, &target) {
        (Some(kind), _) => server_engine(kind, a, &ui)?,
        (None, None) => sqlite_engine(&None, a, Target::Sqlite(None).display())?,
        (None, Some(t @ Target::Sqlite(path))) => sqlite_engine(path, a, t.display())?,
        (None, Some(t)) => Engine {
            driver: url_driver(t, a)?,
            shown: t.display(),
            sqlite_path: None,
            local_port: local_port(t),
            server: None,
            server_info: None,
            _tmp: None,
        },
    };
    let code = run_on(a, &plan, &mut engine, &ui);
    if let Some(server) = engine.server.take() {
        MANAGED_SERVER.store(0, Ordering::SeqCst);
        if let Err(e) = server.stop_with_notes(&mut |note| ui.say(note)) {
            eprintln!("warning: stopping the throwaway server: {e}");
        }
    }
    code
}

fn run_on(a: &RunArgs, plan: &Plan, engine: &mut Engine, ui: &Ui) -> Result<i32, CliError> {
    let driver = engine.driver.clone();
    // Connect once up front so a bad target or config fails before anything is stored.
    drop(
        driver
            .connect()
            .map_err(|e| CliError::Usage(format!("cannot connect to {}: {e}", engine.shown)))?,
    );
    let version = driver
        .version()
        .map_err(|e| CliError::Failed(format!("cannot read the engine version: {e}")))?;
    let settings = driver
        .settings()
        .map_err(|e| CliError::Failed(format!("cannot read the server settings: {e}")))?
        .into_iter()
        .collect();
    let engine_label = if version.to_lowercase().contains("mariadb") {
        "mariadb"
    } else {
        driver.engine()
    };
    let name = a
        .name
        .clone()
        .unwrap_or_else(|| format!("{engine_label}-{}", short_version(&version)));
    let probe = probe_context(a, engine, driver.as_ref());
    let mut host = crate::harness::host::host();
    host.data_fs = probe.fs.clone();
    host.data_device = probe.device.clone();
    let doc = RunDoc {
        rqps_version: env!("CARGO_PKG_VERSION").into(),
        git_commit: option_env!("RQPS_GIT_COMMIT")
            .filter(|s| !s.is_empty())
            .map(String::from),
        run_id: String::new(),
        name,
        suite: a.suite.clone(),
        repeat: 1,
        status: "running".into(),
        started: crate::util::now_rfc3339(),
        finished: None,
        command_line: redact_args(&if a.argv.is_empty() {
            std::env::args().collect()
        } else {
            a.argv.clone()
        }),
        target: engine.shown.clone(),
        engine: EngineInfo {
            name: driver.engine().into(),
            version,
        },
        server: engine.server_info.clone(),
        settings,
        params: {
            let mut p = plan.params_json();
            if let (Some(e), Some(o)) = (&a.mysql_storage_engine, p.as_object_mut()) {
                o.insert("mysql_storage_engine".into(), e.clone().into());
            }
            p
        },
        host,
        load: None,
        tests: Vec::new(),
    };
    let repeats = a.repeats;
    let mut code = 0;
    let numbers: Vec<usize> = match a.repeat_number {
        Some(n) => vec![n.max(1)],
        None => (1..=repeats).collect(),
    };
    for repeat in numbers {
        if crate::harness::runner::stop_requested() {
            break;
        }
        let mut doc = doc.clone();
        doc.repeat = repeat;
        let json = a.json.as_ref().map(|j| {
            if repeats > 1 {
                numbered(j, repeat)
            } else {
                j.clone()
            }
        });
        let c = run_repeat(doc, json, a, plan, engine, &probe, ui, repeats)?;
        // Ctrl-C wins over a failure, a failure over success.
        if c == EXIT_INTERRUPTED || code != EXIT_INTERRUPTED && c != 0 {
            code = c;
        }
    }
    Ok(code)
}

/// `run.json` → `run-r2.json`, for the documents of repeats.
fn numbered(path: &std::path::Path, repeat: usize) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-r{repeat}.{}", ext.to_string_lossy()),
        None => format!("{stem}-r{repeat}"),
    };
    path.with_file_name(name)
}

/// One repeat of the suite: its own stored run.
#[allow(clippy::too_many_arguments)]
fn run_repeat(
    doc: RunDoc,
    json: Option<PathBuf>,
    a: &RunArgs,
    plan: &Plan,
    engine: &Engine,
    probe: &ProbeContext,
    ui: &Ui,
    repeats: usize,
) -> Result<i32, CliError> {
    let repeat = doc.repeat;
    let mut store = Store::create(&a.results, doc, json).map_err(CliError::Usage)?;
    ui.say(&format!(
        "rqps {}: {} on {} ({} {}), {} steps, about {:.0} s{}; results in {}",
        env!("CARGO_PKG_VERSION"),
        plan.profile(),
        engine.shown,
        store.doc().engine.name,
        store.doc().engine.version,
        plan.step_count(),
        plan.estimate_secs(),
        if repeats > 1 {
            format!(", repeat {repeat} of {repeats}")
        } else {
            String::new()
        },
        store.dir().display()
    ));
    let end = match plan {
        Plan::Sysbench { p, steps } => run_sysbench(
            &mut Session {
                driver: engine.driver.clone(),
                p,
                store: &mut store,
                ui,
                probe,
            },
            steps,
        ),
        Plan::Ibench(p) => {
            crate::suite::ibench::run::run_ibench(&mut crate::suite::ibench::run::IbSession {
                driver: engine.driver.clone(),
                p,
                store: &mut store,
                ui,
                probe,
            })
        }
    };
    let (status, code) = match &end {
        Ok(RunEnd::Ok) => ("ok", 0),
        Ok(RunEnd::Failed) => ("failed", EXIT_FAILED),
        Ok(RunEnd::Interrupted) => ("interrupted", EXIT_INTERRUPTED),
        Err(_) if crate::harness::runner::stop_requested() => ("interrupted", EXIT_INTERRUPTED),
        Err(_) => ("failed", EXIT_FAILED),
    };
    store.finish(status).map_err(CliError::Failed)?;
    println!("{}", crate::report::table::run_table(store.doc(), false));
    eprintln!("results: {}", store.dir().display());
    if let Err(m) = end {
        eprintln!("error: {m}");
    }
    Ok(code)
}

fn install_ctrlc() {
    let _ = ctrlc::set_handler(|| {
        if crate::harness::runner::stop_requested() {
            eprintln!("\nstopping now");
            std::process::exit(EXIT_INTERRUPTED);
        }
        eprintln!(
            "\ninterrupted: finishing the current events and saving results (Ctrl-C again to quit at once)"
        );
        crate::harness::runner::request_stop();
    });
}
