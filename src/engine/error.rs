//! How an engine's errors reach the runner: [`DbError`] with its
//! [`ErrorClass`] (retry, reconnect or fail) and its [`Meaning`], both of
//! which the engine that builds the error sets from one table of its own
//! codes (PostgreSQL's SQLSTATEs in `postgres/sqlstate.rs`, MySQL's error
//! numbers in `mysql/errno.rs`, SQLite's result codes and RocksDB's status
//! names in theirs). Where no code exists (rqps's own errors), the place
//! that builds the error says what it means ([`DbError::means`]); nothing
//! reads a meaning from a message's words but the engine whose errors have
//! only words. Above the engines, code asks what an error means and never
//! reads a code. Apart from the engine's face
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

/// A SQLSTATE: the five characters of SQL's standard error classes
/// (`23000`, `40001`, MySQL's `42S02`), as PostgreSQL sends every error's
/// and MySQL its ERR packets' under protocol 4.1.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SqlState([u8; 5]);

impl SqlState {
    /// The state `s` spells: five ASCII letters or digits, else none.
    pub fn parse(s: &[u8]) -> Option<Self> {
        let b: [u8; 5] = s.try_into().ok()?;
        b.iter()
            .all(u8::is_ascii_alphanumeric)
            .then_some(SqlState(b))
    }

    pub fn as_str(&self) -> &str {
        // Five ASCII characters (parse() checked them).
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl fmt::Display for SqlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for SqlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SqlState({})", self.as_str())
    }
}

#[derive(Clone, Debug)]
pub struct DbError {
    pub class: ErrorClass,
    /// Engine error code when there is one (e.g. `1213`, `40001`, `SQLITE_BUSY`),
    /// for the user's eyes: code above the engines reads [`DbError::meaning`].
    pub code: Option<String>,
    /// The SQLSTATE the server gave with it (PostgreSQL's is its code too;
    /// MySQL's rides beside the error number), for what passes errors on in
    /// a client's shape (sysbench's `sql_state`).
    pub state: Option<SqlState>,
    pub message: String,
    /// What it means, set by the engine that built it.
    pub meaning: Meaning,
}

impl DbError {
    /// An error of class `class` meaning `meaning`, without a code or a
    /// SQLSTATE (set them with `DbError { code, ..DbError::new(..) }`).
    pub fn new(class: ErrorClass, meaning: Meaning, message: impl Into<String>) -> Self {
        DbError {
            class,
            code: None,
            state: None,
            meaning,
            message: message.into(),
        }
    }

    /// An error that ends the test. Its meaning is [`Meaning::Other`]: the
    /// place that builds it, which knows, says another with
    /// [`DbError::means`].
    pub fn fatal(message: impl Into<String>) -> Self {
        DbError::new(ErrorClass::Fatal, Meaning::Other, message)
    }

    /// The same error, meaning `meaning`.
    pub fn means(self, meaning: Meaning) -> Self {
        DbError { meaning, ..self }
    }

    /// The connection is gone: the runner reconnects.
    pub fn lost(message: impl Into<String>) -> Self {
        DbError::new(ErrorClass::Reconnect, Meaning::Connection, message)
    }

    /// What the error means ([`Meaning`]): a lost connection whatever its
    /// code, else what the engine set.
    pub fn meaning(&self) -> Meaning {
        if self.class == ErrorClass::Reconnect {
            return Meaning::Connection;
        }
        self.meaning
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

/// What an error means across engines and protocols, read from its code
/// (a PostgreSQL SQLSTATE, a MySQL error number, a SQLite result code with
/// its message): what `rqps compat` compares, since two engines of one
/// protocol may say the same thing with another code, and never the same
/// message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Meaning {
    /// A unique key already has the value.
    DuplicateKey,
    /// The engine chose this transaction as a deadlock's victim.
    Deadlock,
    /// A lock was not granted in time (or at once, with NOWAIT).
    LockWait,
    /// Serializable or snapshot isolation refused the transaction.
    Serialization,
    /// The parser refused the statement.
    Syntax,
    /// A table, column, function or type the engine does not know.
    Unknown,
    /// A feature the engine does not have.
    Unsupported,
    /// The connection failed.
    Connection,
    /// The client could not read the engine's answer: it broke the
    /// protocol (a malformed message).
    Protocol,
    /// Anything else.
    Other,
}

impl Meaning {
    /// Whether it says the engine did not accept the statement's text (its
    /// syntax, a name or a feature), rather than failing it when it ran.
    pub fn refused(self) -> bool {
        matches!(
            self,
            Meaning::Syntax | Meaning::Unknown | Meaning::Unsupported
        )
    }

    /// How reports name it.
    pub fn key(self) -> &'static str {
        match self {
            Meaning::DuplicateKey => "duplicate key",
            Meaning::Deadlock => "deadlock",
            Meaning::LockWait => "lock wait",
            Meaning::Serialization => "serialization failure",
            Meaning::Syntax => "syntax error",
            Meaning::Unknown => "unknown name",
            Meaning::Unsupported => "unsupported",
            Meaning::Connection => "connection",
            Meaning::Protocol => "protocol violation",
            Meaning::Other => "other error",
        }
    }
}

pub type DbResult<T> = Result<T, DbError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_means_what_its_builder_says_and_a_lost_connection_is_one() {
        // rqps's own words are not read: "unknown parameter" is not the
        // engine refusing a name.
        let own = DbError::fatal("target 'x': unknown parameter 'y'");
        assert_eq!(own.meaning(), Meaning::Other);
        let said = DbError::fatal("PostgreSQL protocol error: short").means(Meaning::Protocol);
        assert_eq!(said.meaning(), Meaning::Protocol);
        let gone = DbError {
            class: ErrorClass::Reconnect,
            ..DbError::fatal("server closed the connection").means(Meaning::Syntax)
        };
        assert_eq!(gone.meaning(), Meaning::Connection);
        assert_eq!(DbError::lost("reset").meaning(), Meaning::Connection);
        assert!(Meaning::Syntax.refused() && !Meaning::DuplicateKey.refused());
    }

    #[test]
    fn a_sqlstate_is_five_ascii_letters_or_digits() {
        assert_eq!(
            SqlState::parse(b"42S02").map(|s| s.to_string()).as_deref(),
            Some("42S02")
        );
        for bad in [&b"2300"[..], b"230001", b"23 00", b"23\xff00", b""] {
            assert_eq!(SqlState::parse(bad), None, "{bad:?}");
        }
    }
}
