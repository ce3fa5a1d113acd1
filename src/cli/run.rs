//! `rqps run`: from arguments to a stored, printed run.

use super::{CliError, EXIT_FAILED, EXIT_INTERRUPTED, RunArgs};
use crate::engine::open::{EngineArgs, OpenError, Opened};
use crate::engine::target::redact_args;
use crate::harness::probe::ProbeContext;
use crate::harness::{Harness, RunEnd, Ui};
use crate::results::{EngineInfo, RunDoc, Status, Store};
use crate::suite::{Common, Plan, Suite};
use std::path::PathBuf;

/// `10.11.19-MariaDB-0+deb12u1` → `10.11.19`; `PostgreSQL 15.18 (Debian ...)` → `15.18`.
fn short_version(v: &str) -> String {
    v.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find(|s| s.contains('.') && s.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or(v)
        .to_string()
}

/// The engine options of `rqps run`.
pub fn engine_args(a: &RunArgs) -> EngineArgs {
    EngineArgs {
        target: a.target.clone(),
        server: a.server.clone(),
        basedir: a.basedir.clone(),
        keep: a.keep,
        config: a.config.clone(),
        options: a.engine_options.clone(),
        server_cpus: a.server_cpus.clone(),
        password_file: a.password_file.clone(),
        need: None,
    }
}

fn open_error(e: OpenError) -> CliError {
    match e {
        OpenError::Usage(m) => CliError::Usage(m),
        OpenError::Failed(m) => CliError::Failed(m),
    }
}

/// `rqps run`: the chosen suite's plan from its parsed options, then the run.
pub fn run_cli(a: &RunArgs, suite: &dyn Suite, m: &clap::ArgMatches) -> Result<i32, CliError> {
    let plan = suite.plan_cli(&common(a), m)?;
    let (code, name) = run_named(a, plan.as_ref())?;
    // The last line: what to do next. Not for a matrix's child runs (it
    // reports itself), nor under --quiet, nor after Ctrl-C.
    if let Some(name) = name
        && !a.quiet
        && a.repeat_number.is_none()
        && code != EXIT_INTERRUPTED
    {
        eprintln!("{}", next_step(&a.results, &name));
    }
    Ok(code)
}

/// `s` as one word for a POSIX shell: as it is when that is safe, else in single quotes.
fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.,/:@%+=".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `compare with: ...`: the commands that compare the run named `name`
/// with another target. With other names stored already, the report of
/// them all against the oldest; else a second run, then the report.
pub fn next_step(results: &std::path::Path, name: &str) -> String {
    let dir = if results == std::path::Path::new("rqps-results") {
        String::new()
    } else {
        format!(" --results {}", shell_word(&results.display().to_string()))
    };
    let names = crate::report::load::read_results(results)
        .map(|(runs, _)| crate::report::load::names(&runs))
        .unwrap_or_default();
    match names.iter().find(|n| *n != name) {
        Some(base) => format!(
            "compare with: rqps report{dir} --base {} (`rqps runs{dir}` lists the {} names stored)",
            shell_word(base),
            names.len()
        ),
        None => format!(
            "compare with: rqps run --name B{dir} … (the same options, another --target, --server or --config); rqps report{dir} --base {}",
            shell_word(name)
        ),
    }
}

/// What every suite's plan starts from.
pub fn common(a: &RunArgs) -> Common {
    Common {
        profile: a.profile.clone(),
        seed: a.seed.unwrap_or_else(crate::suite::clock_seed),
        part: a.part,
    }
}

/// Runs a plan against the engine `a` names, `a.repeats` times (each its own stored run).
pub fn run(a: &RunArgs, plan: &dyn Plan) -> Result<i32, CliError> {
    run_named(a, plan).map(|(code, _)| code)
}

/// [`run`], and the name the runs were stored under (`None` when nothing was).
fn run_named(a: &RunArgs, plan: &dyn Plan) -> Result<(i32, Option<String>), CliError> {
    if a.repeats == 0 {
        return Err(CliError::Usage("--repeats must be at least 1".into()));
    }
    if !(0.0..=100.0).contains(&a.busy_threshold) {
        return Err(CliError::Usage(format!(
            "--busy-threshold must be a percentage from 0 to 100, got {}",
            a.busy_threshold
        )));
    }
    if let Some(t) = a.start_at
        && let Ok(ahead) = t.duration_since(std::time::SystemTime::now())
        && ahead > std::time::Duration::from_secs(86_400)
    {
        return Err(CliError::Usage(format!(
            "--start-at {} is {:.0} hours ahead: give a time within the next 24 hours",
            humantime::format_rfc3339_seconds(t),
            ahead.as_secs_f64() / 3600.0
        )));
    }
    let stmt_timeout = match a.stmt_timeout.map(|s| s.get()) {
        Some(s) if s < 1.0 => {
            return Err(CliError::Usage(format!(
                "--stmt-timeout must be at least 1 second, got {s}"
            )));
        }
        Some(s) => std::time::Duration::from_secs_f64(s),
        None => crate::engine::DEFAULT_STATEMENT_TIMEOUT,
    };
    crate::engine::set_statement_timeout(stmt_timeout);
    let message_timeout = match a.message_timeout.map(|s| s.get()) {
        Some(s) if s < 1.0 => {
            return Err(CliError::Usage(format!(
                "--message-timeout must be at least 1 second, got {s}"
            )));
        }
        Some(s) => std::time::Duration::from_secs_f64(s),
        None => crate::engine::DEFAULT_MESSAGE_TIMEOUT,
    };
    crate::engine::set_message_timeout(message_timeout);
    let ea = EngineArgs {
        need: Some(plan.need()),
        ..engine_args(a)
    };
    crate::engine::open::check(&ea).map_err(open_error)?;
    crate::engine::open::check_face(&ea, plan.suite(), plan.face()).map_err(open_error)?;
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
        crate::util::check_output(j).map_err(|e| CliError::Usage(format!("--json {e}")))?;
    }
    check_space(plan, &ea)?;
    crate::results::check_writable(&a.results)?;
    let ui = Ui::new(a.quiet);
    install_signals();
    // What a killed rqps (SIGKILL, a reset) could not remove.
    for line in crate::engine::server::remove_stale_dirs() {
        eprintln!("rqps: {line}");
    }
    let mut engine =
        crate::engine::open::open(&ea, &mut |note| ui.say(note)).map_err(open_error)?;
    if let Err(e) = plan.check_target(engine.driver.as_ref()) {
        engine.close(&mut |note| ui.say(note));
        return Err(e.into());
    }
    // The server is started: what rqps spawns from here (workers, loaders)
    // runs on the client's CPUs, until the guard restores the previous set.
    let pinned = match &a.client_cpus {
        Some(c) => match c.pin_this_thread() {
            Ok(g) => Some(g),
            Err(e) => {
                engine.close(&mut |note| ui.say(note));
                return Err(CliError::Failed(format!(
                    "cannot pin rqps to CPUs {c} (--client-cpus): {e}"
                )));
            }
        },
        None => None,
    };
    let code = run_on(a, plan, &mut engine, &ui);
    drop(pinned);
    engine.close(&mut |note| ui.say(note));
    code
}

fn run_on(
    a: &RunArgs,
    plan: &dyn Plan,
    engine: &mut Opened,
    ui: &Ui,
) -> Result<(i32, Option<String>), CliError> {
    let driver = engine.driver.clone();
    // Connect once up front so a bad target or config fails before anything is stored.
    let connected = match driver.kv() {
        Some(kv) => kv.connect().map(drop),
        None => driver.require_sql().and_then(|db| db.connect()).map(drop),
    };
    connected.map_err(|e| CliError::Usage(format!("cannot connect to {}: {e}", engine.shown)))?;
    // A server too small for the plan fails now, not after the load.
    crate::engine::open::check_capacity(&plan.need(), driver.as_ref()).map_err(open_error)?;
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
    let mut probe = ProbeContext::for_engine(
        &engine.footprint(a.server_pid),
        a.device.clone(),
        a.busy_threshold,
    );
    if a.cpu_profile {
        // Said once, here (not again per test or in the summary); the
        // tests run on without profiles.
        match crate::harness::profile::check() {
            Ok(()) => probe.cpu_profile = true,
            Err(why) => ui.warn(&format!(
                "--cpu-profile: no CPU profiles in this run: {why}"
            )),
        }
    }
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
        suite: plan.suite().to_string(),
        repeat: 1,
        status: Status::Running,
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
            // Engine options change what is measured, so "what differs" shows them.
            if let Some(o) = p.as_object_mut() {
                for (k, v) in &a.engine_options {
                    if let Ok(v) = serde_json::to_value(v) {
                        o.insert(k.clone(), v);
                    }
                }
                // CPU budgets too: the server's as the kernel reports it.
                if let Some(c) = &engine.server_cpus {
                    o.insert("server_cpus".into(), c.clone().into());
                }
                // The client's as the kernel reports it for this (pinned) thread,
                // whose set the workers inherit.
                if let Some(c) = &a.client_cpus {
                    let now = crate::util::cpus::of_this_thread().unwrap_or_else(|| c.clone());
                    o.insert("client_cpus".into(), now.to_string().into());
                }
                // TLS, when the connection uses it: its version and cipher change the
                // cost per query. Absent: plaintext (or a unix socket).
                if let Some(t) = driver.tls() {
                    o.insert("tls".into(), t.to_string().into());
                }
            }
            p
        },
        host,
        load: None,
        part: None,
        merged_from: Vec::new(),
        tests: Vec::new(),
        owner: Some(crate::results::Owner::this_process()),
    };
    let repeats = a.repeats;
    let mut code = 0;
    let numbers: Vec<usize> = match a.repeat_number {
        Some(n) => vec![n.max(1)],
        None => (1..=repeats).collect(),
    };
    let first_repeat = numbers.first().copied();
    let mut stored = None;
    for repeat in numbers {
        if crate::harness::runner::stop_requested() {
            break;
        }
        let mut doc = doc.clone();
        doc.repeat = repeat;
        // Only the first run of this process waits for --start-at.
        doc.part = begin_part(a, Some(repeat) == first_repeat, ui);
        let json = a.json.as_ref().map(|j| {
            // A device or FIFO gets every repeat's document in turn.
            let stream = matches!(
                crate::util::output_path(j),
                Ok(crate::util::OutputPath::Stream)
            );
            if repeats > 1 && !stream {
                numbered(j, repeat)
            } else {
                j.clone()
            }
        });
        stored = Some(doc.name.clone());
        let c = run_repeat(doc, json, a, plan, engine, &probe, ui, repeats)?;
        // Ctrl-C wins over a failure, a failure over success.
        if c == EXIT_INTERRUPTED || code != EXIT_INTERRUPTED && c != 0 {
            code = c;
        }
    }
    Ok((code, stored))
}

/// Waits for `--start-at` (when `first`), then says which part this run is
/// and whether it began late; `None` without `--part` and `--start-at`.
fn begin_part(a: &RunArgs, first: bool, ui: &Ui) -> Option<crate::results::PartInfo> {
    use std::time::{Duration, SystemTime};
    let start_at = a.start_at.filter(|_| first);
    if let Some(t) = start_at
        && let Ok(wait) = t.duration_since(SystemTime::now())
    {
        ui.say(&format!(
            "waiting {:.1} s for --start-at {}",
            wait.as_secs_f64(),
            humantime::format_rfc3339_seconds(t)
        ));
        while let Ok(left) = t.duration_since(SystemTime::now()) {
            if crate::harness::runner::stop_requested() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(50)));
        }
    }
    if a.part.is_none() && start_at.is_none() {
        return None;
    }
    let now = SystemTime::now();
    let late_secs = start_at
        .and_then(|t| now.duration_since(t).ok())
        .map_or(0.0, |d| d.as_secs_f64());
    let late = late_secs > crate::results::LATE_TOLERANCE_SECS;
    if late {
        ui.warn(&format!(
            "started {late_secs:.1} s after --start-at: this part is flagged late"
        ));
    }
    Some(crate::results::PartInfo {
        index: a.part.map_or(1, |p| p.index),
        count: a.part.map_or(1, |p| p.count),
        start_at: start_at.map(|t| humantime::format_rfc3339_millis(t).to_string()),
        started: humantime::format_rfc3339_millis(now).to_string(),
        late_secs,
        late,
        run_id: None,
        host: None,
    })
}

/// Refuses a plan whose load needs more than the free space where the
/// engine's data will be, when rqps knows where that is (not for a server
/// URL): a load that cannot fit fails hours later, or fills the disk.
fn check_space(plan: &dyn crate::suite::Plan, ea: &EngineArgs) -> Result<(), CliError> {
    let need = plan.load_bytes();
    if need == 0 {
        return Ok(());
    }
    let Some(dir) = crate::engine::open::data_dir(ea) else {
        return Ok(());
    };
    let Some(free) = crate::util::free_bytes(&dir) else {
        return Ok(());
    };
    if need <= free {
        return Ok(());
    }
    let gb = |b: u64| b as f64 / 1e9;
    Err(CliError::Usage(format!(
        "the {} load needs about {:.1} GB (the suite's estimate) but {} has {:.1} GB free: make the load smaller, or put the data where there is room (another path, or TMPDIR for a throwaway engine)",
        plan.suite(),
        gb(need),
        dir.display(),
        gb(free)
    )))
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
    plan: &dyn Plan,
    engine: &Opened,
    probe: &ProbeContext,
    ui: &Ui,
    repeats: usize,
) -> Result<i32, CliError> {
    let repeat = doc.repeat;
    let mut store = Store::create(&a.results, doc, json)?;
    ui.say(&format!(
        "rqps {}: {} on {} ({} {}), {} steps, about {:.0} s{}; results in {}",
        env!("CARGO_PKG_VERSION"),
        plan.profile(),
        engine.shown,
        store.doc().engine.name,
        store.doc().engine.version,
        plan.step_count(),
        crate::suite::estimate_total_secs(plan),
        if repeats > 1 {
            format!(", repeat {repeat} of {repeats}")
        } else {
            String::new()
        },
        store.dir().display()
    ));
    let end = plan.run(&mut Harness {
        driver: engine.driver.clone(),
        store: &mut store,
        ui,
        probe,
        line: plan.line(),
    });

    let (status, code) = match &end {
        Ok(RunEnd::Ok) => (Status::Ok, 0),
        Ok(RunEnd::Failed) => (Status::Failed, EXIT_FAILED),
        Ok(RunEnd::Interrupted) => (Status::Interrupted, EXIT_INTERRUPTED),
        Err(_) if crate::harness::runner::stop_requested() => {
            (Status::Interrupted, EXIT_INTERRUPTED)
        }
        Err(_) => (Status::Failed, EXIT_FAILED),
    };
    store.finish(status)?;
    println!(
        "{}",
        crate::report::table::run_table(store.doc(), false, &super::report::sections())
    );
    eprintln!("results: {}", store.dir().display());
    if let Err(m) = end {
        eprintln!("error: {m}");
    }
    Ok(code)
}

/// Ctrl-C, SIGTERM and SIGHUP all stop the run the same way: the current
/// events finish, the running test is stored as `interrupted`, the
/// throwaway server is stopped and its files removed, and rqps exits with
/// 128 + the signal. A second one quits at once, still killing the server
/// and removing its files first.
pub(crate) fn install_signals() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        let _ = std::thread::Builder::new()
            .name("rqps-signals".into())
            .spawn(move || {
                for sig in signals.forever() {
                    on_signal(sig);
                }
            });
    });
}

/// The `rqps run` child a matrix waits for (0: none). A signal to the matrix
/// is passed on to it, so that it stores its test as `interrupted` too.
pub(crate) static CHILD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

fn on_signal(sig: i32) {
    use crate::harness::runner;
    let child = CHILD.load(std::sync::atomic::Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill(2) on a child this process started and still waits for.
        unsafe { libc::kill(child, sig) };
    }
    let name = match sig {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "Ctrl-C",
    };
    if runner::stop_requested() {
        eprintln!("\n{name}: stopping now");
        runner::begin_quitting();
        crate::engine::server::abandon_all();
        std::process::exit(runner::stop_exit_code());
    }
    eprintln!(
        "\n{name}: finishing the current events and saving results (Ctrl-C again to quit at once)"
    );
    runner::request_stop_by(sig);
}
