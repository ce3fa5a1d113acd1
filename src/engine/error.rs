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

impl DbError {
    /// What the error means ([`Meaning`]), from its code and, where the code
    /// alone does not say (SQLite, MySQL's catch-all 1105), its message.
    pub fn meaning(&self) -> Meaning {
        let msg = self.message.to_ascii_lowercase();
        let by_message = || {
            if msg.contains("protocol error") || msg.contains("malformed packet") {
                Meaning::Protocol
            } else if msg.contains("syntax error") || msg.contains("syntax_error") {
                Meaning::Syntax
            } else if msg.contains("unique constraint") || msg.contains("duplicate") {
                Meaning::DuplicateKey
            } else if msg.contains("deadlock") {
                Meaning::Deadlock
            } else if msg.contains("no such ")
                || msg.contains("not found")
                || msg.contains("unknown")
                || msg.contains("does not exist")
            {
                Meaning::Unknown
            } else if msg.contains("not supported") || msg.contains("unsupported") {
                Meaning::Unsupported
            } else if msg.contains("lock wait timeout")
                || msg.contains("lock timeout")
                || msg.contains("timeout trying to lock")
            {
                Meaning::LockWait
            } else {
                Meaning::Other
            }
        };
        if self.class == ErrorClass::Reconnect {
            return Meaning::Connection;
        }
        let Some(code) = self.code.as_deref() else {
            return by_message();
        };
        // A PostgreSQL SQLSTATE: five characters, digits and capitals.
        if code.len() == 5
            && code
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
        {
            return match code {
                "23505" => Meaning::DuplicateKey,
                "40P01" => Meaning::Deadlock,
                "55P03" => Meaning::LockWait,
                "42601" => Meaning::Syntax,
                "42883" | "42P01" | "42703" | "42704" | "3F000" | "42P02" => Meaning::Unknown,
                "0A000" => Meaning::Unsupported,
                c if c.starts_with("08") => Meaning::Connection,
                "40001" => Meaning::Serialization,
                // Codes PostgreSQL does not use, from an engine that speaks
                // its protocol (H2: 42001, 42S02, HYT00): the message says.
                _ => by_message(),
            };
        }
        // A MySQL error number.
        if let Ok(n) = code.parse::<u16>() {
            return match n {
                1062 | 1586 => Meaning::DuplicateKey,
                1213 => Meaning::Deadlock,
                1205 | 3572 => Meaning::LockWait,
                1064 | 1149 => Meaning::Syntax,
                1146 | 1054 | 1305 | 1049 | 1109 | 1630 => Meaning::Unknown,
                1235 | 1295 | 1178 | 1289 => Meaning::Unsupported,
                2002..=2099 => Meaning::Connection,
                1105 => by_message(),
                _ => Meaning::Other,
            };
        }
        // A SQLite result code, by rusqlite's name of it.
        match code {
            "DatabaseBusy" | "DatabaseLocked" => Meaning::LockWait,
            "ConstraintViolation" if msg.contains("unique") => Meaning::DuplicateKey,
            _ => by_message(),
        }
    }
}

pub type DbResult<T> = Result<T, DbError>;

#[cfg(test)]
mod tests {
    use super::*;

    fn e(code: Option<&str>, message: &str) -> DbError {
        DbError {
            class: ErrorClass::Fatal,
            code: code.map(str::to_string),
            message: message.into(),
        }
    }

    #[test]
    fn an_errors_meaning_comes_from_its_code_and_where_that_says_nothing_its_message() {
        for (code, message, meaning) in [
            // PostgreSQL's SQLSTATEs.
            (Some("23505"), "duplicate key value", Meaning::DuplicateKey),
            (Some("40P01"), "deadlock detected", Meaning::Deadlock),
            (Some("55P03"), "lock timeout", Meaning::LockWait),
            (Some("40001"), "could not serialize", Meaning::Serialization),
            (Some("42601"), "syntax error at or near", Meaning::Syntax),
            (Some("42P01"), "relation does not exist", Meaning::Unknown),
            (Some("0A000"), "not supported", Meaning::Unsupported),
            // Codes PostgreSQL does not use (H2's), by their message.
            (
                Some("42001"),
                "Syntax error in SQL statement",
                Meaning::Syntax,
            ),
            (Some("42S02"), "Table \"x\" not found", Meaning::Unknown),
            (
                Some("HYT00"),
                "Timeout trying to lock table",
                Meaning::LockWait,
            ),
            // MySQL's error numbers, and its catch-all 1105 by message.
            (Some("1062"), "Duplicate entry", Meaning::DuplicateKey),
            (Some("1213"), "Deadlock found", Meaning::Deadlock),
            (
                Some("1205"),
                "Lock wait timeout exceeded",
                Meaning::LockWait,
            ),
            (
                Some("1064"),
                "You have an error in your SQL syntax",
                Meaning::Syntax,
            ),
            (Some("1146"), "Table doesn't exist", Meaning::Unknown),
            (Some("1105"), "syntax error at position 6", Meaning::Syntax),
            (
                Some("1105"),
                "Variable 'innodb_lock_wait_timeout' is a GLOBAL variable",
                Meaning::Other,
            ),
            // SQLite's result codes.
            (
                Some("DatabaseBusy"),
                "database is locked",
                Meaning::LockWait,
            ),
            (
                Some("ConstraintViolation"),
                "UNIQUE constraint failed: t.id",
                Meaning::DuplicateKey,
            ),
            (Some("Unknown"), "no such table: t", Meaning::Unknown),
            (
                None,
                "PostgreSQL protocol error: failed to fill whole buffer",
                Meaning::Protocol,
            ),
        ] {
            assert_eq!(e(code, message).meaning(), meaning, "{code:?} {message}");
        }
        let gone = DbError {
            class: ErrorClass::Reconnect,
            code: None,
            message: "server closed the connection".into(),
        };
        assert_eq!(gone.meaning(), Meaning::Connection);
        assert!(Meaning::Syntax.refused() && !Meaning::DuplicateKey.refused());
    }
}
