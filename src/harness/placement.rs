//! Where a step's workers run: each on a thread of its own, or many as
//! tasks of a few client threads on the client core ([`crate::evloop`]).
//! A step is given its [`Placement`] (no process-wide value): a run makes
//! one from the engine driver's [`Calls`] and `--client-threads`, and hands
//! it to every step through the harness.
//!
//! - A driver whose calls take the client's CPU (SQLite and RocksDB run
//!   inside rqps: [`Calls::InProcess`]) gets a thread per worker, whatever
//!   was asked: its calls never wait, so tasks sharing a thread would only
//!   queue them. A placement on the core can only be made with the
//!   driver's [`OnSockets`], which only engine code makes, so the runner
//!   is never handed such a step: the check is in the types.
//! - `--client-threads N`: at most N client threads, worker i on thread
//!   i mod N; 0, or at least one thread per worker, is a thread per worker.
//! - Without it, [`DEFAULT_ENV`] when set (tests force the core with it,
//!   whatever the machine's CPU count), else the client's CPUs.

use std::num::NonZeroUsize;

use crate::engine::{Calls, OnSockets};

/// The environment variable that sets the default of `--client-threads`
/// (a number; 0: a thread per connection). CI sets it to 1 for a run of
/// end-to-end tests, so that they exercise the client core on any machine.
pub const DEFAULT_ENV: &str = "RQPS_CLIENT_THREADS";

/// Where the workers of each step of a run go (see the module's rules).
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    /// The most client threads a step uses, with the proof that its
    /// workers may share them; `None`: a thread per worker.
    core: Option<(NonZeroUsize, OnSockets)>,
    /// What was asked, for the run's record (0: a thread per worker).
    asked: usize,
}

/// Why a placement cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum PlacementError {
    #[error(
        "{DEFAULT_ENV}={value}: expected a number of client threads (0: a thread per connection)"
    )]
    BadEnv { value: String },
}

impl Placement {
    /// Each worker on a thread of its own (any engine).
    pub const fn thread_per_worker() -> Placement {
        Placement {
            core: None,
            asked: 0,
        }
    }

    /// At most `threads` client threads, the workers shared among them as
    /// tasks, for a driver whose calls wait on sockets (`proof`); 0 is a
    /// thread per worker.
    pub fn core(threads: usize, proof: OnSockets) -> Placement {
        Placement {
            core: NonZeroUsize::new(threads).map(|n| (n, proof)),
            asked: threads,
        }
    }

    /// The placement of a run on a driver whose calls are `calls`: `asked`
    /// (`--client-threads`), else [`DEFAULT_ENV`]'s value, else `cpus`.
    pub fn for_run(
        calls: Calls,
        asked: Option<usize>,
        cpus: usize,
    ) -> Result<Placement, PlacementError> {
        let threads = match asked {
            Some(n) => n,
            None => default_threads(std::env::var(DEFAULT_ENV).ok(), cpus)?,
        };
        Ok(match calls {
            Calls::InProcess => Placement::thread_per_worker(),
            Calls::OnSockets(proof) => Placement::core(threads, proof),
        })
    }

    /// How many client threads a step of `workers` workers runs on; worker
    /// i runs on thread i mod that. Suites that keep something per client
    /// thread (pgbench's per-thread log files) group by it.
    pub fn threads_for(&self, workers: usize) -> usize {
        match self.core {
            Some((n, _)) if n.get() < workers => n.get(),
            _ => workers,
        }
    }

    /// Whether a step of `workers` workers runs some of them as tasks.
    pub fn on_core(&self, workers: usize) -> bool {
        self.threads_for(workers) < workers
    }

    /// What the run asked, for its record: the most client threads (0: a
    /// thread per worker, as for an engine inside rqps).
    pub fn asked(&self) -> usize {
        match self.core {
            Some(_) => self.asked,
            None => 0,
        }
    }
}

/// The default of `--client-threads`: `env` ([`DEFAULT_ENV`]'s value) when
/// set, else `cpus`.
fn default_threads(env: Option<String>, cpus: usize) -> Result<usize, PlacementError> {
    match env {
        Some(v) => v
            .trim()
            .parse()
            .map_err(|_| PlacementError::BadEnv { value: v }),
        None => Ok(cpus),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_inside_rqps_gets_a_thread_per_worker_whatever_was_asked() {
        let p = Placement::for_run(Calls::InProcess, Some(2), 8).unwrap();
        assert_eq!(p.threads_for(16), 16);
        assert!(!p.on_core(16));
        assert_eq!(p.asked(), 0);
        let wire = Calls::OnSockets(OnSockets::for_tests());
        let p = Placement::for_run(wire, Some(2), 8).unwrap();
        assert_eq!(
            (p.threads_for(16), p.threads_for(2), p.threads_for(1)),
            (2, 2, 1)
        );
        assert!(p.on_core(3) && !p.on_core(2));
        assert_eq!(p.asked(), 2);
        let p = Placement::for_run(wire, Some(0), 8).unwrap();
        assert_eq!(p.threads_for(16), 16);
    }

    #[test]
    fn the_environment_sets_the_default_and_a_bad_value_is_refused() {
        assert_eq!(default_threads(None, 4).unwrap(), 4);
        assert_eq!(default_threads(Some("1".into()), 4).unwrap(), 1);
        assert_eq!(default_threads(Some(" 0 ".into()), 4).unwrap(), 0);
        let e = default_threads(Some("two".into()), 4).unwrap_err();
        assert_eq!(
            e.to_string(),
            "RQPS_CLIENT_THREADS=two: expected a number of client threads (0: a thread per connection)"
        );
    }
}
