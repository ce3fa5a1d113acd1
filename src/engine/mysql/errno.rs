//! What MySQL's error numbers mean ([`Meaning`]): set on each error the
//! client builds from a server's ERR packet, so that nothing above the
//! engine reads a code.

use crate::engine::Meaning;

/// The meaning of error number `code`, or of `message` for the catch-all
/// 1105 (which go-mysql-server and Vitess send for most errors).
pub fn meaning(code: u16, message: &str) -> Meaning {
    match code {
        1062 | 1586 => Meaning::DuplicateKey,
        1213 => Meaning::Deadlock,
        1205 | 3572 => Meaning::LockWait,
        1064 | 1149 => Meaning::Syntax,
        1146 | 1054 | 1305 | 1049 | 1109 | 1630 => Meaning::Unknown,
        1235 | 1295 | 1178 | 1289 => Meaning::Unsupported,
        2002..=2099 => Meaning::Connection,
        1105 => Meaning::of_message(message),
        _ => Meaning::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_numbers_say_what_an_error_means_and_1105_its_message() {
        for (code, message, means) in [
            (1062, "Duplicate entry", Meaning::DuplicateKey),
            (1213, "Deadlock found", Meaning::Deadlock),
            (1205, "Lock wait timeout exceeded", Meaning::LockWait),
            (
                1064,
                "You have an error in your SQL syntax",
                Meaning::Syntax,
            ),
            (1146, "Table doesn't exist", Meaning::Unknown),
            (2013, "Lost connection", Meaning::Connection),
            (1105, "syntax error at position 6", Meaning::Syntax),
            (
                1105,
                "Variable 'innodb_lock_wait_timeout' is a GLOBAL variable",
                Meaning::Other,
            ),
            (1048, "Column cannot be null", Meaning::Other),
        ] {
            assert_eq!(meaning(code, message), means, "{code} {message}");
        }
    }
}
