//! MySQL's error numbers, one table: what the runner does on each
//! ([`ErrorClass`]) and what it means ([`Meaning`]), set on each error the
//! client builds from a server's ERR packet, so that nothing above the
//! engine reads a code.

use crate::engine::{ErrorClass, Meaning};

/// What the runner does on error number `code`, and what it means; the
/// catch-all 1105 (which go-mysql-server and Vitess send for most errors)
/// means what its `message` says.
pub fn of(code: u16, message: &str) -> (ErrorClass, Meaning) {
    use ErrorClass::{Fatal, Reconnect, Retry};
    match code {
        // ER_LOCK_DEADLOCK
        1213 => (Retry, Meaning::Deadlock),
        // ER_LOCK_WAIT_TIMEOUT
        1205 => (Retry, Meaning::LockWait),
        // ER_CHECKREAD: the record changed since it was read.
        1020 => (Retry, Meaning::Serialization),
        // ER_LOCK_NOWAIT
        3572 => (Fatal, Meaning::LockWait),
        // CR_SERVER_GONE_ERROR, CR_SERVER_LOST, CR_SERVER_LOST_EXTENDED,
        // ER_CONNECTION_KILLED (MariaDB), ER_SERVER_SHUTDOWN,
        // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
        2006 | 2013 | 2055 | 1927 | 1053 | 4031 => (Reconnect, Meaning::Connection),
        2002..=2099 => (Fatal, Meaning::Connection),
        1062 | 1586 => (Fatal, Meaning::DuplicateKey),
        1064 | 1149 => (Fatal, Meaning::Syntax),
        1146 | 1054 | 1305 | 1049 | 1109 | 1630 => (Fatal, Meaning::Unknown),
        1235 | 1295 | 1178 | 1289 => (Fatal, Meaning::Unsupported),
        1105 => (Fatal, of_catch_all(message)),
        _ => (Fatal, Meaning::Other),
    }
}

/// What a 1105's message says: the servers that send it for everything
/// give no other code.
fn of_catch_all(message: &str) -> Meaning {
    let m = message.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| m.contains(w));
    if has(&["syntax error"]) {
        Meaning::Syntax
    } else if has(&["duplicate"]) {
        Meaning::DuplicateKey
    } else if has(&["deadlock"]) {
        Meaning::Deadlock
    } else if has(&["not found", "unknown", "doesn't exist", "does not exist"]) {
        Meaning::Unknown
    } else if has(&["not supported", "unsupported"]) {
        Meaning::Unsupported
    } else if has(&["lock wait timeout"]) {
        Meaning::LockWait
    } else {
        Meaning::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_numbers_say_what_to_do_and_what_an_error_means_and_1105_its_message() {
        use ErrorClass::{Fatal, Reconnect, Retry};
        for (code, message, class, means) in [
            (1062, "Duplicate entry", Fatal, Meaning::DuplicateKey),
            (1213, "Deadlock found", Retry, Meaning::Deadlock),
            (1205, "Lock wait timeout exceeded", Retry, Meaning::LockWait),
            (
                1064,
                "You have an error in your SQL syntax",
                Fatal,
                Meaning::Syntax,
            ),
            (1146, "Table doesn't exist", Fatal, Meaning::Unknown),
            (2013, "Lost connection", Reconnect, Meaning::Connection),
            (
                1927,
                "Connection was killed",
                Reconnect,
                Meaning::Connection,
            ),
            (1105, "syntax error at position 6", Fatal, Meaning::Syntax),
            (
                1105,
                "Variable 'innodb_lock_wait_timeout' is a GLOBAL variable",
                Fatal,
                Meaning::Other,
            ),
            (1048, "Column cannot be null", Fatal, Meaning::Other),
            // Words count only under the catch-all.
            (1048, "duplicate syntax error", Fatal, Meaning::Other),
        ] {
            assert_eq!(of(code, message), (class, means), "{code} {message}");
        }
    }
}
