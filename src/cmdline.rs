//! The command lines rqps writes: a typed options struct back to the
//! arguments that give it ([`args::args_of`], for the command line stored
//! with a run and a matrix's child runs), a word quoted for a POSIX shell,
//! and the results directory as a suggested command names it. The default
//! results directory is written here once.

pub mod args;

use std::path::Path;

/// The results directory when none is given (`--results`).
pub const RESULTS_DIR: &str = "rqps-results";

/// `s` as one word for a POSIX shell: as it is when that is safe, else in single quotes.
pub fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.,/:@%+=".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// ` --results DIR` for a command rqps suggests, or nothing for the default
/// directory ([`RESULTS_DIR`]), so that the command reads the runs the
/// user's did.
pub fn results_arg(results: &Path) -> String {
    if results == Path::new(RESULTS_DIR) {
        String::new()
    } else {
        format!(" --results {}", shell_word(&results.display().to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suggested_command_names_the_results_directory_only_when_it_is_not_the_default() {
        assert_eq!(results_arg(Path::new(RESULTS_DIR)), "");
        assert_eq!(results_arg(Path::new("/r/x")), " --results /r/x");
        assert_eq!(results_arg(Path::new("my runs")), " --results 'my runs'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }
}
