//! `rqps compat`: its arguments, as the typed request of
//! [`crate::compat`], and the rendering of its record.

use std::path::PathBuf;

use clap::Args;

use crate::compat::{CompatRequest, EngineChoice};
use crate::engine::install::EngineSpec;
use crate::engine::target::Target;
use crate::error::{Error, usage};
use crate::plan::options::EngineArgs;
use crate::report::export::Format;

#[derive(Args, Debug)]
#[command(
    after_help = "Engines are written KIND[@VERSION] (a throwaway server rqps starts, \
e.g. postgres@18.6, mariadb@11.4.5, sqlite) or as a URL (a server you run, e.g. \
postgres://sa@127.0.0.1:5435/compat), each optionally named first: h2=postgres://... \
The password of a URL without one comes from $PGPASSWORD or ~/.pgpass ($PGPASSFILE) \
(PostgreSQL) and $MYSQL_PWD (MySQL and MariaDB). A password inside a URL works, but every \
local user can read it in the process list while rqps runs: rqps warns once, unless \
--allow-password-in-url.\n\nExamples:\n  rqps compat --reference postgres@18.6 --server postgres@9.6.24\n  \
rqps compat --reference pg18=postgres@18.6 --target h2=postgres://sa@127.0.0.1:5435/compat --suites sysbench,select1\n  \
rqps compat --show --format md     # the latest record, as Markdown"
)]
pub struct CompatArgs {
    /// The engine every target is compared with (upstream: postgres@18.6, or a MySQL).
    #[arg(long, value_name = "[NAME=]ENGINE", required_unless_present = "show")]
    pub reference: Option<String>,
    /// A target started as a throwaway server: KIND[@VERSION] (repeat for more).
    #[arg(long, value_name = "[NAME=]KIND[@VERSION]")]
    pub server: Vec<String>,
    /// A target reached through a URL, or sqlite (repeat for more).
    #[arg(long, value_name = "[NAME=]URL")]
    pub target: Vec<String>,
    /// Take passwords inside the --reference and --target URLs without the warning that
    /// any local user can read them in the process list (ps) while rqps runs.
    #[arg(long)]
    pub allow_password_in_url: bool,
    /// Results directory: the record goes to its compat/ folder, where `rqps report`
    /// and `rqps compare` find it.
    #[arg(long, default_value = crate::cmdline::RESULTS_DIR, value_name = "DIR")]
    pub results: PathBuf,
    /// Only these suites (default: every SQL suite).
    #[arg(long, value_delimiter = ',', value_name = "A,B,..")]
    pub suites: Option<Vec<String>>,
    /// Only these tests, by the names their results are stored under (any suite).
    #[arg(long, value_delimiter = ',', value_name = "A,B,..")]
    pub tests: Option<Vec<String>>,
    /// Leave out the suites' concurrent runs and their invariants.
    #[arg(long)]
    pub no_concurrent: bool,
    /// Seconds a statement may go without a word from the engine before it fails: an
    /// engine that never grants a lock fails the test instead of holding the check.
    #[arg(long, default_value_t = 60.0, value_name = "S")]
    pub stmt_timeout: f64,
    /// The seed every engine's data and parameters come from.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// Output format of the report printed at the end.
    #[arg(long, value_enum, default_value = "term")]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print a stored record instead of checking: FILE, or the latest in --results.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "latest")]
    pub show: Option<String>,
}

/// `NAME=REST` or `REST`: a name is letters, digits, `-`, `_` and `.`,
/// before an `=` that comes before any `:` or `/`.
fn named(s: &str) -> (Option<String>, &str) {
    if let Some((n, rest)) = s.split_once('=')
        && !n.is_empty()
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return (Some(n.to_string()), rest);
    }
    (None, s)
}

/// An engine as `--reference`, `--server` or `--target` give it.
fn choice(s: &str, as_url: bool) -> Result<EngineChoice, Error> {
    let (label, rest) = named(s.trim());
    let mut args = EngineArgs::default();
    let url_like = rest.contains("://") || rest.starts_with("sqlite");
    if as_url || url_like {
        args.target = Some(Target::parse(rest).map_err(usage)?);
    } else {
        let spec = rest.parse::<EngineSpec>().map_err(usage)?;
        if spec.server().is_none() && spec.kind.library.is_none() {
            args.target = Some(Target::Sqlite(None));
        } else {
            args.server = Some(spec);
        }
    }
    Ok(EngineChoice { label, args })
}

/// The targets in the order the command line gives them, `--server` and
/// `--target` interleaved.
fn targets(a: &CompatArgs, m: Option<&clap::ArgMatches>) -> Result<Vec<EngineChoice>, Error> {
    let idx = |id: &str, n: usize| -> Vec<usize> {
        m.and_then(|m| m.indices_of(id))
            .map(|i| i.collect())
            .unwrap_or_else(|| (0..n).collect())
    };
    let mut all: Vec<(usize, &String, bool)> = idx("server", a.server.len())
        .into_iter()
        .zip(&a.server)
        .map(|(i, s)| (i, s, false))
        .chain(
            idx("target", a.target.len())
                .into_iter()
                .zip(&a.target)
                .map(|(i, s)| (i, s, true)),
        )
        .collect();
    all.sort_by_key(|(i, _, _)| *i);
    all.into_iter().map(|(_, s, url)| choice(s, url)).collect()
}

pub fn compat(a: &CompatArgs, m: Option<&clap::ArgMatches>) -> Result<i32, Error> {
    if let Some(o) = &a.output {
        crate::util::check_output(o).map_err(usage)?;
    }
    if let Some(which) = &a.show {
        let record = crate::plan::report::stored_compat(&a.results, which)?;
        crate::plan::report::emit_compat(&record, a.format, a.output.as_deref())?;
        return Ok(0);
    }
    let Some(reference) = &a.reference else {
        return Err(usage(
            "give --reference ENGINE, or --show to print a stored record",
        ));
    };
    if !(a.stmt_timeout.is_finite() && a.stmt_timeout >= 1.0 && a.stmt_timeout <= 86_400.0) {
        return Err(usage(format!(
            "--stmt-timeout must be a number of seconds from 1 to 86400, not {}",
            a.stmt_timeout
        )));
    }
    let targets = targets(a, m)?;
    if targets.is_empty() {
        return Err(usage(
            "give at least one target to compare with the reference: --server KIND[@VERSION] or --target URL",
        ));
    }
    let reference = choice(reference, false)?;
    if !a.allow_password_in_url {
        warn_password_in_urls(&reference, &targets);
    }
    let req = CompatRequest {
        reference,
        targets,
        results: a.results.clone(),
        suites: a.suites.clone(),
        tests: a.tests.clone(),
        no_concurrent: a.no_concurrent,
        stmt_timeout: std::time::Duration::from_secs_f64(a.stmt_timeout),
        seed: a.seed,
        command_line: std::env::args().collect(),
    };
    let (record, path) = crate::compat::run(&req)?;
    eprintln!("compat: record stored in {}", path.display());
    crate::plan::report::emit_compat(&record, a.format, a.output.as_deref())?;
    // A target that could not be checked (left out, or tests the link
    // failed in) is no verdict: the record then leaves nothing out of a
    // report or a gate, and the command fails.
    let gaps = record.gaps();
    if gaps.is_empty() {
        return Ok(0);
    }
    eprintln!(
        "compat: FAIL: not every engine could be checked, so the record leaves no test out of a report or a gate: {}",
        gaps.join("; ")
    );
    Ok(crate::error::EXIT_FAILED)
}

/// One warning for every URL given with a password, naming its options.
fn warn_password_in_urls(reference: &EngineChoice, targets: &[EngineChoice]) {
    let has = |c: &EngineChoice| c.args.target.as_ref().is_some_and(Target::has_url_password);
    let mut options = Vec::new();
    if has(reference) {
        options.push("--reference");
    }
    if targets.iter().any(has) {
        options.push("--target");
    }
    if let Some(w) = crate::engine::target::password_in_url_warning(&options, false) {
        eprintln!("rqps: warning: {w}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_are_named_and_parsed_as_servers_or_urls() {
        assert_eq!(
            named("h2=postgres://sa@h/db?x=1"),
            (Some("h2".into()), "postgres://sa@h/db?x=1")
        );
        assert_eq!(named("postgres://sa@h/db?x=1").0, None);
        let c = choice("pg18=postgres@18.6", false).unwrap();
        assert_eq!(c.label.as_deref(), Some("pg18"));
        assert_eq!(c.args.server.unwrap().version.as_deref(), Some("18.6"));
        let c = choice("sqlite", false).unwrap();
        assert!(matches!(c.args.target, Some(Target::Sqlite(None))));
        let c = choice("postgres://u@127.0.0.1:1/db", true).unwrap();
        assert!(matches!(c.args.target, Some(Target::Url(_))));
        assert!(choice("nosuch@1", false).unwrap_err().is_usage());
    }
}
