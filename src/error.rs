//! The one error type of rqps's commands: of the results directory, of
//! opening an engine, and of planning and running a suite, typed so that
//! callers can tell the user's mistake (exit 2) from a failure (exit 1), and
//! so that each one carries the path or context it is about. A usage error
//! or a failure made of a typed error keeps it ([`Cause`]), with its
//! `source()` chain: `usage(e)`, not a string made of it.

/// Exit statuses: 0 all good, 1 a test or the run failed, 2 bad input, 130 Ctrl-C.
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_INTERRUPTED: i32 = 130;

/// What a usage error or a failure is made of: the typed error it came
/// from, or the line written where it was found (`usage("...")`).
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

#[derive(Debug)]
pub enum Error {
    /// The user's input cannot work: one line that says what to change.
    Usage(Cause),
    /// The results directory (not writable, a file that cannot be written or read).
    Store(crate::results::StoreError),
    /// An engine refused what a suite needed outside a test (a load, a settle step).
    Engine {
        context: String,
        source: crate::engine::DbError,
    },
    /// A run could not go on (the reason is the failed test's).
    Failed(Cause),
}

/// A usage error or a failure reads as its cause, and its source is the
/// cause's: the wrapper adds no line of its own.
impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Usage(c) | Error::Failed(c) => c.fmt(f),
            Error::Store(s) => s.fmt(f),
            Error::Engine { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Usage(c) | Error::Failed(c) => c.source(),
            Error::Store(s) => s.source(),
            Error::Engine { source, .. } => Some(source),
        }
    }
}

impl From<crate::results::StoreError> for Error {
    fn from(e: crate::results::StoreError) -> Error {
        Error::Store(e)
    }
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

/// The user's mistake: a typed error, or one line that says what to change.
pub fn usage(cause: impl Into<Cause>) -> Error {
    Error::Usage(cause.into())
}

/// A failure: a typed error, or one line.
pub fn failed(cause: impl Into<Cause>) -> Error {
    Error::Failed(cause.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_cause_is_kept_with_its_source_and_reads_as_itself() {
        let io = std::io::Error::other("disk on fire");
        let e = usage(crate::results::StoreError::NotWritable {
            dir: "/r".into(),
            source: io,
        });
        assert!(e.is_usage());
        assert!(e.to_string().contains("/r"), "{e}");
        let source = std::error::Error::source(&e).expect("the cause's source");
        assert_eq!(source.to_string(), "disk on fire");
        let Error::Usage(cause) = &e else {
            panic!("{e:?}")
        };
        assert!(cause.downcast_ref::<crate::results::StoreError>().is_some());
        assert_eq!(failed("a line").to_string(), "a line");
    }
}
