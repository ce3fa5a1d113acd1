//! A run session: from a typed [`RunSpec`] (built by `rqps run` from its
//! arguments, or by a matrix from its file) to stored runs. The session
//! checks the spec, opens the engine, pins the client's CPUs, writes the run
//! document, runs the repeats (waiting for `--start-at`, marking a `--part`)
//! and closes the engine; the harness runs each test inside it.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::error::{EXIT_FAILED, EXIT_INTERRUPTED, Error, failed, usage};
use crate::harness::probe::ProbeContext;
use crate::harness::{Harness, Placement, RunEnd, Ui};
use crate::plan::open::{Checked, Opened};
use crate::plan::options::EngineArgs;
use crate::plan::options::{Output, RunOptions};
use crate::results::{EngineInfo, PartInfo, ResultsDir, RunDoc, Status, Store};
use crate::suite::Plan;

/// Everything one `rqps run` (or one step of a matrix) needs, typed and
/// parsed once: the suite's plan, the engine, the run options and where the
/// runs go. `rqps run` and a matrix both make one from their parts
/// ([`RunSpec::new`]); its command line is derived from it ([`RunSpec::argv`]).
pub struct RunSpec {
    /// The suite's plan: its profile and its typed options, which give the
    /// plan's part of the command line ([`Plan::args`]).
    pub plan: Box<dyn Plan>,
    /// The engine: the target (parsed) or the throwaway server, and the
    /// engine kinds' options.
    pub engine: EngineArgs,
    /// What both `rqps run` and a matrix set.
    pub options: RunOptions,
    /// Where and how the runs are stored and shown.
    pub output: Output,
}

/// What [`RunSpec::check`] found and read, handed to the session: the
/// engine checked (with its config text), and the results directory found
/// writable. A matrix checks each target once and the directory once.
#[derive(Clone)]
pub struct Ready {
    pub engine: Checked,
    pub results: ResultsDir,
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
    results: ResultsDir,
    engine: Opened,
    ui: Ui,
    /// Restores the thread's CPUs when the session closes.
    pinned: Option<crate::util::cpus::Pinned>,
    /// Where the steps' workers run, from the driver and --client-threads.
    placement: Placement,
}

/// Runs `spec` in a session of its own: checks, opens, runs, closes.
pub fn run(spec: &RunSpec) -> Result<Ran, Error> {
    let ready = spec.check()?;
    run_ready(spec, ready)
}

/// Runs `spec`, checked already (`ready`), in a session of its own.
pub fn run_ready(spec: &RunSpec, ready: Ready) -> Result<Ran, Error> {
    let mut s = Session::open(spec, ready)?;
    let ran = s.run();
    s.close();
    ran
}

/// The `rqps run` command line of a run made of these parts, each written
/// from its typed options ([`args_of`](crate::cmdline::args::args_of)).
pub fn command_line(
    plan: &dyn Plan,
    engine: &EngineArgs,
    options: &RunOptions,
    output: &Output,
) -> Vec<String> {
    let mut a: Vec<String> = vec!["rqps".into(), "run".into()];
    a.extend(output.args());
    // What follows a suite's `--` (a sysbench script's arguments) goes
    // last: everything after `--` is the script's.
    let mut suite = plan.args();
    let tail = match suite.iter().position(|x| x == "--") {
        Some(i) => suite.split_off(i),
        None => Vec::new(),
    };
    a.extend(suite);
    a.extend(engine.args());
    a.extend(options.args());
    a.extend(tail);
    a
}

impl RunSpec {
    /// The one way a run's spec is made, by `rqps run` and by a matrix.
    pub fn new(
        plan: Box<dyn Plan>,
        engine: EngineArgs,
        options: RunOptions,
        output: Output,
    ) -> RunSpec {
        RunSpec {
            plan,
            engine,
            options,
            output,
        }
    }

    /// The `rqps run` command line this spec is: stored with its runs
    /// (redacted), and the arguments of a child run.
    pub fn argv(&self) -> Vec<String> {
        command_line(
            self.plan.as_ref(),
            &self.engine,
            &self.options,
            &self.output,
        )
    }

    /// Refuses what cannot work before anything starts (one line that says
    /// what to change), reading what the options name once.
    pub fn check(&self) -> Result<Ready, Error> {
        let out = &self.output;
        if out.repeats == 0 {
            return Err(usage("--repeats must be at least 1"));
        }
        if let Some(t) = out.start_at
            && let Ok(ahead) = t.duration_since(SystemTime::now())
            && ahead > Duration::from_secs(86_400)
        {
            return Err(usage(format!(
                "--start-at {} is {:.0} hours ahead: give a time within the next 24 hours",
                humantime::format_rfc3339_seconds(t),
                ahead.as_secs_f64() / 3600.0
            )));
        }
        let engine = crate::plan::open::check(&self.engine, &self.options, &[self.plan.as_ref()])?;
        if let Some(j) = &out.json {
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
        let results = crate::results::check_writable(&out.results)?;
        Ok(Ready { engine, results })
    }
}

impl<'a> Session<'a> {
    /// Opens the checked engine (connected, and large enough for the plan)
    /// and pins the client's CPUs.
    pub fn open(spec: &'a RunSpec, ready: Ready) -> Result<Session<'a>, Error> {
        let ui = Ui::new(spec.output.quiet);
        crate::plan::signals::install();
        // What a killed rqps (SIGKILL, a reset) could not remove.
        let stale = crate::engine::server::remove_stale_dirs();
        for line in stale
            .iter()
            .chain(&crate::engine::install::reclaim_partial())
        {
            eprintln!("rqps: {line}");
        }
        let engine = crate::plan::open::open(&ready.engine, &mut |note| ui.say(note))?;
        if let Err(e) = spec.plan.check_target(engine.driver.as_ref()) {
            engine.close(&mut |note| ui.say(note));
            return Err(e);
        }
        // The server is started: what rqps spawns from here (workers, loaders)
        // runs on the client's CPUs, until the guard restores the previous set.
        let pinned = match &spec.options.client_cpus {
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
        // After pinning: the default is the CPUs the client may run on.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let asked = spec.options.client_threads.map(|n| n.get() as usize);
        let placement = match Placement::for_run(engine.driver.calls(), asked, cpus) {
            Ok(p) => p,
            Err(e) => {
                engine.close(&mut |note| ui.say(note));
                return Err(usage(e));
            }
        };
        Ok(Session {
            spec,
            results: ready.results,
            engine,
            ui,
            pinned,
            placement,
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
        // A server on this host that rqps did not start: the pid the user
        // gave, else the probe finds it by its port.
        let mut footprint = self.engine.footprint.clone();
        if !footprint.embedded && footprint.pids.is_empty() {
            footprint.pids.extend(spec.output.server_pid);
        }
        let mut probe = ProbeContext::for_engine(
            &footprint,
            spec.options.device.clone(),
            spec.options.busy_threshold.get(),
        );
        // The engine's version and settings first: a failure there ends the
        // run before any warning is printed (as before the session moved
        // here).
        let doc = self.document(&probe)?;
        // A name's runs are repeats of one experiment: refused before any
        // test runs when they would not be.
        if !spec.output.allow_mismatch {
            same_experiment(&spec.output.results, &doc)?;
        }
        if spec.options.cpu_profile {
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
        let out = &spec.output;
        let numbers: Vec<usize> = match out.repeat_number {
            Some(n) => vec![n.max(1)],
            None => (1..=out.repeats).collect(),
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
            let json = out.json.as_ref().map(|j| {
                // A device or FIFO gets every repeat's document in turn.
                let stream = matches!(
                    crate::util::output_path(j),
                    Ok(crate::util::OutputPath::Stream)
                );
                if out.repeats > 1 && !stream {
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
            .output
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
            if let Some(c) = &spec.options.client_cpus {
                let now = crate::util::cpus::of_this_thread().unwrap_or_else(|| c.clone());
                o.insert("client_cpus".into(), now.to_string().into());
            }
            // The client threads the steps use (0: one per connection).
            o.insert("client_threads".into(), self.placement.asked().into());
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
            command_line: crate::engine::target::redact_args(&spec.argv()),
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
            measures: spec.plan.step_count() > 0,
            commands: Vec::new(),
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
        let mut store = Store::create(&self.results, doc, json)?;
        ui.say(&format!(
            "rqps {}: {} on {} ({} {}), {} steps, about {:.0} s{}; results in {}",
            env!("CARGO_PKG_VERSION"),
            plan.profile(),
            self.engine.shown,
            store.doc().engine.name,
            store.doc().engine.version,
            plan.step_count(),
            crate::suite::estimate_total_secs(plan),
            if spec.output.repeats > 1 {
                format!(", repeat {repeat} of {}", spec.output.repeats)
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
            placement: self.placement,
        });
        let (status, code) = match &end {
            // A stop wins over a failure: what it cancelled failed because of it.
            _ if crate::harness::runner::stop_requested() => {
                (Status::Interrupted, EXIT_INTERRUPTED)
            }
            Ok(RunEnd::Ok) => (Status::Ok, 0),
            Ok(RunEnd::Failed) => (Status::Failed, EXIT_FAILED),
            Ok(RunEnd::Interrupted) => (Status::Interrupted, EXIT_INTERRUPTED),
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
/// ([`crate::report::load::experiment_differences`]): one short line naming
/// what differs, and a name to give instead. Runs that measure nothing (a
/// script's `prepare` or `cleanup` alone) are neither checked nor checked
/// against: a name's `prepare`, `run`, `run` and `cleanup` are one
/// experiment.
fn same_experiment(results: &Path, doc: &RunDoc) -> Result<(), Error> {
    if !doc.measures {
        return Ok(());
    }
    let stored = crate::results::run_heads_named(results, &doc.name);
    let of_suite: Vec<&RunDoc> = stored
        .iter()
        .filter(|r| r.suite == doc.suite && r.measures)
        .collect();
    let Some(last) = of_suite.last() else {
        return Ok(());
    };
    let d = crate::report::load::experiment_differences(
        last,
        doc,
        &crate::suite::workloads(),
        &crate::plan::report::engine_keys(),
    );
    if d.is_empty() {
        return Ok(());
    }
    let free = crate::plan::hints::shell_word(&crate::plan::hints::free_name(results, &doc.name));
    let head = format!(
        "'{}' in {} holds {} run(s) of another experiment (",
        doc.name,
        results.display(),
        of_suite.len()
    );
    let tail = format!(
        "): a name's runs are repeats; give this one --name {free}, or pass --allow-mismatch to pool it"
    );
    let room = MISMATCH_LINE.saturating_sub(head.chars().count() + tail.chars().count());
    Err(usage(format!(
        "{head}{}{tail}",
        crate::report::load::differences_brief(&d, room.max(60))
    )))
}

/// The most a mismatch refusal should take, in characters.
const MISMATCH_LINE: usize = 300;

/// `10.11.19-MariaDB-0+deb12u1` → `10.11.19`; `PostgreSQL 15.18 (Debian ...)` → `15.18`.
/// The name a run of `engine` (as its driver names it: `mysql`,
/// `mariadb`, `postgres`) at `version` gets without `--name`:
/// `postgres-16.15`, `mariadb-11.4.5`.
pub fn default_name(engine: &str, version: &str) -> String {
    format!("{engine}-{}", short_version(version))
}

pub fn short_version(v: &str) -> String {
    v.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find(|s| s.contains('.') && s.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or(v)
        .to_string()
}

/// Waits for `--start-at` (when `first`), then says which part this run is
/// and whether it began late; `None` without `--part` and `--start-at`.
fn begin_part(spec: &RunSpec, first: bool, ui: &Ui) -> Option<PartInfo> {
    let start_at = spec.output.start_at.filter(|_| first);
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
    if spec.output.part.is_none() && start_at.is_none() {
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
        index: spec.output.part.map_or(1, |p| p.index),
        count: spec.output.part.map_or(1, |p| p.count),
        start_at: start_at.map(|t| humantime::format_rfc3339_millis(t).to_string()),
        started: humantime::format_rfc3339_millis(now).to_string(),
        late_secs,
        late,
        run_id: None,
        host: None,
    })
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
