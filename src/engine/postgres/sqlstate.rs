//! PostgreSQL's SQLSTATEs, one table: what the runner does on each
//! ([`ErrorClass`]) and what it means ([`Meaning`]), set on each error the
//! wire client builds from an ErrorResponse, so that nothing above the
//! engine reads a code. Other engines that speak the protocol send some
//! codes of their own (H2: 42001, 42S02, HYT00, 50100): the table names
//! them too.

use crate::engine::{ErrorClass, Meaning};

/// What the runner does on `code`, and what it means.
pub fn of(code: &str) -> (ErrorClass, Meaning) {
    use ErrorClass::{Fatal, Reconnect, Retry};
    match code {
        "40001" => (Retry, Meaning::Serialization),
        "40P01" => (Retry, Meaning::Deadlock),
        "55P03" => (Retry, Meaning::LockWait),
        // admin_shutdown, crash_shutdown, cannot_connect_now
        "57P01" | "57P02" | "57P03" => (Reconnect, Meaning::Connection),
        c if c.starts_with("08") => (Reconnect, Meaning::Connection),
        "23505" => (Fatal, Meaning::DuplicateKey),
        // H2: 42000 and 42001 for a syntax error.
        "42601" | "42000" | "42001" => (Fatal, Meaning::Syntax),
        // H2: tables, columns and functions not found.
        "42883" | "42P01" | "42703" | "42704" | "3F000" | "42P02" | "42S02" | "42S03" | "42S04"
        | "42S22" | "90022" => (Fatal, Meaning::Unknown),
        // H2: a lock timeout.
        "HYT00" => (Fatal, Meaning::LockWait),
        // H2: feature not supported.
        "0A000" | "50100" => (Fatal, Meaning::Unsupported),
        _ => (Fatal, Meaning::Other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlstates_say_what_to_do_and_what_an_error_means_other_engines_codes_too() {
        use ErrorClass::{Fatal, Reconnect, Retry};
        for (code, class, means) in [
            ("23505", Fatal, Meaning::DuplicateKey),
            ("40P01", Retry, Meaning::Deadlock),
            ("55P03", Retry, Meaning::LockWait),
            ("40001", Retry, Meaning::Serialization),
            ("42601", Fatal, Meaning::Syntax),
            ("42P01", Fatal, Meaning::Unknown),
            ("0A000", Fatal, Meaning::Unsupported),
            ("08006", Reconnect, Meaning::Connection),
            ("57P01", Reconnect, Meaning::Connection),
            ("42001", Fatal, Meaning::Syntax),
            ("42S02", Fatal, Meaning::Unknown),
            ("HYT00", Fatal, Meaning::LockWait),
            ("XX000", Fatal, Meaning::Other),
        ] {
            assert_eq!(of(code), (class, means), "{code}");
        }
    }
}
