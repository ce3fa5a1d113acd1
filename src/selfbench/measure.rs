//! What the benchmarks of rqps itself (`rqps bench`) share: the process's CPU time, a child
//! process measured with its own CPU, a throwaway server to measure on, and
//! the error a benchmark fails with.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use crate::engine::install::{self, EngineSpec, EngineSpecError};
use crate::engine::registry::{self, UnknownServer};
use crate::engine::server::{Recipe, Server, ServerError, ServerSpec};
use crate::engine::target::{Target, TargetError};
use crate::engine::{DbError, Driver};
use crate::util::cpus::{self, CpuSet, Pinned};

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
    #[error(transparent)]
    NoResult(#[from] NoResult),
    /// `--cpu N` names a CPU this process may not run on.
    #[error("--cpu {cpu}: this process may run only on CPUs {allowed:?}")]
    CpuNotAllowed { cpu: usize, allowed: Vec<usize> },
    /// A CPU number that makes no CPU list.
    #[error(transparent)]
    CpuList(#[from] cpus::CpuListError),
    /// `ENGINE@VERSION` that names no release.
    #[error(transparent)]
    Spec(#[from] EngineSpecError),
    /// The release could not be found or installed.
    #[error(transparent)]
    Install(#[from] install::InstallError),
    /// No system copy of an engine's library.
    #[error(transparent)]
    NoSystemLibrary(#[from] crate::engine::kind::NoSystemLibrary),
}

/// Why a contender gave no figures to compare.
#[derive(Debug, thiserror::Error)]
pub enum NoResult {
    #[error("no round gave figures")]
    NoRound,
    #[error("the bare loop panicked")]
    LoopPanicked,
    #[error("RocksDB is not loaded from a library")]
    NotALibrary,
    #[error("no release named")]
    NoRelease,
    #[error("rqps's l.i0 did not finish: {status}")]
    Unfinished { status: String },
    #[error("no point-query test")]
    NoPointQueryTest,
    #[error("the server was not started to require TLS")]
    NoTls,
    #[error(
        "rqps bench vs-sysbench runs sysbench against mariadb and postgres servers, not {engine}"
    )]
    NotSysbenchEngine { engine: String },
    #[error("sysbench's default distribution parameters were refused")]
    SysbenchDefaults,
    #[error("no queries line in sysbench output")]
    NoQueriesLine,
    #[error("cannot read sysbench's query count")]
    NoQueryCount,
    #[error("cannot read sysbench's QPS")]
    NoQps,
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

/// One contender's round: operations, and the wall and CPU seconds (of this
/// whole process) they took.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Round {
    pub ops: u64,
    pub wall: f64,
    pub cpu: f64,
}

impl Round {
    /// Operations per wall second.
    pub fn per_wall(&self) -> f64 {
        self.ops as f64 / self.wall.max(1e-9)
    }
    /// Operations per CPU second of this process.
    pub fn per_cpu(&self) -> f64 {
        self.ops as f64 / self.cpu.max(1e-9)
    }
}

/// Runs `f`, which returns its operations and wall seconds, and adds the CPU
/// seconds this process spent meanwhile.
pub fn measure_round(
    f: impl FnOnce() -> Result<(u64, f64), BenchError>,
) -> Result<Round, BenchError> {
    let c0 = cpu_secs();
    let (ops, wall) = f()?;
    Ok(Round {
        ops,
        wall,
        cpu: cpu_secs() - c0,
    })
}

/// `rounds` rounds of two contenders in one process, A B, B A, A B, ...: who
/// goes first alternates, so that drift of the machine (other load, clock
/// speed) hits both alike. `a` and `b` get the round's number. Returns each
/// round's (A, B).
pub fn alternate(
    rounds: usize,
    mut a: impl FnMut(usize) -> Result<Round, BenchError>,
    mut b: impl FnMut(usize) -> Result<Round, BenchError>,
    mut each: impl FnMut(usize, &Round, &Round),
) -> Result<Vec<(Round, Round)>, BenchError> {
    let mut out = Vec::with_capacity(rounds);
    for r in 0..rounds {
        let pair = if r % 2 == 0 {
            let x = a(r)?;
            (x, b(r)?)
        } else {
            let y = b(r)?;
            (a(r)?, y)
        };
        each(r, &pair.0, &pair.1);
        out.push(pair);
    }
    Ok(out)
}

/// The quartiles of a sample: median and interquartile range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quartiles {
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
}

impl Quartiles {
    /// Linear interpolation between order statistics (`None` for no values).
    pub fn of(values: &[f64]) -> Option<Quartiles> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let at = |q: f64| {
            let pos = q * (v.len() - 1) as f64;
            let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
            v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
        };
        Some(Quartiles {
            q1: at(0.25),
            median: at(0.5),
            q3: at(0.75),
        })
    }

    /// The interquartile range.
    pub fn iqr(&self) -> f64 {
        self.q3 - self.q1
    }
}

/// The load average over the last minute, 5 and 15 minutes, as the kernel
/// reports it (`/proc/loadavg`), for figures taken on a shared machine.
pub fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(
        text.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// Pins the calling thread (and every thread it starts afterwards) to one
/// CPU: `cpu`, or the last one this thread may run on. Both contenders of a
/// benchmark then share one core's caches and clock. Returns the CPU and the
/// guard that restores the previous set.
pub fn pin_to_cpu(cpu: Option<usize>) -> Result<(usize, Pinned), BenchError> {
    let allowed = cpus::of_this_thread()
        .unwrap_or_else(cpus::online)
        .cpus()
        .to_vec();
    let cpu = match cpu {
        Some(c) if !allowed.contains(&c) => {
            return Err(BenchError::CpuNotAllowed { cpu: c, allowed });
        }
        Some(c) => c,
        None => *allowed.last().unwrap_or(&0),
    };
    let pin = CpuSet::parse_syntax(&cpu.to_string())?;
    let pinned = pin
        .pin_this_thread()
        .map_err(BenchError::io(format!("cannot pin to CPU {cpu}")))?;
    Ok((cpu, pinned))
}

/// Runs `cmd` to completion and returns its stdout with its user and system
/// CPU seconds.
pub fn run_measured(cmd: &mut std::process::Command) -> Result<(String, f64, f64), BenchError> {
    run_measured_usage(cmd).map(|(out, u)| (out, u.user, u.sys))
}

/// What a child process cost, from its rusage (all its threads).
#[derive(Clone, Copy, Debug, Default)]
pub struct ChildUsage {
    /// User CPU seconds.
    pub user: f64,
    /// System CPU seconds.
    pub sys: f64,
    /// Voluntary context switches: waits (a blocking read with nothing to read).
    pub voluntary_cs: u64,
    /// Involuntary context switches: preemptions.
    pub involuntary_cs: u64,
}

/// [`run_measured`] with the context switches too.
pub fn run_measured_usage(
    cmd: &mut std::process::Command,
) -> Result<(String, ChildUsage), BenchError> {
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
    Ok((
        out,
        ChildUsage {
            user: tv(ru.ru_utime),
            sys: tv(ru.ru_stime),
            voluntary_cs: ru.ru_nvcsw.max(0) as u64,
            involuntary_cs: ru.ru_nivcsw.max(0) as u64,
        },
    ))
}

/// A throwaway server of `engine` (postgres or mariadb), its URL and a driver for it.
pub fn throwaway(engine: &str) -> Result<(Recipe, Server, String, Arc<dyn Driver>), BenchError> {
    throwaway_with_tls(engine, false)
}

/// [`throwaway`], started to accept TCP clients over TLS only when
/// `require_tls` (see [`ServerSpec::require_tls`]); the URL and the driver
/// then insist on TLS too.
pub fn throwaway_with_tls(
    engine: &str,
    require_tls: bool,
) -> Result<(Recipe, Server, String, Arc<dyn Driver>), BenchError> {
    // `postgres@16.15`: that release from rqps's engine cache (bench/many-core.sh
    // carries the cache to a machine with no package registry).
    let (name, basedir) = match engine.split_once('@') {
        Some((name, _)) => {
            let spec: EngineSpec = engine.parse::<EngineSpec>()?;
            let basedir = install::basedir_for(&spec, false, &mut |_| {})?;
            (name, basedir)
        }
        None => (engine, None),
    };
    let kind = registry::server_by_name(name)?;
    let spec = ServerSpec {
        require_tls,
        basedir,
        ..ServerSpec::new(kind)
    };
    let server = Server::start(&spec, &mut |n| eprintln!("{n}"))?;
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
    fn a_throwaway_release_must_be_installed_and_well_named() {
        let e = throwaway("postgres@10.4").err().unwrap();
        assert!(
            e.to_string()
                .contains("run `rqps engine install postgres 10.4`"),
            "{e}"
        );
        let e = throwaway("mariadb@").err().unwrap();
        assert!(e.to_string().contains("give a version after @"), "{e}");
    }

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
    fn quartiles_interpolate_and_rounds_alternate_who_goes_first() {
        let q = Quartiles::of(&[4.0, 1.0, 3.0, 2.0, 5.0]).unwrap();
        assert_eq!((q.q1, q.median, q.q3), (2.0, 3.0, 4.0));
        let q = Quartiles::of(&[1.0, 2.0, f64::NAN, 3.0, 4.0]).unwrap();
        assert_eq!((q.q1, q.median, q.q3), (1.75, 2.5, 3.25));
        assert_eq!(q.iqr(), 1.5);
        assert!(Quartiles::of(&[]).is_none());
        let order = std::cell::RefCell::new(Vec::new());
        let round = |ops| Round {
            ops,
            wall: 1.0,
            cpu: 0.5,
        };
        let pairs = alternate(
            3,
            |r| {
                order.borrow_mut().push(format!("a{r}"));
                Ok(round(10))
            },
            |r| {
                order.borrow_mut().push(format!("b{r}"));
                Ok(round(20))
            },
            |_, _, _| {},
        )
        .unwrap();
        assert_eq!(order.into_inner(), ["a0", "b0", "b1", "a1", "a2", "b2"]);
        assert!(pairs.iter().all(|(a, b)| a.ops == 10 && b.ops == 20));
        assert_eq!(pairs[0].1.per_wall(), 20.0);
        assert_eq!(pairs[0].1.per_cpu(), 40.0);
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
            "unknown server kind \"sqlite\" (expected postgres, mysql or mariadb)"
        );
    }
}
