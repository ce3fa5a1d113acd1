//! The errors of the results directory and of planning and running a suite,
//! typed so that callers can tell the user's mistake (exit 2) from a failure
//! (exit 1), and so that each one carries the path or context it is about.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user's input cannot work: one line that says what to change.
    #[error("{0}")]
    Usage(String),
    #[error("results directory {} is not writable: {source}", dir.display())]
    NotWritable {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {what} {}: {source}", path.display())]
    Write {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
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
    #[error("cannot encode {what}: {source}")]
    Encode {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
}

impl Error {
    /// Whether the user can fix it by changing the input (exit 2).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Error::Usage(_) | Error::NotWritable { .. } | Error::Read { .. } | Error::Parse { .. }
        )
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
