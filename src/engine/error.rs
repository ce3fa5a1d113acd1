//! How an engine's errors reach the runner: [`DbError`] with its
//! [`ErrorClass`] (retry, reconnect or fail). Apart from the engine's face
//! (`mod.rs`, which re-exports them), so that the files it imports (`kv.rs`,
//! `tls.rs`) use them without importing it.

use std::fmt;

/// How the runner reacts to an error (sysbench's ignorable/fatal plus a
/// first-class reconnect).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorClass {
    /// Deadlock, lock wait timeout, serialization failure, busy: roll back,
    /// count it, and run the event again.
    Retry,
    /// The connection is gone: reconnect with backoff, count it.
    Reconnect,
    /// Anything else: the test fails with the engine's message.
    Fatal,
}

#[derive(Clone, Debug)]
pub struct DbError {
    pub class: ErrorClass,
    /// Engine error code when there is one (e.g. `1213`, `40001`, `SQLITE_BUSY`).
    pub code: Option<String>,
    pub message: String,
}

impl DbError {
    pub fn fatal(message: impl Into<String>) -> Self {
        DbError {
            class: ErrorClass::Fatal,
            code: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.code {
            Some(code) => write!(f, "{} ({code})", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for DbError {}

pub type DbResult<T> = Result<T, DbError>;
