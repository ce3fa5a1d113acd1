//! The one error type of rqps's commands: of the results directory, of
//! opening an engine, and of planning and running a suite, typed so that
//! callers can tell the user's mistake (exit 2) from a failure (exit 1), and
//! so that each one carries the path or context it is about.

/// Exit statuses: 0 all good, 1 a test or the run failed, 2 bad input, 130 Ctrl-C.
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_INTERRUPTED: i32 = 130;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user's input cannot work: one line that says what to change.
    #[error("{0}")]
    Usage(String),
    /// The results directory (not writable, a file that cannot be written or read).
    #[error(transparent)]
    Store(#[from] crate::results::StoreError),
    /// An engine refused what a suite needed outside a test (a load, a settle step).
    #[error("{context}: {source}")]
    Engine {
        context: String,
        #[source]
        source: crate::engine::DbError,
    },
    /// A run could not go on (the reason is the failed test's).
    #[error("{0}")]
    Failed(String),
}

impl Error {
    /// Whether the user can fix it by changing the input (exit 2).
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Usage(_) => true,
            Error::Store(s) => s.is_usage(),
            Error::Engine { .. } | Error::Failed(_) => false,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The user's mistake, as one line that says what to change.
pub fn usage(msg: impl Into<String>) -> Error {
    Error::Usage(msg.into())
}

/// A failure, as one line.
pub fn failed(msg: impl Into<String>) -> Error {
    Error::Failed(msg.into())
}
