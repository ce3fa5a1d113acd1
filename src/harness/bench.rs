//! What the benchmarks of rqps itself share: the process's CPU time, a child
//! process measured with its own CPU, a throwaway server to measure on, and
//! the error a benchmark fails with.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use crate::engine::registry::{self, UnknownServer};
use crate::engine::server::{Recipe, Server, ServerError, ServerSpec};
use crate::engine::target::{Target, TargetError};
use crate::engine::{DbError, Driver};

/// Why a benchmark of rqps itself (`rqps bench ...`) stopped. `rqps bench`
/// exits 1 for every one of them, bad arguments included, as it always has.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Arguments that cannot work (`--rounds 0`).
    #[error("{0}")]
    Args(&'static str),
    /// `--engines` names no engine with a throwaway server.
    #[error(transparent)]
    UnknownServer(#[from] UnknownServer),
    /// The throwaway server could not be started or stopped.
    #[error(transparent)]
    Server(#[from] ServerError),
    /// The throwaway server's URL is not a target (a bug, not the user's).
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("not a server URL: {url}")]
    NotServerUrl { url: String },
    /// The engine refused a step outside the measurement (connect, load, prepare).
    #[error("{context}: {source}")]
    Engine {
        context: &'static str,
        #[source]
        source: DbError,
    },
    /// SQLite refused a step of a bare loop (which talks to it directly).
    #[error("{context}: {source}")]
    Sqlite {
        context: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    /// A file or directory the benchmark needs.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// A child's JSON results that cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// A child process (another client, `rqps run`) could not be started.
    #[error("cannot start {program:?}: {source}")]
    Spawn {
        program: OsString,
        #[source]
        source: std::io::Error,
    },
    /// A child process failed; `output` is its stdout and stderr.
    #[error("{program:?} failed: {output}")]
    ChildFailed { program: OsString, output: String },
    /// A contender gave no figures to compare: a step that did not finish, a
    /// loop that panicked, output without the numbers.
    #[error("{0}")]
    NoResult(String),
}

impl BenchError {
    /// For `map_err` on an engine's error outside the measurement.
    pub fn engine(context: &'static str) -> impl FnOnce(DbError) -> BenchError {
        move |source| BenchError::Engine { context, source }
    }

    /// For `map_err` on SQLite's error in a bare loop.
    pub fn sqlite(context: &'static str) -> impl FnOnce(rusqlite::Error) -> BenchError {
        move |source| BenchError::Sqlite { context, source }
    }

    /// For `map_err` on an I/O error.
    pub fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> BenchError {
        let context = context.into();
        move |source| BenchError::Io { context, source }
    }
}

/// CPU seconds (user + system) this process has used.
pub fn cpu_secs() -> f64 {
    // SAFETY: rusage is plain data, and getrusage fills the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Runs `cmd` to completion and returns its stdout with its rusage.
pub fn run_measured(cmd: &mut std::process::Command) -> Result<(String, f64, f64), BenchError> {
    use std::io::Read;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|source| BenchError::Spawn {
            program: cmd.get_program().to_os_string(),
            source,
        })?;
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 reaps the child we spawned and fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    if r < 0 || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(BenchError::ChildFailed {
            program: cmd.get_program().to_os_string(),
            output: format!("{out}{err}"),
        });
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok((out, tv(ru.ru_utime), tv(ru.ru_stime)))
}

/// A throwaway server of `engine` (postgres or mariadb), its URL and a driver for it.
pub fn throwaway(engine: &str) -> Result<(Recipe, Server, String, Arc<dyn Driver>), BenchError> {
    let kind = registry::server_by_name(engine)?;
    let server = Server::start(&ServerSpec::new(kind), &mut |n| eprintln!("{n}"))?;
    let url = server.url_for_config(&[]);
    let driver = Target::parse(&url)?
        .server_driver()
        .ok_or_else(|| BenchError::NotServerUrl { url: url.clone() })?
        .map_err(BenchError::engine(
            "cannot open a driver for the throwaway server",
        ))?;
    Ok((kind, server, url, driver))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_that_cannot_start_or_fails_is_told_apart() {
        let e =
            run_measured(&mut std::process::Command::new("/nonexistent/rqps-client")).unwrap_err();
        assert!(matches!(e, BenchError::Spawn { .. }), "{e:?}");
        assert!(
            e.to_string()
                .starts_with("cannot start \"/nonexistent/rqps-client\": "),
            "{e}"
        );
        let e = run_measured(
            std::process::Command::new("sh").args(["-c", "echo out; echo err >&2; exit 1"]),
        )
        .unwrap_err();
        assert!(
            matches!(&e, BenchError::ChildFailed { output, .. } if output == "out\nerr\n"),
            "{e:?}"
        );
        assert_eq!(e.to_string(), "\"sh\" failed: out\nerr\n");
        let (out, _, _) = run_measured(std::process::Command::new("echo").arg("hi")).unwrap();
        assert_eq!(out, "hi\n");
    }

    #[test]
    fn an_engine_without_a_server_is_refused_before_anything_starts() {
        let Err(e) = throwaway("sqlite") else {
            panic!("a throwaway SQLite server")
        };
        assert!(
            matches!(&e, BenchError::UnknownServer(u) if u.name == "sqlite"),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "unknown server kind \"sqlite\" (expected postgres or mariadb)"
        );
    }
}
