//! A run session: from a typed [`RunSpec`] (built by `rqps run` from its
//! arguments, or by a matrix from its file) to stored runs. The session
//! checks the spec, opens the engine, pins the client's CPUs, writes the run
//! document, runs the repeats (waiting for `--start-at`, marking a `--part`)
//! and closes the engine; the harness runs each test inside it.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::error::{EXIT_FAILED, EXIT_INTERRUPTED, Error, failed, usage};
use crate::harness::probe::ProbeContext;
use crate::harness::{Harness, RunEnd, Ui};
use crate::plan::open::{EngineArgs, Opened};
use crate::results::{EngineInfo, PartInfo, RunDoc, Status, Store};
use crate::suite::Plan;
use crate::util::cpus::CpuSet;

/// Everything one `rqps run` (or one step of a matrix) needs, typed and
/// parsed once.
pub struct RunSpec {
    /// The suite's plan (its profile and options).
    pub plan: Box<dyn Plan>,
    /// The engine: the target (parsed), the throwaway server, its config,
    /// options and CPU budget.
    pub engine: EngineArgs,
    /// `--client-cpus`: the CPUs rqps's client threads run on.
    pub client_cpus: Option<CpuSet>,
    /// How many repeats to run, each its own stored run.
    pub repeats: usize,
    /// Store the one run as this repeat of its name (matrices interleave repeats).
    pub repeat_number: Option<usize>,
    /// `--part I/N`: this process's share of the load.
    pub part: Option<crate::suite::part::Part>,
    /// `--start-at`: when the first test begins.
    pub start_at: Option<SystemTime>,
    /// The run's name (default: engine-version).
    pub name: Option<String>,
    /// Store under a name whose stored runs are another experiment.
    pub allow_mismatch: bool,
    pub results: PathBuf,
    /// Also write each run's document as one JSON file here.
    pub json: Option<PathBuf>,
    /// The block device charged with each test's IO.
    pub device: Option<String>,
    /// The pid of a `--target` server on this host.
    pub server_pid: Option<u32>,
    /// Seconds of server silence that fail a statement (default: the engine's).
    pub stmt_timeout: Option<f64>,
    /// Seconds of silence mid-message that drop a connection.
    pub message_timeout: Option<f64>,
    /// Percent of all CPUs other processes may use before a test.
    pub busy_threshold: f64,
    pub cpu_profile: bool,
    pub quiet: bool,
    /// The command line the run is stored with (redacted when stored).
    pub command_line: Vec<String>,
}

/// How a session ended: its exit status (0, [`EXIT_FAILED`] or
/// [`EXIT_INTERRUPTED`]) and the name its runs were stored under (`None`
/// when nothing was stored).
pub struct Ran {
    pub code: i32,
    pub name: Option<String>,
}

/// A run session with its engine open.
pub struct Session<'a> {
    spec: &'a RunSpec,
    engine: Opened,
    ui: Ui,
    /// Restores the thread's CPUs when the session closes.
    pinned: Option<crate::util::cpus::Pinned>,
}

/// Runs `spec` in a session of its own: opens, runs, closes.
pub fn run(spec: &RunSpec) -> Result<Ran, Error> {
    let mut s = Session::open(spec)?;
    let ran = s.run();
    s.close();
    ran
}

impl RunSpec {
    /// The engine arguments with what the plan needs of a server.
    fn engine_args(&self) -> EngineArgs {
        EngineArgs {
            need: Some(self.plan.need()),
            ..self.engine.clone()
        }
    }

    /// Refuses what cannot work before anything starts: one line that says
    /// what to change.
    fn check(&self, ea: &EngineArgs) -> Result<(), Error> {
        if self.repeats == 0 {
            return Err(usage("--repeats must be at least 1"));
        }
        if !(0.0..=100.0).contains(&self.busy_threshold) {
            return Err(usage(format!(
                "--busy-threshold must be a percentage from 0 to 100, got {}",
                self.busy_threshold
            )));
        }
        if let Some(t) = self.start_at
            && let Ok(ahead) = t.duration_since(SystemTime::now())
            && ahead > Duration::from_secs(86_400)
        {
            return Err(usage(format!(
                "--start-at {} is {:.0} hours ahead: give a time within the next 24 hours",
                humantime::format_rfc3339_seconds(t),
                ahead.as_secs_f64() / 3600.0
            )));
        }
        let timeout = |flag: &str, v: Option<f64>, default: Duration| match v {
            Some(s) if s < 1.0 => Err(usage(format!(
                "--{flag} must be at least 1 second, got {s}"
            ))),
            Some(s) => Ok(Duration::from_secs_f64(s)),
            None => Ok(default),
        };
        let stmt = timeout(
            "stmt-timeout",
            self.stmt_timeout,
            crate::engine::DEFAULT_STATEMENT_TIMEOUT,
        )?;
        crate::engine::set_statement_timeout(stmt);
        let message = timeout(
            "message-timeout",
            self.message_timeout,
            crate::engine::DEFAULT_MESSAGE_TIMEOUT,
        )?;
        crate::engine::set_message_timeout(message);
        crate::plan::open::check(ea)?;
        crate::plan::open::check_face(ea, self.plan.suite(), self.plan.face())?;
        if let Some(j) = &self.json {
            let parent = j
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if !parent.is_dir() {
                return Err(usage(format!(
                    "--json {}: directory {} does not exist",
                    j.display(),
                    parent.display()
                )));
            }
            crate::util::check_output(j).map_err(|e| usage(format!("--json {e}")))?;
        }
        check_space(self.plan.as_ref(), ea)?;
        crate::results::check_writable(&self.results)?;
        Ok(())
    }
}

impl<'a> Session<'a> {
    /// Checks the spec, opens its engine and pins the client's CPUs.
    pub fn open(spec: &'a RunSpec) -> Result<Session<'a>, Error> {
        let ea = spec.engine_args();
        spec.check(&ea)?;
        let ui = Ui::new(spec.quiet);
        crate::plan::signals::install();
        // What a killed rqps (SIGKILL, a reset) could not remove.
        let stale = crate::engine::server::remove_stale_dirs();
        for line in stale
            .iter()
            .chain(&crate::engine::install::reclaim_partial())
        {
            eprintln!("rqps: {line}");
        }
        let engine = crate::plan::open::open(&ea, &mut |note| ui.say(note))?;
        if let Err(e) = spec.plan.check_target(engine.driver.as_ref()) {
            engine.close(&mut |note| ui.say(note));
            return Err(e);
        }
        // The server is started: what rqps spawns from here (workers, loaders)
        // runs on the client's CPUs, until the guard restores the previous set.
        let pinned = match &spec.client_cpus {
            Some(c) => match c.pin_this_thread() {
                Ok(g) => Some(g),
                Err(e) => {
                    engine.close(&mut |note| ui.say(note));
                    return Err(failed(format!(
                        "cannot pin rqps to CPUs {c} (--client-cpus): {e}"
                    )));
                }
            },
            None => None,
        };
        Ok(Session {
            spec,
            engine,
            ui,
            pinned,
        })
    }

    /// Unpins the client and stops a throwaway server.
    pub fn close(self) {
        drop(self.pinned);
        let ui = self.ui;
        self.engine.close(&mut |note| ui.say(note));
    }

    /// Runs every repeat of the spec.
    pub fn run(&mut self) -> Result<Ran, Error> {
        let (spec, ui) = (self.spec, &self.ui);
        let driver = self.engine.driver.clone();
        // Connect once up front so a bad target or config fails before anything is stored.
        let connected = match driver.kv() {
            Some(kv) => kv.connect().map(drop),
            None => driver.require_sql().and_then(|db| db.connect()).map(drop),
        };
        connected.map_err(|e| usage(connect_failed(&self.engine.shown, &e.to_string())))?;
        // A server too small for the plan fails now, not after the load.
        crate::plan::open::check_capacity(&spec.plan.need(), driver.as_ref())?;
        let mut probe = ProbeContext::for_engine(
            &self.engine.footprint(spec.server_pid),
            spec.device.clone(),
            spec.busy_threshold,
        );
        // The engine's version and settings first: a failure there ends the
        // run before any warning is printed (as before the session moved
        // here).
        let doc = self.document(&probe)?;
        // A name's runs are repeats of one experiment: refused before any
        // test runs when they would not be.
        if !spec.allow_mismatch {
            same_experiment(&spec.results, &doc)?;
        }
        if spec.cpu_profile {
            // Said once, here (not again per test or in the summary); the
            // tests run on without profiles.
            match crate::harness::profile::check() {
                Ok(()) => probe.cpu_profile = true,
                Err(why) => ui.warn(&format!(
                    "--cpu-profile: no CPU profiles in this run: {why}"
                )),
            }
        }
        let mut code = 0;
        let numbers: Vec<usize> = match spec.repeat_number {
            Some(n) => vec![n.max(1)],
            None => (1..=spec.repeats).collect(),
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
            doc.part = begin_part(spec, Some(repeat) == first_repeat, ui);
            // Each repeat its own start (its end is stamped when it finishes).
            doc.started = crate::util::now_rfc3339();
            let json = spec.json.as_ref().map(|j| {
                // A device or FIFO gets every repeat's document in turn.
                let stream = matches!(
                    crate::util::output_path(j),
                    Ok(crate::util::OutputPath::Stream)
                );
                if spec.repeats > 1 && !stream {
                    numbered(j, repeat)
                } else {
                    j.clone()
                }
            });
            stored = Some(doc.name.clone());
            let c = self.run_repeat(doc, json, &probe)?;
            // Ctrl-C wins over a failure, a failure over success.
            if c == EXIT_INTERRUPTED || code != EXIT_INTERRUPTED && c != 0 {
                code = c;
            }
        }
        Ok(Ran { code, name: stored })
    }

    /// The run document every repeat starts from: the engine (as its
    /// server names itself), its settings, the plan's
    /// parameters with the engine options and CPU budgets, and the host.
    fn document(&self, probe: &ProbeContext) -> Result<RunDoc, Error> {
        let (spec, engine) = (self.spec, &self.engine);
        let driver = engine.driver.clone();
        let version = driver
            .version()
            .map_err(|e| failed(format!("cannot read the engine version: {e}")))?;
        let settings = driver
            .settings()
            .map_err(|e| failed(format!("cannot read the server settings: {e}")))?
            .into_iter()
            .collect();
        // After the connection above: a MySQL-protocol driver names the
        // product its server said it is (mysql or mariadb).
        let name = spec
            .name
            .clone()
            .unwrap_or_else(|| default_name(driver.engine(), &version));
        let mut host = crate::harness::host::host();
        host.data_fs = probe.fs.clone();
        host.data_device = probe.device.clone();
        let mut params = spec.plan.params_json();
        // Engine options change what is measured, so "what differs" shows them.
        if let Some(o) = params.as_object_mut() {
            for (k, v) in &spec.engine.options {
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
            if let Some(c) = &spec.client_cpus {
                let now = crate::util::cpus::of_this_thread().unwrap_or_else(|| c.clone());
                o.insert("client_cpus".into(), now.to_string().into());
            }
            // TLS, when the connection uses it: its version and cipher change the
            // cost per query. Absent: plaintext (or a unix socket).
            if let Some(t) = driver.tls() {
                o.insert("tls".into(), t.to_string().into());
            }
        }
        Ok(RunDoc {
            rqps_version: env!("CARGO_PKG_VERSION").into(),
            git_commit: option_env!("RQPS_GIT_COMMIT")
                .filter(|s| !s.is_empty())
                .map(String::from),
            run_id: String::new(),
            name,
            suite: spec.plan.suite().to_string(),
            repeat: 1,
            status: Status::Running,
            started: crate::util::now_rfc3339(),
            finished: None,
            command_line: crate::engine::target::redact_args(&spec.command_line),
            target: engine.shown.clone(),
            engine: EngineInfo {
                name: driver.engine().into(),
                version,
                auth: driver.auth(),
            },
            server: engine.server_info.clone(),
            settings,
            params,
            host,
            load: None,
            part: None,
            merged_from: Vec::new(),
            tests: Vec::new(),
            owner: Some(crate::results::Owner::this_process()),
        })
    }

    /// One repeat of the suite: its own stored run.
    fn run_repeat(
        &self,
        doc: RunDoc,
        json: Option<PathBuf>,
        probe: &ProbeContext,
    ) -> Result<i32, Error> {
        let (spec, ui, plan) = (self.spec, &self.ui, self.spec.plan.as_ref());
        let repeat = doc.repeat;
        let mut store = Store::create(&spec.results, doc, json)?;
        ui.say(&format!(
            "rqps {}: {} on {} ({} {}), {} steps, about {:.0} s{}; results in {}",
            env!("CARGO_PKG_VERSION"),
            plan.profile(),
            self.engine.shown,
            store.doc().engine.name,
            store.doc().engine.version,
            plan.step_count(),
            crate::suite::estimate_total_secs(plan),
            if spec.repeats > 1 {
                format!(", repeat {repeat} of {}", spec.repeats)
            } else {
                String::new()
            },
            store.dir().display()
        ));
        let end = plan.run(&mut Harness {
            driver: self.engine.driver.clone(),
            store: &mut store,
            ui,
            probe,
            line: plan.line(),
            units: plan.units(),
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
            crate::report::table::run_table(store.doc(), false, &crate::suite::report_sections())
        );
        eprintln!("results: {}", store.dir().display());
        if let Err(m) = end {
            eprintln!("error: {m}");
        }
        Ok(code)
    }
}

/// Refuses to store `doc` under its name when the results already hold a
/// run of its suite under that name that is another experiment
/// ([`crate::report::load::experiment_differences`]): one line naming what
/// differs, and a name to give instead.
fn same_experiment(results: &Path, doc: &RunDoc) -> Result<(), Error> {
    let stored = crate::results::run_heads_named(results, &doc.name);
    let Some(last) = stored.iter().rev().find(|r| r.suite == doc.suite) else {
        return Ok(());
    };
    let d = crate::report::load::experiment_differences(last, doc, &crate::suite::workloads());
    if d.is_empty() {
        return Ok(());
    }
    let free = crate::plan::hints::free_name(results, &doc.name);
    Err(usage(format!(
        "{} already holds {} run(s) named '{}' of {} that are another experiment (from run {} to this one: {}); a name's runs are pooled as repeats, so give this run its own name (--name {}) or pass --allow-mismatch to pool it all the same",
        results.display(),
        stored.iter().filter(|r| r.suite == doc.suite).count(),
        doc.name,
        doc.suite,
        last.run_id,
        crate::report::load::differences_text(&d),
        crate::plan::hints::shell_word(&free)
    )))
}

/// `10.11.19-MariaDB-0+deb12u1` → `10.11.19`; `PostgreSQL 15.18 (Debian ...)` → `15.18`.
/// The name a run of `engine` (as its driver names it: `mysql`,
/// `mariadb`, `postgres`) at `version` gets without `--name`:
/// `postgres-16.15`, `mariadb-11.4.5`.
pub fn default_name(engine: &str, version: &str) -> String {
    format!("{engine}-{}", short_version(version))
}

fn short_version(v: &str) -> String {
    v.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find(|s| s.contains('.') && s.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or(v)
        .to_string()
}

/// Waits for `--start-at` (when `first`), then says which part this run is
/// and whether it began late; `None` without `--part` and `--start-at`.
fn begin_part(spec: &RunSpec, first: bool, ui: &Ui) -> Option<PartInfo> {
    let start_at = spec.start_at.filter(|_| first);
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
    if spec.part.is_none() && start_at.is_none() {
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
    Some(PartInfo {
        index: spec.part.map_or(1, |p| p.index),
        count: spec.part.map_or(1, |p| p.count),
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
fn check_space(plan: &dyn Plan, ea: &EngineArgs) -> Result<(), Error> {
    let need = plan.load_bytes();
    if need == 0 {
        return Ok(());
    }
    let Some(dir) = crate::plan::open::data_dir(ea) else {
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

/// `run.json` → `run-r2.json`, for the documents of repeats.
fn numbered(path: &Path, repeat: usize) -> PathBuf {
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

#[cfg(test)]
mod connect_failed_tests {
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
