//! Runs a matrix file: every target's repeats in turn (interleaved), each
//! step a [`RunSpec`] run in a session of this process, or, for an engine
//! loaded from a library, an `rqps run` child; resumable, then the report
//! against the base target.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{EXIT_FAILED, EXIT_INTERRUPTED, Error, failed, usage};
use crate::plan::matrix::{Matrix, MatrixRun, Progress, Target};
use crate::plan::session::{Ready, RunSpec};
use crate::results::ResultsDir;

/// What `rqps matrix` was asked to do.
pub struct MatrixRequest {
    /// The matrix file (TOML).
    pub file: PathBuf,
    pub results: PathBuf,
    /// Skip the runs that already finished.
    pub resume: bool,
    /// Print the plan; run nothing.
    pub dry_run: bool,
    /// Only every N-th run, starting with the I-th (one of N hosts).
    pub part: Option<crate::suite::part::ClientPart>,
}

/// Runs the matrix `a` names and returns the exit status.
pub fn run(a: &MatrixRequest) -> Result<i32, Error> {
    let m = Matrix::load(&a.file).map_err(usage)?;
    let steps: Vec<MatrixRun> = m
        .steps()
        .into_iter()
        .enumerate()
        .filter(|(i, _)| a.part.is_none_or(|p| p.takes(*i)))
        .map(|(_, s)| s)
        .collect();
    check_servers(a, &m)?;
    let mut progress_path = Progress::path(&a.results, &a.file);
    if let Some(p) = a.part {
        // Parts sharing one results directory keep their own progress.
        progress_path.set_extension(format!("part-{}-of-{}.json", p.index, p.count));
    }
    // Held until the matrix ends: a second `rqps matrix` of the same file
    // into the same results would run the same steps and overwrite progress.
    let (_lock, results) = if a.dry_run {
        (None, None)
    } else {
        let results = crate::results::check_writable(&a.results)?;
        let lock = lock_progress(&progress_path, &a.file, &a.results)?;
        (Some(lock), Some(results))
    };
    let mut progress = if a.resume {
        say_killed(&a.results);
        Progress::load(&progress_path)
    } else {
        Progress::default()
    };
    progress.matrix = a.file.display().to_string();
    let missing = m.missing_engines();
    // A version never published is refused before anything is planned or
    // run, in a dry run as in a run (as `rqps run --server` refuses it).
    for e in &missing {
        if let Some(v) = &e.version {
            crate::engine::install::check_release(e.kind, v)
                .map_err(|err| usage(format!("{}: {err}", a.file.display())))?;
        }
    }
    print_plan(a, &m, &steps, &progress)?;
    let Some(results) = results else {
        for e in missing {
            let name = e.server_arg().unwrap_or_else(|| e.kind.name.to_string());
            println!("  needs an install first: {name} (done automatically when the matrix runs)");
        }
        return Ok(0);
    };
    for e in missing {
        if let Some(v) = &e.version {
            crate::engine::install::install(e.kind, v, &mut |n| eprintln!("{n}"))
                .map_err(failed)?;
        }
    }
    let failed_steps = match run_steps(a, &m, &steps, &results, &mut progress, &progress_path)? {
        Some(failed_steps) => failed_steps,
        None => return Ok(EXIT_INTERRUPTED),
    };
    let names: Vec<String> = m.targets.iter().map(|t| t.name.clone()).collect();
    if let Some(p) = a.part {
        eprintln!(
            "part {p} of the matrix done; the report: copy the run directories of all {} parts into one results directory and run `rqps report --results DIR --base {}`",
            p.count, m.base
        );
    } else {
        final_report(&a.results, &m.base, &names)?;
    }
    if !failed_steps.is_empty() {
        eprintln!(
            "failed runs (rerun them with --resume): {}",
            failed_steps.join(", ")
        );
        return Ok(EXIT_FAILED);
    }
    Ok(0)
}

/// Every server a target names by URL must be large enough for the plan,
/// before the first run starts (each target's options were checked when
/// the matrix was read).
fn check_servers(a: &MatrixRequest, m: &Matrix) -> Result<(), Error> {
    if a.dry_run {
        return Ok(());
    }
    for t in &m.targets {
        let server_url = matches!(t.engine.target, Some(crate::engine::target::Target::Url(_)));
        if t.engine.server.is_some() || !server_url {
            continue;
        }
        // Opening a URL target connects and checks the server's capacity.
        let opened = crate::plan::open::open(&t.checked, &mut |_| {})
            .map_err(|e| usage(format!("{}: target {}: {e}", a.file.display(), t.name)))?;
        opened.close(&mut |_| {});
    }
    Ok(())
}

/// Runs whose rqps was killed are not done: says so, they run again.
fn say_killed(results: &Path) {
    if let Ok((runs, _)) =
        crate::report::load::read_results_keeping(results, crate::results::Keep::Context)
    {
        for r in runs
            .iter()
            .filter(|r| r.status == crate::results::Status::Killed)
        {
            let owner = r.owner.as_ref().map_or_else(String::new, |o| {
                format!(" (rqps pid {} on {})", o.pid, o.host)
            });
            println!(
                "run {} ({} repeat {}) was killed{owner}; --resume runs it again",
                r.run_id, r.name, r.repeat
            );
        }
    }
}

/// The plan: how many runs, how many to do, about how long, and each run's
/// equivalent `rqps run` command line.
fn print_plan(
    a: &MatrixRequest,
    m: &Matrix,
    steps: &[MatrixRun],
    progress: &Progress,
) -> Result<(), Error> {
    // A suite's plan is the same for every target (the options are the matrix's).
    let mut est: HashMap<&str, f64> = HashMap::new();
    for ms in &m.suites {
        let secs = crate::suite::estimate_total_secs(ms.plan.as_ref());
        est.insert(ms.suite.name(), secs);
    }
    let by_name = by_name(m);
    // A set: with up to 100,000 runs, a list search per step is quadratic.
    let done: HashSet<&MatrixRun> = progress.done.iter().collect();
    let total: f64 = steps
        .iter()
        .filter(|s| !done.contains(s))
        .map(|s| est[m.suite_of(s).suite.name()] + m.cooldown_secs)
        .sum();
    let todo = steps.iter().filter(|s| !done.contains(s)).count();
    let suites = match &m.suites[..] {
        [_] => String::new(),
        several => format!(
            " x {} suites ({})",
            several.len(),
            several
                .iter()
                .map(|ms| ms.suite.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    println!(
        "matrix {}{}: {} targets x {} repeats{suites} = {} runs ({} to do), base {}, about {:.0} min with loads, plus server starts",
        a.file.display(),
        a.part
            .map(|p| format!(
                " part {p} (runs {}, {}, ... of the plan)",
                p.index,
                p.index + p.count
            ))
            .unwrap_or_default(),
        m.targets.len(),
        m.repeats,
        steps.len(),
        todo,
        m.base,
        total / 60.0
    );
    for (i, s) in steps.iter().enumerate() {
        let t = by_name[s.target.as_str()];
        let mark = if done.contains(s) { "  (done)" } else { "" };
        // The command a user can type: without the hidden --repeat-number the
        // matrix sets for its own child runs (the line says the repeat).
        let mut line = m.command_line(t, s, &a.results);
        if let Some(at) = line.iter().position(|w| w == "--repeat-number") {
            line.drain(at..(at + 2).min(line.len()));
        }
        println!(
            "  {:>3}. {} repeat {}: rqps {}{mark}",
            i + 1,
            s.target,
            s.repeat,
            crate::engine::target::redact_args(&line[1..]).join(" ")
        );
    }
    Ok(())
}

/// The targets by name.
fn by_name(m: &Matrix) -> HashMap<&str, &Target> {
    m.targets.iter().map(|t| (t.name.as_str(), t)).collect()
}

/// Runs the steps not done yet, saving progress after each that succeeds:
/// the steps that failed, or `None` when a signal stopped the matrix.
fn run_steps(
    a: &MatrixRequest,
    m: &Matrix,
    steps: &[MatrixRun],
    results: &ResultsDir,
    progress: &mut Progress,
    progress_path: &Path,
) -> Result<Option<Vec<String>>, Error> {
    let by_name = by_name(m);
    let mut done: HashSet<MatrixRun> = progress.done.iter().cloned().collect();
    let mut failed_steps = Vec::new();
    let mut first = true;
    for s in steps {
        if done.contains(s) {
            continue;
        }
        if crate::harness::runner::stop_requested() {
            return Ok(None);
        }
        if !first && m.cooldown_secs > 0.0 {
            eprintln!("cooling down {:.0} s", m.cooldown_secs);
            std::thread::sleep(Duration::from_secs_f64(m.cooldown_secs));
        }
        first = false;
        let t = by_name[s.target.as_str()];
        let of_suite = s
            .suite
            .as_deref()
            .map(|n| format!(" {n}"))
            .unwrap_or_default();
        eprintln!(
            "== {}{of_suite} repeat {} of {}",
            s.target, s.repeat, m.repeats
        );
        let spec = step_spec(m, t, s, &a.results)?;
        let code = if own_process(t) {
            // A library engine's release stays loaded for the life of the
            // process, and two releases in one process abort it: each such
            // run is `rqps run` in a process of its own.
            run_in_child(&spec.argv(), &s.target)
        } else {
            // Checked when the matrix was read (against every suite's
            // plan; sized for this one's), the directory when it began.
            let ready = Ready {
                engine: t.checked.for_plan(spec.plan.as_ref()),
                results: results.clone(),
            };
            match crate::plan::session::run_ready(&spec, ready) {
                Ok(r) => r.code,
                Err(e) => {
                    eprintln!("error: {}: {e}", s.target);
                    EXIT_FAILED
                }
            }
        };
        match code {
            0 => {
                progress.done.push(s.clone());
                done.insert(s.clone());
                progress.save(progress_path)?;
            }
            EXIT_INTERRUPTED => {
                eprintln!(
                    "interrupted: `rqps matrix {} --resume` continues where this stopped",
                    a.file.display()
                );
                return Ok(None);
            }
            _ => failed_steps.push(format!("{}{of_suite} repeat {}", s.target, s.repeat)),
        }
    }
    Ok(Some(failed_steps))
}

/// Takes the lock beside the matrix's progress file (`flock`, released
/// when the process ends, however it ends), or says who holds it.
fn lock_progress(progress: &Path, file: &Path, results: &Path) -> Result<std::fs::File, Error> {
    use std::io::{Read as _, Seek as _, Write as _};
    use std::os::fd::AsRawFd as _;
    let path = progress.with_extension("lock");
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| failed(format!("cannot open {}: {e}", path.display())))?;
    // SAFETY: flock(2) on a descriptor we own for the duration of the call.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let mut holder = String::new();
        let _ = f.read_to_string(&mut holder);
        return Err(usage(format!(
            "another rqps matrix (pid {}) is running {} into {}; wait until it ends, or give this one another --results",
            holder.trim(),
            file.display(),
            results.display()
        )));
    }
    let _ = f.set_len(0);
    let _ = f.rewind();
    let _ = write!(f, "{}", std::process::id());
    Ok(f)
}

/// One step (a target's repeat of one suite) as a run, built as `rqps run`
/// builds one.
fn step_spec(m: &Matrix, t: &Target, s: &MatrixRun, results: &Path) -> Result<RunSpec, Error> {
    Ok(RunSpec::new(
        m.plan_for(t, s)?,
        t.engine.clone(),
        t.options.clone(),
        m.output(t, s.repeat, results),
    ))
}

/// Whether the target's engine is loaded from a library into the process
/// that runs it (RocksDB), so that its runs need a process of their own.
fn own_process(t: &Target) -> bool {
    t.engine
        .server
        .as_ref()
        .is_some_and(|e| e.kind.library.is_some())
        || matches!(
            t.engine.target,
            Some(crate::engine::target::Target::Dir { .. })
        )
}

/// Runs `argv` (an `rqps run` command line, `rqps` first) as a child of
/// this executable and returns its exit code.
fn run_in_child(argv: &[String], target: &str) -> i32 {
    use crate::plan::signals::CHILD;
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {target}: cannot find rqps's own executable: {e}");
            return EXIT_FAILED;
        }
    };
    // Ctrl-C reaches the child from the terminal; SIGTERM and SIGHUP sent to
    // this process are passed on (`signals::CHILD`). This process waits for the
    // child to save its results, and the child dies with it if it is killed.
    crate::plan::signals::install();
    let mut cmd = std::process::Command::new(exe);
    let args = child_args(&mut cmd, &argv[1..]);
    cmd.args(args);
    crate::engine::server::dies_with_rqps(&mut cmd);
    let status = cmd.spawn().and_then(|mut c| {
        use std::sync::atomic::Ordering;
        CHILD.store(c.id() as i32, Ordering::SeqCst);
        let s = c.wait();
        CHILD.store(0, Ordering::SeqCst);
        s
    });
    match status {
        Ok(s) => {
            use std::os::unix::process::ExitStatusExt;
            match (s.code(), s.signal()) {
                (Some(c), _) => c,
                (None, Some(libc::SIGINT)) => EXIT_INTERRUPTED,
                _ => EXIT_FAILED,
            }
        }
        Err(e) => {
            eprintln!("error: {target}: cannot start rqps run: {e}");
            EXIT_FAILED
        }
    }
}

/// The arguments of an `rqps run` child with no secret in them: the
/// password of a `--target` URL goes to the child through its environment
/// ([`crate::engine::secret::CHILD_ENV`]), where only this user can read it,
/// and then outranks a `--password-file` as the URL's password would.
fn child_args(cmd: &mut std::process::Command, argv: &[String]) -> Vec<String> {
    use crate::engine::secret::{CHILD_ENV, split_url_password};
    cmd.env_remove(CHILD_ENV);
    let mut out: Vec<String> = Vec::with_capacity(argv.len());
    let mut password = None;
    for a in argv {
        match (out.last().map(String::as_str), split_url_password(a)) {
            (Some("--target"), Some((url, p))) => {
                password = Some(p);
                out.push(url);
            }
            _ => out.push(a.clone()),
        }
    }
    if let Some(p) = password {
        cmd.env(CHILD_ENV, p);
        if let Some(i) = out.iter().position(|a| a == "--password-file") {
            out.drain(i..(i + 2).min(out.len()));
        }
    }
    out
}

/// The comparison against the base once every run is stored: terminal tables, and a
/// self-contained HTML page beside the results.
fn final_report(results: &Path, base: &str, names: &[String]) -> Result<(), Error> {
    use crate::plan::report::{ReportRequest, report};
    use crate::report::export::Format;
    let others: Vec<String> = names.iter().filter(|n| *n != base).cloned().collect();
    if others.is_empty() {
        eprintln!(
            "one target: nothing to compare; its runs are in {}",
            results.display()
        );
        return Ok(());
    }
    let request = |format: Format, output: Option<PathBuf>| ReportRequest {
        results: results.to_path_buf(),
        base: base.to_string(),
        targets: Some(others.clone()),
        format,
        view: crate::report::export::View::Answer,
        output,
        noise_floor: super::report::NOISE_FLOOR,
        all: false,
        allow_mismatch: false,
        explain: None,
        top: super::report::EXPLAIN_TOP,
    };
    report(&request(Format::Term, None))?;
    let html = results.join(format!("report-{}.html", crate::util::file_safe(base)));
    report(&request(Format::Html, Some(html.clone())))?;
    eprintln!("HTML report: {}", html.display());
    Ok(())
}
#[cfg(test)]
mod tests {
    use super::{child_args, own_process, step_spec};
    use crate::engine::target::Target as Parsed;
    use std::path::Path;

    #[test]
    fn a_matrix_step_is_a_typed_run_spec_and_only_a_library_engine_runs_in_a_child() {
        let m = crate::plan::matrix::Matrix::parse(
            Path::new("m.toml"),
            "[defaults]\nprofile = \"ci\"\nstmt_timeout = 30\n\
[[target]]\nname = \"file\"\nurl = \"sqlite:/tmp/x.db\"\n\
[[target]]\nname = \"tmp\"\nengine = \"sqlite\"\n\
[[target]]\nname = \"pg\"\nengine = \"postgres@16.15\"\n",
        )
        .unwrap();
        let [file, tmp, pg] = &m.targets[..] else {
            panic!("{:?}", m.targets)
        };
        // The URL is parsed once, by the matrix, and handed on as it is.
        assert_eq!(
            file.engine.target,
            Some(Parsed::Sqlite(Some("/tmp/x.db".into())))
        );
        // SQLite needs no server: no --server, no --target, a temporary database.
        assert!(tmp.engine.server.is_none() && tmp.engine.target.is_none());
        assert_eq!(
            pg.engine
                .server
                .as_ref()
                .and_then(|s| s.server_arg())
                .as_deref(),
            Some("postgres@16.15")
        );
        assert!(!own_process(file) && !own_process(tmp) && !own_process(pg));
        let kv = crate::plan::matrix::Matrix::parse(
            Path::new("m.toml"),
            "[defaults]\nsuite = \"dbbench\"\nprofile = \"ci\"\n\
[[target]]\nname = \"dir\"\nurl = \"rocksdb:/tmp/db?version=8.10.0\"\n\
[[target]]\nname = \"new\"\nengine = \"rocksdb@8.10.0\"\n",
        )
        .unwrap();
        assert!(kv.targets.iter().all(own_process));
        let step = crate::plan::matrix::MatrixRun {
            target: "pg".into(),
            repeat: 2,
            suite: None,
        };
        let spec = step_spec(&m, pg, &step, Path::new("res")).unwrap();
        assert_eq!(
            (
                spec.output.repeats,
                spec.output.repeat_number,
                spec.output.name.as_deref()
            ),
            (1, Some(2), Some("pg"))
        );
        assert_eq!(
            spec.options.stmt_timeout.map(|t| t.get().as_secs()),
            Some(30)
        );
        // What is stored, and what a child is given, is the plan's line.
        assert_eq!(spec.argv(), m.command_line(pg, &step, Path::new("res")));
        assert_eq!(spec.plan.profile(), "ci");
    }

    fn env_of(cmd: &std::process::Command) -> Vec<(String, Option<String>)> {
        cmd.get_envs()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.map(|v| v.to_string_lossy().into_owned()),
                )
            })
            .collect()
    }

    #[test]
    fn a_childs_arguments_carry_no_password_and_its_environment_does() {
        let argv: Vec<String> = [
            "run",
            "--name",
            "a",
            "--password-file",
            "/x/pw",
            "--target",
            "mysql://u:p%40ss/w@127.0.0.1:3306/db",
        ]
        .map(String::from)
        .to_vec();
        let mut cmd = std::process::Command::new("rqps");
        let args = child_args(&mut cmd, &argv);
        assert_eq!(
            args,
            [
                "run",
                "--name",
                "a",
                "--target",
                "mysql://u@127.0.0.1:3306/db"
            ]
        );
        assert_eq!(
            env_of(&cmd),
            [("RQPS_PASSWORD".to_string(), Some("p@ss/w".to_string()))]
        );
        // Without a URL password: the arguments as they were, and no
        // password inherited from this process's environment.
        let argv: Vec<String> = [
            "run",
            "--password-file",
            "/x/pw",
            "--target",
            "postgres://u@h/db",
        ]
        .map(String::from)
        .to_vec();
        let mut cmd = std::process::Command::new("rqps");
        assert_eq!(child_args(&mut cmd, &argv), argv);
        assert_eq!(env_of(&cmd), [("RQPS_PASSWORD".to_string(), None)]);
    }
}
