//! The one reconnect-with-backoff loop ([`reconnect_with_backoff`]): what a
//! worker does when its connection is lost. Apart from the harness's face
//! (`mod.rs`, which re-exports it), so that the step runner uses it without
//! importing the module that imports the runner.

use std::time::{Duration, Instant};

use crate::engine::{DbError, DbResult, ErrorClass};

/// How long a worker keeps trying to reconnect after its connection is lost.
pub const RECONNECT_FOR: Duration = Duration::from_secs(10);

const BACKOFF_START: Duration = Duration::from_millis(50);
const BACKOFF_MAX: Duration = Duration::from_secs(2);

/// Why [`reconnect_with_backoff`] gave up.
#[derive(Debug)]
pub enum ReconnectError {
    /// The engine answered with an error that reconnecting cannot cure.
    Fatal(DbError),
    /// Still failing at the deadline.
    GaveUp(DbError),
    /// Ctrl-C or the step's end while waiting.
    Stopped,
}

/// Tries `attempt` (connect, and prepare again) until it succeeds, waiting
/// 50 ms, 100 ms, ... up to 2 s between tries, until `give_up`. A fatal error
/// ends it at once; `stop` is asked before each wait.
pub fn reconnect_with_backoff<T>(
    give_up: Instant,
    stop: &dyn Fn() -> bool,
    mut attempt: impl FnMut() -> DbResult<T>,
) -> Result<T, ReconnectError> {
    let mut wait = BACKOFF_START;
    loop {
        match attempt() {
            Ok(v) => return Ok(v),
            Err(e) if e.class == ErrorClass::Fatal => return Err(ReconnectError::Fatal(e)),
            Err(e) => {
                if stop() {
                    return Err(ReconnectError::Stopped);
                }
                if Instant::now() + wait > give_up {
                    return Err(ReconnectError::GaveUp(e));
                }
                crate::evloop::sleep(wait);
                wait = (wait * 2).min(BACKOFF_MAX);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn lost() -> DbError {
        DbError::lost("connection refused")
    }

    #[test]
    fn reconnecting_retries_until_the_engine_answers() {
        let tries = Cell::new(0);
        let r = reconnect_with_backoff(Instant::now() + Duration::from_secs(5), &|| false, || {
            tries.set(tries.get() + 1);
            if tries.get() < 3 { Err(lost()) } else { Ok(7) }
        });
        assert_eq!(r.unwrap(), 7);
        assert_eq!(tries.get(), 3);
    }

    #[test]
    fn reconnecting_gives_up_at_the_deadline_and_on_fatal_errors() {
        let r = reconnect_with_backoff::<()>(Instant::now(), &|| false, || Err(lost()));
        assert!(matches!(r, Err(ReconnectError::GaveUp(_))));
        let r = reconnect_with_backoff::<()>(
            Instant::now() + Duration::from_secs(5),
            &|| false,
            || Err(DbError::fatal("access denied")),
        );
        assert!(matches!(r, Err(ReconnectError::Fatal(_))));
        let r =
            reconnect_with_backoff::<()>(Instant::now() + Duration::from_secs(5), &|| true, || {
                Err(lost())
            });
        assert!(matches!(r, Err(ReconnectError::Stopped)));
    }
}
