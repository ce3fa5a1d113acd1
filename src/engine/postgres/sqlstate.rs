//! What PostgreSQL's SQLSTATEs mean ([`Meaning`]): set on each error the
//! wire client builds from an ErrorResponse, so that nothing above the
//! engine reads a code.

use crate::engine::Meaning;

/// The meaning of `code` (where PostgreSQL uses it), else of `message`
/// (codes of other engines that speak the protocol: H2's 42001, 42S02,
/// HYT00).
pub fn meaning(code: Option<&str>, message: &str) -> Meaning {
    match code {
        Some("23505") => Meaning::DuplicateKey,
        Some("40P01") => Meaning::Deadlock,
        Some("55P03") => Meaning::LockWait,
        Some("40001") => Meaning::Serialization,
        Some("42601") => Meaning::Syntax,
        Some("42883" | "42P01" | "42703" | "42704" | "3F000" | "42P02") => Meaning::Unknown,
        Some("0A000") => Meaning::Unsupported,
        Some(c) if c.starts_with("08") => Meaning::Connection,
        _ => Meaning::of_message(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlstates_say_what_an_error_means_and_other_engines_codes_their_message() {
        for (code, message, means) in [
            ("23505", "duplicate key value", Meaning::DuplicateKey),
            ("40P01", "deadlock detected", Meaning::Deadlock),
            ("55P03", "lock timeout", Meaning::LockWait),
            ("40001", "could not serialize", Meaning::Serialization),
            ("42601", "syntax error at or near", Meaning::Syntax),
            ("42P01", "relation does not exist", Meaning::Unknown),
            ("0A000", "not supported", Meaning::Unsupported),
            ("08006", "connection failure", Meaning::Connection),
            ("42001", "Syntax error in SQL statement", Meaning::Syntax),
            ("42S02", "Table \"x\" not found", Meaning::Unknown),
            ("HYT00", "Timeout trying to lock table", Meaning::LockWait),
            ("XX000", "internal error", Meaning::Other),
        ] {
            assert_eq!(meaning(Some(code), message), means, "{code} {message}");
        }
    }
}
