//! "Did you mean": the known name closest to what the user typed, by the
//! Jaro-Winkler similarity clap's own suggestions use (strsim), so a typo in
//! a name rqps checks itself (a suite, test, profile, engine, man page) is
//! answered as a typo in an option name is.

/// Below this similarity a known name is no suggestion; clap uses 0.7 for
/// option names, which is too loose for short names (`ci` and `c`).
const THRESHOLD: f64 = 0.8;

/// The known name most like `typed`, if one is close enough.
pub fn did_you_mean<'a>(typed: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let typed = typed.to_lowercase();
    known
        .into_iter()
        .map(|k| (strsim::jaro_winkler(&typed, &k.to_lowercase()), k))
        .filter(|(score, _)| *score >= THRESHOLD)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// `" (did you mean X?)"` when a known name is close to `typed`, else "".
pub fn hint<'a>(typed: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    did_you_mean(typed, known)
        .map(|k| format!(" (did you mean {k}?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_the_name_and_a_stranger_finds_none() {
        let known = ["sysbench", "ibench", "pgbench", "tpcc"];
        assert_eq!(did_you_mean("sysbnech", known), Some("sysbench"));
        assert_eq!(
            did_you_mean("postgress", ["postgres", "mariadb"]),
            Some("postgres")
        );
        assert_eq!(did_you_mean("PGBENCH", known), Some("pgbench"));
        assert_eq!(did_you_mean("oracle", known), None);
        assert_eq!(hint("oracle", known), "");
        assert_eq!(hint("tpc", known), " (did you mean tpcc?)");
    }
}
