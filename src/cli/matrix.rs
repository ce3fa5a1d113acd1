//! `rqps matrix FILE`: runs every target of a matrix file in turn.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::{CliError, EXIT_FAILED, EXIT_INTERRUPTED, RunArgs};
use crate::plan::matrix::{Matrix, Progress};

#[derive(Args)]
pub struct MatrixArgs {
    /// The matrix file (TOML): [defaults] and [[target]] tables; see examples/.
    file: PathBuf,
    /// Results directory.
    #[arg(long, default_value = "rqps-results", value_name = "DIR")]
    results: PathBuf,
    /// Continue an interrupted matrix: skip the runs that already finished.
    #[arg(long)]
    resume: bool,
    /// Print the plan and its estimated duration; run nothing.
    #[arg(long)]
    dry_run: bool,
    /// Run only every N-th run of the plan, starting with the I-th (one of N hosts sharing
    /// the matrix, e.g. a Kubernetes Indexed Job or a Slurm job array). No final report:
    /// `rqps report` over the parts' results, copied into one directory, gives it.
    #[arg(long, value_name = "I/N", value_parser = super::parse_part)]
    part: Option<crate::suite::part::Part>,
}

/// Takes the lock beside the matrix's progress file (`flock`, released
/// when the process ends, however it ends), or says who holds it.
fn lock_progress(
    progress: &std::path::Path,
    file: &std::path::Path,
    results: &std::path::Path,
) -> Result<std::fs::File, CliError> {
    use std::io::{Read as _, Seek as _, Write as _};
    use std::os::fd::AsRawFd as _;
    let path = progress.with_extension("lock");
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| CliError::Failed(format!("cannot open {}: {e}", path.display())))?;
    // SAFETY: flock(2) on a descriptor we own for the duration of the call.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let mut holder = String::new();
        let _ = f.read_to_string(&mut holder);
        return Err(CliError::Usage(format!(
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

pub fn matrix(a: &MatrixArgs) -> Result<i32, CliError> {
    let m = Matrix::load(&a.file).map_err(|e| CliError::Usage(e.to_string()))?;
    let steps: Vec<_> = m
        .steps()
        .into_iter()
        .enumerate()
        .filter(|(i, _)| a.part.is_none_or(|p| p.takes(*i)))
        .map(|(_, s)| s)
        .collect();
    // The plan is the same for every target (the options are the matrix's).
    let est_secs = crate::suite::estimate_total_secs(m.plan(0)?.as_ref());
    // Every target's engine options must suit its engine, and every server
    // must be large enough for the plan, before the first run starts.
    let need = m.plan(0)?.need();
    let refused = |t: &crate::plan::matrix::Target, e: crate::engine::open::OpenError| {
        let msg = match e {
            crate::engine::open::OpenError::Usage(m)
            | crate::engine::open::OpenError::Failed(m) => m,
        };
        CliError::Usage(format!("{}: target {}: {msg}", a.file.display(), t.name))
    };
    for t in &m.targets {
        let args = run_args(&m, t, 1, &a.results);
        let ea = crate::engine::open::EngineArgs {
            need: Some(need.clone()),
            ..super::run::engine_args(&args)
        };
        crate::engine::open::check(&ea).map_err(|e| refused(t, e))?;
    }
    if !a.dry_run {
        for t in &m.targets {
            let server_url = t.url.as_deref().is_some_and(|u| {
                matches!(
                    crate::engine::target::Target::parse(u),
                    Ok(crate::engine::target::Target::Url(_))
                )
            });
            if t.engine.is_some() || !server_url {
                continue;
            }
            let ea = super::run::engine_args(&run_args(&m, t, 1, &a.results));
            let opened = crate::engine::open::open(&ea, &mut |_| {}).map_err(|e| refused(t, e))?;
            let checked = crate::engine::open::check_capacity(&need, opened.driver.as_ref());
            opened.close(&mut |_| {});
            checked.map_err(|e| refused(t, e))?;
        }
    }
    let est = |_: &crate::plan::matrix::Target| -> f64 { est_secs };
    let mut progress_path = Progress::path(&a.results, &a.file);
    if let Some(p) = a.part {
        // Parts sharing one results directory keep their own progress.
        progress_path.set_extension(format!("part-{}-of-{}.json", p.index, p.count));
    }
    // Held until the matrix ends: a second `rqps matrix` of the same file
    // into the same results would run the same steps and overwrite progress.
    let _lock = if a.dry_run {
        None
    } else {
        crate::results::check_writable(&a.results)?;
        Some(lock_progress(&progress_path, &a.file, &a.results)?)
    };
    let mut progress = if a.resume {
        // Runs whose rqps was killed are not done: say so, they run again.
        if let Ok((runs, _)) = crate::report::load::read_results(&a.results) {
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
        Progress::load(&progress_path)
    } else {
        Progress::default()
    };
    progress.matrix = a.file.display().to_string();
    // Maps and a set: with up to 100,000 runs, a list search per step is quadratic.
    let by_name: std::collections::HashMap<&str, &crate::plan::matrix::Target> =
        m.targets.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut done: std::collections::HashSet<crate::plan::matrix::Step> =
        progress.done.iter().cloned().collect();
    let todo: Vec<_> = steps.iter().filter(|s| !done.contains(s)).collect();
    let total: f64 = todo
        .iter()
        .map(|s| est(by_name[s.target.as_str()]) + m.cooldown_secs)
        .sum();
    println!(
        "matrix {}{}: {} targets x {} repeats = {} runs ({} to do), base {}, about {:.0} min with loads, plus server starts",
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
        todo.len(),
        m.base,
        total / 60.0
    );
    for (i, s) in steps.iter().enumerate() {
        let t = by_name[s.target.as_str()];
        let mark = if done.contains(s) { "  (done)" } else { "" };
        println!(
            "  {:>3}. {} repeat {}: rqps {}{mark}",
            i + 1,
            s.target,
            s.repeat,
            crate::engine::target::redact_args(&m.command_line(t, s.repeat, &a.results)[1..])
                .join(" ")
        );
    }
    let missing = m.missing_engines();
    if a.dry_run {
        for e in missing {
            println!("  needs an install first: {e:?} (done automatically when the matrix runs)");
        }
        return Ok(0);
    }
    crate::results::check_writable(&a.results)?;
    for e in missing {
        if let Some(v) = &e.version {
            crate::engine::install::install(e.kind, v, &mut |n| eprintln!("{n}"))
                .map_err(|e| CliError::Failed(e.to_string()))?;
        }
    }
    let mut failed = Vec::new();
    let mut first = true;
    for s in &steps {
        if done.contains(s) {
            continue;
        }
        if crate::harness::runner::stop_requested() {
            return Ok(EXIT_INTERRUPTED);
        }
        if !first && m.cooldown_secs > 0.0 {
            eprintln!("cooling down {:.0} s", m.cooldown_secs);
            std::thread::sleep(Duration::from_secs_f64(m.cooldown_secs));
        }
        first = false;
        let t = by_name[s.target.as_str()];
        eprintln!("== {} repeat {} of {}", s.target, s.repeat, m.repeats);
        let code = if own_process(t) {
            // A library engine's release stays loaded for the life of the
            // process, and two releases in one process abort it: each such
            // run is `rqps run` in a process of its own.
            run_in_child(&m.command_line(t, s.repeat, &a.results), &s.target)
        } else {
            let args = run_args(&m, t, s.repeat, &a.results);
            let plan = m.plan(crate::suite::clock_seed())?;
            match super::run::run(&args, plan.as_ref()) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("error: {}: {}", s.target, e.message());
                    EXIT_FAILED
                }
            }
        };
        match code {
            0 => {
                progress.done.push(s.clone());
                done.insert(s.clone());
                progress.save(&progress_path)?;
            }
            EXIT_INTERRUPTED => {
                eprintln!(
                    "interrupted: `rqps matrix {} --resume` continues where this stopped",
                    a.file.display()
                );
                return Ok(EXIT_INTERRUPTED);
            }
            _ => failed.push(format!("{} repeat {}", s.target, s.repeat)),
        }
    }
    let names: Vec<String> = m.targets.iter().map(|t| t.name.clone()).collect();
    if let Some(p) = a.part {
        eprintln!(
            "part {p} of the matrix done; the report: copy the run directories of all {} parts into one results directory and run `rqps report --results DIR --base {}`",
            p.count, m.base
        );
    } else {
        final_report(&a.results, &m.base, &names)?;
    }
    if !failed.is_empty() {
        eprintln!(
            "failed runs (rerun them with --resume): {}",
            failed.join(", ")
        );
        return Ok(EXIT_FAILED);
    }
    Ok(0)
}

/// Whether the target's engine is loaded from a library into the process
/// that runs it (RocksDB), so that its runs need a process of their own.
fn own_process(t: &crate::plan::matrix::Target) -> bool {
    let by_url = || {
        t.url.as_deref().is_some_and(|u| {
            matches!(
                crate::engine::target::Target::parse(u),
                Ok(crate::engine::target::Target::Dir { .. })
            )
        })
    };
    t.engine.as_ref().is_some_and(|e| e.kind.library.is_some()) || by_url()
}

/// Runs `argv` (an `rqps run` command line, `rqps` first) as a child of
/// this executable and returns its exit code.
fn run_in_child(argv: &[String], target: &str) -> i32 {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {target}: cannot find rqps's own executable: {e}");
            return EXIT_FAILED;
        }
    };
    // Ctrl-C reaches the child from the terminal; SIGTERM and SIGHUP sent to
    // this process are passed on (`run::CHILD`). This process waits for the
    // child to save its results, and the child dies with it if it is killed.
    super::run::install_signals();
    let mut cmd = std::process::Command::new(exe);
    let args = child_args(&mut cmd, &argv[1..]);
    cmd.args(args);
    crate::engine::server::dies_with_rqps(&mut cmd);
    let status = cmd.spawn().and_then(|mut c| {
        use std::sync::atomic::Ordering;
        super::run::CHILD.store(c.id() as i32, Ordering::SeqCst);
        let s = c.wait();
        super::run::CHILD.store(0, Ordering::SeqCst);
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
fn final_report(results: &std::path::Path, base: &str, names: &[String]) -> Result<(), CliError> {
    let others: Vec<String> = names
        .iter()
        .filter(|n| n.as_str() != base)
        .cloned()
        .collect();
    let args =
        |format: &str, output: Option<PathBuf>| -> Result<super::report::ReportArgs, CliError> {
            let mut argv = vec![
                "rqps".to_string(),
                "report".into(),
                "--results".into(),
                results.display().to_string(),
            ];
            argv.extend([
                "--base".into(),
                base.to_string(),
                "--format".into(),
                format.to_string(),
            ]);
            if !others.is_empty() {
                argv.extend(["--targets".into(), others.join(",")]);
            }
            if let Some(o) = output {
                argv.extend(["-o".into(), o.display().to_string()]);
            }
            super::parse_report_args(&argv)
        };
    if others.is_empty() {
        eprintln!(
            "one target: nothing to compare; its runs are in {}",
            results.display()
        );
        return Ok(());
    }
    super::report::report(&args("term", None)?)?;
    let html = results.join(format!("report-{}.html", crate::util::file_safe(base)));
    super::report::report(&args("html", Some(html.clone()))?)?;
    eprintln!("HTML report: {}", html.display());
    Ok(())
}

/// The `rqps run` options of one target's repeat.
fn run_args(
    m: &Matrix,
    t: &crate::plan::matrix::Target,
    repeat: usize,
    results: &std::path::Path,
) -> RunArgs {
    let (server, target) = match (&t.engine, &t.url) {
        (Some(e), _) => (e.server_arg(), None),
        (None, Some(u)) => (None, Some(u.clone())),
        _ => (None, None),
    };
    RunArgs {
        target,
        server,
        config: t.config.clone(),
        suite: Some(m.suite.name().to_string()),
        profile: m.profile.clone(),
        repeats: 1,
        argv: m.command_line(t, repeat, results),
        repeat_number: Some(repeat),
        engine_options: t.engine_options.clone(),
        server_cpus: t.server_cpus.clone(),
        client_cpus: t.client_cpus.clone(),
        cpu_profile: t.cpu_profile,
        seed: m.seed,
        name: Some(t.name.clone()),
        results: results.to_path_buf(),
        busy_threshold: crate::harness::probe::BUSY_THRESHOLD_PCT,
        password_file: t.password_file.clone(),
        stmt_timeout: m
            .stmt_timeout
            .and_then(|s| crate::suite::bounds::Secs::new(s).ok()),
        message_timeout: m
            .message_timeout
            .and_then(|s| crate::suite::bounds::Secs::new(s).ok()),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::child_args;

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
